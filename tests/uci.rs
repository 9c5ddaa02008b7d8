//! End-to-end tests of UCI: a scripted protocol session with `morris uci` (handshake, options,
//! positions with removals and flying, every `go` limit, `stop`, garbage), the `uci:` agent spec
//! in `eval match` (the same games as the in-process agents, self-play, misbehaving engines).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use morris_env::{Color, Game, Phase, Rng, Rules};

const MORRIS: &str = env!("CARGO_BIN_EXE_morris");

/// `morris uci` with its output lines on a channel.
struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(MORRIS)
            .arg("uci")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start morris uci");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine { child, stdin, lines }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to the engine");
        self.stdin.flush().expect("flush");
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("write to the engine");
        self.stdin.flush().expect("flush");
    }

    /// Lines up to and including the first that starts with `prefix`; fails after `secs`.
    fn until(&mut self, prefix: &str, secs: f64) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs_f64(secs);
        let mut seen = Vec::new();
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(wait) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no '{prefix}' within {secs} s; got {seen:?}"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the engine exited waiting for '{prefix}': {seen:?}")
                }
            }
        }
    }

    /// No `bestmove` for `secs` (info lines may come).
    fn silent_or_info(&mut self, secs: f64) {
        let deadline = Instant::now() + Duration::from_secs_f64(secs);
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Err(RecvTimeoutError::Timeout) => return,
                Ok(line) => assert!(line.starts_with("info"), "only info lines during go infinite: {line}"),
                Err(e) => panic!("{e:?}"),
            }
        }
    }

    /// Sends `line` and expects exactly one `info string error` answer mentioning `needle`,
    /// then shows the engine is alive.
    fn rejects(&mut self, line: &str, needle: &str) {
        self.send(line);
        self.send("isready");
        let got = self.until("readyok", 10.0);
        let errors: Vec<&String> = got.iter().filter(|l| l.starts_with("info string error:")).collect();
        assert_eq!(errors.len(), 1, "{line}: {got:?}");
        assert!(errors[0].contains(needle), "{line}: {errors:?}");
    }

    /// `position`, `go ...`; returns the info lines and the best move, checked legal.
    fn search(&mut self, moves: &str, go: &str, secs: f64) -> (Vec<String>, String) {
        self.search_under(Rules::standard(), moves, go, secs)
    }

    /// [`Engine::search`], checking the answer under `rules` (the engine's `Rules` option).
    fn search_under(&mut self, rules: Rules, moves: &str, go: &str, secs: f64) -> (Vec<String>, String) {
        self.send(&format!("position startpos moves {moves}"));
        self.send(go);
        let mut lines = self.until("bestmove", secs);
        let best = lines.pop().expect("bestmove line");
        let mv = best.strip_prefix("bestmove ").expect("bestmove MOVE").to_string();
        let mut game = Game::from_notation(rules, moves).expect("test moves are legal");
        game.play_notation(&mv).unwrap_or_else(|e| panic!("'{mv}' after '{moves}' is illegal: {e}"));
        (lines, mv)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A position 3 pieces against more, the side with 3 to move and flying: found by random play.
fn flying_position() -> String {
    for seed in 0..10_000 {
        let mut game = Game::new(Rules::standard());
        let mut rng = Rng::seed_from_u64(seed);
        while !game.outcome().is_terminal() {
            let pos = *game.position();
            let me = pos.current_player();
            if pos.phase(me, game.rules()) == Phase::Flying
                && !pos.is_removal_pending()
                && pos.num_pieces(me.opponent()) > 3
            {
                return game.record();
            }
            let Some(a) = game.legal_actions().sample(&mut rng) else { break };
            game.apply(a).expect("a legal action");
        }
    }
    panic!("no flying position in 10000 random games");
}

#[test]
fn scripted_protocol_session() {
    let mut e = Engine::start();
    // Handshake: identity, one line per option, uciok.
    e.send("uci");
    let hello = e.until("uciok", 10.0);
    assert!(hello.iter().any(|l| l.starts_with("id name morris")), "{hello:?}");
    assert!(hello.iter().any(|l| l.starts_with("id author")), "{hello:?}");
    for option in ["Engine", "Model", "Simulations", "Threads", "Batch", "Depth", "Hash", "Rules", "Seed"] {
        assert!(
            hello.iter().any(|l| l.starts_with(&format!("option name {option} type"))),
            "{option}: {hello:?}"
        );
    }
    e.send("isready");
    e.until("readyok", 30.0);
    e.send("ucinewgame");

    // The network: simulations, info lines with depth, nodes, nps, score, wdl and pv.
    e.send("setoption name Simulations value 64");
    let (info, best) = e.search("d6 a1 d5 g1", "go", 30.0);
    let last = info.last().expect("an info line");
    for key in [" depth ", " seldepth ", " nodes 64 ", " nps ", " time ", " score cp ", " wdl ", " pv "] {
        assert!(last.contains(key), "{key} in {last}");
    }
    assert_eq!(best, "d7", "closing the mill d7-d6-d5 is the only good move");
    // After the mill, the same player removes: the answer is a removal.
    let (_, best) = e.search("d6 a1 d5 g1 d7", "go nodes 32", 30.0);
    assert!(best.starts_with('x'), "{best}");
    // Flying: three pieces, moving to any empty point.
    let flying = flying_position();
    let (_, best) = e.search(&flying, "go nodes 64", 30.0);
    assert!(best.contains('-'), "a flying move names its from and to points: {best}");
    // Time: movetime is kept, and a clock gives remaining/30.
    let t = Instant::now();
    e.search("d6", "go movetime 150", 10.0);
    let took = t.elapsed().as_secs_f64();
    assert!((0.15..2.0).contains(&took), "movetime 150 took {took} s");
    let t = Instant::now();
    e.search("d6 a1", "go wtime 3000 btime 3000 winc 0 binc 0", 10.0);
    assert!(t.elapsed().as_secs_f64() < 2.0, "a 3 s clock gives about 100 ms");
    // depth for the network is the mean depth of the simulations.
    let (info, _) = e.search("d6 a1", "go depth 3", 30.0);
    let depth: u32 =
        info.last().and_then(|l| l.split_whitespace().nth(2)).and_then(|d| d.parse().ok()).unwrap();
    assert!(depth >= 3, "{info:?}");
    // infinite: no bestmove until stop; isready is answered meanwhile.
    e.send("position startpos moves d6");
    e.send("go infinite");
    e.silent_or_info(0.5);
    e.send("isready");
    e.until("readyok", 5.0);
    e.send("position startpos");
    e.until("info string error: an infinite search is running", 5.0);
    e.send("stop");
    let end = e.until("bestmove", 5.0);
    assert!(!end.last().unwrap().contains("(none)"), "{end:?}");

    // Minimax: depth, nodes, movetime; options checked.
    e.send("setoption name Engine value minimax");
    e.send("setoption name Hash value 4");
    let (info, best) = e.search("d6 a1 d5 g1", "go depth 3", 10.0);
    assert_eq!(best, "d7");
    let depths: Vec<&str> = info.iter().filter_map(|l| l.split_whitespace().nth(2)).collect();
    assert_eq!(depths, ["1", "2", "3"], "one info line per iteration: {info:?}");
    assert!(info.iter().all(|l| l.contains(" score ") && l.contains(" pv ")), "{info:?}");
    let (info, _) = e.search("d6 a1", "go nodes 5000", 10.0);
    assert!(!info.is_empty());
    let t = Instant::now();
    e.search(&flying, "go movetime 100", 10.0);
    assert!(t.elapsed().as_secs_f64() < 2.0);
    e.send("position startpos moves d6");
    e.send("go infinite");
    e.silent_or_info(0.3);
    e.send("stop");
    e.until("bestmove", 5.0);

    // Garbage and mistakes: an error line each, and the engine stays alive.
    e.rejects("hello world", "unknown command 'hello'");
    e.rejects("setoption name Colour value red", "unknown option 'Colour'");
    e.rejects("setoption name Threads value 0", "outside 1..=64");
    e.rejects("setoption name Engine value stockfish", "not az, minimax or perfect");
    e.rejects("setoption name Rules value chess", "not one of");
    e.rejects("setoption Hash 4", "setoption needs");
    e.rejects("position fen 8/8/8", "position needs 'startpos");
    e.rejects("position startpos moves d6 d6", "move 2 'd6'");
    e.rejects("position startpos moves d6 a1 d5 g1 d7 xd6", "move 6 'xd6'");
    e.rejects("go movetime soon", "not a whole number");
    e.rejects("go speed 3", "unknown parameter 'speed'");
    e.rejects(&"z".repeat(100_000), "unknown command");
    e.send_bytes(b"\xff\xfe garbage\n");
    e.send("isready");
    let got = e.until("readyok", 5.0);
    assert!(got.iter().any(|l| l.contains("not UTF-8")), "{got:?}");
    // The rejected position left the last good one in place.
    let (_, best) = e.search("d6 a1 d5 g1", "go depth 2", 10.0);
    assert_eq!(best, "d7");
    // Twelve men's morris: minimax closes a diagonal mill; the nine men's morris model is
    // refused, naming both variants.
    e.send("setoption name Rules value twelve");
    let (_, best) = e.search("a7 a1 b6 g1", "go depth 2", 10.0);
    assert_eq!(best, "c5", "the diagonal mill a7 b6 c5");
    // Six men's morris: its own point names in moves and principal variations; minimax closes
    // the mill a5 c5 e5, and a point of nine's board is refused.
    e.send("setoption name Rules value six");
    let (info, best) = e.search_under(Rules::six(), "a5 e1 c5 e3", "go depth 2", 10.0);
    assert_eq!(best, "e5", "{info:?}");
    assert!(info.iter().any(|l| l.contains(" pv e5")), "{info:?}");
    e.rejects("position startpos moves g7", "move 1 'g7'");
    // Three men's morris: minimax completes the diagonal a1 b2 c3 with White's third piece.
    e.send("setoption name Rules value three");
    let (info, best) = e.search_under(Rules::three(), "b2 a3 a1 c1", "go depth 2", 10.0);
    assert_eq!(best, "c3", "{info:?}");
    e.send("setoption name Rules value twelve");
    e.send("setoption name Engine value az");
    e.send(&format!("setoption name Model value {}", shipped()));
    e.send("isready");
    let got = e.until("readyok", 5.0);
    assert!(
        got.iter().any(|l| l.contains("info string error")
            && l.contains("'nine' variant, but the game here is 'twelve'")),
        "{got:?}"
    );
    e.send("setoption name Rules value standard");
    // A model that cannot be loaded: an error, and no move.
    e.send("setoption name Engine value az");
    e.send("setoption name Model value /nonexistent/model");
    e.send("isready");
    let got = e.until("readyok", 5.0);
    assert!(
        got.iter().any(|l| l.contains("info string error") && l.contains("/nonexistent/model")),
        "{got:?}"
    );
    e.send("go nodes 10");
    e.until("bestmove (none)", 5.0);

    e.send("quit");
    let t = Instant::now();
    while e.child.try_wait().expect("wait").is_none() {
        assert!(t.elapsed() < Duration::from_secs(5), "quit ends the process");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(e.child.try_wait().unwrap().unwrap().success());
}

#[test]
fn the_end_of_input_ends_the_engine_after_its_answer() {
    let mut child = Command::new(MORRIS)
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start morris uci");
    let mut stdin = child.stdin.take().expect("stdin");
    // A finished game has no move; then a search that the end of input stops.
    let over = finished_game();
    writeln!(stdin, "setoption name Engine value minimax\nposition startpos moves {over}\ngo depth 1")
        .unwrap();
    writeln!(stdin, "position startpos moves d6 a1\ngo infinite").unwrap();
    drop(stdin);
    let t = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        assert!(t.elapsed() < Duration::from_secs(10), "the end of input ends the engine");
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("output");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().any(|l| l.starts_with("info string the game is over")), "{text}");
    let best: Vec<&&str> = lines.iter().filter(|l| l.starts_with("bestmove")).collect();
    assert_eq!(best.len(), 2, "{text}");
    assert_eq!(*best[0], "bestmove (none)");
    assert_ne!(*best[1], "bestmove (none)", "the stopped search still answers a move");
}

/// The moves of a finished game (by random play).
fn finished_game() -> String {
    let mut game = Game::new(Rules::standard());
    game.play_random(&mut Rng::seed_from_u64(1), 10_000);
    assert!(game.outcome().is_terminal());
    game.record()
}

fn eval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eval")).args(args).output().expect("run eval")
}

fn records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("records")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// Plays `a` against `random` and returns each game's (pair, a is White, moves, result).
fn play_against_random(dir: &Path, name: &str, a: &str, pairs: &str) -> Vec<(u64, bool, String, String)> {
    let out: PathBuf = dir.join(format!("{name}.jsonl"));
    let o = eval(&["match", a, "random", "--pairs", pairs, "--seed", "11", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut games: Vec<_> = records(&out)
        .iter()
        .map(|r| {
            (
                r["pair"].as_u64().unwrap(),
                r["white"] != "random",
                r["moves"].to_string(),
                r["result"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    games.sort();
    games
}

fn shipped() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("checkpoints/shipped").display().to_string()
}

#[test]
fn the_uci_spec_plays_the_same_games_as_the_agent_in_process() {
    let dir = tempfile::tempdir().unwrap();
    // Minimax: same depth, the same 4 MiB table (Hash 4 = the arena's 2^18 entries), the
    // arena's seed sent as the Seed option.
    let uci = format!("uci:cmd={MORRIS},arg=uci,depth=3,option.Engine=minimax,option.Hash=4");
    let over_uci = play_against_random(dir.path(), "uci-minimax", &uci, "3");
    let in_process = play_against_random(dir.path(), "minimax", "minimax:depth=3", "3");
    assert_eq!(over_uci.len(), 6);
    assert_eq!(over_uci, in_process, "moves and results agree");
    // The network: `go nodes N` is N simulations, as `sims=N`.
    let uci = format!("uci:cmd={MORRIS},arg=uci,nodes=24,option.Model={}", shipped());
    let over_uci = play_against_random(dir.path(), "uci-az", &uci, "2");
    let in_process = play_against_random(dir.path(), "az", &format!("az:model={},sims=24", shipped()), "2");
    assert_eq!(over_uci.len(), 4);
    assert_eq!(over_uci, in_process, "moves and results agree");
}

#[test]
fn the_engine_plays_itself_through_the_arena() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("self.jsonl");
    let a = format!("uci:cmd={MORRIS},arg=uci,depth=2,option.Engine=minimax");
    let b = format!("uci:cmd={MORRIS},arg=uci,nodes=16,option.Model={}", shipped());
    let o = eval(&["match", &a, &b, "--pairs", "1", "--seed", "3", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let games = records(&out);
    assert_eq!(games.len(), 2);
    for g in &games {
        let reason = g["reason"].as_str().unwrap();
        assert!(!reason.contains("forfeits"), "a full game to its end: {reason}");
        assert!(g["moves"].as_array().unwrap().len() > 6);
    }
}

#[test]
fn a_bestmove_trailing_an_info_line_is_accepted() {
    // Sanmill's engine ends its search with `info ... bestmove X` on one line: the fixture runs
    // this lab's engine through a filter that answers that way, and the games are those of the
    // engine answering by the book.
    let dir = tempfile::tempdir().unwrap();
    let quirk = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/uci/info-bestmove.sh");
    let engine = "arg=uci,depth=2,option.Engine=minimax,option.Hash=4";
    let quirky = format!("uci:cmd={},arg={MORRIS},{engine}", quirk.display());
    let games = play_against_random(dir.path(), "quirky", &quirky, "2");
    let plain = play_against_random(dir.path(), "plain", &format!("uci:cmd={MORRIS},{engine}"), "2");
    assert_eq!(games.len(), 4);
    assert_eq!(games, plain, "moves and results agree");
    let records = records(&dir.path().join("quirky.jsonl"));
    for g in &records {
        let reason = g["reason"].as_str().unwrap();
        assert!(!reason.contains("forfeits"), "a full game to its end: {reason}");
    }
}

#[test]
fn misbehaving_engines_forfeit_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/uci");
    for (script, needle) in [
        ("illegal.sh", "answered an illegal move 'a1-a4'"),
        ("garbage.sh", "answered an illegal move '12345678901234567890'"),
        ("hang.sh", "timeout: no bestmove"),
        ("exits.sh", "engine exited (exit status: 3)"),
        ("missing.sh", "could not start"),
        ("morris", "the engine refused the options: info string error: unknown option 'Colour'"),
    ] {
        let out = dir.path().join(format!("{script}.jsonl"));
        let spec = if script == "morris" {
            format!("uci:cmd={MORRIS},arg=uci,movetime=10ms,option.Colour=red")
        } else {
            format!("uci:cmd={},movetime=10ms,timeout=1s", fixtures.join(script).display())
        };
        let t = Instant::now();
        let o = eval(&["match", &spec, "random", "--pairs", "2", "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{script}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(t.elapsed() < Duration::from_secs(30), "{script}: the match ends");
        let games = records(&out);
        assert_eq!(games.len(), 4, "{script}");
        for g in &games {
            let engine_is_white = g["white"].as_str().unwrap().starts_with("uci:");
            let lost = if engine_is_white { "0-1" } else { "1-0" };
            assert_eq!(g["result"], lost, "{script}: {g}");
            let reason = g["reason"].as_str().unwrap();
            let side = if engine_is_white { Color::White } else { Color::Black };
            assert!(
                reason.contains(&format!("{side} forfeits")) && reason.contains(needle),
                "{script}: {reason}"
            );
        }
    }
}
