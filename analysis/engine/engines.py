"""The engines: one protocol, two implementations, chosen inside the library.

An :class:`Engine` loads logs into a database, checks a loaded database (filling the derived
tables), or does both (``validate``), with the same arguments and results whichever it is:

- ``reference``: the readable implementation: :func:`spadework.parsers.db.load_files` (the Python
  parser, record by record) and :func:`spadework.analysis.engine.checker.check_db` (the replay and
  scorer in Python, hand by hand);
- ``compiled``: :func:`spadework.analysis.engine.loader.load_fast` (canonical JSON Lines read by
  compiled code, every line it cannot prove it reads the same way by the Python parser) and
  :func:`check_compiled` (the compiled core over stored rows, in partitions of whole games; the
  reference writes the message text of the few hands with findings).  Same rows, same findings;
  tested against the reference (``tests/test_engines.py``).

:func:`get_engine` looks one up by name (``auto``, ``reference``, ``compiled``; the command line's
older names ``replay`` and ``fast`` are the same two), ``auto`` choosing by the size of the work.
:func:`limit_memory` applies a DuckDB memory limit (:func:`memory_bytes` reads sizes such as
``448MB``).  docs/PERFORMANCE.md has the design and the measurements.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from spadework.analysis.engine.checker import CheckSummary, check_db
from spadework.analysis.engine.findings import ErrorPolicy
from spadework.analysis.engine.rules import get_ruleset
from spadework.parsers.db import LoadSummary, load_files

Paths = Iterable[str | os.PathLike[str]]

AUTO_COMPILED_BYTES = 2 * 1024 * 1024
"""``auto`` takes the compiled engine when the logs named add up to this many bytes or more."""
AUTO_COMPILED_HANDS = 3_000
"""``auto`` checks a database with the compiled engine when it holds this many hands or more."""
COMPILED_MEMORY_LIMIT = "128MB"
"""DuckDB's memory limit under the compiled engine unless the caller sets one (spilling to a
private folder beyond it).  Peak memory of a 1M-hand validate is about 0.66 GiB with it and the
reader's 16 MB blocks (0.85 GiB with 192MB and 32 MB blocks, in the same wall time; a database to
database check 0.67 against 0.73-0.76 GiB, no slower; 300,000 hands each with a 300-byte extension
0.72 against 0.90 GiB).  Before: 0.87 GiB with 192MB (0.93 GiB
with 256MB, in the same wall time, paired; 1.06 GiB with 384MB once the loader's writer held a
row group of each table: DuckDB keeps an open transaction's rows outside its limit).  The margin
under 1 GiB is for wider lines than the simulator's: 1M hands each with a 300-byte extension
peaked at 1.02 GiB with 256MB, 0.96 GiB with 192MB."""
READER_MEMORY_LIMIT = "640MB"
"""DuckDB's memory limit for the readers of a checked database (report, stats, standings, the
notebooks' ``open_database``), spilling to a private folder beyond it.  Without it DuckDB takes up
to 80% of the machine for the metrics' intermediate tables: the report of a 100,000-hand season
peaked at 1.9 GiB, capped at 0.9 GiB (10% slower); 38,000 hands 0.98 -> 0.84 GiB."""
MIN_MEMORY_LIMIT = 128 * 1000**2
"""The smallest memory limit accepted (below it DuckDB runs out of memory on small files)."""
PART_HANDS = 40_000
"""Hands checked per partition by the compiled engine (whole games; memory stays flat).  About 3 KB a
hand are in flight (the partition read ahead, the one checked, the derived rows written): checking a
1M-hand database peaked at 995 MiB with 80,000, 828 MiB with 40,000 (0.95x the wall time, paired) and
703 MiB with 20,000 (1.07x)."""


class Engine(Protocol):
    """What every engine does.  All three raise ``FileNotFoundError`` for a missing path, ``ValueError``
    for an unknown format, :class:`~spadework.analysis.engine.rules.RulesError` for bad rules."""

    name: str
    memory_limit: str | None
    """The DuckDB memory limit the engine runs best under (``None``: DuckDB's default)."""

    def load(self, con, paths: Paths, fmt: str | None = None, progress: bool = False) -> LoadSummary:
        """Load files and folders (the loaded tables, ``load_errors``, ``load_warnings``)."""

    def check(
        self, con, rules: Any = None, policy: ErrorPolicy | str = "collect", progress: bool = False
    ) -> CheckSummary:
        """Check every loaded hand and replace the derived tables."""

    def validate(
        self, con, paths: Paths, rules: Any = None, fmt: str | None = None, progress: bool = False
    ) -> tuple[LoadSummary, CheckSummary]:
        """Load, then check: what ``spadework validate`` does."""


@dataclass(frozen=True)
class ReferenceEngine:
    """The Python parser and the reference checker (:func:`~spadework.parsers.db.load_files`,
    :func:`~spadework.analysis.engine.checker.check_db`)."""

    name: str = "reference"
    memory_limit: str | None = None

    def load(self, con, paths: Paths, fmt: str | None = None, progress: bool = False) -> LoadSummary:
        return load_files(con, paths, fmt=fmt, progress=progress)

    def check(self, con, rules: Any = None, policy: ErrorPolicy | str = "collect", progress: bool = False) -> CheckSummary:
        return check_db(con, rules=rules, policy=policy, progress=progress)

    def validate(self, con, paths: Paths, rules: Any = None, fmt: str | None = None, progress: bool = False):
        if rules is not None:
            get_ruleset(rules)  # fail before loading
        loaded = self.load(con, paths, fmt, progress)
        return loaded, self.check(con, rules, progress=progress)


@dataclass(frozen=True)
class CompiledEngine:
    """The compiled loader and core (:func:`~spadework.analysis.engine.loader.load_fast`,
    :func:`check_compiled`)."""

    name: str = "compiled"
    memory_limit: str | None = COMPILED_MEMORY_LIMIT

    def load(self, con, paths: Paths, fmt: str | None = None, progress: bool = False) -> LoadSummary:
        from spadework.analysis.engine.loader import load_fast

        return load_fast(con, paths, fmt=fmt, progress=progress)

    def check(self, con, rules: Any = None, policy: ErrorPolicy | str = "collect", progress: bool = False) -> CheckSummary:
        return check_compiled(con, rules=rules, policy=policy, progress=progress)

    def validate(self, con, paths: Paths, rules: Any = None, fmt: str | None = None, progress: bool = False):
        """Load, then check; on a database holding no hands yet, the check runs while the logs load
        (:class:`~spadework.analysis.engine.storage.StreamCheck`: each block's whole games are checked
        as soon as they are read, nothing is read back), falling back to :func:`check_compiled`
        after the load whenever the stream cannot stand for the database (a line the Python parser
        read, a hand written twice, a game whose hands are not consecutive...)."""
        from spadework.analysis.engine.loader import load_fast
        from spadework.analysis.engine.storage import StreamCheck, in_transaction, reset_derived
        from spadework.parsers.db import ensure_storage
        from spadework.parsers.state import loaded_generation, mark_checked

        if rules is not None:
            get_ruleset(rules)  # fail before loading
        ensure_storage(con)
        fresh = con.execute("SELECT count(*) FROM hand_records").fetchall()[0][0] == 0
        stream = None
        if fresh:
            stream = StreamCheck(con, rules)
            in_transaction(con, lambda: reset_derived(con))
        with _pipeline_threads(con) if fresh else contextlib.nullcontext() as scan_threads:
            loaded = load_fast(con, paths, fmt=fmt, progress=progress, stream=stream, scan_threads=scan_threads)
            summary = stream.finish() if stream is not None else None
        if summary is None:
            return loaded, self.check(con, rules, progress=progress)
        in_transaction(con, lambda: mark_checked(con, loaded_generation(con)))
        STATS.clear()
        STATS.update(
            parts=0, streamed=True, games=summary.games, hands=summary.hands,
            reference_games=stream.reference_games, seconds=Counter(check=stream.seconds),
        )  # fmt: skip
        return loaded, summary


@contextlib.contextmanager
def _pipeline_threads(con):
    """Threads for a streaming validate, whose stages run at once: the reader thread scans a block
    while the main thread checks the one before and a writer thread inserts the one before that
    (``loader._Writer``).  The cores are shared: half (at least one) for the reader's scan, the
    rest (at least one) for DuckDB's inserts and numba's checks.  Measured at 1M hands on 2 cores: one thread each validates in 7.6-7.9 s of
    wall time; with the scan on 2 threads 8.9 s, with DuckDB and numba on 2 as well 10.5 s (the
    inserts alone went from 1.1 to 3.6 CPU-seconds, contending with the reader).  Yields the
    reader's thread count; the settings in force before are put back after."""
    import numba

    cores = os.cpu_count() or 1
    reader = max(1, cores // 2)
    rest = max(1, cores - reader)
    before_db = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    before_nb = numba.get_num_threads()
    con.execute(f"SET threads = {min(rest, int(before_db))}")
    numba.set_num_threads(min(rest, before_nb))
    try:
        yield min(reader, before_nb)
    finally:
        con.execute(f"SET threads = {int(before_db)}")
        numba.set_num_threads(before_nb)


REFERENCE = ReferenceEngine()
COMPILED = CompiledEngine()
ENGINES: dict[str, Engine] = {"reference": REFERENCE, "compiled": COMPILED}
ALIASES = {"replay": "reference", "fast": "compiled"}
"""The command line's first names of the engines."""
NAMES = ("auto", "reference", "compiled", "replay", "fast")
"""Every name :func:`get_engine` takes."""


def jit_disabled() -> bool:
    """True when numba is told not to compile (``NUMBA_DISABLE_JIT``, a debugging switch): the
    compiled engine cannot run, so ``auto`` takes the reference."""
    return os.environ.get("NUMBA_DISABLE_JIT", "").strip() not in ("", "0")


def get_engine(name: str = "auto", size: int | None = None, *, hands: int | None = None) -> Engine:
    """The engine called ``name`` (one of :data:`NAMES`).

    ``auto`` chooses by the work: the compiled engine for logs of :data:`AUTO_COMPILED_BYTES` or
    more (``size``: their bytes) or a database of :data:`AUTO_COMPILED_HANDS` hands or more
    (``hands``), the reference otherwise (where its start-up is shorter than the compiled
    engine's), and the reference whenever :func:`jit_disabled`.  Raises ``ValueError`` naming the
    engines for an unknown name, or for the compiled engine when numba's compiler is switched off.
    """
    key = ALIASES.get(name, name)
    if key == COMPILED.name and jit_disabled():
        raise ValueError(f"engine {name!r} needs numba's compiler, which NUMBA_DISABLE_JIT turns off: "
                         "use --engine reference, or unset NUMBA_DISABLE_JIT")  # fmt: skip
    if key in ENGINES:
        return ENGINES[key]
    if key != "auto":
        raise ValueError(f"unknown engine {name!r}: choose one of {', '.join(NAMES)}")
    if jit_disabled():
        return REFERENCE
    if size is not None and size >= AUTO_COMPILED_BYTES:
        return COMPILED
    if hands is not None and hands >= AUTO_COMPILED_HANDS:
        return COMPILED
    return REFERENCE


def logs_size(paths: Paths, stop_at: int | None = AUTO_COMPILED_BYTES) -> int:
    """Bytes of the files under ``paths`` (counting stops once ``stop_at`` is reached); a missing
    path counts nothing (the loader reports it)."""
    from spadework.parsers.io import path_list, readable_again, walk

    total = 0
    try:
        for f in walk(path_list(paths)):
            total += readable_again(f).stat().st_size  # a pipe: what it holds (it is copied once)
            if stop_at is not None and total >= stop_at:
                break
    except OSError:
        pass
    return total


def engine_for_logs(name: str, paths: Paths) -> Engine:
    """:func:`get_engine` for loading ``paths``."""
    return get_engine(name, logs_size(paths) if ALIASES.get(name, name) == "auto" else None)


def engine_for_db(name: str, con) -> Engine:
    """:func:`get_engine` for checking the database of ``con``."""
    if ALIASES.get(name, name) != "auto":
        return get_engine(name)
    return get_engine(name, hands=con.execute("SELECT count(*) FROM hands").fetchall()[0][0])


# --- memory -----------------------------------------------------------------------------------------

_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
          "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}  # fmt: skip


def memory_bytes(text: str) -> int | None:
    """``448MB`` -> 448,000,000; ``1.5GiB``; ``None`` for anything else (negative sizes included)."""
    import re

    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


class MemoryLimitError(ValueError):
    """A memory limit that is not a size, is under 128MB, or that DuckDB refuses: ``limit`` as given
    and ``reason``, a sentence."""

    def __init__(self, limit: str, reason: str) -> None:
        self.limit, self.reason = limit, reason
        super().__init__(f"memory limit {limit!r}: {reason}")


def limit_reader_memory(con) -> None:
    """Cap DuckDB's memory on a connection that reads a checked database (:data:`READER_MEMORY_LIMIT`)."""
    limit_memory(con, READER_MEMORY_LIMIT, REFERENCE)


def limit_memory(con, limit: str | None, engine: Engine) -> None:
    """Set DuckDB's memory limit to ``limit`` (default: the engine's own, if any), spilling to a
    private temporary folder removed at exit.  Raises :class:`MemoryLimitError` (a ``ValueError``)
    for a size that is not one or is under 128MB, or that DuckDB refuses."""
    import atexit
    import shutil
    import tempfile

    import duckdb

    if limit is None:
        limit = engine.memory_limit
    if limit is None:
        return
    size = memory_bytes(limit)
    if size is None:
        raise MemoryLimitError(limit, "give a size such as 448MB, 2GB or 1.5GiB")
    if size < MIN_MEMORY_LIMIT:
        raise MemoryLimitError(limit, "DuckDB needs at least 128MB to load and check logs")
    try:
        con.execute("SET memory_limit = ?", [limit]).fetchall()
    except duckdb.Error as exc:
        raise MemoryLimitError(limit, str(exc)) from None
    spill = tempfile.mkdtemp(prefix="spadework-spill-")
    atexit.register(shutil.rmtree, spill, True)
    con.execute("SET temp_directory = ?", [spill]).fetchall()


# --- the compiled check over a database ---------------------------------------------------------------

STATS: dict[str, Any] = {}
"""What the last compiled check did: ``parts`` read from the database (0 when ``streamed``: checked
while loading), ``games``, ``hands``, ``reference_games`` (checked whole by the reference),
``seconds`` per step (``read``, ``check``, ``write``)."""


def _partition_filters(con, total: int, parts: int) -> list[str]:
    """WHERE clauses that cut ``hand_records`` into about ``parts`` partitions of whole games.

    Where the games lie in runs of stored rows (a log is written game by game, and the loaders
    keep its order), the cuts are ranges of ``rowid``: DuckDB then reads each row group once (a
    filter on a hash of the game id made every partition scan the whole table: 1M hands in 13
    partitions, 1.75 against 0.59 CPU-seconds of reading).  Games interleaved with each other stay
    in one range; when that would make a partition more than twice the size asked for, the
    partitions are by a hash of the game id instead (any order of rows)."""
    if parts <= 1:
        return [""]
    hashed = [f"WHERE hash(game_id) % {parts} = {k}" for k in range(parts)]
    spans = con.execute("SELECT min(rowid), max(rowid), count(*) FROM hand_records GROUP BY game_id ORDER BY 1").fetchnumpy()
    lo, hi, n = (np.asarray(spans[c], dtype=np.int64) for c in spans)
    if len(lo) < 2:
        return hashed
    # a cut may go before game i when every game before it ends before it starts
    free = np.flatnonzero(np.maximum.accumulate(hi)[:-1] < lo[1:]) + 1
    before = np.cumsum(n)[free - 1]  # stored rows before each possible cut
    size = total / parts
    picked = np.unique(np.searchsorted(before, size * np.arange(1, parts)))
    picked = picked[picked < len(free)]
    edges = [0, *before[picked].tolist(), total]
    if max(b - a for a, b in zip(edges, edges[1:])) > 2 * size:
        return hashed
    at = lo[free[picked]].tolist()
    bounds = [None, *at, None]
    return [_where(a is not None and f"rowid >= {a}", b is not None and f"rowid < {b}") for a, b in zip(bounds, bounds[1:])]


def _where(*conditions) -> str:
    """A WHERE clause of the conditions given (false ones left out); "" when none is left, as for
    one partition that holds every row (interleaved games no cut can separate)."""
    kept = [c for c in conditions if c]
    return "WHERE " + " AND ".join(kept) if kept else ""


def check_db_threads() -> int:
    """DuckDB's threads while :func:`check_compiled` runs: a quarter of the cores, at least one
    (the partitions are read and written by threads of the check's own; numba's threads check)."""
    return max(1, (os.cpu_count() or 1) // 4)


def check_compiled(
    con,
    rules: Any = None,
    policy: ErrorPolicy | str = "collect",
    progress: Callable[[int, int], None] | bool | None = None,
    part_hands: int | None = None,
) -> CheckSummary:
    """Check every hand of a loaded database with the compiled core and REPLACE its derived tables,
    like :func:`spadework.analysis.engine.checker.check_db` (same arguments, rows, findings, summary).

    The stored rows are read in partitions of whole games (by a hash of the game id, about
    ``part_hands`` hands each, default :data:`PART_HANDS`) straight into Arrow, checked by
    :func:`spadework.analysis.engine.storage.check_part` and written back, each partition in its own
    transaction (memory stays flat); the last records the load generation the check covered
    (:mod:`spadework.parsers.state`), and a check that fails part way leaves the derived tables
    empty (``missing``).  ``policy="raise"``
    (stop at the first finding, in the reference's order) and a database in the plain layout are
    handed to :func:`check_db`.  ``progress`` is accepted for the CLI and ignored.
    Raises :class:`~spadework.analysis.engine.rules.RulesError` for bad ``rules``.
    """
    from spadework.analysis.engine.storage import RowGroupWriter, check_part, in_transaction, pack_table, reset_derived
    from spadework.parsers.schema import storage_layout
    from spadework.parsers.state import loaded_generation, mark_checked

    pol = ErrorPolicy.parse(policy)
    if pol is ErrorPolicy.RAISE or storage_layout(con) != "stored":
        return check_db(con, rules=rules, policy=pol, progress=progress)
    if rules is not None:
        get_ruleset(rules)
    generation = loaded_generation(con)
    # DuckDB's own worker threads contend with the core's: its inserts took 0.9 CPU-seconds per 1M
    # hands on 2 threads against 0.4 on 1, and the check on 2 cores ran 1.6x one core with DuckDB on
    # 2 threads, 1.7-1.8x with DuckDB on 1 (the reader and the writer are threads of their own anyway)
    db_threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    con.execute(f"SET threads = {min(db_threads, check_db_threads())}")
    w = con.cursor()
    reader = con.cursor()
    # every read of the stored rows in one transaction: one snapshot, and rowids that stay put (the
    # partitions are rowid ranges; DuckDB does not checkpoint, so cannot vacuum, while it is open)
    reader.begin()
    total = reader.execute("SELECT count(*) FROM hand_records").fetchall()[0][0]
    parts = max(1, -(-total // max(1, part_hands or PART_HANDS)))
    stats: dict[str, Any] = {"parts": parts, "streamed": False, "games": 0, "hands": 0, "reference_games": 0, "seconds": Counter()}
    found: list[tuple[str, list]] = []
    summary = CheckSummary()

    filters = _partition_filters(reader, total, parts)
    stats["parts"] = parts = len(filters)

    def read(k: int):
        """Partition ``k``'s stored rows, packed (runs a partition ahead, on its own cursor)."""
        t = time.perf_counter()
        table = reader.sql(f"SELECT * FROM hand_records {filters[k]}").to_arrow_table()
        t2 = time.perf_counter()
        packed = pack_table(table, rules)
        stats["seconds"].update(read=t2 - t, pack=time.perf_counter() - t2)
        return packed

    def part(packed, writer: RowGroupWriter) -> None:
        t = time.perf_counter()
        res = check_part(packed.table, rules, packed=packed)
        t2 = time.perf_counter()
        writer.submit(list(res.tables.items()))
        stats["seconds"].update(check=t2 - t, queue=time.perf_counter() - t2)
        summary.games += res.games
        summary.hands += res.hands
        stats["reference_games"] += res.reference_games
        found.extend(res.findings)

    writer: RowGroupWriter | None = None
    try:
        # the derived rows are written by a thread of their own, in whole row groups, each in its own
        # transaction (DuckDB holds a transaction's rows in memory); the derived tables count as
        # checked only once the last one is in (mark_checked), and a check that fails part way
        # leaves them empty
        in_transaction(w, lambda: reset_derived(w))
        writer = RowGroupWriter(con)
        # the next partition is read and packed while this one is checked and the one before is
        # written (DuckDB, numpy and the core release the GIL): the two cores overlap
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            ahead = pool.submit(read, 0)
            for k in range(parts):
                packed = ahead.result()
                if k + 1 < parts:
                    ahead = pool.submit(read, k + 1)
                part(packed, writer)
                del packed
        writer.drain()
        stats["seconds"]["write"] += writer.seconds
        if summary.hands != total:  # cannot happen: the partitions must hold every stored row once
            raise RuntimeError(f"check_compiled: the partitions held {summary.hands} of {total} stored hands")
        found.sort(key=lambda gf: gf[0])
        for gid, fs in found:
            summary.games_with_findings.append(gid)
            summary.findings.extend(fs)
            summary.by_code.update(f.code for f in fs)
        in_transaction(w, lambda: mark_checked(w, generation))
    except BaseException:
        if writer is not None:
            writer.abandon()  # what it still holds is not written
            writer.close()
            writer = None
        in_transaction(w, lambda: reset_derived(w))
        raise
    finally:
        if writer is not None:
            writer.close()
        w.close()
        reader.rollback()  # it only read
        reader.close()
        con.execute(f"SET threads = {db_threads}")
    stats["games"], stats["hands"] = summary.games, summary.hands
    STATS.clear()
    STATS.update(stats)
    return summary


__all__ = [
    "ALIASES",
    "AUTO_COMPILED_BYTES",
    "AUTO_COMPILED_HANDS",
    "COMPILED",
    "CompiledEngine",
    "ENGINES",
    "Engine",
    "MemoryLimitError",
    "jit_disabled",
    "NAMES",
    "REFERENCE",
    "ReferenceEngine",
    "STATS",
    "check_compiled",
    "engine_for_db",
    "engine_for_logs",
    "get_engine",
    "limit_memory",
    "logs_size",
    "memory_bytes",
]
