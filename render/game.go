package render

import (
	"fmt"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/inpututil"
)

// Game is the Ebiten game: it polls its source into the model in Update,
// maps input to commands, and draws the model in Draw.
type Game struct {
	Model  Model
	Camera Camera
	Src    Source

	paused bool
	speed  float64
	fitted bool
	help   bool
	status string // the last command's error, if any

	dragging     bool
	dragX, dragY float64
	dragFrom     [2]float64
}

// NewGame returns a game that shows what src sends.
func NewGame(src Source) *Game {
	return &Game{Src: src, speed: 1, Camera: Camera{Scale: 10}}
}

// Update takes new frames and input.
func (g *Game) Update() error {
	g.Pump()
	g.input()
	return nil
}

// Pump applies the frames the source has for the model, and fits the
// camera to the world on the first one.
func (g *Game) Pump() {
	frames := g.Src.Poll()
	for _, f := range frames {
		g.Model.Apply(f)
	}
	if len(frames) > 0 {
		g.paused = g.Model.Paused
	}
	if !g.fitted && g.Model.Frames > 0 && g.Camera.W > 0 {
		g.Camera.Fit(g.Model.Bounds())
		g.fitted = true
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

// Click selects the agent under the screen point, or clears the selection.
func (g *Game) Click(sx, sy float64) { g.Model.Selected = g.Model.Pick(&g.Camera, sx, sy) }

func (g *Game) command(cmd string, v float64) bool {
	if err := g.Src.Control(cmd, v); err != nil {
		g.status = fmt.Sprintf("%s: %v", cmd, err)
		return false
	}
	g.status = ""
	return true
}

func (g *Game) input() {
	switch {
	case inpututil.IsKeyJustPressed(ebiten.KeySpace):
		g.TogglePause()
	case inpututil.IsKeyJustPressed(ebiten.KeyArrowRight), inpututil.IsKeyJustPressed(ebiten.KeyPeriod):
		g.Step()
	case inpututil.IsKeyJustPressed(ebiten.KeyEqual), inpututil.IsKeyJustPressed(ebiten.KeyKPAdd):
		g.Faster()
	case inpututil.IsKeyJustPressed(ebiten.KeyMinus), inpututil.IsKeyJustPressed(ebiten.KeyKPSubtract):
		g.Slower()
	case inpututil.IsKeyJustPressed(ebiten.KeyF):
		g.Camera.Fit(g.Model.Bounds())
	case inpututil.IsKeyJustPressed(ebiten.KeyH), inpututil.IsKeyJustPressed(ebiten.KeySlash):
		g.help = !g.help
	case inpututil.IsKeyJustPressed(ebiten.KeyEscape):
		g.Model.Selected = ""
	}
	mx, my := ebiten.CursorPositionF()
	if _, wy := ebiten.Wheel(); wy != 0 {
		f := 1.15
		if wy < 0 {
			f = 1 / f
		}
		g.Camera.ZoomAt(mx, my, f)
	}
	// Left button: a press and release without moving is a click (select);
	// with movement it is a drag (pan).
	if inpututil.IsMouseButtonJustPressed(ebiten.MouseButtonLeft) {
		g.dragging, g.dragX, g.dragY, g.dragFrom = true, mx, my, [2]float64{mx, my}
	}
	if g.dragging && ebiten.IsMouseButtonPressed(ebiten.MouseButtonLeft) {
		g.Camera.Pan(mx-g.dragX, my-g.dragY)
		g.dragX, g.dragY = mx, my
	}
	if g.dragging && inpututil.IsMouseButtonJustReleased(ebiten.MouseButtonLeft) {
		g.dragging = false
		if abs(mx-g.dragFrom[0])+abs(my-g.dragFrom[1]) < 4 {
			g.Click(mx, my)
		}
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// Layout uses the window's size as the screen's: the camera keeps a pixel
// per pixel.
func (g *Game) Layout(outsideWidth, outsideHeight int) (int, int) {
	g.Camera.W, g.Camera.H = float64(outsideWidth), float64(outsideHeight)
	return outsideWidth, outsideHeight
}
