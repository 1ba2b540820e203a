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
out=runs/thesis-ordering-seed$seed
mkdir -p "$out"
rm -f "$out/games.pgn"
cargo build --release --workspace --locked
engines=()
for n in all all+h+v all+d1+d2 all+h+v+d1+d2 h+v+d1+d2 h+v d1+d2 all+ph all+pv all+ph+pv; do
    engines+=(--engine "$nets/$n.nn")
done
target/release/arena tournament --gauntlet "${engines[@]}" \
    --openings ../shared/data/uho_4060_v2.epd --openings-order random --seed "$seed" \
    --rounds "$rounds" --concurrency 2 --movetime "$movetime" \
    --resign-score 1000 --draw-score 10 --maxmoves 200 \
    --event "thesis networks, ${movetime} ms/move" --pgn "$out/games.pgn" | tee "$out/tournament.txt"
target/release/arena elo "$out/games.pgn" --anchor all --markdown | tee "$out/ratings.md"
