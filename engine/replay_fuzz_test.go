package engine_test

import (
	"bytes"
	"testing"

	"github.com/arena-sim/arena/engine"
)

// FuzzReadReplay: whatever a replay file holds, reading it never panics, and
// what it returns is either an error or a replay whose ticks are in order.
func FuzzReadReplay(f *testing.F) {
	header := `{"type":"header","version":1,"scenario":"foraging","seed":1,"agents":["agent_001"],"decision_period":1,"time_limit":5,"initial_hash":"00"}` + "\n"
	tick := `{"type":"tick","tick":0,"decisions":[{"agent":"agent_001","tool":"move_to","params":{"target":[{"$float":"NaN"},0,1]},"result":{"tool":"move_to","success":false}}],"hash":"ab"}` + "\n"
	f.Add([]byte(header + tick))
	f.Add([]byte(header + tick + `{"type":"end","results":{"scenario":"foraging"}}` + "\n"))
	f.Add([]byte(header + `{"type":"tick","tick":0,"decis`))
	f.Add([]byte(`{"type":"tick"}` + "\n"))
	f.Add([]byte{})
	f.Add([]byte(header + `{"type":"tick","tick":0,"decisions":[{"agent":"a","tool":"x","params":{"$float":"NaN"}}]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := engine.ReadReplay(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i, tr := range rep.Ticks {
			if tr.Tick != i {
				t.Fatalf("tick %d at position %d", tr.Tick, i)
			}
		}
	})
}
