//! The 16 board symmetries as point permutations, with maps for actions, masks, positions and observations.
//!
//! Symmetry `s` (0..16) is built as: reflect left–right if `s & 4`, then rotate by
//! `(s & 3) × 90°` anticlockwise, then swap the inner and outer squares if `s & 8`.
//! Symmetry 0 is the identity.

use crate::action::{Action, ActionMask};
use crate::board::{Board, MAX_SYMMETRIES, NINE};
use crate::features::{NUM_PLANES, obs_len_on};
use crate::position::Position;
use crate::types::{BitBoard, NUM_POINTS, Point};

/// Number of symmetries.
pub const NUM_SYMMETRIES: usize = 16;

/// `PERMS[s][p]` is the image of point `p` under symmetry `s` (the nine board's, derived from
/// its coordinates, mills and lines: [`crate::board::Board::new`]).
const PERMS: [[u8; NUM_POINTS]; NUM_SYMMETRIES] = crate::board::NINE.symmetries;
const _: () = assert!(crate::board::NINE.num_symmetries == NUM_SYMMETRIES);

/// A board symmetry, `0..16`; 0 is the identity.
///
/// ```
/// use morris_env::{Symmetry, Point};
/// let a7 = Point::from_name("a7").unwrap();
/// for s in Symmetry::all() {
///     assert_eq!(s.inverse().point(s.point(a7)), a7);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symmetry(u8);

impl Symmetry {
    /// The identity.
    pub const IDENTITY: Symmetry = Symmetry(0);

    /// The symmetry with index `i`, if `i < 16`.
    pub const fn try_index(i: usize) -> Option<Symmetry> {
        if i < NUM_SYMMETRIES { Some(Symmetry(i as u8)) } else { None }
    }

    /// All 16 symmetries (of nine's board; [`Symmetry::all_on`] gives any board's).
    pub fn all() -> impl Iterator<Item = Symmetry> {
        (0..NUM_SYMMETRIES as u8).map(Symmetry)
    }

    /// The index, 0..16.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The point permutation on nine's board: entry `p` is the image of point `p` (any board's:
    /// `board.symmetries[s]`).
    pub const fn permutation(self) -> &'static [u8; NUM_POINTS] {
        &PERMS[self.0 as usize]
    }

    /// The image of a point.
    #[inline]
    pub const fn point(self, p: Point) -> Point {
        self.point_on(&NINE, p)
    }

    /// The image of a set of points.
    #[inline]
    pub fn board(self, b: BitBoard) -> BitBoard {
        self.board_on(&NINE, b)
    }

    /// The image of an action (both endpoints of a move are mapped). Out-of-range actions map
    /// to themselves.
    #[inline]
    pub const fn action(self, a: Action) -> Action {
        self.action_on(&NINE, a)
    }

    /// The image of an action mask.
    pub fn mask(self, m: &ActionMask) -> ActionMask {
        self.mask_on(&NINE, m)
    }

    /// The image of a position (hash recomputed; counters kept).
    pub fn position(self, pos: &Position) -> Position {
        self.position_on(&NINE, pos)
    }

    /// How many distinct positions the 16 images of `pos` are (1 to 16): the size of its class,
    /// so that counts of classes can be turned into counts of positions.
    pub fn class_size(pos: &Position) -> usize {
        Symmetry::class_size_on(&NINE, pos)
    }

    /// Maps an observation `[C, 24]`: each plane's entries are moved to the image points.
    ///
    /// # Panics
    /// If either slice is not [`OBS_LEN`](crate::OBS_LEN) long.
    pub fn observation(self, obs: &[f32], out: &mut [f32]) {
        self.observation_on(&NINE, obs, out);
    }

    /// Maps a dense per-action vector (a policy or visit distribution of length 600).
    ///
    /// # Panics
    /// If either slice is not 600 long.
    pub fn policy(self, policy: &[f32], out: &mut [f32]) {
        self.policy_on(&NINE, policy, out);
    }

    // ----- on any board: the symmetry's map of that board ----------------------------------
    // Symmetry `s` of a board is `board.symmetries[s]`, for `s` below its `num_symmetries`
    // ([`Symmetry::all_on`]); the methods above are these on nine's board.

    /// The symmetries of `board`, in index order.
    pub fn all_on(board: &Board) -> impl Iterator<Item = Symmetry> {
        (0..board.num_symmetries as u8).map(Symmetry)
    }

    /// The image of a point of `board`.
    #[inline]
    pub const fn point_on(self, board: &Board, p: Point) -> Point {
        Point::from_index_unchecked(board.symmetries[self.0 as usize][p.index()] as usize)
    }

    /// The image of a set of points of `board`.
    #[inline]
    pub fn board_on(self, board: &Board, b: BitBoard) -> BitBoard {
        b.iter().fold(BitBoard::EMPTY, |acc, p| acc | self.point_on(board, p).bit())
    }

    /// The image of an action of `board` (its own encoding). Out-of-range actions map to
    /// themselves.
    #[inline]
    pub const fn action_on(self, board: &Board, a: Action) -> Action {
        if let Some(p) = a.as_point_on(board) {
            Action::point_on(board, self.point_on(board, p))
        } else if let Some((from, to)) = a.as_movement_on(board) {
            Action::movement_on(board, self.point_on(board, from), self.point_on(board, to))
        } else {
            a
        }
    }

    /// The image of an action mask of `board`.
    pub fn mask_on(self, board: &Board, m: &ActionMask) -> ActionMask {
        m.iter().map(|a| self.action_on(board, a)).collect()
    }

    /// The image of a position on `board` (hash recomputed; counters kept).
    pub fn position_on(self, board: &Board, pos: &Position) -> Position {
        pos.with_pieces(
            self.board_on(board, pos.pieces(crate::Color::White)),
            self.board_on(board, pos.pieces(crate::Color::Black)),
        )
    }

    /// How many distinct positions the images of `pos` under `board`'s symmetries are.
    pub fn class_size_on(board: &Board, pos: &Position) -> usize {
        let mut images = [(0u32, 0u32); MAX_SYMMETRIES];
        let images = &mut images[..board.num_symmetries];
        for (slot, s) in images.iter_mut().zip(Symmetry::all_on(board)) {
            let image = |c| s.board_on(board, pos.pieces(c)).0;
            *slot = (image(crate::Color::White), image(crate::Color::Black));
        }
        images.sort_unstable();
        1 + images.windows(2).filter(|w| w[0] != w[1]).count()
    }

    /// Maps an observation `[C, N]` of `board`: each plane's entries move to the image points.
    ///
    /// # Panics
    /// If either slice is not [`obs_len_on`] long.
    pub fn observation_on(self, board: &Board, obs: &[f32], out: &mut [f32]) {
        let (n, len) = (board.num_points, obs_len_on(board));
        assert!(obs.len() == len && out.len() == len, "observations must have {len} entries");
        let perm = &board.symmetries[self.index()];
        for c in 0..NUM_PLANES {
            let base = c * n;
            for p in 0..n {
                out[base + perm[p] as usize] = obs[base + p];
            }
        }
    }

    /// Maps a dense per-action vector of `board` (length [`Board::num_actions`]).
    ///
    /// # Panics
    /// If either slice has another length.
    pub fn policy_on(self, board: &Board, policy: &[f32], out: &mut [f32]) {
        let len = board.num_actions();
        assert!(policy.len() == len && out.len() == len, "policies must have {len} entries");
        for (i, &v) in policy.iter().enumerate() {
            out[self.action_on(board, Action(i as u16)).index()] = v;
        }
    }

    /// The symmetry of `board` that undoes this one.
    pub fn inverse_on(self, board: &Board) -> Symmetry {
        let undoes = |s: &Symmetry| {
            (0..board.num_points).all(|p| {
                let p = Point::from_index_unchecked(p);
                s.point_on(board, self.point_on(board, p)) == p
            })
        };
        Symmetry::all_on(board).find(undoes).unwrap_or(Symmetry::IDENTITY)
    }

    /// `self ∘ other` on nine's board: apply `other` first, then `self`.
    pub fn compose(self, other: Symmetry) -> Symmetry {
        let mut want = [0u8; NUM_POINTS];
        for (p, w) in want.iter_mut().enumerate() {
            *w = PERMS[self.index()][PERMS[other.index()][p] as usize];
        }
        Symmetry(PERMS.iter().position(|perm| *perm == want).unwrap_or(0) as u8)
    }

    /// The inverse symmetry on nine's board.
    pub fn inverse(self) -> Symmetry {
        Symmetry::all().find(|s| s.compose(self) == Symmetry::IDENTITY).unwrap_or(Symmetry::IDENTITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::{ADJACENT, MILLS};

    #[test]
    fn sixteen_distinct_permutations_preserving_mills_and_adjacency() {
        for s in Symmetry::all() {
            let perm = s.permutation();
            let mut seen = 0u32;
            for &q in perm {
                seen |= 1 << q;
            }
            assert_eq!(seen, BitBoard::FULL.0, "symmetry {s:?} is not a permutation");
            for m in MILLS {
                assert!(MILLS.contains(&s.board(m)), "symmetry {s:?} breaks a mill");
            }
            for p in Point::ALL {
                assert_eq!(s.board(ADJACENT[p.index()]), ADJACENT[s.point(p).index()]);
            }
        }
        for (a, pa) in PERMS.iter().enumerate() {
            for (b, pb) in PERMS.iter().enumerate().take(a) {
                assert_ne!(pa, pb, "symmetries {a} and {b} coincide");
            }
        }
        assert_eq!(PERMS[0], std::array::from_fn(|i| i as u8));
    }

    #[test]
    fn inner_outer_swap_maps_a7_to_c5() {
        let s = Symmetry(8);
        assert_eq!(s.point(Point::from_name("a7").unwrap()).name(), "c5");
        assert_eq!(s.point(Point::from_name("b6").unwrap()).name(), "b6");
        assert_eq!(s.point(Point::from_name("d7").unwrap()).name(), "d5");
    }
}
