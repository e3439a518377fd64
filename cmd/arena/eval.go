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

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
)

func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	scenario := fs.String("scenario", "foraging", "built-in scenario name or path to a scenario file")
	episodes := fs.Int("episodes", 100, "episodes to run")
	seed := fs.Uint64("seed", 1, "the run's seed; episode k uses a seed derived from it (episode 1 uses it as is)")
	parallel := fs.Int("parallel", 0, "episodes run at once, each with its own world (default: the number of CPUs)")
	agents := fs.Int("agents", 0, "number of agents (default: the scenario's)")
	ticks := fs.Int("ticks", 0, "end each episode after this many ticks, replacing the scenario's time limit")
	out := fs.String("out", "", "output folder (default runs/eval-SCENARIO-seedS)")
	replays := fs.Bool("replays", false, "also write every episode's replay and results into DIR/episode-NNNN")
	plots := fs.Bool("plots", true, "draw PNG plots into DIR/plots")
	var vary listFlag
	fs.Var(&vary, "vary", "NAME=A,B,C: sweep a scenario variable over these values (repeatable: every combination runs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("eval: unexpected argument %q", fs.Arg(0))
	}
	if *episodes < 1 || *agents < 0 || *ticks < 0 || *parallel < 0 {
		return fmt.Errorf("eval: --episodes must be at least 1; --agents, --ticks and --parallel must not be negative")
	}
	sc, err := scenarios.LoadContext(ctx, *scenario)
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("eval-%s-seed%d", sc.Name, *seed))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output folder: %w", err)
	}
	cfg := eval.Config{Scenario: sc, Seed: *seed, Agents: *agents, Ticks: *ticks, Episodes: *episodes, Parallel: *parallel}
	if len(vary) > 0 {
		points, err := sweepPoints(vary)
		if err != nil {
			return err
		}
		return sweep(ctx, cfg, points, dir, *replays, stdout, stderr)
	}
	if *replays {
		cfg.Recorder = &folder{dir: dir, episodes: *episodes, sc: sc, replays: true}
	}
	bar := newProgress(stderr, *episodes, false)
	bar.unit = "episode"
	cfg.Progress = func(done, _ int) { bar.update(done) }
	fmt.Fprintf(stderr, "arena eval: %s, %d episodes from seed %d\n", sc.Name, *episodes, *seed)
	start := time.Now()
	rep, err := eval.Run(ctx, cfg)
	bar.done()
	if err != nil {
		if rep == nil || ctx.Err() == nil {
			return err
		}
		fmt.Fprintf(stderr, "arena eval: stopped after %d episodes\n", len(rep.Episodes))
	}
	elapsed := time.Since(start)
	if err := writeReport(dir, rep); err != nil {
		return err
	}
	printReport(stdout, rep)
	fmt.Fprintf(stdout, "\n%d episodes in %s (%.1f episodes/s)\nreport: %s\nepisodes: %s, %s\n", len(rep.Episodes),
		elapsed.Round(time.Millisecond), float64(len(rep.Episodes))/elapsed.Seconds(), filepath.Join(dir, "report.json"),
		filepath.Join(dir, "episodes.csv"), filepath.Join(dir, "episodes.json"))
	if *plots && len(rep.Episodes) > 0 {
		plotDir := filepath.Join(dir, "plots")
		if err := os.MkdirAll(plotDir, 0o755); err != nil {
			return fmt.Errorf("create plot folder: %w", err)
		}
		paths, err := rep.Plot(plotDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "plots: %s\n", strings.Join(paths, ", "))
	}
	return nil
}

// writeReport writes DIR/report.json (aggregates and a row per episode),
// DIR/episodes.csv (the rows) and DIR/episodes.json (every episode's full
// results), each atomically.
func writeReport(dir string, rep *eval.Report) error {
	var js, csv bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		return err
	}
	if err := rep.WriteCSV(&csv); err != nil {
		return err
	}
	full, err := json.MarshalIndent(rep.Results, "", "  ")
	if err != nil {
		return fmt.Errorf("encode episodes: %w", err)
	}
	for name, data := range map[string][]byte{"report.json": js.Bytes(), "episodes.csv": csv.Bytes(), "episodes.json": append(full, '\n')} {
		if err := engine.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return nil
}

// printReport prints every aggregate as mean ± standard error.
func printReport(w io.Writer, rep *eval.Report) {
	fmt.Fprintf(w, "%s over %d episodes: passed %.0f%%, score %s\n", rep.Scenario, len(rep.Episodes), rep.PassRate*100, rep.Score)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tmean\t± stderr\tmin\tmax\t")
	rows := append([]eval.Aggregate{rep.Score}, rep.Metrics...)
	for _, t := range rep.Teams {
		t.Name = "team " + t.Name
		rows = append(rows, t)
	}
	for _, a := range rows {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t\n", a.Name, a.Mean, a.StdErr, a.Min, a.Max)
	}
	tw.Flush()
}
