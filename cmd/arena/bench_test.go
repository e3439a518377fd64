package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/benchworld"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// TestBenchJSON runs a small bench world on one worker and on three: one JSON
// object each, with every figure, and the same final state hash.
func TestBenchJSON(t *testing.T) {
	hashes := map[string]bool{}
	for _, workers := range []string{"1", "3"} {
		out, _, err := arena(t, "bench", "--agents", "40", "--size", "48", "--ticks", "30", "--workers", workers, "--json")
		require.NoError(t, err)
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &r), out)
		for _, k := range []string{"agents", "size", "workers", "ticks", "agent_steps_per_sec", "ns_per_agent_step",
			"allocs_per_agent_step", "live_heap_bytes_per_agent", "state_hash"} {
			require.Contains(t, r, k)
		}
		require.EqualValues(t, 40, r["agents"])
		require.EqualValues(t, 30, r["ticks"])
		require.Equal(t, workers, fmt.Sprint(r["workers"]))
		require.Positive(t, r["agent_steps_per_sec"])
		require.Positive(t, r["live_heap_bytes_per_agent"])
		hashes[r["state_hash"].(string)] = true
	}
	require.Len(t, hashes, 1, "one state hash for 1 and 3 workers")

	// The bench observes every agent for its windows' crowds: that must leave
	// the world as a run nobody watches leaves it.
	w, ctrls, err := benchworld.New(benchworld.Options{Seed: 1, Agents: 40, Size: 48})
	require.NoError(t, err)
	_, err = (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: 30}).Run(context.Background())
	require.NoError(t, err)
	require.True(t, hashes[world.FormatHash(w.StateHash())], "the bench's state hash is an unwatched run's")
}

// TestBenchIPCRepeat: --repeat prints every pair and the medians.
func TestBenchIPCRepeat(t *testing.T) {
	out, _, err := arena(t, "bench", "--ipc", "--agents", "10", "--ticks", "5", "--repeat", "2", "--json")
	require.NoError(t, err)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	for _, k := range []string{"decisions_per_sec", "echo_decisions_per_sec", "decisions_ratio", "rtt_ratio_p50", "rtt_ratio_p99"} {
		require.Positive(t, r[k], k)
	}
	require.Len(t, r["pairs"], 2)
}

// TestBenchHeapSamplesAndProfiles: the live heap is sampled at every tenth of
// the run, --memprofile writes the early and the end heap profiles and
// --cpuprofile a CPU profile.
func TestBenchHeapSamplesAndProfiles(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "heap.pprof")
	out, _, err := arena(t, "bench", "--agents", "20", "--size", "48", "--ticks", "40", "--workers", "1", "--json", "--memprofile", prof, "--cpuprofile", filepath.Join(filepath.Dir(prof), "cpu.pprof"))
	require.NoError(t, err)
	var r struct {
		Ticks     int     `json:"ticks"`
		EarlyTick int     `json:"early_tick"`
		Early     float64 `json:"live_heap_bytes_per_agent_early"`
		End       float64 `json:"live_heap_bytes_per_agent"`
		LiveHeap  []struct {
			Tick  int     `json:"tick"`
			Bytes float64 `json:"bytes_per_agent"`
		} `json:"live_heap"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Equal(t, 40, r.Ticks)
	require.Len(t, r.LiveHeap, 10)
	for i, s := range r.LiveHeap {
		require.Equal(t, 4*(i+1), s.Tick)
		require.Positive(t, s.Bytes)
	}
	require.Equal(t, r.EarlyTick, r.LiveHeap[0].Tick)
	require.Equal(t, r.Early, r.LiveHeap[0].Bytes)
	require.Equal(t, r.End, r.LiveHeap[9].Bytes)
	for _, name := range []string{"heap-early.pprof", "heap-end.pprof", "cpu.pprof"} {
		// A profile is a gzipped protocol buffer.
		f, err := os.Open(filepath.Join(filepath.Dir(prof), name))
		require.NoError(t, err)
		defer f.Close()
		z, err := gzip.NewReader(f)
		require.NoError(t, err, name)
		b, err := io.ReadAll(z)
		require.NoError(t, err, name)
		require.NotEmpty(t, b, name)
	}
}

// TestBenchWindowsAndLateProfile: the run is split into tenths, each with its
// cost and the agents in view; --profile-from starts the CPU profile late (a
// profile of a run's later ticks) and is refused without --cpuprofile or past
// the run's end.
func TestBenchWindowsAndLateProfile(t *testing.T) {
	dir := t.TempDir()
	cpu := filepath.Join(dir, "late.pprof")
	out, _, err := arena(t, "bench", "--agents", "30", "--size", "32", "--ticks", "20", "--workers", "1", "--json",
		"--cpuprofile", cpu, "--profile-from", "15")
	require.NoError(t, err)
	var r struct {
		Windows []struct {
			Tick int     `json:"tick"`
			NS   float64 `json:"ns_per_agent_step"`
			Mean float64 `json:"agents_in_view_mean"`
			Max  int     `json:"agents_in_view_max"`
		} `json:"windows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Len(t, r.Windows, 10)
	crowded := false
	for i, s := range r.Windows {
		require.Equal(t, 2*(i+1), s.Tick)
		require.Positive(t, s.NS)
		require.LessOrEqual(t, s.Mean, float64(s.Max))
		crowded = crowded || s.Max > 0
	}
	require.True(t, crowded, "30 agents on 32×32 see each other")
	fi, err := os.Stat(cpu)
	require.NoError(t, err)
	require.Positive(t, fi.Size())

	for _, args := range [][]string{
		{"--ticks", "20", "--profile-from", "5"},
		{"--ticks", "20", "--profile-from", "20", "--cpuprofile", filepath.Join(dir, "never.pprof")},
		{"--ticks", "20", "--profile-from", "-1", "--cpuprofile", filepath.Join(dir, "never.pprof")},
		{"--ipc", "--ticks", "20", "--profile-from", "5", "--cpuprofile", filepath.Join(dir, "never.pprof")},
	} {
		_, _, err := arena(t, append([]string{"bench", "--agents", "5", "--size", "32"}, args...)...)
		require.ErrorContains(t, err, "--profile-from", args)
	}
	require.NoFileExists(t, filepath.Join(dir, "never.pprof"))
}

// TestBenchIPCTraceAndProfiles: with --ipc, --trace and --cpuprofile write a
// trace and a profile of every measured run, named by run, and nothing
// else; --trace without --ipc is refused.
func TestBenchIPCTraceAndProfiles(t *testing.T) {
	dir := t.TempDir()
	_, _, err := arena(t, "bench", "--ipc", "--agents", "4", "--ticks", "5", "--json",
		"--trace", filepath.Join(dir, "t.trace"), "--cpuprofile", filepath.Join(dir, "c.pprof"))
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"t-lockstep-1.trace", "t-echo-1.trace", "c-lockstep-1.pprof", "c-echo-1.pprof"}, names)
	for _, n := range []string{"t-lockstep-1.trace", "t-echo-1.trace"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(b, []byte("go 1.")), "%s is a runtime trace", n)
	}
	_, _, err = arena(t, "bench", "--ticks", "5", "--trace", filepath.Join(dir, "x.trace"))
	require.ErrorContains(t, err, "only with --ipc")
}

// TestBenchAgainst: --against measures interleaved runs of twin worlds on
// two numbers of workers, and reports each run's speedup with the quartiles
// over its turns, their median and the one state hash every world ended
// with.
func TestBenchAgainst(t *testing.T) {
	out, _, err := arena(t, "bench", "--agents", "40", "--size", "48", "--ticks", "20", "--workers", "3", "--against", "1", "--repeat", "3", "--json")
	require.NoError(t, err)
	var r struct {
		Workers, Against, Repeat int
		Speedup                  float64
		StateHash                string `json:"state_hash"`
		Pairs                    []benchPair
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Equal(t, 3, r.Workers)
	require.Equal(t, 1, r.Against)
	require.Equal(t, requirePairs(t, r.Pairs), r.Speedup, "the median")
	for _, p := range r.Pairs {
		require.Positive(t, p.P25)
		require.LessOrEqual(t, p.P25, p.P75)
	}
	// The same world and seed as a plain run: the same final state.
	plain, _, err := arena(t, "bench", "--agents", "40", "--size", "48", "--ticks", "20", "--json")
	require.NoError(t, err)
	require.Contains(t, plain, `"state_hash":"`+r.StateHash+`"`)

	for _, args := range [][]string{
		{"--workers", "2", "--against", "2"},
		{"--against", "1", "--ipc"},
		{"--against", "1", "--memprofile", filepath.Join(t.TempDir(), "m.pprof")},
		{"--against-agents", "40", "--ipc"},
		{"--against-size", "64", "--cpuprofile", filepath.Join(t.TempDir(), "c.pprof")},
	} {
		_, _, err := arena(t, append([]string{"bench", "--agents", "10", "--ticks", "2"}, args...)...)
		require.ErrorContains(t, err, "--against", args)
	}
}

// TestBenchAgainstAnotherWorld: --against-agents and --against-size compare
// the cost of an agent-step in two worlds (constant density), interleaved
// in turns of the same ticks: each run's ratio is the other world's time
// per agent-step over this one's, density_ratio their median, and no state
// hash is compared between worlds that differ.
func TestBenchAgainstAnotherWorld(t *testing.T) {
	out, _, err := arena(t, "bench", "--agents", "20", "--size", "32", "--against-agents", "80", "--against-size", "64",
		"--workers", "1", "--ticks", "40", "--repeat", "3", "--json")
	require.NoError(t, err)
	var r struct {
		AgainstAgents int     `json:"against_agents"`
		AgainstSize   float64 `json:"against_size"`
		Ratio         float64 `json:"density_ratio"`
		Pairs         []benchPair
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.NotContains(t, out, "state_hash")
	require.Equal(t, 80, r.AgainstAgents)
	require.Equal(t, 64.0, r.AgainstSize)
	require.Equal(t, requirePairs(t, r.Pairs), r.Ratio, "the median")

	text, _, err := arena(t, "bench", "--agents", "20", "--size", "32", "--against-agents", "80", "--against-size", "64",
		"--workers", "1", "--ticks", "32")
	require.NoError(t, err)
	require.Contains(t, text, "in turns of 32")
	require.Contains(t, text, "median ratio of 1 runs")
}

// benchPair is one interleaved run of bench --against, as --json prints it.
type benchPair struct {
	Steps        float64 `json:"agent_steps_per_sec"`
	AgainstSteps float64 `json:"against_agent_steps_per_sec"`
	Speedup      float64 `json:"speedup"`
	P25          float64 `json:"turn_speedup_p25"`
	P75          float64 `json:"turn_speedup_p75"`
}

// requirePairs checks three runs of bench --against, each one's speedup
// its throughput over the other side's, and returns their median.
func requirePairs(t *testing.T, pairs []benchPair) float64 {
	t.Helper()
	require.Len(t, pairs, 3)
	var speedups []float64
	for _, p := range pairs {
		require.Positive(t, p.Steps)
		require.Positive(t, p.AgainstSteps)
		require.InDelta(t, p.Steps/p.AgainstSteps, p.Speedup, 1e-9)
		speedups = append(speedups, p.Speedup)
	}
	slices.Sort(speedups)
	return speedups[1]
}
