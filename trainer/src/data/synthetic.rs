//! Seeded random games as training samples, for tests, benchmarks and trying the tools without
//! real data.
//!
//! Each game starts from the start position and plays random legal moves (captures preferred
//! half of the time, so material comes off and endgames appear) for 8 to 240 plies or until it
//! ends (no legal move, the fifty-move rule, bare kings). Every position before the last move becomes a sample: the played move is the best move
//! four times out of five (else another legal move is named, so played and best moves differ
//! sometimes, as after Stockfish's random moves), the score is the material balance for the
//! side to move plus noise, and the result is drawn per game from the win-rate model
//! σ(material / 300) at the start of the last tenth of the game, written from each position's
//! side to move.

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Color, Move, Position, Role};

use super::Sample;

/// An endless iterator of samples from random games.
pub struct RandomGames {
    rng: ChaCha8Rng,
    game: Vec<Sample>,
    next: usize,
}

/// Random games from `seed` (the same seed gives the same samples).
pub fn random_games(seed: u64) -> RandomGames {
    RandomGames {
        rng: ChaCha8Rng::seed_from_u64(seed),
        game: Vec::new(),
        next: 0,
    }
}

fn material(pos: &Chess, color: Color) -> i32 {
    let value = |r: Role| match r {
        Role::Pawn => 100,
        Role::Knight | Role::Bishop => 300,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 0,
    };
    let board = pos.board();
    Role::ALL
        .into_iter()
        .map(|r| {
            let own = (board.by_role(r) & board.by_color(color)).count() as i32;
            let their = (board.by_role(r) & board.by_color(!color)).count() as i32;
            value(r) * (own - their)
        })
        .sum()
}

impl RandomGames {
    fn play_game(&mut self) {
        self.game.clear();
        self.next = 0;
        let rng = &mut self.rng;
        let length = rng.random_range(8..=240);
        let mut pos = Chess::default();
        let mut white_material_late = None;
        for ply in 0..length {
            let moves = pos.legal_moves();
            // Ends: no legal move, the fifty-move rule, bare kings.
            if moves.is_empty() || pos.halfmoves() >= 100 || pos.board().occupied().count() == 2 {
                break;
            }
            let captures: Vec<Move> = moves.iter().filter(|m| m.is_capture()).copied().collect();
            let played = if !captures.is_empty() && rng.random_bool(0.5) {
                *captures.choose(rng).expect("non-empty")
            } else {
                *moves.choose(rng).expect("non-empty")
            };
            let best = if moves.len() > 1 && rng.random_bool(0.2) {
                *moves.iter().find(|&&m| m != played).expect("two moves")
            } else {
                played
            };
            let noise: i32 = rng.random_range(-60..=60);
            let score = (material(&pos, pos.turn()) + noise).clamp(-20000, 20000) as i16;
            let mut s =
                Sample::from_position(&pos, score, plugin_api::move_from_shakmaty(&best), None);
            s.ply = ply as u16;
            self.game.push(s);
            if ply * 10 >= length * 9 && white_material_late.is_none() {
                white_material_late = Some(material(&pos, Color::White));
            }
            pos.play_unchecked(played);
        }
        let late = white_material_late.unwrap_or_else(|| material(&pos, Color::White));
        let p_white = 1.0 / (1.0 + (-f64::from(late) / 300.0).exp());
        let u: f64 = self.rng.random();
        let white_result: i8 = if u < p_white * 0.8 {
            1
        } else if u < p_white * 0.8 + 0.2 {
            0
        } else {
            -1
        };
        for s in &mut self.game {
            s.result = Some(if s.board.turn == plugin_api::Color::White {
                white_result
            } else {
                -white_result
            });
        }
    }
}

impl Iterator for RandomGames {
    type Item = Sample;

    fn next(&mut self) -> Option<Sample> {
        while self.next >= self.game.len() {
            self.play_game();
        }
        self.next += 1;
        Some(self.game[self.next - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_are_seeded_legal_and_consistent() {
        let a: Vec<Sample> = random_games(5).take(2000).collect();
        let b: Vec<Sample> = random_games(5).take(2000).collect();
        assert_eq!(a, b);
        assert_ne!(a, random_games(6).take(2000).collect::<Vec<_>>());
        for s in &a {
            s.validate().unwrap();
            assert!(s.result.is_some());
        }
        // Plies count up inside a game and results flip with the side to move.
        for w in a.windows(2) {
            if w[1].ply == w[0].ply + 1 {
                assert_eq!(w[1].result, w[0].result.map(|r| -r));
            }
        }
        assert!(a.iter().any(|s| s.best_move_is_capture()));
        assert!(a.iter().any(|s| s.in_check()));
    }
}
