//! Training: the thesis's two methods (§5.2 score target, §5.3 PQR triplets) on the float model
//! of [`crate::model`].
//!
//! - [`settings`]: every training setting, declared once (default, option, manifest key);
//! - [`config`]: a run's configuration (the recipe plus its data) and its identity;
//! - [`training_loop`]: the training loop (epochs, validation, checkpoints, resume, metrics, plots,
//!   exports, the best epoch handed over);
//! - [`loss`]: the score-target loss in WDL space (with the game-result interpolation) and the
//!   PQR loss, and the losses of the best constant predictors;
//! - [`objective`]: batches of either method on a device, one optimizer step;
//! - [`diagnostics`]: dead and saturated units, gradient norms (what shows a network that does
//!   not learn);
//! - [`optim`]: Adam (and AdamW, gradient-norm clipping) with a state that checkpoints exactly;
//! - [`schedule`]: the learning rate and λ at every step (step, cosine, one-cycle, warm-up);
//! - [`stop`]: the best epoch and training to convergence;
//! - [`psqt_init`]: the PSQT weights' starting piece values, from the blocks' geometry;
//! - [`checkpoint`]: the checkpoint file and atomic writes;
//! - [`export`]: quantization to the `host` network format, and back;
//! - [`quant`]: the quantization-error report;
//! - [`held_out`]: how a network of any trainer fits held-out scores (`trainer score`, an
//!   experiment's test loss);
//! - [`bench`](mod@bench): training throughput.

pub mod bench;
pub mod checkpoint;
pub mod config;
pub mod diagnostics;
pub mod export;
pub mod held_out;
pub mod loss;
pub mod objective;
pub mod optim;
pub mod psqt_init;
pub mod quant;
pub mod schedule;
pub mod settings;
pub mod stop;
pub mod training_loop;

/// Makes glibc keep large freed blocks for reuse instead of returning them to the system: every
/// training step allocates tensors of tens of megabytes, and mapping fresh pages for each (glibc's
/// default above 32 MiB, or after trimming) costs more than the arithmetic on them; measured on a
/// 2-core machine, steps take about half the time. Call once at the start of a program; it only
/// changes how much memory stays reserved after a peak.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is safe to call at any time.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}
