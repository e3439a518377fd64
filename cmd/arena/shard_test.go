package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

// tree reads every file under dir, by relative path, leaving out the shard
// folders.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "shard-") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			b, err := os.ReadFile(path)
			files[rel] = b
			return err
		}
		return nil
	}))
	return files
}

// shardedEqualsUnsharded runs args unsharded into a folder, then again as
// shards into the same folder (emptied), merges them, and requires the same
// files with the same bytes.
func shardedEqualsUnsharded(t *testing.T, shards int, args ...string) map[string][]byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	args = append(args, "--out", dir, "--parallel", "1")
	_, _, err := arena(t, append([]string{"eval"}, args...)...)
	require.NoError(t, err)
	want := tree(t, dir)
	require.NoError(t, os.RemoveAll(dir))
	for k := range shards {
		_, _, err := arena(t, append([]string{"eval", "--shard", fmt.Sprintf("%d/%d", k, shards)}, args...)...)
		require.NoError(t, err)
	}
	require.NoFileExists(t, filepath.Join(dir, "report.json"), "a shard writes only into its own folder")
	_, _, err = arena(t, "eval", "merge", dir)
	require.NoError(t, err)
	got := tree(t, dir)
	require.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)))
	for name, b := range want {
		require.Equal(t, string(b), string(got[name]), name)
	}
	return got
}

func TestShardedThenMergedEqualsUnshardedForEveryScenario(t *testing.T) {
	for _, name := range scenarios.Builtin() {
		t.Run(name, func(t *testing.T) {
			// 4 episodes in 3 shards: shards of 2, 1 and 1 episodes.
			files := shardedEqualsUnsharded(t, 3, "--scenario", name, "--episodes", "4", "--ticks", "60", "--seed", "5")
			require.Contains(t, files, "report.json")
			require.Contains(t, files, "episodes.csv")
			require.Contains(t, files, "episodes.json")
			require.Contains(t, files, filepath.Join("plots", "score.png"))
			var rep struct {
				Episodes []struct {
					Episode int `json:"episode"`
				} `json:"episodes"`
			}
			require.NoError(t, json.Unmarshal(files["report.json"], &rep))
			require.Len(t, rep.Episodes, 4)
		})
	}
}

func TestShardedReplaysAndEmptyShardsMerge(t *testing.T) {
	// 2 episodes in 3 shards: the last shard has none. Replays, results and
	// component reports are copied from the shards.
	files := shardedEqualsUnsharded(t, 3, "--scenario", "market", "--episodes", "2", "--ticks", "30", "--replays")
	require.Contains(t, files, filepath.Join("episode-0002", replayFile))
	require.Contains(t, files, filepath.Join("episode-0001", resultsFile))
}

func TestShardedSweepMergesIntoTheSameSweep(t *testing.T) {
	file := scenarioWithVariables(t)
	files := shardedEqualsUnsharded(t, 2, "--scenario", file, "--episodes", "3", "--ticks", "40",
		"--vary", "rain=0,1", "--vary", "mood=calm,wild", "--replays")
	require.Contains(t, files, "sweep.json")
	require.Contains(t, files, "sweep.csv")
	require.Contains(t, files, filepath.Join("vary-rain=1,mood=wild", "episodes.csv"))
	require.Contains(t, files, filepath.Join("vary-rain=1,mood=wild", "episode-0003", replayFile))
}

func TestMergeRefusesShardsOfDifferentRunsAndNamesMissingOnes(t *testing.T) {
	dir := t.TempDir()
	shard := func(k, n int, extra ...string) string {
		args := append([]string{"eval", "--scenario", "foraging", "--episodes", "3", "--ticks", "20", "--plots=false",
			"--out", dir, "--shard", fmt.Sprintf("%d/%d", k, n)}, extra...)
		_, _, err := arena(t, args...)
		require.NoError(t, err)
		return filepath.Join(dir, shardFolder(k))
	}
	s0, s1 := shard(0, 3), shard(1, 3)

	_, _, err := arena(t, "eval", "merge", s0, s1)
	require.EqualError(t, err, "eval merge: missing 1 of 3 shards: 2")
	_, _, err = arena(t, "eval", "merge", dir)
	require.EqualError(t, err, "eval merge: missing 1 of 3 shards: 2")
	_, _, err = arena(t, "eval", "merge", s0, s0, s1)
	require.ErrorContains(t, err, "shard 0 is given twice")

	// An unfinished shard (no shard.json yet) is missing, and named.
	s2 := shard(2, 3)
	require.NoError(t, os.Remove(filepath.Join(s2, shardManifestFile)))
	_, _, err = arena(t, "eval", "merge", dir)
	require.ErrorContains(t, err, "missing 1 of 3 shards: 2 ("+s2+" is unfinished")

	other := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--seed", "2"}, "seed 1 ≠ 2"},
		{[]string{"--ticks", "21"}, "ticks 20 ≠ 21"},
		{[]string{"--scenario", "market"}, "scenario foraging ≠ market"},
	} {
		require.NoError(t, os.RemoveAll(other))
		args := append([]string{"eval", "--scenario", "foraging", "--episodes", "3", "--ticks", "20", "--plots=false",
			"--out", other, "--shard", "2/3"}, c.args...)
		_, _, err := arena(t, args...)
		require.NoError(t, err)
		_, _, err = arena(t, "eval", "merge", "--out", t.TempDir(), s0, s1, filepath.Join(other, shardFolder(2)))
		require.ErrorContains(t, err, "are shards of different runs", c.args)
		require.ErrorContains(t, err, c.want, c.args)
	}

	// Another build (or version) of arena.
	s2 = shard(2, 3)
	path := filepath.Join(s2, shardManifestFile)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	m["build"] = "0000"
	b, _ = json.Marshal(m)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	_, _, err = arena(t, "eval", "merge", dir)
	require.ErrorContains(t, err, "build ")

	// Another split of the same run.
	_, _, err = arena(t, "eval", "--scenario", "foraging", "--episodes", "3", "--ticks", "20", "--out", other, "--shard", "0/2")
	require.NoError(t, err)
	_, _, err = arena(t, "eval", "merge", "--out", t.TempDir(), s0, filepath.Join(other, shardFolder(0)))
	require.ErrorContains(t, err, "shards of different splits")

	_, _, err = arena(t, "eval", "merge", t.TempDir())
	require.ErrorContains(t, err, "is not a shard folder")
	_, _, err = arena(t, "eval", "--shard", "3/3")
	require.ErrorContains(t, err, "want K/N with 0 <= K < N")
}

func TestEvalShardComesFromTheScheduler(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	var sink strings.Builder
	cases := []struct {
		flag   string
		shards int
		getenv func(string) string
		want   string // "K/N", "0/0" for the whole run, or an error
	}{
		{"", 0, env(), "0/0"},
		{"1/4", 0, env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4"), "1/4"},
		{"", 0, env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0"), "3/4"},
		{"", 0, env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "1"), "3/4"},
		{"", 0, env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0"), "error: want K/N"},
		{"", 0, env("SLURM_ARRAY_TASK_ID", "2"), "error: SLURM_ARRAY_TASK_COUNT is not"},
		{"", 5, env("JOB_COMPLETION_INDEX", "4"), "4/5"},
		{"", 0, env("JOB_COMPLETION_INDEX", "4", "ARENA_SHARDS", "6"), "4/6"},
		{"", 0, env("JOB_COMPLETION_INDEX", "4"), "error: --shards N or ARENA_SHARDS"},
		{"", 0, env("JOB_COMPLETION_INDEX", "x", "ARENA_SHARDS", "6"), "error: want a whole number"},
		{"", 3, env(), "error: needs JOB_COMPLETION_INDEX"},
	}
	for _, c := range cases {
		s, err := evalShard(c.flag, c.shards, c.getenv, &sink)
		if msg, ok := strings.CutPrefix(c.want, "error: "); ok {
			require.ErrorContains(t, err, msg, c)
			continue
		}
		require.NoError(t, err, c)
		require.Equal(t, c.want, s.String(), c)
	}
}
