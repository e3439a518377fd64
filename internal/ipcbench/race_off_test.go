//go:build !race

package ipcbench

// raceDetector: see race_on_test.go.
const raceDetector = false
