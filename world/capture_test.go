package world_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// captureWorld is an 80×80 world with capture point P1 (radius 3) at the
// origin, P2 at (20, 20), a wall between them and the given agents.
func captureWorld(t *testing.T, rules world.CaptureRules, agents ...world.AgentSpec) *world.World {
	t.Helper()
	return testutil.World(t, world.Config{
		Name: "capture", Seed: 1, TickRate: 10, CellSize: 0.5,
		Bounds: world.Bounds{MinX: -40, MinZ: -40, MaxX: 40, MaxZ: 40},
		Points: []world.CapturePointSpec{{Name: "P1", X: 0, Z: 0, Radius: 3}, {Name: "P2", X: 20, Z: 20, Radius: 3}},
		Obstacles: []world.ObstacleSpec{
			{Name: "Wall1", ObstacleType: "wall", X: 10, Z: -10, Shape: "box", SizeX: 1, SizeZ: 10},
		},
		Agents:    agents,
		Capture:   &rules,
		Objective: world.Objective{TimeLimit: 5000},
	})
}

func agent(id, team string, x, z float64) world.AgentSpec {
	return world.AgentSpec{ID: id, Team: team, X: x, Z: z}
}

func point(w *world.World, name string) *world.CapturePoint {
	for _, p := range w.CapturePoints() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func steps(w *world.World, n int) {
	for range n {
		w.Step()
	}
}

func TestTheMajorityInsideCapturesAndTiesAreContested(t *testing.T) {
	// Spots inside P1 (radius 3), and one just outside it.
	in := [][2]float64{{-1.5, 0}, {1.5, 0}, {0, 1.5}, {0, -1.5}, {-1.5, -1.5}, {1.5, 1.5}}
	cases := []struct {
		name      string
		teams     []string // the team of the agent at in[i]; "" has no team
		outside   []string // agents of these teams stand just outside the radius
		owner     string
		contested bool
	}{
		{"one agent alone", []string{"red"}, nil, "red", false},
		{"two against one", []string{"red", "blue", "red"}, nil, "red", false},
		{"one against two", []string{"red", "blue", "blue"}, nil, "blue", false},
		{"one against one", []string{"red", "blue"}, nil, "", true},
		{"two against two", []string{"red", "blue", "blue", "red"}, nil, "", true},
		{"agents without a team do not count", []string{"red", "", ""}, nil, "red", false},
		{"agents outside the radius do not count", []string{"red"}, []string{"blue", "blue"}, "red", false},
		{"strictly more than every other team", []string{"red", "red", "blue", "green"}, nil, "red", false},
		{"three teams of one", []string{"red", "blue", "green"}, nil, "", true},
		{"a tie for the most, with a smaller third team", []string{"red", "red", "blue", "blue", "green"}, nil, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var specs []world.AgentSpec
			for i, team := range tc.teams {
				specs = append(specs, agent(fmt.Sprintf("a%d", i), team, in[i][0], in[i][1]))
			}
			for i, team := range tc.outside {
				specs = append(specs, agent(fmt.Sprintf("o%d", i), team, 3.6, float64(i)*1.5))
			}
			w := captureWorld(t, world.CaptureRules{CaptureTicks: 5}, specs...)
			steps(w, 5)
			p := point(w, "P1")
			require.Equal(t, tc.owner, p.Owner)
			require.Equal(t, tc.contested, p.Contested)
			if tc.contested {
				require.Zero(t, p.Progress, "a contested point makes no progress")
				require.Empty(t, p.Capturing)
				require.Equal(t, map[string]int{}, nonZero(w.TeamScores()), "nobody scores")
			}
		})
	}
}

func nonZero(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func TestCaptureTakesExactlyCaptureTicks(t *testing.T) {
	for _, n := range []int{1, 3, 50} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := captureWorld(t, world.CaptureRules{CaptureTicks: n}, agent("r1", "red", 1, 0), agent("b1", "blue", 30, -30))
			p := point(w, "P1")
			for i := 1; i < n; i++ {
				w.Step()
				require.Empty(t, p.Owner, "after %d of %d ticks", i, n)
				require.Equal(t, "red", p.Capturing)
				require.InDelta(t, float64(i)/float64(n), p.Progress, 1e-12)
				require.Empty(t, w.TakeEvents())
			}
			w.Step()
			require.Equal(t, "red", p.Owner)
			require.Empty(t, p.Capturing)
			require.Zero(t, p.Progress)
			ev := w.TakeEvents()
			require.Len(t, ev, 1)
			require.Equal(t, "point_captured", ev[0].Type)
			require.Empty(t, ev[0].To, "captures are public")
			require.Equal(t, n-1, ev[0].Tick)
			require.Equal(t, "P1", ev[0].Data["point"])
			require.Equal(t, "red", ev[0].Data["team"])
			require.Equal(t, []string{"r1"}, ev[0].Data["agents"])
			require.NotContains(t, ev[0].Data, "previous_owner")
		})
	}
}

func TestScoringPerCaptureAndPerHeldPointPerTick(t *testing.T) {
	w := captureWorld(t, world.CaptureRules{CaptureTicks: 5, WinScore: 1000},
		agent("r1", "red", 1, 0), agent("r2", "red", 20, 21), agent("b1", "blue", -30, -30))
	steps(w, 4)
	require.Equal(t, map[string]int{"red": 0, "blue": 0}, w.TeamScores())
	w.Step() // both points captured on this tick: 2 × 10, plus 2 × 1 for holding them
	require.Equal(t, map[string]int{"red": 22, "blue": 0}, w.TeamScores())
	steps(w, 7)
	require.Equal(t, map[string]int{"red": 36, "blue": 0}, w.TeamScores())
	require.Equal(t, []world.TeamStanding{{Team: "red", Score: 36, Captures: 2, Held: 2}, {Team: "blue"}}, w.Standings())

	r1, b1 := w.Metrics(w.Agent("r1")), w.Metrics(w.Agent("b1"))
	require.Equal(t, 36.0, r1["team_score"])
	require.Equal(t, 2.0, r1["team_captures"])
	require.Equal(t, 1.0, r1["captures"], "r1 took part in the capture of P1 only")
	require.Equal(t, 2.0, r1["points_held"])
	require.Equal(t, 0.0, r1["won"])
	require.Equal(t, 0.0, b1["team_score"])
	require.Equal(t, 0.0, b1["captures"])

	// Custom points per capture and per tick.
	w = captureWorld(t, world.CaptureRules{CaptureTicks: 2, PointsPerCapture: 7, PointsPerHoldTick: 3, WinScore: 1000},
		agent("r1", "red", 1, 0), agent("b1", "blue", -30, -30))
	steps(w, 2)
	require.Equal(t, 10, w.TeamScores()["red"])
	steps(w, 4)
	require.Equal(t, 22, w.TeamScores()["red"])
}

func TestProgressIsKeptWhenEmptyAndResetByAContestOrAnotherTeam(t *testing.T) {
	w := captureWorld(t, world.CaptureRules{CaptureTicks: 50},
		agent("r1", "red", -1, 0), agent("b1", "blue", 7, 0))
	p := point(w, "P1")
	steps(w, 10)
	require.Equal(t, "red", p.Capturing)
	require.InDelta(t, 0.2, p.Progress, 1e-12)

	// Red walks out: the progress is kept while nobody is inside.
	testutil.WalkTo(t, w, "r1", -8, 0)
	kept := p.Progress
	require.Greater(t, kept, 0.2)
	steps(w, 20)
	require.Equal(t, kept, p.Progress)
	require.Equal(t, "red", p.Capturing)

	// Blue walks in alone: red's progress is lost, blue starts from 0.
	testutil.WalkTo(t, w, "b1", 1, 0)
	require.Equal(t, "blue", p.Capturing)
	require.Less(t, p.Progress, 0.2)

	// Red comes back: one against one is contested, the progress is reset and
	// nothing moves however long they stay.
	testutil.WalkTo(t, w, "r1", -1, 0)
	require.True(t, p.Contested)
	require.Zero(t, p.Progress)
	steps(w, 100)
	require.True(t, p.Contested)
	require.Zero(t, p.Progress)
	require.Empty(t, p.Owner)

	// Blue leaves: red starts again from 0 and needs the whole capture time.
	require.True(t, w.MoveTo(w.Agent("b1"), world.Vec3{8, 0, 0}, 2).Success)
	ticks := 0
	for p.Contested || p.Capturing == "" {
		w.Step()
		ticks++
		require.Less(t, ticks, 100)
	}
	require.False(t, p.Contested)
	require.InDelta(t, 1.0/50, p.Progress, 1e-12)
	steps(w, 48)
	require.Empty(t, p.Owner)
	w.Step()
	require.Equal(t, "red", p.Owner)
}

func TestTheOwnerHoldsItsPointAndAnotherTeamTakesItOver(t *testing.T) {
	w := captureWorld(t, world.CaptureRules{CaptureTicks: 10, WinScore: 10000},
		agent("r1", "red", -1, 0), agent("r2", "red", 0, -1), agent("b1", "blue", 6, 0), agent("b2", "blue", 6, 2))
	p := point(w, "P1")
	steps(w, 10)
	require.Equal(t, "red", p.Owner)

	// One blue agent walks in: two red against one blue, red holds, nobody progresses.
	testutil.WalkTo(t, w, "b1", 1, 0)
	steps(w, 20)
	require.Equal(t, "red", p.Owner)
	require.False(t, p.Contested)
	require.Empty(t, p.Capturing)
	require.Zero(t, p.Progress)

	// Both red agents leave: blue takes the point straight from red.
	require.True(t, w.MoveTo(w.Agent("r1"), world.Vec3{-9, 0, 0}, 2).Success)
	require.True(t, w.MoveTo(w.Agent("r2"), world.Vec3{-9, 0, -2}, 2).Success)
	w.TakeEvents()
	var captured []world.Event
	for i := 0; i < 60 && p.Owner == "red"; i++ {
		w.Step()
		for _, e := range w.TakeEvents() {
			if e.Type == "point_captured" {
				captured = append(captured, e)
			}
		}
	}
	require.Equal(t, "blue", p.Owner)
	require.Len(t, captured, 1)
	require.Equal(t, "red", captured[0].Data["previous_owner"])
	require.Equal(t, "blue", captured[0].Data["team"])
}

func TestTheFirstTeamToTheWinScoreWinsAndTheEpisodeEnds(t *testing.T) {
	obj := world.Objective{TimeLimit: 24, SuccessMetrics: map[string]world.MetricTarget{
		"team_captures": {Target: 1, Required: true}, "won": {Target: 1}}}
	w := testutil.World(t, world.Config{
		Name: "capture", Seed: 1, TickRate: 10, Bounds: world.Bounds{MinX: -40, MinZ: -40, MaxX: 40, MaxZ: 40},
		Points:  []world.CapturePointSpec{{Name: "P1", Radius: 3}},
		Agents:  []world.AgentSpec{agent("r1", "red", 1, 0), agent("b1", "blue", 30, 30)},
		Capture: &world.CaptureRules{CaptureTicks: 5, WinScore: 30}, Objective: obj,
	})
	// After 5 ticks red has 10 + 1; then 1 a tick: 30 after 24 ticks.
	steps(w, 5)
	done, _ := w.Done()
	require.False(t, done, "meeting the objective does not end a capture game")
	require.GreaterOrEqual(t, w.Agent("r1").Stats.CompletedTick, 0, "r1 completed its objective")
	steps(w, 18)
	require.Equal(t, 29, w.TeamScores()["red"])
	done, _ = w.Done()
	require.False(t, done)
	w.TakeEvents()
	w.Step()
	require.Equal(t, 30, w.TeamScores()["red"])
	over, winner := w.GameOver()
	require.True(t, over)
	require.Equal(t, "red", winner)
	done, reason := w.Done()
	require.True(t, done)
	require.Equal(t, "completed", reason, "a win on the time limit's tick is still a win")
	ev := w.TakeEvents()
	require.Equal(t, "team_won", ev[len(ev)-1].Type)
	require.Equal(t, "red", ev[len(ev)-1].Data["team"])
	require.Equal(t, 1.0, w.Metrics(w.Agent("r1"))["won"])
	require.Equal(t, 0.0, w.Metrics(w.Agent("b1"))["won"])

	// The game is over: stepping on changes no score.
	steps(w, 10)
	require.Equal(t, map[string]int{"red": 30, "blue": 0}, w.TeamScores())
}

func TestTeamsReachingTheWinScoreTogether(t *testing.T) {
	// Equal scores on the same tick: a draw (the higher score winning is
	// tested in capture_internal_test.go).
	w := captureWorld(t, world.CaptureRules{CaptureTicks: 5, WinScore: 20}, agent("r1", "red", 1, 0), agent("b1", "blue", 20, 21))
	steps(w, 14)
	over, winner := w.GameOver()
	require.True(t, over)
	require.Empty(t, winner)
	require.Equal(t, map[string]int{"red": 20, "blue": 20}, w.TeamScores())
	require.Equal(t, "game_drawn", w.Events()[len(w.Events())-1].Type)

}

func TestTeamMessagesNeverReachEnemies(t *testing.T) {
	w := testutil.World(t, world.Config{
		Name: "msg", Seed: 1, TickRate: 10, Bounds: world.Bounds{MinX: -40, MinZ: -40, MaxX: 40, MaxZ: 40},
		Rules: world.Rules{CommRange: 30},
		Agents: []world.AgentSpec{
			agent("r1", "red", 0, 0), agent("r2", "red", 5, 0), agent("b1", "blue", 2, 2), agent("b2", "blue", -3, 0),
			agent("r3", "red", 38, 0), // beyond communication range of r1 and r2
		},
	})
	sendAll := func(from, to, text string) {
		a := w.Agent(from)
		w.BeginDecision(a)
		require.True(t, w.SendMessage(a, to, text).Success)
	}
	for _, id := range []string{"r1", "r2", "r3", "b1", "b2"} {
		w.BeginDecision(w.Agent(id))
	}
	sendAll("r1", "team", "red plan: take P1")
	sendAll("b1", "team", "blue plan: take P2")
	sendAll("r2", "all", "hello everyone")
	w.Step()
	got := map[string][]string{}
	for _, id := range []string{"r1", "r2", "r3", "b1", "b2"} {
		for _, m := range w.Observe(w.Agent(id)).Messages {
			got[id] = append(got[id], m.From+"→"+m.To+": "+m.Content)
		}
	}
	require.Equal(t, map[string][]string{
		"r1": {"r2→all: hello everyone"},
		"r2": {"r1→team: red plan: take P1"},
		"b1": {"r2→all: hello everyone"},
		"b2": {"b1→team: blue plan: take P2", "r2→all: hello everyone"},
		// r3 is a teammate of r1, but out of range of every sender: nothing arrives.
	}, got)
	for _, id := range []string{"b1", "b2"} {
		b, err := json.Marshal(w.Observe(w.Agent(id)))
		require.NoError(t, err)
		require.NotContains(t, string(b), "red plan", "%s sees a red team message", id)
	}
	// A team message without a team is refused.
	w2 := testutil.World(t, world.Config{Name: "x", TickRate: 10, Bounds: world.Bounds{MinX: -10, MinZ: -10, MaxX: 10, MaxZ: 10},
		Agents: []world.AgentSpec{{ID: "solo"}}})
	require.Equal(t, world.CodeNotAllowed, w2.SendMessage(w2.Agent("solo"), "team", "hi").ErrorCode)
}

func TestCaptureObservationsShowPointsTeammatesAndOnlyEnemiesInSight(t *testing.T) {
	w := captureWorld(t, world.CaptureRules{CaptureTicks: 5, WinScore: 1000},
		agent("r1", "red", 1, 0),
		agent("r2", "red", -30, 30),  // far away: a teammate, out of sight
		agent("b1", "blue", -1, 1.5), // in sight of r1, inside P1
		agent("b2", "blue", 12, -10), // behind Wall1, within the perception radius
		agent("b3", "blue", 20, 21),  // far away, inside P2
	)
	steps(w, 3)
	obs := w.Observe(w.Agent("r1"))

	// Every capture point, wherever it is.
	require.Equal(t, []string{"P1", "P2"}, names(obs.CapturePoints))
	p1, p2 := obs.CapturePoints[0], obs.CapturePoints[1]
	require.Equal(t, "capture_point", p1.Type)
	require.Equal(t, world.Vec3{0, 0, 0}, p1.Position)
	require.Equal(t, 1.0, p1.Distance)
	require.Equal(t, 3.0, p1.Radius)
	require.True(t, p1.Contested, "r1 and b1 are both inside P1")
	require.Equal(t, 0.0, *p1.Progress)
	require.Equal(t, "blue", p2.Capturing, "P2 is out of sight, but its state is public")
	require.Equal(t, 0.6, *p2.Progress)
	steps(w, 2)
	obs = w.Observe(w.Agent("r1"))
	require.Equal(t, "blue", obs.CapturePoints[1].Owner)
	require.Equal(t, map[string]int{"red": 0, "blue": 11}, obs.TeamScores)

	// Teammates wherever they are; enemies only in sight.
	require.Equal(t, []string{"r2"}, names(obs.Teammates))
	require.Equal(t, "red", obs.Teammates[0].Team)
	require.Equal(t, world.Vec3{-30, 0, 30}, obs.Teammates[0].Position)
	require.Equal(t, []string{"b1"}, names(obs.NearbyAgents), "b2 is behind a wall and b3 too far")
	b, err := json.Marshal(obs)
	require.NoError(t, err)
	for _, hidden := range []string{`"name":"b2"`, `"name":"b3"`, "[12,0,-10]", "[20,0,21]"} {
		require.NotContains(t, string(b), hidden)
	}
	for _, key := range []string{`"team_scores":`, `"teammates":`, `"capture_points":`, `"contested":true`, `"owner":"blue"`} {
		require.Contains(t, string(b), key)
	}

	// A dead or teamless agent, or a world without capture rules, shows none of it.
	plain := testutil.World(t, testutil.Config())
	o := plain.Observe(plain.Agent("a1"))
	require.Nil(t, o.TeamScores)
	require.Empty(t, o.Teammates, "a1 is alone in its team")
	b, err = json.Marshal(o)
	require.NoError(t, err)
	require.NotContains(t, string(b), "team_scores")
	require.NotContains(t, string(b), "teammates")
}

func TestCaptureRulesAreChecked(t *testing.T) {
	cfg := world.Config{Name: "x", TickRate: 10, Bounds: world.Bounds{MinX: -10, MinZ: -10, MaxX: 10, MaxZ: 10},
		Agents: []world.AgentSpec{agent("r1", "red", 0, 0)}, Capture: &world.CaptureRules{}}
	_, err := world.New(cfg)
	require.ErrorContains(t, err, "at least one capture point")
	cfg.Points = []world.CapturePointSpec{{Name: "P1", X: 5}}
	cfg.Capture = &world.CaptureRules{CaptureTicks: -1}
	_, err = world.New(cfg)
	require.ErrorContains(t, err, "must not be negative")
	cfg.Capture = &world.CaptureRules{}
	w, err := world.New(cfg)
	require.NoError(t, err)
	rules, ok := w.CaptureRules()
	require.True(t, ok)
	require.Equal(t, world.CaptureRules{CaptureTicks: 50, PointsPerCapture: 10, PointsPerHoldTick: 1, WinScore: 100}, rules)
	// Capture metrics are known only with capture rules.
	cfg.Objective = world.Objective{SuccessMetrics: map[string]world.MetricTarget{"team_score": {Target: 100}}}
	_, err = world.New(cfg)
	require.NoError(t, err)
	cfg.Capture = nil
	_, err = world.New(cfg)
	require.ErrorContains(t, err, `"team_score" is unknown`)
}

func TestCaptureGamesAreDeterministic(t *testing.T) {
	play := func() []uint64 {
		w := captureWorld(t, world.CaptureRules{CaptureTicks: 8, WinScore: 60},
			agent("r1", "red", -2, 0), agent("r2", "red", 18, 20), agent("b1", "blue", 6, 0), agent("b2", "blue", 20, 22))
		require.True(t, w.MoveTo(w.Agent("b1"), world.Vec3{1, 0, 0}, 1).Success)
		require.True(t, w.MoveTo(w.Agent("r2"), world.Vec3{0, 0, 30}, 1).Success)
		var hashes []uint64
		for done := false; !done; done, _ = w.Done() {
			w.Step()
			hashes = append(hashes, w.StateHash())
		}
		return hashes
	}
	a, b := play(), play()
	require.Equal(t, a, b)
	require.Less(t, len(a), 200)
}
