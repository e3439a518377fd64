//go:build race

package nav

// Under the race detector the oracle-heavy quality test runs on the 128²
// maps only (the 256² ones take minutes there); it still asserts the same
// targets on every family.
var qualitySizes = []int{128}
