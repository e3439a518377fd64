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
	ColHazard       = color.NRGBA{0xd0, 0x30, 0x30, 0x60}
	ColCapture      = color.RGBA{0xc0, 0xc0, 0xc0, 0xff}
	ColPath         = color.NRGBA{0xff, 0xff, 0xff, 0x90}
	ColPerception   = color.NRGBA{0xff, 0xff, 0xff, 0x60}
	ColSelect       = color.RGBA{0xff, 0xff, 0x00, 0xff}
	ColHealthBack   = color.RGBA{0x40, 0x10, 0x10, 0xff}
	ColHealth       = color.RGBA{0x40, 0xe0, 0x40, 0xff}
	ColDead         = color.RGBA{0x55, 0x55, 0x55, 0xff}

	ColLabel       = color.RGBA{0xe8, 0xe8, 0xe8, 0xff}
	ColLabelShadow = color.RGBA{0x00, 0x00, 0x00, 0xff}
	ColBubble      = color.RGBA{0xf4, 0xf1, 0xe6, 0xff}
	ColBubbleText  = color.RGBA{0x1a, 0x1a, 0x1a, 0xff}

	ColPanel       = color.NRGBA{0x00, 0x00, 0x00, 0xb0}
	ColPanelBorder = color.NRGBA{0xff, 0xff, 0xff, 0x30}
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
	// NamedTeams are the colours of teams named after one.
	NamedTeams = map[string]color.RGBA{"red": TeamColours[0], "blue": TeamColours[1], "green": TeamColours[2],
		"purple": TeamColours[3], "yellow": TeamColours[4], "orange": TeamColours[6], "white": TeamColours[7]}
	// ResourceColours colour known resource types; others get ColResource.
	ResourceColours = map[string]color.RGBA{
		"wood": {0x8b, 0x5a, 0x2b, 0xff}, "stone": {0xa0, 0xa0, 0xb0, 0xff}, "food": {0x3c, 0xc8, 0x5a, 0xff},
		"water": {0x30, 0x90, 0xff, 0xff}, "ore": {0xb0, 0x60, 0x30, 0xff}, "metal": {0xb0, 0x60, 0x30, 0xff},
	}
)

// Layout, in pixels unless said otherwise.
const (
	charW, lineH = 6, 16 // the debug font's cell
	panelPad     = 4     // inside a panel's box
	panelGap     = 6     // between boxes
	screenMargin = 8     // between boxes and the screen's edge
	minPanelW    = 120

	eventLogLines = 6  // events shown at the bottom left
	bubbleChars   = 40 // a bubble's text is clipped to this many characters
	bubblesShown  = 2  // an agent's newest bubble, and the one before stacked above
	bubblePad     = 3
	labelGap      = 3 // between a disc's facing line's reach and its label (below the disc)

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

// Draw draws the model: the ground, then entities, agents, and the panels
// over them. Perception circles, bubbles and labels go under the entities
// and agents, so an agent's or a resource's centre pixel is always its own
// colour.
func (g *Game) Draw(screen *ebiten.Image) {
	g.cache.pruneTexts()
	screen.Fill(ColBackground)
	m, c := &g.Model, &g.Camera
	g.drawGround(screen)
	g.drawGrid(screen)
	px := func(metres float64) float32 { return float32(metres * c.Scale) }
	at := func(x, z float64) (float32, float32) {
		sx, sy := c.WorldToScreen(x, z)
		return float32(sx), float32(sy)
	}
	agentR := max(px(AgentRadius), minAgentPx)
	// Perception radii, then paths, bubbles and labels (below the discs),
	// under everything.
	if g.ShowPerception && m.World != nil && m.World.Perception > 0 {
		for _, a := range m.Agents {
			if a.Alive && (m.Selected == "" || a.ID == m.Selected) {
				x, y := at(a.Position[0], a.Position[2])
				vector.StrokeCircle(screen, x, y, px(m.World.Perception), 1, ColPerception, true)
			}
		}
	}
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
	g.drawBubbles(screen, agentR)
	if g.ShowLabels {
		for _, a := range m.Agents {
			x, y := at(a.Position[0], a.Position[2])
			col := ColLabel
			if a.ID == m.Selected {
				col = ColSelect
			}
			id := printable(a.ID)
			tw, _ := textSize(id)
			g.cache.shadowText(screen, id, int(x)-tw/2, int(y+agentR*facingTo)+labelGap-2, col)
		}
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
			r := max(px(resourceR), minResourcePx)
			vector.FillCircle(screen, x, y, r, ResourceColour(e), false)
		case "station":
			s := max(px(stationHalf), minStationPx)
			col := ColStation
			if e.InUse {
				col = ColStationInUse
			}
			vector.FillRect(screen, x-s, y-s, 2*s, 2*s, col, false)
		}
	}
	for _, a := range m.Agents {
		x, y := at(a.Position[0], a.Position[2])
		r := agentR
		col := m.TeamColour(a.Team)
		if !a.Alive {
			col = ColDead
		}
		if a.ID == m.Selected {
			vector.StrokeCircle(screen, x, y, r+3, 2, ColSelect, true)
		}
		vector.FillCircle(screen, x, y, r, col, false)
		// Facing: a line out of the disc (facing is the heading in radians
		// from +x towards +z, as world.Agent.Facing).
		fx, fy := float32(math.Cos(a.Facing)), float32(math.Sin(a.Facing))
		vector.StrokeLine(screen, x+fx*r*facingFrom, y+fy*r*facingFrom, x+fx*r*facingTo, y+fy*r*facingTo, 2, ColSelect, true)
		// Health bar above.
		w := 2 * r
		h := float32(max(0, math.Min(a.Health, 100))) / 100
		vector.FillRect(screen, x-r, y-r-healthBarGap, w, healthBarH, ColHealthBack, false)
		vector.FillRect(screen, x-r, y-r-healthBarGap, w*h, healthBarH, ColHealth, false)
	}
	g.drawOverlays(screen)
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
}

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

// drawBubbles draws what agents said lately above them: each agent's newest
// bubble just above its health bar, the one before stacked above it, fading
// as they age.
func (g *Game) drawBubbles(screen *ebiten.Image, agentR float32) {
	m := &g.Model
	if len(m.Bubbles) == 0 {
		return
	}
	for _, a := range m.Agents {
		var mine []Bubble
		for i := len(m.Bubbles) - 1; i >= 0 && len(mine) < bubblesShown; i-- {
			if m.Bubbles[i].Agent == a.ID {
				mine = append(mine, m.Bubbles[i])
			}
		}
		if len(mine) == 0 {
			continue
		}
		sx, sy := g.Camera.WorldToScreen(a.Position[0], a.Position[2])
		bottom := int(sy) - int(agentR) - healthBarGap - 3
		for k, b := range mine {
			alpha := float32(m.BubbleAlpha(b))
			if k > 0 {
				alpha *= 0.7
			}
			if alpha <= 0 {
				continue
			}
			s := printable(clip(strings.Join(strings.Fields(b.Text), " "), bubbleChars))
			tw, th := textSize(s)
			w, h := tw+2*bubblePad, th
			x := min(max(int(sx)-w/2, 0), int(g.Camera.W)-w)
			y := bottom - h
			bg := ColBubble
			vector.FillRect(screen, float32(x), float32(y), float32(w), float32(h), scaleAlpha(bg, alpha), false)
			if k == 0 {
				// A small tail towards the speaker.
				tx := float32(min(max(int(sx), x+3), x+w-3))
				var p vector.Path
				p.MoveTo(tx-3, float32(y+h))
				p.LineTo(tx+3, float32(y+h))
				p.LineTo(tx, float32(y+h+3))
				p.Close()
				do := &vector.DrawPathOptions{}
				do.ColorScale.ScaleWithColor(bg)
				do.ColorScale.ScaleAlpha(alpha)
				vector.FillPath(screen, &p, nil, do)
			}
			g.cache.text(screen, s, x+bubblePad-1, y, ColBubbleText, alpha)
			bottom = y - 2
		}
	}
}

func scaleAlpha(c color.RGBA, a float32) color.NRGBA {
	return color.NRGBA{c.R, c.G, c.B, uint8(math.Round(float64(c.A) * float64(clamp(float64(a), 0, 1))))}
}

// The panels over the world.

// overlays is where this frame's panels go and what they say.
type overlays struct {
	hud       image.Rectangle
	hudLines  []string
	panels    []panelBox
	side      image.Rectangle // the inspector, or the whole observation
	sideTitle string          // the observation's header line, "" for the inspector
	sideLines []string
	log       image.Rectangle
	logLines  []string
	timeline  image.Rectangle // empty without a timeline
	played    float64         // the timeline's played fraction
	tickLabel string
	tickAt    image.Point
}

// panelBox is a component's panel, its lines cut to what fits.
type panelBox struct {
	r     image.Rectangle
	title string
	lines []string
}

// layoutOverlays places the panels: the HUD across the top; the
// components' panels stacked down the left below it; the inspector (or the
// whole observation) on the right; the event log at the bottom left; and a
// replay's timeline along the bottom, its tick at its right end above it.
// Showing the observation clamps ObsScroll to the lines there are.
func (g *Game) layoutOverlays() overlays {
	var o overlays
	m := &g.Model
	W, H := int(g.Camera.W), int(g.Camera.H)
	for _, l := range g.HUD() {
		o.hudLines = append(o.hudLines, printable(l))
	}
	o.hud = image.Rect(0, 0, W, lineH*len(o.hudLines)+panelPad)
	top := o.hud.Max.Y + panelGap
	floor := H - screenMargin // the bottom of the boxes above it
	if x, y, w, h, ok := g.Timeline(); ok {
		o.timeline = image.Rect(int(x), int(y), int(x+w), int(y+h))
		o.played = clamp(g.TimelineProgress(), 0, 1)
		floor = o.timeline.Min.Y - panelGap
		if s, ok := g.Src.(Seeker); ok {
			o.tickLabel = fmt.Sprintf("tick %d / %d", s.Tick(), s.Ticks())
			tw, _ := textSize(o.tickLabel)
			o.tickAt = image.Pt(o.timeline.Max.X-tw, floor-lineH)
		}
	}
	// The event log: the last few events, bottom left.
	if n := min(len(m.Events), eventLogLines); n > 0 {
		for _, e := range m.Events[len(m.Events)-n:] {
			s := fmt.Sprintf("t%d %s", e.Tick, e.Type)
			if e.Agent != "" {
				s += " " + e.Agent
			}
			o.logLines = append(o.logLines, printable(s))
		}
		w, h := textBlock(o.logLines)
		o.log = image.Rect(screenMargin, floor-h-2*panelPad, screenMargin+w+2*panelPad, floor)
	}
	leftFloor := floor
	if !o.log.Empty() {
		leftFloor = o.log.Min.Y - panelGap
	}
	if g.ShowPanels {
		o.panels = layoutPanels(m.Panels, screenMargin, top, leftFloor-top)
	}
	sideFloor := floor
	if o.tickLabel != "" {
		sideFloor = o.tickAt.Y - panelGap
	}
	room := (sideFloor - top - 2*panelPad) / lineH // lines that fit on the right
	switch {
	case g.ShowObs && m.Selected != "" && room > 1:
		lines := m.ObservationLines()
		fit := room - 1
		start := clamp(float64(g.ObsScroll), 0, float64(max(0, len(lines)-fit)))
		g.ObsScroll = int(start)
		end := min(len(lines), g.ObsScroll+fit)
		o.sideTitle = fmt.Sprintf("observation of %s: lines %d-%d of %d (pgup/pgdn, wheel; o: close)", m.Selected, min(g.ObsScroll+1, end), end, len(lines))
		if lines == nil {
			o.sideTitle = "no observation of " + m.Selected + " yet (o: close)"
		}
		for _, l := range lines[g.ObsScroll:end] {
			o.sideLines = append(o.sideLines, printable(l))
		}
		w, _ := textBlock(append([]string{o.sideTitle}, printableAll(lines)...))
		w = min(w+2*panelPad, W-2*screenMargin)
		o.side = image.Rect(W-screenMargin-w, top, W-screenMargin, top+lineH*(1+len(o.sideLines))+2*panelPad)
	case room > 0:
		lines := printableAll(m.Inspector())
		if len(lines) == 0 {
			break
		}
		if len(lines) > room {
			more := len(lines) - room + 1
			lines = append(lines[:room-1:room-1], fmt.Sprintf("... %d more lines", more))
		}
		o.sideLines = lines
		w, h := textBlock(lines)
		w += 2 * panelPad
		o.side = image.Rect(W-screenMargin-w, top, W-screenMargin, top+h+2*panelPad)
	}
	return o
}

// layoutPanels stacks the panels from (x, top) down within height pixels.
// When their lines do not all fit, each panel gets a fair share (a small
// panel keeps all of its lines, and what it leaves goes to the others); a cut
// panel ends with a line saying how many more there are.
func layoutPanels(panels []world.Panel, x, top, height int) []panelBox {
	const overhead = lineH + 2*panelPad + panelGap // the title and the box
	n := len(panels)
	for n > 0 && n*overhead > height+panelGap {
		n-- // not even the titles fit
	}
	if n == 0 {
		return nil
	}
	budget := (height + panelGap - n*overhead) / lineH
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
		b.lines = lines
		w, h := textBlock(append([]string{b.title}, lines...))
		w = max(w+2*panelPad, minPanelW)
		b.r = image.Rect(x, y, x+w, y+h+2*panelPad)
		out = append(out, b)
		y = b.r.Max.Y + panelGap
	}
	return out
}

// drawOverlays draws the HUD, the panels, the inspector or observation, the
// event log and the timeline.
func (g *Game) drawOverlays(screen *ebiten.Image) {
	o := g.layoutOverlays()
	fillRect(screen, o.hud, ColPanel)
	ebitenutil.DebugPrintAt(screen, strings.Join(o.hudLines, "\n"), 0, 0)
	for _, p := range o.panels {
		box(screen, p.r)
		g.cache.text(screen, p.title, p.r.Min.X+panelPad, p.r.Min.Y+panelPad, ColPanelTitle, 1)
		ebitenutil.DebugPrintAt(screen, strings.Join(p.lines, "\n"), p.r.Min.X+panelPad, p.r.Min.Y+panelPad+lineH)
	}
	if !o.side.Empty() {
		box(screen, o.side)
		y := o.side.Min.Y + panelPad
		if o.sideTitle != "" {
			g.cache.text(screen, o.sideTitle, o.side.Min.X+panelPad, y, ColPanelTitle, 1)
			y += lineH
		}
		ebitenutil.DebugPrintAt(screen, strings.Join(o.sideLines, "\n"), o.side.Min.X+panelPad, y)
	}
	if !o.log.Empty() {
		fillRect(screen, o.log, ColPanel)
		ebitenutil.DebugPrintAt(screen, strings.Join(o.logLines, "\n"), o.log.Min.X+panelPad, o.log.Min.Y+panelPad)
	}
	if !o.timeline.Empty() {
		t := o.timeline
		fillRect(screen, t, ColTimeline)
		played := t
		played.Max.X = t.Min.X + int(math.Round(o.played*float64(t.Dx())))
		fillRect(screen, played, ColTimePlayed)
		cx := float32(played.Max.X)
		vector.StrokeLine(screen, cx, float32(t.Min.Y-3), cx, float32(t.Max.Y+3), 2, ColTimeCursor, false)
		if o.tickLabel != "" {
			g.cache.shadowText(screen, o.tickLabel, o.tickAt.X, o.tickAt.Y, ColLabel)
		}
	}
}

func fillRect(dst *ebiten.Image, r image.Rectangle, c color.Color) {
	vector.FillRect(dst, float32(r.Min.X), float32(r.Min.Y), float32(r.Dx()), float32(r.Dy()), c, false)
}

// box is a panel's background with a thin border.
func box(dst *ebiten.Image, r image.Rectangle) {
	fillRect(dst, r, ColPanel)
	vector.StrokeRect(dst, float32(r.Min.X)+0.5, float32(r.Min.Y)+0.5, float32(r.Dx())-1, float32(r.Dy())-1, 1, ColPanelBorder, false)
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
