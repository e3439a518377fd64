package ipc

import "github.com/arena-sim/arena/world"

// WorldFrame is the world as spectators see it: every agent with its action,
// and every entity but the obstacles (which never change; see
// StaticEntities). Episode, Paused and Events are left to the caller: the
// server and the viewer's replay source both build frames with it.
func WorldFrame(w *world.World) Frame {
	f := Frame{Type: "frame", Tick: w.Tick(), TeamScores: w.TeamScores()}
	for _, a := range w.Agents() {
		// The agent's own state only: a full observation (perception and all)
		// per agent per tick would cost more than the frame is worth.
		score, _ := w.Score(a)
		f.Agents = append(f.Agents, FrameAgent{ID: a.ID, Team: a.Team, Position: a.Pos, Facing: a.Facing,
			Health: a.Health, Alive: a.Alive, Score: score, Action: a.Action()})
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
		f.Entities = append(f.Entities, FrameEntity{Name: p.Name, Type: "capture_point", Position: p.Pos, Size: []float64{p.Radius}, Owner: p.Owner, Progress: p.Progress})
	}
	return f
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
