"""A double-dummy position: four known hands, the current trick, the leader (RULES.md section 4).

:class:`Position` is the question the solver answers; :func:`position_from_json` and
:func:`position_from_pbn` read the two ways the ``solve`` command accepts one, and
:meth:`Position.check` says what makes a position impossible.  :func:`solver_layout` turns a
deck into the solver's bit layout (derived from :func:`spadework.parsers.encoding.deck_arrays`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import orjson

from spadework.analysis.engine.replay import TWO_OF_CLUBS, legal_cards
from spadework.analysis.engine.rules import STANDARD, Ruleset, RulesError, get_ruleset
from spadework.parsers.cards import CardError, Deck, parse_card, parse_pbn_deal, parse_pbn_hand, sort_cards
from spadework.parsers.encoding import CODE_TABLE, N_CARDS, SPADE_ID, deck_arrays
from spadework.parsers.seats import SEATS, Seat


class PositionError(ValueError):
    """A position the solver cannot take: the message says why (a card dealt twice, a hand of the
    wrong length, an unknown seat...)."""


@dataclass(frozen=True)
class Layout:
    """A deck in the solver's layout: bit ``16 * suit + rank`` per card (``rank`` 0 = lowest
    of the suit the card plays as).  ``bit[id]`` is -1 for a card outside the deck;
    ``card[bit]`` is the card code (``""`` for an unused bit)."""

    bit: np.ndarray
    card: tuple[str, ...]
    spade_mask: int


@lru_cache(maxsize=16)
def solver_layout(deck: Deck) -> Layout:
    """The solver's bit layout of ``deck`` (cached)."""
    arrays = deck_arrays(deck)
    bit = np.full(N_CARDS, -1, dtype=np.int64)
    card = [""] * 64
    spade = 0
    for s in range(4):
        ids = [i for i in range(N_CARDS) if arrays.suit[i] == s]
        ids.sort(key=lambda i: int(arrays.power[i]))
        if len(ids) > 16 or (s == 3 and len(ids) > 15):  # (the last group of 16 bits keeps one free)
            raise PositionError(
                f"the ruleset's deck ({deck.name}) has {len(ids)} cards playing as {'spades' if s == SPADE_ID else 'one suit'}; "
                f"the solver takes at most {15 if s == 3 else 16}"
            )
        for rank, i in enumerate(ids):
            b = 16 * s + rank
            bit[i] = b
            card[b] = CODE_TABLE[i].decode()
            if s == SPADE_ID:
                spade |= 1 << b
    return Layout(bit, tuple(card), spade)


@dataclass(frozen=True)
class Position:
    """A position of the play: what each seat still holds and the trick in progress.

    ``hands``: four tuples of card codes, N E S W, the cards each seat still holds (a seat that
    already played to the current trick holds one card fewer); ``leader``: who led (or leads)
    the current trick; ``trick``: the cards played to it so far, in play order from ``leader``;
    ``trick_number``: 1..13; ``spades_broken``: a spade was played to an earlier trick;
    ``ruleset``: deck, ``first_lead`` and ``spades_lead_any_time`` are what matter here.
    """

    hands: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    leader: Seat
    trick: tuple[str, ...] = ()
    trick_number: int = 1
    spades_broken: bool = False
    ruleset: Ruleset = field(default=STANDARD)

    @property
    def to_play(self) -> Seat:
        """The seat to play next."""
        return Seat((int(self.leader) + len(self.trick)) & 3)

    @property
    def tricks_left(self) -> int:
        """Tricks still to be won, the current one included."""
        return 14 - self.trick_number

    def legal_cards(self) -> list[str]:
        """The cards the seat to play may play (the reference rule, :func:`legal_cards`)."""
        return legal_cards(
            self.hands[self.to_play],
            self.trick,
            spades_broken=self.spades_broken,
            trick_number=self.trick_number,
            ruleset=self.ruleset,
        )

    def check(self) -> None:
        """Raise :class:`PositionError` naming what makes this position impossible: a trick of
        4 or more cards, a trick number outside 1..13, spades broken before trick 1, a card
        outside the deck or held twice, hands of the wrong length for the trick number."""
        if len(self.trick) > 3:  # (first: such a trick also makes the hands' sizes give no trick number)
            raise PositionError(f"the current trick has {len(self.trick)} cards; at most 3 are played before it is won")
        if not 1 <= self.trick_number <= 13:
            raise PositionError(f"trick_number {self.trick_number} is not 1..13")
        if self.trick_number == 1 and self.spades_broken:
            raise PositionError("spades cannot be broken before trick 1")
        deck = self.ruleset.deck
        seen: dict[str, str] = {}
        for where, cards in [*((str(s), self.hands[s]) for s in SEATS), ("the trick", self.trick)]:
            for c in cards:
                if c not in deck:
                    raise PositionError(f"{c} ({where}) is not in the {self.ruleset.preset} deck")
                if c in seen:
                    other = seen[c]
                    raise PositionError(f"{c} is held twice ({other} and {where})" if other != where else f"{c} is listed twice in {where}")
                seen[c] = where
        n = 14 - self.trick_number
        played = {Seat((int(self.leader) + i) & 3) for i in range(len(self.trick))}
        for s in SEATS:
            want = n - 1 if s in played else n
            if len(self.hands[s]) != want:
                why = " (it already played to this trick)" if s in played else ""
                held = len(self.hands[s])
                raise PositionError(
                    f"{s} holds {held} card{'' if held == 1 else 's'}; at trick {self.trick_number} it should hold {want}{why}"
                )
        self._check_reachable()

    def _check_reachable(self) -> None:
        """Raise :class:`PositionError` when legal play cannot reach this position: with
        ``first_lead: two_of_clubs`` another seat than the 2C's holder leads trick 1, or a card of
        the current trick was not a legal card for its seat (a renege, a spade led before spades
        are broken while the leader held another suit: RULES.md section 4)."""
        if self.trick_number == 1 and self.ruleset.first_lead == "two_of_clubs":
            holder = next((s for s in SEATS if TWO_OF_CLUBS in self.hands[s]), None)
            if self.trick and self.trick[0] == TWO_OF_CLUBS:
                holder = self.leader
            if holder is not None and holder != self.leader:
                raise PositionError(
                    f"with first_lead two_of_clubs the holder of the 2C ({holder}) leads trick 1, not {self.leader}"
                )
        suits = self.ruleset.suits
        for i, card in enumerate(self.trick):
            seat = Seat((int(self.leader) + i) & 3)
            held = (*self.hands[seat], card)
            legal = legal_cards(
                held, self.trick[:i], spades_broken=self.spades_broken, trick_number=self.trick_number, ruleset=self.ruleset
            )
            if card in legal:
                continue
            if i:
                led = suits[self.trick[0]]
                also = [c for c in self.hands[seat] if suits[c] == led]
                why = f"{seat} did not follow suit to {self.trick[0]} while holding {' '.join(also)}"
            elif self.trick_number == 1 and TWO_OF_CLUBS in held and self.ruleset.first_lead == "two_of_clubs":
                why = f"{seat} holds the 2C and must lead it to trick 1"
            else:
                why = f"{seat} led a spade before spades were broken while holding {' '.join(legal)}"
            raise PositionError(f"{card} in the current trick is not a legal card there: {why}")


def _shown(value: Any) -> str:
    """A value as the position's JSON would spell it (null, true, ["N"], "X"), for messages."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def _cards(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            return parse_pbn_hand(value) if "." in value else tuple(parse_card(c) for c in value.replace(",", " ").split())
        except CardError as exc:
            raise PositionError(f"{what}: {exc}") from None
    if not isinstance(value, (list, tuple)):
        raise PositionError(f"{what} must be a list of cards, not {_shown(value)}")
    try:
        return tuple(parse_card(c) for c in value)
    except CardError as exc:
        raise PositionError(f"{what}: {exc}") from None


def _seat(value: Any, what: str) -> Seat:
    try:
        return Seat.parse(value)
    except (ValueError, TypeError, AttributeError):
        raise PositionError(f"{what} {_shown(value)} is not a seat (N, E, S, W)") from None


def _ruleset(value: Any) -> Ruleset:
    try:
        return get_ruleset(value)
    except RulesError as exc:
        raise PositionError(str(exc)) from None


def _default_trick_number(hands: Sequence[Sequence[str]]) -> int:
    return 14 - max((len(h) for h in hands), default=0)


def make_position(
    hands: Sequence[Sequence[str]] | Mapping[Any, Sequence[str]],
    leader: Any,
    trick: Sequence[str] = (),
    trick_number: int | None = None,
    spades_broken: bool = False,
    rules: Any = None,
) -> Position:
    """Build and check a :class:`Position` (cards in any form :func:`parse_card` reads; hands as
    a list N E S W or a mapping seat -> cards; ``trick_number`` defaults to the one the hand
    lengths give).  Raises :class:`PositionError`."""
    if isinstance(hands, Mapping):
        got: dict[Seat, tuple[str, ...]] = {}
        for k, v in hands.items():
            got[_seat(k, "deal seat")] = _cards(v, f"{_seat(k, 'deal seat')}'s hand")
        missing = [str(s) for s in SEATS if s not in got]
        if missing:
            raise PositionError(f"the deal has no hand for {', '.join(missing)}")
        hs = tuple(got[s] for s in SEATS)
    else:
        if len(hands) != 4:
            raise PositionError(f"a deal has 4 hands (N E S W), not {len(hands)}")
        hs = tuple(_cards(h, f"{s}'s hand") for s, h in zip(SEATS, hands))
    tr = _cards(list(trick), "trick") if not isinstance(trick, str) else _cards(trick, "trick")
    lead = _seat(leader, "leader")
    if trick_number is None:
        n = max(len(h) for h in hs)
        if n > 13:  # no trick number fits: name the hand, not a trick number the user never gave
            s = next(s for s in SEATS if len(hs[s]) == n)
            raise PositionError(f"{s} holds {n} cards; a seat holds at most 13 (RULES.md 1)")
        # seats that already played hold one card fewer; without them every seat holds n
        trick_number = 14 - n if not tr or any(len(hs[(int(lead) + len(tr) + i) & 3]) == n for i in range(4 - len(tr))) else 13 - n
    if isinstance(trick_number, bool) or not isinstance(trick_number, int):
        raise PositionError(f"trick_number {_shown(trick_number)} is not a whole number 1..13")
    if not isinstance(spades_broken, bool):
        raise PositionError(f"spades_broken {_shown(spades_broken)} is not true or false")
    pos = Position(hs, lead, tr, trick_number, spades_broken, _ruleset(rules))  # type: ignore[arg-type]
    pos.check()
    return pos


POSITION_KEYS = ("deal", "leader", "trick", "trick_number", "spades_broken", "rules", "nil_seat")


def position_from_json(obj: Any) -> tuple[Position, Seat | None]:
    """Read one ``solve`` input line (already decoded): ``{"deal": {"N": [...], ...}, "leader":
    "W", "trick": [...], "trick_number": 1..13, "spades_broken": false, "rules": "standard",
    "nil_seat": "N"}`` (``trick``, ``trick_number``, ``spades_broken``, ``rules`` and
    ``nil_seat`` optional).  Returns the position and the nil seat (or ``None``).
    Raises :class:`PositionError` naming the problem."""
    if not isinstance(obj, Mapping):
        raise PositionError("a position is a JSON object")
    unknown = [k for k in obj if k not in POSITION_KEYS]
    if unknown:
        raise PositionError(f"unknown key {unknown[0]!r} (known: {', '.join(POSITION_KEYS)})")
    for key in ("deal", "leader"):
        if key not in obj:
            raise PositionError(f"no {key!r}")
    deal = obj["deal"]
    if isinstance(deal, str):
        try:
            parsed = parse_pbn_deal(deal)
        except ValueError as exc:
            raise PositionError(str(exc)) from None
        deal = {s: (h or ()) for s, h in parsed.items()}
    if not isinstance(deal, (Mapping, list, tuple)):
        raise PositionError("'deal' must map seats to cards")
    nil = obj.get("nil_seat")
    pos = make_position(
        deal,
        obj["leader"],
        obj.get("trick") or (),
        obj.get("trick_number"),
        obj.get("spades_broken", False),
        obj.get("rules"),
    )
    return pos, None if nil is None else _seat(nil, "nil_seat")


def position_from_pbn(
    deal: str,
    leader: Any,
    trick: Sequence[str] | str = (),
    trick_number: int | None = None,
    spades_broken: bool = False,
    rules: Any = None,
) -> Position:
    """A position from a PBN deal ``"N:AKQ.JT3.984.A52 ..."`` (suits S.H.D.C, a fifth group of
    jokers ``BL``); the other fields as :func:`make_position`.  Raises :class:`PositionError`."""
    try:
        parsed = parse_pbn_deal(deal)
    except ValueError as exc:
        raise PositionError(str(exc)) from None
    hands = [parsed[s] or () for s in SEATS]
    return make_position(hands, leader, trick, trick_number, spades_broken, rules)


def format_hands(pos: Position) -> str:
    """The hands as a PBN deal from N (for messages and docs)."""
    from spadework.parsers.cards import format_pbn_deal

    return format_pbn_deal({s: sort_cards(pos.hands[s]) for s in SEATS})


__all__ = [
    "Layout",
    "POSITION_KEYS",
    "Position",
    "PositionError",
    "format_hands",
    "make_position",
    "position_from_json",
    "position_from_pbn",
    "solver_layout",
]
