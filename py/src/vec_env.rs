//! `morris._morris.VecEnv`: the Rust `VecEnv` with its buffers shown to NumPy without copying,
//! stepped with the GIL released (the Gymnasium-style API is `morris.VecEnv`, in Python).

use morris_env::ndarray::ArrayView1;
use morris_env::{Action, AutoReset, Game, IllegalActionMode, VecEnv, VecEnvConfig};
use numpy::{
    PyArray1, PyArray2, PyArray3, PyArrayMethods, PyReadonlyArray1, PyReadwriteArray1, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::agents::PyAgent;
use crate::game::{PyGame, PyOutcome, action_from, variant_info_dict};
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
/// The array attributes (`observations`, `masks`, `packed_masks`, `rewards`, `terminated`,
/// `truncated`, `current_player`, `final_observations`) are NumPy views of the env's own
/// buffers: every `step` and `reset` overwrites them in place, and they must not be read from
/// another thread while a step runs.
#[pyclass(name = "VecEnv", module = "morris._morris")]
pub struct PyVecEnv {
    env: VecEnv,
    illegal: Illegal,
    /// The actions of the step being taken, converted in place (no allocation per step); also
    /// where `sample_legal` draws.
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
    #[pyo3(signature = (num_envs, rules = None, seed = 0, autoreset_mode = "next_step", opening_plies = 0, threads = 1, illegal_action = "raise", masks = "dense"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        num_envs: usize,
        rules: Option<&Bound<'_, PyAny>>,
        seed: u64,
        autoreset_mode: &str,
        opening_plies: u32,
        threads: usize,
        illegal_action: &str,
        masks: &str,
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
        config.expand_masks = match masks {
            "dense" => true,
            "packed" => false,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown masks '{masks}' (choices: dense, packed)"
                )));
            }
        };
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

    /// `"dense"` (the `[N, 600]` bool masks are kept too) or `"packed"` (only `packed_masks`).
    #[getter]
    fn mask_format(&self) -> &'static str {
        if self.env.config().expand_masks { "dense" } else { "packed" }
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

    /// The sizes of the games' board (`morris.variant_info` of the rules): `num_actions`,
    /// `observation_shape`, `point_names`, ...
    #[getter]
    fn variant_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        variant_info_dict(py, &self.env.config().rules)
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
    /// naming the env and the move, with nothing stepped. With `actions=None` every env plays a
    /// uniformly random legal action drawn in Rust from its own generator, in the step's own
    /// parallel pass (the games of `sample_legal()` then `step`).
    #[pyo3(signature = (actions))]
    fn step(
        &mut self,
        py: Python<'_>,
        actions: Option<PyReadonlyArray1<'_, i64>>,
    ) -> PyResult<(usize, usize)> {
        let Some(actions) = actions else {
            let env = &mut self.env;
            let info = py.detach(|| env.step_random());
            return Ok((info.num_finished, info.num_errors));
        };
        self.load_actions(&actions, None)?;
        let (env, actions) = (&mut self.env, &self.actions);
        let info = py.detach(|| env.step(actions)).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((info.num_finished, info.num_errors))
    }

    /// Starts new games (with the random opening) in the envs where `which` (bool `[N]`) is
    /// true, clearing their rewards and flags; the others are not touched. The GIL is released.
    fn restart(&mut self, py: Python<'_>, which: PyReadonlyArray1<'_, bool>) -> PyResult<()> {
        let n = self.env.num_envs();
        if which.len() != n {
            return Err(PyValueError::new_err(format!(
                "restart needs one flag per env: expected shape ({n},), got ({},)",
                which.len()
            )));
        }
        let which: Vec<bool> = which.as_array().iter().copied().collect();
        let env = &mut self.env;
        py.detach(|| env.restart(&which));
        Ok(())
    }

    /// Steps only the envs where `active` (bool `[N]`) is true, with their `actions` (int64
    /// `[N]`; the others' entries are not read); the other envs are not touched: their state,
    /// rewards and flags stay those of their last step. Returns `(finished, rejected)` as `step`.
    fn step_where(
        &mut self,
        py: Python<'_>,
        actions: PyReadonlyArray1<'_, i64>,
        active: PyReadonlyArray1<'_, bool>,
    ) -> PyResult<(usize, usize)> {
        let n = self.env.num_envs();
        if active.len() != n {
            return Err(PyValueError::new_err(format!(
                "active needs one flag per env: expected shape ({n},), got ({},)",
                active.len()
            )));
        }
        let active: Vec<bool> = active.as_array().iter().copied().collect();
        self.load_actions(&actions, Some(&active))?;
        let (env, actions) = (&mut self.env, &self.actions);
        let info = py
            .detach(|| env.step_where(actions, &active))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((info.num_finished, info.num_errors))
    }

    /// One uniformly random legal action per env, drawn in Rust from the packed masks (no NumPy
    /// work), as int64 `[N]`: written into `out` (int64 `[N]`, writeable, contiguous) and
    /// returned, or into a new array if `out` is None. With `seed=None` env i draws from its
    /// own generator (seeded by `reset` with `seed + i`, so a run is reproducible from its reset
    /// seed); with a seed, from a generator made from `(seed, i)`, leaving the env's own: the
    /// same seed and state give the same actions. An env with no legal action (a finished game,
    /// whose action the next step ignores) gets 0, as Gymnasium's `Discrete.sample` with an
    /// all-zero mask.
    #[pyo3(signature = (seed = None, out = None))]
    fn sample_legal<'py>(
        &mut self,
        py: Python<'py>,
        seed: Option<u64>,
        out: Option<Bound<'py, PyArray1<i64>>>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let n = self.env.num_envs();
        let out = match out {
            Some(out) => out,
            None => PyArray1::zeros(py, n, false),
        };
        if out.len() != n {
            return Err(PyValueError::new_err(format!("out must have shape ({n},), got ({},)", out.len())));
        }
        match seed {
            None => self.env.sample_legal(&mut self.actions),
            Some(seed) => self.env.sample_legal_seeded(seed, &mut self.actions),
        }
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        {
            let mut view: PyReadwriteArray1<'_, i64> = out
                .try_readwrite()
                .map_err(|e| PyValueError::new_err(format!("out cannot be written: {e}")))?;
            let mut view = view.as_array_mut();
            for (o, a) in view.iter_mut().zip(&self.actions) {
                *o = i64::from(a.0);
            }
        }
        Ok(out)
    }

    /// The action `agent` (a `morris.Agent`) plays in each env's current game, with its whole
    /// history, as int64 `[N]`: every env, or those where `active` (bool `[N]`) is true; 0 for
    /// the others and for finished games (all-false mask). One call, the GIL released, the games
    /// asked one after another.
    #[pyo3(signature = (agent, active = None))]
    fn agent_actions<'py>(
        &self,
        py: Python<'py>,
        agent: PyRef<'py, PyAgent>,
        active: Option<PyReadonlyArray1<'py, bool>>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let n = self.env.num_envs();
        if let Some(a) = &active
            && a.len() != n
        {
            return Err(PyValueError::new_err(format!(
                "active needs one flag per env: expected shape ({n},), got ({},)",
                a.len()
            )));
        }
        let active = active.as_ref().map(|a| a.as_array());
        let masks = self.env.masks();
        let games: Vec<Option<&Game>> = (0..n)
            .map(|i| {
                let asked = active.as_ref().is_none_or(|a| a[i]) && !masks[i].is_empty();
                asked.then(|| self.env.game(i))
            })
            .collect();
        Ok(PyArray1::from_vec(py, agent.choose_each(py, &games)?))
    }

    /// `[N, 15, points]` float32 view (`[N, 15, 24]` on the 24-point boards): each env's
    /// observation from its mover's point of view.
    #[getter]
    fn observations(slf: Bound<'_, Self>) -> Bound<'_, PyArray3<f32>> {
        let this = slf.borrow();
        let view = this.env.observations_view();
        live_view(&slf, &view)
    }

    /// `[N, 15, points]` float32 view: in same-step mode, the last observation of each game that
    /// ended on the latest step (other rows are stale).
    #[getter]
    fn final_observations(slf: Bound<'_, Self>) -> Bound<'_, PyArray3<f32>> {
        let this = slf.borrow();
        let view = this.env.final_observations_view();
        live_view(&slf, &view)
    }

    /// `[N, num_actions]` bool view (`[N, 600]` on the 24-point boards): the legal-action masks
    /// (all false in a finished game).
    #[getter]
    fn masks(slf: Bound<'_, Self>) -> PyResult<Bound<'_, PyArray2<bool>>> {
        let this = slf.borrow();
        let view = this
            .env
            .masks_view()
            .ok_or_else(|| PyRuntimeError::new_err("the env was built without dense masks"))?;
        Ok(live_view(&slf, &view))
    }

    /// `[N, 10]` uint64 view: the legal-action masks packed, action `a` in bit `a % 64` of word
    /// `a // 64` (bits from `num_actions` on zero; all zero in a finished game). Kept in every
    /// mask format; `morris.unpack_masks` expands it to `[N, num_actions]` bools.
    #[getter]
    fn packed_masks(slf: Bound<'_, Self>) -> Bound<'_, PyArray2<u64>> {
        let this = slf.borrow();
        let view = this.env.packed_masks_view();
        live_view(&slf, &view)
    }

    /// `[N, 2]` float32 view: rewards of the latest step, `[white, black]` per env.
    #[getter]
    fn rewards(slf: Bound<'_, Self>) -> Bound<'_, PyArray2<f32>> {
        let this = slf.borrow();
        let view = this.env.rewards_view();
        live_view(&slf, &view)
    }

    /// `[N]` bool view: whether each game ended by the rules on the latest step.
    #[getter]
    fn terminated(slf: Bound<'_, Self>) -> Bound<'_, PyArray1<bool>> {
        let this = slf.borrow();
        let view = ArrayView1::from(this.env.terminated());
        live_view(&slf, &view)
    }

    /// `[N]` bool view: whether each game was cut off by the turn cap on the latest step.
    #[getter]
    fn truncated(slf: Bound<'_, Self>) -> Bound<'_, PyArray1<bool>> {
        let this = slf.borrow();
        let view = ArrayView1::from(this.env.truncated());
        live_view(&slf, &view)
    }

    /// `[N]` uint8 view: the player to move in each env (0 White, 1 Black).
    #[getter]
    fn current_player(slf: Bound<'_, Self>) -> Bound<'_, PyArray1<u8>> {
        let this = slf.borrow();
        let view = ArrayView1::from(this.env.current_player());
        live_view(&slf, &view)
    }

    /// `[(env, message)]`: the envs that rejected their action on the latest step (flag mode).
    fn errors(&self) -> Vec<(usize, String)> {
        let board = self.env.config().rules.variant.board();
        self.env.errors().map(|(i, e)| (i, e.on(board).to_string())).collect()
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
    /// Converts `values` into `self.actions`, checking in `raise` mode that each one an env
    /// will play (every live env, or the `active` ones) is legal.
    fn load_actions(&mut self, values: &PyReadonlyArray1<'_, i64>, active: Option<&[bool]>) -> PyResult<()> {
        let n = self.env.num_envs();
        if values.len() != n {
            return Err(PyValueError::new_err(format!(
                "step needs one action per env: expected shape ({n},), got ({},)",
                values.len()
            )));
        }
        let masks = self.env.masks();
        let board = self.env.config().rules.variant.board();
        for (i, (&value, slot)) in values.as_array().iter().zip(self.actions.iter_mut()).enumerate() {
            let a = action_from(value, board);
            *slot = a;
            let plays = active.is_none_or(|active| active[i]) && !masks[i].is_empty();
            if self.illegal != Illegal::Raise || !plays || masks[i].has(a) {
                continue;
            }
            return Err(illegal_in_env(&self.env, i, value, a));
        }
        Ok(())
    }

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
    let board = game.rules().variant.board();
    let reason = match game.position().check(a, game.rules()) {
        Err(e) => e.on(board).to_string(),
        Ok(()) => "not legal here".to_string(),
    };
    match game.notation(a) {
        Some(m) if a.is_in_range_on(board) => {
            IllegalActionError::new_err(format!("env {i}: '{m}' is illegal: {reason}; nothing was stepped"))
        }
        _ => IllegalActionError::new_err(format!(
            "env {i}: action {value} is out of range (actions are 0..{}); nothing was stepped",
            board.num_actions()
        )),
    }
}

/// Marks an array that views the env's memory as read-only, so that Python cannot write into
/// buffers the Rust side owns (NumPy refuses to make it writeable again: its base is not an array).
/// A read-only NumPy array over `view`, one of the buffers of the `VecEnv` inside `owner`,
/// without a copy; the array keeps `owner` alive as its base object.
fn live_view<'py, T, D, S>(
    owner: &Bound<'py, PyVecEnv>,
    view: &numpy::ndarray::ArrayBase<S, D>,
) -> Bound<'py, numpy::PyArray<T, D>>
where
    T: numpy::Element,
    D: numpy::ndarray::Dimension,
    S: numpy::ndarray::Data<Elem = T>,
{
    // SAFETY: `borrow_from_array` requires the memory behind `view` to stay valid, and not be
    // mutated through NumPy, for as long as the array lives. Every `view` passed here borrows a
    // `Vec` of the `VecEnv` inside `owner` that `VecEnv::new` allocates once and that is never
    // resized or replaced (steps, resets and restarts write into it in place), so it stays at
    // the same address while `owner` lives, and the array holds `owner` as its base object.
    // The array is made read-only before it is returned, so NumPy never writes Rust's memory;
    // the element types (`f32`, `u64`, `u8`, and `bool` as one byte holding 0 or 1) have the
    // same layout on both sides. Rust writes the buffers only inside `&mut self` methods; a
    // Python thread reading an array while another thread steps the env (the GIL is released
    // during a step) races with those writes, the same contract as any NumPy array written by
    // an operation that releases the GIL.
    let array = unsafe { numpy::PyArray::borrow_from_array(view, owner.clone().into_any()) };
    array.readwrite().make_nonwriteable();
    array
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyVecEnv>()
}
