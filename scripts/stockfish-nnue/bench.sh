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
#             all rows, as Stockfish 15.1 does) unless FULL_REFRESH=0; "-" skips the host half.
# NET:        nn-ad9b42354671.nnue (the Stockfish 15.1 net, 47,001,499 bytes).
# GAMES:      env, default host/tests/data/stockfish-15.1/games.tsv of this repo.
# SF_HARNESS: env, the harness's name (default sf151_nnue; sf16_nnue for
#             scripts/stockfish-sfnnv16/build-bench.sh's builds of Stockfish of today),
#             SF_LABEL its label (default "Stockfish 15.1").
#
# Both sides print one line "positions P evals_per_second X checksum C"
# (P = evaluations per pass incl. start positions, X = P*REPEATS/s over all
# passes, C = sum of one pass's evaluations). ROUNDS rounds are interleaved: a
# round runs each Stockfish variant followed by the host level of its instruction
# set (with and without the cache), and even rounds run that list backwards, so
# each pair runs side by side at one machine speed and drift cancels. All P and C
# must agree (exit 1 otherwise). Output (stdout): Markdown with the median evals/s
# per engine/variant over the rounds, and for each host run the median (and range)
# of its rounds' ratios to the Stockfish build of the same instruction set in the
# same round (host avx2 / sf avx2, host avx512 / sf avx512, host avx512vnni /
# sf vnni512). Progress goes to stderr.
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
SF_HARNESS=${SF_HARNESS:-sf151_nnue}
SF_LABEL=${SF_LABEL:-Stockfish 15.1}
FULL_REFRESH=${FULL_REFRESH:-1}

die() { echo "bench.sh: $*" >&2; exit 1; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad ROUNDS $ROUNDS"
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || die "bad REPEATS $REPEATS"
[ -r "$NET" ] || die "cannot read net $NET"
[ -r "$GAMES" ] || die "cannot read games $GAMES"
if [ "$HOST_BIN" != "-" ]; then [ -x "$HOST_BIN" ] || die "host binary $HOST_BIN not executable"; fi

# run list: name<TAB>command (executed with bash -c, stdin from GAMES), each host level right
# after the Stockfish build of its instruction set, so that a pair runs at one machine speed
host_level() { case $1 in avx2) echo avx2 ;; avx512) echo avx512 ;; vnni512) echo avx512vnni ;; esac; }
RUNS=()
for v in $SF_VARIANTS; do
    b="$SF_DIR/$SF_HARNESS-$v"
    if [ -x "$b" ]; then RUNS+=("sf-$v"$'\t'"$(printf '%q %q bench %q' "$b" "$NET" "$REPEATS")"); fi
    l=$(host_level "$v")
    if [ "$HOST_BIN" != "-" ] && [ -n "$l" ] && [[ " $HOST_LEVELS " == *" $l "* ]]; then
        FULLS=("")
        if [ "$FULL_REFRESH" != 0 ]; then FULLS+=(" --full-refresh"); fi
        for full in "${FULLS[@]}"; do
            RUNS+=("host-$l${full:+-full}"$'\t'"$(printf 'NNUE_SIMD=%q %q eval --net %q --games %q --repeat %q' \
                "$l" "$HOST_BIN" "$NET" "$GAMES" "$REPEATS")$full")
        done
    fi
done
[[ " ${RUNS[*]} " == *sf-* ]] || die "no $SF_HARNESS-{${SF_VARIANTS// /,}} in $SF_DIR (build-bench.sh)"

RES=$(mktemp); trap 'rm -f "$RES"' EXIT
for ((r = 1; r <= ROUNDS; r++)); do
    # Even rounds run the list backwards: a pair's order alternates, so drift cancels.
    ORDER=("${RUNS[@]}")
    if ((r % 2 == 0)); then
        ORDER=(); for ((k = ${#RUNS[@]} - 1; k >= 0; k--)); do ORDER+=("${RUNS[k]}"); done
    fi
    for run in "${ORDER[@]}"; do
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
echo "## NNUE incremental evaluation along games: $SF_LABEL vs host"
echo
echo "- command: \`$0 $*\`"
echo "- CPU: $CPU ($(nproc) CPUs online); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- games: \`$GAMES\`; net: \`$NET\`"
echo "- $P evaluations per pass, $REPEATS passes per run, $ROUNDS interleaved rounds; checksum $C (identical in all runs)"
echo
echo "| engine / variant | median evals/s | per round | vs Stockfish (same ISA): median of the rounds' ratios (range) |"
echo "|---|---:|---|---:|"
median() { sort -n | awk '{a[NR]=$1} END {
    if (NR % 2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2 }'; }
for run in "${RUNS[@]}"; do
    name=${run%%$'\t'*}
    vals=$(awk -F'\t' -v n="$name" '$1 == n {print $4}' "$RES")
    med=$(printf '%s\n' "$vals" | median | awk '{printf "%.0f", $1}')
    ratio=""
    case "$name" in
        host-avx2*)       ref=sf-avx2 ;;
        host-avx512vnni*) ref=sf-vnni512 ;;
        host-avx512*)     ref=sf-avx512 ;;
        *)               ref="" ;;
    esac
    if [ -n "$ref" ] && grep -q "^$ref"$'\t' "$RES"; then
        # Each round's host rate over the same round's Stockfish rate (run next to it).
        ratios=$(awk -F'\t' -v h="$name" -v s="$ref" '$1 == h {hv[$2] = $4} $1 == s {sv[$2] = $4}
            END {for (r in hv) if (r in sv) printf "%.4f\n", hv[r] / sv[r]}' "$RES")
        range=$(printf '%s\n' "$ratios" | sort -n | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.2f–%.2f", lo, hi}')
        ratio="$(printf '%s\n' "$ratios" | median | awk '{printf "%.2f", $1}') × ${ref} (${range})"
    fi
    case "$name" in
        sf-*)   label="$SF_LABEL \`$SF_HARNESS-${name#sf-}\`" ;;
        host-*-full) label="host \`NNUE_SIMD=${name%-full}\` --full-refresh"; label=${label/NNUE_SIMD=host-/NNUE_SIMD=} ;;
        host-*) label="host \`NNUE_SIMD=${name#host-}\`" ;;
    esac
    printf '| %s | %s | %s | %s |\n' "$label" "$med" "$(printf '%s\n' "$vals" | paste -sd' ')" "$ratio"
done
