// Reference harness for Stockfish's network of today (SFNNv16): Stockfish's own code at
// official-stockfish/Stockfish commit 762dd1da9a5db458180b2c5db6c53dc40ec61e1a, unpatched,
// linked with this file (see build.sh and README.md).
//
//   sf16_nnue accepted              < fens      the FENs Position::set accepts (it refuses, e.g., more
//                                               pieces than promotions allow)
//   sf16_nnue features BLOCK        < fens      per FEN, each perspective's active indices of
//                                               halfka_v2_hm, full_threats or pp_3wide
//   sf16_nnue random OUT SEED [SCALE]           a random network written by Stockfish's own
//                                               writer (Network::save): OUT
//   sf16_nnue positions NET         < fens      per FEN, every stack's raw PSQT and positional
//                                               sums and the NNUE evaluation, from scratch
//   sf16_nnue games NET             < games     along games (START_FEN<TAB>uci moves), the
//                                               evaluation after every move, incrementally
//   sf16_nnue bench NET REPEATS     < games     the games, timed (do_move + evaluate per move);
//                                               also `sf16_nnue NET bench REPEATS`, the order of
//                                               the 15.1 harness that bench.sh runs
//
// Games of any length: the accumulator stack restarts every MAX_PLY plies, as a search restarts
// it at each root.
//
// The network's members are private; `private` is defined `public` for Stockfish's headers only
// in this file (the layout is unchanged), so that the harness reaches the feature transformer
// and the layer stacks as `trace_evaluate` does.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#define private public
#include "attacks.h"
#include "bitboard.h"
#include "movegen.h"
#include "nnue/network.h"
#include "nnue/nnue_accumulator.h"
#include "nnue/nnue_architecture.h"
#include "nnue/nnue_feature_transformer.h"
#include "position.h"
#include "uci.h"
#undef private

using namespace Stockfish;
using namespace Stockfish::Eval::NNUE;

namespace {

[[noreturn]] void die(const std::string& message) {
    std::cerr << "sf16_nnue: " << message << std::endl;
    std::exit(2);
}

std::unique_ptr<Network> load_network(const std::string& path) {
    std::ifstream stream(path, std::ios::binary);
    if (!stream)
        die("cannot open " + path);
    auto net         = std::make_unique<Network>();
    auto description = net->load(stream);
    if (!description.has_value())
        die("Stockfish's reader refused " + path);
    // Stockfish's loader also requires the end of the stream (read_parameters checks it).
    return net;
}

// Sets `pos` from `fen`, or stops naming the FEN and Stockfish's reason (Position::set refuses
// what Stockfish does not support, such as more pieces than promotions allow).
void set_or_die(Position& pos, const std::string& fen, StateInfo* st) {
    if (auto error = pos.set(fen, false, st))
        die("Stockfish refuses the FEN " + fen + ": " + error->what());
}

// Calls f(fen, pos) for every FEN of standard input (empty and '#' lines skipped), each set on a
// fresh Position (set_or_die).
template<typename F>
void for_each_position(F f) {
    std::string fen;
    while (std::getline(std::cin, fen))
    {
        if (fen.empty() || fen[0] == '#')
            continue;
        StateInfo st;
        Position  pos;
        set_or_die(pos, fen, &st);
        f(fen, pos);
    }
}

template<typename T>
std::string join(const std::vector<T>& values) {
    std::ostringstream out;
    for (std::size_t i = 0; i < values.size(); ++i)
        out << (i ? "," : "") << values[i];
    return out.str();
}

// --- features ---------------------------------------------------------------------------------

// One line per FEN, as `host features` prints it: FEN, side to move, then the White and the
// Black perspective's indices of one block, sorted. HalfKAv2_hm through `make_index` for every
// occupied square (as `nnue_accumulator.cpp` does), the threat and pair blocks through their
// `append_active_indices`; PP_3Wide's indices are printed less its `IndexBase` (the block's own
// numbering, as nnue-pytorch's loader and our plugin number them).
void features(const std::string& block) {
    if (block != "halfka_v2_hm" && block != "full_threats" && block != "pp_3wide")
        die("unknown block " + block + " (halfka_v2_hm, full_threats, pp_3wide)");
    for_each_position([&](const std::string& fen, const Position& pos) {
        std::cout << fen << '\t' << (pos.side_to_move() == WHITE ? 'w' : 'b');
        for (Color p : {WHITE, BLACK})
        {
            std::vector<int> v;
            if (block == "halfka_v2_hm")
            {
                Square   ksq = pos.square<KING>(p);
                Bitboard b   = pos.pieces();
                while (b)
                {
                    Square s = pop_lsb(b);
                    v.push_back(int(Features::HalfKAv2_hm::make_index(p, s, pos.piece_on(s), ksq)));
                }
            }
            else if (block == "full_threats")
            {
                Features::FullThreats::IndexList list;
                Features::FullThreats::append_active_indices(p, pos, list);
                for (auto i : list)
                    v.push_back(int(i));
            }
            else
            {
                Features::PP_3Wide::IndexList list;
                Features::PP_3Wide::append_active_indices(p, pos, list);
                for (auto i : list)
                    v.push_back(int(i) - int(Features::PP_3Wide::IndexBase));
            }
            std::sort(v.begin(), v.end());
            std::cout << '\t' << join(v);
        }
        std::cout << '\n';
    });
}

// --- accepted --------------------------------------------------------------------------------

// The FENs Stockfish's Position::set accepts, in order; the count of the others on stderr.
void accepted() {
    std::string fen;
    int         refused = 0;
    while (std::getline(std::cin, fen))
    {
        if (fen.empty() || fen[0] == '#')
            continue;
        StateInfo st;
        Position  pos;
        if (pos.set(fen, false, &st))
            ++refused;
        else
            std::cout << fen << '\n';
    }
    std::cerr << "sf16_nnue: " << refused << " FENs refused by Position::set" << std::endl;
}

// --- random -----------------------------------------------------------------------------------

// SplitMix64 (Steele, Lea, Flood 2014): a generator simple enough to write again in the
// project's tests, which rebuild the same parameters and check that their writer gives these
// bytes.
struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z               = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z               = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // lo + next() mod (hi - lo + 1), then times scale / 4 (C++'s truncating division).
    int range(int lo, int hi, int scale = 4) {
        int v = lo + int(next() % std::uint64_t(hi - lo + 1));
        return v * scale / 4;
    }
};

// Fills every parameter with uniform values from small ranges chosen so that the accumulators,
// the pairwise product, both activations of both hidden layers and the skip all vary (no
// clipping everywhere, no zero everywhere), in this order: biases, HalfKAv2_hm weights, threat
// and pair weights, HalfKAv2_hm PSQT, threat and pair PSQT, then per stack fc_0, fc_1, fc_2
// (biases, then weights row-major), then writes the file with Stockfish's own writer. The
// arrays are filled in memory order, which is the file's only in a scalar build (no SIMD
// permutation of the feature transformer or the layers' weights): checked below.
void random_network(const std::string& out, std::uint64_t seed, int scale) {
#if defined(USE_SSSE3) || defined(USE_NEON) || defined(USE_LSX) || defined(USE_RVV)
    die("random needs the scalar build (build.sh without SIMD flags)");
#endif
    for (std::size_t i = 0; i < FeatureTransformer::PackusEpi16Order.size(); ++i)
        if (FeatureTransformer::PackusEpi16Order[i] != i)
            die("random needs the scalar build (build.sh without SIMD flags)");
    SplitMix64 rng{seed};
    auto       net = std::make_unique<Network>();
    net->initialize();
    auto& ft = net->featureTransformer;
    for (auto& b : ft.biases)
        b = BiasType(rng.range(-20, 180, scale));
    for (auto& w : ft.weights)
        w = WeightType(rng.range(-40, 40, scale));
    for (auto& w : ft.threatAndPpWeights)
        w = ThreatWeightType(rng.range(-12, 12, scale));
    for (auto& w : ft.psqtWeights)
        w = PSQTWeightType(rng.range(-3000, 3000));
    for (auto& w : ft.threatAndPpPsqtWeights)
        w = PSQTWeightType(rng.range(-600, 600));
    for (auto& stack : net->network)
    {
        for (auto& b : stack.fc_0.biases)
            b = rng.range(-3000, 3000);
        for (auto& w : stack.fc_0.weights)
            w = i8(rng.range(-24, 24));
        for (auto& b : stack.fc_1.biases)
            b = rng.range(-2000, 2000);
        for (auto& w : stack.fc_1.weights)
            w = i8(rng.range(-60, 60));
        for (auto& b : stack.fc_2.biases)
            b = rng.range(-2000, 2000);
        for (auto& w : stack.fc_2.weights)
            w = i8(rng.range(-100, 100));
    }
    std::ofstream      stream(out, std::ios::binary);
    std::ostringstream description;
    description << "Random SFNNv16 network, seed " << seed << ", scale " << scale
                << ", written by Stockfish 762dd1da9's Network::save.";
    if (!net->save(stream, description.str()) || !stream)
        die("cannot write " + out);
}

// --- positions --------------------------------------------------------------------------------

struct Terms {
    int psqt[LayerStacks];
    int positional[LayerStacks];
};

// Every stack's raw terms (before the division by OutputScale), as trace_evaluate computes them.
Terms raw_terms(const Network& net, const Position& pos, AccumulatorStack& stack,
                AccumulatorCaches& caches) {
    alignas(CacheLineSize) TransformedFeatureType transformed[FeatureTransformer::BufferSize];
    Terms t{};
    for (IndexType bucket = 0; bucket < LayerStacks; ++bucket)
    {
        NNZInfo<L1> nnz;
        t.psqt[bucket] =
          net.featureTransformer.transform(pos, stack, caches, transformed, bucket, nnz);
        t.positional[bucket] = net.network[bucket].propagate(transformed, nnz);
    }
    return t;
}

// Network::evaluate's two terms, each divided by OutputScale, summed: what Stockfish's `eval`
// prints as "NNUE evaluation" in internal units.
int nnue_value(const Network& net, const Position& pos, AccumulatorStack& stack,
               AccumulatorCaches& caches) {
    auto [psqt, positional] = net.evaluate(pos, stack, caches);
    return int(psqt) + int(positional);
}

// The accumulator stack holds MAX_PLY pushes (AccumulatorStack::MaxSize = MAX_PLY + 1): a game
// longer than that restarts it at the current position, as a search restarts it at each new root
// (search.cpp: accumulatorStack.reset()); the next evaluation refreshes from the cache.
void restart_if_full(AccumulatorStack& stack, int& pushed) {
    if (pushed == MAX_PLY)
    {
        stack.reset();
        pushed = 0;
    }
    ++pushed;
}

void positions(const std::string& path) {
    auto net    = load_network(path);
    auto caches = std::make_unique<AccumulatorCaches>(*net);
    std::cout << "# Stockfish 762dd1da9a5db458180b2c5db6c53dc40ec61e1a, network " << path << "\n";
    std::cout << "# fen\tstack\tpsqt_0..7 (raw)\tpositional_0..7 (raw)\tevaluation\n";
    for_each_position([&](const std::string& fen, const Position& pos) {
        auto stack = std::make_unique<AccumulatorStack>();
        stack->reset();
        caches->clear(*net);
        Terms t     = raw_terms(*net, pos, *stack, *caches);
        int   value = nnue_value(*net, pos, *stack, *caches);
        std::vector<int> psqt(t.psqt, t.psqt + LayerStacks);
        std::vector<int> positional(t.positional, t.positional + LayerStacks);
        std::cout << fen << '\t' << (pos.count<ALL_PIECES>() - 1) / 4 << '\t' << join(psqt)
                  << '\t' << join(positional) << '\t' << value << '\n';
    });
}

// --- games ------------------------------------------------------------------------------------

struct Game {
    std::string       start;
    std::vector<Move> moves;
};

std::vector<Game> read_games() {
    std::vector<Game> games;
    std::string       line;
    while (std::getline(std::cin, line))
    {
        if (line.empty() || line[0] == '#')
            continue;
        auto        tab = line.find('\t');
        Game        g;
        g.start = line.substr(0, tab);
        // The moves are the second column (a games file with evaluations has a third).
        std::string rest = tab == std::string::npos ? "" : line.substr(tab + 1);
        std::istringstream moves(rest.substr(0, rest.find('\t')));
        StateInfo          st0;
        Position           pos;
        set_or_die(pos, g.start, &st0);
        std::vector<std::unique_ptr<StateInfo>> states;
        std::string                             uci;
        while (moves >> uci)
        {
            Move m = UCIEngine::to_move(pos, uci);
            if (m == Move::none())
                die("illegal move " + uci + " in game " + std::to_string(games.size() + 1));
            g.moves.push_back(m);
            states.push_back(std::make_unique<StateInfo>());
            pos.do_move(m, *states.back());
        }
        games.push_back(std::move(g));
    }
    return games;
}

void games(const std::string& path) {
    auto net    = load_network(path);
    auto caches = std::make_unique<AccumulatorCaches>(*net);
    auto fresh  = std::make_unique<AccumulatorCaches>(*net);
    auto list   = read_games();
    std::cout << "# Stockfish 762dd1da9a5db458180b2c5db6c53dc40ec61e1a, network " << path << "\n";
    std::cout << "# start\tmoves\te_0,...,e_n (after each ply, side to move)\n";
    for (const auto& g : list)
    {
        StateInfo st0;
        Position  pos;
        set_or_die(pos, g.start, &st0);
        auto stack = std::make_unique<AccumulatorStack>();
        stack->reset();
        caches->clear(*net);
        std::vector<int>                        values{nnue_value(*net, pos, *stack, *caches)};
        std::vector<std::unique_ptr<StateInfo>> states;
        std::ostringstream                      moves;
        int                                     pushed = 0;
        for (Move m : g.moves)
        {
            states.push_back(std::make_unique<StateInfo>());
            restart_if_full(*stack, pushed);
            Dirties& dirties = stack->push();
            pos.do_move(m, *states.back(), pos.gives_check(m), dirties, nullptr, nullptr);
            int value = nnue_value(*net, pos, *stack, *caches);
            // The same position from scratch must agree (Stockfish's incremental updates).
            StateInfo st;
            Position  again;
            set_or_die(again, pos.fen(), &st);
            auto scratch = std::make_unique<AccumulatorStack>();
            scratch->reset();
            fresh->clear(*net);
            if (nnue_value(*net, again, *scratch, *fresh) != value)
                die("incremental and fresh evaluations differ at " + pos.fen());
            values.push_back(value);
            moves << (moves.tellp() ? " " : "") << UCIEngine::move(m, false);
        }
        std::cout << g.start << '\t' << moves.str() << '\t' << join(values) << '\n';
    }
}

void bench(const std::string& path, int repeats) {
    auto net    = load_network(path);
    auto caches = std::make_unique<AccumulatorCaches>(*net);
    auto list   = read_games();
    std::size_t plies = 0;
    for (const auto& g : list)
        plies = std::max(plies, g.moves.size());
    // One buffer of StateInfos allocated before timing (do_move needs a fresh one per ply).
    std::vector<StateInfo> states(plies + 1);
    auto                   stack = std::make_unique<AccumulatorStack>();
    long long              first = 0, positions = 0;
    auto                   start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeats; ++r)
    {
        long long sum = 0;
        positions     = 0;
        for (const auto& g : list)
        {
            Position pos;
            set_or_die(pos, g.start, &states[0]);
            stack->reset();
            sum += nnue_value(*net, pos, *stack, *caches);
            ++positions;
            int pushed = 0;
            for (std::size_t i = 0; i < g.moves.size(); ++i)
            {
                restart_if_full(*stack, pushed);
                Dirties& dirties = stack->push();
                pos.do_move(g.moves[i], states[i + 1], pos.gives_check(g.moves[i]), dirties,
                            nullptr, nullptr);
                sum += nnue_value(*net, pos, *stack, *caches);
                ++positions;
            }
        }
        if (r == 0)
            first = sum;
        else if (sum != first)
            die("passes disagree");
    }
    double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "positions " << positions << " evals_per_second "
              << (long long) (positions * repeats / seconds) << " checksum " << first << '\n';
}

}  // namespace

int main(int argc, char* argv[]) {
    Attacks::init();
    Position::init();
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "accepted" && argc == 2)
        accepted();
    else if (mode == "features" && argc == 3)
        features(argv[2]);
    else if (mode == "random" && (argc == 4 || argc == 5))
        random_network(argv[2], std::stoull(argv[3]), argc == 5 ? std::stoi(argv[4]) : 4);
    else if (mode == "positions" && argc == 3)
        positions(argv[2]);
    else if (mode == "games" && argc == 3)
        games(argv[2]);
    else if (mode == "bench" && argc == 4)
        bench(argv[2], std::stoi(argv[3]));
    // The 15.1 harness's order, so that scripts/stockfish-nnue/bench.sh drives both.
    else if (argc == 4 && std::string(argv[2]) == "bench")
        bench(argv[1], std::stoi(argv[3]));
    else
        die("usage: accepted | features BLOCK | random OUT SEED [SCALE] | positions NET | games NET | bench NET "
            "REPEATS");
    return 0;
}
