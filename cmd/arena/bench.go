package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/benchworld"
	"github.com/arena-sim/arena/internal/ipcbench"
	"github.com/arena-sim/arena/world"
)

func cmdBench(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("bench", stdout)
	agents := fs.Int("agents", 1000, "number of built-in foragers")
	size := fs.Float64("size", 256, "side of the square world in units")
	ticks := fs.Int("ticks", 300, "ticks to run")
	seed := fs.Uint64("seed", 1, "seed of the generated world")
	workers := fs.Int("workers", 0, "goroutines that build each tick's observations and plan paths (default: the number of CPUs)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	ipcMode := fs.Bool("ipc", false, "measure lockstep over a Unix socket instead: a server with --agents client slots (100 unless given) against in-process clients for --ticks ticks, and a bare echo of frames of the same sizes")
	soak := fs.Duration("soak", 0, "soak the realtime server instead: --agents clients (1000 unless given) over a Unix socket at --tick-rate for this long, with random disconnects; prints tick intervals, memory over time and decisions")
	tickRate := fs.Float64("tick-rate", 10, "--soak: ticks per second")
	churn := fs.Float64("churn", 0.01, "--soak: the chance per second that a client drops its connection (it comes back 0.1 to 2 s later)")
	turns := fs.Int("turns", 0, "--ipc: run the lockstep and the echo at once, taking turns of this many ticks (after a first turn of the lockstep unmeasured), so that the host's swings slow both alike; each of --repeat pairs is one such run; a --cpuprofile covers both, its samples labelled side=lockstep or side=echo")
	repeat := fs.Int("repeat", 1, "--ipc: measure this many pairs of a lockstep and an echo run, alternating which goes first, and print each pair's ratios and the medians; --against: this many interleaved runs")
	against := fs.Int("against", 0, "measure the speedup of --workers over this many workers: --repeat runs, each of a fresh world on --workers and its twin (the same seed) on this many, taking turns of 25 ticks so that the host's swings slow both alike; prints each run's agent-steps/s and the median speedup, and fails if two worlds end in different states")
	againstAgents := fs.Int("against-agents", 0, "measure the cost of an agent-step in another world against this one's instead (constant density: --agents 1000 --size 256 --against-agents 16000 --against-size 1024 --workers 1): --repeat runs, each of the two worlds taking turns of 32 ticks on --workers each (--against for the other), the other running as many ticks; prints each run's agent-steps/s and the median ratio of the other's time per agent-step to this one's")
	againstSize := fs.Float64("against-size", 0, "the side of the other world of --against-agents [--size]")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run's ticks to this file; with --ipc, of the measured part of each run, with -lockstep-N or -echo-N before its extension (N counts the pairs from 1)")
	profileFrom := fs.Int("profile-from", 0, "with --cpuprofile: start the CPU profile after this many ticks, so that it covers only the later part of a long run (the JSON's windows give ns per agent-step by tenth of the run)")
	traceFile := fs.String("trace", "", "--ipc: write an execution trace (runtime/trace) of the measured part of each run to this file, with -lockstep-N or -echo-N before its extension; `go tool trace` shows the regions of every tick (observe, gather, prepare, apply, worldstep) and of every echo round (observe, gather)")
	memProfile := fs.String("memprofile", "", "write heap profiles (after a GC) at the first tenth of the run and at its end to this file, with -early or -end before its extension; `go tool pprof -base FILE-early FILE-end` shows what grew")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFlags(fs, 0, "agents", "size", "ticks", "tick-rate", "workers", "repeat", "against", "against-agents", "against-size", "turns"); err != nil {
		return err
	}
	var other *benchworld.Options // --against-agents, --against-size: another world
	if *againstAgents > 0 || *againstSize > 0 {
		other = &benchworld.Options{Seed: *seed, Agents: cmp.Or(*againstAgents, *agents), Size: cmp.Or(*againstSize, *size)}
	}
	if (*against > 0 || other != nil) && (*ipcMode || *soak > 0 || *cpuProfile != "" || *memProfile != "") {
		return fmt.Errorf("bench: --against: only for the world bench, without profiles")
	}
	if *soak > 0 {
		return benchSoak(ctx, stdout, ipcbench.SoakOptions{Agents: *agents, TickRate: *tickRate, Duration: *soak, Churn: *churn, Seed: *seed})
	}
	if *ipcMode {
		if *profileFrom > 0 {
			return fmt.Errorf("bench: --profile-from %d: not with --ipc (its profiles cover each measured run)", *profileFrom)
		}
		n := 100
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "agents" {
				n = *agents
			}
		})
		return benchIPC(ctx, stdout, ipcbench.Options{Agents: n, Rounds: *ticks, Seed: *seed, Turns: *turns}, max(*repeat, 1), measuredFiles{CPU: *cpuProfile, Trace: *traceFile}, *asJSON)
	}
	if *turns > 0 {
		return fmt.Errorf("bench: --turns %d: only with --ipc", *turns)
	}
	if *traceFile != "" {
		return fmt.Errorf("bench: --trace %s: only with --ipc", *traceFile)
	}
	if *profileFrom > 0 && (*cpuProfile == "" || *profileFrom >= *ticks) {
		return fmt.Errorf("bench: --profile-from %d: needs --cpuprofile and fewer than --ticks (%d)", *profileFrom, *ticks)
	}
	opt := benchworld.Options{Seed: *seed, Agents: *agents, Size: *size}
	if *against > 0 || other != nil {
		n := cmp.Or(*workers, runtime.GOMAXPROCS(0))
		return benchSpeedup(ctx, stdout, benchworld.Twins{Options: opt, Ticks: *ticks, Workers: n, Against: cmp.Or(*against, n),
			AgainstOptions: other}, max(*repeat, 1), *asJSON)
	}
	r, err := benchWorld(ctx, opt, *ticks, *workers, benchProfiles{CPU: *cpuProfile, CPUFrom: *profileFrom, Mem: *memProfile})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, r)
	}
	ran := fmt.Sprintf("%d ticks", r.Ticks)
	if r.Ticks < *ticks && r.EndReason == "completed" {
		// The generated world's objective (10 resources each) can be met early.
		ran = fmt.Sprintf("%d of %d ticks (every agent met the objective at tick %d, which ended the run)", r.Ticks, *ticks, r.Ticks)
	}
	fmt.Fprintf(stdout, "world %gx%g, %d agents, %d workers, %s: build %s, run %s\n", r.Size, r.Size, r.Agents, r.Workers, ran,
		time.Duration(r.BuildNS).Round(time.Millisecond), time.Duration(r.RunNS).Round(time.Millisecond))
	fmt.Fprintf(stdout, "%.0f ticks/s, %.0f agent-steps/s (observations and built-in decisions included), %.0f ns and %.2f allocations per agent-step\n",
		float64(r.Ticks)/(float64(r.RunNS)/1e9), r.AgentStepsPerSec, r.NSPerAgentStep, r.AllocsPerAgentStep)
	early := ""
	if r.EarlyTick < r.Ticks {
		early = fmt.Sprintf(" (%.0f B at tick %d)", r.LiveHeapPerAgentEarly, r.EarlyTick)
	}
	fmt.Fprintf(stdout, "live heap per agent after GC: %.0f B%s; state hash %s\n", r.LiveHeapPerAgent, early, r.StateHash)
	if len(r.LiveHeap) > 2 {
		fmt.Fprintf(stdout, "live heap per agent at each tenth of the run:")
		for _, s := range r.LiveHeap {
			fmt.Fprintf(stdout, " %d:%.0f", s.Tick, s.BytesPerAgent)
		}
		fmt.Fprintln(stdout)
	}
	if len(r.Windows) > 1 {
		fmt.Fprintf(stdout, "by tenth of the run, to its last tick: ns per agent-step, agents in view per agent (mean/max):")
		for _, s := range r.Windows {
			fmt.Fprintf(stdout, " %d:%.0f,%.1f/%d", s.Tick, s.NSPerAgentStep, s.InViewMean, s.InViewMax)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// worldBench is what `arena bench` measures of the bench world; `--json`
// prints it as it is.
type worldBench struct {
	Agents             int     `json:"agents"`
	Size               float64 `json:"size"`
	Workers            int     `json:"workers"`
	Ticks              int     `json:"ticks"`
	BuildNS            int64   `json:"build_ns"`
	RunNS              int64   `json:"run_ns"`
	AgentStepsPerSec   float64 `json:"agent_steps_per_sec"`
	NSPerAgentStep     float64 `json:"ns_per_agent_step"`
	AllocsPerAgentStep float64 `json:"allocs_per_agent_step"`
	BytesPerAgentStep  float64 `json:"bytes_per_agent_step"`
	// LiveHeapPerAgent is the live heap after a GC at the end (the world
	// and the runner, not the episode's results), less the live heap
	// before the world was built, per agent; LiveHeapPerAgentEarly is the
	// same at EarlyTick (a tenth of the run): growth is the difference.
	LiveHeapPerAgent      float64 `json:"live_heap_bytes_per_agent"`
	LiveHeapPerAgentEarly float64 `json:"live_heap_bytes_per_agent_early"`
	EarlyTick             int     `json:"early_tick"`
	// LiveHeap samples the live heap per agent after every tenth of the
	// run (the first is the early sample, the last the end).
	LiveHeap []heapSample `json:"live_heap"`
	// Windows splits the run into tenths: the cost of each, and how many
	// agents each agent saw at its last tick (a crowd grows over a run).
	Windows   []windowSample `json:"windows"`
	StateHash string         `json:"state_hash"`
	// EndReason is why the run ended: "time_limit" after the ticks asked
	// for, or "completed" when every agent met the objective before.
	EndReason string `json:"end_reason"`
	// PGO names the profile the command was built with ("": none), so that
	// figures of differently built binaries are not compared unawares.
	PGO string `json:"pgo"`
}

// benchProfiles names the files of a world bench's profiles ("": none);
// the CPU profile starts after CPUFrom ticks.
type benchProfiles struct {
	CPU, Mem string
	CPUFrom  int
}

// windowSample is one tenth of a world bench, ending after the tick Tick:
// its wall time per agent-step, and the agents in view (listed and counted
// in nearby_agents_more) of the living agents' observations of its last
// decision point, on average and at most.
type windowSample struct {
	Tick           int     `json:"tick"`
	NSPerAgentStep float64 `json:"ns_per_agent_step"`
	InViewMean     float64 `json:"agents_in_view_mean"`
	InViewMax      int     `json:"agents_in_view_max"`
}

// heapSample is the live heap per agent after the tick Tick.
type heapSample struct {
	Tick          int     `json:"tick"`
	BytesPerAgent float64 `json:"bytes_per_agent"`
}

// benchWorld builds the bench world and runs its foragers for ticks ticks.
// It writes the profiles asked for (see the --cpuprofile and --memprofile
// flags).
func benchWorld(ctx context.Context, opt benchworld.Options, ticks, workers int, prof benchProfiles) (*worldBench, error) {
	memProfile := prof.Mem
	liveHeap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := liveHeap()
	start := time.Now()
	w, ctrls, err := benchworld.New(opt)
	if err != nil {
		return nil, err
	}
	build := time.Since(start)
	r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: ticks, Workers: workers}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	n := float64(len(w.Agents()))
	perAgent := func(heap uint64) float64 { return (float64(heap) - float64(base)) / n }
	res := &worldBench{Agents: len(w.Agents()), Size: opt.Size, Workers: workers, BuildNS: build.Nanoseconds(), EarlyTick: max(ticks/10, 1), PGO: readBuildInfo().PGO}
	var profErr error
	if memProfile != "" {
		// Every 4 KiB allocated is sampled (not every 512 KiB): growth of
		// a few bytes per agent shows up.
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 4096
	}
	writeProfile := func(suffix string) {
		if memProfile == "" || profErr != nil {
			return
		}
		ext := filepath.Ext(memProfile)
		profErr = writeHeapProfile(fmt.Sprintf("%s-%s%s", strings.TrimSuffix(memProfile, ext), suffix, ext))
	}
	var cpuFile *os.File
	startCPU := func() error {
		f, err := os.Create(prof.CPU)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("cpu profile %s: %w", prof.CPU, err)
		}
		cpuFile = f
		return nil
	}
	// The samples stop the clock for their GCs.
	var paused time.Duration
	tenth := max(ticks/10, 1)
	var scratch world.Observation
	windowStart, windowPaused := time.Now(), time.Duration(0)
	r.OmitDecisions = true // OnTick reads the tick only
	r.OnTick = func(rec *engine.TickRecord) {
		done := rec.Tick + 1
		if done%tenth == 0 {
			t := time.Now()
			res.Windows = append(res.Windows, crowdSample(w, &scratch, done, t.Sub(windowStart)-(paused-windowPaused), tenth))
			if done < ticks {
				h := perAgent(liveHeap())
				res.LiveHeap = append(res.LiveHeap, heapSample{done, h})
				if done == res.EarlyTick {
					res.LiveHeapPerAgentEarly = h
					writeProfile("early")
				}
			}
			paused += time.Since(t)
			windowStart, windowPaused = time.Now(), paused
		}
		if done == prof.CPUFrom && profErr == nil {
			profErr = startCPU()
		}
	}
	// Building the world left garbage that the collector would otherwise
	// mark and sweep during the first ticks, on the core a second worker
	// needs: collect it before the clock starts, as the testing package
	// does before a benchmark.
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if prof.CPU != "" && prof.CPUFrom == 0 {
		if err := startCPU(); err != nil {
			return nil, err
		}
	}
	start = time.Now()
	windowStart = start
	out, err := r.Run(ctx)
	if cpuFile != nil {
		pprof.StopCPUProfile()
		if cerr := cpuFile.Close(); cerr != nil && profErr == nil {
			profErr = fmt.Errorf("cpu profile: %w", cerr)
		}
	}
	if err != nil {
		return nil, err
	}
	el := time.Since(start) - paused
	runtime.ReadMemStats(&after)
	steps := float64(out.Ticks) * n
	res.Ticks, res.RunNS, res.EndReason = out.Ticks, el.Nanoseconds(), out.EndReason
	res.AgentStepsPerSec = steps / el.Seconds()
	res.NSPerAgentStep = float64(el.Nanoseconds()) / steps
	// The early sample's GC allocates almost nothing; ReadMemStats nothing.
	res.AllocsPerAgentStep = float64(after.Mallocs-before.Mallocs) / steps
	res.BytesPerAgentStep = float64(after.TotalAlloc-before.TotalAlloc) / steps
	// From here on the episode's results (out: every agent's metrics, 0.5 KB
	// an agent) are not used, so not live: they are not the world's, and
	// measured with them the end stood 2% above the tenths before it at
	// 1,000 agents.
	res.LiveHeapPerAgent = perAgent(liveHeap())
	res.LiveHeap = append(res.LiveHeap, heapSample{res.Ticks, res.LiveHeapPerAgent})
	writeProfile("end")
	res.StateHash = world.FormatHash(w.StateHash())
	runtime.KeepAlive(r) // its observations and workers count as live
	if profErr != nil {
		return nil, profErr
	}
	return res, nil
}

// crowdSample is the window of a world bench that ended after the tick
// done, took el and ran ticks ticks. The agents in view are counted in
// observations built for it into scratch (the runner keeps none of the
// built-in foragers'); observing changes nothing in the bench world, which
// has no events to mark read.
func crowdSample(w *world.World, scratch *world.Observation, done int, el time.Duration, ticks int) windowSample {
	s := windowSample{Tick: done}
	n := 0
	for _, a := range w.Agents() {
		if !a.Alive {
			continue
		}
		w.ObserveInto(a, scratch)
		k := len(scratch.NearbyAgents) + scratch.NearbyAgentsMore
		s.InViewMean += float64(k)
		s.InViewMax = max(s.InViewMax, k)
		n++
	}
	if n > 0 {
		s.InViewMean /= float64(n)
	}
	s.NSPerAgentStep = float64(el.Nanoseconds()) / float64(ticks) / float64(len(w.Agents()))
	return s
}

// writeHeapProfile writes the heap profile of the last GC to name.
func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("heap profile %s: %w", name, err)
	}
	return f.Close()
}

// benchSoak runs ipcbench.Soak and prints what it measured.
func benchSoak(ctx context.Context, stdout io.Writer, opt ipcbench.SoakOptions) error {
	fmt.Fprintf(stdout, "soak: %d clients, realtime at %g Hz, for %s, churn %g/s per client\n", opt.Agents, opt.TickRate, opt.Duration, opt.Churn)
	opt.Progress = func(s ipcbench.SoakSample) {
		fmt.Fprintf(stdout, "  %6s  tick %6d  RSS %6.1f MiB\n", s.At, s.Tick, s.RSSMiB)
	}
	r, err := ipcbench.Soak(ctx, opt)
	if err != nil {
		return err
	}
	period := time.Duration(float64(time.Second) / r.TickRate)
	ms := func(d time.Duration) string {
		return fmt.Sprintf("%.1f ms (%.2f periods)", float64(d.Microseconds())/1000, float64(d)/float64(period))
	}
	fmt.Fprintf(stdout, "ticks %d; interval p50 %s, p99 %s, max %s\n", r.Ticks, ms(r.IntervalP50), ms(r.IntervalP99), ms(r.IntervalMax))
	refused := 0
	for _, n := range r.Errors {
		refused += n
	}
	fmt.Fprintf(stdout, "decisions: %d sent, %d applied (seen in results), %d answered with an error %v, %d unaccounted (in flight at a drop, or their result in a replaced observation); %d reconnections\n",
		r.Sent, r.Applied, refused, r.Errors, r.Sent-r.Applied-refused, r.Reconnects)
	return nil
}

// measuredFiles are the files that --cpuprofile and --trace name (empty:
// none), written for each measured run of --ipc.
type measuredFiles struct{ CPU, Trace string }

// forRun is file with -lockstep-N or -echo-N before its extension.
func forRun(file string, pair int, lockstep bool) string {
	kind := "echo"
	if lockstep {
		kind = "lockstep"
	}
	ext := filepath.Ext(file)
	return fmt.Sprintf("%s-%s-%d%s", strings.TrimSuffix(file, ext), kind, pair+1, ext)
}

// record starts what mf asks for around one measured run.
func (mf measuredFiles) record(pair int, lockstep bool) (start, stop func()) {
	var files []*os.File
	create := func(file string) *os.File {
		f, err := os.Create(forRun(file, pair, lockstep))
		if err != nil {
			fmt.Fprintf(os.Stderr, "arena bench: %v\n", err)
			return nil
		}
		files = append(files, f)
		return f
	}
	var cpu, tr bool
	start = func() {
		if mf.CPU != "" {
			if f := create(mf.CPU); f != nil {
				if err := pprof.StartCPUProfile(f); err != nil {
					fmt.Fprintf(os.Stderr, "arena bench: cpu profile %s: %v\n", f.Name(), err)
				}
				cpu = true
			}
		}
		if mf.Trace != "" {
			if f := create(mf.Trace); f != nil {
				if err := trace.Start(f); err != nil {
					fmt.Fprintf(os.Stderr, "arena bench: trace %s: %v\n", f.Name(), err)
				}
				tr = true
			}
		}
	}
	stop = func() {
		if cpu {
			pprof.StopCPUProfile()
		}
		if tr {
			trace.Stop()
		}
		for _, f := range files {
			f.Close()
		}
	}
	return start, stop
}

// benchIPC runs the lockstep benchmark of `go test -bench Lockstep100
// ./server/` (internal/ipcbench) repeat times, alternating which of lockstep
// and the echo goes first, and prints each pair's figures and the medians;
// mf names the profiles and traces to write of each run.
func benchIPC(ctx context.Context, stdout io.Writer, opt ipcbench.Options, repeat int, mf measuredFiles, asJSON bool) error {
	var profile func(pair int, lockstep bool) (start, stop func())
	if mf != (measuredFiles{}) {
		profile = mf.record
	}
	runs, err := ipcbench.Repeat(ctx, opt, repeat, profile)
	if err != nil {
		return err
	}
	agents, ticks := opt.Agents, runs[0].Lockstep.Rounds
	r := ipcbench.Median(runs)
	l, e := r.Lockstep, r.Echo
	p50, p99 := r.Ratios()
	if asJSON {
		out := map[string]any{
			"agents": agents, "ticks": ticks, "repeat": repeat, "turns": opt.Turns,
			"decisions_per_sec": l.DecisionsPerSec, "echo_decisions_per_sec": e.DecisionsPerSec,
			"decisions_ratio": r.DecisionsRatio, "rtt_ratio_p50": p50, "rtt_ratio_p99": p99,
			"rtt_p50_ns": l.RTTP50.Nanoseconds(), "rtt_p99_ns": l.RTTP99.Nanoseconds(),
			"echo_rtt_p50_ns": e.RTTP50.Nanoseconds(), "echo_rtt_p99_ns": e.RTTP99.Nanoseconds(),
			"cpu_ns_per_decision": l.CPUPerDecision.Nanoseconds(), "echo_cpu_ns_per_decision": e.CPUPerDecision.Nanoseconds(),
			"observation_bytes": l.ObsBytes, "decision_bytes": l.DecisionBytes,
			"pgo": readBuildInfo().PGO,
		}
		if repeat > 1 {
			var pairs []map[string]any
			for _, p := range runs {
				pairs = append(pairs, map[string]any{
					"decisions_per_sec": p.Lockstep.DecisionsPerSec, "echo_decisions_per_sec": p.Echo.DecisionsPerSec,
					"decisions_ratio": p.DecisionsRatio, "rtt_ratio_p50": p.RTTRatioP50, "rtt_ratio_p99": p.RTTRatioP99,
					"cpu_ns_per_decision": p.Lockstep.CPUPerDecision.Nanoseconds(), "echo_cpu_ns_per_decision": p.Echo.CPUPerDecision.Nanoseconds(),
				})
			}
			out["pairs"] = pairs
		}
		return writeJSON(stdout, out)
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	inTurns := ""
	if opt.Turns > 0 {
		inTurns = fmt.Sprintf(" (the echo taking turns with it, %d ticks each)", opt.Turns)
	}
	fmt.Fprintf(stdout, "lockstep over a Unix socket, %d clients, %d ticks%s: observations %.0f B, decisions %.0f B\n", agents, ticks, inTurns, l.ObsBytes, l.DecisionBytes)
	if repeat > 1 {
		for i, p := range runs {
			first := "lockstep first"
			switch {
			case opt.Turns > 0:
				first = "in turns"
			case i%2 == 1:
				first = "echo first"
			}
			fmt.Fprintf(stdout, "pair %d (%s): server %6.0f, echo %6.0f decisions/s, ratio %.2f; round trip ratio p50 %.2f, p99 %.2f; CPU per decision %.1f µs, echo %.1f µs\n",
				i+1, first, p.Lockstep.DecisionsPerSec, p.Echo.DecisionsPerSec, p.DecisionsRatio, p.RTTRatioP50, p.RTTRatioP99, us(p.Lockstep.CPUPerDecision), us(p.Echo.CPUPerDecision))
		}
		fmt.Fprintf(stdout, "medians of %d pairs (each figure on its own):\n", repeat)
	}
	fmt.Fprintf(stdout, "server:    %6.0f decisions/s, round trip p50 %s p99 %s, %.1f µs CPU per decision\n",
		l.DecisionsPerSec, l.RTTP50.Round(time.Microsecond), l.RTTP99.Round(time.Microsecond), us(l.CPUPerDecision))
	fmt.Fprintf(stdout, "bare echo: %6.0f decisions/s, round trip p50 %s p99 %s, %.1f µs CPU per decision\n",
		e.DecisionsPerSec, e.RTTP50.Round(time.Microsecond), e.RTTP99.Round(time.Microsecond), us(e.CPUPerDecision))
	fmt.Fprintf(stdout, "server / echo: decisions/s %.2f; round trip p50 %.2f, p99 %.2f\n", r.DecisionsRatio, p50, p99)
	return nil
}

// speedupPair is one interleaved run of benchSpeedup.
type speedupPair struct {
	AgentStepsPerSec        float64 `json:"agent_steps_per_sec"`         // with --workers
	AgainstAgentStepsPerSec float64 `json:"against_agent_steps_per_sec"` // with --against
	Speedup                 float64 `json:"speedup"`                     // the first over the second
	// TurnSpeedupP25 and P75 are the quartiles of the speedup over the
	// run's pairs of turns.
	TurnSpeedupP25 float64 `json:"turn_speedup_p25"`
	TurnSpeedupP75 float64 `json:"turn_speedup_p75"`
}

// benchSpeedup measures the bench world on t.Workers workers against a twin
// on t.Against, repeat times, each time on fresh worlds of the same seed that
// take turns (benchworld.Interleave: the host's swings slow both alike; the
// runs alternate which side goes first), and prints every run and the median
// speedup. Both sides must end with the same state hash: the number of
// workers changes no state. With t.AgainstOptions the other side is another
// world, the two take turns of densityTurn ticks each, and the speedup is
// the other's time per agent-step over this one's (constant density).
func benchSpeedup(ctx context.Context, stdout io.Writer, t benchworld.Twins, repeat int, asJSON bool) error {
	twins := t.AgainstOptions == nil
	if twins && t.Workers == t.Against {
		return fmt.Errorf("bench: --against %d: the same as --workers (%d)", t.Against, t.Workers)
	}
	if !twins {
		t.Turn = densityTurn
	}
	hash := ""
	pairs := make([]speedupPair, repeat)
	for i := range pairs {
		t.AgainstFirst = i%2 == 1
		r, err := benchworld.Interleave(ctx, t)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if hash == "" {
			hash = r.StateHash
		} else if r.StateHash != hash {
			return fmt.Errorf("bench: run %d ended with state hash %s, the first with %s", i+1, r.StateHash, hash)
		}
		p25, p75 := r.TurnQuartiles()
		pairs[i] = speedupPair{r.AgentStepsPerSec(), r.AgainstAgentStepsPerSec(), r.Speedup(), p25, p75}
	}
	speedups := make([]float64, repeat)
	for i, p := range pairs {
		speedups[i] = p.Speedup
	}
	slices.Sort(speedups)
	median := (speedups[(repeat-1)/2] + speedups[repeat/2]) / 2
	opt := t.Options
	if asJSON {
		out := map[string]any{
			"agents": opt.Agents, "size": opt.Size, "ticks": t.Ticks, "workers": t.Workers, "against": t.Against,
			"repeat": repeat, "pairs": pairs, "pgo": readBuildInfo().PGO,
		}
		if twins {
			out["speedup"], out["state_hash"] = median, hash
		} else {
			out["against_agents"], out["against_size"], out["density_ratio"] = t.AgainstOptions.Agents, t.AgainstOptions.Size, median
		}
		return writeJSON(stdout, out)
	}
	count := func(n int) string {
		if n == 1 {
			return "1 worker"
		}
		return fmt.Sprintf("%d workers", n)
	}
	if !twins {
		o := t.AgainstOptions
		fmt.Fprintf(stdout, "world %gx%g with %d agents on %s against %gx%g with %d on %s, %d ticks a side, in turns of %d\n",
			opt.Size, opt.Size, opt.Agents, count(t.Workers), o.Size, o.Size, o.Agents, count(t.Against), t.Ticks, t.Turn)
		for i, p := range pairs {
			fmt.Fprintf(stdout, "run %d: %.0f against %.0f ns per agent-step, ratio %.3f (turns: quartiles %.3f, %.3f)\n",
				i+1, 1e9/p.AgentStepsPerSec, 1e9/p.AgainstAgentStepsPerSec, p.Speedup, p.TurnSpeedupP25, p.TurnSpeedupP75)
		}
		fmt.Fprintf(stdout, "median ratio of %d runs: %.3f\n", repeat, median)
		return nil
	}
	fmt.Fprintf(stdout, "world %gx%g, %d agents, %d ticks a side, in turns of %d: %s against %s\n",
		opt.Size, opt.Size, opt.Agents, t.Ticks, benchworld.DefaultTurn, count(t.Workers), count(t.Against))
	for i, p := range pairs {
		fmt.Fprintf(stdout, "run %d: %s %.0f, %s %.0f agent-steps/s, speedup %.2f (turns: quartiles %.2f, %.2f)\n",
			i+1, count(t.Workers), p.AgentStepsPerSec, count(t.Against), p.AgainstAgentStepsPerSec, p.Speedup, p.TurnSpeedupP25, p.TurnSpeedupP75)
	}
	fmt.Fprintf(stdout, "median speedup of %d runs: %.2f; state hash %s after every run\n", repeat, median, hash)
	return nil
}

// densityTurn is the turn, in ticks, of two worlds of different sizes
// (--against-agents): the same on both sides, so that they compare the
// same ticks of their episodes (crowds form as foragers gather, and an
// agent-step costs more later on), and long enough that the small world's
// caches, emptied by the large one's turn, refill in a small part of it.
const densityTurn = 32

// writeJSON prints v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode bench results: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
