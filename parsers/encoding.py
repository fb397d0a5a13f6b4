"""One integer encoding of cards, seats and decks for compiled code and packed storage (kernels, solver, loader).

Everything here is *derived* from :mod:`spadework.parsers.cards` and :mod:`spadework.parsers.seats`,
the only modules that know card strings and seat arithmetic; nothing re-declares a card list or
a seat order.  Compiled code sees only the integers and arrays defined below.

Cards
    ``CARD_CODES``: the 54 card codes in id order: the 52 cards of
    :data:`~spadework.parsers.cards.STANDARD_CARDS` (spades, hearts, diamonds, clubs, each from
    ace down), then ``BJ``, ``LJ``.  ``CARD_ID[code]`` is the id (0..53), ``NO_CARD`` (255)
    marks "no card" in a fixed-width array.  A card id fits a ``uint8``; a set of cards fits one
    ``uint64`` bit mask (bit ``id``).
Seats and sides
    Seat ids are ``int(Seat)`` (N 0, E 1, S 2, W 3; left of s is ``(s + 1) & 3``, partner
    ``s ^ 2``, side ``s & 1``: NS 0, EW 1), exactly :class:`~spadework.parsers.seats.Seat` and
    :class:`~spadework.parsers.seats.Side` as integers.  ``NO_SEAT`` (255) marks "none".
Suits
    Suit ids ``S`` 0, ``H`` 1, ``D`` 2, ``C`` 3 (``SUIT_CODES``); a card's *playing* suit depends
    on the deck (jokers and nyc's 2D play as spades).  A joker outside a deck's trump order
    (e.g. a BJ played under ``standard``) plays as its printed suit ``J``: ``JOKER_SUIT_ID`` 4
    (``PLAY_SUIT_CODES`` = ``SHDCJ``), exactly as :meth:`~spadework.parsers.cards.Deck.suit` says.
Decks (RULES.md section 2)
    :func:`deck_arrays` turns a :class:`~spadework.parsers.cards.Deck` into the arrays a kernel
    needs: per card id its playing suit (``-1`` for a card outside the deck) and its power
    (orders cards within the suit they play as; every trump above every non-trump), plus the
    deck's bit mask; ``play_suit``/``play_power`` cover every card id, inside the deck or not,
    as the reference replay plays a card the deck does not have (RULES.md section 7,
    ``DEAL_INVALID``: the card still counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from spadework.parsers.cards import JOKER_SUIT, JOKERS, STANDARD_CARDS, SUITS, Deck
from spadework.parsers.seats import SEATS, SIDES

CARD_CODES: tuple[str, ...] = STANDARD_CARDS + JOKERS
"""Card codes in id order (54)."""
CARD_ID: dict[str, int] = {code: i for i, code in enumerate(CARD_CODES)}
"""Card code -> id."""
N_CARDS = len(CARD_CODES)
NO_CARD = 255
"""The id for "no card" in fixed-width ``uint8`` arrays."""

SUIT_CODES: str = SUITS
"""Suit letters in id order: S 0, H 1, D 2, C 3."""
SUIT_ID: dict[str, int] = {s: i for i, s in enumerate(SUIT_CODES)}
SPADE_ID = SUIT_ID["S"]
PLAY_SUIT_CODES: str = SUITS + JOKER_SUIT
"""Playing-suit letters in id order: the four suits, then ``J`` (4) for a joker outside the trump order
(stored ``tricks.led_suit`` ids use these)."""
JOKER_SUIT_ID = PLAY_SUIT_CODES.index(JOKER_SUIT)

SEAT_CODES: tuple[str, ...] = tuple(str(s) for s in SEATS)
"""Seat letters in id order (``int(Seat)``)."""
SIDE_CODES: tuple[str, ...] = tuple(str(s) for s in SIDES)
"""Side names in id order (``int(Side)``)."""
NO_SEAT = 255

CODE_TABLE = np.array([c.encode() for c in CARD_CODES], dtype="S2")
"""``CODE_TABLE[id]`` is the card's 2-byte code (for turning id arrays back into strings)."""


def sql_list(codes) -> str:
    """A DuckDB list literal of ``codes`` (``['AS', 'KS', ...]``): indexed with ``id + 1`` it turns an
    id column back into its codes in SQL (the views of the stored tables do this); an id of
    ``NO_CARD``/``NO_SEAT`` (255) indexes past the end and gives NULL."""
    return "[" + ", ".join("'" + c + "'" for c in codes) + "]"


CARD_SQL = sql_list(CARD_CODES)
"""``CARD_SQL[id + 1]`` in SQL is the card's code."""
SEAT_SQL = sql_list(SEAT_CODES)
"""``SEAT_SQL[id + 1]`` in SQL is the seat's letter."""
SIDE_SQL = sql_list(SIDE_CODES)
"""``SIDE_SQL[id + 1]`` in SQL is the side's name."""
PLAY_SUIT_SQL = sql_list(PLAY_SUIT_CODES)
"""``PLAY_SUIT_SQL[id + 1]`` in SQL is the playing suit's letter (``J`` for 4)."""


def card_ids(cards) -> np.ndarray:
    """Card codes -> ``uint8`` ids.  Raises ``KeyError`` naming a code that is not a card."""
    return np.fromiter((CARD_ID[c] for c in cards), dtype=np.uint8)


def card_mask(cards) -> int:
    """Card codes -> a bit mask (bit ``CARD_ID[code]``) as a Python int (fits ``uint64``)."""
    m = 0
    for c in cards:
        m |= 1 << CARD_ID[c]
    return m


def mask_cards(mask: int) -> list[str]:
    """A bit mask -> the card codes in it, in id order."""
    return [CARD_CODES[i] for i in range(N_CARDS) if mask >> i & 1]


@dataclass(frozen=True)
class DeckArrays:
    """A deck as kernels use it (RULES.md section 2).

    ``suit``: ``int8[54]``, each card's playing suit id, ``-1`` outside the deck;
    ``power``: ``int16[54]``, larger wins within a playing suit; every trump's power is above
    every non-trump's (so ``power`` alone decides a trick once the led suit is known);
    ``mask``: the deck's cards as a bit mask; ``size``: cards in the deck;
    ``play_suit``: ``int8[54]``, the suit *every* card id plays as here (``0..3``, or
    ``JOKER_SUIT_ID`` 4 for a joker outside the trump order), cards outside the deck included;
    ``play_power``: ``int16[54]``, ``Deck.power`` of every card id (+1000 for a trump), so
    the winner of any recorded trick is the first card of the highest ``play_power`` among the
    trumps and the cards of the suit led (``Deck.winner_index``).
    """

    name: str
    suit: np.ndarray
    power: np.ndarray
    mask: int
    size: int
    play_suit: np.ndarray
    play_power: np.ndarray


@lru_cache(maxsize=64)
def deck_arrays(deck: Deck) -> DeckArrays:
    """The kernel arrays of ``deck`` (cached; decks are frozen)."""
    suit = np.full(N_CARDS, -1, dtype=np.int8)
    power = np.zeros(N_CARDS, dtype=np.int16)
    for code in deck.cards:
        i = CARD_ID[code]
        suit[i] = SUIT_ID[deck.suit(code)]
        power[i] = deck.power(code) + (1000 if deck.is_spade(code) else 0)
    play_suit = np.array([PLAY_SUIT_CODES.index(deck.suit(c)) for c in CARD_CODES], dtype=np.int8)
    play_power = np.array(
        [deck.power(c) + (1000 if deck.is_spade(c) else 0) for c in CARD_CODES], dtype=np.int16
    )
    return DeckArrays(deck.name, suit, power, card_mask(deck.cards), len(deck.cards), play_suit, play_power)


__all__ = [
    "CARD_CODES",
    "CARD_ID",
    "CARD_SQL",
    "CODE_TABLE",
    "DeckArrays",
    "JOKER_SUIT_ID",
    "NO_CARD",
    "NO_SEAT",
    "N_CARDS",
    "PLAY_SUIT_CODES",
    "PLAY_SUIT_SQL",
    "SEAT_CODES",
    "SEAT_SQL",
    "SIDE_SQL",
    "SIDE_CODES",
    "SPADE_ID",
    "SUIT_CODES",
    "SUIT_ID",
    "card_ids",
    "card_mask",
    "deck_arrays",
    "mask_cards",
    "sql_list",
]
