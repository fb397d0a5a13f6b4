"""Speed of the compiled rules core alone: hands/s on 1 and 2 threads, and its compile times.

    python tests/benchmarks/bench_core.py [--hands 200000] [--preset standard] [--compile]

Simulates a season (1% of hands with a planted fault), tiles its packed arrays up to ``--hands``
(kernel speed does not depend on which hands they are) and times
:func:`spadework.analysis.engine.kernels.run_core` (count pass + write pass, outputs included) on 1 and
2 threads, best of 5.  ``--compile`` first measures the first compile in a fresh process (the cache
files of kernels.py removed) and the start of a later process from the cache.  Run it on a quiet
machine: on a shared one the wall times, and the speedup of a second thread, say little.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import numpy as np

_PROBE = """
import time
c = time.process_time(); w = time.perf_counter()
from spadework.analysis.engine import compiled
from spadework.analysis.engine.packed import PackedHands, pack_rulesets
from spadework.analysis.engine.rules import STANDARD
i = time.process_time(); iw = time.perf_counter()
p = PackedHands.empty(1, 1); p.game_start[1] = 1
compiled.check_packed(p, pack_rulesets([STANDARD]))
print(f"{i - c:.2f} {iw - w:.2f} {time.process_time() - i:.2f} {time.perf_counter() - iw:.2f}")
"""


def compile_times() -> None:
    from spadework.analysis.engine import kernels

    cache = Path(kernels.__file__).parent / "__pycache__"
    for f in cache.glob("kernels.*.nb[ic]"):
        f.unlink()
    for label in ("fresh (compiles)", "later process (cache)"):
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True).stdout.split()
        imp_cpu, imp_wall, cpu, wall = map(float, out)
        print(f"{label:24s} import {imp_cpu:.2f}s cpu / {imp_wall:.2f}s wall; first check {cpu:.2f}s cpu / {wall:.2f}s wall")


def _tile(p, k):
    from spadework.analysis.engine.packed import PackedHands

    kw = {}
    n = p.n_hands
    for f in fields(PackedHands):
        a = getattr(p, f.name)
        if f.name == "game_start":
            kw[f.name] = np.concatenate([a[:-1] + n * j for j in range(k)] + [np.array([n * k])]).astype(np.int64)
        else:
            kw[f.name] = np.concatenate([a] * k)
    return PackedHands(**kw)


def speed(hands: int, preset: str) -> None:
    from spadework.analysis.engine import compiled
    from spadework.analysis.engine import kernels as K
    from spadework.analysis.engine.packed import pack_records
    from spadework.analysis.sim import simulate_season

    recs, _ = simulate_season(16, 600, 1, preset, fault_rate=0.01)
    packed = pack_records(recs)
    big = _tile(packed.hands, max(1, -(-hands // packed.hands.n_hands)))
    P, R = compiled.hands_in(big), compiled.rules_in(packed.rulesets)
    K.run_core(compiled.hands_in(packed.hands), R, threads=2)  # compiled (or loaded) before timing
    best = {1: float("inf"), 2: float("inf")}
    for _ in range(5):
        for th in (1, 2):
            t = time.perf_counter()
            _, f = K.run_core(P, R, threads=th)
            best[th] = min(best[th], time.perf_counter() - t)
    n = big.n_hands
    print(
        f"{preset}: {n} hands ({len(f.code)} findings): 1 thread {best[1]:.3f}s = {n / best[1] / 1e6:.2f}M hands/s, "
        f"2 threads {best[2]:.3f}s = {n / best[2] / 1e6:.2f}M hands/s, speedup {best[1] / best[2]:.2f}x"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--preset", action="append", help="standard, barmore, nyc, openspiel (repeatable)")
    ap.add_argument("--compile", action="store_true", help="measure the fresh and cached compile times first")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.compile:
        compile_times()
    for preset in args.preset or ["standard"]:
        speed(args.hands, preset)


if __name__ == "__main__":
    main()
