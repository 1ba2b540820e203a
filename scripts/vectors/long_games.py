#!/usr/bin/env python3
"""Seeded random games of exactly PLIES plies (default 400) from the start position, one per
line as START_FEN<TAB>uci moves (the games format of `host eval --games`): longer than
Stockfish's accumulator stack (MAX_PLY = 246), which its code restarts every MAX_PLY plies, as a
search restarts it at each root (`scripts/eval-bench.sh`).

usage: long_games.py [COUNT] [PLIES] [SEED] > games.tsv   (python-chess)
"""
import random
import sys

import chess

count = int(sys.argv[1]) if len(sys.argv) > 1 else 3
plies = int(sys.argv[2]) if len(sys.argv) > 2 else 400
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 400)
games = 0
while games < count:
    board = chess.Board()
    moves = []
    while not board.is_game_over(claim_draw=False) and len(moves) < plies:
        move = rng.choice(list(board.legal_moves))
        moves.append(move.uci())
        board.push(move)
    if len(moves) == plies:
        print(chess.STARTING_FEN + "\t" + " ".join(moves))
        games += 1
