//! `morris.Agent` (any agent spec the arena knows, asked for moves on a `morris.Game` or on a
//! batch of observations), the colour-swapped match of `eval match`, and building the tables
//! that `tb=` and `perfect:` use.

use std::sync::{Mutex, MutexGuard};

use morris_env::{ActionMask, Agent, Game, OBS_LEN, Rules};
use morris_eval::EvalError;
use morris_eval::MatchReport;
use morris_eval::agents::AgentSpec;
use morris_eval::arena::{MatchConfig, Openings, play_match as arena_match};
use numpy::PyArray1;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::arrays::{mask_rows, observation_rows};
use crate::game::PyGame;
use crate::observation::game_from_observation;
use crate::{SpecError, nine_rules_from, rules_from};

/// A player built from an agent spec, as the arena and `eval match` take them:
/// `random`, `minimax:depth=4`, `minimax:time=50ms`, `mcts:sims=800`,
/// `az:model=DIR,sims=200` (or `time=100ms,threads=2,batch=8`), `uci:cmd=...`.
///
/// `Agent(spec, seed=0)`; `choose(game)` returns an action index for the player to move (with
/// the GIL released while it thinks). Raises `SpecError` (a `ValueError`) for a bad spec or a
/// model that cannot be loaded. `act_batch(observations, masks)` asks it for one move per row
/// of a batch in one call.
#[pyclass(name = "Agent", module = "morris")]
pub struct PyAgent {
    name: String,
    /// Boxed: a network's spec asks for more alignment than a pyclass may have (lib.rs).
    spec: Box<AgentSpec>,
    agent: Mutex<Box<dyn Agent>>,
}

impl PyAgent {
    /// Refuses a game the agent cannot play (a network of another variant, tables of other
    /// rules): a `ValueError` naming both.
    fn check_rules(&self, rules: &Rules) -> PyResult<()> {
        self.spec.check_rules(rules).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn lock(&self) -> PyResult<MutexGuard<'_, Box<dyn Agent>>> {
        self.agent
            .lock()
            .map_err(|_| PyRuntimeError::new_err(format!("agent {} failed in an earlier call", self.name)))
    }

    /// The agent's action in each of `games` (0 where a game is `None`: finished or not asked),
    /// in one call with the GIL released; the games are asked in order, one after another.
    ///
    /// # Errors
    /// As [`PyAgent::choose`], naming the game's index.
    pub(crate) fn choose_each(&self, py: Python<'_>, games: &[Option<&Game>]) -> PyResult<Vec<i64>> {
        for game in games.iter().flatten() {
            self.check_rules(game.rules())?;
        }
        let mut agent = self.lock()?;
        let agent = &mut **agent;
        let name = &self.name;
        py.detach(|| {
            let mut out = vec![0i64; games.len()];
            for (i, (slot, game)) in out.iter_mut().zip(games).enumerate() {
                if let Some(game) = game {
                    *slot = checked_choice(name, agent, game)
                        .map_err(|e| PyRuntimeError::new_err(format!("row {i}: {e}")))?;
                }
            }
            Ok(out)
        })
    }
}

/// `agent`'s action in the live `game`, checked to be legal.
///
/// # Errors
/// Why not, if the agent answers an illegal move or none.
fn checked_choice(name: &str, agent: &mut dyn Agent, game: &Game) -> Result<i64, String> {
    match agent.choose(game) {
        Some(a) if game.legal_actions().has(a) => Ok(a.0 as i64),
        Some(a) => {
            let shown = game.notation(a).unwrap_or_else(|| format!("action {}", a.0));
            Err(format!("{name} answered an illegal move: {shown}"))
        }
        None => Err(format!(
            "{name} gave no move: {}",
            agent.forfeit_reason().unwrap_or_else(|| "no reason given".to_string())
        )),
    }
}

fn spec_from(text: &str) -> PyResult<AgentSpec> {
    AgentSpec::parse(text).map_err(|e| SpecError::new_err(e.to_string()))
}

#[pymethods]
impl PyAgent {
    #[new]
    #[pyo3(signature = (spec, seed = 0))]
    fn new(py: Python<'_>, spec: &str, seed: u64) -> PyResult<PyAgent> {
        let (spec, agent) = py.detach(|| {
            let spec = spec_from(spec)?;
            let agent = spec.build(seed).map_err(|e| SpecError::new_err(e.to_string()))?;
            Ok::<_, PyErr>((spec, agent))
        })?;
        Ok(PyAgent { name: agent.name(), spec: Box::new(spec), agent: Mutex::new(agent) })
    }

    /// Raises `ValueError` if the agent cannot play under `rules` (anything `Game(rules=...)`
    /// takes): its network plays another variant, or its tables were built for other rules.
    #[pyo3(name = "check_rules", signature = (rules = None))]
    fn py_check_rules(&self, rules: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.check_rules(&rules_from(rules)?)
    }

    /// The agent's canonical spec, e.g. `"minimax:depth=4"`.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    /// The action the agent plays in `game` (for the player to move), or None if the game is
    /// over. Raises `RuntimeError` if the agent gives no move in a live game (an external engine
    /// that crashed, say), with its reason.
    fn choose(&self, py: Python<'_>, game: PyRef<'_, PyGame>) -> PyResult<Option<i64>> {
        let g = &game.game;
        if g.outcome().is_terminal() {
            return Ok(None);
        }
        self.check_rules(g.rules())?;
        let mut agent = self.lock()?;
        let agent = &mut **agent;
        let name = &self.name;
        py.detach(|| checked_choice(name, agent, g)).map(Some).map_err(PyRuntimeError::new_err)
    }

    /// One action per row of a batch, in one call with the GIL released: `observations`
    /// float32 `[N, 15, 24]` (as `VecEnv.observations`) and `masks` `[N, 600]` bool or integers
    /// (as `info["action_mask"]`, or PettingZoo's int8) or packed uint64 `[N, 10]`
    /// (`VecEnv.packed_masks`), made under `rules` (None: the standard rules). Returns int64
    /// `[N]`: the agent's move in the position each row shows, and 0 for a row whose mask is all
    /// false (a finished game, whose action `VecEnv.step` ignores).
    ///
    /// Each position is rebuilt from its observation without the game's earlier positions, so
    /// the search does not know that a position occurred before (plane 13); for the full
    /// history ask `VecEnv.agent_actions`. The rows are searched one after another (a network
    /// agent batches the leaves of each search, `batch=K`); `morris.Model.act_batch` runs a
    /// network without search on the whole batch in one forward pass.
    ///
    /// Raises `TypeError` for a wrong dtype, `ValueError` for a wrong shape, an observation no
    /// position under `rules` gives, or a mask that is not that position's legal actions (each
    /// naming the row), and `RuntimeError` if the agent gives no move or an illegal one.
    #[pyo3(signature = (observations, masks, rules = None))]
    fn act_batch<'py>(
        &self,
        py: Python<'py>,
        observations: &Bound<'py, PyAny>,
        masks: &Bound<'py, PyAny>,
        rules: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let rules = nine_rules_from(rules, "agents")?;
        let (n, obs) = observation_rows(observations, "observations")?;
        let masks = mask_rows(masks, "masks", n)?;
        let games = py.detach(|| {
            let mut games = Vec::with_capacity(n);
            for (i, (row, mask)) in obs.chunks_exact(OBS_LEN).zip(&masks).enumerate() {
                if mask.is_empty() {
                    games.push(None);
                    continue;
                }
                let game = game_from_observation(row, &rules)
                    .map_err(|e| PyValueError::new_err(format!("observation {i} {e}")))?;
                let legal = game.legal_actions();
                if legal != *mask {
                    return Err(PyValueError::new_err(mask_mismatch(i, &legal, mask)));
                }
                games.push(Some(game));
            }
            Ok(games)
        })?;
        let refs: Vec<Option<&Game>> = games.iter().map(Option::as_ref).collect();
        Ok(PyArray1::from_vec(py, self.choose_each(py, &refs)?))
    }

    /// Forgets what the agent carried between moves (search trees, tables): call it between games.
    fn reset(&self) -> PyResult<()> {
        self.lock()?.reset();
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("Agent('{}')", self.name)
    }
}

/// Why mask `i` is not the legal actions of observation `i`.
fn mask_mismatch(i: usize, legal: &ActionMask, mask: &ActionMask) -> String {
    let missing = legal.iter().find(|&a| !mask.has(a)).map(|a| format!("legal action {} is not in it", a.0));
    let extra =
        || mask.iter().find(|&a| !legal.has(a)).map(|a| format!("it has action {}, illegal there", a.0));
    format!(
        "mask {i} is not the legal actions of observation {i} ({}; {} legal, {} in the mask): pass the masks \
         of the same step, and the rules the observations were made under",
        missing.or_else(extra).unwrap_or_default(),
        legal.count(),
        mask.count()
    )
}

/// Plays `pairs` colour-swapped pairs between agent specs `a` and `b` from random openings of
/// `opening_plies` plies (6 by default; both games of a pair share one), or from the openings of the book at
/// `openings` (`eval openings`), as `eval match` does, on `threads` threads with the GIL
/// released. Returns JSON: `{"report": ..., "text": ..., "games": [...]}` (`morris.play_match`
/// parses it). A book that cannot be read raises `OSError` (`FileNotFoundError` when missing),
/// a malformed one or one shorter than `pairs` `ValueError`.
#[pyfunction]
#[pyo3(signature = (a, b, pairs = 10, opening_plies = None, seed = 0, rules = None, threads = 1, openings = None))]
#[allow(clippy::too_many_arguments)]
fn play_match_json(
    py: Python<'_>,
    a: &str,
    b: &str,
    pairs: u32,
    opening_plies: Option<u32>,
    seed: u64,
    rules: Option<&Bound<'_, PyAny>>,
    threads: usize,
    openings: Option<std::path::PathBuf>,
) -> PyResult<String> {
    if opening_plies.is_some() && openings.is_some() {
        return Err(PyValueError::new_err(
            "give opening_plies (random openings) or openings (a book), not both",
        ));
    }
    let opening_plies = opening_plies.unwrap_or(6);
    if pairs == 0 {
        return Err(PyValueError::new_err("pairs must be at least 1"));
    }
    if threads == 0 {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    let rules = rules_from(rules)?;
    let openings = match openings {
        None => Openings::Random,
        Some(path) => Openings::Book(morris_eval::book::load(&path, &rules).map_err(|e| match &e {
            EvalError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                pyo3::exceptions::PyFileNotFoundError::new_err(e.to_string())
            }
            EvalError::Io { .. } => pyo3::exceptions::PyOSError::new_err(e.to_string()),
            _ => PyValueError::new_err(e.to_string()),
        })?),
    };
    let config = MatchConfig { pairs, opening_plies, seed, rules, batch_network: false, openings };
    py.detach(|| {
        let (a, b) = (spec_from(a)?, spec_from(b)?);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start {threads} threads: {e}")))?;
        let games = pool.install(|| arena_match(&a, &b, &config, |_| {})).map_err(|e| match e {
            EvalError::Usage(_) => PyValueError::new_err(e.to_string()),
            _ => PyRuntimeError::new_err(e.to_string()),
        })?;
        let report = MatchReport::from_games(&a.name(), &b.name(), &games);
        let out = serde_json::json!({ "report": report, "text": report.to_text(), "games": games });
        Ok(out.to_string())
    })
}

/// Builds (or completes) the tables up to `max_pieces` a side in `out`, as `morris tablebase
/// build` does, under `rules` (the standard ones by default), with the GIL released; finished
/// sectors are kept. Returns the sector names, smallest first. Raises `ValueError` for a size
/// out of range or other rules, `OSError` for a directory that cannot be written.
#[pyfunction]
#[pyo3(signature = (out, max_pieces, rules = None))]
fn build_tablebase(
    py: Python<'_>,
    out: std::path::PathBuf,
    max_pieces: usize,
    rules: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<String>> {
    use morris_env::tablebase::{TablebaseError, build};
    let rules = rules_from(rules)?;
    py.detach(|| build(&out, max_pieces, &rules, &|_| {}))
        .map(|summaries| summaries.into_iter().map(|s| s.sector).collect())
        .map_err(|e| match e {
            TablebaseError::Io { .. } | TablebaseError::DiskFull { .. } => {
                pyo3::exceptions::PyOSError::new_err(e.to_string())
            }
            _ => PyValueError::new_err(e.to_string()),
        })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAgent>()?;
    m.add_function(wrap_pyfunction!(play_match_json, m)?)?;
    m.add_function(wrap_pyfunction!(build_tablebase, m)?)?;
    Ok(())
}
