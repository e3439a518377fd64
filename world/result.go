package world

import "fmt"

// Error codes of actions and queries, as listed in the wire protocol.
const (
	CodeOutOfRange       = "OUT_OF_RANGE"
	CodeNotFound         = "NOT_FOUND"
	CodeMissingMaterials = "MISSING_MATERIALS"
	CodeInvalidParams    = "INVALID_PARAMS"
	CodeBusy             = "BUSY"
	CodeUnknownTool      = "UNKNOWN_TOOL"
	CodeNotAllowed       = "NOT_ALLOWED"
	CodeNoPath           = "NO_PATH"
	CodeInventoryFull    = "INVENTORY_FULL"
	CodeLimitExceeded    = "LIMIT_EXCEEDED"
	CodeNotAQuery        = "NOT_A_QUERY"
	CodeTimeout          = "TIMEOUT"
	CodeDead             = "DEAD"
)

// ActionResult is the outcome of one tool call. The result of an agent's decision
// appears as last_action_result in its next observation.
type ActionResult struct {
	Tool         string         `json:"tool"`
	Success      bool           `json:"success"`
	ErrorCode    string         `json:"error_code,omitempty"`
	ErrorMessage string         `json:"error_message,omitempty"`
	Data         map[string]any `json:"data,omitempty"`
	// Tick is the tick of the observation the decision answered.
	Tick int `json:"tick"`
}

// OK builds a successful result.
func OK(tool string, data map[string]any) ActionResult {
	return ActionResult{Tool: tool, Success: true, Data: data}
}

// Fail builds a failed result with a code and a message a person or a model can act on.
func Fail(tool, code, format string, args ...any) ActionResult {
	return ActionResult{Tool: tool, ErrorCode: code, ErrorMessage: fmt.Sprintf(format, args...)}
}

// Decision is what an agent chose to do at a decision point: a tool, its
// parameters and, optionally, the reasoning behind it (kept for journals and viewers).
type Decision struct {
	Tool      string         `json:"tool"`
	Params    map[string]any `json:"params,omitempty"`
	Reasoning string         `json:"reasoning,omitempty"`
	// TimedOut marks the idle a lockstep server gives an agent that did not
	// decide in time; the agent's next observation reports TIMEOUT.
	TimedOut bool `json:"timed_out,omitempty"`
}

// Idle is the decision to do nothing this tick.
func Idle(reason string) Decision { return Decision{Tool: "idle", Reasoning: reason} }
