package world

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestSwissMapHead holds swissMap to the runtime's map head: PrefetchObserve
// reads it to find a small inventory's entries. It fails if a Go release
// moves the fields (the prefetches would then ask for the wrong lines,
// which costs time and nothing else).
func TestSwissMapHead(t *testing.T) {
	small := map[string]int{"wood": 3, "stone": 1}
	h := (*swissMap)(mapHead(small))
	require.Equal(t, uint64(2), h.used)
	require.Zero(t, h.dirLen, "a small map has no directory")
	require.NotNil(t, h.dirPtr)
	// The group holds the keys and their values in slots after its control
	// word: both entries are in two different slots, each key followed by
	// its value (which pins the slots' size, not only the first's place).
	group := unsafe.Slice((*byte)(h.dirPtr), smallInventoryGroup)
	slot := unsafe.Sizeof("") + unsafe.Sizeof(0)
	found := map[string]uintptr{}
	for off := uintptr(8); off+slot <= smallInventoryGroup; off += slot {
		k := *(*string)(unsafe.Pointer(&group[off]))
		if n, ok := small[k]; ok {
			require.Equal(t, n, *(*int)(unsafe.Pointer(&group[off+unsafe.Sizeof("")])), "the value of %q follows it", k)
			found[k] = off
		}
	}
	require.Len(t, found, 2, "the small map's group holds its keys where swissMap says")
	require.NotEqual(t, found["wood"], found["stone"])

	big := map[string]int{}
	for i := range 100 {
		big[fmt.Sprint(i)] = i
	}
	hb := (*swissMap)(mapHead(big))
	require.Equal(t, uint64(100), hb.used)
	require.NotZero(t, hb.dirLen, "a map of 100 entries has a directory")
	require.Nil(t, mapHead(nil))
}
