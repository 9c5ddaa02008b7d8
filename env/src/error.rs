//! Typed errors: illegal actions, bad notation and inconsistent positions.

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

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActionError::OutOfRange(a) => {
                write!(f, "action {} is out of range (valid actions are 0..{NUM_ACTIONS})", a.0)
            }
            ActionError::GameOver => write!(f, "the game is over"),
            ActionError::RemovalPending(a) => write!(
                f,
                "action {} is not a removal: a mill was closed, so remove an opposing piece first (e.g. xd6)",
                a.0
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
                write!(f, "action {} moves a piece, but pieces in hand must be placed first", a.0)
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

/// Why a piece of notation could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotationError {
    /// Nothing was given.
    Empty,
    /// Not a point name a1…g7 on the board.
    UnknownPoint(String),
    /// Not of the form `d6`, `a1-a4` or `xg7`.
    Malformed(String),
    /// A removal is pending, so the move must be written `x<point>`.
    ExpectedRemoval(String),
    /// No removal is pending, so `x<point>` is not a legal move kind now.
    UnexpectedRemoval(String),
    /// The move is well formed but illegal in the position.
    Illegal {
        /// The text that was read.
        text: String,
        /// Why it is illegal.
        error: ActionError,
    },
    /// A move list or game record failed at the given 0-based ply.
    AtPly {
        /// The ply index.
        ply: usize,
        /// What went wrong there.
        error: Box<NotationError>,
    },
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotationError::Empty => {
                write!(f, "empty move: write a point (d6), a move (a1-a4) or a removal (xg7)")
            }
            NotationError::UnknownPoint(s) => {
                write!(
                    f,
                    "'{s}' is not a point: points are named a1 to g7 (files a-g, ranks 1-7) and d4 is not on the board"
                )
            }
            NotationError::Malformed(s) => {
                write!(f, "cannot read '{s}': write a point (d6), a move (a1-a4) or a removal (xg7)")
            }
            NotationError::ExpectedRemoval(s) => {
                write!(f, "'{s}': a mill was closed, so name the piece to remove as x<point>, e.g. xd6")
            }
            NotationError::UnexpectedRemoval(s) => {
                write!(f, "'{s}': no mill was closed, so there is nothing to remove")
            }
            NotationError::Illegal { text, error } => write!(f, "'{text}' is illegal: {error}"),
            NotationError::AtPly { ply, error } => write!(f, "move {}: {error}", ply + 1),
        }
    }
}

impl std::error::Error for NotationError {}

/// Why a position could not be built from its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PositionError {
    /// A point holds pieces of both players.
    Overlap(Point),
    /// A player has more than 9 pieces on board and in hand.
    TooManyPieces(crate::Color),
    /// A removal is flagged pending but the opponent has no piece on the board.
    NothingToRemove,
    /// Pieces in hand while the other player has none would break the alternation of placements.
    InconsistentHands,
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionError::Overlap(p) => write!(f, "point {p} holds pieces of both players"),
            PositionError::TooManyPieces(c) => write!(f, "{c} has more than 9 pieces on board and in hand"),
            PositionError::NothingToRemove => {
                write!(f, "a removal is pending but the opponent has no piece on the board")
            }
            PositionError::InconsistentHands => {
                write!(f, "pieces in hand differ by more than one, or the wrong player has the extra piece")
            }
        }
    }
}

impl std::error::Error for PositionError {}
