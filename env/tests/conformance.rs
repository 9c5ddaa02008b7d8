//! Replays 300 random games recorded from OpenSpiel 2.0.2's `nine_mens_morris` under
//! `Rules::openspiel()`, checking every legal set, the moment each game ends and its result.

use morris_env::{Action, Color, Game, Rules};
use serde_json::Value;

const GAMES: &str = include_str!("data/openspiel-nmm-games.jsonl");

fn ints(v: &Value) -> Vec<u16> {
    v.as_array().expect("array").iter().map(|x| x.as_u64().expect("int") as u16).collect()
}

#[test]
fn openspiel_games_replay_exactly() {
    let mut games = 0;
    let mut plies = 0;
    for (line_no, line) in GAMES.lines().enumerate() {
        let rec: Value = serde_json::from_str(line).expect("valid json");
        let actions = ints(&rec["actions"]);
        let legal: Vec<Vec<u16>> = rec["legal"].as_array().unwrap().iter().map(ints).collect();
        let returns: Vec<f64> =
            rec["returns"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(legal.len(), actions.len() + 1, "game {line_no}: one legal set per state");

        let mut game = Game::new(Rules::openspiel());
        for (ply, &a) in actions.iter().enumerate() {
            let ours: Vec<u16> = game.legal_actions().iter().map(|a| a.0).collect();
            assert_eq!(ours, legal[ply], "game {line_no}, ply {ply}: legal sets differ\n{}", game.position());
            assert!(!game.outcome().is_terminal(), "game {line_no}: ended early at ply {ply}");
            game.apply(Action(a)).unwrap_or_else(|e| panic!("game {line_no}, ply {ply}: {e}"));
            plies += 1;
        }
        assert!(legal.last().unwrap().is_empty());
        let outcome = game.outcome();
        assert!(outcome.is_terminal(), "game {line_no}: did not end: {outcome:?}");
        assert!(game.legal_actions().is_empty());
        let ours = [outcome.reward(Color::White) as f64, outcome.reward(Color::Black) as f64];
        assert_eq!(ours.to_vec(), returns, "game {line_no}: result differs ({outcome})");
        games += 1;
    }
    assert_eq!(games, 300);
    assert!(plies > 10_000);
}
