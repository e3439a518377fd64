package server

import (
	"fmt"
	"testing"

	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

// The connections a server allows by default leave room for every agent slot
// not played by a bot (a 5,000-agent lockstep run used to be refused past
// 4,096 connections and never start); an explicit limit below those slots is
// an error at once.
func TestMaxConnsCoversTheClientSlots(t *testing.T) {
	field := func(n int) *scenarios.Scenario {
		sc, err := scenarios.Parse("field.json", []byte(fmt.Sprintf(`{"name": "field", "size": [400, 400],
			"agents": {"count": %d, "max": %d}, "limits": {"max_ticks": 10}}`, n, n)))
		require.NoError(t, err)
		return sc
	}
	for _, c := range []struct {
		agents, bots, maxConns, maxUnauth int
		want                              int
		err                               string
	}{
		{agents: 10, want: DefaultMaxConns},
		{agents: 5000, want: 5000 + DefaultMaxUnauthenticated},
		{agents: 5000, bots: 2000, want: DefaultMaxConns},
		{agents: 5000, bots: 800, want: 4200 + DefaultMaxUnauthenticated},
		{agents: 10, maxConns: 10, want: 10},
		{agents: 10, bots: 4, maxConns: 6, want: 6},
		{agents: 10, bots: 4, maxConns: 5, err: "server: at most 5 connections (MaxConns) for 6 agent slots without a bot"},
		{agents: 5000, maxUnauth: 10, want: 5010},
	} {
		s, err := New(Options{Scenario: field(c.agents), Seed: 1, Agents: c.agents, Bots: c.bots, MaxConns: c.maxConns, MaxUnauthenticated: c.maxUnauth})
		if c.err != "" {
			require.EqualError(t, err, c.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, c.want, s.opt.MaxConns, "%d agents, %d bots, MaxConns %d", c.agents, c.bots, c.maxConns)
	}
}
