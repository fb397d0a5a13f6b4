"""Every metric on the hand-computed fixture of tests/metrics_fixture.py (exact expected numbers).

The per-player expectations are worked out from the fixture's table of hands; the comments give
the hands each number comes from.  G1 = the four score-sheet hands, G2 = the hand with card play,
G3 = the Barmore hand.
"""

from __future__ import annotations

import math
import os

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import metrics_fixture
from spadework.analysis import coach, decisions, metrics, report, stats
from spadework.analysis.metrics import Filters

SAMPLE_DB = os.environ.get(
    "SPADEWORK_SAMPLE_DB", os.path.join(os.path.dirname(__file__), "..", "data", "sample", "season.duckdb")
)


@pytest.fixture(scope="module")
def con():
    c = metrics_fixture.build()
    metrics.freeze(c)  # the fixture never changes here; tests that change data build their own
    yield c
    c.close()


def by_player(df: pl.DataFrame, key: str = "player") -> dict:
    return {r[key]: r for r in df.iter_rows(named=True)}


def check_rates(df, expected: dict[str, tuple[int, int]], key="player"):
    got = by_player(df, key)
    assert set(got) == set(expected), (set(got), set(expected))
    for name, (k, n) in expected.items():
        r = got[name]
        assert (r["k"], r["n"]) == (k, n), (name, r)
        if n:
            assert r["value"] == pytest.approx(k / n)
            low, high = stats.wilson_interval(k, n)
            assert (r["low"], r["high"]) == (pytest.approx(low), pytest.approx(high))
            assert r["low"] <= r["value"] <= r["high"]
        else:
            assert r["value"] is None and (r["low"], r["high"]) == (0.0, 1.0)


def check_means(df, expected: dict[str, list[float]], key="player", scale=1.0, least=None):
    got = by_player(df, key)
    assert set(got) == set(expected), (set(got), set(expected))
    for name, values in expected.items():
        r = got[name]
        n, mean, se = stats.mean_se(values)
        assert r["n"] == n, (name, r)
        if n == 0:
            assert r["value"] is None
            continue
        assert r["value"] == pytest.approx(mean * scale), (name, r)
        assert r["total"] == pytest.approx(sum(values)), (name, r)
        if se is None:
            assert r["se"] is None
        else:
            assert r["se"] == pytest.approx(se * scale), (name, r)
            low = mean - stats.Z95 * se
            assert r["low"] == pytest.approx((low if least is None else max(low, least)) * scale)


# --- statistics -------------------------------------------------------------------------------


def test_poisson_score_interval_known_values():
    assert stats.poisson_score_interval(0, 100) == (0.0, pytest.approx(stats.Z95**2 / 100))
    low, high = stats.poisson_score_interval(10, 1)  # exact (Garwood) 4.80-18.39
    assert (low, high) == (pytest.approx(5.431, abs=1e-3), pytest.approx(18.409, abs=1e-3))
    with pytest.raises(ValueError):
        stats.poisson_score_interval(-1, 5)
    with pytest.raises(ValueError):
        stats.poisson_score_interval(1, 0)
    # the frame form widens a normal interval to cover it, and leaves n = 0 alone
    df = pl.DataFrame({"n": [6, 0, 400], "total": [0.0, 0.0, 40.0], "low": [0.0, None, 0.07], "high": [0.0, None, 0.13]})
    out = stats.widen_for_events(df).rows()
    assert out[0][2:] == (0.0, pytest.approx(stats.Z95**2 / 6)) and out[1][2:] == (None, None)
    assert out[2][2:] == (0.07, pytest.approx(stats.poisson_score_interval(40, 400)[1]))


def test_wilson_interval_known_values():
    assert stats.wilson_interval(0, 0) == (0.0, 1.0)
    low, high = stats.wilson_interval(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    low, high = stats.wilson_interval(0, 10)
    assert low == 0.0 and round(high, 4) == 0.2775
    low, high = stats.wilson_interval(10, 10)
    assert round(low, 4) == 0.7225 and high == 1.0
    with pytest.raises(ValueError):
        stats.wilson_interval(3, 2)
    with pytest.raises(ValueError):
        stats.wilson_interval(-1, 2)


def test_frame_helpers_match_scalar_ones():
    df = stats.with_wilson(pl.DataFrame({"k": [0, 3, 7, 0], "n": [5, 9, 7, 0]}))
    for r in df.iter_rows(named=True):
        assert (r["low"], r["high"]) == tuple(pytest.approx(x) for x in stats.wilson_interval(r["k"], r["n"]))
        assert r["se"] == (None if r["n"] == 0 else pytest.approx(stats.rate_se(r["k"], r["n"])))
    n, mean, se = stats.mean_se([1, 2, 3, 6])
    assert (n, mean) == (4, 3.0) and se == pytest.approx(math.sqrt(14 / 3) / 2)
    assert stats.mean_se([]) == (0, None, None) and stats.mean_se([4]) == (1, 4.0, None)
    assert stats.standard_error(2.0, 4) == 1.0 and stats.standard_error(2.0, 1) is None
    m = stats.with_mean_se(pl.DataFrame({"mean": [2.0, 5.0], "sd": [1.0, None], "n": [4, 1]}))
    assert m["se"].to_list() == [0.5, None] and m["low"][0] == pytest.approx(2 - stats.Z95 * 0.5)


# --- every metric, per player ----------------------------------------------------------------

# numeric bids (nil, blind nil and G3's blind seven left out) and the tricks taken with them:
# ana G1 4/4 4/3 3/4, G2 4/4; bo G1 4/5 3/5 3/4 4/3, G2 4/5, G3 4/3; cy G1 3/3 5/5 4/3, G2 3/4;
# di G1 4/3 3/2 3/4 3/3, G3 3/2.
BIDS = {
    "ana": [(4, 4), (4, 3), (3, 4), (4, 4)],
    "bo": [(4, 5), (3, 5), (3, 4), (4, 3), (4, 5), (4, 3)],
    "cy": [(3, 3), (5, 5), (4, 3), (3, 4)],
    "di": [(4, 3), (3, 2), (3, 4), (3, 3), (3, 2)],
}


def test_hands(con):
    df = metrics.run(con, "hands")
    assert {p: r["n"] for p, r in by_player(df).items()} == {"ana": 6, "bo": 6, "cy": 6, "di": 6}
    by_table = by_player(metrics.run(con, "hands", by="table"), "table_name")
    assert {t: r["n"] for t, r in by_table.items()} == {"T1": 5, "T2": 1}
    assert metrics.run(con, "hands", by="all")["n"].to_list() == [6]


def test_average_bid(con):
    check_means(metrics.run(con, "avg_bid"), {p: [b for b, _ in v] for p, v in BIDS.items()}, least=0)
    assert by_player(metrics.run(con, "avg_bid"))["bo"]["value"] == pytest.approx(22 / 6)


def test_bid_bias(con):
    df = metrics.run(con, "bid_bias")
    check_means(df, {p: [t - b for b, t in v] for p, v in BIDS.items()})
    got = {p: r["value"] for p, r in by_player(df).items()}
    assert got == {"ana": 0.0, "bo": 0.5, "cy": 0.0, "di": pytest.approx(-0.4)}
    assert by_player(df)["ana"]["se"] == pytest.approx(math.sqrt(2 / 3) / 2)


def test_exact_bid(con):
    check_rates(metrics.run(con, "exact_bid"), {"ana": (2, 4), "bo": (0, 6), "cy": (2, 4), "di": (1, 5)})


def test_bid_calibration_pooled_and_per_player(con):
    df = metrics.run(con, "bid_calibration", by="all")
    got = {r["bid_value"]: r for r in df.iter_rows(named=True)}
    assert set(got) == {3.0, 4.0, 5.0}
    # bid 3: ana 4; bo 5, 4; cy 3, 4; di 2, 4, 3, 2.  bid 4: ana 4, 3, 4; bo 5, 3, 5, 3; cy 3; di 3.  bid 5: cy 5
    assert (got[3.0]["n"], got[3.0]["value"]) == (9, pytest.approx(31 / 9))
    assert (got[4.0]["n"], got[4.0]["value"]) == (9, pytest.approx(33 / 9))
    assert (got[5.0]["n"], got[5.0]["value"], got[5.0]["se"]) == (1, 5.0, None)
    per = metrics.run(con, "bid_calibration")
    bo = {r["bid_value"]: (r["n"], r["value"]) for r in per.filter(pl.col("player") == "bo").iter_rows(named=True)}
    assert bo == {3.0: (2, 4.5), 4.0: (4, 4.0)}


def test_bid_error_distribution(con):
    df = metrics.run(con, "bid_error", by="all")
    assert {r["error"]: (r["k"], r["n"]) for r in df.iter_rows(named=True)} == {
        -1.0: (7, 19), 0.0: (5, 19), 1.0: (6, 19), 2.0: (1, 19)
    }
    di = metrics.run(con, "bid_error", {"player": "di"})
    assert {r["error"]: r["k"] for r in di.iter_rows(named=True)} == {-1.0: 3, 0.0: 1, 1.0: 1}


def test_side_bid_bias(con):
    # side tricks - contract.  NS G1: +1 -1 0 0, G2: 0, G3: -2.  EW G1: 0 +1 +2 -1, G2: +2, G3: +1
    check_means(
        metrics.run(con, "side_bid_bias"),
        {"ana": [1, -1, 0, 0, 0, 1], "cy": [1, -1, 0, 0, 2, 1], "bo": [0, 1, 2, -1, 2, -2], "di": [0, 1, 2, -1, 0, -2]},
    )
    check_means(metrics.run(con, "side_bid_bias", by="side"), {"NS": [1, -1, 0, 0, 0, -2], "EW": [0, 1, 2, -1, 2, 1]},
                key="side")  # fmt: skip


def test_contract_made_and_set_rate(con):
    check_rates(metrics.run(con, "contract_made"), {"ana": (5, 6), "bo": (4, 6), "cy": (5, 6), "di": (4, 6)})
    check_rates(metrics.run(con, "set_rate"), {"ana": (1, 6), "bo": (2, 6), "cy": (1, 6), "di": (2, 6)})
    # per side (NS/EW): each side-hand once, not once per partner
    check_rates(metrics.run(con, "contract_made", by="side"), {"NS": (4, 6), "EW": (5, 6)}, key="side")
    check_rates(
        metrics.run(con, "contract_made", by="partnership"),
        {"ana & cy": (4, 5), "bo & di": (3, 5), "ana & di": (1, 1), "bo & cy": (1, 1)},
        key="partnership",
    )


def test_set_depth(con):
    # G1 hand 2 NS short by 1; G1 hand 4 EW short by 1; G3 NS short by 2
    # a set is at least one trick short: the interval of bo [1, 2] (1.5 -/+ 0.98) starts at 1
    check_means(metrics.run(con, "set_depth"), {"ana": [1], "cy": [1], "bo": [1, 2], "di": [1, 2]}, least=1)
    assert by_player(metrics.run(con, "set_depth"))["bo"]["low"] == 1.0


def test_bags_per_hand_and_penalties(con):
    check_means(
        metrics.run(con, "bags_per_hand"),
        {"ana": [1, 0, 0, 0, 0, 1], "cy": [1, 0, 0, 0, 2, 1], "bo": [0, 1, 2, 0, 2, 0], "di": [0, 1, 2, 0, 0, 0]},
        least=0,
    )
    # EW crossed 10 bags in G1 hand 3 (one -100 penalty); three games each
    check_means(metrics.run(con, "bag_penalties_per_game"),
                {"ana": [0, 0, 0], "bo": [1, 0, 0], "cy": [0, 0, 0], "di": [1, 0, 0]}, least=0)  # fmt: skip


def test_bag_share(con):
    # hands where the side took bags (G3's blind seven left out): G1h1 NS: ana 0, cy 1 (failed nil);
    # G1h2 EW: bo 2, di 0; G1h3 EW: bo 1, di 1; G2 EW: cy 1, bo 1
    check_rates(metrics.run(con, "bag_share"), {"ana": (0, 1), "bo": (4, 6), "cy": (2, 3), "di": (1, 4)})


def test_nil_metrics(con):
    # nil allowed in G1 and G2 (5 hands each); nils: cy G1h1 (failed), ana G1h3 blind (made), di G2 (made);
    # plain nil and blind nil are separate metrics (issue 12): ana's blind nil is not a plain nil
    check_rates(metrics.run(con, "nil_rate"), {"ana": (0, 5), "bo": (0, 5), "cy": (1, 5), "di": (1, 5)})
    check_rates(metrics.run(con, "nil_success"), {"ana": (0, 0), "bo": (0, 0), "cy": (0, 1), "di": (1, 1)})
    # blind nil allowed to NS in G1 hands 2 and 3 (behind by 149 and 280)
    check_rates(metrics.run(con, "blind_nil_rate"), {"ana": (1, 2), "bo": (0, 0), "cy": (0, 2), "di": (0, 0)})
    check_rates(metrics.run(con, "blind_nil_success"), {"ana": (1, 1), "bo": (0, 0), "cy": (0, 0), "di": (0, 0)})
    # partner's nil: ana covers cy (G1h1, failed) and di (G2, made); cy covers ana's blind nil (made)
    check_rates(metrics.run(con, "nil_cover"), {"ana": (1, 2), "bo": (0, 0), "cy": (1, 1), "di": (0, 0)})
    # opponents' nils: bo faces cy G1h1 (set), ana G1h3 (made), di G2 (made); di faces cy (set), ana (made);
    # cy (in G2) faces di (made)
    check_rates(metrics.run(con, "nil_defence"), {"ana": (0, 0), "bo": (1, 3), "cy": (0, 1), "di": (1, 2)})


def test_points_and_wins(con):
    check_means(
        metrics.run(con, "points_per_hand"),
        {
            "ana": [-59, -70, 250, 70, 140, 141],
            "cy": [-59, -70, 250, 70, 72, 141],
            "bo": [80, 61, -38, -70, 72, -70],
            "di": [80, 61, -38, -70, 140, -70],
        },
    )
    # only G1 is finished (NS won)
    check_rates(metrics.run(con, "win_rate"), {"ana": (1, 1), "bo": (0, 1), "cy": (1, 1), "di": (0, 1)})
    check_rates(metrics.run(con, "win_rate", by="side"), {"NS": (1, 1), "EW": (0, 1)}, key="side")


def test_card_play_metrics(con):
    # void with a choice: T4 E ruffs, S discards, W ruffs; T5-T7 E discards thrice; T11 S and W discard.
    # (T10 N is a renege: it held TD, so not void; T12 everybody holds only spades: no choice)
    check_rates(metrics.run(con, "ruff_when_void"), {"ana": (0, 0), "bo": (1, 2), "cy": (1, 4), "di": (0, 2)})
    # partner winning: T4 W over E's 2S (trumps), T5-T7 E with W's ace/king/queen winning, T11 W with E's QD
    check_rates(metrics.run(con, "trump_partner_winner"),
                {"ana": (0, 0), "bo": (1, 2), "cy": (0, 3), "di": (0, 0)})  # fmt: skip
    # EW made 7 after T10: T11 (E), T12 (N), T13 (W); NS made 4 after T12: T13 (W); di bid nil
    check_rates(metrics.run(con, "overtricks_after_safe"),
                {"ana": (0, 1), "bo": (1, 3), "cy": (1, 3), "di": (0, 0)})  # fmt: skip


def test_lead_profile(con):
    df = metrics.run(con, "lead_profile")
    got = {(r["player"], r["suit"], r["rank_class"]): (r["k"], r["n"]) for r in df.iter_rows(named=True)}
    assert got == {
        ("ana", "C", "high"): (3, 5), ("ana", "C", "middle"): (1, 5), ("ana", "S", "middle"): (1, 5),
        ("bo", "H", "high"): (3, 4), ("bo", "S", "low"): (1, 4),
        ("cy", "D", "high"): (3, 4), ("cy", "D", "middle"): (1, 4),
    }  # fmt: skip


def test_spades_broken(con):
    df = metrics.run(con, "spades_broken_trick", by="all")
    assert (df["n"][0], df["value"][0]) == (1, 4.0)
    check_rates(metrics.run(con, "breaks_spades"), {"ana": (0, 1), "bo": (0, 1), "cy": (1, 1), "di": (0, 1)})


def test_findings_rates(con):
    check_means(
        metrics.run(con, "findings_per_100"),
        {"ana": [1, 0, 0, 0, 0, 0], "bo": [0, 0, 0, 1, 0, 0], "cy": [0] * 6, "di": [0] * 6},
        scale=100.0,
        least=0,
    )
    got = by_player(metrics.run(con, "findings_per_100"))
    assert got["ana"]["low"] == 0.0  # not -16
    # no finding in 6 hands is not "0 to 0": the Poisson score interval's top, 3.84 / 6 per hand
    assert (got["cy"]["value"], got["cy"]["low"]) == (0.0, 0.0)
    assert got["cy"]["high"] == pytest.approx(100 * stats.Z95**2 / 6)
    # one in 6: the wider of the normal interval (top 49.3) and the Poisson one (top 94.4)
    k, z2 = 1.0, stats.Z95**2
    assert got["ana"]["high"] == pytest.approx(100 * (k + z2 / 2 + stats.Z95 * math.sqrt(k + z2 / 4)) / 6)
    df = metrics.run(con, "hand_findings_per_100", by="table")
    check_means(df, {"T1": [0, 1, 0, 1, 0], "T2": [1]}, key="table_name", scale=100.0, least=0)
    grid = metrics.findings_grid(con)
    assert grid.sort("table_name", "round").rows() == [("T1", "1", 4, 2, 50.0), ("T1", "3", 1, 0, 0.0),
                                                      ("T2", "2", 1, 1, 100.0)]  # fmt: skip


# --- the state before a hand, positions, and where tricks taken come from --------------------


def test_state_before_each_hand(con):
    metrics.prepare(con)
    rows = con.execute(
        "SELECT hand, side, score_before, opp_score_before, margin, situation, bags_before, blind_nil_allowed, position"
        " FROM sw_player_hands WHERE game_id = 'G1' AND seat IN ('N', 'E') ORDER BY hand, side DESC"
    ).fetchall()
    assert rows == [
        (1, "NS", 20, 30, -10, "close", 2, False, 4),
        (1, "EW", 30, 20, 10, "close", 8, False, 1),
        (2, "NS", -39, 110, -149, "behind", 3, True, 3),
        (2, "EW", 110, -39, 149, "ahead", 8, False, 4),
        (3, "NS", -109, 171, -280, "behind", 3, True, 2),
        (3, "EW", 171, -109, 280, "ahead", 9, False, 3),
        (4, "NS", 141, 133, 8, "close", 3, False, 1),
        (4, "EW", 133, 141, -8, "close", 1, False, 2),
    ]


def test_tricks_taken_sources():
    c = metrics_fixture.build()
    metrics.prepare(c)
    q = "SELECT seat, taken FROM sw_seat_hands WHERE game_id = 'G2' ORDER BY seat"
    expected = [("E", 4), ("N", 4), ("S", 0), ("W", 5)]
    assert c.execute(q).fetchall() == expected
    # the checker's tricks table wins over a (wrong) recorded count
    c.execute("UPDATE hands SET taken_n = 13, taken_e = 0, taken_s = 0, taken_w = 0 WHERE game_id = 'G2'")
    assert c.execute(q).fetchall() == expected
    # no tricks rows: the 13 tricks replayed from the plays win too
    c.execute("DELETE FROM tricks")
    assert c.execute(q).fetchall() == expected
    # a claimed hand (3 tricks played, then the count): the recorded counts, as the scorer takes them
    c.execute("DELETE FROM plays WHERE game_id = 'G2' AND trick > 3")
    assert c.execute(q).fetchall() == [("E", 0), ("N", 13), ("S", 0), ("W", 0)]
    # no count recorded either: the tricks played (RULES.md section 5 item 6)
    c.execute("UPDATE hands SET taken_n = NULL, taken_e = NULL, taken_s = NULL, taken_w = NULL WHERE game_id = 'G2'")
    played = dict(c.execute(
        "SELECT winner, count(*) FROM sw_trick_results WHERE game_id = 'G2' GROUP BY winner").fetchall())
    assert sum(played.values()) == 3
    assert c.execute(q).fetchall() == [(s, played.get(s, 0)) for s in "ENSW"]


# --- filters and groupings ---------------------------------------------------------------------


def bias(con, filters, by="player"):
    return {p: (r["n"], r["value"]) for p, r in by_player(metrics.run(con, "bid_bias", filters, by)).items()}


def test_filter_player_and_partner(con):
    assert bias(con, {"player": "ana"}) == {"ana": (4, 0.0)}
    assert bias(con, {"player": ["ana", "bo"]}) == {"ana": (4, 0.0), "bo": (6, 0.5)}
    # ana with cy across the table: G1 (bids 4, 4, 3) and G3 (blind seven, left out)
    assert bias(con, Filters(player="ana", partner="cy")) == {"ana": (3, 0.0)}
    assert set(bias(con, {"exclude_player": "ana"})) == {"bo", "cy", "di"}


def test_filter_event_period_ruleset_table(con):
    league = {"ana": (0, None), "bo": (1, -1.0), "cy": (0, None), "di": (1, -1.0)}
    assert bias(con, {"event": "League"}) == league
    assert bias(con, {"ruleset": "barmore"}) == league
    assert bias(con, {"game_id": "G3"}) == league
    assert bias(con, {"period": ("2024-04-01", None)}) == {"ana": (1, 0.0), "bo": (2, 0.0), "cy": (1, 1.0),
                                                           "di": (1, -1.0)}  # fmt: skip
    assert bias(con, {"period": (None, "2024-03-31")})["di"] == (4, -0.25)
    assert bias(con, {"ruleset": "standard"})["di"] == (4, -0.25)  # G1's JSON rules name the standard preset
    assert bias(con, {"table": "T2"}) == {"ana": (1, 0.0), "bo": (1, 1.0), "cy": (1, 1.0), "di": (0, None)}


def test_filter_position(con):
    # position 1 (left of the dealer): G1 h1 bo, h2 cy, h3 di, h4 ana; G2 ana; G3 ana (blind seven)
    assert bias(con, {"position": 1}) == {"ana": (2, 0.5), "bo": (1, 1.0), "cy": (1, 0.0), "di": (1, 1.0)}
    with pytest.raises(ValueError, match="1..4"):
        metrics.run(con, "bid_bias", {"position": 5})


def test_filter_score_situation(con):
    assert bias(con, {"situation": "behind"}) == {"ana": (1, -1.0), "cy": (2, 0.0)}
    assert bias(con, {"situation": "ahead"}) == {"bo": (2, 1.5), "di": (2, 0.0)}
    close = bias(con, {"situation": "close"})
    assert close["ana"] == (3, pytest.approx(1 / 3)) and close["bo"] == (4, 0.0)
    with pytest.raises(ValueError, match="behind, close or ahead"):
        metrics.run(con, "bid_bias", {"situation": "losing"})


def test_filter_bags_entering(con):
    assert bias(con, {"bags": (8, None)}) == {"bo": (3, pytest.approx(4 / 3)), "di": (3, pytest.approx(-1 / 3))}
    assert bias(con, {"bags": 3}) == {"ana": (2, 0.0), "cy": (3, pytest.approx(-1 / 3))}
    assert bias(con, {"bags": (None, 0)}) == {"ana": (1, 0.0), "bo": (2, 0.0), "cy": (1, 1.0), "di": (1, -1.0)}


def test_group_by_several_keys(con):
    df = metrics.run(con, "bid_bias", by=["player", "situation"])
    assert df.columns[:2] == ["player", "situation"]
    got = {(r["player"], r["situation"]): r["n"] for r in df.iter_rows(named=True)}
    assert got[("bo", "ahead")] == 2 and got[("ana", "behind")] == 1


def test_bad_names_are_reported(con):
    with pytest.raises(KeyError, match="known: hands"):
        metrics.run(con, "no_such_metric")
    with pytest.raises(ValueError, match="unknown filter"):
        metrics.run(con, "bid_bias", {"colour": "red"})
    with pytest.raises(ValueError, match="cannot group by"):
        metrics.run(con, "bid_bias", by="shoe_size")


def test_sql_is_readable_and_registry_documented(con):
    sql, params = metrics.metric_sql("exact_bid", {"player": "ana"})
    assert "numeric_bid" in sql and params == ["ana"]
    d = metrics.describe()
    assert d.height == len(metrics.REGISTRY) and d["description"].str.len_chars().min() > 20
    assert set(metrics.SCALAR_METRICS) == {m for m, v in metrics.REGISTRY.items() if not v.extra_keys}


def test_every_frame_has_the_same_columns(con):
    with metrics.snapshot(con):
        for name, m in metrics.REGISTRY.items():
            df = metrics.run(con, name)
            assert df.columns == ["player", *m.extra_keys, *metrics.OUTPUT_COLUMNS], name


def test_snapshot_gives_the_same_numbers():
    con = metrics_fixture.build()
    assert metrics.CACHE_TABLE not in metrics.existing_relations(con)
    live = pl.concat([metrics.run(con, name) for name in ("bid_bias", "nil_defence", "ruff_when_void", "win_rate")])
    with metrics.snapshot(con):
        assert metrics.CACHE_TABLE in metrics.existing_relations(con)
        with metrics.snapshot(con):  # nested: reuses the outer copy
            pass
        assert metrics.CACHE_TABLE in metrics.existing_relations(con)
        cached = pl.concat([metrics.run(con, n) for n in ("bid_bias", "nil_defence", "ruff_when_void", "win_rate")])
    assert metrics.CACHE_TABLE not in metrics.existing_relations(con)
    assert_frame_equal(live, cached, check_exact=False, rel_tol=1e-9)
    metrics.freeze(con)
    assert metrics.CACHE_TABLE in metrics.existing_relations(con)
    metrics.thaw(con)
    assert metrics.CACHE_TABLE not in metrics.existing_relations(con)
    assert metrics.run_all(con).height == 4 * len(metrics.SCALAR_METRICS)


def test_rule_facts():
    f = metrics.rule_facts('{"preset": "standard", "target": 200}')
    assert (f.ruleset, f.deck, f.nil_allowed, f.blind_nil, f.behind_by) == ("standard", "standard", True, "behind", 100)
    b = metrics.rule_facts("barmore")
    assert (b.deck, b.nil_allowed, b.blind_nil) == ("barmore", False, "never")
    assert metrics.rule_facts({"preset": "nyc", "blind_nil": "always", "bag_penalty": 50}).bag_penalty == 50
    assert metrics.rule_facts('{"blind_nil": {"behind_by": 200}}').behind_by == 200
    assert metrics.rule_facts("{not json").ruleset == "standard"
    assert metrics.rule_facts(None).ruleset == "standard"


def test_rank_classes():
    from spadework.parsers.cards import JOKER_DECK, NYC_DECK, STANDARD_DECK

    assert [metrics.rank_class(c, STANDARD_DECK) for c in ("AS", "JD", "8C", "7H", "2S")] == [
        "high", "middle", "middle", "low", "low"]  # fmt: skip
    assert metrics.rank_class("2D", NYC_DECK) == "high" and metrics.rank_class("2S", JOKER_DECK) == "high"
    assert metrics.rank_class("BJ", JOKER_DECK) == "high"


# --- named frames --------------------------------------------------------------------------------


def test_game_bags(con):
    df = metrics.game_bags(con, "G1")
    ew = df.filter(pl.col("side") == "EW").sort("hand")
    assert ew["cumulative_bags"].to_list() == [8, 9, 11, 11]
    assert ew["bags"].to_list() == [8, 9, 1, 1] and ew["bag_penalty"].to_list() == [0, 0, -100, 0]
    assert df.filter(pl.col("side") == "NS")["players"][0] == "ana & cy"
    assert metrics.game_bags(con).height == 12


def test_findings_and_mismatches(con):
    f = metrics.findings(con)
    assert f.height == 3 and sorted(f["code"].to_list()) == ["BID_OUT_OF_TURN", "RENEGE", "SCORE_MISMATCH"]
    renege = f.filter(pl.col("code") == "RENEGE").row(0, named=True)
    assert (renege["player"], renege["table_name"], renege["card"]) == ("ana", "T2", "TH")
    assert metrics.findings(con, {"player": "bo"})["code"].to_list() == ["BID_OUT_OF_TURN"]
    assert metrics.findings(con, {"table": "T2"}).height == 1
    mm = metrics.score_mismatches(con)
    assert mm.rows() == [("G1", 2, "EW", "SCORE_MISMATCH", "total", "175", "171",
                          "EW total: recorded 175, expected 171", "T1", "1")]  # fmt: skip


def test_summary_and_players(con):
    assert metrics.summary(con) == {
        "games": 3, "hands": 6, "players": 4, "hands_with_play": 1, "findings": 3, "score_mismatches": 1,
        "load_errors": 0,
    }  # fmt: skip
    assert metrics.players(con) == ["ana", "bo", "cy", "di"]


def test_read_only_database_without_derived_tables(tmp_path):
    path = tmp_path / "loaded_only.duckdb"
    c = metrics_fixture.build(duckdb.connect(str(path)))
    for t in ("tricks", "violations", "hand_scores", "games"):
        c.execute(f"DROP TABLE {t}")
    c.close()
    ro = duckdb.connect(str(path), read_only=True)
    # no checker yet: a metric would count no findings and no made contracts, so none answers (issue 11)
    from spadework.parsers.state import NotChecked

    for name in ("contract_made", "bid_bias", "findings_per_100"):
        with pytest.raises(NotChecked, match=r"has not been checked.*run `spadework check --db .*loaded_only\.duckdb` first"):
            metrics.run(ro, name)
    ro.close()


# --- the player table (coach) -------------------------------------------------------------------


def test_player_table_against_the_field(con):
    t = coach.player_table(con, "bo")
    assert t.columns == list(coach.TABLE_COLUMNS)
    assert t["metric"].to_list() == list(metrics.SCALAR_METRICS)
    row = t.filter(pl.col("metric") == "bid_bias").row(0, named=True)
    # field = ana, cy, di: 0 -1 1 0 | 0 0 -1 1 | -1 -1 1 0 -1 -> -2 / 13
    assert (row["player_n"], row["player_value"]) == (6, 0.5)
    assert (row["field_n"], row["field_value"]) == (13, pytest.approx(-2 / 13))
    assert row["gap"] == pytest.approx(0.5 + 2 / 13)
    mine = [1, 2, 1, -1, 1, -1]
    field = [0, -1, 1, 0, 0, 0, -1, 1, -1, -1, 1, 0, -1]
    ss = sum((x - 0.5) ** 2 for x in mine) + sum((x + 2 / 13) ** 2 for x in field)
    pooled_sd = math.sqrt(ss / (6 + 13 - 2))
    assert row["z"] == pytest.approx((0.5 + 2 / 13) / (pooled_sd * math.sqrt(1 / 6 + 1 / 13)))
    exact = t.filter(pl.col("metric") == "exact_bid").row(0, named=True)
    pooled = 5 / 19
    assert (exact["player_k"], exact["field_k"], exact["field_n"]) == (0, 5, 13)
    assert exact["z"] == pytest.approx((0 - 5 / 13) / math.sqrt(pooled * (1 - pooled) * (1 / 6 + 1 / 13)))
    with pytest.raises(ValueError, match="unknown player 'zed'"):
        coach.player_table(con, "zed")


def test_no_verdict_rests_on_fewer_than_five_observations(con):
    # one made nil against a field that makes 10 of 100: the pooled z passes 2, yet a field player
    # would do the same one time in ten
    z = coach._z("rate", 1.0, None, 1, 1, 0.1, None, 100, 10)
    assert z == pytest.approx(0.9 / math.sqrt((11 / 101) * (90 / 101) * (1 + 1 / 100))) and z > coach.LEAK_Z
    assert coach._verdict(z, "higher", 1) == "" and coach._verdict(z, "higher", coach.VERDICT_MIN_N - 1) == ""
    assert coach._verdict(z, "higher", coach.VERDICT_MIN_N) == "strength"
    assert coach._verdict(z, "lower", coach.VERDICT_MIN_N) == "leak" and coach._verdict(-z, None, 9) == "lower"
    assert coach.VERDICT_MIN_N == decisions.LEAK_MIN_N == 5
    # on the fixture: every small-sample row with a large z is left without a verdict
    t = pl.concat([coach.player_table(con, p) for p in ("ana", "bo", "cy", "di")])
    small = t.filter((pl.col("player_n") < coach.VERDICT_MIN_N) & (pl.col("z").abs() >= coach.LEAK_Z))
    assert small.height > 0 and set(small["verdict"]) == {""}
    big = t.filter((pl.col("player_n") >= coach.VERDICT_MIN_N) & (pl.col("z").abs() >= coach.LEAK_Z))
    assert "" not in set(big["verdict"])


def test_leaks_are_ranked_by_gap(con):
    lk = coach.leaks(con, "bo", min_n=2)
    z = [abs(v) for v in lk["z"].to_list()]
    assert z == sorted(z, reverse=True) and len(z) > 3
    assert "hands" not in lk["metric"].to_list()
    assert all(n >= 2 for n in lk["player_n"].to_list())


def test_rich_table_and_formatting(con):
    from rich.console import Console

    assert coach.format_value("rate", 0.4321, n=120) == "43.2% (n=120)"
    assert coach.format_value("mean", 0.42, 0.11, 50) == "0.42 ± 0.11 (n=50)"
    assert coach.format_value("mean", None) == "–"
    evil = metrics_fixture.build(evil_name=True)
    name = "<script>alert(1)</script>"
    console = Console(record=True, width=160)
    console.print(coach.rich_table(coach.player_table(evil, name), name))
    text = console.export_text()
    assert name in text and "Bid bias" in text and "Findings per 100 hands" in text


def test_overview(con):
    from rich.console import Console

    df = coach.overview(con)
    assert df["player"].to_list() == ["ana", "bo", "cy", "di"]  # all six hands: by name
    assert df.columns[:9] == ["player", "hands", "hands_n", "hands_low", "hands_high", "avg_bid", "avg_bid_n", "avg_bid_low", "avg_bid_high"]
    bo = df.filter(pl.col("player") == "bo").row(0, named=True)
    assert (bo["bid_bias"], bo["bid_bias_n"], bo["exact_bid"], bo["win_rate_n"]) == (0.5, 6, 0.0, 1)
    # every rate and mean carries its 95% interval (Wilson for 0 exact bids of 6: 0 to 3.84 / 9.84)
    assert (bo["exact_bid_low"], bo["exact_bid_high"]) == (0.0, pytest.approx(1.96**2 / (6 + 1.96**2), abs=1e-3))
    assert bo["bid_bias_low"] < 0.5 < bo["bid_bias_high"] and bo["hands_low"] is None
    console = Console(record=True, width=200)
    console.print(coach.rich_overview(df))
    text = console.export_text()
    assert "Players" in text and "bias" in text
    assert "+0.50" in text  # bo's bid bias (the counts are in --json/--csv)


# --- the project's sample logs, loaded and checked by the real loader and checker ------------------


def test_on_the_checked_sample_logs():
    checker = pytest.importorskip("spadework.analysis.engine.checker")
    from spadework.parsers import db

    root = os.path.join(os.path.dirname(__file__), "..", "data")
    c = db.connect()
    db.load_files(c, [os.path.join(root, f) for f in ("club_night.jsonl", "club_night.spn", "scoresheet.csv")])
    checker.check_db(c)
    with metrics.snapshot(c):
        # ned reneged once (cn-0314-t4 hand 2) in his three hands
        f = by_player(metrics.run(c, "findings_per_100"))
        assert f["ned"]["total"] == 1 and f["ned"]["n"] == 3 and f["ned"]["value"] == pytest.approx(100 / 3)
        assert sum(r["total"] for r in f.values()) == 1
        # the score sheet's finished game: rosa and tia (NS) beat sam and uli
        wins = by_player(metrics.run(c, "win_rate"))
        assert {p: (r["k"], r["n"]) for p, r in wins.items() if r["n"]} == {
            "rosa": (1, 1), "tia": (1, 1), "sam": (0, 1), "uli": (0, 1)}  # fmt: skip
        # W (uli) bid a blind nil when EW were 280 behind, and made it
        bn = by_player(metrics.run(c, "blind_nil_success"))
        assert (bn["uli"]["k"], bn["uli"]["n"]) == (1, 1)
        # the sandbagging penalties: EW of cn-0314-t2 (fay, hal) and EW of sheet-0321-t1 (sam, uli)
        pen = by_player(metrics.run(c, "bag_penalties_per_game"))
        assert {p for p, r in pen.items() if r["total"]} == {"fay", "hal", "sam", "uli"}
        mm = metrics.score_mismatches(c)
        assert mm.select("game_id", "hand", "side", "field").rows() == [("cn-0314-t4", 2, "EW", "total")]
    r = report.hand_replay(c, "cn-0314-t4", 2)
    html = report.render_hand_replay(r)
    assert 'title="3S: RENEGE">⚠3♠</span>' in html and not r.deal_inferred


# --- the sample season (planted personalities), once the lead has made it -----------------------


@pytest.fixture(scope="module")
def sample():
    if not os.path.exists(SAMPLE_DB):
        pytest.skip("data/sample/season.duckdb not built yet (the lead makes it)")
    c = coach.open_database(SAMPLE_DB)  # read-only, frozen: every metric below is fast
    yield c
    c.close()


def test_sample_metrics_run(sample):
    df = metrics.run_all(sample, by="player")
    assert df.height > 0 and df.filter(pl.col("metric") == "hands")["n"].sum() > 0


def planted(name: str):
    club = pytest.importorskip("spadework.analysis.sim.personality")
    return {p.name: p.personality for p in club.default_club()}[name]


def values(con, metric: str, min_n: int = 30) -> dict[str, dict]:
    return {p: r for p, r in by_player(metrics.run(con, metric)).items() if r["n"] >= min_n}


def test_sample_overbidder_and_underbidder(sample):
    # bid_bias = tricks taken - bid: the overbidder (bo, planted +1.3 tricks on his bids) takes fewer
    # than he bids, the underbidder (cy, -1.2) more. Measured against the control player (ana, who
    # bids like the bots' average: about 0.4 under what she takes), at least half the planted size,
    # and clearly (the 95% interval on the right side of zero)
    bias = values(sample, "bid_bias")
    bo, cy, ana = bias["bo"], bias["cy"], bias["ana"]["value"]
    assert bo["value"] - ana < -planted("bo").bid_bias / 2 and bo["high"] < 0
    assert cy["value"] - ana > -planted("cy").bid_bias / 2 and cy["low"] > 0
    assert min(bias, key=lambda p: bias[p]["value"]) == "bo"
    assert max(bias, key=lambda p: bias[p]["value"]) == "cy"


def test_sample_nil_lover_and_never_nil(sample):
    rate = values(sample, "nil_rate")
    assert max(rate, key=lambda p: rate[p]["value"]) == "di"
    assert rate["di"]["low"] > max(r["value"] for p, r in rate.items() if p != "di")
    assert planted("ivy").nil_appetite == 0 and rate["ivy"]["k"] == 0


def test_sample_partner_trumper(sample):
    tp = values(sample, "trump_partner_winner", min_n=10)
    assert max(tp, key=lambda p: tp[p]["value"]) == "gus"
    assert tp["gus"]["value"] > planted("gus").trump_partner_rate / 2


def test_sample_careless_player_has_most_findings(sample):
    # careless players slip more often when faults are planted (spadework.analysis.sim.season)
    f = values(sample, "findings_per_100")
    assert max(f, key=lambda p: f[p]["value"]) == "ed"


# --- claimed hands and renege penalties, from real logs ---------------------------------------------

from pathlib import Path  # noqa: E402

from spadework.analysis.engine.checker import check_db  # noqa: E402
from spadework.parsers import db as _db  # noqa: E402
from spadework.parsers.jsonl import dumps_record  # noqa: E402

_CLUB = Path(__file__).resolve().parent.parent / "data" / "club_night.jsonl"


def _checked(tmp_path, records) -> duckdb.DuckDBPyConnection:
    path = tmp_path / "log.jsonl"
    path.write_text("".join(dumps_record(r) + "\n" for r in records))
    c = _db.connect()
    _db.load_files(c, [path])
    check_db(c)
    return c


def test_a_claimed_hand_counts_the_recorded_tricks_taken(tmp_path):
    """A log of a claimed hand records a few tricks, then ``taken``: the scorer scores on ``taken``
    (RULES.md section 5 item 6), and so must the metrics (they counted the 3 tricks played, so a
    failed nil read as made)."""
    from dataclasses import replace

    src = _db.connect()
    _db.load_files(src, [_CLUB])
    first = next(r for r in _db.iter_records(src) if r.game_id == "cn-0314-t2" and r.hand == 1)
    claimed = replace(first, tricks=first.tricks[:3], score=None, taken=(1, 8, 3, 1))
    c = _checked(tmp_path, [claimed])
    assert c.execute("SELECT count(*) FROM violations").fetchone()[0] == 0
    metrics.prepare(c)
    got = dict(c.execute("SELECT seat, taken FROM sw_seat_hands").fetchall())
    assert got == {"N": 1, "E": 8, "S": 3, "W": 1}
    assert dict(c.execute("SELECT seat, taken FROM seats").fetchall()) == got
    nil_seat = next(b.seat for b in claimed.bids if b.nil)
    nils = metrics.run(c, "nil_success", by="seat")
    row = nils.filter(pl.col("seat") == str(nil_seat)).row(0, named=True)
    assert (row["n"], row["k"]) == (1, 0)  # the nil bidder took a trick: failed, as hand_scores says
    assert c.execute("SELECT nil_points FROM hand_scores WHERE side = ?", [str(nil_seat.side)]).fetchone()[0] == -100


def test_the_score_situation_is_the_official_one_under_a_renege_penalty(tmp_path):
    """RULES_NOTES: the after-penalty score is the official one and drives the blind-nil condition;
    the metrics' score situation (margin, ahead / behind, blind nil allowed) read the as-played totals."""
    from dataclasses import replace

    src = _db.connect()
    _db.load_files(src, [_CLUB.with_suffix(".spn")])
    recs = [replace(r, rules={"preset": "standard", "renege_penalty_tricks": 3}, score=None, winner=None)
            for r in _db.iter_records(src) if r.game_id == "cn-0314-t4"]
    c = _checked(tmp_path, recs)
    metrics.prepare(c)
    rows = c.execute("""
        SELECT sh.hand, sh.side, sh.score_before, prev.total, prev.as_played_total
        FROM sw_side_hands sh JOIN hand_scores prev
          ON prev.game_id = sh.game_id AND prev.hand = sh.hand - 1 AND prev.side = sh.side
        ORDER BY sh.hand, sh.side""").fetchall()
    assert rows and all(before == official for _, _, before, official, _ in rows)
    assert any(played is not None and played != official for *_, official, played in rows)  # the penalty moved tricks


def test_misused_filters_and_names_say_what_is_wrong(tmp_path):
    """Found by an API audit: a player given as a number reached DuckDB ("Could not convert string
    'ana' to INT32"), a bare string as the filters was read as the keys 'b', 'o', and an unknown
    metric in ``run_all`` was a bare KeyError."""
    from conftest import ROOT
    from spadework.analysis.engine.checker import check_db
    from spadework.parsers import db

    con = db.connect()
    db.load_files(con, [ROOT / "data" / "club_night.jsonl"])
    check_db(con)
    with pytest.raises(ValueError, match="filter 'player': 3 is not a name"):
        metrics.run(con, "bid_bias", {"player": 3})
    with pytest.raises(ValueError, match="filters must be a mapping such as {'player': 'bo'}"):
        metrics.run(con, "bid_bias", "bo")
    with pytest.raises(KeyError, match="unknown metric 'nope'; known: "):
        metrics.run_all(con, names=["nope"])
    # found by an analysis audit: a misspelt value gave an empty answer, a bags filter of one number in
    # a tuple a bare unpacking error
    with pytest.raises(ValueError, match="no hand has event 'nope'; event values: "):
        metrics.run(con, "bid_bias", {"event": "nope"})
    with pytest.raises(ValueError, match="unknown player 'zed'; players: "):
        metrics.run_all(con, {"partner": "zed"})
    with pytest.raises(ValueError, match="no hand has ruleset 'bridge'; ruleset values: standard"):
        metrics.run(con, "bid_bias", {"ruleset": "bridge"})
    for bad in ("5", (5,), 5.0, True):
        with pytest.raises(ValueError, match=r"filter 'bags': .* is not a number of bags or a \(min, max\) pair"):
            metrics.run(con, "bid_bias", {"bags": bad})
    with pytest.raises(ValueError, match=r"filter 'period': '2026' is not a \(first_date, last_date\) pair"):
        metrics.run(con, "bid_bias", {"period": "2026"})


def test_a_player_who_changes_sides_during_a_game_counts_it_once(tmp_path):
    """ana at N in hand 1 and at E in hand 2 counted the game twice in win_rate and bag penalties
    per game (found by an analysis audit); she is on the side of her first hand, as in the standings."""
    from dataclasses import replace

    from spadework.parsers.seats import Seat

    src = _db.connect()
    _db.load_files(src, [_CLUB])
    game = [r for r in _db.iter_records(src) if r.game_id == "cn-0314-t2"]
    assert len(game) >= 2
    first = game[0].players
    moved = (first[Seat.E], first[Seat.N], first[Seat.S], first[Seat.W])  # N and E swap seats
    recs = [game[0]] + [replace(r, players=moved) for r in game[1:]]
    recs = [replace(r, rules={"preset": "standard", "target": 150}, score=None, winner=None) for r in recs]
    c = _checked(tmp_path, recs)
    winner = c.execute("SELECT winner FROM games").fetchone()[0]
    assert winner is not None
    wins = by_player(metrics.run(c, "win_rate"))
    penalties = by_player(metrics.run(c, "bag_penalties_per_game"))
    for seat in Seat:
        name = first[seat]
        assert wins[name]["n"] == 1 and penalties[name]["n"] == 1, name
        assert wins[name]["k"] == (1 if str(seat.side) == winner else 0), name
    everyone = metrics.run(c, "win_rate", by="all").row(0, named=True)
    assert (everyone["n"], everyone["k"]) == (2, 1)  # a group holding both sides counts each side's game


def test_the_score_situation_after_a_missing_hand_is_the_one_the_game_goes_on_from(tmp_path):
    """After a missing hand the checker goes on from the hand's recorded score_before (RULES.md 7);
    the metrics took the totals of the hand before the gap, so a legal blind nil was not counted
    among the hands that allowed one (found by an analysis audit)."""
    from dataclasses import replace

    src = _db.connect()
    _db.load_files(src, [_CLUB])
    game = [r for r in _db.iter_records(src) if r.game_id == "cn-0314-t2"][:3]
    third = replace(game[2], score_before=(250, 100), bags_before=None)
    c = _checked(tmp_path, [game[0], third])
    assert [r[0] for r in c.execute("SELECT code FROM violations WHERE hand = 3").fetchall()][:1] == ["HAND_MISSING"]
    metrics.prepare(c)
    rows = dict(c.execute("SELECT side, score_before FROM sw_side_hands WHERE hand = 3").fetchall())
    assert rows == {"NS": 250, "EW": 100}
    situation = dict(c.execute("SELECT seat, situation FROM sw_player_hands WHERE hand = 3").fetchall())
    assert situation == {"N": "ahead", "S": "ahead", "E": "behind", "W": "behind"}
