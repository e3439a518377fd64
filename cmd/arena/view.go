package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"strings"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/render"
	"github.com/hajimehoshi/ebiten/v2"
)

// cmdView opens the viewer on a replay file or a running server.
func cmdView(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("view", stderr)
	connect := fs.String("connect", "", "join a running server as a spectator: unix:PATH or tcp:HOST:PORT")
	token := fs.String("token", "", "the spectators' token: the one arena serve printed (or its tokens file's \"spectator\" entry)")
	tokenFile := fs.String("token-file", "", "read the spectators' token from this file (arena serve writes OUT/spectator.token)")
	width := fs.Int("width", 1280, "window width in pixels")
	height := fs.Int("height", 800, "window height in pixels")
	shot := fs.String("screenshot", "", "with --connect: write one picture of the current state to this file (PNG, or binary PPM when it ends in .ppm) and exit; needs a display (headless: under Xvfb)")
	files, err := parseInterspersed(fs, args) // arena CMD FILE --flag works too
	if err != nil {
		return err
	}
	var (
		src   render.Source
		title string
	)
	switch {
	case *connect != "" && len(files) == 0:
		if *tokenFile != "" {
			b, err := os.ReadFile(*tokenFile)
			if err != nil {
				return fmt.Errorf("view: %w", err)
			}
			*token = strings.TrimSpace(string(b))
		}
		live, err := render.Connect(ctx, *connect, *token)
		if err != nil {
			return fmt.Errorf("view: %w", err)
		}
		defer live.Close()
		src, title = live, fmt.Sprintf("arena view: %s on %s", live.Welcome.Scenario, *connect)
	case *connect == "" && len(files) == 1:
		if *shot != "" {
			return errors.New("view: --screenshot needs --connect")
		}
		return viewReplay(ctx, files[0], *width, *height)
	default:
		return errors.New("view: want one replay file (DIR/replay.jsonl) or --connect ADDRESS: one of the two")
	}
	if *shot != "" {
		return screenshot(ctx, src, *shot, *width, *height)
	}
	return showWindow(ctx, src, title, *width, *height)
}

// screenshot draws the source's first frame in a window and writes it to a
// PNG file (what sdk/python's environments return from render()).
func screenshot(ctx context.Context, src render.Source, path string, width, height int) error {
	ebiten.SetWindowSize(width, height)
	ebiten.SetWindowTitle("arena view: screenshot")
	s := &shooter{window: window{Game: render.NewGame(src), ctx: ctx}, path: path}
	err := ebiten.RunGameWithOptions(s, &ebiten.RunGameOptions{InitUnfocused: true})
	if err != nil && !errors.Is(err, ebiten.Termination) {
		return fmt.Errorf("view: %w", err)
	}
	if s.err != nil {
		return fmt.Errorf("view: screenshot: %w", s.err)
	}
	if !s.done {
		return errors.New("view: screenshot: no frame arrived")
	}
	return nil
}

// shooter is the viewer's window that closes after writing one drawn frame.
type shooter struct {
	window
	path string
	done bool
	err  error
}

func (s *shooter) Update() error {
	if s.done {
		return ebiten.Termination
	}
	return s.window.Update()
}

func (s *shooter) Draw(screen *ebiten.Image) {
	s.Game.Draw(screen)
	if s.done || s.Game.Model.Frames == 0 {
		return
	}
	// The first Update with a frame fits the camera (Layout came before it), so the
	// first Draw after a frame arrived shows the whole world.
	img := image.NewRGBA(screen.Bounds())
	screen.ReadPixels(img.Pix)
	s.err, s.done = writeImage(s.path, img), true
}

// writeImage writes a PNG file, or a binary PPM (P6) when the name ends in
// .ppm (a format any program reads with no decoder).
func writeImage(path string, img *image.RGBA) error {
	var b bytes.Buffer
	if strings.HasSuffix(path, ".ppm") {
		w, h := img.Rect.Dx(), img.Rect.Dy()
		fmt.Fprintf(&b, "P6\n%d %d\n255\n", w, h)
		for i := 0; i < len(img.Pix); i += 4 {
			b.Write(img.Pix[i : i+3])
		}
	} else if err := png.Encode(&b, img); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// viewReplay opens the viewer on a replay file.
func viewReplay(ctx context.Context, path string, width, height int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("view: %w", err)
	}
	rep, err := engine.ReadReplay(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("view %s: %w", path, err)
	}
	w, err := replayWorld(rep.Header)
	if err != nil {
		return fmt.Errorf("view %s: %w", path, err)
	}
	rs, err := render.NewReplaySource(ctx, rep, w)
	if err != nil {
		return fmt.Errorf("view %s: %w", path, err)
	}
	return showWindow(ctx, rs, fmt.Sprintf("arena view: %s seed %d (%s)", rep.Header.Scenario, rep.Header.Seed, path), width, height)
}

// showWindow runs the viewer window on a source until it is closed or ctx
// is done. A variable, so that tests drive the source with no display.
var showWindow = func(ctx context.Context, src render.Source, title string, width, height int) error {
	ebiten.SetWindowSize(width, height)
	ebiten.SetWindowTitle(title)
	ebiten.SetWindowResizingMode(ebiten.WindowResizingModeEnabled)
	if err := ebiten.RunGame(&window{Game: render.NewGame(src), ctx: ctx}); err != nil && !errors.Is(err, ebiten.Termination) {
		return fmt.Errorf("view: %w", err)
	}
	return nil
}

// window is the viewer's game, closed when ctx is done (Ctrl-C).
type window struct {
	*render.Game
	ctx context.Context
}

func (w *window) Update() error {
	if w.ctx.Err() != nil {
		return ebiten.Termination
	}
	return w.Game.Update()
}
