"""Compares a Stockfish harness's `positions` output with `host eval --stacks` on the same FENs.

    usage: compare_stacks.py STOCKFISH_TSV HOST_TSV

Stockfish (sf151_nnue / sf16_nnue `positions`): FEN, used stack, the 8 stacks' PSQT sums, their
positional sums, the evaluation. host: FEN, evaluation, used stack, PSQT sums, positional sums.
Prints how many positions differ in any of them (the first five in full) and exits 1 if any do.
Used by scripts/stockfish-nnue/check-trained.sh and scripts/stockfish-sfnnv16/check-trained.sh.
"""
import sys

sf = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
host = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip()]
assert len(sf) == len(host) > 0, (len(sf), len(host))
bad, buckets = 0, set()
for s, h in zip(sf, host):
    assert s[0] == h[0]
    if (s[1], s[2], s[3], s[4]) != (h[2], h[3], h[4], h[1]):
        bad += 1
        if bad <= 5:
            print("differs:", s, h)
    buckets.add(int(s[1]))
values = sorted(int(s[4]) for s in sf)
print(f"{len(sf)} unseen positions, stacks used {sorted(buckets)}, evaluations "
      f"{values[0]} to {values[-1]}: {bad} differ in any of the 8 stacks' PSQT and positional "
      f"sums or the evaluation")
sys.exit(1 if bad else 0)
