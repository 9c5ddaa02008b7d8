"""The VecEnv fast path: packed masks, Rust-side sampling (sample_legal, step(None)), the
dense masks kept by changed entries, agent_actions, and their bad input."""

import morris
import numpy as np
import pytest


def test_packed_masks_are_a_read_only_view_that_unpacks_to_the_dense_masks():
    env = morris.VecEnv(32, seed=2, opening_plies=5, autoreset_mode="same_step")
    obs, info = env.reset()
    packed = info["packed_action_mask"]
    assert packed is env.packed_masks and packed.shape == (32, 10) and packed.dtype == np.uint64
    assert not packed.flags.writeable
    for _ in range(300):
        obs, rewards, terminated, truncated, info = env.step(None)
        assert info["packed_action_mask"] is packed
        np.testing.assert_array_equal(morris.unpack_masks(packed), info["action_mask"])
    # The documented plain-NumPy unpack is the same.
    plain = np.unpackbits(packed.astype("<u8").view(np.uint8), axis=-1, count=600, bitorder="little")
    np.testing.assert_array_equal(plain.view(bool), env.masks)
    assert (packed[:, 9] >> np.uint64(600 - 576) == 0).all()  # bits 600..640 stay zero
    assert morris.unpack_masks(packed[0]).shape == (600,)


def test_packed_mode_plays_the_same_games_without_dense_masks():
    dense = morris.VecEnv(64, seed=4, opening_plies=2)
    packed = morris.VecEnv(64, seed=4, opening_plies=2, masks="packed")
    assert packed.masks is None and packed.mask_format == "packed" and dense.mask_format == "dense"
    _, info = packed.reset()
    assert "action_mask" not in info and "packed_action_mask" in info
    dense.reset()
    for _ in range(200):
        a = dense.step(None)
        b = packed.step(None)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(dense.packed_masks, packed.packed_masks)
    with pytest.raises(ValueError, match="masks"):
        morris.VecEnv(2, masks="sparse")


@pytest.mark.parametrize("threads", [1, 2])
def test_step_none_plays_the_games_of_sample_legal_then_step(threads):
    fused = morris.VecEnv(128, seed=7, threads=threads, autoreset_mode="same_step")
    split = morris.VecEnv(128, seed=7, autoreset_mode="same_step")
    fused.reset()
    _, info = split.reset()
    buf = np.zeros(128, dtype=np.int64)
    ended = 0
    for _ in range(300):
        actions = split.sample_legal(out=buf)
        assert actions is buf
        live = info["action_mask"].any(axis=1)
        assert info["action_mask"][np.arange(128), actions][live].all()
        *_, info = split.step(actions)
        _, rewards, terminated, truncated, _ = fused.step(None)
        ended += int((terminated | truncated).sum())
        np.testing.assert_array_equal(fused.observations, split.observations)
        np.testing.assert_array_equal(rewards, split.rewards)
    assert ended > 0


def test_sampling_finished_games_gives_zero_and_stepping_them_is_defined():
    # next_step: the step that ends a game leaves an all-false mask; its sample is 0, ignored.
    env = morris.VecEnv(3, rules={"turn_cap": 1})
    env.reset()
    env.step(None)
    assert env.truncated.all() and not env.masks.any()
    assert env.sample_legal().tolist() == [0, 0, 0]
    assert env.sample_legal(seed=5).tolist() == [0, 0, 0]
    obs, rewards, terminated, truncated, info = env.step(env.sample_legal())
    assert not truncated.any() and info["action_mask"].sum() == 72  # new games
    # disabled: finished games stay finished; sampling gives 0 and step(None) changes nothing.
    env = morris.VecEnv(2, rules={"turn_cap": 1}, autoreset_mode="disabled")
    env.reset()
    env.step(None)
    before = env.observations.copy()
    for _ in range(3):
        assert env.sample_legal().tolist() == [0, 0]
        env.step(None)
        env.step(env.sample_legal(seed=1))
    assert env.truncated.all() and (env.rewards == 0).all()
    np.testing.assert_array_equal(env.observations, before)


def test_seeded_sampling_is_reproducible_and_uniform():
    env = morris.VecEnv(512, seed=3)
    env.reset()
    a = env.sample_legal(seed=11)
    np.testing.assert_array_equal(a, env.sample_legal(seed=11))
    assert (a != env.sample_legal(seed=12)).any()
    # The env generators are untouched by seeded draws: unseeded draws repeat after a reset.
    env.reset(seed=3)
    first = env.sample_legal()
    env.reset(seed=3)
    env.sample_legal(seed=99)
    np.testing.assert_array_equal(env.sample_legal(), first)
    counts = np.bincount(np.concatenate([env.sample_legal(seed=s) for s in range(20)]), minlength=24)
    assert counts.shape == (24,) and counts.min() > 0.7 * counts.mean()  # 24 placements, ~427 each


def test_sample_legal_and_seeds_reject_bad_input():
    env = morris.VecEnv(4)
    env.reset()
    for seed in ("1", 1.5, True, [1]):
        with pytest.raises(TypeError, match="seed"):
            env.sample_legal(seed=seed)
        with pytest.raises(TypeError, match="seed"):
            env.reset(seed=seed)
    for seed in (-1, 2**64):
        with pytest.raises(ValueError, match="seed"):
            env.sample_legal(seed=seed)
    assert env.sample_legal(seed=2**64 - 1).shape == (4,)
    assert env.sample_legal(seed=np.uint64(7)).dtype == np.int64
    with pytest.raises(TypeError, match="int64"):
        env.sample_legal(out=np.zeros(4, dtype=np.int32))
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        env.sample_legal(out=np.zeros(5, dtype=np.int64))
    with pytest.raises(ValueError, match="writeable"):
        env.sample_legal(out=np.zeros(8, dtype=np.int64)[::2])
    read_only = np.zeros(4, dtype=np.int64)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        env.sample_legal(out=read_only)
    with pytest.raises(TypeError, match="NumPy array"):
        env.sample_legal(out=[0, 0, 0, 0])
    with pytest.raises(TypeError):
        morris.VecEnv(2, seed=1.0)
    with pytest.raises(ValueError):
        morris.VecEnv(2, seed=-3)


def test_agent_actions_ask_every_live_game_with_its_history():
    env = morris.VecEnv(6, seed=1, opening_plies=3)
    env.reset()
    agent = morris.Agent("minimax:depth=1", seed=0)
    actions = env.agent_actions(agent)
    assert actions.dtype == np.int64 and env.masks[np.arange(6), actions].all()
    again = morris.Agent("minimax:depth=1", seed=0)
    assert actions.tolist() == [again.choose(env.game(i)) for i in range(6)]
    active = np.array([True, False, True, False, False, True])
    some = env.agent_actions(agent, active)
    assert (some[~active] == 0).all() and env.masks[np.flatnonzero(active), some[active]].all()
    env.step(actions)
    with pytest.raises(TypeError, match="morris.Agent"):
        env.agent_actions("minimax:depth=1")
    with pytest.raises(TypeError, match="bool"):
        env.agent_actions(agent, np.ones(6, dtype=np.int8))
    with pytest.raises(ValueError, match=r"shape \(6,\)"):
        env.agent_actions(agent, np.ones(5, dtype=bool))
    done = morris.VecEnv(2, rules={"turn_cap": 1})
    done.reset()
    done.step(None)
    assert done.agent_actions(agent).tolist() == [0, 0]


def test_step_where_moves_only_the_active_games():
    env = morris.VecEnv(3)
    env.reset()
    env._step_where(np.array([0, 599, 2]), np.array([True, False, True]))
    assert [env.game(i).num_plies for i in range(3)] == [1, 0, 1]
    with pytest.raises(morris.IllegalActionError, match="env 2"):
        env._step_where(np.array([5, 0, 2]), np.array([False, False, True]))
    with pytest.raises(TypeError, match="bool"):
        env._step_where(np.array([5, 0, 2]), np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="shape"):
        env._step_where(np.array([5, 0, 2]), np.array([True, False]))


def test_unpack_masks_rejects_bad_input():
    with pytest.raises(TypeError, match="uint64"):
        morris.unpack_masks(np.zeros((2, 10), dtype=np.int64))
    with pytest.raises(ValueError, match="10"):
        morris.unpack_masks(np.zeros((2, 9), dtype=np.uint64))
    assert not morris.unpack_masks(np.zeros((2, 10), dtype=np.uint64)).any()
