package ipcbench

import (
	"encoding/binary"
	"errors"
	"github.com/x448/float16"
	"math"
)

// A lean client reads what it needs of a message and skips the rest: this is
// a minimal CBOR reader for that (definite lengths only, which is all the
// server sends). It is not a validator.

var errCBOR = errors.New("ipcbench: malformed or unsupported CBOR")

type reader struct {
	b   []byte
	off int
}

// head reads an item's initial byte and argument.
func (r *reader) head() (major byte, ai byte, arg uint64, err error) {
	if r.off >= len(r.b) {
		return 0, 0, 0, errCBOR
	}
	c := r.b[r.off]
	r.off++
	major, ai = c>>5, c&31
	switch {
	case ai < 24:
		return major, ai, uint64(ai), nil
	case ai <= 27:
		n := 1 << (ai - 24)
		if r.off+n > len(r.b) {
			return 0, 0, 0, errCBOR
		}
		p := r.b[r.off : r.off+n]
		r.off += n
		switch n {
		case 1:
			arg = uint64(p[0])
		case 2:
			arg = uint64(binary.BigEndian.Uint16(p))
		case 4:
			arg = uint64(binary.BigEndian.Uint32(p))
		default:
			arg = binary.BigEndian.Uint64(p)
		}
		return major, ai, arg, nil
	}
	return 0, 0, 0, errCBOR // indefinite lengths and reserved values
}

// text reads a text or byte string.
func (r *reader) text() ([]byte, error) {
	major, _, n, err := r.head()
	if err != nil || (major != 2 && major != 3) || n > uint64(len(r.b)-r.off) {
		return nil, errCBOR
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s, nil
}

// number reads an integer or a float of any width.
func (r *reader) number() (float64, error) {
	major, ai, arg, err := r.head()
	switch {
	case err != nil:
		return 0, err
	case major == 0:
		return float64(arg), nil
	case major == 1:
		return -1 - float64(arg), nil
	case major == 7 && ai == 25:
		return float64(float16.Frombits(uint16(arg)).Float32()), nil
	case major == 7 && ai == 26:
		return float64(math.Float32frombits(uint32(arg))), nil
	case major == 7 && ai == 27:
		return math.Float64frombits(arg), nil
	}
	return 0, errCBOR
}

// skip skips one item.
func (r *reader) skip() error {
	major, _, n, err := r.head()
	if err != nil {
		return err
	}
	switch major {
	case 2, 3:
		if n > uint64(len(r.b)-r.off) {
			return errCBOR
		}
		r.off += int(n)
	case 4, 5:
		if major == 5 {
			n *= 2
		}
		if n > uint64(len(r.b)-r.off) {
			return errCBOR
		}
		for range n {
			if err := r.skip(); err != nil {
				return err
			}
		}
	case 6:
		return r.skip()
	}
	return nil
}

// mapLen reads a map's head.
func (r *reader) mapLen() (int, error) {
	major, _, n, err := r.head()
	if err != nil || major != 5 || n > uint64(len(r.b)-r.off) {
		return 0, errCBOR
	}
	return int(n), nil
}

// parseHead reads a server message's type and tick and, in an observation,
// the agent's position, skipping everything else.
func parseHead(b []byte, m *incoming) error {
	r := &reader{b: b}
	n, err := r.mapLen()
	if err != nil {
		return err
	}
	for range n {
		k, err := r.text()
		if err != nil {
			return err
		}
		switch string(k) {
		case "type":
			t, err := r.text()
			if err != nil {
				return err
			}
			m.Type = string(t)
		case "tick":
			v, err := r.number()
			if err != nil {
				return err
			}
			m.Tick = int(v)
		case "observation":
			on, err := r.mapLen()
			if err != nil {
				return err
			}
			for range on {
				k, err := r.text()
				if err != nil {
					return err
				}
				if string(k) != "position" {
					if err := r.skip(); err != nil {
						return err
					}
					continue
				}
				if major, _, l, err := r.head(); err != nil || major != 4 || l != 3 {
					return errCBOR
				}
				for i := range 3 {
					if m.Observation.Position[i], err = r.number(); err != nil {
						return err
					}
				}
			}
		default:
			if err := r.skip(); err != nil {
				return err
			}
		}
	}
	if r.off != len(b) {
		return errCBOR
	}
	return nil
}
