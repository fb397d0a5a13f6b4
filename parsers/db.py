"""Loading logs into DuckDB, and reading hand records back out.

``load_files`` streams every record of every file into the database: one ``hand_records`` row
per hand (the stored layout of :mod:`spadework.parsers.schema`, which the loaded tables of
TABLES.md - ``hands``, ``deals``, ``bids``, ``plays``, ``recorded_tricks``, ``recorded_scores`` -
are views of) plus ``load_errors`` and ``load_warnings``.  Files are written in
batches, many small files per transaction, with the result of loading them one by
one: loading a file again first removes what it loaded before; a hand whose
``(game_id, hand)`` is already loaded from another file is a load error naming that
file, so nothing is ever duplicated; a hand that appears twice in one file is a
load error at its second appearance.  A file named twice is read once.  Every
loading transaction records a new load generation (:mod:`spadework.parsers.state`),
so readers of the derived tables know a check is due.

``iter_records`` turns the tables back into :class:`~spadework.parsers.model.HandRecord`
objects, ordered by game and hand, streaming (the checker reads them this way).
:func:`hand_row` and :func:`record_from_row` are the two directions between a record and its
``hand_records`` row; every writer of ``hand_records`` goes through :func:`hand_row` (or writes
what it would).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from spadework.parsers import formats, jsontext
from spadework.parsers.encoding import CARD_CODES, CARD_ID
from spadework.parsers.io import display_name, no_hands_reason, path_list, raw_text, readable_again, spooled_source, walk, young_collections_only
from spadework.parsers.model import Bid, HandRecord, LoadError, SideScore, Trick
from spadework.parsers.schema import (
    ANALYSIS_TABLES,
    LOADED_TABLES,
    MAX_TRICKS,
    NO_WINNER,
    STORED_TABLES,
    arrow_schema,
    create_loaded_files,
    create_storage,
    pack_deal_card,
    pack_play,
    table_names,
    pack_trick,
    storage_layout,
)
from spadework.parsers.seats import SEATS, SIDES, Seat, Side
from spadework.parsers.state import mark_loaded

BATCH_HANDS = 5000
"""Hands buffered as records before a batch is written (and a transaction committed)."""

READY_ROWS_BATCH = 20_000
"""Hands buffered as ready rows (read by compiled code, :meth:`_Loader.add_rows`) before a batch is
written: an Arrow row holds far less memory than a record, and each batch costs a commit and a
query for clashes (1M hands in 73,497 one-game files: 200 batches of 5,000 spent about 3 s of 40 in
commits, sampled; 300,000 hands in 22,089 files, paired against batches of 5,000: 0.99x wall, 0.96x
user, peak memory the same)."""

QUIET_SKIP = frozenset(".md .rst .html .htm .py .ipynb .duckdb .wal .png .svg .pdf .toml .yaml .yml .cfg .ini".split())
"""Extensions of files that sit beside logs in a folder (docs, notebooks, databases): skipped without a word."""

SIDECAR_SUFFIX = ".faults.jsonl"
"""Files the simulator writes beside a log (the planted faults); skipped in folder loads when the log
they describe is beside them (``season.jsonl.faults.jsonl`` beside ``season.jsonl`` or ``season.jsonl.gz``)."""


def _is_sidecar(path: Path) -> bool:
    name = path.name
    if not name.endswith(SIDECAR_SUFFIX):
        return False
    log = path.with_name(name[: -len(SIDECAR_SUFFIX)])
    return log.name != "" and (log.exists() or log.with_name(log.name + ".gz").exists())

HAND_RECORDS = "hand_records"
HAND_RECORDS_SCHEMA = arrow_schema(STORED_TABLES[HAND_RECORDS])
"""The Arrow schema of a batch of ``hand_records`` rows (what every loader inserts)."""


def ensure_storage(con: duckdb.DuckDBPyConnection) -> None:
    """Make sure the database keeps the stored layout before anything writes to it: a database in the
    plain layout is converted (:func:`convert_plain`), missing tables and views are created.
    Every loader calls it (a connection made with ``duckdb.connect`` is welcome too)."""
    layout = storage_layout(con)
    if layout == "plain":
        convert_plain(con)
    if layout != "stored" or con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE database_name = current_database() AND view_name = 'plays'"
    ).fetchall()[0][0] == 0:
        create_storage(con)
    if layout == "empty":
        from spadework.parsers.state import start_state

        start_state(con)  # a new database: loaded by nothing and checked by nothing (until a check says so)


class NotADatabase(ValueError):
    """A ``--db`` path that is not a spadework database: another kind of file (a log, a CSV), or a
    DuckDB file whose tables of spadework's names are someone else's."""


_DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file
_KEY_COLUMNS = {
    "hand_records": ("game_id", "hand"),
    "hands": ("game_id", "hand"),
    "bids": ("game_id", "hand"),
    "plays": ("game_id", "hand"),
    "recorded_scores": ("game_id", "hand"),
    "load_errors": ("source_file", "source_line"),
}
"""Tables a spadework database has, with columns TABLES.md keys them on."""


def _refuse_foreign(con: duckdb.DuckDBPyConnection, target: str) -> None:
    rows = con.execute(
        "SELECT table_name, list(column_name) FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'main' GROUP BY table_name"
    ).fetchall()
    for table, columns in rows:
        lacking = [c for c in _KEY_COLUMNS.get(table, ()) if c not in columns]
        if lacking:
            raise NotADatabase(
                f"{target} is not a spadework database: its table {table} has no column {lacking[0]} "
                f"(a DuckDB file made by something else; give --db a new file name)"
            )


def connect(path: str | os.PathLike[str] | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (or create) a spadework database and make sure every table and view exists.

    ``path`` ``None`` or ``":memory:"`` gives an in-memory database.  A database written in the
    plain layout (before the stored layout, or by hand) is converted when ``read_only`` is false
    (:func:`convert_plain`); read-only, it is read as it is.  Raises :class:`NotADatabase` for a
    file that is not a DuckDB database (DuckDB would open a log or a CSV as an empty database in
    memory and keep nothing; an empty file too), or a DuckDB file whose tables of spadework's names
    lack their key columns; DuckDB's own errors for a file it cannot open (locked, unreadable).
    A new database's folder is made when it does not exist.
    """
    target = ":memory:" if path is None else os.fspath(path)
    if target != ":memory:" and os.path.isfile(target):
        with open(target, "rb") as f:
            head = f.read(12)
        if not head:
            raise NotADatabase(f"{target} is an empty file, not a DuckDB database (give --db a new file name, or delete it)")
        if head[8:12] != _DUCKDB_MAGIC:
            raise NotADatabase(f"{target} is not a DuckDB database (is it a log? give --db a new file name)")
    elif target != ":memory:" and not read_only:
        folder = os.path.dirname(os.path.abspath(target))
        if not os.path.isdir(folder):  # a new database in a new folder: make the folder, as report does
            os.makedirs(folder, exist_ok=True)
    con = duckdb.connect(target, read_only=read_only)
    try:
        _refuse_foreign(con, target)
        if not read_only:
            ensure_storage(con)
    except BaseException:
        con.close()
        raise
    return con


@dataclass
class FileResult:
    """What loading one file did."""

    source_file: str
    format: str | None
    hands: int = 0
    errors: int = 0
    warnings: int = 0


@dataclass
class LoadSummary:
    """What a whole load did: files read, hands loaded, records rejected (``load_errors`` rows)."""

    files: list[FileResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def hands(self) -> int:
        return sum(f.hands for f in self.files)

    @property
    def errors(self) -> int:
        return sum(f.errors for f in self.files)

    @property
    def warnings(self) -> int:
        return sum(f.warnings for f in self.files)


class _Batch:
    """Column buffers for one batch of rows, table by table."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, list[Any]]] = {}
        self.keys: list[tuple[str, int]] = []

    def add(self, table: str, **values: Any) -> None:
        cols = self.rows.setdefault(table, {k: [] for k in values})
        for k, v in values.items():
            cols[k].append(v)

    def __len__(self) -> int:
        return len(self.keys)


def _rules_text(rules: Any) -> str:
    """A record's ``rules`` as stored text.  A number beyond 64 bits (which orjson refuses) is
    written as JSON all the same: the ruleset is judged when the hand is checked, not here."""
    return rules if isinstance(rules, str) else jsontext.dumps(rules)


def _packed_deal(deal: tuple[tuple[str, ...], ...]) -> list[int]:
    return [pack_deal_card(CARD_ID[c], s, i) for s, cards in enumerate(deal) for i, c in enumerate(cards, 1)]


def _packed_play(tricks: tuple[Trick, ...]) -> tuple[list[int], list[int]]:
    if len(tricks) > MAX_TRICKS:
        raise ValueError(f"{len(tricks)} tricks cannot be stored (at most {MAX_TRICKS})")
    play, packed = [], []
    for t_no, t in enumerate(tricks, 1):
        lead = int(t.leader)
        packed.append(pack_trick(lead, None if t.winner is None else int(t.winner), t_no))
        for k, c in enumerate(t.cards[:4]):
            play.append(pack_play(CARD_ID[c], (lead + k) & 3, k + 1, t_no))
    return play, packed


def hand_row(rec: HandRecord, source: str | None) -> dict[str, Any]:
    """The ``hand_records`` row of a record (columns of ``STORED_TABLES["hand_records"]``).

    The deal is the effective deal (:meth:`HandRecord.effective_deal`; ``has_deal`` says whether
    it was recorded); cards, seats and sides are ids of :mod:`spadework.parsers.encoding`.
    Lists are packed as :data:`spadework.parsers.schema.PACKING` says.  Raises ``KeyError`` for a
    card that is not one of the 54 card codes and ``ValueError`` for more than 15 tricks (parsers
    make neither).
    """
    taken = rec.taken or (None, None, None, None)
    deal = rec.effective_deal()
    score = rec.score or (SideScore(), SideScore())
    sb, bb = rec.score_before or (None, None), rec.bags_before or (None, None)
    play, tricks = (None, None) if rec.tricks is None else _packed_play(rec.tricks)
    row: dict[str, Any] = {
        "game_id": rec.game_id,
        "hand": rec.hand,
        "event": rec.event,
        "date": rec.date,
        "table_name": rec.table,
        "round": rec.round,
        "rules": _rules_text(rec.rules),
        "rules_is_object": not isinstance(rec.rules, str),
        "dealer": int(rec.dealer),
        "player_n": rec.players[0],
        "player_e": rec.players[1],
        "player_s": rec.players[2],
        "player_w": rec.players[3],
        "taken_n": taken[0],
        "taken_e": taken[1],
        "taken_s": taken[2],
        "taken_w": taken[3],
        "has_deal": rec.deal is not None,
        "has_tricks": rec.tricks is not None,
        "winner": None if rec.winner is None else int(rec.winner),
        "extras": jsontext.dumps(rec.extras) if rec.extras else None,
        "source_file": source,
        "source_line": rec.source_line,
        "points_ns": score[0].points,
        "total_ns": score[0].total,
        "bags_ns": score[0].bags,
        "points_ew": score[1].points,
        "total_ew": score[1].total,
        "bags_ew": score[1].bags,
        "score_before_ns": sb[0],
        "score_before_ew": sb[1],
        "bags_before_ns": bb[0],
        "bags_before_ew": bb[1],
        "bid_seats": [int(b.seat) for b in rec.bids],
        "bid_values": [float(b.value) for b in rec.bids],
        "bid_nils": [b.nil for b in rec.bids],
        "bid_blinds": [b.blind for b in rec.bids],
        "deal": None if deal is None else _packed_deal(deal),
        "play": play,
        "tricks": tricks,
    }
    return row


def _add_record(batch: _Batch, rec: HandRecord, source: str) -> None:
    batch.keys.append((rec.game_id, rec.hand))
    batch.add(HAND_RECORDS, **hand_row(rec, source))
    for w in rec.warnings:
        batch.add("load_warnings", source_file=source, source_line=rec.source_line, game_id=rec.game_id, hand=rec.hand, message=w)


INT_MIN, INT_MAX = -(2**31), 2**31 - 1
"""The range of the database's INTEGER columns (hand numbers, points, totals, bags, tricks)."""


def out_of_range(rec: HandRecord) -> str | None:
    """A reason when a whole number of the record does not fit the tables (e.g. a hand number of
    99999999999), else ``None``: such a record is a load error, never a crash of the whole file."""
    # named in the game's words, as every format spells them differently (a CSV's bid_W is a JSON
    # line's bids[3].bid)
    checks: list[tuple[str, Any]] = [("the hand number", rec.hand)]
    checks += [(f"{s}'s tricks taken", v) for s, v in zip(SEATS, rec.taken or ())]
    for side, sc in zip(SIDES, rec.score or ()):
        checks += [(f"{side}'s recorded points", sc.points), (f"{side}'s recorded total", sc.total), (f"{side}'s recorded bags", sc.bags)]
    checks += [(f"{s}'s score before the hand", v) for s, v in zip(SIDES, rec.score_before or ())]
    checks += [(f"{s}'s bags before the hand", v) for s, v in zip(SIDES, rec.bags_before or ())]
    checks += [(f"{b.seat}'s bid", b.value) for b in rec.bids]
    for what, v in checks:
        if v is not None and not (INT_MIN <= v <= INT_MAX):
            low = 1 if what == "the hand number" else INT_MIN  # (hand numbers start at 1: FORMATS.md)
            return f"{what}: {v!r} is out of range (a whole number between {low} and {INT_MAX})"
    return None


def rejected_record(rec: HandRecord, source: str, reason: str) -> LoadError:
    """A readable record the loader will not write (a hand given twice, a number out of range), as a
    load error carrying the record's text as written (``rec.source_text``), or its canonical JSON
    where the format has no text of one record (a Trickster game's hands, an item of a JSON array)."""
    from spadework.parsers.jsonl import dumps_record

    text = rec.source_text
    if text is not None:
        return LoadError(source, rec.source_line or 0, reason, raw_text(text) if isinstance(text, bytes) else text)
    try:
        raw = dumps_record(rec)
    except (TypeError, ValueError):  # a number JSON cannot carry (over 64 bits)
        raw = repr(rec)
    return LoadError(source, rec.source_line or 0, reason, raw)


def _table_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [r[0] for r in con.execute(f"SELECT * FROM {table} LIMIT 0").description]


def _flush(con: duckdb.DuckDBPyConnection, batch: _Batch, errors: list[LoadError]) -> None:
    for table, cols in batch.rows.items():
        arrow = pa.table(cols, schema=HAND_RECORDS_SCHEMA) if table == HAND_RECORDS else pa.table(cols)
        con.register("_batch", arrow)
        names = ", ".join(cols)
        con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM _batch")
        con.unregister("_batch")
    if errors:
        arrow = pa.table(
            {
                "source_file": [e.source_file for e in errors],
                "source_line": [e.source_line for e in errors],
                "message": [e.message for e in errors],
                "raw": [e.raw for e in errors],
            }
        )
        con.register("_errors", arrow)
        con.execute("INSERT INTO load_errors SELECT * FROM _errors")
        con.unregister("_errors")


LOADED_FILES = "loaded_files"  # (made by schema.create_loaded_files)
"""The table of the files loaded so far: ``source_file`` (the name their rows carry, see
:func:`~spadework.parsers.io.display_name`) and ``path`` (the file's absolute path with links
resolved, when it was loaded), so that a file loaded again from another working directory, or by
its absolute path, replaces its rows instead of clashing with them."""


def _real_path(source: str) -> str | None:
    return os.path.realpath(source) if os.path.isfile(source) else None


def real_paths(sources: Iterable[str]) -> dict[str, str]:
    """``{source: its real path}`` for the sources that are files (links resolved)."""
    return {s: p for s in sources if (p := _real_path(s)) is not None}


def file_aliases(
    con: duckdb.DuckDBPyConnection,
    sources: Iterable[str],
    real: Mapping[str, str] | None = None,
    known: Known | None = None,
) -> dict[str, str]:
    """``{other name: source}``: the names under which each file of ``sources`` was loaded before
    (from another working directory, or by its absolute path: ``source_file`` is the path as
    :func:`~spadework.parsers.io.display_name` gives it then).  Empty when nothing was.  ``real``:
    :func:`real_paths` of ``sources`` when the caller has it (one ``realpath`` per file); ``known``:
    what the database holds, when the caller keeps it (:class:`Known`; a path outside it needs no query)."""
    real = real_paths(sources) if real is None else {s: real[s] for s in sources if s in real}
    if not real or (known is not None and known.paths.isdisjoint(real.values())):
        return {}
    create_loaded_files(con)
    by_path: dict[str, str] = {}
    for s, p in real.items():
        by_path.setdefault(p, s)
    con.register("_alias_paths", pa.table({"path": list(by_path)}))
    try:
        rows = con.execute(f"SELECT source_file, path FROM {LOADED_FILES} WHERE path IN (SELECT path FROM _alias_paths)").fetchall()
    finally:
        con.unregister("_alias_paths")
    return {name: by_path[p] for name, p in rows if name not in real}


@dataclass
class Known:
    """What a database holds of loaded files, kept by a loader that writes many batches: ``names``,
    every ``source_file`` of ``hand_records``, ``load_errors``, ``load_warnings`` and
    :data:`LOADED_FILES`; ``paths``, every path of :data:`LOADED_FILES`.  Supersets are safe (a name
    or path in them costs a query); :func:`_forget_files` adds what it writes."""

    names: set[str]
    paths: set[str]

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection) -> Known:
        create_loaded_files(con)
        names = {
            name
            for (name,) in con.execute(
                f"SELECT source_file FROM {HAND_RECORDS} UNION SELECT source_file FROM load_errors "
                f"UNION SELECT source_file FROM load_warnings UNION SELECT source_file FROM {LOADED_FILES}"
            ).fetchall()
        }
        return cls(names, {p for (p,) in con.execute(f"SELECT DISTINCT path FROM {LOADED_FILES}").fetchall()})


def _forget_files(
    con: duckdb.DuckDBPyConnection,
    sources: list[str],
    real: Mapping[str, str] | None = None,
    known: Known | None = None,
) -> None:
    """Remove everything previous loads of ``sources`` wrote (one statement per table for them all),
    also under the other names the same files were loaded by (:func:`file_aliases`), and record the
    files' paths in :data:`LOADED_FILES`.  ``real``: :func:`real_paths` of ``sources`` when the caller
    has it.  ``known``: what the database holds, when the caller keeps it (:class:`Known`, brought up
    to date here): sources and paths outside it have nothing to remove, so the tables are not searched."""
    if not sources:
        return
    sources = list(dict.fromkeys(sources))
    real = real_paths(sources) if real is None else {s: real[s] for s in sources if s in real}
    if real:
        aliases = file_aliases(con, real, real, known)
        con.register("_loaded_paths", pa.table({"source_file": list(real), "path": list(real.values())}))
        try:
            if known is None or not (known.names.isdisjoint(real) and known.paths.isdisjoint(real.values())):
                con.execute(
                    f"DELETE FROM {LOADED_FILES} WHERE source_file IN (SELECT source_file FROM _loaded_paths) "
                    f"OR path IN (SELECT path FROM _loaded_paths)"
                )
            # (a row already there is not added again: ``known`` may predate another loader's insert)
            con.execute(
                f"INSERT INTO {LOADED_FILES} SELECT source_file, path FROM _loaded_paths p WHERE NOT EXISTS "
                f"(SELECT 1 FROM {LOADED_FILES} l WHERE l.source_file = p.source_file AND l.path = p.path)"
            )
        finally:
            con.unregister("_loaded_paths")
        sources += [a for a in aliases if a not in sources]
    if known is not None:
        new = known.names.isdisjoint(sources)
        known.names.update(sources)
        known.paths.update(real.values())
        if new:
            return  # nothing of these files is loaded (the usual case for new files)
    con.register("_forget_sources", pa.table({"source_file": sources}))
    try:
        where = "source_file IN (SELECT source_file FROM _forget_sources)"
        if not con.execute(
            f"SELECT (SELECT count(*) FROM (SELECT 1 FROM {HAND_RECORDS} WHERE {where} LIMIT 1)) + "
            f"(SELECT count(*) FROM (SELECT 1 FROM load_errors WHERE {where} LIMIT 1)) + "
            f"(SELECT count(*) FROM (SELECT 1 FROM load_warnings WHERE {where} LIMIT 1))"
        ).fetchall()[0][0]:
            return  # nothing of these files is loaded (the usual case for new files)
        # the double-dummy judgements of the hands removed (``spadework analyse``) go with them: a
        # file loaded again may hold other deals under the same game ids and hand numbers
        have = table_names(con)
        for table in (t for t in ANALYSIS_TABLES if t in have):
            con.execute(
                f"DELETE FROM {table} WHERE (game_id, hand) IN (SELECT game_id, hand FROM {HAND_RECORDS} WHERE {where})"
            ).fetchall()
        for table in (HAND_RECORDS, "load_warnings", "load_errors"):
            con.execute(f"DELETE FROM {table} WHERE {where}").fetchall()
    finally:
        con.unregister("_forget_sources")


def _forget_file(con: duckdb.DuckDBPyConnection, source: str) -> None:
    """Remove everything a previous load of ``source`` wrote."""
    _forget_files(con, [source])


def appears_twice(key: tuple[str, int], first_line: int | None) -> str:
    """The load error of a second record of ``key`` (game_id, hand) in one file."""
    where = f" (first at line {first_line})" if first_line is not None else ""
    return f"hand {key[1]} of game {key[0]!r} appears twice in this file{where}"


@dataclass
class _Rows:
    """One file's hands as ready ``hand_records`` rows (read by compiled code, see :meth:`_Loader.add_rows`)."""

    table: pa.Table  # the hand_records columns but source_file, one row per hand (of this file and maybe others)
    start: int  # the file's first row in table; its rows follow in line order
    rows: list[int]  # the file's rows (0 = its first) still to be written (not a hand the file repeats)
    keys: list[tuple[str, int]]  # (game_id, hand) of each of rows
    lines: list[int]  # the line of each of rows
    record: Callable[[int], HandRecord]  # the record of the file's row j (only for the text of a load error)


def row_keys(rows: pa.Table) -> tuple[list[tuple[str, int]], list[int]]:
    """The ``(game_id, hand)`` and ``source_line`` of ``hand_records`` rows, as Python values."""
    return list(zip(rows.column("game_id").to_pylist(), rows.column("hand").to_pylist())), rows.column("source_line").to_pylist()


class _Loader:
    """Writes the records of one or more files, many files per transaction and per batch.

    Each file is read as one stream (:meth:`add_file`); its records are buffered with those of
    the files before it and written every :data:`BATCH_HANDS` hands, so a thousand one-hand files
    cost about what one thousand-hand file does.  What each file's records become is exactly what
    loading the files one at a time, in order, would give:

    - the rows an earlier load of a file wrote are removed before its new rows are written;
    - a second record of a ``(game_id, hand)`` in one file is a load error ("appears twice in this
      file");
    - a record whose ``(game_id, hand)`` is loaded from another file (loaded before, or earlier in
      this load) is a load error naming that file and line; the hands of a file that is being
      loaded again no longer count from the moment its turn comes.

    Every transaction calls :func:`spadework.parsers.state.mark_loaded`.  On an exception the open
    transaction is rolled back (the files written in it are left as they were before) and the
    exception propagates.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, on_batch: Callable[[int, int], None] | None = None) -> None:
        self.con = con
        self.on_batch = on_batch
        self.in_transaction = False
        self.written = 0  # hands written (or buffered) since the transaction began
        self.records_written = 0  # of which records (the rest: ready rows)
        self.order: dict[str, int] = {}  # file -> its turn in this load
        self.pending: list[tuple[HandRecord, str, FileResult]] = []
        self.errors: list[LoadError] = []
        self.to_forget: list[str] = []  # files whose turn came since the last write
        # what the tables hold of loaded files: read as the first transaction begins, then kept up to
        # date by write() (and by a caller that writes rows of its own between transactions: note())
        self.known: Known | None = None

    def _begin(self) -> None:
        if not self.in_transaction:
            ensure_storage(self.con)
            self.con.execute("BEGIN TRANSACTION")
            self.in_transaction = True
            mark_loaded(self.con)
        if self.known is None:
            self.known = Known.read(self.con)

    @property
    def due(self) -> bool:
        """Enough is buffered or written since the transaction began to write and commit it
        (:data:`BATCH_HANDS` records or load errors, :data:`READY_ROWS_BATCH` hands in all)."""
        return self.records_written >= BATCH_HANDS or self.written >= READY_ROWS_BATCH or len(self.errors) >= BATCH_HANDS

    def note(self, sources: Iterable[str]) -> None:
        """Sources whose rows were written (by this loader, or by the caller between its transactions)."""
        if self.known is not None:
            sources = list(sources)
            self.known.names.update(sources)
            self.known.paths.update(real_paths(sources).values())

    def add_file(self, items: Iterable[HandRecord | LoadError], source: str, fmt: str | None) -> FileResult:
        """Buffer (and write, batch by batch) one file's stream of records and load errors."""
        self._begin()
        result = FileResult(source, fmt)
        self.order[source] = len(self.order)
        self.to_forget.append(source)
        seen: dict[tuple[str, int], int | None] = {}
        with young_collections_only():
            for item in items:
                if isinstance(item, LoadError):
                    self.errors.append(item)
                    result.errors += 1
                else:
                    key = (item.game_id, item.hand)
                    if key in seen:
                        self.errors.append(rejected_record(item, source, appears_twice(key, seen[key])))
                        result.errors += 1
                        continue
                    problem = out_of_range(item)
                    if problem:
                        self.errors.append(rejected_record(item, source, problem))
                        result.errors += 1
                        continue
                    seen[key] = item.source_line
                    self.pending.append((item, source, result))
                    self.written += 1
                    self.records_written += 1
                if len(self.pending) >= BATCH_HANDS or len(self.errors) >= BATCH_HANDS:
                    self.write()
        return result

    def add_rows(
        self,
        table: pa.Table,
        source: str,
        fmt: str | None,
        record: Callable[[int], HandRecord],
        start: int = 0,
        keys: list[tuple[str, int]] | None = None,
        lines: list[int] | None = None,
    ) -> FileResult:
        """:meth:`add_file` for a file whose every hand is already a ``hand_records`` row: rows
        ``start`` to ``start + len(keys)`` of ``table`` (every column but ``source_file``, in line
        order, every number in range; its lines read by compiled code, so no load error or warning of
        their own; the rest of the table may hold other files' rows, so that a batch of many small
        files is one ``take``).  ``keys``/``lines``: the rows' ``(game_id, hand)`` and
        ``source_line`` (default: read from ``table``, every row from ``start``).  ``record(j)``: the
        file's row ``j`` as a record, asked for only when it becomes a load error (a hand twice, or
        loaded elsewhere)."""
        self._begin()
        result = FileResult(source, fmt)
        self.order[source] = len(self.order)
        self.to_forget.append(source)
        if keys is None or lines is None:
            keys, lines = row_keys(table.slice(start))
        seen: dict[tuple[str, int], int] = {}
        keep: list[int] = []
        for j, key in enumerate(keys):
            if key in seen:
                self.errors.append(rejected_record(record(j), source, appears_twice(key, seen[key])))
                result.errors += 1
                continue
            seen[key] = lines[j]
            keep.append(j)
        if len(keep) == len(keys):
            kept_keys, kept_lines = keys, lines
        else:
            kept_keys, kept_lines = [keys[j] for j in keep], [lines[j] for j in keep]
        self.pending.append((_Rows(table, start, keep, kept_keys, kept_lines, record), source, result))
        self.written += len(keep)
        if self.due:
            self.write()
        return result

    def _keys(self, skip: set[int] = frozenset()) -> Iterator[tuple[tuple[str, int], int | None, Any, str, FileResult]]:  # type: ignore[assignment]
        """Each buffered hand in order: (key, line, the record or (rows, j), source, result); ``skip``:
        ids of buffered ``_Rows`` to leave out."""
        for item, source, result in self.pending:
            if id(item) in skip:
                continue
            if isinstance(item, _Rows):
                for j, key, line in zip(item.rows, item.keys, item.lines):
                    yield key, line, (item, j), source, result
            else:
                yield (item.game_id, item.hand), item.source_line, item, source, result

    def _loaded_elsewhere(self) -> dict[tuple[str, int], list[tuple[str, int]]]:
        """Where the database holds the keys of the buffered records (before this batch's files are forgotten)."""
        pend = [k for k, *_ in self._keys()]
        keys = pa.table({"game_id": [g for g, _ in pend], "hand": pa.array([h for _, h in pend], pa.int64())})
        self.con.register("_new_keys", keys)
        try:
            rows = self.con.execute(
                f"SELECT h.game_id, h.hand, h.source_file, h.source_line FROM {HAND_RECORDS} h "
                "WHERE (h.game_id, h.hand) IN (SELECT game_id, hand FROM _new_keys)"
            ).fetchall()
        finally:
            self.con.unregister("_new_keys")
        out: dict[tuple[str, int], list[tuple[str, int]]] = {}
        for g, h, f, ln in rows:
            out.setdefault((g, h), []).append((f, ln))
        return out

    def write(self) -> None:
        """Write what is buffered: forget the files whose turn came, reject clashes, insert the rest."""
        if not (self.pending or self.errors or self.to_forget):
            return
        self._begin()
        forgetting = set(self.to_forget)
        real = real_paths(forgetting)
        alias_of = file_aliases(self.con, forgetting, real, self.known) if self.pending else {}  # the same files under other names
        elsewhere = self._loaded_elsewhere() if self.pending else {}
        batch = _Batch()
        here: dict[tuple[str, int], tuple[str, int | None]] = {}
        kept: dict[int, list[int]] = {}  # id of a _Rows -> its rows written
        # a file read as ready rows whose hands are loaded nowhere else and appear once in the batch
        # goes in whole (the per-hand search below costs more than the rest of writing it)
        counts = Counter(chain.from_iterable(i.keys if isinstance(i, _Rows) else ((i.game_id, i.hand),) for i, _, _ in self.pending))
        risky = {k for k, n in counts.items() if n > 1}.union(elsewhere)
        whole = {id(i) for i, _, _ in self.pending if isinstance(i, _Rows) and risky.isdisjoint(i.keys)}
        for item, _, result in self.pending:
            if id(item) in whole:
                kept[id(item)] = item.rows
                result.hands += len(item.rows)
        for key, line, rec, source, result in self._keys(skip=whole):
            clash = None
            for named, other_line in elsewhere.get(key, ()):
                other = alias_of.get(named, named)
                # the file's own old rows, and those of a file reloaded before its turn, are gone by then
                if other == source or (other in forgetting and self.order[other] < self.order[source]):
                    continue
                clash = (named, other_line)  # the rows' name as it stands (the file's turn has not come)
                break
            if clash is None:
                clash = here.get(key)
            if clash is not None:
                self.errors.append(
                    rejected_record(
                        rec if isinstance(rec, HandRecord) else rec[0].record(rec[1]),
                        source,
                        f"hand {key[1]} of game {key[0]!r} is already loaded from {clash[0]}:{clash[1]}; not loaded "
                        f"again (load that file again to replace it, or give this game another id)",
                    )
                )
                result.errors += 1
                continue
            here[key] = (source, line)
            result.hands += 1
            if isinstance(rec, HandRecord):
                _add_record(batch, rec, source)
                result.warnings += len(rec.warnings)
            else:
                kept.setdefault(id(rec[0]), []).append(rec[1])
        _forget_files(self.con, self.to_forget, real, self.known)
        self.note(e.source_file for e in self.errors)
        _flush(self.con, batch, self.errors)
        # the ready rows: one take per table they lie in (a group of small files shares one), with
        # source_file as a dictionary column of the batch's file names
        rows = 0
        names: dict[str, int] = {}
        taken: dict[int, tuple[pa.Table, list[np.ndarray], list[np.ndarray]]] = {}
        for item, source, _ in self.pending:
            if isinstance(item, _Rows) and id(item) in kept:
                keep = np.asarray(kept[id(item)], dtype=np.int64)  # rows neither repeated nor loaded elsewhere
                _, at, of = taken.setdefault(id(item.table), (item.table, [], []))
                at.append(keep + item.start)
                of.append(np.full(len(keep), names.setdefault(source, len(names)), dtype=np.int32))
                rows += len(keep)
        if rows:
            dictionary = pa.array(list(names), pa.string())
            tables = [
                t.take(pa.array(np.concatenate(at))).append_column(
                    "source_file", pa.DictionaryArray.from_arrays(pa.array(np.concatenate(of)), dictionary)
                )
                for t, at, of in taken.values()
            ]
            # one chunk per column: DuckDB reads thousands of one-file chunks far slower
            self.con.register("_rows", pa.concat_tables(tables).combine_chunks())
            try:
                self.con.execute(f"INSERT INTO {HAND_RECORDS} BY NAME SELECT * FROM _rows")
            finally:
                self.con.unregister("_rows")
        if self.on_batch:
            self.on_batch(len(batch) + rows, len(self.errors))
        self.pending, self.errors, self.to_forget = [], [], []

    def commit(self) -> None:
        """Write what is buffered and commit the transaction."""
        self.write()
        if self.in_transaction:
            self.con.execute("COMMIT")
            self.in_transaction = False
            self.written = self.records_written = 0

    def rollback(self) -> None:
        if self.in_transaction:
            self.con.execute("ROLLBACK")
            self.in_transaction = False
        self.pending, self.errors, self.to_forget = [], [], []


def load_items(
    con: duckdb.DuckDBPyConnection,
    items: Iterable[HandRecord | LoadError],
    source: str,
    fmt: str | None = None,
    on_batch: Callable[[int, int], None] | None = None,
) -> FileResult:
    """Write one file's stream of records and load errors in one transaction.

    Previous rows of ``source`` are removed first.  A second record with the same
    ``(game_id, hand)`` in the stream becomes a :class:`LoadError`, as does a record whose hand is
    already loaded from another file.  ``on_batch(hands, errors)`` is called after each batch (for
    progress bars).  Returns the counts.  On an exception the transaction is rolled back and the
    exception propagates: a half-loaded file never stays in the database.
    """
    loader = _Loader(con, on_batch)
    try:
        result = loader.add_file(items, source, fmt)
        loader.commit()
    except BaseException:
        loader.rollback()
        raise
    return result


def load_files(
    con: duckdb.DuckDBPyConnection,
    paths: Iterable[str | os.PathLike[str]],
    fmt: str | None = None,
    progress: bool = False,
) -> LoadSummary:
    """Load files and folders (recursively) into the database.

    Files are matched to a format by extension, then content (see
    :mod:`spadework.parsers.formats`); inside folders, files that are in no known format are
    skipped and listed in ``LoadSummary.skipped``, while a file named explicitly that cannot be
    read or identified gets a ``load_errors`` row (line 0).  An empty file gets a ``load_errors``
    row too ("no hands").  A file named twice (see :func:`spadework.parsers.io.walk`) is loaded once.

    Files are written together, many per transaction (a transaction closes at the first file
    boundary after :data:`BATCH_HANDS` hands, see :attr:`_Loader.due`), with the results of loading them one by one (see
    :class:`_Loader`).  On an exception the files of the open transaction are left as they were
    and the exception propagates; files committed before stay loaded.
    ``progress`` shows a rich progress bar on standard error.
    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    summary = LoadSummary()
    paths = path_list(paths)
    files = list(walk(paths))
    bar = _Progress(len(files)) if progress else None
    loader = _Loader(con, bar.on_batch if bar else None)
    try:
        for path, source, file_fmt in log_files(paths, files, fmt, summary, bar):
            items = _with_empty_check(formats.load(path, fmt=file_fmt, source=source), path, source)
            summary.files.append(loader.add_file(items, source, file_fmt))
            if loader.due:
                loader.commit()
            if bar:
                bar.advance_file(source)
        loader.commit()
    except BaseException:
        loader.rollback()
        raise
    finally:
        if bar:
            bar.close()
    return summary


def log_files(
    paths: list, files: list[Path], fmt: str | None, summary: LoadSummary, bar: "_Progress | None" = None
) -> Iterator[tuple[Path, str, str | None]]:
    """The log files among ``files`` (found under ``paths``), each with its ``source_file`` name and format.

    Inside folders, the simulator's sidecars and files with an extension of :data:`QUIET_SKIP` (docs,
    notebooks, databases) are passed over unread, and files in no known format are listed in
    ``summary.skipped``; a file named explicitly always comes out (an unknown format then gives a
    ``load_errors`` row).  Shared by every loader.
    """
    explicit = {display_name(p) for p in paths}
    for path in files:
        source = display_name(path)
        if source not in explicit and (_is_sidecar(path) or path.suffix.lower() in QUIET_SKIP):
            if bar:  # beside the logs, not logs (the simulator's planted faults, docs, databases): not read
                bar.advance_file(source)
            continue
        named = source in explicit
        path = readable_again(path)  # a pipe (/dev/stdin) is read once, into a file read as often as needed
        source = spooled_source(source, path)
        file_fmt = fmt
        try:
            unreadable = not path.exists() or path.is_dir()
        except PermissionError:  # in a folder that can be listed but not entered
            unreadable = True
        if unreadable:
            # a link whose target is gone, a folder that cannot be listed, a file that cannot be
            # reached: formats.load names it in load_errors
            yield path, source, file_fmt
            continue
        if file_fmt is None:
            try:
                file_fmt = formats.detect(path)
            except formats.UnknownFormat:
                if not named:
                    summary.skipped.append(source)
                    if bar:
                        bar.advance_file(source)
                    continue
        yield path, source, file_fmt


def no_hands_error(path: str | os.PathLike[str], source: str) -> LoadError:
    """The load error of a file that gave no hand and no rejected record (every loader's), with
    :func:`~spadework.parsers.io.no_hands_reason`'s reason."""
    return LoadError(source, 0, no_hands_reason(path), "")


def _with_empty_check(items: Iterator[HandRecord | LoadError], path: str | os.PathLike[str], source: str) -> Iterator[HandRecord | LoadError]:
    any_item = False
    for item in items:
        any_item = True
        yield item
    if not any_item:
        yield no_hands_error(path, source)


class _Progress:
    """A rich progress bar counting files and hands (on standard error)."""

    def __init__(self, total_files: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.hands = 0
        self.errors = 0
        self.progress = Progress(
            TextColumn("[bold]loading[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("files  {task.fields[hands]:,} hands  {task.fields[errors]:,} rejected  {task.fields[name]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True, emoji=False),
            transient=True,
        )
        self.task = self.progress.add_task("load", total=total_files, hands=0, errors=0, name="")
        self.progress.start()

    def on_batch(self, hands: int, errors: int) -> None:
        self.hands += hands
        self.errors += errors
        self.progress.update(self.task, hands=self.hands, errors=self.errors)

    def advance_file(self, name: str) -> None:
        self.progress.update(self.task, advance=1, name=os.path.basename(name))

    def close(self) -> None:
        self.progress.stop()


# --- reading records back -------------------------------------------------------------------------


def _grouped(cur: duckdb.DuckDBPyConnection, query: str, params: list[Any], chunk: int = 20000) -> Iterator[tuple[tuple[str, int], list[tuple]]]:
    """Run a query whose first two columns are game_id, hand (ordered), yielding rows grouped by them."""
    cur.execute(query, params)
    key: tuple[str, int] | None = None
    group: list[tuple] = []
    while True:
        rows = cur.fetchmany(chunk)
        if not rows:
            break
        for row in rows:
            k = (row[0], row[1])
            if k != key:
                if key is not None:
                    yield key, group
                key, group = k, []
            group.append(row)
    if key is not None:
        yield key, group


class _Merger:
    """Advances a grouped stream to a key (all streams share the same order)."""

    def __init__(self, it: Iterator[tuple[tuple[str, int], list[tuple]]]) -> None:
        self.it = it
        self.head = next(it, None)

    def take(self, key: tuple[str, int]) -> list[tuple]:
        while self.head is not None and self.head[0] < key:
            self.head = next(self.it, None)
        if self.head is not None and self.head[0] == key:
            rows = self.head[1]
            self.head = next(self.it, None)
            return rows
        return []


def iter_records(con: duckdb.DuckDBPyConnection, where: str | None = None, params: list[Any] | None = None) -> Iterator[HandRecord]:
    """Stream the loaded hands back as :class:`HandRecord`, ordered by ``game_id`` then ``hand``.

    ``where`` is an optional SQL condition on the stored rows (``hand_records``, alias ``h``; the
    columns of ``hands``, with ``dealer`` and ``winner`` as ids), e.g. ``"h.game_id = ?"`` with
    ``params``.  The records are what was loaded, field for field (a JSONL -> DuckDB -> JSONL
    round trip is lossless); deals inferred from the play are not returned as a recorded deal.
    A database in the plain layout (opened read-only) is read from its tables.
    """
    if storage_layout(con) == "plain":
        columns, parts = record_rows(con, where, params)
        yield from records_from_rows(columns, parts)
        return
    cond = f"WHERE {where}" if where else ""
    warnings: dict[tuple[str, int], tuple[str, ...]] = {
        (g, h): tuple(m)
        for g, h, m in con.execute(
            "SELECT game_id, hand, list(message ORDER BY message) FROM load_warnings "
            "WHERE game_id IS NOT NULL AND hand IS NOT NULL GROUP BY ALL"
        ).fetchall()
    }
    cur = con.cursor()
    try:
        cur.execute(f"SELECT * FROM {HAND_RECORDS} h {cond} ORDER BY game_id, hand", params or [])
        names = [d[0] for d in cur.description]
        while True:
            rows = cur.fetchmany(5000)
            if not rows:
                break
            for r in rows:
                row = dict(zip(names, r))
                yield record_from_row(row, warnings.get((row["game_id"], row["hand"]), ()))
    finally:
        cur.close()


_SEATS_BY_ID = tuple(SEATS)
_SIDES_BY_ID = tuple(SIDES)


PLAY_COLUMNS = ("deal", "play", "tricks")
"""The ``hand_records`` columns of a hand's deal and card play (:func:`record_from_row` with
``play=False`` needs none of them)."""


def record_from_row(row: Mapping[str, Any], warnings: tuple[str, ...] = (), play: bool = True) -> HandRecord:
    """The :class:`HandRecord` of a ``hand_records`` row (a mapping of its columns); the inverse of
    :func:`hand_row`.  ``warnings``: the hand's ``load_warnings`` messages.  ``play=False``: the
    record leaves out the deal and the tricks (``None``; the row needs none of :data:`PLAY_COLUMNS`),
    for a caller that reads only the bids and scores."""
    deal = None
    if play and row["has_deal"]:
        hands: list[list[str]] = [[], [], [], []]
        for x in row["deal"] or ():
            hands[(x >> 6) & 3].append(CARD_CODES[x & 63])
        deal = tuple(tuple(h) for h in hands)
    bids = []
    for seat, value, nil, blind in zip(row["bid_seats"], row["bid_values"], row["bid_nils"], row["bid_blinds"]):
        bids.append(Bid(_SEATS_BY_ID[seat], int(value) if float(value).is_integer() else value, bool(nil), bool(blind)))
    tricks = None
    if play and row["has_tricks"]:
        cards: dict[int, list[str]] = {}
        for x in row["play"] or ():
            cards.setdefault(x >> 11, []).append(CARD_CODES[x & 63])
        tricks = tuple(
            Trick(_SEATS_BY_ID[x & 3], tuple(cards.get(x >> 5, ())), None if (x >> 2) & 7 == NO_WINNER else _SEATS_BY_ID[(x >> 2) & 7])
            for x in row["tricks"] or ()
        )
    taken_vals = (row["taken_n"], row["taken_e"], row["taken_s"], row["taken_w"])
    taken = None if all(v is None for v in taken_vals) else taken_vals
    parts = (
        SideScore(row["points_ns"], row["total_ns"], row["bags_ns"]),
        SideScore(row["points_ew"], row["total_ew"], row["bags_ew"]),
    )
    score = None if all(p.is_empty() for p in parts) else parts
    sb = (row["score_before_ns"], row["score_before_ew"])
    bb = (row["bags_before_ns"], row["bags_before_ew"])
    rules: Any = jsontext.loads(row["rules"]) if row["rules_is_object"] else row["rules"]
    return HandRecord(
        game_id=row["game_id"],
        hand=row["hand"],
        dealer=_SEATS_BY_ID[row["dealer"]],
        players=(row["player_n"], row["player_e"], row["player_s"], row["player_w"]),
        bids=tuple(bids),
        rules=rules,
        event=row["event"],
        date=row["date"],
        table=row["table_name"],
        round=row["round"],
        deal=deal,
        tricks=tricks,
        taken=taken,
        score=score,
        score_before=None if None in sb else sb,
        bags_before=None if None in bb else bb,
        winner=None if row["winner"] is None else _SIDES_BY_ID[row["winner"]],
        extras=jsontext.loads(row["extras"]) if row["extras"] else {},
        warnings=warnings,
        source_file=row["source_file"],
        source_line=row["source_line"],
    )


# --- the plain layout: reading it, converting it --------------------------------------------------


def record_rows(
    con: duckdb.DuckDBPyConnection, where: str | None = None, params: list[Any] | None = None, prefix: str = ""
) -> tuple[list[str], Iterator[tuple]]:
    """The rows of a plain-layout database behind :func:`iter_records`: ``(columns, parts)`` where
    ``columns`` names the ``hands`` columns and each item of ``parts`` holds one hand's rows (its
    ``hands`` row, then its rows of deals, bids, recorded_tricks, plays, recorded_scores,
    load_warnings); :func:`records_from_rows` turns them into records.  ``prefix``: of the table
    names (the conversion reads the renamed tables)."""
    params = params or []
    cond = f"WHERE {where}" if where else ""
    sel = f"(SELECT game_id, hand FROM {prefix}hands h {cond})"
    order = "ORDER BY game_id, hand"

    def q(table: str, cols: str, extra_order: str, extra_where: str = "") -> str:
        return (
            f"SELECT game_id, hand, {cols} FROM {prefix}{table} t WHERE (game_id, hand) IN {sel} {extra_where} "
            f"{order}, {extra_order}"
        )

    hand_cols = [c for c in _table_columns(con, f"{prefix}hands")]
    main = con.cursor()
    main.execute(f"SELECT {', '.join(hand_cols)} FROM {prefix}hands h {cond} {order}", params)
    seat_order = "CASE seat WHEN 'N' THEN 0 WHEN 'E' THEN 1 WHEN 'S' THEN 2 ELSE 3 END"
    deals = _Merger(_grouped(con.cursor(), q("deals", "seat, card", f"{seat_order}, card_order", "AND NOT inferred"), params))
    bids = _Merger(_grouped(con.cursor(), q("bids", "seat, bid_value, nil, blind", "bid_order"), params))
    tricks = _Merger(_grouped(con.cursor(), q("recorded_tricks", "trick, leader, winner", "trick"), params))
    plays = _Merger(_grouped(con.cursor(), q("plays", "trick, card", "trick, play_order"), params))
    scores = _Merger(_grouped(con.cursor(), q("recorded_scores", "side, points, total, bags, score_before, bags_before", "side DESC"), params))
    warns = _Merger(_grouped(con.cursor(), q("load_warnings", "message", "message"), params))
    gi, hi = hand_cols.index("game_id"), hand_cols.index("hand")

    def parts() -> Iterator[tuple]:
        while True:
            rows = main.fetchmany(5000)
            if not rows:
                break
            for row in rows:
                key = (row[gi], row[hi])
                yield (row, deals.take(key), bids.take(key), tricks.take(key), plays.take(key), scores.take(key), warns.take(key))

    return hand_cols, parts()


def records_from_rows(columns: list[str], parts: Iterable[tuple]) -> Iterator[HandRecord]:
    """Items of :func:`record_rows` as :class:`HandRecord` (``columns``: its ``columns``)."""
    idx = {c: i for i, c in enumerate(columns)}
    for p in parts:
        yield _record(p[0], idx, *p[1:])


def _record(row, idx, deal_rows, bid_rows, trick_rows, play_rows, score_rows, warn_rows) -> HandRecord:
    get = lambda c: row[idx[c]]  # noqa: E731
    deal = None
    if get("has_deal"):
        hands: list[list[str]] = [[], [], [], []]
        for r in deal_rows:
            hands[Seat.parse(r[2])].append(r[3])
        deal = tuple(tuple(h) for h in hands)
    bids = []
    for r in bid_rows:
        value = r[3]
        value = int(value) if float(value).is_integer() else value
        bids.append(Bid(Seat.parse(r[2]), value, bool(r[4]), bool(r[5])))
    tricks = None
    if get("has_tricks"):
        cards_by_trick: dict[int, list[str]] = {}
        for r in play_rows:
            cards_by_trick.setdefault(r[2], []).append(r[3])
        tricks = tuple(
            Trick(Seat.parse(r[3]), tuple(cards_by_trick.get(r[2], ())), None if r[4] is None else Seat.parse(r[4]))
            for r in trick_rows
        )
    taken_vals = (get("taken_n"), get("taken_e"), get("taken_s"), get("taken_w"))
    taken = None if all(v is None for v in taken_vals) else taken_vals
    by_side = {Side.parse(r[2]): r for r in score_rows}
    score = None
    score_before = bags_before = None
    if by_side:
        parts = tuple(
            SideScore(*(by_side[s][3:6] if s in by_side else (None, None, None))) for s in SIDES
        )
        score = None if all(p.is_empty() for p in parts) else parts
        sb = [by_side[s][6] if s in by_side else None for s in SIDES]
        bb = [by_side[s][7] if s in by_side else None for s in SIDES]
        score_before = None if None in sb else (sb[0], sb[1])
        bags_before = None if None in bb else (bb[0], bb[1])
    rules_text = get("rules")
    rules: Any = jsontext.loads(rules_text) if get("rules_is_object") else rules_text
    extras = jsontext.loads(get("extras")) if get("extras") else {}
    return HandRecord(
        game_id=get("game_id"),
        hand=get("hand"),
        dealer=Seat.parse(get("dealer")),
        players=(get("player_n"), get("player_e"), get("player_s"), get("player_w")),
        bids=tuple(bids),
        rules=rules,
        event=get("event"),
        date=get("date"),
        table=get("table_name"),
        round=get("round"),
        deal=deal,
        tricks=tricks,
        taken=taken,
        score=score,
        score_before=score_before,
        bags_before=bags_before,
        winner=None if get("winner") is None else Side.parse(get("winner")),
        extras=extras,
        warnings=tuple(r[2] for r in warn_rows),
        source_file=get("source_file"),
        source_line=get("source_line"),
    )


_PLAIN = "_plain_"
"""Prefix of a plain-layout table while :func:`convert_plain` converts it."""


def _id_sql(codes_sql: str, col: str, sql_type: str = "INTEGER") -> str:
    """SQL for the id of the code in ``col`` (NULL when it is none of ``codes_sql``)."""
    return f"CAST(list_position({codes_sql}, {col}) - 1 AS {sql_type})"


def _convert_plain_sql(con: duckdb.DuckDBPyConnection) -> None:
    """Write ``hand_records`` and ``checked_tricks`` from the renamed plain tables in SQL (packed as
    :data:`spadework.parsers.schema.PACKING` says)."""
    from spadework.parsers.encoding import CARD_SQL, SEAT_SQL, SIDE_SQL

    p = _PLAIN
    card, seat = _id_sql(CARD_SQL, "card"), _id_sql(SEAT_SQL, "seat")
    winner = f"coalesce({_id_sql(SEAT_SQL, 'winner')}, {NO_WINNER})"
    side = lambda col, sd: f"any_value({col}) FILTER (WHERE side = '{sd}')"  # noqa: E731
    scores = ", ".join(
        f"{side(c, sd)} AS {c}_{sd.lower()}" for sd in ("NS", "EW") for c in ("points", "total", "bags", "score_before", "bags_before")
    )
    con.execute(f"""
        INSERT INTO {HAND_RECORDS} BY NAME
        WITH d AS (SELECT game_id, hand,
                          list(CAST({card} + {seat} * 64 + CAST(card_order AS BIGINT) * 256 AS UINTEGER) ORDER BY {seat}, card_order) AS deal
                   FROM {p}deals GROUP BY ALL),
        pl AS (SELECT game_id, hand,
                      list(CAST({card} + {seat} * 64 + play_order * 256 + trick * 2048 AS USMALLINT) ORDER BY trick, play_order) AS play
               FROM {p}plays GROUP BY ALL),
        t AS (SELECT game_id, hand, list(CAST({_id_sql(SEAT_SQL, "leader")} + {winner} * 4 + trick * 32 AS USMALLINT) ORDER BY trick) AS tricks
              FROM {p}recorded_tricks GROUP BY ALL),
        b AS (SELECT game_id, hand, list({_id_sql(SEAT_SQL, "seat", "UTINYINT")} ORDER BY bid_order) AS bid_seats, list(bid_value ORDER BY bid_order) AS bid_values,
                     list(nil ORDER BY bid_order) AS bid_nils, list(blind ORDER BY bid_order) AS bid_blinds
              FROM {p}bids GROUP BY ALL),
        s AS (SELECT game_id, hand, {scores} FROM {p}recorded_scores GROUP BY ALL)
        SELECT h.* EXCLUDE (dealer, winner), {_id_sql(SEAT_SQL, "h.dealer", "UTINYINT")} AS dealer,
               {_id_sql(SIDE_SQL, "h.winner", "UTINYINT")} AS winner,
               s.* EXCLUDE (game_id, hand),
               coalesce(b.bid_seats, []) AS bid_seats, coalesce(b.bid_values, []) AS bid_values,
               coalesce(b.bid_nils, []) AS bid_nils, coalesce(b.bid_blinds, []) AS bid_blinds,
               CASE WHEN d.deal IS NOT NULL THEN d.deal WHEN h.has_deal THEN [] END AS deal,
               CASE WHEN h.has_tricks THEN coalesce(pl.play, []) END AS play,
               CASE WHEN h.has_tricks THEN coalesce(t.tricks, []) END AS tricks
        FROM {p}hands h LEFT JOIN d USING (game_id, hand) LEFT JOIN pl USING (game_id, hand) LEFT JOIN t USING (game_id, hand)
             LEFT JOIN b USING (game_id, hand) LEFT JOIN s USING (game_id, hand)
        ORDER BY h.game_id, h.hand""")
    _convert_plain_tricks(con, strict=True)


def _same_rows(con: duckdb.DuckDBPyConnection, a: str, b: str) -> bool:
    """True when ``a`` and ``b`` hold the same multiset of rows (row count and the sum of a hash of each row)."""
    cols = ", ".join(_table_columns(con, a))
    sums = [con.execute(f"SELECT count(*), coalesce(sum(hash({cols})), 0) FROM {t}").fetchall()[0] for t in (a, b)]
    return sums[0] == sums[1]


def convert_plain(con: duckdb.DuckDBPyConnection) -> None:
    """Convert a database in the plain layout (every contract table a table) to the stored layout:
    the same rows in every table and view afterwards, in one transaction.

    The conversion runs in SQL and is checked table by table (row counts and a hash of every row)
    against the plain tables.  Where they differ (rows no loader writes, say a trick numbered 20),
    the database is converted through its records (:func:`iter_records`: what the checker read
    from it).  Raises ``ValueError`` when a record cannot be stored (a card code that is not a
    card); the database is then left as it was.  The old fast path's ``fast_hands`` and
    ``fast_state`` tables are dropped.
    """
    try:
        _convert(con, None)
    except _NotExact:
        records = list(iter_records(con))  # the plain reader (committed tables)
        rows = []
        for rec in records:
            try:
                rows.append(hand_row(rec, rec.source_file))
            except (KeyError, ValueError) as exc:
                what = f"{exc.args[0]!r} is not a card" if isinstance(exc, KeyError) else str(exc)
                raise ValueError(
                    f"cannot convert this database to the stored layout: in game {rec.game_id!r} hand {rec.hand}, "
                    f"{what} (open it read-only to read it as it is)"
                ) from None
        _convert(con, rows)


class _NotExact(Exception):
    """The SQL conversion would not give the plain tables' rows back."""


def _convert(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]] | None) -> None:
    """One conversion attempt in a transaction: in SQL (``rows`` None; raises :class:`_NotExact` and
    rolls back when the views would differ), or from ``rows`` of ``hand_records``."""
    from spadework.parsers.schema import ALL_TABLES, create_tables
    from spadework.parsers.schema import STORED_VIEWS as VIEWS

    present = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'"
        ).fetchall()
    }
    con.execute("BEGIN TRANSACTION")
    try:
        for t in VIEWS:
            if t in present:
                con.execute(f"ALTER TABLE {t} RENAME TO {_PLAIN}{t}")
            else:  # a partial plain database
                con.execute(f"CREATE TABLE {_PLAIN}{t} ({ALL_TABLES[t]})")
        create_tables(con, {k: v for k, v in ALL_TABLES.items() if k not in VIEWS})
        create_storage(con)
        if rows is None:
            try:
                _convert_plain_sql(con)
                exact = all(_same_rows(con, f"{_PLAIN}{t}", t) for t in VIEWS)
            except duckdb.Error:
                exact = False
            if not exact:
                raise _NotExact
        else:
            for i in range(0, len(rows), BATCH_HANDS):
                part = rows[i : i + BATCH_HANDS]
                batch = _Batch()
                batch.rows[HAND_RECORDS] = {k: [r[k] for r in part] for k in HAND_RECORDS_SCHEMA.names}
                _flush(con, batch, [])
            _convert_plain_tricks(con)
        for t in VIEWS:
            con.execute(f"DROP TABLE {_PLAIN}{t}")
        for t in ("fast_hands", "fast_state"):
            con.execute(f"DROP TABLE IF EXISTS {t}")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _convert_plain_tricks(con: duckdb.DuckDBPyConnection, strict: bool = False) -> None:
    """``checked_tricks`` from the plain ``tricks`` table; unless ``strict``, a code that is not a seat
    or suit is kept as none (the SQL conversion is then checked against the plain rows)."""
    from spadework.parsers.encoding import PLAY_SUIT_SQL, SEAT_SQL

    leader = _id_sql(SEAT_SQL, "leader") if strict else f"coalesce({_id_sql(SEAT_SQL, 'leader')}, 0)"
    con.execute(f"""
        INSERT INTO checked_tricks
        SELECT game_id, hand, list(CAST({leader} + coalesce({_id_sql(SEAT_SQL, "winner")}, {NO_WINNER}) * 4
                                        + coalesce({_id_sql(PLAY_SUIT_SQL, "led_suit")}, 7) * 32
                                        + CAST(coalesce(spades_broken, false) AS INTEGER) * 256 + trick * 512 AS USMALLINT) ORDER BY trick)
        FROM {_PLAIN}tricks GROUP BY ALL ORDER BY game_id, hand""")


def loaded_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Row counts of the loaded tables (for summaries)."""
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in LOADED_TABLES}
