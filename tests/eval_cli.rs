//! End-to-end tests of the `eval` binary: matches, records, rating, the ladder, and bad input.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

fn eval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eval")).args(args).output().expect("run eval")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A fresh scratch directory for one test, removed when the guard drops (also on failure).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a scratch directory")
}

#[test]
fn match_appends_records_and_rate_fits_them() {
    let scratch = scratch();
    let dir = scratch.path();
    let out = dir.join("games.jsonl");
    fs::write(&out, "").expect("touch");
    let o = eval(&["match", "minimax:depth=2", "random", "--pairs", "3", "--out", out.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("W/D/L") && stdout.contains("pentanomial"), "{stdout}");
    let lines: Vec<String> = fs::read_to_string(&out).unwrap().lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 6);
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).expect("json line");
        for key in ["white", "black", "opening_seed", "moves", "result", "reason"] {
            assert!(v.get(key).is_some(), "missing {key} in {l}");
        }
    }
    // A second match appends: nothing already on disk is lost.
    let o = eval(&["match", "minimax:depth=1", "random", "--pairs", "1", "--out", out.to_str().unwrap()]);
    assert!(o.status.success());
    assert_eq!(fs::read_to_string(&out).unwrap().lines().count(), 8);
    assert!(fs::read_to_string(&out).unwrap().starts_with(&lines[0]));

    // A self-game and a game under other rules are reported, and the self-game is skipped.
    let mut extra: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    extra["black"] = extra["white"].clone();
    extra["rules"] = "openspiel".into();
    let mixed = dir.join("mixed.jsonl");
    fs::write(&mixed, format!("{}\n{}\n", fs::read_to_string(&out).unwrap().trim_end(), extra)).unwrap();
    let o = eval(&["rate", mixed.to_str().unwrap()]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("against itself") && stderr.contains("mix rule sets"), "{stderr}");

    let csv = dir.join("r.csv");
    let json = dir.join("r.json");
    let o = eval(&[
        "rate",
        out.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("minimax:depth=2") && stdout.contains("random"), "{stdout}");
    assert!(stdout.contains("likelihood of superiority"), "{stdout}");
    assert!(fs::read_to_string(&csv).unwrap().starts_with("name,elo,std_error"));
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["ratings"].as_array().unwrap().len(), 3);
}

#[test]
fn bad_input_gives_clear_errors() {
    let scratch = scratch();
    let dir = scratch.path();
    let o = eval(&[
        "match",
        "minimax:depth=2",
        "alphago",
        "--pairs",
        "1",
        "--out",
        dir.join("g.jsonl").to_str().unwrap(),
    ]);
    let (_, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(stderr.contains("unknown agent 'alphago'") && stderr.contains("Valid forms"), "{stderr}");

    let o = eval(&["rate", dir.join("missing.jsonl").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("missing.jsonl"), "{}", text(&o).1);

    let bad = dir.join("bad.jsonl");
    fs::write(&bad, "{\"white\": 1}\n").unwrap();
    let o = eval(&["rate", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("bad.jsonl:1"), "{}", text(&o).1);

    // A record path inside a regular file cannot be created.
    let o = eval(&[
        "match",
        "random",
        "minimax:depth=1",
        "--pairs",
        "1",
        "--out",
        bad.join("x.jsonl").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("cannot"), "{}", text(&o).1);
    assert_eq!(fs::read_to_string(&bad).unwrap(), "{\"white\": 1}\n", "the existing file is untouched");

    let o = eval(&[
        "match",
        "minimax:depth=2",
        "minimax:depth=2",
        "--out",
        dir.join("s.jsonl").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("two different specs"), "{}", text(&o).1);

    let zero = dir.join("zero.jsonl");
    // No pairs, or more than memory holds (this once aborted on a 680 GB allocation).
    for (flag, value) in [("--pairs", "0"), ("--pairs", "4000000000"), ("--opening-plies", "100000")] {
        let o = eval(&["match", "random", "minimax:depth=1", flag, value, "--out", zero.to_str().unwrap()]);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{flag} {value}: {stderr}");
        assert!(
            stderr.contains(&format!("{flag} must")) && !stderr.contains("memory allocation"),
            "{stderr}"
        );
        assert!(!zero.exists(), "nothing is written when the arguments are rejected");
    }
}

#[test]
fn tiny_ladder_writes_ratings_and_times() {
    let scratch = scratch();
    let dir = scratch.path();
    let games = dir.join("lg.jsonl");
    let out = dir.join("ladder.json");
    let o = eval(&[
        "ladder",
        "--max-depth",
        "2",
        "--pairs",
        "2",
        "--skip-pairs",
        "1",
        "--games",
        games.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("ladder written"), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    let players = v["players"].as_array().unwrap();
    assert_eq!(players.len(), 3);
    let random = players.iter().find(|p| p["name"] == "random").unwrap();
    assert_eq!(random["elo"], 0.0);
    for p in players {
        assert!(p["std_error"].is_number() && p["ms_per_move"].is_number());
    }
    // (random, d1), (d1, d2) with 2 pairs and (random, d2) with 1 pair: 10 games.
    assert_eq!(fs::read_to_string(&games).unwrap().lines().count(), 10);
}

/// Trains a tiny model, exports it, plays it in a match, and plays a whole terminal game against
/// it over piped stdin (an illegal move, an undo, then the first legal move every turn).
#[test]
fn export_then_play_a_scripted_game_over_stdin() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    use std::sync::mpsc;

    let scratch = scratch();
    let dir = scratch.path();
    let run = dir.join("run");
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["--config", tiny.to_str().unwrap(), "--run-dir", run.to_str().unwrap(), "--quiet"])
        .args(["--set", "schedule.total_steps=40", "--set", "schedule.eval_every=40"])
        .output()
        .expect("train");
    assert!(o.status.success(), "{}", text(&o).1);
    let model = dir.join("model");
    // A run directory stands for its newest checkpoint.
    let o = eval(&["export", "--checkpoint", run.to_str().unwrap(), "--out", model.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success() && stdout.contains("exported step 40"), "{stdout}{stderr}");
    let card: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(model.join("model.json")).unwrap()).unwrap();
    assert_eq!(card["step"], 40);
    assert_eq!(card["observation_version"], 1);
    assert!(card["elo"]["elo"].is_f64(), "{card}");
    // Zero simulations are refused, as in az:…,sims=0.
    let o = eval(&["play", "--model", model.to_str().unwrap(), "--sims", "0"]);
    assert!(!o.status.success() && text(&o).1.contains("--sims"), "{}", text(&o).1);
    // Exporting over an existing directory is refused.
    let o = eval(&[
        "export",
        "--checkpoint",
        run.join("checkpoints/step-40").to_str().unwrap(),
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(!o.status.success() && text(&o).1.contains("already exists"));
    // The exported model is an agent spec.
    let spec = format!("az:model={},sims=4", model.display());
    let games = dir.join("g.jsonl");
    let o = eval(&["match", &spec, "random", "--pairs", "1", "--out", games.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);

    let mut child = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["play", "--model", model.to_str().unwrap(), "--sims", "4", "--color", "black"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("eval play");
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(String::from_utf8_lossy(&buf[..n]).into_owned()).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = String::new();
    let mut transcript = String::new();
    // An illegal move, a hint, a real move, a hint from the tree kept since the model's reply,
    // then take it back; after that the first legal move.
    let long = "x".repeat(100_000);
    let mut script = vec!["zz", "\u{1b}[2J", long.as_str(), "hint", "FIRST", "hint", "undo"].into_iter();
    let mut turns = 0;
    while let Ok(chunk) = rx.recv_timeout(Duration::from_secs(60)) {
        seen.push_str(&chunk);
        transcript.push_str(&chunk);
        if !seen.ends_with("> ") {
            continue;
        }
        let legal = transcript
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("legal moves: "))
            .expect("legal moves listed");
        let first = legal.split_whitespace().next().expect("a legal move").to_string();
        let line = match script.next() {
            Some("FIRST") | None => first,
            Some(s) => s.to_string(),
        };
        turns += 1;
        assert!(turns < 2000, "the game should end");
        if writeln!(stdin, "{line}").is_err() {
            break;
        }
        seen.clear();
    }
    drop(stdin);
    let status = child.wait().expect("eval play exits");
    assert!(status.success());
    transcript.extend(rx.try_iter());
    assert!(transcript.contains("'zz' is not a legal move here") && transcript.contains("Legal moves: "));
    // Control bytes and a long line are refused without being echoed back.
    assert!(transcript.contains("with control characters") && !transcript.contains('\u{1b}'));
    assert!(transcript.contains("100000 characters") && !transcript.contains("xxxxxxxxxxxxxxxxxxxxxxxx"));
    assert!(transcript.contains("Took back your last move."));
    assert_eq!(transcript.matches("hint: ").count(), 2, "{transcript}");
    assert!(!transcript.contains("hint: none") && transcript.contains("for you; search value"));
    assert!(transcript.contains("Model plays") && transcript.contains("network: win"));
    assert!(transcript.contains("Game over:"), "the game finished: {transcript}");
    let o = eval(&["play", "--model", dir.join("missing").to_str().unwrap()]);
    assert!(!o.status.success() && text(&o).1.contains("missing"));
}

#[test]
fn a_match_plays_the_openings_of_a_book() {
    let scratch = scratch();
    let dir = scratch.path();
    let book = dir.join("book.jsonl");
    fs::write(
        &book,
        concat!(
            r#"{"rules":"standard","seed":5,"moves":["d2","f4","d7","b4","a7","g4"],"value":"1/2-1/2"}"#,
            "\n",
            r#"{"rules":"standard","seed":6,"moves":["a1","g7","d6"],"value":"1-0"}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = dir.join("games.jsonl");
    let args = ["match", "minimax:depth=1", "random", "--pairs", "2", "--openings", book.to_str().unwrap()];
    let o = eval(&[&args[..], &["--out", out.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", text(&o).1);
    let games: Vec<serde_json::Value> =
        fs::read_to_string(&out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(games.len(), 4);
    // Records are appended as games end, in any order: pair i plays the book's line i.
    for g in &games {
        let (seed, moves, value) = [(5, "d2 f4 d7 b4 a7 g4", "1/2-1/2"), (6, "a1 g7 d6", "1-0")]
            [g["pair"].as_u64().unwrap() as usize];
        let played: Vec<&str> = g["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        assert_eq!(played[..moves.split(' ').count()].join(" "), moves, "{g}");
        assert_eq!(
            (g["opening_seed"].as_u64(), g["opening_value"].as_str()),
            (Some(seed), Some(value)),
            "{g}"
        );
        assert_eq!(g["opening_plies"].as_u64(), Some(moves.split(' ').count() as u64), "{g}");
    }
    // More pairs than openings, a book line with an illegal move, a random-opening flag beside
    // the book, and a book without the tables that value it: named errors, nothing written.
    let before = fs::read_to_string(&out).unwrap();
    let o = eval(
        &[&args[..4], &["3", "--openings", book.to_str().unwrap(), "--out", out.to_str().unwrap()]].concat(),
    );
    assert!(!o.status.success() && text(&o).1.contains("holds 2 openings"), "{}", text(&o).1);
    let bad = dir.join("bad.jsonl");
    fs::write(&bad, r#"{"rules":"standard","seed":1,"moves":["d2","d2"],"value":"1-0"}"#).unwrap();
    let o = eval(
        &[&args[..4], &["1", "--openings", bad.to_str().unwrap(), "--out", out.to_str().unwrap()]].concat(),
    );
    let err = text(&o).1;
    assert!(!o.status.success() && err.contains("bad.jsonl:1") && err.contains("d2"), "{err}");
    let o = eval(&[&args[..], &["--opening-plies", "4"]].concat());
    assert!(!o.status.success() && text(&o).1.contains("--opening-plies"), "{}", text(&o).1);
    let o = eval(&["ladder", "--max-depth", "1", "--pairs", "1", "--openings", book.to_str().unwrap()]);
    assert!(!o.status.success() && text(&o).1.contains("is for match and strength"), "{}", text(&o).1);
    let o = eval(&["openings", "--pairs", "1", "--out", dir.join("new.jsonl").to_str().unwrap()]);
    assert!(!o.status.success() && text(&o).1.contains("--opening-tb"), "{}", text(&o).1);
    assert!(!dir.join("new.jsonl").exists());
    assert_eq!(fs::read_to_string(&out).unwrap(), before);
}
