package ipc

import (
	"maps"
	"slices"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

// WorldFrame is the world as spectators see it: every agent with its action,
// inventory and objective metrics, every entity but the obstacles (which
// never change; see StaticEntities), and the components' panels. Episode,
// Paused, Events, Decisions and World are left to the caller (or TickFrame):
// the server, the viewer's replay source and an in-process run all build
// frames with it.
func WorldFrame(w *world.World) Frame {
	// Agents is never nil: a frame without agents is a viewer's skipped tick.
	f := Frame{Type: "frame", Tick: w.Tick(), TeamScores: w.TeamScores(), Agents: make([]FrameAgent, 0, len(w.Agents()))}
	for _, a := range w.Agents() {
		// The agent's own state only: a full observation (perception and all)
		// per agent per tick would cost more than the frame is worth; a
		// spectator asks for the one agent it inspects (Inspection).
		score, _ := w.Score(a)
		fa := FrameAgent{ID: a.ID, Team: a.Team, Position: a.Pos, Facing: a.Facing,
			Health: a.Health, Alive: a.Alive, Score: score, Action: a.Action(), Metrics: w.Progress(a)}
		if len(a.Inventory) > 0 {
			fa.Inventory = maps.Clone(a.Inventory)
		}
		if len(fa.Metrics) == 0 {
			fa.Metrics = nil
		}
		f.Agents = append(f.Agents, fa)
	}
	for _, r := range w.Resources() {
		f.Entities = append(f.Entities, FrameEntity{Name: r.Name, Type: "resource", Kind: r.ResourceType, Position: r.Pos, Available: !r.Collected})
	}
	for _, st := range w.Stations() {
		f.Entities = append(f.Entities, FrameEntity{Name: st.Name, Type: "station", Kind: st.StationType, Position: st.Pos, InUse: st.InUseBy != "", Owner: st.InUseBy})
	}
	for _, h := range w.Hazards() {
		f.Entities = append(f.Entities, FrameEntity{Name: h.Name, Type: "hazard", Kind: h.HazardType, Position: h.Pos, Size: []float64{h.Radius}})
	}
	for _, p := range w.CapturePoints() {
		f.Entities = append(f.Entities, FrameEntity{Name: p.Name, Type: "capture_point", Position: p.Pos, Size: []float64{p.Radius}, Owner: p.Owner, Progress: p.Progress,
			Capturing: p.Capturing, Contested: p.Contested})
	}
	for _, c := range w.Components() {
		if s, ok := c.(world.Spectated); ok {
			p := s.Panel(w)
			p.Name = c.Name()
			f.Panels = append(f.Panels, p)
		}
	}
	return f
}

// TickFrame is WorldFrame after a tick: with the tick's events and the
// decisions applied in it (present when the runner records them), copied
// (the runner reuses its record's slices).
func TickFrame(w *world.World, rec *engine.TickRecord) Frame {
	f := WorldFrame(w)
	f.Events, f.Decisions = slices.Clone(rec.Events), slices.Clone(rec.Decisions)
	return f
}

// Describe is what a spectator is told once per episode about the world:
// its scenario, extent, pace (mode: lockstep, realtime, local or replay),
// perception radius, terrain and objective.
func Describe(w *world.World, mode string, decisionPeriod int) *FrameWorld {
	b, t := w.Bounds(), w.Terrain()
	return &FrameWorld{Scenario: w.Name(), Bounds: [4]float64{b.MinX, b.MinZ, b.MaxX, b.MaxZ}, TickRate: w.TickRate(),
		Mode: mode, DecisionPeriod: max(decisionPeriod, 1), Perception: w.Rules().PerceptionRadius,
		TerrainBase: t.Base, TerrainHeights: t.Heights, Objective: w.Objective()}
}

// Greet makes f a spectator's first frame of an episode: it carries the
// world's description and the obstacles.
func Greet(f *Frame, w *world.World, mode string, decisionPeriod int) {
	f.World = Describe(w, mode, decisionPeriod)
	f.Entities = append(StaticEntities(w), f.Entities...)
}

// Inspection is an agent's observation as a frame carries it, encoded at
// once (the runner reuses observations); nil for no observation.
func Inspection(agent string, obs *world.Observation) *FrameInspect {
	if obs == nil {
		return nil
	}
	b, err := cbor.Marshal(obs)
	if err != nil {
		return nil // an observation always encodes: its fields are plain data
	}
	return &FrameInspect{Agent: agent, Tick: obs.Tick, Observation: b}
}

// StaticEntities are the entities a spectator is sent once per episode: the
// obstacles. Size is the radius of a cylinder, or the half extents [x, z] of
// a box.
func StaticEntities(w *world.World) []FrameEntity {
	var out []FrameEntity
	for _, o := range w.Obstacles() {
		size := []float64{o.Radius}
		if o.Shape == "box" {
			size = []float64{o.SizeX / 2, o.SizeZ / 2}
		}
		out = append(out, FrameEntity{Name: o.Name, Type: "obstacle", Kind: o.ObstacleType, Position: o.Pos, Size: size})
	}
	return out
}
