package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/arena-sim/arena/mcp"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

func cmdScenarios(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("scenarios", stdout)
	format := fs.String("format", "text", "text (a table of the built-in scenarios) or json (what an environment needs to know before it starts a server: slot ids, vocabularies, rules, tools)")
	scenario := fs.String("scenario", "", "with --format json: describe only this built-in scenario or scenario file")
	agents := fs.Int("agents", 0, "with --format json: the number of agent slots whose ids to list (default: the scenario's)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFlags(fs, 0, "agents"); err != nil {
		return err
	}
	if *format == "json" {
		return scenariosJSON(ctx, stdout, *scenario, *agents)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSIZE\tAGENTS\tTICKS\tDESCRIPTION")
	for _, name := range scenarios.Builtin() {
		sc, err := scenarios.Load(name)
		if err != nil {
			return fmt.Errorf("built-in scenario %s: %w", name, err)
		}
		w, d := sc.Size[0], sc.Size[1]
		if sc.Bounds != nil {
			w, d = sc.Bounds.Max[0]-sc.Bounds.Min[0], sc.Bounds.Max[1]-sc.Bounds.Min[1]
		}
		fmt.Fprintf(tw, "%s\t%gx%g\t%d (max %d)\t%d\t%s\n", sc.Name, w, d, sc.Agents.Count, sc.Agents.Max, sc.TimeLimit(), sc.Description)
	}
	return tw.Flush()
}

// scenarioInfo is one scenario as `arena scenarios --format json` prints it:
// what a reinforcement-learning environment must know before the episode
// starts (sdk/python's ArenaParallelEnv builds its spaces from it).
type scenarioInfo struct {
	Name           string            `json:"name"`
	Description    string            `json:"description"`
	Bounds         [4]float64        `json:"bounds"` // min x, min z, max x, max z
	TickRate       float64           `json:"tick_rate"`
	TimeLimit      int               `json:"time_limit"`
	DecisionPeriod int               `json:"decision_period"`
	AgentCount     int               `json:"agent_count"` // the scenario's default
	MaxAgents      int               `json:"max_agents"`
	Bot            string            `json:"bot,omitempty"`
	AgentIDs       []string          `json:"agent_ids"` // the slots for --agents, in scenario order
	Teams          []string          `json:"teams,omitempty"`
	AgentTeams     map[string]string `json:"agent_teams,omitempty"`
	Rules          scenarioRules     `json:"rules"`
	Items          []string          `json:"items"`
	ResourceTypes  []string          `json:"resource_types"`
	StationTypes   []string          `json:"station_types"`
	HazardTypes    []string          `json:"hazard_types"`
	ObstacleTypes  []string          `json:"obstacle_types"`
	Recipes        []string          `json:"recipes"`
	CapturePoints  []string          `json:"capture_points"`
	Components     []string          `json:"components"`
	Metrics        []string          `json:"metrics"`
	Objective      world.Objective   `json:"objective"`
	Tools          []tools.Spec      `json:"tools"`
	Variables      map[string]any    `json:"variables,omitempty"`
	HeightRange    [2]float64        `json:"height_range"` // lowest and highest ground
}

// scenarioRules are the world rules with their defaults applied.
type scenarioRules struct {
	PerceptionRadius   float64 `json:"perception_radius"`
	CollectRange       float64 `json:"collect_range"`
	CraftRange         float64 `json:"craft_range"`
	InventoryCapacity  int     `json:"inventory_capacity"`
	MaxHealth          float64 `json:"max_health"`
	BaseSpeed          float64 `json:"base_speed"`
	MaxSpeedMultiplier float64 `json:"max_speed_multiplier"`
	MaxMessageLen      int     `json:"max_message_length"`
	ToolCallLimit      int     `json:"tool_call_limit"`
}

// scenariosJSON prints one scenario (name or file) or, when name is empty,
// every built-in scenario, as JSON.
func scenariosJSON(ctx context.Context, stdout io.Writer, name string, agents int) error {
	names := scenarios.Builtin()
	if name != "" {
		names = []string{name}
	}
	var out []scenarioInfo
	for _, n := range names {
		sc, err := loadScenario(ctx, "scenarios", n)
		if err != nil {
			return err
		}
		if err := checkWorld(sc, scenarios.Options{Agents: agents}); err != nil {
			return err
		}
		info, err := describeScenario(sc, agents)
		if err != nil {
			return err
		}
		out = append(out, info)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if name != "" {
		return enc.Encode(out[0])
	}
	return enc.Encode(out)
}

func describeScenario(sc *scenarios.Scenario, agents int) (scenarioInfo, error) {
	w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: agents})
	if err != nil {
		return scenarioInfo{}, err
	}
	reg, err := tools.ForWorld(w)
	if err != nil {
		return scenarioInfo{}, err
	}
	b, r := w.Bounds(), w.Rules()
	info := scenarioInfo{
		Name: sc.Name, Description: sc.Description, Bounds: [4]float64{b.MinX, b.MinZ, b.MaxX, b.MaxZ},
		TickRate: w.TickRate(), TimeLimit: w.Objective().TimeLimit, DecisionPeriod: max(sc.Limits.DecisionPeriod, 1),
		AgentCount: sc.Agents.Count, MaxAgents: sc.Agents.Max, Bot: sc.Agents.Bot, Teams: sc.Agents.Teams,
		Rules: scenarioRules{PerceptionRadius: r.PerceptionRadius, CollectRange: r.CollectRange, CraftRange: r.CraftRange,
			InventoryCapacity: r.InventoryCapacity, MaxHealth: r.MaxHealth, BaseSpeed: r.BaseSpeed,
			MaxSpeedMultiplier: r.MaxSpeedMultiplier, MaxMessageLen: r.MaxMessageLen, ToolCallLimit: sc.ToolCallLimit()},
		Objective: w.Objective(), Tools: reg.Specs(), Variables: w.Variables(),
	}
	for _, a := range w.Agents() {
		info.AgentIDs = append(info.AgentIDs, a.ID)
		if a.Team != "" {
			if info.AgentTeams == nil {
				info.AgentTeams = map[string]string{}
			}
			info.AgentTeams[a.ID] = a.Team
		}
	}
	set := func(dst *[]string, names ...string) {
		for _, n := range names {
			if n != "" && !slices.Contains(*dst, n) {
				*dst = append(*dst, n)
			}
		}
		slices.Sort(*dst)
	}
	info.Items, info.ResourceTypes, info.StationTypes, info.HazardTypes = []string{}, []string{}, []string{}, []string{}
	info.ObstacleTypes, info.Recipes, info.CapturePoints, info.Components = []string{}, []string{}, []string{}, []string{}
	for _, it := range sc.Items {
		set(&info.Items, it.Name)
	}
	for _, rc := range sc.Recipes {
		set(&info.Recipes, rc.Output)
		set(&info.Items, rc.Output)
		set(&info.StationTypes, rc.StationType)
		for _, in := range slices.Sorted(maps.Keys(rc.Inputs)) {
			set(&info.Items, in)
		}
	}
	for _, x := range w.Resources() {
		set(&info.ResourceTypes, x.ResourceType)
		set(&info.Items, x.ResourceType)
	}
	for _, x := range w.Stations() {
		set(&info.StationTypes, x.StationType)
	}
	for _, x := range w.Hazards() {
		set(&info.HazardTypes, x.HazardType)
	}
	for _, x := range w.Obstacles() {
		set(&info.ObstacleTypes, x.ObstacleType)
	}
	for _, x := range w.CapturePoints() {
		info.CapturePoints = append(info.CapturePoints, x.Name)
	}
	for _, c := range sc.Components {
		info.Components = append(info.Components, c.Type)
	}
	info.Metrics = slices.Sorted(maps.Keys(w.Objective().SuccessMetrics))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range sc.Terrain.Heights {
		for _, h := range row {
			lo, hi = min(lo, h), max(hi, h)
		}
	}
	if len(sc.Terrain.Heights) == 0 {
		lo, hi = 0, 0
	}
	info.HeightRange = [2]float64{sc.Terrain.Base + lo, sc.Terrain.Base + hi}
	return info, nil
}

func cmdTools(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("tools", stdout)
	scenario := fs.String("scenario", "foraging", "scenario whose tools to list (components add tools)")
	format := fs.String("format", "text", "text, json (protocol form), openai (strict function-calling form), anthropic (input_schema form) or mcp (tools/list result)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFlags(fs, 0); err != nil {
		return err
	}
	sc, err := loadScenario(ctx, "tools", *scenario)
	if err != nil {
		return err
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	if err != nil {
		return err
	}
	reg, err := tools.ForWorld(w)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	switch *format {
	case "openai":
		return enc.Encode(openAITools(reg))
	case "anthropic":
		return enc.Encode(anthropicTools(reg))
	case "mcp":
		return enc.Encode(mcpTools(reg))
	case "json":
		return enc.Encode(reg.Specs())
	case "text":
		for _, t := range reg.Tools() {
			kind := "action"
			if t.Query {
				kind = "action or mid-turn query"
			}
			fmt.Fprintf(stdout, "%s (%s)\n  %s\n", t.Name, kind, t.Description)
			for _, name := range slices.Sorted(maps.Keys(t.Parameters.Properties)) {
				p := t.Parameters.Properties[name]
				req := ""
				for _, r := range t.Parameters.Required {
					if r == name {
						req = ", required"
					}
				}
				fmt.Fprintf(stdout, "    %-13s %s%s  %s\n", name, p.Type, req, p.Description)
			}
			fmt.Fprintln(stdout)
		}
		return nil
	}
	return fmt.Errorf("tools: unknown format %q (text, json, openai, anthropic, mcp)", *format)
}

// strictUnsupported are keywords OpenAI's strict mode refuses; strictSchema
// moves what they say into the description.
var strictUnsupported = []string{"minLength", "maxLength", "default"}

// strictSchema makes a schema fit OpenAI's strict mode: every object refuses
// additional properties and lists all its properties as required. An optional
// parameter becomes nullable (its type gains "null", its enum gains null) and
// its description says that null means "not given"; agents should drop null
// parameters before sending a decision (sdk/llm does). "default" is not
// supported by strict mode: it moves into the description.
func strictSchema(m map[string]any) map[string]any {
	if items, ok := m["items"].(map[string]any); ok {
		m["items"] = strictSchema(items)
	}
	if m["type"] != "object" {
		return m
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	required := map[string]bool{}
	if rs, ok := m["required"].([]any); ok {
		for _, r := range rs {
			required[r.(string)] = true
		}
	}
	names := []any{}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		names = append(names, name)
		p := strictSchema(props[name].(map[string]any))
		for _, k := range strictUnsupported {
			v, ok := p[k]
			if !ok {
				continue
			}
			delete(p, k)
			desc, _ := p["description"].(string)
			if k == "default" {
				p["description"] = strings.TrimSpace(fmt.Sprintf("%s (default %v)", desc, v))
			} else if !strings.Contains(desc, "characters") {
				p["description"] = strings.TrimSpace(fmt.Sprintf("%s (%s %v characters)", desc, map[string]string{"minLength": "at least", "maxLength": "at most"}[k], v))
			}
		}
		if !required[name] {
			if t, ok := p["type"].(string); ok {
				p["type"] = []any{t, "null"}
			}
			if alts, ok := p["anyOf"].([]any); ok {
				p["anyOf"] = append(alts, map[string]any{"type": "null"})
			}
			if e, ok := p["enum"].([]any); ok {
				p["enum"] = append(e, nil)
			}
			desc, _ := p["description"].(string)
			p["description"] = strings.TrimSpace(desc + " Optional: null when not given.")
		}
		props[name] = p
	}
	m["properties"] = props
	m["required"] = names
	m["additionalProperties"] = false
	return m
}

// openAITools is the registry as strict OpenAI function-calling tools.
func openAITools(reg *tools.Registry) []map[string]any {
	var out []map[string]any
	for _, t := range reg.Tools() {
		out = append(out, map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "strict": true, "parameters": strictSchema(t.Parameters.Map())}})
	}
	return out
}

// anthropicTools is the registry in the Anthropic Messages API's form:
// {name, description, input_schema}.
func anthropicTools(reg *tools.Registry) []map[string]any {
	var out []map[string]any
	for _, t := range reg.Tools() {
		out = append(out, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.Parameters.Map()})
	}
	return out
}

// mcpTools is the result of an MCP tools/list call as `arena mcp` answers
// it, without its observe tool: {"tools": [{name, description, inputSchema,
// annotations, outputSchema}]}. Query tools are marked readOnlyHint.
func mcpTools(reg *tools.Registry) map[string]any {
	return map[string]any{"tools": mcp.Tools(reg.Specs())}
}
