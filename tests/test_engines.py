"""The two engines give the same tables and findings (spadework.analysis.engine.engines).

The compiled engine (``check_compiled``: stored rows read through Arrow, the compiled core, the
reference for the message text of the hands with findings) writes the same rows as
``spadework.analysis.engine.checker.check_db`` in ``tricks``, ``violations``, ``hand_scores`` and
``games`` and gives the same summary: on simulated seasons with planted faults of every preset, under
rule options and overrides, in several partitions, on random legal games with one injected fault
per game (hypothesis), on numbers beyond 32 bits.  ``validate`` of each engine is load then check.
The stored rows reach the core as exactly the arrays ``pack_records`` makes of their records.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spadework.analysis.engine import engines
from spadework.analysis.engine.checker import check_db
from spadework.analysis.engine.engines import check_compiled
from spadework.analysis.engine.rules import get_ruleset
from spadework.analysis.sim.season import iter_season, write_season
from spadework.parsers.db import connect, load_files, load_items
from spadework.parsers.model import SideScore
from spadework.parsers.seats import SEATS, SIDES
from test_properties_checker import PLAY_FAULTS, RECORD_FAULTS, Impossible, simulate_game, simulate_hand

LOADED = ("hands", "deals", "bids", "plays", "recorded_tricks", "recorded_scores", "load_errors", "load_warnings")
DERIVED = ("tricks", "violations", "hand_scores", "games")


def _rows(con, table: str) -> list[tuple]:
    return sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def _summary(s) -> tuple:
    return ([(f.source_file, f.format, f.hands, f.errors, f.warnings) for f in s.files], list(s.skipped))


def assert_same_check(con_ref, con_fast, rules=None, **kw) -> None:
    s_ref = check_db(con_ref, rules=rules)
    s_fast = check_compiled(con_fast, rules=rules, **kw)
    for t in DERIVED:
        assert _rows(con_ref, t) == _rows(con_fast, t), t
    assert [f.to_row() for f in s_ref.findings] == [f.to_row() for f in s_fast.findings]
    assert (s_ref.games, s_ref.hands, s_ref.by_code, s_ref.games_with_findings) == (
        s_fast.games,
        s_fast.hands,
        s_fast.by_code,
        s_fast.games_with_findings,
    )


def _two_dbs(records):
    a, b = connect(None), connect(None)
    load_items(a, iter(records), "mem")
    load_items(b, iter(records), "mem")
    return a, b


def test_check_simulated_season_with_planted_faults():
    recs, faults = [], []
    for g in iter_season(12, 60, 21, fault_rate=0.15):
        recs.extend(g.records)
        faults.extend(g.faults)
    assert faults
    a, b = _two_dbs(recs)
    assert_same_check(a, b, part_hands=200)  # several partitions; games never split
    assert engines.STATS["parts"] > 3 and engines.STATS["reference_games"] == 0
    with_findings = a.execute("SELECT count(DISTINCT game_id) FROM violations").fetchone()[0]
    assert 0 < with_findings < 60


def test_hands_flagged_for_their_score_only_are_not_replayed_again(monkeypatch):
    """A log whose every recorded score is off (a scoring the log's rules do not describe) flags every
    hand.  The reference writes those findings' text from the tricks the core counted, without
    replaying a trick (that cost 0.25 ms a hand: 8x validate's time on such a log); hands with a deal
    or card-play finding are still replayed.  The findings are the reference's, word for word."""
    from spadework.analysis.engine import replay
    from spadework.analysis.engine.findings import SCORE_MISMATCH

    recs = []
    for g in iter_season(8, 30, 44, fault_rate=0.1):
        for r in g.records:
            if r.score is not None:
                ns, ew = r.score
                r = replace(r, score=(replace(ns, points=(ns.points or 0) + 10), ew))
            recs.append(r)
    a, b = _two_dbs(recs)
    s_ref = check_db(a)
    replayed = []
    start = replay.PlayState.start.__func__
    monkeypatch.setattr(replay.PlayState, "start", classmethod(lambda cls, *x, **k: replayed.append(k["hand"]) or start(cls, *x, **k)))
    s_fast = check_compiled(b)
    for t in DERIVED:
        assert _rows(a, t) == _rows(b, t), t
    assert [f.to_row() for f in s_ref.findings] == [f.to_row() for f in s_fast.findings]
    by_hand: dict[tuple, set] = {}
    for f in s_fast.findings:
        by_hand.setdefault((f.game_id, f.hand), set()).add(f.code)
    score_only = [k for k, codes in by_hand.items() if not codes & replay.PLAY_CODES]
    with_play = [k for k, codes in by_hand.items() if codes & replay.PLAY_CODES]
    assert sum(SCORE_MISMATCH in c for c in by_hand.values()) > len(recs) * 0.8
    assert len(score_only) > len(recs) * 0.7 and with_play
    assert 0 < len(replayed) <= len(with_play)


@pytest.mark.parametrize("parts", [2, 6])
@pytest.mark.parametrize("order", ["game by game", "interleaved", "reloaded"])
def test_check_partitions_hold_whole_games_and_every_stored_row_once(order, parts):
    """check_compiled reads partitions of whole games: rowid ranges where games lie in runs of
    stored rows, a hash of the game id where they are interleaved (a range would be too large),
    and either way every stored row exactly once; the result is the reference's.  Two partitions
    asked of interleaved games are one (no cut can separate them, and one is not too large): its
    filter was a bare "WHERE", a syntax error that ended validate with a traceback."""
    games = [g.records for g in iter_season(8, 24, 61, fault_rate=0.1)]
    if order == "interleaved":  # hand k of every game, then hand k + 1 of every game...
        recs = [g[k] for k in range(max(map(len, games))) for g in games if k < len(g)]
    else:
        recs = [r for g in games for r in g]
    a, b = _two_dbs(recs)
    if order == "reloaded":  # the first half loaded again under its name: its rows deleted, new rowids
        for con in (a, b):
            load_items(con, iter(recs[: len(recs) // 2]), "mem")
    total, n_games = b.execute("SELECT count(*), count(DISTINCT game_id) FROM hand_records").fetchone()
    filters = engines._partition_filters(b, total, parts)
    if order == "interleaved":
        assert filters == [""] if parts == 2 else all("hash" in f for f in filters), filters
    else:
        assert all("rowid" in f for f in filters), filters
    seen = [b.execute(f"SELECT game_id, count(*) FROM hand_records {f} GROUP BY game_id").fetchall() for f in filters]
    per_game = [gid for part in seen for gid, _ in part]
    assert len(per_game) == len(set(per_game)) == n_games  # each game in one partition
    assert sum(n for part in seen for _, n in part) == total
    assert max(sum(n for _, n in part) for part in seen) <= 2 * total / parts
    assert_same_check(a, b, part_hands=-(-total // parts))
    assert engines.STATS["parts"] == len(filters)


def test_clean_games_need_no_reference():
    recs = [r for g in iter_season(12, 40, 5) for r in g.records]
    a, b = _two_dbs(recs)
    assert_same_check(a, b)
    assert engines.STATS["games"] == 40 and engines.STATS["reference_games"] == 0
    assert a.execute("SELECT count(*) FROM violations").fetchone()[0] == 0


@pytest.mark.parametrize(
    "rules",
    [
        {"preset": "standard", "target": 300, "failed_nil_tricks": "bags_only", "ten_for_two_hundred": True},
        {"preset": "standard", "failed_nil_tricks": "ignored", "bag_limit": 5, "bag_penalty": 50, "losing_score": -200},
        {"preset": "standard", "blind_nil": "always", "nil_points": 50, "bag_points": 0, "min_side_bid": 4},
        "nyc",
        "barmore",
    ],
)
def test_check_rule_options_and_other_presets(rules):
    recs = [r for g in iter_season(8, 12, 9, rules=rules, fault_rate=0.1) for r in g.records]
    a, b = _two_dbs(recs)
    assert_same_check(a, b)
    assert engines.STATS["reference_games"] == 0  # every ruleset is the core's own


@pytest.mark.parametrize("override", ["standard", {"preset": "standard", "target": 200}, "barmore"])
def test_check_with_a_rules_override(override):
    recs = [r for g in iter_season(8, 10, 13, fault_rate=0.05) for r in g.records]
    a, b = _two_dbs(recs)
    assert_same_check(a, b, rules=override)


GAME_FAULTS = ("none", "hand", "points", "total", "bags", "winner", "no_winner", "dealer", "after_end", "start", "before")


def _game_with_fault(rng: random.Random, rs, gid: str, fault: str) -> list:
    n = rng.randint(1, 7)
    records, chain = simulate_game(
        rng,
        rs,
        game_id=gid,
        max_hands=n,
        first_dealer=rng.choice(SEATS),
        wrong_dealer_at=rng.randint(2, n + 1) if fault == "dealer" else None,
        extra_hands=1 if fault == "after_end" else 0,
    )
    k = rng.randrange(len(records))
    side = rng.choice(SIDES)
    rec = records[k]
    if fault == "hand":
        kind = rng.choice(PLAY_FAULTS + RECORD_FAULTS)
        for _ in range(20):
            try:
                bad, _ = simulate_hand(
                    rng, rs, game_id=gid, hand=rec.hand, dealer=rec.dealer, fault=kind, record_deal=rng.random() < 0.8
                )
                break
            except Impossible:
                continue
        else:
            return records
        records[k] = replace(bad, score=rec.score, winner=rec.winner)
    elif fault in ("points", "total", "bags") and rec.score is not None:
        sc = list(rec.score)
        old = sc[side]
        d = rng.choice((-100, -10, -1, 1, 10))
        sc[side] = SideScore(
            old.points + d if fault == "points" else old.points,
            old.total + d if fault == "total" else old.total,
            (old.bags + 1) % 10 if fault == "bags" else old.bags,
        )
        records[k] = replace(rec, score=tuple(sc))
    elif fault == "winner":
        records[k] = replace(rec, winner=rng.choice(SIDES))
    elif fault == "no_winner":
        records[-1] = replace(records[-1], winner=None)
    elif fault == "start":
        records[0] = replace(
            records[0], score_before=(rng.randint(-100, 400), rng.randint(-100, 400)), bags_before=(rng.randint(0, 12), 3)
        )
    elif fault == "before" and len(records) > 1:
        prev = records[k - 1] if k > 0 else None
        if prev is not None and prev.score is not None:
            right = (prev.score[0].total, prev.score[1].total)
            records[k] = replace(rec, score_before=right if rng.random() < 0.5 else (right[0] + 10, right[1]))
    return records


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    rules=st.sampled_from(
        [
            "standard",
            "standard",
            {"preset": "standard", "target": 200, "losing_score": -150},
            {"preset": "standard", "failed_nil_tricks": "bags_only", "ten_for_two_hundred": True, "target": 250},
            {"preset": "standard", "blind_nil": "always", "bag_limit": 4, "bag_penalty": 40},
            "openspiel",
        ]
    ),
)
def test_compiled_check_agrees_with_the_reference_on_random_games_with_faults(seed, rules):
    rng = random.Random(seed)
    rs = get_ruleset(rules)
    records = []
    for g in range(8):
        records.extend(_game_with_fault(rng, rs, f"g{g}", rng.choice(GAME_FAULTS)))
    a, b = _two_dbs(records)
    assert_same_check(a, b)


def test_validate_is_load_then_check(tmp_path, monkeypatch):
    from test_loader_fast import _season_objs, edge_lines

    from spadework.analysis.engine import loader

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)  # the compiled loader reads even these small files

    edge_file = tmp_path / "edges.jsonl"
    edge_file.write_bytes(b"\n".join(edge_lines(_season_objs())) + b"\n")
    season = tmp_path / "season.jsonl"
    recs = [r for g in iter_season(8, 6, 17, fault_rate=0.1) for r in g.records]
    write_season(recs, season)
    ref = connect(None)
    s_ref, c_ref = engines.REFERENCE.validate(ref, [season, edge_file])
    fast = connect(None)
    s_fast, c_fast = engines.COMPILED.validate(fast, [season, edge_file])
    for t in LOADED + DERIVED:
        assert _rows(ref, t) == _rows(fast, t), t
    assert _summary(s_ref) == _summary(s_fast)
    assert [f.to_row() for f in c_ref.findings] == [f.to_row() for f in c_fast.findings]


def test_scores_beyond_32_bits_are_stored_alike_by_both_engines():
    # a ruleset whose numbers leave 32 bits: points and totals are BIGINT, and the compiled engine,
    # which leaves such a game to the reference, writes the same rows
    from spadework.analysis.sim import simulate_season

    records, _ = simulate_season(12, 1, 1, fault_rate=0.0)
    recs = [dataclasses.replace(r, score=None, winner=None, rules=None) for r in records]
    a, b = _two_dbs(recs)
    rules = {"preset": "standard", "bag_points": -999_999_999}
    check_db(a, rules=rules)
    check_compiled(b, rules=rules)
    for t in DERIVED:
        assert _rows(a, t) == _rows(b, t), t
    low = a.execute("SELECT min(least(total_ns, total_ew)) FROM games").fetchone()[0]
    assert low < -(2**31)
    assert check_compiled(b, rules="standard").games == 1


def test_raise_policy_and_bad_rules_behave_as_check_db():
    from spadework.analysis.engine.findings import CheckError
    from spadework.analysis.engine.rules import RulesError

    recs = [r for g in iter_season(8, 3, 2, fault_rate=0.5) for r in g.records]
    a, _ = _two_dbs(recs)
    with pytest.raises(CheckError):
        check_compiled(a, policy="raise")
    with pytest.raises(RulesError):
        check_compiled(a, rules="no-such-preset")


def test_stored_rows_pack_as_their_records(tmp_path):
    """The Arrow bridge gives the core exactly what pack_records makes of the same records."""
    from spadework.analysis.engine.packed import pack_records
    from spadework.analysis.engine.storage import pack_table
    from spadework.parsers.db import iter_records

    recs = []
    for k, rules in enumerate(("standard", "barmore", "nyc")):
        recs += [dataclasses.replace(r, game_id=f"{k}-{r.game_id}") for g in iter_season(8, 4, 3 + k, rules=rules, fault_rate=0.3) for r in g.records]
    recs[5] = dataclasses.replace(recs[5], deal=None)  # a deal inferred from the play is not a recorded deal
    recs[7] = dataclasses.replace(recs[7], tricks=recs[7].tricks[:5], score=None)  # an incomplete play
    con = connect(None)
    load_items(con, iter(reversed(recs)), "mem")  # stored out of game order
    part = pack_table(con.sql("SELECT * FROM hand_records").to_arrow_table())
    ref = pack_records(iter_records(con))
    for f in dataclasses.fields(part.hands):
        assert np.array_equal(getattr(part.hands, f.name), getattr(ref.hands, f.name)), f.name
    assert part.rulesets.names == ref.rulesets.names
    assert [r for g in ref.records for r in g][:20] == part.records(np.arange(20))


def test_engine_names_and_choice():
    assert engines.get_engine("replay") is engines.REFERENCE and engines.get_engine("fast") is engines.COMPILED
    assert engines.get_engine("auto", 10) is engines.REFERENCE
    assert engines.get_engine("auto", engines.AUTO_COMPILED_BYTES) is engines.COMPILED
    assert engines.get_engine("auto", hands=engines.AUTO_COMPILED_HANDS) is engines.COMPILED
    with pytest.raises(ValueError, match="unknown engine 'turbo'"):
        engines.get_engine("turbo")
    assert engines.memory_bytes("448MB") == 448_000_000 and engines.memory_bytes("1.5GiB") == int(1.5 * 1024**3)
    assert engines.memory_bytes("-5MB") is None and engines.memory_bytes("lots") is None
    con = connect(None)
    with pytest.raises(ValueError, match="at least 128MB"):
        engines.limit_memory(con, "100MB", engines.COMPILED)
    engines.limit_memory(con, None, engines.COMPILED)
    mib = engines.memory_bytes(engines.COMPILED_MEMORY_LIMIT) / 2**20
    shown = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]  # e.g. "122.0 MiB"
    assert shown.endswith("MiB") and abs(float(shown.removesuffix("MiB")) - mib) < 0.1, shown


def _validate_both(paths, rules=None):
    ref = connect(None)
    s_ref, c_ref = engines.REFERENCE.validate(ref, paths, rules=rules)
    fast = connect(None)
    s_fast, c_fast = engines.COMPILED.validate(fast, paths, rules=rules)
    for t in LOADED + DERIVED:
        assert _rows(ref, t) == _rows(fast, t), t
    assert _summary(s_ref) == _summary(s_fast)
    assert [f.to_row() for f in c_ref.findings] == [f.to_row() for f in c_fast.findings]
    assert (c_ref.games, c_ref.hands, c_ref.games_with_findings) == (c_fast.games, c_fast.hands, c_fast.games_with_findings)
    return fast


@pytest.mark.parametrize("rules", [None, "barmore", {"preset": "standard", "renege_penalty_tricks": 2}])
def test_validate_checks_while_it_loads(tmp_path, monkeypatch, rules):
    """A canonical log is checked block by block as it loads: games cut by a block boundary wait for
    the next block; the tables and findings are the reference's."""
    from spadework.analysis.engine import loader
    from spadework.parsers.state import FRESH, derived_state

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(loader, "CHUNK_BYTES", 20_000)  # about a dozen hands a block
    monkeypatch.setattr("spadework.analysis.engine.storage.ROW_GROUP_ROWS", 30)  # the writer's groups span blocks
    preset = rules if isinstance(rules, str) else (rules or {}).get("preset", "standard")
    recs = [r for g in iter_season(8, 12, 27, fault_rate=0.2, rules=preset) for r in g.records]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_season(recs[: len(recs) // 2], a)
    write_season(recs[len(recs) // 2 :], b)  # a game may go on in the second file
    fast = _validate_both([a, b], rules)
    assert engines.STATS["streamed"] and engines.STATS["parts"] == 0
    assert derived_state(fast) == FRESH


def test_a_failed_write_of_a_streamed_block_loses_the_file_and_is_reported(tmp_path, monkeypatch):
    """The blocks of a streaming validate are written by a thread of their own: an error there (here
    the third insert of stored hands) reaches the caller, and none of the file's rows are left behind; the
    Python loader then reads the file whole, as after any failure of the fast path."""
    from spadework.analysis.engine import loader, storage

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(loader, "CHUNK_BYTES", 20_000)
    monkeypatch.setattr("spadework.analysis.engine.storage.ROW_GROUP_ROWS", 20)
    recs = [r for g in iter_season(8, 6, 33, fault_rate=0.2) for r in g.records]
    path = tmp_path / "season.jsonl"
    write_season(recs, path)
    calls = {"hand_records": 0}
    real = storage.insert_arrow

    def failing(con, table, data):
        if table == "hand_records":
            calls[table] += 1
            if calls[table] == 3:
                raise OSError("disk full")
        return real(con, table, data)

    monkeypatch.setattr(storage, "insert_arrow", failing)
    fast = connect(None)
    s, c = engines.COMPILED.validate(fast, [path])
    assert calls["hand_records"] == 3  # the writer stopped at the failure; the rest went another way
    assert not engines.STATS["streamed"]
    ref = connect(None)
    s_ref, c_ref = engines.REFERENCE.validate(ref, [path])
    for t in LOADED + DERIVED:
        assert _rows(ref, t) == _rows(fast, t), t
    assert [f.to_row() for f in c.findings] == [f.to_row() for f in c_ref.findings]


def test_an_interrupted_validate_writes_none_of_the_rows_its_writer_held(tmp_path, monkeypatch):
    """A validate stopped part way through a file (here Ctrl-C while the third block is checked)
    removes the file's rows; the rows and derived rows the writer still held are dropped, not
    committed as it stops (found by the audit: they were written after the file was forgotten)."""
    import threading

    from spadework.analysis.engine import loader, storage

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(loader, "CHUNK_BYTES", 20_000)
    recs = [r for g in iter_season(8, 6, 33, fault_rate=0.2) for r in g.records]
    path = tmp_path / "season.jsonl"
    write_season(recs, path)
    real = storage.StreamCheck.feed
    calls = {"n": 0}

    def interrupted(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, *a, **k)

    monkeypatch.setattr(storage.StreamCheck, "feed", interrupted)
    con = connect(None)
    with pytest.raises(KeyboardInterrupt):
        engines.COMPILED.validate(con, [path])
    for t in ("hand_records", "checked_tricks", "hand_scores", "violations", "games"):
        assert con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == 0, t
    assert not [t for t in threading.enumerate() if t.name.startswith("spadework-")]


def test_the_writer_inserts_whole_row_groups_and_the_rest_when_drained():
    """The writer (the loader's, and a check's) inserts each table's rows in whole row groups (a DuckDB commit takes
    those as they are; a partial one it appends again), in the order submitted, and what is left
    when it is drained; rows of another column type are written as they came."""
    import duckdb
    import pyarrow as pa

    from spadework.analysis.engine import storage

    con = duckdb.connect()
    con.execute("CREATE TABLE t (x BIGINT)")
    con.execute("CREATE TABLE u (x BIGINT)")
    w = storage.RowGroupWriter(con, rows_per_group=4)
    committed = lambda: con.execute("SELECT count(*) FROM t").fetchall()[0][0]  # noqa: E731
    rows = iter(range(100))
    for k in range(5):
        w.submit([("t", pa.table({"x": pa.array([next(rows) for _ in range(3)], pa.int64())})), ("u", pa.table({"x": [k]}))])
        w.q.join()
        assert committed() == (3 * (k + 1)) // 4 * 4
        assert con.execute("SELECT count(*) FROM u").fetchall()[0][0] == (k + 1) // 4 * 4
    w.submit([("t", pa.table({"x": pa.array([15, 16], pa.int32())}))])  # another type: written as it came
    w.drain()
    assert [r[0] for r in con.execute("SELECT x FROM t").fetchall()] == list(range(17))
    assert [r[0] for r in con.execute("SELECT x FROM u").fetchall()] == list(range(5))
    w.close()


@pytest.mark.parametrize("where", ["check", "write"])
def test_a_compiled_check_that_fails_part_way_leaves_no_derived_rows(tmp_path, monkeypatch, where):
    """check_compiled checks partition by partition while a thread writes the derived rows in whole
    row groups: an error in a later partition's check, or in the writer's insert, reaches the caller
    and leaves the derived tables empty (``missing``), as the reference does; a check after it
    fills them as usual."""
    from spadework.analysis.engine import storage
    from spadework.parsers.state import FRESH, MISSING, derived_state

    monkeypatch.setattr(storage, "ROW_GROUP_ROWS", 16)
    recs = [r for g in iter_season(8, 8, 51, fault_rate=0.2) for r in g.records]
    path = tmp_path / "season.jsonl"
    write_season(recs, path)
    con = connect(None)
    engines.COMPILED.load(con, [path])
    calls = {"n": 0}
    if where == "check":
        real_check = storage.check_part

        def failing(*a, **k):
            calls["n"] += 1
            if calls["n"] == 3:
                raise RuntimeError("the core broke")
            return real_check(*a, **k)

        monkeypatch.setattr(storage, "check_part", failing)
        error = RuntimeError
    else:
        real_insert = storage.insert_arrow

        def failing(c, table, data):
            if table == "hand_scores":
                calls["n"] += 1
                if calls["n"] == 2:
                    raise OSError("disk full")
            return real_insert(c, table, data)

        monkeypatch.setattr(storage, "insert_arrow", failing)
        error = OSError
    with pytest.raises(error):
        check_compiled(con, part_hands=20)
    assert calls["n"] >= 2
    assert derived_state(con) == MISSING
    for t in ("checked_tricks", "hand_scores", "violations", "games"):
        assert con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == 0, t
    monkeypatch.undo()
    check_compiled(con, part_hands=20)
    assert derived_state(con) == FRESH
    ref = connect(None)
    engines.REFERENCE.validate(ref, [path])
    for t in DERIVED:
        assert _rows(ref, t) == _rows(con, t), t


def test_validate_reads_the_database_when_the_stream_cannot_stand_for_it(tmp_path, monkeypatch):
    from spadework.analysis.engine import loader

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(loader, "CHUNK_BYTES", 20_000)
    monkeypatch.setattr("spadework.analysis.engine.storage.ROW_GROUP_ROWS", 30)
    recs = [r for g in iter_season(8, 6, 31, fault_rate=0.2) for r in g.records]
    # games interleaved: a game comes back after another began
    interleaved = tmp_path / "mixed.jsonl"
    write_season(recs[::2] + recs[1::2], interleaved)
    _validate_both([interleaved])
    assert not engines.STATS["streamed"]
    # a hand twice in the file, and a line only the Python parser reads
    dup = tmp_path / "dup.jsonl"
    write_season(recs + recs[3:4], dup)
    _validate_both([dup])
    assert not engines.STATS["streamed"]
    odd = tmp_path / "odd.jsonl"
    write_season(recs, odd)
    odd.write_text(odd.read_text().replace('"hand":2,', '"hand":2,"note":1,', 1))  # an unknown key: a warning
    _validate_both([odd])
    assert not engines.STATS["streamed"] and loader.STATS["python_lines"] == 1
    # a database that held hands before: the check covers them too
    fast = connect(None)
    engines.COMPILED.load(fast, [interleaved])
    s, c = engines.COMPILED.validate(fast, [dup])
    assert not engines.STATS["streamed"] and c.hands == fast.execute("SELECT count(*) FROM hands").fetchone()[0]


def test_a_hand_written_twice_takes_the_stream_off_before_its_game_is_checked(tmp_path, monkeypatch):
    """The loader settles a repeated hand at the end of the file; the stream must not check the
    game with both copies first.  Found by fuzzing: a game the reference checks whole (here its
    rules change part way) got its first hand's tricks twice and validate raised ValueError."""
    import orjson

    from spadework.analysis.engine import loader
    from spadework.parsers.jsonl import record_to_obj

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    a, b = ([record_to_obj(r) for r in g.records] for g in iter_season(8, 2, 3, rules="nyc"))
    later = {k: v for k, v in a[1].items() if k != "rules"}  # the same game under standard: RULES_MIXED
    path = tmp_path / "twice.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(x) for x in (a[0], a[0], later, b[0], b[1], b[1])) + b"\n")
    fast = _validate_both([path])
    assert not engines.STATS["streamed"]
    assert fast.execute("SELECT count(*) FROM load_errors").fetchone()[0] == 2
    assert fast.execute("SELECT count(*) FROM violations WHERE code = 'RULES_MIXED'").fetchone()[0] == 1


@pytest.mark.parametrize("seed", range(2))
def test_a_hand_written_twice_anywhere_in_a_streamed_file_is_settled_as_the_reference_does(tmp_path, monkeypatch, seed):
    """A streamed file whose stream stays valid is taken to hold no hand twice (the end-of-file
    query for repeated hands is skipped then): a copy of a hand placed anywhere (next to it, in the
    next block, after other games, at the end, in a second file) must take the stream off and be
    settled as the reference settles it."""
    import random

    import orjson

    from spadework.analysis.engine import loader
    from spadework.parsers.jsonl import record_to_obj

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(loader, "CHUNK_BYTES", 6_000)  # a few hands a block
    monkeypatch.setattr("spadework.analysis.engine.storage.ROW_GROUP_ROWS", 10)
    rng = random.Random(seed)
    objs = [record_to_obj(r) for g in iter_season(8, 5, 40 + seed) for r in g.records]
    lines = [orjson.dumps(o) for o in objs]
    for _ in range(1 + seed % 2):
        k = rng.randrange(len(lines))
        lines.insert(rng.randrange(k + 1, len(lines) + 1), lines[k])
    path = tmp_path / "twice.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    fast = _validate_both([path])
    assert not engines.STATS["streamed"]
    assert fast.execute("SELECT count(*) FROM load_errors").fetchone()[0] == 1 + seed % 2
    clean, other = tmp_path / "clean.jsonl", tmp_path / "other.jsonl"
    clean.write_bytes(b"\n".join(orjson.dumps(o) for o in objs) + b"\n")
    other.write_bytes(lines[rng.randrange(len(lines))] + b"\n")  # a hand of clean.jsonl again
    fast = _validate_both([clean, other])
    assert fast.execute("SELECT count(*) FROM load_errors").fetchone()[0] == 1


def test_games_with_numbers_beyond_32_bits_are_found_as_by_the_full_test():
    """``storage._big_games`` skips the per-value test when every value is inside the range; the
    games it names must be those the full test names: values at the limit, just past it (rounded
    or not), negative, NaN, in any game, for every array it looks at."""
    from types import SimpleNamespace

    from spadework.analysis.engine.storage import INT32_MAX, _big_games

    rng = np.random.default_rng(3)
    names = ("hs_contract", "hs_points", "hs_total", "hs_tricks", "hs_bags_hand", "hs_penalty", "hs_nil", "hs_bags")

    def full(p, o):
        big = np.zeros(p.n_hands, bool)
        for name in names:
            a = getattr(o, name)
            v = np.abs(np.rint(a)) if name in names[:3] else np.abs(a)
            big |= (v > INT32_MAX).reshape(p.n_hands, -1).any(axis=1)
        per_game = np.maximum.reduceat(big.astype(np.int8), p.game_start[:-1]).astype(bool)
        return per_game | (np.abs(np.rint(o.g_total)) > INT32_MAX).any(axis=1)

    odd = [INT32_MAX, INT32_MAX + 0.4, INT32_MAX + 0.6, INT32_MAX + 1, -INT32_MAX - 1, float("nan"), 1e18]
    for case in range(60):
        n, g = 40, 5
        p = SimpleNamespace(n_hands=n, n_games=g, game_start=np.array([0, 3, 10, 22, 30, n]))
        o = SimpleNamespace(**{k: rng.integers(-500, 500, (n, 2, 2)).astype(float) for k in names}, g_total=rng.integers(-500, 500, (g, 2)).astype(float))
        if case:
            arr = getattr(o, names[case % len(names)]) if case % 9 else o.g_total
            arr.reshape(-1)[rng.integers(arr.size)] = odd[case % len(odd)]
        assert _big_games(p, o).tolist() == full(p, o).tolist(), case


def test_huge_bids_and_hand_gaps_are_checked_and_stored_exactly(tmp_path, monkeypatch):
    """A bid as large as the tables hold is scored as recorded (RULES.md section 3): ten times it in
    points, beyond the INTEGER range; a gap of a hundred million hand numbers is one HAND_MISSING.
    Found by fuzzing: the first raised ArrowInvalid writing the scores, the second ran out of
    memory listing the missing hands."""
    import orjson

    from spadework.analysis.engine import loader
    from spadework.parsers.jsonl import record_to_obj

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    g = [record_to_obj(r) for r in next(iter_season(8, 1, 4)).records]
    big = dict(g[0], bids=[dict(b, bid=1_000_000_000) if k == 0 else b for k, b in enumerate(g[0]["bids"])])
    far = dict(g[1], hand=100_000_000)
    path = tmp_path / "huge.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(x) for x in (big, far)) + b"\n")
    fast = _validate_both([path])
    side = "NS" if g[0]["bids"][0]["seat"] in "NS" else "EW"
    points = fast.execute("SELECT points FROM hand_scores WHERE hand = 1 AND side = ?", [side]).fetchone()[0]
    assert points < -10_000_000_000 + 100
    codes = [r[0] for r in fast.execute("SELECT code FROM violations ORDER BY hand").fetchall()]
    assert "BID_INVALID" in codes and codes.count("HAND_MISSING") == 1


def test_validate_streams_a_folder_of_files_through_the_writer_thread(tmp_path, monkeypatch):
    """Every file of a validate is streamed and written by the writer thread, not only the first;
    a block holding a hand another file already loaded is written the careful way (withheld)."""
    import orjson

    from spadework.analysis.engine import loader
    from spadework.parsers.jsonl import record_to_obj

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(loader, "CHUNK_BYTES", 20_000)
    monkeypatch.setattr("spadework.analysis.engine.storage.ROW_GROUP_ROWS", 30)
    games = [[record_to_obj(r) for r in g.records] for g in iter_season(8, 6, 35, fault_rate=0.2)]
    for k in range(3):
        (tmp_path / f"part{k}.jsonl").write_bytes(b"".join(orjson.dumps(o) + b"\n" for g in games[2 * k : 2 * k + 2] for o in g))
    from spadework.analysis.engine.storage import RowGroupWriter

    writes = []
    real = RowGroupWriter.submit
    monkeypatch.setattr(RowGroupWriter, "submit", lambda self, w: (writes.append(len(w)), real(self, w))[1])
    _validate_both([tmp_path])
    assert engines.STATS["streamed"] and loader.STATS["chunks"] == len(writes) > 3
    (tmp_path / "part3.jsonl").write_bytes(orjson.dumps(games[0][0]) + b"\n")  # a hand of part0 again
    _validate_both([tmp_path])


def test_the_scanned_lines_pack_as_their_stored_rows(tmp_path):
    """validate's check packs the compiled reader's arrays directly: the same arrays as unpacking
    the rows they are stored as."""
    import pyarrow as pa

    from spadework.analysis.engine import loader
    from spadework.analysis.engine.storage import pack_table, scan_hands
    from test_loader_fast import _season_objs, edge_lines

    recs = []
    for k, rules in enumerate(("standard", "barmore", "nyc")):
        recs += [dataclasses.replace(r, game_id=f"{k}-{r.game_id}") for g in iter_season(8, 4, 3 + k, rules=rules, fault_rate=0.3) for r in g.records]
    recs[5] = dataclasses.replace(recs[5], deal=None)
    recs[7] = dataclasses.replace(recs[7], tricks=recs[7].tricks[:5], score=None, taken=(3, None, 2, None))
    path = tmp_path / "s.jsonl"
    write_season(recs, path)
    with open(path, "ab") as f:
        f.write(b"\n".join(edge_lines(_season_objs())) + b"\n")  # odd lines too (those it reads)
    (block,) = list(loader._blocks(path, 1 << 30))
    sc = loader._scan_block(block)
    table = pa.table(sc.columns).append_column("source_file", pa.array(["s"] * len(sc.fast)))
    a = pack_table(table)
    b = pack_table(table, hands=scan_hands(sc.scan, sc.fast))
    for f in dataclasses.fields(a.hands):
        assert np.array_equal(getattr(a.hands, f.name), getattr(b.hands, f.name)), f.name
    assert len(sc.fast) > len(recs)


def test_a_partition_checks_on_its_own_as_a_worker_would(tmp_path):
    """check_part needs no database: partitions of whole games checked apart (as Dask workers would,
    writing Parquet parts) give, together, the reference's rows and findings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spadework.analysis.engine.storage import check_part, insert_arrow, reset_derived

    recs = [r for g in iter_season(8, 10, 41, fault_rate=0.2) for r in g.records]
    ref, fast = _two_dbs(recs)
    s_ref = check_db(ref)
    found = []
    for k in range(3):
        part = fast.sql(f"SELECT * FROM hand_records WHERE hash(game_id) % 3 = {k}").to_arrow_table()
        res = check_part(part)
        for name, data in res.tables.items():
            pq.write_table(data, tmp_path / f"{name}-{k}.parquet")
        found += res.findings
    reset_derived(fast)
    for name in ("checked_tricks", "hand_scores", "violations", "games"):
        insert_arrow(fast, name, pa.concat_tables(pq.read_table(tmp_path / f"{name}-{k}.parquet") for k in range(3)))
    for t in DERIVED:
        assert _rows(ref, t) == _rows(fast, t), t
    assert sorted(f.to_row()["message"] for _, fs in found for f in fs) == sorted(f.message for f in s_ref.findings)


def test_a_streaming_validate_puts_the_thread_settings_back(tmp_path, monkeypatch):
    """validate's pipeline shares the cores between the reader's scan and DuckDB's inserts and numba's
    checks; the caller's settings are in force again afterwards."""
    import numba

    from spadework.analysis.engine import loader

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)  # the compiled reader even for a small file
    monkeypatch.setattr(engines.os, "cpu_count", lambda: 2)
    path = tmp_path / "season.jsonl"
    write_season([r for g in iter_season(4, 3, 5) for r in g.records], path)
    con = connect(None)
    con.execute("SET threads = 2")
    seen = []
    real = loader.load_fast

    def spy(*args, **kwargs):
        seen.append((con.execute("SELECT current_setting('threads')").fetchall()[0][0], numba.get_num_threads(),
                     kwargs.get("scan_threads")))
        return real(*args, **kwargs)

    monkeypatch.setattr(loader, "load_fast", spy)
    before = numba.get_num_threads()
    engines.COMPILED.validate(con, [path])
    assert seen == [(1, 1, 1)]  # 2 cores: one for the reader's scan, one for the inserts and checks
    assert con.execute("SELECT current_setting('threads')").fetchall()[0][0] == 2
    assert numba.get_num_threads() == before


TABLE_KEYS = {
    "hands": "game_id, hand",
    "bids": "game_id, hand, bid_order",
    "plays": "game_id, hand, trick, play_order",
    "recorded_scores": "game_id, hand, side",
    "tricks": "game_id, hand, trick",
    "hand_scores": "game_id, hand, side",
    "games": "game_id",
}
"""The keys TABLES.md gives the tables."""


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_every_table_keeps_its_key_under_a_renege_penalty(tmp_path, monkeypatch, engine):
    """TABLES.md's keys hold with ``renege_penalty_tricks``: hand_scores has one row per game, hand and
    side (the official score after the penalty, the as-played values beside it), and the view
    ``hand_scores_as_played`` gives the score as played in the same columns."""
    from spadework.analysis.engine import loader

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    recs = [r for g in iter_season(8, 10, 41, fault_rate=0.3) for r in g.records]
    path = tmp_path / "season.jsonl"
    write_season(recs, path)
    con = connect(None)
    _, c = engines.get_engine(engine).validate(con, [path], rules={"preset": "standard", "renege_penalty_tricks": 2})
    assert c.by_code["RENEGE"] >= 3
    for table, key in TABLE_KEYS.items():
        dup = con.execute(f"SELECT count(*) FROM (SELECT {key} FROM {table} GROUP BY ALL HAVING count(*) > 1)").fetchone()[0]
        assert dup == 0, table
    assert con.execute("SELECT count(*) FROM hand_scores").fetchone()[0] == 2 * len(recs)
    assert con.execute("SELECT DISTINCT scoring FROM hand_scores").fetchall() == [("after_penalty",)]
    moved = con.execute(
        "SELECT count(*) FROM hand_scores h JOIN hand_scores_as_played a USING (game_id, hand, side) "
        "WHERE a.tricks = h.as_played_tricks AND a.points = h.as_played_points AND a.tricks <> h.tricks"
    ).fetchone()[0]
    assert moved >= 3  # the reneges moved tricks, and the view reads the as-played values
    assert con.execute("SELECT count(*) FROM hand_scores_as_played").fetchone()[0] == 2 * len(recs)


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_half_bid_is_scored_as_recorded_and_the_row_says_so(tmp_path, monkeypatch, engine):
    """A bid of 4.5 is BID_INVALID and the hand is scored with it (RULES.md section 3): the side's
    contract_value is the sum as bid (e.g. 7.5), contract the nearest whole number, and the points
    agree with contract_value (10 a trick of it when made, plus the bags)."""
    from spadework.analysis.engine import loader

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)
    rng = random.Random(7)
    recs = []
    for k in range(30):
        try:
            rec, _ = simulate_hand(rng, get_ruleset("standard"), game_id=f"h{k}")
        except Impossible:
            continue
        bids = list(rec.bids)
        i = next(j for j, b in enumerate(bids) if not b.nil and b.value >= 1)
        bids[i] = replace(bids[i], value=bids[i].value + 0.5)
        recs.append(replace(rec, bids=tuple(bids), score=None))
    path = tmp_path / "half.jsonl"
    write_season(recs, path)
    con = connect(None)
    _, c = engines.get_engine(engine).validate(con, [path])
    assert c.by_code["BID_INVALID"] == len(recs)
    rows = con.execute(
        "SELECT contract, contract_value, tricks, made, bags_this_hand, nil_points, points FROM hand_scores "
        "WHERE contract_value <> floor(contract_value)"
    ).fetchall()
    assert len(rows) == len(recs)
    for contract, value, tricks, made, bags, nil_points, points in rows:
        assert contract == round(value) and value % 1 == 0.5
        assert made == (tricks >= value)
        want = round(10 * value) + bags if made else -round(10 * value)
        assert points - nil_points == want, (contract, value, tricks, bags, points)


@pytest.mark.parametrize("fmt", ["jsonl", "spn", "csv"])
@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_lines_ending_in_a_lone_carriage_return_read_as_any_other(tmp_path, monkeypatch, fmt, engine):
    """A log whose lines end in a lone CR (classic Mac OS; old Excel for Mac's CSV) loads the same rows
    as the same log with LF line ends, bad lines included, at the same line numbers (it was read in no
    format: one long line)."""
    from spadework.analysis.engine import loader

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)  # the compiled reader reads the JSON Lines
    recs = [r for g in iter_season(8, 3, 17, fault_rate=0.2) for r in g.records]
    lf = tmp_path / f"lf.{fmt}"
    write_season(recs, lf)
    text = lf.read_bytes()
    if fmt == "jsonl":
        lines = text.split(b"\n")
        lines[3] = b"{not json"
        text = b"\n".join(lines)
        lf.write_bytes(text)
    cr = tmp_path / "cr" / f"lf.{fmt}"  # the same name: source_file differs only by folder
    cr.parent.mkdir()
    cr.write_bytes(text.replace(b"\r\n", b"\n").replace(b"\n", b"\r"))
    eng = engines.get_engine(engine)
    a, b = connect(None), connect(None)
    monkeypatch.chdir(tmp_path)
    sa, _ = eng.validate(a, ["lf." + fmt])
    monkeypatch.chdir(tmp_path / "cr")
    sb, _ = eng.validate(b, ["lf." + fmt])
    assert sa.hands == sb.hands > 0 and sa.errors == sb.errors == (1 if fmt == "jsonl" else 0)
    for t in LOADED + DERIVED:
        assert _rows(a, t) == _rows(b, t), t


def test_with_numba_compiling_switched_off_auto_takes_the_reference(monkeypatch):
    """NUMBA_DISABLE_JIT (a debugging switch) leaves the compiled engine unable to run: ``auto``
    takes the reference whatever the size, and asking for the compiled engine is a clear error."""
    from spadework.analysis.engine import engines

    assert engines.get_engine("auto", size=engines.AUTO_COMPILED_BYTES) is engines.COMPILED
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    assert engines.get_engine("auto", size=engines.AUTO_COMPILED_BYTES) is engines.REFERENCE
    assert engines.get_engine("auto", hands=engines.AUTO_COMPILED_HANDS) is engines.REFERENCE
    assert engines.get_engine("replay") is engines.REFERENCE
    for name in ("compiled", "fast"):
        with pytest.raises(ValueError, match="NUMBA_DISABLE_JIT"):
            engines.get_engine(name)
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "0")
    assert engines.get_engine("fast") is engines.COMPILED


def test_the_benchmark_measures_the_memory_limit_users_get():
    """bench_validate's stages run under the compiled engine's default DuckDB cap, so its peak
    memory is the figure a user's `spadework validate` reaches."""
    import importlib.util
    from pathlib import Path

    from spadework.analysis.engine import engines

    path = Path(__file__).resolve().parent / "benchmarks" / "bench_validate.py"
    spec = importlib.util.spec_from_file_location("bench_validate_for_test", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.DEFAULT_MEMORY_LIMIT == engines.COMPILED_MEMORY_LIMIT
    assert engines.memory_bytes(engines.COMPILED_MEMORY_LIMIT) >= engines.MIN_MEMORY_LIMIT


@pytest.mark.parametrize(
    "rules, fallback",
    [
        ({"preset": "nyc", "targte": 300}, "nyc"),  # a typo in an option: the preset's deck still holds
        ({"preset": "barmore", "first_lead": "two_of_clubs"}, None),  # readable now (no 2C: nobody holds it)
        ({"preset": "whist"}, "standard"),
    ],
)
def test_a_game_whose_rules_cannot_be_read_is_checked_under_the_preset_they_name(rules, fallback):
    """A game with unreadable rules was checked under standard: an nyc game with a typo in one option
    got DEAL_INVALID on every hand for its jokers (found by an independent play-rules oracle).  Now
    it gets RULES_INVALID and is checked under the preset its rules name; both engines agree."""
    preset = rules["preset"] if rules["preset"] in ("nyc", "barmore") else "standard"
    game, _ = simulate_game(random.Random(7), get_ruleset(preset), max_hands=3)
    recs = [replace(r, rules=rules) for r in game]
    a, b = _two_dbs(recs)
    assert_same_check(a, b)
    codes = [c for (c,) in a.execute("SELECT code FROM violations").fetchall()]
    if fallback is None:
        assert codes == []
    else:
        [(msg,)] = a.execute("SELECT message FROM violations WHERE code = 'RULES_INVALID'").fetchall()
        assert msg.endswith(f"the game is checked under {fallback}") and codes == ["RULES_INVALID"]
