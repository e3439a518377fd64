package prefetch

import (
	"testing"
	"unsafe"
)

// TestPrefetchNeverFaults asks for lines that are not there: a prefetch is
// a hint, and one that loaded (a MOV instead of PREFETCHT0, say) would
// crash the test on the unmapped pages.
func TestPrefetchNeverFaults(t *testing.T) {
	var x [3]int64
	Of(&x)
	Of[int](nil)
	Bytes(nil, 64)
	Bytes(unsafe.Pointer(&x[1]), 0)
	Bytes(unsafe.Pointer(&x[1]), 1)
	Slice(x[:], 2)
	Slice([]int64(nil), 4)
	Slice(x[:], 0)
	// The page at address 4096 is never mapped (Linux and the BSDs keep
	// the low 64 KB unmapped); the range runs into further unmapped pages.
	Bytes(unsafe.Add(unsafe.Pointer(nil), 4096), 1<<16+3)
}

func BenchmarkOf832(b *testing.B) {
	var x [832]byte
	for range b.N {
		Of(&x)
	}
}
