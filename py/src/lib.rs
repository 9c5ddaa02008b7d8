//! The native half of the `morris` Python package: games, the vectorized env, agents, matches,
//! game shards and models, training runs, with NumPy arrays made from the Rust crates' buffers.
//!
//! The Python half (`python/morris/`) adds the Gymnasium-style `VecEnv` wrapper, the PettingZoo
//! and Gymnasium environments and the NumPy forward pass; this module holds everything that
//! touches the rules or a file.

use std::path::Path;

use morris_env::{Rules, UnknownVariant};
use morris_train::TrainError;
use pyo3::exceptions::{PyFileExistsError, PyFileNotFoundError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

mod agents;
mod arrays;
mod bench;
mod data;
mod game;
mod observation;
mod remote;
mod run;
mod vec_env;

pyo3::create_exception!(
    morris,
    IllegalActionError,
    PyValueError,
    "An action or move that is not legal in the position (or not an action at all). Nothing was changed."
);
pyo3::create_exception!(
    morris,
    NotationError,
    PyValueError,
    "A move in notation that cannot be read (not `d6`, `a1-a4` or `xg7`, or an unknown point)."
);
pyo3::create_exception!(
    morris,
    SpecError,
    PyValueError,
    "An agent spec that is malformed or names something unusable (a missing or corrupt model)."
);
pyo3::create_exception!(
    morris,
    FileFormatError,
    PyValueError,
    "A file that exists but is corrupt, truncated, fails its checksum or has another format version."
);

/// Rules from a Python value, as [`rules_from`], for the parts of the lab that play nine men's
/// morris only so far (`Agent.act_batch`, self-play data): see [`nine_only`].
pub(crate) fn nine_rules_from(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Rules> {
    let rules = rules_from(value)?;
    nine_only(&rules, what)?;
    Ok(rules)
}

/// Refuses rules of another variant than nine men's morris where `what` (agents, their models
/// and tables, matches, self-play data) is nine's only so far: a `ValueError` naming both.
pub(crate) fn nine_only(rules: &Rules, what: &str) -> PyResult<()> {
    if rules.variant.is_nine() {
        return Ok(());
    }
    Err(PyValueError::new_err(format!(
        "{what}: nine men's morris only so far, not {} (Game, VecEnv, agents' moves and matches play every variant; issue 25)",
        rules.variant
    )))
}

/// Rules from a Python value: `None` (the standard rules), a preset name (`"standard"`,
/// `"openspiel"`, or a variant's: `"twelve"`, `"six"`, ...) or a dict of the fields of `morris_env::Rules`, which override the standard rules.
pub(crate) fn rules_from(value: Option<&Bound<'_, PyAny>>) -> PyResult<Rules> {
    let Some(value) = value else { return Ok(Rules::standard()) };
    if value.is_none() {
        return Ok(Rules::standard());
    }
    if let Ok(name) = value.cast::<PyString>() {
        let name = name.to_cow()?;
        let name: &str = &name;
        return Rules::preset(name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown rules preset '{name}' (presets: {}; or pass a dict of rule options)",
                Rules::PRESETS.join(", ")
            ))
        });
    }
    let Ok(dict) = value.cast::<PyDict>() else {
        return Err(PyTypeError::new_err("rules must be None, a preset name or a dict of rule options"));
    };
    // The variant first, whatever the dict's order: its own flying ([`Rules::for_variant`]) is
    // the default the other keys override.
    let mut rules = Rules::standard();
    if let Some(v) = dict.get_item("variant")? {
        let name: String = v
            .extract()
            .map_err(|_| PyTypeError::new_err("rule option 'variant' takes a variant name, e.g. 'nine'"))?;
        let variant = name.parse().map_err(|e: UnknownVariant| PyValueError::new_err(e.to_string()))?;
        rules = rules.for_variant(variant);
    }
    for (key, v) in dict.iter() {
        let key: String = key.extract().map_err(|_| PyTypeError::new_err("rule option names are strings"))?;
        let optional_count = |v: &Bound<'_, PyAny>| -> PyResult<Option<u32>> {
            if v.is_none() {
                return Ok(None);
            }
            if v.is_instance_of::<PyBool>() {
                return Err(PyTypeError::new_err(format!("rule option '{key}' takes a count or None")));
            }
            v.extract::<u32>().map(Some).map_err(|_| {
                PyValueError::new_err(format!("rule option '{key}' takes a count (0 or more) or None"))
            })
        };
        let flag = |v: &Bound<'_, PyAny>| -> PyResult<bool> {
            v.cast::<PyBool>()
                .map(|b| b.is_true())
                .map_err(|_| PyTypeError::new_err(format!("rule option '{key}' takes True or False")))
        };
        match key.as_str() {
            "variant" => {}
            "flying" => rules.flying = flag(&v)?,
            "threefold_repetition" => rules.threefold_repetition = flag(&v)?,
            "n_move_rule" => rules.n_move_rule = optional_count(&v)?,
            "turn_cap" => rules.turn_cap = optional_count(&v)?,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown rule option '{key}' (options: variant, flying, n_move_rule, threefold_repetition, turn_cap)"
                )));
            }
        }
    }
    Ok(rules)
}

/// Rules as the dict [`rules_from`] reads.
pub(crate) fn rules_to_dict<'py>(py: Python<'py>, rules: &Rules) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("variant", rules.variant.name())?;
    d.set_item("flying", rules.flying)?;
    d.set_item("n_move_rule", rules.n_move_rule)?;
    d.set_item("threefold_repetition", rules.threefold_repetition)?;
    d.set_item("turn_cap", rules.turn_cap)?;
    Ok(d)
}

/// A training-side error as the Python exception of its kind: a missing file is
/// `FileNotFoundError`, a run directory that already holds a run `FileExistsError`, other I/O
/// errors `OSError`, a corrupt or incompatible file `FileFormatError`, anything else
/// `ValueError`; the message names the file.
pub(crate) fn train_error(e: TrainError) -> PyErr {
    let message = e.to_string();
    match &e {
        TrainError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(message)
        }
        TrainError::NotFound { .. } => PyFileNotFoundError::new_err(message),
        TrainError::AlreadyExists { .. } => PyFileExistsError::new_err(message),
        TrainError::Io { .. } => PyOSError::new_err(message),
        TrainError::Corrupt { .. } | TrainError::Incompatible { .. } => FileFormatError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// A path argument that must exist, as `FileNotFoundError` naming it otherwise.
pub(crate) fn existing(path: &Path, what: &str) -> PyResult<()> {
    if path.exists() {
        Ok(())
    } else {
        Err(PyFileNotFoundError::new_err(format!("{what} {} does not exist", path.display())))
    }
}

// CPython allocates a pyclass's Rust value inline in the Python object, aligned to 16 bytes
// only, while PyO3 moves it with the type's own alignment: a type that asks for more (burn's
// modules and the trainer ask for 64) is undefined behaviour there, and crashed a learner on an
// aligned move. Such values are boxed; these checks keep every pyclass within 16.
const _: () = {
    use std::mem::align_of;
    assert!(align_of::<agents::PyAgent>() <= 16);
    assert!(align_of::<data::PyNetwork>() <= 16);
    assert!(align_of::<game::PyGame>() <= 16);
    assert!(align_of::<game::PyOutcome>() <= 16);
    assert!(align_of::<remote::PyLearner>() <= 16);
    assert!(align_of::<remote::PySelfPlayWorker>() <= 16);
    assert!(align_of::<vec_env::PyVecEnv>() <= 16);
};

/// The native module `morris._morris`.
#[pymodule]
fn _morris(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("IllegalActionError", py.get_type::<IllegalActionError>())?;
    m.add("NotationError", py.get_type::<NotationError>())?;
    m.add("SpecError", py.get_type::<SpecError>())?;
    m.add("FileFormatError", py.get_type::<FileFormatError>())?;
    m.add("NUM_ACTIONS", morris_env::NUM_ACTIONS)?;
    m.add("NUM_POINTS", morris_env::NUM_POINTS)?;
    m.add("NUM_PLANES", morris_env::NUM_PLANES)?;
    m.add("NUM_SYMMETRIES", morris_env::NUM_SYMMETRIES)?;
    m.add("OBSERVATION_VERSION", morris_env::OBS_VERSION)?;
    m.add("RULES_PRESETS", Rules::PRESETS.to_vec())?;
    m.add("VARIANTS", morris_env::Variant::NAMES.to_vec())?;
    game::register(m)?;
    vec_env::register(m)?;
    agents::register(m)?;
    data::register(m)?;
    bench::register(m)?;
    run::register(m)?;
    remote::register(m)?;
    Ok(())
}
