"""The stored layout gives exactly TABLES.md's tables (spadework.parsers.schema).

- Every view has the contract's columns, names and types in order.
- A loaded database's views hold the rows the plain layout held for the same records (the rows are
  written here straight from the records, the way the loader wrote them before the stored layout).
- A plain database (an old spadework database, a hand-built one) is converted on connect: the same
  rows afterwards, in SQL when the rows are what a loader writes, through the records otherwise.
"""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings

from spadework.parsers import db, schema
from spadework.parsers.model import SideScore
from spadework.parsers.seats import SEATS, SIDES
from strategies import games

LOADED = ("hands", "deals", "bids", "plays", "recorded_tricks", "recorded_scores", "load_warnings")


def contract_rows(rec, source: str) -> dict[str, list[tuple]]:
    """The rows each loaded table of TABLES.md holds for a record (column order of schema.ALL_TABLES)."""
    g, h = rec.game_id, rec.hand
    taken = rec.taken or (None, None, None, None)
    import orjson

    out: dict[str, list[tuple]] = {t: [] for t in LOADED}
    out["hands"].append(
        (g, h, rec.event, rec.date, rec.table, rec.round, rec.rules if isinstance(rec.rules, str) else orjson.dumps(rec.rules).decode(),
         not isinstance(rec.rules, str), str(rec.dealer), *rec.players, *taken, rec.deal is not None, rec.tricks is not None,
         None if rec.winner is None else str(rec.winner), orjson.dumps(rec.extras).decode() if rec.extras else None,
         source, rec.source_line)  # fmt: skip
    )
    deal = rec.effective_deal()
    if deal is not None:
        for seat in SEATS:
            for i, card in enumerate(deal[seat], 1):
                out["deals"].append((g, h, str(seat), card, i, rec.deal is None))
    for i, b in enumerate(rec.bids, 1):
        whole = isinstance(b.value, int) or float(b.value).is_integer()
        out["bids"].append((g, h, i, str(b.seat), int(b.value) if whole else None, b.nil, b.blind, float(b.value)))
    for t_no, t in enumerate(rec.tricks or (), 1):
        out["recorded_tricks"].append((g, h, t_no, str(t.leader), None if t.winner is None else str(t.winner)))
        for order, (seat, card) in enumerate(zip(t.seats(), t.cards), 1):
            out["plays"].append((g, h, t_no, order, str(seat), card))
    score = rec.score or (SideScore(), SideScore())
    for side in SIDES:
        a, b = side.seats
        side_taken = None if rec.taken is None or taken[a] is None or taken[b] is None else taken[a] + taken[b]
        out["recorded_scores"].append(
            (g, h, str(side), score[side].points, score[side].total, score[side].bags, side_taken,
             None if rec.winner is None else str(rec.winner),
             None if rec.score_before is None else rec.score_before[side],
             None if rec.bags_before is None else rec.bags_before[side])  # fmt: skip
        )
    for w in rec.warnings:
        out["load_warnings"].append((source, rec.source_line, g, h, w))
    return out


def _unique(records):
    seen, out = set(), []
    for r in records:
        if (r.game_id, r.hand) not in seen:
            seen.add((r.game_id, r.hand))
            out.append(r)
    return out


def _rows(con, table: str) -> list[tuple]:
    return sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def plain_database(records, source: str = "mem", path=None) -> duckdb.DuckDBPyConnection:
    """A database in the plain layout (in memory, or at ``path``) holding ``records`` as the loader
    used to write them."""
    con = duckdb.connect(str(path) if path else ":memory:")
    schema.create_tables(con)
    for rec in records:
        for table, rows in contract_rows(rec, source).items():
            if rows:
                marks = ", ".join("?" for _ in rows[0])
                con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    return con


def test_every_view_has_the_contract_columns():
    con = db.connect()
    for name in schema.STORED_VIEWS:
        got = [(r[0], r[1]) for r in con.execute(f"DESCRIBE {name}").fetchall()]
        assert got == schema.column_types(schema.ALL_TABLES[name]), name
    kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall())
    assert {t for t, k in kinds.items() if k == "VIEW"} == set(schema.STORED_VIEWS) | set(schema.VIEWS)
    # and the state table a new database starts with (parsers.state: not checked yet), and the
    # loader's list of the files loaded
    assert {t for t, k in kinds.items() if k == "BASE TABLE"} == set(schema.LAYOUT_TABLES) | {"spadework_state", "loaded_files"}


def test_arrow_schemas_are_the_ddl():
    con = db.connect()
    for name, ddl in schema.STORED_TABLES.items():
        got = con.sql(f"SELECT * FROM {name} LIMIT 0").to_arrow_table().schema
        assert [(f.name, f.type) for f in got] == [(f.name, f.type) for f in schema.arrow_schema(ddl)], name


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(games(max_hands=3))
def test_views_hold_the_rows_of_the_plain_layout(records):
    records = _unique(records)
    con = db.connect()
    db.load_items(con, iter(records), "mem")
    want: dict[str, list[tuple]] = {t: [] for t in LOADED}
    for rec in records:
        for t, rows in contract_rows(rec, "mem").items():
            want[t] += rows
    for t in LOADED:
        assert _rows(con, t) == sorted(want[t], key=repr), t


def _season(n_games: int = 3, **kw):
    from spadework.analysis.sim.season import iter_season

    return [r for g in iter_season(8, n_games, 5, **kw) for r in g.records]


def test_a_plain_database_is_converted_on_connect(tmp_path):
    from spadework.analysis.engine.checker import check_db

    records = _season(3, fault_rate=0.2)
    path = tmp_path / "old.duckdb"
    plain_database(records, path=path).close()
    ref = db.connect()
    db.load_items(ref, iter(records), "mem")
    check_db(ref)
    con = db.connect(path)
    assert schema.storage_layout(con) == "stored"
    for t in LOADED:
        assert _rows(con, t) == _rows(ref, t), t
    assert [r for r in db.iter_records(con)] == [r for r in db.iter_records(ref)]
    check_db(con)
    for t in ("tricks", "hand_scores", "violations", "games"):
        assert _rows(con, t) == _rows(ref, t), t


def test_a_checked_plain_database_keeps_its_derived_rows():
    from spadework.analysis.engine.checker import check_db

    records = _season(2, fault_rate=0.3)
    ref = db.connect()
    db.load_items(ref, iter(records), "mem")
    check_db(ref)
    plain = plain_database(records)
    for t in ("tricks", "hand_scores", "violations", "games"):
        rows = ref.execute(f"SELECT * FROM {t}").fetchall()
        marks = ", ".join("?" for _ in rows[0])
        plain.execute(f"DELETE FROM {t}")
        plain.executemany(f"INSERT INTO {t} VALUES ({marks})", rows)
    db.convert_plain(plain)
    for t in LOADED + ("tricks", "hand_scores", "violations", "games"):
        assert _rows(plain, t) == _rows(ref, t), t


def test_a_plain_database_no_loader_wrote_converts_as_written():
    records = _season(1)
    plain = plain_database(records)
    # a play whose seat does not follow the leader: kept as written (the view shows it as before;
    # the record, which has no seat per card, is what the checker read before)
    plain.execute("UPDATE plays SET seat = 'N' WHERE trick = 1 AND play_order = 2")
    before_rows = {t: _rows(plain, t) for t in LOADED}
    before = list(db.iter_records(plain))
    db.convert_plain(plain)
    assert schema.storage_layout(plain) == "stored"
    assert {t: _rows(plain, t) for t in LOADED} == before_rows
    assert list(db.iter_records(plain)) == before


def test_a_plain_database_the_sql_cannot_convert_converts_through_its_records():
    records = _season(1)
    plain = plain_database(records)
    plain.execute("UPDATE deals SET inferred = true WHERE seat = 'W'")  # a recorded deal marked inferred
    before = list(db.iter_records(plain))
    assert before != sorted(records, key=lambda r: (r.game_id, r.hand))  # the reader drops W's cards
    db.convert_plain(plain)
    assert schema.storage_layout(plain) == "stored"
    assert list(db.iter_records(plain)) == before


def test_a_plain_database_that_cannot_be_stored_is_left_as_it_is(tmp_path):
    records = _season(1)
    path = tmp_path / "odd.duckdb"
    plain = plain_database(records, path=path)
    plain.execute("UPDATE deals SET card = 'XX' WHERE card_order = 1 AND seat = 'N'")
    plain.close()
    with pytest.raises(ValueError, match="'XX' is not a card"):
        db.connect(path)
    ro = db.connect(path, read_only=True)
    assert schema.storage_layout(ro) == "plain"
    assert ro.execute("SELECT count(*) FROM deals WHERE card = 'XX'").fetchone()[0] == len(records)


def test_a_read_only_plain_database_is_read_as_it_is(tmp_path):
    records = _season(1)
    path = tmp_path / "plain.duckdb"
    plain_database(records, path=path).close()
    ro = db.connect(path, read_only=True)
    assert schema.storage_layout(ro) == "plain"
    assert [(r.game_id, r.hand) for r in db.iter_records(ro)] == sorted((r.game_id, r.hand) for r in records)


def test_too_many_tricks_cannot_be_stored():
    from dataclasses import replace

    rec = _season(1)[0]
    with pytest.raises(ValueError, match="at most 15"):
        db.hand_row(replace(rec, tricks=rec.tricks * 2), "x")
