//! Tests of the tablebase: every slot of the small sectors checked against its successors
//! with the rules' own move generation, against an alpha-beta search that does not use the
//! tables, and the files' integrity.

use std::sync::OnceLock;

use super::entry::{DIST, LOSS, WIN};
use super::*;
use crate::Point;
use crate::minimax::{Minimax, MinimaxConfig, forced_result_plies};
use crate::outcome::Outcome;
use crate::{Agent, Game, Rng};

/// Sectors up to 4 pieces a side, built once for all tests of this module.
fn small() -> &'static (tempfile::TempDir, Tablebase) {
    static TB: OnceLock<(tempfile::TempDir, Tablebase)> = OnceLock::new();
    TB.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        build(dir.path(), 4, &Rules::standard(), &|_| {}).expect("build");
        let tb = Tablebase::open(dir.path()).expect("open");
        (dir, tb)
    })
}

#[test]
fn every_slot_is_consistent_with_its_successors() {
    let (_, tb) = small();
    let mut checked = 0u64;
    for a in 3..=4 {
        for b in 3..=4 {
            let report = tb.check_sector(a, b, None, 0).expect("sector built");
            assert_eq!(report.mismatches, 0, "{a}v{b}: {:?}", report.examples);
            assert_eq!(report.slots, tb.ix.len(a, b) as u64);
            checked += report.checked;
        }
    }
    assert!(checked > 1_000_000, "only {checked} slots checked");
}

#[test]
fn the_check_finds_a_wrong_value_and_names_its_position() {
    let dir = tempfile::tempdir().expect("temp dir");
    build(dir.path(), 4, &Rules::standard(), &|_| {}).expect("build");
    let path = file::sector_path(dir.path(), 4, 3);
    let (header, mut values) = file::read(&path).expect("read");
    let tb = Tablebase::open(dir.path()).expect("open");
    // A won slot made a draw, and a drawn one a win in 5, written with a valid checksum.
    let won = (0..values.len()).find(|&i| tb.ix.position(4, 3, i).2 && values[i] & WIN != 0).expect("a win");
    let drawn = (0..values.len()).find(|&i| tb.ix.position(4, 3, i).2 && values[i] == 0).expect("a draw");
    drop(tb);
    values[won] = 0;
    values[drawn] = WIN | 5;
    file::write(&path, header, &values).expect("write");
    let tb = Tablebase::open(dir.path()).expect("open");
    tb.verify().expect("the checksum is valid: only the rules can tell");
    let report = tb.check_sector(4, 3, None, 0).expect("check");
    assert_eq!(report.mismatches, 2, "{:?}", report.examples);
    let slots: Vec<u64> = report.examples.iter().map(|m| m.slot).collect();
    let mut want = vec![won as u64, drawn as u64];
    want.sort_unstable();
    assert_eq!(slots, want);
    let m = report.examples.iter().find(|m| m.slot == drawn as u64).expect("listed");
    assert_eq!(m.stored, "win in 5");
    assert_eq!(m.expected, "draw");
    let (mover, _, _) = tb.ix.position(4, 3, drawn);
    assert_eq!(m.mover, BitBoard(mover).iter().map(|p| p.to_string()).collect::<Vec<_>>().join(" "));
    // Sampling finds nothing wrong in a sound sector, and a missing sector is named.
    assert_eq!(tb.check_sector(3, 4, Some(500), 1).expect("check").mismatches, 0);
    assert!(matches!(tb.check_sector(5, 3, None, 0), Err(TablebaseError::MissingSector { .. })));
}

fn position_from_bits(mover: u32, opp: u32) -> Position {
    Position::from_parts(BitBoard(mover), BitBoard(opp), [0, 0], Color::White, false).expect("valid position")
}

#[test]
fn values_agree_with_a_search_that_does_not_use_the_tables() {
    // In 3v3 every removal ends the game, so the distance to the next removal is the distance
    // to the end, which a full-width search to that depth must find exactly.
    let (_, tb) = small();
    let mut rng = Rng::seed_from_u64(11);
    let values = tb.sectors[3][3].as_ref().expect("3v3").values();
    // Up to 100 positions of each kind (draws are rare in 3v3), decided ones within 5 turns.
    let mut kinds: [Vec<usize>; 3] = Default::default();
    for (i, &v) in values.iter().enumerate() {
        if tb.ix.position(3, 3, i).2 && v & DIST <= 5 {
            kinds[(v >> 14) as usize % 3].push(i);
        }
    }
    let mut checked = [0; 3];
    for (k, slots) in kinds.iter().enumerate() {
        for _ in 0..100.min(slots.len()) {
            let i = slots[rng.below(slots.len() as u32) as usize];
            let (m, o, _) = tb.ix.position(3, 3, i);
            let v = values[i];
            let d = (v & DIST) as i32;
            let game = Game::from_position(Rules::standard(), position_from_bits(m, o));
            let depth = if v == 0 { 4 } else { d as u32 };
            let mut mm = Minimax::new(MinimaxConfig::depth(depth));
            let forced = forced_result_plies(mm.search(&game).score);
            // A turn that ends the game is a move and a removal: one more ply than turns.
            if v & WIN != 0 {
                assert_eq!(forced, Some(d + 1), "slot {i}: tables say win in {d} turns");
            } else if v & LOSS != 0 {
                assert_eq!(forced, Some(-(d + 1)), "slot {i}: tables say loss in {d} turns");
            } else {
                assert_eq!(forced, None, "slot {i}: tables say draw, search found {forced:?}");
            }
            checked[k] += 1;
        }
    }
    assert!(checked.iter().all(|&c| c > 0), "sample lacks a kind: {checked:?} (draw, win, loss)");
}

#[test]
fn probe_moves_follow_the_distances_and_a_pending_removal_is_probed() {
    let (_, tb) = small();
    let mut rng = Rng::seed_from_u64(5);
    let mut seen = 0;
    while seen < 200 {
        let a = 3 + rng.below(2) as usize;
        let b = 3 + rng.below(2) as usize;
        let sector = tb.sectors[a][b].as_ref().expect("sector");
        let i = rng.below(sector.len() as u32) as usize;
        let (m, o, canonical) = tb.ix.position(a, b, i);
        if !canonical || sector.get(i) & WIN == 0 {
            continue;
        }
        seen += 1;
        let pos = position_from_bits(m, o);
        let probe = tb.probe(&pos).expect("covered");
        let moves = tb.moves(&pos).expect("covered");
        assert_eq!(moves[0].1.wdl, probe.wdl);
        assert_eq!(moves[0].1.plies, probe.plies, "best move reaches the removal in the stored distance");
        // Playing the best move (and its removal) keeps the win.
        let mut child = pos;
        child.apply_unchecked(moves[0].0, &NINE);
        if child.current_player() == pos.current_player() {
            assert_eq!(tb.probe(&child).map(|p| p.wdl), Some(Wdl::Win));
        } else if child.outcome(&tb.rules()) == Outcome::Ongoing {
            assert_eq!(tb.probe(&child).map(|p| p.wdl), Some(Wdl::Loss));
        }
    }
}

#[test]
fn the_counter_is_respected() {
    let (_, tb) = small();
    let values = tb.sectors[4][4].as_ref().expect("4v4").values();
    let (i, &v) =
        values.iter().enumerate().find(|&(_, &v)| v & WIN != 0 && v & DIST > 3).expect("a long win");
    let (m, o, _) = tb.ix.position(4, 4, i);
    let d = v & DIST;
    let pos = position_from_bits(m, o);
    assert_eq!(tb.probe(&pos.with_counters(0, 100 - d)).map(|p| p.wdl), Some(Wdl::Win));
    assert_eq!(tb.probe(&pos.with_counters(0, 101 - d)).map(|p| p.wdl), Some(Wdl::Draw));
}

#[test]
fn a_killed_build_resumes_and_damaged_files_are_set_aside() {
    let dir = tempfile::tempdir().expect("temp dir");
    build(dir.path(), 3, &Rules::standard(), &|_| {}).expect("build");
    let path = dir.path().join("sector-3v3.tb");
    let good = fs::read(&path).expect("read");
    // A leftover temporary file of a killed build, and a bit flip in the table.
    fs::write(dir.path().join("sector-4v3.tb.tmp"), b"partial").expect("write");
    let mut bad = good.clone();
    bad[1000] ^= 4;
    fs::write(&path, &bad).expect("write");
    // Opening maps the files and checks headers and sizes; the checksum is checked on demand.
    let opened = Tablebase::open(dir.path()).expect("headers and sizes are intact");
    assert!(matches!(opened.verify(), Err(TablebaseError::Corrupt { .. })));
    drop(opened);
    let mut short = good.clone();
    short.truncate(good.len() - 2);
    fs::write(&path, &short).expect("write");
    assert!(matches!(Tablebase::open(dir.path()), Err(TablebaseError::Corrupt { .. })), "a short file");
    fs::write(&path, &bad).expect("write");
    let events = Mutex::new(Vec::new());
    build(dir.path(), 3, &Rules::standard(), &|e| events.lock().expect("lock").push(e)).expect("rebuild");
    let events = events.into_inner().expect("lock");
    assert!(events.iter().any(|e| matches!(e, BuildEvent::SetAside { .. })));
    assert!(dir.path().join("sector-3v3.tb.corrupt-1").exists(), "the damaged file is kept aside");
    assert!(!dir.path().join("sector-4v3.tb.tmp").exists());
    assert_eq!(fs::read(&path).expect("read"), good, "rebuilt bit for bit");
    // A second run keeps the verified sector.
    let events = Mutex::new(Vec::new());
    build(dir.path(), 3, &Rules::standard(), &|e| events.lock().expect("lock").push(e)).expect("resume");
    assert!(events.into_inner().expect("lock").iter().all(|e| matches!(e, BuildEvent::Kept(_))));
    // Other rules are refused.
    let err = build(dir.path(), 3, &Rules::openspiel(), &|_| {}).expect_err("other rules");
    assert!(matches!(err, TablebaseError::RulesMismatch { .. }));
    assert!(tb_check_rules(dir.path()).is_err());
    assert!(matches!(Tablebase::open(&dir.path().join("nothing")), Err(TablebaseError::Missing(_))));
    assert!(matches!(build(dir.path(), 10, &Rules::standard(), &|_| {}), Err(TablebaseError::MaxPieces(10))));
    assert!(matches!(build(dir.path(), 2, &Rules::standard(), &|_| {}), Err(TablebaseError::MaxPieces(2))));
}

fn tb_check_rules(dir: &Path) -> Result<(), TablebaseError> {
    Tablebase::open(dir)?.check_rules(&Rules::openspiel())
}

#[test]
fn summaries_count_every_class_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let s = build(dir.path(), 3, &Rules::standard(), &|_| {}).expect("build");
    assert_eq!(s.len(), 1);
    let s = &s[0];
    assert_eq!(s.wins + s.wins_beyond_rule + s.draws + s.losses + s.losses_beyond_rule, s.positions);
    // Burnside: 3v3 positions (mover to move) up to the 16 symmetries.
    let mut seen = std::collections::HashSet::new();
    let ix = Indexer::new(3);
    for m in 0u32..1 << 24 {
        if m.count_ones() != 3 {
            continue;
        }
        // Every opponent set, through the index: the distinct slots are the classes.
        for_each_subset(!m & 0xff_ffff, 3, &mut |o| {
            seen.insert(ix.index(m, o));
        });
    }
    assert_eq!(seen.len() as u64, s.positions);
}

fn for_each_subset(pool: u32, k: u32, f: &mut impl FnMut(u32)) {
    fn go(pool: u32, k: u32, acc: u32, f: &mut impl FnMut(u32)) {
        if k == 0 {
            f(acc);
            return;
        }
        let mut rest = pool;
        while rest != 0 {
            let p = rest & rest.wrapping_neg();
            rest ^= p;
            go(rest, k - 1, acc | p, f);
        }
    }
    go(pool, k, 0, f);
}

/// The value of a position for the player to move by plain negamax over the rules' own
/// actions (placements, removals), with the tables only where both hands are empty: the
/// reference for the placement solver, with no window, ordering or transposition table.
fn reference_value(tb: &Tablebase, pos: &Position) -> i8 {
    let rules = tb.rules();
    let me = pos.current_player();
    match pos.outcome(&rules) {
        Outcome::Win { winner, .. } => return if winner == me { 1 } else { -1 },
        Outcome::Draw(_) => return 0,
        Outcome::Ongoing => {}
    }
    if pos.in_hand(Color::White) == 0 && pos.in_hand(Color::Black) == 0 && !pos.is_removal_pending() {
        return placement::wdl_value(tb.probe(pos).expect("a leaf within the small tables").wdl);
    }
    let mut best = -1;
    for a in pos.legal_actions(&rules).iter() {
        let mut child = *pos;
        child.apply_unchecked(a, &NINE);
        let v = reference_value(tb, &child);
        best = best.max(if child.current_player() == me { v } else { -v });
    }
    best
}

/// Placement positions whose game stays within 4 pieces a side: `on_board` pieces and
/// `in_hand` in hand for White, Black with as many (one more in hand if Black is to move).
fn placement_position(rng: &mut Rng, on_board: u32, in_hand: u8, black_to_move: bool) -> Position {
    assert!(on_board + in_hand as u32 >= 3, "a player with two pieces has lost");
    loop {
        let mut w = BitBoard::EMPTY;
        let mut b = BitBoard::EMPTY;
        let white_board = on_board + black_to_move as u32;
        while w.count() < white_board || b.count() < on_board {
            let p = Point::ALL[rng.below(24) as usize];
            if (w | b).has(p) {
                continue;
            }
            if w.count() < white_board { w |= p.bit() } else { b |= p.bit() }
        }
        let hands = if black_to_move { [in_hand - 1, in_hand] } else { [in_hand, in_hand] };
        let side = if black_to_move { Color::Black } else { Color::White };
        let pos = Position::from_parts(w, b, hands, side, false).expect("consistent hands");
        if pos.outcome(&Rules::standard()) == Outcome::Ongoing {
            return pos;
        }
    }
}

#[test]
fn the_placement_solver_agrees_with_plain_negamax_over_the_rules() {
    let (_, tb) = small();
    let solver = Placement::new(tb, &Rules::standard(), 16).expect("same rules");
    let mut rng = Rng::seed_from_u64(21);
    let mut seen = [0u32; 3];
    // Both colours to move, 1 or 2 in hand, 1 to 3 on the board: every game stays within 4v4.
    for (on_board, in_hand, black) in
        [(2, 2, false), (1, 2, true), (2, 2, true), (3, 1, false), (2, 1, true), (1, 2, false)]
    {
        for _ in 0..12 {
            let pos = placement_position(&mut rng, on_board, in_hand, black);
            let want = reference_value(tb, &pos);
            let got = solver.value(&pos).expect("covered");
            assert_eq!(placement::wdl_value(got), want, "{pos:?}");
            seen[(want + 1) as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n > 0), "the sample lacks a value: {seen:?} (loss, draw, win)");
    let stats = solver.stats();
    assert!(stats.nodes > 0 && stats.leaves > 0 && stats.leaves <= stats.nodes);
    // A pending removal (White has just closed a7-d7-g7) is resolved as the mover's best
    // removal, by the solver as by the rules.
    let points = position_from_points("a7 d7 g7", "a1 g1", Color::White).expect("points");
    let pos = Position::from_parts(
        points.pieces(Color::White),
        points.pieces(Color::Black),
        [1, 2],
        Color::White,
        true,
    )
    .expect("a pending removal");
    assert_eq!(placement::wdl_value(solver.value(&pos).expect("covered")), reference_value(tb, &pos));
    // A finished game is not a position to solve.
    let over = Position::from_parts(
        points.pieces(Color::White),
        points.pieces(Color::Black),
        [0, 0],
        Color::Black,
        false,
    )
    .expect("parts");
    assert!(matches!(solver.value(&over), Err(TablebaseError::NotCovered(_))));
}

#[test]
fn placement_values_agree_with_a_full_width_search_that_does_not_use_the_tables() {
    // With three pieces a side (two on the board, one in hand) one removal decides the game,
    // so many results are forced within a few plies, where a search without tables is exact.
    let (_, tb) = small();
    let solver = Placement::new(tb, &Rules::standard(), 16).expect("same rules");
    let mut rng = Rng::seed_from_u64(8);
    let mut decided = [0u32; 2];
    let mut draws = 0;
    for i in 0..60 {
        // Three pieces a side (decided fast) and four (drawn more often).
        let pos = placement_position(&mut rng, 2 + (i % 4 >= 2) as u32, 1, i % 2 == 1);
        let value = solver.value(&pos).expect("covered");
        let mut mm = Minimax::new(MinimaxConfig::depth(6));
        let forced = forced_result_plies(mm.search(&Game::from_position(Rules::standard(), pos)).score);
        match forced {
            Some(p) if p > 0 => {
                assert_eq!(value, Wdl::Win, "search forces a win in {p} plies: {pos:?}");
                decided[1] += 1;
            }
            Some(p) => {
                assert_eq!(value, Wdl::Loss, "search forces a loss in {} plies: {pos:?}", -p);
                decided[0] += 1;
            }
            None => {
                // Not forced within the horizon: the tables may still decide it later, but a
                // draw in the tables must not be one the search can force.
                draws += (value == Wdl::Draw) as u32;
            }
        }
    }
    assert!(decided.iter().all(|&n| n > 0), "forced losses and wins: {decided:?}");
    assert!(draws > 0, "no drawn position in the sample");
}

/// The value after `a` for the player making it, by [`reference_value`].
fn reference_after(tb: &Tablebase, pos: &Position, a: Action) -> i8 {
    let mut child = *pos;
    child.apply_unchecked(a, &NINE);
    let v = reference_value(tb, &child);
    if child.current_player() == pos.current_player() { v } else { -v }
}

/// Pieces on the board and in hand for [`placement_position`] that stay within 4 a side.
const SHAPES: [(u32, u8); 4] = [(2, 1), (1, 2), (2, 2), (3, 1)];

#[test]
fn the_null_window_tests_and_the_perfect_player_keep_the_reference_value() {
    let (dir, tb) = small();
    let shared = SharedTablebase::open(dir.path()).expect("shared");
    let solver = shared.placement();
    let mut rng = Rng::seed_from_u64(5);
    let mut players = [
        PerfectPlayer::new(shared.clone(), Pick::Best, 1),
        PerfectPlayer::new(shared.clone(), Pick::Random, 2),
    ];
    let mut seen = [0u32; 3];
    for i in 0..40 {
        let pos = if i % 4 == 3 {
            tb.random_position(&mut rng)
        } else {
            {
                let (on_board, in_hand) = SHAPES[i as usize % SHAPES.len()];
                placement_position(&mut rng, on_board, in_hand, i % 5 < 2)
            }
        };
        let want = reference_value(tb, &pos);
        seen[(want + 1) as usize] += 1;
        if pos.in_hand(Color::White) + pos.in_hand(Color::Black) > 0 {
            assert_eq!(solver.at_least(&pos, Wdl::Draw).expect("covered"), want >= 0, "{pos:?}");
            assert_eq!(solver.at_least(&pos, Wdl::Win).expect("covered"), want == 1, "{pos:?}");
            for a in pos.legal_actions(&tb.rules()).iter() {
                let after = reference_after(tb, &pos, a);
                for (v, need) in [(Wdl::Win, 1), (Wdl::Draw, 0), (Wdl::Loss, -1)] {
                    assert_eq!(solver.keeps(&pos, a, v).expect("covered"), after >= need, "{pos:?} {a:?}");
                }
            }
        }
        let game = Game::from_position(Rules::standard(), pos);
        for p in &mut players {
            let a = p.select(&game).expect("covered").expect("a live game");
            assert_eq!(reference_after(tb, &pos, a), want, "{} in {pos:?}", p.name());
        }
    }
    assert!(seen.iter().all(|&n| n > 0), "the sample lacks a value: {seen:?} (loss, draw, win)");
    // Another rules set than the tables' is refused, by name.
    let other = Game::from_position(Rules::openspiel(), Position::start());
    assert!(matches!(players[0].select(&other), Err(TablebaseError::RulesMismatch { .. })));
}

#[test]
fn the_perfect_player_wins_every_won_game_and_loses_no_drawn_one() {
    let (dir, tb) = small();
    let shared = SharedTablebase::open(dir.path()).expect("shared");
    let mut rng = Rng::seed_from_u64(17);
    let mut results = [0u32; 3];
    for i in 0..24u64 {
        let (on_board, in_hand) = SHAPES[i as usize % SHAPES.len()];
        let pos = placement_position(&mut rng, on_board, in_hand, i % 2 == 1);
        let perfect_side = pos.current_player();
        let value = reference_value(tb, &pos);
        let pick = if i % 2 == 0 { Pick::Best } else { Pick::Random };
        let mut perfect = PerfectPlayer::new(shared.clone(), pick, i);
        let mut opponent: Box<dyn Agent> = if i % 3 == 0 {
            Box::new(PerfectPlayer::new(shared.clone(), Pick::Random, 100 + i))
        } else {
            Box::new(crate::RandomAgent::new(i))
        };
        let mut game = Game::from_position(Rules::standard(), pos);
        while !game.outcome().is_terminal() {
            let a = if game.current_player() == perfect_side {
                perfect.choose(&game)
            } else {
                opponent.choose(&game)
            };
            game.apply(a.expect("a move")).expect("legal");
        }
        let score = match game.outcome() {
            Outcome::Win { winner, .. } if winner == perfect_side => 1,
            Outcome::Win { .. } => -1,
            _ => 0,
        };
        assert!(score >= value, "value {value}, result {score} ({pick:?}): {}", game.record());
        if value == 1 {
            assert_eq!(score, 1, "a won game not converted: {}", game.record());
        }
        results[(value + 1) as usize] += 1;
    }
    assert!(results[1] > 0 && results[2] > 0, "games from drawn and won positions: {results:?}");
}

/// Plays the first legal action: a deterministic agent whose errors the tests can predict.
struct FirstAction;

impl Agent for FirstAction {
    fn name(&self) -> String {
        "first".into()
    }

    fn choose(&mut self, game: &Game) -> Option<Action> {
        game.legal_actions().iter().next()
    }
}

#[test]
fn accuracy_is_counted_by_phase_against_the_reference_values() {
    let (dir, tb) = small();
    let rules = Rules::standard();
    let games = sample_games(tb, 23);
    // What the first legal action does, turn by turn, judged by the plain reference search.
    let mut expected = PhaseAccuracy::default();
    for game in &games {
        let pos = *game.position();
        if pos.outcome(&rules).is_terminal() {
            continue;
        }
        let me = pos.current_player();
        let before = reference_value(tb, &pos);
        let mut after = pos;
        while after.current_player() == me && !after.outcome(&rules).is_terminal() {
            let a = after.legal_actions(&rules).iter().next().expect("a legal action");
            after.apply_unchecked(a, &NINE);
        }
        let after_value = if after.current_player() == me {
            reference_value(tb, &after)
        } else {
            -reference_value(tb, &after)
        };
        let acc = expected.get_mut(pos.phase(me, &rules));
        acc.positions += 1;
        match (before, after_value) {
            (b, a) if a >= b => acc.kept += 1,
            (1, 0) => acc.win_to_draw += 1,
            (1, _) => acc.win_to_loss += 1,
            _ => acc.draw_to_loss += 1,
        }
    }
    let got = measure(tb, &games, &mut FirstAction);
    for ((name, g), (_, e)) in got.phases().into_iter().zip(expected.phases()) {
        assert_eq!(
            (g.positions, g.kept, g.win_to_draw, g.win_to_loss, g.draw_to_loss),
            (e.positions, e.kept, e.win_to_draw, e.win_to_loss, e.draw_to_loss),
            "{name}"
        );
    }
    assert!(got.placing.positions >= 12 && got.moving.positions > 0 && got.flying.positions > 0, "{got:?}");
    let errors = |a: &Accuracy| a.win_to_draw + a.win_to_loss + a.draw_to_loss;
    assert!(errors(&got.total()) > 0, "the first legal action never errs? {got:?}");
    assert_eq!(got.total().positions, got.placing.positions + got.moving.positions + got.flying.positions);
    // The perfect player keeps every value, in every phase.
    let shared = SharedTablebase::open(dir.path()).expect("shared");
    let perfect = measure(tb, &games, &mut PerfectPlayer::new(shared, Pick::Random, 3));
    for (name, a) in perfect.phases() {
        assert_eq!(a.kept, a.positions, "{name}: {a:?}");
    }
    assert_eq!(perfect.total().positions, got.total().positions);
}

#[test]
fn placement_samples_follow_the_alternation_and_the_counting_conditions() {
    let rules = Rules::standard();
    let mut rng = Rng::seed_from_u64(5);
    let mut plies = [0u32; 18];
    for _ in 0..2000 {
        let pos = random_placement_position(&mut rng);
        let hands = [pos.in_hand(Color::White), pos.in_hand(Color::Black)];
        assert!(hands[0] + hands[1] > 0 && !pos.is_removal_pending());
        // White places first: Black holds as many in hand, or one more when it is to move.
        let black = pos.current_player() == Color::Black;
        assert_eq!(hands[1], hands[0] + black as u8, "{hands:?}");
        assert_eq!(pos.outcome(&rules), Outcome::Ongoing);
        for c in [Color::White, Color::Black] {
            let placed = 9 - pos.in_hand(c) as u32;
            let removed = placed - pos.pieces(c).count();
            let opp_placed = 9 - pos.in_hand(c.opponent()) as u32;
            assert!(removed <= opp_placed.saturating_sub(2), "{c:?}: {removed} removed");
            assert!(pos.pieces(c).count() + pos.in_hand(c) as u32 >= 3);
        }
        plies[(18 - hands[0] - hands[1]) as usize] += 1;
    }
    // Uniform over positions: the late placement plies, which hold most positions, dominate.
    assert!(plies[17] > plies[10] && plies[16] > plies[8] && plies[0] == 0, "{plies:?}");
    // Seeded.
    let a = random_placement_position(&mut Rng::seed_from_u64(9));
    assert_eq!(a, random_placement_position(&mut Rng::seed_from_u64(9)));
}

#[test]
fn tables_keep_the_value_of_a_searchs_choice_in_the_placement_phase() {
    let (dir, tb) = small();
    let shared = SharedTablebase::open(dir.path()).expect("shared");
    let rules = Rules::standard();
    let mut rng = Rng::seed_from_u64(31);
    let (mut replaced, mut kept_preference) = (0, 0);
    for i in 0..24u64 {
        let (on_board, in_hand) = SHAPES[i as usize % SHAPES.len()];
        let pos = placement_position(&mut rng, on_board, in_hand, i % 2 == 1);
        let want = reference_value(tb, &pos);
        for a in pos.legal_actions(&rules).iter() {
            let keeps = reference_after(tb, &pos, a) >= want;
            let got = tb.keep_in_placement(&pos, Some(a), &mut rng).expect("inside the 4-piece tables");
            assert!(reference_after(tb, &pos, got) >= want, "{pos:?}: {got:?} gives the value away");
            if keeps {
                assert_eq!(got, a, "a preference that keeps the value is played");
                kept_preference += 1;
            } else {
                replaced += 1;
            }
        }
        // Minimax with the tables plays a value-keeping move from its own search.
        let config = MinimaxConfig { tablebase: Some(shared.clone()), ..MinimaxConfig::depth(1) };
        let best = Minimax::new(config).search(&Game::from_position(rules, pos)).best.expect("a move");
        assert!(reference_after(tb, &pos, best) >= want, "{pos:?}: minimax with tables played {best:?}");
    }
    assert!(replaced > 0 && kept_preference > 0, "{replaced} replaced, {kept_preference} kept");
    // Outside what the tables can solve (5 pieces for a side), or with both hands empty: none.
    let big =
        Position::from_parts(BitBoard(0b111), BitBoard(0b111 << 8), [2, 2], Color::White, false).unwrap();
    assert_eq!(tb.keep_in_placement(&big, None, &mut rng), None);
    let moving = tb.random_position(&mut rng);
    assert_eq!(tb.keep_in_placement(&moving, None, &mut rng), None);
}

#[test]
fn opening_classes_cover_every_position_once() {
    // Classes after each ply, weighted by their sizes, count the distinct positions that every
    // sequence of legal actions reaches: 1, 24, 24 × 23 and C(24, 2) × 22 = 6,072.
    let (_, tb) = small();
    let rules = tb.rules();
    let classes = tb.placement().openings(3);
    let mut frontier = std::collections::HashSet::from([Position::start()]);
    for (k, ply) in classes.iter().enumerate() {
        let weighted: usize = ply.iter().map(crate::Symmetry::class_size).sum();
        assert_eq!(weighted, frontier.len(), "ply {k}");
        let mut next = std::collections::HashSet::new();
        for pos in &frontier {
            for a in pos.legal_actions(&rules).iter() {
                let mut child = *pos;
                child.apply_unchecked(a, &NINE);
                next.insert(child);
            }
        }
        frontier = next;
    }
    assert_eq!(classes.iter().map(Vec::len).collect::<Vec<_>>(), [1, 4, 46, 428]);
    assert_eq!(classes[3].iter().map(crate::Symmetry::class_size).sum::<usize>(), 6_072);
}

/// Live positions of every phase the small tables can value: placement shapes and uniform
/// moving-phase positions.
fn sample_games(tb: &Tablebase, seed: u64) -> Vec<Game> {
    let rules = Rules::standard();
    let mut rng = Rng::seed_from_u64(seed);
    let mut games: Vec<Game> = (0..16u64)
        .map(|i| {
            let (on_board, in_hand) = SHAPES[i as usize % SHAPES.len()];
            Game::from_position(rules, placement_position(&mut rng, on_board, in_hand, i % 2 == 1))
        })
        .collect();
    games.extend((0..40).map(|_| Game::from_position(rules, tb.random_position(&mut rng))));
    games.retain(|g| !g.outcome().is_terminal());
    games
}

#[test]
fn judged_positions_hold_the_tables_values_and_judge_as_the_tables_do() {
    let (_, tb) = small();
    let rules = Rules::standard();
    let games = sample_games(tb, 29);
    let judged: Vec<JudgedPosition> =
        games.iter().map(|g| JudgedPosition::judge(tb, "test", g.position()).expect("judged")).collect();
    let mut removals = 0;
    for (j, g) in judged.iter().zip(&games) {
        let pos = g.position();
        assert_eq!(j.value, tb.value(pos).expect("value"), "{pos}");
        let back = j.validate(&rules).expect("valid");
        assert_eq!(back.board_key(), pos.board_key());
        assert_eq!(
            (back.current_player(), back.in_hand(Color::White), back.in_hand(Color::Black)),
            (pos.current_player(), pos.in_hand(Color::White), pos.in_hand(Color::Black))
        );
        // Each turn's value is the reference search's value after it.
        for (turn, after) in legal_turns(pos, &rules) {
            let v = if after.current_player() == pos.current_player() {
                reference_value(tb, &after)
            } else {
                -reference_value(tb, &after)
            };
            let want = [Wdl::Loss, Wdl::Draw, Wdl::Win][(v + 1) as usize];
            assert_eq!(j.value_of(&turn), Some(want), "{pos} turn {turn}");
            removals += usize::from(turn.contains(" x"));
        }
    }
    assert!(removals > 0, "no turn closed a mill in the sample");
    // Through a file and back.
    let set = JudgedSet::new("standard", "test", judged.clone()).expect("set");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("judged.jsonl");
    std::fs::write(&path, set.to_jsonl()).expect("write");
    assert_eq!(JudgedSet::load(&path).expect("load"), set);
    // Judged from the stored values, an agent's turns count as they do against the tables.
    let with_tables = measure(tb, &games, &mut FirstAction);
    let stored = measure_judged(&set.positions, &rules, &mut FirstAction);
    for ((name, a), (_, b)) in with_tables.phases().into_iter().zip(stored.phases()) {
        assert_eq!(
            (a.positions, a.kept, a.win_to_draw, a.win_to_loss, a.draw_to_loss, a.by_value, a.kept_by_value),
            (b.positions, b.kept, b.win_to_draw, b.win_to_loss, b.draw_to_loss, b.by_value, b.kept_by_value),
            "{name}"
        );
    }
    assert!(stored.placing.positions > 0 && stored.moving.positions > 0, "{stored:?}");
}

#[test]
fn a_judged_set_that_breaks_the_rules_is_refused_naming_the_line() {
    let (_, tb) = small();
    let games = sample_games(tb, 31);
    let judged: Vec<JudgedPosition> = games
        .iter()
        .take(3)
        .map(|g| JudgedPosition::judge(tb, "test", g.position()).expect("judged"))
        .collect();
    let good = JudgedSet::new("standard", "test", judged).expect("set").to_jsonl();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("judged.jsonl");
    let load = |text: &str| {
        std::fs::write(&path, text).expect("write");
        JudgedSet::load(&path)
    };
    let lines: Vec<&str> = good.lines().collect();
    let with_line = |k: usize, new: String| {
        let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        l[k] = new;
        l.join("\n")
    };
    let edit = |k: usize, f: &dyn Fn(&mut JudgedPosition)| {
        let mut p: JudgedPosition = serde_json::from_str(lines[k]).expect("position");
        f(&mut p);
        with_line(k, serde_json::to_string(&p).expect("json"))
    };
    assert!(load(&good).is_ok());
    // A turn dropped, a turn that is not legal, a turn listed twice, a wrong value.
    let all = |p: &JudgedPosition| p.win.len() + p.draw.len() + p.loss.len();
    let dropped = edit(2, &|p| {
        if !p.draw.is_empty() {
            p.draw.pop();
        } else if !p.loss.is_empty() {
            p.loss.pop();
        } else {
            p.win.pop();
        }
    });
    assert!(all(&serde_json::from_str(lines[2]).expect("position")) > 1);
    let e = load(&dropped).expect_err("a turn dropped");
    assert!(matches!(&e, JudgedError::Position { line: 3, reason, .. } if reason.contains("missing")), "{e}");
    let e = load(&edit(1, &|p| p.loss.push("xa1 xa1".into()))).expect_err("not legal");
    assert!(
        matches!(&e, JudgedError::Position { line: 2, reason, .. } if reason.contains("not legal [xa1 xa1]")),
        "{e}"
    );
    let e = load(&edit(1, &|p| {
        let t = p.win.iter().chain(&p.draw).chain(&p.loss).next().cloned().expect("a turn");
        p.loss.push(t);
    }))
    .expect_err("twice");
    assert!(matches!(&e, JudgedError::Position { line: 2, reason, .. } if reason.contains("twice")), "{e}");
    let e = load(&edit(3, &|p| p.value = if p.value == Wdl::Loss { Wdl::Win } else { Wdl::Loss }))
        .expect_err("wrong value");
    assert!(
        matches!(&e, JudgedError::Position { line: 4, reason, .. } if reason.contains("best turn")),
        "{e}"
    );
    // A point that does not exist, or is both sides'.
    let e = load(&edit(1, &|p| p.white = "a7 z9".into())).expect_err("bad point");
    assert!(matches!(&e, JudgedError::Position { line: 2, reason, .. } if reason.contains("z9")), "{e}");
    // The header: another format, another version, unknown rules; no header; no positions.
    let header = |f: &dyn Fn(&mut JudgedHeader)| {
        let mut h: JudgedHeader = serde_json::from_str(lines[0]).expect("header");
        f(&mut h);
        with_line(0, serde_json::to_string(&h).expect("json"))
    };
    for bad in [
        header(&|h| h.format = "something-else".into()),
        header(&|h| h.version = 2),
        header(&|h| h.rules = "tournament".into()),
        String::new(),
        lines[0].to_string(),
    ] {
        let e = load(&bad).expect_err("bad header");
        assert!(matches!(e, JudgedError::Header { .. }), "{e}");
    }
    // Another variant's rules: its positions are checked under them (six's board has no g7).
    let e = load(&header(&|h| h.rules = "six".into())).expect_err("six");
    assert!(
        matches!(&e, JudgedError::Position { line: 2, reason, .. } if reason.contains("six board")),
        "{e}"
    );
    // A field left out, or one the format does not have.
    let e = load(&with_line(1, lines[1].replacen("\"removing\":false,", "", 1))).expect_err("no removing");
    assert!(matches!(e, JudgedError::Json { line: 2, .. }), "{e}");
    let e =
        load(&with_line(1, lines[1].replacen("\"quiet_plies\"", "\"quiet_ply\"", 1))).expect_err("unknown");
    assert!(matches!(e, JudgedError::Json { line: 2, .. }), "{e}");
    // Not JSON, and a missing file.
    let e = load(&with_line(2, "{not json".into())).expect_err("not json");
    assert!(matches!(e, JudgedError::Json { line: 3, .. }), "{e}");
    let e = JudgedSet::load(&dir.path().join("missing.jsonl")).expect_err("missing");
    assert!(matches!(e, JudgedError::Io { .. }), "{e}");
}

/// Gives no move, or a legal move and then an illegal removal: turns that count as no move.
struct Broken {
    removal_too: bool,
}

impl Agent for Broken {
    fn name(&self) -> String {
        "broken".into()
    }

    fn choose(&mut self, game: &Game) -> Option<Action> {
        if !self.removal_too {
            return None;
        }
        if game.position().is_removal_pending() {
            // A removal of one of the mover's own pieces: never legal.
            let own = game.position().pieces(game.current_player()).first()?;
            return Some(Action::point(own));
        }
        // A mill-closing move if there is one, so that the removal is asked for.
        let legal: Vec<Action> = game.legal_actions().iter().collect();
        legal.iter().copied().find(|&a| {
            let mut g = game.clone();
            g.apply(a).is_ok() && g.position().is_removal_pending()
        })
    }
}

#[test]
fn turns_without_a_legal_move_count_as_no_move_with_the_tables_and_with_stored_values() {
    let (_, tb) = small();
    let rules = Rules::standard();
    let games = sample_games(tb, 37);
    let judged: Vec<JudgedPosition> =
        games.iter().map(|g| JudgedPosition::judge(tb, "test", g.position()).expect("judged")).collect();
    for removal_too in [false, true] {
        let a = measure(tb, &games, &mut Broken { removal_too }).total();
        let b = measure_judged(&judged, &rules, &mut Broken { removal_too }).total();
        assert_eq!((a.positions, a.kept, a.no_move), (b.positions, b.kept, b.no_move), "{removal_too}");
        assert_eq!(a.positions, games.len() as u64);
        // No move at all: every position counts as no move; an illegal removal after a legal
        // mill-closing move: those positions do, and the others give no move either.
        assert_eq!((a.no_move, a.kept), (a.positions, 0), "{removal_too}: {a:?}");
    }
    // A finished game is not measured.
    let mut over = games.clone();
    let mut finished = Game::from_position(rules, tb.random_position(&mut Rng::seed_from_u64(1)));
    while !finished.outcome().is_terminal() {
        let a = finished.legal_actions().iter().next().expect("a move");
        finished.apply(a).expect("legal");
    }
    over.push(finished);
    assert_eq!(measure(tb, &over, &mut FirstAction).total().positions, games.len() as u64);
}
