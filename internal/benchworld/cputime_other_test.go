//go:build !unix

package benchworld_test

import "time"

// cpuTime is not measured here; BenchmarkScaling then reports no CPU figure.
func cpuTime() time.Duration { return 0 }
