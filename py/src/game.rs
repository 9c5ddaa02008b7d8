//! `morris.Game`, `morris.Outcome` and the 16 board symmetries applied to NumPy observations,
//! masks and policies.

use morris_env::board::Board;
use morris_env::features::{encode, obs_len_on};
use morris_env::{
    Action, ActionError, Color, DrawReason, Game, NUM_PLANES, NotationError as RulesNotationError, Outcome,
    Phase, Point, Symmetry, WinReason,
};
use numpy::{PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::{IllegalActionError, NotationError, rules_from, rules_to_dict};

/// An action index from Python as an action of `board`; anything outside its range (negative,
/// huge, or past [`Board::num_actions`]) becomes an out-of-range action, so that it is rejected
/// rather than wrapped.
pub(crate) fn action_from(i: i64, board: &Board) -> Action {
    match u16::try_from(i) {
        Ok(a) if (a as usize) < board.num_actions() => Action(a),
        _ => Action(u16::MAX),
    }
}

/// The message of an out-of-range action index on `board`.
pub(crate) fn out_of_range(i: i64, board: &Board) -> PyErr {
    IllegalActionError::new_err(format!(
        "action {i} is out of range (actions are 0..{})",
        board.num_actions()
    ))
}

/// A notation error as `IllegalActionError` (a well-formed move that is illegal here) or
/// `NotationError` (text that is not a move).
pub(crate) fn notation_error(e: RulesNotationError) -> PyErr {
    fn illegal(e: &RulesNotationError) -> bool {
        match e {
            RulesNotationError::Illegal { .. }
            | RulesNotationError::ExpectedRemoval(_)
            | RulesNotationError::UnexpectedRemoval(_) => true,
            RulesNotationError::AtPly { error, .. } => illegal(error),
            _ => false,
        }
    }
    if illegal(&e) {
        IllegalActionError::new_err(e.to_string())
    } else {
        NotationError::new_err(e.to_string())
    }
}

fn symmetry_from(index: usize, board: &Board) -> PyResult<Symmetry> {
    Symmetry::all_on(board).nth(index).ok_or_else(|| {
        PyValueError::new_err(format!(
            "symmetry {index} does not exist (symmetries are 0..{})",
            board.num_symmetries
        ))
    })
}

/// How a game ended, or that it goes on.
///
/// `kind` is `"ongoing"`, `"win"` or `"draw"`; `winner` is 0 (White) or 1 (Black) for a win;
/// `reason` is `"too_few_pieces"`, `"blocked"` or `"illegal_action"` for a win and
/// `"threefold_repetition"`, `"n_move_rule"` or `"turn_cap"` for a draw.
#[pyclass(name = "Outcome", module = "morris", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyOutcome {
    outcome: Outcome,
}

impl PyOutcome {
    pub(crate) fn new(outcome: Outcome) -> PyOutcome {
        PyOutcome { outcome }
    }
}

#[pymethods]
impl PyOutcome {
    /// `"ongoing"`, `"win"` or `"draw"`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.outcome {
            Outcome::Ongoing => "ongoing",
            Outcome::Win { .. } => "win",
            Outcome::Draw(_) => "draw",
        }
    }

    /// The winner (0 White, 1 Black), or None.
    #[getter]
    fn winner(&self) -> Option<u8> {
        self.outcome.winner().map(|c| c as u8)
    }

    /// Why the game ended, or None while it goes on.
    #[getter]
    fn reason(&self) -> Option<&'static str> {
        match self.outcome {
            Outcome::Ongoing => None,
            Outcome::Win { reason, .. } => Some(match reason {
                WinReason::TooFewPieces => "too_few_pieces",
                WinReason::Blocked => "blocked",
                WinReason::IllegalAction => "illegal_action",
                WinReason::Line => "line",
            }),
            Outcome::Draw(reason) => Some(match reason {
                DrawReason::ThreefoldRepetition => "threefold_repetition",
                DrawReason::NMoveRule => "n_move_rule",
                DrawReason::TurnCap => "turn_cap",
                DrawReason::BoardFull => "board_full",
            }),
        }
    }

    /// Whether the game is over.
    #[getter]
    fn is_terminal(&self) -> bool {
        self.outcome.is_terminal()
    }

    /// Whether the game was cut off by the turn cap (a time limit) rather than decided by play.
    #[getter]
    fn is_truncation(&self) -> bool {
        self.outcome.is_truncation()
    }

    /// The final rewards `(white, black)`: +1 win, −1 loss, 0 draw or ongoing.
    #[getter]
    fn rewards(&self) -> (f32, f32) {
        (self.outcome.reward(Color::White), self.outcome.reward(Color::Black))
    }

    fn __str__(&self) -> String {
        self.outcome.to_string()
    }

    fn __repr__(&self) -> String {
        match (self.winner(), self.reason()) {
            (Some(w), Some(r)) => format!("Outcome(kind='win', winner={w}, reason='{r}')"),
            (None, Some(r)) => format!("Outcome(kind='draw', reason='{r}')"),
            _ => "Outcome(kind='ongoing')".to_string(),
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.outcome.hash(&mut h);
        h.finish()
    }
}

/// One game of the morris family: the position, the rules and the history (for threefold
/// repetition and undo).
///
/// `Game(rules=None, moves=None)`: `rules` is a preset name (`"standard"`, `"openspiel"`,
/// `"twelve"`, `"six"`, ...), a dict of rule options or None (standard); `moves` is a move list
/// in notation (`"d6 a1 d5 a4 d7 xa1"`) or a sequence of action indices, played from the start.
///
/// Actions on the 24-point boards are OpenSpiel's 600 indices: 0..24 place on or remove from a
/// point, 24 + 24 * from + to slide or fly; on a board of N points they are 0..N + N * N
/// (`variant_info["num_actions"]`: 272 for six men's morris). Players are 0 (White, who moves
/// first) and 1 (Black).
#[pyclass(name = "Game", module = "morris", from_py_object)]
#[derive(Clone)]
pub struct PyGame {
    pub(crate) game: Game,
}

#[pymethods]
impl PyGame {
    #[new]
    #[pyo3(signature = (rules = None, moves = None))]
    fn new(rules: Option<&Bound<'_, PyAny>>, moves: Option<&Bound<'_, PyAny>>) -> PyResult<PyGame> {
        let rules = rules_from(rules)?;
        let mut game = Game::new(rules);
        if let Some(moves) = moves.filter(|m| !m.is_none()) {
            if let Ok(text) = moves.cast::<PyString>() {
                game = Game::from_notation(rules, &text.to_cow()?).map_err(notation_error)?;
            } else {
                let actions: Vec<i64> = moves.extract().map_err(|_| {
                    PyTypeError::new_err("moves must be a string in notation or a sequence of ints")
                })?;
                let board = rules.variant.board();
                for (ply, &a) in actions.iter().enumerate() {
                    game.apply(action_from(a, board)).map_err(|e| {
                        IllegalActionError::new_err(format!("move {} (ply {ply}): {}", ply + 1, e.on(board)))
                    })?;
                }
            }
        }
        Ok(PyGame { game })
    }

    /// The rule options in force, as a dict.
    #[getter]
    fn rules<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        rules_to_dict(py, self.game.rules())
    }

    /// The sizes of the game's board (`morris.variant_info` of its rules): `num_actions`,
    /// `observation_shape`, `point_names`, ...
    #[getter]
    fn variant_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        variant_info_dict(py, self.game.rules())
    }

    /// The player to move: 0 (White) or 1 (Black). After a mill the same player moves again, to remove.
    #[getter]
    fn current_player(&self) -> u8 {
        self.game.current_player() as u8
    }

    /// How the game stands: an `Outcome`.
    #[getter]
    fn outcome(&self) -> PyOutcome {
        PyOutcome::new(self.game.outcome())
    }

    /// Whether the game is over.
    #[getter]
    fn is_terminal(&self) -> bool {
        self.game.outcome().is_terminal()
    }

    /// The final rewards `(white, black)`, 0 while the game goes on.
    #[getter]
    fn rewards(&self) -> (f32, f32) {
        let o = self.game.outcome();
        (o.reward(Color::White), o.reward(Color::Black))
    }

    /// The legal actions, ascending, as an int64 array (empty once the game is over).
    fn legal_actions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let actions: Vec<i64> = self.game.legal_actions().iter().map(|a| a.0 as i64).collect();
        PyArray1::from_vec(py, actions)
    }

    /// The legal-action mask, a bool array of shape `[num_actions]` (600 on the 24-point boards).
    fn legal_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        let mut row = vec![false; self.game_board().num_actions()];
        self.game.legal_actions().write_bool(&mut row);
        PyArray1::from_vec(py, row)
    }

    /// Plays an action index. Raises `IllegalActionError` (a `ValueError`), with the reason and
    /// the move in notation, if it is not legal; the game is then unchanged.
    fn apply(&mut self, action: i64) -> PyResult<()> {
        let a = action_from(action, self.game_board());
        if !a.is_in_range_on(self.game_board()) {
            return Err(out_of_range(action, self.game_board()));
        }
        self.game.apply(a).map_err(|e| illegal(&self.game, a, e))
    }

    /// Plays a move in notation (`"d6"`, `"a1-a4"`, `"xg7"`) and returns its action index.
    /// Raises `NotationError` for text that is not a move and `IllegalActionError` for an illegal
    /// one; the game is then unchanged.
    fn play(&mut self, notation: &str) -> PyResult<i64> {
        self.game.play_notation(notation).map(|a| a.0 as i64).map_err(notation_error)
    }

    /// Takes back the last action and returns it, or None at the start.
    fn undo(&mut self) -> Option<i64> {
        self.game.undo().map(|a| a.0 as i64)
    }

    /// Starts again from the empty board (same rules).
    fn reset(&mut self) {
        self.game.reset();
    }

    /// The observation from the mover's point of view: float32 `[15, points]` (planes × the
    /// board's points: `[15, 24]` on the 24-point boards), the layout of docs/environment.md
    /// (version `morris.OBSERVATION_VERSION`).
    fn observation<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let board = self.game_board();
        let mut obs = vec![0.0f32; obs_len_on(board)];
        encode(self.game.position(), self.game.rules(), self.game.repetitions(), &mut obs);
        PyArray1::from_vec(py, obs).reshape([NUM_PLANES, board.num_points])
    }

    /// The action index in notation for the current position (`"d6"`, `"a1-a4"`, `"xg7"`).
    fn action_to_notation(&self, action: i64) -> PyResult<String> {
        let a = action_from(action, self.game_board());
        self.game.notation(a).ok_or_else(|| out_of_range(action, self.game_board()))
    }

    /// The action index of a move in notation, if it is legal now (the game is not changed).
    fn notation_to_action(&self, notation: &str) -> PyResult<i64> {
        self.game
            .position()
            .parse_action(notation, self.game.rules())
            .map(|a| a.0 as i64)
            .map_err(notation_error)
    }

    /// The actions played so far, as a list of indices.
    #[getter]
    fn actions(&self) -> Vec<i64> {
        self.game.actions().iter().map(|a| a.0 as i64).collect()
    }

    /// The moves played so far, in notation, separated by spaces (what `Game(moves=...)` reads).
    fn record(&self) -> String {
        self.game.record()
    }

    /// Plies played.
    #[getter]
    fn num_plies(&self) -> usize {
        self.game.actions().len()
    }

    /// Pieces in hand, `(white, black)`.
    #[getter]
    fn pieces_in_hand(&self) -> (u8, u8) {
        let p = self.game.position();
        (p.in_hand(Color::White), p.in_hand(Color::Black))
    }

    /// Pieces on the board, `(white, black)`.
    #[getter]
    fn pieces_on_board(&self) -> (u32, u32) {
        let p = self.game.position();
        (p.pieces(Color::White).count(), p.pieces(Color::Black).count())
    }

    /// The points holding each player's pieces, `(white, black)`, as lists of names (`"a1"`…).
    #[getter]
    fn board(&self) -> (Vec<&'static str>, Vec<&'static str>) {
        let (p, board) = (self.game.position(), self.game_board());
        let names = |c| p.pieces(c).iter().map(|x: Point| board.names[x.index()]).collect();
        (names(Color::White), names(Color::Black))
    }

    /// Whether the player to move must remove an opposing piece (after closing a mill).
    #[getter]
    fn removal_pending(&self) -> bool {
        self.game.position().is_removal_pending()
    }

    /// Removals the player to move still has to make: 0, 1, or 2 after morabaraba's double
    /// mill (each its own action).
    #[getter]
    fn removals_pending(&self) -> u8 {
        self.game.position().removals_pending()
    }

    /// The mover's phase: `"placing"`, `"moving"` or `"flying"`.
    #[getter]
    fn phase(&self) -> &'static str {
        let p = self.game.position();
        match p.phase(p.current_player(), self.game.rules()) {
            Phase::Placing => "placing",
            Phase::Moving => "moving",
            Phase::Flying => "flying",
        }
    }

    /// How many times the current position has occurred in this game, counting now.
    #[getter]
    fn repetitions(&self) -> u32 {
        self.game.repetitions()
    }

    /// An independent copy.
    fn copy(&self) -> PyGame {
        self.clone()
    }

    fn __copy__(&self) -> PyGame {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyGame {
        self.clone()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyGame>().is_ok_and(|o| {
            let o = o.borrow();
            o.game.rules() == self.game.rules() && o.game.actions() == self.game.actions()
        })
    }

    /// The board as text, with pieces in hand and the side to move.
    fn __str__(&self) -> String {
        self.game.position().display(self.game.rules()).to_string()
    }

    fn __repr__(&self) -> String {
        format!("Game(moves='{}')", self.game.record())
    }
}

impl PyGame {
    /// The game's board.
    fn game_board(&self) -> &'static Board {
        self.game.rules().variant.board()
    }
}

/// The error of an illegal action, naming the move in notation on the game's board.
pub(crate) fn illegal(game: &Game, a: Action, e: ActionError) -> PyErr {
    let e = e.on(game.rules().variant.board());
    match game.notation(a) {
        Some(m) => IllegalActionError::new_err(format!("'{m}' is illegal: {e}")),
        None => IllegalActionError::new_err(e.to_string()),
    }
}

/// Maps every row of `array` (its trailing axes, of shape `row`) through `map_row`, returning a
/// new array of the same shape and dtype.
fn map_rows<'py, T: numpy::Element + Copy + Default>(
    py: Python<'py>,
    array: PyReadonlyArrayDyn<'py, T>,
    row: &[usize],
    what: &str,
    mut map_row: impl FnMut(&[T], &mut [T]),
) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    let shape = array.shape().to_vec();
    if shape.len() < row.len() || shape[shape.len() - row.len()..] != *row {
        return Err(PyValueError::new_err(format!("{what} must have shape [..., {row:?}], got {shape:?}")));
    }
    let len: usize = row.iter().product();
    let flat: Vec<T> = array.as_array().iter().copied().collect();
    let mut out = vec![T::default(); flat.len()];
    for (src, dst) in flat.chunks_exact(len).zip(out.chunks_exact_mut(len)) {
        map_row(src, dst);
    }
    PyArray1::from_vec(py, out).reshape(shape)
}

/// The board of `rules` (anything `Game(rules=...)` takes; None: nine men's morris's).
fn board_of(rules: Option<&Bound<'_, PyAny>>) -> PyResult<&'static Board> {
    Ok(rules_from(rules)?.variant.board())
}

/// Applies symmetry `symmetry` (0..16) to observations of shape `[..., 15, points]` (float32)
/// of the board of `rules` (None: `[..., 15, 24]`): returns the observation of the transformed
/// position.
#[pyfunction]
#[pyo3(signature = (observation, symmetry, rules = None))]
fn transform_observation<'py>(
    py: Python<'py>,
    observation: PyReadonlyArrayDyn<'py, f32>,
    symmetry: usize,
    rules: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let board = board_of(rules)?;
    let sym = symmetry_from(symmetry, board)?;
    map_rows(py, observation, &[NUM_PLANES, board.num_points], "observation", |src, dst| {
        sym.observation_on(board, src, dst)
    })
}

/// Applies symmetry `symmetry` to policies of shape `[..., num_actions]` (float32; 600 on the
/// 24-point boards) of the board of `rules`: the probability of action `a` moves to the
/// transformed action.
#[pyfunction]
#[pyo3(signature = (policy, symmetry, rules = None))]
fn transform_policy<'py>(
    py: Python<'py>,
    policy: PyReadonlyArrayDyn<'py, f32>,
    symmetry: usize,
    rules: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let board = board_of(rules)?;
    let sym = symmetry_from(symmetry, board)?;
    map_rows(py, policy, &[board.num_actions()], "policy", |src, dst| sym.policy_on(board, src, dst))
}

/// Applies symmetry `symmetry` to legal-action masks of shape `[..., num_actions]` (bool) of the
/// board of `rules`.
#[pyfunction]
#[pyo3(signature = (mask, symmetry, rules = None))]
fn transform_mask<'py>(
    py: Python<'py>,
    mask: PyReadonlyArrayDyn<'py, bool>,
    symmetry: usize,
    rules: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
    let board = board_of(rules)?;
    let sym = symmetry_from(symmetry, board)?;
    map_rows(py, mask, &[board.num_actions()], "mask", |src, dst| {
        for (a, &legal) in src.iter().enumerate() {
            dst[sym.action_on(board, Action(a as u16)).index()] = legal;
        }
    })
}

/// The action that `action` becomes under symmetry `symmetry` of the board of `rules`.
#[pyfunction]
#[pyo3(signature = (action, symmetry, rules = None))]
fn transform_action(action: i64, symmetry: usize, rules: Option<&Bound<'_, PyAny>>) -> PyResult<i64> {
    let board = board_of(rules)?;
    let sym = symmetry_from(symmetry, board)?;
    let a = action_from(action, board);
    if !a.is_in_range_on(board) {
        return Err(out_of_range(action, board));
    }
    Ok(sym.action_on(board, a).0 as i64)
}

/// The symmetry that undoes `symmetry` on the board of `rules`.
#[pyfunction]
#[pyo3(signature = (symmetry, rules = None))]
fn inverse_symmetry(symmetry: usize, rules: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    let board = board_of(rules)?;
    Ok(symmetry_from(symmetry, board)?.inverse_on(board).index())
}

/// The names of the board's points, in index order (nine men's morris's 24 when `rules` is None:
/// `a7`, `d7`, `g7`, …, as docs/rules.md numbers them).
#[pyfunction]
#[pyo3(signature = (rules = None))]
fn point_names<'py>(py: Python<'py>, rules: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyList>> {
    let board = board_of(rules)?;
    PyList::new(py, &board.names[..board.num_points])
}

/// The sizes of the board of `rules` (anything `Game(rules=...)` takes; None: nine men's
/// morris's): a dict of `variant`, `board`, `num_points`, `num_actions`, `num_planes`,
/// `observation_shape` (`(num_planes, num_points)`), `num_symmetries`, `mask_words` (the packed
/// masks' uint64 words, 10 on every board), `pieces` (each side's) and `point_names`.
#[pyfunction]
#[pyo3(signature = (rules = None))]
fn variant_info<'py>(py: Python<'py>, rules: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyDict>> {
    variant_info_dict(py, &rules_from(rules)?)
}

/// [`variant_info`] of `rules`.
pub(crate) fn variant_info_dict<'py>(
    py: Python<'py>,
    rules: &morris_env::Rules,
) -> PyResult<Bound<'py, PyDict>> {
    let (variant, board) = (rules.variant, rules.variant.board());
    let d = PyDict::new(py);
    d.set_item("variant", variant.name())?;
    d.set_item("board", board.name)?;
    d.set_item("num_points", board.num_points)?;
    d.set_item("num_actions", board.num_actions())?;
    d.set_item("num_planes", NUM_PLANES)?;
    d.set_item("observation_shape", (NUM_PLANES, board.num_points))?;
    d.set_item("num_symmetries", board.num_symmetries)?;
    d.set_item("mask_words", morris_env::MASK_WORDS)?;
    d.set_item("pieces", variant.pieces())?;
    d.set_item("point_names", &board.names[..board.num_points])?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGame>()?;
    m.add_class::<PyOutcome>()?;
    m.add_function(wrap_pyfunction!(transform_observation, m)?)?;
    m.add_function(wrap_pyfunction!(transform_policy, m)?)?;
    m.add_function(wrap_pyfunction!(transform_mask, m)?)?;
    m.add_function(wrap_pyfunction!(transform_action, m)?)?;
    m.add_function(wrap_pyfunction!(inverse_symmetry, m)?)?;
    m.add_function(wrap_pyfunction!(point_names, m)?)?;
    m.add_function(wrap_pyfunction!(variant_info, m)?)?;
    Ok(())
}
