#!/bin/sh
# Regenerate host/tests/data/stockfish-15.1/{positions,games}.tsv end to end.
#   usage (from the repo root): SFGIT=/path/to/Stockfish/.git PY=/tmp/pyenv/bin/python \
#          scripts/stockfish-nnue/regen.sh
# SFGIT: a clone (or bare mirror) of official-stockfish/Stockfish containing commit
#   758f9c9350abee36a5865ec701560db8ea62004d (tag sf_15.1).
# PY:    a python with python-chess 1.11.2 (python3 -m venv /tmp/pyenv &&
#          /tmp/pyenv/bin/pip install chess==1.11.2).
# SF:    a Stockfish 15.1 binary with the default net (Debian stockfish 15.1-4:
#          /usr/games/stockfish); used to export the net and for the cross-check.
set -eu
: "${SFGIT:?set SFGIT}"; PY=${PY:-python3}; SF=${SF:-/usr/games/stockfish}
COMMIT=758f9c9350abee36a5865ec701560db8ea62004d
SHA=ad9b423546714137916bd38978af6fd68d7b8951bef25ff76bf43da72d6cb786
SCR=scripts/stockfish-nnue; FIX=host/tests/data/stockfish-15.1
WORK=${WORK:-/tmp/sf151-nnue-work}
rm -rf "$WORK"; mkdir -p "$WORK/sf151" "$FIX"

git --git-dir="$SFGIT" archive "$COMMIT" | tar -x -C "$WORK/sf151"
printf 'uci\nexport_net %s\nquit\n' "$WORK/sf.nnue" | "$SF" >/dev/null
echo "$SHA  $WORK/sf.nnue" | sha256sum -c -
test "$(stat -c %s "$WORK/sf.nnue")" = 47001499

"$SCR/build.sh" "$WORK/sf151" "$WORK/sf151_nnue"

"$PY" "$SCR/gen_positions.py" "$WORK/positions.fen"
"$WORK/sf151_nnue" "$WORK/sf.nnue" positions < "$WORK/positions.fen" > "$FIX/positions.tsv"
"$PY" "$SCR/gen_games.py" "$WORK/games.txt"
"$WORK/sf151_nnue" "$WORK/sf.nnue" games < "$WORK/games.txt" > "$FIX/games.tsv"

"$PY" "$SCR/stats.py" "$FIX/positions.tsv" "$FIX/games.tsv"
"$PY" "$SCR/crosscheck.py" "$FIX/positions.tsv" "$SF" 48
