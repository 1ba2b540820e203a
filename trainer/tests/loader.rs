//! The batch loader through the real plugins: every position once per epoch, reproducible with
//! a seed whatever the thread count, files mixed, filters and errors counted, the queue bounding
//! how far loading runs ahead.

use std::path::{Path, PathBuf};
use std::time::Duration;

use plugin_api::{FeatureSet, PluginRegistry};
use trainer::data::filter::{Filter, FilterConfig};
use trainer::data::synthetic::random_games;
use trainer::data::{self, ErrorPolicy, Format, Sample};
use trainer::loader::batch::SparseBatch;
use trainer::loader::{BatchLoader, Input, LoaderConfig, LoaderError};

fn feature_set(spec: &str) -> FeatureSet {
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    PluginRegistry::discover(Some(&dir))
        .unwrap()
        .feature_set(spec)
        .unwrap()
}

fn write(path: &Path, format: Format, samples: &[Sample]) {
    let mut w = data::create_writer(path, format).unwrap();
    for s in samples {
        w.write(s).unwrap();
    }
    w.finish().unwrap();
}

/// A position's identity in a batch: labels and both index lists.
type SampleKey = (i16, i8, u16, u8, Vec<u32>, Vec<u32>);

fn keys(batch: &SparseBatch) -> Vec<SampleKey> {
    (0..batch.len)
        .map(|i| {
            (
                batch.score[i],
                batch.result[i],
                batch.ply[i],
                batch.stm[i],
                batch.position(0, i).to_vec(),
                batch.position(1, i).to_vec(),
            )
        })
        .collect()
}

fn expected_keys(set: &FeatureSet, samples: &[Sample]) -> Vec<SampleKey> {
    let mut b = SparseBatch::with_capacity(set, samples.len());
    let mut scratch = Vec::new();
    for s in samples {
        b.push_sample(set, s, &mut scratch).unwrap();
    }
    keys(&b)
}

fn run(config: LoaderConfig, set: &FeatureSet) -> Vec<SparseBatch> {
    BatchLoader::new(config, set.clone())
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

struct LoaderData {
    _dir: tempfile::TempDir,
    files: Vec<(PathBuf, Vec<Sample>)>,
}

/// Three files in three formats; file i's scores are offset so positions can be told apart.
fn three_files() -> LoaderData {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, (name, format, n)) in [
        ("a.binpack", Format::Binpack, 6000),
        ("b.bin", Format::Bin, 2500),
        ("c.txt", Format::Text, 1500),
    ]
    .into_iter()
    .enumerate()
    {
        let samples: Vec<Sample> = random_games(100 + i as u64)
            .take(n)
            .map(|s| Sample {
                score: (s.score / 4) + 10000 * i as i16,
                // Text holds no result.
                result: if format == Format::Text {
                    None
                } else {
                    s.result
                },
                ..s
            })
            .collect();
        let path = dir.path().join(name);
        write(&path, format, &samples);
        files.push((path, samples));
    }
    LoaderData { _dir: dir, files }
}

fn config(data: &LoaderData) -> LoaderConfig {
    LoaderConfig {
        inputs: data
            .files
            .iter()
            .map(|(p, _)| Input::new(p.clone(), None).unwrap())
            .collect(),
        batch_size: 1000,
        threads: 2,
        streams: 3,
        read_ahead: 300,
        shuffle_buffer: 4000,
        seed: 7,
        filter: FilterConfig::default(),
        epochs: Some(1),
        unit_bytes: 8 << 10,
        ..LoaderConfig::default()
    }
}

#[test]
fn every_position_once_per_epoch() {
    let data = three_files();
    let set = feature_set("all+ph+pv");
    let mut expected = Vec::new();
    for (_, samples) in &data.files {
        expected.extend(expected_keys(&set, samples));
    }
    let batches = run(
        LoaderConfig {
            epochs: Some(2),
            ..config(&data)
        },
        &set,
    );
    let total: usize = batches.iter().map(|b| b.len).sum();
    assert_eq!(total, 2 * 10_000);
    assert!(batches[..batches.len() - 1].iter().all(|b| b.len == 1000));
    let mut got: Vec<SampleKey> = batches.iter().flat_map(keys).collect();
    let mut twice = expected.clone();
    twice.extend(expected);
    got.sort();
    twice.sort();
    assert_eq!(got, twice);
}

#[test]
fn one_seed_gives_the_same_batches_whatever_the_threads() {
    let data = three_files();
    let set = feature_set("all");
    let one = run(
        LoaderConfig {
            threads: 1,
            ..config(&data)
        },
        &set,
    );
    let two = run(config(&data), &set);
    assert_eq!(one, two);
    let other = run(
        LoaderConfig {
            seed: 8,
            ..config(&data)
        },
        &set,
    );
    assert_ne!(one, other);
}

#[test]
fn files_are_mixed_and_shuffled() {
    let data = three_files();
    let set = feature_set("all");
    let batches = run(config(&data), &set);
    // Each file's positions are spread over the run: every file shows up in the first half of
    // the batches and in the second half.
    let file_of = |s: i16| (s as i32 + 5000).div_euclid(10000);
    let n = batches.len();
    for file in 0..3 {
        let seen: Vec<usize> = (0..n)
            .filter(|&i| batches[i].score.iter().any(|&s| file_of(s) == file))
            .collect();
        assert!(
            seen[0] < n / 2 && *seen.last().unwrap() >= n / 2,
            "file {file}: {seen:?}"
        );
    }
    // Without shuffling, a single file comes out in order.
    let unshuffled = run(
        LoaderConfig {
            inputs: vec![Input::new(data.files[0].0.clone(), None).unwrap()],
            shuffle_buffer: 0,
            streams: 1,
            ..config(&data)
        },
        &set,
    );
    let got: Vec<SampleKey> = unshuffled.iter().flat_map(keys).collect();
    assert_eq!(got, expected_keys(&set, &data.files[0].1));
    // Shuffled, it does not.
    let shuffled = run(
        LoaderConfig {
            inputs: vec![Input::new(data.files[0].0.clone(), None).unwrap()],
            ..config(&data)
        },
        &set,
    );
    let got: Vec<SampleKey> = shuffled.iter().flat_map(keys).collect();
    assert_ne!(got, expected_keys(&set, &data.files[0].1));
}

#[test]
fn filters_are_applied_and_counted() {
    let data = three_files();
    let set = feature_set("all");
    let filter = FilterConfig {
        max_score: Some(10100),
        ..FilterConfig::quiet()
    };
    let mut loader = BatchLoader::new(
        LoaderConfig {
            filter: filter.clone(),
            ..config(&data)
        },
        set,
    )
    .unwrap();
    let total: usize = loader.by_ref().map(|b| b.unwrap().len).sum();
    let report = loader.report();
    let mut direct = Filter::new(&filter, 0);
    for (_, samples) in &data.files {
        for s in samples {
            direct.keep(s);
        }
    }
    let expect = direct.counts();
    assert_eq!(report.filter.seen, expect.seen);
    assert_eq!(report.filter.kept, expect.kept);
    assert_eq!(report.filter.in_check, expect.in_check);
    assert_eq!(report.filter.capture, expect.capture);
    assert_eq!(report.filter.score, expect.score);
    assert!(expect.in_check > 0 && expect.capture > 0 && expect.score > 0);
    assert_eq!(total as u64, expect.kept);
    assert_eq!(report.sent, expect.kept);
    assert_eq!(report.read, 10_000);
}

#[test]
fn the_queue_bounds_how_far_loading_runs_ahead() {
    let data = three_files();
    let set = feature_set("all");
    let mut loader = BatchLoader::new(
        LoaderConfig {
            queue: 2,
            batch_size: 100,
            epochs: None,
            ..config(&data)
        },
        set,
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let ahead = loader.report().batches;
    // Two in the queue, one encoded and waiting to go in.
    assert!((1..=3).contains(&ahead), "{ahead} batches ahead");
    // Cycling: more batches than one epoch holds.
    let n = loader.by_ref().take(150).count();
    assert_eq!(n, 150);
    assert!(loader.report().epoch >= 2);
    // Dropping stops the producer (the test would hang otherwise).
    drop(loader);
}

#[test]
fn bad_records_are_skipped_or_stop_the_loader() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Sample> = random_games(3).take(500).collect();
    let path = dir.path().join("x.bin");
    write(&path, Format::Bin, &samples);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[40 * 17..40 * 17 + 32].fill(0xff);
    bytes.truncate(bytes.len() - 5);
    std::fs::write(&path, &bytes).unwrap();
    let set = feature_set("all");
    let base = LoaderConfig {
        inputs: vec![Input::new(path, None).unwrap()],
        batch_size: 64,
        threads: 1,
        filter: FilterConfig::default(),
        ..LoaderConfig::default()
    };
    let mut loader = BatchLoader::new(base.clone(), set.clone()).unwrap();
    let total: usize = loader.by_ref().map(|b| b.unwrap().len).sum();
    assert_eq!(total, 498);
    let report = loader.report();
    assert_eq!(report.errors, 2);
    assert!(
        report.first_errors[0].to_string().contains("byte 680"),
        "{:?}",
        report.first_errors
    );
    let items: Vec<Result<SparseBatch, LoaderError>> = BatchLoader::new(
        LoaderConfig {
            on_error: ErrorPolicy::Fail,
            ..base
        },
        set,
    )
    .unwrap()
    .collect();
    match items.last() {
        Some(Err(LoaderError::Data(e))) => assert!(e.to_string().contains("byte 680")),
        other => panic!("expected an error, got {other:?}"),
    }
}
