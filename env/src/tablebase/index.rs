//! Symmetry-reduced indexing of a sector: each position class under the 16 board symmetries
//! maps to one slot, `class(mover's set) × rank(opponent's set among the free points)`.
//!
//! The mover's set is brought to its class representative (the numerically smallest image
//! under the 16 symmetries) with a precomputed table; the opponent's set is mapped by the same
//! symmetry and, when the representative is fixed by other symmetries, brought to the smallest
//! of its images under those. The opponent's set is then ranked (colex combinadic) among the
//! `24 − a` points the representative leaves free. Slots whose opponent set is not the smallest
//! image (only in classes with a non-trivial stabiliser) are never used.

use crate::symmetry::{NUM_SYMMETRIES, Symmetry};
use crate::types::NUM_POINTS;

/// The most pieces per side that an index can be built for.
pub const MAX_SIDE: usize = 9;

/// `BINOM[n][k]` = n choose k, for n ≤ 24 and k ≤ 9.
const BINOM: [[u32; MAX_SIDE + 1]; NUM_POINTS + 1] = {
    let mut t = [[0u32; MAX_SIDE + 1]; NUM_POINTS + 1];
    let mut n = 0;
    while n <= NUM_POINTS {
        t[n][0] = 1;
        let mut k = 1;
        while k <= MAX_SIDE {
            t[n][k] = if n == 0 { 0 } else { t[n - 1][k - 1] + t[n - 1][k] };
            k += 1;
        }
        n += 1;
    }
    t
};

/// n choose k (k ≤ 9, n ≤ 24).
#[inline]
pub(crate) const fn binom(n: usize, k: usize) -> u32 {
    BINOM[n][k]
}

/// Colex rank of a set of bits among `0..n`: Σ C(pᵢ, i+1) over its bits p₀ < p₁ < ….
#[inline]
fn colex_rank(mut bits: u32) -> u32 {
    let mut r = 0;
    let mut i = 1;
    while bits != 0 {
        let p = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        r += BINOM[p][i];
        i += 1;
    }
    r
}

/// The set of `k` bits with colex rank `rank` (inverse of `colex_rank`).
fn colex_unrank(mut rank: u32, k: usize) -> u32 {
    let mut bits = 0;
    for i in (1..=k).rev() {
        // The largest p with C(p, i) ≤ rank.
        let mut p = i - 1;
        while p < NUM_POINTS && BINOM[p + 1][i] <= rank {
            p += 1;
        }
        rank -= BINOM[p][i];
        bits |= 1 << p;
    }
    bits
}

/// `SYM_BYTES[s][i][b]`: the image under symmetry `s` of the points of byte `i` given by `b`.
fn sym_bytes() -> Box<[[[u32; 256]; 3]; NUM_SYMMETRIES]> {
    let mut t = Box::new([[[0u32; 256]; 3]; NUM_SYMMETRIES]);
    for s in Symmetry::all() {
        let perm = s.permutation();
        for i in 0..3 {
            for b in 0..256usize {
                let mut out = 0;
                for bit in 0..8 {
                    if b >> bit & 1 == 1 {
                        out |= 1 << perm[8 * i + bit];
                    }
                }
                t[s.index()][i][b] = out;
            }
        }
    }
    t
}

/// One class of the mover's sets: its representative, the symmetries that fix it (as a
/// 16-bit mask, identity included) and its free points in increasing order.
#[derive(Clone, Debug)]
struct Class {
    rep: u32,
    stabiliser: u16,
    free: [u8; NUM_POINTS],
}

/// The classes of the `k`-piece sets and, for each set (by colex rank), its class and the
/// symmetry that maps it to the representative.
#[derive(Clone, Debug)]
struct SideTable {
    classes: Vec<Class>,
    /// Per colex rank: class index in the low 24 bits, symmetry in the top 8.
    of_set: Vec<u32>,
}

impl SideTable {
    fn new(k: usize, bytes: &[[[u32; 256]; 3]; NUM_SYMMETRIES]) -> SideTable {
        let n = binom(NUM_POINTS, k) as usize;
        let mut of_set = vec![u32::MAX; n];
        let mut classes = Vec::new();
        for rank in 0..n {
            if of_set[rank] != u32::MAX {
                continue;
            }
            // The first set of a new class in rank order; its images form the class.
            let set = colex_unrank(rank as u32, k);
            let images: Vec<u32> = (0..NUM_SYMMETRIES).map(|s| apply(bytes, s, set)).collect();
            let rep = *images.iter().min().unwrap_or(&set);
            let class = classes.len() as u32;
            let rep_stab = (0..NUM_SYMMETRIES)
                .filter(|&s| apply(bytes, s, rep) == rep)
                .fold(0u16, |acc, s| acc | 1 << s);
            let mut free = [0u8; NUM_POINTS];
            let mut j = 0;
            for p in 0..NUM_POINTS {
                if rep >> p & 1 == 0 {
                    free[j] = p as u8;
                    j += 1;
                }
            }
            classes.push(Class { rep, stabiliser: rep_stab, free });
            for &img in &images {
                let r = colex_rank(img) as usize;
                if of_set[r] == u32::MAX {
                    // The first symmetry taking this member of the class to the representative.
                    let to = (0..NUM_SYMMETRIES).find(|&t| apply(bytes, t, img) == rep).unwrap_or(0);
                    of_set[r] = class | (to as u32) << 24;
                }
            }
        }
        SideTable { classes, of_set }
    }
}

#[inline]
fn apply(bytes: &[[[u32; 256]; 3]; NUM_SYMMETRIES], s: usize, set: u32) -> u32 {
    let t = &bytes[s];
    t[0][(set & 0xff) as usize] | t[1][(set >> 8 & 0xff) as usize] | t[2][(set >> 16 & 0xff) as usize]
}

/// Points of `set` renumbered among the points outside `taken` (software `pext`).
#[inline]
fn compress(set: u32, taken: u32) -> u32 {
    let mut out = 0;
    let mut bits = set;
    while bits != 0 {
        let p = bits.trailing_zeros();
        bits &= bits - 1;
        let below = taken & ((1u32 << p) - 1);
        out |= 1 << (p - below.count_ones());
    }
    out
}

/// The indexing of every sector with up to `max_side` pieces per side.
#[derive(Clone, Debug)]
pub struct Indexer {
    bytes: Box<[[[u32; 256]; 3]; NUM_SYMMETRIES]>,
    /// `sides[k]` for k in 3..=max_side (lower entries empty).
    sides: Vec<SideTable>,
}

impl Indexer {
    /// Tables for sets of 3 to `max_side` pieces (`max_side` ≤ 9). Takes well under a second
    /// up to 5 pieces.
    pub fn new(max_side: usize) -> Indexer {
        let max_side = max_side.min(MAX_SIDE);
        let bytes = sym_bytes();
        let sides = (0..=max_side)
            .map(|k| {
                if k < 3 {
                    SideTable { classes: Vec::new(), of_set: Vec::new() }
                } else {
                    SideTable::new(k, &bytes)
                }
            })
            .collect();
        Indexer { bytes, sides }
    }

    /// The largest piece count per side indexed.
    pub fn max_side(&self) -> usize {
        self.sides.len() - 1
    }

    /// Slots of sector (`mover`, `opponent`) pieces.
    pub fn len(&self, mover: usize, opponent: usize) -> usize {
        self.sides[mover].classes.len() * binom(NUM_POINTS - mover, opponent) as usize
    }

    /// Classes of `k`-piece sets under the 16 symmetries.
    pub fn classes(&self, k: usize) -> usize {
        self.sides[k].classes.len()
    }

    /// The image of a set of points under symmetry `s`.
    #[cfg(test)]
    pub(crate) fn map(&self, s: usize, set: u32) -> u32 {
        apply(&self.bytes, s, set)
    }

    /// The smallest image of a pair of disjoint point sets under the 16 symmetries, as
    /// `mover << 24 | opponent` (any piece counts, empty sets included): a key under which
    /// symmetric positions meet.
    #[inline]
    pub(crate) fn canonical(&self, mover: u32, opponent: u32) -> u64 {
        let mut least = u64::MAX;
        for s in 0..NUM_SYMMETRIES {
            let key = (apply(&self.bytes, s, mover) as u64) << 24 | apply(&self.bytes, s, opponent) as u64;
            least = least.min(key);
        }
        least
    }

    /// The slot of the position where the mover holds `mover` and the opponent `opponent`
    /// (disjoint sets of 3 to `max_side` points each).
    #[inline]
    pub fn index(&self, mover: u32, opponent: u32) -> usize {
        let a = mover.count_ones() as usize;
        let b = opponent.count_ones() as usize;
        let side = &self.sides[a];
        let entry = side.of_set[colex_rank(mover) as usize];
        let class = &side.classes[(entry & 0xff_ffff) as usize];
        let opp = self.least_image(class.stabiliser, apply(&self.bytes, (entry >> 24) as usize, opponent));
        (entry & 0xff_ffff) as usize * binom(NUM_POINTS - a, b) as usize
            + colex_rank(compress(opp, class.rep)) as usize
    }

    /// The position in slot `index` of sector (`a`, `b`): the mover's and the opponent's
    /// points, and whether the slot is the one its class is stored in (`false` for the unused
    /// duplicates of classes with a non-trivial stabiliser).
    pub fn position(&self, a: usize, b: usize, index: usize) -> (u32, u32, bool) {
        let per = binom(NUM_POINTS - a, b) as usize;
        let class = &self.sides[a].classes[index / per];
        let compressed = colex_unrank((index % per) as u32, b);
        let mut opp = 0;
        let mut bits = compressed;
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            opp |= 1 << class.free[j];
        }
        (class.rep, opp, self.least_image(class.stabiliser, opp) == opp)
    }

    /// The smallest image of `set` under the symmetries in `stabiliser` (a mask over the 16,
    /// identity included): the stored form of an opponent set in a symmetric class.
    #[inline]
    fn least_image(&self, stabiliser: u16, set: u32) -> u32 {
        let mut least = set;
        let mut others = stabiliser & !1;
        while others != 0 {
            let s = others.trailing_zeros() as usize;
            others &= others - 1;
            least = least.min(apply(&self.bytes, s, set));
        }
        least
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colex_rank_and_unrank_are_inverse() {
        for k in 1..=5 {
            for r in 0..binom(NUM_POINTS, k) {
                let bits = colex_unrank(r, k);
                assert_eq!(bits.count_ones() as usize, k);
                assert_eq!(colex_rank(bits), r);
            }
        }
    }

    #[test]
    fn symmetric_positions_share_a_slot_and_slots_round_trip() {
        let ix = Indexer::new(4);
        let mut rng = crate::Rng::seed_from_u64(3);
        for _ in 0..20_000 {
            let a = 3 + rng.below(2) as usize;
            let b = 3 + rng.below(2) as usize;
            let mut mover = 0u32;
            while mover.count_ones() < a as u32 {
                mover |= 1 << rng.below(24);
            }
            let mut opp = 0u32;
            while opp.count_ones() < b as u32 {
                let p = 1 << rng.below(24);
                if p & mover == 0 {
                    opp |= p;
                }
            }
            let i = ix.index(mover, opp);
            assert!(i < ix.len(a, b));
            for s in 0..NUM_SYMMETRIES {
                assert_eq!(ix.index(ix.map(s, mover), ix.map(s, opp)), i);
            }
            let (m, o, canonical) = ix.position(a, b, i);
            assert!(canonical);
            assert_eq!(ix.index(m, o), i);
        }
    }

    #[test]
    fn class_counts_match_burnside() {
        // Orbits of k-subsets under the 16 symmetries, counted independently.
        let ix = Indexer::new(5);
        let bytes = sym_bytes();
        for k in 3..=5 {
            let mut seen = std::collections::HashSet::new();
            for r in 0..binom(NUM_POINTS, k) {
                let set = colex_unrank(r, k);
                seen.insert((0..NUM_SYMMETRIES).map(|s| apply(&bytes, s, set)).min());
            }
            assert_eq!(ix.classes(k), seen.len());
        }
    }
}
