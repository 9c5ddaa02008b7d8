//! Search benchmarks: (a) rollout MCTS on one thread, (b) the play search of one game with the
//! shipped network at 1 and 2 threads and 1 or 8 leaves per network call, and (c) batched
//! network MCTS over 256 games with the share of wall time spent outside the network.
//! `cargo bench -p morris-train --bench mcts`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use morris_env::{ActionMask, Game, Rng, Rules};
use morris_train::device::device_from_name;
use morris_train::evaluator::{EvalBatch, Evaluator, Leaf, RolloutEvaluator};
use morris_train::mcts::{Limits, Mcts, MctsConfig, ParallelSearch, Selection, Tree};
use morris_train::model::NetConfig;
use morris_train::net_evaluator::NetEvaluator;

/// (a) UCT with one random playout per leaf and `uct_c = 2` (OpenSpiel `MCTSBot` settings), from
/// the start position, single thread, a fresh tree per search of 1000 simulations.
fn bench_rollout_mcts(c: &mut Criterion) {
    const SIMS: u32 = 1000;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    let config =
        MctsConfig { num_simulations: SIMS, selection: Selection::Uct, uct_c: 2.0, ..MctsConfig::default() };
    let game = Game::new(Rules::openspiel());
    let mut g = c.benchmark_group("rollout_mcts");
    g.throughput(Throughput::Elements(SIMS as u64));
    g.sample_size(20);
    g.bench_function("start_1000_sims", |b| {
        let mut mcts = Mcts::new(config.clone());
        let mut evaluator = RolloutEvaluator::new(1, 1, 1000);
        let mut seed = 0;
        b.iter(|| {
            seed += 1;
            let mut trees = [Tree::new(&game, seed)];
            pool.install(|| mcts.search(&mut trees, &mut evaluator));
            black_box(trees[0].root_value())
        });
    });
    g.finish();
}

/// (b) The search of one game as `az:model=checkpoints/shipped,sims=800,threads=T,batch=K` plays
/// it: a fresh tree per search of 800 simulations from a position 8 random plies in. `T = 1,
/// K = 1` is the sequential search; the others are [`ParallelSearch`] (one evaluator per thread,
/// on the search's own pool).
fn bench_play_search(c: &mut Criterion) {
    const SIMS: u32 = 800;
    let device = device_from_name("flex").expect("flex device");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../checkpoints/shipped");
    let (model, _) = morris_train::store::load_model(&dir, &device).expect("the shipped model loads");
    let mut game = Game::new(Rules::standard());
    game.random_opening(&mut Rng::seed_from_u64(5), 8);
    let config = MctsConfig { num_simulations: SIMS, ..MctsConfig::default() };
    let mut g = c.benchmark_group("play_search");
    g.throughput(Throughput::Elements(SIMS as u64));
    g.sample_size(20);
    g.bench_function("shipped_800_sims_threads1_batch1", |b| {
        let mut mcts = Mcts::new(config.clone());
        let mut evaluator = NetEvaluator::new(model.clone(), device.clone());
        b.iter(|| {
            let mut trees = [Tree::new(&game, 1)];
            mcts.search(&mut trees, &mut evaluator);
            black_box(trees[0].root_value())
        });
    });
    for (threads, batch) in [(2, 1), (1, 8), (2, 8)] {
        let evaluators = (0..threads).map(|_| NetEvaluator::new(model.clone(), device.clone())).collect();
        let mut search = ParallelSearch::new(config.clone(), evaluators, batch).expect("search threads");
        g.bench_function(format!("shipped_800_sims_threads{threads}_batch{batch}"), |b| {
            b.iter(|| {
                let mut tree = Tree::new(&game, 1);
                search.search(&mut tree, &Limits::simulations(SIMS));
                black_box(tree.root_value())
            });
        });
    }
    g.finish();
}

/// Times the calls into the wrapped evaluator.
struct Timed<E> {
    inner: E,
    spent: Duration,
}

impl<E: Evaluator> Evaluator for Timed<E> {
    fn evaluate(&mut self, rules: &Rules, leaves: &[Leaf], masks: &[ActionMask], out: &mut EvalBatch) {
        let t = Instant::now();
        self.inner.evaluate(rules, leaves, masks, out);
        self.spent += t.elapsed();
    }

    fn name(&self) -> String {
        self.inner.name()
    }
}

/// (c) 256 games from varied openings, 100 simulations each, one network call per wave.
fn bench_batched_nn_mcts(c: &mut Criterion) {
    const B: usize = 256;
    const SIMS: u32 = 100;
    let device = device_from_name("flex").expect("flex device");
    let net = NetConfig::default();
    let mut evaluator = Timed { inner: NetEvaluator::new(net.init(&device), device), spent: Duration::ZERO };
    let mut rng = Rng::seed_from_u64(9);
    let games: Vec<Game> = (0..B)
        .map(|_| {
            let mut g = Game::new(Rules::standard());
            g.random_opening(&mut rng, 8);
            g
        })
        .collect();
    let config = MctsConfig { num_simulations: SIMS, root_noise: true, ..MctsConfig::default() };
    let mut mcts = Mcts::new(config);
    let mut g = c.benchmark_group("batched_nn_mcts");
    g.throughput(Throughput::Elements(B as u64 * SIMS as u64));
    g.sample_size(10);
    let (mut total, mut inside) = (Duration::ZERO, Duration::ZERO);
    g.bench_function(format!("b{B}_sims{SIMS}_{:?}", net.trunk), |b| {
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            for i in 0..iters {
                let mut trees: Vec<Tree> =
                    games.iter().enumerate().map(|(k, g)| Tree::new(g, i * 1000 + k as u64)).collect();
                evaluator.spent = Duration::ZERO;
                let t = Instant::now();
                mcts.search(&mut trees, &mut evaluator);
                let e = t.elapsed();
                elapsed += e;
                total += e;
                inside += evaluator.spent;
            }
            elapsed
        });
    });
    g.finish();
    if total > Duration::ZERO {
        println!(
            "batched_nn_mcts: {:.1}% of wall time outside the network ({:.2} s of {:.2} s in evaluator calls)",
            100.0 * (1.0 - inside.as_secs_f64() / total.as_secs_f64()),
            inside.as_secs_f64(),
            total.as_secs_f64()
        );
    }
}

criterion_group!(benches, bench_rollout_mcts, bench_play_search, bench_batched_nn_mcts);
criterion_main!(benches);
