package bots_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// capturePoints are five points like team_capture's, none owned.
func capturePoints() []world.EntityView {
	var ps []world.EntityView
	for _, p := range []struct {
		name string
		x, z float64
	}{{"PointA", -15, -15}, {"PointB", -15, 15}, {"PointC", 0, 0}, {"PointD", 15, -15}, {"PointE", 15, 15}} {
		prog := 0.0
		ps = append(ps, world.EntityView{Name: p.name, Type: "capture_point", Position: world.Vec3{p.x, 0, p.z}, Radius: 3, Progress: &prog})
	}
	return ps
}

// teamObs is the observation of agent id of team red, whose members stand at
// the given positions (id's own among them), with the given points.
func teamObs(id string, members map[string]world.Vec3, ids []string, points []world.EntityView) *world.Observation {
	obs := &world.Observation{Tick: 0, AgentID: id, Team: "red", Alive: true, Position: members[id],
		AgentIDs: ids, CapturePoints: points, CurrentAction: world.ActionStatus{Status: "idle"}}
	for _, other := range ids {
		if pos, ok := members[other]; ok && other != id {
			obs.Teammates = append(obs.Teammates, world.EntityView{Name: other, Type: "agent", Team: "red", Position: pos})
		}
	}
	return obs
}

func newCaptureBot(id string) bots.Bot {
	b, err := bots.New("capture_team", bots.Info{AgentID: id, Seed: 1})
	if err != nil {
		panic(err)
	}
	return b
}

func moveTarget(t *testing.T, d world.Decision) world.Vec3 {
	t.Helper()
	require.Equal(t, "move_to", d.Tool, "%+v", d)
	arr := d.Params["target"].([]any)
	return world.Vec3{arr[0].(float64), arr[1].(float64), arr[2].(float64)}
}

func TestCaptureTeamSplitsTheNearPointsBetweenMembers(t *testing.T) {
	ids := []string{"red_1", "blue_1", "red_2", "blue_2", "red_3", "blue_3"}
	cases := []struct {
		name    string
		members map[string]world.Vec3
		want    map[string]string // member → point it walks to
	}{
		{"two members", map[string]world.Vec3{"red_1": {-26, 0, -3}, "red_2": {-26, 0, 3}},
			map[string]string{"red_1": "PointA", "red_2": "PointB"}},
		{"two members the other way round", map[string]world.Vec3{"red_1": {-26, 0, 3}, "red_2": {-26, 0, -3}},
			map[string]string{"red_1": "PointB", "red_2": "PointA"}},
		{"three members take the centre too", map[string]world.Vec3{"red_1": {-26, 0, -3}, "red_2": {-26, 0, 3}, "red_3": {-24, 0, 0}},
			map[string]string{"red_1": "PointA", "red_2": "PointB", "red_3": "PointC"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for id := range tc.members {
				d := newCaptureBot(id).Decide(context.Background(), teamObs(id, tc.members, ids, capturePoints()))
				to := moveTarget(t, d)
				for _, p := range capturePoints() {
					if to == p.Position {
						got[id] = p.Name
					}
				}
				require.NotEmpty(t, d.Reasoning)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestCaptureTeamDefendsAndRetargets(t *testing.T) {
	ids := []string{"red_1", "red_2"}
	members := map[string]world.Vec3{"red_1": {-15, 0, -15}, "red_2": {-15, 0, 15}}
	ctx := context.Background()

	// Both are on the points they captured; red_1 heads on to the centre.
	pts := capturePoints()
	pts[0].Owner, pts[1].Owner = "red", "red"
	b := newCaptureBot("red_1")
	require.Equal(t, world.Vec3{0, 0, 0}, moveTarget(t, b.Decide(ctx, teamObs("red_1", members, ids, pts))))

	// On the way it tells its team where it is going...
	obs := teamObs("red_1", map[string]world.Vec3{"red_1": {-12, 0, -12}, "red_2": {-15, 0, 15}}, ids, pts)
	obs.Tick, obs.CurrentAction.Status = 1, "moving"
	d := b.Decide(ctx, obs)
	require.Equal(t, "send_message", d.Tool)
	require.Equal(t, "team", d.Params["target_agent"])
	require.Contains(t, d.Params["message"], "PointC")
	obs.Tick++
	require.Equal(t, "idle", b.Decide(ctx, obs).Tool, "then keeps walking")

	// ...until blue starts taking PointA behind it: the nearest member defends.
	pts[0].Capturing = "blue"
	obs.Tick++
	require.Equal(t, world.Vec3{-15, 0, -15}, moveTarget(t, b.Decide(ctx, obs)))

	// PointA is lost: it is a point to capture again, and red_1 keeps to it.
	pts[0].Capturing, pts[0].Owner = "", "blue"
	obs.Tick++
	obs.CurrentAction.Status = "moving"
	require.NotEqual(t, "move_to", b.Decide(ctx, obs).Tool)

	// Once it is red's again, red_1 goes on to the next point to capture.
	pts[0].Owner = "red"
	obs.Position = world.Vec3{-15, 0, -14}
	obs.Tick++
	obs.CurrentAction.Status = "arrived"
	require.Equal(t, world.Vec3{0, 0, 0}, moveTarget(t, b.Decide(ctx, obs)))
}

func TestCaptureTeamIdlesWhenDeadOrWithoutPoints(t *testing.T) {
	b := newCaptureBot("red_1")
	require.Equal(t, "idle", b.Decide(context.Background(), &world.Observation{AgentID: "red_1", Alive: false}).Tool)
	require.Equal(t, "idle", b.Decide(context.Background(), &world.Observation{AgentID: "red_1", Alive: true}).Tool)
}

// runTeamCapture plays the built-in team_capture scenario with its built-in
// agents through the engine and returns the results.
func runTeamCapture(t *testing.T, seed uint64, agents int) *engine.Results {
	t.Helper()
	sc, err := scenarios.Load("team_capture")
	require.NoError(t, err)
	require.Equal(t, "capture_team", sc.Agents.Bot)
	w, err := sc.NewWorld(scenarios.Options{Seed: seed, Agents: agents})
	require.NoError(t, err)
	ctrls, err := eval.Controllers(sc, w)
	require.NoError(t, err)
	res, err := (&engine.Runner{World: w, Controllers: ctrls}).Run(context.Background())
	require.NoError(t, err)
	return res
}

func TestBuiltinTeamsPassTeamCaptureWithSeed1(t *testing.T) {
	for _, n := range []int{4, 16} {
		t.Run(fmt.Sprintf("%dv%d", n/2, n/2), func(t *testing.T) {
			res := runTeamCapture(t, 1, n)
			require.True(t, res.Passed, "every agent passes: %+v", res.Agents)
			require.Equal(t, "completed", res.EndReason)
			require.Equal(t, "team_won", res.Outcome)
			require.Less(t, res.Ticks, 1800)
			require.Len(t, res.Teams, 2)
			for _, team := range res.Teams {
				require.Len(t, team.Agents, n/2)
				require.True(t, team.Passed)
				require.NotNil(t, team.GameScore)
				require.GreaterOrEqual(t, *team.Captures, 1)
				if team.Team == res.Winner {
					require.GreaterOrEqual(t, *team.GameScore, 100)
				} else {
					require.Less(t, *team.GameScore, 100)
				}
			}
			for _, a := range res.Agents {
				require.Equal(t, float64(map[bool]int{true: 1}[a.Team == res.Winner]), a.Metrics["won"], a.ID)
				require.Positive(t, a.Metrics["messages_sent"], "%s tells its team where it goes", a.ID)
			}
			for _, team := range res.Teams {
				t.Logf("%s: game score %d, %d captures, objective score %.2f", team.Team, *team.GameScore, *team.Captures, team.Score)
			}
			t.Logf("%s won after %d ticks", res.Winner, res.Ticks)
		})
	}
	// The same seed plays the same game.
	require.Equal(t, runTeamCapture(t, 1, 4).FinalStateHash, runTeamCapture(t, 1, 4).FinalStateHash)
}
