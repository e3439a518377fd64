package ipcbench

import (
	"testing"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

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

func TestLockstepAndEchoRun(t *testing.T) {
	r, err := Run(t.Context(), Options{Agents: 20, Rounds: 5, Dir: t.TempDir()})
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
