package render

import (
	"fmt"
	"image/color"
	"strings"
)

// paneRows is the side pane's title and rows, wrapped to chars characters.
//
// The history reads the model's transcript only for the decisions down to
// row upto (what the pane shows, and some more): a long transcript is read
// where it is looked at.
func (g *Game) paneRows(pane string, chars, upto int) (string, []row) {
	m := &g.Model
	plain := func(lines []string) []row {
		var out []row
		for _, l := range lines {
			for _, w := range wrap(printable(l), chars) {
				out = append(out, row{text: w, tick: -1})
			}
		}
		return out
	}
	switch pane {
	case PaneObservation:
		if m.Selected == "" {
			return "observation: select an agent", nil
		}
		lines := m.ObservationLines()
		if lines == nil {
			return "no observation of " + m.Selected + " yet", nil
		}
		return "observation of " + m.Selected, plain(lines)
	case PaneHistory:
		if m.Selected == "" {
			return "history: select an agent", nil
		}
		return "history of " + m.Selected + " (click: seek)", m.historyRows(chars, upto)
	case PaneConversation:
		who := "everyone"
		if m.Selected != "" {
			who = m.Selected
		}
		return "conversation: " + who + " (click: seek)", m.conversationRows(chars)
	}
	return "inspector: " + m.Selected, plain(m.Inspector())
}

// conversationRows are the conversation's lines, oldest first, each headed
// by its tick and speaker in the speaker's colour, wrapped.
func (m *Model) conversationRows(chars int) []row {
	var out []row
	lines := m.Conversation(m.Selected)
	if len(lines) == 0 {
		return []row{{text: "nothing said yet", tick: -1}}
	}
	for _, l := range lines {
		head := fmt.Sprintf("t%d ", l.Tick)
		col := ColNarrator
		if l.Agent != "" {
			head += l.Agent
			if a := m.Agent(l.Agent); a != nil {
				col = lighten(m.AgentColour(a))
			}
		} else {
			head += "narrator"
		}
		if len(l.To) > 0 {
			head += " -> " + strings.Join(l.To, ",")
		}
		if l.Kind != "" && l.Kind != "send_message" {
			head += " [" + l.Kind + "]"
		}
		for i, w := range wrap(printable(head+": "+l.Text), chars) {
			r := row{text: w, tick: l.Tick}
			if i == 0 {
				r.col = col
			}
			out = append(out, r)
		}
	}
	return out
}

// historyRows are the selected agent's plan now and its decisions, newest
// first: the tool and parameters, the reasoning and the result, and, from
// the transcripts, the exchange with the model that made it (for the
// decisions that start before row upto).
func (m *Model) historyRows(chars, upto int) []row {
	var out []row
	add := func(s string, tick int, col color.RGBA) {
		for i, w := range wrap(printable(s), chars) {
			r := row{text: w, tick: tick}
			if i == 0 {
				r.col = col
			}
			out = append(out, r)
		}
	}
	if a := m.Agent(m.Selected); a != nil {
		add("now: "+describeAction(a.Action), -1, ColPanelTitle)
		if n := len(a.Action.Path); n > 0 {
			p := a.Action.Path[n-1]
			add(fmt.Sprintf("plan: %d waypoints left, to (%.1f, %.1f)", n, p[0], p[2]), -1, color.RGBA{})
		}
	}
	m.Transcripts.Update(m.Selected)
	h := m.History[m.Selected]
	if len(h) == 0 {
		add("no decision seen yet", -1, color.RGBA{})
	}
	for i := len(h) - 1; i >= 0; i-- {
		d := h[i]
		start := len(out)
		add(fmt.Sprintf("t%d %s %s", d.Tick, d.Tool, compactJSON(d.Params)), d.Tick, ColHistory)
		if d.TimedOut {
			add("  timed out: the agent did not answer", d.Tick, color.RGBA{})
		}
		if d.Reasoning != "" {
			add("  why: "+d.Reasoning, d.Tick, color.RGBA{})
		}
		add("  -> "+describeResult(d.Result), d.Tick, color.RGBA{})
		if m.Transcripts == nil || start >= upto {
			continue
		}
		// The decision applied in the frame of tick T was made on the
		// observation of tick T-1, the transcript's tick.
		if e := m.Transcripts.Turn(m.Selected, m.Episode, d.Tick-1); e != nil {
			for _, l := range e.Lines {
				add("    "+l, d.Tick, ColTranscript)
			}
		}
	}
	return out
}

// lighten mixes a colour halfway to white, for text on the dark panels.
func lighten(c color.RGBA) color.RGBA {
	f := func(v uint8) uint8 { return uint8((int(v) + 0xff) / 2) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), 0xff}
}
