package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/arena-sim/arena/world"
)

// Replay is a journal read back: its header, its ticks in order, and its
// results when the run finished. A journal cut short (a run that crashed or
// was killed) reads up to its last complete tick, with Truncated set.
type Replay struct {
	Header    JournalHeader
	Ticks     []TickRecord
	Results   *Results
	Truncated bool
}

// ReadReplay reads a journal. A last line without its newline, or one that
// does not parse, is what a killed writer leaves: it is dropped and the
// replay marked Truncated. A bad line anywhere else is an error.
func ReadReplay(r io.Reader) (*Replay, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	rep := &Replay{}
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 { // an unfinished last line
				rep.Truncated = true
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read replay: %w", err)
		}
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &kind); err != nil {
			if _, perr := br.Peek(1); errors.Is(perr, io.EOF) {
				rep.Truncated = true
				break
			}
			return nil, fmt.Errorf("replay line %d: %w", n, err)
		}
		switch {
		case n == 1 && kind.Type != "header":
			return nil, fmt.Errorf("replay line 1: want the header, got %q", kind.Type)
		case kind.Type == "header":
			if n != 1 {
				return nil, fmt.Errorf("replay line %d: a second header", n)
			}
			if err := json.Unmarshal(line, &rep.Header); err != nil {
				return nil, fmt.Errorf("replay header: %w", err)
			}
			if rep.Header.Version != JournalVersion {
				return nil, fmt.Errorf("replay format version %d; this build reads version %d", rep.Header.Version, JournalVersion)
			}
		case kind.Type == "tick":
			var t TickRecord
			if err := json.Unmarshal(line, &t); err != nil {
				return nil, fmt.Errorf("replay line %d: %w", n, err)
			}
			if want := rep.Header.firstTick() + len(rep.Ticks); t.Tick != want {
				return nil, fmt.Errorf("replay line %d: tick %d where tick %d was expected", n, t.Tick, want)
			}
			for i := range t.Decisions {
				if p := t.Decisions[i].Params; p != nil {
					// Params that are themselves one tagged number were not a
					// map when recorded: keep them as the map they now are.
					if m, ok := unfinite(p).(map[string]any); ok {
						t.Decisions[i].Params = m
					}
				}
			}
			rep.Ticks = append(rep.Ticks, t)
		case kind.Type == "end":
			var end struct {
				Results *Results `json:"results"`
			}
			if err := json.Unmarshal(line, &end); err != nil {
				return nil, fmt.Errorf("replay line %d: %w", n, err)
			}
			rep.Results = end.Results
		default:
			return nil, fmt.Errorf("replay line %d: unknown line type %q", n, kind.Type)
		}
	}
	if rep.Header.Type == "" {
		return nil, errors.New("replay is empty")
	}
	if rep.Results == nil {
		rep.Truncated = true
	}
	return rep, nil
}

// firstTick is the first tick a journal records: worlds start at 0.
func (h JournalHeader) firstTick() int { return 0 }

// Divergence is where a re-simulation left its replay.
type Divergence struct {
	Tick         int // the first tick whose state differs
	Want, Got    string
	DecisionDiff string // the first decision whose result differs, if any
}

func (d *Divergence) Error() string {
	msg := fmt.Sprintf("replay diverges at tick %d: state hash %s, the replay recorded %s", d.Tick, d.Got, d.Want)
	if d.DecisionDiff != "" {
		msg += " (" + d.DecisionDiff + ")"
	}
	return msg
}

// PlayOptions are the optional parts of Play.
type PlayOptions struct {
	// Verify checks the state hash at the start and after every tick; the
	// first mismatch is returned as a *Divergence.
	Verify bool
	// OnTick, when set, is called after every tick with the tick's record as
	// re-simulated.
	OnTick func(TickRecord)
	// OnObserve, when set, is the runner's OnObserve.
	OnObserve func(tick int, obs []*world.Observation)
}

// Play re-simulates a replay on w, a world built afresh from its header's
// scenario, seed and agents, applying the recorded decisions through the same
// runner. Play stops after the last recorded tick and returns the
// re-simulation's results (EndReason "stopped" when the replay was cut short).
func Play(ctx context.Context, rep *Replay, w *world.World, opt PlayOptions) (*Results, error) {
	verify, onTick := opt.Verify, opt.OnTick
	if got := world.FormatHash(w.StateHash()); verify && rep.Header.InitialHash != "" && got != rep.Header.InitialHash {
		return nil, &Divergence{Tick: 0, Want: rep.Header.InitialHash, Got: got, DecisionDiff: "the initial state differs: another scenario file, seed or agent count"}
	}
	agents := w.Agents()
	if len(agents) != len(rep.Header.Agents) {
		return nil, fmt.Errorf("replay has %d agents, the world %d", len(rep.Header.Agents), len(agents))
	}
	for i, a := range agents {
		if a.ID != rep.Header.Agents[i] {
			return nil, fmt.Errorf("replay agent %d is %q, the world's is %q", i+1, rep.Header.Agents[i], a.ID)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := &replayGatherer{rep: rep}
	var failure error
	r := &Runner{World: w, Gatherer: g, DecisionPeriod: rep.Header.DecisionPeriod, MaxTicks: rep.Header.TimeLimit, Record: true, OnObserve: opt.OnObserve}
	r.OnTick = func(rec *TickRecord) {
		got := *rec
		i := got.Tick - rep.Header.firstTick()
		if i >= len(rep.Ticks) {
			cancel()
			return
		}
		want := rep.Ticks[i]
		if onTick != nil {
			onTick(got)
		}
		if verify && got.Hash != want.Hash {
			failure = &Divergence{Tick: got.Tick, Want: want.Hash, Got: got.Hash, DecisionDiff: firstResultDiff(want, got)}
			cancel()
			return
		}
		if i == len(rep.Ticks)-1 {
			cancel()
		}
	}
	res, err := r.Run(ctx)
	if failure != nil {
		return res, failure
	}
	return res, err
}

// firstResultDiff names the first decision whose outcome differs.
func firstResultDiff(want, got TickRecord) string {
	for i, d := range want.Decisions {
		if i >= len(got.Decisions) {
			return fmt.Sprintf("%s's %s was not applied", d.Agent, d.Tool)
		}
		g := got.Decisions[i]
		if g.Agent != d.Agent {
			return fmt.Sprintf("decision %d was %s's, now %s's", i+1, d.Agent, g.Agent)
		}
		if g.Result.Success != d.Result.Success || g.Result.ErrorCode != d.Result.ErrorCode {
			return fmt.Sprintf("%s's %s: recorded %s, now %s", d.Agent, d.Tool, outcome(d.Result), outcome(g.Result))
		}
	}
	return ""
}

func outcome(r world.ActionResult) string {
	if r.Success {
		return "success"
	}
	return "failure " + r.ErrorCode
}

// replayGatherer hands the runner the decisions a replay recorded.
type replayGatherer struct {
	rep *Replay
}

func (g *replayGatherer) Gather(_ context.Context, tick int, obs []*world.Observation, decisions []world.Decision) error {
	i := tick - g.rep.Header.firstTick()
	if i < 0 || i >= len(g.rep.Ticks) {
		return nil
	}
	byAgent := map[string]int{}
	for k, o := range obs {
		if o != nil {
			byAgent[o.AgentID] = k
		}
	}
	for _, d := range g.rep.Ticks[i].Decisions {
		k, ok := byAgent[d.Agent]
		if !ok {
			return fmt.Errorf("tick %d: the replay has a decision for %q, which is not a living agent", tick, d.Agent)
		}
		decisions[k] = world.Decision{Tool: d.Tool, Params: d.Params, Reasoning: d.Reasoning, TimedOut: d.TimedOut}
	}
	return nil
}
