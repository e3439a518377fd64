package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/mcp"
	"github.com/arena-sim/arena/scenarios"
)

// cmdMCP serves one agent slot of an in-process lockstep episode to an MCP
// client over stdin and stdout; everything else goes to stderr.
func cmdMCP(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.Writer, stderr io.Writer) error {
	fs := newFlags("mcp", stderr)
	scenario := fs.String("scenario", "foraging", "built-in scenario name or path to a scenario file")
	agents := fs.Int("agents", 0, "number of agents (default: the scenario's)")
	slot := fs.String("slot", "agent_001", "the agent slot the MCP client plays; the scenario's built-in bot plays the others")
	secretSeed := fs.Uint64("secret-seed", 0, "seed of hidden information such as a role deal (default: a fresh random seed, recorded in results.json and the replay)")
	seed := fs.Uint64("seed", 0, "seed of the world and the built-in bots (default: a fresh random seed, recorded in results.json; the client is an agent, so it must not be able to re-run its game)")
	ticks := fs.Int("ticks", 0, "end the episode after this many ticks, replacing the scenario's time limit")
	out := fs.String("out", "", "output folder for results.json and replay.jsonl (default runs/SCENARIO-seedS)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFlags(fs, 0, "agents", "ticks"); err != nil {
		return err
	}
	sc, err := loadScenario(ctx, "mcp", *scenario)
	if err != nil {
		return err
	}
	if err := checkWorld(sc, scenarios.Options{Agents: *agents, Ticks: *ticks}); err != nil {
		return err
	}
	if ids := sc.AgentIDs(*agents); !slices.Contains(ids, *slot) {
		return fmt.Errorf("mcp: --slot: scenario %s has no agent slot %q%s; slots: %s", sc.Name, *slot, didYouMean(*slot, ids, ""), strings.Join(ids, ", "))
	}
	if *seed == 0 {
		*seed = engine.FreshSeed()
	}
	dir := outDir(*out, sc, *seed)
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	logger.Info("arena mcp: serving over stdio", "scenario", sc.Name, "slot", *slot, "seed", *seed, "out", dir)
	res, err := mcp.ServeStdio(ctx, mcp.Config{Scenario: sc, Agents: *agents, Slot: *slot, Seed: *seed, SecretSeed: *secretSeed, Ticks: *ticks,
		Recorder: &folder{dir: dir, episodes: 1, sc: sc, replays: true}, Log: logger}, stdin, writeCloser{stdout})
	if err != nil {
		return err
	}
	// stdout belongs to the protocol: the table goes to stderr.
	printResults(stderr, res)
	fmt.Fprintf(stderr, "\nended: %s after %d ticks\nfinal state hash: %s\nresults: %s\nreplay: %s\n", res.EndReason, res.Ticks,
		res.FinalStateHash, filepath.Join(dir, resultsFile), filepath.Join(dir, replayFile))
	return nil
}

// writeCloser is stdout for the MCP transport, which closes its writer at
// the end.
type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
