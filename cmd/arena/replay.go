package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
)

func cmdReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	verify := fs.Bool("verify", false, "check the state hash at every tick and fail at the first divergent one")
	quiet := fs.Bool("quiet", false, "print only the summary, not every tick")
	files, err := parseInterspersed(fs, args) // arena CMD FILE --flag works too
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return errors.New("replay: want one replay file (DIR/replay.jsonl); see 'arena replay -h'")
	}
	rep, err := readReplayFile(files[0])
	if err != nil {
		return err
	}
	w, err := replayWorld(rep.Header)
	if err != nil {
		return fmt.Errorf("replay %s: %w", files[0], err)
	}
	h := rep.Header
	fmt.Fprintf(stdout, "replay of %s, seed %d, episode %d, %d agents, %d ticks recorded%s\n", h.Scenario, h.Seed, max(h.Episode, 1),
		len(h.Agents), len(rep.Ticks), map[bool]string{true: " (cut short: the run did not finish)", false: ""}[rep.Truncated])
	var print func(engine.TickRecord)
	if !*quiet {
		print = func(rec engine.TickRecord) { printTick(stdout, rec) }
	}
	res, err := engine.Play(ctx, rep, w, engine.PlayOptions{Verify: *verify, OnTick: print})
	var div *engine.Divergence
	if errors.As(err, &div) {
		return fmt.Errorf("replay %s: %w", files[0], err)
	}
	if err != nil {
		return fmt.Errorf("replay %s: %w", files[0], err)
	}
	if rep.Results != nil && res.EndReason != "stopped" {
		fmt.Fprintln(stdout)
		printResults(stdout, res)
		if *verify && res.FinalStateHash != rep.Results.FinalStateHash {
			return fmt.Errorf("replay %s: final state hash %s, the replay recorded %s", files[0], res.FinalStateHash, rep.Results.FinalStateHash)
		}
	}
	if *verify {
		last := len(rep.Ticks) - 1
		fmt.Fprintf(stdout, "verified: the state hash matches at every one of %d ticks (0 to %d)\n", len(rep.Ticks), last)
	}
	return nil
}

// readReplayFile reads the replay at path, or in the folder path names. A
// file that is not a replay, such as the results.json beside it, is named
// for what it is.
func readReplayFile(path string) (*engine.Replay, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, replayFile)); err != nil {
			return nil, fmt.Errorf("replay: %s is a folder without a %s", path, replayFile)
		}
		path = filepath.Join(path, replayFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	rep, err := engine.ReadReplay(f)
	if err == nil {
		return rep, nil
	}
	if kind := jsonFileKind(path); kind != "" {
		return nil, fmt.Errorf("replay: %s is %s, not a replay; give the %s beside it", path, kind, replayFile)
	}
	return nil, fmt.Errorf("replay %s: %w", path, err)
}

// jsonFileKind names the file at path when it is one of the JSON files a
// run writes beside its replay, and is "" otherwise.
func jsonFileKind(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) == nil {
			return "a JSON array (an episodes.json?)"
		}
		return ""
	}
	switch {
	case obj["final_state_hash"] != nil && obj["agents"] != nil:
		return "an episode's results (results.json)"
	case obj["pass_rate"] != nil:
		return "an evaluation report (report.json)"
	case obj["episode_list"] != nil:
		return "a shard manifest (shard.json)"
	}
	return "a JSON document"
}

// replayWorld rebuilds a replay's world from the scenario file it carries.
func replayWorld(h engine.JournalHeader) (*world.World, error) {
	if len(h.ScenarioFile) == 0 {
		return nil, errors.New("the replay does not carry its scenario file")
	}
	sc, err := scenarios.Parse(h.Scenario+" (from the replay)", h.ScenarioFile)
	if err != nil {
		return nil, err
	}
	return sc.NewWorld(scenarios.Options{Seed: h.Seed, SecretSeed: h.SecretSeed, Agents: len(h.Agents), Ticks: h.TimeLimit, Variables: h.Variables})
}

// printTick prints what happened in one tick: each decision with its
// outcome, then the events.
func printTick(w io.Writer, rec engine.TickRecord) {
	if len(rec.Decisions) == 0 && len(rec.Events) == 0 {
		return
	}
	for _, d := range rec.Decisions {
		if d.Tool == "idle" && d.Result.Success && !d.TimedOut {
			continue
		}
		outcome := "ok"
		if !d.Result.Success {
			outcome = d.Result.ErrorCode + ": " + d.Result.ErrorMessage
		}
		fmt.Fprintf(w, "tick %d  %s %s%s → %s\n", rec.Tick, d.Agent, d.Tool, formatParams(d.Params), outcome)
	}
	for _, e := range rec.Events {
		fmt.Fprintf(w, "tick %d  event %s%s%s\n", rec.Tick, e.Type, map[bool]string{true: " " + e.Agent, false: ""}[e.Agent != ""], formatParams(e.Data))
	}
}

func formatParams(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return " " + strings.Join(parts, " ")
}
