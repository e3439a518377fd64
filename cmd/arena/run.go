package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	scenario := fs.String("scenario", "foraging", "built-in scenario name or path to a scenario file")
	agents := fs.Int("agents", 0, "number of agents (default: the scenario's)")
	seed := fs.Uint64("seed", 1, "seed of the world and the built-in agents")
	ticks := fs.Int("ticks", 0, "end the episode after this many ticks, replacing the scenario's time limit")
	out := fs.String("out", "", "output folder for results.json and journal.jsonl (default runs/SCENARIO-seedS)")
	quiet := fs.Bool("quiet", false, "print only the results table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected argument %q", fs.Arg(0))
	}
	if *agents < 0 || *ticks < 0 {
		return fmt.Errorf("run: --agents and --ticks must not be negative")
	}
	sc, err := scenarios.Load(*scenario)
	if err != nil {
		return err
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: *seed, Agents: *agents, Ticks: *ticks})
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("%s-seed%d", sc.Name, *seed))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output folder: %w", err)
	}
	ctrls, err := builtinControllers(sc, w, *seed)
	if err != nil {
		return err
	}
	j, journalPath, err := createJournal(dir, sc, w, *seed)
	if err != nil {
		return err
	}
	maxTicks := sc.TimeLimit()
	if *ticks > 0 {
		maxTicks = *ticks
	}
	prog := newProgress(stderr, maxTicks, *quiet)
	if !*quiet {
		fmt.Fprintf(stderr, "arena: %s, seed %d, %d agents (%s), up to %d ticks at %g ticks/s simulated\n",
			sc.Name, *seed, len(w.Agents()), sc.Agents.Bot, maxTicks, w.TickRate())
	}
	r := &engine.Runner{World: w, Controllers: ctrls, DecisionPeriod: sc.Limits.DecisionPeriod, MaxTicks: maxTicks, Journal: j, OnTick: prog.update}
	start := time.Now()
	res, runErr := r.Run(ctx)
	elapsed := time.Since(start)
	prog.done()
	resultsPath, err := finishRun(dir, j, res, runErr)
	if err != nil {
		return err
	}
	printResults(stdout, res)
	if !*quiet {
		fmt.Fprintf(stdout, "\nended: %s after %d ticks (%.1f s simulated) in %s wall time, %.0f ticks/s\n",
			res.EndReason, res.Ticks, float64(res.Ticks)/res.TickRate, elapsed.Round(time.Millisecond), float64(res.Ticks)/elapsed.Seconds())
		fmt.Fprintf(stdout, "final state hash: %s\nresults: %s\njournal: %s\n", res.FinalStateHash, resultsPath, journalPath)
	}
	return nil
}

// createJournal opens DIR/journal.jsonl with a header describing the world.
func createJournal(dir string, sc *scenarios.Scenario, w *world.World, seed uint64) (*engine.Journal, string, error) {
	ids := make([]string, 0, len(w.Agents()))
	for _, a := range w.Agents() {
		ids = append(ids, a.ID)
	}
	path := filepath.Join(dir, "journal.jsonl")
	j, err := engine.CreateJournal(path, engine.JournalHeader{
		Scenario: sc.Name, ScenarioFile: json.RawMessage(compactJSON(sc.Raw)), Seed: seed, Agents: ids,
		DecisionPeriod: sc.Limits.DecisionPeriod, TimeLimit: w.Objective().TimeLimit, InitialHash: world.FormatHash(w.StateHash()),
	})
	return j, path, err
}

// finishRun closes the journal and writes DIR/results.json, returning its path.
func finishRun(dir string, j *engine.Journal, res *engine.Results, runErr error) (string, error) {
	if err := j.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return "", runErr
	}
	path := filepath.Join(dir, "results.json")
	return path, res.WriteJSON(path)
}

// builtinControllers gives every agent of the world the scenario's built-in bot.
func builtinControllers(sc *scenarios.Scenario, w *world.World, seed uint64) (map[string]engine.Controller, error) {
	kind := sc.Agents.Bot
	if kind == "" {
		kind = "forager"
	}
	ctrls := map[string]engine.Controller{}
	for _, a := range w.Agents() {
		b, err := bots.New(kind, bots.Info{AgentID: a.ID, Seed: seed, Bounds: w.Bounds(), Rules: w.Rules()})
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		ctrls[a.ID] = b
	}
	return ctrls, nil
}

func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil
	}
	return b.Bytes()
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
		fmt.Fprintf(w, "team %s: score %.2f, passed %s\n", t.Team, t.Score, yesNo(t.Passed))
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
}

func newProgress(w io.Writer, total int, quiet bool) *progress {
	p := &progress{w: w, total: max(total, 1), quiet: quiet, lastPct: -1}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(tick int, _ []world.Event) {
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
		fmt.Fprintf(p.w, "\r[%s%s] %3d%%  tick %d/%d", strings.Repeat("#", fill), strings.Repeat(".", width-fill), pct, tick, p.total)
		return
	}
	if pct/10 != p.lastPct/10 {
		p.lastPct = pct
		fmt.Fprintf(p.w, "progress: tick %d/%d (%d%%)\n", tick, p.total, pct)
	}
}

func (p *progress) done() {
	if p.tty && !p.quiet {
		fmt.Fprintln(p.w)
	}
}
