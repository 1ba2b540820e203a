#!/usr/bin/env bash
# Fills `.dev-carry/` at the repository's root with everything `scripts/gpu/ladder.toml` reads
# on a GPU machine that has no Rust, no Stockfish and no `../shared`: the stripped trainer, host
# and feature plugins, Stockfish 15.1's network (exported from Debian's `stockfish`, gzipped:
# the labeller), the thesis networks that play and rate, the opening books, and the held-out
# set (the budget experiment's 300 validation games of Stockfish at 5000 nodes, generated here
# by `trainer run experiments.toml --stage data:budget-sf5000` if it is not yet). About 45 MB.
#
#   bash scripts/gpu/ladder-carry.sh            # here, after scripts/test.sh or scripts/run.sh
#   then, on the GPU machine, from the repository's root (the device tool: carry .dev-carry):
#   bash scripts/gpu/ladder.sh .dev-carry OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
C=.dev-carry
mkdir -p "$C"
bash scripts/setup-torch.sh
cargo build --release --locked -p trainer -p host -p nnue-plugin-all -p nnue-plugin-king -p nnue-plugin-threats -p nnue-plugin-axes
strip -o "$C/trainer" target/release/trainer
strip -o "$C/host" target/release/host
for p in all axes king threats; do
    strip -o "$C/libnnue_plugin_$p.so" "target/release/libnnue_plugin_$p.so"
done
if [ ! -s "$C/label-net.nnue.gz" ]; then
    command -v stockfish >/dev/null || [ -x /usr/games/stockfish ] || sudo apt-get install -y stockfish
    printf 'uci\nexport_net %s\nquit\n' "$PWD/$C/label-net.nnue" | /usr/games/stockfish >/dev/null
    gzip -9 -f "$C/label-net.nnue"
fi
cp ../shared/nets/thesis/all.nn ../shared/nets/thesis/h+v+d1+d2.nn "$C/"
cp ../shared/data/uho_4060_v2.epd ../shared/data/noob_3moves.epd "$C/"
# The held-out set, as experiments.toml's ladder and budget experiments use it.
target/release/trainer run experiments.toml --stage data:budget-sf5000 --no-progress
cp runs/data/budget-sf5000-*/val.binpack "$C/sf5000-val.binpack"
du -sh "$C"
