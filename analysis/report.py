"""The static HTML report: ``build_report(con, out_dir)`` writes a small site a director and a coach use.

Pages (all relative links, so the folder can be copied or zipped):

* ``index.html``: the summary, the players with their main tendencies (each name links to the
  player's page), the charts, the score mismatches and every finding (each row links to the replay
  of its hand on the game's page); the first hands with findings are replayed on the page too.
* ``standings.html``: the results and standings (:mod:`spadework.analysis.standings`): per event the
  players' and partnerships' rankings and every game's result, each game linking to its page.
* ``players/<name>.html``: a page per player to hand out: results, the leak list, tendencies against
  the field with their 95 % intervals, bidding calibration with this player highlighted, and the
  player's findings with their replays.  Its sections are :data:`PLAYER_SECTIONS` (append to extend).
  It prints on at most two A4 pages (the replays stay on screen).
* ``games/<game>.html``: a page per game: the result (recomputed and as recorded), every hand's bids,
  tricks and scores, and a trick-by-trick replay of each hand with a finding.

File names are the names themselves when they are plain (letters, digits, ``-`` and ``_``, and unique
ignoring case), else a readable part and a short hash (:func:`page_names`).

**Replays** show the four hands as dealt, the bids, each trick and the scores (recomputed / recorded);
a legend (:data:`REPLAY_LEGEND`) says what the marks mean: the card that led a trick is underlined,
the card a finding is about is marked ⚠, and the *evidence* is ringed: for a renege the cards of the
suit led the player still held, for a spade led too early the non-spades the leader held.

**Charts** on the index are Altair specs drawn in the browser by Vega-Embed.  The page must work with
no network at view time, and nothing big is vendored in the repository: the Vega, Vega-Lite and
Vega-Embed JavaScript is taken at build time from the installed ``vl-convert-python`` package
(``vl_convert.javascript_bundle()``, about 0.9 MB) and inlined once, on the index only.  Tooltips
(which carry ``n``) need that interactive rendering.  With ``interactive=False`` the charts are
rendered to SVG by vl-convert and inlined instead: no script at all.  The player pages always carry
their one chart as SVG (light, and it prints).

**Big seasons stay light**: the per-player-hand relation is computed in batches of games
(:func:`spadework.analysis.metrics.materialize`), every player's table against the field costs two
runs of the metrics (:func:`spadework.analysis.coach.player_tables`), and the game pages are written
a batch of games at a time, so memory does not grow with the season and no page holds it all.

**Escaping**: every text that comes from a log (player names, events, tables, rounds, game ids,
card codes, messages) goes through :func:`html.escape`; chart specs are embedded as JSON in
``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as ``\\u003c`` etc., and
Vega draws text as text.  A player called ``<script>alert(1)</script>`` shows as that text.
A Content-Security-Policy meta tag forbids every network request from the pages.
"""

from __future__ import annotations

import functools
import hashlib
import html
import itertools
import json
import math
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from spadework.analysis import charts, coach, metrics
from spadework.analysis import standings as standings_mod
from spadework.analysis.engine.findings import close_bidi
from spadework.parsers.cards import JOKERS, Deck

SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SUIT_ORDER = ("S", "H", "D", "C")
SEAT_NAMES = {"N": "North", "E": "East", "S": "South", "W": "West"}

PLAYER_COLUMNS = (
    "hands", "avg_bid", "bid_bias", "exact_bid", "contract_made", "bags_per_hand", "nil_rate", "nil_success",
    "points_per_hand", "win_rate", "findings_per_100",
)  # fmt: skip
"""Metrics in the index's player table."""

OPEN_REPLAYS = 25
"""Hands with findings replayed on the index (the others are replayed on their game's page)."""

INDEX_FINDINGS = 2_000
"""Most findings listed on the index (every one is on its game's page)."""

PLAYER_REPLAYS = 40
"""Most hands replayed on a player's page (every finding links to its game's page)."""

GAME_BATCH = 250
"""Game pages written per batch of games (memory grows with it, not with the season)."""

SMALL_MULTIPLES = ("bid_bias", "exact_bid", "set_rate", "bags_per_hand", "nil_rate", "findings_per_100")
"""Metrics in the players-side-by-side chart."""


def esc(value: Any) -> str:
    """HTML-escape any value (``None`` -> empty string), with the directional controls it leaves open
    closed (a name's unclosed right-to-left override turned round the rest of its row)."""
    return "" if value is None else html.escape(close_bidi(str(value)), quote=True)


def _dash(value: Any) -> str:
    return "–" if value is None else esc(value)


def yes_no(value: Any) -> str:
    """``yes`` / ``no`` for a boolean (``–`` for none): how a person reads True / False."""
    if value is None:
        return "–"
    return "yes" if value else "no"


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
# File names

_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,59}")
_RESERVED = {"con", "prn", "aux", "nul", "index", "standings"} | {f"{d}{i}" for d in ("com", "lpt") for i in range(10)}


def page_names(names: Iterable[Any]) -> dict[Any, str]:
    """A safe file name stem for each name (a player's or a game's): the name itself when it is plain
    (letters, digits, ``-``, ``_``; at most 60 characters; not a name Windows reserves) and no other
    name differs from it only in case; otherwise its plain characters (at most 40) and the first 8 hex
    digits of its SHA-1, so that names like ``../x``, ``<b>`` or ``Ana``/``ana`` never collide or escape.
    Where such a stem is taken already, in any case (a player really named ``ana-72019bba`` beside
    ``Ana`` and ``ana``), it gets 16 hex digits, then all 40, then a counter."""
    names = [n for n in dict.fromkeys(names) if n is not None]
    folded: dict[str, int] = defaultdict(int)
    for n in names:
        folded[str(n).lower()] += 1
    out: dict[Any, str] = {}
    hashed: list[Any] = []
    for n in names:
        text = str(n)
        if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED and folded[text.lower()] == 1:
            out[n] = text
        else:
            hashed.append(n)
    used = {stem.lower() for stem in out.values()}  # file systems that ignore case see one file
    for n in hashed:
        text = str(n)
        slug = re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_-")[:40] or "x"
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
        stems = itertools.chain((f"{slug}-{digest[:k]}" for k in (8, 16, 40)), (f"{slug}-{digest}-{i}" for i in itertools.count(2)))
        out[n] = next(stem for stem in stems if stem.lower() not in used)
        used.add(out[n].lower())
    return out


@dataclass
class Links:
    """Where each player's and game's page is: ``players``/``games`` map names to file stems."""

    players: dict[str, str] = field(default_factory=dict)
    games: dict[str, str] = field(default_factory=dict)

    def player(self, name: str | None, depth: int = 0) -> str | None:
        """The href of a player's page seen from a page ``depth`` folders down (``None`` when none)."""
        stem = self.players.get(name) if name is not None else None
        return None if stem is None else f"{'../' * depth}players/{stem}.html"

    def game(self, game_id: str | None, depth: int = 0, hand: int | None = None) -> str | None:
        """The href of a game's page (``#hand-N``: that hand's replay or row)."""
        stem = self.games.get(game_id) if game_id is not None else None
        if stem is None:
            return None
        return f"{'../' * depth}games/{stem}.html" + (f"#hand-{hand}" if hand is not None else "")


def _a(href: str | None, text: Any) -> str:
    """A link (escaped text and href), or the plain escaped text when there is no page."""
    return esc(text) if href is None else f'<a href="{esc(href)}">{esc(text)}</a>'


# --------------------------------------------------------------------------------------------
# Hand replays


@dataclass
class HandReplay:
    """Everything a replay shows about one hand (seat-keyed dicts use ``"N" "E" "S" "W"``).

    ``deal``: the cards each seat held (from ``deals``, else what it played; ``None`` when neither);
    ``bids``: ``(order, seat, text)``; ``tricks``: ``(number, leader, {seat: card}, winner)``;
    ``scores``: one dict per side from ``hand_scores`` and ``recorded_scores``;
    ``findings``: the hand's ``violations`` rows as dicts (with ``player``, the name at the seat);
    ``evidence``: per seat, the cards that show a finding was a fault, with why (:func:`evidence`).
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
    evidence: dict[str, dict[str, list[str]]] = field(default_factory=dict)


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
    checked = rows(f"SELECT t.game_id, t.hand, t.trick, t.winner FROM tricks t JOIN {keys} k USING (game_id, hand)")
    scores = rows(
        f"""SELECT sd.game_id, sd.hand, sd.side, hs.contract, hs.tricks, hs.made, hs.bags_this_hand, hs.bag_penalty,
                   hs.nil_points, hs.points, hs.total, hs.bags,
                   rs.points AS recorded_points, rs.total AS recorded_total, rs.bags AS recorded_bags
            FROM (SELECT k.game_id, k.hand, s.side FROM {keys} k CROSS JOIN (VALUES ('NS'), ('EW')) s(side)) sd
            LEFT JOIN hand_scores hs
                   ON hs.game_id = sd.game_id AND hs.hand = sd.hand AND hs.side = sd.side
            LEFT JOIN recorded_scores rs ON rs.game_id = sd.game_id AND rs.hand = sd.hand AND rs.side = sd.side
            ORDER BY sd.side DESC"""
    )
    found = rows(
        f"SELECT v.*, CASE v.seat WHEN 'N' THEN h.player_n WHEN 'E' THEN h.player_e WHEN 'S' THEN h.player_s "
        f"WHEN 'W' THEN h.player_w END AS player_at_seat FROM violations v JOIN {keys} k USING (game_id, hand) "
        f"JOIN hands h USING (game_id, hand) ORDER BY v.trick NULLS FIRST, v.seat, v.code"
    )
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
        win, taken = _winners_and_taken(h, deck, plays.get(key, []), checked.get(key))
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
                taken=taken,
                scores=scores.get(key, []),
                findings=[f | {"player": f.get("player") or f.get("player_at_seat")} for f in found.get(key, [])],
            )
        )
        out[-1].evidence = evidence(out[-1])
    return out


def _winners_and_taken(h: Mapping[str, Any], deck: Deck, plays: list[dict[str, Any]],
                       checked: list[dict[str, Any]] | None) -> tuple[dict[int, str | None], dict[str, int | None]]:  # fmt: skip
    """Each trick's winner and each seat's tricks, as the metrics read them (``sw_trick_results`` and
    ``sw_seat_hands``): the checker's ``tricks`` where the hand has them, else the log's counts, else
    the card play replayed with the hand's deck (:meth:`Deck.winner_index`)."""
    by_trick: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for p in plays:
        by_trick[p["trick"]].append(p)
    known = {c["trick"]: c["winner"] for c in checked or []}
    win: dict[int, str | None] = {}
    for number, cards in by_trick.items():
        cards.sort(key=lambda p: p["play_order"])
        if known.get(number) is not None:
            win[number] = known[number]
            continue
        try:
            win[number] = cards[deck.winner_index([p["card"] for p in cards])]["seat"]
        except (KeyError, ValueError, IndexError):
            win[number] = None
    taken: dict[str, int | None] = {}
    for seat in "NESW":
        if checked:
            taken[seat] = sum(1 for c in checked if c["winner"] == seat)
        elif h.get(f"taken_{seat.lower()}") is not None:
            taken[seat] = h[f"taken_{seat.lower()}"]
        elif by_trick:
            taken[seat] = sum(1 for w in win.values() if w == seat)
        else:
            taken[seat] = None
    return win, taken


def evidence(r: HandReplay) -> dict[str, dict[str, list[str]]]:
    """The cards that show a finding was a fault, per seat: for a ``RENEGE`` the cards of the suit led
    the seat still held at that trick; for ``SPADE_LED_BEFORE_BROKEN`` / ``SPADE_LED_FIRST_TRICK`` the
    non-spades the leader held.  Each card maps to the reasons (``held ... when E reneged in trick 8``).
    Empty when the hand has no deal and no card play."""
    out: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    if r.deal is None:
        return {}
    played_at: dict[tuple[str, str], int] = {}
    lead_card: dict[int, str | None] = {}
    for number, leader, cards, _ in r.tricks:
        lead_card[number] = cards.get(leader)
        for seat, card in cards.items():
            played_at.setdefault((seat, card), number)
    for f in r.findings:
        code, trick, seat = f.get("code"), f.get("trick"), f.get("seat")
        if trick is None or seat not in r.deal or code not in ("RENEGE", "SPADE_LED_BEFORE_BROKEN", "SPADE_LED_FIRST_TRICK"):
            continue
        held = [c for c in r.deal[seat] if played_at.get((seat, c), 99) >= trick and c != f.get("card")]
        try:
            if code == "RENEGE":
                led = lead_card.get(trick)
                if led is None:
                    continue
                suit = r.deck.suit(led)
                cards = [c for c in held if r.deck.suit(c) == suit]
                why = f"held when {seat} reneged in trick {trick}"
            else:
                cards = [c for c in held if not r.deck.is_spade(c)]
                why = f"a non-spade {seat} held when leading a spade in trick {trick}"
        except KeyError:  # a card the deck does not know
            continue
        for c in cards:
            later = played_at.get((seat, c))
            out[seat][c].append(why + (f" (played in trick {later})" if later else ""))
    return {s: dict(cs) for s, cs in out.items()}


def hand_replay(con, game_id: str, hand: int) -> HandReplay:
    """The replay of one hand.  Raises ``KeyError`` when the hand is not in the database."""
    found = hand_replays(con, [(game_id, hand)])
    if not found:
        raise KeyError(f"no hand {hand} of game {game_id!r} in the database")
    return found[0]


def card_html(card: str, bad: Iterable[str] = (), lead: bool = False, evidence: Iterable[str] = ()) -> str:
    """A card as HTML: rank and suit symbol, red suits coloured, ``bad`` (finding codes) marked ⚠,
    ``lead`` underlined, ``evidence`` (reasons) ringed."""
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
    ev = list(evidence)
    if lead:
        cls += " lead"
    title = esc(label)
    if bad:
        cls += " bad"
        title = esc(f"{label}: {', '.join(bad)}")
        text = "⚠" + text
    if ev:
        cls += " evidence"
        title = esc(f"{label}: {'; '.join(ev)}") if not bad else title + esc("; " + "; ".join(ev))
    return f'<span class="{cls}" title="{title}">{text}</span>'


def _holding_html(cards: list[str], deck: Deck, bad: Mapping[str, list[str]],
                  evidence: Mapping[str, list[str]] | None = None) -> str:  # fmt: skip
    evidence = evidence or {}
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
        body = " ".join(card_html(c, bad.get(c, ()), evidence=evidence.get(c, ())) for c in cs) or "—"
        lines.append(f'<div class="suit"><span class="sym">{symbol}</span> {body}</div>')
    if other:
        lines.append('<div class="suit">? ' + " ".join(card_html(c, bad.get(c, ())) for c in other) + "</div>")
    return "".join(lines)


def render_hand_replay(
    r: HandReplay,
    anchor: str | None = None,
    player_href: Callable[[str | None], str | None] | None = None,
    game_href: str | None = None,
    card_notes: Mapping[tuple[int, str], Mapping[str, Any]] | None = None,
) -> str:
    """HTML of one hand replay (a ``<section>``); every log text escaped; offending cards marked ⚠,
    the evidence ringed (see :data:`REPLAY_LEGEND`).  ``card_notes``: ``(trick, seat) -> card_costs row``
    (:func:`spadework.analysis.decisions.card_annotations`): each card played shows its double-dummy cost
    and, when it cost a trick, the best cards (:data:`DD_LEGEND`).  ``player_href`` gives the link of a player's
    page (names are plain text without it); ``game_href`` links the heading to the game's page."""
    href = player_href or (lambda name: None)
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
    later_evidence: dict[tuple[int, str], list[str]] = {}
    for seat, cards in r.evidence.items():
        for number, _, played, _ in r.tricks:
            if played.get(seat) in cards:
                later_evidence[(number, seat)] = cards[played[seat]]
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
    parts.append(f'<h3>{f"<a href={chr(34)}{esc(game_href)}{chr(34)}>{meta}</a>" if game_href else meta}</h3>')
    # findings of the hand
    parts.append('<table class="findings"><tr><th>code</th><th>trick</th><th>seat</th><th>player</th>'
                 "<th>card</th><th>message</th></tr>")  # fmt: skip
    for f in r.findings:
        seat = f.get("seat")
        parts.append(
            f"<tr><td class=code>{esc(f['code'])}</td><td>{esc(f.get('trick'))}</td><td>{esc(seat)}</td>"
            f"<td>{_a(href(r.players.get(seat)), r.players.get(seat)) if seat else ''}</td>"
            f"<td>{card_html(f['card'], [f['code']]) if f.get('card') else ''}</td><td>{esc(f['message'])}</td></tr>"
        )
    parts.append("</table>")
    # the four hands
    if r.deal is not None:
        cells = {}
        for s in "NESW":
            name = r.players.get(s)
            cells[s] = (
                f'<div class="seat"><div class="who">{esc(SEAT_NAMES[s])}: <b>{_a(href(name), name)}</b>'
                f' <span class="taken">taken {esc(r.taken.get(s))}</span></div>'
                f"{_holding_html(r.deal.get(s, []), r.deck, by_card.get(s, {}), r.evidence.get(s, {}))}</div>"
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
                ev = later_evidence.get((number, s), ())
                dd = _dd_note((card_notes or {}).get((number, s))) if card else ""
                row.append(f"<td{cls}>{card_html(card, codes, lead=(s == leader), evidence=ev) if card else ''}{dd}</td>")
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
                f"<td>{esc(s['tricks'])}</td><td>{yes_no(s['made'])}</td><td>{esc(s['bags_this_hand'])}</td>"
                f"<td>{_dash(s['points'])} / {_dash(s['recorded_points'])}</td>"
                f"<td>{_dash(s['total'])} / {_dash(s['recorded_total'])}</td>"
                f"<td>{_dash(s['bags'])} / {_dash(s['recorded_bags'])}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</section>")
    return "\n".join(parts)


REPLAY_LEGEND = (
    '<p class="legend"><b>Reading a replay.</b> The four hands as dealt, North at the top; '
    '<span class="card lead">underlined</span>: the card that led the trick; '
    '<span class="card bad">⚠marked</span>: the card (or bid) a finding is about; '
    '<span class="card evidence">ringed</span>: the evidence, the cards of the suit led that the player still '
    "held when reneging, or the non-spades the leader held when leading a spade before spades were broken; "
    '<span class="shade">shaded</span>: the trick or the side\'s score a finding names. Scores read '
    "recomputed / recorded. Hover a card for details.</p>"
)
"""What the marks of a replay mean (shown once above the replays of a page)."""


def hand_replay_html(con, game_id: str, hand: int, standalone: bool = False) -> str:
    """HTML of one hand's replay (for a notebook's ``IPython.display.HTML``); ``standalone`` adds the CSS
    and the legend."""
    body = render_hand_replay(hand_replay(con, game_id, hand))
    return f"<style>{CSS}</style>{REPLAY_LEGEND}{body}" if standalone else body


# --------------------------------------------------------------------------------------------
# The pages

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1150px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
nav { font-size: 0.92em; margin-bottom: 1em; } nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.55em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.num, td.num { text-align: right; } .n { color: #888; font-size: 0.85em; }
table.rank td:nth-child(n+3), table.rank th:nth-child(n+3) { text-align: right; }
table.rank td:last-child, table.rank th:last-child { text-align: left; color: #666; }
.cards { display: flex; gap: 1em; flex-wrap: wrap; }
.stat { border: 1px solid #ddd; border-radius: 6px; padding: 0.5em 1em; min-width: 7em; }
.stat b { display: block; font-size: 1.6em; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5em; } .charts figure { margin: 0; }
.chart { min-height: 60px; }
.card { font-family: ui-monospace, monospace; padding: 0 0.1em; }
.card.red { color: #c00; } .card.lead { text-decoration: underline; }
.card.bad, .bids .bad { background: #ffd54f; outline: 2px solid #d32f2f; border-radius: 3px; font-weight: bold; }
.card.evidence { outline: 2px dashed #2e7d32; border-radius: 8px; background: #e8f5e9; }
td.badcell, tr.badcell td, .shade { background: #fff3e0; }
.compass { display: grid; grid-template-columns: 1fr 1fr 1fr; grid-template-areas: ". n ." "w . e" ". s .";
           gap: 0.3em; margin: 0.6em 0; max-width: 760px; }
.pos-n { grid-area: n; } .pos-w { grid-area: w; } .pos-e { grid-area: e; } .pos-s { grid-area: s; }
.seat { border: 1px solid #e0e0e0; border-radius: 5px; padding: 0.3em 0.5em; background: #fafafa; }
.who { font-size: 0.9em; } .taken { color: #666; } .sym { display: inline-block; width: 1.1em; }
.note { color: #777; font-size: 0.9em; }
.legend { border-left: 4px solid #90caf9; background: #f5f9ff; padding: 0.4em 0.8em; font-size: 0.9em; }
details.hand { margin: 0.6em 0; border: 1px solid #e5e5e5; border-radius: 6px; padding: 0.4em 0.8em; }
details.hand summary { cursor: pointer; }
td.code { font-family: ui-monospace, monospace; }
.leak { color: #c62828; font-weight: bold; } .strength { color: #2e7d32; font-weight: bold; }
svg.iv { vertical-align: middle; }
.differs { color: #b71c1c; }
.dd { font-size: 0.78em; color: #555; white-space: nowrap; } .dd.cost { color: #c62828; font-weight: bold; }
@media print {
  @page { size: A4; margin: 11mm; }
  body { font-size: 8.5pt; margin: 0; max-width: none; padding: 0; line-height: 1.25; }
  nav, .screen-only, .replays, .legend, details.hand { display: none !important; }
  h1 { font-size: 15pt; margin: 0 0 0.2em; } h2 { font-size: 11pt; margin: 0.7em 0 0.3em; break-after: avoid; }
  table { font-size: 8pt; margin: 0.3em 0; } th, td { padding: 0.1em 0.35em; }
  tr, .stat, figure { break-inside: avoid; }
  .stat { padding: 0.2em 0.6em; } .stat b { font-size: 1.2em; }
  table.print-cap tr:nth-child(n+14) { display: none; }
  table.print-cap6 tr:nth-child(n+8) { display: none; }
  section#bids-judged, section#cards-judged { display: none !important; }
  table.findings td:last-child, table.findings th:last-child { display: none; }
  .print-note { display: block !important; }
  a { color: inherit; text-decoration: none; }
  .chart svg { max-width: 100%; height: auto; max-height: 70mm; }
}
.print-note { display: none; color: #777; }
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


def _page(title: str, body: Iterable[str], depth: int = 0, scripts: Sequence[str] = (), report_title: str = "") -> str:
    """A whole page: the head (CSP, CSS, ``scripts`` inlined), a navigation bar, ``body``."""
    up = "../" * depth
    head = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{CSS}</style>",
        *(f"<script>{s}</script>" for s in scripts),
        "</head><body>",
        f'<nav><a href="{up}index.html">{esc(report_title or "Report")}</a>'
        f'<a href="{up}standings.html">Results and standings</a>'
        f'<a href="{up}index.html#players">Players</a><a href="{up}index.html#findings">Findings</a></nav>',
    ]
    return "\n".join([*head, *body, "</body></html>\n"])


def _fmt(kind: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if kind == "rate":
        return f"{100 * value:.1f}%"
    if kind == "count":
        return f"{value:,.0f}"
    return f"{value:.2f}"


def interval_svg(kind: str, row: Mapping[str, Any], width: int = 150, height: int = 14) -> str:
    """A one-line picture of a row of :func:`spadework.analysis.coach.player_table`: the field's 95 %
    interval as a grey band with its value as a tick, the player's interval as a line and its value
    as a dot (red for a leak, green for a strength).  Empty when nothing is known."""
    keys = ("player_value", "player_low", "player_high", "field_value", "field_low", "field_high")
    vals = [row[k] for k in keys if row.get(k) is not None and not math.isnan(row[k])]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    if kind == "rate":
        lo, hi = max(0.0, lo), min(1.0, hi)
    pad = (hi - lo) * 0.06 or 0.5
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return round(3 + (min(max(v, lo), hi) - lo) / (hi - lo) * (width - 6), 1)

    out = [f'<svg class="iv" width="{width}" height="{height}" viewBox="0 0 {width} {height}" aria-hidden="true">']
    if row.get("field_low") is not None and row.get("field_high") is not None:
        a, b = x(row["field_low"]), x(row["field_high"])
        out.append(f'<rect x="{a}" y="3" width="{max(b - a, 1)}" height="{height - 6}" fill="#e0e0e0"/>')
    if row.get("field_value") is not None:
        fx = x(row["field_value"])
        out.append(f'<line x1="{fx}" x2="{fx}" y1="1" y2="{height - 1}" stroke="#757575" stroke-width="1.5"/>')
    colour = {"leak": "#c62828", "strength": "#2e7d32"}.get(row.get("verdict") or "", "#1565c0")
    if row.get("player_low") is not None and row.get("player_high") is not None:
        out.append(f'<line x1="{x(row["player_low"])}" x2="{x(row["player_high"])}" y1="{height / 2}" '
                   f'y2="{height / 2}" stroke="{colour}" stroke-width="2"/>')  # fmt: skip
    if row.get("player_value") is not None:
        out.append(f'<circle cx="{x(row["player_value"])}" cy="{height / 2}" r="3.5" fill="{colour}"/>')
    out.append("</svg>")
    return "".join(out)


def _chart_block(chart, i: int, caption: str, interactive: bool) -> str:
    if interactive:
        spec = chart.to_dict()
        return (f'<figure class="chart-figure"><div class="chart" id="chart-{i}" data-spec="spec-{i}"></div>'
                f'<script type="application/json" id="spec-{i}">{_json_for_script(spec)}</script>'
                f"<figcaption>{esc(caption)}</figcaption></figure>")  # fmt: skip
    return (f'<figure class="chart-figure"><div class="chart static" id="chart-{i}">{charts.to_svg(chart)}</div>'
            f"<figcaption>{esc(caption)}</figcaption></figure>")  # fmt: skip


def _charts(con) -> list[tuple[str, Any]]:
    """(caption, chart) pairs for every chart there is data for (the index's charts)."""
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
        out.append(("Plain nils made per player with 95% Wilson intervals.", charts.nil_success(nil)))
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


def _findings_table(rows: Iterable[Mapping[str, Any]], links: Links, depth: int, anchors: Mapping | None = None,
                    cls: str = "findings") -> str:  # fmt: skip
    """Findings as a table whose every row links to the replay of its hand (on the same page when
    ``anchors`` maps ``(game_id, hand)`` to an anchor there, else on the game's page)."""
    out = [f'<table class="{cls}"><tr><th>game</th><th>hand</th><th>trick</th><th>seat</th><th>player</th>'
           "<th>finding</th><th>message</th><th>replay</th></tr>"]  # fmt: skip
    for f in rows:
        key = (f["game_id"], f["hand"])
        if anchors and key in anchors:
            href = f"#{anchors[key]}"
        else:
            href = links.game(f["game_id"], depth, f["hand"]) if f["hand"] is not None else links.game(f["game_id"], depth)
        out.append(
            f"<tr><td>{_a(links.game(f['game_id'], depth), f['game_id'])}</td><td>{_dash(f['hand'])}</td>"
            f"<td>{_dash(f['trick'])}</td><td>{esc(f['seat'])}</td><td>{_a(links.player(f['player'], depth), f['player'])}</td>"
            f"<td class=code>{esc(f['code'])}</td><td>{esc(f['message'])}</td><td>{_a(href, 'replay')}</td></tr>"
        )
    out.append("</table>")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# Player pages


@dataclass
class PlayerContext:
    """What the player pages are built from (computed once for every player).

    ``table``: :func:`spadework.analysis.coach.player_tables` (every player against the field);
    ``calibration``: ``bid_calibration`` by player; ``findings``: :func:`spadework.analysis.metrics.findings`;
    ``results``: each player's overall standings row (``spadework.analysis.standings``); ``volume``:
    hands, games and partners per player; ``links``: the pages.
    """

    con: Any
    links: Links
    table: pl.DataFrame
    calibration: pl.DataFrame
    findings: pl.DataFrame
    results: dict[str, dict[str, Any]]
    volume: dict[str, dict[str, Any]]
    depth: int = 1
    calibration_spec: dict[str, Any] | None = None
    replays: dict[tuple[str, int], HandReplay] | None = None
    coaching: Any = None  # spadework.analysis.decisions.Coaching, computed by the first section that needs it
    dd_replays: dict[tuple[str, int], HandReplay] | None = None


Section = tuple[str, str, str]
"""A section of a player's page: ``(id, heading, html)``."""


def _section_results(ctx: PlayerContext, player: str) -> Section | None:
    v = ctx.volume.get(player, {})
    r = ctx.results.get(player)
    cards = [("hands", v.get("hands", 0)), ("games", v.get("games", 0)), ("partners", v.get("partners", 0))]
    if r:
        cards += [("games won", r["wins"]), ("win rate", "–" if r["win_rate"] is None else f"{100 * r['win_rate']:.0f}%"),
                  ("points for", f"{r['points_for']:,}"), ("points against", f"{r['points_against']:,}"),
                  ("average margin", f"{r['avg_margin']:+.1f}"), ("sets", r["sets"]), ("bags", r["bags"])]  # fmt: skip
    body = '<div class="cards">' + "".join(f'<div class="stat"><b>{esc(val)}</b>{esc(label)}</div>' for label, val in cards) + "</div>"
    body += ('<p class="note">Results by the recomputed scores of every game the player sat in (the side of the '
             'first hand); the per-event rankings are on the <a href="../standings.html">standings page</a>.</p>')  # fmt: skip
    return ("results", "Results", body)


def _verdict_cell(verdict: str | None) -> str:
    return f'<span class="{esc(verdict)}">{esc(verdict)}</span>' if verdict in ("leak", "strength") else esc(verdict)


def _section_leaks(ctx: PlayerContext, player: str) -> Section | None:
    t = ctx.table.filter((pl.col("player") == player) & pl.col("verdict").is_in(["leak", "strength"])
                         & ~pl.col("metric").is_in(list(coach.HIDDEN_IN_TEXT)))  # fmt: skip
    if t.is_empty():
        body = ("<p>No leak and no strength: every gap to the field is within two standard errors "
                f"(or rests on fewer than {coach.VERDICT_MIN_N} observations).</p>")  # fmt: skip
        return ("leaks", "Leaks and strengths", body)
    t = t.with_columns(abs_z=pl.col("z").abs()).sort(["verdict", "abs_z"], descending=[False, True])
    out = ['<table class="leaks"><tr><th></th><th>metric</th><th>player</th><th>field</th><th>gap</th>'
           "<th>z</th><th>what it measures</th></tr>"]  # fmt: skip
    for r in t.iter_rows(named=True):
        kind = r["kind"]
        gap = "–" if r["gap"] is None else (f"{100 * r['gap']:+.1f} pts" if kind == "rate" else f"{r['gap']:+.2f}")
        out.append(f"<tr><td>{_verdict_cell(r['verdict'])}</td><td>{esc(r['title'])}</td>"
                   f"<td class=num>{_fmt(kind, r['player_value'])}</td><td class=num>{_fmt(kind, r['field_value'])}</td>"
                   f"<td class=num>{esc(gap)}</td><td class=num>{r['z']:+.1f}</td>"
                   f"<td class=note>{esc(metrics.REGISTRY[r['metric']].description)}</td></tr>")  # fmt: skip
    out.append("</table>")
    out.append('<p class="note">A <b>leak</b> is a gap to the field of at least two standard errors in the '
               "worse direction, a <b>strength</b> one in the better direction; metrics with fewer than "
               f"{coach.VERDICT_MIN_N} observations get neither.</p>")  # fmt: skip
    return ("leaks", "Leaks and strengths", "\n".join(out))


def _section_tendencies(ctx: PlayerContext, player: str) -> Section | None:
    t = ctx.table.filter((pl.col("player") == player) & ~pl.col("metric").is_in(list(coach.HIDDEN_IN_TEXT)))
    out = ['<table class="tendencies"><tr><th>metric</th><th>player</th><th>95% interval</th><th>n</th>'
           "<th>field</th><th>player (dot, line) against the field (tick, band)</th><th></th></tr>"]  # fmt: skip
    category = None
    empty = []
    for r in t.iter_rows(named=True):
        if not r["player_n"] or r["player_value"] is None:
            empty.append(r["title"])
            continue
        if r["category"] != category:
            category = r["category"]
            out.append(f'<tr><th colspan="7">{esc(str(category).capitalize())}</th></tr>')
        kind = r["kind"]
        out.append(
            f"<tr><td title=\"{esc(metrics.REGISTRY[r['metric']].description)}\">{esc(r['title'])}</td>"
            f"<td class=num>{_fmt(kind, r['player_value'])}</td>"
            f"<td class=num>{esc(coach.interval_text(kind, r['player_low'], r['player_high']))}</td>"
            f"<td class=num>{r['player_n']:,}</td><td class=num>{_fmt(kind, r['field_value'])}</td>"
            f"<td>{interval_svg(kind, r)}</td><td>{_verdict_cell(r['verdict'])}</td></tr>"
        )
    out.append("</table>")
    note = ("The field is everything the player took no part in: the other players' hands, the side-hands the "
            "player was not on, the game results of the sides the player was not on (the opponents' in the "
            "player's own games included). Rates in per cent.")  # fmt: skip
    if empty:
        note += " No data for: " + ", ".join(empty) + "."
    out.append(f'<p class="note">{esc(note)}</p>')
    return ("tendencies", "Tendencies against the field", "\n".join(out))


def _section_calibration(ctx: PlayerContext, player: str) -> Section | None:
    if ctx.calibration.is_empty() or ctx.calibration.filter(pl.col("player") == player).is_empty():
        return None
    if ctx.calibration_spec is None:  # built once, then only the highlight changes
        chart = charts.bid_calibration(ctx.calibration, group="player", highlight=player)
        ctx.calibration_spec = chart.to_dict(validate=False)
    spec = charts.rehighlight(ctx.calibration_spec, "player", player, title=f"Bid calibration: {player}")
    body = (f'<figure class="chart-figure"><div class="chart static">{charts.spec_to_svg(spec)}</div>'
            f"<figcaption>Mean tricks taken for each numeric bid: {esc(player)} in red with 95% intervals, every other "
            "player in grey; on the dashed line y = x a bidder takes exactly what they bid, above it they "
            "underbid, below it they overbid.</figcaption></figure>")  # fmt: skip
    return ("calibration", "Bidding calibration", body)


def _section_findings(ctx: PlayerContext, player: str) -> Section | None:
    mine = ctx.findings.filter(pl.col("player") == player)
    if mine.is_empty():
        return ("findings", "Findings", "<p>No finding names this player's seat.</p>")
    keys = mine.filter(pl.col("hand").is_not_null()).select("game_id", "hand").unique(maintain_order=True).rows()
    shown = keys[:PLAYER_REPLAYS]
    anchors = {k: f"replay-{i}" for i, k in enumerate(shown)}
    out = [_findings_table(mine.iter_rows(named=True), ctx.links, ctx.depth, anchors, cls="findings print-cap")]
    if mine.height > 12:
        out.append(f'<p class="print-note">… {mine.height - 12} more findings on screen.</p>')
    if ctx.replays is None:  # every player's replays in one go
        wanted = []
        for _, df in ctx.findings.filter(pl.col("hand").is_not_null() & pl.col("player").is_not_null()).group_by(
            "player", maintain_order=True
        ):
            wanted += df.select("game_id", "hand").unique(maintain_order=True).rows()[:PLAYER_REPLAYS]
        ctx.replays = {(r.game_id, r.hand): r for r in hand_replays(ctx.con, wanted)}
    replays = [ctx.replays[k] for k in shown if k in ctx.replays]
    out.append('<div class="replays">')
    out.append(REPLAY_LEGEND)
    href = functools.partial(ctx.links.player, depth=ctx.depth)
    for r in replays:
        codes = ", ".join(dict.fromkeys(f["code"] for f in r.findings))
        anchor = anchors[(r.game_id, r.hand)]
        out.append(f'<details class="hand"><summary>{esc(f"game {r.game_id} · hand {r.hand} · {codes}")}</summary>')
        out.append(render_hand_replay(r, anchor=anchor, player_href=href,
                                      game_href=ctx.links.game(r.game_id, ctx.depth, r.hand)))  # fmt: skip
        out.append("</details>")
    if len(keys) > len(shown):
        out.append(f"<p>{len(keys) - len(shown)} more hands with findings are replayed on their game pages "
                   "(the table's links).</p>")  # fmt: skip
    out.append("</div>")
    return ("findings", f"Findings ({mine.height})", "\n".join(out))


# --- issue 14: bids, nils and cards judged; leaks against the winning players -------------------------

DD_LEGEND = (
    '<p class="legend"><b>Double dummy.</b> Under each card played, <span class="dd cost">−1</span> is what it '
    "cost the player's side in tricks against best play by all four with every hand visible, and "
    '<span class="dd">best</span> the cards that cost nothing; a card without a mark lost nothing.</p>'
)
"""What the double-dummy marks of a replay mean."""


def _dd_note(note: Mapping[str, Any] | None) -> str:
    if not note or not note.get("cost"):
        return ""
    best = " ".join(card_html(c) for c in str(note.get("best_cards") or "").split())
    title = esc(f"{note['card']} cost {note['cost']}: {note['tricks_best']} tricks with best play, "
                f"{note['tricks_played']} after this card")  # fmt: skip
    return f'<br><span class="dd cost" title="{title}">−{esc(note["cost"])}</span> <span class="dd">best {best}</span>'


def _coaching(ctx: PlayerContext):
    if ctx.coaching is None:
        from spadework.analysis import decisions

        ctx.coaching = decisions.coaching(ctx.con)
    return ctx.coaching


def _section_winner_leaks(ctx: PlayerContext, player: str) -> Section | None:
    found = _coaching(ctx).leaks.filter(pl.col("player") == player)
    if found.is_empty():
        return None
    out = [f'<p class="note">Compared with the winning players ({esc(found["winners"][0])}): each gap in the worse '
           "direction times the player's opportunities, so it counts what the habit cost in its own events (tricks, "
           "hands, nils, plays) over the season, with a 95% interval; biggest first (the first six on paper).</p>",
           '<table class="leaks print-cap6"><tr><th>metric</th><th>player</th><th>n</th><th>winners</th>'
           "<th>leak</th><th>95% interval</th><th>counted in</th></tr>"]  # fmt: skip
    for r in found.head(10).iter_rows(named=True):
        kind = r["kind"]
        cls = ' class="leak"' if r["significant"] and r["leak"] > 0 else (' class="strength"' if r["leak"] < 0 else "")
        unit = r["leak_unit"] + (f", {r['direction']}" if r["better"] is None and r["direction"] else "")
        out.append(f"<tr><td title=\"{esc(metrics.REGISTRY[r['metric']].description)}\">{esc(r['title'])}</td>"
                   f"<td class=num>{_fmt(kind, r['player_value'])}</td><td class=num>{r['player_n']:,}</td>"
                   f"<td class=num>{_fmt(kind, r['winners_value'])}</td><td class=num><span{cls}>{r['leak']:+.1f}</span></td>"
                   f"<td class=num>{r['leak_low']:+.1f} to {r['leak_high']:+.1f}</td><td>{esc(unit)}</td></tr>")  # fmt: skip
    out.append("</table>")
    return ("winner-leaks", "Leaks against the winning players", "\n".join(out))


def _section_bids_judged(ctx: PlayerContext, player: str) -> Section | None:
    c = _coaching(ctx)
    t = {r["metric"]: r for r in ctx.table.filter(pl.col("player") == player).iter_rows(named=True)}
    vs = t.get("bid_vs_hand")
    if not vs or not vs["player_n"]:
        return None
    un = t.get("unsound_nils") or {}
    cards = [("bid − hand value", f"{vs['player_value']:+.2f}"), ("field", f"{vs['field_value']:+.2f}")
             if vs["field_value"] is not None else ("field", "–")]  # fmt: skip
    if un.get("player_n"):
        cards.append(("unsound nils", f"{un['player_k']} of {un['player_n']}"))
    body = ['<div class="cards">' + "".join(f'<div class="stat"><b>{esc(v)}</b>{esc(k)}</div>' for k, v in cards) + "</div>"]
    fit = c.fit
    body.append(
        '<p class="note">The hand\'s value is the tricks an average player of this database takes with such '
        "cards: a count of honours, spade length and short suits, calibrated on every hand (R² "
        f"{fit.get(('tricks', 'r2'), float('nan')):.2f}, mean error {fit.get(('tricks', 'mae'), float('nan')):.2f} "
        "tricks). Above 0 the player bids more than the cards are worth. A nil is unsound when the nil model "
        "gives such a hand less than an even chance.</p>"
    )
    link = functools.partial(ctx.links.game, depth=ctx.depth)
    rows = c.bids.filter(pl.col("player") == player)
    if not rows.is_empty():
        body.append('<table class="bids-judged screen-only"><tr><th></th><th>game</th><th>hand</th><th>bid</th>'
                    "<th>hand value</th><th>bid − value</th><th>taken</th></tr>")  # fmt: skip
        for r in rows.iter_rows(named=True):
            body.append(f"<tr><td>{'overbid' if r['kind'] == 'over' else 'underbid'}</td>"
                        f"<td>{_a(link(r['game_id'], hand=r['hand']), r['game_id'])}</td><td>{r['hand']}</td>"
                        f"<td class=num>{esc(r['bid'])}</td><td class=num>{r['expected_tricks']:.1f}</td>"
                        f"<td class=num>{r['bid_error']:+.1f}</td><td class=num>{_dash(r['taken'])}</td></tr>")  # fmt: skip
        body.append("</table>")
    nils = c.nils.filter(pl.col("player") == player)
    if not nils.is_empty():
        body.append('<table class="nils-judged screen-only"><tr><th>unsound nil</th><th>hand</th><th>chance</th>'
                    "<th>made</th></tr>")  # fmt: skip
        for r in nils.iter_rows(named=True):
            body.append(f"<tr><td>{_a(link(r['game_id'], hand=r['hand']), r['game_id'])}</td><td>{r['hand']}</td>"
                        f"<td class=num>{100 * r['nil_chance']:.0f}%</td><td>{yes_no(r['taken'] == 0)}</td></tr>")  # fmt: skip
        body.append("</table>")
    return ("bids-judged", "Bids and nils against the hand's value", "\n".join(body))


def _section_cards_judged(ctx: PlayerContext, player: str) -> Section | None:
    c = _coaching(ctx)
    if not c.has_card_costs:
        return None
    from spadework.analysis import decisions

    t = {r["metric"]: r for r in ctx.table.filter(pl.col("player") == player).iter_rows(named=True)}
    acc, lost = t.get("play_accuracy") or {}, t.get("tricks_lost_per_100") or {}
    if not acc.get("player_n"):
        return None
    stats_ = [("play accuracy", _fmt("rate", acc["player_value"])), ("field", _fmt("rate", acc.get("field_value"))),
              ("tricks lost / 100 cards", _fmt("mean", lost.get("player_value"))),
              ("field", _fmt("mean", lost.get("field_value")))]  # fmt: skip
    body = ['<div class="cards">' + "".join(f'<div class="stat"><b>{v}</b>{esc(k)}</div>' for k, v in stats_) + "</div>"]
    body.append('<p class="note">Each card against double-dummy best play (every hand visible, as no player '
                "sees them): accuracy is the share of cards that lost nothing, forced ones included.</p>")  # fmt: skip
    worst = c.cards.filter(pl.col("player") == player)
    if worst.is_empty():
        return ("cards-judged", "Card play against double dummy", "\n".join(body))
    if ctx.dd_replays is None:  # every player's costliest hands in one go
        wanted = c.cards.select("game_id", "hand").unique(maintain_order=True).rows()
        ctx.dd_replays = {(r.game_id, r.hand): r for r in hand_replays(ctx.con, wanted)}
    link = functools.partial(ctx.links.game, depth=ctx.depth)
    body.append('<table class="costliest"><tr><th>game</th><th>hand</th><th>trick</th><th>card</th><th>cost</th>'
                "<th>best</th><th>replay</th></tr>")  # fmt: skip
    anchors = {k: f"dd-{i}" for i, k in enumerate(worst.select("game_id", "hand").unique(maintain_order=True).rows())}
    for r in worst.iter_rows(named=True):
        best = " ".join(card_html(x) for x in str(r["best_cards"] or "").split())
        body.append(f"<tr><td>{_a(link(r['game_id'], hand=r['hand']), r['game_id'])}</td><td>{r['hand']}</td>"
                    f"<td>{r['trick']}</td><td>{card_html(r['card'])}</td><td class=num>−{r['cost']}</td>"
                    f"<td>{best}</td><td>{_a('#' + anchors[(r['game_id'], r['hand'])], 'replay')}</td></tr>")  # fmt: skip
    body.append("</table>")
    body.append(f'<div class="replays">{DD_LEGEND}')
    href = functools.partial(ctx.links.player, depth=ctx.depth)
    shown: set[tuple[str, int]] = set()
    for r in worst.iter_rows(named=True):
        key = (r["game_id"], r["hand"])
        rep = ctx.dd_replays.get(key)
        if rep is None or key in shown:
            continue
        shown.add(key)
        notes = {(t_, n["seat"]): n for (t_, _), n in decisions.card_annotations(ctx.con, *key).items()}
        summary = f"game {key[0]} · hand {key[1]} · trick {r['trick']}: {r['card']} cost {r['cost']}"
        body.append(f'<details class="hand" id="{anchors[key]}"><summary>{esc(summary)}</summary>')
        body.append(render_hand_replay(rep, player_href=href, game_href=link(key[0], hand=key[1]), card_notes=notes))
        body.append("</details>")
    body.append("</div>")
    return ("cards-judged", "Card play against double dummy", "\n".join(body))


PLAYER_SECTIONS: list[Callable[[PlayerContext, str], Section | None]] = [
    _section_results,
    _section_leaks,
    _section_tendencies,
    _section_calibration,
    _section_winner_leaks,
    _section_bids_judged,
    _section_cards_judged,
    _section_findings,
]
"""The sections of a player's page, in order: each is called with the :class:`PlayerContext` and the
player's name and returns ``(id, heading, html)`` or ``None`` (left out).  Append (or insert) a function
to add a section, e.g. card costs from the double-dummy solver."""


def player_context(con, games: Sequence[str] | None = None) -> PlayerContext:
    """Everything the player pages need, for every player at once (see :class:`PlayerContext`);
    ``games``: the game ids that get pages (default: every checked game)."""
    with metrics.snapshot(con):
        findings = metrics.findings(con)
        table = coach.player_tables(con)
        calibration = metrics.run(con, "bid_calibration", by="player")
        src = metrics._player_hands_source(con)
        volume = {r[0]: {"hands": r[1], "games": r[2], "partners": r[3]} for r in con.execute(
            f"SELECT player, count(*), count(DISTINCT game_id), count(DISTINCT partner) FROM {src} "
            "WHERE player IS NOT NULL GROUP BY player").fetchall()}  # fmt: skip
        from spadework.analysis import decisions

        coaching = decisions.coaching(con)  # issue 14's sections, on the same per-player-hand copy
    totals = standings_mod.standings(con, by_event=False)
    if games is None:
        games = [r[0] for r in con.execute("SELECT game_id FROM games").fetchall()]
    links = Links(players=page_names(sorted(volume)), games=page_names(games))
    return PlayerContext(con=con, links=links, table=table, calibration=calibration, findings=findings,
                         results={r["player"]: r for r in totals.players.iter_rows(named=True)}, volume=volume,
                         coaching=coaching)  # fmt: skip


def player_page_html(ctx: PlayerContext, player: str, report_title: str = "") -> str:
    """The whole page of one player (see :data:`PLAYER_SECTIONS`)."""
    sections = [s for s in (f(ctx, player) for f in PLAYER_SECTIONS) if s is not None]
    body = [f"<h1>{esc(player)}</h1>",
            '<p class="screen-only note">' + " · ".join(f'<a href="#{esc(i)}">{esc(h)}</a>' for i, h, _ in sections)
            + "</p>"]  # fmt: skip
    for sid, heading, html_ in sections:
        body.append(f'<section id="{esc(sid)}"><h2>{esc(heading)}</h2>{html_}</section>')
    return _page(f"{player}: spadework player page", body, depth=1, report_title=report_title)


# --------------------------------------------------------------------------------------------
# Game pages


def _game_pages(con, out: Path, links: Links, games: pl.DataFrame, report_title: str,
                tick: Callable[[int], None]) -> int:  # fmt: skip
    """Write every game's page, :data:`GAME_BATCH` games at a time; returns how many."""
    ids = sorted(games["game_id"].to_list())
    info = {g["game_id"]: g for g in games.iter_rows(named=True)}
    written = 0
    for start in range(0, len(ids), GAME_BATCH):
        batch = ids[start : start + GAME_BATCH]
        cond = [batch[0], batch[-1]]
        where = "game_id BETWEEN ? AND ?"
        hands = metrics._frame(con, f"SELECT game_id, hand, dealer, rules FROM hands WHERE {where} ORDER BY game_id, hand", cond)
        seats = metrics._frame(con, f"SELECT game_id, hand, seat, player, bid, nil, blind, taken FROM seats WHERE {where}", cond)
        scores = metrics._frame(
            con,
            f"""SELECT h.game_id, h.hand, h.side, h.contract, h.made, h.points, h.total, h.bags,
                       r.points AS recorded_points, r.total AS recorded_total, r.bags AS recorded_bags
                FROM (SELECT * FROM hand_scores WHERE {where}) h
                LEFT JOIN recorded_scores r USING (game_id, hand, side)""",
            cond,
        )
        found = metrics._frame(con, f"SELECT * FROM violations WHERE {where} ORDER BY hand NULLS LAST, trick NULLS FIRST, seat, code", cond)
        replay_keys = found.filter(pl.col("hand").is_not_null()).select("game_id", "hand").unique(maintain_order=True).rows()
        replays: dict[str, list[HandReplay]] = defaultdict(list)
        for r in hand_replays(con, replay_keys):
            replays[r.game_id].append(r)
        parts = {name: {k[0]: df for k, df in frame.partition_by("game_id", as_dict=True).items()}
                 for name, frame in (("hands", hands), ("seats", seats), ("scores", scores), ("found", found))}  # fmt: skip
        for gid in batch:
            html_ = _game_page_html(gid, info[gid], links, {n: parts[n].get(gid) for n in parts}, replays.get(gid, []),
                                    report_title)  # fmt: skip
            (out / "games" / f"{links.games[gid]}.html").write_text(html_, encoding="utf-8")
            written += 1
            tick(1)
    return written


def _bid_cell(s: Mapping[str, Any] | None) -> str:
    if s is None or (s["bid"] is None and not s["nil"]):
        return "–"
    return _bid_text(bool(s["nil"]), bool(s["blind"]), s["bid"], s["bid"])


def _game_page_html(gid: str, g: Mapping[str, Any], links: Links, parts: Mapping[str, pl.DataFrame | None],
                    replays: list[HandReplay], report_title: str) -> str:  # fmt: skip
    depth = 1
    pref = functools.partial(links.player, depth=depth)
    body = [f"<h1>Game {esc(gid)}</h1>"]
    meta = " · ".join(esc(x) for x in (g.get("event"), g.get("date"), f"table {g['table_name']}" if g.get("table_name") else None,
                                        f"round {g['round']}" if g.get("round") else None) if x)  # fmt: skip
    if meta:
        body.append(f"<p>{meta}</p>")
    seats = " · ".join(f"{SEAT_NAMES[s]}: {_a(pref(g[f'player_{s.lower()}']), g[f'player_{s.lower()}'])}" for s in "NESW")
    body.append(f"<p>{seats}</p>")
    result = esc(standings_mod.result_text(dict(g)))
    cls = ' class="differs"' if g.get("result_differs") else ""
    body.append(f'<div class="cards"><div class="stat"><b>{esc(standings_mod.score_text(g["total_ns"], g["total_ew"]))}</b>'
                f'NS / EW (recomputed)</div><div class="stat"><b{cls}>{result}</b>result</div>'
                f'<div class="stat"><b>{esc(g["hands"])}</b>hands</div><div class="stat"><b>{esc(g["findings"])}</b>findings</div></div>')  # fmt: skip
    if g.get("result_differs"):
        body.append(f'<p class="differs">⚠ The log records another result: NS {_dash(g["recorded_total_ns"])}, EW '
                    f'{_dash(g["recorded_total_ew"])}, winner {_dash(g["recorded_winner"]) if g["recorded_winner"] else "none"}.</p>')  # fmt: skip
    hands = parts.get("hands")
    seat_rows: dict[tuple[int, str], dict] = {}
    if parts.get("seats") is not None:
        seat_rows = {(r["hand"], r["seat"]): r for r in parts["seats"].iter_rows(named=True)}
    score_rows: dict[tuple[int, str], dict] = {}
    if parts.get("scores") is not None:
        score_rows = {(r["hand"], r["side"]): r for r in parts["scores"].iter_rows(named=True)}
    found = parts.get("found")
    codes: dict[int, list[str]] = defaultdict(list)
    if found is not None:
        for f in found.iter_rows(named=True):
            if f["hand"] is not None:
                codes[f["hand"]].append(f["code"])
    replayed = {r.hand for r in replays}
    body.append('<h2 id="hands">Hands</h2>')
    names = {s: g.get(f"player_{s.lower()}") for s in "NESW"}
    head = "".join(f"<th>{s} {esc(names[s])}</th>" for s in "NESW")
    body.append('<table class="hands"><tr><th rowspan="2">hand</th><th rowspan="2">dealer</th>'
                f'<th colspan="4">bids</th><th colspan="4">tricks taken</th><th colspan="3">NS (recomputed / recorded)</th>'
                '<th colspan="3">EW (recomputed / recorded)</th><th rowspan="2">findings</th></tr>'
                f"<tr>{head}{head}<th>points</th><th>total</th><th>made</th><th>points</th><th>total</th><th>made</th></tr>")  # fmt: skip
    if hands is not None:
        for h in hands.iter_rows(named=True):
            n = h["hand"]
            bad = codes.get(n, [])
            # every hand answers to #hand-N (Links.game): its replay below where it has one, else its row
            cells = [f'<td id="{"row" if n in replayed else "hand"}-{n}">{n}</td><td>{esc(h["dealer"])}</td>']
            cells += [f"<td>{esc(_bid_cell(seat_rows.get((n, s))))}</td>" for s in "NESW"]
            cells += [f"<td class=num>{_dash((seat_rows.get((n, s)) or {}).get('taken'))}</td>" for s in "NESW"]
            for side in ("NS", "EW"):
                sc = score_rows.get((n, side)) or {}
                p_bad = sc.get("recorded_points") is not None and sc.get("recorded_points") != sc.get("points")
                t_bad = sc.get("recorded_total") is not None and sc.get("recorded_total") != sc.get("total")
                cells.append(f"<td class=\"num{' shade' if p_bad else ''}\">{_dash(sc.get('points'))} / {_dash(sc.get('recorded_points'))}</td>")
                cells.append(f"<td class=\"num{' shade' if t_bad else ''}\">{_dash(sc.get('total'))} / {_dash(sc.get('recorded_total'))}</td>")
                cells.append(f"<td>{yes_no(sc.get('made')) if sc.get('contract') else '–'}</td>")
            if bad:
                target = f"#hand-{n}" if n in replayed else None
                cells.append(f"<td class=code>{_a(target, ', '.join(dict.fromkeys(bad)))}</td>")
            else:
                cells.append("<td></td>")
            body.append(f"<tr{' class=badcell' if bad else ''}>{''.join(cells)}</tr>")
    body.append("</table>")
    loose = found.filter(pl.col("hand").is_null()) if found is not None else None
    if loose is not None and not loose.is_empty():
        body.append("<h3>Findings about the whole game</h3><ul>")
        body += [f"<li><span class=code>{esc(f['code'])}</span> {esc(f['message'])}</li>" for f in loose.iter_rows(named=True)]
        body.append("</ul>")
    if replays:
        body.append('<h2 id="findings">Hands with findings, replayed</h2>')
        body.append(REPLAY_LEGEND)
        for r in replays:
            body.append(render_hand_replay(r, anchor=f"hand-{r.hand}", player_href=pref))
    return _page(f"Game {gid}", body, depth=depth, report_title=report_title)


# --------------------------------------------------------------------------------------------
# The standings page


def _standing_rows(df: pl.DataFrame, key: str, links: Links) -> str:
    out = ['<table class="rank"><tr><th>#</th><th>' + ("partnership" if key == "players" else "player")
           + "</th><th>games</th><th>won</th><th>win %</th><th>for</th><th>against</th><th>margin</th><th>sets</th>"
           "<th>bags</th><th>tie-break</th></tr>"]  # fmt: skip
    for r in df.iter_rows(named=True):
        if key == "players":
            who = " &amp; ".join(_a(links.player(p), p) for p in r["players"])
        else:
            who = _a(links.player(r["player"]), r["player"])
        decided = "" if r["decided_by"] in (None, "wins") else r["decided_by"].replace("_", " ")
        wr = "–" if r["win_rate"] is None else f"{100 * r['win_rate']:.0f}%"
        out.append(f"<tr><td>{r['rank']}</td><td>{who}</td><td>{r['games']}</td><td>{r['wins']}</td><td>{wr}</td>"
                   f"<td>{r['points_for']:,}</td><td>{r['points_against']:,}</td><td>{r['avg_margin']:+.1f}</td>"
                   f"<td>{r['sets']}</td><td>{r['bags']}</td><td>{esc(decided)}</td></tr>")  # fmt: skip
    out.append("</table>")
    return "\n".join(out)


def _games_rows(df: pl.DataFrame, links: Links) -> str:
    out = ["<table class=games><tr><th>game</th><th>table</th><th>round</th><th>NS</th><th>EW</th><th>score NS / EW</th>"
           "<th>result</th><th>hands</th><th>findings</th></tr>"]  # fmt: skip
    for g in df.iter_rows(named=True):
        ns = " &amp; ".join(_a(links.player(g[f"player_{s}"]), g[f"player_{s}"]) for s in "ns" if g[f"player_{s}"])
        ew = " &amp; ".join(_a(links.player(g[f"player_{s}"]), g[f"player_{s}"]) for s in "ew" if g[f"player_{s}"])
        cls = ' class="differs"' if g["result_differs"] else ""
        found = _a(links.game(g["game_id"]) + "#findings", g["findings"]) if g["findings"] else ""
        out.append(f"<tr><td>{_a(links.game(g['game_id']), g['game_id'])}</td><td>{esc(g['table_name'])}</td>"
                   f"<td>{esc(g['round'])}</td><td>{ns}</td><td>{ew}</td>"
                   f"<td class=num>{esc(standings_mod.score_text(g['total_ns'], g['total_ew']))}</td>"
                   f"<td{cls}>{esc(standings_mod.result_text(g))}</td><td class=num>{g['hands']}</td>"
                   f"<td class=num>{found}</td></tr>")  # fmt: skip
    out.append("</table>")
    return "\n".join(out)


def standings_page_html(st: standings_mod.Standings, overall: standings_mod.Standings | None, links: Links,
                        report_title: str = "") -> str:  # fmt: skip
    """The results and standings page: the season's overall ranking (when the logs name more than one
    event), then per event the players', the partnerships' and the games' tables."""
    chain = ", then ".join(k.replace("_", " ") for k in st.chain)
    body = ["<h1>Results and standings</h1>",
            f'<p class="note">Order: {esc(chain)}; head-to-head counts the wins over those still tied and is '
            "applied again among those it leaves tied. Margin: point difference per game. Scores and winners are "
            "recomputed by the rules; a result in red is one the log records differently.</p>"]  # fmt: skip
    events = st.events
    if len(events) > 1:
        body.append("<p>" + " · ".join(f'<a href="#event-{i}">{esc(e if e is not None else "games without an event")}</a>'
                                         for i, e in enumerate(events)) + "</p>")  # fmt: skip
    if overall is not None and len(events) > 1:
        body.append('<h2 id="overall">All games</h2>')
        body.append("<h3>Players</h3>" + _standing_rows(overall.players, "player", links))
        body.append("<details><summary>Partnerships</summary>" + _standing_rows(overall.partnerships, "players", links)
                    + "</details>")  # fmt: skip
    for i, event in enumerate(events):
        sel = (lambda df: df.filter(pl.col("event").is_null())) if event is None else \
            (lambda df, e=event: df.filter(pl.col("event") == e))  # fmt: skip
        games = sel(st.games)
        finished = games.filter(pl.col("winner").is_not_null()).height
        name = event if event is not None else "Games without an event"
        body.append(f'<h2 id="event-{i}">{esc(name)}</h2><p class="note">{games.height} games, {finished} finished</p>')
        body.append("<h3>Players</h3>" + _standing_rows(sel(st.players), "player", links))
        body.append("<h3>Partnerships</h3>" + _standing_rows(sel(st.partnerships), "players", links))
        body.append("<h3>Games</h3>" + _games_rows(games, links))
    if not events:
        body.append("<p>No checked games.</p>")
    return _page("Results and standings", body, depth=0, report_title=report_title)


# --------------------------------------------------------------------------------------------
# The index and the whole report


def _player_table_html(table: pl.DataFrame, links: Links) -> str:
    if table.is_empty():
        return "<p>No players.</p>"
    heads = "".join(f"<th>{esc(metrics.REGISTRY[m].title)}</th>" for m in PLAYER_COLUMNS)
    out = [f'<table class="players"><tr><th>player</th>{heads}</tr>']
    cells = {(r["player"], r["metric"]): r for r in table.filter(pl.col("metric").is_in(list(PLAYER_COLUMNS))).iter_rows(named=True)}
    for player in sorted({p for p, _ in cells}):
        row = [f"<td>{_a(links.player(player), player)}</td>"]
        for m in PLAYER_COLUMNS:
            r = cells.get((player, m))
            if r is None:
                row.append("<td></td>")
                continue
            kind = r["kind"]
            tip = f"n={r['player_n']}"
            if r["player_low"] is not None:
                tip += f"; 95%: {_fmt(kind, r['player_low'])} to {_fmt(kind, r['player_high'])}"
            tip += f"; field: {_fmt(kind, r['field_value'])}"
            n = "" if kind == "count" else f' <span class="n">n={r["player_n"]}</span>'
            row.append(f'<td class="num" title="{esc(tip)}">{_fmt(kind, r["player_value"])}{n}</td>')
        out.append("<tr>" + "".join(row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _progress(progress) -> tuple[Callable[[str, int], None], Callable[[int], None], Callable[[], None]]:
    """(start(stage, total), advance(n), stop()) for ``build_report``'s ``progress``."""
    if progress is None or progress is False:
        return (lambda stage, total: None), (lambda n: None), (lambda: None)
    if callable(progress):
        state = {"stage": "", "done": 0, "total": 0}

        def start(stage: str, total: int) -> None:
            state.update(stage=stage, done=0, total=total)
            progress(stage, 0, total)

        def advance(n: int) -> None:
            state["done"] += n
            progress(state["stage"], state["done"], state["total"])

        return start, advance, lambda: None
    from spadework.analysis.present import ProgressBar

    bar = ProgressBar(True).__enter__()
    return bar.stage, bar.advance, lambda: bar.__exit__(None, None, None)


LOAD_ERROR_EXAMPLES = 5
"""Rows shown of each reason in the report's list of records that could not be read."""


def _load_errors_html(con) -> str:
    """The report's section on the records the loads rejected: each reason, how many, and the first
    :data:`LOAD_ERROR_EXAMPLES` of them (file, line, message); the rest are in ``load_errors``."""
    from spadework.analysis.present import grouped_rows

    groups = grouped_rows(con, "load_errors", examples=LOAD_ERROR_EXAMPLES)
    total = sum(g["count"] for g in groups)
    out = ['<h2 id="load-errors">Records that could not be read</h2>',
           f"<p>{total:,} record{'s' if total != 1 else ''} of the logs could not be read and are left out of "
           "everything above; each is a row of the <code>load_errors</code> table (file, line, reason and the "
           "text as it was).</p>",
           "<table><tr><th>reason</th><th>count</th><th>file</th><th>line</th><th>message</th></tr>"]  # fmt: skip
    for g in groups:
        for k, (f, line, msg) in enumerate(g["examples"]):
            first = f"<td>{esc(g['reason'])}</td><td class=num>{g['count']:,}</td>" if k == 0 else "<td></td><td></td>"
            out.append(f"<tr>{first}<td>{esc(f)}</td><td class=num>{esc(line)}</td><td>{esc(msg)}</td></tr>")
    out.append("</table>")
    return "".join(out)


def build_report(con, out_dir: str | os.PathLike[str], *, title: str = "spadework report",
                 interactive: bool = True, progress: Any = None) -> Path:  # fmt: skip
    """Write the report (``index.html``, ``standings.html``, ``players/``, ``games/``: see the module doc)
    into ``out_dir`` and return the path of ``index.html``.

    ``con``: a DuckDB connection with the TABLES.md tables (loaded and checked; read-only is fine).
    ``out_dir`` is created if needed; where it holds an earlier report, that report's player and
    game pages are removed first (a player or game no longer in the database kept its page, with
    its findings).  ``interactive``: the index's charts drawn by inlined Vega-Embed
    with tooltips (default), or inlined static SVG with no script.  ``progress``: ``True`` for a rich
    progress bar on standard error, or a callable ``progress(stage, done, total)``.  The pages need no
    network.  Raises ``OSError`` when a file cannot be written.
    """
    out = Path(out_dir)
    for sub in ("players", "games"):
        (out / sub).mkdir(parents=True, exist_ok=True)
        if (out / "index.html").is_file():  # a report written here before: its pages of players and
            for old in (out / sub).glob("*.html"):  # games that are not in this one must not stay
                old.unlink()
    start, advance, stop = _progress(progress)
    try:
        start("reading the season", 0)
        with metrics.snapshot(con):
            summary = metrics.summary(con)
            mismatches = metrics.score_mismatches(con)
            chart_list = _charts(con)
            st = standings_mod.standings(con)
            ctx = player_context(con, games=st.games["game_id"].to_list())
        overall = standings_mod.standings(con, by_event=False) if len(st.events) > 1 else None
        all_findings, table, links = ctx.findings, ctx.table, ctx.links
        players = sorted(ctx.volume)
        hand_keys = all_findings.filter(pl.col("hand").is_not_null()).select("game_id", "hand").unique(maintain_order=True).rows()
        index_replays = hand_replays(con, hand_keys[:OPEN_REPLAYS])
        # index
        body: list[str] = [f"<h1>{esc(title)}</h1>", '<h2 id="summary">Summary</h2><div class="cards">']
        for key, label in (("games", "games"), ("hands", "hands"), ("players", "players"),
                           ("hands_with_play", "hands with card play"), ("findings", "findings"),
                           ("score_mismatches", "score mismatches"), ("load_errors", "load errors")):  # fmt: skip
            body.append(f'<div class="stat"><b>{summary[key]:,}</b>{esc(label)}</div>')
        differs = st.games.filter(pl.col("result_differs")).height
        body.append(f'<div class="stat"><b>{differs}</b>result{"s" if differs != 1 else ""} recorded differently</div></div>')
        if not all_findings.is_empty():
            by_code = all_findings.group_by("code").agg(n=pl.len(), hands=pl.struct("game_id", "hand").n_unique()).sort(
                ["n", "code"], descending=[True, False])  # fmt: skip
            body.append("<table><tr><th>finding</th><th>count</th><th>hands</th></tr>")
            body += [f"<tr><td class=code>{esc(r['code'])}</td><td class=num>{r['n']:,}</td><td class=num>{r['hands']:,}</td></tr>"
                     for r in by_code.iter_rows(named=True)]  # fmt: skip
            body.append("</table>")
        body.append('<p class="note">Contents: <a href="standings.html">results and standings</a> · '
                    '<a href="#players">players</a> · <a href="#charts">charts</a> · '
                    '<a href="#mismatches">score mismatches</a> · <a href="#findings">findings</a>'
                    + (' · <a href="#load-errors">records that could not be read</a>' if summary["load_errors"] else "")
                    + "</p>")  # fmt: skip
        body.append('<h2 id="players">Players</h2><p class="note">Each name opens the player\'s page: results, '
                    "leaks and strengths, tendencies against the field, bidding calibration and findings.</p>")  # fmt: skip
        body.append(_player_table_html(table, links))
        body.append('<h2 id="charts">Charts</h2><div class="charts">')
        body += [_chart_block(chart, i, caption, interactive) for i, (caption, chart) in enumerate(chart_list)]
        if not chart_list:
            body.append("<p>No data to chart.</p>")
        body.append("</div>")
        body.append('<h2 id="mismatches">Score mismatches</h2>')
        if mismatches.is_empty():
            body.append("<p>None: every recorded score agrees with the recomputed one.</p>")
        else:
            body.append("<table><tr><th>game</th><th>hand</th><th>table</th><th>round</th><th>side</th><th>finding</th>"
                        "<th>field</th><th>recorded</th><th>expected</th><th>message</th></tr>")  # fmt: skip
            for r in mismatches.iter_rows(named=True):
                hand_link = _a(links.game(r["game_id"], 0, r["hand"]), r["hand"]) if r["hand"] is not None else "–"
                body.append(f"<tr><td>{_a(links.game(r['game_id']), r['game_id'])}</td><td>{hand_link}</td>"
                            + "".join(f"<td>{esc(r[c])}</td>" for c in ("table_name", "round", "side", "code", "field",
                                                                         "recorded", "expected", "message")) + "</tr>")  # fmt: skip
            body.append("</table>")
        body.append('<h2 id="findings">Findings</h2>')
        if all_findings.is_empty():
            body.append("<p>No findings.</p>")
        else:
            shown = all_findings.head(INDEX_FINDINGS)
            anchors = {(r.game_id, r.hand): f"hand-{i}" for i, r in enumerate(index_replays)}
            body.append(f"<p>{all_findings.height:,} findings in {len(hand_keys):,} hands. Every row links to the "
                        "trick-by-trick replay of its hand" + (f"; the first {len(index_replays)} hands are replayed "
                        "below, the others on their game's page" if len(hand_keys) > len(index_replays) else ", below")
                        + ".</p>")  # fmt: skip
            if shown.height < all_findings.height:
                body.append(f"<p>The first {shown.height:,} are listed here; every game page lists its own.</p>")
            body.append(_findings_table(shown.iter_rows(named=True), links, 0, anchors))
            body.append(REPLAY_LEGEND)
            href = functools.partial(links.player, depth=0)
            for i, r in enumerate(index_replays):
                codes = ", ".join(dict.fromkeys(f["code"] for f in r.findings))
                body.append(f'<details class="hand" open><summary>{esc(f"game {r.game_id} · hand {r.hand} · {codes}")}</summary>')
                body.append(render_hand_replay(r, anchor=f"hand-{i}", player_href=href,
                                               game_href=links.game(r.game_id, 0, r.hand)))  # fmt: skip
                body.append("</details>")
        if summary["load_errors"]:
            body.append(_load_errors_html(con))
        scripts = [_ERROR_HOOK, vega_bundle()] if interactive else []
        if interactive and chart_list:
            body.append(f"<script>{_EMBED}</script>")
        path = out / "index.html"
        path.write_text(_page(title, body, depth=0, scripts=scripts, report_title=title), encoding="utf-8")
        # standings
        (out / "standings.html").write_text(standings_page_html(st, overall, links, title), encoding="utf-8")
        # players
        start("player pages", len(players))
        for p in players:
            (out / "players" / f"{links.players[p]}.html").write_text(player_page_html(ctx, p, title), encoding="utf-8")
            advance(1)
        # games
        start("game pages", st.games.height)
        _game_pages(con, out, links, st.games, title, advance)
    finally:
        stop()
    return path


__all__ = [
    "CSS",
    "HandReplay",
    "Links",
    "PLAYER_SECTIONS",
    "PlayerContext",
    "REPLAY_LEGEND",
    "build_report",
    "card_html",
    "esc",
    "evidence",
    "hand_replay",
    "hand_replay_html",
    "hand_replays",
    "interval_svg",
    "page_names",
    "player_context",
    "player_page_html",
    "render_hand_replay",
    "standings_page_html",
    "vega_bundle",
    "yes_no",
]
