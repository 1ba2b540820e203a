//! The evaluation stages of an experiment: a tournament between its networks (played by
//! `host` through `arena`, rated jointly by maximum likelihood) and puzzle accuracy. Each
//! stage is cached under a key of the networks' contents and the settings.

use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};

use arena::game::{Adjudication, DrawRule, GameSettings, ResignRule};
use arena::openings::{self, OpeningOrder};
use arena::puzzles;
use arena::rating::{self, Anchor, FitOptions, GameResult};
use arena::tournament::{
    self, Failures, TournamentConfig, TournamentFormat, TournamentGame, TournamentOutcome,
};
use arena::uci::EngineSpec;
use host::engine::bench::{self, BenchConfig};
use host::engine::eval_source::EvalSource;
use serde::{Deserialize, Serialize};

use super::cache::file_digest;
use super::lookup::Lookup;
use super::manifest::{Evaluation, PuzzlesTable, SpeedTable, TournamentTable};
use super::stage_key::StageKey;

/// A trained network taking part in the evaluation.
#[derive(Clone, Debug)]
pub struct Player {
    /// Its name in tables and PGN (the feature set).
    pub name: String,
    /// The network file.
    pub net: PathBuf,
    /// Where `host` finds the network's plugins (`None`: next to `host`).
    pub plugin_dir: Option<PathBuf>,
}

/// A player's rating in the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatedPlayer {
    /// Name.
    pub name: String,
    /// Rating relative to the reference (a bound when `bound` is not empty; NaN without one).
    #[serde(with = "any_float")]
    pub elo: f64,
    /// 95% error against the reference (NaN for a bound).
    #[serde(with = "any_float")]
    pub error95: f64,
    /// Whether the rating is a bound (a perfect or zero score); stored as `">"`, `"<"` or `""`.
    #[serde(default)]
    pub bound: rating::RatingBound,
    /// Games played.
    pub games: u32,
    /// Score, percent.
    pub score_percent: f64,
    /// Whether this is the reference (rating fixed at 0).
    pub is_reference: bool,
}

/// A player's puzzle accuracy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PuzzleScore {
    /// Name.
    pub name: String,
    /// Move accuracy, 0..1 (the thesis's metric).
    pub accuracy: f64,
    /// Correct answers.
    pub correct: usize,
    /// Answers asked.
    pub answers: usize,
    /// Puzzles with every answer right.
    pub solved: usize,
    /// Puzzles.
    pub puzzles: usize,
}

/// The head-to-head result of a pair of a tournament's `pairs`, from the second player's side
/// (the change the pair compares: `b` against `a`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    /// The first player (the baseline).
    pub a: String,
    /// The second player.
    pub b: String,
    /// Wins of `b`.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses of `b`.
    pub losses: u32,
    /// `b`'s Elo against `a` from their games (infinite for a perfect score).
    #[serde(with = "any_float")]
    pub elo: f64,
    /// Its 95% error (trinomial; infinite or NaN when the interval reaches a perfect score).
    #[serde(with = "any_float")]
    pub error95: f64,
    /// Likelihood of superiority of `b`.
    pub los: f64,
}

/// Floats that may be infinite or NaN, which JSON numbers cannot hold: those are written as
/// the strings `inf`, `-inf` and `NaN` (the cached records must read back what was written: a
/// rating bound's NaN error, written as JSON `null`, made its tournament unreadable as done).
mod any_float {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_str(&v.to_string())
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Number(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Number(v) => Ok(v),
            Repr::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// A network's search speed: `host bench` (fixed positions, fixed depth, one thread).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedResult {
    /// Name.
    pub name: String,
    /// Nodes of one bench (the same in every repeat).
    pub nodes: u64,
    /// Median nodes per second over the repeats.
    pub nps: f64,
    /// Every repeat's nodes per second.
    pub samples: Vec<f64>,
}

/// What one evaluation of one experiment found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvaluationResult {
    /// The evaluation's name in the manifest.
    pub name: String,
    /// The tournament's move limit (`go nodes 5000`), if a tournament was played.
    pub limit: Option<String>,
    /// The reference player (rating 0).
    pub reference: Option<String>,
    /// Ratings of all tournament players, best first.
    pub ratings: Option<Vec<RatedPlayer>>,
    /// Markdown: pairings' W/D/L, crashes and time losses, the PGN's path.
    pub tournament_summary: Option<String>,
    /// The tournament's `pairs`, head to head.
    pub pairs: Vec<PairResult>,
    /// Puzzle accuracy per player.
    pub puzzles: Vec<PuzzleScore>,
    /// Search speed per player.
    pub speed: Vec<SpeedResult>,
}

/// `host` with `player`'s network, named after the player, with `hash` MiB.
fn host_spec(player: &Player, hash: u64) -> Result<EngineSpec> {
    let mut spec = EngineSpec::host_with_net(&player.net).map_err(anyhow::Error::msg)?;
    spec.name = player.name.clone();
    spec.options.push(("Hash".into(), hash.to_string()));
    // Before EvalFile, whose network needs the plugins.
    if let Some(dir) = &player.plugin_dir {
        spec.options
            .insert(0, ("PluginDir".into(), dir.to_string_lossy().into_owned()));
    }
    Ok(spec)
}

/// Runs (or finds cached) the evaluation `ev` of `players`.
pub fn evaluate(
    experiment: &str,
    ev: &Evaluation,
    players: &[Player],
    out_root: &Path,
    (progress, lookup): (bool, &Lookup),
) -> Result<EvaluationResult> {
    let digests = player_digests(players)?;
    let reference = reference_of(ev, players);
    let mut result = EvaluationResult {
        name: ev.name.clone(),
        limit: None,
        reference: reference.clone(),
        ratings: None,
        tournament_summary: None,
        pairs: Vec::new(),
        puzzles: Vec::new(),
        speed: Vec::new(),
    };
    if let Some(t) = &ev.tournament {
        let record = tournament_stage(
            experiment,
            t,
            players,
            &digests,
            reference.as_deref(),
            out_root,
            (progress, lookup),
        )?;
        result.limit = Some(t.limit.search_limit().go_command());
        result.ratings = t.pairs.is_empty().then_some(record.ratings);
        result.tournament_summary = Some(record.summary);
        result.pairs = record.pairs;
    }
    if let Some(pz) = &ev.puzzles {
        for (p, (_, digest)) in players.iter().zip(&digests) {
            result.puzzles.push(puzzle_stage(
                experiment,
                pz,
                p,
                digest,
                out_root,
                (progress, lookup),
            )?);
        }
    }
    if let Some(speed) = &ev.speed {
        result.speed = speed_stage(experiment, speed, players, &digests, (out_root, lookup))?;
    }
    Ok(result)
}

/// Each player's name with its network's digest: what the evaluation stages are keyed by.
fn player_digests(players: &[Player]) -> Result<Vec<(String, String)>> {
    players
        .iter()
        .map(|p| Ok((p.name.clone(), file_digest(&p.net)?)))
        .collect()
}

/// The player rated 0: the evaluation's reference, else the first player.
fn reference_of(ev: &Evaluation, players: &[Player]) -> Option<String> {
    ev.reference
        .clone()
        .or_else(|| players.first().map(|p| p.name.clone()))
}

#[derive(Serialize, Deserialize)]
struct TournamentRecord {
    ratings: Vec<RatedPlayer>,
    summary: String,
    #[serde(default)]
    pairs: Vec<PairResult>,
}

/// Measures (or finds cached) every player's `host bench` speed (the benchmark run in this
/// process, one thread), the repeats interleaved across players so that a slow spell of the
/// machine hits all of them alike.
fn speed_stage(
    experiment: &str,
    speed: &SpeedTable,
    players: &[Player],
    digests: &[(String, String)],
    (out_root, lookup): (&Path, &Lookup),
) -> Result<Vec<SpeedResult>> {
    let dir = StageKey::speed(digests, speed).dir(out_root, experiment);
    let what = format_args!("[{experiment}] speed");
    lookup.stage(&dir, Some(what), Some, || {
        let repeats = speed.repeats.get() as usize;
        eprintln!(
            "==> [{experiment}] speed: host bench --depth {} of {} networks, {repeats} times each",
            speed.depth.get(),
            players.len()
        );
        let configs = players
            .iter()
            .map(|p| {
                let eval = EvalSource::load(&p.net, p.plugin_dir.as_deref())
                    .map_err(|e| anyhow!("[{experiment}] speed of {}: {e}", p.name))?;
                Ok(BenchConfig {
                    depth: speed.depth.get().min(u64::from(u32::MAX)) as u32,
                    threads: 1,
                    hash_mb: bench::DEFAULT_HASH_MB,
                    eval,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut samples: Vec<(u64, Vec<f64>)> = vec![(0, Vec::new()); players.len()];
        for _ in 0..repeats {
            for ((p, config), (nodes, nps)) in players.iter().zip(&configs).zip(&mut samples) {
                let summary = bench::run(config, &mut std::io::sink())
                    .map_err(|e| anyhow!("[{experiment}] speed of {}: {e}", p.name))?;
                *nodes = summary.nodes;
                nps.push(summary.nps() as f64);
            }
        }
        let record: Vec<SpeedResult> = players
            .iter()
            .zip(samples)
            .map(|(p, (nodes, nps))| {
                let mut sorted = nps.clone();
                sorted.sort_by(f64::total_cmp);
                SpeedResult {
                    name: p.name.clone(),
                    nodes,
                    nps: sorted[sorted.len() / 2],
                    samples: nps,
                }
            })
            .collect();
        Ok(record)
    })
}

/// A tournament ready to play: its stage folder, configuration and player names.
struct Tournament {
    dir: PathBuf,
    config: TournamentConfig,
    names: Vec<String>,
}

/// The stage folder of the tournament `t` of the players whose networks have `digests`, keyed
/// by the networks' contents and the settings.
fn tournament_dir(
    experiment: &str,
    t: &TournamentTable,
    digests: &[(String, String)],
    reference: Option<&str>,
    out_root: &Path,
) -> Result<PathBuf> {
    Ok(StageKey::tournament(t, digests, reference, out_root)?.dir(out_root, experiment))
}

/// The tournament `t` of `players` in its stage folder `dir`, ready to play (its openings
/// read, its engines named): made only once the tournament is to be played, not to find it
/// done.
fn tournament_setup(
    experiment: &str,
    t: &TournamentTable,
    players: &[Player],
    reference: Option<&str>,
    dir: PathBuf,
) -> Result<Tournament> {
    let mut specs = players
        .iter()
        .map(|p| host_spec(p, t.hash.get()))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    specs.extend(t.extra_specs(&names)?);
    let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    if let Some(r) = reference
        && !names.iter().any(|n| n == r)
    {
        bail!(
            "[{experiment}] evaluation reference '{r}' is not a player (players: {})",
            names.join(", ")
        );
    }
    let limit = t.limit.search_limit();
    let mut game = GameSettings::new(limit);
    // cutechess-cli's usual adjudication for engine testing.
    game.adjudication = Adjudication {
        resign: Some(ResignRule {
            score_cp: 1000,
            moves: 3,
        }),
        draw: Some(DrawRule {
            move_number: 40,
            score_cp: 10,
            moves: 8,
        }),
        max_moves: Some(250),
    };
    let mut config = TournamentConfig::new(specs, game);
    config.format = if t.pairs.is_empty() {
        TournamentFormat::RoundRobin
    } else {
        let index = |n: &String| {
            names
                .iter()
                .position(|x| x == n)
                .ok_or_else(|| anyhow!("[{experiment}] tournament.pairs: '{n}' is not a player"))
        };
        TournamentFormat::Pairs(
            t.pairs
                .iter()
                .map(|[a, b]| Ok((index(a)?, index(b)?)))
                .collect::<Result<_>>()?,
        )
    };
    config.openings =
        openings::read_openings(Path::new(&t.openings)).map_err(anyhow::Error::msg)?;
    config.opening_order = OpeningOrder::Random;
    config.seed = t.seed;
    config.rounds = t.rounds.get() as usize;
    config.concurrency = t.concurrency as usize;
    config.event = format!("trainer run: {experiment}");
    Ok(Tournament { dir, config, names })
}

/// What one batch of a tournament played: its games and its engines' failures.
#[derive(Serialize, Deserialize)]
struct BatchRecord {
    games: Vec<TournamentGame>,
    failures: Vec<Failures>,
}

/// Plays (or finds played) batch `i` of `n` of the tournament into its own folder in the
/// tournament's (`batch-I-of-N`, its own PGN and `done.json`).
fn tournament_batch(
    experiment: &str,
    tournament: &Tournament,
    (i, n): (usize, usize),
    (progress, lookup): (bool, &Lookup),
) -> Result<BatchRecord> {
    let dir = tournament.dir.join(format!("batch-{i}-of-{n}"));
    lookup.stage(&dir, None, Some, || {
        let mut config = tournament.config.clone();
        config.batch = (i, n);
        let pgn_path = dir.join("games.pgn");
        // A batch cut short is played again from the start.
        if pgn_path.exists() {
            std::fs::remove_file(&pgn_path)
                .with_context(|| format!("cannot remove {}", pgn_path.display()))?;
        }
        config.pgn = Some(pgn_path.clone());
        eprintln!(
            "==> [{experiment}] tournament batch {} of {n}: {} games, into {}",
            i + 1,
            config.batch_pairs(config.batch).len() * 2,
            pgn_path.display()
        );
        let outcome = tournament::run(&config, progress).map_err(anyhow::Error::msg)?;
        Ok(BatchRecord {
            games: outcome.games,
            failures: outcome.failures,
        })
    })
}

/// Batch `batch` of the tournament of evaluation `ev` (`trainer run --stage
/// eval:EXPERIMENT:EVALUATION:BATCH`, one task of a Slurm array job).
pub fn evaluate_batch(
    experiment: &str,
    ev: &Evaluation,
    players: &[Player],
    out_root: &Path,
    (batch, lookup): (usize, &Lookup),
) -> Result<()> {
    let t = ev
        .tournament
        .as_ref()
        .filter(|t| batch < t.batch_count())
        .ok_or_else(|| anyhow!("evaluation '{}' has no tournament batch {batch}", ev.name))?;
    let digests = player_digests(players)?;
    let reference = reference_of(ev, players);
    let dir = tournament_dir(experiment, t, &digests, reference.as_deref(), out_root)?;
    let n = t.batch_count();
    if lookup.probing() {
        // Done when the whole tournament is, or the batch is.
        if lookup.done::<TournamentRecord>(&dir).is_ok() {
            return Ok(());
        }
        let batch_dir = dir.join(format!("batch-{batch}-of-{n}"));
        return lookup.done::<BatchRecord>(&batch_dir).map(|_| ());
    }
    let tournament = tournament_setup(experiment, t, players, reference.as_deref(), dir)?;
    tournament_batch(experiment, &tournament, (batch, n), (false, lookup)).map(|_| ())
}

fn tournament_stage(
    experiment: &str,
    t: &TournamentTable,
    players: &[Player],
    digests: &[(String, String)],
    reference: Option<&str>,
    out_root: &Path,
    (progress, lookup): (bool, &Lookup),
) -> Result<TournamentRecord> {
    let dir = tournament_dir(experiment, t, digests, reference, out_root)?;
    let what = format_args!("[{experiment}] tournament");
    lookup.stage(&dir.clone(), Some(what), Some, || {
        let tournament = tournament_setup(experiment, t, players, reference, dir)?;
        let dir = &tournament.dir;
        let names = &tournament.names;
        let pgn_path = dir.join("games.pgn");
        let n = t.batch_count();
        eprintln!(
            "==> [{experiment}] tournament: {} players, {} games ({}){}, into {}",
            names.len(),
            tournament.config.total_games(),
            tournament.config.game.limits[0].go_command(),
            match n {
                1 => String::new(),
                n => format!(" in {n} batches"),
            },
            pgn_path.display()
        );
        let outcome = play(experiment, &tournament, n, &pgn_path, (progress, lookup))?;
        let config = &tournament.config;
        let games: Vec<GameResult> = outcome
            .games
            .iter()
            .filter_map(|g| {
                Some(GameResult {
                    white: names[g.white].clone(),
                    black: names[g.black].clone(),
                    white_score: g.record.outcome.white_score()?,
                })
            })
            .collect();
        let anchor = match reference {
            Some(name) => Anchor::Player {
                name: name.to_string(),
                rating: 0.0,
            },
            None => Anchor::PoolAverage(0.0),
        };
        // A degenerate tournament (say, the reference lost every game) has no finite ratings; the
        // report says why instead of failing the whole run. Pairs are rated head to head only.
        let (fitted, fit_note) = if !t.pairs.is_empty() {
            (None, String::new())
        } else {
            match rating::fit(&games, anchor, FitOptions::default()) {
                Ok(f) => (Some(f), String::new()),
                Err(e) => (None, format!("\nNo ratings: {e}.\n")),
            }
        };
        let ratings: Vec<RatedPlayer> = fitted
            .iter()
            .flat_map(|f| f.players.iter())
            .map(|p| RatedPlayer {
                name: p.name.clone(),
                elo: p.rating.unwrap_or(f64::NAN),
                error95: p.error().unwrap_or(f64::NAN),
                bound: p.bound,
                games: p.games,
                score_percent: p.score_percent(),
                is_reference: Some(p.name.as_str()) == reference,
            })
            .collect();
        let mut summary = summary_of(&outcome, config, &pgn_path);
        summary.push_str(&fit_note);
        let pairs = t
            .pairs
            .iter()
            .filter_map(|[a, b]| rating::pairwise(&games, b, a))
            .map(|p| PairResult {
                a: p.b,
                b: p.a,
                wins: p.wins,
                draws: p.draws,
                losses: p.losses,
                elo: p.elo,
                error95: p.error,
                los: p.los,
            })
            .collect();
        Ok(TournamentRecord {
            ratings,
            summary,
            pairs,
        })
    })
}

/// Plays `tournament` into `pgn_path`: whole, or in its `n` batches one after another (each
/// found played when done), merged in schedule order.
fn play(
    experiment: &str,
    tournament: &Tournament,
    n: usize,
    pgn_path: &Path,
    (progress, lookup): (bool, &Lookup),
) -> Result<TournamentOutcome> {
    let names = &tournament.names;
    Ok(if n == 1 {
        // A tournament cut short is played again from the start: remove its partial PGN.
        if pgn_path.exists() {
            std::fs::remove_file(pgn_path)
                .with_context(|| format!("cannot remove {}", pgn_path.display()))?;
        }
        let mut config = tournament.config.clone();
        config.pgn = Some(pgn_path.to_path_buf());
        tournament::run(&config, progress).map_err(anyhow::Error::msg)?
    } else {
        let mut games = Vec::new();
        let mut failures = vec![Failures::default(); names.len()];
        for i in 0..n {
            let batch = tournament_batch(experiment, tournament, (i, n), (progress, lookup))?;
            games.extend(batch.games);
            for (f, b) in failures.iter_mut().zip(batch.failures) {
                *f += b;
            }
        }
        games.sort_by_key(|g| g.number);
        tournament::write_pgn(pgn_path, &tournament.config, &games)
            .with_context(|| format!("cannot write {}", pgn_path.display()))?;
        TournamentOutcome {
            players: names.clone(),
            games,
            failures,
        }
    })
}

/// The tournament's Markdown summary: each pairing's W/D/L and score, the games' count and
/// limit, the engines' failures and the PGN's path.
fn summary_of(outcome: &TournamentOutcome, config: &TournamentConfig, pgn_path: &Path) -> String {
    let names = &outcome.players;
    let mut summary =
        String::from("| Pairing | W | D | L | Score |\n| --- | ---: | ---: | ---: | ---: |\n");
    for r in outcome.pairing_results() {
        summary.push_str(&format!(
            "| {} vs {} | {} | {} | {} | {:.1}% |\n",
            names[r.first],
            names[r.second],
            r.wins,
            r.draws,
            r.losses,
            100.0 * r.points() / r.games().max(1) as f64
        ));
    }
    let failures: Vec<String> = outcome
        .failures
        .iter()
        .enumerate()
        .filter(|(_, f)| f.total() > 0)
        .map(|(i, f)| {
            format!(
                "{}: {} crash(es), {} time loss(es), {} illegal move(s), {} stall(s)",
                names[i], f.crashes, f.time_forfeits, f.illegal_moves, f.stalls
            )
        })
        .collect();
    summary.push_str(&format!(
        "\n{} games at `{}`; engine failures: {}. Games: `{}`.\n",
        outcome.games.len(),
        config.game.limits[0].go_command(),
        if failures.is_empty() {
            "none".to_string()
        } else {
            failures.join("; ")
        },
        pgn_path.display()
    ));
    summary
}

fn puzzle_stage(
    experiment: &str,
    pz: &PuzzlesTable,
    player: &Player,
    digest: &str,
    out_root: &Path,
    (progress, lookup): (bool, &Lookup),
) -> Result<PuzzleScore> {
    let dir = StageKey::puzzles(pz, digest, out_root)?.dir(out_root, &player.name);
    let what = format_args!("[{experiment}] puzzles {}", player.name);
    let mut score = lookup.stage(&dir, Some(what), Some, || {
        let mut all = puzzles::read_puzzles(Path::new(&pz.file)).map_err(anyhow::Error::msg)?;
        if let Some(n) = pz.count {
            all.truncate(n.get() as usize);
        }
        eprintln!(
            "==> [{experiment}] puzzles {}: {} puzzles",
            player.name,
            all.len()
        );
        let spec = host_spec(player, 16)?;
        let report = puzzles::solve_all(
            &spec,
            &all,
            pz.limit.search_limit(),
            pz.threads as usize,
            progress,
        )
        .map_err(anyhow::Error::msg)?;
        let total = report.total();
        Ok(PuzzleScore {
            name: player.name.clone(),
            accuracy: total.accuracy(),
            correct: total.correct,
            answers: total.answers,
            solved: total.solved,
            puzzles: total.puzzles,
        })
    })?;
    // A score found done names the player as this run does.
    score.name = player.name.clone();
    Ok(score)
}
