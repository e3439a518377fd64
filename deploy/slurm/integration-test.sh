#!/bin/bash
# Integration test of deploy/slurm on a real, single-node Slurm cluster:
# munged, slurmctld and slurmd from Debian's packages (munge, slurm-wlm),
# started on localhost in a temporary folder, with their own ports and
# munge socket, and stopped at the end. It submits a sharded evaluation with
# submit.sh (a job array, then the merge with --dependency=afterok), waits,
# and requires the merged report to equal an unsharded `arena eval` byte for
# byte: report.json, episodes.csv, episodes.json and every plot.
#
#   deploy/slurm/integration-test.sh [ARENA_BINARY]
#
# Exit status 0: passed; 1: failed; 77: skipped (not root, or no Slurm and
# no apt-get to install it), with the reason on standard error.
set -euo pipefail
SECONDS=0
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
skip() { echo "slurm integration test: SKIPPED: $*" >&2; exit 77; }
fail() { echo "slurm integration test: FAILED: $*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || skip "needs root (to run slurmctld/slurmd and install them)"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  command -v apt-get >/dev/null || skip "slurmctld, slurmd or munged missing and no apt-get"
  echo "slurm integration test: installing slurm-wlm and munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

t=$(mktemp -d /tmp/arena-slurm.XXXXXX)
chmod 700 "$t"
pids=()
cleanup() {
  local code=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if ((code != 0 && code != 77)); then
    for f in "$t"/*.log "$t"/*.out "$t"/out/*.out; do [[ -f $f ]] && { echo "--- $f"; tail -n 30 "$f"; }; done >&2
  fi
  rm -rf "$t"
}
trap cleanup EXIT

arena=${1:-}
if [[ -z $arena ]]; then
  arena=$t/arena
  (cd "$root" && CGO_ENABLED=0 go build -o "$arena" ./cmd/arena)
  echo "slurm integration test: built arena (${SECONDS}s)"
fi
export ARENA=$arena

# munge: our own key, socket and daemon.
mungekey --create --keyfile="$t/munge.key" 2>/dev/null || dd if=/dev/urandom of="$t/munge.key" bs=1024 count=1 status=none
chmod 400 "$t/munge.key"
munged --force --socket="$t/munge.sock" --key-file="$t/munge.key" --pid-file="$t/munged.pid" \
  --log-file="$t/munged.log" --seed-file="$t/munged.seed" --foreground >"$t/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -S $t/munge.sock ]] && break; sleep 0.1; done
[[ -S $t/munge.sock ]] || fail "munged did not start"

# Free ports for slurmctld and slurmd (from the ephemeral range's far end).
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ctlport=$(port) dport=$(port)
node=$(hostname -s)
cpus=$(nproc)
mkdir -p "$t/state" "$t/spool" "$t/out"
cat >"$t/slurm.conf" <<CONF
ClusterName=arenatest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctlport
SlurmdPort=$dport
AuthType=auth/munge
AuthInfo=socket=$t/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd.pid
SlurmctldLogFile=$t/slurmctld.log
SlurmdLogFile=$t/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$t/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$t/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$t/slurmd.out" 2>&1 &
pids+=($!)
up=
for _ in $(seq 100); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then up=1; break; fi
  sleep 0.2
done
[[ -n $up ]] || fail "the node did not come up: $(sinfo 2>&1 || true)"
echo "slurm integration test: slurmctld and slurmd up on $node (ports $ctlport, $dport) (${SECONDS}s)"

eval_args=(--scenario foraging --agents 4 --episodes 10 --ticks 150 --seed 7)
ids=$("$here/submit.sh" 4 "$t/out" "${eval_args[@]}")
array=$(awk '/^array/ {print $2}' <<<"$ids")
merge=$(awk '/^merge/ {print $2}' <<<"$ids")
echo "slurm integration test: submitted array job $array (4 tasks) and merge job $merge (afterok) (${SECONDS}s)"

# Meanwhile, the unsharded run to compare with.
"$arena" eval "${eval_args[@]}" --out "$t/full" >/dev/null 2>&1

state() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n 1 | cut -d= -f2; }
for _ in $(seq 600); do
  s=$(state "$merge")
  case $s in
    COMPLETED) break ;;
    FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) fail "merge job $merge ended $s" ;;
  esac
  sleep 0.5
done
[[ $(state "$merge") == COMPLETED ]] || fail "merge job $merge did not complete in 5 minutes (state $(state "$merge"))"
for k in 0 1 2 3; do
  s=$(state "${array}_$k")
  [[ $s == COMPLETED ]] || fail "array task $k is $s"
  [[ -f $t/out/shard-000$k/shard.json ]] || fail "shard $k wrote no shard.json"
done

n=0
while IFS= read -r -d '' f; do
  rel=${f#"$t/full/"}
  cmp -s "$f" "$t/out/$rel" || fail "$rel differs between the merged and the unsharded run"
  n=$((n + 1))
done < <(find "$t/full" -type f -print0)
((n >= 5)) || fail "only $n files compared"
echo "slurm integration test: PASSED in ${SECONDS}s: the merged report of 4 array tasks equals the unsharded run ($n files byte for byte)"
