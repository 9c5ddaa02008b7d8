//! The observation: `[C, N]` f32 planes from the point of view of the player to move (`N` the
//! board's points: 24, or 16 in six men's morris).
//!
//! # Layout, version 1 ([`OBS_VERSION`])
//!
//! Plane `c` occupies `out[c * N .. (c + 1) * N]`; entry `p` of a plane is point `p`
//! (OpenSpiel numbering on the 24-point boards). "Own" is the player to move, "opponent" the other one; the colour
//! itself is not encoded, because the rules are the same for both players.
//!
//! | plane | meaning | values |
//! |---|---|---|
//! | 0 | own pieces | 0/1 per point |
//! | 1 | opponent pieces | 0/1 per point |
//! | 2 | empty points | 0/1 per point |
//! | 3 | own pieces in hand / the variant's pieces (9) | constant |
//! | 4 | opponent pieces in hand / the variant's pieces (9) | constant |
//! | 5 | removals pending / the most one move earns (1; 2 in morabaraba): 1 when the player to move must remove | constant in \[0, 1\] |
//! | 6 | own phase is placing | constant 0/1 |
//! | 7 | own phase is moving (sliding) | constant 0/1 |
//! | 8 | own phase is flying | constant 0/1 |
//! | 9 | opponent phase is placing | constant 0/1 |
//! | 10 | opponent phase is moving | constant 0/1 |
//! | 11 | opponent phase is flying | constant 0/1 |
//! | 12 | N-move counter / N (0 when the rule is off) | constant in \[0, 1\] |
//! | 13 | (occurrences of this position − 1) / 2 (0 when repetition is off) | constant 0, 0.5 |
//! | 14 | turns played / turn cap (0 when there is no cap) | constant in \[0, 1\] |
//!
//! With the rules in force, planes 0–14 determine the legal actions, the outcome and every
//! counter the draw rules read. Like AlphaZero's inputs, they do not list which earlier
//! positions occurred once (a future repetition may depend on that), only how often this one did.

use crate::board::Board;
use crate::position::{Phase, Position};
use crate::rules::Rules;
use crate::types::NUM_POINTS;

/// Version of the observation layout; bump it whenever a plane changes meaning.
pub const OBS_VERSION: u32 = 1;
/// Number of planes `C`.
pub const NUM_PLANES: usize = 15;
/// Planes `0..3`, one 0/1 entry per point: own pieces, opponent pieces, empty points.
pub const BOARD_PLANES: usize = 3;
/// Planes `BOARD_PLANES..NUM_PLANES`, each one value on every point ([`constant_planes`]).
pub const CONSTANT_PLANES: usize = NUM_PLANES - BOARD_PLANES;
/// Length of one flattened observation on the 24-point boards, `C * 24`.
pub const OBS_LEN: usize = NUM_PLANES * NUM_POINTS;

/// Length of one flattened observation on `board`, `C * N` (240 on six men's morris's 16
/// points).
pub const fn obs_len_on(board: &Board) -> usize {
    NUM_PLANES * board.num_points
}

/// Writes the observation of `pos` into `out` (`[C, N]` row-major, `N` the points of `rules`'
/// board: length [`OBS_LEN`] on the 24-point boards, [`obs_len_on`] on any).
/// `repetitions` is how many times the position has occurred, counting now
/// ([`Game::repetitions`](crate::Game::repetitions)).
///
/// # Panics
/// If `out` has another length.
#[inline]
pub fn encode(pos: &Position, rules: &Rules, repetitions: u32, out: &mut [f32]) {
    // The 24-point boards with their point count a constant (the loops unrolled as before).
    if rules.variant.is_small_board() {
        encode_points(pos, rules, repetitions, out, rules.variant.board().num_points);
    } else {
        encode_points(pos, rules, repetitions, out, NUM_POINTS);
    }
}

/// [`encode`] on a board of `n` points.
#[inline(always)]
fn encode_points(pos: &Position, rules: &Rules, repetitions: u32, out: &mut [f32], n: usize) {
    let len = NUM_PLANES * n;
    assert_eq!(out.len(), len, "observation buffer must have {len} entries");
    let me = pos.current_player();
    let opp = me.opponent();
    let own = pos.pieces(me).0;
    let theirs = pos.pieces(opp).0;
    let (boards, rest) = out.split_at_mut(BOARD_PLANES * n);
    for p in 0..n {
        let o = (own >> p) & 1;
        let t = (theirs >> p) & 1;
        boards[p] = o as f32;
        boards[n + p] = t as f32;
        boards[2 * n + p] = (1 ^ o ^ t) as f32;
    }
    let constants = constant_planes(pos, rules, repetitions);
    for (plane, value) in rest.chunks_exact_mut(n).zip(constants) {
        plane.fill(value);
    }
}

/// The values of the constant planes `3..15` of [`encode`] (each fills its whole plane), in
/// plane order: what a network's input layer needs besides the three board planes.
#[inline]
pub fn constant_planes(pos: &Position, rules: &Rules, repetitions: u32) -> [f32; CONSTANT_PLANES] {
    let me = pos.current_player();
    let opp = me.opponent();
    let phase = |c| {
        let ph = pos.phase(c, rules);
        [
            (ph == Phase::Placing) as u8 as f32,
            (ph == Phase::Moving) as u8 as f32,
            (ph == Phase::Flying) as u8 as f32,
        ]
    };
    let [op, om, of] = phase(me);
    let [tp, tm, tf] = phase(opp);
    let ratio = |num: u32, den: Option<u32>| match den {
        Some(d) if d > 0 => (num as f32 / d as f32).min(1.0),
        _ => 0.0,
    };
    let reps =
        if rules.threefold_repetition { (repetitions.saturating_sub(1) as f32 / 2.0).min(1.0) } else { 0.0 };
    let pieces = rules.variant.pieces() as f32;
    [
        pos.in_hand(me) as f32 / pieces,
        pos.in_hand(opp) as f32 / pieces,
        pos.removals_pending() as f32 / rules.variant.max_removals().max(1) as f32,
        op,
        om,
        of,
        tp,
        tm,
        tf,
        ratio(pos.quiet_plies() as u32, rules.n_move_rule),
        reps,
        ratio(pos.turns() as u32, rules.turn_cap),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Action, Game};

    #[test]
    fn start_position_planes() {
        let rules = Rules::standard();
        let mut out = [9.0f32; OBS_LEN];
        encode(&Position::start(), &rules, 1, &mut out);
        let plane = |c: usize| &out[c * NUM_POINTS..(c + 1) * NUM_POINTS];
        assert!(plane(0).iter().all(|&x| x == 0.0));
        assert!(plane(2).iter().all(|&x| x == 1.0));
        assert!(plane(3).iter().all(|&x| x == 1.0));
        assert!(plane(6).iter().all(|&x| x == 1.0));
        assert!(plane(7).iter().all(|&x| x == 0.0));
    }

    #[test]
    fn observation_is_from_the_mover_point_of_view() {
        let rules = Rules::standard();
        let mut game = Game::new(rules);
        game.apply(Action(4)).unwrap(); // White on d6; Black to move.
        let mut out = [0.0f32; OBS_LEN];
        encode(game.position(), &rules, 1, &mut out);
        assert_eq!(out[4], 0.0, "own plane: Black has no piece on d6");
        assert_eq!(out[NUM_POINTS + 4], 1.0, "opponent plane holds White's d6");
        assert_eq!(out[3 * NUM_POINTS], 1.0, "Black still has 9 in hand");
        assert!((out[4 * NUM_POINTS] - 8.0 / 9.0).abs() < 1e-6);
    }

    #[test]
    fn six_mens_morris_observes_its_16_points() {
        let rules = Rules::six();
        let board = rules.variant.board();
        assert_eq!(obs_len_on(board), 15 * 16);
        let mut game = Game::new(rules);
        game.play_notation("e1").unwrap(); // point 15, the last of six's board
        let mut out = vec![f32::NAN; obs_len_on(board)];
        encode(game.position(), &rules, 1, &mut out);
        assert_eq!((out[16 + 15], out[2 * 16 + 15], out[2 * 16]), (1.0, 0.0, 1.0));
        assert!((out[3 * 16] - 1.0).abs() < 1e-6 && (out[4 * 16] - 5.0 / 6.0).abs() < 1e-6);
        assert!(
            std::panic::catch_unwind(|| encode(game.position(), &rules, 1, &mut [0.0; OBS_LEN])).is_err()
        );
    }
}
