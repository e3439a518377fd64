package debate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// Config is the debate component's scenario config; every field is optional.
type Config struct {
	// Task is the problem under debate. Default: the objective's description.
	Task string `json:"task"`
	// Rounds is the most rounds of proposal, critique and refinement. Default
	// 3, at least 1.
	Rounds int `json:"rounds"`
	// Termination: "fixed" runs every round; "confidence" (also accepted as
	// the reference's "convergence" or "quality") asks the judge after each
	// round but the last for its confidence (0–100) in the latest
	// refinements and goes to synthesis once it reaches threshold (default 90).
	Termination Termination `json:"termination"`
	// PhaseTicks is the most ticks a phase lasts: a phase ends as soon as every
	// contribution it asks for is in, or after this many ticks without the
	// missing ones (they are dropped, as the reference drops failed calls).
	// Default 10.
	PhaseTicks int `json:"phase_ticks"`
	// MaxContributionLength is the longest contribution, in characters.
	// Default 4000.
	MaxContributionLength int `json:"max_contribution_length"`
	// Agents configures the debaters. An entry with an id configures that
	// world agent; entries without one go, in order, to the world agents left
	// (scenario order, the judge excepted). World agents no entry covers are
	// debaters with the default roles in turn: architect, security,
	// performance, testing, generalist, kiss, datamodeling.
	Agents []AgentConfig `json:"agents"`
	// Judge configures the judge. Default: the last world agent.
	Judge JudgeConfig `json:"judge"`
}

// Termination is how the debate decides to stop.
type Termination struct {
	Type      string  `json:"type"`
	Threshold float64 `json:"threshold"`
}

// AgentConfig is one debater.
type AgentConfig struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Role string `json:"role"`
	// Enabled false leaves the world agent out of the debate. Default true.
	Enabled *bool `json:"enabled"`
	// Tools lists the query tools the agent may call, by name or as the
	// reference's {name, description, parameters} objects (only the name is
	// read). Unknown names are warned about and skipped. Default: none.
	Tools []ToolRef `json:"tools"`
	// ToolCallLimit is the most query-tool calls per phase, failed ones
	// included. Default 10.
	ToolCallLimit int `json:"tool_call_limit"`
	SeedKeys
}

// SeedKeys are seed 003's own config keys, accepted as they are written
// there: toolCallLimit is tool_call_limit; model, provider and temperature
// describe the model meant to play the agent (the model actually used is
// the one the agent's driver is given, e.g. arena run --model) and are kept
// for the record.
type SeedKeys struct {
	ToolCallLimitCamel int      `json:"toolCallLimit,omitempty"`
	Model              string   `json:"model,omitempty"`
	Provider           string   `json:"provider,omitempty"`
	Temperature        *float64 `json:"temperature,omitempty"`
}

// JudgeConfig is the judge.
type JudgeConfig struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Tools         []ToolRef `json:"tools"`
	ToolCallLimit int       `json:"tool_call_limit"`
	SeedKeys
}

// ToolRef names a tool: "context_search" or {"name": "context_search", ...}.
type ToolRef struct {
	Name string
}

// UnmarshalJSON reads a name or an object with a name.
func (t *ToolRef) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		t.Name = s
		return nil
	}
	var o struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return fmt.Errorf("a tool is a name or an object with a name")
	}
	t.Name = o.Name
	return nil
}

// MarshalJSON writes the name.
func (t ToolRef) MarshalJSON() ([]byte, error) { return json.Marshal(t.Name) }

// Defaults and limits.
const (
	DefaultRounds        = 3
	DefaultThreshold     = 90
	DefaultPhaseTicks    = 10
	DefaultToolCallLimit = 10
	DefaultMaxLength     = 4000
	maxRounds            = 100
	maxPhaseTicks        = 10000
	maxLength            = 100000
	maxToolCallLimit     = 1000
	maxTaskLength        = 10000
	maxRoleLength        = 40
)

// DefaultRoles are given in turn to debaters without a configured role.
var DefaultRoles = []string{"architect", "security", "performance", "testing", "generalist", "kiss", "datamodeling"}

// QueryTools are the tools an agent's tools list may name.
var QueryTools = []string{ToolContextSearch}

// DefaultConfig is the reference's configuration.
func DefaultConfig() Config {
	return Config{Rounds: DefaultRounds, Termination: Termination{Type: "fixed", Threshold: DefaultThreshold},
		PhaseTicks: DefaultPhaseTicks, MaxContributionLength: DefaultMaxLength}
}

// ParseConfig reads a config over the defaults; unknown fields and values out
// of range are errors naming the field. Unknown tool names are warned about
// (slog) and skipped.
func ParseConfig(raw json.RawMessage) (Config, error) {
	cfg := DefaultConfig()
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			var typ *json.UnmarshalTypeError
			switch {
			case errors.As(err, &typ) && typ.Field != "":
				return Config{}, fmt.Errorf("config.%s: wrong type, got JSON %s", typ.Field, typ.Value)
			case strings.HasPrefix(err.Error(), "json: unknown field "):
				return Config{}, fmt.Errorf("config: unknown field %s (known: task, rounds, termination, phase_ticks, max_contribution_length, agents, judge; an agent: id, name, role, enabled, tools, tool_call_limit or toolCallLimit, model, provider, temperature)",
					strings.TrimPrefix(err.Error(), "json: unknown field "))
			}
			return Config{}, fmt.Errorf("config: %v", err)
		}
	}
	cfg.normalize()
	return cfg, cfg.validate()
}

// normalize fills defaults and skips unknown tools.
func (c *Config) normalize() {
	switch strings.ToLower(strings.TrimSpace(c.Termination.Type)) {
	case "", "fixed":
		c.Termination.Type = "fixed"
	case "confidence", "convergence", "quality":
		c.Termination.Type = "confidence"
	}
	if c.Termination.Threshold == 0 {
		c.Termination.Threshold = DefaultThreshold
	}
	for i := range c.Agents {
		a := &c.Agents[i]
		a.Role = strings.ToLower(strings.TrimSpace(a.Role))
		a.Tools = knownTools(fmt.Sprintf("agents[%d]", i), a.Tools)
		if a.ToolCallLimit == 0 {
			a.ToolCallLimit = a.ToolCallLimitCamel
		}
		if a.ToolCallLimit == 0 {
			a.ToolCallLimit = DefaultToolCallLimit
		}
	}
	c.Judge.Tools = knownTools("judge", c.Judge.Tools)
	if c.Judge.ToolCallLimit == 0 {
		c.Judge.ToolCallLimit = c.Judge.ToolCallLimitCamel
	}
	if c.Judge.ToolCallLimit == 0 {
		c.Judge.ToolCallLimit = DefaultToolCallLimit
	}
}

// knownTools keeps the tools that exist, once each, warning about the rest.
func knownTools(who string, refs []ToolRef) []ToolRef {
	var out []ToolRef
	seen := map[string]bool{}
	for _, t := range refs {
		name := strings.TrimSpace(t.Name)
		known := false
		for _, q := range QueryTools {
			known = known || q == name
		}
		switch {
		case name == "":
			slog.Warn("debate: a tool with no name is skipped", "agent", who)
		case !known:
			slog.Warn("debate: unknown tool is skipped", "agent", who, "tool", name, "known", strings.Join(QueryTools, ", "))
		case !seen[name]:
			seen[name] = true
			out = append(out, ToolRef{Name: name})
		}
	}
	return out
}

func (c Config) validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if c.Rounds < 1 || c.Rounds > maxRounds {
		add("config.rounds: must be from 1 to %d, got %d", maxRounds, c.Rounds)
	}
	if c.Termination.Type != "fixed" && c.Termination.Type != "confidence" {
		add("config.termination.type: must be fixed or confidence (convergence, quality), got %q", c.Termination.Type)
	}
	if c.Termination.Threshold < 0 || c.Termination.Threshold > 100 || c.Termination.Threshold != c.Termination.Threshold {
		add("config.termination.threshold: must be from 0 to 100, got %g", c.Termination.Threshold)
	}
	if c.PhaseTicks < 1 || c.PhaseTicks > maxPhaseTicks {
		add("config.phase_ticks: must be from 1 to %d, got %d", maxPhaseTicks, c.PhaseTicks)
	}
	if c.MaxContributionLength < 1 || c.MaxContributionLength > maxLength {
		add("config.max_contribution_length: must be from 1 to %d, got %d", maxLength, c.MaxContributionLength)
	}
	if len([]rune(c.Task)) > maxTaskLength {
		add("config.task: at most %d characters", maxTaskLength)
	}
	ids := map[string]bool{}
	if c.Judge.ID != "" {
		ids[c.Judge.ID] = true
	}
	for i, a := range c.Agents {
		if len(a.Role) > maxRoleLength {
			add("config.agents[%d].role: at most %d characters", i, maxRoleLength)
		}
		if a.Role == "judge" {
			add("config.agents[%d].role: judge is the judge's role; configure it under config.judge", i)
		}
		if a.ID != "" {
			if ids[a.ID] {
				add("config.agents[%d].id: %q is configured twice", i, a.ID)
			}
			ids[a.ID] = true
		}
		if a.ToolCallLimit < 1 || a.ToolCallLimit > maxToolCallLimit {
			add("config.agents[%d].tool_call_limit: must be from 1 to %d, got %d", i, maxToolCallLimit, a.ToolCallLimit)
		}
	}
	if c.Judge.ToolCallLimit < 1 || c.Judge.ToolCallLimit > maxToolCallLimit {
		add("config.judge.tool_call_limit: must be from 1 to %d, got %d", maxToolCallLimit, c.Judge.ToolCallLimit)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
