//! One stored value of a tablebase slot (win or loss with its distance, or draw), and the
//! value a prober reports once the N-move counter is taken into account.

use std::fmt;

/// Stored: a win in `d` plies to the next removal (or the end of the game).
pub(crate) const WIN: u16 = 0x4000;
/// Stored: a loss in `d` plies.
pub(crate) const LOSS: u16 = 0x8000;
/// The distance bits.
pub(crate) const DIST: u16 = 0x3fff;

/// The game-theoretic result for the player to move (`"win"`, `"draw"`, `"loss"` in JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Wdl {
    /// The player to move loses with best play.
    Loss,
    /// Neither side can force a win.
    Draw,
    /// The player to move wins with best play.
    Win,
}

impl Wdl {
    /// The same result seen by the other player.
    pub const fn flip(self) -> Wdl {
        match self {
            Wdl::Loss => Wdl::Win,
            Wdl::Draw => Wdl::Draw,
            Wdl::Win => Wdl::Loss,
        }
    }

    /// +1, 0 or −1: the value target of a training sample.
    pub const fn score(self) -> f32 {
        match self {
            Wdl::Loss => -1.0,
            Wdl::Draw => 0.0,
            Wdl::Win => 1.0,
        }
    }

    /// `"win"`, `"draw"` or `"loss"`.
    pub const fn name(self) -> &'static str {
        match self {
            Wdl::Loss => "loss",
            Wdl::Draw => "draw",
            Wdl::Win => "win",
        }
    }
}

impl Wdl {
    /// The value of a finished game for player `me` (`None` while it goes on).
    pub fn of_outcome(outcome: crate::outcome::Outcome, me: crate::types::Color) -> Option<Wdl> {
        match outcome {
            crate::outcome::Outcome::Win { winner, .. } => {
                Some(if winner == me { Wdl::Win } else { Wdl::Loss })
            }
            crate::outcome::Outcome::Draw(_) => Some(Wdl::Draw),
            crate::outcome::Outcome::Ongoing => None,
        }
    }
}

impl fmt::Display for Wdl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the tablebase says about a position, for the player to move, under the N-move rule
/// with the position's own counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Probe {
    /// The result with best play.
    pub wdl: Wdl,
    /// For a win, the fewest plies the winner needs to the next removal (or to the end of the
    /// game) while keeping the win; for a loss, the most the loser can delay it; 0 for a draw
    /// and for a pending removal (which is itself the removal).
    pub plies: u16,
}

impl Probe {
    /// Orders probes from the mover's point of view: wins before draws before losses, quicker
    /// wins and slower losses first. Larger is better.
    pub fn preference(&self) -> i32 {
        match self.wdl {
            Wdl::Win => 100_000 - self.plies as i32,
            Wdl::Draw => 0,
            Wdl::Loss => -100_000 + self.plies as i32,
        }
    }
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.wdl {
            Wdl::Draw => f.write_str("draw"),
            w => {
                let unit = if self.plies == 1 { "ply" } else { "plies" };
                write!(f, "{w} ({} {unit} to the next removal or the end)", self.plies)
            }
        }
    }
}

/// Reads a stored value at N-move counter `quiet_plies`: a decided result only holds if its
/// distance fits in the plies the rule leaves (`n − quiet_plies`); a loss in 0 (blocked) is a
/// loss whatever the counter, since a win takes precedence over a draw.
pub(crate) fn read(stored: u16, quiet_plies: u32, n_move_rule: Option<u32>) -> Probe {
    let d = stored & DIST;
    let fits = |d: u16| n_move_rule.is_none_or(|n| quiet_plies + d as u32 <= n);
    if stored & WIN != 0 && fits(d) {
        Probe { wdl: Wdl::Win, plies: d }
    } else if stored & LOSS != 0 && (d == 0 || fits(d)) {
        Probe { wdl: Wdl::Loss, plies: d }
    } else {
        Probe { wdl: Wdl::Draw, plies: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_turns_distant_results_into_draws() {
        let n = Some(100);
        assert_eq!(read(WIN | 7, 0, n).wdl, Wdl::Win);
        assert_eq!(read(WIN | 7, 93, n).wdl, Wdl::Win);
        assert_eq!(read(WIN | 7, 94, n).wdl, Wdl::Draw);
        assert_eq!(read(LOSS | 7, 94, n).wdl, Wdl::Draw);
        assert_eq!(read(LOSS, 120, n).wdl, Wdl::Loss);
        assert_eq!(read(WIN | 500, 0, None).wdl, Wdl::Win);
        assert_eq!(read(0, 0, n).wdl, Wdl::Draw);
    }
}
