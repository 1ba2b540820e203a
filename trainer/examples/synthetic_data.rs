//! Writes seeded random-game training samples (`trainer::data::synthetic`) to a file, to try the
//! trainer without real data:
//!
//! ```sh
//! cargo run --release -p trainer --example synthetic_data -- train.binpack 1000000 1
//! cargo run --release -p trainer --example synthetic_data -- val.binpack 100000 2
//! ```
//!
//! Arguments: the file (its extension gives the format), the number of samples, the seed.

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        return Err("usage: synthetic_data FILE SAMPLES SEED".into());
    }
    let path = std::path::Path::new(&args[1]);
    let n: usize = args[2].parse().map_err(|e| format!("samples: {e}"))?;
    let seed: u64 = args[3].parse().map_err(|e| format!("seed: {e}"))?;
    let format = trainer::data::Format::resolve(None, path).map_err(|e| e.to_string())?;
    let mut w = trainer::data::create_writer(path, format).map_err(|e| e.to_string())?;
    for s in trainer::data::synthetic::random_games(seed).take(n) {
        w.write(&s).map_err(|e| e.to_string())?;
    }
    w.finish().map_err(|e| e.to_string())?;
    Ok(())
}
