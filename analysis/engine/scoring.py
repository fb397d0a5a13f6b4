"""Scoring: one hand per side, running totals, bags and the end of the game (RULES.md sections 5 and 6).

Every number comes from the :class:`~spadework.analysis.engine.rules.Ruleset` (rules are data):
nil values, failed-nil tricks, bag limit and penalty, bag points, 10-for-200,
blind bids, target and mercy.

- :func:`score_hand`: one hand, both sides, from the bids, the tricks each seat
  took and the totals and bags before the hand.
- :func:`apply_renege_penalty`: tricks moved for ``renege_penalty_tricks``.
- :func:`game_winner`: whether the totals end the game, and who won.
- :class:`ScoreChain`: the running score of one game, hand after hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from spadework.analysis.engine.rules import Ruleset
from spadework.parsers.model import Bid
from spadework.parsers.seats import SIDES, Seat, Side

Number = int | float


@dataclass(frozen=True, slots=True)
class SideResult:
    """One side's score for one hand (a ``hand_scores`` row, TABLES.md).

    - ``contract``: the partners' bids added, a nil counting 0 (a blind bid counts its value).
    - ``tricks``: tricks that count toward the contract (both partners' tricks; a failed
      nil's tricks only under ``failed_nil_tricks: side``).
    - ``made``: ``tricks >= contract``.
    - ``contract_points``: +10 x contract made (200 under 10-for-200, a blind bid's points),
      the negative when set.
    - ``bags_this_hand``: overtricks when made, plus a failed nil's tricks under ``bags_only``.
    - ``bag_points``: ``bags_this_hand`` x the ruleset's ``bag_points``.
    - ``nil_points``: the nil and blind nil bonuses and penalties (signed).
    - ``bag_penalty``: the sandbagging penalty in points (0, -100, -200...; signed like the rest).
    - ``points`` = contract_points + bag_points + nil_points + bag_penalty; ``total`` the
      running total after the hand; ``bags`` the bag count after the penalty.
    """

    side: Side
    contract: Number
    tricks: int
    made: bool
    contract_points: Number
    bags_this_hand: int
    bag_points: int
    nil_points: int
    bag_penalty: int
    points: Number
    total: Number
    bags: int

    def row(self) -> dict[str, Any]:
        """The ``hand_scores`` columns (without game_id, hand, scoring)."""
        d = asdict(self)
        d["side"] = str(self.side)
        del d["contract_points"], d["bag_points"]
        return d


def _per_seat(bids: Iterable[Bid | None]) -> list[Bid | None]:
    out: list[Bid | None] = [None, None, None, None]
    for b in bids:
        if b is not None and out[b.seat] is None:
            out[b.seat] = b
    return out


def _is_nil(b: Bid) -> bool:
    return b.nil or b.value == 0


def score_side(
    ruleset: Ruleset,
    side: Side,
    bids: Sequence[Bid | None],
    taken: Sequence[int],
    total_before: Number = 0,
    bags_before: int = 0,
) -> SideResult:
    """Score one side for one hand (RULES.md section 5).

    ``bids``: each seat's bid in seat order N E S W (``None`` = no bid, e.g. the silent
    partner of a blind seven, whose tricks still count for the side); ``taken``: tricks
    per seat N E S W.  Units: points and tricks.  Never raises for odd bids (14, 4.5):
    they are scored as recorded.
    """
    fnt = ruleset.failed_nil_tricks
    contract: Number = 0
    base: Number = 0
    counting = 0
    extra_bags = 0
    nil_points = 0
    any_blind = False
    for seat in side.seats:
        b = bids[seat]
        t = taken[seat]
        if b is None:
            counting += t
            continue
        if _is_nil(b):
            value = ruleset.blind_nil_points if b.blind else ruleset.nil_points
            if t == 0:
                nil_points += value
            else:
                nil_points -= value
                if fnt == "side":
                    counting += t
                elif fnt == "bags_only":
                    extra_bags += t
        else:
            contract += b.value
            if b.blind and ruleset.blind_bid_known(b.value):
                any_blind = True
                base += ruleset.blind_bid_points(b.value)
            else:  # a blind bid the ruleset does not have is scored as the plain bid (RULES.md 3, 5.3)
                base += 10 * b.value
            counting += t
    made = counting >= contract
    if made:
        contract_points = base
        if ruleset.ten_for_two_hundred and not any_blind and contract >= 10:
            contract_points = 200
        bags_hand = int(counting - contract) + extra_bags
    else:
        contract_points = -base
        bags_hand = extra_bags
    bag_pts = ruleset.bag_points * bags_hand
    bags_total = bags_before + bags_hand
    penalty = 0
    if ruleset.bag_limit > 0 and bags_total >= ruleset.bag_limit:
        times = bags_total // ruleset.bag_limit
        penalty = -ruleset.bag_penalty * times
        bags_total -= times * ruleset.bag_limit
    points = contract_points + bag_pts + nil_points + penalty
    if isinstance(points, float) and points.is_integer():
        points = int(points)
    if isinstance(contract, float) and contract.is_integer():
        contract = int(contract)
    return SideResult(
        side=side,
        contract=contract,
        tricks=counting,
        made=made,
        contract_points=contract_points,
        bags_this_hand=bags_hand,
        bag_points=bag_pts,
        nil_points=nil_points,
        bag_penalty=penalty,
        points=points,
        total=total_before + points,
        bags=bags_total,
    )


def score_hand(
    ruleset: Ruleset,
    bids: Iterable[Bid | None],
    taken_per_seat: Sequence[int],
    total_before: Sequence[Number] = (0, 0),
    bags_before: Sequence[int] = (0, 0),
) -> tuple[SideResult, SideResult]:
    """Score one hand for both sides: ``(NS result, EW result)`` (RULES.md section 5).

    ``bids``: the bids in the order made, or a seat-ordered tuple with ``None`` for a
    seat without a bid (the first bid of each seat counts); ``taken_per_seat``: tricks
    N E S W; ``total_before``/``bags_before``: (NS, EW) running totals and bag counts
    before the hand.  See :class:`SideResult` for the fields.
    """
    per_seat = _per_seat(bids)
    return tuple(  # type: ignore[return-value]
        score_side(ruleset, side, per_seat, taken_per_seat, total_before[side], bags_before[side]) for side in SIDES
    )


def apply_renege_penalty(
    taken: Sequence[int], bids: Iterable[Bid | None], reneges: Iterable[Seat], tricks_per_renege: int
) -> tuple[int, int, int, int]:
    """Tricks per seat after the renege penalty (option ``renege_penalty_tricks``; RULES.md section 5).

    For each renege, ``tricks_per_renege`` tricks move from the offending side to the
    opponents, only from a seat that did not bid nil (the offender first, then its
    partner) to a seat that did not bid nil (the offender's left-hand opponent, else its
    right-hand one), so a nil's result never changes.  Fewer move where no such trick
    or seat is left.  A seat with no bid (the silent partner of a blind seven) is not a
    nil bidder: its tricks count for its side's contract.
    """
    out = list(taken)
    per_seat = _per_seat(bids)

    def counts(seat: Seat) -> bool:
        b = per_seat[seat]
        return b is None or not _is_nil(b)

    for offender in reneges:
        givers = [s for s in (offender, offender.partner) if counts(s)]
        taker = next((s for s in (offender.left, offender.right) if counts(s)), None)
        if taker is None:
            continue
        for _ in range(tricks_per_renege):
            giver = next((s for s in givers if out[s] > 0), None)
            if giver is None:
                break
            out[giver] -= 1
            out[taker] += 1
    return tuple(out)  # type: ignore[return-value]


def game_winner(ruleset: Ruleset, totals: Sequence[Number]) -> Side | None:
    """The winner the totals (NS, EW) give after a hand, or ``None`` while the game goes on
    (RULES.md section 6).

    A side at or above ``target`` with the higher total wins; equal totals over the
    target play on.  Mercy (``losing_score``): a side at or below it loses; if both are,
    the higher total wins (equal: play on).
    """
    ns, ew = totals[0], totals[1]
    if max(ns, ew) >= ruleset.target and ns != ew:
        return Side.NS if ns > ew else Side.EW
    low = ruleset.losing_score
    if low is not None and (ns <= low or ew <= low) and ns != ew:
        return Side.NS if ns > ew else Side.EW
    return None


class ScoreChain:
    """The running score of one game, hand after hand, from the rules alone.

    ``totals``/``bags``: (NS, EW) now.  ``winner``/``ended_after``: the winner and the
    number of hands added when the game ended (``None`` while it goes on); hands added
    after the end still score (``totals`` keeps running) but ``final_totals`` stays at
    the end.
    """

    def __init__(self, ruleset: Ruleset, totals: Sequence[Number] = (0, 0), bags: Sequence[int] = (0, 0)) -> None:
        self.ruleset = ruleset
        self.totals: tuple[Number, Number] = (totals[0], totals[1])
        self.bags: tuple[int, int] = (bags[0], bags[1])
        self.hands = 0
        self.winner: Side | None = None
        self.ended_after: int | None = None
        self.final_totals: tuple[Number, Number] | None = None

    @property
    def over(self) -> bool:
        """True once a hand has ended the game."""
        return self.ended_after is not None

    def add(
        self,
        bids: Iterable[Bid | None],
        taken: Sequence[int],
        *,
        totals_after: Sequence[Number | None] | None = None,
        bags_after: Sequence[int | None] | None = None,
    ) -> tuple[SideResult, SideResult]:
        """Score the next hand and move the totals on; returns ``(NS, EW)`` results.

        ``totals_after``/``bags_after``: (NS, EW) values the chain goes on from instead of the
        computed ones (``None`` for a side keeps the computed value): a log's recorded score
        after a hand whose play cannot be scored (RULES.md section 7, "Gaps in the record").
        The returned results carry them as ``total``/``bags``.
        """
        res = score_hand(self.ruleset, bids, taken, self.totals, self.bags)
        if totals_after is not None or bags_after is not None:
            res = tuple(  # type: ignore[assignment]
                replace(
                    r,
                    total=r.total if totals_after is None or totals_after[i] is None else totals_after[i],
                    bags=r.bags if bags_after is None or bags_after[i] is None else bags_after[i],
                )
                for i, r in enumerate(res)
            )
        self.totals = (res[0].total, res[1].total)
        self.bags = (res[0].bags, res[1].bags)
        self.hands += 1
        if self.ended_after is None:
            w = game_winner(self.ruleset, self.totals)
            if w is not None:
                self.winner = w
                self.ended_after = self.hands
                self.final_totals = self.totals
        return res

    def restart(self, totals: Sequence[Number | None], bags: Sequence[int | None] | None = None) -> None:
        """Go on from these totals and bags (NS, EW; ``None`` keeps a side's value): a log's
        recorded score before a hand that follows a missing one (RULES.md section 7)."""
        self.totals = tuple(self.totals[i] if totals[i] is None else totals[i] for i in SIDES)  # type: ignore[assignment]
        if bags is not None:
            self.bags = tuple(self.bags[i] if bags[i] is None else bags[i] for i in SIDES)  # type: ignore[assignment]

    def result_totals(self) -> tuple[Number, Number]:
        """The game's totals: at the end of the game, or now while it goes on."""
        return self.final_totals if self.final_totals is not None else self.totals


__all__ = ["ScoreChain", "SideResult", "apply_renege_penalty", "game_winner", "score_hand", "score_side"]
