package engine

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/arena-sim/arena/world"
)

// EpisodeSeed is the seed of episode ep (1-based) of a run seeded with seed:
// the run's seed for the first episode, then one derived from it and the
// episode number, so that every episode differs and any one can be re-run
// alone with its own seed.
func EpisodeSeed(seed uint64, ep int) uint64 {
	if ep <= 1 {
		return seed
	}
	return world.DeriveSeed(seed, "episode:"+strconv.Itoa(ep))
}

// AgentSeed is the seed an agent is given for its own randomness (the
// protocol's welcome and episode_start `seed`, and a built-in bot's): derived
// from the world's public seed and the agent's id, so agents differ, and
// carrying nothing of the secret seed that deals hidden information.
func AgentSeed(worldSeed uint64, agentID string) uint64 {
	return world.DeriveSeed(worldSeed, "agent:"+agentID)
}

// FreshSeed draws a seed no one can predict (crypto/rand), never zero: what a
// server uses when it is given none, so that no agent can re-run its game.
func FreshSeed() uint64 {
	var b [8]byte
	for {
		if _, err := crand.Read(b[:]); err != nil {
			panic("crypto/rand: " + err.Error()) // never fails on supported platforms
		}
		if s := binary.LittleEndian.Uint64(b[:]) >> 1; s != 0 {
			return s
		}
	}
}

// FreshID draws a random identifier of n bytes in hex (an episode id).
func FreshID(n int) string {
	b := make([]byte, n)
	if _, err := crand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// Recorder keeps what episodes produce. Begin is called with each episode's
// world before its first tick and returns the journal that records it (nil
// for none); End is called with the finished world and the episode's
// results, or the error that stopped it, and owns closing the journal.
type Recorder interface {
	Begin(episode int, w *world.World) (*Journal, error)
	End(episode int, w *world.World, j *Journal, res *Results, runErr error) error
}
