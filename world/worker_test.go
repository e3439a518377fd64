package world_test

import (
	"cmp"
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
		// the speed multipliers planned for and moved at (0: 1)
		plannedSpeed, speed float64
	}{
		{name: "same target", planned: ahead, target: ahead},
		{name: "another target", planned: ahead, target: world.Vec3{-6, 0, 9}},
		{name: "a later tick", planned: ahead, step: true, target: ahead},
		{name: "into a rock", planned: world.Vec3{0, 0, -5}, target: world.Vec3{0, 0, -5}},
		{name: "off the map", planned: world.Vec3{90, 0, 0}, target: world.Vec3{90, 0, 0}},
		{name: "the edge", planned: world.Vec3{20, 0, 20}, target: world.Vec3{20, 0, 20}},
		{name: "faster", planned: ahead, target: ahead, plannedSpeed: 1.5, speed: 1.5},
		{name: "capped", planned: ahead, target: ahead, plannedSpeed: 40, speed: 40},
		{name: "another speed", planned: ahead, target: ahead, plannedSpeed: 1.5, speed: 0.5},
		{name: "capped, then not", planned: ahead, target: ahead, plannedSpeed: 40, speed: 1},
		{name: "capped, then at the cap", planned: ahead, target: ahead, plannedSpeed: 40, speed: 2},
		{name: "too slow", planned: ahead, target: ahead, plannedSpeed: 0.01, speed: 0.01},
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
					w.NewWorker().PlanMove(a, tc.planned, cmp.Or(tc.plannedSpeed, 1))
				}
				if tc.step {
					w.Step()
				}
				res := w.MoveTo(a, tc.target, cmp.Or(tc.speed, 1))
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
