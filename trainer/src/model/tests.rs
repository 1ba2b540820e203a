//! The model's forward pass and gradients against libtorch's autograd, and its stack paths
//! against each other.

use super::*;
use rand::Rng;

fn tiny() -> Shape {
    Shape::thesis(10, 4, 3)
}

#[test]
fn forward_is_the_embedding_sum_of_each_perspective() {
    let m = Model::new(tiny(), 1, Device::Cpu);
    // Two positions: (stm {1, 3}, opp {2}) and (stm {}, opp {0, 9}), bags interleaved.
    let input = SparseInput {
        len: 2,
        indices: Tensor::from_slice(&[1i64, 3, 2, 0, 9]),
        offsets: Tensor::from_slice(&[0i64, 2, 3, 3]),
        pieces: vec![3, 2],
    };
    let out = tensor_to_vec(&m.forward(&input));
    let [w1, b1, w2, b2, w3, b3]: [Vec<f32>; 6] = m.to_vecs().try_into().unwrap();
    let (l1, l2) = (4, 3);
    let acc = |idx: &[usize]| -> Vec<f32> {
        (0..l1)
            .map(|k| b1[k] + idx.iter().map(|&i| w1[i * l1 + k]).sum::<f32>())
            .collect()
    };
    let reference = |stm: &[usize], opp: &[usize]| -> f32 {
        let x: Vec<f32> = acc(stm)
            .into_iter()
            .chain(acc(opp))
            .map(|v| v.clamp(0.0, 1.0))
            .collect();
        let mut o = b3[0];
        for j in 0..l2 {
            let s: f32 = b2[j] + (0..2 * l1).map(|k| w2[j * 2 * l1 + k] * x[k]).sum::<f32>();
            o += w3[j] * s.clamp(0.0, 1.0);
        }
        o * OUTPUT_SCALE as f32
    };
    assert!((out[0] - reference(&[1, 3], &[2])).abs() < 1e-3);
    assert!((out[1] - reference(&[], &[0, 9])).abs() < 1e-3);
}

#[test]
fn nnue_pytorchs_start_bounds_each_term_by_its_own_rows() {
    // Terms of 400 and 1600 rows, then 100 virtual rows; L1 64.
    let shape = Shape::thesis(2100, 64, 8);
    let m = Model::with_init(
        shape,
        FirstLayerInit::NnuePytorch,
        &[400, 1600],
        3,
        Device::Cpu,
    );
    let [w1, b1, ..]: [Vec<f32>; 6] = m.to_vecs().try_into().unwrap();
    let largest = |rows: std::ops::Range<usize>| {
        w1[rows.start * 64..rows.end * 64]
            .iter()
            .fold(0f32, |m, w| m.max(w.abs()))
    };
    // Uniform in ±1/√400 = ±0.05 and ±1/√1600 = ±0.025: each reaches near its own bound.
    assert!(
        (0.049..=0.05).contains(&largest(0..400)),
        "{}",
        largest(0..400)
    );
    assert!((0.024..=0.025).contains(&largest(400..2000)));
    assert_eq!(largest(2000..2100), 0.0, "virtual rows start at zero");
    let bias = b1.iter().fold(0f32, |m, b| m.max(b.abs()));
    assert!(bias <= 1.0 / 2000f32.sqrt() && bias > 0.0, "{bias}");
    // The first start is what a plain new model draws, its bias around 0.5.
    let first = Model::with_init(tiny(), FirstLayerInit::ActiveFanIn, &[10], 7, Device::Cpu);
    assert_eq!(
        first.to_vecs(),
        Model::new(tiny(), 7, Device::Cpu).to_vecs()
    );
    assert!(first.to_vecs()[1].iter().all(|b| (b - 0.5).abs() <= 0.09));
}

#[test]
fn same_seed_same_weights_and_clipping_bounds_them() {
    let a = Model::new(tiny(), 7, Device::Cpu).to_vecs();
    let b = Model::new(tiny(), 7, Device::Cpu).to_vecs();
    let c = Model::new(tiny(), 8, Device::Cpu).to_vecs();
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mut m = Model::new(tiny(), 7, Device::Cpu);
    tch::no_grad(|| {
        let _ = m.params[2].fill_(5.0);
        let _ = m.params[4].fill_(-5.0);
        let _ = m.params[0].fill_(-3.0);
    });
    // Rows 2..5 are stored as i8: they stay within ±1 (127 after ×127); the others within
    // the i16 range.
    m.narrow_rows = vec![(2, 3)];
    m.clip();
    let v = m.to_vecs();
    assert!(v[2].iter().all(|&w| w == MAX_HIDDEN_WEIGHT as f32));
    assert!(v[4].iter().all(|&w| w == -MAX_HIDDEN_WEIGHT as f32));
    let l1 = tiny().l1;
    for (k, &w) in v[0].iter().enumerate() {
        let expected = if (2..5).contains(&(k / l1)) {
            -1.0
        } else {
            -3.0
        };
        assert_eq!(w, expected, "W1 value {k}");
    }
}

/// A small shape with every part of Stockfish's: PSQT, stacks, pairwise, squared ReLU, skip.
fn small_stockfish_like(n: usize) -> Shape {
    let arch = Arch {
        ft_output: FtOutput::Pairwise,
        psqt_buckets: 3,
        stacks: 4,
        bucket_rule: nnue::BucketRule::PieceCount,
        hidden: vec![
            nnue::Hidden::new(5, Activation::SqrClippedRelu),
            nnue::Hidden::new(4, Activation::ClippedRelu),
        ],
        skip: nnue::Skip::ExtraOutput,
        dense_output: false,
        output: OutputRule::Stockfish,
    };
    Shape::new(n, 64, arch)
}

/// A seeded batch of `len` positions, each perspective up to five random indices below `rows`,
/// random piece counts; and its indices.
fn random_input(seed: u64, len: usize, rows: i64) -> (SparseInput, Vec<i64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut indices, mut offsets) = (Vec::new(), Vec::new());
    for _ in 0..2 * len {
        offsets.push(indices.len() as i64);
        for _ in 0..rng.random_range(0..6) {
            indices.push(rng.random_range(0..rows));
        }
    }
    let input = SparseInput {
        len,
        indices: Tensor::from_slice(&indices),
        offsets: Tensor::from_slice(&offsets),
        pieces: (0..len).map(|_| rng.random_range(2..=32u8)).collect(),
    };
    (input, indices)
}

#[test]
fn hand_scattered_first_layer_gradient_equals_autograd() {
    gradients_agree(Shape::thesis(40, 32, 8));
    gradients_agree(small_stockfish_like(40));
    // Stockfish's shape of today: the product clipped at 255, the skip difference, the dense
    // output.
    gradients_agree(Shape::new(40, 64, Arch::sfnnv16()));
    // Both clipped accumulators handed on, with PSQT and stacks.
    let mut arch = small_stockfish_like(40).arch;
    arch.ft_output = FtOutput::ClippedRelu;
    arch.skip = nnue::Skip::None;
    gradients_agree(Shape::new(40, 32, arch));
}

fn gradients_agree(shape: Shape) {
    let mut m = Model::new(shape.clone(), 3, Device::Cpu);
    m.init_psqt(
        &(0..40)
            .map(|i| f64::from(i) * 10.0 - 200.0)
            .collect::<Vec<_>>(),
    );
    let (input, _) = random_input(9, 50, 40);
    let target = Tensor::from_slice(&(0..50).map(|i| i as f32 * 7.0 - 150.0).collect::<Vec<_>>());
    let loss = |out: &Tensor| (out - &target).square().mean(Kind::Float);
    let fwd = m.forward_train(&input);
    loss(&fwd.out).backward();
    assert!(fwd.leaves.is_some());
    let manual = m.gradients(&fwd, &input);
    let mut m = m;
    m.zero_grad();
    let out = m.forward(&input);
    loss(&out).backward();
    let auto = m.gradients(&ModelForward { out, leaves: None }, &input);
    assert!(manual.w1_rows.is_some() && auto.w1_rows.is_none());
    let dense = |g: &Gradients| {
        let mut t: Vec<Tensor> = g.tensors.iter().map(|t| t.shallow_clone()).collect();
        t[0] = g.dense_w1(40);
        t
    };
    let (manual, auto) = (dense(&manual), dense(&auto));
    for (a, b) in manual.iter().zip(&auto) {
        let (a, b) = (tensor_to_vec(a), tensor_to_vec(b));
        let scale = b.iter().fold(1e-6f32, |s, v| s.max(v.abs()));
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-4 * scale, "{x} vs {y}");
        }
    }
    assert!(tensor_to_vec(&manual[0]).iter().any(|&g| g != 0.0));
    assert_eq!(manual.len(), param_names(&shape).len());
}

#[test]
fn stacks_gathered_per_row_equal_stacks_grouped() {
    // Off the CPU each row's stack is gathered from every stack's outputs
    // (`Stacks::PerRow`); on the CPU rows are grouped by stack. Same values and gradients.
    for shape in [small_stockfish_like(40), {
        let mut arch = small_stockfish_like(40).arch;
        arch.ft_output = FtOutput::ClippedRelu;
        arch.skip = nnue::Skip::None;
        Shape::new(40, 32, arch)
    }] {
        let mut m = Model::new(shape.clone(), 5, Device::Cpu);
        // The stacks start equal (nnue-pytorch's initialisation): make them differ.
        tch::manual_seed(6);
        tch::no_grad(|| {
            for p in &mut m.params[2..] {
                let _ = p.g_add_(&(p.randn_like() * 0.1));
            }
        });
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let rows = 300;
        let width = m
            .ft_output(&Tensor::zeros(
                [1, 2, w1_columns(&shape) as i64],
                (Kind::Float, Device::Cpu),
            ))
            .size()[1];
        let x = Tensor::from_slice(
            &(0..rows * width)
                .map(|_| rng.random::<f32>())
                .collect::<Vec<_>>(),
        )
        .view([rows, width]);
        let input = SparseInput {
            len: rows as usize,
            indices: Tensor::zeros([0], (Kind::Int64, Device::Cpu)),
            offsets: Tensor::zeros([2 * rows], (Kind::Int64, Device::Cpu)),
            pieces: (0..rows).map(|_| rng.random_range(2..=32u8)).collect(),
        };
        let stack = stack_of_each(m.arch(), &input.pieces);
        let stacks = m.arch().stacks as i64;
        assert!((0..stacks).all(|k| stack.contains(&k)), "every stack used");
        let stack = Tensor::from_slice(&stack);
        let run = |gathered: bool| {
            for p in &m.params {
                let mut g = p.grad();
                if g.defined() {
                    let _ = g.zero_();
                }
            }
            let (out, first) = if gathered {
                m.stack(&x, Stacks::PerRow(&stack))
            } else {
                (
                    m.by_stack(&x, &input, |x, s| m.stack(x, s).0),
                    m.by_stack(&x, &input, |x, s| m.stack(x, s).1),
                )
            };
            (out.square().sum(Kind::Float) + first.sum(Kind::Float)).backward();
            let grads: Vec<Vec<f32>> = m.params[2..]
                .iter()
                .map(|p| tensor_to_vec(&p.grad()))
                .collect();
            (tensor_to_vec(&out), tensor_to_vec(&first), grads)
        };
        let (grouped, gathered) = (run(false), run(true));
        let close = |a: &[f32], b: &[f32]| {
            let scale = b.iter().fold(1e-6f32, |s, v| s.max(v.abs()));
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-5 * scale)
        };
        assert!(close(&gathered.0, &grouped.0), "outputs");
        assert!(close(&gathered.1, &grouped.1), "first hidden activations");
        for (i, (a, b)) in gathered.2.iter().zip(&grouped.2).enumerate() {
            assert!(close(a, b), "gradient of parameter {}", i + 2);
            assert!(b.iter().any(|&g| g != 0.0));
        }
    }
}

#[test]
fn the_path_a_gpu_takes_is_chosen_by_the_device_and_agrees_with_the_cpus() {
    // Off the CPU: autograd throughout, per-row layer stacks, a dense W1 gradient whose
    // touched rows sparse Adam gathers. Chosen by the device, and run here on the CPU.
    assert_eq!(Execution::for_device(Device::Cuda(0)), Execution::Autograd);
    assert_eq!(Execution::for_device(Device::Mps), Execution::Autograd);
    assert_eq!(Execution::for_device(Device::Cpu), Execution::CpuKernels);
    // Stockfish 15.1's layer kinds, small, and today's shape.
    for shape in [
        small_stockfish_like(40),
        Shape::new(40, 64, Arch::sfnnv16()),
    ] {
        // Rows from 30 on are never touched.
        let (input, indices) = random_input(21, 64, 30);
        let target =
            Tensor::from_slice(&(0..64).map(|i| i as f32 * 5.0 - 160.0).collect::<Vec<_>>());
        let config = crate::train::optim::AdamConfig {
            sparse_first_layer: true,
            ..Default::default()
        };
        let step = |execution: Execution| {
            let mut m = Model::new(shape.clone(), 3, Device::Cpu);
            m.set_execution(execution);
            let before = tensor_to_vec(m.w1());
            let fwd = m.forward_train(&input);
            (&fwd.out - &target).square().mean(Kind::Float).backward();
            let mut grads = m.gradients(&fwd, &input);
            grads.touch_rows(&input);
            let shape_of_grads = (fwd.leaves.is_some(), grads.w1_rows.is_some());
            let touched = grads.w1_touched.as_ref().map(|t| {
                let n = t.numel();
                let mut v = vec![0i64; n];
                t.copy_data(&mut v, n);
                v
            });
            let out = tensor_to_vec(&fwd.out);
            drop(fwd);
            m.zero_grad();
            let mut adam = crate::train::optim::Adam::new(config, &m.params());
            let scales = vec![1.0; m.params().len()];
            adam.step_gradients(&mut m.params_mut(), &grads, 1e-2, &scales);
            (shape_of_grads, touched, out, before, m.to_vecs())
        };
        let (cpu, gpu) = (step(Execution::CpuKernels), step(Execution::Autograd));
        // The CPU's hand-made leaves and row-compressed gradient; the GPU's autograd and dense one,
        // with the batch's distinct rows recorded.
        assert_eq!((cpu.0, gpu.0), ((true, true), (false, false)));
        let mut distinct = indices.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(cpu.1, None);
        assert_eq!(gpu.1.as_deref(), Some(&distinct[..]));
        let close = |a: &[f32], b: &[f32]| {
            let scale = b.iter().fold(1e-6f32, |s, v| s.max(v.abs()));
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-4 * scale)
        };
        assert!(close(&gpu.2, &cpu.2), "outputs");
        for (i, (a, b)) in gpu.4.iter().zip(&cpu.4).enumerate() {
            assert!(close(a, b), "parameter {i} after the step");
        }
        // Sparse Adam moved the touched rows of W1 only, on both paths.
        let cols = w1_columns(&shape);
        for (path, (before, after)) in [("cpu", (&cpu.3, &cpu.4[0])), ("gpu", (&gpu.3, &gpu.4[0]))]
        {
            for row in 0..40 {
                let moved =
                    before[row * cols..(row + 1) * cols] != after[row * cols..(row + 1) * cols];
                assert_eq!(moved, distinct.contains(&(row as i64)), "{path}: row {row}");
            }
        }
    }
}
