//! The fixed 600-action encoding and the packed legal-action mask.

use std::fmt;

use crate::board::Board;
use crate::rng::Rng;
use crate::types::{NUM_POINTS, Point};

/// Size of the action space: 24 point actions plus 24×24 from-to moves.
pub const NUM_ACTIONS: usize = NUM_POINTS + NUM_POINTS * NUM_POINTS;

/// An action index in the fixed 600-action space (OpenSpiel's encoding).
///
/// * `0..24`: a point action: place a piece on that point, or, while a removal is pending,
///   remove the opposing piece on that point.
/// * `24 + from·24 + to`: move a piece from `from` to `to` (a slide, or a fly).
///
/// Any `u16` can be wrapped, so actions read from outside (a tensor, a file) need no
/// conversion; [`Position::apply`](crate::Position::apply) rejects out-of-range and illegal ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(transparent)]
pub struct Action(pub u16);

impl Action {
    /// The point action on `p` (a placement, or a removal when one is pending).
    #[inline]
    pub const fn point(p: Point) -> Action {
        Action(p.index() as u16)
    }

    /// The move action from `from` to `to`.
    #[inline]
    pub const fn movement(from: Point, to: Point) -> Action {
        Action((NUM_POINTS + from.index() * NUM_POINTS + to.index()) as u16)
    }

    /// The index as `usize`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The action with index `i`, if `i < 600`.
    #[inline]
    pub const fn try_index(i: usize) -> Option<Action> {
        if i < NUM_ACTIONS { Some(Action(i as u16)) } else { None }
    }

    /// Whether this index lies in the action space.
    #[inline]
    pub const fn is_in_range(self) -> bool {
        (self.0 as usize) < NUM_ACTIONS
    }

    /// For a point action, its point.
    #[inline]
    pub const fn as_point(self) -> Option<Point> {
        Point::try_index(self.0 as usize)
    }

    /// For a move action, `(from, to)`.
    #[inline]
    pub const fn as_movement(self) -> Option<(Point, Point)> {
        let i = self.0 as usize;
        if i < NUM_POINTS || i >= NUM_ACTIONS {
            return None;
        }
        let m = i - NUM_POINTS;
        Some((Point::from_index_unchecked(m / NUM_POINTS), Point::from_index_unchecked(m % NUM_POINTS)))
    }
}

/// The same encoding on any board of `N` points (its [`Board::num_actions`] actions): `0..N`
/// point actions, then `S + S·from + to` moves, `S` the board's [`Board::move_stride`] (`N`
/// rounded up to a multiple of 8: `N` itself on the 24-point boards and six men's morris's 16,
/// 16 on three men's morris's 9). On the 24-point boards these are the methods above.
impl Action {
    /// The point action on `p` of `board`.
    #[inline]
    pub const fn point_on(_board: &Board, p: Point) -> Action {
        Action(p.index() as u16)
    }

    /// The move action from `from` to `to` on `board`.
    #[inline]
    pub const fn movement_on(board: &Board, from: Point, to: Point) -> Action {
        let s = board.move_stride();
        Action((s + from.index() * s + to.index()) as u16)
    }

    /// Whether this index lies in `board`'s action space (which, on a board whose points are
    /// not a multiple of 8, also holds indices that are no action: [`Action::as_point_on`] and
    /// [`Action::as_movement_on`] both refuse those).
    #[inline]
    pub const fn is_in_range_on(self, board: &Board) -> bool {
        (self.0 as usize) < board.num_actions()
    }

    /// For a point action on `board`, its point.
    #[inline]
    pub const fn as_point_on(self, board: &Board) -> Option<Point> {
        if (self.0 as usize) < board.num_points { Point::try_index(self.0 as usize) } else { None }
    }

    /// For a move action on `board`, `(from, to)`; `None` for the indices of a move block past
    /// the board's points.
    #[inline]
    pub const fn as_movement_on(self, board: &Board) -> Option<(Point, Point)> {
        let (i, s) = (self.0 as usize, board.move_stride());
        if i < s || i >= board.num_actions() || (i - s) % s >= board.num_points {
            return None;
        }
        let m = i - s;
        Some((Point::from_index_unchecked(m / s), Point::from_index_unchecked(m % s)))
    }
}

/// Number of `u64` words in an [`ActionMask`].
pub const MASK_WORDS: usize = NUM_ACTIONS.div_ceil(64);

/// A set of actions: 600 bits packed into ten `u64` words (bit `a % 64` of word `a / 64`).
///
/// Bits 600..640 are always zero. `legal == 1` is the only mask convention in this project.
///
/// ```
/// use morris_env::{Action, ActionMask};
/// let mut m = ActionMask::EMPTY;
/// m.insert(Action(3));
/// m.insert(Action(599));
/// assert_eq!(m.count(), 2);
/// assert_eq!(m.nth(1), Some(Action(599)));
/// assert_eq!(m.iter().collect::<Vec<_>>(), vec![Action(3), Action(599)]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, bytemuck::Pod, bytemuck::Zeroable)]
// `repr(transparent)` and `Pod`: a slice of masks is a slice of words, which
// `VecEnv::packed_masks_view` shows without copying (`bytemuck::cast_slice`).
#[repr(transparent)]
pub struct ActionMask(pub [u64; MASK_WORDS]);

impl ActionMask {
    /// The empty mask (also the mask of a finished game).
    pub const EMPTY: ActionMask = ActionMask([0; MASK_WORDS]);

    /// Whether `a` is in the set. Out-of-range actions never are.
    #[inline]
    pub const fn has(&self, a: Action) -> bool {
        let i = a.0 as usize;
        i < NUM_ACTIONS && self.0[i / 64] & (1 << (i % 64)) != 0
    }

    /// Adds `a`; out-of-range actions are ignored.
    #[inline]
    pub fn insert(&mut self, a: Action) {
        let i = a.0 as usize;
        if i < NUM_ACTIONS {
            self.0[i / 64] |= 1 << (i % 64);
        }
    }

    /// Removes `a`.
    #[inline]
    pub fn remove(&mut self, a: Action) {
        let i = a.0 as usize;
        if i < NUM_ACTIONS {
            self.0[i / 64] &= !(1 << (i % 64));
        }
    }

    /// The mask whose bit `a` is bit `a % 8` of byte `a / 8` (little-endian words).
    #[inline]
    pub fn from_le_bytes(bytes: &[u8; 8 * MASK_WORDS]) -> ActionMask {
        ActionMask(std::array::from_fn(|i| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[8 * i..8 * i + 8]);
            u64::from_le_bytes(w)
        }))
    }

    /// Number of actions in the set.
    #[inline]
    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The `n`-th action in increasing order (0-based), if there are more than `n`.
    #[inline]
    pub fn nth(&self, n: u32) -> Option<Action> {
        // Branch-free over the words: random `n` would make a loop exit mispredict.
        let mut word = 0usize;
        let mut before = 0u32;
        let mut acc = 0u32;
        for &w in &self.0 {
            acc += w.count_ones();
            let passed = acc <= n;
            word += passed as usize;
            before = if passed { acc } else { before };
        }
        if word >= MASK_WORDS {
            return None;
        }
        let bit = select_in_word(self.0[word], n - before);
        Some(Action((word * 64) as u16 + bit as u16))
    }

    /// A uniformly random action from the set, or `None` if it is empty. Equivalent to
    /// `self.nth(rng.below(self.count()))`, with the word counts computed once.
    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> Option<Action> {
        let counts: [u32; MASK_WORDS] = std::array::from_fn(|i| self.0[i].count_ones());
        // Inclusive prefix sums; written as a sum of independent terms so the additions need
        // not run as one serial chain.
        let prefix: [u32; MASK_WORDS] = std::array::from_fn(|i| counts[..=i].iter().sum());
        let total = prefix[MASK_WORDS - 1];
        if total == 0 {
            return None;
        }
        let n = rng.below(total);
        // The word holding bit `n` is the number of words whose inclusive prefix is <= n.
        let word: usize = prefix.iter().map(|&p| (p <= n) as usize).sum();
        let word = word.min(MASK_WORDS - 1);
        let before = prefix[word] - counts[word];
        let bit = select_in_word(self.0[word], n - before);
        Some(Action((word * 64) as u16 + bit as u16))
    }

    /// Iterates the actions in increasing order.
    #[inline]
    pub fn iter(&self) -> ActionMaskIter {
        ActionMaskIter { words: self.0, word: 0 }
    }

    /// Writes the mask's first `out.len()` actions as bytes, 1 for legal and 0 for illegal (for
    /// tensors): 600 on the 24-point boards, a board's [`Board::num_actions`] on another.
    ///
    /// # Panics
    /// If `out` is longer than 600.
    pub fn write_u8(&self, out: &mut [u8]) {
        assert!(out.len() <= NUM_ACTIONS, "a mask row has at most {NUM_ACTIONS} entries, not {}", out.len());
        for (chunk, &w) in out.chunks_mut(64).zip(self.0.iter()) {
            for (i, o) in chunk.iter_mut().enumerate() {
                *o = ((w >> i) & 1) as u8;
            }
        }
    }

    /// Writes the mask's first `out.len()` actions as booleans, `true` for legal: 600 on the
    /// 24-point boards, a board's [`Board::num_actions`] on another (actions past the row are
    /// not written).
    ///
    /// # Panics
    /// If `out` is longer than 600.
    pub fn write_bool(&self, out: &mut [bool]) {
        assert!(out.len() <= NUM_ACTIONS, "a mask row has at most {NUM_ACTIONS} entries, not {}", out.len());
        // A fill and a store per legal action (about 20 of 600).
        out.fill(false);
        for a in self.iter() {
            if let Some(entry) = out.get_mut(a.index()) {
                *entry = true;
            }
        }
    }
}

/// `SELECT_IN_BYTE[x | k << 8]` is the position of the `k`-th set bit of byte `x` (8 if none).
const SELECT_IN_BYTE: [u8; 2048] = {
    let mut t = [8u8; 2048];
    let mut x = 0;
    while x < 256 {
        let mut k = 0;
        let mut i = 0;
        while i < 8 {
            if x & (1 << i) != 0 {
                t[x | (k << 8)] = i as u8;
                k += 1;
            }
            i += 1;
        }
        x += 1;
    }
    t
};

/// Position (0..64) of the `n`-th set bit of `w`; `n < w.count_ones()`. With BMI2 (enabled by
/// the workspace's `x86-64-v3` target), one `pdep` deposits a single bit at that position.
#[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
#[inline]
fn select_in_word(w: u64, n: u32) -> u32 {
    // SAFETY: `_pdep_u64` only requires the CPU to support BMI2. This function is compiled only
    // when `target_feature = "bmi2"` is enabled for the whole build, in which case the compiler
    // may already emit BMI2 instructions anywhere in the program, so the binary cannot run on a
    // CPU without BMI2; the call adds no requirement. It has no memory effects.
    let deposited = unsafe { std::arch::x86_64::_pdep_u64(1u64 << (n & 63), w) };
    deposited.trailing_zeros()
}

/// Position (0..64) of the `n`-th set bit of `w`; `n < w.count_ones()`. Branch-free broadword
/// selection (S. Vigna, "Broadword implementation of rank/select queries", 2008): byte-wise
/// prefix popcounts locate the byte, and a table selects within it.
#[cfg(not(all(target_arch = "x86_64", target_feature = "bmi2")))]
#[inline]
fn select_in_word(w: u64, n: u32) -> u32 {
    select_in_word_broadword(w, n)
}

#[cfg_attr(all(target_arch = "x86_64", target_feature = "bmi2"), allow(dead_code))]
#[inline]
fn select_in_word_broadword(w: u64, n: u32) -> u32 {
    const L8: u64 = 0x0101_0101_0101_0101;
    const H8: u64 = 0x8080_8080_8080_8080;
    let mut s = w - ((w >> 1) & 0x5555_5555_5555_5555);
    s = (s & 0x3333_3333_3333_3333) + ((s >> 2) & 0x3333_3333_3333_3333);
    s = (s + (s >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte i holds the number of set bits in bytes 0..=i (at most 64, so the top bit is free).
    let byte_sums = s.wrapping_mul(L8);
    let n8 = (n as u64 & 63).wrapping_mul(L8);
    // Byte i has its top bit set when byte_sums[i] <= n, i.e. the bit lies above byte i.
    let below = ((n8 | H8).wrapping_sub(byte_sums)) & H8;
    let place = below.count_ones() * 8;
    let rank_in_byte = n as u64 - (((byte_sums << 8) >> place) & 0xff);
    let byte = (w >> place) & 0xff;
    place + SELECT_IN_BYTE[(byte | (rank_in_byte & 7) << 8) as usize] as u32
}

impl fmt::Debug for ActionMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(|a| a.0)).finish()
    }
}

impl FromIterator<Action> for ActionMask {
    fn from_iter<I: IntoIterator<Item = Action>>(iter: I) -> ActionMask {
        let mut m = ActionMask::EMPTY;
        for a in iter {
            m.insert(a);
        }
        m
    }
}

impl IntoIterator for &ActionMask {
    type Item = Action;
    type IntoIter = ActionMaskIter;
    fn into_iter(self) -> ActionMaskIter {
        self.iter()
    }
}

/// Iterator over an [`ActionMask`], in increasing order.
#[derive(Clone, Debug)]
pub struct ActionMaskIter {
    words: [u64; MASK_WORDS],
    word: usize,
}

impl Iterator for ActionMaskIter {
    type Item = Action;
    #[inline]
    fn next(&mut self) -> Option<Action> {
        while self.word < MASK_WORDS {
            let w = self.words[self.word];
            if w != 0 {
                self.words[self.word] = w & (w - 1);
                return Some(Action((self.word * 64) as u16 + w.trailing_zeros() as u16));
            }
            self.word += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::Move;

    #[test]
    fn actions_on_a_board_use_its_own_points() {
        use crate::board::{NINE, SIX};
        for a in 0..NUM_ACTIONS as u16 {
            let a = Action(a);
            assert_eq!((a.as_point_on(&NINE), a.as_movement_on(&NINE)), (a.as_point(), a.as_movement()));
        }
        let p = |i| Point::try_index(i).unwrap();
        assert_eq!(Action::movement_on(&SIX, p(0), p(1)), Action(17));
        assert_eq!(Action(17).as_movement_on(&SIX), Some((p(0), p(1))));
        assert_eq!(Action(271).as_movement_on(&SIX), Some((p(15), p(15))));
        assert_eq!(Action(15).as_point_on(&SIX), Some(p(15)));
        assert_eq!((Action(16).as_point_on(&SIX), Action(272).as_movement_on(&SIX)), (None, None));
        assert!(Action(271).is_in_range_on(&SIX) && !Action(272).is_in_range_on(&SIX));
    }

    #[test]
    fn action_index_round_trips() {
        for i in 0..NUM_ACTIONS {
            let a = Action(i as u16);
            let m = Move::from_action(a, false).unwrap();
            assert_eq!(m.to_action(), a);
            if let Some((f, t)) = a.as_movement() {
                assert_eq!(Action::movement(f, t), a);
            }
        }
        assert_eq!(Move::from_action(Action(600), false), None);
        assert_eq!(Action::movement(Point::ALL[1], Point::ALL[4]).0, 24 + 24 + 4);
    }

    #[test]
    fn nth_and_iter_agree_with_a_plain_list() {
        let actions = [0u16, 1, 63, 64, 127, 128, 300, 511, 512, 575, 576, 599];
        let m: ActionMask = actions.iter().map(|&a| Action(a)).collect();
        assert_eq!(m.count(), actions.len() as u32);
        for (n, &a) in actions.iter().enumerate() {
            assert_eq!(m.nth(n as u32), Some(Action(a)));
        }
        assert_eq!(m.nth(actions.len() as u32), None);
        assert_eq!(m.iter().map(|a| a.0).collect::<Vec<_>>(), actions);
        let mut bytes = [0u8; NUM_ACTIONS];
        m.write_u8(&mut bytes);
        for (i, &b) in bytes.iter().enumerate() {
            assert_eq!(b == 1, m.has(Action(i as u16)));
        }
    }

    #[test]
    fn select_in_word_matches_naive() {
        for w in [1u64, u64::MAX, 0x8000_0000_0000_0001, 0xdead_beef_cafe_f00d, 0xf0f0] {
            let naive: Vec<u32> = (0..64).filter(|i| w >> i & 1 == 1).collect();
            for (n, &pos) in naive.iter().enumerate() {
                assert_eq!(select_in_word(w, n as u32), pos);
                assert_eq!(select_in_word_broadword(w, n as u32), pos);
            }
        }
    }

    #[test]
    fn from_le_bytes_maps_bit_a_to_byte_a_div_8() {
        for a in [0usize, 7, 8, 63, 64, 300, 599] {
            let mut bytes = [0u8; 8 * MASK_WORDS];
            bytes[a / 8] = 1 << (a % 8);
            let m = ActionMask::from_le_bytes(&bytes);
            assert_eq!(m.iter().collect::<Vec<_>>(), vec![Action(a as u16)]);
        }
    }
}
