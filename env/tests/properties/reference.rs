//! The slow reference model of the rules, written from `rules.md` alone: its own adjacency
//! list, mill list, "in mill" test, flying condition, removal rule and placement rule, for nine
//! men's morris, twelve (nine's board with the four diagonals, 12 pieces, a full board drawn),
//! morabaraba (twelve with a removal for each mill a move closes, up to two), Lasker morris
//! (nine's board, 10 pieces, slides allowed while pieces are in hand), six men's morris (two
//! squares, 16 points, 6 pieces, its actions numbered on its own points) and three men's morris
//! (the 3 × 3 grid, 3 pieces, a line of three wins, moves numbered in blocks of 16). It never
//! reads the crate's tables or its move generator.

use morris_env::features::encode;
use morris_env::{
    Action, ActionMask, Color, DrawReason, NUM_ACTIONS, NUM_PLANES, Outcome, Point, Position, Rules, Variant,
    WinReason,
};

/// The 32 lines of the board diagram in rules.md, walked square by square, then the spokes.
#[rustfmt::skip]
pub(crate) const EDGES: [(usize, usize); 32] = [
    // outer square: a7 d7 g7 g4 g1 d1 a1 a4
    (0, 1), (1, 2), (2, 14), (14, 23), (23, 22), (22, 21), (21, 9), (9, 0),
    // middle square: b6 d6 f6 f4 f2 d2 b2 b4
    (3, 4), (4, 5), (5, 13), (13, 20), (20, 19), (19, 18), (18, 10), (10, 3),
    // inner square: c5 d5 e5 e4 e3 d3 c3 c4
    (6, 7), (7, 8), (8, 12), (12, 17), (17, 16), (16, 15), (15, 11), (11, 6),
    // spokes joining the squares at their midpoints
    (1, 4), (4, 7), (9, 10), (10, 11), (12, 13), (13, 14), (16, 19), (19, 22),
];

/// The 16 mills as listed in rules.md.
#[rustfmt::skip]
pub(crate) const REF_MILLS: [[usize; 3]; 16] = [
    // rows
    [0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11], [12, 13, 14], [15, 16, 17], [18, 19, 20], [21, 22, 23],
    // columns
    [0, 9, 21], [3, 10, 18], [6, 11, 15], [1, 4, 7], [16, 19, 22], [8, 12, 17], [5, 13, 20], [2, 14, 23],
];

/// Twelve men's morris's diagonals, corner to corner through the three squares: a7-b6-c5,
/// g7-f6-e5, a1-b2-c3, g1-f2-e3. Each is a line (its consecutive points are adjacent) and a mill.
pub(crate) const REF_DIAGONALS: [[usize; 3]; 4] = [[0, 3, 6], [2, 5, 8], [21, 18, 15], [23, 20, 17]];

/// Coordinate names of the points, read off the diagram.
pub(crate) const REF_NAMES: [&str; 24] = [
    "a7", "d7", "g7", "b6", "d6", "f6", "c5", "d5", "e5", "a4", "b4", "c4", "e4", "f4", "g4", "c3", "d3",
    "e3", "b2", "d2", "f2", "a1", "d1", "g1",
];

/// Six men's morris's points, read off its diagram in rules.md, row by row from the top left.
pub(crate) const REF_SIX_NAMES: [&str; 16] =
    ["a5", "c5", "e5", "b4", "c4", "d4", "a3", "b3", "d3", "e3", "b2", "c2", "d2", "a1", "c1", "e1"];

/// Six men's morris's 20 lines: the outer square walked a5 c5 e5 e3 e1 c1 a1 a3, the inner one
/// b4 c4 d4 d3 d2 c2 b2 b3, then the four spokes.
#[rustfmt::skip]
pub(crate) const REF_SIX_EDGES: [(usize, usize); 20] = [
    (0, 1), (1, 2), (2, 9), (9, 15), (15, 14), (14, 13), (13, 6), (6, 0),
    (3, 4), (4, 5), (5, 8), (8, 12), (12, 11), (11, 10), (10, 7), (7, 3),
    (1, 4), (6, 7), (8, 9), (14, 11),
];

/// Six men's morris's 8 mills: the squares' sides (none along a spoke).
pub(crate) const REF_SIX_MILLS: [[usize; 3]; 8] =
    [[0, 1, 2], [13, 14, 15], [0, 6, 13], [2, 9, 15], [3, 4, 5], [10, 11, 12], [3, 7, 10], [5, 8, 12]];

/// Three men's morris's points, row by row from the top left of the 3 × 3 grid.
pub(crate) const REF_THREE_NAMES: [&str; 9] = ["a3", "b3", "c3", "a2", "b2", "c2", "a1", "b1", "c1"];

/// Three men's morris's 8 lines of three: the rows, the columns, the diagonals a3-b2-c1 and
/// c3-b2-a1.
pub(crate) const REF_THREE_LINES: [[usize; 3]; 8] =
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

/// Three men's morris's 16 drawn lines: the grid's 12 edges, then the 4 half-diagonals from the
/// centre to the corners.
#[rustfmt::skip]
pub(crate) const REF_THREE_EDGES: [(usize, usize); 16] = [
    (0, 1), (1, 2), (3, 4), (4, 5), (6, 7), (7, 8),
    (0, 3), (3, 6), (1, 4), (4, 7), (2, 5), (5, 8),
    (4, 0), (4, 2), (4, 6), (4, 8),
];

pub(crate) fn ref_adjacent(a: usize, b: usize) -> bool {
    EDGES.iter().any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
}

/// The board a variant is played on, as the reference knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Geometry {
    /// Nine men's morris's 24 points (nine, Lasker).
    Nine,
    /// Nine's with the four diagonals (twelve, morabaraba).
    Twelve,
    /// Six men's morris's two squares.
    Six,
    /// Three men's morris's 3 × 3 grid.
    Three,
}

impl Geometry {
    pub(crate) fn of(rules: &Rules) -> Geometry {
        match rules.variant {
            Variant::Nine | Variant::Lasker => Geometry::Nine,
            Variant::Twelve | Variant::Morabaraba => Geometry::Twelve,
            Variant::Six => Geometry::Six,
            Variant::Three => Geometry::Three,
        }
    }

    /// Number of points; actions are `0..n` on a point and `s + s·from + to` moves
    /// ([`Geometry::stride`]).
    pub(crate) fn n(self) -> usize {
        match self {
            Geometry::Six => 16,
            Geometry::Three => 9,
            Geometry::Nine | Geometry::Twelve => 24,
        }
    }

    /// The width of each point's block of move actions (rules.md): the points rounded up to a
    /// multiple of 8.
    pub(crate) fn stride(self) -> usize {
        if self == Geometry::Three { 16 } else { self.n() }
    }

    /// The action moving a piece from `from` to `to`.
    pub(crate) fn movement(self, from: usize, to: usize) -> usize {
        self.stride() + self.stride() * from + to
    }

    /// The points of a move action, if it is one.
    pub(crate) fn movement_points(self, a: usize) -> Option<(usize, usize)> {
        let s = self.stride();
        let (from, to) = (a.checked_sub(s)? / s, (a - s) % s);
        (from < self.n() && to < self.n()).then_some((from, to))
    }

    pub(crate) fn adjacent(self, a: usize, b: usize) -> bool {
        match self {
            Geometry::Six => REF_SIX_EDGES.iter().any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a)),
            Geometry::Three => REF_THREE_EDGES.iter().any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a)),
            Geometry::Nine | Geometry::Twelve => ref_adjacent_on(self == Geometry::Twelve, a, b),
        }
    }

    pub(crate) fn mills(self) -> Vec<[usize; 3]> {
        match self {
            Geometry::Nine => REF_MILLS.to_vec(),
            Geometry::Twelve => REF_MILLS.iter().chain(&REF_DIAGONALS).copied().collect(),
            Geometry::Six => REF_SIX_MILLS.to_vec(),
            Geometry::Three => REF_THREE_LINES.to_vec(),
        }
    }

    /// The complete mills of `board` through `p` (a member of `board`).
    pub(crate) fn mills_at(self, board: u32, p: usize) -> usize {
        self.mills().iter().filter(|m| m.contains(&p) && m.iter().all(|&q| has(board, q))).count()
    }

    /// Whether the piece on `p` (a member of `board`) stands in a complete mill of `board`.
    pub(crate) fn in_mill(self, board: u32, p: usize) -> bool {
        self.mills_at(board, p) > 0
    }
}

/// Adjacency on twelve's board when `twelve`: nine's lines plus the diagonals' steps.
pub(crate) fn ref_adjacent_on(twelve: bool, a: usize, b: usize) -> bool {
    ref_adjacent(a, b)
        || twelve
            && REF_DIAGONALS
                .iter()
                .any(|d| d.windows(2).any(|w| (w[0], w[1]) == (a, b) || (w[0], w[1]) == (b, a)))
}

pub(crate) fn has(board: u32, p: usize) -> bool {
    board >> p & 1 == 1
}

/// The points of `board` (a set of the 24 points or fewer).
pub(crate) fn points(board: u32) -> Vec<usize> {
    (0..24).filter(|&p| has(board, p)).collect()
}

/// The whole state the rules read, kept independently of `Position`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RefState {
    pub(crate) board: [u32; 2],
    pub(crate) hand: [u8; 2],
    pub(crate) side: usize,
    /// Removals the mover still has to make.
    pub(crate) pending: u8,
    pub(crate) quiet: u32,
    pub(crate) turns: u32,
    /// The board.
    pub(crate) geo: Geometry,
    /// Morabaraba: a removal per mill closed, up to two.
    pub(crate) double: bool,
    /// Lasker morris: 10 pieces, and a turn with pieces in hand may slide instead of placing.
    pub(crate) lasker: bool,
}

/// What makes two states "the same position" for repetition (counters excluded).
pub(crate) type RefKey = ([u32; 2], [u8; 2], usize, u8);

impl RefState {
    pub(crate) fn start(rules: &Rules) -> RefState {
        let double = ref_double(rules);
        let n = ref_pieces(rules);
        let lasker = ref_lasker(rules);
        RefState {
            board: [0, 0],
            hand: [n, n],
            side: 0,
            pending: 0,
            quiet: 0,
            turns: 0,
            geo: Geometry::of(rules),
            double,
            lasker,
        }
    }

    pub(crate) fn of(pos: &Position, rules: &Rules) -> RefState {
        RefState {
            geo: Geometry::of(rules),
            double: ref_double(rules),
            lasker: ref_lasker(rules),
            board: [pos.pieces(Color::White).0, pos.pieces(Color::Black).0],
            hand: [pos.in_hand(Color::White), pos.in_hand(Color::Black)],
            side: pos.current_player().index(),
            pending: pos.removals_pending(),
            quiet: pos.quiet_plies() as u32,
            turns: pos.turns() as u32,
        }
    }

    pub(crate) fn key(&self) -> RefKey {
        (self.board, self.hand, self.side, self.pending)
    }

    pub(crate) fn empty(&self, p: usize) -> bool {
        !has(self.board[0] | self.board[1], p)
    }

    /// Flying: the rule is on, the player has exactly 3 pieces on the board and none in hand.
    pub(crate) fn flies(&self, c: usize, rules: &Rules) -> bool {
        rules.flying && self.board[c].count_ones() == 3 && self.hand[c] == 0
    }

    /// The legal actions by the rules of play (not checking whether the game is over), indexed
    /// by the board's actions (`0..n` points, `s + s·from + to` moves; 600 entries, those past
    /// the board's actions false).
    pub(crate) fn legal(&self, rules: &Rules) -> Vec<bool> {
        let mut legal = vec![false; NUM_ACTIONS];
        let me = self.side;
        let opp = 1 - me;
        let (geo, n) = (self.geo, self.geo.n());
        if self.pending > 0 {
            let theirs = points(self.board[opp]);
            let free: Vec<usize> =
                theirs.iter().copied().filter(|&p| !geo.in_mill(self.board[opp], p)).collect();
            for p in if free.is_empty() { theirs } else { free } {
                legal[p] = true;
            }
        } else if self.hand[me] > 0 {
            for (p, l) in legal.iter_mut().enumerate().take(n) {
                *l = self.empty(p);
            }
            // Lasker: or slide a piece along a line (flying needs an empty hand).
            if self.lasker {
                for from in points(self.board[me]) {
                    for to in 0..n {
                        if self.empty(to) && geo.adjacent(from, to) {
                            legal[geo.movement(from, to)] = true;
                        }
                    }
                }
            }
        } else {
            let flying = self.flies(me, rules);
            for from in points(self.board[me]) {
                for to in 0..n {
                    if self.empty(to) && (flying || geo.adjacent(from, to)) {
                        legal[geo.movement(from, to)] = true;
                    }
                }
            }
        }
        legal
    }

    /// The successor after a legal action.
    pub(crate) fn apply(mut self, a: usize) -> RefState {
        let me = self.side;
        let opp = 1 - me;
        let n = self.geo.n();
        let arrived = if self.pending > 0 {
            assert!(a < n && has(self.board[opp], a));
            self.board[opp] &= !(1 << a);
            self.pending -= 1;
            self.quiet = 0;
            // Morabaraba's second removal, if the first left something to remove.
            if self.pending > 0 && self.board[opp] != 0 {
                return self;
            }
            self.pending = 0;
            self.side = opp;
            self.turns += 1;
            return self;
        } else if a < n {
            self.board[me] |= 1 << a;
            self.hand[me] -= 1;
            a
        } else {
            let (from, to) = self.geo.movement_points(a).expect("a move action");
            self.board[me] &= !(1 << from);
            self.board[me] |= 1 << to;
            self.quiet += 1;
            to
        };
        // A mill lets the mover remove (in morabaraba once per mill closed, up to twice), unless
        // the opponent has nothing on the board; in three men's morris it wins instead (see
        // `ref_outcome`), and play passes.
        let mills = self.geo.mills_at(self.board[me], arrived);
        if mills > 0 && self.board[opp] != 0 && self.geo != Geometry::Three {
            self.pending = if self.double { mills.min(2) as u8 } else { 1 };
        } else {
            self.side = opp;
            self.turns += 1;
        }
        self
    }
}

/// The outcome by rules.md: a win takes precedence over every draw; several draw conditions may
/// hold at once, so the set of those that do is returned.
#[derive(Debug, PartialEq)]
pub(crate) enum RefOutcome {
    Ongoing,
    Win(Color, WinReason),
    Draw(Vec<DrawReason>),
}

pub(crate) fn ref_outcome(r: &RefState, rules: &Rules, repetitions: u32) -> RefOutcome {
    // Three men's morris: a line of three of one's pieces has won.
    if r.geo == Geometry::Three {
        for c in 0..2 {
            if REF_THREE_LINES.iter().any(|l| l.iter().all(|&p| has(r.board[c], p))) {
                return RefOutcome::Win(color(c), WinReason::Line);
            }
        }
    }
    for c in 0..2 {
        if r.board[c].count_ones() + r.hand[c] as u32 <= 2 {
            return RefOutcome::Win(color(1 - c), WinReason::TooFewPieces);
        }
    }
    // Twelve: a board filled by the placements (no removal pending) is a draw, not a block.
    if r.geo == Geometry::Twelve
        && r.hand == [0, 0]
        && r.pending == 0
        && (r.board[0] | r.board[1]).count_ones() == 24
    {
        return RefOutcome::Draw(vec![DrawReason::BoardFull]);
    }
    if !r.legal(rules).contains(&true) {
        return RefOutcome::Win(color(1 - r.side), WinReason::Blocked);
    }
    let mut draws = Vec::new();
    if rules.threefold_repetition && repetitions >= 3 {
        draws.push(DrawReason::ThreefoldRepetition);
    }
    // The N-move counter is read once a pending removal (which resets it) has been made.
    if let Some(n) = rules.n_move_rule
        && r.pending == 0
        && r.quiet >= n
    {
        draws.push(DrawReason::NMoveRule);
    }
    if let Some(cap) = rules.turn_cap
        && r.turns >= cap
    {
        draws.push(DrawReason::TurnCap);
    }
    if draws.is_empty() { RefOutcome::Ongoing } else { RefOutcome::Draw(draws) }
}

/// The observation as the table in `features.rs` documents it (version 1), from the mover's side.
pub(crate) fn ref_observation(r: &RefState, rules: &Rules, repetitions: u32) -> Vec<f32> {
    let (me, opp) = (r.side, 1 - r.side);
    let phase = |c: usize| {
        let placing = r.hand[c] > 0;
        let flying = r.flies(c, rules);
        [placing, !placing && !flying, flying].map(|b| b as u8 as f32)
    };
    let ratio = |x: u32, d: Option<u32>| match d {
        Some(d) if d > 0 => (x as f32 / d as f32).min(1.0),
        _ => 0.0,
    };
    let reps = if rules.threefold_repetition { ((repetitions - 1) as f32 / 2.0).min(1.0) } else { 0.0 };
    let n = r.geo.n();
    let mut planes: Vec<Vec<f32>> = vec![
        (0..n).map(|p| has(r.board[me], p) as u8 as f32).collect(),
        (0..n).map(|p| has(r.board[opp], p) as u8 as f32).collect(),
        (0..n).map(|p| r.empty(p) as u8 as f32).collect(),
    ];
    let pieces = ref_pieces(rules) as f32;
    // Removals pending, as a fraction of the most a move earns (two in morabaraba; three men's
    // morris has none, so the plane is 0).
    let removals = r.pending as f32 / if r.double { 2.0 } else { 1.0 };
    let constants = [
        [r.hand[me] as f32 / pieces, r.hand[opp] as f32 / pieces, removals].as_slice(),
        &phase(me),
        &phase(opp),
        &[ratio(r.quiet, rules.n_move_rule), reps, ratio(r.turns, rules.turn_cap)],
    ]
    .concat();
    planes.extend(constants.iter().map(|&v| vec![v; n]));
    assert_eq!(planes.len() * n, NUM_PLANES * n);
    planes.concat()
}

pub(crate) fn assert_observation_matches(
    pos: &Position,
    rules: &Rules,
    r: &RefState,
    reps: u32,
    ctx: &dyn Fn() -> String,
) {
    let n = r.geo.n();
    let mut obs = vec![f32::NAN; NUM_PLANES * n];
    encode(pos, rules, reps, &mut obs);
    let want = ref_observation(r, rules, reps);
    for (i, (a, b)) in obs.iter().zip(&want).enumerate() {
        assert!((a - b).abs() <= 1e-6, "observation plane {} point {}: {a} != {b}\n{}", i / n, i % n, ctx());
    }
}

/// Whether a move earns a removal per mill it closes, up to two (morabaraba).
pub(crate) fn ref_double(rules: &Rules) -> bool {
    rules.variant == Variant::Morabaraba
}

/// Pieces each player starts with: 9 in nine men's morris, 10 in Lasker's, 12 on twelve's board,
/// 6 in six men's morris, 3 in three men's morris.
pub(crate) fn ref_pieces(rules: &Rules) -> u8 {
    match rules.variant {
        Variant::Nine => 9,
        Variant::Lasker => 10,
        Variant::Twelve | Variant::Morabaraba => 12,
        Variant::Six => 6,
        Variant::Three => 3,
    }
}

/// Whether a turn with pieces in hand may slide instead of placing (Lasker morris).
pub(crate) fn ref_lasker(rules: &Rules) -> bool {
    rules.variant == Variant::Lasker
}

pub(crate) fn color(i: usize) -> Color {
    Color::try_index(i).unwrap()
}

pub(crate) fn assert_outcome_matches(actual: Outcome, expected: &RefOutcome, context: &dyn Fn() -> String) {
    let ok = match (actual, expected) {
        (Outcome::Ongoing, RefOutcome::Ongoing) => true,
        (Outcome::Win { winner, reason }, RefOutcome::Win(w, r)) => winner == *w && reason == *r,
        (Outcome::Draw(reason), RefOutcome::Draw(reasons)) => reasons.contains(&reason),
        _ => false,
    };
    assert!(ok, "outcome {actual:?}, reference says {expected:?}\n{}", context());
}

/// The crate's mask as 600 booleans, checking its count and iterator on the way.
pub(crate) fn mask_bools(mask: &ActionMask) -> Vec<bool> {
    let bools: Vec<bool> = (0..NUM_ACTIONS).map(|a| mask.has(Action(a as u16))).collect();
    assert_eq!(mask.count() as usize, bools.iter().filter(|&&b| b).count());
    let listed: Vec<usize> = mask.iter().map(|a| a.index()).collect();
    let expected: Vec<usize> = (0..NUM_ACTIONS).filter(|&a| bools[a]).collect();
    assert_eq!(listed, expected);
    assert!(!mask.has(Action(600)) && !mask.has(Action(u16::MAX)));
    bools
}

pub(crate) fn describe(legal: &[bool]) -> Vec<usize> {
    (0..legal.len()).filter(|&a| legal[a]).collect()
}

#[test]
fn reference_geometry_is_consistent_with_rules_md() {
    // 32 distinct edges, degrees 2..=4.
    for (i, &(a, b)) in EDGES.iter().enumerate() {
        assert_ne!(a, b);
        for &(c, d) in &EDGES[..i] {
            assert!((a, b) != (c, d) && (a, b) != (d, c), "edge {a}-{b} listed twice");
        }
    }
    for p in 0..24 {
        let degree = (0..24).filter(|&q| ref_adjacent(p, q)).count();
        assert!((2..=4).contains(&degree), "point {p} has degree {degree}");
    }
    // Every edge joins two points on a common rank or file, with no point between them; and the
    // edges are exactly the consecutive pairs of the mills.
    let coords = |p: usize| {
        let b = REF_NAMES[p].as_bytes();
        ((b[0] - b'a') as i32, (b[1] - b'1') as i32)
    };
    for &(a, b) in &EDGES {
        let ((fa, ra), (fb, rb)) = (coords(a), coords(b));
        assert!(fa == fb || ra == rb, "edge {a}-{b} is not straight");
        assert!(REF_MILLS.iter().any(|m| (m[0] == a && m[1] == b)
            || (m[1] == a && m[2] == b)
            || (m[0] == b && m[1] == a)
            || (m[1] == b && m[2] == a)));
    }
    for m in REF_MILLS {
        assert!(ref_adjacent(m[0], m[1]) && ref_adjacent(m[1], m[2]) && !ref_adjacent(m[0], m[2]));
        let (f, r): (Vec<i32>, Vec<i32>) = m.iter().map(|&p| coords(p)).unzip();
        assert!(f.iter().all(|&x| x == f[0]) || r.iter().all(|&x| x == r[0]), "mill {m:?} is not a line");
    }
    // Every point lies on exactly two mills.
    for p in 0..24 {
        assert_eq!(REF_MILLS.iter().filter(|m| m.contains(&p)).count(), 2);
    }
    // Our names agree with the crate's numbering.
    for (p, name) in REF_NAMES.iter().enumerate() {
        assert_eq!(Point::try_index(p).unwrap().name(), *name);
    }
}

#[test]
fn reference_six_geometry_is_consistent_with_rules_md() {
    let coords = |p: usize| {
        let b = REF_SIX_NAMES[p].as_bytes();
        ((b[0] - b'a') as i32, (b[1] - b'1') as i32)
    };
    // 20 distinct straight lines; corners have degree 2, midpoints 3 (their spoke).
    for (i, &(a, b)) in REF_SIX_EDGES.iter().enumerate() {
        assert!(REF_SIX_EDGES[..i].iter().all(|&e| e != (a, b) && e != (b, a)), "{a}-{b} twice");
        let ((fa, ra), (fb, rb)) = (coords(a), coords(b));
        assert!(fa == fb || ra == rb, "line {a}-{b} is not straight");
    }
    for (p, name) in REF_SIX_NAMES.iter().enumerate() {
        let degree = (0..16).filter(|&q| Geometry::Six.adjacent(p, q)).count();
        let corner = {
            let (f, r) = coords(p);
            f != 2 && r != 2
        };
        assert_eq!(degree, if corner { 2 } else { 3 }, "{name}");
        // A corner is on two mills, a midpoint on one (no mill along a spoke).
        let mills = REF_SIX_MILLS.iter().filter(|m| m.contains(&p)).count();
        assert_eq!(mills, if corner { 2 } else { 1 }, "{name}");
    }
    for m in REF_SIX_MILLS {
        let six = Geometry::Six;
        assert!(six.adjacent(m[0], m[1]) && six.adjacent(m[1], m[2]) && !six.adjacent(m[0], m[2]));
    }
    // Our names agree with the crate's numbering of six's board.
    assert_eq!(Variant::Six.board().names, REF_SIX_NAMES);
}

#[test]
fn reference_three_geometry_is_consistent_with_rules_md() {
    let coords = |p: usize| {
        let b = REF_THREE_NAMES[p].as_bytes();
        ((b[0] - b'a') as i32, (b[1] - b'1') as i32)
    };
    // 16 distinct lines, each one step along a rank, a file or a diagonal; the centre touches
    // every point, the others three.
    for (i, &(a, b)) in REF_THREE_EDGES.iter().enumerate() {
        assert!(REF_THREE_EDGES[..i].iter().all(|&e| e != (a, b) && e != (b, a)), "{a}-{b} twice");
        let ((fa, ra), (fb, rb)) = (coords(a), coords(b));
        assert!((fa - fb).abs() <= 1 && (ra - rb).abs() <= 1, "line {a}-{b} is not one step");
    }
    for (p, name) in REF_THREE_NAMES.iter().enumerate() {
        let degree = (0..9).filter(|&q| Geometry::Three.adjacent(p, q)).count();
        assert_eq!(degree, if p == 4 { 8 } else { 3 }, "{name}");
    }
    // Each line of three is straight and walks along drawn lines.
    for l in REF_THREE_LINES {
        let three = Geometry::Three;
        assert!(three.adjacent(l[0], l[1]) && three.adjacent(l[1], l[2]) && !three.adjacent(l[0], l[2]));
        let [(f0, r0), (f1, r1), (f2, r2)] = l.map(coords);
        assert_eq!((f1 - f0, r1 - r0), (f2 - f1, r2 - r1), "line {l:?} is not straight");
    }
    assert_eq!(Variant::Three.board().names, REF_THREE_NAMES);
    // The moves' numbering: blocks of 16, the last 7 of each never a move.
    assert_eq!(Geometry::Three.movement(0, 1), 17);
    assert_eq!(Geometry::Three.movement_points(16 + 16 * 8 + 7), Some((8, 7)));
    assert_eq!(Geometry::Three.movement_points(16 + 9), None);
}
