package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func TestResultsOfACaptureGame(t *testing.T) {
	game := func(agents ...world.AgentSpec) *engine.Results {
		w := testutil.World(t, world.Config{
			Name: "capture", Seed: 1, TickRate: 10, Bounds: world.Bounds{MinX: -30, MinZ: -30, MaxX: 30, MaxZ: 30},
			Points:  []world.CapturePointSpec{{Name: "P1", X: -10}, {Name: "P2", X: 10}},
			Agents:  agents,
			Capture: &world.CaptureRules{CaptureTicks: 5, WinScore: 30},
			Objective: world.Objective{TimeLimit: 1000, SuccessMetrics: map[string]world.MetricTarget{
				"team_captures": {Target: 1, Required: true}}},
		})
		res, err := (&engine.Runner{World: w}).Run(context.Background())
		require.NoError(t, err)
		return res
	}
	// Red holds P1 from the start, blue stands nowhere: red wins at 30 points.
	res := game(world.AgentSpec{ID: "r1", Team: "red", X: -10}, world.AgentSpec{ID: "b1", Team: "blue", Z: 20})
	require.Equal(t, "completed", res.EndReason)
	require.Equal(t, "team_won", res.Outcome)
	require.Equal(t, "red", res.Winner)
	require.Equal(t, 24, res.Ticks)
	require.Equal(t, "blue", res.Teams[0].Team)
	require.Equal(t, 0, *res.Teams[0].GameScore)
	require.Equal(t, 0, *res.Teams[0].Captures)
	require.False(t, res.Teams[0].Passed)
	require.Equal(t, 30, *res.Teams[1].GameScore)
	require.Equal(t, 1, *res.Teams[1].Captures)
	require.True(t, res.Teams[1].Passed)
	require.Equal(t, 30.0, res.Agents[0].Metrics["team_score"], "capture metrics are reported for every agent")
	require.Equal(t, 1.0, res.Agents[0].Metrics["won"])

	// Each holds one point: they reach 30 together, a draw.
	res = game(world.AgentSpec{ID: "r1", Team: "red", X: -10}, world.AgentSpec{ID: "b1", Team: "blue", X: 10})
	require.Equal(t, "completed", res.EndReason)
	require.Equal(t, "draw", res.Outcome)
	require.Empty(t, res.Winner)
	require.True(t, res.Passed)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	require.NotContains(t, string(b), `"winner"`)
	require.Contains(t, string(b), `"game_score":30`)

	// Teams without a capture game have no game score.
	w := testutil.World(t, testutil.Config())
	b, err = json.Marshal(engine.Collect(w, "time_limit"))
	require.NoError(t, err)
	require.NotContains(t, string(b), "game_score")
	require.NotContains(t, string(b), "winner")
}
