//! Small `Copy` value types of the game: [`Color`], [`Point`] and [`BitBoard`].

use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not, Sub};

use serde::{Deserialize, Serialize};

/// Number of points on the board.
pub const NUM_POINTS: usize = 24;

/// A player. White (player 0) moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum Color {
    /// Player 0, who starts.
    White = 0,
    /// Player 1.
    Black = 1,
}

impl Color {
    /// Number of players.
    pub const NUM: usize = 2;
    /// Both players, in index order.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// The player index, 0 for White and 1 for Black (OpenSpiel's player ids).
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The colour with index `i`, if `i` is 0 or 1.
    #[inline]
    pub const fn try_index(i: usize) -> Option<Color> {
        match i {
            0 => Some(Color::White),
            1 => Some(Color::Black),
            _ => None,
        }
    }

    /// The other player.
    #[inline]
    pub const fn opponent(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// The name used in text output: `"White"` or `"Black"`.
    pub const fn name(self) -> &'static str {
        match self {
            Color::White => "White",
            Color::Black => "Black",
        }
    }

    /// The board symbol: `'W'` or `'B'`.
    pub const fn symbol(self) -> char {
        match self {
            Color::White => 'W',
            Color::Black => 'B',
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        self.opponent()
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Standard coordinate names of the points, in OpenSpiel's numbering (row by row from the top
/// left): the nine board's names ([`crate::board::NINE`] is built from them).
pub(crate) const POINT_NAMES: [&str; NUM_POINTS] = [
    "a7", "d7", "g7", "b6", "d6", "f6", "c5", "d5", "e5", "a4", "b4", "c4", "e4", "f4", "g4", "c3", "d3",
    "e3", "b2", "d2", "f2", "a1", "d1", "g1",
];

/// One of the 24 points of the board, numbered as in OpenSpiel (0 = a7 … 23 = g1).
///
/// ```
/// use morris_env::Point;
/// let p: Point = "d6".parse().unwrap();
/// assert_eq!(p.index(), 4);
/// assert_eq!(p.to_string(), "d6");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point(u8);

impl Point {
    /// Number of points.
    pub const NUM: usize = NUM_POINTS;
    /// All points in index order.
    pub const ALL: [Point; NUM_POINTS] = {
        let mut out = [Point(0); NUM_POINTS];
        let mut i = 0;
        while i < NUM_POINTS {
            out[i] = Point(i as u8);
            i += 1;
        }
        out
    };

    /// The point with index `i`, if `i < 24`.
    #[inline]
    pub const fn try_index(i: usize) -> Option<Point> {
        if i < NUM_POINTS { Some(Point(i as u8)) } else { None }
    }

    /// The point with index `i`; the caller guarantees `i < 24` (checked in debug builds).
    #[inline]
    pub(crate) const fn from_index_unchecked(i: usize) -> Point {
        debug_assert!(i < NUM_POINTS);
        Point(i as u8)
    }

    /// The index, 0..24.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The standard coordinate name, such as `"d6"`.
    pub const fn name(self) -> &'static str {
        POINT_NAMES[self.0 as usize]
    }

    /// The point with the given coordinate name, such as `"d6"`.
    pub fn from_name(name: &str) -> Option<Point> {
        POINT_NAMES.iter().position(|n| n.eq_ignore_ascii_case(name)).map(|i| Point(i as u8))
    }

    /// `(file, rank)`, 0-based: a1 is `(0, 0)` and g7 is `(6, 6)`.
    pub const fn coords(self) -> (u8, u8) {
        let name = POINT_NAMES[self.0 as usize].as_bytes();
        (name[0] - b'a', name[1] - b'1')
    }

    /// This point as a one-point set.
    #[inline]
    pub const fn bit(self) -> BitBoard {
        BitBoard(1 << self.0)
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of points, one bit per point index (bits 24..32 are always zero).
///
/// ```
/// use morris_env::{BitBoard, Point};
/// let set = BitBoard::from_names(&["a7", "d7", "g7"]).unwrap();
/// assert_eq!(set.count(), 3);
/// assert!(set.has(Point::try_index(1).unwrap()));
/// assert_eq!(!set & set, BitBoard::EMPTY);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BitBoard(pub u32);

impl BitBoard {
    /// The empty set.
    pub const EMPTY: BitBoard = BitBoard(0);
    /// All 24 points.
    pub const FULL: BitBoard = BitBoard((1 << NUM_POINTS) - 1);

    /// Whether the set holds `p`.
    #[inline]
    pub const fn has(self, p: Point) -> bool {
        self.0 & (1 << p.0) != 0
    }

    /// Number of points in the set.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every point of `other` is in `self`.
    #[inline]
    pub const fn contains(self, other: BitBoard) -> bool {
        self.0 & other.0 == other.0
    }

    /// The lowest-numbered point, if any.
    #[inline]
    pub const fn first(self) -> Option<Point> {
        if self.0 == 0 { None } else { Some(Point(self.0.trailing_zeros() as u8)) }
    }

    /// Iterates the points in increasing index order.
    #[inline]
    pub fn iter(self) -> BitBoardIter {
        BitBoardIter(self.0)
    }
}

/// Iterator over the points of a [`BitBoard`], lowest index first.
#[derive(Clone, Debug)]
pub struct BitBoardIter(u32);

impl Iterator for BitBoardIter {
    type Item = Point;
    #[inline]
    fn next(&mut self) -> Option<Point> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(Point(i as u8))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for BitBoardIter {}

impl IntoIterator for BitBoard {
    type Item = Point;
    type IntoIter = BitBoardIter;
    fn into_iter(self) -> BitBoardIter {
        self.iter()
    }
}

impl BitOr for BitBoard {
    type Output = BitBoard;
    #[inline]
    fn bitor(self, rhs: BitBoard) -> BitBoard {
        BitBoard(self.0 | rhs.0)
    }
}
impl BitOrAssign for BitBoard {
    #[inline]
    fn bitor_assign(&mut self, rhs: BitBoard) {
        self.0 |= rhs.0;
    }
}
impl BitAnd for BitBoard {
    type Output = BitBoard;
    #[inline]
    fn bitand(self, rhs: BitBoard) -> BitBoard {
        BitBoard(self.0 & rhs.0)
    }
}
impl BitAndAssign for BitBoard {
    #[inline]
    fn bitand_assign(&mut self, rhs: BitBoard) {
        self.0 &= rhs.0;
    }
}
impl BitXor for BitBoard {
    type Output = BitBoard;
    #[inline]
    fn bitxor(self, rhs: BitBoard) -> BitBoard {
        BitBoard(self.0 ^ rhs.0)
    }
}
impl BitXorAssign for BitBoard {
    #[inline]
    fn bitxor_assign(&mut self, rhs: BitBoard) {
        self.0 ^= rhs.0;
    }
}
/// Set difference: the points of `self` that are not in `rhs`.
impl Sub for BitBoard {
    type Output = BitBoard;
    #[inline]
    fn sub(self, rhs: BitBoard) -> BitBoard {
        BitBoard(self.0 & !rhs.0)
    }
}
/// Complement within the 24 points.
impl Not for BitBoard {
    type Output = BitBoard;
    #[inline]
    fn not(self) -> BitBoard {
        BitBoard(!self.0 & BitBoard::FULL.0)
    }
}
