//go:build race

package ipcbench

// raceDetector is true under `go test -race`, where the test of 1,000
// connections uses 300: the race detector needs the concurrency, not the
// count, and the full count runs without it.
const raceDetector = true
