package scenarios_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

func TestBuiltinScenariosLoadAndBuild(t *testing.T) {
	require.Contains(t, scenarios.Builtin(), "foraging")
	for _, name := range scenarios.Builtin() {
		sc, err := scenarios.Load(name)
		require.NoError(t, err, name)
		w, err := sc.NewWorld(scenarios.Options{Seed: 1})
		require.NoError(t, err, name)
		require.Len(t, w.Agents(), sc.Agents.Count)
		w, err = sc.NewWorld(scenarios.Options{Seed: 1, Agents: sc.Agents.Max})
		require.NoError(t, err, name)
		require.Len(t, w.Agents(), sc.Agents.Max)
	}
}

func TestForagingMatchesTheBrief(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	require.Equal(t, [2]float64{50, 50}, sc.Size)
	types := map[string]int{}
	for _, r := range sc.Resources {
		types[r.Type]++
	}
	require.GreaterOrEqual(t, len(types), 3, "several resource types")
	hz := map[string]int{}
	for _, h := range sc.Hazards {
		hz[h.Type]++
	}
	require.Positive(t, hz["pit"])
	require.Positive(t, hz["fire"])
	require.Len(t, sc.Stations, 2)
	ob := map[string]int{}
	for _, o := range sc.Obstacles {
		ob[o.Type]++
	}
	require.Positive(t, ob["tree"])
	require.Positive(t, ob["rock"])
	require.NotEmpty(t, sc.Objective.SuccessMetrics)
}

func TestAgentsBeyondMaxAreRefused(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	_, err = sc.Config(scenarios.Options{Agents: sc.Agents.Max + 1})
	require.ErrorContains(t, err, "allows at most")
}

const valid = `{"name": "t", "size": [20, 20],
 "resources": [{"name": "B1", "type": "berry", "position": [1, 0, 1]}],
 "stations": [{"name": "W1", "type": "workbench", "position": [2, 2]}],
 "recipes": [{"output": "meal", "inputs": {"berry": 2}, "station_type": "workbench"}],
 "obstacles": [{"name": "T1", "type": "tree", "position": [5, 0, 5], "radius": 1}],
 "agents": {"count": 1}}`

func TestValidationErrorsNameFileFieldAndProblem(t *testing.T) {
	_, err := scenarios.Parse("ok.json", []byte(valid))
	require.NoError(t, err)
	cases := []struct {
		name string
		edit func(string) string
		want []string
	}{
		{"syntax", func(s string) string { return strings.Replace(s, `"size"`, `size`, 1) }, []string{"bad.json", "invalid JSON at line 1"}},
		{"unknown field", func(s string) string { return strings.Replace(s, `"size"`, `"sise"`, 1) }, []string{"bad.json", `unknown field "sise"`}},
		{"wrong type", func(s string) string { return strings.Replace(s, `"radius": 1`, `"radius": "big"`, 1) }, []string{"bad.json", "obstacles.radius", "must be a number, got JSON string (line 5)"}},
		{"outside", func(s string) string { return strings.Replace(s, `[1, 0, 1]`, `[80, 0, 1]`, 1) }, []string{"bad.json: resources[0].position", "outside the world"}},
		{"inside obstacle", func(s string) string { return strings.Replace(s, `[1, 0, 1]`, `[5, 0, 5.5]`, 1) }, []string{"resources[0].position", `inside obstacle "T1"`}},
		{"duplicate", func(s string) string { return strings.Replace(s, `"name": "W1"`, `"name": "B1"`, 1) }, []string{"resources[0].name", `"B1" is already used by stations[0]`}},
		{"position length", func(s string) string { return strings.Replace(s, `[2, 2]`, `[2]`, 1) }, []string{"stations[0].position", "got 1 numbers"}},
		{"no station type", func(s string) string {
			return strings.Replace(s, `"station_type": "workbench"`, `"station_type": "forge"`, 1)
		}, []string{"recipes[0].station_type", "can never be crafted"}},
		{"bad size", func(s string) string { return strings.Replace(s, `[20, 20]`, `[20, -1]`, 1) }, []string{"size", "positive"}},
		{"no name", func(s string) string { return strings.Replace(s, `"name": "t", `, ``, 1) }, []string{"name: is required"}},
		{"negative radius", func(s string) string { return strings.Replace(s, `"radius": 1`, `"radius": -1`, 1) }, []string{"obstacles[0].radius", "must be between 0.05 and 20"}},
		{"bad metric", func(s string) string {
			return strings.Replace(s, `"agents"`, `"objective": {"success_metrics": {"joy": {"target": 1}}}, "agents"`, 1)
		}, []string{"objective.success_metrics.joy", "unknown metric"}},
		{"drop probability", func(s string) string {
			return strings.Replace(s, `"agents"`, `"rules": {"message_drop_probability": 2}, "agents"`, 1)
		}, []string{"rules.message_drop_probability", "between 0 and 1"}},
		{"trailing data", func(s string) string { return s + ` {}` }, []string{"unexpected data after"}},
		{"not an object", func(string) string { return `[1, 2]` }, []string{"holds one JSON object, got JSON array"}},
		{"huge obstacle", func(s string) string { return strings.Replace(s, `"radius": 1`, `"radius": 1e10`, 1) }, []string{"obstacles[0].radius", "must be between 0.05 and 20"}},
		{"huge damage", func(s string) string {
			return strings.Replace(s, `"agents"`, `"hazards": [{"name": "P", "position": [3, 3], "radius": 1, "entry_damage": 1e308}], "agents"`, 1)
		}, []string{"hazards[0]", "between 0 and 1e+06"}},
		{"wild terrain", func(s string) string {
			return strings.Replace(s, `"agents"`, `"terrain": {"heights": [[1e308, 0], [0, -1e308]]}, "agents"`, 1)
		}, []string{"terrain.heights[0]", "heights must be between"}},
		{"tiny tick rate", func(s string) string { return strings.Replace(s, `"size"`, `"tick_rate": 1e-300, "size"`, 1) }, []string{"tick_rate", "between 0.1 and 1000"}},
		{"query radius above max", func(s string) string {
			return strings.Replace(s, `"agents"`, `"rules": {"query_radius": 30, "max_query_radius": 10}, "agents"`, 1)
		}, []string{"rules.query_radius", "larger than max_query_radius"}},
		{"coarse cells", func(s string) string { return strings.Replace(s, `"size"`, `"cell_size": 8, "size"`, 1) }, []string{"cell_size", "too coarse"}},
		{"station amount", func(s string) string {
			return strings.Replace(s, `"position": [2, 2]`, `"position": [2, 2], "amount": 3`, 1)
		}, []string{`unknown field "amount"`}},
		{"unknown bot", func(s string) string { return strings.Replace(s, `{"count": 1}`, `{"count": 1, "bot": "wizard"}`, 1) }, []string{"agents.bot", `unknown built-in bot "wizard"`}},
		{"unknown component", func(s string) string {
			return strings.Replace(s, `"agents"`, `"components": [{"type": "casino"}], "agents"`, 1)
		}, []string{"components[0]", `unknown component "casino"`}},
		{"bad variable", func(s string) string {
			return strings.Replace(s, `"agents"`, `"variables": {"rates": [1, 2]}, "agents"`, 1)
		}, []string{"variables.rates", "number, text or a boolean"}},
		{"schedule past the end", func(s string) string {
			return strings.Replace(s, `"agents"`, `"schedule": [{"tick": 99999, "type": "news"}, {"tick": 3}], "agents"`, 1)
		}, []string{"schedule[0].tick", "schedule[1].type: is required"}},
		{"two problems", func(s string) string {
			return strings.Replace(strings.Replace(s, `[1, 0, 1]`, `[80, 0, 1]`, 1), `"radius": 1`, `"radius": -1`, 1)
		}, []string{"bad.json: obstacles[0].radius: must be between 0.05", "(and 1 more: resources[0].position: (80, 1) is outside the world"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenarios.Parse("bad.json", []byte(tc.edit(valid)))
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestLoadUserFileAndUnknownName(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mine.json")
	require.NoError(t, os.WriteFile(p, []byte(valid), 0o644))
	sc, err := scenarios.Load(p)
	require.NoError(t, err)
	require.Equal(t, "t", sc.Name)
	y := filepath.Join(dir, "mine.yaml")
	require.NoError(t, os.WriteFile(y, []byte("name: t\n"), 0o644))
	_, err = scenarios.Load(y)
	require.ErrorContains(t, err, "scenario files are JSON")
	require.NoError(t, os.WriteFile(y, []byte(valid), 0o644))
	_, err = scenarios.Load(y)
	require.NoError(t, err, "JSON is YAML: a .yaml file written in JSON loads")
	_, err = scenarios.Load("no-such-scenario")
	require.ErrorContains(t, err, "not a built-in scenario ("+strings.Join(scenarios.Builtin(), ", ")+") and no such file")
	require.Subset(t, scenarios.Builtin(), []string{"crafting", "economy", "foraging", "market", "team_capture"})
}

func TestSameSeedSameSpawns(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	a, err := sc.Config(scenarios.Options{Seed: 3, Agents: 10})
	require.NoError(t, err)
	b, err := sc.Config(scenarios.Options{Seed: 3, Agents: 10})
	require.NoError(t, err)
	c, err := sc.Config(scenarios.Options{Seed: 4, Agents: 10})
	require.NoError(t, err)
	require.Equal(t, a.Agents, b.Agents)
	require.NotEqual(t, a.Agents[9], c.Agents[9])
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	data, err := os.ReadFile("builtin/foraging.json")
	require.NoError(f, err)
	f.Add(data)
	f.Add([]byte(`{"name":"x","size":[1e308,1e308]}`))
	f.Add([]byte(`{"name":"x","size":[10,10],"cell_size":0.05,"agents":{"count":3,"max":2}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		timer := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("slow input: %q", b)) })
		defer timer.Stop()
		sc, err := scenarios.Parse("fuzz.json", b)
		if err != nil {
			return
		}
		// A scenario that validates must build, or fail with an error: never
		// panic. Large worlds are valid but too slow to build for every input.
		if sc.Size[0]*sc.Size[1]/(sc.CellSize*sc.CellSize) > 256*256 || sc.Bounds != nil || sc.Agents.Count > 64 {
			return
		}
		if w, err := sc.NewWorld(scenarios.Options{Seed: 1}); err == nil {
			w.Step()
		}
	})
}
