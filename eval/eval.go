// Package eval runs a scenario's episodes with its built-in agents, in
// process: one episode (what `arena run` does), or many spread over worker
// goroutines, each with its own world (`arena eval`). It aggregates the
// episodes' results into a report: every metric's mean and standard error,
// pass rates, and per-episode rows for CSV and JSON.
package eval

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
)

// Config says what to run. Zero fields take the defaults in brackets.
type Config struct {
	Scenario *scenarios.Scenario
	Seed     uint64 // the run's seed; episode k runs with engine.EpisodeSeed(Seed, k)
	// SecretSeed seeds hidden information the same way; zero derives each
	// world's from its seed (a local run reproduces from one number).
	SecretSeed uint64
	Agents     int // [the scenario's count]
	Ticks      int // replaces the scenario's time limit when positive
	// Variables override scenario variables (one point of a sweep).
	Variables map[string]any
	Episodes  int // [1]
	// Shard, when set, runs only its share of the Episodes (see Shard).
	Shard    Shard
	Parallel int // worker goroutines [GOMAXPROCS]
	// Workers is each episode's engine.Runner.Workers, the goroutines that
	// build one tick's observations and plans [GOMAXPROCS divided by the
	// episodes running at once, at least 1].
	Workers int
	// Recorder, when set, journals episodes and keeps their results. Run calls
	// it from several goroutines at once when Parallel > 1.
	Recorder engine.Recorder
	// Controllers, when set, replaces the built-in bots (package-level
	// Controllers) as the agents of each episode: `arena run --agent llm`.
	Controllers func(sc *scenarios.Scenario, w *world.World) (map[string]engine.Controller, error)
	// Progress, when set, is called after each finished episode, from one
	// goroutine at a time.
	Progress func(done, total int)
	// Watch, when set, is given each episode's runner before it runs: a
	// viewer hooks in (`arena run --view`).
	Watch func(ctx context.Context, ep int, r *engine.Runner)
}

// Controllers gives every agent of w the scenario's built-in bot, seeded
// with its agent seed (engine.AgentSeed), as a bot playing over the wire is.
func Controllers(sc *scenarios.Scenario, w *world.World) (map[string]engine.Controller, error) {
	kind := sc.Agents.Bot
	if kind == "" {
		kind = "forager"
	}
	ctrls := make(map[string]engine.Controller, len(w.Agents()))
	for _, a := range w.Agents() {
		b, err := bots.New(kind, bots.Info{AgentID: a.ID, Seed: engine.AgentSeed(w.Seed(), a.ID), Bounds: w.Bounds(), Rules: w.Rules()})
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		ctrls[a.ID] = b
	}
	return ctrls, nil
}

// Episode runs episode ep (1-based) of cfg with built-in agents. onTick, when
// set, is the runner's OnTick.
func Episode(ctx context.Context, cfg Config, ep int, onTick func(*engine.TickRecord)) (*engine.Results, error) {
	sc := cfg.Scenario
	var secret uint64
	if cfg.SecretSeed != 0 {
		secret = engine.EpisodeSeed(cfg.SecretSeed, ep)
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: engine.EpisodeSeed(cfg.Seed, ep), SecretSeed: secret, Agents: cfg.Agents, Ticks: cfg.Ticks, Variables: cfg.Variables})
	if err != nil {
		return nil, fmt.Errorf("episode %d: %w", ep, err)
	}
	makeCtrls := Controllers
	if cfg.Controllers != nil {
		makeCtrls = cfg.Controllers
	}
	ctrls, err := makeCtrls(sc, w)
	if err != nil {
		return nil, err
	}
	var j *engine.Journal
	if cfg.Recorder != nil {
		if j, err = cfg.Recorder.Begin(ep, w); err != nil {
			return nil, fmt.Errorf("episode %d: %w", ep, err)
		}
	}
	r := &engine.Runner{World: w, Controllers: ctrls, DecisionPeriod: sc.Limits.DecisionPeriod, Workers: cfg.Workers,
		MaxTicks: w.Objective().TimeLimit, Journal: j, OnTick: onTick}
	if cfg.Watch != nil {
		cfg.Watch(ctx, ep, r)
	}
	res, err := r.Run(ctx)
	if res != nil {
		res.Episode = ep
	}
	if cfg.Recorder != nil {
		if rerr := cfg.Recorder.End(ep, w, j, res, err); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("episode %d: %w", ep, err)
	}
	return res, nil
}

// Run runs cfg.Episodes episodes (or cfg.Shard's share of them) on
// cfg.Parallel workers and reports them in episode order. Each episode
// depends only on its own seed, so the report is the same for any number of
// workers and shards. Cancelling ctx stops the episodes under
// way ("stopped") and starts no more; Run then returns what finished with
// ctx's error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Scenario == nil {
		return nil, errors.New("eval: no scenario")
	}
	eps := cfg.Shard.Episodes(max(cfg.Episodes, 1))
	n := len(eps)
	workers := cfg.Parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if cfg.Workers <= 0 {
		cfg.Workers = max(1, runtime.GOMAXPROCS(0)/max(workers, 1)) // an empty shard has no episodes
	}
	results := make([]*engine.Results, n)
	errs := make([]error, n)
	next := make(chan int) // an index into eps
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = Episode(ctx, cfg, eps[i], nil)
				mu.Lock()
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, n)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	var finished []*engine.Results
	for i, res := range results {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if res != nil {
			finished = append(finished, res)
		}
	}
	rep := NewReport(cfg.Scenario.Name, cfg.Seed, finished)
	return rep, ctx.Err()
}
