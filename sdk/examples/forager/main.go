// Command forager is a complete external agent: the built-in forager bot,
// playing over the socket protocol through the Go SDK. It plays every episode
// the server runs and prints how each one ended.
//
//	go run ./cmd/arena serve --listen unix:/tmp/arena.sock &
//	go run ./sdk/examples/forager --addr unix:/tmp/arena.sock
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/sdk"
)

func main() {
	addr := flag.String("addr", "unix:arena.sock", "server address: unix:PATH or tcp:HOST:PORT")
	token := flag.String("token", "", "token, when the server uses --tokens")
	agent := flag.String("agent", "", "agent slot to ask for (default: any free one)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *token, *agent); err != nil {
		fmt.Fprintln(os.Stderr, "forager:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr, token, agent string) error {
	c, err := sdk.Connect(ctx, addr, sdk.Options{Token: token, Agent: agent, Name: "forager example"})
	if err != nil {
		return err // a refusal is a *sdk.ServerError: its Code says why
	}
	defer c.Close()
	w := c.Welcome()
	// The forager wants the world's bounds and rules, which come with the
	// scenario: load the same scenario the server runs.
	sc, err := scenarios.Load(w.Scenario)
	if err != nil {
		return err
	}
	world, err := sc.NewWorld(scenarios.Options{Seed: w.Seed})
	if err != nil {
		return err
	}
	f := &forager{info: bots.Info{AgentID: w.AgentID, Bounds: world.Bounds(), Rules: world.Rules()}}
	end, err := c.Run(ctx, f)
	if err != nil {
		return err
	}
	if end.Results != nil {
		fmt.Printf("%s: mean score %.1f, passed %v\n", w.AgentID, end.Results.MeanScore, end.Results.Passed)
	}
	return nil
}

// forager plays the built-in forager bot, a new one for each episode (each
// has its own seed). It implements sdk.EpisodeObserver.
type forager struct {
	info bots.Info
	*bots.Forager
}

func (f *forager) StartEpisode(_ context.Context, e *sdk.EpisodeStart) {
	info := f.info
	info.Seed = e.Seed
	f.Forager = bots.NewForager(info)
}

func (f *forager) EndEpisode(_ context.Context, e *sdk.EpisodeEnd) {
	score := "no results"
	if e.Results != nil {
		for _, a := range e.Results.Agents {
			if a.ID == f.info.AgentID {
				score = fmt.Sprintf("score %.1f, passed %v", a.Score, a.Passed)
			}
		}
	}
	fmt.Printf("%s: episode %d ended at tick %d (%s): %s\n", f.info.AgentID, e.Episode, e.Tick, e.Reason, score)
}
