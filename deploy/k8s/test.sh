#!/bin/bash
# Tests deploy/k8s and the Containerfile:
# 1. the manifests decode strictly into the Kubernetes API types of a pinned
#    k8s.io/api (validate/, a Go module of its own), and what Arena relies on
#    is checked (Indexed Job and ARENA_SHARDS, probes, drain vs grace period);
# 2. with a reachable cluster, `kubectl apply --dry-run=server` as well
#    (kubectl's client-side dry-run also needs an API server for discovery);
# 3. with buildah or podman, the image is built from the Containerfile and
#    runs `arena eval` (the build needs the network for its base images).
# Exit status 0: passed; 1: failed; 77: a part was skipped (said on stderr).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
skipped=0

echo "k8s: validating the manifests against k8s.io/api v0.32.4"
(cd "$here/validate" && go test -count=1 ./...)

if command -v kubectl >/dev/null && kubectl version --request-timeout=5s >/dev/null 2>&1; then
  kubectl apply --dry-run=server -f "$here" >/dev/null
  echo "k8s: kubectl apply --dry-run=server accepted the manifests"
else
  echo "k8s: SKIPPED kubectl dry-run: no reachable API server (kubectl needs one even for --dry-run=client)" >&2
  skipped=1
fi

builder=
for b in podman buildah; do command -v "$b" >/dev/null && { builder=$b; break; }; done
if [[ -n $builder ]]; then
  tag=localhost/arena-test:$$
  if [[ $builder == buildah ]]; then
    buildah bud -q -t "$tag" -f "$root/Containerfile" "$root"
  else
    podman build -q -t "$tag" -f "$root/Containerfile" "$root"
    podman run --rm "$tag" eval --scenario foraging --episodes 2 --ticks 50 --out /tmp/ev --plots=false
    podman rmi "$tag" >/dev/null
  fi
  echo "k8s: built the image with $builder"
else
  echo "k8s: SKIPPED the image build: neither podman nor buildah is installed" >&2
  skipped=1
fi
((skipped == 0)) || exit 77
