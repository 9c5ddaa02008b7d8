//! Typed errors of the rules: illegal actions and inconsistent positions.

use std::fmt;

use crate::action::Action;
use crate::board::{Board, NINE};
use crate::types::Point;

/// Why an action was rejected. The position is left unchanged whenever this is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionError {
    /// The index is not below the board's action count (600 on the 24-point boards), or names
    /// no point or move of the board (three men's morris numbers its 9 points' moves in blocks
    /// of 16: [`crate::board::Board::move_stride`]).
    OutOfRange(Action),
    /// The game is already over.
    GameOver,
    /// A removal is pending, so only a point action naming an opposing piece is legal.
    RemovalPending(Action),
    /// The point holds no opposing piece to remove.
    NothingToRemove(Point),
    /// The opposing piece stands in a mill and the opponent has pieces outside mills.
    ProtectedPiece(Point),
    /// A placement while the mover has no pieces in hand.
    NoPiecesInHand(Point),
    /// A slide or fly while the mover still has pieces in hand.
    MustPlace(Action),
    /// The target point is not empty.
    PointOccupied(Point),
    /// The moving piece's point does not hold one of the mover's pieces.
    NotOwnPiece(Point),
    /// A slide to a point that is not adjacent, while the mover may not fly.
    NotAdjacent {
        /// Origin.
        from: Point,
        /// Target.
        to: Point,
    },
}

impl ActionError {
    /// The error with its points and moves named on `board` (its own encoding and names), for
    /// messages: [`fmt::Display`] names them on nine's board.
    pub fn on(self, board: &Board) -> ActionErrorOn<'_> {
        ActionErrorOn { error: self, board }
    }
}

/// An [`ActionError`] named on a board ([`ActionError::on`]).
#[derive(Clone, Copy, Debug)]
pub struct ActionErrorOn<'a> {
    error: ActionError,
    board: &'a Board,
}

impl fmt::Display for ActionErrorOn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let board = self.board;
        let name = |p: &Point| board.names.get(p.index()).copied().unwrap_or("?");
        // An action in notation as the mover meant it (`d6` for a point, `a1-a4` for a move);
        // only an action outside the encoding is shown by its number.
        let spell = |a: &Action| {
            if let Some((from, to)) = a.as_movement_on(board) {
                format!("'{}-{}'", name(&from), name(&to))
            } else if let Some(p) = a.as_point_on(board) {
                format!("'{}'", name(&p))
            } else {
                format!("action {}", a.0)
            }
        };
        match &self.error {
            ActionError::OutOfRange(a) if a.is_in_range_on(board) => {
                let s = board.move_stride();
                write!(
                    f,
                    "action {} names no point or move of the {} board (points are 0..{}, moves {s} + {s}·from + to)",
                    a.0, board.name, board.num_points
                )
            }
            ActionError::OutOfRange(a) => {
                write!(f, "action {} is out of range (valid actions are 0..{})", a.0, board.num_actions())
            }
            ActionError::GameOver => write!(f, "the game is over"),
            ActionError::RemovalPending(a) => write!(
                f,
                "{} is not a removal: a mill was closed, so remove an opposing piece first (e.g. x{})",
                spell(a),
                board.names[4]
            ),
            ActionError::NothingToRemove(p) => {
                write!(f, "there is no opposing piece on {} to remove", name(p))
            }
            ActionError::ProtectedPiece(p) => write!(
                f,
                "the piece on {} is in a mill and cannot be removed while other pieces are outside mills",
                name(p)
            ),
            ActionError::NoPiecesInHand(p) => {
                write!(f, "cannot place on {}: no pieces left in hand, move a piece instead", name(p))
            }
            ActionError::MustPlace(a) => {
                write!(f, "{} moves a piece, but pieces in hand must be placed first", spell(a))
            }
            ActionError::PointOccupied(p) => write!(f, "point {} is not empty", name(p)),
            ActionError::NotOwnPiece(p) => write!(f, "there is no piece of the mover on {}", name(p)),
            ActionError::NotAdjacent { from, to } => {
                write!(f, "{} and {} are not adjacent, and flying is not allowed now", name(from), name(to))
            }
        }
    }
}

impl fmt::Display for ActionError {
    /// The error with its points and moves named on nine's board ([`ActionError::on`] names
    /// them on another).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.on(&NINE).fmt(f)
    }
}

impl std::error::Error for ActionError {}

/// Why a position could not be built from its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PositionError {
    /// A point holds pieces of both players.
    Overlap(Point),
    /// A player has more pieces on board and in hand than the variant gives.
    TooManyPieces(crate::Color),
    /// A removal is flagged pending but the opponent has no piece on the board.
    NothingToRemove,
    /// Pieces in hand while the other player has none would break the alternation of placements.
    InconsistentHands,
    /// More removals pending than one move earns in the variant (two in morabaraba, one
    /// elsewhere).
    TooManyRemovals(u8),
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionError::Overlap(p) => write!(f, "point {p} holds pieces of both players"),
            PositionError::TooManyPieces(c) => {
                write!(f, "{c} has more pieces on board and in hand than the variant gives")
            }
            PositionError::NothingToRemove => {
                write!(f, "a removal is pending but the opponent has no piece on the board")
            }
            PositionError::InconsistentHands => {
                write!(f, "pieces in hand differ by more than one, or the wrong player has the extra piece")
            }
            PositionError::TooManyRemovals(n) => {
                write!(f, "{n} removals pending, more than one move earns in this variant")
            }
        }
    }
}

impl std::error::Error for PositionError {}
