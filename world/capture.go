package world

import (
	"fmt"
	"slices"
)

// CaptureRules turn a world's capture points into a team game. A world built
// with Config.Capture set runs them every tick (see stepCapture); without it,
// capture points are only placed and reported.
//
// Each tick, for every capture point in scenario order, the living agents with
// a team whose centre is within the point's radius (ground distance, edge
// included) are counted by team:
//
//   - nobody inside: nothing changes (progress is kept, not lost);
//   - two or more teams tie for the most agents inside: the point is
//     contested, and the progress towards capturing it is reset to 0;
//   - one team has strictly more agents inside than any other (the majority):
//     if it owns the point, any progress of another team is reset to 0 (the
//     owner defends it); otherwise the majority team's progress grows by one
//     tick (progress made by another team is first reset to 0), and when it
//     reaches CaptureTicks the team captures the point: it becomes the owner
//     (straight from the previous owner, if any), its progress is reset and it
//     scores PointsPerCapture.
//
// Then every team scores PointsPerHoldTick for each point it owns (a point
// captured this tick included). The first team whose score reaches WinScore
// wins and the game stops; if several reach it on the same tick, the higher
// score wins, and equal scores are a draw. World.Done then ends the episode.
type CaptureRules struct {
	CaptureTicks      int // ticks of uninterrupted majority that capture a point; default 50
	PointsPerCapture  int // scored by the capturing team; default 10
	PointsPerHoldTick int // scored per owned point per tick; default 1
	WinScore          int // the score that wins; default 100
}

func (r CaptureRules) withDefaults() CaptureRules {
	if r.CaptureTicks == 0 {
		r.CaptureTicks = 50
	}
	if r.PointsPerCapture == 0 {
		r.PointsPerCapture = 10
	}
	if r.PointsPerHoldTick == 0 {
		r.PointsPerHoldTick = 1
	}
	if r.WinScore == 0 {
		r.WinScore = 100
	}
	return r
}

// captureGame is the state of a team capture game.
type captureGame struct {
	rules     CaptureRules
	teams     []string // in order of first appearance among the agents
	teamOf    []int    // agent index → team index, -1 without a team
	score     []int    // by team index
	captures  []int    // points captured, by team index
	agentCaps []int    // captures each agent took part in, by agent index
	over      bool
	winner    string // "" while playing, and on a draw
	endTick   int    // tick at which the game ended, -1 before
	counts    []int  // scratch: agents inside a point, by team index
}

// setupCapture switches the capture game on when the config asks for it.
func (w *World) setupCapture(r *CaptureRules) error {
	if r == nil {
		return nil
	}
	rules := r.withDefaults()
	if rules.CaptureTicks < 0 || rules.PointsPerCapture < 0 || rules.PointsPerHoldTick < 0 || rules.WinScore < 0 {
		return fmt.Errorf("capture rules must not be negative: %+v", *r)
	}
	if len(w.points) == 0 {
		return fmt.Errorf("capture rules need at least one capture point")
	}
	g := &captureGame{rules: rules, teamOf: make([]int, len(w.agents)), agentCaps: make([]int, len(w.agents)), endTick: -1}
	for i, a := range w.agents {
		g.teamOf[i] = -1
		if a.Team == "" {
			continue
		}
		t := slices.Index(g.teams, a.Team)
		if t < 0 {
			t = len(g.teams)
			g.teams = append(g.teams, a.Team)
		}
		g.teamOf[i] = t
	}
	g.score = make([]int, len(g.teams))
	g.captures = make([]int, len(g.teams))
	g.counts = make([]int, len(g.teams))
	w.capture = g
	return nil
}

// stepCapture runs one tick of the capture game: progress and captures on
// every point in scenario order, then hold points, then the win check.
func (w *World) stepCapture() {
	g := w.capture
	if g == nil || g.over {
		return
	}
	for _, p := range w.points {
		clear(g.counts)
		r2 := p.Radius * p.Radius
		for i, a := range w.agents {
			if a.Alive && g.teamOf[i] >= 0 && groundDist2(a.Pos, p.Pos) <= r2 {
				g.counts[g.teamOf[i]]++
			}
		}
		best, top, second := -1, 0, 0
		for t, n := range g.counts {
			if n > top {
				best, top, second = t, n, top
			} else if n > second {
				second = n
			}
		}
		switch {
		case top == 0: // nobody inside: progress is kept
			p.Contested = false
		case top == second: // a tie between the teams inside
			p.Contested, p.Capturing, p.ticks = true, "", 0
		case g.teams[best] == p.Owner: // the owner holds it
			p.Contested, p.Capturing, p.ticks = false, "", 0
		default:
			p.Contested = false
			team := g.teams[best]
			if p.Capturing != team {
				p.Capturing, p.ticks = team, 0
			}
			p.ticks++
			if p.ticks >= g.rules.CaptureTicks {
				w.capturePoint(p, best)
			}
		}
		p.Progress = float64(p.ticks) / float64(g.rules.CaptureTicks)
	}
	for _, p := range w.points {
		if t := slices.Index(g.teams, p.Owner); t >= 0 {
			g.score[t] += g.rules.PointsPerHoldTick
		}
	}
	top, leaders := -1, 0
	for t, s := range g.score {
		if s < g.rules.WinScore {
			continue
		}
		switch {
		case s > top:
			top, leaders, g.winner = s, 1, g.teams[t]
		case s == top:
			leaders++
		}
	}
	if top < 0 {
		return
	}
	g.over, g.endTick = true, w.tick
	if leaders > 1 {
		g.winner = ""
		w.Publish(Event{Type: "game_drawn", Data: map[string]any{"score": top, "scores": w.TeamScores()}})
		return
	}
	w.Publish(Event{Type: "team_won", Data: map[string]any{"team": g.winner, "score": top, "scores": w.TeamScores()}})
}

// capturePoint gives a point to team t and credits the team's agents inside it.
func (w *World) capturePoint(p *CapturePoint, t int) {
	g := w.capture
	prev := p.Owner
	p.Owner, p.Capturing, p.ticks = g.teams[t], "", 0
	g.score[t] += g.rules.PointsPerCapture
	g.captures[t]++
	by := []string{}
	r2 := p.Radius * p.Radius
	for i, a := range w.agents {
		if a.Alive && g.teamOf[i] == t && groundDist2(a.Pos, p.Pos) <= r2 {
			g.agentCaps[i]++
			by = append(by, a.ID)
		}
	}
	data := map[string]any{"point": p.Name, "team": g.teams[t], "agents": by, "score": g.score[t]}
	if prev != "" {
		data["previous_owner"] = prev
	}
	w.Publish(Event{Type: "point_captured", Data: data})
}

// CaptureRules returns the world's capture rules (defaults filled in), and
// whether the world plays the capture game at all.
func (w *World) CaptureRules() (CaptureRules, bool) {
	if w.capture == nil {
		return CaptureRules{}, false
	}
	return w.capture.rules, true
}

// TeamStanding is one team's state in a capture game.
type TeamStanding struct {
	Team     string `json:"team"`
	Score    int    `json:"score"`
	Captures int    `json:"captures"` // points captured (a point captured twice counts twice)
	Held     int    `json:"held"`     // points owned now
}

// Standings returns every team's standing, in order of the teams' first
// appearance among the agents; nil without capture rules.
func (w *World) Standings() []TeamStanding {
	g := w.capture
	if g == nil {
		return nil
	}
	out := make([]TeamStanding, len(g.teams))
	for t, team := range g.teams {
		out[t] = TeamStanding{Team: team, Score: g.score[t], Captures: g.captures[t]}
	}
	for _, p := range w.points {
		if t := slices.Index(g.teams, p.Owner); t >= 0 {
			out[t].Held++
		}
	}
	return out
}

// TeamScores returns every team's score, keyed by team; nil without capture rules.
func (w *World) TeamScores() map[string]int {
	if w.capture == nil {
		return nil
	}
	m := make(map[string]int, len(w.capture.teams))
	w.teamScoresInto(m)
	return m
}

func (w *World) teamScoresInto(m map[string]int) {
	for t, team := range w.capture.teams {
		m[team] = w.capture.score[t]
	}
}

// GameOver reports whether a capture game has ended, and its winner ("" on a
// draw). It is false without capture rules and until a team reaches the win score.
func (w *World) GameOver() (over bool, winner string) {
	if w.capture == nil {
		return false, ""
	}
	return w.capture.over, w.capture.winner
}

// captureMetrics are the metrics every agent of a capture world has.
var captureMetrics = []string{"team_score", "team_captures", "captures", "points_held", "won"}

// CaptureMetrics lists the objective metrics of worlds with capture rules:
// team_score (the agent's team's score), team_captures (points its team
// captured), captures (captures the agent took part in, by being inside the
// point when it was taken), points_held (points its team owns now) and won
// (1 when its team won).
func CaptureMetrics() []string { return slices.Clone(captureMetrics) }

// captureMetric returns a capture metric of an agent; ok is false for other
// names and in worlds without capture rules.
func (w *World) captureMetric(a *Agent, name string) (float64, bool) {
	g := w.capture
	if g == nil || !slices.Contains(captureMetrics, name) {
		return 0, false
	}
	if name == "captures" {
		return float64(g.agentCaps[a.index]), true
	}
	t := g.teamOf[a.index]
	if t < 0 {
		return 0, true
	}
	switch name {
	case "team_score":
		return float64(g.score[t]), true
	case "team_captures":
		return float64(g.captures[t]), true
	case "points_held":
		n := 0
		for _, p := range w.points {
			if p.Owner == g.teams[t] {
				n++
			}
		}
		return float64(n), true
	default: // won
		if g.over && g.winner == g.teams[t] {
			return 1, true
		}
		return 0, true
	}
}

// teammates appends every other living agent of the agent's team, wherever
// it is, nearest first (ties by id).
func (v *viewer) teammates(dst []EntityView) []EntityView {
	w := v.w
	if v.self.Team == "" {
		return dst
	}
	w.refreshAgentIndex()
	for i, o := range w.agents {
		if o != v.self && o.Alive && o.Team == v.self.Team {
			v.add(GroundDist(v.self.Pos, o.Pos), o.ID, i)
		}
	}
	for _, c := range v.sorted() {
		o := w.agents[c.idx]
		dst = append(dst, EntityView{Name: o.ID, Type: "agent", Team: o.Team, Position: o.shown,
			Distance: c.d, Health: round2(o.Health), Action: o.status.Status})
	}
	return dst
}

// hashCapture writes the capture game's state into the state hash.
func (w *World) hashCapture(h *Hasher) {
	g := w.capture
	if g == nil {
		return
	}
	for _, p := range w.points {
		h.String(p.Capturing)
		h.Int(p.ticks)
		h.Bool(p.Contested)
	}
	h.Int(len(g.teams))
	for t, team := range g.teams {
		h.String(team)
		h.Int(g.score[t])
		h.Int(g.captures[t])
	}
	for _, n := range g.agentCaps {
		h.Int(n)
	}
	h.Bool(g.over)
	h.String(g.winner)
	h.Int(g.endTick)
}
