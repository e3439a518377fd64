package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
)

// The model's logbook: what was said (the conversation) and what every
// agent decided (its history), tick by tick from the start of the episode.
// Unlike the event log, a seek backwards does not empty it: the lines after
// the frame's tick are dropped and the frames played again add them back, so
// after any seek it holds everything up to the tick shown.

// Line is one line of the conversation: something an agent said (a debate
// contribution, a chat line, a post, a comment) or the game told (the
// Narrator, a verdict, a death, a judge's confidence).
type Line struct {
	Tick  int
	Agent string   // who said it; "" for the game itself
	To    []string // whom it was for, when not everyone
	Kind  string   // the tool, or the event's type
	Text  string
}

// HistoryEntry is one of an agent's decisions, at the tick it was applied.
type HistoryEntry struct {
	Tick int
	engine.DecisionEntry
}

// Logbook limits: the oldest entries go first past them.
const (
	MaxLines   = 20000
	MaxHistory = 4000 // per agent
)

// truncateLog drops the logbook's entries from the tick on.
func (m *Model) truncateLog(tick int) {
	if n := len(m.Talk); n > 0 && m.Talk[n-1].Tick >= tick {
		i, _ := slices.BinarySearchFunc(m.Talk, tick, func(l Line, t int) int { return l.Tick - t })
		m.Talk = m.Talk[:i]
	}
	if n := len(m.Deaths); n > 0 {
		m.Deaths = slices.DeleteFunc(m.Deaths, func(e world.Event) bool { return e.Tick >= tick })
	}
	for id, h := range m.History {
		if n := len(h); n > 0 && h[n-1].Tick >= tick {
			i, _ := slices.BinarySearchFunc(h, tick, func(e HistoryEntry, t int) int { return e.Tick - t })
			m.History[id] = h[:i]
		}
	}
}

// record adds a frame's decisions and events to the logbook.
func (m *Model) record(tick int, decisions []engine.DecisionEntry, events []world.Event) {
	for _, d := range decisions {
		if m.History == nil {
			m.History = map[string][]HistoryEntry{}
		}
		h := append(m.History[d.Agent], HistoryEntry{Tick: tick, DecisionEntry: d})
		if len(h) > MaxHistory {
			h = slices.Delete(h, 0, len(h)-MaxHistory)
		}
		m.History[d.Agent] = h
		if text, to := spoken(d); text != "" {
			m.Talk = append(m.Talk, Line{Tick: tick, Agent: d.Agent, To: to, Kind: d.Tool, Text: text})
		}
	}
	for _, e := range events {
		if e.Type == "death" || e.Type == "revive" {
			m.Deaths = append(m.Deaths, e)
		}
		if text := narrated(e); text != "" {
			m.Talk = append(m.Talk, Line{Tick: tick, Agent: e.Agent, To: e.To, Kind: e.Type, Text: text})
		}
	}
	if n := len(m.Talk) - MaxLines; n > 0 {
		m.Talk = slices.Delete(m.Talk, 0, n)
	}
}

// spoken is what a decision said, in full, and to whom: the text parameter
// of a successful tool (send_message, post, reply, speak, whisper, comment,
// propose, critique, refine, synthesize, ...).
func spoken(d engine.DecisionEntry) (string, []string) {
	if !d.Result.Success {
		return "", nil
	}
	for _, p := range bubbleParams {
		s, ok := d.Params[p].(string)
		if !ok || strings.TrimSpace(s) == "" {
			continue
		}
		var to []string
		for _, k := range []string{"target_agent", "target", "to", "player"} {
			if t, _ := d.Params[k].(string); t != "" && t != "all" {
				to = []string{t}
				break
			}
		}
		return strings.TrimSpace(s), to
	}
	return "", nil
}

// narrated is what an event tells everyone watching, or "": the text the
// game published with it (the role game's Narrator, verdicts, deaths), a
// debate's phases and the judge's confidence. Speech events are left out:
// the decisions that made them carry the text.
func narrated(e world.Event) string {
	switch e.Type {
	case "speak", "whisper", "whisper_overheard", "whisper_notice":
		return ""
	}
	if t, _ := e.Data["text"].(string); t != "" {
		return t
	}
	switch {
	case e.Source == "debate" && e.Type == "phase":
		return fmt.Sprintf("round %v: %v", e.Data["round"], e.Data["phase"])
	case e.Source == "debate" && e.Type == "evaluation":
		return fmt.Sprintf("confidence %v (threshold %v)", e.Data["confidence"], e.Data["threshold"])
	case e.Source == "social" && e.Type == "viral_post":
		return "a post is trending"
	case e.Source == "market" && e.Type == "market_resolved":
		return fmt.Sprintf("market %v resolved %v", e.Data["market"], e.Data["outcome"])
	}
	return ""
}

// Conversation is the conversation up to the tick shown: every line, or,
// with an agent, the lines it said or that were said to it.
func (m *Model) Conversation(agent string) []Line {
	if agent == "" {
		return m.Talk
	}
	var out []Line
	for _, l := range m.Talk {
		if l.Agent == agent || slices.Contains(l.To, agent) {
			out = append(out, l)
		}
	}
	return out
}

// Dead reports whether the agent is dead: gone from the world, or killed in
// a component's game (a role game's death not undone by a revival).
func (m *Model) Dead(a *ipc.FrameAgent) bool {
	if !a.Alive {
		return true
	}
	dead := false
	for _, e := range m.Deaths {
		if e.Agent == a.ID {
			dead = e.Type == "death"
		}
	}
	return dead
}
