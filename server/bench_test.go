package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/arena-sim/arena/internal/ipcbench"
)

// BenchmarkLockstep100Unix runs a lockstep server.Server for 100 clients over
// a Unix socket (b.N ticks, so ns/op is one lockstep tick of 100 decisions),
// then, in the same run, a bare Unix-socket echo of frames of the same sizes
// with the same pattern (write to all 100, wait for all 100 replies). The
// round trip is measured at each client, from the end of the write of its
// decision to the end of the read of its next observation (or echo frame);
// see internal/ipcbench and docs/performance.md.
func BenchmarkLockstep100Unix(b *testing.B) { benchLockstep(b, 100) }

// BenchmarkLockstep1000Unix is BenchmarkLockstep100Unix with 1,000 clients
// on the same field (so each sees about 40 others, not 4).
func BenchmarkLockstep1000Unix(b *testing.B) { benchLockstep(b, 1000) }

func benchLockstep(b *testing.B, agents int) {
	lock, frames, err := ipcbench.Lockstep(context.Background(), ipcbench.Options{Agents: agents, Rounds: b.N, Dir: b.TempDir(),
		OnStart: b.ResetTimer, OnStop: b.StopTimer})
	if err != nil {
		b.Fatal(err)
	}
	echo, err := ipcbench.Echo(context.Background(), ipcbench.Options{Agents: agents, Rounds: b.N, Dir: b.TempDir()}, frames)
	if err != nil {
		b.Fatal(err)
	}
	r := ipcbench.Compare(lock, echo)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	b.ReportMetric(lock.DecisionsPerSec, "decisions/s")
	b.ReportMetric(us(lock.RTTP50), "rtt-p50-µs")
	b.ReportMetric(us(lock.RTTP99), "rtt-p99-µs")
	b.ReportMetric(echo.DecisionsPerSec, "echo-decisions/s")
	b.ReportMetric(us(echo.RTTP50), "echo-p50-µs")
	b.ReportMetric(us(echo.RTTP99), "echo-p99-µs")
	b.ReportMetric(r.DecisionsRatio, "ratio-decisions")
	b.ReportMetric(r.RTTRatioP50, "ratio-p50")
	b.ReportMetric(r.RTTRatioP99, "ratio-p99")
	b.ReportMetric(us(lock.CPUPerDecision), "cpu-µs/decision")
	b.ReportMetric(us(echo.CPUPerDecision), "echo-cpu-µs/decision")
	b.ReportMetric(lock.ObsBytes, "obs-B")
	b.ReportMetric(lock.DecisionBytes, "decision-B")
}
