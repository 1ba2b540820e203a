#!/bin/sh
# A network trained here in Stockfish's shape, checked against Stockfish 15.1's own code:
# `trainer train --spec halfka_v2_hm^ --arch sfnnv5 --l1 1024` on self-play data, exported (the
# factorizer folded), converted with `host net convert --format stockfish`, then every stack's
# PSQT and positional sums and the evaluation of positions the network never saw (a seeded
# gen_positions.py run, SEED given) compared, value for value, between `host eval --stacks` and
# the reference harness sf151_nnue (build.sh) loading the converted file.
#   usage: scripts/stockfish-nnue/check-trained.sh SF151_NNUE_BINARY [WORKDIR] [SEED]
# Needs target/release/{trainer,host} (cargo build --release) and python-chess (.venv).
set -eu
HARNESS="$1"; WORK="${2:-/tmp/check-trained}"; SEED="${3:-987654321}"
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
TRAINER="$ROOT/target/release/trainer"; HOST="$ROOT/target/release/host"
PY="$ROOT/.venv/bin/python"; [ -x "$PY" ] || PY=python3
# 1. Data: host self-play at depth 3 (seeded).
"$ROOT/scripts/stockfish-nnue/selfplay-data.sh" "$TRAINER" "$WORK"
# 2. Training in Stockfish's shape, and the conversion.
rm -rf "$WORK/run"
"$TRAINER" train --spec 'halfka_v2_hm^' --arch sfnnv5 --l1 1024 --epochs 2 \
    --epoch-size 60000 --batch-size 4096 --val-size 5000 --lr 1e-3 \
    --in "$WORK/train.binpack" --val "$WORK/val.binpack" --out "$WORK/run"
"$HOST" net convert --in "$WORK/run/nets/epoch-0002.nnue" --out "$WORK/trained.nnue" --format stockfish
# 3. Unseen positions: gen_positions.py with another seed.
sed "s/^SEED = .*/SEED = $SEED/" "$HERE/gen_positions.py" > "$WORK/gen_positions.py"
"$PY" "$WORK/gen_positions.py" "$WORK/unseen.fen" > /dev/null
# 4. Both evaluations, compared.
"$HARNESS" "$WORK/trained.nnue" positions < "$WORK/unseen.fen" > "$WORK/stockfish.tsv"
"$HOST" eval --stacks --net "$WORK/trained.nnue" --fens "$WORK/unseen.fen" > "$WORK/host.tsv"
"$PY" "$ROOT/scripts/stockfish-nnue/compare_stacks.py" "$WORK/stockfish.tsv" "$WORK/host.tsv"
