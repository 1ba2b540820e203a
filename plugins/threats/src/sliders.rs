//! Slider attacks from tables small enough to stay in the first cache levels: kindergarten
//! bitboards (Gerd Isenberg's, <https://www.chessprogramming.org/Kindergarten_Bitboards>).
//!
//! Why not the magic bitboards of shakmaty, which the rest of the project uses: a threat
//! block looks up a few attack sets per move inside the accumulator's update loop, which streams
//! tens of megabytes of first-layer rows through the caches. There the 800 KiB rook table of the
//! magics misses on nearly every look-up (a profile of `host eval --games` on a network of
//! today's shape put 29% of `Full_Threats::delta`'s samples on the instruction after that load). These
//! tables take 10 KiB: a line's occupancy is gathered into six bits with one multiplication and
//! the attacks read from a table of the first rank (or the a-file), a few instructions that hit
//! the first-level cache.

use plugin_api::{FILE_A, Square};

const FILE_B: u64 = FILE_A << 1;
/// Gathers the a-file's six inner squares (a2–a7) into the top six bits, reversed.
const DIAG_C7_H2: u64 = 0x0004_0810_2040_8000;

/// Bishop attacks from `sq` with `occupied` as blockers.
#[inline(always)]
pub fn bishop_attacks(sq: Square, occupied: u64) -> u64 {
    let s = sq as usize;
    line_attacks(MASKS.diagonal[s], s & 7, occupied)
        | line_attacks(MASKS.anti_diagonal[s], s & 7, occupied)
}

/// Rook attacks from `sq` with `occupied` as blockers.
#[inline(always)]
pub fn rook_attacks(sq: Square, occupied: u64) -> u64 {
    let s = sq as usize;
    line_attacks(MASKS.rank[s], s & 7, occupied) | file_attacks(s, occupied)
}

/// The attacks along one line with one square per file (rank, diagonal, anti-diagonal) through
/// a square of `file`, `mask` the line less that square: the line's inner occupancy gathered
/// into six bits, the first rank's attacks spread over every rank, the line kept.
#[inline(always)]
fn line_attacks(mask: u64, file: usize, occupied: u64) -> u64 {
    let index = ((occupied & mask).wrapping_mul(FILE_B) >> 58) as usize;
    mask & FILL_UP[file][index]
}

/// The attacks along the file of square `s`: the file shifted to the a-file, its inner
/// occupancy gathered into six bits, the a-file's attacks shifted back.
#[inline(always)]
fn file_attacks(s: usize, occupied: u64) -> u64 {
    let file = s & 7;
    let index = ((FILE_A & (occupied >> file)).wrapping_mul(DIAG_C7_H2) >> 58) as usize;
    A_FILE[s >> 3][index] << file
}

/// The squares a rook on file `file` of the first rank attacks along it, the rank's inner
/// squares b–g occupied as the six bits of `inner` say (bit 0 = b).
const fn first_rank(file: usize, inner: usize) -> u8 {
    let occupied = (inner << 1) as u8;
    let mut attacks = 0u8;
    let mut f = file as i32 + 1;
    while f < 8 {
        attacks |= 1 << f;
        if occupied & (1 << f) != 0 {
            break;
        }
        f += 1;
    }
    let mut f = file as i32 - 1;
    while f >= 0 {
        attacks |= 1 << f;
        if occupied & (1 << f) != 0 {
            break;
        }
        f -= 1;
    }
    attacks
}

/// The first rank's attacks by file and inner occupancy, copied to every rank.
static FILL_UP: [[u64; 64]; 8] = {
    let mut t = [[0u64; 64]; 8];
    let mut file = 0;
    while file < 8 {
        let mut inner = 0;
        while inner < 64 {
            t[file][inner] = (first_rank(file, inner) as u64).wrapping_mul(FILE_A);
            inner += 1;
        }
        file += 1;
    }
    t
};

/// The a-file's attacks by rank and gathered inner occupancy (the index [`file_attacks`]
/// computes): for every occupancy of a2–a7, the first rank's attacks turned onto the a-file,
/// stored under the index that occupancy gathers into.
static A_FILE: [[u64; 64]; 8] = {
    let mut t = [[0u64; 64]; 8];
    let mut rank = 0;
    while rank < 8 {
        // Bit k of `inner`: a(k + 2) occupied, as bit k of a first-rank occupancy is file k + 1.
        let mut inner = 0;
        while inner < 64 {
            let mut occupied = 0u64;
            let mut k = 0;
            while k < 6 {
                if inner & (1 << k) != 0 {
                    occupied |= 1 << (8 * (k + 1));
                }
                k += 1;
            }
            let index = (occupied.wrapping_mul(DIAG_C7_H2) >> 58) as usize;
            let along = first_rank(rank, inner);
            let mut file_set = 0u64;
            let mut r = 0;
            while r < 8 {
                if along & (1 << r) != 0 {
                    file_set |= 1 << (8 * r);
                }
                r += 1;
            }
            t[rank][index] = file_set;
            inner += 1;
        }
        rank += 1;
    }
    t
};

/// The lines through each square, the square left out.
struct Masks {
    rank: [u64; 64],
    diagonal: [u64; 64],
    anti_diagonal: [u64; 64],
}

static MASKS: Masks = {
    let mut m = Masks {
        rank: [0; 64],
        diagonal: [0; 64],
        anti_diagonal: [0; 64],
    };
    let mut s = 0;
    while s < 64 {
        let (f, r) = ((s % 8) as i32, (s / 8) as i32);
        let mut sq = 0;
        while sq < 64 {
            let (g, q) = ((sq % 8) as i32, (sq / 8) as i32);
            if sq != s {
                if q == r {
                    m.rank[s] |= 1 << sq;
                }
                if g - f == q - r {
                    m.diagonal[s] |= 1 << sq;
                }
                if g - f == r - q {
                    m.anti_diagonal[s] |= 1 << sq;
                }
            }
            sq += 1;
        }
        s += 1;
    }
    m
};

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Bitboard, Square as SSquare, attacks};

    #[test]
    fn slider_attacks_equal_shakmaty_on_every_square_for_many_occupancies() {
        // Every square with the empty and the full board, then a fixed pseudo-random sequence
        // of occupancies of every density.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..4000 {
            let occupied = match round {
                0 => 0,
                1 => u64::MAX,
                _ => match round % 3 {
                    0 => next() & next(),
                    1 => next(),
                    _ => next() | next(),
                },
            };
            for sq in 0..64u8 {
                let s = SSquare::new(u32::from(sq));
                assert_eq!(
                    rook_attacks(sq, occupied),
                    attacks::rook_attacks(s, Bitboard(occupied)).0,
                    "rook on {sq}, occupied {occupied:#x}"
                );
                assert_eq!(
                    bishop_attacks(sq, occupied),
                    attacks::bishop_attacks(s, Bitboard(occupied)).0,
                    "bishop on {sq}, occupied {occupied:#x}"
                );
            }
        }
    }
}
