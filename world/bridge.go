package world

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The event bridge carries what components (and the scenario's schedule)
// publish to every other agent: each observation holds a digest of the
// bridge events an agent may see that happened since its previous
// observation, whatever the decision period, so nothing is cleared before it
// is read. World events (a resource collected, a point captured) are not on
// the bridge; agents perceive those directly.

// bridgeCap is how many recent bridge events the world keeps; an agent that
// observes less often than that many events happen sees the newest.
const bridgeCap = 256

// digestMax is the most events one observation's digest carries.
const digestMax = 20

// ScheduledEvent is an event the scenario file schedules: published at Tick
// with source "scheduled".
type ScheduledEvent struct {
	Tick int            `json:"tick"`
	Type string         `json:"type"`
	Text string         `json:"text,omitempty"`
	Data map[string]any `json:"data,omitempty"`
}

// EventView is one bridge event as an agent sees it: Text is a line for
// language models, made from the event's real fields.
type EventView struct {
	Tick   int            `json:"tick"`
	Source string         `json:"source"`
	Type   string         `json:"type"`
	Agent  string         `json:"agent,omitempty"`
	Text   string         `json:"text"`
	Data   map[string]any `json:"data,omitempty"`
}

// EventFormatter is implemented by components that render their events for
// the digest; the world falls back to "[source] type: key=value ...".
type EventFormatter interface {
	FormatEvent(e Event) (string, bool)
}

type bridgeEvent struct {
	seq  uint64
	ev   Event
	text string // formatted once, on first delivery
}

type bridge struct {
	events []bridgeEvent // oldest first, at most bridgeCap
	seq    uint64        // the last event's sequence number
	seen   []uint64      // per agent index: the last sequence number in its digest
}

// onBridge reports whether a published event goes on the bridge.
func onBridge(e Event) bool { return e.Source != "world" }

func (b *bridge) add(e Event) {
	b.seq++
	if len(b.events) == bridgeCap {
		copy(b.events, b.events[1:])
		b.events = b.events[:bridgeCap-1]
	}
	b.events = append(b.events, bridgeEvent{seq: b.seq, ev: e})
}

// digestInto fills the agent's digest with the bridge events since its last
// one that it may see and did not cause, and marks them seen.
func (w *World) digestInto(a *Agent, out []EventView) []EventView {
	out = out[:0]
	b := &w.bridge
	for len(b.seen) < len(w.agents) {
		b.seen = append(b.seen, 0)
	}
	since := b.seen[a.index]
	b.seen[a.index] = b.seq
	start := len(b.events)
	for start > 0 && b.events[start-1].seq > since {
		start--
	}
	for k := start; k < len(b.events); k++ {
		be := &b.events[k]
		e := be.ev
		if e.Agent == a.ID || !e.VisibleTo(a.ID) {
			continue
		}
		if be.text == "" {
			be.text = w.formatEvent(e)
		}
		out = append(out, EventView{Tick: e.Tick, Source: e.Source, Type: e.Type, Agent: e.Agent, Text: be.text, Data: e.Data})
	}
	if len(out) > digestMax {
		out = append(out[:0], out[len(out)-digestMax:]...)
	}
	return out
}

func (w *World) formatEvent(e Event) string {
	if c, ok := w.Component(e.Source).(EventFormatter); ok {
		if s, ok := c.FormatEvent(e); ok {
			return s
		}
	}
	if e.Source == "scheduled" {
		if text, ok := e.Data["text"].(string); ok && text != "" {
			return "[Scheduled] " + text
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s", e.Source, e.Type)
	if e.Agent != "" {
		b.WriteString(" by " + e.Agent)
	}
	for i, k := range slices.Sorted(maps.Keys(e.Data)) {
		if i == 0 {
			b.WriteString(":")
		}
		fmt.Fprintf(&b, " %s=%v", k, e.Data[k])
	}
	return b.String()
}

func (b *bridge) hash(h *Hasher) {
	h.Uint(b.seq)
	h.Int(len(b.seen))
	for _, s := range b.seen {
		h.Uint(s)
	}
}

// publishScheduled publishes the scenario's events due at this tick.
func (w *World) publishScheduled() {
	for _, s := range w.schedule {
		if s.Tick != w.tick {
			continue
		}
		data := maps.Clone(s.Data)
		if s.Text != "" {
			if data == nil {
				data = map[string]any{}
			}
			data["text"] = s.Text
		}
		w.Publish(Event{Type: s.Type, Source: "scheduled", Data: data})
	}
}

// Variables are the scenario's variables (numbers, text or booleans): set in
// the scenario file, changed by components (a policy, say), and shown to
// every agent.

// Variable returns a scenario variable.
func (w *World) Variable(name string) (any, bool) {
	v, ok := w.variables[name]
	return v, ok
}

// Variables returns a copy of the scenario variables.
func (w *World) Variables() map[string]any { return maps.Clone(w.variables) }

// SetVariable sets a scenario variable to a number, text or boolean.
func (w *World) SetVariable(name string, value any) error {
	switch v := value.(type) {
	case float64, string, bool:
	case int:
		value = float64(v)
	default:
		return fmt.Errorf("variable %q: a value is a number, text or a boolean, not %T", name, value)
	}
	if w.variables == nil {
		w.variables = map[string]any{}
	}
	w.variables[name] = value
	w.varsView, w.varsText = nil, ""
	return nil
}

// variablesView returns the variables as observations show them, and their
// text, rebuilt only after a change and shared between observations.
func (w *World) variablesView() (map[string]any, string) {
	if w.varsView == nil && len(w.variables) > 0 {
		w.varsView, w.varsText = maps.Clone(w.variables), w.variablesText()
	}
	return w.varsView, w.varsText
}

// variablesText renders the variables for language models.
func (w *World) variablesText() string {
	if len(w.variables) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Current scenario variables:")
	for _, k := range slices.Sorted(maps.Keys(w.variables)) {
		b.WriteString("\n  " + k + ": " + formatValue(w.variables[k]))
	}
	return b.String()
}

func formatValue(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func (w *World) hashVariables(h *Hasher) {
	keys := slices.Sorted(maps.Keys(w.variables))
	h.Int(len(keys))
	for _, k := range keys {
		h.String(k)
		switch v := w.variables[k].(type) {
		case float64:
			h.Int(0)
			h.Float(v)
		case string:
			h.Int(1)
			h.String(v)
		case bool:
			h.Int(2)
			h.Bool(v)
		}
	}
}
