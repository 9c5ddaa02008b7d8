//! Web games: one per session, a bounded store in which idle sessions expire, and the game as
//! the JSON the page draws.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use morris_env::{Color, Game, Outcome, Phase, Point, Rules, Variant};
use serde::Serialize;

use crate::engine::{Analysis, Engine, Opponent};

/// One game between a human and an engine.
pub struct Session {
    /// The game.
    pub game: Game,
    /// The human's colour.
    pub human: Color,
    /// The opponent's settings.
    pub opponent: Opponent,
    /// The opponent, built.
    pub engine: Engine,
    /// The engine's analysis of its last move(s), shown by the page.
    pub last_engine: Vec<Analysis>,
    /// When the session was last used.
    pub touched: Instant,
}

/// A variant's board as the page draws it (for a game and for a replay).
#[derive(Serialize)]
pub struct Drawing {
    /// The game of the morris family: `nine`, `twelve`, `morabaraba`, `lasker` or `six`.
    pub variant: &'static str,
    /// The board's points, by name.
    pub points: Vec<&'static str>,
    /// The board's drawn lines, each a pair of adjacent points (twelve's diagonals included).
    pub lines: Vec<[&'static str; 2]>,
}

impl Drawing {
    /// The board of `variant`.
    pub fn of(variant: Variant) -> Drawing {
        let board = variant.board();
        let name = |p: u8| board.names[p as usize];
        Drawing {
            variant: variant.name(),
            points: board.names[..board.num_points].to_vec(),
            lines: board.edges().into_iter().map(|(a, b)| [name(a), name(b)]).collect(),
        }
    }
}

/// The game as the page draws it.
#[derive(Serialize)]
pub struct View {
    /// Session id.
    pub id: String,
    /// The board.
    #[serde(flatten)]
    pub drawing: Drawing,
    /// The moves so far, in notation.
    pub moves: Vec<String>,
    /// `"white"` or `"black"`.
    pub human: &'static str,
    /// Who is to move, `"white"` or `"black"`.
    pub to_move: &'static str,
    /// Points holding White's pieces.
    pub white: Vec<&'static str>,
    /// Points holding Black's pieces.
    pub black: Vec<&'static str>,
    /// Pieces in hand, `[white, black]`.
    pub in_hand: [u8; 2],
    /// Whether the player to move must remove a piece.
    pub removal_pending: bool,
    /// The mover's phase: `placing`, `moving` or `flying`.
    pub phase: &'static str,
    /// Legal moves in notation (empty when the game is over).
    pub legal: Vec<String>,
    /// Whether the game is over.
    pub over: bool,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: &'static str,
    /// Why the game ended (or an empty string).
    pub reason: String,
    /// The opponent, e.g. `model, 200 simulations`.
    pub opponent: String,
    /// The engine's analysis of the moves it just played.
    pub engine: Vec<Analysis>,
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// Why a game ended, in words: the winner and the reason, or the kind of draw.
pub fn outcome_text(outcome: Outcome, rules: &Rules) -> String {
    match outcome {
        Outcome::Ongoing => String::new(),
        Outcome::Win { .. } => outcome.to_string(),
        Outcome::Draw(morris_env::DrawReason::NMoveRule) => {
            format!("Draw ({} plies without a removal)", rules.n_move_rule.unwrap_or(0))
        }
        Outcome::Draw(_) => {
            let text = outcome.to_string();
            let mut chars = text.chars();
            chars.next().map(|c| c.to_uppercase().collect::<String>() + chars.as_str()).unwrap_or(text)
        }
    }
}

impl Session {
    /// The game as JSON for the page.
    pub fn view(&self, id: u64) -> View {
        let game = &self.game;
        let pos = game.position();
        let outcome = game.outcome();
        let moves = game.record().split_whitespace().map(str::to_string).collect();
        let board = game.rules().variant.board();
        let legal = game.legal_actions().iter().filter_map(|a| game.notation(a)).collect();
        let points = |c| pos.pieces(c).iter().map(|p: Point| board.names[p.index()]).collect();
        View {
            id: format!("{id:x}"),
            drawing: Drawing::of(game.rules().variant),
            moves,
            human: color_name(self.human),
            to_move: color_name(pos.current_player()),
            white: points(Color::White),
            black: points(Color::Black),
            in_hand: [pos.in_hand(Color::White), pos.in_hand(Color::Black)],
            removal_pending: pos.is_removal_pending(),
            phase: match pos.phase(pos.current_player(), game.rules()) {
                Phase::Placing => "placing",
                Phase::Moving => "moving",
                Phase::Flying => "flying",
            },
            legal,
            over: outcome.is_terminal(),
            result: match outcome.winner() {
                Some(Color::White) => "1-0",
                Some(Color::Black) => "0-1",
                None if outcome.is_terminal() => "1/2-1/2",
                None => "*",
            },
            reason: outcome_text(outcome, game.rules()),
            opponent: self.opponent.label(),
            engine: self.last_engine.clone(),
        }
    }

    /// Lets the engine play until the human is to move or the game ends (a mill is followed by
    /// the same side's removal), recording its analysis.
    pub fn engine_plays(&mut self) {
        self.last_engine.clear();
        while !self.game.outcome().is_terminal() && self.game.current_player() != self.human {
            let Some(analysis) = self.engine.think(&self.game) else { break };
            if self.game.apply(analysis.action).is_err() {
                break;
            }
            self.last_engine.push(analysis);
        }
    }
}

/// The live sessions, bounded in number; sessions idle longer than `idle` are dropped.
pub struct Store {
    sessions: Mutex<HashMap<u64, Arc<Mutex<Session>>>>,
    next: Mutex<u64>,
    /// Most sessions at once.
    pub max: usize,
    /// Idle time after which a session expires.
    pub idle: Duration,
}

impl Store {
    /// An empty store.
    pub fn new(max: usize, idle: Duration, seed: u64) -> Store {
        // Ids are not secrets (the server is local) but should not be guessed by accident.
        Store { sessions: Mutex::new(HashMap::new()), next: Mutex::new(seed | 1), max, idle }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Mutex<Session>>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a session; `None` when the store is full even after dropping expired sessions.
    pub fn insert(&self, session: Session) -> Option<(u64, Arc<Mutex<Session>>)> {
        let mut map = self.map();
        if map.len() >= self.max {
            let idle = self.idle;
            map.retain(|_, s| s.try_lock().map_or(true, |s| s.touched.elapsed() < idle));
        }
        if map.len() >= self.max {
            return None;
        }
        let id = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            // A Weyl sequence: distinct for 2^64 sessions, not sequential.
            *next = next.wrapping_add(0x9e37_79b9_7f4a_7c15);
            *next
        };
        let entry = Arc::new(Mutex::new(session));
        map.insert(id, entry.clone());
        Some((id, entry))
    }

    /// The session `id`, unless it is unknown or expired (an expired one is dropped).
    pub fn get(&self, id: u64) -> Option<Arc<Mutex<Session>>> {
        let mut map = self.map();
        let entry = map.get(&id)?.clone();
        let expired = entry.try_lock().is_ok_and(|s| s.touched.elapsed() >= self.idle);
        if expired {
            map.remove(&id);
            return None;
        }
        Some(entry)
    }

    /// Drops session `id`; whether it existed.
    pub fn remove(&self, id: u64) -> bool {
        self.map().remove(&id).is_some()
    }

    /// Live sessions.
    pub fn len(&self) -> usize {
        self.map().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
