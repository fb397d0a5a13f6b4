"""A card played without being held (CARD_NOT_HELD) and what the other plays of that card still prove.

RULES.md section 7: CARD_NOT_HELD flags only the seat that played the card, and *that play* gets no
renege or lead finding.  The card's own holder is a different matter: a seat that was dealt the card
and plays it (without a deal: the seat that played it first) held it, whoever else played it too, so
its renege or its lead of another card than the 2C is proven by it.  Where the holder never plays it
(another seat's play is the only one), its holding rests on a deal the play contradicts, and no
finding of it rests on that card (docs/RULES_NOTES.md).

Each case runs through the reference replay and the compiled core (``assert_same``).
"""

from __future__ import annotations

import json

import pytest

from spadework.analysis.engine.checker import check_game
from spadework.parsers import jsonl
from test_core_differential import assert_same

PLAYERS = {"N": "a", "E": "b", "S": "c", "W": "d"}
BIDS = [{"seat": s, "bid": 3} for s in "NESW"]
TAKEN = {"N": 4, "E": 3, "S": 3, "W": 3}
# N hearts and AS, E diamonds, S 2C and spades, W KH and clubs
DEAL = {
    "N": ["AH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H", "3H", "2H", "AS"],
    "E": ["AD", "KD", "QD", "JD", "TD", "9D", "8D", "7D", "6D", "5D", "4D", "3D", "2D"],
    "S": ["2C", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S", "2S"],
    "W": ["KH", "AC", "KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C", "5C", "4C", "3C"],
}
# N holds the 2C here
DEAL_2C = {
    "N": ["2C", "AS", "AH", "KH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H"],
    "E": DEAL["E"],
    "S": ["3H", "2H", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S"],
    "W": ["2S", "AC", "KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C", "5C", "4C", "3C"],
}
TWO_CLUBS = {"preset": "standard", "first_lead": "two_of_clubs"}


def hand(tricks, deal=None, rules=None):
    d = {"game_id": "g", "hand": 1, "players": PLAYERS, "dealer": "W", "bids": BIDS, "taken": TAKEN,
         "tricks": [{"leader": l, "cards": c.split()} for l, c in tricks]}  # fmt: skip
    if deal:
        d["deal"] = deal
    if rules:
        d["rules"] = rules
    [item] = jsonl.loads(json.dumps(d))
    return item


CASES = {
    # no deal: W plays KH first (trick 2), N again (trick 3): W held it, so 2C on a heart lead reneged
    "another seat repeats the card, no deal": (
        hand([("N", "AH 2H 3H 2C"), ("N", "4H 5H 6H KH"), ("W", "3C KH 4C 5C")]),
        {("RENEGE", 1, "W", "2C"), ("CARD_NOT_HELD", 3, "N", "KH")},
    ),
    "the same seat repeats the card, no deal": (
        hand([("N", "AH 2H 3H 2C"), ("N", "4H 5H 6H KH"), ("W", "KH 7H 8H 9H")]),
        {("RENEGE", 1, "W", "2C"), ("CARD_NOT_HELD", 3, "W", "KH")},
    ),
    # W was dealt KH and plays it in trick 3; E's KH in trick 2 is not held
    "another seat plays the card first, with a deal": (
        hand([("N", "AH 2D 3S 3C"), ("S", "2C 4C 2H KH"), ("W", "KH 3H 3D 4S")], DEAL),
        {("RENEGE", 1, "W", "3C"), ("CARD_NOT_HELD", 2, "E", "KH")},
    ),
    # ... and when W never plays it itself, the renege rests only on a deal the play contradicts
    "the holder never plays the card, with a deal": (
        hand([("N", "AH 2D 3S 3C"), ("S", "2C 4C 2H KH"), ("W", "5C 3H 3D 4S")], DEAL),
        {("CARD_NOT_HELD", 2, "E", "KH")},
    ),
    # N played the 2C first (trick 2), E again (trick 3): N held it and led 8C to trick 1
    "the 2C repeated, no deal": (
        hand([("N", "8C 9C TC JC"), ("W", "3C 2C 4C 5C"), ("S", "QC KC AC 2C")], rules=TWO_CLUBS),
        {("LEAD_NOT_TWO_OF_CLUBS", 1, "N", "8C"), ("CARD_NOT_HELD", 3, "E", "2C")},
    ),
    # N, dealt the 2C, leads AS: LEAD_NOT_TWO_OF_CLUBS (not SPADE_LED_FIRST_TRICK), though W plays 2C too
    "the 2C repeated, with a deal": (
        hand([("N", "AS 2D 3S 3C"), ("N", "2C 3D 4S 4C"), ("S", "3H 2C 4H 4D")], DEAL_2C, TWO_CLUBS),
        {("LEAD_NOT_TWO_OF_CLUBS", 1, "N", "AS"), ("RENEGE", 1, "W", "3C"), ("CARD_NOT_HELD", 3, "W", "2C")},
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_the_holders_own_play_of_a_repeated_card_proves_its_findings(name):
    rec, expected = CASES[name]
    gc = check_game([rec])
    got = {(f.code, f.trick, str(f.seat), f.card) for f in gc.findings if f.code not in ("SCORE_MISMATCH", "TRICKS_TAKEN_MISMATCH")}
    assert got == expected
    assert assert_same([rec])["compared"] == 1  # the compiled core gives the same


def test_a_card_taken_from_the_deal_for_two_gaps_is_not_card_not_held():
    """A seat missing from two tricks with one card never played has that card taken at both gaps
    (RULES.md section 7: "exactly one card of that seat is never played in the hand"); the log
    recorded neither play, so neither is CARD_NOT_HELD: the one finding of each gap is its
    HAND_INCOMPLETE."""
    # every trick led by S (S W N E); E's card is missing from tricks 2 and 3; S plays E's QD in
    # trick 4 (not held), so E's one card never played in the hand is 2D, taken at both gaps
    s_plays = ["2C", "KS", "QS", "QD", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S"]
    w_plays = ["KH", "AC", "KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C", "5C", "4C", "3C"]
    n_plays = ["AH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H", "3H", "2H", "AS"]
    e_plays = ["AD", None, None, "KD", "JD", "TD", "9D", "8D", "7D", "6D", "5D", "4D", "3D"]
    tricks = [("S", " ".join(c for c in four if c)) for four in zip(s_plays, w_plays, n_plays, e_plays)]
    rec = hand(tricks, DEAL)
    gc = check_game([rec])
    got = [(f.code, f.trick, str(f.seat), f.card) for f in gc.findings if f.code in ("CARD_NOT_HELD", "HAND_INCOMPLETE")]
    assert got == [("HAND_INCOMPLETE", 2, "E", None), ("HAND_INCOMPLETE", 3, "E", None), ("CARD_NOT_HELD", 4, "S", "QD")]
    assert all("2D, is taken as its play there" in f.message for f in gc.findings if f.code == "HAND_INCOMPLETE")
    assert assert_same([rec])["compared"] == 1


def test_a_card_dealt_to_two_seats_is_held_by_neither_once_played():
    """The deal gives W's 7C to N as well (DEAL_INVALID, one finding).  W plays it in trick 2; N,
    void in clubs after that, discarded QH and was found to renege "while holding 7C", and again
    later (found by a rules audit).  A card already played is held by nobody (RULES.md 7), so N's
    discard is legal and N's own later play of the 7C is CARD_NOT_HELD."""
    deal = dict(DEAL, N=["AH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H", "3H", "7C", "AS"])
    # trick 1: S trumps N's AH; trick 2: S leads 2C, W 7C, N discards QH; trick 3: W leads 3C, N plays 7C
    rec = hand([("N", "AH 2D 3S KH"), ("S", "2C 7C QH 3D"), ("W", "3C 7C 4D 4S")], deal)
    gc = check_game([rec])
    got = [(f.code, f.trick, str(f.seat), f.card) for f in gc.findings if f.code not in ("SCORE_MISMATCH", "TRICKS_TAKEN_MISMATCH")]
    assert [g[0] for g in got] == ["DEAL_INVALID", "CARD_NOT_HELD"]
    assert "7C is dealt to both N" in gc.findings[0].message
    assert got[1] == ("CARD_NOT_HELD", 3, "N", "7C")
    assert assert_same([rec])["compared"] == 1  # the compiled core gives the same


@pytest.mark.parametrize(("leader", "cards", "out_of_turn"), [
    ("S", "2C 3C AH 3D", False),  # the second holder in N E S W order leads the 2C
    ("N", "2C 3D 2H 3C", False),  # the first holder
    ("E", "3D 2H 3C 2C", True),   # neither: N, the first holder, was to lead
])  # fmt: skip
def test_with_the_2c_dealt_to_two_seats_either_of_them_leads_trick_1_in_turn(leader, cards, out_of_turn):
    """``first_lead: two_of_clubs`` with the 2C dealt to N and S (DEAL_INVALID): S leading it was
    LEAD_OUT_OF_TURN, because N comes first in N E S W order (found by a regression audit).  Either
    holder leading is in turn; a seat that was not dealt it is not."""
    deal = dict(DEAL_2C, S=["2C", "2H", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S"])
    rec = hand([(leader, cards)], deal, TWO_CLUBS)
    gc = check_game([rec])
    codes = [f.code for f in gc.findings]
    assert "DEAL_INVALID" in codes
    assert ("LEAD_OUT_OF_TURN" in codes) == out_of_turn
    assert assert_same([rec])["compared"] == 1  # the compiled core gives the same
