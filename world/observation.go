package world

// Observation is what one agent perceives at a decision point. Its JSON (and CBOR)
// field names are the wire protocol's.
type Observation struct {
	Tick             int            `json:"tick"`
	AgentID          string         `json:"agent_id"`
	Team             string         `json:"team,omitempty"`
	Position         Vec3           `json:"position"`
	Velocity         Vec3           `json:"velocity"`
	Facing           float64        `json:"facing"`
	Health           float64        `json:"health"`
	MaxHealth        float64        `json:"max_health"`
	Alive            bool           `json:"alive"`
	PerceptionRadius float64        `json:"perception_radius"`
	Inventory        map[string]int `json:"inventory"`
	InventoryUsed    int            `json:"inventory_used"`
	InventoryCap     int            `json:"inventory_capacity"`
	NearbyResources  []EntityView   `json:"nearby_resources"`
	NearbyHazards    []EntityView   `json:"nearby_hazards"`
	NearbyStations   []EntityView   `json:"nearby_stations"`
	NearbyAgents     []EntityView   `json:"nearby_agents"`
	// NearbyAgentsMore counts the other agents in view beyond the
	// Rules.MaxNearbyAgents nearest that NearbyAgents lists.
	NearbyAgentsMore int                   `json:"nearby_agents_more,omitempty"`
	NearbyObstacles  []EntityView          `json:"nearby_obstacles"`
	CapturePoints    []EntityView          `json:"capture_points,omitempty"`
	Teammates        []EntityView          `json:"teammates,omitempty"`   // every other living agent of the team, wherever it is
	TeamScores       map[string]int        `json:"team_scores,omitempty"` // a capture game's score of every team
	AvailableRecipes map[string]RecipeView `json:"available_recipes"`
	Messages         []Message             `json:"messages"`
	// AgentIDs lists every living agent's id (the agent's own included): the
	// ids send_message takes, seen or not. Shared between observations of a
	// tick: read it, do not modify it.
	AgentIDs         []string           `json:"agent_ids"`
	CurrentAction    ActionStatus       `json:"current_action"`
	LastActionResult *ActionResult      `json:"last_action_result"`
	QueryResult      *QueryResult       `json:"query_result,omitempty"`
	InventoryDetails *InventoryDetails  `json:"inventory_details,omitempty"`
	Objective        *Objective         `json:"objective,omitempty"`
	CurrentProgress  map[string]float64 `json:"current_progress"`
	Score            float64            `json:"score"`
	Components       map[string]Section `json:"components,omitempty"`
	// Events is the bridge digest: what components and the scenario's
	// schedule published since the agent's previous observation that it may
	// see and did not cause itself (at most the 20 newest).
	Events []EventView `json:"events,omitempty"`
	// Variables are the scenario variables, with VariablesText rendering
	// them for language models. Shared between observations: read it, do
	// not modify it.
	Variables     map[string]any `json:"variables,omitempty"`
	VariablesText string         `json:"variables_text,omitempty"`

	lastResult ActionResult // storage behind LastActionResult
	// compact holds, in a compact observation (Worker.ObserveCompact), the
	// lists of entities in view that references stand for; in any other,
	// lists without views.
	compact [ViewLists]compactList
}

// compactList is a list of entities in view as references into views of
// the entities that the compact observations of a decision point share.
type compactList struct {
	refs  []EntityRef
	views []EntityView
}

// ViewList names a list of entities in view that a compact observation
// holds as references (Observation.Compact).
type ViewList uint8

const (
	AgentsInView    ViewList = iota // NearbyAgents; views by the agents' rank in the order of ids
	ResourcesInView                 // NearbyResources; views by the resources' index
	ObstaclesInView                 // NearbyObstacles; views by the obstacles' index
	HazardsInView                   // NearbyHazards; views by the hazards' index
	ViewLists                       // how many there are
)

// EntityRef is an entity listed by a compact observation: where its view is
// in the world's shared views, and its distance.
type EntityRef struct {
	Index    int32
	Distance float64
}

// Compact returns, for a compact observation (Worker.ObserveCompact), the
// entities the list l would hold, in order, and the views they index:
// views[r.Index] is the entity's view but for its distance (zero). The
// views are the world's until its next decision point: read them, do not
// modify them. For any other observation both are nil.
func (o *Observation) Compact(l ViewList) (refs []EntityRef, views []EntityView) {
	c := &o.compact[l]
	if c.views == nil {
		return nil, nil
	}
	return c.refs, c.views
}

// Expand makes a compact observation an ordinary one: its lists of
// entities in view hold the views its references stand for. Call it
// before the world's next decision point (World.PrepareCompactObserve); it
// does nothing to any other observation.
func (o *Observation) Expand() {
	if o.compact[AgentsInView].views == nil { // every list has views, or none
		return
	}
	for l, list := range o.lists() {
		c := &o.compact[l]
		*list = (*list)[:0]
		for _, r := range c.refs {
			v := c.views[r.Index]
			v.Distance = r.Distance
			*list = append(*list, v)
		}
		c.refs, c.views = c.refs[:0], nil
	}
}

// lists are the observation's lists that ViewList names, in its order.
func (o *Observation) lists() [ViewLists]*[]EntityView {
	return [ViewLists]*[]EntityView{&o.NearbyAgents, &o.NearbyResources, &o.NearbyObstacles, &o.NearbyHazards}
}

// EntityView is one entity as an agent sees it. Name is the id tools take; Type is
// resource, hazard, station, agent, obstacle or capture_point, and the matching
// kind-specific type field says what sort it is.
type EntityView struct {
	Name         string  `json:"name"`
	Type         string  `json:"type"`
	ResourceType string  `json:"resource_type,omitempty"`
	StationType  string  `json:"station_type,omitempty"`
	HazardType   string  `json:"hazard_type,omitempty"`
	ObstacleType string  `json:"obstacle_type,omitempty"`
	Position     Vec3    `json:"position"`
	Distance     float64 `json:"distance"`
	// Stations: whether another agent is crafting there (always present for stations).
	InUse *bool `json:"in_use,omitempty"`
	// Hazards and obstacles: footprint radius. Hazards: damage dealt.
	Radius          float64 `json:"radius,omitempty"`
	EntryDamage     float64 `json:"entry_damage,omitempty"`
	DamagePerSecond float64 `json:"damage_per_second,omitempty"`
	Amount          int     `json:"amount,omitempty"`
	// Agents.
	Team   string  `json:"team,omitempty"`
	Health float64 `json:"health,omitempty"` // only living agents are listed
	Action string  `json:"action,omitempty"`
	// Capture points: the owning team, the fraction of the capture time done,
	// the team making that progress, and whether teams tie inside the point.
	Owner     string   `json:"owner,omitempty"`
	Progress  *float64 `json:"progress,omitempty"`
	Capturing string   `json:"capturing,omitempty"`
	Contested bool     `json:"contested,omitempty"`
}

// RecipeView is a recipe as observations list it, keyed by the item it makes.
type RecipeView struct {
	Inputs      map[string]int `json:"inputs"`
	StationType string         `json:"station_type"`
	Ticks       int            `json:"ticks"`
	OutputCount int            `json:"output_count"`
}

// ActionStatus says what the agent is doing now: idle, moving, arrived,
// crafting, completed (crafting finished), failed (a move that got stuck) or
// dead, with the details a planner needs.
type ActionStatus struct {
	Tool   string `json:"tool,omitempty"`
	Status string `json:"status"`
	Target *Vec3  `json:"target,omitempty"`
	Path   []Vec3 `json:"path,omitempty"`
	Item   string `json:"item,omitempty"`
	Ticks  int    `json:"ticks_remaining,omitempty"`
	// ErrorCode and Detail explain a failed move.
	ErrorCode string  `json:"error_code,omitempty"`
	Detail    string  `json:"detail,omitempty"`
	Speed     float64 `json:"speed,omitempty"`
}

// QueryResult answers query_world.
type QueryResult struct {
	Tick     int          `json:"tick"`
	Radius   float64      `json:"radius"`
	Filter   string       `json:"filter_type,omitempty"`
	Entities []EntityView `json:"entities"`
}

// InventoryDetails answers query_inventory.
type InventoryDetails struct {
	Items    []InventoryItem `json:"items"`
	Capacity int             `json:"capacity"`
	Used     int             `json:"used"`
}

// InventoryItem is one line of InventoryDetails.
type InventoryItem struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Type  string `json:"type"`
}
