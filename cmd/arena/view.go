package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
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
	size := fs.String("size", "", "the window's (or screenshot's) size as WIDTHxHEIGHT, e.g. 1280x800 (instead of --width and --height)")
	shot := fs.String("screenshot", "", "write one picture to this file (PNG, or binary PPM when it ends in .ppm) and exit: of a replay at --at, or of a server's current state; needs a display (headless: under Xvfb)")
	at := fs.Int("at", 0, "a replay: start at this tick (the screenshot's tick; default the start, or the end for a screenshot)")
	sel := fs.String("select", "", "inspect this agent (as a click on it does)")
	show := fs.String("show", "", "the side pane to open: inspector, observation, history or conversation (as the keys i, o, y and t do)")
	files, err := parseInterspersed(fs, args) // arena CMD FILE --flag works too
	if err != nil {
		return err
	}
	if err := checkFlags(fs, -1, "width", "height"); err != nil {
		return err
	}
	atGiven := false
	fs.Visit(func(f *flag.Flag) { atGiven = atGiven || f.Name == "at" })
	if *size != "" {
		var w, h int
		if n, err := fmt.Sscanf(*size, "%dx%d", &w, &h); err != nil || n != 2 || fmt.Sprintf("%dx%d", w, h) != *size {
			return fmt.Errorf("view: --size %q is not WIDTHxHEIGHT, e.g. 1280x800", *size)
		}
		if w <= 0 || h <= 0 {
			return fmt.Errorf("view: --size %s: the width and the height must be at least 1", *size)
		}
		*width, *height = w, h
	}
	if *width < 200 || *height < 150 || *width > 8192 || *height > 8192 {
		return fmt.Errorf("view: a size of %dx%d is not from 200x150 to 8192x8192", *width, *height)
	}
	pane, ok := map[string]string{"": render.PaneInspector, "inspector": render.PaneInspector, "observation": render.PaneObservation,
		"history": render.PaneHistory, "conversation": render.PaneConversation}[*show]
	if !ok {
		return fmt.Errorf("view: --show %q is not inspector, observation, history or conversation", *show)
	}
	// newGame is the viewer's game on a source, with the agent selected and
	// the pane opened as asked.
	newGame := func(src render.Source) *render.Game {
		g := render.NewGame(src)
		g.Pane = pane // the side pane is open at first
		if *sel != "" {
			g.Select(*sel)
		}
		return g
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
		rs, title, err := openReplay(ctx, files[0])
		if err != nil {
			return err
		}
		if *sel != "" && !slices.ContainsFunc(rs.Frames[0].Agents, func(a ipc.FrameAgent) bool { return a.ID == *sel }) {
			return fmt.Errorf("view: --select %q: the replay has no such agent", *sel)
		}
		switch {
		case atGiven:
			rs.Seek(*at)
		case *shot != "":
			rs.Seek(rs.Ticks())
		}
		g := newGame(rs)
		g.Model.Transcripts = render.TranscriptsBeside(files[0])
		if *shot != "" {
			rs.Control("pause", 0)
			return screenshot(ctx, g, *shot, *width, *height)
		}
		return showWindow(ctx, g, title, *width, *height)
	default:
		return errors.New("view: want one replay file (DIR/replay.jsonl) or --connect ADDRESS: one of the two")
	}
	if atGiven {
		return errors.New("view: --at needs a replay (a live server cannot seek)")
	}
	if *shot != "" {
		return screenshot(ctx, newGame(src), *shot, *width, *height)
	}
	return showWindow(ctx, newGame(src), title, *width, *height)
}

// screenshot draws the game's first frame in a window and writes it to a
// PNG file (what sdk/python's environments return from render(), and the
// pictures in the docs).
func screenshot(ctx context.Context, g *render.Game, path string, width, height int) error {
	ebiten.SetWindowSize(width, height)
	ebiten.SetWindowTitle("arena view: screenshot")
	s := &shooter{window: window{Game: g, ctx: ctx}, path: path}
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

// openReplay re-simulates a replay file for the viewer and names its window.
func openReplay(ctx context.Context, path string) (*render.ReplaySource, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("view: %w", err)
	}
	rep, err := engine.ReadReplay(f)
	f.Close()
	if err != nil {
		return nil, "", fmt.Errorf("view %s: %w", path, err)
	}
	w, err := replayWorld(rep.Header)
	if err != nil {
		return nil, "", fmt.Errorf("view %s: %w", path, err)
	}
	rs, err := render.NewReplaySource(ctx, rep, w)
	if err != nil {
		return nil, "", fmt.Errorf("view %s: %w", path, err)
	}
	return rs, fmt.Sprintf("arena view: %s seed %d (%s)", rep.Header.Scenario, rep.Header.Seed, path), nil
}

// showWindow runs the viewer window on a game until it is closed or ctx is
// done. A variable, so that tests drive the game with no display.
var showWindow = func(ctx context.Context, g *render.Game, title string, width, height int) error {
	ebiten.SetWindowSize(width, height)
	ebiten.SetWindowTitle(title)
	ebiten.SetWindowResizingMode(ebiten.WindowResizingModeEnabled)
	if err := ebiten.RunGame(&window{Game: g, ctx: ctx}); err != nil && !errors.Is(err, ebiten.Termination) {
		return fmt.Errorf("view: %w", err)
	}
	if err := ctx.Err(); err != nil {
		// Closed by Ctrl-C: the command did not finish what it was asked.
		return fmt.Errorf("view: interrupted: %w", err)
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
