"""The double-dummy solver (issue 14 item 1): exact against an exhaustive search on endings,
against bridge DDS (endplay) where the rules coincide, and its move generator against golden
legal-move counts.  SOLVER_CHECKS=N multiplies the random counts (a longer local run)."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from solver_oracle import exhaustive, random_ending  # noqa: E402

from spadework.analysis.engine.replay import legal_cards  # noqa: E402
from spadework.analysis.engine.rules import get_ruleset  # noqa: E402
from spadework.analysis.solver import (  # noqa: E402
    PositionError,
    Solver,
    make_position,
    position_from_json,
    position_from_pbn,
)

SCALE = int(os.environ.get("SOLVER_CHECKS", "1"))
RULESETS = ["standard", "barmore", "nyc", {"first_lead": "two_of_clubs"}, {"spades_lead_any_time": True}]


@pytest.fixture(scope="module")
def solver():
    return Solver(tt_bits=16)


def _compare(solver, pos, nil):
    got = solver.solve(pos, nil_seat=nil, check=pos.trick_number != 1)
    want = exhaustive(pos, nil)
    assert (got.ns, got.ew, got.cards, got.nil_safe) == want, (pos, nil)


@pytest.mark.parametrize("tricks", [1, 2, 3])
def test_equals_exhaustive_search_on_short_endings(solver, tricks):
    rng = random.Random(1000 + tricks)
    for _ in range(500 * SCALE):
        rs = get_ruleset(rng.choice(RULESETS))
        # trick_number 1 with a short hand puts the first-trick rules (no spade lead, 2C) on a small tree
        pos = random_ending(rng, rs, tricks, trick_number=1 if rng.random() < 0.15 else None)
        _compare(solver, pos, rng.choice([None, None, "N", "E", "S", "W"]))


def test_equals_exhaustive_search_on_four_trick_endings(solver):
    rng = random.Random(44)
    for i in range(120 * SCALE):
        rs = get_ruleset(rng.choice(RULESETS))
        pos = random_ending(rng, rs, 4, broken=i % 2 == 0, trick_number=1 if i % 10 == 0 else None)
        _compare(solver, pos, rng.choice([None, "N", "E", "S", "W"]))


def test_unbroken_spades_change_the_answer():
    # N may not lead the QS before spades are broken: the QD lead lets E ruff with the 3S
    hands = [("QD", "QS"), ("8C", "3S"), ("AC", "2S"), ("7S", "QH")]
    s = Solver(tt_bits=12)
    a = s.solve(make_position(hands, "N", (), 12, spades_broken=False))
    b = s.solve(make_position(hands, "N", (), 12, spades_broken=True))
    assert (a.ns, a.cards) == (1, {"QD": 1})
    assert (b.ns, b.cards) == (2, {"QD": 1, "QS": 2})


def test_nil_question_is_its_own_search():
    # S bid nil and holds the KH; N can cover with the AH only if hearts are led while N still has it
    p = make_position([("AH", "2C"), ("3H", "3C"), ("KH", "4C"), ("5H", "5C")], "E", (), 12, spades_broken=True)
    s = Solver(tt_bits=12)
    sol = s.solve(p, nil_seat="S")
    assert sol.nil_safe is True
    # with the ace elsewhere the nil is set: E leads a heart and S must take it with the KH
    p2 = make_position([("2H", "2C"), ("3H", "3C"), ("KH", "4C"), ("5H", "5C")], "E", (), 12, spades_broken=True)
    assert s.solve(p2, nil_seat="S").nil_safe is False


def _random_midgame(rng, want_broken=True):
    """A standard deal played at random (legal cards) into trick 2..9, spades broken."""
    rs = get_ruleset("standard")
    while True:
        cards = list(rs.deck.cards)
        rng.shuffle(cards)
        hands = [cards[13 * i: 13 * i + 13] for i in range(4)]
        leader = rng.randrange(4)
        broken = False
        stop_trick = rng.randint(5, 9)
        stop_k = rng.randrange(4)
        trick_no = 1
        while True:
            trick = []
            for k in range(4):
                if trick_no == stop_trick and k == stop_k:
                    break
                seat = (leader + k) % 4
                opts = legal_cards(hands[seat], trick, spades_broken=broken, trick_number=trick_no, ruleset=rs)
                c = rng.choice(opts)
                hands[seat].remove(c)
                trick.append(c)
            if trick_no == stop_trick:
                break
            w = (leader + rs.deck.winner_index(trick)) % 4
            broken = broken or any(rs.suits[c] == "S" for c in trick)
            leader = w
            trick_no += 1
        if broken or not want_broken:
            return hands, "NESW"[leader], trick, trick_no, broken


def test_equals_bridge_dds_where_the_rules_coincide():
    """Spades broken, after trick 1, standard deck: Spades play is bridge play with spades trumps."""
    endplay = pytest.importorskip("endplay")
    from endplay.dds import solve_board
    from endplay.types import Deal, Denom, Player

    from spadework.parsers.cards import format_pbn_hand

    rng = random.Random(7)
    s = Solver()
    n = 0
    for _ in range(60 * SCALE):
        hands, leader, trick, trick_no, broken = _random_midgame(rng)
        played = {(("NESW".index(leader) + i) % 4): c for i, c in enumerate(trick)}
        full = [list(hands[i]) + ([played[i]] if i in played else []) for i in range(4)]
        d = Deal("N:" + " ".join(format_pbn_hand(sorted(h, key=lambda c: "SHDC".index(c[1]))) for h in full))
        d.trump = Denom.spades
        d.first = Player.find(leader)
        for c in trick:
            d.play(c[1] + c[0])
        dds = {card.rank.abbr + "SHDC"[card.suit.value]: t for card, t in solve_board(d)}
        pos = make_position(hands, leader, trick, trick_no, broken)
        sol = s.solve(pos)
        assert sol.cards == dds, (pos, sol.cards, dds)
        n += 1
    assert n == 60 * SCALE


def test_position_errors_name_the_problem():
    with pytest.raises(PositionError, match="AS is held twice"):
        make_position([("AS", "KH"), ("2S", "QH"), ("3S", "JH"), ("AS", "TH")], "N", (), 12)
    with pytest.raises(PositionError, match="should hold 2"):
        make_position([("AS", "KH"), ("2S",), ("3S", "JH"), ("4S", "TH")], "N", (), 12)
    with pytest.raises(PositionError, match="not in the barmore deck"):
        make_position([("AS", "KH"), ("2C", "QH"), ("3S", "JH"), ("4S", "TH")], "N", (), 12, rules="barmore")
    with pytest.raises(PositionError, match="not a seat"):
        position_from_json({"deal": {"N": [], "E": [], "S": [], "W": []}, "leader": "X"})
    with pytest.raises(PositionError, match="unknown key"):
        position_from_json({"deal": {}, "leader": "N", "dealer": "N"})
    with pytest.raises(PositionError, match="spades cannot be broken before trick 1"):
        position_from_pbn("N:AKQ2.JT3.984.A52 JT9.AKQ.AKQ.KQJ4 8765.9876.765.76 43.542.JT32.T983", "W", (), 1, True)
    # without a trick number, 14 cards blamed "trick_number 0" (found by a solver audit)
    with pytest.raises(PositionError, match=r"W holds 14 cards; a seat holds at most 13"):
        position_from_pbn("N:AKQ2.JT3.984.A52 JT9.AKQ.AKQ.KQJ4 8765.9876.765.76 43.542.JT32.T9832", "W")
    with pytest.raises(TypeError, match="solve takes a Position, not str 'N:AKQ2"):
        Solver().solve("N:AKQ2.JT3.984.A52 JT9.AKQ.AKQ.KQJ4 8765.9876.765.76 43.542.JT32.T983")


def test_positions_legal_play_cannot_reach_are_refused():
    # a renege inside the current trick: N discards 2D on a club lead while holding 3C
    with pytest.raises(PositionError, match="2D in the current trick is not a legal card there: N did not follow suit to 9C while holding 3C"):
        position_from_pbn("N:.A..3 .K.4.5 .Q.6.7 .J.8.", "W", ("9C", "2D"))
    # a spade led before spades are broken by a leader holding a heart
    with pytest.raises(PositionError, match="W led a spade before spades were broken while holding JH"):
        position_from_pbn("N:A.A.. K.K.. Q.Q.. .J..", "W", ("JS",))
    assert position_from_pbn("N:A.A.. K.K.. Q.Q.. .J..", "W", ("JS",), None, True).trick == ("JS",)  # broken: legal
    # with first_lead two_of_clubs the 2C's holder leads trick 1, and leads the 2C
    deal = "N:A862.Q82.762.AT2 Q4.J9543.K54.985 975.AK7.T93.J764 KJT3.T6.AQJ8.KQ3"
    two_c = {"preset": "standard", "first_lead": "two_of_clubs"}
    with pytest.raises(PositionError, match=r"holder of the 2C \(N\) leads trick 1, not E"):
        position_from_pbn(deal, "E", rules=two_c)
    with pytest.raises(PositionError, match="AC in the current trick is not a legal card there: N holds the 2C and must lead it"):
        position_from_pbn("N:A862.Q82.762.T2 Q4.J9543.K54.985 975.AK7.T93.J764 KJT3.T6.AQJ8.KQ3", "N", ("AC",), rules=two_c)
    assert position_from_pbn(deal, "N", rules=two_c).legal_cards() == ["2C"]


def test_full_deal_from_trick_one():
    s = Solver()
    p = position_from_pbn("N:AKQ2.JT3.984.A52 JT9.AKQ.AKQ.KQJ4 8765.9876.765.76 43.542.JT32.T983", "W")
    sol = s.solve(p, nil_seat="S")
    assert (sol.ns, sol.ew) == (6, 7)
    # trick 1: no spade lead while W holds other suits
    assert set(sol.cards) == {"5H", "4H", "2H", "JD", "TD", "3D", "2D", "TC", "9C", "8C", "3C"}
    assert set(sol.cards.values()) == {7}
    assert sol.nil_safe is True


def test_equivalent_cards_that_split_in_a_matching_position():
    # E leads the KD; N ruffs with the KS or QS (equivalent: no other live card between) and
    # then leads the TS for S to overtake with the JS and cash three clubs: NS take all 5.
    # The search of the TS ruff (N keeps KS QS: S's JS can never overtake) once stored an
    # entry that matched the KS ruff's position (N holds the top spade, same lengths) though
    # there N's QS and TS are no longer equivalent.
    hands = [("TS", "QS", "KS", "3H", "6H"), ("6D", "8D", "JD", "QD", "KD"), ("JS", "TD", "4C", "5C", "TC"),
             ("5S", "7H", "QH", "5D", "9D")]
    pos = make_position(hands, "E", (), 9, spades_broken=True)
    assert Solver(tt_bits=16).solve(pos).cards == {c: 0 for c in hands[1]}
    s = Solver(tt_bits=16)
    mid = make_position([("TS", "QS", "KS", "3H", "6H"), ("6D", "8D", "JD", "QD"), ("JS", "4C", "5C", "TC"),
                         ("5S", "7H", "QH", "5D")], "E", ("KD", "TD", "9D"), 9, spades_broken=True)
    assert s.solve(mid).cards == {"KS": 5, "QS": 5, "TS": 4, "3H": 4, "6H": 4}
    assert exhaustive(pos)[0] == 5


def test_equals_exhaustive_search_on_five_trick_endings_with_a_warm_table():
    # one small table across positions: entries stored for one position are matched by others
    rng = random.Random(55)
    s = Solver(tt_bits=14)
    for i in range(9 * SCALE):
        pos = random_ending(rng, get_ruleset("standard"), 5, broken=i % 3 != 0, trick_cards=0)
        _compare(s, pos, None)


def test_judge_position_equals_exhaustive_search_for_every_card():
    # judge_position takes a best card's value from its group test and searches any other card
    # only beyond the parent's value (below it for NS, above it for EW): every card judged,
    # with the parent's value given (as analyse does) and searched, equals the exhaustive search
    import numpy as np

    from spadework.analysis.solver import kernel
    from spadework.analysis.solver.position import solver_layout
    from spadework.parsers.encoding import CARD_ID

    rng = random.Random(66)
    s = Solver(tt_bits=14)
    out_cards = np.zeros(kernel.MAX_MOVES, dtype=np.int64)
    out_best = np.zeros(kernel.MAX_MOVES, dtype=np.int64)
    costly = 0
    for i in range(90 * SCALE):
        rs = get_ruleset(rng.choice(RULESETS))
        pos = random_ending(rng, rs, rng.choice([2, 3, 4]), broken=i % 2 == 0)
        ns, ew, cards, _ = exhaustive(pos)
        mover_ew = int(pos.to_play) & 1
        best = ew if mover_ew else ns
        lay = solver_layout(rs.deck)
        for card, value in cards.items():
            costly += value != best
            for known in (-1, ns):
                _, h, ldr, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, flags = s._state(pos)
                tt_keys, tt_vals, hist, mv, sc, stats = s._tables
                got_ns, after, m = kernel.judge_position(
                    h, ldr, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, int(lay.bit[CARD_ID[card]]),
                    known, flags, tt_keys, tt_vals, hist, mv, sc, stats, out_cards, out_best)
                assert got_ns == ns, (pos, card, known)
                assert (tl - after if mover_ew else after) == value, (pos, card, known)
                n_best = sum(int(out_best[j]) for j in range(m))
                assert (n_best > 0) and all(
                    bool(out_best[j]) == (card_value_of(cards, lay, int(out_cards[j])) == best) for j in range(m)
                ), (pos, card, known)
    assert costly > 20  # cards that cost tricks were judged too


def card_value_of(cards, lay, bit):
    """The exhaustive value of the card at solver bit ``bit`` (a group's top card)."""
    return cards[lay.card[bit]]
