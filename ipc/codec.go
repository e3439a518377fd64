package ipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/fxamacker/cbor/v2"
)

// Limits bound what the decoder accepts. Zero fields take the defaults.
type Limits struct {
	MaxNestedLevels  int // default 16
	MaxArrayElements int // default 4096
	MaxMapPairs      int // default 1024
}

// Codec encodes with Core Deterministic CBOR (RFC 8949 §4.2.1) and decodes
// with a hardened mode: definite lengths only, no duplicate map keys, no tags,
// valid UTF-8, bounded nesting and element counts, no unknown fields, case-
// sensitive field names. A Codec is immutable and safe for concurrent use.
type Codec struct {
	enc  cbor.UserBufferEncMode
	dec  cbor.DecMode
	fast *fastEncoder // observations and frames: the same bytes, faster
}

// NewCodec builds a codec.
func NewCodec(l Limits) (*Codec, error) {
	if l.MaxNestedLevels == 0 {
		l.MaxNestedLevels = 16
	}
	if l.MaxArrayElements == 0 {
		l.MaxArrayElements = 4096
	}
	if l.MaxMapPairs == 0 {
		l.MaxMapPairs = 1024
	}
	enc, err := cbor.CoreDetEncOptions().UserBufferEncMode()
	if err != nil {
		return nil, fmt.Errorf("cbor encode mode: %w", err)
	}
	dec, err := cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		IndefLength:       cbor.IndefLengthForbidden,
		TagsMd:            cbor.TagsForbidden,
		MaxNestedLevels:   l.MaxNestedLevels,
		MaxArrayElements:  l.MaxArrayElements,
		MaxMapPairs:       l.MaxMapPairs,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
		DefaultMapType:    reflect.TypeOf(map[string]any(nil)),
		FieldNameMatching: cbor.FieldNameMatchingCaseSensitive,
		UTF8:              cbor.UTF8RejectInvalid,
	}.DecMode()
	if err != nil {
		return nil, fmt.Errorf("cbor decode mode: %w", err)
	}
	return &Codec{enc: enc, dec: dec, fast: &fastEncoder{enc: enc}}, nil
}

// Marshal encodes a message.
func (c *Codec) Marshal(v any) ([]byte, error) {
	b, err := c.enc.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return b, nil
}

// sentFrames recycles the buffers of frames written (see marshalFrame), so
// that an idle connection holds none.
var sentFrames bufPool

// bufPool recycles byte buffers without allocating: a buffer goes back in a
// box taken from boxes, and its box goes back to boxes, empty, when the
// buffer is taken. The zero value is ready to use.
type bufPool struct {
	bufs, boxes sync.Pool // of *[]byte
}

// get returns an empty buffer from the pool, or nil.
func (p *bufPool) get() []byte {
	box, ok := p.bufs.Get().(*[]byte)
	if !ok {
		return nil
	}
	b := (*box)[:0]
	*box = nil
	p.boxes.Put(box)
	return b
}

// put hands b back for reuse (unless it is larger than maxPooledFrame); the
// caller must not touch it afterwards.
func (p *bufPool) put(b []byte) {
	if cap(b) > maxPooledFrame {
		return
	}
	box, ok := p.boxes.Get().(*[]byte)
	if !ok {
		box = new([]byte)
	}
	*box = b[:0]
	p.bufs.Put(box)
}

// maxPooledFrame is the largest frame buffer kept for reuse.
const maxPooledFrame = 64 << 10

// marshalFrame encodes a message as a whole frame, length header included,
// into a buffer that releaseFrame may recycle once the frame is written. The
// bytes are those of AppendFrame(nil, Marshal(v)).
func (c *Codec) marshalFrame(v any) ([]byte, error) {
	if m, ok := v.(ObservationMsg); ok { // sent every tick
		return c.marshalObservation(&m)
	}
	b := append(pooledFrame(), 0, 0, 0, 0)
	var err error
	switch m := v.(type) {
	case Frame:
		b, err = c.fast.Append(b, v)
	case EpisodeEnd:
		if m.shared == nil {
			b, err = c.marshalTo(b, v)
			break
		}
		// The results as encoded at the first send (ShareResults).
		b, err = c.fast.planFor(reflect.TypeFor[EpisodeEnd]()).encodeShared(b, reflect.ValueOf(&m).Elem(), m.shared)
	default:
		b, err = c.marshalTo(b, v)
	}
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, nil
}

// marshalTo appends v's encoding by fxamacker/cbor to b.
func (c *Codec) marshalTo(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	err := c.enc.MarshalToBuffer(v, buf)
	return buf.Bytes(), err
}

// marshalObservation is marshalFrame for an observation, without boxing it.
func (c *Codec) marshalObservation(m *ObservationMsg) ([]byte, error) {
	b, err := c.fast.appendObservationMsg(append(pooledFrame(), 0, 0, 0, 0), m)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", *m, err)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, nil
}

// pooledFrame returns an empty buffer to encode a frame in, or nil.
func pooledFrame() []byte { return sentFrames.get() }

// releaseFrame hands a written frame's buffer back for reuse; the caller
// must not touch the frame afterwards.
func releaseFrame(frame []byte) { sentFrames.put(frame) }

// Decode decodes one frame's payload into a client message: *Hello, *Decision,
// *Query, *Ping, *Pong, *Bye or *Control. Anything else is a non-fatal BAD_MESSAGE
// that says what was wrong.
func (c *Codec) Decode(frame []byte) (any, error) {
	// The fast path decodes a valid message in one pass. A message that
	// decodes into the struct of the type it names, with no unknown or
	// duplicate keys, passes every check below too, so the result is the same;
	// anything else takes the full path for its exact error.
	if typ, ok := peekType(frame); ok {
		if typ == "decision" {
			if d, ok := decodeDecision(frame); ok {
				return d, nil
			}
		}
		if msg := newMessage(typ); msg != nil && c.dec.Unmarshal(frame, msg) == nil && messageType(msg) == typ && c.checkID(msg) == nil {
			return msg, nil
		}
	}
	return c.decodeFull(frame)
}

// decodeFull is Decode without the fast path. A check added here after the
// message is decoded must run on the fast path's messages too: put it in
// Decode, after both (TestDecodeFastPathMatchesFullPath compares the two).
func (c *Codec) decodeFull(frame []byte) (any, error) {
	// First the shape: one well-formed CBOR map with a text "type".
	var raw map[string]cbor.RawMessage
	if err := c.dec.Unmarshal(frame, &raw); err != nil {
		return nil, badMessage(err)
	}
	t, ok := raw["type"]
	if !ok {
		return nil, &ProtocolError{Code: CodeBadMessage, Message: "message has no \"type\""}
	}
	var typ string
	if err := c.dec.Unmarshal(t, &typ); err != nil {
		return nil, &ProtocolError{Code: CodeBadMessage, Message: "\"type\" must be a text string: " + strings.TrimPrefix(err.Error(), "cbor: ")}
	}
	msg := newMessage(typ)
	if msg == nil {
		return nil, &ProtocolError{Code: CodeBadMessage, Message: fmt.Sprintf("unknown message type %q (hello, decision, query, ping, pong, bye, control, observation_arrays)", fuzzy.Clip(typ))}
	}
	if err := c.dec.Unmarshal(frame, msg); err != nil {
		return nil, badMessage(err)
	}
	if err := c.checkID(msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// checkID checks the id of a ping or a query. It is kept as raw CBOR, to be
// echoed byte for byte, and raw values are only checked for well-formedness:
// without this, duplicate keys and invalid UTF-8 in an id would be accepted,
// and sent back.
func (c *Codec) checkID(msg any) error {
	var id cbor.RawMessage
	switch m := msg.(type) {
	case *Ping:
		id = m.ID
	case *Pong:
		id = m.ID
	case *Query:
		id = m.ID
	}
	if len(id) == 0 {
		return nil
	}
	var v any
	if err := c.dec.Unmarshal(id, &v); err != nil {
		return badMessage(err)
	}
	return nil
}

// clientTypes are the types of client messages (see newMessage).
var clientTypes = [...]string{"decision", "query", "ping", "pong", "hello", "bye", "control", "observation_arrays"}

// newMessage returns a new client message of a type, or nil for an unknown type.
func newMessage(typ string) any {
	switch typ {
	case "hello":
		return &Hello{}
	case "observation_arrays":
		return &ObservationArrays{}
	case "decision":
		return &Decision{}
	case "query":
		return &Query{}
	case "ping":
		return &Ping{}
	case "pong":
		return &Pong{}
	case "bye":
		return &Bye{}
	case "control":
		return &Control{}
	}
	return nil
}

// messageType is the Type field of a message newMessage made.
func messageType(msg any) string {
	switch m := msg.(type) {
	case *Hello:
		return m.Type
	case *Decision:
		return m.Type
	case *Query:
		return m.Type
	case *Ping:
		return m.Type
	case *Pong:
		return m.Type
	case *Bye:
		return m.Type
	case *Control:
		return m.Type
	}
	return ""
}

// peekType finds the text value of the key "type" in a frame holding a CBOR
// map, without decoding anything else. It gives up (false) on anything
// unusual (indefinite lengths, tags, deep nesting, a truncated frame, a non-text
// key before "type"), which only sends the frame down Decode's full path.
func peekType(b []byte) (string, bool) {
	p := peeker{b: b}
	major, n, ok := p.head()
	if !ok || major != 5 {
		return "", false
	}
	for range n {
		major, kl, ok := p.head()
		if !ok || major != 3 || kl > uint64(len(p.b)-p.off) {
			return "", false
		}
		key := p.b[p.off : p.off+int(kl)]
		p.off += int(kl)
		if string(key) == "type" {
			major, vl, ok := p.head()
			if !ok || major != 3 || vl > uint64(len(p.b)-p.off) {
				return "", false
			}
			v := p.b[p.off : p.off+int(vl)]
			for _, t := range clientTypes { // no copy for the known ones
				if string(v) == t {
					return t, true
				}
			}
			return string(v), true
		}
		if !p.skip(1) {
			return "", false
		}
	}
	return "", false
}

type peeker struct {
	b   []byte
	off int
}

// head reads an item's major type and argument (definite lengths only; the
// argument of a float or simple value is ignored by callers).
func (p *peeker) head() (major byte, arg uint64, ok bool) {
	if p.off >= len(p.b) {
		return 0, 0, false
	}
	c := p.b[p.off]
	p.off++
	major, ai := c>>5, c&31
	if ai < 24 {
		return major, uint64(ai), true
	}
	if ai > 27 {
		return 0, 0, false
	}
	n := 1 << (ai - 24)
	if n > len(p.b)-p.off {
		return 0, 0, false
	}
	for _, x := range p.b[p.off : p.off+n] {
		arg = arg<<8 | uint64(x)
	}
	p.off += n
	return major, arg, true
}

// skip skips one item, at most 16 levels deep.
func (p *peeker) skip(depth int) bool {
	if depth > 16 {
		return false
	}
	major, n, ok := p.head()
	switch {
	case !ok || major == 6:
		return false
	case major == 2 || major == 3:
		if n > uint64(len(p.b)-p.off) {
			return false
		}
		p.off += int(n)
	case major == 4 || major == 5:
		if n > uint64(len(p.b)-p.off) { // every item takes at least a byte
			return false
		}
		if major == 5 {
			n *= 2
		}
		for range n {
			if !p.skip(depth + 1) {
				return false
			}
		}
	}
	return true
}

// badMessage turns a decoding error into a BAD_MESSAGE naming the problem.
func badMessage(err error) *ProtocolError {
	var te *cbor.UnmarshalTypeError
	var ue *cbor.UnknownFieldError
	var de *cbor.DupMapKeyError
	msg := strings.TrimPrefix(err.Error(), "cbor: ")
	switch {
	case errors.As(err, &te) && te.StructFieldName != "":
		field := te.StructFieldName[strings.LastIndexByte(te.StructFieldName, '.')+1:]
		msg = fmt.Sprintf("field %q must be %s, got CBOR %s", field, goTypeName(te.GoType), te.CBORType)
	case errors.As(err, &te) && strings.HasPrefix(te.GoType, "map["):
		msg = fmt.Sprintf("a message must be a CBOR map with text keys, got CBOR %s", te.CBORType)
	case errors.As(err, &ue):
		msg = "unknown field: " + msg
	case errors.As(err, &de):
		msg = fmt.Sprintf("duplicate map key %v", fuzzy.Clip(fmt.Sprint(de.Key)))
	}
	return &ProtocolError{Code: CodeBadMessage, Message: msg}
}

func goTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a text string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "map["):
		return "a map"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return t
}
