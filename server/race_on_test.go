//go:build race

package server_test

// raceDetector is true under `go test -race`, where the whole-game tests
// play fewer games: the race detector needs the server's concurrency, not
// every seed, and the full set runs without it.
const raceDetector = true
