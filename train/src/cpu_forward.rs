//! The res-mlp forward pass of search on the CPU without burn: the input layer as a sum of
//! weight rows, the trunk and value head through `gemm`, the policy logits of legal actions only.
//!
//! # Why it exists
//!
//! Search needs priors over a position's legal actions (about 20 of the 600) and a value, for
//! batches of one or two hundred leaves at a time. Through burn, a batch pays for every op's
//! allocation and dispatch and for work whose result is thrown away: the `360 → width` input
//! product on 0/1 and constant planes (a sum of 36 weight rows), and the `width → 600` policy
//! product of which about 580 columns are masked out. This pass computes the same function with
//! about 45% fewer multiply-adds (147 k instead of 262 k per position for the default 128×4)
//! in buffers that are reused between calls; `benches/inference.rs` measures both paths.
//!
//! # Exactness
//!
//! The arithmetic is the network's, in another summation order: priors and values agree with
//! [`PolicyValueNet::forward`] followed by the masked softmax to about `1e-5` (tested on random
//! positions and random weights). A batch is cut into chunks of [`CHUNK_ROWS`] rows whatever
//! the threads, each chunk runs `gemm` on one thread, and `gemm` picks its kernels by shape
//! only: a batch always gives the same results (search stays reproducible), and a leaf
//! evaluated in a batch of another size agrees to rounding (about `1e-7`), not bit for bit.

use std::sync::Arc;

use rayon::prelude::*;

use morris_env::features::{BOARD_PLANES, CONSTANT_PLANES, constant_planes};
use morris_env::{ActionMask, NUM_ACTIONS, NUM_POINTS, Rules};

use crate::evaluator::{EvalBatch, Leaf};
use crate::model::{LAYER_NORM_EPSILON, LinearParams, NUM_WDL, NormParams, PolicyValueNet, ResMlpParams};

/// The weights, laid out for this pass (shared by the clones of one evaluator).
#[derive(Debug)]
struct Weights {
    width: usize,
    value_hidden: usize,
    /// The board's points, `N` (24, or six men's morris's 16).
    points: usize,
    /// `[3*N, width]`: the input rows of the board planes (own, opponent, empty; point-major
    /// within a plane), as in the observation.
    board_rows: Vec<f32>,
    /// `[12, width]`: for each constant plane, the sum of its `N` input rows.
    plane_rows: Vec<f32>,
    input_bias: Vec<f32>,
    blocks: Vec<Block>,
    out_norm: NormParams,
    /// `[A, width]`: the policy weights transposed, one row per action of the board.
    policy_rows: Vec<f32>,
    policy_bias: Vec<f32>,
    value_hidden_fc: LinearParams,
    /// `[3, value_hidden]`: the value output weights transposed, one row per outcome.
    value_out_rows: Vec<f32>,
    value_out_bias: Vec<f32>,
}

#[derive(Debug)]
struct Block {
    norm: NormParams,
    fc1: LinearParams,
    fc2: LinearParams,
}

/// Rows evaluated together in one chunk: a batch of more is split into chunks of this many
/// rows (the last one shorter), which rayon may run on different threads. Fixed, so results do
/// not depend on the threads; 64 rows keep `gemm` within a few percent of its best speed on
/// these shapes (`[64, 128] × [128, 128]`).
pub const CHUNK_ROWS: usize = 64;

/// The CPU forward pass of one res-mlp network, with its scratch buffers. Clones share the
/// weights and get their own buffers.
#[derive(Clone, Debug)]
pub struct ResMlpForward {
    weights: Arc<Weights>,
    /// One scratch per chunk of a batch.
    scratch: Vec<Scratch>,
}

/// The buffers of one chunk, reused between calls.
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// `[R, width]` residual stream.
    h: Vec<f32>,
    /// `[R, width]` normalised stream.
    x: Vec<f32>,
    /// `[R, width]` hidden layer of a block.
    y: Vec<f32>,
    /// `[R, value_hidden]` value hidden layer.
    v: Vec<f32>,
    /// `[600]` policy logits of one row (legal entries only are written).
    logits: Vec<f32>,
}

impl ResMlpForward {
    /// The pass for `model`, or `None` if it is not a res-mlp network.
    pub fn new(model: &PolicyValueNet) -> Option<ResMlpForward> {
        let p = model.res_mlp_params()?;
        Some(ResMlpForward { weights: Arc::new(Weights::from_params(p)), scratch: Vec::new() })
    }

    /// Evaluates `leaves` (with their legal `masks`) into `out`: priors as the softmax of the
    /// logits over the legal actions (0 elsewhere), win/draw/loss probabilities, and values
    /// `P(win) − P(loss)`. A batch of more than [`CHUNK_ROWS`] leaves runs in chunks on the
    /// calling rayon pool, each chunk on one thread.
    ///
    /// # Panics
    /// If `masks.len() != leaves.len()`.
    pub fn evaluate(&mut self, rules: &Rules, leaves: &[Leaf], masks: &[ActionMask], out: &mut EvalBatch) {
        assert_eq!(masks.len(), leaves.len(), "one mask per leaf");
        let b = leaves.len();
        out.reset(b);
        if b == 0 {
            return;
        }
        let chunks = b.div_ceil(CHUNK_ROWS);
        if self.scratch.len() < chunks {
            self.scratch.resize_with(chunks, Scratch::default);
        }
        let w = &*self.weights;
        let scratch = &mut self.scratch[..chunks];
        if chunks == 1 || rayon::current_num_threads() == 1 {
            scratch
                .iter_mut()
                .zip(leaves.chunks(CHUNK_ROWS))
                .zip(masks.chunks(CHUNK_ROWS))
                .zip(out.priors.chunks_mut(CHUNK_ROWS * NUM_ACTIONS))
                .zip(out.values.chunks_mut(CHUNK_ROWS))
                .zip(out.wdl.chunks_mut(CHUNK_ROWS))
                .for_each(|(((((s, l), m), p), v), d)| s.run(w, rules, l, m, p, v, d));
        } else {
            scratch
                .par_iter_mut()
                .zip(leaves.par_chunks(CHUNK_ROWS))
                .zip(masks.par_chunks(CHUNK_ROWS))
                .zip(out.priors.par_chunks_mut(CHUNK_ROWS * NUM_ACTIONS))
                .zip(out.values.par_chunks_mut(CHUNK_ROWS))
                .zip(out.wdl.par_chunks_mut(CHUNK_ROWS))
                .for_each(|(((((s, l), m), p), v), d)| s.run(w, rules, l, m, p, v, d));
        }
    }
}

impl Scratch {
    /// The forward pass of up to [`CHUNK_ROWS`] leaves into their slices of the output.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        w: &Weights,
        rules: &Rules,
        leaves: &[Leaf],
        masks: &[ActionMask],
        priors: &mut [f32],
        values: &mut [f32],
        wdl: &mut [[f32; NUM_WDL]],
    ) {
        let b = leaves.len();
        let (width, vh) = (w.width, w.value_hidden);
        for buf in [&mut self.h, &mut self.x, &mut self.y] {
            buf.clear();
            buf.resize(b * width, 0.0);
        }
        self.v.clear();
        self.v.resize(b * vh, 0.0);
        self.logits.resize(NUM_ACTIONS, 0.0);

        for (leaf, h) in leaves.iter().zip(self.h.chunks_exact_mut(width)) {
            w.input_row(rules, leaf, h);
        }
        for block in &w.blocks {
            layer_norm_rows(&self.h, &block.norm, &mut self.x, width);
            fill_rows(&mut self.y, &block.fc1.bias);
            matmul_acc(b, width, width, &self.x, &block.fc1.weight, &mut self.y);
            relu(&mut self.y);
            add_rows(&mut self.h, &block.fc2.bias);
            matmul_acc(b, width, width, &self.y, &block.fc2.weight, &mut self.h);
        }
        layer_norm_rows(&self.h, &w.out_norm, &mut self.x, width);
        fill_rows(&mut self.v, &w.value_hidden_fc.bias);
        matmul_acc(b, width, vh, &self.x, &w.value_hidden_fc.weight, &mut self.v);
        relu(&mut self.v);

        for i in 0..b {
            let x = &self.x[i * width..(i + 1) * width];
            let priors = &mut priors[i * NUM_ACTIONS..(i + 1) * NUM_ACTIONS];
            let mask = &masks[i];
            let mut max = f32::NEG_INFINITY;
            for a in mask.iter() {
                let j = a.index();
                let logit = w.policy_bias[j] + dot(x, &w.policy_rows[j * width..(j + 1) * width]);
                self.logits[j] = logit;
                max = max.max(logit);
            }
            let mut total = 0.0;
            for a in mask.iter() {
                let e = (self.logits[a.index()] - max).exp();
                priors[a.index()] = e;
                total += e;
            }
            if total > 0.0 {
                for a in mask.iter() {
                    priors[a.index()] /= total;
                }
            }
            let v = &self.v[i * vh..(i + 1) * vh];
            let mut z = [0.0f32; NUM_WDL];
            for (k, zk) in z.iter_mut().enumerate() {
                *zk = w.value_out_bias[k] + dot(v, &w.value_out_rows[k * vh..(k + 1) * vh]);
            }
            let m = z[0].max(z[1]).max(z[2]);
            let e = z.map(|t| (t - m).exp());
            let sum = e[0] + e[1] + e[2];
            let p = e.map(|t| t / sum);
            wdl[i] = p;
            values[i] = (p[0] - p[2]).clamp(-1.0, 1.0);
        }
    }
}

impl Weights {
    fn from_params(p: ResMlpParams) -> Weights {
        let (width, n) = (p.width, p.points);
        let board = BOARD_PLANES * n;
        let board_rows = p.input.weight[..board * width].to_vec();
        let mut plane_rows = vec![0.0; CONSTANT_PLANES * width];
        for (c, sum) in plane_rows.chunks_exact_mut(width).enumerate() {
            let first = board + c * n;
            for row in p.input.weight[first * width..(first + n) * width].chunks_exact(width) {
                add(sum, row);
            }
        }
        let policy_rows = transpose(&p.policy.weight, width, p.actions);
        let value_out_rows = transpose(&p.value_out.weight, p.value_hidden, NUM_WDL);
        Weights {
            width,
            value_hidden: p.value_hidden,
            points: n,
            board_rows,
            plane_rows,
            input_bias: p.input.bias,
            blocks: p.blocks.into_iter().map(|b| Block { norm: b.norm, fc1: b.fc1, fc2: b.fc2 }).collect(),
            out_norm: p.out_norm,
            policy_rows,
            policy_bias: p.policy.bias,
            value_hidden_fc: p.value_hidden_fc,
            value_out_rows,
            value_out_bias: p.value_out.bias,
        }
    }

    /// The input layer for one leaf: the bias, the rows of the `N` occupied board features and
    /// the plane sums scaled by the constant planes' values.
    fn input_row(&self, rules: &Rules, leaf: &Leaf, h: &mut [f32]) {
        let pos = &leaf.position;
        let me = pos.current_player();
        let own = pos.pieces(me).0;
        let theirs = pos.pieces(me.opponent()).0;
        h.copy_from_slice(&self.input_bias);
        // The 24-point boards with their point count a constant, as before boards were data.
        if self.points == NUM_POINTS {
            self.add_board_rows(own, theirs, h, NUM_POINTS);
        } else {
            self.add_board_rows(own, theirs, h, self.points);
        }
        let width = self.width;
        for (c, value) in constant_planes(pos, rules, leaf.repetitions).into_iter().enumerate() {
            if value != 0.0 {
                axpy(h, value, &self.plane_rows[c * width..(c + 1) * width]);
            }
        }
    }

    /// Adds to `h` the input row of each of the `n` points' board feature (own, opponent or
    /// empty).
    #[inline(always)]
    fn add_board_rows(&self, own: u32, theirs: u32, h: &mut [f32], n: usize) {
        let width = self.width;
        for p in 0..n {
            let plane = if own >> p & 1 == 1 {
                0
            } else if theirs >> p & 1 == 1 {
                1
            } else {
                2
            };
            let f = plane * n + p;
            add(h, &self.board_rows[f * width..(f + 1) * width]);
        }
    }
}

/// The `[cols, rows]` transpose of a row-major `[rows, cols]` matrix.
fn transpose(m: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0; rows * cols];
    for (r, row) in m.chunks_exact(cols).enumerate() {
        for (c, &x) in row.iter().enumerate() {
            t[c * rows + r] = x;
        }
    }
    t
}

/// `c[m×n] += a[m×k] · b[k×n]`, row-major and contiguous, on this thread.
fn matmul_acc(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() == m * k && b.len() == k * n && c.len() == m * n, "matmul_acc: shape mismatch");
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: `gemm` reads `a[i*k + p]`, `b[p*n + j]` and reads and writes `c[i*n + j]` for
    // `i < m`, `p < k`, `j < n` (row strides `k`, `n`, `n`, column strides 1), all in bounds by
    // the assertion above. `c` is a unique borrow, so it overlaps neither `a` nor `b`, and
    // `Parallelism::None` keeps every access on this thread.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            true,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// `LayerNorm` of every row of `h` into `x` (biased variance, as burn's).
fn layer_norm_rows(h: &[f32], norm: &NormParams, x: &mut [f32], width: usize) {
    let n = width as f32;
    for (hr, xr) in h.chunks_exact(width).zip(x.chunks_exact_mut(width)) {
        let mean = sum(hr) / n;
        for (xo, &hv) in xr.iter_mut().zip(hr) {
            *xo = hv - mean;
        }
        let var = dot(xr, xr) / n;
        let inv = 1.0 / (var + LAYER_NORM_EPSILON).sqrt();
        for ((xo, g), bt) in xr.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
            *xo = *xo * inv * g + bt;
        }
    }
}

/// Every row of `out` set to `row`.
fn fill_rows(out: &mut [f32], row: &[f32]) {
    for r in out.chunks_exact_mut(row.len()) {
        r.copy_from_slice(row);
    }
}

/// `row` added to every row of `out`.
fn add_rows(out: &mut [f32], row: &[f32]) {
    for r in out.chunks_exact_mut(row.len()) {
        add(r, row);
    }
}

fn relu(x: &mut [f32]) {
    for v in x {
        *v = v.max(0.0);
    }
}

fn add(out: &mut [f32], row: &[f32]) {
    for (o, r) in out.iter_mut().zip(row) {
        *o += r;
    }
}

fn axpy(out: &mut [f32], a: f32, row: &[f32]) {
    for (o, r) in out.iter_mut().zip(row) {
        *o += a * r;
    }
}

/// Lanes of the vectorised reductions: independent partial sums the compiler keeps in SIMD
/// registers (a single running sum could not be vectorised without reordering it).
const LANES: usize = 16;

fn sum(x: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + tail
}

fn dot(x: &[f32], y: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let (cx, cy) = (x.chunks_exact(LANES), y.chunks_exact(LANES));
    let tail: f32 = cx.remainder().iter().zip(cy.remainder()).map(|(a, b)| a * b).sum();
    for (a, b) in cx.zip(cy) {
        for ((s, p), q) in acc.iter_mut().zip(a).zip(b) {
            *s += p * q;
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::Evaluator;
    use crate::model::{NetConfig, Trunk};
    use crate::net_evaluator::NetEvaluator;
    use burn::prelude::Device;

    /// Both passes on the same leaves: the largest difference in any prior, WDL entry or value.
    fn max_difference(config: &NetConfig, n: usize, seed: u64) -> f32 {
        let device = Device::flex();
        let model = config.init(&device);
        let rules = Rules::of(config.variant);
        let (leaves, masks) = Leaf::random_batch(rules, n, seed);
        let mut reference = EvalBatch::default();
        NetEvaluator::new(model.clone(), device).burn_only().evaluate(
            &rules,
            &leaves,
            &masks,
            &mut reference,
        );
        let mut fast = EvalBatch::default();
        ResMlpForward::new(&model).unwrap().evaluate(&rules, &leaves, &masks, &mut fast);
        let mut worst = 0.0f32;
        for (a, b) in reference.priors.iter().zip(&fast.priors) {
            worst = worst.max((a - b).abs());
        }
        for (a, b) in reference.values.iter().zip(&fast.values) {
            worst = worst.max((a - b).abs());
        }
        for (a, b) in reference.wdl.iter().zip(&fast.wdl) {
            for k in 0..NUM_WDL {
                worst = worst.max((a[k] - b[k]).abs());
            }
        }
        worst
    }

    #[test]
    fn agrees_with_the_burn_network() {
        let default = NetConfig::default();
        assert!(max_difference(&default, 300, 1) < 2e-5);
        // Odd sizes: widths that are not a multiple of the SIMD lanes, one block, a small head.
        let odd = NetConfig { width: 37, blocks: 1, value_hidden: 5, ..NetConfig::default() };
        assert!(max_difference(&odd, 100, 2) < 2e-5);
        // Six men's morris's board: 16 points, 272 actions.
        let six = NetConfig { variant: morris_env::Variant::Six, width: 48, ..NetConfig::default() };
        assert!(max_difference(&six, 100, 3) < 2e-5);
    }

    #[test]
    fn rows_barely_depend_on_the_batch() {
        let model = NetConfig { width: 24, blocks: 2, ..NetConfig::default() }.init(&Device::flex());
        let rules = Rules::standard();
        let (leaves, masks) = Leaf::random_batch(rules, 40, 3);
        let mut pass = ResMlpForward::new(&model).unwrap();
        let mut all = EvalBatch::default();
        pass.evaluate(&rules, &leaves, &masks, &mut all);
        let mut one = EvalBatch::default();
        // `gemm` picks its kernels by shape (a single row takes a matrix-vector path), so rows
        // agree to rounding, not bit for bit.
        for i in [0, 17, 39] {
            pass.evaluate(&rules, &leaves[i..=i], &masks[i..=i], &mut one);
            for (a, b) in one.prior_row(0).iter().zip(all.prior_row(i)) {
                assert!((a - b).abs() < 1e-6, "leaf {i}: prior {a} alone, {b} in the batch");
            }
            for k in 0..NUM_WDL {
                assert!((one.wdl[0][k] - all.wdl[i][k]).abs() < 1e-6, "leaf {i}: wdl");
            }
        }
    }

    #[test]
    fn graph_networks_have_no_cpu_pass() {
        let config = NetConfig { trunk: Trunk::GraphConv, width: 8, blocks: 1, ..NetConfig::default() };
        assert!(ResMlpForward::new(&config.init(&Device::flex())).is_none());
    }
}
