//go:build !amd64

package prefetch

func lines(addr, n uintptr) {}
