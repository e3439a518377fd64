//go:build race

package world

// Under the race detector TestStepWithWalksAsStep runs the parts on two
// goroutines only (the other runners are sequential: nothing for the
// detector to see), for one seed; it still asserts the same outcome.
var stepWithRunners, stepWithSeeds = []string{"concurrent"}, uint64(1)
