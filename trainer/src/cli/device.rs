//! The `--device` and `--threads` arguments shared by the training subcommands.

use clap::Args;
use tch::Device;

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
pub fn apply_threads(threads: usize) {
    if threads > 0 {
        tch::set_num_threads(threads as i32);
    }
}
