package debate

import (
	"encoding/json"
	"strings"

	"github.com/arena-sim/arena/tools"
)

// context_search, exactly as the reference's tool: a case-insensitive
// substring test against each contribution's content, in round order then
// contribution order; a match carries the first 200 characters of the
// content, plus "..." when the content is longer.

// ToolContextSearch is the query tool's name.
const ToolContextSearch = "context_search"

// SnippetLength is how many characters of a matching content a snippet keeps.
const SnippetLength = 200

// The reference's error strings.
const (
	ErrNoContext = "Context is required for context search"
	ErrNoTerm    = "Search term is required and must be a string"
)

// ContextSearchDescription is the reference's description of the tool.
const ContextSearchDescription = "Search for a term in the debate history. Returns relevant contributions containing the search term."

// ContextSearchSchema is the tool's input schema: {term: string}, required.
func ContextSearchSchema() *tools.Schema {
	return &tools.Schema{Type: "object", Properties: map[string]*tools.Schema{
		"term": {Type: "string", Description: "The search term to find in debate history"},
	}, Required: []string{"term"}}
}

// SearchContext is what a search reads: the debate's rounds when there are
// any, otherwise the history (the reference's state.rounds and
// context.history).
type SearchContext struct {
	Rounds  []Round
	History []Round
}

// Match is one contribution that contains the term.
type Match struct {
	RoundNumber    int    `json:"roundNumber"`
	AgentID        string `json:"agentId"`
	AgentRole      string `json:"agentRole"`
	Type           string `json:"type"`
	ContentSnippet string `json:"contentSnippet"`
}

// Envelope is a tool result, as seed 003 gives it:
// {"status":"success","result":{...}} or {"status":"error","result":"message"}.
type Envelope struct {
	Status string
	Result *SearchResult // on success
	Error  string        // on error
}

// MarshalJSON writes the seed's envelope, status first.
func (e Envelope) MarshalJSON() ([]byte, error) {
	var result any = e.Result
	if e.Status != "success" {
		result = e.Error
	}
	return json.Marshal(struct {
		Status string `json:"status"`
		Result any    `json:"result"`
	}{e.Status, result})
}

// SearchResult is a successful search's result.
type SearchResult struct {
	Matches []Match `json:"matches"`
}

// JSON is the envelope as the reference's tool returns it.
func (e Envelope) JSON() string {
	b, _ := json.Marshal(e)
	return string(b)
}

// Map is the envelope as JSON-shaped Go values (maps, slices; roundNumber
// an int, so that it stays an integer on every wire).
func (e Envelope) Map() map[string]any {
	if e.Status != "success" {
		return map[string]any{"status": e.Status, "result": e.Error}
	}
	ms := make([]any, 0, len(e.Result.Matches))
	for _, m := range e.Result.Matches {
		ms = append(ms, map[string]any{"roundNumber": m.RoundNumber, "agentId": m.AgentID,
			"agentRole": m.AgentRole, "type": m.Type, "contentSnippet": m.ContentSnippet})
	}
	return map[string]any{"status": e.Status, "result": map[string]any{"matches": ms}}
}

// ContextSearch runs the tool on its arguments. ctx nil is the reference's
// missing context; a missing, empty or non-string term is an error.
func ContextSearch(ctx *SearchContext, args map[string]any) Envelope {
	if ctx == nil {
		return Envelope{Status: "error", Error: ErrNoContext}
	}
	term, ok := args["term"].(string)
	if !ok || term == "" {
		return Envelope{Status: "error", Error: ErrNoTerm}
	}
	src := ctx.Rounds
	if len(src) == 0 {
		src = ctx.History
	}
	needle := strings.ToLower(term)
	matches := []Match{}
	for _, r := range src {
		for _, c := range r.Contributions {
			if !strings.Contains(strings.ToLower(c.Content), needle) {
				continue
			}
			matches = append(matches, Match{RoundNumber: r.Number, AgentID: c.AgentID, AgentRole: c.AgentRole,
				Type: c.Type, ContentSnippet: Snippet(c.Content)})
		}
	}
	return Envelope{Status: "success", Result: &SearchResult{Matches: matches}}
}

// Snippet is the first 200 characters of a content, plus "..." when it is
// longer: at most 203 characters, and none added at exactly 200.
func Snippet(content string) string {
	r := []rune(content)
	if len(r) <= SnippetLength {
		return content
	}
	return string(r[:SnippetLength]) + "..."
}
