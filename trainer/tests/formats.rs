//! Round trips between the formats, through the library and through `trainer convert`, and
//! malformed input reported with its place, skipped or fatal by flag, never a panic.

use std::path::{Path, PathBuf};
use std::process::Command;

use trainer::data::synthetic::random_games;
use trainer::data::{self, Format, ReadOptions, Sample};

fn write(path: &Path, format: Format, samples: &[Sample]) {
    let mut w = data::create_writer(path, format).unwrap();
    for s in samples {
        w.write(s).unwrap();
    }
    w.finish().unwrap();
}

fn read(path: &Path) -> Vec<Sample> {
    let format = Format::from_path(path).unwrap();
    data::open_reader(path, format, None, ReadOptions::default())
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

fn trainer(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn p(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn plain_to_bin_to_binpack_to_plain_keeps_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Sample> = random_games(11).take(5000).collect();
    let plain = p(dir.path(), "a.txt");
    write(&plain, Format::Text, &samples);
    let (bin, binpack, back) = (
        p(dir.path(), "b.bin"),
        p(dir.path(), "c.binpack"),
        p(dir.path(), "d.txt"),
    );
    for (from, to) in [(&plain, &bin), (&bin, &binpack), (&binpack, &back)] {
        let (ok, out, err) = trainer(&["convert", "--in", s(from), "--out", s(to)]);
        assert!(ok, "{out}\n{err}");
        assert!(out.contains("read 5000 positions"), "{out}");
        assert!(out.contains("wrote 5000 positions"), "{out}");
        assert!(out.contains("skipped 0 bad records"), "{out}");
    }
    assert_eq!(
        std::fs::read_to_string(&plain).unwrap(),
        std::fs::read_to_string(&back).unwrap()
    );
    // Every field the text format holds survives; the result is not in it.
    let without_result: Vec<Sample> = samples
        .iter()
        .map(|s| Sample { result: None, ..*s })
        .collect();
    assert_eq!(read(&plain), without_result);
    // Through the binary formats the result (written as 0 when missing) comes back as 0.
    let zero: Vec<Sample> = samples
        .iter()
        .map(|s| Sample {
            result: Some(0),
            ..*s
        })
        .collect();
    assert_eq!(read(&bin), zero);
    assert_eq!(read(&binpack), zero);
    // Binpack chains consecutive plies: far smaller than 40 bytes a position.
    let per = std::fs::metadata(&binpack).unwrap().len() as f64 / 5000.0;
    assert!(per < 10.0, "{per} bytes per position");
}

#[test]
fn bin_and_binpack_keep_results_and_plies() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Sample> = random_games(12).take(3000).collect();
    let bin = p(dir.path(), "a.bin");
    write(&bin, Format::Bin, &samples);
    assert_eq!(read(&bin), samples);
    let binpack = p(dir.path(), "b.binpack");
    let (ok, out, _) = trainer(&["convert", "--in", s(&bin), "--out", s(&binpack)]);
    assert!(ok, "{out}");
    assert_eq!(read(&binpack), samples);
    let bin2 = p(dir.path(), "c.bin");
    let (ok, _, _) = trainer(&["convert", "--in", s(&binpack), "--out", s(&bin2)]);
    assert!(ok);
    assert_eq!(std::fs::read(&bin).unwrap(), std::fs::read(&bin2).unwrap());
}

#[test]
fn compact_text_holds_the_same_samples_in_fewer_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Sample> = random_games(13).take(3000).collect();
    let bin = p(dir.path(), "a.bin");
    write(&bin, Format::Bin, &samples);
    let (compact, plain) = (p(dir.path(), "b.compact"), p(dir.path(), "c.txt"));
    assert!(trainer(&["convert", "--in", s(&bin), "--out", s(&compact)]).0);
    assert!(trainer(&["convert", "--in", s(&compact), "--out", s(&plain)]).0);
    let without_result: Vec<Sample> = samples
        .iter()
        .map(|s| Sample { result: None, ..*s })
        .collect();
    assert_eq!(read(&compact), without_result);
    assert_eq!(read(&plain), without_result);
    let (c, t) = (
        std::fs::metadata(&compact).unwrap().len(),
        std::fs::metadata(&plain).unwrap().len(),
    );
    assert!(c * 3 < t, "compact {c} bytes, plain {t}");
    // One line per game.
    let lines = std::fs::read_to_string(&compact).unwrap().lines().count();
    assert!(lines < 100, "{lines} lines");
}

#[test]
fn filters_in_convert_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Sample> = random_games(14).take(4000).collect();
    let bin = p(dir.path(), "a.bin");
    write(&bin, Format::Bin, &samples);
    let out_path = p(dir.path(), "q.bin");
    let (ok, out, _) = trainer(&[
        "convert",
        "--in",
        s(&bin),
        "--out",
        s(&out_path),
        "--quiet",
        "--min-ply",
        "10",
        "--max-score",
        "800",
    ]);
    assert!(ok, "{out}");
    let kept: Vec<&Sample> = samples
        .iter()
        .filter(|s| {
            s.ply >= 10 && s.score.abs() <= 800 && !s.in_check() && !s.best_move_is_capture()
        })
        .collect();
    assert!(
        out.contains(&format!("wrote {} positions", kept.len())),
        "{out}"
    );
    assert!(
        out.contains("ply window")
            && out.contains("in check")
            && out.contains("best move captures")
    );
    assert_eq!(read(&out_path).len(), kept.len());
    // --limit stops early.
    let (ok, out, _) = trainer(&[
        "convert",
        "--in",
        s(&bin),
        "--out",
        s(&out_path),
        "--limit",
        "7",
    ]);
    assert!(ok && out.contains("wrote 7 positions"), "{out}");
}

#[test]
fn malformed_inputs_are_located_and_skipped_or_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Sample> = random_games(15).take(100).collect();
    let bin = p(dir.path(), "a.bin");
    write(&bin, Format::Bin, &samples);
    let out_path = p(dir.path(), "o.txt");

    // A truncated .bin: 99 records and a partial one.
    let mut bytes = std::fs::read(&bin).unwrap();
    bytes.truncate(99 * 40 + 17);
    // A corrupt record: an all-ones packed position in record 5.
    bytes[5 * 40..5 * 40 + 32].fill(0xff);
    std::fs::write(&bin, &bytes).unwrap();
    let (ok, out, err) = trainer(&["convert", "--in", s(&bin), "--out", s(&out_path)]);
    assert!(ok, "{err}");
    assert!(
        out.contains("read 98 positions") && out.contains("skipped 2 bad records"),
        "{out}"
    );
    assert!(err.contains("a.bin: byte 200: corrupt record"), "{err}");
    assert!(err.contains("a.bin: byte 3960: truncated data"), "{err}");
    let (ok, _, err) = trainer(&[
        "convert",
        "--in",
        s(&bin),
        "--out",
        s(&out_path),
        "--on-error",
        "fail",
    ]);
    assert!(!ok);
    assert!(err.contains("error: ") && err.contains("byte 200"), "{err}");
    // What was converted before the error is kept.
    assert_eq!(
        std::fs::read_to_string(&out_path).unwrap().lines().count(),
        5
    );

    // A binpack with a wrong magic in front of its chunk.
    let binpack = p(dir.path(), "b.binpack");
    write(&binpack, Format::Binpack, &samples);
    let mut bytes = b"JUNK\x10\x00\x00\x00".to_vec();
    bytes.extend(std::fs::read(&binpack).unwrap());
    std::fs::write(&binpack, &bytes).unwrap();
    let (ok, out, err) = trainer(&["convert", "--in", s(&binpack), "--out", s(&out_path)]);
    assert!(ok, "{err}");
    assert!(err.contains("b.binpack: byte 0: bad chunk header"), "{err}");
    assert!(out.contains("read 100 positions"), "{out}");

    // Text: a bad FEN, an illegal move, a bad score, each with its line.
    let text = p(dir.path(), "t.txt");
    std::fs::write(
        &text,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,10,e2e4\n\
         rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1,10,e2e4\n\
         rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,10,e2e5\n\
         rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,ten,e2e4\n",
    )
    .unwrap();
    let (ok, out, err) = trainer(&[
        "convert",
        "--in",
        s(&text),
        "--out",
        s(&p(dir.path(), "t.bin")),
    ]);
    assert!(ok);
    assert!(
        out.contains("read 1 positions") && out.contains("skipped 3 bad records"),
        "{out}"
    );
    assert!(err.contains("t.txt:2: invalid FEN"), "{err}");
    assert!(err.contains("t.txt:3: illegal move"), "{err}");
    assert!(err.contains("t.txt:4: invalid score"), "{err}");

    // Not a format: refused with one line.
    let (ok, _, err) = trainer(&[
        "convert",
        "--in",
        s(&text),
        "--out",
        s(&p(dir.path(), "x.zip")),
    ]);
    assert!(!ok && err.contains("cannot tell the format"), "{err}");
}

#[test]
fn unrepresentable_samples_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let text = p(dir.path(), "t.txt");
    // No best move: fine in text and .bin, impossible in .binpack.
    std::fs::write(
        &text,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,10,0000\n\
         rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,10,e2e4\n",
    )
    .unwrap();
    let (ok, out, err) = trainer(&[
        "convert",
        "--in",
        s(&text),
        "--out",
        s(&p(dir.path(), "t.binpack")),
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("wrote 1 positions") && out.contains("skipped 1 the format cannot hold"),
        "{out}"
    );
    assert!(err.contains("needs a move"), "{err}");
}
