#!/usr/bin/env bash
# Positions per hour of `trainer gensfen` for each labelling budget (issue 27, item 2), on this
# machine, one recipe after another, as a Markdown table on stdout (progress on stderr).
#
#   usage: scripts/gensfen-throughput.sh SF_NET [THREADS=2] [SCALE=1]
#
# SF_NET: Stockfish 15.1's network (nn-ad9b42354671.nnue; Debian's stockfish writes it with
#         `printf 'uci\nexport_net sf.nnue\nquit\n' | /usr/games/stockfish`).
# SCALE:  multiplies every recipe's position count (1: about 12 minutes on 2 cores).
#
# Every recipe plays from the UHO book (4 random plies in 1..12, positions from ply 16, only
# quiet ones, duplicates dropped) and differs only in who plays and who labels:
# - the cheap player (the thesis's all.nn, 100-node searches) with Stockfish's network as the
#   labeller: static evaluation, quiescence search, 200-, 1000- and 5000-node searches;
# - our engine with Stockfish's network playing and labelling at 200, 1000 and 5000 nodes;
# - Stockfish 15.1 itself (UCI, one thread each) playing and labelling at 5000 nodes, the
#   field's habit and the rate the issue measures against.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 3 ] || { sed -n '5,6p' "$0" | sed 's/^# *//' >&2; exit 2; }
SF_NET=$1; THREADS=${2:-2}; SCALE=${3:-1}
HERE=$(cd "$(dirname "$0")/.." && pwd)
TRAINER=${TRAINER:-$HERE/target/release/trainer}
SHARED=${SHARED:-$HERE/../shared}
BOOK=$SHARED/data/uho_4060_v2.epd
ALL=$SHARED/nets/thesis/all.nn
[ -x "$TRAINER" ] || { echo "no $TRAINER: cargo build --release" >&2; exit 1; }
for f in "$SF_NET" "$BOOK" "$ALL"; do [ -r "$f" ] || { echo "cannot read $f" >&2; exit 1; }; done
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
GAME=(--book "$BOOK" --random-moves 4 --random-minply 1 --random-maxply 12 --write-minply 16
      --skip-noisy --dedup-mb 256 --hash 1 --threads "$THREADS" --seed 1 --quiet)
CHEAP=(--net "$ALL" --nodes 100)
SF_UCI="name=stockfish,cmd=/usr/games/stockfish,option.Threads=1,option.Hash=1"
# name | positions | arguments
RECIPES=(
  "all.nn 100 nodes, static label (SF net)|600000|${CHEAP[*]} --label static --label-net $SF_NET"
  "all.nn 100 nodes, qsearch label (SF net)|600000|${CHEAP[*]} --label qsearch --label-net $SF_NET"
  "all.nn 100 nodes, 200-node label (SF net)|150000|${CHEAP[*]} --label nodes=200 --label-net $SF_NET"
  "all.nn 100 nodes, 1000-node label (SF net)|40000|${CHEAP[*]} --label nodes=1000 --label-net $SF_NET"
  "all.nn 100 nodes, 5000-node label (SF net)|8000|${CHEAP[*]} --label nodes=5000 --label-net $SF_NET"
  "host + SF net plays and labels, 200 nodes|120000|--net $SF_NET --nodes 200"
  "host + SF net plays and labels, 1000 nodes|30000|--net $SF_NET --nodes 1000"
  "host + SF net plays and labels, 5000 nodes|6000|--net $SF_NET --nodes 5000"
  "Stockfish 15.1 (UCI) plays and labels, 5000 nodes|4000|--labeler $SF_UCI --nodes 5000"
)
echo "| recipe | positions | seconds | positions/s | M positions/hour | × Stockfish at 5000 nodes |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
declare -a ROWS; SF_RATE=""
for r in "${RECIPES[@]}"; do
  IFS='|' read -r name n args <<<"$r"
  n=$((n * SCALE))
  out="$WORK/out.binpack"; rm -f "$out" "$out.progress"
  echo "== $name ($n positions)" >&2
  # shellcheck disable=SC2086
  line=$("$TRAINER" gensfen --out "$out" --positions "$n" "${GAME[@]}" $args | sed -n 2p)
  echo "   $line" >&2
  [[ $line =~ in\ ([0-9.]+)\ s\ =\ ([0-9.]+)\ positions/s ]] || { echo "unexpected: $line" >&2; exit 1; }
  secs=${BASH_REMATCH[1]}; rate=${BASH_REMATCH[2]}
  [[ $name == Stockfish* ]] && SF_RATE=$rate
  ROWS+=("$name|$n|$secs|$rate")
done
for row in "${ROWS[@]}"; do
  IFS='|' read -r name n secs rate <<<"$row"
  awk -v name="$name" -v n="$n" -v s="$secs" -v r="$rate" -v sf="$SF_RATE" 'BEGIN {
    printf "| %s | %d | %.1f | %.0f | %.1f | %.1f× |\n", name, n, s, r, r * 3600 / 1e6, r / sf }'
done
