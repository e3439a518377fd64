package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func arena(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestRunWritesResultsAndJournal(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := arena(t, "run", "--scenario", "foraging", "--seed", "1", "--out", dir)
	require.NoError(t, err)
	require.Contains(t, out, "agent_001")
	require.Contains(t, out, "final state hash:")
	require.Contains(t, errOut, "progress: tick", "plain progress lines when not on a terminal")

	var res struct {
		Scenario       string `json:"scenario"`
		Seed           uint64 `json:"seed"`
		Ticks          int    `json:"ticks"`
		FinalStateHash string `json:"final_state_hash"`
		Agents         []struct {
			Score   float64            `json:"score"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"agents"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &res))
	require.Equal(t, "foraging", res.Scenario)
	require.Equal(t, uint64(1), res.Seed)
	require.Len(t, res.FinalStateHash, 16)
	for _, a := range res.Agents {
		require.Positive(t, a.Score)
	}
	st, err := os.Stat(filepath.Join(dir, "replay.jsonl"))
	require.NoError(t, err)
	require.Positive(t, st.Size())

	// The same seed again gives the same file.
	dir2 := t.TempDir()
	_, _, err = arena(t, "run", "--scenario", "foraging", "--seed", "1", "--out", dir2, "--quiet")
	require.NoError(t, err)
	b2, err := os.ReadFile(filepath.Join(dir2, "results.json"))
	require.NoError(t, err)
	require.Equal(t, string(b), string(b2))
}

func TestTicksReplacesTheTimeLimit(t *testing.T) {
	dir := t.TempDir()
	_, _, err := arena(t, "run", "--agents", "16", "--ticks", "700", "--out", dir, "--quiet")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	var res struct {
		Ticks     int
		Objective struct {
			TimeLimit int `json:"time_limit"`
		}
	}
	require.NoError(t, json.Unmarshal(b, &res))
	require.Equal(t, 700, res.Objective.TimeLimit)
	require.LessOrEqual(t, res.Ticks, 700)
	require.Greater(t, res.Ticks, 600, "--ticks above the scenario's limit is honoured")
}

func TestToolsAndScenariosCommands(t *testing.T) {
	out, _, err := arena(t, "tools", "--format", "openai")
	require.NoError(t, err)
	var fns []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &fns))
	require.Len(t, fns, 7)
	for _, f := range fns {
		require.Equal(t, "function", f.Type)
		require.Equal(t, "object", f.Function.Parameters["type"])
	}
	out, _, err = arena(t, "tools")
	require.NoError(t, err)
	require.Contains(t, out, "move_to (action)")
	out, _, err = arena(t, "scenarios")
	require.NoError(t, err)
	require.Contains(t, out, "foraging")
}

func TestErrorsAreOneClearLine(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"fly"}, `unknown command "fly"`},
		{[]string{}, "no command given"},
		{[]string{"run", "--scenario", "nowhere"}, `not a built-in scenario`},
		{[]string{"run", "--agents", "999", "--out", os.TempDir()}, "allows at most 16 agents"},
		{[]string{"run", "--agents", "-1"}, "must not be negative"},
		{[]string{"tools", "--format", "xml"}, `unknown format "xml"`},
	}
	for _, c := range cases {
		_, _, err := arena(t, c.args...)
		require.ErrorContains(t, err, c.msg, "%v", c.args)
		require.NotContains(t, err.Error(), "\n")
	}
}
