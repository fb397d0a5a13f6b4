"""Fast loading of canonical JSON Lines: DuckDB reads the file, Python reads only what DuckDB cannot.

:func:`load_fast` loads files like :func:`spadework.parsers.db.load_files` and writes exactly the
same rows (TABLES.md loaded tables, ``load_errors``, ``load_warnings``).  A canonical JSON
Lines file (``.jsonl``/``.ndjson``, optionally gzipped) is cut into chunks of whole lines
(32 MB); each line is wrapped as ``{"l":<line number>,"j":<line>}`` so its number travels
with it, DuckDB's ``read_json`` parses a chunk with an explicit schema into a staging
table, and SQL writes ``hands``, ``deals``, ``bids``, ``plays``, ``recorded_tricks`` and
``recorded_scores`` from it.  Chunks are loaded by as many connections as DuckDB has
threads (a chunk is one row group, so DuckDB alone would run its statements on one core).
Every other file goes through the Python loader (:func:`spadework.parsers.db.load_items`).

A line is taken from DuckDB only when a structural check in SQL proves that the Python
parser (:func:`spadework.parsers.jsonl.record_from_obj`) reads it to the same record.  The check is
strict on purpose:

- the line's length in bytes equals the length of the minified JSON of what DuckDB
  parsed (every key, every value, no whitespace, no escapes).  This one test rejects
  unknown or extension keys, keys spelled another way (``"n"`` for ``"N"``), keys
  holding ``null``, values of another JSON type that DuckDB would convert
  (``"hand": "3"``, ``"blind": 1``, ``"game_id": 7``), fractions (``3.0``), extra
  whitespace, escaped characters and duplicate keys;
- every card is a canonical code (``AS``, ``TD``, ``BJ``), every seat ``N E S W``,
  every side ``NS EW``, every bid a whole number 0..99 or ``"nil"``, every number whole
  and within INTEGER range, ``hand`` >= 1, required keys present, at most 13 tricks
  of at most 4 cards.

Every other line is read by :mod:`spadework.parsers.jsonl`, so ``load_errors`` gets the same message
and raw text as the Python loader gives.  At the end of each file the hands that appear
twice, that are already loaded from another file, or whose numbers do not fit the tables
are settled in line order as ``spadework.parsers.db.load_items`` settles them (one GROUP BY finds the
duplicates; the rare lines involved are read again by Python for their messages).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from spadework.analysis.engine.fast.check import PACKED_DDL, packed_from_stage_sql, packed_from_tables_sql
from spadework.parsers import formats
from spadework.parsers.io import open_binary, strip_gz, walk
from spadework.parsers.model import HandRecord, LoadError
from spadework.parsers.state import mark_loaded

# The Python loader's pieces we reuse so the rows are the same by construction.
from spadework.parsers.db import (  # noqa: F401  (FileResult, LoadSummary re-exported for callers)
    FileResult,
    LoadSummary,
    _add_record,
    _Batch,
    _forget_file,
    _Progress,
    _rejected,
    INT_MAX,
    INT_MIN,
    BATCH_HANDS,
    _Loader,
    _with_empty_check,
    load_items,
    log_files,
    out_of_range,
)

FAST_MIN_BYTES = 256 * 1024
"""Smaller files go through the Python loader, batched across files: below about this size its
per-file cost is lower than the fast path's (DuckDB statements, scratch files, threads per file)."""

CHUNK_BYTES = 32 * 1024 * 1024
"""Bytes of whole lines handed to DuckDB at a time (memory stays flat in the file size)."""

SEATS_SQL = "('N', 'E', 'S', 'W')"
_CARD_RE = "(?:[AKQJT2-9][SHDC]|BJ|LJ)"
_CARDS_RE = f"{_CARD_RE}(?:,{_CARD_RE})*"

# --- the staging schema ---------------------------------------------------------------------

_SIDE_SCORE = "STRUCT(points DOUBLE, total DOUBLE, bags DOUBLE)"
STAGE_COLUMNS: dict[str, str] = {
    "schema": "VARCHAR",
    "game_id": "VARCHAR",
    "hand": "DOUBLE",
    "event": "VARCHAR",
    "date": "VARCHAR",
    "table": "VARCHAR",
    "round": "VARCHAR",
    "rules": "JSON",
    "players": "STRUCT(N VARCHAR, E VARCHAR, S VARCHAR, W VARCHAR)",
    "dealer": "VARCHAR",
    "score_before": "STRUCT(NS DOUBLE, EW DOUBLE)",
    "bags_before": "STRUCT(NS DOUBLE, EW DOUBLE)",
    "deal": "STRUCT(N VARCHAR[], E VARCHAR[], S VARCHAR[], W VARCHAR[])",
    "bids": "STRUCT(seat VARCHAR, bid VARCHAR, blind BOOLEAN)[]",
    "tricks": "STRUCT(leader VARCHAR, cards VARCHAR[], winner VARCHAR)[]",
    "taken": "STRUCT(N DOUBLE, E DOUBLE, S DOUBLE, W DOUBLE)",
    "score": f"STRUCT(NS {_SIDE_SCORE}, EW {_SIDE_SCORE})",
    "winner": "VARCHAR",
}


def _stage_struct() -> str:
    """The STRUCT type of one line (the ``j`` of a wrapped line)."""
    return "STRUCT(" + ", ".join(f'"{k}" {v}' for k, v in STAGE_COLUMNS.items()) + ")"


MAX_LINE_BYTES = 8 * 1024 * 1024
"""Longer lines are read by Python (DuckDB's maximum object size is set just above this)."""


# --- the minified-length expression -------------------------------------------------------------
# Each helper returns SQL for the byte length of a JSON value, or NULL/-huge when the value is
# not one the check accepts; a field term is the length of `"key":value` plus one separator.

_BAD = "(-100000000)"


def _num(x: str) -> str:
    """Length of a whole number written in JSON; a huge negative for anything else."""
    return (
        f"(CASE WHEN {x} = trunc({x}) AND abs({x}) < 2147483648 "
        f"THEN strlen(CAST(CAST({x} AS BIGINT) AS VARCHAR)) ELSE {_BAD} END)"
    )


def _str(x: str) -> str:
    return f"(strlen({x}) + 2)"


def _cards(x: str) -> str:
    # every card is checked to be a 2-character code elsewhere: "AS" is 4 bytes, plus a separator
    return f"greatest(2, 1 + 5 * len({x}))"


def _field(key: str, value_sql: str, value_len: str) -> str:
    return f"(CASE WHEN {value_sql} IS NULL THEN 0 ELSE {len(key) + 4} + {value_len} END)"


def _obj(terms: list[str]) -> str:
    return f"greatest(2, 1 + {' + '.join(terms)})"


def _list_of(x: str, var: str, elem_len: str) -> str:
    return f"greatest(2, 1 + coalesce(list_sum(list_transform({x}, lambda {var}: {elem_len} + 1)), 0))"


def _length_sql() -> str:
    seat_obj = lambda base, fn: _obj([_field(s, f"{base}.{s}", fn(f"{base}.{s}")) for s in "NESW"])  # noqa: E731
    side_obj = lambda base, fn: _obj([_field(s, f"{base}.{s}", fn(f"{base}.{s}")) for s in ("NS", "EW")])  # noqa: E731
    score_side = lambda b: _obj([_field(k, f"{b}.{k}", _num(f"{b}.{k}")) for k in ("points", "total", "bags")])  # noqa: E731
    bid_elem = _obj(
        [
            _field("seat", "b.seat", _str("b.seat")),
            _field("bid", "b.bid", "(strlen(b.bid) + CASE WHEN b.bid = 'nil' THEN 2 ELSE 0 END)"),
            _field("blind", "b.blind", "(CASE WHEN b.blind THEN 4 ELSE 5 END)"),
        ]
    )
    trick_elem = _obj(
        [
            _field("leader", "t.leader", _str("t.leader")),
            _field("cards", "t.cards", _cards("t.cards")),
            _field("winner", "t.winner", _str("t.winner")),
        ]
    )
    terms = [
        _field("schema", '"schema"', _str('"schema"')),
        _field("game_id", "game_id", _str("game_id")),
        _field("hand", "hand", _num("hand")),
        _field("event", "event", _str("event")),
        _field("date", "date", _str("date")),
        _field("table", '"table"', _str('"table"')),
        _field("round", "round", _str("round")),
        _field("rules", "rules", "strlen(CAST(rules AS VARCHAR))"),
        _field("players", "players", seat_obj("players", _str)),
        _field("dealer", "dealer", _str("dealer")),
        _field("score_before", "score_before", side_obj("score_before", _num)),
        _field("bags_before", "bags_before", side_obj("bags_before", _num)),
        _field("deal", "deal", seat_obj("deal", _cards)),
        _field("bids", "bids", _list_of("bids", "b", bid_elem)),
        _field("tricks", "tricks", _list_of("tricks", "t", trick_elem)),
        _field("taken", "taken", seat_obj("taken", _num)),
        _field("score", "score", side_obj("score", score_side)),
        _field("winner", "winner", _str("winner")),
    ]
    return _obj(terms)


CARDS_SQL = (
    "concat_ws(',', array_to_string(deal.N, ','), array_to_string(deal.E, ','), array_to_string(deal.S, ','), "
    "array_to_string(deal.W, ','), array_to_string(list_transform(tricks, lambda t: array_to_string(t.cards, ',')), ','))"
)
"""Every card of a staged line (deal, then play), joined by commas, for the card-code check."""
NCARDS_SQL = (
    "(coalesce(len(deal.N), 0) + coalesce(len(deal.E), 0) + coalesce(len(deal.S), 0) + coalesce(len(deal.W), 0) "
    "+ coalesce(list_sum(list_transform(tricks, lambda t: len(t.cards))), 0))"
)


# --- the type screen ------------------------------------------------------------------------------
# DuckDB converts values to the staged column's type without a word: "hand":"1" reads as 1,
# "table":1 as "1", "blind":0 as false, "event":true as "true", 1e3 as 1000.  Some of these make a
# line longer than the minified JSON of what was parsed and some make it shorter, so two together
# could pass the length test.  The screen below finds, on the raw text, every value of a type the
# reference parser would refuse (or a number with an exponent); such lines go to the Python
# parser.  What is left can only make a line longer, so the length test catches it.
_S = r"\s*"  # JSON whitespace (RE2)
_KEY = r'"[^"\\]*"'
_STRING = r'"(?:[^"\\]|\\.)*"'
TYPE_SCREEN_RE = "|".join(
    [
        # numbers
        rf'"(?:hand|points|total|bags)"{_S}:{_S}[^\s0-9-]',
        rf'"(?:taken|score_before|bags_before)"{_S}:{_S}\{{[^{{}}]*{_KEY}{_S}:{_S}[^\s0-9-]',
        r"[0-9][eE]",
        # text
        rf'"(?:schema|game_id|event|date|table|round|dealer|seat|leader|winner)"{_S}:{_S}[^\s"]',
        rf'"players"{_S}:{_S}\{{(?:{_S}{_KEY}{_S}:{_S}{_STRING}{_S},)*{_S}{_KEY}{_S}:{_S}[^\s"]',
        # a bid is a number or "nil"; blind is true or false
        rf'"bid"{_S}:{_S}(?:[^\s"0-9]|"(?:[^n"]|n[^i]|ni[^l]|nil[^"]))',
        rf'"blind"{_S}:{_S}[^\stf]',
        # deal hands and trick cards are lists, score sides objects
        rf'"deal"{_S}:{_S}\{{(?:{_S}{_KEY}{_S}:{_S}\[[^\]]*\]{_S},)*{_S}{_KEY}{_S}:{_S}[^\s\[]',
        rf'"cards"{_S}:{_S}[^\s\[]',
        rf'"score"{_S}:{_S}\{{(?:{_S}{_KEY}{_S}:{_S}\{{[^{{}}]*\}}{_S},)*{_S}{_KEY}{_S}:{_S}[^\s{{]',
        # whitespace between a key and its colon, and any escape at all: a key written with an
        # escape ("\u0053" for S) would slip past the key names above
        r'"\s+:',
        r"\\",
    ]
)
"""RE2 pattern: a match marks a line for the Python parser (see the comment above)."""


def _ok_sql() -> str:
    """The structural check (all but the length test, :func:`_length_sql`): true only for lines the
    Python parser reads to the same record, when their length is also the minified length."""
    return "coalesce(" + " AND ".join(f"({c})" for c in _ok_conditions()) + ", false)"


def _ok_conditions() -> list[str]:
    """The conditions of :func:`_ok_sql`, each a SQL boolean over a ``_fp_raw`` row joined with ``s``."""
    whole = lambda x: f"({x} IS NULL OR ({x} = trunc({x}) AND abs({x}) < 2147483648))"  # noqa: E731
    conds = [
        "(\"schema\" IS NULL OR \"schema\" = 'spades-hand/1')",
        "game_id IS NOT NULL AND strlen(game_id) > 0",
        "hand IS NOT NULL AND hand >= 1 AND hand = trunc(hand) AND hand < 2147483648",
        "players IS NOT NULL",
        f"dealer IN {SEATS_SQL}",
        "(rules IS NULL OR json_type(rules) = 'VARCHAR' OR (json_type(rules) = 'OBJECT' "
        "AND regexp_full_match(CAST(rules AS VARCHAR), '[{}\\[\\]\",:A-Za-z0-9_-]*') "
        "AND NOT regexp_matches(CAST(rules AS VARCHAR), '[0-9][eE]') "
        # one flat object with distinct keys (the Python parser keeps the last of a repeated key)
        "AND strlen(replace(CAST(rules AS VARCHAR), '{', '')) = strlen(CAST(rules AS VARCHAR)) - 1 "
        "AND len(json_keys(rules)) = len(list_distinct(json_keys(rules))) "
        # numbers the Python parser reads as floats (beyond 64 bits) are written its way by Python
        "AND NOT regexp_matches(CAST(rules AS VARCHAR), '[0-9]{16}')))",
        "bids IS NOT NULL",
        f"list_bool_and(list_transform(bids, lambda b: coalesce(b.seat IN {SEATS_SQL} AND "
        "(b.bid = 'nil' OR regexp_full_match(b.bid, '[0-9]{1,2}')), false))) IS NOT FALSE",
        "(tricks IS NULL OR len(tricks) <= 13)",
        f"list_bool_and(list_transform(tricks, lambda t: coalesce(t.leader IN {SEATS_SQL} AND t.cards IS NOT NULL "
        f"AND len(t.cards) <= 4 AND (t.winner IS NULL OR t.winner IN {SEATS_SQL}), false))) IS NOT FALSE",
        f"(_ncards = 0 OR (regexp_full_match(_cards, '{_CARDS_RE}') AND strlen(_cards) = 3 * _ncards - 1))",
        "(winner IS NULL OR winner IN ('NS', 'EW'))",
        "(score_before IS NULL OR (score_before.NS IS NOT NULL AND score_before.EW IS NOT NULL))",
        "(bags_before IS NULL OR (bags_before.NS IS NOT NULL AND bags_before.EW IS NOT NULL))",
    ]
    for side in ("NS", "EW"):
        for k in ("points", "total", "bags"):
            conds.append(whole(f"score.{side}.{k}"))
        for b in ("score_before", "bags_before"):
            conds.append(whole(f"{b}.{side}"))
    for s in "NESW":
        conds.append(whole(f"taken.{s}"))
    return conds


# --- inserts from the stage ---------------------------------------------------------------------


def _insert_sql(source_param: bool = True) -> list[str]:
    """INSERT statements writing the loaded tables from the ``_fp_raw`` rows (those that passed the check)."""
    keep = "_fp_raw WHERE true"
    seat_of = "['N', 'E', 'S', 'W'][((list_position(['N', 'E', 'S', 'W'], t.leader) - 1 + p - 1) % 4) + 1]"
    complete = (
        "(deal IS NULL AND tricks IS NOT NULL AND len(tricks) = 13 "
        "AND list_bool_and(list_transform(tricks, lambda t: len(t.cards) = 4)))"
    )
    return [
        f"""INSERT INTO hands (game_id, hand, event, date, table_name, round, rules, rules_is_object, dealer,
              player_n, player_e, player_s, player_w, taken_n, taken_e, taken_s, taken_w,
              has_deal, has_tricks, winner, extras, source_file, source_line)
            SELECT game_id, CAST(hand AS INTEGER), event, date, "table", round,
              CASE json_type(rules) WHEN 'VARCHAR' THEN rules->>'$' WHEN 'OBJECT' THEN CAST(rules AS VARCHAR)
                   ELSE 'standard' END,
              coalesce(json_type(rules) = 'OBJECT', false), dealer,
              players.N, players.E, players.S, players.W,
              CAST(taken.N AS INTEGER), CAST(taken.E AS INTEGER), CAST(taken.S AS INTEGER), CAST(taken.W AS INTEGER),
              deal IS NOT NULL, tricks IS NOT NULL, winner, NULL, $source, CAST(line AS INTEGER)
            FROM _fp_raw""",
        f"""INSERT INTO deals (game_id, hand, seat, card, card_order, inferred)
            SELECT game_id, hand, seat, unnest(cards), generate_subscripts(cards, 1), false FROM (
              SELECT game_id, CAST(hand AS INTEGER) AS hand, unnest(['N', 'E', 'S', 'W']) AS seat,
                     unnest([coalesce(deal.N, []), coalesce(deal.E, []), coalesce(deal.S, []), coalesce(deal.W, [])]) AS cards
              FROM {keep} AND deal IS NOT NULL)""",
        # no recorded deal and a complete play: the deal is what each seat played, in play order
        f"""INSERT INTO deals (game_id, hand, seat, card, card_order, inferred)
            SELECT game_id, hand, seat, card, row_number() OVER (PARTITION BY game_id, hand, seat ORDER BY trick), true FROM (
              SELECT game_id, hand, trick, {seat_of.replace('t.leader', 'leader')} AS seat, cards[p] AS card FROM (
                SELECT game_id, CAST(hand AS INTEGER) AS hand, generate_subscripts(tricks, 1) AS trick,
                       unnest(tricks).leader AS leader, unnest(tricks).cards AS cards
                FROM {keep} AND {complete}), range(1, 5) r(p))""",
        f"""INSERT INTO bids (game_id, hand, bid_order, seat, bid, nil, blind, bid_value)
            SELECT game_id, hand, bid_order, b.seat,
                   CASE WHEN b.bid = 'nil' THEN 0 ELSE CAST(b.bid AS INTEGER) END,
                   CASE WHEN b.bid = 'nil' THEN true ELSE CAST(b.bid AS INTEGER) = 0 END, coalesce(b.blind, false),
                   CASE WHEN b.bid = 'nil' THEN 0.0 ELSE CAST(b.bid AS DOUBLE) END
            FROM (SELECT game_id, CAST(hand AS INTEGER) AS hand, generate_subscripts(bids, 1) AS bid_order,
                         unnest(bids) AS b FROM {keep})""",
        f"""INSERT INTO recorded_tricks (game_id, hand, trick, leader, winner)
            SELECT game_id, CAST(hand AS INTEGER), generate_subscripts(tricks, 1), unnest(tricks).leader,
                   unnest(tricks).winner
            FROM {keep} AND tricks IS NOT NULL""",
        f"""INSERT INTO plays (game_id, hand, trick, play_order, seat, card)
            SELECT game_id, hand, trick, generate_subscripts(cards, 1) AS p,
                   ['N', 'E', 'S', 'W'][((list_position(['N', 'E', 'S', 'W'], leader) + generate_subscripts(cards, 1) - 2) % 4) + 1],
                   unnest(cards)
            FROM (SELECT game_id, CAST(hand AS INTEGER) AS hand, generate_subscripts(tricks, 1) AS trick,
                         unnest(tricks).leader AS leader, unnest(tricks).cards AS cards
                  FROM {keep} AND tricks IS NOT NULL)""",
        f"""INSERT INTO recorded_scores (game_id, hand, side, points, total, bags, taken, winner, score_before, bags_before)
            SELECT game_id, CAST(hand AS INTEGER), 'NS', CAST(score.NS.points AS INTEGER), CAST(score.NS.total AS INTEGER),
                   CAST(score.NS.bags AS INTEGER), CAST(taken.N + taken.S AS INTEGER), winner,
                   CAST(score_before.NS AS INTEGER), CAST(bags_before.NS AS INTEGER)
            FROM {keep}
            UNION ALL
            SELECT game_id, CAST(hand AS INTEGER), 'EW', CAST(score.EW.points AS INTEGER), CAST(score.EW.total AS INTEGER),
                   CAST(score.EW.bags AS INTEGER), CAST(taken.E + taken.W AS INTEGER), winner,
                   CAST(score_before.EW AS INTEGER), CAST(bags_before.EW AS INTEGER)
            FROM {keep}""",
    ]


STATS: dict[str, int] = {"chunks": 0, "duckdb_lines": 0, "python_lines": 0, "chunks_to_python": 0}
_STATS_LOCK = __import__("threading").Lock()


def _count(key: str, n: int = 1) -> None:
    with _STATS_LOCK:
        STATS[key] += n
"""Counters of the last :func:`load_fast` call: chunks, lines DuckDB loaded, lines the Python parser read."""

TIMINGS: dict[str, float] | None = None
"""Set to a dict to collect seconds per step (wall clock), for the benchmark and profiling."""


def _x(con, label: str, sql: str, params: Any = None):
    """Execute one statement (timed into :data:`TIMINGS` when it is a dict) and fetch its result."""
    if TIMINGS is None:
        return con.execute(sql, params).fetchall() if params is not None else con.execute(sql).fetchall()
    import time

    t, c = time.perf_counter(), time.process_time()
    out = con.execute(sql, params).fetchall() if params is not None else con.execute(sql).fetchall()
    TIMINGS[label] = TIMINGS.get(label, 0.0) + time.perf_counter() - t
    TIMINGS[label + " (cpu)"] = TIMINGS.get(label + " (cpu)", 0.0) + time.process_time() - c
    return out


INSERT_LABELS = ("hands", "deals", "deals_inferred", "bids", "recorded_tricks", "plays", "recorded_scores")

HAND_TABLES = ("deals", "bids", "plays", "recorded_tricks", "recorded_scores", "load_warnings", "fast_hands")
"""Tables with rows per hand (besides ``hands``), cleared by key when a hand is replaced."""

PACKED_TABLE = "fast_hands"
STATE_TABLE = "fast_state"
CHECKSUM_TABLES = ("hands", "deals", "bids", "plays", "recorded_tricks", "recorded_scores", PACKED_TABLE)

# --- chunks of lines --------------------------------------------------------------------------


@dataclass
class _Chunk:
    """Whole lines of a file: what DuckDB reads, and what Python reads itself.

    ``data``: the lines DuckDB reads, each wrapped as ``{"l":<line number>,"j":<line>}`` so the
    line number travels with the record (no ordinality: DuckDB may parse in parallel).
    ``lines``/``lengths``/``starts``: number, length (without the line end) and offset in
    ``data`` of each of them.  ``python``: ``(line, raw)`` of lines DuckDB is not given (not
    starting with ``{``, a stray CR, longer than :data:`MAX_LINE_BYTES`).
    """

    data: bytes
    lines: list[int]
    lengths: list[int]
    starts: list[int]
    python: list[tuple[int, bytes]] = field(default_factory=list)
    wrapped: list[int] = field(default_factory=list)
    """Offsets in ``data`` where each wrapped line starts, then the end of ``data``."""

    def texts(self) -> pa.Array:
        """The wrapped lines as an Arrow binary array over ``data`` itself (no copy)."""
        offsets = pa.array(self.wrapped, pa.int32()).buffers()[1]
        return pa.Array.from_buffers(pa.binary(), len(self.lines), [None, offsets, pa.py_buffer(self.data)])

    def raw(self, i: int) -> bytes:
        """The text of the ``i``-th line DuckDB was given."""
        return self.data[self.starts[i] : self.starts[i] + self.lengths[i]]

    def raws(self) -> dict[int, bytes]:
        """Line number -> text of the lines DuckDB was given."""
        return {n: self.raw(i) for i, n in enumerate(self.lines)}


def _split_chunk(block: bytes, first_line: int) -> _Chunk:
    parts = block.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    simple = b"\r" not in block or block.count(b"\r") == block.count(b"\r\n")
    lines: list[int] = []
    lengths: list[int] = []
    starts: list[int] = []
    python: list[tuple[int, bytes]] = []
    out: list[bytes] = []
    wrapped: list[int] = []
    pos = 0
    for i, raw in enumerate(parts):
        if not raw:
            continue  # an empty line: skipped by both readers
        n = first_line + i
        if raw[0] == 0x7B and len(raw) <= MAX_LINE_BYTES and (simple or b"\r" not in raw.rstrip(b"\r")):  # '{'
            body = raw[:-1] if raw[-1] == 0x0D else raw
            head = b'{"l":%d,"j":' % n
            lines.append(n)
            lengths.append(len(body))
            wrapped.append(pos)
            starts.append(pos + len(head))
            out.append(head)
            out.append(body)
            out.append(b"}\n")
            pos += len(head) + len(body) + 2
        else:
            python.append((n, raw.rstrip(b"\r\n")))
    data = b"".join(out)
    wrapped.append(pos)
    return _Chunk(data, lines, lengths, starts, python, wrapped)


def _iter_chunks(path: str | os.PathLike[str], chunk_bytes: int) -> Iterator[_Chunk]:
    """Cut a (possibly gzipped) file into chunks of whole lines, numbered from 1."""
    line = 1
    rest = b""
    with open_binary(path) as f:
        while True:
            block = f.read(chunk_bytes)
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n")
            if cut < 0:
                rest = block
                continue
            rest = block[cut + 1 :]
            body = block[: cut + 1]
            yield _split_chunk(body, line)
            line += body.count(b"\n")
    if rest:
        yield _split_chunk(rest, line)


# --- one file -----------------------------------------------------------------------------------


class FastLoadError(RuntimeError):
    """The fast path met something it does not handle; the file is loaded by the Python loader instead."""


def _parse_python(source: str, n: int, raw: bytes) -> HandRecord | LoadError | None:
    from spadework.parsers.jsonl import _parse_line  # the Python parser's own per-line entry point

    return _parse_line(raw, source, n)


def _insert_python(con, batch: _Batch, errors: list[LoadError]) -> None:
    """Insert the rows of records the Python parser read (no key deletes: see :func:`_load_jsonl_file`)."""
    for table, cols in batch.rows.items():
        arrow = pa.table(cols)
        con.register("_fp_batch", arrow)
        names = ", ".join(cols)
        _x(con, "misc", f"INSERT INTO {table} ({names}) SELECT {names} FROM _fp_batch")
        con.unregister("_fp_batch")
    if errors:
        arrow = pa.table(
            {
                "source_file": [e.source_file for e in errors],
                "source_line": pa.array([e.source_line for e in errors], pa.int32()),
                "message": [e.message for e in errors],
                "raw": [e.raw for e in errors],
            }
        )
        con.register("_fp_errors", arrow)
        _x(con, "misc", "INSERT INTO load_errors SELECT * FROM _fp_errors")
        con.unregister("_fp_errors")


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


def _withhold_clashes(con, fs: _FileState, source: str) -> list[int]:
    """Rows of ``_fp_raw`` whose hand is already loaded from another file: recorded in ``fs`` and
    returned (their line numbers) so they are not written."""
    rows = _x(
        con,
        "misc",
        "SELECT r.line, r.line, r.game_id, CAST(r.hand AS INTEGER), h.source_file, h.source_line "
        "FROM _fp_raw r "
        "JOIN hands h ON h.game_id = r.game_id AND h.hand = CAST(r.hand AS INTEGER) AND h.source_file <> $source",
        {"source": source},
    )
    fs.withheld.extend((line, g, h, f, ln) for _, line, g, h, f, ln in rows)
    return [o for o, *_ in rows]


def _python_clashes(con, recs: list[HandRecord], source: str) -> dict[tuple[str, int], tuple[str, int]]:
    keys = pa.table({"game_id": [r.game_id for r in recs], "hand": pa.array([r.hand for r in recs], pa.int64())})
    con.register("_fp_pykeys", keys)
    try:
        rows = _x(
            con,
            "misc",
            "SELECT h.game_id, h.hand, h.source_file, h.source_line FROM hands h "
            "JOIN _fp_pykeys k USING (game_id, hand) WHERE h.source_file <> $source",
            {"source": source},
        )
    finally:
        con.unregister("_fp_pykeys")
    return {(g, h): (f, ln) for g, h, f, ln in rows}


def _settle_file(con, path: str | os.PathLike[str], source: str, result: FileResult, fs: _FileState) -> None:
    """Decide, in line order as the Python loader does, the hands that appear more than once in the
    file, that are already loaded from another file, or whose numbers are out of range.

    Per hand key: the first occurrence that is in range is the one that counts (written, or
    rejected as already loaded from another file); every later occurrence "appears twice";
    an out-of-range occurrence before it (or with none) is rejected as out of range.
    """
    dups = _x(
        con,
        "misc",
        "SELECT game_id, hand, list(source_line ORDER BY source_line) FROM hands WHERE source_file = $source "
        "GROUP BY game_id, hand HAVING count(*) > 1",
        {"source": source},
    )
    occ: dict[tuple[str, int], list[tuple[int, str]]] = {}
    for g, h, lines in dups:
        occ[(g, h)] = [(n, "row") for n in lines]
    clash: dict[int, tuple[str, int]] = {}
    for line, g, h, f, ln in fs.withheld:
        occ.setdefault((g, h), []).append((line, "withheld"))
        clash[line] = (f, ln)
    if fs.out_of_range:
        # a hand number out of INTEGER range matches no loaded hand (and may not even fit 64 bits)
        keys = sorted({(g, h) for _, g, h in fs.out_of_range if isinstance(h, int) and INT_MIN <= h <= INT_MAX})
        arrow = pa.table({"game_id": pa.array([k[0] for k in keys], pa.string()), "hand": pa.array([k[1] for k in keys], pa.int64())})
        con.register("_fp_rangekeys", arrow)
        try:
            written = _x(
                con,
                "misc",
                "SELECT h.game_id, h.hand, h.source_line FROM hands h JOIN _fp_rangekeys k USING (game_id, hand) "
                "WHERE h.source_file = $source",
                {"source": source},
            )
        finally:
            con.unregister("_fp_rangekeys")
        for g, h, n in written:
            if (g, h) not in occ:
                occ[(g, h)] = [(n, "row")]
        for line, g, h in fs.out_of_range:
            occ.setdefault((g, h), []).append((line, "range"))
    if not occ:
        return
    wanted = {n for lst in occ.values() for n, _ in lst}
    raws: dict[int, bytes] = {}
    with open_binary(path) as f:
        for n, line in enumerate(f, 1):
            if n in wanted:
                raws[n] = line.rstrip(b"\r\n")
                if len(raws) == len(wanted):
                    break
    from spadework.parsers.jsonl import dumps_record

    def record(n: int) -> HandRecord:
        rec = _parse_python(source, n, raws[n])
        if not isinstance(rec, HandRecord):  # cannot happen: the line was read before
            raise FastLoadError(f"{source}:{n}: a line read before no longer reads")
        return rec

    def reject(rec: HandRecord, message: str) -> LoadError:
        return _rejected(rec, source, message)  # the reference's own (numbers over 64 bits included)

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
                errors.append(reject(rec, f"hand {rec.hand} of game {rec.game_id!r} appears twice in this file (first at line {first[0]})"))
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
                        reject(
                            rec,
                            f"hand {rec.hand} of game {rec.game_id!r} is already loaded from {f}:{ln}; not loaded "
                            f"again (load that file again to replace it, or give this game another id)",
                        )
                    )
                    result.errors += 1
            else:
                errors.append(reject(rec, out_of_range(rec) or "out of range"))
                result.errors += 1
    if redo:
        keys = pa.table({"game_id": [k[0] for k in redo], "hand": pa.array([k[1] for k in redo], pa.int64())})
        con.register("_fp_dupkeys", keys)
        try:
            for table in HAND_TABLES:
                if table == "load_warnings":
                    _x(
                        con,
                        "misc",
                        "DELETE FROM load_warnings WHERE source_file = $source AND (game_id, hand) IN "
                        "(SELECT game_id, hand FROM _fp_dupkeys)",
                        {"source": source},
                    )
                    continue
                _x(con, "misc", f"DELETE FROM {table} WHERE (game_id, hand) IN (SELECT game_id, hand FROM _fp_dupkeys)")
            _x(
                con,
                "misc",
                "DELETE FROM hands WHERE source_file = $source AND (game_id, hand) IN (SELECT game_id, hand FROM _fp_dupkeys)",
                {"source": source},
            )
        finally:
            con.unregister("_fp_dupkeys")
    _insert_python(con, batch, errors)


def _drop_rows(con, lines: list[int]) -> None:
    con.register("_fp_drop", pa.table({"line": pa.array(lines, pa.int64())}))
    try:
        _x(con, "misc", "DELETE FROM _fp_raw WHERE line IN (SELECT line FROM _fp_drop)")
    finally:
        con.unregister("_fp_drop")


def _load_chunk(
    con, chunk: _Chunk, source: str, workdir: str, fs: _FileState, result: FileResult, pack: bool = True
) -> None:
    python_lines = list(chunk.python)
    _count("chunks")
    if chunk.lines:
        path = os.path.join(workdir, "chunk.jsonl")
        with open(path, "wb") as f:
            f.write(chunk.data)
        meta = pa.table(
            {
                "line": pa.array(chunk.lines, pa.int64()),
                "len": pa.array(chunk.lengths, pa.int64()),
                "txt": chunk.texts(),  # each line as wrapped ({"l":n,"j":line}\n), for the type screen
            }
        )
        con.register("_fp_meta", meta)
        try:
            _x(
                con,
                "read_json",
                f"""CREATE OR REPLACE TEMP TABLE _fp_raw AS
                    SELECT l AS line, j.* FROM read_json($path, format = 'newline_delimited', records = true,
                        ignore_errors = true, maximum_object_size = {MAX_LINE_BYTES + 64},
                        columns = {{l: 'BIGINT', j: '{_stage_struct()}'}})""",
                {"path": path},
            )
            # a line DuckDB could not read at all has no line number; Python reads those
            seen, distinct = _x(con, "count", "SELECT count(line), count(DISTINCT line) FROM _fp_raw")[0]
            if seen != distinct:  # cannot happen (a line cannot give another's number): Python reads the chunk
                _x(con, "misc", "DROP TABLE _fp_raw")
                python_lines.extend(chunk.raws().items())
                python_lines.sort()
                _count("chunks_to_python", 1)
            else:
                bad = [
                    r[0]
                    for r in _x(
                        con,
                        "check",
                        f"""SELECT m.line FROM _fp_meta m LEFT JOIN
                            (SELECT line, {_ok_sql()} AS okc, {_length_sql()} AS clen
                             FROM (SELECT *, {CARDS_SQL} AS _cards, {NCARDS_SQL} AS _ncards FROM _fp_raw
                                   WHERE line IS NOT NULL)) r USING (line)
                            WHERE NOT coalesce(r.okc AND r.clen = m.len
                                               AND NOT TRY(regexp_matches(decode(m.txt), '{TYPE_SCREEN_RE}')), false)
                            ORDER BY m.line""",
                    )
                ]
                if bad:
                    raws = chunk.raws()
                    python_lines.extend((n, raws[n]) for n in bad)
                    python_lines.sort()
                if seen != len(chunk.lines) or bad:
                    _x(con, "misc", "DELETE FROM _fp_raw WHERE line IS NULL")
                    if bad:
                        _drop_rows(con, bad)
                withheld = _withhold_clashes(con, fs, source) if fs.others else []
                if withheld:
                    _drop_rows(con, withheld)
                for label, sql in zip(INSERT_LABELS, _insert_sql()):
                    _x(con, label, sql, {"source": source} if "$source" in sql else None)
                if pack:
                    _x(con, "packed", f"INSERT INTO {PACKED_TABLE} BY NAME {packed_from_stage_sql('_fp_raw')}")
                n_ok = len(chunk.lines) - len(bad) - len(withheld)
                result.hands += n_ok
                _count("duckdb_lines", n_ok)
                _x(con, "misc", "DROP TABLE _fp_raw")
        finally:
            con.unregister("_fp_meta")
    if python_lines:
        _count("python_lines", len(python_lines))
        batch, errors = _Batch(), []
        recs: list[HandRecord] = []
        for n, raw in python_lines:
            item = _parse_python(source, n, raw)
            if item is None:
                continue
            if isinstance(item, LoadError):
                errors.append(item)
                result.errors += 1
            elif out_of_range(item):
                fs.out_of_range.append((n, item.game_id, item.hand))  # decided at the end of the file
            else:
                recs.append(item)
        clashes = _python_clashes(con, recs, source) if fs.others and recs else {}
        for item in recs:
            other = clashes.get((item.game_id, item.hand))
            if other is not None:
                fs.withheld.append((item.source_line or 0, item.game_id, item.hand, other[0], other[1]))
                continue
            _add_record(batch, item, source)
            result.hands += 1
            result.warnings += len(item.warnings)
        _insert_python(con, batch, errors)


def _prefetch(chunks: Iterator[_Chunk]) -> Iterator[_Chunk]:
    """Read and split the next chunk in a thread while DuckDB works on this one (one chunk ahead).

    An exception in the reader (an unreadable or truncated file) is raised here, in order.
    """
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    done = object()

    def run() -> None:
        try:
            for c in chunks:
                while not stop.is_set():
                    try:
                        q.put(c, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(done)
        except BaseException as exc:  # handed to the consumer
            q.put(exc)

    t = threading.Thread(target=run, name="spadework-chunks", daemon=True)
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


def _load_jsonl_file(
    con,
    path: str | os.PathLike[str],
    source: str,
    chunk_bytes: int,
    workdir: str,
    on_batch: Callable[[int, int], None] | None,
    workers: int = 1,
    pack: bool = True,
) -> FileResult:
    """Load one canonical JSON Lines file, ``workers`` chunks at a time (each on its own connection).

    DuckDB runs each chunk's statements on one thread at best (a chunk is one row group), so
    two cores are used by loading two chunks at once.  The file's previous rows are removed
    first; each chunk commits on its own; the file is settled (duplicates, hands of other
    files, numbers out of range) at the end.  On an error the rows of the file are removed and
    the error propagates (``load_fast`` then reads the file with the Python loader).
    """
    import threading

    result = FileResult(source, "jsonl")
    _x(con, "misc", "BEGIN TRANSACTION")
    try:
        mark_loaded(con)  # before any row of the file changes (the chunks commit on their own)
        _forget_packed(con, source)
        _forget_file(con, source)
        fs = _FileState(others=_x(con, "misc", "SELECT count(*) > 0 FROM hands")[0][0])
        _x(con, "misc", "COMMIT")
    except BaseException:
        _x(con, "misc", "ROLLBACK")
        raise
    chunks = _prefetch(_iter_chunks(path, chunk_bytes))
    lock = threading.Lock()
    failures: list[BaseException] = []
    partial = [FileResult(source, "jsonl") for _ in range(max(1, workers))]

    def work(i: int) -> None:
        cur = con.cursor()
        mine = os.path.join(workdir, f"w{i}")
        os.makedirs(mine, exist_ok=True)
        try:
            while not failures:
                with lock:
                    chunk = next(chunks, None)
                if chunk is None:
                    return
                before = (partial[i].hands, partial[i].errors)
                _x(cur, "misc", "BEGIN TRANSACTION")
                try:
                    _load_chunk(cur, chunk, source, mine, fs, partial[i], pack)
                    _x(cur, "misc", "COMMIT")
                except BaseException:
                    _x(cur, "misc", "ROLLBACK")
                    raise
                if on_batch:
                    with lock:
                        on_batch(partial[i].hands - before[0], partial[i].errors - before[1])
        except BaseException as exc:  # handed to the caller
            failures.append(exc)
        finally:
            cur.close()

    try:
        if workers <= 1:
            work(0)
        else:
            threads = [threading.Thread(target=work, args=(i,), name=f"spadework-load-{i}") for i in range(workers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if failures:
            raise failures[0]
        for r in partial:
            result.hands += r.hands
            result.errors += r.errors
            result.warnings += r.warnings
        _x(con, "misc", "BEGIN TRANSACTION")
        try:
            mark_loaded(con)
            _settle_file(con, path, source, result, fs)
            if result.hands + result.errors == 0:
                _insert_python(con, _Batch(), [LoadError(source, 0, "the file holds no hands (it is empty or blank)", "")])
                result.errors += 1
            _x(con, "misc", "COMMIT")
        except BaseException:
            _x(con, "misc", "ROLLBACK")
            raise
    except BaseException:
        chunks.close()
        _x(con, "misc", "BEGIN TRANSACTION")
        mark_loaded(con)
        _forget_packed(con, source)
        _forget_file(con, source)
        _x(con, "misc", "COMMIT")
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
    chunk_bytes: int = CHUNK_BYTES,
    pack: bool = True,
    state: bool = True,
    workers: int | None = None,
) -> LoadSummary:
    """Load files and folders like :func:`spadework.parsers.db.load_files`, reading canonical JSON Lines with DuckDB.

    Same arguments, same result (:class:`spadework.parsers.db.LoadSummary`), same rows in every
    loaded table and in ``load_errors``/``load_warnings``.  ``.jsonl``/``.ndjson`` files
    (optionally ``.gz``) of :data:`FAST_MIN_BYTES` or more take the fast path; every other file,
    and any fast-path file that fails to read part way (a truncated ``.gz``), is loaded by the
    Python loader, many files per batch.
    ``chunk_bytes``: bytes of lines parsed per DuckDB statement (memory is flat in the
    file size).  ``workers``: chunks loaded at once, each on its own connection (default:
    DuckDB's ``threads`` setting, at most 4).  Raises ``FileNotFoundError`` for a path that
    does not exist.

    With ``pack`` it also keeps ``fast_hands`` (each hand's plays, deal, recorded tricks and
    bids packed into integers, one row per hand: what :func:`check_fast` replays; computed
    from the parsed lines, and from the tables for hands Python read) and, with ``state``,
    ``fast_state``: row
    counts and checksums of the loaded tables and ``fast_hands``.  ``check_fast`` uses
    ``fast_hands`` only while the checksums still match, so a database changed by anything
    else is checked from its tables.

    Like every loader it records a new load generation (:func:`spadework.parsers.state.mark_loaded`)
    in the first transaction of each file, so readers of the derived tables know a check is due.
    """
    summary = LoadSummary()
    paths = list(paths)
    files = list(walk(paths))
    bar = _Progress(len(files)) if progress else None
    for k in STATS:
        STATS[k] = 0
    if workers is None:
        workers = min(4, int(_x(con, "misc", "SELECT current_setting('threads')")[0][0]))
    _x(con, "misc", f"CREATE TABLE IF NOT EXISTS {PACKED_TABLE} ({PACKED_DDL})")
    _x(con, "misc", f"CREATE TABLE IF NOT EXISTS {STATE_TABLE} (name VARCHAR, rows BIGINT, checksum HUGEINT)")
    _x(con, "misc", f"DELETE FROM {STATE_TABLE}")  # whatever it said no longer holds
    workdir = tempfile.mkdtemp(prefix="spadework-fast-", dir=_scratch_dir())
    on_batch = bar.on_batch if bar else None
    # small files and other formats: the Python loader, many files per batch (a thousand one-hand
    # files cost about what one thousand-hand file does); their packed rows are made from the tables
    python = _Loader(con, on_batch)
    by_python: list[str] = []

    def settle_python() -> None:
        python.commit()
        _forget_packed(con, by_python)  # their hands are packed from the tables at the end
        by_python.clear()

    try:
        for path, source, file_fmt in log_files(paths, files, fmt, summary, bar):
            result = None
            if file_fmt == "jsonl" and fast_format(path, file_fmt) and _size(path) >= FAST_MIN_BYTES:  # read per call (tests set 0)
                settle_python()  # the files before it are written first, as one by one
                try:
                    result = _load_jsonl_file(con, path, source, chunk_bytes, workdir, on_batch, workers, pack)
                except (OSError, EOFError, FastLoadError):
                    result = None  # rolled back: the Python loader reads the file and says what is wrong
            if result is None:
                items = _with_empty_check(formats.load(path, fmt=file_fmt, source=source), source)
                result = python.add_file(items, source, file_fmt)
                by_python.append(source)
                if python.written >= BATCH_HANDS:
                    settle_python()
            summary.files.append(result)
            if bar:
                bar.advance_file(source)
        settle_python()
        if pack:
            _finish_packed(con, state)
    except BaseException:
        python.rollback()
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if bar:
            bar.close()
    return summary


def _forget_packed(con, source: str | list[str]) -> None:
    """Drop the packed rows of the hands ``source`` holds (a file or a list of files: being loaded
    again, or loaded by Python)."""
    sources = [source] if isinstance(source, str) else list(source)
    if not sources:
        return
    _x(
        con,
        "misc",
        f"DELETE FROM {PACKED_TABLE} WHERE (game_id, hand) IN "
        "(SELECT game_id, hand FROM hands WHERE list_contains($sources, source_file))",
        {"sources": sources},
    )


def _size(path: str | os.PathLike[str]) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _finish_packed(con, state: bool) -> None:
    """Pack the hands that have no packed row (read by Python, or loaded before), drop rows of hands
    gone, and record the checksums (``state``)."""
    _x(con, "misc", "BEGIN TRANSACTION")
    try:
        _x(con, "misc", f"DELETE FROM {PACKED_TABLE} WHERE (game_id, hand) NOT IN (SELECT game_id, hand FROM hands)")
        dup = _x(con, "misc", f"SELECT count(*) - count(DISTINCT (game_id, hand)) FROM {PACKED_TABLE}")[0][0]
        if dup:  # cannot happen; if it does, start the packed rows afresh
            _x(con, "misc", f"DELETE FROM {PACKED_TABLE}")
        _x(
            con,
            "misc",
            f"CREATE OR REPLACE TEMP TABLE _fp_missing AS SELECT game_id, hand FROM hands "
            f"WHERE (game_id, hand) NOT IN (SELECT game_id, hand FROM {PACKED_TABLE})",
        )
        if _x(con, "misc", "SELECT count(*) FROM _fp_missing")[0][0]:
            _x(con, "packed", f"INSERT INTO {PACKED_TABLE} BY NAME {packed_from_tables_sql('_fp_missing')}")
        _x(con, "misc", "DROP TABLE _fp_missing")
        if state:
            for name, rows, checksum in table_checksums(con):
                _x(con, "misc", f"INSERT INTO {STATE_TABLE} VALUES (?, ?, ?)", [name, rows, checksum])
        _x(con, "misc", "COMMIT")
    except BaseException:
        _x(con, "misc", "ROLLBACK")
        raise


def table_checksums(con) -> list[tuple[str, int, int]]:
    """``(table, rows, sum of a hash of every row)`` of the loaded tables and ``fast_hands``."""
    out = []
    for t in CHECKSUM_TABLES:
        cols = [r[0] for r in _x(con, "misc", f"DESCRIBE {t}")]
        rows, checksum = _x(con, "checksum", f"SELECT count(*), coalesce(sum(hash({', '.join(cols)})), 0) FROM {t}")[0]
        out.append((t, int(rows), int(checksum)))
    return out


def packed_state_valid(con) -> bool:
    """True when ``fast_hands`` is what the loaded tables say: the checksums recorded at the end
    of :func:`load_fast` still match (one scan of each table)."""
    present = {
        r[0]
        for r in _x(
            con,
            "misc",
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'",
        )
    }
    if STATE_TABLE not in present or PACKED_TABLE not in present:
        return False
    stored = {r[0]: (r[1], r[2]) for r in _x(con, "misc", f"SELECT name, rows, checksum FROM {STATE_TABLE}")}
    if set(stored) != set(CHECKSUM_TABLES):
        return False
    return all(stored[t] == (rows, checksum) for t, rows, checksum in table_checksums(con))


def _scratch_dir() -> str | None:
    """Where chunk files go: ``SPADEWORK_TMP``, else ``/dev/shm`` when it is there, else the system default."""
    env = os.environ.get("SPADEWORK_TMP")
    if env:
        return env
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return None


__all__ = ["CHUNK_BYTES", "STAGE_COLUMNS", "STATS", "fast_format", "load_fast", "packed_state_valid", "table_checksums"]
