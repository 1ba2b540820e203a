#!/usr/bin/env python3
"""Summarize host/tests/data/stockfish-15.1/{positions,games}.tsv (counts for the README).

Usage: python nnue_stats.py POSITIONS_TSV GAMES_TSV   (needs python-chess 1.11.2)
Also checks the TSVs' internal consistency (used bucket = (pieces-1)//4,
evaluate = (psqt+positional)/16 with C++ truncation, one eval per ply + 1).
"""
import sys
from collections import Counter

import chess


def cdiv(a, b):  # C++ integer division (truncation toward zero)
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def rows(path):
    with open(path) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                yield line.split("\t")


def side(sq):
    return "a-d" if chess.square_file(sq) <= 3 else "e-h"


def positions(path):
    per_bucket, per_count, tags = Counter(), Counter(), Counter()
    for fen, used, psqt, pos, ev in rows(path):
        b = chess.Board(fen)
        n = chess.popcount(b.occupied)
        used, ev = int(used), int(ev)
        psqt, pos = [int(x) for x in psqt.split(",")], [int(x) for x in pos.split(",")]
        assert used == (n - 1) // 4 and len(psqt) == len(pos) == 8, fen
        assert ev == cdiv(psqt[used] + pos[used], 16), fen
        per_bucket[used] += 1
        per_count[n] += 1
        tags["black to move"] += not b.turn
        tags["side to move in check"] += b.is_check()
        tags["castling rights"] += bool(b.castling_rights)
        tags["legal en passant"] += b.has_legal_en_passant()
        tags[f"wK {side(b.king(chess.WHITE))}, bK {side(b.king(chess.BLACK))}"] += 1
        tags["extra promoted piece (2+ Q, 3+ R/B/N)"] += any(
            len(b.pieces(chess.QUEEN, c)) > 1 or any(len(b.pieces(p, c)) > 2 for p in (chess.KNIGHT, chess.BISHOP, chess.ROOK))
            for c in (chess.WHITE, chess.BLACK))
        tags["2+ queens on one side"] += any(len(b.pieces(chess.QUEEN, c)) > 1 for c in (True, False))
    total = sum(per_bucket.values())
    print(f"positions.tsv: {total} positions")
    print("  per bucket: " + ", ".join(f"{k}: {per_bucket[k]}" for k in range(8)))
    print("  per piece count: " + ", ".join(f"{k}: {per_count[k]}" for k in sorted(per_count)))
    for k, v in sorted(tags.items()):
        print(f"  {k}: {v}")


def games(path):
    kinds, buckets = Counter(), Counter()
    n_games = plies = 0
    lens = []
    for start, moves, evals in rows(path):
        b = chess.Board(start)
        moves = moves.split()
        evals = [int(x) for x in evals.split(",")]
        assert len(evals) == len(moves) + 1, start
        n_games += 1
        plies += len(moves)
        lens.append(len(moves))
        buckets[(chess.popcount(b.occupied) - 1) // 4] += 1
        for u in moves:
            m = chess.Move.from_uci(u)
            assert m in b.legal_moves, (start, u)
            col = "white" if b.turn else "black"
            if b.is_castling(m):
                kinds[f"castling {col} {'O-O' if chess.square_file(m.to_square) > 4 else 'O-O-O'}"] += 1
            elif b.piece_type_at(m.from_square) == chess.KING:
                kinds["king move (not castling)"] += 1
                if (chess.square_file(m.from_square) <= 3) != (chess.square_file(m.to_square) <= 3):
                    kinds["king move crossing the d/e file line"] += 1
            if b.is_en_passant(m):
                kinds["en passant"] += 1
            if b.is_capture(m):
                kinds["capture (incl. en passant)"] += 1
            if m.promotion:
                kinds[f"promotion to {chess.piece_name(m.promotion)}"] += 1
                if b.is_capture(m):
                    kinds["capture-promotion"] += 1
            if b.gives_check(m):
                kinds["check"] += 1
            b.push(m)
            buckets[(chess.popcount(b.occupied) - 1) // 4] += 1
    print(f"games.tsv: {n_games} games, {plies} plies (min {min(lens)}, max {max(lens)}), "
          f"{plies + n_games} evaluations")
    print("  evaluations per bucket: " + ", ".join(f"{k}: {buckets[k]}" for k in range(8)))
    for k, v in sorted(kinds.items()):
        print(f"  {k}: {v}")


if __name__ == "__main__":
    positions(sys.argv[1])
    games(sys.argv[2])
