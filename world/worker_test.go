package world_test

import (
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// TestPlanMoveChangesNoOutcome plays the same moves in two worlds, one with a
// Worker planning ahead before each move, one without: results, actions and
// state hashes must match, including when the plan no longer fits (another
// target, a later tick).
func TestPlanMoveChangesNoOutcome(t *testing.T) {
	ahead := world.Vec3{12, 0, 8}
	cases := []struct {
		name    string
		planned world.Vec3 // what the worker plans for
		step    bool       // the world steps between planning and moving
		target  world.Vec3 // where the agent then moves
	}{
		{"same target", ahead, false, ahead},
		{"another target", ahead, false, world.Vec3{-6, 0, 9}},
		{"a later tick", ahead, true, ahead},
		{"into a rock", world.Vec3{0, 0, -5}, false, world.Vec3{0, 0, -5}},
		{"off the map", world.Vec3{90, 0, 0}, false, world.Vec3{90, 0, 0}},
		{"the edge", world.Vec3{20, 0, 20}, false, world.Vec3{20, 0, 20}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			play := func(planAhead bool) (world.ActionResult, world.ActionStatus, uint64) {
				w := testutil.World(t, testutil.Config())
				a := w.Agent("a1")
				// Walk a little first, so the agent has a move in progress.
				require.True(t, w.MoveTo(a, world.Vec3{-3, 0, 4}, 1).Success)
				w.Step()
				w.BeginObserve()
				if planAhead {
					w.NewWorker().PlanMove(a, tc.planned)
				}
				if tc.step {
					w.Step()
				}
				res := w.MoveTo(a, tc.target, 1)
				st := a.Action()
				w.Step()
				return res, st, w.StateHash()
			}
			res1, st1, h1 := play(false)
			res2, st2, h2 := play(true)
			require.Equal(t, res1, res2)
			require.Equal(t, st1, st2)
			require.Equal(t, h1, h2)
		})
	}
}

// TestBeginObserveChangesNothingObservingWouldNot compares the state hash
// after observing an agent with and without BeginObserve first, and after
// BeginObserve alone in a world whose agents are all dead.
func TestBeginObserveChangesNothingObservingWouldNot(t *testing.T) {
	hash := func(begin bool) uint64 {
		w := testutil.World(t, testutil.Config())
		w.Step()
		if begin {
			w.BeginObserve()
		}
		w.NewWorker().ObserveInto(w.Agent("a2"), &world.Observation{})
		w.Step()
		return w.StateHash()
	}
	require.Equal(t, hash(false), hash(true))

	cfg := testutil.Config()
	cfg.Agents = cfg.Agents[:1]
	w := testutil.World(t, cfg)
	w.Damage(w.Agent("a1"), 1000, "test")
	w.Step()
	require.False(t, w.Agent("a1").Alive)
	h := w.StateHash()
	w.BeginObserve()
	require.Equal(t, h, w.StateHash())
}
