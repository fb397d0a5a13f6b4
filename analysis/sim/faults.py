"""Injected faults: what the simulator plants in a season and the findings each one must give.

A planted fault is listed in the *sidecar* as one :class:`InjectedFault` row per
finding the checker must report for it (RULES.md section 7), with the place
(game, hand, trick, seat, card, side, field), the fault's ``kind`` (what went wrong,
e.g. ``bag_penalty_missed``), a ``detail`` sentence and the ``fault`` number that
groups the rows of one planted fault.  ``formats`` says in which written formats
the finding is expected: the score sheet (``csv``) has no deal and no play, so
play faults cannot be seen there, and an abandoned hand shows there as tricks taken
that do not add up to 13.

The sidecar is JSON Lines (:func:`dump_faults` / :func:`load_faults`), one row per
expected finding: ``{"fault": 3, "kind": "renege", "code": "RENEGE", "game_id": ...,
"hand": 4, "trick": 6, "seat": "E", "card": "7S", "side": "EW", "field": null,
"detail": "..."}``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson

from spadework.parsers.seats import Seat, Side

ALL_FORMATS: tuple[str, ...] = ("jsonl", "spn", "csv")
PLAY_FORMATS: tuple[str, ...] = ("jsonl", "spn")
"""Formats that carry the deal and the card play."""
CSV_ONLY: tuple[str, ...] = ("csv",)

# --- the kinds of fault, and the code each is found under ------------------------------------------

PLAY_KINDS: dict[str, str] = {
    "renege": "RENEGE",
    "card_not_held": "CARD_NOT_HELD",
    "spade_led_first_trick": "SPADE_LED_FIRST_TRICK",
    "spade_led_before_broken": "SPADE_LED_BEFORE_BROKEN",
    "lead_out_of_turn": "LEAD_OUT_OF_TURN",
    "lead_not_two_of_clubs": "LEAD_NOT_TWO_OF_CLUBS",
}
"""Illegal cards planted during the play; the hand goes on under the replay's rules."""

BID_KINDS: dict[str, str] = {
    "dealer_out_of_rotation": "DEALER_OUT_OF_ROTATION",
    "bid_out_of_turn": "BID_OUT_OF_TURN",
    "bid_twice": "BID_OUT_OF_TURN",
    "bid_invalid": "BID_INVALID",
    "bid_missing": "BID_MISSING",
    "blind_bid_not_allowed": "BLIND_BID_NOT_ALLOWED",
}
"""Faults of the deal rotation and the bidding, planted before the play."""

RECORD_KINDS: dict[str, str] = {
    "trick_winner_mismatch": "TRICK_WINNER_MISMATCH",
    "tricks_taken_mismatch": "TRICKS_TAKEN_MISMATCH",
    "deal_invalid": "DEAL_INVALID",
    "hand_incomplete": "HAND_INCOMPLETE",
}
"""Faults of the written record of a hand played correctly."""

SCORE_KINDS: dict[str, str] = {
    "bag_penalty_missed": "SCORE_MISMATCH",
    "penalty_once_crossed_twice": "SCORE_MISMATCH",
    "bags_last_digit_negative": "SCORE_MISMATCH",
    "nil_bonus_wrong_side": "SCORE_MISMATCH",
}
"""Recorded-score errors of the kinds real scoring apps make; planted on a hand where
the situation arises (a bag penalty, a double crossing, a negative total with bags, a
nil), later hands continue from the wrong value as the app would.  A wrong value is
expected as a finding only where the rules give it from neither the true score nor the
app's own (RULES.md section 5, "Checking recorded scores")."""

END_KINDS: dict[str, str] = {
    "game_result_mismatch": "GAME_RESULT_MISMATCH",
    "played_after_game_end": "PLAYED_AFTER_GAME_END",
}
"""Faults of the end of a game."""

GAP_KINDS: dict[str, str] = {
    "hand_missing": "HAND_MISSING",
    "trick_card_missing": "HAND_INCOMPLETE",
}
"""Gaps in the record (RULES.md section 7, "Gaps in the record"): a hand left out of the log
(found on the next hand, whose score is then not checked), and a trick's last card left out of
a hand that goes on (the seat's one unplayed card is taken from the deal).  Planted only when
asked for (``kinds``), so a seed still gives the season it gave before they existed."""

KINDS: dict[str, str] = {**PLAY_KINDS, **BID_KINDS, **RECORD_KINDS, **SCORE_KINDS, **END_KINDS, **GAP_KINDS}
"""Every kind of fault the simulator plants -> the code it is found under."""


@dataclass(frozen=True, slots=True)
class InjectedFault:
    """One finding the checker must report for a planted fault (one row of the sidecar).

    ``code``, ``game_id``, ``hand``, ``trick`` (1..13 or ``None``), ``seat``, ``card``,
    ``side``, ``field`` are the place as :class:`spadework.analysis.engine.findings.Finding` gives it;
    ``kind`` is what was planted (a key of :data:`KINDS`), ``detail`` says it in words,
    ``fault`` numbers the planted faults of a season (rows of one fault share it) and
    ``formats`` lists the written formats in which the finding is expected.
    """

    code: str
    game_id: str
    hand: int
    trick: int | None = None
    seat: Seat | None = None
    card: str | None = None
    side: Side | None = None
    field: str | None = None
    kind: str = ""
    detail: str = ""
    fault: int = 0
    formats: tuple[str, ...] = ALL_FORMATS

    @property
    def place(self) -> tuple:
        """``(code, hand, trick, seat, card)`` like :attr:`spadework.analysis.engine.findings.Finding.place`."""
        return (self.code, self.hand, self.trick, self.seat, self.card)

    @property
    def key(self) -> tuple:
        """``(code, game_id, hand, trick, seat, card, side, field)``: what a test compares."""
        return (self.code, self.game_id, self.hand, self.trick, self.seat, self.card, self.side, self.field)

    def to_json(self) -> dict[str, Any]:
        """The sidecar row (seats and sides as text)."""
        return {
            "fault": self.fault,
            "kind": self.kind,
            "code": self.code,
            "game_id": self.game_id,
            "hand": self.hand,
            "trick": self.trick,
            "seat": None if self.seat is None else str(self.seat),
            "card": self.card,
            "side": None if self.side is None else str(self.side),
            "field": self.field,
            "detail": self.detail,
            "formats": list(self.formats),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "InjectedFault":
        """Read a sidecar row back.  Raises ``KeyError``/``ValueError`` for a malformed row."""
        return cls(
            code=obj["code"],
            game_id=obj["game_id"],
            hand=int(obj["hand"]),
            trick=obj.get("trick"),
            seat=None if obj.get("seat") is None else Seat.parse(obj["seat"]),
            card=obj.get("card"),
            side=None if obj.get("side") is None else Side.parse(obj["side"]),
            field=obj.get("field"),
            kind=obj.get("kind", ""),
            detail=obj.get("detail", ""),
            fault=int(obj.get("fault", 0)),
            formats=tuple(obj.get("formats", ALL_FORMATS)),
        )


def finding_key(f: Any) -> tuple:
    """The comparison key of a checker finding (``spadework.analysis.engine.findings.Finding``), like :attr:`InjectedFault.key`."""
    return (f.code, f.game_id, f.hand, f.trick, f.seat, f.card, f.side, f.field)


def for_format(faults: Iterable[InjectedFault], fmt: str) -> list[InjectedFault]:
    """The rows expected when the season is written as ``fmt`` (``jsonl``, ``spn``, ``csv``)."""
    if fmt not in ALL_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; the simulator writes {', '.join(ALL_FORMATS)}")
    return [f for f in faults if fmt in f.formats]


def dump_faults(faults: Iterable[InjectedFault], fp: IO[str]) -> int:
    """Write sidecar rows as JSON Lines; returns how many were written."""
    n = 0
    for f in faults:
        fp.write(orjson.dumps(f.to_json()).decode() + "\n")
        n += 1
    return n


def load_faults(path: str | os.PathLike[str]) -> list[InjectedFault]:
    """Read a sidecar file written by :func:`dump_faults`."""
    return list(iter_faults(path))


def iter_faults(path: str | os.PathLike[str]) -> Iterator[InjectedFault]:
    """Stream the rows of a sidecar file (blank lines skipped)."""
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                yield InjectedFault.from_json(orjson.loads(line))


SIDECAR_SUFFIX = ".faults.jsonl"


def sidecar_path(path: str | os.PathLike[str]) -> str:
    """Where the sidecar of a season file goes: the log's name (``.gz`` dropped) plus
    ``.faults.jsonl``, e.g. ``season.csv`` -> ``season.csv.faults.jsonl``, so that the
    sidecars of one season written in several formats (which differ) never collide."""
    p = os.fspath(path)
    base = p[:-3] if p.endswith(".gz") else p
    return base + SIDECAR_SUFFIX


__all__ = [
    "ALL_FORMATS",
    "BID_KINDS",
    "END_KINDS",
    "GAP_KINDS",
    "InjectedFault",
    "KINDS",
    "PLAY_FORMATS",
    "PLAY_KINDS",
    "RECORD_KINDS",
    "SCORE_KINDS",
    "SIDECAR_SUFFIX",
    "dump_faults",
    "finding_key",
    "for_format",
    "iter_faults",
    "load_faults",
    "sidecar_path",
]
