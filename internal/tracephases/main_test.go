package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// spin keeps a goroutine running for d.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// A traced loop of ticks whose observe phase runs a second goroutine beside
// the one marking the regions: the report finds every tick, the phases'
// durations, and about two busy goroutines in observe against one in
// worldstep.
func TestReportsPhasesAndTheCoresBusy(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // two Ps, whatever the machine
	file := filepath.Join(t.TempDir(), "t.trace")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var stop atomic.Bool
	for range 20 {
		tick := trace.StartRegion(ctx, "tick")
		obs := trace.StartRegion(ctx, "observe")
		stop.Store(false)
		done := make(chan bool)
		go func() { // a worker
			for !stop.Load() {
			}
			close(done)
		}()
		spin(3 * time.Millisecond)
		stop.Store(true)
		<-done
		obs.End()
		step := trace.StartRegion(ctx, "worldstep")
		spin(2 * time.Millisecond)
		step.End()
		tick.End()
	}
	trace.Stop()
	f.Close()
	var out bytes.Buffer
	if err := run(file, 5, &out); err != nil {
		t.Fatal(err)
	}
	report := out.String()
	if !strings.HasPrefix(report, "13 ticks;") {
		t.Fatalf("report of %q: want 13 ticks (20 less 5 and 2)", report)
	}
	all := func(phase string) float64 {
		for _, line := range strings.Split(report, "\n") {
			if strings.HasPrefix(line, phase+" ") {
				var v float64
				if _, err := fmt.Sscan(line[strings.LastIndex(line, "all ")+4:], &v); err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		t.Fatalf("no %s in %q", phase, report)
		return 0
	}
	if obs, step := all("observe"), all("worldstep"); obs < 1.5 || step > 1.3 {
		t.Fatalf("cores busy: observe %.2f (want about 2), worldstep %.2f (want about 1)\n%s", obs, step, report)
	}
}
