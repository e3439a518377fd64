package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/arena-sim/arena/internal/testutil"
)

// TestMCPOverStdio plays `arena mcp` over its stdio transport (newline-
// delimited JSON-RPC on stdin and stdout) with the go-sdk client: a greedy
// forager passes foraging seed 1, the files are those of `arena run`, and
// the replay verifies.
func TestMCPOverStdio(t *testing.T) {
	dir := t.TempDir()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		err := cmdMCP(context.Background(), []string{"--scenario", "foraging", "--seed", "1", "--out", dir}, serverIn,
			io.MultiWriter(serverOut, &stdout), &stderr)
		serverOut.Close()
		done <- err
	}()
	client := gomcp.NewClient(&gomcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &gomcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	require.NoError(t, err)
	res := testutil.PlayForagerMCP(t, cs, 400)
	require.True(t, res.Agents[0].Passed)
	require.NoError(t, cs.Close())
	require.NoError(t, <-done)

	// stdout held nothing but JSON-RPC messages.
	for _, line := range bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n")) {
		var m struct {
			JSONRPC string `json:"jsonrpc"`
		}
		require.NoError(t, json.Unmarshal(line, &m), "%s", line)
		require.Equal(t, "2.0", m.JSONRPC)
	}
	require.Contains(t, stderr.String(), "agent_001")
	require.Contains(t, stderr.String(), "ended: completed after")

	b, err := os.ReadFile(filepath.Join(dir, resultsFile))
	require.NoError(t, err)
	var written testutil.MCPResults
	require.NoError(t, json.Unmarshal(b, &written))
	require.Equal(t, res.FinalStateHash, written.FinalStateHash)
	require.Equal(t, res.Ticks, written.Ticks)

	out, _, err := arena(t, "replay", filepath.Join(dir, replayFile), "--verify", "--quiet")
	require.NoError(t, err)
	require.Contains(t, out, "verified: the state hash matches at every one of")
}

// TestMCPStoppedByTheClient: a client that leaves in the middle stops the
// episode, which is written as far as it went and still verifies.
func TestMCPStoppedByTheClient(t *testing.T) {
	dir := t.TempDir()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- cmdMCP(context.Background(), []string{"--out", dir, "--slot", "agent_002"}, serverIn, serverOut, &stderr)
		serverOut.Close()
	}()
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "test", Version: "0"}, nil).
		Connect(context.Background(), &gomcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	require.NoError(t, err)
	for range 5 {
		_, r := testutil.CallMCP(t, cs, "move_to", map[string]any{"target": []float64{10, 0, 0}})
		require.False(t, r.IsError)
	}
	require.NoError(t, cs.Close())
	require.NoError(t, <-done)
	// Five decisions, then the tick at which the world found the client gone.
	require.Contains(t, stderr.String(), "ended: stopped after 6 ticks")
	out, _, err := arena(t, "replay", filepath.Join(dir, replayFile), "--verify", "--quiet")
	require.NoError(t, err)
	require.Contains(t, out, "verified")

	_, _, err = arena(t, "mcp", "--slot", "agent_003", "--out", t.TempDir())
	require.ErrorContains(t, err, `no agent slot "agent_003"`)
}
