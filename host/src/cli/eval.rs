//! `host eval --net FILE --fens FILE`: the raw network output of positions.
//!
//! Output, one line per FEN: `FEN<TAB>raw network output for the side to move` (the layout of
//! `shared/parity/*.eval.tsv` minus its header), each from a fresh accumulator refresh. For a
//! Stockfish 15.1 network the output is Stockfish's `Eval::NNUE::evaluate(pos, false)`.
//!
//! With `--stacks`, three more columns: the layer stack the position uses, then every stack's
//! raw PSQT term and every stack's positional term (comma-separated, stack 0 first), before the
//! output rule's division: for Stockfish's network, what its `eval` table prints × 16.

use std::io::Write;
use std::path::Path;

use plugin_api::PluginRegistry;

use chess_text::fen_lines;
use host::nnue::{AccumulatorStack, Kernels, Nnue, SimdLevel};
use plugin_api::board_from_setup;

/// The kernels asked for: `--simd` if given, else `$NNUE_SIMD`, else the best of this CPU.
pub fn kernels(simd: Option<&str>) -> Result<Kernels, String> {
    let level = match simd {
        Some(name) => name.parse::<SimdLevel>().and_then(SimdLevel::check),
        None => SimdLevel::from_env(),
    };
    level.and_then(Kernels::new).map_err(|e| e.to_string())
}

/// Runs the subcommand; lines already written stay written if a later FEN is bad.
pub fn run(
    plugin_dir: Option<&Path>,
    net: &Path,
    fens: &Path,
    (simd, with_stacks): (Option<&str>, bool),
    out: &mut impl Write,
) -> Result<(), String> {
    let kernels = kernels(simd)?;
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let nnue = Nnue::load(net, &registry).map_err(|e| e.to_string())?;
    let mut stack = AccumulatorStack::with_max_ply(&nnue, kernels, 0);
    let io = |e: std::io::Error| format!("cannot write output: {e}");
    for item in fen_lines(fens).map_err(|e| e.to_string())? {
        let fen = item.map_err(|e| e.to_string())?;
        let board = board_from_setup(&fen.setup);
        stack
            .reset(&board)
            .map_err(|e| format!("{}:{}: {e}", fens.display(), fen.line))?;
        let value = stack.evaluate();
        if with_stacks {
            let (terms, used) = stack.stack_outputs();
            let join = |f: fn(&host::nnue::StackOutput) -> i32| {
                terms
                    .iter()
                    .map(|t| f(t).to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let (psqt, positional) = (join(|t| t.psqt), join(|t| t.positional));
            writeln!(out, "{}\t{value}\t{used}\t{psqt}\t{positional}", fen.text).map_err(io)?;
        } else {
            writeln!(out, "{}\t{value}", fen.text).map_err(io)?;
        }
    }
    Ok(())
}

/// `host eval --net N --games FILE [--repeat R]`: the evaluation after the start and after every
/// move of each game, through the incremental accumulator stack (as a search plays moves).
///
/// Without `--repeat`, one line per game: `START_FEN<TAB>moves<TAB>e0,e1,...,en` (the layout of
/// `tests/data/stockfish-15.1/games.tsv`). With `--repeat R`, the games are played R times and
/// one line says how fast: `positions P evals_per_second X checksum C` (P evaluations per pass,
/// C the sum of one pass's values), what `scripts/eval-bench.sh` measures beside the recorded
/// figures of Stockfish's own code on the same games. With `full_refresh`, the refresh cache is off. With
/// `stats`, a last line on stderr says what the stack did ([`stats_line`]).
pub fn games(
    plugin_dir: Option<&Path>,
    net: &Path,
    games: &Path,
    (simd, repeat, full_refresh, stats): (Option<&str>, Option<u32>, bool, bool),
    out: &mut impl Write,
) -> Result<(), String> {
    let kernels = kernels(simd)?;
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let nnue = Nnue::load(net, &registry).map_err(|e| e.to_string())?;
    let games = host::games::read_games(games).map_err(|e| e.to_string())?;
    let longest = games.iter().map(|g| g.moves.len()).max().unwrap_or(0);
    let mut stack = AccumulatorStack::with_max_ply(&nnue, kernels, longest);
    if full_refresh {
        stack.set_refresh_cache(false);
    }
    let io = |e: std::io::Error| format!("cannot write output: {e}");
    let pass = |stack: &mut AccumulatorStack, mut each: Option<&mut Vec<i32>>| {
        let mut sum = 0i64;
        for game in &games {
            stack.reset(&game.start).map_err(|e| e.to_string())?;
            let v = stack.evaluate();
            sum += i64::from(v);
            if let Some(values) = each.as_deref_mut() {
                values.push(v);
            }
            for mv in &game.moves {
                stack.push(mv).map_err(|e| e.to_string())?;
                let v = stack.evaluate();
                sum += i64::from(v);
                if let Some(values) = each.as_deref_mut() {
                    values.push(v);
                }
            }
        }
        Ok::<i64, String>(sum)
    };
    match repeat {
        None => {
            let mut values = Vec::new();
            pass(&mut stack, Some(&mut values))?;
            let mut rest = &values[..];
            for game in &games {
                let (these, more) = rest.split_at(game.moves.len() + 1);
                rest = more;
                let joined: Vec<String> = these.iter().map(i32::to_string).collect();
                writeln!(
                    out,
                    "{}\t{}\t{}",
                    game.start_fen,
                    game.moves_text,
                    joined.join(",")
                )
                .map_err(io)?;
            }
        }
        Some(r) => {
            let positions: usize = games.iter().map(|g| g.moves.len() + 1).sum();
            let start = std::time::Instant::now();
            let mut checksum = 0;
            for _ in 0..r.max(1) {
                checksum = std::hint::black_box(pass(&mut stack, None)?);
            }
            let seconds = start.elapsed().as_secs_f64();
            let rate = (positions as f64 * f64::from(r.max(1)) / seconds) as u64;
            writeln!(
                out,
                "positions {positions} evals_per_second {rate} checksum {checksum}"
            )
            .map_err(io)?;
        }
    }
    if stats {
        let moves: usize = games.iter().map(|g| g.moves.len()).sum();
        let passes = repeat.map_or(1, |r| r.max(1)) as usize;
        eprintln!("{}", stats_line(&stack, moves * passes));
    }
    Ok(())
}

/// What `stack` did over `moves` pushes, totals and per move: perspectives updated
/// incrementally, the rows those updates applied, perspectives refreshed and the rows their
/// refreshes applied, king moves updated by the hybrid rule, and the refresh cache's hits,
/// fills and bypasses (`stats ...`, one line; `cache off` without the cache).
pub fn stats_line(stack: &AccumulatorStack, moves: usize) -> String {
    let s = stack.stats();
    let per = |n: u64| n as f64 / moves.max(1) as f64;
    let cache = match stack.cache_stats() {
        Some(c) => format!(
            "cache_hits {} cache_fills {} cache_bypassed {} cache_rows {}",
            c.hits, c.fills, c.bypassed, c.rows
        ),
        None => "cache off".to_string(),
    };
    format!(
        "stats moves {moves} updates {} ({:.3}/move) rows {} ({:.2}/move) refreshes {} ({:.4}/move) refresh_rows {} ({:.2}/move) hybrids {} ({:.4}/move) {cache}",
        s.updates,
        per(s.updates),
        s.rows,
        per(s.rows),
        s.refreshes,
        per(s.refreshes),
        s.refresh_rows,
        per(s.refresh_rows),
        s.hybrids,
        per(s.hybrids),
    )
}
