package prefetch

// lines prefetches, into every level of the cache, the lines that hold the
// n > 0 bytes from addr: one instruction per 64 bytes, so the callers' n
// are a few hundred bytes.
func lines(addr, n uintptr)
