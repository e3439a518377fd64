package ipc

import (
	"unicode/utf8"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/rlarrays"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

// ProtocolVersion is the version of the wire protocol this package speaks.
const ProtocolVersion = 1

// Client → server messages.

// Hello opens a session.
type Hello struct {
	Type string `cbor:"type"`
	// Protocol is a number (an integer, or a float that is one).
	Protocol float64 `cbor:"protocol"`
	Role     string  `cbor:"role"` // "agent" or "spectator"
	Agent    string  `cbor:"agent,omitempty"`
	Token    string  `cbor:"token,omitempty"`
	Name     string  `cbor:"name,omitempty"`
	SDK      string  `cbor:"sdk,omitempty"`
	// Arrays says an observation_arrays message follows the welcome: the
	// session's observations wait for it, so that every one carries its
	// arrays.
	Arrays bool `cbor:"arrays,omitempty"`
	// FullRoster asks for the whole roster (agent_ids) in every observation,
	// as servers sent it before rosters were sent as changes (see
	// ObservationMsg.AgentsLeft).
	FullRoster bool `cbor:"full_roster,omitempty"`
}

// Decision answers the observation of Tick.
type Decision struct {
	Type      string         `cbor:"type"`
	Tick      float64        `cbor:"tick"` // a whole number; integers and floats are both accepted
	Tool      string         `cbor:"tool"`
	Params    map[string]any `cbor:"params,omitempty"`
	Reasoning string         `cbor:"reasoning,omitempty"`
}

// Query calls a query tool mid-turn. ID is echoed in the result; it may be any
// CBOR value the client likes (an integer or a string, usually).
type Query struct {
	Type   string          `cbor:"type"`
	ID     cbor.RawMessage `cbor:"id"`
	Tool   string          `cbor:"tool"`
	Params map[string]any  `cbor:"params,omitempty"`
}

// Ping asks for a Pong with the same ID.
type Ping struct {
	Type string          `cbor:"type"`
	ID   cbor.RawMessage `cbor:"id,omitempty"`
}

// Bye closes the session cleanly.
type Bye struct {
	Type string `cbor:"type"`
}

// ObservationArrays asks that the session's observations carry their
// encoding for a reinforcement-learning environment (rlarrays), laid out as
// Layout says. An agent sends it after its welcome; a layout the server
// cannot use is answered with a BAD_MESSAGE error.
type ObservationArrays struct {
	Type   string           `cbor:"type"`
	Layout *rlarrays.Layout `cbor:"layout"`
	// ObservationBytes asks that observations come as observation_cbor,
	// the observation map's encoding in a byte string, with its score and
	// alive beside it (see ObservationMsg.Embed): a client that reads the
	// arrays decodes the map only when it needs it.
	ObservationBytes bool `cbor:"observation_bytes,omitempty"`
}

// Control is a spectator's request: pause, resume, step, speed, or inspect
// (Agent: whose last observation later frames carry; "" for nobody).
type Control struct {
	Type    string  `cbor:"type"`
	Command string  `cbor:"command"`
	Value   float64 `cbor:"value,omitempty"`
	Agent   string  `cbor:"agent,omitempty"`
}

// Server → client messages.

// Welcome accepts a Hello.
type Welcome struct {
	Type              string          `cbor:"type"`
	Protocol          int             `cbor:"protocol"`
	Session           string          `cbor:"session"`
	AgentID           string          `cbor:"agent_id,omitempty"`
	Team              string          `cbor:"team,omitempty"`
	Scenario          string          `cbor:"scenario"`
	Episode           int             `cbor:"episode"`
	EpisodeID         string          `cbor:"episode_id"`
	Seed              uint64          `cbor:"seed"` // the agent's own seed (engine.AgentSeed), never the world's
	Tick              int             `cbor:"tick"`
	TickRate          float64         `cbor:"tick_rate"`
	Mode              string          `cbor:"mode"`
	DecisionTimeoutMS int             `cbor:"decision_timeout_ms"`
	Tools             []tools.Spec    `cbor:"tools"`
	Objective         world.Objective `cbor:"objective"`
	// AgentIDs is the roster: every living agent's id, in scenario order, as
	// observations' agent_ids list it.
	AgentIDs []string `cbor:"agent_ids"`
}

// ObservationMsg carries an agent's observation at a decision point.
//
// The roster (the observation's agent_ids) is sent whole in welcome and
// episode_start and then only as changes: with OmitAgentIDs the observation
// is encoded without agent_ids, and AgentsLeft lists the agents that left the
// roster since a roster the client is known to hold. A client's Roster puts
// agent_ids back.
type ObservationMsg struct {
	Type        string             `cbor:"type"`
	Tick        int                `cbor:"tick"`
	DeadlineMS  int                `cbor:"deadline_ms,omitempty"`
	Observation *world.Observation `cbor:"observation"`
	// Arrays is the observation's encoding, for sessions that asked for it
	// with ObservationArrays.
	Arrays *rlarrays.Arrays `cbor:"arrays,omitempty"`
	// AgentsLeft are agents to take off the client's roster (some may be
	// off it already).
	AgentsLeft []string `cbor:"agents_left,omitempty"`
	// OmitAgentIDs leaves agent_ids out of the observation's encoding.
	OmitAgentIDs bool `cbor:"-"`
	// Embed sends the observation as observation_cbor (a byte string holding
	// the encoding of the observation map, without agent_ids) in place of
	// observation, with the observation's score and alive in the message,
	// and agent_ids too unless OmitAgentIDs (ObservationArrays.ObservationBytes).
	Embed bool `cbor:"-"`
	// Shared, when set, encodes the parts of the observation that the
	// observations of a decision point share once for all of them (see
	// SharedEncodings); the bytes are the same.
	Shared *SharedEncodings `cbor:"-" json:"-"`
}

// Result answers a Query.
type Result struct {
	Type         string          `cbor:"type"`
	ID           cbor.RawMessage `cbor:"id"`
	Success      bool            `cbor:"success"`
	Data         map[string]any  `cbor:"data,omitempty"`
	ErrorCode    string          `cbor:"error_code,omitempty"`
	ErrorMessage string          `cbor:"error_message,omitempty"`
}

// Pong answers a Ping.
type Pong struct {
	Type string          `cbor:"type"`
	ID   cbor.RawMessage `cbor:"id,omitempty"`
}

// EpisodeStart tells a session an episode has begun. Agents get their first
// observation of the episode right after it.
type EpisodeStart struct {
	Type      string          `cbor:"type"`
	Episode   int             `cbor:"episode"`
	EpisodeID string          `cbor:"episode_id"`
	Seed      uint64          `cbor:"seed"` // the agent's own seed, as in Welcome
	Tick      int             `cbor:"tick"`
	Objective world.Objective `cbor:"objective"`
	// AgentIDs is the roster at the start (see Welcome.AgentIDs).
	AgentIDs []string `cbor:"agent_ids"`
}

// EpisodeEnd tells a session an episode is over. Final says no episode
// follows: the server closes the session after it.
type EpisodeEnd struct {
	Type    string          `cbor:"type"`
	Episode int             `cbor:"episode"`
	Tick    int             `cbor:"tick"`
	Reason  string          `cbor:"reason"`
	Final   bool            `cbor:"final"`
	Results *engine.Results `cbor:"results,omitempty"`
	// Observation is the agent's observation after the episode's last tick
	// (to agent sessions, when the episode ran to its end), so that a learner
	// sees the state the episode ended in; Arrays is its encoding when the
	// session asked for one.
	Observation *world.Observation `cbor:"observation,omitempty"`
	Arrays      *rlarrays.Arrays   `cbor:"arrays,omitempty"`

	// shared, when set (ShareResults), keeps the results' encoding for
	// e's copies.
	shared *SharedEncodings
}

// ShareResults makes e and the copies made of it afterwards encode
// Results once, at the first send, and copy those bytes at the next:
// every session gets every agent's results, so encoding them per session
// grew with the square of the agents. Results must not change afterwards.
func (e *EpisodeEnd) ShareResults() {
	e.shared = &SharedEncodings{}
}

// Frame is what spectators receive every tick: every agent with its current
// action, every entity, and the tick's public events.
type Frame struct {
	Type    string `cbor:"type"`
	Episode int    `cbor:"episode"`
	Tick    int    `cbor:"tick"`
	Paused  bool   `cbor:"paused,omitempty"`
	// TeamScores are a capture game's scores by team.
	TeamScores map[string]int `cbor:"team_scores,omitempty"`
	Agents     []FrameAgent   `cbor:"agents"`
	Entities   []FrameEntity  `cbor:"entities,omitempty"`
	Events     []world.Event  `cbor:"events,omitempty"`
	// World describes the episode: in a spectator's first frame of each
	// episode, with the obstacles.
	World *FrameWorld `cbor:"world,omitempty"`
	// Decisions are the decisions applied in the tick, with their results.
	Decisions []engine.DecisionEntry `cbor:"decisions,omitempty"`
	// Panels are the components' summaries for spectators.
	Panels []world.Panel `cbor:"panels,omitempty"`
	// Inspect is the last observation of the agent this spectator inspects.
	Inspect *FrameInspect `cbor:"inspect,omitempty"`
}

// FrameWorld is what does not change during an episode.
type FrameWorld struct {
	Scenario string `cbor:"scenario"`
	// Bounds are the ground's extent: min x, min z, max x, max z.
	Bounds   [4]float64 `cbor:"bounds"`
	TickRate float64    `cbor:"tick_rate"`
	// Mode is how the episode is paced: lockstep or realtime for a server,
	// local for an in-process run, replay for a replay.
	Mode           string  `cbor:"mode"`
	DecisionPeriod int     `cbor:"decision_period,omitempty"`
	Perception     float64 `cbor:"perception_radius"`
	// Terrain is the height field: Base plus, when given, a grid of heights
	// laid evenly over Bounds (rows along z, columns along x).
	TerrainBase    float64         `cbor:"terrain_base"`
	TerrainHeights [][]float64     `cbor:"terrain_heights,omitempty"`
	Objective      world.Objective `cbor:"objective"`
}

// FrameInspect is an agent's last observation: the one its last decision
// answered (Tick is the observation's tick).
type FrameInspect struct {
	Agent       string          `cbor:"agent"`
	Tick        int             `cbor:"tick"`
	Observation cbor.RawMessage `cbor:"observation"`
}

// FrameAgent is one agent in a frame.
type FrameAgent struct {
	ID       string             `cbor:"id"`
	Team     string             `cbor:"team,omitempty"`
	Position world.Vec3         `cbor:"position"`
	Facing   float64            `cbor:"facing"`
	Health   float64            `cbor:"health"`
	Alive    bool               `cbor:"alive"`
	Score    float64            `cbor:"score"`
	Action   world.ActionStatus `cbor:"action"`
	// Inventory is what the agent carries; Metrics, the values of the
	// objective's metrics for it.
	Inventory map[string]int     `cbor:"inventory,omitempty"`
	Metrics   map[string]float64 `cbor:"metrics,omitempty"`
}

// FrameEntity is one non-agent entity in a frame.
type FrameEntity struct {
	Name     string     `cbor:"name"`
	Type     string     `cbor:"type"`
	Kind     string     `cbor:"kind,omitempty"` // resource_type, station_type, hazard_type, ...
	Position world.Vec3 `cbor:"position"`
	// Size is the radius of circles, or the half extents [x, z] of boxes.
	Size      []float64 `cbor:"size,omitempty"`
	Available bool      `cbor:"available,omitempty"`
	InUse     bool      `cbor:"in_use,omitempty"`
	Owner     string    `cbor:"owner,omitempty"`
	Progress  float64   `cbor:"progress,omitempty"`
	// Capturing is the team making progress on a capture point, and
	// Contested whether teams tie inside it.
	Capturing string `cbor:"capturing,omitempty"`
	Contested bool   `cbor:"contested,omitempty"`
}

// ErrorMsg reports a protocol error; Fatal ones are followed by close.
type ErrorMsg struct {
	Type    string `cbor:"type"`
	Code    string `cbor:"code"`
	Message string `cbor:"message"`
	Fatal   bool   `cbor:"fatal"`
}

// NewError builds the error message for a protocol error.
// Its message is cut to maxErrorMessage bytes (at a character boundary, then
// "…"): what a client sent is clipped where it is echoed, and this bounds the
// rest.
func NewError(e *ProtocolError) ErrorMsg {
	msg := e.Message
	if len(msg) > maxErrorMessage {
		cut := maxErrorMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return ErrorMsg{Type: "error", Code: e.Code, Message: msg, Fatal: e.Fatal}
}

// Notice tells a session something about the server that is not an error:
// code DRAINING when the server is shutting down after the episode under way.
type Notice struct {
	Type    string `cbor:"type"` // "notice"
	Code    string `cbor:"code"`
	Message string `cbor:"message"`
}

// maxErrorMessage bounds an error message's length in bytes.
const maxErrorMessage = 1024
