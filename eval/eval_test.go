package eval_test

import (
	"context"
	"math"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

func TestParallelResultsEqualSequentialOnes(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	cfg := eval.Config{Scenario: sc, Seed: 7, Episodes: 20, Ticks: 200}
	cfg.Parallel = 1
	seq, err := eval.Run(context.Background(), cfg)
	require.NoError(t, err)
	cfg.Parallel = 2
	par, err := eval.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, seq.Episodes, 20)
	require.Equal(t, seq, par)
	hashes := map[string]bool{}
	for i, e := range seq.Episodes {
		require.Equal(t, i+1, e.Episode)
		require.Equal(t, engine.EpisodeSeed(7, i+1), e.Seed)
		hashes[e.FinalStateHash] = true
	}
	require.Len(t, hashes, 20, "every episode is a different world")
}

func TestAggregates(t *testing.T) {
	cases := []struct {
		values               []float64
		mean, stderr, lo, hi float64
	}{
		{[]float64{}, 0, 0, 0, 0},
		{[]float64{4}, 4, 0, 4, 4},
		{[]float64{1, 2, 3, 4}, 2.5, math.Sqrt(5.0/3) / 2, 1, 4},
		{[]float64{10, 10, 10}, 10, 0, 10, 10},
	}
	for _, c := range cases {
		a := eval.Aggregated("m", c.values)
		require.Equal(t, len(c.values), a.N)
		require.InDelta(t, c.mean, a.Mean, 1e-12)
		require.InDelta(t, c.stderr, a.StdErr, 1e-12)
		require.Equal(t, c.lo, a.Min)
		require.Equal(t, c.hi, a.Max)
	}
	require.Equal(t, "2.50 ± 0.65", eval.Aggregated("m", []float64{1, 2, 3, 4}).String())
}

func TestReportRowsAreMeansOverAgents(t *testing.T) {
	res := &engine.Results{Seed: 3, Ticks: 10, EndReason: "completed", Passed: true, MeanScore: 50,
		Agents: []engine.AgentResult{
			{ID: "a", Metrics: map[string]float64{"health": 100, "resources_collected": 4}},
			{ID: "b", Metrics: map[string]float64{"health": 50, "resources_collected": 0}},
		},
		Teams: []engine.TeamResult{{Team: "red", Score: 40}},
	}
	rep := eval.NewReport("x", 3, []*engine.Results{res, res})
	require.Equal(t, 75.0, rep.Episodes[0].Metrics["health"])
	require.Equal(t, 2.0, rep.Episodes[1].Metrics["resources_collected"])
	require.Equal(t, 1.0, rep.PassRate)
	require.Equal(t, []string{"health", "resources_collected"}, rep.MetricNames())
	require.Equal(t, "red", rep.Teams[0].Name)
	require.Equal(t, 40.0, rep.Teams[0].Mean)
}

func TestCancelledEvalReportsWhatFinished(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := eval.Config{Scenario: sc, Seed: 1, Episodes: 50, Parallel: 1, Ticks: 50, Progress: func(done, _ int) {
		if done == 3 {
			cancel()
		}
	}}
	rep, err := eval.Run(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.GreaterOrEqual(t, len(rep.Episodes), 3)
	require.Less(t, len(rep.Episodes), 50)
}

func TestShardsPartitionTheEpisodesInOrder(t *testing.T) {
	for total := 1; total <= 12; total++ {
		for n := 1; n <= 14; n++ {
			var all []int
			sizes := map[int]bool{}
			for k := range n {
				eps := eval.Shard{Index: k, Count: n}.Episodes(total)
				sizes[len(eps)] = true
				all = append(all, eps...)
			}
			want := eval.Shard{}.Episodes(total)
			require.Equal(t, want, all, "%d episodes in %d shards", total, n)
			require.LessOrEqual(t, len(sizes), 2, "shards differ by one episode at most")
		}
	}
	s, err := eval.ParseShard("2/5")
	require.NoError(t, err)
	require.Equal(t, eval.Shard{Index: 2, Count: 5}, s)
	for _, bad := range []string{"5/5", "-1/3", "1", "a/b", "0/0"} {
		_, err := eval.ParseShard(bad)
		require.Error(t, err, bad)
	}
}

func TestShardedRunsEqualTheUnshardedRun(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	cfg := eval.Config{Scenario: sc, Seed: 3, Episodes: 5, Ticks: 60, Agents: 4}
	whole, err := eval.Run(context.Background(), cfg)
	require.NoError(t, err)
	var rows []eval.EpisodeRow
	for k := range 3 {
		cfg.Shard = eval.Shard{Index: k, Count: 3}
		part, err := eval.Run(context.Background(), cfg)
		require.NoError(t, err)
		rows = append(rows, part.Episodes...)
	}
	require.Equal(t, whole.Episodes, rows)
}

// Fixed (eval/report.go, NewReport): arena run and serve counted stopped
// episodes in their report (a pass rate of 0.5 with one stopped of two),
// while arena eval left them out. NewReport now leaves them out for all.
func TestStoppedEpisodesAreLeftOutOfReports(t *testing.T) {
	done := &engine.Results{Episode: 1, Seed: 3, Ticks: 10, EndReason: "completed", Passed: true, MeanScore: 50}
	stopped := &engine.Results{Episode: 2, Seed: 4, Ticks: 3, EndReason: "stopped", Outcome: "stopped", MeanScore: 0}
	rep := eval.NewReport("x", 3, []*engine.Results{done, stopped})
	require.Equal(t, 1.0, rep.PassRate)
	require.Len(t, rep.Episodes, 1)
	require.Equal(t, 1, rep.Episodes[0].Episode)
	require.Equal(t, 50.0, rep.Score.Mean)
	require.Equal(t, []*engine.Results{done}, rep.Results)

	rep = eval.NewReport("x", 3, []*engine.Results{stopped})
	require.Empty(t, rep.Episodes)
	require.Equal(t, 0.0, rep.PassRate)
	require.NotNil(t, rep.Results, "episodes.json holds [], not null")
}
