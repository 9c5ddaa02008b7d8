//! Opening books: openings with their exact values in a JSON-lines file, so that a match from
//! drawn (or decided) openings can be replayed without the 17 GiB of tables that valued them.
//!
//! One opening per line, in the order the match plays them (pair `i` plays line `i`):
//!
//! ```json
//! {"rules":"standard","seed":11355361418416331263,"moves":["d2","f4","d7","b4","a7","g4"],"value":"1/2-1/2"}
//! ```
//!
//! `seed` is the random opening's seed (what `eval match --opening-value … --opening-tb …` with
//! the same `--seed` would draw for that pair), `moves` the opening in notation and `value` the
//! result perfect play gives from it, for White (`1-0`, `1/2-1/2` or `0-1`). `eval openings`
//! writes books; `eval match --openings FILE` plays them.

use std::path::Path;

use morris_env::tablebase::Wdl;
use morris_env::{Color, Game, Rules};
use serde::{Deserialize, Serialize};

use crate::arena::{Opening, result_for_white, rules_name};
use crate::error::{EvalError, Result};

/// One line of a book.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    /// Rules preset name (or `custom`) under which the value holds.
    rules: String,
    /// Seed of the random opening it was drawn as.
    seed: u64,
    /// The opening's moves in notation.
    moves: Vec<String>,
    /// What perfect play gives from it, as a result for White.
    value: String,
}

/// Reads the book at `path`, every opening replayed under `rules`.
///
/// # Errors
/// [`EvalError::Io`] if the file cannot be read; [`EvalError::Book`], naming the line, for a
/// line that is not a book line, holds another rules preset, an illegal move, an opening whose
/// game is already over or a value that is not a result; [`EvalError::Book`] for an empty book.
pub fn load(path: &Path, rules: &Rules) -> Result<Vec<Opening>> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::io("read", path, e))?;
    let bad = |line: usize, reason: String| EvalError::Book { path: path.to_path_buf(), line, reason };
    let want = rules_name(rules);
    let mut openings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(raw).map_err(|e| bad(n, format!("not a book line: {e}")))?;
        if line.rules != want {
            return Err(bad(n, format!("an opening under the '{}' rules, not '{want}'", line.rules)));
        }
        let game = Game::from_notation(*rules, &line.moves.join(" ")).map_err(|e| bad(n, e.to_string()))?;
        if game.outcome().is_terminal() {
            return Err(bad(n, format!("the game is over after the opening ({})", game.outcome())));
        }
        let white = match line.value.as_str() {
            "1-0" => Wdl::Win,
            "1/2-1/2" => Wdl::Draw,
            "0-1" => Wdl::Loss,
            other => return Err(bad(n, format!("value '{other}' is not 1-0, 1/2-1/2 or 0-1"))),
        };
        let value = if game.current_player() == Color::White { white } else { white.flip() };
        openings.push(Opening { seed: line.seed, moves: game.actions().to_vec(), value: Some(value) });
    }
    if openings.is_empty() {
        return Err(bad(0, "the book holds no opening".into()));
    }
    Ok(openings)
}

/// The book of `openings` (each with its value) under `rules`, as JSON lines.
///
/// # Errors
/// [`EvalError::Internal`] for an opening without a value or with an illegal move (a bug: the
/// openings come from the arena).
pub fn to_jsonl(openings: &[Opening], rules: &Rules) -> Result<String> {
    let mut out = String::new();
    for o in openings {
        let value = o.value.ok_or_else(|| EvalError::Internal("an opening without a value".into()))?;
        let mut game = Game::new(*rules);
        for &a in &o.moves {
            game.apply(a).map_err(|e| EvalError::Internal(format!("opening {}: {e}", o.seed)))?;
        }
        let line = Line {
            rules: rules_name(rules),
            seed: o.seed,
            moves: game.record().split_whitespace().map(str::to_string).collect(),
            value: result_for_white(value, game.current_player()).to_string(),
        };
        out.push_str(&serde_json::to_string(&line).map_err(|e| EvalError::Internal(e.to_string()))?);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> std::path::PathBuf {
        let path = dir.join("book.jsonl");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_book_round_trips() {
        let rules = Rules::standard();
        let game = Game::from_notation(rules, "d2 f4 d7 b4 a7").unwrap();
        // Black is to move after five plies: a win for Black is 0-1.
        let openings = vec![
            Opening { seed: 7, moves: game.actions().to_vec(), value: Some(Wdl::Win) },
            Opening { seed: u64::MAX, moves: game.actions()[..4].to_vec(), value: Some(Wdl::Draw) },
        ];
        let text = to_jsonl(&openings, &rules).unwrap();
        assert!(text.starts_with(
            r#"{"rules":"standard","seed":7,"moves":["d2","f4","d7","b4","a7"],"value":"0-1"}"#
        ));
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(&write(dir.path(), &text), &rules).unwrap(), openings);
    }

    #[test]
    fn bad_books_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let rules = Rules::standard();
        let ok = r#"{"rules":"standard","seed":1,"moves":["d2"],"value":"1/2-1/2"}"#;
        for (text, line, says) in [
            (format!("{ok}\nnot json\n"), 2, "not a book line"),
            (format!("{ok}\n{}\n", ok.replace("standard", "openspiel")), 2, "'openspiel' rules"),
            (ok.replace("d2", "d2d3"), 1, "d2d3"),
            (ok.replace(r#"["d2"]"#, r#"["d2","d2"]"#), 1, "d2"),
            (ok.replace("1/2-1/2", "draw"), 1, "value 'draw'"),
            (ok.replace("\"seed\"", "\"extra\":1,\"seed\""), 1, "extra"),
            ("\n\n".to_string(), 0, "no opening"),
        ] {
            let e = load(&write(dir.path(), &text), &rules).unwrap_err();
            match &e {
                EvalError::Book { line: l, reason, .. } => {
                    assert_eq!(*l, line, "{e}");
                    assert!(reason.contains(says), "{e}");
                }
                other => panic!("{other}"),
            }
        }
        let e = load(&dir.path().join("missing.jsonl"), &rules).unwrap_err();
        assert!(matches!(e, EvalError::Io { .. }), "{e}");
    }
}
