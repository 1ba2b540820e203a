//! The runtime options shared by the training subcommands: `--device` and `--threads` (also
//! `trainer bench`'s), and with them `--loader-threads` and `--no-progress` (`trainer train` and
//! `trainer run`).

use clap::Args;
use tch::Device;

/// How a training command runs, apart from what it trains: where, on how many threads, with or
/// without progress bars.
#[derive(Args, Debug, Clone)]
pub struct RuntimeArgs {
    /// Loader threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = super::thread_count)]
    pub loader_threads: usize,
    /// No progress bars.
    #[arg(long)]
    pub no_progress: bool,
    /// Device and libtorch threads for training.
    #[command(flatten)]
    pub device: DeviceArg,
}

impl RuntimeArgs {
    /// Prepares the process for training (the allocator's tuning, libtorch's threads) and
    /// returns the device, checked to exist.
    pub fn start(&self) -> anyhow::Result<Device> {
        self.device.start()
    }
}

/// Where tensors live and how many CPU threads libtorch uses.
#[derive(Args, Debug, Clone)]
pub struct DeviceArg {
    /// `cpu`, `cuda` (the first GPU) or `cuda:N`.
    #[arg(long, default_value = "cpu", value_name = "DEVICE")]
    pub device: String,
    /// libtorch's CPU threads (0: libtorch's default, one per core).
    #[arg(long, default_value_t = 0, value_parser = super::thread_count)]
    pub threads: usize,
}

impl DeviceArg {
    /// Prepares the process for training (the allocator's tuning, libtorch's threads) and
    /// returns the device, checked to exist: the start of every training command.
    pub fn start(&self) -> anyhow::Result<Device> {
        trainer::train::tune_allocator();
        apply_threads(self.threads);
        self.device().map_err(anyhow::Error::msg)
    }

    /// The device, checked to exist.
    pub fn device(&self) -> Result<Device, String> {
        parse_device(&self.device)
    }

    /// The device as given.
    pub fn device_name(&self) -> &str {
        &self.device
    }
}

/// Parses `cpu`, `cuda` or `cuda:N`, failing for a GPU that libtorch cannot see.
pub fn parse_device(s: &str) -> Result<Device, String> {
    let device = match s {
        "cpu" => return Ok(Device::Cpu),
        "cuda" => Device::Cuda(0),
        _ => match s.strip_prefix("cuda:").map(str::parse::<usize>) {
            Some(Ok(i)) => Device::Cuda(i),
            _ => return Err(format!("unknown device '{s}' (cpu, cuda, cuda:N)")),
        },
    };
    let Device::Cuda(i) = device else {
        unreachable!()
    };
    let count = tch::Cuda::device_count().max(0) as usize;
    if i >= count {
        return Err(format!(
            "device '{s}' is not available: libtorch sees {count} CUDA device(s)"
        ));
    }
    Ok(device)
}

/// Sets libtorch's CPU threads (0 leaves its default).
fn apply_threads(threads: usize) {
    if threads > 0 {
        tch::set_num_threads(threads as i32);
    }
}
