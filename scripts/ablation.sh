#!/usr/bin/env bash
# Measures what each search technique gains: the full search plays a gauntlet against versions of
# itself with one technique switched off (UCI option `Ablation`), at a fixed node count per move
# (so the result does not depend on the machine's load), from UHO openings, with the thesis's
# best network. Ratings are relative to the full search (= 0): a technique that gains has its
# ablated version below 0. Results of a run are in BENCHMARKS.md.
#
#   bash scripts/ablation.sh [ROUNDS] [NODES] [SEED]   # defaults: 80 pairs, 15000 nodes/move, 1
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-80}"
nodes="${2:-15000}"
seed="${3:-1}"
net="$(realpath ../shared/nets/thesis/best.nn)"
cargo build --release -p host -p arena --locked
engines=(--engine "name=full,net=$net,option.Hash=16")
for t in aspiration rfp nmp iir lmp futility see lmr check-ext tt-cut; do
    engines+=(--engine "name=no-$t,net=$net,option.Hash=16,option.Ablation=$t")
done
source scripts/lib/uho-match.sh
uho_match "runs/ablation-seed$seed" full "search ablation, $nodes nodes/move" "$seed" "$rounds" \
    --gauntlet "${engines[@]}" --nodes "$nodes"
