"""The Altair charts: built from aggregated frames, tooltips carry n, specs render (vl-convert)."""

from __future__ import annotations

import json

import polars as pl
import pytest

import metrics_fixture
from spadework.analysis import charts, metrics

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def con():
    c = metrics_fixture.build(evil_name=True)
    metrics.freeze(c)
    yield c
    c.close()


def layers(spec: dict) -> list[dict]:
    return spec.get("layer") or spec.get("spec", {}).get("layer") or [spec]


def tooltip_fields(layer: dict) -> list[str]:
    tips = layer.get("encoding", {}).get("tooltip", [])
    return [t["field"] for t in (tips if isinstance(tips, list) else [tips])]


def data_values(layer: dict, spec: dict) -> list[dict]:
    return (layer.get("data") or spec.get("data") or {}).get("values", [])


def test_bid_calibration_has_identity_line_and_n(con):
    df = metrics.run(con, "bid_calibration", by="all")
    spec = charts.bid_calibration(df).to_dict()
    ls = layers(spec)
    diag = data_values(ls[0], spec)
    assert diag == [{"x": 0, "y": 0}, {"x": 5.0, "y": 5.0}]  # y = x from 0 to the largest bid/interval
    assert ls[0]["mark"]["strokeDash"] == [4, 4]
    points = ls[3]
    assert points["mark"]["type"] == "point" and "n" in tooltip_fields(points)
    values = data_values(points, spec)
    assert sorted((v["bid_value"], v["n"]) for v in values) == [(3.0, 9), (4.0, 9), (5.0, 1)]
    # a group column colours one series per player
    per = charts.bid_calibration(metrics.run(con, "bid_calibration")).to_dict()
    assert layers(per)[3]["encoding"]["color"]["field"] == "player"


def test_bid_error_histogram(con):
    spec = charts.bid_error_histogram(metrics.run(con, "bid_error", by="all")).to_dict()
    assert spec["mark"]["type"] == "bar"
    assert {"k", "n"} <= set(tooltip_fields(spec))
    vals = {v["error"]: (v["k"], v["n"], round(v["share"], 4)) for v in spec["data"]["values"]}
    assert vals == {-1.0: (7, 19, 0.3684), 0.0: (5, 19, 0.2632), 1.0: (6, 19, 0.3158), 2.0: (1, 19, 0.0526)}
    per = charts.bid_error_histogram(metrics.run(con, "bid_error")).to_dict()
    assert per["encoding"]["xOffset"]["field"] == "player"


def test_nil_success_intervals(con):
    df = metrics.run(con, "nil_success")
    spec = charts.nil_success(df).to_dict()
    rule, point = layers(spec)
    assert rule["mark"]["type"] == "rule" and rule["encoding"]["x2"]["field"] == "high"
    values = data_values(rule, spec)
    # bo bid no nil and ana's only nil was blind (a separate metric): both left out
    assert sorted(v["player"] for v in values) == sorted([EVIL, "cy"])
    assert "n" in tooltip_fields(point) and "k" in tooltip_fields(point)


def test_cumulative_bags_penalty_line(con):
    spec = charts.cumulative_bags(metrics.game_bags(con, "G1")).to_dict()
    rule, line, marks = layers(spec)
    assert data_values(rule, spec) == [{"bags": 10}]  # EW reached 11: one line, at the bag limit
    assert rule["mark"]["color"] == "#d62728"
    rows = data_values(line, spec)
    ew = sorted((r["hand"], r["cumulative_bags"], r["n"]) for r in rows if r["side"] == "EW")
    assert ew == [(1, 8, 1), (2, 9, 2), (3, 11, 3), (4, 11, 4)]
    assert "n" in tooltip_fields(line)
    assert marks["transform"][0]["filter"].startswith("datum.bag_penalty")
    assert spec["title"] == "Bags through game G1"


def test_small_multiples_facets(con):
    df = metrics.run_all(con, by="player")
    chosen = ["bid_bias", "exact_bid", "findings_per_100"]
    spec = charts.small_multiples(df, metrics=chosen).to_dict()
    assert spec["facet"]["field"] == "title" and spec["columns"] == 3
    assert spec["resolve"]["scale"]["x"] == "independent"
    assert spec["facet"]["sort"] == ["Bid bias", "Exact bids", "Findings per 100 hands"]
    assert len(spec["data"]["values"]) == 4 * 3
    assert all("n" in tooltip_fields(layer) for layer in spec["spec"]["layer"])


def test_findings_heatmap(con):
    spec = charts.findings_heatmap(metrics.findings_grid(con)).to_dict()
    rect, text = layers(spec)
    vals = sorted((v["table"], v["round"], v["findings"], v["n"], v["per_100"]) for v in data_values(rect, spec))
    assert vals == [("T1", "1", 2, 4, 50.0), ("T1", "3", 0, 1, 0.0), ("T2", "2", 1, 1, 100.0)]
    assert "n" in tooltip_fields(rect) and text["encoding"]["text"]["field"] == "findings"


def test_missing_columns_are_named(con):
    with pytest.raises(ValueError, match="no column \\['bid_value'\\]"):
        charts.bid_calibration(pl.DataFrame({"value": [1.0], "n": [1], "low": [0.0], "high": [2.0]}))


def test_lists_of_dicts_and_nan_are_accepted():
    rows = [{"error": -1.0, "k": 2, "n": 4}, {"error": 0.0, "k": 2, "n": 4}]
    spec = charts.bid_error_histogram(rows).to_dict()
    assert len(spec["data"]["values"]) == 2
    spec = charts.nil_success([{"player": "x", "n": 2, "k": 1, "value": 0.5, "low": float("nan"), "high": 0.9}])
    assert json.dumps(spec.to_dict(), allow_nan=False)  # NaN became null


def test_every_chart_renders_and_escapes_names(con):
    built = [
        charts.bid_calibration(metrics.run(con, "bid_calibration")),
        charts.bid_error_histogram(metrics.run(con, "bid_error", by="all")),
        charts.nil_success(metrics.run(con, "nil_success")),
        charts.cumulative_bags(metrics.game_bags(con, "G1")),
        charts.small_multiples(metrics.run_all(con, by="player"), metrics=["bid_bias", "nil_rate"]),
        charts.findings_heatmap(metrics.findings_grid(con)),
    ]
    for chart in built:
        svg = charts.to_svg(chart)
        assert svg.startswith("<svg") and "<script" not in svg
    svg = charts.to_svg(built[2])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg


def test_the_chosen_player_is_highlighted_in_every_chart(con):
    cal = charts.bid_calibration(metrics.run(con, "bid_calibration"), highlight="bo").to_dict()
    rows = cal["data"]["values"]
    assert {r["player"] for r in rows if r["highlighted"]} == {"bo"} and len(cal["layer"]) == 5
    assert [layer["mark"].get("color") for layer in cal["layer"][2:]] == [charts.HIGHLIGHT] * 3
    # the same spec with another player highlighted, without Altair
    again = charts.rehighlight(cal, "player", "cy", title="cy")
    assert {r["player"] for r in again["data"]["values"] if r["highlighted"]} == {"cy"} and again["title"] == "cy"
    assert {r["player"] for r in cal["data"]["values"] if r["highlighted"]} == {"bo"}  # the input unchanged
    sm = charts.small_multiples(metrics.run_all(con, by="player", names=["bid_bias"]), highlight="bo").to_dict()
    color = sm["spec"]["layer"][1]["encoding"]["color"]
    assert color["condition"]["value"] == charts.HIGHLIGHT and color["value"] == charts.MUTED
    nil = charts.nil_success(metrics.run(con, "nil_success"), highlight="cy").to_dict()
    assert [v["highlighted"] for v in data_values(nil["layer"][0], nil) if v["player"] == "cy"] == [True]
    err = charts.bid_error_histogram(metrics.run(con, "bid_error"), highlight="bo").to_dict()
    who = {(v["who"], v["error"]): round(v["share"], 4) for v in err["data"]["values"]}
    # bo's six bids: errors 1, 2, 1, -1, 1, -1; everyone else's thirteen
    assert (who[("bo", 1.0)], who[("bo", -1.0)], who[("bo", 2.0)]) == (0.5, round(2 / 6, 4), round(1 / 6, 4))
    assert round(sum(s for (w, _), s in who.items() if w == "everyone else"), 6) == 1.0
    heat = charts.findings_heatmap(metrics.findings_grid(con), highlight=[("T2", "2")]).to_dict()
    outline = heat["layer"][2]
    assert outline["mark"]["stroke"] == charts.HIGHLIGHT and outline["transform"] == [{"filter": "datum.highlighted"}]
    assert [r["highlighted"] for r in data_values(heat["layer"][0], heat) if r["table"] == "T2"] == [True]


def test_a_label_that_vega_would_cut_inside_an_emoji_is_drawn_whole():
    """Vega shortens a long legend label and cut an emoji in half; vl-convert then failed ("unexpected
    end of hex escape") and `report --static` ended in a traceback on a legal player name (found by
    a report audit).  The chart is drawn again with its labels whole."""
    label = "Christopher Alexander & " + "\U0001f600" * 6
    spec = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "mark": "line",
            "data": {"values": [{"x": 1, "y": 2, "who": label}, {"x": 2, "y": 3, "who": label}]},
            "encoding": {"x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"},
                         "color": {"field": "who", "type": "nominal"}}}  # fmt: skip
    svg = charts.spec_to_svg(spec)
    assert "Christopher Alexander" in svg and "\U0001f600" * 6 in svg
