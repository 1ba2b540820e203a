#!/usr/bin/env bash
# Nodes per second of any UCI engine, measured from the outside the same way for every engine:
# `go movetime MS` on each position in a fresh process, nodes and time of the last completed
# iteration's `info depth` line (for engines that print no nps). The positions are the start
# position and three UHO positions, or the FENs of the file FENS (one per line, e.g. `host bench
# --list`; positions with no legal move are skipped). Prints one line per position, the mean of
# the per-position nps, and the total nodes ÷ total time (how `host bench` counts).
#
#   [EVALFILE=NET] [MOVETIME=5000] [FENS=FILE] bash scripts/uci-nps.sh ENGINE [ARGS...]
#   e.g. EVALFILE=../shared/nets/thesis/all.nn bash scripts/uci-nps.sh target/release/host
#        bash scripts/uci-nps.sh /path/to/thesis/engine --nn ../shared/nets/thesis/all.nn
#        target/release/host bench --list > bench.fens
#        FENS=bench.fens MOVETIME=1000 bash scripts/uci-nps.sh /path/to/thesis/engine --nn NET
set -euo pipefail
movetime="${MOVETIME:-5000}"
positions=()
labels=()
if [ -n "${FENS:-}" ]; then
    line_no=0
    while IFS= read -r fen || [ -n "$fen" ]; do
        line_no=$((line_no + 1))
        [ -z "${fen// /}" ] && continue
        positions+=("fen $fen")
        labels+=("$FENS:$line_no")
    done < "$FENS"
else
    positions=(
        "startpos"
        "fen r1bq1rk1/ppp2ppp/5n2/2bp4/2NPP3/2P5/PP3PPP/RNBQK2R w KQ d6 0 1"
        "fen rn1qk1nr/1b1pbppp/pp2p3/8/3NP3/1N1B4/PPP2PPP/R1BQ1RK1 w kq - 0 1"
        "fen rnbq1rk1/pp3ppp/3p1n2/b1pPp3/P3P3/2N2P1N/1PPB2PP/R2QKB1R w KQ - 0 1"
    )
    labels=(startpos uho#1 uho#1000 uho#5000)
fi
total=0
measured=0
sum_nodes=0
sum_ms=0
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
    } | "$@" 2>/dev/null || true)
    last=$(echo "$out" | grep '^info depth' | grep ' nodes ' | grep ' time ' | tail -1 || true)
    if [ -z "$last" ]; then
        # No completed iteration: a position without legal moves (or an engine that failed).
        echo "${labels[$i]} skipped: no info line with nodes and time"
        continue
    fi
    nodes=$(echo "$last" | sed -E 's/.* nodes ([0-9]+).*/\1/')
    ms=$(echo "$last" | sed -E 's/.* time ([0-9]+).*/\1/')
    depth=$(echo "$last" | sed -E 's/^info depth ([0-9]+).*/\1/')
    nps=$((nodes * 1000 / (ms > 0 ? ms : 1)))
    total=$((total + nps))
    measured=$((measured + 1))
    sum_nodes=$((sum_nodes + nodes))
    sum_ms=$((sum_ms + ms))
    echo "${labels[$i]} depth=$depth nodes=$nodes time_ms=$ms nps=$nps"
done
if [ "$measured" -eq 0 ]; then
    echo "no position was measured" >&2
    exit 1
fi
echo "total nodes=$sum_nodes time_ms=$sum_ms nps=$((sum_nodes * 1000 / (sum_ms > 0 ? sum_ms : 1)))"
echo "mean nps=$((total / measured))"
