//! Typed errors of the rules: illegal actions and inconsistent positions.

use std::fmt;

use crate::action::{Action, NUM_ACTIONS};
use crate::types::Point;

/// Why an action was rejected. The position is left unchanged whenever this is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionError {
    /// The index is not below 600.
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

/// An action in notation as the mover meant it (`d6` for a point, `a1-a4` for a move), for
/// messages; only an action outside the encoding is shown by its number.
fn spell(a: Action) -> String {
    if let Some((from, to)) = a.as_movement() {
        format!("'{from}-{to}'")
    } else if let Some(p) = a.as_point() {
        format!("'{p}'")
    } else {
        format!("action {}", a.0)
    }
}

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActionError::OutOfRange(a) => {
                write!(f, "action {} is out of range (valid actions are 0..{NUM_ACTIONS})", a.0)
            }
            ActionError::GameOver => write!(f, "the game is over"),
            ActionError::RemovalPending(a) => write!(
                f,
                "{} is not a removal: a mill was closed, so remove an opposing piece first (e.g. xd6)",
                spell(*a)
            ),
            ActionError::NothingToRemove(p) => write!(f, "there is no opposing piece on {p} to remove"),
            ActionError::ProtectedPiece(p) => write!(
                f,
                "the piece on {p} is in a mill and cannot be removed while other pieces are outside mills"
            ),
            ActionError::NoPiecesInHand(p) => {
                write!(f, "cannot place on {p}: no pieces left in hand, move a piece instead")
            }
            ActionError::MustPlace(a) => {
                write!(f, "{} moves a piece, but pieces in hand must be placed first", spell(*a))
            }
            ActionError::PointOccupied(p) => write!(f, "point {p} is not empty"),
            ActionError::NotOwnPiece(p) => write!(f, "there is no piece of the mover on {p}"),
            ActionError::NotAdjacent { from, to } => {
                write!(f, "{from} and {to} are not adjacent, and flying is not allowed now")
            }
        }
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
