#!/usr/bin/env bash
# experiments.toml's `ladder-converged` (issue 44, item 5: the data ladder to 8M positions,
# every run trained to convergence) on a lent GPU machine with PyTorch 2.11 but no Rust, no
# Stockfish and no `../shared`, inside one device call. The same manifest and the same stage
# keys as on the 2-core machine: `../shared` is laid from the carried folder, Stockfish 15.1's
# network (the labeller) is put where the data stage would export it, and the 8M positions are
# generated there (the generator writes the same bytes for any thread count; the log prints
# their SHA-256 to compare with a CPU run's). The 56 training stages run P at a time on the GPU
# (`--stage train:...`, as Slurm's jobs do), the largest rungs first; then `trainer run --only
# ladder-converged` plays every rung's tournament on all cores and writes the reports. A
# deadline (BUDGET seconds from the start) stops whatever runs and still packs what is done:
# a rerun on the same machine reuses every finished stage.
#
#   here:  bash scripts/gpu/ladder-carry.sh && bash scripts/gpu/ladder-converged.sh --carry
#   there: bash scripts/gpu/ladder-converged.sh .dev-carry OUT     (carry .dev-carry and the
#          two data folders --carry names)
#   DEV=cpu RUNGS=125000 BUDGET=120 ...: the same commands, cut short, on a CPU (a dry run)
set -uo pipefail
cd "$(dirname "$0")/../.."
EXP=ladder-converged
DATA=ladder-qsearch-8m
if [ "${1:-}" = --carry ]; then
    # Here: the data stage's folder (its key is the manifest's; the labeller's network goes
    # there on the device, from ladder-carry.sh's gzipped copy), and the paths to carry.
    d=$(ls -d runs/data/$DATA-* 2>/dev/null | head -1)
    [ -n "$d" ] || { echo "run 'trainer run experiments.toml --stage data:$DATA' first" >&2; exit 1; }
    [ -s .dev-carry/label-net.nnue.gz ] || { echo "run scripts/gpu/ladder-carry.sh first" >&2; exit 1; }
    mkdir -p .dev-carry/ladder
    echo "$d" > .dev-carry/ladder/data-dir
    # A dry run of ladder.sh leaves the network unpacked beside its .gz: too large to carry.
    rm -f .dev-carry/label-net.nnue .dev-carry/ladder/label-net.nnue.gz
    # Every file of ../shared that experiments.toml names (a manifest loads whole).
    grep -o '\.\./shared/[^"]*' experiments.toml | sort -u | while read -r f; do
        g=.dev-carry/${f#../}
        mkdir -p "${g%/*}" && cp "$f" "$g"
    done
    v=$(ls -d runs/data/budget-sf5000-* | head -1)
    echo "carry: .dev-carry $v (du: $(du -sh .dev-carry | cut -f1))"
    exit 0
fi
C=${1:?usage: ladder-converged.sh DIR-with-trainer-host-and-plugins [OUT] | --carry}
OUT=${2:-${OUT:-/tmp/gpu-ladder-converged}}
DEV=${DEV:-cuda}
P=${P:-4}
BUDGET=${BUDGET:-560}
RUNGS=${RUNGS:-8000000 4000000 2000000 1000000 500000 250000 125000}
SETS="all halfka_v2_hm^ all+full_threats halfka_v2_hm^+full_threats+pp_3wide"
t0=$(date +%s)
left() { echo $(( t0 + BUDGET - $(date +%s) )); }
mkdir -p "$OUT"
LOG="$OUT/run.log"
exec > >(tee -a "$LOG") 2>&1
if [ "$DEV" = cuda ]; then
    nvidia-smi -L
    torch_lib=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/lib
    export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export OMP_WAIT_POLICY=PASSIVE
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(date -u)"
# ../shared as experiments.toml reads it.
mkdir -p ../shared && cp -rn "$C/shared/." ../shared/
d=$(cat "$C/ladder/data-dir")
mkdir -p "$d"
[ -s "$d/label-net.nnue" ] || gunzip -c "$C/label-net.nnue.gz" > "$d/label-net.nnue"
T="$C/trainer --plugin-dir $C"
step() { # NAME COMMAND...: runs it within the time left, and says how long it took
    local name=$1 s rc; shift
    s=$(date +%s)
    [ "$(left)" -gt 0 ] || { echo "[$name: skipped, no time left]"; return; }
    timeout "$(left)" "$@"; rc=$?
    echo "[$name: rc $rc in $(( $(date +%s) - s )) s, $(left) s left]"
}
step data $T run experiments.toml --stage "data:$DATA" --no-progress
sha256sum "$d/train.binpack" "$d/val.binpack" 2>/dev/null
stages=$(for r in $RUNGS; do for run in 1 2; do for s in $SETS; do
    echo "train:$EXP-$r:$s:$run"; done; done; done)
threads=$(( $(nproc) / P )); [ "$threads" -ge 1 ] || threads=1
export T DEV threads
train_one() {
    local s=$1 t=$(date +%s)
    $T run experiments.toml --stage "$1" --device "$DEV" --loader-threads "$threads" \
        --threads "$threads" --no-progress > "$OUT/stage.log.$$.$RANDOM" 2>&1
    echo "$s: rc $? in $(( $(date +%s) - t )) s"
}
export -f train_one
export OUT
step train bash -c "printf '%s\n' \"$stages\" | xargs -P $P -I{} bash -c 'train_one \"{}\"'"
cat "$OUT"/stage.log.* > "$OUT/train.log" 2>/dev/null; rm -f "$OUT"/stage.log.*
step report $T run experiments.toml --only "$EXP" --device "$DEV" --no-progress
# What comes back: the reports and every run's record (not the networks).
find runs/train -path "runs/train/$EXP-*" \( -name done.json -o -name 'metrics.*' \) > "$OUT/records"
tar -czf "$OUT/ladder-converged.tar.gz" runs/reports/$EXP* -T "$OUT/records" 2>/dev/null
rm -f "$OUT/records"
echo "ladder $EXP: $(( $(date +%s) - t0 )) s on $(nproc) cores, device $DEV"
