package ipc

import (
	"slices"

	"github.com/arena-sim/arena/world"
)

// The roster is the list of living agents' ids that observations carry as
// agent_ids. Sending it whole in every observation makes the bytes of a tick
// grow with the square of the agents, so the server sends it whole in
// welcome and episode_start, and in an observation only the agents that left
// it (ObservationMsg.AgentsLeft) since a roster the client is known to hold;
// the whole roster again only when an agent joined it, which no scenario
// does today, or when the client asked for it in every observation
// (Hello.FullRoster). Roster is a client's side of it.

// Roster is a client's copy of the roster. Its zero value holds nothing
// known. It is not safe for concurrent use.
type Roster struct {
	ids []string // never modified in place: observations share it
}

// Reset replaces the roster with the one a welcome or an episode_start
// carried (nil from servers that send agent_ids in every observation).
func (r *Roster) Reset(ids []string) { r.ids = ids }

// IDs is the roster held.
func (r *Roster) IDs() []string { return r.ids }

// Observe brings the roster up to date with an observation message and
// fills the observation's AgentIDs when the server left them out: an
// observation that carries agent_ids replaces the roster, one without them
// takes left (its message's agents_left) off it. obs.AgentIDs is then shared
// with later observations: read it, do not modify it.
func (r *Roster) Observe(obs *world.Observation, left []string) {
	if obs.AgentIDs != nil {
		r.ids = obs.AgentIDs
		return
	}
	if len(left) > 0 {
		gone := make(map[string]bool, len(left))
		for _, id := range left {
			gone[id] = true
		}
		r.ids = slices.DeleteFunc(slices.Clone(r.ids), func(id string) bool { return gone[id] })
	}
	if r.ids == nil {
		r.ids = []string{}
	}
	obs.AgentIDs = r.ids
}

// RosterChange is what a client that holds the roster from must be told to
// hold the roster to: the agents that left it, or grew when an agent joined
// it (then the client needs the whole roster).
func RosterChange(from, to []string) (left []string, grew bool) {
	if sameRoster(from, to) {
		return nil, false
	}
	now := make(map[string]bool, len(to))
	for _, id := range to {
		now[id] = true
	}
	for _, id := range from {
		if !now[id] {
			left = append(left, id)
		}
	}
	return left, len(from)-len(left) != len(to)
}

// sameRoster reports whether a and b are the same roster: the world replaces
// its roster when it changes, so the same slice is the same roster.
func sameRoster(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}
