//! A rung of a data ladder (`train_positions = N`): the first N training positions of a
//! dataset, in the dataset's order, written once into a stage folder of their own that every
//! network of the rung trains on. The rungs of one dataset are nested prefixes of it: a
//! smaller rung's positions are the first ones of every larger rung's.
//!
//! The rung is cut inside the training stage that first needs it (under either executor), held
//! by the folder's lock, so training runs of one rung started at once cut it once; its key is
//! the identity of the dataset's files and N, so a rerun finds it done.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cache::{done, read_path, stored_path};
use super::lookup::Lookup;
use super::stage_key::StageKey;
use crate::data::score_units;
use crate::data::{self, Format, ReadOptions};
use nnue::units::ScoreUnits;

/// What a cut rung's stage records.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RungRecord {
    /// The rung's training file (relative to the output folder when inside it).
    train: PathBuf,
    /// The positions it holds.
    positions: u64,
}

/// The stage folder of the first `n` positions of `dataset`'s training files `train`: its
/// training file is [`RUNG_FILE`] inside.
pub fn rung_dir(dataset: &str, train: &[PathBuf], n: u64, out: &Path) -> Result<PathBuf> {
    Ok(StageKey::first_positions(train, n, out)?.dir(out, &format!("{dataset}-first{n}")))
}

/// Whether the rung in its stage folder `dir` ([`rung_dir`]) is cut, as a run finds it.
pub fn is_cut(dir: &Path) -> bool {
    done::<RungRecord>(dir).is_some()
}

/// A rung's training file in its stage folder.
pub const RUNG_FILE: &str = "train.binpack";

/// The training file holding the first `n` positions of `dataset`'s training files `train`
/// (read in order) in a stage folder under the output folder `out`, cut now unless a run cut
/// it before (`lookup` finds it done, or only probes). `experiment` names the stage in
/// messages. Fewer than `n` positions in the files is an error naming the dataset.
pub fn first_positions(
    experiment: &str,
    dataset: &str,
    train: &[PathBuf],
    n: u64,
    (out, lookup): (&Path, &Lookup),
) -> Result<PathBuf> {
    let dir = rung_dir(dataset, train, n, out)?;
    let what = format_args!("[{experiment}] data: the first {n} positions of {dataset}");
    let record = lookup.stage(&dir, Some(what), Some, || {
    let file = dir.join(RUNG_FILE);
    eprintln!(
        "==> [{experiment}] data: the first {n} positions of {dataset} into {}",
        file.display()
    );
    let partial = dir.join(format!("{RUNG_FILE}.partial-{}", std::process::id()));
    let (written, units) = copy_first(train, n, &partial)?;
    if written < n {
        let _ = std::fs::remove_file(&partial);
        bail!(
            "train_positions: dataset '{dataset}' holds {written} training positions, fewer than {n}"
        );
    }
    std::fs::rename(&partial, &file)
        .with_context(|| format!("cannot rename {} to {}", partial.display(), file.display()))?;
    score_units::record(&file, units)?;
    Ok(RungRecord {
        train: stored_path(&file, out),
        positions: n,
    })
    })?;
    Ok(read_path(&record.train, out))
}

/// Copies the first `n` samples of `inputs` (in order) into the binpack file `out`; returns
/// how many it copied (fewer than `n` when the inputs end first) and the units of their scores
/// (the inputs must agree).
fn copy_first(inputs: &[PathBuf], n: u64, out: &Path) -> Result<(u64, ScoreUnits)> {
    let mut writer = data::create_writer(out, Format::Binpack)?;
    let mut written = 0;
    let mut units = None;
    'files: for path in inputs {
        let format = Format::resolve(None, path).map_err(anyhow::Error::msg)?;
        let (these, _) = score_units::units_of(path, format).map_err(anyhow::Error::msg)?;
        if units.is_some_and(|u| u != these) {
            bail!(
                "{}: its scores are in {these}, the files before it's in {}",
                path.display(),
                units.unwrap_or(these)
            );
        }
        units = Some(these);
        for sample in data::open_reader(path, format, None, ReadOptions::default())? {
            if written == n {
                break 'files;
            }
            writer.write(&sample?)?;
            written += 1;
        }
    }
    writer.finish()?;
    Ok((written, units.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Sample;

    fn read_all(path: &Path) -> Vec<Sample> {
        data::first_samples(path, None, usize::MAX, None).unwrap()
    }

    #[test]
    fn rungs_are_nested_prefixes_cut_once_and_a_short_dataset_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("runs");
        let source = dir.path().join("all.binpack");
        let samples: Vec<Sample> = crate::data::synthetic::random_games(5).take(300).collect();
        let mut w = data::create_writer(&source, Format::Binpack).unwrap();
        for s in &samples {
            w.write(s).unwrap();
        }
        w.finish().unwrap();
        let whole = read_all(&source);
        let lookup = Lookup::compute();
        let o = (out.as_path(), &lookup);
        let small = first_positions("t", "d", std::slice::from_ref(&source), 100, o).unwrap();
        let large = first_positions("t", "d", std::slice::from_ref(&source), 250, o).unwrap();
        assert_eq!(read_all(&small), whole[..100]);
        assert_eq!(read_all(&large), whole[..250]);
        // A second run finds the rung done (the file is not written again).
        let before = std::fs::metadata(&small).unwrap().modified().unwrap();
        let again = first_positions("t", "d", std::slice::from_ref(&source), 100, o).unwrap();
        assert_eq!(again, small);
        assert_eq!(
            std::fs::metadata(&again).unwrap().modified().unwrap(),
            before
        );
        let err = first_positions("t", "d", std::slice::from_ref(&source), 301, o)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "train_positions: dataset 'd' holds 300 training positions, fewer than 301"
        );
    }
}
