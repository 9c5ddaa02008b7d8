"""Batched agent calls: Agent.act_batch (observations and masks, positions rebuilt in Rust) and
Model.act_batch (one forward pass), against the one-game calls, with their bad input."""

import morris
import numpy as np
import pytest


def midgame_env(n=24, seed=3, rules=None):
    env = morris.VecEnv(n, seed=seed, opening_plies=0, rules=rules, autoreset_mode="disabled")
    env.reset()
    rng = np.random.default_rng(seed)
    for _ in range(int(rng.integers(25, 40))):
        env.step(morris.sample_actions(env.masks, rng))
    return env


@pytest.mark.parametrize("spec", ["minimax:depth=2", "random"])
def test_act_batch_plays_what_choose_plays_in_the_same_positions(spec):
    env = midgame_env()
    live = env.masks.any(axis=1)
    assert live.sum() > 10 and (~live).sum() >= 0
    batch = morris.Agent(spec, seed=4).act_batch(env.observations, env.masks)
    one = morris.Agent(spec, seed=4)
    for i in range(env.num_envs):
        if live[i]:
            assert batch[i] == one.choose(morris.Game(moves=env.game(i).actions)), i
            assert env.masks[i, batch[i]]
        else:
            assert batch[i] == 0
    # The same masks packed, or as PettingZoo's int8, give the same moves.
    for masks in (env.packed_masks, env.masks.astype(np.int8)):
        again = morris.Agent(spec, seed=4).act_batch(env.observations, masks)
        np.testing.assert_array_equal(again, batch)


def test_act_batch_rebuilds_every_kind_of_position():
    # Placing, moving, flying and pending removals, from many random games.
    env = morris.VecEnv(64, seed=9, autoreset_mode="same_step")
    env.reset()
    agent = morris.Agent("random", seed=0)
    removals = 0
    for _ in range(120):
        actions = agent.act_batch(env.observations, env.masks)
        assert env.masks[np.arange(64), actions].all()
        removals += int(env.observations[:, 5, 0].sum())
        env.step(actions)
    assert removals > 0


def test_act_batch_under_other_rules_needs_those_rules():
    rules = {"n_move_rule": 40, "turn_cap": 300}
    env = midgame_env(8, seed=5, rules=rules)
    actions = morris.Agent("minimax:depth=1").act_batch(env.observations, env.masks, rules=rules)
    assert env.masks[np.arange(8), actions][env.masks.any(axis=1)].all()
    with pytest.raises(ValueError, match="observation 0 has plane 1[24] unlike"):
        morris.Agent("minimax:depth=1").act_batch(env.observations, env.masks)


def test_act_batch_rejects_bad_input_naming_the_row():
    env = midgame_env(4, seed=1)
    agent = morris.Agent("random")
    obs, masks = env.observations, env.masks
    with pytest.raises(TypeError, match="float32"):
        agent.act_batch(obs.astype(np.float64), masks)
    with pytest.raises(ValueError, match=r"shape \[N, 15, 24\]"):
        agent.act_batch(obs[:, :14], masks)
    with pytest.raises(TypeError, match="bool or integers"):
        agent.act_batch(obs, masks.astype(np.float32))
    with pytest.raises(ValueError, match="N = 4"):
        agent.act_batch(obs, masks[:3])
    with pytest.raises(ValueError, match="N = 4"):
        agent.act_batch(obs, masks[:, :599])
    bad = obs.copy()
    bad[2, 0, 0] = 0.5
    with pytest.raises(ValueError, match="observation 2 has point 0"):
        agent.act_batch(bad, masks)
    wrong = masks.copy()
    row = int(np.flatnonzero(masks.any(axis=1))[0])
    wrong[row] = ~wrong[row]
    with pytest.raises(ValueError, match=f"mask {row} is not the legal actions of observation {row}"):
        agent.act_batch(obs, wrong)
    packed = env.packed_masks.copy()
    packed[0, 9] |= np.uint64(1) << np.uint64(63)
    with pytest.raises(ValueError, match="bits past action 599"):
        agent.act_batch(obs, packed)
    with pytest.raises(TypeError):
        agent.act_batch("observations", masks)
    assert agent.act_batch(np.zeros((0, 15, 24), np.float32), np.zeros((0, 600), bool)).shape == (0,)
    # Finished games (all-false masks) get 0 whatever the observation.
    assert agent.act_batch(np.zeros((2, 15, 24), np.float32), np.zeros((2, 600), bool)).tolist() == [0, 0]


def test_model_act_batch_is_the_masked_argmax_of_one_forward_pass(shipped_model):
    model = morris.load_model(shipped_model)
    env = midgame_env(16, seed=2)
    actions = model.act_batch(env.observations, env.masks)
    logits, _ = model.evaluate(env.observations)
    live = env.masks.any(axis=1)
    expected = np.where(env.masks, logits, -np.inf).argmax(axis=1)
    np.testing.assert_array_equal(actions[live], expected[live])
    assert (actions[~live] == 0).all()
    np.testing.assert_array_equal(model.act_batch(env.observations, env.packed_masks), actions)
    rng = np.random.default_rng(0)
    sampled = model.act_batch(env.observations, env.masks, temperature=1.0, rng=rng)
    assert env.masks[np.flatnonzero(live), sampled[live]].all()
    with pytest.raises(TypeError, match="rng"):
        model.act_batch(env.observations, env.masks, temperature=1.0)
    with pytest.raises(ValueError, match="temperature"):
        model.act_batch(env.observations, env.masks, temperature=-1.0)
    with pytest.raises(TypeError, match="float32"):
        model.act_batch(env.observations.astype(np.float64), env.masks)
    with pytest.raises(ValueError, match="600"):
        model.act_batch(env.observations, env.masks[:, :10])
    with pytest.raises(TypeError, match="dtype"):
        model.act_batch(env.observations, env.masks.astype(np.float32))


def test_network_search_agent_acts_on_a_batch(shipped_model):
    env = midgame_env(4, seed=6)
    actions = morris.Agent(f"az:model={shipped_model},sims=4").act_batch(env.observations, env.masks)
    live = env.masks.any(axis=1)
    assert env.masks[np.flatnonzero(live), actions[live]].all() and (actions[~live] == 0).all()
