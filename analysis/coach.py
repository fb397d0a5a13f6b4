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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from spadework.analysis import metrics, sample, stats
from spadework.analysis.present import NAME_WIDTH, printable
from spadework.parsers.state import NotChecked, require_checked

TABLE_COLUMNS = (
    "category", "metric", "title", "kind", "unit", "better",
    "player_n", "player_k", "player_value", "player_se", "player_low", "player_high",
    "field_n", "field_k", "field_value", "field_se", "field_low", "field_high",
    "gap", "z", "verdict",
)  # fmt: skip
"""Columns of :func:`player_table`."""

LEAK_Z = 2.0
"""|z| from which a gap in the wrong direction is called a ``leak`` (and in the right one a ``strength``)."""

VERDICT_MIN_N = stats.MIN_N
"""The fewest observations a player needs before a gap gets a verdict (the pooled z is a
large-sample test; see :data:`spadework.analysis.stats.MIN_N`)."""


def open_database(
    path: str | os.PathLike[str] = "data/sample/season.duckdb", freeze: bool = True, search_parents: bool = True
):
    """Open a spadework database read-only for analysis.

    A relative ``path`` is looked up from the working directory and then, with ``search_parents``
    (default), from each parent directory (so a notebook running in ``notebooks/`` finds
    ``data/sample``); the command line passes ``False`` for a ``--db`` the user gave, so a typo
    never opens another folder's database.  With ``freeze``
    (default) the per-player-hand relation is computed once (:func:`spadework.analysis.metrics.freeze`; safe,
    the connection is read-only) so every metric afterwards is fast.  Raises ``FileNotFoundError``
    naming the path when no such file exists, and :class:`spadework.parsers.state.NotChecked` (a
    sentence naming ``spadework check``) when the database was loaded after its last check or
    never checked; the sample season's database is rebuilt instead.
    """
    p = Path(path)
    if sample.is_sample_db(p):
        try:  # the sample's database is built from its log on first use
            p = sample.build_sample_db(None if not p.is_absolute() else p)
        except FileNotFoundError:
            pass
    candidates = [p] if p.is_absolute() or not search_parents else [d / p for d in (Path.cwd(), *Path.cwd().parents)]
    for c in candidates:
        if c.is_file():
            from spadework.parsers.db import connect

            con = connect(str(c), read_only=True)  # refuses a log or another tool's DuckDB file with a sentence
            try:
                require_checked(con, os.fspath(path) if c == candidates[0] else str(c))
            except NotChecked:
                con.close()
                raise
            from spadework.analysis.engine.engines import limit_reader_memory

            limit_reader_memory(con)
            if freeze:
                metrics.freeze(con)
            return con
    if sample.is_sample_db(p):  # the default: no --db given, and no checkout of spadework around
        raise FileNotFoundError(
            f"no database given, and the sample season ({sample.SAMPLE_LOG}, in spadework's source folder) is not "
            f"under this folder or above it: give --db FILE, a database filled by `spadework load` and `spadework check`"
        )
    if len(candidates) == 1:
        raise FileNotFoundError(f"no database at {path}")
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


def _verdict(z: float | None, better: str | None, n: int) -> str:
    """``leak`` / ``strength`` (or ``higher`` / ``lower`` for a metric with no better direction) when
    |z| >= :data:`LEAK_Z` over at least :data:`VERDICT_MIN_N` of the player's observations, else ``""``."""
    if z is None or abs(z) < LEAK_Z or n < VERDICT_MIN_N:
        return ""
    if better is None:
        return "higher" if z > 0 else "lower"
    good = (z > 0) == (better == "higher")
    return "strength" if good else "leak"


def _field_row(
    kind: str, scale: float, a: Mapping[str, Any], p: Mapping[str, Any], least: float | None = None,
    events: bool = False,
) -> dict[str, Any]:
    """The field's ``n, k, value, se, low, high``: everything (``a``, one metric run over every
    hand) less the player's part (``p``, the same metric over the player's hands).

    Rates subtract successes and opportunities; means subtract counts, sums and sums of squares
    (rebuilt from the mean and its standard error); counts subtract.  Values as :mod:`metrics` reports
    them (``scale`` applied to value, se, low and high; a mean's ``low`` not below ``least``, the
    metric's smallest possible value, as :func:`spadework.analysis.metrics.run` reports it; with
    ``events``, widened to the Poisson score interval as a mean of event counts is)."""
    an, pn = int(a.get("n") or 0), int(p.get("n") or 0)
    n = an - pn
    none = {"n": n, "k": None, "value": None, "se": None, "low": None, "high": None}
    if kind == "count":
        return none | {"value": float(n)}
    if n <= 0:
        if kind == "rate":  # as metrics.run reports a rate without opportunities: nothing known, (0, 1)
            return none | {"n": 0, "k": 0, "low": 0.0, "high": 1.0}
        return none | {"n": max(n, 0)}
    if kind == "rate":
        k = int(a.get("k") or 0) - int(p.get("k") or 0)
        low, high = stats.wilson_interval(k, n)
        return {"n": n, "k": k, "value": k / n, "se": stats.rate_se(k, n), "low": low, "high": high}

    def sums(r: Mapping[str, Any]) -> tuple[float, float]:
        rn = int(r.get("n") or 0)
        if not rn:
            return 0.0, 0.0
        total = float(r.get("total") or 0.0)
        mean = total / rn
        se = r.get("se")
        var = 0.0 if se is None or rn < 2 else (se / scale) ** 2 * rn
        return total, var * (rn - 1) + rn * mean * mean

    at, ass = sums(a)
    pt, pss = sums(p)
    mean = (at - pt) / n
    se = None
    if n >= 2:
        var = max(((ass - pss) - n * mean * mean) / (n - 1), 0.0)
        se = math.sqrt(var / n)
    low = None if se is None else mean - stats.Z95 * se
    high = None if se is None else mean + stats.Z95 * se
    if events:  # as metrics.run widens a mean of event counts
        p_low, p_high = stats.poisson_score_interval(max(at - pt, 0.0), n)
        low = p_low if low is None else min(low, p_low)
        high = p_high if high is None else max(high, p_high)
    if low is not None and least is not None:
        low = max(low, least)
    sc = lambda v: None if v is None else v * scale  # noqa: E731
    return {"n": n, "k": None, "value": sc(mean), "se": sc(se), "low": sc(low), "high": sc(high)}


_SCHEMA = {
    "category": pl.String, "metric": pl.String, "title": pl.String, "kind": pl.String, "unit": pl.String,
    "better": pl.String, "player_n": pl.Int64, "player_k": pl.Int64, "player_value": pl.Float64,
    "player_se": pl.Float64, "player_low": pl.Float64, "player_high": pl.Float64, "field_n": pl.Int64,
    "field_k": pl.Int64, "field_value": pl.Float64, "field_se": pl.Float64, "field_low": pl.Float64,
    "field_high": pl.Float64, "gap": pl.Float64, "z": pl.Float64, "verdict": pl.String,
}  # fmt: skip


def player_tables(
    con,
    players: Sequence[str] | None = None,
    filters: metrics.Filters | Mapping[str, Any] | None = None,
    names: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Every player's tendencies against the field in one frame: ``player`` then :data:`TABLE_COLUMNS`,
    one row per player and scalar metric (``names``, default every scalar metric, registry order).

    The **field** of a player is everything the player took no part in: for a metric counted per
    player-hand, the other players' hands; per side-hand (contracts, bags, points), the side-hands
    the player was not on; per hand (spades broken), the hands the player did not sit in; per game
    and side (games won), the sides the player was not on (so the opponents' side of the player's
    own games is in the field).  It is computed as the whole less the player's
    part, so the whole season is run twice (by player and all together) however many players there
    are.  ``players``: default every player.  Columns and verdicts as :func:`player_table`.
    Raises ``ValueError`` for an unknown player (the message lists the players).
    """
    known = metrics.players(con)
    wanted = list(known if players is None else players)
    metrics.require_players(con, wanted)
    base = metrics.Filters.of(filters).to_dict()
    base.pop("player", None)
    base.pop("exclude_player", None)
    metric_names = list(names or metrics.SCALAR_METRICS)
    with metrics.snapshot(con):
        mine = metrics.run_all(con, base, by="player", names=metric_names)
        every = metrics.run_all(con, base, by="all", names=metric_names)
    whole = {r["metric"]: r for r in every.iter_rows(named=True)} if not every.is_empty() else {}
    parts = {(r["player"], r["metric"]): r for r in mine.iter_rows(named=True)} if not mine.is_empty() else {}
    rows = []
    for player in wanted:
        for m in metric_names:
            meta = metrics.REGISTRY[m]
            p = parts.get((player, m), {})
            f = _field_row(meta.kind, meta.scale, whole.get(m, {}), p, meta.least, meta.events)
            pv, fv = p.get("value"), f["value"]
            z = _z(meta.kind, pv, p.get("se"), p.get("n"), p.get("k"), fv, f["se"], f["n"], f["k"])
            rows.append(
                {
                    "player": player,
                    "category": meta.category,
                    "metric": m,
                    "title": meta.title,
                    "kind": meta.kind,
                    "unit": meta.unit,
                    "better": meta.better,
                    "player_n": p.get("n", 0) or 0,
                    "player_k": p.get("k"),
                    "player_value": pv,
                    "player_se": p.get("se"),
                    "player_low": p.get("low"),
                    "player_high": p.get("high"),
                    "field_n": f["n"],
                    "field_k": f["k"],
                    "field_value": fv,
                    "field_se": f["se"],
                    "field_low": f["low"],
                    "field_high": f["high"],
                    "gap": None if pv is None or fv is None or meta.kind == "count" else pv - fv,
                    "z": None if meta.kind == "count" else z,
                    "verdict": _verdict(z, meta.better, p.get("n", 0) or 0),
                }
            )
    return pl.DataFrame(rows, schema={"player": pl.String, **_SCHEMA})


def player_table(
    con,
    player: str,
    filters: metrics.Filters | Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """One player's tendencies against the field, one row per scalar metric (registry order).

    Columns: :data:`TABLE_COLUMNS`.  ``player_*``: the metric over the player's hands; ``field_*``: over
    everything the player took no part in, under the same ``filters`` (their ``player`` and
    ``exclude_player`` are replaced; see :func:`player_tables` for what the field is per kind of metric);
    ``gap`` = player - field; ``z`` = gap over its standard error, pooling player and field
    (two-proportion pooled for rates, pooled variance for means, so a player with three identical
    values does not get a huge z; null when it cannot be estimated); ``verdict``: ``leak`` /
    ``strength`` when |z| >= 2 over at least :data:`VERDICT_MIN_N` observations and the metric has a
    better direction, ``higher`` / ``lower`` when it has none, else empty.  Units as in :func:`spadework.analysis.metrics.describe` (rates are 0..1).

    Raises ``ValueError`` when ``player`` never sat at a table (the message lists the players).
    """
    return player_tables(con, [player], filters).drop("player")


def leaks(
    con,
    player: str,
    filters: metrics.Filters | Mapping[str, Any] | None = None,
    min_n: int = VERDICT_MIN_N,
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

    Columns: ``player``, then for each metric ``<metric>`` (its value; rates 0..1), ``<metric>_n``
    (its opportunities) and ``<metric>_low``/``<metric>_high`` (its 95% interval, as
    :func:`spadework.analysis.metrics.run` gives it; null where it has none, e.g. for a count).
    Sorted by hands played, most first, then by name.
    """
    long = metrics.run_all(con, filters, by="player", names=names)
    if long.is_empty():
        return pl.DataFrame({"player": []}, schema={"player": pl.String})
    out = long.pivot(on="metric", index="player", values="value")
    for part in ("n", "low", "high"):
        wide = long.pivot(on="metric", index="player", values=part)
        wide = wide.rename({m: f"{m}_{part}" for m in names if m in wide.columns})  # a metric with no rows has no column
        out = out.join(wide, on="player", how="left")
    cols = ["player"] + [c for m in names for c in (m, f"{m}_n", f"{m}_low", f"{m}_high") if c in out.columns]
    out = out.select(cols)
    return out.sort(["hands", "player"], descending=[True, False], nulls_last=True) if "hands" in cols else out


TEXT_OVERVIEW = (
    ("hands", "Hands"), ("bid_bias", "Bid\nbias"), ("exact_bid", "Exact\nbids %"),
    ("contract_made", "Made\n%"), ("bags_per_hand", "Bags/\nhand"), ("nil_rate", "Nil\nbids %"),
    ("nil_success", "Nils\nmade %"), ("win_rate", "Games\nwon %"), ("findings_per_100", "Finds/\n100 h"),
)  # fmt: skip
"""The columns of the terminal overview (short headers so that it reads at 80 columns); ``--json``
and ``--csv`` carry every column of :func:`overview` with its ``n``."""

HIDDEN_IN_TEXT = ("hands", "hand_findings_per_100")
"""Metrics the terminal player table leaves out: the hand count is in its heading (a gap between a
player's hands and the field's means nothing), and all findings of the hands a player sat in is a
measure of tables and rounds, not of a player."""


def _num(value: float | None, signed: bool = False) -> str:
    """A mean as people read it: two decimals below 10, one below 100, none above; ``–`` for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text.replace("-", "−")


def short_value(kind: str, value: float | None, signed: bool = False) -> str:
    """A value in a narrow column: rates in per cent with one decimal (no sign), means by :func:`_num`,
    counts whole; ``–`` for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if kind == "rate":
        return f"{100 * value:+.1f}".replace("-", "−") if signed else f"{100 * value:.1f}"
    if kind == "count":
        return f"{value:,.0f}"
    return _num(value, signed)


def interval_text(kind: str, low: float | None, high: float | None) -> str:
    """A 95 % interval in a narrow column: ``29–40%`` for a rate, ``2.61–2.93`` for a mean; ``–`` for none."""
    if low is None or high is None:
        return "–"
    if kind == "rate":
        digits = 1 if high < 0.1 else 0
        return f"{100 * low:.{digits}f}–{100 * high:.{digits}f}%"
    return f"{_num(low)}–{_num(high)}"


OVERVIEW_NAME_CELLS = 14
"""Terminal cells of the overview's Player column (a longer name goes on over more lines)."""


def rich_overview(df: pl.DataFrame, columns: tuple[tuple[str, str], ...] = TEXT_OVERVIEW):
    """A :class:`rich.table.Table` of :func:`overview` that reads at 80 columns (names are plain text,
    never markup); the counts behind each value are in ``--json``/``--csv``."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from rich.cells import cell_len

    names = [printable(str(p), NAME_WIDTH) for p in df["player"]] if "player" in df.columns else []
    # a name wider than its column goes on over lines of its own: a blank line between the rows keeps
    # the rest of a name from reading as another player
    wraps = any(cell_len(n) > OVERVIEW_NAME_CELLS for n in names)
    table = Table(title="Players", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False, show_lines=wraps,
                  caption="Rates in per cent; bid bias = tricks taken - bid (below 0: overbids).\n"
                          "Each value's n and 95% interval: --json or --csv; one player: --player NAME.",
                  caption_justify="left")  # fmt: skip
    table.add_column("Player", overflow="fold", max_width=OVERVIEW_NAME_CELLS)
    shown = [(m, head) for m, head in columns if m in df.columns]
    for _, head in shown:
        table.add_column(head, justify="right", no_wrap=True)
    for name, r in zip(names, df.iter_rows(named=True)):
        cells = [Text(name)]
        for m, _ in shown:
            cells.append(Text(short_value(metrics.REGISTRY[m].kind, r[m], signed=m == "bid_bias")))
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
    """A :class:`rich.table.Table` of a :func:`player_table` (or :func:`leaks`) frame that reads at 80
    columns: metrics grouped by category, the player's value with its 95 % interval and ``n``, the
    field's value, the gap and the verdict.  The hand count (and :data:`HIDDEN_IN_TEXT`) is left out
    of the rows (see :func:`stats_heading`); metrics the player has no observation of are listed
    under the table instead of as empty rows.

    Text from the logs (the player's name) is passed as plain text, never as rich markup.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    rows = [r for r in df.iter_rows(named=True) if r["metric"] not in HIDDEN_IN_TEXT]
    empty = [r["title"] for r in rows if not r["player_n"] or r["player_value"] is None]
    rows = [r for r in rows if r["player_n"] and r["player_value"] is not None]
    notes = [
        "Rates in per cent. gap = player - field. leak / strength: the gap is at least two standard "
        f"errors, in the worse / better direction, over at least {VERDICT_MIN_N} observations; higher / lower: "
        "the same where neither is better."
    ]
    if empty:
        notes.append("No data for: " + ", ".join(empty) + ".")
    title = (Text(printable(player, NAME_WIDTH)) + Text(" against the field")) if player else None
    table = Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False, show_edge=False,
                  caption=Text("\n".join(notes)), caption_justify="left")  # fmt: skip
    table.add_column("Metric", overflow="fold", ratio=1)
    table.add_column("Player", justify="right", no_wrap=True)
    table.add_column("95%\ninterval", justify="right", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column("Field", justify="right", no_wrap=True)
    table.add_column("Gap", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    category = None
    for r in rows:
        if r["category"] != category:
            category = r["category"]
            table.add_row(Text(str(category).capitalize() + ":", style="bold"), *[Text("")] * 6)
        style = {"leak": "red", "strength": "green"}.get(r["verdict"], "")
        table.add_row(
            Text(r["title"]),
            Text(short_value(r["kind"], r["player_value"])),
            Text(interval_text(r["kind"], r["player_low"], r["player_high"])),
            Text(f"{r['player_n']:,}"),
            Text(short_value(r["kind"], r["field_value"])),
            Text(short_value(r["kind"], r["gap"], signed=True)),
            Text(r["verdict"] or "", style=style),
        )
    return table


def stats_heading(con, player: str, shown: str | None = None) -> str:
    """One line on who is compared with whom: ``ana: 251 hands in 20 games, 11 partners; the field:
    the other 11 players (638 hands without ana)``; ``shown``: how the name is written (default: as it is)."""
    metrics.prepare(con)
    src = metrics._player_hands_source(con)
    hands, games, partners = con.execute(
        f"SELECT count(DISTINCT (game_id, hand)), count(DISTINCT game_id), count(DISTINCT partner) "
        f"FROM {src} WHERE player = ?",
        [player],
    ).fetchone()
    others, field_hands = con.execute(
        f"SELECT count(DISTINCT player) FILTER (WHERE player IS DISTINCT FROM ?), count(DISTINCT (game_id, hand)) "
        f"FILTER (WHERE (game_id, hand) NOT IN (SELECT (game_id, hand) FROM {src} WHERE player = ?)) FROM {src}",
        [player, player],
    ).fetchone()
    name = player if shown is None else shown
    return (
        f"{name}: {hands:,} hand{'s' * (hands != 1)} in {games:,} game{'s' * (games != 1)}, "
        f"{partners:,} partner{'s' * (partners != 1)}; the field: the other {others:,} player{'s' * (others != 1)} "
        f"({field_hands:,} hand{'s' * (field_hands != 1)} without {name})"
    )


def stats_json(con, player: str | None = None) -> dict[str, Any]:
    """What ``spadework stats --json`` prints: ``{"players": [overview rows]}`` without a player, else
    ``{"player", "heading", "metrics": [player_table rows], "leaks": [decisions.leaks rows],
    "costliest_cards": [decisions.costliest_cards rows]}`` (rates 0..1, every column of the frames)."""
    if player is None:
        return {"players": overview(con).to_dicts()}
    from spadework.analysis import decisions

    table = player_table(con, player)
    out = {"player": player, "heading": stats_heading(con, player), "metrics": table.to_dicts()}
    # issue 14: the gaps against the winning players, ranked by leak size, and the costliest cards
    out["leaks"] = decisions.leaks(con, player).to_dicts()
    out["costliest_cards"] = decisions.costliest_cards(con, player).to_dicts()
    return out


def stats_frame(con, player: str | None = None) -> pl.DataFrame:
    """What ``spadework stats --csv`` writes: :func:`overview`, or :func:`player_table` with a leading
    ``player`` column."""
    if player is None:
        return overview(con)
    return player_table(con, player).select(pl.lit(player).alias("player"), pl.all())


# --------------------------------------------------------------------------------------------
# Tables for the notebooks (formatted; the notebooks only call these)


def default_player(con, filters: metrics.Filters | Mapping[str, Any] | None = None) -> str | None:
    """The player with the most hands under ``filters`` (ties by name), or ``None`` when there is none."""
    df = metrics.run(con, "hands", filters, by="player").filter(pl.col("player").is_not_null())
    if df.is_empty():
        return None
    return df.sort(["n", "player"], descending=[True, False]).row(0, named=True)["player"]


def pick_player(con, player: str | None = None, filters: metrics.Filters | Mapping[str, Any] | None = None) -> str:
    """``player``, or :func:`default_player` when it is ``None``: the player a coaching page is about.

    Raises ``ValueError`` with a sentence when no player has a hand (under ``filters``): a database
    of load errors only, or an event with no hands; and for a ``player`` no hand names (a typo:
    the message lists the players)."""
    if player is not None:
        metrics.require_players(con, [player])
    chosen = player or default_player(con, filters)
    if chosen is None:
        where = f" under {metrics.Filters.of(filters).to_dict()}" if filters else ""
        raise ValueError(
            f"no player has a hand in this database{where}: load logs with `spadework load` and check them with "
            f"`spadework check`, or choose other filters"
        )
    return chosen


def tables_of(con, player: str | None, filters: metrics.Filters | Mapping[str, Any] | None = None) -> list[tuple]:
    """The ``(table, round)`` pairs where ``player`` sat (to outline them in the findings heat map)."""
    if player is None:
        return []
    f = {**metrics.Filters.of(filters).to_dict(), "player": player}
    return metrics.run(con, "hands", f, by=["table", "round"]).select("table_name", "round").rows()


def metric_table(df: pl.DataFrame, metric: str, key: str | None = None, highlight: str | None = None,
                 title: str | None = None):  # fmt: skip
    """A :func:`spadework.analysis.metrics.run` frame as a readable table: the group, ``n``, the value
    (rounded, in per cent for a rate) and its 95 % interval, best first where the metric has a better
    direction; rows of ``highlight`` (a player, also inside a partnership's name) marked."""
    from spadework.analysis.present import Table

    meta = metrics.REGISTRY[metric]
    keys = [c for c in df.columns if c not in metrics.OUTPUT_COLUMNS]
    key = key or (keys[0] if keys else "scope")
    rows = df.with_columns(
        interval=pl.struct("low", "high").map_elements(
            lambda r: interval_text(meta.kind, r["low"], r["high"]), return_dtype=pl.String)
    )  # fmt: skip
    if meta.better is not None:
        rows = rows.sort("value", descending=meta.better == "higher", nulls_last=True)
    extra = [(k, k.replace("_", " "), "text") for k in keys if k != key]
    kind = "rate" if meta.kind == "rate" else "int" if meta.kind == "count" else "mean"
    cols = [(key, key.replace("_", " "), "text"), *extra, ("n", "n", "int"), ("value", meta.title, kind),
            ("interval", "95% interval", "text")]  # fmt: skip
    mark = None
    if highlight is not None:
        rows = rows.with_columns(_mine=pl.col(key).cast(pl.String).str.split(" & ").list.contains(highlight))
        mark = ("_mine", True)
    return Table(rows, cols, title=title or meta.title, note=f"{meta.description} ({meta.unit})", highlight=mark)


def tendencies(con, player: str, filters: metrics.Filters | Mapping[str, Any] | None = None):
    """:func:`player_table` as a readable table (the hand counts and empty rows left out, as in ``stats``)."""
    from spadework.analysis.present import Table

    df = player_table(con, player, filters).filter(
        ~pl.col("metric").is_in(list(HIDDEN_IN_TEXT)) & (pl.col("player_n") > 0) & pl.col("player_value").is_not_null()
    )
    rows = [
        r | {"player_text": short_value(r["kind"], r["player_value"]) + ("%" if r["kind"] == "rate" else ""),
             "field_text": short_value(r["kind"], r["field_value"]) + ("%" if r["kind"] == "rate" else ""),
             "gap_text": short_value(r["kind"], r["gap"], signed=True) + (" pts" if r["kind"] == "rate" else ""),
             "interval": interval_text(r["kind"], r["player_low"], r["player_high"])}
        for r in df.iter_rows(named=True)
    ]  # fmt: skip
    cols = [("category", "category", "text"), ("title", "metric", "text"), ("player_text", player, "text"),
            ("interval", "95% interval", "text"), ("player_n", "n", "int"), ("field_text", "field", "text"),
            ("gap_text", "gap", "text"), ("z", "z", "signed"), ("verdict", "", "text")]  # fmt: skip
    return Table(rows, cols, title=f"{player} against the field",
                 note="The field is everything the player took no part in. leak / strength: a gap of two standard "
                      f"errors or more in the worse / better direction, over at least {VERDICT_MIN_N} observations.")  # fmt: skip


def leak_table(con, player: str, filters: metrics.Filters | Mapping[str, Any] | None = None, min_n: int = VERDICT_MIN_N):
    """The leak list (:func:`leaks`, biggest gaps first) as a readable table, leaks and strengths only."""
    from spadework.analysis.present import Table

    df = leaks(con, player, filters, min_n).filter(
        pl.col("verdict").is_in(["leak", "strength"]) & ~pl.col("metric").is_in(list(HIDDEN_IN_TEXT))
    )
    rows = [r | {"player_text": short_value(r["kind"], r["player_value"]) + ("%" if r["kind"] == "rate" else ""),
                 "field_text": short_value(r["kind"], r["field_value"]) + ("%" if r["kind"] == "rate" else ""),
                 "what": metrics.REGISTRY[r["metric"]].description}
            for r in df.iter_rows(named=True)]  # fmt: skip
    cols = [("verdict", "", "text"), ("title", "metric", "text"), ("player_text", player, "text"),
            ("field_text", "field", "text"), ("z", "z", "signed"), ("player_n", "n", "int"), ("what", "what it measures", "text")]  # fmt: skip
    note = None if rows else (f"No leak and no strength: every gap of {player} to the field is within two standard errors "
                              f"(or rests on fewer than {VERDICT_MIN_N} observations).")
    return Table(rows, cols, title=f"Leaks and strengths of {player}", note=note)


def findings_table(df: pl.DataFrame, highlight: str | None = None, title: str = "Findings"):
    """:func:`spadework.analysis.metrics.findings` as a readable table (the message in full); the rows of
    ``highlight`` (a player) marked."""
    from spadework.analysis.present import Table

    cols = [("game_id", "game", "text"), ("hand", "hand", "int"), ("trick", "trick", "int"), ("seat", "seat", "text"),
            ("player", "player", "text"), ("code", "finding", "text"), ("message", "message", "text")]  # fmt: skip
    return Table(df, cols, title=title, highlight=("player", highlight) if highlight else None)


def code_table(found: pl.DataFrame, title: str = "Findings by code"):
    """How many findings of each code and in how many hands (``found``: :func:`metrics.findings`)."""
    from spadework.analysis.present import Table

    df = found.group_by("code").agg(findings=pl.len(), hands=pl.struct("game_id", "hand").n_unique()) if found.height \
        else pl.DataFrame(schema={"code": pl.String, "findings": pl.Int64, "hands": pl.Int64})  # fmt: skip
    df = df.sort(["findings", "code"], descending=[True, False])
    return Table(df, [("code", "finding", "text"), ("findings", "findings", "int"), ("hands", "hands", "int")], title=title)


def mismatch_table(df: pl.DataFrame, title: str = "Score mismatches"):
    """:func:`metrics.score_mismatches` as a readable table."""
    from spadework.analysis.present import Table

    cols = [("game_id", "game", "text"), ("hand", "hand", "int"), ("table_name", "table", "text"), ("round", "round", "text"),
            ("side", "side", "text"), ("field", "what", "text"), ("recorded", "recorded", "text"),
            ("expected", "by the rules", "text"), ("message", "message", "text")]  # fmt: skip
    note = None if df.height else "None: every recorded score agrees with the recomputed one."
    return Table(df, cols, title=title, note=note)


def first_finding_hand(con, player: str | None = None, filters: metrics.Filters | Mapping[str, Any] | None = None,
                       fallback: bool = True) -> tuple[str, int] | None:  # fmt: skip
    """``(game_id, hand)`` of the first finding at ``player``'s seat (with ``fallback``, else of any
    finding) to replay; ``None`` when there is none."""
    tries = [{**metrics.Filters.of(filters).to_dict(), "player": player}] if player else []
    if fallback or not player:
        tries.append(filters)
    for f in tries:
        df = metrics.findings(con, f).filter(pl.col("hand").is_not_null())
        if not df.is_empty():
            r = df.row(0, named=True)
            return r["game_id"], r["hand"]
    return None


__all__ = [
    "LEAK_Z",
    "VERDICT_MIN_N",
    "OVERVIEW_METRICS",
    "TABLE_COLUMNS",
    "format_value",
    "leaks",
    "open_database",
    "overview",
    "player_table",
    "player_tables",
    "code_table",
    "default_player",
    "first_finding_hand",
    "mismatch_table",
    "findings_table",
    "interval_text",
    "leak_table",
    "metric_table",
    "tables_of",
    "tendencies",
    "rich_overview",
    "rich_table",
    "short_value",
    "stats_frame",
    "stats_heading",
    "stats_json",
    "TEXT_OVERVIEW",
    "HIDDEN_IN_TEXT",
]
