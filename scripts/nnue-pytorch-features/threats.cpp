// Ground-truth NNUE feature indices from nnue-pytorch's own data-loader C++ code.
//
// Usage:  threats <feature-set> < positions.fen > out.tsv
//   feature-set: any name nnue-pytorch's get_feature() accepts, e.g. "Full_Threats", "PP_3Wide".
//
// Reads one full 6-field FEN per line from stdin and writes one TSV line per FEN:
//   FEN<TAB>stm<TAB>white-perspective indices<TAB>black-perspective indices
// stm is w/b; indices sorted ascending, comma-separated (duplicates kept), empty field if none.
//
// Indices come from the public ABI entry point get_sparse_batch_from_fens()
// (data_loader/cpp/training_data_loader_abi.cpp), one FEN per batch, reading
// SparseBatch::white / SparseBatch::black (White's / Black's perspective).
// Summary statistics (max active count per perspective, duplicates) go to stderr.
//
// Build (see host/tests/data/nnue-pytorch-features/README.md):
//   SRC=/tmp/nnue-pytorch/data_loader/cpp
//   g++ -std=c++20 -O1 -DNDEBUG -I$SRC threats.cpp $SRC/training_data_loader.cpp
//       $SRC/training_data_loader_abi.cpp -lpthread -o /tmp/npt_features     (one line)

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "training_data_loader_abi.h"
#include "training_data_loader_internal.h"  // SparseBatch layout (white/black/max_active_features)
#include "lib/chess.h"

static std::string join(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    std::ostringstream os;
    for (size_t i = 0; i < v.size(); ++i)
    {
        if (i)
            os << ',';
        os << v[i];
    }
    return os.str();
}

static int count_dups(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    int d = 0;
    for (size_t i = 1; i < v.size(); ++i)
        d += v[i] == v[i - 1];
    return d;
}

int main(int argc, char** argv) {
    if (argc != 2)
    {
        std::cerr << "usage: " << argv[0] << " <feature-set> < fens > tsv\n";
        return 2;
    }
    const char* feature_set = argv[1];

    std::string line;
    int         lineno = 0, max_w = 0, max_b = 0, dups = 0, n = 0;
    while (std::getline(std::cin, line))
    {
        ++lineno;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        if (line.empty())
            continue;

        // The ABI's Position::fromFen silently ignores parse failures; reject bad FENs here.
        if (!chess::Position::tryFromFen(line).has_value())
        {
            std::cerr << "line " << lineno << ": FEN rejected by chess.h: " << line << "\n";
            return 1;
        }
        std::istringstream fs(line);
        std::string        board, stm;
        fs >> board >> stm;
        if (stm != "w" && stm != "b")
        {
            std::cerr << "line " << lineno << ": bad side to move\n";
            return 1;
        }

        const char* fens[1]    = {line.c_str()};
        int         scores[1]  = {0};
        int         plies[1]   = {0};
        int         results[1] = {0};
        SparseBatch* b = get_sparse_batch_from_fens(feature_set, 1, fens, scores, plies, results);
        if (!b)
        {
            std::cerr << "unknown feature set: " << feature_set << "\n";
            return 1;
        }

        const int maxa = b->max_active_features;
        const int nw   = b->num_active_white_features;  // batch of one: count for this FEN
        const int nb   = b->num_active_black_features;
        if (nw > maxa || nb > maxa)
        {
            // The extractor would have written past its per-entry slot (undefined behaviour).
            std::cerr << "line " << lineno << ": active features " << nw << "/" << nb
                      << " exceed max_active_features " << maxa << "\n";
            return 1;
        }

        std::vector<int> w, bl;
        for (int i = 0; i < maxa; ++i)
        {
            const int wi = b->white[i], bi = b->black[i];
            // Written slots come first, the rest stays -1 padding.
            if ((i < nw) != (wi != -1) || (i < nb) != (bi != -1))
            {
                std::cerr << "line " << lineno << ": unexpected padding layout at slot " << i << "\n";
                return 1;
            }
            if (i < nw)
            {
                if (wi < 0 || wi >= b->num_inputs)
                {
                    std::cerr << "line " << lineno << ": white index out of range: " << wi << "\n";
                    return 1;
                }
                w.push_back(wi);
            }
            if (i < nb)
            {
                if (bi < 0 || bi >= b->num_inputs)
                {
                    std::cerr << "line " << lineno << ": black index out of range: " << bi << "\n";
                    return 1;
                }
                bl.push_back(bi);
            }
        }
        max_w = std::max(max_w, nw);
        max_b = std::max(max_b, nb);
        dups += count_dups(w) + count_dups(bl);
        ++n;

        std::cout << line << '\t' << stm << '\t' << join(w) << '\t' << join(bl) << '\n';
        if (n == 1)
            std::cerr << feature_set << ": num_inputs=" << b->num_inputs
                      << " max_active_features=" << maxa << "\n";
        destroy_sparse_batch(b);
    }
    std::cerr << feature_set << ": positions=" << n << " max_active_white=" << max_w
              << " max_active_black=" << max_b << " duplicate_indices=" << dups << "\n";
    return 0;
}
