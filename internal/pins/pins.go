//go:build pins

// Package pins keeps every pinned dependency in go.mod, including the ones that
// only later packages (the IPC transport, the Ebiten viewer) import, so that a
// bare `go mod tidy` cannot drop or re-resolve them: this module proxy answers
// "latest" wrongly (see docs/dependencies.md). It is never built.
package pins

import (
	_ "github.com/fxamacker/cbor/v2"
	_ "github.com/hajimehoshi/ebiten/v2"
)
