"""The compiled engine: check packed hands with the kernels, and give the reference's rows and findings.

- :func:`check_packed`: :class:`~spadework.analysis.engine.packed.PackedHands` + ruleset table ->
  :class:`CoreResult` (numpy columns of the derived tables' values and the findings' places, from
  :mod:`spadework.analysis.engine.kernels`).
- :meth:`CoreResult.columns`: the ``tricks``, ``hand_scores`` and ``games`` rows of chosen games as
  numpy columns (TABLES.md), for writing in bulk.
- :func:`findings`: the findings with the reference's message text: only the hands the core found
  something in are re-checked by the reference (``checker.GameRun.check_hand``), each from the state
  the core computed before it; ~1,500 flagged games of 1M hands cost about as many hand replays.
- :func:`game_checks`: the few games the reference checks whole (:meth:`CoreResult.reference_games`:
  rules findings RULES_INVALID/RULES_MIXED, or a hand beyond the packed layout).
- :func:`check_records`: records -> ``GameCheck`` per game through the core (the differential test's route).

So a pipeline writes :meth:`CoreResult.columns` (rows of every game but the reference games),
:func:`findings` (violations), and the rows and findings of :func:`game_checks`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spadework.analysis.engine import kernels as K
from spadework.analysis.engine.checker import AFTER_PENALTY, AS_PLAYED, GameCheck, GameRun, check_game
from spadework.analysis.engine.findings import Finding, FindingList
from spadework.analysis.engine.packed import NOT_RECORDED, PackedHands, RulesetArrays, pack_records, ranges
from spadework.analysis.engine.replay import PLAY_CODES, CleanPlay
from spadework.parsers.encoding import CARD_CODES, NO_CARD, NO_SEAT, PLAY_SUIT_CODES, SEAT_CODES, SIDE_CODES
from spadework.parsers.model import HandRecord
from spadework.parsers.schema import AS_PLAYED_COLUMNS
from spadework.parsers.seats import SEATS, SIDES

_SEAT_TEXT = np.array(list(SEAT_CODES) + [None], dtype=object)
_SUIT_TEXT = np.array(list(PLAY_SUIT_CODES) + [None], dtype=object)  # -1 -> None


def rules_in(t: RulesetArrays) -> K.RulesIn:
    """The kernels' view of a ruleset table (adds the cards of each playing suit as bit masks)."""
    r = len(t)
    suit_mask = np.zeros((r, 5), dtype=np.uint64)
    for k in range(r):
        for c in range(t.play_suit.shape[1]):
            suit_mask[k, t.play_suit[k, c]] |= np.uint64(1) << np.uint64(c)
    return K.RulesIn(
        np.ascontiguousarray(t.opt, dtype=np.int64),
        np.ascontiguousarray(t.play_suit, dtype=np.int8),
        np.ascontiguousarray(t.play_power, dtype=np.int16),
        np.ascontiguousarray(t.deck_mask, dtype=np.uint64),
        suit_mask,
    )


def hands_in(p: PackedHands) -> K.HandsIn:
    """The kernels' view of packed hands (the same arrays)."""
    return K.HandsIn(*(np.ascontiguousarray(getattr(p, f)) for f in K.HANDS_FIELDS))


def score_arrays(o, hands: np.ndarray, penalty: np.ndarray) -> dict[str, np.ndarray]:
    """The ``hand_scores`` numbers of ``hands`` (rows of the core's output; ``penalty``: per hand,
    whether its ruleset has a renege penalty), two rows per hand (NS, EW) in hand order: ``side``
    (0 NS, 1 EW), ``contract`` (rounded; ``contract_value`` as summed) and the :data:`~spadework.parsers.schema.AS_PLAYED_COLUMNS` of the
    official score (after the penalty where there is one), ``as_played_<column>`` of the score as
    played, and ``penalty`` per row (where the ``as_played_*`` belong in the table; null elsewhere).
    Numbers int64 (points rounded), flags bool."""
    sh = np.repeat(hands, 2)
    sd = np.tile(np.array([0, 1], dtype=np.int64), len(hands))
    pen = np.repeat(np.asarray(penalty, dtype=bool), 2)
    k = np.where(pen, K.AFTER_PENALTY, K.AS_PLAYED)
    value = o.hs_contract[sh, k, sd].astype(np.float64)
    out: dict[str, np.ndarray] = {"side": sd, "penalty": pen, "contract": np.rint(value).astype(np.int64), "contract_value": value}
    for prefix, kk in (("", k), ("as_played_", K.AS_PLAYED)):
        for column, field in _HS_FIELDS.items():
            v = getattr(o, field)[sh, kk, sd]
            out[prefix + column] = v.astype(bool) if column == "made" else np.rint(v).astype(np.int64)
    return out


_HS_FIELDS = {
    "tricks": "hs_tricks", "made": "hs_made", "bags_this_hand": "hs_bags_hand", "bag_penalty": "hs_penalty",
    "nil_points": "hs_nil", "points": "hs_points", "total": "hs_total", "bags": "hs_bags",
}  # fmt: skip
"""The core's output array of each of :data:`~spadework.parsers.schema.AS_PLAYED_COLUMNS`."""
assert tuple(_HS_FIELDS) == AS_PLAYED_COLUMNS


def _score_values(o, i: int, k: int, sd: int) -> dict[str, Any]:
    """The :data:`~spadework.parsers.schema.AS_PLAYED_COLUMNS` of hand ``i``, scoring ``k``, side ``sd``
    of the core's output, as Python values (points rounded)."""
    out: dict[str, Any] = {}
    for column, field in _HS_FIELDS.items():
        v = getattr(o, field)[i, k, sd]
        out[column] = bool(v) if column == "made" else _round(v)
    return out


@dataclass
class CoreResult:
    """What the core computed for packed hands.

    ``hands``/``rulesets``: the input; ``out``: :class:`~spadework.analysis.engine.kernels.CoreOut`;
    ``find``: :class:`~spadework.analysis.engine.kernels.FindOut` (rows grouped by game, in the
    reference's order within a game); ``find_start``: int64[G+1], the findings of game g are rows
    ``find_start[g]:find_start[g+1]``.
    """

    hands: PackedHands
    rulesets: RulesetArrays
    out: K.CoreOut
    find: K.FindOut
    find_start: np.ndarray

    @property
    def reference_mask(self) -> np.ndarray:
        """bool[G]: games the reference checks whole (rows and findings): its ``rules`` raise
        RULES_INVALID/RULES_MIXED, or a hand is beyond the core (``CoreOut.g_reference``)."""
        return (self.hands.game_rules_flag != 0) | self.out.g_reference

    @property
    def reference_games(self) -> np.ndarray:
        """int64: the indices of :attr:`reference_mask`."""
        return np.nonzero(self.reference_mask)[0]

    @property
    def flagged(self) -> np.ndarray:
        """bool[G]: games with findings (the core's, or the reference's for :attr:`reference_mask`)."""
        return (self.out.g_nfind > 0) | self.reference_mask

    # --- findings ---

    def finding_places(self, g: int) -> list[tuple]:
        """The core's findings of game ``g`` as ``(code, hand, trick, seat, card, side, field,
        recorded, expected)`` in the form :class:`~spadework.analysis.engine.findings.Finding` holds
        them (seats/sides as enums, cards as codes, recorded/expected as the reference gives them)."""
        f, p = self.find, self.hands
        rows = []
        for k in range(self.find_start[g], self.find_start[g + 1]):
            code = K.CODE_NAMES[f.code[k]]
            fld = None if f.field[k] < 0 else K.FIELD_NAMES[f.field[k]]
            rows.append(
                (
                    code,
                    int(p.hand_no[f.hand[k]]),
                    None if f.trick[k] == 0 else int(f.trick[k]),
                    None if f.seat[k] == NO_SEAT else SEATS[f.seat[k]],
                    None if f.card[k] == NO_CARD else CARD_CODES[f.card[k]],
                    None if f.side[k] == NO_SEAT else SIDES[f.side[k]],
                    fld,
                    _value(code, fld, f.recorded[k]),
                    _value(code, fld, f.expected[k]),
                )
            )
        return rows

    # --- rows ---

    def game_rows(self, g: int) -> tuple[list[dict], list[dict], dict]:
        """Game ``g``'s ``tricks`` rows, ``hand_scores`` rows and ``games`` row, as the reference's
        :class:`~spadework.analysis.engine.checker.GameCheck` holds them (dicts of Python values)."""
        p, o = self.hands, self.out
        gid = p.game_ids[g]
        r = int(p.game_ruleset[g])
        penalty = self.rulesets.rulesets[r].renege_penalty_tricks > 0
        tricks: list[dict] = []
        scores: list[dict] = []
        a, b = int(p.game_start[g]), int(p.game_start[g + 1])
        for i in range(a, b):
            h = int(p.hand_no[i])
            for t in range(int(p.n_tricks[i])):
                w = o.t_winner[i, t]
                tricks.append(
                    {
                        "game_id": gid,
                        "hand": h,
                        "trick": t + 1,
                        "leader": SEAT_CODES[o.t_leader[i, t]],
                        "led_suit": None if o.t_led[i, t] < 0 else PLAY_SUIT_CODES[o.t_led[i, t]],
                        "winner": None if w == NO_SEAT else SEAT_CODES[w],
                        "spades_broken": bool(o.t_broken[i, t]),
                    }
                )
            # one row per side: the official score, the as-played one beside it under a penalty
            k = K.AFTER_PENALTY if penalty else K.AS_PLAYED
            for sd in range(2):
                row = {"game_id": gid, "hand": h, "side": SIDE_CODES[sd], "contract": _round(o.hs_contract[i, k, sd])}
                row.update(_score_values(o, i, k, sd))
                row["scoring"] = AFTER_PENALTY if penalty else AS_PLAYED
                played = _score_values(o, i, K.AS_PLAYED, sd) if penalty else {}
                row.update({f"as_played_{c}": played.get(c) for c in AS_PLAYED_COLUMNS})
                row["contract_value"] = float(o.hs_contract[i, k, sd])
                scores.append(row)
        w = o.g_winner[g]
        game = {
            "game_id": gid,
            "rules": self.rulesets.names[r],
            "hands": b - a,
            "total_ns": _round(o.g_total[g, 0]),
            "total_ew": _round(o.g_total[g, 1]),
            "winner": None if w == NO_SEAT else SIDE_CODES[w],
            "ended_at_hand": None if o.g_ended[g] == K.NO_HAND else int(o.g_ended[g]),
        }
        return tricks, scores, game

    def columns(self, games: np.ndarray | None = None) -> dict[str, dict[str, np.ndarray]]:
        """The ``tricks``, ``hand_scores`` and ``games`` rows of ``games`` (default: every game the
        core checked, i.e. not :attr:`reference_mask`) as columns: ``{table: {column: array}}``.  Text
        columns are object arrays (``None`` for null); numbers int64; flags bool.  Row order: game,
        hand, then trick / scoring and side, as the reference writes them."""
        p, o = self.hands, self.out
        if games is None:
            games = np.nonzero(~self.reference_mask)[0]
        games = np.asarray(games, dtype=np.int64)
        start, stop = p.game_start[games], p.game_start[games + 1]
        lens = stop - start
        hands = ranges(start, lens)
        hand_game = np.repeat(games, lens)
        gid = p.game_ids
        # tricks
        nt = p.n_tricks[hands].astype(np.int64)
        th = np.repeat(hands, nt)
        tt = ranges(np.zeros(len(hands), dtype=np.int64), nt)
        tricks = {
            "game_id": gid[np.repeat(hand_game, nt)],
            "hand": p.hand_no[th].astype(np.int64),
            "trick": tt + 1,
            "leader": _SEAT_TEXT[_seat_index(o.t_leader[th, tt])],
            "led_suit": _SUIT_TEXT[o.t_led[th, tt].astype(np.int64)],
            "winner": _SEAT_TEXT[_seat_index(o.t_winner[th, tt])],
            "spades_broken": o.t_broken[th, tt].copy(),
        }
        # hand_scores: two rows per hand (the official score, the as-played one beside it)
        pen = np.array([rs.renege_penalty_tricks > 0 for rs in self.rulesets.rulesets], dtype=bool)
        a = score_arrays(o, hands, pen[p.game_ruleset[hand_game]])
        sh = np.repeat(hands, 2)
        scores = {
            "game_id": gid[np.repeat(hand_game, 2)],
            "hand": p.hand_no[sh].astype(np.int64),
            "side": np.array(SIDE_CODES, dtype=object)[a["side"]],
            "contract": a["contract"],
            **{c: a[c] for c in AS_PLAYED_COLUMNS},
            "scoring": np.array([AS_PLAYED, AFTER_PENALTY], dtype=object)[a["penalty"].astype(np.int64)],
        }
        for c in AS_PLAYED_COLUMNS:
            col = a["as_played_" + c].astype(object)
            col[~a["penalty"]] = None
            scores["as_played_" + c] = col
        scores["contract_value"] = a["contract_value"]
        names = np.array(self.rulesets.names, dtype=object)
        ended = o.g_ended[games].astype(object)
        ended[o.g_ended[games] == K.NO_HAND] = None
        gw = o.g_winner[games]
        games_t = {
            "game_id": gid[games],
            "rules": names[p.game_ruleset[games]],
            "hands": lens.astype(np.int64),
            "total_ns": np.rint(o.g_total[games, 0]).astype(np.int64),
            "total_ew": np.rint(o.g_total[games, 1]).astype(np.int64),
            "winner": np.array(list(SIDE_CODES) + [None], dtype=object)[np.where(gw == NO_SEAT, 2, gw)],
            "ended_at_hand": ended,
        }
        return {"tricks": tricks, "hand_scores": scores, "games": games_t}


def _seat_index(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.int64)
    return np.where(a == NO_SEAT, 4, a)


def _round(x: float) -> int:
    return int(np.rint(x))


def _value(code: str, fld: str | None, v: float) -> Any:
    if np.isnan(v):
        return None
    if fld == "dealer" or (fld == "winner" and code == "TRICK_WINNER_MISMATCH"):
        return SEAT_CODES[int(v)]
    if fld == "winner":
        return SIDE_CODES[int(v)]
    return int(v)


def check_packed(hands: PackedHands, rulesets: RulesetArrays) -> CoreResult:
    """Run the compiled core over packed hands: every game replayed, scored and checked.

    ``hands.game_ruleset`` indexes ``rulesets``.  Returns a :class:`CoreResult` (numpy columns; no
    message text).  Uses numba's threads (``numba.set_num_threads`` to choose how many).
    """
    out, find = K.run_core(hands_in(hands), rules_in(rulesets))
    fs = np.zeros(hands.n_games + 1, dtype=np.int64)
    np.cumsum(out.g_nfind, out=fs[1:])
    return CoreResult(hands, rulesets, out, find, fs)


def _num(x: float) -> int | float:
    """A kernel value as the reference holds it: whole numbers as int."""
    x = float(x)
    return int(x) if x.is_integer() else x


@dataclass(frozen=True)
class _HandBefore:
    """What :meth:`GameRun.check_hand` reads of the hand before the one it checks (``hand``,
    ``dealer``) and of the game's first hand (``score_before``, ``bags_before``), from the packed
    arrays: a whole record is built only for the hands with findings."""

    hand: int
    dealer: Any
    score_before: tuple[int, int] | None
    bags_before: tuple[int, int] | None

    @classmethod
    def of(cls, p: PackedHands, i: int) -> "_HandBefore":
        def pair(a: np.ndarray) -> tuple[int, int] | None:
            return None if NOT_RECORDED in (int(a[0]), int(a[1])) else (int(a[0]), int(a[1]))

        return cls(int(p.hand_no[i]), SEATS[int(p.dealer[i])], pair(p.score_before[i]), pair(p.bags_before[i]))


def _run_before(result: CoreResult, g: int, i: int, prev: Any, first: Any):
    """A :class:`~spadework.analysis.engine.checker.GameRun` in the state the core computed before
    hand row ``i`` of game ``g`` (``prev``: the hand before it, ``first``: the game's first hand, for
    a game's start state; records or :class:`_HandBefore`)."""
    p, o = result.hands, result.out
    rs = result.rulesets.rulesets[int(p.game_ruleset[g])]
    a = int(p.game_start[g])
    run = GameRun(str(p.game_ids[g]), rs, FindingList(), first.score_before or (0, 0), first.bags_before or (0, 0))
    if i == a:
        return run
    for k, chain in ((AS_PLAYED_K, run.chain), (AFTER_PENALTY_K, run.pchain)):
        if chain is not None:
            chain.totals = (_num(o.hs_total[i - 1, k, 0]), _num(o.hs_total[i - 1, k, 1]))
            chain.bags = (int(o.hs_bags[i - 1, k, 0]), int(o.hs_bags[i - 1, k, 1]))
            chain.hands = i - a
    ended_row = int(o.g_ended_row[g])
    if 0 <= ended_row < i:  # the game ended at an earlier hand
        off = run.official
        off.winner = SIDES[int(o.g_winner[g])]
        off.final_totals = (_num(o.g_total[g, 0]), _num(o.g_total[g, 1]))
        off.ended_after = ended_row - a + 1
        run.ended_at_hand = int(o.g_ended[g])
    run.scores.totals = [_num(o.log_total[i, 0]), _num(o.log_total[i, 1])]
    run.scores.bags = [int(o.log_bags[i, 0]), int(o.log_bags[i, 1])]
    run.prev = prev
    run.should_dealer = SEATS[int(o.dealer_should[i - 1])]
    run.index = i - a
    return run


def findings(
    result: CoreResult,
    fetch: Callable[..., Sequence[HandRecord]],
    games: Sequence[int] | None = None,
) -> dict[int, list[Finding]]:
    """The findings, with the reference's message text, of the games the core found something in.

    ``fetch(rows, play)``: the hand records of packed hand rows ``rows`` (int64 array), in that order;
    ``play=False``: their deal and tricks may be left out.  Only the hands with findings are re-checked,
    each by :meth:`~spadework.analysis.engine.checker.GameRun.check_hand` from the state the core
    computed before it (so a game's earlier hands are not replayed again).  A hand whose findings hold
    no code of the deal or the card play (``replay.PLAY_CODES``; e.g. a hand flagged only for its score)
    is not replayed trick by trick either: the reference gets the tricks each seat won from the core
    (:class:`~spadework.analysis.engine.replay.CleanPlay`) and writes the bid, tricks-taken and score
    findings from there, so a log whose every hand is flagged for its score costs a fraction of a
    replay per hand.  Returns ``{game index: findings}`` in the reference's order.  ``games``: the game
    indices to do (default: every game with findings that the core checked, i.e. not
    :meth:`CoreResult.reference_games`).
    """
    p, o, f = result.hands, result.out, result.find
    if games is None:
        mask = (o.g_nfind > 0) & ~result.reference_mask
        games = np.nonzero(mask)[0]
    games = np.asarray(games, dtype=np.int64)
    # the hands to re-check: those with findings (of the hand before and the game's first hand,
    # check_hand reads a few numbers, taken from the packed arrays)
    rows = ranges(p.game_start[games], p.game_start[games + 1] - p.game_start[games])
    rows = rows[o.n_find[rows] > 0]
    game_of = np.searchsorted(p.game_start, rows, side="right") - 1
    # a clean play: no deal or play finding, and complete or with a tricks-taken record
    play_found = np.zeros(len(o.n_find), dtype=bool)
    play_found[f.hand[np.isin(f.code, _PLAY_CODE_IDS)]] = True
    complete = (p.n_tricks == 13) & (p.trick_len == 4).all(axis=1)
    clean = ~play_found[rows] & (complete[rows] | p.has_taken[rows].astype(bool))
    recs: list[Any] = [None] * len(rows)
    for with_play, sel in ((False, np.flatnonzero(clean)), (True, np.flatnonzero(~clean))):
        if len(sel):
            for k, rec in zip(sel.tolist(), fetch(rows[sel], play=with_play)):
                recs[k] = rec
    out: dict[int, list[Finding]] = {int(g): [] for g in games.tolist()}
    for k, (g, i) in enumerate(zip(game_of.tolist(), rows.tolist())):
        a = int(p.game_start[g])
        rec = recs[k]
        first = rec if i == a else _HandBefore.of(p, a)
        run = _run_before(result, g, i, _HandBefore.of(p, i - 1) if i > a else None, first)
        cp = CleanPlay(tuple(o.taken[i].tolist()), bool(complete[i])) if clean[k] else None
        run.check_hand(rec, cp)
        out[g].extend(run.findings)
    return out


_PLAY_CODE_IDS = np.array(sorted(K.CODE_IDS[c] for c in PLAY_CODES), dtype=np.int16)
"""The finding codes (kernel ids) a hand's card play can raise (``replay.PLAY_CODES``)."""


def game_checks(
    result: CoreResult,
    records_of: Callable[[Sequence[int]], Sequence[Sequence[HandRecord]]],
    rules: Any = None,
) -> dict[int, GameCheck]:
    """Whole-game reference checks of :meth:`CoreResult.reference_games` (the games the core leaves to
    the reference: rules findings, hands beyond the layout): ``{game index: GameCheck}``.
    ``records_of(game indices)``: each game's hand records; ``rules``: the override the hands were
    packed with."""
    games = result.reference_games.tolist()
    return {g: check_game(recs, rules) for g, recs in zip(games, records_of(games))}


def check_records(records: Iterable[HandRecord], rules: Any = None) -> Iterator[GameCheck]:
    """Records (ordered by game) -> one :class:`~spadework.analysis.engine.checker.GameCheck` per game,
    through the core: the same values and findings as ``checker.iter_game_checks`` (the differential
    test's route; ``hands`` is left empty where the core checked the game, as it keeps no per-hand
    Python objects)."""
    packed = pack_records(records, rules)
    result = check_packed(packed.hands, packed.rulesets)
    flat = [r for recs in packed.records for r in recs]
    ref = game_checks(result, lambda gs: [packed.records[k] for k in gs], rules)
    found = findings(result, lambda rows, play=True: [flat[k] for k in rows.tolist()])
    for g in range(packed.hands.n_games):
        if g in ref:
            yield ref[g]
            continue
        tricks, scores, game = result.game_rows(g)
        r = int(packed.hands.game_ruleset[g])
        yield GameCheck(
            game_id=game["game_id"],
            ruleset=packed.rulesets.rulesets[r],
            rules=game["rules"],
            findings=found.get(g, []),
            hands=[],
            tricks=tricks,
            hand_scores=scores,
            game=game,
            totals=(game["total_ns"], game["total_ew"]),
            winner=None if game["winner"] is None else SIDES[SIDE_CODES.index(game["winner"])],
            ended_at_hand=game["ended_at_hand"],
        )


AS_PLAYED_K, AFTER_PENALTY_K = K.AS_PLAYED, K.AFTER_PENALTY

__all__ = ["CoreResult", "check_packed", "check_records", "findings", "game_checks", "hands_in", "rules_in"]
