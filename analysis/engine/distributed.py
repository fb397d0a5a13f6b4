"""Validation over a Dask cluster: ``spadework validate LOGS --dask local|ADDRESS``.

The same load and check as the compiled engine (:data:`spadework.analysis.engine.engines.COMPILED`),
spread over the workers of a Dask cluster, with the same result: the same rows in every loaded
and derived table, the same ``load_errors``, the same findings, summary and exit status.  The
main process (the *driver*) lists the files and writes the DuckDB file; the workers read the logs
and check the games.  Three steps, each a set of Dask tasks:

1. **read** (one task per 32 MB byte range of a canonical JSON Lines file, per gzipped or
   UTF-16/32 JSON Lines file, or per group of other files): the compiled scanner
   (:mod:`spadework.parsers.jsonl_scan`, through the fast loader's block reader) reads every line
   it can prove the Python parser reads the same way, the Python parser reads the others; other
   formats (SPN, score sheets, small JSON Lines files...) are read by the Python parser, exactly as
   :func:`~spadework.analysis.engine.loader.load_fast` chooses.  Every hand (and every record out
   of the tables' range) goes to the partition ``fnv1a(game_id) % P`` (:func:`partition_of`): the
   task writes one Parquet file per partition into the shared folder (hands of a game spread
   over lines, blocks and files meet in one partition).  Line numbers are counted within the
   range; each range's first line is known once every range is read.
2. **settle and check** (one task per partition): the occurrences of each ``(game_id, hand)`` are
   settled in file and line order as the loaders settle them (the first in-range one is loaded;
   a later one "appears twice in this file", one already loaded from another file, or from an
   earlier load of the database, is rejected naming it; :func:`_settle`), then the partition's
   hands - whole games - are checked by :func:`~spadework.analysis.engine.storage.check_part`,
   the compiled core, and every table is written as a Parquet part.
3. **rejected lines** (only when a hand was rejected as a duplicate): the file is read again by
   the Python parser for those records' text, as the single-process loader does.

The driver then reads the Parquet parts into the database, the single writer: the loaded rows in
one transaction (:func:`~spadework.parsers.state.mark_loaded`), the derived tables in a second
(:func:`~spadework.parsers.state.mark_checked` of that generation), so ``report``, ``stats`` and the
metrics see a fresh database.  Nothing is written when a worker fails.

Requirements on a real cluster: every worker runs the same spadework (and numba, DuckDB, pyarrow)
as the driver, imports it as ``spadework``, and sees the logs and the working folder (``output``)
under the same absolute paths: a shared filesystem (NFS and the like).  Object stores (``s3://``)
are not supported.  docs/PERFORMANCE.md (section "Dask") has the measurements and what changes on
a real cluster.

API: :func:`validate_dask`, :func:`load_dask`, :func:`check_dask` (the :class:`DaskEngine`'s
``validate``, ``load`` and ``check``; same arguments and results as the other engines', plus the
cluster), :func:`dask_engine`.  Errors: :class:`DaskError` and its kinds (``RuntimeError``), whose text is a
sentence for the user; a worker's ``RulesError`` is raised as it is.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numba as nb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spadework.analysis.engine.checker import CheckSummary
from spadework.analysis.engine.findings import ErrorPolicy
from spadework.parsers.db import HAND_RECORDS, HAND_RECORDS_SCHEMA, FileResult, LoadSummary, file_aliases, no_hands_error
from spadework.parsers.numba_cache import depends
from spadework.parsers.io import path_list

depends(__file__)  # the cache's places (this module takes no values from others)

Paths = Iterable[str | os.PathLike[str]]

INSTALL_HINT = "pip install 'spadework[dask]'"
"""How to get Dask (the ``dask`` extra of spadework's package)."""
CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a scheduler before giving up."""
WORKER_WAIT = 120.0
"""Seconds a step's tasks may wait on a scheduler with no worker before giving up (an adaptive
cluster starts its workers once tasks are waiting: they have this long to come)."""
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
"""Address schemes of a scheduler (``inproc://``: a scheduler inside this process)."""
CHUNK_BYTES = 32 * 1024 * 1024
"""Largest byte range of a JSON Lines file read by one task (smaller when the logs are small, so
every worker gets work)."""
MIN_CHUNK_BYTES = 1024 * 1024
"""Smallest byte range of a JSON Lines file read by one task."""
PART_BYTES = 384 * 1000**2
"""Bytes of logs per partition (about 250,000 simulated hands; the check's memory stays flat)."""
PART_HANDS = 250_000
"""Hands already in the database per partition."""
FAILURE_WAIT = 60.0
"""Seconds to let the other tasks of a step finish after one failed (so none writes into the
working folder once it is removed)."""
COMPRESSION = "zstd"
"""Of every Parquet part (as fast to write and read as no compression here, a tenth smaller)."""

STATS: dict[str, Any] = {}
"""What the last run did: ``workers`` (threads), ``read_tasks``, ``partitions``, ``hands``,
``reference_games``, ``seconds`` per step (``read``, ``check``, ``rejected``, ``write``)."""

ROW = 0
"""``_kind`` of an occurrence holding a loadable hand."""
OUT_OF_RANGE = 1
"""``_kind`` of an occurrence whose numbers do not fit the tables (never loaded; settles like a hand)."""

_EXTRA = pa.schema(
    [
        ("_turn", pa.int32()),  # the file's turn in the load
        ("_chunk", pa.int32()),  # the piece of the file (line numbers are counted within it)
        ("_seq", pa.int64()),  # order within the piece: the line (JSON Lines) or the record's place in the stream
        ("_kind", pa.int8()),
        ("_raw", pa.string()),  # OUT_OF_RANGE: the load error's raw text
        ("_reason", pa.string()),  # OUT_OF_RANGE: why
        ("_warnings", pa.list_(pa.string())),
    ]
)
OCCURRENCE_SCHEMA = pa.schema(list(HAND_RECORDS_SCHEMA) + list(_EXTRA))
"""A hand (or out-of-range record) read from a log, on its way to its partition."""
ERROR_SCHEMA = pa.schema(
    [
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("message", pa.string()),
        ("raw", pa.string()),
        ("_turn", pa.int32()),
        ("_chunk", pa.int32()),
        ("_seq", pa.int64()),
        ("_defer", pa.bool_()),  # raw text to be read again once the line is known (see _needs_line)
    ]
)
WARNING_SCHEMA = pa.schema(
    [
        ("source_file", pa.string()),
        ("source_line", pa.int32()),
        ("game_id", pa.string()),
        ("hand", pa.int32()),
        ("message", pa.string()),
    ]
)


# --- errors -----------------------------------------------------------------------------------------


class DaskError(RuntimeError):
    """Validation over Dask could not run; ``str(exc)`` is a sentence for the user (it may hold
    brackets: print it without markup)."""


class DaskUnavailable(DaskError):
    """Dask (``dask.distributed``) is not installed."""

    def __init__(self) -> None:
        super().__init__(f"--dask needs Dask, which is not installed: {INSTALL_HINT}")


class SchedulerUnreachable(DaskError):
    """No Dask scheduler answers at ``address``."""

    def __init__(self, address: str, reason: str) -> None:
        self.address = address
        super().__init__(f"cannot reach the Dask scheduler at {address}: {reason}")


class WorkerFailed(DaskError):
    """A task raised on a worker; the message carries the worker's exception."""

    def __init__(self, step: str, exc: BaseException, hint: str = "") -> None:
        self.step = step
        self.exception = exc
        text = str(exc) or type(exc).__name__
        super().__init__(f"a Dask worker failed while {step}: {type(exc).__name__}: {text}{hint}")


# --- partitions by game -----------------------------------------------------------------------------


@nb.njit(cache=True, nogil=True)
def _fnv1a(offsets, data, parts, out):  # pragma: no cover - compiled
    for i in range(len(offsets) - 1):
        h = np.uint64(14695981039346656037)
        for k in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[k])) * np.uint64(1099511628211)
        out[i] = h % np.uint64(parts)


def partition_of(game_ids: pa.Array | pa.ChunkedArray, parts: int) -> np.ndarray:
    """The partition (0..``parts``-1, int64) of each game id: FNV-1a of its UTF-8 bytes modulo
    ``parts``; the same on every machine, so the hands of a game meet wherever they were read."""
    if isinstance(game_ids, pa.ChunkedArray):
        game_ids = game_ids.combine_chunks()
    n = len(game_ids)
    out = np.zeros(n, dtype=np.uint64)
    if n == 0 or parts <= 1:
        return out.astype(np.int64)
    arr = game_ids.cast(pa.large_string()) if game_ids.type != pa.large_string() else game_ids
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    _fnv1a(offsets, data, np.uint64(parts), out)
    return out.astype(np.int64)


# --- step 1: reading (workers) ---------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """What one reading task reads of one file.

    ``route``: ``"range"`` (bytes ``start``..``stop`` of a plain JSON Lines file, cut at line ends),
    ``"blocks"`` (a whole JSON Lines file that open_binary changes, gzipped, with a byte-order mark or
    lone-CR line ends: the fast loader's block
    reader, the Python loader if it fails part way), ``"python"`` (a whole file, by the Python loader).
    """

    turn: int
    chunk: int
    path: str
    source: str
    fmt: str | None
    route: str
    start: int = 0
    stop: int = 0


@dataclass
class ReadResult:
    """What a reading task reports: per piece (``chunk``) the lines counted (``"range"``) and the
    route taken (``"fast"`` or ``"python"``); per file (``turn``) the records and errors read;
    ``hands``: the hands among them."""

    lines: dict[int, int] = field(default_factory=dict)
    routes: dict[int, str] = field(default_factory=dict)
    items: Counter = field(default_factory=Counter)
    hands: int = 0


def _needs_line(rec) -> bool:
    """Whether a rejected record's load-error text depends on its line number: when the record has
    no text as written and JSON cannot carry one of its numbers, :func:`spadework.parsers.db.rejected_record`
    writes ``repr(rec)``."""
    from spadework.parsers.jsonl import dumps_record

    if rec.source_text is not None:
        return False
    try:
        dumps_record(rec)
    except (TypeError, ValueError):
        return True
    return False


class _Collector:
    """Occurrences and errors of one reading task, by partition."""

    def __init__(self) -> None:
        self.tables: list[pa.Table] = []
        self.rows: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []

    def error(self, piece: Piece, line: int | None, message: str, raw: str | None) -> None:
        self.errors.append(
            {"source_file": piece.source, "source_line": line or 0, "message": message, "raw": raw, "_turn": piece.turn,
             "_chunk": piece.chunk, "_seq": line or 0, "_defer": False}  # fmt: skip
        )

    def record(self, piece: Piece, seq: int, rec) -> bool:
        """Add a record the Python parser read; True when it is a hand that may load."""
        from spadework.parsers.db import INT_MAX, INT_MIN, hand_row, out_of_range, rejected_record

        problem = out_of_range(rec)
        extra = {"_turn": piece.turn, "_chunk": piece.chunk, "_seq": seq}
        if problem:
            err = rejected_record(rec, piece.source, problem)
            raw: str | None = err.raw
            if piece.route == "range" and _needs_line(rec):
                raw = None  # its text names its line, known once every range is read: read again later
            if not (isinstance(rec.hand, int) and INT_MIN <= rec.hand <= INT_MAX):
                self.errors.append(  # its hand number matches no hand: always rejected as out of range
                    {"source_file": err.source_file, "source_line": err.source_line, "message": err.message, "raw": raw,
                     "_turn": piece.turn, "_chunk": piece.chunk, "_seq": seq, "_defer": raw is None}  # fmt: skip
                )
                return False
            row = dict.fromkeys(HAND_RECORDS_SCHEMA.names)
            row.update(game_id=rec.game_id, hand=rec.hand, source_file=piece.source, source_line=rec.source_line)
            row.update(extra, _kind=OUT_OF_RANGE, _raw=raw, _reason=problem, _warnings=None)
        else:
            row = hand_row(rec, piece.source)
            row.update(extra, _kind=ROW, _raw=None, _reason=None, _warnings=list(rec.warnings) or None)
        self.rows.append(row)
        return not problem

    def fast(self, piece: Piece, columns: dict, lines: np.ndarray) -> None:
        """Add the hands the compiled scanner read (``columns``: hand_records columns)."""
        n = len(lines)
        cols = {}
        for f in HAND_RECORDS_SCHEMA:
            if f.name == "source_file":
                cols[f.name] = pa.repeat(pa.scalar(piece.source, pa.string()), n)
            else:
                cols[f.name] = columns[f.name].cast(f.type) if columns[f.name].type != f.type else columns[f.name]
        cols["_turn"] = pa.array(np.full(n, piece.turn, np.int32))
        cols["_chunk"] = pa.array(np.full(n, piece.chunk, np.int32))
        cols["_seq"] = pa.array(lines.astype(np.int64))
        cols["_kind"] = pa.array(np.full(n, ROW, np.int8))
        cols["_raw"] = pa.nulls(n, pa.string())
        cols["_reason"] = pa.nulls(n, pa.string())
        cols["_warnings"] = pa.nulls(n, pa.list_(pa.string()))
        self.tables.append(pa.table(cols, schema=OCCURRENCE_SCHEMA))

    def flush_rows(self) -> None:
        if self.rows:
            self.tables.append(pa.Table.from_pylist(self.rows, schema=OCCURRENCE_SCHEMA))
            self.rows = []

    def write(self, folder: str, task: int, parts: int) -> None:
        """One Parquet file per partition with occurrences (``part-P/r<task>.parquet``); the errors to
        partition ``task % parts`` (``part-P/e<task>.parquet``)."""
        self.flush_rows()
        if self.tables:
            occ = pa.concat_tables(self.tables)
            part = partition_of(occ.column("game_id"), parts)
            for p in np.unique(part).tolist():
                sub = occ.filter(pa.array(part == p))
                d = _subfolder(folder, "shuffle", f"part-{p}")
                pq.write_table(sub, os.path.join(d, f"r{task}.parquet"), compression=COMPRESSION)
        if self.errors:
            d = _subfolder(folder, "shuffle", f"part-{task % parts}")
            pq.write_table(pa.Table.from_pylist(self.errors, schema=ERROR_SCHEMA), os.path.join(d, f"e{task}.parquet"), compression=COMPRESSION)


def _subfolder(folder: str, *names: str) -> str:
    """``folder/names...``, created when missing; ``FileNotFoundError`` when ``folder`` itself is gone
    (the run ended: a task still running must not create it again)."""
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"the working folder {folder} is gone")
    d = os.path.join(folder, *names)
    os.makedirs(d, exist_ok=True)
    return d


_SCAN_LOCK = threading.Lock()
"""The scanner reads on all of numba's threads (``scan`` splits a block among them): one scan at a time per process."""


def _read_range(path: str, start: int, stop: int) -> bytes:
    """The whole lines of ``path`` that start in bytes ``start``..``stop`` (the line that begins
    before ``start`` belongs to the range before)."""
    with open(path, "rb") as f:
        s = 0
        if start > 0:
            f.seek(start - 1)
            s = start - 1 + len(f.readline())
        if s >= stop:
            return b""
        f.seek(s)
        data = f.read(stop - s)
        if data and not data.endswith(b"\n"):
            data += f.readline()
        return data


def _read_fast_block(piece: Piece, block, out: _Collector, res: ReadResult) -> None:
    from spadework.analysis.engine.loader import _parse_python, _scan_block

    with _SCAN_LOCK:
        sc = _scan_block(block)
    if sc.columns is not None:
        out.fast(piece, sc.columns, sc.lines[sc.fast])
        res.items[piece.turn] += len(sc.fast)
        res.hands += len(sc.fast)
    for j in sc.python.tolist():
        n = int(sc.lines[j])
        item = _parse_python(piece.source, n, block.raw(j))
        if item is None:
            continue
        res.items[piece.turn] += 1
        if hasattr(item, "message"):  # LoadError
            out.error(piece, item.source_line, item.message, item.raw)
        elif out.record(piece, n, item):
            res.hands += 1


def _read_python(piece: Piece, out: _Collector, res: ReadResult) -> None:
    from spadework.parsers import formats
    from spadework.parsers.db import _with_empty_check

    items = _with_empty_check(formats.load(piece.path, fmt=piece.fmt, source=piece.source), piece.path, piece.source)
    for seq, item in enumerate(items):
        res.items[piece.turn] += 1
        if hasattr(item, "message"):
            out.error(piece, item.source_line, item.message, item.raw)
        elif out.record(piece, seq, item):
            res.hands += 1
    res.routes[piece.chunk] = "python"


def read_pieces(pieces: list[Piece], folder: str, task: int, parts: int, threads: int = 1) -> ReadResult:
    """Read ``pieces`` (a worker's task) and write their hands, by partition, into ``folder``.

    Raises what reading raises (``OSError`` for a file that went away)."""
    from spadework.analysis.engine.loader import CHUNK_BYTES as BLOCK, _blocks, _split

    nb.set_num_threads(max(1, min(threads, nb.config.NUMBA_NUM_THREADS)))
    res = ReadResult()
    out = _Collector()
    for piece in pieces:
        if piece.route == "range":
            data = _read_range(piece.path, piece.start, piece.stop)
            if data:
                # the compiled reader takes a writable uint8 array (a read-only one is another type: a second compile)
                block = _split(np.frombuffer(bytearray(data), np.uint8), 1)
                res.lines[piece.chunk] = len(block.ends)
                _read_fast_block(piece, block, out, res)
            else:
                res.lines[piece.chunk] = 0
            res.routes[piece.chunk] = "fast"
        elif piece.route == "blocks":
            trial, trial_res = _Collector(), ReadResult()
            try:
                for block in _blocks(piece.path, BLOCK):
                    _read_fast_block(piece, block, trial, trial_res)
            except (OSError, EOFError):  # cut off or damaged: the Python loader says what is wrong
                _read_python(piece, out, res)
                continue
            trial.flush_rows()
            out.tables += trial.tables
            out.errors += trial.errors
            res.items.update(trial_res.items)
            res.hands += trial_res.hands
            res.routes[piece.chunk] = "fast"
        else:
            _read_python(piece, out, res)
        out.flush_rows()
    out.write(folder, task, parts)
    return res


# --- step 2: settle and check a partition (workers) --------------------------------------------------


@dataclass
class Rejection:
    """A hand the loaders would not load (a duplicate), whose load error needs the record's text:
    ``seq`` in its piece, the absolute ``line``, the ``message``."""

    turn: int
    chunk: int
    seq: int
    line: int | None
    message: str


@dataclass
class PartitionResult:
    """What settling and checking a partition reports (tables are written as Parquet parts)."""

    part: int
    files: dict[str, list[str]]  # table -> Parquet parts written
    counts: dict[int, list[int]]  # turn -> [hands, errors, warnings]
    rejections: list[Rejection]
    findings: list[tuple[str, list]]
    games: int = 0
    hands: int = 0
    reference_games: int = 0


def _read_parquets(d: str, prefix: str, schema: pa.Schema) -> pa.Table:
    if not os.path.isdir(d):
        return schema.empty_table()
    names = sorted(n for n in os.listdir(d) if n.startswith(prefix) and n.endswith(".parquet"))
    if not names:
        return schema.empty_table()
    return pa.concat_tables([pq.read_table(os.path.join(d, n), schema=schema) for n in names])


def _absolute(lines: pa.ChunkedArray, chunks: pa.ChunkedArray, bases: np.ndarray, dtype) -> pa.Array:
    """Line numbers counted within pieces, made absolute (nulls stay null)."""
    ch = chunks.to_numpy() if len(chunks) else np.zeros(0, np.int64)
    col = lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    vals = col.fill_null(0).to_numpy().astype(np.int64) + bases[ch]
    return pa.array(vals.astype(dtype), mask=~valid)


def _already(source: str, line) -> str:
    return f"is already loaded from {source}:{line}; not loaded again (load that file again to replace it, or give this game another id)"


def _settle(rows: list[dict], prior: list[tuple[str, Any, int | None]]) -> dict[int, str]:
    """Decide the occurrences of one ``(game_id, hand)``, in load order, as the loaders do.

    ``rows``: ``{"i", "_turn", "_kind", "source_file", "source_line", "game_id", "hand"}`` sorted by
    turn and place; ``prior``: ``(source, line, turn)`` of rows already in the database (``turn``:
    when this load replaces that file, ``None`` when it does not).  Returns ``{i: message}`` of the
    occurrences rejected (every occurrence of kind ``OUT_OF_RANGE`` is among them).
    """
    out: dict[int, str] = {}
    current: tuple[str, Any] | None = None
    for turn, group in itertools.groupby(rows, key=lambda r: r["_turn"]):
        live = [(s, ln) for s, ln, t in prior if t is None or t > turn]  # a file's old rows go at its turn
        seen = False  # an in-range occurrence met in this file
        first = None  # its line
        for r in group:
            if seen:
                where = f" (first at line {first})" if first is not None else ""
                out[r["i"]] = f"hand {r['hand']} of game {r['game_id']!r} appears twice in this file{where}"
            elif r["_kind"] == OUT_OF_RANGE:
                out[r["i"]] = r["_reason"]
            else:
                seen, first = True, r["source_line"]
                clash = live[0] if live else current
                if clash is not None:
                    out[r["i"]] = f"hand {r['hand']} of game {r['game_id']!r} " + _already(*clash)
                else:
                    current = (r["source_file"], r["source_line"])
    return out


def settle_and_check(
    part: int,
    folder: str,
    bases: np.ndarray,
    reloaded: dict[str, int],
    rules: Any = None,
    check: bool = True,
    load: bool = True,
    threads: int = 1,
) -> PartitionResult:
    """Settle the occurrences of partition ``part`` into loaded rows and load errors, check its games
    (``check``), and write every table as a Parquet part under ``folder/tables``.

    ``bases``: the first line of each piece minus one (by ``_chunk``); ``reloaded``: source ->
    turn of the files this load replaces (their rows in the database, ``folder/prior``, count until
    then).  Raises :class:`~spadework.analysis.engine.rules.RulesError` for bad ``rules``.
    """
    import duckdb

    from spadework.analysis.engine.storage import check_part

    nb.set_num_threads(max(1, min(threads, nb.config.NUMBA_NUM_THREADS)))
    d = os.path.join(folder, "shuffle", f"part-{part}")
    occ = _read_parquets(d, "r", OCCURRENCE_SCHEMA) if load else OCCURRENCE_SCHEMA.empty_table()
    errs = _read_parquets(d, "e", ERROR_SCHEMA) if load else ERROR_SCHEMA.empty_table()
    prior_path = os.path.join(folder, "prior", f"part-{part}.parquet")
    prior = pq.read_table(prior_path, schema=HAND_RECORDS_SCHEMA) if os.path.exists(prior_path) else HAND_RECORDS_SCHEMA.empty_table()
    counts: dict[int, list[int]] = {}

    def count(turn: int, k: int, n: int = 1) -> None:
        counts.setdefault(int(turn), [0, 0, 0])[k] += n

    # absolute line numbers
    occ = occ.set_column(
        occ.schema.get_field_index("source_line"), "source_line", _absolute(occ.column("source_line"), occ.column("_chunk"), bases, np.int32)
    )
    errs = errs.set_column(
        errs.schema.get_field_index("source_line"), "source_line", _absolute(errs.column("source_line"), errs.column("_chunk"), bases, np.int64)
    )
    for t in errs.column("_turn").to_pylist():
        count(t, 1)
    rejections: list[Rejection] = []
    deferred = errs.column("_defer").to_numpy(zero_copy_only=False) if errs.num_rows else np.zeros(0, bool)
    if deferred.any():
        for e in errs.filter(pa.array(deferred)).to_pylist():
            rejections.append(Rejection(e["_turn"], e["_chunk"], e["_seq"], e["source_line"], e["message"]))
        errs = errs.filter(pa.array(~deferred))
    occ = occ.sort_by([("_turn", "ascending"), ("_chunk", "ascending"), ("_seq", "ascending")])
    occ = occ.append_column("_i", pa.array(np.arange(occ.num_rows, dtype=np.int64)))
    # the keys that need settling: more than one occurrence, out of range, or already in the database
    con = duckdb.connect()
    con.register("occ", occ.select(["game_id", "hand", "_kind", "_i"]))
    con.register("prior", prior.select(["game_id", "hand", "source_file", "source_line"]))
    special = con.execute(
        "WITH k AS (SELECT game_id, hand FROM occ GROUP BY ALL HAVING count(*) > 1 OR max(_kind) > 0 "
        "UNION SELECT game_id, hand FROM occ SEMI JOIN prior USING (game_id, hand)) "
        "SELECT list(o._i ORDER BY o._i) FROM occ o JOIN k USING (game_id, hand) GROUP BY o.game_id, o.hand"
    ).fetchall()
    prior_of: dict[tuple[str, int], list] = {}
    if prior.num_rows and special:
        for g, h, s, ln in con.execute("SELECT game_id, hand, source_file, source_line FROM prior SEMI JOIN occ USING (game_id, hand)").fetchall():
            prior_of.setdefault((g, h), []).append((s, ln, reloaded.get(s)))
    con.close()
    rejected: dict[int, str] = {}
    if special:
        cols = ["_turn", "_kind", "source_file", "source_line", "game_id", "hand", "_reason"]
        idx = pa.array(sorted(i for (lst,) in special for i in lst))
        sub = occ.take(idx).select(cols).to_pylist()
        by_i = dict(zip(idx.to_pylist(), sub))
        for (lst,) in special:
            rows = [dict(by_i[i], i=i) for i in lst]
            rejected.update(_settle(rows, prior_of.get((rows[0]["game_id"], rows[0]["hand"]), [])))
    kinds = occ.column("_kind").to_numpy()
    keep = kinds == ROW
    extra_errors: list[dict] = []
    if rejected:
        ids = np.fromiter(rejected, dtype=np.int64)
        keep[ids] = False
        meta = occ.take(pa.array(ids)).select(["_turn", "_chunk", "_seq", "_kind", "source_file", "source_line", "_raw"]).to_pylist()
        for i, m in zip(ids.tolist(), meta):
            count(m["_turn"], 1)
            if m["_kind"] == OUT_OF_RANGE and m["_raw"] is not None:  # its text was kept when it was read
                extra_errors.append({"source_file": m["source_file"], "source_line": m["source_line"] or 0, "message": rejected[i], "raw": m["_raw"]})
            else:
                rejections.append(Rejection(m["_turn"], m["_chunk"], m["_seq"], m["source_line"], rejected[i]))
    loaded = occ.filter(pa.array(keep))
    for t, n in Counter(loaded.column("_turn").to_pylist()).items():
        count(t, 0, n)
    files: dict[str, list[str]] = {}

    def write(table: str, data: pa.Table) -> None:
        if data.num_rows == 0:
            return
        dd = _subfolder(folder, "tables", table)
        path = os.path.join(dd, f"part-{part}.parquet")
        pq.write_table(data, path, compression=COMPRESSION)
        files.setdefault(table, []).append(path)

    # load_warnings of the hands loaded
    warn = loaded.filter(pc.is_valid(loaded.column("_warnings")))
    if warn.num_rows:
        w_rows = []
        for r in warn.select(["source_file", "source_line", "game_id", "hand", "_warnings", "_turn"]).to_pylist():
            count(r["_turn"], 2, len(r["_warnings"]))
            for m in r["_warnings"]:
                w_rows.append({"source_file": r["source_file"], "source_line": r["source_line"], "game_id": r["game_id"], "hand": r["hand"], "message": m})
        write("load_warnings", pa.Table.from_pylist(w_rows, schema=WARNING_SCHEMA))
    errors = errs.select(["source_file", "source_line", "message", "raw"])
    if extra_errors:
        errors = pa.concat_tables([errors, pa.Table.from_pylist(extra_errors, schema=errors.schema)])
    write("load_errors", errors)
    stored = loaded.select(HAND_RECORDS_SCHEMA.names)
    write(HAND_RECORDS, stored)
    result = PartitionResult(part, files, counts, rejections, [])
    if check:
        kept = prior
        if prior.num_rows and reloaded:
            kept = prior.filter(pc.invert(pc.is_in(prior.column("source_file"), value_set=pa.array(list(reloaded), pa.string()))))
        table = pa.concat_tables([stored, kept]) if kept.num_rows else stored
        res = check_part(table, rules)
        for name, data in res.tables.items():
            write(name, data)
        result.findings = res.findings
        result.games, result.hands, result.reference_games = res.games, res.hands, res.reference_games
    return result


# --- step 3: the text of rejected duplicates (workers) ------------------------------------------------


def rejected_errors(path: str, source: str, fmt: str | None, route: str, wanted: list[Rejection]) -> list[tuple]:
    """The ``load_errors`` rows ``(source_file, source_line, message, raw)`` of the rejected hands
    ``wanted`` of one file: the record read again by the Python parser, as the loaders do."""
    from spadework.parsers.db import rejected_record

    out = []
    if route == "fast":  # JSON Lines: by line number
        from spadework.analysis.engine.loader import _parse_python
        from spadework.parsers.io import read_lines

        lines = {r.line: r for r in wanted}
        raws = read_lines(path, lines)
        for n, r in lines.items():
            rec = _parse_python(source, n, raws[n])
            e = rejected_record(rec, source, r.message)
            out.append((e.source_file, e.source_line, e.message, e.raw))
        return out
    from spadework.parsers import formats
    from spadework.parsers.db import _with_empty_check

    by_seq = {r.seq: r for r in wanted}
    items = _with_empty_check(formats.load(path, fmt=fmt, source=source), path, source)
    for seq, item in enumerate(items):
        if seq in by_seq:
            e = rejected_record(item, source, by_seq[seq].message)
            out.append((e.source_file, e.source_line, e.message, e.raw))
    return out


# --- the driver ------------------------------------------------------------------------------------


def _connect(address: Any):
    """``(client, close)`` for ``address``: ``"local"`` / ``"local:N"`` (a LocalCluster of N worker
    processes, one thread each; N defaults to the cores), a scheduler address, or a
    ``distributed.Client`` (used as it is)."""
    try:
        import distributed
    except ImportError:
        raise DaskUnavailable() from None
    if isinstance(address, distributed.Client):
        return address, lambda: None
    text = str(address).strip()
    if _is_local(text):
        n = os.cpu_count() or 1
        if ":" in text:
            try:
                n = int(text.split(":", 1)[1])
            except ValueError:
                raise DaskError(f"--dask {text!r}: give local, local:N (N worker processes) or a scheduler address") from None
            if n < 1:
                raise DaskError(f"--dask {text!r}: give at least one worker")
        cluster = distributed.LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
        )
        client = distributed.Client(cluster)

        def close() -> None:
            client.close()
            cluster.close()

        return client, close
    _check_address(text)
    client = _client(distributed, text)
    return client, client.close


def _is_local(text: str) -> bool:
    """``local`` or ``local:N``: a LocalCluster started here."""
    return text == "local" or text.startswith("local:")


def _check_address(text: str) -> None:
    """Raise :class:`DaskError` unless ``text`` can name a scheduler (``HOST:PORT`` or
    ``SCHEME://HOST:PORT`` with a scheme of :data:`SCHEMES`)."""
    scheme = text.split("://", 1)[0] if "://" in text else "tcp"
    if not text or scheme not in SCHEMES or not text.split("://", 1)[-1].strip(":/"):
        raise DaskError(
            f"--dask {text!r}: give local, local:N (N worker processes) or a scheduler's address, "
            f"HOST:PORT or {'|'.join(SCHEMES[:-1])}://HOST:PORT (a scheduler listens on port 8786 unless told otherwise)"
        )


def _client(distributed, address: str):
    """A client of the scheduler at ``address``, or :class:`SchedulerUnreachable` within about
    :data:`CONNECT_TIMEOUT` seconds.  The connection is made in a thread of its own and given up on
    when it does not come back in time: distributed's own timeout does not hold when something that
    is not a scheduler answers (the dashboard's port, a web server: dask/distributed#8071)."""
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = distributed.Client(address, timeout=CONNECT_TIMEOUT)
        except BaseException as exc:  # TLS without its settings, an unknown scheme: any error says why
            box["error"] = exc

    thread = threading.Thread(target=connect, name="spadework-dask-connect", daemon=True)
    thread.start()
    wait = CONNECT_TIMEOUT * 1.5 + 1
    thread.join(wait)
    if "client" in box:
        return box["client"]
    exc = box.get("error")
    if exc is None:  # still waiting: the thread is left behind (a daemon: it ends with the process)
        raise SchedulerUnreachable(
            address,
            f"no answer in {wait:g} s from a Dask scheduler (something else listens there? "
            "the dashboard's port, usually 8787, is not the scheduler's, usually 8786)",
        )
    raise SchedulerUnreachable(address, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


class _Bar:
    """The client's progress bar (rich, on standard error): reading, checking, writing."""

    def __init__(self, enabled: bool) -> None:
        self.progress = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("[bold]{task.description}[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[note]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True, emoji=False),
            transient=True,
        )
        self.progress.start()

    def step(self, name: str, total: int):
        if self.progress is None:
            return None
        return self.progress.add_task(name, total=total, note="")

    def advance(self, task, note: str = "") -> None:
        if self.progress is not None and task is not None:
            self.progress.update(task, advance=1, note=note)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _gather(client, futures: list, step: str, bar: _Bar, name: str, note=None, hint: str = "") -> list:
    """Results of ``futures`` in their order.  When one raises, the others of the step are left to
    finish (at most :data:`FAILURE_WAIT` seconds; a running task cannot be stopped, and the working
    folder is removed afterwards) and :class:`WorkerFailed` is raised; on an interrupt they are
    cancelled."""
    from distributed import wait

    from spadework.analysis.engine.rules import RulesError

    task = bar.step(name, len(futures))
    results: dict[Any, Any] = {}
    try:
        for fut in _completed(client, futures):
            try:
                results[fut.key] = fut.result()
            except Exception as exc:  # the worker's exception, re-raised here by distributed
                with contextlib.suppress(Exception):
                    wait(futures, timeout=FAILURE_WAIT)
                if isinstance(exc, RulesError):
                    raise
                raise WorkerFailed(step, exc, hint) from exc
            bar.advance(task, note(results[fut.key]) if note else "")
    except BaseException:
        client.cancel(futures)
        raise
    return [results[f.key] for f in futures]


def _completed(client, futures: list):
    """``futures`` as they finish.  Raises :class:`DaskError` when they have waited
    :data:`WORKER_WAIT` seconds on a scheduler with no worker (they would wait for ever)."""
    from distributed import wait

    pending = list(futures)
    idle = 0.0
    poll = min(2.0, WORKER_WAIT)
    while pending:
        try:
            done, not_done = wait(pending, timeout=poll, return_when="FIRST_COMPLETED")
        except TimeoutError:  # distributed's TimeoutError is the builtin one
            try:
                workers = client.scheduler_info().get("workers") or {}
            except Exception:  # the scheduler gone: the next wait says so
                workers = {"?": None}
            idle = idle + poll if not workers else 0.0
            if idle >= WORKER_WAIT:
                raise DaskError(
                    f"the Dask scheduler at {client.scheduler.address} has no worker (waited {WORKER_WAIT:g} s): "
                    f"start one with `dask worker {client.scheduler.address}`"
                ) from None
            continue
        yield from (f for f in pending if f in done)
        pending = [f for f in pending if f in not_done]


def _log_files(paths: list, fmt: str | None, summary: LoadSummary) -> list[tuple[str, str, str | None, str, int]]:
    """``(absolute path, source_file, format, route, bytes)`` of each log file in load order (the
    route as :func:`~spadework.analysis.engine.loader.load_fast` would take it; see :class:`Piece`).
    Raises ``FileNotFoundError`` for a missing path."""
    from spadework.analysis.engine.loader import FAST_MIN_BYTES, fast_format
    from spadework.parsers.db import log_files
    from spadework.parsers.io import reads_as_stored, walk

    files = []
    for path, source, file_fmt in log_files(paths, list(walk(paths)), fmt, summary):
        full = os.path.abspath(path)
        try:
            size = os.path.getsize(full)
        except OSError:
            size = 0
        route = "python"
        if file_fmt == "jsonl" and fast_format(path, file_fmt) and size >= FAST_MIN_BYTES:
            # byte ranges of the file itself only where every other reader sees those bytes too (not
            # gzip, no byte-order mark, no lone-CR line ends: open_binary changes those)
            try:
                route = "range" if reads_as_stored(full) else "blocks"
            except OSError:
                route = "blocks"
        files.append((full, source, file_fmt, route, size))
    return files


def _pieces(files: list[tuple[str, str, str | None, str, int]], chunk_bytes: int, threads: int) -> list[list[Piece]]:
    """The reading tasks: byte ranges of plain JSON Lines files (about four per thread, at most
    ``chunk_bytes``), whole files otherwise (small ones grouped); pieces numbered in file order."""
    ranged = sum(f[4] for f in files if f[3] == "range")
    step = max(1, min(chunk_bytes, max(MIN_CHUNK_BYTES, -(-ranged // max(1, 4 * threads)))))
    tasks: list[list[Piece]] = []
    group: list[Piece] = []
    group_bytes = 0
    chunk = 0
    for turn, (full, source, file_fmt, route, size) in enumerate(files):
        if route == "range":
            for start in range(0, max(size, 1), step):
                tasks.append([Piece(turn, chunk, full, source, file_fmt, "range", start, min(size, start + step))])
                chunk += 1
            continue
        piece = Piece(turn, chunk, full, source, file_fmt, route)
        chunk += 1
        if route == "blocks" or size >= step:
            tasks.append([piece])
            continue
        group.append(piece)
        group_bytes += size
        if group_bytes >= step or len(group) >= 256:
            tasks.append(group)
            group, group_bytes = [], 0
    if group:
        tasks.append(group)
    return tasks


def _export_prior(con, folder: str, parts: int) -> int:
    """Write the database's ``hand_records`` rows, by partition, to ``folder/prior``; returns how many."""
    reader = con.sql(f"SELECT * FROM {HAND_RECORDS}").to_arrow_reader(200_000)
    writers: dict[int, pq.ParquetWriter] = {}
    n = 0
    d = os.path.join(folder, "prior")
    os.makedirs(d, exist_ok=True)
    try:
        for batch in reader:
            table = pa.Table.from_batches([batch]).select(HAND_RECORDS_SCHEMA.names).cast(HAND_RECORDS_SCHEMA)
            n += table.num_rows
            part = partition_of(table.column("game_id"), parts)
            for p in np.unique(part).tolist():
                if p not in writers:
                    writers[p] = pq.ParquetWriter(os.path.join(d, f"part-{p}.parquet"), HAND_RECORDS_SCHEMA, compression=COMPRESSION)
                writers[p].write_table(table.filter(pa.array(part == p)))
    finally:
        for w in writers.values():
            w.close()
    return n


def _insert_parquet(con, table: str, files: list[str]) -> None:
    if files:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM read_parquet(?)", [files]).fetchall()


def _threads(client) -> int:
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # pragma: no cover - a scheduler without workers yet
        return 1


def _run(
    con,
    paths: Paths | None,
    *,
    rules: Any,
    fmt: str | None,
    progress: bool,
    address: Any,
    output: str | os.PathLike[str] | None,
    partitions: int | None,
    chunk_bytes: int,
    check: bool,
) -> tuple[LoadSummary | None, CheckSummary | None]:
    from spadework.analysis.engine.rules import get_ruleset
    from spadework.analysis.engine.storage import derived_tables, reset_derived
    from spadework.parsers.db import LoadError, _flush, _Batch, _forget_files, ensure_storage
    from spadework.parsers.state import loaded_generation, mark_checked, mark_loaded

    if rules is not None:
        get_ruleset(rules)  # fail before any work
    load = paths is not None
    ensure_storage(con)
    summary = LoadSummary()
    seconds: Counter = Counter()
    files = _log_files(path_list(paths), fmt, summary) if load else []
    bar = _Bar(progress)
    starting = bar.step("starting Dask" if str(address).startswith("local") else f"connecting to {address}", 1)
    try:
        client, close = _connect(address)
    except BaseException:
        bar.close()
        raise
    bar.advance(starting)
    base = str(output) if output is not None else tempfile.gettempdir()
    folder = os.path.join(os.path.abspath(base), f"spadework-dask-{uuid.uuid4().hex[:12]}")
    hint = "" if output is not None or not isinstance(address, str) or address.startswith("local") else (
        f" (the workers write into {folder}: give --dask-output a folder every worker sees)"
    )
    try:
        os.makedirs(folder)
        threads = _threads(client)
        tasks = _pieces(files, chunk_bytes, threads)
        total = sum(f[4] for f in files)
        prior_hands = con.execute(f"SELECT count(*) FROM {HAND_RECORDS}").fetchall()[0][0]
        parts = partitions or max(2 * threads, -(-total // PART_BYTES), -(-prior_hands // PART_HANDS))
        parts = max(1, int(parts))
        if prior_hands:
            _export_prior(con, folder, parts)
        per_worker = 1  # numba threads per task: the workers' threads run tasks side by side
        t0 = time.perf_counter()
        futures = [
            client.submit(read_pieces, t, folder, k, parts, per_worker, pure=False, key=f"spadework-read-{uuid.uuid4().hex}")
            for k, t in enumerate(tasks)
        ]
        read_hands = [0]

        def hands_read(r: ReadResult) -> str:
            read_hands[0] += r.hands
            return f"{read_hands[0]:,} hands"

        reads: list[ReadResult] = _gather(client, futures, "reading the logs", bar, "reading", hint=hint, note=hands_read)
        seconds["read"] = time.perf_counter() - t0
        n_chunks = sum(len(t) for t in tasks)
        bases = np.zeros(max(1, n_chunks), dtype=np.int64)
        lines = {c: n for r in reads for c, n in r.lines.items()}
        routes = {c: rt for r in reads for c, rt in r.routes.items()}
        items: Counter = Counter()
        for r in reads:
            items.update(r.items)
        chunk_turn = {p.chunk: p.turn for t in tasks for p in t}
        run = 0
        last_turn = None
        for c in range(n_chunks):  # chunks are numbered in file order
            if chunk_turn[c] != last_turn:
                run, last_turn = 0, chunk_turn[c]
            bases[c] = run
            run += lines.get(c, 0)
        reloaded = {f[1]: turn for turn, f in enumerate(files)}
        # a file loaded before under another name (another working directory) is replaced too
        reloaded.update({alias: reloaded[s] for alias, s in file_aliases(con, list(reloaded)).items()})
        t1 = time.perf_counter()
        futures = [
            client.submit(settle_and_check, p, folder, bases, reloaded, rules, check, load, per_worker, pure=False,
                          key=f"spadework-check-{uuid.uuid4().hex}")  # fmt: skip
            for p in range(parts)
        ]
        results: list[PartitionResult] = _gather(client, futures, "checking the games", bar, "checking", hint=hint)
        seconds["check"] = time.perf_counter() - t1
        # the text of rejected duplicates
        t2 = time.perf_counter()
        wanted: dict[int, list[Rejection]] = {}
        for res in results:
            for r in res.rejections:
                wanted.setdefault(r.turn, []).append(r)
        extra: list[LoadError] = []
        if wanted:
            first_chunk = {}
            for t in tasks:
                for p in t:
                    first_chunk.setdefault(p.turn, p.chunk)
            futures = [
                client.submit(rejected_errors, files[turn][0], files[turn][1], files[turn][2], routes.get(first_chunk[turn], "python"),
                              lst, pure=False, key=f"spadework-rejected-{uuid.uuid4().hex}")  # fmt: skip
                for turn, lst in sorted(wanted.items())
            ]
            for rows in _gather(client, futures, "reading rejected hands again", bar, "rejected"):
                extra.extend(LoadError(*row) for row in rows)
        seconds["rejected"] = time.perf_counter() - t2
        # the summary
        counts: dict[int, list[int]] = {}
        for res in results:
            for turn, c in res.counts.items():
                acc = counts.setdefault(turn, [0, 0, 0])
                for k in range(3):
                    acc[k] += c[k]
        for turn, (full, source, file_fmt, route, _) in enumerate(files):
            c = counts.get(turn, [0, 0, 0])
            result = FileResult(source, file_fmt, c[0], c[1], c[2])
            if route != "python" and items[turn] == 0:  # as the fast loader: a file with no hands is a load error
                extra.append(no_hands_error(full, source))
                result.errors += 1
            summary.files.append(result)
        # the single writer
        t3 = time.perf_counter()
        tables: dict[str, list[str]] = {}
        for res in results:
            for name, fs in res.files.items():
                tables.setdefault(name, []).extend(fs)
        if load:
            con.execute("BEGIN TRANSACTION")
            try:
                mark_loaded(con)
                _forget_files(con, [f[1] for f in files])
                for name in (HAND_RECORDS, "load_errors", "load_warnings"):
                    _insert_parquet(con, name, tables.get(name, []))
                _flush(con, _Batch(), extra)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        check_summary = None
        if check:
            generation = loaded_generation(con)
            con.execute("BEGIN TRANSACTION")
            try:
                reset_derived(con)
                for name in derived_tables(con):
                    _insert_parquet(con, name, tables.get(name, []))
                mark_checked(con, generation)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            check_summary = CheckSummary()
            found = sorted((gf for res in results for gf in res.findings), key=lambda gf: gf[0])
            for res in results:
                check_summary.games += res.games
                check_summary.hands += res.hands
            for gid, fs in found:
                check_summary.games_with_findings.append(gid)
                check_summary.findings.extend(fs)
                check_summary.by_code.update(f.code for f in fs)
        seconds["write"] = time.perf_counter() - t3
        STATS.clear()
        STATS.update(
            workers=threads,
            read_tasks=len(tasks),
            partitions=parts,
            hands=sum(r.hands for r in reads),
            reference_games=sum(r.reference_games for r in results),
            seconds=dict(seconds),
        )
        return (summary if load else None), check_summary
    finally:
        bar.close()
        with contextlib.suppress(Exception):
            close()  # a LocalCluster's workers stop first: nothing writes into the folder after
        shutil.rmtree(folder, ignore_errors=True)


def validate_dask(
    con,
    paths: Paths,
    rules: Any = None,
    fmt: str | None = None,
    progress: bool = False,
    *,
    address: Any = "local",
    output: str | os.PathLike[str] | None = None,
    partitions: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> tuple[LoadSummary, CheckSummary]:
    """Load and check logs over a Dask cluster: what ``spadework validate LOGS --dask ADDRESS`` does.

    The same rows in every table, the same :class:`~spadework.parsers.db.LoadSummary` and
    :class:`~spadework.analysis.engine.checker.CheckSummary` as the compiled engine's ``validate``
    (see the module doc for how).  ``address``: ``"local"`` (a LocalCluster of one worker process
    per core), ``"local:N"`` (N processes), a scheduler address (``tcp://host:8786``), or a
    ``distributed.Client``.  ``output``: the folder the workers write their Parquet parts into
    (removed afterwards; default: the system's temporary folder, which a cluster of other machines
    does not see); ``partitions``: how many (default: twice the workers' threads, more for large
    logs); ``chunk_bytes``: the largest byte range a task reads.

    Raises ``FileNotFoundError`` for a missing path, :class:`~spadework.analysis.engine.rules.RulesError`
    for bad ``rules``, :class:`DaskUnavailable`, :class:`SchedulerUnreachable`, :class:`WorkerFailed`
    (all :class:`DaskError`, a ``RuntimeError``).  When a worker fails (or the cluster cannot be
    reached) nothing is written; the loaded rows and the derived tables are each written in one
    transaction.
    """
    loaded, checked = _run(
        con, path_list(paths), rules=rules, fmt=fmt, progress=progress, address=address, output=output,
        partitions=partitions, chunk_bytes=chunk_bytes, check=True,
    )  # fmt: skip
    assert loaded is not None and checked is not None
    return loaded, checked


def load_dask(
    con,
    paths: Paths,
    fmt: str | None = None,
    progress: bool = False,
    *,
    address: Any = "local",
    output: str | os.PathLike[str] | None = None,
    partitions: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> LoadSummary:
    """Load logs over a Dask cluster (:func:`validate_dask` without the check); the same rows and
    summary as :func:`~spadework.parsers.db.load_files`."""
    loaded, _ = _run(
        con, path_list(paths), rules=None, fmt=fmt, progress=progress, address=address, output=output,
        partitions=partitions, chunk_bytes=chunk_bytes, check=False,
    )  # fmt: skip
    assert loaded is not None
    return loaded


def check_dask(
    con,
    rules: Any = None,
    policy: ErrorPolicy | str = "collect",
    progress: bool = False,
    *,
    address: Any = "local",
    output: str | os.PathLike[str] | None = None,
    partitions: int | None = None,
) -> CheckSummary:
    """Check a loaded database over a Dask cluster and replace its derived tables; the same rows and
    summary as :func:`~spadework.analysis.engine.engines.check_compiled`.  The stored hands go to the
    workers as Parquet parts by partition.  ``policy="raise"`` runs
    :func:`~spadework.analysis.engine.engines.check_compiled` here instead."""
    from spadework.analysis.engine.engines import check_compiled

    if ErrorPolicy.parse(policy) is ErrorPolicy.RAISE:
        return check_compiled(con, rules=rules, policy=policy)
    _, checked = _run(
        con, None, rules=rules, fmt=None, progress=progress, address=address, output=output,
        partitions=partitions, chunk_bytes=CHUNK_BYTES, check=True,
    )  # fmt: skip
    assert checked is not None
    return checked


@dataclass(frozen=True)
class DaskEngine:
    """The compiled engine over a Dask cluster (:func:`load_dask`, :func:`check_dask`,
    :func:`validate_dask`); an :class:`~spadework.analysis.engine.engines.Engine`."""

    address: Any = "local"
    output: str | None = None
    name: str = "dask"
    memory_limit: str | None = "384MB"
    """The driver's DuckDB limit (it only writes the parts the workers made)."""

    def load(self, con, paths: Paths, fmt: str | None = None, progress: bool = False) -> LoadSummary:
        return load_dask(con, paths, fmt, progress, address=self.address, output=self.output)

    def check(self, con, rules: Any = None, policy: ErrorPolicy | str = "collect", progress: bool = False) -> CheckSummary:
        return check_dask(con, rules, policy, progress, address=self.address, output=self.output)

    def validate(self, con, paths: Paths, rules: Any = None, fmt: str | None = None, progress: bool = False):
        return validate_dask(con, paths, rules, fmt, progress, address=self.address, output=self.output)


def dask_engine(address: str, output: str | os.PathLike[str] | None = None) -> DaskEngine:
    """The :class:`DaskEngine` for ``--dask ADDRESS [--dask-output FOLDER]``.  Raises
    :class:`DaskUnavailable` when Dask is not installed (before anything is loaded)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise DaskUnavailable() from None
    text = str(address).strip()
    if not _is_local(text):
        _check_address(text)  # before anything is loaded
    return DaskEngine(address, None if output is None else os.fspath(output))


__all__ = [
    "CHUNK_BYTES",
    "CONNECT_TIMEOUT",
    "DaskEngine",
    "DaskError",
    "DaskUnavailable",
    "INSTALL_HINT",
    "Piece",
    "STATS",
    "SchedulerUnreachable",
    "WorkerFailed",
    "check_dask",
    "dask_engine",
    "load_dask",
    "partition_of",
    "read_pieces",
    "rejected_errors",
    "settle_and_check",
    "validate_dask",
]
