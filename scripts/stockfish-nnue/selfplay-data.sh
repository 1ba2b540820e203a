#!/bin/sh
# The check-trained scripts' data: host self-play at depth 3 (seeded; about a minute on 2
# cores), 60,000 training and 5,000 validation positions, kept in WORKDIR across runs.
#   usage: scripts/stockfish-nnue/selfplay-data.sh TRAINER_BINARY WORKDIR
set -eu
TRAINER="$1"; WORK="$2"
mkdir -p "$WORK"
for part in train:1:60000 val:2:5000; do
    name=${part%%:*}; rest=${part#*:}; seed=${rest%%:*}; n=${rest#*:}
    [ -f "$WORK/$name.binpack" ] || "$TRAINER" gensfen --out "$WORK/$name.binpack" \
        --positions "$n" --depth 3 --seed "$seed" --threads 2 --quiet
done
