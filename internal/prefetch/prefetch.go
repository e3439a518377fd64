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
