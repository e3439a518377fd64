package economy

import (
	"github.com/arena-sim/arena/internal/series"
	"slices"

	"github.com/arena-sim/arena/world"
)

// What the economy reports once an episode is over (world.Reporter): the
// aggregate figures of every round, every actor's final state and every
// policy enacted, from the component's own records.
//
// The records are derived state: they are written as the simulation runs and
// never read by it, so they are left out of the state hash (two worlds with
// the same hash have the same records anyway, since both are built by the
// same deterministic steps). They are reset by Attach.

// maxReportRounds is how many rounds the rounds table keeps. A longer run
// keeps every second round once the record fills, then every fourth, and so
// on, so that the record spans the whole run at an even spacing; the last
// round is always reported.
const maxReportRounds = 10_000

// maxPolicyLog is how many enactments the policies table keeps: the first
// 10,000 of an episode (later ones still take effect and count in the
// economy.policies metric).
const maxPolicyLog = 10_000

// roundRecord is the economy at the end of one round, after its flow.
type roundRecord struct {
	round, tick int
	metrics     [4]float64 // as metricNames
	employed    int
	laborForce  int
	wage        money
	spendRate   float64
	wagesPaid   money // this round's flow
	spending    money // this round's household spending (the sellers' revenue)
	unitsSold   float64
	laidOff     int
	policies    int // active
	money       money
}

// enactment is one successful apply_policy.
type enactment struct {
	round, tick int
	p           policy
	previous    any // the variable's value before, nil when it had none
	replaced    bool
}

// reports is the economy's record of an episode; it is not hashed (see
// above).
type reports struct {
	rounds   series.Thinned[roundRecord]
	policies []enactment
	dropped  int // enactments not logged past maxPolicyLog
}

// closeRound records the round that just ended.
func (e *Economy) closeRound(w *world.World) {
	r := roundRecord{round: e.round, tick: w.Tick(), metrics: e.metrics, employed: e.employed(), laborForce: e.laborForce,
		wage: e.wage(w), spendRate: e.spendRate, policies: len(e.policies)}
	for _, a := range e.actors {
		r.wagesPaid += a.last.wagesPaid
		r.spending += a.last.spent
		r.unitsSold += a.last.unitsSold
		r.laidOff += a.last.laidOff
		r.money += a.wealth()
	}
	e.rep.rounds.Add(r, maxReportRounds)
}

// logPolicy records an enactment.
func (e *Economy) logPolicy(w *world.World, p policy, previous any, replaced bool) {
	if len(e.rep.policies) >= maxPolicyLog {
		e.rep.dropped++
		return
	}
	e.rep.policies = append(e.rep.policies, enactment{round: e.round, tick: w.Tick(), p: p, previous: previous, replaced: replaced})
}

// Tables implements world.Reporter:
//   - rounds: per round, after its flow: the four metrics (employment_rate,
//     avg_price, total_output, total_investment), employed, labor_force,
//     unemployed, the wage and spend_rate in force, the round's wages_paid,
//     household_spending (the sellers' revenue), units_sold and laid_off,
//     the active policies and the money in the economy (every account of
//     every actor: the flow never changes it, invest turns some into
//     capital);
//   - actors: per actor (by id), its final role, accounts, wealth, workforce,
//     price, output, and totals invested, revenue, wages paid and earned,
//     spent, profit (revenue − wages paid) and units sold;
//   - policies: every enactment (the first 10,000), in order: the round and
//     tick, the policy, who enacted it, its description, the variable and
//     value it set and the variable's previous value (empty when none),
//     whether it replaced an earlier policy of the same name and whether it
//     is still in force at the end.
func (e *Economy) Tables() []world.Table {
	rounds := world.Table{Name: "rounds", Columns: []string{"round", "tick", "employment_rate", "avg_price", "total_output", "total_investment",
		"employed", "labor_force", "unemployed", "wage", "spend_rate", "wages_paid", "household_spending", "units_sold", "laid_off",
		"active_policies", "money"}}
	for _, r := range e.rep.rounds.All() {
		rounds.Rows = append(rounds.Rows, []any{float64(r.round), float64(r.tick), r.metrics[0], r.metrics[1], r.metrics[2], r.metrics[3],
			float64(r.employed), float64(r.laborForce), float64(max(0, r.laborForce-r.employed)), r.wage.dollars(), r.spendRate,
			r.wagesPaid.dollars(), r.spending.dollars(), r.unitsSold, float64(r.laidOff), float64(r.policies), r.money.dollars()})
	}

	actors := world.Table{Name: "actors", Columns: []string{"actor_id", "role", "balance", "savings", "payroll", "wealth", "workforce", "price",
		"output", "invested", "revenue", "wages_paid", "wages_earned", "spent", "profit", "units_sold"}}
	for _, a := range e.actors {
		actors.Rows = append(actors.Rows, []any{a.id, a.role, a.cash.dollars(), a.savings.dollars(), a.payroll.dollars(), a.wealth().dollars(),
			float64(a.workforce), a.price.dollars(), a.output.dollars(), a.invested.dollars(), a.revenue.dollars(), a.wagesPaid.dollars(),
			a.wagesEarned.dollars(), a.spent.dollars(), (a.revenue - a.wagesPaid).dollars(), a.unitsSold})
	}

	policies := world.Table{Name: "policies", Columns: []string{"round", "tick", "policy", "enacted_by", "description", "variable", "value",
		"previous", "replaced", "in_force"}}
	later := map[string]bool{} // names enacted again later in the log
	inForce := make([]bool, len(e.rep.policies))
	for i := len(e.rep.policies) - 1; i >= 0; i-- {
		p := e.rep.policies[i].p
		inForce[i] = !later[p.name] && slices.Contains(e.policies, p)
		later[p.name] = true
	}
	for i, en := range e.rep.policies {
		policies.Rows = append(policies.Rows, []any{float64(en.round), float64(en.tick), en.p.name, en.p.enactedBy, en.p.description, en.p.variable,
			cell(en.p.value), cell(en.previous), en.replaced, inForce[i]})
	}
	return []world.Table{rounds, actors, policies}
}

// cell is a policy value as a table cell: a number, text or boolean, or ""
// for none.
func cell(v any) any {
	switch v.(type) {
	case float64, string, bool:
		return v
	}
	return ""
}

// Plots implements world.Reporter, the round metrics over the rounds, split
// by scale: employment (employment_rate), prices (avg_price and the wage),
// output (total_output and total_investment) and flows (the round's wages
// paid and household spending).
func (e *Economy) Plots() []world.Plot {
	rs := e.rep.rounds.All()
	series := func(label string, f func(r roundRecord) float64) world.Series {
		s := world.Series{Label: label, X: make([]float64, len(rs)), Y: make([]float64, len(rs))}
		for i, r := range rs {
			s.X[i], s.Y[i] = float64(r.round), f(r)
		}
		return s
	}
	return []world.Plot{
		{Name: "employment", Title: "Employment rate", X: "round", Y: "employment_rate", Series: []world.Series{
			series("employment_rate", func(r roundRecord) float64 { return r.metrics[0] }),
		}},
		{Name: "prices", Title: "Average price and wage", X: "round", Y: "dollars", Series: []world.Series{
			series("avg_price", func(r roundRecord) float64 { return r.metrics[1] }),
			series("wage", func(r roundRecord) float64 { return r.wage.dollars() }),
		}},
		{Name: "output", Title: "Total output and investment", X: "round", Y: "dollars", Series: []world.Series{
			series("total_output", func(r roundRecord) float64 { return r.metrics[2] }),
			series("total_investment", func(r roundRecord) float64 { return r.metrics[3] }),
		}},
		{Name: "flows", Title: "Wages and household spending per round", X: "round", Y: "dollars", Series: []world.Series{
			series("wages_paid", func(r roundRecord) float64 { return r.wagesPaid.dollars() }),
			series("household_spending", func(r roundRecord) float64 { return r.spending.dollars() }),
		}},
	}
}
