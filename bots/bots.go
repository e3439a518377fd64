// Package bots owns Arena's built-in scripted agents. They run in-process, read
// the same Observation an external agent receives and answer with the same
// Decision, so a scenario can be played end to end with no external program.
package bots

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Info is what a bot is told when it is created: the facts a client learns from
// the welcome message.
type Info struct {
	AgentID string
	Seed    uint64
	Bounds  world.Bounds
	Rules   world.Rules
}

// Bot decides for one agent from its observation.
type Bot interface {
	Decide(ctx context.Context, obs *world.Observation) world.Decision
}

var kinds = map[string]func(Info) Bot{
	"capture_team": func(i Info) Bot { return NewCaptureTeam(i) },
	"crafter":      func(i Info) Bot { return NewCrafter(i) },
	"debater":      func(i Info) Bot { return NewDebater(i) },
	"economist":    func(i Info) Bot { return NewEconomist(i) },
	"forager":      func(i Info) Bot { return NewForager(i) },
	"idle":         func(Info) Bot { return idleBot{} },
	"roles_player": func(i Info) Bot { return NewRolesPlayer(i) },
	"social":       func(i Info) Bot { return NewSocial(i) },
	"townsfolk":    func(i Info) Bot { return NewTownsfolk(i) },
	"trader":       func(i Info) Bot { return NewTrader(i) },
}

// Kinds lists the built-in bot kinds.
func Kinds() []string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// New creates a built-in bot of a kind.
func New(kind string, info Info) (Bot, error) {
	mk, ok := kinds[kind]
	if !ok {
		return nil, fmt.Errorf("unknown bot kind %q (known: %s)", kind, strings.Join(Kinds(), ", "))
	}
	return mk(info), nil
}

type idleBot struct{}

func (idleBot) Decide(context.Context, *world.Observation) world.Decision {
	return world.Idle("idle bot")
}
