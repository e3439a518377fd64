package ipc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// decisionHead starts a map of three pairs, the first "type": "decision".
var decisionHead = []byte{0xa3, 0x64, 't', 'y', 'p', 'e', 0x68, 'd', 'e', 'c', 'i', 's', 'i', 'o', 'n'}

// decodeCorpus is valid client messages of every type and some near misses.
func decodeCorpus(t testing.TB) [][]byte {
	msgs := []any{
		map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_001", "token": "s3cret", "name": "n", "sdk": "arena-go/1"},
		map[string]any{"type": "hello", "protocol": 1.0},
		map[string]any{"type": "decision", "tick": 7, "tool": "move_to", "params": map[string]any{"target": []any{1.5, 0, -2}, "speed": 1}, "reasoning": "go"},
		map[string]any{"type": "decision", "tick": 7.5, "tool": "idle"},
		map[string]any{"type": "decision", "tick": -3, "tool": "collect", "params": map[string]any{"target_name": "Berry1"}},
		map[string]any{"type": "decision", "tick": 1, "tool": "idle", "params": nil},
		map[string]any{"type": "decision", "tick": 12, "tool": "move_to", "params": map[string]any{"target_x": 12.5, "target_z": -3.25}},
		map[string]any{"type": "decision", "tick": uint64(1) << 53, "tool": "idle"},
		map[string]any{"type": "decision", "tick": -(int64(1) << 53), "tool": "idle"},
		map[string]any{"type": "decision", "tick": float32(2.5), "tool": "idle", "reasoning": "héllo"},
		map[string]any{"type": "decision", "tick": 3, "tool": "say", "params": map[string]any{"a": uint64(math.MaxUint64), "b": int64(math.MinInt64),
			"c": true, "d": false, "e": nil, "f": "text", "g": float32(1.5), "h": 65504.0, "i": 1e300, "j": math.Inf(-1), "k": 5.960464477539063e-08, "l": -0.0, "m": float32(0.1)}},
		map[string]any{"type": "decision", "tool": "idle", "params": map[string]any{"x": []any{}, "y": map[string]any{}}},
		map[string]any{"type": "decision", "tick": 2, "tool": "idle", "unknown": 1},
		map[string]any{"tick": 2, "tool": "idle", "type": "decision", "reasoning": ""},
		map[string]any{"type": "query", "id": "q1", "tool": "query_world", "params": map[string]any{"radius": 5}},
		map[string]any{"type": "query", "id": []any{1, map[string]any{"a": nil}}, "tool": "query_inventory"},
		map[string]any{"type": "ping", "id": 3},
		map[string]any{"type": "ping"},
		map[string]any{"type": "bye"},
		map[string]any{"type": "control", "command": "speed", "value": 2},
		map[string]any{"type": "decision", "tick": "seven", "tool": "idle"},
		map[string]any{"type": "ping", "extra": 1},
		map[string]any{"type": "Ping"},
		map[string]any{"tick": 1, "tool": "idle"},
		map[string]any{"type": 1},
		map[string]any{"type": "decision", "params": map[string]any{"a": map[string]any{"b": []any{1, 2, []any{3}}}}},
		map[int]any{1: "hello"},
		[]any{"type", "ping"},
	}
	var out [][]byte
	for _, m := range msgs {
		b, err := cbor.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	out = append(out,
		[]byte{0xa2, 0x64, 't', 'y', 'p', 'e', 0x64, 'p', 'i', 'n', 'g', 0x64, 't', 'y', 'p', 'e', 0x64, 'p', 'i', 'n', 'g'}, // duplicate
		[]byte{0xbf, 0x64, 't', 'y', 'p', 'e', 0x64, 'p', 'i', 'n', 'g', 0xff},                                               // indefinite
		[]byte{0xa1, 0x64, 't', 'y', 'p', 'e', 0xc1, 0x64, 'p', 'i', 'n', 'g'},                                               // tag
		[]byte{0xa1, 0x64, 't', 'y', 'p', 'e', 0x62, 0xff, 0xfe},                                                             // bad UTF-8
		[]byte{0xa2, 0x01, 0x02, 0x64, 't', 'y', 'p', 'e', 0x64, 'p', 'i', 'n', 'g'},                                         // integer key first
		[]byte{0xa2, 0x64, 't', 'y', 'p', 'e', 0x64, 'p', 'i', 'n', 'g', 0x42, 'i', 'd', 0x01},                               // byte-string key
		[]byte("hello there"),
		// Decisions the reflection-free decoder must take as fxamacker does,
		// or leave: duplicate keys, half floats (NaN, subnormal), a negative
		// integer below int64, invalid UTF-8 in a params key, trailing bytes.
		append(decisionHead, 0x64, 't', 'i', 'c', 'k', 0x01, 0x64, 't', 'i', 'c', 'k', 0x02),
		append(decisionHead, 0x66, 'p', 'a', 'r', 'a', 'm', 's', 0xa2, 0x61, 'a', 0x01, 0x61, 'a', 0x02, 0xf6, 0xf6),
		append(decisionHead, 0x64, 't', 'i', 'c', 'k', 0xf9, 0x7e, 0x01, 0x64, 't', 'o', 'o', 'l', 0x60),
		append(decisionHead, 0x64, 't', 'i', 'c', 'k', 0xf9, 0x00, 0x01, 0x66, 'p', 'a', 'r', 'a', 'm', 's', 0xa1, 0x61, 'h', 0xf9, 0x83, 0xff),
		append(decisionHead, 0x64, 't', 'i', 'c', 'k', 0x01, 0x66, 'p', 'a', 'r', 'a', 'm', 's', 0xa1, 0x61, 'n', 0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
		append(decisionHead, 0x64, 't', 'i', 'c', 'k', 0x01, 0x66, 'p', 'a', 'r', 'a', 'm', 's', 0xa1, 0x61, 0xff, 0x01),
		append(decisionHead, 0x64, 't', 'i', 'c', 'k', 0x01, 0x64, 't', 'o', 'o', 'l', 0x64, 'i', 'd', 'l', 'e', 0x00),
		// Raw ids (kept as cbor.RawMessage): a duplicate key, invalid UTF-8.
		[]byte{0xa2, 0x64, 't', 'y', 'p', 'e', 0x64, 'p', 'i', 'n', 'g', 0x62, 'i', 'd', 0xa2, 0x61, 'a', 0x01, 0x61, 'a', 0x02},
		[]byte{0xa2, 0x64, 't', 'y', 'p', 'e', 0x64, 'p', 'i', 'n', 'g', 0x62, 'i', 'd', 0x62, 0xff, 0xfe},
		[]byte{0xa3, 0x64, 't', 'y', 'p', 'e', 0x65, 'q', 'u', 'e', 'r', 'y', 0x64, 't', 'o', 'o', 'l', 0x61, 'x', 0x62, 'i', 'd', 0xa2, 0x61, 'a', 0x01, 0x61, 'a', 0x02},
	)
	return out
}

func sameDecode(t *testing.T, c *Codec, frame []byte) {
	t.Helper()
	fast, ferr := c.Decode(frame)
	full, err := c.decodeFull(frame)
	// Messages are compared by type and encoding (NaN params are not DeepEqual).
	fb, _ := c.Marshal(fast)
	gb, _ := c.Marshal(full)
	if reflect.TypeOf(fast) != reflect.TypeOf(full) || string(fb) != string(gb) || !reflect.DeepEqual(ferr, err) {
		t.Fatalf("frame %x: fast path %#v, %v; full path %#v, %v", frame, fast, ferr, full, err)
	}
	// The same Go types too (a uint64 and an int64 encode alike); %#v
	// prints maps sorted, and NaN as NaN.
	if fd, ok := fast.(*Decision); ok {
		if f, g := fmt.Sprintf("%#v", *fd), fmt.Sprintf("%#v", *full.(*Decision)); f != g {
			t.Fatalf("frame %x: fast path %s, full path %s", frame, f, g)
		}
	}
}

// The fast path of Decode must not change any result: same message, same error.
func TestDecodeFastPathMatchesFullPath(t *testing.T) {
	c, err := NewCodec(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	corpus := decodeCorpus(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range corpus {
		sameDecode(t, c, f)
		for range 2000 { // mutations: flipped, dropped and inserted bytes
			m := append([]byte(nil), f...)
			switch k := rng.IntN(len(m) + 1); rng.IntN(3) {
			case 0:
				if k < len(m) {
					m[k] ^= byte(1 << rng.IntN(8))
				}
			case 1:
				if k < len(m) {
					m = append(m[:k], m[k+1:]...)
				}
			default:
				m = append(m[:k], append([]byte{byte(rng.IntN(256))}, m[k:]...)...)
			}
			sameDecode(t, c, m)
		}
	}
}

func FuzzDecodeFastPath(f *testing.F) {
	c, err := NewCodec(Limits{})
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range decodeCorpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, frame []byte) { sameDecode(t, c, frame) })
}

func BenchmarkDecodeDecision(b *testing.B) {
	c, err := NewCodec(Limits{})
	if err != nil {
		b.Fatal(err)
	}
	frame, err := cbor.Marshal(map[string]any{"type": "decision", "tick": 1234, "tool": "move_to",
		"params": map[string]any{"target_x": 12.5, "target_z": -3.25}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.decodeFull(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Decode(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
}
