package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// seenRecorder wraps a concurrent controller and records, as JSON, every
// observation it is given to decide on.
type seenRecorder struct {
	engine.ConcurrentController
	id   string
	seen *sync.Map // "tick agent" -> JSON
}

func (s seenRecorder) Decide(ctx context.Context, obs *world.Observation) world.Decision {
	b, err := json.Marshal(obs)
	if err != nil {
		panic(err)
	}
	if _, dup := s.seen.LoadOrStore(fmt.Sprintf("%d %s", obs.Tick, s.id), string(b)); dup {
		panic(fmt.Sprintf("agent %s decided twice at tick %d", s.id, obs.Tick))
	}
	return s.ConcurrentController.Decide(ctx, obs)
}

// TestScratchObservationsAreTheKeptOnes: every observation a built-in bot
// decides on is the same, byte for byte as JSON and events included,
// whether the runner keeps the observations or builds them in scratch that
// the previous agent's observation filled, on one worker or on three, in
// every built-in scenario; and Observation gives the kept ones only.
func TestScratchObservationsAreTheKeptOnes(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		t.Run(name, func(t *testing.T) {
			play := func(workers int, keep bool) (map[string]string, *engine.Runner) {
				w, ctrls, sc := builtin(t, name, 4)
				seen := &sync.Map{}
				for id, c := range ctrls {
					cc, ok := c.(engine.ConcurrentController)
					require.True(t, ok, "the built-in bot of %s decides concurrently", id)
					ctrls[id] = seenRecorder{cc, id, seen}
				}
				r := &engine.Runner{World: w, Controllers: ctrls, DecisionPeriod: sc.Limits.DecisionPeriod,
					MaxTicks: min(120, max(w.Objective().TimeLimit, 1)), Workers: workers, KeepObservations: keep}
				engine.OnWorkersAlways(r)
				_, err := r.Run(context.Background())
				require.NoError(t, err)
				got := map[string]string{}
				seen.Range(func(k, v any) bool {
					got[k.(string)] = v.(string)
					return true
				})
				require.NotEmpty(t, got)
				return got, r
			}
			kept, r := play(1, true)
			for _, a := range r.World.Agents() {
				require.True(t, r.Observation(a.ID) != nil, "kept: agent %s", a.ID)
			}
			for _, workers := range []int{1, 3} {
				scratch, r := play(workers, false)
				require.Equal(t, len(kept), len(scratch), "decisions")
				for k, want := range kept {
					require.JSONEq(t, want, scratch[k], "workers %d: %s", workers, k)
				}
				// Several workers keep the observations of worlds with
				// components, which the tick goroutine completes before
				// the controllers decide.
				scratched := workers == 1 || r.World.ObservesWhole()
				for _, a := range r.World.Agents() {
					require.Equal(t, scratched, r.Observation(a.ID) == nil, "kept: agent %s", a.ID)
				}
			}
		})
	}
}

// TestKeepObservationsMayChangeBetweenTicks: Observation follows the field
// from one decision point to the next, on one worker and on several.
func TestKeepObservationsMayChangeBetweenTicks(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			w, ctrls, _ := builtin(t, "foraging", 2)
			id := w.Agents()[0].ID
			var r *engine.Runner
			var kept []bool
			r = &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 12, Workers: workers,
				OnTick: func(rec *engine.TickRecord) {
					o := r.Observation(id)
					kept = append(kept, o != nil)
					if o != nil {
						require.Equal(t, rec.Tick, o.Tick)
					}
					r.KeepObservations = rec.Tick%4 < 2 // kept at ticks 1, 2, 5, 6, ...
				}}
			engine.OnWorkersAlways(r)
			_, err := r.Run(context.Background())
			require.NoError(t, err)
			want := []bool{false, true, true, false, false, true, true, false, false, true, true, false}
			require.Equal(t, want, kept)
		})
	}
}
