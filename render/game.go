package render

import (
	"context"
	"fmt"
	"image"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/inpututil"
)

// Game is the Ebiten game: it polls its source into the model in Update,
// maps input to commands, and draws the model in Draw.
type Game struct {
	Model  Model
	Camera Camera
	Src    Source

	// What is shown; the keys toggle them.
	Follow         bool // keep the selected agent in the middle
	ShowPerception bool // the selected agent's perception radius (all agents' when none is selected)
	ShowLabels     bool // agent ids beside their discs
	ShowPanels     bool // the components' panels (the left column)
	ShowLegend     bool // the legend
	// Pane is what the side pane shows: PaneInspector, PaneHistory,
	// PaneConversation or PaneObservation (ShowPane opens one).
	Pane string
	// ObsScroll is how far the side pane is scrolled: the first row shown,
	// or, in the conversation, how many rows from the newest.
	ObsScroll int
	// LeftW and SideW are the widths of the left column and the side pane
	// in pixels (0: a share of the screen); dragging their edges sets them.
	LeftW, SideW int

	sideOpen bool
	needFit  bool              // fit the camera to the world in the next Draw
	over     overlays          // the last Draw's layout, for the mouse
	written  []image.Rectangle // where the last Draw put labels and bubbles over the world
	bubbles  []image.Rectangle // where the last Draw put bubbles
	resizing int               // the edge being dragged: 1 the left column's, 2 the side pane's

	paused bool
	speed  float64
	fitted bool
	help   bool
	status string // the last command's error, if any
	// seeking is the tick being typed after g, or "" when not typing; with
	// typing set, digits go to it.
	seeking string
	typing  bool

	dragging     bool
	dragX, dragY float64
	dragFrom     [2]float64

	cache drawCache
}

// NewGame returns a game that shows what src sends.
func NewGame(src Source) *Game {
	return &Game{Src: src, speed: 1, Camera: Camera{Scale: 10}, ShowLabels: true, ShowPanels: true, ShowLegend: true, sideOpen: true}
}

// Update takes new frames and input.
func (g *Game) Update() error {
	g.Pump()
	g.input()
	return nil
}

// Pump applies the frames the source has for the model, fits the camera to
// the world on the first one, and keeps a followed agent in the middle.
func (g *Game) Pump() {
	frames := g.Src.Poll()
	for _, f := range frames {
		g.Model.Apply(f)
	}
	if len(frames) > 0 {
		g.paused = g.Model.Paused
	}
	if !g.fitted && g.Model.Frames > 0 {
		g.needFit, g.fitted = true, true
	}
	if g.needFit && g.Camera.W > 0 {
		g.Camera.FitIn(g.Model.Bounds(), g.layoutOverlays().view)
		g.needFit = false
	}
	if a := g.Model.Agent(g.Model.Selected); g.Follow && a != nil {
		g.Camera.CenterX, g.Camera.CenterZ = a.Position[0], a.Position[2]
	}
}

// Commands the keys and the mouse map to. They are methods so that tests
// can drive the game without a window.

// TogglePause pauses or resumes.
func (g *Game) TogglePause() {
	cmd := "pause"
	if g.paused {
		cmd = "resume"
	}
	if g.command(cmd, 0) {
		g.paused = !g.paused
	}
}

// Step runs one tick and stays paused.
func (g *Game) Step() {
	if g.command("step", 1) {
		g.paused = true
	}
}

// Faster doubles the speed; Slower halves it (from 1/64 to 64 times).
func (g *Game) Faster() { g.setSpeed(g.speed * 2) }

// Slower halves the speed.
func (g *Game) Slower() { g.setSpeed(g.speed / 2) }

func (g *Game) setSpeed(s float64) {
	s = clamp(s, 1.0/64, 64)
	if g.command("speed", s) {
		g.speed = s
	}
}

// Speed is the speed multiplier asked for.
func (g *Game) Speed() float64 { return g.speed }

// Paused reports whether the game believes the world is paused.
func (g *Game) Paused() bool { return g.paused }

// Click selects the agent under the screen point, or clears the selection; a
// click on a replay's timeline, or on a line of the history or the
// conversation, seeks to its tick instead; a click elsewhere on a panel does
// nothing.
func (g *Game) Click(sx, sy float64) {
	if tick, ok := g.TimelineTick(sx, sy); ok {
		g.Seek(tick)
		return
	}
	p := image.Pt(int(sx), int(sy))
	o := &g.over
	if p.In(o.side) {
		if i := (p.Y - o.sideTop) / lineH; p.Y >= o.sideTop && i < len(o.sideRows) && o.sideRows[i].tick >= 0 {
			g.Seek(o.sideRows[i].tick)
		}
		return
	}
	for _, r := range []image.Rectangle{o.hud, o.left, o.legend} {
		if p.In(r) {
			return
		}
	}
	if !o.timeline.Empty() && sy >= float64(o.view.Max.Y) {
		return
	}
	g.Select(g.Model.Pick(&g.Camera, sx, sy))
}

// Reconnect opens a new session on a live source whose server has gone.
func (g *Game) Reconnect() {
	r, ok := g.Src.(interface {
		Reconnect(context.Context) error
	})
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Reconnect(ctx); err != nil {
		g.status = err.Error()
		return
	}
	g.status = "reconnected"
}

// ShowPane opens a pane in the side panel (PaneInspector, PaneHistory,
// PaneConversation or PaneObservation), or closes the side panel when that
// pane is open already.
func (g *Game) ShowPane(pane string) {
	if g.Pane == pane && g.sideOpen {
		g.sideOpen = false
		return
	}
	g.Pane, g.sideOpen, g.ObsScroll = pane, true, 0
}

// Fit fits the camera to the world, in the room the panels leave, at the
// next update.
func (g *Game) Fit() { g.needFit, g.Follow = true, false }

// Select inspects the agent (or nobody, for ""): the source is asked for
// its observations.
func (g *Game) Select(id string) {
	if id == g.Model.Selected {
		return
	}
	g.Model.Selected = id
	if g.Pane != PaneConversation {
		g.ObsScroll = 0
	}
	if err := g.Src.Inspect(id); err != nil {
		g.status = "inspect: " + err.Error()
	}
	if id == "" {
		g.Follow = false
	}
}

// Seek jumps a replay to the tick (clamped); other sources cannot seek.
func (g *Game) Seek(tick int) {
	s, ok := g.Src.(Seeker)
	if !ok {
		g.status = "seek: only a replay can seek"
		return
	}
	s.Seek(tick)
	g.status = ""
}

// SeekBy moves a replay by a number of ticks.
func (g *Game) SeekBy(ticks int) {
	if s, ok := g.Src.(Seeker); ok {
		g.Seek(s.Tick() + ticks)
	}
}

// Timeline is the replay's seek bar along the bottom of the screen, in
// pixels; ok is false when the source cannot seek.
func (g *Game) Timeline() (x, y, w, h float64, ok bool) {
	if _, ok := g.Src.(Seeker); !ok {
		return 0, 0, 0, 0, false
	}
	return TimelineMargin, g.Camera.H - TimelineHeight - TimelineMargin, g.Camera.W - 2*TimelineMargin, TimelineHeight, true
}

// Timeline layout, in pixels.
const (
	TimelineHeight = 8
	TimelineMargin = 6
)

// TimelineTick is the tick under a screen point on the timeline.
func (g *Game) TimelineTick(sx, sy float64) (int, bool) {
	x, y, w, h, ok := g.Timeline()
	if !ok || sy < y-4 || sy > y+h+4 || sx < x || sx > x+w {
		return 0, false
	}
	s := g.Src.(Seeker)
	return int(math.Round((sx - x) / w * float64(s.Ticks()))), true
}

// TimelineProgress is how far playback is along the timeline, from 0 to 1.
func (g *Game) TimelineProgress() float64 {
	s, ok := g.Src.(Seeker)
	if !ok || s.Ticks() == 0 {
		return 0
	}
	return float64(s.Tick()) / float64(s.Ticks())
}

// Typing is the tick being typed after g, and whether one is.
func (g *Game) Typing() (string, bool) { return g.seeking, g.typing }

// Type feeds the seek prompt a key: digits, backspace ("\b"), enter ("\n",
// seeks) or escape ("\x1b", cancels). It reports whether it took the key.
func (g *Game) Type(key string) bool {
	if !g.typing {
		return false
	}
	switch key {
	case "\n":
		g.typing = false
		if t, err := strconv.Atoi(g.seeking); err == nil {
			g.Seek(t)
		}
		g.seeking = ""
	case "\x1b":
		g.typing, g.seeking = false, ""
	case "\b":
		if g.seeking != "" {
			g.seeking = g.seeking[:len(g.seeking)-1]
		}
	default:
		if len(key) == 1 && key[0] >= '0' && key[0] <= '9' && len(g.seeking) < 9 {
			g.seeking += key
		}
	}
	return true
}

// StartSeek opens the seek prompt (the g key).
func (g *Game) StartSeek() {
	if _, ok := g.Src.(Seeker); !ok {
		g.status = "seek: only a replay can seek"
		return
	}
	g.typing, g.seeking = true, ""
}

func (g *Game) command(cmd string, v float64) bool {
	if err := g.Src.Control(cmd, v); err != nil {
		g.status = fmt.Sprintf("%s: %v", cmd, err)
		return false
	}
	g.status = ""
	return true
}

// tickRate is the world's tick rate, or DefaultTickRate when unknown.
func (g *Game) tickRate() float64 {
	if w := g.Model.World; w != nil {
		return tickRate(w.TickRate)
	}
	return DefaultTickRate
}

var digitKeys = []ebiten.Key{ebiten.Key0, ebiten.Key1, ebiten.Key2, ebiten.Key3, ebiten.Key4,
	ebiten.Key5, ebiten.Key6, ebiten.Key7, ebiten.Key8, ebiten.Key9}

func (g *Game) input() {
	pressed := inpututil.IsKeyJustPressed
	if g.typing {
		for i, k := range digitKeys {
			if pressed(k) {
				g.Type(strconv.Itoa(i))
			}
		}
		switch {
		case pressed(ebiten.KeyEnter), pressed(ebiten.KeyNumpadEnter):
			g.Type("\n")
		case pressed(ebiten.KeyEscape):
			g.Type("\x1b")
		case pressed(ebiten.KeyBackspace):
			g.Type("\b")
		}
		return
	}
	tenSeconds := int(math.Round(10 * g.tickRate()))
	switch {
	case pressed(ebiten.KeySpace):
		g.TogglePause()
	case pressed(ebiten.KeyArrowRight), pressed(ebiten.KeyPeriod):
		g.Step()
	case pressed(ebiten.KeyArrowLeft), pressed(ebiten.KeyComma):
		g.SeekBy(-1)
	case pressed(ebiten.KeyEqual), pressed(ebiten.KeyKPAdd):
		g.Faster()
	case pressed(ebiten.KeyMinus), pressed(ebiten.KeyKPSubtract):
		g.Slower()
	case pressed(ebiten.KeyBracketLeft):
		g.SeekBy(-tenSeconds)
	case pressed(ebiten.KeyBracketRight):
		g.SeekBy(tenSeconds)
	case pressed(ebiten.KeyHome):
		g.Seek(0)
	case pressed(ebiten.KeyEnd):
		g.Seek(math.MaxInt32)
	case pressed(ebiten.KeyG):
		g.StartSeek()
	case pressed(ebiten.KeyF):
		g.Fit()
	case pressed(ebiten.KeyC):
		g.Follow = !g.Follow && g.Model.Selected != ""
	case pressed(ebiten.KeyP):
		g.ShowPerception = !g.ShowPerception
	case pressed(ebiten.KeyL):
		g.ShowLabels = !g.ShowLabels
	case pressed(ebiten.KeyK):
		g.ShowPanels = !g.ShowPanels
	case pressed(ebiten.KeyR):
		g.Reconnect()
	case pressed(ebiten.KeyN):
		g.ShowLegend = !g.ShowLegend
	case pressed(ebiten.KeyI):
		g.ShowPane(PaneInspector)
	case pressed(ebiten.KeyY):
		g.ShowPane(PaneHistory)
	case pressed(ebiten.KeyT):
		g.ShowPane(PaneConversation)
	case pressed(ebiten.KeyO):
		g.ShowPane(PaneObservation)
	case pressed(ebiten.KeyPageDown):
		g.scroll(-20)
	case pressed(ebiten.KeyPageUp):
		g.scroll(20)
	case pressed(ebiten.KeyH), pressed(ebiten.KeySlash):
		g.help = !g.help
	case pressed(ebiten.KeyEscape):
		g.Select("")
	}
	mx, my := ebiten.CursorPositionF()
	if _, wy := ebiten.Wheel(); wy != 0 {
		p := image.Pt(int(mx), int(my))
		if p.In(g.over.side) {
			g.scroll(int(math.Round(wy * 3)))
		} else if !p.In(g.over.left) {
			f := 1.15
			if wy < 0 {
				f = 1 / f
			}
			g.Camera.ZoomAt(mx, my, f)
		}
	}
	// Left button: a press and release without moving is a click (select);
	// with movement it is a drag (pan).
	// A drag from a panel's inner edge resizes it.
	if inpututil.IsMouseButtonJustPressed(ebiten.MouseButtonLeft) {
		g.dragging, g.dragX, g.dragY, g.dragFrom = true, mx, my, [2]float64{mx, my}
		switch o := &g.over; {
		case !o.left.Empty() && math.Abs(mx-float64(o.left.Max.X)) <= 4 && my > float64(o.left.Min.Y):
			g.resizing = 1
		case !o.side.Empty() && math.Abs(mx-float64(o.side.Min.X)) <= 4 && my > float64(o.side.Min.Y):
			g.resizing = 2
		}
	}
	if g.resizing != 0 {
		switch {
		case !ebiten.IsMouseButtonPressed(ebiten.MouseButtonLeft):
			g.resizing, g.dragging = 0, false
		case g.resizing == 1:
			g.LeftW = int(mx)
		default:
			g.SideW = int(g.Camera.W - mx)
		}
		return
	}
	if g.dragging && ebiten.IsMouseButtonPressed(ebiten.MouseButtonLeft) {
		if mx != g.dragX || my != g.dragY {
			g.Follow = false
		}
		g.Camera.Pan(mx-g.dragX, my-g.dragY)
		g.dragX, g.dragY = mx, my
	}
	if g.dragging && inpututil.IsMouseButtonJustReleased(ebiten.MouseButtonLeft) {
		g.dragging = false
		if math.Abs(mx-g.dragFrom[0])+math.Abs(my-g.dragFrom[1]) < 4 {
			g.Click(mx, my)
		}
	}
}

// scroll moves the side pane's text by n rows: up (towards older lines) for
// n > 0.
func (g *Game) scroll(n int) {
	if g.Pane == PaneConversation {
		g.ObsScroll = max(0, g.ObsScroll+n)
	} else {
		g.ObsScroll = max(0, g.ObsScroll-n)
	}
}

// Layout uses the window's size as the screen's: the camera keeps a pixel
// per pixel.
func (g *Game) Layout(outsideWidth, outsideHeight int) (int, int) {
	g.Camera.W, g.Camera.H = float64(outsideWidth), float64(outsideHeight)
	return outsideWidth, outsideHeight
}

// HUD is the text at the top left: the scenario, episode and tick (of the
// time limit), playing or paused, the speed and tick rate, the mode, team
// scores, the objective's progress, and errors.
func (g *Game) HUD() []string {
	m := &g.Model
	state := "playing"
	if g.paused {
		state = "paused"
	}
	if e, ok := g.Src.(interface{ Ended() bool }); ok && e.Ended() {
		state = "run over"
	}
	gone := false
	if l, ok := g.Src.(interface{ Gone() (bool, error) }); ok {
		gone, _ = l.Gone()
		if gone {
			state = "server gone"
		}
	}
	tick := strconv.Itoa(m.Tick)
	head := ""
	mode := ""
	if w := m.World; w != nil {
		head = w.Scenario + "  "
		if w.Objective.TimeLimit > 0 {
			tick += "/" + strconv.Itoa(w.Objective.TimeLimit)
		}
		mode = "  " + w.Mode
	}
	lines := []string{fmt.Sprintf("%sepisode %d  tick %s  %s  x%g (%g ticks/s)%s", head, m.Episode, tick, state, g.speed, round2(g.tickRate()*g.speed), mode)}
	if len(m.TeamScores) > 0 {
		var parts []string
		for _, t := range slices.Sorted(maps.Keys(m.TeamScores)) {
			parts = append(parts, fmt.Sprintf("%s %d", t, m.TeamScores[t]))
		}
		lines = append(lines, "scores: "+strings.Join(parts, "  "))
	}
	if p := m.ObjectiveProgress(); p != "" {
		lines = append(lines, p)
	}
	if g.typing {
		lines = append(lines, "seek to tick: "+g.seeking+"_  (enter: go, esc: cancel)")
	}
	if g.status != "" {
		lines = append(lines, g.status)
	}
	if err := g.Src.Err(); err != nil {
		lines = append(lines, "source: "+err.Error())
	}
	if gone {
		lines = append(lines, "the server has gone (or ended the session): the last frame stays; r: reconnect")
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
	"click: inspect agent  esc: deselect  c: follow it",
	"side pane: i inspector  y history  t conversation  o observation (again: close; wheel, pgup/pgdn scroll; click a line: seek)",
	"drag: pan   wheel: zoom   f: fit   p: perception radius   l: labels   k: panels   n: legend   drag a panel's edge: resize",
	"replays: left or ,: back a tick   [ / ]: 10 s back/on   home/end   g: go to tick   click the timeline",
}
