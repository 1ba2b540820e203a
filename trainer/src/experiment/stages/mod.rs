//! The stages of a manifest run: their names ([`StageId`], one struct per kind), what every
//! kind is (`Stage`: its needs, its parts, its work and the record it hands on; one file per
//! kind), and the graph the executors walk ([`graph`]).
//!
//! A stage's identity here is its place in the manifest (which dataset, which network and run,
//! which evaluation); where its output lives is decided by the content key of its inputs when
//! it runs (see [`super::stage_key`]), exactly as in a local run, so both executors share every
//! result.

mod data;
mod evaluation;
mod graph;
mod id;
mod ladder;
mod networks;
mod report;
mod stage;
mod train;

pub use graph::{Node, graph, planned_folders};
pub use id::{
    DataShard, DataStage, EvaluateBatch, EvaluateStage, LadderStage, ReportStage, StageId,
    TrainStage,
};
pub(crate) use stage::Ctx;
pub use stage::PlannedStage;
