package world

// Config is everything needed to build a world. The scenarios package produces it
// from a scenario file; tests build it directly. Zero values of Rules fields take
// the defaults documented on each field.
type Config struct {
	Name string
	// Seed drives everything agents may see (layout, message drops, the
	// order decisions apply in).
	Seed uint64
	// SecretSeed drives hidden information (World.SecretRand); zero derives
	// it from Seed. A server draws it fresh so that nothing an agent can learn
	// reveals it.
	SecretSeed uint64
	Bounds     Bounds
	TickRate   float64 // ticks per simulated second; default 10
	// CellSize is the side of a navigation and line-of-sight cell in world units; default 0.5.
	CellSize float64
	Terrain  Terrain

	Items      []ItemDef
	Recipes    []Recipe
	Obstacles  []ObstacleSpec
	Resources  []ResourceSpec
	Stations   []StationSpec
	Hazards    []HazardSpec
	Points     []CapturePointSpec
	Agents     []AgentSpec
	Rules      Rules
	Objective  Objective
	Components []Component
	// Capture, when set, makes the capture points a team game (see CaptureRules).
	Capture *CaptureRules
	// Variables are the scenario variables every agent sees (numbers, text
	// or booleans); components may change them.
	Variables map[string]any
	// Schedule lists events the scenario publishes at given ticks.
	Schedule []ScheduledEvent
}

// Rules are the tunable constants of the universal tools and the physics.
type Rules struct {
	PerceptionRadius   float64 // default 10
	CollectRange       float64 // default 2.0
	CraftRange         float64 // default 2.5
	CommRange          float64 // default 30; messages only reach agents this close
	MessageDropProb    float64 // default 0: every message in range is delivered
	MaxMessageLen      int     // default 500 characters
	QueryRadius        float64 // default 20, query_world's radius when none is given
	MaxQueryRadius     float64 // default 50
	InventoryCapacity  int     // default 50 items
	MaxHealth          float64 // default 100
	AgentRadius        float64 // default 0.4
	BaseSpeed          float64 // default 5 units per second
	MaxSpeedMultiplier float64 // default 2; faster requests are capped
	ArrivalTolerance   float64 // default 0.5
	// StuckSeconds is how long a move may make no progress before it fails; default 2.
	StuckSeconds float64
	// HazardCost is the navigation cost of a hazard cell relative to a free one; default 8.
	HazardCost uint8
	// ClusterSize is the navigation planner's cluster side in cells; default 12,
	// which measured fastest for agent-scale routes (docs/performance.md).
	ClusterSize int
	// MaxNearbyAgents is how many agents in view an observation lists, the
	// nearest; it counts the others (nearby_agents_more). Default 16, so
	// that a dense crowd costs each observer a bounded list.
	MaxNearbyAgents int
}

// DefaultMaxNearbyAgents is Rules.MaxNearbyAgents's default: more than any
// built-in scenario's default number of agents, so that their observations
// list every agent in view.
const DefaultMaxNearbyAgents = 16

func (r Rules) withDefaults() Rules {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&r.PerceptionRadius, 10)
	def(&r.CollectRange, 2.0)
	def(&r.CraftRange, 2.5)
	def(&r.CommRange, 30)
	def(&r.MaxQueryRadius, 50)
	def(&r.QueryRadius, min(20, r.MaxQueryRadius))
	def(&r.MaxHealth, 100)
	def(&r.AgentRadius, 0.4)
	def(&r.BaseSpeed, 5)
	def(&r.MaxSpeedMultiplier, 2)
	def(&r.ArrivalTolerance, 0.5)
	def(&r.StuckSeconds, 2)
	if r.MaxMessageLen == 0 {
		r.MaxMessageLen = 500
	}
	if r.InventoryCapacity == 0 {
		r.InventoryCapacity = 50
	}
	if r.HazardCost == 0 {
		r.HazardCost = 8
	}
	if r.ClusterSize == 0 {
		r.ClusterSize = 12
	}
	if r.MaxNearbyAgents <= 0 {
		r.MaxNearbyAgents = DefaultMaxNearbyAgents
	}
	return r
}

// ItemDef describes an item that can sit in an inventory.
type ItemDef struct {
	Name string `json:"name"`
	Type string `json:"type"` // food, material, tool, ...
}

// Recipe turns inputs into an output at a station of a given type.
type Recipe struct {
	Output      string         `json:"output"`
	OutputCount int            `json:"output_count"` // default 1
	Inputs      map[string]int `json:"inputs"`
	StationType string         `json:"station_type"`
	Ticks       int            `json:"ticks"` // 0 or 1: instant; more: the agent is BUSY until done
}

// ObstacleSpec places a solid object. Shape is "circle" (Radius) or "box" (Size).
type ObstacleSpec struct {
	Name         string
	ObstacleType string // tree, rock, wall, ...
	X, Z         float64
	Shape        string
	Radius       float64
	SizeX, SizeZ float64
	Height       float64
	// SeeThrough obstacles block movement but not line of sight (a low fence).
	SeeThrough bool
}

// ResourceSpec places a collectable resource.
type ResourceSpec struct {
	Name         string
	ResourceType string
	X, Z         float64
	Amount       int // items given per collection; default 1
	// RespawnTicks brings the resource back this many ticks after collection; 0 never.
	RespawnTicks int
}

// StationSpec places a crafting station.
type StationSpec struct {
	Name        string
	StationType string
	X, Z        float64
}

// HazardSpec places a damaging area.
type HazardSpec struct {
	Name            string
	HazardType      string // pit, fire, ...
	X, Z            float64
	Radius          float64
	EntryDamage     float64 // dealt once when an agent enters
	DamagePerSecond float64 // dealt while an agent stays inside
}

// CapturePointSpec places a point that teams can capture.
type CapturePointSpec struct {
	Name   string
	X, Z   float64
	Radius float64
}

// AgentSpec is one agent slot.
type AgentSpec struct {
	ID   string
	Team string
	X, Z float64
	// Speed multiplies Rules.BaseSpeed for this agent; default 1.
	Speed float64
}
