"""Results and standings: every game's result, and players and partnerships ranked, per event.

``standings(con)`` reads the checker's tables (``games``, ``hand_scores``, ``violations``) and the
loaded ``hands``, ``recorded_scores`` and the ``seats`` view, and returns a :class:`Standings` of three
polars frames:

* ``games``: one row per game: ``game_id, event, date, table_name, round, player_n .. player_w``
  (who sat where in the game's first hand), ``ns, ew`` (the sides' two names), ``total_ns,
  total_ew, winner`` (the recomputed ones; ``winner`` null while unfinished), ``hands``,
  ``findings`` (rows of ``violations``), ``recorded_total_ns, recorded_total_ew, recorded_winner``
  (what the log says after the hand that ended the game, else after its last hand) and
  ``result_differs`` (the log's final totals or winner differ from the recomputed ones).
* ``players`` and ``partnerships``: per event (``event``; null when the logs name none) and
  player (``player``) or partnership (``players``, the two names sorted): ``rank, games, finished,
  wins, losses, win_rate`` (wins over finished games), ``points_for, points_against, point_diff,
  avg_margin`` (point difference per game), ``sets`` (hands the side bid a positive contract and
  fell short), ``bags`` (the side's overtricks), both from the official score (after any renege
  penalty) of the hands up to the one that ended the game, ``decided_by`` (the tie-break that put the row below
  the one above it; ``tied`` when nothing did).

Points are the final recomputed totals of the player's side (RULES.md section 5): an unfinished
game counts its points but no win or loss.  A player is on the side where they sat in the game's
first hand.  The order follows a tie-break chain (:data:`TIEBREAKS`, default
:data:`DEFAULT_TIEBREAK`: wins, then head-to-head, then point difference); head-to-head counts the
wins over the entries still tied (players or partnerships that sat on the other side), and is applied
again among those it leaves tied when it split the group, before the next key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from spadework.analysis.present import NAME_WIDTH, printable
from spadework.parsers.state import require_checked

TIEBREAKS: dict[str, tuple[str, bool]] = {
    "wins": ("most games won", True),
    "win_rate": ("highest share of finished games won", True),
    "head_to_head": ("most wins over the others still tied", True),
    "point_diff": ("largest point difference (points for - against)", True),
    "avg_margin": ("largest average margin per game", True),
    "points_for": ("most points scored", True),
    "points_against": ("fewest points conceded", False),
    "sets": ("fewest sets", False),
    "bags": ("fewest bags", False),
    "games": ("most games played", True),
}
"""Tie-break keys: what each means and whether higher is better."""

DEFAULT_TIEBREAK: tuple[str, ...] = ("wins", "head_to_head", "point_diff")
"""The default order: wins, then head-to-head, then point difference."""

GAME_COLUMNS = (
    "game_id", "event", "date", "table_name", "round", "player_n", "player_e", "player_s", "player_w", "ns", "ew",
    "total_ns", "total_ew", "winner", "hands", "findings", "recorded_total_ns", "recorded_total_ew",
    "recorded_winner", "result_differs",
)  # fmt: skip
"""Columns of :attr:`Standings.games`."""

STANDING_COLUMNS = (
    "rank", "games", "finished", "wins", "losses", "win_rate", "points_for", "points_against", "point_diff",
    "avg_margin", "sets", "bags", "decided_by",
)  # fmt: skip
"""Columns of the players and partnerships frames after ``event`` and ``player`` / ``players``."""


def parse_tiebreak(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"wins,head_to_head,point_diff"`` (or a sequence) as a checked chain; ``None`` -> the default.
    Raises ``ValueError`` naming the known keys for an unknown one."""
    if text is None:
        return DEFAULT_TIEBREAK
    parts = [k.strip() for k in (text.split(",") if isinstance(text, str) else text)]
    keys = [k for k in parts if k]
    bad = [k for k in keys if k not in TIEBREAKS]
    if not keys:
        raise ValueError(f"the tie-break chain is empty: give one or more of {', '.join(TIEBREAKS)}, separated by commas")
    if bad:
        raise ValueError(f"unknown tie-break {', '.join(bad)}; known: {', '.join(TIEBREAKS)}")
    if len(keys) != len(parts):
        raise ValueError(f"an empty item in the tie-break chain {','.join(parts)!r}")
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"{', '.join(twice)} named twice in the tie-break chain")
    return tuple(keys)


def _frame(con, sql: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    return con.sql(sql, params=list(params)).pl() if params else con.sql(sql).pl()


def _ensure_views(con) -> None:
    from spadework.parsers.schema import ALL_TABLES, create_views

    names = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    for name, ddl in ALL_TABLES.items():  # a database from before a table existed
        if name not in names and name not in views:
            con.execute(f"CREATE TEMP TABLE {name} ({ddl})")
    if "seats" not in views:
        create_views(con, temp=True)


def game_results(con, event: str | None = None) -> pl.DataFrame:
    """Every checked game's result: :data:`GAME_COLUMNS`, ordered by event, date, round, table, game.

    ``event``: only that event's games.  Totals and winner are the checker's (``games``); the recorded
    ones are the log's after the hand that ended the game, else its last hand (``recorded_scores``, else
    ``hands.winner``).
    """
    _ensure_views(con)
    where = "WHERE f.event = ?" if event is not None else ""
    df = _frame(
        con,
        f"""
        WITH first AS (
            SELECT h.* FROM hands h
            QUALIFY row_number() OVER (PARTITION BY game_id ORDER BY hand) = 1
        ), last_rec AS (  -- the log's last record up to the hand that ended the game (RULES.md section 6)
            SELECT r.game_id, r.side, r.total, r.winner FROM recorded_scores r JOIN games g ON g.game_id = r.game_id
            WHERE g.ended_at_hand IS NULL OR r.hand <= g.ended_at_hand
            QUALIFY row_number() OVER (PARTITION BY r.game_id, r.side ORDER BY r.hand DESC) = 1
        ), rec AS (
            SELECT g.game_id,
                   any_value(ns.total) AS recorded_total_ns, any_value(ew.total) AS recorded_total_ew,
                   coalesce(any_value(ns.winner), any_value(ew.winner),
                            (SELECT max(winner) FROM hands h WHERE h.game_id = g.game_id
                                                              AND (g.ended_at_hand IS NULL OR h.hand <= g.ended_at_hand)),
                            (SELECT max(winner) FROM hands h WHERE h.game_id = g.game_id)) AS recorded_winner
            FROM games g
            LEFT JOIN last_rec ns ON ns.game_id = g.game_id AND ns.side = 'NS'
            LEFT JOIN last_rec ew ON ew.game_id = g.game_id AND ew.side = 'EW'
            GROUP BY g.game_id, g.ended_at_hand
        ), found AS (SELECT game_id, count(*) AS findings FROM violations GROUP BY game_id)
        SELECT g.game_id, f.event, f.date, f.table_name, f.round,
               f.player_n, f.player_e, f.player_s, f.player_w,
               concat_ws(' & ', f.player_n, f.player_s) AS ns, concat_ws(' & ', f.player_e, f.player_w) AS ew,
               g.total_ns, g.total_ew, g.winner, g.hands, coalesce(fd.findings, 0) AS findings,
               r.recorded_total_ns, r.recorded_total_ew, r.recorded_winner,
               (r.recorded_total_ns IS NOT NULL AND r.recorded_total_ns IS DISTINCT FROM g.total_ns)
               OR (r.recorded_total_ew IS NOT NULL AND r.recorded_total_ew IS DISTINCT FROM g.total_ew)
               OR (r.recorded_winner IS NOT NULL AND r.recorded_winner IS DISTINCT FROM g.winner) AS result_differs
        FROM games g
        JOIN first f ON f.game_id = g.game_id
        LEFT JOIN rec r ON r.game_id = g.game_id
        LEFT JOIN found fd ON fd.game_id = g.game_id
        {where}
        ORDER BY min(f.date) OVER (PARTITION BY f.event) NULLS LAST, f.event NULLS LAST, f.date NULLS LAST,
                 try_cast(f.round AS INTEGER) NULLS LAST, f.round,
                 try_cast(f.table_name AS INTEGER) NULLS LAST, f.table_name, g.game_id
        """,
        [event] if event is not None else [],
    )
    return df.select(GAME_COLUMNS)


def _entries(con, event: str | None) -> pl.DataFrame:
    """One row per game and player: ``game_id, event, player, partner, side, opponents`` (list),
    ``points_for, points_against, finished, won, sets, bags``."""
    where = "WHERE h.event = ?" if event is not None else ""
    return _frame(
        con,
        f"""
        WITH first_hand AS (SELECT game_id, min(hand) AS hand FROM hands GROUP BY game_id),
        first AS (
            SELECT s.game_id, s.seat, s.side, s.player, s.partner FROM seats s
            JOIN first_hand fh ON fh.game_id = s.game_id AND fh.hand = s.hand
            WHERE s.player IS NOT NULL
        ), opp AS (
            SELECT game_id, side, list(player ORDER BY player) AS opponents FROM first GROUP BY game_id, side
        ), side_hands AS (  -- the official score (after any renege penalty) of the hands up to the end
            SELECT hs.game_id, hs.side, count(*) FILTER (WHERE hs.contract > 0 AND NOT hs.made) AS sets,
                   CAST(coalesce(sum(hs.bags_this_hand), 0) AS BIGINT) AS bags
            FROM hand_scores hs JOIN games g ON g.game_id = hs.game_id
            WHERE g.ended_at_hand IS NULL OR hs.hand <= g.ended_at_hand
            GROUP BY hs.game_id, hs.side
        ), ev AS (SELECT game_id, any_value(event) AS event FROM hands h {where} GROUP BY game_id)
        SELECT f.game_id, ev.event, f.player, f.partner, f.side, o.opponents,
               CAST(CASE f.side WHEN 'NS' THEN g.total_ns ELSE g.total_ew END AS BIGINT) AS points_for,
               CAST(CASE f.side WHEN 'NS' THEN g.total_ew ELSE g.total_ns END AS BIGINT) AS points_against,
               g.winner IS NOT NULL AS finished, g.winner IS NOT DISTINCT FROM f.side AS won,
               coalesce(sh.sets, 0) AS sets, coalesce(sh.bags, 0) AS bags
        FROM first f
        JOIN ev ON ev.game_id = f.game_id
        JOIN games g ON g.game_id = f.game_id
        LEFT JOIN opp o ON o.game_id = f.game_id AND o.side <> f.side
        LEFT JOIN side_hands sh ON sh.game_id = f.game_id AND sh.side = f.side
        """,
        [event] if event is not None else [],
    )


def _aggregate(entries: pl.DataFrame, key: str) -> pl.DataFrame:
    return (
        entries.group_by("event", key)
        .agg(
            games=pl.len(),
            finished=pl.col("finished").sum(),
            wins=pl.col("won").sum(),
            points_for=pl.col("points_for").sum(),
            points_against=pl.col("points_against").sum(),
            sets=pl.col("sets").sum(),
            bags=pl.col("bags").sum(),
        )
        .with_columns(
            losses=pl.col("finished") - pl.col("wins"),
            win_rate=pl.when(pl.col("finished") > 0).then(pl.col("wins") / pl.col("finished")).otherwise(None),
            point_diff=pl.col("points_for") - pl.col("points_against"),
        )
        .with_columns(avg_margin=pl.col("point_diff") / pl.col("games"))
    )


def _rank(rows: list[dict[str, Any]], chain: Sequence[str], name: Callable[[dict], str],
          head_to_head: Callable[[list[dict]], dict[str, int]]) -> list[dict[str, Any]]:  # fmt: skip
    """Order ``rows`` by the tie-break ``chain``; set ``rank`` (shared when tied on every key),
    ``head_to_head`` (where it was applied) and ``decided_by``."""

    def order(group: list[dict], keys: Sequence[str]) -> list[list[dict]]:
        if len(group) <= 1 or not keys:
            return [sorted(group, key=name)] if group else []
        key, rest = keys[0], keys[1:]
        values = head_to_head(group) if key == "head_to_head" else {name(r): r.get(key) for r in group}
        higher = TIEBREAKS[key][1]
        distinct = sorted({v for v in values.values() if v is not None}, reverse=higher)
        buckets = [[r for r in group if values[name(r)] == v] for v in distinct]
        buckets += [[r for r in group if values[name(r)] is None]]
        out: list[list[dict]] = []
        for i, bucket in enumerate(b for b in buckets if b):
            # head-to-head is applied again among those it left tied, when it split the group
            again = key == "head_to_head" and 1 < len(bucket) < len(group)
            sub = order(bucket, keys if again else rest)
            if i > 0:
                sub[0][0].setdefault("_split", key)
            out.extend(sub)
        return out

    groups = order(rows, chain)
    ranked: list[dict[str, Any]] = []
    for group in groups:
        rank = len(ranked) + 1
        for j, r in enumerate(group):
            r["rank"] = rank
            if not ranked:
                r["decided_by"] = None
            elif j > 0:
                r["decided_by"] = "tied"
            else:
                r["decided_by"] = r.get("_split") or "tied"
            r.pop("_split", None)
            ranked.append(r)
    return ranked


def _standings(entries: pl.DataFrame, key: str, chain: Sequence[str], event_order: Sequence[str | None]) -> pl.DataFrame:
    """Ranked standings per event (in ``event_order``) for ``key`` (``player`` or ``players``)."""
    schema_key = {"player": pl.String, "players": pl.List(pl.String)}[key]
    cols = ["event", key, *STANDING_COLUMNS]
    if entries.is_empty():
        return pl.DataFrame(schema={"event": pl.String, key: schema_key, "rank": pl.Int64})
    agg = _aggregate(entries, key)
    name = (lambda r: r[key]) if key == "player" else (lambda r: " & ".join(r[key]))
    out: list[dict[str, Any]] = []
    present = set(agg["event"].to_list())
    events = [e for e in event_order if e in present] + sorted((e for e in present if e not in event_order),
                                                               key=lambda e: (e is None, e or ""))
    for event in events:
        part = agg.filter(pl.col("event").is_null() if event is None else pl.col("event") == event)
        games = entries.filter(pl.col("event").is_null() if event is None else pl.col("event") == event)
        results = games.select(key, "opponents" if key == "player" else "opp_pair", "won", "finished").rows()

        def h2h(group: list[dict], results=results) -> dict[str, int]:
            names = {name(r) for r in group}
            wins = dict.fromkeys(names, 0)
            for who, against, won, finished in results:
                me = who if key == "player" else " & ".join(who)
                if me not in names or not won or not finished:
                    continue
                others = against if key == "player" else [" & ".join(against)] if against else []
                if any(o in names for o in others or []):
                    wins[me] += 1
            return wins

        out.extend(_rank(part.to_dicts(), chain, name, h2h))
    return pl.DataFrame(out).select(cols) if out else pl.DataFrame(schema={c: pl.String for c in cols})


@dataclass
class Standings:
    """The result of :func:`standings`: ``games``, ``players`` and ``partnerships`` frames (see the
    module doc) and the tie-break ``chain`` that ordered them."""

    games: pl.DataFrame
    players: pl.DataFrame
    partnerships: pl.DataFrame
    chain: tuple[str, ...]

    @property
    def events(self) -> list[str | None]:
        """The events in the order shown (``None`` for games whose log names none)."""
        return list(dict.fromkeys(self.games["event"].to_list())) if not self.games.is_empty() else []

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``spadework standings --json``: ``{"tiebreak", "games": [{"game_id", "event", "table",
        "round", "date", "players": {"N": ..}, "total_ns", "total_ew", "winner", "hands", "findings",
        "recorded": {...}, "result_differs"}], "players": [...], "partnerships": [{"players": [a, b], ...}]}``."""
        games = []
        for g in self.games.iter_rows(named=True):
            games.append(
                {
                    "game_id": g["game_id"],
                    "event": g["event"],
                    "table": g["table_name"],
                    "round": g["round"],
                    "date": g["date"],
                    "players": {s: g[f"player_{s.lower()}"] for s in "NESW"},
                    "total_ns": g["total_ns"],
                    "total_ew": g["total_ew"],
                    "winner": g["winner"],
                    "hands": g["hands"],
                    "findings": g["findings"],
                    "recorded": {
                        "total_ns": g["recorded_total_ns"],
                        "total_ew": g["recorded_total_ew"],
                        "winner": g["recorded_winner"],
                    },
                    "result_differs": g["result_differs"],
                }
            )
        return {
            "tiebreak": list(self.chain),
            "games": games,
            "players": self.players.to_dicts(),
            "partnerships": self.partnerships.to_dicts(),
        }


def standings(
    con,
    tiebreak: str | Sequence[str] | None = None,
    by_event: bool = True,
    event: str | None = None,
) -> Standings:
    """Results and standings of every checked game (see the module doc for the frames).

    ``con``: a DuckDB connection with the loaded and checked tables (read-only is fine).
    ``tiebreak``: a chain of :data:`TIEBREAKS` keys (text ``"wins,point_diff"`` or a sequence; default
    :data:`DEFAULT_TIEBREAK`).  ``by_event``: one ranking per event (``False``: one over every game,
    ``event`` null).  ``event``: only that event (ranked under its name, whatever ``by_event``).  Raises ``ValueError`` for an unknown tie-break
    or an event no loaded hand names (the message lists the events there are), and
    :class:`~spadework.parsers.state.NotChecked` when the derived tables are missing or older than
    what is loaded (never a silently stale or empty answer: run ``spadework check`` first).
    """
    require_checked(con)
    chain = parse_tiebreak(tiebreak)
    if event is not None:
        known = [r[0] for r in con.execute("SELECT DISTINCT event FROM hands WHERE event IS NOT NULL ORDER BY 1").fetchall()]
        if event not in known:
            listed = ", ".join(repr(e) for e in known[:20]) + (" ..." if len(known) > 20 else "")
            raise ValueError(f"no loaded hand names the event {event!r}; " + (f"the events are {listed}" if known else "the logs name no event"))
    if event is not None:
        by_event = True  # the games of one event: one ranking either way, under the event's name
    games = game_results(con, event)
    entries = _entries(con, event)
    if not by_event:
        entries = entries.with_columns(event=pl.lit(None, dtype=pl.String))
    pairs = (
        entries.with_columns(players=pl.concat_list("player", "partner").list.sort())
        .filter(pl.col("partner").is_not_null())
        .unique(["game_id", "side"], keep="first", maintain_order=True)
    )
    opp = pairs.select("game_id", "side", opp_pair=pl.col("players"))
    pairs = pairs.join(
        opp.with_columns(side=pl.when(pl.col("side") == "NS").then(pl.lit("EW")).otherwise(pl.lit("NS"))),
        on=["game_id", "side"],
        how="left",
    )
    order = list(dict.fromkeys(games["event"].to_list())) if by_event else [None]
    return Standings(
        games=games,
        players=_standings(entries, "player", chain, order),
        partnerships=_standings(pairs, "players", chain, order),
        chain=chain,
    )


# --------------------------------------------------------------------------------------------
# Text


def score_text(ns: int | None, ew: int | None) -> str:
    """``537 / 308``; a negative total with a minus sign (``539 / −209``)."""
    f = lambda v: "–" if v is None else f"{v:,}".replace("-", "−")  # noqa: E731
    return f"{f(ns)} / {f(ew)}"


def result_text(g: dict[str, Any]) -> str:
    """``NS won`` / ``unfinished``, with ``⚠ log: EW won`` (or the log's totals) when the log's result differs."""
    text = f"{g['winner']} won" if g["winner"] else "unfinished"
    if g.get("result_differs"):
        if g.get("recorded_winner") is not None and g["recorded_winner"] != g["winner"]:
            text += f" ⚠ log: {g['recorded_winner']} won"
        elif g.get("recorded_winner") is None and g["winner"] is not None and g.get("recorded_total_ns") is None:
            text += " ⚠ log: no winner"
        else:
            text += f" ⚠ log: {score_text(g.get('recorded_total_ns'), g.get('recorded_total_ew'))}"
    return text


def _fmt_int(v: int | None) -> str:
    return "–" if v is None else f"{v:,}".replace("-", "−")


def _fmt_rate(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.0f}%"


def _fmt_num(v: float | None) -> str:
    return "–" if v is None else f"{v:+.1f}".replace("-", "−")


def rich_tables(st: Standings, limit_games: int | None = None) -> list[Any]:
    """What ``spadework standings`` prints: per event a heading, the players', the partnerships' and
    the games' tables (rich renderables; every name from the logs is plain text, never markup).
    ``limit_games``: most games listed per event (``None``: all)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    def standing_table(df: pl.DataFrame, key: str, title: str) -> Table:
        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False,
                  show_edge=False)  # fmt: skip
        for head, justify in (("#", "right"), ("Partnership" if key == "players" else "Player", "left"),
                              ("Games", "right"), ("Won", "right"), ("Win %", "right"), ("For", "right"),
                              ("Against", "right"), ("Margin", "right"), ("Sets", "right"), ("Bags", "right"),
                              ("Tie-break", "left")):  # fmt: skip
            t.add_column(head, justify=justify, overflow="fold")
        for r in df.iter_rows(named=True):
            who = " & ".join(r[key]) if key == "players" else r[key]
            decided = "" if r["decided_by"] in (None,) else r["decided_by"].replace("_", " ")
            if r["decided_by"] in ("wins",):
                decided = ""
            t.add_row(Text(f"{r['rank']}"), Text(printable(str(who), 2 * NAME_WIDTH + 3)), Text(f"{r['games']}"), Text(f"{r['wins']}"),
                      Text(_fmt_rate(r["win_rate"])), Text(_fmt_int(r["points_for"])), Text(_fmt_int(r["points_against"])),
                      Text(_fmt_num(r["avg_margin"])), Text(f"{r['sets']}"), Text(f"{r['bags']}"),
                      Text(decided))  # fmt: skip
        return t

    def games_table(df: pl.DataFrame) -> Table:
        t = Table(title="Games", title_justify="left", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False,
                  show_edge=False)  # fmt: skip
        cols = [("Game", "game_id", "left"), ("Tbl", "table_name", "right"), ("Rnd", "round", "right"),
                ("NS", "ns", "left"), ("EW", "ew", "left")]  # fmt: skip
        cols = [c for c in cols if c[1] not in ("table_name", "round") or df[c[1]].drop_nulls().len()]
        for head, _, justify in cols:
            t.add_column(head, justify=justify, overflow="fold", no_wrap=head == "Game")
        t.add_column("Score", justify="right", no_wrap=True)
        t.add_column("Result", no_wrap=True)
        t.add_column("Hands", justify="right")
        t.add_column("Finds", justify="right")
        for g in df.iter_rows(named=True):
            t.add_row(*[Text(printable(str(g[c] or ""), NAME_WIDTH)) for _, c, _ in cols], Text(score_text(g["total_ns"], g["total_ew"])),
                      Text(result_text(g)), Text(f"{g['hands']}"),
                      Text(f"{g['findings']}" if g["findings"] else ""))  # fmt: skip
        return t

    out: list[Any] = []
    by_event = st.players["event"].n_unique() > 1 or st.players["event"].drop_nulls().len() > 0 \
        if not st.players.is_empty() else False  # fmt: skip
    events = list(dict.fromkeys(st.players["event"].to_list())) if not st.players.is_empty() else [None]
    for event in events:
        sel = (lambda df: df.filter(pl.col("event").is_null())) if event is None else \
            (lambda df, e=event: df.filter(pl.col("event") == e))  # fmt: skip
        games = st.games if not by_event else sel(st.games)
        heading = f"{event}" if event is not None else ("All games" if not by_event else "Games without an event")
        finished = games.filter(pl.col("winner").is_not_null()).height
        out.append(Text(f"{heading}: {games.height} game{'s' * (games.height != 1)}, {finished} finished",
                        style="bold"))  # fmt: skip
        out.append(standing_table(sel(st.players), "player", "Players"))
        out.append(standing_table(sel(st.partnerships), "players", "Partnerships"))
        shown = games if limit_games is None else games.head(limit_games)
        out.append(games_table(shown))
        if shown.height < games.height:
            out.append(Text(f"... and {games.height - shown.height} more games (--json or --csv lists them)"))
    chain = ", then ".join(k.replace("_", " ") for k in st.chain)
    out.append(Text(f"Order: {chain}. Margin: point difference per game. Scores and winners are recomputed "
                    "by the rules; ⚠ marks a game whose log records another result."))  # fmt: skip
    return out


def display_tables(st: Standings, highlight: str | None = None) -> list[Any]:
    """The standings as notebook tables (:class:`spadework.analysis.present.Table`): per event the
    players, the partnerships and the games, rounded and labelled; rows of ``highlight`` (a player)
    marked, in the partnerships and games too."""
    from spadework.analysis.present import Table

    rank_cols = [("rank", "#", "int"), ("games", "games", "int"), ("wins", "won", "int"), ("win_rate", "win %", "rate"),
                 ("points_for", "for", "int"), ("points_against", "against", "int"), ("avg_margin", "margin", "signed"),
                 ("sets", "sets", "int"), ("bags", "bags", "int"), ("decided_by", "tie-break", "text")]  # fmt: skip
    out: list[Any] = []
    for event in st.events or [None]:
        sel = (lambda df: df.filter(pl.col("event").is_null())) if event is None else \
            (lambda df, e=event: df.filter(pl.col("event") == e))  # fmt: skip
        name = event if event is not None else "games without an event"
        players = sel(st.players) if not st.players.is_empty() else st.players
        pairs = sel(st.partnerships) if not st.partnerships.is_empty() else st.partnerships
        games = sel(st.games) if not st.games.is_empty() else st.games
        out.append(Table(players, [rank_cols[0], ("player", "player", "text"), *rank_cols[1:]],
                         title=f"{name}: players", highlight=("player", highlight)))  # fmt: skip
        out.append(Table(pairs, [rank_cols[0], ("players", "partnership", "text"), *rank_cols[1:]],
                         title=f"{name}: partnerships", highlight=("players", highlight)))  # fmt: skip
        rows = [g | {"score": score_text(g["total_ns"], g["total_ew"]), "result": result_text(g),
                     "seated": [g[f"player_{s}"] for s in "nesw"]} for g in games.iter_rows(named=True)]  # fmt: skip
        out.append(Table(rows, [("game_id", "game", "text"), ("table_name", "table", "text"), ("round", "round", "text"),
                                ("ns", "NS", "text"), ("ew", "EW", "text"), ("score", "NS / EW", "text"),
                                ("result", "result (⚠: the log says otherwise)", "text"), ("hands", "hands", "int"),
                                ("findings", "findings", "int")],
                         title=f"{name}: games", highlight=("seated", highlight)))  # fmt: skip
    return out


def csv_rows(st: Standings, table: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows and columns of one table of ``st`` for CSV: ``players``, ``partnerships`` or ``games``.
    Raises ``ValueError`` for another name."""
    if table == "games":
        return st.games.to_dicts(), list(GAME_COLUMNS)
    if table == "players":
        return st.players.to_dicts(), ["event", "player", *STANDING_COLUMNS]
    if table == "partnerships":
        rows = [r | {"players": " & ".join(r["players"])} for r in st.partnerships.to_dicts()]
        return rows, ["event", "players", *STANDING_COLUMNS]
    raise ValueError(f"unknown table {table!r}: players, partnerships or games")


__all__ = [
    "DEFAULT_TIEBREAK",
    "GAME_COLUMNS",
    "STANDING_COLUMNS",
    "Standings",
    "TIEBREAKS",
    "csv_rows",
    "display_tables",
    "game_results",
    "parse_tiebreak",
    "result_text",
    "rich_tables",
    "score_text",
    "standings",
]
