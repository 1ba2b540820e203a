fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args[2].parse().unwrap();
    let path = std::path::Path::new(&args[1]);
    let f = trainer::data::Format::from_path(path).unwrap();
    let mut w = trainer::data::create_writer(path, f).unwrap();
    for s in trainer::data::synthetic::random_games(1).take(n) { w.write(&s).unwrap(); }
    w.finish().unwrap();
}
