package components_test

import (
	"encoding/json"
	"testing"

	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// FuzzComponentTools calls every component's tools with whatever parameters
// the fuzzer makes up, as decisions and as queries, from any agent, stepping
// the world in between: no input may panic, and every call gets an answer
// with an error code when it fails.
func FuzzComponentTools(f *testing.F) {
	type game struct {
		w     *world.World
		reg   *tools.Registry
		names []string
	}
	var games []game
	for _, name := range []string{"social", "market", "economy", "role_game", "debate"} {
		sc, err := scenarios.Load(name)
		if err != nil {
			f.Fatal(err)
		}
		w, err := sc.NewWorld(scenarios.Options{Seed: 1})
		if err != nil {
			f.Fatal(err)
		}
		reg, err := tools.ForWorld(w)
		if err != nil {
			f.Fatal(err)
		}
		var names []string
		for _, s := range reg.Specs() {
			names = append(names, s.Name)
		}
		games = append(games, game{w, reg, names})
	}
	f.Add(uint8(0), uint8(0), uint8(0), []byte(`{"text":"hello"}`), false)
	f.Add(uint8(1), uint8(1), uint8(2), []byte(`{"market_id":"x","outcome":"YES","amount":1e308}`), false)
	f.Add(uint8(2), uint8(3), uint8(1), []byte(`{"amount":-1,"target":"nobody"}`), true)
	f.Add(uint8(3), uint8(2), uint8(5), []byte(`{"target":"agent_001","action":"kill"}`), false)
	f.Add(uint8(4), uint8(1), uint8(4), []byte(`{"term":""}`), true)
	f.Fuzz(func(t *testing.T, gi, ai, ti uint8, raw []byte, asQuery bool) {
		g := games[int(gi)%len(games)]
		var params map[string]any
		if json.Unmarshal(raw, &params) != nil {
			params = map[string]any{"value": string(raw)}
		}
		agents := g.w.Agents()
		id := agents[int(ai)%len(agents)].ID
		tool := g.names[int(ti)%len(g.names)]
		var res world.ActionResult
		if asQuery {
			res = g.reg.Execute(g.w, id, tool, params, true)
		} else {
			res = g.reg.Decide(g.w, id, g.w.Tick(), world.Decision{Tool: tool, Params: params})
			g.w.Step()
		}
		if !res.Success && res.ErrorCode == "" {
			t.Fatalf("%s by %s with %v failed without an error code: %+v", tool, id, params, res)
		}
	})
}
