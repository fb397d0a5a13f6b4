"""Cards and decks: the one place that reads, writes and orders cards.

A card is held everywhere as its canonical code, a two-letter upper-case string:
rank then suit (``AS``, ``TD``, ``2C``), or ``BJ`` / ``LJ`` for the big and little
jokers (FORMATS.md, "Cards and seats").  :func:`parse_card` turns anything a log
may hold (``SA``, ``10s``, ``A♠``, ``qh``) into that code; nobody else handles
card strings.

A :class:`Deck` says which cards are dealt and which of them belong to the
spade suit, in trump order (RULES.md section 2).  It also decides who wins a
trick (RULES.md section 4), because that needs nothing but the deck's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from spadework.parsers.seats import SEATS, Seat

RANKS = "AKQJT98765432"
"""Ranks from high to low."""
SUITS = "SHDC"
"""Suits in the order PBN deals list them."""
BIG_JOKER = "BJ"
LITTLE_JOKER = "LJ"
JOKERS = (BIG_JOKER, LITTLE_JOKER)
JOKER_SUIT = "J"
"""The natural "suit" of a joker; decks that use jokers make them spades."""

SUIT_NAMES = {"S": "spade", "H": "heart", "D": "diamond", "C": "club", "J": "joker"}
_SUIT_SYMBOLS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C", "♤": "S", "♡": "H", "♢": "D", "♧": "C"}

STANDARD_CARDS: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
"""The 52 cards, spades first, each suit from ace down."""


class CardError(ValueError):
    """Raised for text that is not a card; the message quotes the text."""


def _build_table() -> dict[str, str]:
    table: dict[str, str] = {}
    ranks = {r: r for r in RANKS} | {"10": "T"}
    suits = {s: s for s in SUITS} | _SUIT_SYMBOLS
    for rtext, r in ranks.items():
        for stext, s in suits.items():
            code = r + s
            for a, b in ((rtext, stext), (stext, rtext)):
                table[a + b] = code
                table[(a + b).upper()] = code
                table[(a + b).lower()] = code
    for j in JOKERS:
        table[j] = j
        table[j.lower()] = j
    return table


_PARSE = _build_table()


def parse_card(text: object, aliases: Mapping[str, str] | None = None) -> str:
    """Return the canonical code of a card written in any accepted form.

    Accepts rank and suit in either order, ``10`` for ``T``, suit symbols and
    lower case; ``BJ``/``LJ`` for jokers.  ``aliases`` maps extra spellings
    (already upper case) to canonical codes and is tried first, e.g. Trickster's
    ``{"JH": "BJ", "JL": "LJ"}``.

    Raises :class:`CardError` (a ``ValueError``) such as ``'1S' is not a card``.
    """
    if isinstance(text, str):
        t = text.strip()
        if aliases:
            hit = aliases.get(t.upper())
            if hit is not None:
                return hit
        code = _PARSE.get(t)
        if code is None:
            code = _PARSE.get(t.upper())
        if code is not None:
            return code
    raise CardError(f"{text!r} is not a card")


def spellings() -> dict[str, str]:
    """Every written form of a card :func:`parse_card` looks up (``"10h"``, ``"♠A"``, ``"bj"``...)
    -> its canonical code.  Mixed case (``"aS"``) is accepted too, through upper case."""
    return dict(_PARSE)


def is_card_code(text: object) -> bool:
    """True when ``text`` is already a canonical card code."""
    return isinstance(text, str) and (text in JOKERS or (len(text) == 2 and text[0] in RANKS and text[1] in SUITS))


def suit_of(card: str) -> str:
    """The printed suit of a canonical card: ``S H D C``, or ``J`` for a joker.

    This is the suit on the card's face; which suit a card *plays as* depends on
    the deck (see :meth:`Deck.suit`).
    """
    return JOKER_SUIT if card in JOKERS else card[1]


def rank_of(card: str) -> str:
    """The rank letter of a canonical card (``A``..``2``), or ``B``/``L`` for a joker."""
    return card[0]


def rank_value(card: str) -> int:
    """Rank as a number: 2..14 for deuce..ace, 15 little joker, 16 big joker."""
    if card == BIG_JOKER:
        return 16
    if card == LITTLE_JOKER:
        return 15
    return 14 - RANKS.index(card[0])


def sort_key(card: str) -> tuple[int, int]:
    """Order for display: jokers, then spades, hearts, diamonds, clubs; high to low."""
    if card in JOKERS:
        return (-1, JOKERS.index(card))
    return (SUITS.index(card[1]), RANKS.index(card[0]))


def sort_cards(cards: Iterable[str]) -> list[str]:
    """Cards sorted for display (see :func:`sort_key`)."""
    return sorted(cards, key=sort_key)


def describe_suit(suit: str) -> str:
    """``"D"`` -> ``"diamond"`` (used in findings' sentences)."""
    return SUIT_NAMES.get(suit, suit)


@dataclass(frozen=True)
class Deck:
    """The cards a ruleset deals and the order of its trumps.

    ``cards`` holds every card once; ``trump_order`` lists, high to low, the cards
    that belong to the spade suit (jokers and, in ``nyc``, 2D included).  Cards of
    the other suits rank ace high.  A card outside the deck keeps its printed
    suit and never wins a trick (the checker reports it as ``DEAL_INVALID``).
    """

    name: str
    cards: tuple[str, ...]
    trump_order: tuple[str, ...]
    _suit: dict[str, str] = field(init=False, repr=False, compare=False)
    _power: dict[str, int] = field(init=False, repr=False, compare=False)
    _members: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        suit: dict[str, str] = {}
        power: dict[str, int] = {}
        for card in STANDARD_CARDS + JOKERS:
            suit[card] = suit_of(card)
            power[card] = rank_value(card) if card not in JOKERS else 0
        n = len(self.trump_order)
        for i, card in enumerate(self.trump_order):
            suit[card] = "S"
            power[card] = 100 + (n - i)
        object.__setattr__(self, "_suit", suit)
        object.__setattr__(self, "_power", power)
        object.__setattr__(self, "_members", frozenset(self.cards))

    def __contains__(self, card: object) -> bool:
        return card in self._members

    def __len__(self) -> int:
        return len(self.cards)

    def suit(self, card: str) -> str:
        """The suit a card plays as in this deck (``S`` for every trump)."""
        return self._suit[card]

    def is_spade(self, card: str) -> bool:
        """True for every card that belongs to the spade suit here (jokers, nyc's 2D...)."""
        return self._suit[card] == "S"

    def power(self, card: str) -> int:
        """A number that orders cards within the suit they play as; trumps above all others."""
        return self._power[card]

    def winner_index(self, cards: Sequence[str]) -> int:
        """Index (0-based, in play order) of the card that wins a trick.

        RULES.md section 4: the highest spade (trump order) if any spade was
        played, otherwise the highest card of the suit led.
        """
        suit_map, power = self._suit, self._power
        led = suit_map[cards[0]]
        best, best_key = 0, -1
        for i, card in enumerate(cards):
            s = suit_map[card]
            if s == "S":
                key = 1000 + power[card]
            elif s == led:
                key = power[card]
            else:
                continue
            if key > best_key:
                best, best_key = i, key
        return best

    def without_trumps(self, cards: Iterable[str]) -> list[str]:
        """The cards among ``cards`` that are not spades in this deck."""
        return [c for c in cards if self._suit[c] != "S"]


def make_deck(
    name: str,
    removed: Iterable[str] = (),
    extra: Iterable[str] = (),
    trump_order: Sequence[str] | None = None,
) -> Deck:
    """Build a deck from the 52 cards minus ``removed`` plus ``extra``.

    ``trump_order`` (high to low) defaults to ``extra`` jokers, then AS..2S.
    Every card is parsed, so ``["2c", "2♥"]`` works.  Raises :class:`CardError`.
    """
    removed_set = {parse_card(c) for c in removed}
    extras = [parse_card(c) for c in extra]
    cards = tuple(c for c in STANDARD_CARDS if c not in removed_set) + tuple(e for e in extras if e not in STANDARD_CARDS)
    if trump_order is None:
        order = [e for e in extras if e in JOKERS] + [r + "S" for r in RANKS if r + "S" in cards]
    else:
        order = [parse_card(c) for c in trump_order]
    return Deck(name, cards, tuple(order))


STANDARD_DECK = make_deck("standard")
JOKER_DECK = make_deck(
    "barmore",
    removed=["2C", "2H"],
    extra=JOKERS,
    trump_order=["BJ", "LJ", "2S", "AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S"],
)
NYC_DECK = make_deck(
    "nyc",
    removed=["2C", "2H"],
    extra=JOKERS,
    trump_order=["BJ", "LJ", "2D", "2S", "AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S"],
)


# --- PBN-style hands: "AKQ2.JT3.984.A52" (spades.hearts.diamonds.clubs[.jokers]) ---------------

_PBN_JOKER_LETTERS = {"B": BIG_JOKER, "H": BIG_JOKER, "L": LITTLE_JOKER}


def parse_pbn_hand(text: str) -> tuple[str, ...]:
    """Read one hand written PBN-style: suits ``S.H.D.C`` and an optional fifth group
    of jokers (``B`` or ``H`` big, ``L`` little, as Trickster writes them).

    Raises :class:`CardError` naming the offending text.
    """
    groups = text.strip().split(".")
    if len(groups) not in (4, 5):
        raise CardError(f"{text!r} is not a hand (expected 4 suits separated by dots, and optionally jokers)")
    cards: list[str] = []
    for suit, group in zip(SUITS, groups[:4]):
        i = 0
        g = group.upper()
        while i < len(g):
            if g.startswith("10", i):
                rank, i = "T", i + 2
            else:
                rank, i = g[i], i + 1
            if rank not in RANKS:
                raise CardError(f"{group!r} is not a list of {describe_suit(suit)} ranks in hand {text!r}")
            cards.append(rank + suit)
    if len(groups) == 5:
        for letter in groups[4].upper():
            joker = _PBN_JOKER_LETTERS.get(letter)
            if joker is None:
                raise CardError(f"{groups[4]!r} is not a group of jokers in hand {text!r}")
            cards.append(joker)
    return tuple(cards)


def format_pbn_hand(cards: Iterable[str]) -> str:
    """Write a hand PBN-style, suits ``S.H.D.C``, a fifth group ``BL`` only when jokers are held.

    Cards keep the order given within each suit (sort first for the usual look).
    """
    groups: dict[str, list[str]] = {s: [] for s in SUITS}
    jokers: list[str] = []
    for c in cards:
        if c in JOKERS:
            jokers.append("B" if c == BIG_JOKER else "L")
        else:
            groups[c[1]].append(c[0])
    text = ".".join("".join(groups[s]) for s in SUITS)
    if jokers:
        text += "." + "".join(jokers)
    return text


def parse_pbn_deal(text: str) -> dict[Seat, tuple[str, ...] | None]:
    """Read a PBN deal ``"N:<hand> <hand> <hand> <hand>"``: first seat, then clockwise.

    A hand written ``-`` is unknown and maps to ``None``.  Raises ``ValueError``
    (a :class:`CardError` for bad cards) naming what is wrong.
    """
    t = text.strip()
    if len(t) < 2 or t[1] != ":":
        raise ValueError(f"deal {text!r} does not start with a seat and ':' (e.g. 'N:...')")
    first = Seat.parse(t[0])
    parts = t[2:].split()
    if len(parts) != 4:
        raise ValueError(f"deal {text!r} has {len(parts)} hands, expected 4")
    deal: dict[Seat, tuple[str, ...] | None] = {}
    for seat, part in zip(first.clockwise(), parts):
        deal[seat] = None if part == "-" else parse_pbn_hand(part)
    return deal


def format_pbn_deal(deal: Mapping[Seat, Sequence[str] | None], first: Seat = Seat.N) -> str:
    """Write a PBN deal starting at ``first`` (unknown hands as ``-``)."""
    hands = []
    for seat in first.clockwise():
        cards = deal.get(seat)
        hands.append("-" if cards is None else format_pbn_hand(cards))
    return f"{first}:" + " ".join(hands)


__all__ = [
    "BIG_JOKER",
    "CardError",
    "Deck",
    "JOKERS",
    "JOKER_DECK",
    "LITTLE_JOKER",
    "NYC_DECK",
    "RANKS",
    "SEATS",
    "STANDARD_CARDS",
    "STANDARD_DECK",
    "SUITS",
    "describe_suit",
    "format_pbn_deal",
    "format_pbn_hand",
    "is_card_code",
    "make_deck",
    "parse_card",
    "spellings",
    "parse_pbn_deal",
    "parse_pbn_hand",
    "rank_of",
    "rank_value",
    "sort_cards",
    "sort_key",
    "suit_of",
]
