package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
)

// sweepPoint is one combination of a sweep's variable values.
type sweepPoint struct {
	names  []string // in the order the flags gave them
	values map[string]any
}

// label names the point: "a=1,b=x".
func (p sweepPoint) label() string {
	parts := make([]string, len(p.names))
	for i, n := range p.names {
		parts[i] = n + "=" + formatSweepValue(p.values[n])
	}
	return strings.Join(parts, ",")
}

// sweepPoints expands --vary NAME=A,B,C flags into the Cartesian product of
// their values, the first flag varying slowest. A value that reads as a
// number is a number, true/false a boolean, anything else text.
func sweepPoints(flags []string) ([]sweepPoint, error) {
	points := []sweepPoint{{values: map[string]any{}}}
	seen := map[string]bool{}
	for _, f := range flags {
		name, list, ok := strings.Cut(f, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || list == "" {
			return nil, fmt.Errorf("eval: --vary %q: want NAME=A,B,C", f)
		}
		if seen[name] {
			return nil, fmt.Errorf("eval: --vary names %q twice", name)
		}
		seen[name] = true
		var values []any
		for _, v := range strings.Split(list, ",") {
			values = append(values, parseSweepValue(strings.TrimSpace(v)))
		}
		var next []sweepPoint
		for _, p := range points {
			for _, v := range values {
				q := sweepPoint{names: append(slices.Clone(p.names), name), values: maps.Clone(p.values)}
				q.values[name] = v
				next = append(next, q)
			}
		}
		points = next
	}
	return points, nil
}

// checkVary checks that the scenario has every variable a sweep varies.
func checkVary(sc *scenarios.Scenario, names []string) error {
	known := slices.Sorted(maps.Keys(sc.Variables))
	for _, n := range names {
		if slices.Contains(known, n) {
			continue
		}
		if len(known) == 0 {
			return fmt.Errorf("eval: --vary %s: scenario %s has no variables to vary (docs/scenarios.md)", n, sc.Name)
		}
		return fmt.Errorf("eval: --vary: scenario %s has no variable %q%s; it has: %s", sc.Name, n, didYouMean(n, known, ""), strings.Join(known, ", "))
	}
	return nil
}

func parseSweepValue(s string) any {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	if b, err := strconv.ParseBool(s); err == nil && (s == "true" || s == "false") {
		return b
	}
	return s
}

func formatSweepValue(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// sweepRow is one point's outcome.
type sweepRow struct {
	Point     string           `json:"point"`
	Variables map[string]any   `json:"variables"`
	Dir       string           `json:"dir"`
	Episodes  int              `json:"episodes"`
	PassRate  float64          `json:"pass_rate"`
	Score     eval.Aggregate   `json:"score"`
	Metrics   []eval.Aggregate `json:"metrics"`
}

// sweep runs cfg's episodes once per point, each into DIR/vary-LABEL, and
// writes DIR/sweep.json and DIR/sweep.csv side by side.
func sweep(ctx context.Context, cfg eval.Config, points []sweepPoint, dir string, replays, quiet bool, stdout, stderr io.Writer) error {
	var rows []sweepRow
	for i, p := range points {
		pointDir := p.dir(dir)
		if err := os.MkdirAll(pointDir, 0o755); err != nil {
			return fmt.Errorf("create output folder: %w", err)
		}
		c := cfg
		c.Variables = p.values
		c.Recorder = nil
		if replays {
			c.Recorder = &folder{dir: pointDir, episodes: c.Episodes, sc: c.Scenario, replays: true}
		}
		bar := newProgress(stderr, len(c.Shard.Episodes(c.Episodes)), quiet)
		bar.unit = "episode"
		c.Progress = func(done, _ int) { bar.update(done) }
		if !quiet {
			fmt.Fprintf(stderr, "arena eval: %s, point %d/%d: %s\n", cfg.Scenario.Name, i+1, len(points), p.label())
		}
		rep, err := eval.Run(ctx, c)
		bar.done()
		if err != nil {
			return fmt.Errorf("eval %s: %w", p.label(), err)
		}
		if err := writeReport(pointDir, rep); err != nil {
			return err
		}
		rows = append(rows, newSweepRow(p, pointDir, rep))
	}
	return writeSweep(dir, points, rows, stdout)
}

// dir is the point's folder in a sweep's folder.
func (p sweepPoint) dir(sweepDir string) string {
	return filepath.Join(sweepDir, "vary-"+fileLabel(p.label()))
}

func newSweepRow(p sweepPoint, pointDir string, rep *eval.Report) sweepRow {
	return sweepRow{Point: p.label(), Variables: p.values, Dir: pointDir, Episodes: len(rep.Episodes),
		PassRate: rep.PassRate, Score: rep.Score, Metrics: rep.Metrics}
}

// writeSweep writes DIR/sweep.json and DIR/sweep.csv, a row per point, and
// prints the table.
func writeSweep(dir string, points []sweepPoint, rows []sweepRow, stdout io.Writer) error {
	js, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return fmt.Errorf("encode sweep: %w", err)
	}
	if err := engine.WriteFileAtomic(filepath.Join(dir, "sweep.json"), append(js, '\n')); err != nil {
		return err
	}
	var b strings.Builder
	cw := csv.NewWriter(&b)
	names := points[0].names
	var metrics []string
	for _, m := range rows[0].Metrics {
		metrics = append(metrics, m.Name)
	}
	header := append(slices.Clone(names), "episodes", "pass_rate", "score_mean", "score_stderr")
	for _, m := range metrics {
		header = append(header, m+"_mean", m+"_stderr")
	}
	cw.Write(header)
	for i, r := range rows {
		rec := []string{}
		for _, n := range names {
			rec = append(rec, formatSweepValue(points[i].values[n]))
		}
		rec = append(rec, strconv.Itoa(r.Episodes), num(r.PassRate), num(r.Score.Mean), num(r.Score.StdErr))
		byName := map[string]eval.Aggregate{}
		for _, m := range r.Metrics {
			byName[m.Name] = m
		}
		for _, m := range metrics {
			rec = append(rec, num(byName[m].Mean), num(byName[m].StdErr))
		}
		cw.Write(rec)
	}
	cw.Flush()
	if err := engine.WriteFileAtomic(filepath.Join(dir, "sweep.csv"), []byte(b.String())); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "point\tepisodes\tpassed\tscore\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.0f%%\t%s\t\n", r.Point, r.Episodes, r.PassRate*100, r.Score)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nsweep: %s, %s\n", filepath.Join(dir, "sweep.csv"), filepath.Join(dir, "sweep.json"))
	return nil
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// fileLabel keeps a label safe as a folder name.
func fileLabel(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r == 0 {
			return '_'
		}
		return r
	}, s)
}
