package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/arena-sim/arena/mcp"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
)

func cmdScenarios(args []string, stdout io.Writer) error {
	fs := newFlags("scenarios", stdout)
	if err := fs.Parse(args); err != nil {
		return err
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

func cmdTools(args []string, stdout io.Writer) error {
	fs := newFlags("tools", stdout)
	scenario := fs.String("scenario", "foraging", "scenario whose tools to list (components add tools)")
	format := fs.String("format", "text", "text, json (protocol form), openai (strict function-calling form), anthropic (input_schema form) or mcp (tools/list result)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sc, err := scenarios.Load(*scenario)
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
