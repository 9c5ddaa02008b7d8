//! The game viewer: arena game records (`eval match --games FILE`) listed and replayed, with the
//! network's evaluation of every position.

use std::path::{Path, PathBuf};

use burn::prelude::Device;
use morris_env::{Color, Game, Rules};
use morris_eval::agents::LoadedModel;
use morris_eval::arena::GameRecord;
use morris_eval::records::read_records;
use morris_train::NetEvaluator;
use morris_train::evaluator::{EvalBatch, Evaluator, Leaf};
use serde::Serialize;

use crate::WebError;
use crate::session::Drawing;

/// The most plies of a record the viewer evaluates (longer records are cut there).
pub const MAX_PLIES: usize = 2000;

/// One game of a records file.
pub struct Record {
    /// The file it came from.
    pub file: PathBuf,
    /// The record.
    pub record: GameRecord,
}

/// A line of the games list.
#[derive(Serialize)]
pub struct Summary {
    /// Index in the list.
    pub index: usize,
    /// File name.
    pub file: String,
    /// White's spec.
    pub white: String,
    /// Black's spec.
    pub black: String,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// Why it ended.
    pub reason: String,
    /// Plies, opening included.
    pub plies: usize,
}

/// A game to step through.
#[derive(Serialize)]
pub struct Replay {
    /// The summary.
    #[serde(flatten)]
    pub summary: Summary,
    /// The moves in notation.
    pub moves: Vec<String>,
    /// Random opening plies before the agents played.
    pub opening_plies: u32,
    /// The board of the record's variant (its rules preset's).
    #[serde(flatten)]
    pub drawing: Drawing,
    /// For each position (before each move, and after the last): White's points.
    pub white_points: Vec<Vec<&'static str>>,
    /// Black's points, likewise.
    pub black_points: Vec<Vec<&'static str>>,
    /// White's expected score (win + draw / 2) in each position, from the network; `null` for
    /// the final position and when the server has no model.
    pub white_score: Vec<Option<f32>>,
}

/// Reads every `--games` file (an unreadable or malformed one is an error naming it).
pub fn load(files: &[PathBuf]) -> Result<Vec<Record>, WebError> {
    let mut out = Vec::new();
    for file in files {
        let records = read_records(file).map_err(WebError::Records)?;
        out.extend(records.into_iter().map(|record| Record { file: file.clone(), record }));
    }
    Ok(out)
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
}

impl Record {
    /// Its line in the list.
    pub fn summary(&self, index: usize) -> Summary {
        let r = &self.record;
        Summary {
            index,
            file: file_name(&self.file),
            white: r.white.clone(),
            black: r.black.clone(),
            result: r.result.clone(),
            reason: r.reason.clone(),
            plies: r.moves.len(),
        }
    }

    /// Replays the record (its rules preset, standard if unknown) and evaluates each position
    /// with `model`. An illegal move in the record is an error naming it.
    pub fn replay(&self, index: usize, model: Option<&LoadedModel>) -> Result<Replay, String> {
        let r = &self.record;
        let rules = Rules::preset(&r.rules).unwrap_or_default();
        let mut game = Game::new(rules);
        let mut games = vec![game.clone()];
        for (ply, text) in r.moves.iter().take(MAX_PLIES).enumerate() {
            game.play_notation(text)
                .map_err(|e| format!("move {} of the record ('{text}'): {e}", ply + 1))?;
            games.push(game.clone());
        }
        let board = rules.variant.board();
        let points = |g: &Game, c| g.position().pieces(c).iter().map(|p| board.names[p.index()]).collect();
        let white_points = games.iter().map(|g| points(g, Color::White)).collect();
        let black_points = games.iter().map(|g| points(g, Color::Black)).collect();
        // A model scores only games of its own variant.
        let white_score = match model {
            Some(m) if m.network().config().variant == rules.variant => evaluate(&games, m),
            _ => vec![None; games.len()],
        };
        Ok(Replay {
            summary: self.summary(index),
            moves: r.moves.iter().take(MAX_PLIES).cloned().collect(),
            opening_plies: r.opening_plies,
            drawing: Drawing::of(rules.variant),
            white_points,
            black_points,
            white_score,
        })
    }
}

/// White's expected score in each live position, by the network in one batch.
fn evaluate(games: &[Game], model: &LoadedModel) -> Vec<Option<f32>> {
    let live: Vec<usize> = (0..games.len()).filter(|&i| !games[i].outcome().is_terminal()).collect();
    let mut out = vec![None; games.len()];
    if live.is_empty() {
        return out;
    }
    let leaves: Vec<Leaf> = live
        .iter()
        .map(|&i| Leaf { position: *games[i].position(), repetitions: games[i].repetitions() })
        .collect();
    let masks: Vec<_> = live.iter().map(|&i| games[i].legal_actions()).collect();
    let mut evaluator = NetEvaluator::new(model.network().clone(), Device::flex());
    let mut batch = EvalBatch::default();
    let rules = *games[0].rules();
    evaluator.evaluate(&rules, &leaves, &masks, &mut batch);
    for (k, &i) in live.iter().enumerate() {
        let [w, d, _] = batch.wdl[k];
        let mover = w + d / 2.0;
        out[i] = Some(if games[i].current_player() == Color::White { mover } else { 1.0 - mover });
    }
    out
}
