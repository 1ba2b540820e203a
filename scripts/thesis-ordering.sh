#!/usr/bin/env bash
# Plays the thesis's published networks (../shared/nets/thesis) against ALL in a gauntlet with
# arena and rates them jointly (ALL = 0), to compare with the thesis's Elo column
# (../shared/nets/thesis/README.md). Results of a run are in RESULTS.md.
#
#   bash scripts/thesis-ordering.sh [ROUNDS] [MOVETIME_MS] [SEED]   # defaults: 40 pairs, 20 ms/move, 1
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-40}"
movetime="${2:-20}"
seed="${3:-1}"
nets=../shared/nets/thesis
cargo build --release --workspace --locked
engines=()
for n in all all+h+v all+d1+d2 all+h+v+d1+d2 h+v+d1+d2 h+v d1+d2 all+ph all+pv all+ph+pv; do
    engines+=(--engine "$nets/$n.nn")
done
source scripts/lib/uho-match.sh
uho_match "runs/thesis-ordering-seed$seed" all "thesis networks, ${movetime} ms/move" "$seed" "$rounds" \
    --gauntlet "${engines[@]}" --movetime "$movetime"
