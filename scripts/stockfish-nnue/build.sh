#!/bin/sh
# Build the Stockfish 15.1 NNUE reference harness (sf151_nnue.cpp).
#   usage: scripts/stockfish-nnue/build.sh SF151_TREE OUT_BINARY [extra g++ flags]
# SF151_TREE: a checkout of official-stockfish/Stockfish at tag sf_15.1
#   (commit 758f9c9350abee36a5865ec701560db8ea62004d), unpatched.
# Default is a portable scalar build (no SIMD, no popcnt); Stockfish's SIMD
# paths give byte-identical output (checked with "-DIS_64BIT -DUSE_POPCNT -DUSE_PEXT
# -DUSE_AVX2 -DUSE_SSE41 -DUSE_SSSE3 -DUSE_SSE2 -mavx2 -mbmi2 -mpopcnt -msse4.1 -mssse3 -msse2").
set -eu
SRC="$1/src"; OUT="$2"; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
FILES=$(cd "$SRC" && ls *.cpp syzygy/*.cpp nnue/*.cpp nnue/features/*.cpp | grep -v '^main.cpp$' | sed "s|^|$SRC/|")
g++ -std=c++17 -O2 -DNDEBUG -DNNUE_EMBEDDING_OFF -I"$SRC" "$@" \
    "$HERE/sf151_nnue.cpp" $FILES -lpthread -o "$OUT"
