//go:build !race

// The race detector's sync.Pool drops a quarter of what it is handed, on
// purpose, so this test is built without it.

package ipc

import (
	"runtime"
	"testing"
)

// A buffer handed back and taken again costs no allocation (the pool boxes
// it in a box it recycles too). One P, so that what is put is found by the
// next get (a sync.Pool keeps an item on the P that put it).
func TestBufPoolRecyclesWithoutAllocating(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var p bufPool
	p.put(make([]byte, 0, 2048))
	allocs := testing.AllocsPerRun(1000, func() {
		b := p.get()
		if cap(b) < 2048 {
			b = make([]byte, 0, 2048)
		}
		p.put(append(b, 1, 2, 3))
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per buffer recycled, want 0", allocs)
	}
	if b := p.get(); len(b) != 0 || cap(b) < 2048 {
		t.Fatalf("got a buffer of length %d and capacity %d, want an empty one of 2048", len(b), cap(b))
	}
}
