#!/bin/bash
# Queues a sharded `arena eval` on Slurm: a job array of SHARDS tasks
# (eval.sbatch), then the merge (merge.sbatch), which runs only if every task
# succeeded (--dependency=afterok). Prints the two job ids.
#
#   deploy/slurm/submit.sh SHARDS OUT [arena eval flags...]
#   deploy/slurm/submit.sh 8 /shared/runs/foraging --scenario foraging --episodes 800 --seed 1
#
# Extra sbatch options (partition, account, ...) go in SBATCH_EXTRA, e.g.
# SBATCH_EXTRA="--partition=cpu --account=lab". ARENA names the binary.
set -euo pipefail
if (($# < 2)); then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
shards=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# shellcheck disable=SC2086 # SBATCH_EXTRA is a list of options
array=$(sbatch --parsable ${SBATCH_EXTRA:-} --chdir="$out" --array="0-$((shards - 1))" \
  "$here/eval.sbatch" --out "$out" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_EXTRA:-} --chdir="$out" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  "$here/merge.sbatch" --out "$out" "$out")
merge=${merge%%;*}
echo "array $array"
echo "merge $merge"
