package economy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Config is the economy's scenario config (the "config" object of its entry in
// "components"). Zero fields take the defaults in brackets; the reference's
// defaults are labor_force 1000 and metric_change_threshold 0.05.
type Config struct {
	// LaborForce is the number of people who can be employed [1000].
	LaborForce int `json:"labor_force"`
	// MetricChangeThreshold: a metric whose absolute change over a round is at
	// least this publishes metric_change [0.05].
	MetricChangeThreshold *float64 `json:"metric_change_threshold"`
	// StartingBalance is every actor's cash unless its role or the actor's
	// own entry says otherwise [1000].
	StartingBalance *float64 `json:"starting_balance"`
	// RoundTicks is the length of an economic round in world ticks [1].
	RoundTicks int `json:"round_ticks"`
	// Assign gives agents their roles in turn, by agent order ["producer"].
	Assign []string `json:"assign"`
	// Roles sets the starting state of each role's actors.
	Roles map[string]RoleSpec `json:"roles"`
	// Actors overrides the role or the cash of single agents, by id.
	Actors map[string]ActorSpec `json:"actors"`
	// Permissions limits tools to roles: {"apply_policy": ["government"]}. A
	// tool not listed is open to every role [no limits].
	Permissions map[string][]string `json:"permissions"`

	// The round flow (wages and household spending). With no wage and no
	// spend rate nothing flows, as in the reference.

	// WageVariable names the scenario variable holding the wage per worker per
	// round (a policy may change it); Wage is used while it is unset.
	WageVariable string  `json:"wage_variable"`
	Wage         float64 `json:"wage"`
	// HouseholdRoles are the roles that receive wages and buy goods ["worker"].
	HouseholdRoles []string `json:"household_roles"`
	// SpendRate is the share of its cash a household spends each round [0].
	SpendRate float64 `json:"spend_rate"`
	// LaborProductivity is the goods one worker makes per round [1];
	// CapitalProductivity the goods per unit of output (invested capital) [0].
	LaborProductivity   *float64 `json:"labor_productivity"`
	CapitalProductivity float64  `json:"capital_productivity"`
	// Shocks change the flow's parameters at given rounds.
	Shocks []Shock `json:"shocks"`
}

// RoleSpec is the starting state of a role's actors.
type RoleSpec struct {
	Balance   *float64 `json:"balance"` // cash [starting_balance]
	Savings   float64  `json:"savings"`
	Payroll   float64  `json:"payroll"`
	Price     float64  `json:"price"`
	Workforce int      `json:"workforce"`
	Output    float64  `json:"output"`
}

// ActorSpec overrides one agent's role or cash.
type ActorSpec struct {
	Role    string   `json:"role"`
	Balance *float64 `json:"balance"`
}

// Shock changes flow parameters from the start of a round on; it is
// published as an economic_shock event. Absent fields stay as they are.
type Shock struct {
	Round               int      `json:"round"`
	Note                string   `json:"note"`
	SpendRate           *float64 `json:"spend_rate"`
	LaborForce          *int     `json:"labor_force"`
	LaborProductivity   *float64 `json:"labor_productivity"`
	CapitalProductivity *float64 `json:"capital_productivity"`
}

// Limits on what a config or a tool may ask for.
const (
	maxMoney      = 1e12 // dollars, any single amount or balance
	maxPrice      = 1e9
	maxCount      = 1_000_000 // workers in one hire or fire, and the labor force
	maxActorsCfg  = 10_000
	maxNameLen    = 64
	maxPolicyName = 100
	maxDescLen    = 500
	maxTextValue  = 200
	maxPolicies   = 64
	maxVariables  = 64 // scenario variables a policy may bring to (it may always change existing ones)
	maxShocks     = 100
	maxRoundTicks = 100_000
	maxRounds     = 1_000_000
)

// defaultRole is the reference's role for actors given none.
const defaultRole = "producer"

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// parse decodes and validates a config; defaults are filled in.
func parse(raw json.RawMessage) (*Config, error) {
	cfg := &Config{}
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(cfg); err != nil {
			return nil, configError(err)
		}
		if dec.More() {
			return nil, errors.New("config: unexpected data after the config object")
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func configError(err error) error {
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Errorf("config.%s: must be %s, got JSON %s", typ.Field, kindName(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("config: unknown field %s (known: %s)", strings.TrimPrefix(err.Error(), "json: unknown field "), strings.Join(knownFields, ", "))
	}
	return fmt.Errorf("config: %v", err)
}

var knownFields = []string{"actors", "assign", "capital_productivity", "household_roles", "labor_force", "labor_productivity",
	"metric_change_threshold", "permissions", "roles", "round_ticks", "shocks", "spend_rate", "starting_balance", "wage", "wage_variable"}

func kindName(k string) string {
	switch k {
	case "float64":
		return "a number"
	case "int":
		return "a whole number"
	case "string":
		return "text"
	case "slice":
		return "a list"
	case "map", "struct", "ptr":
		return "an object"
	}
	return k
}

func (c *Config) validate() error {
	var errs []string
	add := func(field, format string, args ...any) {
		errs = append(errs, "config."+field+": "+fmt.Sprintf(format, args...))
	}
	money := func(field string, v float64) {
		if math.IsNaN(v) || v < 0 || v > maxMoney {
			add(field, "must be between 0 and %g, got %g", maxMoney, v)
		}
	}
	if c.LaborForce == 0 {
		c.LaborForce = 1000
	}
	if c.LaborForce < 1 || c.LaborForce > maxCount {
		add("labor_force", "must be between 1 and %d, got %d", maxCount, c.LaborForce)
	}
	if c.MetricChangeThreshold == nil {
		c.MetricChangeThreshold = ptr(0.05)
	}
	if t := *c.MetricChangeThreshold; !(t > 0) || t > maxMoney {
		add("metric_change_threshold", "must be a positive number, got %g", t)
	}
	if c.StartingBalance == nil {
		c.StartingBalance = ptr(1000.0)
	}
	money("starting_balance", *c.StartingBalance)
	if c.RoundTicks == 0 {
		c.RoundTicks = 1
	}
	if c.RoundTicks < 1 || c.RoundTicks > maxRoundTicks {
		add("round_ticks", "must be between 1 and %d, got %d", maxRoundTicks, c.RoundTicks)
	}
	if len(c.Assign) == 0 {
		c.Assign = []string{defaultRole}
	}
	roles := map[string]bool{}
	role := func(field, r string) {
		if !nameRE.MatchString(r) || len(r) > maxNameLen {
			add(field, "a role is a lowercase name (letters, digits, _), got %q", clip(r))
			return
		}
		roles[r] = true
	}
	for i, r := range c.Assign {
		role(fmt.Sprintf("assign[%d]", i), r)
	}
	for _, r := range slices.Sorted(maps.Keys(c.Roles)) {
		role("roles."+r, r)
		s := c.Roles[r]
		f := "roles." + r + "."
		if s.Balance != nil {
			money(f+"balance", *s.Balance)
		}
		money(f+"savings", s.Savings)
		money(f+"payroll", s.Payroll)
		money(f+"output", s.Output)
		if math.IsNaN(s.Price) || s.Price < 0 || s.Price > maxPrice {
			add(f+"price", "must be between 0 and %g, got %g", maxPrice, s.Price)
		}
		if s.Workforce < 0 || s.Workforce > maxCount {
			add(f+"workforce", "must be between 0 and %d, got %d", maxCount, s.Workforce)
		}
	}
	if len(c.Actors) > maxActorsCfg {
		add("actors", "at most %d entries", maxActorsCfg)
	}
	for _, id := range slices.Sorted(maps.Keys(c.Actors)) {
		a := c.Actors[id]
		if a.Role != "" {
			role("actors."+id+".role", a.Role)
		}
		if a.Balance != nil {
			money("actors."+id+".balance", *a.Balance)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(c.Permissions)) {
		if !slices.Contains(toolNames, t) {
			add("permissions."+t, "is not an economy tool (%s)", strings.Join(toolNames, ", "))
			continue
		}
		if len(c.Permissions[t]) == 0 {
			add("permissions."+t, "must list at least one role")
		}
		for i, r := range c.Permissions[t] {
			if !roles[r] {
				add(fmt.Sprintf("permissions.%s[%d]", t, i), "%q is not a role of this economy (%s)", clip(r), strings.Join(slices.Sorted(maps.Keys(roles)), ", "))
			}
		}
	}
	if c.WageVariable != "" && (!nameRE.MatchString(c.WageVariable) || len(c.WageVariable) > maxNameLen) {
		add("wage_variable", "must be a variable name (lowercase letters, digits, _), got %q", clip(c.WageVariable))
	}
	money("wage", c.Wage)
	if c.HouseholdRoles == nil {
		c.HouseholdRoles = []string{"worker"}
	}
	for i, r := range c.HouseholdRoles {
		if !nameRE.MatchString(r) {
			add(fmt.Sprintf("household_roles[%d]", i), "a role is a lowercase name, got %q", clip(r))
		}
	}
	rate := func(field string, v float64) {
		if math.IsNaN(v) || v < 0 || v > 1 {
			add(field, "must be between 0 and 1, got %g", v)
		}
	}
	prod := func(field string, v float64) {
		if math.IsNaN(v) || v < 0 || v > 1e6 {
			add(field, "must be between 0 and 1e6, got %g", v)
		}
	}
	rate("spend_rate", c.SpendRate)
	if c.LaborProductivity == nil {
		c.LaborProductivity = ptr(1.0)
	}
	prod("labor_productivity", *c.LaborProductivity)
	prod("capital_productivity", c.CapitalProductivity)
	if len(c.Shocks) > maxShocks {
		add("shocks", "at most %d shocks", maxShocks)
	}
	for i, s := range c.Shocks {
		f := fmt.Sprintf("shocks[%d].", i)
		if s.Round < 1 || s.Round > maxRounds {
			add(f+"round", "must be between 1 and %d, got %d", maxRounds, s.Round)
		}
		if len(s.Note) > maxDescLen {
			add(f+"note", "must be at most %d characters", maxDescLen)
		}
		if s.SpendRate != nil {
			rate(f+"spend_rate", *s.SpendRate)
		}
		if s.LaborForce != nil && (*s.LaborForce < 1 || *s.LaborForce > maxCount) {
			add(f+"labor_force", "must be between 1 and %d, got %d", maxCount, *s.LaborForce)
		}
		if s.LaborProductivity != nil {
			prod(f+"labor_productivity", *s.LaborProductivity)
		}
		if s.CapitalProductivity != nil {
			prod(f+"capital_productivity", *s.CapitalProductivity)
		}
		if s.SpendRate == nil && s.LaborForce == nil && s.LaborProductivity == nil && s.CapitalProductivity == nil {
			add(f[:len(f)-1], "changes nothing: give spend_rate, labor_force, labor_productivity or capital_productivity")
		}
	}
	if len(errs) > 0 {
		if len(errs) > 1 {
			return fmt.Errorf("%s (and %d more: %s)", errs[0], len(errs)-1, strings.Join(errs[1:], "; "))
		}
		return errors.New(errs[0])
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// clip shortens text echoed back in an error.
func clip(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}
