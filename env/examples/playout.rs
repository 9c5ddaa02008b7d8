//! Fixed-size random playout loop for profilers (callgrind, perf): `cargo run --release -p
//! morris-env --example playout -- [steps] [position|game] [openspiel|standard]`.

use morris_env::{Game, Position, Rng, Rules};

fn main() {
    let mut args = std::env::args().skip(1);
    let steps: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000_000);
    let level = args.next().unwrap_or_else(|| "position".into());
    let rules = match args.next().as_deref() {
        Some("standard") => Rules::standard(),
        _ => Rules::openspiel(),
    };
    let mut rng = Rng::seed_from_u64(0);
    let mut games = 0u64;
    if level == "game" {
        let mut game = Game::new(rules);
        for _ in 0..steps {
            let mask = game.legal_actions();
            match mask.sample(&mut rng) {
                Some(a) => game.apply_unchecked(a),
                None => {
                    game.reset();
                    games += 1;
                }
            }
        }
    } else {
        let mut pos = Position::start();
        for _ in 0..steps {
            let mask = pos.legal_actions(&rules);
            match mask.sample(&mut rng) {
                Some(a) => pos.apply_unchecked(a, &rules),
                None => {
                    pos = Position::start();
                    games += 1;
                }
            }
        }
    }
    println!("{steps} steps, {games} games finished");
}
