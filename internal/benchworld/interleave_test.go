package benchworld

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// TestInterleaveTwinsEndAlike: two workers against one on twin worlds, in
// turns that do not divide the ticks: both sides run every tick, every pair
// of turns is timed, and they end in the state of a run left alone.
func TestInterleaveTwinsEndAlike(t *testing.T) {
	opt := Options{Seed: 5, Agents: 60, Size: 64}
	res, err := Interleave(context.Background(), Twins{Options: opt, Warm: 4, Ticks: 23, Turn: 5, Workers: 2, Against: 1})
	require.NoError(t, err)
	require.Equal(t, 23, res.Ticks)
	require.Equal(t, 60, res.Agents)
	require.Len(t, res.TurnSpeedups, 5) // 5+5+5+5+3
	require.Positive(t, res.Time)
	require.Positive(t, res.AgainstTime)
	require.InDelta(t, res.AgainstTime.Seconds()/res.Time.Seconds(), res.Speedup(), 1e-12)
	require.IsNonDecreasing(t, res.TurnSpeedups)

	w, ctrls, err := New(opt)
	require.NoError(t, err)
	_, err = (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: 27, Workers: 1}).Run(context.Background())
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

// TestInterleaveStopsWithTheContext: a cancelled run ends both sides with
// the context's error instead of waiting for a turn forever.
func TestInterleaveStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Interleave(ctx, Twins{Options: Options{Seed: 5, Agents: 10, Size: 32}, Ticks: 50, Turn: 3, Workers: 2, Against: 1})
	require.ErrorIs(t, err, context.Canceled)
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
			n: 11, baton: make(chan struct{}, 1)}
	}
	playTurns(context.Background(), &sides, 4)
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
