//! NumPy arguments checked and read into Rust buffers: a wrong dtype is a `TypeError` and a
//! wrong shape a `ValueError`, each naming the argument, what it must be and what it is.

use morris_env::{Action, ActionMask, MASK_WORDS, NUM_ACTIONS, NUM_PLANES, NUM_POINTS, OBS_LEN};
use numpy::{PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// `obj` as a NumPy array (`numpy.asarray`, so lists work too).
fn as_array<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyUntypedArray>> {
    let array = obj.py().import("numpy")?.getattr("asarray")?.call1((obj,))?;
    array
        .cast_into::<PyUntypedArray>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a NumPy array")))
}

/// Observations float32 `[N, 15, 24]` (or `[N, 360]`), copied row-major whatever their
/// strides. Returns N and the `N * 360` values.
pub(crate) fn observation_rows(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(usize, Vec<f32>)> {
    let array = as_array(obj, what)?;
    let py = obj.py();
    if !array.dtype().is_equiv_to(&numpy::dtype::<f32>(py)) {
        return Err(PyTypeError::new_err(format!("{what} must be float32, got dtype {}", array.dtype())));
    }
    let n = match *array.shape() {
        [n, c, p] if c == NUM_PLANES && p == NUM_POINTS => n,
        [n, len] if len == OBS_LEN => n,
        ref shape => {
            return Err(PyValueError::new_err(format!(
                "{what} must have shape [N, {NUM_PLANES}, {NUM_POINTS}], got {shape:?}"
            )));
        }
    };
    let typed = array.cast_into::<PyArrayDyn<f32>>()?;
    let values = typed.readonly().as_array().iter().copied().collect();
    Ok((n, values))
}

/// Legal-action masks for `n` rows: dense `[n, 600]` bool or integers (nonzero is legal, as
/// PettingZoo's int8 masks), or packed uint64 `[n, 10]` (`VecEnv.packed_masks`).
pub(crate) fn mask_rows(obj: &Bound<'_, PyAny>, what: &str, n: usize) -> PyResult<Vec<ActionMask>> {
    let array = as_array(obj, what)?;
    let py = obj.py();
    let dtype = array.dtype();
    let shape = array.shape().to_vec();
    let forms = format!("bool or integers [N, {NUM_ACTIONS}], or packed uint64 [N, {MASK_WORDS}]");
    if dtype.is_equiv_to(&numpy::dtype::<u64>(py)) && shape.len() == 2 && shape[1] == MASK_WORDS {
        if shape[0] != n {
            return Err(PyValueError::new_err(format!("{what} must have {n} rows, got shape {shape:?}")));
        }
        let words = array.cast_into::<PyArrayDyn<u64>>()?;
        let words = words.readonly();
        let mut masks = vec![ActionMask::EMPTY; n];
        for (i, (mask, &w)) in
            masks.iter_mut().flat_map(|m| m.0.iter_mut()).zip(words.as_array().iter()).enumerate()
        {
            *mask = w;
            // Word 9 holds actions 576..640, of which 600.. do not exist.
            if i % MASK_WORDS == MASK_WORDS - 1 && w >> (NUM_ACTIONS % 64) != 0 {
                return Err(PyValueError::new_err(format!(
                    "{what} row {}: bits past action {} are set (packed masks keep them zero)",
                    i / MASK_WORDS,
                    NUM_ACTIONS - 1
                )));
            }
        }
        return Ok(masks);
    }
    if !matches!(dtype.kind(), b'b' | b'i' | b'u') {
        return Err(PyTypeError::new_err(format!("{what} must be {forms}, got dtype {dtype}")));
    }
    if shape != [n, NUM_ACTIONS] {
        return Err(PyValueError::new_err(format!(
            "{what} must be {forms} with N = {n}, got shape {shape:?}"
        )));
    }
    let dense = py.import("numpy")?.getattr("not_equal")?.call1((&array, 0))?;
    let dense = dense.cast_into::<PyArrayDyn<bool>>()?;
    let dense = dense.readonly();
    let mut masks = vec![ActionMask::EMPTY; n];
    for (i, &legal) in dense.as_array().iter().enumerate() {
        if let (true, Some(mask)) = (legal, masks.get_mut(i / NUM_ACTIONS)) {
            mask.insert(Action((i % NUM_ACTIONS) as u16));
        }
    }
    Ok(masks)
}
