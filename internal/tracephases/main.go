// Command tracephases reads an execution trace of an Arena run (arena bench
// --ipc --trace, or go test -trace) and prints, for every kind of region the
// tick loop marks (tick, observe, gather, prepare, apply, worldstep), how long
// it took on average and how busy the cores were meanwhile, by kind of
// goroutine: the tick goroutine (the one that marks the regions), the
// engine's workers, the server's connection readers, the benchmark's
// clients, the bare echo's readers, the garbage collector, and the rest. A
// goroutine counts as busy while it runs or is in a system call.
//
// It is a module of its own so that the simulator does not depend on
// golang.org/x/exp:
//
//	cd internal/tracephases && go run . /tmp/ipc-lockstep-1.trace
//
// docs/performance.md ("Where a lockstep tick goes, phase by phase") shows
// what it prints.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"golang.org/x/exp/trace"
)

func main() {
	skip := flag.Int("skip", 5, "ticks (tick regions) left out at the start, and 2 at the end")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: tracephases [-skip N] TRACE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *skip, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tracephases:", err)
		os.Exit(1)
	}
}

type span struct{ from, to trace.Time }

type region struct {
	name string
	span
}

// phases is what a trace holds that the report needs.
type phases struct {
	busy    map[trace.GoID][]span // when each goroutine ran or was in a system call
	funcs   map[trace.GoID]map[string]bool
	regions []region
	tickG   trace.GoID // the goroutine that marks the regions
}

func read(r io.Reader) (*phases, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	p := &phases{busy: map[trace.GoID][]span{}, funcs: map[trace.GoID]map[string]bool{}}
	since := map[trace.GoID]trace.Time{}
	open := map[string]trace.Time{}
	note := func(g trace.GoID, s trace.Stack) {
		if p.funcs[g] == nil {
			p.funcs[g] = map[string]bool{}
		}
		for f := range s.Frames() {
			p.funcs[g][f.Func] = true
		}
	}
	busy := func(s trace.GoState) bool { return s == trace.GoRunning || s == trace.GoSyscall }
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind() {
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			from, to := st.Goroutine()
			note(g, st.Stack)
			if ev.Goroutine() == g {
				note(g, ev.Stack())
			}
			switch {
			case busy(to) && !busy(from):
				since[g] = ev.Time()
			case busy(from) && !busy(to):
				if t, ok := since[g]; ok {
					p.busy[g] = append(p.busy[g], span{t, ev.Time()})
					delete(since, g)
				}
			}
		case trace.EventRegionBegin:
			p.tickG = ev.Goroutine()
			open[ev.Region().Type] = ev.Time()
		case trace.EventRegionEnd:
			name := ev.Region().Type
			if t, ok := open[name]; ok {
				p.regions = append(p.regions, region{name, span{t, ev.Time()}})
				delete(open, name)
			}
		}
	}
	return p, nil
}

// kind names what a goroutine is, from the functions on its stacks.
func (p *phases) kind(g trace.GoID) string {
	has := func(s string) bool {
		for f := range p.funcs[g] {
			if strings.Contains(f, s) {
				return true
			}
		}
		return false
	}
	switch {
	case g == p.tickG:
		return "tick"
	case has("client).play"):
		return "clients"
	case has("readLoop"):
		return "readers"
	case has("echoServe.func"):
		return "echo readers"
	case has("pool).run") || has("WaitGroup).Go"):
		return "workers"
	case has("gcBgMarkWorker") || has("bgsweep") || has("bgscavenge"):
		return "gc"
	}
	return "other"
}

func run(file string, skip int, w io.Writer) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := read(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	var ticks []region
	for _, r := range p.regions {
		if r.name == "tick" {
			ticks = append(ticks, r)
		}
	}
	if len(ticks) <= skip+2 {
		return fmt.Errorf("%s: %d tick regions, too few to leave out %d and 2", file, len(ticks), skip)
	}
	ticks = ticks[skip : len(ticks)-2]
	lo, hi := ticks[0].from, ticks[len(ticks)-1].to
	type total struct {
		wall float64
		n    int
		busy map[string]float64
	}
	totals := map[string]*total{}
	kinds := map[trace.GoID]string{}
	for g, spans := range p.busy {
		kinds[g] = p.kind(g)
		slices.SortFunc(spans, func(a, b span) int { return int(a.from - b.from) })
	}
	for _, r := range p.regions {
		if r.from < lo || r.to > hi {
			continue
		}
		t := totals[r.name]
		if t == nil {
			t = &total{busy: map[string]float64{}}
			totals[r.name] = t
		}
		t.wall += float64(r.to - r.from)
		t.n++
		for g, spans := range p.busy {
			i := sort.Search(len(spans), func(i int) bool { return spans[i].to > r.from })
			for ; i < len(spans) && spans[i].from < r.to; i++ {
				if d := min(spans[i].to, r.to) - max(spans[i].from, r.from); d > 0 {
					t.busy[kinds[g]] += float64(d)
				}
			}
		}
	}
	fmt.Fprintf(w, "%d ticks; per region: mean duration, then cores busy by kind of goroutine\n", len(ticks))
	for _, name := range []string{"tick", "observe", "gather", "prepare", "apply", "worldstep"} {
		t := totals[name]
		if t == nil {
			continue
		}
		var ks []string
		for k := range t.busy {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		sum := 0.0
		fmt.Fprintf(w, "%-9s %8.1f µs:", name, t.wall/float64(t.n)/1e3)
		for _, k := range ks {
			if share := t.busy[k] / t.wall; share >= 0.005 {
				fmt.Fprintf(w, " %s %.2f", k, share)
			}
			sum += t.busy[k]
		}
		fmt.Fprintf(w, " | all %.2f\n", sum/t.wall)
	}
	return nil
}
