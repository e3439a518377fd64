package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// Config is an episode played in this process, with one agent slot played
// over MCP and the others by the scenario's built-in bots, in lockstep: the
// world waits for the MCP client as long as it takes.
type Config struct {
	Scenario *scenarios.Scenario
	Agents   int    // agent slots [the scenario's count]
	Slot     string // the slot the client plays ["agent_001"]
	Seed     uint64 // the episode's public seed, as `arena run --seed` [1]
	// SecretSeed seeds hidden information (a role deal); the client is an
	// agent, so it must not be derivable from anything it sees [fresh,
	// engine.FreshSeed, recorded in the replay and results.json].
	SecretSeed uint64
	Ticks      int // replaces the scenario's time limit when positive
	// Recorder, when set, writes the replay and results as `arena run` does.
	Recorder engine.Recorder
	// ProgressEvery is how often a call that waits reports progress [1s].
	ProgressEvery time.Duration
	Log           *slog.Logger
}

// Local is an episode under way in this process with one seat for an MCP
// client.
type Local struct {
	seat   *seat
	cancel context.CancelFunc
	done   chan struct{}
	res    *engine.Results
	err    error
	log    *slog.Logger
}

// Start builds the world and starts the episode; the built-in bots play at
// once and the world waits for the MCP client's first decision. Cancelling
// ctx (or Close) stops the episode ("stopped"), which is then recorded as
// far as it went.
func Start(ctx context.Context, cfg Config) (*Local, error) {
	if cfg.Scenario == nil {
		return nil, errors.New("mcp: no scenario")
	}
	if cfg.Slot == "" {
		cfg.Slot = "agent_001"
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.SecretSeed == 0 {
		cfg.SecretSeed = engine.FreshSeed()
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &Local{cancel: cancel, done: make(chan struct{}), log: log}
	ready := make(chan *local, 1)
	var ctl *local
	ecfg := eval.Config{Scenario: cfg.Scenario, Seed: cfg.Seed, SecretSeed: cfg.SecretSeed, Agents: cfg.Agents, Ticks: cfg.Ticks, Recorder: cfg.Recorder,
		Controllers: func(sc *scenarios.Scenario, w *world.World) (map[string]engine.Controller, error) {
			ctrls, err := eval.Controllers(sc, w)
			if err != nil {
				return nil, err
			}
			if w.Agent(cfg.Slot) == nil {
				ids := make([]string, 0, len(w.Agents()))
				for _, a := range w.Agents() {
					ids = append(ids, a.ID)
				}
				return nil, fmt.Errorf("scenario %s has no agent slot %q (slots: %s)", sc.Name, cfg.Slot, strings.Join(ids, ", "))
			}
			reg, err := tools.ForWorld(w)
			if err != nil {
				return nil, err
			}
			ctl = &local{agent: cfg.Slot, w: w, reg: reg, limit: sc.ToolCallLimit(), decisions: make(chan world.Decision),
				queries: make(chan func()), done: l.done}
			ctl.seat = newSeat(cfg.Slot, "lockstep", reg.Specs(), ctl, cfg.ProgressEvery)
			ctrls[cfg.Slot] = ctl
			ready <- ctl
			return ctrls, nil
		}}
	go func() {
		res, err := eval.Episode(ctx, ecfg, 1, func(*engine.TickRecord) {
			if ctl != nil {
				ctl.afterTick()
			}
		})
		l.res, l.err = res, err
		if ctl != nil {
			// The world is still now: its last observation is safe to build.
			var last *snapshot
			if a := ctl.w.Agent(ctl.agent); a != nil {
				last = snap(ctl.w.Observe(a))
			}
			if err != nil {
				ctl.seat.disconnect(err)
			} else {
				ctl.seat.endEpisode(1, res, last, true)
			}
		}
		close(l.done)
	}()
	select {
	case c := <-ready:
		l.seat = c.seat
		return l, nil
	case <-l.done:
		cancel()
		if l.err == nil {
			l.err = errors.New("the episode ended before it started")
		}
		return nil, l.err
	}
}

// Server is a new MCP server for the episode's seat. Serve it on one
// transport: every session plays the same agent.
func (l *Local) Server() *gomcp.Server { return newServer(l.seat, l.log) }

// Close stops the episode if it is still under way, and the seat's
// notifications.
func (l *Local) Close() {
	l.cancel()
	l.seat.close()
}

// Wait waits for the episode to end and returns its results.
func (l *Local) Wait() (*engine.Results, error) {
	<-l.done
	return l.res, l.err
}

// ServeStdio plays cfg's episode for one MCP client over in and out
// (newline-delimited JSON-RPC, as MCP's stdio transport has it), until the
// client disconnects; an episode still under way then stops. It returns the
// episode's results.
func ServeStdio(ctx context.Context, cfg Config, in io.ReadCloser, out io.WriteCloser) (*engine.Results, error) {
	l, err := Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	serr := l.Server().Run(ctx, &gomcp.IOTransport{Reader: in, Writer: out})
	l.Close()
	res, err := l.Wait()
	if err == nil && serr != nil && ctx.Err() == nil && !errors.Is(serr, io.EOF) {
		err = fmt.Errorf("mcp session: %w", serr)
	}
	return res, err
}

// local is the in-process backend: the engine's controller of the seat's
// agent. Decide runs on the world's goroutine; it hands the seat the
// observation and waits for the client's decision, running the client's
// queries there meanwhile, since the world is not safe for concurrent use.
type local struct {
	agent     string
	seat      *seat
	w         *world.World
	reg       *tools.Registry
	limit     int // queries per observation
	asked     int
	dead      bool
	decisions chan world.Decision
	queries   chan func()
	done      chan struct{} // the episode has ended
}

// Decide implements engine.Controller.
func (c *local) Decide(ctx context.Context, o *world.Observation) world.Decision {
	c.asked = 0
	c.seat.publish(snap(o))
	for {
		select {
		case d := <-c.decisions:
			return d
		case q := <-c.queries:
			q()
		case <-ctx.Done():
			return world.Decision{}
		}
	}
}

// afterTick tells the seat, once, that its agent died (the runner asks dead
// agents for nothing more).
func (c *local) afterTick() {
	if a := c.w.Agent(c.agent); !c.dead && a != nil && !a.Alive {
		c.dead = true
		c.seat.publish(snap(c.w.Observe(a)))
	}
}

func (c *local) decide(ctx context.Context, _ int, d world.Decision) error {
	select {
	case c.decisions <- d:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return errBackendGone
	}
}

func (c *local) query(ctx context.Context, tool string, params map[string]any) (world.ActionResult, error) {
	ch := make(chan world.ActionResult, 1)
	run := func() {
		if c.asked >= c.limit {
			ch <- world.Fail(tool, world.CodeLimitExceeded, "%d queries were already made for this observation (the limit, failed calls included)", c.limit)
			return
		}
		c.asked++
		ch <- c.reg.Execute(c.w, c.agent, tool, params, true)
	}
	select {
	case c.queries <- run:
		return <-ch, nil
	case <-ctx.Done():
		return world.ActionResult{}, ctx.Err()
	case <-c.done:
		return world.ActionResult{}, errBackendGone
	}
}

func (c *local) close() {}
