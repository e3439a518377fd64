package world

// Resource is a collectable item lying in the world.
type Resource struct {
	Name         string
	ResourceType string
	Pos          Vec3
	Amount       int
	RespawnTicks int
	Collected    bool
	respawnAt    int
	shown        Vec3 // Pos as observations print it
}

// Station is a crafting station. InUseBy names the agent crafting at it, if any.
type Station struct {
	Name        string
	StationType string
	Pos         Vec3
	InUseBy     string
	shown       Vec3
}

// Hazard is a round area that damages agents inside it.
type Hazard struct {
	Name            string
	HazardType      string
	Pos             Vec3
	Radius          float64
	EntryDamage     float64
	DamagePerSecond float64
	shown           Vec3
}

// Obstacle is a solid object: agents collide with it and, unless SeeThrough, it blocks sight.
type Obstacle struct {
	Name         string
	ObstacleType string
	Pos          Vec3
	Shape        string // circle or box
	Radius       float64
	SizeX, SizeZ float64
	Height       float64
	SeeThrough   bool
	shown        Vec3
	shownExtent  float64
}

// extent is the obstacle's half-size on the ground: its radius, or half its box diagonal.
func (o *Obstacle) extent() float64 {
	if o.Shape == "box" {
		return 0.5 * hypot(o.SizeX, o.SizeZ)
	}
	return o.Radius
}

// CapturePoint is an area that a team captures by holding it. With capture
// rules (Config.Capture) the world drives Owner, Progress, Capturing and
// Contested every tick (see CaptureRules); without them it only places and
// reports the point.
type CapturePoint struct {
	Name     string
	Pos      Vec3
	Radius   float64
	Owner    string  // the team that holds the point, "" while nobody does
	Progress float64 // fraction (0 to 1) of the capture time Capturing has done
	// Capturing is the team making progress towards capturing the point, if any.
	Capturing string
	// Contested is true while teams tie for the most agents inside the point.
	Contested bool
	ticks     int // Progress in ticks
	shown     Vec3
}

// Message is a message as its receiver sees it.
type Message struct {
	From    string `json:"from"`
	Content string `json:"content"`
	Tick    int    `json:"tick"`
	// To is "all", "team" or the receiver's id, as the sender addressed it.
	To string `json:"to"`
}

type pendingMessage struct {
	from, to, content string
	tick              int
	audience          []string // nil: anyone the target reaches; else only these
}

type actionKind uint8

const (
	actNone actionKind = iota
	actMove
	actCraft
)

// actionState is what an agent is doing between decisions.
type actionState struct {
	kind   actionKind
	target Vec3
	path   []Vec3 // remaining waypoints, world coordinates, last one is the target
	speed  float64
	// progress bookkeeping for stuck detection
	checkPos    Vec3
	checkTick   int
	replanned   bool
	craftRecipe *Recipe
	craftAt     *Station
	craftLeft   int
	startedTick int
}

// AgentStats are the running figures objectives are measured on.
type AgentStats struct {
	ResourcesCollected int
	Collected          map[string]int // by resource type
	ItemsCrafted       int
	Crafted            map[string]int // by item
	DamageTaken        float64
	Distance           float64
	MessagesSent       int
	CompletedTick      int // tick the objective's required metrics were first met; -1 before
	DiedTick           int // -1 while alive
}

// Agent is one acting body in the world.
//
// What another agent's observation shows of it (ID, Team, Health, shown and
// status.Status) lies in its first three cache lines: shown and status sit
// among the exported fields, whose order they do not change, for that.
type Agent struct {
	ID     string
	Team   string
	Pos    Vec3
	Vel    Vec3
	Facing float64 // yaw in radians; 0 faces +x, π/2 faces +z
	Health float64
	shown  Vec3         // Pos as observations print it, set wherever Pos is
	status ActionStatus // what it is doing, as observations show it

	MaxHealth float64
	Alive     bool
	Inventory map[string]int
	Capacity  int
	SpeedMul  float64
	Stats     AgentStats

	index            int
	action           actionState
	lastResult       ActionResult // valid when hasResult
	hasResult        bool
	inbox            []Message
	queryResult      *QueryResult
	inventoryDetails *InventoryDetails
	inHazards        []int
	nearObstacles    nearCache
	plan             plannedPath // a path a Worker planned ahead for MoveTo
}

// InventoryCount is the number of items the agent carries.
func (a *Agent) InventoryCount() int {
	n := 0
	for _, c := range a.Inventory {
		n += c
	}
	return n
}

// Busy reports whether the agent is in the middle of a multi-tick action (crafting).
func (a *Agent) Busy() bool { return a.action.kind == actCraft }
