package render

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/ebitenutil"
	"github.com/hajimehoshi/ebiten/v2/vector"
	"maps"
)

// Colours: every colour the viewer draws with lives here. Translucent ones
// are color.NRGBA (not premultiplied).
var (
	ColBackground = color.RGBA{0x1e, 0x22, 0x28, 0xff}
	// The ground: flat, or shaded by height from ColGroundLow (the lowest
	// point) to ColGroundHigh (the highest).
	ColGround     = color.RGBA{0x2a, 0x2f, 0x2a, 0xff}
	ColGroundLow  = color.RGBA{0x1c, 0x22, 0x1e, 0xff}
	ColGroundHigh = color.RGBA{0x6e, 0x6a, 0x52, 0xff}
	ColGrid       = color.NRGBA{0xff, 0xff, 0xff, 0x14}

	ColObstacle     = color.RGBA{0x6b, 0x6f, 0x78, 0xff}
	ColResource     = color.RGBA{0x3c, 0xc8, 0x5a, 0xff} // available; by type below
	ColResourceGone = color.RGBA{0x3a, 0x4a, 0x3e, 0xff}
	ColStation      = color.RGBA{0x4a, 0x90, 0xe2, 0xff}
	ColStationInUse = color.RGBA{0xf5, 0xa6, 0x23, 0xff}
	ColStationEdge  = color.RGBA{0x10, 0x10, 0x10, 0xff}
	ColStationText  = color.RGBA{0x10, 0x10, 0x10, 0xff}
	ColKindLabel    = color.RGBA{0xb8, 0xc8, 0xd8, 0xff}
	ColHazard       = color.NRGBA{0xd0, 0x30, 0x30, 0x60}
	ColHazardLegend = color.RGBA{0x70, 0x28, 0x28, 0xff}
	ColCapture      = color.RGBA{0xc0, 0xc0, 0xc0, 0xff}
	ColContested    = color.RGBA{0xff, 0x80, 0xff, 0xff} // a capture point's progress while teams tie
	ColPath         = color.NRGBA{0xff, 0xff, 0xff, 0x90}
	ColPerception   = color.NRGBA{0xff, 0xff, 0xff, 0x60}
	ColSelect       = color.RGBA{0xff, 0xff, 0x00, 0xff}
	ColHealthBack   = color.RGBA{0x40, 0x10, 0x10, 0xff}
	ColHealth       = color.RGBA{0x40, 0xe0, 0x40, 0xff}
	ColDead         = color.RGBA{0x55, 0x55, 0x55, 0xff}
	ColDeadMark     = color.RGBA{0x20, 0x20, 0x20, 0xff}

	ColLabel       = color.RGBA{0xe8, 0xe8, 0xe8, 0xff}
	ColLabelShadow = color.RGBA{0x00, 0x00, 0x00, 0xff}
	ColBubble      = color.RGBA{0xf4, 0xf1, 0xe6, 0xff}
	ColBubbleText  = color.RGBA{0x1a, 0x1a, 0x1a, 0xff}
	ColBubbleEdge  = color.RGBA{0x30, 0x30, 0x30, 0xff}

	ColPanel       = color.RGBA{0x12, 0x14, 0x18, 0xff} // opaque: the world does not show through
	ColPanelBorder = color.RGBA{0x44, 0x48, 0x50, 0xff}
	ColTabs        = color.RGBA{0x90, 0x98, 0xa8, 0xff}
	ColNarrator    = color.RGBA{0xff, 0xd8, 0x60, 0xff}
	ColHistory     = color.RGBA{0x8e, 0xd1, 0xfc, 0xff}
	ColTranscript  = color.RGBA{0xb8, 0xc4, 0xd0, 0xff}
	ColPanelTitle  = color.RGBA{0xff, 0xd8, 0x60, 0xff}
	ColTimeline    = color.RGBA{0x50, 0x55, 0x60, 0xff}
	ColTimePlayed  = color.RGBA{0x4a, 0x90, 0xe2, 0xff}
	ColTimeCursor  = color.RGBA{0xff, 0xff, 0xff, 0xff}

	// TeamColours are given to teams in sorted order; agents without a
	// team get NoTeam.
	TeamColours = []color.RGBA{
		{0xe7, 0x4c, 0x3c, 0xff}, {0x34, 0x98, 0xdb, 0xff}, {0x2e, 0xcc, 0x71, 0xff}, {0x9b, 0x59, 0xb6, 0xff},
		{0xf1, 0xc4, 0x0f, 0xff}, {0x1a, 0xbc, 0x9c, 0xff}, {0xe6, 0x7e, 0x22, 0xff}, {0xec, 0xf0, 0xf1, 0xff},
	}
	NoTeam = color.RGBA{0xe0, 0xe0, 0xe0, 0xff}
	// AgentColours are given to agents in order when no agent has a team.
	AgentColours = []color.RGBA{
		{0xe7, 0x4c, 0x3c, 0xff}, {0x34, 0x98, 0xdb, 0xff}, {0x2e, 0xcc, 0x71, 0xff}, {0xb0, 0x7c, 0xd6, 0xff},
		{0xf1, 0xc4, 0x0f, 0xff}, {0x1a, 0xbc, 0x9c, 0xff}, {0xe6, 0x7e, 0x22, 0xff}, {0xec, 0xf0, 0xf1, 0xff},
		{0xff, 0x8a, 0xb4, 0xff}, {0x8e, 0xd1, 0xfc, 0xff}, {0xc5, 0xe1, 0x7a, 0xff}, {0xd2, 0xb4, 0x8c, 0xff},
		{0x7f, 0x8c, 0xff, 0xff}, {0xff, 0xb3, 0x47, 0xff}, {0x4d, 0xd0, 0xe1, 0xff}, {0xe0, 0x60, 0xa0, 0xff},
	}
	// ObstacleColours colour known obstacle types; others get ColObstacle.
	ObstacleColours = map[string]color.RGBA{"tree": {0x2f, 0x5a, 0x34, 0xff}, "bush": {0x3d, 0x6b, 0x3a, 0xff},
		"wall": {0x7a, 0x7e, 0x88, 0xff}, "rock": {0x5e, 0x60, 0x66, 0xff}, "log": {0x6a, 0x4a, 0x2e, 0xff}, "stall": {0x8a, 0x6a, 0x4a, 0xff}}
	// NamedTeams are the colours of teams named after one.
	NamedTeams = map[string]color.RGBA{"red": TeamColours[0], "blue": TeamColours[1], "green": TeamColours[2],
		"purple": TeamColours[3], "yellow": TeamColours[4], "orange": TeamColours[6], "white": TeamColours[7]}
	// ResourceColours colour known resource types; others get ColResource.
	ResourceColours = map[string]color.RGBA{
		"wood": {0xc0, 0x80, 0x40, 0xff}, "stone": {0xb4, 0xb4, 0xc4, 0xff}, "food": {0x3c, 0xc8, 0x5a, 0xff},
		"berry": {0xe0, 0x40, 0x80, 0xff}, "mushroom": {0xf0, 0xd8, 0xa8, 0xff}, "coal": {0x50, 0x50, 0x58, 0xff},
		"iron_ore": {0xc8, 0x70, 0x40, 0xff},
		"water":    {0x30, 0x90, 0xff, 0xff}, "ore": {0xb0, 0x60, 0x30, 0xff}, "metal": {0xb0, 0x60, 0x30, 0xff},
	}
)

// Layout, in pixels unless said otherwise.
const (
	charW, lineH = 6, 16 // the debug font's cell
	panelPad     = 4     // inside a panel's box
	panelGap     = 6     // between boxes
	screenMargin = 8     // between boxes and the screen's edge
	minPanelW    = 120

	eventLogLines  = 6  // events shown at the bottom left
	bubbleChars    = 36 // a bubble's text is wrapped at this many characters
	bubbleLines    = 4  // and cut after this many lines
	bubblePad      = 3
	legendSwatch   = 16   // the legend's shape column, in pixels
	kindLabelScale = 14.0 // pixels per metre from which stations are named
	labelGap       = 3    // between a disc's facing line's reach and its label (below the disc)

	minAgentPx    = 4    // the smallest radius an agent is drawn with
	minResourcePx = 3    // and a resource
	minStationPx  = 5    // and half a station
	resourceR     = 0.35 // metres
	stationHalf   = 0.6  // metres
	healthBarGap  = 6    // from the disc's top to the health bar's top
	healthBarH    = 3
	facingFrom    = 0.45 // the facing line runs from this fraction of the radius (the centre pixel keeps the team colour)
	facingTo      = 1.6  // to this one

	gridMetres = 5.0 // the grid's spacing, doubled until lines are gridMinPx apart
	gridMinPx  = 24

	terrainTexels = 16  // terrain image texels per height sample
	terrainMaxPx  = 512 // the terrain image's largest side
	textCacheMax  = 512 // text images kept before the cache is emptied
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

// AgentColour is the colour an agent is drawn with: its team's, or, when no
// agent has a team, one of its own (given in the agents' order); grey when
// dead.
func (m *Model) AgentColour(a *ipc.FrameAgent) color.RGBA {
	if m.Dead(a) {
		return ColDead
	}
	if a.Team != "" {
		return m.TeamColour(a.Team)
	}
	for _, b := range m.Agents {
		if b.Team != "" {
			return NoTeam
		}
	}
	for i := range m.Agents {
		if m.Agents[i].ID == a.ID {
			return AgentColours[i%len(AgentColours)]
		}
	}
	return NoTeam
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

// Shapes entities are told apart by, besides colour.
const (
	shapeDisc = iota
	shapeTriangle
	shapeDiamond
	shapeSquare
	shapeHexagon
	shapeCount
)

// ResourceShapes give known resource kinds a shape; others get one by a
// hash of their name.
var ResourceShapes = map[string]int{"berry": shapeDisc, "food": shapeDisc, "mushroom": shapeTriangle,
	"stone": shapeDiamond, "wood": shapeSquare, "coal": shapeHexagon, "iron_ore": shapeDiamond, "ore": shapeDiamond, "water": shapeDisc}

func resourceShape(kind string) int {
	if s, ok := ResourceShapes[kind]; ok {
		return s
	}
	h := 0
	for _, r := range kind {
		h = h*31 + int(r)
	}
	return (h%shapeCount + shapeCount) % shapeCount
}

// drawShape adds a shape of "radius" r at (x, y) to the batch.
func drawShape(b *shapes, shape int, x, y, r float32, col color.Color) {
	switch shape {
	case shapeTriangle:
		b.polygon(x, y+r*0.15, r*1.2, 3, -math.Pi/2, col, 1)
	case shapeDiamond:
		b.polygon(x, y, r*1.2, 4, -math.Pi/2, col, 1)
	case shapeSquare:
		b.rect(x-r*0.85, y-r*0.85, r*1.7, r*1.7, col, 1)
	case shapeHexagon:
		b.polygon(x, y, r*1.1, 6, 0, col, 1)
	default:
		b.disc(x, y, r, col, 1)
	}
}

// Draw draws the model: the static layer (ground, grid, obstacles), the
// changing entities and the agents in one batch of triangles, the agents'
// labels, their speech bubbles above everything in the world, and the
// panels (opaque) around the world's view.
func (g *Game) Draw(screen *ebiten.Image) {
	g.cache.pruneTexts()
	o := g.layoutOverlays()
	g.over, g.written = o, g.written[:0]
	if g.needFit && g.Model.Frames > 0 {
		g.Camera.FitIn(g.Model.Bounds(), o.view)
		g.needFit = false
	}
	g.drawStatic(screen)
	m, c := &g.Model, &g.Camera
	b := &g.cache.shapes
	px := func(metres float64) float32 { return float32(metres * c.Scale) }
	at := func(x, z float64) (float32, float32) {
		sx, sy := c.WorldToScreen(x, z)
		return float32(sx), float32(sy)
	}
	agentR := max(px(AgentRadius), minAgentPx)
	for _, e := range m.Entities {
		x, y := at(e.Position[0], e.Position[2])
		switch e.Type {
		case "hazard":
			b.disc(x, y, px(firstOr(e.Size, 1)), ColHazard, 1)
		case "capture_point":
			r := px(firstOr(e.Size, 2))
			col := color.Color(ColCapture)
			if e.Owner != "" {
				col = m.TeamColour(e.Owner)
			}
			b.disc(x, y, r, col, 0.12)
			b.ring(x, y, r, 2, col, 1)
			if e.Progress > 0 {
				pc := color.Color(ColCapture)
				switch {
				case e.Contested:
					pc = ColContested
				case e.Capturing != "":
					pc = m.TeamColour(e.Capturing)
				case e.Owner != "":
					pc = m.TeamColour(e.Owner)
				}
				b.arc(x, y, r+4, 4, -math.Pi/2, -math.Pi/2+2*math.Pi*math.Min(e.Progress, 1), pc, 1)
			}
		}
	}
	// Perception radii and paths, under the entities and agents.
	if g.ShowPerception && m.World != nil && m.World.Perception > 0 {
		for _, a := range m.Agents {
			if a.Alive && (m.Selected == "" || a.ID == m.Selected) {
				x, y := at(a.Position[0], a.Position[2])
				b.ring(x, y, px(m.World.Perception), 1, ColPerception, 1)
			}
		}
	}
	for _, a := range m.Agents {
		if len(a.Action.Path) == 0 || !a.Alive {
			continue
		}
		x0, y0 := at(a.Position[0], a.Position[2])
		w := float32(1)
		if a.ID == m.Selected {
			w = 2
		}
		for _, p := range a.Action.Path {
			x1, y1 := at(p[0], p[2])
			b.line(x0, y0, x1, y1, w, ColPath, 1)
			x0, y0 = x1, y1
		}
		if a.ID == m.Selected {
			b.ring(x0, y0, 4, 2, ColSelect, 1) // where the plan ends
		}
	}
	for _, e := range m.Entities {
		x, y := at(e.Position[0], e.Position[2])
		switch e.Type {
		case "resource":
			r := max(px(resourceR), minResourcePx)
			drawShape(b, resourceShape(e.Kind), x, y, r, ResourceColour(e))
		case "station":
			s := max(px(stationHalf), minStationPx)
			col := ColStation
			if e.InUse {
				col = ColStationInUse
			}
			b.rect(x-s-1, y-s-1, 2*s+2, 2*s+2, ColStationEdge, 1)
			b.rect(x-s, y-s, 2*s, 2*s, col, 1)
		}
	}
	for i := range m.Agents {
		a := &m.Agents[i]
		x, y := at(a.Position[0], a.Position[2])
		r := agentR
		if a.ID == m.Selected {
			b.ring(x, y, r+3, 2, ColSelect, 1)
		}
		b.disc(x, y, r, m.AgentColour(a), 1)
		if m.Dead(a) {
			// A cross over the grey disc.
			d := r * 0.7
			b.line(x-d, y-d, x+d, y+d, 2, ColDeadMark, 1)
			b.line(x-d, y+d, x+d, y-d, 2, ColDeadMark, 1)
			continue
		}
		// Facing: a line out of the disc (facing is the heading in radians
		// from +x towards +z, as world.Agent.Facing).
		fx, fy := float32(math.Cos(a.Facing)), float32(math.Sin(a.Facing))
		b.line(x+fx*r*facingFrom, y+fy*r*facingFrom, x+fx*r*facingTo, y+fy*r*facingTo, 2, ColSelect, 1)
		// Health bar above.
		w := 2 * r
		h := float32(max(0, math.Min(a.Health, 100))) / 100
		b.rect(x-r, y-r-healthBarGap, w, healthBarH, ColHealthBack, 1)
		b.rect(x-r, y-r-healthBarGap, w*h, healthBarH, ColHealth, 1)
	}
	b.flush(screen)
	// Station letters (the kind's initial) and, zoomed in, kinds' names.
	for _, e := range m.Entities {
		if e.Type != "station" || e.Kind == "" {
			continue
		}
		x, y := at(e.Position[0], e.Position[2])
		s := max(px(stationHalf), minStationPx)
		if s >= 6 {
			l := strings.ToUpper(e.Kind[:1])
			g.cache.text(screen, l, int(x)-2, int(y)-lineH/2, ColStationText, 1)
		}
		if c.Scale >= kindLabelScale {
			k := printable(e.Kind)
			tw, _ := textSize(k)
			g.cache.shadowText(screen, k, int(x)-tw/2, int(y+s)+1, ColKindLabel)
		}
	}
	if g.ShowLabels {
		g.drawLabels(screen, agentR)
	}
	g.drawBubbles(screen, agentR, o.view)
	g.drawOverlays(screen, &o)
}

// drawLabels writes the agents' ids beside their discs, each where it
// overlaps no label placed before it (below the disc, above it, right or
// left), the selected agent's first; a label with no free place is left
// out. Zoomed far out, among many agents, only the selected one is named.
func (g *Game) drawLabels(screen *ebiten.Image, agentR float32) {
	m := &g.Model
	crowd := agentR <= minAgentPx && len(m.Agents) > 24
	var placed []image.Rectangle
	order := make([]int, 0, len(m.Agents))
	for i, a := range m.Agents {
		if a.ID == m.Selected {
			order = append([]int{i}, order...)
		} else if !crowd {
			order = append(order, i)
		}
	}
	discs := make([]image.Rectangle, len(m.Agents))
	for i, a := range m.Agents {
		x, y := g.Camera.WorldToScreen(a.Position[0], a.Position[2])
		r := int(agentR)
		discs[i] = image.Rect(int(x)-r, int(y)-r-healthBarGap, int(x)+r+1, int(y)+r+1)
	}
	for _, i := range order {
		a := &m.Agents[i]
		id := printable(a.ID)
		tw, th := textSize(id)
		th -= 2
		x, y := g.Camera.WorldToScreen(a.Position[0], a.Position[2])
		cx, cy, r := int(x), int(y), int(agentR)
		below := int(float32(cy)+agentR*facingTo) + labelGap - 2
		candidates := []image.Point{
			{cx - tw/2, below},
			{cx - tw/2, cy - r - healthBarGap - th - 1},
			{cx + r + 4, cy - th/2},
			{cx - r - 4 - tw, cy - th/2},
		}
		for _, p := range candidates {
			rect := image.Rect(p.X, p.Y, p.X+tw, p.Y+th)
			free := true
			for _, q := range placed {
				if rect.Overlaps(q) {
					free = false
					break
				}
			}
			for j, d := range discs {
				if j != i && rect.Overlaps(d) {
					free = false
					break
				}
			}
			if !free {
				continue
			}
			placed = append(placed, rect)
			g.written = append(g.written, rect.Inset(-1))
			col := ColLabel
			if a.ID == m.Selected {
				col = ColSelect
			}
			g.cache.shadowText(screen, id, p.X, p.Y, col)
			break
		}
	}
}

// drawStatic draws the layer that changes only with the camera or the
// world's description: the ground, the grid and the obstacles, made once
// into an image of the screen's size and copied every frame.
func (g *Game) drawStatic(screen *ebiten.Image) {
	sz := screen.Bounds().Size()
	key := staticKey{world: g.Model.World, cam: g.Camera, w: sz.X, h: sz.Y, n: len(g.Model.Static)}
	if len(g.Model.Static) > 0 {
		key.first = &g.Model.Static[0]
	}
	c := &g.cache
	if c.static == nil || c.staticKey != key {
		if c.static == nil || c.static.Bounds().Size() != sz {
			if c.static != nil {
				c.static.Deallocate()
			}
			c.static = ebiten.NewImage(sz.X, sz.Y)
		}
		c.staticKey = key
		img := c.static
		img.Fill(ColBackground)
		g.drawGround(img)
		g.drawGrid(img)
		cam := &g.Camera
		b := &c.shapes
		for _, e := range g.Model.Static {
			sx, sy := cam.WorldToScreen(e.Position[0], e.Position[2])
			x, y := float32(sx), float32(sy)
			px := func(v float64) float32 { return float32(v * cam.Scale) }
			col := ObstacleColours[e.Kind]
			if col == (color.RGBA{}) {
				col = ColObstacle
			}
			if len(e.Size) == 2 {
				b.rect(x-px(e.Size[0]), y-px(e.Size[1]), 2*px(e.Size[0]), 2*px(e.Size[1]), col, 1)
			} else if len(e.Size) == 1 {
				b.disc(x, y, px(e.Size[0]), col, 1)
			}
		}
		b.flush(img)
	}
	screen.DrawImage(c.static, nil)
}

// staticKey is what the static layer was drawn for.
type staticKey struct {
	world *ipc.FrameWorld
	first *ipc.FrameEntity
	n     int
	cam   Camera
	w, h  int
}

func firstOr(s []float64, d float64) float64 {
	if len(s) > 0 {
		return s[0]
	}
	return d
}

// drawGround fills the world's bounds with the ground, shaded by height
// when the terrain has heights.
func (g *Game) drawGround(screen *ebiten.Image) {
	fw := g.Model.World
	if fw == nil {
		return
	}
	b := fw.Bounds
	if !(b[2] > b[0] && b[3] > b[1]) {
		return
	}
	c := &g.Camera
	x0, y0 := c.WorldToScreen(b[0], b[1])
	if img := g.cache.terrainImage(fw); img != nil {
		sz := img.Bounds().Size()
		op := &ebiten.DrawImageOptions{Filter: ebiten.FilterLinear}
		op.GeoM.Scale((b[2]-b[0])*c.Scale/float64(sz.X), (b[3]-b[1])*c.Scale/float64(sz.Y))
		op.GeoM.Translate(x0, y0)
		screen.DrawImage(img, op)
		return
	}
	vector.FillRect(screen, float32(x0), float32(y0), float32((b[2]-b[0])*c.Scale), float32((b[3]-b[1])*c.Scale), ColGround, false)
}

// drawCache holds the images drawing makes once and reuses: the shaded
// terrain of the last world drawn and the texts drawn lately.
type drawCache struct {
	terrainOf *ipc.FrameWorld
	terrain   *ebiten.Image // nil for flat (or unusable) terrain
	texts     map[string]*ebiten.Image
	shapes    shapes
	static    *ebiten.Image // the static layer (drawStatic)
	staticKey staticKey
	// The side pane's rows, made again when a frame arrives or the pane,
	// the selection or the width changes.
	paneKey   paneKey
	paneTitle string
	paneRows  []row
}

type paneKey struct {
	frames   int
	pane     string
	selected string
	chars    int
	inspect  *ipc.FrameInspect
	upto     int
}

// transcriptPage is the step, in rows, in which the history pane reads
// transcripts further down as it is scrolled.
const transcriptPage = 200

// terrainImage is the world's terrain shaded by height, one texel per
// terrainTexels-th of a sample cell, laid over the bounds; nil when the
// ground is flat. It is made once per world.
func (c *drawCache) terrainImage(fw *ipc.FrameWorld) *ebiten.Image {
	if c.terrainOf == fw {
		return c.terrain
	}
	if c.terrain != nil {
		c.terrain.Deallocate()
	}
	c.terrainOf, c.terrain = fw, nil
	pix, nx, nz := terrainShades(fw)
	if pix != nil {
		c.terrain = ebiten.NewImage(nx, nz)
		c.terrain.WritePixels(pix)
	}
	return c.terrain
}

// terrainShades is the terrain's texels (RGBA, nx × nz), or nil when it is
// flat or malformed (ragged rows, non-finite heights).
func terrainShades(fw *ipc.FrameWorld) (pix []byte, nx, nz int) {
	hs := fw.TerrainHeights
	if len(hs) == 0 || len(hs[0]) == 0 {
		return nil, 0, 0
	}
	rows, cols := len(hs), len(hs[0])
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range hs {
		if len(row) != cols {
			return nil, 0, 0
		}
		for _, h := range row {
			if math.IsNaN(h) || math.IsInf(h, 0) {
				return nil, 0, 0
			}
			lo, hi = min(lo, h), max(hi, h)
		}
	}
	if hi-lo < 1e-9 {
		return nil, 0, 0 // flat, if raised
	}
	b := world.Bounds{MinX: fw.Bounds[0], MinZ: fw.Bounds[1], MaxX: fw.Bounds[2], MaxZ: fw.Bounds[3]}
	t := world.Terrain{Base: fw.TerrainBase, Heights: hs}
	nx = min(max(2, (cols-1)*terrainTexels), terrainMaxPx)
	nz = min(max(2, (rows-1)*terrainTexels), terrainMaxPx)
	pix = make([]byte, 4*nx*nz)
	for j := range nz {
		z := b.MinZ + (float64(j)+0.5)/float64(nz)*b.Depth()
		for i := range nx {
			x := b.MinX + (float64(i)+0.5)/float64(nx)*b.Width()
			c := groundShade((t.HeightAt(b, x, z) - fw.TerrainBase - lo) / (hi - lo))
			k := 4 * (j*nx + i)
			pix[k], pix[k+1], pix[k+2], pix[k+3] = c.R, c.G, c.B, 0xff
		}
	}
	return pix, nx, nz
}

// groundShade is the ground's colour at a height from 0 (the lowest) to 1
// (the highest).
func groundShade(t float64) color.RGBA {
	t = clamp(t, 0, 1)
	mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + (float64(b)-float64(a))*t)) }
	return color.RGBA{mix(ColGroundLow.R, ColGroundHigh.R), mix(ColGroundLow.G, ColGroundHigh.G), mix(ColGroundLow.B, ColGroundHigh.B), 0xff}
}

// drawGrid draws a line every gridMetres (scaled up when lines crowd).
func (g *Game) drawGrid(screen *ebiten.Image) {
	c := &g.Camera
	step := gridMetres
	for step*c.Scale < gridMinPx {
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

// drawBubbles draws what agents said lately above them, over everything in
// the world: each agent's newest line, wrapped to bubbleChars a line and cut
// at bubbleLines (the conversation pane has it whole), fading as it ages. A
// bubble that would overlap one placed before it moves up above it.
func (g *Game) drawBubbles(screen *ebiten.Image, agentR float32, view image.Rectangle) {
	m := &g.Model
	if len(m.Bubbles) == 0 {
		return
	}
	b := &g.cache.shapes
	type placedBubble struct {
		r      image.Rectangle
		lines  []string
		alpha  float32
		tailX  int
		tailY  int
		speaks bool
	}
	var out []placedBubble
	for _, a := range m.Agents {
		var last *Bubble
		for i := len(m.Bubbles) - 1; i >= 0; i-- {
			if m.Bubbles[i].Agent == a.ID {
				last = &m.Bubbles[i]
				break
			}
		}
		if last == nil {
			continue
		}
		alpha := float32(m.BubbleAlpha(*last))
		if alpha <= 0 {
			continue
		}
		// Only what a bubble can hold is wrapped (texts run to pages).
		lines := wrap(printable(clip(strings.Join(strings.Fields(clip(last.Text, 4*bubbleChars*bubbleLines)), " "), 2*bubbleChars*bubbleLines)), bubbleChars)
		if len(lines) > bubbleLines {
			lines = append(lines[:bubbleLines-1:bubbleLines-1], clip(lines[bubbleLines-1]+" …", bubbleChars))
			lines[bubbleLines-1] = printable(lines[bubbleLines-1])
		}
		for i := range lines {
			lines[i] = strings.TrimLeft(lines[i], " ")
		}
		tw, th := textBlock(lines)
		w, h := tw+2*bubblePad, th+2
		sx, sy := g.Camera.WorldToScreen(a.Position[0], a.Position[2])
		bottom := int(sy) - int(agentR) - healthBarGap - 4
		x := min(max(int(sx)-w/2, view.Min.X+2), view.Max.X-w-2)
		r := image.Rect(x, bottom-h, x+w, bottom)
		placed := make([]image.Rectangle, len(out))
		for i, q := range out {
			placed[i] = q.r
		}
		r = placeBubble(r, placed, view, int(sy)+int(agentR)+4)
		out = append(out, placedBubble{r: r, lines: lines, alpha: alpha, tailX: min(max(int(sx), r.Min.X+3), r.Max.X-3), tailY: bottom})
	}
	g.bubbles = g.bubbles[:0]
	for _, q := range out {
		g.bubbles = append(g.bubbles, q.r)
	}
	for _, q := range out {
		g.written = append(g.written, q.r.Inset(-4))
		b.rect(float32(q.r.Min.X-1), float32(q.r.Min.Y-1), float32(q.r.Dx()+2), float32(q.r.Dy()+2), ColBubbleEdge, q.alpha)
		b.rect(float32(q.r.Min.X), float32(q.r.Min.Y), float32(q.r.Dx()), float32(q.r.Dy()), ColBubble, q.alpha)
		if q.r.Max.Y == q.tailY {
			tx, ty := float32(q.tailX), float32(q.r.Max.Y)
			b.triangle(tx-3, ty, tx+3, ty, tx, ty+3, ColBubble, q.alpha)
		}
	}
	b.flush(screen)
	for _, q := range out {
		for i, l := range q.lines {
			g.cache.text(screen, l, q.r.Min.X+bubblePad-1, q.r.Min.Y+1+i*lineH, ColBubbleText, q.alpha)
		}
	}
}

// placeBubble places a bubble r (above its agent) clear of the bubbles
// placed already: pushed up past each it overlaps; when that takes it above
// the world's view (under the HUD), below the agent (from y below) pushed
// down instead; and in the end kept inside the view, even over another.
func placeBubble(r image.Rectangle, placed []image.Rectangle, view image.Rectangle, below int) image.Rectangle {
	stack := func(r image.Rectangle, up bool) image.Rectangle {
		for moved := 0; moved <= len(placed); moved++ {
			clash := false
			for _, q := range placed {
				if !r.Overlaps(q) {
					continue
				}
				if up {
					r = r.Add(image.Pt(0, q.Min.Y-2-r.Max.Y))
				} else {
					r = r.Add(image.Pt(0, q.Max.Y+2-r.Min.Y))
				}
				clash = true
			}
			if !clash {
				break
			}
		}
		return r
	}
	inside := func(r image.Rectangle) bool { return r.Min.Y >= view.Min.Y+2 && r.Max.Y <= view.Max.Y-2 }
	if up := stack(r, true); inside(up) {
		return up
	}
	if down := stack(r.Add(image.Pt(0, below-r.Min.Y)), false); inside(down) {
		return down
	}
	// No room either way: inside the view, where it was or as near as can be.
	h := r.Dy()
	y := min(max(r.Min.Y, view.Min.Y+2), view.Max.Y-2-h)
	return image.Rect(r.Min.X, y, r.Max.X, y+h)
}

func scaleAlpha(c color.RGBA, a float32) color.NRGBA {
	return color.NRGBA{c.R, c.G, c.B, uint8(math.Round(float64(c.A) * float64(clamp(float64(a), 0, 1))))}
}

// The panels around the world.

// overlays is where this frame's panels go and what they say.
type overlays struct {
	view       image.Rectangle // the world's part of the screen, between the panels
	hud        image.Rectangle
	hudLines   []string
	left       image.Rectangle // the components' panels and the event log; empty when hidden
	panels     []panelBox
	side       image.Rectangle // the inspector, history, conversation or observation; empty when closed
	sideTitle  string
	sideTabs   string
	sideLines  []string
	sideRows   []row // the rows shown, with sideLines their text
	sideTop    int   // the first row's y
	log        image.Rectangle
	logLines   []string
	legend     image.Rectangle
	legendRows []legendItem
	timeline   image.Rectangle // empty without a timeline
	played     float64         // the timeline's played fraction
	tickLabel  string
	tickAt     image.Point
}

// panelBox is a component's panel, its lines cut to what fits.
type panelBox struct {
	r     image.Rectangle
	title string
	lines []string
}

// legendItem is a line of the legend: a shape in a colour and what it is.
type legendItem struct {
	shape int // a shape, or -1 for a ring, -2 for a station, -3 for a dead agent
	col   color.RGBA
	text  string
}

// Panes of the side panel.
const (
	PaneInspector    = ""
	PaneHistory      = "history"
	PaneConversation = "conversation"
	PaneObservation  = "observation"
)

// layoutOverlays places the panels: the HUD across the top; the components'
// panels and the event log in a column on the left; the side pane (the
// inspector, the history, the conversation or the observation) on the
// right; a replay's timeline along the bottom with its tick above its right
// end; the legend in the world's bottom right corner. The world's view is
// what they leave. Scrolling is clamped to the rows there are.
func (g *Game) layoutOverlays() overlays {
	var o overlays
	m := &g.Model
	W, H := int(g.Camera.W), int(g.Camera.H)
	for _, l := range g.HUD() {
		o.hudLines = append(o.hudLines, clip(printable(l), max(1, (W-2*panelPad)/charW)))
	}
	o.hud = image.Rect(0, 0, W, lineH*len(o.hudLines)+2*panelPad)
	top := o.hud.Max.Y
	floor := H // the bottom of the panels
	if x, y, w, h, ok := g.Timeline(); ok {
		o.timeline = image.Rect(int(x), int(y), int(x+w), int(y+h))
		o.played = clamp(g.TimelineProgress(), 0, 1)
		floor = o.timeline.Min.Y - TimelineMargin
		if s, ok := g.Src.(Seeker); ok {
			o.tickLabel = fmt.Sprintf("tick %d / %d", s.Tick(), s.Ticks())
			tw, _ := textSize(o.tickLabel)
			o.tickAt = image.Pt(o.timeline.Max.X-tw, floor-lineH)
			floor -= lineH
		}
	}
	o.view = image.Rect(0, top, W, floor)
	// The left column: the components' panels above the event log; with no
	// panels, the event log alone in the world's bottom left corner.
	lw := g.LeftW
	if lw <= 0 {
		lw = int(clamp(float64(W)*0.24, 200, 360))
	}
	lw = min(max(lw, minPanelW), W/2)
	if n := min(len(m.Events), eventLogLines); n > 0 && g.ShowPanels {
		for _, e := range m.Events[len(m.Events)-n:] {
			s := fmt.Sprintf("t%d %s", e.Tick, e.Type)
			if e.Agent != "" {
				s += " " + e.Agent
			}
			o.logLines = append(o.logLines, clip(printable(s), (lw-2*panelPad)/charW))
		}
		o.log = image.Rect(0, floor-lineH*(n+1)-2*panelPad, lw, floor)
	}
	if g.ShowPanels && len(m.Panels) > 0 {
		o.left = image.Rect(0, top, lw, floor)
		logFloor := floor
		if !o.log.Empty() {
			logFloor = o.log.Min.Y
		}
		o.panels = layoutPanels(m.Panels, 0, top, logFloor-top, lw)
		o.view.Min.X = lw
	} else if !o.log.Empty() {
		w, _ := textBlock(o.logLines)
		o.log.Max.X = min(lw, w+2*panelPad)
		o.log = o.log.Add(image.Pt(panelGap, -panelGap))
	}
	// The side pane.
	pane := g.Pane
	if pane == PaneInspector && m.Agent(m.Selected) == nil {
		pane = "closed"
	}
	if g.sideOpen && pane != "closed" {
		sw := g.SideW
		if sw <= 0 {
			sw = int(clamp(float64(W)*0.34, 280, 560))
		}
		sw = min(max(sw, minPanelW), W-o.view.Min.X-minPanelW)
		o.side = image.Rect(W-sw, top, W, floor)
		chars := (sw - 2*panelPad) / charW
		o.sideTop = top + panelPad + 2*lineH
		room := max(0, (floor-panelPad-o.sideTop)/lineH)
		// The history reads transcripts down to the rows shown and a page
		// more, in steps of pages as it is scrolled.
		upto := (g.ObsScroll/transcriptPage + 2) * transcriptPage
		key := paneKey{frames: m.Frames, pane: pane, selected: m.Selected, chars: chars, inspect: m.Inspect, upto: upto + room}
		if g.cache.paneKey != key {
			g.cache.paneKey = key
			g.cache.paneTitle, g.cache.paneRows = g.paneRows(pane, chars, upto+room)
		}
		title, rows := g.cache.paneTitle, g.cache.paneRows
		o.sideTitle = title
		o.sideTabs = clip(paneTabs(pane), chars)
		var start, end int
		if pane == PaneConversation {
			g.ObsScroll = int(clamp(float64(g.ObsScroll), 0, float64(max(0, len(rows)-room))))
			end = len(rows) - g.ObsScroll
			start = max(0, end-room)
		} else {
			g.ObsScroll = int(clamp(float64(g.ObsScroll), 0, float64(max(0, len(rows)-room))))
			start = g.ObsScroll
			end = min(len(rows), start+room)
		}
		o.sideRows = rows[start:end]
		for _, r := range o.sideRows {
			o.sideLines = append(o.sideLines, r.text)
		}
		if len(rows) > room {
			o.sideTitle += fmt.Sprintf(" [%d-%d of %d]", start+1, end, len(rows))
		}
		o.sideTitle = clip(o.sideTitle, chars)
		o.view.Max.X = o.side.Min.X
	}
	if g.ShowLegend {
		o.legendRows = legendItems(m)
		if n := len(o.legendRows); n > 0 {
			w := 0
			for _, it := range o.legendRows {
				w = max(w, utf8.RuneCountInString(it.text))
			}
			w = w*charW + 2*panelPad + legendSwatch
			h := n*lineH + 2*panelPad
			if w < o.view.Dx()/2 && h < o.view.Dy()/2 {
				o.legend = image.Rect(o.view.Max.X-w-panelGap, o.view.Max.Y-h-panelGap, o.view.Max.X-panelGap, o.view.Max.Y-panelGap)
			}
		}
	}
	return o
}

// row is a line of the side pane; tick is the tick a click on it seeks to,
// or -1.
type row struct {
	text string
	tick int
	col  color.RGBA
}

// paneTabs names the panes and their keys, the open one in brackets.
func paneTabs(open string) string {
	var parts []string
	for _, p := range []struct{ pane, name string }{{PaneInspector, "i: inspector"}, {PaneHistory, "y: history"},
		{PaneConversation, "t: conversation"}, {PaneObservation, "o: observation"}} {
		if p.pane == open {
			parts = append(parts, "["+p.name+"]")
		} else {
			parts = append(parts, p.name)
		}
	}
	return strings.Join(parts, " ")
}

// legendItems is the legend of what the model holds: the teams (or that
// colours are the agents' own), dead agents, the resource kinds by shape and
// colour, stations, hazards, capture points and obstacles.
func legendItems(m *Model) []legendItem {
	var out []legendItem
	teams := map[string]bool{}
	dead := false
	for i := range m.Agents {
		if m.Agents[i].Team != "" {
			teams[m.Agents[i].Team] = true
		}
		dead = dead || m.Dead(&m.Agents[i])
	}
	for _, t := range slices.Sorted(maps.Keys(teams)) {
		out = append(out, legendItem{shapeDisc, m.TeamColour(t), "team " + t})
	}
	if len(teams) == 0 && len(m.Agents) > 0 {
		out = append(out, legendItem{shapeDisc, NoTeam, "agent (own colour)"})
	}
	if dead {
		out = append(out, legendItem{-3, ColDead, "dead"})
	}
	kinds := map[string]bool{}
	var stations, hazards, points bool
	for _, e := range m.Entities {
		switch e.Type {
		case "resource":
			kinds[e.Kind] = true
		case "station":
			stations = true
		case "hazard":
			hazards = true
		case "capture_point":
			points = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		out = append(out, legendItem{resourceShape(k), ResourceColour(ipc.FrameEntity{Kind: k, Available: true}), k})
	}
	if len(kinds) > 0 {
		out = append(out, legendItem{shapeDisc, ColResourceGone, "taken"})
	}
	if stations {
		out = append(out, legendItem{-2, ColStation, "station (initial)"}, legendItem{-2, ColStationInUse, "station in use"})
	}
	if hazards {
		out = append(out, legendItem{shapeDisc, ColHazardLegend, "hazard"})
	}
	if points {
		out = append(out, legendItem{-1, ColCapture, "capture point"})
	}
	if len(m.Static) > 0 {
		out = append(out, legendItem{shapeSquare, ColObstacle, "obstacle"})
	}
	return out
}

// layoutPanels stacks the panels from (x, top) down within height pixels,
// width w, each line cut to the width. When their lines do not all fit,
// each panel gets a fair share (a small panel keeps all of its lines, and
// what it leaves goes to the others); a cut panel ends with a line saying
// how many more there are.
func layoutPanels(panels []world.Panel, x, top, height, w int) []panelBox {
	const overhead = lineH + 2*panelPad // the title and the box
	chars := max(1, (w-2*panelPad)/charW)
	n := len(panels)
	for n > 0 && n*overhead > height {
		n-- // not even the titles fit
	}
	if n == 0 {
		return nil
	}
	budget := (height - n*overhead) / lineH
	give := make([]int, n)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(panels[a].Lines) - len(panels[b].Lines) })
	for k, i := range order {
		share := budget / (n - k)
		give[i] = min(len(panels[i].Lines), share)
		budget -= give[i]
	}
	var out []panelBox
	y := top
	for i, p := range panels[:n] {
		title := p.Title
		if title == "" {
			title = p.Name
		}
		b := panelBox{title: printable(title)}
		lines := printableAll(p.Lines)
		if k := give[i]; k < len(lines) {
			more := len(lines) - k
			if k == 0 {
				b.title += fmt.Sprintf(" (+%d lines)", more)
				lines = nil
			} else {
				lines = append(lines[:k-1:k-1], fmt.Sprintf("... %d more lines", more+1))
			}
		}
		b.title = clip(b.title, chars)
		for j := range lines {
			lines[j] = clip(lines[j], chars)
		}
		b.lines = lines
		b.r = image.Rect(x, y, x+w, y+lineH*(1+len(lines))+2*panelPad)
		out = append(out, b)
		y = b.r.Max.Y
	}
	return out
}

// drawOverlays draws the HUD, the left column, the side pane, the legend
// and the timeline, all opaque.
func (g *Game) drawOverlays(screen *ebiten.Image, o *overlays) {
	b := &g.cache.shapes
	rect := func(r image.Rectangle, c color.Color) {
		b.rect(float32(r.Min.X), float32(r.Min.Y), float32(r.Dx()), float32(r.Dy()), c, 1)
	}
	rect(o.hud, ColPanel)
	b.rect(0, float32(o.hud.Max.Y-1), float32(o.hud.Dx()), 1, ColPanelBorder, 1)
	if !o.log.Empty() && o.left.Empty() {
		rect(o.log, ColPanel)
		b.strokeRect(float32(o.log.Min.X), float32(o.log.Min.Y), float32(o.log.Dx()), float32(o.log.Dy()), 1, ColPanelBorder, 1)
	}
	if !o.left.Empty() {
		rect(o.left, ColPanel)
		b.rect(float32(o.left.Max.X-1), float32(o.left.Min.Y), 1, float32(o.left.Dy()), ColPanelBorder, 1)
		for _, p := range o.panels {
			b.rect(float32(p.r.Min.X), float32(p.r.Max.Y-1), float32(p.r.Dx()-1), 1, ColPanelBorder, 1)
		}
	}
	if !o.side.Empty() {
		rect(o.side, ColPanel)
		b.rect(float32(o.side.Min.X), float32(o.side.Min.Y), 1, float32(o.side.Dy()), ColPanelBorder, 1)
		b.rect(float32(o.side.Min.X), float32(o.sideTop-2), float32(o.side.Dx()), 1, ColPanelBorder, 1)
	}
	if !o.legend.Empty() {
		rect(o.legend, ColPanel)
		b.strokeRect(float32(o.legend.Min.X), float32(o.legend.Min.Y), float32(o.legend.Dx()), float32(o.legend.Dy()), 1, ColPanelBorder, 1)
		for i, it := range o.legendRows {
			x := float32(o.legend.Min.X + panelPad + legendSwatch/2 - 2)
			y := float32(o.legend.Min.Y+panelPad+i*lineH) + lineH/2
			switch it.shape {
			case -1:
				b.ring(x, y, 5, 2, it.col, 1)
			case -2:
				b.rect(x-5, y-5, 10, 10, it.col, 1)
			case -3:
				b.disc(x, y, 5, it.col, 1)
				b.line(x-4, y-4, x+4, y+4, 2, ColDeadMark, 1)
				b.line(x-4, y+4, x+4, y-4, 2, ColDeadMark, 1)
			default:
				drawShape(b, it.shape, x, y, 5, it.col)
			}
		}
	}
	if !o.timeline.Empty() {
		t := o.timeline
		rect(image.Rect(0, t.Min.Y-TimelineMargin-lineH, int(g.Camera.W), int(g.Camera.H)), ColPanel)
		rect(t, ColTimeline)
		played := t
		played.Max.X = t.Min.X + int(math.Round(o.played*float64(t.Dx())))
		rect(played, ColTimePlayed)
		cx := float32(played.Max.X)
		b.line(cx, float32(t.Min.Y-3), cx, float32(t.Max.Y+3), 2, ColTimeCursor, 1)
	}
	b.flush(screen)
	ebitenutil.DebugPrintAt(screen, strings.Join(o.hudLines, "\n"), panelPad, panelPad)
	for _, p := range o.panels {
		g.cache.text(screen, p.title, p.r.Min.X+panelPad, p.r.Min.Y+panelPad, ColPanelTitle, 1)
		ebitenutil.DebugPrintAt(screen, strings.Join(p.lines, "\n"), p.r.Min.X+panelPad, p.r.Min.Y+panelPad+lineH)
	}
	if !o.log.Empty() {
		g.cache.text(screen, "events", o.log.Min.X+panelPad, o.log.Min.Y+panelPad, ColPanelTitle, 1)
		ebitenutil.DebugPrintAt(screen, strings.Join(o.logLines, "\n"), o.log.Min.X+panelPad, o.log.Min.Y+panelPad+lineH)
	}
	if !o.side.Empty() {
		x := o.side.Min.X + panelPad
		g.cache.text(screen, o.sideTitle, x, o.side.Min.Y+panelPad, ColPanelTitle, 1)
		g.cache.text(screen, o.sideTabs, x, o.side.Min.Y+panelPad+lineH, ColTabs, 1)
		var plain []string
		for i, r := range o.sideRows {
			if r.col == (color.RGBA{}) {
				plain = append(plain, r.text)
				continue
			}
			plain = append(plain, "")
			g.cache.text(screen, r.text, x, o.sideTop+i*lineH, r.col, 1)
		}
		ebitenutil.DebugPrintAt(screen, strings.Join(plain, "\n"), x, o.sideTop)
	}
	for i, it := range o.legendRows {
		if o.legend.Empty() {
			break
		}
		ebitenutil.DebugPrintAt(screen, it.text, o.legend.Min.X+panelPad+legendSwatch, o.legend.Min.Y+panelPad+i*lineH)
	}
	if o.tickLabel != "" {
		g.cache.text(screen, o.tickLabel, o.tickAt.X, o.tickAt.Y, ColLabel, 1)
	}
}

// Text. The debug font is white, 6 × 16 pixels a character, and has only
// Latin-1: coloured text is drawn from cached images of the white text, and
// printable swaps the few other characters the viewer's lines use.

// pruneTexts empties the text cache once it holds textCacheMax texts (at
// the start of a frame, when no draw of this frame uses them).
func (c *drawCache) pruneTexts() {
	if len(c.texts) < textCacheMax {
		return
	}
	for _, img := range c.texts {
		img.Deallocate()
	}
	clear(c.texts)
}

// text draws one line (or more) of text in a colour, alpha times opaque.
func (c *drawCache) text(dst *ebiten.Image, s string, x, y int, col color.Color, alpha float32) {
	if s == "" {
		return
	}
	img, ok := c.texts[s]
	if !ok {
		w, h := textSize(s)
		img = ebiten.NewImage(w, h)
		ebitenutil.DebugPrint(img, s)
		if c.texts == nil {
			c.texts = map[string]*ebiten.Image{}
		}
		c.texts[s] = img
	}
	op := &ebiten.DrawImageOptions{}
	op.GeoM.Translate(float64(x), float64(y))
	op.ColorScale.ScaleWithColor(col)
	op.ColorScale.ScaleAlpha(alpha)
	dst.DrawImage(img, op)
}

// shadowText draws text with a dark shadow, readable on any ground.
func (c *drawCache) shadowText(dst *ebiten.Image, s string, x, y int, col color.Color) {
	c.text(dst, s, x+1, y+1, ColLabelShadow, 0.8)
	c.text(dst, s, x, y, col, 1)
}

// textSize is the size in pixels of text in the debug font.
func textSize(s string) (w, h int) {
	return textBlock(strings.Split(s, "\n"))
}

// textBlock is the size in pixels of lines of text in the debug font.
func textBlock(lines []string) (w, h int) {
	n := 0
	for _, l := range lines {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n*charW + 1, len(lines) * lineH
}

// printableSwaps replaces characters the debug font lacks.
var printableSwaps = strings.NewReplacer("…", "...", "→", "->", "←", "<-", "—", "-", "–", "-",
	"‘", "'", "’", "'", "“", "\"", "”", "\"", "•", "*", "≥", ">=", "≤", "<=", "≠", "!=")

// printable is s in the debug font's characters: the usual typographic
// ones swapped for ASCII, any other rune beyond Latin-1 as '?'.
func printable(s string) string {
	s = printableSwaps.Replace(s)
	for _, r := range s {
		if r > 0xff {
			return strings.Map(func(r rune) rune {
				if r > 0xff {
					return '?'
				}
				return r
			}, s)
		}
	}
	return s
}

func printableAll(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = printable(l)
	}
	return out
}
