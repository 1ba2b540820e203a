//! How many workers a parallel stage runs: the number asked for, or with 0 one per core. Every
//! `threads` and `concurrency` setting of the project follows it (games in a tournament,
//! puzzle solvers, data generation, loaders), so one manifest fills a 2-core laptop and a
//! 16-core GPU machine alike without an edit.

/// `requested`, or with 0 the number of cores this process may use (at least 1).
pub fn workers(requested: usize) -> usize {
    match requested {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_asks_for_every_core_and_a_number_for_itself() {
        let cores = std::thread::available_parallelism().unwrap().get();
        assert_eq!(workers(0), cores);
        assert_eq!((workers(1), workers(7)), (1, 7));
    }
}
