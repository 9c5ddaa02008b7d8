//! Positions judged by perfect play and kept as data: each with every legal turn and its exact
//! value, so that an agent's moves can be judged against the solution without the tables.
//!
//! A set is a JSON Lines file: a header line ([`JudgedHeader`]), then one [`JudgedPosition`] per
//! line. Loading checks every position against the rules (every field present and no unknown
//! one, the stored turns exactly its legal turns, its value the best of theirs), so a file
//! written for other rules or cut or mangled by hand is an error that names the line. The values
//! themselves cannot be checked without the tables: a turn moved from one list to another
//! below the best one goes unnoticed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Accuracy, PhaseAccuracy, Tablebase, TablebaseError, Wdl, accuracy::tally, parse_points_on};
use crate::agent::Agent;
use crate::board::Board;
use crate::game::Game;
use crate::position::Position;
use crate::rules::Rules;
use crate::types::{BitBoard, Color};

/// The `format` of a judged-position file's header.
pub const JUDGED_FORMAT: &str = "morris-judged-positions";
/// The version of that format this code reads and writes.
pub const JUDGED_VERSION: u32 = 1;

/// Why a judged-position file could not be read, or a position not judged.
#[derive(Debug, thiserror::Error)]
pub enum JudgedError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A line is not the JSON it should be.
    #[error("{path}:{line}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// The header names another format, a version this code does not read, or rules it does not
    /// know.
    #[error("{path}: {reason}")]
    Header {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A position that breaks the rules, or whose turns or value are not those of the rules.
    #[error("{path}:{line}: {reason}")]
    Position {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What does not hold.
        reason: String,
    },
    /// The tables could not value a turn.
    #[error("judging a position: {0}")]
    Tablebase(#[from] TablebaseError),
}

/// The first line of a judged-position file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgedHeader {
    /// Always `"morris-judged-positions"`.
    pub format: String,
    /// Always 1 (the format's version).
    pub version: u32,
    /// The rules preset the values hold under (`standard` or `openspiel` from nine's tables,
    /// `six` from six men's morris's whole-game solution); points and turns are written on its
    /// board.
    pub rules: String,
    /// How the set was made (the command line), for the record.
    #[serde(default)]
    pub made_by: String,
}

/// One position with every legal turn of the player to move and the value each turn leads to.
/// A turn is a move and the removals it earns, in notation on the rules' board separated by
/// spaces (`d2`, `a1-a4`, `a1-a4 xg7`; a position with a removal pending has turns `xg7`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgedPosition {
    /// Where it came from: `uniform` (drawn from the tables), `placement` (drawn from the
    /// placement phase) or `games` (taken from game records).
    pub source: String,
    /// White's points, such as `"a7 d7 g4"`.
    pub white: String,
    /// Black's points.
    pub black: String,
    /// Pieces in hand: White's, then Black's.
    pub in_hand: [u8; 2],
    /// The player to move.
    pub to_move: Color,
    /// Whether the player to move is removing a piece (a mill was just closed).
    pub removing: bool,
    /// Plies on the N-move counter.
    pub quiet_plies: u16,
    /// The exact value for the player to move.
    pub value: Wdl,
    /// The turns that win, for the player to move.
    pub win: Vec<String>,
    /// The turns that draw.
    pub draw: Vec<String>,
    /// The turns that lose.
    pub loss: Vec<String>,
}

fn points(bb: BitBoard, board: &Board) -> String {
    bb.iter().map(|p| board.names[p.index()]).collect::<Vec<_>>().join(" ")
}

/// Every legal turn of the player to move in `pos` under `rules`, in notation, with the position
/// after it (sorted by notation). A move that closes a mill is followed by each removal it allows.
pub fn legal_turns(pos: &Position, rules: &Rules) -> Vec<(String, Position)> {
    let me = pos.current_player();
    let mut out = Vec::new();
    let mut open = vec![(String::new(), *pos)];
    while let Some((prefix, p)) = open.pop() {
        for a in p.legal_actions(rules).iter() {
            let Some(m) = p.move_on(a, rules) else { continue };
            let mut next = p;
            next.apply_unchecked(a, rules);
            let m = m.on(rules.variant.board());
            let text = if prefix.is_empty() { m.to_string() } else { format!("{prefix} {m}") };
            if next.current_player() == me && next.is_removal_pending() && !next.outcome(rules).is_terminal()
            {
                open.push((text, next));
            } else {
                out.push((text, next));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The value, for the player who just moved (`mover`), of the position after a turn.
fn value_after(tb: &Tablebase, after: &Position, mover: Color) -> Result<Wdl, TablebaseError> {
    if let Some(v) = Wdl::of_outcome(after.outcome(&tb.rules()), mover) {
        return Ok(v);
    }
    let v = tb.value(after)?;
    Ok(if after.current_player() == mover { v } else { v.flip() })
}

impl JudgedPosition {
    /// Judges a live position with the tables: every legal turn valued (moving-phase turns from
    /// the tables, placement ones by the shared placement solver).
    ///
    /// # Errors
    /// A finished game, or a turn the tables cannot value (a sector not built).
    pub fn judge(tb: &Tablebase, source: &str, pos: &Position) -> Result<JudgedPosition, JudgedError> {
        JudgedPosition::judge_by(&tb.rules(), source, pos, |after, me| value_after(tb, after, me))
    }

    /// Judges a live position with `value_after` (a turn's value for the player who made it).
    pub(crate) fn judge_by(
        rules: &Rules,
        source: &str,
        pos: &Position,
        value_after: impl Fn(&Position, Color) -> Result<Wdl, TablebaseError>,
    ) -> Result<JudgedPosition, JudgedError> {
        if pos.outcome(rules).is_terminal() {
            return Err(TablebaseError::NotCovered("the game is already over".into()).into());
        }
        let me = pos.current_player();
        let (mut win, mut draw, mut loss) = (Vec::new(), Vec::new(), Vec::new());
        for (turn, after) in legal_turns(pos, rules) {
            match value_after(&after, me)? {
                Wdl::Win => win.push(turn),
                Wdl::Draw => draw.push(turn),
                Wdl::Loss => loss.push(turn),
            }
        }
        let value = best(&win, &draw);
        let board = rules.variant.board();
        Ok(JudgedPosition {
            source: source.to_string(),
            white: points(pos.pieces(Color::White), board),
            black: points(pos.pieces(Color::Black), board),
            in_hand: [pos.in_hand(Color::White), pos.in_hand(Color::Black)],
            to_move: me,
            removing: pos.is_removal_pending(),
            quiet_plies: pos.quiet_plies(),
            value,
            win,
            draw,
            loss,
        })
    }

    /// The position, rebuilt from its fields.
    ///
    /// # Errors
    /// A point that does not exist or is named twice, or counts the rules do not allow.
    pub fn position(&self, rules: &Rules) -> Result<Position, String> {
        let board = rules.variant.board();
        let (white, black) = (parse_points_on(&self.white, board)?, parse_points_on(&self.black, board)?);
        if !(white & black).is_empty() {
            return Err(format!("a point is both White's and Black's ({} / {})", self.white, self.black));
        }
        let pos = Position::from_parts_for(
            rules,
            white,
            black,
            self.in_hand,
            self.to_move,
            u8::from(self.removing),
        )
        .map_err(|e| e.to_string())?;
        Ok(pos.with_counters(pos.turns(), self.quiet_plies))
    }

    /// The value of `turn` (in notation) for the player to move, if it is one of the turns.
    pub fn value_of(&self, turn: &str) -> Option<Wdl> {
        let has = |list: &[String]| list.iter().any(|t| t == turn);
        if has(&self.win) {
            Some(Wdl::Win)
        } else if has(&self.draw) {
            Some(Wdl::Draw)
        } else if has(&self.loss) {
            Some(Wdl::Loss)
        } else {
            None
        }
    }

    /// Checks the position against `rules`: it is live, its turns are exactly the legal turns,
    /// each listed once, and its value is the best of theirs.
    ///
    /// # Errors
    /// What does not hold, naming the turns.
    pub fn validate(&self, rules: &Rules) -> Result<Position, String> {
        let pos = self.position(rules)?;
        if pos.outcome(rules).is_terminal() {
            return Err(format!("the game is over here ({})", pos.outcome(rules)));
        }
        let legal: HashSet<String> = legal_turns(&pos, rules).into_iter().map(|(t, _)| t).collect();
        let mut stored = HashSet::new();
        for t in self.win.iter().chain(&self.draw).chain(&self.loss) {
            if !stored.insert(t.clone()) {
                return Err(format!("turn '{t}' is listed twice"));
            }
        }
        let mut missing: Vec<_> = legal.difference(&stored).cloned().collect();
        let mut extra: Vec<_> = stored.difference(&legal).cloned().collect();
        if !missing.is_empty() || !extra.is_empty() {
            missing.sort();
            extra.sort();
            return Err(format!(
                "the stored turns are not the legal ones: missing [{}], not legal [{}]",
                missing.join(", "),
                extra.join(", ")
            ));
        }
        let value = best(&self.win, &self.draw);
        if value != self.value {
            return Err(format!("value is '{}' but the best turn gives '{value}'", self.value));
        }
        Ok(pos)
    }
}

fn best(win: &[String], draw: &[String]) -> Wdl {
    if !win.is_empty() {
        Wdl::Win
    } else if !draw.is_empty() {
        Wdl::Draw
    } else {
        Wdl::Loss
    }
}

/// A set of judged positions with the rules their values hold under.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgedSet {
    /// The file's header.
    pub header: JudgedHeader,
    /// The rules of [`JudgedHeader::rules`].
    pub rules: Rules,
    /// The positions.
    pub positions: Vec<JudgedPosition>,
}

impl JudgedSet {
    /// A set under the rules preset `rules` (nine's tables judge `standard` and `openspiel`, a
    /// whole-game solution its own variant's preset).
    ///
    /// # Errors
    /// A preset name that does not exist.
    pub fn new(rules: &str, made_by: &str, positions: Vec<JudgedPosition>) -> Result<JudgedSet, String> {
        let r = Rules::preset(rules).ok_or_else(|| {
            format!("no rules preset '{rules}' (expected one of {})", Rules::PRESETS.join(", "))
        })?;
        let header = JudgedHeader {
            format: JUDGED_FORMAT.into(),
            version: JUDGED_VERSION,
            rules: rules.into(),
            made_by: made_by.into(),
        };
        Ok(JudgedSet { header, rules: r, positions })
    }

    /// Reads and checks a set: the header, then every position against the rules
    /// ([`JudgedPosition::validate`]).
    ///
    /// # Errors
    /// A file that cannot be read, a line that is not valid JSON, an unknown format, version or
    /// rules preset, an empty set, or a position that fails its check (naming the line).
    pub fn load(path: &Path) -> Result<JudgedSet, JudgedError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| JudgedError::Io { path: path.into(), source })?;
        JudgedSet::parse(&text, path)
    }

    /// Checks a set given as text, as [`JudgedSet::load`] does a file's; `path` names it in
    /// errors.
    ///
    /// # Errors
    /// As [`JudgedSet::load`], but for reading the file.
    pub fn parse(text: &str, path: &Path) -> Result<JudgedSet, JudgedError> {
        let header_error = |reason: String| JudgedError::Header { path: path.into(), reason };
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, first)) = lines.next() else {
            return Err(header_error("empty file: no header line".into()));
        };
        let header: JudgedHeader = serde_json::from_str(first).map_err(|source| JudgedError::Json {
            path: path.into(),
            line: 1,
            source,
        })?;
        if header.format != JUDGED_FORMAT {
            return Err(header_error(format!("format is '{}', expected '{JUDGED_FORMAT}'", header.format)));
        }
        if header.version != JUDGED_VERSION {
            return Err(header_error(format!(
                "version {} (this build reads version {JUDGED_VERSION})",
                header.version
            )));
        }
        let rules = Rules::preset(&header.rules).ok_or_else(|| {
            header_error(format!(
                "no rules preset '{}' (expected one of {})",
                header.rules,
                Rules::PRESETS.join(", ")
            ))
        })?;
        let mut positions = Vec::new();
        for (i, line) in lines {
            let p: JudgedPosition = serde_json::from_str(line).map_err(|source| JudgedError::Json {
                path: path.into(),
                line: i + 1,
                source,
            })?;
            p.validate(&rules).map_err(|reason| JudgedError::Position {
                path: path.into(),
                line: i + 1,
                reason,
            })?;
            positions.push(p);
        }
        if positions.is_empty() {
            return Err(header_error("no positions after the header".into()));
        }
        Ok(JudgedSet { header, rules, positions })
    }

    /// The set as JSON Lines: the header, then one position per line.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for line in std::iter::once(serde_json::to_string(&self.header))
            .chain(self.positions.iter().map(serde_json::to_string))
        {
            // Serializing these plain structs cannot fail: no maps with non-string keys.
            out += &line.unwrap_or_default();
            out.push('\n');
        }
        out
    }

    /// The sources of the positions, in order of first appearance.
    pub fn sources(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in &self.positions {
            if !out.contains(&p.source) {
                out.push(p.source.clone());
            }
        }
        out
    }
}

/// Lets `agent` play one turn in each position and judges it by the stored values, counting by
/// the mover's phase, as [`super::measure`] does with the tables. The agent is reset before each
/// position and sees it without history (the values do not depend on it).
pub fn measure_judged<'a>(
    positions: impl IntoIterator<Item = &'a JudgedPosition>,
    rules: &Rules,
    agent: &mut dyn Agent,
) -> PhaseAccuracy {
    let mut out = PhaseAccuracy::default();
    for judged in positions {
        let Ok(pos) = judged.position(rules) else { continue };
        let game = Game::from_position(*rules, pos);
        let acc: &mut Accuracy = out.get_mut(pos.phase(pos.current_player(), rules));
        let (turn, seconds) = super::accuracy::play_turn(&game, agent);
        let after = turn.as_ref().and_then(|(notation, _)| judged.value_of(notation));
        tally(acc, judged.value, turn.is_some(), after, seconds);
    }
    out
}
