"""The stored layout as the engines see it: derived tables written, stored hands read as arrays.

The database keeps one row per hand (``hand_records``, what the logs say) and one row per checked
hand (``checked_tricks``, the replayed tricks); TABLES.md's tables are views over them
(:mod:`spadework.parsers.schema`).  This module is the engines' side of that layout:

- :func:`reset_derived` empties the derived tables before a check (``checked_tricks``,
  ``hand_scores``, ``violations``, ``games``; the ``tricks`` view stays);
- :func:`checked_tricks_table` turns ``tricks`` rows (column lists, as the reference checker's
  :class:`~spadework.analysis.engine.checker.DerivedWriter` buffers them) into ``checked_tricks``
  rows; :func:`insert_arrow` inserts an Arrow table into a table by column name.

Both engines write the derived tables through these functions, so their rows agree by
construction where they can and the tests compare the rest.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from spadework.parsers.encoding import PLAY_SUIT_CODES, SEAT_CODES
from spadework.parsers.schema import (
    ALL_TABLES,
    DERIVED_TABLES,
    STORED_TABLES,
    VIEWS,
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
    return (CHECKED_TRICKS,) + tuple(t for t in DERIVED_TABLES if t not in VIEWS)


def reset_derived(con) -> None:
    """Empty the derived tables: drop and re-create ``checked_tricks``, ``hand_scores``, ``violations``,
    ``games`` (in the plain layout: ``tricks``, ``violations``, ``hand_scores``, ``games``)."""
    ddl = ALL_TABLES | STORED_TABLES
    for t in derived_tables(con):
        con.execute(f"DROP TABLE IF EXISTS {t}")
        con.execute(f"CREATE TABLE {t} ({ddl[t]})")


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
    "checked_tricks_table",
    "derived_tables",
    "insert_arrow",
    "list_column",
    "reset_derived",
]
