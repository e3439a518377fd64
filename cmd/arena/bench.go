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
	if err := fs.Parse(args); err != nil {
		return err
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
	fmt.Fprintf(stdout, "world %gx%g, %d agents, %d ticks: build %s, run %s\n", *size, *size, *agents, res.Ticks, build.Round(time.Millisecond), el.Round(time.Millisecond))
	fmt.Fprintf(stdout, "%.0f ticks/s, %.0f agent-steps/s (observations and built-in decisions included)\n", float64(res.Ticks)/el.Seconds(), steps/el.Seconds())
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
	fmt.Fprintf(stdout, "round trip / echo: p50 %.2f, p99 %.2f\n", p50, p99)
	return nil
}
