// Package render is Arena's viewer: a scene model built from spectator frames
// (live, or rebuilt from a replay), a camera, and a thin Ebiten layer that
// draws the model and maps input to commands. Only this package and
// cmd/arena import Ebiten; the model and camera are plain Go.
package render

import (
	"fmt"
	"math"
	"slices"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
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
	// Events are the most recent events, oldest first, at most MaxEvents.
	Events []world.Event
	// Selected is the id of the inspected agent, or "".
	Selected string
	// Frames counts the frames applied.
	Frames int
}

// Apply updates the model with a frame. Obstacles in a frame replace the
// static entities (a spectator gets them in its first frame of each episode);
// everything else replaces the last frame's.
func (m *Model) Apply(f ipc.Frame) {
	if f.Episode != m.Episode && m.Frames > 0 {
		m.Static, m.Events = nil, nil
	} else if f.Tick < m.Tick {
		m.Events = nil // a seek backwards: the log starts again
	}
	m.Episode, m.Tick, m.Paused, m.TeamScores = f.Episode, f.Tick, f.Paused, f.TeamScores
	m.Agents = f.Agents
	m.Entities = m.Entities[:0]
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
	m.Frames++
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
// agent (or one no longer in the world) is selected.
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
	}
	if evs := m.AgentEvents(a.ID, 5); len(evs) > 0 {
		lines = append(lines, "recent events:")
		for _, e := range evs {
			lines = append(lines, fmt.Sprintf("  t%d %s", e.Tick, e.Type))
		}
	}
	return lines
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
