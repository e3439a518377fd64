package sdk_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/sdk"
	"github.com/stretchr/testify/require"
)

func build(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

type results struct {
	FinalStateHash string            `json:"final_state_hash"`
	Ticks          int               `json:"ticks"`
	Agents         []json.RawMessage `json:"agents"`
}

func readResults(t *testing.T, path string) results {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var r results
	require.NoError(t, json.Unmarshal(b, &r))
	return r
}

// TestServeMatchesRunAcrossProcesses starts `arena serve` as a real process with
// a Unix and a TCP listener, connects two SDK foragers as their own processes
// (one on each), and checks that the episode's results equal an in-process
// `arena run` with the same seed and agents.
func TestServeMatchesRunAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := t.TempDir()
	arena := build(t, dir, "./cmd/arena", "arena")
	forager := build(t, dir, "./sdk/examples/forager", "forager")
	sock := filepath.Join(dir, "arena.sock")

	// Find a free loopback port for TCP.
	l, err := ipc.Listen(context.Background(), "tcp::0")
	require.NoError(t, err)
	port := l.Addr().String()
	l.Close()

	serveOut := filepath.Join(dir, "serve")
	srv := exec.Command(arena, "serve", "--scenario", "foraging", "--seed", "4", "--listen", "unix:"+sock,
		"--listen", "tcp:"+port, "--decision-timeout", "10s", "--out", serveOut)
	srv.Stderr = os.Stderr
	require.NoError(t, srv.Start())
	t.Cleanup(func() { srv.Process.Kill() })

	waitFor := func(addr string) {
		for i := 0; i < 200; i++ {
			if nc, err := ipc.Dial(context.Background(), addr); err == nil {
				nc.Close()
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("server not listening on %s", addr)
	}
	waitFor("unix:" + sock)
	// The probe connections above never said hello; the server drops them.
	var agents []*exec.Cmd
	for _, addr := range []string{"unix:" + sock, "tcp:" + port} {
		a := exec.Command(forager, "--addr", addr)
		a.Stderr = os.Stderr
		require.NoError(t, a.Start())
		agents = append(agents, a)
	}
	for _, a := range agents {
		require.NoError(t, a.Wait())
	}
	require.NoError(t, srv.Wait())

	runOut := filepath.Join(dir, "run")
	out, err := exec.Command(arena, "run", "--scenario", "foraging", "--seed", "4", "--out", runOut, "--quiet").CombinedOutput()
	require.NoError(t, err, "%s", out)

	served, local := readResults(t, filepath.Join(serveOut, "results.json")), readResults(t, filepath.Join(runOut, "results.json"))
	require.Equal(t, local.FinalStateHash, served.FinalStateHash)
	require.Equal(t, local.Ticks, served.Ticks)
	require.Equal(t, local.Agents, served.Agents)
}

func TestConnectReportsRefusals(t *testing.T) {
	_, err := sdk.Connect(context.Background(), "unix:"+filepath.Join(t.TempDir(), "none.sock"), sdk.Options{})
	require.ErrorContains(t, err, "dial")
}

// TestServeStopsCleanlyOnInterrupt stops `arena serve` with SIGINT (Ctrl-C)
// in the middle of an episode: the tick under way finishes, the agent is told
// the episode ended ("stopped"), and the results and a replay that verifies
// are written. (SIGTERM drains instead: the episode under way finishes; see
// cmd/arena's drain tests.)
func TestServeStopsCleanlyOnInterrupt(t *testing.T) {
	dir := t.TempDir()
	arena := build(t, dir, "./cmd/arena", "arena")
	sock := filepath.Join(dir, "arena.sock")
	out := filepath.Join(dir, "out")
	srv := exec.Command(arena, "serve", "--scenario", "foraging", "--agents", "1", "--listen", "unix:"+sock, "--out", out)
	srv.Stderr = os.Stderr
	require.NoError(t, srv.Start())
	t.Cleanup(func() { srv.Process.Kill() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var c *sdk.Client
	var err error
	for i := 0; i < 200; i++ {
		if c, err = sdk.Connect(ctx, "unix:"+sock, sdk.Options{MaxReconnects: -1}); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	require.NoError(t, err)
	decided := 0
	end, err := c.Run(ctx, sdk.AgentFunc(func(_ context.Context, obs *sdk.Observation) sdk.Decision {
		if decided++; decided == 5 {
			require.NoError(t, srv.Process.Signal(os.Interrupt))
		}
		return sdk.Idle()
	}))
	require.NoError(t, err)
	require.Equal(t, "stopped", end.Reason)
	require.True(t, end.Final)
	require.NoError(t, srv.Wait(), "a stopped server exits cleanly")

	var res struct {
		EndReason string `json:"end_reason"`
		Ticks     int    `json:"ticks"`
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &res))
	require.Equal(t, "stopped", res.EndReason)
	require.GreaterOrEqual(t, res.Ticks, 5)
	verify, err := exec.Command(arena, "replay", filepath.Join(out, "replay.jsonl"), "--verify", "--quiet").CombinedOutput()
	require.NoError(t, err, "%s", verify)
}
