"""Nine Men's Morris from Python: the lab's exact rules, a vectorized environment with NumPy
arrays, PettingZoo and Gymnasium environments, its agents and matches, and its self-play data.

Everything runs in Rust (the ``morris._morris`` extension); arrays are NumPy.

Quick tour::

    import numpy as np
    import morris

    game = morris.Game()                      # standard rules
    game.play("d6"); game.apply(int(game.legal_actions()[0]))
    print(game)                               # the board

    env = morris.VecEnv(1024, seed=0)         # 1024 games stepped in Rust
    obs, info = env.reset()
    actions = morris.sample_actions(info["action_mask"], np.random.default_rng(0))
    obs, rewards, terminated, truncated, info = env.step(actions)

    morris.train("configs/tiny.toml", "runs/tiny")  # a training run, as the train binary

Submodules: ``morris.pettingzoo`` (AEC env), ``morris.gymnasium`` (single-agent env against a
fixed opponent); they need the ``pettingzoo`` and ``gymnasium`` packages.
"""

from morris._morris import (
    NUM_ACTIONS,
    NUM_PLANES,
    NUM_POINTS,
    NUM_SYMMETRIES,
    OBSERVATION_VERSION,
    RULES_PRESETS,
    VARIANTS,
    Agent,
    FileFormatError,
    Game,
    IllegalActionError,
    Learner,
    NotationError,
    Outcome,
    SelfPlayWorker,
    SpecError,
    build_tablebase,
    inverse_symmetry,
    point_names,
    transform_action,
    transform_mask,
    transform_observation,
    transform_policy,
    variant_info,
)
from morris.data import read_shards
from morris.match import MatchResult, play_match
from morris.model import Model, load_model
from morris.training import resolve_config, selfplay_worker, train
from morris.vec_env import VecEnv, sample_actions, unpack_masks

__all__ = [
    "NUM_ACTIONS",
    "NUM_PLANES",
    "NUM_POINTS",
    "NUM_SYMMETRIES",
    "OBSERVATION_VERSION",
    "RULES_PRESETS",
    "VARIANTS",
    "Agent",
    "FileFormatError",
    "Game",
    "IllegalActionError",
    "Learner",
    "MatchResult",
    "Model",
    "NotationError",
    "Outcome",
    "SelfPlayWorker",
    "SpecError",
    "VecEnv",
    "build_tablebase",
    "inverse_symmetry",
    "load_model",
    "play_match",
    "point_names",
    "read_shards",
    "resolve_config",
    "sample_actions",
    "selfplay_worker",
    "train",
    "transform_action",
    "transform_mask",
    "transform_observation",
    "transform_policy",
    "unpack_masks",
    "variant_info",
]


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("morris-lab")
    except Exception:  # not installed as a distribution (e.g. a source checkout on sys.path)
        return "unknown"


__version__ = _version()
