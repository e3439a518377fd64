package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/mcp"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/server"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	scenario := fs.String("scenario", "foraging", "built-in scenario name or path to a scenario file")
	var listens listFlag
	fs.Var(&listens, "listen", "unix:PATH or tcp:HOST:PORT (repeatable; TCP binds to loopback when HOST is empty) (default unix:arena.sock)")
	mode := fs.String("mode", "lockstep", "lockstep or realtime")
	tickRate := fs.Float64("tick-rate", 0, "ticks per second in realtime mode (default: the scenario's)")
	agents := fs.Int("agents", 0, "number of agent slots (default: the scenario's)")
	botCount := fs.Int("bots", 0, "give the last K slots to the scenario's built-in bot (or, with --agent llm, to language-model agents)")
	agentKind := fs.String("agent", "builtin", "who plays the --bots slots: builtin (the scenario's bot) or llm (a language model, see docs/llm.md)")
	var lf llmFlags
	lf.register(fs)
	tokens := fs.String("tokens", "", "JSON file of slot id → token; every hello must then carry its token")
	seed := fs.Uint64("seed", 0, "seed of the world's public randomness and the built-in bots (default: a fresh random seed, recorded in results.json)")
	secretSeed := fs.Uint64("secret-seed", 0, "seed of hidden information such as a role deal, to replay a game exactly (default: a fresh random seed every time, recorded in results.json and the replay)")
	spectators := fs.String("spectators", "token", "token: spectators need a token (the tokens file's \"spectator\" entry, else a fresh one printed here and written to DIR/spectator.token); open: anyone may watch, every secret included (local debugging only)")
	ticks := fs.Int("ticks", 0, "end each episode after this many ticks, replacing the scenario's time limit")
	episodes := fs.Int("episodes", 1, "episodes to run one after the other; sessions stay connected between them")
	workers := fs.Int("workers", 0, "goroutines that build each tick's observations and plan paths (default: the number of CPUs); the world is the same for any number")
	out := fs.String("out", "", "output folder for results.json and replay.jsonl (default runs/SCENARIO-seedS)")
	startAfter := fs.Duration("start-after", 0, "start even if not every slot is connected after this long (default: wait)")
	timeout := fs.Duration("decision-timeout", 5*time.Second, "lockstep: how long to wait for each decision")
	mcpListen := fs.String("mcp-listen", "", "also serve MCP clients on tcp:HOST:PORT (Streamable HTTP at http://HOST:PORT/mcp): each MCP session plays a free agent slot, or its token's (docs/mcp.md)")
	var ops opsFlags
	ops.register(fs)
	maxConns := fs.Int("max-conns", 0, "connections open at once (agents, spectators and strangers); more are refused with SERVER_BUSY; 0: 4096, or the client slots plus --max-unauthenticated when that is more")
	maxUnauth := fs.Int("max-unauthenticated", server.DefaultMaxUnauthenticated, "connections that have not said hello yet; more are refused with SERVER_BUSY")
	helloTimeout := fs.Duration("hello-timeout", 10*time.Second, "drop a connection whose hello has not been accepted this long after it connected")
	pingInterval := fs.Duration("ping-interval", 5*time.Second, "ping a session that has sent nothing for this long")
	pongWait := fs.Duration("pong-wait", 10*time.Second, "drop a session that sends nothing (no pong) for this long after a ping")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFlags(fs, 0, append([]string{"tick-rate", "agents", "ticks", "episodes", "decision-timeout", "max-conns",
		"max-unauthenticated", "hello-timeout", "ping-interval", "pong-wait", "drain-timeout"}, llmPositive...)...); err != nil {
		return err
	}
	if len(listens) == 0 {
		listens = listFlag{"unix:arena.sock"}
	}
	for _, addr := range listens {
		if err := checkAddr("serve", "listen", addr, "unix", "tcp"); err != nil {
			return err
		}
	}
	if *mcpListen != "" {
		if err := checkAddr("serve", "mcp-listen", *mcpListen, "tcp"); err != nil {
			return err
		}
	}
	if ops.adminListen != "" {
		if err := checkAddr("serve", "admin-listen", ops.adminListen, "unix", "tcp"); err != nil {
			return err
		}
	}
	sc, err := loadScenario(ctx, "serve", *scenario)
	if err != nil {
		return err
	}
	if err := checkWorld(sc, scenarios.Options{Agents: *agents, Ticks: *ticks}); err != nil {
		return err
	}
	if slots := len(sc.AgentIDs(*agents)); *botCount > slots {
		return fmt.Errorf("serve: --bots %d: the scenario has %d agent slots (give --agents for more, up to %d)", *botCount, slots, sc.Agents.Max)
	}
	var tok map[string]string
	if *tokens != "" {
		b, err := os.ReadFile(*tokens)
		if err != nil {
			return fmt.Errorf("serve: read tokens: %w", err)
		}
		if err := json.Unmarshal(b, &tok); err != nil {
			return fmt.Errorf("serve: tokens file %s: want a JSON object of slot id → token: %w", *tokens, err)
		}
	}
	if *seed == 0 {
		*seed = engine.FreshSeed()
	}
	dir := outDir(*out, sc, *seed)
	rec := &folder{dir: dir, episodes: *episodes, sc: sc, replays: true}
	logger, err := ops.logger(stderr)
	if err != nil {
		return err
	}
	opt := server.Options{Scenario: sc, Seed: *seed, SecretSeed: *secretSeed, OpenSpectators: *spectators == "open", Agents: *agents, Bots: *botCount, Mode: *mode,
		TickRate: *tickRate, DecisionTimeout: *timeout, StartAfter: *startAfter, Tokens: tok, Ticks: *ticks,
		Episodes: *episodes, Workers: *workers, Recorder: rec, Log: logger, Metrics: server.NewMetrics(), MaxConns: *maxConns, MaxUnauthenticated: *maxUnauth,
		Conn: ipc.ConnOptions{HelloTimeout: *helloTimeout, PingInterval: *pingInterval, PongWait: *pongWait}}
	if *agentKind == "llm" {
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		lf.abort = stop
		if opt.NewBot, err = lf.newBot(dir, sc.Description); err != nil {
			return err
		}
	}
	if !opt.OpenSpectators && tok[spectatorKey] == "" {
		if opt.SpectatorToken, err = newSpectatorToken(dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "spectator token: %s\n(saved in %s; arena view --connect ADDR --token TOKEN)\n", opt.SpectatorToken, filepath.Join(dir, spectatorTokenFile))
	}
	srv, err := server.New(opt)
	if err != nil {
		return err
	}
	var ls []net.Listener
	for _, addr := range listens {
		l, err := ipc.Listen(ctx, addr)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return err
		}
		ls = append(ls, l)
		logger.Info("listening", "addr", addr)
		if tok == nil && !loopback(l.Addr()) {
			logger.Warn("LISTENING BEYOND THIS HOST WITHOUT --tokens: anyone who can reach "+l.Addr().String()+
				" may take an agent slot, or watch and pause the world as a spectator; give --tokens", "addr", addr)
		}
	}
	if *mcpListen != "" {
		b, err := mcp.ListenHTTP(ctx, *mcpListen, mcp.HTTPOptions{Tokens: tok, Log: logger})
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return err
		}
		defer b.Close()
		ls = append(ls, b.Listener())
		logger.Info("listening for MCP clients", "url", b.URL())
	}
	stopAdmin, err := ops.serveAdmin(ctx, srv, logger)
	if err != nil {
		for _, l := range ls {
			l.Close()
		}
		return err
	}
	defer stopAdmin()
	ctx, stopDrain := ops.drainOnSIGTERM(ctx, srv, logger)
	defer stopDrain()
	all, err := srv.Serve(ctx, ls...)
	if errors.Is(err, server.ErrDrained) {
		logger.Info("drained before the first episode started: nothing to write")
		return nil
	}
	if ferr := fatal(ctx); ferr != nil {
		return ferr // the model server failed for good
	}
	if err != nil {
		return err
	}
	for i, res := range all {
		if len(all) > 1 {
			fmt.Fprintf(stdout, "episode %d (seed %d):\n", i+1, res.Seed)
		}
		printResults(stdout, res)
		epDir := rec.episodeDir(i + 1)
		fmt.Fprintf(stdout, "\nended: %s after %d ticks\nfinal state hash: %s\nresults: %s\nreplay: %s\n\n", res.EndReason, res.Ticks,
			res.FinalStateHash, filepath.Join(epDir, resultsFile), filepath.Join(epDir, replayFile))
	}
	if *episodes > 1 { // a drained or stopped run reports the episodes it played
		rep := eval.NewReport(sc.Name, *seed, all)
		if err := writeReport(dir, rep); err != nil {
			return err
		}
		printReport(stdout, rep)
	}
	return nil
}

// spectatorKey is the tokens file's entry for spectators.
const spectatorKey = "spectator"

// spectatorTokenFile is where serve keeps the token it made for spectators.
const spectatorTokenFile = "spectator.token"

// newSpectatorToken makes a random spectator token and writes it, readable
// by the operator only, into dir, as Jupyter does with its token.
func newSpectatorToken(dir string) (string, error) {
	token := engine.FreshID(16)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("serve: spectator token: %w", err)
	}
	if err := engine.WriteFileAtomicMode(filepath.Join(dir, spectatorTokenFile), []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("serve: spectator token: %w", err)
	}
	return token, nil
}

// loopback reports whether a listener's address is reachable from this host
// only (a Unix socket, or TCP on a loopback address).
func loopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return !ok || ta.IP.IsLoopback()
}
