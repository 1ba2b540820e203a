#!/usr/bin/env bash
# The data ladder on a GPU machine with PyTorch 2.11 but no Rust (such as the lent device
# machines): `trainer run scripts/gpu/ladder.toml --device cuda` from the folder that
# `scripts/gpu/ladder-carry.sh` filled, every worker count one per core; the ladder's report
# (`ladder.md`, its pictures and every rung's report) is copied to OUT.
#
#   bash scripts/gpu/ladder.sh .dev-carry OUT           # the ladder to 32M positions
#   DEV=cpu DRY=1 bash scripts/gpu/ladder.sh .dev-carry  # the same commands, small, on a CPU
#
# A rerun (the same OUT) reuses the dataset and every finished rung.
set -euo pipefail
C=${1:?usage: ladder.sh DIR-with-trainer-host-and-plugins [OUT]}
OUT=${2:-${OUT:-/tmp/gpu-ladder}}
DEV=${DEV:-cuda}
ONLY=gpu-ladder
[ -n "${DRY:-}" ] && ONLY=gpu-ladder-dry
mkdir -p "$OUT"
if [ "$DEV" = cuda ]; then
    nvidia-smi -L
    torch_lib=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/lib
    export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -s "$C/label-net.nnue" ] || gunzip -k "$C/label-net.nnue.gz"
export OMP_WAIT_POLICY=PASSIVE
echo "$(nproc) cores; $(date -u)"
t0=$(date +%s)
"$C/trainer" --plugin-dir "$C" run scripts/gpu/ladder.toml --only "$ONLY" --device "$DEV" \
    --out "$OUT/runs" --no-progress 2>&1 | tee "$OUT/run.log"
echo "ladder $ONLY: $(( $(date +%s) - t0 )) s on $(nproc) cores, device $DEV" | tee -a "$OUT/run.log"
mkdir -p "$OUT/reports"
cp -r "$OUT/runs/reports/." "$OUT/reports/"
