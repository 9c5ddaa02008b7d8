//! A terminal game between a person and a trained model: the board with coordinates, moves in
//! notation, the model's move with its win/draw/loss estimate, and `undo`, `hint`, `moves`,
//! `help` and `quit`. It reads lines from any reader, so piped input can script a game.

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Instant;

use crate::agents::{AgentSpec, LoadedModel, Searcher};
use morris_env::{Action, Agent, Color, Game, Rules};
use morris_train::agents::{AzAgent, PlayBudget};
use morris_train::evaluator::{EvalBatch, Evaluator, Leaf};
use morris_train::mcts::{Limits, MctsConfig};
use morris_train::store::ModelCard;

use crate::error::{EvalError, Result};

/// The longest input line read as a move or command (the longest move, `a1-a4`, has 5).
const MAX_MOVE_CHARS: usize = 16;

/// How a session ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The game finished; the text says how (`White wins (...)`, `draw (...)`).
    Finished(String),
    /// The person typed `quit`.
    Quit,
    /// The input ended before the game did.
    InputEnded,
}

/// Settings of a session.
#[derive(Clone, Debug)]
pub struct PlaySettings {
    /// The person's colour.
    pub human: Color,
    /// Simulations per model move (and per hint).
    pub sims: u32,
    /// Seed of the search.
    pub seed: u64,
}

/// Examples of each kind of move on `rules`' board, in notation: a placement, a slide and a
/// removal (`d6`, `a1-a4`, `xg7` on nine's board).
fn examples(rules: &Rules) -> [String; 3] {
    let board = rules.variant.board();
    if board.name == morris_env::board::NINE.name {
        return ["d6".into(), "a1-a4".into(), "xg7".into()];
    }
    let name = |p: u8| board.names[p as usize];
    let (a, b) = board.edges().first().copied().unwrap_or((0, 0));
    let last = (board.num_points - 1) as u8;
    [name(last / 2).to_string(), format!("{}-{}", name(a), name(b)), format!("x{}", name(last))]
}

/// The help text, with moves of `rules`' board as examples.
fn help(rules: &Rules) -> String {
    let [place, slide, remove] = examples(rules);
    format!(
        "Moves: a point to place ({place}), from-to to slide or fly ({slide}), x and a point to remove \
({remove}). Commands: undo (take back your last move), hint (what the model would play), moves (list \
the legal moves), help, quit."
    )
}

/// The legal moves of `game` in notation, space-separated.
fn legal_moves(game: &Game) -> String {
    game.legal_actions().iter().filter_map(|a| game.notation(a)).collect::<Vec<_>>().join(" ")
}

fn io(e: std::io::Error) -> EvalError {
    EvalError::io("write to", Path::new("the terminal"), e)
}

/// The model's side: the agent its spec builds ([`AgentSpec::searcher`]), whose tree is kept
/// from move to move.
struct Engine {
    agent: Box<AzAgent>,
    sims: u32,
}

impl Engine {
    /// Network win/draw/loss for the player to move in `game`.
    fn wdl(&mut self, game: &Game) -> [f32; 3] {
        let leaf = Leaf { position: *game.position(), repetitions: game.repetitions() };
        let mut out = EvalBatch::default();
        self.agent.evaluator_mut().evaluate(game.rules(), &[leaf], &[game.legal_actions()], &mut out);
        out.wdl.first().copied().unwrap_or([0.0; 3])
    }

    /// Searches `game` (continuing below the moves played since the last search) and returns
    /// the chosen action with its searched value for the player to move.
    fn search(&mut self, game: &Game) -> Option<(Action, f32)> {
        self.agent.search(game, &Limits::simulations(self.sims));
        let action = self.agent.best_action()?;
        let value = self.agent.tree()?.child_values().iter().find(|c| c.0 == action).map_or(0.0, |c| c.2);
        Some((action, value))
    }
}

/// Plays one game on `input`/`output` against the model in `model_dir`.
///
/// # Errors
/// If the model cannot be loaded (the message names the file) or the output cannot be written.
pub fn play<R: BufRead, W: Write>(
    model_dir: &Path,
    settings: &PlaySettings,
    input: R,
    mut out: W,
) -> Result<Ending> {
    let card = ModelCard::read(model_dir).ok();
    let preset = card.as_ref().and_then(|c| Rules::preset(&c.rules)).unwrap_or_else(Rules::standard);
    // The game is of the network's variant, under the draw rules it was trained with.
    let loaded = LoadedModel::open(model_dir, None)?;
    let rules = preset.for_variant(loaded.variant());
    let about = match &card {
        Some(c) => format!(
            "step {}{}",
            c.step,
            c.elo.as_ref().map_or(String::new(), |e| format!(
                ", Elo {:.0} [{:.0}, {:.0}] at {} simulations",
                e.rating.elo, e.rating.low95, e.rating.high95, e.simulations
            ))
        ),
        None => "no model card".into(),
    };
    writeln!(out, "Model {} ({about}), {} simulations per move.", model_dir.display(), settings.sims)
        .map_err(io)?;
    writeln!(out, "You play {}. {}", settings.human, help(&rules)).map_err(io)?;
    // The tree is kept from move to move (and dropped on `undo`).
    let sims = settings.sims.max(1);
    let search = MctsConfig { num_simulations: sims, reuse_tree: true, ..MctsConfig::default() };
    let spec = AgentSpec::Az { model: loaded, search, budget: PlayBudget::default() };
    let Searcher::Az(agent) = spec.searcher(settings.seed)? else {
        return Err(EvalError::Internal("a network's spec built another kind of agent".into()));
    };
    let mut engine = Engine { agent, sims };
    let mut game = Game::new(rules);
    // Game lengths at the start of each of the person's turns, for `undo`.
    let mut turn_starts: Vec<usize> = Vec::new();
    let mut lines = input.lines();
    // The board is drawn again only when the position has changed.
    let mut shown: Option<usize> = None;
    loop {
        let outcome = game.outcome();
        if outcome.is_terminal() {
            writeln!(
                out,
                "{}\nGame over: {outcome}. Moves: {}",
                game.position().display(game.rules()),
                game.record()
            )
            .map_err(io)?;
            return Ok(Ending::Finished(outcome.to_string()));
        }
        if game.current_player() != settings.human {
            let wdl = engine.wdl(&game);
            let start = Instant::now();
            let Some((action, value)) = engine.search(&game) else {
                return Err(EvalError::Internal("the model found no move in an unfinished game".into()));
            };
            let text = game.notation(action).unwrap_or_default();
            game.apply(action)
                .map_err(|e| EvalError::Internal(format!("the model chose an illegal action: {e}")))?;
            writeln!(
                out,
                "Model plays {text}   (network: win {:.0}%, draw {:.0}%, loss {:.0}% for the model; search value {value:+.2}; {:.0} ms)",
                100.0 * wdl[0],
                100.0 * wdl[1],
                100.0 * wdl[2],
                start.elapsed().as_secs_f64() * 1e3
            )
            .map_err(io)?;
            continue;
        }
        if turn_starts.last() != Some(&game.actions().len()) {
            turn_starts.push(game.actions().len());
        }
        if shown != Some(game.actions().len()) {
            shown = Some(game.actions().len());
            writeln!(out, "{}\nlegal moves: {}", game.position().display(game.rules()), legal_moves(&game))
                .map_err(io)?;
        }
        write!(out, "{}> ", settings.human.name().to_lowercase()).map_err(io)?;
        out.flush().map_err(io)?;
        let Some(line) = lines.next() else {
            writeln!(out, "\nInput ended; game abandoned.").map_err(io)?;
            return Ok(Ending::InputEnded);
        };
        let line = line.map_err(|e| EvalError::io("read", Path::new("the input"), e))?;
        match line.trim() {
            "" => {}
            "quit" | "exit" | "q" => {
                writeln!(out, "Bye.").map_err(io)?;
                return Ok(Ending::Quit);
            }
            "help" | "?" => writeln!(out, "{}", help(&rules)).map_err(io)?,
            "moves" => writeln!(out, "legal moves: {}", legal_moves(&game)).map_err(io)?,
            "hint" => {
                let wdl = engine.wdl(&game);
                let hint = engine.search(&game);
                let text = hint.and_then(|(a, _)| game.notation(a));
                writeln!(
                    out,
                    "hint: {}   (network: win {:.0}%, draw {:.0}%, loss {:.0}% for you; search value {:+.2})",
                    text.unwrap_or_else(|| "none".into()),
                    100.0 * wdl[0],
                    100.0 * wdl[1],
                    100.0 * wdl[2],
                    hint.map_or(0.0, |h| h.1)
                )
                .map_err(io)?;
            }
            "undo" => {
                // Back to the start of your previous turn: your move and the model's reply go.
                turn_starts.pop();
                match turn_starts.last().copied() {
                    Some(target) => {
                        while game.actions().len() > target {
                            game.undo();
                        }
                        engine.agent.reset();
                        shown = None;
                        writeln!(out, "Took back your last move.").map_err(io)?;
                    }
                    None => {
                        turn_starts.push(game.actions().len());
                        writeln!(out, "Nothing to undo.").map_err(io)?;
                    }
                }
            }
            // Not echoed back: control bytes would reach the terminal, and a long line would be
            // printed again in full.
            text if text.chars().count() > MAX_MOVE_CHARS || text.chars().any(char::is_control) => {
                let [place, slide, remove] = examples(&rules);
                writeln!(
                    out,
                    "That is not a move ({} characters{}): write a point ({place}), a move ({slide}) or a removal ({remove}). Legal moves: {}",
                    text.chars().count(),
                    if text.chars().any(char::is_control) { ", with control characters" } else { "" },
                    legal_moves(&game)
                )
                .map_err(io)?;
            }
            text => {
                if let Err(e) = game.play_notation(text) {
                    writeln!(
                        out,
                        "'{text}' is not a legal move here ({e}). Legal moves: {}",
                        legal_moves(&game)
                    )
                    .map_err(io)?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_shows_moves_of_the_games_board() {
        assert_eq!(examples(&Rules::standard()), ["d6", "a1-a4", "xg7"].map(String::from));
        let six = Rules::six();
        let board = six.variant.board();
        let [place, slide, remove] = examples(&six);
        assert!(board.point_named(&place).is_some(), "{place}");
        let (a, b) = slide.split_once('-').expect("from-to");
        let (a, b) = (board.point_named(a).expect("a point"), board.point_named(b).expect("a point"));
        assert!(board.adjacent[a.index()].has(b), "{slide} is not along a line");
        assert!(remove.strip_prefix('x').and_then(|p| board.point_named(p)).is_some(), "{remove}");
        assert!(help(&six).contains(&format!("({place})")) && !help(&six).contains("xg7"));
    }
}
