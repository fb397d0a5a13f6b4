"""Whether the derived tables still answer for what is loaded: one small state table.

The derived tables (``tricks``, ``violations``, ``hand_scores``, ``games``; TABLES.md) are what
the last check computed from the loaded tables.  A load after that check, or a check that never
finished, leaves them describing other data; a reader that trusted them would say "0 findings"
about a log holding a renege.  This module is the one mechanism that tells.

Table ``spadework_state`` (one row)::

    loaded_generation   BIGINT   bumped by every transaction that writes the loaded tables
    checked_generation  BIGINT   the loaded_generation the last completed check covered (NULL: never)

Writers (the contract for every loader and checker, including a compiled core):

- a loader calls :func:`mark_loaded` inside each transaction that changes the loaded tables
  (``hands``, ``deals``, ``bids``, ``plays``, ``recorded_*``, ``load_errors``); a loader whose
  file spans several transactions calls it in the first one (a check never runs between them);
- a checker reads ``g = loaded_generation(con)`` before it reads the loaded tables and calls
  ``mark_checked(con, g)`` inside the transaction that replaces the derived tables, just before
  its commit.  A check that fails part way rolls back, so the mark is never written for it.

Readers call :func:`derived_state` (``"fresh"``, ``"missing"`` or ``"stale"``) or
:func:`require_checked`, which raises :class:`NotChecked` with a sentence naming
``spadework check``; the command line maps it to exit status 2.

A database written before this table existed (or built by hand) has no state row: it is judged
by its contents (derived tables empty while hands are loaded: ``missing``; a game or a hand
loaded that the ``games`` table does not cover: ``stale``).  Changes made with one's own SQL
are not tracked.
"""

from __future__ import annotations

from typing import Any

STATE_TABLE = "spadework_state"
"""The name of the state table (one row)."""

FRESH, MISSING, STALE, OUTDATED, UNLOADED = "fresh", "missing", "stale", "outdated", "unloaded"
"""The answers of :func:`derived_state` (``outdated``: written by an older spadework, without a
column the derived tables have now, such as ``violations.player``)."""

DERIVED = ("tricks", "violations", "hand_scores", "games")
"""The tables a check writes."""

_DDL = f"CREATE TABLE IF NOT EXISTS {STATE_TABLE} (loaded_generation BIGINT NOT NULL, checked_generation BIGINT)"


class NotChecked(RuntimeError):
    """The derived tables are missing or older than the loaded tables.

    ``state``: :data:`MISSING`, :data:`STALE`, :data:`OUTDATED` or :data:`UNLOADED`; ``database``:
    the file (``None`` in memory).  ``str(exc)`` is a sentence for the user naming ``spadework check``
    (``spadework load`` for a database with nothing loaded).
    """

    def __init__(self, state: str, database: str | None) -> None:
        self.state = state
        self.database = database
        db = database or "FILE"
        what = database or "the database"
        tables = "its derived tables (tricks, violations, hand_scores, games)"
        if state == UNLOADED:
            super().__init__(
                f"{what} holds no loaded hands (no spadework tables); load logs into it first: "
                f"`spadework load LOGS --db {db}`"
            )
            return
        if state == MISSING:
            why = f"{what} has not been checked: {tables} are empty or missing"
        elif state == OUTDATED:
            why = f"{what} was checked by an older spadework: {tables} lack columns this version writes"
        else:
            why = f"{what} was loaded after its last check (or that check did not finish), so {tables} are out of date"
        super().__init__(f"{why}; run `spadework check --db {db}` first")


def _ensure(con) -> None:
    con.execute(_DDL).fetchall()
    if con.execute(f"SELECT count(*) FROM {STATE_TABLE}").fetchall()[0][0] == 0:
        con.execute(f"INSERT INTO {STATE_TABLE} VALUES (0, NULL)").fetchall()


def start_state(con) -> None:
    """Give a database its state row where it has none (a new database: never loaded, never
    checked), so a reader of one that no check completed on is told so (:func:`derived_state`)."""
    _ensure(con)


def mark_loaded(con) -> int:
    """Record that the loaded tables change; call it inside the loading transaction.

    ``con``: the connection (or cursor) running the transaction.  Returns the new load generation.
    """
    _ensure(con)
    return con.execute(f"UPDATE {STATE_TABLE} SET loaded_generation = loaded_generation + 1 RETURNING loaded_generation").fetchall()[0][0]


def loaded_generation(con) -> int:
    """The current load generation (0 for a database never loaded since this table exists).

    A checker reads it before reading the loaded tables and hands it to :func:`mark_checked`.
    """
    if not _has_state(con):
        return 0
    rows = con.execute(f"SELECT loaded_generation FROM {STATE_TABLE}").fetchall()
    return int(rows[0][0]) if rows else 0


def mark_checked(con, generation: int) -> None:
    """Record that the derived tables now answer for load generation ``generation``; call it inside
    the transaction that replaced them, before its commit."""
    _ensure(con)
    con.execute(f"UPDATE {STATE_TABLE} SET checked_generation = ?", [generation]).fetchall()


def _objects(con) -> set[str]:
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' "
        "UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'main'"
    ).fetchall()
    return {r[0] for r in rows}


def holds_spadework_tables(con) -> bool:
    """True when the database has spadework's loaded tables (``hand_records`` or ``hands``): a
    DuckDB file made by something else has neither, and commands that read hands refuse it rather
    than add spadework's tables to it."""
    return bool({"hand_records", "hands"} & _objects(con))


def _has_state(con) -> bool:
    return STATE_TABLE in _objects(con)


def _one(con, sql: str) -> Any:
    return con.execute(sql).fetchall()[0][0]


def _lacks_columns(con) -> bool:
    """True when a derived table lacks a column that :data:`~spadework.parsers.schema.DERIVED_TABLES`
    declares (a check by an older version wrote it)."""
    from spadework.parsers.schema import DERIVED_TABLES, declared_columns

    rows = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND list_contains(?, table_name)",
        [list(DERIVED_TABLES)],
    ).fetchall()
    have: dict[str, set[str]] = {}
    for table, column in rows:
        have.setdefault(table, set()).add(column)
    return any(not set(declared_columns(ddl)) <= have.get(table, set()) for table, ddl in DERIVED_TABLES.items())


def derived_state(con) -> str:
    """``"fresh"`` when the derived tables answer for the loaded tables, ``"missing"`` when no
    check has filled them, ``"stale"`` when a load came after the last completed check,
    ``"outdated"`` when an older spadework wrote them (a column is missing), ``"unloaded"`` when the
    database has no loaded tables at all (a DuckDB file made by something else, or blank).

    Cheap (a few metadata-sized queries); works on a read-only connection.  A database that no
    check has completed on is ``missing`` even when it holds no hands (a load that read nothing,
    a validate stopped with Ctrl-C): a report from it would read as "clean".  One with no state
    row (built by hand) holding no hands and no derived rows is fresh.
    """
    objs = _objects(con)
    if "hands" not in objs:
        return UNLOADED
    hands = _one(con, "SELECT count(*) FROM hands")
    if any(t not in objs for t in DERIVED):
        return FRESH if hands == 0 else MISSING
    if _lacks_columns(con):
        return OUTDATED
    derived_rows = sum(_one(con, f"SELECT count(*) FROM (SELECT 1 FROM {t} LIMIT 1)") for t in DERIVED)
    if STATE_TABLE in objs:
        rows = con.execute(f"SELECT loaded_generation, checked_generation FROM {STATE_TABLE}").fetchall()
        if rows:
            loaded, checked = rows[0]
            if checked is None:
                return MISSING
            return STALE if checked < loaded else FRESH
    # no state row: a database from before this table, or built by hand; judge by the contents
    if hands == 0 and derived_rows == 0:
        return FRESH
    if _one(con, "SELECT count(*) FROM games") == 0:
        return MISSING
    uncovered = _one(
        con,
        "SELECT (SELECT count(*) FROM (SELECT DISTINCT game_id FROM hands) h ANTI JOIN games g USING (game_id)) "
        "+ abs((SELECT count(*) FROM hands) - (SELECT coalesce(sum(hands), 0) FROM games))",
    )
    return STALE if uncovered else FRESH


def database_path(con) -> str | None:
    """The file of the connection's current database, or ``None`` in memory."""
    try:
        rows = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    except Exception:  # an old DuckDB without the column
        return None
    return rows[0][0] if rows and rows[0][0] else None


def require_checked(con, name: str | None = None) -> None:
    """Raise :class:`NotChecked` unless :func:`derived_state` is ``"fresh"``.

    Every reader of the derived tables calls it first (``spadework report``/``stats``, the metrics,
    the notebooks' ``open_database``).  ``name``: the database as the user named it, for the
    message (default: the connection's file).
    """
    state = derived_state(con)
    if state != FRESH:
        raise NotChecked(state, name or database_path(con))


__all__ = [
    "DERIVED",
    "FRESH",
    "MISSING",
    "OUTDATED",
    "STALE",
    "STATE_TABLE",
    "UNLOADED",
    "NotChecked",
    "database_path",
    "derived_state",
    "holds_spadework_tables",
    "loaded_generation",
    "mark_checked",
    "mark_loaded",
    "require_checked",
    "start_state",
]
