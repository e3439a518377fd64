//go:build xvfb

// Render tests: they open a window, so they need a display. test.sh runs
// them under Xvfb: xvfb-run -a go test -tags xvfb -run Render ./render/
// With ARENA_VIEWER_PNG_DIR=DIR every built-in scenario's scene is written
// there as viewer-NAME.png (docs/img/viewer-*.png are made this way).

package render

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/hajimehoshi/ebiten/v2"
	"github.com/stretchr/testify/require"
)

const (
	shotW, shotH   = 480, 360 // the basic scene (testFrame)
	sceneW, sceneH = 960, 600 // the scenarios' scenes
	sceneTicks     = 40       // ticks each scenario runs before its scene is shot
)

// scene is a game to render once, and what came of it. Ebiten runs once per
// process, on the main thread: TestMain renders every scene in turn and the
// tests check the shots.
type scene struct {
	dir    string // a temporary folder the scene reads
	name   string
	g      *Game
	w, h   int
	err    error // building the scene failed
	frames int
	shot   *image.RGBA
	cam    Camera
	over   overlays
	// written are the labels' and bubbles' boxes.
	written []image.Rectangle
}

var scenes []*scene

func findScene(name string) *scene {
	for _, s := range scenes {
		if s.name == name {
			return s
		}
	}
	return nil
}

// shooter runs the scenes one after the other, each for a few frames with a
// fixed screen, and keeps the last frame of each; then it serves the
// benchmarks' draw jobs until the tests are over. Ebiten runs on the main
// goroutine; the tests and benchmarks run on another (TestMain).
type shooter struct {
	i   int
	job *drawJob
}

// drawJob asks the game loop to draw a game n times at w × h and say what
// it cost.
type drawJob struct {
	g    *Game
	w, h int
	n    int
	done chan drawCost

	frames   int
	drawTime time.Duration
	cpu0     time.Duration
	heap0    uint64 // the heap when the job started, after a collection
	alloc0   uint64
}

// drawCost is what drawing a job's frames cost: the process's CPU time (the
// draw calls, Ebiten flushing them and the software rasteriser under Xvfb)
// and the wall time in Game.Draw alone, per frame; the bytes allocated per
// frame; and how much more live heap there is after the frames than before.
type drawCost struct {
	cpuPerFrame, drawPerFrame time.Duration
	allocPerFrame             uint64
	kept                      int64 // live heap after the frames, over before them
}

var (
	drawJobs  = make(chan *drawJob)
	shotsDone = make(chan struct{})
	testsDone = make(chan struct{})
)

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// current is the scene being rendered, or nil when all are done.
func (s *shooter) current() *scene {
	for s.i < len(scenes) && scenes[s.i].err != nil {
		s.i++
	}
	if s.i < len(scenes) {
		return scenes[s.i]
	}
	return nil
}

func (s *shooter) Update() error {
	if sc := s.current(); sc != nil {
		return sc.g.Update()
	}
	select {
	case <-shotsDone:
	default:
		close(shotsDone)
	}
	if s.job == nil {
		select {
		case j := <-drawJobs:
			s.job = j
			ebiten.SetVsyncEnabled(false)
			if j.g != nil {
				j.g.Layout(j.w, j.h)
				j.g.Update()
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			j.heap0, j.alloc0 = ms.HeapAlloc, ms.TotalAlloc
			j.cpu0 = processCPU()
		case <-testsDone:
			return ebiten.Termination
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

func (s *shooter) Draw(screen *ebiten.Image) {
	if j := s.job; j != nil {
		if b := screen.Bounds(); b.Dx() != j.w || b.Dy() != j.h {
			return
		}
		t0 := time.Now()
		if j.g == nil {
			screen.Fill(ColBackground)
		} else {
			j.g.Draw(screen)
		}
		j.drawTime += time.Since(t0)
		j.frames++
		if j.frames == j.n {
			cpu := processCPU() - j.cpu0
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			j.done <- drawCost{cpu / time.Duration(j.n), j.drawTime / time.Duration(j.n),
				(ms.TotalAlloc - j.alloc0) / uint64(j.n), int64(ms.HeapAlloc) - int64(j.heap0)}
			s.job = nil
		}
		return
	}
	sc := s.current()
	if sc == nil {
		return
	}
	sc.g.Draw(screen)
	if b := screen.Bounds(); b.Dx() != sc.w || b.Dy() != sc.h {
		return // the layout of the scene before
	}
	sc.frames++
	if sc.frames < 3 {
		return
	}
	img := image.NewRGBA(screen.Bounds())
	screen.ReadPixels(img.Pix)
	sc.shot, sc.cam, sc.over, sc.written = img, sc.g.Camera, sc.g.over, slices.Clone(sc.g.written)
	s.i++
}

func (s *shooter) Layout(int, int) (int, int) {
	if j := s.job; j != nil {
		if j.g != nil {
			j.g.Layout(j.w, j.h)
		}
		return j.w, j.h
	}
	if sc := s.current(); sc != nil {
		sc.g.Layout(sc.w, sc.h)
		return sc.w, sc.h
	}
	return sceneW, sceneH
}

func TestMain(m *testing.M) {
	src := &ReplaySource{Frames: []ipc.Frame{testFrame(1)}, TicksPerUpdate: 1, playback: playback{speed: 1}, sent: -1}
	g := NewGame(src)
	g.Model.Selected = "a1"
	scenes = append(scenes, &scene{name: "basic", g: g, w: shotW, h: shotH})
	for _, name := range scenarios.Builtin() {
		scenes = append(scenes, scenarioScene(name, name, 0, nil))
	}
	// The whole observation of an agent, scrolled a little.
	scenes = append(scenes, scenarioScene("observation", "foraging", 0, func(g *Game) { g.Pane, g.ObsScroll = PaneObservation, 6 }))
	// Every scenario with each pane open.
	for _, name := range scenarios.Builtin() {
		for _, pane := range []string{PaneObservation, PaneHistory, PaneConversation} {
			scenes = append(scenes, scenarioScene(name+"-"+pane, name, 0, func(g *Game) { g.Pane = pane }))
		}
	}
	// Crowds: 16 agents talking, with the history and the conversation.
	for _, pane := range []string{PaneHistory, PaneConversation} {
		scenes = append(scenes, scenarioScene("town_square-16-"+pane, "town_square", 16, func(g *Game) { g.Pane = pane }))
	}
	scenes = append(scenes, transcriptScene())
	code := 0
	go func() {
		defer close(testsDone)
		code = m.Run()
	}()
	ebiten.SetWindowSize(sceneW, sceneH)
	ebiten.SetWindowTitle("arena render test")
	err := ebiten.RunGameWithOptions(&shooter{}, &ebiten.RunGameOptions{InitUnfocused: true})
	if err != nil && !errors.Is(err, ebiten.Termination) {
		fmt.Fprintln(os.Stderr, "render test: the game loop:", err)
		os.Exit(1)
	}
	<-testsDone
	for _, s := range scenes {
		if s.dir != "" {
			os.RemoveAll(s.dir)
		}
	}
	os.Exit(code)
}

// BenchmarkDraw draws every built-in scenario with 16 agents (or its most,
// when fewer) at 1280 × 800, after benchTicks ticks, with the first agent
// selected. It reports the process's CPU time per frame (cpu-ms/frame: the
// draw calls, Ebiten's flush and Xvfb's software rasteriser), the time in
// Game.Draw alone (draw-ms/frame), the bytes allocated a frame
// (alloc-KB/frame) and the live heap kept (kept-MB: whatever the frames left
// behind, Ebiten's queue included, after a collection). The
// first, "blank", only clears the screen: the floor the frame's presentation
// costs under Xvfb whatever is drawn.
//
//	xvfb-run -a go test -tags xvfb -run '^$' -bench Draw -benchtime 200x ./render/
func BenchmarkDraw(b *testing.B) {
	b.Run("blank", func(b *testing.B) {
		j := &drawJob{w: 1280, h: 800, n: max(b.N, 2), done: make(chan drawCost)}
		drawJobs <- j
		c := <-j.done
		b.ReportMetric(float64(c.cpuPerFrame)/1e6, "cpu-ms/frame")
		b.ReportMetric(float64(c.drawPerFrame)/1e6, "draw-ms/frame")
		b.ReportMetric(float64(c.allocPerFrame)/1024, "alloc-KB/frame")
		b.ReportMetric(float64(c.kept)/(1<<20), "kept-MB")
	})
	for _, name := range scenarios.Builtin() {
		b.Run(name, func(b *testing.B) {
			sc, err := scenarios.Load(name)
			if err != nil {
				b.Fatal(err)
			}
			s := scenarioScene(name, name, min(16, sc.Agents.Max), nil)
			if s.err != nil {
				b.Fatal(s.err)
			}
			j := &drawJob{g: s.g, w: 1280, h: 800, n: max(b.N, 2), done: make(chan drawCost)}
			b.ResetTimer()
			drawJobs <- j
			c := <-j.done
			b.ReportMetric(float64(c.cpuPerFrame)/1e6, "cpu-ms/frame")
			b.ReportMetric(float64(c.drawPerFrame)/1e6, "draw-ms/frame")
			b.ReportMetric(float64(c.allocPerFrame)/1024, "alloc-KB/frame")
			b.ReportMetric(float64(c.kept)/(1<<20), "kept-MB")
		})
	}
}

// scenarioScene runs a built-in scenario for sceneTicks ticks with its bots,
// keeping a frame per tick and every observation as a replay source does,
// and returns a game paused at the last tick with the first agent selected
// and its perception radius shown. adjust, when set, changes the game.
func scenarioScene(name, scenario string, agents int, adjust func(*Game)) *scene {
	s := &scene{name: name, w: sceneW, h: sceneH}
	sc, err := scenarios.Load(scenario)
	if err != nil {
		s.err = err
		return s
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: agents})
	if err != nil {
		s.err = err
		return s
	}
	ctrls, err := eval.Controllers(sc, w)
	if err != nil {
		s.err = err
		return s
	}
	src := newReplaySource(w, 1, sc.Limits.DecisionPeriod)
	first := src.Frames[0]
	r := &engine.Runner{World: w, Controllers: ctrls, DecisionPeriod: sc.Limits.DecisionPeriod, MaxTicks: sceneTicks,
		OnObserve: src.observe, OnTick: func(rec *engine.TickRecord) { src.ticked(w, rec) }}
	if _, err := r.Run(context.Background()); err != nil {
		s.err = err
		return s
	}
	src.Seek(src.Ticks())
	src.Control("pause", 0)
	g := NewGame(src)
	g.ShowPerception = true
	if len(first.Agents) > 0 {
		g.Select(first.Agents[0].ID)
	}
	if adjust != nil {
		adjust(g)
	}
	s.g = g
	return s
}

func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// shotOf returns the scene's shot, written to the test's temporary folder
// (and to ARENA_VIEWER_PNG_DIR as viewer-NAME.png when that is set).
func shotOf(t *testing.T, name string) *scene {
	t.Helper()
	<-shotsDone
	s := findScene(name)
	switch {
	case s == nil:
		t.Fatalf("no scene %s", name)
	case s.err != nil:
		t.Fatalf("scene %s: %v", name, s.err)
	case s.shot == nil:
		t.Fatalf("scene %s was not drawn", name)
	}
	if err := writePNG(filepath.Join(t.TempDir(), "viewer-"+name+".png"), s.shot); err != nil {
		t.Error(err)
	}
	if dir := os.Getenv("ARENA_VIEWER_PNG_DIR"); dir != "" && name != "basic" {
		if err := writePNG(filepath.Join(dir, "viewer-"+name+".png"), s.shot); err != nil {
			t.Error(err)
		}
	}
	return s
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R) < 8 && d(a.G, b.G) < 8 && d(a.B, b.B) < 8
}

func TestRenderPixels(t *testing.T) {
	s := shotOf(t, "basic")
	shot, cam := s.shot, s.cam
	var m Model
	m.Apply(testFrame(1))
	at := func(x, z, dx float64) color.RGBA {
		sx, sy := cam.WorldToScreen(x, z)
		return shot.RGBAAt(int(sx+dx), int(sy))
	}
	// Agent a1 faces +x: its centre, and left of it, away from the facing line.
	r := max(AgentRadius*cam.Scale, 4)
	for _, dx := range []float64{0, -r / 2} {
		if got, want := at(0, 0, dx), m.TeamColour("red"); !near(got, want) {
			t.Errorf("agent a1 (%+g px): %v, want its team colour %v", dx, got, want)
		}
		if got, want := at(10, 5, dx), m.TeamColour("blue"); !near(got, want) {
			t.Errorf("agent a2 (%+g px): %v, want its team colour %v", dx, got, want)
		}
	}
	if got, want := at(5, 5, 0), ResourceColours["wood"]; !near(got, want) {
		t.Errorf("resource: %v, want %v", got, want)
	}
	// The station's left edge (its initial is written in the middle).
	if got := at(-5, -5, -max(stationHalf*cam.Scale, minStationPx)+2); !near(got, ColStationInUse) {
		t.Errorf("station in use: %v, want %v", got, ColStationInUse)
	}
	// The HUD: white text at the top left, and the inspector's panel.
	if n := whitePixels(shot, image.Rect(0, 0, 200, lineH)); n < 20 {
		t.Errorf("HUD: %d white pixels in the top line", n)
	}
	if s.over.side.Empty() || whitePixels(shot, s.over.side) < 100 {
		t.Errorf("inspector: %v, %d white pixels", s.over.side, whitePixels(shot, s.over.side))
	}
}

// whitePixels counts the text's pixels in r.
func whitePixels(img *image.RGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if c := img.RGBAAt(x, y); c.R > 200 && c.G > 200 && c.B > 200 {
				n++
			}
		}
	}
	return n
}

// colourPixels counts the pixels in r near the colour.
func colourPixels(img *image.RGBA, r image.Rectangle, col color.RGBA) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if near(img.RGBAAt(x, y), col) {
				n++
			}
		}
	}
	return n
}

// covered reports whether a screen point is off the screen or under (or
// within margin pixels of) a panel.
func (s *scene) covered(x, y, margin float64) bool {
	if x < margin || y < margin || x >= float64(s.w)-margin || y >= float64(s.h)-margin {
		return true
	}
	p := image.Pt(int(x), int(y))
	if !p.In(s.over.view.Inset(int(math.Ceil(margin)))) {
		return true
	}
	for _, r := range append(s.over.rects(), s.written...) {
		if p.In(r.Inset(-int(math.Ceil(margin)))) {
			return true
		}
	}
	return false
}

// TestRenderScenarios checks each built-in scenario's scene, run for a few
// ticks: agents in their team colours and resources in theirs where nothing
// covers them, the HUD, the timeline, the inspector, the components' panels,
// and team_capture's terrain shading.
func TestRenderScenarios(t *testing.T) {
	withPanels := []string{"social", "market", "economy", "town_square", "role_game", "debate"}
	for _, name := range scenarios.Builtin() {
		t.Run(name, func(t *testing.T) {
			s := shotOf(t, name)
			m, shot := &s.g.Model, s.shot
			r := max(AgentRadius*s.cam.Scale, minAgentPx)
			// (a) Every agent whose disc nothing covers shows its team colour at
			// its centre.
			seen := 0
			for i, a := range m.Agents {
				sx, sy := s.cam.WorldToScreen(a.Position[0], a.Position[2])
				if m.Dead(&m.Agents[i]) || s.covered(sx, sy, 2) {
					continue
				}
				hidden := false
				for j, b := range m.Agents {
					bx, by := s.cam.WorldToScreen(b.Position[0], b.Position[2])
					if j > i && math.Hypot(bx-sx, by-sy) < 2*r+4 {
						hidden = true // under a disc drawn later
					}
				}
				if hidden {
					continue
				}
				seen++
				if got, want := shot.RGBAAt(int(sx), int(sy)), m.AgentColour(&m.Agents[i]); !near(got, want) {
					t.Errorf("agent %s at (%.0f, %.0f): %v, want its team colour %v", a.ID, sx, sy, got, want)
				}
			}
			if seen == 0 {
				t.Errorf("no agent's disc is in sight (%d agents)", len(m.Agents))
			}
			// (b) Resources away from agents and stations show their colour.
			resources, checked := 0, 0
			for _, e := range m.Entities {
				if e.Type != "resource" {
					continue
				}
				resources++
				sx, sy := s.cam.WorldToScreen(e.Position[0], e.Position[2])
				if s.covered(sx, sy, 2) || nearAgentOrStation(s, sx, sy, 2*r+8) {
					continue
				}
				checked++
				if got, want := shot.RGBAAt(int(sx), int(sy)), ResourceColour(e); !near(got, want) {
					t.Errorf("resource %s (%s) at (%.0f, %.0f): %v, want %v", e.Name, e.Kind, sx, sy, got, want)
				}
			}
			if resources > 0 && checked == 0 {
				t.Errorf("none of %d resources is in sight", resources)
			}
			// (c) The HUD's text, and the timeline played to the end.
			if n := whitePixels(shot, image.Rect(0, 0, 300, lineH)); n < 20 {
				t.Errorf("HUD: %d white pixels in the top line", n)
			}
			if tl := s.over.timeline; tl.Empty() {
				t.Error("no timeline")
			} else if got := shot.RGBAAt(tl.Min.X+2, (tl.Min.Y+tl.Max.Y)/2); !near(got, ColTimePlayed) {
				t.Errorf("timeline: %v, want the played colour %v", got, ColTimePlayed)
			}
			if s.over.side.Empty() || whitePixels(shot, s.over.side) < 100 {
				t.Errorf("inspector of %s: %v", m.Selected, s.over.side)
			}
			// (d) The terrain's shading.
			if name == "team_capture" {
				checkTerrain(t, s)
			}
			// (e) The components' panels: a title and lines each.
			if slices.Contains(withPanels, name) {
				if len(m.Panels) == 0 || len(s.over.panels) != len(m.Panels) {
					t.Fatalf("%d panels in the model, %d drawn", len(m.Panels), len(s.over.panels))
				}
				for _, p := range s.over.panels {
					title, text := colourPixels(shot, p.r, ColPanelTitle), whitePixels(shot, p.r)
					if title < 20 || text < 20*len(p.lines) {
						t.Errorf("panel %q at %v: %d title pixels, %d text pixels for %d lines", p.title, p.r, title, text, len(p.lines))
					}
				}
			}
		})
	}
}

// nearAgentOrStation reports whether a screen point is within d pixels of an
// agent or a station (which are drawn over resources).
func nearAgentOrStation(s *scene, x, y, d float64) bool {
	for _, a := range s.g.Model.Agents {
		ax, ay := s.cam.WorldToScreen(a.Position[0], a.Position[2])
		if math.Hypot(ax-x, ay-y) < d {
			return true
		}
	}
	for _, e := range s.g.Model.Entities {
		if e.Type == "station" {
			ex, ey := s.cam.WorldToScreen(e.Position[0], e.Position[2])
			if math.Hypot(ex-x, ey-y) < max(stationHalf*s.cam.Scale, minStationPx)*1.5+4 {
				return true
			}
		}
	}
	return false
}

// checkTerrain finds bare ground (away from panels, everything in the world,
// the perception circle and grid lines) at a low and a high point, and checks
// each pixel has the ground's shade for its height: the low one darker.
func checkTerrain(t *testing.T, s *scene) {
	m, c := &s.g.Model, &s.cam
	fw := m.World
	if fw == nil || len(fw.TerrainHeights) == 0 {
		t.Fatal("team_capture has no terrain heights")
	}
	b := world.Bounds{MinX: fw.Bounds[0], MinZ: fw.Bounds[1], MaxX: fw.Bounds[2], MaxZ: fw.Bounds[3]}
	ter := world.Terrain{Base: fw.TerrainBase, Heights: fw.TerrainHeights}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range fw.TerrainHeights {
		for _, h := range row {
			lo, hi = min(lo, h), max(hi, h)
		}
	}
	step := gridMetres
	for step*c.Scale < gridMinPx {
		step *= 2
	}
	onGrid := func(v float64) bool { // v in metres along x or z
		d := math.Abs(v/step-math.Round(v/step)) * step * c.Scale
		return d < 3
	}
	bare := func(sx, sy float64) bool {
		x, z := c.ScreenToWorld(sx, sy)
		if s.covered(sx, sy, 4) || !b.Contains(x, z) || onGrid(x) || onGrid(z) {
			return false
		}
		dist := func(p world.Vec3) float64 {
			px, py := c.WorldToScreen(p[0], p[2])
			return math.Hypot(px-sx, py-sy)
		}
		for _, e := range append(slices.Clone(m.Static), m.Entities...) {
			reach := 12.0
			for _, v := range e.Size {
				reach = max(reach, v*c.Scale*math.Sqrt2+8)
			}
			if dist(e.Position) < reach {
				return false
			}
		}
		for _, a := range m.Agents {
			if dist(a.Position) < 80 { // the disc, its label and its bubbles
				return false
			}
			if a.ID == m.Selected && math.Abs(dist(a.Position)-fw.Perception*c.Scale) < 4 {
				return false
			}
			for _, p := range a.Action.Path {
				if dist(p) < 12 {
					return false
				}
			}
		}
		return true
	}
	type point struct{ sx, sy, h float64 }
	var low, high *point
	for sy := 2.0; sy < float64(s.h); sy += 5 {
		for sx := 2.0; sx < float64(s.w); sx += 5 {
			if !bare(sx, sy) {
				continue
			}
			x, z := c.ScreenToWorld(sx+0.5, sy+0.5)
			p := &point{sx, sy, ter.HeightAt(b, x, z) - fw.TerrainBase}
			if low == nil || p.h < low.h {
				low = p
			}
			if high == nil || p.h > high.h {
				high = p
			}
		}
	}
	if low == nil || high.h-low.h < (hi-lo)/2 {
		t.Fatalf("no bare ground spanning half the heights (%v to %v): %+v %+v", lo, hi, low, high)
	}
	lum := func(c color.RGBA) int { return 299*int(c.R) + 587*int(c.G) + 114*int(c.B) }
	pl, ph := s.shot.RGBAAt(int(low.sx), int(low.sy)), s.shot.RGBAAt(int(high.sx), int(high.sy))
	if lum(pl) >= lum(ph) {
		t.Errorf("ground at height %.2f is %v, at %.2f %v: the low one should be darker", low.h, pl, high.h, ph)
	}
	for _, p := range []*point{low, high} {
		got, want := s.shot.RGBAAt(int(p.sx), int(p.sy)), groundShade((p.h-lo)/(hi-lo))
		if !near(got, want) {
			t.Errorf("ground at (%.0f, %.0f), height %.2f: %v, want about %v", p.sx, p.sy, p.h, got, want)
		}
	}
}

// TestRenderObservation checks the whole observation's panel: tall, with
// text, scrolled as asked.
func TestRenderObservation(t *testing.T) {
	s := shotOf(t, "observation")
	o := s.over
	if o.sideTitle == "" || len(o.sideLines) < 10 || o.side.Dy() < s.h/2 {
		t.Fatalf("observation panel %v, title %q, %d lines", o.side, o.sideTitle, len(o.sideLines))
	}
	if s.g.ObsScroll != 6 {
		t.Errorf("scrolled to line %d, want 6", s.g.ObsScroll)
	}
	if n := whitePixels(s.shot, o.side); n < 50*len(o.sideLines) {
		t.Errorf("observation panel: %d text pixels for %d lines", n, len(o.sideLines))
	}
}

// TestRenderPanes checks every scenario with each side pane open: the
// world's bounds in the view the panels leave (none over them), and the
// pane's text. The observation must be the whole observation (one line an
// encoding error would not do); the history must show the selected agent's
// decisions, in their colour; the conversation must show what was said in
// the scenarios where agents talk.
func TestRenderPanes(t *testing.T) {
	talking := []string{"debate", "market", "role_game", "social", "town_square"}
	for _, name := range scenarios.Builtin() {
		for _, pane := range []string{PaneObservation, PaneHistory, PaneConversation} {
			t.Run(name+"/"+pane, func(t *testing.T) {
				s := shotOf(t, name+"-"+pane)
				o, m := &s.over, &s.g.Model
				checkWorldInView(t, s)
				if o.side.Empty() || !o.side.Overlaps(image.Rect(0, 0, s.w, s.h)) {
					t.Fatalf("no side pane: %v", o.side)
				}
				if strings.Contains(strings.Join(o.sideLines, "\n"), "unsupported") {
					t.Errorf("pane %s: %q", pane, o.sideLines)
				}
				// Rows with text: at least 30 light pixels each.
				text := 0
				for i := range o.sideRows {
					r := image.Rect(o.side.Min.X, o.sideTop+i*lineH, o.side.Max.X, o.sideTop+(i+1)*lineH)
					if lightPixels(s.shot, r) >= 30 {
						text++
					}
				}
				switch pane {
				case PaneObservation:
					if len(o.sideRows) < 10 || text < len(o.sideRows)*3/4 {
						t.Errorf("observation of %s: %d rows, %d with text; %q", m.Selected, len(o.sideRows), text, o.sideLines)
					}
				case PaneHistory:
					if len(m.History[m.Selected]) == 0 {
						t.Fatalf("no history of %s", m.Selected)
					}
					heads := 0
					for i, r := range o.sideRows {
						if r.col == ColHistory && colourPixels(s.shot, image.Rect(o.side.Min.X, o.sideTop+i*lineH, o.side.Max.X, o.sideTop+(i+1)*lineH), ColHistory) >= 20 {
							heads++
						}
					}
					if heads == 0 || text < 2 {
						t.Errorf("history of %s: %d decision heads drawn, %d rows with text: %q", m.Selected, heads, text, o.sideLines)
					}
				case PaneConversation:
					if slices.Contains(talking, name) {
						said := 0
						for _, r := range o.sideRows {
							if r.tick >= 0 {
								said++
							}
						}
						if said < 2 || text < 2 {
							t.Errorf("conversation: %d rows of lines, %d with text: %q", said, text, o.sideLines)
						}
					}
				}
			})
		}
	}
}

// checkWorldInView checks that the world's bounding box, as the camera
// shows it, lies within the view the panels leave, so nothing covers it.
func checkWorldInView(t *testing.T, s *scene) {
	t.Helper()
	b := s.g.Model.Bounds()
	x0, y0 := s.cam.WorldToScreen(b.MinX, b.MinZ)
	x1, y1 := s.cam.WorldToScreen(b.MaxX, b.MaxZ)
	box := image.Rect(int(math.Ceil(x0)), int(math.Ceil(y0)), int(x1), int(y1))
	if !box.In(s.over.view) {
		t.Errorf("the world's box %v is not within the view %v", box, s.over.view)
	}
	for _, r := range []image.Rectangle{s.over.hud, s.over.left, s.over.side, s.over.timeline} {
		if box.Overlaps(r) {
			t.Errorf("a panel %v covers the world's box %v", r, box)
		}
	}
}

// lightPixels counts the light (text) pixels in r.
func lightPixels(img *image.RGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if c := img.RGBAAt(x, y); int(c.R)+int(c.G)+int(c.B) > 3*150 {
				n++
			}
		}
	}
	return n
}

// rects are the boxes that cover the world.
func (o *overlays) rects() []image.Rectangle {
	out := []image.Rectangle{o.hud}
	for _, p := range o.panels {
		out = append(out, p.r)
	}
	for _, r := range []image.Rectangle{o.left, o.side, o.log, o.legend, o.timeline} {
		if !r.Empty() {
			out = append(out, r)
		}
	}
	if o.tickLabel != "" {
		w, h := textSize(o.tickLabel)
		out = append(out, image.Rectangle{Min: o.tickAt, Max: o.tickAt.Add(image.Pt(w, h))})
	}
	return out
}

// transcriptScene is a replay of language-model agents (the fake model of
// transcript_test.go) with its transcripts, at its end, with agent_001's
// history open.
func transcriptScene() *scene {
	s := &scene{name: "transcript", w: sceneW, h: sceneH}
	dir, err := os.MkdirTemp("", "arena-render-")
	if err != nil {
		s.err = err
		return s
	}
	s.dir = dir // read as it is drawn; removed at the end
	if s.err = llmReplay(dir, 2, 12); s.err != nil {
		return s
	}
	src, tr, err := openReplay(dir)
	if err != nil {
		s.err = err
		return s
	}
	src.Seek(src.Ticks())
	src.Control("pause", 0)
	g := NewGame(src)
	g.Model.Transcripts = tr
	g.Select("agent_001")
	g.Pane = PaneHistory
	s.g = g
	return s
}

// TestRenderCrowds checks 16 agents talking: every bubble inside the
// world's view (none pushed up under the HUD), and the history and the
// conversation drawn.
func TestRenderCrowds(t *testing.T) {
	for _, pane := range []string{PaneHistory, PaneConversation} {
		t.Run(pane, func(t *testing.T) {
			s := shotOf(t, "town_square-16-"+pane)
			o := &s.over
			require.Len(t, s.g.Model.Agents, 16)
			for _, r := range s.g.bubbles {
				require.True(t, r.In(o.view), "a bubble %v outside the view %v (HUD %v)", r, o.view, o.hud)
			}
			text := 0
			for i := range o.sideRows {
				if lightPixels(s.shot, image.Rect(o.side.Min.X, o.sideTop+i*lineH, o.side.Max.X, o.sideTop+(i+1)*lineH)) >= 30 {
					text++
				}
			}
			require.GreaterOrEqual(t, text, 3, "%s rows with text: %q", pane, o.sideLines)
		})
	}
}

// TestRenderTranscript checks the model's exchanges in the history pane:
// drawn in their colour under the decisions.
func TestRenderTranscript(t *testing.T) {
	s := shotOf(t, "transcript")
	o := &s.over
	drawn, said := 0, false
	for i, r := range o.sideRows {
		if r.col != ColTranscript {
			continue
		}
		said = said || strings.Contains(r.text, "says: ")
		if colourPixels(s.shot, image.Rect(o.side.Min.X, o.sideTop+i*lineH, o.side.Max.X, o.sideTop+(i+1)*lineH), ColTranscript) >= 20 {
			drawn++
		}
	}
	require.GreaterOrEqual(t, drawn, 4, "transcript rows drawn: %q", o.sideLines)
	require.True(t, said, "what the model said: %q", o.sideLines)
}
