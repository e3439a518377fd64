// Package prefetch asks the processor to bring memory into its caches ahead
// of use, where the hardware cannot guess the address: the structures of
// the next agents in a loop over thousands of them, scattered over the heap.
// A prefetch never faults and never changes what a program computes. It is
// PREFETCHT0 on amd64 and PRFM PLDL1KEEP on arm64; elsewhere it does nothing.
package prefetch

import "unsafe"

// Bytes prefetches the cache lines of the n bytes from p.
func Bytes(p unsafe.Pointer, n uintptr) {
	if p != nil && n > 0 {
		lines(uintptr(p), n)
	}
}

// Of prefetches the cache lines of the value p points to.
func Of[T any](p *T) {
	if n := unsafe.Sizeof(*p); p != nil && n > 0 {
		lines(uintptr(unsafe.Pointer(p)), n)
	}
}

// Slice prefetches the cache lines of the first elements of s, at most max
// of them.
func Slice[T any](s []T, max int) {
	if n := min(len(s), max); n > 0 {
		Bytes(unsafe.Pointer(unsafe.SliceData(s)), uintptr(n)*unsafe.Sizeof(s[0]))
	}
}
