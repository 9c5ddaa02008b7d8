//! The 16 board symmetries as point permutations, with maps for actions, masks, positions and observations.
//!
//! Symmetry `s` (0..16) is built as: reflect left–right if `s & 4`, then rotate by
//! `(s & 3) × 90°` anticlockwise, then swap the inner and outer squares if `s & 8`.
//! Symmetry 0 is the identity.

use crate::action::{Action, ActionMask, NUM_ACTIONS};
use crate::features::{NUM_PLANES, OBS_LEN};
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

    /// All 16 symmetries.
    pub fn all() -> impl Iterator<Item = Symmetry> {
        (0..NUM_SYMMETRIES as u8).map(Symmetry)
    }

    /// The index, 0..16.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The point permutation: entry `p` is the image of point `p`.
    pub const fn permutation(self) -> &'static [u8; NUM_POINTS] {
        &PERMS[self.0 as usize]
    }

    /// The image of a point.
    #[inline]
    pub const fn point(self, p: Point) -> Point {
        Point::from_index_unchecked(PERMS[self.0 as usize][p.index()] as usize)
    }

    /// The image of a set of points.
    #[inline]
    pub fn board(self, b: BitBoard) -> BitBoard {
        b.iter().fold(BitBoard::EMPTY, |acc, p| acc | self.point(p).bit())
    }

    /// The image of an action (both endpoints of a move are mapped). Out-of-range actions map
    /// to themselves.
    #[inline]
    pub const fn action(self, a: Action) -> Action {
        if let Some(p) = a.as_point() {
            Action::point(self.point(p))
        } else if let Some((from, to)) = a.as_movement() {
            Action::movement(self.point(from), self.point(to))
        } else {
            a
        }
    }

    /// The image of an action mask.
    pub fn mask(self, m: &ActionMask) -> ActionMask {
        m.iter().map(|a| self.action(a)).collect()
    }

    /// The image of a position (hash recomputed; counters kept).
    pub fn position(self, pos: &Position) -> Position {
        pos.with_pieces(
            self.board(pos.pieces(crate::Color::White)),
            self.board(pos.pieces(crate::Color::Black)),
        )
    }

    /// How many distinct positions the 16 images of `pos` are (1 to 16): the size of its class,
    /// so that counts of classes can be turned into counts of positions.
    pub fn class_size(pos: &Position) -> usize {
        let mut images = [(0u32, 0u32); NUM_SYMMETRIES];
        for (slot, s) in images.iter_mut().zip(Symmetry::all()) {
            *slot = (s.board(pos.pieces(crate::Color::White)).0, s.board(pos.pieces(crate::Color::Black)).0);
        }
        images.sort_unstable();
        1 + images.windows(2).filter(|w| w[0] != w[1]).count()
    }

    /// Maps an observation `[C, 24]`: each plane's entries are moved to the image points.
    ///
    /// # Panics
    /// If either slice is not [`OBS_LEN`] long.
    pub fn observation(self, obs: &[f32], out: &mut [f32]) {
        assert!(obs.len() == OBS_LEN && out.len() == OBS_LEN, "observations must have {OBS_LEN} entries");
        let perm = self.permutation();
        for c in 0..NUM_PLANES {
            let base = c * NUM_POINTS;
            for p in 0..NUM_POINTS {
                out[base + perm[p] as usize] = obs[base + p];
            }
        }
    }

    /// Maps a dense per-action vector (a policy or visit distribution of length 600).
    ///
    /// # Panics
    /// If either slice is not 600 long.
    pub fn policy(self, policy: &[f32], out: &mut [f32]) {
        assert!(
            policy.len() == NUM_ACTIONS && out.len() == NUM_ACTIONS,
            "policies must have {NUM_ACTIONS} entries"
        );
        for (i, &v) in policy.iter().enumerate() {
            out[self.action(Action(i as u16)).index()] = v;
        }
    }

    /// `self ∘ other`: apply `other` first, then `self`.
    pub fn compose(self, other: Symmetry) -> Symmetry {
        let mut want = [0u8; NUM_POINTS];
        for (p, w) in want.iter_mut().enumerate() {
            *w = PERMS[self.index()][PERMS[other.index()][p] as usize];
        }
        Symmetry(PERMS.iter().position(|perm| *perm == want).unwrap_or(0) as u8)
    }

    /// The inverse symmetry.
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
