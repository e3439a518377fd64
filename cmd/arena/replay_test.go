package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/render"
	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

func TestEveryScenarioReplaysAndVerifies(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			_, _, err := arena(t, "run", "--scenario", name, "--seed", "3", "--out", dir, "--quiet")
			require.NoError(t, err)
			out, _, err := arena(t, "replay", filepath.Join(dir, replayFile), "--verify")
			require.NoError(t, err)
			require.Contains(t, out, "verified: the state hash matches at every one of")

			var res engine.Results
			b, err := os.ReadFile(filepath.Join(dir, resultsFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &res))
			require.Contains(t, out, "ticks recorded")
			require.Contains(t, out, strconv.Itoa(res.Ticks-1)+")", "every tick was checked")
		})
	}
}

// rewriteLine applies edit to the replay line of tick.
func rewriteLine(t *testing.T, path string, tick int, edit func(line map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[tick+1]), &line))
	require.Equal(t, float64(tick), line["tick"])
	edit(line)
	nb, err := json.Marshal(line)
	require.NoError(t, err)
	lines[tick+1] = string(nb)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

func TestATamperedReplayIsCaughtAtTheRightTick(t *testing.T) {
	dir := t.TempDir()
	_, _, err := arena(t, "run", "--scenario", "foraging", "--seed", "2", "--out", dir, "--quiet")
	require.NoError(t, err)
	path := filepath.Join(dir, replayFile)

	// Find a tick with a move_to and send the agent elsewhere.
	rep := readReplay(t, path)
	tampered := -1
	for _, rec := range rep.Ticks {
		for _, d := range rec.Decisions {
			if d.Tool == "move_to" && rec.Tick > 20 && tampered < 0 {
				tampered = rec.Tick
			}
		}
	}
	require.Positive(t, tampered)
	rewriteLine(t, path, tampered, func(line map[string]any) {
		for _, d := range line["decisions"].([]any) {
			if d := d.(map[string]any); d["tool"] == "move_to" {
				d["params"] = map[string]any{"target": []any{-20.0, 0.0, -20.0}}
				return
			}
		}
	})
	_, _, err = arena(t, "replay", path, "--verify", "--quiet")
	require.ErrorContains(t, err, "replay diverges at tick "+strconv.Itoa(tampered)+":")

	// Without --verify it still plays, and says nothing is wrong only when asked.
	_, _, err = arena(t, "replay", path, "--quiet")
	require.NoError(t, err)
}

func readReplay(t *testing.T, path string) *engine.Replay {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rep, err := engine.ReadReplay(f)
	require.NoError(t, err)
	return rep
}

// TestMain lets the test binary play a run that kills itself.
func TestMain(m *testing.M) {
	if dir := os.Getenv("ARENA_TEST_KILLED_RUN"); dir != "" {
		killedRun(dir)
		return
	}
	if args := os.Getenv("ARENA_TEST_MAIN"); args != "" {
		// The test binary runs as the arena command (see arenaProcess).
		os.Args = append([]string{"arena"}, strings.Split(args, "\n")...)
		main()
		return
	}
	os.Exit(m.Run())
}

// killedRun records foraging into dir and SIGKILLs its own process after
// writing tick 150: no deferred close, no flush beyond what each tick wrote.
func killedRun(dir string) {
	sc, err := scenarios.Load("foraging")
	if err != nil {
		panic(err)
	}
	rec := &folder{dir: dir, episodes: 1, sc: sc, replays: true}
	cfg := eval.Config{Scenario: sc, Seed: 5, Agents: 4, Recorder: rec}
	eval.Episode(context.Background(), cfg, 1, func(r *engine.TickRecord) {
		if r.Tick == 150 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	})
	panic("not killed")
}

func TestAKilledRunLeavesAReplayThatVerifiesToItsLastTick(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "ARENA_TEST_KILLED_RUN="+dir)
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())
	path := filepath.Join(dir, replayFile)
	_, err = os.Stat(filepath.Join(dir, resultsFile))
	require.True(t, os.IsNotExist(err), "a killed run has no results")

	rep := readReplay(t, path)
	require.True(t, rep.Truncated)
	require.Equal(t, 151, len(rep.Ticks), "ticks 0..150 were written when the process died in tick 150's callback")
	out, _, err := arena(t, "replay", path, "--verify", "--quiet")
	require.NoError(t, err)
	require.Contains(t, out, "cut short")
	require.Contains(t, out, "every one of 151 ticks (0 to 150)")

	// A half-written last line, as a crash in the middle of a write leaves.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"tick","tick":151,"decis`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	out, _, err = arena(t, "replay", path, "--verify", "--quiet")
	require.NoError(t, err)
	require.Contains(t, out, "every one of 151 ticks")

	// A broken line in the middle is not a crash: it is an error.
	rewriteBroken(t, path, 40)
	_, _, err = arena(t, "replay", path, "--verify", "--quiet")
	require.ErrorContains(t, err, "replay line 42")
}

func rewriteBroken(t *testing.T, path string, tick int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	f.Close()
	lines[tick+1] = lines[tick+1][:10]
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
}

func TestEvalWritesReportsAndPlots(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := arena(t, "eval", "--scenario", "foraging", "--episodes", "6", "--parallel", "2", "--ticks", "150", "--out", dir)
	require.NoError(t, err)
	require.Contains(t, errOut, "progress: episode")
	require.Contains(t, out, "foraging over 6 episodes")
	require.Contains(t, out, "resources_collected")
	for _, name := range []string{"report.json", "episodes.csv", "episodes.json", "plots/score.png", "plots/metric-resources_collected.png"} {
		st, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err, name)
		require.Positive(t, st.Size(), name)
	}
	b, err := os.ReadFile(filepath.Join(dir, "episodes.csv"))
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, rows, 7, "a header and a row per episode")
	require.True(t, strings.HasPrefix(rows[1], "1,5,") || strings.HasPrefix(rows[1], "1,1,"), rows[1])
	png, err := os.ReadFile(filepath.Join(dir, "plots/score.png"))
	require.NoError(t, err)
	require.Equal(t, "\x89PNG", string(png[:4]))
}

func TestRunWithSeveralEpisodes(t *testing.T) {
	dir := t.TempDir()
	out, _, err := arena(t, "run", "--scenario", "foraging", "--episodes", "3", "--ticks", "60", "--out", dir, "--quiet")
	require.NoError(t, err)
	require.Contains(t, out, "episode 3 (seed")
	var seeds []uint64
	for ep := 1; ep <= 3; ep++ {
		var res engine.Results
		b, err := os.ReadFile(filepath.Join(dir, "episode-000"+strconv.Itoa(ep), resultsFile))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &res))
		require.Equal(t, engine.EpisodeSeed(1, ep), res.Seed)
		seeds = append(seeds, res.Seed)
		_, _, err = arena(t, "replay", filepath.Join(dir, "episode-000"+strconv.Itoa(ep), replayFile), "--verify", "--quiet")
		require.NoError(t, err)
	}
	require.Equal(t, uint64(1), seeds[0], "the first episode uses the run's seed")
	require.NotEqual(t, seeds[1], seeds[2])
	_, err = os.Stat(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
}

func TestRunViewShowsTheRunAsItPlays(t *testing.T) {
	saved := showWindow
	defer func() { showWindow = saved }()
	var seen render.Model
	showWindow = func(_ context.Context, g *render.Game, title string, _, _ int) error {
		src := g.Src
		require.Contains(t, title, "foraging")
		// The window drives the run: pause at once, see the first tick, step
		// one, then play fast until the second episode shows; closing the
		// window lets the run finish on its own.
		require.NoError(t, src.Control("pause", 0))
		g.Layout(800, 600)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if g.Pump(); g.Model.Tick >= 1 {
				break
			}
		}
		require.Equal(t, 1, g.Model.Tick, "paused after the first tick")
		require.NotNil(t, g.Model.World)
		require.Equal(t, "local", g.Model.World.Mode)
		g.Step()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && g.Model.Tick < 2; time.Sleep(time.Millisecond) {
			g.Pump()
		}
		require.Equal(t, 2, g.Model.Tick)
		require.Len(t, g.Model.Decisions, len(g.Model.Agents), "every agent's last decision")
		require.NoError(t, src.Control("speed", 100))
		require.NoError(t, src.Control("resume", 0))
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && g.Model.Episode < 2; time.Sleep(time.Millisecond) {
			g.Pump()
		}
		seen = g.Model
		return nil
	}
	dir := t.TempDir()
	_, _, err := arena(t, "run", "--scenario", "foraging", "--ticks", "30", "--episodes", "2", "--out", dir, "--quiet", "--view")
	require.NoError(t, err)
	require.Equal(t, 2, seen.Episode, "the viewer saw the second episode start")
	for _, ep := range []string{"episode-0001", "episode-0002"} {
		rep := readReplay(t, filepath.Join(dir, ep, replayFile))
		require.False(t, rep.Truncated)
		require.Len(t, rep.Ticks, 30, "the run played to its end once the window closed")
	}
}

func TestRunViewWithoutAWindowStopsTheRun(t *testing.T) {
	saved := showWindow
	defer func() { showWindow = saved }()
	showWindow = func(context.Context, *render.Game, string, int, int) error {
		return errors.New("view: no window system is available")
	}
	dir := t.TempDir()
	_, _, err := arena(t, "run", "--scenario", "foraging", "--ticks", "100000", "--out", dir, "--quiet", "--view")
	require.ErrorContains(t, err, "no window system")
	// The run stopped instead of playing on unseen: it never started, or it
	// ended "stopped".
	b, err := os.ReadFile(filepath.Join(dir, resultsFile))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	require.NoError(t, err)
	var res engine.Results
	require.NoError(t, json.Unmarshal(b, &res))
	require.Equal(t, "stopped", res.EndReason)
	require.Less(t, res.Ticks, 100000)
}

// pumpUntil updates g until ok holds, or fails the test after 20 s.
func pumpUntil(t *testing.T, g *render.Game, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if g.Pump(); ok() {
			return
		}
	}
	t.Fatalf("the viewer never showed %s (source error: %v)", what, g.Src.Err())
}

func TestViewOpensReplaysAndLiveServers(t *testing.T) {
	saved := showWindow
	defer func() { showWindow = saved }()
	dir := t.TempDir()
	_, _, err := arena(t, "run", "--scenario", "crafting", "--ticks", "25", "--out", dir, "--quiet")
	require.NoError(t, err)

	// A replay: seekable, at its scenario's tick rate, every tick there.
	var title string
	showWindow = func(_ context.Context, g *render.Game, tt string, _, _ int) error {
		title = tt
		s, ok := g.Src.(render.Seeker)
		require.True(t, ok, "a replay can seek")
		require.Equal(t, 25, s.Ticks())
		g.Layout(800, 600)
		g.Seek(20)
		pumpUntil(t, g, "tick 20", func() bool { return g.Model.Tick == 20 })
		require.Equal(t, "replay", g.Model.World.Mode)
		return nil
	}
	_, _, err = arena(t, "view", filepath.Join(dir, replayFile))
	require.NoError(t, err)
	require.Contains(t, title, "crafting seed 1")

	// --at, --select and --show work in the window as in a screenshot.
	showWindow = func(_ context.Context, g *render.Game, _ string, _, _ int) error {
		g.Layout(800, 600)
		pumpUntil(t, g, "tick 7", func() bool { return g.Model.Tick == 7 })
		require.Equal(t, "agent_001", g.Model.Selected)
		require.Equal(t, render.PaneHistory, g.Pane)
		require.NotEmpty(t, g.Model.History["agent_001"])
		require.Nil(t, g.Model.Transcripts, "no transcripts beside a bots' replay")
		return nil
	}
	_, _, err = arena(t, "view", filepath.Join(dir, replayFile), "--at", "7", "--select", "agent_001", "--show", "history")
	require.NoError(t, err)
	_, _, err = arena(t, "view", filepath.Join(dir, replayFile), "--select", "agent_009")
	require.ErrorContains(t, err, `view: --select "agent_009": the replay has no such agent`)

	// A live server, joined as a spectator: clicking an agent brings its
	// observation.
	sock := "unix:" + filepath.Join(dir, "a.sock")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() {
		served <- run(ctx, []string{"serve", "--scenario", "foraging", "--agents", "2", "--bots", "2", "--mode", "realtime",
			"--tick-rate", "100", "--ticks", "100000", "--listen", sock, "--out", filepath.Join(dir, "served")}, io.Discard, io.Discard)
	}()
	showWindow = func(_ context.Context, g *render.Game, tt string, _, _ int) error {
		title = tt
		g.Layout(800, 600)
		pumpUntil(t, g, "the world", func() bool { return g.Model.World != nil && len(g.Model.Agents) == 2 })
		require.Equal(t, "realtime", g.Model.World.Mode)
		a := g.Model.Agents[0]
		g.Click(g.Camera.WorldToScreen(a.Position[0], a.Position[2]))
		require.Equal(t, a.ID, g.Model.Selected)
		pumpUntil(t, g, "the observation", func() bool { o, _ := g.Model.Observation(); return o != nil })
		require.Contains(t, strings.Join(g.Model.Inspector(), "\n"), "last observation (tick ")
		return nil
	}
	var viewErr error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, _, viewErr = arena(t, "view", "--connect", sock, "--token-file", filepath.Join(dir, "served", "spectator.token")); viewErr == nil || !strings.Contains(viewErr.Error(), "no such file") {
			break // the server is up (or failed another way)
		}
	}
	require.NoError(t, viewErr)
	require.Contains(t, title, "foraging on "+sock)
	// The token is the operator's: readable by them alone, and needed.
	st, err := os.Stat(filepath.Join(dir, "served", "spectator.token"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	_, _, err = arena(t, "view", "--connect", sock)
	require.ErrorContains(t, err, "UNAUTHORIZED")
	stop()
	require.NoError(t, <-served, "the server stops cleanly")
}
