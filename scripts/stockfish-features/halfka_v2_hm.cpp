// Ground-truth HalfKAv2_hm feature indices computed by Stockfish's own code.
// Links against Stockfish sources (tag sf_18, GPL-3.0; build with
// -DSF_NO_APPEND_ACTIVE against newer master, which only has make_index). Reads FENs (one per
// line) on stdin, writes: FEN \t stm \t white-persp indices \t black-persp indices
// (each sorted ascending, unique, comma-separated).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "bitboard.h"
#include "position.h"
#include "nnue/features/half_ka_v2_hm.h"

using namespace Stockfish;
using Feat = Eval::NNUE::Features::HalfKAv2_hm;

static std::string join(Feat::IndexList& l) {
    std::vector<unsigned> v(l.begin(), l.end());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::to_string(v[i]);
    return s;
}

int main() {
#ifndef SF_NO_APPEND_ACTIVE
    Bitboards::init();
#else
    Attacks::init();  // newer master renamed Bitboards::init
#endif
    Position::init();
    std::string fen;
    while (std::getline(std::cin, fen))
    {
        if (fen.empty() || fen[0] == '#')
            continue;
        StateInfo st{};
        Position  pos;
        pos.set(fen, false, &st);
        Feat::IndexList w, b;
#ifndef SF_NO_APPEND_ACTIVE
        // sf_18 and earlier SFNNv10-era trees: Stockfish's own full-refresh routine.
        Feat::append_active_indices(WHITE, pos, w);
        Feat::append_active_indices(BLACK, pos, b);
#else
        // Newer master (after sf_18) dropped append_active_indices; its refresh
        // code (nnue_accumulator.cpp) calls make_index for every occupied square.
        for (Bitboard bb = pos.pieces(); bb;)
        {
            Square s = pop_lsb(bb);
            w.push_back(Feat::make_index(WHITE, s, pos.piece_on(s), pos.square<KING>(WHITE)));
            b.push_back(Feat::make_index(BLACK, s, pos.piece_on(s), pos.square<KING>(BLACK)));
        }
#endif
        std::cout << fen << '\t' << (pos.side_to_move() == WHITE ? 'w' : 'b') << '\t' << join(w)
                  << '\t' << join(b) << '\n';
    }
}
