package engine

import (
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

// Recorder keeps what episodes produce. Begin is called with each episode's
// world before its first tick and returns the journal that records it (nil
// for none); End is called with the finished world and the episode's
// results, or the error that stopped it, and owns closing the journal.
type Recorder interface {
	Begin(episode int, w *world.World) (*Journal, error)
	End(episode int, w *world.World, j *Journal, res *Results, runErr error) error
}
