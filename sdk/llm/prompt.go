package llm

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/world"
)

const defaultIntro = `You are an agent in Arena, a simulated world. Each turn you receive an observation and choose exactly one action.`

func (a *Agent) systemPrompt() string {
	var b strings.Builder
	intro := a.opt.System
	if intro == "" {
		intro = defaultIntro
	}
	b.WriteString(intro)
	if sc := strings.TrimSpace(a.opt.Scenario); sc != "" {
		b.WriteString("\n\n## Scenario\n" + sc)
	}
	b.WriteString("\n\n## Available Tools\n")
	for _, s := range a.opt.Tools {
		kind := "action"
		if s.Query {
			kind = "query: answered at once, does not end your turn"
		}
		fmt.Fprintf(&b, "- **%s** (%s): %s\n", s.Name, kind, s.Description)
		if s.Parameters != nil {
			for _, name := range slices.Sorted(maps.Keys(s.Parameters.Properties)) {
				p := s.Parameters.Properties[name]
				req := "optional"
				if slices.Contains(s.Parameters.Required, name) {
					req = "required"
				}
				fmt.Fprintf(&b, "  - %s (%s) (%s) - %s\n", name, p.Type, req, p.Description)
			}
		}
	}
	fmt.Fprintf(&b, "\nYou may use up to %d query tools per turn. ", a.opt.ToolCallLimit)
	if a.opt.XML {
		b.WriteString(`Call a tool by writing its XML tag in your text: <tool_name>argument</tool_name>, or <tool_name /> when it takes no argument. ` +
			`The argument is plain text for a tool with one parameter, otherwise a JSON object of parameters. ` +
			`After a query tag, stop: the result comes back as <observation>...</observation> and you continue. ` +
			`Your first action tag ends your turn. If you write no tag you stay idle.`)
	} else {
		b.WriteString("Call query tools as needed, then call exactly one action tool; that ends your turn. If you call no tool you stay idle.")
	}
	return b.String()
}

// ObservationText renders an observation compactly for a language model:
// the agent, the objective, its last action's result, what components show,
// a spatial summary, messages and events.
func ObservationText(o *sdk.Observation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Tick %d — you are %s", o.Tick, o.AgentID)
	if o.Team != "" {
		fmt.Fprintf(&b, " (team %s)", o.Team)
	}
	fmt.Fprintf(&b, "\nposition (%.1f, %.1f, %.1f), health %.0f/%.0f, score %.2f\n", o.Position[0], o.Position[1], o.Position[2], o.Health, o.MaxHealth, o.Score)
	if o.Objective != nil && o.Objective.Description != "" {
		fmt.Fprintf(&b, "objective: %s\n", o.Objective.Description)
	}
	if len(o.Inventory) > 0 {
		fmt.Fprintf(&b, "inventory (%d/%d): %s\n", o.InventoryUsed, o.InventoryCap, compactJSON(o.Inventory))
	}
	if o.CurrentAction.Tool != "" {
		fmt.Fprintf(&b, "current action: %s\n", compactJSON(o.CurrentAction))
	}
	if r := o.LastActionResult; r != nil {
		if r.Success {
			fmt.Fprintf(&b, "last action: %s succeeded %s\n", r.Tool, compactJSON(r.Data))
		} else {
			fmt.Fprintf(&b, "last action: %s failed: %s %s\n", r.Tool, r.ErrorCode, r.ErrorMessage)
		}
	}
	if o.VariablesText != "" {
		fmt.Fprintf(&b, "\n## Scenario\n%s\n", o.VariablesText)
	}
	for _, name := range slices.Sorted(maps.Keys(o.Components)) {
		fmt.Fprintf(&b, "\n## %s\n%s\n", name, sectionText(o.Components[name]))
	}
	nearby := func(label string, es []world.EntityView, more int) {
		if len(es) == 0 {
			return
		}
		var parts []string
		for i, e := range es {
			if i == 12 {
				more += len(es) - i
				break
			}
			kind := e.ResourceType + e.StationType + e.HazardType + e.ObstacleType
			if kind != "" {
				kind = " " + kind
			}
			// The ground is the x-z plane (y is up): give the whole position,
			// in the form move_to takes.
			parts = append(parts, fmt.Sprintf("%s%s at [%g, %g, %g] d=%.1f", e.Name, kind, e.Position[0], e.Position[1], e.Position[2], e.Distance))
		}
		if more > 0 {
			parts = append(parts, fmt.Sprintf("… %d more", more))
		}
		fmt.Fprintf(&b, "%s: %s\n", label, strings.Join(parts, "; "))
	}
	if len(o.NearbyResources)+len(o.NearbyHazards)+len(o.NearbyStations)+len(o.NearbyAgents)+len(o.CapturePoints) > 0 {
		b.WriteString("\n## Nearby\n")
		nearby("resources", o.NearbyResources, 0)
		nearby("hazards", o.NearbyHazards, 0)
		nearby("stations", o.NearbyStations, 0)
		nearby("agents", o.NearbyAgents, o.NearbyAgentsMore)
		nearby("capture points", o.CapturePoints, 0)
		nearby("teammates", o.Teammates, 0)
	}
	if len(o.Messages) > 0 {
		b.WriteString("\n## Messages\n")
		for _, m := range o.Messages {
			fmt.Fprintf(&b, "[%d] %s → %s: %s\n", m.Tick, m.From, m.To, m.Content)
		}
	}
	if len(o.Events) > 0 {
		b.WriteString("\n## Events\n")
		for _, e := range o.Events {
			fmt.Fprintf(&b, "[%d] %s/%s: %s\n", e.Tick, e.Source, e.Type, e.Text)
		}
	}
	return b.String()
}

// observationPrompt renders an observation compactly (ObservationText), then
// memory and recent actions.
func (a *Agent) observationPrompt(o *sdk.Observation) string {
	var b strings.Builder
	b.WriteString(ObservationText(o))
	a.mu.Lock()
	mem, hist := slices.Clone(a.memory), slices.Clone(a.history)
	a.mu.Unlock()
	if len(mem) > 0 {
		b.WriteString("\n## Knowledge (permanent results of your earlier queries)\n")
		for _, m := range mem {
			fmt.Fprintf(&b, "- %s\n", m.Text)
		}
	}
	if len(hist) > 0 {
		b.WriteString("\n## Your recent actions\n")
		for _, h := range hist {
			fmt.Fprintf(&b, "- %s\n", h)
		}
	}
	b.WriteString("\nChoose your action.")
	return b.String()
}

// sectionText shows a component's section: its "text" when it has one (a
// rendering meant for models), else its fields as JSON.
func sectionText(s world.Section) string {
	if t, ok := s["text"].(string); ok && t != "" {
		return t
	}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		lines = append(lines, fmt.Sprintf("%s: %s", k, compactJSON(s[k])))
	}
	return strings.Join(lines, "\n")
}
