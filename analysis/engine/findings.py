"""Findings: what the checker reports, one per rule broken (RULES.md section 7).

A :class:`Finding` is one row of the ``violations`` table (TABLES.md): a code,
where it happened (game, hand, trick, seat, card, side), one sentence a
tournament director acts on, and for score findings the field with its
recorded and expected values.

The :class:`ErrorPolicy` lets a caller choose between stopping at the first
finding (``"raise"``: a :class:`CheckError` carrying the finding) and
collecting them all (``"collect"``, the default).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from spadework.parsers.seats import Seat, Side

# --- the codes of RULES.md section 7 (exact spellings) ------------------------------------------
DEAL_INVALID = "DEAL_INVALID"
DEALER_OUT_OF_ROTATION = "DEALER_OUT_OF_ROTATION"
BID_OUT_OF_TURN = "BID_OUT_OF_TURN"
BID_MISSING = "BID_MISSING"
BID_INVALID = "BID_INVALID"
BLIND_BID_NOT_ALLOWED = "BLIND_BID_NOT_ALLOWED"
LEAD_OUT_OF_TURN = "LEAD_OUT_OF_TURN"
CARD_NOT_HELD = "CARD_NOT_HELD"
SPADE_LED_FIRST_TRICK = "SPADE_LED_FIRST_TRICK"
SPADE_LED_BEFORE_BROKEN = "SPADE_LED_BEFORE_BROKEN"
RENEGE = "RENEGE"
HAND_INCOMPLETE = "HAND_INCOMPLETE"
HAND_MISSING = "HAND_MISSING"
TRICK_WINNER_MISMATCH = "TRICK_WINNER_MISMATCH"
TRICKS_TAKEN_MISMATCH = "TRICKS_TAKEN_MISMATCH"
SCORE_MISMATCH = "SCORE_MISMATCH"
GAME_RESULT_MISMATCH = "GAME_RESULT_MISMATCH"
PLAYED_AFTER_GAME_END = "PLAYED_AFTER_GAME_END"

RULES_CODES: tuple[str, ...] = (
    DEAL_INVALID,
    DEALER_OUT_OF_ROTATION,
    BID_OUT_OF_TURN,
    BID_MISSING,
    BID_INVALID,
    BLIND_BID_NOT_ALLOWED,
    LEAD_OUT_OF_TURN,
    CARD_NOT_HELD,
    SPADE_LED_FIRST_TRICK,
    SPADE_LED_BEFORE_BROKEN,
    RENEGE,
    HAND_INCOMPLETE,
    HAND_MISSING,
    TRICK_WINNER_MISMATCH,
    TRICKS_TAKEN_MISMATCH,
    SCORE_MISMATCH,
    GAME_RESULT_MISMATCH,
    PLAYED_AFTER_GAME_END,
)
"""The codes of RULES.md section 7, in its order."""

# --- codes of our own, for cases RULES.md does not name (docs/RULES_NOTES.md) ----------------------
LEAD_NOT_TWO_OF_CLUBS = "LEAD_NOT_TWO_OF_CLUBS"
"""Option ``first_lead: two_of_clubs``: the 2C holder led trick 1 with another card."""
RULES_MIXED = "RULES_MIXED"
"""A hand of a game names other rules than the game's first hand; the game is checked under the first."""
RULES_INVALID = "RULES_INVALID"
"""A log's ``rules`` value cannot be read (unknown preset or option); the game is checked under ``standard``."""

EXTRA_CODES: tuple[str, ...] = (LEAD_NOT_TWO_OF_CLUBS, RULES_MIXED, RULES_INVALID)
ALL_CODES: tuple[str, ...] = RULES_CODES + EXTRA_CODES


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One rule broken, at one place.

    ``code`` is one of :data:`ALL_CODES`; ``message`` one sentence starting with
    the place (``"hand 4, trick 6: E reneged, ..."``).  ``hand`` counts from 1,
    ``trick`` is 1..13; ``seat``/``side`` are :class:`Seat`/:class:`Side`.
    Score findings set ``side``, ``field`` (``points``, ``total``, ``bags``,
    ``score_before``, ``bags_before``, ``winner``) and the ``recorded`` and
    ``expected`` values.  ``player``: the name of the player at ``seat`` where the
    log names one; the message then names them too (``"E (ed) reneged, ..."``,
    see :meth:`named`).
    """

    code: str
    game_id: str
    hand: int | None = None
    trick: int | None = None
    seat: Seat | None = None
    card: str | None = None
    side: Side | None = None
    message: str
    field: str | None = None
    recorded: Any = None
    expected: Any = None
    player: str | None = None

    def __str__(self) -> str:
        return self.message

    def named(self, players: Sequence[str | None] | None) -> "Finding":
        """This finding with the player at its seat (``players`` in seat order N E S W, as
        :attr:`HandRecord.players`): ``player`` set and the seat's first mention in the message
        after the place written :func:`seat_ref` style (``E (ed)``).  The finding itself when it
        has no seat, the log names no one there, or it is named already."""
        if self.seat is None or self.player is not None or not players:
            return self
        name = players[int(self.seat)]
        if not name:
            return self
        return replace(self, player=name, message=name_seat(self.message, self.seat, name))

    @property
    def place(self) -> tuple:
        """``(code, hand, trick, seat, card)``: what tests compare to say "found at its exact place"."""
        return (self.code, self.hand, self.trick, self.seat, self.card)

    def to_row(self) -> dict[str, Any]:
        """The ``violations`` row (TABLES.md): seats and sides as text, values as text."""
        return {
            "game_id": self.game_id,
            "hand": self.hand,
            "trick": self.trick,
            "seat": None if self.seat is None else str(self.seat),
            "card": self.card,
            "side": None if self.side is None else str(self.side),
            "code": self.code,
            "message": self.message,
            "field": self.field,
            "recorded": None if self.recorded is None else str(self.recorded),
            "expected": None if self.expected is None else str(self.expected),
            "player": self.player,
        }

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the CLI's ``--json``): only the keys that are set, ``code`` first."""
        row = self.to_row()
        if self.recorded is not None:
            row["recorded"] = self.recorded
        if self.expected is not None:
            row["expected"] = self.expected
        return {"code": row.pop("code"), **{k: v for k, v in row.items() if v is not None}}


class ErrorPolicy(str, Enum):
    """What to do with a finding: ``RAISE`` stops at the first one, ``COLLECT`` keeps them all."""

    RAISE = "raise"
    COLLECT = "collect"

    @classmethod
    def parse(cls, value: "ErrorPolicy | str") -> "ErrorPolicy":
        """``"raise"``/``"collect"`` (or the member).  Raises ``ValueError`` naming both."""
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"error policy {value!r} is not 'raise' or 'collect'") from None


class CheckError(Exception):
    """Raised under ``ErrorPolicy.RAISE`` at the first finding; ``.finding`` holds it."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


class FindingList(list):
    """A list of findings that raises :class:`CheckError` on ``append`` under ``RAISE``.

    ``players``: the names at the seats of the record being checked (N E S W); every finding
    appended is :meth:`Finding.named` with them, so findings name the player as well as the seat
    whoever made them (the one place that does it)."""

    __slots__ = ("policy", "players")

    def __init__(self, policy: ErrorPolicy | str = ErrorPolicy.COLLECT,
                 players: Sequence[str | None] | None = None) -> None:  # fmt: skip
        super().__init__()
        self.policy = ErrorPolicy.parse(policy)
        self.players = players

    def append(self, finding: Finding) -> None:  # type: ignore[override]
        if self.players is not None:
            finding = finding.named(self.players)
        if self.policy is ErrorPolicy.RAISE:
            raise CheckError(finding)
        super().append(finding)

    def extend(self, findings) -> None:  # type: ignore[override]
        for f in findings:
            self.append(f)


_BIDI_OPEN = {"\u202a": "\u202c", "\u202b": "\u202c", "\u202d": "\u202c", "\u202e": "\u202c",
              "\u2066": "\u2069", "\u2067": "\u2069", "\u2068": "\u2069"}
"""Unicode's directional embeddings and overrides (closed by PDF, U+202C) and isolates (closed by PDI,
U+2069)."""


def close_bidi(text: str) -> str:
    """``text`` with every directional embedding, override or isolate it leaves open closed at its end.

    A player name holding an unclosed right-to-left override (U+202E) would otherwise turn round
    every character after it on the same line: the rest of a finding's message, the other cells of
    a report's row.  Text with nothing left open comes back unchanged (the characters it has are
    kept; only closers are added).
    """
    if not any(c in _BIDI_OPEN for c in text):
        return text
    open_: list[str] = []
    for c in text:
        if c in _BIDI_OPEN:
            open_.append(_BIDI_OPEN[c])
        elif c == "\u2069":  # PDI closes its isolate and whatever was opened inside it
            while open_:
                if open_.pop() == "\u2069":
                    break
        elif c == "\u202c" and open_ and open_[-1] == "\u202c":
            open_.pop()
        elif c in "\n\r\u2029":  # a new paragraph closes everything
            open_.clear()
    return text + "".join(reversed(open_))


def seat_ref(seat: Seat | str, player: str | None = None) -> str:
    """How a message names a seat: ``E (ed)`` where the log names the player, else ``E``
    (the name with its directional controls closed: :func:`close_bidi`)."""
    return f"{seat} ({close_bidi(player)})" if player else str(seat)


def name_seat(message: str, seat: Seat | str, player: str | None) -> str:
    """``message`` with the first mention of ``seat`` after its place prefix (``hand 4, trick 6: ``)
    written :func:`seat_ref` style: ``"hand 4, trick 6: E reneged, ..."`` -> ``"hand 4, trick 6: E (ed)
    reneged, ..."``.  A seat is a mention where it stands as a word (``E``, not the ``S`` of ``3S``
    or the ``E`` of ``EW``).  Unchanged when ``player`` is empty or the seat is not mentioned."""
    if not player:
        return message
    head, sep, rest = message.partition(": ")
    if not sep:
        head, rest = "", message
    named, n = re.subn(rf"(?<![\w(]){re.escape(str(seat))}(?![\w)])", lambda m: seat_ref(seat, player), rest, count=1)
    return f"{head}{sep}{named}" if n else message


def where(hand: int | None, trick: int | None = None) -> str:
    """The place prefix of a message: ``"hand 4, trick 6"``, ``"hand 4"`` or ``"trick 6"``."""
    parts = []
    if hand is not None:
        parts.append(f"hand {hand}")
    if trick is not None:
        parts.append(f"trick {trick}")
    return ", ".join(parts) if parts else "game"


__all__ = [
    "ALL_CODES",
    "BID_INVALID",
    "BID_MISSING",
    "BID_OUT_OF_TURN",
    "BLIND_BID_NOT_ALLOWED",
    "CARD_NOT_HELD",
    "CheckError",
    "DEALER_OUT_OF_ROTATION",
    "DEAL_INVALID",
    "EXTRA_CODES",
    "ErrorPolicy",
    "Finding",
    "FindingList",
    "GAME_RESULT_MISMATCH",
    "HAND_INCOMPLETE",
    "HAND_MISSING",
    "LEAD_NOT_TWO_OF_CLUBS",
    "LEAD_OUT_OF_TURN",
    "PLAYED_AFTER_GAME_END",
    "RENEGE",
    "RULES_CODES",
    "RULES_INVALID",
    "RULES_MIXED",
    "SCORE_MISMATCH",
    "SPADE_LED_BEFORE_BROKEN",
    "SPADE_LED_FIRST_TRICK",
    "TRICKS_TAKEN_MISMATCH",
    "TRICK_WINNER_MISMATCH",
    "close_bidi",
    "name_seat",
    "seat_ref",
    "where",
]
