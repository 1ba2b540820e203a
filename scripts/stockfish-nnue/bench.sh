#!/usr/bin/env bash
# Side-by-side speed benchmark: incremental NNUE evaluation along games,
# Stockfish 15.1's own code (sf151_nnue bench) vs. our engine (host eval --repeat).
#
#   usage: scripts/stockfish-nnue/bench.sh SF_BIN_DIR HOST_BIN NET [ROUNDS=3] [REPEATS=20]
#
# SF_BIN_DIR: directory with sf151_nnue-{avx2,bmi2,avx512,vnni512} from build-bench.sh
#             (every one that exists is run; at least one must).
# HOST_BIN:   our host binary, run as
#               NNUE_SIMD=<level> HOST_BIN eval --net NET --games GAMES --repeat REPEATS
#             for each level in HOST_LEVELS (default "avx2 avx512 avx512vnni"), and
#             again with --full-refresh (no refresh cache: a king move refreshes from
#             all rows, as Stockfish 15.1 does); "-" skips the host half.
# NET:        nn-ad9b42354671.nnue (the Stockfish 15.1 net, 47,001,499 bytes).
# GAMES:      env, default host/tests/data/stockfish-15.1/games.tsv of this repo.
#
# Both sides print one line "positions P evals_per_second X checksum C"
# (P = evaluations per pass incl. start positions, X = P*REPEATS/s over all
# passes, C = sum of one pass's evaluations). ROUNDS rounds are interleaved
# (round r runs every Stockfish variant, then every host level). All P and C must
# agree (exit 1 otherwise). Output (stdout): Markdown with the median evals/s per
# engine/variant over the rounds and host/Stockfish ratios for the same
# instruction set (host avx2 / sf avx2, host avx512 / sf avx512,
# host avx512vnni / sf vnni512). Progress goes to stderr.
set -euo pipefail

if [ $# -lt 3 ] || [ $# -gt 5 ]; then
    sed -n '5,6p' "$0" | sed 's/^# *//' >&2
    exit 2
fi
SF_DIR=$1; HOST_BIN=$2; NET=$3; ROUNDS=${4:-3}; REPEATS=${5:-20}
HERE=$(cd "$(dirname "$0")" && pwd)
GAMES=${GAMES:-$(cd "$HERE/../.." && pwd)/host/tests/data/stockfish-15.1/games.tsv}
HOST_LEVELS=${HOST_LEVELS:-avx2 avx512 avx512vnni}
SF_VARIANTS="avx2 bmi2 avx512 vnni512"

die() { echo "bench.sh: $*" >&2; exit 1; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad ROUNDS $ROUNDS"
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || die "bad REPEATS $REPEATS"
[ -r "$NET" ] || die "cannot read net $NET"
[ -r "$GAMES" ] || die "cannot read games $GAMES"
if [ "$HOST_BIN" != "-" ]; then [ -x "$HOST_BIN" ] || die "host binary $HOST_BIN not executable"; fi

# run list: name<TAB>command (executed with bash -c, stdin from GAMES)
RUNS=()
for v in $SF_VARIANTS; do
    b="$SF_DIR/sf151_nnue-$v"
    if [ -x "$b" ]; then RUNS+=("sf-$v"$'\t'"$(printf '%q %q bench %q' "$b" "$NET" "$REPEATS")"); fi
done
[ ${#RUNS[@]} -gt 0 ] || die "no sf151_nnue-{${SF_VARIANTS// /,}} in $SF_DIR (build-bench.sh)"
if [ "$HOST_BIN" != "-" ]; then
    for l in $HOST_LEVELS; do
        for full in "" " --full-refresh"; do
            RUNS+=("host-$l${full:+-full}"$'\t'"$(printf 'NNUE_SIMD=%q %q eval --net %q --games %q --repeat %q' \
                "$l" "$HOST_BIN" "$NET" "$GAMES" "$REPEATS")$full")
        done
    done
fi

RES=$(mktemp); trap 'rm -f "$RES"' EXIT
for ((r = 1; r <= ROUNDS; r++)); do
    for run in "${RUNS[@]}"; do
        name=${run%%$'\t'*}; cmd=${run#*$'\t'}
        out=$(bash -c "$cmd" < "$GAMES" 2>/dev/null) || die "round $r: $name failed (rc $?): $cmd"
        [[ $out =~ ^positions\ ([0-9]+)\ evals_per_second\ ([0-9]+)\ checksum\ (-?[0-9]+)$ ]] \
            || die "round $r: $name: unexpected output '$out' from: $cmd"
        printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$r" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" \
            "${BASH_REMATCH[3]}" >> "$RES"
        echo "round $r/$ROUNDS $name: $out" >&2
    done
done

PC=$(cut -f3,5 "$RES" | sort -u)
[ "$(printf '%s\n' "$PC" | wc -l)" = 1 ] || {
    echo "bench.sh: positions/checksum disagree across runs:" >&2
    awk -F'\t' '{print "  " $1 " round " $2 ": positions " $3 " checksum " $5}' "$RES" >&2
    exit 1
}
P=${PC%%$'\t'*}; C=${PC#*$'\t'}

CPU=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
echo "## NNUE incremental evaluation along games: Stockfish 15.1 vs host"
echo
echo "- command: \`$0 $*\`"
echo "- CPU: $CPU ($(nproc) CPUs online); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- games: \`$GAMES\`; net: \`$NET\`"
echo "- $P evaluations per pass, $REPEATS passes per run, $ROUNDS interleaved rounds; checksum $C (identical in all runs)"
echo
echo "| engine / variant | median evals/s | per round | vs Stockfish (same ISA) |"
echo "|---|---:|---|---:|"
declare -A MED
for run in "${RUNS[@]}"; do
    name=${run%%$'\t'*}
    vals=$(awk -F'\t' -v n="$name" '$1 == n {print $4}' "$RES")
    med=$(printf '%s\n' "$vals" | sort -n | awk '{a[NR]=$1} END {
        if (NR % 2) print a[(NR+1)/2]; else printf "%.0f\n", (a[NR/2]+a[NR/2+1])/2 }')
    MED[$name]=$med
    ratio=""
    case "$name" in
        host-avx2*)       ref=sf-avx2 ;;
        host-avx512vnni*) ref=sf-vnni512 ;;
        host-avx512*)     ref=sf-avx512 ;;
        *)               ref="" ;;
    esac
    if [ -n "$ref" ] && [ -n "${MED[$ref]:-}" ]; then
        ratio="$(awk -v a="$med" -v b="${MED[$ref]}" 'BEGIN {printf "%.2f", a/b}') × ${ref}"
    fi
    case "$name" in
        sf-*)   label="Stockfish 15.1 \`sf151_nnue-${name#sf-}\`" ;;
        host-*-full) label="host \`NNUE_SIMD=${name%-full}\` --full-refresh"; label=${label/NNUE_SIMD=host-/NNUE_SIMD=} ;;
        host-*) label="host \`NNUE_SIMD=${name#host-}\`" ;;
    esac
    printf '| %s | %s | %s | %s |\n' "$label" "$med" "$(printf '%s\n' "$vals" | paste -sd' ')" "$ratio"
done
