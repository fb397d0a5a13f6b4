"""One player against the field: the table behind ``spadework stats`` and the coaching notebook.

``player_table(con, "ana")`` runs every scalar metric of :mod:`spadework.analysis.metrics` twice, once for
the player and once for the field (every other player's hands under the same filters), and
lines them up with the gap between the two and a z score.  ``leaks`` ranks the same table by the
size of the gap (largest first, leak-finder style).  ``rich_table`` turns either into a
:class:`rich.table.Table` for the terminal.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from spadework.analysis import metrics, sample
from spadework.parsers.state import FRESH, NotChecked, derived_state, require_checked

TABLE_COLUMNS = (
    "category", "metric", "title", "kind", "unit", "better",
    "player_n", "player_k", "player_value", "player_se", "player_low", "player_high",
    "field_n", "field_k", "field_value", "field_se", "field_low", "field_high",
    "gap", "z", "verdict",
)  # fmt: skip
"""Columns of :func:`player_table`."""

LEAK_Z = 2.0
"""|z| from which a gap in the wrong direction is called a ``leak`` (and in the right one a ``strength``)."""


def open_database(path: str | os.PathLike[str] = "data/sample/season.duckdb", freeze: bool = True):
    """Open a spadework database read-only for analysis.

    A relative ``path`` is looked up from the working directory and then from each parent
    directory (so a notebook running in ``notebooks/`` finds ``data/sample``).  With ``freeze``
    (default) the per-player-hand relation is computed once (:func:`spadework.analysis.metrics.freeze`; safe,
    the connection is read-only) so every metric afterwards is fast.  Raises ``FileNotFoundError``
    naming the path when no such file exists, and :class:`spadework.parsers.state.NotChecked` (a
    sentence naming ``spadework check``) when the database was loaded after its last check or
    never checked; the sample season's database is rebuilt instead.
    """
    import duckdb

    p = Path(path)
    if sample.is_sample_db(p):
        try:  # the sample's database is built from its log on first use
            p = sample.build_sample_db(None if not p.is_absolute() else p)
        except FileNotFoundError:
            pass
    candidates = [p] if p.is_absolute() else [d / p for d in (Path.cwd(), *Path.cwd().parents)]
    for c in candidates:
        if c.is_file():
            con = duckdb.connect(str(c), read_only=True)
            if derived_state(con) != FRESH and sample.is_sample_db(c):
                con.close()  # made by an older spadework, or interrupted: build it again
                sample.build_sample_db(c, force=True)
                con = duckdb.connect(str(c), read_only=True)
            try:
                require_checked(con, os.fspath(path) if c == candidates[0] else str(c))
            except NotChecked:
                con.close()
                raise
            if freeze:
                metrics.freeze(con)
            return con
    raise FileNotFoundError(f"no database at {path} (looked in {', '.join(str(c) for c in candidates[:3])} ...)")


def _z(kind: str, pv, pse, pn, pk, fv, fse, fn, fk) -> float | None:
    """Gap over its standard error, pooling the variance of player and field (robust for a small n)."""
    if pv is None or fv is None or not pn or not fn:
        return None
    if kind == "rate":
        pooled = (pk + fk) / (pn + fn)
        se = math.sqrt(pooled * (1 - pooled) * (1 / pn + 1 / fn))
    else:
        if fse is None or pn + fn < 3:
            return None
        var_p = 0.0 if pse is None else pse * pse * pn * (pn - 1)  # (n - 1) s^2
        var_f = fse * fse * fn * (fn - 1)
        pooled_var = (var_p + var_f) / (pn + fn - 2)
        se = math.sqrt(pooled_var * (1 / pn + 1 / fn))
    if se == 0 or math.isnan(se):
        return None
    return (pv - fv) / se


def _verdict(z: float | None, better: str | None) -> str:
    if z is None or abs(z) < LEAK_Z:
        return ""
    if better is None:
        return "higher" if z > 0 else "lower"
    good = (z > 0) == (better == "higher")
    return "strength" if good else "leak"


def player_table(
    con,
    player: str,
    filters: metrics.Filters | Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """One player's tendencies against the field, one row per scalar metric (registry order).

    Columns: :data:`TABLE_COLUMNS`.  ``player_*``: the metric over the player's hands; ``field_*``: over
    every other player's hands under the same ``filters`` (their ``player`` and ``exclude_player`` are
    replaced); ``gap`` = player - field; ``z`` = gap over its standard error, pooling player and field
    (two-proportion pooled for rates, pooled variance for means, so a player with three identical
    values does not get a huge z; null when it cannot be estimated); ``verdict``: ``leak`` /
    ``strength`` when |z| >= 2 and the metric has a better direction, ``higher`` / ``lower`` when it has
    none, else empty.  Units as in :func:`spadework.analysis.metrics.describe` (rates are 0..1).

    Raises ``ValueError`` when ``player`` never sat at a table (the message lists the players).
    """
    known = metrics.players(con)
    if player not in known:
        shown = ", ".join(known[:20]) + (" ..." if len(known) > 20 else "")
        raise ValueError(f"unknown player {player!r}; players: {shown or '(none)'}")
    base = metrics.Filters.of(filters).to_dict()
    base.pop("player", None)
    base.pop("exclude_player", None)
    with metrics.snapshot(con):
        mine = metrics.run_all(con, {**base, "player": player}, by="all")
        field = metrics.run_all(con, {**base, "exclude_player": player}, by="all")
    rows = []
    for m in metrics.SCALAR_METRICS:
        meta = metrics.REGISTRY[m]
        p = mine.filter(pl.col("metric") == m).to_dicts()
        f = field.filter(pl.col("metric") == m).to_dicts()
        p = p[0] if p else {}
        f = f[0] if f else {}
        pv, fv = p.get("value"), f.get("value")
        z = _z(meta.kind, pv, p.get("se"), p.get("n"), p.get("k"), fv, f.get("se"), f.get("n"), f.get("k"))
        rows.append(
            {
                "category": meta.category,
                "metric": m,
                "title": meta.title,
                "kind": meta.kind,
                "unit": meta.unit,
                "better": meta.better,
                "player_n": p.get("n", 0),
                "player_k": p.get("k"),
                "player_value": pv,
                "player_se": p.get("se"),
                "player_low": p.get("low"),
                "player_high": p.get("high"),
                "field_n": f.get("n", 0),
                "field_k": f.get("k"),
                "field_value": fv,
                "field_se": f.get("se"),
                "field_low": f.get("low"),
                "field_high": f.get("high"),
                "gap": None if pv is None or fv is None else pv - fv,
                "z": z,
                "verdict": _verdict(z, meta.better),
            }
        )
    schema = {
        "category": pl.String, "metric": pl.String, "title": pl.String, "kind": pl.String, "unit": pl.String,
        "better": pl.String, "player_n": pl.Int64, "player_k": pl.Int64, "player_value": pl.Float64,
        "player_se": pl.Float64, "player_low": pl.Float64, "player_high": pl.Float64, "field_n": pl.Int64,
        "field_k": pl.Int64, "field_value": pl.Float64, "field_se": pl.Float64, "field_low": pl.Float64,
        "field_high": pl.Float64, "gap": pl.Float64, "z": pl.Float64, "verdict": pl.String,
    }  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


def leaks(
    con,
    player: str,
    filters: metrics.Filters | Mapping[str, Any] | None = None,
    min_n: int = 5,
) -> pl.DataFrame:
    """:func:`player_table` with the biggest gaps first (by |z|), leaving out metrics the player has
    fewer than ``min_n`` observations of and the plain hand count."""
    df = player_table(con, player, filters)
    return (
        df.filter((pl.col("player_n") >= min_n) & (pl.col("metric") != "hands") & pl.col("z").is_not_null())
        .with_columns(abs_z=pl.col("z").abs())
        .sort("abs_z", descending=True)
        .drop("abs_z")
    )


OVERVIEW_METRICS = (
    "hands", "avg_bid", "bid_bias", "exact_bid", "contract_made", "bags_per_hand", "nil_rate", "nil_success",
    "points_per_hand", "win_rate", "findings_per_100",
)  # fmt: skip
"""Metrics of :func:`overview` (one column each)."""


def overview(
    con,
    filters: metrics.Filters | Mapping[str, Any] | None = None,
    names: tuple[str, ...] = OVERVIEW_METRICS,
) -> pl.DataFrame:
    """Every player in one table (for ``spadework stats`` without ``--player``).

    Columns: ``player``, then for each metric ``<metric>`` (its value; rates 0..1) and ``<metric>_n``.
    Sorted by hands played, most first, then by name.
    """
    long = metrics.run_all(con, filters, by="player", names=names)
    if long.is_empty():
        return pl.DataFrame({"player": []}, schema={"player": pl.String})
    wide = long.pivot(on="metric", index="player", values="value")
    counts = long.pivot(on="metric", index="player", values="n")
    counts = counts.rename({m: f"{m}_n" for m in names if m in counts.columns})  # a metric with no rows has no column
    out = wide.join(counts, on="player", how="left")
    cols = ["player"] + [c for m in names for c in (m, f"{m}_n") if c in out.columns]
    out = out.select(cols)
    return out.sort(["hands", "player"], descending=[True, False], nulls_last=True) if "hands" in cols else out


def rich_overview(df: pl.DataFrame, names: tuple[str, ...] = OVERVIEW_METRICS):
    """A :class:`rich.table.Table` of :func:`overview` (names are plain text, never markup)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Players")
    table.add_column("Player")
    shown = [m for m in names if m in df.columns]
    for m in shown:
        table.add_column(metrics.REGISTRY[m].title, justify="right")
    for r in df.iter_rows(named=True):
        cells = [Text(str(r["player"]))]
        for m in shown:
            kind = metrics.REGISTRY[m].kind
            cells.append(Text(format_value(kind, r[m], None, None if kind == "count" else r.get(f"{m}_n"))))
        table.add_row(*cells)
    return table


def format_value(kind: str, value: float | None, se: float | None = None, n: int | None = None) -> str:
    """A value as people read it: rates in per cent, means with two decimals and their standard error.

    ``format_value("rate", 0.4321, n=120)`` -> ``"43.2% (n=120)"``;
    ``format_value("mean", 0.42, 0.11, 50)`` -> ``"0.42 ± 0.11 (n=50)"``; ``None`` -> ``"–"``.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        text = "–"
    elif kind == "rate":
        text = f"{100 * value:.1f}%"
    elif kind == "count":
        text = f"{value:.0f}"
    else:
        text = f"{value:.2f}"
        if se is not None and not math.isnan(se):
            text += f" ± {se:.2f}"
    if n is not None and kind != "count":
        text += f" (n={n})"
    return text


def rich_table(df: pl.DataFrame, player: str | None = None):
    """A :class:`rich.table.Table` of a :func:`player_table` (or :func:`leaks`) frame for the terminal.

    Text from the logs (the player's name) is passed as plain text, never as rich markup.
    """
    from rich.table import Table
    from rich.text import Text

    title = Text("Tendencies of ") + Text(player) + Text(" against the field") if player else None
    table = Table(title=title)
    for col, justify in (("Metric", "left"), ("Player", "right"), ("Field", "right"), ("Gap", "right"), ("", "left")):
        table.add_column(col, justify=justify)
    for r in df.iter_rows(named=True):
        gap = r["gap"]
        if gap is None:
            gap_text = "–"
        elif r["kind"] == "rate":
            gap_text = f"{100 * gap:+.1f} pts"
        else:
            gap_text = f"{gap:+.2f}"
        if r["z"] is not None:
            gap_text += f" (z {r['z']:+.1f})"
        style = {"leak": "red", "strength": "green"}.get(r["verdict"], "")
        table.add_row(
            Text(r["title"]),
            Text(format_value(r["kind"], r["player_value"], r["player_se"], r["player_n"])),
            Text(format_value(r["kind"], r["field_value"], r["field_se"], r["field_n"])),
            Text(gap_text),
            Text(r["verdict"], style=style),
        )
    return table


__all__ = [
    "LEAK_Z",
    "OVERVIEW_METRICS",
    "TABLE_COLUMNS",
    "format_value",
    "leaks",
    "open_database",
    "overview",
    "player_table",
    "rich_overview",
    "rich_table",
]
