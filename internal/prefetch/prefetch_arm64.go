package prefetch

// lines prefetches, into the first-level cache, the 64-byte lines that
// hold the n > 0 bytes from addr.
func lines(addr, n uintptr)
