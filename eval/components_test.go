package eval_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// ledger is a component that reports a table and two plots.
type ledger struct{}

func (ledger) Name() string                               { return "ledger" }
func (ledger) Attach(*world.World) error                  { return nil }
func (ledger) Tick(*world.World)                          {}
func (ledger) Observe(*world.World, string) world.Section { return nil }
func (ledger) Hash(*world.Hasher)                         {}
func (ledger) Tables() []world.Table {
	return []world.Table{{Name: "trades", Columns: []string{"round", "agent", "shares"}, Rows: [][]any{{1.0, "a1", 9.0909}, {2.0, "a2", 45.4545}}}}
}
func (ledger) Plots() []world.Plot {
	return []world.Plot{
		{Name: "prices", Title: "Prices", X: "round", Y: "price", Series: []world.Series{{Label: "rain", X: []float64{1, 2, 3}, Y: []float64{0.5, 0.55, 0.6}}}},
		{Name: "beliefs", Title: "Beliefs", X: "position", Y: "agents", Histogram: true, Series: []world.Series{{Label: "round 1", Y: []float64{-0.5, 0.1, 0.2, 0.9}}}},
	}
}

func TestComponentReportsAreWrittenAsCSVJSONAndPNG(t *testing.T) {
	cfg := testutil.Config()
	cfg.Components = []world.Component{ledger{}}
	w := testutil.World(t, cfg)
	dir := t.TempDir()
	files, err := eval.WriteComponentReports(dir, w)
	require.NoError(t, err)
	require.Len(t, files, 4)
	csv, err := os.ReadFile(filepath.Join(dir, "ledger", "trades.csv"))
	require.NoError(t, err)
	require.Equal(t, "round,agent,shares\n1,a1,9.0909\n2,a2,45.4545\n", string(csv))
	var rows []map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "ledger", "trades.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rows))
	require.Equal(t, "a2", rows[1]["agent"])
	for _, name := range []string{"prices.png", "beliefs.png"} {
		png, err := os.ReadFile(filepath.Join(dir, "ledger", name))
		require.NoError(t, err)
		require.Equal(t, "\x89PNG", string(png[:4]))
	}
}
