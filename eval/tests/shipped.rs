//! The shipped model (`checkpoints/shipped/`, committed so that `eval play` works on a fresh
//! clone) loads, and beats `random` clearly in a short deterministic match, which an untrained
//! network of the same shape does not.

use std::path::{Path, PathBuf};

use burn::prelude::Device;
use morris_env::Rules;
use morris_eval::MatchReport;
use morris_eval::agents::AgentSpec;
use morris_eval::arena::{MatchConfig, Openings, play_match};
use morris_train::TrainError;
use morris_train::store::{
    MANIFEST_FILE, MODEL_CARD_FILE, MODEL_FILE, ModelCard, Verification, save_model, verify_manifest,
};

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
        openings: Openings::Random,
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

/// The shipped model carries a manifest like every model the lab writes, so its first load on a
/// fresh clone is checked: it verifies as it is, and a copy with one bit flipped in the weights or
/// in the card is refused, naming the file.
#[test]
fn the_shipped_model_is_verified_on_load_and_a_flipped_bit_is_refused() {
    assert_eq!(verify_manifest(&shipped()).expect("the shipped manifest"), Verification::Verified);
    AgentSpec::parse(&format!("az:model={},sims=1", shipped().display())).expect("the shipped model loads");

    for file in [MODEL_FILE, MODEL_CARD_FILE] {
        let dir = tempfile::tempdir().expect("a scratch directory");
        for name in [MODEL_FILE, MODEL_CARD_FILE, MANIFEST_FILE] {
            std::fs::copy(shipped().join(name), dir.path().join(name)).expect("copy the shipped model");
        }
        let path = dir.path().join(file);
        let mut bytes = std::fs::read(&path).expect("read the copy");
        let at = bytes.len() - 3;
        bytes[at] ^= 0x10;
        std::fs::write(&path, bytes).expect("write the flipped copy");
        let e = verify_manifest(dir.path()).expect_err("a flipped bit fails the manifest");
        assert!(matches!(&e, TrainError::Corrupt { path, .. } if path.ends_with(file)), "{file}: {e}");
        let e = AgentSpec::parse(&format!("az:model={},sims=1", dir.path().display()))
            .err()
            .unwrap_or_else(|| panic!("a shipped model with a flipped bit in {file} was accepted"));
        assert!(e.to_string().contains(file), "the error names {file}: {e}");
    }
}
