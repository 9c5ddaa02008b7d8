//! `morris.Agent` (any agent spec the arena knows, asked for moves on a `morris.Game`), the
//! colour-swapped match of `eval match`, and building the tables that `tb=` and `perfect:` use.

use std::sync::{Mutex, MutexGuard};

use morris_env::{Agent, Move};
use morris_eval::MatchReport;
use morris_eval::agents::AgentSpec;
use morris_eval::arena::{MatchConfig, play_match as arena_match};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::game::PyGame;
use crate::{SpecError, rules_from};

/// A player built from an agent spec, as the arena and `eval match` take them:
/// `random`, `minimax:depth=4`, `minimax:time=50ms`, `mcts:sims=800`,
/// `az:model=DIR,sims=200` (or `time=100ms,threads=2,batch=8`), `uci:cmd=...`.
///
/// `Agent(spec, seed=0)`; `choose(game)` returns an action index for the player to move (with
/// the GIL released while it thinks). Raises `SpecError` (a `ValueError`) for a bad spec or a
/// model that cannot be loaded.
#[pyclass(name = "Agent", module = "morris")]
pub struct PyAgent {
    name: String,
    agent: Mutex<Box<dyn Agent>>,
}

impl PyAgent {
    fn lock(&self) -> PyResult<MutexGuard<'_, Box<dyn Agent>>> {
        self.agent
            .lock()
            .map_err(|_| PyRuntimeError::new_err(format!("agent {} failed in an earlier call", self.name)))
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
        let agent =
            py.detach(|| spec_from(spec)?.build(seed).map_err(|e| SpecError::new_err(e.to_string())))?;
        Ok(PyAgent { name: agent.name(), agent: Mutex::new(agent) })
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
        let mut agent = self.lock()?;
        let agent = &mut **agent;
        let choice = py.detach(|| agent.choose(g));
        match choice {
            Some(a) if g.legal_actions().has(a) => Ok(Some(a.0 as i64)),
            Some(a) => {
                let shown = Move::from_action(a, g.position().is_removal_pending())
                    .map_or_else(|| format!("action {}", a.0), |m| m.to_string());
                Err(PyRuntimeError::new_err(format!("{} answered an illegal move: {shown}", self.name)))
            }
            None => Err(PyRuntimeError::new_err(format!(
                "{} gave no move: {}",
                self.name,
                agent.forfeit_reason().unwrap_or_else(|| "no reason given".to_string())
            ))),
        }
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

/// Plays `pairs` colour-swapped pairs between agent specs `a` and `b` from random openings of
/// `opening_plies` plies (both games of a pair share one), as `eval match` does, on `threads`
/// threads with the GIL released. Returns JSON: `{"report": ..., "text": ..., "games": [...]}`
/// (`morris.play_match` parses it).
#[pyfunction]
#[pyo3(signature = (a, b, pairs = 10, opening_plies = 6, seed = 0, rules = None, threads = 1))]
#[allow(clippy::too_many_arguments)]
fn play_match_json(
    py: Python<'_>,
    a: &str,
    b: &str,
    pairs: u32,
    opening_plies: u32,
    seed: u64,
    rules: Option<&Bound<'_, PyAny>>,
    threads: usize,
) -> PyResult<String> {
    if pairs == 0 {
        return Err(PyValueError::new_err("pairs must be at least 1"));
    }
    if threads == 0 {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    let config = MatchConfig {
        pairs,
        opening_plies,
        seed,
        rules: rules_from(rules)?,
        batch_network: false,
        openings: None,
    };
    py.detach(|| {
        let (a, b) = (spec_from(a)?, spec_from(b)?);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start {threads} threads: {e}")))?;
        let games = pool
            .install(|| arena_match(&a, &b, &config, |_| {}))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
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
