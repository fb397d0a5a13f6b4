"""The simulator's public API: realistic synthetic seasons with planted tendencies and faults (issue 5).

Tests, benchmarks, notebooks and the README need games whose truth is known: who
overbids, where the renege is, which recorded score is wrong.  This module plays them.

- :class:`Personality`, :class:`Player`, :func:`default_club`: who plays, and how
  (bid bias, nil and blind nil appetite, bag aversion, trumping partner, carelessness).
- :func:`simulate_season` / :func:`iter_season` / :func:`simulate_game`: whole games to
  the target under any preset (``standard``, ``barmore``, ``nyc``, ``openspiel``) or
  ruleset options, deterministic for a seed.
- :class:`InjectedFault`: one finding the checker must report for a planted fault (the
  sidecar row); :data:`KINDS` the kinds of fault; :func:`load_faults` reads a sidecar.
- :func:`write_season`: a season as JSON Lines, SPN or a score-sheet CSV, plus its sidecar.

The bots take legal cards from :mod:`spadework.analysis.engine.replay`, trick winners from the replay and
scores from :mod:`spadework.analysis.engine.scoring`: no rule is written twice.  See
:mod:`spadework.analysis.sim.bots` (how the bots bid and play), :mod:`spadework.analysis.sim.faults` (the
kinds of fault and the sidecar) and :mod:`spadework.analysis.sim.season` (how a season is played
and how each fault is planted so that it gives exactly its findings).
"""

from __future__ import annotations

from spadework.analysis.sim.bots import choose_bids, estimate_tricks, play_hand
from spadework.analysis.sim.faults import (
    KINDS,
    InjectedFault,
    dump_faults,
    finding_key,
    for_format,
    load_faults,
    sidecar_path,
)
from spadework.analysis.sim.personality import AVERAGE, Personality, Player, default_club, make_pool
from spadework.analysis.sim.season import (
    MAX_HANDS,
    GameSpec,
    SimulatedGame,
    available_kinds,
    iter_season,
    schedule,
    score_sheet_record,
    simulate_game,
    simulate_season,
    write_season,
)

__all__ = [
    "AVERAGE",
    "GameSpec",
    "InjectedFault",
    "KINDS",
    "MAX_HANDS",
    "Personality",
    "Player",
    "SimulatedGame",
    "available_kinds",
    "choose_bids",
    "default_club",
    "dump_faults",
    "estimate_tricks",
    "finding_key",
    "for_format",
    "iter_season",
    "load_faults",
    "make_pool",
    "play_hand",
    "schedule",
    "score_sheet_record",
    "sidecar_path",
    "simulate_game",
    "simulate_season",
    "write_season",
]
