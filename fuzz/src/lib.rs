//! Fuzz targets: each reader of outside bytes in the lab, called on arbitrary bytes, asserting
//! what must hold beyond "no panic": a reader that accepts an input reads back what it writes.
//!
//! Every target is a plain `fn(&[u8])` listed in [`TARGETS`]; `tests/smoke.rs` runs them on the
//! seed corpus (`corpus/NAME/`, plus seeds made at run time: a shard, model weights, a 3v3
//! tablebase sector) and on seeded mutations of it, and `libfuzzer/` runs the same functions
//! under libFuzzer (docs/reliability.md). A panic is a finding; so is an input that takes more
//! than two seconds or allocates more than [`max_allocation`] (the smoke test's checks).

use std::path::Path;
use std::str::FromStr;

use burn::prelude::Device;
use morris_env::tablebase::{JudgedSet, Tablebase, position_from_points};
use morris_env::{Color, Game, Move, Rules};
use morris_eval::AgentSpec;
use morris_eval::records::parse_records;
use morris_eval::uci::{bestmove_in, parse as parse_uci};
use morris_train::store::{
    ModelCard, decode_shard, encode_shard, model_from_bytes, model_to_bytes, verify_manifest,
};
use morris_train::{NetConfig, TrainConfig};
use morris_web::engine::Opponent;

/// The most a target may allocate at once for an input of `len` bytes (the smoke test's bound):
/// 16 MiB plus 64 bytes per input byte, well above what a valid input of that size needs (a
/// decoded shard takes about 4 bytes per byte), far below what a trusted length field could ask.
pub fn max_allocation(len: usize) -> usize {
    (16 << 20) + 64 * len
}

/// A fuzz target: its name (the corpus directory and the libFuzzer binary) and its function.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, by name.
pub const TARGETS: &[Target] = &[
    ("shard", shard),
    ("model_weights", model_weights),
    ("model_card", model_card),
    ("manifest", manifest),
    ("config", config),
    ("move_notation", move_notation),
    ("game_notation", game_notation),
    ("uci_command", uci_command),
    ("uci_answer", uci_answer),
    ("agent_spec", agent_spec),
    ("game_records", game_records),
    ("judged_positions", judged_positions),
    ("tablebase_sector", tablebase_sector),
    ("web_opponent", web_opponent),
];

/// The label errors name the input by.
fn source() -> &'static Path {
    Path::new("fuzz-input")
}

/// The network shape the model targets use (small: a load is quick).
pub fn tiny_net() -> NetConfig {
    NetConfig { width: 8, blocks: 1, value_hidden: 8, ..NetConfig::default() }
}

/// A game shard (`store::decode_shard`): read, written again, read again to the same bytes; the
/// bytes are tried as they are and with their last four resealed as the CRC-32C of the rest, so
/// that mutations reach the record checks behind the checksum.
pub fn shard(data: &[u8]) {
    shard_round_trip(data);
    if let Some(body) = data.len().checked_sub(4).map(|n| &data[..n]) {
        let mut resealed = body.to_vec();
        resealed.extend_from_slice(&crc32c::crc32c(body).to_le_bytes());
        shard_round_trip(&resealed);
    }
}

fn shard_round_trip(data: &[u8]) {
    let Ok(shard) = decode_shard(data, source()) else { return };
    let bytes =
        encode_shard(&shard.samples, shard.games, shard.variant).expect("a shard that was read is written");
    let again = decode_shard(&bytes, source()).expect("a shard written is read");
    // Compared as bytes: a value may be NaN.
    let bytes_again = encode_shard(&again.samples, again.games, again.variant).expect("written again");
    assert_eq!(bytes, bytes_again, "a shard's round trip changed it");
}

/// Model weights sent as bytes (`store::model_from_bytes`, what a self-play worker takes):
/// weights that load are written and load again.
pub fn model_weights(data: &[u8]) {
    let device = Device::flex();
    let Ok(model) = model_from_bytes(&tiny_net(), data.to_vec(), &device, source()) else { return };
    let bytes = model_to_bytes(&model).expect("loaded weights are written");
    model_from_bytes(&tiny_net(), bytes, &device, source()).expect("written weights load");
}

/// A model card (`model.json`, `ModelCard::from_json`): a card read is written and read back
/// the same.
pub fn model_card(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(card) = ModelCard::from_json(text, source()) else { return };
    let json = serde_json::to_string(&card).expect("a card is written");
    let again = ModelCard::from_json(&json, source()).expect("a written card is read");
    assert_eq!(serde_json::to_string(&again).expect("written"), json, "a card's round trip changed it");
}

/// A SHA-256 manifest (`manifest.json`, `store::verify_manifest`) beside one file.
pub fn manifest(data: &[u8]) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    std::fs::write(dir.path().join("model.safetensors"), b"weights").expect("write");
    std::fs::write(dir.path().join("manifest.json"), data).expect("write");
    let _ = verify_manifest(dir.path());
}

/// A training config (TOML, `TrainConfig::from_toml`): a config read is written and read back
/// the same. Inputs naming files to open (`tablebase`, `judged`) are skipped: the target reads
/// bytes, not the machine's files.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if text.contains("tablebase") || text.contains("judged") {
        return;
    }
    let Ok(config) = TrainConfig::from_toml(text, &[]) else { return };
    let toml = config.to_toml();
    let again = TrainConfig::from_toml(&toml, &[]).expect("a written config is read");
    assert_eq!(again.to_toml(), toml, "a config's round trip changed it");
}

/// A move in notation (`Move::from_str`: `d6`, `a1-a4`, `d6xg7`): a move read is written and
/// read back the same.
pub fn move_notation(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(mv) = Move::from_str(text) else { return };
    let shown = mv.to_string();
    assert_eq!(Move::from_str(&shown).ok(), Some(mv), "'{shown}' does not read back");
}

/// A game in notation (`Game::from_notation`, what `--moves`, Python and the web take): a game
/// read is written as its record and read back the same.
pub fn game_notation(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(game) = Game::from_notation(Rules::standard(), text) else { return };
    let record = game.record();
    let again = Game::from_notation(Rules::standard(), &record).expect("a game's record is read");
    assert_eq!(again.record(), record, "a game's round trip changed it");
}

/// Commands sent to the UCI engine (`uci::parse`), a line at a time.
pub fn uci_command(data: &[u8]) {
    for line in String::from_utf8_lossy(data).lines() {
        let _ = parse_uci(line);
    }
}

/// Answers read from an external UCI engine (`uci::bestmove_in`, its `bestmove` lines and the
/// tolerated trailing `bestmove` token), the move then tried on a new game.
pub fn uci_answer(data: &[u8]) {
    for line in String::from_utf8_lossy(data).lines() {
        if let Some(mv) = bestmove_in(line) {
            assert!(mv.is_empty() || line.contains(mv), "'{mv}' is not in '{line}'");
            let _ = Game::new(Rules::standard()).play_notation(mv);
        }
    }
}

/// Agent specs (`AgentSpec::parse`), named back when they parse. Specs that would open files
/// (`az:model=`, tables) are skipped, as in [`config`].
pub fn agent_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if ["az", "model", "tb", "perfect"].iter().any(|k| text.contains(k)) {
        return;
    }
    if let Ok(spec) = AgentSpec::parse(text) {
        let _ = spec.name();
    }
}

/// Game records (JSON Lines, `records::parse_records`, what `eval rate` and `eval serve --games`
/// read): records read are written and read back the same.
pub fn game_records(data: &[u8]) {
    let Ok(records) = parse_records(data, source()) else { return };
    let lines: Vec<String> =
        records.iter().map(|r| serde_json::to_string(r).expect("a record is written")).collect();
    let text = lines.join("\n");
    let again = parse_records(text.as_bytes(), source()).expect("written records are read");
    assert_eq!(again, records, "records' round trip changed them");
}

/// A judged-positions set (`JudgedSet::parse`, `data/judged-positions.jsonl`): a set read is
/// written and read back the same.
pub fn judged_positions(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(set) = JudgedSet::parse(text, source()) else { return };
    let jsonl = set.to_jsonl();
    let again = JudgedSet::parse(&jsonl, source()).expect("a written set is read");
    assert_eq!(again.to_jsonl(), jsonl, "a set's round trip changed it");
}

/// A tablebase sector file (`sector-3v3.tb`, memory-mapped by `Tablebase::open`): opened,
/// probed and checked against its CRC. Whatever the bytes, an error or an answer, never a
/// crash: the header's length and slot count are checked before any index is trusted.
pub fn tablebase_sector(data: &[u8]) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    std::fs::write(dir.path().join("sector-3v3.tb"), data).expect("write");
    let Ok(tb) = Tablebase::open(dir.path()) else { return };
    for (mover, opponent) in [("a1 d1 g1", "a4 d2 g4"), ("b2 d7 f4", "a7 g7 c5")] {
        if let Ok(pos) = position_from_points(mover, opponent, Color::White) {
            let _ = tb.probe(&pos);
        }
    }
    let _ = tb.verify();
}

/// The opponent of a web game (the JSON of `POST /api/games`, `engine::Opponent`): validated,
/// written and read back the same.
pub fn web_opponent(data: &[u8]) {
    let Ok(opponent) = serde_json::from_slice::<Opponent>(data) else { return };
    for rules in [morris_env::Rules::standard(), morris_env::Rules::twelve()] {
        let _ = opponent.validate(Some(morris_env::Variant::Nine), None, &rules);
    }
    let json = serde_json::to_string(&opponent).expect("an opponent is written");
    let again: Opponent = serde_json::from_str(&json).expect("a written opponent is read");
    assert_eq!(again, opponent, "an opponent's round trip changed it");
}
