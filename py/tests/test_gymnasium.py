"""The single-agent Gymnasium environment: Gymnasium's env checker, opponents and illegal actions."""

import gymnasium
import morris  # noqa: E402
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env  # noqa: E402
from morris.gymnasium import MorrisEnv  # noqa: E402


@pytest.mark.parametrize("opponent", ["random", "minimax:depth=1"])
@pytest.mark.parametrize("color", ["white", "black", "random"])
def test_check_env_passes(opponent, color):
    check_env(MorrisEnv(opponent=opponent, agent_color=color), skip_render_check=True)


def test_make_and_play_against_minimax():
    env = gymnasium.make("morris/NineMensMorris-v0", opponent="minimax:depth=2", agent_color="black")
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=1)
    assert info["player"] == 1
    done, steps, reward = False, 0, 0.0
    while not done:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        steps += 1
    assert reward in (-1.0, 0.0, 1.0) and "outcome" in info
    env.close()


def test_illegal_action_loses_and_bad_arguments_raise():
    env = MorrisEnv(opponent="random", render_mode="ansi")
    obs, _ = env.reset(seed=0)
    occupied = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(occupied)
    assert terminated and reward == -1.0 and info["illegal_action"]
    assert isinstance(env.render(), str)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(morris.SpecError):
        MorrisEnv(opponent="grandmaster")
    with pytest.raises(ValueError, match="agent_color"):
        MorrisEnv(agent_color="red")


def test_same_seed_same_episode():
    def episode(seed):
        env = MorrisEnv(opponent="random", agent_color="random", opening_plies=4)
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        trace = []
        done = False
        while not done:
            action = int(env.action_space.sample(obs["action_mask"]))
            obs, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            trace.append((action, reward))
        return env.game.record(), trace

    assert episode(3) == episode(3)
