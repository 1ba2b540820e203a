#!/usr/bin/env bash
# Plays host against the thesis's own engine (github.com/mlomb/cs-master-thesis, crate `engine`,
# built separately: it is not part of this repository) with the same network, at a fixed time
# per move from UHO openings, and rates the result (thesis engine = 0). Results of a run are in
# BENCHMARKS.md.
#
#   bash scripts/thesis-engine-match.sh THESIS_ENGINE [ROUNDS] [MOVETIME_MS] [NET] [SEED]
#   # defaults: 150 pairs, 100 ms/move, ../shared/nets/thesis/best.nn, seed 1
#
# The thesis engine takes its network as `--nn FILE`, searches single-threaded with a 128 MB
# table (host plays with its defaults: Threads 1, Hash 128) and cannot be interrupted, so the
# time margin is generous (the thesis used 2 s).
set -euo pipefail
cd "$(dirname "$0")/.."
thesis="$(realpath "${1:?usage: $0 THESIS_ENGINE [ROUNDS] [MOVETIME_MS] [NET] [SEED]}")"
rounds="${2:-150}"
movetime="${3:-100}"
net="$(realpath "${4:-../shared/nets/thesis/best.nn}")"
seed="${5:-1}"
cargo build --release -p host -p arena --locked
source scripts/lib/uho-match.sh
uho_match "runs/thesis-engine-$(basename "$net" .nn)-${movetime}ms-seed$seed" thesis \
    "host vs thesis engine, $(basename "$net"), ${movetime} ms/move" "$seed" "$rounds" \
    --engine "name=host,net=$net" --engine "name=thesis,cmd=$thesis,arg=--nn,arg=$net" \
    --movetime "$movetime" --timemargin 2000
