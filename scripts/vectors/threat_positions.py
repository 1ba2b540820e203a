#!/usr/bin/env python3
"""The positions of host/tests/data/nnue-pytorch-features/positions.fen (deterministic; its
README): legal test positions for the threat feature sets (Full_Threats, PP_3Wide).

Usage:  python3 threat_positions.py OUT.fen        (python-chess 1.11.2)

Every position passes python-chess's Board.is_valid(); FENs are written as full 6-field FENs
with the en-passant field only when an en-passant capture is legal
(board.fen(en_passant="legal")). The output depends only on SEED and python-chess.

Mix: start position and bare kings; random games from the start position and from a few
opening FENs sampled at many plies; crowded random middlegames for every combination of
king sides (a-d / e-h for each color); endgames; promoted extra material (two queens,
three knights/rooks/bishops); pawns on the 2nd/7th ranks; en-passant-legal positions;
positions in check; both sides to move.

Positions whose Full_Threats active-feature count would exceed nnue-pytorch's
MAX_ACTIVE_FEATURES (128) are skipped: the extractor would overrun its per-entry buffer.
"""
import random
import sys

import chess

SEED = 20260726
MAX_THREATS = 128

OPENINGS = [
    "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3",  # Ruy Lopez
    "rnbqkb1r/1p2pppp/p2p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R w KQkq - 0 6",  # Najdorf
    "rnbqkb1r/ppp2ppp/4pn2/3p2B1/2PP4/2N5/PP2PPPP/R2QKBNR b KQkq - 3 4",  # QGD
    "rnbq1rk1/ppp1ppbp/3p1np1/8/2PPP3/2N2N2/PP2BPPP/R1BQK2R b KQ - 3 6",  # King's Indian
    "rnbqkbnr/ppp2ppp/4p3/3pP3/3P4/8/PPP2PPP/RNBQKBNR b KQkq - 0 3",  # French advance
    "r3kb1r/pp1nqppp/2p1pn2/8/2BP4/2N1PN2/PPQ2PPP/2KR3R b kq - 0 10",  # queenside castled
]

FIXED = [
    chess.STARTING_FEN,
    "8/8/3k4/8/4K3/8/8/8 w - - 0 1",
]

rng = random.Random(SEED)
out = []
seen = set()
tally = {}


def threat_count(board):
    """Full_Threats active count (perspective independent), used only to stay below the
    extractor's 128-slot buffer: non-king attackers, non-king targets; pawns only hit knights
    and rooks, bishops and rooks do not hit queens; one of each mutual same-type pair dropped."""
    occ = board.occupied & ~board.kings
    total = 0
    for sq in chess.scan_forward(occ):
        piece = board.piece_at(sq)
        att = board.attacks_mask(sq) & occ
        if piece.piece_type == chess.PAWN:
            att &= board.knights | board.rooks
        elif piece.piece_type in (chess.BISHOP, chess.ROOK):
            att &= ~board.queens
        for to in chess.scan_forward(att):
            same = board.piece_type_at(to) == piece.piece_type
            total += 1 if not same else (1 if sq > to else 0)
    return total


def add(board, tag):
    if not board.is_valid():
        return False
    if threat_count(board) > MAX_THREATS:
        return False
    fen = board.fen(en_passant="legal")
    if fen in seen:
        return False
    seen.add(fen)
    out.append(fen)
    tally[tag] = tally.get(tag, 0) + 1
    return True


def play_move(board, capture_bias=0.35):
    moves = list(board.legal_moves)
    if not moves:
        return False
    caps = [m for m in moves if board.is_capture(m)]
    if caps and rng.random() < capture_bias:
        board.push(rng.choice(caps))
    else:
        board.push(rng.choice(moves))
    return True


def games_from(fen, n_games, max_plies, p_sample, quota, tag):
    got = 0
    for _ in range(n_games):
        board = chess.Board(fen)
        for _ply in range(max_plies):
            if not play_move(board):
                break
            if rng.random() < p_sample and add(board.copy(stack=False), tag):
                got += 1
                if got >= quota:
                    return


def random_placement(white, black, wk_side=None, bk_side=None, stm=None, pawn_ranks=range(1, 7),
                     region=None, tries=2000):
    """Place kings and piece lists (python-chess symbols, e.g. "QRRBNPPP") at random.
    wk_side/bk_side: "ad" (files a-d), "eh" (files e-h) or None.
    region: optional list of squares the non-pawn, non-king pieces are confined to."""
    for _ in range(tries):
        board = chess.Board(None)
        free = list(range(64))

        def king_sq(side):
            files = range(8) if side is None else (range(4) if side == "ad" else range(4, 8))
            cands = [s for s in free if chess.square_file(s) in files]
            return rng.choice(cands)

        for color, side in ((chess.WHITE, wk_side), (chess.BLACK, bk_side)):
            s = king_sq(side)
            free.remove(s)
            board.set_piece_at(s, chess.Piece(chess.KING, color))
        ok = True
        for color, syms in ((chess.WHITE, white), (chess.BLACK, black)):
            for sym in syms:
                pt = chess.Piece.from_symbol(sym).piece_type
                if pt == chess.PAWN:
                    cands = [s for s in free if chess.square_rank(s) in pawn_ranks]
                elif region is not None:
                    cands = [s for s in free if s in region]
                else:
                    cands = free
                if not cands:
                    ok = False
                    break
                s = rng.choice(cands)
                free.remove(s)
                board.set_piece_at(s, chess.Piece(pt, color))
        if not ok:
            continue
        board.turn = rng.choice([chess.WHITE, chess.BLACK]) if stm is None else stm
        board.castling_rights = chess.BB_CORNERS
        board.castling_rights = board.clean_castling_rights()
        board.halfmove_clock = rng.randrange(0, 20)
        board.fullmove_number = rng.randrange(15, 70)
        if board.is_valid():
            return board
    return None


def subset(s, keep):
    s = list(s)
    rng.shuffle(s)
    return "".join(s[:keep])


FULL_W = "QRRBBNNPPPPPPPP"


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "positions.fen"

    # A. fixed positions
    for fen in FIXED:
        assert add(chess.Board(fen), "fixed"), fen

    # B. random games from the start position, sampled at many plies
    games_from(chess.STARTING_FEN, 40, 140, 0.05, 70, "game-start")

    # C. random continuations of a few openings (the opening FENs themselves included)
    for fen in OPENINGS:
        assert add(chess.Board(fen), "opening"), fen
        games_from(fen, 4, 50, 0.1, 6, "game-opening")

    # D. crowded middlegames for each king-side combination and both sides to move
    for wk in ("ad", "eh"):
        for bk in ("ad", "eh"):
            for stm in (chess.WHITE, chess.BLACK):
                got = 0
                while got < 8:
                    w = subset(FULL_W, rng.randrange(9, 16))
                    b = subset(FULL_W, rng.randrange(9, 16)).lower()
                    board = random_placement(w, b, wk, bk, stm)
                    if board is not None and add(board, "middlegame-%s-%s" % (wk, bk)):
                        got += 1

    # D2. dense positions: pieces (some promoted) crowded into a small box, so that many
    # pieces attack / defend each other (high Full_Threats counts)
    got = 0
    while got < 16:
        w_, h_ = (5, 5) if got < 8 else (4, 5)
        f0, r0 = rng.randrange(0, 9 - w_), rng.randrange(1, 8 - h_)
        box = [chess.square(f, r) for f in range(f0, f0 + w_) for r in range(r0, r0 + h_)]
        w = subset("QQQRRBBNN", rng.randrange(6, 10)) + "P" * rng.randrange(0, 4)
        b = (subset("QQQRRBBNN", rng.randrange(6, 10)) + "P" * rng.randrange(0, 4)).lower()
        board = random_placement(w, b, rng.choice(["ad", "eh"]), rng.choice(["ad", "eh"]),
                                 region=box)
        if board is not None and add(board, "dense"):
            got += 1

    # D3. positions with very many threats (towards the 128-slot limit), found by a seeded
    # random local search: move one piece to a random empty square, keep it if the
    # Full_Threats count does not drop. Material includes promoted queens and knights.
    for target, w in ((70, "QQRRBBNNPPPPPP"), (85, "QQQRRBBNNPPPPP"), (100, "QQQNNNNRBPPPP"),
                      (128, "QQQNNNNRBBPPP"), (128, "QQQQQNNNNRBPP"), (128, "QQQQQNNNNRBPP")):
        board = random_placement(w, w.lower())
        cur = threat_count(board)
        for _step in range(15000):
            if cur >= target:
                break
            frm = rng.choice(list(chess.scan_forward(board.occupied & ~board.kings)))
            piece = board.piece_at(frm)
            empties = [s for s in chess.scan_forward(~board.occupied & chess.BB_ALL)
                       if piece.piece_type != chess.PAWN or 1 <= chess.square_rank(s) <= 6]
            b2 = board.copy(stack=False)
            b2.remove_piece_at(frm)
            b2.set_piece_at(rng.choice(empties), piece)
            b2.castling_rights = b2.clean_castling_rights()
            if not b2.is_valid():
                continue
            c2 = threat_count(b2)
            if cur <= c2 <= target:
                board, cur = b2, c2
        assert add(board, "max-threats"), (target, cur)

    # E. endgames: kings + 1..6 pieces, every king-side combination
    got = 0
    while got < 36:
        wk = ("ad", "eh")[got % 2]
        bk = ("ad", "eh")[(got // 2) % 2]
        n = 1 + got % 6
        pool = "QRRBBNNPPPPPPPPqrrbbnnpppppppp"
        pieces = subset(pool, n)
        w = "".join(c for c in pieces if c.isupper())
        b = "".join(c for c in pieces if c.islower())
        board = random_placement(w, b, wk, bk)
        if board is not None and add(board, "endgame"):
            got += 1

    # F. promoted extra material (two queens, three knights/rooks/bishops, ...)
    promoted = [
        ("QQRBNPPPPPP", "qrrbbnnpppppp"),
        ("QQQRNPPPP", "qrbnppppppp"),
        ("RNNNBPPPPPPP", "qrbnpppppp"),
        ("QRRRBNPPPPPP", "qbbbnppppppp"),
        ("QBBBRRPPPPPP", "qqrrbnpppppp"),
        ("QQNNNPPPPP", "qqnnnppppp"),
        ("QQ", "rrr"),
        ("NNN", "bbb"),
        ("RRR", "qq"),
        ("QQQQ", "qqq"),
    ]
    for w, b in promoted:
        got = 0
        while got < 3:
            board = random_placement(w, b, rng.choice(["ad", "eh"]), rng.choice(["ad", "eh"]))
            if board is not None and add(board, "promoted"):
                got += 1
    # promotions (incl. underpromotions) reached in play
    got = 0
    for fen in ["8/P1k5/8/8/8/8/6Kp/8 w - - 0 60", "4k3/1P4P1/8/8/8/8/1p4p1/4K3 w - - 0 50",
                "r3k3/1P6/8/8/8/8/6p1/4K2R b - - 0 40"]:
        board = chess.Board(fen)
        for m in list(board.legal_moves):
            if m.promotion:
                b2 = board.copy(stack=False)
                b2.push(m)
                if rng.random() < 0.5 and add(b2, "promoted-played"):
                    got += 1
    # random games continuing after a promotion (several promoted pieces at once)
    for fen in ["4k3/PPP5/8/8/8/8/5ppp/4K3 w - - 0 40", "r3k2r/PP6/8/8/8/8/6pp/R3K2R w KQkq - 0 30"]:
        games_from(fen, 3, 30, 0.15, 4, "promoted-game")

    # E2. a few sparse positions where both kings sit near pawns/pieces on the edge files
    for fen in ["7k/6pp/8/8/8/8/PP6/K7 w - - 0 40", "k7/pp6/8/8/8/8/6PP/7K b - - 0 40",
                "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "r3k2r/8/8/8/8/8/8/4K3 b kq - 0 1"]:
        assert add(chess.Board(fen), "edge"), fen

    # G. pawns on the 2nd and 7th ranks (white pawns about to promote, black ones too)
    got = 0
    while got < 16:
        w = "P" * rng.randrange(1, 5) + subset("QRBN", rng.randrange(0, 3))
        b = "p" * rng.randrange(1, 5) + subset("qrbn", rng.randrange(0, 3))
        ranks = (1, 6) if got % 2 == 0 else (1, 2, 5, 6)
        board = random_placement(w, b, pawn_ranks=ranks)
        if board is not None and add(board, "pawns-rank2/7"):
            got += 1

    # H. en-passant capture legal (found in random games)
    got = 0
    while got < 16:
        board = chess.Board(rng.choice([chess.STARTING_FEN] + OPENINGS))
        for _ply in range(rng.randrange(4, 60)):
            if not play_move(board, 0.2):
                break
            if board.has_legal_en_passant() and add(board.copy(stack=False), "en-passant"):
                got += 1
                break
    # I. side to move in check
    got = 0
    while got < 16:
        board = chess.Board(rng.choice([chess.STARTING_FEN] + OPENINGS))
        for _ply in range(rng.randrange(6, 80)):
            if not play_move(board, 0.3):
                break
            if board.is_check() and add(board.copy(stack=False), "check"):
                got += 1
                break
    got = 0
    while got < 6:
        board = random_placement(subset(FULL_W, 8), subset(FULL_W, 8).lower())
        if board is not None and board.is_check() and add(board, "check-placed"):
            got += 1

    with open(out_path, "w") as f:
        for fen in out:
            f.write(fen + "\n")

    boards = [chess.Board(f) for f in out]
    stats = {
        "positions": len(out),
        "white to move": sum(b.turn for b in boards),
        "black to move": sum(not b.turn for b in boards),
        "in check": sum(b.is_check() for b in boards),
        "ep field set": sum(f.split()[3] != "-" for f in out),
        "wK a-d": sum(chess.square_file(b.king(chess.WHITE)) < 4 for b in boards),
        "bK a-d": sum(chess.square_file(b.king(chess.BLACK)) < 4 for b in boards),
        "2+ queens one side": sum(
            max(len(b.pieces(chess.QUEEN, c)) for c in chess.COLORS) >= 2 for b in boards),
        "3+ N/B/R one side": sum(
            any(len(b.pieces(pt, c)) >= 3 for pt in (chess.KNIGHT, chess.BISHOP, chess.ROOK)
                for c in chess.COLORS) for b in boards),
        "max Full_Threats count": max(threat_count(b) for b in boards),
    }
    print("tally:", tally, file=sys.stderr)
    print("stats:", stats, file=sys.stderr)


if __name__ == "__main__":
    main()
