#!/bin/sh
# Build optimised SIMD variants of the SFNNv16 harness for the speed benchmark, with exactly the
# compiler flags Stockfish's own Makefile uses (`make -n build ARCH=x86-64-<variant> COMP=gcc`
# at 762dd1da9: -O3 -funroll-loops, the ISA's -D/-m flags, LTO; no PGO).
#   usage: scripts/stockfish-sfnnv16/build-bench.sh SF_TREE OUTDIR [VARIANT...]
# Writes OUTDIR/sf16_nnue-<variant> for each variant (default: avx2 bmi2 avx512 vnni512).
# The scalar build.sh (used for the reference vectors) is unchanged.
set -eu
TREE="$1"; OUT="$2"; shift 2
VARIANTS=${*:-avx2 bmi2 avx512 vnni512}
SRC="$TREE/src"
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
for v in $VARIANTS; do
    # The Makefile's compile line for one source, less its -c -o and file names.
    FLAGS=$(cd "$SRC" && make -n build ARCH="x86-64-$v" COMP=gcc 2>/dev/null |
        grep -m1 -- ' -c -o attacks.o attacks.cpp' | sed 's/^g++ //; s/ -c -o attacks.o attacks.cpp$//')
    [ -n "$FLAGS" ] || { echo "build-bench.sh: no compile line for ARCH=x86-64-$v" >&2; exit 1; }
    echo "sf16_nnue-$v: build.sh with $FLAGS" >&2
    # build.sh's own -O2 comes before these flags, so the Makefile's -O3 wins.
    # shellcheck disable=SC2086
    "$HERE/build.sh" "$TREE" "$OUT/sf16_nnue-$v" $FLAGS
done
