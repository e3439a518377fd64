package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/arena-sim/arena/scenarios"
)

// command is one subcommand as its help and the top-level usage describe it.
type command struct {
	name     string
	synopsis string // the usage lines after "arena "
	about    string // what it does, a few lines
	examples []string
	hidden   bool // not listed in the top-level usage (help, completion, version are listed apart)
}

// commands are arena's subcommands, in the order the usage lists them.
// Their flags are not repeated here: help prints each command's flag set,
// and the completion scripts are generated from the same flag sets.
var commands = []command{
	{name: "run", synopsis: "run --scenario NAME|FILE [--agents N] [--seed S] [--ticks T] [--episodes N] [--out DIR] [--quiet] [--view] [--agent builtin|llm]",
		about: `Run a scenario headless with built-in agents, as fast as possible; print a
results table and write DIR/results.json and DIR/replay.jsonl (with several
episodes: DIR/episode-NNNN/..., and DIR/report.json, episodes.csv, episodes.json).`,
		examples: []string{
			"arena run --scenario foraging",
			"arena run --scenario foraging --agents 6 --seed 3 --ticks 400 --out /tmp/run",
			"arena run --scenario path/to/my-scenario.json --episodes 5 --quiet",
			"arena run --scenario debate --agent llm --model M --base-url http://localhost:8000/v1",
		}},
	{name: "serve", synopsis: `serve --scenario NAME|FILE [--listen unix:PATH]... [--listen tcp:HOST:PORT]...
              [--mode lockstep|realtime] [--tick-rate HZ] [--agents N] [--bots K] [--agent builtin|llm]
              [--tokens FILE] [--seed S] [--ticks T] [--episodes N] [--out DIR]
              [--start-after D] [--decision-timeout D] [--mcp-listen tcp:HOST:PORT] [--admin-listen ADDR]`,
		about: `Serve the scenario to external agents over the CBOR socket protocol
(docs/protocol.md), and with --mcp-listen to MCP clients over HTTP
(docs/mcp.md); built-in bots fill K slots. Writes what run writes.`,
		examples: []string{
			"arena serve --bots 1 --listen unix:/tmp/arena.sock",
			"arena serve --listen tcp::7777 --tokens tokens.json",
			"arena serve --mode realtime --tick-rate 20 --start-after 30s",
			"arena serve --listen unix:arena.sock --mcp-listen tcp::7777",
		}},
	{name: "mcp", synopsis: "mcp --scenario NAME|FILE [--agents N] [--slot ID] [--seed S] [--ticks T] [--out DIR]",
		about: `Serve one agent slot to an MCP client over stdio (docs/mcp.md): the client
plays the slot through MCP tools, built-in bots play the others, in
lockstep. Writes what run writes; the results table goes to stderr.`,
		examples: []string{"arena mcp --scenario foraging --out /tmp/foraging", "arena mcp --scenario role_game --slot player_003"}},
	{name: "eval", synopsis: `eval --scenario NAME|FILE [--episodes N] [--seed S] [--parallel P] [--agents N]
             [--ticks T] [--out DIR] [--replays] [--plots=false] [--quiet] [--vary NAME=A,B]...
             [--shard K/N | --shards N]`,
		about: `Run many episodes with built-in agents across cores; write every episode's
results (CSV and JSON), each metric's mean ± standard error, and PNG plots.
With --shard K/N (or a Slurm array / Kubernetes Indexed Job) run only one
share of the episodes into DIR/shard-KKKK (docs/scaling.md).`,
		examples: []string{
			"arena eval --scenario foraging --agents 6 --episodes 40",
			"arena eval --scenario economy --episodes 10 --vary min_wage=10,15,20",
			"arena eval --scenario foraging --episodes 1000 --shard 0/4 --out runs/big",
		}},
	{name: "eval merge", synopsis: "eval merge [--out DIR] [--plots true|false] SHARD-DIR...|DIR",
		about:    `Merge shard folders into the report a single arena eval writes.`,
		examples: []string{"arena eval merge runs/big", "arena eval merge --out runs/all runs/big/shard-0000 runs/big/shard-0001"}},
	{name: "replay", synopsis: "replay FILE|DIR [--verify] [--quiet]",
		about: `Re-simulate a replay (DIR/replay.jsonl) headless and print what happened;
--verify checks the state hash at every tick and names the first tick that differs.`,
		examples: []string{"arena replay runs/foraging-seed1/replay.jsonl --verify", "arena replay runs/foraging-seed1 --quiet"}},
	{name: "view", synopsis: "view FILE | arena view --connect unix:PATH|tcp:HOST:PORT [--token T]",
		about: `Watch a replay, or join a running server as a spectator, in a window:
pause, step, speed, pan, zoom and inspect agents (docs/viewer.md).`,
		examples: []string{"arena view runs/foraging-seed1/replay.jsonl", "arena view --connect unix:arena.sock --token-file runs/foraging-seed7/spectator.token"}},
	{name: "scenarios", synopsis: "scenarios [--format text|json] [--scenario NAME|FILE] [--agents N]",
		about: `List the built-in scenarios; --format json also gives slot ids, vocabularies,
rules and tools (what a reinforcement-learning environment needs).`,
		examples: []string{"arena scenarios", "arena scenarios --format json --scenario role_game"}},
	{name: "tools", synopsis: "tools [--scenario NAME|FILE] [--format text|json|openai|anthropic|mcp]",
		about:    `Print the tools agents can call, with their JSON Schema parameters.`,
		examples: []string{"arena tools --scenario role_game", "arena tools --format openai", "arena tools --scenario town_square --format anthropic"}},
	{name: "bench", synopsis: "bench [--agents N] [--size S] [--ticks T] [--ipc] [--soak D]",
		about: `Measure world steps per second with built-in agents on a generated map;
with --ipc, lockstep decisions per second over a Unix socket.`,
		examples: []string{"arena bench --agents 1000 --size 256", "arena bench --workers 2 --against 1 --repeat 5", "arena bench --ipc --agents 100", "arena bench --soak 1m"}},
	{name: "version", synopsis: "version", hidden: true,
		about:    `Print the module version and VCS commit arena was built from.`,
		examples: []string{"arena version", "arena --version"}},
	{name: "completion", synopsis: "completion bash|zsh|fish", hidden: true,
		about: `Print a shell completion script: subcommands, their flags, and the values of
--scenario, --format, --agent and --mode.`,
		examples: []string{
			"source <(arena completion bash)             # bash, this shell",
			"arena completion zsh > \"${fpath[1]}/_arena\"  # zsh",
			"arena completion fish > ~/.config/fish/completions/arena.fish",
		}},
	{name: "help", synopsis: "help [COMMAND]", hidden: true, about: `Print the usage, or a command's usage with its flags and examples.`,
		examples: []string{"arena help", "arena help run"}},
}

// lookupCommand is the named command's entry, or nil.
func lookupCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// commandNames are the names a user may type first.
func commandNames() []string {
	var names []string
	for _, c := range commands {
		if !strings.Contains(c.name, " ") {
			names = append(names, c.name)
		}
	}
	return names
}

// topUsage is the top-level usage: every command's synopsis, and the flags
// of the language-model agents.
func topUsage() string {
	var b strings.Builder
	b.WriteString("Arena: a tick server where AI agents live in a shared world and act through tools.\n\nUsage:\n")
	for _, c := range commands {
		if c.hidden {
			continue
		}
		fmt.Fprintf(&b, "  arena %s\n%s", c.synopsis, indent(c.about, "      "))
	}
	b.WriteString("\nLanguage-model agents (run --agent llm, serve --agent llm; docs/llm.md):\n")
	var lf llmFlags
	lfs := flag.NewFlagSet("llm", flag.ContinueOnError)
	lf.register(lfs)
	var parts []string
	lfs.VisitAll(func(f *flag.Flag) {
		typ, _ := flag.UnquoteUsage(f)
		switch typ {
		case "":
			parts = append(parts, "[--"+f.Name+"]")
		case "string":
			words := strings.Split(f.Name, "-")
			parts = append(parts, "[--"+f.Name+" "+strings.ToUpper(words[len(words)-1])+"]")
		case "int":
			parts = append(parts, "[--"+f.Name+" N]")
		default: // duration
			parts = append(parts, "[--"+f.Name+" "+strings.ToUpper(typ[:1])+"]")
		}
	})
	b.WriteString(indent(wrap(strings.Join(parts, " "), 80), "  "))
	b.WriteString(`
Other commands:
  arena help [COMMAND]          a command's flags and examples (as arena COMMAND -h)
  arena version                 the module version and VCS commit (also --version)
  arena completion bash|zsh|fish  a shell completion script

Run 'arena COMMAND -h' for a command's flags and examples.
`)
	return b.String()
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(prefix + line + "\n")
	}
	return b.String()
}

// wrap breaks s between words into lines of at most width characters.
func wrap(s string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines, line = append(lines, line), ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// commandHelp prints a command's usage, its flags and its examples.
func commandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	c := lookupCommand(name)
	if c == nil {
		c = &command{name: name, synopsis: name}
	}
	fmt.Fprintf(w, "Usage:\n  arena %s\n\n%s", c.synopsis, c.about+"\n")
	if fs != nil {
		var flags strings.Builder
		fs.VisitAll(func(f *flag.Flag) {
			typ, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(&flags, "  --%s", f.Name)
			if typ != "" {
				fmt.Fprintf(&flags, " %s", typ)
			}
			fmt.Fprintf(&flags, "\n%s", indent(wrap(usage+defaultNote(f), 74), "      "))
		})
		if flags.Len() > 0 {
			fmt.Fprintf(w, "\nFlags:\n%s", flags.String())
		}
	}
	if len(c.examples) > 0 {
		fmt.Fprintf(w, "\nExamples:\n%s", indent(strings.Join(c.examples, "\n"), "  "))
	}
}

// defaultNote is " (default X)" unless the default is a zero value.
func defaultNote(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return ""
	}
	return fmt.Sprintf(" (default %s)", f.DefValue)
}

// helpRequest is what a command returns for -h: the dispatcher prints the
// command's help (to stdout, exit 0); completion reads the flag set.
type helpRequest struct {
	name string
	fs   *flag.FlagSet
}

func (h *helpRequest) Error() string { return "help requested" }
func (h *helpRequest) Unwrap() error { return flag.ErrHelp }

// newFlags makes a command's flag set. It prints nothing: parseFlags turns
// -h into a helpRequest and a parse error into one line.
func newFlags(name string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses a command's flags: -h becomes a helpRequest, an unknown
// flag an error naming the closest one.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	if errors.Is(err, flag.ErrHelp) {
		return &helpRequest{name: fs.Name(), fs: fs}
	}
	msg := strings.ReplaceAll(err.Error(), " -", " --")
	if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: --"); ok {
		bad = strings.TrimLeft(bad, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = fmt.Sprintf("unknown flag --%s%s", bad, didYouMean(bad, names, "--"))
	}
	return fmt.Errorf("%s: %s; see 'arena %s -h'", fs.Name(), msg, fs.Name())
}

// didYouMean is ` (did you mean "x"?)` with the candidate closest to name,
// or "" when none is close.
func didYouMean(name string, candidates []string, prefix string) string {
	if best := fuzzy.Closest(name, candidates); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", prefix+best)
	}
	return ""
}

// choices are the values a flag takes, for validation and completion; nil
// when any value goes.
func choices(cmd, flagName string) []string {
	switch flagName {
	case "scenario":
		return scenarios.Builtin()
	case "agent":
		return []string{"builtin", "llm"}
	case "mode":
		return []string{"lockstep", "realtime"}
	case "spectators":
		return []string{"token", "open"}
	case "log-format":
		return []string{"text", "json"}
	case "format":
		switch cmd {
		case "scenarios":
			return []string{"text", "json"}
		case "tools":
			return []string{"text", "json", "openai", "anthropic", "mcp"}
		}
	case "plots":
		if cmd == "eval merge" {
			return []string{"true", "false"}
		}
	}
	return nil
}

// checkChoices checks every flag of fs that has choices (but --scenario,
// which may also be a file: see loadScenario).
func checkChoices(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		cs := choices(fs.Name(), f.Name)
		if err != nil || cs == nil || f.Name == "scenario" {
			return
		}
		v := f.Value.String()
		if v == "" && f.DefValue == "" || slices.Contains(cs, v) {
			return
		}
		err = fmt.Errorf("%s: unknown --%s %q%s; one of: %s", fs.Name(), f.Name, v, didYouMean(v, cs, ""), strings.Join(cs, ", "))
	})
	return err
}

// checkNumbers checks the numeric flags of fs: every one given on the
// command line must be above zero when named in positive (zero is how a flag
// says "the default", and only when left out), and none may be negative.
func checkNumbers(fs *flag.FlagSet, positive ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) { // flags given: a default may be a sentinel (view's --at -1)
		if err != nil {
			return
		}
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		var sign int
		switch v := g.Get().(type) {
		case int:
			sign = cmpZero(float64(v))
		case int64:
			sign = cmpZero(float64(v))
		case float64:
			sign = cmpZero(v)
		case time.Duration:
			sign = cmpZero(float64(v))
		default:
			return
		}
		switch {
		case sign < 0:
			err = fmt.Errorf("%s: --%s %s: must not be negative", fs.Name(), f.Name, f.Value)
		case sign == 0 && slices.Contains(positive, f.Name):
			least := "above zero"
			if _, isInt := g.Get().(int); isInt {
				least = "at least 1"
			}
			err = fmt.Errorf("%s: --%s %s: must be %s (leave the flag out for its default)", fs.Name(), f.Name, f.Value, least)
		}
	})
	return err
}

func cmpZero(v float64) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// checkFlags is checkChoices and checkNumbers, and refuses positional
// arguments unless the command takes them (maxArgs < 0: any number).
func checkFlags(fs *flag.FlagSet, maxArgs int, positive ...string) error {
	if maxArgs >= 0 && fs.NArg() > maxArgs {
		return fmt.Errorf("%s: unexpected argument %q; see 'arena %s -h'", fs.Name(), fs.Arg(maxArgs), fs.Name())
	}
	if err := checkChoices(fs); err != nil {
		return err
	}
	return checkNumbers(fs, positive...)
}

// checkAddr checks the form of an address to listen on, as ipc.Listen reads
// it: unix:PATH or tcp:HOST:PORT (networks limits which of the two).
func checkAddr(cmd, flagName, addr string, networks ...string) error {
	network, rest, _ := strings.Cut(addr, ":")
	ok := false
	switch network {
	case "unix":
		ok = rest != ""
	case "tcp":
		_, _, err := net.SplitHostPort(rest)
		ok = err == nil
	}
	if ok && slices.Contains(networks, network) {
		return nil
	}
	forms := map[string]string{"unix": "unix:PATH", "tcp": "tcp:HOST:PORT"}
	var want []string
	for _, n := range networks {
		want = append(want, forms[n])
	}
	return fmt.Errorf("%s: --%s %q: want %s", cmd, flagName, addr, strings.Join(want, " or "))
}

// loadScenario loads --scenario: a built-in name, with the closest one
// suggested when it is neither that nor a file.
func loadScenario(ctx context.Context, cmd, name string) (*scenarios.Scenario, error) {
	builtin := scenarios.Builtin()
	if !slices.Contains(builtin, name) {
		if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: unknown scenario %q%s; built-in: %s (or a scenario file's path)", cmd, name,
				didYouMean(name, builtin, ""), strings.Join(builtin, ", "))
		}
	}
	return scenarios.LoadContext(ctx, name) // its errors name the file
}

// checkWorld builds the world opt asks of sc, so that an agent count the
// scenario refuses, an unknown variable or agents that cannot be placed fail
// before any work.
func checkWorld(sc *scenarios.Scenario, opt scenarios.Options) error {
	_, err := sc.NewWorld(opt) // its errors name the scenario
	return err
}
