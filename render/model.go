// Package render is Arena's viewer: a scene model built from spectator frames
// (live, or rebuilt from a replay), a camera, and a thin Ebiten layer that
// draws the model and maps input to commands. Only this package and
// cmd/arena import Ebiten; the model and camera are plain Go.
package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

// MaxEvents is how many events the model keeps for the log and the inspector.
const MaxEvents = 200

// Model is everything the viewer draws, built from frames.
type Model struct {
	Episode    int
	Tick       int
	Paused     bool
	TeamScores map[string]int
	Agents     []ipc.FrameAgent
	// Entities are the changing entities of the last frame (resources,
	// stations, hazards, capture points); Static are the obstacles, sent once
	// per episode.
	Entities []ipc.FrameEntity
	Static   []ipc.FrameEntity
	// World describes the episode (bounds, terrain, pace, objective): nil
	// until a frame carries it.
	World *ipc.FrameWorld
	// Events are the most recent events, oldest first, at most MaxEvents.
	Events []world.Event
	// Decisions hold every agent's last decision and its result.
	Decisions map[string]engine.DecisionEntry
	// Bubbles are the recent things agents said (messages, posts, speech).
	Bubbles []Bubble
	// Panels are the components' summaries, from the last frame.
	Panels []world.Panel
	// Selected is the id of the inspected agent, or "".
	Selected string
	// Inspect is the selected agent's last observation, when the source
	// sent it.
	Inspect *ipc.FrameInspect
	// Frames counts the frames applied.
	Frames int

	// The logbook (logbook.go): the conversation, every agent's decisions,
	// and the components' deaths and revivals, from the episode's start to
	// the tick shown.
	Talk    []Line
	History map[string][]HistoryEntry
	Deaths  []world.Event
	// Transcripts, when set, are the run's language-model transcripts: the
	// history pane shows each decision's exchange with the model.
	Transcripts *Transcripts

	obs    *world.Observation // Inspect decoded
	obsErr error
}

// Bubble is something an agent said at a tick: a message, a post, a speech.
type Bubble struct {
	Agent string
	Tick  int
	Text  string
}

// BubbleSeconds is how long a bubble shows, in world seconds, as it fades.
const BubbleSeconds = 3

// bubbleParams are the parameters that carry what an agent says, in the
// order they are looked for.
var bubbleParams = []string{"message", "content", "text"}

// Apply updates the model with a frame. Obstacles in a frame replace the
// static entities (a spectator gets them in its first frame of each episode);
// everything else replaces the last frame's. A frame with no agents (a
// replay's skipped tick) adds only its events and decisions. A frame of the
// tick the model already shows (a server acknowledging a control, an
// inspected observation) adds no events or decisions again.
func (m *Model) Apply(f ipc.Frame) {
	repeat := false
	switch {
	case f.Episode != m.Episode && m.Frames > 0:
		m.Static, m.Events, m.World, m.Decisions, m.Bubbles, m.Inspect = nil, nil, nil, nil, nil, nil
		m.Talk, m.History, m.Deaths = nil, nil, nil
	case f.Tick < m.Tick:
		// A seek backwards: the log starts again.
		m.Events, m.Decisions, m.Bubbles = nil, nil, nil
	case f.Tick == m.Tick && m.Frames > 0:
		repeat = true
	}
	if repeat {
		f.Events, f.Decisions = nil, nil
	} else {
		m.truncateLog(f.Tick)
		m.record(f.Tick, f.Decisions, f.Events)
	}
	m.Episode, m.Tick, m.Paused = f.Episode, f.Tick, f.Paused
	if f.World != nil {
		m.World = f.World
	}
	if f.Agents != nil {
		m.Agents, m.TeamScores, m.Panels = f.Agents, f.TeamScores, f.Panels
		m.Entities = m.Entities[:0]
	}
	var static []ipc.FrameEntity
	for _, e := range f.Entities {
		if e.Type == "obstacle" {
			static = append(static, e)
		} else {
			m.Entities = append(m.Entities, e)
		}
	}
	if static != nil {
		m.Static = static
	}
	m.Events = append(m.Events, f.Events...)
	if n := len(m.Events) - MaxEvents; n > 0 {
		m.Events = slices.Delete(m.Events, 0, n)
	}
	for _, d := range f.Decisions {
		if m.Decisions == nil {
			m.Decisions = map[string]engine.DecisionEntry{}
		}
		m.Decisions[d.Agent] = d
		if text := said(d); text != "" {
			m.Bubbles = append(m.Bubbles, Bubble{Agent: d.Agent, Tick: f.Tick, Text: text})
		}
	}
	life := m.bubbleTicks()
	m.Bubbles = slices.DeleteFunc(m.Bubbles, func(b Bubble) bool { return m.Tick-b.Tick >= life })
	if f.Inspect != nil || f.Agents != nil {
		if f.Inspect != m.Inspect {
			m.obs, m.obsErr = nil, nil
		}
		m.Inspect = f.Inspect
	}
	m.Frames++
}

// said is what a decision said out loud, if it said anything: the text
// parameter of a successful tool (send_message, post, speak, ...), with the
// tool named unless it is send_message.
func said(d engine.DecisionEntry) string {
	if !d.Result.Success {
		return ""
	}
	for _, p := range bubbleParams {
		if s, ok := d.Params[p].(string); ok && s != "" {
			if d.Tool == "send_message" {
				if to, _ := d.Params["target_agent"].(string); to != "" && to != "all" {
					return "@" + to + ": " + s
				}
				return s
			}
			return d.Tool + ": " + s
		}
	}
	return ""
}

// bubbleTicks is how many ticks a bubble shows: BubbleSeconds of world time.
func (m *Model) bubbleTicks() int {
	rate := 0.0
	if m.World != nil {
		rate = m.World.TickRate
	}
	return BubbleTicks(rate)
}

// BubbleTicks is how many ticks a bubble shows at a tick rate
// (DefaultTickRate when it is unknown).
func BubbleTicks(rate float64) int {
	return max(1, int(math.Round(BubbleSeconds*tickRate(rate))))
}

// BubbleAlpha is how opaque a bubble is now: 1 when just said, fading to 0.
func (m *Model) BubbleAlpha(b Bubble) float64 {
	return clamp(1-float64(m.Tick-b.Tick)/float64(m.bubbleTicks()), 0, 1)
}

// Observation is the selected agent's last observation, decoded, or nil
// (with why, when it would not decode).
func (m *Model) Observation() (*world.Observation, error) {
	if m.Inspect == nil || m.Inspect.Agent != m.Selected {
		return nil, nil
	}
	if m.obs == nil && m.obsErr == nil {
		var o world.Observation
		if err := cbor.Unmarshal(m.Inspect.Observation, &o); err != nil {
			m.obsErr = fmt.Errorf("decode the observation: %w", err)
		} else {
			m.obs = &o
		}
	}
	return m.obs, m.obsErr
}

// Agent returns the agent with the id, or nil.
func (m *Model) Agent(id string) *ipc.FrameAgent {
	for i := range m.Agents {
		if m.Agents[i].ID == id {
			return &m.Agents[i]
		}
	}
	return nil
}

// AgentEvents returns up to n of the most recent events about the agent,
// newest first.
func (m *Model) AgentEvents(id string, n int) []world.Event {
	var out []world.Event
	for i := len(m.Events) - 1; i >= 0 && len(out) < n; i-- {
		if m.Events[i].Agent == id {
			out = append(out, m.Events[i])
		}
	}
	return out
}

// Bounds is the ground rectangle that holds every entity and agent, with a
// small margin; a 20 m square around the origin when the model is empty.
func (m *Model) Bounds() world.Bounds {
	b := world.Bounds{MinX: math.Inf(1), MinZ: math.Inf(1), MaxX: math.Inf(-1), MaxZ: math.Inf(-1)}
	add := func(p world.Vec3, r float64) {
		b.MinX, b.MaxX = min(b.MinX, p[0]-r), max(b.MaxX, p[0]+r)
		b.MinZ, b.MaxZ = min(b.MinZ, p[2]-r), max(b.MaxZ, p[2]+r)
	}
	for _, e := range m.Static {
		add(e.Position, slices.Max(append([]float64{0}, e.Size...)))
	}
	for _, e := range m.Entities {
		add(e.Position, slices.Max(append([]float64{0}, e.Size...)))
	}
	for _, a := range m.Agents {
		add(a.Position, AgentRadius)
	}
	if math.IsInf(b.MinX, 0) {
		return world.Bounds{MinX: -10, MinZ: -10, MaxX: 10, MaxZ: 10}
	}
	const margin = 2
	return world.Bounds{MinX: b.MinX - margin, MinZ: b.MinZ - margin, MaxX: b.MaxX + margin, MaxZ: b.MaxZ + margin}
}

// AgentRadius is the radius agents are drawn with, in metres.
const AgentRadius = 0.5

// Pick returns the id of the agent under the screen point, or "": the
// nearest agent whose drawn disc (at least PickPixels across) holds it.
func (m *Model) Pick(cam *Camera, sx, sy float64) string {
	best, bestD := "", math.Inf(1)
	reach := max(AgentRadius*cam.Scale, PickPixels)
	for _, a := range m.Agents {
		ax, ay := cam.WorldToScreen(a.Position[0], a.Position[2])
		d := math.Hypot(ax-sx, ay-sy)
		if d <= reach && d < bestD {
			best, bestD = a.ID, d
		}
	}
	return best
}

// PickPixels is the smallest radius, in pixels, a click selects an agent in.
const PickPixels = 8

// Inspector is the selected agent's panel, one line a string; nil when no
// agent (or one no longer in the world) is selected. It shows the agent's
// state, inventory and objective metrics, its last decision (tool, params,
// reasoning) and that decision's result, a summary of the last observation
// (the one the decision answered), and its recent events.
func (m *Model) Inspector() []string {
	a := m.Agent(m.Selected)
	if a == nil {
		return nil
	}
	lines := []string{
		"agent " + a.ID + teamSuffix(a.Team),
		fmt.Sprintf("health %.0f  score %.1f  %s", a.Health, a.Score, map[bool]string{true: "alive", false: "dead"}[a.Alive]),
		fmt.Sprintf("at (%.1f, %.1f, %.1f) facing %.0f°", a.Position[0], a.Position[1], a.Position[2], a.Facing*180/math.Pi),
		"action " + describeAction(a.Action),
		"inventory " + describeCounts(a.Inventory),
	}
	if len(a.Metrics) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(a.Metrics)) {
			part := fmt.Sprintf("%s %g", k, round2(a.Metrics[k]))
			if m.World != nil {
				if t, ok := m.World.Objective.SuccessMetrics[k]; ok {
					part += fmt.Sprintf("/%g", t.Target)
				}
			}
			parts = append(parts, part)
		}
		lines = append(lines, wrap("objective "+strings.Join(parts, ", "), InspectorWidth)...)
	}
	if d, ok := m.Decisions[a.ID]; ok {
		lines = append(lines, wrap(fmt.Sprintf("last decision (tick %d): %s %s", d.Result.Tick, d.Tool, compactJSON(d.Params)), InspectorWidth)...)
		if d.TimedOut {
			lines = append(lines, "  (timed out: the agent did not answer)")
		}
		if d.Reasoning != "" {
			lines = append(lines, wrap("  reasoning: "+d.Reasoning, InspectorWidth)...)
		}
		lines = append(lines, wrap("  result: "+describeResult(d.Result), InspectorWidth)...)
	} else {
		lines = append(lines, "no decision seen yet")
	}
	switch o, err := m.Observation(); {
	case err != nil:
		lines = append(lines, "observation: "+err.Error())
	case o != nil:
		lines = append(lines, fmt.Sprintf("last observation (tick %d, o: whole):", o.Tick))
		lines = append(lines, wrap("  "+summarizeObservation(o), InspectorWidth)...)
	}
	if evs := m.AgentEvents(a.ID, 5); len(evs) > 0 {
		lines = append(lines, "recent events:")
		for _, e := range evs {
			lines = append(lines, fmt.Sprintf("  t%d %s", e.Tick, e.Type))
		}
	}
	return lines
}

// InspectorWidth is the width the inspector's lines are wrapped to, in
// characters.
const InspectorWidth = 52

// ObservationLines is the selected agent's last observation in full, as
// indented JSON lines; nil when there is none.
func (m *Model) ObservationLines() []string {
	o, err := m.Observation()
	if err != nil {
		return []string{err.Error()}
	}
	if o == nil {
		return nil
	}
	b, err := json.MarshalIndent(jsonable(o), "", "  ")
	if err != nil {
		return []string{"observation: " + err.Error()}
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		out = append(out, wrap(l, 2*InspectorWidth)...)
	}
	return out
}

// summarizeObservation says what the agent saw: what is near, its messages,
// the event digest and every component section's text, briefly.
func summarizeObservation(o *world.Observation) string {
	near := map[string]int{}
	for _, l := range [][]world.EntityView{o.NearbyResources, o.NearbyHazards, o.NearbyStations, o.NearbyAgents, o.NearbyObstacles} {
		for _, e := range l {
			near[e.Type]++
		}
	}
	parts := []string{"sees " + describeCounts(near)}
	if len(o.Messages) > 0 {
		parts = append(parts, fmt.Sprintf("%d message(s), the last from %s: %q", len(o.Messages), o.Messages[len(o.Messages)-1].From, o.Messages[len(o.Messages)-1].Content))
	}
	if len(o.Events) > 0 {
		parts = append(parts, fmt.Sprintf("%d event(s)", len(o.Events)))
	}
	for _, name := range slices.Sorted(maps.Keys(o.Components)) {
		if t, _ := o.Components[name]["text"].(string); t != "" {
			parts = append(parts, name+": "+clip(strings.Join(strings.Fields(t), " "), 160))
		}
	}
	return strings.Join(parts, "; ")
}

func describeCounts[V int | float64](m map[string]V) string {
	if len(m) == 0 {
		return "nothing"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %v", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func describeResult(r world.ActionResult) string {
	if r.Success {
		if len(r.Data) > 0 {
			return "ok " + compactJSON(r.Data)
		}
		return "ok"
	}
	return "failed " + r.ErrorCode + ": " + r.ErrorMessage
}

// jsonable makes what the CBOR decoder produced encodable as JSON: nested
// maps arrive as map[any]any (components' sections, tool data), which
// encoding/json refuses; their keys become strings. An observation is
// turned into its generic form first so that its sections are reached.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case *world.Observation:
		if x == nil {
			return nil
		}
		o := *x
		o.Components = make(map[string]world.Section, len(x.Components))
		for name, sec := range x.Components {
			o.Components[name] = jsonable(map[string]any(sec)).(map[string]any)
		}
		o.Variables, _ = jsonable(x.Variables).(map[string]any)
		if x.LastActionResult != nil {
			r := *x.LastActionResult
			r.Data, _ = jsonable(r.Data).(map[string]any)
			o.LastActionResult = &r
		}
		o.Events = make([]world.EventView, len(x.Events))
		for i, e := range x.Events {
			e.Data, _ = jsonable(e.Data).(map[string]any)
			o.Events[i] = e
		}
		return &o
	}
	return v
}

func compactJSON(v map[string]any) string {
	if len(v) == 0 {
		return "{}"
	}
	b, err := json.Marshal(jsonable(v))
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b), 200)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// clip cuts s to n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// wrap breaks s into lines of at most n runes, at spaces where it can;
// continuation lines are indented by two spaces more than the first.
func wrap(s string, n int) []string {
	indent := len(s) - len(strings.TrimLeft(s, " ")) + 2
	var out []string
	r := []rune(s)
	for len(r) > n {
		cut := n
		for i := n; i > n/2; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		out = append(out, string(r[:cut]))
		r = append([]rune(strings.Repeat(" ", indent)), []rune(strings.TrimLeft(string(r[cut:]), " "))...)
	}
	return append(out, string(r))
}

func teamSuffix(t string) string {
	if t == "" {
		return ""
	}
	return " (team " + t + ")"
}

func describeAction(s world.ActionStatus) string {
	if s.Tool == "" {
		return s.Status
	}
	out := s.Tool + " " + s.Status
	if s.Item != "" {
		out += " " + s.Item
	}
	if s.Target != nil {
		out += fmt.Sprintf(" → (%.1f, %.1f)", s.Target[0], s.Target[2])
	}
	if s.Ticks > 0 {
		out += fmt.Sprintf(" (%d ticks left)", s.Ticks)
	}
	if s.ErrorCode != "" {
		out += " " + s.ErrorCode
	}
	return out
}

// ObjectiveProgress sums up the objective for the HUD: its description, the
// living agents' mean score and how many pass it now; "" without one.
func (m *Model) ObjectiveProgress() string {
	if m.World == nil || len(m.World.Objective.SuccessMetrics) == 0 || len(m.Agents) == 0 {
		return ""
	}
	o := m.World.Objective
	var sum float64
	passing := 0
	for _, a := range m.Agents {
		sum += a.Score
		if _, ok := o.Evaluate(a.Metrics); ok {
			passing++
		}
	}
	return fmt.Sprintf("objective: %s  mean score %.1f/100, %d of %d passing", clip(o.Description, 60), sum/float64(len(m.Agents)), passing, len(m.Agents))
}
