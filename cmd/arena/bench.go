package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/benchworld"
)

func cmdBench(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("bench", stdout)
	agents := fs.Int("agents", 1000, "number of built-in foragers")
	size := fs.Float64("size", 256, "side of the square world in units")
	ticks := fs.Int("ticks", 300, "ticks to run")
	seed := fs.Uint64("seed", 1, "seed of the generated world")
	if err := fs.Parse(args); err != nil {
		return err
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
