#!/usr/bin/env python3
"""Generate host/tests/data/stockfish-features/positions.fen (deterministic).

Hand-picked positions plus positions sampled from seeded random legal playouts
(python-chess), stratified so that every king-side combination (white king on
files a-d / e-h x black king on files a-d / e-h) appears many times and special
cases (legal en passant, pawns on 7th/2nd rank, extra promoted pieces, black to
move, castling rights, sparse endgames, full middlegames) are covered.

Usage: python feature_positions.py [OUT]   (needs python-chess 1.11.2)
"""
import random
import sys

import chess

SEED = 20240611
PLAYOUT_PLIES = 400
KEEP_EVERY = 7

# Hand-picked FENs (or (start FEN, SAN moves) for positions with a legal ep square).
HAND = [
    chess.STARTING_FEN,
    # legal en passant, white to capture (1.e4 d5 2.e5 f5 -> exf6 e.p.)
    (chess.STARTING_FEN, "e4 d5 e5 f5"),
    # legal en passant, black to capture (1.Nf3 e5 2.Nc3 e4 3.d4 -> exd3 e.p.)
    (chess.STARTING_FEN, "Nf3 e5 Nc3 e4 d4"),
    # legal en passant on the a/h edge
    (chess.STARTING_FEN, "h4 a6 h5 g5"),
    # Kiwipete (perft position 2)
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    # perft position 3 (sparse, kings on a- and h-files)
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    # perft position 4 (pawns on 7th/2nd rank, promotion captures possible)
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    # perft position 5
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    # partial castling rights, black to move
    "r3k2r/pppq1ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPPQ1PPP/R3K2R b Kq - 4 9",
    # both castled long (kings on c-files), full middlegame
    "2kr1bnr/pppq1ppp/2n1b3/3pp3/3PP3/2N1B3/PPPQ1PPP/2KR1BNR w - - 0 8",
    # opposite-side castling: white short, black long
    "2kr3r/ppp2ppp/2nqbn2/3pp3/3PP3/2NQBN2/PPP2PPP/R4RK1 b - - 0 11",
    # two queens each (promoted), kings on d/e files
    "3qk2q/8/8/8/8/8/8/Q2K3Q w - - 0 1",
    # pawns on 7th/2nd, about to promote, black to move
    "8/P1P2k2/8/8/8/8/2K2p1p/8 b - - 0 1",
    # underpromoted pieces: three white knights, three black rooks
    "r3k1r1/8/8/3NN3/8/8/1r6/2N1K3 w - - 0 1",
    # bare kings in the centre (no non-king pieces: empty HalfKP lists)
    "8/8/3k4/8/4K3/8/8/8 w - - 0 1",
    # kings on d/e files, king+rook vs king
    "3k4/8/8/8/8/8/8/4K2R w K - 0 1",
    # kings in the centre with pawns
    "8/2p5/3k4/2pP4/2P1K3/8/8/8 b - - 0 1",
    # black king a-side, white king h-side, black to move, ep-free
    "k7/pp6/8/8/8/8/6PP/6RK b - - 0 1",
]

STARTS = [
    chess.STARTING_FEN,
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
    "8/pppk4/8/8/8/8/PPP2K2/8 w - - 0 1",
    "4k3/1p4p1/8/8/8/8/1P4P1/4K3 b - - 0 1",
    "r3k3/8/8/8/8/8/8/4K2R w Kq - 0 1",
    "2k5/2p5/8/8/8/8/5P2/5K2 w - - 0 1",
]


def board_from(item):
    if isinstance(item, tuple):
        b = chess.Board(item[0])
        for san in item[1].split():
            b.push_san(san)
        return b
    return chess.Board(item)


def canon(b):
    # Full 6-field FEN; ep square only when an ep capture is legal.
    return b.fen(en_passant="legal")


def side(sq):
    return "q" if chess.square_file(sq) <= 3 else "k"


def tags(b):
    t = set()
    wk, bk = b.king(chess.WHITE), b.king(chess.BLACK)
    t.add("K" + side(wk) + side(bk))
    t.add("stm_" + ("w" if b.turn else "b"))
    if b.castling_rights:
        t.add("castling")
    if b.has_legal_en_passant():
        t.add("ep")
    if b.pieces(chess.PAWN, chess.WHITE) & chess.BB_RANK_7 or b.pieces(chess.PAWN, chess.BLACK) & chess.BB_RANK_2:
        t.add("pawn_near_promo")
    for c in (chess.WHITE, chess.BLACK):
        if (len(b.pieces(chess.QUEEN, c)) > 1 or len(b.pieces(chess.ROOK, c)) > 2
                or len(b.pieces(chess.KNIGHT, c)) > 2 or len(b.pieces(chess.BISHOP, c)) > 2):
            t.add("promoted_piece")
    n = chess.popcount(b.occupied)
    t.add("sparse" if n <= 8 else "full" if n >= 26 else "mid")
    for k in (wk, bk):
        if chess.square_file(k) in (3, 4):
            t.add("king_de_file")
        if chess.square_file(k) in (2, 3, 4, 5) and chess.square_rank(k) in (2, 3, 4, 5):
            t.add("king_centre")
    return t


def pool(rng):
    out = []
    for i, fen in enumerate(STARTS):
        for g in range(6):
            b = chess.Board(fen)
            for ply in range(PLAYOUT_PLIES):
                moves = list(b.legal_moves)
                if not moves:
                    break
                b.push(rng.choice(moves))
                if ply % KEEP_EVERY == KEEP_EVERY - 1 or b.has_legal_en_passant():
                    out.append(canon(b))
                if b.is_insufficient_material() or b.halfmove_clock >= 100:
                    break
    return out


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "positions.fen"
    rng = random.Random(SEED)
    chosen = [canon(board_from(h)) for h in HAND]
    cand = [f for f in dict.fromkeys(pool(rng)) if f not in chosen]
    rng.shuffle(cand)
    quota = {"Kqq": 12, "Kqk": 12, "Kkq": 12, "Kkk": 12, "ep": 5, "pawn_near_promo": 10,
             "promoted_piece": 8, "stm_b": 25, "castling": 8, "sparse": 12, "mid": 16,
             "full": 14, "king_centre": 10, "king_de_file": 12}
    have = {k: sum(k in tags(chess.Board(f)) for f in chosen) for k in quota}
    target = 62
    # Greedy: repeatedly take the candidate that fills the most unmet quotas.
    while len(chosen) < target and cand:
        best, score = None, -1
        for f in cand[:400]:
            s = sum(1 for k in tags(chess.Board(f)) if k in quota and have[k] < quota[k])
            if s > score:
                best, score = f, s
        cand.remove(best)
        chosen.append(best)
        for k in tags(chess.Board(best)):
            if k in have:
                have[k] += 1
    for f in chosen:
        b = chess.Board(f)
        assert b.is_valid(), f
        assert b.fen(en_passant="legal") == f, f
    with open(out_path, "w") as fh:
        fh.write("\n".join(chosen) + "\n")
    allt = {}
    for f in chosen:
        for k in tags(chess.Board(f)):
            allt[k] = allt.get(k, 0) + 1
    print(f"{len(chosen)} positions -> {out_path}", file=sys.stderr)
    print(" ".join(f"{k}={v}" for k, v in sorted(allt.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
