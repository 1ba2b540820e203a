//! `trainer run`: the experiment manifest executed end to end — data, training, export,
//! tournaments, puzzles and reports — with every stage cached under a key of its inputs.

pub mod cache;
pub mod engine_net;
pub mod evaluate;
pub mod executor;
pub mod ladder;
pub mod lookup;
pub mod manifest;
pub mod options;
pub mod prefix;
pub mod records;
pub mod report;
pub mod slurm;
pub mod stage_key;
pub mod stage_kind;
pub mod stages;
