"""Nine Men's Morris as a single-agent Gymnasium environment against a fixed opponent.

``env = morris.gymnasium.MorrisEnv(opponent="minimax:depth=3")`` or
``gymnasium.make("morris/NineMensMorris-v0", opponent="random")`` after ``import morris.gymnasium``.

The agent plays one colour (``agent_color``: ``"white"``, ``"black"`` or ``"random"`` per
episode); every opponent move is played inside ``reset`` and ``step``, by any agent spec
``morris.Agent`` takes. Observations are dicts with ``"observation"`` (float32 ``[15, 24]``,
the agent's point of view) and ``"action_mask"`` (int8 ``[600]``). The reward is +1/−1/0 at
the end of the game. An illegal action ends the episode as a loss (reward −1,
``info["illegal_action"] = True`` with the reason), so that unmasked random actions, as
Gymnasium's checker sends, are well defined.
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium
import numpy as np
from gymnasium import spaces

from morris import _morris
from morris._opening import play_random_opening

__all__ = ["MorrisEnv"]

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
        self.agent_color = agent_color
        self.rules = rules
        self.opening_plies = opening_plies
        self.render_mode = render_mode
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, shape=(15, 24), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(600,), dtype=np.int8),
            }
        )
        self.action_space = spaces.Discrete(600)
        self.game = _morris.Game(rules)
        self.player = 0
        self._done = True  # until the first reset

    def _obs(self) -> dict:
        mask = np.zeros(600, dtype=np.int8)
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


gymnasium.register(id="morris/NineMensMorris-v0", entry_point="morris.gymnasium:MorrisEnv")
