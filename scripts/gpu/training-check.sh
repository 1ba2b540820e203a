#!/usr/bin/env bash
# The trainer on a GPU: throughput per shape (`trainer bench`) and short end-to-end runs
# (`trainer train` on slices of nnue-pytorch's Stockfish-labelled sample, each beside the same
# run on the CPU, whose losses it should follow), as recorded in BENCHMARKS.md ("On a
# GPU"). For a machine with an NVIDIA GPU and PyTorch 2.11 but no Rust and no ../shared, such as
# the lent device machines: build, strip and slice here, carry the folder, run there from the
# repository's root.
#
#   cargo build --release -p trainer -p nnue-plugin-all -p nnue-plugin-king
#   mkdir -p .dev-carry && strip -o .dev-carry/trainer target/release/trainer
#   for f in target/release/libnnue_plugin_*.so; do strip -o .dev-carry/${f##*/} $f; done
#   S=../shared/data/nnue-pytorch-small.binpack
#   target/release/trainer convert --in $S --offset 10000 --limit 100000 --out .dev-carry/sample-train.binpack
#   target/release/trainer convert --in $S --limit 10000 --out .dev-carry/sample-val.binpack
#   bash scripts/gpu/training-check.sh .dev-carry [OUT]     # on the GPU machine
#
# The trainer finds the machine's libtorch (python3's torch) through LD_LIBRARY_PATH, set here.
# DEV=cpu QUICK=1 runs the same commands small, on the CPU (a dry run).
set -uo pipefail
C=${1:?usage: training-check.sh DIR-with-trainer-and-plugins [OUT]}
OUT=${2:-${OUT:-/tmp/gpu-check}}
mkdir -p "$OUT"
RUNS=$(mktemp -d)
DEV=${DEV:-cuda}
if [ "$DEV" = cuda ]; then
    nvidia-smi -L
    torch_lib=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/lib
    export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    python3 -c 'import torch; print("python torch", torch.__version__, "CUDA", torch.version.cuda)'
fi
T="$C/trainer --plugin-dir $C"
STEPS=${QUICK:+3}; STEPS=${STEPS:-200}
EPOCH=${QUICK:+20000}; EPOCH=${EPOCH:-500000}
SHORT=${QUICK:+20000}; SHORT=${SHORT:-300000}
DATA="--in $C/sample-train.binpack --val $C/sample-val.binpack"
run() {
    echo "+ $*"
    local t0 rc
    t0=$(date +%s%N); "$@"; rc=$?
    echo "[rc $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms]"
}
{
    run $T bench --device "$DEV" --l1 256,512 --steps "$STEPS" --warmup 20
    run $T bench --device "$DEV" --l1 256,512 --batch-size 65536 --steps $((STEPS / 2 + 1)) --warmup 5
    for opt in adam sparse-adam; do
        run $T bench --device "$DEV" --spec 'halfka_v2_hm^' --optimizer $opt --arch thesis,sfnnv5 \
            --l1 256,1024 --steps $((STEPS / 2 + 1)) --warmup 10
    done
    run $T bench --device "$DEV" --pqr --l1 256,512 --steps $((STEPS / 2 + 1)) --warmup 10
    run $T bench --device cpu --l1 256,512 --steps 20 --warmup 3
} 2>&1 | tee "$OUT/bench.txt"
{
    for dev in "$DEV" cpu; do
        run $T train --device "$dev" --spec all $DATA --l1 256 --epochs 4 --epoch-size "$EPOCH" \
            --loader-threads 6 --seed 1 --out "$RUNS/all-$dev" --no-progress
        run $T train --device "$dev" --spec 'halfka_v2_hm^' --optimizer sparse-adam $DATA --l1 256 \
            --epochs 3 --epoch-size "$SHORT" --loader-threads 6 --seed 1 --out "$RUNS/sparse-$dev" --no-progress
        run $T train --device "$dev" --spec all --method pqr $DATA --l1 256 --epochs 3 \
            --epoch-size "$SHORT" --loader-threads 6 --seed 1 --out "$RUNS/pqr-$dev" --no-progress
        [ "$dev" = cpu ] && break
    done
    run $T train --device "$DEV" --arch sfnnv5 --spec 'halfka_v2_hm^' --l1 1024 $DATA --epochs 2 \
        --epoch-size "$EPOCH" --loader-threads 6 --seed 1 --out "$RUNS/sfnnv5-$DEV" --no-progress
    for r in "all-$DEV" "sfnnv5-$DEV"; do
        run $T quant-report --checkpoint "$RUNS/$r/checkpoint.ckpt" \
            --data "$C/sample-val.binpack" --positions 1808 --calibration 8192
    done
} 2>&1 | tee "$OUT/train.txt"
rm -rf "$RUNS"
