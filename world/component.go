package world

import "fmt"

// Section is a component's part of an agent's observation, found under
// components.<name>. It always carries "text", a rendering for language models;
// every other key is a structured field beside it.
type Section map[string]any

// Component is a subsystem switched on per scenario (a social feed, a market, an
// economy, a role game, a debate). The world calls it from the tick loop's
// goroutine only. Components must not assume anything spatial.
//
// A component that offers tools also implements tools.Provider; one that feeds
// objectives implements MetricSource.
type Component interface {
	// Name is the key of the component's observation section and the prefix of
	// its random stream.
	Name() string
	// Attach is called once, after the world is built and before the first tick.
	Attach(w *World) error
	// Tick runs once per tick, after movement, hazards and crafting.
	Tick(w *World)
	// Observe returns the agent's section, or nil for none. It must show the
	// agent only what that agent may know.
	Observe(w *World, agentID string) Section
	// Hash writes every piece of state that matters into the state hash.
	Hash(h *Hasher)
}

// ToolGuard is implemented by components that govern the tools agents call,
// the world's own tools included: before any tool runs (a decision or a
// mid-turn query), the tool registry asks every guard of the world. A guard
// may refuse the call or narrow who receives what it sends (a message), so a
// component with hidden information decides what leaves each agent, whatever
// tool carries it. Guards run on the tick goroutine and must not change state.
type ToolGuard interface {
	GuardTool(w *World, call GuardedCall) Verdict
}

// GuardedCall is the call a guard rules on: parameters are already validated
// against the tool's schema (numbers are float64).
type GuardedCall struct {
	Agent  string
	Tool   string
	Params map[string]any
	Query  bool
}

// Verdict is a guard's ruling. The zero Verdict allows the call unchanged.
type Verdict struct {
	// Code and Message, when Code is set, refuse the call with that error
	// (NOT_ALLOWED, say), before anything changes.
	Code, Message string
	// Audience, when not nil, limits who may receive what the call sends to
	// these agents (an empty, non-nil list: no one). Guards' audiences
	// intersect.
	Audience []string
}

// Refuse is a refusing verdict.
func Refuse(code, format string, args ...any) Verdict {
	return Verdict{Code: code, Message: fmt.Sprintf(format, args...)}
}

// MetricSource is implemented by components that define objective metrics.
type MetricSource interface {
	// Metric returns the value of a named metric for an agent, and whether the
	// component knows that metric at all.
	Metric(w *World, agentID, name string) (float64, bool)
}

// Event is one thing that happened during a tick. Public events have no To;
// private ones list the agents allowed to see them.
type Event struct {
	Tick   int            `json:"tick"`
	Type   string         `json:"type"`
	Source string         `json:"source"` // "world" or a component's name
	Agent  string         `json:"agent,omitempty"`
	Data   map[string]any `json:"data,omitempty"`
	To     []string       `json:"to,omitempty"`
}

// VisibleTo reports whether the agent may see the event.
func (e Event) VisibleTo(agentID string) bool {
	if len(e.To) == 0 {
		return true
	}
	for _, id := range e.To {
		if id == agentID {
			return true
		}
	}
	return false
}

// Publish records an event in the current tick's log.
func (w *World) Publish(e Event) {
	e.Tick = w.tick
	if e.Source == "" {
		e.Source = "world"
	}
	w.events = append(w.events, e)
	if onBridge(e) {
		w.bridge.add(e)
	}
}

// Events returns the events of the last completed tick (and of decisions applied
// since). The slice is reused by the next Step; copy what you keep.
func (w *World) Events() []Event { return w.events }

// Component returns the component with the given name, or nil.
func (w *World) Component(name string) Component {
	for _, c := range w.components {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// Components returns the world's components in scenario order.
func (w *World) Components() []Component { return w.components }

// Reporter is implemented by components with episode outputs beyond metrics:
// tables (written as CSV and JSON) and plots (drawn as PNG), taken once the
// episode is over — per-round figures, top posts, a social graph, trades,
// belief trajectories, prices over time.
type Reporter interface {
	Tables() []Table
	Plots() []Plot
}

// Table is one output table. Cells are numbers, text or booleans.
type Table struct {
	Name    string   `json:"name"` // a file name: letters, digits, '_' and '-'
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// Plot is one output plot: lines of (x, y) points, or a histogram per series
// when Histogram is set (each series' Y values are the samples).
type Plot struct {
	Name      string   `json:"name"` // a file name: letters, digits, '_' and '-'
	Title     string   `json:"title"`
	X         string   `json:"x"`
	Y         string   `json:"y"`
	Histogram bool     `json:"histogram,omitempty"`
	Series    []Series `json:"series"`
}

// Series is one line of a plot.
type Series struct {
	Label string    `json:"label"`
	X     []float64 `json:"x"`
	Y     []float64 `json:"y"`
}

// Documenter is implemented by components that also write whole documents at
// the end of an episode (a debate's transcript as JSON and Markdown): file
// name → contents, written beside the component's tables.
type Documenter interface {
	Documents() map[string][]byte
}

// Spectated is implemented by components with a panel for spectators (the
// viewer's component panels): what a person watching needs to follow the
// component at a glance. Spectators are trusted, so a panel may show hidden
// information (roles, night actions), marked as hidden; panels never reach
// agents.
type Spectated interface {
	Panel(w *World) Panel
}

// Panel is a component's summary for spectators: a title and a few short
// lines of text (at most PanelLines, each at most PanelWidth characters).
type Panel struct {
	Name  string   `json:"name"` // the component's name
	Title string   `json:"title"`
	Lines []string `json:"lines"`
}

// Panel size limits: the viewer draws panels with a fixed-width font.
const (
	PanelLines = 14
	PanelWidth = 60
)
