// Ground-truth NNUE outputs computed by Stockfish 15.1's own code (SFNNv5,
// nn-ad9b42354671.nnue). Source: official-stockfish/Stockfish tag sf_15.1 =
// commit 758f9c9350abee36a5865ec701560db8ea62004d (GPL-3.0). No patch: the
// harness links all of sf_15.1/src except main.cpp and reaches the network
// through the non-static globals Eval::NNUE::featureTransformer / network[]
// defined in src/nnue/evaluate_nnue.cpp. Build: see build.sh next to this file.
//
// Usage: sf151_nnue NET.nnue positions < fens.txt   > positions.tsv
//        sf151_nnue NET.nnue games     < games.txt   > games.tsv
//        sf151_nnue NET.nnue bench REPEATS < games.(txt|tsv)   (speed benchmark)
// The net is loaded with Stockfish's own loader (Eval::NNUE::load_eval); any
// failure aborts with exit code 2.
//
// Both modes skip blank lines and copy lines starting with '#' to stdout as is.
//
// positions: one FEN per line. Fresh
//   Position + StateInfo per FEN (accumulators computed from scratch). Output:
//   FEN \t used_bucket \t psqt_0..psqt_7 \t positional_0..positional_7 \t evaluate
//   psqt_b       = featureTransformer->transform(pos, buf, b)
//                  = (psqtAcc[stm][b] - psqtAcc[~stm][b]) / 2        (raw, no /16)
//   positional_b = network[b]->propagate(buf) = fc_2 + fc_0[15]*9600/8128 (raw)
//   used_bucket  = (pos.count<ALL_PIECES>() - 1) / 4
//   evaluate     = Eval::NNUE::evaluate(pos, false): side-to-move Value,
//                  (psqt_used + positional_used) / 16, C++ truncation.
//   This is the loop of trace_evaluate() in src/nnue/evaluate_nnue.cpp without
//   its /OutputScale.
//
// games: lines "START_FEN \t uci_move uci_move ...". The moves are applied with
//   Position::do_move, one StateInfo per ply kept alive in a deque, so Stockfish
//   updates its accumulators incrementally (refreshing on king moves itself).
//   Eval::NNUE::evaluate(pos, false) is called after the start position and
//   after every move. Output: START_FEN \t moves \t e0,e1,...,en
//   Each incremental value is also checked against a fresh Position set from
//   pos.fen() (accumulators from scratch); a mismatch aborts.
//
// bench: speed of incremental evaluation along games. Reads all games first
//   (blank and '#' lines skipped; column 1 = START_FEN, column 2 = moves, any
//   further TAB columns ignored, so games.tsv works as is) and converts the
//   UCI moves to Move values once (UCI::to_move on the replayed position; a
//   Move is valid whenever the same sequence is replayed from the same start).
//   Then REPEATS timed passes; per pass and game: fresh Position::set() of the
//   start FEN, evaluate, then do_move + evaluate per move -- the games mode
//   minus output and minus the from-scratch self-check. StateInfo storage is
//   one buffer of max_plies+1 entries allocated before timing and reused:
//   Position::set() memsets the root entry and do_move() re-initialises what it
//   reads in the new entry (copied part, previous, accumulator.computed[] =
//   false, dirtyPiece), so every game starts from a from-scratch root as with
//   a fresh list, without allocating inside the timed loop (Stockfish's search
//   likewise keeps StateInfo on its stack). std::chrono::steady_clock around
//   all passes. Prints one line to stdout:
//     positions P evals_per_second X checksum C
//   P = evaluate() calls per pass (start positions included), X = P*REPEATS /
//   seconds rounded to an integer, C = int64 sum of the evaluate() values of
//   one pass. Every pass's sum is checked against the first (abort on any
//   difference), so no evaluation can be optimised away.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bitboard.h"
#include "evaluate.h"
#include "position.h"
#include "psqt.h"
#include "thread.h"
#include "uci.h"
#include "nnue/evaluate_nnue.h"

using namespace Stockfish;

namespace Stockfish::Eval::NNUE {
// Defined (non-static) in src/nnue/evaluate_nnue.cpp at sf_15.1.
extern LargePagePtr<FeatureTransformer> featureTransformer;
extern AlignedPtr<Network>              network[LayerStacks];
extern std::string                      netDescription;
}  // namespace Stockfish::Eval::NNUE

namespace NN = Stockfish::Eval::NNUE;

[[noreturn]] static void die(const std::string& msg) {
    std::cerr << "sf151_nnue: " << msg << std::endl;
    std::exit(2);
}

static void run_positions() {
    alignas(NN::CacheLineSize) NN::TransformedFeatureType buf[NN::FeatureTransformer::BufferSize];
    std::string fen;
    while (std::getline(std::cin, fen))
    {
        if (fen.empty())
            continue;
        if (fen[0] == '#')
        {
            std::cout << fen << '\n';  // header/comment lines are copied through
            continue;
        }
        StateInfo st{};
        Position  pos;
        pos.set(fen, false, &st, Threads.main());
        const int used = (pos.count<ALL_PIECES>() - 1) / 4;
        std::int32_t psqt[NN::LayerStacks], positional[NN::LayerStacks];
        for (int b = 0; b < int(NN::LayerStacks); ++b)
        {
            psqt[b]       = NN::featureTransformer->transform(pos, buf, b);
            positional[b] = NN::network[b]->propagate(buf);
        }
        const Value v = NN::evaluate(pos, false);
        if (int(v) != (psqt[used] + positional[used]) / NN::OutputScale)
            die("evaluate() disagrees with used bucket for " + fen);
        std::cout << fen << '\t' << used << '\t';
        for (int b = 0; b < 8; ++b)
            std::cout << (b ? "," : "") << psqt[b];
        std::cout << '\t';
        for (int b = 0; b < 8; ++b)
            std::cout << (b ? "," : "") << positional[b];
        std::cout << '\t' << int(v) << '\n';
    }
}

static void run_games() {
    std::string line;
    while (std::getline(std::cin, line))
    {
        if (line.empty())
            continue;
        if (line[0] == '#')
        {
            std::cout << line << '\n';
            continue;
        }
        const auto tab = line.find('\t');
        if (tab == std::string::npos)
            die("games line without TAB: " + line);
        const std::string fen = line.substr(0, tab), moves = line.substr(tab + 1);
        std::deque<StateInfo> states(1);
        Position pos;
        pos.set(fen, false, &states.back(), Threads.main());
        std::string out = std::to_string(int(NN::evaluate(pos, false)));
        std::istringstream ss(moves);
        std::string tok;
        while (ss >> tok)
        {
            const Move m = UCI::to_move(pos, tok);
            if (m == MOVE_NONE)
                die("illegal move " + tok + " in " + line);
            states.emplace_back();
            pos.do_move(m, states.back());
            const Value v = NN::evaluate(pos, false);
            // Self-check: incremental value == value from a fresh Position.
            StateInfo fst{};
            Position  fresh;
            fresh.set(pos.fen(), false, &fst, Threads.main());
            if (NN::evaluate(fresh, false) != v)
                die("incremental != from-scratch after " + tok + " in " + line);
            out += "," + std::to_string(int(v));
        }
        std::cout << fen << '\t' << moves << '\t' << out << '\n';
    }
}

struct BenchGame {
    std::string       fen;
    std::vector<Move> moves;
};

static void run_bench(long repeats) {
    // Setup (untimed): read every game, convert its moves once.
    std::vector<BenchGame> games;
    std::size_t            maxPlies = 0;
    std::string            line;
    while (std::getline(std::cin, line))
    {
        if (line.empty() || line[0] == '#')
            continue;
        const auto tab = line.find('\t');
        if (tab == std::string::npos)
            die("games line without TAB: " + line);
        const auto  tab2  = line.find('\t', tab + 1);
        BenchGame   g{line.substr(0, tab), {}};
        std::string moves = line.substr(tab + 1, tab2 == std::string::npos ? std::string::npos
                                                                            : tab2 - tab - 1);
        std::deque<StateInfo> states(1);
        Position              pos;
        pos.set(g.fen, false, &states.back(), Threads.main());
        std::istringstream ss(moves);
        std::string        tok;
        while (ss >> tok)
        {
            const Move m = UCI::to_move(pos, tok);
            if (m == MOVE_NONE)
                die("illegal move " + tok + " in " + line);
            g.moves.push_back(m);
            states.emplace_back();
            pos.do_move(m, states.back());
        }
        maxPlies = std::max(maxPlies, g.moves.size());
        games.push_back(std::move(g));
    }
    if (games.empty())
        die("bench: no games on stdin");
    std::int64_t positions = 0;
    for (const auto& g : games)
        positions += std::int64_t(g.moves.size()) + 1;

    std::vector<StateInfo> states(maxPlies + 1);
    std::int64_t           firstSum = 0;

    const auto t0 = std::chrono::steady_clock::now();
    for (long r = 0; r < repeats; ++r)
    {
        std::int64_t sum = 0;
        for (const auto& g : games)
        {
            Position pos;
            pos.set(g.fen, false, &states[0], Threads.main());
            sum += NN::evaluate(pos, false);
            for (std::size_t i = 0; i < g.moves.size(); ++i)
            {
                pos.do_move(g.moves[i], states[i + 1]);
                sum += NN::evaluate(pos, false);
            }
        }
        if (r == 0)
            firstSum = sum;
        else if (sum != firstSum)
            die("bench: checksum of pass " + std::to_string(r) + " differs from pass 0");
    }
    const auto   t1   = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(t1 - t0).count();
    const auto   eps  = std::llround(double(positions) * double(repeats) / secs);
    std::cout << "positions " << positions << " evals_per_second " << eps << " checksum "
              << firstSum << '\n';
}

int main(int argc, char* argv[]) {
    const std::string mode = argc >= 3 ? argv[2] : "";
    const bool        ok   = (argc == 3 && (mode == "positions" || mode == "games"))
                      || (argc == 4 && mode == "bench");
    if (!ok)
        die("usage: sf151_nnue NET.nnue positions|games < input\n"
            "       sf151_nnue NET.nnue bench REPEATS < games");
    long repeats = 0;
    if (mode == "bench")
    {
        char* end = nullptr;
        repeats   = std::strtol(argv[3], &end, 10);
        if (!*argv[3] || *end || repeats < 1)
            die(std::string("bad REPEATS ") + argv[3]);
    }
    CommandLine::init(argc, argv);
    UCI::init(Options);
    PSQT::init();
    Bitboards::init();
    Position::init();
    Threads.set(1);  // do_move() needs a Thread (node counter, material table)

    std::ifstream stream(argv[1], std::ios::binary);
    if (!stream)
        die(std::string("cannot open ") + argv[1]);
    if (!NN::load_eval(argv[1], stream))
        die(std::string("Eval::NNUE::load_eval failed for ") + argv[1]);
    // What Eval::NNUE::init() does besides loading: without this flag
    // Position::do_move() does not mark accumulators dirty (position.cpp:757ff).
    Eval::useNNUE = true;
    std::cerr << "loaded " << argv[1] << " (" << NN::netDescription << ")" << std::endl;

    if (mode == "positions")
        run_positions();
    else if (mode == "games")
        run_games();
    else
        run_bench(repeats);
    std::cout.flush();
    Threads.set(0);
    return 0;
}
