"""`spadework stats` and the coach's player table: the field leaves the player out, per kind of metric;
the season copy computed in batches equals the view; the terminal tables read at 80 columns; --json and
--csv (spreadsheet-safe)."""

from __future__ import annotations

import csv
import io
import json
import math

import polars as pl
import pytest
from rich.console import Console
from typer.testing import CliRunner

import metrics_fixture
from spadework.analysis import cli, coach, metrics
from spadework.analysis.present import csv_safe, write_csv


@pytest.fixture(scope="module")
def con():
    c = metrics_fixture.build()
    metrics.freeze(c)
    yield c
    c.close()


def direct_field(con, sql_where: str, value_sql: str, unit: str) -> tuple[int, float]:
    """n and the value of a metric computed straight from sw_player_hands over the field's units."""
    units = {
        "side": "SELECT DISTINCT game_id, hand, side, contract, made, points FROM sw_player_hands ph "
        f"WHERE NOT EXISTS (SELECT 1 FROM sw_player_hands me WHERE me.game_id = ph.game_id AND me.hand = ph.hand "
        f"AND me.side = ph.side AND me.player = 'bo')",
        "hand": "SELECT DISTINCT game_id, hand, spades_broken_trick, has_plays FROM sw_player_hands ph "
        "WHERE NOT EXISTS (SELECT 1 FROM sw_player_hands me WHERE me.game_id = ph.game_id AND me.hand = ph.hand "
        "AND me.player = 'bo')",
    }[unit]
    n, v = con.execute(f"SELECT count(*) FILTER (WHERE {sql_where}), {value_sql} FROM ({units})").fetchone()
    return n, v


def test_the_field_leaves_out_the_players_side_hands_and_hands(con):
    t = coach.player_tables(con)
    bo = {r["metric"]: r for r in t.filter(pl.col("player") == "bo").iter_rows(named=True)}
    # side-hands with a positive contract that bo's side did not play: G1 NS x4, G2 NS, G3 EW
    n, v = direct_field(con, "contract > 0 AND made IS NOT NULL",
                        "avg(CASE WHEN made THEN 1 ELSE 0 END) FILTER (WHERE contract > 0 AND made IS NOT NULL)", "side")  # fmt: skip
    assert (bo["contract_made"]["field_n"], bo["contract_made"]["field_value"]) == (n, pytest.approx(v))
    assert n == 6
    n, v = direct_field(con, "points IS NOT NULL", "avg(points) FILTER (WHERE points IS NOT NULL)", "side")
    assert (bo["points_per_hand"]["field_n"], bo["points_per_hand"]["field_value"]) == (n, pytest.approx(v))
    # bo sat in every hand: no hand is left for the field of a per-hand metric
    assert bo["spades_broken_trick"]["field_n"] == 0 and bo["spades_broken_trick"]["field_value"] is None
    assert bo["hands"]["field_n"] == 0 and bo["hands"]["gap"] is None  # no gap for a count
    # before issue 12 every player had the same field for a side metric (all 12 side-hands with a contract)
    made = t.filter(pl.col("metric") == "contract_made")
    assert made["field_n"].to_list() == [6, 6, 6, 6] and made["field_value"].n_unique() > 1


def test_the_field_of_a_per_player_metric_is_the_other_players(con):
    # per player-hand metrics: the whole less the player equals the filter exclude_player
    t = coach.player_table(con, "cy")
    direct = metrics.run_all(con, {"exclude_player": "cy"}, by="all")
    per_row = [m for m in metrics.SCALAR_METRICS if " ph " in metrics.REGISTRY[m].sql + " "
               and "FROM ph" in metrics.REGISTRY[m].sql]  # fmt: skip
    assert {"bid_bias", "exact_bid", "nil_rate", "findings_per_100"} <= set(per_row)
    for m in per_row:
        mine = t.filter(pl.col("metric") == m).row(0, named=True)
        d = direct.filter(pl.col("metric") == m).row(0, named=True)
        assert mine["field_n"] == d["n"], m
        for col in ("value", "se", "low", "high"):
            a, b = mine[f"field_{col}"], d[col]
            assert (a is None and b is None) or a == pytest.approx(b, abs=1e-9), (m, col, a, b)


def test_a_season_copy_in_batches_equals_the_view(con):
    whole = metrics._frame(con, "SELECT * FROM sw_player_hands ORDER BY game_id, hand, seat")
    metrics.materialize(con, "batched_copy", batch_hands=1)  # one game per batch
    assert len(metrics._game_batches(con, 1)) == 3
    batched = metrics._frame(con, "SELECT * FROM batched_copy ORDER BY game_id, hand, seat")
    assert batched.equals(whole) and whole.height == 24
    with pytest.raises(KeyError, match="unknown view"):
        metrics.scoped_sql("nope", "TRUE")


def lines(renderable, width: int = 80) -> list[str]:
    console = Console(record=True, width=width)
    console.print(renderable)
    return console.export_text().splitlines()


def test_player_table_reads_at_80_columns(con):
    text = lines(coach.rich_table(coach.player_table(con, "ana"), "ana"))
    assert max(len(line) for line in text) <= 80
    body = "\n".join(text)
    assert not any(line.startswith("Hands ") for line in text)  # a gap of hands means nothing
    assert "Nil bids" in body and "Blind nil bids" in body  # separate metrics
    # ana bid no plain nil: listed as no data, not as an empty row
    assert "No data for:" in body and "Nils made" in body.split("No data for:")[1]
    bias = next(line for line in text if line.startswith("Bid bias"))
    # bids 4/4, 4/3, 3/4, 4/4: bias 0 with sd 0.82 over 4 bids
    assert bias.split()[2:5] == ["0.00", "−0.80–0.80", "4"]
    over = lines(coach.rich_overview(coach.overview(con)))
    assert max(len(line) for line in over) <= 80 and any(line.split()[:2] == ["bo", "6"] for line in over)


def test_a_name_that_wraps_in_the_overview_stays_in_its_row(con):
    """A name wider than the Player column (wide characters count two cells) goes on over more lines:
    a rule then separates the rows, so its second line cannot read as another player."""
    df = coach.overview(con)
    assert df["player"].to_list() == ["ana", "bo", "cy", "di"]
    plain = lines(coach.rich_overview(df))
    renamed = df.with_columns(pl.col("player").replace("bo", "名前 with space"))
    text = lines(coach.rich_overview(renamed))
    assert len(text) > len(plain) and max(len(line) for line in text) <= 80
    at = next(i for i, line in enumerate(text) if line.strip().startswith("名前"))
    assert text[at + 1].strip() == "space" and text[at + 2].strip() == "" and text[at - 1].strip() == ""
    body = plain[plain.index(next(x for x in plain if x.strip().startswith("ana"))) : -3]
    assert "" not in [x.strip() for x in body[:4]]  # short names: rows line after line


def test_stats_heading(con):
    assert coach.stats_heading(con, "ana") == (
        "ana: 6 hands in 3 games, 2 partners; the field: the other 3 players (0 hands without ana)"
    )


def test_csv_safe():
    assert csv_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert [csv_safe(x) for x in ("+1+2", "@x", "\tx", "\rx", "-x")] == ["'+1+2", "'@x", "'\tx", "'\rx", "'-x"]
    assert [csv_safe(x) for x in ("-40", "+3", "ana", -40, 1.5, None)] == ["-40", "+3", "ana", -40, 1.5, None]
    buf = io.StringIO()
    write_csv([{"player": "=cmd|' /C calc'!A0", "n": 3, "pair": ["a", "b"]}], buf)
    assert list(csv.reader(io.StringIO(buf.getvalue()))) == [
        ["player", "n", "pair"], ["'=cmd|' /C calc'!A0", "3", '["a","b"]']]  # fmt: skip


@pytest.fixture(scope="module")
def db_file(tmp_path_factory):
    import duckdb

    path = tmp_path_factory.mktemp("stats") / "fixture.duckdb"
    c = duckdb.connect(str(path))
    metrics_fixture.build(c)
    c.execute("UPDATE hands SET player_n = '=1+2' WHERE player_n = 'ana'")
    c.close()
    return path


def test_stats_cli_json_csv_and_text(db_file):
    runner = CliRunner()
    r = runner.invoke(cli.app, ["stats", "--db", str(db_file), "--player", "bo", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["player"] == "bo" and data["heading"].startswith("bo: 6 hands in 3 games")
    bias = next(m for m in data["metrics"] if m["metric"] == "bid_bias")
    assert (bias["player_n"], bias["player_value"]) == (6, 0.5) and not math.isnan(bias["z"])
    r = runner.invoke(cli.app, ["stats", "--db", str(db_file), "--csv"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert "'=1+2" in {row["player"] for row in rows}  # the formula-like name is defused
    r = runner.invoke(cli.app, ["stats", "--db", str(db_file), "--player", "bo"], terminal_width=80)
    assert r.exit_code == 0 and "bo against the field" in r.stdout and "Bid bias" in r.stdout
    # off a terminal too, a table's notes wrap at its width (they were one line of 181 characters)
    r = runner.invoke(cli.app, ["stats", "--db", str(db_file), "--player", "bo"])
    assert r.exit_code == 0 and "Rates in per cent. gap = player - field." in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 100
    r = runner.invoke(cli.app, ["stats", "--db", str(db_file), "--player", "zed"])
    assert r.exit_code == 2 and "unknown player 'zed'" in r.output
    r = runner.invoke(cli.app, ["stats", "--db", str(db_file), "--json", "--csv"])
    assert r.exit_code == 2


def test_stats_opens_the_db_it_is_given_and_no_other(db_file, tmp_path, monkeypatch):
    """A relative ``--db`` not in the working folder is an error, not the same name found in a
    folder above (a typo gave another database's numbers with exit 0); notebooks' ``open_database``
    still looks upwards by default."""
    runner = CliRunner()
    sub = db_file.parent / "sub"
    sub.mkdir(exist_ok=True)
    monkeypatch.chdir(sub)
    r = runner.invoke(cli.app, ["stats", "--db", db_file.name])
    assert r.exit_code == 2 and f"no database at {db_file.name}" in r.output
    r = runner.invoke(cli.app, ["stats", "--db", f"../{db_file.name}", "--csv"])
    assert r.exit_code == 0, r.output
    con = coach.open_database(db_file.name, freeze=False)  # the library's lookup, for notebooks
    con.close()


def test_pick_player_names_the_default_or_says_there_is_none(db_file):
    """The coaching notebook's player: the given one, else the one with the most hands; a database
    with no hands is a sentence, not ``unknown player None`` three cells later."""
    import duckdb

    con = duckdb.connect(str(db_file), read_only=True)
    assert coach.pick_player(con, "bo") == "bo"
    assert coach.pick_player(con) == coach.default_player(con)
    with pytest.raises(ValueError, match="no player has a hand in this database under .*'period': "):
        coach.pick_player(con, None, {"event": "Club", "period": ("2999-01-01", None)})
    # a misspelt filter value is named with the values there are, not an empty answer (an analysis audit)
    with pytest.raises(ValueError, match="no hand has event 'nowhere'; event values: Club, League"):
        coach.pick_player(con, None, {"event": "nowhere"})
    # a misspelt name fails here, at the cell that names it, not cells later (found by an API audit)
    with pytest.raises(ValueError, match="unknown player 'Bo'; players: .*bo"):
        coach.pick_player(con, "Bo")
    con.close()


def test_a_table_in_a_notebook_is_shown_once(monkeypatch):
    """In Jupyter, rich sends what a Console prints to the notebook as an output of its own: every
    table of the notebooks showed twice, as text and as HTML (found by an API audit).  Its text is
    now made off the notebook's display."""
    import rich.console
    import rich.jupyter

    from spadework.analysis.present import Table

    shown = []
    monkeypatch.setattr(rich.console, "_is_jupyter", lambda: True)
    monkeypatch.setattr(rich.jupyter, "display", lambda *a, **k: shown.append(a))
    text = str(Table([{"player": "ana", "n": 3}], [("player", "Player", "text"), ("n", "Hands", "int")], title="t"))
    assert "ana" in text and shown == []


def test_stats_on_a_database_with_no_checked_hand_says_so(tmp_path):
    """It printed an empty Players table and nothing else, where standings says "No checked games"
    (found by a report audit)."""
    from spadework.analysis.engine.engines import REFERENCE
    from spadework.parsers.db import connect

    (tmp_path / "bad.jsonl").write_text("{not json\n")
    con = connect(tmp_path / "x.duckdb")
    REFERENCE.validate(con, [tmp_path / "bad.jsonl"])
    con.close()
    r = CliRunner().invoke(cli.app, ["stats", "--db", str(tmp_path / "x.duckdb")])
    assert r.exit_code == 0, r.output
    assert "No player has a checked hand yet" in r.stdout
