package testutil

import (
	"testing"
	"unicode/utf8"

	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// Panel returns a component's panel for spectators, checking that taking it
// changes no state (the state hash and the scenario variables) and that it
// keeps to the panel limits.
func Panel(t testing.TB, w *world.World, c interface {
	world.Component
	world.Spectated
}) world.Panel {
	t.Helper()
	before, vars := w.StateHash(), w.Variables()
	p := c.Panel(w)
	require.Equal(t, before, w.StateHash(), "Panel changes no state")
	require.Equal(t, vars, w.Variables(), "Panel changes no variable")
	require.Equal(t, c.Name(), p.Name)
	CheckPanelLimits(t, p)
	return p
}

// CheckPanelLimits checks that a panel has at most world.PanelLines lines of
// at most world.PanelWidth characters.
func CheckPanelLimits(t testing.TB, p world.Panel) {
	t.Helper()
	require.LessOrEqual(t, len(p.Lines), world.PanelLines)
	for _, l := range p.Lines {
		require.LessOrEqual(t, utf8.RuneCountInString(l), world.PanelWidth, l)
	}
}
