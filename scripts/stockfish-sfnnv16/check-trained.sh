#!/bin/sh
# A network trained here in Stockfish's shape of today, checked against Stockfish's own code at
# 762dd1da9: `trainer train --spec halfka_v2_hm^+full_threats+pp_3wide --arch sfnnv16 --l1 1024`
# (threat and pair rows i8 by default, as Stockfish stores them) on self-play data, exported (the
# factorizer folded),
# converted with `host net convert --format stockfish`, then every stack's PSQT and positional
# sums and the evaluation of positions the network never saw (scripts/stockfish-nnue's
# gen_positions.py with SEED, less those Position::set refuses), and the evaluation after every
# move of the 15.1 vectors' games and of three 400-ply games (long_games.py), compared value
# for value between host and the harness (build.sh) loading the converted file.
#   usage: scripts/stockfish-sfnnv16/check-trained.sh SF16_NNUE_BINARY [WORKDIR] [SEED]
# Needs target/release/{trainer,host} (cargo build --release) and python-chess (.venv).
set -eu
HARNESS="$1"; WORK="${2:-/tmp/check-trained-sfnnv16}"; SEED="${3:-987654321}"
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
TRAINER="$ROOT/target/release/trainer"; HOST="$ROOT/target/release/host"
PY="$ROOT/.venv/bin/python"; [ -x "$PY" ] || PY=python3
# 1. Data: host self-play at depth 3 (seeded).
"$ROOT/scripts/stockfish-nnue/selfplay-data.sh" "$TRAINER" "$WORK"
# 2. Training in today's shape, and the conversion.
rm -rf "$WORK/run"
"$TRAINER" train --spec 'halfka_v2_hm^+full_threats+pp_3wide' --arch sfnnv16 --l1 1024 \
    --epochs 2 --epoch-size 60000 --batch-size 4096 \
    --val-size 5000 --lr 1e-3 --in "$WORK/train.binpack" --val "$WORK/val.binpack" --out "$WORK/run"
"$HOST" net convert --in "$WORK/run/nets/epoch-0002.nnue" --out "$WORK/trained.nnue" --format stockfish
sha256sum "$WORK/trained.nnue"
# 3. Unseen positions: gen_positions.py with another seed, less what Stockfish refuses.
sed "s/^SEED = .*/SEED = $SEED/" "$ROOT/scripts/stockfish-nnue/gen_positions.py" > "$WORK/gen_positions.py"
"$PY" "$WORK/gen_positions.py" "$WORK/all.fen" > /dev/null
"$HARNESS" accepted < "$WORK/all.fen" > "$WORK/unseen.fen"
# 4. Both evaluations, compared: positions (every stack), then games (after every move).
"$HARNESS" positions "$WORK/trained.nnue" < "$WORK/unseen.fen" > "$WORK/stockfish.tsv"
"$HOST" eval --stacks --net "$WORK/trained.nnue" --fens "$WORK/unseen.fen" > "$WORK/host.tsv"
"$PY" "$ROOT/scripts/stockfish-nnue/compare_stacks.py" "$WORK/stockfish.tsv" "$WORK/host.tsv"
grep -v '^#' "$ROOT/host/tests/data/stockfish-15.1/games.tsv" | cut -f1,2 > "$WORK/games.txt"
"$HARNESS" games "$WORK/trained.nnue" < "$WORK/games.txt" | grep -v '^#' > "$WORK/stockfish-games.tsv"
"$HOST" eval --net "$WORK/trained.nnue" --games "$WORK/games.txt" > "$WORK/host-games.tsv"
cmp "$WORK/stockfish-games.tsv" "$WORK/host-games.tsv"
echo "$(wc -l < "$WORK/games.txt") games, $(cut -f3 "$WORK/host-games.tsv" | tr ',' '\n' | wc -l) evaluations: identical"
# 5. Games longer than Stockfish's accumulator stack (400 plies: the harness restarts it).
"$PY" "$HERE/long_games.py" 3 400 400 > "$WORK/long.txt"
"$HARNESS" games "$WORK/trained.nnue" < "$WORK/long.txt" | grep -v '^#' > "$WORK/stockfish-long.tsv"
"$HOST" eval --net "$WORK/trained.nnue" --games "$WORK/long.txt" > "$WORK/host-long.tsv"
cmp "$WORK/stockfish-long.tsv" "$WORK/host-long.tsv"
SF_SUM=$("$HARNESS" bench "$WORK/trained.nnue" 1 < "$WORK/long.txt" | sed 's/.*checksum //')
HOST_SUM=$("$HOST" eval --net "$WORK/trained.nnue" --games "$WORK/long.txt" --repeat 1 | tail -1 | sed 's/.*checksum //')
[ "$SF_SUM" = "$HOST_SUM" ] || { echo "bench checksums differ: $SF_SUM vs $HOST_SUM" >&2; exit 1; }
echo "3 games of 400 plies, $(cut -f3 "$WORK/host-long.tsv" | tr ',' '\n' | wc -l) evaluations: identical (bench checksum $SF_SUM both)"
