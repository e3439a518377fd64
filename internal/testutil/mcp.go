package testutil

import (
	"context"
	"encoding/json"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// MCPObservation is the part of an observation, as MCP tools return it in
// structuredContent, that a forager reads.
type MCPObservation struct {
	Tick            int  `json:"tick"`
	Alive           bool `json:"alive"`
	NearbyResources []struct {
		Name     string    `json:"name"`
		Position []float64 `json:"position"`
		Distance float64   `json:"distance"`
	} `json:"nearby_resources"`
	LastActionResult *struct {
		Tool      string `json:"tool"`
		Success   bool   `json:"success"`
		ErrorCode string `json:"error_code"`
		Tick      int    `json:"tick"`
	} `json:"last_action_result"`
}

// MCPResults is the part of an episode's results that tests read.
type MCPResults struct {
	EndReason      string `json:"end_reason"`
	Ticks          int    `json:"ticks"`
	Passed         bool   `json:"passed"`
	FinalStateHash string `json:"final_state_hash"`
	Agents         []struct {
		ID     string  `json:"id"`
		Score  float64 `json:"score"`
		Passed bool    `json:"passed"`
	} `json:"agents"`
}

// MCPTurn is a call's structuredContent: the observation and, once the
// episode has ended, its results.
type MCPTurn struct {
	Result      json.RawMessage `json:"result"`
	Observation MCPObservation  `json:"observation"`
	Results     *MCPResults     `json:"results"`
}

// CallMCP calls a tool and decodes its structuredContent. It fails the test
// on a protocol error, never on a tool error (isError), which it returns.
func CallMCP(t testing.TB, cs *gomcp.ClientSession, tool string, args any) (*MCPTurn, *gomcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, "call %s", tool)
	turn := &MCPTurn{}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, turn))
	}
	return turn, res
}

// PlayForagerMCP plays a greedy forager through MCP tools alone, as the
// protocol's minimal client does: collect the nearest resource when it is
// within collection range (2 units), else walk to it; idle when none is in
// sight. It returns the episode's results once an action reports them, after
// at most maxCalls actions.
func PlayForagerMCP(t testing.TB, cs *gomcp.ClientSession, maxCalls int) *MCPResults {
	t.Helper()
	turn, _ := CallMCP(t, cs, "observe", map[string]any{})
	for range maxCalls {
		if turn.Results != nil {
			return turn.Results
		}
		obs := turn.Observation
		tool, args := "idle", map[string]any{}
		if res := obs.NearbyResources; len(res) > 0 {
			if res[0].Distance <= 2.0 {
				tool, args = "collect", map[string]any{"target_name": res[0].Name}
			} else {
				tool, args = "move_to", map[string]any{"target": res[0].Position}
			}
		}
		turn, _ = CallMCP(t, cs, tool, args)
		if turn.Results == nil {
			require.Greater(t, turn.Observation.Tick, obs.Tick, "%s must return the next decision point", tool)
		}
	}
	t.Fatalf("the episode did not end within %d actions", maxCalls)
	return nil
}
