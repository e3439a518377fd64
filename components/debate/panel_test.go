package debate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// panel returns the debate's panel, checking that it changes nothing and
// keeps to the panel limits.
func (e *env) panel() world.Panel {
	e.t.Helper()
	p := testutil.Panel(e.t, e.w, e.d)
	require.Equal(e.t, "Debate", p.Title)
	return p
}

func TestPanelFollowsRoundsAndStages(t *testing.T) {
	e := newEnv(t, 4, threeDebaters)
	require.Equal(t, []string{
		"Round 1 of at most 2 · proposal · 10 ticks left",
		"Task: Design a rate limiter",
		"Judge a4 · fixed 2 rounds",
		"Debaters: a1 (architect) pending, a2 (security) pending",
		"  a3 (performance) pending",
	}, e.panel().Lines)

	e.ok("a1", "propose", map[string]any{"content": "A token bucket per client"})
	e.step()
	p := e.panel()
	require.Equal(t, "Round 1 of at most 2 · proposal · 9 ticks left", p.Lines[0])
	require.Equal(t, "Debaters: a1 (architect) done, a2 (security) pending", p.Lines[3])
	require.Equal(t, []string{"Last: a1 (architect), proposal, round 1:", "  A token bucket per client"}, p.Lines[5:])

	e.ok("a2", "propose", map[string]any{"content": "a2 proposes"})
	e.ok("a3", "propose", map[string]any{"content": "a3 proposes"})
	e.step()
	e.ok("a1", "critique", map[string]any{"target_agent_id": "a2", "content": "a2 forgets bursts"})
	e.ok("a3", "critique", map[string]any{"target_agent_id": "a1", "content": "a3 on a1"})
	e.ok("a3", "critique", map[string]any{"target_agent_id": "a2", "content": "a3 on a2"})
	p = e.panel()
	require.Equal(t, "Round 1 of at most 2 · critique · 10 ticks left", p.Lines[0])
	require.Equal(t, []string{"Debaters: a1 (architect) 1/2, a2 (security) 0/2", "  a3 (performance) done"}, p.Lines[3:5])
	require.Equal(t, []string{"Last: a3 (performance), critique of a2, round 1:", "  a3 on a2"}, p.Lines[5:])

	// Round 2 starts from the carried refinements: the last contribution
	// shown is a real one, not a copy.
	for _, c := range [][2]string{{"a1", "a3"}, {"a2", "a1"}, {"a2", "a3"}} {
		e.ok(c[0], "critique", map[string]any{"target_agent_id": c[1], "content": c[0] + " on " + c[1]})
	}
	e.step()
	for _, id := range []string{"a1", "a2", "a3"} {
		e.ok(id, "refine", map[string]any{"content": id + " refined once"})
	}
	e.step()
	p = e.panel()
	require.Equal(t, "Round 2 of at most 2 · critique · 10 ticks left", p.Lines[0])
	require.Equal(t, []string{"Last: a3 (performance), refinement, round 1:", "  a3 refined once"}, p.Lines[5:])
	e.playRound(2)
	require.Equal(t, PhaseSynthesis, e.phase())
	p = e.panel()
	require.Equal(t, "Judge a4 (to synthesise) · fixed 2 rounds", p.Lines[2])
	require.Equal(t, "Debaters: a1 (architect), a2 (security), a3 (performance)", p.Lines[3])
	e.ok("a4", "synthesize", map[string]any{"content": "Token bucket, distributed.", "confidence": 88})
	e.step()
	p = e.panel()
	require.Equal(t, "Done after round 2 of at most 2", p.Lines[0])
	require.Equal(t, []string{"Synthesis by a4, confidence 88:", "  Token bucket, distributed."}, p.Lines[4:])
}

func TestPanelConfidenceAndTimeouts(t *testing.T) {
	e := newEnv(t, 4, `{"rounds": 5, "phase_ticks": 2, "termination": {"type": "confidence", "threshold": 80}}`)
	require.Equal(t, "Judge a4 · no confidence yet, 80 ends", e.panel().Lines[2])
	e.ok("a1", "propose", map[string]any{"content": "only a1"})
	e.step()
	e.step() // a2 and a3 time out
	require.Equal(t, PhaseCritique, e.phase())
	p := e.panel()
	require.Equal(t, "Lost to timeouts: 2 contributions", p.Lines[5])
	require.Equal(t, "Debaters: a1 (architect) done, a2 (security) 0/1", p.Lines[3], "a1 has no one to critique")
	require.Equal(t, "  a3 (performance) 0/1", p.Lines[4])
	e.ok("a2", "critique", map[string]any{"target_agent_id": "a1", "content": "fine"})
	e.ok("a3", "critique", map[string]any{"target_agent_id": "a1", "content": "fine too"})
	e.step()
	require.Equal(t, PhaseRefinement, e.phase())
	p = e.panel()
	require.Equal(t, "Debaters: a1 (architect) pending, a2 (security) -", p.Lines[3], "a2 made no proposal to refine")
	e.ok("a1", "refine", map[string]any{"content": "better"})
	e.step()
	require.Equal(t, PhaseEvaluation, e.phase())
	require.Equal(t, "Judge a4 (to evaluate) · no confidence yet, 80 ends", e.panel().Lines[2])
	e.ok("a4", "evaluate", map[string]any{"confidence": 60})
	e.step()
	round, _ := e.d.Phase()
	require.Equal(t, 2, round)
	require.Equal(t, "Judge a4 · confidence 60, 80 ends", e.panel().Lines[2])
}

func TestPanelLimits(t *testing.T) {
	var agents []string
	for i := range 13 {
		agents = append(agents, fmt.Sprintf(`{"role": "a-rather-long-role-name-%d"}`, i))
	}
	e := newEnv(t, 14, `{"task": "`+strings.Repeat("A long task. ", 40)+`", "agents": [`+strings.Join(agents, ",")+`]}`)
	e.ok("a1", "propose", map[string]any{"content": strings.Repeat("line\n", 500)})
	p := e.panel()
	require.Len(t, p.Lines, 10)
	require.True(t, strings.HasSuffix(p.Lines[1], "…"))
	require.Equal(t, "  a5 (a-rather-long-role-name-4) pending, +8 more", p.Lines[7])
	require.Equal(t, "Last: a1 (a-rather-long-role-name-0), proposal, round 1:", p.Lines[8])
	require.Equal(t, "  "+strings.Repeat("line ", 11)+"li…", p.Lines[9], "one line, clipped")
}
