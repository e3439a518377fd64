package ipc

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

// A fastEncoder encodes values exactly as the codec's Core Deterministic mode
// (cbor.CoreDetEncOptions) does, byte for byte, only faster: it compiles an
// encoder per Go type once, by reflection, instead of looking up its cached
// description for every value, and it sorts a map's text keys before
// encoding its pairs rather than sorting the encoded pairs.
//
// It handles booleans, integers, floats, text strings, arrays, slices,
// pointers, interfaces, maps with text keys, and structs whose fields are
// plain (named by a cbor or json tag or the field name, with omitempty or
// nothing), and byte slices. Everything else (byte arrays, marshalers, time.Time, big.Int,
// embedded structs, keyasint, toarray, omitzero, other map keys, ...) is
// handed to fxamacker/cbor for that value, so any type encodes correctly; it
// is only faster for the plain ones. Observations are plain all the way down.
// TestFastEncoderMatchesCBOR holds the two to the same bytes.
type fastEncoder struct {
	enc   cbor.UserBufferEncMode
	plans sync.Map // reflect.Type -> *plan
	mu    sync.Mutex

	rosterless     sync.Once
	obsNoAgentIDs  *plan // world.Observation without agent_ids
	obsWithAgentID *plan // world.Observation
}

type encodeFn func(b []byte, v reflect.Value) ([]byte, error)

// plan is a type's compiled encoder. emptyFn reports whether a value counts
// as empty for omitempty; delegated plans have none (a struct with an
// omitempty field of such a type is delegated whole).
type plan struct {
	fn encodeFn
	// fnShared, for a struct, encodes it with the encodings of the parts it
	// shares by reference taken from (and added to) s; fn is fnShared with
	// no s.
	fnShared  func(b []byte, v reflect.Value, s *SharedEncodings) ([]byte, error)
	emptyFn   func(v reflect.Value) bool
	delegated bool
	leaf      leafKind // scalars, encoded inline by their containers
	// views, for world.EntityView, encodes entities in view through a
	// SharedEncodings; viewsShared, for a slice of them, uses it.
	views       *viewPlan
	viewsShared func(b []byte, v reflect.Value, s *SharedEncodings) []byte
	// listViews, for a slice of world.EntityView, is its elements' views.
	listViews *viewPlan
}

type leafKind uint8

const (
	notLeaf leafKind = iota
	leafBool
	leafInt
	leafUint
	leafFloat32
	leafFloat64
	leafString
)

// append encodes v, inline for scalars.
func (p *plan) append(b []byte, v reflect.Value) ([]byte, error) {
	switch p.leaf {
	case leafString:
		s := v.String()
		return append(appendHead(b, 0x60, uint64(len(s))), s...), nil
	case leafFloat64:
		return appendFloat(b, v.Float(), true), nil
	case leafInt:
		return appendInt(b, v.Int()), nil
	case leafBool:
		if v.Bool() {
			return append(b, 0xf5), nil
		}
		return append(b, 0xf4), nil
	case leafUint:
		return appendHead(b, 0x00, v.Uint()), nil
	case leafFloat32:
		return appendFloat(b, v.Float(), false), nil
	}
	return p.fn(b, v)
}

// empty reports whether v is empty for omitempty, inline for scalars.
func (p *plan) empty(v reflect.Value) bool {
	switch p.leaf {
	case leafString:
		return v.Len() == 0
	case leafFloat64, leafFloat32:
		return v.Float() == 0
	case leafInt:
		return v.Int() == 0
	case leafBool:
		return !v.Bool()
	case leafUint:
		return v.Uint() == 0
	}
	return p.emptyFn(v)
}

var (
	typeCBORMarshaler   = reflect.TypeFor[cbor.Marshaler]()
	typeBinaryMarshaler = reflect.TypeFor[encoding.BinaryMarshaler]()
	typeTextMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	typeJSONMarshaler   = reflect.TypeFor[json.Marshaler]()
	specialTypes        = map[reflect.Type]bool{
		reflect.TypeFor[cbor.SimpleValue](): true, reflect.TypeFor[cbor.Tag](): true, reflect.TypeFor[cbor.RawTag](): true,
		reflect.TypeFor[time.Time](): true, reflect.TypeFor[big.Int](): true, reflect.TypeFor[cbor.RawMessage](): true,
		reflect.TypeFor[cbor.ByteString](): true,
	}
)

// special reports whether fxamacker/cbor encodes t in a way of its own.
func special(t reflect.Type) bool {
	if specialTypes[t] {
		return true
	}
	p := reflect.PointerTo(t)
	return p.Implements(typeCBORMarshaler) || p.Implements(typeBinaryMarshaler) ||
		p.Implements(typeTextMarshaler) || p.Implements(typeJSONMarshaler)
}

// Append appends the encoding of v to b.
func (e *fastEncoder) Append(b []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return append(b, 0xf6), nil
	}
	return e.planFor(rv.Type()).fn(b, rv)
}

// appendObservationMsg encodes m as Append does, and with m.OmitAgentIDs
// leaves agent_ids out of its observation.
func (e *fastEncoder) appendObservationMsg(b []byte, m *ObservationMsg) ([]byte, error) {
	e.rosterless.Do(func() {
		t := reflect.TypeFor[world.Observation]()
		e.obsWithAgentID = e.planFor(t)
		e.mu.Lock()
		defer e.mu.Unlock()
		building := map[reflect.Type]*plan{}
		p := &plan{}
		e.compileStruct(p, t, building, "agent_ids")
		delete(building, t) // the full plan stays the type's
		for t, q := range building {
			e.plans.Store(t, q)
		}
		e.obsNoAgentIDs = p
	})
	if m.Embed && m.Observation != nil {
		return e.appendEmbedded(b, m)
	}
	// Keys in Core Deterministic order: shorter first, then bytewise.
	n := uint64(3)
	if len(m.AgentsLeft) > 0 {
		n++
	}
	if m.DeadlineMS != 0 {
		n++
	}
	if m.Arrays != nil {
		n++
	}
	b = appendHead(b, 0xa0, n)
	b = appendInt(append(b, "\x64tick"...), int64(m.Tick))
	b = appendText(append(b, "\x64type"...), m.Type)
	b, err := e.appendArrays(b, m)
	if err != nil {
		return b, err
	}
	b = append(appendLeftAndDeadline(b, m), "\x6bobservation"...)
	if m.Observation == nil {
		return append(b, 0xf6), nil
	}
	p := e.obsWithAgentID
	if m.OmitAgentIDs {
		p = e.obsNoAgentIDs
	}
	return p.encodeShared(b, reflect.ValueOf(m.Observation).Elem(), m.Shared)
}

// encodeShared encodes v with the parts shared by reference taken from s
// (and added to it), where the plan can.
func (p *plan) encodeShared(b []byte, v reflect.Value, s *SharedEncodings) ([]byte, error) {
	if p.fnShared == nil { // delegated
		return p.fn(b, v)
	}
	return p.fnShared(b, v, s)
}

// appendArrays appends m's arrays entry, if it has one.
func (e *fastEncoder) appendArrays(b []byte, m *ObservationMsg) ([]byte, error) {
	if m.Arrays == nil {
		return b, nil
	}
	return e.Append(append(b, "\x66arrays"...), m.Arrays)
}

// appendLeftAndDeadline appends m's agents_left and deadline_ms entries,
// those it has.
func appendLeftAndDeadline(b []byte, m *ObservationMsg) []byte {
	if len(m.AgentsLeft) > 0 {
		b = appendHead(append(b, "\x6bagents_left"...), 0x80, uint64(len(m.AgentsLeft)))
		for _, id := range m.AgentsLeft {
			b = appendText(b, id)
		}
	}
	if m.DeadlineMS != 0 {
		b = appendInt(append(b, "\x6bdeadline_ms"...), int64(m.DeadlineMS))
	}
	return b
}

// appendEmbedded encodes m with its observation as observation_cbor (see
// ObservationMsg.Embed).
func (e *fastEncoder) appendEmbedded(b []byte, m *ObservationMsg) ([]byte, error) {
	o := m.Observation
	n := uint64(6) // tick, type, alive, score, arrays?, observation_cbor
	if m.Arrays == nil {
		n--
	}
	if !m.OmitAgentIDs {
		n++
	}
	if len(m.AgentsLeft) > 0 {
		n++
	}
	if m.DeadlineMS != 0 {
		n++
	}
	b = appendHead(b, 0xa0, n)
	b = appendInt(append(b, "\x64tick"...), int64(m.Tick))
	b = appendText(append(b, "\x64type"...), m.Type)
	alive := byte(0xf4)
	if o.Alive {
		alive = 0xf5
	}
	b = append(append(b, "\x65alive"...), alive)
	b = appendFloat(append(b, "\x65score"...), o.Score, true)
	b, err := e.appendArrays(b, m)
	if err != nil {
		return b, err
	}
	if !m.OmitAgentIDs && o.AgentIDs == nil {
		b = append(b, "\x69agent_ids\xf6"...) // as the observation would have it
	} else if !m.OmitAgentIDs {
		b = appendHead(append(b, "\x69agent_ids"...), 0x80, uint64(len(o.AgentIDs)))
		for _, id := range o.AgentIDs {
			b = appendText(b, id)
		}
	}
	b = append(appendLeftAndDeadline(b, m), "\x70observation_cbor"...)
	// The map is encoded in place, then moved up behind its byte string's head.
	start := len(b)
	if b, err = e.obsNoAgentIDs.encodeShared(b, reflect.ValueOf(o).Elem(), m.Shared); err != nil {
		return b, err
	}
	size := len(b) - start
	var scratch [9]byte
	head := appendHead(scratch[:0], 0x40, uint64(size))
	b = append(b, head...)
	copy(b[start+len(head):], b[start:start+size])
	copy(b[start:], head)
	return b, nil
}

// SharedEncodings remembers, for one decision point, how the parts that
// observations share by reference encode (the objective, the recipes, the
// scenario's variables: sharedFields), so that each is encoded once per
// decision point instead of once per agent; they were a third of the time of
// encoding an observation. During a decision point the world does not change,
// so a part met again at the same address encodes to the same bytes: call
// Reset before the world changes again (and it keeps what it remembers alive
// until then, so an address is not reused meanwhile).
//
// It also keeps the encoding of every entity in view (world.EntityView), by
// its name: the views of an entity in different observations differ only by
// their distance, so an entity is encoded once and its bytes are copied
// around the distance of each view. A kept encoding is used only for a view
// equal to the one it was made from in every field but the distance (read
// in full, pointers followed), so it is never stale; it lasts across
// decision points while some observation sees the entity, and Reset drops
// those no observation used since the previous Reset.
//
// The zero value is ready to use; it is not safe for concurrent use.
type SharedEncodings struct {
	m map[sharedKey][]byte
	// views are keyed by where the entity's name's bytes are (the world
	// hands out the same name each time): hashing a pointer does not read
	// the name. A name at a new address only misses; same decides a hit.
	views map[*byte]*viewEncoding
	gen   uint32 // counts Resets, to drop the views not used since the last
	// viewHits and viewMisses count the entities encoded from a kept
	// encoding and anew.
	viewHits, viewMisses int
	// compact are, by list and index, the encodings of the views that
	// compact observations share (appendRefs).
	compact [world.ViewLists]refEncodings
}

// refEncodings are the encodings of the views of one world.ViewList, each
// valid when its gen is the SharedEncodings' gen+1; of is where the views
// are.
type refEncodings struct {
	encs []refEncoding
	of   *world.EntityView
}

// refEncoding is an entity's view's encoding for compact observations.
type refEncoding struct {
	enc   []byte
	split int
	gen   uint32
}

// viewEncoding is an entity's kept encoding: split is where its distance's
// value goes, and view what it encodes (Distance aside).
type viewEncoding struct {
	view  world.EntityView
	enc   []byte
	split int
	used  uint32 // the gen of the last use
}

// viewPlan encodes world.EntityView (whose fields are all read in place)
// with its distance apart. fields are the struct plan's, in key order.
type viewPlan struct {
	fields []structField
	dist   int // the index in fields of distance
	// The struct's bytes before and after the distance: a view whose bytes
	// are those of a kept one encodes alike.
	before, after, size uintptr
}

// newViewPlan is the view plan of world.EntityView's fields, or nil if it has
// no plain distance field.
func newViewPlan(fields []structField) *viewPlan {
	for i, f := range fields {
		if string(f.key) == "\x68distance" && f.direct == directFloat64 && !f.omitEmpty {
			return &viewPlan{fields: fields, dist: i, before: f.offset, after: f.offset + 8,
				size: reflect.TypeFor[world.EntityView]().Size()}
		}
	}
	return nil
}

// encodeSplit appends the entity at ptr without its distance's value, and
// returns where that value goes.
func (vp *viewPlan) encodeSplit(b []byte, ptr unsafe.Pointer) ([]byte, int) {
	at, n, split := len(b), 0, 0
	b = append(b, 0xa0) // fewer than 24 fields (allDirect)
	for i := range vp.fields {
		f := &vp.fields[i]
		p := unsafe.Add(ptr, f.offset)
		if f.omitEmpty && f.direct.emptyAt(p, f.n) {
			continue
		}
		b = append(b, f.key...)
		n++
		if i == vp.dist {
			split = len(b)
			continue
		}
		b = f.direct.appendAt(b, p, f.n)
	}
	b[at] |= byte(n)
	return b, split
}

// same reports whether the entities at a and b encode alike but for their
// distance.
func (vp *viewPlan) same(a, b unsafe.Pointer) bool {
	// The same bytes (the usual case: the same entity seen again in the
	// same state) mean the same text, numbers and pointers. A kept view's
	// pointers are its own, so a view with pointers is compared field by
	// field, as is one with other padding.
	if unsafe.String((*byte)(a), vp.before) == unsafe.String((*byte)(b), vp.before) &&
		unsafe.String((*byte)(unsafe.Add(a, vp.after)), vp.size-vp.after) == unsafe.String((*byte)(unsafe.Add(b, vp.after)), vp.size-vp.after) {
		return true
	}
	for i := range vp.fields {
		f := &vp.fields[i]
		if i != vp.dist && !f.direct.sameAt(unsafe.Add(a, f.offset), unsafe.Add(b, f.offset), f.n) {
			return false
		}
	}
	return true
}

// own points the pointer fields of the entity at ptr to copies of their
// own, so that a kept view does not change with the observation it came
// from.
func (vp *viewPlan) own(ptr unsafe.Pointer) {
	for i := range vp.fields {
		f := &vp.fields[i]
		p := (*unsafe.Pointer)(unsafe.Add(ptr, f.offset))
		switch {
		case *p == nil:
		case f.direct == directBoolPtr:
			c := *(*bool)(*p)
			*p = unsafe.Pointer(&c)
		case f.direct == directFloat64Ptr:
			c := *(*float64)(*p)
			*p = unsafe.Pointer(&c)
		}
	}
}

// appendView appends the entity at ptr, from its kept encoding if it has
// one.
func (s *SharedEncodings) appendView(b []byte, vp *viewPlan, ptr unsafe.Pointer) []byte {
	v := (*world.EntityView)(ptr)
	key := unsafe.StringData(v.Name)
	e := s.views[key]
	if e == nil || !vp.same(unsafe.Pointer(&e.view), ptr) {
		start := len(b)
		var split int
		b, split = vp.encodeSplit(b, ptr)
		if e == nil {
			if s.views == nil {
				s.views = map[*byte]*viewEncoding{}
			}
			e = &viewEncoding{}
			s.views[key] = e
		}
		e.view = *v
		vp.own(unsafe.Pointer(&e.view))
		e.enc, e.split = append(e.enc[:0], b[start:]...), split-start
		b = b[:start]
		s.viewMisses++
	} else {
		s.viewHits++
	}
	e.used = s.gen
	b = append(b, e.enc[:e.split]...)
	b = appendFloat(b, v.Distance, true)
	return append(b, e.enc[e.split:]...)
}

// compactRefs returns the references that stand for list l of the
// world.Observation v (at base when addressable) if it is a compact one (see
// its Compact).
func compactRefs(v reflect.Value, base unsafe.Pointer, l world.ViewList) ([]world.EntityRef, []world.EntityView) {
	if base != nil {
		return (*world.Observation)(base).Compact(l)
	}
	o := v.Interface().(world.Observation)
	return o.Compact(l)
}

// appendRefs appends the entities a compact observation lists in list l,
// as the list of their views would encode: each view's encoding is made
// once per decision point (with s; else each time) and used by every
// observation that lists the entity, with its own distance.
func appendRefs(b []byte, vp *viewPlan, l world.ViewList, refs []world.EntityRef, views []world.EntityView, s *SharedEncodings) []byte {
	b = appendHead(b, 0x80, uint64(len(refs)))
	var one []byte
	for _, r := range refs {
		var enc []byte
		var split int
		if s != nil {
			enc, split = s.refEncoding(vp, l, views, r.Index)
		} else {
			one, split = vp.encodeSplit(one[:0], unsafe.Pointer(&views[r.Index]))
			enc = one
		}
		b = append(b, enc[:split]...)
		b = appendFloat(b, r.Distance, true)
		b = append(b, enc[split:]...)
	}
	return b
}

// refEncoding is the encoding of the view at i in views (the world's shared
// views of list l for a decision point), without its distance's value,
// which goes at split: made on first use after a Reset.
func (s *SharedEncodings) refEncoding(vp *viewPlan, l world.ViewList, views []world.EntityView, i int32) ([]byte, int) {
	c := &s.compact[l]
	if c.of != &views[0] || len(c.encs) != len(views) {
		// Another world's views: forget every encoding.
		c.of = &views[0]
		c.encs = slices.Grow(c.encs[:0], len(views))[:len(views)]
		for k := range c.encs {
			c.encs[k].gen = 0
		}
	}
	e := &c.encs[i]
	if e.gen != s.gen+1 {
		e.enc, e.split = vp.encodeSplit(e.enc[:0], unsafe.Pointer(&views[i]))
		e.gen = s.gen + 1
		s.viewMisses++
	} else {
		s.viewHits++
	}
	return e.enc, e.split
}

// compactLists are the fields of world.Observation that a compact one holds
// as references, by their list.
var compactLists = map[string]world.ViewList{
	"nearby_agents": world.AgentsInView, "nearby_resources": world.ResourcesInView,
	"nearby_obstacles": world.ObstaclesInView, "nearby_hazards": world.HazardsInView,
}

type sharedKey struct {
	field int            // the field of world.Observation
	ptr   unsafe.Pointer // the map or the value pointed to
}

// Reset forgets the encodings of the shared parts, and those of the entities
// no observation saw since the previous Reset.
func (s *SharedEncodings) Reset() {
	clear(s.m)
	for key, e := range s.views {
		if e.used != s.gen {
			delete(s.views, key)
		}
	}
	s.gen++
}

// sharedFields are, by type, the fields (maps or pointers) that the
// messages of one sending share: those of world.Observation that the world
// shares between the observations of a decision point, and the results that
// every session's episode_end carries (EpisodeEnd.ShareResults).
var sharedFields = map[reflect.Type]map[string]bool{
	reflect.TypeFor[world.Observation](): {"objective": true, "available_recipes": true, "variables": true},
	reflect.TypeFor[EpisodeEnd]():        {"results": true},
}

func appendText(b []byte, s string) []byte {
	return append(appendHead(b, 0x60, uint64(len(s))), s...)
}

func (e *fastEncoder) planFor(t reflect.Type) *plan {
	if p, ok := e.plans.Load(t); ok {
		return p.(*plan)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	building := map[reflect.Type]*plan{}
	p := e.compile(t, building)
	for t, p := range building {
		e.plans.Store(t, p)
	}
	return p
}

// compile builds t's plan. Plans being built are in building, so that
// recursive types refer to their own plan.
func (e *fastEncoder) compile(t reflect.Type, building map[reflect.Type]*plan) *plan {
	if p, ok := e.plans.Load(t); ok {
		return p.(*plan)
	}
	if p := building[t]; p != nil {
		return p
	}
	p := &plan{}
	building[t] = p
	if special(t) {
		p.fn, p.delegated = e.delegate, true
		return p
	}
	switch t.Kind() {
	case reflect.Bool:
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
			if v.Bool() {
				return append(b, 0xf5), nil
			}
			return append(b, 0xf4), nil
		}
		p.emptyFn = func(v reflect.Value) bool { return !v.Bool() }
		p.leaf = leafBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) { return appendInt(b, v.Int()), nil }
		p.emptyFn = func(v reflect.Value) bool { return v.Int() == 0 }
		p.leaf = leafInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) { return appendHead(b, 0x00, v.Uint()), nil }
		p.emptyFn = func(v reflect.Value) bool { return v.Uint() == 0 }
		p.leaf = leafUint
	case reflect.Float32, reflect.Float64:
		is64 := t.Kind() == reflect.Float64
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) { return appendFloat(b, v.Float(), is64), nil }
		p.emptyFn = func(v reflect.Value) bool { return v.Float() == 0 }
		p.leaf = leafFloat32
		if is64 {
			p.leaf = leafFloat64
		}
	case reflect.String:
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
			s := v.String()
			return append(appendHead(b, 0x60, uint64(len(s))), s...), nil
		}
		p.emptyFn = func(v reflect.Value) bool { return v.Len() == 0 }
		p.leaf = leafString
	case reflect.Pointer:
		elem := e.compile(t.Elem(), building)
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, 0xf6), nil
			}
			return elem.append(b, v.Elem())
		}
		p.emptyFn = func(v reflect.Value) bool { return v.IsNil() }
	case reflect.Interface:
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, 0xf6), nil
			}
			v = v.Elem()
			return e.planFor(v.Type()).fn(b, v)
		}
		p.emptyFn = func(v reflect.Value) bool { return v.IsNil() }
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 { // byte strings
			if t.Kind() == reflect.Array {
				p.fn, p.delegated = e.delegate, true
				return p
			}
			p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
				if v.IsNil() {
					return append(b, 0xf6), nil
				}
				return append(appendHead(b, 0x40, uint64(v.Len())), v.Bytes()...), nil
			}
			p.emptyFn = func(v reflect.Value) bool { return v.Len() == 0 }
			return p
		}
		elem := e.compile(t.Elem(), building)
		slice := t.Kind() == reflect.Slice
		if slice && elem.leaf == leafString {
			// Lists of names (agent_ids): read the strings in place.
			p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
				if v.IsNil() {
					return append(b, 0xf6), nil
				}
				n := v.Len()
				b = appendHead(b, 0x80, uint64(n))
				if n == 0 {
					return b, nil
				}
				for _, s := range unsafe.Slice((*string)(v.UnsafePointer()), n) {
					b = append(appendHead(b, 0x60, uint64(len(s))), s...)
				}
				return b, nil
			}
			p.emptyFn = func(v reflect.Value) bool { return v.Len() == 0 }
			return p
		}
		if vp := elem.views; vp != nil && slice {
			// Entities in view: each one's encoding is kept (see
			// SharedEncodings) and reused for every observation that sees
			// it, with its own distance.
			size := t.Elem().Size()
			p.listViews = vp
			p.viewsShared = func(b []byte, v reflect.Value, s *SharedEncodings) []byte {
				if v.IsNil() {
					return append(b, 0xf6)
				}
				n := v.Len()
				b = appendHead(b, 0x80, uint64(n))
				base := v.UnsafePointer()
				for i := range n {
					b = s.appendView(b, vp, unsafe.Add(base, uintptr(i)*size))
				}
				return b
			}
		}
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
			if slice && v.IsNil() {
				return append(b, 0xf6), nil
			}
			n := v.Len()
			b = appendHead(b, 0x80, uint64(n))
			var err error
			for i := range n {
				if b, err = elem.append(b, v.Index(i)); err != nil {
					return nil, err
				}
			}
			return b, nil
		}
		p.emptyFn = func(v reflect.Value) bool { return v.Len() == 0 }
	case reflect.Map:
		if t.Key().Kind() != reflect.String || special(t.Key()) {
			p.fn, p.delegated = e.delegate, true
			return p
		}
		e.compileMap(p, t, building)
	case reflect.Struct:
		e.compileStruct(p, t, building, "")
	default:
		p.fn, p.delegated = e.delegate, true
	}
	return p
}

// delegate encodes one value with fxamacker/cbor.
func (e *fastEncoder) delegate(b []byte, v reflect.Value) ([]byte, error) {
	var x any
	if v.CanAddr() {
		x = v.Addr().Interface() // a pointer encodes as what it points to
	} else {
		x = v.Interface()
	}
	buf := bytes.NewBuffer(b)
	if err := e.enc.MarshalToBuffer(x, buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// compileMap: a map with text keys, its pairs in the order of their encoded
// keys, which for text strings is shorter first, then bytewise.
func (e *fastEncoder) compileMap(p *plan, t reflect.Type, building map[reflect.Type]*plan) {
	elem := e.compile(t.Elem(), building)
	// Keys and values are copied out of the map into reusable holders
	// (MapIter.Key and Value would allocate a copy of each).
	type entry struct {
		k string
		i int // the index of the value's holder
	}
	type scratch struct {
		key     reflect.Value
		values  []reflect.Value
		entries []entry
	}
	pool := sync.Pool{New: func() any { return &scratch{key: reflect.New(t.Key()).Elem()} }}
	switch t {
	case reflect.TypeFor[map[string]int]():
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
			return appendStringMap(b, v.Interface().(map[string]int), appendInt64[int]), nil
		}
		p.emptyFn = func(v reflect.Value) bool { return v.Len() == 0 }
		return
	case reflect.TypeFor[map[string]float64]():
		p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
			return appendStringMap(b, v.Interface().(map[string]float64), appendFloat64), nil
		}
		p.emptyFn = func(v reflect.Value) bool { return v.Len() == 0 }
		return
	}
	p.fn = func(b []byte, v reflect.Value) ([]byte, error) {
		if v.IsNil() {
			return append(b, 0xf6), nil
		}
		n := v.Len()
		b = appendHead(b, 0xa0, uint64(n))
		if n == 0 {
			return b, nil
		}
		sc := pool.Get().(*scratch)
		for len(sc.values) < n {
			sc.values = append(sc.values, reflect.New(t.Elem()).Elem())
		}
		sc.entries = sc.entries[:0]
		for it := v.MapRange(); it.Next(); {
			i := len(sc.entries)
			sc.key.SetIterKey(it)
			sc.values[i].SetIterValue(it)
			sc.entries = append(sc.entries, entry{sc.key.String(), i})
		}
		slices.SortFunc(sc.entries, func(a, b entry) int {
			if len(a.k) != len(b.k) {
				return len(a.k) - len(b.k)
			}
			return strings.Compare(a.k, b.k)
		})
		var err error
		for _, x := range sc.entries {
			b = append(appendHead(b, 0x60, uint64(len(x.k))), x.k...)
			if b, err = elem.append(b, sc.values[x.i]); err != nil {
				break
			}
		}
		for i := range sc.entries {
			sc.values[i].SetZero() // let the garbage collector have them
		}
		clear(sc.entries)
		sc.key.SetZero()
		pool.Put(sc)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	p.emptyFn = func(v reflect.Value) bool { return v.Len() == 0 }
}

func appendInt64[T ~int](b []byte, v T) []byte { return appendInt(b, int64(v)) }

func appendFloat64(b []byte, f float64) []byte { return appendFloat(b, f, true) }

// appendStringMap encodes a map with text keys in Core Deterministic order.
func appendStringMap[V any](b []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	if m == nil {
		return append(b, 0xf6)
	}
	b = appendHead(b, 0xa0, uint64(len(m)))
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		b = value(append(appendHead(b, 0x60, uint64(len(k))), k...), m[k])
	}
	return b
}

type structField struct {
	index     int
	key       []byte // the encoded name
	plan      *plan
	omitEmpty bool
	n         int // an array's length
	// direct fields are read in place, at offset in an addressable struct,
	// without reflection.
	direct directKind
	offset uintptr
	shared bool // a part observations share (sharedFields)
	// compact, for world.Observation's lists of entities in view, is
	// the list a compact observation holds as references (appendRefs),
	// and compactList whether it is one.
	compact     world.ViewList
	compactList bool
}

// directKind is how a field of a plain kind is read in place.
type directKind uint8

const (
	notDirect directKind = iota
	directString
	directFloat64
	directInt
	directBool
	directFloat64s // an array of float64 (a position)
	directBoolPtr  // *bool
	directFloat64Ptr
)

// directOf is how a field of type t (with plan p) is read in place, if it
// can be.
func directOf(t reflect.Type, p *plan) directKind {
	if p.delegated {
		return notDirect
	}
	switch t.Kind() {
	case reflect.String:
		return directString
	case reflect.Float64:
		return directFloat64
	case reflect.Int:
		return directInt
	case reflect.Bool:
		return directBool
	case reflect.Array:
		if t.Elem().Kind() == reflect.Float64 && !special(t.Elem()) {
			return directFloat64s
		}
	case reflect.Pointer:
		switch e := t.Elem(); {
		case special(e):
		case e.Kind() == reflect.Bool:
			return directBoolPtr
		case e.Kind() == reflect.Float64:
			return directFloat64Ptr
		}
	}
	return notDirect
}

func arrayLen(t reflect.Type) int {
	if t.Kind() == reflect.Array {
		return t.Len()
	}
	return 0
}

// emptyAt and appendAt read a direct field at ptr; n is an array's length.
func (k directKind) emptyAt(ptr unsafe.Pointer, n int) bool {
	switch k {
	case directString:
		return len(*(*string)(ptr)) == 0
	case directFloat64:
		return *(*float64)(ptr) == 0
	case directInt:
		return *(*int)(ptr) == 0
	case directBool:
		return !*(*bool)(ptr)
	case directBoolPtr, directFloat64Ptr:
		return *(*unsafe.Pointer)(ptr) == nil
	}
	return n == 0
}

// sameAt reports whether the direct fields at a and b encode alike (floats
// by their bits: 0 and -0 encode apart).
func (k directKind) sameAt(a, b unsafe.Pointer, n int) bool {
	switch k {
	case directString:
		return *(*string)(a) == *(*string)(b)
	case directFloat64:
		return math.Float64bits(*(*float64)(a)) == math.Float64bits(*(*float64)(b))
	case directInt:
		return *(*int)(a) == *(*int)(b)
	case directBool:
		return *(*bool)(a) == *(*bool)(b)
	case directBoolPtr, directFloat64Ptr:
		pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		switch {
		case pa == nil || pb == nil:
			return pa == pb
		case k == directBoolPtr:
			return *(*bool)(pa) == *(*bool)(pb)
		}
		return directFloat64.sameAt(pa, pb, 0)
	}
	for i := range n {
		if !directFloat64.sameAt(unsafe.Add(a, 8*i), unsafe.Add(b, 8*i), 0) {
			return false
		}
	}
	return true
}

func (k directKind) appendAt(b []byte, ptr unsafe.Pointer, n int) []byte {
	switch k {
	case directString:
		return appendText(b, *(*string)(ptr))
	case directFloat64:
		return appendFloat(b, *(*float64)(ptr), true)
	case directInt:
		return appendInt(b, int64(*(*int)(ptr)))
	case directBool:
		if *(*bool)(ptr) {
			return append(b, 0xf5)
		}
		return append(b, 0xf4)
	case directBoolPtr, directFloat64Ptr:
		p := *(*unsafe.Pointer)(ptr)
		switch {
		case p == nil:
			return append(b, 0xf6)
		case k == directBoolPtr:
			return directBool.appendAt(b, p, 0)
		}
		return directFloat64.appendAt(b, p, 0)
	}
	b = appendHead(b, 0x80, uint64(n))
	for _, f := range unsafe.Slice((*float64)(ptr), n) {
		b = appendFloat(b, f, true)
	}
	return b
}

// compileStruct: a map of the exported fields, in the order of their encoded
// names, leaving out the field named omit. Structs fxamacker/cbor treats
// specially are delegated whole.
func (e *fastEncoder) compileStruct(p *plan, t reflect.Type, building map[reflect.Type]*plan, omit string) {
	if f, ok := t.FieldByName("_"); ok && f.Tag.Get("cbor") != "-" {
		p.fn, p.delegated = e.delegate, true // struct options such as toarray
		return
	}
	var fields []structField
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			p.fn, p.delegated = e.delegate, true // embedded fields follow Go's visibility rules
			return
		}
		if !f.IsExported() {
			continue
		}
		tag, isCBOR := f.Tag.Lookup("cbor")
		if !isCBOR || tag == "" {
			tag, isCBOR = f.Tag.Get("json"), false
		}
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		omitEmpty := false
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "":
			case "omitempty":
				omitEmpty = true
			case "omitzero", "keyasint":
				p.fn, p.delegated = e.delegate, true
				return
			}
		}
		if name == "" {
			name = f.Name
		}
		if name == omit {
			continue
		}
		if names[name] {
			p.fn, p.delegated = e.delegate, true // fields hiding each other
			return
		}
		names[name] = true
		fp := e.compile(f.Type, building)
		if omitEmpty && fp.delegated {
			// Emptiness of a delegated type is fxamacker's business. (A
			// struct-typed field is compiled completely here: a type cannot
			// contain itself by value.)
			p.fn, p.delegated = e.delegate, true
			return
		}
		key := append(appendHead(nil, 0x60, uint64(len(name))), name...)
		shared := sharedFields[t][name] &&
			(f.Type.Kind() == reflect.Map || f.Type.Kind() == reflect.Pointer)
		list, compact := compactLists[name]
		fields = append(fields, structField{index: i, key: key, plan: fp, omitEmpty: omitEmpty,
			direct: directOf(f.Type, fp), offset: f.Offset, n: arrayLen(f.Type), shared: shared,
			compact: list, compactList: compact && t == reflect.TypeFor[world.Observation]() && fp.listViews != nil})
	}
	if len(fields) > 64 {
		p.fn, p.delegated = e.delegate, true
		return
	}
	slices.SortFunc(fields, func(a, b structField) int { return bytes.Compare(a.key, b.key) })
	allOmitEmpty, allDirect := true, len(fields) < 24
	for _, f := range fields {
		allOmitEmpty = allOmitEmpty && f.omitEmpty
		allDirect = allDirect && f.direct != notDirect
	}
	if t == reflect.TypeFor[world.EntityView]() && allDirect {
		p.views = newViewPlan(fields)
	}
	p.fnShared = func(b []byte, v reflect.Value, sh *SharedEncodings) ([]byte, error) {
		// An addressable struct (in a slice, behind a pointer) has its
		// plain fields read in place.
		var base unsafe.Pointer
		if v.CanAddr() {
			base = v.Addr().UnsafePointer()
		}
		if base != nil && allDirect {
			// One pass (entities in view): fewer than 24 pairs have a
			// one-byte head, counted as they are written.
			at, n := len(b), 0
			b = append(b, 0xa0)
			for i := range fields {
				f := &fields[i]
				ptr := unsafe.Add(base, f.offset)
				if f.omitEmpty && f.direct.emptyAt(ptr, f.n) {
					continue
				}
				b = f.direct.appendAt(append(b, f.key...), ptr, f.n)
				n++
			}
			b[at] |= byte(n)
			return b, nil
		}
		var kept uint64 // a bit per field to encode (at most 64 fields)
		n := 0
		for i := range fields {
			f := &fields[i]
			switch {
			case !f.omitEmpty:
			case base != nil && f.direct != notDirect:
				if f.direct.emptyAt(unsafe.Add(base, f.offset), f.n) {
					continue
				}
			case f.plan.empty(v.Field(f.index)):
				continue
			}
			kept |= 1 << i
			n++
		}
		b = appendHead(b, 0xa0, uint64(n))
		var err error
		for i := range fields {
			if kept&(1<<i) == 0 {
				continue
			}
			f := &fields[i]
			b = append(b, f.key...)
			if f.compactList {
				if refs, views := compactRefs(v, base, f.compact); views != nil {
					b = appendRefs(b, f.plan.listViews, f.compact, refs, views, sh)
					continue
				}
			}
			if base != nil && f.direct != notDirect {
				b = f.direct.appendAt(b, unsafe.Add(base, f.offset), f.n)
				continue
			}
			fv := v.Field(f.index)
			if sh != nil && f.plan.viewsShared != nil {
				b = f.plan.viewsShared(b, fv, sh)
				continue
			}
			if sh != nil && f.shared && !fv.IsNil() {
				k := sharedKey{f.index, fv.UnsafePointer()}
				if enc, ok := sh.m[k]; ok {
					b = append(b, enc...)
					continue
				}
				start := len(b)
				if b, err = f.plan.append(b, fv); err != nil {
					return nil, err
				}
				if sh.m == nil {
					sh.m = map[sharedKey][]byte{}
				}
				sh.m[k] = bytes.Clone(b[start:])
				continue
			}
			if b, err = f.plan.append(b, fv); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	p.fn = func(b []byte, v reflect.Value) ([]byte, error) { return p.fnShared(b, v, nil) }
	// A struct is empty (for omitempty) when every field is omitempty and empty.
	p.emptyFn = func(v reflect.Value) bool {
		if !allOmitEmpty {
			return false
		}
		for i := range fields {
			if !fields[i].plan.empty(v.Field(fields[i].index)) {
				return false
			}
		}
		return true
	}
}

// appendHead appends a CBOR head: major type (already shifted) and argument,
// in the shortest form.
func appendHead(b []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(b, major|byte(n))
	case n <= math.MaxUint8:
		return append(b, major|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, major|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, major|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, major|27), n)
}

func appendInt(b []byte, i int64) []byte {
	if i >= 0 {
		return appendHead(b, 0x00, uint64(i))
	}
	return appendHead(b, 0x20, uint64(-1-i))
}

// appendFloat appends a float in the shortest form that keeps its value
// (half, single or double precision); NaN is f97e00 and the infinities are
// half precision, as in Core Deterministic encoding.
func appendFloat(b []byte, f float64, is64 bool) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, 0xf9, 0x7e, 0x00)
	case math.IsInf(f, 1):
		return append(b, 0xf9, 0x7c, 0x00)
	case math.IsInf(f, -1):
		return append(b, 0xf9, 0xfc, 0x00)
	}
	f32 := float32(f)
	if is64 && float64(f32) != f {
		return binary.BigEndian.AppendUint64(append(b, 0xfb), math.Float64bits(f))
	}
	if h, ok := float16Exact(f32); ok {
		return binary.BigEndian.AppendUint16(append(b, 0xf9), h)
	}
	return binary.BigEndian.AppendUint32(append(b, 0xfa), math.Float32bits(f32))
}

// float16Exact returns the half-precision bits of f when f (finite) is
// exactly representable in half precision.
func float16Exact(f float32) (uint16, bool) {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23&0xff) - 127
	mant := bits & 0x7fffff
	switch {
	case bits&0x7fffffff == 0: // ±0
		return sign, true
	case exp == 128: // NaN, Inf: handled by the caller
		return 0, false
	case exp >= -14 && exp <= 15: // a normal half: 10 bits of mantissa
		if mant&0x1fff != 0 {
			return 0, false
		}
		return sign | uint16(exp+15)<<10 | uint16(mant>>13), true
	case exp >= -24 && exp < -14: // a subnormal half: value = m × 2^-24, m < 1024
		if exp == -127 {
			return 0, false // float32 subnormals are far below half's range
		}
		full := mant | 0x800000 // 24 bits, value = full × 2^(exp-23)
		shift := uint(-1 - exp) // = (-24) - (exp-23) negated: bits to drop
		if full&(1<<shift-1) != 0 {
			return 0, false
		}
		return sign | uint16(full>>shift), true
	}
	return 0, false
}
