"""Altair charts of the metrics.  Every function takes an aggregated frame, never a raw table.

The frames are the ones :mod:`spadework.analysis.metrics` returns (a polars DataFrame, or a list of dicts with
the same columns); the data go into the chart as inline values, so a chart's spec is self-contained
and renders without network access (see :mod:`spadework.analysis.report`).  Every tooltip carries ``n``.
Every chart of players takes ``highlight=`` (a player's name): that player in :data:`HIGHLIGHT`, the
others in grey, so a coach's notebook or a player's page shows where that player stands.

| function | input frame |
|---|---|
| :func:`bid_calibration` | ``metrics.run(con, "bid_calibration", by=...)``: ``bid_value, value, n, low, high`` (+ group) |
| :func:`bid_error_histogram` | ``metrics.run(con, "bid_error", by=...)``: ``error, k, n`` (+ group) |
| :func:`nil_success` | ``metrics.run(con, "nil_success")``: ``player, n, k, value, low, high`` |
| :func:`by_player` | ``metrics.run(con, any_metric)``: ``player, n, value, low, high`` |
| :func:`cumulative_bags` | ``metrics.game_bags(con, game_id)``: ``hand, side, players, cumulative_bags, bags_this_hand, bag_penalty, bag_limit`` |
| :func:`small_multiples` | ``metrics.run_all(con, by="player")``: ``player, metric, title, kind, value, low, high, n`` |
| :func:`findings_heatmap` | ``metrics.findings_grid(con)``: ``table_name, round, hands, findings, per_100`` |
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import altair as alt
import polars as pl

Frame = pl.DataFrame | Sequence[Mapping[str, Any]]

WIDTH = 420
HEIGHT = 260

HIGHLIGHT = "#d62728"
"""Colour of the highlighted player (``highlight=``) in every chart; the others are drawn in :data:`MUTED`."""
MUTED = "#9e9e9e"


def _mark_highlight(rows: list[dict[str, Any]], group: str | None, highlight: str | None) -> None:
    """Set ``highlighted`` on each row (the row's ``group`` value is ``highlight``); a plain boolean
    the specs filter on, so a player's name never becomes part of an expression."""
    for r in rows:
        r["highlighted"] = bool(highlight is not None and group and r.get(group) == highlight)


def _rows(df: Frame, columns: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Rows as JSON-safe dicts (NaN and infinities become null)."""
    rows = df.to_dicts() if isinstance(df, pl.DataFrame) else [dict(r) for r in df]
    if columns is not None:
        cols = list(columns)
        rows = [{c: r.get(c) for c in cols} for r in rows]
    for r in rows:
        for key, value in r.items():
            if isinstance(value, Decimal):
                value = r[key] = float(value)
            if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
                r[key] = None
            elif isinstance(value, (datetime.date, datetime.datetime)):
                r[key] = value.isoformat()
    return rows


def _columns(df: Frame) -> list[str]:
    if isinstance(df, pl.DataFrame):
        return df.columns
    return list(df[0].keys()) if df else []


def _require(df: Frame, needed: Iterable[str], chart: str) -> None:
    missing = [c for c in needed if c not in _columns(df)]
    if missing:
        raise ValueError(f"{chart}: the frame has no column {missing}; it has {_columns(df)}")


def _group_column(df: Frame, known: Iterable[str]) -> str | None:
    """The grouping key of a metrics frame (player, partnership, side ...), if any besides ``scope``."""
    skip = set(known) | {"n", "k", "total", "value", "se", "low", "high", "scope"}
    for c in _columns(df):
        if c not in skip:
            return c
    return None


def bid_calibration(
    df: Frame, group: str | None = None, title: str = "Bid calibration", highlight: str | None = None
) -> alt.LayerChart:
    """Mean tricks taken (y) for each bid (x), with 95 % intervals and the line y = x (a perfect bidder).

    ``group`` (default: the frame's first key column other than ``scope``) colours one series per
    player or side.  ``highlight``: one group value (a player) drawn in :data:`HIGHLIGHT` with its
    points and intervals, every other series as a thin grey line behind it.  Tooltips: bid, mean
    tricks, interval, ``n`` bids.  Raises ``ValueError`` when a needed column is missing.
    """
    _require(df, ("bid_value", "value", "n", "low", "high"), "bid_calibration")
    group = group or _group_column(df, ("bid_value",))
    rows = _rows(df)
    bids = [r["bid_value"] for r in rows if r["bid_value"] is not None] or [0, 13]
    lo, hi = min(min(bids), 0), max(max(bids), 1)
    top = max([hi] + [r["high"] or 0 for r in rows] + [r["value"] or 0 for r in rows])
    diag = alt.Chart(alt.Data(values=[{"x": lo, "y": lo}, {"x": top, "y": top}])).mark_line(
        color="#888", strokeDash=[4, 4]
    ).encode(x="x:Q", y="y:Q")
    tooltip = [
        alt.Tooltip("bid_value:Q", title="bid"),
        alt.Tooltip("value:Q", title="mean tricks", format=".2f"),
        alt.Tooltip("low:Q", title="95% low", format=".2f"),
        alt.Tooltip("high:Q", title="95% high", format=".2f"),
        alt.Tooltip("n:Q", title="n (bids)"),
    ]
    if group:
        tooltip.insert(0, alt.Tooltip(f"{group}:N"))
    x = alt.X("bid_value:Q", title="bid (tricks)", scale=alt.Scale(domain=[lo, top]))
    y = alt.Y("value:Q", title="mean tricks taken", scale=alt.Scale(domain=[lo, top]))
    if highlight is not None and group:
        _mark_highlight(rows, group, highlight)
        base = alt.Chart()
        others = base.transform_filter("!datum.highlighted").mark_line(
            color=MUTED, opacity=0.45, strokeWidth=1
        ).encode(x=x, y=y, detail=f"{group}:N", tooltip=tooltip)
        mine = base.transform_filter("datum.highlighted")
        line = mine.mark_line(color=HIGHLIGHT, strokeWidth=2.5).encode(x=x, y=y)
        bars = mine.mark_rule(clip=True, color=HIGHLIGHT).encode(x=x, y="low:Q", y2="high:Q", tooltip=tooltip)
        points = mine.mark_point(filled=True, size=70, color=HIGHLIGHT).encode(x=x, y=y, tooltip=tooltip)
        return alt.layer(diag, others, bars, line, points, data=alt.Data(values=rows)).properties(
            title=title, width=WIDTH, height=HEIGHT
        )
    base = alt.Chart(alt.Data(values=rows))
    color = alt.Color(f"{group}:N", title=group) if group else alt.value("#1f77b4")
    points = base.mark_point(filled=True, size=60).encode(x=x, y=y, color=color, tooltip=tooltip)
    line = base.mark_line(opacity=0.6).encode(x=x, y=y, color=color)
    bars = base.mark_rule(clip=True).encode(x=x, y="low:Q", y2="high:Q", color=color, tooltip=tooltip)
    return alt.layer(diag, bars, line, points).properties(title=title, width=WIDTH, height=HEIGHT)


def bid_error_histogram(
    df: Frame, group: str | None = None, title: str = "Bid error (tricks taken - bid)", highlight: str | None = None
):
    """Bars of how many bids missed by each error (``k`` at ``error``), one colour per group if any.

    ``highlight`` (a group value, with a grouped frame): that player's share of bids at each error in
    :data:`HIGHLIGHT` beside everyone else's together in grey (shares, so the two compare).
    Tooltips: error, bids at this error (``k``), ``n`` bids of the group, share.
    """
    _require(df, ("error", "k", "n"), "bid_error_histogram")
    group = group or _group_column(df, ("error",))
    rows = _rows(df)
    for r in rows:
        r["share"] = (r["k"] / r["n"]) if r.get("n") else None
    tooltip = [
        alt.Tooltip("error:Q", title="taken - bid"),
        alt.Tooltip("k:Q", title="bids"),
        alt.Tooltip("n:Q", title="n (all bids)"),
        alt.Tooltip("share:Q", title="share", format=".1%"),
    ]
    if highlight is not None and group:
        mine = [r for r in rows if r.get(group) == highlight]
        rest: dict[float, int] = {}
        for r in rows:
            if r.get(group) != highlight and r["error"] is not None:
                rest[r["error"]] = rest.get(r["error"], 0) + (r["k"] or 0)
        total = sum(rest.values())
        who = [{"error": r["error"], "k": r["k"], "n": r["n"], "share": r["share"], "who": str(highlight)}
               for r in mine]  # fmt: skip
        who += [{"error": e, "k": k, "n": total, "share": k / total if total else None, "who": "everyone else"}
                for e, k in sorted(rest.items())]  # fmt: skip
        order = [str(highlight), "everyone else"]
        return alt.Chart(alt.Data(values=who)).mark_bar().encode(
            x=alt.X("error:O", title="tricks taken - bid", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("share:Q", title="share of bids", axis=alt.Axis(format="%")),
            color=alt.Color("who:N", title=None, sort=order,
                            scale=alt.Scale(domain=order, range=[HIGHLIGHT, MUTED])),  # fmt: skip
            xOffset=alt.XOffset("who:N", sort=order),
            tooltip=[alt.Tooltip("who:N", title="bids of"), *tooltip],
        ).properties(title=title, width=WIDTH, height=HEIGHT)
    enc: dict[str, Any] = {
        "x": alt.X("error:O", title="tricks taken - bid", axis=alt.Axis(labelAngle=0)),
        "y": alt.Y("k:Q", title="bids"),
        "tooltip": tooltip,
    }
    if group:
        tooltip.insert(0, alt.Tooltip(f"{group}:N"))
        enc["color"] = alt.Color(f"{group}:N", title=group)
        enc["xOffset"] = alt.XOffset(f"{group}:N")
    return alt.Chart(alt.Data(values=rows)).mark_bar().encode(**enc).properties(title=title, width=WIDTH, height=HEIGHT)


def by_player(
    df: Frame,
    group: str | None = None,
    title: str = "",
    axis_title: str = "value",
    kind: str = "rate",
    highlight: str | None = None,
    unit: str = "n",
):
    """One row per player (or ``group``): a metric's value as a point with its 95 % interval, best
    first; ``highlight`` (a player) in :data:`HIGHLIGHT`, the others grey.  ``df``: a
    :func:`spadework.analysis.metrics.run` frame (``value, low, high, n``).  ``kind`` ``rate`` draws
    0..100 %.  Rows with ``n == 0`` are left out.  Tooltips: the value, its interval and ``n``."""
    _require(df, ("value", "n", "low", "high"), "by_player")
    group = group or _group_column(df, ()) or "scope"
    rows = [r for r in _rows(df) if r.get("n")]
    _mark_highlight(rows, group, highlight)
    fmt = ".1%" if kind == "rate" else ".2f"
    tooltip = [
        alt.Tooltip(f"{group}:N"),
        alt.Tooltip("value:Q", title=axis_title, format=fmt),
        alt.Tooltip("low:Q", title="95% low", format=fmt),
        alt.Tooltip("high:Q", title="95% high", format=fmt),
        alt.Tooltip("n:Q", title=unit),
    ]
    if "k" in _columns(df):
        tooltip.insert(1, alt.Tooltip("k:Q", title="k"))
    scale = alt.Scale(domain=[0, 1]) if kind == "rate" else alt.Scale(zero=False)
    axis = alt.Axis(format="%") if kind == "rate" else alt.Axis()
    base = alt.Chart(alt.Data(values=rows))
    y = alt.Y(f"{group}:N", title=group, sort=alt.EncodingSortField("value", order="descending"))
    color = alt.condition("datum.highlighted", alt.value(HIGHLIGHT), alt.value("#1f77b4" if highlight is None else MUTED))
    rule = base.mark_rule(strokeWidth=2).encode(y=y, x=alt.X("low:Q", scale=scale), x2="high:Q", color=color,
                                                tooltip=tooltip)  # fmt: skip
    point = base.mark_point(filled=True, size=70).encode(
        y=y, x=alt.X("value:Q", title=axis_title, axis=axis, scale=scale), color=color, tooltip=tooltip
    )
    return alt.layer(rule, point).properties(title=title, width=WIDTH, height=max(60, 22 * len(rows)))


def nil_success(
    df: Frame, group: str | None = None, title: str = "Nils made (95% Wilson interval)", highlight: str | None = None
):
    """One row per player (or ``group``): the share of nils made as a point with its interval
    (:func:`by_player`); ``highlight`` a player.

    Rows with ``n == 0`` are left out.  Tooltips: made ``k`` of ``n`` nils, share, interval.
    """
    _require(df, ("value", "n", "k", "low", "high"), "nil_success")
    return by_player(df, group, title, "nils made", "rate", highlight, unit="n (nils)")


def cumulative_bags(df: Frame, title: str | None = None):
    """Bags through one game: each side's cumulative bags hand by hand, with a dashed line at every
    multiple of the bag limit (where a sandbagging penalty falls) and a red mark on hands with a penalty.

    Tooltips: hand, side, players, bags this hand, cumulative bags, penalty, ``n`` = hands so far.
    """
    _require(df, ("hand", "side", "cumulative_bags", "bags_this_hand", "bag_penalty"), "cumulative_bags")
    rows = _rows(df)
    counts: dict[str, int] = {}
    for r in sorted(rows, key=lambda r: (r["side"], r["hand"])):
        counts[r["side"]] = counts.get(r["side"], 0) + 1
        r["n"] = counts[r["side"]]
        r["label"] = f"{r['side']} ({r['players']})" if r.get("players") else r["side"]
    limit = next((r.get("bag_limit") for r in rows if r.get("bag_limit")), 10) or 10
    top = max([r["cumulative_bags"] or 0 for r in rows] + [limit])
    lines = [{"bags": limit * i} for i in range(1, int(top // limit) + 1)]
    tooltip = [
        alt.Tooltip("hand:Q"),
        alt.Tooltip("label:N", title="side"),
        alt.Tooltip("bags_this_hand:Q", title="bags this hand"),
        alt.Tooltip("cumulative_bags:Q", title="cumulative bags"),
        alt.Tooltip("bag_penalty:Q", title="penalty"),
        alt.Tooltip("n:Q", title="n (hands)"),
    ]
    base = alt.Chart(alt.Data(values=rows))
    enc = {"x": alt.X("hand:Q", title="hand", axis=alt.Axis(tickMinStep=1)),
           "y": alt.Y("cumulative_bags:Q", title="cumulative bags", scale=alt.Scale(domain=[0, top + 1])),
           "color": alt.Color("label:N", title="side")}  # fmt: skip
    line = base.mark_line(point=True).encode(**enc, tooltip=tooltip)
    penalty_marks = (
        base.transform_filter("datum.bag_penalty != null && datum.bag_penalty != 0")
        .mark_point(shape="triangle-up", size=140, color="#d62728", filled=True)
        .encode(x="hand:Q", y="cumulative_bags:Q", tooltip=tooltip)
    )
    rule = alt.Chart(alt.Data(values=lines)).mark_rule(color="#d62728", strokeDash=[6, 3]).encode(
        y="bags:Q", tooltip=[alt.Tooltip("bags:Q", title="penalty at")]
    )
    game = next((r.get("game_id") for r in rows if r.get("game_id")), None)
    return alt.layer(rule, line, penalty_marks).properties(
        title=title or (f"Bags through game {game}" if game else "Bags through the game"), width=WIDTH, height=HEIGHT
    )


def small_multiples(
    df: Frame,
    group: str = "player",
    metrics: Sequence[str] | None = None,
    columns: int = 3,
    title: str = "Players side by side",
    highlight: str | None = None,
):
    """One small panel per metric, the players (or ``group``) side by side in each, with 95 % intervals.

    ``df``: :func:`spadework.analysis.metrics.run_all` output; ``metrics`` picks and orders the metric names.
    Each panel has its own x scale.  ``highlight``: one player drawn in :data:`HIGHLIGHT`, the others
    grey (without it, one colour per player).  Tooltips: player, metric, value, interval, ``n``.
    """
    _require(df, (group, "metric", "title", "value", "low", "high", "n"), "small_multiples")
    rows = _rows(df)
    if metrics is not None:
        order = {m: i for i, m in enumerate(metrics)}
        rows = [r for r in rows if r["metric"] in order]
        rows.sort(key=lambda r: order[r["metric"]])
    _mark_highlight(rows, group, highlight)
    titles = list(dict.fromkeys(r["title"] for r in rows))
    tooltip = [
        alt.Tooltip(f"{group}:N"),
        alt.Tooltip("title:N", title="metric"),
        alt.Tooltip("value:Q", format=".3f"),
        alt.Tooltip("low:Q", title="95% low", format=".3f"),
        alt.Tooltip("high:Q", title="95% high", format=".3f"),
        alt.Tooltip("n:Q"),
    ]
    base = alt.Chart()
    y = alt.Y(f"{group}:N", title=None)
    if highlight is None:
        color: Any = alt.Color(f"{group}:N", legend=None)
        rule_color: Any = alt.value("black")
    else:
        color = rule_color = alt.condition("datum.highlighted", alt.value(HIGHLIGHT), alt.value(MUTED))
    rule = base.mark_rule().encode(y=y, x=alt.X("low:Q", title=None), x2="high:Q", color=rule_color, tooltip=tooltip)
    point = base.mark_point(filled=True, size=50).encode(
        y=y, x=alt.X("value:Q", title=None), color=color, tooltip=tooltip
    )
    return (
        alt.layer(rule, point, data=alt.Data(values=rows))
        .properties(width=200, height=max(60, 18 * len({r[group] for r in rows})))
        .facet(facet=alt.Facet("title:N", title=None, sort=titles), columns=columns)
        .resolve_scale(x="independent")
        .properties(title=title)
    )


def findings_heatmap(
    df: Frame,
    title: str = "Findings per 100 hands by table and round",
    highlight: Iterable[tuple[Any, Any]] | None = None,
):
    """A cell per table (rows) and round (columns) coloured by findings per 100 hands, the count written in.

    ``highlight``: ``(table, round)`` pairs (where a player sat, :func:`spadework.analysis.coach.tables_of`)
    outlined in :data:`HIGHLIGHT`.  Tooltips: table, round, findings, ``n`` hands, per 100 hands.
    """
    _require(df, ("table_name", "round", "hands", "findings", "per_100"), "findings_heatmap")
    rows = _rows(df)
    marked = {(str(t), str(r)) for t, r in (highlight or ())}
    for r in rows:
        r["highlighted"] = (str(r.get("table_name")), str(r.get("round"))) in marked
        r["table"] = r.pop("table_name") if r.get("table_name") is not None else "(none)"
        r["round"] = r["round"] if r.get("round") is not None else "(none)"
        r["n"] = r["hands"]
    tooltip = [
        alt.Tooltip("table:N"),
        alt.Tooltip("round:N"),
        alt.Tooltip("findings:Q"),
        alt.Tooltip("n:Q", title="n (hands)"),
        alt.Tooltip("per_100:Q", title="per 100 hands", format=".1f"),
    ]
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("round:O", title="round", axis=alt.Axis(labelAngle=0)), y=alt.Y("table:O", title="table")
    )
    rect = base.mark_rect().encode(
        color=alt.Color("per_100:Q", title="per 100 hands", scale=alt.Scale(scheme="orangered")), tooltip=tooltip
    )
    text = base.mark_text(baseline="middle").encode(text="findings:Q", tooltip=tooltip)
    layers = [rect, text]
    if marked:
        layers.append(base.transform_filter("datum.highlighted").mark_rect(
            fillOpacity=0, stroke=HIGHLIGHT, strokeWidth=3).encode(tooltip=tooltip))  # fmt: skip
    return alt.layer(*layers).properties(title=title, width=max(120, 40 * len({r['round'] for r in rows})),
                                         height=max(60, 24 * len({r['table'] for r in rows})))


def rehighlight(spec: Mapping[str, Any], group: str, highlight: str | None, title: str | None = None) -> dict[str, Any]:
    """The spec of a chart made with ``highlight=`` (its data at the top level, as
    :func:`bid_calibration` makes it), with another player highlighted: no Altair work, so drawing the
    same chart for every player of a season stays cheap.  ``spec``: ``chart.to_dict()``; ``title``
    replaces the title.  The input is not changed."""
    out = dict(spec)
    rows = [dict(r, highlighted=highlight is not None and r.get(group) == highlight) for r in spec["data"]["values"]]
    out["data"] = dict(spec["data"], values=rows)
    if title is not None:
        out["title"] = title
    return out


def spec_to_svg(spec: Mapping[str, Any]) -> str:
    """Render a Vega-Lite spec (a dict) to an SVG string with vl-convert.

    Vega shortens a long label to fit (``labelLimit``) and may cut an emoji in half there, which
    vl-convert cannot measure (``ValueError``: "unexpected end of hex escape"); such a chart is drawn
    again with its labels whole.  Raises ``ValueError`` when that fails too."""
    import vl_convert

    try:
        return vl_convert.vegalite_to_svg(dict(spec))
    except ValueError:
        whole = {"labelLimit": 0}
        config = dict(spec.get("config") or {})
        for part in ("legend", "axis", "header"):
            config[part] = {**(config.get(part) or {}), **whole}
        return vl_convert.vegalite_to_svg(dict(spec, config=config))


def use_offline_rendering() -> None:
    """Make Altair draw charts in notebooks as inline SVG through vl-convert.

    Why: Altair's default notebook output loads the Vega scripts from a CDN (no chart without network),
    and JupyterLab 4 renders Vega-Lite only up to v5 while Altair 6 writes v6 specs.  SVG works offline
    everywhere; the price is that notebook charts have no tooltips (the HTML report keeps them).
    """
    alt.renderers.enable("svg")


def to_svg(chart) -> str:
    """Render a chart to an SVG string with vl-convert (no browser, no network); see :func:`spec_to_svg`."""
    return spec_to_svg(chart.to_dict(validate=False))


__all__ = [
    "HIGHLIGHT",
    "MUTED",
    "bid_calibration",
    "by_player",
    "bid_error_histogram",
    "cumulative_bags",
    "findings_heatmap",
    "nil_success",
    "rehighlight",
    "small_multiples",
    "spec_to_svg",
    "to_svg",
    "use_offline_rendering",
]
