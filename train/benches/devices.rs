//! Network throughput on one device (`MORRIS_DEVICE`, default `flex`): inference through
//! `NetEvaluator` at batches up to 4096 and learner steps, for the default network (128 x 4)
//! and a GPU-sized one (256 x 8, as in `configs/gpu.toml`).
//!
//! ```text
//! cargo bench -p morris-train --bench devices -- --warm-up-time 1 --measurement-time 3
//! MORRIS_DEVICE=wgpu cargo bench -p morris-train --features wgpu --bench devices -- ...
//! MORRIS_DEVICE=cuda cargo bench -p morris-train --features cuda --bench devices -- ...
//! ```
//! Inference reports leaves per second, learning samples per second (one AdamW step on a
//! batch of that many positions), self-play positions per second (one move in each of 256
//! games, searched as `configs/default.toml` does, by one group on one evaluator; default
//! network only).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use morris_env::{ActionMask, Rules};
use morris_train::config::{OptimizerConfig, SelfPlayConfig};
use morris_train::device::{describe, device_from_name};
use morris_train::evaluator::{EvalBatch, Evaluator, Leaf};
use morris_train::learner::Learner;
use morris_train::model::NetConfig;
use morris_train::net_evaluator::NetEvaluator;
use morris_train::replay::{Augment, TrainBatch};
use morris_train::sample::Sample;
use morris_train::selfplay::SelfPlay;

const INFERENCE_BATCHES: [usize; 5] = [1, 64, 256, 1024, 4096];
const LEARNER_BATCHES: [usize; 2] = [256, 1024];

/// The default network and the GPU config's.
fn networks() -> [(&'static str, NetConfig); 2] {
    [
        ("128x4", NetConfig::default()),
        ("256x8", NetConfig { width: 256, blocks: 8, value_hidden: 128, ..NetConfig::default() }),
    ]
}

/// `n` positions from seeded random games, their legal moves, and samples of them with
/// uniform policy targets.
fn positions(n: usize, seed: u64) -> (Vec<Leaf>, Vec<ActionMask>, Vec<Sample>) {
    let (leaves, masks) = Leaf::random_batch(Rules::standard(), n, seed);
    let samples = leaves
        .iter()
        .zip(&masks)
        .enumerate()
        .map(|(i, (leaf, mask))| {
            let share = 1.0 / mask.count() as f32;
            Sample {
                position: leaf.position,
                repetitions: leaf.repetitions as u8,
                policy: mask.iter().map(|a| (a, share)).collect(),
                outcome: [1i8, 0, -1][i % 3],
                full_search: true,
                search_value: None,
            }
        })
        .collect();
    (leaves, masks, samples)
}

fn devices(c: &mut Criterion) {
    let name = std::env::var("MORRIS_DEVICE").unwrap_or_else(|_| "flex".into());
    let device = match device_from_name(&name) {
        Ok(device) => device,
        Err(e) => {
            eprintln!("MORRIS_DEVICE: {e}");
            std::process::exit(2);
        }
    };
    eprintln!("device: {}", describe(&name, &device));
    let rules = Rules::standard();
    let largest = INFERENCE_BATCHES.iter().chain(&LEARNER_BATCHES).copied().max().unwrap_or(1);
    let (leaves, masks, samples) = positions(largest, 2024);
    let mut group = c.benchmark_group(format!("devices/{name}"));
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    for (label, net) in networks() {
        device.seed(1);
        let model = net.init(&device);
        let mut eval = NetEvaluator::new(model, device.clone());
        let mut out = EvalBatch::default();
        for batch in INFERENCE_BATCHES {
            group.throughput(Throughput::Elements(batch as u64));
            group.bench_function(BenchmarkId::new(format!("inference/{label}"), batch), |b| {
                b.iter(|| {
                    eval.evaluate(&rules, &leaves[..batch], &masks[..batch], &mut out);
                    black_box(&out.values);
                })
            });
        }
        let opt = OptimizerConfig { warmup_steps: 0, ..OptimizerConfig::default() };
        let mut learner = Learner::new(&net, &opt, &device);
        for batch in LEARNER_BATCHES {
            let data = TrainBatch::from_samples(&samples[..batch], &rules, Augment::None);
            group.throughput(Throughput::Elements(batch as u64));
            group.bench_function(BenchmarkId::new(format!("learn/{label}"), batch), |b| {
                // The step reads its losses back, so the device has finished when it returns.
                b.iter(|| black_box(learner.train_step(&data, 1e-4, false).loss.total))
            });
        }
    }
    // Self-play: the default config's searches (100 full / 25 cheap simulations, a quarter
    // full), 256 games, the default network.
    device.seed(1);
    let mut eval = NetEvaluator::new(NetConfig::default().init(&device), device.clone());
    let games = 256;
    let config = SelfPlayConfig { parallel_games: games, opening_plies: 2, ..SelfPlayConfig::default() };
    let mcts = morris_train::mcts::MctsConfig::default();
    let mut play = SelfPlay::new(&config, &mcts, rules, 7).expect("a valid self-play config");
    group.throughput(Throughput::Elements(games as u64));
    group.bench_function(BenchmarkId::new("selfplay/128x4", games), |b| {
        b.iter(|| {
            play.step(&mut eval).expect("a self-play step");
            black_box(play.take_samples());
        })
    });
    group.finish();
}

criterion_group!(benches, devices);
criterion_main!(benches);
