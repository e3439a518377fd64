package debate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

type env struct {
	t   *testing.T
	w   *world.World
	reg *tools.Registry
	d   *Debate
}

// newEnv builds a world of n agents (a1..an; an is the judge by default).
func newEnv(t *testing.T, n int, config string) *env {
	t.Helper()
	d, err := New([]byte(config))
	require.NoError(t, err)
	w, reg := testutil.ComponentWorld(t, n, d, nil)
	return &env{t: t, w: w, reg: reg, d: d}
}

func (e *env) do(agent, tool string, params map[string]any) world.ActionResult {
	e.t.Helper()
	return e.reg.Execute(e.w, agent, tool, params, false)
}

func (e *env) ok(agent, tool string, params map[string]any) world.ActionResult {
	e.t.Helper()
	res := e.do(agent, tool, params)
	require.True(e.t, res.Success, "%s %s %v: %+v", agent, tool, params, res)
	return res
}

func (e *env) fail(agent, tool string, params map[string]any, code string) world.ActionResult {
	e.t.Helper()
	res := e.do(agent, tool, params)
	require.False(e.t, res.Success, "%s %s %v", agent, tool, params)
	require.Equal(e.t, code, res.ErrorCode, res.ErrorMessage)
	return res
}

func (e *env) step() { e.w.Step() }

func (e *env) phase() string { _, p := e.d.Phase(); return p }

const threeDebaters = `{"task": "Design a rate limiter", "rounds": 2,
  "agents": [{"role": "architect", "tools": ["context_search"]}, {"role": "security", "tools": ["context_search"], "tool_call_limit": 2}, {"role": "performance"}]}`

// playRound makes every debater propose (round 1), critique and refine.
func (e *env) playRound(n int) {
	e.t.Helper()
	ids := []string{"a1", "a2", "a3"}
	if e.phase() == PhaseProposal {
		for _, id := range ids {
			e.ok(id, "propose", map[string]any{"content": fmt.Sprintf("%s proposes a token bucket, round %d", id, n)})
		}
		e.step()
	}
	require.Equal(e.t, PhaseCritique, e.phase())
	for _, id := range ids {
		for _, o := range ids {
			if o != id {
				e.ok(id, "critique", map[string]any{"target_agent_id": o, "content": fmt.Sprintf("%s critiques %s in round %d", id, o, n)})
			}
		}
	}
	e.step()
	require.Equal(e.t, PhaseRefinement, e.phase())
	for _, id := range ids {
		e.ok(id, "refine", map[string]any{"content": fmt.Sprintf("%s refined, round %d", id, n)})
	}
	e.step()
}

func TestDebateFlowFixedRounds(t *testing.T) {
	e := newEnv(t, 4, threeDebaters)
	round, phase := e.d.Phase()
	require.Equal(t, 1, round)
	require.Equal(t, PhaseProposal, phase)

	// Roles and the judge.
	obs := e.d.Observe(e.w, "a4")
	require.Equal(t, true, obs["is_judge"])
	require.Equal(t, RoleJudge, obs["role"])
	require.Equal(t, "security", e.d.Observe(e.w, "a2")["role"])

	// Wrong phase, wrong role.
	e.fail("a1", "critique", map[string]any{"target_agent_id": "a2", "content": "x"}, world.CodeNotAllowed)
	e.fail("a4", "propose", map[string]any{"content": "x"}, world.CodeNotAllowed)
	e.fail("a1", "synthesize", map[string]any{"content": "x", "confidence": 50}, world.CodeNotAllowed)
	// A phase waits for everyone.
	e.ok("a1", "propose", map[string]any{"content": "a1 first"})
	e.fail("a1", "propose", map[string]any{"content": "again"}, world.CodeNotAllowed)
	e.step()
	require.Equal(t, PhaseProposal, e.phase())
	e.ok("a2", "propose", map[string]any{"content": "a2 proposes"})
	e.ok("a3", "propose", map[string]any{"content": "a3 proposes"})
	e.step()
	require.Equal(t, PhaseCritique, e.phase())

	// Critique: every other debater, once; not yourself, not the judge.
	e.fail("a1", "critique", map[string]any{"target_agent_id": "a1", "content": "x"}, world.CodeNotAllowed)
	e.fail("a1", "critique", map[string]any{"target_agent_id": "a4", "content": "x"}, world.CodeNotFound)
	e.fail("a1", "critique", map[string]any{"target_agent_id": "zz", "content": "x"}, world.CodeNotFound)
	res := e.ok("a1", "critique", map[string]any{"target_agent_id": "a2", "content": "a2 forgets bursts"})
	require.Equal(t, []any{"a3"}, res.Data["still_to_critique"])
	e.fail("a1", "critique", map[string]any{"target_agent_id": "a2", "content": "again"}, world.CodeNotAllowed)
	require.Equal(t, []any{"a3"}, e.d.Observe(e.w, "a1")["owed"])
	for _, p := range [][2]string{{"a1", "a3"}, {"a2", "a1"}, {"a2", "a3"}, {"a3", "a1"}, {"a3", "a2"}} {
		e.ok(p[0], "critique", map[string]any{"target_agent_id": p[1], "content": p[0] + " on " + p[1]})
	}
	e.step()
	require.Equal(t, PhaseRefinement, e.phase())
	// Refinement shows the agent its proposal and the critiques of it.
	obs = e.d.Observe(e.w, "a2")
	var seen []string
	for _, c := range obs["contributions"].([]any) {
		m := c.(map[string]any)
		seen = append(seen, m["agent_id"].(string)+":"+m["type"].(string))
	}
	require.ElementsMatch(t, []string{"a2:proposal", "a1:critique", "a3:critique"}, seen)
	for _, id := range []string{"a1", "a2", "a3"} {
		e.ok(id, "refine", map[string]any{"content": id + " refined once"})
	}
	e.step()

	// Round 2: refinements carried forward as proposals; straight to critique.
	round, phase = e.d.Phase()
	require.Equal(t, 2, round)
	require.Equal(t, PhaseCritique, phase)
	r2 := e.d.Rounds()[1]
	require.Len(t, r2.Contributions, 3)
	for _, c := range r2.Contributions {
		require.Equal(t, TypeProposal, c.Type)
		require.True(t, c.Metadata.CarriedForward)
		require.Equal(t, c.AgentID+" refined once", c.Content)
		require.Zero(t, c.Metadata.ToolCallIterations)
	}
	e.playRound(2)

	// Fixed termination: synthesis after the last round.
	require.Equal(t, PhaseSynthesis, e.phase())
	m, _ := e.d.Metric(e.w, "a1", "debate.synthesized")
	require.Zero(t, m)
	e.fail("a4", "evaluate", map[string]any{"confidence": 50}, world.CodeNotAllowed)
	e.ok("a4", "synthesize", map[string]any{"content": "Token bucket, distributed.", "confidence": 88})
	e.step()
	require.Equal(t, PhaseDone, e.phase())
	for _, id := range []string{"a1", "a2", "a3", "a4"} {
		m, ok := e.d.Metric(e.w, id, "debate.synthesized")
		require.True(t, ok)
		require.Equal(t, 1.0, m)
	}
	m, _ = e.d.Metric(e.w, "a1", "debate.critiques")
	require.Equal(t, 4.0, m)
	m, _ = e.d.Metric(e.w, "a1", "debate.proposals")
	require.Equal(t, 2.0, m)
	m, _ = e.d.Metric(e.w, "a4", "debate.confidence")
	require.Equal(t, 88.0, m)
	e.fail("a4", "synthesize", map[string]any{"content": "again", "confidence": 1}, world.CodeNotAllowed)
	require.Contains(t, e.d.Observe(e.w, "a1")["text"], "The debate is over")
}

func TestDebateConfidenceTermination(t *testing.T) {
	e := newEnv(t, 4, `{"rounds": 5, "termination": {"type": "convergence", "threshold": 80}}`)
	e.playRound(1)
	require.Equal(t, PhaseEvaluation, e.phase())
	e.fail("a1", "evaluate", map[string]any{"confidence": 99}, world.CodeNotAllowed)
	e.ok("a4", "evaluate", map[string]any{"confidence": 60})
	e.step()
	round, phase := e.d.Phase()
	require.Equal(t, 2, round, "below the threshold: another round")
	require.Equal(t, PhaseCritique, phase)
	e.playRound(2)
	require.Equal(t, PhaseEvaluation, e.phase())
	e.ok("a4", "evaluate", map[string]any{"confidence": 80})
	e.step()
	round, phase = e.d.Phase()
	require.Equal(t, 2, round)
	require.Equal(t, PhaseSynthesis, phase, "at the threshold: synthesis")
	e.ok("a4", "synthesize", map[string]any{"content": "done", "confidence": 85})
	e.step()
	require.Equal(t, PhaseDone, e.phase())
	require.Len(t, e.d.Plots(), 1)
}

func TestDebatePhaseTimeout(t *testing.T) {
	e := newEnv(t, 3, `{"rounds": 1, "phase_ticks": 3}`)
	e.ok("a1", "propose", map[string]any{"content": "only a1"})
	for i := 0; i < 3; i++ {
		e.step()
	}
	require.Equal(t, PhaseCritique, e.phase(), "a2's proposal is dropped after 3 ticks")
	require.Empty(t, e.d.Observe(e.w, "a1")["owed"], "a2 has no proposal to critique")
	require.Equal(t, []any{"a1"}, e.d.Observe(e.w, "a2")["owed"])
}

func TestPerAgentToolsAndCallLimit(t *testing.T) {
	e := newEnv(t, 4, threeDebaters)
	// a3 has no tools: NOT_ALLOWED (and the judge neither).
	e.fail("a3", ToolContextSearch, map[string]any{"term": "x"}, world.CodeNotAllowed)
	e.fail("a4", ToolContextSearch, map[string]any{"term": "x"}, world.CodeNotAllowed)
	e.ok("a1", "propose", map[string]any{"content": "Rate limiting with a token bucket"})
	// The envelope, answered as a query mid-turn.
	res := e.reg.Execute(e.w, "a2", ToolContextSearch, map[string]any{"term": "RATE"}, true)
	require.True(t, res.Success, res.ErrorMessage)
	require.Equal(t, "success", res.Data["status"])
	ms := res.Data["result"].(map[string]any)["matches"].([]any)
	require.Len(t, ms, 1)
	require.Equal(t, map[string]any{"roundNumber": 1, "agentId": "a1", "agentRole": "architect", "type": "proposal",
		"contentSnippet": "Rate limiting with a token bucket"}, ms[0])
	require.Len(t, res.Data, 2, "the seed's envelope and nothing else")
	require.Equal(t, 1.0, e.d.Observe(e.w, "a2")["tool_calls_left"])
	// A failed call counts toward the limit of 2, a schema failure too.
	res = e.fail("a2", ToolContextSearch, map[string]any{"term": 42.0}, world.CodeInvalidParams)
	require.Equal(t, "Search term is required and must be a string", res.ErrorMessage)
	require.Equal(t, map[string]any{"status": "error", "result": "Search term is required and must be a string"}, res.Data)
	e.fail("a2", ToolContextSearch, map[string]any{"term": "x"}, world.CodeLimitExceeded)
	require.Equal(t, 0.0, e.d.Observe(e.w, "a2")["tool_calls_left"])
	// The calls and results go with a2's proposal.
	e.ok("a2", "propose", map[string]any{"content": "a2 proposal"})
	c := e.d.Rounds()[0].find("a2", TypeProposal, "")
	require.Equal(t, 2, c.Metadata.ToolCallIterations)
	require.Len(t, c.Metadata.ToolCalls, 2)
	require.Equal(t, `{"term":"RATE"}`, c.Metadata.ToolCalls[0].Arguments)
	require.Equal(t, `{"term":42}`, c.Metadata.ToolCalls[1].Arguments)
	require.Equal(t, "tool", c.Metadata.ToolResults[1].Role)
	require.Equal(t, `{"status":"success","result":{"matches":[{"roundNumber":1,"agentId":"a1","agentRole":"architect","type":"proposal","contentSnippet":"Rate limiting with a token bucket"}]}}`,
		c.Metadata.ToolResults[0].Content, "byte for byte the seed's output schema")
	require.Equal(t, `{"status":"error","result":"Search term is required and must be a string"}`, c.Metadata.ToolResults[1].Content)
	// A new phase: the count starts afresh.
	e.ok("a3", "propose", map[string]any{"content": "a3"})
	e.step()
	require.Equal(t, PhaseCritique, e.phase())
	e.ok("a2", ToolContextSearch, map[string]any{"term": "a3"})
	// The transcript keeps them.
	var tr Transcript
	require.NoError(t, json.Unmarshal(e.d.TranscriptJSON(), &tr))
	require.Len(t, tr.Rounds[0].Contributions[1].Metadata.ToolCalls, 2)
	require.Contains(t, string(e.d.TranscriptMarkdown()), "`context_search({\"term\":\"RATE\"})`")
	docs := e.d.Documents()
	require.Contains(t, docs, "transcript.json")
	require.Contains(t, docs, "transcript.md")
}

func TestConfigTools(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"agents": [{"role": "Architect", "tools": ["context_search", "file_read", "", {"name": "context_search", "description": "d", "parameters": {}}]}],
		"judge": {"tools": [{"name": "nope"}]}}`))
	require.NoError(t, err)
	require.Equal(t, []ToolRef{{Name: "context_search"}}, cfg.Agents[0].Tools, "unknown and empty names skipped, duplicates once")
	require.Empty(t, cfg.Judge.Tools)
	require.Equal(t, DefaultToolCallLimit, cfg.Agents[0].ToolCallLimit)
	require.Equal(t, "architect", cfg.Agents[0].Role)
	require.Equal(t, 3, cfg.Rounds)
	require.Equal(t, "fixed", cfg.Termination.Type)
	require.Equal(t, 90.0, cfg.Termination.Threshold)

	for _, bad := range []string{`{"rounds": 0}`, `{"termination": {"type": "vote"}}`, `{"bogus": 1}`, `{"agents": [{"role": "judge"}]}`,
		`{"agents": [{"tool_call_limit": -1}]}`, `{"phase_ticks": 0}`, `{"agents": [{"id": "a1"}, {"id": "a1"}]}`} {
		_, err := ParseConfig([]byte(bad))
		require.Error(t, err, bad)
	}
	// Ids name world agents.
	_, err = New([]byte(`{"judge": {"id": "a9"}}`))
	require.NoError(t, err)
	d, _ := New([]byte(`{"judge": {"id": "a9"}}`))
	require.ErrorContains(t, d.setup([]string{"a1", "a2"}), "config.judge.id")
	d, _ = New([]byte(`{"judge": {"id": "a1"}, "agents": [{"id": "a3", "role": "kiss"}, {"enabled": false}]}`))
	require.NoError(t, d.setup([]string{"a1", "a2", "a3", "a4"}))
	var got []string
	for _, p := range d.parts {
		got = append(got, p.id+"="+p.role)
	}
	require.Equal(t, []string{"a3=kiss", "a4=architect", "a1=judge"}, got, "a2 disabled, a4 gets the first default role")
}

func TestObservationIsJSONShaped(t *testing.T) {
	e := newEnv(t, 4, threeDebaters)
	e.ok("a1", "propose", map[string]any{"content": "p1"})
	for _, id := range []string{"a1", "a2", "a4"} {
		sec := e.d.Observe(e.w, id)
		b, err := json.Marshal(sec)
		require.NoError(t, err)
		var back map[string]any
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, len(sec), len(back))
		requireJSONShaped(t, map[string]any(sec))
		require.Contains(t, sec["text"], "Debate task: Design a rate limiter")
	}
	txt := e.d.Observe(e.w, "a2")["text"].(string)
	require.Contains(t, txt, "Now: propose(content)")
	require.Contains(t, txt, "context_search (2 calls left this phase)")
	require.True(t, strings.Contains(e.d.Observe(e.w, "a4")["text"].(string), "You are a4, the judge"))
	require.Equal(t, world.Section{"text": "You are not taking part in the debate.", "participant": false}, e.d.Observe(e.w, "zz"))
}

func requireJSONShaped(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil, string, bool, float64:
	case map[string]any:
		for _, e := range x {
			requireJSONShaped(t, e)
		}
	case []any:
		for _, e := range x {
			requireJSONShaped(t, e)
		}
	default:
		t.Fatalf("not JSON-shaped: %T %v", v, v)
	}
}

func TestHashFollowsState(t *testing.T) {
	e := newEnv(t, 3, `{}`)
	h1 := world.NewHasher()
	e.d.Hash(h1)
	e.ok("a1", "propose", map[string]any{"content": "x"})
	h2 := world.NewHasher()
	e.d.Hash(h2)
	require.NotEqual(t, h1.Sum64(), h2.Sum64())
}

// TestSeedAgentConfig: seed 003's agent entry, as written there, is
// accepted: camelCase toolCallLimit, model, provider, temperature, and the
// tool as a full function schema.
func TestSeedAgentConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"agents": [{
	  "id": "agent-architect", "name": "System Architect", "role": "architect",
	  "model": "gpt-4", "provider": "openai", "temperature": 0.5,
	  "tools": [{"name": "context_search", "description": "Search for a term in the debate history.",
	    "parameters": {"type": "object", "properties": {"term": {"type": "string", "description": "The search term"}}, "required": ["term"]}}],
	  "toolCallLimit": 3}],
	  "judge": {"toolCallLimit": 2}}`))
	require.NoError(t, err)
	a := cfg.Agents[0]
	require.Equal(t, 3, a.ToolCallLimit)
	require.Equal(t, []ToolRef{{Name: ToolContextSearch}}, a.Tools)
	require.Equal(t, "gpt-4", a.Model)
	require.Equal(t, "openai", a.Provider)
	require.Equal(t, 0.5, *a.Temperature)
	require.Equal(t, 2, cfg.Judge.ToolCallLimit)
	_, err = ParseConfig([]byte(`{"agents": [{"toolcalllimit2": 3}]}`))
	require.ErrorContains(t, err, "unknown field")
}
