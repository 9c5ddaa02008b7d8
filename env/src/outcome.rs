//! How a game ends: the outcome (ongoing, a win with its reason, a draw with its reason) and the
//! reward it gives each player.

use std::fmt;

use crate::types::Color;

/// Why a game was won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WinReason {
    /// The loser has 2 pieces left on board and in hand.
    TooFewPieces,
    /// The loser had no legal move on their turn.
    Blocked,
    /// The loser played an illegal action in an environment set to punish it with a loss.
    IllegalAction,
    /// The winner made a line of three of their pieces (three men's morris).
    Line,
}

/// Why a game was drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrawReason {
    /// The same position occurred for the third time.
    ThreefoldRepetition,
    /// The N-move rule: N plies of sliding or flying with no removal.
    NMoveRule,
    /// The turn cap was reached.
    TurnCap,
    /// The board filled up during placement with no mill closed, so nobody can move (twelve
    /// men's morris).
    BoardFull,
}

/// The state of a game: still going, won, or drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The game goes on.
    Ongoing,
    /// A player won.
    Win {
        /// The winner.
        winner: Color,
        /// Why.
        reason: WinReason,
    },
    /// The game is drawn.
    Draw(DrawReason),
}

impl Outcome {
    /// Whether the game is over.
    #[inline]
    pub const fn is_terminal(self) -> bool {
        !matches!(self, Outcome::Ongoing)
    }

    /// The winner, if any.
    pub const fn winner(self) -> Option<Color> {
        match self {
            Outcome::Win { winner, .. } => Some(winner),
            _ => None,
        }
    }

    /// The final reward of `player`: +1 for a win, −1 for a loss, 0 for a draw or an ongoing game.
    #[inline]
    pub const fn reward(self, player: Color) -> f32 {
        match self {
            Outcome::Win { winner, .. } => {
                if winner as u8 == player as u8 {
                    1.0
                } else {
                    -1.0
                }
            }
            _ => 0.0,
        }
    }

    /// Whether the game was cut off by the turn cap (a time limit) rather than decided by play.
    /// RL code may bootstrap the value of such a state; the game result is still a draw.
    pub const fn is_truncation(self) -> bool {
        matches!(self, Outcome::Draw(DrawReason::TurnCap))
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Ongoing => write!(f, "ongoing"),
            Outcome::Win { winner, reason } => {
                let why = match reason {
                    WinReason::TooFewPieces => "opponent reduced to 2 pieces",
                    WinReason::Blocked => "opponent has no legal move",
                    WinReason::IllegalAction => "opponent played an illegal action",
                    WinReason::Line => "a line of three",
                };
                write!(f, "{winner} wins ({why})")
            }
            Outcome::Draw(r) => {
                let why = match r {
                    DrawReason::ThreefoldRepetition => "threefold repetition",
                    DrawReason::NMoveRule => "N-move rule",
                    DrawReason::TurnCap => "turn cap",
                    DrawReason::BoardFull => "full board",
                };
                write!(f, "draw ({why})")
            }
        }
    }
}
