//! Looking at data and results: dataset statistics ([`stats`]) and scans of whole files
//! ([`scan`]), the win-rate model fit ([`wdl`]), the SVG plots every stage draws ([`plot`]) and
//! the spread of repeated runs ([`spread`]).

pub mod plot;
pub mod scan;
pub mod spread;
pub mod stats;
pub mod wdl;
