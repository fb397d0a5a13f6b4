"""The stored layout as the engines see it: stored hands read as arrays, derived tables written.

The database keeps one row per hand (``hand_records``, what the logs say) and one row per checked
hand (``checked_tricks``, the replayed tricks); TABLES.md's tables are views over them
(:mod:`spadework.parsers.schema`).  This module is the engines' side of that layout:

- the Arrow bridge: :func:`pack_table` turns stored rows (an Arrow table, the card lists straight
  from DuckDB's buffers) into the core's :class:`~spadework.analysis.engine.packed.PackedHands`,
  the arrays ``packed.pack_records`` makes of their records; :func:`scan_hands` makes the same
  per-hand arrays from the compiled reader's scan;
- :func:`check_part`: a partition of whole games (Arrow rows) -> the rows of the derived tables
  and the findings (:class:`PartResult`), with the compiled core and the reference for the
  message text.  Pure: what a worker of a cluster runs, writing the tables as Parquet parts;
- :class:`StreamCheck`: ``validate``'s check while the logs load;
- :func:`reset_derived`, :func:`in_transaction`, :func:`insert_arrow`, :class:`RowGroupWriter` (inserts in whole row
  groups, in a thread of its own), :func:`checked_tricks_table`: writing the tables (the reference checker's :class:`~spadework.analysis.engine.checker.DerivedWriter` goes
  through them too, so both engines write the same layout).
"""

from __future__ import annotations

import functools
import itertools
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spadework.analysis.engine.packed import ranges
from spadework.parsers.encoding import NO_CARD, NO_SEAT, PLAY_SUIT_CODES, SEAT_CODES
from spadework.parsers.schema import (
    ALL_TABLES,
    AS_PLAYED_COLUMNS,
    DERIVED_TABLES,
    STORED_TABLES,
    STORED_VIEWS,
    arrow_schema,
    pack_checked_trick,
    storage_layout,
)

CHECKED_TRICKS = "checked_tricks"
CHECKED_TRICKS_SCHEMA = arrow_schema(STORED_TABLES[CHECKED_TRICKS])
DERIVED_SCHEMAS: dict[str, pa.Schema] = {t: arrow_schema(ddl) for t, ddl in DERIVED_TABLES.items()} | {
    CHECKED_TRICKS: CHECKED_TRICKS_SCHEMA
}
"""Arrow schemas of the tables a check writes (``tricks`` as its view's rows, ``checked_tricks`` stored)."""

_SEAT_ID = {c: i for i, c in enumerate(SEAT_CODES)}
_SUIT_ID = {c: i for i, c in enumerate(PLAY_SUIT_CODES)}


def derived_tables(con) -> tuple[str, ...]:
    """The real tables a check fills in ``con``'s layout (``tricks`` is a view in the stored layout)."""
    if storage_layout(con) == "plain":
        return tuple(DERIVED_TABLES)
    return (CHECKED_TRICKS,) + tuple(t for t in DERIVED_TABLES if t not in STORED_VIEWS)


def reset_derived(con) -> None:
    """Empty the derived tables: drop and re-create ``checked_tricks``, ``hand_scores``, ``violations``,
    ``games`` (in the plain layout: ``tricks``, ``violations``, ``hand_scores``, ``games``), then
    the views over them (:data:`~spadework.parsers.schema.VIEWS`: a database written by an older
    version gets the ones it lacks)."""
    from spadework.parsers.schema import create_views

    ddl = ALL_TABLES | STORED_TABLES
    for t in derived_tables(con):
        con.execute(f"DROP TABLE IF EXISTS {t}")
        con.execute(f"CREATE TABLE {t} ({ddl[t]})")
    create_views(con)


def in_transaction(con, work: Callable[[], Any]) -> None:
    """Run ``work()`` in a transaction of ``con``: committed when it returns, rolled back when it
    raises (the error goes on)."""
    con.execute("BEGIN TRANSACTION")
    try:
        work()
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def insert_arrow(con, table: str, data: pa.Table) -> None:
    """Insert an Arrow table's rows into ``table`` (columns matched by name)."""
    if data.num_rows == 0:
        return
    name = f"_spadework_{table}_arrow"
    con.register(name, data)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {name}")
    finally:
        con.unregister(name)


ROW_GROUP_ROWS = 122_880
"""DuckDB's rows per row group.  How DuckDB commits appended rows decides what a write costs
(measured on 400,000-500,000 stored hands, one thread, in-memory database):

- a transaction of one INSERT of whole row groups: the commit takes them into the table as they
  are (insert 0.6 CPU-seconds, commit 0.0);
- a transaction of one block (about 21,000 hands): the commit appends its rows again (insert 0.6,
  commit 0.65);
- a transaction of several INSERTs into one table: its commit is cheap, but the next checkpoint
  rewrites its rows (1.1 CPU-seconds at the end of the load).

So the writer inserts each table's rows in whole row groups, one INSERT per table and transaction."""


_COMMIT = object()  # a writer's job: write and commit every row it holds


class RowGroupWriter:
    """Writes rows in a thread of its own, in order, on a cursor of the connection (DuckDB releases
    the GIL while it inserts and commits), while the caller goes on: the loader's blocks while the
    next is read and checked (measured at 1M hands on 2 cores: the main thread had spent about 2.5
    of its 7 seconds inserting and committing, with the reader thread waiting on it), a check's
    derived rows while the next partition is checked.

    Each table's rows wait until they fill whole row groups (:data:`ROW_GROUP_ROWS`); those are
    then inserted, one INSERT per table, and committed together.  So a transaction holds about one
    row group of each table (DuckDB keeps a transaction's rows in memory outside its memory limit),
    and the rows that wait are at most a row group per table.

    :meth:`submit` queues a block's writes (``(table, Arrow rows)`` pairs; at most ``depth`` blocks
    wait); :meth:`drain` waits until everything queued is written and committed, and must be called
    before the connection is used for anything else; an error in the thread is raised by the next
    call.
    """

    def __init__(self, con, depth: int = 1, rows_per_group: int | None = None) -> None:
        self.cursor = con.cursor()
        self.q: queue.Queue = queue.Queue(maxsize=depth)
        self.error: BaseException | None = None
        self.failed = False  # once a write fails, every later job is dropped (the file is then forgotten)
        self.rows_per_group = rows_per_group or ROW_GROUP_ROWS
        self.held: dict[str, list[pa.Table]] = {}  # per table, rows not written yet, in order
        self.seconds = 0.0  # wall seconds spent writing (read it once drained or closed)
        self.thread = threading.Thread(target=self._run, name="spadework-writer", daemon=True)
        self.thread.start()

    def _write(self, job) -> None:
        everything = job is _COMMIT
        if not everything:
            for table, data in job:
                if data.num_rows:
                    self.held.setdefault(table, []).append(data)
        writes: list[tuple[str, pa.Table]] = []
        for table, parts in self.held.items():
            n = sum(p.num_rows for p in parts)
            take = n if everything else n - n % self.rows_per_group
            if not take:
                continue
            if len(parts) > 1 and all(p.schema.equals(parts[0].schema) for p in parts):
                parts = [pa.concat_tables(parts)]
            if len(parts) > 1:  # rows of other column types (rare): written as they came
                writes.extend((table, p) for p in parts)
                self.held[table] = []
                continue
            writes.append((table, parts[0].slice(0, take)))
            self.held[table] = [parts[0].slice(take)] if take < n else []
        if writes:
            in_transaction(self.cursor, lambda: [insert_arrow(self.cursor, t, d) for t, d in writes])

    def _run(self) -> None:
        while True:
            job = self.q.get()
            try:
                if job is None:
                    return
                if not self.failed:
                    t = time.perf_counter()
                    try:
                        self._write(job)
                    except BaseException as exc:  # raised in the main thread by the next call
                        self.error, self.failed = exc, True
                        self.held.clear()
                    finally:
                        self.seconds += time.perf_counter() - t
            finally:
                self.q.task_done()

    def abandon(self) -> None:
        """Write nothing more: the rows held and any job still queued are dropped (the caller
        failed, and what it submitted must not reach the database)."""
        self.failed = True

    def _raise(self) -> None:
        if self.error is not None:
            exc, self.error = self.error, None
            raise exc

    def submit(self, writes: list[tuple[str, pa.Table]]) -> None:
        """Queue ``writes`` (written in whole row groups, see the class doc)."""
        self._raise()
        self.q.put(writes)

    def drain(self) -> None:
        """Wait until every queued write is committed; raise the thread's error, if any."""
        self.q.put(_COMMIT)
        self.q.join()
        self._raise()

    def close(self) -> None:
        """Write and commit what is held (nothing once :meth:`abandon` was called), then stop
        the thread (errors are dropped: call :meth:`drain` first to see them)."""
        self.q.put(_COMMIT)
        self.q.put(None)
        self.thread.join()
        self.cursor.close()


def checked_tricks_table(cols: Mapping[str, Sequence[Any]]) -> pa.Table:
    """``checked_tricks`` rows from ``tricks`` rows given as column lists (``game_id``, ``hand``,
    ``trick``, ``leader``, ``led_suit``, ``winner``, ``spades_broken``; codes as in TABLES.md).

    The rows of one hand must be consecutive with tricks numbered 1, 2, ... (as the checker makes
    them).  Raises ``ValueError`` otherwise, and ``KeyError`` for a code that is not a seat or suit.
    """
    out: dict[str, list] = {f.name: [] for f in CHECKED_TRICKS_SCHEMA}
    rows = zip(cols["game_id"], cols["hand"], cols["trick"], cols["leader"], cols["led_suit"], cols["winner"], cols["spades_broken"])
    for (g, h), group in itertools.groupby(rows, key=lambda r: (r[0], r[1])):
        group = list(group)
        if [r[2] for r in group] != list(range(1, len(group) + 1)):
            raise ValueError(f"tricks of game {g!r} hand {h} are not numbered 1, 2, ...: {[r[2] for r in group]}")
        out["game_id"].append(g)
        out["hand"].append(h)
        out["tricks"].append(
            [
                pack_checked_trick(
                    _SEAT_ID[r[3]], None if r[5] is None else _SEAT_ID[r[5]], None if r[4] is None else _SUIT_ID[r[4]], bool(r[6]), r[2]
                )
                for r in group
            ]
        )
    return pa.table(out, schema=CHECKED_TRICKS_SCHEMA)


def list_column(values: np.ndarray, lengths: np.ndarray, value_type: pa.DataType) -> pa.Array:
    """A ``list<value_type>`` Arrow array from the flat ``values`` of every row and each row's
    ``lengths`` (no copy of ``values`` when its dtype matches)."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, type=value_type))


__all__ = [
    "CHECKED_TRICKS",
    "CHECKED_TRICKS_SCHEMA",
    "DERIVED_SCHEMAS",
    "ROW_GROUP_ROWS",
    "RowGroupWriter",
    "checked_tricks_table",
    "derived_tables",
    "in_transaction",
    "insert_arrow",
    "list_column",
    "reset_derived",
]


# --- stored rows -> packed hands (the Arrow bridge) -------------------------------------------------



def _fill_lists_py(perm, has_deal, deal_off, deal_val, play_off, play_val, trk_off, trk_val, bid_off, bid_seat, bid_value,
                bid_nil, bid_blind, deal, deal_len, n_tricks, trick_leader, trick_len, trick_cards, trick_winner, n_bids,
                p_bid_seat, p_bid_value, p_bid_nil, p_bid_blind, p_bid_whole, overflow):  # fmt: skip
    """Unpack the stored lists (schema.PACKING) of table rows ``perm[j]`` into packed row ``j``."""
    for j in range(len(perm)):
        i = perm[j]
        if has_deal[i]:
            for k in range(deal_off[i], deal_off[i + 1]):
                x = deal_val[k]
                s = (x >> 6) & 3
                n = deal_len[j, s]
                if n >= 16:
                    overflow[j] = True
                    continue
                deal[j, s, n] = x & 63
                deal_len[j, s] = n + 1
        nt = trk_off[i + 1] - trk_off[i]
        if nt > 13:
            overflow[j] = True
            nt = 13
        n_tricks[j] = nt
        for t in range(nt):
            x = trk_val[trk_off[i] + t]
            trick_leader[j, t] = x & 3
            w = (x >> 2) & 7
            trick_winner[j, t] = 255 if w == 4 else w
        for k in range(play_off[i], play_off[i + 1]):
            x = play_val[k]
            t = (x >> 11) - 1
            o = ((x >> 8) & 7) - 1
            if t >= 13 or o >= 4:
                overflow[j] = True
                continue
            trick_cards[j, t, o] = x & 63
            if trick_len[j, t] < o + 1:
                trick_len[j, t] = o + 1
        nb_ = bid_off[i + 1] - bid_off[i]
        if nb_ > 8:
            overflow[j] = True
            nb_ = 8
        n_bids[j] = nb_
        for b in range(nb_):
            k = bid_off[i] + b
            v = bid_value[k]
            p_bid_seat[j, b] = bid_seat[k]
            if not (abs(v) <= 1e6):  # also NaN
                overflow[j] = True
                v = 0.0
            p_bid_value[j, b] = v
            p_bid_nil[j, b] = bid_nil[k]
            p_bid_blind[j, b] = bid_blind[k]
            p_bid_whole[j, b] = v == np.floor(v) and 1 <= v <= 13


_FILL = None


def _fill_lists(*args) -> None:
    """:func:`_fill_lists_py` compiled (numba is imported on first use: the reference engine, which
    writes through this module too, does not load it)."""
    global _FILL
    if _FILL is None:
        import numba as nb

        from spadework.parsers.numba_cache import depends

        depends(__file__)  # the cache's places (this module takes no values from others)
        _FILL = nb.njit(cache=True, nogil=True, boundscheck=False)(_fill_lists_py)
    _FILL(*args)


def _list_parts(arr: pa.ChunkedArray | pa.Array, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64[n+1], flat values) of a list column (nulls have no values)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    offsets = arr.offsets.to_numpy().astype(np.int64)
    values = arr.values.to_numpy(zero_copy_only=False)
    if values.dtype != dtype:
        values = values.astype(dtype)
    return offsets, values


def _ints(table: pa.Table, name: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int32 values with NOT_RECORDED for null, whether a recorded value is NOT_RECORDED itself) of ``rows``."""
    from spadework.analysis.engine.packed import NOT_RECORDED

    col = table.column(name)
    vals = pc.fill_null(col, NOT_RECORDED).to_numpy().astype(np.int32)[rows]
    valid = pc.is_valid(col).to_numpy(zero_copy_only=False)[rows]
    return vals, valid & (vals == NOT_RECORDED)


def _bools(table: pa.Table, name: str) -> np.ndarray:
    return pc.fill_null(table.column(name), False).to_numpy(zero_copy_only=False).astype(bool)




class PackedPart:
    """Stored rows of whole games packed for the core: ``hands`` (:class:`~spadework.analysis.engine.packed.PackedHands`),
    ``rulesets`` (its ruleset table), ``rows`` (int64[N]: the table row of each packed row) and the
    Arrow ``table`` itself (for the records of the few hands the reference re-checks)."""

    def __init__(self, hands, rulesets, rows: np.ndarray, table: pa.Table) -> None:
        self.hands = hands
        self.rulesets = rulesets
        self.rows = rows
        self.table = table

    def records(self, packed_rows, play: bool = True) -> list:
        """The :class:`~spadework.parsers.model.HandRecord` of packed rows (in that order); ``play=False``:
        without their deal and tricks (not read)."""
        from spadework.parsers.db import PLAY_COLUMNS, record_from_row

        rows = self.rows[np.asarray(packed_rows, dtype=np.int64)]
        wanted, back = np.unique(rows, return_inverse=True)
        table = self.table.take(pa.array(wanted))
        if not play:
            table = table.drop_columns([c for c in PLAY_COLUMNS if c in table.column_names])
        recs = [record_from_row(r, play=play) for r in table.to_pylist()]
        return [recs[k] for k in back.tolist()]


def pack_table(table: pa.Table, rules: Any = None, hands: Any = None) -> PackedPart:
    """Pack stored ``hand_records`` rows (an Arrow table with its columns; whole games, any order) for
    the compiled core: the same arrays :func:`~spadework.analysis.engine.packed.pack_records` gives for
    the records of those rows (``tests/test_storage.py`` checks it), in game order (games by first
    appearance), each game's hands by hand number.  ``rules``: an override for every game (the
    CLI's ``--rules``).  ``hands``: the per-hand arrays already made (:func:`scan_hands`, in the
    table's row order), instead of unpacking the table's lists.  Raises
    :class:`~spadework.analysis.engine.rules.RulesError` for bad ``rules``.
    """
    import orjson

    from spadework.analysis.engine.packed import PackedHands, pack_rulesets
    from spadework.analysis.engine.rules import get_ruleset

    override = get_ruleset(rules) if rules is not None else None
    n = table.num_rows
    gid = table.column("game_id").combine_chunks() if n else pa.array([], pa.string())
    enc = gid.dictionary_encode() if n else None
    names = enc.dictionary.to_numpy(zero_copy_only=False) if n else np.zeros(0, object)
    rank = np.empty(len(names), np.int64)
    rank[np.argsort(names, kind="stable")] = np.arange(len(names))  # games in game_id order (as iter_records)
    codes = rank[enc.indices.to_numpy()] if n else np.zeros(0, np.int64)
    hand = table.column("hand").to_numpy().astype(np.int64) if n else np.zeros(0, np.int64)
    # hands of a game consecutive and by hand number; usually already so (a log is written game by game)
    dc, dh = np.diff(codes), np.diff(hand)
    grouped = bool(np.all((dc > 0) | ((dc == 0) & (dh > 0))))
    rows = np.arange(n, dtype=np.int64) if grouped else np.lexsort((hand, codes)).astype(np.int64)
    c = codes[rows]
    starts = np.flatnonzero(np.concatenate(([True], c[1:] != c[:-1]))) if n else np.zeros(0, np.int64)
    g = len(starts)
    p = PackedHands.empty(n, g)
    p.game_start[:g] = starts
    p.game_start[g] = n
    if n:
        p.game_ids[:] = np.sort(names)[c[starts]]
    # rulesets: each distinct (text, is_object) once
    rules_text = pc.binary_join_element_wise(
        table.column("rules"), pc.cast(pc.cast(table.column("rules_is_object"), pa.int8()), pa.string()), "\x00"
    ) if n else pa.array([], pa.string())
    renc = pc.dictionary_encode(rules_text).combine_chunks() if n else None
    rcode = renc.indices.to_numpy().astype(np.int64)[rows] if n else np.zeros(0, np.int64)
    # each distinct rules value is read once: its key (what ruleset_name gives, or "unreadable")
    # and ruleset; a game takes its first hand's, flagged when unreadable or when a later hand's
    # key differs (packed.game_ruleset decides the same per game, value by value)
    from spadework.analysis.engine.packed import RULES_FLAG_INVALID, RULES_FLAG_MIXED
    from spadework.analysis.engine.rules import fallback_ruleset, rules_key, ruleset_name

    keys: dict[str, int] = {}
    key_of, rs_of, unreadable = [], [], []
    for text in renc.dictionary.to_pylist() if n else []:
        value, obj = text.rsplit("\x00", 1)
        spec = orjson.loads(value) if obj == "1" else value
        key, rs = rules_key(spec)
        key_of.append(keys.setdefault(key, len(keys)))
        rs_of.append(rs if rs is not None else fallback_ruleset(spec))  # unreadable: checked under its fallback
        unreadable.append(rs is None)
    key_row = np.asarray(key_of, np.int64)[rcode] if n else np.zeros(0, np.int64)
    first = rcode[starts] if n else np.zeros(0, np.int64)
    if n:
        kmin = np.minimum.reduceat(key_row, starts)
        kmax = np.maximum.reduceat(key_row, starts)
        mixed = (kmin != key_row[starts]) | (kmax != key_row[starts])
    table_rs: list = []
    index: dict = {}  # ruleset key (or -1: the override, ("fallback", name) for unreadable rules) -> table row
    for k in range(g):
        flag = 0
        if override is not None:
            rs, key = override, -1
        else:
            rs, key = rs_of[first[k]], key_of[first[k]]
            if unreadable[first[k]]:
                key, flag = ("fallback", ruleset_name(rs)), RULES_FLAG_INVALID
            if mixed[k]:
                flag |= RULES_FLAG_MIXED
        row = index.get(key)
        if row is None:
            row = index[key] = len(table_rs)
            table_rs.append(rs)
        p.game_ruleset[k] = row
        p.game_rules_flag[k] = flag
    if n and hands is not None:
        for name, arr in hands.items():
            getattr(p, name)[:] = arr[rows]
    elif n:
        p.hand_no[:] = hand[rows].astype(np.int32)
        p.dealer[:] = table.column("dealer").to_numpy()[rows]
        has_deal = _bools(table, "has_deal")
        p.has_deal[:] = has_deal[rows]
        w = pc.fill_null(table.column("winner"), 255).to_numpy()
        p.winner[:] = w[rows]
        overflow = np.zeros(n, bool)
        taken_any = np.zeros(n, bool)
        for s, name in enumerate(("taken_n", "taken_e", "taken_s", "taken_w")):
            p.taken[:, s], bad = _ints(table, name, rows)
            overflow |= bad
            taken_any |= pc.is_valid(table.column(name)).to_numpy(zero_copy_only=False)[rows]
        p.has_taken[:] = taken_any
        for arr, names in (
            (p.score_points, ("points_ns", "points_ew")),
            (p.score_total, ("total_ns", "total_ew")),
            (p.score_bags, ("bags_ns", "bags_ew")),
            (p.score_before, ("score_before_ns", "score_before_ew")),
            (p.bags_before, ("bags_before_ns", "bags_before_ew")),
        ):
            for side, name in enumerate(names):
                arr[:, side], bad = _ints(table, name, rows)
                overflow |= bad
        d_off, d_val = _list_parts(table.column("deal"), np.uint32)
        p_off, p_val = _list_parts(table.column("play"), np.uint16)
        t_off, t_val = _list_parts(table.column("tricks"), np.uint16)
        b_off, b_seat = _list_parts(table.column("bid_seats"), np.uint8)
        _, b_value = _list_parts(table.column("bid_values"), np.float64)
        _, b_nil = _list_parts(table.column("bid_nils"), np.bool_)
        _, b_blind = _list_parts(table.column("bid_blinds"), np.bool_)
        _fill_lists(
            rows, has_deal, d_off, d_val, p_off, p_val, t_off, t_val, b_off, b_seat, b_value, b_nil, b_blind,
            p.deal, p.deal_len, p.n_tricks, p.trick_leader, p.trick_len, p.trick_cards, p.trick_winner, p.n_bids,
            p.bid_seat, p.bid_value, p.bid_nil, p.bid_blind, p.bid_whole, overflow,
        )  # fmt: skip
        p.overflow[:] = overflow
    return PackedPart(p, pack_rulesets(table_rs), rows, table)


# --- a partition of whole games -> the derived tables (pure: a Dask worker can run it) -------------

INT32_MAX = 2**31 - 1


@dataclass
class PartResult:
    """What :func:`check_part` gives for a partition of whole games.

    ``tables``: the rows to insert, as Arrow tables by table name (``checked_tricks``,
    ``hand_scores``, ``violations``, ``games``; columns of ``STORED_TABLES``/``DERIVED_TABLES``);
    ``findings``: ``(game_id, findings)`` of each game with findings, in game_id order;
    ``games``/``hands``: counts; ``reference_games``: games the reference checked whole.
    """

    tables: dict[str, pa.Table]
    findings: list[tuple[str, list]]
    games: int
    hands: int
    reference_games: int = 0


def _big_games(p, o) -> np.ndarray:
    """bool[G]: games whose recomputed numbers leave the tables' 32 bits (the reference then writes
    them, and fails exactly as it does)."""
    n = p.n_hands
    if n == 0:
        return np.zeros(p.n_games, bool)
    def within(a) -> bool:
        # the common case at the cost of two reductions: every value, rounded, is inside the range
        # (rint keeps a value at or below a whole limit at or below it; NaN fails and is looked at)
        return not a.size or bool(a.max() <= INT32_MAX and a.min() >= -INT32_MAX)

    big = np.zeros(n, bool)
    for a in (o.hs_contract, o.hs_points, o.hs_total):
        if not within(a):
            big |= (np.abs(np.rint(a)) > INT32_MAX).reshape(n, -1).any(axis=1)
    for a in (o.hs_tricks, o.hs_bags_hand, o.hs_penalty, o.hs_nil, o.hs_bags):
        if not within(a):
            big |= (np.abs(a) > INT32_MAX).reshape(n, -1).any(axis=1)
    per_game = np.maximum.reduceat(big.astype(np.int8), p.game_start[:-1]).astype(bool)
    if not within(o.g_total):
        per_game |= (np.abs(np.rint(o.g_total)) > INT32_MAX).any(axis=1)
    return per_game


@functools.cache
def _numpy_dtype(typ: pa.DataType) -> np.dtype:
    """The numpy dtype of a numeric Arrow type (``DataType.to_pandas_dtype`` needs pandas on the
    oldest pyarrow we accept, and pandas is not a dependency)."""
    return pa.array([], type=typ).to_numpy(zero_copy_only=False).dtype


def _compiled_tables(part: PackedPart, result, games: np.ndarray) -> dict[str, pa.Table]:
    """The derived rows of ``games`` (checked by the core) as Arrow tables, straight from its arrays."""
    from spadework.analysis.engine import kernels as K
    from spadework.analysis.engine.checker import AFTER_PENALTY, AS_PLAYED
    from spadework.analysis.engine.compiled import score_arrays

    p, o = part.hands, result.out
    gid = pa.array(p.game_ids.tolist(), pa.string())
    start, stop = p.game_start[games], p.game_start[games + 1]
    lens = stop - start
    hands = ranges(start, lens)
    hand_game = np.repeat(games, lens)
    # checked_tricks: one row per hand with tricks, one packed value per trick (schema.PACKING)
    nt = p.n_tricks[hands].astype(np.int64)
    th = hands[nt > 0]
    ntt = nt[nt > 0]
    t = np.arange(13)
    mask = t[None, :] < ntt[:, None]
    w = o.t_winner[th].astype(np.uint16)
    led = o.t_led[th].astype(np.int16)
    packed = (
        o.t_leader[th].astype(np.uint16)
        | np.where(w == 255, 4, w).astype(np.uint16) << 2
        | np.where(led < 0, 7, led).astype(np.uint16) << 5
        | o.t_broken[th].astype(np.uint16) << 8
        | (t[None, :] + 1).astype(np.uint16) << 9
    )
    tricks = pa.table(
        {
            "game_id": gid.take(pa.array(np.repeat(games, lens)[nt > 0])),
            "hand": pa.array(p.hand_no[th]),
            "tricks": list_column(packed[mask], ntt, pa.uint16()),
        },
        schema=CHECKED_TRICKS_SCHEMA,
    )
    # hand_scores: two rows per hand (the official score, the as-played one beside it under a penalty)
    pen = np.array([rs.renege_penalty_tricks > 0 for rs in part.rulesets.rulesets], dtype=bool)
    a = score_arrays(o, hands, pen[p.game_ruleset[hand_game]])
    sh = np.repeat(hands, 2)
    hs = DERIVED_SCHEMAS["hand_scores"]

    def num(table: pa.Schema, name: str, x, mask=None) -> pa.Array:
        """Column ``name`` of ``table`` from the core's numbers, in the column's own type."""
        typ = table.field(name).type
        return pa.array(np.asarray(x).astype(_numpy_dtype(typ)), type=typ, mask=mask)

    cols = {
        "game_id": gid.take(pa.array(np.repeat(hand_game, 2))),
        "hand": pa.array(p.hand_no[sh]),
        "side": pa.array(["NS", "EW"]).take(pa.array(a["side"])),
        "contract": num(hs, "contract", a["contract"]),
        **{c: pa.array(a[c]) if c == "made" else num(hs, c, a[c]) for c in AS_PLAYED_COLUMNS},
        "scoring": pa.array([AS_PLAYED, AFTER_PENALTY]).take(pa.array(a["penalty"].astype(np.int8))),
    }
    none = ~a["penalty"]
    for c in AS_PLAYED_COLUMNS:
        v = a["as_played_" + c]
        cols["as_played_" + c] = pa.array(v, mask=none) if c == "made" else num(hs, "as_played_" + c, v, none)
    cols["contract_value"] = pa.array(a["contract_value"])
    scores = pa.table(cols, schema=DERIVED_SCHEMAS["hand_scores"])
    ended = o.g_ended[games]
    gw = o.g_winner[games]
    names = pa.array(list(part.rulesets.names), pa.string())
    gs = DERIVED_SCHEMAS["games"]
    games_t = pa.table(
        {
            "game_id": gid.take(pa.array(games)),
            "rules": names.take(pa.array(p.game_ruleset[games])),
            "hands": num(gs, "hands", lens),
            "total_ns": num(gs, "total_ns", np.rint(o.g_total[games, 0])),
            "total_ew": num(gs, "total_ew", np.rint(o.g_total[games, 1])),
            "winner": pa.array(["NS", "EW", None]).take(pa.array(np.where(gw == 255, 2, gw))),
            "ended_at_hand": pa.array(ended.astype(np.int32), mask=ended == K.NO_HAND),
        },
        schema=DERIVED_SCHEMAS["games"],
    )
    return {CHECKED_TRICKS: tricks, "hand_scores": scores, "games": games_t}


def check_part(
    table: pa.Table, rules: Any = None, hands: dict[str, np.ndarray] | None = None, packed: PackedPart | None = None
) -> PartResult:
    """Check a partition of whole games given as stored rows (an Arrow table with the columns of
    ``hand_records``) with the compiled core, and give the rows of the derived tables.

    Pure (no database): what a worker of a cluster runs on its partition, writing
    :attr:`PartResult.tables` as Parquet parts.  The rows and findings are the reference's
    (:func:`~spadework.analysis.engine.checker.check_game` of the same records): the core computes
    every number; the few hands with findings are re-checked by the reference for the message text;
    games the core leaves to the reference (rules findings, hands beyond the packed layout,
    numbers beyond 32 bits) are checked whole by it.  ``hands``: the per-hand arrays already made
    (see :func:`pack_table`); ``packed``: the table already packed (by :func:`pack_table`).  Raises :class:`~spadework.analysis.engine.rules.RulesError` for bad
    ``rules``.
    """
    from spadework.analysis.engine import compiled
    from spadework.analysis.engine.checker import DerivedWriter, check_game

    part = packed if packed is not None else pack_table(table, rules, hands)
    p = part.hands
    result = compiled.check_packed(p, part.rulesets)
    o = result.out
    ref = result.reference_mask | _big_games(p, o)
    ref_games = np.flatnonzero(ref)
    core_games = np.flatnonzero(~ref)
    tables = _compiled_tables(part, result, core_games)
    flagged = core_games[o.g_nfind[core_games] > 0]
    found = compiled.findings(result, part.records, flagged)
    by_game: dict[int, list] = {int(g): f for g, f in found.items() if f}
    if len(ref_games):
        writer = DerivedWriter(None)
        for g in ref_games.tolist():
            a, b = int(p.game_start[g]), int(p.game_start[g + 1])
            gc = check_game(part.records(np.arange(a, b)), rules)
            writer.add(gc)
            if gc.findings:
                by_game[g] = gc.findings
        buf = writer.buffers
        extra = {
            CHECKED_TRICKS: checked_tricks_table(buf["tricks"]),
            "hand_scores": pa.table(buf["hand_scores"], schema=writer.schemas["hand_scores"]),
            "games": pa.table(buf["games"], schema=writer.schemas["games"]),
        }
        tables = {k: pa.concat_tables([tables[k], extra[k]]) for k in tables}
    order = sorted(by_game, key=lambda g: p.game_ids[g])
    findings = [(str(p.game_ids[g]), by_game[g]) for g in order]
    rows = [f.to_row() for _, fs in findings for f in fs]
    schema = DERIVED_SCHEMAS["violations"]
    tables["violations"] = pa.table({c: [r[c] for r in rows] for c in schema.names}, schema=schema)
    return PartResult(tables, findings, p.n_games, p.n_hands, len(ref_games))


@functools.cache
def _fill_beyond(width: int) -> np.ndarray:
    """``[length, j]``: 0 where ``j < length``, else 255 (NO_CARD): OR-ed into a row of ``width``
    card ids, it blanks the places beyond the row's length (cheaper than ``np.where`` on a mask)."""
    assert NO_CARD == 255
    j = np.arange(width)[None, :]
    return np.where(j < np.arange(256)[:, None], 0, 255).astype(np.uint8)


def scan_hands(s, idx: np.ndarray) -> dict[str, np.ndarray]:
    """The per-hand arrays of :class:`~spadework.analysis.engine.packed.PackedHands` for the lines
    ``idx`` of a :class:`~spadework.parsers.jsonl_scan.Scan` (read by compiled code), in that order:
    what :func:`pack_table` makes of the rows those lines are written as, without unpacking them
    (``tests/test_engines.py`` compares the two)."""
    from spadework.analysis.engine.packed import NOT_RECORDED
    from spadework.parsers import jsonl_scan as J

    n = len(idx)
    if n == len(s.status) and (n == 0 or idx[-1] == n - 1):  # every line (the usual case): no copy
        I, S = s.ints[:n], s.small[:n]  # noqa: E741
    else:
        I, S = s.ints[idx], s.small[idx]  # noqa: E741
    no_seat = np.uint8(NO_SEAT)  # S is uint8: the results stay uint8
    out: dict[str, np.ndarray] = {}
    out["hand_no"] = I[:, J.I_HAND].astype(np.int32)
    out["dealer"] = I[:, J.I_DEALER].astype(np.uint8, copy=False)
    out["has_deal"] = I[:, J.I_HAS_DEAL] == 1
    w = I[:, J.I_WINNER]
    out["winner"] = w.astype(np.uint8, copy=False)
    dl = S[:, J.S_DEAL_LEN : J.S_DEAL_LEN + 4]
    out["deal_len"] = np.where(out["has_deal"][:, None], dl, 0).astype(np.uint8, copy=False)
    deal = S[:, J.S_DEAL : J.S_DEAL + 4 * J.MAX_DEALT].reshape(n, 4, J.MAX_DEALT)
    out["deal"] = deal | _fill_beyond(J.MAX_DEALT)[out["deal_len"]]
    nt = I[:, J.I_N_TRICKS]
    out["n_tricks"] = nt.astype(np.uint8, copy=False)
    in_t = np.arange(J.MAX_TRICKS)[None, :] < nt[:, None]
    out["trick_leader"] = np.where(in_t, S[:, J.S_LEADER : J.S_LEADER + J.MAX_TRICKS], no_seat)
    out["trick_winner"] = np.where(in_t, S[:, J.S_TRICK_WINNER : J.S_TRICK_WINNER + J.MAX_TRICKS], no_seat)
    tl = np.where(in_t, S[:, J.S_TRICK_LEN : J.S_TRICK_LEN + J.MAX_TRICKS], np.uint8(0))
    out["trick_len"] = tl.astype(np.uint8, copy=False)
    cards = S[:, J.S_CARDS : J.S_CARDS + 4 * J.MAX_TRICKS].reshape(n, J.MAX_TRICKS, 4)
    out["trick_cards"] = cards | _fill_beyond(4)[tl]
    nb_ = I[:, J.I_N_BIDS]
    out["n_bids"] = nb_.astype(np.uint8, copy=False)
    in_b = np.arange(J.MAX_BIDS)[None, :] < nb_[:, None]
    out["bid_seat"] = np.where(in_b, S[:, J.S_BID_SEAT : J.S_BID_SEAT + J.MAX_BIDS], no_seat)
    v = I[:, J.I_BID_VALUE : J.I_BID_VALUE + J.MAX_BIDS]
    out["bid_value"] = np.where(in_b, v, 0).astype(np.float64)
    flags = I[:, J.I_BID_FLAGS]
    k = np.arange(J.MAX_BIDS)[None, :]
    out["bid_nil"] = in_b & (((flags[:, None] >> k) & 1) == 1)
    out["bid_blind"] = in_b & (((flags[:, None] >> (k + 8)) & 1) == 1)
    out["bid_whole"] = in_b & (v >= 1) & (v <= 13)  # packed._whole_bid: a whole number 1..13
    bits = I[:, J.I_SET]
    taken_set = ((bits[:, None] >> np.arange(4)[None, :]) & 1) == 1
    out["has_taken"] = taken_set.any(axis=1)
    out["taken"] = np.where(taken_set, I[:, J.I_TAKEN : J.I_TAKEN + 4], NOT_RECORDED).astype(np.int32)
    score_set = ((bits[:, None] >> (4 + np.arange(6))[None, :]) & 1) == 1
    sc = np.where(score_set, I[:, J.I_SCORE : J.I_SCORE + 6], NOT_RECORDED).astype(np.int32)
    out["score_points"] = sc[:, [0, 3]]
    out["score_total"] = sc[:, [1, 4]]
    out["score_bags"] = sc[:, [2, 5]]
    before_set = ((bits[:, None] >> (10 + np.arange(4))[None, :]) & 1) == 1
    bf = np.where(before_set, I[:, J.I_BEFORE : J.I_BEFORE + 4], NOT_RECORDED).astype(np.int32)
    out["score_before"] = bf[:, 0:2]
    out["bags_before"] = bf[:, 2:4]
    out["overflow"] = np.zeros(n, bool)
    return out


def _repeats_a_hand(codes: np.ndarray, hand: np.ndarray) -> bool:
    """True when two rows hold the same (game code, hand number)."""
    same_game = codes[1:] == codes[:-1]
    if not np.any(same_game & (np.diff(hand.astype(np.int64)) <= 0)):
        return False  # hands rise within every game, as a log is written
    key = codes.astype(np.int64) << 32 | (hand.astype(np.int64) & 0xFFFFFFFF)
    return len(np.unique(key)) != len(key)


class StreamCheck:
    """The check of a validate, done while the logs load: each block of freshly read rows is checked
    as soon as its games are whole, and its derived rows are written at once (no read-back).

    The loader hands every block of rows it read with compiled code to :meth:`feed` (an Arrow
    table with the ``hand_records`` columns, in file order) and calls :meth:`invalidate` whenever
    the rows it writes are not simply those blocks: a line read by the Python parser, a hand that
    appears twice, a file loaded another way.  A game is checked once all its hands have been seen,
    which the stream knows only when a game's hands are consecutive (as a log is written, game by
    game): a game that comes back after another began also invalidates the stream.  When it stays
    valid, :meth:`finish` gives the summary and the derived tables hold what
    :func:`spadework.analysis.engine.engines.check_compiled` would write; otherwise the caller
    checks the database afterwards (which replaces whatever the stream wrote).

    ``con``: the connection the loader writes with (the derived rows join its transactions);
    ``rules``: the override for every game.
    """

    def __init__(self, con, rules: Any = None) -> None:
        self.con = con
        self.rules = rules
        self.valid = True
        self.carry: pa.Table | None = None
        self.carry_hands: dict[str, np.ndarray] | None = None
        self.done: set[str] = set()
        self.found: list[tuple[str, list]] = []
        self.games = 0
        self.hands = 0
        self.reference_games = 0
        self.seconds = 0.0
        self.sink: list[tuple[str, pa.Table]] | None = None
        """When a list, the derived rows of the games checked are appended to it as ``(table, rows)``
        (for the caller to write) instead of being inserted through ``con``."""

    def invalidate(self) -> None:
        """The rows written are not just the blocks fed: the caller checks the database instead."""
        self.valid = False
        self.carry = self.carry_hands = None

    def feed(self, table: pa.Table, final: bool = False, hands: dict[str, np.ndarray] | None = None) -> None:
        """Check the whole games of ``table`` (and of the rows carried from the block before); the
        last game waits for the next block unless ``final``.  ``hands``: the rows' per-hand arrays
        already made (:func:`scan_hands`), else the table's lists are unpacked."""
        if not self.valid:
            return
        import time

        t0 = time.perf_counter()
        if self.carry is not None:
            if hands is not None and self.carry_hands is not None:
                hands = {k: np.concatenate([self.carry_hands[k], hands[k]]) for k in hands}
            else:
                hands = None
            table = pa.concat_tables([self.carry, table]) if table.num_rows else self.carry
            self.carry = self.carry_hands = None
        n = table.num_rows
        if n == 0:
            return
        enc = table.column("game_id").combine_chunks().dictionary_encode()
        codes = enc.indices.to_numpy()
        starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
        names = enc.dictionary.to_pylist()
        if len(starts) != len(names) or any(names[c] in self.done for c in codes[starts].tolist()):
            self.invalidate()  # a game's hands are not consecutive: the caller checks the database
            return
        if _repeats_a_hand(codes, table.column("hand").to_numpy()):
            self.invalidate()  # a hand written twice: the loader keeps the first, settled at the file's end
            return
        cut = n if final else int(starts[-1])
        if not final:
            self.carry = table.slice(cut)
            self.carry_hands = None if hands is None else {k: v[cut:] for k, v in hands.items()}
        if cut:
            self._check(table.slice(0, cut), None if hands is None else {k: v[:cut] for k, v in hands.items()})
            last = codes[-1]
            self.done.update(names[c] for c in codes[starts].tolist() if final or c != last)
        self.seconds += time.perf_counter() - t0

    def _check(self, table: pa.Table, hands: dict[str, np.ndarray] | None) -> None:
        res = check_part(table, self.rules, hands)
        for name, data in res.tables.items():
            if self.sink is not None:
                self.sink.append((name, data))
            else:
                insert_arrow(self.con, name, data)
        self.found.extend(res.findings)
        self.games += res.games
        self.hands += res.hands
        self.reference_games += res.reference_games

    def finish(self):
        """Check the last game and give the :class:`~spadework.analysis.engine.checker.CheckSummary`
        (``None`` when the stream was invalidated)."""
        from spadework.analysis.engine.checker import CheckSummary

        if self.valid and self.carry is not None:
            empty = None if self.carry_hands is None else {k: v[:0] for k, v in self.carry_hands.items()}
            self.feed(self.carry.slice(0, 0), final=True, hands=empty)
        if not self.valid:
            return None
        summary = CheckSummary(games=self.games, hands=self.hands)
        for gid, fs in sorted(self.found, key=lambda gf: gf[0]):
            summary.games_with_findings.append(gid)
            summary.findings.extend(fs)
            summary.by_code.update(f.code for f in fs)
        return summary
