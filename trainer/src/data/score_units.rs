//! The units of a data file's scores, a property of the data: centipawns (everything this
//! project writes: host's evaluations, UCI scores, Stockfish `.nnue` labels converted as its UCI
//! does) or Stockfish's internal units (what Stockfish's own tools and nnue-pytorch's data
//! hold, and what nnue-pytorch's scalings and skips assume). Nothing in the formats says
//! which, so:
//!
//! - **recorded** where the project writes a file: `FILE.units` beside it, one line with the
//!   units' name ([`record`]); a `trainer gensfen` output without one (written before the
//!   record existed) has its progress record, and is centipawns;
//! - **inferred** where the project reads another tool's file: Stockfish's binary formats
//!   (`.bin`, `.binpack`) hold its internal units, the thesis's text formats centipawns;
//! - **declared** by the training setting `score_units`, which wins, with a one-line warning
//!   where it disagrees with a file's recorded or inferred units.
//!
//! The training run reads the scores in the one units it settles on: the loss's win-rate
//! scales, the WDL skip and the exported network's recorded units all follow them.

use std::path::{Path, PathBuf};

use nnue::units::{ScoreUnits, material_of};
use plugin_api::Role;

use super::Format;
use super::sample::Sample;

/// Where a file's units come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitsSource {
    /// Written beside it by this project.
    Recorded,
    /// Taken from its format (another tool's file).
    Inferred,
}

/// The record of `path`'s units: `FILE.units`.
pub fn record_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".units");
    PathBuf::from(name)
}

/// Writes the record of `path`'s units beside it.
pub fn record(path: &Path, units: ScoreUnits) -> anyhow::Result<()> {
    crate::atomic_file::write_atomic(&record_path(path), format!("{units}\n").as_bytes())
}

/// The units of `path`'s scores (a file of `format`) and where they come from: its record, a
/// `trainer gensfen` progress record (centipawns), or its format. A record that does not name
/// units is an error naming the file.
pub fn units_of(path: &Path, format: Format) -> Result<(ScoreUnits, UnitsSource), String> {
    let record = record_path(path);
    if let Ok(text) = std::fs::read_to_string(&record) {
        let units = text
            .trim()
            .parse::<ScoreUnits>()
            .map_err(|e| format!("{}: {e}", record.display()))?;
        return Ok((units, UnitsSource::Recorded));
    }
    let mut progress = path.as_os_str().to_owned();
    progress.push(".progress");
    if Path::new(&progress).is_file() {
        return Ok((ScoreUnits::Centipawns, UnitsSource::Recorded));
    }
    let units = match format {
        Format::Bin | Format::Binpack => ScoreUnits::Stockfish,
        Format::Text | Format::Compact => ScoreUnits::Centipawns,
    };
    Ok((units, UnitsSource::Inferred))
}

/// The units of the scores of the files `paths` (each of `format`, or of its extension's), which
/// must agree; centipawns for none. An error names the files that differ.
pub fn units_of_files(paths: &[PathBuf], format: Option<Format>) -> Result<ScoreUnits, String> {
    let mut found: Option<(ScoreUnits, &PathBuf)> = None;
    for path in paths {
        let format = Format::resolve(format, path).map_err(|e| e.to_string())?;
        let (units, _) = units_of(path, format)?;
        match found {
            Some((u, first)) if u != units => {
                return Err(format!(
                    "the data's scores are in different units: {} in {}, {} in {} (convert them with `trainer convert --out-units`, or declare score_units)",
                    u,
                    first.display(),
                    units,
                    path.display()
                ));
            }
            _ => found = found.or(Some((units, path))),
        }
    }
    Ok(found.map_or(ScoreUnits::Centipawns, |(u, _)| u))
}

/// The material count of `sample`'s board, for the units whose pawn depends on it.
pub fn material(sample: &Sample) -> i32 {
    let count = |r: Role| sample.board.by_role[r.index()].count_ones();
    material_of(
        count(Role::Pawn),
        count(Role::Knight),
        count(Role::Bishop),
        count(Role::Rook),
        count(Role::Queen),
    )
}

/// Scores at or beyond this are mates (or Stockfish's stand-ins for them) in any units: kept
/// as they are by a conversion.
pub const MATE_SCORE: i16 = 30_000;

/// `sample`'s score, in `from`, written in `to` (through centipawns, rounded, short of a mate's
/// score); mate scores unchanged.
pub fn convert(sample: &Sample, from: ScoreUnits, to: ScoreUnits) -> i16 {
    if from == to || sample.score.unsigned_abs() >= MATE_SCORE as u16 {
        return sample.score;
    }
    let material = material(sample);
    let cp = from.centipawns_at(i32::from(sample.score), material);
    let limit = i32::from(MATE_SCORE) - 1;
    to.from_centipawns_at(cp, material).clamp(-limit, limit) as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_beats_the_format_and_the_format_decides_for_other_tools_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("d.binpack");
        std::fs::write(&file, b"").unwrap();
        assert_eq!(
            units_of(&file, Format::Binpack).unwrap(),
            (ScoreUnits::Stockfish, UnitsSource::Inferred)
        );
        let text = dir.path().join("d.txt");
        assert_eq!(
            units_of(&text, Format::Text).unwrap().0,
            ScoreUnits::Centipawns
        );
        // A gensfen output: its progress record says the project wrote it.
        std::fs::write(dir.path().join("d.binpack.progress"), b"{}").unwrap();
        assert_eq!(
            units_of(&file, Format::Binpack).unwrap(),
            (ScoreUnits::Centipawns, UnitsSource::Recorded)
        );
        record(&file, ScoreUnits::Stockfish).unwrap();
        assert_eq!(
            units_of(&file, Format::Binpack).unwrap(),
            (ScoreUnits::Stockfish, UnitsSource::Recorded)
        );
        std::fs::write(record_path(&file), b"furlongs\n").unwrap();
        let e = units_of(&file, Format::Binpack).unwrap_err();
        assert!(
            e.contains("d.binpack.units") && e.contains("furlongs"),
            "{e}"
        );
    }

    #[test]
    fn scores_convert_through_centipawns_and_mates_stay() {
        let mut s = Sample::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        s.score = 100;
        let (cp, sf, wdl) = (
            ScoreUnits::Centipawns,
            ScoreUnits::Stockfish,
            ScoreUnits::StockfishWdl,
        );
        assert_eq!(convert(&s, cp, sf), 361);
        assert_eq!(convert(&s, cp, wdl), 382);
        assert_eq!(convert(&s, cp, cp), 100);
        s.score = 361;
        assert_eq!(convert(&s, sf, cp), 100);
        s.score = -31_000;
        assert_eq!(convert(&s, cp, sf), -31_000, "a mate stays a mate");
        s.score = 9_000;
        assert_eq!(convert(&s, cp, sf), 29_999, "short of a mate's score");
    }
}
