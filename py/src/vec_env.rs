//! `morris._morris.VecEnv`: the Rust `VecEnv` with its buffers shown to NumPy without copying,
//! stepped with the GIL released (the Gymnasium-style API is `morris.VecEnv`, in Python).

use morris_env::ndarray::ArrayView1;
use morris_env::{Action, AutoReset, IllegalActionMode, Move, VecEnv, VecEnvConfig};
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::game::{PyGame, PyOutcome, action_from};
use crate::{IllegalActionError, rules_from, rules_to_dict};

/// What the binding does with an illegal action.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Illegal {
    /// Check every action first; raise `IllegalActionError` and step nothing if one is illegal.
    Raise,
    /// The env keeps its game and reports the error (per-env flag).
    Flag,
    /// The player who played it loses.
    Lose,
}

/// N games stepped in parallel (native half of `morris.VecEnv`).
///
/// The array attributes (`observations`, `masks`, `rewards`, `terminated`, `truncated`,
/// `current_player`, `final_observations`) are NumPy views of the env's own buffers: every
/// `step` and `reset` overwrites them in place, and they must not be read from another thread
/// while a step runs.
#[pyclass(name = "VecEnv", module = "morris._morris")]
pub struct PyVecEnv {
    env: VecEnv,
    illegal: Illegal,
    /// The actions of the step being taken, converted in place (no allocation per step).
    actions: Vec<Action>,
    threads: usize,
}

fn auto_reset_from(name: &str) -> PyResult<AutoReset> {
    match name {
        "next_step" => Ok(AutoReset::NextStep),
        "same_step" => Ok(AutoReset::SameStep),
        "disabled" => Ok(AutoReset::Off),
        _ => Err(PyValueError::new_err(format!(
            "unknown autoreset_mode '{name}' (modes: next_step, same_step, disabled)"
        ))),
    }
}

fn auto_reset_name(mode: AutoReset) -> &'static str {
    match mode {
        AutoReset::NextStep => "next_step",
        AutoReset::SameStep => "same_step",
        AutoReset::Off => "disabled",
    }
}

#[pymethods]
impl PyVecEnv {
    #[new]
    #[pyo3(signature = (num_envs, rules = None, seed = 0, autoreset_mode = "next_step", opening_plies = 0, threads = 1, illegal_action = "raise"))]
    fn new(
        num_envs: usize,
        rules: Option<&Bound<'_, PyAny>>,
        seed: u64,
        autoreset_mode: &str,
        opening_plies: u32,
        threads: usize,
        illegal_action: &str,
    ) -> PyResult<PyVecEnv> {
        if num_envs == 0 {
            return Err(PyValueError::new_err("num_envs must be at least 1"));
        }
        if threads == 0 {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let illegal = match illegal_action {
            "raise" => Illegal::Raise,
            "flag" => Illegal::Flag,
            "lose" => Illegal::Lose,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown illegal_action '{illegal_action}' (choices: raise, flag, lose)"
                )));
            }
        };
        let mut config = VecEnvConfig::new(num_envs, rules_from(rules)?);
        config.seed = seed;
        config.auto_reset = auto_reset_from(autoreset_mode)?;
        config.opening_plies = opening_plies;
        config.illegal_action =
            if illegal == Illegal::Lose { IllegalActionMode::Loss } else { IllegalActionMode::Error };
        config.expand_masks = true;
        // The calling thread steps one share of the envs itself (`with_threads`): a pool that
        // fell asleep while NumPy drew the actions would otherwise be woken at every step.
        let env = VecEnv::new(config)
            .and_then(|env| env.with_threads(threads))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyVecEnv { env, illegal, actions: vec![Action(0); num_envs], threads })
    }

    /// Number of envs N.
    #[getter]
    fn num_envs(&self) -> usize {
        self.env.num_envs()
    }

    /// Threads that step the envs.
    #[getter]
    fn threads(&self) -> usize {
        self.threads
    }

    /// `"next_step"`, `"same_step"` or `"disabled"`.
    #[getter]
    fn autoreset_mode(&self) -> &'static str {
        auto_reset_name(self.env.config().auto_reset)
    }

    /// `"raise"`, `"flag"` or `"lose"`.
    #[getter]
    fn illegal_action(&self) -> &'static str {
        match self.illegal {
            Illegal::Raise => "raise",
            Illegal::Flag => "flag",
            Illegal::Lose => "lose",
        }
    }

    /// Random plies at the start of every game.
    #[getter]
    fn opening_plies(&self) -> u32 {
        self.env.config().opening_plies
    }

    /// The seed of the latest reset (env i uses seed + i).
    #[getter]
    fn seed(&self) -> u64 {
        self.env.config().seed
    }

    /// The rules of every game, as a dict.
    #[getter]
    fn rules<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        rules_to_dict(py, &self.env.config().rules)
    }

    /// Starts new games in every env (env i seeded with `seed + i`); the GIL is released.
    #[pyo3(signature = (seed = None))]
    fn reset(&mut self, py: Python<'_>, seed: Option<u64>) {
        let seed = seed.unwrap_or(self.env.config().seed);
        let env = &mut self.env;
        py.detach(|| env.reset(seed));
    }

    /// Steps every env with `actions` (int64, shape `[N]`), with the GIL released. Returns
    /// `(finished, rejected)`: games that ended, envs that rejected their action (flag mode).
    ///
    /// The action of an env whose game is over (its mask all false) is ignored. In `raise` mode
    /// every other action is checked first, and an illegal one raises `IllegalActionError`
    /// naming the env and the move, with nothing stepped.
    fn step(&mut self, py: Python<'_>, actions: PyReadonlyArray1<'_, i64>) -> PyResult<(usize, usize)> {
        let n = self.env.num_envs();
        if actions.len() != n {
            return Err(PyValueError::new_err(format!(
                "step needs one action per env: expected shape ({n},), got ({},)",
                actions.len()
            )));
        }
        let values = actions.as_array();
        let masks = self.env.masks();
        for (i, (&value, slot)) in values.iter().zip(self.actions.iter_mut()).enumerate() {
            let a = action_from(value);
            *slot = a;
            if self.illegal != Illegal::Raise || masks[i].is_empty() || masks[i].has(a) {
                continue;
            }
            return Err(illegal_in_env(&self.env, i, value, a));
        }
        let (env, actions) = (&mut self.env, &self.actions);
        let info = py.detach(|| env.step(actions)).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((info.num_finished, info.num_errors))
    }

    /// `[N, 15, 24]` float32 view: each env's observation from its mover's point of view.
    #[getter]
    fn observations(slf: Bound<'_, Self>) -> Bound<'_, PyArray3<f32>> {
        let this = slf.borrow();
        let view = this.env.observations_view();
        // SAFETY: the view's buffer is a `Vec` owned by the `VecEnv` inside `slf`, allocated in
        // `VecEnv::new` and never resized or replaced (step and reset write into it in place),
        // so it lives at the same address for as long as `slf`, which the array keeps alive as
        // its base object. The array is made read-only at once (`read_only`), so NumPy never
        // writes into memory that Rust owns.
        read_only(unsafe { PyArray3::borrow_from_array(&view, slf.clone().into_any()) })
    }

    /// `[N, 15, 24]` float32 view: in same-step mode, the last observation of each game that
    /// ended on the latest step (other rows are stale).
    #[getter]
    fn final_observations(slf: Bound<'_, Self>) -> Bound<'_, PyArray3<f32>> {
        let this = slf.borrow();
        let view = this.env.final_observations_view();
        // SAFETY: as for `observations`: a buffer of the env allocated once and kept alive by
        // the base object `slf`.
        read_only(unsafe { PyArray3::borrow_from_array(&view, slf.clone().into_any()) })
    }

    /// `[N, 600]` bool view: the legal-action masks (all false in a finished game).
    #[getter]
    fn masks(slf: Bound<'_, Self>) -> PyResult<Bound<'_, PyArray2<bool>>> {
        let this = slf.borrow();
        let view = this
            .env
            .masks_view()
            .ok_or_else(|| PyRuntimeError::new_err("the env was built without dense masks"))?;
        // SAFETY: as for `observations`; NumPy's bool is one byte holding 0 or 1, the layout
        // of Rust's `bool`, and the array is read-only.
        Ok(read_only(unsafe { PyArray2::borrow_from_array(&view, slf.clone().into_any()) }))
    }

    /// `[N, 2]` float32 view: rewards of the latest step, `[white, black]` per env.
    #[getter]
    fn rewards(slf: Bound<'_, Self>) -> Bound<'_, PyArray2<f32>> {
        let this = slf.borrow();
        let view = this.env.rewards_view();
        // SAFETY: as for `observations`.
        read_only(unsafe { PyArray2::borrow_from_array(&view, slf.clone().into_any()) })
    }

    /// `[N]` bool view: whether each game ended by the rules on the latest step.
    #[getter]
    fn terminated(slf: Bound<'_, Self>) -> Bound<'_, PyArray1<bool>> {
        let this = slf.borrow();
        let view = ArrayView1::from(this.env.terminated());
        // SAFETY: as for `masks`.
        read_only(unsafe { PyArray1::borrow_from_array(&view, slf.clone().into_any()) })
    }

    /// `[N]` bool view: whether each game was cut off by the turn cap on the latest step.
    #[getter]
    fn truncated(slf: Bound<'_, Self>) -> Bound<'_, PyArray1<bool>> {
        let this = slf.borrow();
        let view = ArrayView1::from(this.env.truncated());
        // SAFETY: as for `masks`.
        read_only(unsafe { PyArray1::borrow_from_array(&view, slf.clone().into_any()) })
    }

    /// `[N]` uint8 view: the player to move in each env (0 White, 1 Black).
    #[getter]
    fn current_player(slf: Bound<'_, Self>) -> Bound<'_, PyArray1<u8>> {
        let this = slf.borrow();
        let view = ArrayView1::from(this.env.current_player());
        // SAFETY: as for `observations` (any byte is a valid `u8`).
        read_only(unsafe { PyArray1::borrow_from_array(&view, slf.clone().into_any()) })
    }

    /// `[(env, message)]`: the envs that rejected their action on the latest step (flag mode).
    fn errors(&self) -> Vec<(usize, String)> {
        self.env.errors().map(|(i, e)| (i, e.to_string())).collect()
    }

    /// The outcome of env i's current game.
    fn outcome(&self, i: usize) -> PyResult<PyOutcome> {
        self.check_env(i)?;
        Ok(PyOutcome::new(self.env.outcome(i)))
    }

    /// The outcome of the last game that ended in env i (how a same-step reset's result is read).
    fn final_outcome(&self, i: usize) -> PyResult<PyOutcome> {
        self.check_env(i)?;
        Ok(PyOutcome::new(self.env.final_outcome(i)))
    }

    /// A copy of env i's current game, as a `morris.Game`.
    fn game(&self, i: usize) -> PyResult<PyGame> {
        self.check_env(i)?;
        Ok(PyGame { game: self.env.game(i).clone() })
    }
}

impl PyVecEnv {
    fn check_env(&self, i: usize) -> PyResult<()> {
        let n = self.env.num_envs();
        if i < n {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!("env {i} does not exist (num_envs = {n})")))
        }
    }
}

/// The error for an illegal action `value` in env `i`, with the move in notation and the reason.
fn illegal_in_env(env: &VecEnv, i: usize, value: i64, a: Action) -> PyErr {
    let game = env.game(i);
    let reason = match game.position().check(a, game.rules()) {
        Err(e) => e.to_string(),
        Ok(()) => "not legal here".to_string(),
    };
    match Move::from_action(a, game.position().is_removal_pending()) {
        Some(m) if a.is_in_range() => {
            IllegalActionError::new_err(format!("env {i}: '{m}' is illegal: {reason}; nothing was stepped"))
        }
        _ => IllegalActionError::new_err(format!(
            "env {i}: action {value} is out of range (actions are 0..600); nothing was stepped"
        )),
    }
}

/// Marks an array that views the env's memory as read-only, so that Python cannot write into
/// buffers the Rust side owns (NumPy refuses to make it writeable again: its base is not an array).
fn read_only<D: numpy::ndarray::Dimension, T: numpy::Element>(
    array: Bound<'_, numpy::PyArray<T, D>>,
) -> Bound<'_, numpy::PyArray<T, D>> {
    array.readwrite().make_nonwriteable();
    array
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyVecEnv>()
}
