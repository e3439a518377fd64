package debate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Transcript is the whole debate, as written to transcript.json.
type Transcript struct {
	Task         string            `json:"task"`
	Participants []TranscriptAgent `json:"participants"`
	Termination  Termination       `json:"termination"`
	Rounds       []Round           `json:"rounds"`
	Synthesis    *Synthesis        `json:"synthesis"`
	Phase        string            `json:"phase"`
}

// TranscriptAgent is one participant.
type TranscriptAgent struct {
	ID            string   `json:"id"`
	Name          string   `json:"name,omitempty"`
	Role          string   `json:"role"`
	Tools         []string `json:"tools"`
	ToolCallLimit int      `json:"toolCallLimit"`
}

// Transcript returns the debate so far.
func (d *Debate) Transcript() Transcript {
	t := Transcript{Task: d.task, Termination: d.cfg.Termination, Rounds: d.rounds, Synthesis: d.synthesis, Phase: d.phase}
	for _, p := range d.parts {
		t.Participants = append(t.Participants, TranscriptAgent{ID: p.id, Name: p.name, Role: p.role, Tools: append([]string{}, p.tools...), ToolCallLimit: p.limit})
	}
	if t.Rounds == nil {
		t.Rounds = []Round{}
	}
	return t
}

// TranscriptJSON is the transcript as indented JSON.
func (d *Debate) TranscriptJSON() []byte {
	b, _ := json.MarshalIndent(d.Transcript(), "", "  ")
	return append(b, '\n')
}

// TranscriptMarkdown is the transcript as Markdown.
func (d *Debate) TranscriptMarkdown() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Debate\n\n**Task:** %s\n\n## Participants\n\n", d.task)
	for _, p := range d.parts {
		tools := "none"
		if len(p.tools) > 0 {
			tools = strings.Join(p.tools, ", ")
		}
		fmt.Fprintf(&b, "- `%s` — %s (tools: %s; limit %d per phase)\n", p.id, p.role, tools, p.limit)
	}
	for _, r := range d.rounds {
		fmt.Fprintf(&b, "\n## Round %d\n", r.Number)
		for _, c := range r.Contributions {
			title := fmt.Sprintf("%s by `%s` (%s)", titleCase(c.Type), c.AgentID, c.AgentRole)
			if c.TargetAgentID != "" {
				title += fmt.Sprintf(" of `%s`", c.TargetAgentID)
			}
			if c.Metadata.CarriedForward {
				title += ", carried forward"
			}
			fmt.Fprintf(&b, "\n### %s\n\n%s\n", title, c.Content)
			writeCalls(&b, c.Metadata)
		}
		if r.Evaluation != nil {
			fmt.Fprintf(&b, "\n**Judge's confidence:** %g\n", *r.Evaluation)
		}
	}
	if s := d.synthesis; s != nil {
		fmt.Fprintf(&b, "\n## Synthesis by `%s` (confidence %g)\n\n%s\n", s.AgentID, s.Confidence, s.Content)
		writeCalls(&b, s.Metadata)
	} else {
		b.WriteString("\n## No synthesis\n\nThe debate ended without the judge's synthesis.\n")
	}
	return []byte(b.String())
}

func writeCalls(b *strings.Builder, m Metadata) {
	if len(m.ToolCalls) == 0 {
		return
	}
	fmt.Fprintf(b, "\n_Tool calls (%d):_\n\n", m.ToolCallIterations)
	for i, c := range m.ToolCalls {
		res := ""
		if i < len(m.ToolResults) {
			res = m.ToolResults[i].Content
		}
		fmt.Fprintf(b, "- `%s(%s)` → `%s`\n", c.Name, c.Arguments, res)
	}
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Documents implements world.Documenter: the transcript as transcript.json
// and transcript.md.
func (d *Debate) Documents() map[string][]byte {
	return map[string][]byte{"transcript.json": d.TranscriptJSON(), "transcript.md": d.TranscriptMarkdown()}
}

// Tables implements world.Reporter: contributions, one row per contribution
// and the synthesis, with tool calls and results as JSON text. (The whole
// transcript is a document: see Documents.)
func (d *Debate) Tables() []world.Table {
	cont := world.Table{Name: "contributions", Columns: []string{"round", "tick", "agent_id", "agent_role", "type", "target_agent_id",
		"carried_forward", "tool_call_iterations", "tool_calls", "tool_results", "content"}}
	js := func(v any) string {
		if b, err := json.Marshal(v); err == nil && string(b) != "null" {
			return string(b)
		}
		return "[]"
	}
	for _, r := range d.rounds {
		for _, c := range r.Contributions {
			cont.Rows = append(cont.Rows, []any{float64(r.Number), float64(c.Tick), c.AgentID, c.AgentRole, c.Type, c.TargetAgentID,
				c.Metadata.CarriedForward, float64(c.Metadata.ToolCallIterations), js(c.Metadata.ToolCalls), js(c.Metadata.ToolResults), c.Content})
		}
	}
	if s := d.synthesis; s != nil {
		cont.Rows = append(cont.Rows, []any{float64(s.Round), float64(s.Tick), s.AgentID, RoleJudge, "synthesis", "",
			false, float64(s.Metadata.ToolCallIterations), js(s.Metadata.ToolCalls), js(s.Metadata.ToolResults), s.Content})
	}
	return []world.Table{cont}
}

// Plots implements world.Reporter: the judge's confidence per round, when
// it gave any.
func (d *Debate) Plots() []world.Plot {
	var s world.Series
	s.Label = "confidence"
	for _, r := range d.rounds {
		if r.Evaluation != nil {
			s.X = append(s.X, float64(r.Number))
			s.Y = append(s.Y, *r.Evaluation)
		}
	}
	if d.synthesis != nil {
		s.X = append(s.X, float64(d.synthesis.Round))
		s.Y = append(s.Y, d.synthesis.Confidence)
	}
	if len(s.X) == 0 {
		return nil
	}
	return []world.Plot{{Name: "confidence", Title: "Judge's confidence", X: "round", Y: "confidence", Series: []world.Series{s}}}
}
