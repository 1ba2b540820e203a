#!/usr/bin/env bash
# Host's side of the comparison with Stockfish's own code (BENCHMARKS.md, "Inference beside
# Stockfish's code"): incremental evaluation along games with Stockfish's network format of
# today, on the inputs whose Stockfish figures BENCHMARKS.md records, made from this
# repository alone. Stockfish's code is not built or run: its figures (762dd1da9, measured
# 2026-11-30) are printed beside host's.
#
#   bash scripts/eval-bench.sh count [OUT]                    # instructions per evaluation
#   bash scripts/eval-bench.sh speed [OUT] [ROUNDS] [REPEATS] # evaluations per second
#
# count: valgrind's cachegrind counts host's instructions for 1 and for 3 passes over the games
#   (AVX2 kernels, the level both sides were counted at); (3 passes − 1 pass) / (2 × evaluations
#   per pass) is the work of one evaluation, start-up left out. Counts repeat on any x86-64
#   machine, so they compare with Stockfish's recorded counts directly.
# speed: `host eval --games --repeat REPEATS` for each input at AVX2 and, where the CPU has it,
#   AVX-512 VNNI, in ROUNDS interleaved rounds (default 5 of 20 passes), medians. Rates depend
#   on the machine: Stockfish's recorded ratios hold for the Intel Xeon BENCHMARKS.md names.
#   Each run is pinned to core CORE (default 1).
#
# OUT (default /tmp/eval-bench) keeps the inputs between runs: the three seeded random networks
# (`host net reference`, SHA-256 in host/tests/data/stockfish-sfnnv16/networks.tsv) and the games
# (scripts/vectors/, SHA-256 checked below). Real games need Debian's Stockfish
# (/usr/games/stockfish) to play them once. Progress on stderr, a Markdown table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:?usage: eval-bench.sh count|speed [OUT] [ROUNDS] [REPEATS]}
OUT=${2:-/tmp/eval-bench}
ROUNDS=${3:-5}
REPEATS=${4:-20}
case $MODE in count | speed) ;; *) echo "eval-bench.sh: unknown mode '$MODE' (count or speed)" >&2; exit 2 ;; esac
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $REPEATS =~ ^[1-9][0-9]*$ ]] || { echo "eval-bench.sh: ROUNDS and REPEATS are positive integers" >&2; exit 2; }
mkdir -p "$OUT"
cargo build --release --locked -p host -p nnue-plugin-king -p nnue-plugin-threats >&2
HOST=$PWD/target/release/host
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3
"$PY" -c 'import chess' 2>/dev/null || { echo "eval-bench.sh: python-chess is needed (bash scripts/test.sh installs it into .venv)" >&2; exit 1; }

# The inputs: name, games file, its SHA-256 (- for the vectors' own games), network seed;
# Stockfish 762dd1da9's instructions per evaluation (its AVX2 build with its own Makefile's
# flags, cachegrind, the same formula), and host / Stockfish rates at AVX2 and at AVX-512 VNNI on
# the Intel Xeon (medians of 24 interleaved rounds' ratios; - where not measured).
INPUTS=(
    "random playouts|games-1.tsv|-|1|11985|1.16|1.08"
    "random playouts, other games|games-2.tsv|-|1|12039|-|-"
    "capture-rich playouts|captures.tsv|121df93172aac7e003a929c9b92bdc2a36d253486875a4fee9b9813361dea3ec|2|11502|1.16|1.08"
    "real games|selfplay.tsv|90cdb352cb05a689a8e3631dfdc79a3f9e990ca05a343239dc6a080a664381b1|3|12344|1.11|1.07"
    "400-ply games|long.tsv|90aa7d2c6e5663b4ce073644a50433f8e5b071e8549e00f8a167b0392477a06b|1|11236|1.19|1.08"
)

make_inputs() {
    local seed scale
    while read -r seed scale _; do
        [ -s "$OUT/random-$seed.nnue" ] || "$HOST" net reference --seed "$seed" --scale "$scale" --out "$OUT/random-$seed.nnue"
    done < <(grep -v '^#' host/tests/data/stockfish-sfnnv16/networks.tsv)
    grep -v '^#' host/tests/data/stockfish-sfnnv16/games-1.tsv | cut -f1,2 > "$OUT/games-1.tsv"
    grep -v '^#' host/tests/data/stockfish-sfnnv16/games-2.tsv | cut -f1,2 > "$OUT/games-2.tsv"
    [ -s "$OUT/captures.tsv" ] || "$PY" scripts/vectors/bench_games.py captures 184 46 ../shared/data/uho_4060_v2.epd > "$OUT/captures.tsv"
    [ -s "$OUT/selfplay.tsv" ] || "$PY" scripts/vectors/bench_games.py selfplay 40 46 ../shared/data/noob_3moves.epd > "$OUT/selfplay.tsv"
    [ -s "$OUT/long.tsv" ] || "$PY" scripts/vectors/long_games.py 8 400 400 > "$OUT/long.tsv"
    local input name games sha
    for input in "${INPUTS[@]}"; do
        IFS='|' read -r name games sha _ <<< "$input"
        if [ "$sha" != - ] && [ "$(sha256sum "$OUT/$games" | cut -d' ' -f1)" != "$sha" ]; then
            echo "eval-bench.sh: $OUT/$games is not the recorded input ($name): remove it to make it again" >&2
            exit 1
        fi
    done
}

# "positions P evals_per_second X checksum C" of one run.
eval_line() {
    taskset -c "${CORE:-1}" "$HOST" eval --simd "$1" --net "$OUT/random-$2.nnue" --games "$OUT/$3" --repeat "$4"
}

count() {
    echo "## Instructions per evaluation (cachegrind, AVX2), host beside Stockfish 762dd1da9"
    echo
    echo "- commit $(git rev-parse --short HEAD), $(date -u '+%Y-%m-%d'), $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
    echo
    echo "| games | network | host | Stockfish (recorded) | host / Stockfish |"
    echo "| --- | --- | ---: | ---: | ---: |"
    local input name games seed sf_ins evals total1 total3 per
    for input in "${INPUTS[@]}"; do
        IFS='|' read -r name games _ seed sf_ins _ <<< "$input"
        echo "counting $name with random-$seed.nnue" >&2
        evals=$(eval_line avx2 "$seed" "$games" 1 | awk '{print $2}')
        total1=$(instructions "$seed" "$games" 1)
        total3=$(instructions "$seed" "$games" 3)
        per=$(( (total3 - total1) / (2 * evals) ))
        printf '| %s | `random-%s.nnue` | %s | %s | %s |\n' "$name" "$seed" "$per" "$sf_ins" \
            "$(awk -v a="$per" -v b="$sf_ins" 'BEGIN {printf "%.3f", a / b}')"
    done
}

# The instructions of one run of `host eval --repeat PASSES` under cachegrind.
instructions() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$HOST" eval --simd avx2 --net "$OUT/random-$1.nnue" --games "$OUT/$2" --repeat "$3" 2>&1 >/dev/null |
        sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}

speed() {
    local levels=(avx2)
    grep -q avx512_vnni /proc/cpuinfo && levels+=(avx512vnni)
    local results
    results=$(mktemp)
    local r input name games seed level line
    for ((r = 1; r <= ROUNDS; r++)); do
        for input in "${INPUTS[@]}"; do
            IFS='|' read -r name games _ seed _ <<< "$input"
            for level in "${levels[@]}"; do
                line=$(eval_line "$level" "$seed" "$games" "$REPEATS")
                echo "round $r/$ROUNDS, $name, $level: $line" >&2
                printf '%s\t%s\t%s\n' "$name" "$level" "$(echo "$line" | awk '{print $4}')" >> "$results"
            done
        done
    done
    echo "## Evaluations per second along games, host (median of $ROUNDS rounds of $REPEATS passes)"
    echo
    echo "- commit $(git rev-parse --short HEAD), $(date -u '+%Y-%m-%d'), $(lscpu | sed -n 's/^Model name: *//p' | head -1), one core"
    echo "- Stockfish's rates are not run here: on the Intel Xeon of BENCHMARKS.md host ran at the recorded ratio of them"
    echo
    echo "| games | network | level | host evals/s | recorded host / Stockfish there |"
    echo "| --- | --- | --- | ---: | ---: |"
    local ratio_avx2 ratio_vnni median
    for input in "${INPUTS[@]}"; do
        IFS='|' read -r name games _ seed _ ratio_avx2 ratio_vnni <<< "$input"
        for level in "${levels[@]}"; do
            median=$(awk -F'\t' -v n="$name" -v l="$level" '$1 == n && $2 == l {print $3}' "$results" |
                sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}')
            printf '| %s | `random-%s.nnue` | %s | %s | %s |\n' "$name" "$seed" "$level" "$median" \
                "$([ "$level" = avx2 ] && echo "$ratio_avx2" || echo "$ratio_vnni")"
        done
    done
    rm -f "$results"
}

make_inputs
"$MODE"
