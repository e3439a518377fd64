module github.com/arena-sim/arena

go 1.26.8

require (
	github.com/fxamacker/cbor/v2 v2.9.6
	github.com/hajimehoshi/ebiten/v2 v2.10.4
	github.com/quasilyte/pathing v0.0.0-20231012081721-0370212e864a
	github.com/solarlune/resolv v0.8.1
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/ebitengine/gomobile v0.0.0-20260820040257-d11f821a26a6 // indirect
	github.com/ebitengine/hideconsole v1.0.0 // indirect
	github.com/ebitengine/purego v0.11.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
