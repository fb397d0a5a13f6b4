"""The ``solve`` command's library side: read positions (JSON Lines or a PBN deal), solve each,
and turn answers into the JSON or text the command prints.

Each input line is solved on its own; a bad line gives a :class:`SolveLine` with ``error`` set
(``"line 3: W holds 12 cards; at trick 1 it should hold 13"``) and the others are still solved.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from spadework.analysis.solver.position import Position, PositionError, position_from_json, position_from_pbn
from spadework.analysis.solver.solve import Solution, Solver, shared_solver
from spadework.parsers.cards import sort_cards
from spadework.parsers.seats import SEATS, Seat


@dataclass(frozen=True)
class SolveLine:
    """One input line answered: ``line`` (1-based), the ``position`` and ``solution``, or the
    ``error`` (a sentence naming the line and the reason)."""

    line: int
    position: Position | None = None
    solution: Solution | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The output line: the solution's JSON, or ``{"line": n, "error": "..."}``."""
        if self.error is not None:
            return {"line": self.line, "error": self.error}
        assert self.solution is not None
        return self.solution.to_json()


def solve_lines(lines: Iterable[str | bytes], solver: Solver | None = None, source: str | None = None) -> Iterator[SolveLine]:
    """Solve one JSON position per line (blank lines and a leading UTF-8 byte-order mark skipped; see
    :func:`~spadework.analysis.solver.position.position_from_json` for the keys).  An error names
    its line as ``SOURCE:N:`` when ``source`` (the file's name) is given, else as ``line N:``; input
    with no position at all (empty, or blank lines) is one error (line 0)."""
    from spadework.parsers.io import decode

    solver = solver or shared_solver()
    seen = False
    for n, raw in enumerate(lines, 1):
        where = f"{source}:{n}:" if source is not None else f"line {n}:"
        text = raw.strip()
        if n == 1:  # a UTF-8 byte-order mark, as some editors save text
            text = text[3:] if isinstance(text, bytes) and text.startswith(b"\xef\xbb\xbf") else text.lstrip("\ufeff") if isinstance(text, str) else text
        if not text:
            continue
        seen = True
        try:
            if isinstance(text, bytes):
                text = decode(text)  # "invalid UTF-8 at byte N", not orjson's own wording
            obj = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            yield SolveLine(n, error=f"{where} not JSON ({exc})")
            continue
        except ValueError as exc:
            yield SolveLine(n, error=f"{where} {exc}")
            continue
        try:
            pos, nil = position_from_json(obj)
            sol = solver.solve(pos, nil_seat=nil)
        except PositionError as exc:
            yield SolveLine(n, error=f"{where} {exc}")
            continue
        yield SolveLine(n, pos, sol)
    if not seen:
        yield SolveLine(0, error=f"{source or 'the input'} holds no positions (one JSON position a line)")


def solve_deal(
    deal: str,
    leader: str,
    trick: str | None = None,
    trick_number: int | None = None,
    spades_broken: bool = False,
    rules: Any = None,
    nil_seat: str | None = None,
    solver: Solver | None = None,
) -> SolveLine:
    """Solve one position typed by hand (``--deal "N:AKQ.JT3.984.A52 ..."``); ``trick`` is the
    cards already played to the current trick, space- or comma-separated."""
    try:
        cards = () if not trick else tuple(trick.replace(",", " ").split())
        pos = position_from_pbn(deal, leader, cards, trick_number, spades_broken, rules)
        nil = None if nil_seat is None else Seat.parse(nil_seat)
        sol = (solver or shared_solver()).solve(pos, nil_seat=nil)
    except (PositionError, ValueError) as exc:
        return SolveLine(1, error=f"--deal: {exc}")
    return SolveLine(1, pos, sol)


def format_text(item: SolveLine, numbered: bool = False) -> str:
    """A few readable lines for one answer (the command without ``--json``); ``numbered``: begin
    with the input line it answers (a POSITIONS file)."""
    if item.error is not None:
        return f"error: {item.error}"
    pos, sol = item.position, item.solution
    assert pos is not None and sol is not None
    hands = "  ".join(f"{s}: {' '.join(sort_cards(pos.hands[s])) or '-'}" for s in SEATS)
    where = f"line {item.line}: " if numbered else ""
    if pos.trick:
        head = f"{where}trick {pos.trick_number}, {pos.leader} led, played so far: {' '.join(pos.trick)}; {pos.to_play} to play"
    else:
        head = f"{where}trick {pos.trick_number}, {pos.leader} to lead"
    lines = [
        head,
        f"  {hands}",
        f"  best play: NS {sol.ns}, EW {sol.ew} tricks",
    ]
    if sol.cards:
        side = "EW" if int(pos.to_play) & 1 else "NS"
        vals = ", ".join(f"{c} {v}" for c, v in sorted(sol.cards.items(), key=lambda kv: -kv[1]))
        lines.append(f"  {pos.to_play}'s cards ({side} tricks): {vals}")
    if sol.nil_seat is not None:
        lines.append(f"  nil {sol.nil_seat}: {'safe' if sol.nil_safe else 'can be set'}")
    lines.append(f"  {sol.ms:.1f} ms")
    return "\n".join(lines)


def dumps(obj: dict[str, Any]) -> str:
    """One JSON line."""
    return orjson.dumps(obj).decode()


__all__ = ["SolveLine", "dumps", "format_text", "solve_deal", "solve_lines"]
