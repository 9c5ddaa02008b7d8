//! One focused test per rule of `shared/docs/rules.md`: exact legal sets, outcomes and errors
//! on hand-built positions, plus presets, notation, undo and the Zobrist hash.

use std::collections::BTreeSet;

use morris_env::tables::{ADJACENT, MILLS};
use morris_env::{
    Action, ActionError, BitBoard, Color, DrawReason, Game, Move, NUM_ACTIONS, NotationError, Outcome, Phase,
    Point, Position, Rng, Rules, Variant, WinReason,
};

// ----- helpers ---------------------------------------------------------------------------------

fn pt(name: &str) -> Point {
    name.parse().unwrap_or_else(|e| panic!("bad point {name}: {e}"))
}

fn bb(names: &[&str]) -> BitBoard {
    BitBoard::from_names(names).unwrap()
}

/// A point action: a placement, or a removal when one is pending.
fn at(name: &str) -> Action {
    Action::point(pt(name))
}

/// A slide or fly.
fn mv(from: &str, to: &str) -> Action {
    Action::movement(pt(from), pt(to))
}

fn point_actions(names: &[&str]) -> BTreeSet<Action> {
    names.iter().map(|n| at(n)).collect()
}

fn move_actions(pairs: &[(&str, &str)]) -> BTreeSet<Action> {
    pairs.iter().map(|&(f, t)| mv(f, t)).collect()
}

fn legal(pos: &Position, rules: &Rules) -> BTreeSet<Action> {
    pos.legal_actions(rules).iter().collect()
}

fn game_legal(game: &Game) -> BTreeSet<Action> {
    game.legal_actions().iter().collect()
}

fn position(
    white: &[&str],
    black: &[&str],
    in_hand: [u8; 2],
    side: Color,
    removal_pending: bool,
) -> Position {
    Position::from_parts(bb(white), bb(black), in_hand, side, removal_pending)
        .unwrap_or_else(|e| panic!("inconsistent test position: {e}"))
}

/// All point actions on the empty points of `pos`.
fn empty_points(pos: &Position) -> BTreeSet<Action> {
    pos.empty().iter().map(Action::point).collect()
}

fn standard_without_draws() -> Rules {
    Rules {
        variant: Variant::Nine,
        flying: true,
        n_move_rule: None,
        threefold_repetition: false,
        turn_cap: None,
    }
}

/// A moving-phase position used by several tests. White: a7 d6 b4 c3, Black: d7 a4 f6 e3,
/// no pieces in hand, no mills, `side` to move.
fn moving_position(side: Color) -> Position {
    position(&["a7", "d6", "b4", "c3"], &["d7", "a4", "f6", "e3"], [0, 0], side, false)
}

// ----- board -----------------------------------------------------------------------------------

#[test]
fn adjacency_is_the_32_lines_of_the_diagram() {
    let edges = [
        ("a7", "d7"),
        ("d7", "g7"),
        ("b6", "d6"),
        ("d6", "f6"),
        ("c5", "d5"),
        ("d5", "e5"),
        ("a4", "b4"),
        ("b4", "c4"),
        ("e4", "f4"),
        ("f4", "g4"),
        ("c3", "d3"),
        ("d3", "e3"),
        ("b2", "d2"),
        ("d2", "f2"),
        ("a1", "d1"),
        ("d1", "g1"),
        ("a7", "a4"),
        ("a4", "a1"),
        ("b6", "b4"),
        ("b4", "b2"),
        ("c5", "c4"),
        ("c4", "c3"),
        ("d7", "d6"),
        ("d6", "d5"),
        ("d3", "d2"),
        ("d2", "d1"),
        ("e5", "e4"),
        ("e4", "e3"),
        ("f6", "f4"),
        ("f4", "f2"),
        ("g7", "g4"),
        ("g4", "g1"),
    ];
    let mut expect = [BitBoard::EMPTY; 24];
    for (a, b) in edges {
        expect[pt(a).index()] |= pt(b).bit();
        expect[pt(b).index()] |= pt(a).bit();
    }
    for p in Point::ALL {
        assert_eq!(ADJACENT[p.index()], expect[p.index()], "neighbours of {p}");
        assert!((2..=4).contains(&ADJACENT[p.index()].count()));
    }
    let degrees: u32 = ADJACENT.iter().map(|a| a.count()).sum();
    assert_eq!(degrees, 2 * 32);
    // The examples named in rules.md, by index.
    for (a, b) in [(0, 1), (0, 9), (1, 4), (4, 7), (9, 10), (10, 11), (19, 22)] {
        assert!(ADJACENT[a].has(Point::ALL[b]), "{a}-{b}");
    }
}

#[test]
fn the_sixteen_mills_are_those_of_rules_md() {
    let listed: [[usize; 3]; 16] = [
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
    let want: BTreeSet<u32> = listed.iter().map(|m| m.iter().map(|&i| 1u32 << i).sum()).collect();
    let got: BTreeSet<u32> = MILLS.iter().map(|m| m.0).collect();
    assert_eq!(got, want);
    assert_eq!(MILLS.len(), 16);
}

#[test]
fn point_names_and_action_encoding_follow_openspiel() {
    let names = [
        "a7", "d7", "g7", "b6", "d6", "f6", "c5", "d5", "e5", "a4", "b4", "c4", "e4", "f4", "g4", "c3", "d3",
        "e3", "b2", "d2", "f2", "a1", "d1", "g1",
    ];
    for (i, name) in names.iter().enumerate() {
        assert_eq!(pt(name).index(), i);
        assert_eq!(Action::point(pt(name)), Action(i as u16));
    }
    assert_eq!(mv("a7", "d7"), Action(24 + 1));
    assert_eq!(mv("a1", "a4"), Action(24 + 21 * 24 + 9));
    assert_eq!(mv("g1", "d1"), Action(24 + 23 * 24 + 22));
    assert_eq!(mv("d1", "g1"), Action(24 + 22 * 24 + 23));
    assert_eq!(Action(599).as_movement(), Some((pt("g1"), pt("g1"))));
    assert_eq!(Action(23).as_point(), Some(pt("g1")));
    assert_eq!(NUM_ACTIONS, 600);
}

// ----- rule 1 and 2: start and placing ---------------------------------------------------------

#[test]
fn white_starts_with_nine_in_each_hand_and_may_place_anywhere() {
    let rules = Rules::standard();
    let pos = Position::start();
    assert_eq!(pos.current_player(), Color::White);
    assert_eq!((pos.in_hand(Color::White), pos.in_hand(Color::Black)), (9, 9));
    assert_eq!(pos.occupied(), BitBoard::EMPTY);
    assert_eq!(legal(&pos, &rules), (0..24).map(Action).collect());
}

#[test]
fn placing_is_allowed_on_exactly_the_empty_points() {
    let game = Game::from_notation(Rules::standard(), "d6 a1 g7").unwrap();
    let pos = *game.position();
    assert_eq!(pos.current_player(), Color::Black);
    assert_eq!(pos.phase(Color::Black, game.rules()), Phase::Placing);
    let want: BTreeSet<Action> =
        (0..24).map(Action).filter(|a| ![at("d6"), at("a1"), at("g7")].contains(a)).collect();
    assert_eq!(game_legal(&game), want);
    assert_eq!(want.len(), 21);
    // Every one of them is accepted and puts a Black piece there.
    for a in want {
        let mut p = pos;
        p.apply(a, game.rules()).unwrap();
        assert!(p.pieces(Color::Black).has(a.as_point().unwrap()));
        assert_eq!(p.in_hand(Color::Black), 7);
        assert_eq!(p.current_player(), Color::White);
    }
}

#[test]
fn placing_on_an_occupied_point_is_rejected_and_leaves_the_position_unchanged() {
    let rules = Rules::standard();
    let mut game = Game::from_notation(rules, "d6 a1").unwrap();
    let before = *game.position();
    for occupied in ["d6", "a1"] {
        let mut pos = before;
        assert_eq!(pos.apply(at(occupied), &rules), Err(ActionError::PointOccupied(pt(occupied))));
        assert_eq!(pos, before);
        assert_eq!(pos.hash(), before.hash());
        assert_eq!(game.apply(at(occupied)), Err(ActionError::PointOccupied(pt(occupied))));
        assert_eq!(*game.position(), before);
        assert_eq!(game.actions().len(), 2);
    }
    // A move action is not a placement: pieces in hand must be placed first.
    let mut pos = before;
    assert_eq!(pos.apply(mv("d6", "d5"), &rules), Err(ActionError::MustPlace(mv("d6", "d5"))));
    assert_eq!(pos, before);
    // Messages spell the move in notation, not as an action number.
    let text = ActionError::MustPlace(mv("d6", "d5")).to_string();
    assert!(text.starts_with("'d6-d5' moves a piece"), "{text}");
}

// ----- rule 3: moving ------------------------------------------------------------------------

#[test]
fn moving_phase_slides_only_to_adjacent_empty_points() {
    let rules = Rules::standard();
    let pos = moving_position(Color::White);
    assert_eq!(pos.phase(Color::White, &rules), Phase::Moving);
    let want = move_actions(&[
        ("d6", "b6"),
        ("d6", "d5"),
        ("b4", "b6"),
        ("b4", "c4"),
        ("b4", "b2"),
        ("c3", "c4"),
        ("c3", "d3"),
    ]);
    assert_eq!(legal(&pos, &rules), want);

    let rejected = [
        (mv("d6", "g1"), ActionError::NotAdjacent { from: pt("d6"), to: pt("g1") }),
        (mv("c3", "d2"), ActionError::NotAdjacent { from: pt("c3"), to: pt("d2") }),
        (mv("a7", "d7"), ActionError::PointOccupied(pt("d7"))),
        (mv("d6", "f6"), ActionError::PointOccupied(pt("f6"))),
        (mv("d7", "g7"), ActionError::NotOwnPiece(pt("d7"))),
        (at("g1"), ActionError::NoPiecesInHand(pt("g1"))),
    ];
    for (a, err) in rejected {
        let mut p = pos;
        assert_eq!(p.apply(a, &rules), Err(err));
        assert_eq!(p, pos);
    }

    // Black's slides in the mirror position.
    let black = moving_position(Color::Black);
    let want_black = move_actions(&[("f6", "f4"), ("e3", "e4"), ("e3", "d3"), ("d7", "g7"), ("a4", "a1")]);
    assert_eq!(legal(&black, &rules), want_black);
}

#[test]
fn sliding_away_and_back_on_a_later_turn_is_legal() {
    let rules = Rules::standard();
    let start = moving_position(Color::White);
    let mut game = Game::from_position(rules, start);
    game.apply(mv("d6", "d5")).unwrap();
    game.apply(mv("e3", "e4")).unwrap();
    assert!(game_legal(&game).contains(&mv("d5", "d6")));
    game.apply(mv("d5", "d6")).unwrap();
    assert!(game_legal(&game).contains(&mv("e4", "e3")));
    game.apply(mv("e4", "e3")).unwrap();
    let now = game.position();
    assert_eq!(now.pieces(Color::White), start.pieces(Color::White));
    assert_eq!(now.pieces(Color::Black), start.pieces(Color::Black));
    assert_eq!(now.current_player(), Color::White);
    assert_eq!(now.hash(), start.hash());
    assert_eq!(game.repetitions(), 2);
    assert_eq!(game.outcome(), Outcome::Ongoing);
}

// ----- rule 4: flying ------------------------------------------------------------------------

#[test]
fn three_pieces_and_an_empty_hand_fly_to_any_empty_point() {
    let rules = Rules::standard();
    let pos = position(&["a7", "d6", "c3"], &["d7", "a4", "f6", "e3"], [0, 0], Color::White, false);
    assert_eq!(pos.phase(Color::White, &rules), Phase::Flying);
    let mut want = BTreeSet::new();
    for from in pos.pieces(Color::White) {
        for to in pos.empty() {
            want.insert(Action::movement(from, to));
        }
    }
    assert_eq!(want.len(), 3 * 17);
    assert_eq!(legal(&pos, &rules), want);
    let mut p = pos;
    p.apply(mv("a7", "g1"), &rules).unwrap();
    assert_eq!(p.pieces(Color::White), bb(&["g1", "d6", "c3"]));
    // Black, with 4 pieces, still only slides.
    assert_eq!(pos.phase(Color::Black, &rules), Phase::Moving);
}

#[test]
fn three_pieces_on_the_board_with_pieces_in_hand_do_not_fly() {
    let rules = Rules::standard();
    let pos = position(&["a7", "d6", "c3"], &["d7", "a4", "f6", "e3"], [2, 2], Color::White, false);
    assert_eq!(pos.phase(Color::White, &rules), Phase::Placing);
    assert_eq!(legal(&pos, &rules), empty_points(&pos));
    let mut p = pos;
    assert_eq!(p.apply(mv("a7", "g1"), &rules), Err(ActionError::MustPlace(mv("a7", "g1"))));
    assert_eq!(p, pos);
}

#[test]
fn four_pieces_on_the_board_do_not_fly() {
    let rules = Rules::standard();
    let pos = moving_position(Color::White);
    assert_eq!(pos.pieces(Color::White).count(), 4);
    assert_eq!(pos.phase(Color::White, &rules), Phase::Moving);
    assert_eq!(legal(&pos, &rules).len(), 7);
    let mut p = pos;
    assert_eq!(
        p.apply(mv("a7", "g1"), &rules),
        Err(ActionError::NotAdjacent { from: pt("a7"), to: pt("g1") })
    );
    assert_eq!(p, pos);
}

#[test]
fn without_flying_a_three_piece_player_only_slides() {
    let rules = Rules { flying: false, ..Rules::standard() };
    let pos = position(&["a7", "d6", "c3"], &["d7", "a4", "f6", "e3"], [0, 0], Color::White, false);
    assert_eq!(pos.phase(Color::White, &rules), Phase::Moving);
    assert_eq!(legal(&pos, &rules), move_actions(&[("d6", "b6"), ("d6", "d5"), ("c3", "c4"), ("c3", "d3")]));
    let mut p = pos;
    assert_eq!(
        p.apply(mv("a7", "g1"), &rules),
        Err(ActionError::NotAdjacent { from: pt("a7"), to: pt("g1") })
    );
    assert_eq!(p, pos);
}

// ----- rule 5: mills ---------------------------------------------------------------------------

#[test]
fn closing_a_mill_while_placing_lets_the_same_player_remove_then_the_turn_passes() {
    let rules = Rules::standard();
    let mut game = Game::from_notation(rules, "d6 a1 d5 a4").unwrap();
    assert_eq!(game.position().turns(), 4);
    game.apply(at("d7")).unwrap(); // d7-d6-d5
    let pos = *game.position();
    assert_eq!(pos.current_player(), Color::White);
    assert!(pos.is_removal_pending());
    assert_eq!(pos.turns(), 4, "the turn has not passed yet");
    assert_eq!(game_legal(&game), point_actions(&["a1", "a4"]));
    // A placement is not a removal.
    assert_eq!(game.apply(at("g7")), Err(ActionError::NothingToRemove(pt("g7"))));
    assert_eq!(game.apply(at("d6")), Err(ActionError::NothingToRemove(pt("d6"))));
    assert_eq!(game.apply(mv("d7", "g7")), Err(ActionError::RemovalPending(mv("d7", "g7"))));
    let text = ActionError::RemovalPending(mv("d7", "g7")).to_string();
    assert!(text.starts_with("'d7-g7' is not a removal"), "{text}");
    assert_eq!(*game.position(), pos);

    game.apply(at("a1")).unwrap();
    let pos = *game.position();
    assert_eq!(pos.current_player(), Color::Black);
    assert!(!pos.is_removal_pending());
    assert_eq!(pos.turns(), 5);
    assert_eq!(pos.pieces(Color::Black), bb(&["a4"]));
    assert_eq!(pos.num_pieces(Color::Black), 8);
    assert_eq!(game_legal(&game), empty_points(&pos));
}

#[test]
fn closing_a_mill_while_moving_lets_the_same_player_remove_then_the_turn_passes() {
    let rules = Rules::standard();
    let start =
        position(&["a7", "d7", "g4", "c4"], &["f6", "c5", "e3", "b2", "d1"], [0, 0], Color::White, false)
            .with_counters(40, 7);
    let mut game = Game::from_position(rules, start);
    game.apply(mv("g4", "g7")).unwrap(); // a7-d7-g7
    let pos = *game.position();
    assert_eq!(pos.current_player(), Color::White);
    assert!(pos.is_removal_pending());
    assert_eq!(pos.turns(), 40);
    assert_eq!(game_legal(&game), point_actions(&["f6", "c5", "e3", "b2", "d1"]));

    game.apply(at("e3")).unwrap();
    let pos = *game.position();
    assert_eq!(pos.current_player(), Color::Black);
    assert!(!pos.is_removal_pending());
    assert_eq!(pos.turns(), 41, "a move and its removal are one turn");
    assert_eq!(pos.pieces(Color::Black), bb(&["f6", "c5", "b2", "d1"]));
    assert_eq!(
        game_legal(&game),
        move_actions(&[
            ("f6", "d6"),
            ("f6", "f4"),
            ("c5", "d5"),
            ("b2", "b4"),
            ("b2", "d2"),
            ("d1", "a1"),
            ("d1", "d2"),
            ("d1", "g1"),
        ])
    );
}

#[test]
fn double_mill_removes_only_one_piece() {
    let rules = Rules::standard();
    // a7 completes both a7-d7-g7 and a7-a4-a1.
    let start = position(&["d7", "g7", "a4", "a1"], &["b6", "d6", "c5", "e5"], [5, 5], Color::White, false);
    let mut game = Game::from_position(rules, start);
    game.apply(at("a7")).unwrap();
    assert!(game.position().is_removal_pending());
    assert_eq!(game.current_player(), Color::White);
    assert_eq!(game_legal(&game), point_actions(&["b6", "d6", "c5", "e5"]));

    game.apply(at("b6")).unwrap();
    let pos = *game.position();
    assert!(!pos.is_removal_pending());
    assert_eq!(pos.current_player(), Color::Black);
    assert_eq!(pos.pieces(Color::Black), bb(&["d6", "c5", "e5"]));
    assert_eq!(pos.num_pieces(Color::Black), 8);
    assert_eq!(pos.turns(), start.turns() + 1);
    // Black places next: no second removal for White, and d6 is now read as a placement.
    assert_eq!(game_legal(&game), empty_points(&pos));
    assert_eq!(game.apply(at("d6")), Err(ActionError::PointOccupied(pt("d6"))));
}

// ----- rule 6: protected pieces ----------------------------------------------------------------

#[test]
fn a_piece_in_a_mill_is_protected_while_the_opponent_has_pieces_outside_mills() {
    let rules = Rules::standard();
    let pos = position(&["b6", "d6", "f6", "c3"], &["a7", "d7", "g7", "b4"], [0, 0], Color::White, true);
    assert_eq!(legal(&pos, &rules), point_actions(&["b4"]));
    for in_mill in ["a7", "d7", "g7"] {
        let mut p = pos;
        assert_eq!(p.apply(at(in_mill), &rules), Err(ActionError::ProtectedPiece(pt(in_mill))));
        assert_eq!(p, pos);
    }
    let mut p = pos;
    assert_eq!(p.apply(at("c3"), &rules), Err(ActionError::NothingToRemove(pt("c3"))));
    assert_eq!(p.apply(at("e4"), &rules), Err(ActionError::NothingToRemove(pt("e4"))));
    assert_eq!(p.apply(mv("c3", "d3"), &rules), Err(ActionError::RemovalPending(mv("c3", "d3"))));
    assert_eq!(p, pos);
    p.apply(at("b4"), &rules).unwrap();
    assert_eq!(p.pieces(Color::Black), bb(&["a7", "d7", "g7"]));
}

#[test]
fn when_all_opponent_pieces_are_in_mills_any_may_be_removed() {
    let rules = Rules::standard();
    // Two black mills sharing a7: a7-d7-g7 and a7-a4-a1.
    let pos =
        position(&["b6", "d6", "f6", "c3"], &["a7", "d7", "g7", "a4", "a1"], [0, 0], Color::White, true);
    assert_eq!(legal(&pos, &rules), point_actions(&["a7", "d7", "g7", "a4", "a1"]));
    for victim in ["a7", "d7", "g7", "a4", "a1"] {
        let mut p = pos;
        p.apply(at(victim), &rules).unwrap();
        assert_eq!(p.pieces(Color::Black), pos.pieces(Color::Black) - pt(victim).bit());
        assert_eq!(p.current_player(), Color::Black);
    }
}

// ----- rule 7: winning -------------------------------------------------------------------------

#[test]
fn reducing_the_opponent_to_two_pieces_wins() {
    let rules = Rules::standard();
    // Moving phase: Black has 3 pieces on the board.
    let pos = position(&["a7", "d7", "g7", "c4"], &["f6", "c5", "e3"], [0, 0], Color::White, true);
    assert_eq!(pos.outcome(&rules), Outcome::Ongoing);
    let mut game = Game::from_position(rules, pos);
    game.apply(at("e3")).unwrap();
    let won = Outcome::Win { winner: Color::White, reason: WinReason::TooFewPieces };
    assert_eq!(game.outcome(), won);
    assert_eq!(game.position().outcome(&rules), won);
    assert!(game.legal_actions().is_empty());
    assert_eq!(won.reward(Color::White), 1.0);
    assert_eq!(won.reward(Color::Black), -1.0);

    // Pieces in hand count: 1 on the board plus 2 in hand is 3, still playing; then 0 + 2 loses.
    let pos = position(&["a7", "d7", "g7"], &["d6"], [1, 2], Color::White, true);
    assert_eq!(pos.num_pieces(Color::Black), 3);
    assert_eq!(pos.outcome(&rules), Outcome::Ongoing);
    let mut p = pos;
    p.apply(at("d6"), &rules).unwrap();
    assert_eq!(p.num_pieces(Color::Black), 2);
    assert_eq!(p.outcome(&rules), won);
    assert!(p.legal_actions(&rules).is_empty());
}

#[test]
fn a_player_blocked_at_the_first_moving_turn_loses() {
    let rules = Rules::standard();
    // White's corner pieces are hemmed in by Black on d7, a4, g4 and d1; both hands are empty.
    let blocked = position(&["a7", "g7", "a1", "g1"], &["d7", "a4", "g4", "d1"], [0, 0], Color::White, false);
    assert_eq!(blocked.turns(), 18);
    let lost = Outcome::Win { winner: Color::Black, reason: WinReason::Blocked };
    assert_eq!(blocked.outcome(&rules), lost);
    assert!(blocked.legal_actions(&rules).is_empty());
    assert!(blocked.legal_actions_unchecked(&rules).is_empty());
    assert_eq!(Game::from_position(rules, blocked).outcome(), lost);

    // The same board while placing: a hand always has somewhere to go.
    let placing = position(&["a7", "g7", "a1", "g1"], &["d7", "a4", "g4", "d1"], [1, 1], Color::White, false);
    assert_eq!(placing.outcome(&rules), Outcome::Ongoing);
    assert_eq!(legal(&placing, &rules), empty_points(&placing));

    // With 3 pieces, flying frees a player whose slides are all blocked, unless flying is off.
    let three = position(&["a7", "g7", "a1"], &["d7", "a4", "g4", "d1"], [0, 0], Color::White, false);
    assert_eq!(three.outcome(&rules), Outcome::Ongoing);
    assert_eq!(three.legal_actions(&rules).count(), 3 * 17);
    let no_flying = Rules { flying: false, ..rules };
    assert_eq!(three.outcome(&no_flying), lost);
}

// ----- rule 9: nothing to remove ---------------------------------------------------------------

#[test]
fn closing_a_mill_when_the_opponent_has_no_piece_on_the_board_passes_the_turn() {
    let rules = Rules::standard();
    let pos = position(&["a7", "d7"], &[], [5, 5], Color::White, false);
    let mut game = Game::from_position(rules, pos);
    game.apply(at("g7")).unwrap(); // a7-d7-g7
    let after = *game.position();
    assert!(!after.is_removal_pending());
    assert_eq!(after.current_player(), Color::Black);
    assert_eq!(after.turns(), pos.turns() + 1);
    assert_eq!(after.hash(), after.compute_hash());
    assert_eq!(game.outcome(), Outcome::Ongoing);
    assert_eq!(game_legal(&game), empty_points(&after));
    // And such a position cannot be built with a removal pending.
    assert!(
        Position::from_parts(bb(&["a7", "d7", "g7"]), BitBoard::EMPTY, [4, 5], Color::White, true).is_err()
    );
}

// ----- rule 8: draws ---------------------------------------------------------------------------

/// White d6-d5, Black e3-e4, White d5-d6, Black e4-e3: back to the start of the cycle.
const SHUFFLE: [(&str, &str); 4] = [("d6", "d5"), ("e3", "e4"), ("d5", "d6"), ("e4", "e3")];

#[test]
fn threefold_repetition_draws_on_the_third_occurrence_only() {
    let mut game = Game::from_position(Rules::standard(), moving_position(Color::White));
    for (f, t) in SHUFFLE {
        game.apply(mv(f, t)).unwrap();
        assert_eq!(game.outcome(), Outcome::Ongoing);
    }
    assert_eq!(game.repetitions(), 2, "second occurrence of the start");
    assert_eq!(game.outcome(), Outcome::Ongoing);
    for (i, (f, t)) in SHUFFLE.into_iter().enumerate() {
        game.apply(mv(f, t)).unwrap();
        if i < 3 {
            assert_eq!(game.repetitions(), 2);
            assert_eq!(game.outcome(), Outcome::Ongoing, "after {f}-{t}");
        }
    }
    assert_eq!(game.repetitions(), 3);
    assert_eq!(game.outcome(), Outcome::Draw(DrawReason::ThreefoldRepetition));
    assert!(game.legal_actions().is_empty());
    // The position alone knows nothing of history; the game refuses further moves.
    assert_eq!(game.position().outcome(game.rules()), Outcome::Ongoing);
    let before = *game.position();
    assert_eq!(game.apply(mv("d6", "d5")), Err(ActionError::GameOver));
    assert_eq!(*game.position(), before);
    game.undo();
    assert_eq!(game.repetitions(), 2);
    assert_eq!(game.outcome(), Outcome::Ongoing);

    // With repetition off, the same moves go on.
    let rules = Rules { threefold_repetition: false, ..Rules::standard() };
    let mut game = Game::from_position(rules, moving_position(Color::White));
    for _ in 0..3 {
        for (f, t) in SHUFFLE {
            game.apply(mv(f, t)).unwrap();
        }
    }
    assert_eq!(game.outcome(), Outcome::Ongoing);
}

#[test]
fn n_move_rule_draws_after_n_quiet_plies() {
    let rules = Rules { n_move_rule: Some(4), ..standard_without_draws() };
    // Placements are not counted.
    let placing = Game::from_notation(rules, "d6 a1 g7 a4 c3 f2").unwrap();
    assert_eq!(placing.position().quiet_plies(), 0);
    assert_eq!(placing.outcome(), Outcome::Ongoing);

    let mut game = Game::from_position(rules, moving_position(Color::White));
    let plies = [("d6", "d5"), ("e3", "e4"), ("b4", "b2"), ("f6", "f4")];
    for (i, (f, t)) in plies.into_iter().enumerate() {
        assert_eq!(game.outcome(), Outcome::Ongoing, "before ply {i}");
        game.apply(mv(f, t)).unwrap();
        assert_eq!(game.position().quiet_plies(), i as u16 + 1);
    }
    assert_eq!(game.outcome(), Outcome::Draw(DrawReason::NMoveRule));
    assert!(game.legal_actions().is_empty());
    assert_eq!(game.apply(mv("d5", "d6")), Err(ActionError::GameOver));
}

#[test]
fn n_move_counter_is_reset_by_a_removal() {
    let rules = Rules { n_move_rule: Some(4), ..standard_without_draws() };
    let start =
        position(&["a7", "d7", "g4", "c4"], &["f6", "c5", "e3", "b2", "d1"], [0, 0], Color::White, false)
            .with_counters(40, 3);
    let mut game = Game::from_position(rules, start);
    assert_eq!(game.outcome(), Outcome::Ongoing);
    game.apply(mv("g4", "g7")).unwrap(); // the 4th quiet ply, but it closes a mill
    assert!(game.position().is_removal_pending());
    assert_eq!(game.outcome(), Outcome::Ongoing);
    game.apply(at("b2")).unwrap();
    assert_eq!(game.position().quiet_plies(), 0);
    assert_eq!(game.outcome(), Outcome::Ongoing);
    let plies = [("e3", "e4"), ("c4", "c3"), ("d1", "d2"), ("c3", "d3")];
    for (i, (f, t)) in plies.into_iter().enumerate() {
        assert_eq!(game.outcome(), Outcome::Ongoing, "before ply {i}");
        game.apply(mv(f, t)).unwrap();
        assert_eq!(game.position().quiet_plies(), i as u16 + 1);
    }
    assert_eq!(game.outcome(), Outcome::Draw(DrawReason::NMoveRule));
}

#[test]
fn turn_cap_draws_when_turns_reach_the_cap_counting_a_move_and_its_removal_as_one_turn() {
    let rules = Rules { turn_cap: Some(5), ..standard_without_draws() };
    let mut game = Game::from_notation(rules, "d6 a1 d5 a4 d7").unwrap();
    // Five plies, but the mill's removal is still to come: four turns.
    assert_eq!(game.actions().len(), 5);
    assert_eq!(game.position().turns(), 4);
    assert_eq!(game.outcome(), Outcome::Ongoing);
    game.play_notation("xa1").unwrap();
    assert_eq!(game.position().turns(), 5);
    assert_eq!(game.outcome(), Outcome::Draw(DrawReason::TurnCap));
    assert!(game.outcome().is_truncation());
    assert!(game.legal_actions().is_empty());
    assert_eq!(game.apply(at("g7")), Err(ActionError::GameOver));

    // Under the OpenSpiel preset a random game never passes 200 turns.
    let rules = Rules::openspiel();
    let mut rng = Rng::seed_from_u64(2024);
    let mut capped = 0;
    for _ in 0..40 {
        let mut game = Game::new(rules);
        while !game.outcome().is_terminal() {
            assert!(game.position().turns() < 200);
            let mask = game.legal_actions();
            game.apply(mask.nth(rng.below(mask.count())).unwrap()).unwrap();
        }
        assert!(game.position().turns() <= 200);
        if game.outcome() == Outcome::Draw(DrawReason::TurnCap) {
            assert_eq!(game.position().turns(), 200);
            capped += 1;
        }
    }
    assert!(capped > 0, "some random games should reach the cap");
}

#[test]
fn a_blocked_player_at_the_turn_cap_still_loses() {
    let rules = Rules::openspiel();
    // White's d2-d1 is the 200th turn and leaves Black's corner pieces without a move.
    let pos =
        position(&["d7", "a4", "g4", "d2", "b6"], &["a7", "g7", "a1", "g1"], [0, 0], Color::White, false)
            .with_counters(199, 0);
    let mut game = Game::from_position(rules, pos);
    assert_eq!(game.outcome(), Outcome::Ongoing);
    game.apply(mv("d2", "d1")).unwrap();
    assert_eq!(game.position().turns(), 200);
    assert_eq!(game.outcome(), Outcome::Win { winner: Color::White, reason: WinReason::Blocked });

    // At the cap: a position that is not blocked is a draw, a blocked one a loss.
    let open = moving_position(Color::White).with_counters(200, 0);
    assert_eq!(open.outcome(&rules), Outcome::Draw(DrawReason::TurnCap));
    let blocked = position(&["a7", "g7", "a1", "g1"], &["d7", "a4", "g4", "d1"], [0, 0], Color::White, false)
        .with_counters(200, 100);
    assert_eq!(blocked.outcome(&rules), Outcome::Win { winner: Color::Black, reason: WinReason::Blocked });
    // Likewise against the N-move rule.
    assert_eq!(
        blocked.outcome(&Rules::standard()),
        Outcome::Win { winner: Color::Black, reason: WinReason::Blocked }
    );

    // A removal that reaches the cap and leaves 2 pieces is a win too.
    let pos = position(&["a7", "d7", "g7", "c4"], &["f6", "c5", "e3"], [0, 0], Color::White, true)
        .with_counters(199, 0);
    let mut game = Game::from_position(rules, pos);
    game.apply(at("c5")).unwrap();
    assert_eq!(game.position().turns(), 200);
    assert_eq!(game.outcome(), Outcome::Win { winner: Color::White, reason: WinReason::TooFewPieces });
}

// ----- presets and serde -----------------------------------------------------------------------

#[test]
fn presets_have_the_values_of_rules_md() {
    assert_eq!(
        Rules::standard(),
        Rules {
            variant: Variant::Nine,
            flying: true,
            n_move_rule: Some(100),
            threefold_repetition: true,
            turn_cap: None
        }
    );
    assert_eq!(
        Rules::openspiel(),
        Rules {
            variant: Variant::Nine,
            flying: true,
            n_move_rule: None,
            threefold_repetition: false,
            turn_cap: Some(200)
        }
    );
    assert_eq!(Rules::default(), Rules::standard());
    assert_eq!(Rules::preset("standard"), Some(Rules::standard()));
    assert_eq!(Rules::preset("openspiel"), Some(Rules::openspiel()));
    assert_eq!(Rules::preset("twelve"), Some(Rules { variant: Variant::Twelve, ..Rules::standard() }));
    assert_eq!(Rules::preset("tournament"), None);
    assert_eq!(
        Rules::preset("morabaraba"),
        Some(Rules { variant: Variant::Morabaraba, ..Rules::standard() })
    );
    assert_eq!(Rules::preset("lasker"), Some(Rules { variant: Variant::Lasker, ..Rules::standard() }));
    // Six and three men's morris's presets do not fly; the others' do.
    assert_eq!(Rules::preset("six"), Some(Rules::six()));
    assert_eq!(Rules::preset("three"), Some(Rules::three()));
    assert!(!Rules::six().flying && !Rules::three().flying);
    assert_eq!(Rules::PRESETS, ["standard", "openspiel", "twelve", "morabaraba", "lasker", "six", "three"]);
    for v in Variant::ALL {
        assert_eq!(Rules::of(v).variant, v);
        assert_eq!(Rules::of(v), Rules::preset(v.name()).unwrap_or(Rules::standard()), "{v}");
    }
    for v in Variant::ALL {
        assert_eq!(Variant::from_id(v.id()), Some(v), "{v}");
    }
    assert_eq!(Variant::from_id(200), None);
}

#[test]
fn rules_round_trip_through_toml_and_reject_unknown_keys() {
    let variants = [
        Rules::standard(),
        Rules::openspiel(),
        Rules {
            variant: Variant::Nine,
            flying: false,
            n_move_rule: Some(4),
            threefold_repetition: false,
            turn_cap: Some(7),
        },
        Rules {
            variant: Variant::Nine,
            flying: false,
            n_move_rule: None,
            threefold_repetition: true,
            turn_cap: None,
        },
    ];
    for rules in variants {
        let text = toml::to_string(&rules).unwrap();
        let back: Rules = toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(back, rules, "{text}");
    }
    let written: Rules =
        toml::from_str("flying = true\nn_move_rule = 50\nthreefold_repetition = false\nturn_cap = 300")
            .unwrap();
    assert_eq!(
        written,
        Rules {
            variant: Variant::Nine,
            flying: true,
            n_move_rule: Some(50),
            threefold_repetition: false,
            turn_cap: Some(300)
        }
    );
    // The optional limits may be left out, meaning "off".
    let minimal: Rules = toml::from_str("flying = true\nthreefold_repetition = true").unwrap();
    assert_eq!(
        minimal,
        Rules {
            variant: Variant::Nine,
            flying: true,
            n_move_rule: None,
            threefold_repetition: true,
            turn_cap: None
        }
    );

    for bad in [
        "flying = true\nthreefold_repetition = true\nbogus = 1",
        "flying = true\nthreefold_repetition = true\nn_move_rules = 50",
        "flying = true\nthreefold_repetition = true\nturncap = 200",
    ] {
        assert!(toml::from_str::<Rules>(bad).is_err(), "accepted unknown key in {bad:?}");
    }
}

#[test]
fn the_variant_is_nine_unless_named_and_nine_is_left_out_of_files() {
    // Files written before variants existed read as nine; nine writes them as they were.
    let text = toml::to_string(&Rules::standard()).unwrap();
    assert!(!text.contains("variant"), "{text}");
    let named: Rules =
        toml::from_str("variant = \"nine\"\nflying = true\nthreefold_repetition = true").unwrap();
    assert_eq!(named, Rules { n_move_rule: None, ..Rules::standard() });
    assert!(!serde_json::to_string(&Rules::openspiel()).unwrap().contains("variant"));
    // An unknown variant is refused, naming it.
    let e = toml::from_str::<Rules>("variant = \"four\"\nflying = true\nthreefold_repetition = true")
        .unwrap_err();
    assert!(e.to_string().contains("four"), "{e}");
    let e = "four".parse::<Variant>().unwrap_err();
    assert_eq!(e, morris_env::UnknownVariant { name: "four".into() });
    assert_eq!(
        e.to_string(),
        "unknown variant 'four' (variants: nine, twelve, morabaraba, lasker, six, three)"
    );
    let six: Rules =
        toml::from_str("variant = \"six\"\nflying = false\nn_move_rule = 100\nthreefold_repetition = true")
            .unwrap();
    assert_eq!(six, Rules::six());
    let twelve: Rules =
        toml::from_str("variant = \"twelve\"\nflying = true\nn_move_rule = 100\nthreefold_repetition = true")
            .unwrap();
    assert_eq!(twelve, Rules::twelve());
    assert!(toml::to_string(&twelve).unwrap().contains("variant = \"twelve\""));
    for (v, name) in Variant::ALL.into_iter().zip(Variant::NAMES) {
        assert_eq!(v.name(), name);
        assert_eq!(name.parse::<Variant>(), Ok(v));
        assert_eq!(v.to_string(), name);
    }
    assert_eq!(Variant::Nine.pieces(), 9);
    assert_eq!(Variant::Nine.board().num_points, 24);
    assert_eq!((Variant::Twelve.pieces(), Variant::Twelve.board().num_mills), (12, 20));
}

// ----- twelve men's morris ---------------------------------------------------------------------

fn twelve_position(white: &[&str], black: &[&str], in_hand: [u8; 2], side: Color, pending: bool) -> Position {
    Position::from_parts_for(&Rules::twelve(), bb(white), bb(black), in_hand, side, pending as u8)
        .unwrap_or_else(|e| panic!("inconsistent test position: {e}"))
}

#[test]
fn twelve_starts_with_twelve_in_each_hand_and_its_start_hash_is_its_own() {
    let rules = Rules::twelve();
    let start = Position::start_for(&rules);
    assert_eq!([start.in_hand(Color::White), start.in_hand(Color::Black)], [12, 12]);
    assert_eq!(start.hash(), start.compute_hash());
    assert_ne!(start.hash(), Position::start().hash());
    assert_eq!(Game::new(rules).position(), &start);
    // Twelve pieces fit; a thirteenth does not.
    assert!(
        Position::from_parts_for(&rules, bb(&["a7"]), BitBoard::EMPTY, [11, 12], Color::Black, 0).is_ok()
    );
    assert!(Position::from_parts(bb(&["a7"]), BitBoard::EMPTY, [11, 12], Color::Black, false).is_err());
    assert_eq!(
        Position::from_parts_for(&rules, bb(&["a7"]), BitBoard::EMPTY, [12, 12], Color::Black, 0),
        Err(morris_env::PositionError::TooManyPieces(Color::White))
    );
}

#[test]
fn twelve_slides_along_the_diagonals_and_closes_mills_on_them() {
    let rules = Rules::twelve();
    // b6 touches a7 and c5 along its diagonal, and d6 and b4 as in nine.
    let pos = twelve_position(&["b6", "g1", "a1"], &["d7", "g7", "a4", "e3"], [0, 0], Color::White, false);
    let nine_rules = Rules { flying: false, ..Rules::standard() };
    let twelve_rules = Rules { flying: false, ..rules };
    let from_b6: BTreeSet<Action> = legal(&pos, &twelve_rules)
        .into_iter()
        .filter(|a| a.as_movement().is_some_and(|(f, _)| f == pt("b6")))
        .collect();
    assert_eq!(from_b6, move_actions(&[("b6", "a7"), ("b6", "c5"), ("b6", "d6"), ("b6", "b4")]));
    assert_eq!(
        pos.check(mv("b6", "a7"), &nine_rules),
        Err(ActionError::NotAdjacent { from: pt("b6"), to: pt("a7") })
    );
    // Placing c3 completes the diagonal a1-b2-c3: a removal follows (none under nine's board).
    let placing =
        twelve_position(&["a1", "b2", "a7", "d7"], &["g7", "g4", "d2", "f2"], [8, 8], Color::White, false);
    let mut after = placing;
    after.apply(at("c3"), &rules).unwrap();
    assert!(after.is_removal_pending() && after.current_player() == Color::White);
    assert_eq!(after.hash(), after.compute_hash());
    // A diagonal mill protects its pieces like any other.
    let mut nine_after =
        Position::from_parts(bb(&["a1", "b2", "a7"]), bb(&["g7", "g4", "d2"]), [6, 6], Color::White, false)
            .unwrap();
    nine_after.apply(at("c3"), &Rules::standard()).unwrap();
    assert!(!nine_after.is_removal_pending());
    let black_diag =
        twelve_position(&["a4", "d7", "g4"], &["a7", "b6", "c5", "d2"], [0, 0], Color::White, true);
    assert_eq!(black_diag.removable(&rules), bb(&["d2"]));
    assert_eq!(black_diag.removable(&Rules::standard()), bb(&["a7", "b6", "c5", "d2"]));
}

#[test]
fn twelve_is_drawn_when_the_board_fills_during_placement() {
    let rules = Rules::twelve();
    // 24 points, 12 pieces each: a placement phase that closes no mill ends with a full board,
    // where nobody can move. That is a draw, before the "blocked" rule.
    let white = ["d7", "g7", "d6", "c5", "e5", "a4", "b4", "e4", "c3", "d2", "f2", "g1"];
    let black = ["a7", "b6", "f6", "d5", "c4", "f4", "g4", "d3", "e3", "b2", "a1", "d1"];
    let full = twelve_position(&white, &black, [0, 0], Color::White, false);
    assert!(full.legal_actions(&rules).is_empty());
    assert_eq!(full.outcome(&rules), Outcome::Draw(DrawReason::BoardFull));
    assert_eq!(Outcome::Draw(DrawReason::BoardFull).to_string(), "draw (full board)");
    assert_eq!(full.check(mv("a7", "d7"), &rules), Err(ActionError::GameOver));
    // Play it out: every placement legal, and the game ends drawn after the 24th.
    let mut game = Game::new(rules);
    for (w, b) in white.iter().zip(&black) {
        game.apply(at(w)).unwrap();
        game.apply(at(b)).unwrap();
    }
    assert_eq!(game.outcome(), Outcome::Draw(DrawReason::BoardFull));
    assert_eq!(game.position().turns(), 24);
}

// ----- notation --------------------------------------------------------------------------------

#[test]
fn notation_round_trips_for_placement_move_and_removal() {
    let cases = [
        ("d6", Move::Place(pt("d6")), Action(4), false),
        ("a1-a4", Move::Slide { from: pt("a1"), to: pt("a4") }, Action(24 + 21 * 24 + 9), false),
        ("xg7", Move::Remove(pt("g7")), Action(2), true),
    ];
    for (text, m, action, pending) in cases {
        let parsed: Move = text.parse().unwrap();
        assert_eq!(parsed, m);
        assert_eq!(parsed.to_string(), text);
        assert_eq!(parsed.to_action(), action);
        assert_eq!(Move::from_action(action, pending), Some(m));
    }
    let record = "d6 a1 d5 a4 d7 xa1 g7 a7 g4";
    let game = Game::from_notation(Rules::standard(), record).unwrap();
    assert_eq!(game.record(), record);
    assert_eq!(Game::from_notation(Rules::standard(), &game.record()).unwrap().position(), game.position());
}

#[test]
fn parse_action_reports_expected_unexpected_and_illegal_moves() {
    let rules = Rules::standard();
    let pending = *Game::from_notation(rules, "d6 a1 d5 a4 d7").unwrap().position();
    assert_eq!(pending.parse_action("xa1", &rules), Ok(at("a1")));
    assert_eq!(pending.parse_action("g7", &rules), Err(NotationError::ExpectedRemoval("g7".into())));
    assert_eq!(pending.parse_action("d6-g7", &rules), Err(NotationError::ExpectedRemoval("d6-g7".into())));
    assert_eq!(
        pending.parse_action("xd6", &rules),
        Err(NotationError::Illegal {
            text: "xd6".into(),
            error: ActionError::NothingToRemove(pt("d6")),
            variant: Variant::Nine
        })
    );

    let placing = *Game::from_notation(rules, "d6 a1").unwrap().position();
    assert_eq!(placing.parse_action("g7", &rules), Ok(at("g7")));
    assert_eq!(placing.parse_action("xg7", &rules), Err(NotationError::UnexpectedRemoval("xg7".into())));
    assert_eq!(
        placing.parse_action("d6", &rules),
        Err(NotationError::Illegal {
            text: "d6".into(),
            error: ActionError::PointOccupied(pt("d6")),
            variant: Variant::Nine
        })
    );
    assert_eq!(
        placing.parse_action("a1-a4", &rules),
        Err(NotationError::Illegal {
            text: "a1-a4".into(),
            error: ActionError::MustPlace(mv("a1", "a4")),
            variant: Variant::Nine
        })
    );
    assert_eq!(placing.parse_action("d4", &rules), Err(NotationError::UnknownPoint("d4".into())));
    assert_eq!(placing.parse_action("", &rules), Err(NotationError::Empty));
    assert!(matches!(placing.parse_action("d6d5", &rules), Err(NotationError::Malformed(_))));

    let protected =
        position(&["b6", "d6", "f6", "c3"], &["a7", "d7", "g7", "b4"], [0, 0], Color::White, true);
    assert_eq!(
        protected.parse_action("xa7", &rules),
        Err(NotationError::Illegal {
            text: "xa7".into(),
            error: ActionError::ProtectedPiece(pt("a7")),
            variant: Variant::Nine
        })
    );
    let moving = moving_position(Color::White);
    assert_eq!(moving.parse_action("d6-d5", &rules), Ok(mv("d6", "d5")));
    assert_eq!(
        moving.parse_action("d6-g1", &rules),
        Err(NotationError::Illegal {
            text: "d6-g1".into(),
            error: ActionError::NotAdjacent { from: pt("d6"), to: pt("g1") },
            variant: Variant::Nine,
        })
    );
}

#[test]
fn from_notation_reports_the_failing_ply() {
    let rules = Rules::standard();
    let at_ply = |ply: usize, error: NotationError| NotationError::AtPly { ply, error: Box::new(error) };
    assert_eq!(
        Game::from_notation(rules, "d6 a1 d6").unwrap_err(),
        at_ply(
            2,
            NotationError::Illegal {
                text: "d6".into(),
                error: ActionError::PointOccupied(pt("d6")),
                variant: Variant::Nine
            }
        )
    );
    assert_eq!(
        Game::from_notation(rules, "d6 a1 d5 a4 d7 g7").unwrap_err(),
        at_ply(5, NotationError::ExpectedRemoval("g7".into()))
    );
    assert_eq!(
        Game::from_notation(rules, "d6 xa1").unwrap_err(),
        at_ply(1, NotationError::UnexpectedRemoval("xa1".into()))
    );
    assert_eq!(
        Game::from_notation(rules, "zz").unwrap_err(),
        at_ply(0, NotationError::UnknownPoint("zz".into()))
    );
}

// ----- game: game over and undo ----------------------------------------------------------------

#[test]
fn apply_after_the_game_is_over_returns_game_over() {
    let rules = Rules::standard();
    let blocked = position(&["a7", "g7", "a1", "g1"], &["d7", "a4", "g4", "d1"], [0, 0], Color::White, false);
    let mut game = Game::from_position(rules, blocked);
    assert!(game.outcome().is_terminal());
    for a in [at("d6"), mv("a7", "b6"), Action(0), Action(599)] {
        assert_eq!(game.apply(a), Err(ActionError::GameOver));
    }
    assert_eq!(game.apply(Action(600)), Err(ActionError::OutOfRange(Action(600))));
    assert_eq!(
        game.play_notation("d6"),
        Err(NotationError::Illegal {
            text: "d6".into(),
            error: ActionError::GameOver,
            variant: Variant::Nine
        })
    );
    assert_eq!(*game.position(), blocked);
    assert!(game.actions().is_empty());
    let mut pos = blocked;
    assert_eq!(pos.apply(at("d6"), &rules), Err(ActionError::GameOver));
    assert_eq!(pos, blocked);
}

#[test]
fn undo_restores_the_previous_position_exactly() {
    for seed in 0..8 {
        let mut rng = Rng::seed_from_u64(seed);
        let mut game = Game::new(Rules::standard());
        assert_eq!(game.undo(), None);
        let mut trail = vec![(*game.position(), game.repetitions(), game.outcome(), game.legal_actions())];
        while !game.outcome().is_terminal() {
            let mask = game.legal_actions();
            let a = mask.nth(rng.below(mask.count())).unwrap();
            game.apply(a).unwrap();
            trail.push((*game.position(), game.repetitions(), game.outcome(), game.legal_actions()));
        }
        let played = game.actions().to_vec();
        trail.pop();
        while let Some((pos, reps, outcome, mask)) = trail.pop() {
            let a = game.undo().expect("an action to undo");
            assert_eq!(Some(&a), played.get(trail.len()));
            assert_eq!(*game.position(), pos);
            assert_eq!(game.position().hash(), pos.hash());
            assert_eq!(game.position().turns(), pos.turns());
            assert_eq!(game.position().quiet_plies(), pos.quiet_plies());
            assert_eq!(game.repetitions(), reps);
            assert_eq!(game.outcome(), outcome);
            assert_eq!(game.legal_actions(), mask);
        }
        assert_eq!(*game.position(), Position::start());
        assert_eq!(game.undo(), None);
    }
}

// ----- Zobrist ---------------------------------------------------------------------------------

#[test]
fn incremental_hash_equals_compute_hash_along_random_games() {
    let rule_sets = [Rules::standard(), Rules::openspiel(), Rules { flying: false, ..Rules::standard() }];
    let mut plies = 0;
    for (r, rules) in rule_sets.into_iter().enumerate() {
        for seed in 0..30 {
            let mut rng = Rng::seed_from_u64(1000 * r as u64 + seed);
            let mut game = Game::new(rules);
            assert_eq!(game.position().hash(), game.position().compute_hash());
            while !game.outcome().is_terminal() {
                let mask = game.legal_actions();
                let a = mask.nth(rng.below(mask.count())).unwrap();
                game.apply(a).unwrap();
                let pos = game.position();
                assert_eq!(
                    pos.hash(),
                    pos.compute_hash(),
                    "seed {seed}, ply {}\n{pos}",
                    game.actions().len()
                );
                // A position rebuilt from its parts hashes the same.
                let rebuilt = Position::from_parts(
                    pos.pieces(Color::White),
                    pos.pieces(Color::Black),
                    [pos.in_hand(Color::White), pos.in_hand(Color::Black)],
                    pos.current_player(),
                    pos.is_removal_pending(),
                )
                .unwrap();
                assert_eq!(rebuilt.hash(), pos.hash());
                plies += 1;
            }
        }
    }
    assert!(plies > 5_000, "only {plies} plies checked");
}

#[test]
fn hash_distinguishes_side_to_move_hands_and_pending_removal() {
    let a = moving_position(Color::White);
    let b = moving_position(Color::Black);
    assert_ne!(a.hash(), b.hash());
    let c = position(&["a7", "d6", "b4", "c3"], &["d7", "a4", "f6", "e3"], [1, 1], Color::White, false);
    assert_ne!(a.hash(), c.hash());
    let d = position(&["a7", "d6", "b4", "c3"], &["d7", "a4", "f6", "e3"], [0, 0], Color::White, true);
    assert_ne!(a.hash(), d.hash());
}

// ----- positions built from parts --------------------------------------------------------------

#[test]
fn from_parts_matches_a_position_reached_in_play() {
    let rules = Rules::standard();
    let game = Game::from_notation(rules, "d6 a1 d5 a4").unwrap();
    let built = position(&["d6", "d5"], &["a1", "a4"], [7, 7], Color::White, false);
    assert_eq!(built, *game.position());
}

#[test]
fn from_parts_with_a_pending_removal_counts_turns_as_play_does() {
    // A turn is counted when play passes (rules.md, rule 8): after "d6 a1 d5 a4 d7" five pieces
    // are placed but White still has to remove, so four turns have been played.
    let rules = Rules::standard();
    let game = Game::from_notation(rules, "d6 a1 d5 a4 d7").unwrap();
    assert_eq!(game.position().turns(), 4);
    let built = position(&["d6", "d5", "d7"], &["a1", "a4"], [6, 7], Color::White, true);
    assert_eq!(built.hash(), game.position().hash());
    assert_eq!(built.turns(), 4, "from_parts counts the unfinished turn");
    assert_eq!(built, *game.position());
}

// ----- morabaraba ------------------------------------------------------------------------------

fn morabaraba_position(white: &[&str], black: &[&str], in_hand: [u8; 2], side: Color) -> Position {
    Position::from_parts_for(&Rules::morabaraba(), bb(white), bb(black), in_hand, side, 0)
        .unwrap_or_else(|e| panic!("inconsistent test position: {e}"))
}

/// Placing b6 closes the diagonal a7-b6-c5 and the row b6-d6-f6 at once: two removals in
/// morabaraba (one in twelve men's morris), each its own action by the same player, with the
/// protection of mills recomputed between them.
#[test]
fn morabaraba_double_mill_earns_two_removals_with_protection_recomputed() {
    let rules = Rules::morabaraba();
    let pos = morabaraba_position(&["a7", "c5", "d6", "f6"], &["g7", "g4", "g1", "d1"], [8, 8], Color::White);
    let mut twelve = Position::from_parts_for(
        &Rules::twelve(),
        pos.pieces(Color::White),
        pos.pieces(Color::Black),
        [8, 8],
        Color::White,
        0,
    )
    .unwrap();
    twelve.apply(at("b6"), &Rules::twelve()).unwrap();
    assert_eq!(twelve.removals_pending(), 1);

    let mut p = pos;
    p.apply(at("b6"), &rules).unwrap();
    assert_eq!((p.removals_pending(), p.current_player()), (2, Color::White));
    assert_eq!(p.hash(), p.compute_hash());
    assert_ne!(p.hash(), twelve.hash(), "a second removal pending is another position");
    // The column g7-g4-g1 protects its pieces: only d1 may go first.
    assert_eq!(p.removable(&rules), bb(&["d1"]));
    assert_eq!(p.check(at("g4"), &rules), Err(ActionError::ProtectedPiece(pt("g4"))));
    p.apply(at("d1"), &rules).unwrap();
    assert_eq!((p.removals_pending(), p.current_player()), (1, Color::White));
    assert_eq!(p.hash(), p.compute_hash());
    // Now every black piece stands in a mill: any may be taken.
    assert_eq!(p.removable(&rules), bb(&["g7", "g4", "g1"]));
    p.apply(at("g4"), &rules).unwrap();
    assert_eq!((p.removals_pending(), p.current_player()), (0, Color::Black));
    assert_eq!(p.hash(), p.compute_hash());
    assert_eq!(p.pieces(Color::Black), bb(&["g7", "g1"]));
    let round_trip = Position::from_parts_for(
        &rules,
        bb(&["a7", "b6", "c5", "d6", "f6"]),
        bb(&["g7", "g4", "g1", "d1"]),
        [7, 8],
        Color::White,
        2,
    )
    .unwrap();
    let mut again = pos;
    again.apply(at("b6"), &rules).unwrap();
    assert_eq!(round_trip.hash(), again.hash());
    // Two removals pending exist only in morabaraba.
    assert_eq!(
        Position::from_parts_for(&Rules::twelve(), bb(&["a7"]), bb(&["g7"]), [11, 11], Color::White, 2),
        Err(morris_env::PositionError::TooManyRemovals(2))
    );
}

/// A first removal that leaves the opponent two pieces wins at once; one that leaves no piece
/// on the board ends the turn without the second.
#[test]
fn morabaraba_second_removal_gives_way_to_a_win_or_an_empty_board() {
    let rules = Rules::morabaraba();
    // Moving: b4-b6 closes two mills against three black pieces.
    let mut p =
        morabaraba_position(&["a7", "c5", "d6", "f6", "b4"], &["g1", "g4", "d1"], [0, 0], Color::White);
    p.apply(mv("b4", "b6"), &rules).unwrap();
    assert_eq!(p.removals_pending(), 2);
    p.apply(at("d1"), &rules).unwrap();
    assert_eq!(p.outcome(&rules), Outcome::Win { winner: Color::White, reason: WinReason::TooFewPieces });
    // Placing against a single black piece on the board: the second removal has no target.
    let mut p = morabaraba_position(&["a7", "c5", "d6", "f6"], &["g1"], [8, 8], Color::White);
    p.apply(at("b6"), &rules).unwrap();
    assert_eq!(p.removals_pending(), 2);
    p.apply(at("g1"), &rules).unwrap();
    assert_eq!((p.removals_pending(), p.current_player()), (0, Color::Black));
    assert_eq!(p.hash(), p.compute_hash());
    assert_eq!(p.outcome(&rules), Outcome::Ongoing);
}

// ----- Lasker morris ---------------------------------------------------------------------------

fn lasker_position(white: &[&str], black: &[&str], in_hand: [u8; 2], side: Color) -> Position {
    Position::from_parts_for(&Rules::lasker(), bb(white), bb(black), in_hand, side, 0)
        .unwrap_or_else(|e| panic!("inconsistent test position: {e}"))
}

/// With pieces in hand a Lasker turn places or slides along a line (never flies, even with 3
/// pieces on the board); the slide keeps the hand, counts as a quiet ply and passes the turn.
/// Nine men's morris refuses the same slide.
#[test]
fn lasker_turn_with_pieces_in_hand_places_or_slides() {
    let rules = Rules::lasker();
    assert_eq!(Position::start_for(&rules).in_hand(Color::White), 10);
    let pos = lasker_position(&["a7", "g1", "d3"], &["d7"], [7, 9], Color::White);
    let slides =
        move_actions(&[("a7", "a4"), ("g1", "g4"), ("g1", "d1"), ("d3", "c3"), ("d3", "e3"), ("d3", "d2")]);
    let want: BTreeSet<Action> = empty_points(&pos).union(&slides).copied().collect();
    assert_eq!(legal(&pos, &rules), want);
    assert_eq!(pos.phase(Color::White, &rules), Phase::Placing);
    assert_eq!(
        pos.check(mv("a7", "b6"), &rules),
        Err(ActionError::NotAdjacent { from: pt("a7"), to: pt("b6") })
    );
    let mut next = pos;
    next.apply(mv("a7", "a4"), &rules).unwrap();
    assert_eq!((next.in_hand(Color::White), next.current_player(), next.quiet_plies()), (7, Color::Black, 1));
    assert_eq!(next.hash(), next.compute_hash());
    // The same slide in nine men's morris: placing comes first.
    let nine = position(&["a7", "g1", "d3"], &["d7"], [6, 6], Color::White, false);
    assert_eq!(nine.check(mv("a7", "a4"), &Rules::standard()), Err(ActionError::MustPlace(mv("a7", "a4"))));
}

/// A slide while placing that closes a mill earns a removal, as a placement does.
#[test]
fn lasker_slide_while_placing_closes_a_mill() {
    let rules = Rules::lasker();
    let mut pos = lasker_position(&["a7", "d7", "g4"], &["d1", "d2"], [7, 8], Color::White);
    pos.apply(mv("g4", "g7"), &rules).unwrap();
    assert!(pos.is_removal_pending());
    assert_eq!(legal(&pos, &rules), point_actions(&["d1", "d2"]));
    pos.apply(at("d2"), &rules).unwrap();
    assert_eq!((pos.current_player(), pos.quiet_plies(), pos.in_hand(Color::White)), (Color::Black, 0, 7));
}

/// Hands in Lasker morris need not alternate (a turn may slide instead of placing), so
/// `from_parts_for` takes any hands and either side to move; nine men's morris refuses them.
#[test]
fn lasker_hands_need_not_alternate() {
    for side in Color::ALL {
        assert!(
            Position::from_parts_for(&Rules::lasker(), bb(&["a7"]), bb(&["g7"]), [3, 9], side, 0).is_ok()
        );
    }
    assert_eq!(
        Position::from_parts_for(&Rules::standard(), bb(&["a7"]), bb(&["g7"]), [3, 8], Color::White, 0),
        Err(morris_env::PositionError::InconsistentHands)
    );
    assert_eq!(
        Position::from_parts_for(&Rules::lasker(), bb(&["a7", "d7"]), bb(&["g7"]), [9, 9], Color::White, 0),
        Err(morris_env::PositionError::TooManyPieces(Color::White))
    );
}

/// Threefold repetition counts across placements and slides mixed in Lasker morris's placing
/// phase: a placement changes the material, so the positions before it never match, and the
/// slides after it repeat as in the moving phase.
#[test]
fn lasker_repetition_with_placements_interleaved() {
    let mut game = Game::new(Rules::lasker());
    // Placements and slides mixed; the position after the placement of b6 (White: d7 b6,
    // Black: d1, Black to move) is the first of its kind.
    for m in ["a7", "g1", "a7-d7", "g1-d1", "b6"] {
        game.play_notation(m).unwrap();
    }
    assert_eq!(game.repetitions(), 1);
    for m in ["d1-g1", "d7-a7", "g1-d1", "a7-d7"] {
        game.play_notation(m).unwrap();
    }
    assert_eq!(game.repetitions(), 2);
    assert_eq!(game.outcome(), Outcome::Ongoing);
    for m in ["d1-g1", "d7-a7", "g1-d1", "a7-d7"] {
        game.play_notation(m).unwrap();
    }
    assert_eq!(game.repetitions(), 3);
    assert_eq!(game.outcome(), Outcome::Draw(DrawReason::ThreefoldRepetition));
    assert_eq!((game.position().in_hand(Color::White), game.position().in_hand(Color::Black)), (8, 9));
}

// ----- six men's morris ------------------------------------------------------------------------

/// A point of `variant`'s board by its name (the board's own numbering).
fn pt_on(variant: Variant, name: &str) -> Point {
    let board = variant.board();
    board.point_named(name).unwrap_or_else(|| panic!("no point {name} on {}'s board", board.name))
}

fn bb_on(variant: Variant, names: &[&str]) -> BitBoard {
    names.iter().fold(BitBoard::EMPTY, |acc, n| acc | pt_on(variant, n).bit())
}

fn mv_on(variant: Variant, from: &str, to: &str) -> Action {
    Action::movement_on(variant.board(), pt_on(variant, from), pt_on(variant, to))
}

fn position_on(rules: &Rules, white: &[&str], black: &[&str], in_hand: [u8; 2], side: Color) -> Position {
    let v = rules.variant;
    Position::from_parts_for(rules, bb_on(v, white), bb_on(v, black), in_hand, side, 0)
        .unwrap_or_else(|e| panic!("inconsistent test position: {e}"))
}

/// A point of six men's morris's board by its name (its own numbering: a5 is 0, e1 is 15).
fn six_pt(name: &str) -> Point {
    pt_on(Variant::Six, name)
}

fn six_mv(from: &str, to: &str) -> Action {
    mv_on(Variant::Six, from, to)
}

fn six_position(white: &[&str], black: &[&str], in_hand: [u8; 2], side: Color) -> Position {
    position_on(&Rules::six(), white, black, in_hand, side)
}

/// Six men's morris places on its own 16 points (actions 0..16) with 6 pieces a side; its moves
/// are numbered `16 + 16·from + to`, and actions from 272 on are out of its range.
#[test]
fn six_places_on_its_16_points() {
    let rules = Rules::six();
    let pos = Position::start_for(&rules);
    assert_eq!((pos.in_hand(Color::White), pos.in_hand(Color::Black)), (6, 6));
    let want: BTreeSet<Action> = (0..16).map(Action).collect();
    assert_eq!(legal(&pos, &rules), want);
    assert_eq!(pos.check(Action(16), &rules), Err(ActionError::MustPlace(Action(16))));
    assert_eq!(pos.check(Action(272), &rules), Err(ActionError::OutOfRange(Action(272))));
    assert_eq!(pos.check(Action(599), &rules), Err(ActionError::OutOfRange(Action(599))));
    assert_eq!(six_mv("a5", "c5"), Action(17));
    assert_eq!(Variant::Six.board().num_actions(), 272);
}

/// Mills run only along the squares' sides: three pieces on a side close one, while the spokes
/// (a3-b3, c5-c4, ...) are lines to slide along but in no mill.
#[test]
fn six_mills_are_the_sides_and_the_spokes_are_lines() {
    let rules = Rules::six();
    let mut pos = six_position(&["b4", "b3", "a5", "d3"], &["e5", "e1", "c1", "d2"], [2, 2], Color::White);
    pos.apply(Action::point(six_pt("b2")), &rules).unwrap();
    assert!(pos.is_removal_pending(), "b4-b3-b2 is the inner square's left side");
    let mut pos = six_position(&["a3", "c5", "d3"], &["e5", "e1", "c1"], [3, 3], Color::White);
    pos.apply(Action::point(six_pt("b3")), &rules).unwrap();
    assert!(!pos.is_removal_pending(), "a3-b3 is a spoke, not part of a mill");
    // Slides follow the spokes: c5 to c4, d3 to e3.
    let pos = six_position(
        &["a3", "c5", "d3", "a1", "e5", "c1"],
        &["b4", "e1", "d2", "b2", "a5", "d4"],
        [0, 0],
        Color::White,
    );
    let slides = legal(&pos, &rules);
    for (from, to) in [("c5", "c4"), ("d3", "e3"), ("a3", "b3"), ("c1", "c2")] {
        assert!(slides.contains(&six_mv(from, to)), "{from}-{to}");
    }
    assert_eq!(pos.check(six_mv("c5", "d4"), &rules), Err(ActionError::PointOccupied(six_pt("d4"))));
    assert_eq!(
        pos.check(six_mv("a3", "c4"), &rules),
        Err(ActionError::NotAdjacent { from: six_pt("a3"), to: six_pt("c4") })
    );
}

/// Six men's morris's preset does not fly: with 3 pieces a player slides, and with 2 loses.
/// With the flying switch on, a flight reaches any of the 16 points and none beyond.
#[test]
fn six_slides_with_three_pieces_unless_flying_is_switched_on() {
    let rules = Rules::six();
    assert!(!rules.flying);
    let pos = six_position(&["a5", "c4", "e1"], &["b4", "d4", "b2", "d2"], [0, 0], Color::White);
    assert_eq!(pos.phase(Color::White, &rules), Phase::Moving);
    let want = BTreeSet::from([
        six_mv("a5", "c5"),
        six_mv("a5", "a3"),
        six_mv("c4", "c5"),
        six_mv("e1", "c1"),
        six_mv("e1", "e3"),
    ]);
    assert_eq!(legal(&pos, &rules), want);
    let flying = Rules { flying: true, ..rules };
    assert_eq!(pos.phase(Color::White, &flying), Phase::Flying);
    assert_eq!(legal(&pos, &flying).len(), 3 * 9, "3 pieces, 9 empty points");
    assert!(legal(&pos, &flying).iter().all(|a| a.index() < 272));
    let two = six_position(&["a5", "c4"], &["b4", "d4", "b2"], [0, 0], Color::White);
    assert_eq!(two.outcome(&rules), Outcome::Win { winner: Color::Black, reason: WinReason::TooFewPieces });
}

/// The text board is drawn from the board's data: nine's is the drawing the lab always printed,
/// six's its two squares on the 5 × 5 lattice with the spokes.
#[test]
fn text_boards_are_drawn_from_the_board() {
    let nine = position(&["a7", "d5"], &["g1"], [7, 7], Color::White, false);
    let want = [
        "7 W-----------.-----------.",
        "  |           |           |",
        "6 |   .-------.-------.   |",
        "  |   |       |       |   |",
        "5 |   |   .---W---.   |   |",
        "  |   |   |       |   |   |",
        "4 .---.---.       .---.---.",
        "  |   |   |       |   |   |",
        "3 |   |   .---.---.   |   |",
        "  |   |       |       |   |",
        "2 |   .-------.-------.   |",
        "  |           |           |",
        "1 .-----------.-----------B",
        "  a   b   c   d   e   f   g",
        "White to move | in hand: White 7, Black 7 | turn 4",
    ];
    assert_eq!(nine.to_string(), want.join("\n"));
    assert_eq!(nine.display(&Rules::standard()).to_string(), nine.to_string());
    let six = six_position(&["a5", "c4"], &["e1"], [4, 4], Color::White);
    let want = [
        "5 W-------.-------.",
        "  |       |       |",
        "4 |   .---W---.   |",
        "  |   |       |   |",
        "3 .---.       .---.",
        "  |   |       |   |",
        "2 |   .---.---.   |",
        "  |       |       |",
        "1 .-------.-------B",
        "  a   b   c   d   e",
        "White to move | in hand: White 4, Black 4 | turn 4",
    ];
    assert_eq!(six.display(&Rules::six()).to_string(), want.join("\n"));
}

/// A six men's morris game reads and writes its moves with its own point names.
#[test]
fn six_games_use_its_point_names() {
    let mut game = Game::new(Rules::six());
    for m in ["a5", "b4", "c5", "c4", "e5", "xc4"] {
        game.play_notation(m).unwrap();
    }
    assert_eq!(game.record(), "a5 b4 c5 c4 e5 xc4");
    assert!(matches!(
        game.play_notation("d6"),
        Err(NotationError::NotOnBoard { ref name, board: "six" }) if name == "d6"
    ));
    assert!(matches!(game.play_notation("a5-a3"), Err(NotationError::Illegal { .. })));
    // Errors name six's points and its action range.
    let mut game = Game::new(Rules::six());
    game.play_notation("a5").unwrap();
    let e = game.play_notation("a5").unwrap_err();
    assert_eq!(e.to_string(), "'a5' is illegal: point a5 is not empty");
    let pos = six_position(
        &["a3", "c5", "d3", "a1", "e5", "c1"],
        &["b4", "e1", "d2", "b2", "a5", "d4"],
        [0, 0],
        Color::White,
    );
    let not_adjacent = pos.check(six_mv("a3", "c4"), &Rules::six()).unwrap_err();
    assert_eq!(
        not_adjacent.on(Variant::Six.board()).to_string(),
        "a3 and c4 are not adjacent, and flying is not allowed now"
    );
    let out = pos.check(Action(300), &Rules::six()).unwrap_err();
    assert!(out.on(Variant::Six.board()).to_string().contains("valid actions are 0..272"), "{out}");
    assert_eq!(
        ActionError::PointOccupied(pt("d6")).to_string(),
        "point d6 is not empty",
        "nine's names by default"
    );
}

/// A `VecEnv` of six men's morris has its board's shapes: `[N, 15, 16]` observations and
/// 272-wide masks, whose legal actions are those of each env's game.
#[test]
fn vec_env_plays_six_mens_morris_with_its_shapes() {
    let config =
        morris_env::VecEnvConfig { expand_masks: true, ..morris_env::VecEnvConfig::new(8, Rules::six()) };
    let mut env = morris_env::VecEnv::new(config).unwrap();
    assert_eq!(env.observations_view().dim(), (8, 15, 16));
    assert_eq!(env.num_actions(), 272);
    for _ in 0..300 {
        env.step_random();
        let dense = env.masks_view().unwrap();
        assert_eq!(dense.dim(), (8, 272));
        for i in 0..8 {
            let legal = env.game(i).legal_actions();
            assert!(legal.iter().all(|a| a.index() < 272));
            let row: Vec<usize> = (0..272).filter(|&a| dense[[i, a]]).collect();
            let want: Vec<usize> =
                if env.outcome(i).is_terminal() { vec![] } else { legal.iter().map(|a| a.index()).collect() };
            assert_eq!(row, want, "env {i}");
        }
    }
    let mut bytes = vec![0u8; 8 * 272];
    env.masks_u8(&mut bytes).unwrap();
    assert!(env.masks_u8(&mut vec![0u8; 8 * 600]).is_err());
}

// ----- three men's morris ----------------------------------------------------------------------

/// A point of three men's morris's board by its name (a3 is 0, c1 is 8).
fn three_pt(name: &str) -> Point {
    pt_on(Variant::Three, name)
}

fn three_bb(names: &[&str]) -> BitBoard {
    bb_on(Variant::Three, names)
}

fn three_mv(from: &str, to: &str) -> Action {
    mv_on(Variant::Three, from, to)
}

fn three_position(white: &[&str], black: &[&str], in_hand: [u8; 2], side: Color) -> Position {
    position_on(&Rules::three(), white, black, in_hand, side)
}

/// Three men's morris places on its 9 points (actions 0..9) with 3 pieces a side; its moves are
/// numbered in blocks of 16 (`16 + 16·from + to`), so 9..16 and each block's last 7 are no
/// action, and 160 on are out of range.
#[test]
fn three_places_on_its_9_points_and_numbers_moves_in_blocks_of_16() {
    let rules = Rules::three();
    let pos = Position::start_for(&rules);
    assert_eq!((pos.in_hand(Color::White), pos.in_hand(Color::Black)), (3, 3));
    assert_eq!(legal(&pos, &rules), (0..9).map(Action).collect());
    assert_eq!(three_mv("a3", "b3"), Action(17));
    assert_eq!(three_mv("c1", "b1"), Action(16 + 16 * 8 + 7));
    assert_eq!(Variant::Three.board().num_actions(), 160);
    for a in [9, 15, 16 + 9, 16 + 16 * 8 + 15, 160, 599] {
        assert_eq!(pos.check(Action(a), &rules), Err(ActionError::OutOfRange(Action(a))), "{a}");
    }
    let e = pos.check(Action(12), &rules).unwrap_err().on(Variant::Three.board()).to_string();
    assert_eq!(
        e,
        "action 12 names no point or move of the three board (points are 0..9, moves 16 + 16·from + to)"
    );
    let e = pos.check(Action(160), &rules).unwrap_err().on(Variant::Three.board()).to_string();
    assert!(e.contains("valid actions are 0..160"), "{e}");
}

/// A line of three wins at once, during placement too: no removal, no further move.
#[test]
fn three_a_line_wins_at_once_even_while_placing() {
    let rules = Rules::three();
    let mut game = Game::new(rules);
    for m in ["b2", "a3", "a1", "c1"] {
        game.play_notation(m).unwrap();
    }
    game.play_notation("c3").unwrap();
    assert_eq!(game.outcome(), Outcome::Win { winner: Color::White, reason: WinReason::Line });
    assert!(game.legal_actions().is_empty());
    assert!(!game.position().is_removal_pending());
    assert_eq!(game.position().in_hand(Color::Black), 1, "Black never places its third piece");
    assert_eq!(game.apply(Action(5)), Err(ActionError::GameOver));
    assert_eq!(game.outcome().to_string(), "White wins (a line of three)");
    // Sliding into a line wins the same way, along a diagonal as along a row.
    let mut pos = three_position(&["a3", "b2", "b1"], &["b3", "c3", "a2"], [0, 0], Color::White);
    assert_eq!(pos.outcome(&rules), Outcome::Ongoing);
    pos.apply(three_mv("b1", "c1"), &rules).unwrap();
    assert_eq!(pos.outcome(&rules), Outcome::Win { winner: Color::White, reason: WinReason::Line });
    assert!(pos.legal_actions(&rules).is_empty());
}

/// Pieces slide along the lines to an adjacent empty point (the centre touches all 8, the
/// others 3), and the preset does not fly. A player with no move would lose, but on this board
/// only a line of the opponent's can leave one without a slide.
#[test]
fn three_slides_along_its_lines_and_only_a_line_blocks() {
    let rules = Rules::three();
    let pos = three_position(&["a3", "c3", "b1"], &["b3", "b2", "a2"], [0, 0], Color::White);
    assert_eq!(pos.phase(Color::White, &rules), Phase::Moving);
    let want = BTreeSet::from([three_mv("c3", "c2"), three_mv("b1", "a1"), three_mv("b1", "c1")]);
    assert_eq!(legal(&pos, &rules), want);
    assert_eq!(
        pos.check(three_mv("a3", "c1"), &rules),
        Err(ActionError::NotAdjacent { from: three_pt("a3"), to: three_pt("c1") })
    );
    // With flying switched on, a piece goes to any of the 3 empty points.
    let flying = Rules { flying: true, ..rules };
    assert_eq!(legal(&pos, &flying).len(), 3 * 3);
    // Black can leave White no slide only from a diagonal (White in a corner's three points,
    // Black on their three other neighbours), which is a line that has already won: of every
    // placement of 3 pieces each, those where the mover cannot slide are exactly those.
    let blocked = three_position(&["a3", "b3", "a2"], &["c3", "b2", "a1"], [0, 0], Color::White);
    assert!(blocked.legal_actions_unchecked(&rules).is_empty());
    assert_eq!(blocked.outcome(&rules), Outcome::Win { winner: Color::Black, reason: WinReason::Line });
    let mut stuck = 0;
    for white in (0u32..512).filter(|b| b.count_ones() == 3) {
        for black in (0u32..512).filter(|b| b.count_ones() == 3 && b & white == 0) {
            let pos =
                Position::from_parts_for(&rules, BitBoard(white), BitBoard(black), [0, 0], Color::White, 0)
                    .expect("a position");
            let white_line = Variant::Three.board().mills().iter().any(|&m| BitBoard(white).contains(m));
            if pos.legal_actions_unchecked(&rules).is_empty() && !white_line {
                stuck += 1;
                assert_eq!(
                    pos.outcome(&rules),
                    Outcome::Win { winner: Color::Black, reason: WinReason::Line }
                );
            }
        }
    }
    assert_eq!(stuck, 4, "a corner's three points, one per corner");
}

/// Three men's morris's positions hold no removal, and a game reads and writes its moves on its
/// own points.
#[test]
fn three_games_use_its_point_names_and_refuse_a_removal() {
    let rules = Rules::three();
    let e = Position::from_parts_for(&rules, three_bb(&["a3"]), three_bb(&["b2"]), [2, 2], Color::White, 1);
    assert_eq!(e, Err(morris_env::PositionError::TooManyRemovals(1)));
    let mut game = Game::new(rules);
    for m in ["b2", "a3", "c3", "a1", "a2", "c2", "b2-b3"] {
        game.play_notation(m).unwrap();
    }
    assert_eq!(game.record(), "b2 a3 c3 a1 a2 c2 b2-b3");
    assert!(matches!(
        game.play_notation("d4"),
        Err(NotationError::NotOnBoard { ref name, board: "three" }) if name == "d4"
    ));
    assert!(matches!(game.play_notation("xa3"), Err(NotationError::UnexpectedRemoval(_))));
    let want = ["3 B---W---W", "  | \\ | / |", "2 W---.---B", "  | / | \\ |", "1 B---.---.", "  a   b   c"];
    let shown = game.position().display(&rules).to_string();
    assert_eq!(shown.lines().take(6).collect::<Vec<_>>(), want, "{shown}");
}
