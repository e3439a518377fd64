package world

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// deliverByScan is deliverMessages as it was, every agent a candidate for
// every message: the oracle of TestDeliverMessagesEqualsTheFullScan.
func (w *World) deliverByScan() {
	w.deliverTo(func(_ *Agent, _ pendingMessage, dst []*Agent) []*Agent { return append(dst, w.agents...) })
}

// TestDeliverMessagesEqualsTheFullScan delivers the same random messages
// (to all, to a team, to one agent, with audiences, some dropped) in two
// copies of a world, through the agent index and by the full scan: every
// inbox, and the drops' random stream, must end the same. Agents are
// killed and moved between rounds; half of them stand on a lattice, some
// exactly the range apart; one world's range covers the map.
func TestDeliverMessagesEqualsTheFullScan(t *testing.T) {
	for _, c := range []struct {
		seed      uint64
		commRange float64
	}{{1, 12}, {2, 30}, {3, 500}} {
		t.Run(fmt.Sprint(c.seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(c.seed, 4))
			cfg := Config{Name: "msg", Seed: c.seed, Bounds: Bounds{MinX: -80, MinZ: -60, MaxX: 80, MaxZ: 60},
				Rules: Rules{CommRange: c.commRange, MessageDropProb: 0.2}}
			for i := 0; i < 150; i++ {
				x, z := rng.Float64()*156-78, rng.Float64()*116-58
				if i%2 == 0 { // on a lattice of 6: some at exactly the range apart
					x, z = float64(6*rng.IntN(25)-72), float64(6*rng.IntN(19)-54)
				}
				cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("a%03d", i), Team: []string{"red", "blue", ""}[i%3], X: x, Z: z})
			}
			var ws [2]*World
			for k := range ws {
				w, err := New(cfg)
				require.NoError(t, err)
				ws[k] = w
			}
			for round := 0; round < 6; round++ {
				var sends []pendingMessage
				for j := 0; j < 40; j++ {
					m := pendingMessage{from: fmt.Sprintf("a%03d", rng.IntN(150)), content: fmt.Sprint(round, j), tick: round}
					switch j % 4 {
					case 0:
						m.to = "all"
					case 1:
						m.to = "team"
					case 2:
						m.to = fmt.Sprintf("a%03d", rng.IntN(151)) // a150 does not exist
					default:
						m.to = "all"
						m.audience = []string{fmt.Sprintf("a%03d", rng.IntN(150)), fmt.Sprintf("a%03d", rng.IntN(150))}
					}
					sends = append(sends, m)
				}
				kill, move := rng.IntN(150), rng.IntN(150)
				x, z := rng.Float64()*156-78, rng.Float64()*116-58
				for k, w := range ws {
					if round == 3 {
						w.kill(w.agents[kill], "test")
					}
					w.setPos(w.agents[move], x, z)
					w.agentIdxDirty = true
					w.outbox = append(w.outbox, sends...)
					if k == 0 {
						w.deliverMessages()
					} else {
						w.deliverByScan()
					}
				}
			}
			delivered := 0
			for i := range ws[0].agents {
				require.Equal(t, ws[1].agents[i].inbox, ws[0].agents[i].inbox, "inbox of %s", ws[0].agents[i].ID)
				delivered += len(ws[0].agents[i].inbox)
			}
			require.Greater(t, delivered, 200)
			require.Equal(t, ws[1].Rand("messages").Uint64(), ws[0].Rand("messages").Uint64(), "drops drew the same")
		})
	}
}
