package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/server"
	"github.com/stretchr/testify/require"
)

// TestEveryBuiltinScenarioPlaysTheSameOverIPC serves each built-in scenario
// in lockstep on a Unix socket to SDK clients that each run the scenario's
// built-in bot, and checks that the episode ends exactly as an in-process
// run with the same seed: the same final state, the same results. The
// in-process run has one worker, the server four (its observations are
// built on workers and streamed as they are ready).
func TestEveryBuiltinScenarioPlaysTheSameOverIPC(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Load(name)
			require.NoError(t, err)
			const seed = 2
			local, err := eval.Episode(context.Background(), eval.Config{Scenario: sc, Seed: seed, SecretSeed: seed + 100, Workers: 1}, 1, nil)
			require.NoError(t, err)

			srv, err := server.New(server.Options{Scenario: sc, Seed: seed, SecretSeed: seed + 100, DecisionTimeout: 20 * time.Second, Workers: 4})
			require.NoError(t, err)
			addr, l := listen(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			served := make(chan []*engine.Results, 1)
			go func() {
				all, err := srv.Serve(ctx, l)
				if err != nil {
					t.Error(err)
				}
				served <- all
			}()
			var wg sync.WaitGroup
			for range srv.World().Agents() {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := sdk.Connect(ctx, addr, sdk.Options{})
					if err != nil {
						t.Error(err)
						return
					}
					defer c.Close()
					w := c.Welcome()
					world, err := sc.NewWorld(scenarios.Options{Seed: w.Seed})
					if err != nil {
						t.Error(err)
						return
					}
					b, err := bots.New(sc.Agents.Bot, bots.Info{AgentID: w.AgentID, Seed: w.Seed, Bounds: world.Bounds(), Rules: world.Rules()})
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := c.Run(ctx, b); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			all := <-served
			require.Len(t, all, 1)
			remote := all[0]
			require.Equal(t, local.FinalStateHash, remote.FinalStateHash, "the same game over the wire")
			require.Equal(t, local.Ticks, remote.Ticks)
			require.Equal(t, local.Outcome, remote.Outcome)
			require.Equal(t, local.Agents, remote.Agents)
			require.Equal(t, local.Winner, remote.Winner)
			if name == "role_game" { // the game finished with a winner
				winners := 0
				for _, a := range remote.Agents {
					require.Equal(t, 1.0, a.Metrics["roles.game_over"], a.ID)
					winners += int(a.Metrics["roles.won"])
				}
				require.Positive(t, winners)
			}
			if name == "debate" { // the judge synthesised
				for _, a := range remote.Agents {
					require.Equal(t, 1.0, a.Metrics["debate.synthesized"], a.ID)
				}
			}
		})
	}
}
