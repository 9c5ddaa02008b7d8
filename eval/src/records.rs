//! Game record files (JSONL, one [`GameRecord`] per line): appending from many threads, reading
//! back with line-numbered errors, and fitting Elo ratings to them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use morris_train::store::files::open_append;

use crate::arena::GameRecord;
use crate::elo::{EloOptions, EloTable, GameResult, fit};
use crate::error::{EvalError, Result};

/// Reads a ratings table written by `eval rate --json`.
///
/// # Errors
/// [`EvalError::Io`] if unreadable, [`EvalError::Corrupt`] if it is not a ratings table.
pub fn read_ratings(path: &Path) -> Result<EloTable> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::io("read", path, e))?;
    serde_json::from_str(&text).map_err(|e| EvalError::Corrupt {
        path: path.to_path_buf(),
        reason: format!("not an `eval rate --json` table: {e}"),
    })
}

/// Appends game records to a JSONL file, one whole line per write, from any thread. The first
/// write error is kept and reported by [`RecordSink::check`].
pub struct RecordSink {
    path: PathBuf,
    file: Mutex<File>,
    error: Mutex<Option<String>>,
}

impl RecordSink {
    /// Opens `path` for appending (creating it and its directory); existing records are kept.
    ///
    /// # Errors
    /// If it cannot be opened.
    pub fn open(path: &Path) -> Result<RecordSink> {
        let file = open_append(path)?;
        Ok(RecordSink { path: path.to_path_buf(), file: Mutex::new(file), error: Mutex::new(None) })
    }

    /// Appends one record (errors are kept for [`RecordSink::check`]).
    pub fn write(&self, rec: &GameRecord) {
        let line = match serde_json::to_string(rec) {
            Ok(l) => l + "\n",
            Err(e) => return self.fail(e.to_string()),
        };
        let Ok(mut f) = self.file.lock() else { return self.fail("record file lock poisoned".into()) };
        if let Err(e) = f.write_all(line.as_bytes()) {
            self.fail(format!("cannot write to {}: {e}", self.path.display()));
        }
    }

    fn fail(&self, msg: String) {
        if let Ok(mut e) = self.error.lock() {
            e.get_or_insert(msg);
        }
    }

    /// The first write error, if any.
    ///
    /// # Errors
    /// [`EvalError::Record`] with the message of the first failed write.
    pub fn check(&self) -> Result<()> {
        let first = match self.error.lock() {
            Ok(e) => e.clone(),
            Err(_) => Some("record file lock poisoned".into()),
        };
        match first {
            None => Ok(()),
            Some(reason) => Err(EvalError::Record { path: self.path.clone(), line: 0, reason }),
        }
    }
}

/// Reads a game record file; blank lines are skipped.
///
/// # Errors
/// [`EvalError::Io`] if it cannot be opened or read, [`EvalError::Record`] naming the line that
/// is not a game record or has an unknown result.
pub fn read_records(path: &Path) -> Result<Vec<GameRecord>> {
    let file = File::open(path).map_err(|e| EvalError::io("open", path, e))?;
    parse_records(BufReader::new(file), path)
}

/// Reads game records, one JSON object a line, from `reader`; `path` names them in errors.
/// Blank lines are skipped.
///
/// # Errors
/// [`EvalError::Record`] naming the line that cannot be read (not UTF-8), is not a game record,
/// or has an unknown result.
pub fn parse_records(reader: impl BufRead, path: &Path) -> Result<Vec<GameRecord>> {
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let bad = |reason: String| EvalError::Record { path: path.to_path_buf(), line: i + 1, reason };
        let line = line.map_err(|e| bad(format!("cannot read: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let rec: GameRecord =
            serde_json::from_str(&line).map_err(|e| bad(format!("not a game record: {e}")))?;
        if rec.white_score().is_none() {
            return Err(bad(format!("unknown result '{}'", rec.result)));
        }
        out.push(rec);
    }
    Ok(out)
}

/// What [`rate`] noticed about its input besides the ratings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RateNotes {
    /// The rule sets the records mix, if more than one (ratings across them are not comparable).
    pub mixed_rules: Vec<String>,
    /// Games of a player against itself, which were skipped.
    pub self_games: usize,
}

/// Fits Elo ratings to game records with `anchor` at 0 (the default fit of [`crate::elo`]).
///
/// # Errors
/// [`EvalError::Nothing`] without records, [`EvalError::UnknownAnchor`] if the anchor did not
/// play, or the fit's own [`EvalError::Elo`].
pub fn rate(records: &[GameRecord], anchor: &str) -> Result<(EloTable, RateNotes)> {
    if records.is_empty() {
        return Err(EvalError::Nothing("no games to rate".into()));
    }
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for r in records {
        for name in [&r.white, &r.black] {
            let n = index.len();
            index.entry(name.clone()).or_insert(n);
        }
    }
    let mut names = vec![String::new(); index.len()];
    for (name, &i) in &index {
        names[i] = name.clone();
    }
    let Some(&anchor_index) = index.get(anchor) else {
        return Err(EvalError::UnknownAnchor { anchor: anchor.to_string(), players: names });
    };
    let rule_sets: BTreeSet<&str> = records.iter().map(|r| r.rules.as_str()).collect();
    let notes = RateNotes {
        mixed_rules: if rule_sets.len() > 1 {
            rule_sets.iter().map(|s| s.to_string()).collect()
        } else {
            vec![]
        },
        // A game of a player against itself says nothing about its rating.
        self_games: records.iter().filter(|r| r.white == r.black).count(),
    };
    let results: Vec<GameResult> = records
        .iter()
        .filter(|r| r.white != r.black)
        .filter_map(|r| {
            Some(GameResult { white: index[&r.white], black: index[&r.black], score: r.white_score()? })
        })
        .collect();
    let table = fit(&names, &results, &EloOptions { anchor: anchor_index, ..EloOptions::default() })?;
    Ok((table, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(white: &str, black: &str, result: &str) -> GameRecord {
        GameRecord {
            white: white.into(),
            black: black.into(),
            pair: 0,
            opening_seed: 0,
            opening_plies: 0,
            opening_value: None,
            rules: "standard".into(),
            moves: vec![],
            result: result.into(),
            reason: String::new(),
            plies: 1,
            ms_per_move: [0.0, 0.0],
        }
    }

    #[test]
    fn records_round_trip_and_bad_lines_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.jsonl");
        let sink = RecordSink::open(&path).unwrap();
        sink.write(&rec("a", "b", "1-0"));
        sink.write(&rec("b", "a", "1/2-1/2"));
        sink.check().unwrap();
        drop(sink);
        let back = read_records(&path).unwrap();
        assert_eq!(back, vec![rec("a", "b", "1-0"), rec("b", "a", "1/2-1/2")]);
        std::fs::write(&path, "\n{\"nope\": 1}\n").unwrap();
        assert!(matches!(read_records(&path), Err(EvalError::Record { line: 2, .. })));
        let bad_result = serde_json::to_string(&rec("a", "b", "2-0")).unwrap();
        std::fs::write(&path, bad_result).unwrap();
        assert!(
            matches!(read_records(&path), Err(EvalError::Record { line: 1, reason, .. }) if reason.contains("2-0"))
        );
        assert!(matches!(read_records(&dir.path().join("none")), Err(EvalError::Io { .. })));
    }

    #[test]
    fn rating_checks_the_anchor_and_notes_oddities() {
        let mut games = vec![rec("a", "b", "1-0"), rec("b", "a", "0-1"), rec("a", "a", "1-0")];
        assert!(matches!(rate(&games, "z"), Err(EvalError::UnknownAnchor { .. })));
        assert!(matches!(rate(&[], "a"), Err(EvalError::Nothing(_))));
        games[1].rules = "openspiel".into();
        let (table, notes) = rate(&games, "b").unwrap();
        assert_eq!(notes.self_games, 1);
        assert_eq!(notes.mixed_rules, ["openspiel", "standard"]);
        assert!(table.get("a").unwrap().elo.elo > 0.0);
    }
}
