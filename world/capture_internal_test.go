package world

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func internalCaptureWorld(t *testing.T) *World {
	t.Helper()
	w, err := New(Config{Name: "capture", Seed: 1, TickRate: 10, Bounds: Bounds{MinX: -20, MinZ: -20, MaxX: 20, MaxZ: 20},
		Points:  []CapturePointSpec{{Name: "P1", X: -10}, {Name: "P2", X: 10}},
		Agents:  []AgentSpec{{ID: "r1", Team: "red", Z: 15}, {ID: "b1", Team: "blue", Z: -15}, {ID: "g1", Team: "green", X: 15, Z: 15}},
		Capture: &CaptureRules{WinScore: 20}})
	require.NoError(t, err)
	return w
}

func TestTheHigherScoreWinsWhenTeamsReachTheWinScoreTogether(t *testing.T) {
	for _, tc := range []struct {
		scores []int
		winner string
	}{
		{[]int{25, 22, 0}, "red"},
		{[]int{21, 30, 19}, "blue"},
		{[]int{22, 25, 25}, ""},
		{[]int{19, 18, 0}, "(none)"},
	} {
		w := internalCaptureWorld(t)
		copy(w.capture.score, tc.scores)
		w.Step()
		over, winner := w.GameOver()
		if tc.winner == "(none)" {
			require.False(t, over, "%v", tc.scores)
			continue
		}
		require.True(t, over, "%v", tc.scores)
		require.Equal(t, tc.winner, winner, "%v", tc.scores)
	}
}

// TestEveryPartOfTheCaptureGameIsInTheStateHash changes each piece of capture
// state alone and checks that the hash sees it.
func TestEveryPartOfTheCaptureGameIsInTheStateHash(t *testing.T) {
	changes := map[string]func(w *World){
		"owner":          func(w *World) { w.points[0].Owner = "red" },
		"progress":       func(w *World) { w.points[1].Progress = 0.5 },
		"progress ticks": func(w *World) { w.points[1].ticks = 3 },
		"capturing":      func(w *World) { w.points[0].Capturing = "blue" },
		"contested":      func(w *World) { w.points[1].Contested = true },
		"team score":     func(w *World) { w.capture.score[2] = 1 },
		"team captures":  func(w *World) { w.capture.captures[1] = 1 },
		"agent captures": func(w *World) { w.capture.agentCaps[0] = 1 },
		"game over":      func(w *World) { w.capture.over = true },
		"winner":         func(w *World) { w.capture.winner = "blue" },
		"end tick":       func(w *World) { w.capture.endTick = 7 },
	}
	base := internalCaptureWorld(t).StateHash()
	seen := map[uint64]string{base: "unchanged"}
	for name, change := range changes {
		w := internalCaptureWorld(t)
		change(w)
		h := w.StateHash()
		prev, dup := seen[h]
		require.False(t, dup, "%s gives the same hash as %s", name, prev)
		seen[h] = name
	}
}
