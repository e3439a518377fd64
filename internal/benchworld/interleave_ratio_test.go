package benchworld

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInterleaveTurnRatiosBracketTheSpeedup: when every pair of turns runs
// the same share of each side's agent-steps (Ticks a multiple of Turn), the
// overall ratio is a mediant of the turns' ratios, so it lies between the
// smallest and the largest whatever the host's noise; a turn ratio that
// counts the wrong side's agents or ticks moves them all by the worlds'
// factor and leaves the overall ratio outside.
func TestInterleaveTurnRatiosBracketTheSpeedup(t *testing.T) {
	for _, tc := range []struct {
		name                string
		small, large        Options
		turn, againstTurn   int
		ticks, againstTicks int
	}{
		{"more agents", Options{Seed: 3, Agents: 10, Size: 32}, Options{Seed: 3, Agents: 160, Size: 32}, 4, 4, 16, 16},
		{"longer turns", Options{Seed: 3, Agents: 10, Size: 32}, Options{Seed: 3, Agents: 10, Size: 32}, 8, 1, 32, 4},
		{"both", Options{Seed: 3, Agents: 160, Size: 64}, Options{Seed: 3, Agents: 10, Size: 32}, 1, 6, 4, 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, first := range []bool{false, true} {
				res, err := Interleave(context.Background(), Twins{Options: tc.small, Ticks: tc.ticks, Turn: tc.turn,
					Workers: 1, Against: 1, AgainstOptions: &tc.large, AgainstTurn: tc.againstTurn, AgainstFirst: first})
				require.NoError(t, err)
				require.Equal(t, [2]int{tc.ticks, tc.againstTicks}, [2]int{res.Ticks, res.AgainstTicks})
				require.Equal(t, [2]int{tc.small.Agents, tc.large.Agents}, [2]int{res.Agents, res.AgainstAgents})
				require.Len(t, res.TurnSpeedups, tc.ticks/tc.turn)
				s := res.Speedup()
				require.LessOrEqual(t, slices.Min(res.TurnSpeedups), s*(1+1e-9), "first %v", first)
				require.GreaterOrEqual(t, slices.Max(res.TurnSpeedups), s*(1-1e-9), "first %v", first)
			}
		})
	}
}

// TestInterleaveRefusesAnEpisodeEndedEarly: two worlds whose episodes end
// before their ticks (4 foragers complete in 794 ticks on 32², 1,283 on
// 24²) cannot be compared turn by turn (the survivor runs the rest alone,
// in one turn), whichever side goes first.
func TestInterleaveRefusesAnEpisodeEndedEarly(t *testing.T) {
	small, other := Options{Seed: 1, Agents: 4, Size: 32}, Options{Seed: 1, Agents: 4, Size: 24}
	for _, first := range []bool{false, true} {
		_, err := Interleave(context.Background(), Twins{Options: small, Ticks: 1000, Turn: 32, Workers: 1, Against: 1,
			AgainstOptions: &other, AgainstFirst: first})
		require.Error(t, err, "first %v", first)
	}
}
