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
//	arena scenarios [--format text|json]
//	arena tools [--scenario S] [--format text|json|openai|anthropic|mcp]
//	arena help [COMMAND] | arena version | arena completion bash|zsh|fish
//
// The commands and their help are in cli.go's table; every command checks
// its flags there (names with "did you mean", numbers) before any work.
//
// default.pgo is the profile `go build` optimises the command with; pgo.sh
// makes it.
package main

//go:generate ./pgo.sh

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	stopSignals := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		stopSignals = stopSignals[:1] // serve drains on SIGTERM (serve_ops.go)
	}
	ctx, stop := interruptible(context.Background(), os.Stderr, os.Exit, stopSignals...)
	defer stop()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "arena:", err)
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

// run runs the command args names. A command's -h prints its help to
// stdout and succeeds; every mistake is one line in the returned error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdout, stderr)
	var h *helpRequest
	if errors.As(err, &h) {
		commandHelp(stdout, h.name, h.fs)
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage())
		return errors.New("no command given")
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "scenarios":
		return cmdScenarios(ctx, args[1:], stdout)
	case "tools":
		return cmdTools(ctx, args[1:], stdout)
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
	case "version", "--version", "-version", "-v":
		return cmdVersion(args[1:], stdout)
	case "completion":
		return cmdCompletion(ctx, args[1:], stdout)
	case "help", "-h", "--help", "-help":
		return cmdHelp(ctx, args[1:], stdout, stderr)
	}
	if strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("unknown flag %s: flags come after the command; see 'arena help'", args[0])
	}
	return fmt.Errorf("unknown command %q%s; see 'arena help'", args[0], didYouMean(args[0], commandNames(), ""))
}

// cmdHelp prints the usage, or one command's help: what COMMAND -h prints.
func cmdHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("help", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	args = fs.Args()
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, topUsage())
		return nil
	case len(args) == 2 && args[0] == "eval" && args[1] == "merge", len(args) == 1:
		name := strings.Join(args, " ")
		if lookupCommand(name) == nil {
			return fmt.Errorf("help: unknown command %q%s; see 'arena help'", name, didYouMean(name, commandNames(), ""))
		}
		switch name {
		case "version", "completion", "help":
			commandHelp(stdout, name, nil)
			return nil
		}
		return dispatch(ctx, append(args, "-h"), stdout, stderr)
	}
	return fmt.Errorf("help: want one command, got %q", strings.Join(args, " "))
}

// parseInterspersed parses flags that may come before or after the
// positional arguments (arena replay FILE --verify), and returns those.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		if err := checkNumbers(fs); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
}
