"""Hypothesis strategies for random hand records, shared by the round-trip tests.

``hand_records()`` draws :class:`~spadework.parsers.model.HandRecord` objects in *canonical* form:
exactly what :func:`spadework.parsers.jsonl.record_from_obj` gives back for
:func:`spadework.parsers.jsonl.record_to_obj` of the record (so ``r == from_obj(to_obj(r))``).
They are readable but need not follow the rules: 14-card hands, cards dealt twice,
bids of 14 or 4.5, reneges, a seat bidding twice.

Use ``from strategies import hand_records, same_record``.  Options let a format
that stores less draw only what it can hold, e.g. ``hand_records(extras=False)``.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from spadework.parsers.cards import JOKERS, RANKS, STANDARD_CARDS, SUITS
from spadework.parsers.model import Bid, HandRecord, SideScore, Trick
from spadework.parsers.seats import SEATS, SIDES

ALL_CARDS: tuple[str, ...] = STANDARD_CARDS + JOKERS
"""The 52 cards and both jokers."""


def pbn_order_key(card: str) -> tuple[int, int]:
    """The order a PBN hand lists cards in: spades, hearts, diamonds, clubs (each ace down), then BJ, LJ."""
    if card in JOKERS:
        return (len(SUITS), JOKERS.index(card))
    return (SUITS.index(card[1]), RANKS.index(card[0]))


@functools.lru_cache(maxsize=None)
def text(max_size: int = 12, min_size: int = 0) -> st.SearchStrategy[str]:
    """Any text (all of Unicode but surrogates), including quotes, brackets, ``;``, ``{``, newlines."""
    special = st.sampled_from(['"', "\\", "[", "]", ";", "{", "}", "%", "\n", "\r", "\t", ",", ":", ">", " ", "é", "♠", "\x00"])
    return st.lists(st.one_of(st.characters(exclude_categories=("Cs",)), special), min_size=min_size, max_size=max_size).map("".join)


@functools.lru_cache(maxsize=None)
def json_values(max_leaves: int = 6) -> st.SearchStrategy[Any]:
    """JSON values orjson writes and reads back unchanged (ints within 64 bits, finite floats)."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**53), max_value=2**53),
        st.floats(allow_nan=False, allow_infinity=False),
        text(8),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(text(6), children, max_size=3)),
        max_leaves=max_leaves,
    )


_BID_VALUES = {
    False: st.integers(min_value=-1, max_value=15),
    True: st.one_of(st.integers(min_value=-1, max_value=15), st.sampled_from([0.5, 4.5, 12.25])),
}
_SEAT = st.sampled_from(SEATS)
_SIDE = st.sampled_from(SIDES)


@st.composite
def bids(draw: st.DrawFn, fractional: bool = True) -> Bid:
    """One bid as ``record_from_obj`` builds it: ``nil`` exactly when the value is 0."""
    seat = draw(_SEAT)
    value = draw(_BID_VALUES[fractional])
    return Bid(seat, value, nil=value == 0, blind=draw(st.booleans()))


_RANDOMS = st.randoms(use_true_random=False)
_TRICK_COUNT = st.integers(min_value=0, max_value=13)


@st.composite
def deals(draw: st.DrawFn, any_order: bool = False) -> tuple[tuple[str, ...], ...]:
    """A deal: usually a real 52-card deal, sometimes any four sets of cards (0..14 each, from all 54).

    Each seat's cards are in PBN order unless ``any_order`` (then in the order dealt, and a card
    may even repeat within a seat).  Cards come from one drawn ``Random`` (fast to draw).
    """
    rnd = draw(_RANDOMS)
    if draw(st.booleans()):
        cards = list(STANDARD_CARDS)
        rnd.shuffle(cards)
        if any_order:  # dealt one at a time, as a shuffled deck is
            return tuple(tuple(cards[i::4]) for i in range(4))
        hands = [cards[i * 13:(i + 1) * 13] for i in range(4)]
    elif any_order:
        return tuple(tuple(rnd.choice(ALL_CARDS) for _ in range(rnd.randint(0, 14))) for _ in SEATS)
    else:
        hands = [rnd.sample(ALL_CARDS, rnd.randint(0, 14)) for _ in SEATS]
    return tuple(tuple(sorted(h, key=pbn_order_key)) for h in hands)


@st.composite
def tricks(draw: st.DrawFn) -> tuple[Trick, ...]:
    """0..13 tricks of 0..4 cards (mostly 4), any cards, sometimes a recorded winner."""
    n = draw(_TRICK_COUNT)
    rnd = draw(_RANDOMS)
    out = []
    for _ in range(n):
        size = 4 if rnd.random() < 0.8 else rnd.randint(0, 4)
        cards = tuple(rnd.choice(ALL_CARDS) for _ in range(size))
        winner = rnd.choice(SEATS) if rnd.random() < 0.5 else None
        out.append(Trick(rnd.choice(SEATS), cards, winner))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


small_ints = st.integers(min_value=-2000, max_value=2000)
_BAG_COUNT = st.integers(0, 30)
_TAKEN = _maybe(st.tuples(*[_maybe(st.integers(-1, 14))] * 4).filter(lambda t: any(v is not None for v in t)))
# (an empty taken object reads as no taken record)
_SCORE_BEFORE = _maybe(st.tuples(small_ints, small_ints))
_BAGS_BEFORE = _maybe(st.tuples(_BAG_COUNT, _BAG_COUNT))
_DATE = _maybe(st.one_of(st.dates().map(str), text(10)))


@st.composite
def side_scores(draw: st.DrawFn) -> tuple[SideScore, SideScore] | None:
    """A recorded score, or ``None``; never two empty sides (the canonical form of "no score")."""
    if draw(st.booleans()):
        return None
    score = tuple(SideScore(draw(_maybe(small_ints)), draw(_maybe(small_ints)), draw(_maybe(_BAG_COUNT))) for _ in SIDES)
    if score[0].is_empty() and score[1].is_empty():
        return None
    return score  # type: ignore[return-value]


@functools.lru_cache(maxsize=None)
def rules() -> st.SearchStrategy[str | dict[str, Any]]:
    """A preset name, occasionally odd text, or an object of options with a preset."""
    presets = st.sampled_from(["standard", "barmore", "nyc"])
    options = st.fixed_dictionaries(
        {"preset": presets},
        optional={
            "target": st.integers(100, 1000),
            "bag_limit": st.integers(0, 10),
            "failed_nil_tricks": st.sampled_from(["side", "bags_only", "ignored"]),
            "blind_nil": st.one_of(st.sampled_from(["never", "always"]), st.fixed_dictionaries({"behind_by": st.integers(0, 300)})),
        },
    )
    return st.one_of(presets, options, text(10))


EXTENSION_KEYS = st.one_of(
    st.from_regex(r"x_[a-z0-9_]{1,8}", fullmatch=True),
    st.sampled_from(["x_", "x_a-b", "x_with space", "notes", "Extra", "total", "Event", "x_Hand"]),
)
"""``x_*`` keys, plus a few keys SPN must write another way (not a tag name, or a tag's name in another case)."""

# Strategies are built once: building them inside every draw is what makes generation slow.
_EXTRAS = st.dictionaries(EXTENSION_KEYS, json_values(), max_size=3)
_BIDS = {f: st.lists(bids(f), max_size=6) for f in (True, False)}
_DEALS = {f: _maybe(deals(f)) for f in (True, False)}
_TRICKS = _maybe(tricks())
_SIDE_SCORES = side_scores()
_HAND_NUMBER = st.integers(min_value=1, max_value=10_000)
_GAME_ID = text(12, min_size=1).filter(lambda t: not t.isspace())  # a blank game_id names no game: rejected


@st.composite
def hand_records(
    draw: st.DrawFn,
    *,
    extras: bool = True,
    fractional_bids: bool = True,
    any_card_order: bool = False,
    game_ids: st.SearchStrategy[str] | None = None,
) -> HandRecord:
    """A random, canonical :class:`HandRecord` (see the module doc).

    ``extras``: draw extension keys (``x_*`` and a few unknown keys, which the JSON reader keeps
    with a warning; the warning is set here as the reader sets it).
    ``fractional_bids``: allow bids such as 4.5.  ``any_card_order``: dealt hands in any order,
    with repeats (SPN keeps only the PBN order).  ``game_ids``: the game ids to draw from.
    """
    ex: dict[str, Any] = draw(_EXTRAS) if extras else {}
    rec = HandRecord(
        game_id=draw(game_ids if game_ids is not None else _GAME_ID),
        hand=draw(_HAND_NUMBER),
        dealer=draw(_SEAT),
        players=tuple(draw(_maybe(text(10))) for _ in SEATS),  # type: ignore[arg-type]
        bids=tuple(draw(_BIDS[fractional_bids])),
        rules=draw(rules()),
        event=draw(_maybe(text())),
        date=draw(_DATE),
        table=draw(_maybe(text(6))),
        round=draw(_maybe(text(6))),
        deal=draw(_DEALS[any_card_order]),
        tricks=draw(_TRICKS),
        taken=draw(_TAKEN),
        score=draw(_SIDE_SCORES),
        score_before=draw(_SCORE_BEFORE),
        bags_before=draw(_BAGS_BEFORE),
        winner=draw(_maybe(_SIDE)),
        extras=ex,
        warnings=tuple(f"unknown key '{k}' kept as an extension" for k in ex if not k.startswith("x_")),
    )
    return rec


@st.composite
def games(draw: st.DrawFn, max_hands: int = 4, **kwargs: Any) -> list[HandRecord]:
    """A list of records: a few games (runs of hands sharing a game id and, mostly, game-level values)."""
    out: list[HandRecord] = []
    for g in range(draw(st.integers(min_value=1, max_value=3))):
        first = draw(hand_records(**kwargs))
        out.append(first)
        for k in range(draw(st.integers(min_value=0, max_value=max_hands - 1))):
            nxt = draw(hand_records(**kwargs))
            if draw(st.integers(0, 3)):  # mostly the same game-level values, sometimes a change mid-game
                nxt = replace(nxt, game_id=first.game_id, event=first.event, date=first.date, table=first.table,
                              round=first.round, rules=first.rules, players=first.players)
            else:
                nxt = replace(nxt, game_id=first.game_id)
            out.append(replace(nxt, hand=first.hand + k + 1))
    return out


def same_record(a: HandRecord, b: HandRecord) -> bool:
    """Model equality ignoring where the records came from and importer warnings."""
    return strip_source(a) == strip_source(b)


def strip_source(rec: HandRecord) -> HandRecord:
    """The record without ``source_file``, ``source_line`` and ``warnings``."""
    return replace(rec, source_file=None, source_line=None, warnings=())
