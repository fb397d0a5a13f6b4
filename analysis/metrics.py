"""Player and side tendencies as named SQL steps over the DuckDB tables of TABLES.md.

Every metric is a :class:`Metric`: a name, a sentence saying what it measures, and one
SQL query over a per-player-hand relation.  ``run(con, "bid_bias", filters, by="player")``
runs it and returns a polars frame with one row per group and always the same columns::

    <group keys> [<extra keys>] n  k  total  value  se  low  high

* **rates** (``kind == "rate"``): ``n`` opportunities, ``k`` successes, ``value = k / n``,
  ``se`` the normal-approximation standard error and ``low``/``high`` the 95 % Wilson interval;
* **means** (``kind == "mean"``): ``n`` observations, ``total`` their sum, ``value`` the mean,
  ``se`` its standard error (null below two observations) and ``low``/``high`` = value -/+ 1.96 se
  (for a mean of event counts, ``events``, widened to the Poisson score interval of ``total``);
* **counts** (``kind == "count"``): ``n`` = ``value`` = the number of rows.

A metric with ``scale`` (findings per 100 hands) has ``value``, ``se``, ``low``, ``high`` multiplied by it.

How it is built (the "named SQL steps", in the spirit of Splink):

1. :func:`prepare` creates temporary helper tables from the one place that knows each thing
   (``sw_seats``/``sw_positions`` from :mod:`spadework.parsers.seats`, ``sw_cards`` from the decks of
   :mod:`spadework.parsers.cards`, ``sw_rules`` from the rules text of each hand) and temporary views:
   ``sw_plays`` -> ``sw_play_steps`` -> ``sw_trick_results`` -> ``sw_play_analysis`` (card play),
   ``sw_side_hands`` (one row per game, hand, side: recomputed score and the state before the hand)
   and ``sw_player_hands`` (one row per game, hand, seat: everything the metrics need).
   Temporary objects work on a read-only connection and never change the database file.
2. The filters (:class:`Filters`) become a ``WHERE`` clause on ``sw_player_hands`` (CTE ``ph``).
   Side-level metrics read ``sh`` (``ph`` with one row per game, hand, side and group) and
   hand-level ones ``hh`` (one row per game, hand and group), so grouping by a partnership never
   counts a side's hand twice.
3. The metric's query groups by the ``by`` keys; :mod:`spadework.analysis.stats` adds the intervals.

Definitions shared by the metrics (the docstring of each metric gives its own):

* *tricks taken by a seat*, as the scorer counts them (RULES.md section 5 item 6): the trick
  winners of the checker's ``tricks`` table when all 13 tricks have one (else of a replay of
  ``plays`` with the deck of the hand's ruleset); otherwise ``hands.taken_<seat>`` where the log
  records it (a claimed hand: a few tricks played, then the count); otherwise the winners of the
  tricks played.
* *numeric bid*: a bid that is neither nil nor blind (Barmore's blind seven is a side's bid, not
  one player's, so the individual bidding metrics leave it out); the first bid of a seat counts.
* *score situation* at the start of a hand: the side's margin = its total minus the opponents',
  from the official ``hand_scores`` totals of the previous hand (after any renege penalty; the
  first hand: the recorded ``score_before``, else 0; the first hand after a missing one, as the
  checker goes on (RULES.md 7): its recorded ``score_before``, else its recorded total less its
  recorded points); ``behind`` when margin <= -100, ``ahead`` when margin >= 100, else ``close``.
* *bags entering the hand*: the side's bag count after the previous hand, the same way.
* *bidding position*: 1..4 clockwise from the dealer's left (the dealer is 4).
* *void*: a card not of the suit led, by a seat that held none of it (known from ``deals``; where
  the hand has no deal, any card off the suit led counts as void, a renege included).
* *a choice*: the void seat held at least one spade and one card of another suit, so ruffing
  or discarding was its decision.

* *hands after the game's end* (``PLAYED_AFTER_GAME_END``) were bid and played, so the per-hand
  metrics count them; the game's result (``games``, the standings) stays as it was when it ended.

RULES.md sections 3 (bidding), 4 (play) and 5 (scoring) define the terms.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

import polars as pl

from spadework.analysis import stats
from spadework.parsers.cards import JOKER_DECK, JOKERS, NYC_DECK, STANDARD_CARDS, STANDARD_DECK, Deck, rank_of
from spadework.parsers.schema import ALL_TABLES
from spadework.parsers.seats import SEATS
from spadework.parsers.state import require_checked

SITUATION_MARGIN = 100
"""Points of margin at the start of a hand that make a side ``behind`` (<= -100) or ``ahead`` (>= 100)."""

DECKS: dict[str, Deck] = {"standard": STANDARD_DECK, "barmore": JOKER_DECK, "nyc": NYC_DECK}
"""Decks by their key in ``sw_cards`` (:func:`deck_key`): the three preset decks, and every other deck a
loaded ruleset plays with (its own removed cards, extra cards or trump order), added by :func:`prepare`."""


def deck_key(deck: Deck) -> str:
    """The key of ``deck`` in ``sw_cards`` and ``RuleFacts.deck``: the preset's name for the standard,
    barmore and nyc decks, else ``custom:`` and a digest of its cards and trump order (so a custom
    ruleset with jokers reads BJ and LJ as trumps, as its deck says; RULES.md section 2)."""
    for name, known in DECKS.items():
        if not name.startswith("custom:") and known.cards == deck.cards and known.trump_order == deck.trump_order:
            return name
    text = ",".join(deck.cards) + "|" + ",".join(deck.trump_order)
    return "custom:" + hashlib.sha1(text.encode()).hexdigest()[:12]

RANK_CLASSES = ("high", "middle", "low")
"""Lead profile rank classes: ``high`` = A K Q (and trumps above the ace of spades: jokers, nyc's 2D
and the 2S of the joker decks), ``middle`` = J T 9 8, ``low`` = 7 .. 2."""

GROUP_KEYS: dict[str, str] = {
    "player": "player",
    "partner": "partner",
    "partnership": "partnership",
    "side": "side",
    "seat": "seat",
    "position": "position",
    "situation": "situation",
    "event": "event",
    "table": "table_name",
    "table_name": "table_name",
    "round": "round",
    "ruleset": "ruleset",
    "game_id": "game_id",
    "date": "date",
    "all": "scope",
    "scope": "scope",
}
"""Names accepted by ``by=`` and the column of ``sw_player_hands`` each groups on (``all``: one group,
column ``scope`` = ``'all'``)."""

OUTPUT_COLUMNS = ("n", "k", "total", "value", "se", "low", "high")
"""The columns every metric frame has after its keys."""


# --------------------------------------------------------------------------------------------
# Filters


@dataclass(frozen=True)
class Filters:
    """Which player-hands a metric looks at.  Every field is optional; ``None`` means "all".

    ``player``, ``partner``, ``event``, ``ruleset``, ``table``, ``round``, ``game_id``: a value or a
    list of values (the player's own name, the name of the partner across the table, the hand's event,
    the ruleset preset name ``standard``/``barmore``/``nyc``, the table and round labels of the log).
    ``period``: ``(first_date, last_date)`` inclusive, ISO strings or dates, either end ``None``.
    ``position``: bidding position 1..4 from the dealer's left (a value or a list).
    ``situation``: ``"behind"``, ``"close"`` or ``"ahead"`` at the start of the hand (see the module doc).
    ``bags``: bags the player's side brings into the hand: a number or ``(min, max)`` inclusive.
    ``exclude_player``: leave this player's hands out (the "field" a player is compared with).
    """

    player: str | Sequence[str] | None = None
    partner: str | Sequence[str] | None = None
    event: str | Sequence[str] | None = None
    period: tuple[Any, Any] | None = None
    ruleset: str | Sequence[str] | None = None
    position: int | Sequence[int] | None = None
    situation: str | Sequence[str] | None = None
    bags: int | tuple[int | None, int | None] | None = None
    table: str | Sequence[str] | None = None
    round: str | Sequence[str] | None = None
    game_id: str | Sequence[str] | None = None
    exclude_player: str | None = None

    @classmethod
    def of(cls, value: "Filters | Mapping[str, Any] | None") -> "Filters":
        """A :class:`Filters` from ``None``, a mapping of field names, or a :class:`Filters`.

        Raises ``ValueError`` naming the known fields for an unknown key.
        """
        if value is None:
            return cls()
        if isinstance(value, Filters):
            return value
        known = {f.name for f in fields(cls)}
        if not isinstance(value, Mapping):
            raise ValueError(
                f"filters must be a mapping such as {{'player': {value!r}}} or a Filters, not {type(value).__name__}"
                f" {value!r}; known filters: {sorted(known)}"
            )
        unknown = set(value) - known
        if unknown:
            raise ValueError(f"unknown filter {sorted(unknown)}; known filters: {sorted(known)}")
        return cls(**dict(value))

    def to_dict(self) -> dict[str, Any]:
        """The fields that are set."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition on ``sw_player_hands`` and its parameters.

        Raises ``ValueError`` for a position outside 1..4 or an unknown situation.
        """
        clauses: list[str] = []
        params: list[Any] = []

        def member(column: str, value: Any) -> None:
            if value is None:
                return
            values = [value] if isinstance(value, (str, int)) else list(value)
            if column != "position" and not all(isinstance(v, str) for v in values):
                raise ValueError(f"filter {column!r}: {value!r} is not a name (text, or a list of texts)")
            clauses.append(f"{column} IN ({', '.join('?' for _ in values)})")
            params.extend(values)

        member("player", self.player)
        member("partner", self.partner)
        member("event", self.event)
        member("ruleset", self.ruleset)
        member("table_name", self.table)
        member("round", self.round)
        member("game_id", self.game_id)
        if self.position is not None:
            positions = [self.position] if isinstance(self.position, int) else list(self.position)
            if any(p not in (1, 2, 3, 4) for p in positions):
                raise ValueError(f"bidding position must be 1..4, got {self.position!r}")
            member("position", positions)
        if self.situation is not None:
            situations = [self.situation] if isinstance(self.situation, str) else list(self.situation)
            bad = [s for s in situations if s not in ("behind", "close", "ahead")]
            if bad:
                raise ValueError(f"score situation must be behind, close or ahead, got {bad}")
            member("situation", situations)
        if self.period is not None:
            if isinstance(self.period, (str, bytes)) or not isinstance(self.period, Sequence) or len(self.period) != 2:
                raise ValueError(f"filter 'period': {self.period!r} is not a (first_date, last_date) pair (either end None)")
            first, last = self.period
            if first is not None:
                clauses.append("substr(date, 1, 10) >= ?")
                params.append(_iso(first))
            if last is not None:
                clauses.append("substr(date, 1, 10) <= ?")
                params.append(_iso(last))
        if self.bags is not None:
            whole = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
            pair = isinstance(self.bags, (tuple, list)) and len(self.bags) == 2
            if not (whole(self.bags) or pair and all(b is None or whole(b) for b in self.bags)):
                raise ValueError(f"filter 'bags': {self.bags!r} is not a number of bags or a (min, max) pair (either end None)")
            if isinstance(self.bags, int):
                clauses.append("bags_before = ?")
                params.append(self.bags)
            else:
                low, high = self.bags
                if low is not None:
                    clauses.append("bags_before >= ?")
                    params.append(low)
                if high is not None:
                    clauses.append("bags_before <= ?")
                    params.append(high)
        if self.exclude_player is not None:
            clauses.append("player IS DISTINCT FROM ?")
            params.append(self.exclude_player)
        return (" AND ".join(clauses) or "TRUE", params)

    def require_known(self, con) -> None:
        """Raise ``ValueError`` naming a filter value no loaded hand has (a misspelt event or player
        would otherwise give empty results), with the values there are; also the errors of
        :meth:`where`.  ``con`` must be prepared (:func:`prepare`)."""
        self.where()
        names = lambda v: [] if v is None else [v] if isinstance(v, str) else list(v)  # noqa: E731
        people = names(self.player) + names(self.partner)
        if people:
            require_players(con, people)
        columns = {"event": "event", "table": "table_name", "round": "round", "game_id": "game_id"}
        for key, column in columns.items():
            wanted = names(getattr(self, key))
            if wanted:
                found = con.execute(f"SELECT DISTINCT {column} FROM hands WHERE {column} IN ({', '.join('?' for _ in wanted)})", wanted)
                _require_values(key, wanted, {r[0] for r in found.fetchall()},
                                lambda c=column: con.execute(f"SELECT DISTINCT {c} FROM hands WHERE {c} IS NOT NULL ORDER BY 1 LIMIT 21").fetchall())  # fmt: skip
        wanted = names(self.ruleset)
        if wanted:
            known = {r[0] for r in con.execute("SELECT DISTINCT ruleset FROM sw_rules").fetchall()}
            _require_values("ruleset", wanted, known, lambda: sorted((k,) for k in known))


def _require_values(key: str, wanted: list[str], found: set[str], listing) -> None:
    missing = [w for w in wanted if w not in found]
    if missing:
        there = [r[0] for r in listing()]
        shown = ", ".join(map(str, there[:20])) + (" ..." if len(there) > 20 else "")
        raise ValueError(f"no hand has {key} {missing[0]!r}; {key} values: {shown or '(none)'}")


def _iso(value: Any) -> str:
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()[:10]
    return str(value)[:10]


# --------------------------------------------------------------------------------------------
# Rules: the few facts about a ruleset the metrics need


@dataclass(frozen=True)
class RuleFacts:
    """What the metrics need to know about one ``hands.rules`` text (RULES.md section 5 options).

    ``ruleset``: the preset name; ``deck``: the key (:func:`deck_key`) of the ruleset's own deck, used to
    read card play (``sw_cards``);
    ``nil_allowed``; ``blind_nil``: ``"never"``, ``"always"`` or ``"behind"`` (allowed to a side behind
    by at least ``behind_by`` points); ``bag_limit``/``bag_penalty`` (default 10 / 100).
    """

    ruleset: str
    deck: str
    nil_allowed: bool
    blind_nil: str
    behind_by: int
    bag_limit: int
    bag_penalty: int


def rule_facts(rules: str | Mapping[str, Any] | None) -> RuleFacts:
    """Read a ruleset as stored in ``hands.rules`` (a preset name or a JSON object with ``preset``)
    through :func:`spadework.analysis.engine.rules.get_ruleset`.

    Unreadable rules are taken as ``standard`` (the checker reports them as ``RULES_INVALID``; the
    metrics only need a best reading).  Never raises.
    """
    from spadework.analysis.engine.rules import fallback_ruleset, get_ruleset

    spec: Any = rules
    if isinstance(rules, str) and rules.strip().startswith("{"):
        try:
            spec = json.loads(rules)
        except ValueError:
            spec = None
    try:
        rs = get_ruleset(spec)
    except ValueError:  # RulesError: the ruleset the checker used
        rs = fallback_ruleset(spec)
    if rs.blind_nil == "never" or not rs.nil:
        blind_nil, behind_by = "never", 100
    elif rs.blind_nil == "always":
        blind_nil, behind_by = "always", 100
    else:
        blind_nil, behind_by = "behind", int(rs.blind_nil["behind_by"])  # type: ignore[index]
    return RuleFacts(
        ruleset=rs.preset,
        deck=_known_deck(rs.deck),
        nil_allowed=rs.nil,
        blind_nil=blind_nil,
        behind_by=behind_by,
        bag_limit=rs.bag_limit,
        bag_penalty=rs.bag_penalty or 100,
    )


def _known_deck(deck: Deck) -> str:
    """The key of ``deck``, which is added to :data:`DECKS`."""
    key = deck_key(deck)
    DECKS.setdefault(key, deck)
    return key


def rank_class(card: str, deck: Deck) -> str:
    """``high``, ``middle`` or ``low`` for a card in ``deck`` (see :data:`RANK_CLASSES`)."""
    if card in JOKERS:
        return "high"
    if deck.is_spade(card) and deck.power(card) > deck.power("AS"):
        return "high"
    rank = rank_of(card)
    if rank in "AKQ":
        return "high"
    if rank in "JT98":
        return "middle"
    return "low"


# --------------------------------------------------------------------------------------------
# Helper tables and views


def _sql_str(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _values(rows: Iterable[Sequence[Any]]) -> str:
    return ", ".join("(" + ", ".join(_sql_str(v) for v in row) + ")" for row in rows)


def _cards_sql(decks: Mapping[str, Deck]) -> str:
    """``sw_cards``: every card code read with each deck (its suit, trump or not, power, rank class)."""
    cards = _values(
        (name, card, deck.suit(card), deck.is_spade(card), deck.power(card), rank_class(card, deck), card in deck)
        for name, deck in decks.items()
        for card in STANDARD_CARDS + JOKERS
    )
    return (
        "CREATE OR REPLACE TEMP TABLE sw_cards AS SELECT * FROM (VALUES "
        + cards
        + ") t(deck, card, suit, is_trump, power, rank_class, in_deck)"
    )


def _static_tables_sql() -> list[str]:
    seats = _values(
        (str(s), int(s), str(s.side), str(s.partner), str(s.left), str(s.right), str(s.side.other)) for s in SEATS
    )
    positions = _values((str(d), str(s), d.left.steps_to(s) + 1) for d in SEATS for s in SEATS)
    return [
        "CREATE OR REPLACE TEMP TABLE sw_seats AS SELECT * FROM (VALUES "
        + seats
        + ") t(seat, seat_index, side, partner, left_seat, right_seat, other_side)",
        "CREATE OR REPLACE TEMP TABLE sw_positions AS SELECT * FROM (VALUES "
        + positions
        + ") t(dealer, seat, position)",
    ]


_VIEWS: list[tuple[str, str]] = [
    (
        "sw_hand_rules",
        """
        SELECT h.game_id, h.hand,
               coalesce(r.ruleset, 'standard') AS ruleset, coalesce(r.deck, 'standard') AS deck,
               coalesce(r.nil_allowed, TRUE) AS nil_allowed, coalesce(r.blind_nil, 'behind') AS blind_nil,
               coalesce(r.behind_by, 100) AS behind_by, coalesce(r.bag_limit, 10) AS bag_limit,
               coalesce(r.bag_penalty, 100) AS bag_penalty
        FROM hands h LEFT JOIN sw_rules r ON r.rules IS NOT DISTINCT FROM h.rules
        """,
    ),
    (
        # first bid of each seat (a second bid is BID_OUT_OF_TURN and ignored, RULES.md 3)
        "sw_first_bids",
        """
        SELECT game_id, hand, seat, bid_order, bid, nil, blind, bid_value
        FROM bids
        QUALIFY row_number() OVER (PARTITION BY game_id, hand, seat ORDER BY bid_order) = 1
        """,
    ),
    (
        # every card played, read with the deck of the hand's ruleset
        "sw_plays",
        """
        SELECT p.game_id, p.hand, p.trick, p.play_order, p.seat, p.card,
               coalesce(c.suit, right(p.card, 1)) AS suit,
               coalesce(c.is_trump, FALSE) AS is_trump,
               coalesce(c.power, 0) AS power,
               coalesce(c.rank_class, 'low') AS rank_class
        FROM plays p
        JOIN sw_hand_rules hr ON hr.game_id = p.game_id AND hr.hand = p.hand
        LEFT JOIN sw_cards c ON c.deck = hr.deck AND c.card = p.card
        """,
    ),
    (
        # each play with the suit led, its strength in the trick and who was winning before it
        "sw_play_steps",
        """
        WITH led AS (
            SELECT game_id, hand, trick, arg_min(seat, play_order) AS leader, arg_min(suit, play_order) AS led_suit
            FROM sw_plays GROUP BY game_id, hand, trick
        ), scored AS (
            SELECT p.*, l.leader, l.led_suit,
                   CASE WHEN p.is_trump THEN 1000 + p.power
                        WHEN p.suit = l.led_suit THEN p.power ELSE -1 END AS strength
            FROM sw_plays p JOIN led l USING (game_id, hand, trick)
        )
        SELECT *,
               arg_max(seat, strength) OVER (PARTITION BY game_id, hand, trick ORDER BY play_order
                                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS winning_before,
               arg_max(seat, strength) OVER (PARTITION BY game_id, hand, trick) AS replay_winner
        FROM scored
        """,
    ),
    (
        # one row per trick that has plays: the checker's winner where it has one, else the replayed one
        "sw_trick_results",
        """
        SELECT s.game_id, s.hand, s.trick, any_value(s.leader) AS leader, any_value(s.led_suit) AS led_suit,
               coalesce(any_value(t.winner), any_value(s.replay_winner)) AS winner,
               count(*) AS cards, bool_or(s.is_trump) AS has_trump
        FROM sw_play_steps s
        LEFT JOIN (SELECT game_id, hand, trick, any_value(winner) AS winner FROM tricks GROUP BY ALL) t
               ON t.game_id = s.game_id AND t.hand = s.hand AND t.trick = s.trick
        GROUP BY s.game_id, s.hand, s.trick
        """,
    ),
    (
        # spades broken: the first trick with a spade in it, who played that spade, and whether it was led
        "sw_spades_broken",
        """
        SELECT game_id, hand,
               min(trick) AS broken_trick,
               arg_min(seat, trick * 10 + play_order) AS breaker,
               arg_min(play_order = 1, trick * 10 + play_order) AS broken_by_lead
        FROM sw_plays WHERE is_trump GROUP BY game_id, hand
        """,
    ),
    (
        # what each seat held at the start of each trick it played to (hands with a deal only)
        "sw_holdings",
        """
        WITH life AS (
            SELECT d.game_id, d.hand, d.seat, d.card,
                   coalesce(c.suit, right(d.card, 1)) AS suit, coalesce(c.is_trump, FALSE) AS is_trump,
                   min(p.trick) AS played_trick
            FROM deals d
            JOIN sw_hand_rules hr ON hr.game_id = d.game_id AND hr.hand = d.hand
            LEFT JOIN sw_cards c ON c.deck = hr.deck AND c.card = d.card
            LEFT JOIN plays p ON p.game_id = d.game_id AND p.hand = d.hand AND p.seat = d.seat AND p.card = d.card
            GROUP BY ALL
        )
        SELECT s.game_id, s.hand, s.trick, s.seat,
               count(*) FILTER (WHERE l.suit = s.led_suit) AS held_led,
               count(*) FILTER (WHERE l.is_trump) AS held_trump,
               count(*) FILTER (WHERE NOT l.is_trump) AS held_other
        FROM sw_play_steps s
        JOIN life l ON l.game_id = s.game_id AND l.hand = s.hand AND l.seat = s.seat
                   AND (l.played_trick IS NULL OR l.played_trick >= s.trick)
        GROUP BY s.game_id, s.hand, s.trick, s.seat
        """,
    ),
    (
        # per game, hand, side: the recomputed score as played (hand_scores_as_played: what the side's
        # play earned, before any renege penalty) and the state before the hand (the official totals and
        # bags of hand_scores: the score the game goes by, RULES.md section 5, renege_penalty_tricks)
        "sw_side_hands",
        """
        WITH sides AS (
            SELECT h.game_id, h.hand, s.side FROM hands h CROSS JOIN (SELECT DISTINCT side FROM sw_seats) s
        ), hs AS (
            SELECT * FROM hand_scores_as_played
            QUALIFY row_number() OVER (PARTITION BY game_id, hand, side) = 1
        ), official AS (
            SELECT game_id, hand, side, total, bags FROM hand_scores
            QUALIFY row_number() OVER (PARTITION BY game_id, hand, side) = 1
        ), rs AS (
            SELECT * FROM recorded_scores QUALIFY row_number() OVER (PARTITION BY game_id, hand, side) = 1
        ), bid_sum AS (
            SELECT b.game_id, b.hand, st.side, sum(CASE WHEN b.nil THEN 0 ELSE b.bid_value END) AS bid_contract
            FROM sw_first_bids b JOIN sw_seats st ON st.seat = b.seat GROUP BY ALL
        )
        SELECT sd.game_id, sd.hand, sd.side,
               coalesce(hs.contract, bs.bid_contract) AS contract,
               hs.tricks AS side_tricks, hs.made, hs.bags_this_hand, hs.bag_penalty, hs.nil_points,
               -- points and totals as BIGINT: a margin between two 32-bit totals can leave 32 bits
               CAST(hs.points AS BIGINT) AS points, CAST(hs.total AS BIGINT) AS total, hs.bags,
               -- after a missing hand (RULES.md 7) the game goes on from the recorded score_before,
               -- else from the totals the log shows before the hand (its total less its points)
               CAST(CASE WHEN row_number() OVER w = 1 THEN coalesce(rs.score_before, 0)
                    WHEN lag(sd.hand) OVER w <> sd.hand - 1
                        THEN coalesce(rs.score_before, rs.total - rs.points, lag(off.total) OVER w, lag(rs.total) OVER w, 0)
                    ELSE coalesce(lag(off.total) OVER w, lag(rs.total) OVER w, 0) END AS BIGINT) AS score_before,
               CASE WHEN row_number() OVER w = 1 THEN coalesce(rs.bags_before, 0)
                    WHEN lag(sd.hand) OVER w <> sd.hand - 1
                        THEN coalesce(rs.bags_before, lag(off.bags) OVER w, lag(rs.bags) OVER w, 0)
                    ELSE coalesce(lag(off.bags) OVER w, lag(rs.bags) OVER w, 0) END AS bags_before
        FROM sides sd
        LEFT JOIN hs ON hs.game_id = sd.game_id AND hs.hand = sd.hand AND hs.side = sd.side
        LEFT JOIN official off ON off.game_id = sd.game_id AND off.hand = sd.hand AND off.side = sd.side
        LEFT JOIN rs ON rs.game_id = sd.game_id AND rs.hand = sd.hand AND rs.side = sd.side
        LEFT JOIN bid_sum bs ON bs.game_id = sd.game_id AND bs.hand = sd.hand AND bs.side = sd.side
        WINDOW w AS (PARTITION BY sd.game_id, sd.side ORDER BY sd.hand)
        """,
    ),
    (
        # per game, hand, seat: tricks taken (see the module doc for the source)
        "sw_seat_hands",
        """
        WITH checker AS (SELECT game_id, hand, count(winner) AS with_winner FROM tricks GROUP BY ALL),
        checker_wins AS (
            SELECT game_id, hand, winner AS seat, count(*) AS won FROM tricks WHERE winner IS NOT NULL GROUP BY ALL
        ), replayed AS (SELECT game_id, hand, count(winner) AS with_winner FROM sw_trick_results GROUP BY ALL),
        replay_wins AS (
            SELECT game_id, hand, winner AS seat, count(*) AS won FROM sw_trick_results
            WHERE winner IS NOT NULL GROUP BY ALL
        ), base AS (
            SELECT h.game_id, h.hand, s.seat,
                   CASE s.seat WHEN 'N' THEN h.player_n WHEN 'E' THEN h.player_e
                               WHEN 'S' THEN h.player_s WHEN 'W' THEN h.player_w END AS player,
                   CASE s.seat WHEN 'N' THEN h.taken_n WHEN 'E' THEN h.taken_e
                               WHEN 'S' THEN h.taken_s WHEN 'W' THEN h.taken_w END AS taken_recorded
            FROM hands h CROSS JOIN sw_seats s
        )
        SELECT b.game_id, b.hand, b.seat, b.player,
               CASE WHEN c.with_winner = 13 THEN coalesce(cw.won, 0)
                    WHEN c.game_id IS NULL AND r.with_winner = 13 THEN coalesce(rw.won, 0)
                    WHEN b.taken_recorded IS NOT NULL THEN b.taken_recorded
                    WHEN c.game_id IS NOT NULL THEN coalesce(cw.won, 0)
                    WHEN r.game_id IS NOT NULL THEN coalesce(rw.won, 0) END AS taken,
               r.game_id IS NOT NULL AS has_plays,
               fb.seat IS NOT NULL AS has_bid,
               coalesce(fb.nil, FALSE) AS nil, coalesce(fb.blind, FALSE) AS blind,
               CASE WHEN fb.nil THEN 0 ELSE fb.bid_value END AS bid
        FROM base b
        LEFT JOIN checker c ON c.game_id = b.game_id AND c.hand = b.hand
        LEFT JOIN checker_wins cw ON cw.game_id = b.game_id AND cw.hand = b.hand AND cw.seat = b.seat
        LEFT JOIN replayed r ON r.game_id = b.game_id AND r.hand = b.hand
        LEFT JOIN replay_wins rw ON rw.game_id = b.game_id AND rw.hand = b.hand AND rw.seat = b.seat
        LEFT JOIN sw_first_bids fb ON fb.game_id = b.game_id AND fb.hand = b.hand AND fb.seat = b.seat
        """,
    ),
    (
        # each card played, with the opportunities the card-play metrics count
        "sw_play_analysis",
        """
        WITH side_run AS (  -- tricks each side had won before each trick
            SELECT tr.game_id, tr.hand, tr.trick, sd.side, tr.winner,
                   coalesce(sum(CASE WHEN ws.side = sd.side THEN 1 ELSE 0 END) OVER (
                       PARTITION BY tr.game_id, tr.hand, sd.side ORDER BY tr.trick
                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS side_won_before
            FROM sw_trick_results tr
            CROSS JOIN (SELECT DISTINCT side FROM sw_seats) sd
            LEFT JOIN sw_seats ws ON ws.seat = tr.winner
        )
        SELECT s.*, st.side, st.partner,
               h.game_id IS NOT NULL AS holding_known,
               s.play_order > 1 AND s.led_suit <> 'S' AND s.suit <> s.led_suit
                   AND coalesce(h.held_led, 0) = 0 AS void,
               CASE WHEN h.game_id IS NULL THEN TRUE ELSE h.held_trump > 0 AND h.held_other > 0 END AS has_choice,
               s.winning_before = st.partner AS partner_winning,
               sr.winner AS trick_winner,
               sr.side_won_before,
               sh.contract AS side_contract,
               fb.nil AS bid_nil
        FROM sw_play_steps s
        JOIN sw_seats st ON st.seat = s.seat
        LEFT JOIN sw_holdings h ON h.game_id = s.game_id AND h.hand = s.hand AND h.trick = s.trick AND h.seat = s.seat
        LEFT JOIN side_run sr ON sr.game_id = s.game_id AND sr.hand = s.hand AND sr.trick = s.trick
                             AND sr.side = st.side
        LEFT JOIN sw_side_hands sh ON sh.game_id = s.game_id AND sh.hand = s.hand AND sh.side = st.side
        LEFT JOIN sw_first_bids fb ON fb.game_id = s.game_id AND fb.hand = s.hand AND fb.seat = s.seat
        """,
    ),
    (
        # the card-play counts of each seat in each hand
        "sw_play_counts",
        """
        SELECT game_id, hand, seat,
               count(*) FILTER (WHERE void AND has_choice) AS ruff_opps,
               count(*) FILTER (WHERE void AND has_choice AND is_trump) AS ruffs,
               count(*) FILTER (WHERE void AND has_choice AND partner_winning) AS partner_trump_opps,
               count(*) FILTER (WHERE void AND has_choice AND partner_winning AND is_trump) AS partner_trumps,
               count(*) FILTER (WHERE side_contract > 0 AND side_won_before >= side_contract
                                AND NOT coalesce(bid_nil, FALSE)) AS safe_tricks,
               count(*) FILTER (WHERE side_contract > 0 AND side_won_before >= side_contract
                                AND NOT coalesce(bid_nil, FALSE) AND trick_winner = seat) AS safe_won,
               count(*) FILTER (WHERE play_order = 1) AS leads
        FROM sw_play_analysis GROUP BY game_id, hand, seat
        """,
    ),
    (
        "sw_leads",
        """
        SELECT game_id, hand, trick, seat, card, suit, rank_class FROM sw_plays WHERE play_order = 1
        """,
    ),
    (
        # one row per game, hand, seat: everything the metrics group and count
        "sw_player_hands",
        # each seat's and side's rows are read several times (me, partner, opponents; both sides):
        # computed once (MATERIALIZED), not once per reference
        """
        WITH seat_hands AS MATERIALIZED (SELECT * FROM sw_seat_hands),
        side_hands AS MATERIALIZED (SELECT * FROM sw_side_hands),
        v_seat AS (
            SELECT game_id, hand, seat, count(*) AS findings FROM violations WHERE hand IS NOT NULL AND seat IS NOT NULL
            GROUP BY ALL
        ), v_hand AS (
            SELECT game_id, hand, count(*) AS findings FROM violations WHERE hand IS NOT NULL GROUP BY ALL
        ), game_result AS (
            SELECT h.game_id,
                   CASE WHEN any_value(g.game_id) IS NULL THEN max(h.winner) ELSE any_value(g.winner) END AS winner
            FROM hands h LEFT JOIN games g ON g.game_id = h.game_id GROUP BY h.game_id
        )
        SELECT h.game_id, h.hand, h.event, h.date, h.table_name, h.round, h.rules, h.dealer,
               hr.ruleset, hr.nil_allowed,
               st.seat, st.side, pos.position, 'all' AS scope,
               me.player, pa.player AS partner, lo.player AS opponent_left, ro.player AS opponent_right,
               CASE WHEN me.player IS NULL OR pa.player IS NULL THEN coalesce(me.player, pa.player)
                    WHEN me.player <= pa.player THEN me.player || ' & ' || pa.player
                    ELSE pa.player || ' & ' || me.player END AS partnership,
               me.has_bid, me.nil, me.blind, me.bid, me.taken, me.has_plays,
               me.has_bid AND NOT me.nil AND NOT me.blind AS numeric_bid,
               pa.has_bid AS partner_has_bid, pa.nil AS partner_nil, pa.blind AS partner_blind,
               pa.bid AS partner_bid, pa.taken AS partner_taken,
               (CASE WHEN lo.nil THEN 1 ELSE 0 END) + (CASE WHEN ro.nil THEN 1 ELSE 0 END) AS opp_nils,
               (CASE WHEN lo.nil AND lo.taken > 0 THEN 1 ELSE 0 END)
                 + (CASE WHEN ro.nil AND ro.taken > 0 THEN 1 ELSE 0 END) AS opp_nils_set,
               greatest(coalesce(me.taken, 0) - coalesce(me.bid, 0), 0) AS own_excess,
               greatest(coalesce(pa.taken, 0) - coalesce(pa.bid, 0), 0) AS partner_excess,
               me.has_bid AND pa.has_bid AND (me.nil OR NOT me.blind) AND (pa.nil OR NOT pa.blind)
                   AND me.taken IS NOT NULL AND pa.taken IS NOT NULL AS individual_bids,
               sh.contract, sh.side_tricks, sh.made, sh.bags_this_hand, sh.bag_penalty,
               abs(coalesce(sh.bag_penalty, 0)) / hr.bag_penalty AS penalties,
               sh.nil_points, sh.points, sh.total, sh.bags,
               sh.score_before, os.score_before AS opp_score_before,
               sh.score_before - os.score_before AS margin,
               CASE WHEN sh.score_before - os.score_before <= -{margin} THEN 'behind'
                    WHEN sh.score_before - os.score_before >= {margin} THEN 'ahead'
                    ELSE 'close' END AS situation,
               sh.bags_before,
               CASE hr.blind_nil WHEN 'always' THEN TRUE WHEN 'never' THEN FALSE
                    ELSE os.score_before - sh.score_before >= hr.behind_by END AS blind_nil_allowed,
               gr.winner AS game_winner, gr.winner IS NOT NULL AS game_finished,
               coalesce(pc.ruff_opps, 0) AS ruff_opps, coalesce(pc.ruffs, 0) AS ruffs,
               coalesce(pc.partner_trump_opps, 0) AS partner_trump_opps,
               coalesce(pc.partner_trumps, 0) AS partner_trumps,
               coalesce(pc.safe_tricks, 0) AS safe_tricks, coalesce(pc.safe_won, 0) AS safe_won,
               coalesce(pc.leads, 0) AS leads,
               sb.broken_trick AS spades_broken_trick,
               coalesce(sb.breaker = st.seat, FALSE) AS broke_spades,
               coalesce(vs.findings, 0) AS findings,
               coalesce(vh.findings, 0) AS hand_findings
        FROM hands h
        CROSS JOIN sw_seats st
        JOIN sw_hand_rules hr ON hr.game_id = h.game_id AND hr.hand = h.hand
        LEFT JOIN sw_positions pos ON pos.dealer = h.dealer AND pos.seat = st.seat
        JOIN seat_hands me ON me.game_id = h.game_id AND me.hand = h.hand AND me.seat = st.seat
        JOIN seat_hands pa ON pa.game_id = h.game_id AND pa.hand = h.hand AND pa.seat = st.partner
        JOIN seat_hands lo ON lo.game_id = h.game_id AND lo.hand = h.hand AND lo.seat = st.left_seat
        JOIN seat_hands ro ON ro.game_id = h.game_id AND ro.hand = h.hand AND ro.seat = st.right_seat
        JOIN side_hands sh ON sh.game_id = h.game_id AND sh.hand = h.hand AND sh.side = st.side
        JOIN side_hands os ON os.game_id = h.game_id AND os.hand = h.hand AND os.side = st.other_side
        LEFT JOIN game_result gr ON gr.game_id = h.game_id
        LEFT JOIN sw_play_counts pc ON pc.game_id = h.game_id AND pc.hand = h.hand AND pc.seat = st.seat
        LEFT JOIN sw_spades_broken sb ON sb.game_id = h.game_id AND sb.hand = h.hand
        LEFT JOIN v_seat vs ON vs.game_id = h.game_id AND vs.hand = h.hand AND vs.seat = st.seat
        LEFT JOIN v_hand vh ON vh.game_id = h.game_id AND vh.hand = h.hand
        """.replace("{margin}", str(SITUATION_MARGIN)),
    ),
]


def existing_relations(con) -> dict[str, set[str]]:
    """Every table and (non-internal) view on ``con``: name -> the databases holding it (``temp``
    for temporary ones, the file's name for the database itself)."""
    rows = con.execute("SELECT database_name, table_name FROM duckdb_tables()").fetchall()
    rows += con.execute("SELECT database_name, view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    out: dict[str, set[str]] = {}
    for db, name in rows:
        out.setdefault(name, set()).add(db)
    return out


def prepare(con) -> None:
    """Create (or refresh) the temporary helper tables and views the metrics read.

    Every metric, frame and summary of this module calls it first.  It raises
    :class:`spadework.parsers.state.NotChecked` (a sentence naming ``spadework check``) when the
    derived tables are missing or older than the loaded tables (a load after the last check, a
    check that did not finish): a metric never answers from stale findings or scores.
    Tables of TABLES.md missing from an empty database are stood in for by empty temporary
    tables.  Safe to call again after more data is loaded and checked; works on a read-only
    connection.
    """
    require_checked(con)
    existing = existing_relations(con)
    for name, ddl in ALL_TABLES.items():
        where = existing.get(name, set())
        real = where - {"temp"}
        if not where:
            con.execute(f"CREATE TEMP TABLE {name} ({ddl})")
        elif real and "temp" in where:
            con.execute(f"DROP TABLE temp.main.{name}")
    if "sw_seats" not in existing:
        for sql in _static_tables_sql():
            con.execute(sql)
    rules = [r[0] for r in con.execute("SELECT DISTINCT rules FROM hands").fetchall()]
    rows = []
    decks = {name: DECKS[name] for name in ("standard", "barmore", "nyc")}
    for text in rules:
        f = rule_facts(text)
        decks[f.deck] = DECKS[f.deck]
        rows.append((text, f.ruleset, f.deck, f.nil_allowed, f.blind_nil, f.behind_by, f.bag_limit, f.bag_penalty))
    if "sw_cards" not in existing or set(decks) != {
        r[0] for r in con.execute("SELECT DISTINCT deck FROM sw_cards").fetchall()
    }:
        con.execute(_cards_sql(decks))
    cols = "rules, ruleset, deck, nil_allowed, blind_nil, behind_by, bag_limit, bag_penalty"
    if rows:
        con.execute(f"CREATE OR REPLACE TEMP TABLE sw_rules AS SELECT * FROM (VALUES {_values(rows)}) t({cols})")
    else:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE sw_rules (rules VARCHAR, ruleset VARCHAR, deck VARCHAR, nil_allowed BOOLEAN,"
            " blind_nil VARCHAR, behind_by INTEGER, bag_limit INTEGER, bag_penalty INTEGER)"
        )
    if "sw_player_hands" not in existing:
        for name, sql in _VIEWS:
            con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {sql}")


CACHE_TABLE = "sw_player_hands_cache"
"""Temporary table :func:`snapshot` fills with ``sw_player_hands``; metrics read it while it exists."""

BATCH_HANDS = 4_000
"""Hands per batch when :func:`snapshot` / :func:`freeze` compute ``sw_player_hands`` (memory grows with it)."""

_GAME_TABLES = tuple(name for name, ddl in ALL_TABLES.items() if "game_id" in ddl)


def scoped_sql(view: str, where: str) -> str:
    """The SQL of one of the helper views (``sw_trick_results``, ``sw_seat_hands``, ``sw_player_hands``...)
    computed over the rows of the loaded and derived tables that pass ``where`` (a condition on
    ``game_id``, literal values), as one query.

    Every view partitions by game, so computing it game range by game range gives the same rows as the
    whole view; this is how a season is computed in batches of bounded memory.  Each table and each
    view it depends on is shadowed by a CTE of the same name.  Raises ``KeyError`` for an unknown view.
    """
    names = [name for name, _ in _VIEWS]
    if view not in names:
        raise KeyError(f"unknown view {view!r}; known: {', '.join(names)}")
    ctes = [f"{t} AS (SELECT * FROM {t} WHERE {where})" for t in _GAME_TABLES]
    for name, sql in _VIEWS:
        ctes.append(f"{name} AS ({sql})")
        if name == view:
            break
    return "WITH " + ",\n".join(ctes) + f"\nSELECT * FROM {view}"


def _game_batches(con, batch_hands: int) -> list[tuple[str, str]]:
    """``(first, last)`` game ids of consecutive batches of about ``batch_hands`` hands (game ids sorted)."""
    rows = con.execute("SELECT game_id, count(*) FROM hands GROUP BY game_id ORDER BY game_id").fetchall()
    out: list[tuple[str, str]] = []
    first, n = None, 0
    for gid, count in rows:
        if first is None:
            first = gid
        n += count
        if n >= batch_hands:
            out.append((first, gid))
            first, n = None, 0
    if first is not None:
        out.append((first, rows[-1][0]))
    return out


def materialize(con, table: str, view: str = "sw_player_hands", batch_hands: int | None = None) -> None:
    """Create the temporary table ``table`` holding every row of the helper view ``view``, computed
    in batches of about ``batch_hands`` hands (default :data:`BATCH_HANDS`) so that a season of any
    size needs about the memory of one batch.  Replaces ``table`` if it exists."""
    prepare(con)
    batches = _game_batches(con, batch_hands or BATCH_HANDS)
    con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")
    if len(batches) <= 1:
        con.execute(f"CREATE TEMP TABLE {table} AS SELECT * FROM {view}")
        return
    for i, (first, last) in enumerate(batches):
        where = f"game_id BETWEEN {_sql_str(first)} AND {_sql_str(last)}"
        sql = scoped_sql(view, where)
        con.execute(f"CREATE TEMP TABLE {table} AS {sql}" if i == 0 else f"INSERT INTO {table} {sql}")


@contextmanager
def snapshot(con) -> Iterator[None]:
    """Compute ``sw_player_hands`` once and let every metric run inside the ``with`` block read the copy.

    The view joins the card play of every hand, so on a season each metric costs a fraction of a
    second; inside ``with metrics.snapshot(con):`` the same metrics take milliseconds.  The copy is
    computed in batches of games (:func:`materialize`), so its memory does not grow with the season.
    Nested blocks reuse the outer copy.  Do not load or check data inside the block (the copy would
    be stale); it is dropped when the outermost block ends.
    """
    prepare(con)
    outer = CACHE_TABLE in existing_relations(con)
    if not outer:
        materialize(con, CACHE_TABLE)
    try:
        yield
    finally:
        if not outer:
            con.execute(f"DROP TABLE IF EXISTS temp.main.{CACHE_TABLE}")


def freeze(con) -> None:
    """Like :func:`snapshot`, but for the life of the connection: for a read-only analysis session
    (a notebook, ``spadework stats``) where the data cannot change.  :func:`thaw` undoes it."""
    prepare(con)
    if CACHE_TABLE not in existing_relations(con):
        materialize(con, CACHE_TABLE)


def thaw(con) -> None:
    """Drop the copy :func:`freeze` made; metrics read the live view again."""
    con.execute(f"DROP TABLE IF EXISTS temp.main.{CACHE_TABLE}")


def _player_hands_source(con) -> str:
    return CACHE_TABLE if CACHE_TABLE in existing_relations(con) else "sw_player_hands"


# --------------------------------------------------------------------------------------------
# The registry


Kind = Literal["rate", "mean", "count"]


@dataclass(frozen=True)
class Metric:
    """One named metric.

    ``sql`` is a query over the CTEs ``ph`` (filtered player-hands), ``sh`` (one row per game, hand,
    side and group) and ``hh`` (one row per game, hand and group), with ``{keys}`` standing for the
    group columns.  It returns the keys, the ``extra_keys`` and: ``n, k`` (rate), ``n, mean, sd, total``
    (mean) or ``n`` (count).  ``unit`` says what ``value`` is measured in; ``category`` groups metrics
    in tables; ``better``: ``"higher"``, ``"lower"`` or ``None`` when neither is simply better.
    """

    name: str
    title: str
    kind: Kind
    sql: str
    description: str
    unit: str
    category: str
    extra_keys: tuple[str, ...] = ()
    scale: float = 1.0
    better: str | None = None
    least: float | None = None
    """The smallest value one observation can take (0 for counts, tricks, distances), in the metric's
    own unit before ``scale``: the interval's ``low`` is not reported below it (a normal interval of a
    rare count would otherwise reach below zero, e.g. -0.3 findings per 100 hands)."""
    events: bool = False
    """A mean of event counts per observation (findings per hand): its interval also covers the
    Poisson score interval of the total (:func:`spadework.analysis.stats.widen_for_events`), so
    no event in n hands is not reported as exactly 0-0."""
    needs: tuple[str, ...] = ()
    """Tables beyond TABLES.md the query reads (``hand_values``, ``card_costs``): :func:`run` makes sure
    they can be queried (see :func:`spadework.analysis.decisions.ensure_tables`)."""


REGISTRY: dict[str, Metric] = {}
"""Every metric by name, in the order they are documented."""


def _register(m: Metric) -> Metric:
    REGISTRY[m.name] = m
    return m


def _mean(expr: str, where: str, src: str = "ph") -> str:
    return (
        f"SELECT {{keys}}, count({expr}) FILTER (WHERE {where}) AS n, "
        f"avg({expr}) FILTER (WHERE {where}) AS mean, stddev_samp({expr}) FILTER (WHERE {where}) AS sd, "
        f"sum({expr}) FILTER (WHERE {where}) AS total FROM {src} GROUP BY {{keys}}"
    )


def _rate(n_expr: str, k_expr: str, src: str = "ph") -> str:
    return f"SELECT {{keys}}, {n_expr} AS n, {k_expr} AS k FROM {src} GROUP BY {{keys}}"


def _cnt(where: str) -> str:
    return f"count(*) FILTER (WHERE {where})"


def _sum(expr: str, where: str = "TRUE") -> str:
    return f"coalesce(sum({expr}) FILTER (WHERE {where}), 0)"


_register(Metric(
    "hands", "Hands", "count", "SELECT {keys}, count(*) AS n FROM hh GROUP BY {keys}",
    "Hands played (per player: hands at the table; per table or event: hands recorded).", "hands", "volume",
))
_register(Metric(
    "avg_bid", "Average bid", "mean", _mean("bid", "numeric_bid"),
    "Mean of the player's numeric bids (nil, blind nil and blind seven left out).", "tricks", "bidding", least=0,
))
_register(Metric(
    "bid_bias", "Bid bias", "mean", _mean("taken - bid", "numeric_bid AND taken IS NOT NULL"),
    "Tricks taken minus tricks bid, over numeric bids: below 0 the player overbids "
    "(takes fewer than bid), above 0 underbids.", "tricks", "bidding",
))
_register(Metric(
    "exact_bid", "Exact bids", "rate",
    _rate(_cnt("numeric_bid AND taken IS NOT NULL"), _cnt("numeric_bid AND taken IS NOT NULL AND taken = bid")),
    "Share of numeric bids where the player took exactly the tricks bid.", "share of bids", "bidding", better="higher",
))
_register(Metric(
    "bid_calibration", "Bid calibration", "mean",
    "SELECT {keys}, bid AS bid_value, count(*) AS n, avg(taken) AS mean, stddev_samp(taken) AS sd, "
    "sum(taken) AS total FROM ph WHERE numeric_bid AND taken IS NOT NULL GROUP BY {keys}, bid",
    "Mean tricks taken for each numeric bid value (a calibrated bidder sits on the line y = x).",
    "tricks", "bidding", extra_keys=("bid_value",),
))
_register(Metric(
    "bid_error", "Bid error distribution", "rate",
    "SELECT {keys}, CAST(taken - bid AS DOUBLE) AS error, count(*) AS k, "
    "sum(count(*)) OVER (PARTITION BY {keys}) AS n FROM ph WHERE numeric_bid AND taken IS NOT NULL "
    "GROUP BY {keys}, taken - bid",
    "How often each error (tricks taken minus bid) occurs: k bids at this error out of n numeric bids.",
    "share of bids", "bidding", extra_keys=("error",),
))
_register(Metric(
    "side_bid_bias", "Side bid bias", "mean",
    _mean("side_tricks - contract", "contract > 0 AND side_tricks IS NOT NULL", "sh"),
    "The side's tricks minus its contract, as played (hand_scores_as_played: before any renege penalty), "
    "per side-hand with a positive contract.",
    "tricks", "contract",
))
_register(Metric(
    "contract_made", "Contracts made", "rate",
    _rate(_cnt("contract > 0 AND made IS NOT NULL"), _cnt("contract > 0 AND made"), "sh"),
    "Share of the side's hands with a positive contract where the contract was made in play "
    "(hand_scores_as_played.made: before any renege penalty).",
    "share of hands", "contract", better="higher",
))
_register(Metric(
    "set_rate", "Sets", "rate",
    _rate(_cnt("contract > 0 AND made IS NOT NULL"), _cnt("contract > 0 AND NOT made"), "sh"),
    "Share of the side's hands with a positive contract where the side was set.", "share of hands", "contract",
    better="lower",
))
_register(Metric(
    "set_depth", "Set depth", "mean", _mean("contract - side_tricks", "contract > 0 AND NOT made", "sh"),
    "Tricks short of the contract, over the hands where the side was set.", "tricks", "contract", better="lower", least=1,
))
_register(Metric(
    "bags_per_hand", "Bags per hand", "mean", _mean("bags_this_hand", "bags_this_hand IS NOT NULL", "sh"),
    "The side's bags (overtricks) taken per hand.", "bags", "bags", better="lower", least=0,
))
_register(Metric(
    "bag_share", "Share of the side's bags", "rate",
    _rate(_sum("own_excess + partner_excess", "bags_this_hand > 0 AND individual_bids"),
          _sum("own_excess", "bags_this_hand > 0 AND individual_bids")),
    "In hands where the side took bags: the player's tricks over the own bid (a nil's tricks all count) "
    "out of both partners' tricks over their bids; hands with a blind seven or a missing bid are left out.",
    "share of overtricks", "bags", better="lower",
))
_GAME_UNITS = (
    "(SELECT *, CASE WHEN count(*) OVER (PARTITION BY {keys}, game_id, hand) > 1 THEN side END AS unit_side FROM sh)"
)
"""``sh`` with the unit a per-game metric counts: a group that has both sides of a hand (a table, an
event, everyone) counts each side's game (``unit_side``), a group on one side of each hand (a player,
a partnership) counts the game once, even where the player moved to the other side during it."""

_register(Metric(
    "bag_penalties_per_game", "Bag penalties per game", "mean",
    "SELECT {keys}, count(*) AS n, avg(p) AS mean, stddev_samp(p) AS sd, sum(p) AS total FROM ("
    f" SELECT {{keys}}, game_id, unit_side, sum(penalties) AS p FROM {_GAME_UNITS} u GROUP BY {{keys}}, game_id, unit_side"
    ") GROUP BY {keys}",
    "Sandbagging penalties the side's play incurred per game (|hand_scores_as_played.bag_penalty| / the "
    "ruleset's penalty).",
    "penalties", "bags", better="lower", least=0,
))
_register(Metric(
    "nil_rate", "Nil bids", "rate",
    _rate(_cnt("nil_allowed AND has_bid"), _cnt("nil_allowed AND has_bid AND nil AND NOT blind")),
    "Share of hands under a ruleset with nil where the player bid a plain nil (blind nils are "
    "blind_nil_rate).", "share of hands", "nil",
))
_register(Metric(
    "nil_success", "Nils made", "rate",
    _rate(_cnt("nil AND NOT blind AND taken IS NOT NULL"), _cnt("nil AND NOT blind AND taken = 0")),
    "Share of the player's plain nil bids where the player took no trick (blind nils are blind_nil_success).",
    "share of nils", "nil", better="higher",
))
_register(Metric(
    "blind_nil_rate", "Blind nil bids", "rate",
    _rate(_cnt("blind_nil_allowed AND has_bid"), _cnt("blind_nil_allowed AND has_bid AND nil AND blind")),
    "Share of the hands where the ruleset allowed the player's side a blind nil in which the player bid it.",
    "share of hands", "nil",
))
_register(Metric(
    "blind_nil_success", "Blind nils made", "rate",
    _rate(_cnt("nil AND blind AND taken IS NOT NULL"), _cnt("nil AND blind AND taken = 0")),
    "Share of the player's blind nils where the player took no trick.", "share of blind nils", "nil", better="higher",
))
_register(Metric(
    "nil_cover", "Partner's nil covered", "rate",
    _rate(_cnt("partner_nil AND partner_taken IS NOT NULL"), _cnt("partner_nil AND partner_taken = 0")),
    "Share of the partner's nil bids that were made (the player covers the nil).", "share of partner nils", "nil",
    better="higher",
))
_register(Metric(
    "nil_defence", "Opponents' nil set", "rate",
    _rate(_sum("opp_nils"), _sum("opp_nils_set")),
    "Share of the opponents' nil bids that failed (the nil bidder took a trick).", "share of opponent nils", "nil",
    better="higher",
))
_register(Metric(
    "points_per_hand", "Points per hand", "mean", _mean("points", "points IS NOT NULL", "sh"),
    "The side's recomputed points per hand as played (hand_scores_as_played.points: bag penalties "
    "included, before any renege penalty).", "points", "results",
    better="higher",
))
_register(Metric(
    "win_rate", "Games won", "rate",
    "SELECT {keys}, count(*) AS n, count(*) FILTER (WHERE won) AS k FROM ("
    f" SELECT {{keys}}, game_id, unit_side, arg_min(side, hand) = any_value(game_winner) AS won FROM {_GAME_UNITS} u"
    " WHERE game_finished GROUP BY {keys}, game_id, unit_side"
    ") GROUP BY {keys}",
    "Share of finished games (games.winner set) the player's side won; a player who changed sides during "
    "a game is on the side of the first hand they played in it (as in the standings).",
    "share of games", "results", better="higher",
))
_register(Metric(
    "ruff_when_void", "Ruffs when void", "rate", _rate(_sum("ruff_opps"), _sum("ruffs")),
    "Void in a non-spade suit led, holding a spade and another card: share of those plays that were a spade.",
    "share of plays", "play",
))
_register(Metric(
    "trump_partner_winner", "Trumps partner's winning trick", "rate",
    _rate(_sum("partner_trump_opps"), _sum("partner_trumps")),
    "Void in a non-spade suit led while the partner was winning the trick, holding a spade and another card: "
    "share of those plays that were a spade (usually a wasted trump).", "share of plays", "play", better="lower",
))
_register(Metric(
    "overtricks_after_safe", "Tricks won after the contract was safe", "rate",
    _rate(_sum("safe_tricks"), _sum("safe_won")),
    "Tricks played after the side had taken its contract (positive contracts, nil bidders left out): "
    "share of them the player won, each one a bag.", "share of tricks", "play", better="lower",
))
_register(Metric(
    "lead_profile", "Leads by suit and rank", "rate",
    "SELECT {keys}, l.suit, l.rank_class, count(*) AS k, sum(count(*)) OVER (PARTITION BY {keys}) AS n "
    "FROM ph JOIN sw_leads l ON l.game_id = ph.game_id AND l.hand = ph.hand AND l.seat = ph.seat "
    "GROUP BY {keys}, l.suit, l.rank_class",
    "Share of the player's leads by suit (as played: jokers are spades) and rank class (high A K Q and top "
    "trumps, middle J T 9 8, low 7..2).", "share of leads", "play", extra_keys=("suit", "rank_class"),
))
_register(Metric(
    "spades_broken_trick", "Trick when spades were broken", "mean",
    _mean("spades_broken_trick", "has_plays AND spades_broken_trick IS NOT NULL", "hh"),
    "The trick (1..13) in which the first spade of the hand was played, over hands with card play.",
    "trick", "play", least=1,
))
_register(Metric(
    "breaks_spades", "Breaks spades", "rate", _rate(_cnt("has_plays"), _cnt("has_plays AND broke_spades")),
    "Share of the hands with card play where the player played the hand's first spade.", "share of hands", "play",
))
_register(Metric(
    "findings_per_100", "Findings per 100 hands", "mean", _mean("findings", "TRUE"),
    "Findings (violations) naming the player's seat, per 100 hands played.", "findings / 100 hands",
    "integrity", scale=100.0, better="lower", least=0, events=True,
))
_register(Metric(
    "hand_findings_per_100", "All findings per 100 hands", "mean", _mean("hand_findings", "TRUE", "hh"),
    "Every finding of a hand (seat, side and score findings), per 100 hands; meant per table, round or event.",
    "findings / 100 hands", "integrity", scale=100.0, better="lower", least=0, events=True,
))

# --------------------------------------------------------------------------------------------
# Decision metrics (issue 14 item 4): bids judged against the hand's value (hand_values, written by
# spadework.analysis.handvalue) and cards judged by double-dummy cost (card_costs, written by
# `spadework analyse`).  Both join the per-seat rows of ``ph``; a database without card_costs counts
# no card (n = 0), one without hand_values gets them computed on first use.

# the joined columns get a prefix (hv_*, cc_*) so the group keys of ph stay unambiguous
_HV = (
    "(SELECT ph.*, hv.bid_error AS hv_bid_error, hv.nil AS hv_nil, hv.blind AS hv_blind, hv.taken AS hv_taken,"
    " hv.nil_chance AS hv_nil_chance FROM ph LEFT JOIN hand_values hv"
    " ON hv.game_id = ph.game_id AND hv.hand = ph.hand AND hv.seat = ph.seat) j"
)
_CC = (
    "(SELECT ph.*, cc.cost AS cc_cost FROM ph LEFT JOIN card_costs cc"
    " ON cc.game_id = ph.game_id AND cc.hand = ph.hand AND cc.seat = ph.seat) j"
)


def _joined_mean(expr: str, where: str, src: str) -> str:
    e = f"({expr}) FILTER (WHERE {where})"
    return (
        f"SELECT {{keys}}, count{e} AS n, avg{e} AS mean, stddev_samp{e} AS sd, sum{e} AS total "
        f"FROM {src} GROUP BY {{keys}}"
    )


def _joined_rate(n_where: str, k_where: str, src: str) -> str:
    return (
        f"SELECT {{keys}}, count(*) FILTER (WHERE {n_where}) AS n, count(*) FILTER (WHERE {k_where}) AS k "
        f"FROM {src} GROUP BY {{keys}}"
    )


def _nil_sound() -> float:
    from spadework.analysis.handvalue import NIL_SOUND

    return NIL_SOUND


_NIL_PLAIN = "hv_nil AND NOT hv_blind AND hv_taken IS NOT NULL"
_UNSOUND = f"hv_nil_chance < {_nil_sound()!r}"

_register(Metric(
    "play_accuracy", "Play accuracy", "rate", _joined_rate("cc_cost IS NOT NULL", "cc_cost = 0", _CC),
    "Share of the player's cards that lost nothing against double-dummy best play (card_costs.cost = 0; "
    "every card counts, forced ones too).", "share of cards", "decisions", better="higher", needs=("card_costs",),
))
_register(Metric(
    "tricks_lost_per_100", "Tricks lost per 100 cards", "mean", _joined_mean("cc_cost", "cc_cost IS NOT NULL", _CC),
    "Tricks the player's side lost to the player's cards against double-dummy best play, per 100 cards played "
    "(card_costs.cost: tricks the side takes with best play before the card minus after it).",
    "tricks / 100 cards", "decisions", scale=100.0, better="lower", needs=("card_costs",), least=0,
))
_register(Metric(
    "bid_vs_hand", "Bid against the hand's value", "mean",
    _joined_mean("hv_bid_error", "hv_bid_error IS NOT NULL", _HV),
    "Numeric bid minus the tricks an average player of this database takes with such a hand "
    "(hand_values.bid_error): above 0 the player bids more than the cards are worth, below 0 less.",
    "tricks", "decisions", needs=("hand_values",),
))
_register(Metric(
    "bid_miss_vs_hand", "Bid miss against the hand's value", "mean",
    _joined_mean("abs(hv_bid_error)", "hv_bid_error IS NOT NULL", _HV),
    "Mean distance in tricks between the numeric bid and the hand's value (|hand_values.bid_error|), "
    "whichever way.", "tricks", "decisions", better="lower", needs=("hand_values",), least=0,
))
_register(Metric(
    "unsound_nils", "Unsound nils", "rate", _joined_rate(_NIL_PLAIN, f"{_NIL_PLAIN} AND {_UNSOUND}", _HV),
    "Share of the player's nil bids (blind nil left out: bid unseen) on hands the nil model gives less than "
    f"an even chance (hand_values.nil_chance < {_nil_sound():g}).", "share of nils", "decisions", better="lower",
    needs=("hand_values",),
))
_register(Metric(
    "unsound_nils_made", "Unsound nils made", "rate",
    _joined_rate(f"{_NIL_PLAIN} AND {_UNSOUND}", f"{_NIL_PLAIN} AND {_UNSOUND} AND hv_taken = 0", _HV),
    "Share of the player's unsound nils (see Unsound nils) that were made all the same.", "share of nils",
    "decisions", needs=("hand_values",),
))
_register(Metric(
    "nils_above_chance", "Nils made above the hand's chance", "mean",
    _joined_mean("CASE WHEN hv_taken = 0 THEN 1.0 ELSE 0.0 END - hv_nil_chance", "hv_nil AND hv_taken IS NOT NULL",
                 _HV),
    "Over the player's nils (blind nil included): made (1) or not (0) minus the chance the nil model gave "
    "the hand; above 0 the player makes more nils than such hands do on average (nil play and cover).",
    "nils", "decisions", better="higher", needs=("hand_values",),
))

SCALAR_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY.values() if not m.extra_keys)
"""Metrics with one number per group (the ones a player table lists)."""


def describe() -> pl.DataFrame:
    """The registry as a frame: ``name, title, kind, unit, category, better, extra_keys, description``."""
    return pl.DataFrame(
        [
            {
                "name": m.name,
                "title": m.title,
                "kind": m.kind,
                "unit": m.unit,
                "category": m.category,
                "better": m.better,
                "extra_keys": ", ".join(m.extra_keys),
                "description": m.description,
            }
            for m in REGISTRY.values()
        ]
    )


# --------------------------------------------------------------------------------------------
# Running


def _frame(con, sql: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    """Run a query and return all of its rows as a polars frame."""
    rel = con.sql(sql, params=list(params)) if params else con.sql(sql)
    return rel.pl()


def _keys(by: str | Sequence[str]) -> list[str]:
    names = [by] if isinstance(by, str) else list(by)
    if not names:
        names = ["all"]
    out = []
    for name in names:
        if name not in GROUP_KEYS:
            raise ValueError(f"cannot group by {name!r}; known: {sorted(GROUP_KEYS)}")
        col = GROUP_KEYS[name]
        if col not in out:
            out.append(col)
    return out


def metric_sql(
    name: str,
    filters: Filters | Mapping[str, Any] | None = None,
    by: str | Sequence[str] = "player",
    source: str = "sw_player_hands",
):
    """The full SQL of a metric and its parameters: ``(sql, params)`` (for reading or for DuckDB directly).

    Raises ``KeyError`` for an unknown metric (the message lists the known ones) and ``ValueError``
    for an unknown filter or grouping.
    """
    if name not in REGISTRY:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(REGISTRY)}")
    m = REGISTRY[name]
    keys = ", ".join(_keys(by))
    where, params = Filters.of(filters).where()
    body = m.sql.replace("{keys}", keys)
    sql = (
        f"WITH ph AS (SELECT * FROM {source} WHERE {where}),\n"
        f"sh AS (SELECT * FROM ph QUALIFY row_number() OVER (\n"
        f"    PARTITION BY game_id, hand, side, {keys} ORDER BY seat) = 1),\n"
        f"hh AS (SELECT * FROM ph QUALIFY row_number() OVER (PARTITION BY game_id, hand, {keys} ORDER BY seat) = 1)\n"
        f"{body}"
    )
    return sql, params


def run(
    con,
    name: str,
    filters: Filters | Mapping[str, Any] | None = None,
    by: str | Sequence[str] = "player",
) -> pl.DataFrame:
    """Run one metric; one row per group with the columns of the module doc.

    ``con``: a DuckDB connection holding the TABLES.md tables (read-only is fine).
    ``filters``: a :class:`Filters` or a mapping of its fields.  ``by``: a key of :data:`GROUP_KEYS`
    or a list of them (``"player"``, ``"partnership"``, ``"side"``, ``"table"``, ``["table", "round"]``,
    ``"all"``...).  Rows are sorted by the keys.  Raises ``KeyError``/``ValueError`` as :func:`metric_sql`,
    and ``ValueError`` for a filter value no hand has (:meth:`Filters.require_known`).
    """
    prepare(con)
    Filters.of(filters).require_known(con)
    return _run(con, name, filters, by)


def _run(con, name, filters, by) -> pl.DataFrame:
    m = REGISTRY.get(name)
    if m is not None and m.needs:
        from spadework.analysis.decisions import ensure_tables

        ensure_tables(con, m.needs)
    sql, params = metric_sql(name, filters, by, _player_hands_source(con))
    raw = _frame(con, sql, params)
    keys = _keys(by)
    return _finish(raw, m, keys)


def _finish(raw: pl.DataFrame, m: Metric, keys: list[str]) -> pl.DataFrame:
    if m.kind == "rate":
        df = stats.with_wilson(raw.with_columns(pl.col("n").cast(pl.Int64), pl.col("k").cast(pl.Int64)))
        df = df.with_columns(total=pl.lit(None, dtype=pl.Float64))
    elif m.kind == "mean":
        df = stats.with_mean_se(raw.with_columns(pl.col("n").cast(pl.Int64)))
        df = df.with_columns(k=pl.lit(None, dtype=pl.Int64), total=pl.col("total").cast(pl.Float64))
        if m.events:
            df = stats.widen_for_events(df)
    else:
        df = raw.with_columns(
            pl.col("n").cast(pl.Int64),
            k=pl.lit(None, dtype=pl.Int64),
            total=pl.lit(None, dtype=pl.Float64),
            value=pl.col("n").cast(pl.Float64),
            se=pl.lit(None, dtype=pl.Float64),
            low=pl.lit(None, dtype=pl.Float64),
            high=pl.lit(None, dtype=pl.Float64),
        )
    if m.least is not None:
        df = df.with_columns(low=pl.when(pl.col("low") < m.least).then(pl.lit(float(m.least))).otherwise(pl.col("low")))
    if m.scale != 1.0:
        df = df.with_columns([(pl.col(c) * m.scale).alias(c) for c in ("value", "se", "low", "high")])
    cols = keys + list(m.extra_keys) + list(OUTPUT_COLUMNS)
    df = df.select(cols).with_columns([pl.col(c).cast(pl.Float64) for c in ("value", "se", "low", "high")])
    return df.sort(keys + list(m.extra_keys), nulls_last=True)


def run_all(
    con,
    filters: Filters | Mapping[str, Any] | None = None,
    by: str | Sequence[str] = "player",
    names: Iterable[str] | None = None,
) -> pl.DataFrame:
    """Every scalar metric (or ``names``) in one long frame: the keys, ``metric``, ``title``, ``kind``,
    ``unit``, ``category``, ``better`` and the output columns."""
    with snapshot(con):
        return _run_all(con, filters, by, names)


def _run_all(con, filters, by, names) -> pl.DataFrame:
    frames = []
    keys = _keys(by)
    names = list(names or SCALAR_METRICS)
    for name in names:
        if name not in REGISTRY:
            raise KeyError(f"unknown metric {name!r}; known: {', '.join(REGISTRY)}")
    prepare(con)
    Filters.of(filters).require_known(con)
    for name in names:
        m = REGISTRY[name]
        if m.extra_keys:
            raise ValueError(f"{name} has extra keys {m.extra_keys}; run it on its own")
        df = _run(con, name, filters, by)
        frames.append(
            df.with_columns(
                metric=pl.lit(m.name),
                title=pl.lit(m.title),
                kind=pl.lit(m.kind),
                unit=pl.lit(m.unit),
                category=pl.lit(m.category),
                better=pl.lit(m.better, dtype=pl.String),
            ).select(keys + ["metric", "title", "kind", "unit", "category", "better"] + list(OUTPUT_COLUMNS))
        )
    if not frames:
        return pl.DataFrame()
    return pl.concat(frames, how="vertical_relaxed")


# --------------------------------------------------------------------------------------------
# Named frames for charts, notebooks and the report (not per-group metrics)


def game_bags(con, game_id: str | None = None) -> pl.DataFrame:
    """Bags through each game: one row per game, hand, side.

    Columns: ``game_id, hand, side, players`` (the side's two names), ``bags_this_hand``,
    ``bag_penalty`` (points, as hand_scores), ``bags`` (the count after the hand, penalty applied),
    ``cumulative_bags`` (bags brought into the game plus every bag taken so far, never reduced),
    ``bag_limit`` (the ruleset's, 0 = no penalty).  ``game_id`` limits it to one game.
    """
    prepare(con)
    src = _player_hands_source(con)
    where = "WHERE ph.game_id = ?" if game_id is not None else ""
    params = [game_id] if game_id is not None else []
    return _frame(
        con,
        f"""
        WITH s AS (
            SELECT ph.game_id, ph.hand, ph.side, min(ph.partnership) AS players,
                   any_value(ph.bags_this_hand) AS bags_this_hand, any_value(ph.bag_penalty) AS bag_penalty,
                   any_value(ph.bags) AS bags, any_value(ph.bags_before) AS bags_before,
                   any_value(hr.bag_limit) AS bag_limit
            FROM {src} ph JOIN sw_hand_rules hr ON hr.game_id = ph.game_id AND hr.hand = ph.hand
            {where}
            GROUP BY ph.game_id, ph.hand, ph.side
        )
        SELECT game_id, hand, side, players, bags_this_hand, bag_penalty, bags,
               CAST(first_value(bags_before) OVER w
                    + sum(coalesce(bags_this_hand, 0)) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                    AS BIGINT) AS cumulative_bags,
               bag_limit
        FROM s
        WINDOW w AS (PARTITION BY game_id, side ORDER BY hand)
        ORDER BY game_id, side, hand
        """,
        params,
    )


def findings(con, filters: Filters | Mapping[str, Any] | None = None) -> pl.DataFrame:
    """Every finding (``violations`` row) with its hand's context.

    Columns: ``game_id, hand, trick, seat, card, side, code, message, field, recorded, expected,
    event, date, table_name, round, player`` (the name at the finding's seat, if any).
    ``filters`` applies its game-level fields (event, period, ruleset, table, round, game_id, and
    player: findings at that player's seat); findings without a hand always pass the hand filters.
    """
    prepare(con)
    src = _player_hands_source(con)
    f = Filters.of(filters)
    where, params = Filters(
        event=f.event, period=f.period, ruleset=f.ruleset, table=f.table, round=f.round, game_id=f.game_id
    ).where()
    player_clause = ""
    if f.player is not None:
        names = [f.player] if isinstance(f.player, str) else list(f.player)
        player_clause = f" AND player IN ({', '.join('?' for _ in names)})"
        params = params + names
    return _frame(
        con,
        f"""
        WITH hc AS (
            SELECT game_id, hand, any_value(event) AS event, any_value(date) AS date,
                   any_value(table_name) AS table_name, any_value(round) AS round, any_value(ruleset) AS ruleset
            FROM {src} GROUP BY game_id, hand
        ), v AS (
            SELECT v.game_id, v.hand, v.trick, v.seat, v.card, v.side, v.code, v.message, v.field, v.recorded,
                   v.expected, hc.event, hc.date, hc.table_name, hc.round, hc.ruleset, sp.player
            FROM violations v
            LEFT JOIN hc ON hc.game_id = v.game_id AND hc.hand = v.hand
            LEFT JOIN {src} sp ON sp.game_id = v.game_id AND sp.hand = v.hand AND sp.seat = v.seat
        )
        SELECT game_id, hand, trick, seat, card, side, code, message, field, recorded, expected,
               event, date, table_name, round, player
        FROM v WHERE ({where}){player_clause}
        ORDER BY game_id, hand NULLS LAST, trick NULLS FIRST, seat, code
        """,
        params,
    )


def findings_grid(con, filters: Filters | Mapping[str, Any] | None = None) -> pl.DataFrame:
    """Findings by table and round (for the heat map): ``table_name, round, hands, findings, per_100``."""
    df = run(con, "hand_findings_per_100", filters, by=["table", "round"])
    return df.select(
        "table_name",
        "round",
        pl.col("n").alias("hands"),
        pl.col("total").cast(pl.Int64).alias("findings"),
        pl.col("value").alias("per_100"),
    )


def score_mismatches(con, filters: Filters | Mapping[str, Any] | None = None) -> pl.DataFrame:
    """``SCORE_MISMATCH`` and ``GAME_RESULT_MISMATCH`` findings: ``game_id, hand, side, code, field,
    recorded, expected, message, table_name, round`` (RULES.md section 5, "Checking recorded scores")."""
    df = findings(con, filters)
    return df.filter(pl.col("code").is_in(["SCORE_MISMATCH", "GAME_RESULT_MISMATCH"])).select(
        "game_id", "hand", "side", "code", "field", "recorded", "expected", "message", "table_name", "round"
    )


def require_players(con, wanted: Sequence[str]) -> None:
    """Raise ``ValueError`` naming the first of ``wanted`` that no hand names (a typo), and listing
    the players there are (the first 20)."""
    known = players(con)
    unknown = [p for p in wanted if p not in known]
    if unknown:
        shown = ", ".join(known[:20]) + (" ..." if len(known) > 20 else "")
        raise ValueError(f"unknown player {unknown[0]!r}; players: {shown or '(none)'}")


def players(con) -> list[str]:
    """Every player name in the database, sorted."""
    prepare(con)
    src = CACHE_TABLE if CACHE_TABLE in existing_relations(con) else "sw_seat_hands"
    return [
        r[0]
        for r in con.execute(f"SELECT DISTINCT player FROM {src} WHERE player IS NOT NULL ORDER BY player").fetchall()
    ]


def summary(con) -> dict[str, int]:
    """Headline counts: ``games, hands, players, hands_with_play, findings, score_mismatches, load_errors``."""
    prepare(con)
    one = lambda sql: int(con.execute(sql).fetchone()[0] or 0)  # noqa: E731
    return {
        "games": one("SELECT count(DISTINCT game_id) FROM hands"),
        "hands": one("SELECT count(*) FROM (SELECT DISTINCT game_id, hand FROM hands)"),
        "players": len(players(con)),
        "hands_with_play": one("SELECT count(*) FROM (SELECT DISTINCT game_id, hand FROM plays)"),
        "findings": one("SELECT count(*) FROM violations"),
        "score_mismatches": one("SELECT count(*) FROM violations WHERE code = 'SCORE_MISMATCH'"),
        "load_errors": one("SELECT count(*) FROM load_errors"),
    }


__all__ = [
    "DECKS",
    "deck_key",
    "Filters",
    "GROUP_KEYS",
    "Metric",
    "OUTPUT_COLUMNS",
    "REGISTRY",
    "RuleFacts",
    "SCALAR_METRICS",
    "SITUATION_MARGIN",
    "describe",
    "findings",
    "findings_grid",
    "game_bags",
    "metric_sql",
    "players",
    "prepare",
    "rank_class",
    "rule_facts",
    "run",
    "run_all",
    "score_mismatches",
    "snapshot",
    "summary",
    "freeze",
    "thaw",
]
