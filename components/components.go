// Package components owns the registry of world components a scenario can
// switch on by name in its "components" section (a social feed, a prediction
// market, an economy, ...). Each kind lives in its own package below this one
// and is built afresh for every world from its JSON config, so that episodes
// and parallel evaluations never share state.
package components

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/arena-sim/arena/components/debate"
	"github.com/arena-sim/arena/components/economy"
	"github.com/arena-sim/arena/components/market"
	"github.com/arena-sim/arena/components/roles"
	"github.com/arena-sim/arena/components/social"
	"github.com/arena-sim/arena/world"
)

// Factory builds a component from its scenario config (nil when the scenario
// gives none). A bad config is an error naming the field.
type Factory func(config json.RawMessage) (world.Component, error)

// kinds maps a component kind to its factory; kinds register here.
var kinds = map[string]Factory{
	"debate":  debate.Factory,
	"economy": economy.Factory,
	"market":  market.Factory,
	"roles":   roles.Factory,
	"social":  social.Factory,
}

// Kinds lists the component kinds in sorted order.
func Kinds() []string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// New builds a component of a kind from its config.
func New(kind string, config json.RawMessage) (world.Component, error) {
	f, ok := kinds[kind]
	if !ok {
		known := "none"
		if len(kinds) > 0 {
			known = strings.Join(Kinds(), ", ")
		}
		return nil, fmt.Errorf("unknown component %q (known: %s)", kind, known)
	}
	c, err := f(config)
	if err != nil {
		return nil, fmt.Errorf("component %s: %w", kind, err)
	}
	return c, nil
}
