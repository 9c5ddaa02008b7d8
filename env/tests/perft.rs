//! Perft node counts from the start position: nine men's morris against the table in rules.md
//! (OpenSpiel 2.0.2), twelve, six and three men's morris, morabaraba and Lasker morris against the reference
//! model (tests/properties) to depth 4 and hand counts beyond.

use morris_env::{Game, Rules, Variant, perft};

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

/// Perft from the start of `rules` equals `counts[d - 1]` at each depth `d`.
fn assert_counts(rules: Rules, counts: &[u64]) {
    for (depth, &nodes) in (1..).zip(counts) {
        assert_eq!(perft(&mut Game::new(rules), depth), nodes, "{rules:?}, depth {depth}");
    }
}

/// Twelve men's morris under OpenSpiel's draw rules. Its first 5 plies are nine's counts (the
/// diagonals and the larger hands change nothing before a mill can close); at ply 6 the
/// diagonals' mills cut it: 96,052,320 against nine's 96,223,680 (5,050,080 six-ply lines with
/// no mill closed, each with 19 placements, and 50,400 with one, each with 2 removals).
/// Depth 7 is 1,714,932,720 (2.5 s).
#[test]
fn perft_twelve() {
    let rules = Rules { variant: Variant::Twelve, ..Rules::openspiel() };
    let counts = [24, 552, 12_144, 255_024, 5_100_480, 96_052_320];
    assert_counts(rules, &counts);
}

/// Morabaraba: twelve men's morris's counts to depth 6, since a move can close two mills at
/// once only with five pieces of one side on the board (ply 9 at the earliest).
#[test]
fn perft_morabaraba_is_twelves_until_a_double_mill_can_close() {
    let rules = Rules { variant: Variant::Morabaraba, ..Rules::openspiel() };
    let counts = [24, 552, 12_144, 255_024, 5_100_480, 96_052_320];
    assert_counts(rules, &counts);
}

/// Lasker morris: nine's first two plies (nothing to slide before both have placed); from ply 3
/// on, a turn with pieces in hand may also slide. Depth 3 is the hand count 22·552 placements
/// plus 1,408 slides (each of White's 24 first points, against each of Black's 23 replies, has
/// its 2-4 neighbours less Black's piece: 23·64 − 64 = 1,408). Depth 4 is also checked against
/// the reference model (tests/properties).
#[test]
fn perft_lasker() {
    let rules = Rules { variant: Variant::Lasker, ..Rules::openspiel() };
    let counts = [24, 552, 13_552, 319_176, 7_871_032, 185_274_424];
    assert_counts(rules, &counts);
}

/// Six men's morris (16 points, 6 pieces, mills only along the squares' sides). The first 4
/// plies place on empty points (16·15·14·13); at ply 5, 516,672 of the 524,160 lines close no
/// mill (each leaving 11 placements at ply 6) and 7,488 close one (each leaving White two
/// removals of Black's two pieces): 516,672·11 + 7,488·2 = 5,698,368. Depth 4 is also checked
/// against the reference model (tests/properties).
#[test]
fn perft_six() {
    let rules = Rules { variant: Variant::Six, ..Rules::openspiel() };
    let counts = [16, 240, 3_360, 43_680, 524_160, 5_698_368];
    assert_counts(rules, &counts);
}

/// Three men's morris (the 3 × 3 grid, 3 pieces, a line of three wins at once, no flying). The
/// first 5 plies place on empty points (9·8·7·6·5); of the 15,120 five-ply lines, 1,440 give
/// White a line with its third piece and end there, and the other 13,680 leave Black 4 points
/// for its third: 13,680·4 = 54,720 at ply 6. From ply 7 on, pieces slide along the lines (or,
/// with flying, fly: each player has 3 pieces and an empty hand from then on). Depth 8 of both
/// is also checked against the reference model (tests/properties).
#[test]
fn perft_three() {
    let counts = [9, 72, 504, 3_024, 15_120, 54_720, 199_296, 705_312, 2_567_232, 9_503_136];
    assert_counts(Rules::three(), &counts);
    let flying = [9, 72, 504, 3_024, 15_120, 54_720, 444_528, 3_569_184, 28_619_568];
    assert_counts(Rules { flying: true, ..Rules::three() }, &flying);
}
