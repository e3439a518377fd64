package testutil

import (
	"fmt"
	"testing"

	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// ComponentWorld is Config's world with n agents a1, a2, … (in rows of six,
// clear of its obstacles and hazards) and one component, and the world's tool
// registry: the fixture of component tests. edit, when set, changes the
// config before the world is built (variables, an objective, …).
func ComponentWorld(t testing.TB, n int, c world.Component, edit func(*world.Config)) (*world.World, *tools.Registry) {
	t.Helper()
	cfg := Config()
	cfg.Agents = nil
	for i := range n {
		cfg.Agents = append(cfg.Agents, world.AgentSpec{ID: fmt.Sprintf("a%d", i+1), X: float64(i%6)*2 - 6, Z: float64(i/6)*2 + 4})
	}
	cfg.Components = []world.Component{c}
	if edit != nil {
		edit(&cfg)
	}
	w := World(t, cfg)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	return w, reg
}
