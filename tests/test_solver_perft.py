"""Golden legal-move counts ("perft", as python-chess's examples/perft) for the solver's move
generator (DESIGN_NOTES idea 6).

tests/golden/solver_perft.txt holds positions and the number of legal card sequences of 1..4
cards from each, per ruleset, counted with the reference rules
(:func:`spadework.analysis.engine.replay.legal_cards`).  The test counts them again with the
reference and with the compiled move generator (:func:`spadework.analysis.solver.kernel.legal_mask`
over the solver's bit layout).  Regenerate with ``python tests/test_solver_perft.py --write``
(only when the rules change: the file is the guard).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from spadework.analysis.engine.replay import legal_cards
from spadework.analysis.engine.rules import get_ruleset, ruleset_name
from spadework.analysis.solver import kernel
from spadework.analysis.solver.position import Position, solver_layout
from spadework.parsers.cards import format_pbn_deal, parse_pbn_deal, sort_cards
from spadework.parsers.encoding import CARD_ID
from spadework.parsers.seats import SEATS, Seat

GOLDEN = Path(__file__).parent / "golden" / "solver_perft.txt"
DEPTH = 4


def perft_reference(hands, leader, trick, trick_number, broken, rs, depth):
    if depth == 0:
        return 1
    seat = (leader + len(trick)) % 4
    total = 0
    for c in legal_cards(hands[seat], trick, spades_broken=broken, trick_number=trick_number, ruleset=rs):
        nh = [list(h) for h in hands]
        nh[seat].remove(c)
        t = list(trick) + [c]
        nb = broken or rs.suits[c] == "S"
        if len(t) == 4:
            w = (leader + rs.deck.winner_index(t)) % 4
            total += perft_reference(nh, w, [], trick_number + 1, nb, rs, depth - 1)
        else:
            total += perft_reference(nh, leader, t, trick_number, nb, rs, depth - 1)
    return total


def perft_kernel(h, leader, trick_bits, first, broken, flags, depth):
    if depth == 0:
        return 1
    k = len(trick_bits)
    seat = (leader + k) & 3
    led = trick_bits[0] >> 4 if k else 0
    L = int(kernel.legal_mask(int(h[seat]), k, led, bool(broken), bool(first), flags))
    total = 0
    while L:
        b = L & -L
        c = b.bit_length() - 1
        L ^= b
        h[seat] ^= b
        t = trick_bits + [c]
        nb = broken or (c >> 4) == 0
        if len(t) == 4:
            w, ws, wr = leader, t[0] >> 4, t[0] & 15
            for i in range(1, 4):
                s, r = t[i] >> 4, t[i] & 15
                if (s == ws and r > wr) or (s == 0 and ws != 0):
                    w, ws, wr = (leader + i) & 3, s, r
            total += perft_kernel(h, w, [], False, nb, flags, depth - 1)
        else:
            total += perft_kernel(h, leader, t, first, nb, flags, depth - 1)
        h[seat] ^= b
    return total


def _kernel_count(pos: Position, depth: int) -> int:
    lay = solver_layout(pos.ruleset.deck)
    h = np.array([sum(1 << int(lay.bit[CARD_ID[c]]) for c in pos.hands[s]) for s in range(4)], dtype=np.int64)
    rs = pos.ruleset
    flags = np.array([1 if rs.spades_lead_any_time else 0,
                      int(lay.bit[CARD_ID["2C"]]) if rs.first_lead == "two_of_clubs" and "2C" in rs.deck else -1],
                     dtype=np.int64)
    bits = [int(lay.bit[CARD_ID[c]]) for c in pos.trick]
    broken = pos.spades_broken or any(rs.suits[c] == "S" for c in pos.trick)
    return perft_kernel(h, int(pos.leader), bits, pos.trick_number == 1, broken, flags, depth)


def _reference_count(pos: Position, depth: int) -> int:
    broken = pos.spades_broken or any(pos.ruleset.suits[c] == "S" for c in pos.trick)
    return perft_reference([list(h) for h in pos.hands], int(pos.leader), list(pos.trick), pos.trick_number,
                           broken, pos.ruleset, depth)


def _read():
    cases = []
    for line in GOLDEN.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        rules, deal, leader, trick, number, broken, counts = (x.strip() for x in line.split("|"))
        rs = get_ruleset(rules)
        d = parse_pbn_deal(deal)
        pos = Position(tuple(tuple(d[s] or ()) for s in SEATS), Seat.parse(leader),
                       () if trick == "-" else tuple(trick.split()), int(number), broken == "broken", rs)
        cases.append((pos, [int(x) for x in counts.split()]))
    return cases


CASES = _read() if GOLDEN.exists() else []


@pytest.mark.parametrize("pos,counts", CASES, ids=[f"{p.ruleset.preset}-{i}" for i, (p, _) in enumerate(CASES)])
def test_move_generator_matches_golden_counts(pos, counts):
    pos.check()
    assert [_kernel_count(pos, d) for d in range(1, DEPTH + 1)] == counts
    assert [_reference_count(pos, d) for d in range(1, DEPTH + 1)] == counts


def test_golden_file_covers_every_rule():
    kinds = {(p.ruleset.preset, p.ruleset.first_lead, p.ruleset.spades_lead_any_time, p.trick_number == 1,
              p.spades_broken) for p, _ in CASES}
    assert len(CASES) >= 30
    assert {k[0] for k in kinds} == {"standard", "barmore", "nyc"}
    assert any(k[1] == "two_of_clubs" and k[3] for k in kinds) and any(k[2] for k in kinds)
    assert any(not k[4] and not k[3] for k in kinds)  # unbroken after trick 1


def _make_cases(seed: int = 14):
    rng = random.Random(seed)
    specs = ["standard", "barmore", "nyc", {"first_lead": "two_of_clubs"}, {"spades_lead_any_time": True},
             {"preset": "barmore", "spades_lead_any_time": True}]
    out = []
    for spec in specs:
        rs = get_ruleset(spec)
        for j in range(6):
            cards = list(rs.deck.cards)
            rng.shuffle(cards)
            if j % 3 == 2:  # spade-heavy hands: leaders with only spades
                cards.sort(key=lambda c: (rs.suits[c] != "S", rng.random()))
                cards = cards[0::4] + cards[1::4] + cards[2::4] + cards[3::4]
            hands = [cards[13 * i: 13 * i + 13] for i in range(4)]
            if rs.first_lead == "two_of_clubs":
                leader = next(i for i in range(4) if "2C" in hands[i])
            else:
                leader = rng.randrange(4)
            broken, number, trick = False, 1, []
            stop = 1 if j == 0 else rng.randint(2, 11)
            while True:
                trick = []
                k_stop = rng.randrange(4) if number == stop else 4
                for k in range(k_stop):
                    seat = (leader + k) % 4
                    opts = legal_cards(hands[seat], trick, spades_broken=broken, trick_number=number, ruleset=rs)
                    c = rng.choice(opts)
                    hands[seat].remove(c)
                    trick.append(c)
                if number == stop:
                    break
                leader = (leader + rs.deck.winner_index(trick)) % 4
                broken = broken or any(rs.suits[c] == "S" for c in trick)
                number += 1
            pos = Position(tuple(tuple(h) for h in hands), Seat(leader), tuple(trick), number, broken, rs)
            pos.check()
            counts = [_reference_count(pos, d) for d in range(1, DEPTH + 1)]
            deal = format_pbn_deal({s: sort_cards(pos.hands[s]) for s in SEATS})
            out.append(" | ".join([ruleset_name(rs), deal, str(pos.leader), " ".join(pos.trick) or "-", str(number),
                                   "broken" if broken else "unbroken", " ".join(map(str, counts))]))
    return out


if __name__ == "__main__" and "--write" in sys.argv:
    lines = ["# rules | deal (PBN from N, cards still held) | leader | trick so far | trick number | spades | "
             f"legal sequences of 1..{DEPTH} cards (reference rules)"]
    GOLDEN.write_text("\n".join(lines + _make_cases()) + "\n")
    print(f"wrote {GOLDEN}")
