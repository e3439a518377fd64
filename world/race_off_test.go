//go:build !race

package world

// stepWithRunners and stepWithSeeds are what TestStepWithWalksAsStep plays
// (see race_on_test.go for the race detector's).
var stepWithRunners, stepWithSeeds = []string{"concurrent", "in order", "one worker for both", "reversed"}, uint64(3)
