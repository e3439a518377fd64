package bots

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/arena-sim/arena/world"
)

// Economist plays an actor of the economy component (components.economy in
// its observation) by its role, one action per economic round, with no
// randomness: the same observations give the same decisions.
//
//   - A firm prices its goods (the going average, at least 1.5× the wage),
//     lets workers go when it could not pay three more rounds of wages, hires
//     when it sold out last round at a profit and can pay ten rounds of the
//     bigger wage bill, keeps two rounds of wages in its payroll account,
//     cuts its price when it sold less than half of what it could make (never
//     below 1.1× its labor cost per unit) and raises it when it sold out and
//     cannot hire, and invests a quarter of the cash above its reserve.
//   - A worker puts a fifth of its cash into savings when it has more than
//     250, and takes savings back when its cash runs low.
//   - A government (the first by id, when there are several) raises the
//     minimum wage (the min_wage variable) by 20% once, from round 5; after
//     that, every second round while employment is under half or after an
//     economic shock, it sends 5% of its cash to the workers in turn.
//   - Any other role does nothing.
type Economist struct {
	info      Info
	lastRound int // the round of the last economic action
	shocked   bool
	enacted   bool
}

// Names of the economist's policies.
const (
	policyMinWage  = "raise_min_wage"
	policyStimulus = "household_support"
)

// NewEconomist creates an economist for one agent.
func NewEconomist(info Info) *Economist { return &Economist{info: info, lastRound: -1} }

// econView is what the economist reads from its section.
type econView struct {
	round        int
	wage         float64
	unemployed   int
	employment   float64
	avgPrice     float64
	role         string
	cash         float64
	savings      float64
	payroll      float64
	workforce    int
	price        float64
	capacity     float64
	allowed      []string
	lastRevenue  float64
	lastSold     float64
	lastCapacity float64
	lastWages    float64
	variables    map[string]any
	actors       []map[string]any
	policies     []map[string]any
}

func readEconomy(obs *world.Observation) (econView, bool) {
	sec := SectionOf(obs, "economy")
	you := MapOf(sec["you"])
	if sec == nil || you == nil {
		return econView{}, false
	}
	m := MapOf(sec["metrics"])
	last := MapOf(you["last_round"])
	v := econView{
		round: int(NumOf(sec["round"])), wage: NumOf(sec["wage"]), unemployed: int(NumOf(sec["unemployed"])),
		employment: NumOf(m["employment_rate"]), avgPrice: NumOf(m["avg_price"]),
		role: StrOf(you["role"]), cash: NumOf(you["balance"]), savings: NumOf(you["savings"]), payroll: NumOf(you["payroll"]),
		workforce: int(NumOf(you["workforce"])), price: NumOf(you["price"]), capacity: NumOf(you["capacity"]),
		lastRevenue: NumOf(last["revenue"]), lastSold: NumOf(last["units_sold"]), lastCapacity: NumOf(last["capacity"]),
		lastWages: NumOf(last["wages_paid"]), variables: MapOf(sec["variables"]),
	}
	for _, t := range ListOf(you["allowed_tools"]) {
		v.allowed = append(v.allowed, StrOf(t))
	}
	for _, a := range ListOf(sec["actors"]) {
		v.actors = append(v.actors, MapOf(a))
	}
	for _, p := range ListOf(sec["policies"]) {
		v.policies = append(v.policies, MapOf(p))
	}
	return v, true
}

func (v *econView) may(tool string) bool { return slices.Contains(v.allowed, tool) }

// cents rounds dollars down to the cent.
func cents(x float64) float64 { return math.Floor(x*100) / 100 }

// Decide implements Bot.
func (b *Economist) Decide(_ context.Context, obs *world.Observation) world.Decision {
	v, ok := readEconomy(obs)
	if !ok {
		return world.Idle("no economy in this world")
	}
	for _, e := range obs.Events {
		if e.Source == "economy" && e.Type == "economic_shock" {
			b.shocked = true
		}
	}
	if v.round == b.lastRound {
		return world.Decision{Tool: "do_nothing", Reasoning: "already acted this round"}
	}
	var d world.Decision
	switch v.role {
	case "firm":
		d = b.firm(&v)
	case "worker":
		d = b.worker(&v)
	case "government":
		d = b.government(&v)
	}
	if d.Tool == "" || (d.Tool != "do_nothing" && !v.may(d.Tool)) {
		return world.Decision{Tool: "do_nothing", Reasoning: "nothing to do as a " + v.role}
	}
	if d.Tool != "do_nothing" {
		b.lastRound = v.round
	}
	return d
}

func act(tool, why string, params map[string]any) world.Decision {
	return world.Decision{Tool: tool, Params: params, Reasoning: why}
}

func (b *Economist) firm(v *econView) world.Decision {
	bill := v.wage * float64(v.workforce)
	liquid := v.cash + v.payroll
	if v.price <= 0 {
		p := cents(math.Max(math.Max(v.avgPrice, 1.5*v.wage), 1))
		return act("set_price", "start selling at the going price", map[string]any{"price": p})
	}
	if v.workforce > 0 && v.wage > 0 && liquid < 3*bill {
		n := max(1, (v.workforce+3)/4)
		return act("fire", "cannot pay three more rounds of wages", map[string]any{"count": n})
	}
	soldOut := v.lastCapacity > 0 && v.lastSold >= 0.95*v.lastCapacity
	profitable := v.lastRevenue >= v.lastWages
	k := min(5, v.unemployed)
	canHire := k > 0 && liquid >= 10*(bill+v.wage*float64(k))
	if canHire && (v.workforce == 0 || (soldOut && profitable)) {
		return act("hire", "sold out at a profit: more workers make more goods", map[string]any{"count": k})
	}
	if v.workforce > 0 && v.payroll < bill && v.cash >= 6*bill {
		return act("allocate", "set aside four rounds of wages in payroll", map[string]any{"target": "payroll", "amount": cents(4*bill - v.payroll)})
	}
	floor := v.wage
	if v.capacity > 0 && bill > 0 {
		floor = 1.1 * bill / v.capacity
	}
	if v.lastCapacity > 0 && v.lastSold < 0.5*v.lastCapacity && v.price > 1.05*floor {
		p := cents(math.Max(0.95*v.price, floor))
		return act("set_price", "sold less than half: cut the price", map[string]any{"price": p})
	}
	if soldOut && !canHire {
		return act("set_price", "sold out and cannot hire: raise the price", map[string]any{"price": cents(1.05*v.price + 0.01)})
	}
	reserve := 6*bill + 300
	if v.cash > reserve+50 {
		if amt := cents((v.cash - reserve) / 3); amt >= 0.01 {
			return act("invest", "invest cash above the reserve", map[string]any{"amount": amt})
		}
	}
	return act("do_nothing", "nothing to change", nil)
}

func (b *Economist) worker(v *econView) world.Decision {
	if v.cash > 500 {
		return act("allocate", "save a tenth of my cash", map[string]any{"target": "savings", "amount": cents(0.1 * v.cash)})
	}
	if v.cash < 20 && v.savings >= 0.01 {
		return act("allocate", "cash is low: draw on savings", map[string]any{"target": "cash", "from": "savings", "amount": cents(math.Min(v.savings, 50))})
	}
	return act("do_nothing", "nothing to change", nil)
}

func (b *Economist) government(v *econView) world.Decision {
	var govs, workers []string
	for _, a := range v.actors {
		switch StrOf(a["role"]) {
		case "government":
			govs = append(govs, StrOf(a["id"]))
		case "worker":
			workers = append(workers, StrOf(a["id"]))
		}
	}
	slices.Sort(govs)
	lead := len(govs) == 0 || govs[0] == b.info.AgentID
	for _, p := range v.policies {
		if StrOf(p["name"]) == policyMinWage {
			b.enacted = true
		}
	}
	if lead && !b.enacted && v.round >= 5 && v.may("apply_policy") {
		params := map[string]any{"policy_name": policyMinWage, "description": "Raise the minimum wage by 20% to support household demand"}
		if w, ok := v.variables["min_wage"]; ok {
			if f := NumOf(w); f > 0 {
				params["variable"], params["value"] = "min_wage", math.Round(f*120)/100
				params["description"] = fmt.Sprintf("Raise the minimum wage by 20%% to %g to support household demand", params["value"])
			}
		}
		b.enacted = true
		return act("apply_policy", "workers need more income to buy goods", params)
	}
	if (b.shocked || (v.round > 10 && v.employment < 0.5)) && v.round%2 == 0 && len(workers) > 0 {
		amt := cents(0.05 * v.cash)
		if amt >= 0.01 {
			to := workers[(v.round/2)%len(workers)]
			return act("allocate", "support household demand", map[string]any{"target": to, "amount": amt})
		}
	}
	return act("do_nothing", "nothing to change", nil)
}
