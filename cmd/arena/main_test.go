package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// Without --seed, serve draws fresh seeds (public and secret) every time and
// records them for the operator; the spectator token is printed once and
// kept beside the results, readable by the operator alone.
func TestServeDrawsFreshSeedsAndASpectatorToken(t *testing.T) {
	type seeds struct {
		Seed       uint64 `json:"seed"`
		SecretSeed uint64 `json:"secret_seed"`
	}
	var got []seeds
	for i := 0; i < 2; i++ {
		dir := t.TempDir()
		out, _, err := arena(t, "serve", "--scenario", "role_game", "--bots", "9", "--listen", "unix:"+filepath.Join(dir, "a.sock"), "--out", dir)
		require.NoError(t, err)
		var s seeds
		b, err := os.ReadFile(filepath.Join(dir, "results.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &s))
		require.NotZero(t, s.Seed)
		require.NotZero(t, s.SecretSeed)
		got = append(got, s)

		token, err := os.ReadFile(filepath.Join(dir, "spectator.token"))
		require.NoError(t, err)
		require.Len(t, strings.TrimSpace(string(token)), 32)
		require.Contains(t, out, "spectator token: "+strings.TrimSpace(string(token)))
		st, err := os.Stat(filepath.Join(dir, "spectator.token"))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	}
	require.NotEqual(t, got[0].Seed, got[1].Seed, "a fresh seed each time, not 1")
	require.NotEqual(t, got[0].SecretSeed, got[1].SecretSeed)

	// Open spectators: no token is made.
	dir := t.TempDir()
	out, _, err := arena(t, "serve", "--scenario", "role_game", "--bots", "9", "--seed", "4", "--spectators", "open",
		"--listen", "unix:"+filepath.Join(dir, "a.sock"), "--out", dir)
	require.NoError(t, err)
	require.NotContains(t, out, "spectator token")
	_, err = os.Stat(filepath.Join(dir, "spectator.token"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
