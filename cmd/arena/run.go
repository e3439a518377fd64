package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/render"
	"github.com/arena-sim/arena/scenarios"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	scenario := fs.String("scenario", "foraging", "built-in scenario name or path to a scenario file")
	agents := fs.Int("agents", 0, "number of agents (default: the scenario's)")
	seed := fs.Uint64("seed", 1, "seed of the world and the built-in agents (episode k > 1 uses a seed derived from it)")
	ticks := fs.Int("ticks", 0, "end each episode after this many ticks, replacing the scenario's time limit")
	episodes := fs.Int("episodes", 1, "episodes to run one after the other")
	workers := fs.Int("workers", 0, "goroutines that build each tick's observations and plan paths (default: the number of CPUs); the world is the same for any number")
	out := fs.String("out", "", "output folder for results.json and replay.jsonl (default runs/SCENARIO-seedS)")
	quiet := fs.Bool("quiet", false, "print only the results table")
	view := fs.Bool("view", false, "show the run in the viewer as it plays, at the scenario's tick rate (needs a display)")
	agentKind := fs.String("agent", "builtin", "who plays every agent: builtin (the scenario's bot) or llm (a language model, see docs/llm.md)")
	var lf llmFlags
	lf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFlags(fs, 0, append([]string{"agents", "ticks", "episodes"}, llmPositive...)...); err != nil {
		return err
	}
	sc, err := loadScenario(ctx, "run", *scenario)
	if err != nil {
		return err
	}
	if err := checkWorld(sc, scenarios.Options{Seed: *seed, Agents: *agents, Ticks: *ticks}); err != nil {
		return err
	}
	dir := outDir(*out, sc, *seed)
	rec := &folder{dir: dir, episodes: *episodes, sc: sc, replays: true}
	cfg := eval.Config{Scenario: sc, Seed: *seed, Agents: *agents, Ticks: *ticks, Episodes: *episodes, Workers: *workers, Recorder: rec}
	who := sc.Agents.Bot
	if *agentKind == "llm" {
		cfg.Controllers = lf.controllers(dir)
		who = "llm"
		if _, err := lf.client("run"); err != nil {
			return err
		}
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		lf.abort = stop
	}
	maxTicks := sc.TimeLimit()
	if *ticks > 0 {
		maxTicks = *ticks
	}
	runAll := func(ctx context.Context) error {
		var all []*engine.Results
		for ep := 1; ep <= *episodes && ctx.Err() == nil; ep++ {
			prog := newProgress(stderr, maxTicks, *quiet)
			if *agentKind == "llm" {
				prog.extra = lf.progress
			}
			if !*quiet {
				fmt.Fprintf(stderr, "arena: %s, episode %d/%d, seed %d, %s agents, up to %d ticks simulated\n",
					sc.Name, ep, *episodes, engine.EpisodeSeed(*seed, ep), who, maxTicks)
			}
			start := time.Now()
			res, err := eval.Episode(ctx, cfg, ep, func(rec *engine.TickRecord) { prog.update(rec.Tick + 1) })
			elapsed := time.Since(start)
			prog.done()
			if ferr := fatal(ctx); ferr != nil {
				return ferr // the model server failed for good: say so, once
			}
			if err != nil {
				return err
			}
			all = append(all, res)
			if *episodes > 1 {
				fmt.Fprintf(stdout, "episode %d (seed %d):\n", ep, res.Seed)
			}
			printResults(stdout, res)
			if !*quiet {
				epDir := rec.episodeDir(ep)
				fmt.Fprintf(stdout, "\nended: %s after %d ticks (%.1f s simulated) in %s wall time, %.0f ticks/s\n",
					res.EndReason, res.Ticks, float64(res.Ticks)/res.TickRate, elapsed.Round(time.Millisecond), float64(res.Ticks)/elapsed.Seconds())
				fmt.Fprintf(stdout, "final state hash: %s\nresults: %s\nreplay: %s\n\n", res.FinalStateHash,
					filepath.Join(epDir, resultsFile), filepath.Join(epDir, replayFile))
			}
		}
		if *episodes > 1 {
			rep := eval.NewReport(sc.Name, *seed, all)
			if err := writeReport(dir, rep); err != nil {
				return err
			}
			printReport(stdout, rep)
		}
		return nil
	}
	if !*view {
		return runAll(ctx)
	}
	// With --view the window runs on this (the main) goroutine, as Ebiten
	// wants, and the episodes on another, paced by the viewer until it is
	// closed; then they run on at full speed.
	src := render.NewLocalSource()
	cfg.Watch = func(ctx context.Context, ep int, r *engine.Runner) { src.Watch(ctx, r, ep, "local") }
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	done := make(chan error, 1)
	go func() {
		err := runAll(runCtx)
		src.End(err)
		done <- err
	}()
	g := render.NewGame(src)
	if *agentKind == "llm" {
		// The agents' transcripts, read as they are written.
		g.Model.Transcripts = &render.Transcripts{Dir: filepath.Join(dir, "transcripts")}
	}
	err = showWindow(ctx, g, fmt.Sprintf("arena run: %s seed %d (%s)", sc.Name, *seed, dir), 1280, 800)
	if err != nil {
		stopRun() // no window (no display, say): stop rather than run on unseen
	}
	src.Close()
	if rerr := <-done; rerr != nil {
		return rerr
	}
	return err
}

// outDir is --out, or runs/SCENARIO-seedS.
func outDir(out string, sc *scenarios.Scenario, seed uint64) string {
	if out != "" {
		return out
	}
	return filepath.Join("runs", fmt.Sprintf("%s-seed%d", sc.Name, seed))
}

func printResults(w io.Writer, res *engine.Results) {
	metrics := res.Objective.MetricNames()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"agent", "team", "score", "passed"}
	header = append(header, metrics...)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, a := range res.Agents {
		team := a.Team
		if team == "" {
			team = "-"
		}
		row := []string{a.ID, team, fmt.Sprintf("%.2f", a.Score), yesNo(a.Passed)}
		for _, m := range metrics {
			row = append(row, fmt.Sprintf("%g", a.Metrics[m]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	for _, t := range res.Teams {
		fmt.Fprintf(w, "team %s: objective score %.2f, passed %s", t.Team, t.Score, yesNo(t.Passed))
		if t.GameScore != nil && t.Captures != nil {
			fmt.Fprintf(w, "; game score %d, %d captures", *t.GameScore, *t.Captures)
		}
		fmt.Fprintln(w)
	}
	switch {
	case res.Winner != "":
		fmt.Fprintf(w, "team %s won\n", res.Winner)
	case res.Outcome == "draw":
		fmt.Fprintln(w, "the game was a draw")
	}
	fmt.Fprintf(w, "mean score %.2f; objective %s\n", res.MeanScore, map[bool]string{true: "PASSED by every agent", false: "not passed by every agent"}[res.Passed])
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// progress shows a bar on a terminal and plain lines (every 10%) otherwise.
type progress struct {
	w        io.Writer
	total    int
	tty      bool
	quiet    bool
	lastPct  int
	lastDraw time.Time
	unit     string        // what is counted ["tick"]
	extra    func() string // more to show after the count (model usage)
}

func newProgress(w io.Writer, total int, quiet bool) *progress {
	p := &progress{w: w, total: max(total, 1), quiet: quiet, lastPct: -1, unit: "tick"}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(tick int) {
	if p.quiet {
		return
	}
	pct := min(100, tick*100/p.total)
	if p.tty {
		if time.Since(p.lastDraw) < 50*time.Millisecond && pct < 100 {
			return
		}
		p.lastDraw = time.Now()
		const width = 40
		fill := pct * width / 100
		fmt.Fprintf(p.w, "\r[%s%s] %3d%%  %s %d/%d%s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), pct, p.unit, tick, p.total, p.more())
		return
	}
	if pct/10 != p.lastPct/10 {
		p.lastPct = pct
		fmt.Fprintf(p.w, "progress: %s %d/%d (%d%%)%s\n", p.unit, tick, p.total, pct, p.more())
	}
}

func (p *progress) more() string {
	if p.extra == nil {
		return ""
	}
	if s := p.extra(); s != "" {
		return "; " + s
	}
	return ""
}

func (p *progress) done() {
	if p.tty && !p.quiet {
		fmt.Fprintln(p.w)
	}
}
