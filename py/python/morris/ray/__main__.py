"""``python -m morris.ray``: a training run on a Ray cluster (see ``morris.ray``)."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Parses the command line, runs the run; returns the exit status (2 for bad input)."""
    p = argparse.ArgumentParser(
        prog="python -m morris.ray",
        description="Train on a Ray cluster: one learner actor (on this node) and N self-play actors.",
    )
    p.add_argument("--config", help="a new run from this TOML config (e.g. configs/default.toml)")
    p.add_argument("--run-dir", help="the run directory (default: the config's run.output_dir/run.name)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its last checkpoint")
    p.add_argument("--workers", type=int, default=2, help="self-play actors (default 2)")
    p.add_argument("--address", help='the Ray cluster ("auto", "ray://HOST:10001"); default: a local one')
    p.add_argument("--num-cpus", type=int, help="CPUs of the local cluster started without --address")
    p.add_argument("--worker-cpus", type=float, default=1, help="CPUs per self-play actor (default 1)")
    p.add_argument("--worker-gpus", type=float, default=0, help="GPUs per self-play actor (default 0)")
    p.add_argument("--learner-cpus", type=float, default=1, help="CPUs of the learner (default 1)")
    p.add_argument("--learner-gpus", type=float, default=0, help="GPUs of the learner (default 0)")
    p.add_argument(
        "--learner-restarts", type=int, default=3, help="restarts of a failing learner (default 3)"
    )
    p.add_argument(
        "--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override a config key"
    )
    p.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    a = p.parse_args(argv)
    if (a.config is None) == (a.resume is None):
        p.error("give one of --config (a new run) and --resume RUN_DIR")
    if a.resume and a.run_dir:
        p.error("--run-dir is for a new run; --resume names the run directory")

    import ray

    from morris.ray import RayRun

    if a.address is None:
        ray.init(num_cpus=a.num_cpus, log_to_driver=False, configure_logging=False)
    else:
        ray.init(address=a.address, log_to_driver=False, configure_logging=False)
    try:
        run = RayRun(
            a.config,
            a.resume or a.run_dir,
            workers=a.workers,
            overrides=a.set,
            worker_cpus=a.worker_cpus,
            worker_gpus=a.worker_gpus,
            learner_cpus=a.learner_cpus,
            learner_gpus=a.learner_gpus,
            learner_restarts=a.learner_restarts,
            quiet=a.quiet,
            progress_every=a.progress_every,
        )
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    run.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
