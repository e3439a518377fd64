package world_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func names(v []world.EntityView) []string {
	var out []string
	for _, e := range v {
		out = append(out, e.Name)
	}
	return out
}

func TestObservationUniversalFields(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	obs := w.Observe(w.Agent("a1"))
	require.Equal(t, "a1", obs.AgentID)
	require.Equal(t, "red", obs.Team)
	require.Equal(t, world.Vec3{0, 0, 0}, obs.Position)
	require.True(t, obs.Alive)
	require.Equal(t, 100.0, obs.Health)
	require.Equal(t, 10.0, obs.PerceptionRadius)
	require.Equal(t, []string{"Berry1", "Berry2"}, names(obs.NearbyResources)[:2])
	require.Equal(t, "berry", obs.NearbyResources[0].ResourceType)
	require.Equal(t, 1.41, obs.NearbyResources[0].Distance)
	require.Equal(t, []string{"Workbench1"}, names(obs.NearbyStations))
	require.Equal(t, []string{"a2"}, names(obs.NearbyAgents))
	require.Equal(t, []string{"a1", "a2"}, obs.AgentIDs)
	require.Equal(t, "blue", obs.NearbyAgents[0].Team)
	require.Contains(t, names(obs.NearbyObstacles), "Rock1")
	require.NotNil(t, obs.Objective)
	require.Contains(t, obs.CurrentProgress, "resources_collected")
	require.Nil(t, obs.LastActionResult)
	require.Equal(t, "idle", obs.CurrentAction.Status)
	// Sorted nearest first.
	for _, list := range [][]world.EntityView{obs.NearbyResources, obs.NearbyObstacles} {
		for i := 1; i < len(list); i++ {
			require.LessOrEqual(t, list[i-1].Distance, list[i].Distance)
		}
	}
}

func TestLineOfSightHidesWhatIsBehindObstacles(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	a1 := w.Agent("a1")
	// Hidden1 is 9 units away, inside the perception radius, but behind Rock1.
	require.NotContains(t, names(w.Observe(a1).NearbyResources), "Hidden1")
	require.False(t, w.LineOfSight(a1.Pos, world.Vec3{0, 0, -9}))
	// Step aside and it comes into view.
	testutil.WalkTo(t, w, "a1", 4, -6)
	require.Contains(t, names(w.Observe(a1).NearbyResources), "Hidden1")
	// Beyond the perception radius nothing is seen, obstacle or not.
	testutil.WalkTo(t, w, "a1", 12, 12)
	require.NotContains(t, names(w.Observe(a1).NearbyResources), "Hidden1")
}

func TestSeeThroughObstacleDoesNotBlockSight(t *testing.T) {
	cfg := testutil.Config()
	cfg.Obstacles[0].SeeThrough = true
	w := testutil.World(t, cfg)
	require.Contains(t, names(w.Observe(w.Agent("a1")).NearbyResources), "Hidden1")
}

func TestAgentSlidesAlongAWall(t *testing.T) {
	cfg := testutil.Config()
	cfg.Obstacles = []world.ObstacleSpec{{Name: "Wall", Shape: "box", X: 0, Z: 5, SizeX: 10, SizeZ: 1}}
	cfg.Agents = []world.AgentSpec{{ID: "a1", X: 0, Z: 0}}
	w := testutil.World(t, cfg)
	a := w.Agent("a1")
	// The planned path goes around the wall; collision must never let the agent
	// inside it, and the agent arrives on the other side.
	require.True(t, w.MoveTo(a, world.Vec3{0, 0, 9}, 1).Success)
	for i := 0; i < 200 && a.Pos[2] < 8.5; i++ {
		w.Step()
		inWall := math.Abs(a.Pos[0]) < 5+0.4 && math.Abs(a.Pos[2]-5) < 0.5+0.4-1e-3
		require.False(t, inWall, "agent entered the wall at %v (tick %d)", a.Pos, w.Tick())
	}
	require.InDelta(t, 9, a.Pos[2], 0.5)
}

func TestCollisionPushesOutAndSlides(t *testing.T) {
	// An agent driven straight into a wall at an angle keeps the along-wall part of
	// its motion: it slides, and never ends a tick overlapping the wall.
	cfg := testutil.Config()
	cfg.Obstacles = []world.ObstacleSpec{{Name: "Wall", Shape: "box", X: 0, Z: 3, SizeX: 30, SizeZ: 2}}
	cfg.Agents = []world.AgentSpec{{ID: "a1", X: 0, Z: 1.5}}
	w := testutil.World(t, cfg)
	a := w.Agent("a1")
	// Force a straight-line path into the wall, bypassing the planner.
	w.ForceStraightMove(a, world.Vec3{6, 0, 4})
	for i := 0; i < 10; i++ {
		w.Step()
		require.LessOrEqual(t, a.Pos[2], 2-0.4+1e-3, "agent overlaps the wall at %v", a.Pos)
	}
	require.Greater(t, a.Pos[0], 2.0, "the agent slid along the wall toward the target's x")
}

func TestAgentsDoNotOverlap(t *testing.T) {
	cfg := testutil.Config()
	cfg.Agents = []world.AgentSpec{{ID: "a1", X: -6, Z: 6}, {ID: "a2", X: 6, Z: 6}, {ID: "a3", X: 0, Z: 12}}
	w := testutil.World(t, cfg)
	for _, a := range w.Agents() {
		require.True(t, w.MoveTo(a, world.Vec3{0, 0, 6}, 1).Success)
	}
	r := w.Rules().AgentRadius
	for i := 0; i < 60; i++ {
		w.Step()
		ag := w.Agents()
		for x := 0; x < len(ag); x++ {
			for y := x + 1; y < len(ag); y++ {
				require.GreaterOrEqual(t, world.GroundDist(ag[x].Pos, ag[y].Pos), 2*r-1e-3, "tick %d: %s and %s overlap", w.Tick(), ag[x].ID, ag[y].ID)
			}
		}
	}
	arrived := 0
	for _, a := range w.Agents() {
		if w.Observe(a).CurrentAction.Status == "arrived" {
			arrived++
		}
	}
	// Two bodies of radius 0.4 can both be within the 0.5 arrival tolerance of a
	// point; three cannot.
	require.GreaterOrEqual(t, arrived, 1)
	require.LessOrEqual(t, arrived, 2)
}

func TestBlockedMoveFailsWithClearError(t *testing.T) {
	cfg := testutil.Config()
	cfg.Agents = []world.AgentSpec{{ID: "a1", X: 0, Z: 0}, {ID: "a2", X: 0, Z: 6}}
	w := testutil.World(t, cfg)
	a1 := w.Agent("a1")
	// a1 walks to exactly where a2 stands still: it can never arrive.
	require.True(t, w.MoveTo(a1, world.Vec3{0, 0, 6}, 1).Success)
	for i := 0; i < 200 && w.Observe(a1).CurrentAction.Status == "moving"; i++ {
		w.Step()
	}
	obs := w.Observe(a1)
	require.Equal(t, "failed", obs.CurrentAction.Status)
	require.NotNil(t, obs.LastActionResult)
	require.False(t, obs.LastActionResult.Success)
	require.Equal(t, world.CodeNoPath, obs.LastActionResult.ErrorCode)
	require.Contains(t, obs.LastActionResult.ErrorMessage, "made no progress")
	require.Contains(t, obs.LastActionResult.ErrorMessage, "'a2'")
}

func TestHazardsDamageAndKill(t *testing.T) {
	cfg := testutil.Config()
	cfg.Hazards = []world.HazardSpec{{Name: "Pit1", HazardType: "pit", X: 0, Z: 4, Radius: 1.5, EntryDamage: 25, DamagePerSecond: 50}}
	cfg.Agents = []world.AgentSpec{{ID: "a1", X: 0, Z: 0}}
	w := testutil.World(t, cfg)
	a := w.Agent("a1")
	w.ForceStraightMove(a, world.Vec3{0, 0, 4})
	var entered bool
	for i := 0; i < 60 && a.Alive; i++ {
		w.Step()
		for _, e := range w.TakeEvents() {
			if e.Type == "hazard_entered" {
				entered = true
				require.Equal(t, "Pit1", e.Data["hazard"])
			}
		}
	}
	require.True(t, entered)
	require.False(t, a.Alive)
	require.Zero(t, a.Health)
	require.Equal(t, 100.0, a.Stats.DamageTaken)
	done, why := w.Done()
	require.True(t, done)
	require.Equal(t, "all_dead", why)
}

func TestPlannedPathsAvoidHazards(t *testing.T) {
	cfg := testutil.Config()
	cfg.Hazards = []world.HazardSpec{{Name: "Fire", HazardType: "fire", X: 0, Z: 5, Radius: 1.5, DamagePerSecond: 10}}
	cfg.Obstacles = nil
	cfg.Agents = []world.AgentSpec{{ID: "a1", X: 0, Z: 0}}
	w := testutil.World(t, cfg)
	a := w.Agent("a1")
	require.True(t, w.MoveTo(a, world.Vec3{0, 0, 10}, 1).Success)
	for i := 0; i < 100 && w.Observe(a).CurrentAction.Status == "moving"; i++ {
		w.Step()
	}
	require.Equal(t, "arrived", w.Observe(a).CurrentAction.Status)
	require.Zero(t, a.Stats.DamageTaken, "the route goes around the fire")
}

func TestTerrainGivesEveryEntityItsHeight(t *testing.T) {
	cfg := testutil.Config()
	cfg.Terrain = world.Terrain{Base: 1, Heights: [][]float64{{0, 0}, {4, 4}}} // rises along z
	w := testutil.World(t, cfg)
	require.InDelta(t, 3, w.HeightAt(0, 0), 1e-9)
	require.InDelta(t, 1, w.HeightAt(0, -20), 1e-9)
	require.InDelta(t, 5, w.HeightAt(0, 20), 1e-9)
	obs := w.Observe(w.Agent("a1"))
	require.InDelta(t, 3, obs.Position[1], 1e-9)
	for _, r := range obs.NearbyResources {
		require.InDelta(t, w.HeightAt(r.Position[0], r.Position[2]), r.Position[1], 0.01)
	}
}

func TestStateHashIsDeterministicAndSensitive(t *testing.T) {
	play := func() []uint64 {
		w := testutil.World(t, testutil.Config())
		var hashes []uint64
		require.True(t, w.MoveTo(w.Agent("a1"), world.Vec3{10, 0, 8}, 1).Success)
		require.True(t, w.MoveTo(w.Agent("a2"), world.Vec3{-8, 0, 8}, 1.5).Success)
		for i := 0; i < 50; i++ {
			w.Step()
			hashes = append(hashes, w.StateHash())
		}
		return hashes
	}
	a, b := play(), play()
	require.Equal(t, a, b)
	require.NotEqual(t, a[0], a[1], "moving agents change the hash")

	w1 := testutil.World(t, testutil.Config())
	w2 := testutil.World(t, testutil.Config())
	require.Equal(t, w1.StateHash(), w2.StateHash())
	require.True(t, w2.Collect(w2.Agent("a1"), "Berry1").Success)
	require.NotEqual(t, w1.StateHash(), w2.StateHash(), "an inventory change changes the hash")
}

func TestObjectiveScoring(t *testing.T) {
	o := world.Objective{SuccessMetrics: map[string]world.MetricTarget{
		"resources_collected": {Target: 10, Weight: 2, Required: true},
		"health":              {Target: 50, Weight: 1, Required: true},
		"time":                {Target: 30, Weight: 1, LowerIsBetter: true},
	}}
	cases := []struct {
		progress map[string]float64
		score    float64
		passed   bool
	}{
		{map[string]float64{"resources_collected": 10, "health": 100, "time": 20}, 100, true},
		{map[string]float64{"resources_collected": 5, "health": 100, "time": 20}, 75, false},
		{map[string]float64{"resources_collected": 12, "health": 25, "time": 32}, (2*100 + 50 + 80) / 4.0, false},
		{map[string]float64{"resources_collected": 10, "health": 50, "time": 100}, 75, true},
	}
	for _, c := range cases {
		s, p := o.Evaluate(c.progress)
		require.InDelta(t, c.score, s, 0.01, "%v", c.progress)
		require.Equal(t, c.passed, p, "%v", c.progress)
	}
}

func TestWorldRejectsBadConfig(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*world.Config)
		msg  string
	}{
		{"duplicate names", func(c *world.Config) { c.Resources[1].Name = "Berry1" }, `name "Berry1" is used by a resource and a resource`},
		{"outside", func(c *world.Config) { c.Stations[0].X = 99 }, "outside the world"},
		{"reserved", func(c *world.Config) { c.Agents[0].ID = "all" }, "reserved"},
		{"empty bounds", func(c *world.Config) { c.Bounds.MaxX = c.Bounds.MinX }, "empty"},
		{"unknown metric", func(c *world.Config) {
			c.Objective.SuccessMetrics["happiness"] = world.MetricTarget{Target: 1}
		}, `objective metric "happiness" is unknown`},
		{"bad shape", func(c *world.Config) { c.Obstacles[0].Shape = "star" }, "not circle or box"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testutil.Config()
			tc.mod(&cfg)
			_, err := world.New(cfg)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestLineOfSightAgreesWithTheGrid(t *testing.T) {
	// The summed-area shortcut must never disagree with a full traversal.
	cfg := testutil.Config()
	for i := 0; i < 30; i++ {
		cfg.Obstacles = append(cfg.Obstacles, world.ObstacleSpec{Name: fmt.Sprintf("T%d", i), Shape: "circle",
			X: float64((i*37)%36 - 18), Z: float64((i*53)%36 - 18), Radius: 0.3 + float64(i%4)*0.4})
	}
	w := testutil.World(t, cfg)
	r := rand.New(rand.NewPCG(1, 2))
	clear, blocked := 0, 0
	for i := 0; i < 5000; i++ {
		a := world.Vec3{r.Float64()*38 - 19, 0, r.Float64()*38 - 19}
		b := world.Vec3{r.Float64()*38 - 19, 0, r.Float64()*38 - 19}
		got := w.LineOfSight(a, b)
		require.Equal(t, w.LineOfSightByTraversal(a, b), got, "%v → %v", a, b)
		if got {
			clear++
		} else {
			blocked++
		}
	}
	require.Positive(t, clear)
	require.Positive(t, blocked)
}

func TestCachedObstacleViewMatchesAScan(t *testing.T) {
	// Each agent caches the obstacles near where it last looked; what it sees
	// must always equal a fresh scan (query_world ignores the cache).
	cfg := testutil.Config()
	for i := 0; i < 40; i++ {
		cfg.Obstacles = append(cfg.Obstacles, world.ObstacleSpec{Name: fmt.Sprintf("T%d", i), Shape: "circle",
			X: float64((i*37)%36 - 18), Z: float64((i*53)%36 - 18), Radius: 0.3 + float64(i%4)*0.3})
	}
	cfg.Resources, cfg.Stations, cfg.Hazards = nil, nil, nil
	cfg.Agents = cfg.Agents[:1]
	w := testutil.World(t, cfg)
	a := w.Agent("a1")
	for _, target := range []world.Vec3{{15, 0, 15}, {-15, 0, 12}, {-12, 0, -15}, {16, 0, -16}} {
		if !w.MoveTo(a, target, 2).Success {
			continue
		}
		for i := 0; i < 60 && w.Observe(a).CurrentAction.Status == "moving"; i++ {
			w.Step()
			obs := w.Observe(a)
			q, res := w.QueryWorld(a, w.Rules().PerceptionRadius, "obstacle")
			require.True(t, res.Success)
			var scanned []string
			for _, e := range q.Entities {
				if e.Distance-e.Radius <= w.Rules().PerceptionRadius {
					scanned = append(scanned, e.Name)
				}
			}
			require.ElementsMatch(t, scanned, names(obs.NearbyObstacles), "tick %d at %v", w.Tick(), a.Pos)
		}
	}
}

func TestStuckMoveKeepsTheResultOfALaterDecision(t *testing.T) {
	cfg := testutil.Config()
	cfg.Agents = []world.AgentSpec{{ID: "a1", X: 0, Z: 0}, {ID: "a2", X: 0, Z: 6}}
	w := testutil.World(t, cfg)
	a1 := w.Agent("a1")
	require.True(t, w.MoveTo(a1, world.Vec3{0, 0, 6}, 1).Success) // onto a2, who never moves
	for i := 0; i < 5; i++ {
		w.Step()
	}
	w.RecordResult(a1, w.SendMessage(a1, "all", "hello"))
	for i := 0; i < 200 && w.Observe(a1).CurrentAction.Status == "moving"; i++ {
		w.Step()
	}
	obs := w.Observe(a1)
	require.Equal(t, "failed", obs.CurrentAction.Status)
	require.Equal(t, world.CodeNoPath, obs.CurrentAction.ErrorCode)
	require.Equal(t, "send_message", obs.LastActionResult.Tool, "the failure does not hide the result of the last decision")
	require.True(t, obs.LastActionResult.Success)
}

func TestEditingAnObservationCannotChangeTheGame(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	a := w.Agent("a1")
	obs := w.Observe(a)
	obs.AvailableRecipes["meal"].Inputs["berry"] = 0
	obs.Objective.SuccessMetrics["resources_collected"] = world.MetricTarget{Target: 0}
	obs.Inventory["gold"] = 99
	require.Equal(t, 2, w.Recipe("meal").Inputs["berry"])
	require.Equal(t, 2.0, w.Objective().SuccessMetrics["resources_collected"].Target)
	require.Zero(t, a.Inventory["gold"])
}

// TestEmptyListsAreEmptyArrays: a list with nothing in view is [] on the
// wire, not null, in a fresh observation and in one built into a reused
// observation (whose lists start empty and take no memory until used).
func TestEmptyListsAreEmptyArrays(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	reused := &world.Observation{}
	w.ObserveInto(w.Agent("a1"), reused) // sees something of every kind
	testutil.WalkTo(t, w, "a1", -15, 15) // where nothing is in view
	fresh := w.Observe(w.Agent("a1"))
	w.ObserveInto(w.Agent("a1"), reused)
	for _, obs := range []*world.Observation{fresh, reused} {
		b, err := json.Marshal(obs)
		require.NoError(t, err)
		for _, list := range []string{"agents", "resources", "stations", "hazards"} { // a wall is still in view
			require.Contains(t, string(b), `"nearby_`+list+`":[]`)
		}
	}
}
