"""JSONL -> DuckDB -> JSONL is lossless: whatever a record holds, the loaded tables hold it too."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spadework.parsers import db, jsonl
from strategies import games, strip_source


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(games(max_hands=3))
def test_records_survive_duckdb(tmp_path_factory, records):
    # distinct (game_id, hand) keys: a duplicate in one file is a load error, tested in test_loader
    seen, unique = set(), []
    for r in records:
        if (r.game_id, r.hand) not in seen:
            seen.add((r.game_id, r.hand))
            unique.append(r)
    path = tmp_path_factory.mktemp("rt") / "hands.jsonl"
    path.write_text(jsonl.dumps(unique), encoding="utf-8")
    con = db.connect()
    summary = db.load_files(con, [path])
    assert summary.errors == 0
    back = list(db.iter_records(con))
    want = sorted(unique, key=lambda r: (r.game_id, r.hand))
    assert [strip_source(r) for r in back] == [strip_source(r) for r in want]
    # and the text written back is the text written in the first place
    assert jsonl.dumps(back) == jsonl.dumps(want)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=8, unique=True))
def test_loading_twice_never_duplicates(tmp_path_factory, hands):
    from test_jsonl import line

    path = tmp_path_factory.mktemp("twice") / "a.jsonl"
    path.write_text("".join(line(hand=h) + "\n" for h in hands))
    con = db.connect()
    db.load_files(con, [path])
    db.load_files(con, [path])
    assert con.execute("SELECT count(*), count(DISTINCT hand) FROM hands").fetchone() == (len(hands), len(hands))
    assert con.execute("SELECT count(*) FROM bids").fetchone()[0] == 4 * len(hands)
