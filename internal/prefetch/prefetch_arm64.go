package prefetch

// lines prefetches, into the first-level cache, the 64-byte lines that hold
// the n > 0 bytes from addr: one instruction per 64 bytes, so the callers'
// n are a few hundred bytes.
func lines(addr, n uintptr)
