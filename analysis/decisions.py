"""Decision metrics for coaches (issue 14 item 4): each player's gaps against the winning players.

The per-player numbers are named metrics of :mod:`spadework.analysis.metrics` (category ``decisions``:
``play_accuracy``, ``tricks_lost_per_100``, ``bid_vs_hand``, ``bid_miss_vs_hand``, ``unsound_nils``,
``unsound_nils_made``, ``nils_above_chance``), so they carry ``n`` and an interval, take the usual
filters and groupings and appear in :func:`spadework.analysis.coach.player_table`.  This module adds what
is not one number per group:

* :func:`winners`: the players a coach holds up as the model, ranked by win rate;
* :func:`leaks`: one player's gaps against those winners, ranked by **leak size** = the gap per
  opportunity times the player's opportunities (as poker trackers rank leaks: a small gap on many
  hands costs more than a big one on few), each with a 95 % interval;
* :func:`costliest_cards`: the cards that threw most tricks away (``card_costs``), with their game,
  hand and trick for the replay; :func:`bid_judgements`, :func:`nil_judgements`: a player's bids and
  nils against the hand's value;
* :func:`ensure_tables`: stand-ins so every metric runs on a database that lacks ``hand_values``
  (computed on first use, :mod:`spadework.analysis.handvalue`) or ``card_costs`` (empty until
  ``spadework analyse`` has run).

Units: as each metric's ``unit``; a leak is counted in the metric's own events (tricks, nils, hands,
plays: see ``leak_unit``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from spadework.analysis import metrics, stats
from spadework.analysis.present import NAME_WIDTH, printable
from spadework.parsers.schema import ANALYSIS_TABLES

CARD_COSTS_STANDIN = ANALYSIS_TABLES["card_costs"]
"""Columns of the empty ``card_costs`` stand-in: the table's own DDL (written by ``spadework analyse``)."""

LEAK_METRICS: tuple[str, ...] = (
    "bid_bias", "exact_bid", "bid_vs_hand", "bid_miss_vs_hand",
    "set_rate", "bags_per_hand", "bag_share", "bag_penalties_per_game",
    "nil_rate", "nil_success", "nil_cover", "nil_defence", "unsound_nils", "nils_above_chance",
    "ruff_when_void", "trump_partner_winner", "overtricks_after_safe",
    "play_accuracy", "tricks_lost_per_100", "findings_per_100",
)  # fmt: skip
"""The metrics :func:`leaks` compares by default: habits a player can change (results such as points and
wins are what the habits produce, so they are left out)."""

LEAK_COLUMNS: tuple[str, ...] = (
    "category", "metric", "title", "kind", "unit", "better",
    "player_n", "player_value", "player_low", "player_high",
    "winners_n", "winners_value", "winners_low", "winners_high",
    "gap", "gap_low", "gap_high", "direction", "leak", "leak_low", "leak_high", "leak_unit", "significant",
    "winners",
)  # fmt: skip
"""Columns of :func:`leaks` (``winners``: the players compared with, comma-separated)."""


# --------------------------------------------------------------------------------------------
# Tables the decision metrics read


def ensure_tables(con, names: Sequence[str] = ("hand_values", "card_costs")) -> None:
    """Make ``hand_values`` / ``card_costs`` queryable on ``con`` (read-only is fine; the file is never changed).

    ``hand_values`` (and ``hand_value_fit``) missing or computed before the last load: fresh ones in
    temporary tables (:func:`spadework.analysis.handvalue.ensure_hand_values`).  ``card_costs`` missing:
    an empty temporary table (the card metrics then count no card), dropped once the database has the
    real table (say, ``spadework analyse`` ran since).
    """
    existing = metrics.existing_relations(con)
    where = existing.get("card_costs", set())
    if "temp" in where and where - {"temp"}:
        con.execute("DROP TABLE temp.main.card_costs")
    if "hand_values" in names:
        from spadework.analysis.handvalue import ensure_hand_values

        ensure_hand_values(con)
    if "card_costs" in names and "card_costs" not in existing:
        con.execute(f"CREATE TEMP TABLE card_costs ({CARD_COSTS_STANDIN})")


def has_card_costs(con) -> bool:
    """True when the database holds double-dummy card costs (``spadework analyse`` has run)."""
    ensure_tables(con, ("card_costs",))
    return bool(con.execute("SELECT count(*) > 0 FROM card_costs").fetchall()[0][0])


# --------------------------------------------------------------------------------------------
# The winning players


LEAK_MIN_N = stats.MIN_N
"""The fewest opportunities a metric needs for a player before :func:`leaks` compares it."""


def winners(
    con,
    filters: metrics.Filters | Mapping[str, Any] | None = None,
    min_games: int = 5,
    share: float = 0.25,
) -> pl.DataFrame:
    """Players ranked by win rate over finished games (ties: points per hand), the best ``share`` of those
    with at least ``min_games`` games marked as the winners (at least one).

    Columns: ``rank, player, games, wins, win_rate, win_low, win_high`` (Wilson 95 %),
    ``points_per_hand``, ``winner`` (bool).  Players below ``min_games`` are listed last, never winners
    (when nobody has ``min_games``, every player with a finished game is eligible).
    """
    with metrics.snapshot(con):
        wr = metrics.run(con, "win_rate", filters, by="player")
        pts = metrics.run(con, "points_per_hand", filters, by="player")
    df = (
        wr.select("player", pl.col("n").alias("games"), pl.col("k").alias("wins"), pl.col("value").alias("win_rate"),
                  pl.col("low").alias("win_low"), pl.col("high").alias("win_high"))
        .join(pts.select("player", pl.col("value").alias("points_per_hand")), on="player", how="left")
        .filter(pl.col("player").is_not_null())
        .with_columns(eligible=pl.col("games") >= min_games)
    )  # fmt: skip
    if df.height and not df["eligible"].any():  # a small database: anyone with a finished game
        df = df.with_columns(eligible=pl.col("games") >= 1)
    df = (
        df.sort(["eligible", "win_rate", "points_per_hand", "player"], descending=[True, True, True, False],
              nulls_last=True)
    )  # fmt: skip
    eligible = int(df["eligible"].sum()) if df.height else 0
    top = max(1, math.ceil(share * eligible)) if eligible else 0
    return df.with_columns(
        rank=pl.int_range(1, df.height + 1, dtype=pl.Int64),
        winner=pl.int_range(0, df.height) < top,
    ).select("rank", "player", "games", "wins", "win_rate", "win_low", "win_high", "points_per_hand", "winner")


# --------------------------------------------------------------------------------------------
# Leaks


def _rate_diff_interval(p1, l1, u1, p2, l2, u2) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p1 - p2 from the two Wilson intervals."""
    d = p1 - p2
    return (d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def _leak_unit(m: metrics.Metric) -> str:
    unit = m.unit
    if m.kind == "rate":
        return unit.removeprefix("share of ")
    if m.scale != 1.0 and " / " in unit:
        return unit.split(" / ")[0]
    return unit


def _leak_row(m: metrics.Metric, p: Mapping[str, Any], w: Mapping[str, Any]) -> dict[str, Any]:
    pv, wv, n = p.get("value"), w.get("value"), p.get("n") or 0
    row = {
        "category": m.category, "metric": m.name, "title": m.title, "kind": m.kind, "unit": m.unit,
        "better": m.better, "player_n": n, "player_value": pv, "player_low": p.get("low"),
        "player_high": p.get("high"), "winners_n": w.get("n") or 0, "winners_value": wv,
        "winners_low": w.get("low"), "winners_high": w.get("high"), "gap": None, "gap_low": None, "gap_high": None,
        "direction": "", "leak": None, "leak_low": None, "leak_high": None, "leak_unit": _leak_unit(m),
        "significant": False,
    }  # fmt: skip
    if pv is None or wv is None or not n:
        return row
    gap = pv - wv
    if m.kind == "rate":
        lo, hi = _rate_diff_interval(pv, p["low"], p["high"], wv, w["low"], w["high"])
    else:
        ses = [s for s in (p.get("se"), w.get("se")) if s is not None and not math.isnan(s)]
        half = stats.Z95 * math.sqrt(sum(s * s for s in ses)) if len(ses) == 2 else math.inf
        lo, hi = gap - half, gap + half
    per = n / m.scale  # opportunities, in the metric's unscaled units
    if m.better == "higher":
        leak, leak_lo, leak_hi = -gap * per, -hi * per, -lo * per
    elif m.better == "lower":
        leak, leak_lo, leak_hi = gap * per, lo * per, hi * per
    else:  # no better direction: any distance from the winners is the gap
        leak = abs(gap) * per
        if lo <= 0 <= hi:
            leak_lo, leak_hi = 0.0, max(abs(lo), abs(hi)) * per
        else:
            leak_lo, leak_hi = min(abs(lo), abs(hi)) * per, max(abs(lo), abs(hi)) * per
    row.update(
        gap=gap, gap_low=lo, gap_high=hi, direction="too high" if gap > 0 else "too low" if gap < 0 else "",
        leak=leak, leak_low=leak_lo, leak_high=leak_hi, significant=bool(leak_lo > 0),
    )  # fmt: skip
    return row


_LEAK_SCHEMA = {
    "category": pl.String, "metric": pl.String, "title": pl.String, "kind": pl.String, "unit": pl.String,
    "better": pl.String, "player_n": pl.Int64, "player_value": pl.Float64, "player_low": pl.Float64,
    "player_high": pl.Float64, "winners_n": pl.Int64, "winners_value": pl.Float64, "winners_low": pl.Float64,
    "winners_high": pl.Float64, "gap": pl.Float64, "gap_low": pl.Float64, "gap_high": pl.Float64,
    "direction": pl.String, "leak": pl.Float64, "leak_low": pl.Float64, "leak_high": pl.Float64,
    "leak_unit": pl.String, "significant": pl.Boolean,
}  # fmt: skip


def leaks(
    con,
    player: str,
    filters: metrics.Filters | Mapping[str, Any] | None = None,
    winning: Sequence[str] | None = None,
    names: Sequence[str] = LEAK_METRICS,
    min_n: int = LEAK_MIN_N,
) -> pl.DataFrame:
    """``player``'s gaps against the winning players, biggest leak first (:data:`LEAK_COLUMNS`).

    ``winning``: the players to compare with (default: :func:`winners` under the same filters); the
    player is never compared with themself.  ``names``: the metrics (default :data:`LEAK_METRICS`).
    For each: ``gap`` = player - winners (the metric's units; rates 0..1) with a 95 % interval
    (rates: Newcombe's hybrid score interval from the two Wilson intervals; means: normal, from both
    standard errors); ``leak`` = the gap in the bad direction per opportunity times the player's
    opportunities (``player_n``; per-100 metrics unscaled first), in ``leak_unit`` (a rate's events,
    a mean's unit: tricks, nils, findings...), with ``leak_low``/``leak_high``; for metrics with no
    better direction (bid bias, nil rate...) the distance either way is the leak and ``direction``
    says which.  A negative leak is a strength.  ``significant``: ``leak_low > 0``.  Metrics with
    fewer than ``min_n`` opportunities for the player are left out.

    Empty (same columns) when there is no other winning player to compare with (no finished game).
    Raises ``ValueError`` for an unknown player (listing the players).
    """
    metrics.require_players(con, [player])
    base = _base(filters)
    with metrics.snapshot(con):
        if winning is None:
            group = _group_for(winners(con, base), player)
        else:
            group = [p for p in winning if p != player]
        if not group:  # no finished game, or nobody else: nothing to compare with
            return pl.DataFrame(schema=_LEAK_SCHEMA | {"winners": pl.String})
        mine = metrics.run_all(con, {**base, "player": player}, by="all", names=names)
        theirs = metrics.run_all(con, {**base, "player": group}, by="all", names=names)
    return _leak_frame(mine, theirs, group, names, min_n)


def _base(filters) -> dict[str, Any]:
    base = metrics.Filters.of(filters).to_dict()
    base.pop("player", None)
    base.pop("exclude_player", None)
    return base


def _group_for(w: pl.DataFrame, player: str) -> list[str]:
    """The winning players ``player`` is compared with: the winners, or for a winner the same number
    of the best other players."""
    winning = w.filter(pl.col("winner"))["player"].to_list()
    if player in winning:
        winning = [p for p in w.filter(pl.col("games") > 0)["player"].to_list() if p != player][: len(winning)]
    return [p for p in winning if p != player]


def _leak_frame(mine: pl.DataFrame, theirs: pl.DataFrame, group: Sequence[str], names: Sequence[str],
                min_n: int) -> pl.DataFrame:  # fmt: skip
    p_rows = {r["metric"]: r for r in mine.iter_rows(named=True)}
    w_rows = {r["metric"]: r for r in theirs.iter_rows(named=True)}
    rows = [_leak_row(metrics.REGISTRY[m], p_rows.get(m, {}), w_rows.get(m, {})) for m in names]
    df = pl.DataFrame(rows, schema=_LEAK_SCHEMA)
    return (
        df.filter((pl.col("player_n") >= min_n) & pl.col("leak").is_not_null())
        .sort(["leak", "metric"], descending=[True, False])
        .with_columns(pl.lit(", ".join(group)).alias("winners"))
    )


def all_leaks(
    con,
    filters: metrics.Filters | Mapping[str, Any] | None = None,
    names: Sequence[str] = LEAK_METRICS,
    min_n: int = LEAK_MIN_N,
) -> pl.DataFrame:
    """:func:`leaks` for every player at once: ``player`` then :data:`LEAK_COLUMNS`, each player's
    biggest leak first.  The players' metrics are one run grouped by player and the winners' one run
    per distinct comparison group (one for everybody but the winners, one per winner), so a season of
    any number of players costs a few runs, not two per player."""
    base = _base(filters)
    frames = []
    with metrics.snapshot(con):
        w = winners(con, base)
        mine_all = metrics.run_all(con, base, by="player", names=names)
        runs: dict[tuple[str, ...], pl.DataFrame] = {}
        for player in metrics.players(con):
            group = _group_for(w, player)
            if not group:
                continue
            key = tuple(group)
            if key not in runs:
                runs[key] = metrics.run_all(con, {**base, "player": list(group)}, by="all", names=names)
            mine = mine_all.filter(pl.col("player") == player)
            frames.append(_leak_frame(mine, runs[key], group, names, min_n).select(pl.lit(player).alias("player"),
                                                                                    pl.all()))  # fmt: skip
    if not frames:
        return pl.DataFrame(schema={"player": pl.String} | _LEAK_SCHEMA | {"winners": pl.String})
    return pl.concat(frames)


# --------------------------------------------------------------------------------------------
# Cards, bids and nils one by one


def _player_hands(con, tables: Sequence[str], player: str | None, filters) -> tuple[str, str, list[Any]]:
    """The per-player-hand source (the cached copy when there is one), and the WHERE clause with its
    parameters for ``player`` and the game-level ``filters``; makes sure ``tables`` exist first."""
    metrics.prepare(con)
    ensure_tables(con, tables)
    f = metrics.Filters.of(filters)
    where, params = metrics.Filters(
        event=f.event, period=f.period, ruleset=f.ruleset, table=f.table, round=f.round, game_id=f.game_id,
        player=player,
    ).where()  # fmt: skip
    src = metrics.CACHE_TABLE if metrics.CACHE_TABLE in metrics.existing_relations(con) else "sw_player_hands"
    return src, where, params


def costliest_cards(
    con, player: str | None = None, limit: int = 10, filters: metrics.Filters | Mapping[str, Any] | None = None
) -> pl.DataFrame:
    """The cards that cost most against double-dummy best play, worst first (ties: game, hand, trick).

    Columns: ``game_id, hand, trick, play_order, seat, player, card, cost, tricks_best, tricks_played,
    best_cards`` (from ``card_costs``; ``player`` from the hand's seat when the row has none).
    ``player`` limits it to one player's cards; ``filters`` take the game-level fields of
    :class:`~spadework.analysis.metrics.Filters` (event, period, ruleset, table, round, game_id).
    Empty when ``spadework analyse`` has not run.
    """
    src, where, params = _player_hands(con, ("card_costs",), player, filters)
    return con.sql(
        f"""
        SELECT cc.game_id, cc.hand, cc.trick, cc.play_order, cc.seat, coalesce(cc.player, ph.player) AS player,
               cc.card, cc.cost, cc.tricks_best, cc.tricks_played, CAST(cc.best_cards AS VARCHAR) AS best_cards
        FROM card_costs cc
        JOIN (SELECT * FROM {src} WHERE {where}) ph
          ON ph.game_id = cc.game_id AND ph.hand = cc.hand AND ph.seat = cc.seat
        WHERE cc.cost > 0
        ORDER BY cc.cost DESC, cc.game_id, cc.hand, cc.trick, cc.play_order
        LIMIT {int(limit)}
        """,
        params=params,
    ).pl()


def bid_judgements(con, player: str, filters: metrics.Filters | Mapping[str, Any] | None = None) -> pl.DataFrame:
    """Every hand of ``player`` with a hand value: ``game_id, hand, seat, bid, nil, blind, estimate,
    expected_tricks, bid_error, taken, nil_chance``, worst overbid first (numeric bids by ``bid_error``
    descending, then nils and blind bids).  ``filters``: as :func:`costliest_cards`."""
    src, where, params = _player_hands(con, ("hand_values",), player, filters)
    return con.sql(
        f"""
        SELECT hv.game_id, hv.hand, hv.seat, hv.bid, hv.nil, hv.blind, hv.estimate, hv.expected_tricks,
               hv.bid_error, hv.taken, hv.nil_chance
        FROM hand_values hv
        JOIN (SELECT game_id, hand, seat FROM {src} WHERE {where}) ph
          ON ph.game_id = hv.game_id AND ph.hand = hv.hand AND ph.seat = hv.seat
        ORDER BY hv.bid_error DESC NULLS LAST, hv.game_id, hv.hand
        """,
        params=params,
    ).pl()


def nil_judgements(con, player: str, filters: metrics.Filters | Mapping[str, Any] | None = None) -> pl.DataFrame:
    """``player``'s nil bids with the model's chance: ``game_id, hand, seat, blind, nil_chance, sound``
    (``nil_chance`` >= :data:`spadework.analysis.handvalue.NIL_SOUND`), ``made``, ``taken``; least sound first."""
    from spadework.analysis.handvalue import NIL_SOUND

    df = bid_judgements(con, player, filters).filter(pl.col("nil").fill_null(False))
    return df.select(
        "game_id", "hand", "seat", "blind", "nil_chance",
        (pl.col("nil_chance") >= NIL_SOUND).alias("sound"), (pl.col("taken") == 0).alias("made"), "taken",
    ).sort(["nil_chance", "game_id", "hand"])  # fmt: skip


@dataclass(frozen=True)
class Coaching:
    """Every player's judged decisions at once (for the report's player pages), see :func:`coaching`.

    ``leaks``: :func:`all_leaks`; ``bids``: per player the ``per_player`` worst overbids and underbids
    against the hand's value (``player, game_id, hand, seat, bid, expected_tricks, bid_error, taken,
    kind`` = ``over``/``under``); ``nils``: per player the least sound plain nils below
    :data:`spadework.analysis.handvalue.NIL_SOUND` (``player, game_id, hand, seat, nil_chance, taken``);
    ``cards``: per player the costliest cards (:func:`costliest_cards` columns); ``fit``: the
    ``hand_value_fit`` rows as ``{(model, term): value}``; ``has_card_costs``.
    """

    leaks: pl.DataFrame
    bids: pl.DataFrame
    nils: pl.DataFrame
    cards: pl.DataFrame
    fit: dict[tuple[str, str], float]
    has_card_costs: bool


def coaching(con, per_player: int = 3, cards_per_player: int = 5) -> Coaching:
    """Compute :class:`Coaching` for every player (a few metric runs and three queries, whatever the
    number of players)."""
    from spadework.analysis.handvalue import NIL_SOUND

    ensure_tables(con)
    metrics.prepare(con)
    with metrics.snapshot(con):
        found = all_leaks(con)
    bids = con.sql(
        f"""
        SELECT player, game_id, hand, seat, bid, expected_tricks, bid_error, taken,
               CASE WHEN bid_error > 0 THEN 'over' ELSE 'under' END AS kind
        FROM hand_values WHERE bid_error IS NOT NULL AND player IS NOT NULL
        QUALIFY (bid_error > 0 AND row_number() OVER (PARTITION BY player ORDER BY bid_error DESC, game_id, hand)
                 <= {int(per_player)})
             OR (bid_error < 0 AND row_number() OVER (PARTITION BY player ORDER BY bid_error, game_id, hand)
                 <= {int(per_player)})
        ORDER BY player, kind, abs(bid_error) DESC
        """
    ).pl()
    nils = con.sql(
        f"""
        SELECT player, game_id, hand, seat, nil_chance, taken FROM hand_values
        WHERE nil AND NOT blind AND nil_chance < {NIL_SOUND!r} AND player IS NOT NULL
        QUALIFY row_number() OVER (PARTITION BY player ORDER BY nil_chance, game_id, hand) <= {int(per_player)}
        ORDER BY player, nil_chance
        """
    ).pl()
    cards = con.sql(
        f"""
        SELECT coalesce(cc.player, sh.player) AS player, cc.game_id, cc.hand, cc.trick, cc.play_order, cc.seat,
               cc.card, cc.cost, cc.tricks_best, cc.tricks_played, CAST(cc.best_cards AS VARCHAR) AS best_cards
        FROM card_costs cc
        LEFT JOIN sw_seat_hands sh ON sh.game_id = cc.game_id AND sh.hand = cc.hand AND sh.seat = cc.seat
        WHERE cc.cost > 0
        QUALIFY row_number() OVER (PARTITION BY coalesce(cc.player, sh.player)
                                   ORDER BY cc.cost DESC, cc.game_id, cc.hand, cc.trick, cc.play_order)
                <= {int(cards_per_player)}
        ORDER BY player, cc.cost DESC, cc.game_id, cc.hand, cc.trick
        """
    ).pl()
    fit = {(m, t): v for m, t, v in con.execute("SELECT model, term, value FROM hand_value_fit").fetchall()}
    return Coaching(found, bids, nils, cards, fit, has_card_costs(con))


def card_annotations(con, game_id: str, hand: int) -> dict[tuple[int, int], dict[str, Any]]:
    """The double-dummy judgement of every card of one hand, for a replay: ``(trick, play_order) ->
    {"seat", "card", "cost", "best_cards", "tricks_best", "tricks_played"}`` (empty without ``card_costs``)."""
    ensure_tables(con, ("card_costs",))
    rows = con.execute(
        "SELECT trick, play_order, seat, card, cost, CAST(best_cards AS VARCHAR), tricks_best, tricks_played "
        "FROM card_costs WHERE game_id = ? AND hand = ? ORDER BY trick, play_order",
        [game_id, hand],
    ).fetchall()
    return {
        (t, o): {"seat": seat, "card": c, "cost": cost, "best_cards": best, "tricks_best": tb, "tricks_played": tp}
        for t, o, seat, c, cost, best, tb, tp in rows
    }


def winner_leak_table(df: pl.DataFrame, player: str | None = None, limit: int | None = 12):
    """:func:`leaks` as a reader sees it (a :class:`spadework.analysis.present.Table`): metric, the
    player's and the winners' values, ``n``, the leak with its 95 % interval and what it is counted in;
    rates in per cent, everything rounded, significant leaks marked."""
    from spadework.analysis.coach import short_value
    from spadework.analysis.present import Table

    rows = []
    for r in (df if limit is None else df.head(limit)).iter_rows(named=True):
        pct = "%" if r["kind"] == "rate" else ""
        rows.append(r | {
            "player_text": short_value(r["kind"], r["player_value"]) + pct,
            "winners_text": short_value(r["kind"], r["winners_value"]) + pct,
            "interval": f"{r['leak_low']:+.1f} to {r['leak_high']:+.1f}",
            "unit": r["leak_unit"] + (f", {r['direction']}" if r["better"] is None and r["direction"] else ""),
            "mark": "leak" if r["significant"] and r["leak"] > 0 else ("strength" if r["leak"] < 0 else ""),
        })  # fmt: skip
    cols = [("mark", "", "text"), ("title", "metric", "text"), ("player_text", player or "player", "text"),
            ("player_n", "n", "int"), ("winners_text", "winners", "text"), ("leak", "leak", "signed"),
            ("interval", "95% interval", "text"), ("unit", "counted in", "text")]  # fmt: skip
    group = df["winners"][0] if df.height else ""
    note = (f"Against the winning players ({group}): the gap in the worse direction times the player's "
            "opportunities n, in the events it is counted in; leak: its 95% interval is above 0."
            if df.height else "No other player has a finished game to compare with.")  # fmt: skip
    title = f"Leaks of {player} against the winning players" if player else "Leaks against the winning players"
    return Table(rows, cols, title=title, note=note, highlight=("mark", "leak"))


def bid_table(con, player: str, filters: metrics.Filters | Mapping[str, Any] | None = None, limit: int = 5):
    """The player's worst overbids and underbids against the hand's value (:func:`bid_judgements`), as a
    readable table: game, hand, bid, the hand's value and count, bid - value, tricks taken."""
    from spadework.analysis.present import Table

    df = bid_judgements(con, player, filters).filter(pl.col("bid_error").is_not_null())
    rows = pl.concat([df.head(limit).with_columns(what=pl.lit("overbid")),
                      df.tail(limit).reverse().with_columns(what=pl.lit("underbid"))]) if df.height else df  # fmt: skip
    rows = rows.filter((pl.col("what") == "overbid") == (pl.col("bid_error") > 0)) if df.height else rows
    cols = [("what", "", "text"), ("game_id", "game", "text"), ("hand", "hand", "int"), ("bid", "bid", "int"),
            ("expected_tricks", "hand value", "mean"), ("estimate", "count", "mean"),
            ("bid_error", "bid − value", "signed"), ("taken", "taken", "int")]  # fmt: skip
    return Table(rows, cols, title=f"Bids of {player} furthest from the hand's value",
                 note="hand value: the tricks an average player of this database takes with such cards; count: "
                      "the plain count of honours, spade length and short suits (docs/COACHING.md).")  # fmt: skip


def nil_table(con, player: str, filters: metrics.Filters | Mapping[str, Any] | None = None):
    """The player's nils with the model's chance (:func:`nil_judgements`), least sound first."""
    from spadework.analysis.handvalue import NIL_SOUND
    from spadework.analysis.present import Table

    cols = [("game_id", "game", "text"), ("hand", "hand", "int"), ("blind", "blind", "yesno"),
            ("nil_chance", "chance", "rate"), ("sound", "sound", "yesno"), ("made", "made", "yesno")]  # fmt: skip
    return Table(nil_judgements(con, player, filters), cols, title=f"Nils of {player}",
                 note=f"chance: how often a nil on such a hand is made (the nil model, fitted on this database's "
                      f"nils); sound: at least {100 * NIL_SOUND:.0f}%.")  # fmt: skip


def costliest_table(con, player: str, filters: metrics.Filters | Mapping[str, Any] | None = None, limit: int = 10):
    """The player's costliest cards (:func:`costliest_cards`) as a readable table."""
    from spadework.analysis.present import Table

    cols = [("game_id", "game", "text"), ("hand", "hand", "int"), ("trick", "trick", "int"), ("card", "card", "text"),
            ("cost", "cost", "int"), ("best_cards", "best", "text"), ("tricks_best", "tricks with best play", "int"),
            ("tricks_played", "after the card", "int")]  # fmt: skip
    df = costliest_cards(con, player, limit, filters)
    note = ("cost: tricks the side lost against double-dummy best play (every hand visible); best: the cards "
            "that lose none." if df.height else "No card costs: run `spadework analyse --db FILE` to judge every card.")  # fmt: skip
    return Table(df, cols, title=f"Costliest cards of {player}", note=note)


def replay_html(con, game_id: str, hand: int, standalone: bool = True) -> str:
    """One hand's replay (:func:`spadework.analysis.report.render_hand_replay`) with every card marked by
    its double-dummy cost and the best cards (``card_costs``), for a notebook's ``IPython.display.HTML``;
    ``standalone`` adds the report's CSS and both legends."""
    from spadework.analysis import report

    notes = {(t, n["seat"]): n for (t, _), n in card_annotations(con, game_id, hand).items()}
    body = report.render_hand_replay(report.hand_replay(con, game_id, hand), card_notes=notes)
    if not standalone:
        return body
    return f"<style>{report.CSS}</style>{report.REPLAY_LEGEND}{report.DD_LEGEND}{body}"


def worst_card_replay_html(con, player: str, filters: metrics.Filters | Mapping[str, Any] | None = None) -> str:
    """The replay (:func:`replay_html`) of the hand in which ``player`` played their costliest card, or a
    sentence when there is no card cost (``spadework analyse`` has not run) or no costly card."""
    import html

    worst = costliest_cards(con, player, limit=1, filters=filters)
    if worst.is_empty():
        return f"<p>No costly card of {html.escape(player)} to replay (card costs come from `spadework analyse`).</p>"
    return replay_html(con, worst["game_id"][0], int(worst["hand"][0]))


# --------------------------------------------------------------------------------------------
# Charts (Altair, from the aggregated frames above; data inline, as spadework.analysis.charts does)


def leak_chart(df: pl.DataFrame, highlight: str | None = None, title: str | None = None, limit: int = 12):
    """Horizontal bars of :func:`leaks` (the first ``limit`` rows): each leak with its 95 % interval,
    in the highlight colour of :mod:`spadework.analysis.charts` (``highlight``: the player, named in the
    title), solid when significant, pale when not; strengths (negative) to the left of zero.
    Tooltips carry the player's and the winners' values and n."""
    import altair as alt

    from spadework.analysis.charts import HIGHLIGHT, _rows

    rows = _rows(
        df.head(limit).with_columns(
            label=pl.col("title") + pl.when(pl.col("direction") != "").then(pl.lit(" (") + pl.col("direction") + ")")
            .otherwise(pl.lit("")),
        )
    )  # fmt: skip
    tooltip = [
        alt.Tooltip("title:N", title="metric"),
        alt.Tooltip("leak:Q", title="leak", format="+.1f"),
        alt.Tooltip("leak_unit:N", title="counted in"),
        alt.Tooltip("leak_low:Q", title="95% low", format="+.1f"),
        alt.Tooltip("leak_high:Q", title="95% high", format="+.1f"),
        alt.Tooltip("player_value:Q", title="player", format=".3f"),
        alt.Tooltip("player_n:Q", title="n (player)"),
        alt.Tooltip("winners_value:Q", title="winners", format=".3f"),
        alt.Tooltip("winners_n:Q", title="n (winners)"),
    ]
    base = alt.Chart(alt.Data(values=rows))
    y = alt.Y("label:N", title=None, sort=alt.EncodingSortField("leak", order="descending"))
    opacity = alt.condition("datum.significant", alt.value(0.85), alt.value(0.3))
    bars = base.mark_bar(color=HIGHLIGHT).encode(y=y, x=alt.X("leak:Q", title="leak (in the events of each metric)"),
                                                 opacity=opacity, tooltip=tooltip)  # fmt: skip
    rule = base.mark_rule(strokeWidth=2, color="#424242").encode(y=y, x="leak_low:Q", x2="leak_high:Q", tooltip=tooltip)
    if title is None:
        who = f"of {highlight} " if highlight else ""
        title = f"Leaks {who}against the winning players (95% interval)"
    return alt.layer(bars, rule).properties(title=title, width=420, height=max(60, 22 * len(rows)))


# --------------------------------------------------------------------------------------------
# For the terminal


def rich_leaks(df: pl.DataFrame, player: str | None = None, limit: int = 10):
    """A :class:`rich.table.Table` of :func:`leaks` (the first ``limit`` rows) that reads at 80 columns,
    in the style of :func:`spadework.analysis.coach.rich_table`.  Names are plain text, never markup."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from spadework.analysis.coach import short_value

    group = df["winners"][0] if df.height and "winners" in df.columns else ""
    title = Text("Leaks against the winning players") if player is None else (
        Text("Leaks of ") + Text(printable(player, NAME_WIDTH)) + Text(" against the winning players")
    )  # fmt: skip
    caption = Text(
        "winners: " + group + ". Rates in per cent. leak = the gap to the winners in the worse direction "
        "(either way where neither is better) x the player's opportunities n, counted in the unit shown; "
        "red: its 95% interval is above 0."
    )
    table = Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False, show_edge=False,
                  caption=caption, caption_justify="left")  # fmt: skip
    table.add_column("Metric", overflow="fold", ratio=1)
    table.add_column("Player", justify="right", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column("Winners", justify="right", no_wrap=True)
    table.add_column("Leak", justify="right", no_wrap=True)
    table.add_column("95%\ninterval", justify="right", no_wrap=True)
    table.add_column("", overflow="fold")
    for r in df.head(limit).iter_rows(named=True):
        style = "red" if r["significant"] and r["leak"] > 0 else ("green" if r["leak"] < 0 else "")
        note = r["leak_unit"] + (f", {r['direction']}" if r["better"] is None and r["direction"] else "")
        table.add_row(
            Text(r["title"]),
            Text(short_value(r["kind"], r["player_value"])),
            Text(f"{r['player_n']:,}"),
            Text(short_value(r["kind"], r["winners_value"])),
            Text(f"{r['leak']:+.1f}".replace("-", "−"), style=style),
            Text(f"{r['leak_low']:+.0f}–{r['leak_high']:+.0f}".replace("-", "−")),
            Text(note),
        )
    return table


def rich_costliest(df: pl.DataFrame, player: str | None = None):
    """A :class:`rich.table.Table` of :func:`costliest_cards` (80 columns; names are plain text)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    title = Text("Costliest cards") if player is None else Text("Costliest cards of ") + Text(printable(player, NAME_WIDTH))
    table = Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False, show_edge=False,
                  caption=Text("cost: tricks the side lost against double-dummy best play; best: the cards "
                               "that lose none"), caption_justify="left")  # fmt: skip
    table.add_column("Game", overflow="fold", ratio=1)
    for col in ("Hand", "Trick", "Seat", "Card", "Cost"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("Best", overflow="fold")
    for r in df.iter_rows(named=True):
        table.add_row(
            Text(printable(str(r["game_id"]), NAME_WIDTH)), Text(str(r["hand"])), Text(str(r["trick"])), Text(str(r["seat"])),
            Text(str(r["card"])), Text(str(r["cost"])), Text(str(r["best_cards"] or "")),
        )  # fmt: skip
    return table


def _no_leaks(con, player: str, filters) -> str:
    """Why :func:`leaks` found nothing to list: nobody to compare with, or too few chances."""
    with metrics.snapshot(con):
        group = _group_for(winners(con, _base(filters)), player)
    if not group:
        return "No leaks against the winning players: no other player has a finished game to compare with."
    return (f"No leaks against the winning players ({', '.join(group)}): {player} has fewer than {LEAK_MIN_N} chances "
            "at each compared metric, too few to judge.")


def rich_sections(con, player: str, filters: metrics.Filters | Mapping[str, Any] | None = None) -> list[Any]:
    """What ``spadework stats --player`` prints after the tendencies: the leak list against the winning
    players and, when ``card_costs`` has rows, the costliest cards.  Raises ``ValueError`` as :func:`leaks`."""
    found = leaks(con, player, filters)
    out: list[Any] = [rich_leaks(found, player) if found.height else _no_leaks(con, player, filters)]
    if has_card_costs(con):
        out.append(rich_costliest(costliest_cards(con, player, filters=filters), player))
    return out


__all__ = [
    "CARD_COSTS_STANDIN",
    "Coaching",
    "LEAK_COLUMNS",
    "LEAK_METRICS",
    "all_leaks",
    "bid_judgements",
    "card_annotations",
    "coaching",
    "costliest_cards",
    "ensure_tables",
    "has_card_costs",
    "leak_chart",
    "bid_table",
    "costliest_table",
    "nil_table",
    "winner_leak_table",
    "leaks",
    "nil_judgements",
    "replay_html",
    "rich_costliest",
    "rich_leaks",
    "rich_sections",
    "winners",
    "worst_card_replay_html",
]
