"""Decision metrics for coaches (issue 14 item 4): card costs, bids against the hand's value, nil
soundness and the leak finder against the winning players.

Card costs come from a small ``card_costs`` fixture built here on the hand-computed game G2 of
tests/metrics_fixture.py (until ``spadework analyse`` fills the real table), and from costs planted
per player on the sample season's plays.
"""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

import metrics_fixture
from spadework.analysis import charts, decisions, metrics, stats
from spadework.analysis.decisions import CARD_COSTS_STANDIN

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DB = ROOT / "data" / "sample" / "season.duckdb"

# G2 (seats N ana, E cy, S di, W bo): three costly cards
COSTS = {(4, "W"): 1, (10, "N"): 2, (12, "S"): 1}  # 3S ruffing partner-less trick 4, the renege TH, 7S


def _card_costs(con) -> None:
    """Write the fixture's card_costs into the database itself (qualified: a temporary stand-in may exist)."""
    table = f"{con.execute('SELECT current_database()').fetchall()[0][0]}.main.card_costs"
    con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({CARD_COSTS_STANDIN})")
    rows = con.execute("SELECT game_id, hand, trick, play_order, seat, card FROM plays ORDER BY trick, play_order").fetchall()
    con.executemany(
        f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)",
        [
            (g, h, t, o, s, c, 5, 5 - COSTS.get((t, s), 0), COSTS.get((t, s), 0), "AS KS" if (t, s) in COSTS else c)
            for g, h, t, o, s, c in rows
        ],
    )


@pytest.fixture()
def con():
    c = metrics_fixture.build()
    _card_costs(c)
    metrics.freeze(c)
    yield c
    c.close()


def test_play_accuracy_and_tricks_lost(con):
    acc = metrics.run(con, "play_accuracy").select("player", "n", "k", "value", "low", "high")
    rows = {r["player"]: r for r in acc.iter_rows(named=True)}
    # G2 is the only hand with card play: 13 cards each; ana, bo and di each played one costly card
    assert {p: (r["n"], r["k"]) for p, r in rows.items()} == {
        "ana": (13, 12), "bo": (13, 12), "cy": (13, 13), "di": (13, 12),
    }  # fmt: skip
    assert (rows["ana"]["low"], rows["ana"]["high"]) == pytest.approx(stats.wilson_interval(12, 13))
    lost = metrics.run(con, "tricks_lost_per_100").select("player", "n", "total", "value", "se")
    by = {r["player"]: r for r in lost.iter_rows(named=True)}
    assert by["ana"]["total"] == 2 and by["ana"]["value"] == pytest.approx(200 / 13)
    assert by["bo"]["value"] == pytest.approx(100 / 13) and by["cy"]["value"] == 0
    # se of the mean cost (sd of twelve 0s and one 2, over sqrt 13), times 100
    sd = math.sqrt((12 * (2 / 13) ** 2 + (2 - 2 / 13) ** 2) / 12)
    assert by["ana"]["se"] == pytest.approx(100 * sd / math.sqrt(13))
    # filters and groupings work as for every metric
    side = metrics.run(con, "play_accuracy", by="side").select("side", "n", "k").sort("side").rows()
    assert side == [("EW", 26, 25), ("NS", 26, 24)]
    assert metrics.run(con, "play_accuracy", {"event": "League"}, by="all")["n"].to_list() == [0]


def test_costliest_cards(con):
    df = decisions.costliest_cards(con)
    assert df.select("game_id", "hand", "trick", "seat", "player", "card", "cost").rows() == [
        ("G2", 1, 10, "N", "ana", "TH", 2), ("G2", 1, 4, "W", "bo", "3S", 1), ("G2", 1, 12, "S", "di", "7S", 1),
    ]  # fmt: skip
    assert df["best_cards"][0] == "AS KS" and df["tricks_best"][0] == 5 and df["tricks_played"][0] == 3
    assert decisions.costliest_cards(con, "bo")["card"].to_list() == ["3S"]
    assert decisions.costliest_cards(con, limit=1).height == 1
    assert decisions.costliest_cards(con, "cy").is_empty()
    assert decisions.has_card_costs(con)


def test_without_card_costs_the_metrics_count_nothing(tmp_path):
    path = tmp_path / "f.duckdb"
    c = metrics_fixture.build(duckdb.connect(str(path)))
    c.execute("DROP TABLE card_costs")  # a database made before `spadework analyse` existed
    c.close()
    ro = duckdb.connect(str(path), read_only=True)
    assert metrics.run(ro, "play_accuracy", by="all")["n"].to_list() == [0]
    assert not decisions.has_card_costs(ro) and decisions.costliest_cards(ro).is_empty()
    # hand values were computed into temporary tables for the bid metrics: G2's three numeric bids
    assert metrics.run(ro, "bid_vs_hand", by="all")["n"].to_list() == [3]
    ro.close()
    # the real table, once written, replaces the stand-in of a later session
    rw = duckdb.connect(str(path))
    _card_costs(rw)
    assert metrics.run(rw, "play_accuracy", by="all")["n"].to_list() == [52]
    rw.close()


def test_stand_in_is_dropped_when_the_real_table_appears():
    c = metrics_fixture.build()
    c.execute("DROP TABLE card_costs")  # a database made before `spadework analyse` existed
    decisions.ensure_tables(c, ("card_costs",))
    assert metrics.run(c, "play_accuracy", by="all")["n"].to_list() == [0]
    _card_costs(c)  # the real table, beside the temporary stand-in
    assert metrics.run(c, "play_accuracy", by="all")[["n", "k"]].rows() == [(52, 49)]


# --- leak arithmetic ------------------------------------------------------------------------------


def _row(kind, value, n, k=None, se=None):
    if kind == "rate":
        low, high = stats.wilson_interval(k, n)
        return {"value": value, "n": n, "k": k, "low": low, "high": high, "se": stats.rate_se(k, n)}
    return {"value": value, "n": n, "se": se, "low": value - 1.96 * se, "high": value + 1.96 * se}


def test_leak_size_is_gap_times_opportunities():
    # a rate where lower is better: 30 sets in 100 hands against the winners' 40 in 200
    r = decisions._leak_row(metrics.REGISTRY["set_rate"], _row("rate", 0.3, 100, 30), _row("rate", 0.2, 200, 40))
    assert r["gap"] == pytest.approx(0.1) and r["leak"] == pytest.approx(10.0)  # 10 extra sets
    # Newcombe's hybrid score interval (method 10) for 0.3 - 0.2
    l1, u1 = stats.wilson_interval(30, 100)
    l2, u2 = stats.wilson_interval(40, 200)
    low = 0.1 - math.sqrt((0.3 - l1) ** 2 + (u2 - 0.2) ** 2)
    high = 0.1 + math.sqrt((u1 - 0.3) ** 2 + (0.2 - l2) ** 2)
    assert (r["gap_low"], r["gap_high"]) == pytest.approx((low, high))
    assert (r["leak_low"], r["leak_high"]) == pytest.approx((100 * low, 100 * high))
    assert r["significant"] == (low > 0) and r["leak_unit"] == "hands"
    # higher is better: the same gap the other way is a strength (negative leak)
    s = decisions._leak_row(metrics.REGISTRY["exact_bid"], _row("rate", 0.3, 100, 30), _row("rate", 0.2, 200, 40))
    assert s["leak"] == pytest.approx(-10.0) and not s["significant"]
    # a per-100 mean is unscaled first: 3 tricks lost per 100 cards more, over 1000 cards = 30 tricks
    t = decisions._leak_row(
        metrics.REGISTRY["tricks_lost_per_100"], _row("mean", 8.0, 1000, se=0.5), _row("mean", 5.0, 3000, se=0.3)
    )
    assert t["leak"] == pytest.approx(30.0) and t["leak_unit"] == "tricks"
    half = stats.Z95 * math.sqrt(0.5**2 + 0.3**2)
    assert (t["leak_low"], t["leak_high"]) == pytest.approx(((3 - half) * 10, (3 + half) * 10), rel=1e-3)
    # no better direction: the distance either way, the interval folded at 0
    b = decisions._leak_row(metrics.REGISTRY["bid_vs_hand"], _row("mean", -0.2, 50, se=0.2), _row("mean", 0.0, 500, se=0.05))
    assert b["leak"] == pytest.approx(10.0) and b["direction"] == "too low"
    assert b["leak_low"] == 0.0 and b["leak_high"] == pytest.approx((0.2 + stats.Z95 * math.hypot(0.2, 0.05)) * 50)


# --- the sample season ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample():
    if not SAMPLE_DB.exists():
        pytest.skip("sample database not built")
    c = duckdb.connect(str(SAMPLE_DB), read_only=True)
    metrics.freeze(c)
    yield c
    c.close()


def test_winners_of_the_sample(sample):
    w = decisions.winners(sample)
    assert w.filter(pl.col("winner"))["player"].to_list() == ["ana", "ed", "kim"]  # 14, 14 (fewer points), 12 wins
    assert w["player"][-1] == "bo" and w["wins"][-1] == 3
    assert w.filter(pl.col("winner")).height == 3  # a quarter of 12 players


def test_leaks_find_the_planted_habits(sample):
    bo = decisions.leaks(sample, "bo")
    assert bo["metric"][0] == "bid_vs_hand" and bo["direction"][0] == "too high" and bo["significant"][0]
    assert bo.filter(pl.col("metric") == "set_rate")["significant"].to_list() == [True]
    assert bo["winners"][0] == "ana, ed, kim"
    cy = decisions.leaks(sample, "cy")
    assert set(cy["metric"].head(2).to_list()) == {"bid_bias", "bid_vs_hand"}
    assert cy.filter(pl.col("metric") == "bid_vs_hand")["direction"].to_list() == ["too low"]
    di = decisions.leaks(sample, "di").filter(pl.col("significant"))["metric"].to_list()
    assert "unsound_nils" in di and "nil_rate" in di
    gus = decisions.leaks(sample, "gus").filter(pl.col("metric") == "trump_partner_winner").row(0, named=True)
    assert gus["significant"] and gus["leak"] > 30  # about 49 plays trumped over partner's winning trick
    # a winner is compared with the next best players, never with themself
    ana = decisions.leaks(sample, "ana")
    assert ana["winners"][0] == "ed, kim, ivy"
    with pytest.raises(ValueError, match="unknown player"):
        decisions.leaks(sample, "nobody")


def test_nil_soundness_of_the_nil_lover(sample):
    un = metrics.run(sample, "unsound_nils").select("player", "n", "k", "value")
    top = un.sort("value", descending=True, nulls_last=True).row(0, named=True)
    assert top["player"] == "di" and top["n"] == 31 and top["k"] == 17
    nils = decisions.nil_judgements(sample, "di")
    assert nils.height == 46 and nils.filter(~pl.col("blind") & ~pl.col("sound")).height == 17
    assert nils["nil_chance"].is_sorted()
    bids = decisions.bid_judgements(sample, "bo")
    # bo sat in 317 hands, two of them the planted invalid deals (no hand value)
    assert bids["bid_error"][0] == bids["bid_error"].max() and bids.height == 315


def test_planted_card_costs_make_the_careless_player_the_worst(tmp_path):
    # plant costs on the sample's real plays (in a copy): one card in five costs ed a trick, one in thirty
    # the others
    if not SAMPLE_DB.exists():
        pytest.skip("sample database not built")
    import shutil

    path = tmp_path / "planted.duckdb"
    shutil.copy(SAMPLE_DB, path)
    c = duckdb.connect(str(path))
    # the table first: prepare() on a database without one makes an empty temporary stand-in that
    # would shadow it
    c.execute(f"CREATE TABLE IF NOT EXISTS main.card_costs ({CARD_COSTS_STANDIN})")
    metrics.prepare(c)
    c.execute(
        "INSERT INTO main.card_costs SELECT p.game_id, p.hand, p.trick, p.play_order, p.seat, NULL, p.card, 6, 6 - c, c,"
        " '' FROM ("
        " SELECT p.*, CASE WHEN hash(p.game_id, p.hand, p.trick, p.play_order) % 1000 <"
        "   CASE WHEN sh.player = 'ed' THEN 200 ELSE 33 END THEN 1 + (p.trick = 13)::INT ELSE 0 END AS c"
        " FROM plays p JOIN sw_seat_hands sh USING (game_id, hand, seat)) p"
    )
    metrics.freeze(c)
    acc = metrics.run(c, "play_accuracy").sort("value")
    assert acc["player"][0] == "ed" and acc["value"][0] == pytest.approx(0.8, abs=0.02)
    leaks = decisions.leaks(c, "ed")
    assert leaks["metric"].head(2).to_list() in (
        ["tricks_lost_per_100", "play_accuracy"], ["play_accuracy", "tricks_lost_per_100"],
    )  # fmt: skip
    assert leaks["significant"][0] and leaks["leak"][0] > 500  # ~0.17 x ~4,600 cards
    worst = decisions.costliest_cards(c, "ed", limit=3)
    assert worst["cost"].to_list() == [2, 2, 2] and worst["trick"].to_list() == [13, 13, 13]
    c.close()


def test_stats_player_prints_the_leaks(monkeypatch):
    if not SAMPLE_DB.exists():
        pytest.skip("sample database not built")
    from spadework.analysis.cli import app

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "160")
    res = CliRunner().invoke(app, ["stats", "--player", "bo"])
    assert res.exit_code == 0, res.output
    assert "Leaks of bo against the winning players" in res.output
    assert "Bid against the hand's value" in res.output and "winners: ana, ed, kim" in res.output
    assert "Costliest cards" not in res.output  # no card_costs in the sample database yet


def test_card_annotations_and_charts(con):
    notes = decisions.card_annotations(con, "G2", 1)
    assert len(notes) == 52
    # trick 10: E leads KD, S 8D, W 9D, N plays TH (play_order 4) at a cost of 2
    assert notes[(10, 4)] == {
        "seat": "N", "card": "TH", "cost": 2, "best_cards": "AS KS", "tricks_best": 5, "tricks_played": 3,
    }  # fmt: skip
    assert decisions.card_annotations(con, "G1", 1) == {}
    spec = decisions.leak_chart(
        decisions.leaks(con, "bo", winning=["ana"], names=("play_accuracy", "tricks_lost_per_100"), min_n=1),
        highlight="bo",
    ).to_dict()
    values = spec["layer"][0]["data"]["values"] if "data" in spec["layer"][0] else spec["data"]["values"]
    assert {v["metric"] for v in values} == {"play_accuracy", "tricks_lost_per_100"}
    assert spec["title"] == "Leaks of bo against the winning players (95% interval)"
    assert spec["layer"][0]["mark"]["color"] == charts.HIGHLIGHT


def test_winners_and_leaks_on_a_small_database(con):
    # only G1 is finished (NS ana & cy won): nobody has 5 games, so every player with one is eligible
    w = decisions.winners(con)
    assert w.filter(pl.col("winner")).height == 1 and w["player"][0] in ("ana", "cy") and w["win_rate"][0] == 1.0
    assert set(w.filter(pl.col("win_rate") == 0)["player"]) == {"bo", "di"}
    bo = decisions.leaks(con, "bo", min_n=1)
    assert bo.height > 0 and bo["winners"][0] == w["player"][0]
    # the League event has no finished game: no one to compare with, an empty frame (not an error)
    none = decisions.leaks(con, "bo", {"event": "League"}, min_n=1)
    assert none.is_empty() and none.columns == list(decisions.LEAK_COLUMNS)
    assert "no other player has a finished game" in decisions.rich_sections(con, "bo", {"event": "League"})[0]
    # winners to compare with, but too few chances at every metric: said so
    few = decisions.rich_sections(con, "bo", {"position": 1})[0]
    assert few == f"No leaks against the winning players (ana): bo has fewer than {decisions.LEAK_MIN_N} chances at each compared metric, too few to judge."


def test_all_leaks_equal_each_players_own(sample):
    from polars.testing import assert_frame_equal

    every = decisions.all_leaks(sample)
    assert set(every["player"]) == set(metrics.players(sample))
    for p in ("bo", "ana", "di"):  # a player, a winner (compared with the next best), the nil lover
        assert_frame_equal(every.filter(pl.col("player") == p).drop("player"), decisions.leaks(sample, p),
                           check_exact=False, rel_tol=1e-9)  # fmt: skip


def test_player_page_shows_the_judged_decisions():
    from spadework.analysis import report

    c = metrics_fixture.build(evil_name=True)
    _card_costs(c)
    ctx = report.player_context(c)
    page = report.player_page_html(ctx, "bo")
    for heading in ("Leaks against the winning players", "Bids and nils against the hand&#x27;s value",
                    "Card play against double dummy"):  # fmt: skip
        assert f"<h2>{heading}" in page
    # bo's costliest card: 3S in trick 4 of G2, cost 1, best AS KS; the replay marks it under the card
    assert 'class="costliest"' in page and "−1</td>" in page
    assert '<span class="dd cost" title="3S cost 1: 5 tricks with best play, 4 after this card">−1</span>' in page
    assert page.count('class="dd cost" title=') == 3  # the hand's three costly cards, each marked in the replay
    assert "Double dummy." in page
    # the player named like a script tag is text everywhere, also in the new sections
    evil = report.player_page_html(ctx, "<script>alert(1)</script>")
    assert "<script>alert(1)</script>" not in evil and "&lt;script&gt;alert(1)&lt;/script&gt;" in evil
    # without card costs the card section is left out
    c2 = metrics_fixture.build()
    page2 = report.player_page_html(report.player_context(c2), "bo")
    assert "Card play against double dummy" not in page2 and "Leaks against the winning players" in page2


def test_tables_and_replay_for_notebooks(con):
    t = decisions.winner_leak_table(
        decisions.leaks(con, "bo", winning=["ana"], names=("play_accuracy", "bid_bias"), min_n=1), "bo"
    )
    assert [label for _, label, _ in t.columns] == ["", "metric", "bo", "n", "winners", "leak", "95% interval",
                                                     "counted in"]  # fmt: skip
    acc = next(r for r in t.rows if r["metric"] == "play_accuracy")
    assert (acc["player_text"], acc["player_n"], acc["winners_text"]) == ("92.3%", 13, "92.3%")  # 12 of 13, both
    assert "Against the winning players (ana)" in t.note
    nils = decisions.nil_table(con, "di")  # di's nil in G2 hand 1 (the only hand with a deal): made
    assert [(r["game_id"], r["hand"], r["made"]) for r in nils.rows] == [("G2", 1, True)]
    bids = decisions.bid_table(con, "bo")
    assert [r["what"] for r in bids.rows] in (["overbid"], ["underbid"]) and bids.rows[0]["bid"] == 4
    cards = decisions.costliest_table(con, "ana")
    assert [(r["trick"], r["card"], r["cost"]) for r in cards.rows] == [(10, "TH", 2)]
    html = decisions.replay_html(con, "G2", 1)
    assert "Double dummy." in html and html.count('class="dd cost" title=') == 3 and "<style>" in html
