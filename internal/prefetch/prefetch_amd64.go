package prefetch

// lines prefetches, into every level of the cache, the lines that hold the
// n > 0 bytes from addr.
func lines(addr, n uintptr)
