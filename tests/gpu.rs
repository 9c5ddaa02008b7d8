//! The GPU backends checked against flex: one network evaluated on both, learner steps from the
//! same weights and data on both, and `configs/tiny.toml` trained end to end on the GPU device
//! (checkpoint, resume, export, then played on flex).
//!
//! Built only with a GPU feature: `cargo test -p morris --features wgpu --test gpu` (CI runs it
//! on Mesa's software Vulkan device), or `--features cuda`. A backend whose device this machine
//! lacks is skipped with the reason, unless `MORRIS_REQUIRE_GPU` names it (CI sets
//! `MORRIS_REQUIRE_GPU=wgpu`, so a missing adapter fails there instead of passing quietly).
#![cfg(any(feature = "wgpu", feature = "cuda"))]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use burn::prelude::*;
use morris_env::{Game, NUM_ACTIONS, Rng, Rules};
use morris_train::device::device_from_name;
use morris_train::evaluator::{EvalBatch, Evaluator, Leaf};
use morris_train::learner::Learner;
use morris_train::model::{NetConfig, Trunk};
use morris_train::net_evaluator::NetEvaluator;
use morris_train::replay::{Augment, TrainBatch};
use morris_train::sample::Sample;

/// How closely a backend must agree with flex.
///
/// Both compute in f32 but sum in other orders (tiled matrix products, other reductions), which
/// moves results by a few ulps per operation: about 1e-7 through the default network on the
/// software Vulkan device. A wrong kernel, layout or weight moves them by 1e-2 or more. CUDA
/// may multiply f32 matrices in TF32 (10-bit mantissas), hence its wider bounds.
#[derive(Clone, Copy)]
struct Tolerance {
    /// Largest difference of a value or a prior for one position.
    eval: f32,
    /// Largest relative difference of a loss (or gradient norm) at each learner step: the
    /// forward differences, then AdamW steps on gradients that differ as much.
    loss: f32,
}

/// The device `name`, or `None` (printing why) when this machine does not have it and
/// `MORRIS_REQUIRE_GPU` does not name it.
fn gpu(name: &str) -> Option<Device> {
    match device_from_name(name) {
        Ok(device) => Some(device),
        Err(e) => {
            let required = std::env::var("MORRIS_REQUIRE_GPU").unwrap_or_default();
            assert!(
                !required.split(',').any(|r| r.trim() == name),
                "MORRIS_REQUIRE_GPU names {name}, but: {e}"
            );
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// The largest difference between two equally long runs of numbers.
fn max_difference(x: &[f32], y: &[f32]) -> f32 {
    x.iter().zip(y).map(|(p, q)| (p - q).abs()).fold(0.0, f32::max)
}

/// (a) The same weights evaluate the same positions alike on flex and on `name`.
fn evaluations_agree(name: &str, tol: Tolerance) {
    let Some(gpu) = gpu(name) else { return };
    let rules = Rules::standard();
    let (leaves, masks) = Leaf::random_batch(rules, 512, 7);
    let flex = Device::flex();
    for trunk in Trunk::ALL {
        flex.seed(3);
        let model = NetConfig { trunk, ..NetConfig::default() }.init(&flex);
        let (mut a, mut b) = (EvalBatch::default(), EvalBatch::default());
        NetEvaluator::new(model.clone(), flex.clone()).evaluate(&rules, &leaves, &masks, &mut a);
        NetEvaluator::new(model, gpu.clone()).evaluate(&rules, &leaves, &masks, &mut b);
        let (dv, dp) = (max_difference(&a.values, &b.values), max_difference(&a.priors, &b.priors));
        println!("{name} vs flex, {trunk}, 512 positions: values differ by <= {dv:e}, priors by <= {dp:e}");
        assert!(dv <= tol.eval && dp <= tol.eval, "{trunk}: values {dv}, priors {dp}");
        // Not trivially equal: the values and priors vary from position to position.
        let spread = a.values.iter().fold(0.0f32, |m, v| m.max((v - a.values[0]).abs()));
        assert!(spread > 1e-3, "{trunk}: the values should vary ({spread})");
        assert!(a.values.iter().chain(&b.values).all(|v| v.is_finite() && v.abs() <= 1.0));
        // Priors: a distribution over each position's legal moves on both devices.
        for (i, mask) in masks.iter().enumerate() {
            let row = &b.priors[i * NUM_ACTIONS..(i + 1) * NUM_ACTIONS];
            let legal: f32 = mask.iter().map(|m| row[m.index()]).sum();
            assert!((legal - 1.0).abs() < 1e-3, "position {i}: legal priors sum to {legal}");
        }
    }
}

/// A training batch of `n` positions from random games with random (not uniform) policy
/// targets and rotating outcomes.
fn batch(n: usize, seed: u64) -> TrainBatch {
    let rules = Rules::standard();
    let mut rng = Rng::seed_from_u64(seed);
    let mut samples = Vec::with_capacity(n);
    while samples.len() < n {
        let mut game = Game::new(rules);
        while !game.outcome().is_terminal() && samples.len() < n {
            let mask = game.legal_actions();
            let weights: Vec<f32> = mask.iter().map(|_| 1.0 + rng.below(8) as f32).collect();
            let total: f32 = weights.iter().sum();
            let policy = mask.iter().zip(&weights).map(|(a, w)| (a, w / total)).collect();
            samples.push(Sample {
                position: *game.position(),
                repetitions: game.repetitions() as u8,
                policy,
                outcome: [1i8, 0, -1][samples.len() % 3],
                full_search: samples.len() % 4 != 0,
                search_value: None,
            });
            game.play_random(&mut rng, 1);
        }
    }
    TrainBatch::from_samples(&samples, &rules, Augment::None)
}

/// (b) From the same weights, optimizer and batches, flex and `name` report the same losses
/// step after step, and the weights they end with evaluate alike.
fn learner_steps_agree(name: &str, tol: Tolerance) {
    let Some(gpu) = gpu(name) else { return };
    let flex = Device::flex();
    flex.seed(5);
    let net = NetConfig { width: 64, blocks: 2, ..NetConfig::default() };
    let opt = morris_train::config::OptimizerConfig { warmup_steps: 0, ..Default::default() };
    let start = Learner::new(&net, &opt, &flex).inference_model();
    let mut on_flex = Learner::from_model(start.clone(), 0, &opt, &flex);
    let mut on_gpu = Learner::from_model(start, 0, &opt, &gpu);
    let batches: Vec<TrainBatch> = (0..6).map(|s| batch(128, 40 + s)).collect();
    let mut losses = Vec::with_capacity(batches.len());
    for (step, b) in batches.iter().enumerate() {
        let x = on_flex.train_step(b, 3e-3, true);
        let y = on_gpu.train_step(b, 3e-3, true);
        println!("step {step}: total loss flex {} / {name} {}", x.loss.total, y.loss.total);
        for (part, p, q) in [
            ("total", x.loss.total, y.loss.total),
            ("policy", x.loss.policy, y.loss.policy),
            ("value", x.loss.value, y.loss.value),
        ] {
            assert!((p - q).abs() <= tol.loss * p.abs().max(1.0), "step {step}, {part} loss: {p} vs {q}");
        }
        let (gx, gy) = (x.grad_norm.unwrap_or(f32::NAN), y.grad_norm.unwrap_or(f32::NAN));
        assert!((gx - gy).abs() <= tol.loss * gx.max(1.0), "step {step}: gradient norm {gx} vs {gy}");
        losses.push(x.loss.total);
    }
    // The steps trained something (the same batches come back to the learner below).
    let again = on_flex.train_step(&batches[0], 0.0, false).loss.total;
    assert!(again < losses[0], "the loss on the first batch: {} -> {again} (steps: {losses:?})", losses[0]);
    let rules = Rules::standard();
    let (leaves, masks) = Leaf::random_batch(rules, 128, 9);
    let (mut a, mut b) = (EvalBatch::default(), EvalBatch::default());
    NetEvaluator::new(on_flex.inference_model(), flex).evaluate(&rules, &leaves, &masks, &mut a);
    // The GPU-trained weights, brought back to flex, as an exported model would be.
    NetEvaluator::new(on_gpu.inference_model(), Device::flex()).evaluate(&rules, &leaves, &masks, &mut b);
    let dv = max_difference(&a.values, &b.values);
    assert!(dv <= 100.0 * tol.eval, "values after training differ by {dv}");
}

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin).args(args).output().expect("run a binary")
}

/// `train` on `configs/tiny.toml` into `run_dir` for 40 steps (evaluated at 40), with more
/// `--set` overrides.
fn train_tiny(run_dir: &Path, sets: &[&str]) -> Output {
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_train"));
    cmd.args(["--config", tiny.to_str().unwrap(), "--run-dir", run_dir.to_str().unwrap()]);
    for set in ["schedule.total_steps=40", "schedule.eval_every=40"].iter().chain(sets) {
        cmd.args(["--set", set]);
    }
    cmd.output().expect("run train")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// (c) `configs/tiny.toml` with `run.device = name`: 40 steps, a checkpoint, a resume to 60
/// steps, another to 70 on flex, an export, and the exported model playing a match on flex. Then a run with the
/// learner on `name` and self-play on flex, as with workers on CPU machines.
fn tiny_run_end_to_end(name: &str) {
    if gpu(name).is_none() {
        return;
    }
    let (train, eval) = (env!("CARGO_BIN_EXE_train"), env!("CARGO_BIN_EXE_eval"));
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let run_dir = scratch.path().join("run");
    let device = format!("run.device=\"{name}\"");
    let o = train_tiny(&run_dir, &[&device]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains(&format!("device: {name}")) && out.contains("finished at step 40"), "{out}");
    assert!(run_dir.join("checkpoints/step-40/model.safetensors").is_file());
    let stored = fs::read_to_string(run_dir.join("checkpoints/step-40/train.toml")).unwrap();
    assert!(stored.contains(&format!("device = \"{name}\"")), "{stored}");

    let o = run(train, &["--resume", run_dir.to_str().unwrap(), "--set", "schedule.total_steps=60"]);
    let out = text(&o);
    assert!(o.status.success() && out.contains("at step 40") && out.contains("finished at step 60"), "{out}");

    // Checkpoints do not depend on the device: the run goes on on flex.
    let o = run(
        train,
        &[
            "--resume",
            run_dir.to_str().unwrap(),
            "--set",
            "run.device=\"flex\"",
            "--set",
            "schedule.total_steps=70",
        ],
    );
    let out = text(&o);
    assert!(
        o.status.success() && out.contains("device: flex") && out.contains("finished at step 70"),
        "{out}"
    );

    let model = scratch.path().join("model");
    let o =
        run(eval, &["export", "--checkpoint", run_dir.to_str().unwrap(), "--out", model.to_str().unwrap()]);
    assert!(o.status.success() && text(&o).contains("exported step 70"), "{}", text(&o));
    // `az:` agents load models on flex.
    let spec = format!("az:model={},sims=4", model.display());
    let games = scratch.path().join("games.jsonl");
    let o = run(eval, &["match", &spec, "random", "--pairs", "2", "--out", games.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(fs::read_to_string(&games).unwrap().lines().count(), 4);

    // Learner on the GPU device, self-play (and the evaluation) on flex.
    let mixed = scratch.path().join("mixed");
    let o = train_tiny(&mixed, &[&device, "selfplay.device=\"flex\""]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains(&format!("devices: learner {name}")) && out.contains("evaluation flex"), "{out}");
    assert!(out.contains("finished at step 40"), "{out}");
}

/// The three checks for one backend, at its tolerances.
macro_rules! backend_tests {
    ($module:ident, $name:literal, $tolerance:expr) => {
        mod $module {
            #[test]
            fn evaluations_agree_with_flex() {
                super::evaluations_agree($name, $tolerance);
            }

            #[test]
            fn learner_steps_agree_with_flex() {
                super::learner_steps_agree($name, $tolerance);
            }

            #[test]
            fn tiny_config_trains_resumes_and_exports_a_model_that_plays_on_flex() {
                super::tiny_run_end_to_end($name);
            }
        }
    };
}

#[cfg(feature = "wgpu")]
backend_tests!(wgpu, "wgpu", super::Tolerance { eval: 1e-5, loss: 1e-4 });

#[cfg(feature = "cuda")]
backend_tests!(cuda, "cuda", super::Tolerance { eval: 2e-3, loss: 1e-2 });

/// A machine without any adapter: the Vulkan loader and glvnd's EGL are pointed at driver lists
/// that do not exist, so wgpu finds nothing, and the run stops before it writes anything.
#[cfg(all(feature = "wgpu", target_os = "linux"))]
#[test]
fn wgpu_without_an_adapter_stops_before_anything_is_written() {
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let none = scratch.path().join("no-drivers.json");
    let run_dir = scratch.path().join("run");
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["--config", tiny.to_str().unwrap(), "--run-dir", run_dir.to_str().unwrap()])
        .args(["--set", "run.device=\"wgpu\""])
        .env("VK_ICD_FILENAMES", &none)
        .env("VK_DRIVER_FILES", &none)
        .env("__EGL_VENDOR_LIBRARY_FILENAMES", &none)
        .output()
        .expect("run train");
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("run.device: device 'wgpu' is not present") && out.contains("mesa-vulkan-drivers"),
        "{out}"
    );
    assert!(!out.contains("panicked"), "{out}");
    assert!(!run_dir.exists(), "nothing is written");
}
