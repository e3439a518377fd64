package world_test

import (
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// shouter publishes, at the ticks given, an event by an agent (private to
// some agents when to is set).
type shouter struct {
	at map[int]world.Event
}

func (s *shouter) Name() string                               { return "shout" }
func (s *shouter) Attach(*world.World) error                  { return nil }
func (s *shouter) Observe(*world.World, string) world.Section { return nil }
func (s *shouter) Hash(*world.Hasher)                         {}
func (s *shouter) FormatEvent(e world.Event) (string, bool) {
	if e.Type != "shout" {
		return "", false
	}
	return "[Shout] " + e.Data["what"].(string), true
}
func (s *shouter) Tick(w *world.World) {
	if e, ok := s.at[w.Tick()]; ok {
		w.Publish(e)
	}
}

func TestTheBridgeDeliversEachEventOnceToEveryoneElse(t *testing.T) {
	cfg := testutil.Config()
	cfg.Components = []world.Component{&shouter{at: map[int]world.Event{
		0: {Type: "shout", Source: "shout", Agent: "a1", Data: map[string]any{"what": "hello"}},
		1: {Type: "whisper", Source: "shout", Agent: "a1", Data: map[string]any{"what": "psst"}, To: []string{"a1"}},
		2: {Type: "shout", Source: "shout", Agent: "a2", Data: map[string]any{"what": "hi back"}},
	}}}
	cfg.Variables = map[string]any{"min_wage": 15.0, "mood": "calm"}
	cfg.Schedule = []world.ScheduledEvent{{Tick: 1, Type: "news", Text: "rain is coming"}}
	w := testutil.World(t, cfg)
	a1, a2 := w.Agent("a1"), w.Agent("a2")

	w.Step() // tick 0: a1 shouts
	o2 := w.Observe(a2)
	require.Len(t, o2.Events, 1)
	require.Equal(t, world.EventView{Tick: 0, Source: "shout", Type: "shout", Agent: "a1", Text: "[Shout] hello",
		Data: map[string]any{"what": "hello"}}, o2.Events[0])
	require.Empty(t, w.Observe(a1).Events, "an agent is not told what it did itself")
	require.Empty(t, w.Observe(a2).Events, "each event is delivered once")

	// a2 does not observe for two ticks (a decision period, say): it still
	// gets everything since its last observation, and never a private event
	// meant for someone else.
	w.Step() // tick 1: a private whisper to a1, and the scheduled news
	w.Step() // tick 2: a2 shouts
	o1, o2 := w.Observe(a1), w.Observe(a2)
	var texts1, texts2 []string
	for _, e := range o1.Events {
		texts1 = append(texts1, e.Text)
	}
	for _, e := range o2.Events {
		texts2 = append(texts2, e.Text)
	}
	require.Equal(t, []string{"[Scheduled] rain is coming", "[Shout] hi back"}, texts1, "a1's own whisper is its own")
	require.Equal(t, []string{"[Scheduled] rain is coming"}, texts2)

	require.Equal(t, map[string]any{"min_wage": 15.0, "mood": "calm"}, o1.Variables)
	require.Equal(t, "Current scenario variables:\n  min_wage: 15\n  mood: calm", o1.VariablesText)
	before := w.StateHash()
	require.NoError(t, w.SetVariable("min_wage", 20))
	require.NotEqual(t, before, w.StateHash(), "variables are part of the state")
	require.Error(t, w.SetVariable("bad", []int{1}))
}

func TestTheBridgeKeepsTheNewestWhenAnAgentFallsFarBehind(t *testing.T) {
	at := map[int]world.Event{}
	for i := 0; i < 300; i++ {
		at[i] = world.Event{Type: "tick", Source: "shout", Agent: "a1", Data: map[string]any{"n": i}}
	}
	cfg := testutil.Config()
	cfg.Components = []world.Component{&shouter{at: at}}
	w := testutil.World(t, cfg)
	for i := 0; i < 300; i++ {
		w.Step()
	}
	evs := w.Observe(w.Agent("a2")).Events
	require.Len(t, evs, 20)
	require.Equal(t, 299, evs[19].Data["n"])
	require.Equal(t, "[shout] tick by a1: n=280", evs[0].Text, "without a formatter, the event's own fields")
}
