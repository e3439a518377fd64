// Package benchworld generates the large worlds that benchmarks and
// `arena bench` measure: a square map with trees, rocks and walls, resources
// that respawn, hazards, and built-in foragers.
package benchworld

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/world"
)

// Options size the generated world. Zero fields take the defaults in brackets.
type Options struct {
	Seed   uint64
	Agents int     // [1000]
	Size   float64 // side in units [256]
}

// Config generates the world config.
func Config(opt Options) world.Config {
	if opt.Agents <= 0 {
		opt.Agents = 1000
	}
	if opt.Size <= 0 {
		opt.Size = 256
	}
	half := opt.Size / 2
	rng := rand.New(rand.NewPCG(world.DeriveSeed(opt.Seed, "benchworld"), 1))
	at := func(margin float64) (float64, float64) {
		return -half + margin + rng.Float64()*(opt.Size-2*margin), -half + margin + rng.Float64()*(opt.Size-2*margin)
	}
	area := opt.Size * opt.Size
	cfg := world.Config{
		Name: "bench", Seed: opt.Seed, TickRate: 10, CellSize: 1,
		Bounds: world.Bounds{MinX: -half, MinZ: -half, MaxX: half, MaxZ: half},
		Rules:  world.Rules{InventoryCapacity: 1 << 20},
		Objective: world.Objective{Description: "collect", TimeLimit: 0,
			SuccessMetrics: map[string]world.MetricTarget{"resources_collected": {Target: 10, Required: true}}},
	}
	// Trees and rocks, plus walls: about 22% of the navigation cells end up blocked.
	for i := 0; i < int(area/90); i++ {
		x, z := at(2)
		cfg.Obstacles = append(cfg.Obstacles, world.ObstacleSpec{Name: fmt.Sprintf("Tree%d", i), ObstacleType: "tree", X: x, Z: z, Shape: "circle", Radius: 0.6 + rng.Float64()*1.4})
	}
	for i := 0; i < int(area/1200); i++ {
		x, z := at(6)
		sx, sz := 1.0, 4+rng.Float64()*10
		if rng.IntN(2) == 0 {
			sx, sz = sz, sx
		}
		cfg.Obstacles = append(cfg.Obstacles, world.ObstacleSpec{Name: fmt.Sprintf("Wall%d", i), ObstacleType: "wall", X: x, Z: z, Shape: "box", SizeX: sx, SizeZ: sz})
	}
	for i := 0; i < int(area/4000); i++ {
		x, z := at(4)
		cfg.Hazards = append(cfg.Hazards, world.HazardSpec{Name: fmt.Sprintf("Pit%d", i), HazardType: "pit", X: x, Z: z, Radius: 1.5, EntryDamage: 5, DamagePerSecond: 1})
	}
	types := []string{"berry", "wood", "stone", "mushroom"}
	near := indexObstacles(cfg.Obstacles, opt.Size)
	for i := 0; i < int(area/40); i++ {
		x, z := at(1)
		for near.blocked(x, z) {
			x, z = at(1)
		}
		cfg.Resources = append(cfg.Resources, world.ResourceSpec{Name: fmt.Sprintf("R%d", i), ResourceType: types[i%len(types)], X: x, Z: z, RespawnTicks: 300})
	}
	for i := 0; i < opt.Agents; i++ {
		x, z := at(2)
		cfg.Agents = append(cfg.Agents, world.AgentSpec{ID: fmt.Sprintf("agent_%04d", i+1), X: x, Z: z})
	}
	return cfg
}

// New builds the world and a built-in forager for every agent.
func New(opt Options) (*world.World, map[string]engine.Controller, error) {
	w, err := world.New(Config(opt))
	if err != nil {
		return nil, nil, fmt.Errorf("generate bench world: %w", err)
	}
	ctrls := make(map[string]engine.Controller, len(w.Agents()))
	for _, a := range w.Agents() {
		ctrls[a.ID] = bots.NewForager(bots.Info{AgentID: a.ID, Seed: opt.Seed, Bounds: w.Bounds(), Rules: w.Rules()})
	}
	return w, ctrls, nil
}

// obstacleBuckets files obstacles by the square buckets their reach (outline
// plus a unit) overlaps, so that placing a resource tests only the obstacles
// near it; the answers are those of testing every obstacle.
type obstacleBuckets struct {
	half  float64
	cols  int
	cells [][]int
	obs   []world.ObstacleSpec
}

const bucketSide = 16.0

func indexObstacles(obs []world.ObstacleSpec, size float64) *obstacleBuckets {
	b := &obstacleBuckets{half: size / 2, cols: int(math.Ceil(size/bucketSide)) + 1, obs: obs}
	b.cells = make([][]int, b.cols*b.cols)
	for i, o := range obs {
		rx, rz := o.Radius+1, o.Radius+1
		if o.Shape == "box" {
			rx, rz = o.SizeX/2+1, o.SizeZ/2+1
		}
		x0, z0 := b.coord(o.X-rx), b.coord(o.Z-rz)
		x1, z1 := b.coord(o.X+rx), b.coord(o.Z+rz)
		for cz := z0; cz <= z1; cz++ {
			for cx := x0; cx <= x1; cx++ {
				b.cells[cz*b.cols+cx] = append(b.cells[cz*b.cols+cx], i)
			}
		}
	}
	return b
}

func (b *obstacleBuckets) coord(v float64) int {
	return min(max(int((v+b.half)/bucketSide), 0), b.cols-1)
}

// blocked reports whether (x, z) is within a unit of an obstacle.
func (b *obstacleBuckets) blocked(x, z float64) bool {
	for _, i := range b.cells[b.coord(z)*b.cols+b.coord(x)] {
		if nearObstacle(&b.obs[i], x, z) {
			return true
		}
	}
	return false
}

// nearObstacle reports whether (x, z) is within a unit of o.
func nearObstacle(o *world.ObstacleSpec, x, z float64) bool {
	dx, dz := x-o.X, z-o.Z
	if o.Shape == "box" {
		return math.Abs(dx) < o.SizeX/2+1 && math.Abs(dz) < o.SizeZ/2+1
	}
	return math.Hypot(dx, dz) < o.Radius+1
}
