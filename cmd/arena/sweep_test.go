package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

// scenarioWithVariables writes foraging with two declared variables.
func scenarioWithVariables(t *testing.T) string {
	t.Helper()
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(sc.Raw, &m))
	m["variables"] = map[string]any{"rain": 0, "mood": "calm"}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "weather.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func TestSweepPointsAreTheCartesianProduct(t *testing.T) {
	points, err := sweepPoints([]string{"rain=0,0.5", "mood=calm,wild,true"})
	require.NoError(t, err)
	var labels []string
	for _, p := range points {
		labels = append(labels, p.label())
	}
	require.Equal(t, []string{"rain=0,mood=calm", "rain=0,mood=wild", "rain=0,mood=true",
		"rain=0.5,mood=calm", "rain=0.5,mood=wild", "rain=0.5,mood=true"}, labels)
	require.Equal(t, 0.5, points[3].values["rain"])
	require.Equal(t, true, points[2].values["mood"])
	for _, bad := range [][]string{{"rain"}, {"=1,2"}, {"rain="}, {"rain=1", "rain=2"}} {
		_, err := sweepPoints(bad)
		require.Error(t, err, "%v", bad)
	}
}

func TestEvalSweepsVariables(t *testing.T) {
	file := scenarioWithVariables(t)
	dir := t.TempDir()
	out, _, err := arena(t, "eval", "--scenario", file, "--episodes", "2", "--ticks", "40", "--vary", "rain=0,1",
		"--vary", "mood=calm,wild", "--replays", "--plots=false", "--out", dir)
	require.NoError(t, err)
	require.Contains(t, out, "rain=1,mood=wild")
	b, err := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 5, "a header and four points")
	require.True(t, strings.HasPrefix(lines[0], "rain,mood,episodes,pass_rate,score_mean"), lines[0])
	require.True(t, strings.HasPrefix(lines[4], "1,wild,2,"), lines[4])

	// The point's replays carry the swept values and verify.
	replay := filepath.Join(dir, "vary-rain=1,mood=wild", "episode-0002", replayFile)
	rep := readReplay(t, replay)
	require.Equal(t, map[string]any{"rain": 1.0, "mood": "wild"}, rep.Header.Variables)
	_, _, err = arena(t, "replay", replay, "--verify", "--quiet")
	require.NoError(t, err)

	_, _, err = arena(t, "eval", "--scenario", file, "--episodes", "1", "--vary", "snow=1,2", "--out", t.TempDir())
	require.ErrorContains(t, err, `has no variable "snow"; it has: mood, rain`)
}
