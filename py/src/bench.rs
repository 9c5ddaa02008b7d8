//! `morris._morris.time_vec_env`: the Rust `VecEnv` step timed inside the extension, as
//! `cargo bench -p morris-env --bench env -- vec_env_step` times it, for `py/bench.py` to put
//! beside the Python figures of the same run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use morris_env::{Action, AutoReset, Rng, Rules, VecEnv, VecEnvConfig};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// Env-steps per second of `VecEnv::step` on `num_envs` envs and `threads` threads, measured for
/// about `seconds` after 20 warm-up steps, as env/benches/env.rs's `vec_env_step` does: standard
/// rules, same-step auto-reset, uniformly random legal actions drawn outside the timed region.
/// `dense_masks` also expands the masks to `[N, 600]` booleans; `caller_shares` steps with
/// `VecEnv::with_threads` (the caller stepping one share, as the Python package does) instead of
/// a pool of `threads` threads. The GIL is released.
#[pyfunction]
#[pyo3(signature = (num_envs = 4096, threads = 1, seconds = 3.0, dense_masks = false, caller_shares = false))]
fn time_vec_env(
    py: Python<'_>,
    num_envs: usize,
    threads: usize,
    seconds: f64,
    dense_masks: bool,
    caller_shares: bool,
) -> PyResult<f64> {
    if num_envs == 0 || threads == 0 {
        return Err(PyValueError::new_err("num_envs and threads must be at least 1"));
    }
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(PyValueError::new_err(format!("seconds must be positive, got {seconds}")));
    }
    py.detach(|| {
        let mut config = VecEnvConfig::new(num_envs, Rules::standard());
        config.auto_reset = AutoReset::SameStep;
        config.expand_masks = dense_masks;
        let env = VecEnv::new(config).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let mut env = if caller_shares {
            env.with_threads(threads).map_err(|e| PyRuntimeError::new_err(e.to_string()))?
        } else {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| PyRuntimeError::new_err(format!("cannot start {threads} threads: {e}")))?;
            env.with_thread_pool(Arc::new(pool))
        };
        let mut rng = Rng::seed_from_u64(3);
        let mut actions = vec![Action(0); num_envs];
        let step = |env: &mut VecEnv, rng: &mut Rng, actions: &mut [Action]| -> Duration {
            for (a, m) in actions.iter_mut().zip(env.masks()) {
                *a = m.sample(rng).unwrap_or(Action(0));
            }
            let t = Instant::now();
            let info = env.step(actions);
            let elapsed = t.elapsed();
            std::hint::black_box(info).ok();
            elapsed
        };
        for _ in 0..20 {
            step(&mut env, &mut rng, &mut actions);
        }
        let budget = Duration::from_secs_f64(seconds);
        let (mut timed, mut steps) = (Duration::ZERO, 0u64);
        let start = Instant::now();
        while start.elapsed() < budget {
            timed += step(&mut env, &mut rng, &mut actions);
            steps += 1;
        }
        Ok(num_envs as f64 * steps as f64 / timed.as_secs_f64())
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(time_vec_env, m)?)
}
