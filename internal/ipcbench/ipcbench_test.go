package ipcbench

import (
	"math"
	"testing"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

// The benchmark's field takes any number of agents: grid points that fall
// on a wall (400, 1,100 or 5,000 agents, say) are skipped, not refused, and
// the agents stay on the field, spaced as asked.
func TestScenarioTakesAnyNumberOfAgents(t *testing.T) {
	cases := []struct {
		n       int
		spacing float64
	}{{1, 0}, {100, 0}, {400, 0}, {500, 0}, {700, 0}, {1000, 0}, {1100, 0}, {1399, 0}, {1444, 0}, {2000, 0},
		{5000, 0}, {10000, 0}, {1000, 3}, {5000, 1.3}}
	for n := 2; n <= 1500; n += 37 {
		cases = append(cases, struct {
			n       int
			spacing float64
		}{n, 0})
	}
	for _, c := range cases {
		sc, err := Scenario(c.n, c.spacing)
		if err != nil {
			t.Fatalf("%d agents, spacing %g: %v", c.n, c.spacing, err)
		}
		spawns := sc.Agents.Spawns
		if len(spawns) != c.n || sc.Agents.Count != c.n {
			t.Fatalf("%d agents, spacing %g: %d spawns for a count of %d", c.n, c.spacing, len(spawns), sc.Agents.Count)
		}
		seen := map[[2]float64]bool{}
		for _, p := range spawns {
			if seen[[2]float64{p[0], p[2]}] {
				t.Fatalf("%d agents: two spawn at %v", c.n, p)
			}
			seen[[2]float64{p[0], p[2]}] = true
			if half := sc.Size[0] / 2; math.Abs(p[0]) >= half || math.Abs(p[2]) >= half {
				t.Fatalf("%d agents: spawn %v off the %g-wide field", c.n, p, sc.Size[0])
			}
		}
		if c.spacing > 0 && c.n > 1 {
			if d := math.Hypot(spawns[1][0]-spawns[0][0], spawns[1][2]-spawns[0][2]); math.Abs(d-c.spacing) > 1e-9 {
				t.Fatalf("%d agents: spawns %g apart, want %g", c.n, d, c.spacing)
			}
		}
	}
}

// The lean clients' reader must read what a full CBOR decoder reads.
func TestParseHeadMatchesCBOR(t *testing.T) {
	sc, err := Scenario(100, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for tick := range 3 {
		for i, a := range w.Agents() {
			if i%7 == 0 { // some agents walk, so positions are not all half-precision
				w.MoveTo(a, world.Vec3{a.Pos[0] + 1.37, 0, a.Pos[2] - 2.11}, 1)
			}
		}
		w.Step()
		for _, a := range w.Agents() {
			p, err := codec.Marshal(ipc.ObservationMsg{Type: "observation", Tick: tick, DeadlineMS: 5000, Observation: w.Observe(a)})
			if err != nil {
				t.Fatal(err)
			}
			var want, got incoming
			if err := cbor.Unmarshal(p, &want); err != nil {
				t.Fatal(err)
			}
			if err := parseHead(p, &got); err != nil {
				t.Fatal(err)
			}
			if want != got {
				t.Fatalf("parseHead read %+v, cbor %+v", got, want)
			}
		}
	}
}

// TestLockstepAndEchoRun: both sides run, with more clients than may be
// connecting at once (the echo answers none of them before all are in).
func TestLockstepAndEchoRun(t *testing.T) {
	r, err := Run(t.Context(), Options{Agents: maxConnecting + 36, Rounds: 5, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Lockstep.DecisionsPerSec <= 0 || r.Echo.DecisionsPerSec <= 0 || r.Lockstep.RTTP50 <= 0 || r.Echo.RTTP99 <= 0 {
		t.Fatalf("%+v", r)
	}
	if r.Lockstep.ObsBytes < 500 || r.Lockstep.DecisionBytes < 20 {
		t.Fatalf("frames of %v and %v bytes", r.Lockstep.ObsBytes, r.Lockstep.DecisionBytes)
	}
}

// TestObservationBytesDoNotGrowWithAgents: with as many agents in sight
// (agents 9 units apart), an observation is as large among 1,000 agents as
// among 100, over the wire: the roster (agent_ids) goes as changes. Sent
// whole, it made the 1,000 agents' observations 10 KB larger.
func TestObservationBytesDoNotGrowWithAgents(t *testing.T) {
	many := 1000
	if raceDetector {
		many = 300
	}
	var bytes [2]float64
	for i, n := range []int{100, many} {
		st, _, err := Lockstep(t.Context(), Options{Agents: n, Rounds: 2, Spacing: 9, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		bytes[i] = st.ObsBytes
		t.Logf("%d agents: %.0f bytes per observation", n, st.ObsBytes)
	}
	if bytes[1] > 1.1*bytes[0] {
		t.Fatalf("an observation is %.0f bytes among %d agents, %.0f among 100", bytes[1], many, bytes[0])
	}
}

// Median takes each figure's median on its own (the mean of the middle two
// for an even count).
func TestMedian(t *testing.T) {
	res := func(lock, echo float64, p50 time.Duration) *Result {
		return Compare(&Stats{Agents: 7, DecisionsPerSec: lock, RTTP50: p50, RTTP99: p50}, &Stats{DecisionsPerSec: echo, RTTP50: time.Millisecond, RTTP99: time.Millisecond})
	}
	tests := []struct {
		name                  string
		in                    []*Result
		lock, echo, ratio, rp float64
	}{
		{"one", []*Result{res(10, 20, 2*time.Millisecond)}, 10, 20, 0.5, 2},
		{"odd", []*Result{res(10, 20, time.Millisecond), res(30, 40, 3*time.Millisecond), res(5, 100, 2*time.Millisecond)}, 10, 40, 0.5, 2},
		{"even", []*Result{res(10, 20, time.Millisecond), res(30, 40, 4*time.Millisecond)}, 20, 30, 0.625, 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Median(tt.in)
			if m.Lockstep.DecisionsPerSec != tt.lock || m.Echo.DecisionsPerSec != tt.echo || m.DecisionsRatio != tt.ratio || m.RTTRatioP50 != tt.rp || m.Lockstep.Agents != 7 {
				t.Fatalf("median %+v", m)
			}
		})
	}
}

// TestTurnsMeasureBothSides: in turns, each side plays the rounds asked
// for (rounded up to whole turns), its clients measure a round trip for
// each, and the echo moves frames of the lockstep's size.
func TestTurnsMeasureBothSides(t *testing.T) {
	began := time.Now()
	r, err := Turns(t.Context(), Options{Agents: maxConnecting + 6, Rounds: 10, Turns: 4, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Each side's time is its own turns': the two never overlap.
	if wall := time.Since(began); r.Lockstep.Elapsed+r.Echo.Elapsed > wall {
		t.Fatalf("turns of %v and %v in a run of %v", r.Lockstep.Elapsed, r.Echo.Elapsed, wall)
	}
	for _, st := range []Stats{r.Lockstep, r.Echo} {
		if st.Rounds != 12 || st.Agents != maxConnecting+6 || st.Elapsed <= 0 || st.DecisionsPerSec <= 0 || st.RTTP50 <= 0 || st.CPUPerDecision <= 0 {
			t.Fatalf("%+v", st)
		}
	}
	if r.Lockstep.ObsBytes < 500 || r.Lockstep.DecisionBytes < 20 {
		t.Fatalf("frames of %v and %v bytes", r.Lockstep.ObsBytes, r.Lockstep.DecisionBytes)
	}
	if d := r.Echo.ObsBytes - r.Lockstep.ObsBytes; d < -0.2*r.Lockstep.ObsBytes || d > 0.2*r.Lockstep.ObsBytes {
		t.Fatalf("echo frames of %v bytes, lockstep's %v", r.Echo.ObsBytes, r.Lockstep.ObsBytes)
	}
	if r.DecisionsRatio != r.Lockstep.DecisionsPerSec/r.Echo.DecisionsPerSec {
		t.Fatalf("ratio %v", r.DecisionsRatio)
	}
}
