"""The PettingZoo AEC environment: PettingZoo's own API and seed tests, and a full game."""

import morris  # noqa: E402
import morris.pettingzoo as mpz  # noqa: E402
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test  # noqa: E402


def test_api_test_passes():
    api_test(mpz.env(), num_cycles=200, verbose_progress=False)
    api_test(mpz.env(opening_plies=6, render_mode="ansi"), num_cycles=200)


def test_six_mens_morris_passes_the_api_test():
    env = mpz.env(rules="six")
    assert env.observation_space("player_0")["observation"].shape == (15, 16)
    assert env.action_space("player_1").n == 272
    api_test(env, num_cycles=200, verbose_progress=False)


def test_seed_test_passes():
    seed_test(lambda: mpz.env(opening_plies=6), num_cycles=200)


def test_random_games_end_with_opposite_rewards():
    env = mpz.env(render_mode="ansi")
    rng = np.random.default_rng(0)
    for episode in range(5):
        env.reset(seed=episode)
        total = {a: 0.0 for a in env.possible_agents}
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            total[agent] += reward
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                assert len(legal) > 0
                action = int(rng.choice(legal))
            env.step(action)
        assert total["player_0"] == -total["player_1"]
        assert isinstance(env.render(), str)


def test_observation_is_from_the_observers_side():
    env = mpz.raw_env()
    env.reset()
    env.step(env.game.notation_to_action("d6"))  # White places; Black to move
    black = env.observe("player_1")
    white = env.observe("player_0")
    assert black["observation"][1].sum() == 1  # Black sees White's piece as the opponent's
    assert white["observation"][0].sum() == 1  # White sees it as its own
    assert white["action_mask"].sum() == 0 and black["action_mask"].sum() == 23


def test_illegal_action_raises_and_changes_nothing():
    env = mpz.raw_env()
    env.reset()
    env.step(0)
    with pytest.raises(morris.IllegalActionError):
        env.step(0)
    assert env.game.num_plies == 1 and env.agent_selection == "player_1"
