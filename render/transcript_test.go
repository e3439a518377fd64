package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/sdk/llm"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// fakeModel answers every turn with a query (query_inventory) and then an
// action (move_to), saying which tick's prompt it answers.
type fakeModel struct{}

func (fakeModel) Chat(_ context.Context, req llm.ChatRequest) (*llm.ChatResponse, error) {
	last := req.Messages[len(req.Messages)-1]
	tick := "?"
	for _, m := range req.Messages {
		if rest, ok := strings.CutPrefix(m.Content, "# Tick "); ok && m.Role == "user" {
			tick = strings.Fields(rest)[0]
		}
	}
	msg := llm.Message{Role: "assistant", Content: "checking my bag at tick " + tick,
		ToolCalls: []llm.ToolCall{{ID: "c1", Type: "function", Function: llm.FunctionCall{Name: "query_inventory", Arguments: "{}"}}}}
	if last.Role == "tool" {
		msg = llm.Message{Role: "assistant", Content: "heading east from tick " + tick,
			ToolCalls: []llm.ToolCall{{ID: "c2", Type: "function", Function: llm.FunctionCall{Name: "move_to", Arguments: `{"target":[3,0,1]}`}}}}
	}
	return &llm.ChatResponse{Choices: []llm.Choice{{Message: msg, FinishReason: "tool_calls"}}, Usage: llm.Usage{PromptTokens: 900, CompletionTokens: 20}}, nil
}

// llmReplay records an episode of foraging played by llm.Agents on the fake
// model: DIR/replay.jsonl and DIR/transcripts/AGENT.jsonl.
func llmReplay(dir string, agents, ticks int) error {
	sc, err := scenarios.Load("foraging")
	if err != nil {
		return err
	}
	ctrls := func(sc *scenarios.Scenario, w *world.World) (map[string]engine.Controller, error) {
		reg, err := tools.ForWorld(w)
		if err != nil {
			return nil, err
		}
		out := map[string]engine.Controller{}
		for _, a := range w.Agents() {
			id := a.ID
			q := llm.QueryFunc(func(_ context.Context, tool string, params map[string]any) (map[string]any, error) {
				res := reg.Execute(w, id, tool, params, true)
				if !res.Success {
					return nil, &sdk.ServerError{Code: res.ErrorCode, Message: res.ErrorMessage, Tool: tool}
				}
				return res.Data, nil
			})
			out[id] = llm.New(llm.Options{Model: fakeModel{}, Tools: reg.SpecsFor(id), Query: q, NoStream: true,
				Transcripts: filepath.Join(dir, "transcripts")})
		}
		return out, nil
	}
	_, err = eval.Episode(context.Background(), eval.Config{Scenario: sc, Seed: 5, Agents: agents, Ticks: ticks,
		Recorder: recorder{dir, sc}, Controllers: ctrls}, 1, nil)
	return err
}

// openReplay opens DIR/replay.jsonl as the viewer does, with its
// transcripts.
func openReplay(dir string) (*ReplaySource, *Transcripts, error) {
	f, err := os.Open(filepath.Join(dir, "replay.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rep, err := engine.ReadReplay(f)
	if err != nil {
		return nil, nil, err
	}
	sc, err := scenarios.Load(rep.Header.Scenario)
	if err != nil {
		return nil, nil, err
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: rep.Header.Seed, Agents: len(rep.Header.Agents), Ticks: rep.Header.TimeLimit})
	if err != nil {
		return nil, nil, err
	}
	src, err := NewReplaySource(context.Background(), rep, w)
	return src, TranscriptsBeside(filepath.Join(dir, "replay.jsonl")), err
}

// The history pane shows, under each decision, the exchange with the model
// that made it: the prompt, what the model said, its tool calls and what
// they returned, clipped; the turn of the observation the decision answered.
func TestHistoryShowsTranscripts(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, llmReplay(dir, 2, 12))
	src, tr, err := openReplay(dir)
	require.NoError(t, err)
	require.NotNil(t, tr, "the transcripts beside the replay")
	g := NewGame(src)
	g.Model.Transcripts = tr
	g.Layout(1280, 800)
	g.Seek(src.Ticks())
	g.Pump()
	g.Select("agent_001")
	rows := g.Model.historyRows(200, 1000)
	var text []string
	for _, r := range rows {
		text = append(text, r.text)
	}
	all := strings.Join(text, "\n")
	h := g.Model.History["agent_001"]
	require.NotEmpty(t, h)
	for _, d := range h {
		// The fake model says which observation's tick it answered.
		require.Contains(t, all, fmt.Sprintf("says: heading east from tick %d", d.Tick-1), "the turn of the decision at t%d", d.Tick)
	}
	require.Contains(t, all, "calls query_inventory {}")
	require.Contains(t, all, "gets (query_inventory): {\"status\":\"success\"")
	require.Contains(t, all, "calls move_to {\"target\":[3,0,1]}")
	require.Contains(t, all, "model: 2 calls, 1800 tokens in, 40 out")
	require.Contains(t, all, "prompt (")
	require.Contains(t, all, "# Tick 3 ")
	e := tr.Turn("agent_001", 1, 3)
	require.NotNil(t, e)
	clipped := 0
	for _, l := range e.Lines {
		require.LessOrEqual(t, len([]rune(l)), TranscriptClip, "clipped")
		if strings.HasPrefix(l, "prompt") && strings.HasSuffix(l, "…") {
			clipped++
		}
	}
	require.Equal(t, 1, clipped, "the prompt is longer than the clip: %q", e.Lines)
	// The transcript's rows seek to their decision's tick.
	for _, r := range rows {
		if strings.Contains(r.text, "says: heading east from tick 4") {
			require.Equal(t, 5, r.tick)
		}
	}

	// Only the decisions down to the row asked for read the transcript.
	count := func(rows []row) int {
		n := 0
		for _, r := range rows {
			if strings.Contains(r.text, "says: heading east") {
				n++
			}
		}
		return n
	}
	first := slices.IndexFunc(rows, func(r row) bool { return r.col == ColHistory })
	require.Positive(t, first)
	require.Zero(t, count(g.Model.historyRows(200, first)), "none above the first decision")
	n := count(g.Model.historyRows(200, first+1))
	require.Equal(t, 1, n, "the newest decision only")

	// Another agent's transcript is its own.
	g.Select("agent_002")
	require.Contains(t, strings.Join(rowTexts(g.Model.historyRows(200, 1000)), "\n"), "you are agent_002")
	// Without transcripts the history is as before.
	g.Model.Transcripts = nil
	require.NotContains(t, strings.Join(rowTexts(g.Model.historyRows(200, 1000)), "\n"), "says:")
}

func rowTexts(rows []row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.text)
	}
	return out
}

// A transcript file read as it grows, with episodes one after another,
// unreadable lines and a last line not yet whole.
func TestTranscriptsIndex(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a_b.jsonl")
	turn := func(tick int, said string) string {
		return fmt.Sprintf(`{"agent":"a/b","tick":%d,"messages":[{"role":"assistant","content":%q}],"usage":{"model_calls":1}}`+"\n", tick, said)
	}
	write := func(s string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(s)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	says := func(e *Exchange) string {
		if e == nil {
			return "<none>"
		}
		for _, l := range e.Lines {
			if s, ok := strings.CutPrefix(l, "says: "); ok {
				return s
			}
		}
		return strings.Join(e.Lines, "|")
	}
	write(turn(0, "one a") + "not json\n" + turn(2, "one b") + turn(0, "two a") + turn(1, "two b")[:20])
	tr := OpenTranscripts(dir)
	require.NotNil(t, tr)
	require.Equal(t, "one a", says(tr.Turn("a/b", 1, 0)))
	require.Equal(t, "one b", says(tr.Turn("a/b", 1, 2)))
	require.Equal(t, "two a", says(tr.Turn("a/b", 2, 0)))
	require.Nil(t, tr.Turn("a/b", 1, 1), "no turn at tick 1")
	require.Nil(t, tr.Turn("a/b", 2, 1), "half a line is not a turn yet")
	write(turn(1, "two b")[20:] + turn(2, "two c\nline two"))
	require.Nil(t, tr.Turn("a/b", 2, 1), "read again only when asked")
	tr.Update("a/b")
	require.Equal(t, "two b", says(tr.Turn("a/b", 2, 1)), "the rest of the line arrived")
	require.Equal(t, "two c / line two", says(tr.Turn("a/b", 2, 2)))
	require.Nil(t, tr.Turn("nobody", 1, 0))
	require.Nil(t, OpenTranscripts(filepath.Join(dir, "missing")))
	var nilT *Transcripts
	require.Nil(t, nilT.Turn("a/b", 1, 0))
}
