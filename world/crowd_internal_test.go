package world

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNearbyAgentsAreTheNearestInViewAndCountTheRest checks observations'
// agent lists against a plain reading of the rule: every other living agent
// within the perception radius and in line of sight, nearest first by the
// distance shown, ties by id; the first MaxNearbyAgents listed and the rest
// counted. Worlds are random, with walls and trees hiding agents, ids whose
// order is not the agents' order, agents on a lattice (equal distances),
// dead agents and agents that moved.
func TestNearbyAgentsAreTheNearestInViewAndCountTheRest(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		limit := []int{1, 3, 16, 200}[seed%4]
		cfg := Config{Name: "crowd", Seed: seed, CellSize: 0.5, Bounds: Bounds{MinX: -15, MinZ: -15, MaxX: 15, MaxZ: 15},
			Rules: Rules{MaxNearbyAgents: limit}}
		for i := 0; i < 12; i++ {
			x, z := rng.Float64()*26-13, rng.Float64()*26-13
			if i%2 == 0 {
				cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("W%d", i), X: x, Z: z, Shape: "box", SizeX: 0.6, SizeZ: 2 + 5*rng.Float64()})
			} else {
				cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("T%d", i), X: x, Z: z, Radius: 0.4 + rng.Float64()})
			}
		}
		for i := 0; i < 90; i++ {
			x, z := float64(rng.IntN(27)-13), float64(rng.IntN(27)-13) // a lattice: many equal distances
			if i%3 == 0 {
				x, z = rng.Float64()*28-14, rng.Float64()*28-14
			}
			cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("%c%d", 'z'-rune(rng.IntN(26)), i), X: x, Z: z})
		}
		w, err := New(cfg)
		require.NoError(t, err)
		stirAgents(w, rng, 11, 5, 28, 28)
		crowded := 0
		for _, a := range w.agents {
			if !a.Alive {
				continue
			}
			var want []*Agent
			for _, o := range w.agents {
				if o != a && o.Alive && GroundDist(a.Pos, o.Pos) <= w.rules.PerceptionRadius && w.LineOfSight(a.Pos, o.Pos) {
					want = append(want, o)
				}
			}
			slices.SortFunc(want, func(p, q *Agent) int {
				if c := cmp.Compare(round2(GroundDist(a.Pos, p.Pos)), round2(GroundDist(a.Pos, q.Pos))); c != 0 {
					return c
				}
				return strings.Compare(p.ID, q.ID)
			})
			more := max(0, len(want)-limit)
			want = want[:min(len(want), limit)]
			obs := w.Observe(a)
			var got []string
			for _, v := range obs.NearbyAgents {
				got = append(got, v.Name)
				require.Equal(t, round2(GroundDist(a.Pos, w.agentByID[v.Name].Pos)), v.Distance)
			}
			var wantIDs []string
			for _, o := range want {
				wantIDs = append(wantIDs, o.ID)
			}
			require.Equal(t, wantIDs, got, "seed %d, %s", seed, a.ID)
			require.Equal(t, more, obs.NearbyAgentsMore, "seed %d, %s", seed, a.ID)
			if more > 0 {
				crowded++
			}
		}
		if limit < 16 {
			require.Positive(t, crowded, "seed %d: no observer had more agents in view than listed", seed)
		}
	}
}

func TestSelectSmallestPutsTheNSmallestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for q := 0; q < 2000; q++ {
		keys := make([]uint64, 1+rng.IntN(80))
		for i := range keys {
			keys[i] = uint64(rng.IntN(40))<<32 | uint64(i) // distinct, many equal distances
		}
		if q%3 == 0 {
			slices.Sort(keys) // sorted and reversed inputs too
			if q%2 == 0 {
				slices.Reverse(keys)
			}
		}
		n := rng.IntN(len(keys) + 1)
		want := slices.Sorted(slices.Values(keys))[:n]
		selectSmallest(keys, n)
		got := slices.Clone(keys[:n])
		slices.Sort(got)
		require.Equal(t, want, got, "n=%d of %d", n, len(keys))
	}
}

// nearbyAgentsByEveryAgent is the agents' part of an observation as it was
// before crowded tiles (and as queries still read it): every other living
// agent tested on its own, within the radius and in line of sight. It is the
// oracle of viewer.agents.
func (w *World) nearbyAgentsByEveryAgent(a *Agent) ([]EntityView, int) {
	r := w.rules.PerceptionRadius
	var keys []uint64
	for _, o := range w.agents {
		if o == a || !o.Alive {
			continue
		}
		dx, dz := o.Pos[0]-a.Pos[0], o.Pos[2]-a.Pos[2]
		d2 := dx*dx + dz*dz
		if d2 > r*r {
			continue
		}
		if d := math.Sqrt(d2); w.lineOfSight(a.Pos, o.Pos, d) {
			keys = append(keys, distKey(d)<<32|uint64(w.agentRank[o.index]))
		}
	}
	slices.Sort(keys)
	n := min(len(keys), w.rules.MaxNearbyAgents)
	views := []EntityView{}
	for _, k := range keys[:n] {
		o := w.agents[w.agentByRank[uint32(k)]]
		views = append(views, EntityView{Name: o.ID, Type: "agent", Team: o.Team, Position: roundVec(o.Pos),
			Distance: float64(k>>32) / 100, Health: round2(o.Health), Action: o.status.Status})
	}
	return views, len(keys) - n
}

// crowdWorld is a small world of crowds among walls and trees: clusters
// of agents, agents on a lattice of half units (segments along the sight
// grid's lines and through its corners, tiles whose far corner is exactly
// at the radius), walls whose sides lie on the grid's lines, and agents
// exactly at the perception radius of others and just inside and outside it.
func crowdWorld(t *testing.T, seed uint64) *World {
	rng := rand.New(rand.NewPCG(seed, 19))
	const half = 18.0
	cfg := Config{Name: "crowd", Seed: seed, CellSize: []float64{1, 0.5}[seed%2], Bounds: Bounds{MinX: -half, MinZ: -half, MaxX: half, MaxZ: half},
		Rules: Rules{MaxNearbyAgents: []int{16, 1, 5, 60}[seed%4]}}
	for i := 0; i < 14; i++ {
		x, z := float64(rng.IntN(30)-15), float64(rng.IntN(30)-15)
		if i%2 == 0 {
			// Sides on the grid's lines: X ± 0.5 and Z ± L/2 are whole.
			cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("W%d", i), X: x + 0.5, Z: z, Shape: "box", SizeX: 1, SizeZ: float64(2 + 2*rng.IntN(3))})
		} else {
			cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("T%d", i), X: x + rng.Float64(), Z: z + rng.Float64(), Radius: 0.3 + rng.Float64()})
		}
	}
	// Agents spawn apart (New finds each a free spot) and are put in
	// place afterwards.
	var at [][2]float64
	add := func(x, z float64) {
		if math.Abs(x) < half && math.Abs(z) < half {
			at = append(at, [2]float64{x, z})
		}
	}
	for c := 0; c < 3; c++ {
		cx, cz := rng.Float64()*20-10, rng.Float64()*20-10
		for i := 0; i < 120; i++ {
			add(cx+rng.NormFloat64()*2, cz+rng.NormFloat64()*2)
		}
	}
	for i := 0; i < 150; i++ {
		add(float64(rng.IntN(40)-20)/2, float64(rng.IntN(40)-20)/2)
	}
	for i := 0; i < 6; i++ {
		x, z := float64(rng.IntN(8)-4), float64(rng.IntN(8)-4)
		add(x, z)
		for _, p := range [][2]float64{{6, 8}, {-8, 6}, {10, 0}, {0, -10}, {-6, -8}} {
			add(x+p[0], z+p[1])                                        // exactly at the radius (10)
			add(math.Nextafter(x+p[0], x), z+p[1])                     // just inside
			add(x+p[0], math.Nextafter(z+p[1], math.Inf(int(p[1])|1))) // just outside (or on)
			// A crowd on the ray to the observer, inside the radius, so
			// that the box of a tile reaches out to the agents above.
			for k := 1; k <= 20; k++ {
				add(x+p[0]*(1-float64(k)/200), z+p[1]*(1-float64(k)/200))
			}
		}
	}
	for i := range at {
		cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("%c%d", 'a'+rune(rng.IntN(26)), i), X: 1.2*float64(i%28) - 16.2, Z: 20 + 1.2*float64(i/28)})
	}
	cfg.Bounds.MaxZ = 22 + 1.2*float64(len(at)/28) // the spawn area, beyond the crowds
	w, err := New(cfg)
	require.NoError(t, err)
	for i, a := range w.agents {
		w.setPos(a, at[i][0], at[i][1])
	}
	w.agentIdxDirty = true
	stirAgents(w, rng, 13, 9, 30, 30)
	return w
}

// TestCrowdTilesAnswerAsEveryAgentTested compares observations' agents,
// with crowded buckets taken in view tile by tile, with the oracle that
// tests every agent, and with the same world's observations when no bucket
// is split (the plain path), over crowds among walls and trees; and checks
// that the crowds did take tiles in view whole, nearest first and not.
func TestCrowdTilesAnswerAsEveryAgentTested(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		w := crowdWorld(t, seed)
		w.refreshAgentIndex()
		g := w.agentIdx
		require.NotEmpty(t, g.tiles, "seed %d: no crowded bucket", seed)
		var fast []*Observation
		whole, opened, shut := 0, 0, 0
		for _, a := range w.agents {
			if !a.Alive {
				continue
			}
			obs := w.Observe(a)
			fast = append(fast, obs)
			want, more := w.nearbyAgentsByEveryAgent(a)
			require.Equal(t, want, obs.NearbyAgents, "seed %d, %s", seed, a.ID)
			require.Equal(t, more, obs.NearbyAgentsMore, "seed %d, %s", seed, a.ID)
			// How the tiles served this observer.
			v := viewer{w: w, self: a, radius: w.rules.PerceptionRadius, sight: true}
			far := uint64(0)
			if len(obs.NearbyAgents) > 0 {
				far = distKey(obs.NearbyAgents[len(obs.NearbyAgents)-1].Distance)
			}
			for i := range g.tiles {
				t := &g.tiles[i]
				if v.tileInView(t, w.rules.PerceptionRadius*w.rules.PerceptionRadius) {
					m := distKey(math.Sqrt(t.near2(a.Pos[0], a.Pos[2])))
					whole++
					if m <= far {
						opened++
					} else {
						shut++
					}
				}
			}
		}
		require.Positive(t, whole, "seed %d: no tile taken in view whole", seed)
		require.Positive(t, opened, "seed %d: no tile taken whole was near enough to be opened", seed)
		require.Positive(t, shut, "seed %d: every tile taken whole was opened", seed)

		// The plain path: no bucket split.
		g.tileDiv = 1
		w.agentIdxDirty = true
		i := 0
		for _, a := range w.agents {
			if !a.Alive {
				continue
			}
			obs := w.Observe(a)
			require.Empty(t, g.tiles)
			require.Equal(t, obs.NearbyAgents, fast[i].NearbyAgents, "seed %d, %s", seed, a.ID)
			require.Equal(t, obs.NearbyAgentsMore, fast[i].NearbyAgentsMore, "seed %d, %s", seed, a.ID)
			i++
		}
	}
}

// TestCompactObservationsExpandToTheFullOnes: a compact observation
// (Worker.ObserveCompact) refers to the agents, resources, obstacles and
// hazards an ordinary one lists, and expanded it is that observation, in
// crowds with dead and moved agents, resources collected and renewed, with
// one Observation reused in both ways over decision points.
func TestCompactObservationsExpandToTheFullOnes(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 12))
		cfg := Config{Name: "compact", Seed: seed, CellSize: 0.5, Bounds: Bounds{MinX: -15, MinZ: -15, MaxX: 15, MaxZ: 15},
			Rules: Rules{MaxNearbyAgents: []int{1, 5, 16, 200}[seed%4]}}
		for i := 0; i < 6; i++ {
			cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("T%d", i), X: rng.Float64()*26 - 13, Z: rng.Float64()*26 - 13, Radius: 0.4 + rng.Float64()})
			cfg.Resources = append(cfg.Resources, ResourceSpec{Name: fmt.Sprintf("R%d", i), ResourceType: "berry", X: rng.Float64()*26 - 13, Z: rng.Float64()*26 - 13, Amount: 3})
		}
		cfg.Hazards = append(cfg.Hazards, HazardSpec{Name: "Mud", HazardType: "mud", X: 2, Z: -3, Radius: 2})
		for i := 0; i < 80; i++ {
			cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("%c%d", 'z'-rune(rng.IntN(26)), i), X: float64(rng.IntN(27) - 13), Z: float64(rng.IntN(27) - 13)})
		}
		w, err := New(cfg)
		require.NoError(t, err)
		k := w.NewWorker()
		var reused Observation
		listed := [ViewLists]int{}
		for round := range 4 {
			stirAgents(w, rng, 17+round, 3, 28, 28)
			w.resources[round].Amount-- // what a view shows changes
			w.BeginObserve()
			w.PrepareCompactObserve()
			for i, a := range w.agents {
				if !a.Alive {
					continue
				}
				full := w.Observe(a)
				if (i+round)%3 == 0 {
					k.ObserveInto(a, &reused) // an ordinary one in between
					for l := range ViewLists {
						refs, views := reused.Compact(l)
						require.Nil(t, refs)
						require.Nil(t, views)
					}
				}
				k.ObserveCompact(a, &reused)
				for l, list := range full.lists() {
					require.Empty(t, *reused.lists()[l])
					refs, views := reused.Compact(ViewList(l))
					require.Len(t, refs, len(*list))
					for j, r := range refs {
						v := views[r.Index]
						v.Distance = r.Distance
						require.Equal(t, (*list)[j], v)
					}
					listed[l] += len(refs)
				}
				reused.Expand()
				want, err := json.Marshal(full)
				require.NoError(t, err)
				got, err := json.Marshal(&reused)
				require.NoError(t, err)
				require.JSONEq(t, string(want), string(got), "seed %d, round %d, %s", seed, round, a.ID)
				refs, _ := reused.Compact(AgentsInView)
				require.Nil(t, refs, "expanded, it is an ordinary observation")
			}
		}
		for l, n := range listed {
			require.Positive(t, n, "seed %d: list %d never in view", seed, l)
		}
	}
}
