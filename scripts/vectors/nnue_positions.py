#!/usr/bin/env python3
"""The positions of host/tests/data/stockfish-15.1/positions.tsv (deterministic; its README).

Writes one full 6-field FEN per
line (ep field only when an ep capture is legal). Hand-picked positions plus
positions stratified by piece count (2..32, so every NNUE bucket
(count-1)//4 = 0..7 is well covered), drawn from
  * seeded random legal playouts (python-chess) from varied starts, with move
    choice biased towards captures / checks / promotions at several strengths
    (captures thin the board out so the low-piece-count buckets are reached), and
  * seeded random legal piece placements (kings anywhere, extra promoted pieces
    possible), for sparse and odd material.
Within each piece count a greedy pass fills quotas for: side to move black,
each king-half combination (white/black king on files a-d / e-h), side to move
in check, legal en passant, castling rights, promoted extra pieces.

Usage: python nnue_positions.py [OUT]   (needs python-chess 1.11.2)
"""
import random
import sys

import chess

SEED = 20251125

# Positions per piece count (2 = bare kings has little variety).
PER_COUNT = {2: 40, 3: 90}
PER_COUNT_DEFAULT = 97

# Hand-picked FENs (or (start FEN, SAN moves)).
HAND = [
    chess.STARTING_FEN,
    (chess.STARTING_FEN, "e4"),
    (chess.STARTING_FEN, "e4 d5 e5 f5"),            # legal ep, white to capture
    (chess.STARTING_FEN, "Nf3 e5 Nc3 e4 d4"),       # legal ep, black to capture
    (chess.STARTING_FEN, "h4 a6 h5 g5"),            # legal ep on the h-file edge
    # Kiwipete and the other perft positions
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    # bare kings, and bare kings + one piece (bucket 0), both colours / sides to move
    "8/8/3k4/8/4K3/8/8/8 w - - 0 1",
    "8/8/3k4/8/4K3/8/8/8 b - - 0 1",
    "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
    "4k3/8/8/8/8/8/8/3QK3 b - - 0 1",
    "3qk3/8/8/8/8/8/8/4K3 w - - 0 1",
    "8/8/8/4k3/8/8/8/R3K3 w Q - 0 1",
    "8/8/1k6/8/8/8/1P6/6K1 w - - 0 1",
    "8/1p6/8/8/5K2/8/8/k7 b - - 0 1",
    "7k/8/8/8/8/8/8/KN6 w - - 0 1",
    "7k/8/6b1/8/8/8/8/K7 b - - 0 1",
    # piece-count bucket boundaries: 4 (bucket 0) and 5 (bucket 1) pieces
    "8/8/4k3/3p4/8/3PK3/8/8 w - - 0 1",
    "8/8/4k3/3p4/8/3PK3/8/7R b - - 0 1",
    # two or more queens per side (promoted), kings on d/e files
    "3qk2q/8/8/8/8/8/8/Q2K3Q w - - 0 1",
    "q2qk3/8/8/8/8/8/8/QQQ1K3 b - - 0 1",
    # underpromoted pieces: three white knights, three black rooks
    "r3k1r1/8/8/3NN3/8/8/1r6/2N1K3 w - - 0 1",
    # opposite-side castling, full middlegame, black to move
    "2kr3r/ppp2ppp/2nqbn2/3pp3/3PP3/2NQBN2/PPP2PPP/R4RK1 b - - 0 11",
    # white in check
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
]

STARTS = [
    chess.STARTING_FEN,
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "rnbqkb1r/ppp1pppp/5n2/3p4/3P4/5N2/PPP1PPPP/RNBQKB1R w KQkq - 2 3",
    "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
    "r3k2r/pppq1ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPPQ1PPP/R3K2R b KQkq - 4 9",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "8/pppk4/8/8/8/8/PPP2K2/8 w - - 0 1",
    "4k3/1p4p1/8/8/8/8/1P4P1/4K3 b - - 0 1",
    "2k5/2p5/8/8/8/8/5P2/5K2 w - - 0 1",
    "r3k3/1p6/8/8/8/8/6P1/4K2R w Kq - 0 1",
]

CAPTURE_BIAS = [0.0, 0.4, 0.75, 0.92]
GAMES_PER_START_BIAS = 6
PLAYOUT_PLIES = 400


def board_from(item):
    if isinstance(item, tuple):
        b = chess.Board(item[0])
        for san in item[1].split():
            b.push_san(san)
        return b
    return chess.Board(item)


def canon(b):
    return b.fen(en_passant="legal")


def biased_move(b, rng, capture_bias):
    """With probability capture_bias play a capture/promotion/check if any, else uniform."""
    moves = list(b.legal_moves)
    if rng.random() < capture_bias:
        hot = [m for m in moves if b.is_capture(m) or m.promotion]
        if not hot:
            hot = [m for m in moves if b.gives_check(m)]
        if hot:
            return rng.choice(hot)
    return rng.choice(moves)


def playout_pool(rng):
    out = []
    for fen in STARTS:
        for bias in CAPTURE_BIAS:
            for _ in range(GAMES_PER_START_BIAS):
                b = chess.Board(fen)
                for ply in range(PLAYOUT_PLIES):
                    if not any(b.legal_moves):
                        break
                    b.push(biased_move(b, rng, bias))
                    out.append(canon(b))
                    if chess.popcount(b.occupied) == 2 or b.halfmove_clock >= 120:
                        break
    return out


PIECE_WEIGHTS = [(chess.PAWN, 8), (chess.KNIGHT, 2), (chess.BISHOP, 2), (chess.ROOK, 2), (chess.QUEEN, 1.5)]


def random_placement(rng, n):
    """A random legal position with n pieces (2 kings + n-2 others)."""
    while True:
        b = chess.Board(None)
        sqs = list(chess.SQUARES)
        rng.shuffle(sqs)
        b.set_piece_at(sqs.pop(), chess.Piece(chess.KING, chess.WHITE))
        b.set_piece_at(sqs.pop(), chess.Piece(chess.KING, chess.BLACK))
        count = {chess.WHITE: 1, chess.BLACK: 1}
        pawns = {chess.WHITE: 0, chess.BLACK: 0}
        placed = 2
        while placed < n:
            c = rng.random() < 0.5
            if count[c] >= 16:
                c = not c
            pt = rng.choices([p for p, _ in PIECE_WEIGHTS], [w for _, w in PIECE_WEIGHTS])[0]
            if pt == chess.PAWN and pawns[c] >= 8:
                continue
            sq = sqs.pop()
            if pt == chess.PAWN and chess.square_rank(sq) in (0, 7):
                sqs.insert(0, sq)
                continue
            b.set_piece_at(sq, chess.Piece(pt, c))
            count[c] += 1
            pawns[c] += pt == chess.PAWN
            placed += 1
        b.turn = rng.random() < 0.5
        if b.is_valid():
            return canon(b)


def side(sq):
    return "q" if chess.square_file(sq) <= 3 else "k"


def tags(fen, src):
    b = chess.Board(fen)
    t = {src, "K" + side(b.king(chess.WHITE)) + side(b.king(chess.BLACK))}
    if not b.turn:
        t.add("stm_b")
    if b.is_check():
        t.add("check")
    if b.castling_rights:
        t.add("castling")
    if b.has_legal_en_passant():
        t.add("ep")
    for c in (chess.WHITE, chess.BLACK):
        if (len(b.pieces(chess.QUEEN, c)) > 1 or len(b.pieces(chess.ROOK, c)) > 2
                or len(b.pieces(chess.KNIGHT, c)) > 2 or len(b.pieces(chess.BISHOP, c)) > 2):
            t.add("promoted")
    return t


QUOTA = {"stm_b": 40, "Kqq": 12, "Kqk": 12, "Kkq": 12, "Kkk": 12, "check": 8, "ep": 3,
         "castling": 6, "promoted": 8, "placed": 15, "playout": 45}


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "positions.fen"
    rng = random.Random(SEED)
    chosen = [canon(board_from(h)) for h in HAND]
    assert len(set(chosen)) == len(chosen)
    seen = set(chosen)
    by_count = {n: [] for n in range(2, 33)}
    for f in dict.fromkeys(playout_pool(rng)):
        if f not in seen:
            by_count[chess.popcount(chess.Board(f).occupied)].append((f, "playout"))
    for n in range(2, 33):
        placed = dict.fromkeys(random_placement(rng, n) for _ in range(60))
        by_count[n] += [(f, "placed") for f in placed if f not in seen]
    for n in range(2, 33):
        target = PER_COUNT.get(n, PER_COUNT_DEFAULT)
        cand = list(dict.fromkeys(by_count[n]))
        rng.shuffle(cand)
        # at most 1500 playout candidates per count (keeps the greedy pass fast), all placements
        cand = [c for c in cand if c[1] == "playout"][:1500] + [c for c in cand if c[1] == "placed"]
        rng.shuffle(cand)
        cand = [(f, tags(f, s)) for f, s in cand]
        have = dict.fromkeys(QUOTA, 0)
        picked = 0
        while picked < target and cand:
            best, score = 0, -1
            for i, (f, t) in enumerate(cand):
                s = sum(1 for k in t if k in QUOTA and have[k] < QUOTA[k])
                if s > score:
                    best, score = i, s
            f, t = cand.pop(best)
            if f in seen:
                continue
            seen.add(f)
            chosen.append(f)
            picked += 1
            for k in t:
                if k in have:
                    have[k] += 1
        print(f"count {n:2d}: {picked} picked of {picked + len(cand)}  {have}", file=sys.stderr)
    for f in chosen:
        b = chess.Board(f)
        assert b.is_valid() and canon(b) == f, f
    with open(out_path, "w") as fh:
        fh.write("\n".join(chosen) + "\n")
    print(f"{len(chosen)} positions -> {out_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
