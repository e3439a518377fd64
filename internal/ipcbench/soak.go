package ipcbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/server"
	"github.com/fxamacker/cbor/v2"
)

// SoakOptions configure Soak. Zero fields take the defaults in brackets.
type SoakOptions struct {
	Agents   int           // client slots and clients [1000]
	TickRate float64       // realtime ticks per second [10]
	Duration time.Duration // how long to run [10m]
	// Churn is the chance per second that a client drops its connection; it
	// comes back to its slot 0.1 to 2 s later [0.01].
	Churn float64
	// Think is the longest a client takes to decide (uniform from 0) [30ms].
	Think time.Duration
	// Sample is how often the process's resident memory is sampled [10s].
	Sample time.Duration
	Seed   uint64 // [1]
	// Progress, when set, gets each sample as it is taken.
	Progress func(SoakSample)
}

// SoakSample is the state of a soak at one time.
type SoakSample struct {
	At     time.Duration // since the start
	Tick   int           // the world's tick, as the spectator last saw it
	RSSMiB float64       // the process's resident memory (server and clients)
}

// SoakResult is what a soak measured.
type SoakResult struct {
	Agents   int
	TickRate float64
	Ticks    int
	// Intervals between consecutive ticks, as a spectator receives their
	// frames.
	IntervalP50, IntervalP99, IntervalMax time.Duration
	Samples                               []SoakSample
	Reconnects                            int
	// Sent decisions; Applied: results of decisions the clients saw (each
	// application of a decision, by the tick it was applied at); Refused:
	// decisions answered with an error, by code. Sent - Applied - refused
	// ones are the decisions in flight when a client dropped its connection,
	// or whose result was in an observation replaced by a newer one.
	Sent, Applied int
	Errors        map[string]int
}

func (o SoakOptions) withDefaults() SoakOptions {
	if o.Agents <= 0 {
		o.Agents = 1000
	}
	if o.TickRate <= 0 {
		o.TickRate = 10
	}
	if o.Duration <= 0 {
		o.Duration = 10 * time.Minute
	}
	if o.Churn <= 0 {
		o.Churn = 0.01
	}
	if o.Think <= 0 {
		o.Think = 30 * time.Millisecond
	}
	if o.Sample <= 0 {
		o.Sample = 10 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Soak runs a realtime server for opt.Agents clients over a Unix socket for
// opt.Duration. Each client answers every observation after a random think
// time, and now and then drops its connection and comes back to its slot.
// A spectator times the ticks; resident memory is sampled throughout.
func Soak(ctx context.Context, opt SoakOptions) (*SoakResult, error) {
	opt = opt.withDefaults()
	sc, err := Scenario(opt.Agents, 0)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "arena-soak")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	addr := "unix:" + filepath.Join(dir, "soak.sock")
	l, err := ipc.Listen(ctx, addr)
	if err != nil {
		return nil, err
	}
	srv, err := server.New(server.Options{Scenario: sc, Seed: opt.Seed, Agents: opt.Agents, Mode: "realtime", TickRate: opt.TickRate,
		StartAfter: 5 * time.Second, // clients come and go: some slot is always empty
		Ticks:      int(opt.Duration.Seconds()*opt.TickRate) * 10, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		_, err := srv.Serve(ctx, l)
		served <- err
	}()

	res := &SoakResult{Agents: opt.Agents, TickRate: opt.TickRate, Errors: map[string]int{}}
	var mu sync.Mutex // res's counters
	var tick atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < opt.Agents; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &soakAgent{id: fmt.Sprintf("agent_%03d", i+1), addr: addr, opt: opt,
				rng: rand.New(rand.NewPCG(opt.Seed, uint64(i))), errors: map[string]int{}}
			a.run(ctx)
			mu.Lock()
			res.Sent += a.sent
			res.Applied += a.applied
			res.Reconnects += a.reconnects
			for code, n := range a.errors {
				res.Errors[code] += n
			}
			mu.Unlock()
		}()
	}
	var intervals []time.Duration
	specDone := make(chan error, 1)
	go func() { specDone <- spectate(ctx, addr, &tick, &intervals) }()

	began := time.Now()
	sample := time.NewTicker(opt.Sample)
	defer sample.Stop()
	end := time.After(opt.Duration)
loop:
	for {
		select {
		case <-sample.C:
			s := SoakSample{At: time.Since(began).Round(time.Second), Tick: int(tick.Load()), RSSMiB: rssMiB()}
			res.Samples = append(res.Samples, s)
			if opt.Progress != nil {
				opt.Progress(s)
			}
		case <-end:
			break loop
		case <-ctx.Done():
			break loop
		case err := <-served:
			return nil, fmt.Errorf("soak: the server stopped: %v", err)
		}
	}
	cancel()
	wg.Wait()
	specErr := <-specDone
	<-served
	if len(intervals) < 2 {
		return nil, fmt.Errorf("soak: the spectator saw %d ticks: %v", len(intervals), specErr)
	}
	res.Ticks = int(tick.Load())
	intervals = intervals[1:] // the first one includes the start
	slices.Sort(intervals)
	res.IntervalP50, res.IntervalP99 = percentile(intervals, 0.50), percentile(intervals, 0.99)
	res.IntervalMax = intervals[len(intervals)-1]
	return res, nil
}

// rssMiB is the process's resident memory, from /proc/self/status.
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// spectate reads a spectator's frames, recording the time between ticks.
func spectate(ctx context.Context, addr string, tick *atomic.Int64, intervals *[]time.Duration) error {
	nc, err := ipc.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	context.AfterFunc(ctx, func() { nc.Close() })
	b, _ := codec.Marshal(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
	if err := ipc.WriteFrame(nc, b); err != nil {
		return err
	}
	var buf []byte
	last, lastAt := -1, time.Time{}
	for {
		f, err := ipc.ReadFrame(nc, 64<<20, buf)
		if err != nil {
			return err
		}
		now := time.Now()
		buf = f
		var m struct {
			Type string `cbor:"type"`
			Tick int    `cbor:"tick"`
		}
		if cbor.Unmarshal(f, &m) != nil || m.Type != "frame" || m.Tick <= last {
			if m.Type == "ping" {
				b, _ := codec.Marshal(map[string]any{"type": "pong"})
				ipc.WriteFrame(nc, b)
			}
			continue
		}
		if last >= 0 {
			*intervals = append(*intervals, now.Sub(lastAt)/time.Duration(m.Tick-last))
		}
		last, lastAt = m.Tick, now
		tick.Store(int64(m.Tick))
	}
}

// soakAgent is one client of a soak.
type soakAgent struct {
	id, addr string
	opt      SoakOptions
	rng      *rand.Rand

	sent, applied, reconnects int
	lastApplied               int
	errors                    map[string]int
}

func (a *soakAgent) run(ctx context.Context) {
	a.lastApplied = -1
	for ctx.Err() == nil {
		err := a.session(ctx)
		if ctx.Err() != nil {
			return
		}
		var pe *ipc.ProtocolError
		pause := 100*time.Millisecond + time.Duration(a.rng.Int64N(int64(1900*time.Millisecond)))
		if errors.As(err, &pe) && pe.Code == ipc.CodeSlotTaken {
			pause = 50 * time.Millisecond
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		a.reconnects++
	}
}

// session plays one connection until it drops (on purpose, with the churn
// rate) or fails.
func (a *soakAgent) session(ctx context.Context) error {
	nc, err := ipc.Dial(ctx, a.addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	send := func(v any) error {
		b, err := codec.Marshal(v)
		if err != nil {
			return err
		}
		return ipc.WriteFrame(nc, b)
	}
	if err := send(map[string]any{"type": "hello", "protocol": 1, "agent": a.id}); err != nil {
		return err
	}
	// When to drop the connection: exponentially distributed, at Churn a second.
	drop := time.Now().Add(time.Duration(a.rng.ExpFloat64() / a.opt.Churn * float64(time.Second)))
	nc.SetReadDeadline(drop)
	var buf []byte
	for {
		f, err := ipc.ReadFrame(nc, 64<<20, buf)
		if err != nil {
			return err // the planned drop ends here too, as a time-out
		}
		buf = f
		var m struct {
			Type        string `cbor:"type"`
			Tick        int    `cbor:"tick"`
			Code        string `cbor:"code"`
			Message     string `cbor:"message"`
			Fatal       bool   `cbor:"fatal"`
			Observation struct {
				Position         [3]float64 `cbor:"position"`
				LastActionResult *struct {
					Tick      int    `cbor:"tick"`
					ErrorCode string `cbor:"error_code"`
				} `cbor:"last_action_result"`
			} `cbor:"observation"`
		}
		if err := cbor.Unmarshal(f, &m); err != nil {
			return err
		}
		switch m.Type {
		case "error":
			a.errors[m.Code]++
			if m.Fatal {
				return &ipc.ProtocolError{Code: m.Code, Message: m.Message, Fatal: true}
			}
		case "ping":
			if err := send(map[string]any{"type": "pong"}); err != nil {
				return err
			}
		case "observation":
			if r := m.Observation.LastActionResult; r != nil && r.Tick > a.lastApplied && r.ErrorCode != "TIMEOUT" {
				a.applied++
				a.lastApplied = r.Tick
			}
			time.Sleep(time.Duration(a.rng.Int64N(int64(a.opt.Think))))
			d := map[string]any{"type": "decision", "tick": m.Tick, "tool": "idle"}
			if a.rng.IntN(8) == 0 {
				p := m.Observation.Position
				d["tool"] = "move_to"
				d["params"] = map[string]any{"target_x": p[0] + a.rng.Float64()*6 - 3, "target_z": p[2] + a.rng.Float64()*6 - 3}
			}
			if err := send(d); err != nil {
				return err
			}
			a.sent++
		}
	}
}
