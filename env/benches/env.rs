//! Environment benchmarks: random playouts, `VecEnv` stepping, observation encoding, move
//! generation and perft. Run with `cargo bench -p morris-env`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use morris_env::features::encode;
use morris_env::{
    Action, AutoReset, Game, Minimax, MinimaxConfig, OBS_LEN, Position, Rng, Rules, VecEnv, VecEnvConfig,
    perft,
};

/// Steps per measured iteration of the playout benches.
const STEPS: u64 = 100_000;

/// (a) Random playouts on one thread with the `Position` API: legal mask, uniform choice with
/// the RNG, apply. Finished games restart from the start position.
fn playout_position(rules: Rules, rng: &mut Rng, pos: &mut Position) {
    for _ in 0..STEPS {
        match pos.legal_actions(&rules).sample(rng) {
            Some(a) => pos.apply_unchecked(a, &rules),
            None => *pos = Position::start_for(&rules),
        }
    }
}

/// (a) Two independent games advanced in turn on one thread, as a batched env does: the
/// processor overlaps their dependency chains (mask → choice → apply → next mask).
fn playout_position_pair(rules: Rules, rngs: &mut [Rng; 2], positions: &mut [Position; 2]) {
    for _ in 0..STEPS / 2 {
        for (pos, rng) in positions.iter_mut().zip(rngs.iter_mut()) {
            match pos.legal_actions(&rules).sample(rng) {
                Some(a) => pos.apply_unchecked(a, &rules),
                None => *pos = Position::start_for(&rules),
            }
        }
    }
}

/// (a) The same with the `Game` API, which also keeps the history for repetition and undo.
fn playout_game(rng: &mut Rng, game: &mut Game) {
    for _ in 0..STEPS {
        match game.legal_actions().sample(rng) {
            Some(a) => game.apply_unchecked(a),
            None => game.reset(),
        }
    }
}

fn bench_playouts(c: &mut Criterion) {
    let mut g = c.benchmark_group("playout");
    g.throughput(Throughput::Elements(STEPS));
    for (name, rules) in [
        ("openspiel", Rules::openspiel()),
        ("standard", Rules::standard()),
        ("twelve", Rules::twelve()),
        ("morabaraba", Rules::morabaraba()),
        ("lasker", Rules::lasker()),
        ("six", Rules::six()),
        ("three", Rules::three()),
    ] {
        g.bench_function(format!("position_{name}"), |b| {
            let mut rng = Rng::seed_from_u64(1);
            let mut pos = Position::start_for(&rules);
            b.iter(|| playout_position(rules, &mut rng, black_box(&mut pos)));
        });
        g.bench_function(format!("position_pair_{name}"), |b| {
            let mut rngs = [Rng::seed_from_u64(1), Rng::seed_from_u64(2)];
            let mut positions = [Position::start_for(&rules); 2];
            b.iter(|| playout_position_pair(rules, &mut rngs, black_box(&mut positions)));
        });
        g.bench_function(format!("game_{name}"), |b| {
            let mut rng = Rng::seed_from_u64(1);
            let mut game = Game::new(rules);
            b.iter(|| playout_game(&mut rng, black_box(&mut game)));
        });
    }
    g.finish();
}

/// Draws per measured iteration of the range-reduction benches.
const DRAWS: u64 = 1_000_000;

/// (a) The range reduction of a move choice alone: `Rng::below` (Lemire's multiply-and-reject,
/// one 64-bit draw) against `rand`'s `random_range` on the same generator, for the move counts
/// of real positions (1 to 40).
fn bench_range_reduction(c: &mut Criterion) {
    use rand::RngExt;
    let mut g = c.benchmark_group("rng");
    g.throughput(Throughput::Elements(DRAWS));
    g.bench_function("below", |b| {
        let mut rng = Rng::seed_from_u64(1);
        b.iter(|| {
            let mut sum = 0u64;
            for i in 0..DRAWS {
                sum += u64::from(rng.below(1 + (i % 40) as u32));
            }
            black_box(sum)
        });
    });
    g.bench_function("rand_random_range", |b| {
        let mut rng = Rng::seed_from_u64(1);
        b.iter(|| {
            let mut sum = 0u64;
            for i in 0..DRAWS {
                sum += u64::from(rng.random_range(0..1 + (i % 40) as u32));
            }
            black_box(sum)
        });
    });
    g.finish();
}

/// A spread of positions from random games: placing, moving, flying and removal states.
fn sample_positions(n: usize) -> Vec<(Position, u32)> {
    let mut rng = Rng::seed_from_u64(7);
    let mut out = Vec::with_capacity(n);
    let mut game = Game::new(Rules::standard());
    while out.len() < n {
        let mask = game.legal_actions();
        if mask.is_empty() {
            game.reset();
            continue;
        }
        out.push((*game.position(), game.repetitions()));
        if let Some(a) = mask.nth(rng.below(mask.count())) {
            game.apply_unchecked(a);
        }
    }
    out
}

fn bench_encoding_and_movegen(c: &mut Criterion) {
    let positions = sample_positions(4096);
    let rules = Rules::standard();
    let mut g = c.benchmark_group("features");
    g.throughput(Throughput::Elements(positions.len() as u64));
    g.bench_function("encode", |b| {
        let mut out = vec![0.0f32; OBS_LEN];
        b.iter(|| {
            for (pos, reps) in &positions {
                encode(pos, &rules, *reps, &mut out);
                black_box(&out);
            }
        });
    });
    g.bench_function("legal_actions", |b| {
        b.iter(|| {
            let mut total = 0;
            for (pos, _) in &positions {
                total += black_box(pos).legal_actions(&rules).count();
            }
            total
        });
    });
    g.finish();

    let mut g = c.benchmark_group("perft");
    g.sample_size(10);
    g.throughput(Throughput::Elements(5_100_480));
    g.bench_function("start_depth_5", |b| {
        let mut game = Game::new(Rules::openspiel());
        b.iter(|| perft(&mut game, 5));
    });
    g.finish();
}

/// (b) `VecEnv` with 4096 envs: one step writes observations and masks of every env (packed, and
/// also expanded to `[N, 600]` booleans as for Python). Actions are drawn (uniformly among legal
/// ones) outside the timed region, so only the env is measured.
fn bench_vec_env(c: &mut Criterion) {
    const N: usize = 4096;
    let mut g = c.benchmark_group("vec_env_step");
    g.throughput(Throughput::Elements(N as u64));
    // Plain: the step runs on a pool of that many threads while the caller waits (the Rust
    // API's default). `shared_dense_masks`: `with_threads`, the caller stepping one share, with
    // the dense `[N, 600]` masks, as the Python package runs it.
    for (threads, python) in [(1, false), (2, false), (1, true), (2, true)] {
        let mut config = VecEnvConfig::new(N, Rules::standard());
        config.auto_reset = AutoReset::SameStep;
        config.expand_masks = python;
        let env = VecEnv::new(config).expect("env");
        let mut env = if python {
            env.with_threads(threads).expect("threads")
        } else {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
            env.with_thread_pool(Arc::new(pool))
        };
        let name = if python {
            format!("n4096_threads{threads}_shared_dense_masks")
        } else {
            format!("n4096_threads{threads}")
        };
        let mut rng = Rng::seed_from_u64(3);
        let mut actions = vec![Action(0); N];
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    for (a, m) in actions.iter_mut().zip(env.masks()) {
                        *a = m.nth(rng.below(m.count().max(1))).unwrap_or(Action(0));
                    }
                    let t = Instant::now();
                    black_box(env.step(&actions).expect("step"));
                    total += t.elapsed();
                }
                total
            });
        });
    }
    g.finish();
}

/// Minimax nodes per second, single thread: a fixed-depth search with a cleared table each time,
/// from the start position and from a mid-game position (the table clearing is not timed).
fn bench_minimax(c: &mut Criterion) {
    let mut mid = Game::new(Rules::standard());
    mid.play_random(&mut Rng::seed_from_u64(1), 30);
    let mut g = c.benchmark_group("minimax");
    g.sample_size(10);
    for (name, game, depth) in
        [("start_depth_8", Game::new(Rules::standard()), 8), ("midgame_depth_10", mid, 10)]
    {
        let mut searcher = Minimax::new(MinimaxConfig::depth(depth));
        let nodes = searcher.search(&game).nodes;
        g.throughput(Throughput::Elements(nodes));
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    searcher.clear();
                    let t = Instant::now();
                    black_box(searcher.search(&game));
                    total += t.elapsed();
                }
                total
            });
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_playouts,
    bench_range_reduction,
    bench_encoding_and_movegen,
    bench_vec_env,
    bench_minimax
);
criterion_main!(benches);
