"""Nine Men's Morris (or any game of the morris family, ``rules="six"``, ...) as a PettingZoo AEC
environment, in the style of ``pettingzoo.classic``.

``env = morris.pettingzoo.env(render_mode="ansi")``; agents ``player_0`` (White) and
``player_1`` (Black). Observations are dicts with ``"observation"`` (float32 ``[15, 24]``, from
the observing agent's point of view) and ``"action_mask"`` (int8 ``[600]``, all zero for the
agent not to move) on the 24-point boards; ``[15, points]`` and ``[num_actions]`` of
``morris.variant_info(rules)`` on others (``[15, 16]`` and ``[272]`` for six men's morris).
After a mill the same agent moves again, to remove a piece.

The rewards are +1/−1 (0 for a draw) on the step that ends the game; a game cut off by the turn
cap is truncated, every other end terminated. An illegal action raises
``morris.IllegalActionError`` and changes nothing.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from morris import _morris
from morris._opening import play_random_opening

__all__ = ["env", "raw_env"]

# Planes swapped to show the position from the side of the player not to move: own and
# opponent pieces (0, 1), pieces in hand (3, 4), phases (6-8, 9-11).
_SWAP = np.array([1, 0, 2, 4, 3, 5, 9, 10, 11, 6, 7, 8, 12, 13, 14])


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's standard wrappers (order enforcement, bounds on
    actions); keyword arguments as ``raw_env``."""
    e = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv, EzPickle):
    """The AEC environment without wrappers.

    ``raw_env(rules=None, opening_plies=0, render_mode=None)``: ``rules`` as ``morris.Game``;
    ``opening_plies`` uniformly random plies at the start of each game, drawn from the seed
    given to ``reset``.
    """

    metadata = {
        "render_modes": ["ansi"],
        "name": "nine_mens_morris_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, rules: Any = None, opening_plies: int = 0, render_mode: Optional[str] = None) -> None:
        EzPickle.__init__(self, rules, opening_plies, render_mode)
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if opening_plies < 0:
            raise ValueError(f"opening_plies must be 0 or more, got {opening_plies}")
        self._rules = rules
        self._opening_plies = opening_plies
        self.render_mode = render_mode
        self.game = _morris.Game(rules)
        self.possible_agents = ["player_0", "player_1"]
        self.agents = self.possible_agents[:]
        info = self.game.variant_info
        self._num_actions = info["num_actions"]
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, shape=tuple(info["observation_shape"]), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self._num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self._num_actions) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._reset_state()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _reset_state(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current_player]

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.game = _morris.Game(self._rules)
        play_random_opening(self.game, self._opening_plies, self._rng)
        if self.game.is_terminal:  # an opening that ended the game: start from the empty board
            self.game = _morris.Game(self._rules)
        self._reset_state()

    def observe(self, agent: str) -> dict:
        obs = self.game.observation()
        if self.possible_agents.index(agent) != self.game.current_player:
            obs = obs[_SWAP]
        mask = np.zeros(self._num_actions, dtype=np.int8)
        if agent == self.agent_selection and not self.game.is_terminal:
            mask[self.game.legal_actions()] = 1
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Optional[int]) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        self.game.apply(int(action))
        self._cumulative_rewards[agent] = 0
        outcome = self.game.outcome
        if outcome.is_terminal:
            white, black = outcome.rewards
            self.rewards = {"player_0": white, "player_1": black}
            done = {a: True for a in self.agents}
            if outcome.is_truncation:
                self.truncations = done
            else:
                self.terminations = done
            for a in self.agents:
                self.infos[a] = {"outcome": str(outcome), "reason": outcome.reason}
        else:
            self.rewards = {a: 0 for a in self.agents}
            self.agent_selection = self.possible_agents[self.game.current_player]
        self._accumulate_rewards()

    def render(self) -> Optional[str]:
        if self.render_mode is None:
            from gymnasium import logger

            logger.warn("render() was called without a render_mode; pass render_mode='ansi'")
            return None
        return str(self.game)

    def close(self) -> None:
        pass
