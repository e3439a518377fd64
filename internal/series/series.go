// Package series keeps per-round records of bounded size for the reports
// components write at the end of an episode.
package series

// Thinned is a per-round record of bounded size: it keeps every round until
// it holds limit of them, then drops every second one kept and from then on
// keeps only every second round (then every fourth, and so on), so that it
// spans the whole run at an even spacing. The latest round is always
// reported.
type Thinned[T any] struct {
	rows     []T
	stride   int // keep every stride-th round (0 means 1)
	seen     int // rounds added
	last     T
	lastKept bool
}

func (h *Thinned[T]) Add(r T, limit int) {
	if h.stride == 0 {
		h.stride = 1
	}
	k := h.seen // the round's index from 0
	h.seen++
	h.last, h.lastKept = r, false
	if k%h.stride != 0 {
		return
	}
	if len(h.rows) >= limit {
		kept := h.rows[:0]
		for j := 0; j < len(h.rows); j += 2 {
			kept = append(kept, h.rows[j])
		}
		clear(h.rows[len(kept):])
		h.rows = kept
		h.stride *= 2
		if k%h.stride != 0 {
			return
		}
	}
	h.rows = append(h.rows, r)
	h.lastKept = true
}

// All is the rounds kept, the latest last.
func (h *Thinned[T]) All() []T {
	if h.seen == 0 || h.lastKept {
		return h.rows
	}
	return append(h.rows[:len(h.rows):len(h.rows)], h.last)
}
