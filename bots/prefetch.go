package bots

import "github.com/arena-sim/arena/internal/prefetch"

// Prefetch implements engine.Prefetcher: the forager's own lines, which
// Decide reads first.
func (f *Forager) Prefetch() { prefetch.Of(f) }
