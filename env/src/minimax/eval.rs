//! The heuristic evaluation of the minimax baseline: material, mills, blocked pieces, mobility,
//! two-piece configurations and double mills, with separate weights for each phase.
//!
//! Every term is "own minus opponent", from the point of view of the player to move, so the
//! score is ready for negamax. Won and lost positions never reach the evaluation: the search
//! scores them exactly (the "winning configuration" term), preferring faster wins.

use serde::{Deserialize, Serialize};

use crate::position::{Phase, Position};
use crate::rules::Rules;
use crate::tables::{Spec, with_spec};
use crate::types::{BitBoard, Color};

/// Weights of the evaluation terms in one phase of the game (centi-piece units: a piece of
/// material is worth about `material`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseWeights {
    /// Pieces on board plus in hand.
    pub material: i32,
    /// Complete mills.
    pub mills: i32,
    /// Opposing pieces that cannot slide (counted for the opponent, minus one's own blocked
    /// pieces). While placing, the pieces that would be blocked if sliding began now.
    pub blocked: i32,
    /// Legal slides (while placing: the slides the pieces would have).
    pub mobility: i32,
    /// Lines with two own pieces and the third point empty (mill threats).
    pub twos: i32,
    /// Double mills: a piece of a complete mill that can slide into a second mill, so that it
    /// closes a mill on every move (the "running mill").
    pub double_mills: i32,
    /// A removal is pending for the player to move (worth most of a piece).
    pub removal_pending: i32,
}

/// Weights for each phase. The phase is placing while the player to move has pieces in hand,
/// flying once either player is down to three pieces with none in hand, and moving otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalWeights {
    /// While placing.
    pub placing: PhaseWeights,
    /// While sliding.
    pub moving: PhaseWeights,
    /// When a player may fly.
    pub flying: PhaseWeights,
}

impl Default for EvalWeights {
    /// The tuned defaults (see `docs/search-and-network.md`, "History: tuning the evaluation
    /// weights", for the matches behind them).
    fn default() -> EvalWeights {
        EvalWeights {
            placing: PhaseWeights {
                material: 100,
                mills: 20,
                blocked: 4,
                mobility: 4,
                twos: 15,
                double_mills: 10,
                removal_pending: 80,
            },
            moving: PhaseWeights {
                material: 100,
                mills: 15,
                blocked: 8,
                mobility: 4,
                twos: 12,
                double_mills: 40,
                removal_pending: 80,
            },
            flying: PhaseWeights {
                material: 100,
                mills: 20,
                blocked: 0,
                mobility: 0,
                twos: 10,
                double_mills: 10,
                removal_pending: 90,
            },
        }
    }
}

/// The raw terms, own minus opponent, before weighting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Terms {
    /// See [`PhaseWeights::material`].
    pub material: i32,
    /// See [`PhaseWeights::mills`].
    pub mills: i32,
    /// See [`PhaseWeights::blocked`].
    pub blocked: i32,
    /// See [`PhaseWeights::mobility`].
    pub mobility: i32,
    /// See [`PhaseWeights::twos`].
    pub twos: i32,
    /// See [`PhaseWeights::double_mills`].
    pub double_mills: i32,
    /// See [`PhaseWeights::removal_pending`].
    pub removal_pending: i32,
}

/// Per-colour counts that the terms are differences of.
struct Side {
    mills: i32,
    twos: i32,
    blocked: i32,
    mobility: i32,
    double_mills: i32,
}

/// `slides`: the side will slide (placing or moving, not flying); `sliding`: it slides now.
/// The lines and mills are those of `S`'s board.
#[inline(always)]
fn side_counts<S: Spec>(own: BitBoard, opp: BitBoard, empty: BitBoard, slides: bool, sliding: bool) -> Side {
    let mut mills = 0;
    let mut twos = 0;
    for &m in S::MILLS {
        let o = (own & m).count();
        mills += (o == 3) as i32;
        twos += (o == 2 && (opp & m).is_empty()) as i32;
    }
    let (mut blocked, mut mobility, mut double_mills) = (0, 0, 0);
    if slides {
        // While placing these measure the mobility the pieces will have once sliding starts.
        for p in own {
            let free = S::ADJACENT[p.index()] & empty;
            blocked += free.is_empty() as i32;
            mobility += free.count() as i32;
        }
    }
    if sliding {
        // A piece of a complete mill that slides to a point completing another mill.
        for p in S::pieces_in_mills(own) {
            let rest = own - p.bit();
            for q in S::ADJACENT[p.index()] & empty {
                double_mills += S::closes_mill(rest | q.bit(), q.index()) as i32;
            }
        }
    }
    Side { mills, twos, blocked, mobility, double_mills }
}

impl Terms {
    /// Computes the terms for the player to move, on the lines and mills of `rules`' board.
    pub fn of(pos: &Position, rules: &Rules) -> Terms {
        with_spec!(rules.variant, S => Terms::of_g::<S>(pos, rules))
    }

    #[inline(always)]
    fn of_g<S: Spec>(pos: &Position, rules: &Rules) -> Terms {
        let me = pos.current_player();
        let opp = me.opponent();
        let empty = pos.empty();
        let phase = |c: Color| pos.phase(c, rules);
        let count = |c: Color| {
            let ph = phase(c);
            side_counts::<S>(
                pos.pieces(c),
                pos.pieces(c.opponent()),
                empty,
                ph != Phase::Flying,
                ph == Phase::Moving,
            )
        };
        let (a, b) = (count(me), count(opp));
        Terms {
            material: pos.num_pieces(me) as i32 - pos.num_pieces(opp) as i32,
            mills: a.mills - b.mills,
            // Blocked opposing pieces are good for the player to move.
            blocked: b.blocked - a.blocked,
            mobility: a.mobility - b.mobility,
            twos: a.twos - b.twos,
            double_mills: a.double_mills - b.double_mills,
            removal_pending: pos.is_removal_pending() as i32,
        }
    }
}

impl EvalWeights {
    /// The weights in force for the player to move.
    pub fn for_position(&self, pos: &Position, rules: &Rules) -> &PhaseWeights {
        let me = pos.current_player();
        if pos.in_hand(me) > 0 {
            &self.placing
        } else if Color::ALL.iter().any(|&c| pos.phase(c, rules) == Phase::Flying) {
            &self.flying
        } else {
            &self.moving
        }
    }

    /// The score of `pos` for the player to move.
    pub fn evaluate(&self, pos: &Position, rules: &Rules) -> i32 {
        let w = self.for_position(pos, rules);
        let t = Terms::of(pos, rules);
        w.material * t.material
            + w.mills * t.mills
            + w.blocked * t.blocked
            + w.mobility * t.mobility
            + w.twos * t.twos
            + w.double_mills * t.double_mills
            + w.removal_pending * t.removal_pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_count_mills_twos_and_blocked_pieces() {
        // White: the mill a7-d7-g7 and the two b6-d6 (f6 empty). White's a7, d7 and g7 cannot
        // slide; Black's a1 (boxed in by a4 and d1) and g1 (by d1 and g4) cannot either.
        let white = BitBoard::from_names(&["a7", "d7", "g7", "b6", "d6", "d1", "a4"]).unwrap();
        let black = BitBoard::from_names(&["a1", "g1", "g4"]).unwrap();
        let pos = Position::from_parts(white, black, [0, 0], Color::White, false).unwrap();
        let t = Terms::of(&pos, &Rules::standard());
        assert_eq!(t.material, 7 - 3);
        assert_eq!(t.mills, 1);
        assert!(t.twos >= 1);
        // Black has three pieces and flies under the standard rules, so its pieces are never
        // blocked: only White's three count.
        assert_eq!(t.blocked, -3);
        // Without flying, Black's two blocked pieces count for White.
        let no_fly = Rules { flying: false, ..Rules::standard() };
        assert_eq!(Terms::of(&pos, &no_fly).blocked, 2 - 3);
    }

    #[test]
    fn evaluation_is_antisymmetric_in_the_side_to_move() {
        let white = BitBoard::from_names(&["a7", "d7", "b6", "f4", "c3"]).unwrap();
        let black = BitBoard::from_names(&["g1", "d1", "e4", "b2"]).unwrap();
        let w = EvalWeights::default();
        let rules = Rules::standard();
        let as_white = Position::from_parts(white, black, [0, 0], Color::White, false).unwrap();
        let as_black = Position::from_parts(black, white, [0, 0], Color::Black, false).unwrap();
        assert_eq!(w.evaluate(&as_white, &rules), w.evaluate(&as_black, &rules));
    }
}
