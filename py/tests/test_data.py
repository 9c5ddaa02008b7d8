"""Game shards into NumPy training arrays, and models: card, weights, Rust and NumPy forward passes."""

import hashlib
import json
import shutil

import morris
import numpy as np
import pytest


def test_shards_read_into_consistent_arrays(fixture_run):
    data = morris.read_shards(fixture_run)
    m = data["positions"]
    assert m > 100 and data["games"] >= 1
    obs, masks, policies = data["observations"], data["masks"], data["policies"]
    assert obs.shape == (m, 15, 24) and obs.dtype == np.float32
    assert masks.shape == (m, 600) and masks.dtype == np.bool_
    assert policies.shape == (m, 600) and data["wdl"].shape == (m, 3)
    np.testing.assert_array_equal(obs[:, 0] + obs[:, 1] + obs[:, 2], 1.0)
    assert masks.any(axis=1).all()
    full = data["policy_weights"] == 1
    assert full.any()
    np.testing.assert_allclose(policies[full].sum(axis=1), 1.0, atol=1e-4)
    assert (policies[~masks] == 0).all()
    assert (policies[~full] == 0).all()
    assert set(np.unique(data["values"])) <= {-1.0, 0.0, 1.0}
    np.testing.assert_array_equal(data["values"], data["wdl"][:, 0] - data["wdl"][:, 2])
    # The same through a list of files.
    same = morris.read_shards(sorted((fixture_run / "games").glob("*.shard")))
    np.testing.assert_array_equal(same["observations"], obs)


def test_augmentation_applies_every_symmetry(fixture_run):
    plain = morris.read_shards(fixture_run)
    every = morris.read_shards(fixture_run, augment="all")
    m = plain["positions"]
    assert every["observations"].shape[0] == 16 * m
    for i in range(0, m, 37):
        for s in range(16):
            row = 16 * i + s
            np.testing.assert_array_equal(
                every["observations"][row], morris.transform_observation(plain["observations"][i], s)
            )
            np.testing.assert_array_equal(every["masks"][row], morris.transform_mask(plain["masks"][i], s))
            np.testing.assert_array_equal(
                every["policies"][row], morris.transform_policy(plain["policies"][i], s)
            )
    r1 = morris.read_shards(fixture_run, augment="random", seed=4)
    r2 = morris.read_shards(fixture_run, augment="random", seed=4)
    np.testing.assert_array_equal(r1["observations"], r2["observations"])
    with pytest.raises(ValueError, match="augment"):
        morris.read_shards(fixture_run, augment="some")


def test_corrupt_and_missing_shards_name_the_file(fixture_run, tmp_path):
    shard = next((fixture_run / "games").glob("*.shard"))
    bad = tmp_path / "bad.shard"
    data = bytearray(shard.read_bytes())
    data[:4] = b"XXXX"  # not the shard magic
    bad.write_bytes(bytes(data))
    with pytest.raises(morris.FileFormatError, match="bad.shard"):
        morris.read_shards(bad)
    with pytest.raises(FileNotFoundError, match="nothing.shard"):
        morris.read_shards(tmp_path / "nothing.shard")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no game shards"):
        morris.read_shards(tmp_path / "empty")
    short = tmp_path / "short.shard"
    short.write_bytes(bytes(data[:10]))
    with pytest.raises(morris.FileFormatError, match="short.shard"):
        morris.read_shards([short])
    assert shard.read_bytes() != bytes(data)  # the original is untouched


def test_shipped_model_card_weights_and_forward_passes(shipped_model):
    model = morris.load_model(shipped_model)
    assert morris._morris.Network(shipped_model).verified, "the shipped model carries a manifest"
    assert model.card["rules"] == "standard" and model.card["format"] == 1
    assert model.net_config["trunk"] == "res-mlp"
    w = model.weights
    width = model.net_config["width"]
    assert w["body.ResMlp.input.weight"].shape == (360, width)
    assert all(v.dtype == np.float32 for v in w.values())
    rng = np.random.default_rng(0)
    games = []
    for _ in range(8):
        g = morris.Game()
        for _ in range(int(rng.integers(0, 40))):
            if g.is_terminal:
                break
            legal = g.legal_actions()
            g.apply(int(legal[rng.integers(len(legal))]))
        games.append(g)
    obs = np.stack([g.observation() for g in games])
    logits, wdl = model.evaluate(obs)
    assert logits.shape == (8, 600) and wdl.shape == (8, 3)
    np_logits, np_wdl = model.forward(obs)
    np.testing.assert_allclose(np_logits, logits, atol=2e-4, rtol=1e-4)
    np.testing.assert_allclose(np_wdl, wdl, atol=2e-4, rtol=1e-4)
    one_logits, _ = model.evaluate(obs[0])
    np.testing.assert_allclose(one_logits, logits[0], atol=1e-5)
    policy, probs = model.predict(games[1])
    assert abs(policy.sum() - 1) < 1e-5 and (policy[~games[1].legal_mask()] == 0).all()
    assert abs(probs.sum() - 1) < 1e-5
    with pytest.raises(ValueError, match="shape"):
        model.evaluate(np.zeros((2, 14, 24), dtype=np.float32))


def test_checkpoint_directory_and_bad_models(fixture_run, shipped_model, tmp_path):
    ckpt = morris.Model(fixture_run / "checkpoints" / "step-40")
    assert ckpt.card is None and ckpt.net_config["width"] > 0
    assert ckpt.evaluate(np.zeros((1, 15, 24), dtype=np.float32))[0].shape == (1, 600)
    with pytest.raises(FileNotFoundError, match="no-model"):
        morris.load_model(tmp_path / "no-model")
    broken = tmp_path / "broken"
    shutil.copytree(shipped_model, broken)
    # A manifest as the lab writes it (docs/file-formats.md): the files' SHA-256.
    files = [
        [name, hashlib.sha256((broken / name).read_bytes()).hexdigest()]
        for name in ("model.safetensors", "model.json")
    ]
    (broken / "manifest.json").write_text(json.dumps({"version": 1, "files": files}))
    assert morris.load_model(broken).weights.keys() == morris.load_model(shipped_model).weights.keys()
    weights = broken / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-5] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(morris.FileFormatError, match="model.safetensors"):
        _ = morris.load_model(broken).weights
    with pytest.raises(morris.FileFormatError, match="model.safetensors"):
        morris.load_model(broken).evaluate(np.zeros((15, 24), np.float32))
    (broken / "manifest.json").unlink()
    weights.write_bytes(b"not safetensors")
    with pytest.raises(morris.FileFormatError, match="model.safetensors"):
        _ = morris.Model(broken).weights
