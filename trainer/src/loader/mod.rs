//! The parallel batch loader: training files in, encoded batches out, while training runs.
//!
//! One streaming machinery ([`Loader`]) for every kind of example; what differs, a position
//! ([`Positions`], the score method's
//! [`SparseBatch`](crate::loader::batch::SparseBatch)es) or a PQR triplet ([`Triplets`],
//! [`TripletBatch`]es), is the small trait [`Examples`].
//!
//! ```text
//!  files ──units──▶ streams (rayon: read, decode, filter) ──▶ shuffle buffer ──▶ batches
//!                                                    (rayon: encode through the plugins)
//!                                                          ──▶ bounded queue ──▶ consumer
//! ```
//!
//! - Every input file is cut into *units* (about `unit_bytes`, on record boundaries: whole
//!   binpack chunks, whole 40-byte records, whole lines; see [`crate::data::units`]). Units of all files
//!   are read in an order that mixes the files: shuffled per epoch with the seed when shuffling,
//!   else interleaved in proportion to the files' sizes.
//! - `streams` units are open at a time. In each round every open stream reads up to
//!   `read_ahead` records on the rayon pool (decoding and filtering in parallel), while the
//!   batches completed in the previous round are encoded on the same pool; then the new examples
//!   go into the shuffle buffer in stream order.
//! - The shuffle buffer holds `shuffle_buffer` examples; each new one replaces a random one,
//!   which goes out. Examples leave in batches of `batch_size`, each encoded (both perspectives,
//!   through the feature plugins) by all pool threads at once, then sent into a queue of `queue`
//!   batches. The producer blocks when the queue is full: loading runs ahead of training by at
//!   most that much.
//!
//! Everything is decided in one producer thread in a fixed order and each unit's random skips
//! have their own seeded stream, so with one seed the batches are identical from run to run
//! whatever the number of threads.
//!
//! Memory is bounded whatever the input size: `streams` × (a binpack chunk, ~1 MiB, or the
//! read buffers) + `streams × read_ahead + shuffle_buffer` samples (about 100 bytes each) +
//! encoded batches (`batch_size` × (8 × active indices + 14) bytes each): the `queue`, one
//! waiting to go in, and those of one round (`streams × read_ahead / batch_size + 1`). With the
//! defaults and `all+ph+pv` that is about 70 MB (measured: a 1 GB `.bin` and a 200 MB one need
//! the same).
//!
//! Files: [`batch`] (the sparse batch of encoded positions), [`config`] (inputs, units, settings), [`examples`] (the trait), [`positions`] and
//! [`triplets`] (its two kinds), `producer` (the thread that does the above), `background` (the
//! bounded queue it sends through, also used by the trainer to prefetch tensors), [`report`].

mod background;
pub mod batch;
pub mod config;
pub mod examples;
pub mod positions;
mod producer;
pub mod report;
pub mod triplets;

use anyhow::Result;
use plugin_api::FeatureSet;

pub use background::MAX_THREADS;
pub(crate) use background::{Background, worker_pool};
pub use config::{Input, LoaderConfig};
pub use examples::Examples;
pub use positions::Positions;
pub use report::{LoaderError, LoaderReport};
pub use triplets::{Triplet, TripletBatch, Triplets, triplet};

use producer::Producer;

/// Batches of examples of kind `K` from files, produced on a background thread. Iterate it;
/// dropping it stops the producer.
pub struct Loader<K: Examples> {
    queue: Background<K::Batch, LoaderError, LoaderReport>,
}

/// The loader of positions ([`SparseBatch`](crate::loader::batch::SparseBatch)es), for the score
/// method.
pub type BatchLoader = Loader<Positions>;

/// The loader of PQR triplets ([`TripletBatch`]es), for the PQR method.
pub type TripletLoader = Loader<Triplets>;

impl<K: Examples> Loader<K> {
    /// Starts loading. Fails at once for a bad configuration or an input that cannot be opened.
    pub fn new(config: LoaderConfig, set: FeatureSet) -> Result<Self> {
        config.check()?;
        let (units, sizes) = config::units_of(&config.inputs, config.unit_bytes)?;
        let pool = worker_pool(K::NAME, config.threads)?;
        let queue = Background::spawn(K::NAME, config.queue, move |out| {
            let producer = Producer::<K> {
                config,
                set,
                units,
                sizes,
                pool,
                out,
            };
            let _ = producer.produce();
        })?;
        Ok(Loader { queue })
    }

    /// A snapshot of the counts.
    pub fn report(&self) -> LoaderReport {
        self.queue.report()
    }
}

impl<K: Examples> Iterator for Loader<K> {
    type Item = Result<K::Batch, LoaderError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.queue.next()
    }
}
