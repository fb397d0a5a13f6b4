"""An independent exhaustive search for double-dummy questions (tests only).

Plain minimax over the reference rules: :func:`spadework.analysis.engine.replay.legal_cards` for
the cards a seat may play and ``Deck.winner_index`` for who wins a trick; memoised on the exact
position (cards held, trick, leader, spades broken), nothing else shared with the solver.
"""

from __future__ import annotations

import random
from functools import lru_cache

from spadework.analysis.engine.replay import legal_cards
from spadework.analysis.engine.rules import Ruleset


def _search(ruleset: Ruleset):
    suits = ruleset.suits
    deck = ruleset.deck

    @lru_cache(maxsize=None)
    def ns_tricks(hands, leader, trick, trick_number, broken):
        """NS tricks from here (current trick included) with best play."""
        if all(not h for h in hands) and not trick:
            return 0
        seat = (leader + len(trick)) % 4
        options = legal_cards(hands[seat], trick, spades_broken=broken, trick_number=trick_number, ruleset=ruleset)
        best = None
        for c in options:
            v = after(hands, leader, trick, trick_number, broken, seat, c)
            if best is None or (v > best if seat % 2 == 0 else v < best):
                best = v
        return best

    def after(hands, leader, trick, trick_number, broken, seat, c):
        nh = list(hands)
        nh[seat] = tuple(x for x in hands[seat] if x != c)
        nh = tuple(nh)
        t = trick + (c,)
        nb = broken or suits[c] == "S"
        if len(t) < 4:
            return ns_tricks(nh, leader, t, trick_number, nb)
        w = (leader + deck.winner_index(t)) % 4
        return (1 if w % 2 == 0 else 0) + ns_tricks(nh, w, (), trick_number + 1, nb)

    @lru_cache(maxsize=None)
    def nil_safe(hands, leader, trick, trick_number, broken, nil):
        if all(not h for h in hands) and not trick:
            return True
        seat = (leader + len(trick)) % 4
        options = legal_cards(hands[seat], trick, spades_broken=broken, trick_number=trick_number, ruleset=ruleset)
        mine = seat % 2 == nil % 2
        results = []
        for c in options:
            nh = list(hands)
            nh[seat] = tuple(x for x in hands[seat] if x != c)
            nh = tuple(nh)
            t = trick + (c,)
            nb = broken or suits[c] == "S"
            if len(t) < 4:
                r = nil_safe(nh, leader, t, trick_number, nb, nil)
            else:
                w = (leader + deck.winner_index(t)) % 4
                r = False if w == nil else nil_safe(nh, w, (), trick_number + 1, nb, nil)
            results.append(r)
        return any(results) if mine else all(results)

    return ns_tricks, after, nil_safe


def exhaustive(pos, nil_seat=None):
    """``(ns, ew, {card: mover's side tricks}, nil_safe or None)`` for a solver Position."""
    from spadework.parsers.seats import Seat

    nil_seat = None if nil_seat is None else Seat.parse(nil_seat)
    ns_tricks, after, nil_safe = _search(pos.ruleset)
    # a spade already played to this trick breaks spades for the next one (as PlayState does)
    broken = pos.spades_broken or any(pos.ruleset.suits[c] == "S" for c in pos.trick)
    hands = tuple(tuple(h) for h in pos.hands)
    leader = int(pos.leader)
    tl = len(pos.hands[pos.to_play])
    ns = ns_tricks(hands, leader, tuple(pos.trick), pos.trick_number, broken)
    seat = int(pos.to_play)
    cards = {}
    for c in pos.legal_cards():
        v = after(hands, leader, tuple(pos.trick), pos.trick_number, broken, seat, c)
        cards[c] = tl - v if seat % 2 else v
    safe = None
    if nil_seat is not None:
        safe = nil_safe(hands, leader, tuple(pos.trick), pos.trick_number, broken, int(nil_seat))
    return ns, tl - ns, cards, safe


def random_ending(rng: random.Random, ruleset: Ruleset, tricks: int, *, broken: bool | None = None,
                  trick_cards: int | None = None, trick_number: int | None = None, skew: bool = True):
    """A random position with ``tricks`` tricks left: a random deal's last cards (seats
    already played to the current trick hold one fewer).  ``skew`` deals suits unevenly
    (more voids, more ruffing) half of the time."""
    from spadework.analysis.solver.position import make_position

    cards = list(ruleset.deck.cards)
    rng.shuffle(cards)
    if skew and rng.random() < 0.5:
        # bias toward few suits: keep cards of two or three random suits first
        keep = set(rng.sample("SHDC", rng.choice([2, 3])))
        cards.sort(key=lambda c: (ruleset.suits[c] not in keep, rng.random()))
    k = rng.randrange(4) if trick_cards is None else trick_cards
    leader = rng.randrange(4)
    n = tricks
    pool = cards[: 4 * n]
    hands = [[], [], [], []]
    it = iter(pool)
    for s in range(4):
        for _ in range(n):
            hands[s].append(next(it))
    if trick_number is None:
        trick_number = 14 - n
    if broken is None:
        broken = rng.random() < 0.5
    if trick_number == 1:
        broken = False
    # the cards of the current trick are legal ones (a position legal play can reach)
    from spadework.analysis.engine.replay import legal_cards

    trick = []
    for i in range(k):
        seat = (leader + i) % 4
        legal = legal_cards(hands[seat], trick, spades_broken=broken, trick_number=trick_number, ruleset=ruleset)
        card = rng.choice(legal)
        hands[seat].remove(card)
        trick.append(card)
    if trick_number == 1:
        # a short hand at trick 1 (the first-trick rules on a small tree): not a checkable position
        from spadework.analysis.solver.position import Position
        from spadework.parsers.seats import Seat

        return Position(tuple(tuple(h) for h in hands), Seat(leader), tuple(trick), 1, False, ruleset)
    return make_position(hands, "NESW"[leader], trick, trick_number, broken, ruleset)
