"""Nine Men's Morris (or any game of the morris family, ``rules="six"``, ...) as a single-agent
Gymnasium environment against a fixed opponent.

``env = morris.gymnasium.MorrisEnv(opponent="minimax:depth=3")`` or
``gymnasium.make("morris/NineMensMorris-v0", opponent="random")`` after ``import morris.gymnasium``.

The agent plays one colour (``agent_color``: ``"white"``, ``"black"`` or ``"random"`` per
episode); every opponent move is played inside ``reset`` and ``step``, by any agent spec
``morris.Agent`` takes. Observations are dicts with ``"observation"`` (float32 ``[15, 24]``,
the agent's point of view) and ``"action_mask"`` (int8 ``[600]``) on the 24-point boards, and
``[15, points]`` / ``[num_actions]`` of ``morris.variant_info(rules)`` on others (``[15, 16]`` /
``[272]`` for six men's morris). The reward is +1/−1/0 at
the end of the game. An illegal action ends the episode as a loss (reward −1,
``info["illegal_action"] = True`` with the reason), so that unmasked random actions, as
Gymnasium's checker sends, are well defined.

``MorrisVectorEnv(num_envs, opponent=..., ...)`` is the same game as a
``gymnasium.vector.VectorEnv`` of ``num_envs`` games stepped in Rust (``morris.VecEnv``), with
next-step autoreset; ``gymnasium.make_vec("morris/NineMensMorris-v0", num_envs=N)`` builds it.
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium
import gymnasium.vector
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from morris import _morris
from morris._opening import play_random_opening
from morris.vec_env import VecEnv

__all__ = ["MorrisEnv", "MorrisVectorEnv"]

_COLORS = {"white": 0, "black": 1}


class MorrisEnv(gymnasium.Env):
    """``MorrisEnv(opponent="random", agent_color="white", rules=None, opening_plies=0,
    render_mode=None)``; see the module docstring."""

    metadata = {"render_modes": ["ansi"], "render_fps": 2}

    def __init__(
        self,
        opponent: str = "random",
        agent_color: str = "white",
        rules: Any = None,
        opening_plies: int = 0,
        render_mode: Optional[str] = None,
    ) -> None:
        if agent_color not in ("white", "black", "random"):
            raise ValueError(f"agent_color must be 'white', 'black' or 'random', got {agent_color!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if opening_plies < 0:
            raise ValueError(f"opening_plies must be 0 or more, got {opening_plies}")
        self.opponent_spec = opponent
        self._opponent = _morris.Agent(opponent, 0)  # a bad spec fails here, not at reset
        self._opponent.check_rules(rules)  # so does one that cannot play these rules
        self.agent_color = agent_color
        self.rules = rules
        self.opening_plies = opening_plies
        self.render_mode = render_mode
        self.game = _morris.Game(rules)
        self.num_actions = self.game.variant_info["num_actions"]
        self.observation_space = _observation_space(self.game.variant_info)
        self.action_space = spaces.Discrete(self.num_actions)
        self.player = 0
        self._done = True  # until the first reset

    def _obs(self) -> dict:
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if not self.game.is_terminal:
            mask[self.game.legal_actions()] = 1
        return {"observation": self.game.observation(), "action_mask": mask}

    def _play_opponent(self) -> None:
        while not self.game.is_terminal and self.game.current_player != self.player:
            action = self._opponent.choose(self.game)
            self.game.apply(int(action))

    def _reward(self) -> float:
        return float(self.game.outcome.rewards[self.player])

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple:
        super().reset(seed=seed)
        if seed is not None:
            # The opponent's own random choices follow the episode seed too.
            self._opponent = _morris.Agent(self.opponent_spec, int(self.np_random.integers(2**63)))
        else:
            self._opponent.reset()
        self.player = (
            int(self.np_random.integers(2)) if self.agent_color == "random" else _COLORS[self.agent_color]
        )
        while True:
            self.game = _morris.Game(self.rules)
            play_random_opening(self.game, self.opening_plies, self.np_random)
            self._play_opponent()
            if not self.game.is_terminal:
                break
        self._done = False
        return self._obs(), {"player": self.player}

    def step(self, action: Any) -> tuple:
        if self._done:
            raise RuntimeError("step() after the end of an episode (or before the first): call reset()")
        try:
            self.game.apply(int(action))
        except _morris.IllegalActionError as e:
            self._done = True
            return self._obs(), -1.0, True, False, {"illegal_action": True, "reason": str(e)}
        self._play_opponent()
        outcome = self.game.outcome
        self._done = outcome.is_terminal
        info = {"outcome": str(outcome)} if outcome.is_terminal else {}
        terminated = outcome.is_terminal and not outcome.is_truncation
        truncated = outcome.is_truncation
        return self._obs(), self._reward(), terminated, truncated, info

    def render(self) -> Optional[str]:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass render_mode='ansi'")
            return None
        return str(self.game)


def _observation_space(info: dict) -> spaces.Dict:
    """The observation space of a board (``morris.variant_info``)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, shape=tuple(info["observation_shape"]), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(info["num_actions"],), dtype=np.int8),
        }
    )


class MorrisVectorEnv(gymnasium.vector.VectorEnv):
    """``MorrisVectorEnv(num_envs, opponent="random", agent_color="white", rules=None,
    opening_plies=0, threads=1, copy=True)``: ``MorrisEnv`` as a Gymnasium vector env of
    ``num_envs`` games stepped together in Rust.

    Each sub-env is a ``MorrisEnv``: the agent plays ``agent_color`` (``"random"``: drawn per
    episode) against ``opponent``, any spec ``morris.Agent`` takes, whose replies are played
    inside ``reset`` and ``step`` (in Rust: a random opponent draws with ``VecEnv.sample_legal``,
    others answer through ``VecEnv.agent_actions`` with each game's whole history). Spaces are
    the single env's, batched by ``gymnasium.vector.utils.batch_space``: observations a dict of
    float32 ``[N, 15, 24]`` and int8 ``[N, 600]`` masks, actions ``MultiDiscrete([600] * N)``
    on the 24-point boards (the board's sizes on others, ``morris.variant_info``);
    rewards float32 ``[N]`` (±1 or 0 when a game ends), ``info["player"]`` the agent's colour
    per env (0 White, 1 Black).

    * Autoreset: ``AutoresetMode.NEXT_STEP`` (``metadata["autoreset_mode"]``): the step after an
      episode ends ignores that env's action and returns the first observation of a new episode
      with reward 0.
    * An illegal or out-of-range action loses that episode (reward −1,
      ``info["illegal_action"]`` set for it), as in ``MorrisEnv``. Actions that are not an
      integer array ``[N]`` raise ``TypeError`` / ``ValueError``.
    * ``copy=True`` returns new arrays each step (as Gymnasium's ``SyncVectorEnv``);
      ``copy=False`` returns read-only views of the env's buffers, overwritten by the next step.
    * ``reset(seed=s)`` (an int) makes the episodes reproducible: game ``i`` is seeded with
      ``s + i``; colours and the opponent's seed come from ``np_random``.
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        opponent: str = "random",
        agent_color: str = "white",
        rules: Any = None,
        opening_plies: int = 0,
        threads: int = 1,
        copy: bool = True,
    ) -> None:
        if agent_color not in ("white", "black", "random"):
            raise ValueError(f"agent_color must be 'white', 'black' or 'random', got {agent_color!r}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int of at least 1, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.opponent_spec = opponent
        self._opponent = _morris.Agent(opponent, 0)  # a bad spec fails here
        self._opponent.check_rules(rules)  # so does one that cannot play these rules
        self._random_opponent = opponent == "random"
        self.agent_color = agent_color
        self.copy = copy
        self._env = VecEnv(
            self.num_envs,
            rules=rules,
            opening_plies=opening_plies,
            threads=threads,
            illegal_action="lose",
            autoreset_mode="next_step",
        )
        info = self._env.variant_info
        self.single_observation_space = _observation_space(info)
        self.single_action_space = spaces.Discrete(info["num_actions"])
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.players = np.zeros(self.num_envs, dtype=np.uint8)
        self._rows = np.arange(self.num_envs)
        self._done = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    def _colors(self, which: np.ndarray) -> None:
        if self.agent_color == "random":
            self.players[which] = self.np_random.integers(2, size=int(which.sum()), dtype=np.uint8)
        else:
            self.players[which] = _COLORS[self.agent_color]

    def _play_opponent(
        self, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, new: np.ndarray
    ) -> None:
        """Plays the opponent wherever it is to move, until the agent is to move or the game is
        over, adding to the step's reward and flags. A new episode (``new``) that ends before
        the agent's first move is started again (a ``RuntimeError`` if that keeps happening:
        rules under which the opponent always ends the game first)."""
        env = self._env
        restarts = 0
        while True:
            live = env.packed_masks.any(axis=1)
            theirs = live & (env.current_player != self.players)
            if not theirs.any():
                return
            if self._random_opponent:
                actions = env.sample_legal()
            else:
                actions = env.agent_actions(self._opponent, theirs)
            env._step_where(actions, theirs)
            ended = theirs & (env.terminated | env.truncated)
            reward += np.where(theirs, env.rewards[self._rows, self.players], 0.0).astype(np.float32)
            terminated |= theirs & env.terminated
            truncated |= theirs & env.truncated
            again = ended & new
            if again.any():
                restarts += 1
                if restarts > 100:
                    raise RuntimeError(
                        "the opponent ended 100 new games in a row before the agent's first move; "
                        f"rules {env.rules} leave the agent no move"
                    )
                env._env.restart(again)
                reward[again] = 0.0
                terminated[again] = False
                truncated[again] = False

    def _obs(self) -> dict:
        obs = {"observation": self._env.observations, "action_mask": self._env.masks.view(np.int8)}
        return {k: v.copy() for k, v in obs.items()} if self.copy else obs

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise TypeError(f"seed must be an int or None (one seed for all envs), got {seed!r}")
        super().reset(seed=seed)
        if seed is not None:
            self._opponent = _morris.Agent(self.opponent_spec, int(self.np_random.integers(2**63)))
            self._env.reset(seed=int(seed))
        else:
            self._opponent.reset()
            self._env.reset(seed=int(self.np_random.integers(2**63)))
        every = np.ones(self.num_envs, dtype=bool)
        self._colors(every)
        zeros = np.zeros(self.num_envs, dtype=np.float32)
        self._play_opponent(zeros, np.zeros_like(every), np.zeros_like(every), every)
        self._done[:] = False
        self._started = True
        return self._obs(), {"player": self.players.copy()}

    def step(self, actions: Any) -> tuple:
        if not self._started:
            raise RuntimeError("step() before reset(): call reset() first")
        env = self._env
        new = self._done.copy()
        env.step(actions)  # finished envs start new games, ignoring their action
        reward = np.where(new, 0.0, env.rewards[self._rows, self.players]).astype(np.float32)
        terminated = env.terminated & ~new
        truncated = env.truncated & ~new
        illegal = np.zeros(self.num_envs, dtype=bool)
        for i in np.flatnonzero(terminated):
            illegal[i] = env.outcome(int(i)).reason == "illegal_action"
        if new.any():
            self._colors(new)
        self._play_opponent(reward, terminated, truncated, new)
        self._done = terminated | truncated
        info: dict = {"player": self.players.copy()}
        if illegal.any():
            info["illegal_action"] = illegal
            info["_illegal_action"] = illegal.copy()
        return self._obs(), reward, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""


gymnasium.register(
    id="morris/NineMensMorris-v0",
    entry_point="morris.gymnasium:MorrisEnv",
    vector_entry_point="morris.gymnasium:MorrisVectorEnv",
)
