//! The learner: AdamW steps on the AlphaZero loss with a warm-up plus constant or cosine
//! learning-rate schedule, gradient norms for logging, and optimizer state saved and restored.

use std::path::Path;

use burn::grad_clipping::GradientClippingConfig;
use burn::module::{ModuleVisitor, Param};
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use burn::tensor::Transaction;

use crate::config::{LrSchedule, OptimizerConfig};
use crate::error::{Result, TrainError};
use crate::model::{LossStats, NUM_WDL, NetConfig, PolicyValueNet, loss_from_logits};
use crate::replay::TrainBatch;

/// The learning rate after `step` optimizer steps, with `progress` the fraction of the run done
/// (in `[0, 1]`): linear warm-up over `warmup_steps`, then constant, or a cosine decay from the
/// peak to 10% of it as `progress` goes from 0 to 1.
pub fn learning_rate(config: &OptimizerConfig, step: u64, progress: f64) -> f64 {
    let peak = config.learning_rate;
    if step < config.warmup_steps {
        return peak * (step + 1) as f64 / config.warmup_steps as f64;
    }
    match config.schedule {
        LrSchedule::Constant => peak,
        LrSchedule::Cosine => {
            let p = progress.clamp(0.0, 1.0);
            let floor = 0.1 * peak;
            floor + (peak - floor) * 0.5 * (1.0 + (std::f64::consts::PI * p).cos())
        }
    }
}

/// What one optimizer step measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// The loss parts (policy loss averaged over the rows that have a policy target).
    pub loss: LossStats,
    /// Global L2 norm of the gradient before clipping, when it was asked for.
    pub grad_norm: Option<f32>,
}

/// The network being trained, its optimizer and the step counter.
pub struct Learner {
    model: PolicyValueNet,
    optim: ModuleOptimizer,
    device: Device,
    config: OptimizerConfig,
    step: u64,
}

fn adamw(config: &OptimizerConfig) -> ModuleOptimizer {
    AdamWConfig::new()
        .with_weight_decay(config.weight_decay)
        .with_grad_clipping(
            (config.grad_clip_norm > 0.0).then_some(GradientClippingConfig::Norm(config.grad_clip_norm)),
        )
        .init()
}

impl Learner {
    /// A freshly initialised network of shape `net` on `device` (a plain device: the learner
    /// trains on its autodiff version).
    pub fn new(net: &NetConfig, config: &OptimizerConfig, device: &Device) -> Learner {
        let device = device.clone().autodiff();
        let model = net.init(&device).with_stable_ids();
        Learner { model, optim: adamw(config), device, config: config.clone(), step: 0 }
    }

    /// Continues training `model` (loaded on any device) from `step`; call
    /// [`Learner::load_optimizer`] to restore the AdamW moments too.
    pub fn from_model(
        model: PolicyValueNet,
        step: u64,
        config: &OptimizerConfig,
        device: &Device,
    ) -> Learner {
        let device = device.clone().autodiff();
        let model = model.to_device(&device).train().with_stable_ids();
        Learner { model, optim: adamw(config), device, config: config.clone(), step }
    }

    /// Optimizer steps taken.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The network being trained (on the autodiff device).
    pub fn model(&self) -> &PolicyValueNet {
        &self.model
    }

    /// Whether every weight is a finite number: checked before weights are published or
    /// checkpointed, so that a diverged network is never written.
    pub fn weights_are_finite(&self) -> bool {
        weights_are_finite(&self.model)
    }

    /// A copy of the network for inference (autodiff stripped).
    pub fn inference_model(&self) -> PolicyValueNet {
        self.model.valid()
    }

    /// One AdamW step on `batch` at learning rate `lr`. The policy loss is averaged over the rows
    /// with a policy target (`policy_weight` 1); every row has a value target.
    ///
    /// # Panics
    /// If the batch buffers do not have consistent lengths, or on a device error.
    pub fn train_step(&mut self, batch: &TrainBatch, lr: f64, want_grad_norm: bool) -> StepStats {
        let b = batch.len();
        assert!(b > 0, "empty training batch");
        let dev = &self.device;
        let config = self.model.config();
        let (obs_len, actions) = (config.obs_len(), config.num_actions());
        assert_eq!(
            (batch.points(), batch.actions()),
            (config.num_points(), actions),
            "the batch's board is the network's"
        );
        let obs = Tensor::<2>::from_data(TensorData::new(batch.obs.clone(), [b, obs_len]), dev);
        let legal = Tensor::<2, Bool>::from_data(TensorData::new(batch.legal.clone(), [b, actions]), dev);
        let policy = Tensor::<2>::from_data(TensorData::new(batch.policy.clone(), [b, actions]), dev);
        let wdl = Tensor::<2>::from_data(TensorData::new(batch.wdl.clone(), [b, NUM_WDL]), dev);
        let with_policy: f32 = batch.policy_weight.iter().sum();
        let (policy_logits, wdl_logits) = self.model.forward(obs);
        let mut parts = loss_from_logits(policy_logits, wdl_logits, legal, policy, wdl);
        // Rows without a policy target contribute 0 to the batch mean: rescale to their mean.
        let scale = if with_policy > 0.0 { b as f32 / with_policy } else { 0.0 };
        parts.policy = parts.policy * scale;
        parts.total = parts.policy.clone() + parts.value.clone();
        let grads = GradientsParams::from_grads(parts.total.backward(), &self.model);
        let grad_norm = want_grad_norm.then(|| grad_norm(&self.model, &grads));
        self.model = self.optim.step(lr, self.model.clone(), grads);
        self.step += 1;
        StepStats { loss: parts.stats(), grad_norm }
    }

    /// The learning rate of the next step, given the fraction of the run done.
    pub fn next_learning_rate(&self, progress: f64) -> f64 {
        learning_rate(&self.config, self.step, progress)
    }

    /// Saves the AdamW state (moments and step counts) to `path` (burnpack).
    ///
    /// # Errors
    /// If the file cannot be written (the message names it).
    pub fn save_optimizer(&self, path: &Path) -> Result<()> {
        self.optim
            .save(path)
            .map_err(|e| TrainError::io("write optimizer state", path, std::io::Error::other(e.to_string())))
    }

    /// Restores the AdamW state saved by [`Learner::save_optimizer`].
    ///
    /// # Errors
    /// If the file is missing or corrupt (the message names it).
    pub fn load_optimizer(&mut self, path: &Path) -> Result<()> {
        let bytes = std::fs::read(path).map_err(|e| TrainError::io("read optimizer state", path, e))?;
        // The burnpack reader panics on some malformed inputs; keep a corrupt file an error.
        let fresh = adamw(&self.config);
        let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            fresh.from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))
        }));
        match loaded {
            Ok(Ok(optim)) => {
                self.optim = optim;
                Ok(())
            }
            Ok(Err(e)) => Err(TrainError::corrupt("optimizer state", path, e)),
            Err(_) => Err(TrainError::corrupt("optimizer state", path, "unreadable burnpack data")),
        }
    }
}

/// Whether every parameter of `model` is a finite number (its squared L2 norm is finite).
fn weights_are_finite(model: &PolicyValueNet) -> bool {
    struct SquaredSums(Vec<Tensor<1>>);
    impl ModuleVisitor for SquaredSums {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0.push(param.val().powi_scalar(2).sum());
        }
    }
    let mut v = SquaredSums(Vec::new());
    model.visit(&mut v);
    read_total(v.0).is_some_and(f32::is_finite)
}

/// The sum of one-element tensors, read back in one transaction: `Some(0.0)` for none, `None`
/// if the device gives nothing readable.
fn read_total(parts: Vec<Tensor<1>>) -> Option<f32> {
    if parts.is_empty() {
        return Some(0.0);
    }
    let total = Tensor::cat(parts, 0).sum();
    let data = Transaction::default().register(total).execute();
    data.into_iter().next().and_then(|d| d.try_into_vec::<f32>().ok()).and_then(|v| v.first().copied())
}

/// Global L2 norm of the gradients of `model`'s parameters.
fn grad_norm(model: &PolicyValueNet, grads: &GradientsParams) -> f32 {
    struct SquaredSums<'a> {
        grads: &'a GradientsParams,
        sums: Vec<Tensor<1>>,
    }
    impl ModuleVisitor for SquaredSums<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(g) = self.grads.get::<D>(param.id) {
                self.sums.push(g.powi_scalar(2).sum());
            }
        }
    }
    let mut v = SquaredSums { grads, sums: Vec::new() };
    model.visit(&mut v);
    read_total(v.sums).map_or(f32::NAN, f32::sqrt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OptimizerConfig;

    fn batch(n: usize, seed: u64) -> TrainBatch {
        use crate::replay::Replay;
        use crate::sample::Sample;
        use morris_env::{Game, Rng, Rules};
        let rules = Rules::standard();
        let mut rng = Rng::seed_from_u64(seed);
        let mut samples = Vec::new();
        while samples.len() < n {
            let mut g = Game::new(rules);
            while !g.outcome().is_terminal() && samples.len() < n {
                let mask = g.legal_actions();
                let k = mask.count();
                let policy: Vec<_> = mask.iter().map(|a| (a, 1.0 / k as f32)).collect();
                samples.push(Sample {
                    position: *g.position(),
                    repetitions: g.repetitions() as u8,
                    policy,
                    outcome: [1i8, 0, -1][samples.len() % 3],
                    full_search: samples.len() % 4 != 0,
                    search_value: None,
                });
                g.play_random(&mut rng, 1);
            }
        }
        let mut replay = Replay::new(n, 10.0, seed);
        replay.extend(samples);
        let mut out = TrainBatch::default();
        assert!(replay.draw(n, &rules, &mut out));
        out
    }

    #[test]
    fn schedule_warms_up_then_decays() {
        let c = OptimizerConfig { learning_rate: 0.01, warmup_steps: 10, ..OptimizerConfig::default() };
        assert!((learning_rate(&c, 0, 0.0) - 0.001).abs() < 1e-12);
        assert!((learning_rate(&c, 9, 0.0) - 0.01).abs() < 1e-12);
        assert!((learning_rate(&c, 10, 0.0) - 0.01).abs() < 1e-12);
        assert!((learning_rate(&c, 500, 0.5) - 0.0055).abs() < 1e-9);
        assert!((learning_rate(&c, 1000, 1.0) - 0.001).abs() < 1e-12);
        let k = OptimizerConfig { schedule: LrSchedule::Constant, ..c };
        assert_eq!(learning_rate(&k, 1000, 1.0), 0.01);
    }

    #[test]
    fn steps_reduce_the_loss_on_a_fixed_batch() {
        let device = Device::flex();
        let opt = OptimizerConfig { learning_rate: 3e-3, warmup_steps: 0, ..OptimizerConfig::default() };
        let net = NetConfig { width: 32, blocks: 1, ..NetConfig::default() };
        let mut learner = Learner::new(&net, &opt, &device);
        let b = batch(64, 1);
        let first = learner.train_step(&b, 3e-3, true);
        assert!(first.grad_norm.is_some_and(|g| g.is_finite() && g > 0.0), "{first:?}");
        let mut last = first;
        for _ in 0..30 {
            last = learner.train_step(&b, 3e-3, false);
        }
        assert_eq!(learner.step(), 31);
        assert!(last.loss.total < first.loss.total - 0.3, "{first:?} -> {last:?}");
        assert!(last.grad_norm.is_none());
    }

    #[test]
    fn diverged_weights_are_detected() {
        let device = Device::flex();
        let opt = OptimizerConfig { learning_rate: 1e-3, warmup_steps: 0, ..OptimizerConfig::default() };
        let net = NetConfig { width: 16, blocks: 1, ..NetConfig::default() };
        let mut learner = Learner::new(&net, &opt, &device);
        assert!(learner.weights_are_finite());
        let b = batch(32, 2);
        // An absurd learning rate, as a corrupt optimizer state or a diverging run would give.
        for _ in 0..3 {
            learner.train_step(&b, f64::MAX, false);
        }
        assert!(!learner.weights_are_finite());
    }

    /// Saving the model and the optimizer and loading both gives a learner whose next step is the
    /// same as the original's: the AdamW moments find their parameters (stable ids).
    #[test]
    fn restored_learner_takes_the_same_step() {
        let device = Device::flex();
        // Seeded, so the margins checked below do not depend on the initial weights of the day.
        device.seed(11);
        let opt = OptimizerConfig { learning_rate: 1e-3, warmup_steps: 0, ..OptimizerConfig::default() };
        let net = NetConfig { width: 32, blocks: 1, ..NetConfig::default() };
        let mut a = Learner::new(&net, &opt, &device);
        for s in 0..3 {
            a.train_step(&batch(32, s), 1e-3, false);
        }
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        crate::store::save_model(&a.inference_model(), dir).unwrap();
        a.save_optimizer(&dir.join("optimizer.bpk")).unwrap();
        let (model, _) = crate::store::load_model(dir, &device).unwrap();
        let mut b = Learner::from_model(model, a.step(), &opt, &device);
        b.load_optimizer(&dir.join("optimizer.bpk")).unwrap();
        // A learner without the optimizer state diverges: the test can fail.
        let (model, _) = crate::store::load_model(dir, &device).unwrap();
        let mut c = Learner::from_model(model, a.step(), &opt, &device);
        // A few steps, so that the difference the moments make is well above float noise.
        let (mut sa, mut sb, mut sc) = Default::default();
        for k in 0..4 {
            let next = batch(32, 99 + k);
            sa = a.train_step(&next, 1e-3, false);
            sb = b.train_step(&next, 1e-3, false);
            sc = c.train_step(&next, 1e-3, false);
        }
        let (sa, sb, sc): (StepStats, StepStats, StepStats) = (sa, sb, sc);
        assert!((sa.loss.total - sb.loss.total).abs() < 1e-5, "{sa:?} {sb:?}");
        let probe = batch(16, 7);
        let la = a.train_step(&probe, 0.0, false).loss.total;
        let lb = b.train_step(&probe, 0.0, false).loss.total;
        let lc = c.train_step(&probe, 0.0, false).loss.total;
        assert!((la - lb).abs() < 1e-4, "{la} vs {lb}");
        assert!((la - lc).abs() > 1e-4, "without optimizer state: {la} vs {lc}; {sc:?}");
        std::fs::write(dir.join("optimizer.bpk"), b"garbage").unwrap();
        let e = b.load_optimizer(&dir.join("optimizer.bpk")).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { path, .. } if path.ends_with("optimizer.bpk")), "{e}");
    }
}
