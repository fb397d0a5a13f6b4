"""Solve a position: tricks each side takes with best play, every legal card's value, nil safety.

:class:`Solver` owns the search tables (a transposition table of 2**22 positions, ~200 MB);
keep one per process and call :meth:`Solver.solve` for each position: table entries are keyed
on relative ranks, so they stay valid across positions and deals and later solves of the same
hand are much faster (:meth:`Solver.forget` empties the table cheaply between deals).  :func:`solve` uses a shared one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from spadework.analysis.solver import kernel
from spadework.analysis.solver.position import Position, solver_layout
from spadework.parsers.encoding import CARD_ID
from spadework.parsers.seats import Seat


@dataclass(frozen=True)
class Solution:
    """What the solver says about a position.

    ``ns``/``ew``: tricks each side takes from the position with best play by all four, the
    current trick included (``ns + ew`` = tricks left); ``to_play``: the seat to play;
    ``cards``: every legal card of ``to_play`` -> tricks ``to_play``'s side then takes (same
    count: current trick included), in the order of the reference ``legal_cards``; empty when
    cards were not asked for; ``nil_seat``/``nil_safe``: the nil question when asked
    (``True`` = its side can keep that seat from winning any trick whatever the opponents do);
    ``ms``: wall time of the solve; ``nodes``: positions searched.
    """

    ns: int
    ew: int
    to_play: Seat
    cards: dict[str, int]
    nil_seat: Seat | None = None
    nil_safe: bool | None = None
    ms: float = 0.0
    nodes: int = 0

    @property
    def mover_tricks(self) -> int:
        """Tricks the side to play takes with best play."""
        return self.ew if self.to_play & 1 else self.ns

    @property
    def best_cards(self) -> list[str]:
        """The legal cards that keep :attr:`mover_tricks` (empty when cards were not asked for)."""
        best = self.mover_tricks
        return [c for c, v in self.cards.items() if v == best]

    def to_json(self) -> dict:
        """The ``solve --json`` line: ``{"tricks": {"NS", "EW"}, "cards": {...}, "nil_safe"?, "ms"}``."""
        out: dict = {"tricks": {"NS": self.ns, "EW": self.ew}, "cards": dict(self.cards)}
        if self.nil_seat is not None:
            out["nil_safe"] = self.nil_safe
        out["ms"] = round(self.ms, 3)
        return out


class Solver:
    """The search tables and the entry points of the double-dummy solver (one per process or thread).

    ``tt_bits``: the transposition table holds ``2**tt_bits`` positions (48 bytes each: 22, the
    default, about 200 MB).
    """

    def __init__(self, tt_bits: int = kernel.TT_BITS_DEFAULT) -> None:
        self.tt_bits = tt_bits
        self._tables = kernel.new_tables(tt_bits)
        # the nil search keeps its own table of exact (relative-rank) keys
        self._nil_tables = (np.zeros((1 << 18, 3), dtype=np.int64), np.zeros((1 << 18, 4), dtype=np.int8))
        self._out_cards = np.zeros(kernel.MAX_MOVES, dtype=np.int64)
        self._out_vals = np.zeros(kernel.MAX_MOVES, dtype=np.int64)

    def clear(self) -> None:
        """Forget every stored position (only memory and timing change: entries never go stale)."""
        for t in (*self._tables, *self._nil_tables):
            t[...] = 0

    def forget(self) -> None:
        """Empty the trick search's table, cheaply (one of its six rows: a zero length word
        marks a free slot).  Entries never go stale, but another deal's mostly fill buckets
        with positions this one never meets, and every scan reads them: :func:`judge_hand`
        starts each hand with an empty table (100 sample hands: 23.4 -> 19.2 s CPU)."""
        self._tables[0][kernel.PT_LEN] = 0

    def _state(self, pos: Position):
        lay = solver_layout(pos.ruleset.deck)
        bit = lay.bit
        h = np.zeros(4, dtype=np.int64)
        for s in range(4):
            m = 0
            for c in pos.hands[s]:
                m |= 1 << int(bit[CARD_ID[c]])
            h[s] = m
        leader = int(pos.leader)
        k = len(pos.trick)
        led = wseat = wsuit = wrank = 0
        tmask = 0
        broken = bool(pos.spades_broken)
        for i, c in enumerate(pos.trick):
            b = int(bit[CARD_ID[c]])
            s, r = b >> 4, b & 15
            seat = (leader + i) & 3
            if i == 0:
                led, wseat, wsuit, wrank = s, seat, s, r
            elif (s == wsuit and r > wrank) or (s == 0 and wsuit != 0):
                wseat, wsuit, wrank = seat, s, r
            if s == 0:
                broken = True
            tmask |= 1 << b
        rs = pos.ruleset
        flags = np.array(
            [
                1 if rs.spades_lead_any_time else 0,
                int(bit[CARD_ID["2C"]]) if rs.first_lead == "two_of_clubs" and "2C" in rs.deck else -1,
            ],
            dtype=np.int64,
        )
        first = pos.trick_number == 1
        tl = len(pos.hands[pos.to_play])  # = pos.tricks_left in a checked position
        return lay, h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, flags

    def solve(
        self, pos: Position, *, cards: bool = True, nil_seat: Seat | None = None, check: bool = True
    ) -> Solution:
        """Solve ``pos`` (checked with :meth:`Position.check` first; raises
        :class:`~spadework.analysis.solver.position.PositionError`).

        ``cards``: also value every legal card of the seat to play; ``nil_seat``: also answer
        whether that seat's side can keep it at zero tricks from here (a separate search);
        ``check=False`` skips the hand-length check (tests use it for short hands at trick 1).
        Raises ``TypeError`` when ``pos`` is not a :class:`Position` (build one with
        ``position_from_json`` or ``position_from_pbn``).
        """
        if not isinstance(pos, Position):
            raise TypeError(
                f"solve takes a Position, not {type(pos).__name__} {pos!r:.40}: build one with "
                "position_from_json(obj) or position_from_pbn(deal, leader, ...)"
            )
        if check:
            pos.check()
        if nil_seat is not None:
            nil_seat = Seat.parse(nil_seat)
        t0 = time.perf_counter()
        lay, h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, flags = self._state(pos)
        tt_keys, tt_vals, hist, mv, sc, stats = self._tables
        stats[:kernel.CLOCK] = 0
        ns, n = kernel.solve_position(
            h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, cards, flags,
            tt_keys, tt_vals, hist, mv, sc, stats, self._out_cards, self._out_vals,
        )
        to_play = pos.to_play
        mover_ew = int(to_play) & 1
        values: dict[str, int] = {}
        if cards:
            rep_val = {int(self._out_cards[i]): int(self._out_vals[i]) for i in range(n)}
            live = int(h[0] | h[1] | h[2] | h[3] | tmask)
            legal = pos.legal_cards()
            mine = 0
            for c in legal:
                mine |= 1 << int(lay.bit[CARD_ID[c]])
            for c in legal:
                b = int(lay.bit[CARD_ID[c]])
                top = _group_top(b, live, mine)
                v = rep_val[top]
                values[c] = tl - v if mover_ew else v
        nodes = int(stats[0])
        safe = None
        if nil_seat is not None:
            stats[:kernel.CLOCK] = 0
            safe = bool(
                kernel.nil_safe(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, int(nil_seat), flags,
                                *self._nil_tables, mv, sc, stats)
            )
            nodes += int(stats[0])
        ms = (time.perf_counter() - t0) * 1000.0
        return Solution(int(ns), tl - int(ns), to_play, values, nil_seat, safe, ms, nodes)


def _group_top(b: int, live: int, mine: int) -> int:
    """The highest card of ``mine`` in ``b``'s run of equivalent cards (no other live card between)."""
    s = b >> 4
    top = b
    x = b + 1
    while x < 16 * (s + 1):
        if live >> x & 1:
            if mine >> x & 1:
                top = x
            else:
                break
        x += 1
    return top


_SHARED: Solver | None = None


def shared_solver() -> Solver:
    """The process's shared :class:`Solver` (built on first use)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = Solver()
    return _SHARED


def solve(pos: Position, *, cards: bool = True, nil_seat: Seat | None = None) -> Solution:
    """Solve ``pos`` with the shared solver (see :meth:`Solver.solve`)."""
    return shared_solver().solve(pos, cards=cards, nil_seat=nil_seat)


__all__ = ["Solution", "Solver", "shared_solver", "solve"]
