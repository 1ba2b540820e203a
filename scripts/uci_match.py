#!/usr/bin/env python3
"""Play games between two UCI engines with python-chess and count what matters for the engine's
issue: results (with an Elo estimate), losses on time, illegal moves and crashes.

The clock is kept here, as a GUI keeps it: each side's time runs from sending `go` to receiving
`bestmove` (pipe latency included), the increment is added after the move, and a side whose
clock reaches zero loses on time.

Examples (from the repository, after `cargo build --release` and scripts/test.sh's .venv):

  # 1000 games at 1 s + 0.01 s, the engine against itself: time losses.
  .venv/bin/python scripts/uci_match.py --games 1000 --tc 1+0.01 \\
      --engine1 target/release/host --engine2 target/release/host

  # NNUE against the built-in evaluation, 100 ms per move, openings from an EPD file.
  .venv/bin/python scripts/uci_match.py --games 200 --movetime 100 \\
      --openings ../shared/data/uho_4060_v2.epd \\
      --engine1 target/release/host --option1 EvalFile=../shared/nets/thesis/all.nn \\
      --engine2 target/release/host
"""

import argparse
import math
import random
import sys
import time

import chess
import chess.engine


def parse_options(items):
    out = {}
    for item in items or []:
        name, _, value = item.partition("=")
        out[name] = value
    return out


def elo(score, games):
    """Elo difference and a 95% error bar from a score fraction."""
    if games == 0 or score <= 0 or score >= 1:
        return float("nan"), float("nan")
    diff = -400 * math.log10(1 / score - 1)
    # Standard error of the score (ternary results approximated as binomial).
    se = math.sqrt(score * (1 - score) / games)
    lo = min(max(score - 1.96 * se, 1e-6), 1 - 1e-6)
    hi = min(max(score + 1.96 * se, 1e-6), 1 - 1e-6)
    return diff, (-400 * math.log10(1 / hi - 1) + 400 * math.log10(1 / lo - 1)) / 2


def openings(path, count, seed):
    if not path:
        return [chess.STARTING_FEN] * count
    with open(path) as f:
        fens = [" ".join(line.split()[:4]) + " 0 1" for line in f if line.strip() and not line.startswith("#")]
    rng = random.Random(seed)
    rng.shuffle(fens)
    return [fens[i % len(fens)] for i in range(count)]


def start(cmd, options):
    engine = chess.engine.SimpleEngine.popen_uci(cmd.split())
    if options:
        engine.configure(options)
    return engine


def play_game(engines, white_index, fen, args, game_id):
    """Returns (result string from engine 0's point of view: 1, 0.5, 0), reason)."""
    board = chess.Board(fen)
    base, inc = args.base, args.inc
    clock = {chess.WHITE: base, chess.BLACK: base}
    side_engine = {chess.WHITE: white_index, chess.BLACK: 1 - white_index}
    while True:
        if board.is_game_over(claim_draw=True):
            outcome = board.outcome(claim_draw=True)
            if outcome.winner is None:
                return 0.5, outcome.termination.name.lower()
            winner_index = side_engine[outcome.winner]
            return (1.0 if winner_index == 0 else 0.0), outcome.termination.name.lower()
        if board.ply() >= args.max_plies:
            return 0.5, "ply limit"
        side = board.turn
        engine = engines[side_engine[side]]
        if args.movetime:
            limit = chess.engine.Limit(time=args.movetime / 1000)
        else:
            limit = chess.engine.Limit(
                white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK], white_inc=inc, black_inc=inc
            )
        t0 = time.monotonic()
        try:
            # A new `game` value makes python-chess send `ucinewgame` first.
            result = engine.play(board, limit, game=game_id)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as e:
            loser = side_engine[side]
            return (0.0 if loser == 0 else 1.0), f"engine error: {e}"
        spent = time.monotonic() - t0
        if not args.movetime:
            clock[side] -= spent
            if clock[side] <= 0:
                loser = side_engine[side]
                print(
                    f"time loss: engine {loser + 1} at ply {board.ply()}, clock {clock[side] + spent:.3f} s "
                    f"before the move, spent {spent:.3f} s; {fen}",
                    flush=True,
                )
                return (0.0 if loser == 0 else 1.0), "time loss"
            clock[side] += inc
        if result.move is None or result.move not in board.legal_moves:
            loser = side_engine[side]
            return (0.0 if loser == 0 else 1.0), f"illegal move {result.move}"
        board.push(result.move)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine1", required=True)
    p.add_argument("--engine2", required=True)
    p.add_argument("--option1", action="append", help="NAME=VALUE for engine 1 (repeatable)")
    p.add_argument("--option2", action="append", help="NAME=VALUE for engine 2 (repeatable)")
    p.add_argument("--games", type=int, default=100)
    p.add_argument("--tc", default="1+0.01", help="BASE+INC in seconds (ignored with --movetime)")
    p.add_argument("--movetime", type=int, default=0, help="fixed milliseconds per move")
    p.add_argument("--openings", default="", help="EPD/FEN file; each opening is played with both colours")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-plies", type=int, default=400)
    args = p.parse_args()
    base, _, inc = args.tc.partition("+")
    args.base, args.inc = float(base), float(inc or 0)

    engines = [start(args.engine1, parse_options(args.option1)), start(args.engine2, parse_options(args.option2))]
    fens = openings(args.openings, (args.games + 1) // 2, args.seed)
    score = 0.0
    wdl = [0, 0, 0]
    reasons = {}
    started = time.monotonic()
    try:
        for g in range(args.games):
            fen = fens[g // 2]
            white_index = g % 2
            result, reason = play_game(engines, white_index, fen, args, g)
            score += result
            wdl[0 if result == 1 else 1 if result == 0.5 else 2] += 1
            reasons[reason] = reasons.get(reason, 0) + 1
            if (g + 1) % 10 == 0 or g + 1 == args.games:
                d, err = elo(score / (g + 1), g + 1)
                print(
                    f"{g + 1} games: +{wdl[0]} ={wdl[1]} -{wdl[2]} score {score / (g + 1):.3f} "
                    f"elo {d:+.1f} +- {err:.1f}; {dict(sorted(reasons.items()))}; {time.monotonic() - started:.0f} s",
                    flush=True,
                )
    finally:
        for e in engines:
            try:
                e.quit()
            except Exception:
                pass
    bad = sum(v for k, v in reasons.items() if k == "time loss" or k.startswith("illegal") or k.startswith("engine error"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
