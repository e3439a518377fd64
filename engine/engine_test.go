package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// runForaging plays the built-in foraging scenario with built-in foragers and
// returns the results and the per-tick hashes from the journal.
func runForaging(t *testing.T, seed uint64, agents int, dir string) (*engine.Results, []string) {
	t.Helper()
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: seed, Agents: agents})
	require.NoError(t, err)
	ctrls := map[string]engine.Controller{}
	var ids []string
	for _, a := range w.Agents() {
		ctrls[a.ID] = bots.NewForager(bots.Info{AgentID: a.ID, Seed: seed, Bounds: w.Bounds(), Rules: w.Rules()})
		ids = append(ids, a.ID)
	}
	path := filepath.Join(dir, "journal.jsonl")
	j, err := engine.CreateJournal(path, engine.JournalHeader{Scenario: sc.Name, Seed: seed, Agents: ids, InitialHash: world.FormatHash(w.StateHash())})
	require.NoError(t, err)
	r := &engine.Runner{World: w, Controllers: ctrls, Journal: j}
	res, err := r.Run(context.Background())
	require.NoError(t, err)
	require.NoError(t, j.Close())
	require.NoError(t, res.WriteJSON(filepath.Join(dir, "results.json")))

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var hashes []string
	sc2 := bufio.NewScanner(f)
	sc2.Buffer(make([]byte, 1<<20), 1<<24)
	first := true
	for sc2.Scan() {
		var line struct {
			Type string `json:"type"`
			Tick int    `json:"tick"`
			Hash string `json:"hash"`
		}
		require.NoError(t, json.Unmarshal(sc2.Bytes(), &line))
		if first {
			require.Equal(t, "header", line.Type)
			first = false
			continue
		}
		if line.Type == "tick" {
			require.Equal(t, len(hashes), line.Tick, "ticks are journalled in order")
			hashes = append(hashes, line.Hash)
		}
	}
	require.NoError(t, sc2.Err())
	return res, hashes
}

func TestForagersCollectAndAvoidHazards(t *testing.T) {
	res, _ := runForaging(t, 1, 0, t.TempDir())
	require.Equal(t, "foraging", res.Scenario)
	require.Len(t, res.Agents, 2)
	for _, a := range res.Agents {
		require.Greater(t, a.Score, 0.0, a.ID)
		require.Greater(t, a.Metrics["resources_collected"], 0.0, a.ID)
		require.True(t, a.Alive, a.ID)
		require.GreaterOrEqual(t, a.Metrics["health"], 50.0, "%s should avoid hazards", a.ID)
	}
	require.True(t, res.Passed, "with seed 1 both foragers pass: %+v", res.Agents)
	require.Equal(t, "completed", res.EndReason)
}

func TestSameSeedSameHashEveryTick(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	r1, h1 := runForaging(t, 5, 4, d1)
	r2, h2 := runForaging(t, 5, 4, d2)
	require.Equal(t, h1, h2)
	require.Equal(t, r1.FinalStateHash, r2.FinalStateHash)
	require.Equal(t, h1[len(h1)-1], r1.FinalStateHash)
	b1, err := os.ReadFile(filepath.Join(d1, "results.json"))
	require.NoError(t, err)
	b2, err := os.ReadFile(filepath.Join(d2, "results.json"))
	require.NoError(t, err)
	require.Equal(t, string(b1), string(b2), "results.json is byte-identical")

	_, h3 := runForaging(t, 6, 4, t.TempDir())
	require.NotEqual(t, h1[10], h3[10], "another seed is another world")
}

func TestStopEndsTheEpisode(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &engine.Runner{World: w, OnTick: func(rec *engine.TickRecord) {
		if rec.Tick+1 == 25 {
			cancel()
		}
	}}
	res, err := r.Run(ctx)
	require.NoError(t, err)
	require.Equal(t, "stopped", res.EndReason)
	require.Equal(t, 25, res.Ticks)
}

func TestWriteFileAtomicReplacesWholeFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "results.json")
	require.NoError(t, engine.WriteFileAtomic(p, []byte("old")))
	require.NoError(t, engine.WriteFileAtomic(p, []byte("new contents")))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "new contents", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary files are left behind")
	require.Error(t, engine.WriteFileAtomic(filepath.Join(dir, "missing", "x.json"), []byte("x")))
}

// nanBot sends a move_to with NaN coordinates every tick.
type nanBot struct{}

func (nanBot) Decide(context.Context, *world.Observation) world.Decision {
	return world.Decision{Tool: "move_to", Params: map[string]any{"target": []any{math.NaN(), math.Inf(1), 1.0}}}
}

func TestBadParamsNeverCostTheJournal(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := engine.CreateJournal(path, engine.JournalHeader{Scenario: "foraging"})
	require.NoError(t, err)
	r := &engine.Runner{World: w, Controllers: map[string]engine.Controller{"agent_001": nanBot{}}, Journal: j, MaxTicks: 5}
	res, err := r.Run(context.Background())
	require.NoError(t, err)
	require.NoError(t, j.Close())
	require.Equal(t, 5, res.Ticks)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), `"target":[{"$float":"NaN"},{"$float":"+Inf"},1]`)
	require.Contains(t, string(b), `"error_code":"INVALID_PARAMS"`)
}

// countingController counts its decisions; it decides on the tick goroutine.
type countingController struct{ n atomic.Int64 }

func (c *countingController) Decide(context.Context, *world.Observation) world.Decision {
	c.n.Add(1)
	return world.Idle("")
}

// concurrentCounter is a countingController that decides on the workers.
type concurrentCounter struct{ countingController }

func (*concurrentCounter) DecidesConcurrently() bool { return true }

// TestRunReadsControllersOnce checks that each agent's controller is the one
// the map held when Run started, whether it decides concurrently or not, on
// one worker and on several, and that changing the map during the run changes
// nothing.
func TestRunReadsControllersOnce(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			w, _, _ := builtin(t, "foraging", 3)
			agents := w.Agents()
			require.GreaterOrEqual(t, len(agents), 2)
			ctrls := map[string]engine.Controller{}
			first, second := &countingController{}, &concurrentCounter{}
			ctrls[agents[0].ID], ctrls[agents[1].ID] = first, second
			for _, a := range agents[2:] {
				ctrls[a.ID] = bots.NewForager(bots.Info{AgentID: a.ID, Seed: 3, Bounds: w.Bounds(), Rules: w.Rules()})
			}
			later := &countingController{}
			r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 20, Workers: workers,
				OnTick: func(rec *engine.TickRecord) {
					if rec.Tick == 4 {
						ctrls[agents[0].ID] = later
						delete(ctrls, agents[1].ID)
					}
				}}
			_, err := r.Run(context.Background())
			require.NoError(t, err)
			require.EqualValues(t, 20, first.n.Load(), "the controller the map held when Run started decides every tick")
			require.EqualValues(t, 20, second.n.Load(), "so does a concurrent one taken out of the map")
			require.Zero(t, later.n.Load(), "a controller put in the map during the run is not asked")
		})
	}
}
