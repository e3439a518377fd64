package render

import (
	"context"
	"encoding/json"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func testFrame(tick int) ipc.Frame {
	return ipc.Frame{Type: "frame", Episode: 1, Tick: tick,
		Agents: []ipc.FrameAgent{
			{ID: "a1", Team: "red", Position: world.Vec3{0, 0, 0}, Health: 100, Alive: true, Score: 2,
				Action: world.ActionStatus{Tool: "move_to", Status: "in_progress", Path: []world.Vec3{{3, 0, 4}}}},
			{ID: "a2", Team: "blue", Position: world.Vec3{10, 0, 5}, Health: 40, Alive: true},
		},
		Entities: []ipc.FrameEntity{
			{Name: "r1", Type: "resource", Kind: "wood", Position: world.Vec3{5, 0, 5}, Available: true},
			{Name: "s1", Type: "station", Kind: "anvil", Position: world.Vec3{-5, 0, -5}, InUse: true, Owner: "a1"},
		},
		Events: []world.Event{{Tick: tick - 1, Type: "collected", Source: "world", Agent: "a1"}},
	}
}

func TestApplyKeepsObstaclesAndEvents(t *testing.T) {
	var m Model
	f := testFrame(1)
	f.Entities = append(f.Entities, ipc.FrameEntity{Name: "rock", Type: "obstacle", Position: world.Vec3{20, 0, 20}, Size: []float64{1}})
	m.Apply(f)
	if len(m.Static) != 1 || len(m.Entities) != 2 || len(m.Agents) != 2 || m.Tick != 1 {
		t.Fatalf("after the first frame: static %d entities %d agents %d tick %d", len(m.Static), len(m.Entities), len(m.Agents), m.Tick)
	}
	for tick := 2; tick < 2+MaxEvents; tick++ {
		m.Apply(testFrame(tick))
	}
	if len(m.Static) != 1 {
		t.Fatalf("obstacles lost: %d", len(m.Static))
	}
	if len(m.Events) != MaxEvents || m.Events[len(m.Events)-1].Tick != MaxEvents {
		t.Fatalf("events: %d, last at tick %d", len(m.Events), m.Events[len(m.Events)-1].Tick)
	}
	// A seek backwards restarts the log; a new episode drops the obstacles.
	m.Apply(testFrame(5))
	if len(m.Events) != 1 {
		t.Fatalf("after a seek back: %d events", len(m.Events))
	}
	f = testFrame(1)
	f.Episode = 2
	m.Apply(f)
	if len(m.Static) != 0 || m.Episode != 2 {
		t.Fatalf("new episode kept %d obstacles", len(m.Static))
	}
}

func TestCamera(t *testing.T) {
	c := Camera{W: 800, H: 600}
	c.Fit(world.Bounds{MinX: -10, MinZ: -5, MaxX: 30, MaxZ: 25})
	if c.Scale != 20 || c.CenterX != 10 || c.CenterZ != 10 {
		t.Fatalf("fit: %+v", c)
	}
	sx, sy := c.WorldToScreen(-10, 10)
	if sx != 0 || sy != 300 {
		t.Fatalf("(-10, 10) at (%v, %v), want (0, 300)", sx, sy)
	}
	for _, p := range [][2]float64{{0, 0}, {3.5, -7.25}, {30, 25}} {
		x, z := c.ScreenToWorld(c.WorldToScreen(p[0], p[1]))
		if math.Abs(x-p[0]) > 1e-9 || math.Abs(z-p[1]) > 1e-9 {
			t.Fatalf("round trip of %v gave (%v, %v)", p, x, z)
		}
	}
	// Zooming keeps the point under the cursor.
	x0, z0 := c.ScreenToWorld(123, 456)
	c.ZoomAt(123, 456, 1.7)
	if x1, z1 := c.ScreenToWorld(123, 456); math.Abs(x1-x0) > 1e-9 || math.Abs(z1-z0) > 1e-9 || c.Scale != 34 {
		t.Fatalf("zoom moved the point from (%v, %v) to (%v, %v); scale %v", x0, z0, x1, z1, c.Scale)
	}
	c.ZoomAt(0, 0, 1e9)
	if c.Scale != MaxScale {
		t.Fatalf("zoom not clamped: %v", c.Scale)
	}
	// A drag moves the world with the mouse.
	c = Camera{W: 800, H: 600, Scale: 10}
	bx, by := c.WorldToScreen(1, 1)
	c.Pan(30, -20)
	if ax, ay := c.WorldToScreen(1, 1); ax != bx+30 || ay != by-20 {
		t.Fatalf("pan: (%v, %v) → (%v, %v)", bx, by, ax, ay)
	}
}

func TestPickAndInspector(t *testing.T) {
	var m Model
	m.Apply(testFrame(3))
	c := Camera{W: 800, H: 600, Scale: 10}
	sx, sy := c.WorldToScreen(10, 5)
	if got := m.Pick(&c, sx+3, sy-2); got != "a2" {
		t.Fatalf("pick near a2: %q", got)
	}
	if got := m.Pick(&c, sx+40, sy); got != "" {
		t.Fatalf("pick in empty space: %q", got)
	}
	// Zoomed far out, a click within PickPixels still picks.
	c.Scale = 1
	sx, sy = c.WorldToScreen(0, 0)
	if got := m.Pick(&c, sx, sy-(PickPixels-1)); got != "a1" {
		t.Fatalf("pick at low zoom: %q", got)
	}
	if m.Inspector() != nil {
		t.Fatal("inspector without a selection")
	}
	m.Selected = "a1"
	text := strings.Join(m.Inspector(), "\n")
	for _, want := range []string{"agent a1 (team red)", "health 100", "score 2.0", "move_to in_progress", "t2 collected"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspector lacks %q:\n%s", want, text)
		}
	}
}

func TestGameCommands(t *testing.T) {
	var m Model
	m.Apply(testFrame(1))
	src := &ReplaySource{Frames: []ipc.Frame{testFrame(0), testFrame(1), testFrame(2), testFrame(3)}, TicksPerUpdate: 1, playback: playback{speed: 1}, sent: -1}
	g := NewGame(src)
	g.Layout(800, 600)
	g.Pump()
	if g.Model.Tick != 0 || len(g.Model.Agents) != 2 || g.Camera.Scale == 10 {
		t.Fatalf("first pump: tick %d, camera %+v", g.Model.Tick, g.Camera)
	}
	g.TogglePause()
	g.Pump()
	if !g.Paused() || g.Model.Tick != 0 {
		t.Fatalf("paused: %v tick %d", g.Paused(), g.Model.Tick)
	}
	g.Step()
	g.Pump()
	if g.Model.Tick != 1 {
		t.Fatalf("after a step: tick %d", g.Model.Tick)
	}
	g.Faster()
	if g.Speed() != 2 || src.Speed() != 2 {
		t.Fatalf("speed %v, source %v", g.Speed(), src.Speed())
	}
	g.TogglePause()
	g.Pump()
	if g.Paused() || g.Model.Tick != 3 { // two ticks per update at speed 2
		t.Fatalf("resumed: paused %v tick %d", g.Paused(), g.Model.Tick)
	}
	sx, sy := g.Camera.WorldToScreen(10, 5)
	g.Click(sx, sy)
	if g.Model.Selected != "a2" {
		t.Fatalf("click selected %q", g.Model.Selected)
	}
	if hud := strings.Join(g.HUD(), "\n"); !strings.Contains(hud, "tick 3") || !strings.Contains(hud, "x2 (20 ticks/s)") {
		t.Fatalf("HUD: %s", hud)
	}
}

// recorder journals episodes to a folder, as arena run does.
type recorder struct {
	dir string
	sc  *scenarios.Scenario
}

func (r recorder) Begin(ep int, w *world.World) (*engine.Journal, error) {
	var ids []string
	for _, a := range w.Agents() {
		ids = append(ids, a.ID)
	}
	return engine.CreateJournal(filepath.Join(r.dir, "replay.jsonl"), engine.JournalHeader{
		Scenario: r.sc.Name, ScenarioFile: json.RawMessage(r.sc.Raw), Seed: w.Seed(), Episode: ep, Agents: ids, Variables: w.Variables(),
		DecisionPeriod: r.sc.Limits.DecisionPeriod, TimeLimit: w.Objective().TimeLimit, InitialHash: world.FormatHash(w.StateHash()),
	})
}

func (r recorder) End(ep int, w *world.World, j *engine.Journal, res *engine.Results, err error) error {
	if res != nil {
		if err := j.WriteEnd(res); err != nil {
			return err
		}
	}
	return j.Close()
}

func TestReplaySource(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const ticks = 40
	if _, err := eval.Episode(context.Background(), eval.Config{Scenario: sc, Seed: 3, Ticks: ticks, Recorder: recorder{dir, sc}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "replay.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := engine.ReadReplay(f)
	if err != nil {
		t.Fatal(err)
	}
	h := rep.Header
	w, err := sc.NewWorld(scenarios.Options{Seed: h.Seed, Agents: len(h.Agents), Ticks: h.TimeLimit})
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewReplaySource(context.Background(), rep, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Frames) != len(rep.Ticks)+1 {
		t.Fatalf("%d frames for %d ticks", len(src.Frames), len(rep.Ticks))
	}
	moved := false
	for i, fr := range src.Frames {
		if fr.Tick != i || len(fr.Agents) != len(h.Agents) || fr.Episode != 1 {
			t.Fatalf("frame %d: tick %d, %d agents, episode %d", i, fr.Tick, len(fr.Agents), fr.Episode)
		}
		if i > 0 && fr.Agents[0].Position != src.Frames[0].Agents[0].Position {
			moved = true
		}
	}
	if !moved {
		t.Error("the first agent never moved in the replay")
	}
	// The frames hold what the live world held: the resources of the
	// scenario, and the obstacles once.
	last := src.Frames[len(src.Frames)-1]
	if res := w.Resources(); len(res) == 0 || countType(last.Entities, "resource") != len(res) {
		t.Fatalf("last frame has %d resources, the world %d", countType(last.Entities, "resource"), len(w.Resources()))
	}
	var m Model
	for _, fr := range src.Poll() {
		m.Apply(fr)
	}
	if m.Tick != 0 || len(m.Static) != len(w.Obstacles()) {
		t.Fatalf("first poll: tick %d, %d obstacles of %d", m.Tick, len(m.Static), len(w.Obstacles()))
	}
	// Seeking forwards hands out every skipped tick's events; backwards, one frame.
	src.Seek(25)
	src.Control("pause", 0)
	frames := src.Poll()
	if len(frames) != 25 || frames[len(frames)-1].Tick != 25 || !frames[len(frames)-1].Paused {
		t.Fatalf("seek to 25: %d frames", len(frames))
	}
	for _, fr := range frames {
		m.Apply(fr)
	}
	// Backwards, the frames from as far back as a bubble lasts (30 ticks at
	// 10 ticks a second: here from the start), only the last one whole.
	src.Seek(10)
	frames = src.Poll()
	if len(frames) != 11 || frames[0].Tick != 0 || frames[10].Tick != 10 || frames[5].Agents != nil || len(frames[10].Agents) != len(h.Agents) {
		t.Fatalf("seek back to 10: %d frames from tick %d", len(frames), frames[0].Tick)
	}
	for _, fr := range frames {
		m.Apply(fr)
	}
	if m.Tick != 10 || len(m.Decisions) != len(h.Agents) || len(m.Static) != len(w.Obstacles()) {
		t.Fatalf("after seeking back: tick %d, %d agents' decisions, %d obstacles", m.Tick, len(m.Decisions), len(m.Static))
	}
	for _, ev := range m.Events {
		if ev.Tick > 9 {
			t.Fatalf("event of tick %d kept after seeking back to 10", ev.Tick)
		}
	}
	// The world's description comes with the first frame; playback follows
	// the scenario's tick rate.
	if m.World == nil || m.World.Scenario != "foraging" || m.World.Mode != "replay" || m.World.TickRate != w.TickRate() || src.TicksPerUpdate != w.TickRate()/UpdatesPerSecond {
		t.Fatalf("world %+v, %v ticks per update", m.World, src.TicksPerUpdate)
	}
	// Inspecting: the frames carry the agent's observation of the tick
	// before (the one its decision answered), decoded by the model.
	id := h.Agents[1]
	m.Selected = id
	src.Inspect(id)
	frames = src.Poll()
	if len(frames) != 1 || frames[0].Inspect == nil || frames[0].Inspect.Agent != id || frames[0].Inspect.Tick != 9 {
		t.Fatalf("inspect while paused: %+v", frames)
	}
	m.Apply(frames[0])
	obs, err := m.Observation()
	if err != nil || obs == nil || obs.AgentID != id || obs.Tick != 9 || len(obs.NearbyResources)+len(obs.NearbyObstacles) == 0 {
		t.Fatalf("observation %+v, %v", obs, err)
	}
	if d := m.Decisions[id]; d.Result.Tick != 9 || d.Tool == "" {
		t.Fatalf("last decision %+v", d)
	}
	text := strings.Join(m.Inspector(), "\n")
	for _, want := range []string{"last decision (tick 9): " + m.Decisions[id].Tool, "result: ", "last observation (tick 9", "sees "} {
		if !strings.Contains(text, want) {
			t.Errorf("inspector lacks %q:\n%s", want, text)
		}
	}
	if lines := m.ObservationLines(); len(lines) < 20 || !strings.Contains(strings.Join(lines, "\n"), `"agent_id": "`+id+`"`) {
		t.Errorf("whole observation: %d lines", len(lines))
	}
	src.Control("step", 1)
	if frames := src.Poll(); len(frames) != 1 || frames[0].Tick != 11 || frames[0].Inspect == nil || frames[0].Inspect.Tick != 10 {
		t.Fatalf("a step with an agent inspected: %+v", frames)
	}
	if err := src.Control("speed", 1000); err == nil {
		t.Error("speed 1000 accepted")
	}
}

func countType(es []ipc.FrameEntity, typ string) int {
	n := 0
	for _, e := range es {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func TestDecisionsBubblesAndObjective(t *testing.T) {
	var m Model
	f := testFrame(1)
	f.World = &ipc.FrameWorld{Scenario: "test", TickRate: 2, Objective: world.Objective{Description: "collect wood",
		SuccessMetrics: map[string]world.MetricTarget{"wood": {Target: 4, Weight: 1, Required: true}}}}
	f.Agents[0].Inventory = map[string]int{"wood": 3}
	f.Agents[0].Metrics = map[string]float64{"wood": 3}
	f.Agents[1].Metrics = map[string]float64{"wood": 5}
	f.Agents[1].Score = 100
	ok := func(tool string) world.ActionResult { return world.ActionResult{Tool: tool, Success: true, Tick: 0} }
	f.Decisions = []engine.DecisionEntry{
		{Agent: "a1", Tool: "send_message", Params: map[string]any{"message": "wood here", "target_agent": "a2"}, Reasoning: "a2 needs wood", Result: ok("send_message")},
		{Agent: "a2", Tool: "speak", Params: map[string]any{"text": "I am the sheriff"}, Result: ok("speak")},
	}
	m.Apply(f)
	events := len(m.Events)
	m.Apply(f) // the same tick again (a server acknowledging a control): nothing twice
	require.Len(t, m.Events, events)
	require.Equal(t, []Bubble{{"a1", 1, "@a2: wood here"}, {"a2", 1, "speak: I am the sheriff"}}, m.Bubbles)
	require.Equal(t, 1.0, m.BubbleAlpha(m.Bubbles[0]))
	m.Selected = "a1"
	text := strings.Join(m.Inspector(), "\n")
	for _, want := range []string{"inventory wood 3", "objective wood 3/4", "last decision (tick 0): send_message\n  {\"message\":\"wood here\",\"target_agent\":\"a2\"}",
		"reasoning: a2 needs wood", "result: ok"} {
		require.Contains(t, text, want)
	}
	require.Equal(t, "objective: collect wood  mean score 51.0/100, 1 of 2 passing", m.ObjectiveProgress())

	// A failed decision says nothing; bubbles fade over BubbleSeconds of
	// world time (2 ticks a second here) and then go.
	f = testFrame(4)
	f.Decisions = []engine.DecisionEntry{{Agent: "a1", Tool: "send_message", Params: map[string]any{"message": "lost"},
		Result: world.ActionResult{Tool: "send_message", ErrorCode: "INVALID_PARAMS", ErrorMessage: "too long"}}}
	m.Apply(f)
	require.Len(t, m.Bubbles, 2)
	require.InDelta(t, 0.5, m.BubbleAlpha(m.Bubbles[0]), 1e-9)
	require.Contains(t, strings.Join(m.Inspector(), "\n"), "result: failed INVALID_PARAMS: too long")
	m.Apply(testFrame(7))
	require.Empty(t, m.Bubbles)
	// The inspector's lines fit its width.
	for _, l := range m.Inspector() {
		require.LessOrEqual(t, len([]rune(l)), InspectorWidth, l)
	}
}

// recordingSource is a Source that remembers what it was asked.
type recordingSource struct {
	ReplaySource
	inspected []string
}

func (s *recordingSource) Inspect(agent string) error {
	s.inspected = append(s.inspected, agent)
	return s.ReplaySource.Inspect(agent)
}

func TestGameSeekFollowAndInspect(t *testing.T) {
	var frames []ipc.Frame
	for tick := 0; tick <= 100; tick++ {
		f := testFrame(tick)
		f.Agents[1].Position = world.Vec3{float64(tick) / 10, 0, 5}
		frames = append(frames, f)
	}
	src := &recordingSource{ReplaySource: ReplaySource{Frames: frames, TicksPerUpdate: 1, playback: playback{speed: 1}, sent: -1}}
	g := NewGame(src)
	g.Layout(800, 600)
	g.Pump()
	g.TogglePause()

	// Typing g 4 2 enter seeks to tick 42; a key that is not a digit is
	// ignored; escape cancels.
	g.StartSeek()
	for _, k := range []string{"4", "x", "2", "\n"} {
		require.True(t, g.Type(k))
	}
	g.Pump()
	require.Equal(t, 42, g.Model.Tick)
	g.StartSeek()
	g.Type("9")
	g.Type("\x1b")
	_, typing := g.Typing()
	require.False(t, typing)
	require.False(t, g.Type("1"), "keys go to the seek prompt only while it is open")

	// The timeline maps a click to a tick, and back.
	x, y, w, h, ok := g.Timeline()
	require.True(t, ok)
	g.Click(x+w/4, y+h/2)
	g.Pump()
	require.Equal(t, 25, g.Model.Tick)
	require.InDelta(t, 0.25, g.TimelineProgress(), 1e-9)
	g.SeekBy(-30)
	g.Pump()
	require.Equal(t, 0, g.Model.Tick, "seeking clamps to the start")

	// Selecting asks the source for observations; following keeps the agent
	// in the middle as it moves; deselecting stops both.
	g.Seek(50)
	g.Pump()
	sx, sy := g.Camera.WorldToScreen(5, 5)
	g.Click(sx, sy)
	require.Equal(t, "a2", g.Model.Selected)
	require.Equal(t, []string{"a2"}, src.inspected)
	g.Follow = true
	g.Seek(80)
	g.Pump()
	require.Equal(t, 8.0, g.Camera.CenterX)
	require.Equal(t, 5.0, g.Camera.CenterZ)
	g.Select("")
	require.False(t, g.Follow)
	require.Equal(t, []string{"a2", ""}, src.inspected)

	// A live source cannot seek: the HUD says so.
	lg := NewGame(&LiveSource{})
	lg.Seek(3)
	require.Contains(t, lg.HUD(), "seek: only a replay can seek")
	_, _, _, _, ok = lg.Timeline()
	require.False(t, ok)
}

func TestReplayObservationsPastTheBudget(t *testing.T) {
	r := &ReplaySource{inspect: "a1", ObservationsUntil: 1, truncated: true,
		obs: map[string][]obsAt{"a1": {{0, []byte{0xa0}}, {1, []byte{0xa1}}}}}
	for tick := 0; tick <= 4; tick++ {
		r.Frames = append(r.Frames, testFrame(tick))
	}
	require.Nil(t, r.inspection(0), "nothing decided before the first tick")
	require.Equal(t, 0, r.inspection(1).Tick)
	require.Equal(t, 1, r.inspection(2).Tick)
	require.Nil(t, r.inspection(3), "past the budget: no observation rather than an old one")
	r.truncated = false
	require.Equal(t, 1, r.inspection(4).Tick, "with decisions every few ticks, the last decision point's")
}

// The whole observation (the inspector's `o` view) of an agent of every
// built-in scenario, as a live server or a replay sends it (CBOR, whose
// nested maps decode as map[any]any), renders as JSON with its component
// sections.
func TestObservationLinesEveryScenario(t *testing.T) {
	codec, err := ipc.NewCodec(ipc.Limits{})
	require.NoError(t, err)
	for _, name := range scenarios.Builtin() {
		sc, err := scenarios.Load(name)
		require.NoError(t, err)
		w, err := sc.NewWorld(scenarios.Options{Seed: 1})
		require.NoError(t, err)
		for range 3 {
			w.Step()
		}
		a := w.Agents()[0]
		raw, err := codec.Marshal(w.Observe(a))
		require.NoError(t, err, name)
		var m Model
		m.Selected = a.ID
		m.Inspect = &ipc.FrameInspect{Agent: a.ID, Tick: w.Tick(), Observation: raw}
		lines := strings.Join(m.ObservationLines(), "\n")
		require.NotContains(t, lines, "unsupported type", name)
		require.Contains(t, lines, `"agent_id": "`+a.ID+`"`, name)
		for comp := range w.Observe(a).Components {
			require.Contains(t, lines, `"`+comp+`": {`, "%s: section %s", name, comp)
		}
	}
}

// Bubbles stack up clear of each other, but never under the HUD: with no
// room above, they go below the agent, and with no room there either they
// stay inside the view.
func TestPlaceBubble(t *testing.T) {
	view := image.Rect(0, 100, 400, 300)
	bubble := func(y int) image.Rectangle { return image.Rect(50, y-20, 150, y) }
	cases := []struct {
		name   string
		r      image.Rectangle
		placed []image.Rectangle
		want   image.Rectangle
	}{
		{"alone", bubble(200), nil, bubble(200)},
		{"pushed up", bubble(200), []image.Rectangle{bubble(200)}, bubble(178)},
		{"pushed up twice", bubble(200), []image.Rectangle{bubble(200), bubble(178)}, bubble(156)},
		{"no room above: below the agent", bubble(140), []image.Rectangle{bubble(140)}, image.Rect(50, 160, 150, 180)},
		{"below, pushed down", bubble(140), []image.Rectangle{bubble(140), image.Rect(50, 160, 150, 180)}, image.Rect(50, 182, 150, 202)},
		{"above the view at first", bubble(110), nil, image.Rect(50, 130, 150, 150)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := placeBubble(c.r, c.placed, view, c.r.Max.Y+20)
			require.Equal(t, c.want, got)
			require.GreaterOrEqual(t, got.Min.Y, view.Min.Y+2, "not under the HUD")
		})
	}
	// No room anywhere: inside the view all the same.
	var full []image.Rectangle
	for y := 100; y < 300; y += 22 {
		full = append(full, bubble(y+20))
	}
	got := placeBubble(bubble(150), full, view, 170)
	require.True(t, got.In(view.Inset(2)), "%v in %v", got, view)
}
