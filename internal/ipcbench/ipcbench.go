// Package ipcbench measures the lockstep server over a Unix socket: a real
// server.Server with N client slots, played by N lean clients in the same
// process, and, for comparison, a bare Unix-socket echo of frames of the same
// sizes with the same concurrency pattern. `go test -bench Lockstep100 ./server/`
// and `arena bench --ipc` both run it.
//
// What is measured (docs/performance.md, "Lockstep over a Unix socket"):
//
//   - Decisions per second: Rounds × Agents decisions divided by the wall time
//     from the moment every client holds the observation of tick 0 to the
//     moment every client has read the observation of tick Rounds.
//   - The per-decision round trip, measured at each client: from the return of
//     the write of its decision for tick t to the return of the read of the
//     (whole) observation of tick t+1. It is the time an agent waits on the
//     server: the other agents' decisions, decoding them, applying them, the
//     world step, building and encoding the observations, and moving the bytes.
//   - The echo is measured the same way, by the same client code: a bare
//     "server" writes to each of the N connections a frame of the size of that
//     agent's observation (the observation bytes captured in the lockstep run),
//     waits until it has read a reply from every connection, and starts again.
//     Its round trip is the floor that moving the same bytes with the same
//     lockstep pattern costs, with no world and no protocol work.
//
// The clients parse each observation's type, tick and position (skipping the
// rest of the map) and answer with a decision: a move_to 3 to 6 units away in
// a random direction every 8th decision (staggered across agents, so 1/8 of
// the agents start a move each tick, and most agents are walking at any time),
// idle otherwise.
package ipcbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/server"
	"github.com/fxamacker/cbor/v2"
)

// Options configure a run. Zero fields take the defaults in brackets.
type Options struct {
	Agents int    // client slots and clients [100]
	Rounds int    // measured decisions per agent (lockstep ticks, echo rounds) [1]
	Seed   uint64 // the world's seed [1]
	// Spacing, when positive, sets the agents this far apart on a field
	// grown to hold them, so that each sees as many others at any count;
	// by default they share the 100×100 field (see Scenario).
	Spacing float64
	// Turns, when positive, has Repeat measure each pair in one run of
	// Turns: the lockstep and the echo taking turns of this many rounds.
	Turns int
	// Dir holds the Unix sockets [a new temporary folder, removed afterwards].
	Dir string
	// OnStart and OnStop, when set, are called just before and just after the
	// measured part (a benchmark starts and stops its timer there).
	OnStart, OnStop func()
}

func (o Options) withDefaults() Options {
	if o.Agents <= 0 {
		o.Agents = 100
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// withDir gives o a new temporary folder for its sockets if it names none;
// done removes it.
func (o *Options) withDir() (done func(), err error) {
	if o.Dir != "" {
		return func() {}, nil
	}
	if o.Dir, err = os.MkdirTemp("", "arena-ipcbench"); err != nil {
		return nil, err
	}
	dir := o.Dir
	return func() { os.RemoveAll(dir) }, nil
}

// Stats are the figures of one run.
type Stats struct {
	Agents, Rounds int
	Elapsed        time.Duration // the measured part
	// DecisionsPerSec is Agents × Rounds / Elapsed.
	DecisionsPerSec float64
	// RTTP50 and RTTP99 are percentiles over every round trip of every client
	// (Agents × Rounds samples).
	RTTP50, RTTP99 time.Duration
	// CPUPerDecision is the CPU time (user and system, of the whole process:
	// server and clients) of the measured part divided by its decisions.
	CPUPerDecision time.Duration
	// ObsBytes and DecisionBytes are the mean sizes of the frames the clients
	// read and wrote in the measured part, length headers included.
	ObsBytes, DecisionBytes float64
}

// Result is a lockstep run and the echo measured right after it.
type Result struct {
	Lockstep, Echo Stats
	// DecisionsRatio is the lockstep's decisions per second over the echo's
	// (issue 19's target: at least 0.7); RTTRatioP50 and RTTRatioP99, its
	// round-trip percentiles over the echo's.
	DecisionsRatio float64 `json:"decisions_ratio"`
	RTTRatioP50    float64 `json:"rtt_ratio_p50"`
	RTTRatioP99    float64 `json:"rtt_ratio_p99"`
}

// Compare puts a lockstep run and its echo together, with their ratios.
func Compare(lock, echo *Stats) *Result {
	return &Result{Lockstep: *lock, Echo: *echo, DecisionsRatio: lock.DecisionsPerSec / echo.DecisionsPerSec,
		RTTRatioP50: float64(lock.RTTP50) / float64(echo.RTTP50), RTTRatioP99: float64(lock.RTTP99) / float64(echo.RTTP99)}
}

// Ratios of the lockstep round trip to the echo's.
func (r *Result) Ratios() (p50, p99 float64) { return r.RTTRatioP50, r.RTTRatioP99 }

// Run measures lockstep, then the echo with the observation frames lockstep
// produced.
func Run(ctx context.Context, opt Options) (*Result, error) {
	rs, err := Repeat(ctx, opt, 1, nil)
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// Repeat measures n pairs of a lockstep run and an echo run, alternating
// which of the two goes first (lockstep then echo, echo then lockstep, ...),
// so that a host that gets slower or faster during the runs does not always
// favour the same one. Every echo moves the frames of the first lockstep
// run. profile, when set, is called around the measured part of each run
// (lockstep or not) with the run's index in the pair: it returns the
// functions to call at its start and end (a CPU profile of each, say).
// With opt.Turns, each pair is one run of Turns instead, and profile is
// called for it as for a lockstep run.
func Repeat(ctx context.Context, opt Options, n int, profile func(pair int, lockstep bool) (start, stop func())) ([]*Result, error) {
	opt = opt.withDefaults()
	done, err := opt.withDir()
	if err != nil {
		return nil, err
	}
	defer done()
	with := func(pair int, lockstep bool) Options {
		o := opt
		if profile != nil {
			o.OnStart, o.OnStop = profile(pair, lockstep)
		}
		return o
	}
	var frames [][]byte
	lock := func(pair int) (*Stats, error) {
		st, f, err := Lockstep(ctx, with(pair, true))
		if frames == nil {
			frames = f
		}
		return st, err
	}
	echo := func(pair int) (*Stats, error) { return Echo(ctx, with(pair, false), frames) }
	var out []*Result
	if opt.Turns > 0 {
		for pair := range max(n, 1) {
			r, err := Turns(ctx, with(pair, true))
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	for pair := range max(n, 1) {
		var l, e *Stats
		var err error
		if pair%2 == 0 || frames == nil {
			if l, err = lock(pair); err == nil {
				e, err = echo(pair)
			}
		} else if e, err = echo(pair); err == nil {
			l, err = lock(pair)
		}
		if err != nil {
			return out, err
		}
		out = append(out, Compare(l, e))
	}
	return out, nil
}

// Median is the median of each figure over results (the mean of the two
// middle ones for an even count), each figure on its own: the median
// ratio is not the ratio of the medians.
func Median(results []*Result) Result {
	var m Result
	med := func(get func(*Result) float64) float64 {
		v := make([]float64, len(results))
		for i, r := range results {
			v[i] = get(r)
		}
		slices.Sort(v)
		if len(v) == 0 {
			return 0
		}
		return (v[(len(v)-1)/2] + v[len(v)/2]) / 2
	}
	dur := func(get func(*Result) time.Duration) time.Duration {
		return time.Duration(med(func(r *Result) float64 { return float64(get(r)) }))
	}
	for _, side := range []struct {
		st  *Stats
		get func(*Result) *Stats
	}{{&m.Lockstep, func(r *Result) *Stats { return &r.Lockstep }}, {&m.Echo, func(r *Result) *Stats { return &r.Echo }}} {
		g := side.get
		*side.st = Stats{
			DecisionsPerSec: med(func(r *Result) float64 { return g(r).DecisionsPerSec }),
			RTTP50:          dur(func(r *Result) time.Duration { return g(r).RTTP50 }),
			RTTP99:          dur(func(r *Result) time.Duration { return g(r).RTTP99 }),
			CPUPerDecision:  dur(func(r *Result) time.Duration { return g(r).CPUPerDecision }),
			Elapsed:         dur(func(r *Result) time.Duration { return g(r).Elapsed }),
			ObsBytes:        med(func(r *Result) float64 { return g(r).ObsBytes }),
			DecisionBytes:   med(func(r *Result) float64 { return g(r).DecisionBytes }),
		}
		if len(results) > 0 {
			side.st.Agents, side.st.Rounds = g(results[0]).Agents, g(results[0]).Rounds
		}
	}
	m.DecisionsRatio = med(func(r *Result) float64 { return r.DecisionsRatio })
	m.RTTRatioP50 = med(func(r *Result) float64 { return r.RTTRatioP50 })
	m.RTTRatioP99 = med(func(r *Result) float64 { return r.RTTRatioP99 })
	return m
}

// Scenario is the benchmark's world for n agents: an open 100×100 field with
// cell size 0.5, a grid of trees and rocks, two walls, 48 resources, two
// workbenches and four harmless mud patches (hazards that paths avoid), and
// the agents on a grid over the field: 9 units apart for 100 agents, so that
// each sees about four others (perception radius 10), as in the world-step
// benchmark, and closer for more (2.8 units apart for 1,000: each sees about
// 40). With spacing > 0 the agents are that far apart instead, on a field
// grown to hold them (the rest stays in its middle 100×100). Grid points on
// a wall are left out, and the grid has as many more columns as that takes.
func Scenario(n int, spacing float64) (*scenarios.Scenario, error) {
	var sb strings.Builder
	list := func(items []string) string { return strings.Join(items, ",\n    ") }
	type point struct{ x, z float64 }
	var taken []point // spawns, resources and stations: obstacles keep clear of them
	clear := func(x, z, r float64) bool {
		for _, p := range taken {
			if math.Hypot(p.x-x, p.z-z) < r+1.5 {
				return false
			}
		}
		return true
	}
	var obstacles, resources, spawns []string
	// The walls, as boxes: centre and size.
	walls := []struct{ x, z, w, d float64 }{{-20, 5, 1, 12}, {25, -20, 14, 1}}
	onWall := func(x, z float64) bool { // as the scenario's validation has it
		for _, b := range walls {
			if math.Abs(x-b.x) < b.w/2 && math.Abs(z-b.z) < b.d/2 {
				return true
			}
		}
		return false
	}
	side := int(math.Ceil(math.Sqrt(float64(n))))
	step, size := 90.0/float64(side), 100.0
	if spacing > 0 {
		step = spacing
	}
	half := step * float64(side) / 2
	for cols := side; len(spawns) < n; cols++ {
		spawns, taken = spawns[:0], taken[:0]
		for k := 0; len(spawns) < n && k < cols*side; k++ {
			x, z := -half+step*(float64(k%cols)+0.5), -half+step*(float64(k/cols)+0.5)
			if onWall(x, z) {
				continue
			}
			spawns = append(spawns, fmt.Sprintf("[%g, 0, %g]", x, z))
			taken = append(taken, point{x, z})
		}
		if spacing > 0 {
			size = max(100, spacing*float64(cols)+10)
		}
	}
	types := []string{"berry", "wood", "stone", "mushroom"}
	for k := 0; k < 48; k++ {
		x, z := -42+float64(k%8)*12, -42+float64(k/8)*16.5
		resources = append(resources, fmt.Sprintf(`{"name": "R%d", "type": "%s", "position": [%g, 0, %g], "respawn_ticks": 100}`, k+1, types[k%4], x, z))
		taken = append(taken, point{x, z})
	}
	taken = append(taken, point{-30, 30}, point{30, -30})
	for i := 0; i < 10; i++ {
		for j := 0; j < 10; j++ {
			x, z := -45+10*float64(i), -45+10*float64(j)
			switch {
			case (i+j)%3 == 0 && clear(x+1, z-1, 1.2):
				obstacles = append(obstacles, fmt.Sprintf(`{"name": "Rock%d_%d", "type": "rock", "position": [%g, 0, %g], "shape": "circle", "radius": 1.2}`, i, j, x+1, z-1))
			case (i+j)%3 != 0 && clear(x, z, 0.7):
				obstacles = append(obstacles, fmt.Sprintf(`{"name": "Tree%d_%d", "type": "tree", "position": [%g, 0, %g], "shape": "circle", "radius": 0.7}`, i, j, x, z))
			}
		}
	}
	for i, b := range walls {
		obstacles = append(obstacles, fmt.Sprintf(`{"name": "Wall%d", "type": "wall", "position": [%g, 0, %g], "shape": "box", "size": [%g, %g]}`, i+1, b.x, b.z, b.w, b.d))
	}
	fmt.Fprintf(&sb, `{
  "name": "ipcbench",
  "description": "Benchmark field: %d agents on an open 100x100 field with trees, rocks, resources and mud.",
  "size": [%g, %g],
  "cell_size": 0.5,
  "tick_rate": 10,
  "rules": {"perception_radius": 10, "inventory_capacity": 50},
  "items": [{"name": "berry", "type": "food"}, {"name": "wood", "type": "material"},
            {"name": "stone", "type": "material"}, {"name": "mushroom", "type": "food"}, {"name": "torch", "type": "tool"}],
  "recipes": [{"output": "torch", "inputs": {"wood": 1, "stone": 1}, "station_type": "workbench", "ticks": 1}],
  "stations": [{"name": "Workbench1", "type": "workbench", "position": [-30, 0, 30]},
               {"name": "Workbench2", "type": "workbench", "position": [30, 0, -30]}],
  "obstacles": [
    %s
  ],
  "resources": [
    %s
  ],
  "hazards": [
    {"name": "Mud1", "type": "mud", "position": [-30, 0, -10], "radius": 2},
    {"name": "Mud2", "type": "mud", "position": [10, 0, 32], "radius": 2},
    {"name": "Mud3", "type": "mud", "position": [33, 0, 8], "radius": 2},
    {"name": "Mud4", "type": "mud", "position": [-8, 0, -33], "radius": 2}
  ],
  "agents": {"count": %d, "max": %d, "spawns": [%s]},
  "limits": {"max_ticks": 1000000},
  "objective": {
    "description": "Collect 10 resources.",
    "success_metrics": {"resources_collected": {"target": 10, "weight": 1, "required": true}},
    "time_limit": 1000000
  }
}
`, n, size, size, list(obstacles), list(resources), n, n, strings.Join(spawns, ", "))
	return scenarios.Parse("ipcbench.json", []byte(sb.String()))
}

// Lockstep runs a lockstep server for opt.Agents clients over a Unix socket
// for opt.Rounds measured ticks. It also returns each client's last
// observation frame (header included), for Echo.
func Lockstep(ctx context.Context, opt Options) (*Stats, [][]byte, error) {
	opt = opt.withDefaults()
	done, err := opt.withDir()
	if err != nil {
		return nil, nil, err
	}
	defer done()
	// Ticks 0..Rounds are decision points: the decisions of ticks 0..Rounds-1
	// are measured; the last one only lets the episode end.
	srv, err := newServer(opt, opt.Rounds+1)
	if err != nil {
		return nil, nil, err
	}
	addr := "unix:" + filepath.Join(opt.Dir, "lockstep.sock")
	l, err := ipc.Listen(ctx, addr)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		_, err := srv.Serve(ctx, l)
		served <- err
	}()
	st, clients, err := measure(ctx, opt, addr, func(c *client) error {
		return c.send(map[string]any{"type": "hello", "protocol": ipc.ProtocolVersion, "role": "agent"})
	})
	if err != nil {
		cancel()
		<-served
		return nil, nil, err
	}
	if err := <-served; err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	frames := make([][]byte, len(clients))
	for i, c := range clients {
		frames[i] = c.lastObs
	}
	return st, frames, nil
}

// newServer is the benchmark's lockstep server: opt.Agents slots on the
// benchmark's field (Scenario), for ticks ticks.
func newServer(opt Options, ticks int) (*server.Server, error) {
	sc, err := Scenario(opt.Agents, opt.Spacing)
	if err != nil {
		return nil, err
	}
	return server.New(server.Options{Scenario: sc, Seed: opt.Seed, Agents: opt.Agents, Mode: "lockstep",
		Ticks: ticks, DecisionTimeout: time.Minute, Log: slog.New(slog.DiscardHandler)})
}

// Echo runs the bare echo: for opt.Rounds+1 rounds, a server writes frames[i]
// to connection i (in the order they were accepted), for every i, then reads
// one frame from every connection. frames hold the header too.
func Echo(ctx context.Context, opt Options, frames [][]byte) (*Stats, error) {
	opt = opt.withDefaults()
	if len(frames) != opt.Agents {
		return nil, fmt.Errorf("echo: %d frames for %d agents", len(frames), opt.Agents)
	}
	done, err := opt.withDir()
	if err != nil {
		return nil, err
	}
	defer done()
	addr := "unix:" + filepath.Join(opt.Dir, "echo.sock")
	l, err := ipc.Listen(ctx, addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- echoServe(ctx, l, frames, opt.Rounds+1) }()
	st, _, err := measure(ctx, opt, addr, nil)
	if err != nil {
		cancel()
		l.Close()
		<-served
		return nil, err
	}
	if err := <-served; err != nil {
		return nil, fmt.Errorf("echo server: %w", err)
	}
	return st, nil
}

func echoServe(ctx context.Context, l net.Listener, frames [][]byte, rounds int) error {
	defer l.Close()
	n := len(frames)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	for len(conns) < n {
		nc, err := l.Accept()
		if err != nil {
			return err
		}
		conns = append(conns, nc)
	}
	replies := make(chan error, n)
	for _, nc := range conns {
		go func() {
			r := bufio.NewReaderSize(nc, 64<<10)
			var buf []byte
			for {
				f, err := ipc.ReadFrame(r, ipc.DefaultMaxFrame, buf)
				if err != nil {
					if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
						replies <- err
					}
					return
				}
				buf = f
				replies <- nil
			}
		}()
	}
	for range rounds {
		treg := trace.StartRegion(ctx, "tick")
		oreg := trace.StartRegion(ctx, "observe")
		for i, nc := range conns {
			if _, err := nc.Write(frames[i]); err != nil {
				return err
			}
		}
		oreg.End()
		greg := trace.StartRegion(ctx, "gather")
		for range n {
			select {
			case err := <-replies:
				if err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		greg.End()
		treg.End()
	}
	return nil
}

// measure connects opt.Agents clients, lets each say hello (when set), waits
// until every one has read its first observation, then releases them all and
// times opt.Rounds decisions each.
func measure(ctx context.Context, opt Options, addr string, hello func(*client) error) (*Stats, []*client, error) {
	n := opt.Agents
	ready := make(chan struct{}, n)
	finished := make(chan time.Time, n)
	release := make(chan struct{})
	f, err := connect(ctx, opt, addr, hello, func(c *client) {
		c.finished = finished
		c.gate = func(k int) error {
			if k != 0 {
				return nil
			}
			ready <- struct{}{}
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if err := f.await(ctx, ready); err != nil {
		return nil, nil, f.stop(err)
	}
	if opt.OnStart != nil {
		opt.OnStart()
	}
	cpu0 := cpuTime()
	start := time.Now()
	close(release)
	var end time.Time
	for range n {
		select {
		case t := <-finished:
			if t.After(end) {
				end = t
			}
		case err := <-f.errs:
			return nil, nil, f.stop(err)
		case <-ctx.Done():
			return nil, nil, f.stop(ctx.Err())
		}
	}
	cpu := cpuTime() - cpu0
	if opt.OnStop != nil {
		opt.OnStop()
	}
	if err := f.wait(); err != nil {
		return nil, nil, err
	}
	st := f.stats(end.Sub(start), cpu)
	return st, f.clients, nil
}

// fleet is one run's clients, each playing on a goroutine of its own.
type fleet struct {
	clients []*client
	rounds  int // the decisions measured of each
	errs    chan error
	wg      sync.WaitGroup
}

// connect dials opt.Agents clients to addr, lets each say hello (when set)
// and starts each playing once prepare has set its gate (and finished).
func connect(ctx context.Context, opt Options, addr string, hello func(*client) error, prepare func(*client)) (*fleet, error) {
	n := opt.Agents
	f := &fleet{clients: make([]*client, n), rounds: opt.Rounds, errs: make(chan error, n)}
	// With a hello, at most maxConnecting clients between dialling and
	// their first frame from the server, which it sends once their hello is
	// read: a server holds only so many connections that have not said
	// hello (server.Options.MaxUnauthenticated), and dialling a thousand at
	// once outran it. The echo writes to none before all are connected.
	connecting := make(chan struct{}, maxConnecting)
	if hello == nil {
		connecting = make(chan struct{}, n)
	}
	for i := range f.clients {
		select {
		case connecting <- struct{}{}:
		case err := <-f.errs:
			return nil, f.stop(err)
		case <-ctx.Done():
			return nil, f.stop(ctx.Err())
		}
		nc, err := ipc.Dial(ctx, addr)
		if err != nil {
			return nil, f.stop(err)
		}
		c := newClient(i, nc, opt.Rounds)
		c.connected = func() { <-connecting }
		prepare(c)
		f.clients[i] = c
		if hello != nil {
			if err := hello(c); err != nil {
				return nil, f.stop(err)
			}
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer c.nc.Close()
			if err := c.play(); err != nil {
				f.errs <- fmt.Errorf("client %d: %w", c.idx, err)
			}
		}()
	}
	return f, nil
}

// await waits for one signal on ch from every client, or a client's error.
func (f *fleet) await(ctx context.Context, ch <-chan struct{}) error {
	for range f.clients {
		select {
		case <-ch:
		case err := <-f.errs:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// stop closes the clients connected so far, waits for them and returns err.
func (f *fleet) stop(err error) error {
	for _, c := range f.clients {
		if c != nil {
			c.nc.Close()
		}
	}
	f.wg.Wait()
	return err
}

// wait waits for every client to end, and returns the first error.
func (f *fleet) wait() error {
	f.wg.Wait()
	select {
	case err := <-f.errs:
		return err
	default:
		return nil
	}
}

// stats are the fleet's figures for the measured part: elapsed of wall time
// and cpu of the process's.
func (f *fleet) stats(elapsed, cpu time.Duration) *Stats {
	n := len(f.clients)
	st := &Stats{Agents: n, Rounds: f.rounds, Elapsed: elapsed}
	st.DecisionsPerSec = float64(n*f.rounds) / st.Elapsed.Seconds()
	st.CPUPerDecision = cpu / time.Duration(n*f.rounds)
	var rtts []time.Duration
	var obs, dec, obsN, decN int
	for _, c := range f.clients {
		rtts = append(rtts, c.rtts...)
		obs, dec, obsN, decN = obs+c.obsBytes, dec+c.decBytes, obsN+c.obsN, decN+c.decN
	}
	slices.Sort(rtts)
	st.RTTP50, st.RTTP99 = percentile(rtts, 0.50), percentile(rtts, 0.99)
	st.ObsBytes, st.DecisionBytes = float64(obs)/float64(max(obsN, 1)), float64(dec)/float64(max(decN, 1))
	return st
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// codec encodes the clients' messages (Core Deterministic, like the server).
var codec = func() *ipc.Codec {
	c, err := ipc.NewCodec(ipc.Limits{})
	if err != nil {
		panic(err)
	}
	return c
}()

// client is a lean protocol client: it reads frames through a buffer, parses
// only what it needs, and writes each decision with one write.
type client struct {
	idx    int
	nc     net.Conn
	r      *bufio.Reader
	rounds int
	rng    *rand.Rand
	buf    []byte // the frame being read
	out    []byte // the frame being written
	seen   int    // observations read
	last   time.Time
	rtts   []time.Duration

	// from: observations 1 to from are not measured (warming up);
	// lastObs is the frame of observation capture (rounds unless set).
	from, capture                  int
	lastObs                        []byte
	obsBytes, decBytes, obsN, decN int
	connected                      func() // called once its first frame is read (measure)
	// gate, called with each observation's number before the client
	// answers it, holds it back while it is not its run's turn (measure,
	// Turns); finished, when set, gets the time observation rounds was read.
	gate     func(k int) error
	finished chan<- time.Time
}

func newClient(idx int, nc net.Conn, rounds int) *client {
	return &client{idx: idx, nc: nc, r: bufio.NewReaderSize(nc, 64<<10), rounds: rounds, capture: rounds,
		rng: rand.New(rand.NewPCG(uint64(idx), 0x1bc)), rtts: make([]time.Duration, 0, rounds)}
}

// incoming is what the client reads of a server message.
type incoming struct {
	Type        string `cbor:"type"`
	Tick        int    `cbor:"tick"`
	Code        string `cbor:"code"`
	Message     string `cbor:"message"`
	Observation struct {
		Position [3]float64 `cbor:"position"`
	} `cbor:"observation"`
}

type decision struct {
	Type   string      `cbor:"type"`
	Tick   int         `cbor:"tick"`
	Tool   string      `cbor:"tool"`
	Params *moveParams `cbor:"params,omitempty"`
}

type moveParams struct {
	TargetX float64 `cbor:"target_x"`
	TargetZ float64 `cbor:"target_z"`
}

// maxConnecting is how many clients may be connecting at once (measure).
const maxConnecting = 64

// connect reports, once, that the client is through connecting.
func (c *client) connect() {
	if c.connected != nil {
		c.connected()
		c.connected = nil
	}
}

func (c *client) send(v any) error {
	b, err := codec.Marshal(v)
	if err != nil {
		return err
	}
	c.out = ipc.AppendFrame(c.out[:0], b)
	_, err = c.nc.Write(c.out)
	return err
}

// play answers observations until the episode ends or the server closes the
// connection. It passes each observation's number (counting from 0) through
// its gate before answering, and reports to finished (when set) when it has
// read observation number rounds.
func (c *client) play() error {
	defer c.connect()
	for {
		f, err := ipc.ReadFrame(c.r, ipc.DefaultMaxFrame, c.buf)
		now := time.Now()
		c.connect()
		if err != nil {
			if errors.Is(err, io.EOF) && c.seen > c.rounds {
				return nil
			}
			return err
		}
		c.buf = f
		var m incoming
		if err := parseHead(f, &m); err != nil {
			return err
		}
		if m.Type == "error" { // the rest of the message, the slow way
			if err := cbor.Unmarshal(f, &m); err != nil {
				return err
			}
		}
		switch m.Type {
		case "observation":
		case "episode_end":
			if c.seen <= c.rounds {
				return fmt.Errorf("episode ended after %d observations", c.seen)
			}
			return nil
		case "error":
			return fmt.Errorf("server error %s: %s", m.Code, m.Message)
		default: // welcome, episode_start
			continue
		}
		k := c.seen
		c.seen++
		measured := k > c.from && k <= c.rounds
		if measured {
			c.rtts = append(c.rtts, now.Sub(c.last))
			c.obsBytes += 4 + len(f)
			c.obsN++
		}
		if k == c.capture {
			c.lastObs = ipc.AppendFrame(nil, f)
		}
		if k == c.rounds && c.finished != nil {
			c.finished <- now
		}
		if err := c.gate(k); err != nil {
			return err
		}
		d := decision{Type: "decision", Tick: m.Tick, Tool: "idle"}
		if (k+c.idx)%8 == 0 {
			a, r := c.rng.Float64()*2*math.Pi, 3+3*c.rng.Float64()
			p := m.Observation.Position
			d.Tool = "move_to"
			d.Params = &moveParams{TargetX: clamp(p[0]+r*math.Cos(a), 48), TargetZ: clamp(p[2]+r*math.Sin(a), 48)}
		}
		if err := c.send(d); err != nil {
			return err
		}
		c.last = time.Now()
		if k >= c.from && k < c.rounds {
			c.decBytes += len(c.out)
			c.decN++
		}
	}
}

func clamp(v, lim float64) float64 { return min(max(v, -lim), lim) }
