"""Exact double-dummy analysis of Spades play (issue 14; RULES.md sections 2 and 4).

Public API (documented for the coaching metrics built on it):

- :class:`Position`, :func:`make_position`, :func:`position_from_json`, :func:`position_from_pbn`,
  :class:`PositionError`: the question (four known hands, the current trick, leader, trick
  number, spades broken, ruleset).
- :class:`Solver` / :func:`solve` -> :class:`Solution`: tricks each side takes with best play
  (current trick included), every legal card's value for the side to play, and, given a nil
  seat, whether its side can keep it at zero tricks.
- :func:`judge_hand` (module :mod:`.judge`): every card of a played hand judged
  (``card_costs`` rows) and the deal's par (``dd_par``); :func:`analyse_db` fills those tables.

The search itself is :mod:`.kernel` (numba).  See docs/DOUBLE_DUMMY.md.
"""

from spadework.analysis.solver.position import (
    Position,
    PositionError,
    make_position,
    position_from_json,
    position_from_pbn,
    solver_layout,
)
from spadework.analysis.solver.solve import Solution, Solver, shared_solver, solve

__all__ = [
    "Position",
    "PositionError",
    "Solution",
    "Solver",
    "make_position",
    "position_from_json",
    "position_from_pbn",
    "shared_solver",
    "solve",
    "solver_layout",
]
