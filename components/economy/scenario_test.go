package economy_test

import (
	"strings"
	"testing"

	"github.com/arena-sim/arena/components/economy"
	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

func TestTheEconomyScenario(t *testing.T) {
	sc, err := scenarios.Load("economy")
	require.NoError(t, err)
	require.Equal(t, 6, sc.Agents.Count)
	require.Equal(t, 50, sc.Agents.Max)
	require.Equal(t, "economist", sc.Agents.Bot)
	require.NotEmpty(t, sc.Schedule)
	require.Contains(t, sc.Variables, "min_wage")
	for _, m := range sc.Objective.MetricNames() {
		require.Contains(t, economy.MetricNames(), m, "the objective uses the economy's metrics")
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	e := w.Component("economy").(*economy.Economy)
	roles := map[string]int{}
	for _, a := range w.Agents() {
		ac, ok := e.Actor(a.ID)
		require.True(t, ok)
		roles[ac.Role]++
	}
	require.Equal(t, map[string]int{"government": 1, "firm": 2, "worker": 3}, roles)

	// The validator knows the economy's metrics, and names them when one is
	// wrong; a bad config names its field.
	bad := strings.Replace(string(sc.Raw), `"economy.wealth"`, `"economy.riches"`, 1)
	_, err = scenarios.Parse("bad.json", []byte(bad))
	require.ErrorContains(t, err, "objective.success_metrics.economy.riches: unknown metric")
	require.ErrorContains(t, err, "economy.wealth")
	bad = strings.Replace(string(sc.Raw), `"spend_rate": 0.6`, `"spend_rate": 6`, 1)
	_, err = scenarios.Parse("bad.json", []byte(bad))
	require.ErrorContains(t, err, "components[0]")
	require.ErrorContains(t, err, "config.spend_rate: must be between 0 and 1, got 6")
}
