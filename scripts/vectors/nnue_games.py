#!/usr/bin/env python3
"""The games of host/tests/data/stockfish-15.1/games.tsv (deterministic; its README).

Writes lines
`START_FEN<TAB>uci_move uci_move ...`: seeded random legal playouts (python-chess)
of 60-160 plies. Each start is one of the STARTS below after 0-11 unrecorded
uniformly random plies (so all start FENs differ). Move choice is weighted
towards castling, en passant, double pushes that allow en passant, promotions
(all four pieces equally, so 3/4 are underpromotions), captures, checks and pawn
advances, so the games
exercise Stockfish's incremental accumulator updates for every move kind and its
refresh on king moves. A game ends at its drawn length, at mate/stalemate, or
when only the kings are left; games shorter than 60 plies are discarded.

Usage: python nnue_games.py [OUT]   (needs python-chess 1.11.2)
"""
import random
import sys

import chess

SEED = 20251126
N_GAMES = 60
MIN_PLIES, MAX_PLIES = 60, 160

STARTS = [
    chess.STARTING_FEN,
    # both sides can castle on both wings at once
    "r3k2r/pppqbppp/2npbn2/4p3/4P3/2NPBN2/PPPQBPPP/R3K2R w KQkq - 6 9",
    "r3k2r/pppqbppp/2npbn2/4p3/4P3/2NPBN2/PPPQBPPP/R3K2R b KQkq - 6 9",
    # Kiwipete, perft 4 (pawns about to promote), perft 5
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    # open Sicilian / Italian
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "r3kb1r/pp1qpppp/2np1n2/8/3NP1b1/2N1B3/PPPQ1PPP/R3KB1R w KQkq - 4 8",
    "r3k2r/ppp1qppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPP1QPPP/R3K2R b KQkq - 7 9",
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2N2N2/PPPP1PPP/R1BQK2R w KQkq - 6 5",
    # pawn endgames and light-piece endgames (promotions, en passant, king walks)
    "8/pppk4/8/8/8/8/PPP2K2/8 w - - 0 1",
    "4k3/pp3ppp/8/8/8/8/PP3PPP/4K3 w - - 0 1",
    "r3k3/1pp3p1/8/8/8/8/1PP3P1/4K2R w Kq - 0 1",
    "2n1k3/1p3pp1/8/8/8/8/1PP2P2/3BK3 b - - 0 1",
]

# Move-kind weights for the playouts (a move gets the largest weight among its kinds;
# king moves need no extra weight, they are frequent in the endgames the captures lead to).
W_CASTLE, W_EP, W_PROMO, W_EP_SETUP, W_CAPTURE, W_CHECK, W_PAWN_ADV, W_OTHER = 100, 100, 15, 15, 4, 2, 2, 1


def weight(b, m):
    w = W_OTHER
    if b.is_castling(m):
        w = max(w, W_CASTLE)
    if b.is_en_passant(m):
        w = max(w, W_EP)
    if m.promotion:
        w = max(w, W_PROMO)
    if b.is_capture(m):
        w = max(w, W_CAPTURE)
    if b.gives_check(m):
        w = max(w, W_CHECK)
    if b.piece_type_at(m.from_square) == chess.PAWN:
        rel = chess.square_rank(m.to_square) if b.turn else 7 - chess.square_rank(m.to_square)
        if rel >= 4:
            w = max(w, W_PAWN_ADV)
        if abs(m.to_square - m.from_square) == 16:  # double push: does it allow an ep capture?
            b.push(m)
            if b.has_legal_en_passant():
                w = max(w, W_EP_SETUP)
            b.pop()
    return w


def play_game(rng, start_fen):
    b = chess.Board(start_fen)
    for _ in range(rng.randrange(12)):
        moves = list(b.legal_moves)
        if not moves:
            return None
        b.push(rng.choice(moves))
    b = chess.Board(b.fen(en_passant="legal"))
    if b.is_game_over():
        return None
    start = b.fen(en_passant="legal")
    length = rng.randint(MIN_PLIES, MAX_PLIES)
    moves = []
    while len(moves) < length:
        legal = list(b.legal_moves)
        if not legal:
            break
        m = rng.choices(legal, [weight(b, x) for x in legal])[0]
        moves.append(m)
        b.push(m)
        if chess.popcount(b.occupied) == 2:
            break
    if len(moves) < MIN_PLIES:
        return None
    return start, moves


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "games.txt"
    rng = random.Random(SEED)
    games, tries = [], 0
    while len(games) < N_GAMES:
        g = play_game(rng, STARTS[tries % len(STARTS)])
        tries += 1
        if g is not None and g[0] not in {s for s, _ in games}:
            games.append(g)
    with open(out_path, "w") as fh:
        for start, moves in games:
            fh.write(start + "\t" + " ".join(m.uci() for m in moves) + "\n")
    print(f"{len(games)} games ({tries} tries), {sum(len(m) for _, m in games)} plies -> {out_path}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
