"""Differential test: OpenSpiel's recorded games (env/tests/data, 300 games) replayed through
morris.Game and morris.VecEnv give OpenSpiel's legal sets, game ends and returns at every ply,
as the Rust conformance test checks them."""

import morris
import numpy as np


def test_game_replays_openspiel_games_exactly(conformance_games):
    plies = 0
    for n, rec in enumerate(conformance_games):
        g = morris.Game("openspiel")
        for ply, a in enumerate(rec["actions"]):
            assert g.legal_actions().tolist() == rec["legal"][ply], f"game {n}, ply {ply}"
            assert np.flatnonzero(g.legal_mask()).tolist() == rec["legal"][ply]
            assert not g.is_terminal
            g.apply(a)
            plies += 1
        assert rec["legal"][-1] == [] and g.legal_actions().size == 0
        assert g.is_terminal
        assert list(g.rewards) == rec["returns"], f"game {n}: {g.outcome}"
    assert len(conformance_games) == 300 and plies > 10_000


def test_vec_env_replays_openspiel_games_in_lockstep(conformance_games):
    games = conformance_games
    n = len(games)
    env = morris.VecEnv(n, rules="openspiel", autoreset_mode="disabled", threads=2)
    obs, info = env.reset()
    longest = max(len(g["actions"]) for g in games)
    done = np.zeros(n, dtype=bool)
    returns = np.zeros((n, 2), dtype=np.float32)
    for ply in range(longest + 1):
        for i, rec in enumerate(games):
            if ply < len(rec["actions"]):
                assert np.flatnonzero(info["action_mask"][i]).tolist() == rec["legal"][ply], (
                    f"game {i}, ply {ply}"
                )
                # The observation equals that of a single Game at the same ply.
                if ply % 17 == 0:
                    np.testing.assert_array_equal(
                        obs[i], morris.Game("openspiel", moves=rec["actions"][:ply]).observation()
                    )
            else:
                assert not info["action_mask"][i].any()
        if ply == longest:
            break
        actions = np.array([rec["actions"][ply] if ply < len(rec["actions"]) else 0 for rec in games])
        obs, rewards, terminated, truncated, info = env.step(actions)
        ended = terminated | truncated
        for i, rec in enumerate(games):
            assert ended[i] == (ply + 1 == len(rec["actions"])) or done[i], f"game {i} ends at ply {ply + 1}"
        returns[ended & ~done] = rewards[ended & ~done]
        done |= ended
    assert done.all()
    np.testing.assert_array_equal(returns, np.array([g["returns"] for g in games], dtype=np.float32))
