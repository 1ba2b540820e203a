#!/usr/bin/env python3
"""Games for the inference benchmark (`scripts/eval-bench.sh`), beside the random playouts of the
vectors: one per line as START_FEN<TAB>uci moves (the games format of `host eval --games`),
deterministic for a given seed.

  captures COUNT SEED BOOK   capture-rich playouts from a book's middlegame openings (the UHO
                             book, ../shared/data/uho_4060_v2.epd): from a seeded choice of its
                             lines, COUNT playouts of 40 to 240 plies (the length drawn), each
                             move a capture with probability 0.55 whenever one exists, otherwise
                             any legal move; a playout ends early at mate or stalemate.
  selfplay COUNT SEED BOOK   real games: Debian's Stockfish (/usr/games/stockfish, 15.1; one
                             thread, 16 MiB hash, 4,000 nodes a move, a new game each time) plays
                             itself from a seeded choice of a book's openings (noob_3moves.epd)
                             to the end (mate, stalemate, insufficient material, the 50-move
                             rule, threefold repetition) or 600 plies: long endgames included.

usage: bench_games.py MODE COUNT SEED BOOK > games.tsv   (python-chess 1.11.2)
"""
import random
import sys

import chess
import chess.engine

STOCKFISH = "/usr/games/stockfish"
NODES_PER_MOVE = 4000
MAX_SELFPLAY_PLIES = 600
MIN_PLAYOUT, MAX_PLAYOUT = 40, 240
CAPTURE_CHANCE = 0.55


def openings(path):
    """The book's positions as boards (an EPD line's first four fields)."""
    with open(path) as book:
        return [chess.Board(" ".join(line.split()[:4]) + " 0 1") for line in book if line.strip()]


def capture_playout(board, rng):
    """Moves of one capture-rich playout from `board` (left at its end)."""
    length = rng.randint(MIN_PLAYOUT, MAX_PLAYOUT)
    moves = []
    while len(moves) < length and not board.is_game_over(claim_draw=False):
        legal = list(board.legal_moves)
        captures = [m for m in legal if board.is_capture(m)]
        move = rng.choice(captures if captures and rng.random() < CAPTURE_CHANCE else legal)
        moves.append(move.uci())
        board.push(move)
    return moves


def selfplay_game(board, engine):
    """Moves of one game Stockfish plays against itself from `board` to its end."""
    moves = []
    game = object()
    while len(moves) < MAX_SELFPLAY_PLIES and board.outcome(claim_draw=True) is None:
        move = engine.play(board, chess.engine.Limit(nodes=NODES_PER_MOVE), game=game).move
        moves.append(move.uci())
        board.push(move)
    return moves


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("captures", "selfplay"):
        sys.exit(__doc__.strip().splitlines()[-1])
    mode, count, seed, book = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    rng = random.Random(seed)
    starts = openings(book)
    engine = None
    if mode == "selfplay":
        engine = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
        engine.configure({"Threads": 1, "Hash": 16})
    try:
        for _ in range(count):
            board = rng.choice(starts).copy()
            fen = board.fen()
            if mode == "captures":
                moves = capture_playout(board, rng)
            else:
                moves = selfplay_game(board, engine)
            print(fen + "\t" + " ".join(moves), flush=True)
    finally:
        if engine is not None:
            engine.quit()


if __name__ == "__main__":
    main()
