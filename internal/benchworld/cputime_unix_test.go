//go:build unix

package benchworld_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used (user and system, every
// thread): on a shared host it measures the work where wall time also
// measures the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
