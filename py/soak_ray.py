"""The soak run of morris.ray (docs/cluster.md#measurements): configs/tiny.toml with two self-play
actors on a local Ray cluster for 8 minutes, an actor killed every 20 s (15 workers at random and
every fourth kill the learner, 20 in all), then lost and duplicated shards counted from the
ledger's worker names, sequence numbers and SHA-256. Prints one JSON line.

    python py/soak_ray.py RUN_DIR     # from the repository root, with the ray extra installed
"""

import json
import random
import sys
import threading
import time
from collections import defaultdict

import morris.ray as mr
import ray

run_dir = sys.argv[1]
ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False, configure_logging=False)
r = mr.RayRun(
    "configs/tiny.toml",
    run_dir,
    workers=2,
    learner_cpus=1,
    learner_restarts=10,
    progress_every=30,
    overrides={
        "schedule.total_steps": 2000000,
        "schedule.checkpoint_every": 200,
        "schedule.eval_every": 5000,
        "schedule.wall_time_minutes": 8,
    },
)
r.start()
kills = []
stop = threading.Event()


def killer():
    rng = random.Random(7)
    plan = ["learner" if k % 4 == 3 else "worker" for k in range(20)]
    for what in plan:
        if stop.wait(20):
            return
        if what == "learner":
            ray.kill(r.learner, no_restart=False)
        else:
            ray.kill(r.workers[rng.randrange(len(r.workers))], no_restart=False)
        kills.append((round(time.monotonic() - t0), what))
        print("killed", what, file=sys.stderr, flush=True)


t0 = time.monotonic()
threading.Thread(target=killer, daemon=True).start()
s = r.run()
stop.set()
entries = [json.loads(line) for line in open(f"{run_dir}/ray-ledger.jsonl")]
seqs = defaultdict(list)
for e in entries:
    seqs[e["worker"]].append(e["seq"])
gaps = {
    w: sorted(set(range(max(v) + 1)) - set(v)) for w, v in seqs.items() if sorted(v) != list(range(len(v)))
}
dups = len(entries) - len({e["sha256"] for e in entries})
out = dict(
    kills=len(kills),
    kill_log=kills,
    worker_restarts=s.worker_restarts,
    learner_restarts=s.learner_restarts,
    shards=len(entries),
    games=sum(e["games"] for e in entries),
    positions=s.positions,
    incarnations=len(seqs),
    lost=s.lost,
    gaps=gaps,
    duplicate_bytes_in_ledger=dups,
    duplicates_skipped=s.duplicates,
    refused=s.refused,
    step=s.step,
    wall_s=round(s.wall_s, 1),
)
print(json.dumps(out))
