//! Property tests of the rules, the legal-action mask, the symmetries and `VecEnv`.
//!
//! Random states come from random legal playouts seeded by proptest. The legal mask, the
//! successor of every legal action and the outcome are checked against a slow reference model
//! written here from `rules.md` alone: its own adjacency list, mill list, "in mill" test,
//! flying condition, removal rule and placement rule. It never reads the crate's tables or its
//! move generator.

use std::collections::HashMap;
use std::sync::Arc;

use morris_env::features::encode;
use morris_env::{
    Action, ActionMask, AutoReset, BitBoard, Color, DrawReason, Game, IllegalActionMode, NUM_ACTIONS,
    NUM_POINTS, NUM_SYMMETRIES, OBS_LEN, Outcome, Point, Position, Rng, Rules, Symmetry, VecEnv,
    VecEnvConfig, WinReason,
};
use proptest::prelude::*;

// =============================================================================================
// Reference model, from rules.md
// =============================================================================================

/// The 32 lines of the board diagram in rules.md, walked square by square, then the spokes.
#[rustfmt::skip]
const EDGES: [(usize, usize); 32] = [
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
const REF_MILLS: [[usize; 3]; 16] = [
    // rows
    [0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11], [12, 13, 14], [15, 16, 17], [18, 19, 20], [21, 22, 23],
    // columns
    [0, 9, 21], [3, 10, 18], [6, 11, 15], [1, 4, 7], [16, 19, 22], [8, 12, 17], [5, 13, 20], [2, 14, 23],
];

/// Coordinate names of the points, read off the diagram.
const REF_NAMES: [&str; 24] = [
    "a7", "d7", "g7", "b6", "d6", "f6", "c5", "d5", "e5", "a4", "b4", "c4", "e4", "f4", "g4", "c3", "d3",
    "e3", "b2", "d2", "f2", "a1", "d1", "g1",
];

fn ref_adjacent(a: usize, b: usize) -> bool {
    EDGES.iter().any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
}

fn has(board: u32, p: usize) -> bool {
    board >> p & 1 == 1
}

fn points(board: u32) -> Vec<usize> {
    (0..24).filter(|&p| has(board, p)).collect()
}

/// Whether the piece on `p` (a member of `board`) stands in a complete mill of `board`.
fn ref_in_mill(board: u32, p: usize) -> bool {
    REF_MILLS.iter().any(|m| m.contains(&p) && m.iter().all(|&q| has(board, q)))
}

/// The whole state the rules read, kept independently of `Position`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct RefState {
    board: [u32; 2],
    hand: [u8; 2],
    side: usize,
    pending: bool,
    quiet: u32,
    turns: u32,
}

/// What makes two states "the same position" for repetition (counters excluded).
type RefKey = ([u32; 2], [u8; 2], usize, bool);

impl RefState {
    fn start() -> RefState {
        RefState { board: [0, 0], hand: [9, 9], side: 0, pending: false, quiet: 0, turns: 0 }
    }

    fn of(pos: &Position) -> RefState {
        RefState {
            board: [pos.pieces(Color::White).0, pos.pieces(Color::Black).0],
            hand: [pos.in_hand(Color::White), pos.in_hand(Color::Black)],
            side: pos.current_player().index(),
            pending: pos.is_removal_pending(),
            quiet: pos.quiet_plies() as u32,
            turns: pos.turns() as u32,
        }
    }

    fn key(&self) -> RefKey {
        (self.board, self.hand, self.side, self.pending)
    }

    fn empty(&self, p: usize) -> bool {
        !has(self.board[0] | self.board[1], p)
    }

    /// Flying: the rule is on, the player has exactly 3 pieces on the board and none in hand.
    fn flies(&self, c: usize, rules: &Rules) -> bool {
        rules.flying && self.board[c].count_ones() == 3 && self.hand[c] == 0
    }

    /// The legal actions by the rules of play (not checking whether the game is over).
    fn legal(&self, rules: &Rules) -> Vec<bool> {
        let mut legal = vec![false; NUM_ACTIONS];
        let me = self.side;
        let opp = 1 - me;
        if self.pending {
            let theirs = points(self.board[opp]);
            let free: Vec<usize> =
                theirs.iter().copied().filter(|&p| !ref_in_mill(self.board[opp], p)).collect();
            for p in if free.is_empty() { theirs } else { free } {
                legal[p] = true;
            }
        } else if self.hand[me] > 0 {
            for (p, l) in legal.iter_mut().enumerate().take(24) {
                *l = self.empty(p);
            }
        } else {
            let flying = self.flies(me, rules);
            for from in points(self.board[me]) {
                for to in 0..24 {
                    if self.empty(to) && (flying || ref_adjacent(from, to)) {
                        legal[24 + from * 24 + to] = true;
                    }
                }
            }
        }
        legal
    }

    /// The successor after a legal action.
    fn apply(mut self, a: usize) -> RefState {
        let me = self.side;
        let opp = 1 - me;
        let arrived = if self.pending {
            assert!(a < 24 && has(self.board[opp], a));
            self.board[opp] &= !(1 << a);
            self.pending = false;
            self.quiet = 0;
            self.side = opp;
            self.turns += 1;
            return self;
        } else if a < 24 {
            self.board[me] |= 1 << a;
            self.hand[me] -= 1;
            a
        } else {
            let (from, to) = ((a - 24) / 24, (a - 24) % 24);
            self.board[me] &= !(1 << from);
            self.board[me] |= 1 << to;
            self.quiet += 1;
            to
        };
        // A mill lets the mover remove, unless the opponent has nothing on the board.
        if ref_in_mill(self.board[me], arrived) && self.board[opp] != 0 {
            self.pending = true;
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
enum RefOutcome {
    Ongoing,
    Win(Color, WinReason),
    Draw(Vec<DrawReason>),
}

fn ref_outcome(r: &RefState, rules: &Rules, repetitions: u32) -> RefOutcome {
    for c in 0..2 {
        if r.board[c].count_ones() + r.hand[c] as u32 <= 2 {
            return RefOutcome::Win(color(1 - c), WinReason::TooFewPieces);
        }
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
        && !r.pending
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
fn ref_observation(r: &RefState, rules: &Rules, repetitions: u32) -> Vec<f32> {
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
    let mut planes: Vec<[f32; 24]> = vec![
        std::array::from_fn(|p| has(r.board[me], p) as u8 as f32),
        std::array::from_fn(|p| has(r.board[opp], p) as u8 as f32),
        std::array::from_fn(|p| r.empty(p) as u8 as f32),
    ];
    let constants = [
        [r.hand[me] as f32 / 9.0, r.hand[opp] as f32 / 9.0, r.pending as u8 as f32].as_slice(),
        &phase(me),
        &phase(opp),
        &[ratio(r.quiet, rules.n_move_rule), reps, ratio(r.turns, rules.turn_cap)],
    ]
    .concat();
    planes.extend(constants.iter().map(|&v| [v; 24]));
    assert_eq!(planes.len() * 24, OBS_LEN);
    planes.concat()
}

fn assert_observation_matches(
    pos: &Position,
    rules: &Rules,
    r: &RefState,
    reps: u32,
    ctx: &dyn Fn() -> String,
) {
    let mut obs = vec![f32::NAN; OBS_LEN];
    encode(pos, rules, reps, &mut obs);
    let want = ref_observation(r, rules, reps);
    for (i, (a, b)) in obs.iter().zip(&want).enumerate() {
        assert!(
            (a - b).abs() <= 1e-6,
            "observation plane {} point {}: {a} != {b}\n{}",
            i / 24,
            i % 24,
            ctx()
        );
    }
}

fn color(i: usize) -> Color {
    Color::try_index(i).unwrap()
}

fn assert_outcome_matches(actual: Outcome, expected: &RefOutcome, context: &dyn Fn() -> String) {
    let ok = match (actual, expected) {
        (Outcome::Ongoing, RefOutcome::Ongoing) => true,
        (Outcome::Win { winner, reason }, RefOutcome::Win(w, r)) => winner == *w && reason == *r,
        (Outcome::Draw(reason), RefOutcome::Draw(reasons)) => reasons.contains(&reason),
        _ => false,
    };
    assert!(ok, "outcome {actual:?}, reference says {expected:?}\n{}", context());
}

/// The crate's mask as 600 booleans, checking its count and iterator on the way.
fn mask_bools(mask: &ActionMask) -> Vec<bool> {
    let bools: Vec<bool> = (0..NUM_ACTIONS).map(|a| mask.has(Action(a as u16))).collect();
    assert_eq!(mask.count() as usize, bools.iter().filter(|&&b| b).count());
    let listed: Vec<usize> = mask.iter().map(|a| a.index()).collect();
    let expected: Vec<usize> = (0..NUM_ACTIONS).filter(|&a| bools[a]).collect();
    assert_eq!(listed, expected);
    assert!(!mask.has(Action(600)) && !mask.has(Action(u16::MAX)));
    bools
}

fn describe(legal: &[bool]) -> Vec<usize> {
    (0..legal.len()).filter(|&a| legal[a]).collect()
}

// =============================================================================================
// Random games
// =============================================================================================

/// Rule sets under test: both presets, standard without flying, and a short variant whose draw
/// rules fire early.
fn rules_of(i: u8) -> Rules {
    match i % 4 {
        0 => Rules::standard(),
        1 => Rules::openspiel(),
        2 => Rules { flying: false, ..Rules::standard() },
        _ => Rules { n_move_rule: Some(20), turn_cap: Some(60), ..Rules::standard() },
    }
}

fn pick(mask: &ActionMask, rng: &mut Rng) -> Action {
    mask.nth(rng.below(mask.count())).unwrap()
}

const PLY_BOUND: usize = 5000;

/// Plays a random game from the start, calling `visit` on every state (the final one included),
/// for at most `max_plies` plies. Returns the game.
fn random_game(rules: Rules, seed: u64, max_plies: usize, mut visit: impl FnMut(&Game)) -> Game {
    let mut rng = Rng::seed_from_u64(seed);
    let mut game = Game::new(rules);
    visit(&game);
    for _ in 0..max_plies {
        let mask = game.legal_actions();
        assert_eq!(
            mask.is_empty(),
            game.outcome().is_terminal(),
            "empty mask iff game over\n{}",
            game.position()
        );
        if mask.is_empty() {
            break;
        }
        game.apply(pick(&mask, &mut rng)).unwrap();
        visit(&game);
    }
    game
}

fn random_position(rules: Rules, seed: u64, plies: usize) -> Position {
    *random_game(rules, seed, plies, |_| {}).position()
}

/// A position built directly with `Position::from_parts` (not necessarily reachable by play),
/// for states random playouts rarely visit: a player blocked by the opponent, every opposing
/// piece standing in a mill, flying, crowded boards and large counters.
fn synthetic_position(seed: u64) -> Position {
    let mut rng = Rng::seed_from_u64(seed);
    let mut boards = [0u32; 2];
    let mut hands = [0u8; 2];
    let mut side = rng.below(2) as usize;
    let mut want_pending = rng.below(3) == 0;
    match rng.below(5) {
        // Blocked attempt: the opponent occupies every empty neighbour of the mover's pieces.
        0 => {
            let k = 3 + rng.below(5);
            while boards[side].count_ones() < k {
                boards[side] |= 1 << rng.below(24);
            }
            for p in points(boards[side]) {
                for q in 0..24 {
                    // At most 9 opposing pieces; if more are needed, the mover is not blocked.
                    if ref_adjacent(p, q) && !has(boards[side], q) && boards[1 - side].count_ones() < 9 {
                        boards[1 - side] |= 1 << q;
                    }
                }
            }
            want_pending = false;
        }
        // Mills: each player's pieces are whole mills, plus a few loose ones.
        1 => {
            for c in 0..2 {
                for _ in 0..1 + rng.below(3) {
                    let bits: u32 = REF_MILLS[rng.below(16) as usize].iter().fold(0, |acc, &q| acc | 1 << q);
                    if (boards[0] | boards[1]) & bits == 0 && (boards[c] | bits).count_ones() <= 9 {
                        boards[c] |= bits;
                    }
                }
            }
            for _ in 0..rng.below(3) {
                let (c, q) = (rng.below(2) as usize, rng.below(24) as usize);
                if !has(boards[0] | boards[1], q) && boards[c].count_ones() < 9 {
                    boards[c] |= 1 << q;
                }
            }
        }
        // Placing with an empty opposing board and a mill one placement away: closing it
        // removes nothing (rules.md, edge case).
        2 => {
            let w = 1 + rng.below(6) as u8;
            hands = [w, (w + rng.below(2) as u8).min(9)];
            let placer = if hands[0] == hands[1] { 0 } else { 1 };
            let m = REF_MILLS[rng.below(16) as usize];
            let gap = rng.below(3) as usize;
            for (i, &q) in m.iter().enumerate() {
                if i != gap {
                    boards[placer] |= 1 << q;
                }
            }
            let max = 9 - hands[placer] as u32;
            while boards[placer].count_ones() < max.min(2 + rng.below(3)) {
                let q = rng.below(24) as usize;
                if q != m[gap] {
                    boards[placer] |= 1 << q;
                }
            }
            want_pending = false;
        }
        // Random boards, with hands as placements leave them: White places first, so Black
        // holds as many pieces in hand as White, or one more.
        _ => {
            if rng.below(2) == 1 {
                let w = rng.below(10) as u8;
                hands = [w, (w + rng.below(2) as u8).min(9)];
            }
            for c in 0..2 {
                let max = 9 - hands[c] as u32;
                let count = match rng.below(3) {
                    0 => rng.below(max + 1),
                    1 => max.min(3 + rng.below(2)),
                    _ => max.saturating_sub(rng.below(2)),
                };
                while boards[c].count_ones() < count {
                    let q = rng.below(24) as usize;
                    if !has(boards[0] | boards[1], q) {
                        boards[c] |= 1 << q;
                    }
                }
            }
        }
    }
    let pending = if hands == [0, 0] {
        want_pending && boards[1 - side] != 0
    } else {
        // The placer is to place, or the other player, who just placed, is to remove.
        let placer = if hands[0] == hands[1] { 0 } else { 1 };
        side = if want_pending && boards[placer] != 0 { 1 - placer } else { placer };
        side != placer
    };
    let pos = Position::from_parts(BitBoard(boards[0]), BitBoard(boards[1]), hands, color(side), pending)
        .unwrap_or_else(|e| panic!("from_parts rejected a consistent position: {e:?}"));
    pos.with_counters(rng.below(300) as u16, rng.below(120) as u16)
}

/// Property 2b: on synthetic positions too, the mask, outcome, `apply` and symmetries all agree
/// with the reference.
fn check_synthetic(seed: u64, rules: Rules) {
    let pos = synthetic_position(seed);
    let r = RefState::of(&pos);
    let ctx = || format!("rules {rules:?}, synthetic seed {seed}\n{pos}");
    let ours = mask_bools(&pos.legal_actions_unchecked(&rules));
    assert_eq!(describe(&ours), describe(&r.legal(&rules)), "{}", ctx());
    assert_outcome_matches(pos.outcome(&rules), &ref_outcome(&r, &rules, 1), &ctx);
    let game = Game::from_position(rules, pos);
    assert_outcome_matches(game.outcome(), &ref_outcome(&r, &rules, 1), &ctx);
    assert_eq!(game.legal_actions(), pos.legal_actions(&rules));
    assert_observation_matches(&pos, &rules, &r, 1, &ctx);
    check_apply_on(&pos, &rules, &ctx);
    check_symmetries_on(&pos, &rules);
}

/// Property 1 (and 6): a random game ends within the ply bound without panicking, and along the
/// way the position, counters, repetition count, outcome and hash all agree with the reference.
fn check_game_against_reference(rules: Rules, seed: u64) {
    assert_eq!(RefState::of(&Position::start()), RefState::start());
    check_game_from(rules, Position::start(), seed);
}

/// Plays a random game from `start` (with an empty history), checking every state against the
/// reference model, until the game ends; it must end within [`PLY_BOUND`] plies.
fn check_game_from(rules: Rules, start: Position, seed: u64) {
    let mut rng = Rng::seed_from_u64(seed);
    let mut game = Game::from_position(rules, start);
    let mut r = RefState::of(&start);
    let mut seen: Vec<RefKey> = vec![r.key()];
    let mut hashes: HashMap<RefKey, u64> = HashMap::new();
    let mut plies = 0;
    loop {
        let pos = *game.position();
        let ctx = || {
            format!(
                "rules {rules:?}, seed {seed}, start {start:?}, ply {plies}, record {}\n{pos}",
                game.record()
            )
        };
        assert_eq!(RefState::of(&pos), r, "state differs from the reference\n{}", ctx());
        assert_eq!(pos.hash(), pos.compute_hash(), "incremental hash\n{}", ctx());
        let h = *hashes.entry(r.key()).or_insert(pos.hash());
        assert_eq!(h, pos.hash(), "equal positions with different hashes\n{}", ctx());

        let reps = seen.iter().filter(|&&k| k == r.key()).count() as u32;
        let want_reps = if rules.threefold_repetition { reps } else { 1 };
        assert_eq!(game.repetitions(), want_reps, "repetition count\n{}", ctx());
        assert_outcome_matches(pos.outcome(&rules), &ref_outcome(&r, &rules, 1), &ctx);
        assert_outcome_matches(game.outcome(), &ref_outcome(&r, &rules, reps), &ctx);
        assert_observation_matches(&pos, &rules, &r, want_reps, &ctx);

        if game.outcome().is_terminal() {
            assert!(game.legal_actions().is_empty());
            break;
        }
        assert!(plies < PLY_BOUND, "no end after {PLY_BOUND} plies\n{}", ctx());
        let mask = game.legal_actions();
        let a = pick(&mask, &mut rng);
        game.apply(a).unwrap();
        r = r.apply(a.index());
        seen.push(r.key());
        plies += 1;
    }
}

/// Property 2: the legal mask equals the reference along a random game.
fn check_masks_along_game(rules: Rules, seed: u64) {
    random_game(rules, seed, PLY_BOUND, |game| {
        let pos = game.position();
        let reference = RefState::of(pos).legal(&rules);
        let ours = mask_bools(&pos.legal_actions_unchecked(&rules));
        assert_eq!(describe(&ours), describe(&reference), "rules {rules:?}, seed {seed}\n{pos}");
        if game.outcome().is_terminal() {
            assert!(game.legal_actions().is_empty());
        } else {
            assert_eq!(game.legal_actions(), pos.legal_actions_unchecked(&rules));
            assert_eq!(mask_bools(&game.legal_actions()), reference);
        }
        // The position-level mask is empty exactly when the position-level outcome is terminal.
        let checked = pos.legal_actions(&rules);
        if pos.outcome(&rules).is_terminal() {
            assert!(checked.is_empty());
        } else {
            assert_eq!(checked, pos.legal_actions_unchecked(&rules));
        }
    });
}

/// `Position::apply` accepts exactly `pos.legal_actions`, leaves the position unchanged on error
/// (hash included), agrees with `Position::check`, and produces the reference successor.
fn check_apply_on(pos: &Position, rules: &Rules, ctx: &dyn Fn() -> String) {
    let pos = *pos;
    let legal = pos.legal_actions(rules);
    let r = RefState::of(&pos);
    let ref_legal = match ref_outcome(&r, rules, 1) {
        RefOutcome::Ongoing => r.legal(rules),
        _ => vec![false; NUM_ACTIONS],
    };
    assert_eq!(describe(&mask_bools(&legal)), describe(&ref_legal), "{}", ctx());
    let extra = [600u16, 601, 640, 1000, u16::MAX - 1, u16::MAX];
    for a in (0..NUM_ACTIONS as u16).chain(extra).map(Action) {
        let mut p = pos;
        match p.apply(a, rules) {
            Ok(()) => {
                assert!(legal.has(a), "illegal action {a:?} accepted, {}\n{pos}", ctx());
                assert_eq!(p.hash(), p.compute_hash(), "hash after {a:?}, {}\n{pos}", ctx());
                assert_eq!(RefState::of(&p), r.apply(a.index()), "successor of {a:?}, {}\n{pos}", ctx());
            }
            Err(e) => {
                assert!(!legal.has(a), "legal action {a:?} rejected ({e}), {}\n{pos}", ctx());
                assert_eq!(p, pos, "rejected {a:?} changed the position, {}", ctx());
                assert_eq!(p.hash(), pos.hash());
            }
        }
        assert_eq!(pos.check(a, rules).is_ok(), legal.has(a), "check({a:?}) disagrees with apply, {}", ctx());
    }
}

/// Property 3: on every state, `Position::apply` accepts exactly the legal actions, leaves the
/// position unchanged on error, and produces the reference successor on success; `Game::apply`
/// rejects garbage without changing the game.
fn check_apply_along_game(rules: Rules, seed: u64) {
    let mut garbage_rng = Rng::seed_from_u64(seed ^ 0x5eed_6a7b_a6e0_0000);
    random_game(rules, seed, PLY_BOUND, |game| {
        let pos = *game.position();
        check_apply_on(&pos, &rules, &|| format!("seed {seed}"));

        let game_mask = game.legal_actions();
        for _ in 0..16 {
            let a = match garbage_rng.below(3) {
                0 => Action(garbage_rng.next_u64() as u16),
                1 => Action(garbage_rng.below(NUM_ACTIONS as u32) as u16),
                _ => Action(NUM_ACTIONS as u16 + garbage_rng.below(u16::MAX as u32 - 599) as u16),
            };
            let mut g = game.clone();
            let result = g.apply(a);
            if game_mask.has(a) {
                assert!(result.is_ok(), "legal {a:?} rejected by Game::apply");
                assert_eq!(g.history().len(), game.history().len() + 1);
            } else {
                assert!(result.is_err(), "garbage {a:?} accepted by Game::apply, seed {seed}\n{pos}");
                assert_eq!(g.position(), game.position());
                assert_eq!(g.position().hash(), game.position().hash());
                assert_eq!(g.history().len(), game.history().len());
                assert_eq!(g.actions(), game.actions());
                assert_eq!(g.repetitions(), game.repetitions());
                assert_eq!(g.outcome(), game.outcome());
            }
        }
    });
}

// =============================================================================================
// Symmetries
// =============================================================================================

fn map_board(s: Symmetry, b: BitBoard) -> BitBoard {
    let mut out = 0u32;
    for p in 0..NUM_POINTS {
        if has(b.0, p) {
            out |= 1 << s.point(Point::try_index(p).unwrap()).index();
        }
    }
    BitBoard(out)
}

fn map_action(s: Symmetry, a: usize) -> usize {
    let perm = s.permutation();
    if a < 24 {
        perm[a] as usize
    } else {
        let (from, to) = ((a - 24) / 24, (a - 24) % 24);
        24 + perm[from] as usize * 24 + perm[to] as usize
    }
}

/// Property 4: symmetries commute with move generation, outcomes and observations.
fn check_symmetries_on(pos: &Position, rules: &Rules) {
    let mask = pos.legal_actions_unchecked(rules);
    let mut obs = vec![0.0f32; OBS_LEN];
    encode(pos, rules, 1, &mut obs);
    let policy: Vec<f32> = (0..NUM_ACTIONS).map(|a| a as f32).collect();
    for s in Symmetry::all() {
        let t = s.position(pos);
        for c in Color::ALL {
            assert_eq!(t.pieces(c), map_board(s, pos.pieces(c)), "{s:?} maps the board wrongly\n{pos}");
            assert_eq!(t.in_hand(c), pos.in_hand(c));
        }
        assert_eq!(t.current_player(), pos.current_player());
        assert_eq!(t.is_removal_pending(), pos.is_removal_pending());
        assert_eq!((t.turns(), t.quiet_plies()), (pos.turns(), pos.quiet_plies()));
        assert_eq!(t.hash(), t.compute_hash());

        // Legal set of the image == image of the legal set.
        let mapped = s.mask(&mask);
        assert_eq!(t.legal_actions_unchecked(rules), mapped, "{s:?}: legal sets do not commute\n{pos}");
        let by_hand: Vec<usize> = {
            let mut v: Vec<usize> = mask.iter().map(|a| map_action(s, a.index())).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(mapped.iter().map(|a| a.index()).collect::<Vec<_>>(), by_hand);
        assert_eq!(t.legal_actions(rules), s.mask(&pos.legal_actions(rules)));
        assert_eq!(t.outcome(rules), pos.outcome(rules));

        // Observations commute.
        let mut obs_t = vec![0.0f32; OBS_LEN];
        encode(&t, rules, 1, &mut obs_t);
        let mut obs_mapped = vec![f32::NAN; OBS_LEN];
        s.observation(&obs, &mut obs_mapped);
        assert_eq!(obs_t, obs_mapped, "{s:?}: observations do not commute\n{pos}");

        // Policies move with their actions.
        let mut out = vec![f32::NAN; NUM_ACTIONS];
        s.policy(&policy, &mut out);
        for a in 0..NUM_ACTIONS {
            assert_eq!(out[map_action(s, a)], a as f32);
        }
    }
}

// =============================================================================================
// VecEnv
// =============================================================================================

/// One env of the reference: a plain `Game` stepped by hand.
struct RefEnv {
    game: Game,
    rng: Rng,
    /// The game has ended and has not been restarted.
    done: bool,
    /// The current game's outcome (a loss by illegal action included).
    outcome: Outcome,
    final_outcome: Outcome,
}

/// What the reference expects of one env's rows after a step.
struct Expected {
    obs: Vec<f32>,
    final_obs: Option<Vec<f32>>,
    mask: ActionMask,
    player: u8,
    reward: [f32; 2],
    terminated: bool,
    truncated: bool,
    error: bool,
}

fn rewards_of(outcome: Outcome) -> [f32; 2] {
    match outcome.winner() {
        Some(Color::White) => [1.0, -1.0],
        Some(Color::Black) => [-1.0, 1.0],
        None => [0.0, 0.0],
    }
}

fn encode_game(game: &Game) -> Vec<f32> {
    let mut obs = vec![0.0f32; OBS_LEN];
    encode(game.position(), game.rules(), game.repetitions(), &mut obs);
    obs
}

impl RefEnv {
    fn new(rules: Rules, seed: u64, opening_plies: u32) -> RefEnv {
        let mut env = RefEnv {
            game: Game::new(rules),
            rng: Rng::seed_from_u64(seed),
            done: false,
            outcome: Outcome::Ongoing,
            final_outcome: Outcome::Ongoing,
        };
        env.new_game(opening_plies);
        env
    }

    fn new_game(&mut self, opening_plies: u32) {
        self.game.random_opening(&mut self.rng, opening_plies);
        self.done = false;
        self.outcome = self.game.outcome();
    }
}

/// `Game::random_opening` as its documentation describes it: reset, play `plies` uniformly
/// random legal actions, and replay with the next random numbers while that ends the game
/// (64 tries, then the start position).
fn spelled_out_opening(rules: Rules, rng: &mut Rng, plies: u32) -> Game {
    for _ in 0..64 {
        let mut game = Game::new(rules);
        for _ in 0..plies {
            let mask = game.legal_actions();
            if mask.is_empty() {
                break;
            }
            game.apply(pick(&mask, rng)).unwrap();
        }
        if !game.outcome().is_terminal() {
            return game;
        }
    }
    Game::new(rules)
}

impl RefEnv {
    fn mask(&self) -> ActionMask {
        if self.done || self.outcome.is_terminal() { ActionMask::EMPTY } else { self.game.legal_actions() }
    }

    fn expected(&self, reward: [f32; 2], ended: Option<Outcome>, final_obs: Option<Vec<f32>>) -> Expected {
        Expected {
            obs: encode_game(&self.game),
            final_obs,
            mask: self.mask(),
            player: self.game.current_player().index() as u8,
            reward,
            terminated: ended.is_some_and(|o| !o.is_truncation()),
            truncated: ended.is_some_and(|o| o.is_truncation()),
            error: false,
        }
    }

    /// One step; returns what the env's rows must hold and whether a game ended.
    fn step(&mut self, action: Action, config: &VecEnvConfig) -> (Expected, bool) {
        let plies = config.opening_plies;
        if self.done {
            if config.auto_reset == AutoReset::Off {
                // A finished game stays finished: zero rewards, flags kept.
                return (self.expected([0.0; 2], Some(self.final_outcome), None), false);
            }
            self.new_game(plies);
            return (self.expected([0.0; 2], None, None), false);
        }
        let mover = self.game.current_player();
        let outcome = match self.game.apply(action) {
            Ok(()) => self.game.outcome(),
            Err(_) if config.illegal_action == IllegalActionMode::Error => {
                // Rejected: nothing changes, and the flags of an ongoing game are clear.
                let mut e = self.expected([0.0; 2], None, None);
                e.error = true;
                return (e, false);
            }
            Err(_) => Outcome::Win { winner: mover.opponent(), reason: WinReason::IllegalAction },
        };
        self.outcome = outcome;
        if !outcome.is_terminal() {
            return (self.expected([0.0; 2], None, None), false);
        }
        self.final_outcome = outcome;
        let reward = rewards_of(outcome);
        if config.auto_reset == AutoReset::SameStep {
            let final_obs = encode_game(&self.game);
            self.new_game(plies);
            (self.expected(reward, Some(outcome), Some(final_obs)), true)
        } else {
            self.done = true;
            (self.expected(reward, Some(outcome), None), true)
        }
    }
}

fn assert_env_row(env: &VecEnv, i: usize, e: &Expected, step: usize) {
    let row = i * OBS_LEN..(i + 1) * OBS_LEN;
    assert_eq!(&env.observations()[row.clone()], &e.obs[..], "env {i}, step {step}: observation");
    if let Some(f) = &e.final_obs {
        assert_eq!(&env.final_observations()[row], &f[..], "env {i}, step {step}: final observation");
    }
    assert_eq!(env.masks()[i], e.mask, "env {i}, step {step}: mask");
    assert_eq!(env.current_player()[i], e.player, "env {i}, step {step}: current player");
    assert_eq!(env.rewards()[i], e.reward, "env {i}, step {step}: rewards");
    assert_eq!(env.terminated()[i], e.terminated, "env {i}, step {step}: terminated");
    assert_eq!(env.truncated()[i], e.truncated, "env {i}, step {step}: truncated");
    assert_eq!(env.error(i).is_some(), e.error, "env {i}, step {step}: error {:?}", env.error(i));
}

fn auto_reset_of(i: u8) -> AutoReset {
    [AutoReset::NextStep, AutoReset::SameStep, AutoReset::Off][i as usize % 3]
}

fn vec_config(n: usize, rules: Rules, seed: u64, mode: AutoReset, opening_plies: u32) -> VecEnvConfig {
    VecEnvConfig {
        num_envs: n,
        rules,
        seed,
        auto_reset: mode,
        opening_plies,
        illegal_action: IllegalActionMode::Error,
    }
}

/// An action outside `mask` (out of range or illegal).
fn illegal_action(mask: &ActionMask, rng: &mut Rng) -> Action {
    loop {
        let a = if rng.below(2) == 0 {
            Action(rng.below(NUM_ACTIONS as u32) as u16)
        } else {
            Action(rng.next_u64() as u16)
        };
        if !mask.has(a) {
            return a;
        }
    }
}

/// Property 5: a `VecEnv` equals N games stepped one after another by hand. Actions are legal,
/// except that with `illegal_rate > 0` about one in `illegal_rate` is not.
fn check_vec_env_against_games(config: VecEnvConfig, action_seed: u64, steps: usize, illegal_rate: u32) {
    let n = config.num_envs;
    let mut env = VecEnv::new(config.clone()).unwrap();
    let mut refs: Vec<RefEnv> = (0..n)
        .map(|i| RefEnv::new(config.rules, config.seed.wrapping_add(i as u64), config.opening_plies))
        .collect();
    for (i, r) in refs.iter().enumerate() {
        // `Game::random_opening` does what its documentation says, and leaves the generator
        // where the documented procedure does.
        let mut rng = Rng::seed_from_u64(config.seed.wrapping_add(i as u64));
        let game = spelled_out_opening(config.rules, &mut rng, config.opening_plies);
        assert_eq!(game.position(), r.game.position());
        assert_eq!(game.actions(), r.game.actions());
        assert_eq!(rng, r.rng);
        assert_env_row(&env, i, &r.expected([0.0; 2], None, None), 0);
    }
    let mut action_rng = Rng::seed_from_u64(action_seed);
    for step in 1..=steps {
        let actions: Vec<Action> = refs
            .iter()
            .map(|r| {
                let mask = r.mask();
                if mask.is_empty() {
                    Action(action_rng.next_u64() as u16)
                } else if illegal_rate > 0 && action_rng.below(illegal_rate) == 0 {
                    illegal_action(&mask, &mut action_rng)
                } else {
                    pick(&mask, &mut action_rng)
                }
            })
            .collect();
        let info = env.step(&actions).unwrap();
        let (mut ended, mut errors) = (0, 0);
        for (i, r) in refs.iter_mut().enumerate() {
            let (e, end) = r.step(actions[i], &config);
            assert_env_row(&env, i, &e, step);
            assert_eq!(env.outcome(i), r.outcome, "env {i}, step {step}: outcome");
            assert_eq!(env.final_outcome(i), r.final_outcome, "env {i}, step {step}: final outcome");
            assert_eq!(env.game(i).position(), r.game.position(), "env {i}, step {step}: position");
            assert_eq!(env.game(i).actions(), r.game.actions(), "env {i}, step {step}: actions");
            ended += end as usize;
            errors += e.error as usize;
        }
        assert_eq!(info.num_errors, errors, "step {step}");
        assert_eq!(info.num_finished, ended, "step {step}");
    }
}

fn pool(threads: usize) -> Arc<rayon::ThreadPool> {
    Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap())
}

/// Property 5b: the thread count does not change a single byte of the buffers.
fn check_threads_agree(n: usize, rules: Rules, seed: u64, opening_plies: u32, mode: AutoReset, steps: usize) {
    let config = vec_config(n, rules, seed, mode, opening_plies);
    let mut one = VecEnv::new(config.clone()).unwrap().with_thread_pool(pool(1));
    let mut two = VecEnv::new(config.clone()).unwrap().with_thread_pool(pool(2));
    let mut four = VecEnv::new(config).unwrap().with_thread_pool(pool(4));
    let mut rng = Rng::seed_from_u64(seed ^ 0xabcd);
    for step in 0..steps {
        for other in [&two, &four] {
            assert_eq!(one.observations(), other.observations(), "step {step}");
            assert_eq!(one.final_observations(), other.final_observations(), "step {step}");
            assert_eq!(one.masks(), other.masks(), "step {step}");
            assert_eq!(one.current_player(), other.current_player(), "step {step}");
            assert_eq!(one.rewards(), other.rewards(), "step {step}");
            assert_eq!(one.terminated(), other.terminated(), "step {step}");
            assert_eq!(one.truncated(), other.truncated(), "step {step}");
        }
        let actions: Vec<Action> =
            one.masks()
                .iter()
                .map(|m| {
                    if m.is_empty() {
                        Action(rng.below(NUM_ACTIONS as u32) as u16)
                    } else {
                        pick(m, &mut rng)
                    }
                })
                .collect();
        let a = one.step(&actions).unwrap();
        let b = two.step(&actions).unwrap();
        let c = four.step(&actions).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
    }
}

// =============================================================================================
// Deterministic checks of the reference tables and of the symmetry group
// =============================================================================================

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
fn symmetries_preserve_reference_adjacency_and_mills() {
    assert_eq!(Symmetry::all().count(), NUM_SYMMETRIES);
    for s in Symmetry::all() {
        let perm = s.permutation();
        let mut seen = [false; 24];
        for &q in perm {
            seen[q as usize] = true;
        }
        assert!(seen.iter().all(|&x| x), "{s:?} is not a permutation");
        for a in 0..24 {
            for b in 0..24 {
                assert_eq!(ref_adjacent(a, b), ref_adjacent(perm[a] as usize, perm[b] as usize), "{s:?}");
            }
        }
        for m in REF_MILLS {
            let mut image: Vec<usize> = m.iter().map(|&p| perm[p] as usize).collect();
            image.sort_unstable();
            assert!(
                REF_MILLS.iter().any(|n| {
                    let mut n = n.to_vec();
                    n.sort_unstable();
                    n == image
                }),
                "{s:?} breaks mill {m:?}"
            );
        }
    }
    for a in Symmetry::all() {
        for b in Symmetry::all() {
            if a < b {
                assert_ne!(a.permutation(), b.permutation(), "{a:?} and {b:?} coincide");
            }
        }
    }
    assert_eq!(Symmetry::IDENTITY.permutation(), &std::array::from_fn::<u8, 24, _>(|i| i as u8));
}

#[test]
fn symmetry_group_is_closed_with_inverses() {
    for a in Symmetry::all() {
        for b in Symmetry::all() {
            let c = a.compose(b);
            assert!(c.index() < NUM_SYMMETRIES);
            for p in Point::ALL {
                assert_eq!(c.point(p), a.point(b.point(p)), "{a:?}∘{b:?} is not the composed map");
            }
            for x in 0..NUM_ACTIONS as u16 {
                assert_eq!(c.action(Action(x)), a.action(b.action(Action(x))));
            }
        }
        let inv = a.inverse();
        assert_eq!(a.compose(inv), Symmetry::IDENTITY, "{a:?}");
        assert_eq!(inv.compose(a), Symmetry::IDENTITY, "{a:?}");
        for p in Point::ALL {
            assert_eq!(inv.point(a.point(p)), p);
        }
        // Out-of-range actions map to themselves.
        assert_eq!(a.action(Action(600)), Action(600));
        assert_eq!(a.action(Action(u16::MAX)), Action(u16::MAX));
    }
}

/// Found by `vec_env_matches_single_games_with_illegal_actions`: in `SameStep` mode, the step
/// after a game ended keeps that game's `terminated`/`truncated` flags when its action is
/// rejected (`IllegalActionMode::Error`), although it zeroes the rewards and the env already holds
/// a new, ongoing game. An RL loop would count the old episode as ending twice.
#[test]
fn same_step_flags_are_cleared_on_a_rejected_action() {
    let rules = Rules { turn_cap: Some(1), ..Rules::openspiel() };
    let mut env = VecEnv::new(vec_config(1, rules, 0, AutoReset::SameStep, 0)).unwrap();
    env.step(&[Action(0)]).unwrap(); // one turn: the game ends by the turn cap, a new one starts
    assert_eq!((env.terminated()[0], env.truncated()[0]), (false, true));
    assert_eq!(env.masks()[0].count(), 24, "a new game is running");
    let info = env.step(&[Action(600)]).unwrap(); // rejected
    assert_eq!(info.num_errors, 1);
    assert_eq!(env.rewards()[0], [0.0, 0.0]);
    assert!(!env.truncated()[0], "no game ended on this step, yet the flag of the previous one is kept");
    assert!(!env.terminated()[0]);
}

// =============================================================================================
// The properties
// =============================================================================================

fn config(cases: u32) -> ProptestConfig {
    // No regression files: this suite must not write into the source tree.
    ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(cases) }
}

proptest! {
    #![proptest_config(config(128))]

    /// 1. Random games never panic and always end, in agreement with the reference model
    ///    (state, counters, repetitions, outcome, hash).
    #[test]
    fn random_games_end_and_follow_the_reference(seed in any::<u64>(), rules in 0u8..4) {
        check_game_against_reference(rules_of(rules), seed);
    }

    /// 1b. The same from synthetic start positions (a `Game` with an empty history and
    ///     arbitrary counters).
    #[test]
    fn games_from_synthetic_positions_follow_the_reference(
        seed in any::<u64>(),
        play_seed in any::<u64>(),
        rules in 0u8..4,
    ) {
        check_game_from(rules_of(rules), synthetic_position(seed), play_seed);
    }

    /// 2. The legal mask equals the reference enumeration on every state of a random game.
    #[test]
    fn legal_mask_matches_reference(seed in any::<u64>(), rules in 0u8..4) {
        check_masks_along_game(rules_of(rules), seed);
    }

    /// 3. `Position::apply` accepts exactly the legal actions and leaves the position unchanged
    ///    otherwise; `Game::apply` rejects garbage without a trace.
    #[test]
    fn apply_accepts_exactly_the_legal_actions(seed in any::<u64>(), rules in 0u8..4) {
        check_apply_along_game(rules_of(rules), seed);
    }

    /// 4. Symmetries commute with the legal set, outcome and observation of random positions.
    #[test]
    fn symmetries_commute_with_rules_and_features(seed in any::<u64>(), plies in 0usize..400, rules in 0u8..4) {
        let rules = rules_of(rules);
        check_symmetries_on(&random_position(rules, seed, plies), &rules);
    }

    /// 6. The incremental hash equals the hash computed from scratch.
    #[test]
    fn incremental_hash_matches_recomputed(seed in any::<u64>(), rules in 0u8..4) {
        random_game(rules_of(rules), seed, PLY_BOUND, |game| {
            let pos = game.position();
            assert_eq!(pos.hash(), pos.compute_hash(), "seed {seed}\n{pos}");
            for h in game.history() {
                assert_eq!(h.hash(), h.compute_hash());
            }
        });
    }
}

proptest! {
    #![proptest_config(config(1024))]

    /// 2b. The same on positions built directly, including blocked and all-in-mill ones.
    #[test]
    fn synthetic_positions_match_reference(seed in any::<u64>(), rules in 0u8..4) {
        check_synthetic(seed, rules_of(rules));
    }
}

proptest! {
    #![proptest_config(config(32))]

    /// 5. `VecEnv` equals N games stepped one by one with the same seeds and actions.
    #[test]
    fn vec_env_matches_single_games(
        n in 1usize..40,
        seed in any::<u64>(),
        opening_plies in 0u32..10,
        auto_reset in 0u8..2,
        rules in 0u8..4,
        action_seed in any::<u64>(),
    ) {
        let config = vec_config(n, rules_of(rules), seed, auto_reset_of(auto_reset), opening_plies);
        check_vec_env_against_games(config, action_seed, 150, 0);
    }

    /// 5a. The same with auto-reset off and some illegal actions, under both illegal-action modes.
    #[test]
    fn vec_env_matches_single_games_with_illegal_actions(
        n in 1usize..40,
        seed in any::<u64>(),
        opening_plies in 0u32..10,
        auto_reset in 0u8..3,
        loss in any::<bool>(),
        rules in 0u8..4,
        action_seed in any::<u64>(),
    ) {
        let mut config = vec_config(n, rules_of(rules), seed, auto_reset_of(auto_reset), opening_plies);
        config.illegal_action = if loss { IllegalActionMode::Loss } else { IllegalActionMode::Error };
        check_vec_env_against_games(config, action_seed, 100, 25);
    }

    /// 5b. The thread count does not change the buffers.
    #[test]
    fn vec_env_is_independent_of_thread_count(
        n in 1usize..100,
        seed in any::<u64>(),
        opening_plies in 0u32..10,
        auto_reset in 0u8..3,
        rules in 0u8..4,
    ) {
        check_threads_agree(n, rules_of(rules), seed, opening_plies, auto_reset_of(auto_reset), 120);
    }
}
