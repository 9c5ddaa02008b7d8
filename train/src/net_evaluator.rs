//! Batched network inference as an [`Evaluator`]: one forward pass per batch of leaves, with the
//! policy softmax over legal actions only.
//!
//! # Threads (flex backend)
//!
//! burn's flex backend runs on the rayon pool it is *called from*: matmuls use
//! `rayon::current_num_threads()` threads, but only for large products (roughly batch ≥ 100
//! at width 128), so a small batch uses about one core whatever the pool. The model and
//! [`Device`] are `Send + Sync`: for parallel search, give each search thread its own
//! `NetEvaluator` (clones share the weights) and either call it from inside a 1-thread pool
//! ([`NetEvaluator::with_threads`]) or from a rayon `par_iter`; plain `std::thread`s that all
//! fall into the global pool oversubscribe the cores.
//!
//! # The CPU pass
//!
//! On burn's `flex` device a res-mlp network runs through [`ResMlpForward`] instead of burn:
//! the same function with fewer multiply-adds and no per-op allocation, on the calling thread
//! (see [`crate::cpu_forward`]). Other devices and the graph-conv trunk go through burn.
//! [`NetEvaluator::burn_only`] turns the CPU pass off (for comparisons).
//!
//! Batch size through burn (`benches/inference.rs`, 2-core VM): the default res-mlp gives ~20k evals/s at
//! batch 1 and 70–105k/s from batch 64 up; the graph-conv trunk peaks near batch 64
//! (~7.5k/s on one thread, ~10k/s on two) and slows down at 256–1024 (its `[B*24, width]`
//! activations leave the cache), so feed it batches of about 64.

use std::sync::Arc;

use burn::prelude::*;
use burn::tensor::Transaction;
use morris_env::{ActionMask, NUM_ACTIONS, Rules};

use crate::cpu_forward::ResMlpForward;
use crate::error::{Result, TrainError};
use crate::evaluator::{EvalBatch, Evaluator, Leaf, encode_batch};
use crate::model::{NUM_WDL, PolicyValueNet};

/// The policy/value network as an [`Evaluator`]: one forward pass per batch of leaves.
///
/// Priors are the masked softmax of the policy logits (0 on illegal actions, summing to 1 over
/// legal ones); values are `P(win) − P(loss)` from the WDL head, for the player to move.
#[derive(Clone)]
pub struct NetEvaluator {
    model: PolicyValueNet,
    device: Device,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// `[B, C*24]` observation buffer, reused between calls.
    obs: Vec<f32>,
    /// The CPU pass, for a res-mlp network on `flex` (unless turned off).
    cpu: Option<ResMlpForward>,
    /// Whether the CPU pass may be used.
    allow_cpu: bool,
}

impl NetEvaluator {
    /// Wraps `model` for inference on `device`: autodiff is stripped (`valid()`) and the weights
    /// are moved to `device` if they live elsewhere.
    pub fn new(model: PolicyValueNet, device: Device) -> NetEvaluator {
        let model = model.valid().to_device(&device);
        let mut e = NetEvaluator { model, device, pool: None, obs: Vec::new(), cpu: None, allow_cpu: true };
        e.cpu = e.cpu_pass();
        e
    }

    /// Runs every evaluation through burn, even where the CPU pass could (for comparisons and
    /// tests of the pass itself).
    pub fn burn_only(mut self) -> NetEvaluator {
        self.allow_cpu = false;
        self.cpu = None;
        self
    }

    /// Whether evaluations go through the CPU pass rather than burn.
    pub fn uses_cpu_pass(&self) -> bool {
        self.cpu.is_some()
    }

    fn cpu_pass(&self) -> Option<ResMlpForward> {
        if self.allow_cpu && self.device == Device::flex() { ResMlpForward::new(&self.model) } else { None }
    }

    /// Runs every evaluation inside a private rayon pool of `threads` threads (flex uses the
    /// calling pool for its kernels). Without this, calls use whatever pool they come from.
    /// Do not call such an evaluator from a worker of another rayon pool: while it waits for the
    /// private pool, that worker steals and runs other jobs of its own pool.
    ///
    /// # Errors
    /// [`TrainError::Internal`] if the pool cannot be built.
    pub fn with_threads(mut self, threads: usize) -> Result<NetEvaluator> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(|e| TrainError::Internal(format!("cannot build a {threads}-thread pool: {e}")))?;
        self.pool = Some(Arc::new(pool));
        Ok(self)
    }

    /// The inference model.
    pub fn model(&self) -> &PolicyValueNet {
        &self.model
    }

    /// The device inference runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Replaces the weights (for example with the learner's latest), stripping autodiff and
    /// moving them to this evaluator's device.
    pub fn set_model(&mut self, model: &PolicyValueNet) {
        self.model = model.valid().to_device(&self.device);
        self.cpu = self.cpu_pass();
    }

    fn run(&mut self, rules: &Rules, leaves: &[Leaf], masks: &[ActionMask], out: &mut EvalBatch) {
        let b = leaves.len();
        out.reset(b);
        if b == 0 {
            return;
        }
        assert_eq!(masks.len(), b, "one mask per leaf");
        let config = self.model.config();
        let (obs_len, actions) = (config.obs_len(), config.num_actions());
        encode_batch(rules, leaves, &mut self.obs);
        // TensorData owns its bytes, so the buffer is copied (cheap next to the forward).
        let obs = Tensor::<2>::from_data(TensorData::new(self.obs.clone(), [b, obs_len]), &self.device);
        // Raw logits come back and the softmaxes run here, over the legal actions only: about 20
        // exponentials per row instead of 600, most of which would underflow (a slow path in
        // libm) after masking. In self-play with the default config this raised network
        // evaluations from about 43k/s to 67-73k/s (positions per minute: 51k to 73k).
        let (logits, wdl) = self.model.forward(obs);
        let mut data = Transaction::default().register(logits).register(wdl).execute().into_iter();
        let (Some(logits), Some(wdl)) = (data.next(), data.next()) else {
            panic!("the transaction returned fewer tensors than registered");
        };
        let logits = logits.as_slice::<f32>().expect("policy logits are f32");
        let wdl = wdl.as_slice::<f32>().expect("wdl logits are f32");
        for (i, mask) in masks.iter().enumerate() {
            // An empty mask (excluded by the trait's contract) keeps all-zero priors.
            let row = &logits[i * actions..(i + 1) * actions];
            let out_row = &mut out.priors[i * NUM_ACTIONS..(i + 1) * NUM_ACTIONS];
            let max = mask.iter().map(|a| row[a.index()]).fold(f32::NEG_INFINITY, f32::max);
            let mut total = 0.0;
            for a in mask.iter() {
                let e = (row[a.index()] - max).exp();
                out_row[a.index()] = e;
                total += e;
            }
            if total > 0.0 {
                for a in mask.iter() {
                    out_row[a.index()] /= total;
                }
            }
            let z = [wdl[i * NUM_WDL], wdl[i * NUM_WDL + 1], wdl[i * NUM_WDL + 2]];
            let m = z[0].max(z[1]).max(z[2]);
            let e = z.map(|x| (x - m).exp());
            let sum = e[0] + e[1] + e[2];
            let p = e.map(|x| x / sum);
            out.wdl[i] = p;
            out.values[i] = (p[0] - p[2]).clamp(-1.0, 1.0);
        }
    }
}

impl Evaluator for NetEvaluator {
    /// Encodes the leaves, runs one forward pass for the whole batch and reads priors and WDL
    /// back in one transaction.
    ///
    /// # Panics
    /// If `masks.len() != leaves.len()`, if the rules' board is not the network's (its points
    /// and actions: a model of one 24-point variant may score another's positions, as the web
    /// viewer does), or on a device error.
    fn evaluate(&mut self, rules: &Rules, leaves: &[Leaf], masks: &[ActionMask], out: &mut EvalBatch) {
        let board = rules.variant.board();
        let config = self.model.config();
        assert_eq!(
            (board.num_points, board.num_actions()),
            (config.num_points(), config.num_actions()),
            "the rules' board is the network's"
        );
        if let Some(cpu) = &mut self.cpu {
            return cpu.evaluate(rules, leaves, masks, out);
        }
        match self.pool.clone() {
            Some(pool) => pool.install(|| self.run(rules, leaves, masks, out)),
            None => self.run(rules, leaves, masks, out),
        }
    }

    fn name(&self) -> String {
        let c = self.model.config();
        format!("net({} {}x{})", c.trunk, c.blocks, c.width)
    }
}
