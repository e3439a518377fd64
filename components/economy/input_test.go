package economy_test

import (
	"math"
	"strings"
	"testing"

	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// Every tool refuses bad input with a clear error and changes nothing: not
// the state hash, not the events, not the variables.
func TestBadInputToEveryTool(t *testing.T) {
	v := newEnv(t, 3, `{"labor_force": 50, "starting_balance": 100, "assign": ["firm", "government", "worker"],
		"wage_variable": "min_wage", "permissions": {"apply_policy": ["government"]}}`, map[string]any{"min_wage": 10.0, "mood": "calm"})
	v.ok("a1", "hire", map[string]any{"count": 5})
	v.ok("a1", "allocate", map[string]any{"target": "savings", "amount": 20})
	huge := strings.Repeat("x", 100_000)
	nan, inf := math.NaN(), math.Inf(1)
	type p = map[string]any
	cases := []struct {
		id, tool string
		params   p
		code     string
		msg      string
	}{
		// set_price
		{"a1", "set_price", p{"price": -1}, world.CodeInvalidParams, "param 'price' must be at least 0"},
		{"a1", "set_price", p{"price": nan}, world.CodeInvalidParams, "must be a finite number"},
		{"a1", "set_price", p{"price": inf}, world.CodeInvalidParams, "must be a finite number"},
		{"a1", "set_price", p{"price": "ten"}, world.CodeInvalidParams, "param 'price' must be a number, got string"},
		{"a1", "set_price", p{"price": 0.001}, world.CodeInvalidParams, "price must be 0 (not selling) or at least 0.01"},
		{"a1", "set_price", p{"price": 1e10}, world.CodeInvalidParams, "must be at most"},
		{"a1", "set_price", p{}, world.CodeInvalidParams, "param 'price' is required"},
		{"a1", "set_price", p{"price": 3, "currency": "usd"}, world.CodeInvalidParams, "'currency' is not a parameter"},
		// hire
		{"a1", "hire", p{"count": 0}, world.CodeInvalidParams, "param 'count' must be at least 1"},
		{"a1", "hire", p{"count": -5}, world.CodeInvalidParams, "must be at least 1"},
		{"a1", "hire", p{"count": 2.5}, world.CodeInvalidParams, "must be a whole number"},
		{"a1", "hire", p{"count": nan}, world.CodeInvalidParams, "finite"},
		{"a1", "hire", p{"count": "3"}, world.CodeInvalidParams, "must be a number, got string"},
		{"a1", "hire", p{"count": []any{1}}, world.CodeInvalidParams, "must be a number, got array"},
		{"a1", "hire", p{"count": 46}, world.CodeNotAllowed, "Cannot hire 46 workers, only 45 unemployed (labor force 50)"},
		{"a1", "hire", p{"count": 1e7}, world.CodeInvalidParams, "must be at most"},
		// fire
		{"a1", "fire", p{"count": 0}, world.CodeInvalidParams, "must be at least 1"},
		{"a1", "fire", p{"count": -1}, world.CodeInvalidParams, "must be at least 1"},
		{"a1", "fire", p{"count": 6}, world.CodeNotAllowed, "Cannot fire 6 workers, only 5 employed"},
		{"a2", "fire", p{"count": 1}, world.CodeNotAllowed, "Cannot fire 1 workers, only 0 employed"},
		{"a1", "fire", p{"count": true}, world.CodeInvalidParams, "must be a number, got boolean"},
		// invest
		{"a1", "invest", p{"amount": 0}, world.CodeInvalidParams, "must be greater than 0"},
		{"a1", "invest", p{"amount": -10}, world.CodeInvalidParams, "must be greater than 0"},
		{"a1", "invest", p{"amount": nan}, world.CodeInvalidParams, "finite"},
		{"a1", "invest", p{"amount": 0.004}, world.CodeInvalidParams, "amount must be at least 0.01 (money is counted in cents)"},
		{"a1", "invest", p{"amount": 80.01}, world.CodeNotAllowed, "Insufficient balance: investing 80.01 needs 80.01 in cash, you have 80.00"},
		{"a1", "invest", p{"amount": "100"}, world.CodeInvalidParams, "must be a number"},
		{"a1", "invest", p{"amount": 1e13}, world.CodeInvalidParams, "must be at most"},
		// allocate
		{"a1", "allocate", p{"target": "a9", "amount": 1}, world.CodeNotFound, "No account or actor named 'a9'; did you mean 'a2'? Accounts: cash, savings, payroll; actors: a2, a3"},
		{"a1", "allocate", p{"target": "savigns", "amount": 1}, world.CodeNotFound, "did you mean 'savings'?"},
		{"a1", "allocate", p{"target": huge, "amount": 1}, world.CodeInvalidParams, "param 'target' must be at most 100 characters"},
		{"a1", "allocate", p{"target": "", "amount": 1}, world.CodeInvalidParams, "must be at least 1 characters"},
		{"a1", "allocate", p{"target": "a1", "amount": 1}, world.CodeInvalidParams, "'a1' is you"},
		{"a1", "allocate", p{"target": "cash", "amount": 1}, world.CodeInvalidParams, "from and target are both your cash account"},
		{"a1", "allocate", p{"target": "savings", "amount": 5, "from": "savings"}, world.CodeInvalidParams, "both your savings account"},
		{"a1", "allocate", p{"target": "a2", "amount": 0}, world.CodeInvalidParams, "must be greater than 0"},
		{"a1", "allocate", p{"target": "a2", "amount": -1}, world.CodeInvalidParams, "must be greater than 0"},
		{"a1", "allocate", p{"target": "a2", "amount": nan}, world.CodeInvalidParams, "finite"},
		{"a1", "allocate", p{"target": "a2", "amount": 0.001}, world.CodeInvalidParams, "at least 0.01"},
		{"a1", "allocate", p{"target": "a2", "amount": 80.5}, world.CodeNotAllowed, "Insufficient balance in cash: moving 80.50 needs 80.50, you have 80.00"},
		{"a1", "allocate", p{"target": "cash", "amount": 21, "from": "savings"}, world.CodeNotAllowed, "Insufficient balance in savings"},
		{"a1", "allocate", p{"target": "a2", "amount": 1, "from": "wallet"}, world.CodeInvalidParams, `param 'from' must be one of cash, savings, payroll (any case), got "wallet"`},
		{"a1", "allocate", p{"target": "a2", "amount": 1, "from": "a2"}, world.CodeInvalidParams, "param 'from' must be one of cash, savings, payroll"},
		{"a1", "allocate", p{"target": "a2", "amount": 1, "from": ""}, world.CodeInvalidParams, "param 'from' must be at least 1 characters"},
		{"a1", "allocate", p{"target": 5, "amount": 1}, world.CodeInvalidParams, "param 'target' must be a string, got number"},
		{"a1", "allocate", p{"target": "a2", "amount": 1, "from": huge}, world.CodeInvalidParams, "param 'from' must be at most 20 characters"},
		{"a1", "allocate", p{"target": "a2"}, world.CodeInvalidParams, "param 'amount' is required"},
		// apply_policy
		{"a2", "apply_policy", p{"policy_name": huge, "description": "d"}, world.CodeInvalidParams, "param 'policy_name' must be at most 100 characters"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": huge}, world.CodeInvalidParams, "param 'description' must be at most 500 characters"},
		{"a2", "apply_policy", p{"policy_name": "   ", "description": "d"}, world.CodeInvalidParams, "policy_name must not be blank"},
		{"a2", "apply_policy", p{"policy_name": "a\nb", "description": "d"}, world.CodeInvalidParams, "policy_name must be one line"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": " "}, world.CodeInvalidParams, "description must not be blank"},
		{"a2", "apply_policy", p{"policy_name": "n"}, world.CodeInvalidParams, "param 'description' is required"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "min_wage"}, world.CodeInvalidParams, "variable needs a value"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "value": 3}, world.CodeInvalidParams, "value needs a variable to set"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "Min Wage", "value": 3}, world.CodeInvalidParams, "variable must be a lowercase name"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": huge, "value": 3}, world.CodeInvalidParams, "param 'variable' must be at most 64 characters"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "x", "value": []any{1}}, world.CodeInvalidParams, "value must be a number, text or true/false, got a list"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "x", "value": map[string]any{}}, world.CodeInvalidParams, "got an object"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "x", "value": nil}, world.CodeInvalidParams, "got null"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "x", "value": nan}, world.CodeInvalidParams, "value must be a finite number"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "x", "value": huge}, world.CodeInvalidParams, "text may be at most 200 characters"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "x", "value": 1e300}, world.CodeInvalidParams, "value must be between"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "min_wage", "value": "high"}, world.CodeInvalidParams, "min_wage is a number; value must be a number too, got text"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "mood", "value": true}, world.CodeInvalidParams, "mood is text"},
		{"a2", "apply_policy", p{"policy_name": "n", "description": "d", "variable": "min_wage", "value": -5}, world.CodeInvalidParams, "min_wage is the wage per worker per round: a number from 0"},
		{"a2", "apply_policy", p{"policy_name": 7, "description": "d"}, world.CodeInvalidParams, "param 'policy_name' must be a string, got number"},
		{"a1", "apply_policy", p{"policy_name": "n", "description": "d"}, world.CodeNotAllowed, "apply_policy is for government actors; you are a firm"},
		// do_nothing
		{"a1", "do_nothing", p{"why": "bored"}, world.CodeInvalidParams, "'why' is not a parameter"},
		// anyone
		{"nobody", "hire", p{"count": 1}, world.CodeNotFound, "No agent named 'nobody'"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.tool] = true
		t.Run(c.tool, func(t *testing.T) {
			v.t = t
			v.fail(c.id, c.tool, c.params, c.code, c.msg)
		})
	}
	for _, tl := range []string{"set_price", "hire", "fire", "invest", "allocate", "apply_policy", "do_nothing"} {
		require.True(t, seen[tl], "no bad input tested for %s", tl)
	}
	v.t = t
	require.True(t, v.do("a1", "do_nothing", nil).Success)
	// Values from other decoders (CBOR integers) are numbers too.
	v.ok("a2", "apply_policy", map[string]any{"policy_name": "n", "description": "d", "variable": "min_wage", "value": uint64(12)})
	val, _ := v.w.Variable("min_wage")
	require.Equal(t, 12.0, val)
}

// Too many policies or variables are refused; a policy re-enacted by name
// replaces the old one.
func TestPolicyLimits(t *testing.T) {
	v := newEnv(t, 1, `{}`, nil)
	d := v.ok("a1", "apply_policy", map[string]any{"policy_name": "p", "description": "first"})
	require.Equal(t, false, d["replaced"])
	d = v.ok("a1", "apply_policy", map[string]any{"policy_name": "p", "description": "second"})
	require.Equal(t, true, d["replaced"])
	require.Equal(t, []string{"p"}, v.e.Policies())
	for i := 1; i < 64; i++ {
		v.ok("a1", "apply_policy", map[string]any{"policy_name": "p" + string(rune('A'+i%26)) + string(rune('a'+i/26)), "description": "d",
			"variable": "v" + string(rune('a'+i%26)) + string(rune('a'+i/26)), "value": float64(i)})
	}
	v.fail("a1", "apply_policy", map[string]any{"policy_name": "one more", "description": "d"}, world.CodeNotAllowed, "64 policies are already active")
	v.ok("a1", "apply_policy", map[string]any{"policy_name": "p", "description": "d", "variable": "sixty_fourth", "value": 1})
	v.fail("a1", "apply_policy", map[string]any{"policy_name": "p", "description": "d", "variable": "brand_new", "value": 1}, world.CodeNotAllowed, "already has 64 variables")
	v.ok("a1", "apply_policy", map[string]any{"policy_name": "p", "description": "d", "variable": "sixty_fourth", "value": 2})
}

// allocate's description names the accounts and from's default once.
func TestAllocateDescribesFromOnce(t *testing.T) {
	v := newEnv(t, 2, `{}`, nil)
	tl, ok := v.reg.Lookup("allocate")
	require.True(t, ok)
	text := tl.Description + " " + tl.Parameters.Properties["from"].Description
	require.Equal(t, 1, strings.Count(text, "default cash"), text)
	require.Equal(t, "cash", tl.Parameters.Properties["from"].Default)
}
