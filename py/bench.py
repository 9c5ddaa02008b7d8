"""Throughput of the morris package from Python, side by side with the Rust VecEnv benchmark and
OpenSpiel's Python loop, in one run.

    python py/bench.py [--seconds 1] [--rounds 5] [--envs 4096] [--no-cargo]

"env-steps/s" counts one action in one game. On 1 and 2 threads it measures:

* Rust `VecEnv.step` as `cargo bench -p morris-env --bench env -- vec_env_step` times it
  (criterion, run from here unless --no-cargo; cargo must be on PATH), and the same loop timed
  inside the extension (`morris._morris.time_vec_env`, the build Python runs);
* Python `VecEnv.step` alone, actions drawn beforehand outside the timed region (as the Rust
  benchmark does), with packed masks (`masks="packed"`) and with the dense `[N, 600]` masks;
* the random-play loop with the actions drawn in Rust: `step(None)`, and `step(sample_legal())`;
* the random-play loop with the actions drawn in NumPy (`sample_actions` on the dense masks).

Every figure but criterion's is the median of `--rounds` rounds of `--seconds` each, the rounds
taking every figure in turn, so that a disturbance of the machine lands in one round rather than
in one figure. Then one game in a Python loop (`morris.Game`), the PettingZoo AEC loop, and OpenSpiel's
`nine_mens_morris` played the same way as the single Game (`pip install open_spiel`), and the
ratios against the goals of issue 24: the Python step at >= 60% of the Rust benchmark and the
random-play loop at >= 10x OpenSpiel's Python loop.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable, Optional

import morris
import numpy as np
from morris import _morris

REPO = Path(__file__).resolve().parents[1]


def timed_steps(
    step: Callable[[], None], n: int, seconds: float, setup: Optional[Callable[[], None]] = None
) -> float:
    """env-steps/s of `step` (each stepping `n` envs), timing only `step`; `setup` runs before
    each step outside the timed region."""
    for _ in range(20):  # warm up
        if setup:
            setup()
        step()
    timed, steps = 0.0, 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        if setup:
            setup()
        t = time.perf_counter()
        step()
        timed += time.perf_counter() - t
        steps += 1
    return n * steps / timed


def python_vec_env(n: int, threads: int, seconds: float) -> dict[str, float]:
    out = {}
    for masks in ("packed", "dense"):
        env = morris.VecEnv(n, threads=threads, autoreset_mode="same_step", seed=1, masks=masks)
        env.reset()
        buf = np.zeros(n, dtype=np.int64)
        out[f"step_{masks}"] = timed_steps(
            lambda env=env, buf=buf: env.step(buf),
            n,
            seconds,
            lambda env=env, buf=buf: env.sample_legal(out=buf),
        )
    env = morris.VecEnv(n, threads=threads, autoreset_mode="same_step", seed=1, masks="packed")
    env.reset()
    out["loop_step_none"] = timed_steps(lambda: env.step(None), n, seconds)
    buf = np.zeros(n, dtype=np.int64)
    out["loop_sample_legal"] = timed_steps(lambda: env.step(env.sample_legal(out=buf)), n, seconds)
    env = morris.VecEnv(n, threads=threads, autoreset_mode="same_step", seed=1)
    _, info = env.reset()
    rng = np.random.default_rng(0)
    out["loop_numpy"] = timed_steps(
        lambda: env.step(morris.sample_actions(info["action_mask"], rng)), n, seconds
    )
    return out


def criterion_vec_env(seconds: float) -> tuple[dict[int, float], str]:
    """The Rust benchmark's `vec_env_step/n4096_threads{1,2}` throughputs from criterion, or an
    empty dict and the reason."""
    cargo = shutil.which("cargo")
    if cargo is None:
        return {}, "cargo not on PATH"
    command = [
        cargo,
        "bench",
        "-p",
        "morris-env",
        "--bench",
        "env",
        "--",
        r"vec_env_step/n4096_threads[12]$",
        "--warm-up-time",
        "1",
        "--measurement-time",
        str(max(1, round(seconds))),
    ]
    run = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env={**os.environ})
    if run.returncode != 0:
        return {}, f"cargo bench failed: {run.stderr.strip().splitlines()[-1:]}"
    units = {"Kelem/s": 1e3, "Melem/s": 1e6, "Gelem/s": 1e9, "elem/s": 1.0}
    found = {}
    pattern = r"n4096_threads(\d)\s+time:.*?\n\s+thrpt:\s+\[[^\]]*?([\d.]+) (\w+/s) ([\d.]+) (\w+/s)"
    for m in re.finditer(pattern, run.stdout, re.S):
        found[int(m.group(1))] = float(m.group(4)) * units[m.group(5)]
    return found, "" if found else "no throughput in cargo bench's output"


def single_game(seconds: float) -> float:
    rng = np.random.default_rng(0)
    game = morris.Game()
    steps = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while time.perf_counter() < end:
        for _ in range(1000):
            if game.is_terminal:
                game = morris.Game()
            legal = game.legal_actions()
            game.apply(int(legal[rng.integers(len(legal))]))
        steps += 1000
    return steps / (time.perf_counter() - t0)


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
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement and round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; each figure is their median")
    parser.add_argument("--envs", type=int, default=4096, help="games in the VecEnv")
    parser.add_argument("--no-cargo", action="store_true", help="skip the criterion benchmark")
    args = parser.parse_args()
    n, s = args.envs, args.seconds
    print(
        f"morris {morris.__version__}, Python {platform.python_version()}, NumPy {np.__version__}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs; {n} envs; "
        f"each figure the median of {args.rounds} rounds of {s:g} s"
    )
    criterion, why = ({}, "--no-cargo") if args.no_cargo or n != 4096 else criterion_vec_env(s * args.rounds)
    try:
        import pyspiel  # noqa: F401

        have_spiel = True
    except ImportError:
        have_spiel = False
    rounds: list[dict] = []
    for _ in range(args.rounds):
        r: dict = {"spiel": openspiel_loop(s) if have_spiel else None}
        for threads in (1, 2):
            r[threads] = {"rust": _morris.time_vec_env(n, threads, s), **python_vec_env(n, threads, s)}
        rounds.append(r)
    spiel = float(np.median([r["spiel"] for r in rounds])) if have_spiel else None
    rows = []
    for threads in (1, 2):
        med = {k: float(np.median([r[threads][k] for r in rounds])) for k in rounds[0][threads]}
        rows.append((threads, criterion.get(threads), med.pop("rust"), med))

    def m(x: Optional[float]) -> str:
        return "-" if x is None else f"{x / 1e6:.2f} M"

    print("\nenv-steps/s                                      1 thread    2 threads")
    lines = [
        ("Rust VecEnv.step, criterion (cargo bench)", lambda r: r[1]),
        ("Rust VecEnv.step, timed in the extension", lambda r: r[2]),
        ("Python VecEnv.step, packed masks", lambda r: r[3]["step_packed"]),
        ("Python VecEnv.step, dense masks", lambda r: r[3]["step_dense"]),
        ("random loop, step(None) (Rust sampling)", lambda r: r[3]["loop_step_none"]),
        ("random loop, step(sample_legal())", lambda r: r[3]["loop_sample_legal"]),
        ("random loop, NumPy sample_actions", lambda r: r[3]["loop_numpy"]),
    ]
    for label, get in lines:
        print(f"  {label:<46} {m(get(rows[0])):>9}   {m(get(rows[1])):>9}")
    if why:
        print(f"  (criterion not measured: {why}; the ratios use the extension's timing)")
    print(f"OpenSpiel nine_mens_morris, one game in a Python loop: {m(spiel)} steps/s")
    print(f"Game, one game in a Python loop: {single_game(s) / 1e3:.0f} k steps/s")
    try:
        print(f"PettingZoo AEC loop: {pettingzoo_loop(s) / 1e3:.0f} k steps/s")
    except ImportError:
        print("PettingZoo AEC loop: not measured (pip install pettingzoo gymnasium)")

    print("\nratios (goal)                                    1 thread    2 threads")
    ratio_lines = []
    for name, col in (("criterion", 1), ("extension", 2)):
        if any(r[col] is None for r in rows):
            continue
        for masks in ("packed", "dense"):
            goal = " (>= 60%)" if masks == "packed" else ""
            label = f"Python step {masks} / Rust, {name}{goal}"
            ratio_lines.append((label, [r[3][f"step_{masks}"] / r[col] for r in rows], "%"))
    if spiel is not None:
        ratio_lines += [
            (
                "step(None) loop / OpenSpiel loop (>= 10x)",
                [r[3]["loop_step_none"] / spiel for r in rows],
                "x",
            ),
            (
                "sample_legal loop / OpenSpiel loop (>= 10x)",
                [r[3]["loop_sample_legal"] / spiel for r in rows],
                "x",
            ),
            ("NumPy-sampling loop / OpenSpiel loop", [r[3]["loop_numpy"] / spiel for r in rows], "x"),
        ]
    else:
        print("  OpenSpiel not measured (pip install open_spiel to compare)")
    for label, values, unit in ratio_lines:
        shown = [f"{100 * v:.0f}%" if unit == "%" else f"{v:.1f}x" for v in values]
        print(f"  {label:<46} {shown[0]:>9}   {shown[1]:>9}")


if __name__ == "__main__":
    main()
