//! Perft node counts from the start position against the table in rules.md (OpenSpiel 2.0.2).

use morris_env::{Game, Rules, perft};

macro_rules! perft_test {
    ($($name:ident($rules:expr, $depth:expr, $nodes:expr);)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(perft(&mut Game::new($rules), $depth), $nodes);
        }
    )*};
}

perft_test! {
    perft_1(Rules::openspiel(), 1, 24);
    perft_2(Rules::openspiel(), 2, 552);
    perft_3(Rules::openspiel(), 3, 12_144);
    perft_4(Rules::openspiel(), 4, 255_024);
    perft_5(Rules::openspiel(), 5, 5_100_480);
    perft_5_standard(Rules::standard(), 5, 5_100_480);
}

/// 96 M leaves, but bulk counting makes it a fraction of a second: the env crate is built with
/// optimisations even in the test profile (see the workspace `Cargo.toml`).
#[test]
fn perft_6() {
    assert_eq!(perft(&mut Game::new(Rules::openspiel()), 6), 96_223_680);
}
