//! Fixed-size `VecEnv` stepping loop for profilers (callgrind counts its instructions, the bench
//! gate of docs/performance.md): 256 envs under the standard rules on the caller's thread,
//! uniformly random legal actions: `cargo run --release -p morris-env --example vecstep -- [steps]`.
use morris_env::{Action, AutoReset, Rng, Rules, VecEnv, VecEnvConfig};

fn main() {
    let steps: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let mut config = VecEnvConfig::new(256, Rules::standard());
    config.auto_reset = AutoReset::SameStep;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let mut env = VecEnv::new(config).unwrap().with_thread_pool(std::sync::Arc::new(pool));
    let mut rng = Rng::seed_from_u64(3);
    let mut actions = vec![Action(0); 256];
    for _ in 0..steps {
        for (a, m) in actions.iter_mut().zip(env.masks()) {
            *a = m.nth(rng.below(m.count().max(1))).unwrap_or(Action(0));
        }
        env.step(&actions).unwrap();
    }
}
