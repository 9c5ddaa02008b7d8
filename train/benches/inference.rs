//! Network evaluations per second through `NetEvaluator` on flex: both trunks at the default
//! size, batches of 1, 64, 256 and 1024 leaves, in 1- and 2-thread rayon pools.
//!
//! `cargo bench -p morris-train --bench inference -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use burn::prelude::*;
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use morris_env::Rules;
use morris_train::evaluator::{EvalBatch, Evaluator, Leaf};
use morris_train::model::{NetConfig, Trunk};
use morris_train::net_evaluator::NetEvaluator;

const BATCHES: [usize; 4] = [1, 64, 256, 1024];
const THREADS: [usize; 2] = [1, 2];

fn inference(c: &mut Criterion) {
    let rules = Rules::standard();
    let (leaves, masks) = Leaf::random_batch(rules, *BATCHES.iter().max().unwrap_or(&1), 2024);
    let device = Device::flex();
    let mut group = c.benchmark_group("inference");
    // One iteration of the largest batches takes tens of milliseconds: sample flat.
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    for trunk in Trunk::ALL {
        let model = NetConfig { trunk, ..NetConfig::default() }.init(&device);
        for threads in THREADS {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
            for batch in BATCHES {
                let mut eval = NetEvaluator::new(model.clone(), device.clone());
                let mut out = EvalBatch::default();
                group.throughput(Throughput::Elements(batch as u64));
                let id = BenchmarkId::new(format!("{trunk}/{threads}t"), batch);
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
