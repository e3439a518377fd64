package economy

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/arena-sim/arena/world"
)

// The round flow. Both halves move money between actors only, in cents.
//
// Wages: every actor with a workforce pays the wage per worker, from payroll
// first and then cash, to the households in equal shares (the odd cents go to
// the first households by id). An employer that cannot pay the whole bill
// keeps only the workers it can pay; the others are laid off (a private
// layoff event tells it). Without households, or with a wage of 0, no wages
// are paid.
//
// Spending: every household (by id) spends spend_rate of its cash (rounded
// down to the cent) on goods, buying from the cheapest sellers first (price,
// then id), never from itself. A seller is an actor with a price above 0; it
// can sell labor_productivity × workforce + capital_productivity × output
// units a round. Money a household cannot spend stays with it.

// wage is the wage per worker this round, in cents.
func (e *Economy) wage(w *world.World) money {
	if name := e.cfg.WageVariable; name != "" {
		if v, ok := w.Variable(name); ok {
			if f, ok := v.(float64); ok && f >= 0 && f <= maxPrice {
				return toMoney(f)
			}
		}
	}
	return toMoney(math.Min(e.cfg.Wage, maxPrice))
}

// capacity is what an actor can sell in a round.
func (e *Economy) capacity(a *actor) float64 {
	return e.laborProd*float64(a.workforce) + e.capitalProd*a.output.dollars()
}

func (e *Economy) flow(w *world.World) {
	for _, a := range e.actors {
		a.last = roundStats{capacity: e.capacity(a)}
	}
	e.payWages(w)
	e.spend()
}

func (e *Economy) payWages(w *world.World) {
	wage := e.wage(w)
	n := money(len(e.households))
	if wage <= 0 || n == 0 {
		return
	}
	for _, a := range e.actors {
		if a.workforce == 0 {
			continue
		}
		avail := a.payroll + a.cash
		if can := avail / wage; can < money(a.workforce) {
			laid := a.workforce - int(can)
			a.workforce = int(can)
			a.last.laidOff = laid
			a.last.capacity = e.capacity(a)
			w.Publish(world.Event{Source: Name, Type: "layoff", To: []string{a.id}, Data: map[string]any{
				"employer": a.id, "laid_off": float64(laid), "workforce": float64(a.workforce), "wage": wage.dollars(), "round": float64(e.round)}})
		}
		bill := wage * money(a.workforce)
		if bill == 0 {
			continue
		}
		fromPayroll := min(bill, a.payroll)
		a.payroll -= fromPayroll
		a.cash -= bill - fromPayroll
		a.wagesPaid += bill
		a.last.wagesPaid += bill
		share, odd := bill/n, bill%n
		for i, h := range e.households {
			pay := share
			if money(i) < odd {
				pay++
			}
			h.cash += pay
			h.wagesEarned += pay
			h.last.wagesEarned += pay
		}
	}
}

func (e *Economy) spend() {
	if e.spendRate <= 0 || len(e.households) == 0 {
		return
	}
	var sellers []*actor
	left := map[*actor]float64{}
	for _, a := range e.actors {
		if a.price > 0 && a.last.capacity > 0 {
			sellers = append(sellers, a)
			left[a] = a.last.capacity
		}
	}
	if len(sellers) == 0 {
		return
	}
	slices.SortFunc(sellers, func(a, b *actor) int {
		if c := cmp.Compare(a.price, b.price); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	for _, h := range e.households {
		budget := min(money(math.Floor(e.spendRate*float64(h.cash))), h.cash)
		for _, s := range sellers {
			if budget <= 0 {
				break
			}
			if s == h || left[s] <= 0 {
				continue
			}
			var cost money
			var units float64
			if want := float64(budget) / float64(s.price); want <= left[s] {
				cost, units = budget, want
				left[s] -= want
			} else {
				cost, units = min(money(math.Floor(left[s]*float64(s.price))), budget), left[s]
				left[s] = 0
			}
			if cost <= 0 {
				continue
			}
			h.cash -= cost
			h.spent += cost
			h.last.spent += cost
			s.cash += cost
			s.revenue += cost
			s.last.revenue += cost
			s.unitsSold += units
			s.last.unitsSold += units
			budget -= cost
		}
	}
}
