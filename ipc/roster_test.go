package ipc

import (
	"testing"

	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func TestRosterChange(t *testing.T) {
	abcd := []string{"a", "b", "c", "d"}
	for _, tc := range []struct {
		name     string
		from, to []string
		left     []string
		grew     bool
	}{
		{"the same slice", abcd, abcd, nil, false},
		{"an equal copy", abcd, []string{"a", "b", "c", "d"}, nil, false},
		{"two left", abcd, []string{"a", "d"}, []string{"b", "c"}, false},
		{"all left", abcd, []string{}, abcd, false},
		{"one joined", []string{"a", "c"}, []string{"a", "b", "c"}, nil, true},
		{"one left, one joined", []string{"a", "b"}, []string{"a", "c"}, []string{"b"}, true},
		{"from nothing known", nil, abcd, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			left, grew := RosterChange(tc.from, tc.to)
			require.Equal(t, tc.left, left)
			require.Equal(t, tc.grew, grew)
			if grew {
				return
			}
			// A client holding from, told left, holds to; so does one that
			// already took some of them off (a later roster).
			for _, held := range [][]string{tc.from, tc.to} {
				var r Roster
				r.Reset(held)
				obs := &world.Observation{}
				r.Observe(obs, left)
				require.Equal(t, tc.to, obs.AgentIDs)
				require.NotNil(t, obs.AgentIDs)
			}
		})
	}
}

func TestRosterObserve(t *testing.T) {
	var r Roster
	held := []string{"a", "b", "c"}
	r.Reset(held)
	o1 := &world.Observation{}
	r.Observe(o1, []string{"b"})
	require.Equal(t, []string{"a", "c"}, o1.AgentIDs)
	require.Equal(t, []string{"a", "b", "c"}, held, "the roster a welcome carried is not modified")
	o2 := &world.Observation{AgentIDs: []string{"c"}}
	r.Observe(o2, nil)
	require.Equal(t, []string{"c"}, r.IDs(), "agent_ids in an observation replace the roster")
	o3 := &world.Observation{}
	r.Observe(o3, nil)
	require.Equal(t, []string{"c"}, o3.AgentIDs)
	require.Equal(t, []string{"a", "c"}, o1.AgentIDs, "an earlier observation keeps its roster")
}
