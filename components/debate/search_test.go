package debate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The reference's context-search-tool expectations (notes C4, C5).

func contrib(id, role, typ, content string) Contribution {
	return Contribution{AgentID: id, AgentRole: role, Type: typ, Content: content}
}

func TestContextSearchSchemaShape(t *testing.T) {
	s := ContextSearchSchema()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"object","properties":{"term":{"type":"string","description":"The search term to find in debate history"}},"required":["term"]}`, string(b))
	require.Equal(t, "context_search", ToolContextSearch)
	require.Equal(t, "Search for a term in the debate history. Returns relevant contributions containing the search term.", ContextSearchDescription)
	// The registered tool takes the same single required parameter.
	d, err := New(nil)
	require.NoError(t, err)
	for _, tl := range d.Tools() {
		if tl.Name == ToolContextSearch {
			require.True(t, tl.Query)
			require.Equal(t, []string{"term"}, tl.Parameters.Required)
			require.Equal(t, "string", tl.Parameters.Properties["term"].Type)
			return
		}
	}
	t.Fatal("no context_search tool")
}

func TestContextSearchMultipleMatchesAcrossRounds(t *testing.T) {
	ctx := &SearchContext{Rounds: []Round{
		{Number: 1, Contributions: []Contribution{
			contrib("agent-architect", "architect", "proposal", "I propose implementing a token bucket algorithm for rate limiting."),
			contrib("agent-security", "security", "proposal", "Authentication first."),
		}},
		{Number: 2, Contributions: []Contribution{
			contrib("agent-performance", "performance", "critique", "The rate limiting approach should consider distributed scenarios."),
			contrib("agent-architect", "architect", "refinement", "Use a distributed token bucket for Rate Limiting."),
		}},
	}}
	env := ContextSearch(ctx, map[string]any{"term": "rate limiting"})
	require.Equal(t, "success", env.Status)
	m := env.Result.Matches
	require.Len(t, m, 3)
	require.Equal(t, Match{1, "agent-architect", "architect", "proposal", "I propose implementing a token bucket algorithm for rate limiting."}, m[0])
	require.Equal(t, 2, m[1].RoundNumber)
	require.Equal(t, "agent-performance", m[1].AgentID)
	require.Equal(t, "critique", m[1].Type)
	require.Equal(t, "refinement", m[2].Type, "round order, then contribution order")
	require.JSONEq(t, `{"status":"success","result":{"matches":[
		{"roundNumber":1,"agentId":"agent-architect","agentRole":"architect","type":"proposal","contentSnippet":"I propose implementing a token bucket algorithm for rate limiting."},
		{"roundNumber":2,"agentId":"agent-performance","agentRole":"performance","type":"critique","contentSnippet":"The rate limiting approach should consider distributed scenarios."},
		{"roundNumber":2,"agentId":"agent-architect","agentRole":"architect","type":"refinement","contentSnippet":"Use a distributed token bucket for Rate Limiting."}]}}`, env.JSON())
}

func TestContextSearchCaseInsensitiveAndSubstring(t *testing.T) {
	ctx := &SearchContext{Rounds: []Round{{Number: 1, Contributions: []Contribution{
		contrib("a", "architect", "proposal", "Use CACHING at the edge"),
		contrib("b", "performance", "proposal", "precache hot keys"),
		contrib("c", "security", "proposal", "nothing relevant"),
	}}}}
	for _, term := range []string{"caching", "CACHING", "CaChInG"} {
		env := ContextSearch(ctx, map[string]any{"term": term})
		require.Len(t, env.Result.Matches, 1, term)
		require.Equal(t, "a", env.Result.Matches[0].AgentID)
	}
	env := ContextSearch(ctx, map[string]any{"term": "cach"})
	require.Len(t, env.Result.Matches, 2, "a substring matches inside words")
	require.Equal(t, "b", env.Result.Matches[1].AgentID)
}

func TestContextSearchEmptyResults(t *testing.T) {
	ctx := &SearchContext{Rounds: []Round{{Number: 1, Contributions: []Contribution{contrib("a", "architect", "proposal", "hello")}}}}
	env := ContextSearch(ctx, map[string]any{"term": "absent"})
	require.Equal(t, "success", env.Status)
	require.NotNil(t, env.Result.Matches)
	require.Empty(t, env.Result.Matches)
	require.JSONEq(t, `{"status":"success","result":{"matches":[]}}`, env.JSON())
	// An empty source gives matches: [] too.
	require.JSONEq(t, `{"status":"success","result":{"matches":[]}}`, ContextSearch(&SearchContext{}, map[string]any{"term": "x"}).JSON())
	require.Equal(t, []any{}, ContextSearch(&SearchContext{}, map[string]any{"term": "x"}).Map()["result"].(map[string]any)["matches"])
}

func TestContextSearchErrors(t *testing.T) {
	env := ContextSearch(nil, map[string]any{"term": "x"})
	require.Equal(t, "error", env.Status)
	require.Equal(t, "Context is required for context search", env.Error)
	require.Equal(t, `{"status":"error","result":"Context is required for context search"}`, env.JSON())
	ctx := &SearchContext{}
	for _, args := range []map[string]any{{}, {"term": ""}, {"term": 42.0}, {"term": nil}, {"term": []any{"x"}}, nil} {
		env := ContextSearch(ctx, args)
		require.Equal(t, "error", env.Status, "%v", args)
		require.Equal(t, "Search term is required and must be a string", env.Error, "%v", args)
		require.Nil(t, env.Result)
	}
}

func TestContextSearchSkipsRoundsWithoutContributionsAndFallsBackToHistory(t *testing.T) {
	ctx := &SearchContext{Rounds: []Round{
		{Number: 1},
		{Number: 2, Contributions: []Contribution{contrib("a", "architect", "proposal", "queue it")}},
		{Number: 3, Contributions: []Contribution{}},
	}}
	env := ContextSearch(ctx, map[string]any{"term": "queue"})
	require.Len(t, env.Result.Matches, 1)
	require.Equal(t, 2, env.Result.Matches[0].RoundNumber)

	// Rounds take precedence over history; history is used when there are none.
	hist := []Round{{Number: 7, Contributions: []Contribution{contrib("h", "kiss", "critique", "queue from history")}}}
	env = ContextSearch(&SearchContext{Rounds: ctx.Rounds, History: hist}, map[string]any{"term": "queue"})
	require.Len(t, env.Result.Matches, 1)
	require.Equal(t, "a", env.Result.Matches[0].AgentID)
	env = ContextSearch(&SearchContext{History: hist}, map[string]any{"term": "queue"})
	require.Len(t, env.Result.Matches, 1)
	require.Equal(t, 7, env.Result.Matches[0].RoundNumber)
	require.Equal(t, "h", env.Result.Matches[0].AgentID)
}

func TestContextSearchSnippetRule(t *testing.T) {
	long := "match " + strings.Repeat("x", 300)
	exact := "match " + strings.Repeat("y", 194)
	short := "match short"
	require.Len(t, exact, 200)
	ctx := &SearchContext{Rounds: []Round{{Number: 1, Contributions: []Contribution{
		contrib("a", "architect", "proposal", long),
		contrib("b", "security", "proposal", exact),
		contrib("c", "testing", "proposal", short),
	}}}}
	m := ContextSearch(ctx, map[string]any{"term": "match"}).Result.Matches
	require.Len(t, m, 3)
	require.Len(t, m[0].ContentSnippet, 203, "200 characters plus the ellipsis")
	require.Equal(t, long[:200]+"...", m[0].ContentSnippet)
	require.Equal(t, exact, m[1].ContentSnippet, "exactly 200 characters: no ellipsis")
	require.Len(t, m[1].ContentSnippet, 200)
	require.Equal(t, short, m[2].ContentSnippet)
	// The snippet is the content's start, not text around the hit.
	late := strings.Repeat("a", 250) + " needle"
	m = ContextSearch(&SearchContext{Rounds: []Round{{Number: 1, Contributions: []Contribution{contrib("a", "x", "proposal", late)}}}},
		map[string]any{"term": "NEEDLE"}).Result.Matches
	require.Len(t, m, 1)
	require.Equal(t, strings.Repeat("a", 200)+"...", m[0].ContentSnippet)
	// Characters, not bytes.
	uni := strings.Repeat("é", 201)
	require.Equal(t, strings.Repeat("é", 200)+"...", Snippet(uni))
	require.Equal(t, strings.Repeat("é", 200), Snippet(strings.Repeat("é", 200)))
}
