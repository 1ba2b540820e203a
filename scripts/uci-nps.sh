#!/usr/bin/env bash
# Nodes per second of any UCI engine, measured from the outside the same way for every engine:
# `go movetime MS` from the start position and three UHO positions, each in a fresh process,
# nodes ÷ time of the last completed iteration's `info depth` line (for engines that print no
# nps). Prints one line per position and the mean.
#
#   [EVALFILE=NET] [MOVETIME=5000] bash scripts/uci-nps.sh ENGINE [ARGS...]
#   e.g. EVALFILE=../shared/nets/thesis/all.nn bash scripts/uci-nps.sh target/release/host
#        bash scripts/uci-nps.sh /path/to/thesis/engine --nn ../shared/nets/thesis/all.nn
set -euo pipefail
movetime="${MOVETIME:-5000}"
positions=(
    "startpos"
    "fen r1bq1rk1/ppp2ppp/5n2/2bp4/2NPP3/2P5/PP3PPP/RNBQK2R w KQ d6 0 1"
    "fen rn1qk1nr/1b1pbppp/pp2p3/8/3NP3/1N1B4/PPP2PPP/R1BQ1RK1 w kq - 0 1"
    "fen rnbq1rk1/pp3ppp/3p1n2/b1pPp3/P3P3/2N2P1N/1PPB2PP/R2QKB1R w KQ - 0 1"
)
labels=(startpos uho#1 uho#1000 uho#5000)
total=0
for i in "${!positions[@]}"; do
    out=$({
        echo uci
        if [ -n "${EVALFILE:-}" ]; then echo "setoption name EvalFile value $(realpath "$EVALFILE")"; fi
        echo isready
        echo ucinewgame
        echo "position ${positions[$i]}"
        echo "go movetime $movetime"
        sleep $((movetime / 1000 + 2))
        echo quit
    } | "$@")
    last=$(echo "$out" | grep '^info depth' | tail -1)
    nodes=$(echo "$last" | sed -E 's/.* nodes ([0-9]+).*/\1/')
    ms=$(echo "$last" | sed -E 's/.* time ([0-9]+).*/\1/')
    depth=$(echo "$last" | sed -E 's/^info depth ([0-9]+).*/\1/')
    nps=$((nodes * 1000 / (ms > 0 ? ms : 1)))
    total=$((total + nps))
    echo "${labels[$i]} depth=$depth nodes=$nodes time_ms=$ms nps=$nps"
done
echo "mean nps=$((total / ${#positions[@]}))"
