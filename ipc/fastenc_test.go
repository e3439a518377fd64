package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/x448/float16"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/rlarrays"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

func newFastEncoder(t testing.TB) (*fastEncoder, cbor.EncMode) {
	t.Helper()
	enc, err := cbor.CoreDetEncOptions().UserBufferEncMode()
	if err != nil {
		t.Fatal(err)
	}
	return &fastEncoder{enc: enc}, enc
}

func requireSameEncoding(t *testing.T, fe *fastEncoder, ref cbor.EncMode, v any) {
	t.Helper()
	want, werr := ref.Marshal(v)
	got, gerr := fe.Append(nil, v)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%T: fxamacker error %v, fast encoder error %v", v, werr, gerr)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%T %+v:\nfxamacker %x\nfast      %x", v, v, want, got)
	}
}

func TestFastEncoderFloats(t *testing.T) {
	fe, ref := newFastEncoder(t)
	check := func(f float64) {
		want, _ := ref.Marshal(f)
		if got := appendFloat(nil, f, true); !bytes.Equal(want, got) {
			t.Fatalf("float64 %v (%016x): want %x, got %x", f, math.Float64bits(f), want, got)
		}
		f32 := float32(f)
		want, _ = ref.Marshal(f32)
		if got := appendFloat(nil, float64(f32), false); !bytes.Equal(want, got) {
			t.Fatalf("float32 %v (%08x): want %x, got %x", f32, math.Float32bits(f32), want, got)
		}
	}
	// Every half-precision value, and its neighbours as float32 and float64.
	for h := range 1 << 16 {
		f := float64(float16.Frombits(uint16(h)).Float32())
		check(f)
		f32 := float32(f)
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			check(float64(math.Float32frombits(math.Float32bits(f32) + 1)))
			check(float64(math.Float32frombits(math.Float32bits(f32) - 1)))
			check(math.Float64frombits(math.Float64bits(f) + 1))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		check(float64(math.Float32frombits(rng.Uint32())))
		check(math.Float64frombits(rng.Uint64()))
		check(math.Round(rng.NormFloat64()*1e4) / 100) // positions, rounded to two decimals
	}
	for _, f := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64,
		math.SmallestNonzeroFloat64, math.MaxFloat32, math.SmallestNonzeroFloat32, 65504, 65505, 65520, 1.0 / (1 << 24), 1.0 / (1 << 25)} {
		check(f)
		check(-f)
	}
	_ = fe
}

// filler sets random values, including the empty, nil and odd ones that
// encoding rules distinguish, in any Go value.
type filler struct{ rng *rand.Rand }

var oddFloats = []float64{0, math.Copysign(0, -1), 0.5, 1.5, 0.1, 5.83, -2.25, 100, 65504, 70000, 1e-7, 1e300,
	math.NaN(), math.Inf(1), math.Inf(-1), 3.4028234663852886e38}

func (f *filler) float() float64 {
	if f.rng.IntN(2) == 0 {
		return oddFloats[f.rng.IntN(len(oddFloats))]
	}
	return math.Round(f.rng.NormFloat64()*5000) / 100
}

func (f *filler) str() string {
	const chars = "abcxyz_ABZ019é—"
	n := f.rng.IntN(4)
	if f.rng.IntN(4) == 0 {
		n = f.rng.IntN(40)
	}
	r := []rune(chars)
	s := make([]rune, n)
	for i := range s {
		s[i] = r[f.rng.IntN(len(r))]
	}
	return string(s)
}

func (f *filler) any(depth int) any {
	switch f.rng.IntN(7) {
	case 0:
		return nil
	case 1:
		return f.rng.IntN(1000) - 500
	case 2:
		return f.str()
	case 3:
		return f.float()
	case 4:
		return f.rng.IntN(2) == 0
	case 5:
		if depth > 3 {
			return nil
		}
		return []any{f.any(depth + 1), f.any(depth + 1)}
	}
	if depth > 3 {
		return uint64(7)
	}
	return map[string]any{f.str(): f.any(depth + 1), f.str(): f.any(depth + 1)}
}

func (f *filler) fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch f.rng.IntN(4) {
		case 0:
			v.SetInt(0)
		case 1:
			v.SetInt(int64(f.rng.IntN(50)) - 25)
		default:
			x := f.rng.Int64() >> f.rng.IntN(63)
			if f.rng.IntN(2) == 0 {
				x = -x
			}
			if !v.OverflowInt(x) {
				v.SetInt(x)
			}
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x := f.rng.Uint64() >> f.rng.IntN(64)
		if !v.OverflowUint(x) {
			v.SetUint(x)
		}
	case reflect.Float32, reflect.Float64:
		v.SetFloat(f.float())
	case reflect.String:
		v.SetString(f.str())
	case reflect.Pointer:
		if depth > 5 || f.rng.IntN(3) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Interface:
		if x := f.any(depth); x != nil && reflect.TypeOf(x).AssignableTo(v.Type()) {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.Slice:
		switch k := f.rng.IntN(5); {
		case k == 0 || depth > 5:
			return // nil
		case k == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + f.rng.IntN(4)
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				f.fill(s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		switch k := f.rng.IntN(5); {
		case k == 0 || depth > 5:
			return
		case k == 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + f.rng.IntN(5) {
				k := reflect.New(v.Type().Key()).Elem()
				f.fill(k, depth+1)
				val := reflect.New(v.Type().Elem()).Elem()
				f.fill(val, depth+1)
				m.SetMapIndex(k, val)
			}
			v.Set(m)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(f.rng.Int64N(1<<40), 0).UTC()))
			return
		}
		if v.Type() == reflect.TypeFor[big.Int]() {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && f.rng.IntN(8) != 0 { // some fields stay zero
				f.fill(v.Field(i), depth+1)
			}
		}
	}
}

// Types that exercise what the fast encoder hands to fxamacker/cbor.
type (
	zooMarshaler struct{ X int }
	zooEmbedded  struct {
		A int `json:"a"`
	}
	zooKeyAsInt struct {
		A int `cbor:"1,keyasint"`
	}
	zooToArray struct {
		_ struct{} `cbor:",toarray"`
		A int
		B string
	}
	zooOmitZero struct {
		A int       `json:"a,omitzero"`
		T time.Time `json:"t,omitzero"`
	}
	zooRecursive struct {
		Name string        `json:"name"`
		Next *zooRecursive `json:"next,omitempty"`
		Kids []zooRecursive
	}
	zooEmpty   struct{}
	zooAllOmit struct {
		A int    `json:"a,omitempty"`
		B string `json:"b,omitempty"`
	}
	zoo struct {
		Bytes     []byte            `json:"bytes"`
		ByteArr   [3]byte           `json:"byte_arr"`
		Raw       cbor.RawMessage   `json:"raw"`
		Time      time.Time         `json:"time"`
		IntKeys   map[int]string    `json:"int_keys"`
		Marshal   zooMarshaler      `json:"marshal"`
		MarshalP  *zooMarshaler     `json:"marshal_p,omitempty"`
		Embedded  zooWithEmbedding  `json:"embedded"`
		KeyAsInt  zooKeyAsInt       `json:"key_as_int"`
		ToArray   zooToArray        `json:"to_array"`
		OmitZero  zooOmitZero       `json:"omit_zero"`
		Recursive zooRecursive      `json:"recursive"`
		Empty     zooEmpty          `json:"empty,omitempty"`
		AllOmit   zooAllOmit        `json:"all_omit,omitempty"`
		Any       any               `json:"any"`
		Anys      []any             `json:"anys,omitempty"`
		Nested    map[string][]*int `json:"nested"`
		Untagged  int
		CBORTag   string `cbor:"cbor_name" json:"json_name"`
		EmptyCBOR string `cbor:"" json:"from_json,omitempty"`
		Dash      int    `json:"-"`
		//lint:ignore SA5008 a field named "-" is one of the cases under test
		DashComma int    `json:"-,"`
		Uint8     uint8  `json:"u8"`
		BytesOmit []byte `json:"bytes_omit,omitempty"`
		Float32   float32
		LongName  string `json:"a_key_that_is_longer_than_twenty_three_bytes"`
		unexp     int    //lint:ignore U1000 unexported fields are one of the cases under test
	}
	zooWithEmbedding struct {
		zooEmbedded
		B int `json:"b"`
	}
)

func (m zooMarshaler) MarshalCBOR() ([]byte, error) { return cbor.Marshal([]int{m.X, m.X}) }

func TestFastEncoderMatchesCBOR(t *testing.T) {
	fe, ref := newFastEncoder(t)
	f := &filler{rng: rand.New(rand.NewPCG(5, 6))}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[ObservationMsg](), reflect.TypeFor[world.Observation](), reflect.TypeFor[Welcome](),
		reflect.TypeFor[Frame](), reflect.TypeFor[EpisodeEnd](), reflect.TypeFor[engine.Results](), reflect.TypeFor[Result](),
		reflect.TypeFor[zoo](), reflect.TypeFor[map[string]any](), reflect.TypeFor[[]world.EntityView](),
	} {
		t.Run(typ.String(), func(t *testing.T) {
			for range 3000 {
				v := reflect.New(typ)
				f.fill(v.Elem(), 0)
				requireSameEncoding(t, fe, ref, v.Elem().Interface())
				requireSameEncoding(t, fe, ref, v.Interface()) // through a pointer
			}
		})
	}
	for _, v := range []any{nil, 1, -1, uint64(math.MaxUint64), int64(math.MinInt64), "", "x", []int(nil), []int{}, map[string]int(nil),
		map[string]int{}, (*world.Observation)(nil), [0]int{}, zooEmpty{}, &zooEmpty{}, true, false} {
		requireSameEncoding(t, fe, ref, v)
	}
}

// encodedObservation decodes the head of a frame, for messages in tests.
func frameLen(b []byte) int { return int(binary.BigEndian.Uint32(b)) }

func TestMarshalFrameMatchesMarshal(t *testing.T) {
	c, err := NewCodec(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	f := &filler{rng: rand.New(rand.NewPCG(7, 8))}
	for i := range 500 {
		var msg ObservationMsg
		f.fill(reflect.ValueOf(&msg).Elem(), 0)
		msg.OmitAgentIDs = i%2 == 1
		msg.Embed = i%3 == 1
		want := marshalWithoutAgentIDs(t, c, msg)
		frame, err := c.marshalFrame(msg)
		if err != nil {
			t.Fatal(err)
		}
		if frameLen(frame) != len(frame)-4 || !bytes.Equal(frame[4:], want) {
			t.Fatalf("message %d: frame %x, want payload %x", i, frame, want)
		}
		releaseFrame(frame)
	}
	_ = fmt.Sprint()
}

// marshalWithoutAgentIDs is what the codec's fxamacker/cbor mode makes of
// msg, with its observation's agent_ids removed when msg.OmitAgentIDs says so.
func marshalWithoutAgentIDs(t *testing.T, c *Codec, msg ObservationMsg) []byte {
	t.Helper()
	want, err := c.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !(msg.OmitAgentIDs || msg.Embed) || msg.Observation == nil {
		return want
	}
	var m map[string]any
	if err := cbor.Unmarshal(want, &m); err != nil {
		t.Fatal(err)
	}
	obs := m["observation"].(map[any]any)
	ids, ok := obs["agent_ids"]
	if !ok {
		t.Fatal("the reference encoding has no agent_ids")
	}
	delete(obs, "agent_ids")
	if msg.Embed { // the map in a byte string, score, alive and the roster beside it
		delete(m, "observation")
		if m["observation_cbor"], err = c.Marshal(obs); err != nil {
			t.Fatal(err)
		}
		m["score"], m["alive"] = obs["score"], obs["alive"]
		if !msg.OmitAgentIDs {
			m["agent_ids"] = ids
		}
	}
	if want, err = c.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return want
}

func TestMarshalFrameRealObservations(t *testing.T) {
	c, err := NewCodec(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range realObservations(t) {
		msg := ObservationMsg{Type: "observation", Tick: o.Tick, DeadlineMS: 5000 * (i % 2), Observation: o,
			OmitAgentIDs: i%3 != 0, AgentsLeft: o.AgentIDs[:i%3]}
		if i%4 == 1 {
			msg.Arrays = &rlarrays.Arrays{F32: []byte{0, 0, 128, 63}, I64: []byte{}, Mask: []byte{1, 0, 1}}
		}
		msg.Embed = i%5 >= 3
		want := marshalWithoutAgentIDs(t, c, msg)
		frame, err := c.marshalFrame(msg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(frame[4:], want) {
			t.Fatalf("observation %d (omit %v):\nframe %x\nwant  %x", i, msg.OmitAgentIDs, frame[4:], want)
		}
		releaseFrame(frame)
	}
}

func TestFastEncoderCompilesObservations(t *testing.T) {
	fe, _ := newFastEncoder(t)
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t2 reflect.Type) {
		if seen[t2] {
			return
		}
		seen[t2] = true
		if p := fe.planFor(t2); p.delegated {
			t.Logf("%v is encoded by fxamacker/cbor (slower, same bytes)", t2)
		}
		switch t2.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(t2.Elem())
		case reflect.Struct:
			for i := range t2.NumField() {
				if t2.Field(i).IsExported() {
					walk(t2.Field(i).Type)
				}
			}
		}
	}
	walk(reflect.TypeFor[ObservationMsg]())
	if fe.planFor(reflect.TypeFor[ObservationMsg]()).delegated || fe.planFor(reflect.TypeFor[world.Observation]()).delegated {
		t.Fatal("observations are not compiled")
	}
}

// realObservations are the observations of 100 agents on a 100×100 world
// (the lockstep benchmark's sort) after some ticks of built-in foragers.
func realObservations(t testing.TB) []*world.Observation {
	t.Helper()
	sc, err := scenarios.Load("foraging")
	if err != nil {
		t.Fatal(err)
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: 2, Agents: 16})
	if err != nil {
		t.Fatal(err)
	}
	ctrls := engine.Controllers{}
	for _, a := range w.Agents() {
		ctrls[a.ID] = bots.NewForager(bots.Info{AgentID: a.ID, Seed: 2, Bounds: w.Bounds(), Rules: w.Rules()})
	}
	var out []*world.Observation
	for _, until := range []int{20, 40, 60} {
		r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: until}
		if _, err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, a := range w.Agents() {
			out = append(out, w.Observe(a))
		}
	}
	return out
}

func TestFastEncoderRealObservations(t *testing.T) {
	fe, ref := newFastEncoder(t)
	for _, o := range realObservations(t) {
		requireSameEncoding(t, fe, ref, ObservationMsg{Type: "observation", Tick: o.Tick, DeadlineMS: 5000, Observation: o})
	}
}

func BenchmarkEncodeObservation(b *testing.B) {
	c, err := NewCodec(Limits{})
	if err != nil {
		b.Fatal(err)
	}
	obs := realObservations(b)
	b.Run("fxamacker", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			o := obs[i%len(obs)]
			if _, err := c.Marshal(ObservationMsg{Type: "observation", Tick: o.Tick, Observation: o}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("frame", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			o := obs[i%len(obs)]
			f, err := c.marshalFrame(ObservationMsg{Type: "observation", Tick: o.Tick, Observation: o})
			if err != nil {
				b.Fatal(err)
			}
			releaseFrame(f)
		}
	})
	// As the server sends them: the shared parts encoded once per decision
	// point (here, per pass over the observations), without agent_ids.
	b.Run("frame-shared", func(b *testing.B) {
		b.ReportAllocs()
		var sh SharedEncodings
		for i := 0; b.Loop(); i++ {
			if i%len(obs) == 0 {
				sh.Reset()
			}
			o := obs[i%len(obs)]
			f, err := c.marshalFrame(ObservationMsg{Type: "observation", Tick: o.Tick, Observation: o, OmitAgentIDs: true, Shared: &sh})
			if err != nil {
				b.Fatal(err)
			}
			releaseFrame(f)
		}
	})
}

// BenchmarkEncodeCrowdedObservations encodes, as the server sends them (the
// shared parts and entities' encodings kept across one decision point), the
// observations of 1,000 agents 2.8 units apart on a 100×100 field with trees
// and resources: the density of `arena bench --ipc --agents 1000`, where
// each observation lists 16 agents and most of its bytes are entities in
// view. Over IPC at that density encoding is what binds the ratio to the
// echo (docs/performance.md, session 31); ns/obs is the figure to compare,
// for whole observations and for compact ones (session 32), which a
// lockstep server encodes.
func BenchmarkEncodeCrowdedObservations(b *testing.B) {
	cfg := world.Config{Name: "crowd", Seed: 1, TickRate: 10, CellSize: 0.5,
		Bounds: world.Bounds{MinX: -50, MinZ: -50, MaxX: 50, MaxZ: 50}, Rules: world.Rules{PerceptionRadius: 10}}
	for i := range 100 {
		cfg.Obstacles = append(cfg.Obstacles, world.ObstacleSpec{Name: fmt.Sprintf("Tree%d", i), ObstacleType: "tree",
			X: -45 + 10*float64(i%10), Z: -45 + 10*float64(i/10), Shape: "circle", Radius: 0.7})
	}
	for i := range 48 {
		cfg.Resources = append(cfg.Resources, world.ResourceSpec{Name: fmt.Sprintf("R%d", i), ResourceType: "berry",
			X: -42 + 12*float64(i%8), Z: -41 + 16.5*float64(i/8)})
	}
	for i := range 1000 {
		cfg.Agents = append(cfg.Agents, world.AgentSpec{ID: fmt.Sprintf("agent_%04d", i+1),
			X: -44.2 + 2.8*float64(i%32), Z: -44.2 + 2.8*float64(i/32)})
	}
	w, err := world.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	// Whole observations, as in-process controllers get them, and compact
	// ones, as a lockstep server builds them for its remote agents.
	w.BeginObserve()
	w.PrepareCompactObserve()
	k := w.NewWorker()
	whole := make([]*world.Observation, 0, len(w.Agents()))
	compact := make([]*world.Observation, 0, len(w.Agents()))
	for _, a := range w.Agents() {
		whole = append(whole, w.Observe(a))
		o := &world.Observation{}
		k.ObserveCompact(a, o)
		compact = append(compact, o)
	}
	if mid := whole[16*32+16]; len(mid.NearbyAgents) != world.DefaultMaxNearbyAgents || mid.NearbyAgentsMore == 0 {
		b.Fatalf("an agent in the middle lists %d agents and %d more: no crowd", len(mid.NearbyAgents), mid.NearbyAgentsMore)
	}
	c, err := NewCodec(Limits{})
	if err != nil {
		b.Fatal(err)
	}
	for _, obs := range []struct {
		name string
		list []*world.Observation
	}{{"whole", whole}, {"compact", compact}} {
		b.Run(obs.name, func(b *testing.B) {
			var sh SharedEncodings
			b.ReportAllocs()
			for b.Loop() {
				sh.Reset() // a decision point
				for _, o := range obs.list {
					f, err := c.marshalObservation(&ObservationMsg{Type: "observation", Tick: o.Tick, Observation: o, OmitAgentIDs: true, Shared: &sh})
					if err != nil {
						b.Fatal(err)
					}
					releaseFrame(f)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(obs.list)), "ns/obs")
			if sh.viewHits < 10*sh.viewMisses {
				b.Fatalf("%d entities from a kept encoding, %d encoded anew: the crowd shares too little", sh.viewHits, sh.viewMisses)
			}
		})
	}
}

// TestFastEncoderCrowdedObservation: an observation in a crowd (more agents
// in view than it lists) carries nearby_agents_more through the fast
// encoder, with the same bytes as the reference encoder.
func TestFastEncoderCrowdedObservation(t *testing.T) {
	cfg := world.Config{Name: "crowd", Seed: 1, Bounds: world.Bounds{MinX: -20, MinZ: -20, MaxX: 20, MaxZ: 20}}
	for i := range 20 {
		cfg.Agents = append(cfg.Agents, world.AgentSpec{ID: fmt.Sprintf("a%02d", i), X: float64(i%5) - 2, Z: float64(i/5) - 2})
	}
	w, err := world.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := w.Observe(w.Agent("a00"))
	if len(o.NearbyAgents) != world.DefaultMaxNearbyAgents || o.NearbyAgentsMore != 19-world.DefaultMaxNearbyAgents {
		t.Fatalf("%d agents listed and %d more, want %d and %d", len(o.NearbyAgents), o.NearbyAgentsMore, world.DefaultMaxNearbyAgents, 19-world.DefaultMaxNearbyAgents)
	}
	fe, ref := newFastEncoder(t)
	msg := ObservationMsg{Type: "observation", Tick: o.Tick, Observation: o}
	requireSameEncoding(t, fe, ref, msg)
	c, err := NewCodec(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	frame, err := c.marshalFrame(msg)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseFrame(frame)
	var m struct {
		Observation map[string]any `cbor:"observation"`
	}
	if err := cbor.Unmarshal(frame[4:], &m); err != nil {
		t.Fatal(err)
	}
	if got := m.Observation["nearby_agents_more"]; got != uint64(19-world.DefaultMaxNearbyAgents) {
		t.Fatalf("nearby_agents_more on the wire is %v (%T)", got, got)
	}
}

// TestSharedEncodings: with a SharedEncodings, the parts observations share
// are encoded once and the frames are the same bytes; a part at another
// address, or one changed after Reset, is encoded anew.
func TestSharedEncodings(t *testing.T) {
	c, err := NewCodec(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	frame := func(o *world.Observation, sh *SharedEncodings) []byte {
		t.Helper()
		f, err := c.marshalFrame(ObservationMsg{Type: "observation", Tick: o.Tick, Observation: o, OmitAgentIDs: true, Shared: sh})
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Clone(f)
	}
	var sh SharedEncodings
	obs := realObservations(t)
	for _, o := range obs {
		if want, got := frame(o, nil), frame(o, &sh); !bytes.Equal(want, got) {
			t.Fatalf("with shared encodings:\n%x\nwithout:\n%x", got, want)
		}
	}
	if len(sh.m) != 2 { // the objective and the recipes, once each
		t.Fatalf("%d shared encodings remembered, want 2", len(sh.m))
	}

	// Parts of their own, and parts changed after Reset.
	mk := func(goal string, vars map[string]any) *world.Observation {
		o := *obs[0]
		o.Objective = &world.Objective{Description: goal, TimeLimit: 10}
		o.Variables = vars
		return &o
	}
	sh.Reset()
	shared := map[string]any{"round": 1.0, "phase": "day"}
	cases := []*world.Observation{mk("a", shared), mk("b", shared), mk("a", map[string]any{"round": 2.0}), mk("c", nil)}
	for i, o := range cases {
		if want, got := frame(o, nil), frame(o, &sh); !bytes.Equal(want, got) {
			t.Fatalf("case %d: with shared encodings:\n%x\nwithout:\n%x", i, got, want)
		}
	}
	shared["phase"] = "night"
	cases[0].Objective.Description = "changed"
	sh.Reset()
	for i, o := range cases[:2] {
		if want, got := frame(o, nil), frame(o, &sh); !bytes.Equal(want, got) {
			t.Fatalf("after Reset, case %d: with shared encodings:\n%x\nwithout:\n%x", i, got, want)
		}
	}
}

// observationFrames returns a function that encodes an observation's frame,
// with sh (nil: none).
func observationFrames(t *testing.T) func(o *world.Observation, sh *SharedEncodings) []byte {
	c, err := NewCodec(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return func(o *world.Observation, sh *SharedEncodings) []byte {
		t.Helper()
		f, err := c.marshalFrame(ObservationMsg{Type: "observation", Tick: o.Tick, Observation: o, OmitAgentIDs: true, Shared: sh})
		if err != nil {
			t.Fatal(err)
		}
		defer releaseFrame(f)
		return bytes.Clone(f)
	}
}

// TestSharedEncodingsOfEntities: entities in view encoded once and copied
// around each view's distance give the same frames as the plain encoder,
// over whole episodes of the built-in scenarios whose entities move, change
// and come and go (crafting: stations in use; team capture: capture points
// and teammates; foraging: resources collected), with Reset after every
// decision point as the server does.
func TestSharedEncodingsOfEntities(t *testing.T) {
	frame := observationFrames(t)
	for _, name := range []string{"foraging", "crafting", "team_capture"} {
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			w, err := sc.NewWorld(scenarios.Options{Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			ctrls := engine.Controllers{}
			for _, a := range w.Agents() {
				b, err := bots.New(sc.Agents.Bot, bots.Info{AgentID: a.ID, Seed: 3, Bounds: w.Bounds(), Rules: w.Rules()})
				if err != nil {
					t.Fatal(err)
				}
				ctrls[a.ID] = b
			}
			var sh SharedEncodings
			r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 150, OnObserve: func(tick int, obs []*world.Observation) {
				for _, o := range obs {
					if o != nil {
						if want, got := frame(o, nil), frame(o, &sh); !bytes.Equal(want, got) {
							t.Fatalf("tick %d, %s: with shared encodings:\n%x\nwithout:\n%x", tick, o.AgentID, got, want)
						}
					}
				}
				sh.Reset()
			}}
			if _, err := r.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d ticks: %d entities in view from a kept encoding, %d encoded anew", w.Tick(), sh.viewHits, sh.viewMisses)
			if sh.viewHits < 2*sh.viewMisses {
				t.Fatalf("%d entities in view from a kept encoding, %d encoded anew", sh.viewHits, sh.viewMisses)
			}
		})
	}
}

// TestSharedEncodingsOfEntitiesCompareEveryField: a kept entity encoding is
// used only for a view that encodes alike but for its distance: every other
// field changed, a pointer's value changed after the encoding was kept, and
// 0 against -0, are each encoded anew.
func TestSharedEncodingsOfEntitiesCompareEveryField(t *testing.T) {
	frame := observationFrames(t)
	base := *realObservations(t)[0]
	yes, no, half, zero := true, false, 0.5, 0.0
	e := world.EntityView{Name: "E1", Type: "station", StationType: "workbench", Position: world.Vec3{1.25, 0, -3.5},
		Distance: 2.5, InUse: &no}
	variants := map[string]func(v *world.EntityView){
		"same":          func(v *world.EntityView) {},
		"distance":      func(v *world.EntityView) { v.Distance = 7.25 },
		"type":          func(v *world.EntityView) { v.Type = "resource" },
		"resource_type": func(v *world.EntityView) { v.ResourceType = "wood" },
		"station_type":  func(v *world.EntityView) { v.StationType = "forge" },
		"hazard_type":   func(v *world.EntityView) { v.HazardType = "fire" },
		"obstacle_type": func(v *world.EntityView) { v.ObstacleType = "rock" },
		"position":      func(v *world.EntityView) { v.Position[2] = -3.25 },
		"position -0":   func(v *world.EntityView) { v.Position[1] = math.Copysign(0, -1) },
		"in_use":        func(v *world.EntityView) { v.InUse = &yes },
		"in_use nil":    func(v *world.EntityView) { v.InUse = nil },
		"radius":        func(v *world.EntityView) { v.Radius = 1.5 },
		"entry_damage":  func(v *world.EntityView) { v.EntryDamage = 3 },
		"dps":           func(v *world.EntityView) { v.DamagePerSecond = 4 },
		"amount":        func(v *world.EntityView) { v.Amount = 5 },
		"team":          func(v *world.EntityView) { v.Team = "red" },
		"health":        func(v *world.EntityView) { v.Health = 90 },
		"action":        func(v *world.EntityView) { v.Action = "moving" },
		"owner":         func(v *world.EntityView) { v.Owner = "blue" },
		"progress":      func(v *world.EntityView) { v.Progress = &half },
		"progress 0":    func(v *world.EntityView) { v.Progress = &zero },
		"capturing":     func(v *world.EntityView) { v.Capturing = "red" },
		"contested":     func(v *world.EntityView) { v.Contested = true },
	}
	// Every field of EntityView but the name is changed by a variant (a new
	// field needs one).
	if n := reflect.TypeFor[world.EntityView]().NumField(); n-1 != len(variants)-4 {
		t.Fatalf("EntityView has %d fields, the variants change %d", n, len(variants)-4)
	}
	var sh SharedEncodings
	// Views without pointers are compared by their bytes first, those with
	// field by field.
	noPointers := e
	noPointers.InUse = nil
	for name, change := range variants {
		for _, first := range []bool{true, false} { // the variant kept, or the original
			for _, e := range []world.EntityView{e, noPointers} {
				sh.Reset()
				sh.Reset() // nothing kept
				o1, o2 := base, base
				v1, v2 := e, e
				change(&v2)
				if !first {
					v1, v2 = v2, v1
				}
				o1.NearbyStations, o2.NearbyStations = []world.EntityView{v1}, []world.EntityView{v2}
				frame(&o1, &sh)
				if want, got := frame(&o2, nil), frame(&o2, &sh); !bytes.Equal(want, got) {
					t.Fatalf("%s (first %v, in_use %v): with shared encodings:\n%x\nwithout:\n%x", name, first, e.InUse, got, want)
				}
			}
		}
	}
	// The value behind a pointer changes after the encoding is kept.
	sh.Reset()
	inUse := false
	o1, o2 := base, base
	v1, v2 := e, e
	v1.InUse, v2.InUse = &inUse, &yes
	v1.Name, v2.Name = "P1", "P1" // not kept yet
	o1.NearbyStations, o2.NearbyStations = []world.EntityView{v1}, []world.EntityView{v2}
	frame(&o1, &sh)
	inUse = true
	if want, got := frame(&o2, nil), frame(&o2, &sh); !bytes.Equal(want, got) {
		t.Fatalf("pointer changed: with shared encodings:\n%x\nwithout:\n%x", got, want)
	}
	// Reset drops what no observation used since the previous one.
	if len(sh.views) == 0 {
		t.Fatal("no entity encoding kept")
	}
	sh.Reset()
	if len(sh.views) == 0 {
		t.Fatal("an entity seen since the last Reset was dropped")
	}
	sh.Reset()
	if len(sh.views) != 0 {
		t.Fatalf("%d entity encodings kept after two Resets without use", len(sh.views))
	}
}

// TestCompactObservationsEncodeAsExpanded: a compact observation
// (world.Worker.ObserveCompact) encodes to the bytes of the ordinary one,
// with a SharedEncodings over several decision points (agents walking, one
// hurt, teams, resources, trees and mud in view), without one, and
// embedded (observation_cbor), and the shared encoding of each entity's
// view is made once per decision point.
func TestCompactObservationsEncodeAsExpanded(t *testing.T) {
	cfg := world.Config{Name: "crowd", Seed: 1, TickRate: 10, CellSize: 0.5,
		Bounds: world.Bounds{MinX: -20, MinZ: -20, MaxX: 20, MaxZ: 20}, Rules: world.Rules{PerceptionRadius: 6, MaxNearbyAgents: 5}}
	for i := range 60 {
		a := world.AgentSpec{ID: fmt.Sprintf("a%02d", i), X: 1.5*float64(i%10) - 7, Z: 1.5*float64(i/10) - 4}
		if i%3 == 0 {
			a.Team = "red"
		}
		cfg.Agents = append(cfg.Agents, a)
	}
	for i := range 8 {
		x, z := 3*float64(i%4)-5, 4*float64(i/4)-2
		cfg.Obstacles = append(cfg.Obstacles, world.ObstacleSpec{Name: fmt.Sprintf("T%d", i), ObstacleType: "tree", X: x + 0.7, Z: z + 0.7, Radius: 0.3})
		cfg.Resources = append(cfg.Resources, world.ResourceSpec{Name: fmt.Sprintf("R%d", i), ResourceType: "berry", X: x - 0.7, Z: z - 0.7, Amount: 2})
	}
	cfg.Hazards = append(cfg.Hazards, world.HazardSpec{Name: "Mud", HazardType: "mud", X: 0, Z: 9, Radius: 1.5})
	w, err := world.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCodec(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	encode := func(o *world.Observation, sh *SharedEncodings, embed bool) []byte {
		f, err := c.marshalObservation(&ObservationMsg{Type: "observation", Tick: o.Tick, Observation: o, Shared: sh, Embed: embed})
		if err != nil {
			t.Fatal(err)
		}
		defer releaseFrame(f)
		return bytes.Clone(f)
	}
	k := w.NewWorker()
	kept := make([]world.Observation, len(w.Agents()))
	var sh, shFull SharedEncodings
	var listed [world.ViewLists]int
	for point := range 4 {
		w.BeginObserve()
		w.PrepareCompactObserve()
		misses := sh.viewMisses
		for i, a := range w.Agents() {
			o := &kept[i]
			k.ObserveCompact(a, o)
			full := w.Observe(a)
			for l := range world.ViewLists {
				refs, _ := o.Compact(l)
				listed[l] += len(refs)
			}
			want := encode(full, &shFull, false)
			if got := encode(o, &sh, false); !bytes.Equal(got, want) {
				t.Fatalf("decision point %d, %s: compact %x\nordinary %x", point, a.ID, got, want)
			}
			if got := encode(o, nil, false); !bytes.Equal(got, want) {
				t.Fatalf("decision point %d, %s: compact without shared encodings differs", point, a.ID)
			}
			if got, want := encode(o, &sh, true), encode(full, &shFull, true); !bytes.Equal(got, want) {
				t.Fatalf("decision point %d, %s: compact embedded differs", point, a.ID)
			}
		}
		// Each entity's view once as listed, and each agent's once more as
		// a teammate (teammates are ordinary views) for the 20 of team red.
		if made, most := sh.viewMisses-misses, len(w.Agents())+20+8+8+1; made > most {
			t.Fatalf("decision point %d: %d views encoded anew, at most %d expected", point, made, most)
		}
		sh.Reset()
		shFull.Reset()
		// The world changes: agents walk, one is hurt.
		for i, a := range w.Agents() {
			if i%4 == point%4 {
				w.MoveTo(a, world.Vec3{float64(i%7) - 3, 0, float64(i%5) - 2}, 1)
			}
		}
		w.Damage(w.Agents()[point*7], 12.5, "test")
		w.Step()
		w.Step()
	}
	for l, n := range listed {
		if n == 0 {
			t.Fatalf("list %d never in view", l)
		}
	}
}
