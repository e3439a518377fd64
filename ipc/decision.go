package ipc

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// decodeDecision decodes the usual decision (the one message every agent
// sends every tick) without reflection: a map of "type" (which must be
// "decision"), "tick" (an integer of magnitude below 2^53, or a float), "tool",
// "reasoning" (text) and "params" (a map of at most 16 text keys with text,
// integer, float, boolean or null values), each at most once. It gives up
// (false) on anything else, which Decode's other paths then decode, or
// refuse with the exact error; on what it takes, it gives what they would:
// the same values of the same Go types (TestDecodeFastPathMatchesFullPath,
// FuzzDecodeFastPath).
func decodeDecision(b []byte) (*Decision, bool) {
	p := peeker{b: b}
	major, n, ok := p.head()
	if !ok || major != 5 || n > 5 {
		return nil, false
	}
	d := &Decision{}
	var seen uint8
	for range n {
		key, ok := p.text()
		if !ok {
			return nil, false
		}
		var bit uint8
		switch string(key) {
		case "type":
			bit = 1
			v, ok := p.text()
			if !ok || string(v) != "decision" {
				return nil, false
			}
			d.Type = "decision"
		case "tick":
			bit = 2
			v, ok := p.number()
			if !ok {
				return nil, false
			}
			d.Tick = v
		case "tool":
			bit = 4
			v, ok := p.text()
			if !ok {
				return nil, false
			}
			d.Tool = toolName(v)
		case "reasoning":
			bit = 8
			v, ok := p.text()
			if !ok {
				return nil, false
			}
			d.Reasoning = string(v)
		case "params":
			bit = 16
			if d.Params, ok = p.params(); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
		if seen&bit != 0 {
			return nil, false
		}
		seen |= bit
	}
	return d, seen&1 != 0 && p.off == len(p.b)
}

// toolNames maps the universal tools' names to themselves, so that a
// decision naming one (nearly every decision) takes its name without
// allocating. Read only after init.
var toolNames = func() map[string]string {
	m := map[string]string{}
	for _, t := range tools.Universal(world.Rules{}) {
		m[t.Name] = t.Name
	}
	return m
}()

// toolName is the tool named by b: a universal tool's name without
// allocating, any other as a new string.
func toolName(b []byte) string {
	if s, ok := toolNames[string(b)]; ok {
		return s
	}
	return string(b)
}

// text reads a text string (valid UTF-8); the bytes are the frame's.
func (p *peeker) text() ([]byte, bool) {
	major, n, ok := p.head()
	if !ok || major != 3 || n > uint64(len(p.b)-p.off) {
		return nil, false
	}
	s := p.b[p.off : p.off+int(n)]
	p.off += int(n)
	return s, utf8.Valid(s)
}

// maxExact is the largest integer every float64 near it holds exactly.
const maxExact = 1 << 53

// number reads an integer of magnitude below 2^53 or a float, as a float64.
func (p *peeker) number() (float64, bool) {
	if p.off >= len(p.b) {
		return 0, false
	}
	switch c := p.b[p.off]; c >> 5 {
	case 0, 1:
		_, n, ok := p.head()
		if !ok || n >= maxExact {
			return 0, false
		}
		if c>>5 == 1 {
			return -1 - float64(n), true
		}
		return float64(n), true
	case 7:
		return p.float()
	}
	return 0, false
}

// float reads a half, single or double precision float.
func (p *peeker) float() (float64, bool) {
	var size int
	switch p.b[p.off] {
	case 0xf9:
		size = 2
	case 0xfa:
		size = 4
	case 0xfb:
		size = 8
	}
	if size == 0 || size > len(p.b)-p.off-1 {
		return 0, false
	}
	v := p.b[p.off+1 : p.off+1+size]
	p.off += 1 + size
	switch size {
	case 2:
		return halfToFloat(binary.BigEndian.Uint16(v)), true
	case 4:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(v))), true
	}
	return math.Float64frombits(binary.BigEndian.Uint64(v)), true
}

// halfToFloat converts a half-precision float.
func halfToFloat(h uint16) float64 {
	sign, exp, mant := h>>15, int(h>>10&0x1f), float64(h&0x3ff)
	var f float64
	switch exp {
	case 0:
		f = math.Ldexp(mant, -24)
	case 0x1f:
		if mant != 0 {
			return math.NaN()
		}
		f = math.Inf(1)
	default:
		f = math.Ldexp(1024+mant, exp-25)
	}
	if sign != 0 {
		return -f
	}
	return f
}

// params reads a decision's params: a map of at most 16 distinct text keys
// whose values are text, integers (uint64, or int64 when negative), floats
// (float64), booleans or null, as fxamacker/cbor decodes them into a
// map[string]any.
func (p *peeker) params() (map[string]any, bool) {
	major, n, ok := p.head()
	if !ok || major != 5 || n > 16 {
		return nil, false
	}
	var keys [16][]byte
	m := make(map[string]any, n)
	for i := range int(n) {
		k, ok := p.text()
		if !ok {
			return nil, false
		}
		for _, prev := range keys[:i] {
			if string(prev) == string(k) {
				return nil, false
			}
		}
		keys[i] = k
		if p.off >= len(p.b) {
			return nil, false
		}
		var v any
		switch c := p.b[p.off]; {
		case c>>5 == 0:
			_, u, ok := p.head()
			if !ok {
				return nil, false
			}
			v = u
		case c>>5 == 1:
			_, u, ok := p.head()
			if !ok || u > math.MaxInt64 {
				return nil, false
			}
			v = -1 - int64(u)
		case c>>5 == 3:
			s, ok := p.text()
			if !ok {
				return nil, false
			}
			v = string(s)
		case c == 0xf4 || c == 0xf5:
			p.off++
			v = c == 0xf5
		case c == 0xf6:
			p.off++
		case c >= 0xf9 && c <= 0xfb:
			f, ok := p.float()
			if !ok {
				return nil, false
			}
			v = f
		default:
			return nil, false
		}
		m[string(k)] = v
	}
	return m, true
}
