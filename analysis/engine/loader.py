"""The fast loader: canonical JSON Lines read by compiled code, every other line by the Python parser.

:func:`load_fast` loads files and folders exactly as :func:`spadework.parsers.db.load_files` does
(same arguments, same :class:`~spadework.parsers.db.LoadSummary`, the same rows in ``hand_records``,
``load_errors`` and ``load_warnings``).  A ``.jsonl``/``.ndjson`` file (optionally gzipped) is read
in blocks of whole lines (:data:`CHUNK_BYTES`); :func:`spadework.parsers.jsonl_scan.scan` reads
each line it can prove the Python parser reads to the same record, in parallel, straight into the
packed ``hand_records`` columns (Arrow arrays built from numpy, inserted by DuckDB); every other
line (an extension key, a value of another type, an escape, invalid JSON...) is read by
:func:`spadework.parsers.jsonl._parse_line`, whose record or load error is written as the Python
loader writes it.  Every other file goes through the Python loader.

At the end of each file, the hands that appear twice, that are already loaded from another file,
or whose numbers do not fit the tables are settled in line order as
:func:`spadework.parsers.db.load_items` settles them (the few lines involved are read again by
Python for their messages).  Each block commits on its own (memory stays flat); on an error the
file's rows are removed again, and a file that fails part way (a truncated ``.gz``) is then read
by the Python loader, which says what is wrong.
"""

from __future__ import annotations

import os
import queue
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numba as nb
import numpy as np
import orjson
import pyarrow as pa

from spadework.parsers import formats, jsontext
from spadework.parsers.db import (
    HAND_RECORDS,
    INT_MAX,
    INT_MIN,
    FileResult,
    LoadSummary,
    _add_record,
    _Batch,
    _flush,
    _forget_file,
    _Loader,
    _Progress,
    _with_empty_check,
    appears_twice,
    ensure_storage,
    log_files,
    no_hands_error,
    out_of_range,
    rejected_record,
    row_keys,
)
from spadework.analysis.engine.storage import RowGroupWriter
from spadework.analysis.engine.storage import in_transaction as _in_transaction
from spadework.parsers.io import open_binary, path_list, read_lines, strip_gz, walk
from spadework.parsers.model import HandRecord, LoadError
from spadework.parsers.numba_cache import depends
from spadework.parsers.state import mark_loaded

depends(__file__)  # the cache's places (this module takes no values from others)

CHUNK_BYTES = 16 * 1024 * 1024
"""Bytes of whole lines read and scanned at a time (memory stays flat in the file size).  16 MB
since 2026-12-02 (32 MB before): with DuckDB's cap at 128MB, a 1M-hand validate peaked at 0.66 GiB
instead of 0.85 GiB, in the same wall time (three pairs: 0.99-1.06x), see docs/PERFORMANCE.md."""

FAST_MIN_BYTES = 256 * 1024
"""Files from this size on take the compiled path one by one (each its own transactions and SQL,
about 40 ms a file).  Smaller ones are scanned together by compiled code, :data:`SMALL_GROUP_BYTES`
at a time, and handed as ready rows to the Python loader's batching across files
(:class:`spadework.parsers.db._Loader`); a small file with a line only the Python parser reads
goes to that parser whole."""

STATS: dict[str, int] = {"chunks": 0, "fast_lines": 0, "python_lines": 0}
"""Counters of the last :func:`load_fast` call: blocks, lines read by compiled code, lines read by Python."""

TIMINGS: dict[str, float] | None = None
"""Set to a dict to collect wall seconds per step (for the benchmark and profiling)."""


def _timed(label: str):
    import time
    from contextlib import contextmanager

    @contextmanager
    def cm():
        if TIMINGS is None:
            yield
            return
        t = time.perf_counter()
        try:
            yield
        finally:
            TIMINGS[label] = TIMINGS.get(label, 0.0) + time.perf_counter() - t

    return cm()


class FastLoadError(RuntimeError):
    """The fast path met something it does not handle; the file is loaded by the Python loader instead."""


# --- blocks of lines ------------------------------------------------------------------------------


@dataclass
class _Block:
    """Whole lines of a file: ``data`` (a ``uint8`` array: the lines, then the newline of the last
    one or not), their ``starts``/``ends`` in it (ends exclude the newline) and the number of the
    first line."""

    data: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    first_line: int

    def raw(self, j: int) -> bytes:
        """Line ``j`` as the Python reader sees it (trailing CR and LF stripped)."""
        return self.data[self.starts[j] : self.ends[j]].tobytes().rstrip(b"\r\n")


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _newlines(buf, words, n, out):
    """Positions of the newlines of ``buf[:n]`` into ``out``; returns how many, or -1 when ``out``
    has no room for them all (nothing is written beyond it).  ``words``: ``buf``'s first bytes as
    ``uint64`` words (a view); a word without a newline byte is passed over whole (lines are a few
    hundred bytes long: the byte-by-byte loop cost 5% of a validate's CPU)."""
    k = 0
    room = len(out)
    ones = np.uint64(0x0101010101010101)
    highs = np.uint64(0x8080808080808080)
    nl = np.uint64(0x0A0A0A0A0A0A0A0A)
    start = 0
    for w in range(min(len(words), n // 8)):
        x = words[w] ^ nl  # a zero byte where buf has a newline
        if (x - ones) & ~x & highs:
            for i in range(8 * w, 8 * w + 8):
                if buf[i] == 10:
                    if k == room:
                        return -1
                    out[k] = i
                    k += 1
        start = 8 * w + 8
    for i in range(start, n):
        if buf[i] == 10:
            if k == room:
                return -1
            out[k] = i
            k += 1
    return k


def _words(data: np.ndarray) -> np.ndarray:
    """``data``'s whole 8-byte words as a ``uint64`` view (for :func:`_newlines`); none when ``data``
    does not start on an 8-byte boundary (its bytes are then read one by one)."""
    if data.ctypes.data % 8:
        return np.empty(0, np.uint64)
    return data[: len(data) - len(data) % 8].view(np.uint64)


def _split(data: np.ndarray, first_line: int) -> _Block:
    n = len(data)
    ends = np.empty(n // 64 + 16, np.int64)  # lines of a log are long; room for every byte when not
    words = _words(data)
    k = _newlines(data, words, n, ends)
    if k < 0:
        ends = np.empty(n + 1, np.int64)
        k = _newlines(data, words, n, ends)
    ends = ends[:k]
    if not n or data[n - 1] != 10:
        ends = np.append(ends, n)
    starts = np.empty_like(ends)
    if len(ends):
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
    return _Block(data, starts, ends, first_line)


_POOL = 4
"""Buffers a file is read into in turn: the block being written, the one waiting, the one being
read and scanned, and one spare (reading into buffers that stay mapped touches no new memory:
reading 1.5 GB into fresh objects cost about 2 CPU-seconds of page faults)."""


def _blocks(path: str | os.PathLike[str], chunk_bytes: int) -> Iterator[_Block]:
    """Cut a (possibly gzipped) file into blocks of whole lines, numbered from 1.

    Each block is a view of one of :data:`_POOL` buffers, valid until :data:`_POOL` - 1 more blocks
    have been taken (the pipeline of :func:`_load_jsonl_file` holds at most three)."""
    line = 1
    pool: list[np.ndarray | None] = [None] * _POOL
    turn = 0
    rest = np.empty(0, np.uint8)
    with open_binary(path) as f:
        while True:
            buf = pool[turn % _POOL]
            if buf is None or len(buf) < len(rest) + chunk_bytes:  # first use, or a line longer than a block
                buf = pool[turn % _POOL] = np.empty(len(rest) + chunk_bytes, np.uint8)
            buf[: len(rest)] = rest
            got = f.readinto(memoryview(buf)[len(rest) : len(rest) + chunk_bytes])
            if not got:
                break
            size = len(rest) + got
            nl = np.flatnonzero(buf[max(len(rest), size - 65536) : size] == 10) if size else []
            cut = (max(len(rest), size - 65536) + int(nl[-1])) if len(nl) else int(buf[:size].tobytes().rfind(b"\n"))
            if cut < 0:
                rest = buf[:size].copy()
                continue
            rest = buf[cut + 1 : size].copy()
            b = _split(buf[: cut + 1], line)
            line += len(b.ends)
            turn += 1
            yield b
    if len(rest):
        yield _split(rest, line)


def _prefetch(items: Iterator[Any], depth: int = 1) -> Iterator[Any]:
    """Run ``items`` in a thread, ``depth`` items ahead (reading and scanning the next block while
    DuckDB writes this one).  An exception in the thread is raised here, in order."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def run() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(done)
        except BaseException as exc:  # handed to the consumer
            q.put(exc)

    t = threading.Thread(target=run, name="spadework-blocks", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while t.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                pass
            t.join(timeout=0.05)


@dataclass
class _Scanned:
    """A block with what the compiled reader made of it."""

    block: _Block
    lines: np.ndarray  # the line number of each line of the block
    fast: np.ndarray  # indices (in the block) of the lines read by compiled code
    python: np.ndarray  # indices of the lines for the Python parser
    columns: dict | None  # hand_records columns of the fast lines
    scan: Any = None  # the scan itself (its per-hand arrays feed a validate's check)


def _scan_block(b: _Block, threads: int | None = None, columns: bool = True) -> _Scanned:
    """Scan a block; ``columns``: also make the ``hand_records`` columns (else :func:`_add_columns`
    makes them later, in the consumer's thread)."""
    from spadework.parsers import jsonl_scan

    with _timed("scan"):
        s = jsonl_scan.scan(b.data, b.starts, b.ends, threads)
    fast = np.flatnonzero(s.status == jsonl_scan.OK)
    python = np.flatnonzero(s.status == jsonl_scan.PYTHON)
    lines = b.first_line + np.arange(len(b.starts), dtype=np.int64)
    sc = _Scanned(b, lines, fast, python, None, s)
    if columns:
        _add_columns(sc)
    return sc


def _add_columns(sc: _Scanned) -> None:
    """Make the ``hand_records`` columns of the block's fast lines (once)."""
    from spadework.parsers import jsonl_scan

    if sc.columns is None and len(sc.fast):
        with _timed("columns"):
            cols = jsonl_scan.hand_columns(sc.block.data, sc.scan, sc.fast)
            cols["source_line"] = pa.array(sc.lines[sc.fast].astype(np.int32))
        sc.columns = cols


# --- one file -------------------------------------------------------------------------------------


@dataclass
class _FileState:
    """What one file's load has put aside for the end of the file (see :func:`_settle_file`).

    ``withheld``: ``(line, game_id, hand, other_file, other_line)`` of readable hands already
    loaded from another file (not written); ``out_of_range``: ``(line, game_id, hand)`` of
    records whose numbers do not fit the tables (not written).
    """

    others: bool
    withheld: list[tuple[int, str, int, str, int]] = field(default_factory=list)
    out_of_range: list[tuple[int, str, int]] = field(default_factory=list)


def _parse_python(source: str, n: int, raw: bytes) -> HandRecord | LoadError | None:
    from spadework.parsers.jsonl import _parse_line  # the Python parser's own per-line entry point

    return _parse_line(raw, source, n)


def _clashes(con, keys: pa.Table, source: str) -> list[tuple]:
    """``(game_id, hand, other file, other line)`` of ``keys`` (game_id, hand) loaded from another file."""
    con.register("_fl_keys", keys)
    try:
        return con.execute(
            f"SELECT k.game_id, k.hand, h.source_file, h.source_line FROM _fl_keys k "
            f"JOIN {HAND_RECORDS} h ON h.game_id = k.game_id AND h.hand = k.hand AND h.source_file <> $source",
            {"source": source},
        ).fetchall()
    finally:
        con.unregister("_fl_keys")


def _clashes_other_file(con, sc: _Scanned, source: str) -> bool:
    """True when a hand of the block's compiled-read lines is already loaded from another file
    (:func:`_write_block` then withholds it)."""
    if sc.columns is None:
        return False
    return bool(_clashes(con, pa.table({"game_id": sc.columns["game_id"], "hand": sc.columns["hand"]}), source))


def _write_block(con, sc: _Scanned, source: str, fs: _FileState, result: FileResult, stream=None) -> None:
    """Write a scanned block: the fast lines' rows, then what the Python parser makes of the others.
    ``stream``: a :class:`~spadework.analysis.engine.storage.StreamCheck` fed the rows written."""
    STATS["chunks"] += 1
    if sc.columns is not None:
        cols = sc.columns
        n = len(sc.fast)
        if fs.others:
            keys = pa.table({"game_id": cols["game_id"], "hand": cols["hand"]})
            clash = {(g, h): (f, ln) for g, h, f, ln in _clashes(con, keys, source)}
            if clash:
                games, hands = cols["game_id"].to_pylist(), cols["hand"].to_pylist()
                keep = np.ones(n, bool)
                for j, key in enumerate(zip(games, hands)):
                    other = clash.get(key)
                    if other is not None:
                        keep[j] = False
                        fs.withheld.append((int(sc.lines[sc.fast[j]]), key[0], key[1], other[0], other[1]))
                mask = pa.array(keep)
                cols = {k: v.filter(mask) for k, v in cols.items()}
                n = int(keep.sum())
                if stream is not None:
                    stream.invalidate()
        table = pa.table(cols)
        con.register("_fl_block", table)
        try:
            with _timed("insert"):
                con.execute(f"INSERT INTO {HAND_RECORDS} BY NAME SELECT *, $source AS source_file FROM _fl_block", {"source": source})
        finally:
            con.unregister("_fl_block")
        result.hands += n
        STATS["fast_lines"] += n
        if stream is not None and stream.valid:
            from spadework.analysis.engine.storage import scan_hands

            with _timed("check"):
                stream.feed(
                    table.append_column("source_file", _repeated(source, table.num_rows)),
                    hands=scan_hands(sc.scan, sc.fast),
                )
    if len(sc.python):
        if stream is not None:
            stream.invalidate()  # rows the compiled reader did not give: the check reads the database
        with _timed("python"):
            _write_python(con, sc, source, fs, result)


def _queue_block(writer: RowGroupWriter, sc: _Scanned, source: str, result: FileResult, stream) -> None:
    """:func:`_write_block` for a block whose every line was read by compiled code and none of
    whose hands is loaded from another file: its rows (and, in a streaming validate, the derived
    rows of the block's check, done here) are written by ``writer`` while the next block is read."""
    from spadework.analysis.engine.storage import scan_hands

    STATS["chunks"] += 1
    if sc.columns is None:
        return
    n = len(sc.fast)
    table = pa.table(sc.columns)
    table = table.append_column("source_file", _repeated(source, n))
    writes: list[tuple[str, pa.Table]] = [(HAND_RECORDS, table)]
    if stream is not None:
        with _timed("check"):
            stream.sink = writes
            try:
                stream.feed(table, hands=scan_hands(sc.scan, sc.fast))
            finally:
                stream.sink = None
    writer.submit(writes)
    result.hands += n
    STATS["fast_lines"] += n


def _repeated(text: str, n: int) -> pa.Array:
    """A column of ``n`` times ``text`` (dictionary-encoded: one copy of the text, however long the
    block; DuckDB stores it as the VARCHAR it is)."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([text], pa.string()))


def _write_python(con, sc: _Scanned, source: str, fs: _FileState, result: FileResult) -> None:
    STATS["python_lines"] += len(sc.python)
    batch, errors = _Batch(), []
    recs: list[HandRecord] = []
    for j in sc.python:
        n = int(sc.lines[j])
        item = _parse_python(source, n, sc.block.raw(j))
        if item is None:
            continue
        if isinstance(item, LoadError):
            errors.append(item)
            result.errors += 1
        elif out_of_range(item):
            fs.out_of_range.append((n, item.game_id, item.hand))  # decided at the end of the file
        else:
            recs.append(item)
    clash: dict[tuple[str, int], tuple[str, int]] = {}
    if fs.others and recs:
        keys = pa.table({"game_id": [r.game_id for r in recs], "hand": pa.array([r.hand for r in recs], pa.int32())})
        clash = {(g, h): (f, ln) for g, h, f, ln in _clashes(con, keys, source)}
    for item in recs:
        other = clash.get((item.game_id, item.hand))
        if other is not None:
            fs.withheld.append((item.source_line or 0, item.game_id, item.hand, other[0], other[1]))
            continue
        _add_record(batch, item, source)
        result.hands += 1
        result.warnings += len(item.warnings)
    _flush(con, batch, errors)


def _settle_file(con, path: str | os.PathLike[str], source: str, result: FileResult, fs: _FileState, stream=None) -> None:
    """Decide, in line order as the Python loader does, the hands that appear more than once in the
    file, that are already loaded from another file, or whose numbers are out of range.

    Per hand key: the first occurrence that is in range is the one that counts (written, or
    rejected as already loaded from another file); every later occurrence "appears twice";
    an out-of-range occurrence before it (or with none) is rejected as out of range.
    """
    # a stream still valid has seen every row of the file, each game's hands consecutive and none
    # twice (StreamCheck gives up on anything else): no hand of it can appear twice, and the query
    # (a full scan of the file's rows, alone at the end of the load) is not needed
    dups = [] if stream is not None and stream.valid else con.execute(
        f"SELECT game_id, hand, list(source_line ORDER BY source_line) FROM {HAND_RECORDS} WHERE source_file = $source "
        "GROUP BY game_id, hand HAVING count(*) > 1",
        {"source": source},
    ).fetchall()
    occ: dict[tuple[str, int], list[tuple[int, str]]] = {(g, h): [(n, "row") for n in lines] for g, h, lines in dups}
    clash: dict[int, tuple[str, int]] = {}
    for line, g, h, f, ln in fs.withheld:
        occ.setdefault((g, h), []).append((line, "withheld"))
        clash[line] = (f, ln)
    if fs.out_of_range:
        # a hand number out of INTEGER range matches no loaded hand (and may not even fit 64 bits)
        keys = sorted({(g, h) for _, g, h in fs.out_of_range if isinstance(h, int) and INT_MIN <= h <= INT_MAX})
        arrow = pa.table({"game_id": pa.array([k[0] for k in keys], pa.string()), "hand": pa.array([k[1] for k in keys], pa.int64())})
        con.register("_fl_rangekeys", arrow)
        try:
            written = con.execute(
                f"SELECT h.game_id, h.hand, h.source_line FROM {HAND_RECORDS} h JOIN _fl_rangekeys k USING (game_id, hand) "
                "WHERE h.source_file = $source",
                {"source": source},
            ).fetchall()
        finally:
            con.unregister("_fl_rangekeys")
        for g, h, n in written:
            if (g, h) not in occ:
                occ[(g, h)] = [(n, "row")]
        for line, g, h in fs.out_of_range:
            occ.setdefault((g, h), []).append((line, "range"))
    if not occ:
        return
    if stream is not None:
        stream.invalidate()  # hands written twice or left out: the check reads the database
    wanted = {n for lst in occ.values() for n, _ in lst}
    raws = read_lines(path, wanted)

    def record(n: int) -> HandRecord:
        rec = _parse_python(source, n, raws[n])
        if not isinstance(rec, HandRecord):  # cannot happen: the line was read before
            raise FastLoadError(f"{source}:{n}: a line read before no longer reads")
        return rec

    batch, errors = _Batch(), []
    redo: list[tuple[str, int]] = []  # keys written more than once: their rows go, the first is written again
    for key, lst in occ.items():
        lst.sort()
        first = next(((n, k) for n, k in lst if k != "range"), None)
        again = sum(1 for _, k in lst if k == "row") > 1
        if again:
            redo.append(key)
        for n, kind in lst:
            rec = record(n)
            if first is not None and n > first[0]:
                errors.append(rejected_record(rec, source, appears_twice((rec.game_id, rec.hand), first[0])))
                if kind == "row":
                    result.hands -= 1
                    result.warnings -= len(rec.warnings)
                result.errors += 1
            elif first is not None and n == first[0]:
                if kind == "row":
                    if again:
                        _add_record(batch, rec, source)
                else:
                    f, ln = clash[n]
                    errors.append(
                        rejected_record(
                            rec,
                            source,
                            f"hand {rec.hand} of game {rec.game_id!r} is already loaded from {f}:{ln}; not loaded "
                            f"again (load that file again to replace it, or give this game another id)",
                        )
                    )
                    result.errors += 1
            else:
                errors.append(rejected_record(rec, source, out_of_range(rec) or "out of range"))
                result.errors += 1
    if redo:
        keys = pa.table({"game_id": [k[0] for k in redo], "hand": pa.array([k[1] for k in redo], pa.int64())})
        con.register("_fl_dupkeys", keys)
        try:
            for table in (HAND_RECORDS, "load_warnings"):
                con.execute(
                    f"DELETE FROM {table} WHERE source_file = $source AND (game_id, hand) IN (SELECT game_id, hand FROM _fl_dupkeys)",
                    {"source": source},
                )
        finally:
            con.unregister("_fl_dupkeys")
    _flush(con, batch, errors)


def _load_jsonl_file(
    con, path, source: str, chunk_bytes: int, on_batch: Callable[[int, int], None] | None, stream=None,
    scan_threads: int | None = None,
) -> FileResult:
    """Load one canonical JSON Lines file (see the module doc).

    The file's earlier rows go first (with a new load generation, :func:`mark_loaded`); each block
    of lines is then written and committed on its own (DuckDB holds a transaction's rows in memory,
    so one transaction for a large file would take memory in proportion to it); the file is settled
    at the end.  On an error the file's rows are removed again and the error propagates
    (:func:`load_fast` then has the Python loader read the file and say what is wrong).
    """
    result = FileResult(source, "jsonl")
    ensure_storage(con)
    _in_transaction(con, lambda: (mark_loaded(con), _forget_file(con, source)))
    fs = _FileState(others=con.execute(f"SELECT count(*) > 0 FROM {HAND_RECORDS}").fetchall()[0][0])
    # a thread writes each block while the next is read (in a streaming validate: checked); not
    # once the stream is given up (the rows are then checked from the database)
    writer = RowGroupWriter(con) if stream is None or stream.valid else None
    try:
        # with a writer, the columns are made in this thread (the reader thread is then the busier one)
        scanned = _prefetch(_scan_block(b, scan_threads, columns=writer is None) for b in _blocks(path, chunk_bytes))
        try:
            for sc in scanned:
                before = (result.hands, result.errors)
                _add_columns(sc)
                if writer is not None and (stream is None or stream.valid) and not len(sc.python) and not (fs.others and _clashes_other_file(con, sc, source)):
                    _queue_block(writer, sc, source, result, stream)
                else:
                    if writer is not None:
                        writer.drain()
                    _in_transaction(con, lambda: _write_block(con, sc, source, fs, result, stream))
                if on_batch:
                    on_batch(result.hands - before[0], result.errors - before[1])
            if writer is not None:
                writer.drain()
        except BaseException:
            if writer is not None:
                writer.abandon()  # the rows it holds belong to a file that is now forgotten
            raise
        finally:
            scanned.close()
            if writer is not None:
                writer.close()
                if TIMINGS is not None:
                    TIMINGS["write"] = TIMINGS.get("write", 0.0) + writer.seconds

        def settle() -> None:
            _settle_file(con, path, source, result, fs, stream)
            if result.hands + result.errors == 0:
                _flush(con, _Batch(), [no_hands_error(path, source)])
                result.errors += 1

        _in_transaction(con, settle)
    except BaseException:
        if stream is not None:
            stream.invalidate()
        _in_transaction(con, lambda: _forget_file(con, source))
        raise
    return result


def fast_format(path: str | os.PathLike[str], fmt: str | None) -> bool:
    """True when a file is canonical JSON Lines the fast loader reads (``.jsonl``/``.ndjson``, maybe ``.gz``)."""
    if fmt not in (None, "jsonl"):
        return False
    name = strip_gz(os.fspath(path)).lower()
    return name.endswith((".jsonl", ".ndjson"))


def load_fast(
    con,
    paths: Iterable[str | os.PathLike[str]],
    fmt: str | None = None,
    progress: bool = False,
    chunk_bytes: int | None = None,
    stream=None,
    scan_threads: int | None = None,
) -> LoadSummary:
    """Load files and folders like :func:`spadework.parsers.db.load_files`, reading canonical JSON
    Lines with compiled code.

    Same arguments, same result, same rows in ``hand_records`` (so in every loaded view),
    ``load_errors`` and ``load_warnings``.  ``.jsonl``/``.ndjson`` files (optionally ``.gz``) of
    :data:`FAST_MIN_BYTES` or more take the fast path, each in its own transaction; smaller plain
    ones are scanned together and written through the Python loader's batching (many files per
    transaction); every other file, and any fast-path file that fails to read part way (a
    truncated ``.gz``), is loaded by the Python loader.  Every transaction records a new load
    generation (:func:`spadework.parsers.state.mark_loaded`).  ``chunk_bytes``: bytes of lines scanned
    at a time; ``scan_threads``: threads the compiled reader scans a block on (default numba's count).
    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    summary = LoadSummary()
    paths = path_list(paths)
    files = list(walk(paths))
    bar = _Progress(len(files)) if progress else None
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    for k in STATS:
        STATS[k] = 0
    on_batch = bar.on_batch if bar else None
    # small files and other formats: the Python loader, many files per batch (a thousand one-hand
    # files cost about what one thousand-hand file does)
    python = _Loader(con, on_batch)
    # DuckDB checkpoints (compresses what was appended) after every 16MB of commits; block by block
    # that is most of the load's time (1M hands: 22 against 13 CPU-seconds), so it waits to the end
    threshold = con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0]
    con.execute("SET checkpoint_threshold = '1TB'")
    small: list[tuple[str | os.PathLike[str], str, str | None, bytes | None]] = []  # small files waiting, read
    small_bytes = 0

    def flush_small() -> None:
        nonlocal small, small_bytes
        if small:
            if stream is not None:
                stream.invalidate()  # written the Python loader's way: the check reads the database
            for result, source in _load_small_jsonl(python, small, scan_threads):
                summary.files.append(result)
                if python.due:
                    python.commit()
                if bar:
                    bar.advance_file(source)
        small, small_bytes = [], 0

    try:
        for path, source, file_fmt in log_files(paths, files, fmt, summary, bar):
            result = None
            size = _size(path)
            canonical = file_fmt == "jsonl" and fast_format(path, file_fmt)
            large = size >= FAST_MIN_BYTES  # read per call (tests set 0)
            if canonical and 0 < size and not large:
                data = _read_small(path)
                if data is _TOO_LARGE:
                    large = True  # a small .gz holding far more: the block reader, in flat memory
                else:
                    small.append((path, source, file_fmt, data))
                    small_bytes += len(data or b"")
                    if small_bytes >= SMALL_GROUP_BYTES:
                        flush_small()
                    continue
            flush_small()
            if file_fmt == "jsonl" and _json_document(path) and 0 < size <= JSON_ARRAY_BYTES:
                if stream is not None:
                    stream.invalidate()  # written the Python loader's way: the check reads the database
                result = _load_json_array(python, path, source, file_fmt, scan_threads)
                if result is not None and python.due:
                    python.commit()
            if canonical and large:
                python.commit()  # the files before it are written first, as one by one
                try:
                    result = _load_jsonl_file(con, path, source, chunk_bytes, on_batch, stream, scan_threads)
                    python.note([source])  # rows written beside the Python loader
                except (OSError, EOFError, FastLoadError):
                    result = None  # rolled back: the Python loader reads the file and says what is wrong
            if result is None:
                if stream is not None:
                    stream.invalidate()
                items = _with_empty_check(formats.load(path, fmt=file_fmt, source=source), path, source)
                result = python.add_file(items, source, file_fmt)
                if python.due:
                    python.commit()
            summary.files.append(result)
            if bar:
                bar.advance_file(source)
        flush_small()
        python.commit()
    except BaseException:
        python.rollback()
        raise
    finally:
        con.execute(f"SET checkpoint_threshold = '{threshold}'")
        if bar:
            bar.close()
    return summary


SMALL_GROUP_BYTES = 16 * 1024 * 1024
"""Small files (under :data:`FAST_MIN_BYTES`) are read by compiled code this many bytes at a time."""


_TOO_LARGE = b"(too large)"


def _read_small(path: str | os.PathLike[str]) -> bytes | None:
    """A small file's bytes as the block reader reads them (:func:`~spadework.parsers.io.open_binary`),
    ``None`` when it cannot be read (the Python loader says why), :data:`_TOO_LARGE` (the object)
    beyond :data:`SMALL_GROUP_BYTES` (a small ``.gz`` can hold far more)."""
    try:
        with open_binary(path) as f:
            data = f.read(SMALL_GROUP_BYTES + 1)
    except (OSError, EOFError, zlib.error):
        return None
    return _TOO_LARGE if len(data) > SMALL_GROUP_BYTES else data


def _load_small_jsonl(python: _Loader, group: list, scan_threads: int | None) -> Iterator[tuple[FileResult, str]]:
    """Load small canonical JSON Lines files, in order, through ``python`` (the Python loader's
    batching, so each file gives what loading it alone would): their lines are scanned together by
    compiled code, and a file whose every line is read there goes in as ready rows
    (:meth:`~spadework.parsers.db._Loader.add_rows`); any other file is read by the Python parser.
    Yields ``(result, source)`` per file.  Measured: 7,294 one-game files (100,000 hands) took
    26 s by the Python parser."""
    from spadework.parsers import jsonl_scan

    # each file as _read_small read it (None: unreadable, or empty once read: the Python loader's);
    # a byte-order mark, a NUL or anything else odd makes its line, so its file, the Python parser's
    datas = [d or None for _, _, _, d in group]
    chunks = [d if d.endswith(b"\n") else d + b"\n" for d in datas if d is not None]
    clean: dict[int, tuple[int, int]] = {}  # file of the group -> (its first row in table, its rows)
    table = None
    if chunks:
        buf = np.empty(sum(len(c) for c in chunks), np.uint8)  # the scanner edits this copy in place
        at = 0
        for c in chunks:
            buf[at : at + len(c)] = np.frombuffer(c, np.uint8)
            at += len(c)
        block = _split(buf, 1)
        offsets = np.cumsum([0] + [len(c) for c in chunks])
        file_of = np.searchsorted(offsets, block.starts, side="right") - 1
        first = np.searchsorted(block.starts, offsets[:-1])
        with _timed("scan"):
            sc = jsonl_scan.scan(buf, block.starts, block.ends, scan_threads)
        ok = sc.status == jsonl_scan.OK
        bad = np.bincount(file_of[sc.status == jsonl_scan.PYTHON], minlength=len(chunks))
        good = np.bincount(file_of[ok], minlength=len(chunks))
        fast = np.flatnonzero(ok & (bad[file_of] == 0))
        row = 0
        k = -1
        for i, d in enumerate(datas):
            if d is None:
                continue
            k += 1
            if bad[k] == 0 and good[k] > 0:
                clean[i] = (row, int(good[k]))
                row += int(good[k])
        if len(fast):
            with _timed("columns"):
                cols = jsonl_scan.hand_columns(buf, sc, fast)
                cols["source_line"] = pa.array((fast - first[file_of[fast]] + 1).astype(np.int32))
            table = pa.table(cols)
            STATS["fast_lines"] += len(fast)
    if table is not None:  # the keys and lines of every file's rows, as Python values at once
        keys, lines = row_keys(table)
    for i, (path, source, file_fmt, _) in enumerate(group):
        if i in clean:
            start, n = clean[i]

            def record(j: int, lines=lines[start : start + n], source=source, data=datas[i]) -> HandRecord:
                ln = lines[j]
                item = _parse_python(source, ln, data.split(b"\n")[ln - 1].rstrip(b"\r\n"))
                assert isinstance(item, HandRecord), item  # the scanner read this line
                return item

            yield python.add_rows(table, source, file_fmt, record, start, keys[start : start + n], lines[start : start + n]), source
        else:
            items = _with_empty_check(formats.load(path, fmt=file_fmt, source=source), path, source)
            yield python.add_file(items, source, file_fmt), source


JSON_ARRAY_BYTES = 256 * 1024 * 1024
"""A ``.json`` document of one array of hands is read by compiled code up to this size (it is read
whole, as the Python parser reads it: the file's bytes, a copy the scanner edits and the rows)."""


def _json_document(path: str | os.PathLike[str]) -> bool:
    return strip_gz(os.fspath(path)).lower().endswith(".json")


def _load_json_array(python: _Loader, path: str | os.PathLike[str], source: str, fmt: str | None, scan_threads: int | None) -> FileResult | None:
    """Load a ``.json`` document holding one array of hands through ``python`` as ready rows, when
    compiled code reads every item (:func:`~spadework.parsers.jsonl_scan.array_items`, then the
    scanner); ``None`` otherwise, and nothing is written (the Python parser then reads the whole
    document and says what is wrong with it).  Each hand's ``source_line`` is the line its item
    starts on, or the item's number when two items start on one line, as the Python parser gives.
    Measured: 20,000 hands as one pretty-printed array took 10.7 s through the Python parser."""
    from spadework.parsers import jsonl_scan
    from spadework.parsers.jsonl import record_from_obj

    try:
        with open_binary(path) as f:
            data = f.read(JSON_ARRAY_BYTES + 1)
    except (OSError, EOFError, zlib.error):
        return None
    if not data or len(data) > JSON_ARRAY_BYTES or data.lstrip()[:1] != b"[":
        return None
    raw = np.frombuffer(data, np.uint8)
    buf = raw.copy()  # the splitter and the scanner edit this copy
    items = jsonl_scan.array_items(buf)
    if items is None:
        return None
    starts, ends = items
    with _timed("scan"):
        sc = jsonl_scan.scan(buf, starts, ends, scan_threads)
    if not (sc.status == jsonl_scan.OK).all():
        return None
    line = np.searchsorted(np.flatnonzero(raw == 10), starts) + 1  # newlines before the item, + 1
    if len(np.unique(line)) != len(line):  # two items on one line: the items are numbered
        line = np.arange(1, len(starts) + 1)
    every = np.arange(len(starts))
    with _timed("columns"):
        cols = jsonl_scan.hand_columns(buf, sc, every)
        cols["source_line"] = pa.array(line.astype(np.int32))
    table = pa.table(cols)
    STATS["fast_lines"] += len(starts)
    keys, lines = row_keys(table)

    def record(j: int) -> HandRecord:
        return record_from_obj(jsontext.loads(data[int(starts[j]) : int(ends[j])]), source, lines[j])

    return python.add_rows(table, source, fmt, record, 0, keys, lines)


def _size(path: str | os.PathLike[str]) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


__all__ = ["CHUNK_BYTES", "FAST_MIN_BYTES", "STATS", "fast_format", "load_fast"]
