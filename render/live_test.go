package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/server"
)

func TestLiveSource(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Scenario: sc, Seed: 5, Agents: 2, Bots: 2, Ticks: 400, Mode: "realtime", TickRate: 50, SpectatorToken: "eye"})
	if err != nil {
		t.Fatal(err)
	}
	addr := "unix:" + filepath.Join(t.TempDir(), "arena.sock")
	l, err := ipc.Listen(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, l)

	src, err := Connect(ctx, addr, "eye")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	p := &poller{src: src}
	if src.Welcome.Scenario != "foraging" {
		t.Fatalf("welcome for %q", src.Welcome.Scenario)
	}
	var m Model
	first := p.until(t, "with agents", func(f ipc.Frame) bool { m.Apply(f); return len(f.Agents) == 2 })
	if len(m.Static) == 0 && countType(first.Entities, "resource") == 0 {
		t.Fatalf("first frame without entities: %+v", first)
	}
	if m.World == nil || m.World.Mode != "realtime" || m.World.TickRate != 50 || m.World.Scenario != "foraging" {
		t.Fatalf("world described as %+v", m.World)
	}
	id := m.Agents[1].ID
	if err := src.Inspect(id); err != nil {
		t.Fatal(err)
	}
	in := p.until(t, "with the observation", func(f ipc.Frame) bool { m.Apply(f); return f.Inspect != nil })
	m.Selected = id
	if obs, err := m.Observation(); err != nil || obs == nil || obs.AgentID != id || obs.Tick > in.Tick {
		t.Fatalf("inspected %+v: %v", obs, err)
	}
	if err := src.Control("pause", 0); err != nil {
		t.Fatal(err)
	}
	paused := p.until(t, "paused", func(f ipc.Frame) bool { return f.Paused })
	if err := src.Control("step", 1); err != nil {
		t.Fatal(err)
	}
	p.until(t, "one tick later", func(f ipc.Frame) bool { return f.Tick == paused.Tick+1 && f.Paused })
	if err := src.Control("resume", 0); err != nil {
		t.Fatal(err)
	}
	p.until(t, "playing", func(f ipc.Frame) bool { return !f.Paused && f.Tick > paused.Tick+1 })
}

// TestLiveSourceGone stops the server under a spectator: the source says it
// is gone, the HUD says so (not "playing"), and once a server listens there
// again Reconnect brings frames back.
func TestLiveSourceGone(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	if err != nil {
		t.Fatal(err)
	}
	addr := "unix:" + filepath.Join(t.TempDir(), "arena.sock")
	serve := func() context.CancelFunc {
		srv, err := server.New(server.Options{Scenario: sc, Seed: 5, Agents: 2, Bots: 2, Ticks: 400, Mode: "realtime", TickRate: 50, SpectatorToken: "eye"})
		if err != nil {
			t.Fatal(err)
		}
		l, err := ipc.Listen(context.Background(), addr)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go srv.Serve(ctx, l)
		return cancel
	}
	stop := serve()
	defer func() { stop() }()
	src, err := Connect(context.Background(), addr, "eye")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	g := NewGame(src)
	p := &poller{src: src}
	p.until(t, "with agents", func(f ipc.Frame) bool { return len(f.Agents) == 2 })
	if gone, _ := src.Gone(); gone {
		t.Fatal("gone while the server runs")
	}
	if err := src.Reconnect(context.Background()); err == nil {
		t.Fatal("reconnected while the session is open")
	}
	stop()
	deadline := time.Now().Add(10 * time.Second)
	for gone, _ := src.Gone(); !gone; gone, _ = src.Gone() {
		if time.Now().After(deadline) {
			t.Fatal("the source did not notice the server going")
		}
		time.Sleep(10 * time.Millisecond)
	}
	hud := strings.Join(g.HUD(), "\n")
	if !strings.Contains(hud, "server gone") || strings.Contains(hud, "playing") || !strings.Contains(hud, "r: reconnect") {
		t.Fatalf("HUD once the server has gone:\n%s", hud)
	}
	os.Remove(strings.TrimPrefix(addr, "unix:"))
	stop = serve()
	g.Reconnect()
	if gone, err := src.Gone(); gone {
		t.Fatalf("still gone after reconnecting: %v (%s)", err, g.status)
	}
	p.until(t, "frames again", func(f ipc.Frame) bool { return len(f.Agents) == 2 })
	if strings.Contains(strings.Join(g.HUD(), "\n"), "server gone") {
		t.Fatal("HUD says the server is gone after reconnecting")
	}
}
