// Command forager is a complete external agent: the built-in forager, playing
// over the socket protocol through the Go SDK.
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
		return err
	}
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
	f := bots.NewForager(bots.Info{AgentID: w.AgentID, Seed: w.Seed, Bounds: world.Bounds(), Rules: world.Rules()})
	end, err := c.Run(ctx, f)
	if err != nil {
		return err
	}
	fmt.Printf("%s: episode ended (%v)\n", w.AgentID, end["reason"])
	return nil
}
