"""Seats and sides: the one place that knows the table's geometry.

Four seats sit clockwise N -> E -> S -> W; partners sit opposite, so N and S form
side ``NS`` and E and W form side ``EW`` (RULES.md section 1).  Every other module
asks this one for "left of", "partner of" or "side of"; nobody else does seat
arithmetic.
"""

from __future__ import annotations

from enum import IntEnum


class Seat(IntEnum):
    """A seat at the table.  The integer value is the clockwise position from North."""

    N = 0
    E = 1
    S = 2
    W = 3

    def __str__(self) -> str:  # "N", not "Seat.N"
        return _LETTERS[self]  # not self.name: enum's property costs a descriptor call on a hot path

    @property
    def left(self) -> "Seat":
        """The next seat clockwise (the seat that plays after this one). Left of N is E."""
        return _SEATS[(self + 1) % 4]

    @property
    def right(self) -> "Seat":
        """The previous seat clockwise. Right of N is W."""
        return _SEATS[(self + 3) % 4]

    @property
    def partner(self) -> "Seat":
        """The seat opposite."""
        return _SEATS[(self + 2) % 4]

    @property
    def side(self) -> "Side":
        """The partnership this seat belongs to."""
        return _SIDES[self % 2]

    def clockwise(self) -> tuple["Seat", "Seat", "Seat", "Seat"]:
        """The four seats in play order starting with this one."""
        return _CLOCKWISE[self]

    def after(self, steps: int) -> "Seat":
        """The seat ``steps`` places clockwise from this one (negative goes anticlockwise)."""
        return _SEATS[(self + steps) % 4]

    def steps_to(self, other: "Seat") -> int:
        """How many places clockwise ``other`` sits from this seat (0..3)."""
        return (other - self) % 4

    @classmethod
    def parse(cls, text: object) -> "Seat":
        """Read a seat from ``N E S W`` (any case, or the full word "north").

        Raises ``ValueError``: ``'X' is not a seat (expected N, E, S or W)``; callers put the
        field in front (``dealer 'X' is not a seat ...``).
        """
        if type(text) is str:  # the hot path: a canonical letter
            seat = _BY_LETTER.get(text)
            if seat is not None:
                return seat
        if isinstance(text, Seat):
            return text
        if isinstance(text, str):
            key = text.strip().upper()
            seat = _BY_NAME.get(key)
            if seat is not None:
                return seat
        raise ValueError(f"{text!r} is not a seat (expected N, E, S or W)")


class Side(IntEnum):
    """A partnership: NS (North and South) or EW (East and West)."""

    NS = 0
    EW = 1

    def __str__(self) -> str:
        return _SIDE_NAMES[self]

    @property
    def seats(self) -> tuple[Seat, Seat]:
        """The two partners, the first one being N or E."""
        return (_SEATS[self], _SEATS[self + 2])

    @property
    def other(self) -> "Side":
        """The opposing side."""
        return _SIDES[1 - self]

    @classmethod
    def parse(cls, text: object) -> "Side":
        """Read ``NS``/``EW`` (any case; ``SN``/``WE`` too).  Raises ``ValueError``."""
        if type(text) is str:
            side = _SIDE_BY_NAME.get(text)
            if side is not None:
                return side
        if isinstance(text, Side):
            return text
        if isinstance(text, str):
            key = text.strip().upper()
            if key in ("NS", "SN"):
                return Side.NS
            if key in ("EW", "WE"):
                return Side.EW
        raise ValueError(f"{text!r} is not a side (expected NS or EW)")


_SEATS = (Seat.N, Seat.E, Seat.S, Seat.W)
_LETTERS = tuple(s.name for s in _SEATS)  # str() of a seat, by value (derived, never spelled twice)
_SIDES = (Side.NS, Side.EW)
_SIDE_NAMES = tuple(s.name for s in _SIDES)
_CLOCKWISE = {s: tuple(_SEATS[(s + i) % 4] for i in range(4)) for s in _SEATS}
_BY_LETTER = {s.name: s for s in _SEATS}
_SIDE_BY_NAME = {s.name: s for s in _SIDES}
_BY_NAME = {s.name: s for s in _SEATS} | {
    "NORTH": Seat.N,
    "EAST": Seat.E,
    "SOUTH": Seat.S,
    "WEST": Seat.W,
}

SEATS: tuple[Seat, Seat, Seat, Seat] = _SEATS  # type: ignore[assignment]
"""All seats in clockwise order from North."""
SIDES: tuple[Side, Side] = _SIDES  # type: ignore[assignment]
"""Both sides, NS first."""
