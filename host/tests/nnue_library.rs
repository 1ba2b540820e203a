//! The NNUE library against the thesis networks and synthetic ones: file formats, parity with
//! the reference outputs, every kernel against the naive reference, and incremental updates
//! along random games against fresh refreshes.

mod common;
mod nnue_common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{shared, thesis_nets};
use nnue_common::*;
use plugin_api::{
    BlockDescriptor, Board, Color, FeatureBlock, IndexList, Move, MoveDelta, PluginRegistry,
    RelativePiece, decompose, file_of,
};

use chess_text::parse_fen;
use host::nnue::units::ScoreUnits;
use host::nnue::{
    AccumulatorStack, Activation, Arch, BlockInfo, DecodeError, EncodeError, EvalError, Hidden,
    Kernels, MIN_PIECES_FOR_HYBRID, NetError, NetErrorKind, NetFormat, Network, NetworkParts, Nnue,
    OutputRule, Quantization, ShapeError, SimdLevel, Skip, StackPath, WeightType, format, read_own,
    reference, write_network,
};
use plugin_api::board_from_setup;

fn kernels() -> Vec<Kernels> {
    SimdLevel::under_test()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|l| Kernels::new(l).unwrap())
        .collect()
}

fn load(reg: &PluginRegistry, net: &Path) -> Nnue {
    Nnue::load(net, reg).unwrap_or_else(|e| panic!("{e}"))
}

fn stem(net: &Path) -> String {
    net.file_stem().unwrap().to_str().unwrap().to_string()
}

/// The naive reference's output for a board.
fn reference_eval(nnue: &Nnue, board: &Board) -> i32 {
    let set = nnue.features();
    let w = set.active_set(board, Color::White).unwrap();
    let b = set.active_set(board, Color::Black).unwrap();
    let pieces = board.occupied().count_ones();
    reference::evaluate(&nnue.network(), [&w, &b], board.turn, pieces)
}

#[test]
fn this_machine_runs_the_simd_kernels() {
    // The kernels below are compared where the CPU has them (NNUE_TEST_SIMD, scripts/test.sh:
    // avx2 unless told otherwise, names one that must be among them, or under_test refuses);
    // on x86-64 with AVX2 at least the AVX2 path is.
    let compared = SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}"));
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        assert!(compared.contains(&SimdLevel::Avx2), "{compared:?}");
    }
    assert!(compared.contains(&SimdLevel::Scalar));
    eprintln!("kernels compared: {compared:?}");
}

#[test]
fn every_thesis_net_matches_the_parity_outputs_with_every_kernel_and_the_reference() {
    let reg = registry();
    let mut checked = 0;
    for net in thesis_nets() {
        let nnue = load(&reg, &net);
        let parity =
            std::fs::read_to_string(shared().join(format!("parity/{}.eval.tsv", stem(&net))))
                .unwrap();
        for line in parity.lines() {
            let (fen, expected) = line.split_once('\t').unwrap();
            if fen == "fen" {
                continue;
            }
            let expected: i32 = expected.trim().parse().unwrap();
            let board = board_from_setup(&parse_fen(fen).unwrap());
            assert_eq!(
                reference_eval(&nnue, &board),
                expected,
                "reference, {net:?} {fen}"
            );
            for k in kernels() {
                assert_eq!(
                    nnue.evaluate(&board, k).unwrap(),
                    expected,
                    "{} kernels, {net:?} {fen}",
                    k.level()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 13 * 40, "checked only {checked} positions");
}

#[test]
fn thesis_nets_round_trip_through_the_own_format_byte_for_byte() {
    let reg = registry();
    for net in thesis_nets() {
        let original = std::fs::read(&net).unwrap();
        let nnue = load(&reg, &net);
        assert_eq!(nnue.source_format(), NetFormat::Thesis);
        let own = nnue.to_bytes(NetFormat::Own).unwrap();
        assert!(own.starts_with(&host::nnue::MAGIC));
        let back = Nnue::from_bytes(&own, "converted", &reg).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.source_format(), NetFormat::Own);
        assert_eq!(back.network(), nnue.network(), "{net:?}");
        assert_eq!(
            back.own_header().unwrap().checksum,
            crc32fast::hash(&own[..own.len() - 4])
        );
        assert!(
            back.to_bytes(NetFormat::Thesis).unwrap() == original,
            "{net:?}: thesis -> own -> thesis is not byte-identical"
        );
        assert_eq!(back.to_bytes(NetFormat::Own).unwrap(), own);
    }
}

#[test]
fn own_files_are_written_and_read_without_plugins() {
    let reg = registry();
    let dir = tempfile::tempdir().unwrap();
    let net = random_network(&reg, "all", 64, 3, Weights::Moderate, 1);
    let path = dir.path().join("net.nnue");
    write_network(&net, &path, NetFormat::Own).unwrap();
    assert_eq!(read_own(&path).unwrap(), net);
    let nnue = Nnue::load(&path, &reg).unwrap();
    assert_eq!(nnue.network(), net);
    let thesis = dir.path().join("net.nn");
    write_network(&net, &thesis, NetFormat::Thesis).unwrap();
    assert_eq!(Nnue::load(&thesis, &reg).unwrap().network(), net);
    // A thesis file is not an own-format file.
    let err = read_own(&thesis).unwrap_err();
    assert!(
        matches!(err.kind, NetErrorKind::Decode(DecodeError::NotANetwork)),
        "{err}"
    );
}

/// Checks that an error is one sentence on one line naming the file, and returns its kind.
fn one_line(err: NetError, file: &str) -> NetErrorKind {
    let text = err.to_string();
    assert!(!text.contains('\n'), "not one line: {text}");
    assert!(text.contains(file), "does not name {file}: {text}");
    assert!(text.len() < 400, "too long: {text}");
    err.kind
}

fn thesis_bytes(name: &str, n: u32, l1: u32, l2: u32, tensor_fill: Option<usize>) -> Vec<u8> {
    let mut b = name.as_bytes().to_vec();
    b.push(0);
    for v in [n, l1, l2] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    let len = tensor_fill.unwrap_or_else(|| {
        format::tensor_bytes(
            2 * u64::from(n) * u64::from(l1),
            u64::from(l1),
            u64::from(l2),
        ) as usize
    });
    b.resize(b.len() + len, 0);
    b
}

struct OwnSpec<'a> {
    version: u32,
    name: &'a str,
    blocks: Vec<(&'a str, u32, u32, u64)>,
    n: u32,
    l1: u32,
    l2: u32,
    quant: (i32, u32, u32),
}

/// An own-format file written byte by byte (independently of the encoder), zero tensors,
/// correct checksum.
fn own_bytes(s: &OwnSpec) -> Vec<u8> {
    let mut b = b"NNUEFSET".to_vec();
    b.extend_from_slice(&s.version.to_le_bytes());
    b.extend_from_slice(&(s.name.len() as u16).to_le_bytes());
    b.extend_from_slice(s.name.as_bytes());
    b.extend_from_slice(&(s.blocks.len() as u16).to_le_bytes());
    for (name, size, version, id) in &s.blocks {
        b.extend_from_slice(&(name.len() as u16).to_le_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&size.to_le_bytes());
        b.extend_from_slice(&version.to_le_bytes());
        b.extend_from_slice(&id.to_le_bytes());
        if s.version >= 2 {
            b.push(0); // i16 rows
        }
    }
    for v in [s.n, s.l1, s.l2] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&s.quant.0.to_le_bytes());
    b.extend_from_slice(&s.quant.1.to_le_bytes());
    b.extend_from_slice(&s.quant.2.to_le_bytes());
    let w1 = 2 * u64::from(s.n) * u64::from(s.l1);
    let t = format::tensor_bytes(w1, u64::from(s.l1), u64::from(s.l2)) as usize;
    b.resize(b.len() + t, 0);
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// Each file of `cases` is refused by a one-sentence error naming it, of the kind expected.
fn assert_refused(reg: &PluginRegistry, cases: Vec<(&str, Vec<u8>, KindCheck)>) {
    for (what, bytes, expected) in cases {
        let err = Nnue::from_bytes(&bytes, "case.nnue", reg)
            .err()
            .unwrap_or_else(|| panic!("{what}: accepted"));
        let text = err.to_string();
        let kind = one_line(err, "case.nnue");
        assert!(expected(&kind), "{what}: unexpected error: {text}");
        assert!(
            text.starts_with("cannot load network case.nnue: "),
            "{what}: {text}"
        );
    }
}

/// `b` with bit 4 of byte `at` flipped.
fn flip(mut b: Vec<u8>, at: usize) -> Vec<u8> {
    b[at] ^= 0x10;
    b
}

/// `b` with `extra` appended.
fn with(mut b: Vec<u8>, extra: &[u8]) -> Vec<u8> {
    b.extend_from_slice(extra);
    b
}

#[test]
fn malformed_thesis_files_are_refused_with_one_sentence() {
    let reg = registry();
    let thesis = std::fs::read(shared().join("nets/thesis/all.nn")).unwrap();
    let cases: Vec<(&str, Vec<u8>, KindCheck)> = vec![
        (
            "empty",
            vec![],
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::NotANetwork))),
        ),
        (
            "text",
            b"hello world, no network here".to_vec(),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::NotANetwork))),
        ),
        (
            "bad name",
            thesis_bytes("all net", 768, 32, 1, None),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::NotANetwork))),
        ),
        (
            "thesis truncated",
            thesis[..thesis.len() - 1].to_vec(),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::Truncated { .. }))),
        ),
        (
            "thesis truncated header",
            thesis[..9].to_vec(),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::TruncatedHeader { .. }))),
        ),
        (
            "thesis trailing",
            with(thesis.clone(), &[0]),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::TrailingBytes { .. }))),
        ),
        (
            "N differs from the feature set",
            thesis_bytes("hv+h", 768, 32, 1, None),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::FeatureCount {
                        n: 768,
                        size: 864,
                        ..
                    }
                )
            }),
        ),
        (
            "L1 not a multiple of 32",
            thesis_bytes("hv", 768, 500, 32, None),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::BadL1(500)))
                )
            }),
        ),
        (
            "L1 zero",
            thesis_bytes("hv", 768, 0, 32, None),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::BadL1(0)))
                )
            }),
        ),
        (
            "L2 zero",
            thesis_bytes("hv", 768, 32, 0, None),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::BadL2(0)))
                )
            }),
        ),
        (
            "absurd N",
            thesis_bytes("hv", u32::MAX, 32, 1, Some(100)),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::BadFeatureCount(_)))
                )
            }),
        ),
        (
            "absurd L1",
            thesis_bytes("hv", 768, 1 << 30, 1, Some(100)),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::BadL1(_)))
                )
            }),
        ),
        (
            "absurd L2",
            thesis_bytes("hv", 768, 32, u32::MAX, Some(100)),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::BadL2(_)))
                )
            }),
        ),
        (
            "absurd first layer",
            thesis_bytes("hv", 1 << 20, 4096, 1, Some(100)),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::TooLarge { .. }))
                )
            }),
        ),
        (
            "unknown block",
            thesis_bytes("hv+zz", 768, 32, 1, None),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::FeatureSet(plugin_api::LoadError::UnknownBlock { .. })
                )
            }),
        ),
    ];
    assert_refused(&reg, cases);

    // The unknown block's message lists the available ones.
    let err = Nnue::from_bytes(&thesis_bytes("hv+zz", 768, 32, 1, None), "x.nn", &reg).unwrap_err();
    assert!(
        err.to_string().contains("available: ") && err.to_string().contains("all"),
        "{err}"
    );

    // A missing file.
    let err = Nnue::load(Path::new("/nonexistent/dir/net.nn"), &reg).unwrap_err();
    assert!(matches!(
        one_line(err, "/nonexistent/dir/net.nn"),
        NetErrorKind::Read(_)
    ));
}

/// A valid own file of the `all` block, written by hand: the own cases differ from it in one
/// thing each.
fn good_own_spec(reg: &PluginRegistry) -> OwnSpec<'static> {
    let all = reg.block("all").unwrap().descriptor;
    OwnSpec {
        version: 1,
        name: "all",
        blocks: vec![("all", 768, all.layout_version, all.layout_id)],
        n: 768,
        l1: 32,
        l2: 1,
        quant: (127, 6, 4),
    }
}

#[test]
fn corrupt_own_files_are_refused_with_one_sentence() {
    let reg = registry();
    let good_own = good_own_spec(&reg);
    let own = load(&reg, &shared().join("nets/thesis/all.nn"))
        .to_bytes(NetFormat::Own)
        .unwrap();
    let cases: Vec<(&str, Vec<u8>, KindCheck)> = vec![
        (
            "own checksum",
            flip(own.clone(), own.len() / 2),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::Checksum { .. }))),
        ),
        (
            "own checksum field",
            flip(own.clone(), own.len() - 1),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::Checksum { .. }))),
        ),
        (
            "own truncated",
            own[..own.len() - 3].to_vec(),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::Truncated { .. }))),
        ),
        (
            "own truncated header",
            own[..20].to_vec(),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::TruncatedHeader { .. }))),
        ),
        (
            "own magic only",
            own[..8].to_vec(),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::TruncatedHeader { .. }))),
        ),
        (
            "own trailing",
            with(own.clone(), &[1, 2]),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::TrailingBytes { .. }))),
        ),
        (
            "own version",
            own_bytes(&OwnSpec {
                version: 6,
                ..clone_spec(&good_own)
            }),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::UnsupportedVersion(6)))),
        ),
        (
            "own version 0",
            own_bytes(&OwnSpec {
                version: 0,
                ..clone_spec(&good_own)
            }),
            Box::new(|k| matches!(k, NetErrorKind::Decode(DecodeError::UnsupportedVersion(0)))),
        ),
    ];
    assert_refused(&reg, cases);
}

#[test]
fn an_own_file_of_an_unknown_weight_type_is_refused_with_one_sentence() {
    let reg = registry();
    let good_own = good_own_spec(&reg);
    // The hand-written own file is valid: the other own cases differ from it in one thing each.
    Nnue::from_bytes(&own_bytes(&good_own), "good.nnue", &reg).unwrap();
    // Version 2 is version 1 with a weight type per block.
    let good_v2 = own_bytes(&OwnSpec {
        version: 2,
        ..clone_spec(&good_own)
    });
    Nnue::from_bytes(&good_v2, "good-v2.nnue", &reg).unwrap();
    // magic, version, name, block count, block name, size, layout version, layout id.
    let weight_code_at = 8 + 4 + (2 + 3) + 2 + (2 + 3) + 4 + 4 + 8;
    assert_eq!(good_v2[weight_code_at], 0);
    let mut bad_code = good_v2.clone();
    bad_code[weight_code_at] = 7;
    let end = bad_code.len() - 4;
    let crc = crc32fast::hash(&bad_code[..end]);
    bad_code[end..].copy_from_slice(&crc.to_le_bytes());
    let err = Nnue::from_bytes(&bad_code, "bad-code.nnue", &reg).unwrap_err();
    assert!(
        err.to_string().contains("weight type") && err.to_string().contains("code 7"),
        "{err}"
    );
    assert!(matches!(
        one_line(err, "bad-code.nnue"),
        NetErrorKind::Decode(DecodeError::BadText {
            field: "weight type",
            ..
        })
    ));
}

#[test]
fn malformed_and_mismatching_own_files_are_refused_with_one_sentence() {
    let reg = registry();
    let all = reg.block("all").unwrap().descriptor;
    let good_own = good_own_spec(&reg);
    let cases: Vec<(&str, Vec<u8>, KindCheck)> = vec![
        (
            "own L1 not a multiple of 32",
            own_bytes(&OwnSpec {
                l1: 40,
                ..clone_spec(&good_own)
            }),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::BadL1(40)))
                )
            }),
        ),
        (
            "own L2 zero",
            own_bytes(&OwnSpec {
                l2: 0,
                ..clone_spec(&good_own)
            }),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::BadL2(0)))
                )
            }),
        ),
        (
            "own N differs from the block sizes",
            own_bytes(&OwnSpec {
                n: 767,
                ..clone_spec(&good_own)
            }),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::BlockSum { n: 767, sum: 768 })
                )
            }),
        ),
        (
            "own quantization",
            own_bytes(&OwnSpec {
                quant: (127, 7, 4),
                ..clone_spec(&good_own)
            }),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::Quantization { .. }))
                )
            }),
        ),
        (
            "own name and blocks differ",
            own_bytes(&OwnSpec {
                name: "h",
                ..clone_spec(&good_own)
            }),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::Shape(ShapeError::BlocksDiffer { .. }))
                )
            }),
        ),
        (
            "own no blocks",
            own_bytes(&OwnSpec {
                blocks: vec![],
                n: 768,
                ..clone_spec(&good_own)
            }),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::Decode(DecodeError::BadText {
                        field: "block count",
                        ..
                    })
                )
            }),
        ),
        (
            "own unknown block",
            own_bytes(&OwnSpec {
                name: "zz",
                blocks: vec![("zz", 768, 1, 42)],
                ..clone_spec(&good_own)
            }),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::FeatureSet(plugin_api::LoadError::UnknownBlock { .. })
                )
            }),
        ),
        (
            "own block size differs",
            own_bytes(&OwnSpec {
                blocks: vec![("all", 769, all.layout_version, all.layout_id)],
                n: 769,
                ..clone_spec(&good_own)
            }),
            Box::new(|k| {
                matches!(
                    k,
                    NetErrorKind::BlockSize {
                        file_size: 769,
                        plugin_size: 768,
                        ..
                    }
                )
            }),
        ),
        (
            "own layout version differs, identity equal",
            own_bytes(&OwnSpec {
                blocks: vec![("all", 768, all.layout_version + 1, all.layout_id)],
                ..clone_spec(&good_own)
            }),
            Box::new(|k| matches!(k, NetErrorKind::BlockLayout { .. })),
        ),
        (
            "own layout identity differs",
            own_bytes(&OwnSpec {
                blocks: vec![("all", 768, all.layout_version + 1, all.layout_id ^ 1)],
                ..clone_spec(&good_own)
            }),
            Box::new(|k| matches!(k, NetErrorKind::BlockLayout { .. })),
        ),
    ];
    assert_refused(&reg, cases);
}

/// A predicate on the kind of error a malformed file must produce.
type KindCheck = Box<dyn Fn(&NetErrorKind) -> bool>;

fn clone_spec<'a>(s: &OwnSpec<'a>) -> OwnSpec<'a> {
    OwnSpec {
        version: s.version,
        name: s.name,
        blocks: s.blocks.clone(),
        n: s.n,
        l1: s.l1,
        l2: s.l2,
        quant: s.quant,
    }
}

#[test]
fn network_parts_are_checked() {
    let reg = registry();
    let parts = random_parts("all", block_infos(&reg, "all"), 32, 2, Weights::Moderate, 3);
    assert!(Network::from_parts(parts.clone()).is_ok());
    let mut p = parts.clone();
    p.w1.pop();
    assert!(matches!(
        Network::from_parts(p),
        Err(ShapeError::TensorLength { tensor: "W1", .. })
    ));
    let mut p = parts.clone();
    p.stacks[0][0].weights.push(0);
    assert!(matches!(
        Network::from_parts(p),
        Err(ShapeError::TensorLength {
            tensor: "layer weights",
            ..
        })
    ));
    let mut p = parts.clone();
    p.psqt.push(0);
    assert!(matches!(
        Network::from_parts(p),
        Err(ShapeError::TensorLength { tensor: "PSQT", .. })
    ));
    let mut p = parts.clone();
    p.arch.psqt_buckets = 8;
    let e = Network::from_parts(p).unwrap_err().to_string();
    assert!(e.contains("thesis's output rule"), "{e}");
    let mut p = parts.clone();
    p.quantization = Quantization {
        output_shift: 5,
        ..Quantization::THESIS
    };
    assert!(matches!(
        Network::from_parts(p),
        Err(ShapeError::Quantization { .. })
    ));
    let mut p = parts.clone();
    p.feature_set = "all+".into();
    assert!(matches!(
        Network::from_parts(p),
        Err(ShapeError::BadName { .. })
    ));
    let mut p = parts;
    p.feature_set = "hv".into();
    assert!(Network::from_parts(p).is_ok(), "hv is an alias of all");
}

/// What the feature blocks see of a board (the en-passant square of `Board::play` may differ
/// from shakmaty's legal one).
fn pieces(b: &Board) -> ([u64; 2], [u64; 6], Color) {
    (b.by_color, b.by_role, b.turn)
}

/// Follows a random walk with one stack per kernel version and checks, after every push and
/// pop, that each equals a fresh refresh of the position (accumulators and output) and that all
/// versions agree; every `reference_every` steps also against the naive reference.
fn check_incremental(
    nnue: &Nnue,
    seed: u64,
    pushes: usize,
    reference_every: usize,
    min_distinct: usize,
) -> WalkReport {
    let ks = kernels();
    let mut stacks: Vec<AccumulatorStack<'_>> =
        ks.iter().map(|&k| AccumulatorStack::new(nnue, k)).collect();
    let mut fresh =
        AccumulatorStack::with_max_ply(nnue, Kernels::new(SimdLevel::Scalar).unwrap(), 0);
    let mut history: Vec<i32> = Vec::new();
    let mut steps = 0usize;
    let mut outputs = BTreeSet::new();
    let report = random_walk(seed, pushes, 50, |step| {
        let board = match step {
            Step::Start(board) => {
                for s in &mut stacks {
                    s.reset(board).unwrap();
                }
                history.clear();
                board
            }
            Step::Push(mv, board) => {
                for s in &mut stacks {
                    s.push(mv).unwrap_or_else(|e| panic!("{e}"));
                    assert_eq!(pieces(s.board()), pieces(board), "stack board after push");
                }
                board
            }
            Step::Pop(board) => {
                for s in &mut stacks {
                    s.pop();
                    assert_eq!(pieces(s.board()), pieces(board), "stack board after pop");
                }
                history.pop();
                let expected = *history.last().unwrap();
                for s in &mut stacks {
                    assert_eq!(
                        s.evaluate(),
                        expected,
                        "output after pop differs from before"
                    );
                }
                history.pop();
                board
            }
        };
        fresh.reset(board).unwrap();
        let expected = fresh.evaluate();
        outputs.insert(expected);
        for s in &mut stacks {
            let level = s.kernels().level();
            for p in Color::ALL {
                assert!(
                    s.accumulator(p) == fresh.accumulator(p),
                    "{} {level}: {p:?} accumulator differs from a refresh at ply {}",
                    nnue.network().feature_set(),
                    s.ply()
                );
            }
            assert_eq!(s.evaluate(), expected, "{level}: incremental output");
        }
        if steps.is_multiple_of(reference_every) {
            assert_eq!(reference_eval(nnue, board), expected, "naive reference");
        }
        history.push(expected);
        steps += 1;
    });
    assert!(
        outputs.len() >= min_distinct,
        "outputs hardly vary: {outputs:?}"
    );
    report
}

#[test]
fn incremental_updates_equal_refreshes_on_every_thesis_net() {
    let reg = registry();
    for (i, net) in thesis_nets().iter().enumerate() {
        let nnue = load(&reg, net);
        let r = check_incremental(&nnue, 1000 + (i % 3) as u64, 700, 25, 50);
        assert!(
            r.captures > 0
                && r.castles > 0
                && r.en_passants > 0
                && r.promotions > 0
                && r.king_moves > 0
                && r.pops > 0,
            "{net:?}: the walk missed some kind of move: {r:?}"
        );
    }
}

#[test]
fn synthetic_networks_of_any_l2_agree_across_kernels_and_the_reference() {
    let reg = registry();
    let mut cases = 0;
    for (l1, l2) in [
        (32, 1),
        (32, 3),
        (64, 8),
        (64, 16),
        (32, 33),
        (96, 5),
        (160, 17),
        (512, 32),
    ] {
        for weights in [Weights::Moderate, Weights::Extreme] {
            let spec = if l1 == 96 { "all+h+v" } else { "all" };
            let net = random_network(&reg, spec, l1, l2, weights, (l1 * 100 + l2) as u64);
            let nnue = Nnue::bind(net, "synthetic", &reg).unwrap();
            check_incremental(&nnue, l2 as u64, 150, 1, 2);
            cases += 1;
        }
    }
    assert_eq!(cases, 16);
}

#[test]
fn the_kernels_chosen_for_each_layer_agree_with_every_other_choice_on_every_shape() {
    // The layer kernels are chosen when a network is built, from its layers alone
    // (`outputs_per_pass`: the thesis's 2·L1 -> 32 takes 32 outputs per pass, Stockfish's
    // L1 -> 16 takes 16; `StackPath`: the thesis's layers fused). The same networks laid out
    // for the other choices, evaluated layer by layer, and with every kernel version, give the
    // same outputs as the reference, on shapes of every kind.
    let reg = registry();
    let crelu = |width| Hidden::new(width, Activation::ClippedRelu);
    let mut shapes: Vec<(&str, usize, Arch)> = Vec::new();
    for (l1, l2) in [
        (64, 8),
        (128, 16),
        (128, 17),
        (256, 32),
        (512, 32),
        (128, 33),
        (256, 64),
    ] {
        shapes.push(("all", l1, Arch::thesis(l2)));
    }
    let mut stacked = Arch::thesis(32);
    (stacked.stacks, stacked.psqt_buckets, stacked.output) = (4, 8, OutputRule::Stockfish);
    shapes.push(("all+h+v", 256, stacked));
    let mut deep = Arch::thesis(32);
    deep.hidden.push(crelu(32));
    shapes.push(("all", 256, deep));
    let mut sf = Arch::sfnnv5();
    shapes.push(("k*all", 256, sf.clone()));
    sf.hidden[0].width = 31;
    shapes.push(("all", 512, sf));
    // Stockfish's shape of today, and its layer kinds apart: the pairwise product clipped at
    // 255, shifts 7 and 6, the skip difference and the dense output.
    shapes.push(("all", 256, Arch::sfnnv16()));
    let mut today = Arch::sfnnv16();
    (today.hidden[0].width, today.hidden[1].width) = (20, 8);
    shapes.push(("k*all", 512, today));
    let mut sparse_today = Arch::sfnnv16();
    sparse_today.dense_output = false;
    sparse_today.hidden[1].activation = Activation::ClippedRelu;
    sparse_today.hidden[1].shift = 7;
    shapes.push(("all+h+v", 256, sparse_today));
    for (i, (spec, l1, arch)) in shapes.into_iter().enumerate() {
        let set = reg.feature_set(spec).unwrap();
        let net = Network::from_parts(NetworkParts::synthetic_arch(
            &set,
            l1,
            &arch,
            300 + i as u64,
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        // Every layer of more than 16 outputs takes 32 a pass when sparse, or when 32 pad it no
        // more than 16 do (today's dense 64 -> 32).
        for layer in &net.stacks()[0] {
            let sparse = layer.inputs().next_multiple_of(32) >= host::nnue::SPARSE_FROM;
            let o = layer.outputs();
            let wide = o > 16 && (sparse || o.next_multiple_of(32) == o.next_multiple_of(16));
            assert_eq!(layer.per_pass(), if wide { 32 } else { 16 }, "{arch}");
        }
        let first = &net.stacks()[0][0];
        let wide = first.per_pass() == 32 && first.inputs() >= host::nnue::SPARSE_FROM;
        // The thesis's layers (one clipped-ReLU layer of up to 32 outputs read sparsely, then
        // the output) take the fused path, whatever else the shape has.
        let fused = wide
            && first.outputs() <= 32
            && arch.hidden.len() == 1
            && arch.skip == Skip::None
            && arch.hidden[0].activation == Activation::ClippedRelu;
        let expected = match fused {
            true => StackPath::SparseCreluToOutput,
            false => StackPath::Layers,
        };
        assert_eq!(net.stack_path(), expected, "{arch}");
        let laid: Vec<Nnue> = [
            net.clone(),
            net.layer_by_layer(),
            net.with_outputs_per_pass(16),
            net.with_outputs_per_pass(32),
            net.with_outputs_per_pass(32).layer_by_layer(),
        ]
        .into_iter()
        .map(|n| Nnue::bind(n, "synthetic", &reg).unwrap())
        .collect();
        let mut outputs = BTreeSet::new();
        random_walk(400 + i as u64, 60, 50, |step| {
            let board = match step {
                Step::Start(b) | Step::Push(_, b) | Step::Pop(b) => b,
            };
            let expected = reference_eval(&laid[0], board);
            outputs.insert(expected);
            for nnue in &laid {
                for k in kernels() {
                    let got = nnue.evaluate(board, k).unwrap();
                    assert_eq!(got, expected, "{arch} at L1 {l1}, {}", k.level());
                }
            }
        });
        assert!(outputs.len() > 5, "{arch}: outputs hardly vary");
    }
}

/// A king-relative test block: every non-king piece at `king file * 12 + role * 2 + colour`
/// (many pieces share an index, so counts above one are the rule), with a refresh of a
/// perspective whenever its own king moves.
struct KingFile;

fn king_file_index(board: &Board, p: Color, piece: RelativePiece) -> Option<u32> {
    if piece.role == plugin_api::Role::King {
        return None;
    }
    let king = board.king(p).map_or(0, file_of) as u32;
    Some(king * 12 + piece.role as u32 * 2 + u32::from(!piece.own))
}

impl FeatureBlock for KingFile {
    const NAME: &'static str = "kfile";
    const DESCRIPTION: &'static str = "test block: pieces by own king file";
    const SIZE: u32 = 96;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 2;
    const MIRROR_SYMMETRIC: bool = false;

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        for color in Color::ALL {
            for role in plugin_api::Role::ALL {
                let mut bb = board.pieces(color, role);
                while bb != 0 {
                    let square = bb.trailing_zeros() as u8;
                    bb &= bb - 1;
                    let piece = RelativePiece::new(
                        perspective,
                        plugin_api::PieceOnSquare {
                            square,
                            color,
                            role,
                        },
                    );
                    if let Some(ix) = king_file_index(board, perspective, piece) {
                        out.push(ix);
                    }
                }
            }
        }
    }

    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        let changes = decompose(board, mv);
        for p in Color::ALL {
            if mv.role == plugin_api::Role::King && board.turn == p {
                out.refresh[p.index()] = true;
                continue;
            }
            for &piece in changes.removed() {
                if let Some(ix) = king_file_index(board, p, RelativePiece::new(p, piece)) {
                    out.removed[p.index()].push(ix);
                }
            }
            // A piece that keeps its role cancels (the conformance kit wants exact deltas).
            for &piece in changes.added() {
                if let Some(ix) = king_file_index(board, p, RelativePiece::new(p, piece))
                    && !out.removed[p.index()].take(ix)
                {
                    out.added[p.index()].push(ix);
                }
            }
        }
    }
}

#[test]
fn refresh_requests_and_repeated_indices_are_handled() {
    let mut reg = registry();
    reg.register(
        &[BlockDescriptor::of::<KingFile>()],
        "linked test block",
        "tests",
    )
    .unwrap();
    plugin_api::conformance::assert_conformance(&[BlockDescriptor::of::<KingFile>()]);
    let net = random_network(&reg, "all+kfile", 64, 8, Weights::Moderate, 9);
    let nnue = Nnue::bind(net, "synthetic", &reg).unwrap();
    check_incremental(&nnue, 5, 400, 10, 10);
    // The refresh path really ran, and counts above one occurred.
    let mut stack = AccumulatorStack::new(&nnue, Kernels::best());
    let mut max_count = 0;
    random_walk(6, 200, 200, |step| {
        step.follow(&mut stack);
        if let Step::Push(..) = step {
            for p in Color::ALL {
                for i in 768..768 + 96 {
                    max_count = max_count.max(stack.count(p, i).unwrap());
                }
            }
        }
    });
    assert!(stack.stats().refreshes > 10, "{:?}", stack.stats());
    assert!(max_count >= 3, "max count {max_count}");
}

#[test]
fn king_relative_sets_and_products_update_exactly_through_the_refresh_cache() {
    let reg = registry();
    for (i, spec) in ["halfka_v2_hm", "k*all+all", "halfkp", "all+kr"]
        .iter()
        .enumerate()
    {
        let net = random_network(&reg, spec, 64, 8, Weights::Moderate, 20 + i as u64);
        let nnue = Nnue::bind(net, "synthetic", &reg).unwrap();
        // Every kernel's stack equals a fresh refresh after every push and pop.
        let walk = check_incremental(&nnue, 30 + i as u64, 500, 25, 20);
        assert!(walk.king_moves > 20, "{walk:?}");
        // With the refresh cache (on by default: the sets are binary and piecewise) the same
        // walk gives the same accumulators with fewer rows.
        let mut cached = AccumulatorStack::new(&nnue, Kernels::best());
        let mut plain = AccumulatorStack::new(&nnue, Kernels::best());
        plain.set_refresh_cache(false);
        random_walk(40 + i as u64, 500, 60, |step| {
            step.follow(&mut cached);
            step.follow(&mut plain);
            for p in Color::ALL {
                assert_eq!(cached.accumulator(p), plain.accumulator(p), "{spec}");
            }
        });
        let (c, n) = (cached.stats(), plain.stats());
        let cache = cached
            .cache_stats()
            .expect("the cache is on for king-relative sets");
        assert_eq!(c.refreshes, n.refreshes, "{spec}");
        assert!(
            cache.hits > 0 && c.refresh_rows < n.refresh_rows,
            "{spec}: {c:?} {n:?} {cache:?}"
        );
        assert!(plain.cache_stats().is_none());
    }
    // A set with no king-relative term never uses the cache, even when asked to.
    let net = random_network(&reg, "all+mb", 64, 8, Weights::Moderate, 3);
    let nnue = Nnue::bind(net, "synthetic", &reg).unwrap();
    let mut stack = AccumulatorStack::new(&nnue, Kernels::best());
    stack.set_refresh_cache(true);
    assert!(stack.cache_stats().is_none() && stack.groups() == 1);
}

#[test]
fn sets_mixing_king_relative_and_other_terms_update_exactly_through_hybrid_king_moves() {
    let reg = registry();
    for (i, spec) in [
        "halfka_v2_hm+mb",
        "halfka_v2_hm+full_threats+pp_3wide",
        "k*all+h",
    ]
    .iter()
    .enumerate()
    {
        let net = random_network(&reg, spec, 64, 8, Weights::Moderate, 50 + i as u64);
        let nnue = Nnue::bind(net, "synthetic", &reg).unwrap();
        let walk = check_incremental(&nnue, 60 + i as u64, 400, 20, 20);
        assert!(walk.king_moves > 20, "{walk:?}");
        // The king-relative group refreshes through the cache on king moves, the other group
        // only when its own terms ask (mobility: often; threats: the king changing side); a
        // king move that leaves the other group incremental is a hybrid update.
        let mut stack = AccumulatorStack::new(&nnue, Kernels::best());
        assert_eq!(stack.groups(), 2, "{spec}");
        // King moves, and those that leave at least MIN_PIECES_FOR_HYBRID pieces.
        let (mut king_moves, mut crowded) = (0, 0);
        random_walk(70 + i as u64, 400, 60, |step| {
            if let Step::Push(mv, after) = step
                && mv.role == plugin_api::Role::King
            {
                king_moves += 1;
                crowded += usize::from(after.occupied().count_ones() >= MIN_PIECES_FOR_HYBRID);
            }
            step.follow(&mut stack);
        });
        let cache = stack.cache_stats().expect("the first part has a cache");
        assert!(cache.hits > 0, "{spec}: {cache:?}");
        if spec.contains("threats") {
            let stats = stack.stats();
            let (refreshes, hybrids) = (stats.refreshes as usize, stats.hybrids as usize);
            // Each king move updates one perspective: on a crowded board most of them by the
            // hybrid update (the threat group refreshes when the king changes side), on a
            // thinner one by a refresh, as Stockfish.
            assert!(
                refreshes + hybrids >= king_moves && hybrids <= crowded && 2 * hybrids > crowded,
                "{spec}: {refreshes} refreshes and {hybrids} hybrid updates for {king_moves} king moves, {crowded} on crowded boards"
            );
        }
    }
}

#[test]
fn stockfish_shapes_on_any_feature_set_update_exactly_and_round_trip() {
    // PSQT buckets, layer stacks, the pairwise product and the squared clipped ReLU over sets
    // of one term group with the refresh cache (k*all, halfka_v2_hm), one without (all+ph+pv),
    // and two (halfka_v2_hm+full_threats: hybrid king moves with PSQT sums); the first stack
    // layer reads only the non-zero inputs from 256 on (L1 512), and a second hidden layer of
    // 20 outputs pads them.
    let reg = registry();
    for (i, (spec, l1, first, second, buckets)) in [
        ("all+ph+pv", 128, 7, 32, 8),
        ("k*all", 64, 7, 20, 8),
        ("halfka_v2_hm+full_threats", 64, 7, 32, 8),
        ("all", 512, 7, 32, 8),
        // PSQT sums of a count not known at compile time, through the refresh cache.
        ("halfka_v2_hm", 64, 7, 32, 3),
        // A second layer of 2 · 144 inputs, read sparsely too: not a whole number of 64-byte
        // runs.
        ("all", 64, 144, 32, 8),
    ]
    .into_iter()
    .enumerate()
    {
        let mut arch = Arch::sfnnv5();
        arch.hidden[0].width = first;
        arch.hidden[1].width = second;
        arch.psqt_buckets = buckets;
        let set = reg.feature_set(spec).unwrap();
        let parts = NetworkParts::synthetic_arch(&set, l1, &arch, 90 + i as u64);
        let net = Network::from_parts(parts).unwrap_or_else(|e| panic!("{e}"));
        let nnue = Nnue::bind(net.clone(), "synthetic", &reg).unwrap();
        let walk = check_incremental(&nnue, 95 + i as u64, 300, 7, 50);
        assert!(walk.king_moves > 10 && walk.captures > 10, "{walk:?}");
        // Version 3 of the own format records the shape; the thesis's format refuses it.
        let own = format::encode_own(&net);
        assert_eq!(u32::from_le_bytes(own[8..12].try_into().unwrap()), 3);
        let back = Nnue::from_bytes(&own, "memory", &reg).unwrap();
        assert_eq!(back.network(), net);
        assert_eq!(back.network().arch(), &arch);
        let e = nnue.to_bytes(NetFormat::Thesis).unwrap_err();
        assert!(matches!(e, EncodeError::ThesisShape(_)), "{e:?}");
        assert!(e.to_string().contains("only the thesis's shape"), "{e}");
        let e = nnue.to_bytes(NetFormat::Stockfish).unwrap_err();
        assert!(matches!(e, EncodeError::Stockfish(_)), "{e:?}");
        assert!(e.to_string().contains("Stockfish's"), "{e}");
    }
}

/// A network's score units travel with it: the own format records units other than
/// centipawns (version 5, a byte after the shape) and reads them back; a network in centipawns
/// is written as before (its version and bytes unchanged); the thesis's format, which implies
/// centipawns, refuses the others; an unknown units byte is refused.
#[test]
fn score_units_are_recorded_in_the_own_format() {
    let reg = registry();
    let set = reg.feature_set("all").unwrap();
    for arch in [Arch::thesis(8), Arch::sfnnv5()] {
        let mut parts = NetworkParts::synthetic_arch(&set, 64, &arch, 3);
        let centipawns = Network::from_parts(parts.clone()).unwrap();
        let before = format::encode_own(&centipawns);
        let version = |b: &[u8]| u32::from_le_bytes(b[8..12].try_into().unwrap());
        assert!(
            version(&before) <= 3,
            "{arch}: centipawns written as before"
        );
        for units in [ScoreUnits::Stockfish, ScoreUnits::StockfishWdl] {
            parts.units = units;
            let net = Network::from_parts(parts.clone()).unwrap();
            let own = format::encode_own(&net);
            assert_eq!(version(&own), format::UNITS_VERSION, "{arch}");
            let (back, _) = format::decode_own(&own).unwrap();
            assert_eq!(back.units(), units, "{arch}");
            assert_eq!(back, net);
            if arch == Arch::thesis(8) {
                let e = format::encode_thesis(&net).unwrap_err();
                assert!(
                    matches!(e, EncodeError::ThesisUnits(u) if u == units),
                    "{e}"
                );
                assert!(
                    e.to_string().contains("holds networks in centipawns"),
                    "{e}"
                );
            }
            // The units byte is the last before the tensors.
            let tensors = own.len() - 4 - arch_tensor_bytes_of(&net);
            let mut bad = own.clone();
            bad[tensors - 1] = 9;
            let end = bad.len() - 4;
            let crc = crc32fast::hash(&bad[..end]);
            bad[end..].copy_from_slice(&crc.to_le_bytes());
            let e = Nnue::from_bytes(&bad, "units", &reg)
                .unwrap_err()
                .to_string();
            assert!(e.contains("score units is invalid: code 9"), "{e}");
        }
    }
}

/// The bytes of `net`'s tensors in the own format.
fn arch_tensor_bytes_of(net: &Network) -> usize {
    format::arch_tensor_bytes(
        net.w1().bytes() as u64,
        net.n() as u64,
        net.l1() as u64,
        net.arch(),
    ) as usize
}

#[test]
fn malformed_shapes_in_the_own_format_are_refused_in_one_line() {
    let reg = registry();
    let set = reg.feature_set("all").unwrap();
    let arch = Arch::sfnnv5();
    let net = Network::from_parts(NetworkParts::synthetic_arch(&set, 64, &arch, 5)).unwrap();
    let own = format::encode_own(&net);
    // The shape sits before the tensors: 1 + 4 + 4 + 1 + 1 + 5 per hidden layer + 1 + 1 bytes.
    let arch_len = 13 + 5 * arch.hidden.len();
    let tensors = format::arch_tensor_bytes(net.w1().bytes() as u64, 768, 64, &arch) as usize;
    let at = own.len() - 4 - tensors - arch_len;
    let patched = |offset: usize, bytes: &[u8]| {
        let mut b = own.clone();
        b[at + offset..at + offset + bytes.len()].copy_from_slice(bytes);
        let end = b.len() - 4;
        let crc = crc32fast::hash(&b[..end]);
        b[end..].copy_from_slice(&crc.to_le_bytes());
        b
    };
    assert!(Nnue::from_bytes(&patched(0, &[1]), "same", &reg).is_ok());
    let cases: [(&str, Vec<u8>, &str); 6] = [
        (
            "output code",
            patched(0, &[7]),
            "first-layer output is invalid: code 7",
        ),
        (
            "no stacks",
            patched(5, &0u32.to_le_bytes()),
            "0 layer stacks",
        ),
        ("layers", patched(10, &[9]), "hidden layer count is invalid"),
        ("activation", patched(15, &[5]), "activation is invalid"),
        (
            "thesis rule",
            patched(arch_len - 1, &[0]),
            "thesis's output rule",
        ),
        ("stacks", patched(5, &4u32.to_le_bytes()), "trailing bytes"),
    ];
    for (what, bytes, want) in cases {
        let e = Nnue::from_bytes(&bytes, "case.nnue", &reg)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(want) && !e.contains('\n'), "{what}: {e}");
    }
    let mut short = own.clone();
    short.truncate(at + 3);
    let e = Nnue::from_bytes(&short, "case.nnue", &reg)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("truncated"), "{e}");
}

#[test]
fn the_stack_refuses_to_grow_beyond_its_capacity_and_stays_usable() {
    let reg = registry();
    let nnue = load(&reg, &shared().join("nets/thesis/all.nn"));
    let mut stack = AccumulatorStack::with_max_ply(&nnue, Kernels::best(), 2);
    let mut pos = shakmaty::Chess::default();
    let mut moves = Vec::new();
    for uci in ["e2e4", "e7e5", "g1f3"] {
        let m = uci
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(&pos)
            .unwrap();
        moves.push(plugin_api::move_from_shakmaty(&m).unwrap());
        pos = shakmaty::Position::play(pos, m).unwrap();
    }
    let start = board_from_setup(&parse_fen(plugin_api::conformance::START_FENS[0]).unwrap());
    stack.reset(&start).unwrap();
    let root = stack.evaluate();
    stack.push(&moves[0]).unwrap();
    stack.push(&moves[1]).unwrap();
    let at_two = stack.evaluate();
    assert_eq!(
        stack.push(&moves[2]),
        Err(EvalError::TooDeep { max_ply: 2 })
    );
    assert_eq!(stack.ply(), 2);
    assert_eq!(stack.evaluate(), at_two);
    stack.pop();
    stack.pop();
    assert_eq!(stack.evaluate(), root);
    assert_eq!(nnue.evaluate(&start, Kernels::best()).unwrap(), root);
}

#[test]
fn arranging_the_neurons_groups_the_zero_activations_of_unseen_positions() {
    let reg = registry();
    let nnue = load(&reg, &shared().join("nets/thesis/all.nn"));
    let l1 = nnue.network().l1();
    let order = nnue.arranged().order();
    let mut sorted = order.to_vec();
    sorted.sort_unstable();
    assert!(sorted.iter().copied().eq(0..l1 as u32), "not a permutation");
    assert!(
        order.iter().copied().ne(0..l1 as u32),
        "the file's order was kept"
    );
    // The parity positions are not among the random-game positions the order is learned from.
    let parity = std::fs::read_to_string(shared().join("parity/all.eval.tsv")).unwrap();
    let mut stack = AccumulatorStack::with_max_ply(&nnue, Kernels::best(), 0);
    let (mut arranged_zero, mut file_zero, mut groups) = (0usize, 0usize, 0usize);
    let zero_groups = |acc: &[i16]| acc.chunks(4).filter(|g| g.iter().all(|&a| a <= 0)).count();
    for line in parity.lines() {
        let fen = line.split('\t').next().unwrap();
        stack
            .reset(&board_from_setup(&parse_fen(fen).unwrap()))
            .unwrap();
        for p in [Color::White, Color::Black] {
            let acc = stack.accumulator(p);
            let mut file = vec![0i16; l1];
            for (k, &j) in order.iter().enumerate() {
                file[j as usize] = acc[k];
            }
            arranged_zero += zero_groups(&acc);
            file_zero += zero_groups(&file);
            groups += l1 / 4;
        }
    }
    eprintln!(
        "all-zero groups: {file_zero} in the file's order, {arranged_zero} arranged, of {groups}"
    );
    assert!(2 * arranged_zero >= 3 * file_zero && 5 * arranged_zero >= groups);
}

/// A threat set's network with its threat blocks stored as `i8` and the same values as `i16`.
fn narrow_and_wide(reg: &PluginRegistry, spec: &str, l1: usize) -> (Network, Network) {
    let set = reg.feature_set(spec).unwrap();
    let wide = NetworkParts::synthetic(&set, l1, 8, 5);
    let mut narrow = wide.clone();
    let threats = ["full_threats".to_string(), "pp_3wide".to_string()];
    narrow.blocks = BlockInfo::with_weight_type(narrow.blocks, &threats, WeightType::I8);
    (
        Network::from_parts(narrow).unwrap(),
        Network::from_parts(wide).unwrap(),
    )
}

#[test]
fn i8_blocks_evaluate_exactly_like_the_same_values_in_i16_and_take_half_the_bytes() {
    let reg = registry();
    let spec = "halfka_v2_hm+full_threats+pp_3wide";
    let (narrow, wide) = narrow_and_wide(&reg, spec, 64);
    let threat_rows = 59_808 + 4_560;
    assert_eq!(wide.w1().bytes() - narrow.w1().bytes(), threat_rows * 64);
    assert_eq!(narrow.w1().weight_type(0), WeightType::I16);
    assert_eq!(narrow.w1().weight_type(22_528), WeightType::I8);
    assert_eq!(narrow.to_parts().w1, wide.to_parts().w1);

    // The own format keeps the types (smaller by a byte per threat weight); the thesis format
    // has none and stores the values widened.
    let own = format::encode_own(&narrow);
    assert_eq!(
        format::encode_own(&wide).len() - own.len(),
        threat_rows * 64
    );
    let (back, header) = format::decode_own(&own).unwrap();
    assert_eq!(
        (back, header.version),
        (narrow.clone(), format::THESIS_SHAPE_VERSION)
    );
    assert_eq!(format::encode_thesis(&narrow), format::encode_thesis(&wide));

    // Incremental == refresh for every kernel, the reference, and the i16 copy's outputs.
    let narrow = Nnue::bind(narrow, "narrow", &reg).unwrap();
    let wide = Nnue::bind(wide, "wide", &reg).unwrap();
    check_incremental(&narrow, 77, 300, 10, 20);
    let mut n = AccumulatorStack::new(&narrow, Kernels::best());
    let mut w = AccumulatorStack::new(&wide, Kernels::new(SimdLevel::Scalar).unwrap());
    let mut compared = 0;
    random_walk(78, 400, 60, |step| {
        step.follow(&mut n);
        step.follow(&mut w);
        for p in Color::ALL {
            assert_eq!(
                n.accumulator(p),
                w.accumulator(p),
                "{p:?} at ply {}",
                n.ply()
            );
        }
        assert_eq!(n.evaluate(), w.evaluate());
        compared += 1;
    });
    assert!(compared > 400);
}

#[test]
fn weight_types_are_checked_against_values_and_product_terms() {
    let reg = registry();
    let set = reg.feature_set("all+h").unwrap();
    let mut parts = NetworkParts::synthetic(&set, 32, 4, 9);
    parts.blocks = BlockInfo::with_weight_type(parts.blocks, &["h".into()], WeightType::I8);
    let index = 768 + 5;
    parts.w1[index * 32 + 3] = 128;
    let err = Network::from_parts(parts).unwrap_err();
    assert_eq!(
        err,
        ShapeError::WeightOutOfRange {
            index: index as u32,
            value: 128,
            ty: WeightType::I8
        }
    );
    assert!(
        err.to_string()
            .contains("does not fit the block's weight type i8"),
        "{err}"
    );

    let set = reg.feature_set("k*all").unwrap();
    let mut parts = NetworkParts::synthetic(&set, 32, 4, 9);
    parts.blocks = BlockInfo::with_weight_type(parts.blocks, &["all".into()], WeightType::I8);
    assert_eq!(
        Network::from_parts(parts).unwrap_err(),
        ShapeError::MixedWeightTypes {
            term: "k*all".into()
        }
    );
}
