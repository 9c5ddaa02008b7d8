//! The shipped model (`checkpoints/shipped/`, committed so that `eval play` works on a fresh
//! clone) loads, and beats `random` clearly in a short deterministic match, which an untrained
//! network of the same shape does not.

use std::path::{Path, PathBuf};

use burn::prelude::Device;
use morris_env::Rules;
use morris_eval::MatchReport;
use morris_eval::agents::AgentSpec;
use morris_eval::arena::{MatchConfig, play_match};
use morris_train::store::{ModelCard, save_model};

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../checkpoints/shipped")
}

/// Score against `random` over 10 colour-swapped pairs with a fixed seed. One simulation per
/// move: the network's own policy decides, not the search.
fn score_vs_random(model: &Path) -> f64 {
    let a = AgentSpec::parse(&format!("az:model={},sims=1", model.display())).expect("az spec");
    let b = AgentSpec::parse("random").expect("random spec");
    let config = MatchConfig {
        pairs: 10,
        opening_plies: 6,
        seed: 7,
        rules: Rules::standard(),
        batch_network: false,
        openings: None,
    };
    let games = play_match(&a, &b, &config, |_| {}).expect("the match is played");
    MatchReport::from_games(&a.name(), &b.name(), &games).score
}

const THRESHOLD: f64 = 0.85;

#[test]
fn the_shipped_model_beats_random_and_an_untrained_network_does_not() {
    let card = ModelCard::read(&shipped()).expect("the shipped model's model.json");
    assert_eq!(card.rules, "standard");
    let trained = score_vs_random(&shipped());
    assert!(trained >= THRESHOLD, "the shipped model scored {trained} against random");

    // The same shape, freshly initialised from a fixed seed, saved like a model.
    let device = Device::flex();
    device.seed(1);
    let untrained = card.net.init(&device);
    let dir = tempfile::tempdir().expect("a scratch directory");
    save_model(&untrained, dir.path()).expect("save the untrained network");
    let baseline = score_vs_random(dir.path());
    assert!(baseline < THRESHOLD, "an untrained network scored {baseline}: the threshold proves nothing");
    println!("shipped {trained:.3}, untrained {baseline:.3}");
}
