package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
)

// shardManifestFile marks a finished shard folder and says what it holds.
const shardManifestFile = "shard.json"

// shardFormat is the version of a shard folder's layout.
const shardFormat = 1

// shardManifest is DIR/shard.json. Everything but Shard and EpisodeList
// must be the same in every shard of a run.
type shardManifest struct {
	Format int `json:"format"`
	// Arena is the build's module version and revision; Build the SHA-256
	// of the executable: shards of different builds may simulate differently.
	Arena          string     `json:"arena"`
	Build          string     `json:"build"`
	Scenario       string     `json:"scenario"`
	ScenarioSHA256 string     `json:"scenario_sha256"`
	Seed           uint64     `json:"seed"`
	Episodes       int        `json:"episodes"`
	Agents         int        `json:"agents"`
	Ticks          int        `json:"ticks"`
	Vary           []string   `json:"vary,omitempty"`
	Replays        bool       `json:"replays"`
	Plots          bool       `json:"plots"`
	Shard          eval.Shard `json:"shard"`
	EpisodeList    []int      `json:"episode_list"`
}

// shardFolder is shard k's folder in the run's output folder.
func shardFolder(k int) string { return fmt.Sprintf("shard-%04d", k) }

// evalShard picks the shard to run: --shard K/N, else the batch scheduler's
// variables (eval.ShardFromEnv), else the whole run.
func evalShard(flagValue string, shards int, getenv func(string) string, stderr io.Writer) (eval.Shard, error) {
	if shards < 0 {
		return eval.Shard{}, errors.New("--shards must not be negative")
	}
	if flagValue != "" {
		return eval.ParseShard(flagValue)
	}
	s, source, err := eval.ShardFromEnv(getenv, shards)
	if err != nil {
		return eval.Shard{}, err
	}
	if source == "" {
		if shards > 0 {
			return eval.Shard{}, fmt.Errorf("--shards %d needs %s (a Kubernetes Indexed Job) to say which shard; else use --shard K/N", shards, eval.EnvK8sIndex)
		}
		return eval.Shard{}, nil
	}
	fmt.Fprintf(stderr, "arena eval: shard %s (from %s)\n", s, source)
	return s, nil
}

// buildIdentity names the running build: its module version and VCS
// revision when the build recorded them, and the SHA-256 of the executable.
func buildIdentity() (version, build string, err error) {
	bi := readBuildInfo()
	version = bi.Version + " vcs.revision=" + bi.Commit
	if bi.Modified {
		version += " vcs.modified=true"
	}
	exe, err := os.Executable()
	if err != nil {
		return "", "", fmt.Errorf("find the executable: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", "", fmt.Errorf("read the executable: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", fmt.Errorf("read the executable: %w", err)
	}
	return version, hex.EncodeToString(h.Sum(nil)), nil
}

// writeShardManifest writes dir/shard.json, last, once the shard's episodes
// are all written: a folder without it is an unfinished shard.
func writeShardManifest(dir string, cfg eval.Config, vary []string, replays, plots bool) error {
	version, build, err := buildIdentity()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(compactJSON(cfg.Scenario.Raw))
	m := shardManifest{Format: shardFormat, Arena: version, Build: build, Scenario: cfg.Scenario.Name,
		ScenarioSHA256: hex.EncodeToString(sum[:]), Seed: cfg.Seed, Episodes: cfg.Episodes, Agents: cfg.Agents,
		Ticks: cfg.Ticks, Vary: vary, Replays: replays, Plots: plots, Shard: cfg.Shard, EpisodeList: cfg.Shard.Episodes(cfg.Episodes)}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode shard manifest: %w", err)
	}
	return engine.WriteFileAtomic(filepath.Join(dir, shardManifestFile), append(b, '\n'))
}

// shardDir is one shard folder given to merge.
type shardDir struct {
	dir string
	m   shardManifest
}

// findShards reads the shard folders among args: each is a shard folder
// (it has shard.json) or a folder of shard-NNNN folders. A shard-NNNN
// folder without shard.json is an unfinished shard, counted as missing.
func findShards(args []string) (shards []shardDir, unfinished map[int]string, err error) {
	unfinished = map[int]string{}
	read := func(dir string) error {
		b, err := os.ReadFile(filepath.Join(dir, shardManifestFile))
		if err != nil {
			return err
		}
		var m shardManifest
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, shardManifestFile), err)
		}
		if m.Format != shardFormat {
			return fmt.Errorf("%s: shard format %d; this build reads format %d", dir, m.Format, shardFormat)
		}
		shards = append(shards, shardDir{dir: dir, m: m})
		return nil
	}
	for _, arg := range args {
		err := read(arg)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		subs, _ := filepath.Glob(filepath.Join(arg, "shard-*"))
		if len(subs) == 0 {
			return nil, nil, fmt.Errorf("%s is not a shard folder (no %s) and holds no shard-NNNN folders", arg, shardManifestFile)
		}
		for _, sub := range subs {
			if err := read(sub); errors.Is(err, fs.ErrNotExist) {
				if k, perr := strconv.Atoi(strings.TrimPrefix(filepath.Base(sub), "shard-")); perr == nil {
					unfinished[k] = sub
				}
			} else if err != nil {
				return nil, nil, err
			}
		}
	}
	return shards, unfinished, nil
}

// checkShards refuses shards of different runs, twice-given shards and
// missing ones, and returns the shards in index order.
func checkShards(shards []shardDir, unfinished map[int]string) ([]shardDir, error) {
	if len(shards) == 0 {
		return nil, errors.New("no finished shards to merge")
	}
	first := shards[0]
	run := func(m shardManifest) shardManifest { m.Shard, m.EpisodeList = eval.Shard{}, nil; return m }
	for _, s := range shards[1:] {
		if s.m.Shard.Count != first.m.Shard.Count {
			return nil, fmt.Errorf("%s is shard %s but %s is shard %s: shards of different splits", s.dir, s.m.Shard, first.dir, first.m.Shard)
		}
		if a, b := run(first.m), run(s.m); !reflect.DeepEqual(a, b) {
			return nil, fmt.Errorf("%s and %s are shards of different runs: %s", first.dir, s.dir, manifestDiff(a, b))
		}
	}
	n := first.m.Shard.Count
	byIndex := make([]*shardDir, n)
	for i := range shards {
		s := &shards[i]
		k := s.m.Shard.Index
		if k < 0 || k >= n {
			return nil, fmt.Errorf("%s: shard index %d out of 0..%d", s.dir, k, n-1)
		}
		if byIndex[k] != nil {
			return nil, fmt.Errorf("shard %d is given twice: %s and %s", k, byIndex[k].dir, s.dir)
		}
		if want := s.m.Shard.Episodes(s.m.Episodes); !slices.Equal(want, s.m.EpisodeList) {
			return nil, fmt.Errorf("%s: shard %s should hold episodes %v, its manifest lists %v", s.dir, s.m.Shard, want, s.m.EpisodeList)
		}
		byIndex[k] = s
	}
	var missing []string
	for k, s := range byIndex {
		if s == nil {
			note := strconv.Itoa(k)
			if dir, ok := unfinished[k]; ok {
				note += " (" + dir + " is unfinished: no " + shardManifestFile + ")"
			}
			missing = append(missing, note)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing %d of %d shards: %s", len(missing), n, strings.Join(missing, ", "))
	}
	out := make([]shardDir, n)
	for k, s := range byIndex {
		out[k] = *s
	}
	return out, nil
}

// manifestDiff names the fields in which two runs' manifests differ.
func manifestDiff(a, b shardManifest) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var diffs []string
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			name := strings.Split(va.Type().Field(i).Tag.Get("json"), ",")[0]
			diffs = append(diffs, fmt.Sprintf("%s %v ≠ %v", name, va.Field(i).Interface(), vb.Field(i).Interface()))
		}
	}
	return strings.Join(diffs, "; ")
}

// reportFiles are the files merge rebuilds rather than copies.
var reportFiles = map[string]bool{"report.json": true, "episodes.csv": true, "episodes.json": true, "sweep.json": true, "sweep.csv": true, shardManifestFile: true}

func cmdEvalMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval merge", stderr)
	out := fs.String("out", "", "output folder (default: the folder holding the shard folders, when they share one)")
	plots := fs.String("plots", "", "true or false: draw the plots (default: as the shards were run)")
	dirs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return errors.New("eval merge: give the shard folders (or the folder holding them)")
	}
	found, unfinished, err := findShards(dirs)
	if err != nil {
		return fmt.Errorf("eval merge: %w", err)
	}
	shards, err := checkShards(found, unfinished)
	if err != nil {
		return fmt.Errorf("eval merge: %w", err)
	}
	m := shards[0].m
	dir := *out
	if dir == "" {
		dir = filepath.Dir(shards[0].dir)
		for _, s := range shards {
			if filepath.Dir(s.dir) != dir {
				return errors.New("eval merge: the shard folders are in different folders: give --out")
			}
		}
	}
	draw := m.Plots
	if *plots != "" {
		if draw, err = strconv.ParseBool(*plots); err != nil {
			return fmt.Errorf("eval merge: --plots %q: want true or false", *plots)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("eval merge: create output folder: %w", err)
	}
	for _, s := range shards {
		if err := copyShardTree(s.dir, dir); err != nil {
			return fmt.Errorf("eval merge: %w", err)
		}
	}
	if len(m.Vary) == 0 {
		rep, err := mergePoint(shards, "", dir, m)
		if err != nil {
			return err
		}
		printReport(stdout, rep)
		fmt.Fprintf(stdout, "\nmerged %d shards, %d episodes\n", len(shards), len(rep.Episodes))
		return finishReport(dir, rep, draw, stdout)
	}
	points, err := sweepPoints(m.Vary)
	if err != nil {
		return err
	}
	var rows []sweepRow
	for _, p := range points {
		pointDir := p.dir(dir)
		rep, err := mergePoint(shards, filepath.Base(pointDir), pointDir, m)
		if err != nil {
			return err
		}
		rows = append(rows, newSweepRow(p, pointDir, rep))
	}
	fmt.Fprintf(stdout, "merged %d shards\n", len(shards))
	return writeSweep(dir, points, rows, stdout)
}

// mergePoint joins the shards' episodes of one point (sub, "" without a
// sweep) into the report in dir.
func mergePoint(shards []shardDir, sub, dir string, m shardManifest) (*eval.Report, error) {
	var raws []json.RawMessage
	var results []*engine.Results
	for _, s := range shards {
		path := filepath.Join(s.dir, sub, "episodes.json")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("eval merge: %w", err)
		}
		var eps []json.RawMessage
		if err := json.Unmarshal(b, &eps); err != nil {
			return nil, fmt.Errorf("eval merge: %s: %w", path, err)
		}
		var got []int
		for _, raw := range eps {
			var res engine.Results
			if err := json.Unmarshal(raw, &res); err != nil {
				return nil, fmt.Errorf("eval merge: %s: %w", path, err)
			}
			got = append(got, res.Episode)
			results = append(results, &res)
			raws = append(raws, raw)
		}
		if !slices.Equal(got, s.m.EpisodeList) && (len(got) > 0 || len(s.m.EpisodeList) > 0) {
			return nil, fmt.Errorf("eval merge: %s holds episodes %v; shard %s should hold %v", path, got, s.m.Shard, s.m.EpisodeList)
		}
	}
	var all bytes.Buffer
	all.WriteByte('[')
	for i, raw := range raws {
		if i > 0 {
			all.WriteByte(',')
		}
		if err := json.Compact(&all, raw); err != nil {
			return nil, fmt.Errorf("eval merge: %w", err)
		}
	}
	all.WriteByte(']')
	if len(raws) == 0 {
		all.Reset()
		all.WriteString("null")
	}
	rep := eval.NewReport(m.Scenario, m.Seed, results)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("eval merge: create output folder: %w", err)
	}
	return rep, writeReportFiles(dir, rep, all.Bytes())
}

// copyShardTree copies what a shard wrote besides its reports (episode
// folders with --replays) into dir, keeping relative paths.
func copyShardTree(shard, dir string) error {
	return filepath.WalkDir(shard, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(shard, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if reportFiles[d.Name()] && (filepath.Dir(rel) == "." || strings.HasPrefix(filepath.Dir(rel), "vary-") && !strings.Contains(filepath.Dir(rel), string(filepath.Separator))) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return engine.WriteFileAtomic(filepath.Join(dir, rel), b)
	})
}
