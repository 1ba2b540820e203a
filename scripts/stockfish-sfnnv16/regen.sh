#!/bin/sh
# Regenerate host/tests/data/stockfish-sfnnv16/ end to end with Stockfish's own code.
#   usage (from the repo root): SFGIT=/path/to/Stockfish/.git scripts/stockfish-sfnnv16/regen.sh
# SFGIT: a clone (or bare mirror) of official-stockfish/Stockfish holding commit 762dd1da9.
# The positions and games are those of the 15.1 vectors (host/tests/data/stockfish-15.1), less
# the FENs today's Position::set refuses (more pieces than promotions allow).
set -eu
: "${SFGIT:?set SFGIT}"
COMMIT=762dd1da9a5db458180b2c5db6c53dc40ec61e1a
SCR=scripts/stockfish-sfnnv16; FIX=host/tests/data/stockfish-sfnnv16; OLD=host/tests/data/stockfish-15.1
WORK=${WORK:-/tmp/sf16-nnue-work}
rm -rf "$WORK"; mkdir -p "$WORK/sf" "$FIX"
git --git-dir="$SFGIT" archive "$COMMIT" | tar -x -C "$WORK/sf"
"$SCR/build.sh" "$WORK/sf" "$WORK/sf16_nnue"
H="$WORK/sf16_nnue"

# The reference's block indices on the feature fixtures (both FEN sets).
for b in halfka_v2_hm full_threats pp_3wide; do
    "$H" features "$b" < host/tests/data/stockfish-features/positions.fen > "$WORK/$b.tsv"
done
cp "$WORK/full_threats.tsv" "$WORK/pp_3wide.tsv" host/tests/data/stockfish-features/
cmp "$WORK/halfka_v2_hm.tsv" host/tests/data/stockfish-features/halfka_v2_hm.tsv
for b in full_threats pp_3wide; do
    "$H" features "$b" < host/tests/data/nnue-pytorch-features/positions.fen |
        cmp - "host/tests/data/nnue-pytorch-features/$b.tsv"
done

grep -v '^#' "$OLD/positions.tsv" | cut -f1 | "$H" accepted > "$WORK/positions.fen"
grep -v '^#' "$OLD/games.tsv" | cut -f1,2 > "$WORK/games.txt"
# Every third position and game for the networks after the first.
awk 'NR % 3 == 1' "$WORK/positions.fen" > "$WORK/positions-third.fen"
awk 'NR % 3 == 1' "$WORK/games.txt" > "$WORK/games-third.txt"

printf '# networks written by Stockfish 762dd1da9 (sf16_nnue random SEED SCALE)\n# seed\tscale\tbytes\tsha256\n' > "$FIX/networks.tsv"
for spec in 1:4:positions.fen:games.txt 2:8:positions-third.fen:games-third.txt 3:2:positions-third.fen:games-third.txt; do
    IFS=: read -r seed scale fens games <<END
$spec
END
    net="$WORK/random-$seed.nnue"
    "$H" random "$net" "$seed" "$scale"
    printf '%s\t%s\t%s\t%s\n' "$seed" "$scale" "$(stat -c %s "$net")" "$(sha256sum "$net" | cut -d' ' -f1)" >> "$FIX/networks.tsv"
    "$H" positions "$net" < "$WORK/$fens" | sed "s|$net|random-$seed.nnue|" > "$FIX/positions-$seed.tsv"
    "$H" games "$net" < "$WORK/$games" | sed "s|$net|random-$seed.nnue|" > "$FIX/games-$seed.tsv"
done
ls -la "$FIX"
