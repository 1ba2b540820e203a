#!/bin/sh
# Build optimised SIMD variants of the Stockfish 15.1 NNUE harness for bench.sh.
#   usage: scripts/stockfish-nnue/build-bench.sh SF151_TREE OUTDIR [ARCH...]
# SF151_TREE: checkout of official-stockfish/Stockfish at tag sf_15.1
#   (commit 758f9c9350abee36a5865ec701560db8ea62004d), unpatched.
# Writes OUTDIR/sf151_nnue-<variant> for each variant (default: avx2 bmi2 avx512 vnni512).
#
# Flags = what `make config-sanity ARCH=x86-64-<variant> COMP=gcc` prints for
# CXXFLAGS in sf_15.1 src/Makefile (gcc, optimize=yes, debug=no; no PGO):
#   common: section 3.1 (-Wall -Wcast-qual -fno-exceptions -std=c++17 -pedantic
#           -Wextra -Wshadow -m64), -DUSE_PTHREADS, 3.2.1 -DNDEBUG, 3.3 -O3,
#           3.4ff -DIS_64BIT ... per ARCH (section 2.2 sets popcnt/avx2/pext/...),
#           3.8 LTO for gcc: -flto -flto-partition=one.
#   x86-64-avx2:    popcnt sse* avx2            (no pext)
#   x86-64-bmi2:    x86-64-avx2 + -DUSE_PEXT -mbmi2
#   x86-64-avx512:  x86-64-bmi2 + -DUSE_AVX512 -mavx512f -mavx512bw
#   x86-64-vnni512: x86-64-avx512 + -DUSE_VNNI -mavx512vnni -mavx512dq -mavx512vl
# plus -DNNUE_EMBEDDING_OFF (the harness loads the net from a file, as build.sh).
# The default build.sh (portable scalar, used for the reference vectors) is unchanged.
set -eu
TREE="$1"; OUT="$2"; shift 2
VARIANTS=${*:-avx2 bmi2 avx512 vnni512}
SRC="$TREE/src"
HERE=$(cd "$(dirname "$0")" && pwd)
FILES=$(cd "$SRC" && ls *.cpp syzygy/*.cpp nnue/*.cpp nnue/features/*.cpp | grep -v '^main.cpp$' | sed "s|^|$SRC/|")
mkdir -p "$OUT"

COMMON="-Wall -Wcast-qual -fno-exceptions -std=c++17 -pedantic -Wextra -Wshadow -m64 -DUSE_PTHREADS -DNDEBUG -O3 -DIS_64BIT"
AVX2="-msse -msse3 -mpopcnt -DUSE_POPCNT -DUSE_AVX2 -mavx2 -mbmi"
SSE="-DUSE_SSE41 -msse4.1 -DUSE_SSSE3 -mssse3 -DUSE_SSE2 -msse2"
PEXT="-DUSE_PEXT -mbmi2"
AVX512="-DUSE_AVX512 -mavx512f -mavx512bw"
VNNI512="-DUSE_VNNI -mavx512vnni -mavx512dq -mavx512vl"
LTO="-flto -flto-partition=one"

for v in $VARIANTS; do
    case "$v" in
        avx2)    ARCHF="$AVX2 $SSE" ;;
        bmi2)    ARCHF="$AVX2 $SSE $PEXT" ;;
        avx512)  ARCHF="$AVX2 $AVX512 $SSE $PEXT" ;;
        vnni512) ARCHF="$AVX2 $AVX512 $VNNI512 $SSE $PEXT" ;;
        *) echo "unknown variant $v (avx2 bmi2 avx512 vnni512)" >&2; exit 1 ;;
    esac
    FLAGS="$COMMON $ARCHF $LTO"
    echo "sf151_nnue-$v: g++ $FLAGS -DNNUE_EMBEDDING_OFF" >&2
    # shellcheck disable=SC2086
    g++ $FLAGS -DNNUE_EMBEDDING_OFF -I"$SRC" \
        "$HERE/sf151_nnue.cpp" $FILES -lpthread -o "$OUT/sf151_nnue-$v"
done
