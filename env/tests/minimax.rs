//! The alpha-beta baseline: tactics, sign convention at removal plies, draw rules inside the
//! search, tie-breaking, limits, and agreement with plain minimax.

use std::time::{Duration, Instant};

use morris_env::minimax::{EvalWeights, WIN, reference_minimax};
use morris_env::{Agent, BitBoard, Color, Game, Minimax, MinimaxConfig, Position, RandomAgent, Rng, Rules};

fn pos(white: &[&str], black: &[&str], hands: [u8; 2], side: Color, pending: bool) -> Position {
    Position::from_parts(
        BitBoard::from_names(white).unwrap(),
        BitBoard::from_names(black).unwrap(),
        hands,
        side,
        pending,
    )
    .unwrap()
}

fn best_move(game: &Game, depth: u32) -> (String, i32) {
    let r = Minimax::new(MinimaxConfig::depth(depth)).search(game);
    let m = game.position().move_of(r.best.unwrap()).unwrap().to_string();
    (m, r.score)
}

#[test]
fn finds_a_mill_in_one_while_moving() {
    // White a7 and d7 with g7 empty; g4-g7 closes a7-d7-g7.
    let p = pos(&["a7", "d7", "g4", "b2"], &["a1", "d1", "f2", "e3"], [0, 0], Color::White, false);
    let game = Game::from_position(Rules::standard(), p);
    let (m, score) = best_move(&game, 1);
    assert_eq!(m, "g4-g7");
    assert!(score > 50, "closing a mill wins a piece: {score}");
}

#[test]
fn removal_breaks_the_opponent_mill_threat() {
    // White has just closed b6-d6-f6 and must remove. Black threatens f4-g4, closing g7-g4-g1;
    // removing g7, g1 or f4 breaks that threat, removing b4 or c3 does not.
    let p = pos(&["b6", "d6", "f6", "d2", "a4"], &["g1", "g7", "f4", "b4", "c3"], [0, 0], Color::White, true);
    let game = Game::from_position(Rules::standard(), p);
    let (m, _) = best_move(&game, 2);
    assert!(["xg1", "xg7", "xf4"].contains(&m.as_str()), "expected to break g7-g4-g1, got {m}");
}

#[test]
fn blocks_the_opponent_mill_in_one_at_depth_2() {
    // Placing: Black has d7 and d6; White must place on d5 or lose a piece.
    let game = Game::from_notation(Rules::standard(), "a1 d7 g1 d6").unwrap();
    // White also threatens a1-d1-g1, so the best is to close that mill (d1) instead of blocking.
    let (m, _) = best_move(&game, 2);
    assert_eq!(m, "d1");
    // Without a mill of its own, White blocks.
    let game = Game::from_notation(Rules::standard(), "a1 d7 g4 d6").unwrap();
    let (m, _) = best_move(&game, 2);
    assert_eq!(m, "d5");
    // At depth 1 the threat is invisible, so this is what depth 2 adds.
}

#[test]
fn finds_a_forced_win_in_a_flying_endgame() {
    // Both sides fly with three pieces. White flies c5-a1, making two threats (a7-a4-a1 and
    // a1-d1-g1); Black can block only one; White closes the other and removes: Black has two.
    let p = pos(&["a7", "g1", "c5"], &["b2", "e5", "g4"], [0, 0], Color::White, false);
    let game = Game::from_position(Rules::standard(), p);
    let (m, score) = best_move(&game, 3);
    assert_eq!(score, WIN - 4, "win in 4 plies: fly, block, mill, removal");
    assert!(m.starts_with("c5-a1") || m.ends_with("-a1"), "{m}");
    // From Black's side, after the double threat, every move loses in 3 plies.
    let mut g = game.clone();
    g.play_notation(&m).unwrap();
    let r = Minimax::new(MinimaxConfig::depth(3)).search(&g);
    assert_eq!(r.score, -(WIN - 3));
}

#[test]
fn removal_plies_keep_the_sign() {
    // White to move closes a mill and removes Black's third piece: a win two plies away.
    // A search that negated the score at the removal ply would see a loss, or prefer a move
    // that does not close the mill.
    let p = pos(&["a7", "d7", "g4"], &["a1", "d1", "f2"], [0, 0], Color::White, false);
    let game = Game::from_position(Rules::standard(), p);
    let r = Minimax::new(MinimaxConfig::depth(1)).search(&game);
    assert_eq!(r.score, WIN - 2);
    // At the pending removal, the same player is to move and the win is one ply away.
    let mut g = game.clone();
    g.apply(r.best.unwrap()).unwrap();
    assert!(g.position().is_removal_pending() && g.current_player() == Color::White);
    let r = Minimax::new(MinimaxConfig::depth(1)).search(&g);
    assert_eq!(r.score, WIN - 1);
    // And a material gain from a mill is positive for the mover at depth 1 in the middle game.
    let p = pos(&["a7", "d7", "g4", "b2"], &["a1", "d1", "f2", "e3"], [0, 0], Color::White, false);
    let r = Minimax::new(MinimaxConfig::depth(1)).search(&Game::from_position(Rules::standard(), p));
    assert!(r.score > 50, "{}", r.score);
}

#[test]
fn n_move_rule_is_respected_inside_the_search() {
    // White is a piece down; one quiet ply before the N-move draw, any quiet move draws.
    let rules = Rules { n_move_rule: Some(10), ..Rules::standard() };
    let p = pos(&["a7", "d6", "f4", "b2"], &["a1", "d1", "g1", "g4", "e3"], [0, 0], Color::White, false)
        .with_counters(40, 9);
    let game = Game::from_position(rules, p);
    let r = Minimax::new(MinimaxConfig::depth(3)).search(&game);
    assert_eq!(r.score, 0, "every White move ends the game in a draw");
    let game = Game::from_position(Rules::standard(), p);
    let r = Minimax::new(MinimaxConfig::depth(3)).search(&game);
    assert!(r.score < 0, "without the rule White is worse: {}", r.score);
}

#[test]
fn on_twelve_it_closes_and_blocks_the_diagonal_mills() {
    // White a7 and b6 on the diagonal a7-b6-c5: placing c5 closes it under twelve's rules only.
    let game = Game::from_notation(Rules::twelve(), "a7 d1 b6 g1").unwrap();
    assert_eq!(best_move(&game, 1).0, "c5");
    // Black holds a1 and b2 of a1-b2-c3 and White has no mill of its own: White blocks on c3.
    let game = Game::from_notation(Rules::twelve(), "d7 a1 g4 b2").unwrap();
    assert_eq!(best_move(&game, 2).0, "c3");
    let nine = Game::from_notation(Rules::standard(), "d7 a1 g4 b2").unwrap();
    assert_ne!(best_move(&nine, 2).0, "c3", "on nine's board a1-b2 is no threat");
}

#[test]
fn alpha_beta_with_tt_equals_plain_minimax_on_200_random_positions() {
    let mut rng = Rng::seed_from_u64(2024);
    let weights = EvalWeights::default();
    let mut checked = 0;
    for i in 0..200u64 {
        let rules = match i % 3 {
            0 => Rules::standard(),
            1 => Rules::openspiel(),
            _ => Rules::twelve(),
        };
        let mut game = Game::new(rules);
        let plies = rng.below(60);
        game.play_random(&mut rng, plies);
        if game.outcome().is_terminal() {
            game.undo();
        }
        let depth = 1 + (i % 4) as u32;
        // Depth 4 in the placing phase is costly for plain minimax; use depth 3 there.
        let depth = if game.position().in_hand(game.current_player()) > 0 { depth.min(3) } else { depth };
        let expect = reference_minimax(&mut game.clone(), depth as i32, 0, &weights);
        let mut config = MinimaxConfig::depth(depth);
        config.tt_bits = 16;
        let got = Minimax::new(config).search(&game);
        assert_eq!(got.score, expect, "position {i} at depth {depth}:\n{}", game.position());
        checked += 1;
    }
    assert_eq!(checked, 200);
}

#[test]
fn ties_are_broken_by_the_seed() {
    let game = Game::new(Rules::standard());
    let mut seen = std::collections::HashSet::new();
    for seed in 0..16 {
        let mut c = MinimaxConfig::depth(1);
        c.seed = seed;
        let a = Minimax::new(c.clone()).search(&game);
        let b = Minimax::new(c).search(&game);
        assert_eq!(a.best, b.best, "same seed, same choice");
        assert!(a.ties >= 2, "the start position has symmetric best placements");
        seen.insert(a.best);
    }
    assert!(seen.len() >= 2, "different seeds pick different tied moves");
}

#[test]
fn limits_stop_the_search() {
    let game = Game::new(Rules::standard());
    let mut c = MinimaxConfig::depth(30);
    c.nodes = Some(20_000);
    let r = Minimax::new(c).search(&game);
    assert!(r.best.is_some());
    assert!(r.nodes < 25_000, "{}", r.nodes);
    assert!(r.depth < 30);

    let mut c = MinimaxConfig::depth(40);
    c.time = Some(Duration::from_millis(20));
    let t = Instant::now();
    let r = Minimax::new(c).search(&game);
    assert!(r.best.is_some());
    // Generous bound: the check runs every 1024 nodes.
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn minimax_beats_random() {
    let mut wins = 0;
    for g in 0..4u64 {
        let mut mm = Minimax::new(MinimaxConfig::depth(2));
        let mut rnd = RandomAgent::new(g);
        let mut game = Game::new(Rules::standard());
        let minimax_color = if g % 2 == 0 { Color::White } else { Color::Black };
        while !game.outcome().is_terminal() {
            let a = if game.current_player() == minimax_color { mm.choose(&game) } else { rnd.choose(&game) };
            game.apply(a.unwrap()).unwrap();
        }
        wins += (game.outcome().winner() == Some(minimax_color)) as u32;
    }
    assert_eq!(wins, 4);
}

#[test]
fn repetition_along_the_game_is_respected_inside_the_search() {
    // Black is a piece down. After two shuffles, Black can repeat the start position a third
    // time (c4-c3), which draws: the best a losing side can do.
    let p = pos(&["a7", "g1", "d3", "f6", "b2"], &["c3", "e5", "a1", "g7"], [0, 0], Color::White, false);
    let mut game = Game::from_position(Rules::standard(), p);
    for m in ["b2-b4", "c3-c4", "b4-b2", "c4-c3", "b2-b4", "c3-c4", "b4-b2"] {
        game.play_notation(m).unwrap();
    }
    let r = Minimax::new(MinimaxConfig::depth(1)).search(&game);
    assert_eq!(game.position().move_of(r.best.unwrap()).unwrap().to_string(), "c4-c3");
    assert_eq!(r.score, 0);
    // Without the repetition rule the same move is just a move, and Black stays worse.
    let mut no_rep = Game::from_position(Rules { threefold_repetition: false, ..Rules::standard() }, p);
    for m in ["b2-b4", "c3-c4", "b4-b2", "c4-c3", "b2-b4", "c3-c4", "b4-b2"] {
        no_rep.play_notation(m).unwrap();
    }
    assert!(Minimax::new(MinimaxConfig::depth(1)).search(&no_rep).score < 0);
}

#[test]
fn a_searcher_reused_across_positions_respects_the_n_move_counter() {
    // One searcher (whose table persists) searches the same board with growing N-move counters;
    // a table entry stored far from the limit must not decide a search close to it.
    let rules = Rules { n_move_rule: Some(12), ..Rules::standard() };
    let board = pos(&["a7", "d6", "f4", "b2"], &["a1", "d1", "g1", "g4", "e3"], [0, 0], Color::White, false);
    let mut reused = Minimax::new(MinimaxConfig::depth(4));
    for quiet in [0u16, 4, 8, 9, 10, 11] {
        let game = Game::from_position(rules, board.with_counters(40, quiet));
        let fresh = Minimax::new(MinimaxConfig::depth(4)).search(&game);
        let again = reused.search(&game);
        assert_eq!(again.score, fresh.score, "N-move counter {quiet}");
    }
}

/// Minimax plays six men's morris on its own board: it closes the inner square's top side by
/// sliding along the spoke c5-c4, and against a random player every move it picks is legal.
#[test]
fn plays_six_mens_morris_on_its_own_board() {
    let rules = Rules::six();
    let board = rules.variant.board();
    let bb = |names: &[&str]| {
        names.iter().fold(BitBoard::EMPTY, |acc, n| acc | board.point_named(n).unwrap().bit())
    };
    // White b4 and d4 with c4 empty; c5-c4 (a spoke) closes b4-c4-d4.
    let p = Position::from_parts_for(
        &rules,
        bb(&["b4", "d4", "c5", "a1"]),
        bb(&["e1", "c1", "d2", "e3"]),
        [0, 0],
        Color::White,
        0,
    )
    .unwrap();
    let game = Game::from_position(rules, p);
    let r = Minimax::new(MinimaxConfig::depth(2)).search(&game);
    let m = game.position().move_on(r.best.unwrap(), &rules).unwrap();
    assert_eq!(m.on(board).to_string(), "c5-c4");
    assert!(r.score > 50, "closing a mill wins a piece: {}", r.score);
    let mut game = Game::new(rules);
    let (mut mm, mut random) = (Minimax::new(MinimaxConfig::depth(3)), RandomAgent::new(7));
    while !game.outcome().is_terminal() && game.actions().len() < 200 {
        let a = if game.current_player() == Color::White { mm.choose(&game) } else { random.choose(&game) };
        game.apply(a.expect("a move in a live game")).expect("a legal move");
    }
}
