#!/bin/sh
# pgo.sh writes default.pgo, the CPU profile that `go build` uses to optimise
# the arena command (profile-guided optimisation: hot calls inlined and
# devirtualised; about 6% fewer instructions per world step, see
# docs/performance.md). It profiles the command, built without a profile, on
# the workloads it spends its time on: world steps with built-in agents on a
# small and a large map, and lockstep over a Unix socket with 100 and 1,000
# clients. Run it again after large changes to the hot paths:
#
#	go generate ./cmd/arena
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/arena" .
"$tmp/arena" bench --agents 1000 --size 256 --ticks 400 --cpuprofile "$tmp/world-1k.prof" >/dev/null
"$tmp/arena" bench --agents 10000 --size 1024 --ticks 60 --cpuprofile "$tmp/world-10k.prof" >/dev/null
"$tmp/arena" bench --ipc --agents 100 --ticks 1500 --cpuprofile "$tmp/ipc-100.prof" >/dev/null
"$tmp/arena" bench --ipc --agents 1000 --ticks 100 --cpuprofile "$tmp/ipc-1k.prof" >/dev/null
# The lockstep runs only: the bare echo is the benchmark's yardstick.
go tool pprof -proto "$tmp/world-1k.prof" "$tmp/world-10k.prof" \
	"$tmp/ipc-100-lockstep-1.prof" "$tmp/ipc-1k-lockstep-1.prof" >default.pgo.tmp 2>/dev/null
mv default.pgo.tmp default.pgo
