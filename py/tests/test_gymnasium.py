"""The single-agent Gymnasium environment: Gymnasium's env checker, opponents and illegal actions."""

import gymnasium
import morris  # noqa: E402
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env  # noqa: E402
from morris.gymnasium import MorrisEnv, MorrisVectorEnv  # noqa: E402


@pytest.mark.parametrize("opponent", ["random", "minimax:depth=1"])
@pytest.mark.parametrize("color", ["white", "black", "random"])
def test_check_env_passes(opponent, color):
    check_env(MorrisEnv(opponent=opponent, agent_color=color), skip_render_check=True)


def test_six_mens_morris_has_its_boards_spaces():
    env = MorrisEnv(opponent="minimax:depth=1", rules="six")
    assert env.observation_space["observation"].shape == (15, 16) and env.action_space.n == 272
    check_env(env, skip_render_check=True)
    vec = MorrisVectorEnv(4, rules="six")
    assert vec.single_action_space.n == 272
    obs, _ = vec.reset(seed=2)
    assert obs["observation"].shape == (4, 15, 16) and obs["action_mask"].shape == (4, 272)
    assert obs in vec.observation_space


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


# The vector env: Gymnasium 1.x ships no checker for vector envs, so these run its checker's own
# parts on one (space checks, check_obs, data_equivalence, data_shares_objects), its vector
# wrappers, make_vec, and a comparison with its SyncVectorEnv of the single env.
from gymnasium.utils.env_checker import check_action_space, check_observation_space, data_equivalence  # noqa: E402
from gymnasium.utils.passive_env_checker import check_obs, data_shares_objects  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402


def run_vector(env, seed, steps):
    """Reset with `seed`, then `steps` masked random actions; every return value copied."""
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = [(obs, info)]
    for _ in range(steps):
        mask = obs["action_mask"].astype(bool)
        actions = morris.sample_actions(mask, rng)
        obs, reward, terminated, truncated, info = env.step(actions)
        trace.append((obs, reward, terminated, truncated, info))
    return trace


@pytest.mark.parametrize("opponent", ["random", "minimax:depth=1"])
@pytest.mark.parametrize("color", ["white", "black", "random"])
def test_vector_env_passes_gymnasiums_checks(opponent, color):
    env = MorrisVectorEnv(5, opponent=opponent, agent_color=color, opening_plies=2)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    check_observation_space(env.single_observation_space)
    check_action_space(env.single_action_space)
    assert env.observation_space == batch_space(env.single_observation_space, 5)
    assert env.action_space == batch_space(env.single_action_space, 5)
    trace = run_vector(env, 123, 40)
    check_obs(trace[0][0], env.observation_space, "reset")
    for obs, reward, terminated, truncated, _info in trace[1:]:
        check_obs(obs, env.observation_space, "step")
        assert reward.shape == (5,) and reward.dtype == np.float32
        assert terminated.dtype == np.bool_ and truncated.shape == (5,)
        assert set(np.unique(reward)) <= {-1.0, 0.0, 1.0}
    # Determinism (as check_reset_seed_determinism and check_step_determinism do for one env).
    again = run_vector(MorrisVectorEnv(5, opponent=opponent, agent_color=color, opening_plies=2), 123, 40)
    assert data_equivalence(trace, again, exact=True)
    assert not data_equivalence(trace, run_vector(env, 124, 40))
    # New data on every call (as check_returned_data_not_reused does).
    for a, b in zip(trace, trace[1:]):
        assert not data_shares_objects(a[0], b[0]) and not data_shares_objects(a[-1], b[-1])
    env.close()


def test_vector_env_autoresets_on_the_next_step_as_gymnasiums_sync_vector_env():
    ours = MorrisVectorEnv(3, agent_color="black", rules={"turn_cap": 2})
    theirs = gymnasium.make_vec(
        "morris/NineMensMorris-v0",
        num_envs=3,
        vectorization_mode="sync",
        agent_color="black",
        rules={"turn_cap": 2},
    )
    assert theirs.observation_space == ours.observation_space
    assert theirs.action_space == ours.action_space
    assert theirs.metadata["autoreset_mode"] == ours.metadata["autoreset_mode"]
    for env in (ours, theirs):
        obs, info = env.reset(seed=0)
        assert (obs["observation"][:, 1].sum(axis=1) == 1).all()  # White (the opponent) has placed
        first = obs["action_mask"].astype(bool)
        obs, reward, terminated, truncated, _ = env.step(first.argmax(axis=1))
        assert truncated.all() and not terminated.any() and (reward == 0).all()  # the turn cap
        obs, reward, terminated, truncated, _ = env.step(np.full(3, 599))  # ignored: new episodes
        assert not (terminated | truncated).any() and (reward == 0).all()
        assert (obs["observation"][:, 1].sum(axis=1) == 1).all() and obs["action_mask"].sum() == 3 * 23
        env.close()


def test_vector_env_wrappers_and_make_vec():
    env = gymnasium.make_vec("morris/NineMensMorris-v0", num_envs=4, opponent="random")
    assert isinstance(env.unwrapped, MorrisVectorEnv) and env.num_envs == 4
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(env)
    env = gymnasium.wrappers.vector.DictInfoToList(env)
    trace = run_vector(env, 1, 400)
    infos = [step[-1] for step in trace[1:]]
    episodes = [i["episode"] for info in infos for i in info if "episode" in i]
    assert len(episodes) > 0 and all(e["r"] in (-1.0, 0.0, 1.0) for e in episodes)
    assert all(len(info) == 4 for info in infos)


def test_vector_env_illegal_actions_lose_and_bad_input_raises():
    env = MorrisVectorEnv(3, copy=False)
    obs, info = env.reset(seed=2)
    assert not obs["observation"].flags.writeable  # copy=False: the env's own buffers
    actions = obs["action_mask"].argmax(axis=1)
    actions[1] = 24 + 24 * 0 + 1  # a slide in the placement phase
    actions[2] = 600  # no action at all
    obs, reward, terminated, truncated, info = env.step(actions)
    assert reward.tolist() == [0.0, -1.0, -1.0] and terminated.tolist() == [False, True, True]
    assert info["illegal_action"].tolist() == [False, True, True]
    with pytest.raises(TypeError, match="integers"):
        env.step(np.zeros(3, dtype=np.float32))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed=[1, 2, 3])
    with pytest.raises(RuntimeError, match="reset"):
        MorrisVectorEnv(2).step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="agent_color"):
        MorrisVectorEnv(2, agent_color="red")
    with pytest.raises(ValueError, match="num_envs"):
        MorrisVectorEnv(0)
    with pytest.raises(morris.SpecError):
        MorrisVectorEnv(2, opponent="grandmaster")


def test_vector_env_fails_clearly_when_the_agent_never_gets_a_move():
    env = MorrisVectorEnv(2, agent_color="black", rules={"turn_cap": 1})
    with pytest.raises(RuntimeError, match="no move"):
        env.reset(seed=0)
