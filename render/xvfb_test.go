//go:build xvfb

// Render tests: they open a window, so they need a display. test.sh runs
// them under Xvfb: xvfb-run -a go test -tags xvfb -run Render ./render/
// With ARENA_VIEWER_PNG=FILE the rendered screen is also written as a PNG
// (docs/img/viewer.png is made this way).

package render

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"

	"github.com/arena-sim/arena/ipc"
	"github.com/hajimehoshi/ebiten/v2"
)

const shotW, shotH = 480, 360

// shot is the screen rendered in TestMain (Ebiten must run on the main
// thread), checked by TestRenderPixels.
var (
	shot    *image.RGBA
	shotCam Camera
	shotErr error
)

// shooter runs the game for a few frames with a fixed screen and keeps the
// last one.
type shooter struct {
	g      *Game
	frames int
}

func (s *shooter) Update() error {
	if err := s.g.Update(); err != nil {
		return err
	}
	if shot != nil {
		return ebiten.Termination
	}
	return nil
}

func (s *shooter) Draw(screen *ebiten.Image) {
	s.g.Draw(screen)
	s.frames++
	if s.frames < 3 {
		return
	}
	b := screen.Bounds()
	img := image.NewRGBA(b)
	screen.ReadPixels(img.Pix)
	shot, shotCam = img, s.g.Camera
}

func (s *shooter) Layout(int, int) (int, int) {
	s.g.Layout(shotW, shotH)
	return shotW, shotH
}

func TestMain(m *testing.M) {
	src := &ReplaySource{Frames: []ipc.Frame{testFrame(1)}, TicksPerUpdate: 1, speed: 1, sent: -1}
	g := NewGame(src)
	g.Model.Selected = "a1"
	ebiten.SetWindowSize(shotW, shotH)
	ebiten.SetWindowTitle("arena render test")
	err := ebiten.RunGameWithOptions(&shooter{g: g}, &ebiten.RunGameOptions{InitUnfocused: true})
	if err != nil && !errors.Is(err, ebiten.Termination) {
		shotErr = err
	}
	if shot == nil && shotErr == nil {
		shotErr = errors.New("no frame was drawn")
	}
	if p := os.Getenv("ARENA_VIEWER_PNG"); p != "" && shot != nil {
		f, err := os.Create(p)
		if err == nil {
			err = png.Encode(f, shot)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "write the screenshot:", err)
		}
	}
	os.Exit(m.Run())
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
	if shotErr != nil {
		t.Fatal(shotErr)
	}
	var m Model
	m.Apply(testFrame(1))
	at := func(x, z, dx float64) color.RGBA {
		sx, sy := shotCam.WorldToScreen(x, z)
		return shot.RGBAAt(int(sx+dx), int(sy))
	}
	// Agent a1 faces +x: look left of its centre, away from the facing line.
	r := max(AgentRadius*shotCam.Scale, 4)
	if got, want := at(0, 0, -r/2), m.TeamColour("red"); !near(got, want) {
		t.Errorf("agent a1: %v, want its team colour %v", got, want)
	}
	if got, want := at(10, 5, -r/2), m.TeamColour("blue"); !near(got, want) {
		t.Errorf("agent a2: %v, want its team colour %v", got, want)
	}
	if got, want := at(5, 5, 0), ResourceColours["wood"]; !near(got, want) {
		t.Errorf("resource: %v, want %v", got, want)
	}
	if got := at(-5, -5, 0); !near(got, ColStationInUse) {
		t.Errorf("station in use: %v, want %v", got, ColStationInUse)
	}
	// The HUD: white text at the top left, and the inspector's panel.
	white := 0
	for y := 0; y < 16; y++ {
		for x := 0; x < 200; x++ {
			if c := shot.RGBAAt(x, y); c.R > 200 && c.G > 200 && c.B > 200 {
				white++
			}
		}
	}
	if white < 20 {
		t.Errorf("HUD: %d white pixels in the top line", white)
	}
}
