package benchworld

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// TestInterleaveTwinsEndAlike: two workers against one on twin worlds, in
// turns that do not divide the ticks: both sides run every tick, every pair
// of turns is timed, and they end in the state of a run left alone.
func TestInterleaveTwinsEndAlike(t *testing.T) {
	opt := Options{Seed: 5, Agents: 60, Size: 64}
	start := time.Now()
	res, err := Interleave(context.Background(), Twins{Options: opt, Warm: 4, Ticks: 203, Turn: 5, Workers: 2, Against: 1})
	wall := time.Since(start)
	require.NoError(t, err)
	require.LessOrEqual(t, res.Time+res.AgainstTime, wall, "no side counts the other's turns")
	require.Equal(t, 203, res.Ticks)
	require.Equal(t, 60, res.Agents)
	require.Len(t, res.TurnSpeedups, 41) // 40 turns of 5, then 3
	require.Positive(t, res.Time)
	require.Positive(t, res.AgainstTime)
	require.InDelta(t, res.AgainstTime.Seconds()/res.Time.Seconds(), res.Speedup(), 1e-12)
	require.IsNonDecreasing(t, res.TurnSpeedups)

	w, ctrls, err := New(opt)
	require.NoError(t, err)
	_, err = (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: 207, Workers: 1}).Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, world.FormatHash(w.StateHash()), res.StateHash)
}

// TestInterleaveEpisodeEndingEarly: an episode that ends before the ticks
// asked for (every forager met the objective at tick 695) ends both sides
// there, in the middle of a turn or on its boundary, with as many turns on
// each side.
func TestInterleaveEpisodeEndingEarly(t *testing.T) {
	opt := Options{Seed: 2, Agents: 5, Size: 32}
	for _, turn := range []int{100, 5} {
		res, err := Interleave(context.Background(), Twins{Options: opt, Ticks: 2000, Turn: turn, Workers: 2, Against: 1})
		require.NoError(t, err)
		require.Equal(t, 695, res.Ticks, "turn %d", turn)
		require.Len(t, res.TurnSpeedups, (695+turn-1)/turn)
	}
}

// TestInterleaveStopsWithTheContext: a run cancelled before it starts, or
// in the middle (one side playing, the other waiting for its turn), ends
// both sides with the context's error, never with a partial result or a
// side left waiting.
func TestInterleaveStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Interleave(ctx, Twins{Options: Options{Seed: 5, Agents: 10, Size: 32}, Ticks: 50, Turn: 3, Workers: 2, Against: 1})
	require.ErrorIs(t, err, context.Canceled)
	for _, warm := range []int{0, 1 << 20} { // cancelled in the turns, or while warming up
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		_, err = Interleave(ctx, Twins{Options: Options{Seed: 5, Agents: 60, Size: 64}, Warm: warm, Ticks: 1 << 20, Turn: 3, Workers: 2, Against: 1})
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "warm %d", warm)
	}
}

// failing is a Gatherer that fails at once.
type failing struct{}

func (failing) Gather(context.Context, int, []*world.Observation, []world.Decision) error {
	return errors.New("no decisions")
}

// TestPlayTurnsOutlivesAFailingSide: when one side's run fails, the other
// runs its ticks to the end without waiting for a turn that will not come,
// whichever side goes first.
func TestPlayTurnsOutlivesAFailingSide(t *testing.T) {
	for _, first := range []int{0, 1} {
		var sides [2]twin
		for i := range sides {
			w, ctrls, err := New(Options{Seed: 2, Agents: 10, Size: 32})
			require.NoError(t, err)
			sides[i] = twin{w: w, r: &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 12, Workers: 1}, n: 12,
				turn: 3, baton: make(chan struct{}, 1)}
		}
		sides[0].r.Gatherer = failing{}
		done := make(chan struct{})
		go func() {
			playTurns(context.Background(), &sides, first)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("first %d: a side waits for the failed one", first)
		}
		require.ErrorContains(t, sides[0].err, "no decisions")
		require.NoError(t, sides[1].err)
		require.Equal(t, 12, sides[1].ticks)
	}
}

// TestTurnQuartiles: nearest ranks, symmetric.
func TestTurnQuartiles(t *testing.T) {
	for _, c := range []struct {
		q        []float64
		p25, p75 float64
	}{{nil, 0, 0}, {[]float64{1}, 1, 1}, {[]float64{1, 2, 3, 4}, 2, 3}, {[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 4, 9}} {
		p25, p75 := Interleaved{TurnSpeedups: c.q}.TurnQuartiles()
		require.Equal(t, [2]float64{c.p25, c.p75}, [2]float64{p25, p75}, "%v", c.q)
	}
}

// recorder notes, for one agent of each side, the ticks it decided at, in
// the order the two sides decided.
type recorder struct {
	mu    *sync.Mutex
	log   *[]string
	side  string
	inner engine.Controller
}

func (r recorder) Decide(ctx context.Context, obs *world.Observation) world.Decision {
	r.mu.Lock()
	*r.log = append(*r.log, fmt.Sprintf("%s%d", r.side, obs.Tick))
	r.mu.Unlock()
	return r.inner.Decide(ctx, obs)
}

// TestPlayTurnsRunsOneSideAtATime: the sides take turns of exactly turn
// ticks, the first side first, and never run at the same time (a side that
// did not wait for its turn would interleave its ticks with the other's).
func TestPlayTurnsRunsOneSideAtATime(t *testing.T) {
	var mu sync.Mutex
	var log []string
	var sides [2]twin
	for i, name := range []string{"a", "b"} {
		w, ctrls, err := New(Options{Seed: 2, Agents: 40, Size: 48})
		require.NoError(t, err)
		id := w.Agents()[0].ID
		ctrls[id] = recorder{&mu, &log, name, ctrls[id]}
		sides[i] = twin{w: w, r: &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 11, Workers: 2 - i},
			n: 11, turn: 4, baton: make(chan struct{}, 1)}
	}
	playTurns(context.Background(), &sides, 0)
	require.NoError(t, sides[0].err)
	require.NoError(t, sides[1].err)
	var want []string
	for _, turn := range [][2]int{{0, 4}, {4, 8}, {8, 11}} {
		for _, side := range []string{"a", "b"} {
			for tick := turn[0]; tick < turn[1]; tick++ {
				want = append(want, fmt.Sprintf("%s%d", side, tick))
			}
		}
	}
	require.Equal(t, want, log)
	require.Len(t, sides[0].turns, 3)
	require.Len(t, sides[1].turns, 3)
}

// TestInterleaveWorldsOfTwoSizes: with AgainstOptions the Against side is
// another world, which runs AgainstTurn ticks a turn for as many turns as
// the other side (five: four of 5 ticks and one of 3 against five of 2),
// and the two are compared per agent-step, turn by turn.
func TestInterleaveWorldsOfTwoSizes(t *testing.T) {
	small, large := Options{Seed: 5, Agents: 20, Size: 32}, Options{Seed: 5, Agents: 80, Size: 64}
	res, err := Interleave(context.Background(), Twins{Options: small, Warm: 3, Ticks: 23, Turn: 5, Workers: 1, Against: 1,
		AgainstOptions: &large, AgainstTurn: 2, AgainstFirst: true})
	require.NoError(t, err)
	require.Equal(t, [4]int{23, 10, 20, 80}, [4]int{res.Ticks, res.AgainstTicks, res.Agents, res.AgainstAgents})
	require.Len(t, res.TurnSpeedups, 5)
	require.Empty(t, res.StateHash, "no hash compared between different worlds")
	perStep := func(d time.Duration, ticks, agents int) float64 { return d.Seconds() / float64(ticks*agents) }
	require.InDelta(t, perStep(res.AgainstTime, 10, 80)/perStep(res.Time, 23, 20), res.Speedup(), 1e-9)
	for _, q := range res.TurnSpeedups {
		require.Positive(t, q)
	}
}

// TestPlayTurnsOfTwoLengths: sides with turns of their own lengths (3 and
// 1 ticks) alternate turn by turn, each running its own turn's ticks.
func TestPlayTurnsOfTwoLengths(t *testing.T) {
	var mu sync.Mutex
	var log []string
	var sides [2]twin
	for i, c := range []struct {
		name        string
		ticks, turn int
	}{{"a", 7, 3}, {"b", 3, 1}} {
		w, ctrls, err := New(Options{Seed: 2, Agents: 10, Size: 32})
		require.NoError(t, err)
		id := w.Agents()[0].ID
		ctrls[id] = recorder{&mu, &log, c.name, ctrls[id]}
		sides[i] = twin{w: w, r: &engine.Runner{World: w, Controllers: ctrls, MaxTicks: c.ticks, Workers: 1},
			n: c.ticks, turn: c.turn, baton: make(chan struct{}, 1)}
	}
	playTurns(context.Background(), &sides, 1)
	require.NoError(t, errors.Join(sides[0].err, sides[1].err))
	require.Equal(t, []string{"b0", "a0", "a1", "a2", "b1", "a3", "a4", "a5", "b2", "a6"}, log)
	require.Equal(t, []int{3, 3, 1}, sides[0].turnTicks)
	require.Equal(t, []int{1, 1, 1}, sides[1].turnTicks)
}

// TestInterleaveTurnRatiosBracketTheSpeedup: when every pair of turns runs
// the same share of each side's agent-steps (Ticks a multiple of Turn), the
// overall ratio is a mediant of the turns' ratios, so it lies between the
// smallest and the largest whatever the host's noise; a turn ratio that
// counts the wrong side's agents or ticks moves them all by the worlds'
// factor and leaves the overall ratio outside.
func TestInterleaveTurnRatiosBracketTheSpeedup(t *testing.T) {
	for _, tc := range []struct {
		name                string
		small, large        Options
		turn, againstTurn   int
		ticks, againstTicks int
	}{
		{"more agents", Options{Seed: 3, Agents: 10, Size: 32}, Options{Seed: 3, Agents: 160, Size: 32}, 4, 4, 16, 16},
		{"longer turns", Options{Seed: 3, Agents: 10, Size: 32}, Options{Seed: 3, Agents: 10, Size: 32}, 8, 1, 32, 4},
		{"both", Options{Seed: 3, Agents: 160, Size: 64}, Options{Seed: 3, Agents: 10, Size: 32}, 1, 6, 4, 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, first := range []bool{false, true} {
				res, err := Interleave(context.Background(), Twins{Options: tc.small, Ticks: tc.ticks, Turn: tc.turn,
					Workers: 1, Against: 1, AgainstOptions: &tc.large, AgainstTurn: tc.againstTurn, AgainstFirst: first})
				require.NoError(t, err)
				require.Equal(t, [2]int{tc.ticks, tc.againstTicks}, [2]int{res.Ticks, res.AgainstTicks})
				require.Equal(t, [2]int{tc.small.Agents, tc.large.Agents}, [2]int{res.Agents, res.AgainstAgents})
				require.Len(t, res.TurnSpeedups, tc.ticks/tc.turn)
				s := res.Speedup()
				require.LessOrEqual(t, slices.Min(res.TurnSpeedups), s*(1+1e-9), "first %v", first)
				require.GreaterOrEqual(t, slices.Max(res.TurnSpeedups), s*(1-1e-9), "first %v", first)
			}
		})
	}
}

// TestInterleaveRefusesAnEpisodeEndedEarly: two worlds whose episodes end
// before their ticks (4 foragers complete in 794 ticks on 32², 1,283 on
// 24²) cannot be compared turn by turn (the survivor runs the rest alone,
// in one turn), whichever side goes first.
func TestInterleaveRefusesAnEpisodeEndedEarly(t *testing.T) {
	small, other := Options{Seed: 1, Agents: 4, Size: 32}, Options{Seed: 1, Agents: 4, Size: 24}
	for _, first := range []bool{false, true} {
		_, err := Interleave(context.Background(), Twins{Options: small, Ticks: 1000, Turn: 32, Workers: 1, Against: 1,
			AgainstOptions: &other, AgainstFirst: first})
		require.Error(t, err, "first %v", first)
	}
}
