#!/usr/bin/env python
"""Benchmark of ``spadework validate`` against its floor and against OpenSpiel (issue 13 item 6).

Run ``python tests/benchmarks/bench_validate.py [--hands N]`` (also the body of
``spadework bench``: :func:`main` takes the argument list).  It

1. generates N canonical JSON Lines hands with the simulator (``spadework.analysis.sim``; a small
   rate of planted faults), and seasons of the same size under ``barmore`` and ``nyc``, cached
   under ``$SPADEWORK_BENCH_CACHE`` or ``~/.cache/spadework-bench`` (never in the repository)
   and reused by later runs;
2. measures, each stage in its own subprocess (so peak RSS is per stage), best and median
   of ``--reps`` repetitions:

   - ``floor``: DuckDB's bare ``read_json`` of the file plus unnesting the tricks to one
     row per play, into a table (``floor_count``: the same query only counted);
   - ``validate``: ``spadework validate`` end to end with the compiled engine
     (:data:`spadework.analysis.engine.engines.COMPILED`: the compiled reader, the stored rows,
     the compiled core, every derived row and finding written to the in-memory database), with
     1 and 2 threads (DuckDB's and numba's; a 1-thread stage is also pinned to one core, so the
     pipeline's reader and writer threads share it); ``validate_barmore``/``validate_nyc`` on the other
     seasons; ``validate_small``: the first 100,000 hands (peak RSS flat in N);
   - ``check``: the check alone (:func:`~spadework.analysis.engine.engines.check_compiled`) on an
     already loaded database file, 1 and 2 threads (read the stored rows, check, write the
     derived tables); ``core``: the compiled core alone on the same hands already packed in
     memory (what OpenSpiel's ``deserialize_state`` is timed on; the median of three passes);
     ``db_floor``: DuckDB alone reading the stored hands and inserting the rows the check wrote,
     nothing checked (what any check from database to database pays);
   - ``validate_ref`` / ``check_ref``: the reference engine on the first ``--ref-hands`` hands;
   - ``openspiel``: OpenSpiel's C++ replay (``pyspiel`` ``deserialize_state``) of the same
     hands, converted to OpenSpiel actions beforehand (untimed, cached), and
     ``openspiel_apply``: the Python ``apply_action`` loop;
   - ``compile_fresh`` / ``compile_cached``: the first use of the compiled code (the reader,
     the bridge and the core, on a few hands) in a process with an empty numba cache, on a copy of
     the sources with no compiled files beside them, then in a later process with the cache it
     wrote; ``compile_installed``: the same on a copy as ``pip install .`` leaves it (compiled by
     the install's hook), and ``compile_installed_cache_dir``: that copy with a new, empty
     ``NUMBA_CACHE_DIR``;

3. prints hands per second, peak RSS, the seconds per step and the ratios (validate / floor,
   check vs OpenSpiel, 2 threads vs 1, barmore and nyc vs standard) against the targets and,
   with ``--record`` only, appends a section to the tracked ``tests/benchmarks/results.md``
   with the machine (cores, memory, load), date and N (record runs made on a quiet machine; a
   trial run leaves the checkout as it was).

:func:`run_benchmark` returns everything as a dict.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS = Path(__file__).with_name("results.md")
DEFAULT_HANDS = 100_000
DEFAULT_REF_HANDS = 3_000
DEFAULT_MEMORY_LIMIT = "128MB"
"""DuckDB's memory_limit of the compiled engine's stages: the command line's default
(``engines.COMPILED_MEMORY_LIMIT``; ``tests/test_engines.py`` keeps the two equal)."""
FLOOR_MEMORY_LIMIT = "384MB"
"""DuckDB's memory_limit of the floor: the yardstick stays what it was when the compiled engine's
cap was 384MB (a lower cap would only slow the floor)."""
DEFAULT_FAULT_RATE = 0.001
SMALL_HANDS = 100_000
"""The smaller run of the same file whose peak RSS the full run's is compared with."""
DATASET_VERSION = 1  # bump when the generator changes, so caches are not reused


# --- the data set ----------------------------------------------------------------------------------


def cache_dir() -> Path:
    """``$SPADEWORK_BENCH_CACHE``, else ``$XDG_CACHE_HOME/spadework-bench`` or ``~/.cache/spadework-bench``."""
    env = os.environ.get("SPADEWORK_BENCH_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spadework-bench"


def _generate_part(args: tuple[str, int, int, float, str, str]) -> int:
    """Write ``hands`` simulated hands (whole games, the last one cut) to ``path``; returns the count."""
    path, hands, seed, fault_rate, prefix, rules = args
    from spadework.analysis.sim.season import iter_season
    from spadework.parsers.jsonl import dumps_record

    n = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for g in iter_season(12, 10**9, seed, rules=rules, fault_rate=fault_rate, prefix=prefix):
            for rec in g.records:
                f.write(dumps_record(rec))
                f.write("\n")
                n += 1
                if n >= hands:
                    return n
    return n


def dataset(
    hands: int, seed: int = 1, fault_rate: float = DEFAULT_FAULT_RATE, workers: int | None = None, quiet: bool = False,
    rules: str = "standard",
) -> Path:
    """The cached JSON Lines file of ``hands`` simulated hands under ``rules`` (generated in parallel
    parts when missing)."""
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    tag = "" if rules == "standard" else f"-{rules}"
    path = d / f"season-v{DATASET_VERSION}{tag}-{hands}-s{seed}-f{fault_rate:g}.jsonl"
    if path.exists():
        return path
    workers = workers or os.cpu_count() or 1
    parts = max(1, min(workers, hands // 5000 or 1))
    share = [hands // parts + (1 if i < hands % parts else 0) for i in range(parts)]
    tmp = [str(path) + f".part{i}" for i in range(parts)]
    t0 = time.perf_counter()
    if not quiet:
        print(f"generating {hands:,} {rules} hands with the simulator ({parts} process(es)) into {path} ...", flush=True)
    jobs = [(tmp[i], share[i], seed * 1000 + i, fault_rate, f"b{seed}p{i}", rules) for i in range(parts)]
    if parts == 1:
        _generate_part(jobs[0])
    else:
        import concurrent.futures as cf
        import multiprocessing as mp

        with cf.ProcessPoolExecutor(max_workers=parts, mp_context=mp.get_context("spawn")) as pool:
            list(pool.map(_generate_part, jobs))
    with open(str(path) + ".tmp", "wb") as out:
        for p in tmp:
            with open(p, "rb") as f:
                shutil.copyfileobj(f, out, 1 << 24)
            os.remove(p)
    os.replace(str(path) + ".tmp", path)
    if not quiet:
        print(f"  done in {time.perf_counter() - t0:.0f}s ({path.stat().st_size / 1e9:.2f} GB)", flush=True)
    return path


def head_file(path: Path, lines: int) -> Path:
    """A cached copy of the first ``lines`` lines of ``path``."""
    out = path.with_name(path.stem + f".head{lines}.jsonl")
    if not out.exists():
        with open(path, "rb") as f, open(str(out) + ".tmp", "wb") as g:
            for i, line in enumerate(f):
                if i >= lines:
                    break
                g.write(line)
        os.replace(str(out) + ".tmp", out)
    return out


def _code_version() -> str:
    """A short hash of the fast path's source: a loaded database made by other code is not reused."""
    import hashlib

    h = hashlib.sha256()
    for f in [ROOT / "analysis" / "engine" / "loader.py", ROOT / "parsers" / "jsonl_scan.py", ROOT / "parsers" / "db.py", ROOT / "parsers" / "schema.py"]:
        h.update(f.read_bytes())
    return h.hexdigest()[:10]


def loaded_db(path: Path, quiet: bool = False) -> Path:
    """A cached DuckDB file with ``path`` loaded by the compiled loader (the rows are the reference's),
    rebuilt whenever the loader's code changes."""
    db = path.with_name(f"{path.stem}.{_code_version()}.duckdb")
    if not db.exists():
        if not quiet:
            print(f"loading {path.name} into {db.name} for the check-alone stages ...", flush=True)
        _run_stage("prepare_db", {"file": str(path), "db": str(db) + ".tmp", "threads": os.cpu_count() or 1})
        os.replace(str(db) + ".tmp", db)
    return db


# --- stages (each runs in a child process) ----------------------------------------------------------


def _connect(args: dict[str, Any], path: str | None = None):
    from spadework.parsers.db import connect

    con = connect(path)
    con.execute(f"SET threads = {int(args['threads'])}")
    try:
        import numba

        numba.set_num_threads(min(int(args["threads"]), numba.config.NUMBA_NUM_THREADS))
    except ImportError:
        pass
    if args.get("memory_limit"):
        con.execute(f"SET memory_limit = '{args['memory_limit']}'")
        spill = tempfile.mkdtemp(prefix="spadework-bench-spill-")
        con.execute(f"SET temp_directory = '{spill}'")
        import atexit

        atexit.register(shutil.rmtree, spill, True)
    return con


def _stage_floor(args: dict[str, Any]) -> dict[str, Any]:
    con = _connect(args)
    f = args["file"].replace("'", "''")
    sql = (
        "SELECT game_id, hand, t.leader, unnest(t.cards) AS card "
        f"FROM (SELECT game_id, hand, unnest(tricks) AS t FROM read_json('{f}'))"
    )
    t0 = time.perf_counter()
    if args.get("count"):
        rows = con.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0]
    else:
        con.execute(f"CREATE TABLE floor_plays AS {sql}").fetchall()
        rows = con.execute("SELECT count(*) FROM floor_plays").fetchall()[0][0]
    return {"seconds": time.perf_counter() - t0, "rows": rows}


def _stage_validate(args: dict[str, Any]) -> dict[str, Any]:
    from spadework.analysis.engine import engines, loader

    con = _connect(args)
    loader.TIMINGS = {}
    t0 = time.perf_counter()
    loaded, checked = engines.COMPILED.validate(con, [args["file"]])
    total = time.perf_counter() - t0
    found = con.execute("SELECT count(*) FROM violations").fetchall()[0][0]
    steps = {f"load {k}": v for k, v in loader.TIMINGS.items()}
    steps.update({f"check {k}": v for k, v in engines.STATS["seconds"].items()})
    return {
        "seconds": total,
        "hands": loaded.hands,
        "errors": loaded.errors,
        "findings": found,
        "games": checked.games,
        "python_lines": loader.STATS["python_lines"],
        "reference_games": engines.STATS["reference_games"],
        "steps": steps,
    }


def _stage_validate_ref(args: dict[str, Any]) -> dict[str, Any]:
    from spadework.analysis.engine.checker import check_db
    from spadework.parsers.db import load_files

    con = _connect(args)
    t0 = time.perf_counter()
    loaded = load_files(con, [args["file"]])
    check_db(con)
    total = time.perf_counter() - t0
    found = con.execute("SELECT count(*) FROM violations").fetchall()[0][0]
    return {"seconds": total, "hands": loaded.hands, "findings": found}


def _stage_prepare_db(args: dict[str, Any]) -> dict[str, Any]:
    from spadework.analysis.engine.loader import load_fast

    con = _connect(args, args["db"])
    t0 = time.perf_counter()
    s = load_fast(con, [args["file"]])
    con.close()
    return {"seconds": time.perf_counter() - t0, "hands": s.hands}


def _stage_check(args: dict[str, Any]) -> dict[str, Any]:
    from spadework.analysis.engine import engines
    from spadework.analysis.engine.checker import check_db

    con = _connect(args, args["db"])
    t0 = time.perf_counter()
    if args.get("ref"):
        s = check_db(con)
        steps = {}
    else:
        s = engines.check_compiled(con)
        steps = dict(engines.STATS["seconds"])
    return {"seconds": time.perf_counter() - t0, "hands": s.hands, "findings": len(s.findings), "steps": steps}


def _stage_db_floor(args: dict[str, Any]) -> dict[str, Any]:
    """What any check from database to database pays before it checks anything: DuckDB reading the
    stored hands into Arrow (``SELECT * FROM hand_records``, as ``check`` reads them) and inserting
    the rows a check writes (the derived tables of the last ``check`` stage, fetched untimed) into
    empty tables of an in-memory database (cheaper than the file ``check`` writes to), one after
    the other on ``threads`` DuckDB threads.  ``check`` overlaps the two with the core, so its wall
    time can be as low as the larger of them, not lower."""
    import duckdb

    from spadework.analysis.engine.storage import derived_tables

    con = _connect(args, args["db"])
    derived = {t: con.sql(f"SELECT * FROM {t}").to_arrow_table() for t in derived_tables(con)}
    if not derived or not derived[min(derived)].num_rows:
        raise SystemExit("db_floor: the database has no derived rows (run the check stage first)")
    t0 = time.perf_counter()
    stored = con.sql("SELECT * FROM hand_records").to_arrow_table()
    read = time.perf_counter() - t0
    hands = stored.num_rows
    del stored
    mem = duckdb.connect()
    mem.execute(f"SET threads = {int(args['threads'])}")
    for t, data in derived.items():
        mem.register("_rows", data)
        mem.execute(f"CREATE TABLE {t} AS SELECT * FROM _rows LIMIT 0")
        mem.unregister("_rows")
    t1 = time.perf_counter()
    mem.execute("BEGIN TRANSACTION")
    for t, data in derived.items():
        mem.register("_rows", data)
        mem.execute(f"INSERT INTO {t} SELECT * FROM _rows")
        mem.unregister("_rows")
    mem.execute("COMMIT")
    write = time.perf_counter() - t1
    rows = sum(d.num_rows for d in derived.values())
    return {"seconds": read + write, "hands": hands, "steps": {"read": read, "write": write}, "rows": rows}


def _packed_parts(con) -> tuple[int, list[tuple[Any, Any]]]:
    """The stored hands read and packed for the core, in partitions of about
    ``engines.PART_HANDS`` hands of whole games as ``check_compiled`` makes them (untimed), and
    the core run once on the first (the first call loads the compiled code): ``(hands, [(packed
    hands, rulesets) per partition])``."""
    from spadework.analysis.engine import compiled, engines
    from spadework.analysis.engine.storage import pack_table

    total = con.execute("SELECT count(*) FROM hand_records").fetchall()[0][0]
    parts = max(1, -(-total // engines.PART_HANDS))
    packed = []
    for k in range(parts):
        table = con.sql(f"SELECT * FROM hand_records WHERE hash(game_id) % {parts} = {k}").to_arrow_table()
        p = pack_table(table)
        packed.append((p.hands, p.rulesets))
        del table
    compiled.check_packed(*packed[0])
    return total, packed


CORE_PASSES = 3
"""Timed passes of the ``core`` stage over the same packed hands, in one process; the stage's
seconds are their median.  A pass takes about a second at 1M hands, and on a shared 2-core
machine a single second-long run swings by 10-20% (the second core more than the first)."""


def _stage_core(args: dict[str, Any]) -> dict[str, Any]:
    """The compiled core alone, like OpenSpiel's ``deserialize_state`` on its strings: the hands are
    read and packed first (untimed), then every game is replayed, scored and checked in memory,
    :data:`CORE_PASSES` times (seconds: the median pass; every pass in ``passes``)."""
    from spadework.analysis.engine import compiled

    con = _connect(args, args["db"])
    total, packed = _packed_parts(con)
    passes = []
    for _ in range(CORE_PASSES):
        t0 = time.perf_counter()
        found = 0
        for hands, rulesets in packed:
            found += int(compiled.check_packed(hands, rulesets).out.g_nfind.sum())
        passes.append(time.perf_counter() - t0)
    return {"seconds": statistics.median(passes), "hands": total, "findings": found, "passes": passes}


SCALING_PAIRS = 5
"""Pairs of passes (one thread, then two, or the other way round) of the ``*_pairs`` stages."""


def _pin(n: int, cpus: list[int]) -> None:
    """Every thread of this process (DuckDB's, numba's, ours) on the first ``n`` of ``cpus``;
    threads started later inherit it from the thread that starts them.  Linux only (elsewhere
    nothing is pinned, as in the 1-thread stages)."""
    if not hasattr(os, "sched_setaffinity") or not os.path.isdir("/proc/self/task"):
        return
    mask = set(cpus[:n])
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), mask)
        except OSError:  # a thread that has just ended
            pass


def _stage_scaling(args: dict[str, Any]) -> dict[str, Any]:
    """One thread against two in one process, pass by pass: the machine's speed drifts by 10-20%
    from one minute to the next, so stages run in separate processes compare different machines.
    ``kind``: ``core`` (the compiled core on hands packed beforehand, as the ``core`` stage) or
    ``check`` (``check_compiled`` database to database, as the ``check`` stage).  Each pair runs
    both counts back to back (alternating which goes first); for one thread every thread of the
    process is pinned to one core, as in a 1-thread stage.  ``ratio``: the median of the pairs'
    ratios (one-thread seconds / two-thread seconds); ``seconds``: the median two-thread pass."""
    import numba

    from spadework.analysis.engine import compiled, engines

    low, top = int(args["low"]), int(args["top"])
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    con = _connect({**args, "threads": top}, args["db"])
    if args["kind"] == "core":
        total, packed = _packed_parts(con)

        def one_pass() -> int:
            for hands, rulesets in packed:
                compiled.check_packed(hands, rulesets)
            return total
    else:
        def one_pass() -> int:
            return engines.check_compiled(con).hands

    times: dict[int, list[float]] = {low: [], top: []}
    hands = 0
    for r in range(int(args.get("pairs", SCALING_PAIRS))):
        for th in ((low, top) if r % 2 == 0 else (top, low)):
            _pin(th, cpus)
            numba.set_num_threads(min(th, numba.config.NUMBA_NUM_THREADS))
            con.execute(f"SET threads = {th}")
            t0 = time.perf_counter()
            hands = one_pass()
            times[th].append(time.perf_counter() - t0)
    _pin(len(cpus), cpus)
    ratios = [a / b for a, b in zip(times[low], times[top])]
    return {
        "seconds": statistics.median(times[top]),
        "hands": hands,
        "ratio": statistics.median(ratios),
        "pairs": [[round(a, 3), round(b, 3)] for a, b in zip(times[low], times[top])],
    }


def _stage_compile(args: dict[str, Any]) -> dict[str, Any]:
    """The first use of the compiled code in this process (run with ``NUMBA_CACHE_DIR`` set by the
    caller): the reader, the bridge and the core on a few hands; seconds per part."""
    from spadework.analysis.engine import engines, loader
    from spadework.parsers.db import connect

    t0, c0 = time.perf_counter(), time.process_time()
    import spadework.analysis.engine.kernels  # noqa: F401
    import spadework.analysis.engine.storage  # noqa: F401
    import spadework.parsers.jsonl_scan  # noqa: F401

    imports, imports_cpu = time.perf_counter() - t0, time.process_time() - c0
    loader.FAST_MIN_BYTES = 0
    con = connect(None)
    loader.TIMINGS = {}
    t, c = time.perf_counter(), time.process_time()
    loader.load_fast(con, [args["file"]])
    load, load_cpu = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    engines.check_compiled(con)
    check, check_cpu = time.perf_counter() - t, time.process_time() - c
    return {
        "seconds": load + check,  # the compiled code's first use (imports apart)
        "steps": {
            "imports": imports,
            "reader": load,
            "bridge and core": check,
            "imports (CPU)": imports_cpu,
            "reader (CPU)": load_cpu,
            "bridge and core (CPU)": check_cpu,
        },
    }


def openspiel_actions(obj: dict[str, Any]) -> list[int] | None:
    """The OpenSpiel ``spades`` action history of one canonical hand, or ``None`` when it has none.

    OpenSpiel deals action ``i`` to player ``i % 4``, takes the bids from player 0 and lets
    player 0 lead, so player ``p`` is our seat ``p`` places left of the dealer's left
    (the first bidder).  Cards: ``suit * 13 + rank`` (suits C D H S, ranks 2..A); a bid of
    ``n`` is ``52 + n`` (a blind nil is a nil: OpenSpiel has none).
    """
    seats = "NESW"
    try:
        first = (seats.index(obj["dealer"]) + 1) % 4
        deal = obj["deal"]
        order = [seats[(first + p) % 4] for p in range(4)]
        hands = [deal[s] for s in order]
        if any(len(h) != 13 for h in hands):
            return None
        acts = [_card_action(hands[i % 4][i // 4]) for i in range(52)]
        bids = {b["seat"]: b["bid"] for b in obj["bids"]}
        acts += [52 + (0 if bids[s] == "nil" else int(bids[s])) for s in order]
        tricks = obj.get("tricks") or []
        if len(tricks) != 13:
            return None
        for t in tricks:
            acts += [_card_action(c) for c in t["cards"]]
        return acts if len(acts) == 108 else None
    except (KeyError, ValueError, TypeError, IndexError):
        return None


def _card_action(card: str) -> int:
    return "CDHS".index(card[1]) * 13 + "23456789TJQKA".index(card[0])


def _openspiel_strings(path: str, limit: int | None) -> tuple[list[str], int]:
    """OpenSpiel's serialized states of the hands of ``path`` it accepts (cached beside the file),
    and how many it skips."""
    import orjson
    import pyspiel

    cache = Path(f"{path}.openspiel{'' if limit is None else f'-{limit}'}.txt")
    if cache.exists():
        with open(cache, encoding="utf-8") as f:
            skipped = int(f.readline())
            return [s.replace(" ", "\n") for s in f.read().splitlines()], skipped
    game = pyspiel.load_game("spades")
    out: list[str] = []
    skipped = 0
    with open(path, "rb") as f:
        for i, line in enumerate(f):
            if limit is not None and i >= limit:
                break
            acts = openspiel_actions(orjson.loads(line))
            if acts is None:
                skipped += 1
                continue
            s = "\n".join(map(str, acts))
            out.append(s)
    # drop what OpenSpiel refuses (its bids: partners at most 13 together; illegal cards)
    ok = []
    for s in out:
        try:
            game.deserialize_state(s)
            ok.append(s)
        except Exception:  # pyspiel.SpielError
            skipped += 1
    with open(str(cache) + ".tmp", "w", encoding="utf-8") as f:
        f.write(f"{skipped}\n")
        f.writelines(s.replace("\n", " ") + "\n" for s in ok)
    os.replace(str(cache) + ".tmp", cache)
    return ok, skipped


def _stage_openspiel(args: dict[str, Any]) -> dict[str, Any]:
    import pyspiel

    game = pyspiel.load_game("spades")
    strings, skipped = _openspiel_strings(args["file"], args.get("limit"))
    deser = game.deserialize_state
    if args.get("apply"):
        histories = [list(map(int, s.split("\n"))) for s in strings]
        t0 = time.perf_counter()
        for h in histories:
            st = game.new_initial_state()
            for a in h:
                st.apply_action(a)
        return {"seconds": time.perf_counter() - t0, "hands": len(histories), "skipped": skipped}
    t0 = time.perf_counter()
    for s in strings:
        deser(s)
    return {"seconds": time.perf_counter() - t0, "hands": len(strings), "skipped": skipped}


STAGES = {
    "floor": _stage_floor,
    "validate": _stage_validate,
    "validate_ref": _stage_validate_ref,
    "prepare_db": _stage_prepare_db,
    "check": _stage_check,
    "db_floor": _stage_db_floor,
    "openspiel": _stage_openspiel,
    "compile": _stage_compile,
    "core": _stage_core,
    "scaling": _stage_scaling,
}


def _child(name: str, args_json: str) -> None:
    args = json.loads(args_json)
    if args.get("threads") == 1 and hasattr(os, "sched_setaffinity"):
        # one thread means one core: the pipelines' own threads (reader, writer, read-ahead) would
        # otherwise use the second core and "1 thread" would not be one
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    out = STAGES[name](args)
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # worker processes of the reference check on flagged games (largest one), reported apart
    out["rss_children_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    sys.stdout.write("\n" + json.dumps(out) + "\n")


def _run_stage(name: str, args: dict[str, Any]) -> dict[str, Any]:
    env = dict(os.environ)
    if args.get("package"):  # a copy of the package as pip installs it, with its own numba cache
        env.pop("NUMBA_CACHE_DIR", None)
        env["PYTHONPATH"] = args["package"]
    if args.get("numba_cache"):
        env["NUMBA_CACHE_DIR"] = args["numba_cache"]
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--stage", name, "--stage-args", json.dumps(args)],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"stage {name} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def source_copy(where: Path) -> Path:
    """The package's sources laid out as installed (``where/spadework/analysis``, ...), without any
    compiled cache: numba then finds nothing of the checkout's to load or copy."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("analysis", "parsers"):
        shutil.copytree(ROOT / folder, where / "spadework" / folder, ignore=ignore)
    return where


def installed_copy(where: Path, stages: dict[str, Any]) -> Path | None:
    """What ``pip install .`` leaves: the package copied to a build folder, compiled there by
    ``setup.py``'s hook (timed into ``stages["warm_at_build"]``), then copied to ``where/site``
    with new file times.  None (and a note) when the hook fails."""
    import importlib.util

    build, site = where / "build", where / "site"
    source_copy(build)
    spec = importlib.util.spec_from_file_location("spadework_setup", ROOT / "setup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    t0 = time.perf_counter()
    ok = mod.warm_build_copy(str(build))
    sec = time.perf_counter() - t0
    stages["warm_at_build"] = {"best": sec, "median": sec, "runs": [sec], "rss_mb": 0.0, "hands_per_s": None}
    if not ok:
        return None
    shutil.copytree(build, site, copy_function=shutil.copyfile)
    return site


def _measure(name: str, args: dict[str, Any], reps: int, hands: int) -> dict[str, Any]:
    runs = [_run_stage(name, args) for _ in range(reps)]
    secs = [r["seconds"] for r in runs]
    best = min(secs)
    out = {k: v for k, v in runs[0].items() if k not in ("seconds", "rss_mb", "rss_children_mb", "steps")}
    best_run = min(runs, key=lambda r: r["seconds"])
    if "steps" in best_run:
        out["steps"] = best_run["steps"]
    out.update(
        best=best,
        median=statistics.median(secs),
        runs=secs,
        rss_mb=max(r["rss_mb"] for r in runs),
        rss_children_mb=max(r.get("rss_children_mb", 0) for r in runs),
        hands_per_s=(out.get("hands") or hands) / best if best > 0 else None,
    )
    return out


# --- the whole benchmark ---------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    mem = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    import duckdb

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=str(ROOT)
        ).stdout.strip() or None
    except OSError:
        commit = None
    return {
        "cores": os.cpu_count(),
        "memory_gib": None if mem is None else round(mem, 1),
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
        "platform": platform.platform(),
        "commit": commit,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def run_benchmark(
    hands: int = DEFAULT_HANDS,
    reps: int = 2,
    *,
    threads: tuple[int, ...] = (1, 2),
    seed: int = 1,
    fault_rate: float = DEFAULT_FAULT_RATE,
    ref_hands: int = DEFAULT_REF_HANDS,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    openspiel: bool = True,
    presets: tuple[str, ...] = ("barmore", "nyc"),
    compile_time: bool = True,
    quiet: bool = False,
) -> dict[str, Any]:
    """Generate (or reuse) ``hands`` simulated hands (and as many of each of ``presets``) and measure
    every stage ``reps`` times.

    Returns ``{"hands", "file", "file_bytes", "machine", "date", "stages", "ratios",
    "targets"}``; ``stages`` maps ``name@threads`` to best/median seconds, hands per
    second, peak RSS in MiB and (where the stage reports them) seconds per ``steps``.
    ``ref_hands``: hands for the reference engine (0 = skip).
    """
    path = dataset(hands, seed, fault_rate, quiet=quiet)
    others = {p: dataset(hands, seed, fault_rate, quiet=quiet, rules=p) for p in presets}
    top, low = max(threads), min(threads)
    stages: dict[str, Any] = {}
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None

    def run(key: str, name: str, args: dict[str, Any], n: int, r: int = reps) -> None:
        if not quiet:
            print(f"  {key:<26}", end="", flush=True)
        res = _measure(name, args, r, n)
        stages[key] = res
        if not quiet:
            print(
                f" best {res['best']:8.2f}s  median {res['median']:8.2f}s  {res['hands_per_s'] or 0:>12,.0f} hands/s"
                f"  RSS {res['rss_mb']:7.0f} MiB",
                flush=True,
            )
            for step, sec in (res.get("steps") or {}).items():
                print(f"      {step:<32} {sec:8.2f}s", flush=True)

    base = {"file": str(path), "memory_limit": memory_limit}
    if not quiet:
        print(f"benchmark: {hands:,} hands, {path.stat().st_size / 1e6:,.0f} MB, {reps} repetition(s)")
    if compile_time:
        tiny = head_file(path, 200)
        cache = tempfile.mkdtemp(prefix="spadework-bench-numba-")
        try:
            # the sources alone (no __pycache__ the checkout's runs left), an empty NUMBA_CACHE_DIR
            fresh = {"file": str(tiny), "threads": top, "numba_cache": str(Path(cache) / "numba"), "package": str(source_copy(Path(cache) / "sources"))}
            run("compile_fresh@" + str(top), "compile", fresh, 200, 1)
            run("compile_cached@" + str(top), "compile", fresh, 200, 1)
            site = installed_copy(Path(cache) / "install", stages)
            if site is not None:
                run("compile_installed@" + str(top), "compile", {"file": str(tiny), "threads": top, "package": str(site)}, 200, 1)
                # the same install with a new, empty NUMBA_CACHE_DIR (a container, a CI job)
                run("compile_installed_cache_dir@" + str(top), "compile", {"file": str(tiny), "threads": top, "package": str(site), "numba_cache": str(Path(cache) / "job-numba")}, 200, 1)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    for t in threads:
        run(f"floor@{t}", "floor", {**base, "threads": t, "memory_limit": FLOOR_MEMORY_LIMIT}, hands)
    run(f"floor_count@{top}", "floor", {**base, "threads": top, "count": True, "memory_limit": FLOOR_MEMORY_LIMIT}, hands)
    for t in threads:
        run(f"validate@{t}", "validate", {**base, "threads": t}, hands)
    if hands > SMALL_HANDS:
        small = head_file(path, SMALL_HANDS)
        run(f"validate_small@{top}", "validate", {**base, "file": str(small), "threads": top}, SMALL_HANDS)
    for preset, other in others.items():
        run(f"validate_{preset}@{top}", "validate", {**base, "file": str(other), "threads": top}, hands)
    db = loaded_db(path, quiet=quiet)
    for t in threads:
        run(f"check@{t}", "check", {"db": str(db), "threads": t, "memory_limit": memory_limit}, hands)
    run(f"db_floor@{top}", "db_floor", {"db": str(db), "threads": top, "memory_limit": memory_limit}, hands)
    for t in threads:
        run(f"core@{t}", "core", {"db": str(db), "threads": t, "memory_limit": memory_limit}, hands)
    if top != low:
        for kind in ("core", "check"):
            pair_args = {"db": str(db), "kind": kind, "low": low, "top": top, "memory_limit": memory_limit}
            run(f"{kind}_pairs@{top}", "scaling", pair_args, hands, 1)
    if ref_hands:
        n_ref = min(ref_hands, hands)
        small = head_file(path, n_ref)
        run(f"validate_ref@{top}", "validate_ref", {"file": str(small), "threads": top, "memory_limit": None}, n_ref, 1)
        small_db = loaded_db(small, quiet=True)
        run(f"check_ref@{top}", "check", {"db": str(small_db), "threads": top, "ref": True}, n_ref, 1)
    if openspiel:
        try:
            import pyspiel  # noqa: F401

            run("openspiel_deserialize@1", "openspiel", {"file": str(path)}, hands)
            n_apply = min(hands, 100_000)
            run("openspiel_apply@1", "openspiel", {"file": str(path), "apply": True, "limit": n_apply}, n_apply, 1)
        except ImportError:
            if not quiet:
                print("  openspiel: not installed, skipped")
    m = machine()
    m["load_average_before"] = load_before
    result = {
        "hands": hands,
        "file": str(path),
        "file_bytes": path.stat().st_size,
        "reps": reps,
        "memory_limit": memory_limit,
        "fault_rate": fault_rate,
        "machine": m,
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "stages": stages,
    }
    result["ratios"], result["targets"] = _ratios(stages, threads, presets)
    return result


def _ratios(
    stages: dict[str, Any], threads: tuple[int, ...], presets: tuple[str, ...] = ()
) -> tuple[dict[str, float], dict[str, bool]]:
    """The ratios and the targets of issue 13 item 6 (moonshots reported as ratios)."""
    top, low = max(threads), min(threads)
    r: dict[str, float] = {}
    t: dict[str, bool] = {}

    def best(key: str) -> float | None:
        return stages[key]["best"] if key in stages else None

    v, f, fc = best(f"validate@{top}"), best(f"floor@{top}"), best(f"floor_count@{top}")
    if v and f:
        r["validate / floor"] = v / f
        t["validate <= 1.5x the floor (moonshot 1.2x)"] = v / f <= 1.5
    if v and fc:
        r["validate / floor_count"] = v / fc
    c, o = best(f"check@{top}"), best("openspiel_deserialize@1")
    if c and o:
        hc = stages[f"check@{top}"]["hands_per_s"]
        ho = stages["openspiel_deserialize@1"]["hands_per_s"]
        r["check (database to database) hands/s / OpenSpiel deserialize hands/s"] = hc / ho
        if f"core@{top}" in stages:
            hk = stages[f"core@{top}"]["hands_per_s"]
            r["core (in memory, as OpenSpiel) hands/s / OpenSpiel deserialize hands/s"] = hk / ho
            t["check >= 5x OpenSpiel's C++ (moonshot 10x): the core in memory"] = hk >= 5 * ho
        t["check >= 5x OpenSpiel's C++: database to database"] = hc >= 5 * ho
        if f"db_floor@{top}" in stages:
            fl = stages[f"db_floor@{top}"]
            r["DuckDB's read and write alone (db_floor) hands/s / OpenSpiel deserialize hands/s"] = fl["hands_per_s"] / ho
            slower = max((fl.get("steps") or {}).values(), default=None)
            if slower:  # the most overlap could give: the larger of the two
                r["DuckDB's read or write, the larger, hands/s / OpenSpiel deserialize hands/s"] = fl["hands"] / slower / ho
    for name in ("validate", "check", "core", "floor"):
        a, b = best(f"{name}@{low}"), best(f"{name}@{top}")
        if a and b and top != low:
            r[f"{name} speedup {top} vs {low} threads"] = a / b
    for name in ("check", "core"):
        # the target is read from the pairs in one process where they ran (drift cancels out);
        # the ratio of the separate stages above is kept for comparison
        paired = stages.get(f"{name}_pairs@{top}")
        if paired and top != low:
            r[f"{name} speedup {top} vs {low} threads, paired in one process (median of {len(paired['pairs'])})"] = paired["ratio"]
            t[f"{name} on {top} threads >= 1.7x one"] = paired["ratio"] >= 1.7
        elif f"{name}@{top}" in stages and f"{name}@{low}" in stages and top != low:
            t[f"{name} on {top} threads >= 1.7x one"] = r[f"{name} speedup {top} vs {low} threads"] >= 1.7
    rss = max((s["rss_mb"] for k, s in stages.items() if k.startswith(("validate@", "check@", "validate_"))), default=None)
    if rss is not None:
        r["peak RSS MiB (compiled engine)"] = rss
        t["peak RSS < 1 GiB"] = rss < 1024
    small = stages.get(f"validate_small@{top}")
    if small and f"validate@{top}" in stages:
        r["peak RSS, all hands / 100k hands"] = stages[f"validate@{top}"]["rss_mb"] / small["rss_mb"]
    for preset in presets:
        x = best(f"validate_{preset}@{top}")
        if x and v:
            r[f"validate {preset} / standard"] = x / v
            t[f"{preset} within 1.3x of standard"] = x / v <= 1.3
    cf, cc = stages.get(f"compile_fresh@{top}"), stages.get(f"compile_cached@{top}")
    if cf and cc:
        r["first use of the reader and the core, empty numba cache (s)"] = cf["best"]
        r["first use of the reader and the core, cached (s)"] = cc["best"]
        core_fresh = cf["steps"]["bridge and core"]
        core_cached = cc["steps"]["bridge and core"]
        r["first use of the core (bridge and kernels), empty cache (s)"] = core_fresh
        r["first use of the core, cached (s)"] = core_cached
        ci = stages.get(f"compile_installed@{top}")
        wb = stages.get("warm_at_build")
        if wb:
            r["compile at install (setup.py's hook, once per install) (s)"] = wb["best"]
        if ci:
            r["first use of the reader and the core after install (s)"] = ci["best"]
            r["first use of the core after install (s)"] = ci["steps"]["bridge and core"]
            t["core compile <= 3 s at first use after install"] = ci["steps"]["bridge and core"] <= 3.0
        cd = stages.get(f"compile_installed_cache_dir@{top}")
        if cd:
            r["first use of the reader and the core after install, new NUMBA_CACHE_DIR (s)"] = cd["best"]
            t["core compile <= 3 s after install, new NUMBA_CACHE_DIR"] = cd["steps"]["bridge and core"] <= 3.0
        t["core compile <= 3 s with an empty cache (no install step)"] = core_fresh <= 3.0
        t["core <= 0.5 s cached"] = core_cached <= 0.5
        t["reader and core <= 0.5 s cached"] = cc["best"] <= 0.5
    vr = stages.get(f"validate_ref@{top}")
    if vr and v:
        r["validate hands/s / reference hands/s"] = stages[f"validate@{top}"]["hands_per_s"] / vr["hands_per_s"]
    return r, t


def format_results(result: dict[str, Any], command: str) -> str:
    """The Markdown section appended to results.md."""
    m = result["machine"]
    lines = [
        f"## {result['date']}: {result['hands']:,} hands ({result['file_bytes'] / 1e9:.2f} GB)",
        "",
        f"`{command}`  ",
        f"machine: {m['cores']} cores, {m['memory_gib']} GiB, {m['platform']}, Python {m['python']}, "
        f"DuckDB {m['duckdb']}, commit {m['commit']}, load average before {m.get('load_average_before')}, "
        f"at the end {m['load_average']}  ",
        f"repetitions: {result['reps']} (best and median); DuckDB memory_limit {result['memory_limit']}; "
        f"planted fault rate {result['fault_rate']:g} per hand",
        "",
        "| stage | threads | best s | median s | hands/s | peak RSS MiB | worker RSS MiB | notes |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for key, s in result["stages"].items():
        name, _, th = key.partition("@")
        notes = []
        for k in ("hands", "findings", "games", "reference_games", "python_lines", "skipped", "rows"):
            if k in s:
                notes.append(f"{k} {s[k]:,}")
        notes += [f"{step} {sec:.2f}s" for step, sec in (s.get("steps") or {}).items()]
        if s.get("pairs"):
            notes.append(f"ratio {s['ratio']:.2f} (median); pairs " + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in s["pairs"]) + " s")
        if s.get("passes"):
            notes.append("passes " + " / ".join(f"{x:.2f}" for x in s["passes"]) + " s (one run; the median counts)")
        lines.append(
            f"| {name} | {th} | {s['best']:.2f} | {s['median']:.2f} | {s['hands_per_s'] or 0:,.0f} | "
            f"{s['rss_mb']:,.0f} | {s.get('rss_children_mb', 0):,.0f} | {', '.join(notes)} |"
        )
    lines += ["", "| ratio | value |", "|---|---:|"]
    for k, v in result["ratios"].items():
        lines.append(f"| {k} | {v:,.2f} |")
    lines += ["", "| target | met |", "|---|---|"]
    for k, v in result["targets"].items():
        lines.append(f"| {k} | {'yes' if v else 'NO'} |")
    return "\n".join(lines) + "\n\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: ``bench_validate.py [--hands N] [--reps R] ...``; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hands", type=int, default=DEFAULT_HANDS, help=f"hands to generate and validate (default {DEFAULT_HANDS:,})")
    p.add_argument("--reps", type=int, default=2, help="repetitions of each stage (best and median are reported)")
    p.add_argument("--threads", default="1,2", help="thread counts to compare (DuckDB's and numba's; default 1,2)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--fault-rate", type=float, default=DEFAULT_FAULT_RATE, help="planted faults per hand")
    p.add_argument("--ref-hands", type=int, default=DEFAULT_REF_HANDS, help="hands for the reference path (0 = skip)")
    p.add_argument("--memory-limit", default=DEFAULT_MEMORY_LIMIT, help="DuckDB memory_limit of the compiled engine")
    p.add_argument("--no-openspiel", action="store_true")
    p.add_argument("--presets", default="barmore,nyc", help="other rulesets to validate a season of (default barmore,nyc; '' = none)")
    p.add_argument("--no-compile", action="store_true", help="skip the first-use compile measurements")
    p.add_argument("--record", action="store_true", help="append the results to tests/benchmarks/results.md (tracked in git)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--stage", help=argparse.SUPPRESS)
    p.add_argument("--stage-args", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.stage:
        _child(a.stage, a.stage_args)
        return 0
    threads = tuple(sorted({int(x) for x in a.threads.split(",")}))
    result = run_benchmark(
        a.hands,
        a.reps,
        threads=threads,
        seed=a.seed,
        fault_rate=a.fault_rate,
        ref_hands=a.ref_hands,
        memory_limit=a.memory_limit,
        openspiel=not a.no_openspiel,
        presets=tuple(x for x in a.presets.split(",") if x),
        compile_time=not a.no_compile,
        quiet=a.json,
    )
    command = "python tests/benchmarks/bench_validate.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        print()
        for k, v in result["ratios"].items():
            print(f"  {k:<48} {v:10.2f}")
        for k, v in result["targets"].items():
            print(f"  target: {k:<48} {'met' if v else 'NOT met'}")
    if a.record:
        with open(RESULTS, "a", encoding="utf-8") as f:
            if RESULTS.stat().st_size == 0 if RESULTS.exists() else True:
                f.write("# Benchmark results (appended by tests/benchmarks/bench_validate.py)\n\n")
            f.write(format_results(result, command.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
