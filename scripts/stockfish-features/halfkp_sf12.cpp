// Ground-truth HalfKP feature indices computed by Stockfish 12's own code
// (tag sf_12, GPL-3.0): Eval::NNUE::Features::HalfKP<Side::kFriend>::AppendActiveIndices.
// Reads FENs (one per line) on stdin, writes:
//   FEN \t stm \t white-persp indices \t black-persp indices
// (each sorted ascending, unique, comma-separated). Perspective WHITE uses the
// white king, BLACK the black king (board rotated by 180 degrees), kings excluded.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "bitboard.h"
#include "position.h"
#include "nnue/features/half_kp.h"
#include "nnue/features/index_list.h"

using namespace Eval::NNUE::Features;
using Feat = HalfKP<Side::kFriend>;

static std::string join(const IndexList& l) {
    std::vector<unsigned> v(l.begin(), l.end());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::to_string(v[i]);
    return s;
}

int main() {
    Bitboards::init();
    Position::init();
    std::string fen;
    while (std::getline(std::cin, fen))
    {
        if (fen.empty() || fen[0] == '#')
            continue;
        StateInfo st{};
        Position  pos;
        pos.set(fen, false, &st, nullptr);  // no Thread needed: set() only stores the pointer
        IndexList w, b;
        Feat::AppendActiveIndices(pos, WHITE, &w);
        Feat::AppendActiveIndices(pos, BLACK, &b);
        std::cout << fen << '\t' << (pos.side_to_move() == WHITE ? 'w' : 'b') << '\t' << join(w)
                  << '\t' << join(b) << '\n';
    }
}
