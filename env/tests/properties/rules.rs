//! The rules against the reference: legal masks, successors, outcomes and hashes along random
//! games and on synthetic positions.

use std::collections::HashMap;

use morris_env::{Action, BitBoard, Game, NUM_ACTIONS, Position, Rng, Rules, perft};
use proptest::prelude::*;

use super::config;
use super::games::*;
use super::reference::*;
use super::symmetry::check_symmetries_on;

/// A position of `rules`' variant built directly with `Position::from_parts_for` (not necessarily reachable by play),
/// for states random playouts rarely visit: a player blocked by the opponent, every opposing
/// piece standing in a mill, flying, crowded boards and large counters.
fn synthetic_position(seed: u64, rules: &Rules) -> Position {
    let (geo, double) = (Geometry::of(rules), ref_double(rules));
    let np = geo.n() as u32;
    let n = ref_pieces(rules);
    // Lasker: hands need not alternate (a turn may slide instead of placing).
    let lasker = ref_lasker(rules);
    let mills = geo.mills();
    let mut rng = Rng::seed_from_u64(seed);
    let mut boards = [0u32; 2];
    let mut hands = [0u8; 2];
    let mut side = rng.below(2) as usize;
    let mut want_pending = rng.below(3) == 0;
    // Three men's morris has no removals (a line wins), and no room for two lines' pieces.
    let three = geo == Geometry::Three;
    want_pending &= !three;
    match rng.below(6) {
        // A double mill one move away: the mover holds the rest of two mills through an empty
        // point, and (hands empty) a piece next to it that may slide in, or places it.
        5 if !three => {
            // A point on two mills (every point of the 24-point boards, six's corners).
            let corners: Vec<usize> =
                (0..geo.n()).filter(|&p| mills.iter().filter(|m| m.contains(&p)).count() >= 2).collect();
            let p = corners[rng.below(corners.len() as u32) as usize];
            let through: Vec<&[usize; 3]> = mills.iter().filter(|m| m.contains(&p)).collect();
            let first = rng.below(through.len() as u32) as usize;
            let second = (first + 1 + rng.below(through.len() as u32 - 1) as usize) % through.len();
            for &q in through[first].iter().chain(through[second]) {
                if q != p {
                    boards[side] |= 1 << q;
                }
            }
            if let Some(q) = (0..geo.n()).find(|&q| geo.adjacent(p, q) && !has(boards[side], q)) {
                boards[side] |= 1 << q;
            }
            if rng.below(2) == 0 {
                // Placing: the mover places next, with the hands that makes consistent (and
                // within the variant's pieces).
                boards[side] &= !(1 << p);
                let room = n - boards[side].count_ones() as u8 - side as u8;
                let w = (1 + rng.below(3) as u8).min(room);
                hands = if side == 0 { [w, w] } else { [w, w + 1] };
            }
            let most = (n - hands[1 - side]) as u32;
            while boards[1 - side].count_ones() < (3 + rng.below(4)).min(most) {
                let q = rng.below(np) as usize;
                if q != p && !has(boards[0] | boards[1], q) {
                    boards[1 - side] |= 1 << q;
                }
            }
            want_pending = false;
        }
        // Blocked attempt: the opponent occupies every empty neighbour of the mover's pieces.
        0 => {
            let k = (3 + rng.below(5)).min(n as u32);
            while boards[side].count_ones() < k {
                boards[side] |= 1 << rng.below(np);
            }
            for p in points(boards[side]) {
                for q in 0..geo.n() {
                    // At most n opposing pieces; if more are needed, the mover is not blocked.
                    if geo.adjacent(p, q) && !has(boards[side], q) && boards[1 - side].count_ones() < n as u32
                    {
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
                    let bits: u32 =
                        mills[rng.below(mills.len() as u32) as usize].iter().fold(0, |acc, &q| acc | 1 << q);
                    if (boards[0] | boards[1]) & bits == 0 && (boards[c] | bits).count_ones() <= n as u32 {
                        boards[c] |= bits;
                    }
                }
            }
            for _ in 0..rng.below(3) {
                let (c, q) = (rng.below(2) as usize, rng.below(np) as usize);
                if !has(boards[0] | boards[1], q) && boards[c].count_ones() < n as u32 {
                    boards[c] |= 1 << q;
                }
            }
        }
        // Placing with an empty opposing board and a mill one placement away: closing it
        // removes nothing (rules.md, edge case).
        2 => {
            let w = (1 + rng.below(6) as u8).min(n - 3);
            hands = [w, (w + rng.below(2) as u8).min(n)];
            let placer = if hands[0] == hands[1] { 0 } else { 1 };
            let m = mills[rng.below(mills.len() as u32) as usize];
            let gap = rng.below(3) as usize;
            for (i, &q) in m.iter().enumerate() {
                if i != gap {
                    boards[placer] |= 1 << q;
                }
            }
            let max = (n - hands[placer]) as u32;
            while boards[placer].count_ones() < max.min(2 + rng.below(3)) {
                let q = rng.below(np) as usize;
                if q != m[gap] {
                    boards[placer] |= 1 << q;
                }
            }
            want_pending = false;
        }
        // Random boards, with hands as placements leave them: White places first, so Black
        // holds as many pieces in hand as White, or one more.
        _ => {
            if lasker && rng.below(2) == 1 {
                hands = [rng.below(n as u32 + 1) as u8, rng.below(n as u32 + 1) as u8];
            } else if rng.below(2) == 1 {
                let w = rng.below(n as u32 + 1) as u8;
                hands = [w, (w + rng.below(2) as u8).min(n)];
            }
            for c in 0..2 {
                let max = (n - hands[c]) as u32;
                let count = match rng.below(3) {
                    0 => rng.below(max + 1),
                    1 => max.min(3 + rng.below(2)),
                    _ => max.saturating_sub(rng.below(2)),
                };
                while boards[c].count_ones() < count {
                    let q = rng.below(np) as usize;
                    if !has(boards[0] | boards[1], q) {
                        boards[c] |= 1 << q;
                    }
                }
            }
        }
    }
    // Three men's morris removes nothing, so every player always has all 3 pieces, on the
    // board or in hand.
    for c in 0..2 {
        while three && boards[c].count_ones() + (hands[c] as u32) < n as u32 {
            let q = rng.below(np) as usize;
            if !has(boards[0] | boards[1], q) {
                boards[c] |= 1 << q;
            }
        }
    }
    let pending = if hands == [0, 0] || lasker {
        want_pending && boards[1 - side] != 0
    } else {
        // The placer is to place, or the other player, who just placed, is to remove.
        let placer = if hands[0] == hands[1] { 0 } else { 1 };
        side = if want_pending && boards[placer] != 0 { 1 - placer } else { placer };
        side != placer
    };
    // In morabaraba, a pending removal may be the first of two.
    let pending = pending as u8 + (pending && double && rng.below(2) == 0) as u8;
    let pos = Position::from_parts_for(
        rules,
        BitBoard(boards[0]),
        BitBoard(boards[1]),
        hands,
        color(side),
        pending,
    )
    .unwrap_or_else(|e| panic!("from_parts rejected a consistent position under {rules:?}: {e:?}"));
    pos.with_counters(rng.below(300) as u16, rng.below(120) as u16)
}

/// Property 2b: on synthetic positions too, the mask, outcome, `apply` and symmetries all agree
/// with the reference.
fn check_synthetic(seed: u64, rules: Rules) {
    let pos = synthetic_position(seed, &rules);
    let r = RefState::of(&pos, &rules);
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
    assert_eq!(RefState::of(&Position::start_for(&rules), &rules), RefState::start(&rules));
    check_game_from(rules, Position::start_for(&rules), seed);
}

/// Plays a random game from `start` (with an empty history), checking every state against the
/// reference model, until the game ends; it must end within [`PLY_BOUND`] plies.
fn check_game_from(rules: Rules, start: Position, seed: u64) {
    let mut rng = Rng::seed_from_u64(seed);
    let mut game = Game::from_position(rules, start);
    let mut r = RefState::of(&start, &rules);
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
        assert_eq!(RefState::of(&pos, &rules), r, "state differs from the reference\n{}", ctx());
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
        let reference = RefState::of(pos, &rules).legal(&rules);
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
    let r = RefState::of(&pos, rules);
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
                assert_eq!(
                    RefState::of(&p, rules),
                    r.apply(a.index()),
                    "successor of {a:?}, {}\n{pos}",
                    ctx()
                );
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

/// Perft by the reference model alone (the rules given must have no repetition rule, which
/// needs a history).
fn ref_perft(r: &RefState, rules: &Rules, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if ref_outcome(r, rules, 1) != RefOutcome::Ongoing {
        return 0;
    }
    let legal = r.legal(rules);
    let actions = (0..NUM_ACTIONS).filter(|&a| legal[a]);
    if depth == 1 {
        return actions.count() as u64;
    }
    actions.map(|a| ref_perft(&r.apply(a), rules, depth - 1)).sum()
}

/// Perft from the start (depth 4), from random positions of random games and from synthetic
/// positions (depth 2; the synthetic ones hold whole mills, where morabaraba's double mills
/// and second removals turn up) agrees with the reference model's, for every variant.
#[test]
fn perft_matches_the_reference() {
    use morris_env::Variant;
    for variant in Variant::ALL {
        let rules = Rules { variant, ..Rules::openspiel() };
        let mut double_mills = 0;
        let start = RefState::start(&rules);
        assert_eq!(perft(&mut Game::new(rules), 4), ref_perft(&start, &rules, 4), "{rules:?}");
        for seed in 0..200 {
            let pos = random_position(rules, seed, (seed % 120) as usize);
            let want = ref_perft(&RefState::of(&pos, &rules), &rules, 2);
            assert_eq!(perft(&mut Game::from_position(rules, pos), 2), want, "{rules:?}, seed {seed}\n{pos}");
            let pos = synthetic_position(seed, &rules);
            double_mills += pos.legal_actions(&rules).iter().any(|a| {
                let mut next = pos;
                next.apply_unchecked(a, &rules);
                next.removals_pending() == 2
            }) as u32;
            let want = ref_perft(&RefState::of(&pos, &rules), &rules, 2);
            assert_eq!(
                perft(&mut Game::from_position(rules, pos), 2),
                want,
                "{rules:?}, synthetic {seed}\n{pos}"
            );
        }
        // Morabaraba's double mills are among the positions compared.
        assert_eq!(double_mills > 0, variant == Variant::Morabaraba, "{variant}: {double_mills}");
    }
}

/// Three men's morris's tree is small enough to compare whole: perft to depth 8 from the start
/// (through placement and two slides or flights each), with and without flying.
#[test]
fn perft_three_matches_the_reference_to_depth_8() {
    for flying in [false, true] {
        let rules = Rules { flying, ..Rules::three() };
        let start = RefState::start(&rules);
        let no_repetition = Rules { threefold_repetition: false, ..rules };
        assert_eq!(perft(&mut Game::new(rules), 8), ref_perft(&start, &no_repetition, 8), "{rules:?}");
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// 1. Random games never panic and always end, in agreement with the reference model
    ///    (state, counters, repetitions, outcome, hash).
    #[test]
    fn random_games_end_and_follow_the_reference(seed in any::<u64>(), rules in 0u8..RULE_SETS) {
        check_game_against_reference(rules_of(rules), seed);
    }

    /// 1b. The same from synthetic start positions (a `Game` with an empty history and
    ///     arbitrary counters).
    #[test]
    fn games_from_synthetic_positions_follow_the_reference(
        seed in any::<u64>(),
        play_seed in any::<u64>(),
        rules in 0u8..RULE_SETS,
    ) {
        let rules = rules_of(rules);
        check_game_from(rules, synthetic_position(seed, &rules), play_seed);
    }

    /// 2. The legal mask equals the reference enumeration on every state of a random game.
    #[test]
    fn legal_mask_matches_reference(seed in any::<u64>(), rules in 0u8..RULE_SETS) {
        check_masks_along_game(rules_of(rules), seed);
    }

    /// 3. `Position::apply` accepts exactly the legal actions and leaves the position unchanged
    ///    otherwise; `Game::apply` rejects garbage without a trace.
    #[test]
    fn apply_accepts_exactly_the_legal_actions(seed in any::<u64>(), rules in 0u8..RULE_SETS) {
        check_apply_along_game(rules_of(rules), seed);
    }

    /// 6. The incremental hash equals the hash computed from scratch.
    #[test]
    fn incremental_hash_matches_recomputed(seed in any::<u64>(), rules in 0u8..RULE_SETS) {
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
    fn synthetic_positions_match_reference(seed in any::<u64>(), rules in 0u8..RULE_SETS) {
        check_synthetic(seed, rules_of(rules));
    }
}
