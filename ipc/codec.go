package ipc

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

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
	enc cbor.EncMode
	dec cbor.DecMode
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
	enc, err := cbor.CoreDetEncOptions().EncMode()
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
	return &Codec{enc: enc, dec: dec}, nil
}

// Marshal encodes a message.
func (c *Codec) Marshal(v any) ([]byte, error) {
	b, err := c.enc.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return b, nil
}

// Decode decodes one frame's payload into a client message: *Hello, *Decision,
// *Query, *Ping, *Bye or *Control. Anything else is a non-fatal BAD_MESSAGE
// that says what was wrong.
func (c *Codec) Decode(frame []byte) (any, error) {
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
	var msg any
	switch typ {
	case "hello":
		msg = &Hello{}
	case "decision":
		msg = &Decision{}
	case "query":
		msg = &Query{}
	case "ping":
		msg = &Ping{}
	case "bye":
		msg = &Bye{}
	case "control":
		msg = &Control{}
	default:
		return nil, &ProtocolError{Code: CodeBadMessage, Message: fmt.Sprintf("unknown message type %q (hello, decision, query, ping, bye, control)", fuzzy.Clip(typ))}
	}
	if err := c.dec.Unmarshal(frame, msg); err != nil {
		return nil, badMessage(err)
	}
	return msg, nil
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
		msg = fmt.Sprintf("duplicate map key %v", de.Key)
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
