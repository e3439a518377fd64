package economy

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// toolNames are the economy's tools, in the order Tools lists them.
var toolNames = []string{"set_price", "hire", "fire", "invest", "allocate", "apply_policy", "do_nothing"}

func money64(desc string, exclusiveMin bool) *tools.Schema {
	s := &tools.Schema{Type: "number", Description: desc, Maximum: tools.Ptr(maxMoney)}
	if exclusiveMin {
		s.ExclusiveMinimum = tools.Ptr(0.0)
	} else {
		s.Minimum = tools.Ptr(0.0)
	}
	return s
}

func text(desc string, minLen, maxLen int) *tools.Schema {
	return &tools.Schema{Type: "string", Description: desc, MinLength: tools.Ptr(minLen), MaxLength: tools.Ptr(maxLen)}
}

// Tools implements tools.Provider.
func (e *Economy) Tools() []tools.Tool {
	count := func(desc string) *tools.Schema {
		return &tools.Schema{Type: "integer", Description: desc, Minimum: tools.Ptr(1.0), Maximum: tools.Ptr(float64(maxCount))}
	}
	return []tools.Tool{
		{
			Name: "set_price",
			Description: "Set the price of your goods (dollars per unit). Households buy from the cheapest sellers first, up to what your workforce and capital can make each round. " +
				"0 means not selling; a negative price is refused. The average of the prices above 0 is the avg_price metric.",
			Parameters: tools.Object(map[string]*tools.Schema{
				"price": {Type: "number", Description: "New price in dollars, 0 or from 0.01", Minimum: tools.Ptr(0.0), Maximum: tools.Ptr(float64(maxPrice))},
			}, "price"),
			Handler: e.handler("set_price", e.setPrice),
		},
		{
			Name:        "hire",
			Description: "Hire workers from the unemployed labor force; each is paid the wage every round while employed. More than are unemployed is refused.",
			Parameters:  tools.Object(map[string]*tools.Schema{"count": count("Number of workers to hire, at least 1")}, "count"),
			Handler:     e.handler("hire", e.hire),
		},
		{
			Name:        "fire",
			Description: "Let workers go. Firing more workers than you employ is refused.",
			Parameters:  tools.Object(map[string]*tools.Schema{"count": count("Number of workers to fire, at least 1")}, "count"),
			Handler:     e.handler("fire", e.fire),
		},
		{
			Name:        "invest",
			Description: "Invest cash in capital: your balance falls and your output rises by the amount (it counts toward total_output and total_investment). More than your balance is refused.",
			Parameters:  tools.Object(map[string]*tools.Schema{"amount": money64("Dollars to invest, at least 0.01", true)}, "amount"),
			Handler:     e.handler("invest", e.invest),
		},
		{
			Name: "allocate",
			Description: "Move money from one of your accounts (cash, savings or payroll, in any case) to another of your accounts, or to another actor's cash. " +
				"target is an account name or an actor id from the Actors list. Wages are paid from payroll first. More than the account holds is refused.",
			Parameters: tools.Object(map[string]*tools.Schema{
				"target": text("Account (cash, savings, payroll) or actor id to receive the money", 1, 100),
				"amount": money64("Dollars to move, at least 0.01", true),
				"from":   {Type: "string", Description: "Your account to take the money from: cash, savings or payroll (default cash)", Default: "cash", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(20)},
			}, "target", "amount"),
			Handler: e.handler("allocate", e.allocate),
		},
		{
			Name: "apply_policy",
			Description: "Enact a policy: it is listed under Active policies and announced to every other agent. With variable and value it also sets that scenario variable, which every agent sees " +
				"(e.g. variable min_wage, value 15). Enacting a policy of the same name again replaces it. An existing variable keeps its type.",
			Parameters: tools.Object(map[string]*tools.Schema{
				"policy_name": text("Short name of the policy, one line", 1, maxPolicyName),
				"description": text("What the policy does", 1, maxDescLen),
				"variable":    text("Scenario variable to set (lowercase letters, digits, _); give value too", 1, maxNameLen),
				"value":       {Description: "New value of the variable: a number, text or true/false"},
			}, "policy_name", "description"),
			Check:   checkPolicy,
			Handler: e.handler("apply_policy", e.applyPolicy),
		},
		// The shared do_nothing: identical in every component, so a world
		// with several components registers it once.
		tools.DoNothing(),
	}
}

// handler finds the caller's actor and checks the tool's permissions.
func (e *Economy) handler(name string, f func(c *tools.Call, a *actor) world.ActionResult) tools.Handler {
	return func(c *tools.Call) world.ActionResult {
		a := e.byID[c.Agent.ID]
		if a == nil {
			return world.Fail(name, world.CodeNotFound, "%s is not an actor of the economy", c.Agent.ID)
		}
		if roles, ok := e.cfg.Permissions[name]; ok && !slices.Contains(roles, a.role) {
			return world.Fail(name, world.CodeNotAllowed, "%s is for %s actors; you are a %s", name, strings.Join(roles, " and "), a.role)
		}
		return f(c, a)
	}
}

func (e *Economy) setPrice(c *tools.Call, a *actor) world.ActionResult {
	f := c.Float("price", -1)
	p := toMoney(f)
	if f > 0 && p == 0 {
		return world.Fail("set_price", world.CodeInvalidParams, "set_price: price must be 0 (not selling) or at least 0.01, got %g", f)
	}
	prev := a.price
	a.price = p
	return world.OK("set_price", map[string]any{"price": p.dollars(), "previous_price": prev.dollars()})
}

func (e *Economy) hire(c *tools.Call, a *actor) world.ActionResult {
	n := int(c.Float("count", 0))
	if u := e.unemployed(); n > u {
		return world.Fail("hire", world.CodeNotAllowed, "Cannot hire %d workers, only %d unemployed (labor force %d)", n, u, e.laborForce)
	}
	a.workforce += n
	return world.OK("hire", map[string]any{"hired": float64(n), "workforce": float64(a.workforce), "unemployed": float64(e.unemployed())})
}

func (e *Economy) fire(c *tools.Call, a *actor) world.ActionResult {
	n := int(c.Float("count", 0))
	if n > a.workforce {
		return world.Fail("fire", world.CodeNotAllowed, "Cannot fire %d workers, only %d employed", n, a.workforce)
	}
	a.workforce -= n
	return world.OK("fire", map[string]any{"fired": float64(n), "workforce": float64(a.workforce)})
}

// amount reads a money parameter that must come to at least a cent.
func amount(c *tools.Call, tool string) (money, *world.ActionResult) {
	f := c.Float("amount", 0)
	m := toMoney(f)
	if m <= 0 {
		r := world.Fail(tool, world.CodeInvalidParams, "%s: amount must be at least 0.01 (money is counted in cents), got %g", tool, f)
		return 0, &r
	}
	return m, nil
}

func (e *Economy) invest(c *tools.Call, a *actor) world.ActionResult {
	m, fail := amount(c, "invest")
	if fail != nil {
		return *fail
	}
	if m > a.cash {
		return world.Fail("invest", world.CodeNotAllowed, "Insufficient balance: investing %s needs %s in cash, you have %s", m, m, a.cash)
	}
	a.cash -= m
	a.output += m
	a.invested += m
	e.totalInvestment += m
	return world.OK("invest", map[string]any{"amount": m.dollars(), "balance": a.cash.dollars(), "output": a.output.dollars(),
		"total_investment": e.totalInvestment.dollars()})
}

func (e *Economy) allocate(c *tools.Call, a *actor) world.ActionResult {
	m, fail := amount(c, "allocate")
	if fail != nil {
		return *fail
	}
	fromName := strings.ToLower(strings.TrimSpace(c.String("from", "cash")))
	from := a.account(fromName)
	if from == nil {
		return world.Fail("allocate", world.CodeInvalidParams, "param 'from' must be one of %s (any case), got %q", strings.Join(accounts, ", "), fuzzy.Clip(c.String("from", "")))
	}
	target := c.String("target", "")
	var to *money
	var toActor *actor
	if acc := a.account(strings.ToLower(strings.TrimSpace(target))); acc != nil {
		if acc == from {
			return world.Fail("allocate", world.CodeInvalidParams, "allocate: from and target are both your %s account; name another account or an actor", fromName)
		}
		to, target = acc, strings.ToLower(strings.TrimSpace(target))
	} else if target == a.id {
		return world.Fail("allocate", world.CodeInvalidParams, "allocate: '%s' is you; to move money between your own accounts name one (%s)", a.id, strings.Join(accounts, ", "))
	} else if toActor = e.byID[target]; toActor != nil {
		to = &toActor.cash
	} else {
		hint := ""
		cands := slices.Clone(accounts)
		for _, id := range e.ids {
			if id != a.id {
				cands = append(cands, id)
			}
		}
		if best := fuzzy.Closest(target, cands); best != "" {
			hint = fmt.Sprintf("; did you mean '%s'?", best)
		}
		return world.Fail("allocate", world.CodeNotFound, "No account or actor named '%s'%s Accounts: %s; actors: %s",
			fuzzy.Clip(target), hint, strings.Join(accounts, ", "), listIDs(e.ids, a.id))
	}
	if m > *from {
		return world.Fail("allocate", world.CodeNotAllowed, "Insufficient balance in %s: moving %s needs %s, you have %s", fromName, m, m, *from)
	}
	*from -= m
	*to += m
	data := map[string]any{"amount": m.dollars(), "from": fromName, "target": target, fromName: from.dollars()}
	if toActor != nil {
		data["to_actor"] = true
		c.World.Publish(world.Event{Source: Name, Type: "transfer", Agent: a.id, To: []string{toActor.id},
			Data: map[string]any{"from": a.id, "to": toActor.id, "amount": m.dollars(), "round": float64(e.round)}})
	} else {
		data[target] = to.dollars()
	}
	return world.OK("allocate", data)
}

// listIDs lists actor ids other than self, at most 12 of them.
func listIDs(ids []string, self string) string {
	var out []string
	for _, id := range ids {
		if id != self {
			out = append(out, id)
		}
	}
	if len(out) > 12 {
		return strings.Join(out[:12], ", ") + fmt.Sprintf(", … (%d in all)", len(out))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// checkPolicy checks apply_policy's parameters beyond the schema.
func checkPolicy(p map[string]any) string {
	name := p["policy_name"].(string)
	if strings.TrimSpace(name) == "" {
		return "policy_name must not be blank"
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return "policy_name must be one line of text without control characters"
		}
	}
	if strings.TrimSpace(p["description"].(string)) == "" {
		return "description must not be blank"
	}
	variable, hasVar := p["variable"]
	value, hasVal := p["value"]
	switch {
	case hasVar && !hasVal:
		return "variable needs a value"
	case hasVal && !hasVar:
		return "value needs a variable to set"
	case !hasVar:
		return ""
	}
	if v := variable.(string); !nameRE.MatchString(v) {
		return fmt.Sprintf("variable must be a lowercase name (letters, digits, _, starting with a letter), got %q", fuzzy.Clip(v))
	}
	if _, msg := policyValue(value); msg != "" {
		return msg
	}
	return ""
}

// policyValue normalises a variable's value: a finite number (as float64),
// text of at most 200 characters or a boolean.
func policyValue(v any) (any, string) {
	switch x := v.(type) {
	case bool:
		return x, ""
	case string:
		if n := len([]rune(x)); n > maxTextValue {
			return nil, fmt.Sprintf("value: text may be at most %d characters, got %d", maxTextValue, n)
		}
		return x, ""
	}
	f, ok := tools.Number(v)
	if !ok {
		return nil, fmt.Sprintf("value must be a number, text or true/false, got %s", typeName(v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Sprintf("value must be a finite number, got %v", f)
	}
	if math.Abs(f) > maxMoney {
		return nil, fmt.Sprintf("value must be between %g and %g, got %g", -maxMoney, maxMoney, f)
	}
	return f, ""
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func kindOf(v any) string {
	switch v.(type) {
	case float64:
		return "a number"
	case string:
		return "text"
	case bool:
		return "true or false"
	}
	return "unknown"
}

func (e *Economy) applyPolicy(c *tools.Call, a *actor) world.ActionResult {
	name := strings.TrimSpace(c.String("policy_name", ""))
	desc := strings.Join(strings.FieldsFunc(c.String("description", ""), func(r rune) bool { return r == '\n' || r == '\r' || r == '\t' }), " ")
	desc = strings.TrimSpace(desc)
	variable := c.String("variable", "")
	var value, previous any
	if variable != "" {
		var msg string
		if value, msg = policyValue(c.Params["value"]); msg != "" {
			return world.Fail("apply_policy", world.CodeInvalidParams, "apply_policy: %s", msg)
		}
		old, exists := c.World.Variable(variable)
		if exists && kindOf(old) != kindOf(value) {
			return world.Fail("apply_policy", world.CodeInvalidParams, "apply_policy: %s is %s; value must be %s too, got %s", variable, kindOf(old), kindOf(old), kindOf(value))
		}
		if variable == e.cfg.WageVariable {
			f, ok := value.(float64)
			if !ok || f < 0 || f > maxPrice {
				return world.Fail("apply_policy", world.CodeInvalidParams, "apply_policy: %s is the wage per worker per round: a number from 0 to %g, got %v", variable, float64(maxPrice), value)
			}
		}
		if !exists && len(c.World.Variables()) >= maxVariables {
			return world.Fail("apply_policy", world.CodeNotAllowed, "apply_policy: the scenario already has %d variables, the most a policy may bring to; set an existing one", maxVariables)
		}
		previous = old
	}
	idx := slices.IndexFunc(e.policies, func(p policy) bool { return p.name == name })
	if idx < 0 && len(e.policies) >= maxPolicies {
		return world.Fail("apply_policy", world.CodeNotAllowed, "apply_policy: %d policies are already active, the most there may be; re-enact one of them by name to replace it", maxPolicies)
	}
	if variable != "" {
		if err := c.World.SetVariable(variable, value); err != nil {
			return world.Fail("apply_policy", world.CodeInvalidParams, "apply_policy: %v", err)
		}
	}
	p := policy{name: name, description: desc, enactedBy: a.id, round: e.round, variable: variable, value: value}
	if idx >= 0 {
		e.policies[idx] = p
	} else {
		e.policies = append(e.policies, p)
	}
	e.logPolicy(c.World, p, previous, idx >= 0)
	data := map[string]any{"policy": name, "description": desc, "enacted_by": a.id, "round": float64(e.round)}
	if variable != "" {
		data["variable"], data["value"] = variable, value
		if previous != nil {
			data["previous"] = previous
		}
	}
	c.World.Publish(world.Event{Source: Name, Type: "policy_change", Agent: a.id, Data: data})
	res := world.OK("apply_policy", data)
	res.Data = map[string]any{"policy": name, "replaced": idx >= 0, "active_policies": float64(len(e.policies))}
	if variable != "" {
		res.Data["variable"], res.Data["value"] = variable, value
	}
	return res
}
