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
	// The group holds the keys: find "wood"'s bytes among its slots.
	group := unsafe.Slice((*byte)(h.dirPtr), smallInventoryGroup)
	found := false
	for off := uintptr(8); off+unsafe.Sizeof("") <= smallInventoryGroup; off += unsafe.Sizeof("") + unsafe.Sizeof(0) {
		if *(*string)(unsafe.Pointer(&group[off])) == "wood" {
			found = true
		}
	}
	require.True(t, found, "the small map's group holds its keys where swissMap says")

	big := map[string]int{}
	for i := range 100 {
		big[fmt.Sprint(i)] = i
	}
	hb := (*swissMap)(mapHead(big))
	require.Equal(t, uint64(100), hb.used)
	require.NotZero(t, hb.dirLen, "a map of 100 entries has a directory")
	require.Nil(t, mapHead(nil))
}
