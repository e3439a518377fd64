package sdk

import (
	"testing"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/fxamacker/cbor/v2"
)

// observationFrame is a typical observation message, as the server encodes it.
func observationFrame(tb testing.TB) []byte {
	sc, err := scenarios.Load("foraging")
	if err != nil {
		tb.Fatal(err)
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	codec, err := ipc.NewCodec(ipc.Limits{})
	if err != nil {
		tb.Fatal(err)
	}
	b, err := codec.Marshal(ipc.ObservationMsg{Type: "observation", Tick: 3, DeadlineMS: 5000, Observation: w.Observe(w.Agents()[0])})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestInboundDecodesAnObservationInOnePass(t *testing.T) {
	frame := observationFrame(t)
	var m inbound
	if err := decMode.Unmarshal(frame, &m); err != nil {
		t.Fatal(err)
	}
	var want ipc.ObservationMsg
	if err := cbor.Unmarshal(frame, &want); err != nil {
		t.Fatal(err)
	}
	if m.Type != "observation" || m.Tick != 3 || m.DeadlineMS != 5000 || m.Observation == nil ||
		m.Observation.AgentID != want.Observation.AgentID || len(m.Observation.NearbyResources) != len(want.Observation.NearbyResources) {
		t.Fatalf("decoded %+v", m)
	}
}

func BenchmarkDecodeObservation(b *testing.B) {
	frame := observationFrame(b)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		var m inbound
		if err := decMode.Unmarshal(frame, &m); err != nil {
			b.Fatal(err)
		}
	}
}
