"""Compile the compiled engine ahead of its first use, into numba's on-disk cache.

The compiled reader (:mod:`spadework.parsers.jsonl_scan`) and core
(:mod:`spadework.analysis.engine.kernels`) are numba functions.  numba compiles them the first
time they run in an environment (about 11 CPU-seconds here: 4 for the reader, 6 for the core) and
keeps the machine code on disk (``cache=True``), so every later process loads it in a few
hundredths of a second.  Where that cache lives: beside each module, in its ``__pycache__``
folder (numba's in-tree cache; files ``*.nbi`` and ``*.nbc``), or under ``NUMBA_CACHE_DIR`` when
that is set.  numba keys each entry on the module's source text, numba's version, the Python
version and the CPU, and compiles again whenever one of them differs.  The values the kernels
compile in from other modules (finding, card and option codes) are part of the key too
(:mod:`spadework.parsers.numba_cache`), so a stale cache is never used.

:func:`warm` runs every compiled step of ``validate`` and ``check`` once on a tiny simulated
season, so the cache then holds each function with exactly the argument types the real work
passes.  ``pip install .`` calls it on the build copy of the package (``setup.py``): the wheel it
installs carries the cache made on this machine, and the first ``spadework validate`` starts
without compiling (a ``NUMBA_CACHE_DIR`` of the user's is seeded from those files).  ``spadework
warm`` calls it for an editable install.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field

WARM_GAMES = 3
"""Games of the season :func:`warm` validates (a few hands with findings, so the second pass of
the core, which writes them, runs too)."""


@dataclass
class WarmReport:
    """What :func:`warm` did: ``seconds`` (wall time), and per compiled function (``module.name``)
    whether it was ``compiled`` here or ``loaded`` from the cache."""

    seconds: float = 0.0
    compiled: list[str] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)


def dispatchers() -> dict[str, object]:
    """The numba functions of the reader, the loader and the core, by ``module.name``.

    These are the ones ``validate`` and ``check`` run; the solver's kernels are compiled when
    coaching first needs them.
    """
    from spadework.analysis.engine import kernels, loader, storage
    from spadework.parsers import jsonl_scan

    out: dict[str, object] = {}
    for mod in (jsonl_scan, loader, storage, kernels):
        for name, obj in vars(mod).items():
            if hasattr(obj, "py_func") and hasattr(obj, "stats"):
                out[f"{mod.__name__.rsplit('.', 1)[-1]}.{name}"] = obj
    return out


def warm(threads: int | None = None) -> WarmReport:
    """Compile (or load from the cache) every numba function ``validate`` and ``check`` run.

    Validates a simulated season of :data:`WARM_GAMES` games with planted faults, a hand with a
    float extension (which orjson writes back) and a ``.json`` array of a few hands, through the compiled engine into an in-memory
    database (the compiled reader, the streamed check, the core's two passes), then checks that
    database again (the stored-rows route).  ``threads``:
    numba's thread count while warming (default: unchanged).  Returns a :class:`WarmReport`.
    Raises whatever the engine raises (a warm run on a broken install fails loudly).
    """
    import numba
    import orjson

    from spadework.analysis.engine import engines, loader
    from spadework.analysis.sim.season import simulate_season, write_season
    from spadework.parsers.db import connect

    t0 = time.perf_counter()
    threads_before = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    fast_min = loader.FAST_MIN_BYTES
    try:
        records, _ = simulate_season(4, WARM_GAMES, seed=7, fault_rate=0.3)
        with tempfile.TemporaryDirectory(prefix="spadework-warm-") as tmp:
            path = os.path.join(tmp, "warm.jsonl")
            write_season(records, path)
            with open(path, "rb+") as f:  # and a hand whose extension orjson writes back (a float)
                first = orjson.loads(f.readline())
                f.seek(0, os.SEEK_END)
                f.write(orjson.dumps(dict(first, game_id="warm-orjson", x_seconds=0.5)) + b"\n")
            array = os.path.join(tmp, "warm.json")  # a few hands as a .json array (its item splitter)
            with open(path, "rb") as f, open(array, "wb") as out:
                items = [orjson.loads(line) for line in f.read().splitlines()[:3]]
                out.write(orjson.dumps([dict(o, game_id="warm-array") for o in items], option=orjson.OPT_INDENT_2))
            loader.FAST_MIN_BYTES = 0  # a tiny file takes the compiled reader too
            con = connect(None)
            try:
                engines.COMPILED.validate(con, [path, array])
                engines.COMPILED.check(con)
            finally:
                con.close()
    finally:
        loader.FAST_MIN_BYTES = fast_min
        if threads is not None:
            numba.set_num_threads(threads_before)
    report = WarmReport(seconds=time.perf_counter() - t0)
    for name, d in dispatchers().items():
        stats = d.stats
        if stats.cache_misses:
            report.compiled.append(name)
        elif stats.cache_hits:
            report.loaded.append(name)
    return report


def main() -> int:
    """``python -m spadework.analysis.engine.warm``: warm, print one line, exit 0 (1 on failure)."""
    import sys

    try:
        r = warm()
    except Exception as e:  # noqa: BLE001 - a report for the build log, not a crash
        print(f"spadework: could not compile the engine ahead of use ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    print(f"spadework: compiled engine ready in {r.seconds:.1f} s ({len(r.compiled)} functions compiled, {len(r.loaded)} loaded)")
    return 0


__all__ = ["WARM_GAMES", "WarmReport", "dispatchers", "main", "warm"]


if __name__ == "__main__":
    raise SystemExit(main())
