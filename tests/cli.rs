//! End-to-end tests of the `morris` binary: the real executable, run as a user would.

use std::process::{Command, Output};

fn morris(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_morris")).args(args).output().expect("run morris")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn perft_prints_the_reference_counts() {
    // Depth 0 counts the start position itself.
    let o = morris(&["perft", "--depth", "0"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("depth  0  nodes              1"), "{out}");

    let o = morris(&["perft", "--depth", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for (depth, nodes) in [(1, 24u64), (2, 552), (3, 12_144), (4, 255_024), (5, 5_100_480)] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("depth {depth:>2} ")))
            .unwrap_or_else(|| panic!("no line for depth {depth} in:\n{out}"));
        assert!(line.contains(&format!(" {nodes} ")), "depth {depth}: expected {nodes} in '{line}'");
    }
}

#[test]
fn perft_starts_from_a_move_sequence_and_divides() {
    // After d6 a1 d5 a4 d7, White must remove one of two black pieces.
    let o = morris(&["perft", "--depth", "1", "--moves", "d6 a1 d5 a4 d7", "--divide"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("nodes              2 "), "{out}");
    assert!(out.contains("xa4") && out.contains("xa1"), "{out}");
}

#[test]
fn show_draws_the_board_and_lists_legal_moves() {
    let o = morris(&["show", "--moves", "d6 a1 d5 a4 d7"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("7 .-----------W-----------."), "{out}");
    assert!(out.contains("White to remove"), "{out}");
    assert!(out.contains("legal (2): xa4 xa1"), "{out}");
}

#[test]
fn bad_moves_give_a_clear_error_and_nonzero_exit() {
    let o = morris(&["perft", "--depth", "2", "--moves", "d6 zz"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("move 2") && err.contains("'zz' is not a point"), "{err}");

    let o = morris(&["show", "--moves", "d6 d6"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("point d6 is not empty"), "{}", stderr(&o));

    let o = morris(&["perft", "--depth", "40"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("too deep"), "{}", stderr(&o));

    let o = morris(&["perft", "--depth", "2", "--rules", "chess"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("standard") && stderr(&o).contains("openspiel"), "{}", stderr(&o));
}

#[test]
fn playouts_reports_a_rate() {
    let o = morris(&["playouts", "--seconds", "0.2", "--rules", "standard"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("M steps/s"), "{}", stdout(&o));
    let o = morris(&["playouts", "--seconds", "-1"]);
    assert!(!o.status.success());
}
