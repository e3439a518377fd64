package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/benchworld"
	"github.com/arena-sim/arena/internal/ipcbench"
)

func cmdBench(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("bench", stdout)
	agents := fs.Int("agents", 1000, "number of built-in foragers")
	size := fs.Float64("size", 256, "side of the square world in units")
	ticks := fs.Int("ticks", 300, "ticks to run")
	seed := fs.Uint64("seed", 1, "seed of the generated world")
	ipcMode := fs.Bool("ipc", false, "measure lockstep over a Unix socket instead: a server with --agents client slots (100 unless given) against in-process clients for --ticks ticks, and a bare echo of frames of the same sizes")
	soak := fs.Duration("soak", 0, "soak the realtime server instead: --agents clients (1000 unless given) over a Unix socket at --tick-rate for this long, with random disconnects; prints tick intervals, memory over time and decisions")
	tickRate := fs.Float64("tick-rate", 10, "--soak: ticks per second")
	churn := fs.Float64("churn", 0.01, "--soak: the chance per second that a client drops its connection (it comes back 0.1 to 2 s later)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFlags(fs, 0, "agents", "size", "ticks", "tick-rate"); err != nil {
		return err
	}
	if *soak > 0 {
		return benchSoak(ctx, stdout, ipcbench.SoakOptions{Agents: *agents, TickRate: *tickRate, Duration: *soak, Churn: *churn, Seed: *seed})
	}
	if *ipcMode {
		n := 100
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "agents" {
				n = *agents
			}
		})
		return benchIPC(ctx, stdout, n, *ticks, *seed)
	}
	start := time.Now()
	w, ctrls, err := benchworld.New(benchworld.Options{Seed: *seed, Agents: *agents, Size: *size})
	if err != nil {
		return err
	}
	build := time.Since(start)
	r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: *ticks}
	start = time.Now()
	res, err := r.Run(ctx)
	if err != nil {
		return err
	}
	el := time.Since(start)
	steps := float64(res.Ticks) * float64(*agents)
	ran := fmt.Sprintf("%d ticks", res.Ticks)
	if res.Ticks < *ticks && res.EndReason == "completed" {
		// The generated world's objective (10 resources each) can be met early.
		ran = fmt.Sprintf("%d of %d ticks (every agent met the objective at tick %d, which ended the run)", res.Ticks, *ticks, res.Ticks)
	}
	fmt.Fprintf(stdout, "world %gx%g, %d agents, %s: build %s, run %s\n", *size, *size, *agents, ran, build.Round(time.Millisecond), el.Round(time.Millisecond))
	fmt.Fprintf(stdout, "%.0f ticks/s, %.0f agent-steps/s (observations and built-in decisions included)\n", float64(res.Ticks)/el.Seconds(), steps/el.Seconds())
	return nil
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

// benchIPC runs the lockstep benchmark of `go test -bench Lockstep100
// ./server/` (internal/ipcbench) once and prints its figures.
func benchIPC(ctx context.Context, stdout io.Writer, agents, ticks int, seed uint64) error {
	r, err := ipcbench.Run(ctx, ipcbench.Options{Agents: agents, Rounds: ticks, Seed: seed})
	if err != nil {
		return err
	}
	l, e := r.Lockstep, r.Echo
	p50, p99 := r.Ratios()
	fmt.Fprintf(stdout, "lockstep over a Unix socket, %d clients, %d ticks: observations %.0f B, decisions %.0f B\n", agents, ticks, l.ObsBytes, l.DecisionBytes)
	fmt.Fprintf(stdout, "server:    %6.0f decisions/s, round trip p50 %s p99 %s, %.1f µs CPU per decision\n",
		l.DecisionsPerSec, l.RTTP50.Round(time.Microsecond), l.RTTP99.Round(time.Microsecond), float64(l.CPUPerDecision.Nanoseconds())/1000)
	fmt.Fprintf(stdout, "bare echo: %6.0f decisions/s, round trip p50 %s p99 %s, %.1f µs CPU per decision\n",
		e.DecisionsPerSec, e.RTTP50.Round(time.Microsecond), e.RTTP99.Round(time.Microsecond), float64(e.CPUPerDecision.Nanoseconds())/1000)
	fmt.Fprintf(stdout, "server / echo: decisions/s %.2f; round trip p50 %.2f, p99 %.2f\n", r.DecisionsRatio, p50, p99)
	return nil
}
