//! Tests of the Elo fit: known answers, invariances, bad input, and the fixed-opponent rating.

use super::numeric::erfc;
use super::*;
use morris_env::Rng;
use proptest::prelude::*;

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("p{i}")).collect()
}

/// A round robin with `per_pair` games per pair, colours alternating, drawn from the model
/// with draws (draw chance 0.3 at equal strength, scaled so the expected score matches).
fn simulate(truth: &[f64], per_pair: usize, seed: u64) -> Vec<GameResult> {
    let mut rng = Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for i in 0..truth.len() {
        for j in i + 1..truth.len() {
            for k in 0..per_pair {
                let (white, black) = if k % 2 == 0 { (i, j) } else { (j, i) };
                let e = 1.0 / (1.0 + 10f64.powf((truth[black] - truth[white]) / 400.0));
                let draw = 0.3 * 2.0 * e.min(1.0 - e);
                let win = e - draw / 2.0;
                let u = rng.next_f64();
                let score = if u < win {
                    1.0
                } else if u < win + draw {
                    0.5
                } else {
                    0.0
                };
                out.push(GameResult { white, black, score });
            }
        }
    }
    out
}

const TRUTH: [f64; 5] = [0.0, 150.0, 300.0, 500.0, 800.0];

#[test]
fn recovers_synthetic_ratings() {
    for seed in [1, 2, 3] {
        let results = simulate(&TRUTH, 400, seed);
        let table = fit(&names(5), &results, &EloOptions::default()).unwrap();
        let mut outside95 = 0;
        for (r, &t) in table.ratings.iter().zip(&TRUTH) {
            assert!((r.elo.elo - t).abs() <= 3.0 * r.std_error + 1e-9, "seed {seed}: {r:?} vs {t}");
            if t < r.elo.low95 || t > r.elo.high95 {
                outside95 += 1;
            }
        }
        assert!(outside95 <= 1, "seed {seed}: {outside95} outside 95%\n{}", table.to_text());
        assert!(table.iterations >= 2 && table.iterations < 30);
    }
}

#[test]
fn intervals_shrink_with_more_games() {
    let small = fit(&names(5), &simulate(&TRUTH, 100, 7), &EloOptions::default()).unwrap();
    let large = fit(&names(5), &simulate(&TRUTH, 400, 8), &EloOptions::default()).unwrap();
    for i in 1..5 {
        let ratio = large.ratings[i].std_error / small.ratings[i].std_error;
        assert!((0.4..=0.6).contains(&ratio), "player {i}: ratio {ratio}");
    }
}

#[test]
fn standard_error_matches_two_player_formula() {
    // Two players, 50 wins and 50 losses, no prior: se = 1/sqrt(n p (1-p)) nats = 0.2 nats.
    let results: Vec<_> =
        (0..100).map(|k| GameResult { white: 0, black: 1, score: (k % 2) as f64 }).collect();
    let options = EloOptions { prior_draws: 0.0, ..EloOptions::default() };
    let table = fit(&names(2), &results, &options).unwrap();
    assert!(table.ratings[1].elo.elo.abs() < 1e-9);
    assert!((table.ratings[1].std_error - 0.2 * ELO_PER_NAT).abs() < 1e-9);
    assert!((table.covariance[1][1] - (0.2 * ELO_PER_NAT).powi(2)).abs() < 1e-6);
    // 75% score: r = 400 log10(3).
    let results: Vec<_> =
        (0..100).map(|k| GameResult { white: 0, black: 1, score: f64::from(k % 4 != 0) }).collect();
    let table = fit(&names(2), &results, &options).unwrap();
    assert!((table.ratings[1].elo.elo + 400.0 * 3f64.log10()).abs() < 1e-6, "{:?}", table.ratings[1]);
}

/// Player 0 wins every game against 1 (with both colours); 1 and 2 trade wins.
fn perfect_score_games() -> Vec<GameResult> {
    let mut results = Vec::new();
    for k in 0..20 {
        if k % 2 == 0 {
            results.push(GameResult { white: 0, black: 1, score: 1.0 });
        } else {
            results.push(GameResult { white: 1, black: 0, score: 0.0 });
        }
        results.push(GameResult { white: 1, black: 2, score: (k % 2) as f64 });
    }
    results
}

#[test]
fn perfect_score_stays_finite_with_prior() {
    let results = perfect_score_games();
    assert!(results.iter().all(|g| (g.white != 0 || g.score == 1.0) && (g.black != 0 || g.score == 0.0)));
    let options = EloOptions { anchor: 1, ..EloOptions::default() };
    let table = fit(&names(3), &results, &options).unwrap();
    let top = &table.ratings[0];
    assert!(top.elo.elo.is_finite() && top.std_error.is_finite());
    assert!(top.elo.elo > 300.0 && top.elo.elo < 2000.0, "{top:?}");
    assert_eq!(top.points, 20.0);
    assert_eq!(top.score_fraction, 1.0);

    let no_prior = EloOptions { prior_draws: 0.0, ..options };
    assert_eq!(
        fit(&names(3), &results, &no_prior),
        Err(EloError::NoFiniteMaximum { players: vec!["p0".into()] })
    );
    // Newton's method alone would run off to a huge rating: the likelihood keeps growing.
    let pairs = aggregate(&names(3), &results, &no_prior).unwrap().pairs;
    let problem = Problem::new(3, 1, pairs);
    let mut theta = vec![0.0, 0.0, 0.0];
    let mut last = problem.log_likelihood(&theta);
    for elo in [1000.0, 2000.0, 4000.0] {
        theta[0] = elo / ELO_PER_NAT;
        let ll = problem.log_likelihood(&theta);
        assert!(ll > last);
        last = ll;
    }
    // Without the prior but with one draw, the maximum exists again.
    let mut drawn = results.clone();
    drawn.push(GameResult { white: 0, black: 1, score: 0.5 });
    let t = fit(&names(3), &drawn, &no_prior).unwrap();
    assert!(t.ratings[0].elo.elo > top.elo.elo && t.ratings[0].elo.elo < 2000.0, "{:?}", t.ratings[0]);
}

#[test]
fn symmetric_results_give_equal_ratings_and_anchor_is_fixed() {
    // 1 and 2 both score 3/4 against the anchor 0 and draw each other.
    let mut results = Vec::new();
    for k in 0..8 {
        let s = f64::from(k % 4 == 0);
        results.push(GameResult { white: 0, black: 1, score: s });
        results.push(GameResult { white: 2, black: 0, score: 1.0 - s });
        results.push(GameResult { white: 1, black: 2, score: 0.5 });
    }
    let options = EloOptions { anchor: 0, anchor_rating: 1500.0, ..EloOptions::default() };
    let table = fit(&names(3), &results, &options).unwrap();
    assert_eq!(table.ratings[0].elo.elo, 1500.0);
    assert_eq!(table.ratings[0].std_error, 0.0);
    assert_eq!(table.ratings[0].elo.low95, 1500.0);
    assert!(table.covariance[0].iter().all(|&v| v == 0.0));
    assert!(table.covariance.iter().all(|row| row[0] == 0.0));
    assert!(table.ratings[1].elo.elo > 1500.0);
    assert!((table.ratings[1].elo.elo - table.ratings[2].elo.elo).abs() < 1e-6);
    assert!((table.ratings[1].std_error - table.ratings[2].std_error).abs() < 1e-6);
    assert!((table.los[1][2] - 0.5).abs() < 1e-6);

    // Moving the anchor shifts everything by a constant.
    let moved = EloOptions { anchor: 2, anchor_rating: 0.0, ..EloOptions::default() };
    let other = fit(&names(3), &results, &moved).unwrap();
    assert_eq!(other.ratings[2].elo.elo, 0.0);
    assert_eq!(other.ratings[2].std_error, 0.0);
    let shift = table.ratings[2].elo.elo - other.ratings[2].elo.elo;
    for (a, b) in table.ratings.iter().zip(&other.ratings) {
        assert!((a.elo.elo - b.elo.elo - shift).abs() < 1e-6);
    }
}

#[test]
fn bad_input_is_reported() {
    let ok = GameResult { white: 0, black: 1, score: 1.0 };
    let d = EloOptions::default();
    assert_eq!(fit(&[], &[], &d), Err(EloError::NoPlayers));
    assert_eq!(fit(&[], &[ok], &d), Err(EloError::NoPlayers));
    assert_eq!(
        fit(&names(2), &[ok], &EloOptions { anchor: 2, ..d.clone() }),
        Err(EloError::AnchorOutOfRange { anchor: 2, players: 2 })
    );
    assert_eq!(
        fit(&names(2), &[ok, GameResult { white: 0, black: 5, score: 0.5 }], &d),
        Err(EloError::PlayerOutOfRange { game: 1, player: 5, players: 2 })
    );
    assert_eq!(
        fit(&names(2), &[GameResult { white: usize::MAX, black: 0, score: 0.5 }], &d),
        Err(EloError::PlayerOutOfRange { game: 0, player: usize::MAX, players: 2 })
    );
    assert_eq!(
        fit(&names(2), &[GameResult { white: 1, black: 1, score: 0.5 }], &d),
        Err(EloError::SamePlayer { game: 0, player: 1 })
    );
    for score in [0.25, -1.0, 2.0, f64::INFINITY] {
        assert_eq!(
            fit(&names(2), &[ok, GameResult { white: 1, black: 0, score }], &d),
            Err(EloError::BadScore { game: 1, score })
        );
    }
    match fit(&names(2), &[GameResult { white: 1, black: 0, score: f64::NAN }], &d) {
        Err(EloError::BadScore { game: 0, score }) => assert!(score.is_nan()),
        other => panic!("expected BadScore, got {other:?}"),
    }
    // Player 2 has no games; players 3 and 4 only play each other.
    let games = [ok, GameResult { white: 3, black: 4, score: 0.5 }];
    assert_eq!(
        fit(&names(5), &games, &d),
        Err(EloError::Disconnected { players: vec!["p2".into(), "p3".into(), "p4".into()] })
    );
    // Anchor without games.
    assert_eq!(
        fit(&names(3), &[GameResult { white: 1, black: 2, score: 1.0 }], &d),
        Err(EloError::Disconnected { players: vec!["p1".into(), "p2".into()] })
    );
    assert_eq!(fit(&names(2), &[], &d), Err(EloError::Disconnected { players: vec!["p1".into()] }));
    for (opts, option) in [
        (EloOptions { prior_draws: -1.0, ..d.clone() }, "prior_draws"),
        (EloOptions { prior_draws: f64::NAN, ..d.clone() }, "prior_draws"),
        (EloOptions { tolerance: 0.0, ..d.clone() }, "tolerance"),
        (EloOptions { anchor_rating: f64::INFINITY, ..d.clone() }, "anchor_rating"),
    ] {
        match fit(&names(2), &[ok], &opts) {
            Err(EloError::InvalidOption { option: o, .. }) => assert_eq!(o, option),
            other => panic!("expected InvalidOption for {option}, got {other:?}"),
        }
    }
    // No iterations allowed.
    let results = simulate(&TRUTH, 4, 1);
    assert!(matches!(
        fit(&names(5), &results, &EloOptions { max_iterations: 0, ..d.clone() }),
        Err(EloError::NotConverged { iterations: 0, .. })
    ));
    // Messages are readable.
    let msg = EloError::Disconnected { players: vec!["x".into()] }.to_string();
    assert!(msg.contains("x") && msg.contains("anchor"));
}

#[test]
fn single_player_is_its_anchor() {
    let table = fit(&names(1), &[], &EloOptions { anchor_rating: 1000.0, ..EloOptions::default() }).unwrap();
    assert_eq!(table.ratings[0].elo.elo, 1000.0);
    assert_eq!(table.ratings[0].games, 0);
    assert_eq!(table.los, vec![vec![0.5]]);
    assert_eq!(table.iterations, 0);
}

#[test]
fn los_is_complementary_and_decisive() {
    let results = simulate(&TRUTH, 100, 11);
    let table = fit(&names(5), &results, &EloOptions::default()).unwrap();
    for i in 0..5 {
        assert_eq!(table.los[i][i], 0.5);
        for j in 0..5 {
            assert!((table.los[i][j] + table.los[j][i] - 1.0).abs() < 1e-9);
            assert!((0.0..=1.0).contains(&table.los[i][j]));
        }
    }
    assert!(table.los[4][0] > 0.99, "{}", table.los[4][0]);
    assert!(table.los[0][4] < 0.01);
    assert!(table.los[4][3] > 0.99);
    // LOS agrees with the covariance.
    let (i, j) = (2, 1);
    let c = &table.covariance;
    let z =
        (table.ratings[i].elo.elo - table.ratings[j].elo.elo) / (c[i][i] + c[j][j] - 2.0 * c[i][j]).sqrt();
    assert!((table.los[i][j] - normal_cdf(z)).abs() < 1e-12);
}

#[test]
fn normal_cdf_is_accurate() {
    let cases = [
        (0.0, 0.5),
        (1.0, 0.841_344_746_068_542_9),
        (-1.0, 0.158_655_253_931_457_05),
        (1.959964, 0.975_000_0),
        (3.0, 0.998_650_101_968_369_9),
        (-3.0, 0.001_349_898_031_630_094_6),
        (-5.0, 2.866_515_718_791_939e-7),
        (-10.0, 7.619_853_024_160_527e-24),
    ];
    for (x, want) in cases {
        let got = normal_cdf(x);
        assert!(((got - want) / want).abs() < 1e-6, "Φ({x}) = {got}, want {want}");
    }
    assert!((normal_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-14);
    assert!((erfc(2.5) - 4.069_520_174_449_59e-4).abs() < 1e-17);
    assert!((erfc(3.0) - 2.209_049_699_858_544e-5).abs() < 1e-19);
    assert!((erfc(0.5) - (1.0 - 0.520_499_877_813_046_5)).abs() < 1e-15);
    assert!((erfc(2.49) + erfc(-2.49) - 2.0).abs() < 1e-15);
    assert_eq!(normal_cdf(f64::INFINITY), 1.0);
    assert_eq!(normal_cdf(f64::NEG_INFINITY), 0.0);
}

#[test]
fn optimum_is_a_maximum_of_the_penalized_likelihood() {
    let results = simulate(&TRUTH, 50, 5);
    let options = EloOptions::default();
    let table = fit(&names(5), &results, &options).unwrap();
    let pairs = aggregate(&names(5), &results, &options).unwrap().pairs;
    let problem = Problem::new(5, options.anchor, pairs);
    let theta: Vec<f64> =
        table.ratings.iter().map(|r| (r.elo.elo - options.anchor_rating) / ELO_PER_NAT).collect();
    let best = problem.log_likelihood(&theta);
    let (g, _) = problem.gradient_and_information(&theta);
    assert!(g.iter().all(|x| x.abs() < 1e-8), "{g:?}");
    for i in 1..5 {
        for delta in [-1.0, 1.0] {
            let mut t = theta.clone();
            t[i] += delta / ELO_PER_NAT;
            assert!(problem.log_likelihood(&t) < best, "player {i} {delta:+}");
        }
    }
}

#[test]
fn text_and_csv_list_every_player() {
    let mut names = names(5);
    names[3] = "odd, \"name\"".to_string();
    let table = fit(&names, &simulate(&TRUTH, 20, 3), &EloOptions::default()).unwrap();
    let text = table.to_text();
    let csv = table.to_csv();
    let los = table.los_text();
    assert!(text.starts_with("Rank") && text.contains("Elo") && text.contains("Games"));
    assert!(csv.starts_with("name,elo,std_error,lower95,upper95,games,points,score\n"));
    assert!(los.starts_with("LOS"));
    assert_eq!(text.lines().count(), 6);
    assert_eq!(csv.lines().count(), 6);
    assert_eq!(los.lines().count(), 6);
    for n in &names {
        assert!(text.contains(n.as_str()) && los.contains(n.as_str()), "{n}");
    }
    assert!(csv.contains("\"odd, \"\"name\"\"\""));
    for n in ["p0", "p1", "p2", "p4"] {
        assert!(csv.lines().any(|l| l.starts_with(&format!("{n},"))));
    }
    // sorted by Elo: the strongest (p4) first
    let first = text.lines().nth(1).unwrap_or_default();
    assert!(first.contains("p4") && first.trim_start().starts_with('1'));
    assert_eq!(table.get("p4").map(|r| r.games), Some(80));
    assert!(table.get("nobody").is_none());
    // the table round-trips through JSON
    let json = serde_json::to_string(&table).unwrap();
    let back: EloTable = serde_json::from_str(&json).unwrap();
    assert_eq!(back.ratings.len(), 5);
}

#[test]
fn rating_against_fixed_opponents_matches_the_fit() {
    // One opponent anchored at 0: the same model and prior as `fit`, so the same rating.
    let results: Vec<_> =
        (0..40).map(|k| GameResult { white: 0, black: 1, score: [1.0, 0.5, 1.0, 0.0][k % 4] }).collect();
    let table = fit(&names(2), &results, &EloOptions::default()).unwrap();
    let fitted = table.ratings[1].elo;
    let points: f64 = results.iter().map(|g| 1.0 - g.score).sum();
    let alone = rate_against(&[FixedOpponent { elo: 0.0, points, games: 40 }]).unwrap();
    assert!((alone.elo - fitted.elo).abs() < 1e-6, "{alone:?} vs {fitted:?}");
    assert!((alone.high95 - alone.low95 - (fitted.high95 - fitted.low95)).abs() < 1e-6);
    // Shifting the opponents shifts the rating by as much.
    let shifted = rate_against(&[FixedOpponent { elo: 1000.0, points, games: 40 }]).unwrap();
    assert!((shifted.elo - alone.elo - 1000.0).abs() < 1e-6);
    // Half the points against two opponents placed symmetrically: rated between them.
    let middle = rate_against(&[
        FixedOpponent { elo: -200.0, points: 15.0, games: 20 },
        FixedOpponent { elo: 200.0, points: 5.0, games: 20 },
    ])
    .unwrap();
    assert!(middle.elo.abs() < 1e-6 && middle.low95 < -50.0 && middle.high95 > 50.0, "{middle:?}");
    // A perfect score stays finite thanks to the prior; no games gives no rating.
    let perfect = rate_against(&[FixedOpponent { elo: 0.0, points: 10.0, games: 10 }]).unwrap();
    assert!(perfect.elo.is_finite() && perfect.elo > 300.0);
    assert_eq!(rate_against(&[FixedOpponent { elo: 0.0, points: 0.0, games: 0 }]), None);
    assert_eq!(rate_against(&[]), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn arbitrary_results_never_panic(
        players in 1usize..6,
        anchor in 0usize..7,
        games in proptest::collection::vec((0usize..7, 0usize..7, 0u8..4), 0..40),
        prior in 0.0f64..3.0,
    ) {
        let results: Vec<GameResult> = games
            .iter()
            .map(|&(w, b, s)| GameResult { white: w, black: b, score: [0.0, 0.5, 1.0, 0.3][s as usize] })
            .collect();
        let options = EloOptions { anchor, prior_draws: prior, ..EloOptions::default() };
        if let Ok(table) = fit(&names(players), &results, &options) {
            prop_assert_eq!(table.ratings.len(), players);
            for i in 0..players {
                prop_assert!(table.ratings[i].elo.elo.is_finite());
                prop_assert!(table.ratings[i].std_error.is_finite());
                for j in 0..players {
                    prop_assert!((table.los[i][j] + table.los[j][i] - 1.0).abs() < 1e-9);
                }
            }
            let _ = (table.to_text(), table.to_csv(), table.los_text());
        }
    }
}
