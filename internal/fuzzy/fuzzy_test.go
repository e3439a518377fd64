package fuzzy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDistance(t *testing.T) {
	cases := []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"move_to", "mvoe_to", 2}, {"same", "same", 0}}
	for _, c := range cases {
		require.Equal(t, c.d, Distance(c.a, c.b), "%q %q", c.a, c.b)
		require.Equal(t, c.d, Distance(c.b, c.a))
	}
}

func TestClosest(t *testing.T) {
	names := []string{"Berry1", "Berry2", "Stone1", "Workbench1"}
	require.Equal(t, "Berry1", Closest("bery1", names))
	require.Equal(t, "Workbench1", Closest("workbench", names))
	require.Equal(t, "", Closest("Dragon", names), "nothing plausible")
	require.Equal(t, "", Closest("x", nil))
}
