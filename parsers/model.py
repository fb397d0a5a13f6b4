"""The hand record: one played (or score-sheet) hand, as every parser yields it.

The fields follow the ``spades-hand/1`` keys of FORMATS.md section 1.  Records
are immutable; seat-indexed data are tuples in seat order ``N E S W`` and
side-indexed data tuples in side order ``NS EW`` so they can be indexed with a
:class:`~spadework.parsers.seats.Seat` or :class:`~spadework.parsers.seats.Side` directly.

Parsers yield :class:`HandRecord` for what they could read and
:class:`LoadError` for what they could not; the loader writes both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spadework.parsers.seats import SEATS, SIDES, Seat, Side

SCHEMA = "spades-hand/1"
"""The schema name and version of the canonical JSON form."""

Number = int | float


@dataclass(frozen=True, slots=True)
class Bid:
    """One bid as made.

    ``value`` is the number of tricks bid (0 for nil; a value outside what the
    ruleset allows, such as 14 or 4.5, is kept as recorded for the checker to
    report).  ``nil`` marks a nil bid, ``blind`` a blind one (blind nil is
    ``nil=True, blind=True``; Barmore's blind seven is ``value=7, blind=True``).
    """

    seat: Seat
    value: Number
    nil: bool = False
    blind: bool = False

    @property
    def tricks(self) -> Number:
        """Tricks this bid contributes to the side's contract (a nil counts 0)."""
        return 0 if self.nil else self.value


@dataclass(frozen=True, slots=True)
class Trick:
    """One trick: its leader and the cards in play order, clockwise from the leader.

    ``winner`` is the winner the log recorded, if it recorded one (checked, never trusted).
    """

    leader: Seat
    cards: tuple[str, ...]
    winner: Seat | None = None

    def seats(self) -> tuple[Seat, ...]:
        """The seat of each card, in play order."""
        return self.leader.clockwise()[: len(self.cards)]


@dataclass(frozen=True, slots=True)
class SideScore:
    """A side's recorded result for a hand: points this hand, running total and bag count after it.

    Any field may be ``None`` (not recorded).
    """

    points: int | None = None
    total: int | None = None
    bags: int | None = None

    def is_empty(self) -> bool:
        return self.points is None and self.total is None and self.bags is None


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One hand of one game, as a log records it (FORMATS.md section 1).

    Seat-indexed tuples (``players``, ``deal``, ``taken``) are in order N E S W;
    side-indexed ones (``score``, ``score_before``, ``bags_before``) in order NS EW.
    ``rules`` is the ruleset as written: a preset name or a dict of options with
    ``preset``; it is interpreted by :mod:`spadework.analysis.engine.rules`, not here.
    ``extras`` holds the ``x_*`` extension keys, kept and never interpreted;
    ``warnings`` holds notes from importers (an option that could not be mapped...).
    ``source_file``/``source_line`` say where the record came from; ``source_text`` is the record as
    written there (a line, an SPN block, a CSV row; bytes or text; ``None`` where the format has no
    text of one record), kept for ``load_errors.raw`` when the loader rejects a record it could read
    (TABLES.md: "the text that could not be read"), and no part of the record's value (not compared).
    """

    game_id: str
    hand: int
    dealer: Seat
    players: tuple[str | None, str | None, str | None, str | None]
    bids: tuple[Bid, ...]
    rules: str | dict[str, Any] = "standard"
    event: str | None = None
    date: str | None = None
    table: str | None = None
    round: str | None = None
    deal: tuple[tuple[str, ...], ...] | None = None
    tricks: tuple[Trick, ...] | None = None
    taken: tuple[int | None, int | None, int | None, int | None] | None = None
    score: tuple[SideScore, SideScore] | None = None
    score_before: tuple[int, int] | None = None
    bags_before: tuple[int, int] | None = None
    winner: Side | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    source_file: str | None = None
    source_line: int | None = None
    source_text: bytes | str | None = field(default=None, compare=False, repr=False)

    def player(self, seat: Seat) -> str | None:
        """The name at ``seat``."""
        return self.players[seat]

    def bid_of(self, seat: Seat) -> Bid | None:
        """The first bid made by ``seat``, or ``None``."""
        for b in self.bids:
            if b.seat == seat:
                return b
        return None

    def played_cards(self) -> tuple[tuple[str, ...], ...]:
        """The cards each seat played, in seat order N E S W (each in play order)."""
        out: list[list[str]] = [[], [], [], []]
        for t in self.tricks or ():
            for seat, card in zip(t.seats(), t.cards):
                out[seat].append(card)
        return tuple(tuple(c) for c in out)

    def is_complete_play(self) -> bool:
        """True when 13 tricks of 4 cards are recorded."""
        return self.tricks is not None and len(self.tricks) == 13 and all(len(t.cards) == 4 for t in self.tricks)

    def effective_deal(self) -> tuple[tuple[str, ...], ...] | None:
        """The recorded deal, or, when none is recorded and the play is complete,
        what each seat played (FORMATS.md section 1: "the deal is what each seat played")."""
        if self.deal is not None:
            return self.deal
        if self.is_complete_play():
            return self.played_cards()
        return None

    @property
    def location(self) -> str:
        """``file:line`` of the record, for messages."""
        if self.source_file is None:
            return f"game {self.game_id} hand {self.hand}"
        return f"{self.source_file}:{self.source_line}"


@dataclass(frozen=True, slots=True)
class LoadError:
    """A record that could not be read: where it was, why, and its raw text (FORMATS.md section 5)."""

    source_file: str
    source_line: int
    message: str
    raw: str

    def __str__(self) -> str:
        return located(self.source_file, self.source_line, self.message)


def located(source_file: str, source_line: int, message: str) -> str:
    """``file:line: message``, without the ``line N:`` a parser's message may begin with (SPN's and the
    score sheet's name their line, which the prefix already gives)."""
    same = f"line {source_line}: "
    return f"{source_file}:{source_line}: {message[len(same):] if message.startswith(same) else message}"


class RecordError(ValueError):
    """Raised by parsers for a record that cannot be read; the message is the reason a person reads."""


__all__ = ["Bid", "HandRecord", "LoadError", "RecordError", "SCHEMA", "SEATS", "SIDES", "SideScore", "Trick", "located"]
