#!/usr/bin/env python3
"""UCI conformance of the `host` engine driven by a real client, python-chess.

Usage: uci_client.py HOST_BINARY NETWORK_FILE

Checks the handshake and options, configuration, `go` with depth / nodes / movetime / clock,
analysis (`go infinite` + `stop`), `isready` during a search (over raw pipes: python-chess
serialises its own commands), pondering, positions without legal moves, a network loaded through
EvalFile, and a few complete games of the engine against itself. Exits non-zero on the first
failure, with a message.
"""

import subprocess
import sys
import threading
import time
import queue

import chess
import chess.engine


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def handshake_and_options(engine):
    check(engine.id.get("name", "").startswith("host"), f"id name: {engine.id}")
    opts = engine.options
    for name in ["Hash", "Threads", "Move Overhead", "Clear Hash", "EvalFile", "PluginDir", "Ponder"]:
        check(name in opts, f"option {name} missing: {list(opts)}")
    check(opts["Hash"].type == "spin" and opts["Hash"].default == 128, f"Hash: {opts['Hash']}")
    check(opts["Threads"].type == "spin" and opts["Threads"].default == 1, f"Threads: {opts['Threads']}")
    check(opts["Move Overhead"].type == "spin", f"Move Overhead: {opts['Move Overhead']}")
    check(opts["Clear Hash"].type == "button", f"Clear Hash: {opts['Clear Hash']}")
    check(opts["EvalFile"].type == "string", f"EvalFile: {opts['EvalFile']}")
    engine.configure({"Hash": 16, "Threads": 2, "Move Overhead": 30})
    engine.configure({"Clear Hash": None})
    engine.ping()


def limits(engine):
    board = chess.Board()
    board.push_san("e4")
    board.push_san("c5")
    for limit in [
        chess.engine.Limit(depth=6),
        chess.engine.Limit(nodes=5000),
        chess.engine.Limit(time=0.1),
        chess.engine.Limit(white_clock=2.0, black_clock=2.0, white_inc=0.02, black_inc=0.02),
        chess.engine.Limit(white_clock=1.0, black_clock=1.0, remaining_moves=1),
        chess.engine.Limit(depth=4, nodes=100000, time=1.0),
    ]:
        start = time.monotonic()
        result = engine.play(board, limit, info=chess.engine.INFO_ALL)
        elapsed = time.monotonic() - start
        check(result.move in board.legal_moves, f"{limit}: illegal {result.move}")
        info = result.info
        for key in ["depth", "seldepth", "score", "nodes", "nps", "time", "pv", "hashfull"]:
            check(key in info, f"{limit}: no {key} in {info}")
        if limit.time is not None:
            check(elapsed < limit.time + 0.5, f"{limit}: took {elapsed:.3f} s")
        if limit.depth is not None:
            check(info["depth"] <= limit.depth, f"{limit}: depth {info['depth']}")
    # searchmoves.
    result = engine.play(chess.Board(), chess.engine.Limit(depth=5), root_moves=[chess.Move.from_uci("a2a3")])
    check(result.move == chess.Move.from_uci("a2a3"), f"root_moves ignored: {result.move}")
    # Mate scores.
    mate_board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    info = engine.analyse(mate_board, chess.engine.Limit(depth=5))
    check(info["score"].relative == chess.engine.Mate(1), f"mate score: {info['score']}")


def analysis_and_stop(engine):
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    with engine.analysis(board) as analysis:
        depth = 0
        for info in analysis:
            depth = max(depth, info.get("depth", 0))
            if depth >= 8:
                break
        start = time.monotonic()
        analysis.stop()
        best = analysis.wait()
        check(time.monotonic() - start < 1.0, "stop took more than a second")
    check(best.move in board.legal_moves, f"analysis bestmove {best.move}")


def raw_isready_during_search(host):
    """isready while `go infinite` runs; stop answers at once; bad input keeps the position."""
    proc = subprocess.Popen([host], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    lines = queue.Queue()

    def reader():
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=reader, daemon=True).start()

    def send(cmd):
        proc.stdin.write(cmd + "\n")
        proc.stdin.flush()

    def until(pred, timeout=10.0):
        got = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            check(left > 0, f"timeout; got {got[-10:]}")
            line = lines.get(timeout=left)
            got.append(line)
            if pred(line):
                return got

    send("uci")
    until(lambda l: l == "uciok")
    send("setoption name Hash value 16")
    send("position startpos moves d2d4")
    send("go infinite")
    time.sleep(0.3)
    start = time.monotonic()
    send("isready")
    got = until(lambda l: l == "readyok")
    check(time.monotonic() - start < 1.0, "readyok during search took more than a second")
    check(not any(l.startswith("bestmove") for l in got), f"bestmove before stop: {got}")
    send("stop")
    got = until(lambda l: l.startswith("bestmove"))
    board = chess.Board()
    board.push_uci("d2d4")
    check(chess.Move.from_uci(got[-1].split()[1]) in board.legal_moves, f"bad bestmove {got[-1]}")
    # Bad input: an error line, the previous position kept.
    send("position fen 8/8/8/8/8/8/8/8 w - - 0 1")
    send("position startpos moves e2e4 e7e5 e1e3")
    send("go depth 3")
    got = until(lambda l: l.startswith("bestmove"))
    errors = [l for l in got if l.startswith("info string error:")]
    check(len(errors) == 2, f"expected two errors: {got}")
    check(chess.Move.from_uci(got[-1].split()[1]) in board.legal_moves, f"position not kept: {got[-1]}")
    # Positions without legal moves.
    for fen in ["7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"]:
        send(f"position fen {fen}")
        send("go depth 3")
        got = until(lambda l: l.startswith("bestmove"))
        check(got[-1] == "bestmove 0000", f"{fen}: {got[-1]}")
    send("quit")
    check(proc.wait(timeout=10) == 0, "exit status")


def network(engine, net):
    engine.configure({"EvalFile": net})
    board = chess.Board()
    result = engine.play(board, chess.engine.Limit(depth=6), info=chess.engine.INFO_SCORE)
    check(result.move in board.legal_moves, f"NNUE move {result.move}")
    engine.configure({"EvalFile": ""})


def games(host, net):
    """Complete games, the engine against itself, with clocks (one game with pondering)."""
    white = chess.engine.SimpleEngine.popen_uci(host)
    black = chess.engine.SimpleEngine.popen_uci(host)
    try:
        for e in (white, black):
            e.configure({"Hash": 16})
        black.configure({"EvalFile": net})
        for game in range(3):
            board = chess.Board()
            clock = {chess.WHITE: 3.0, chess.BLACK: 3.0}
            inc = 0.03
            ponder = game == 2
            while not board.is_game_over(claim_draw=True) and board.ply() < 120:
                side = board.turn
                engine = white if side == chess.WHITE else black
                limit = chess.engine.Limit(
                    white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK], white_inc=inc, black_inc=inc
                )
                start = time.monotonic()
                result = engine.play(board, limit, ponder=ponder)
                spent = time.monotonic() - start
                # A loaded CI machine can delay any process by tens of milliseconds, so the clock
                # is not enforced to the millisecond here (scripts/uci_match.py counts real time
                # losses); an engine that ignores its clock fails this check.
                check(
                    spent < max(clock[side], 0.0) + 0.5,
                    f"game {game}: {spent:.3f} s spent with {clock[side]:.3f} s on the clock",
                )
                clock[side] = max(clock[side] - spent, 0.05) + inc
                check(result.move in board.legal_moves, f"game {game}: illegal {result.move}")
                board.push(result.move)
            print(f"game {game + 1}: {board.result(claim_draw=True)} after {board.ply()} plies", flush=True)
    finally:
        white.quit()
        black.quit()


def main():
    host, net = sys.argv[1], sys.argv[2]
    engine = chess.engine.SimpleEngine.popen_uci(host)
    try:
        handshake_and_options(engine)
        print("handshake and options: ok", flush=True)
        limits(engine)
        print("go with depth, nodes, movetime, clocks, searchmoves: ok", flush=True)
        analysis_and_stop(engine)
        print("analysis and stop: ok", flush=True)
        network(engine, net)
        print("EvalFile: ok", flush=True)
    finally:
        engine.quit()
    raw_isready_during_search(host)
    print("isready during search, bad input, no legal moves: ok", flush=True)
    games(host, net)
    print("games: ok", flush=True)


if __name__ == "__main__":
    main()
