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
out=runs/ablation-seed$seed
mkdir -p "$out"
rm -f "$out/games.pgn"
cargo build --release -p host -p arena --locked
engines=(--engine "name=full,net=$net,option.Hash=16")
for t in aspiration rfp nmp iir lmp futility see lmr check-ext tt-cut; do
    engines+=(--engine "name=no-$t,net=$net,option.Hash=16,option.Ablation=$t")
done
target/release/arena tournament --gauntlet "${engines[@]}" \
    --openings ../shared/data/uho_4060_v2.epd --openings-order random --seed "$seed" \
    --rounds "$rounds" --concurrency 2 --nodes "$nodes" \
    --resign-score 1000 --draw-score 10 --maxmoves 200 \
    --event "search ablation, $nodes nodes/move" --pgn "$out/games.pgn" | tee "$out/tournament.txt"
target/release/arena elo "$out/games.pgn" --anchor full --markdown | tee "$out/ratings.md"
