package scenarios_test

import (
	"strings"
	"testing"

	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func TestTeamCaptureMatchesTheBrief(t *testing.T) {
	sc, err := scenarios.Load("team_capture")
	require.NoError(t, err)
	require.Len(t, sc.Points, 5)
	for _, p := range sc.Points {
		require.Equal(t, 3.0, p.Radius, p.Name)
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	rules, ok := w.CaptureRules()
	require.True(t, ok)
	require.Equal(t, world.CaptureRules{CaptureTicks: 50, PointsPerCapture: 10, PointsPerHoldTick: 1, WinScore: 100}, rules)
	require.Equal(t, 1800, w.Objective().TimeLimit)
	require.True(t, w.Objective().SuccessMetrics["team_captures"].Required)

	// 2 v 2 by default; up to 8 v 8, red on the west side and blue on the east.
	require.Equal(t, []string{"red_1", "blue_1", "red_2", "blue_2"}, sc.AgentIDs(0))
	for _, n := range []int{2, 4, 6, 16} {
		cfg, err := sc.Config(scenarios.Options{Seed: 1, Agents: n})
		require.NoError(t, err, n)
		teams := map[string]int{}
		for _, a := range cfg.Agents {
			teams[a.Team]++
			require.Equal(t, a.Team == "red", a.X < -20, "%s spawns on its team's side", a.ID)
			require.Equal(t, a.Team == "blue", a.X > 20, "%s spawns on its team's side", a.ID)
			require.True(t, strings.HasPrefix(a.ID, a.Team+"_"), a.ID)
		}
		require.Equal(t, map[string]int{"red": n / 2, "blue": n / 2}, teams)
	}
	_, err = sc.Config(scenarios.Options{Seed: 1, Agents: 5})
	require.EqualError(t, err, "scenario team_capture plays teams of equal size: 5 agents cannot be split evenly between 2 teams (red, blue); use a multiple of 2, at most 16")
	_, err = sc.Config(scenarios.Options{Seed: 1, Agents: 18})
	require.EqualError(t, err, "scenario team_capture allows at most 16 agents, 18 requested")
}

const validCapture = `{"name": "c", "size": [40, 40],
 "capture_points": [{"name": "P1", "position": [0, 0]}],
 "capture": {"capture_ticks": 20},
 "agents": {"count": 2, "max": 4, "teams": ["red", "blue"], "team_ids": true,
  "team_spawn_areas": {"red": {"min": [-18, -2], "max": [-16, 2]}, "blue": {"min": [16, -2], "max": [18, 2]}}},
 "objective": {"success_metrics": {"team_score": {"target": 50}, "won": {"target": 1, "required": true}}}}`

func TestCaptureSectionValidation(t *testing.T) {
	sc, err := scenarios.Parse("ok.json", []byte(validCapture))
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 2})
	require.NoError(t, err)
	rules, _ := w.CaptureRules()
	require.Equal(t, 20, rules.CaptureTicks)
	require.Equal(t, "red_1", w.Agents()[0].ID)
	require.Equal(t, "blue", w.Agents()[1].Team)

	cases := []struct {
		name string
		edit func(string) string
		want string
	}{
		{"negative capture ticks", func(s string) string { return strings.Replace(s, `"capture_ticks": 20`, `"capture_ticks": -1`, 1) },
			"capture.capture_ticks: must be between 0 and 1e+06, got -1"},
		{"huge win score", func(s string) string { return strings.Replace(s, `"capture_ticks": 20`, `"win_score": 2000000`, 1) },
			"capture.win_score: must be between 0 and 1e+06"},
		{"no capture points", func(s string) string {
			return strings.Replace(s, `"capture_points": [{"name": "P1", "position": [0, 0]}],`, ``, 1)
		}, "capture: a capture game needs at least one entry in capture_points"},
		{"one team", func(s string) string {
			return strings.Replace(strings.Replace(s, `["red", "blue"]`, `["red"]`, 1), `, "blue": {"min": [16, -2], "max": [18, 2]}`, ``, 1)
		}, "agents.teams: a capture game needs at least two teams"},
		{"unequal teams", func(s string) string { return strings.Replace(s, `"count": 2, "max": 4`, `"count": 3, "max": 4`, 1) },
			"agents: a capture game plays teams of equal size: count 3 and max 4 must be multiples of the 2 teams"},
		{"duplicate team", func(s string) string { return strings.Replace(s, `["red", "blue"]`, `["red", "red"]`, 1) },
			`agents.teams[1]: team names must be unique and not empty, got "red"`},
		{"spawn area of an unknown team", func(s string) string { return strings.Replace(s, `"blue": {"min"`, `"green": {"min"`, 1) },
			`agents.team_spawn_areas.green: "green" is not one of agents.teams (red, blue)`},
		{"spawn area outside", func(s string) string {
			return strings.Replace(s, `[16, -2], "max": [18, 2]`, `[16, -2], "max": [30, 2]`, 1)
		},
			"agents.team_spawn_areas.blue: must be a non-empty rectangle inside the world"},
		{"capture metric without a capture game", func(s string) string {
			return strings.Replace(s, `"capture": {"capture_ticks": 20},`, ``, 1)
		}, "objective.success_metrics.team_score: is a capture game metric: the scenario needs a capture section"},
		{"team ids without teams", func(string) string {
			return `{"name": "c", "size": [40, 40], "agents": {"team_ids": true}}`
		}, "agents.team_ids: needs agents.teams"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenarios.Parse("bad.json", []byte(tc.edit(validCapture)))
			require.Error(t, err)
			require.Contains(t, err.Error(), "bad.json: "+tc.want)
		})
	}
}
