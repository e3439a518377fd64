#!/usr/bin/env bash
# Runs every Arena test. Installs what the tests need when it is missing
# (Debian packages via apt-get when run as root): xvfb for render tests,
# python3-cbor2 for the Python SDK tests, and python3-numpy, -cloudpickle and
# -typing-extensions for the RL environment tests when gymnasium is at hand.
set -euo pipefail
cd "$(dirname "$0")"

need=()
command -v xvfb-run >/dev/null 2>&1 || need+=(xvfb xauth libgl1 libglx-mesa0 libgl1-mesa-dri libegl1 libx11-6 libxrandr2 libxi6 libxcursor1 libxinerama1 libxrender1 libxext6)
/usr/bin/python3 -c 'import cbor2' >/dev/null 2>&1 || need+=(python3 python3-cbor2)
# The Python RL tests use unmodified gymnasium and pettingzoo from $ARENA_THIRD_PARTY, else
# ../shared/third_party/python beside the repository (not in a fresh clone elsewhere).
rl_path=${ARENA_THIRD_PARTY:-$(cd .. && pwd)/shared/third_party/python}
[[ -d $rl_path/gymnasium && -d $rl_path/pettingzoo ]] || rl_path=
if [[ -n $rl_path ]]; then
  /usr/bin/python3 -c 'import numpy, cloudpickle, typing_extensions' >/dev/null 2>&1 ||
    need+=(python3-numpy python3-cloudpickle python3-typing-extensions)
fi
if ((${#need[@]})); then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "test.sh: missing ${need[*]}; install them (Debian: apt-get install ${need[*]})" >&2
  fi
fi

echo "== gofmt and go vet"
unformatted=$(gofmt -l .)
if [[ -n $unformatted ]]; then
  echo "gofmt needed: $unformatted" >&2
  exit 1
fi
go vet ./...

echo "== the simulation packages must not depend on ebiten (headless runs need no display)"
if go list -deps ./world ./nav ./tools ./engine ./scenarios ./bots | grep -q ebiten; then
  echo "a simulation package imports ebiten" >&2
  exit 1
fi

echo "== go test"
go test -count=1 ./...
# internal/tracephases is a module of its own (it needs golang.org/x/exp).
(cd internal/tracephases && go vet . && go test -count=1 .)
# internal/prefetch's arm64 assembly: vetted here always, and its tests run
# under qemu where qemu-aarch64-static is installed (nothing installs it).
GOARCH=arm64 go vet ./internal/prefetch
if command -v qemu-aarch64-static >/dev/null 2>&1; then
  echo "== internal/prefetch on arm64, under qemu"
  pf=$(mktemp -d)
  GOARCH=arm64 go test -c -o "$pf/prefetch.test" ./internal/prefetch
  qemu-aarch64-static "$pf/prefetch.test" -test.count=1
  rm -rf "$pf"
fi

if command -v gcc >/dev/null 2>&1; then
  echo "== go test -race"
  CGO_ENABLED=1 go test -count=1 -race ./...
fi

echo "== render tests (they open a window: under Xvfb)"
xvfb-run -a go test -count=1 -tags xvfb -run Render ./render/

echo "== fuzz smoke (decoders)"
# Budgets are counts of executions (about 10 s each on the 2-core machine), not
# durations: with a duration, Go 1.26's fuzzing coordinator can report a bare
# "context deadline exceeded" at the deadline when a loaded machine delays a
# worker (go.dev/issue/75804, fixed in Go 1.27), failing CI with no finding.
# Minimizing a new interesting input is bounded too (it ran a minute at times).
go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 20000x -fuzzminimizetime 500x ./scenarios
go test -run '^$' -fuzz '^FuzzValidate$' -fuzztime 12000x -fuzzminimizetime 500x ./tools
go test -run '^$' -fuzz '^FuzzReadFrame$' -fuzztime 80000x -fuzzminimizetime 500x ./ipc
go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 80000x -fuzzminimizetime 500x ./ipc
go test -run '^$' -fuzz '^FuzzReaderHandsOnWhatReadFrameReads$' -fuzztime 8000x -fuzzminimizetime 200x ./ipc
go test -run '^$' -fuzz '^FuzzReadReplay$' -fuzztime 60000x -fuzzminimizetime 500x ./engine
go test -run '^$' -fuzz '^FuzzComponentTools$' -fuzztime 150000x -fuzzminimizetime 500x ./components

echo "== Python SDK (sdk/python)"
PYTHONPATH=sdk/python /usr/bin/python3 -m unittest discover -s sdk/python/tests
if [[ -n $rl_path ]]; then
  echo "== Python RL environments: PettingZoo's and Gymnasium's own tests (from $rl_path; render under Xvfb)"
  PYTHONPATH=sdk/python:$rl_path xvfb-run -a /usr/bin/python3 -m unittest discover -s sdk/python/tests -p 'rl_test*.py'
else
  echo "== Python RL environments: SKIPPED, gymnasium and pettingzoo not found (set ARENA_THIRD_PARTY to a folder"
  echo "   holding them, or provide ../shared/third_party/python); sdk/python/tests/rl_test*.py did not run"
fi

echo "== MCP: the official TypeScript SDK client over stdio (mcp/testdata/ts)"
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  ts=mcp/testdata/ts
  # npm ci only when the installed packages are not those of the lock file.
  if ! cmp -s "$ts/package-lock.json" "$ts/node_modules/.package-lock.stamp" 2>/dev/null; then
    (cd "$ts" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.package-lock.stamp)
  fi
  bin=$(mktemp -d)
  go build -o "$bin/arena" ./cmd/arena
  node "$ts/stdio_test.mjs" "$bin/arena"
  rm -rf "$bin"
else
  echo "SKIPPED: node and npm are not installed, so the TypeScript MCP client test did not run (Debian: apt-get install nodejs npm)"
fi

echo "== Slurm integration (deploy/slurm/integration-test.sh: single-node Slurm, job array + afterok merge)"
code=0
deploy/slurm/integration-test.sh || code=$?
if ((code == 77)); then
  echo "test.sh: the Slurm integration test was SKIPPED (reason above); it needs root and apt-get or Slurm installed"
elif ((code != 0)); then
  exit "$code"
fi

echo "== Kubernetes manifests and the container image (deploy/k8s/test.sh)"
code=0
deploy/k8s/test.sh || code=$?
if ((code == 77)); then
  echo "test.sh: part of the Kubernetes test was SKIPPED (reason above)"
elif ((code != 0)); then
  exit "$code"
fi

echo "== main job"
go run ./cmd/arena run --scenario foraging --seed 1 --out "$(mktemp -d)" --quiet

echo "test.sh: all tests passed"
