//! The arena side of UCI: the `uci:` agent spec, which plays an external engine process, checks
//! each of its answers against the rules, and turns a crash, a hang or an illegal move into a
//! forfeit with the reason.

use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use morris_env::{Action, Agent, Game, Rules};

use crate::duration::parse_duration;

/// How long an engine may take to answer `uci` and `isready` (loading a network included).
const HANDSHAKE: Duration = Duration::from_secs(20);
/// Longest line read from an engine; longer lines are cut (a broken engine cannot exhaust memory).
const MAX_LINE: usize = 64 * 1024;

/// The limit sent with every `go`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UciLimit {
    /// `go movetime MS`.
    MoveTime(Duration),
    /// `go depth N`.
    Depth(u32),
    /// `go nodes N`.
    Nodes(u64),
}

/// A parsed `uci:` spec: the engine's command line, its limit per move, the options to set, and
/// the pool of engine processes shared by the agents built from it (one process per game being
/// played at once, reused from game to game).
pub struct UciSpec {
    /// The engine's executable.
    pub cmd: PathBuf,
    /// Its arguments, in order.
    pub args: Vec<String>,
    /// The limit of each `go`.
    pub limit: UciLimit,
    /// `setoption` pairs, sent in order after the handshake.
    pub options: Vec<(String, String)>,
    /// Longest wait for a `bestmove` before the engine forfeits.
    pub timeout: Duration,
    pool: Mutex<Vec<EngineProcess>>,
}

impl fmt::Debug for UciSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UciSpec({})", self.name())
    }
}

impl UciSpec {
    /// Parses the options of `uci:OPTIONS`: `cmd=PATH` (required), `arg=A` (repeatable, in
    /// order), one of `movetime=T`, `depth=N`, `nodes=N` (default `movetime=100ms`),
    /// `option.NAME=VALUE` (repeatable), `timeout=T` (default: twice the move time plus 1 s, or
    /// 60 s with a depth or node limit).
    ///
    /// # Errors
    /// What is wrong, for the spec error.
    pub fn parse(args: &str) -> Result<UciSpec, String> {
        let (mut cmd, mut limit, mut timeout) = (None, None, None);
        let (mut argv, mut options) = (Vec::new(), Vec::<(String, String)>::new());
        for kv in args.split(',') {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("'{kv}' is not key=value"))?;
            let (k, v) = (k.trim(), v.trim());
            let set_limit = |limit: &mut Option<UciLimit>, l: UciLimit| {
                if limit.replace(l).is_some() {
                    return Err("give one limit: movetime, depth or nodes".to_string());
                }
                Ok(())
            };
            match k {
                "cmd" if cmd.is_none() && !v.is_empty() => cmd = Some(PathBuf::from(v)),
                "cmd" => return Err("give cmd=PATH once".into()),
                "arg" => argv.push(v.to_string()),
                "movetime" => {
                    let t = parse_duration(v)
                        .ok_or_else(|| format!("movetime '{v}' is not a duration such as 20ms"))?;
                    set_limit(&mut limit, UciLimit::MoveTime(t))?;
                }
                "depth" => {
                    let d: u32 = v.parse().map_err(|_| format!("depth '{v}' is not a whole number"))?;
                    if !(1..=64).contains(&d) {
                        return Err(format!("depth {d} is outside 1..=64"));
                    }
                    set_limit(&mut limit, UciLimit::Depth(d))?;
                }
                "nodes" => {
                    let n: u64 = v.parse().map_err(|_| format!("nodes '{v}' is not a whole number"))?;
                    if n == 0 {
                        return Err("nodes must be positive".into());
                    }
                    set_limit(&mut limit, UciLimit::Nodes(n))?;
                }
                "timeout" if timeout.is_none() => {
                    timeout = Some(
                        parse_duration(v)
                            .ok_or_else(|| format!("timeout '{v}' is not a duration such as 5s"))?,
                    );
                }
                "timeout" => return Err("'timeout' is given twice".into()),
                _ => match k.strip_prefix("option.") {
                    Some(name) if !name.is_empty() && !v.is_empty() => {
                        if options.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                            return Err(format!("option '{name}' is given twice"));
                        }
                        options.push((name.to_string(), v.to_string()));
                    }
                    Some(_) => return Err(format!("'{kv}' needs option.NAME=VALUE")),
                    None => return Err(format!("unknown uci option '{k}'")),
                },
            }
        }
        let cmd = cmd.ok_or("uci needs cmd=PATH (the engine's executable)")?;
        let limit = limit.unwrap_or(UciLimit::MoveTime(Duration::from_millis(100)));
        let timeout = timeout.unwrap_or(match limit {
            UciLimit::MoveTime(t) => 2 * t + Duration::from_secs(1),
            _ => Duration::from_secs(60),
        });
        Ok(UciSpec { cmd, args: argv, limit, options, timeout, pool: Mutex::new(Vec::new()) })
    }

    /// The canonical spec string.
    pub fn name(&self) -> String {
        let mut name = format!("uci:cmd={}", self.cmd.display());
        for a in &self.args {
            name += &format!(",arg={a}");
        }
        name += &match self.limit {
            UciLimit::MoveTime(t) => format!(",movetime={}ms", t.as_millis()),
            UciLimit::Depth(d) => format!(",depth={d}"),
            UciLimit::Nodes(n) => format!(",nodes={n}"),
        };
        for (k, v) in &self.options {
            name += &format!(",option.{k}={v}");
        }
        name
    }

    /// An agent playing this engine; `seed` is sent as the `Seed` option if the engine has one.
    pub fn agent(self: &Arc<Self>, seed: u64) -> UciAgent {
        UciAgent { spec: self.clone(), engine: None, seed, new_game: true, failure: None }
    }

    fn go_line(&self) -> String {
        match self.limit {
            UciLimit::MoveTime(t) => format!("go movetime {}", t.as_millis().max(1)),
            UciLimit::Depth(d) => format!("go depth {d}"),
            UciLimit::Nodes(n) => format!("go nodes {n}"),
        }
    }
}

/// A running engine process and the lines it has written.
struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// The option names it announced, lowercased.
    options: Vec<String>,
    /// The rules preset last set (engines start with the standard rules).
    rules: String,
}

impl EngineProcess {
    /// Starts the engine, does the handshake and sets the spec's options.
    fn start(spec: &UciSpec) -> Result<EngineProcess, String> {
        let mut child = Command::new(&spec.cmd)
            .args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("engine '{}' could not start: {e}", spec.cmd.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err("engine started without pipes".into());
        };
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match Read::by_ref(&mut reader).take(MAX_LINE as u64).read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf).trim().to_string();
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let mut engine = EngineProcess { child, stdin, lines, options: Vec::new(), rules: "standard".into() };
        engine.send("uci")?;
        let deadline = Instant::now() + HANDSHAKE;
        loop {
            let line = engine.next_line(deadline, "uciok")?;
            if line == "uciok" {
                break;
            }
            if let Some(rest) = line.strip_prefix("option name ") {
                let name = rest.split(" type ").next().unwrap_or(rest);
                engine.options.push(name.trim().to_ascii_lowercase());
            }
        }
        for (k, v) in &spec.options {
            engine.send(&format!("setoption name {k} value {v}"))?;
        }
        // An engine that reports an error about the options (this lab's does, as
        // `info string error: ...`) is not played with settings other than those asked for.
        let refused = engine.ready()?;
        if let Some(line) = refused {
            return Err(format!("the engine refused the options: {line}"));
        }
        Ok(engine)
    }

    fn has_option(&self, name: &str) -> bool {
        self.options.iter().any(|o| o == name)
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|_| format!("engine exited{}", self.exit_status()))
    }

    /// Sends `isready` and waits for `readyok`; returns the first `info string` line that
    /// reports an error meanwhile.
    fn ready(&mut self) -> Result<Option<String>, String> {
        self.send("isready")?;
        let deadline = Instant::now() + HANDSHAKE;
        let mut error = None;
        loop {
            let line = self.next_line(deadline, "readyok")?;
            if line == "readyok" {
                return Ok(error);
            }
            if error.is_none()
                && line.starts_with("info string")
                && line.to_ascii_lowercase().contains("error")
            {
                error = Some(line.chars().take(200).collect());
            }
        }
    }

    /// The next line, or why none came before `deadline` while waiting for `what`.
    fn next_line(&mut self, deadline: Instant, what: &str) -> Result<String, String> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("timeout: no {what} within {} ms", wait.as_millis()))
            }
            Err(RecvTimeoutError::Disconnected) => Err(format!("engine exited{}", self.exit_status())),
        }
    }

    fn exit_status(&mut self) -> String {
        // The pipe closes a moment before the process is reaped.
        for _ in 0..50 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!(" ({status})");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        String::new()
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit").and_then(|()| self.stdin.flush());
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An external engine as an [`Agent`]. Before each `go` it sends the game's whole move list
/// (random opening included); it checks the answer against the rules. A crash, a timeout, or an
/// answer that is not a legal move makes `choose` return `None`, and
/// [`forfeit_reason`](Agent::forfeit_reason) says why.
pub struct UciAgent {
    spec: Arc<UciSpec>,
    engine: Option<EngineProcess>,
    seed: u64,
    new_game: bool,
    failure: Option<String>,
}

impl UciAgent {
    fn try_choose(&mut self, game: &Game) -> Result<Action, String> {
        let engine = match &mut self.engine {
            Some(e) => e,
            None => {
                let pooled = self.spec.pool.lock().unwrap_or_else(PoisonError::into_inner).pop();
                let e = match pooled {
                    Some(e) => e,
                    None => EngineProcess::start(&self.spec)?,
                };
                self.new_game = true;
                self.engine.insert(e)
            }
        };
        if self.new_game {
            engine.send("ucinewgame")?;
            let rules = preset_name(game.rules()).ok_or("custom rules cannot be given to a UCI engine")?;
            if engine.rules != rules {
                if !engine.has_option("rules") {
                    return Err(format!("the engine has no Rules option for the {rules} rules"));
                }
                engine.send(&format!("setoption name Rules value {rules}"))?;
                engine.rules = rules.to_string();
            }
            if engine.has_option("seed") {
                engine.send(&format!("setoption name Seed value {}", self.seed))?;
            }
            if let Some(line) = engine.ready()? {
                return Err(format!("the engine refused the game's settings: {line}"));
            }
            self.new_game = false;
        }
        let moves = game.record();
        let position = if moves.is_empty() {
            "position startpos".to_string()
        } else {
            format!("position startpos moves {moves}")
        };
        engine.send(&position)?;
        engine.send(&self.spec.go_line())?;
        let deadline = Instant::now() + self.spec.timeout;
        let text = loop {
            let line = engine.next_line(deadline, "bestmove")?;
            if let Some(text) = bestmove_in(&line) {
                break text.chars().take(20).collect::<String>();
            }
        };
        if text.is_empty() || text == "(none)" {
            return Err("answered no move in a live game".into());
        }
        game.clone().play_notation(&text).map_err(|e| format!("answered an illegal move '{text}': {e}"))
    }
}

/// The move a `bestmove` answer names (empty if nothing follows the token), or `None` if `line`
/// is not one. Besides a line of its own (`bestmove g4`), a tolerated quirk: a trailing
/// `bestmove` token on an `info` line (`info depth 14 score cp 3 nodes 10826 bestmove g4`), as
/// Sanmill's engine writes its last line. `info string` lines are free text and never count.
pub fn bestmove_in(line: &str) -> Option<&str> {
    let mut tokens = line.split_whitespace();
    match tokens.next()? {
        "bestmove" => Some(tokens.next().unwrap_or("")),
        "info" => {
            let mut tokens = tokens.peekable();
            if tokens.peek() == Some(&"string") {
                return None;
            }
            tokens.find(|&t| t == "bestmove")?;
            Some(tokens.next().unwrap_or(""))
        }
        _ => None,
    }
}

/// The preset whose rules these are.
fn preset_name(rules: &Rules) -> Option<&'static str> {
    Rules::PRESETS.iter().copied().find(|&n| Rules::preset(n).as_ref() == Some(rules))
}

impl Agent for UciAgent {
    fn name(&self) -> String {
        self.spec.name()
    }

    fn choose(&mut self, game: &Game) -> Option<Action> {
        if game.outcome().is_terminal() {
            return None;
        }
        self.failure = None;
        match self.try_choose(game) {
            Ok(a) => Some(a),
            Err(reason) => {
                // A process that failed this way is not reused: kill it.
                if !reason.starts_with("answered") {
                    self.engine = None;
                }
                self.failure = Some(reason);
                None
            }
        }
    }

    fn reset(&mut self) {
        self.new_game = true;
    }

    fn forfeit_reason(&self) -> Option<String> {
        self.failure.clone()
    }
}

impl Drop for UciAgent {
    fn drop(&mut self) {
        // A healthy engine goes back to the pool for the next game.
        if let Some(e) = self.engine.take()
            && self.failure.is_none()
        {
            self.spec.pool.lock().unwrap_or_else(PoisonError::into_inner).push(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_bestmove_on_its_own_line_and_trailing_an_info_line() {
        assert_eq!(bestmove_in("bestmove g4"), Some("g4"));
        assert_eq!(bestmove_in("bestmove a1-a4 ponder d7"), Some("a1-a4"));
        assert_eq!(bestmove_in("bestmove"), Some(""));
        assert_eq!(bestmove_in("  bestmove   xd7  "), Some("xd7"));
        assert_eq!(bestmove_in("info depth 14 score cp 3 nodes 10826 bestmove g4"), Some("g4"));
        assert_eq!(bestmove_in("info depth 1 bestmove"), Some(""));
        assert_eq!(bestmove_in("info depth 14 score cp 3 pv g4 d7"), None);
        assert_eq!(bestmove_in("info string the bestmove g4 is forced"), None);
        assert_eq!(bestmove_in("bestmoves g4"), None);
        assert_eq!(bestmove_in("readyok"), None);
        assert_eq!(bestmove_in(""), None);
    }

    #[test]
    fn parses_and_names_specs() {
        let s = UciSpec::parse("cmd=/bin/engine,arg=uci,arg=-q,depth=3,option.Hash=4,option.Engine=minimax")
            .unwrap();
        assert_eq!(s.args, ["uci", "-q"]);
        assert_eq!(s.limit, UciLimit::Depth(3));
        assert_eq!(s.timeout, Duration::from_secs(60));
        assert_eq!(
            s.name(),
            "uci:cmd=/bin/engine,arg=uci,arg=-q,depth=3,option.Hash=4,option.Engine=minimax"
        );
        let s = UciSpec::parse("cmd=e,movetime=20ms").unwrap();
        assert_eq!(s.timeout, Duration::from_millis(1040));
        assert_eq!(UciSpec::parse("cmd=e").unwrap().limit, UciLimit::MoveTime(Duration::from_millis(100)));
        for (bad, needle) in [
            ("arg=x", "needs cmd=PATH"),
            ("cmd=e,depth=3,nodes=9", "one limit"),
            ("cmd=e,movetime=soon", "not a duration"),
            ("cmd=e,depth=0", "outside"),
            ("cmd=e,speed=3", "unknown uci option 'speed'"),
            ("cmd=e,option.=3", "option.NAME=VALUE"),
            ("cmd=e,option.Hash=3,option.hash=4", "given twice"),
            ("cmd=e,cmd=f", "once"),
            ("cmd=e,timeout=1s,timeout=2s", "twice"),
            ("cmd=e,x", "not key=value"),
        ] {
            let e = UciSpec::parse(bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn a_missing_executable_is_a_forfeit_with_the_reason() {
        let spec = Arc::new(UciSpec::parse("cmd=/nonexistent/engine,depth=1").unwrap());
        let mut agent = spec.agent(0);
        assert_eq!(agent.choose(&Game::new(Rules::standard())), None);
        let reason = agent.forfeit_reason().unwrap();
        assert!(reason.contains("/nonexistent/engine") && reason.contains("could not start"), "{reason}");
    }
}
