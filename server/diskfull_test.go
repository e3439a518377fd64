package server_test

import (
	"bytes"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/server"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// fullDisk journals episodes into dir on a disk that fills up: once the
// journal has begun, writing past limit bytes fails (a file size limit,
// with SIGXFSZ ignored: EFBIG, as ENOSPC would).
type fullDisk struct {
	t     *testing.T
	dir   string
	limit uint64
}

func (d *fullDisk) Begin(ep int, w *world.World) (*engine.Journal, error) {
	var ids []string
	for _, a := range w.Agents() {
		ids = append(ids, a.ID)
	}
	j, err := engine.CreateJournal(filepath.Join(d.dir, "replay.jsonl"), engine.JournalHeader{Scenario: w.Name(), Seed: w.Seed(),
		Episode: ep, Agents: ids, TimeLimit: w.Objective().TimeLimit, DecisionPeriod: 1, InitialHash: world.FormatHash(w.StateHash())})
	if err != nil {
		return nil, err
	}
	var lim syscall.Rlimit
	require.NoError(d.t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim))
	old := lim
	d.t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) })
	lim.Cur = d.limit
	require.NoError(d.t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim))
	return j, nil
}

func (d *fullDisk) End(_ int, _ *world.World, j *engine.Journal, _ *engine.Results, _ error) error {
	return j.Close()
}

// Fixed (server/server.go, abort): when the disk filled up during serve,
// the server exited and its agents only saw the connection close. Each
// session is now told: an episode_end with reason "error", then the fatal
// SERVER_ERROR. The journal ends with its last complete tick, and
// re-simulates to the same state hashes.
func TestAFullDiskEndsTheEpisodeWithAnErrorEveryoneIsTold(t *testing.T) {
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	dir := t.TempDir()
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	addr, l := listen(t)
	done, _ := serveOn(t, sc, server.Options{Seed: 1, Agents: 1, Ticks: 1000, DecisionTimeout: 5 * time.Second,
		Recorder: &fullDisk{t: t, dir: dir, limit: 20_000}}, l)
	agent := newHandAgent(t, addr, "agent_001", "")
	var end map[string]any
	for tick := 0; end == nil; tick++ {
		for {
			m, raw := agent.recv()
			if m["type"] == "episode_end" {
				end = m
				break
			}
			if m["type"] == "observation" {
				var o ipc.ObservationMsg
				require.NoError(t, cbor.Unmarshal(raw, &o))
				agent.send(map[string]any{"type": "decision", "tick": o.Tick, "tool": "move_to", "params": map[string]any{"target": []any{5, 0, 5}}})
				break
			}
		}
		require.Less(t, tick, 1000, "the disk never filled up")
	}
	require.Equal(t, "error", end["reason"])
	require.Equal(t, true, end["final"])
	agent.expectError(ipc.CodeServerError, true, "the server stopped on an error: ", "file too large")
	agent.expectClosed()
	require.Nil(t, <-done)

	b, err := os.ReadFile(filepath.Join(dir, "replay.jsonl"))
	require.NoError(t, err)
	require.Equal(t, byte('\n'), b[len(b)-1], "the journal ends with a complete line")
	rep, err := engine.ReadReplay(bytes.NewReader(b))
	require.NoError(t, err)
	require.True(t, rep.Truncated, "no end line: cut short")
	require.NotEmpty(t, rep.Ticks)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: 1, Ticks: 1000})
	require.NoError(t, err)
	res, err := engine.Play(t.Context(), rep, w, engine.PlayOptions{Verify: true})
	require.NoError(t, err, "what was written re-simulates to the same hashes")
	require.Equal(t, len(rep.Ticks), res.Ticks)
}
