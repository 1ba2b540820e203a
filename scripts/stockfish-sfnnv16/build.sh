#!/bin/sh
# Build the SFNNv16 reference harness (sf16_nnue.cpp) against Stockfish's own sources.
#   usage: scripts/stockfish-sfnnv16/build.sh SF_TREE OUT_BINARY [extra g++ flags]
# SF_TREE: official-stockfish/Stockfish at commit 762dd1da9a5db458180b2c5db6c53dc40ec61e1a,
#   unpatched (e.g. `git archive 762dd1da9 | tar -x -C SF_TREE`).
# Default: a portable scalar build (no SIMD, no popcnt). For the speed benchmark pass
# Stockfish's own flags, e.g. "-DIS_64BIT -DUSE_POPCNT -DUSE_PEXT -DUSE_AVX2 -DUSE_SSE41
# -DUSE_SSSE3 -DUSE_SSE2 -mavx2 -mbmi2 -mpopcnt -msse4.1 -mssse3 -msse2 -O3 -flto".
set -eu
SRC="$1/src"; OUT="$2"; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
# The Makefile's SRCS, without main.cpp.
FILES="attacks benchmark bitboard evaluate misc movegen movepick position search thread timeman
  tt uci ucioption tune syzygy/tbprobe nnue/nnue_accumulator nnue/nnue_misc nnue/network
  nnue/features/half_ka_v2_hm nnue/features/full_threats nnue/features/pp_3wide engine score memory"
SOURCES=""
for f in $FILES; do SOURCES="$SOURCES $SRC/$f.cpp"; done
g++ -std=c++17 -O2 -DNDEBUG -DNNUE_EMBEDDING_OFF -I"$SRC" "$@" \
    "$HERE/sf16_nnue.cpp" $SOURCES -lpthread -o "$OUT"
