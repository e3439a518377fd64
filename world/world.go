package world

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/arena-sim/arena/nav"
)

// World is the whole simulated state of one episode. Build it with New, step it
// with Step, and apply decisions through the action methods between steps.
type World struct {
	name      string
	seed      uint64
	tick      int
	tickRate  float64
	dt        float64
	bounds    Bounds
	cellSize  float64
	terrain   Terrain
	rules     Rules
	objective Objective

	items     map[string]ItemDef
	recipes   map[string]*Recipe
	recipeIDs []string

	agents    []*Agent
	agentByID map[string]*Agent
	resources []*Resource
	stations  []*Station
	hazards   []*Hazard
	obstacles []*Obstacle
	points    []*CapturePoint
	names     map[string]entityRef

	resourceIdx, stationIdx, hazardIdx, obstacleIdx *bucketGrid
	agentIdx                                        *agentGrid
	agentIdxDirty                                   bool
	maxHazardRadius, maxObstacleExtent              float64
	// hazardNear is, by bucket of hazardIdx, whether an agent there could
	// be inside a hazard (the hazards never move).
	hazardNear []bool
	// obstacleGeo is, by obstacle, where it is and its extent: what
	// observations test every obstacle near an agent against, packed so
	// that a crowd of obstacles takes a few cache lines.
	obstacleGeo []obstacleGeo

	navGrid   *nav.Grid
	sightGrid *nav.Grid
	planner   *nav.Planner

	outbox    []pendingMessage
	events    []Event
	spareEv   []Event
	bridge    bridge
	schedule  []ScheduledEvent
	variables map[string]any
	// varsView and varsText are what observations show of the variables:
	// built once per change and shared by every observation (read-only).
	varsView   map[string]any
	varsText   string
	rng        *streams
	secret     *streams // hidden information (SecretRand)
	components []Component
	capture    *captureGame // nil without capture rules

	recipeCache    map[string]RecipeView
	observeScratch observeScratch
	respawns       respawnHeap
	respawnDue     []int32
	agentByRank    []int32 // agent indices in the order of ids
	agentRank      []int32 // by agent index: its rank in the order of ids
	metricNames    []string
	required       []requiredMetric // the required metrics but time, in metricNames' order
	objectiveView  Objective        // what observations show
	sightSums      []uint16         // summed-area table of the sight grid, modulo 2¹⁶
	noPrefetch     bool             // SetPrefetch(false)
	serialWalks    bool             // SetParallelWalks(false)
	rosterIDs      []string
	recipientBuf   []*Agent // scratch for message delivery
	recipientIdx   []int32
	walk           walkScratch // collision's scratch on the tick goroutine
	grid           bodyGrid    // collision's broad phase
	rosterDirty    bool
	walks          walkPlan // a parallel step's plan (StepWith)

	// compactViews are the views of the entities that the compact
	// observations of a decision point share (PrepareCompactObserve).
	compactViews [ViewLists][]EntityView
}

type entityKind uint8

const (
	kindAgent entityKind = iota + 1
	kindResource
	kindStation
	kindHazard
	kindObstacle
	kindPoint
)

var kindNames = [...]string{"", "agent", "resource", "station", "hazard", "obstacle", "capture_point"}

func (k entityKind) String() string { return kindNames[k] }

type entityRef struct {
	kind  entityKind
	index int
}

// New builds a world from a config. Errors name the entity and what is wrong.
func New(cfg Config) (*World, error) {
	b := cfg.Bounds
	if !(b.MaxX > b.MinX) || !(b.MaxZ > b.MinZ) || math.IsInf(b.Width(), 0) || math.IsInf(b.Depth(), 0) {
		return nil, fmt.Errorf("world bounds [%g, %g]×[%g, %g] are empty or not finite", b.MinX, b.MaxX, b.MinZ, b.MaxZ)
	}
	w := &World{
		name:      cfg.Name,
		seed:      cfg.Seed,
		tickRate:  cfg.TickRate,
		bounds:    b,
		cellSize:  cfg.CellSize,
		terrain:   cfg.Terrain,
		rules:     cfg.Rules.withDefaults(),
		objective: cfg.Objective,
		items:     map[string]ItemDef{},
		recipes:   map[string]*Recipe{},
		agentByID: map[string]*Agent{},
		names:     map[string]entityRef{},
		rng:       newStreams(cfg.Seed),
		secret:    newStreams(secretSeed(cfg)),
	}
	if w.tickRate <= 0 {
		w.tickRate = 10
	}
	w.dt = 1 / w.tickRate
	if w.cellSize <= 0 {
		w.cellSize = 0.5
	}
	if cells := b.Width() / w.cellSize * b.Depth() / w.cellSize; cells > 1<<22 {
		return nil, fmt.Errorf("world of %g×%g with cell size %g has %.0f navigation cells; the limit is %d", b.Width(), b.Depth(), w.cellSize, cells, 1<<22)
	}
	if w.objective.SuccessMetrics == nil {
		w.objective.SuccessMetrics = map[string]MetricTarget{}
	}
	for _, it := range cfg.Items {
		w.items[it.Name] = it
	}
	for i := range cfg.Recipes {
		r := cfg.Recipes[i]
		if r.OutputCount <= 0 {
			r.OutputCount = 1
		}
		if _, dup := w.recipes[r.Output]; dup {
			return nil, fmt.Errorf("recipe %q is defined twice", r.Output)
		}
		w.recipes[r.Output] = &r
		w.recipeIDs = append(w.recipeIDs, r.Output)
	}
	sort.Strings(w.recipeIDs)
	if err := w.addEntities(cfg); err != nil {
		return nil, err
	}
	w.buildNavigation()
	if err := w.buildPhysics(cfg.Agents); err != nil {
		return nil, err
	}
	if err := w.setupCapture(cfg.Capture); err != nil {
		return nil, err
	}
	w.schedule = cfg.Schedule
	for name, v := range cfg.Variables {
		if err := w.SetVariable(name, v); err != nil {
			return nil, err
		}
	}
	w.components = cfg.Components
	seen := map[string]bool{}
	for _, c := range w.components {
		if seen[c.Name()] {
			return nil, fmt.Errorf("component %q is configured twice", c.Name())
		}
		seen[c.Name()] = true
		if err := c.Attach(w); err != nil {
			return nil, fmt.Errorf("attach component %q: %w", c.Name(), err)
		}
	}
	if err := w.checkMetrics(); err != nil {
		return nil, err
	}
	w.metricNames = w.objective.MetricNames()
	for _, name := range w.metricNames {
		if m := w.objective.SuccessMetrics[name]; m.Required && name != "time" {
			w.required = append(w.required, requiredMetric{name, m})
		}
	}
	// Observations show a copy: a controller that edits its observation cannot
	// change the game.
	w.objectiveView = w.objective
	w.objectiveView.SuccessMetrics = make(map[string]MetricTarget, len(w.objective.SuccessMetrics))
	for k, m := range w.objective.SuccessMetrics {
		w.objectiveView.SuccessMetrics[k] = m
	}
	return w, nil
}

func (w *World) ground(x, z float64) Vec3 {
	return Vec3{x, w.terrain.HeightAt(w.bounds, x, z), z}
}

func (w *World) claim(name string, ref entityRef) error {
	if name == "" {
		return fmt.Errorf("a %s has no name", ref.kind)
	}
	if strings.EqualFold(name, "all") || strings.EqualFold(name, "team") {
		return fmt.Errorf("%s name %q is reserved", ref.kind, name)
	}
	if prev, ok := w.names[name]; ok {
		return fmt.Errorf("name %q is used by a %s and a %s; names must be unique", name, prev.kind, ref.kind)
	}
	w.names[name] = ref
	return nil
}

func (w *World) inside(kind, name string, x, z float64) error {
	if math.IsNaN(x) || math.IsNaN(z) || !w.bounds.Contains(x, z) {
		return fmt.Errorf("%s %q at (%g, %g) is outside the world [%g, %g]×[%g, %g]", kind, name, x, z,
			w.bounds.MinX, w.bounds.MaxX, w.bounds.MinZ, w.bounds.MaxZ)
	}
	return nil
}

func (w *World) addEntities(cfg Config) error {
	bucket := math.Max(w.rules.PerceptionRadius, 4)
	agentBucket := math.Max(w.rules.PerceptionRadius/2, 2)
	w.resourceIdx = newBucketGrid(w.bounds, bucket)
	w.stationIdx = newBucketGrid(w.bounds, bucket)
	w.hazardIdx = newBucketGrid(w.bounds, bucket)
	w.obstacleIdx = newBucketGrid(w.bounds, bucket)
	w.agentIdx = newAgentGrid(w.bounds, agentBucket)
	for _, o := range cfg.Obstacles {
		if err := w.inside("obstacle", o.Name, o.X, o.Z); err != nil {
			return err
		}
		shape := o.Shape
		if shape == "" {
			shape = "circle"
		}
		switch shape {
		case "circle":
			if !(o.Radius > 0) {
				return fmt.Errorf("obstacle %q: radius must be positive", o.Name)
			}
		case "box":
			if !(o.SizeX > 0) || !(o.SizeZ > 0) {
				return fmt.Errorf("obstacle %q: box size must be positive", o.Name)
			}
		default:
			return fmt.Errorf("obstacle %q: shape %q is not circle or box", o.Name, o.Shape)
		}
		ob := &Obstacle{Name: o.Name, ObstacleType: o.ObstacleType, Pos: w.ground(o.X, o.Z), Shape: shape,
			Radius: o.Radius, SizeX: o.SizeX, SizeZ: o.SizeZ, Height: o.Height, SeeThrough: o.SeeThrough}
		if err := w.claim(o.Name, entityRef{kindObstacle, len(w.obstacles)}); err != nil {
			return err
		}
		ob.shown, ob.shownExtent = roundVec(ob.Pos), round2(ob.extent())
		w.obstacleIdx.insert(len(w.obstacles), ob.Pos)
		w.obstacles = append(w.obstacles, ob)
		w.obstacleGeo = append(w.obstacleGeo, obstacleGeo{ob.Pos[0], ob.Pos[2], ob.extent()})
		w.maxObstacleExtent = math.Max(w.maxObstacleExtent, ob.extent())
	}
	for _, r := range cfg.Resources {
		if err := w.inside("resource", r.Name, r.X, r.Z); err != nil {
			return err
		}
		if r.ResourceType == "" {
			return fmt.Errorf("resource %q has no resource_type", r.Name)
		}
		amount := r.Amount
		if amount <= 0 {
			amount = 1
		}
		if err := w.claim(r.Name, entityRef{kindResource, len(w.resources)}); err != nil {
			return err
		}
		res := &Resource{Name: r.Name, ResourceType: r.ResourceType, Pos: w.ground(r.X, r.Z), Amount: amount, RespawnTicks: r.RespawnTicks}
		res.shown = roundVec(res.Pos)
		w.resourceIdx.insert(len(w.resources), res.Pos)
		w.resources = append(w.resources, res)
	}
	for _, s := range cfg.Stations {
		if err := w.inside("station", s.Name, s.X, s.Z); err != nil {
			return err
		}
		if s.StationType == "" {
			return fmt.Errorf("station %q has no station_type", s.Name)
		}
		if err := w.claim(s.Name, entityRef{kindStation, len(w.stations)}); err != nil {
			return err
		}
		st := &Station{Name: s.Name, StationType: s.StationType, Pos: w.ground(s.X, s.Z)}
		st.shown = roundVec(st.Pos)
		w.stationIdx.insert(len(w.stations), st.Pos)
		w.stations = append(w.stations, st)
	}
	for _, h := range cfg.Hazards {
		if err := w.inside("hazard", h.Name, h.X, h.Z); err != nil {
			return err
		}
		if !(h.Radius > 0) || math.IsInf(h.Radius, 1) {
			return fmt.Errorf("hazard %q: radius must be positive and finite, got %g", h.Name, h.Radius)
		}
		if h.EntryDamage < 0 || h.DamagePerSecond < 0 {
			return fmt.Errorf("hazard %q: damage must not be negative", h.Name)
		}
		if err := w.claim(h.Name, entityRef{kindHazard, len(w.hazards)}); err != nil {
			return err
		}
		hz := &Hazard{Name: h.Name, HazardType: h.HazardType, Pos: w.ground(h.X, h.Z), Radius: h.Radius,
			EntryDamage: h.EntryDamage, DamagePerSecond: h.DamagePerSecond}
		hz.shown = roundVec(hz.Pos)
		w.hazardIdx.insert(len(w.hazards), hz.Pos)
		w.hazards = append(w.hazards, hz)
		w.maxHazardRadius = math.Max(w.maxHazardRadius, h.Radius)
	}
	w.hazardNear = w.hazardIdx.near(w.maxHazardRadius)
	for _, p := range cfg.Points {
		if err := w.inside("capture point", p.Name, p.X, p.Z); err != nil {
			return err
		}
		if err := w.claim(p.Name, entityRef{kindPoint, len(w.points)}); err != nil {
			return err
		}
		radius := p.Radius
		if radius <= 0 {
			radius = 3
		}
		cp := &CapturePoint{Name: p.Name, Pos: w.ground(p.X, p.Z), Radius: radius}
		cp.shown = roundVec(cp.Pos)
		w.points = append(w.points, cp)
	}
	for _, s := range cfg.Agents {
		if err := w.inside("agent", s.ID, s.X, s.Z); err != nil {
			return err
		}
		if err := w.claim(s.ID, entityRef{kindAgent, len(w.agents)}); err != nil {
			return err
		}
		mul := s.Speed
		if mul <= 0 {
			mul = 1
		}
		a := &Agent{
			ID: s.ID, Team: s.Team, Pos: w.ground(s.X, s.Z), Health: w.rules.MaxHealth, MaxHealth: w.rules.MaxHealth,
			Alive: true, Inventory: map[string]int{}, Capacity: w.rules.InventoryCapacity, SpeedMul: mul,
			index: len(w.agents), status: ActionStatus{Status: "idle"},
		}
		a.Stats.CompletedTick, a.Stats.DiedTick = -1, -1
		a.Stats.Collected, a.Stats.Crafted = map[string]int{}, map[string]int{}
		w.agents = append(w.agents, a)
		w.agentByID[a.ID] = a
	}
	// Each agent's rank in the order of ids, so that observations break
	// distance ties by id without reading the ids.
	order := make([]*Agent, len(w.agents))
	copy(order, w.agents)
	slices.SortFunc(order, func(a, b *Agent) int { return strings.Compare(a.ID, b.ID) })
	w.agentByRank = make([]int32, len(order))
	w.agentRank = make([]int32, len(order))
	for r, a := range order {
		w.agentByRank[r] = int32(a.index)
		w.agentRank[a.index] = int32(r)
	}
	w.agentIdxDirty = true
	return nil
}

// Name is the scenario name the world was built from.
func (w *World) Name() string { return w.name }

// Seed is the world's seed.
func (w *World) Seed() uint64 { return w.seed }

// Tick is the number of completed steps.
func (w *World) Tick() int { return w.tick }

// TickRate is the number of ticks per simulated second.
func (w *World) TickRate() float64 { return w.tickRate }

// Bounds is the ground rectangle.
func (w *World) Bounds() Bounds { return w.bounds }

// Rules are the world's constants, defaults filled in.
func (w *World) Rules() Rules { return w.rules }

// Objective is what each agent is asked to achieve.
func (w *World) Objective() Objective { return w.objective }

// Agents returns every agent in id order of the scenario. Callers must not modify the slice.
func (w *World) Agents() []*Agent { return w.agents }

// Agent returns the agent with the id, or nil.
func (w *World) Agent(id string) *Agent { return w.agentByID[id] }

// Resources returns every resource, collected or not.
func (w *World) Resources() []*Resource { return w.resources }

// Stations returns every crafting station.
func (w *World) Stations() []*Station { return w.stations }

// Hazards returns every hazard.
func (w *World) Hazards() []*Hazard { return w.hazards }

// Obstacles returns every obstacle.
func (w *World) Obstacles() []*Obstacle { return w.obstacles }

// CapturePoints returns every capture point.
func (w *World) CapturePoints() []*CapturePoint { return w.points }

// Recipe returns the recipe that makes an item, or nil.
func (w *World) Recipe(item string) *Recipe { return w.recipes[item] }

// HeightAt is the ground height at (x, z).
func (w *World) HeightAt(x, z float64) float64 { return w.terrain.HeightAt(w.bounds, x, z) }

// Terrain returns the world's height field (shared: do not modify).
func (w *World) Terrain() Terrain { return w.terrain }

// ItemType is the type of an item (food, material, ...); "material" when the scenario does not say.
func (w *World) ItemType(item string) string {
	if it, ok := w.items[item]; ok && it.Type != "" {
		return it.Type
	}
	return "material"
}

// TakeEvents returns the events published since the last call and starts a new log.
// The returned slice stays valid until the next call.
func (w *World) TakeEvents() []Event {
	ev := w.events
	w.events = w.spareEv[:0]
	w.spareEv = ev
	return ev
}

// Step advances the world by one tick: messages sent last tick are delivered,
// crafting progresses, agents move and collide, hazards hurt, resources respawn,
// components run, and objectives are checked.
func (w *World) Step() { w.StepWith(nil) }

// Done reports whether the episode is over, and why: "completed" when every
// living agent has met its required metrics, "all_dead" when no agent is left
// alive, or "time_limit". In a world with capture rules, "completed" means
// that the capture game is over (a team won, or a draw; this wins over the
// time limit on the same tick), and meeting the objective does not end it.
func (w *World) Done() (bool, string) {
	if over, _ := w.GameOver(); over {
		return true, "completed"
	}
	if w.objective.TimeLimit > 0 && w.tick >= w.objective.TimeLimit {
		return true, "time_limit"
	}
	alive, completed := 0, 0
	for _, a := range w.agents {
		if a.Alive {
			alive++
			if a.Stats.CompletedTick >= 0 {
				completed++
			}
		}
	}
	if len(w.agents) > 0 && alive == 0 {
		return true, "all_dead"
	}
	if alive > 0 && completed == alive && w.capture == nil {
		return true, "completed"
	}
	return false, ""
}

// Damage hurts an agent; at zero health it dies. cause names what hurt it.
func (w *World) Damage(a *Agent, amount float64, cause string) {
	if !a.Alive || !(amount > 0) {
		return
	}
	dealt := math.Min(amount, a.Health)
	a.Health -= dealt
	a.Stats.DamageTaken += dealt
	if a.Health <= 1e-9 {
		a.Health = 0
		w.kill(a, cause)
	}
}

func (w *World) kill(a *Agent, cause string) {
	a.Alive = false
	a.Stats.DiedTick = w.tick
	w.rosterDirty = true
	w.cancelAction(a)
	a.Vel = Vec3{}
	a.status = ActionStatus{Status: "dead", Detail: "killed by " + cause}
	a.inHazards = a.inHazards[:0]
	w.grid.unplace(a.index)
	w.agentIdxDirty = true
	w.Publish(Event{Type: "agent_died", Agent: a.ID, Data: map[string]any{"cause": cause}})
}

// cancelAction stops whatever the agent was doing and frees its station.
func (w *World) cancelAction(a *Agent) {
	if a.action.kind == actCraft && a.action.craftAt != nil && a.action.craftAt.InUseBy == a.ID {
		a.action.craftAt.InUseBy = ""
	}
	a.action = actionState{}
}
