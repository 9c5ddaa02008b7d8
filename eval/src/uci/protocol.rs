//! The UCI dialect of mill engines, as text: the commands a GUI sends, parsed into typed values,
//! and the time-management rule that turns a clock into a budget for one move.

use std::time::Duration;

use thiserror::Error;

/// One command from the GUI (or a tournament manager).
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `uci`: identify and list the options.
    Uci,
    /// `isready`: answer `readyok` once ready (after loading a model, say).
    IsReady,
    /// `ucinewgame`: the next position belongs to a new game.
    NewGame,
    /// `setoption name NAME [value VALUE]`.
    SetOption {
        /// The option's name (case-insensitive, may contain spaces).
        name: String,
        /// Its value, if any.
        value: Option<String>,
    },
    /// `position startpos [moves M1 M2 ...]`, moves in this project's notation.
    Position {
        /// The moves from the start position.
        moves: Vec<String>,
    },
    /// `go ...`: start searching.
    Go(GoLimits),
    /// `stop`: end the search and answer `bestmove`.
    Stop,
    /// `quit`: end the process.
    Quit,
    /// An empty line (ignored).
    Empty,
}

/// The limits of a `go` command; the search stops at whichever is reached first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GoLimits {
    /// `movetime MS`: exactly this long.
    pub movetime: Option<Duration>,
    /// `depth N`: minimax iterations, or (network) the mean depth of the simulations.
    pub depth: Option<u32>,
    /// `nodes N`: minimax nodes, or network simulations.
    pub nodes: Option<u64>,
    /// `wtime MS`: White's clock.
    pub wtime: Option<Duration>,
    /// `btime MS`: Black's clock.
    pub btime: Option<Duration>,
    /// `winc MS`: White's increment per move.
    pub winc: Option<Duration>,
    /// `binc MS`: Black's increment per move.
    pub binc: Option<Duration>,
    /// `movestogo N`: moves until the next time control.
    pub movestogo: Option<u32>,
    /// `infinite`: search until `stop`.
    pub infinite: bool,
}

impl GoLimits {
    /// Whether no limit at all was given (a bare `go`).
    pub fn is_empty(&self) -> bool {
        self.movetime.is_none()
            && self.depth.is_none()
            && self.nodes.is_none()
            && self.wtime.is_none()
            && self.btime.is_none()
            && !self.infinite
    }

    /// The time to spend on this move, for the player whose clock is `white` (or Black's):
    /// `movetime` as given; from a clock, [`clock_budget`]; `None` without either (or with
    /// `infinite`).
    pub fn budget(&self, white: bool, overhead: Duration) -> Option<Duration> {
        if self.infinite {
            return None;
        }
        let clock = if white { self.wtime } else { self.btime };
        let inc = if white { self.winc } else { self.binc };
        let from_clock = clock.map(|c| clock_budget(c, inc.unwrap_or_default(), self.movestogo, overhead));
        match (self.movetime, from_clock) {
            (Some(m), Some(c)) => Some(m.min(c)),
            (m, c) => m.or(c),
        }
    }
}

/// Moves assumed left in the game when the GUI does not say (`movestogo`).
pub const DEFAULT_MOVES_TO_GO: u32 = 30;

/// The time-management rule: with `remaining` on the clock, `increment` per move and
/// `moves_to_go` (default [`DEFAULT_MOVES_TO_GO`]), spend `remaining / moves_to_go + 3/4 ×
/// increment`, at most half of what remains, less the move overhead, and at least 1 ms.
pub fn clock_budget(
    remaining: Duration,
    increment: Duration,
    moves_to_go: Option<u32>,
    overhead: Duration,
) -> Duration {
    let moves = moves_to_go.unwrap_or(DEFAULT_MOVES_TO_GO).max(1);
    let share = remaining / moves + increment * 3 / 4;
    share.min(remaining / 2).saturating_sub(overhead).max(Duration::from_millis(1))
}

/// Why a line could not be understood.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum UciError {
    /// The first word is not a command of the protocol.
    #[error("unknown command '{0}'")]
    UnknownCommand(String),
    /// `setoption` without `name NAME`.
    #[error("setoption needs 'name NAME [value VALUE]'")]
    SetOptionSyntax,
    /// `position` not followed by `startpos`.
    #[error("position needs 'startpos [moves ...]' (got '{0}')")]
    PositionSyntax(String),
    /// A `go` parameter that is unknown, or a number that is missing or malformed.
    #[error("go: {0}")]
    GoSyntax(String),
}

/// Parses one line from the GUI.
///
/// # Errors
/// A [`UciError`] naming what is wrong; the engine answers it with an `info string` line.
pub fn parse(line: &str) -> Result<Command, UciError> {
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else { return Ok(Command::Empty) };
    let rest: Vec<&str> = words.collect();
    match first {
        "uci" => Ok(Command::Uci),
        "isready" => Ok(Command::IsReady),
        "ucinewgame" => Ok(Command::NewGame),
        "stop" => Ok(Command::Stop),
        "quit" => Ok(Command::Quit),
        "setoption" => parse_setoption(&rest),
        "position" => parse_position(&rest),
        "go" => parse_go(&rest).map(Command::Go),
        other => Err(UciError::UnknownCommand(other.chars().take(40).collect())),
    }
}

fn parse_setoption(words: &[&str]) -> Result<Command, UciError> {
    if words.first() != Some(&"name") {
        return Err(UciError::SetOptionSyntax);
    }
    let words = &words[1..];
    let split = words.iter().position(|w| *w == "value");
    let (name, value) = match split {
        Some(i) => (&words[..i], Some(words[i + 1..].join(" "))),
        None => (words, None),
    };
    if name.is_empty() {
        return Err(UciError::SetOptionSyntax);
    }
    Ok(Command::SetOption { name: name.join(" "), value })
}

fn parse_position(words: &[&str]) -> Result<Command, UciError> {
    match words {
        ["startpos"] => Ok(Command::Position { moves: Vec::new() }),
        ["startpos", "moves", moves @ ..] => {
            Ok(Command::Position { moves: moves.iter().map(|m| m.to_string()).collect() })
        }
        _ => Err(UciError::PositionSyntax(words.join(" ").chars().take(60).collect())),
    }
}

fn parse_go(words: &[&str]) -> Result<GoLimits, UciError> {
    let mut limits = GoLimits::default();
    let mut i = 0;
    while i < words.len() {
        let key = words[i];
        if key == "infinite" {
            limits.infinite = true;
            i += 1;
            continue;
        }
        if key == "ponder" {
            return Err(UciError::GoSyntax("pondering is not supported".into()));
        }
        let value = words.get(i + 1).ok_or_else(|| UciError::GoSyntax(format!("'{key}' needs a number")))?;
        let number = |max: u64| -> Result<u64, UciError> {
            let n: u64 = value
                .parse()
                .map_err(|_| UciError::GoSyntax(format!("'{key} {value}' is not a whole number")))?;
            if n > max {
                return Err(UciError::GoSyntax(format!("'{key} {n}' is above {max}")));
            }
            Ok(n)
        };
        // Clocks up to a day; depths up to the search's deepest iteration.
        let ms = |n: u64| Duration::from_millis(n);
        const DAY_MS: u64 = 86_400_000;
        match key {
            "movetime" => limits.movetime = Some(ms(number(DAY_MS)?.max(1))),
            "depth" => limits.depth = Some(number(64)?.max(1) as u32),
            "nodes" => limits.nodes = Some(number(u64::MAX)?.max(1)),
            "wtime" => limits.wtime = Some(ms(number(DAY_MS)?)),
            "btime" => limits.btime = Some(ms(number(DAY_MS)?)),
            "winc" => limits.winc = Some(ms(number(DAY_MS)?)),
            "binc" => limits.binc = Some(ms(number(DAY_MS)?)),
            "movestogo" => limits.movestogo = Some(number(10_000)?.max(1) as u32),
            other => return Err(UciError::GoSyntax(format!("unknown parameter '{}'", shorten(other)))),
        }
        i += 2;
    }
    Ok(limits)
}

fn shorten(word: &str) -> String {
    word.chars().take(40).collect()
}

/// Maps a mean value `q` in `[-1, 1]` (the player to move's expected result) to centipawn-like
/// units, as Leela Chess Zero does: `cp = 90 · tan(1.5637541897 · q)`, within ±10000. About 100
/// means a piece's worth of advantage, as in the minimax evaluation.
pub fn centipawns(q: f32) -> i32 {
    let q = q.clamp(-1.0, 1.0) as f64;
    (90.0 * (1.5637541897 * q).tan()).round().clamp(-10_000.0, 10_000.0) as i32
}

/// Win/draw/loss in per mille for the player to move, from the search's mean value `q` and the
/// network's draw probability at the root: the draw share is kept unless `|q|` leaves no room
/// for it, and the rest is split so that `W − L = q`.
pub fn wdl_per_mille(q: f32, draw: f32) -> [u32; 3] {
    let q = q.clamp(-1.0, 1.0);
    let d = draw.clamp(0.0, 1.0 - q.abs());
    let w = (1.0 - d + q) / 2.0;
    let w_pm = (w * 1000.0).round() as u32;
    let d_pm = (d * 1000.0).round() as u32;
    [w_pm.min(1000), d_pm.min(1000 - w_pm.min(1000)), 1000u32.saturating_sub(w_pm + d_pm)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_command() {
        assert_eq!(parse("uci"), Ok(Command::Uci));
        assert_eq!(parse("  isready "), Ok(Command::IsReady));
        assert_eq!(parse("ucinewgame"), Ok(Command::NewGame));
        assert_eq!(parse(""), Ok(Command::Empty));
        assert_eq!(parse("stop"), Ok(Command::Stop));
        assert_eq!(parse("quit"), Ok(Command::Quit));
        assert_eq!(
            parse("setoption name Move Overhead value 30"),
            Ok(Command::SetOption { name: "Move Overhead".into(), value: Some("30".into()) })
        );
        assert_eq!(
            parse("setoption name Clear"),
            Ok(Command::SetOption { name: "Clear".into(), value: None })
        );
        assert_eq!(parse("position startpos"), Ok(Command::Position { moves: vec![] }));
        assert_eq!(
            parse("position startpos moves d6 a1 xa1"),
            Ok(Command::Position { moves: vec!["d6".into(), "a1".into(), "xa1".into()] })
        );
        let Ok(Command::Go(g)) = parse("go wtime 60000 btime 50000 winc 1000 binc 500 movestogo 20") else {
            panic!("go with clocks")
        };
        assert_eq!(g.wtime, Some(Duration::from_secs(60)));
        assert_eq!(g.binc, Some(Duration::from_millis(500)));
        assert_eq!(g.movestogo, Some(20));
        let Ok(Command::Go(g)) = parse("go movetime 20 depth 4 nodes 100") else { panic!("go") };
        assert_eq!((g.movetime, g.depth, g.nodes), (Some(Duration::from_millis(20)), Some(4), Some(100)));
        let Ok(Command::Go(g)) = parse("go infinite") else { panic!("go infinite") };
        assert!(g.infinite && g.budget(true, Duration::ZERO).is_none());
        let Ok(Command::Go(g)) = parse("go") else { panic!("bare go") };
        assert!(g.is_empty());
    }

    #[test]
    fn bad_lines_are_named_errors() {
        assert_eq!(parse("hello world"), Err(UciError::UnknownCommand("hello".into())));
        assert_eq!(parse("setoption Hash 4"), Err(UciError::SetOptionSyntax));
        assert_eq!(parse("setoption name value 3"), Err(UciError::SetOptionSyntax));
        assert!(matches!(parse("position fen 8/8"), Err(UciError::PositionSyntax(_))));
        assert!(matches!(parse("position"), Err(UciError::PositionSyntax(_))));
        for bad in ["go movetime", "go movetime x", "go depth 99", "go speed 3", "go ponder", "go wtime -5"] {
            assert!(matches!(parse(bad), Err(UciError::GoSyntax(_))), "{bad}");
        }
        let long = "x".repeat(10_000);
        let e = parse(&long).unwrap_err().to_string();
        assert!(e.len() < 100, "an error does not echo a long line: {e}");
    }

    #[test]
    fn the_clock_rule() {
        let ms = Duration::from_millis;
        // 60 s left, no increment: 60 s / 30 = 2 s.
        assert_eq!(clock_budget(ms(60_000), ms(0), None, ms(0)), ms(2000));
        // 3/4 of a 1 s increment on top, less 50 ms overhead.
        assert_eq!(clock_budget(ms(60_000), ms(1000), None, ms(50)), ms(2700));
        // Never more than half the clock; never below 1 ms.
        assert_eq!(clock_budget(ms(1000), ms(5000), Some(1), ms(0)), ms(500));
        assert_eq!(clock_budget(ms(5), ms(0), None, ms(50)), ms(1));
        let g = GoLimits {
            wtime: Some(ms(30_000)),
            btime: Some(ms(3000)),
            movetime: Some(ms(500)),
            ..Default::default()
        };
        assert_eq!(g.budget(true, ms(0)), Some(ms(500)), "movetime caps the clock share");
        assert_eq!(g.budget(false, ms(0)), Some(ms(100)), "Black's clock is used for Black");
    }

    #[test]
    fn scores_map_to_centipawns_and_wdl() {
        assert_eq!(centipawns(0.0), 0);
        assert!(centipawns(0.5) > 80 && centipawns(0.5) < 120, "{}", centipawns(0.5));
        assert_eq!(centipawns(1.0), 10_000);
        assert_eq!(centipawns(-1.0), -10_000);
        assert_eq!(wdl_per_mille(0.0, 0.6), [200, 600, 200]);
        assert_eq!(wdl_per_mille(1.0, 0.6), [1000, 0, 0]);
        assert_eq!(wdl_per_mille(-0.5, 0.9), [0, 500, 500]);
        for (q, d) in [(0.3, 0.2), (-0.99, 0.5), (0.01, 0.99)] {
            let w = wdl_per_mille(q, d);
            assert_eq!(w.iter().sum::<u32>(), 1000, "{w:?}");
        }
    }
}
