package render

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/arena-sim/arena/ipc"
	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/ebitenutil"
	"github.com/hajimehoshi/ebiten/v2/vector"
)

// Colours: every colour the viewer draws with lives here.
var (
	ColBackground   = color.RGBA{0x1e, 0x22, 0x28, 0xff}
	ColGrid         = color.RGBA{0x2a, 0x2f, 0x37, 0xff}
	ColObstacle     = color.RGBA{0x6b, 0x6f, 0x78, 0xff}
	ColResource     = color.RGBA{0x3c, 0xc8, 0x5a, 0xff} // available; by type below
	ColResourceGone = color.RGBA{0x3a, 0x4a, 0x3e, 0xff}
	ColStation      = color.RGBA{0x4a, 0x90, 0xe2, 0xff}
	ColStationInUse = color.RGBA{0xf5, 0xa6, 0x23, 0xff}
	ColHazard       = color.RGBA{0xd0, 0x30, 0x30, 0x60}
	ColCapture      = color.RGBA{0xc0, 0xc0, 0xc0, 0xff}
	ColPath         = color.RGBA{0xff, 0xff, 0xff, 0x90}
	ColSelect       = color.RGBA{0xff, 0xff, 0x00, 0xff}
	ColHealthBack   = color.RGBA{0x40, 0x10, 0x10, 0xff}
	ColHealth       = color.RGBA{0x40, 0xe0, 0x40, 0xff}
	ColDead         = color.RGBA{0x55, 0x55, 0x55, 0xff}
	ColPanel        = color.RGBA{0x00, 0x00, 0x00, 0xb0}
	// TeamColours are given to teams in sorted order; agents without a
	// team get NoTeam.
	TeamColours = []color.RGBA{
		{0xe7, 0x4c, 0x3c, 0xff}, {0x34, 0x98, 0xdb, 0xff}, {0x2e, 0xcc, 0x71, 0xff}, {0x9b, 0x59, 0xb6, 0xff},
		{0xf1, 0xc4, 0x0f, 0xff}, {0x1a, 0xbc, 0x9c, 0xff}, {0xe6, 0x7e, 0x22, 0xff}, {0xec, 0xf0, 0xf1, 0xff},
	}
	NoTeam = color.RGBA{0xe0, 0xe0, 0xe0, 0xff}
	// NamedTeams are the colours of teams named after one.
	NamedTeams = map[string]color.RGBA{"red": TeamColours[0], "blue": TeamColours[1], "green": TeamColours[2],
		"purple": TeamColours[3], "yellow": TeamColours[4], "orange": TeamColours[6], "white": TeamColours[7]}
	// ResourceColours colour known resource types; others get ColResource.
	ResourceColours = map[string]color.RGBA{
		"wood": {0x8b, 0x5a, 0x2b, 0xff}, "stone": {0xa0, 0xa0, 0xb0, 0xff}, "food": {0x3c, 0xc8, 0x5a, 0xff},
		"water": {0x30, 0x90, 0xff, 0xff}, "ore": {0xb0, 0x60, 0x30, 0xff}, "metal": {0xb0, 0x60, 0x30, 0xff},
	}
)

// TeamColour is the colour of a team: its own when it is named after a
// colour (red, blue, ...), else one given in sorted order of the model's teams.
func (m *Model) TeamColour(team string) color.RGBA {
	if team == "" {
		return NoTeam
	}
	if c, ok := NamedTeams[team]; ok {
		return c
	}
	var teams []string
	for _, a := range m.Agents {
		if a.Team != "" && !slices.Contains(teams, a.Team) {
			teams = append(teams, a.Team)
		}
	}
	slices.Sort(teams)
	i := slices.Index(teams, team)
	if i < 0 {
		return NoTeam
	}
	return TeamColours[i%len(TeamColours)]
}

// ResourceColour is the colour a resource is drawn with.
func ResourceColour(e ipc.FrameEntity) color.RGBA {
	if !e.Available {
		return ColResourceGone
	}
	if c, ok := ResourceColours[e.Kind]; ok {
		return c
	}
	return ColResource
}

// Draw draws the model: the ground, then entities, agents, and the HUD.
func (g *Game) Draw(screen *ebiten.Image) {
	screen.Fill(ColBackground)
	m, c := &g.Model, &g.Camera
	g.drawGrid(screen)
	px := func(metres float64) float32 { return float32(metres * c.Scale) }
	at := func(x, z float64) (float32, float32) {
		sx, sy := c.WorldToScreen(x, z)
		return float32(sx), float32(sy)
	}
	for _, e := range m.Static {
		x, y := at(e.Position[0], e.Position[2])
		if len(e.Size) == 2 {
			vector.FillRect(screen, x-px(e.Size[0]), y-px(e.Size[1]), 2*px(e.Size[0]), 2*px(e.Size[1]), ColObstacle, false)
		} else if len(e.Size) == 1 {
			vector.FillCircle(screen, x, y, px(e.Size[0]), ColObstacle, true)
		}
	}
	for _, e := range m.Entities {
		x, y := at(e.Position[0], e.Position[2])
		switch e.Type {
		case "hazard":
			r := px(firstOr(e.Size, 1))
			vector.FillCircle(screen, x, y, r, ColHazard, true)
		case "capture_point":
			r := px(firstOr(e.Size, 2))
			col := ColCapture
			if e.Owner != "" {
				col = m.TeamColour(e.Owner)
			}
			vector.StrokeCircle(screen, x, y, r, 2, col, true)
			if e.Progress > 0 {
				var p vector.Path
				p.Arc(x, y, r+3, -math.Pi/2, -math.Pi/2+float32(2*math.Pi*math.Min(e.Progress, 1)), vector.Clockwise)
				so := &vector.StrokeOptions{Width: 3}
				do := &vector.DrawPathOptions{AntiAlias: true}
				do.ColorScale.ScaleWithColor(col)
				vector.StrokePath(screen, &p, so, do)
			}
		}
	}
	for _, e := range m.Entities {
		x, y := at(e.Position[0], e.Position[2])
		switch e.Type {
		case "resource":
			r := max(px(0.35), 3)
			vector.FillCircle(screen, x, y, r, ResourceColour(e), false)
		case "station":
			s := max(px(0.6), 5)
			col := ColStation
			if e.InUse {
				col = ColStationInUse
			}
			vector.FillRect(screen, x-s, y-s, 2*s, 2*s, col, false)
		}
	}
	// Paths under the agents.
	for _, a := range m.Agents {
		if len(a.Action.Path) == 0 || !a.Alive {
			continue
		}
		x0, y0 := at(a.Position[0], a.Position[2])
		for _, p := range a.Action.Path {
			x1, y1 := at(p[0], p[2])
			vector.StrokeLine(screen, x0, y0, x1, y1, 1, ColPath, true)
			x0, y0 = x1, y1
		}
	}
	for _, a := range m.Agents {
		x, y := at(a.Position[0], a.Position[2])
		r := max(px(AgentRadius), 4)
		col := m.TeamColour(a.Team)
		if !a.Alive {
			col = ColDead
		}
		if a.ID == m.Selected {
			vector.StrokeCircle(screen, x, y, r+3, 2, ColSelect, true)
		}
		vector.FillCircle(screen, x, y, r, col, false)
		// Facing: a line from the centre (facing is the heading in radians
		// from +x towards +z, as world.Agent.Facing).
		fx, fy := float32(math.Cos(a.Facing)), float32(math.Sin(a.Facing))
		vector.StrokeLine(screen, x, y, x+fx*r*1.6, y+fy*r*1.6, 2, ColSelect, true)
		// Health bar above.
		w := 2 * r
		h := float32(max(0, math.Min(a.Health, 100))) / 100
		vector.FillRect(screen, x-r, y-r-6, w, 3, ColHealthBack, false)
		vector.FillRect(screen, x-r, y-r-6, w*h, 3, ColHealth, false)
	}
	g.drawHUD(screen)
}

func firstOr(s []float64, d float64) float64 {
	if len(s) > 0 {
		return s[0]
	}
	return d
}

// drawGrid draws a line every GridMetres (scaled up when lines crowd).
func (g *Game) drawGrid(screen *ebiten.Image) {
	c := &g.Camera
	step := 5.0
	for step*c.Scale < 24 {
		step *= 2
	}
	x0, z0 := c.ScreenToWorld(0, 0)
	x1, z1 := c.ScreenToWorld(c.W, c.H)
	for x := math.Floor(x0/step) * step; x <= x1; x += step {
		sx, _ := c.WorldToScreen(x, 0)
		vector.StrokeLine(screen, float32(sx), 0, float32(sx), float32(c.H), 1, ColGrid, false)
	}
	for z := math.Floor(z0/step) * step; z <= z1; z += step {
		_, sy := c.WorldToScreen(0, z)
		vector.StrokeLine(screen, 0, float32(sy), float32(c.W), float32(sy), 1, ColGrid, false)
	}
}

// HUD is the text at the top left: tick, state, speed, team scores.
func (g *Game) HUD() []string {
	m := &g.Model
	state := "playing"
	if g.paused {
		state = "paused"
	}
	lines := []string{fmt.Sprintf("episode %d  tick %d  %s  speed x%g", m.Episode, m.Tick, state, g.speed)}
	if len(m.TeamScores) > 0 {
		var parts []string
		for _, t := range slices.Sorted(maps.Keys(m.TeamScores)) {
			parts = append(parts, fmt.Sprintf("%s %d", t, m.TeamScores[t]))
		}
		lines = append(lines, "scores: "+strings.Join(parts, "  "))
	}
	if g.status != "" {
		lines = append(lines, g.status)
	}
	if err := g.Src.Err(); err != nil {
		lines = append(lines, "source: "+err.Error())
	}
	if g.help {
		lines = append(lines, HelpLines...)
	} else {
		lines = append(lines, "h: help")
	}
	return lines
}

// HelpLines list the controls.
var HelpLines = []string{
	"space: pause/resume   right or .: step one tick   + / -: speed",
	"click: inspect agent  esc: deselect   drag: pan   wheel: zoom   f: fit",
}

func (g *Game) drawHUD(screen *ebiten.Image) {
	hud := g.HUD()
	vector.FillRect(screen, 0, 0, float32(g.Camera.W), float32(16*len(hud)+4), ColPanel, false)
	ebitenutil.DebugPrint(screen, strings.Join(hud, "\n"))
	if lines := g.Model.Inspector(); lines != nil {
		w, h := 330, 16*len(lines)+8
		x, y := int(g.Camera.W)-w-8, 16*len(hud)+12
		vector.FillRect(screen, float32(x), float32(y), float32(w), float32(h), ColPanel, false)
		ebitenutil.DebugPrintAt(screen, strings.Join(lines, "\n"), x+4, y+4)
	}
	// The event log: the last few events, bottom left.
	n := min(len(g.Model.Events), 6)
	if n > 0 {
		var lines []string
		for _, e := range g.Model.Events[len(g.Model.Events)-n:] {
			s := fmt.Sprintf("t%d %s", e.Tick, e.Type)
			if e.Agent != "" {
				s += " " + e.Agent
			}
			lines = append(lines, s)
		}
		ebitenutil.DebugPrintAt(screen, strings.Join(lines, "\n"), 4, int(g.Camera.H)-16*n-4)
	}
}
