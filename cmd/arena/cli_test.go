package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// arenaIn runs the test binary as the arena command in dir (the current
// folder when ""), killed after a minute, and returns its
// exit code, stdout and stderr.
func arenaIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^$")
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ARENA_MODEL=") { // "--agent llm needs --model" must not depend on the caller's shell
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ARENA_TEST_MAIN="+strings.Join(args, "\n"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// TestMistakesFailAtOnceInOneLine: every mistake of issue 21 (and its
// kin) exits non-zero with one line on stderr that says what is wrong, and
// prints no banner and writes nothing: the run's folder stays empty.
func TestMistakesFailAtOnceInOneLine(t *testing.T) {
	// A real results.json to mistake for a replay.
	runDir := t.TempDir()
	_, _, err := arena(t, "run", "--ticks", "5", "--quiet", "--out", runDir)
	require.NoError(t, err)
	results := filepath.Join(runDir, resultsFile)

	cases := []struct {
		args []string
		line string // what the line must say
	}{
		{[]string{"rn"}, `unknown command "rn" (did you mean "run"?); see 'arena help'`},
		{[]string{"fly"}, `unknown command "fly"; see 'arena help'`},
		{[]string{"--scenario", "foraging"}, "flags come after the command"},
		{[]string{"help", "rn"}, `help: unknown command "rn" (did you mean "run"?)`},
		{[]string{"run", "--scenario", "forging"}, `run: unknown scenario "forging" (did you mean "foraging"?); built-in: crafting,`},
		{[]string{"run", "--scenario", "Foraging"}, `unknown scenario "Foraging" (did you mean "foraging"?)`},
		{[]string{"serve", "--scenario", "rolegame"}, `serve: unknown scenario "rolegame" (did you mean "role_game"?)`},
		{[]string{"tools", "--scenario", "tem_capture"}, `tools: unknown scenario "tem_capture" (did you mean "team_capture"?)`},
		{[]string{"scenarios", "--format", "json", "--scenario", "socail"}, `(did you mean "social"?)`},
		{[]string{"run", "--agnets", "3"}, `run: unknown flag --agnets (did you mean "--agents"?); see 'arena run -h'`},
		{[]string{"run", "--agents", "x"}, `run: invalid value "x" for flag --agents`},
		{[]string{"run", "--agent", "lm"}, `run: unknown --agent "lm" (did you mean "llm"?); one of: builtin, llm`},
		{[]string{"run", "extra"}, `run: unexpected argument "extra"`},
		{[]string{"run", "--agents", "0"}, "run: --agents 0: must be at least 1"},
		{[]string{"run", "--ticks", "0"}, "run: --ticks 0: must be at least 1"},
		{[]string{"run", "--episodes", "0"}, "run: --episodes 0: must be at least 1"},
		{[]string{"run", "--agents", "-1"}, "run: --agents -1: must not be negative"},
		{[]string{"run", "--agents", "100000"}, "arena: scenario foraging allows at most 16 agents, 100000 requested"},
		{[]string{"run", "--scenario", "team_capture", "--agents", "5"}, "cannot be split evenly"},
		{[]string{"run", "--agent", "llm", "--llm-timeout", "0s"}, "run: --llm-timeout 0s: must be above zero"},
		{[]string{"eval", "--agents", "0"}, "eval: --agents 0: must be at least 1"},
		{[]string{"eval", "--parallel", "0"}, "eval: --parallel 0: must be at least 1"},
		{[]string{"eval", "--episodes", "0"}, "eval: --episodes 0: must be at least 1"},
		{[]string{"eval", "--quite"}, `eval: unknown flag --quite (did you mean "--quiet"?)`},
		{[]string{"eval", "--agents", "100000"}, "allows at most 16 agents"},
		{[]string{"eval", "--vary", "bogus=1,2"}, "eval: --vary bogus: scenario foraging has no variables to vary"},
		{[]string{"eval", "--scenario", "economy", "--vary", "min_wge=10,20"}, `eval: --vary: scenario economy has no variable "min_wge" (did you mean "min_wage"?); it has: currency, min_wage`},
		{[]string{"eval", "--vary", "rain"}, `eval: --vary "rain": want NAME=A,B,C`},
		{[]string{"serve", "--mode", "lockstp"}, `serve: unknown --mode "lockstp" (did you mean "lockstep"?); one of: lockstep, realtime`},
		{[]string{"serve", "--agents", "100000"}, "arena: scenario foraging allows at most 16 agents"},
		{[]string{"serve", "--tick-rate", "0"}, "serve: --tick-rate 0: must be above zero"},
		{[]string{"serve", "--spectators", "opne"}, `serve: unknown --spectators "opne" (did you mean "open"?)`},
		{[]string{"serve", "--agent", "bot"}, `serve: unknown --agent "bot"`},
		{[]string{"serve", "--listen", "arena.sock"}, `serve: --listen "arena.sock": want unix:PATH or tcp:HOST:PORT`},
		{[]string{"serve", "--listen", "tcp:7777"}, `serve: --listen "tcp:7777": want unix:PATH or tcp:HOST:PORT`},
		{[]string{"serve", "--mcp-listen", "unix:m.sock"}, `serve: --mcp-listen "unix:m.sock": want tcp:HOST:PORT`},
		{[]string{"serve", "--admin-listen", ":8080"}, `serve: --admin-listen ":8080": want unix:PATH or tcp:HOST:PORT`},
		{[]string{"serve", "--bots", "3"}, "serve: --bots 3: the scenario has 2 agent slots (give --agents for more, up to 16)"},
		{[]string{"serve", "--tokens", "nofile.json"}, "serve: read tokens: open nofile.json"},
		{[]string{"serve", "--agent", "llm", "--bots", "1"}, "serve: --agent llm needs --model"},
		{[]string{"run", "--agent", "llm"}, "run: --agent llm needs --model"},
		{[]string{"eval", "--shard", "5/2"}, "eval: shard 5/2: want K/N"},
		{[]string{"mcp", "--slot", "agent_01"}, `mcp: --slot: scenario foraging has no agent slot "agent_01" (did you mean "agent_001"?); slots: agent_001, agent_002`},
		{[]string{"mcp", "--agents", "0"}, "mcp: --agents 0: must be at least 1"},
		{[]string{"mcp", "--scenario", "markt"}, `mcp: unknown scenario "markt" (did you mean "market"?)`},
		{[]string{"scenarios", "--format", "yaml"}, `scenarios: unknown --format "yaml"; one of: text, json`},
		{[]string{"scenarios", "--format", "jsno"}, `(did you mean "json"?)`},
		{[]string{"tools", "--format", "antropic"}, `tools: unknown --format "antropic" (did you mean "anthropic"?); one of: text, json, openai, anthropic, mcp`},
		{[]string{"bench", "--size", "-5"}, "bench: --size -5: must not be negative"},
		{[]string{"bench", "--size", "0"}, "bench: --size 0: must be above zero"},
		{[]string{"bench", "--agents", "0"}, "bench: --agents 0: must be at least 1"},
		{[]string{"bench", "--ticks", "0"}, "bench: --ticks 0: must be at least 1"},
		{[]string{"replay"}, "replay: want one replay file"},
		{[]string{"replay", results}, "is an episode's results (results.json), not a replay; give the replay.jsonl beside it"},
		{[]string{"replay", "missing.jsonl"}, "no such file"},
		{[]string{"view", "--width", "-5", "x.jsonl"}, "view: --width -5: must not be negative"},
		{[]string{"view", "--width", "0", "x.jsonl"}, "view: --width 0: must be at least 1"},
		{[]string{"view", "x.jsonl", "--height", "0"}, "view: --height 0: must be at least 1"},
		{[]string{"view", "--height", "-1", "x.jsonl"}, "view: --height -1: must not be negative"},
		{[]string{"view", "--size", "0x800", "x.jsonl"}, "view: --size 0x800: the width and the height must be at least 1"},
		{[]string{"view", "--size", "-5x100", "x.jsonl"}, "view: --size -5x100: the width and the height must be at least 1"},
		{[]string{"view", "--size", "1280", "x.jsonl"}, `view: --size "1280" is not WIDTHxHEIGHT, e.g. 1280x800`},
		{[]string{"view", "--size", "100x100", "x.jsonl"}, "view: a size of 100x100 is not from 200x150 to 8192x8192"},
		{[]string{"view", "--at", "-1", "x.jsonl"}, "view: --at -1: must not be negative"},
		{[]string{"view", "--show", "histroy", "x.jsonl"}, `view: --show "histroy" is not inspector`},
		{[]string{"completion"}, "completion: want one shell: bash, zsh or fish"},
		{[]string{"completion", "fsh"}, `completion: unknown shell "fsh" (did you mean "fish"?)`},
		{[]string{"version", "extra"}, `version: unexpected argument "extra"`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			args := c.args
			if hasFlag(args[0], "out") {
				args = append(slices.Clone(args), "--out", filepath.Join(dir, "out"))
			}
			code, stdout, stderr := arenaIn(t, dir, args...)
			require.Equal(t, 2, code, "stderr: %s", stderr)
			require.Empty(t, stdout, "no banner, no output")
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			require.True(t, strings.HasPrefix(stderr, "arena: "), stderr)
			require.Contains(t, stderr, c.line)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Empty(t, entries, "nothing written before the mistake was found")
		})
	}

	// With no command, the usage goes to stderr.
	_, stderr, err := arena(t)
	require.EqualError(t, err, "no command given")
	require.Contains(t, stderr, "Usage:")
}

// hasFlag reports whether command cmd has the named flag.
func hasFlag(cmd, name string) bool {
	err := dispatch(context.Background(), []string{cmd, "-h"}, &bytes.Buffer{}, &bytes.Buffer{})
	var h *helpRequest
	return errors.As(err, &h) && h.fs.Lookup(name) != nil
}

// Every command answers -h with its usage, flags and examples, on stdout,
// and `arena help CMD` prints the same.
func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			args := append(strings.Fields(c.name), "-h")
			out, errOut, err := arena(t, args...)
			require.NoError(t, err)
			require.Empty(t, errOut)
			require.Contains(t, out, "Usage:\n  arena "+c.synopsis)
			require.Contains(t, out, "\nExamples:\n  ")
			require.Contains(t, out[strings.Index(out, "Examples:"):], "arena "+c.name)
			if c.name != "help" && c.name != "completion" && c.name != "version" {
				require.Contains(t, out, "\nFlags:\n  --")
			}
			help, _, err := arena(t, append([]string{"help"}, strings.Fields(c.name)...)...)
			require.NoError(t, err)
			require.Equal(t, out, help)
		})
	}
	out, _, err := arena(t, "run", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "  --scenario string\n")
	require.Contains(t, out, "  --agent string\n")
	require.Contains(t, out, "(default builtin)")
	require.Contains(t, out, "  --model string\n", "run's help lists the llm flags")

	// The process exits 0 for -h and for help.
	for _, args := range [][]string{{"run", "-h"}, {"help", "run"}, {"help"}, {"--help"}} {
		code, stdout, stderr := arenaIn(t, t.TempDir(), args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		require.Contains(t, stdout, "Usage:")
	}
}

func TestTopLevelUsageListsEverything(t *testing.T) {
	out, _, err := arena(t, "help")
	require.NoError(t, err)
	for _, want := range []string{"arena run", "arena serve", "arena mcp", "arena eval", "arena eval merge", "arena replay",
		"arena view", "arena scenarios", "arena tools", "arena bench", "arena version", "arena completion bash|zsh|fish",
		"--format text|json|openai|anthropic|mcp", "--agent builtin|llm", "eval --scenario", "--quiet",
		"[--model MODEL]", "[--base-url URL]", "[--api-key KEY]", "[--xml]", "[--no-stream]", "[--tool-call-limit N]",
		"[--llm-timeout D]", "[--llm-retries N]", "[--llm-retry-time D]"} {
		require.Contains(t, out, want)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, err := arena(t, args...)
		require.NoError(t, err)
		require.Regexp(t, `^arena \S+, commit \S+.*, go1\.`, out)
	}
	// The fallbacks when the build recorded nothing.
	require.Equal(t, "arena (devel), commit unknown, go1.x", buildInfo{Version: "(devel)", Commit: "unknown", Go: "go1.x"}.String())
	require.Equal(t, "arena v1.2.0, commit abc (2025-01-02T03:04:05Z), with uncommitted changes, go1.x",
		buildInfo{Version: "v1.2.0", Commit: "abc", Time: "2025-01-02T03:04:05Z", Modified: true, Go: "go1.x"}.String())
	// What a build records: its VCS stamp and the profile it was optimised with.
	b := parseBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}, Settings: []debug.BuildSetting{
		{Key: "-pgo", Value: "/src/arena/cmd/arena/default.pgo"}, {Key: "vcs.revision", Value: "def"}, {Key: "vcs.modified", Value: "false"}}}, "go1.y")
	require.Equal(t, buildInfo{Version: "v1.3.0", Commit: "def", Go: "go1.y", PGO: "default.pgo"}, b)
	require.Equal(t, "arena v1.3.0, commit def, optimised with default.pgo, go1.y", b.String())
	require.Equal(t, buildInfo{Version: "(devel)", Commit: "unknown", Go: "go1.y"}, parseBuildInfo(&debug.BuildInfo{}, "go1.y"))
}

// The completion scripts are generated from the commands' flag sets: every
// command and flag is in each, and the bash one completes for real.
func TestCompletionScripts(t *testing.T) {
	cmds, err := completionCommands(context.Background())
	require.NoError(t, err)
	scripts := map[string]string{}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, _, err := arena(t, "completion", shell)
		require.NoError(t, err)
		scripts[shell] = out
		for _, c := range cmds {
			require.Contains(t, out, strings.Fields(c.name)[len(strings.Fields(c.name))-1], shell)
			for _, f := range c.flags {
				require.Contains(t, out, f.name, "%s: %s --%s", shell, c.name, f.name)
			}
		}
		require.Contains(t, out, "team_capture", "%s: scenario names", shell)
	}
	require.Contains(t, scripts["fish"], "-l vary")
	require.Contains(t, scripts["zsh"], "'--vary[")

	path := filepath.Join(t.TempDir(), "arena.bash")
	require.NoError(t, os.WriteFile(path, []byte(scripts["bash"]), 0o644))
	out, err := exec.Command("bash", "-n", path).CombinedOutput()
	require.NoError(t, err, "bash -n: %s", out)
	complete := func(words ...string) string {
		script := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _arena; echo "${COMPREPLY[*]}"`
		out, err := exec.Command("bash", append([]string{"-c", script, "bash", path, "arena"}, words...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	require.Equal(t, "run", complete("ru"))
	require.Equal(t, "serve scenarios", complete("s"))
	require.Equal(t, "--scenario --seed", complete("run", "--s"))
	require.Equal(t, "--vary", complete("eval", "--va"))
	require.Equal(t, "foraging", complete("run", "--scenario", "fora"))
	require.Equal(t, "anthropic", complete("tools", "--format", "an"))
	require.Equal(t, "json", complete("scenarios", "--format", "j"))
	require.Equal(t, "realtime", complete("serve", "--mode", "r"))
	require.Equal(t, "merge", complete("eval", "me"))
	require.Equal(t, "zsh", complete("completion", "z"))
	for _, shell := range []string{"zsh", "fish"} {
		if _, err := exec.LookPath(shell); err != nil {
			continue // the text checks above still ran
		}
		p := filepath.Join(t.TempDir(), "arena."+shell)
		require.NoError(t, os.WriteFile(p, []byte(scripts[shell]), 0o644))
		flag := "-n"
		if shell == "fish" {
			flag = "--no-execute"
		}
		out, err := exec.Command(shell, flag, p).CombinedOutput()
		require.NoError(t, err, "%s %s: %s", shell, flag, out)
	}
}

func TestEvalQuietPrintsOnlyTheReport(t *testing.T) {
	out, errOut, err := arena(t, "eval", "--episodes", "2", "--ticks", "20", "--plots=false", "--quiet", "--out", t.TempDir())
	require.NoError(t, err)
	require.Empty(t, errOut)
	require.Contains(t, out, "foraging over 2 episodes")
	_, errOut, err = arena(t, "eval", "--episodes", "2", "--ticks", "20", "--plots=false", "--out", t.TempDir())
	require.NoError(t, err)
	require.Contains(t, errOut, "arena eval: foraging, 2 episodes", "without --quiet, progress")
}

func TestReplayTakesARunFolder(t *testing.T) {
	dir := t.TempDir()
	_, _, err := arena(t, "run", "--ticks", "5", "--quiet", "--out", dir)
	require.NoError(t, err)
	out, _, err := arena(t, "replay", dir, "--verify", "--quiet")
	require.NoError(t, err)
	require.Contains(t, out, "verified")
	_, _, err = arena(t, "replay", t.TempDir())
	require.ErrorContains(t, err, "is a folder without a replay.jsonl")
}

// bench names the ticks it ran: the generated world ends early when every
// forager has met the objective.
func TestBenchSaysWhyItRanFewerTicks(t *testing.T) {
	out, _, err := arena(t, "bench", "--agents", "10", "--ticks", "2000")
	require.NoError(t, err)
	require.Regexp(t, `10 agents, \d+ workers?, \d+ of 2000 ticks \(every agent met the objective at tick \d+, which ended the run\)`, out)
	out, _, err = arena(t, "bench", "--agents", "10", "--ticks", "20")
	require.NoError(t, err)
	require.Regexp(t, `10 agents, \d+ workers?, 20 ticks:`, out)
}
