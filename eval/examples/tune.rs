//! Weight tuning for the minimax evaluation: each variant plays colour-swapped pairs against the
//! default weights at a fixed depth. `cargo run --release -p morris-eval --example tune -- [depth] [pairs]`.

use morris_env::minimax::{ARENA_TT_BITS, EvalWeights};
use morris_env::{MinimaxConfig, Rules};
use morris_eval::MatchReport;
use morris_eval::agents::AgentSpec;
use morris_eval::arena::{MatchConfig, Openings, play_match};

fn spec(depth: u32, weights: EvalWeights) -> AgentSpec {
    AgentSpec::Minimax(MinimaxConfig { tt_bits: ARENA_TT_BITS, weights, ..MinimaxConfig::depth(depth) })
}

fn main() {
    let mut args = std::env::args().skip(1);
    let depth: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let pairs: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let base = EvalWeights::default();
    let mut variants: Vec<(&str, EvalWeights)> = Vec::new();
    // Round 3: the adopted weights against the weights before rounds 1-2 (rounds 1 and 2 are
    // recorded in docs/search-and-network.md).
    let mut v = base;
    v.placing.mobility = 2;
    v.flying.mills = 5;
    v.flying.twos = 30;
    variants.push(("weights before tuning", v));
    let config = MatchConfig {
        pairs,
        opening_plies: 6,
        seed: 7,
        rules: Rules::standard(),
        batch_network: false,
        openings: Openings::Random,
    };
    for (name, w) in variants {
        let a = spec(depth, w);
        let b = spec(depth, base);
        let Ok(mut games) = play_match(&a, &b, &config, |_| {}) else {
            eprintln!("{name}: the match could not be played");
            continue;
        };
        // Both specs print the same name; tell them apart by colour and pair order.
        for (i, g) in games.iter_mut().enumerate() {
            if i % 2 == 0 {
                g.white = "variant".into();
                g.black = "default".into();
            } else {
                g.white = "default".into();
                g.black = "variant".into();
            }
        }
        let r = MatchReport::from_games("variant", "default", &games);
        println!(
            "{name:<28} depth {depth}: W/D/L {}/{}/{}  score {:.1}% [{:.1}, {:.1}]",
            r.wins,
            r.draws,
            r.losses,
            100.0 * r.score,
            100.0 * r.score_low,
            100.0 * r.score_high
        );
    }
}
