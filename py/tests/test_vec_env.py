"""morris.VecEnv: shapes, dtypes, zero-copy buffers, autoreset modes, seeding, threads and bad input."""

import morris
import numpy as np
import pytest


def random_actions(info, rng):
    return morris.sample_actions(info["action_mask"], rng)


def test_shapes_dtypes_and_read_only_views():
    env = morris.VecEnv(8, seed=3)
    obs, info = env.reset()
    assert obs.shape == (8, 15, 24) and obs.dtype == np.float32
    assert info["action_mask"].shape == (8, 600) and info["action_mask"].dtype == np.bool_
    assert info["current_player"].dtype == np.uint8
    rng = np.random.default_rng(0)
    obs2, rewards, terminated, truncated, info = env.step(random_actions(info, rng))
    assert rewards.shape == (8, 2) and rewards.dtype == np.float32
    assert terminated.shape == (8,) and truncated.dtype == np.bool_
    # The same buffers every step, viewed without a copy and not writeable from Python.
    assert obs2 is obs and np.shares_memory(obs, env.observations)
    for a in (obs, rewards, terminated, truncated, info["action_mask"], info["current_player"]):
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a.flat[0] = 1
        with pytest.raises(ValueError):
            a.flags.writeable = True
    assert (info["current_player"] == 1).all()


def test_matches_single_games_step_by_step():
    n = 16
    env = morris.VecEnv(n, seed=5, opening_plies=4, autoreset_mode="disabled")
    obs, info = env.reset()
    games = [env.game(i) for i in range(n)]
    assert all(g.num_plies == 4 for g in games)
    rng = np.random.default_rng(7)
    for _ in range(400):
        actions = random_actions(info, rng)
        obs, rewards, terminated, truncated, info = env.step(actions)
        for i, g in enumerate(games):
            if not g.is_terminal:
                g.apply(int(actions[i]))
                if g.is_terminal:
                    assert list(rewards[i]) == list(g.rewards)
                    assert terminated[i] != g.outcome.is_truncation
            np.testing.assert_array_equal(obs[i], g.observation())
            np.testing.assert_array_equal(info["action_mask"][i], g.legal_mask())
            assert info["current_player"][i] == g.current_player
            assert env.outcome(i) == g.outcome
        if all(g.is_terminal for g in games):
            break
    assert all(g.is_terminal for g in games)


def test_next_step_autoreset_follows_gymnasium():
    env = morris.VecEnv(2, rules={"turn_cap": 1})
    obs, info = env.reset()
    obs, rewards, terminated, truncated, info = env.step(np.array([0, 1]))
    # The step that ends the games shows their last state: flags set, masks all false.
    assert truncated.all() and not terminated.any()
    assert not info["action_mask"].any()
    assert env.final_outcome(0).reason == "turn_cap"
    # The next step ignores the actions (any value) and starts new games.
    obs, rewards, terminated, truncated, info = env.step(np.array([599, -5]))
    assert not truncated.any() and info["action_mask"].sum() == 48
    assert (rewards == 0).all()


def test_same_step_autoreset_reports_final_observations():
    env = morris.VecEnv(3, rules={"turn_cap": 1}, autoreset_mode="same_step")
    obs, info = env.reset()
    start = obs.copy()
    obs, rewards, terminated, truncated, info = env.step(np.array([0, 1, 2]))
    assert truncated.all()
    assert info["_final_obs"].all()
    # The buffers already show new games; the finished ones are in final_obs.
    np.testing.assert_array_equal(obs, start)
    for i in range(3):
        assert info["final_obs"][i][1][i] == 1.0  # the mover's opponent (White) holds point i


def test_same_seed_same_games_any_thread_count():
    def run(threads):
        env = morris.VecEnv(64, seed=11, opening_plies=6, threads=threads)
        obs, info = env.reset()
        rng = np.random.default_rng(1)
        total = np.zeros((64, 2))
        for _ in range(300):
            obs, rewards, *_rest, info = env.step(random_actions(info, rng))
            total += rewards
        return obs.copy(), total

    a, b = run(1), run(2)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    env = morris.VecEnv(4, opening_plies=6)
    first = env.reset(seed=9)[0].copy()
    env.reset(seed=10)
    np.testing.assert_array_equal(env.reset(seed=9)[0], first)


def test_bad_actions_raise_clear_errors_and_step_nothing():
    env = morris.VecEnv(4)
    obs, info = env.reset()
    before = obs.copy()
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError):
        env.step(np.zeros((4, 1), dtype=np.int64))
    with pytest.raises(TypeError, match="integers"):
        env.step(np.zeros(4, dtype=np.float32))
    with pytest.raises(morris.IllegalActionError, match="env 2: action 600 is out of range"):
        env.step(np.array([0, 1, 600, 3]))
    with pytest.raises(morris.IllegalActionError, match="env 1: action -1"):
        env.step(np.array([0, -1, 2, 3]))
    env.step(np.array([0, 1, 2, 3]))
    with pytest.raises(morris.IllegalActionError, match="env 3: 'b6' is illegal: point b6 is not empty"):
        env.step(np.array([5, 6, 7, 3]))  # point 3 is taken in env 3
    assert env.game(0).num_plies == 1
    with pytest.raises(ValueError):
        morris.VecEnv(0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        morris.VecEnv(2, autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="illegal_action"):
        morris.VecEnv(2, illegal_action="ignore")
    with pytest.raises(ValueError, match="env 9"):
        env.game(9)
    assert before.shape == obs.shape


def test_flag_and_lose_modes():
    env = morris.VecEnv(2, illegal_action="flag")
    env.reset()
    env.step(np.array([0, 0]))
    obs, rewards, terminated, truncated, info = env.step(np.array([0, 1]))  # env 0: point 0 is taken
    assert info["illegal_action"].tolist() == [True, False]
    assert info["errors"][0][0] == 0 and "a7" in info["errors"][0][1]
    assert env.game(0).num_plies == 1 and env.game(1).num_plies == 2
    env = morris.VecEnv(2, illegal_action="lose", autoreset_mode="disabled")
    env.reset()
    env.step(np.array([0, 0]))
    obs, rewards, terminated, truncated, info = env.step(np.array([0, 700]))
    assert terminated.all()
    assert rewards.tolist() == [[1.0, -1.0], [1.0, -1.0]]  # Black played illegally in both
    assert env.outcome(1).reason == "illegal_action"


def test_sample_actions_is_uniform_over_legal_actions():
    mask = np.zeros((2, 600), dtype=bool)
    mask[0, [3, 10, 500]] = True
    rng = np.random.default_rng(0)
    counts = np.bincount(
        np.concatenate([morris.sample_actions(mask, rng)[:1] for _ in range(3000)]), minlength=600
    )
    assert set(np.flatnonzero(counts)) == {3, 10, 500}
    assert counts[[3, 10, 500]].min() > 850
    assert morris.sample_actions(mask, rng)[1] == 0
