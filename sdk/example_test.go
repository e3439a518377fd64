package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/world"
)

// An agent that walks to the nearest resource it sees and collects it.
func Example() {
	ctx := context.Background()
	c, err := sdk.Connect(ctx, "unix:arena.sock", sdk.Options{})
	if err != nil {
		log.Fatal(err) // a refusal is a *sdk.ServerError: UNAUTHORIZED, NO_SLOT, ...
	}
	defer c.Close()
	end, err := c.Run(ctx, sdk.AgentFunc(func(ctx context.Context, obs *sdk.Observation) sdk.Decision {
		if len(obs.NearbyResources) == 0 {
			return sdk.Idle()
		}
		r := obs.NearbyResources[0]
		if r.Distance <= 2 {
			return sdk.Decision{Tool: "collect", Params: map[string]any{"target_name": r.Name}}
		}
		return sdk.Decision{Tool: "move_to", Params: map[string]any{"target": r.Position[:]}}
	}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(end.Reason, end.Results.MeanScore)
}

// scout looks further than it can see before it decides.
type scout struct{}

func (scout) Decide(ctx context.Context, obs *sdk.Observation) sdk.Decision {
	q, err := sdk.ClientFrom(ctx).QueryWorld(ctx, 40, "resource")
	var se *sdk.ServerError
	switch {
	case errors.As(err, &se) && se.Code == world.CodeLimitExceeded:
		return sdk.Idle() // too many queries for this observation
	case err != nil:
		return sdk.Decision{Tool: "idle", Reasoning: err.Error()}
	case len(q.Entities) == 0:
		return sdk.Idle()
	}
	return sdk.Decision{Tool: "move_to", Params: map[string]any{"target": q.Entities[0].Position[:]}}
}

// Queries from inside Decide: the context Run passes carries the client.
func ExampleClientFrom() {
	ctx := context.Background()
	c, err := sdk.Connect(ctx, "unix:arena.sock", sdk.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(ctx, scout{}); err != nil {
		log.Fatal(err)
	}
}

// What the server answered is in the error.
func ExampleServerError() {
	_, err := sdk.Connect(context.Background(), "tcp:arena.example:7777", sdk.Options{Token: "red-token"})
	var se *sdk.ServerError
	if errors.As(err, &se) && se.Code == ipc.CodeUnauthorized {
		log.Fatalf("the token was refused: %s", se.Message)
	}
}
