package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
)

// playLocal starts cfg's episode (foraging when no scenario is set) and
// connects a go-sdk client to it over in-memory transports.
func playLocal(t *testing.T, cfg Config, copt *gomcp.ClientOptions, version string) (*Local, *gomcp.ClientSession) {
	t.Helper()
	if cfg.Scenario == nil {
		sc, err := scenarios.Load("foraging")
		require.NoError(t, err)
		cfg.Scenario = sc
	}
	ctx, cancel := context.WithCancel(context.Background())
	l, err := Start(ctx, cfg)
	require.NoError(t, err)
	st, ct := gomcp.NewInMemoryTransports()
	ss, err := l.Server().Connect(ctx, st, nil)
	require.NoError(t, err)
	client := gomcp.NewClient(&gomcp.Implementation{Name: "test", Version: "0"}, copt)
	cs, err := client.Connect(ctx, ct, &gomcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		cancel()
		l.Wait()
	})
	return l, cs
}

func errorText(t *testing.T, res *gomcp.CallToolResult) string {
	t.Helper()
	require.True(t, res.IsError, "want a tool error")
	require.NotEmpty(t, res.Content)
	return res.Content[0].(*gomcp.TextContent).Text
}

// TestToolsAreTheAgentsTools: every tool of the agent, with the name,
// description and input schema of its registry (what `arena tools --format
// mcp` prints), plus observe; queries are read-only, actions declare their
// output.
func TestToolsAreTheAgentsTools(t *testing.T) {
	for _, name := range []string{"foraging", "role_game", "market"} {
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Load(name)
			require.NoError(t, err)
			w, err := sc.NewWorld(scenarios.Options{Seed: 1})
			require.NoError(t, err)
			reg, err := tools.ForWorld(w)
			require.NoError(t, err)
			_, cs := playLocal(t, Config{Scenario: sc}, nil, "")
			list, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			byName := map[string]*gomcp.Tool{}
			for _, tl := range list.Tools {
				byName[tl.Name] = tl
			}
			require.Len(t, byName, len(reg.Tools())+1)
			for _, want := range reg.Tools() {
				got := byName[want.Name]
				require.NotNil(t, got, want.Name)
				require.Equal(t, want.Description, got.Description)
				wantSchema, _ := json.Marshal(want.Parameters.Map())
				gotSchema, _ := json.Marshal(got.InputSchema)
				require.JSONEq(t, string(wantSchema), string(gotSchema), want.Name)
				require.Equal(t, want.Query, got.Annotations.ReadOnlyHint, want.Name)
				require.Equal(t, !want.Query, got.OutputSchema != nil, want.Name)
			}
			obs := byName[ObserveTool]
			require.NotNil(t, obs)
			require.True(t, obs.Annotations.ReadOnlyHint)
		})
	}
}

func TestProtocolVersions(t *testing.T) {
	for _, tc := range []struct{ ask, want string }{
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"", "2025-11-25"},           // the SDK's newest (sessionless) version falls back
		{"2024-11-05", "2025-11-25"}, // too old: the server answers with its newest
	} {
		_, cs := playLocal(t, Config{}, nil, tc.ask)
		require.Equal(t, tc.want, cs.InitializeResult().ProtocolVersion, "asked %q", tc.ask)
	}
}

// TestForagerPassesThroughMCP plays foraging seed 1 with a greedy forager
// that sees and acts through MCP alone; the built-in bot plays agent_002.
func TestForagerPassesThroughMCP(t *testing.T) {
	_, cs := playLocal(t, Config{Seed: 1}, nil, "")
	res := testutil.PlayForagerMCP(t, cs, 400)
	require.Equal(t, "completed", res.EndReason)
	require.Equal(t, "agent_001", res.Agents[0].ID)
	require.True(t, res.Agents[0].Passed, "the MCP forager must pass: %+v", res.Agents[0])
	require.Equal(t, 100.0, res.Agents[0].Score)
	require.True(t, res.Passed)

	// After the end: observe shows the results, anything else is refused.
	turn, r := testutil.CallMCP(t, cs, "observe", map[string]any{})
	require.False(t, r.IsError)
	require.NotNil(t, turn.Results)
	require.Equal(t, res.FinalStateHash, turn.Results.FinalStateHash)
	require.Contains(t, r.Content[0].(*gomcp.TextContent).Text, "The episode is over: completed")
	_, r = testutil.CallMCP(t, cs, "idle", map[string]any{})
	require.Contains(t, errorText(t, r), "EPISODE_OVER")
	_, r = testutil.CallMCP(t, cs, "query_inventory", map[string]any{})
	require.Contains(t, errorText(t, r), "EPISODE_OVER")
}

// TestBadArgumentsNeverBreakTheSession: arguments that do not fit the
// schema are refused at once with INVALID_PARAMS and cost no tick; an
// unknown tool is a protocol error; the session goes on.
func TestBadArgumentsNeverBreakTheSession(t *testing.T) {
	_, cs := playLocal(t, Config{}, nil, "")
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"move_to", []int{1, 2}, "INVALID_PARAMS: move_to: the arguments must be a JSON object"},
		{"move_to", map[string]any{"target": "north"}, "INVALID_PARAMS: move_to: param 'target' must be an array, got string"},
		{"collect", map[string]any{}, "INVALID_PARAMS: collect: param 'target_name' is required"},
		{"collect", map[string]any{"target_name": "Berry1", "force": true}, "INVALID_PARAMS: collect: "},
		{"collect", map[string]any{"target_name": 7}, "INVALID_PARAMS: collect: param 'target_name' must be a string"},
		{"query_world", map[string]any{"radius": "far"}, "INVALID_PARAMS: query_world: "},
		{"query_world", "radius", "INVALID_PARAMS: query_world: the arguments must be a JSON object"},
	} {
		_, r := testutil.CallMCP(t, cs, tc.tool, tc.args)
		require.Contains(t, errorText(t, r), tc.want, "%s %v", tc.tool, tc.args)
	}
	_, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: "teleport", Arguments: map[string]any{}})
	require.ErrorContains(t, err, "teleport")

	turn, r := testutil.CallMCP(t, cs, "observe", nil)
	require.False(t, r.IsError)
	require.Equal(t, 0, turn.Observation.Tick, "refused calls cost no tick")
	// The text gives positions as move_to takes them (the ground is x-z).
	require.Contains(t, r.Content[0].(*gomcp.TextContent).Text, "Berry11 berry at [-2, 0, -5] d=5.1")

	// A call the world refuses (beyond its schema) is an action: it takes
	// the tick, and its result says why, with the next observation.
	turn, r = testutil.CallMCP(t, cs, "move_to", map[string]any{})
	text := errorText(t, r)
	require.True(t, strings.HasPrefix(text, "move_to: INVALID_PARAMS: move_to: a target is required"), text)
	require.Equal(t, 1, turn.Observation.Tick)
	turn, r = testutil.CallMCP(t, cs, "collect", map[string]any{"target_name": "Berry1"})
	text = errorText(t, r)
	require.True(t, strings.HasPrefix(text, "collect: OUT_OF_RANGE: "), text)
	require.Equal(t, 2, turn.Observation.Tick)
	require.Contains(t, string(turn.Result), `"error_code":"OUT_OF_RANGE"`)

	turn, r = testutil.CallMCP(t, cs, "idle", nil)
	require.False(t, r.IsError)
	require.Equal(t, 3, turn.Observation.Tick)
	require.Equal(t, "idle", turn.Observation.LastActionResult.Tool)
	require.Equal(t, 2, turn.Observation.LastActionResult.Tick)
}

// TestQueriesAnswerAtOnce: a query does not advance the world, and the
// scenario's tool_call_limit bounds them per observation, as on the wire.
func TestQueriesAnswerAtOnce(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	_, cs := playLocal(t, Config{Scenario: sc}, nil, "")
	limit := sc.ToolCallLimit()
	for i := range limit {
		res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: "query_world", Arguments: map[string]any{"radius": 30, "filter_type": "resource"}})
		require.NoError(t, err)
		require.False(t, res.IsError, "query %d", i)
		require.Contains(t, res.Content[0].(*gomcp.TextContent).Text, "Berry1")
		var r struct {
			Success bool `json:"success"`
			Data    struct {
				QueryResult struct {
					Entities []any `json:"entities"`
				} `json:"query_result"`
			} `json:"data"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		require.NoError(t, json.Unmarshal(b, &r))
		require.True(t, r.Success)
		require.NotEmpty(t, r.Data.QueryResult.Entities)
	}
	_, r := testutil.CallMCP(t, cs, "query_inventory", nil)
	require.Contains(t, errorText(t, r), "LIMIT_EXCEEDED")
	turn, _ := testutil.CallMCP(t, cs, "observe", nil)
	require.Equal(t, 0, turn.Observation.Tick)
	// The next observation resets the count.
	testutil.CallMCP(t, cs, "idle", nil)
	_, r = testutil.CallMCP(t, cs, "query_inventory", nil)
	require.False(t, r.IsError)
}

// TestResources: arena://observation follows the agent's decision points,
// with notifications to subscribers; arena://results exists once the
// episode has ended.
func TestResources(t *testing.T) {
	updated := make(chan string, 64)
	copt := &gomcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *gomcp.ResourceUpdatedNotificationRequest) {
		updated <- r.Params.URI
	}}
	_, cs := playLocal(t, Config{Ticks: 3}, copt, "")
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list.Resources, 2)

	read := func(uri string) (map[string]any, error) {
		r, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: uri})
		if err != nil {
			return nil, err
		}
		require.Equal(t, "application/json", r.Contents[0].MIMEType)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.Contents[0].Text), &m))
		return m, nil
	}
	testutil.CallMCP(t, cs, "observe", nil) // the episode has started
	obs, err := read(ObservationURI)
	require.NoError(t, err)
	require.Equal(t, 0.0, obs["tick"])
	_, err = read(ResultsURI)
	require.ErrorContains(t, err, "no results yet")
	_, err = cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "arena://nothing"})
	require.Error(t, err)

	require.NoError(t, cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: ObservationURI}))
	require.NoError(t, cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: ResultsURI}))
	require.Error(t, cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: "arena://nothing"}))
	testutil.CallMCP(t, cs, "idle", nil)
	require.Equal(t, ObservationURI, waitFor(t, updated, ObservationURI))
	obs, err = read(ObservationURI)
	require.NoError(t, err)
	require.Equal(t, 1.0, obs["tick"])

	testutil.CallMCP(t, cs, "idle", nil)
	turn, _ := testutil.CallMCP(t, cs, "idle", nil)
	require.NotNil(t, turn.Results, "--ticks 3 ends the episode after the third action")
	waitFor(t, updated, ResultsURI)
	res, err := read(ResultsURI)
	require.NoError(t, err)
	require.Equal(t, "time_limit", res["end_reason"])
	require.Equal(t, 3.0, res["ticks"])
}

// waitFor waits for a notification about uri.
func waitFor(t *testing.T, ch <-chan string, uri string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-ch:
			if got == uri {
				return got
			}
		case <-timeout:
			t.Fatalf("no notification about %s", uri)
		}
	}
}

// TestUnknownSlot: a slot the scenario does not have is refused before the
// episode starts.
func TestUnknownSlot(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	_, err = Start(context.Background(), Config{Scenario: sc, Slot: "agent_009"})
	require.ErrorContains(t, err, `no agent slot "agent_009" (slots: agent_001, agent_002)`)
}

// TestDeath: the action during which the agent dies returns its last
// observation (alive: false). With nobody left to wait for, the bots may
// finish the episode at once: later calls are refused with DEAD or, once it
// has ended, EPISODE_OVER, and observe then shows the results. (The HTTP
// test of death keeps the world waiting for another agent.)
func TestDeath(t *testing.T) {
	// Six foragers take longer than the pit takes to kill.
	_, cs := playLocal(t, Config{Agents: 6}, nil, "")
	turn, _ := testutil.CallMCP(t, cs, "move_to", map[string]any{"target": []float64{4, 0, -3}}) // Pit1
	for i := 0; turn.Observation.Alive; i++ {
		require.Less(t, i, 1000, "the pit never killed the agent")
		require.Nil(t, turn.Results)
		turn, _ = testutil.CallMCP(t, cs, "idle", nil)
	}
	require.Equal(t, 158, turn.Observation.Tick, "the agent dies in tick 157")
	_, r := testutil.CallMCP(t, cs, "idle", nil)
	require.Regexp(t, `^(DEAD: agent_001 is dead|EPISODE_OVER)`, errorText(t, r))
	require.Eventually(t, func() bool {
		turn, _ = testutil.CallMCP(t, cs, "observe", nil)
		return turn.Results != nil
	}, 10*time.Second, 10*time.Millisecond, "the bots finish the episode")
	require.False(t, turn.Observation.Alive)
	require.Equal(t, 318, turn.Results.Ticks)
	require.False(t, turn.Results.Agents[0].Passed)
}
