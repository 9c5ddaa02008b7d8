"""Throughput of the morris package from Python: random masked play with VecEnv (actions sampled
in NumPy from the returned masks), a single Game, and the PettingZoo AEC loop.

    python py/bench.py [--seconds 3] [--envs 4096]

"env steps/s" counts one action in one game. For VecEnv two figures are printed: the step alone
(actions drawn beforehand, as the Rust benchmark `cargo bench -p morris-env -- vec_env_step`
measures it) and the whole loop with the NumPy sampling. With `open_spiel` installed, OpenSpiel's
`nine_mens_morris` played the same way as the single Game is measured too, for comparison.
"""

from __future__ import annotations

import argparse
import platform
import time

import morris
import numpy as np


def vec_env(n: int, threads: int, seconds: float) -> tuple[float, float]:
    env = morris.VecEnv(n, threads=threads, autoreset_mode="same_step", seed=1)
    _, info = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):  # warm up
        env.step(morris.sample_actions(info["action_mask"], rng))
    step_time, loop_time, steps = 0.0, 0.0, 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        actions = morris.sample_actions(info["action_mask"], rng)
        t1 = time.perf_counter()
        env.step(actions)
        t2 = time.perf_counter()
        step_time += t2 - t1
        loop_time += t2 - t0
        steps += 1
    return n * steps / step_time, n * steps / loop_time


def single_game(seconds: float) -> float:
    rng = np.random.default_rng(0)
    game = morris.Game()
    steps = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(1000):
            if game.is_terminal:
                game = morris.Game()
            legal = game.legal_actions()
            game.apply(int(legal[rng.integers(len(legal))]))
        steps += 1000
    return steps / seconds


def pettingzoo_loop(seconds: float) -> float:
    import morris.pettingzoo as mpz

    env = mpz.env()
    rng = np.random.default_rng(0)
    steps = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while time.perf_counter() < end:
        env.reset()
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
    return steps / (time.perf_counter() - t0)


def openspiel_loop(seconds: float) -> float:
    """OpenSpiel's `nine_mens_morris` played at random from Python (`pip install open_spiel`),
    the figure the issue compares with: legal actions, a NumPy choice, apply."""
    import pyspiel

    game = pyspiel.load_game("nine_mens_morris")
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    steps = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while time.perf_counter() < end:
        for _ in range(1000):
            if state.is_terminal():
                state = game.new_initial_state()
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
        steps += 1000
    return steps / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--envs", type=int, default=4096, help="games in the VecEnv")
    args = parser.parse_args()
    print(
        f"morris {morris.__version__}, Python {platform.python_version()}, "
        f"NumPy {np.__version__}, {platform.machine()}"
    )
    for threads in (1, 2):
        step, loop = vec_env(args.envs, threads, args.seconds)
        print(
            f"VecEnv {args.envs} envs, {threads} thread(s): step {step / 1e6:.2f} M env-steps/s, "
            f"with NumPy sampling {loop / 1e6:.2f} M env-steps/s"
        )
    print(f"Game, one game in a Python loop: {single_game(args.seconds) / 1e3:.0f} k steps/s")
    try:
        print(f"PettingZoo AEC loop: {pettingzoo_loop(args.seconds) / 1e3:.0f} k steps/s")
    except ImportError:
        print("PettingZoo AEC loop: not measured (pip install pettingzoo gymnasium)")
    try:
        print(
            "OpenSpiel nine_mens_morris, one game in a Python loop: "
            f"{openspiel_loop(args.seconds) / 1e3:.0f} k steps/s"
        )
    except ImportError:
        print("OpenSpiel: not measured (pip install open_spiel to compare)")


if __name__ == "__main__":
    main()
