package social_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/components/social"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// The social scenario played by its bots leaves per-round figures, top posts,
// the social graph and belief trajectories as tables, and plots of them.
func TestReportsOfThePlayedScenario(t *testing.T) {
	sc, err := scenarios.Load("social")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	ctrls := map[string]engine.Controller{}
	for _, a := range w.Agents() {
		ctrls[a.ID] = bots.NewSocial(bots.Info{AgentID: a.ID, Seed: 1})
	}
	res, err := (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit()}).Run(context.Background())
	require.NoError(t, err)
	s := w.Component("social").(*social.Social)
	tables := map[string]world.Table{}
	for _, tb := range s.Tables() {
		tables[tb.Name] = tb
		for _, row := range tb.Rows {
			require.Len(t, row, len(tb.Columns), tb.Name)
		}
	}
	require.Len(t, tables["rounds"].Rows, res.Ticks, "one row per round")
	require.NotEmpty(t, tables["top_posts"].Rows)
	require.LessOrEqual(t, len(tables["top_posts"].Rows), 20)
	top := tables["top_posts"].Rows
	for i := 1; i < len(top); i++ {
		require.GreaterOrEqual(t, top[i-1][8].(float64), top[i][8].(float64), "by engagement")
	}
	require.NotEmpty(t, tables["social_graph"].Rows)
	require.Len(t, tables["belief_trajectories"].Rows, (res.Ticks+1)*len(w.Agents()), "the start and every round, every agent")

	dir := t.TempDir()
	files, err := eval.WriteComponentReports(dir, w)
	require.NoError(t, err)
	for _, name := range []string{"rounds.csv", "top_posts.json", "social_graph.csv", "belief_trajectories.csv",
		"belief_distribution.png", "belief_positions.png", "activity.png"} {
		p := filepath.Join(dir, "social", name)
		require.Contains(t, files, p)
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
}

// A world where nothing happened still reports (and plots) without error.
func TestReportsOfAnIdleWorld(t *testing.T) {
	sc, err := scenarios.Load("social")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: 1})
	require.NoError(t, err)
	w.Step()
	_, err = eval.WriteComponentReports(t.TempDir(), w)
	require.NoError(t, err)
}
