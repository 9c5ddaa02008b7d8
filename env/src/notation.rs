//! Human notation (points `d6`, moves `a1-a4`, removals `xg7`): the `Move` type, the parsers
//! of moves and point names, and why a text cannot be read.

use std::fmt;

use crate::action::Action;
use crate::board::{Board, NINE};
use crate::error::ActionError;
use crate::rules::Variant;
use crate::types::{BitBoard, Point};

/// A move in human notation: `d6` (place), `a1-a4` (slide or fly), `xg7` (remove).
///
/// Notation says what the mover does; turning it into an [`Action`] is context-free,
/// but reading an action back needs to know whether a removal is pending
/// ([`Move::from_action`]).
///
/// ```
/// use morris_env::Move;
/// for text in ["d6", "a1-a4", "xg7"] {
///     let m: Move = text.parse().unwrap();
///     assert_eq!(m.to_string(), text);
/// }
/// assert!("d6-".parse::<Move>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// Place a piece from hand on a point.
    Place(Point),
    /// Move a piece: a slide to an adjacent point, or a fly.
    Slide {
        /// The point the piece leaves.
        from: Point,
        /// The point the piece arrives on.
        to: Point,
    },
    /// Remove an opposing piece after closing a mill.
    Remove(Point),
}

impl Move {
    /// The action index of this move on the 24-point boards ([`Move::to_action_on`]).
    #[inline]
    pub const fn to_action(self) -> Action {
        self.to_action_on(&NINE)
    }

    /// The action index of this move on `board` (its own points' encoding).
    #[inline]
    pub const fn to_action_on(self, board: &Board) -> Action {
        match self {
            Move::Place(p) | Move::Remove(p) => Action::point_on(board, p),
            Move::Slide { from, to } => Action::movement_on(board, from, to),
        }
    }

    /// Reads an action of the 24-point boards as a move ([`Move::from_action_on`]).
    pub const fn from_action(a: Action, removal_pending: bool) -> Option<Move> {
        Move::from_action_on(a, removal_pending, &NINE)
    }

    /// Reads an action of `board` as a move. Point actions are removals when
    /// `removal_pending`. Returns `None` for actions out of the board's range.
    pub const fn from_action_on(a: Action, removal_pending: bool, board: &Board) -> Option<Move> {
        if let Some(p) = a.as_point_on(board) {
            return Some(if removal_pending { Move::Remove(p) } else { Move::Place(p) });
        }
        match a.as_movement_on(board) {
            Some((from, to)) => Some(Move::Slide { from, to }),
            None => None,
        }
    }

    /// Parses a move written with `board`'s point names (`c4`, `a5-c5`, `xe1` on six men's
    /// morris's).
    ///
    /// # Errors
    /// If the text is empty, malformed, or names a point that is not on the board.
    pub fn parse_on(text: &str, board: &Board) -> Result<Move, NotationError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(NotationError::Empty);
        }
        let point = |x: &str| -> Result<Point, NotationError> {
            board.point_named(x).ok_or_else(|| {
                if x.len() != 2 {
                    NotationError::Malformed(t.to_string())
                } else if board.names == NINE.names {
                    NotationError::UnknownPoint(x.to_string())
                } else {
                    NotationError::NotOnBoard { name: x.to_string(), board: board.name }
                }
            })
        };
        if let Some(rest) = t.strip_prefix(['x', 'X']) {
            return Ok(Move::Remove(point(rest)?));
        }
        if let Some((a, b)) = t.split_once('-') {
            let (from, to) = (point(a)?, point(b)?);
            if from == to {
                return Err(NotationError::Malformed(t.to_string()));
            }
            return Ok(Move::Slide { from, to });
        }
        Ok(Move::Place(point(t)?))
    }

    /// The move written with `board`'s point names.
    pub fn on(self, board: &Board) -> MoveOn<'_> {
        MoveOn { mv: self, board }
    }
}

/// A [`Move`] written with a board's point names ([`Move::on`]).
#[derive(Clone, Copy, Debug)]
pub struct MoveOn<'a> {
    mv: Move,
    board: &'a Board,
}

impl fmt::Display for MoveOn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |p: Point| self.board.names[p.index()];
        match self.mv {
            Move::Place(p) => write!(f, "{}", name(p)),
            Move::Slide { from, to } => write!(f, "{}-{}", name(from), name(to)),
            Move::Remove(p) => write!(f, "x{}", name(p)),
        }
    }
}

impl fmt::Display for Move {
    /// The move on the 24-point boards (`d6`, `a1-a4`, `xg7`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.on(&NINE).fmt(f)
    }
}

impl std::str::FromStr for Move {
    type Err = NotationError;
    /// A move on the 24-point boards ([`Move::parse_on`]).
    fn from_str(s: &str) -> Result<Move, NotationError> {
        Move::parse_on(s, &NINE)
    }
}

/// Why a piece of notation could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotationError {
    /// Nothing was given.
    Empty,
    /// Not a point name a1…g7 on the 24-point board.
    UnknownPoint(String),
    /// Not a point name of another board.
    NotOnBoard {
        /// The name read.
        name: String,
        /// The board's name ([`Board::name`]).
        board: &'static str,
    },
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
        /// The game's variant, whose board names the error's points.
        variant: Variant,
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
            NotationError::NotOnBoard { name, board } => {
                let names = crate::board::named(board).map_or(String::new(), |b| b.names.join(" "));
                write!(f, "'{name}' is not a point of the {board} board (its points: {names})")
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
            NotationError::Illegal { text, error, variant } => {
                write!(f, "'{text}' is illegal: {}", error.on(variant.board()))
            }
            NotationError::AtPly { ply, error } => write!(f, "move {}: {error}", ply + 1),
        }
    }
}

impl std::error::Error for NotationError {}

impl std::str::FromStr for Point {
    type Err = NotationError;
    fn from_str(s: &str) -> Result<Point, NotationError> {
        Point::from_name(s.trim()).ok_or_else(|| NotationError::UnknownPoint(s.trim().to_string()))
    }
}

impl BitBoard {
    /// The set built from coordinate names.
    pub fn from_names(names: &[&str]) -> Result<BitBoard, NotationError> {
        let mut set = BitBoard::EMPTY;
        for name in names {
            set |= name.parse::<Point>()?.bit();
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_errors_are_clear() {
        assert_eq!("".parse::<Move>(), Err(NotationError::Empty));
        assert_eq!("z9".parse::<Move>(), Err(NotationError::UnknownPoint("z9".into())));
        assert_eq!("d4".parse::<Move>(), Err(NotationError::UnknownPoint("d4".into())));
        assert!(matches!("a1-a1".parse::<Move>(), Err(NotationError::Malformed(_))));
        assert!(matches!("hello".parse::<Move>(), Err(NotationError::Malformed(_))));
        assert_eq!("XG7".parse::<Move>(), Ok(Move::Remove(Point::ALL[2])));
    }

    #[test]
    fn moves_on_six_mens_board_use_its_names_and_actions() {
        use crate::board::SIX;
        let p = |i| Point::try_index(i).unwrap();
        for (text, m, a) in [
            ("c5", Move::Place(p(1)), 1),
            ("a5-c5", Move::Slide { from: p(0), to: p(1) }, 17),
            ("xe1", Move::Remove(p(15)), 15),
        ] {
            assert_eq!(Move::parse_on(text, &SIX), Ok(m));
            assert_eq!(m.on(&SIX).to_string(), text);
            assert_eq!(m.to_action_on(&SIX), Action(a));
            assert_eq!(Move::from_action_on(Action(a), text.starts_with('x'), &SIX), Some(m));
        }
        let e = Move::parse_on("d6", &SIX).unwrap_err();
        assert_eq!(e, NotationError::NotOnBoard { name: "d6".into(), board: "six" });
        assert!(e.to_string().contains("a5 c5 e5"), "{e}");
        assert_eq!(Move::from_action_on(Action(272), false, &SIX), None);
    }
}
