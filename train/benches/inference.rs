//! Network evaluations per second through `NetEvaluator` on flex: the res-mlp through the CPU
//! pass (`cpu_forward`, chunks of 64 rows over 1- and 2-thread rayon pools) and both trunks
//! through burn (the same pools), default sizes, batches of 1, 64, 128, 256 and 1024 leaves.
//!
//! `cargo bench -p morris-train --bench inference -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use burn::prelude::*;
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use morris_env::Rules;
use morris_train::evaluator::{EvalBatch, Evaluator, Leaf};
use morris_train::model::{NetConfig, Trunk};
use morris_train::net_evaluator::NetEvaluator;

const BATCHES: [usize; 5] = [1, 64, 128, 256, 1024];
const THREADS: [usize; 2] = [1, 2];

fn inference(c: &mut Criterion) {
    let rules = Rules::standard();
    let (leaves, masks) = Leaf::random_batch(rules, *BATCHES.iter().max().unwrap_or(&1), 2024);
    let device = Device::flex();
    let mut group = c.benchmark_group("inference");
    // One iteration of the largest batches takes tens of milliseconds: sample flat.
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    let res_mlp = NetConfig::default().init(&device);
    for threads in THREADS {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
        for batch in BATCHES {
            let mut eval = NetEvaluator::new(res_mlp.clone(), device.clone());
            assert!(eval.uses_cpu_pass());
            let mut out = EvalBatch::default();
            group.throughput(Throughput::Elements(batch as u64));
            group.bench_function(BenchmarkId::new(format!("res-mlp/cpu-pass/{threads}t"), batch), |b| {
                pool.install(|| {
                    b.iter(|| {
                        eval.evaluate(&rules, &leaves[..batch], &masks[..batch], &mut out);
                        black_box(&out.values);
                    })
                })
            });
        }
    }
    for trunk in Trunk::ALL {
        let model = NetConfig { trunk, ..NetConfig::default() }.init(&device);
        for threads in THREADS {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
            for batch in BATCHES {
                let mut eval = NetEvaluator::new(model.clone(), device.clone()).burn_only();
                let mut out = EvalBatch::default();
                group.throughput(Throughput::Elements(batch as u64));
                let id = BenchmarkId::new(format!("{trunk}/burn/{threads}t"), batch);
                group.bench_function(id, |b| {
                    pool.install(|| {
                        b.iter(|| {
                            eval.evaluate(&rules, &leaves[..batch], &masks[..batch], &mut out);
                            black_box(&out.values);
                        })
                    })
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, inference);
criterion_main!(benches);
