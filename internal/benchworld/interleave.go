package benchworld

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/world"
)

// Twins configures Interleave: two worlds generated from Options, one run
// on Workers workers and the other on Against, for Ticks ticks each, taking
// turns of Turn ticks, after Warm ticks that each runs alone, untimed.
//
// With AgainstOptions set, the Against side's world is generated from those
// instead (a world of another size, to compare the cost of an agent-step in
// the two: BenchmarkDensity), and runs AgainstTurn ticks a turn, as many
// turns as the other side (the last as short in proportion); the two sides'
// states are then not compared, and an episode that ends before its ticks
// is an error.
type Twins struct {
	Options
	Warm    int
	Ticks   int
	Turn    int // ticks a side runs before the other takes over [DefaultTurn]
	Workers int
	Against int
	// AgainstFirst gives the first turn to the Against side (alternate it
	// between runs, so that no order effect always favours one side).
	AgainstFirst bool
	// AgainstOptions and AgainstTurn [Turn] make the Against side another
	// world.
	AgainstOptions *Options
	AgainstTurn    int
}

// DefaultTurn is Twins.Turn's default.
const DefaultTurn = 25

// Interleaved is what Interleave measured. Time and AgainstTime are the
// sides' wall time in their ticks (the worlds' building, the warm ticks and
// the runs' ends left out; what a run does before its first tick falls in
// each side's first turn), Ticks and AgainstTicks the ticks each ran;
// TurnSpeedups holds, for every pair of turns, the Against side's time per
// agent-step over the Workers side's, sorted.
type Interleaved struct {
	Ticks, AgainstTicks   int
	Agents, AgainstAgents int
	Time                  time.Duration
	AgainstTime           time.Duration
	TurnSpeedups          []float64
	StateHash             string // twins: the same on both sides, or Interleave fails
}

// AgentStepsPerSec is the Workers side's throughput.
func (r Interleaved) AgentStepsPerSec() float64 {
	return float64(r.Ticks) * float64(r.Agents) / r.Time.Seconds()
}

// AgainstAgentStepsPerSec is the Against side's throughput.
func (r Interleaved) AgainstAgentStepsPerSec() float64 {
	return float64(r.AgainstTicks) * float64(r.AgainstAgents) / r.AgainstTime.Seconds()
}

// Speedup is the Workers side's throughput over the Against side's: for
// twins, the Against side's time over the Workers side's; for worlds of
// different sizes, the larger's cost of an agent-step over the smaller's
// when the larger is the Against side.
func (r Interleaved) Speedup() float64 { return r.AgentStepsPerSec() / r.AgainstAgentStepsPerSec() }

// TurnQuartiles are the lower and upper quartiles of TurnSpeedups (nearest
// rank, symmetric: with four turns, the second and the third).
func (r Interleaved) TurnQuartiles() (p25, p75 float64) {
	q := r.TurnSpeedups
	if len(q) == 0 {
		return 0, 0
	}
	return q[len(q)/4], q[len(q)-1-len(q)/4]
}

// Interleave runs the twin worlds in turns, so that whatever else the host
// does in a second or a minute slows both alike: two whole runs one after
// the other can differ by a fifth on a shared host, while the turns of one
// interleaved run share its weather. Only one side runs at a time (the
// other's goroutines wait: a side releases the helpers it woke ahead of its
// next tick before it hands the turn on), and each side's time is counted
// from the start of its turn to the end of the turn's last tick. The twins
// share one heap, but they allocate alike (the same world, the same
// decisions), so the collector's steady work weighs on both alike wherever
// it falls (turning it off moves the speedup by less than the noise); the
// garbage of building the worlds, which took the second core from the
// first turns of the side that needs it, is collected before the turns
// start. The number of workers changes no state, so both sides must end in
// the same state; Interleave fails if they do not.
func Interleave(ctx context.Context, t Twins) (Interleaved, error) {
	if t.Ticks <= 0 {
		return Interleaved{}, errors.New("interleave: no ticks to run")
	}
	turn := t.Turn
	if turn <= 0 {
		turn = DefaultTurn
	}
	opts, turns, ticks := [2]Options{t.Options, t.Options}, [2]int{turn, turn}, [2]int{t.Ticks, t.Ticks}
	twins := t.AgainstOptions == nil
	if !twins {
		opts[1], turns[1] = *t.AgainstOptions, cmp.Or(max(t.AgainstTurn, 0), turn)
		// As many turns, the last one as short in proportion.
		ticks[1] = t.Ticks/turn*turns[1] + (t.Ticks%turn*turns[1]+turn-1)/turn
	}
	var sides [2]twin
	for i, n := range []int{t.Workers, t.Against} {
		w, ctrls, err := New(opts[i])
		if err != nil {
			return Interleaved{}, err
		}
		r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: t.Warm, Workers: n}
		if t.Warm > 0 {
			// The same runner goes on: its workers and scratch are warm too.
			if _, err := r.Run(ctx); err != nil {
				return Interleaved{}, fmt.Errorf("interleave: warm up: %w", err)
			}
			if err := ctx.Err(); err != nil { // Run ends a cancelled run without one
				return Interleaved{}, err
			}
		}
		r.MaxTicks = w.Tick() + ticks[i]
		sides[i] = twin{w: w, r: r, n: ticks[i], turn: turns[i], baton: make(chan struct{}, 1)}
	}
	// Building the worlds left garbage that the collector would otherwise
	// mark and sweep during the first turns, on the core the second worker
	// needs: collect it now, as the testing package does before a benchmark.
	runtime.GC()
	first := 0
	if t.AgainstFirst {
		first = 1
	}
	playTurns(ctx, &sides, first)
	a, b := &sides[0], &sides[1]
	// A run stopped by the context ends without an error of its own.
	if err := errors.Join(a.err, b.err, ctx.Err()); err != nil {
		return Interleaved{}, err
	}
	if !twins && (a.ticks != a.n || b.ticks != b.n) {
		// The side left would run the rest alone, in one turn that pairs
		// with nothing of the other's.
		return Interleaved{}, fmt.Errorf("interleave: an episode ended early (%d of %d ticks, %d of %d): worlds of different sizes are compared over all their ticks",
			a.ticks, a.n, b.ticks, b.n)
	}
	if (twins && a.ticks != b.ticks) || len(a.turns) != len(b.turns) {
		return Interleaved{}, fmt.Errorf("interleave: the sides ran %d and %d ticks in %d and %d turns",
			a.ticks, b.ticks, len(a.turns), len(b.turns))
	}
	res := Interleaved{Ticks: a.ticks, AgainstTicks: b.ticks, Agents: len(a.w.Agents()), AgainstAgents: len(b.w.Agents())}
	if twins {
		res.StateHash = world.FormatHash(a.w.StateHash())
		if h := world.FormatHash(b.w.StateHash()); h != res.StateHash {
			return Interleaved{}, fmt.Errorf("interleave: %d workers ended with state hash %s, %d workers with %s",
				t.Workers, res.StateHash, t.Against, h)
		}
	}
	perStep := func(s *twin, k int) float64 { return s.turns[k].Seconds() / float64(s.turnTicks[k]*len(s.w.Agents())) }
	for k := range a.turns {
		res.Time += a.turns[k]
		res.AgainstTime += b.turns[k]
		res.TurnSpeedups = append(res.TurnSpeedups, perStep(b, k)/perStep(a, k))
	}
	slices.Sort(res.TurnSpeedups)
	return res, nil
}

// sideNames label the goroutines of Interleave's two sides.
var sideNames = [2]string{"this", "against"}

// playTurns runs the two sides' runners in turns of their turn's ticks,
// sides[first] first.
func playTurns(ctx context.Context, sides *[2]twin, first int) {
	sides[0].other, sides[1].other = &sides[1], &sides[0]
	var wg sync.WaitGroup
	for i := range sides {
		// Each side's goroutine is labelled so that a CPU profile of the
		// run tells the two apart (go tool pprof -tagfocus world=against).
		wg.Go(func() { pprof.Do(ctx, pprof.Labels("world", sideNames[i]), sides[i].run) })
	}
	sides[first].pass()
	wg.Wait()
}

// twin is one side of Interleave. It runs while it holds the baton, and
// hands it to the other at the end of each turn and when its run ends.
type twin struct {
	w         *world.World
	r         *engine.Runner
	n         int // ticks to run
	turn      int // ticks a turn
	baton     chan struct{}
	other     *twin
	done      atomic.Bool // its run is over: the other side no longer waits for it
	ticks     int
	turns     []time.Duration // the wall time of each turn
	turnTicks []int           // and its ticks
	err       error
}

// pass gives s the baton. A baton already waiting for it (a cancelled
// run's, or one passed to a side that has ended) is enough: pass never
// blocks.
func (s *twin) pass() {
	select {
	case s.baton <- struct{}{}:
	default:
	}
}

// run plays s's runner: it waits for the baton before the first tick and,
// handing it over, at the end of every turn but the last.
func (s *twin) run(ctx context.Context) {
	defer func() {
		s.done.Store(true)
		s.other.pass()
	}()
	select {
	case <-s.baton:
	case <-ctx.Done():
		s.err = ctx.Err()
		return
	}
	start := time.Now()
	var last time.Time       // the end of the last tick
	inTurn := 0              // ticks run since start
	s.r.OmitDecisions = true // OnTick only counts ticks
	s.r.OnTick = func(*engine.TickRecord) {
		last = time.Now()
		s.ticks++
		inTurn++
		if s.ticks%s.turn != 0 || s.ticks == s.n || s.other.done.Load() {
			return
		}
		s.turns, s.turnTicks = append(s.turns, last.Sub(start)), append(s.turnTicks, inTurn)
		s.r.ReleaseHelpers() // no spinning into the other side's turn
		s.other.pass()
		select {
		case <-s.baton:
		case <-ctx.Done(): // the run stops before its next tick
		}
		start, inTurn = time.Now(), 0
	}
	_, s.err = s.r.Run(ctx)
	if inTurn > 0 { // an episode may end on a turn's boundary
		s.turns, s.turnTicks = append(s.turns, last.Sub(start)), append(s.turnTicks, inTurn)
	}
}
