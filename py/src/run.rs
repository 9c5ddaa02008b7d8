//! Training runs from Python: `morris.train` and `morris.selfplay_worker` run the code of the
//! `train` binary in this process, with the GIL released, and turn Ctrl-C into the binary's
//! stop request (a checkpoint, then `KeyboardInterrupt`).

use std::path::PathBuf;
use std::time::Duration;

use morris_eval::judge::train_with_ladder;
use morris_train::run::{StopRequest, WorkerOptions, selfplay_worker as run_worker};
use morris_train::{Options, Role, TrainError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{existing, train_error};

/// The signal number a Ctrl-C stands for in the run's stop request and its messages.
const SIGINT: i32 = 2;
/// How often the waiting Python thread looks for a signal (Ctrl-C) while the run works.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Runs `work` on its own thread with the GIL released, looking for Python signals meanwhile. A
/// signal handler that raises (Ctrl-C's `KeyboardInterrupt`) asks the work to stop through
/// `stop`; once it has (a checkpoint saved, finished games written), its message goes to stderr
/// and the handler's exception is raised.
fn run_stoppable<F>(py: Python<'_>, stop: &StopRequest, quiet: bool, work: F) -> PyResult<()>
where
    F: FnOnce() -> Result<(), TrainError> + Send + 'static,
{
    let waiter = std::thread::current();
    let handle = std::thread::Builder::new()
        .name("morris-train".into())
        .spawn(move || {
            let result = work();
            waiter.unpark();
            result
        })
        .map_err(|e| PyValueError::new_err(format!("cannot start the training thread: {e}")))?;
    let mut interrupt: Option<PyErr> = None;
    while !handle.is_finished() {
        // Woken when the work ends, or after the poll interval to look for a signal.
        py.detach(|| std::thread::park_timeout(SIGNAL_POLL));
        if interrupt.is_none()
            && let Err(e) = py.check_signals()
        {
            stop.request(SIGINT);
            interrupt = Some(e);
        }
    }
    let result = py
        .detach(|| handle.join())
        .map_err(|_| PyValueError::new_err("the training thread panicked (a bug: please report it)"))?;
    match (result, interrupt) {
        (Ok(()), None) => Ok(()),
        (Err(e @ TrainError::Interrupted { .. }), Some(raised)) => {
            if !quiet {
                eprintln!("{e}");
            }
            Err(raised)
        }
        // A run that ended on its own while the stop was being asked for.
        (Ok(()), Some(raised)) => Err(raised),
        (Err(e), _) => Err(train_error(e)),
    }
}

/// Runs a training run in this process, as the `train` binary does (the same code, the GIL
/// released): a new run from the TOML file `config` (in `run_dir`, or the config's
/// `run.output_dir/run.name`), or, without `config`, the run in `run_dir` continued from its
/// latest checkpoint (`run_dir` may also be a checkpoint, `RUN/checkpoints/step-N`). `set` holds
/// `section.key=value` overrides, as `--set` does. `learn_only=True` runs the learner alone, fed
/// by `selfplay_worker` processes (as `train learn`). Ctrl-C saves a checkpoint, then raises
/// `KeyboardInterrupt`. The run directory is the binary's: checkpoints, `metrics.jsonl` and
/// TensorBoard events.
///
/// Raises `ValueError` for a bad config (naming the file and key), `FileExistsError` when a new
/// run's directory already holds a run, `FileNotFoundError` for a missing file or nothing to
/// resume, `FileFormatError` for a corrupt checkpoint.
#[pyfunction]
#[pyo3(signature = (config = None, run_dir = None, *, set = Vec::new(), learn_only = false, quiet = false))]
fn train(
    py: Python<'_>,
    config: Option<PathBuf>,
    run_dir: Option<PathBuf>,
    set: Vec<String>,
    learn_only: bool,
    quiet: bool,
) -> PyResult<()> {
    if let Some(file) = &config {
        existing(file, "config file")?;
    }
    let stop = StopRequest::new();
    let role = if learn_only { Role::Learn } else { Role::Both };
    let options = Options { role, quiet, stop: stop.clone() };
    run_stoppable(py, &stop, quiet, move || {
        train_with_ladder(config.as_deref(), run_dir.as_deref(), &set, &options)
    })
}

/// Runs a self-play worker for the run in `run_dir`, as `train selfplay` does: it plays with
/// the newest published model, writes game shards into the run directory under `name`, and
/// returns when the learner finishes (or after `minutes`). It waits up to `wait` seconds for the
/// run to appear. `device` plays on another device than the run's. Ctrl-C writes the finished
/// games, then raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (run_dir, name, *, minutes = None, wait = 120.0, device = None, quiet = false))]
fn selfplay_worker(
    py: Python<'_>,
    run_dir: PathBuf,
    name: String,
    minutes: Option<f64>,
    wait: f64,
    device: Option<String>,
    quiet: bool,
) -> PyResult<()> {
    if !wait.is_finite() || wait < 0.0 {
        return Err(PyValueError::new_err(format!(
            "wait must be a number of seconds, 0 or more (got {wait})"
        )));
    }
    let stop = StopRequest::new();
    let options = WorkerOptions {
        name,
        minutes,
        wait: Duration::from_secs_f64(wait.min(1e9)),
        device,
        quiet,
        stop: stop.clone(),
    };
    run_stoppable(py, &stop, quiet, move || run_worker(&run_dir, &options))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(train, m)?)?;
    m.add_function(wrap_pyfunction!(selfplay_worker, m)?)?;
    Ok(())
}
