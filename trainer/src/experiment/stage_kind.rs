//! The kinds of stages of a manifest run ([`super::stages::StageId::kind`]): what `[cluster]`
//! gives resources apart, below both the manifest that reads that table and the stages.

/// The kinds of stages, which `[cluster]` gives resources apart (`[cluster.train]`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StageKind {
    /// Data generation (a dataset, or one of its shards).
    Data,
    /// A training run.
    Train,
    /// An evaluation (or one batch of its tournament).
    Eval,
    /// A report or a ladder.
    Report,
}

impl StageKind {
    /// Every kind, in the order of a run.
    pub const ALL: [StageKind; 4] = [
        StageKind::Data,
        StageKind::Train,
        StageKind::Eval,
        StageKind::Report,
    ];

    /// Its name: its `[cluster.NAME]` table and the first word of its stages' names.
    pub fn name(self) -> &'static str {
        match self {
            StageKind::Data => "data",
            StageKind::Train => "train",
            StageKind::Eval => "eval",
            StageKind::Report => "report",
        }
    }
}
