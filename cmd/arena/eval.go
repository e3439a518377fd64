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
	if len(args) > 0 && args[0] == "merge" {
		return cmdEvalMerge(args[1:], stdout, stderr)
	}
	fs := newFlags("eval", stderr)
	scenario := fs.String("scenario", "foraging", "built-in scenario name or path to a scenario file")
	episodes := fs.Int("episodes", 100, "episodes to run")
	seed := fs.Uint64("seed", 1, "the run's seed; episode k uses a seed derived from it (episode 1 uses it as is)")
	parallel := fs.Int("parallel", 0, "episodes run at once, each with its own world (default: the number of CPUs)")
	agents := fs.Int("agents", 0, "number of agents (default: the scenario's)")
	workers := fs.Int("workers", 0, "goroutines that build each episode's observations and plan paths (default: the number of CPUs divided by --parallel, at least 1); results are the same for any number")
	ticks := fs.Int("ticks", 0, "end each episode after this many ticks, replacing the scenario's time limit")
	out := fs.String("out", "", "output folder (default runs/eval-SCENARIO-seedS)")
	replays := fs.Bool("replays", false, "also write every episode's replay and results into DIR/episode-NNNN")
	plots := fs.Bool("plots", true, "draw PNG plots into DIR/plots")
	quiet := fs.Bool("quiet", false, "print only the report: no progress on standard error")
	var vary listFlag
	fs.Var(&vary, "vary", "NAME=A,B,C: sweep a scenario variable over these values (repeatable: every combination runs)")
	shardFlag := fs.String("shard", "", "K/N: run only shard K (0-based) of N of the episodes, into DIR/shard-KKKK; merge the shards with 'arena eval merge' (default: from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX and --shards)")
	shards := fs.Int("shards", 0, "the number of shards when the index comes from JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs; default $"+eval.EnvShards+")")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFlags(fs, 0, "episodes", "parallel", "agents", "ticks", "shards"); err != nil {
		return err
	}
	sc, err := loadScenario(ctx, "eval", *scenario)
	if err != nil {
		return err
	}
	var points []sweepPoint
	if len(vary) > 0 {
		if points, err = sweepPoints(vary); err != nil {
			return err
		}
		if err := checkVary(sc, points[0].names); err != nil {
			return err
		}
	}
	for _, p := range append(points, sweepPoint{}) {
		if err := checkWorld(sc, scenarios.Options{Seed: *seed, Agents: *agents, Ticks: *ticks, Variables: p.values}); err != nil {
			return err
		}
	}
	shard, err := evalShard(*shardFlag, *shards, os.Getenv, stderr)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("eval-%s-seed%d", sc.Name, *seed))
	}
	if shard.Sharded() {
		dir = filepath.Join(dir, shardFolder(shard.Index))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output folder: %w", err)
	}
	cfg := eval.Config{Scenario: sc, Seed: *seed, Agents: *agents, Ticks: *ticks, Episodes: *episodes, Shard: shard, Parallel: *parallel, Workers: *workers}
	if len(points) > 0 {
		err = sweep(ctx, cfg, points, dir, *replays, *quiet, stdout, stderr)
	} else {
		err = evalOnce(ctx, cfg, dir, *replays, *plots && !shard.Sharded(), *quiet, stdout, stderr)
	}
	if err != nil || !shard.Sharded() {
		return err
	}
	return writeShardManifest(dir, cfg, vary, *replays, *plots)
}

// evalOnce runs cfg's episodes (no sweep) into dir: the report files and,
// with plots, the plots.
func evalOnce(ctx context.Context, cfg eval.Config, dir string, replays, plots, quiet bool, stdout, stderr io.Writer) error {
	sc := cfg.Scenario
	if replays {
		cfg.Recorder = &folder{dir: dir, episodes: cfg.Episodes, sc: sc, replays: true}
	}
	total := len(cfg.Shard.Episodes(cfg.Episodes))
	bar := newProgress(stderr, total, quiet)
	bar.unit = "episode"
	cfg.Progress = func(done, _ int) { bar.update(done) }
	switch {
	case quiet:
	case cfg.Shard.Sharded():
		fmt.Fprintf(stderr, "arena eval: %s, shard %s: %d of %d episodes from seed %d\n", sc.Name, cfg.Shard, total, cfg.Episodes, cfg.Seed)
	default:
		fmt.Fprintf(stderr, "arena eval: %s, %d episodes from seed %d\n", sc.Name, cfg.Episodes, cfg.Seed)
	}
	start := time.Now()
	rep, err := eval.Run(ctx, cfg)
	bar.done()
	if err != nil {
		if rep == nil || ctx.Err() == nil || cfg.Shard.Sharded() {
			return err // an unfinished shard writes nothing a merge could take
		}
		fmt.Fprintf(stderr, "arena eval: stopped after %d episodes\n", len(rep.Episodes))
	}
	elapsed := time.Since(start)
	if err := writeReport(dir, rep); err != nil {
		return err
	}
	printReport(stdout, rep)
	fmt.Fprintf(stdout, "\n%d episodes in %s (%.1f episodes/s)\n", len(rep.Episodes),
		elapsed.Round(time.Millisecond), float64(len(rep.Episodes))/elapsed.Seconds())
	return finishReport(dir, rep, plots, stdout)
}

// finishReport names the report's files and draws its plots.
func finishReport(dir string, rep *eval.Report, plots bool, stdout io.Writer) error {
	fmt.Fprintf(stdout, "report: %s\nepisodes: %s, %s\n", filepath.Join(dir, "report.json"),
		filepath.Join(dir, "episodes.csv"), filepath.Join(dir, "episodes.json"))
	if plots && len(rep.Episodes) > 0 {
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
	full, err := json.Marshal(rep.Results)
	if err != nil {
		return fmt.Errorf("encode episodes: %w", err)
	}
	return writeReportFiles(dir, rep, full)
}

// writeReportFiles writes the report's files; episodes is the JSON array of
// the episodes' results, indented here.
func writeReportFiles(dir string, rep *eval.Report, episodes []byte) error {
	var js, csv, full bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		return err
	}
	if err := rep.WriteCSV(&csv); err != nil {
		return err
	}
	if err := json.Indent(&full, episodes, "", "  "); err != nil {
		return fmt.Errorf("encode episodes: %w", err)
	}
	full.WriteByte('\n')
	for name, data := range map[string][]byte{"report.json": js.Bytes(), "episodes.csv": csv.Bytes(), "episodes.json": full.Bytes()} {
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
