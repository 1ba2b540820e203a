//! # trainer
//!
//! The training side of the project. Today it holds the sparse batch encoding that every
//! training step consumes; data readers, the parallel batch loader, the tch model, training,
//! export and the experiment runner are the subjects of their own issues.

pub mod batch;
