"""The static HTML report: ``build_report(con, out_dir)`` writes ``out_dir/index.html``.

One self-contained file: a summary, the players' main tendencies, the charts, the score mismatch
table and every finding with a trick-by-trick replay of its hand (the four hands, the bids, each
trick with the offending card marked, the scores).

**Charts** are Altair specs drawn in the browser by Vega-Embed.  The page must work with no network
at view time, and nothing big is vendored in the repository: the Vega, Vega-Lite and Vega-Embed
JavaScript is taken at build time from the installed ``vl-convert-python`` package
(``vl_convert.javascript_bundle()``, about 0.9 MB, the same versions vl-convert renders with) and
inlined once.  Tooltips (which carry ``n``) need that interactive rendering.  With
``interactive=False`` the charts are rendered to SVG by vl-convert and inlined instead: a smaller
page with no script at all, and no tooltips.

**Escaping**: every text that comes from a log (player names, events, tables, rounds, game ids,
card codes, messages) goes through :func:`html.escape`; chart specs are embedded as JSON in
``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as ``\\u003c`` etc., and
Vega draws text as text.  A player called ``<script>alert(1)</script>`` shows as that text.
A Content-Security-Policy meta tag forbids every network request from the page.
"""

from __future__ import annotations

import functools
import html
import json
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from spadework.analysis import charts, metrics
from spadework.parsers.cards import JOKERS, Deck

SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SUIT_ORDER = ("S", "H", "D", "C")
SEAT_NAMES = {"N": "North", "E": "East", "S": "South", "W": "West"}

PLAYER_COLUMNS = (
    "hands", "avg_bid", "bid_bias", "exact_bid", "contract_made", "bags_per_hand", "nil_rate", "nil_success",
    "points_per_hand", "win_rate", "findings_per_100",
)  # fmt: skip
"""Metrics in the report's player table."""

OPEN_REPLAYS = 25
"""Hand replays shown unfolded; the others start folded (``<details>``)."""

SMALL_MULTIPLES = ("bid_bias", "exact_bid", "set_rate", "bags_per_hand", "nil_rate", "findings_per_100")
"""Metrics in the players-side-by-side chart."""


def esc(value: Any) -> str:
    """HTML-escape any value (``None`` -> empty string)."""
    return "" if value is None else html.escape(str(value), quote=True)


def _dash(value: Any) -> str:
    return "–" if value is None else esc(value)


def _json_for_script(obj: Any) -> str:
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@functools.lru_cache(maxsize=1)
def vega_bundle() -> str:
    """The Vega + Vega-Lite + Vega-Embed JavaScript from the installed vl-convert (built once per process)."""
    import altair as alt
    import vl_convert

    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    try:
        return vl_convert.javascript_bundle(vl_version=f"v{major_minor}")
    except Exception:  # a vl-convert without that Vega-Lite version: its default
        return vl_convert.javascript_bundle()


# --------------------------------------------------------------------------------------------
# Hand replays


@dataclass
class HandReplay:
    """Everything a replay shows about one hand (seat-keyed dicts use ``"N" "E" "S" "W"``).

    ``deal``: the cards each seat held (from ``deals``, else what it played; ``None`` when neither);
    ``bids``: ``(order, seat, text)``; ``tricks``: ``(number, leader, {seat: card}, winner)``;
    ``scores``: one dict per side from ``hand_scores`` and ``recorded_scores``;
    ``findings``: the hand's ``violations`` rows as dicts.
    """

    game_id: str
    hand: int
    info: dict[str, Any]
    players: dict[str, str | None]
    deck: Deck
    deal: dict[str, list[str]] | None
    deal_inferred: bool
    bids: list[tuple[int, str, str]]
    tricks: list[tuple[int, str, dict[str, str], str | None]]
    taken: dict[str, int | None]
    scores: list[dict[str, Any]]
    findings: list[dict[str, Any]] = field(default_factory=list)


def _bid_text(nil: bool, blind: bool, bid: Any, value: Any) -> str:
    if nil:
        return "blind nil" if blind else "nil"
    shown = bid if bid is not None else value
    if isinstance(shown, float) and shown.is_integer():
        shown = int(shown)
    return f"blind {shown}" if blind else str(shown)


def hand_replays(con, hands: Iterable[tuple[str, int]]) -> list[HandReplay]:
    """Replays of the given ``(game_id, hand)`` pairs, in the order given, read in a few bulk queries."""
    wanted = list(dict.fromkeys((str(g), int(h)) for g, h in hands))
    if not wanted:
        return []
    metrics.prepare(con)
    values = ", ".join(f"({metrics._sql_str(g)}, {h})" for g, h in wanted)
    keys = f"(SELECT * FROM (VALUES {values}) k(game_id, hand))"

    def rows(sql: str) -> dict[tuple[str, int], list[dict[str, Any]]]:
        out: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
        for r in metrics._frame(con, sql).iter_rows(named=True):
            out[(r["game_id"], r["hand"])].append(r)
        return out

    info = rows(f"SELECT h.*, hr.ruleset, hr.deck FROM hands h JOIN {keys} k USING (game_id, hand) "
                "JOIN sw_hand_rules hr USING (game_id, hand)")  # fmt: skip
    deals = rows(f"SELECT d.* FROM deals d JOIN {keys} k USING (game_id, hand) ORDER BY seat, card_order")
    bids = rows(f"SELECT b.* FROM bids b JOIN {keys} k USING (game_id, hand) ORDER BY bid_order")
    plays = rows(f"SELECT p.* FROM plays p JOIN {keys} k USING (game_id, hand) ORDER BY trick, play_order")
    winners = rows(
        f"SELECT t.game_id, t.hand, t.trick, t.winner FROM sw_trick_results t JOIN {keys} k USING (game_id, hand)"
    )
    taken = rows(f"SELECT s.game_id, s.hand, s.seat, s.taken FROM sw_seat_hands s JOIN {keys} k USING (game_id, hand)")
    scores = rows(
        f"""SELECT sd.game_id, sd.hand, sd.side, hs.contract, hs.tricks, hs.made, hs.bags_this_hand, hs.bag_penalty,
                   hs.nil_points, hs.points, hs.total, hs.bags,
                   rs.points AS recorded_points, rs.total AS recorded_total, rs.bags AS recorded_bags
            FROM (SELECT k.game_id, k.hand, s.side FROM {keys} k CROSS JOIN (VALUES ('NS'), ('EW')) s(side)) sd
            LEFT JOIN (SELECT * FROM hand_scores WHERE scoring = 'as_played') hs
                   ON hs.game_id = sd.game_id AND hs.hand = sd.hand AND hs.side = sd.side
            LEFT JOIN recorded_scores rs ON rs.game_id = sd.game_id AND rs.hand = sd.hand AND rs.side = sd.side
            ORDER BY sd.side DESC"""
    )
    found = rows(f"SELECT v.* FROM violations v JOIN {keys} k USING (game_id, hand) ORDER BY trick NULLS FIRST, seat")
    out = []
    for key in wanted:
        if key not in info:
            continue
        h = info[key][0]
        deck = metrics.DECKS.get(h["deck"], metrics.DECKS["standard"])
        players = {s: h[f"player_{s.lower()}"] for s in "NESW"}
        by_seat: dict[str, list[str]] = {s: [] for s in "NESW"}
        inferred = False
        for d in deals.get(key, []):
            by_seat.setdefault(d["seat"], []).append(d["card"])
            inferred = inferred or bool(d["inferred"])
        tricks: dict[int, dict[str, str]] = {}
        leaders: dict[int, str] = {}
        for p in plays.get(key, []):
            tricks.setdefault(p["trick"], {})[p["seat"]] = p["card"]
            if p["play_order"] == 1:
                leaders[p["trick"]] = p["seat"]
        deal: dict[str, list[str]] | None = by_seat if any(by_seat.values()) else None
        if deal is None and tricks:
            deal = {s: [t[s] for _, t in sorted(tricks.items()) if s in t] for s in "NESW"}
            inferred = True
        win = {w["trick"]: w["winner"] for w in winners.get(key, [])}
        out.append(
            HandReplay(
                game_id=key[0],
                hand=key[1],
                info=h,
                players=players,
                deck=deck,
                deal=deal,
                deal_inferred=inferred,
                bids=[(b["bid_order"], b["seat"], _bid_text(b["nil"], b["blind"], b["bid"], b["bid_value"]))
                      for b in bids.get(key, [])],
                tricks=[(t, leaders.get(t, ""), cards, win.get(t)) for t, cards in sorted(tricks.items())],
                taken={t["seat"]: t["taken"] for t in taken.get(key, [])},
                scores=scores.get(key, []),
                findings=found.get(key, []),
            )
        )
    return out


def hand_replay(con, game_id: str, hand: int) -> HandReplay:
    """The replay of one hand.  Raises ``KeyError`` when the hand is not in the database."""
    found = hand_replays(con, [(game_id, hand)])
    if not found:
        raise KeyError(f"no hand {hand} of game {game_id!r} in the database")
    return found[0]


def card_html(card: str, bad: Iterable[str] = (), lead: bool = False) -> str:
    """A card as HTML: rank and suit symbol, red suits coloured, ``bad`` (finding codes) marked."""
    if card in JOKERS:
        label, cls = ("big joker" if card == "BJ" else "little joker"), "card joker"
        text = esc(card)
    else:
        rank, suit = card[:-1], card[-1:]
        symbol = SUIT_SYMBOLS.get(suit)
        text = esc(rank) + (symbol if symbol else esc(suit))
        cls = "card red" if suit in ("H", "D") else "card"
        label = card
    bad = list(bad)
    if lead:
        cls += " lead"
    title = esc(label)
    if bad:
        cls += " bad"
        title = esc(f"{label}: {', '.join(bad)}")
        text = "⚠" + text
    return f'<span class="{cls}" title="{title}">{text}</span>'


def _holding_html(cards: list[str], deck: Deck, bad: Mapping[str, list[str]]) -> str:
    groups: dict[str, list[str]] = {s: [] for s in SUIT_ORDER}
    other: list[str] = []
    for c in cards:
        try:
            suit = deck.suit(c)
        except KeyError:
            other.append(c)
            continue
        groups.setdefault(suit, []).append(c)
    lines = []
    for suit in list(groups):
        cs = sorted(groups[suit], key=lambda c: -deck.power(c))
        symbol = SUIT_SYMBOLS.get(suit, esc(suit))
        body = " ".join(card_html(c, bad.get(c, ())) for c in cs) or "—"
        lines.append(f'<div class="suit"><span class="sym">{symbol}</span> {body}</div>')
    if other:
        lines.append('<div class="suit">? ' + " ".join(card_html(c, bad.get(c, ())) for c in other) + "</div>")
    return "".join(lines)


def render_hand_replay(r: HandReplay, anchor: str | None = None) -> str:
    """HTML of one hand replay (a ``<section>``); every log text escaped; offending cards marked ⚠."""
    by_trick_seat: dict[tuple[int, str], list[str]] = defaultdict(list)
    by_card: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    bid_flags: dict[str, list[str]] = defaultdict(list)
    side_flags: dict[str, list[str]] = defaultdict(list)
    for f in r.findings:
        if f.get("trick") is not None and f.get("seat"):
            by_trick_seat[(f["trick"], f["seat"])].append(f["code"])
        if f.get("card") and f.get("seat"):
            by_card[f["seat"]][f["card"]].append(f["code"])
        if f.get("seat") and f.get("trick") is None and str(f["code"]).startswith(("BID", "BLIND")):
            bid_flags[f["seat"]].append(f["code"])
        if f.get("side") and f["code"] in ("SCORE_MISMATCH", "GAME_RESULT_MISMATCH"):
            side_flags[f["side"]].append(f"{f.get('field') or ''}")
    i = r.info
    meta = " · ".join(
        esc(x)
        for x in (
            f"game {r.game_id}",
            f"hand {r.hand}",
            i.get("event"),
            i.get("date"),
            f"table {i['table_name']}" if i.get("table_name") else None,
            f"round {i['round']}" if i.get("round") else None,
            f"rules {i.get('ruleset')}",
            f"dealer {i.get('dealer')}",
        )
        if x
    )
    parts = [f'<section class="replay"{f" id={chr(34)}{esc(anchor)}{chr(34)}" if anchor else ""}>']
    parts.append(f"<h3>{meta}</h3>")
    # findings of the hand
    parts.append('<table class="findings"><tr><th>code</th><th>trick</th><th>seat</th><th>player</th>'
                 "<th>card</th><th>message</th></tr>")  # fmt: skip
    for f in r.findings:
        seat = f.get("seat")
        parts.append(
            f"<tr><td class=code>{esc(f['code'])}</td><td>{esc(f.get('trick'))}</td><td>{esc(seat)}</td>"
            f"<td>{esc(r.players.get(seat) if seat else '')}</td>"
            f"<td>{card_html(f['card'], [f['code']]) if f.get('card') else ''}</td><td>{esc(f['message'])}</td></tr>"
        )
    parts.append("</table>")
    # the four hands
    if r.deal is not None:
        cells = {}
        for s in "NESW":
            name = r.players.get(s)
            cells[s] = (
                f'<div class="seat"><div class="who">{esc(SEAT_NAMES[s])}: <b>{esc(name)}</b>'
                f' <span class="taken">taken {esc(r.taken.get(s))}</span></div>'
                f"{_holding_html(r.deal.get(s, []), r.deck, by_card.get(s, {}))}</div>"
            )
        note = ' <span class="note">(deal inferred from the cards played)</span>' if r.deal_inferred else ""
        parts.append(
            f'<div class="compass">{note}<div class="pos-n">{cells["N"]}</div><div class="pos-w">{cells["W"]}</div>'
            f'<div class="pos-e">{cells["E"]}</div><div class="pos-s">{cells["S"]}</div></div>'
        )
    else:
        parts.append('<p class="note">No deal and no card play recorded for this hand.</p>')
    # bids
    if r.bids:
        bid_parts = []
        for _, seat, text in r.bids:
            flagged = bid_flags.get(seat)
            cls = ' class="bad"' if flagged else ""
            title = f' title="{esc(", ".join(flagged))}"' if flagged else ""
            bid_parts.append(f"<span{cls}{title}>{'⚠' if flagged else ''}{esc(seat)} {esc(text)}</span>")
        parts.append('<p class="bids">Bids: ' + " · ".join(bid_parts) + "</p>")
    # tricks
    if r.tricks:
        parts.append('<table class="tricks"><tr><th>trick</th><th>leader</th>'
                     + "".join(f"<th>{s} {esc(r.players.get(s))}</th>" for s in "NESW")
                     + "<th>winner</th></tr>")  # fmt: skip
        for number, leader, cards, winner in r.tricks:
            row = [f"<td>{number}</td><td>{esc(leader)}</td>"]
            for s in "NESW":
                card = cards.get(s)
                codes = by_trick_seat.get((number, s), [])
                cls = ' class="badcell"' if codes else ""
                row.append(f"<td{cls}>{card_html(card, codes, lead=(s == leader)) if card else ''}</td>")
            row.append(f"<td>{esc(winner)}</td>")
            parts.append("<tr>" + "".join(row) + "</tr>")
        parts.append("</table>")
    # scores
    if r.scores:
        parts.append('<table class="scores"><tr><th>side</th><th>contract</th><th>tricks</th><th>made</th>'
                     "<th>bags</th><th>points (recomputed / recorded)</th><th>total (recomputed / recorded)</th>"
                     "<th>bag count (recomputed / recorded)</th></tr>")  # fmt: skip
        for s in r.scores:
            flagged = side_flags.get(s["side"])
            cls = ' class="badcell"' if flagged else ""
            parts.append(
                f"<tr{cls}><td>{esc(s['side'])}{' ⚠' if flagged else ''}</td><td>{esc(s['contract'])}</td>"
                f"<td>{esc(s['tricks'])}</td><td>{esc(s['made'])}</td><td>{esc(s['bags_this_hand'])}</td>"
                f"<td>{_dash(s['points'])} / {_dash(s['recorded_points'])}</td>"
                f"<td>{_dash(s['total'])} / {_dash(s['recorded_total'])}</td>"
                f"<td>{_dash(s['bags'])} / {_dash(s['recorded_bags'])}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</section>")
    return "\n".join(parts)


def hand_replay_html(con, game_id: str, hand: int, standalone: bool = False) -> str:
    """HTML of one hand's replay (for a notebook's ``IPython.display.HTML``); ``standalone`` adds the CSS."""
    body = render_hand_replay(hand_replay(con, game_id, hand))
    return f"<style>{CSS}</style>{body}" if standalone else body


# --------------------------------------------------------------------------------------------
# The page

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1150px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.55em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.num { text-align: right; } .n { color: #888; font-size: 0.85em; }
.cards { display: flex; gap: 1em; flex-wrap: wrap; }
.stat { border: 1px solid #ddd; border-radius: 6px; padding: 0.5em 1em; min-width: 7em; }
.stat b { display: block; font-size: 1.6em; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5em; } .charts figure { margin: 0; }
.chart { min-height: 60px; }
.card { font-family: ui-monospace, monospace; padding: 0 0.1em; }
.card.red { color: #c00; } .card.lead { text-decoration: underline; }
.card.bad, .bids .bad { background: #ffd54f; outline: 2px solid #d32f2f; border-radius: 3px; font-weight: bold; }
td.badcell, tr.badcell td { background: #fff3e0; }
.compass { display: grid; grid-template-columns: 1fr 1fr 1fr; grid-template-areas: ". n ." "w . e" ". s .";
           gap: 0.3em; margin: 0.6em 0; max-width: 760px; }
.pos-n { grid-area: n; } .pos-w { grid-area: w; } .pos-e { grid-area: e; } .pos-s { grid-area: s; }
.seat { border: 1px solid #e0e0e0; border-radius: 5px; padding: 0.3em 0.5em; background: #fafafa; }
.who { font-size: 0.9em; } .taken { color: #666; } .sym { display: inline-block; width: 1.1em; }
.note { color: #777; font-size: 0.9em; }
details.hand { margin: 0.6em 0; border: 1px solid #e5e5e5; border-radius: 6px; padding: 0.4em 0.8em; }
details.hand summary { cursor: pointer; }
td.code { font-family: ui-monospace, monospace; }
"""

_ERROR_HOOK = """
(function () {
  function mark(msg) {
    var b = document.body || document.documentElement;
    b.setAttribute('data-script-errors', String(+(b.getAttribute('data-script-errors') || 0) + 1));
    b.setAttribute('data-last-error', String(msg).slice(0, 300));
  }
  window.addEventListener('error', function (e) { mark(e.message); });
  window.addEventListener('unhandledrejection', function (e) { mark(e.reason); });
})();
"""

_EMBED = """
(function () {
  var els = document.querySelectorAll('div.chart[data-spec]');
  var done = 0, failed = 0, jobs = [];
  els.forEach(function (el) {
    var spec = JSON.parse(document.getElementById(el.getAttribute('data-spec')).textContent);
    jobs.push(vegaEmbed(el, spec, {renderer: 'svg', actions: false}).then(
      function () { done += 1; el.setAttribute('data-rendered', 'true'); },
      function (err) { failed += 1; el.textContent = 'This chart could not be drawn: ' + err; console.error(err); }));
  });
  Promise.all(jobs).then(function () {
    document.body.setAttribute('data-charts-rendered', String(done));
    document.body.setAttribute('data-charts-failed', String(failed));
  });
})();
"""

_CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
    "img-src data:; font-src data:; connect-src 'none'"
)


def _fmt(kind: str, value: Any) -> str:
    if value is None:
        return "–"
    if kind == "rate":
        return f"{100 * value:.1f}%"
    if kind == "count":
        return f"{value:.0f}"
    return f"{value:.2f}"


def _player_table_html(con) -> str:
    df = metrics.run_all(con, by="player", names=PLAYER_COLUMNS)
    if df.is_empty():
        return "<p>No players.</p>"
    heads = "".join(f"<th>{esc(metrics.REGISTRY[m].title)}</th>" for m in PLAYER_COLUMNS)
    out = [f'<table class="players"><tr><th>player</th>{heads}</tr>']
    cells: dict[tuple[str, str], dict[str, Any]] = {(r["player"], r["metric"]): r for r in df.iter_rows(named=True)}
    for player in sorted({r["player"] for r in cells.values() if r["player"] is not None}):
        row = [f"<td>{esc(player)}</td>"]
        for m in PLAYER_COLUMNS:
            r = cells.get((player, m))
            if r is None:
                row.append("<td></td>")
                continue
            kind = metrics.REGISTRY[m].kind
            tip = f"n={r['n']}"
            if r["low"] is not None:
                tip += f"; 95%: {_fmt(kind, r['low'])} to {_fmt(kind, r['high'])}"
            n = "" if kind == "count" else f' <span class="n">n={r["n"]}</span>'
            row.append(f'<td class="num" title="{esc(tip)}">{_fmt(kind, r["value"])}{n}</td>')
        out.append("<tr>" + "".join(row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _charts(con) -> list[tuple[str, Any]]:
    """(caption, chart) pairs for every chart there is data for."""
    out: list[tuple[str, Any]] = []
    cal = metrics.run(con, "bid_calibration", by="all")
    if not cal.is_empty():
        out.append(("Mean tricks taken for each bid, every player together; the dashed line is y = x.",
                    charts.bid_calibration(cal)))  # fmt: skip
    err = metrics.run(con, "bid_error", by="all")
    if not err.is_empty():
        out.append(("How far numeric bids missed.", charts.bid_error_histogram(err)))
    nil = metrics.run(con, "nil_success", by="player")
    if not nil.filter(pl.col("n") > 0).is_empty():
        out.append(("Nils made per player with 95% Wilson intervals.", charts.nil_success(nil)))
    bags = metrics.game_bags(con)
    if not bags.is_empty() and bags["bags_this_hand"].drop_nulls().len() > 0:
        per_game = (
            bags.group_by("game_id")
            .agg(pen=(pl.col("bag_penalty").fill_null(0) != 0).sum(), hands=pl.col("hand").n_unique())
            .sort(["pen", "hands", "game_id"], descending=[True, True, False])
        )
        game = per_game["game_id"][0]
        out.append((f"Cumulative bags through game {game} (the game with the most bag penalties).",
                    charts.cumulative_bags(bags.filter(pl.col("game_id") == game))))  # fmt: skip
    allm = metrics.run_all(con, by="player", names=SMALL_MULTIPLES)
    if not allm.is_empty():
        out.append(("Players side by side (95% intervals).", charts.small_multiples(allm, metrics=SMALL_MULTIPLES)))
    grid = metrics.findings_grid(con)
    if not grid.is_empty():
        out.append(("Findings per 100 hands by table and round.", charts.findings_heatmap(grid)))
    return out


def build_report(con, out_dir: str | os.PathLike[str], *, title: str = "spadework report",
                 interactive: bool = True) -> Path:  # fmt: skip
    """Write the static HTML report to ``out_dir/index.html`` and return that path.

    ``con``: a DuckDB connection with the TABLES.md tables (loaded and checked; read-only is fine).
    ``out_dir`` is created if needed.  ``interactive``: charts drawn by inlined Vega-Embed with
    tooltips (default), or inlined static SVG with no script (see the module doc).
    The page needs no network.  Raises ``OSError`` when the file cannot be written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with metrics.snapshot(con):
        summary = metrics.summary(con)
        all_findings = metrics.findings(con)
        mismatches = metrics.score_mismatches(con)
        players_html = _player_table_html(con)
        chart_list = _charts(con)
        hand_keys = (
            all_findings.filter(pl.col("hand").is_not_null())
            .select("game_id", "hand")
            .unique(maintain_order=True)
            .rows()
        )
        replays = hand_replays(con, hand_keys)
    parts: list[str] = []
    parts.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
    parts.append(f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">')
    parts.append(f"<title>{esc(title)}</title><style>{CSS}</style>")
    if interactive:
        parts.append(f"<script>{_ERROR_HOOK}</script>")
        parts.append(f"<script>{vega_bundle()}</script>")
    parts.append("</head><body>")
    parts.append(f"<h1>{esc(title)}</h1>")
    # summary
    parts.append('<h2 id="summary">Summary</h2><div class="cards">')
    for key, label in (("games", "games"), ("hands", "hands"), ("players", "players"),
                       ("hands_with_play", "hands with card play"), ("findings", "findings"),
                       ("score_mismatches", "score mismatches"), ("load_errors", "load errors")):  # fmt: skip
        parts.append(f'<div class="stat"><b>{summary[key]}</b>{esc(label)}</div>')
    parts.append("</div>")
    if not all_findings.is_empty():
        by_code = all_findings.group_by("code").agg(n=pl.len(), hands=pl.struct("game_id", "hand").n_unique()).sort(
            ["n", "code"], descending=[True, False]
        )
        parts.append("<table><tr><th>finding</th><th>count</th><th>hands</th></tr>")
        for r in by_code.iter_rows(named=True):
            parts.append(f"<tr><td class=code>{esc(r['code'])}</td><td class=num>{r['n']}</td>"
                         f"<td class=num>{r['hands']}</td></tr>")  # fmt: skip
        parts.append("</table>")
    parts.append('<p class="note">Contents: <a href="#players">players</a> · <a href="#charts">charts</a> · '
                 '<a href="#mismatches">score mismatches</a> · <a href="#findings">findings</a></p>')  # fmt: skip
    # players
    parts.append('<h2 id="players">Players</h2>')
    parts.append(players_html)
    # charts
    parts.append('<h2 id="charts">Charts</h2><div class="charts">')
    for i, (caption, chart) in enumerate(chart_list):
        spec = chart.to_dict()
        parts.append('<figure class="chart-figure">')
        if interactive:
            parts.append(f'<div class="chart" id="chart-{i}" data-spec="spec-{i}"></div>')
            parts.append(f'<script type="application/json" id="spec-{i}">{_json_for_script(spec)}</script>')
        else:
            parts.append(f'<div class="chart static" id="chart-{i}">{charts.to_svg(chart)}</div>')
        parts.append(f"<figcaption>{esc(caption)}</figcaption></figure>")
    if not chart_list:
        parts.append("<p>No data to chart.</p>")
    parts.append("</div>")
    # score mismatches
    parts.append('<h2 id="mismatches">Score mismatches</h2>')
    if mismatches.is_empty():
        parts.append("<p>None: every recorded score agrees with the recomputed one.</p>")
    else:
        parts.append("<table><tr><th>game</th><th>hand</th><th>table</th><th>round</th><th>side</th><th>finding</th>"
                     "<th>field</th><th>recorded</th><th>expected</th><th>message</th></tr>")  # fmt: skip
        for r in mismatches.iter_rows(named=True):
            parts.append(
                "<tr>" + "".join(
                    f"<td>{esc(r[c])}</td>"
                    for c in ("game_id", "hand", "table_name", "round", "side", "code", "field", "recorded", "expected",
                              "message")
                ) + "</tr>"
            )  # fmt: skip
        parts.append("</table>")
    # findings
    parts.append('<h2 id="findings">Findings</h2>')
    if all_findings.is_empty():
        parts.append("<p>No findings.</p>")
    else:
        parts.append(f"<p>{all_findings.height} findings in {len(replays)} hands; each hand is replayed trick by "
                     "trick with the offending card marked ⚠.</p>")  # fmt: skip
        for i, r in enumerate(replays):
            codes = ", ".join(dict.fromkeys(f["code"] for f in r.findings))
            summary_line = f"game {r.game_id} · hand {r.hand} · {codes}"
            opened = " open" if i < OPEN_REPLAYS else ""
            parts.append(f'<details class="hand"{opened}><summary>{esc(summary_line)}</summary>')
            parts.append(render_hand_replay(r, anchor=f"hand-{i}"))
            parts.append("</details>")
        loose = all_findings.filter(pl.col("hand").is_null())
        if not loose.is_empty():
            parts.append("<h3>Findings about whole games</h3><table><tr><th>game</th><th>code</th><th>side</th>"
                         "<th>message</th></tr>")  # fmt: skip
            for r in loose.iter_rows(named=True):
                parts.append(f"<tr><td>{esc(r['game_id'])}</td><td class=code>{esc(r['code'])}</td>"
                             f"<td>{esc(r['side'])}</td><td>{esc(r['message'])}</td></tr>")  # fmt: skip
            parts.append("</table>")
    if interactive and chart_list:
        parts.append(f"<script>{_EMBED}</script>")
    parts.append("</body></html>\n")
    path = out / "index.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


__all__ = [
    "CSS",
    "HandReplay",
    "build_report",
    "card_html",
    "esc",
    "hand_replay",
    "hand_replay_html",
    "hand_replays",
    "render_hand_replay",
    "vega_bundle",
]
