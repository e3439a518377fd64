// Command arena is Arena's command line: run scenarios headless with
// built-in agents, serve them to external agents, evaluate many episodes,
// replay and verify recorded runs, list scenarios and print tool schemas.
//
//	arena run --scenario foraging [--agents N] [--seed S] [--episodes N] [--out DIR]
//	arena serve --scenario foraging [--listen unix:PATH]... [--mode lockstep|realtime] [--mcp-listen tcp::PORT] [--admin-listen tcp::PORT]
//	arena mcp --scenario foraging [--slot agent_001] [--seed S] [--out DIR]
//	arena eval --scenario foraging --episodes 200 [--parallel P] [--out DIR] [--shard K/N]
//	arena eval merge DIR
//	arena replay DIR/replay.jsonl [--verify]
//	arena view DIR/replay.jsonl | arena view --connect unix:PATH
//	arena scenarios
//	arena tools [--scenario S] [--format text|json|openai|anthropic|mcp]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

const usage = `Arena: a tick server where AI agents live in a shared world and act through tools.

Usage:
  arena run --scenario NAME|FILE [--agents N] [--seed S] [--ticks T] [--episodes N] [--out DIR] [--quiet] [--view]
      Run a scenario headless with built-in agents, as fast as possible; print a
      results table and write DIR/results.json and DIR/replay.jsonl (with several
      episodes: DIR/episode-NNNN/..., and DIR/report.json, episodes.csv, episodes.json).
  arena serve --scenario NAME|FILE [--listen unix:PATH]... [--listen tcp:HOST:PORT]...
              [--mode lockstep|realtime] [--tick-rate HZ] [--agents N] [--bots K]
              [--tokens FILE] [--seed S] [--ticks T] [--episodes N] [--out DIR]
              [--start-after D] [--decision-timeout D] [--mcp-listen tcp:HOST:PORT]
      Serve the scenario to external agents over the CBOR socket protocol
      (docs/protocol.md), and with --mcp-listen to MCP clients over HTTP
      (docs/mcp.md); built-in bots fill K slots. Writes what run writes.
  arena mcp --scenario NAME|FILE [--agents N] [--slot ID] [--seed S] [--ticks T] [--out DIR]
      Serve one agent slot to an MCP client over stdio (docs/mcp.md): the client
      plays the slot through MCP tools, built-in bots play the others, in
      lockstep. Writes what run writes; the results table goes to stderr.
  arena eval --scenario NAME|FILE [--episodes N] [--seed S] [--parallel P] [--agents N]
             [--ticks T] [--out DIR] [--replays] [--plots=false] [--vary NAME=A,B]...
             [--shard K/N | --shards N]
      Run many episodes with built-in agents across cores; write every episode's
      results (CSV and JSON), each metric's mean ± standard error, and PNG plots.
      With --shard K/N (or a Slurm array / Kubernetes Indexed Job) run only one
      share of the episodes into DIR/shard-KKKK (docs/scaling.md).
  arena eval merge [--out DIR] SHARD-DIR...|DIR
      Merge shard folders into the report a single arena eval writes.
  arena replay FILE [--verify] [--quiet]
      Re-simulate a replay headless and print what happened; --verify checks the
      state hash at every tick and names the first tick that differs.
  arena view FILE | arena view --connect unix:PATH|tcp:HOST:PORT [--token T]
      Watch a replay, or join a running server as a spectator, in a window:
      pause, step, speed, pan, zoom and inspect agents (docs/viewer.md).
  arena scenarios [--format text|json] [--scenario NAME|FILE] [--agents N]
      List the built-in scenarios; --format json also gives slot ids, vocabularies,
      rules and tools (what a reinforcement-learning environment needs).
  arena tools [--scenario NAME|FILE] [--format text|json|openai]
      Print the tools agents can call, with their JSON Schema parameters.
  arena bench [--agents N] [--size S] [--ticks T] [--ipc]
      Measure world steps per second with built-in agents on a generated map;
      with --ipc, lockstep decisions per second over a Unix socket.

Run 'arena COMMAND -h' for a command's flags.
`

func main() {
	stopSignals := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		stopSignals = stopSignals[:1] // serve drains on SIGTERM (serve_ops.go)
	}
	ctx, stop := interruptible(context.Background(), os.Stderr, os.Exit, stopSignals...)
	defer stop()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "arena:", err)
		}
		os.Exit(2)
	}
}

// interruptible returns a context cancelled by the first SIGINT or SIGTERM,
// which lets a command stop cleanly (finish the tick under way, write its
// files); a second one calls exit(130) at once. stop releases the signals.
func interruptible(parent context.Context, stderr io.Writer, exit func(int), signals ...os.Signal) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	if len(signals) == 0 {
		signals = []os.Signal{os.Interrupt, syscall.SIGTERM}
	}
	signal.Notify(sigs, signals...)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "arena: stopping (interrupt again to exit at once)")
		cancel()
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "arena: interrupted again: exiting at once")
		exit(130)
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "scenarios":
		return cmdScenarios(args[1:], stdout)
	case "tools":
		return cmdTools(args[1:], stdout)
	case "bench":
		return cmdBench(ctx, args[1:], stdout)
	case "eval":
		return cmdEval(ctx, args[1:], stdout, stderr)
	case "replay":
		return cmdReplay(ctx, args[1:], stdout, stderr)
	case "view":
		return cmdView(ctx, args[1:], stdout, stderr)
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "mcp":
		return cmdMCP(ctx, args[1:], os.Stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

func newFlags(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("arena "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}

// parseInterspersed parses flags that may come before or after the
// positional arguments (arena replay FILE --verify), and returns those.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
}
