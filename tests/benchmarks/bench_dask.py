#!/usr/bin/env python
"""Benchmark of ``spadework validate --dask`` against the single-process compiled engine (issue 13 item 5).

Run ``python tests/benchmarks/bench_dask.py [--hands N] [--workers 1,2] [--reps R]``.  On the cached
simulated season of :func:`bench_validate.dataset` (generated when missing), each run in its own
process:

- ``single``: :data:`~spadework.analysis.engine.engines.COMPILED` ``validate`` into an in-memory
  database (DuckDB at 384 MB, as the command line);
- ``dask-N``: :func:`~spadework.analysis.engine.distributed.validate_dask` on a LocalCluster of N
  worker processes with one thread each, started (and warmed on 200 hands, so numba's caches are
  loaded) before the clock starts; the cluster's start is reported apart.

Printed per run: wall seconds, hands per second, the seconds of each step (``read``, ``check``,
``rejected``, ``write``: the driver writing the Parquet parts into DuckDB), the seconds the
workers computed per step (summed over tasks: more than the step's wall time when the workers run
at once), peak RSS of the driver and of each worker, and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def run_one(path: str, mode: str) -> dict:
    """One run in this process (see the module doc); returns the figures."""
    import logging
    import resource

    import distributed

    from spadework.analysis.engine import distributed as D
    from spadework.analysis.engine.engines import COMPILED, limit_memory
    from spadework.parsers.db import connect

    out: dict = {"mode": mode, "load_before": os.getloadavg()}
    con = connect(None)
    limit_memory(con, None, COMPILED)
    if mode == "single":
        t = time.perf_counter()
        loaded, checked = COMPILED.validate(con, [path])
        out["seconds"] = time.perf_counter() - t
    else:
        n = int(mode.split("-")[1])
        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
        )
        client = distributed.Client(cluster)
        out["startup"] = time.perf_counter() - t0
        small = Path(path).with_suffix(".head200.jsonl")
        if not small.exists():
            with open(path, "rb") as f, open(small, "wb") as g:
                for _, line in zip(range(200), f):
                    g.write(line)
        D.validate_dask(connect(None), [str(small)], address=client)  # numba's caches loaded in every worker
        t = time.perf_counter()
        with distributed.get_task_stream(client) as ts:
            loaded, checked = D.validate_dask(con, [path], address=client)
        out["seconds"] = time.perf_counter() - t
        busy: dict[str, float] = {}
        for task in ts.data:
            step = task["key"].split("-")[1]
            for ss in task["startstops"]:
                if ss["action"] == "compute":
                    busy[step] = busy.get(step, 0.0) + ss["stop"] - ss["start"]
        out["steps"] = D.STATS["seconds"]
        out["worker_seconds"] = busy
        out["tasks"] = D.STATS["read_tasks"]
        out["partitions"] = D.STATS["partitions"]

        def rss() -> float:
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        out["worker_rss_mib"] = list(client.run(rss).values())
        client.close()
        cluster.close()
    out["hands"] = loaded.hands
    out["findings"] = len(checked.findings)
    out["hands_per_s"] = loaded.hands / out["seconds"]
    out["driver_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["load_after"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--workers", default="1,2", help="LocalCluster sizes to run, comma-separated")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--one", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print("RESULT " + json.dumps(run_one(*args.one)), flush=True)
        return 0
    import bench_validate

    path = bench_validate.dataset(args.hands)
    modes = ["single"] + [f"dask-{n}" for n in args.workers.split(",") if n.strip()]
    rows = []
    for rep in range(args.reps):
        for mode in modes:
            proc = subprocess.run([sys.executable, __file__, "--one", str(path), mode], capture_output=True, text=True)
            line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
            if line is None:
                print(proc.stdout + proc.stderr, file=sys.stderr)
                return 1
            r = json.loads(line[7:])
            rows.append(r)
            steps = " ".join(f"{k} {v:.2f}" for k, v in r.get("steps", {}).items())
            busy = " ".join(f"{k} {v:.2f}" for k, v in r.get("worker_seconds", {}).items())
            rss = r["driver_rss_mib"], r.get("worker_rss_mib", [])
            print(
                f"{mode:>7}  {r['seconds']:6.2f} s  {r['hands_per_s']:9,.0f} hands/s"
                + (f"  start {r['startup']:.1f} s  steps: {steps}  worker s: {busy}  parts {r['partitions']}" if "steps" in r else "")
                + f"  RSS driver {rss[0]:.0f} MiB workers {[round(x) for x in rss[1]]}"
                + f"  load {r['load_before'][0]:.1f}->{r['load_after'][0]:.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
