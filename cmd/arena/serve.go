package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/ipc"
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
	seed := fs.Uint64("seed", 1, "seed of the world and the built-in bots")
	ticks := fs.Int("ticks", 0, "end each episode after this many ticks, replacing the scenario's time limit")
	episodes := fs.Int("episodes", 1, "episodes to run one after the other; sessions stay connected between them")
	out := fs.String("out", "", "output folder for results.json and replay.jsonl (default runs/SCENARIO-seedS)")
	startAfter := fs.Duration("start-after", 0, "start even if not every slot is connected after this long (default: wait)")
	timeout := fs.Duration("decision-timeout", 5*time.Second, "lockstep: how long to wait for each decision")
	maxConns := fs.Int("max-conns", server.DefaultMaxConns, "connections open at once (agents, spectators and strangers); more are refused with SERVER_BUSY")
	maxUnauth := fs.Int("max-unauthenticated", server.DefaultMaxUnauthenticated, "connections that have not said hello yet; more are refused with SERVER_BUSY")
	helloTimeout := fs.Duration("hello-timeout", 10*time.Second, "drop a connection whose hello has not been accepted this long after it connected")
	pingInterval := fs.Duration("ping-interval", 5*time.Second, "ping a session that has sent nothing for this long")
	pongWait := fs.Duration("pong-wait", 10*time.Second, "drop a session that sends nothing (no pong) for this long after a ping")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	if *episodes < 1 {
		return fmt.Errorf("serve: --episodes must be at least 1")
	}
	if len(listens) == 0 {
		listens = listFlag{"unix:arena.sock"}
	}
	sc, err := scenarios.LoadContext(ctx, *scenario)
	if err != nil {
		return err
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
	dir := outDir(*out, sc, *seed)
	rec := &folder{dir: dir, episodes: *episodes, sc: sc, replays: true}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	opt := server.Options{Scenario: sc, Seed: *seed, Agents: *agents, Bots: *botCount, Mode: *mode,
		TickRate: *tickRate, DecisionTimeout: *timeout, StartAfter: *startAfter, Tokens: tok, Ticks: *ticks,
		Episodes: *episodes, Recorder: rec, Log: logger, MaxConns: *maxConns, MaxUnauthenticated: *maxUnauth,
		Conn: ipc.ConnOptions{HelloTimeout: *helloTimeout, PingInterval: *pingInterval, PongWait: *pongWait}}
	switch *agentKind {
	case "builtin", "":
	case "llm":
		if opt.NewBot, err = lf.newBot(dir); err != nil {
			return err
		}
	default:
		return fmt.Errorf("serve: unknown --agent %q (builtin, llm)", *agentKind)
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
	all, err := srv.Serve(ctx, ls...)
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
	if len(all) > 1 {
		rep := eval.NewReport(sc.Name, *seed, all)
		if err := writeReport(dir, rep); err != nil {
			return err
		}
		printReport(stdout, rep)
	}
	return nil
}

// loopback reports whether a listener's address is reachable from this host
// only (a Unix socket, or TCP on a loopback address).
func loopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return !ok || ta.IP.IsLoopback()
}
