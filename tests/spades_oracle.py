"""A small, independent reading of RULES.md (standard rules only) used by the tests to prove that
the shipped sample games in ``data/`` are what ``data/README.md`` says they are: legal card play
(except the faults it lists), and recorded scores that follow the standard scoring.

This is a test oracle, not the checker (issue 3 builds that): it knows the ``standard`` preset
with its defaults and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from spadework.parsers.cards import STANDARD_DECK, Deck
from spadework.parsers.model import HandRecord
from spadework.parsers.seats import SIDES, Seat, Side

TARGET = 500
BAG_LIMIT = 10
BAG_PENALTY = 100


@dataclass
class Replay:
    """What the cards say: tricks taken per seat (N E S W), winners, and findings ``(code, trick, seat, card)``."""

    taken: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    winners: list[Seat] = field(default_factory=list)
    findings: list[tuple[str, int | None, Seat | None, str | None]] = field(default_factory=list)


def replay(rec: HandRecord) -> Replay:
    """Replay a hand's bids and tricks under the standard rules (RULES.md sections 1, 3, 4)."""
    deck = STANDARD_DECK
    out = Replay()
    deal = rec.effective_deal()
    assert deal is not None, "the oracle replays only hands with a deal or a complete play"
    dealt = [c for h in deal for c in h]
    if any(len(h) != 13 for h in deal) or sorted(dealt) != sorted(deck.cards):
        out.findings.append(("DEAL_INVALID", None, None, None))
    expected_bidders = list(rec.dealer.left.clockwise())
    if [b.seat for b in rec.bids] != expected_bidders:
        out.findings.append(("BID_OUT_OF_TURN", None, None, None))
    held = [set(h) for h in deal]
    broken = False
    leader = rec.dealer.left
    for k, trick in enumerate(rec.tricks or (), 1):
        if trick.leader != leader:
            out.findings.append(("LEAD_OUT_OF_TURN", k, trick.leader, trick.cards[0]))
        led = deck.suit(trick.cards[0])
        lead_seat = trick.leader
        if led == "S" and any(deck.suit(c) != "S" for c in held[lead_seat]):
            if k == 1:
                out.findings.append(("SPADE_LED_FIRST_TRICK", k, lead_seat, trick.cards[0]))
            elif not broken:
                out.findings.append(("SPADE_LED_BEFORE_BROKEN", k, lead_seat, trick.cards[0]))
        for seat, card in zip(trick.seats(), trick.cards):
            if card not in held[seat]:
                out.findings.append(("CARD_NOT_HELD", k, seat, card))
            elif deck.suit(card) != led and any(deck.suit(c) == led for c in held[seat]):
                out.findings.append(("RENEGE", k, seat, card))
            held[seat].discard(card)
        if any(deck.suit(c) == "S" for c in trick.cards):
            broken = True
        winner = trick.seats()[deck.winner_index(trick.cards)]
        if trick.winner is not None and trick.winner != winner:
            out.findings.append(("TRICK_WINNER_MISMATCH", k, trick.winner, None))
        out.winners.append(winner)
        out.taken[winner] += 1
        leader = winner
    if not rec.is_complete_play():
        out.findings.append(("HAND_INCOMPLETE", None, None, None))
    return out


@dataclass
class SideResult:
    points: int
    total: int
    bags: int


def score_hand(rec: HandRecord, taken: Sequence[int], totals: tuple[int, int], bags: tuple[int, int]) -> tuple[SideResult, SideResult]:
    """One hand's result per side (RULES.md section 5, standard defaults), from the totals and bag
    counts before it."""
    out = []
    for side in SIDES:
        contract = 0
        tricks = 0
        nil_points = 0
        for seat in side.seats:
            bid = rec.bid_of(seat)
            tricks += taken[seat]
            if bid is None:
                continue
            if bid.nil:
                value = 200 if bid.blind else 100
                nil_points += value if taken[seat] == 0 else -value
            else:
                contract += bid.value
        new_bags = 0
        if tricks >= contract:
            points = 10 * contract + (tricks - contract)
            new_bags = tricks - contract
        else:
            points = -10 * contract
        points += nil_points
        bag_count = bags[side] + new_bags
        while BAG_LIMIT and bag_count >= BAG_LIMIT:
            points -= BAG_PENALTY
            bag_count -= BAG_LIMIT
        out.append(SideResult(points, totals[side] + points, bag_count))
    return out[0], out[1]


def score_game(records: Sequence[HandRecord]) -> tuple[list[tuple[SideResult, SideResult]], Side | None, int | None]:
    """Every hand's recomputed result, the winner (or ``None``) and the hand that ended the game.

    Tricks taken are the recorded ``taken`` when present, else the replayed ones.
    """
    first = records[0]
    totals = first.score_before or (0, 0)
    bags = first.bags_before or (0, 0)
    results = []
    winner, ended = None, None
    for rec in records:
        taken = list(rec.taken) if rec.taken is not None else replay(rec).taken
        res = score_hand(rec, taken, totals, bags)
        results.append(res)
        totals = (res[0].total, res[1].total)
        bags = (res[0].bags, res[1].bags)
        if winner is None and max(totals) >= TARGET and totals[0] != totals[1]:
            winner = Side.NS if totals[0] > totals[1] else Side.EW
            ended = rec.hand
    return results, winner, ended


def group_games(records: Sequence[HandRecord]) -> dict[str, list[HandRecord]]:
    """Records by game id, each game's hands in order."""
    games: dict[str, list[HandRecord]] = {}
    for r in records:
        games.setdefault(r.game_id, []).append(r)
    return {g: sorted(hs, key=lambda r: r.hand) for g, hs in games.items()}


__all__ = ["Replay", "SideResult", "group_games", "replay", "score_game", "score_hand"]


def illegal_plays(rec: HandRecord, deck: Deck, lead_spades_any_time: bool = False) -> list[str]:
    """A small independent replay of RULES.md section 4 (leaders, cards held, spades broken, follow suit)
    over a record with a deal; returns one sentence per illegal play, in order."""
    hands = {s: set(rec.deal[s]) for s in Seat}
    found: list[str] = []
    broken = False
    expected = rec.dealer.left
    for k, trick in enumerate(rec.tricks, 1):
        if trick.leader != expected:
            found.append(f"trick {k}: led by {trick.leader}, expected {expected}")
        led = trick.cards[0]
        for seat, card in zip(trick.seats(), trick.cards):
            hand = hands[seat]
            if card not in hand:
                found.append(f"trick {k}: {seat} does not hold {card}")
            if seat == trick.leader:
                if deck.is_spade(card) and not broken and not lead_spades_any_time and deck.without_trumps(hand):
                    found.append(f"trick {k}: {seat} led spade {card} before spades were broken")
            elif deck.suit(card) != deck.suit(led) and any(deck.suit(c) == deck.suit(led) for c in hand):
                found.append(f"trick {k}: {seat} reneged with {card}")
            hand.discard(card)
        broken = broken or any(deck.is_spade(c) for c in trick.cards)
        if len(trick.cards) == 4:
            expected = trick.seats()[deck.winner_index(trick.cards)]
    return found
