//! How a run looks its stages up ([`super::cache`] says where they live and whether they are
//! done), in one driver, [`Lookup::stage`], that every stage with a folder goes through (data,
//! rungs, training runs, speed, tournaments and their batches, puzzles): finding it done,
//! computing it when it is not, or only probing (an executor asking what is missing,
//! [`Missing`]); holding its folder while computing it ([`StageLock`]), so that two runs of one
//! manifest at once never compute one stage together; marking it done; and remembering the
//! stages met (the inputs a report lists).

use anyhow::Result;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::cache::{done, mark_done};

/// A stage's folder held by one process: an exclusive lock on a file in it, released when
/// dropped (also when the process dies), so that two runs of one manifest at once (two local
/// runs, two Slurm submissions) never compute the same stage together: the second waits, then
/// finds it done.
#[derive(Debug)]
pub struct StageLock {
    _file: std::fs::File,
}

/// Holds `dir` (created if needed) for this process under the lock file `name`, waiting while
/// another process holds it.
pub fn lock_stage(dir: &Path, name: &str) -> Result<StageLock> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!(
                "==> waiting for another run that is computing {}",
                dir.display()
            );
            file.lock()
                .with_context(|| format!("cannot lock {}", path.display()))?;
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(anyhow::Error::new(e).context(format!("cannot lock {}", path.display())));
        }
    }
    Ok(StageLock { _file: file })
}

/// What [`Lookup::claim_where`] found: the stage done, or its folder held to compute it.
#[derive(Debug)]
enum Claim<T> {
    /// The stage's record.
    Done(T),
    /// Not done: the folder is this process's until the lock is dropped.
    Held(StageLock),
}

/// A stage that a probe found not done (see [`Lookup::probe`]): its folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing(pub PathBuf);

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stage {} is not done", self.0.display())
    }
}

impl std::error::Error for Missing {}

/// How a run looks its stages up: computing a stage that is not done, or only probing (an
/// executor asking what is missing without computing anything); and the folders of the done
/// stages it met, in order (the inputs of a report).
#[derive(Debug, Default)]
pub struct Lookup {
    probe: bool,
    met: std::sync::Mutex<Vec<PathBuf>>,
}

impl Lookup {
    /// Stages that are not done are computed.
    pub fn compute() -> Self {
        Lookup::default()
    }

    /// A stage that is not done is an error [`Missing`] instead of being computed.
    pub fn probe() -> Self {
        Lookup {
            probe: true,
            ..Lookup::default()
        }
    }

    /// Whether this lookup only probes.
    pub fn probing(&self) -> bool {
        self.probe
    }

    /// The record of the stage in `dir` if it is done; `None` if not (to compute it), or the
    /// error [`Missing`] when probing.
    pub fn done<T: DeserializeOwned>(&self, dir: &Path) -> Result<Option<T>> {
        self.done_where(dir, Some)
    }

    /// [`done`](Self::done) of a stage whose record counts only if `accept` keeps it.
    fn done_where<T: DeserializeOwned>(
        &self,
        dir: &Path,
        accept: impl Fn(T) -> Option<T>,
    ) -> Result<Option<T>> {
        match done(dir).and_then(accept) {
            Some(record) => {
                self.met(dir);
                Ok(Some(record))
            }
            None if self.probe => Err(Missing(dir.to_path_buf()).into()),
            None => Ok(None),
        }
    }

    /// Says that the stage in `dir` was found done (`what`: which one), unless probing, where
    /// finding stages is all a run does, or this run met it before.
    fn say_cached(&self, dir: &Path, what: std::fmt::Arguments) {
        if !self.probe && !self.met_before(dir) {
            eprintln!("==> {what} (cached, {})", dir.display());
        }
    }

    /// Whether the stage in `dir` was met before the lookup that just met it: said already
    /// (a later stage of the same run finds the stages it reads done; one line each is enough).
    fn met_before(&self, dir: &Path) -> bool {
        let met = self.met.lock().unwrap_or_else(|e| e.into_inner());
        met.iter().filter(|d| d.as_path() == dir).count() > 1
    }

    /// The record of the stage in `dir` if it is done and `accept` keeps it (a training run
    /// finished with fewer epochs than now asked for is not done: it resumes); else its folder
    /// held for this process ([`lock_stage`]), looked at again once held (a run that held it
    /// before may have finished it). Probing, a stage not done is the error [`Missing`] and
    /// nothing is locked.
    fn claim_where<T: DeserializeOwned>(
        &self,
        dir: &Path,
        accept: impl Fn(T) -> Option<T>,
    ) -> Result<Claim<T>> {
        if let Some(record) = self.done_where(dir, &accept)? {
            return Ok(Claim::Done(record));
        }
        let lock = lock_stage(dir, ".lock")?;
        Ok(match self.done_where(dir, &accept)? {
            Some(record) => Claim::Done(record),
            None => Claim::Held(lock),
        })
    }

    /// The one way a stage is run: its record when it is done (and `accept` keeps it; said
    /// once, when `what` names the stage), else its folder held ([`lock_stage`]) and looked at
    /// again, then `compute` makes the record, with which the stage is marked done. Probing, a
    /// stage that is not done is the error [`Missing`] and nothing is computed or locked.
    pub fn stage<T: Serialize + DeserializeOwned>(
        &self,
        dir: &Path,
        what: Option<std::fmt::Arguments>,
        accept: impl Fn(T) -> Option<T>,
        compute: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        match self.claim_where(dir, accept)? {
            Claim::Done(record) => {
                if let Some(what) = what {
                    self.say_cached(dir, what);
                }
                Ok(record)
            }
            Claim::Held(_held) => {
                let record = compute()?;
                self.mark_done(dir, &record)?;
                Ok(record)
            }
        }
    }

    /// Marks the stage in `dir` finished ([`mark_done`]) and counts it as met.
    fn mark_done(&self, dir: &Path, record: &impl Serialize) -> Result<()> {
        mark_done(dir, record)?;
        self.met(dir);
        Ok(())
    }

    /// Counts the folders `dirs` as met again (a stage's record read from the
    /// [`Handover`](super::records::Handover) instead of looked up).
    pub fn met_again(&self, dirs: &[PathBuf]) {
        let mut met = self.met.lock().unwrap_or_else(|e| e.into_inner());
        met.extend_from_slice(dirs);
    }

    fn met(&self, dir: &Path) {
        let mut met = self.met.lock().unwrap_or_else(|e| e.into_inner());
        met.push(dir.to_path_buf());
    }

    /// The folders of the done stages met since `from` (an earlier [`count`](Self::count)),
    /// each once, in the order first met.
    pub fn met_since(&self, from: usize) -> Vec<PathBuf> {
        let met = self.met.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<PathBuf> = Vec::new();
        for dir in met.get(from..).unwrap_or_default() {
            if !out.contains(dir) {
                out.push(dir.clone());
            }
        }
        out
    }

    /// How many done stages were met so far.
    pub fn count(&self) -> usize {
        self.met.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}
