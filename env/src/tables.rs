//! The boards' geometry as compile-time tables: nine men's morris's as public views of [`NINE`] (the 16 mills, adjacency), and each variant's lookup tables for set-wide neighbour queries and move generation behind [`Spec`].

use crate::board::{Board, MAX_POINTS, NINE, NINE_MILLS, SIX, THREE, TWELVE};
use crate::rules::Variant;
use crate::types::{BitBoard, NUM_POINTS, Point};

/// The 16 mills as point triples, each listed along its line (the middle point in the middle).
pub const MILL_LINES: [[u8; 3]; 16] = NINE_MILLS;

/// The 16 mills as point sets.
pub const MILLS: [BitBoard; 16] = {
    let mut out = [BitBoard::EMPTY; 16];
    let mut i = 0;
    while i < 16 {
        out[i] = NINE.mills[i];
        i += 1;
    }
    out
};

/// For each point, the two mills through it.
pub const MILLS_THROUGH: [[BitBoard; 2]; NUM_POINTS] = {
    let mut out = [[BitBoard::EMPTY; 2]; NUM_POINTS];
    let mut p = 0;
    while p < NUM_POINTS {
        out[p] = [NINE.mills_through[p][0], NINE.mills_through[p][1]];
        p += 1;
    }
    out
};

/// Neighbours of each point along the drawn lines. The lines of the board are exactly
/// the consecutive pairs of the 16 mills, so adjacency is derived from them: 32 edges.
pub const ADJACENT: [BitBoard; NUM_POINTS] = NINE.adjacent;

/// `table[k][x]` is the union of the neighbours on `board` of the points `8k + i` for each bit
/// `i` set in `x`. Three lookups give the neighbourhood of any set (see [`neighbours`]).
const fn neighbours_by_byte(board: &Board) -> [[u32; 256]; 3] {
    let mut out = [[0u32; 256]; 3];
    let mut k = 0;
    while k < 3 {
        let mut x = 0;
        while x < 256 {
            let mut acc = 0u32;
            let mut i = 0;
            while i < 8 && 8 * k + i < MAX_POINTS {
                if x & (1 << i) != 0 {
                    acc |= board.adjacent[8 * k + i].0;
                }
                i += 1;
            }
            out[k][x] = acc;
            x += 1;
        }
        k += 1;
    }
    out
}

/// Nine's neighbour table ([`neighbours_by_byte`]).
const NEIGHBOURS_BY_BYTE: [[u32; 256]; 3] = neighbours_by_byte(&NINE);

/// The points adjacent to at least one point of `set`, by a [`neighbours_by_byte`] table.
#[inline(always)]
fn neighbours_by(table: &[[u32; 256]; 3], set: BitBoard) -> BitBoard {
    let x = set.0 as usize;
    BitBoard(table[0][x & 0xff] | table[1][(x >> 8) & 0xff] | table[2][(x >> 16) & 0xff])
}

/// All points adjacent to at least one point of `set` on the nine men's morris board.
#[inline]
pub fn neighbours(set: BitBoard) -> BitBoard {
    neighbours_by(&NEIGHBOURS_BY_BYTE, set)
}

/// The points of `pieces` that stand in one of `mills` made entirely of `pieces`.
#[inline(always)]
fn pieces_in(mills: &[BitBoard], pieces: BitBoard) -> BitBoard {
    let mut acc = 0u32;
    for mill in mills {
        // Branch-free: `mask` is all ones when the mill is complete.
        let mask = (((pieces.0 & mill.0) == mill.0) as u32).wrapping_neg();
        acc |= mill.0 & mask;
    }
    BitBoard(acc)
}

/// The points of `pieces` that stand in a mill (of nine's board) made entirely of `pieces`.
#[inline]
pub fn pieces_in_mills(pieces: BitBoard) -> BitBoard {
    pieces_in(&MILLS, pieces)
}

/// Whether `pieces` (which must contain `p`) forms a mill (of nine's board) through `p`.
#[inline]
pub fn closes_mill(pieces: BitBoard, p: Point) -> bool {
    let [m0, m1] = MILLS_THROUGH[p.index()];
    pieces.contains(m0) || pieces.contains(m1)
}

/// Slide targets of each point of `board`, indexed by `trailing_zeros` (so entries past the
/// board's points, up to 32, are empty).
const fn slide_targets(board: &Board) -> [u32; 33] {
    let mut t = [0u32; 33];
    let mut i = 0;
    while i < board.num_points {
        t[i] = board.adjacent[i].0;
        i += 1;
    }
    t
}

/// Nine's slide targets ([`slide_targets`]).
pub(crate) const SLIDE_TARGETS: [u32; 33] = slide_targets(&NINE);

/// First byte of the move actions of each point of `board` (`(S + S·from) / 8`, `S` its
/// [`Board::move_stride`], so `3 + 3·from` on the 24-point boards and `2 + 2·from` on six's and
/// three's), indexed like [`slide_targets`]; the entries past the board's points give the first
/// byte after its last action. The stride makes every point's move chunk whole bytes.
const fn chunk_bytes(board: &Board) -> [u8; 33] {
    let s = board.move_stride();
    assert!(s.is_multiple_of(8), "move chunks are whole bytes");
    let mut t = [board.num_actions().div_ceil(8) as u8; 33];
    let mut i = 0;
    while i < board.num_points {
        t[i] = ((s + s * i) / 8) as u8;
        i += 1;
    }
    t
}

/// Nine's chunk bytes ([`chunk_bytes`]): `3 + 3·from`, entries 24..=32 pointing at the unused
/// bytes after action 599.
pub(crate) const CHUNK_BYTE: [u8; 33] = chunk_bytes(&NINE);

/// Fly targets (every point of `board`) of each of its points, indexed like [`slide_targets`].
const fn fly_targets(board: &Board) -> [u32; 33] {
    let mut t = [0u32; 33];
    let mut i = 0;
    while i < board.num_points {
        t[i] = board.full.0;
        i += 1;
    }
    t
}

/// Nine's fly targets ([`fly_targets`]).
pub(crate) const FLY_TARGETS: [u32; 33] = fly_targets(&NINE);

/// What the move generator reads of a variant's board: its slide and fly targets, and where
/// each point's moves start in a mask.
pub(crate) struct MoveTables {
    /// Slide targets ([`slide_targets`]).
    pub(crate) slide: &'static [u32; 33],
    /// Fly targets ([`fly_targets`]).
    pub(crate) fly: &'static [u32; 33],
    /// First byte of each point's moves ([`chunk_bytes`]).
    pub(crate) chunk: &'static [u8; 33],
}

impl MoveTables {
    /// The most pieces a player of any variant can have on the board (twelve's 12): the loop
    /// count of a generator shared by several variants.
    pub(crate) const MOST_PIECES: u8 = {
        let mut most = Variant::Six.pieces();
        let mut i = 0;
        while i < Variant::ALL.len() {
            if Variant::ALL[i].pieces() > most {
                most = Variant::ALL[i].pieces();
            }
            i += 1;
        }
        most
    };

    /// The tables of `variant`.
    pub(crate) const fn of(variant: Variant) -> &'static MoveTables {
        with_spec!(variant, S => &S::MOVES)
    }
}

/// One variant's rules as compile-time constants, so that what the rules' hot paths read of a
/// board ([`Position`](crate::Position)'s move generator, its mill test, its "pieces in mills"
/// and neighbour sets) is compiled once per variant with its tables at fixed addresses and its
/// loop bounds known, as they were when nine men's morris was the only game. An implementation
/// names its variant and its four lookup tables; the rest follows from [`Variant::board`] and
/// [`Variant::pieces`].
pub(crate) trait Spec {
    /// The variant.
    const VARIANT: Variant;
    /// Neighbours along the lines ([`neighbours_by_byte`]).
    const NEIGHBOURS: &'static [[u32; 256]; 3];
    /// Slide targets ([`slide_targets`]).
    const SLIDE: &'static [u32; 33];
    /// Fly targets ([`fly_targets`]).
    const FLY: &'static [u32; 33];
    /// First byte of each point's move actions in a mask ([`chunk_bytes`]).
    const CHUNK: &'static [u8; 33];
    /// The move generator's tables.
    const MOVES: MoveTables = MoveTables { slide: Self::SLIDE, fly: Self::FLY, chunk: Self::CHUNK };
    /// The variant's board.
    const BOARD: &'static Board = Self::VARIANT.board();
    /// Pieces each player starts with in hand (the bound of the move generator's loop for
    /// nine and Lasker, whose generators are compiled with their tables; the shared one loops
    /// [`MoveTables::MOST_PIECES`] times).
    const PIECES: u8 = Self::VARIANT.pieces();
    /// The board's mills.
    const MILLS: &'static [BitBoard] = Self::BOARD.mills();
    /// The neighbours of each point along the lines.
    const ADJACENT: &'static [BitBoard; MAX_POINTS] = &Self::BOARD.adjacent;
    /// The most removals one move earns ([`Variant::max_removals`]; 0 in three men's morris).
    const MAX_REMOVALS: u8 = Self::VARIANT.max_removals();

    /// All points adjacent to at least one point of `set`.
    #[inline(always)]
    fn neighbours(set: BitBoard) -> BitBoard {
        neighbours_by(Self::NEIGHBOURS, set)
    }

    /// The points of `pieces` that stand in a mill made entirely of `pieces`.
    #[inline(always)]
    fn pieces_in_mills(pieces: BitBoard) -> BitBoard {
        pieces_in(Self::MILLS, pieces)
    }

    /// The mills through `p`: the board's most mills through a point, padded with
    /// [`crate::board::NO_MILL`] where `p` is on fewer.
    #[inline(always)]
    fn mills_through(p: usize) -> &'static [BitBoard] {
        &Self::BOARD.mills_through[p][..Self::BOARD.mills_per_point]
    }

    /// Whether `pieces` (which must contain `p`) forms a mill through `p` (branch-free).
    #[inline(always)]
    fn closes_mill(pieces: BitBoard, p: usize) -> bool {
        Self::mills_through(p).iter().fold(false, |closes, &m| closes | pieces.contains(m))
    }

    /// The removals a piece arriving on `p` earns for `pieces` (which hold it): whether it
    /// closes a mill, or where a move earns more than one, the mills it closes, up to
    /// [`Spec::MAX_REMOVALS`].
    #[inline(always)]
    fn removals_earned(pieces: BitBoard, p: usize) -> u8 {
        if Self::MAX_REMOVALS == 0 {
            return 0;
        }
        if Self::MAX_REMOVALS == 1 {
            return Self::closes_mill(pieces, p) as u8;
        }
        let closed = Self::mills_through(p).iter().map(|&m| pieces.contains(m) as u8).sum::<u8>();
        closed.min(Self::MAX_REMOVALS)
    }
}

/// Nine men's morris's [`Spec`]: the tables the crate always had.
pub(crate) struct NineSpec;

impl Spec for NineSpec {
    const VARIANT: Variant = Variant::Nine;
    const NEIGHBOURS: &'static [[u32; 256]; 3] = &NEIGHBOURS_BY_BYTE;
    const SLIDE: &'static [u32; 33] = &SLIDE_TARGETS;
    const FLY: &'static [u32; 33] = &FLY_TARGETS;
    const CHUNK: &'static [u8; 33] = &CHUNK_BYTE;
}

/// Lasker morris's [`Spec`]: nine's tables, and up to 10 pieces on the board.
pub(crate) struct LaskerSpec;

impl Spec for LaskerSpec {
    const VARIANT: Variant = Variant::Lasker;
    const NEIGHBOURS: &'static [[u32; 256]; 3] = NineSpec::NEIGHBOURS;
    const SLIDE: &'static [u32; 33] = NineSpec::SLIDE;
    const FLY: &'static [u32; 33] = NineSpec::FLY;
    const CHUNK: &'static [u8; 33] = NineSpec::CHUNK;
}

/// Twelve men's morris's [`Spec`].
pub(crate) struct TwelveSpec;

impl Spec for TwelveSpec {
    const VARIANT: Variant = Variant::Twelve;
    const NEIGHBOURS: &'static [[u32; 256]; 3] = &neighbours_by_byte(&TWELVE);
    const SLIDE: &'static [u32; 33] = &slide_targets(&TWELVE);
    const FLY: &'static [u32; 33] = NineSpec::FLY;
    const CHUNK: &'static [u8; 33] = NineSpec::CHUNK;
}

/// Morabaraba's [`Spec`]: twelve's tables, two removals for a double mill.
pub(crate) struct MorabarabaSpec;

impl Spec for MorabarabaSpec {
    const VARIANT: Variant = Variant::Morabaraba;
    const NEIGHBOURS: &'static [[u32; 256]; 3] = TwelveSpec::NEIGHBOURS;
    const SLIDE: &'static [u32; 33] = TwelveSpec::SLIDE;
    const FLY: &'static [u32; 33] = NineSpec::FLY;
    const CHUNK: &'static [u8; 33] = NineSpec::CHUNK;
}

/// Six men's morris's [`Spec`]: 16 points, so two bytes of mask per point's moves.
pub(crate) struct SixSpec;

impl Spec for SixSpec {
    const VARIANT: Variant = Variant::Six;
    const NEIGHBOURS: &'static [[u32; 256]; 3] = &neighbours_by_byte(&SIX);
    const SLIDE: &'static [u32; 33] = &slide_targets(&SIX);
    const FLY: &'static [u32; 33] = &fly_targets(&SIX);
    const CHUNK: &'static [u8; 33] = &chunk_bytes(&SIX);
}

/// Three men's morris's [`Spec`]: 9 points, whose moves are numbered in blocks of 16 (two
/// bytes of mask per point, as six's), and no removals (a line of three wins).
pub(crate) struct ThreeSpec;

impl Spec for ThreeSpec {
    const VARIANT: Variant = Variant::Three;
    const NEIGHBOURS: &'static [[u32; 256]; 3] = &neighbours_by_byte(&THREE);
    const SLIDE: &'static [u32; 33] = &slide_targets(&THREE);
    const FLY: &'static [u32; 33] = &fly_targets(&THREE);
    const CHUNK: &'static [u8; 33] = &chunk_bytes(&THREE);
}

/// `$body` with the type `$S` standing for the [`Spec`] of `$variant` (a [`Variant`]), every
/// variant's instance inline: the one list of which `Spec` plays which variant.
macro_rules! with_spec {
    ($variant:expr, $S:ident => $body:expr) => {
        match $variant {
            $crate::rules::Variant::Nine => {
                type $S = $crate::tables::NineSpec;
                $body
            }
            $crate::rules::Variant::Twelve => {
                type $S = $crate::tables::TwelveSpec;
                $body
            }
            $crate::rules::Variant::Morabaraba => {
                type $S = $crate::tables::MorabarabaSpec;
                $body
            }
            $crate::rules::Variant::Lasker => {
                type $S = $crate::tables::LaskerSpec;
                $body
            }
            $crate::rules::Variant::Six => {
                type $S = $crate::tables::SixSpec;
                $body
            }
            $crate::rules::Variant::Three => {
                type $S = $crate::tables::ThreeSpec;
                $body
            }
        }
    };
}
pub(crate) use with_spec;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacency_has_32_edges_and_degrees_2_to_4() {
        let degree_sum: u32 = ADJACENT.iter().map(|a| a.count()).sum();
        assert_eq!(degree_sum, 64);
        for a in ADJACENT {
            assert!((2..=4).contains(&a.count()));
        }
    }

    #[test]
    fn adjacency_matches_the_diagram() {
        // Every edge named in rules.md, plus the full list read off the diagram.
        let edges: [(u8, u8); 32] = [
            (0, 1),
            (1, 2),
            (3, 4),
            (4, 5),
            (6, 7),
            (7, 8),
            (9, 10),
            (10, 11),
            (12, 13),
            (13, 14),
            (15, 16),
            (16, 17),
            (18, 19),
            (19, 20),
            (21, 22),
            (22, 23),
            (0, 9),
            (9, 21),
            (3, 10),
            (10, 18),
            (6, 11),
            (11, 15),
            (1, 4),
            (4, 7),
            (16, 19),
            (19, 22),
            (8, 12),
            (12, 17),
            (5, 13),
            (13, 20),
            (2, 14),
            (14, 23),
        ];
        let mut expect = [0u32; 24];
        for (a, b) in edges {
            expect[a as usize] |= 1 << b;
            expect[b as usize] |= 1 << a;
        }
        for p in 0..24 {
            assert_eq!(ADJACENT[p].0, expect[p], "point {p}");
        }
        let m = NINE.adjacency_matrix();
        for p in 0..24 {
            for q in 0..24 {
                assert_eq!(m[p * 24 + q], m[q * 24 + p]);
                assert_eq!(m[p * 24 + q] == 1.0, ADJACENT[p].has(Point::ALL[q]));
            }
        }
    }

    #[test]
    fn every_point_is_in_two_mills() {
        for p in Point::ALL {
            let [a, b] = MILLS_THROUGH[p.index()];
            assert!(a.has(p) && b.has(p) && a != b);
        }
    }

    #[test]
    fn neighbours_equals_union_of_adjacent() {
        for x in [0u32, 1, 0xff_ffff, 0x12_3456, 0xa5_a5a5, 1 << 23] {
            let slow = BitBoard(x).iter().fold(BitBoard::EMPTY, |acc, p| acc | ADJACENT[p.index()]);
            assert_eq!(neighbours(BitBoard(x)), slow);
        }
    }

    #[test]
    fn pieces_in_mills_finds_only_complete_mills() {
        let set = BitBoard((1 << 0) | (1 << 1) | (1 << 2) | (1 << 9));
        assert_eq!(pieces_in_mills(set), BitBoard(0b111));
        assert!(closes_mill(set, Point::ALL[1]));
        assert!(!closes_mill(set, Point::ALL[9]));
    }
}
