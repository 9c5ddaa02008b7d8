//! Compatibility with files written before the store refactor: the checked-in fixtures of
//! `tests/fixtures/format-v1` (a checkpoint, its game shard, its evaluation and an export) are
//! read by today's store, and exporting the old checkpoint again gives the same network.

use std::path::PathBuf;

use burn::prelude::Device;
use morris_env::Rules;
use morris_train::evaluator::{EvalBatch, Evaluator, Leaf};
use morris_train::net_evaluator::NetEvaluator;
use morris_train::store::{ModelCard, RunDir, checkpoint, export_checkpoint, load_model, read_shard};

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/format-v1").join(path)
}

fn outputs(dir: &std::path::Path) -> EvalBatch {
    let device = Device::flex();
    let (model, _) = load_model(dir, &device).expect("the model loads");
    let (leaves, masks) = Leaf::random_batch(Rules::standard(), 24, 40);
    let mut out = EvalBatch::default();
    NetEvaluator::new(model, device).evaluate(&Rules::standard(), &leaves, &masks, &mut out);
    out
}

#[test]
fn old_checkpoint_loads_with_its_metadata_evaluation_and_shard() {
    let dir = fixture("run/checkpoints/step-40");
    let loaded = checkpoint::load(&dir, &Device::flex()).expect("the v1 checkpoint loads");
    assert_eq!(loaded.meta.step, 40);
    assert_eq!(loaded.meta.shards, vec!["local-00000000.shard".to_string()]);
    assert_eq!(loaded.net, loaded.config.model);
    let eval = checkpoint::read_eval(&dir).expect("eval.json parses").expect("the checkpoint was evaluated");
    assert_eq!((eval.step, eval.simulations), (40, 4));
    let elo = eval.elo.expect("an Elo");
    assert!(elo.low95 < elo.elo && elo.elo < elo.high95);
    let best = checkpoint::best(&fixture("run/checkpoints")).expect("best.json parses");
    assert_eq!(best.checkpoint, "step-40");
    assert_eq!(best.elo, elo.elo);
    assert_eq!(checkpoint::list(&fixture("run/checkpoints")).len(), 1);

    let run = RunDir::new(fixture("run"));
    let shard = read_shard(&run.shard(&loaded.meta.shards[0])).expect("the v1 shard reads");
    assert_eq!(shard.games, 13);
    assert!(!shard.samples.is_empty());
}

#[test]
fn old_export_loads_and_a_new_export_of_the_old_checkpoint_matches_it() {
    let old = fixture("exported");
    let card = ModelCard::read(&old).expect("the v1 model card parses");
    assert_eq!((card.step, card.rules.as_str()), (40, "standard"));
    assert_eq!(card.elo.as_ref().map(|e| e.simulations), Some(4));

    let scratch = tempfile::tempdir().expect("a scratch directory");
    let new = scratch.path().join("exported");
    let new_card = export_checkpoint(&fixture("run/checkpoints/step-40"), &new).expect("export");
    assert_eq!(new_card.net, card.net);
    assert_eq!(new_card.step, card.step);
    assert_eq!(new_card.elo.map(|e| e.rating), card.elo.map(|e| e.rating));

    let (before, after) = (outputs(&old), outputs(&new));
    assert_eq!(before.priors, after.priors);
    assert_eq!(before.wdl, after.wdl);
    assert!(before.values.iter().any(|v| *v != 0.0));
}
