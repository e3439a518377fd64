// Package economy is a rule-based macro-economy as a world component, after
// the reference's economic environment: actors with roles (firms, workers, a
// government, ...) set prices, hire and fire, invest, move money and enact
// policies that set scenario variables. Each round (one world tick by
// default) it recomputes employment rate, average price, total output and
// total investment, and publishes metric_change when one moves by the
// threshold or more.
//
// Differences from the reference, all deliberate:
//   - actors start with the scenario's balance (the reference's is always 0,
//     so invest always fails there);
//   - allocate really moves money, between the actor's own accounts (cash,
//     savings, payroll) or to another actor;
//   - apply_policy publishes policy_change (the reference never does);
//   - negative or zero counts, amounts and prices, hiring more than the
//     unemployed labor force, and spending more than an account holds are
//     errors that change nothing;
//   - an optional round flow: firms pay the wage (a scenario variable) to the
//     households, and households spend part of their cash on the goods of the
//     cheapest sellers, up to what their workforce and capital can make.
//
// Money is counted in whole cents, so it is conserved exactly: no tool or
// round creates or destroys any (invest turns cash into output, which is
// capital), and no account goes negative.
package economy

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Name is the component's name: its observation section and event source.
const Name = "economy"

// money is an amount in cents.
type money int64

// toMoney rounds dollars to cents.
func toMoney(f float64) money { return money(math.Round(f * 100)) }

func (m money) dollars() float64 { return float64(m) / 100 }

func (m money) String() string { return strconv.FormatFloat(m.dollars(), 'f', 2, 64) }

// accounts are the names of every actor's accounts; cash is the balance.
var accounts = []string{"cash", "savings", "payroll"}

// actor is one agent's economic state.
type actor struct {
	id        string
	role      string
	cash      money
	savings   money
	payroll   money
	workforce int
	price     money // 0: not selling
	output    money // capital invested so far (and any starting capital)

	// Totals since the start.
	invested    money
	revenue     money
	wagesPaid   money
	wagesEarned money
	spent       money
	unitsSold   float64

	last roundStats // the last round's flow
}

// roundStats is what one round's flow did to an actor.
type roundStats struct {
	revenue     money
	wagesPaid   money
	wagesEarned money
	spent       money
	unitsSold   float64
	capacity    float64
	laidOff     int
}

func (a *actor) account(name string) *money {
	switch name {
	case "cash":
		return &a.cash
	case "savings":
		return &a.savings
	case "payroll":
		return &a.payroll
	}
	return nil
}

func (a *actor) wealth() money { return a.cash + a.savings + a.payroll }

// policy is an enacted policy.
type policy struct {
	name        string
	description string
	enactedBy   string
	round       int
	variable    string
	value       any // float64, string or bool; nil without a variable
}

// The four metrics of the reference's tick, in its order.
var metricNames = [4]string{"employment_rate", "avg_price", "total_output", "total_investment"}

// Economy is the component. Build it with New; it is fresh per world.
type Economy struct {
	cfg *Config

	actors     []*actor // sorted by id
	byID       map[string]*actor
	households []*actor // actors with a household role, sorted by id
	ids        []string

	ticks           int // world ticks since the start
	round           int // the round in progress, from 1
	metrics         [4]float64
	prev            [4]float64
	totalInvestment money
	policies        []policy
	shockNext       int // index into shocks (sorted by round) of the next to apply

	// Flow parameters (shocks change them).
	laborForce  int
	spendRate   float64
	laborProd   float64
	capitalProd float64
	shocks      []Shock

	rep reports // per-round figures and policies for the reports: derived, not hashed (report.go)
}

// New builds an economy from its scenario config (nil: the defaults).
func New(raw json.RawMessage) (*Economy, error) {
	cfg, err := parse(raw)
	if err != nil {
		return nil, err
	}
	e := &Economy{cfg: cfg, laborForce: cfg.LaborForce, spendRate: cfg.SpendRate,
		laborProd: *cfg.LaborProductivity, capitalProd: cfg.CapitalProductivity}
	e.shocks = slices.Clone(cfg.Shocks)
	slices.SortStableFunc(e.shocks, func(a, b Shock) int { return a.Round - b.Round })
	return e, nil
}

// Name implements world.Component.
func (e *Economy) Name() string { return Name }

// Attach makes every agent an actor: its role from the config's actors entry
// or, in turn, from assign; its starting state from its role's entry.
func (e *Economy) Attach(w *world.World) error {
	cfg := e.cfg
	e.byID = map[string]*actor{}
	e.actors, e.households, e.ids = nil, nil, nil
	e.ticks, e.totalInvestment, e.policies, e.shockNext = 0, 0, nil, 0
	e.rep = reports{}
	e.laborForce, e.spendRate, e.laborProd, e.capitalProd = cfg.LaborForce, cfg.SpendRate, *cfg.LaborProductivity, cfg.CapitalProductivity
	known := map[string]bool{}
	for i, ag := range w.Agents() {
		role := cfg.Assign[i%len(cfg.Assign)]
		spec, ok := cfg.Actors[ag.ID]
		if ok && spec.Role != "" {
			role = spec.Role
		}
		rs := cfg.Roles[role]
		a := &actor{id: ag.ID, role: role, cash: toMoney(*cfg.StartingBalance)}
		if rs.Balance != nil {
			a.cash = toMoney(*rs.Balance)
		}
		if ok && spec.Balance != nil {
			a.cash = toMoney(*spec.Balance)
		}
		a.savings, a.payroll, a.output = toMoney(rs.Savings), toMoney(rs.Payroll), toMoney(rs.Output)
		a.price, a.workforce = toMoney(rs.Price), rs.Workforce
		e.byID[a.id] = a
		e.actors = append(e.actors, a)
		known[a.id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(cfg.Actors)) {
		if !known[id] {
			return fmt.Errorf("config.actors.%s: no agent has this id (agents: %s)", id, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
	}
	slices.SortFunc(e.actors, func(a, b *actor) int { return strings.Compare(a.id, b.id) })
	employed := 0
	for _, a := range e.actors {
		e.ids = append(e.ids, a.id)
		if slices.Contains(cfg.HouseholdRoles, a.role) {
			e.households = append(e.households, a)
		}
		employed += a.workforce
	}
	if employed > e.laborForce {
		return fmt.Errorf("config.roles: the actors start with %d workers, more than the labor force of %d", employed, e.laborForce)
	}
	if v, ok := w.Variable(cfg.WageVariable); ok && cfg.WageVariable != "" {
		if f, isNum := v.(float64); !isNum || f < 0 || f > maxPrice {
			return fmt.Errorf("config.wage_variable: the scenario variable %s must be a number from 0 to %g, got %v", cfg.WageVariable, float64(maxPrice), v)
		}
	}
	e.round = 1
	e.metrics = e.compute()
	e.prev = e.metrics
	return nil
}

// compute returns the reference's four metrics.
func (e *Economy) compute() [4]float64 {
	workforce := 0
	var prices float64
	var priced int
	var output money
	for _, a := range e.actors {
		workforce += a.workforce
		if a.price > 0 {
			prices += a.price.dollars()
			priced++
		}
		output += a.output
	}
	var m [4]float64
	if e.laborForce > 0 {
		m[0] = math.Min(float64(workforce)/float64(e.laborForce), 1)
	}
	if priced > 0 {
		m[1] = prices / float64(priced)
	}
	m[2] = output.dollars()
	m[3] = e.totalInvestment.dollars()
	return m
}

// employed is the workforce of every actor.
func (e *Economy) employed() int {
	n := 0
	for _, a := range e.actors {
		n += a.workforce
	}
	return n
}

// unemployed is the labor force not employed (0 when a shock shrank the labor
// force below the workforce).
func (e *Economy) unemployed() int { return max(0, e.laborForce-e.employed()) }

// Tick ends a round every round_ticks ticks: shocks due this round apply, the
// round's flow runs (wages, then spending), the metrics are recomputed,
// metric_change is published for each that moved by the threshold or more,
// and the next round begins.
func (e *Economy) Tick(w *world.World) {
	e.ticks++
	if e.ticks%e.cfg.RoundTicks != 0 {
		return
	}
	for e.shockNext < len(e.shocks) && e.shocks[e.shockNext].Round <= e.round {
		e.applyShock(w, e.shocks[e.shockNext])
		e.shockNext++
	}
	e.flow(w)
	e.prev = e.metrics
	e.metrics = e.compute()
	for i, name := range metricNames {
		d := e.metrics[i] - e.prev[i]
		if math.Abs(d) >= *e.cfg.MetricChangeThreshold {
			w.Publish(world.Event{Source: Name, Type: "metric_change", Data: map[string]any{
				"metric": name, "previous": e.prev[i], "current": e.metrics[i], "delta": d, "round": float64(e.round)}})
		}
	}
	e.closeRound(w)
	e.round++
}

func (e *Economy) applyShock(w *world.World, s Shock) {
	data := map[string]any{"round": float64(e.round)}
	if s.Note != "" {
		data["note"] = s.Note
	}
	if s.SpendRate != nil {
		data["spend_rate"], data["spend_rate_before"] = *s.SpendRate, e.spendRate
		e.spendRate = *s.SpendRate
	}
	if s.LaborForce != nil {
		data["labor_force"], data["labor_force_before"] = float64(*s.LaborForce), float64(e.laborForce)
		e.laborForce = *s.LaborForce
	}
	if s.LaborProductivity != nil {
		data["labor_productivity"], data["labor_productivity_before"] = *s.LaborProductivity, e.laborProd
		e.laborProd = *s.LaborProductivity
	}
	if s.CapitalProductivity != nil {
		data["capital_productivity"], data["capital_productivity_before"] = *s.CapitalProductivity, e.capitalProd
		e.capitalProd = *s.CapitalProductivity
	}
	w.Publish(world.Event{Source: Name, Type: "economic_shock", Data: data})
}

// Metric implements world.MetricSource. Every name starts with "economy.";
// see MetricNames.
func (e *Economy) Metric(_ *world.World, agentID, name string) (float64, bool) {
	n, ok := strings.CutPrefix(name, Name+".")
	if !ok {
		return 0, false
	}
	for i, m := range metricNames {
		if n == m {
			return e.metrics[i], true
		}
	}
	switch n {
	case "round":
		return float64(e.round), true
	case "policies":
		return float64(len(e.policies)), true
	case "unemployed":
		return float64(e.unemployed()), true
	}
	if !slices.Contains(agentMetrics, n) {
		return 0, false
	}
	a := e.byID[agentID]
	if a == nil {
		return 0, true
	}
	switch n {
	case "balance":
		return a.cash.dollars(), true
	case "savings":
		return a.savings.dollars(), true
	case "payroll":
		return a.payroll.dollars(), true
	case "wealth":
		return a.wealth().dollars(), true
	case "output":
		return a.output.dollars(), true
	case "invested":
		return a.invested.dollars(), true
	case "workforce":
		return float64(a.workforce), true
	case "price":
		return a.price.dollars(), true
	case "revenue":
		return a.revenue.dollars(), true
	case "profit":
		return (a.revenue - a.wagesPaid).dollars(), true
	case "wages_earned":
		return a.wagesEarned.dollars(), true
	case "units_sold":
		return a.unitsSold, true
	}
	return 0, false
}

var agentMetrics = []string{"balance", "savings", "payroll", "wealth", "output", "invested", "workforce", "price",
	"revenue", "profit", "wages_earned", "units_sold"}

// MetricNames lists the metrics the economy defines for objectives.
func MetricNames() []string {
	names := []string{"round", "policies", "unemployed"}
	names = append(names, metricNames[:]...)
	names = append(names, agentMetrics...)
	for i := range names {
		names[i] = Name + "." + names[i]
	}
	slices.Sort(names)
	return names
}

// MetricNames lists the metrics this economy defines (the same for every
// economy); the scenario validator asks components for them.
func (e *Economy) MetricNames() []string { return MetricNames() }

// Hash implements world.Component.
func (e *Economy) Hash(h *world.Hasher) {
	h.Int(e.ticks)
	h.Int(e.round)
	for i := range e.metrics {
		h.Float(e.metrics[i])
		h.Float(e.prev[i])
	}
	h.Int(int(e.totalInvestment))
	h.Int(e.shockNext)
	h.Int(e.laborForce)
	h.Float(e.spendRate)
	h.Float(e.laborProd)
	h.Float(e.capitalProd)
	h.Int(len(e.actors))
	for _, a := range e.actors {
		h.String(a.id)
		h.String(a.role)
		for _, m := range []money{a.cash, a.savings, a.payroll, a.price, a.output, a.invested, a.revenue, a.wagesPaid, a.wagesEarned, a.spent,
			a.last.revenue, a.last.wagesPaid, a.last.wagesEarned, a.last.spent} {
			h.Int(int(m))
		}
		h.Int(a.workforce)
		h.Float(a.unitsSold)
		h.Float(a.last.unitsSold)
		h.Float(a.last.capacity)
		h.Int(a.last.laidOff)
	}
	h.Int(len(e.policies))
	for _, p := range e.policies {
		h.String(p.name)
		h.String(p.description)
		h.String(p.enactedBy)
		h.Int(p.round)
		h.String(p.variable)
		switch v := p.value.(type) {
		case float64:
			h.Int(1)
			h.Float(v)
		case string:
			h.Int(2)
			h.String(v)
		case bool:
			h.Int(3)
			h.Bool(v)
		default:
			h.Int(0)
		}
	}
}

// Total is all the money in the economy, in dollars: every account of every
// actor (capital, which invest makes of cash, is not money). No tool and no
// round changes it.
func (e *Economy) Total() float64 {
	var t money
	for _, a := range e.actors {
		t += a.wealth()
	}
	return t.dollars()
}

// Round is the round in progress, from 1.
func (e *Economy) Round() int { return e.round }

// Metrics returns the reference's four metrics as of the last round's end.
func (e *Economy) Metrics() map[string]float64 {
	m := make(map[string]float64, len(metricNames))
	for i, n := range metricNames {
		m[n] = e.metrics[i]
	}
	return m
}

// Actor is an actor's state, for tests and tools.
type Actor struct {
	Role                                   string
	Balance, Savings, Payroll              float64
	Workforce                              int
	Price, Output, Invested                float64
	Revenue, WagesPaid, WagesEarned, Spent float64
}

// Actor returns an agent's economic state.
func (e *Economy) Actor(id string) (Actor, bool) {
	a := e.byID[id]
	if a == nil {
		return Actor{}, false
	}
	return Actor{Role: a.role, Balance: a.cash.dollars(), Savings: a.savings.dollars(), Payroll: a.payroll.dollars(),
		Workforce: a.workforce, Price: a.price.dollars(), Output: a.output.dollars(), Invested: a.invested.dollars(),
		Revenue: a.revenue.dollars(), WagesPaid: a.wagesPaid.dollars(), WagesEarned: a.wagesEarned.dollars(), Spent: a.spent.dollars()}, true
}

// Policies lists the active policies' names in order of enactment.
func (e *Economy) Policies() []string {
	out := make([]string, len(e.policies))
	for i, p := range e.policies {
		out[i] = p.name
	}
	return out
}

// Factory builds an economy for the components registry.
func Factory(raw json.RawMessage) (world.Component, error) {
	e, err := New(raw)
	if err != nil {
		return nil, err
	}
	return e, nil
}
