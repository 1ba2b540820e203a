#!/usr/bin/env python3
"""Cross-check positions.tsv against a stock Stockfish 15.1 binary's `eval` output.

For N positions (not in check, spread over all buckets) runs
`position fen ...` + `eval` and compares, for all 8 buckets, the
"NNUE network contributions" cells (Material = psqt_b/16, Positional =
positional_b/16, Total = their sum; printed as sign + "%6.2f" of |V|/361, side
to move), the "<-- this bucket is used" row, the "(White|Black to move)" header
and the "NNUE evaluation" line (White side, "%+.2f" of evaluate/361).

Usage: python crosscheck.py POSITIONS_TSV [STOCKFISH=/usr/games/stockfish] [N=48]
(the binary must use nn-ad9b42354671.nnue, e.g. Debian's stockfish 15.1-4). Exit 1 on mismatch.
"""
import re
import subprocess
import sys

import chess


def cdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def cell(v):
    return ("-" if v < 0 else "+" if v > 0 else " ") + "%6.2f" % (abs(v) / 361)


def main():
    path = sys.argv[1]
    exe = sys.argv[2] if len(sys.argv) > 2 else "/usr/games/stockfish"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 48
    rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip() and not l.startswith("#")]
    rows = [r for r in rows if not chess.Board(r[0]).is_check()]
    per_bucket = -(-n // 8)
    pick = []
    for b in range(8):
        rb = [r for r in rows if int(r[1]) == b]
        pick += rb[:: max(1, len(rb) // per_bucket)][:per_bucket]
    bad = 0
    for fen, used, psqt, pos, ev in pick:
        used, ev = int(used), int(ev)
        psqt = [int(x) for x in psqt.split(",")]
        pos = [int(x) for x in pos.split(",")]
        out = subprocess.run([exe], input=f"uci\nposition fen {fen}\neval\nquit\n",
                             capture_output=True, text=True, check=True).stdout
        stm = "White" if chess.Board(fen).turn else "Black"
        want_rows = []
        for b in range(8):
            vp, vl = cdiv(psqt[b], 16), cdiv(pos[b], 16)
            want_rows.append("|  %d         |  %s   |  %s   |  %s   |%s" % (
                b, cell(vp), cell(vl), cell(vp + vl), " <-- this bucket is used" if b == used else ""))
        got_rows = [l for l in out.splitlines() if re.match(r"\|  \d         \|", l)]
        white_ev = ev if stm == "White" else -ev
        want_nnue = "NNUE evaluation        %+.2f (white side)" % (white_ev / 361)
        got_nnue = [l for l in out.splitlines() if l.startswith("NNUE evaluation ")]
        ok = (got_rows == want_rows and got_nnue == [want_nnue]
              and f"NNUE network contributions ({stm} to move)" in out)
        if not ok:
            bad += 1
            print("MISMATCH", fen, "\n  want", want_rows, want_nnue, "\n  got ", got_rows, got_nnue)
    print(f"crosscheck: {len(pick) - bad}/{len(pick)} positions agree with {exe} "
          f"(8 bucket rows x 3 cells + used marker + NNUE evaluation each)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
