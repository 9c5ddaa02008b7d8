//! Board geometries as data: a morris board is its points' names, its mills and its drawn lines, and every table the rules use (adjacency, mills through a point, symmetries) is derived from those at compile time.
//!
//! The nine men's morris board ([`NINE`]), twelve's ([`TWELVE`], nine's with the diagonals),
//! six's ([`SIX`], two squares) and three's ([`THREE`], the 3 × 3 grid) exist so far; the crate's nine-only code reads nine's tables through [`crate::tables`],
//! [`crate::Point`] and [`crate::Symmetry`], and the rules read a variant's board through
//! [`crate::Variant::board`]. The other boards of the morris family
//! (docs/plans/morris-family.md) are further constants of the same type.

use crate::types::{BitBoard, NUM_POINTS, POINT_NAMES};

/// The most points a board has (the 24-point boards).
pub const MAX_POINTS: usize = NUM_POINTS;
/// The most mills a board has (twelve men's morris: 16 plus 4 diagonals).
pub const MAX_MILLS: usize = 20;
/// The most mills through one point (the centre of three men's morris lies on 4 lines).
pub const MAX_MILLS_THROUGH: usize = 4;
/// The most symmetries a board has.
pub const MAX_SYMMETRIES: usize = 16;

/// A set no position can hold (bit 31 is beyond every board): the padding of
/// [`Board::mills_through`], so that a test "is this mill complete" on it is always false.
pub const NO_MILL: BitBoard = BitBoard(1 << 31);

/// A board: its points, mills and lines, and the tables derived from them.
///
/// Points are numbered row by row from the top left (OpenSpiel's order on the nine board), and
/// named by file letter and rank digit on a `grid × grid` lattice (`a7` is the top left of a
/// 7 × 7 one). A drawn line joins two consecutive points of a mill, or is one of
/// [`Board::extra_edges`] (lines that are in no mill).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    /// The board's name, e.g. `"nine"`.
    pub name: &'static str,
    /// Number of points.
    pub num_points: usize,
    /// Side of the lattice the points lie on (7 for the 24-point boards).
    pub grid: i8,
    /// Each point's name, e.g. `"d6"`.
    pub names: &'static [&'static str],
    /// Each mill's three points, listed along its line (the middle point in the middle).
    pub mill_lines: &'static [[u8; 3]],
    /// Drawn lines that are in no mill.
    pub extra_edges: &'static [(u8, u8)],
    /// `(file, rank)` of each point, both from 0 (`a1` is `(0, 0)`); unused entries are `(0, 0)`.
    pub coords: [(i8, i8); MAX_POINTS],
    /// Every point of the board.
    pub full: BitBoard,
    /// Each mill as a set; the first [`Board::num_mills`] entries are used.
    pub mills: [BitBoard; MAX_MILLS],
    /// Number of mills.
    pub num_mills: usize,
    /// The neighbours of each point along the drawn lines.
    pub adjacent: [BitBoard; MAX_POINTS],
    /// The mills through each point, padded with [`NO_MILL`].
    pub mills_through: [[BitBoard; MAX_MILLS_THROUGH]; MAX_POINTS],
    /// The most mills through any one point.
    pub mills_per_point: usize,
    /// `symmetries[s][p]` is the image of point `p` under symmetry `s`; the first
    /// [`Board::num_symmetries`] are used, and symmetry 0 is the identity.
    pub symmetries: [[u8; MAX_POINTS]; MAX_SYMMETRIES],
    /// Number of symmetries: the maps of the lattice (see [`Board::new`]) that keep every mill a
    /// mill and every line a line.
    pub num_symmetries: usize,
}

impl Board {
    /// Derives a board's tables from its names, mills and extra lines.
    ///
    /// The symmetries are tried in a fixed order, and each one that is a permutation of the
    /// points mapping mills to mills and lines to lines, and differs from those kept before it,
    /// is kept: symmetry `s` (0..16) reflects left–right if `s & 4`, then rotates by
    /// `(s & 3) × 90°` anticlockwise about the centre, then, if `s & 8`, swaps the squares
    /// (ring `r`, at distance `r` from the centre, goes to ring `c + 1 − r`, where `c` is the
    /// outermost ring; the centre point stays).
    ///
    /// # Panics
    /// At compile time, for inconsistent data: a lattice of even side (no centre), a name off
    /// the lattice or given twice, too many points, mills or mills through a point, a mill or
    /// line naming a point that does not exist.
    pub const fn new(
        name: &'static str,
        grid: i8,
        names: &'static [&'static str],
        mill_lines: &'static [[u8; 3]],
        extra_edges: &'static [(u8, u8)],
    ) -> Board {
        let n = names.len();
        assert!(n <= MAX_POINTS && mill_lines.len() <= MAX_MILLS);
        assert!(grid % 2 == 1, "the lattice has a centre point");
        let mut coords = [(0i8, 0i8); MAX_POINTS];
        let mut i = 0;
        while i < n {
            let b = names[i].as_bytes();
            assert!(b.len() == 2);
            let (f, r) = ((b[0] - b'a') as i8, (b[1] - b'1') as i8);
            assert!(f >= 0 && f < grid && r >= 0 && r < grid, "a point off the lattice");
            coords[i] = (f, r);
            let mut j = 0;
            while j < i {
                assert!(coords[j].0 != f || coords[j].1 != r, "two points with one name");
                j += 1;
            }
            i += 1;
        }
        let full = BitBoard(((1u64 << n) - 1) as u32);

        let mut mills = [BitBoard::EMPTY; MAX_MILLS];
        let mut adjacent = [BitBoard::EMPTY; MAX_POINTS];
        let mut mills_through = [[NO_MILL; MAX_MILLS_THROUGH]; MAX_POINTS];
        let mut through = [0usize; MAX_POINTS];
        let mut m = 0;
        while m < mill_lines.len() {
            let [a, b, c] = mill_lines[m];
            let (a, b, c) = (a as usize, b as usize, c as usize);
            assert!(a < n && b < n && c < n, "a mill off the board");
            mills[m] = BitBoard((1 << a) | (1 << b) | (1 << c));
            adjacent[a].0 |= 1 << b;
            adjacent[b].0 |= (1 << a) | (1 << c);
            adjacent[c].0 |= 1 << b;
            let pts = [a, b, c];
            let mut k = 0;
            while k < 3 {
                let p = pts[k];
                assert!(through[p] < MAX_MILLS_THROUGH, "too many mills through a point");
                mills_through[p][through[p]] = mills[m];
                through[p] += 1;
                k += 1;
            }
            m += 1;
        }
        let mut e = 0;
        while e < extra_edges.len() {
            let (a, b) = (extra_edges[e].0 as usize, extra_edges[e].1 as usize);
            assert!(a < n && b < n && a != b, "a line off the board");
            adjacent[a].0 |= 1 << b;
            adjacent[b].0 |= 1 << a;
            e += 1;
        }
        let mut mills_per_point = 0;
        let mut p = 0;
        while p < n {
            if through[p] > mills_per_point {
                mills_per_point = through[p];
            }
            p += 1;
        }

        let mut board = Board {
            name,
            num_points: n,
            grid,
            names,
            mill_lines,
            extra_edges,
            coords,
            full,
            mills,
            num_mills: mill_lines.len(),
            adjacent,
            mills_through,
            mills_per_point,
            symmetries: [[0u8; MAX_POINTS]; MAX_SYMMETRIES],
            num_symmetries: 0,
        };
        let mut s = 0;
        while s < MAX_SYMMETRIES {
            if let Some(perm) = board.lattice_map(s)
                && board.is_automorphism(&perm)
                && !board.has_symmetry(&perm)
            {
                board.symmetries[board.num_symmetries] = perm;
                board.num_symmetries += 1;
            }
            s += 1;
        }
        board
    }

    /// The point at `(file, rank)`, if there is one.
    const fn point_at(&self, f: i8, r: i8) -> Option<usize> {
        let mut q = 0;
        while q < self.num_points {
            if self.coords[q].0 == f && self.coords[q].1 == r {
                return Some(q);
            }
            q += 1;
        }
        None
    }

    /// Lattice map `s` (see [`Board::new`]) as a map of the points, if it maps points to points.
    const fn lattice_map(&self, s: usize) -> Option<[u8; MAX_POINTS]> {
        let c = (self.grid - 1) / 2;
        let mut out = [0u8; MAX_POINTS];
        let mut p = 0;
        while p < self.num_points {
            let (f, r) = self.coords[p];
            let (mut dx, mut dy) = (f - c, r - c);
            if s & 4 != 0 {
                dx = -dx;
            }
            let mut k = 0;
            while k < (s & 3) {
                let t = dx;
                dx = -dy;
                dy = t;
                k += 1;
            }
            if s & 8 != 0 {
                let ring = if dx.abs() > dy.abs() { dx.abs() } else { dy.abs() };
                if ring != 0 {
                    let to = c + 1 - ring;
                    dx = dx / ring * to;
                    dy = dy / ring * to;
                }
            }
            match self.point_at(dx + c, dy + c) {
                Some(q) => out[p] = q as u8,
                None => return None,
            }
            p += 1;
        }
        Some(out)
    }

    /// Whether `perm` is a permutation of the points that keeps mills and lines.
    const fn is_automorphism(&self, perm: &[u8; MAX_POINTS]) -> bool {
        let mut seen = 0u32;
        let mut p = 0;
        while p < self.num_points {
            seen |= 1 << perm[p];
            p += 1;
        }
        if seen != self.full.0 {
            return false;
        }
        let mut m = 0;
        while m < self.num_mills {
            let image = Self::image(perm, self.mills[m]);
            let mut found = false;
            let mut k = 0;
            while k < self.num_mills {
                found |= self.mills[k].0 == image.0;
                k += 1;
            }
            if !found {
                return false;
            }
            m += 1;
        }
        let mut p = 0;
        while p < self.num_points {
            if Self::image(perm, self.adjacent[p]).0 != self.adjacent[perm[p] as usize].0 {
                return false;
            }
            p += 1;
        }
        true
    }

    /// Whether `perm` is among the symmetries kept so far.
    const fn has_symmetry(&self, perm: &[u8; MAX_POINTS]) -> bool {
        let mut s = 0;
        while s < self.num_symmetries {
            let mut same = true;
            let mut p = 0;
            while p < self.num_points {
                same &= self.symmetries[s][p] == perm[p];
                p += 1;
            }
            if same {
                return true;
            }
            s += 1;
        }
        false
    }

    /// The image of `set` under the point map `perm`.
    const fn image(perm: &[u8; MAX_POINTS], set: BitBoard) -> BitBoard {
        let mut out = 0u32;
        let mut p = 0;
        while p < MAX_POINTS {
            if set.0 & (1 << p) != 0 {
                out |= 1 << perm[p];
            }
            p += 1;
        }
        BitBoard(out)
    }

    /// The width of a point's block of move actions: the number of points rounded up to a
    /// multiple of 8, so that each point's moves fill whole bytes of a mask (24 on the 24-point
    /// boards, 16 on six men's morris's, 16 on three men's morris's 9 points).
    pub const fn move_stride(&self) -> usize {
        self.num_points.next_multiple_of(8)
    }

    /// The size of the board's action space: `N` point actions (place or remove on a point),
    /// then a block of [`Board::move_stride`] `S` actions per point for its moves
    /// (`S + S·from + to`), `S + N·S` in all: 600 on the 24-point boards (OpenSpiel's encoding,
    /// `S = N`), 272 on six men's morris's 16 points, 160 on three men's morris's 9 (of which
    /// actions 9..16 and each block's last 7 are never legal).
    pub const fn num_actions(&self) -> usize {
        self.move_stride() * (1 + self.num_points)
    }

    /// The point named `name` (case-insensitive), if the board has one.
    pub fn point_named(&self, name: &str) -> Option<crate::Point> {
        let i = self.names.iter().position(|n| n.eq_ignore_ascii_case(name))?;
        crate::Point::try_index(i)
    }

    /// The mills, as sets.
    pub const fn mills(&self) -> &[BitBoard] {
        self.mills.split_at(self.num_mills).0
    }

    /// The symmetries, as point maps (index `s` is symmetry `s`).
    pub fn symmetries(&self) -> &[[u8; MAX_POINTS]] {
        &self.symmetries[..self.num_symmetries]
    }

    /// The `num_points × num_points` adjacency matrix, row-major, 1.0 where two points share a
    /// drawn line (for graph networks).
    pub fn adjacency_matrix(&self) -> Vec<f32> {
        let n = self.num_points;
        (0..n * n).map(|i| f32::from(u8::from(self.adjacent[i / n].0 & (1 << (i % n)) != 0))).collect()
    }

    /// The drawn lines, each once as `(a, b)` with `a < b`, in point order.
    pub fn edges(&self) -> Vec<(u8, u8)> {
        let mut out = Vec::new();
        for a in 0..self.num_points {
            for b in a + 1..self.num_points {
                if self.adjacent[a].0 & (1 << b) != 0 {
                    out.push((a as u8, b as u8));
                }
            }
        }
        out
    }
}

/// The 16 mills of the nine men's morris board: the eight rows, then the eight columns.
pub(crate) const NINE_MILLS: [[u8; 3]; 16] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [9, 10, 11],
    [12, 13, 14],
    [15, 16, 17],
    [18, 19, 20],
    [21, 22, 23],
    [0, 9, 21],
    [3, 10, 18],
    [6, 11, 15],
    [1, 4, 7],
    [16, 19, 22],
    [8, 12, 17],
    [5, 13, 20],
    [2, 14, 23],
];

/// The nine men's morris board: three concentric squares joined at their midpoints, 24 points,
/// 16 mills, 32 lines, 16 symmetries.
pub const NINE: Board = Board::new("nine", 7, &POINT_NAMES, &NINE_MILLS, &[]);

/// The mills of the twelve men's morris board: nine's 16, then the four diagonals from the
/// outer square's corners to the inner square's (a7-b6-c5, g7-f6-e5, a1-b2-c3, g1-f2-e3).
pub(crate) const TWELVE_MILLS: [[u8; 3]; 20] = {
    let mut out = [[0u8; 3]; 20];
    let mut i = 0;
    while i < 16 {
        out[i] = NINE_MILLS[i];
        i += 1;
    }
    out[16] = [0, 3, 6];
    out[17] = [2, 5, 8];
    out[18] = [21, 18, 15];
    out[19] = [23, 20, 17];
    out
};

/// The twelve men's morris board: nine's with the four diagonals, 24 points, 20 mills, 40 lines,
/// 16 symmetries (the same maps as nine's: each keeps the diagonals).
pub const TWELVE: Board = Board::new("twelve", 7, &POINT_NAMES, &TWELVE_MILLS, &[]);

/// The points of the six men's morris board on the 5 × 5 lattice, row by row from the top left:
/// the outer square's corners and midpoints (a5 c5 e5, a3 e3, a1 c1 e1) and the inner square's
/// (b4 c4 d4, b3 d3, b2 c2 d2).
pub(crate) const SIX_NAMES: [&str; 16] =
    ["a5", "c5", "e5", "b4", "c4", "d4", "a3", "b3", "d3", "e3", "b2", "c2", "d2", "a1", "c1", "e1"];

/// The 8 mills of the six men's morris board: the sides of the two squares (the outer square's
/// top, bottom, left and right, then the inner square's).
pub(crate) const SIX_MILLS: [[u8; 3]; 8] =
    [[0, 1, 2], [13, 14, 15], [0, 6, 13], [2, 9, 15], [3, 4, 5], [10, 11, 12], [3, 7, 10], [5, 8, 12]];

/// The four spokes joining the squares' midpoints (c5-c4, a3-b3, d3-e3, c1-c2): lines, but in no
/// mill.
pub(crate) const SIX_SPOKES: [(u8, u8); 4] = [(1, 4), (6, 7), (8, 9), (14, 11)];

/// The six men's morris board: two concentric squares joined at their midpoints, 16 points,
/// 8 mills (the squares' sides), 20 lines, 16 symmetries (the square's 8, each with or without
/// swapping the squares).
pub const SIX: Board = Board::new("six", 5, &SIX_NAMES, &SIX_MILLS, &SIX_SPOKES);

/// The points of the three men's morris board, the 3 × 3 lattice, row by row from the top left.
pub(crate) const THREE_NAMES: [&str; 9] = ["a3", "b3", "c3", "a2", "b2", "c2", "a1", "b1", "c1"];

/// The 8 lines of three men's morris: the three rows, the three columns and both diagonals.
pub(crate) const THREE_LINES: [[u8; 3]; 8] =
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

/// The three men's morris board: the 3 × 3 grid, 9 points, 8 lines of three (the centre on 4
/// of them), 16 drawn lines (the diagonals' steps included), 8 symmetries (the square's).
pub const THREE: Board = Board::new("three", 3, &THREE_NAMES, &THREE_LINES, &[]);

/// Every board, by [`Board::name`].
pub const BOARDS: [&Board; 4] = [&NINE, &TWELVE, &SIX, &THREE];

/// The board named `name`, if there is one.
pub fn named(name: &str) -> Option<&'static Board> {
    BOARDS.into_iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nine board's symmetries as the lab computed them before boards were data (a fixed
    /// formula for the 7 × 7 lattice): the derived ones must be these, in this order.
    fn legacy_nine_symmetries() -> [[u8; 24]; 16] {
        let mut out = [[0u8; 24]; 16];
        for (s, row) in out.iter_mut().enumerate() {
            for (p, image) in row.iter_mut().enumerate() {
                let b = POINT_NAMES[p].as_bytes();
                let (mut dx, mut dy) = ((b[0] - b'a') as i8 - 3, (b[1] - b'1') as i8 - 3);
                if s & 4 != 0 {
                    dx = -dx;
                }
                for _ in 0..(s & 3) {
                    (dx, dy) = (-dy, dx);
                }
                if s & 8 != 0 {
                    let ring = dx.abs().max(dy.abs());
                    (dx, dy) = (dx / ring * (4 - ring), dy / ring * (4 - ring));
                }
                let name = format!("{}{}", (b'a' + (dx + 3) as u8) as char, dy + 4);
                *image = POINT_NAMES.iter().position(|n| *n == name).unwrap() as u8;
            }
        }
        out
    }

    #[test]
    fn the_nine_board_is_the_one_the_lab_always_had() {
        assert_eq!((NINE.num_points, NINE.num_mills, NINE.mills_per_point), (24, 16, 2));
        assert_eq!(NINE.full, BitBoard((1 << 24) - 1));
        assert_eq!(NINE.edges().len(), 32);
        assert_eq!(NINE.num_symmetries, 16);
        assert_eq!(NINE.symmetries(), &legacy_nine_symmetries()[..]);
        for p in 0..24 {
            let through = NINE.mills_through[p];
            assert!(through[0].0 & (1 << p) != 0 && through[1].0 & (1 << p) != 0, "point {p}");
            assert_eq!(&through[2..], &[NO_MILL, NO_MILL], "point {p}");
            let (f, r) = NINE.coords[p];
            assert_eq!(format!("{}{}", (b'a' + f as u8) as char, r + 1), NINE.names[p]);
        }
    }

    #[test]
    fn the_twelve_board_is_nine_with_the_diagonals() {
        assert_eq!((TWELVE.num_points, TWELVE.num_mills, TWELVE.mills_per_point), (24, 20, 3));
        assert_eq!(TWELVE.edges().len(), 40);
        assert_eq!(TWELVE.symmetries(), NINE.symmetries(), "every map of nine keeps the diagonals");
        let name = |p: usize| TWELVE.names[p];
        for m in &TWELVE_MILLS[16..] {
            let (a, b, c) = (name(m[0] as usize), name(m[1] as usize), name(m[2] as usize));
            // Each diagonal runs corner to corner: file and rank both step by one.
            let step = |x: &str, y: &str| {
                let (x, y) = (x.as_bytes(), y.as_bytes());
                ((x[0] as i8 - y[0] as i8).abs(), (x[1] as i8 - y[1] as i8).abs())
            };
            assert_eq!((step(a, b), step(b, c)), ((1, 1), (1, 1)), "{a}-{b}-{c}");
        }
        let on_three: Vec<&str> =
            (0..24).filter(|&p| TWELVE.mills_through[p][2] != NO_MILL).map(name).collect();
        assert_eq!(on_three, ["a7", "g7", "b6", "f6", "c5", "e5", "c3", "e3", "b2", "f2", "a1", "g1"]);
    }

    #[test]
    fn the_six_board_is_two_squares_joined_at_their_midpoints() {
        assert_eq!((SIX.num_points, SIX.num_mills, SIX.mills_per_point), (16, 8, 2));
        assert_eq!(SIX.full, BitBoard((1 << 16) - 1));
        assert_eq!(SIX.edges().len(), 20);
        assert_eq!(SIX.num_symmetries, 16);
        let name = |p: usize| SIX.names[p];
        // Every point is a corner (degree 2) or a midpoint (degree 3, its spoke included).
        let degrees: Vec<u32> = (0..16).map(|p| SIX.adjacent[p].count()).collect();
        assert_eq!(degrees, [2, 3, 2, 2, 3, 2, 3, 3, 3, 3, 2, 3, 2, 2, 3, 2]);
        for (p, degree) in degrees.iter().enumerate() {
            let (f, r) = SIX.coords[p];
            assert_eq!(format!("{}{}", (b'a' + f as u8) as char, r + 1), name(p));
            // A corner is on two mills (its square's sides), a midpoint on one: no mill runs
            // along the spokes.
            let mills = SIX.mills_through[p].iter().filter(|&&m| m != NO_MILL).count();
            assert_eq!(mills, if *degree == 2 { 2 } else { 1 }, "{}", name(p));
        }
        // Swapping the squares maps the outer corner a5 to the inner b4 and keeps the spokes.
        let swap = SIX.symmetries().iter().find(|s| name(s[0] as usize) == "b4").expect("a swap");
        assert_eq!(name(swap[1] as usize), "c4");
        assert_eq!(name(swap[4] as usize), "c5");
    }

    #[test]
    fn a_board_keeps_only_the_maps_that_keep_its_mills() {
        // Three men's morris: the 3 × 3 lattice, rows, columns and diagonals. Swapping the
        // squares is the identity here (one ring), so the 8 maps of the square remain.
        const NAMES: [&str; 9] = THREE_NAMES;
        assert_eq!((THREE.num_symmetries, THREE.mills_per_point, THREE.edges().len()), (8, 4, 16));
        // The centre touches every point; a corner and an edge's midpoint touch three.
        let degrees: Vec<u32> = (0..9).map(|p| THREE.adjacent[p].count()).collect();
        assert_eq!(degrees, [3, 3, 3, 3, 8, 3, 3, 3, 3]);
        assert_eq!((THREE.move_stride(), THREE.num_actions()), (16, 160));
        assert_eq!((NINE.num_actions(), SIX.num_actions()), (600, 272));
        // Without the diagonals, the lines still allow the 8 maps, and no point is on 4 mills.
        const SQUARE: Board =
            Board::new("square", 3, &NAMES, &[[0, 1, 2], [6, 7, 8], [0, 3, 6], [2, 5, 8]], &[]);
        assert_eq!((SQUARE.num_symmetries, SQUARE.mills_per_point), (8, 2));
        // A mill that breaks the symmetry of the square leaves only the maps that keep it.
        const ONE: Board = Board::new("one", 3, &NAMES, &[[0, 1, 2]], &[]);
        assert_eq!(ONE.num_symmetries, 2, "the identity and the left-right mirror");
    }
}
