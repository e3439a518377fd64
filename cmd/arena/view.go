package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/render"
	"github.com/hajimehoshi/ebiten/v2"
)

// cmdView opens the viewer on a replay file or a running server.
func cmdView(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("view", stderr)
	connect := fs.String("connect", "", "join a running server as a spectator: unix:PATH or tcp:HOST:PORT")
	token := fs.String("token", "", "the spectators' token, when the server has a tokens file")
	width := fs.Int("width", 1280, "window width in pixels")
	height := fs.Int("height", 800, "window height in pixels")
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
		live, err := render.Connect(ctx, *connect, *token)
		if err != nil {
			return fmt.Errorf("view: %w", err)
		}
		defer live.Close()
		src, title = live, fmt.Sprintf("arena view: %s on %s", live.Welcome.Scenario, *connect)
	case *connect == "" && len(files) == 1:
		return viewReplay(ctx, files[0], *width, *height)
	default:
		return errors.New("view: want one replay file (DIR/replay.jsonl) or --connect ADDRESS: one of the two")
	}
	return show(src, title, *width, *height)
}

// viewReplay opens the viewer on a replay file. A variable, so that tests of
// `arena run --view` need no display.
var viewReplay = func(ctx context.Context, path string, width, height int) error {
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
	return show(rs, fmt.Sprintf("arena view: %s seed %d (%s)", rep.Header.Scenario, rep.Header.Seed, path), width, height)
}

// show runs the viewer window on a source until it is closed.
func show(src render.Source, title string, width, height int) error {
	ebiten.SetWindowSize(width, height)
	ebiten.SetWindowTitle(title)
	ebiten.SetWindowResizingMode(ebiten.WindowResizingModeEnabled)
	g := render.NewGame(src)
	if err := ebiten.RunGame(g); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	return nil
}
