package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arena-sim/arena/scenarios"
)

func TestToolsFormats(t *testing.T) {
	out, _, err := arena(t, "tools", "--scenario", "foraging", "--format", "openai")
	if err != nil {
		t.Fatal(err)
	}
	var fns []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Strict     bool           `json:"strict"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal([]byte(out), &fns); err != nil || len(fns) == 0 {
		t.Fatalf("openai: %v\n%s", err, out)
	}
	var check func(name string, s map[string]any)
	check = func(name string, s map[string]any) {
		if items, ok := s["items"].(map[string]any); ok {
			check(name, items)
		}
		if s["type"] != "object" {
			return
		}
		if s["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties %v", name, s["additionalProperties"])
		}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		if len(req) != len(props) {
			t.Errorf("%s: required %v, properties %d", name, req, len(props))
		}
		for k, p := range props {
			if !slices.Contains(req, any(k)) {
				t.Errorf("%s: %s not required", name, k)
			}
			if _, ok := p.(map[string]any)["default"]; ok {
				t.Errorf("%s.%s: default left in strict schema", name, k)
			}
			check(name+"."+k, p.(map[string]any))
		}
	}
	nullable := false
	for _, f := range fns {
		if f.Type != "function" || !f.Function.Strict {
			t.Errorf("%s: not strict", f.Function.Name)
		}
		check(f.Function.Name, f.Function.Parameters)
		for _, p := range f.Function.Parameters["properties"].(map[string]any) {
			if ty, ok := p.(map[string]any)["type"].([]any); ok && slices.Contains(ty, any("null")) {
				nullable = true
			}
		}
	}
	if !nullable {
		t.Error("no optional parameter became nullable")
	}

	out, _, err = arena(t, "tools", "--format", "anthropic")
	if err != nil {
		t.Fatal(err)
	}
	var an []map[string]any
	if err := json.Unmarshal([]byte(out), &an); err != nil || len(an) != len(fns) {
		t.Fatalf("anthropic: %v", err)
	}
	for _, a := range an {
		s, ok := a["input_schema"].(map[string]any)
		if !ok || s["type"] != "object" || a["name"] == "" || a["description"] == "" {
			t.Errorf("anthropic tool %v", a)
		}
	}

	out, _, err = arena(t, "tools", "--format", "mcp")
	if err != nil {
		t.Fatal(err)
	}
	var mcp struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
			Annotations map[string]any `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &mcp); err != nil || len(mcp.Tools) != len(fns) {
		t.Fatalf("mcp: %v", err)
	}
	ro := 0
	for _, m := range mcp.Tools {
		if m.InputSchema["type"] != "object" || m.InputSchema["properties"] == nil {
			t.Errorf("mcp %s: %v", m.Name, m.InputSchema)
		}
		if m.Annotations["readOnlyHint"] == true {
			ro++
		}
	}
	if ro == 0 {
		t.Error("no query tool marked read-only")
	}
	if _, _, err := arena(t, "tools", "--format", "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestScenariosJSON checks what environments read before they start a server:
// the slot ids for a number of agents, the vocabularies and the tools.
func TestScenariosJSON(t *testing.T) {
	out, _, err := arena(t, "scenarios", "--format", "json", "--scenario", "team_capture", "--agents", "6")
	require.NoError(t, err)
	var tc scenarioInfo
	require.NoError(t, json.Unmarshal([]byte(out), &tc))
	require.Equal(t, []string{"red_1", "blue_1", "red_2", "blue_2", "red_3", "blue_3"}, tc.AgentIDs)
	require.Equal(t, "blue", tc.AgentTeams["blue_3"])
	require.Equal(t, []string{"PointA", "PointB", "PointC", "PointD", "PointE"}, tc.CapturePoints)
	require.Equal(t, 15.0, tc.Rules.PerceptionRadius)
	require.Equal(t, [2]float64{0.2, 3.7}, tc.HeightRange)

	out, _, err = arena(t, "scenarios", "--format", "json")
	require.NoError(t, err)
	var all []scenarioInfo
	require.NoError(t, json.Unmarshal([]byte(out), &all))
	byName := map[string]scenarioInfo{}
	for _, s := range all {
		require.Len(t, s.AgentIDs, s.AgentCount, s.Name)
		require.NotEmpty(t, s.Tools, s.Name)
		byName[s.Name] = s
	}
	require.Len(t, all, len(scenarios.Builtin()))
	f := byName["foraging"]
	require.Equal(t, []string{"agent_001", "agent_002"}, f.AgentIDs)
	require.Equal(t, []string{"berry", "meal", "mushroom", "shelter", "stone", "torch", "wood"}, f.Items)
	require.Equal(t, []string{"berry", "mushroom", "stone", "wood"}, f.ResourceTypes)
	require.Equal(t, []string{"anvil", "workbench"}, f.StationTypes)
	require.Equal(t, []string{"meal", "shelter", "torch"}, f.Recipes)
	require.Equal(t, 600, f.TimeLimit)
	require.Equal(t, [4]float64{-25, -25, 25, 25}, f.Bounds)
	require.Equal(t, []string{"economy", "market", "social"}, sortedCopy(byName["town_square"].Components))

	_, _, err = arena(t, "scenarios", "--format", "yaml")
	require.ErrorContains(t, err, `unknown --format "yaml"`)
	_, _, err = arena(t, "scenarios", "--format", "json", "--scenario", "foraging", "--agents", "17")
	require.ErrorContains(t, err, "at most 16 agents")
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }
