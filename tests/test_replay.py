"""The replay: legal cards, the PlayState position, and a play case for each violation code of
RULES.md section 7 beside its legal look-alike."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spadework.analysis.engine import findings as F
from spadework.analysis.engine.findings import CheckError
from spadework.analysis.engine.replay import PlayState, first_leader, legal_cards, replay_hand
from spadework.analysis.engine.rules import BARMORE, NYC, STANDARD, get_ruleset
from spadework.parsers.cards import parse_pbn_deal, sort_key
from spadework.parsers.model import Bid, HandRecord, Trick
from spadework.parsers.seats import SEATS

N, E, S, W = SEATS

# A full deal (dealer W, so N bids and leads first):
#   N: S AK4    H A95   D 54       C AKQJT
#   E: S 76     H KQ84  D 3        C 987654
#   S: S QJT98  H JT7   D AKQ      C 32
#   W: S 532    H 632   D JT98762  C -
DEAL_TEXT = "N:AK4.A95.54.AKQJT 76.KQ84.3.987654 QJT98.JT7.AKQ.32 532.632.JT98762."
DEAL = tuple(parse_pbn_deal(DEAL_TEXT)[s] for s in SEATS)
BIDS = (Bid(N, 4), Bid(E, 2), Bid(S, 4), Bid(W, 2))


def lowest(cards):
    return sorted(cards, key=lambda c: (sort_key(c)[0], -sort_key(c)[1]))[0]


def play_out(script, deal=DEAL, dealer=W, rules=STANDARD):
    """Play the scripted cards (a card, or ``(seat, card)`` for a lead by that seat), then the lowest
    legal card for every later play.  Returns the tricks, with their winners."""
    st = PlayState.start(deal, first_leader(dealer, rules, deal), rules)
    script = list(script)
    while not st.is_over:
        if script:
            item = script.pop(0)
            if isinstance(item, tuple):
                st.play(item[1], item[0])
            else:
                st.play(item)
        else:
            st.play(lowest(st.legal_cards()))
    return tuple(Trick(t.leader, t.cards, t.winner) for t in st.completed)


def record(script=(), *, deal=DEAL, dealer=W, rules=STANDARD, bids=BIDS, hand=1, keep_deal=True, **kw):
    tricks = play_out(script, deal, dealer, rules)
    rules_spec = rules.preset if rules == get_ruleset(rules.preset) else rules.options()
    return HandRecord(
        game_id="g", hand=hand, dealer=dealer, players=("a", "b", "c", "d"), bids=tuple(bids), rules=rules_spec,
        deal=deal if keep_deal else None, tricks=tricks, **kw,
    )


def found(rec, rules=STANDARD, **kw):
    return replay_hand(rec, rules, **kw).findings


def trick_of(rec, seat, card):
    for n, t in enumerate(rec.tricks, 1):
        for s, c in zip(t.seats(), t.cards):
            if s == seat and c == card:
                return n
    return None


# --- legal_cards --------------------------------------------------------------------------------


def test_follow_suit_when_able():
    assert legal_cards(["AS", "5D", "KD", "2C"], ["9D"], spades_broken=False, trick_number=3, ruleset=STANDARD) == ["5D", "KD"]


def test_a_void_player_may_play_anything_including_a_trump():
    held = ["AS", "2C", "KH"]
    assert legal_cards(held, ["9D", "TD"], spades_broken=False, trick_number=1, ruleset=STANDARD) == held


def test_no_spade_lead_on_trick_one_unless_only_spades():
    assert legal_cards(["AS", "2C", "KH"], [], spades_broken=False, trick_number=1, ruleset=STANDARD) == ["2C", "KH"]
    assert legal_cards(["AS", "2S"], [], spades_broken=False, trick_number=1, ruleset=STANDARD) == ["AS", "2S"]
    # broken or not, trick 1 keeps the rule, even with spades_lead_any_time
    anytime = get_ruleset({"spades_lead_any_time": True})
    assert legal_cards(["AS", "2C"], [], spades_broken=True, trick_number=1, ruleset=anytime) == ["2C"]


def test_no_spade_lead_before_broken_unless_only_spades():
    assert legal_cards(["AS", "2C"], [], spades_broken=False, trick_number=4, ruleset=STANDARD) == ["2C"]
    assert legal_cards(["AS", "2C"], [], spades_broken=True, trick_number=4, ruleset=STANDARD) == ["AS", "2C"]
    assert legal_cards(["AS", "3S"], [], spades_broken=False, trick_number=4, ruleset=STANDARD) == ["AS", "3S"]
    anytime = get_ruleset({"spades_lead_any_time": True})
    assert legal_cards(["AS", "2C"], [], spades_broken=False, trick_number=4, ruleset=anytime) == ["AS", "2C"]


def test_two_of_clubs_leads_trick_one():
    r = get_ruleset({"first_lead": "two_of_clubs"})
    assert legal_cards(["2C", "AC", "KH"], [], spades_broken=False, trick_number=1, ruleset=r) == ["2C"]
    assert legal_cards(["3C", "AC", "KH"], [], spades_broken=False, trick_number=1, ruleset=r) == ["3C", "AC", "KH"]
    assert legal_cards(["2C", "AC", "KH"], [], spades_broken=False, trick_number=2, ruleset=r) == ["2C", "AC", "KH"]
    assert first_leader(W, r, DEAL) == S  # S holds the 2C
    assert first_leader(W, STANDARD, DEAL) == N
    assert first_leader(W, r, None) == N


def test_jokers_and_nyc_two_of_diamonds_are_spades():
    # nyc: 2D is a spade for following, leading and winning
    assert legal_cards(["2D", "5D", "KH"], ["AD"], spades_broken=False, trick_number=2, ruleset=NYC) == ["5D"]
    assert legal_cards(["2D", "KH"], ["AD"], spades_broken=False, trick_number=2, ruleset=NYC) == ["2D", "KH"]
    assert legal_cards(["2D", "5D", "KH"], ["3S"], spades_broken=False, trick_number=2, ruleset=NYC) == ["2D"]
    assert legal_cards(["2D", "5D"], [], spades_broken=False, trick_number=1, ruleset=NYC) == ["5D"]
    assert legal_cards(["2D", "5D"], [], spades_broken=False, trick_number=1, ruleset=STANDARD) == ["2D", "5D"]
    assert legal_cards(["BJ", "AS", "4H"], ["KS"], spades_broken=True, trick_number=5, ruleset=BARMORE) == ["BJ", "AS"]
    assert legal_cards(["BJ", "LJ"], [], spades_broken=False, trick_number=1, ruleset=BARMORE) == ["BJ", "LJ"]
    assert NYC.deck.winner_index(["AS", "2D", "KS", "BJ"]) == 3
    assert NYC.deck.winner_index(["AD", "2D", "KD", "QD"]) == 1


def test_legal_cards_of_an_empty_hand():
    assert legal_cards([], [], spades_broken=False, trick_number=13, ruleset=STANDARD) == []


# --- PlayState --------------------------------------------------------------------------------


def test_playstate_walks_through_a_hand():
    st = PlayState.start(DEAL, N, STANDARD)
    assert (st.to_play, st.trick_number, st.current_trick, st.spades_broken, st.is_over) == (N, 1, (), False, False)
    assert st.trick_leader is None and st.led_suit is None
    assert set(st.legal_cards()) == set(DEAL[N]) - {"AS", "KS", "4S"}
    assert st.can_play("5D") and not st.can_play("AS") and not st.can_play("3D")
    assert st.play("5D") is None
    assert (st.to_play, st.current_trick, st.trick_leader, st.led_suit) == (E, ("5D",), N, "D")
    assert st.legal_cards() == ["3D"]
    st.play("3D")
    st.play("AD")
    done = st.play("2D")
    assert done is not None and done.winner == S and done.number == 1 and done.cards == ("5D", "3D", "AD", "2D")
    assert done.led_suit == "D" and done.spades_broken is False and done.seats() == (N, E, S, W)
    assert st.to_play == S and st.trick_number == 2 and st.taken == (0, 0, 1, 0)
    assert st.hands[N] == tuple(c for c in DEAL[N] if c != "5D")
    assert st.held(E) == tuple(c for c in DEAL[E] if c != "3D")
    # S leads KD, W follows, N follows, E is void and trumps: spades are broken
    for c in ("KD", "6D", "4D", "7S"):
        st.play(c)
    assert st.completed[-1].winner == E and st.spades_broken
    assert "6S" in st.legal_cards()  # E may lead a spade now
    assert st.findings == []


def test_playstate_copy_is_independent():
    st = PlayState.start(DEAL, N, STANDARD)
    st.play("5D")
    other = st.copy()
    other.play("3D")
    assert st.current_trick == ("5D",) and other.current_trick == ("5D", "3D")
    assert "3D" in st.held(E) and "3D" not in other.held(E)


def test_playstate_errors():
    st = PlayState.start(DEAL, N, STANDARD)
    with pytest.raises(ValueError, match="not a card"):
        st.play("XX")
    st.play("5D")
    with pytest.raises(ValueError, match="turn"):
        st.play("AD", S)
    with pytest.raises(ValueError, match="4 hands"):
        PlayState.start(DEAL[:3], N, STANDARD)
    done = PlayState.start(DEAL, N, STANDARD)
    while not done.is_over:
        done.play(lowest(done.legal_cards()))
    assert done.trick_number == 14 and sum(done.taken) == 13 and done.legal_cards() == []
    with pytest.raises(ValueError, match="over"):
        done.play("AS")


def test_an_illegal_card_is_still_played_and_recorded():
    st = PlayState.start(DEAL, N, STANDARD, game_id="g", hand=4)
    st.play("5D")
    st.play("7S")  # E holds 3D: a renege
    assert st.current_trick == ("5D", "7S") and "7S" not in st.held(E) and st.spades_broken
    [f] = st.findings
    assert f.place == (F.RENEGE, 4, 1, E, "7S") and f.side.name == "EW" and f.game_id == "g"
    assert f.message == "hand 4, trick 1: E reneged, playing 7S on a diamond lead while holding 3D"


# --- hands: each violation and its legal look-alike -------------------------------------------


def test_a_legal_hand_has_no_finding_and_its_tricks():
    rec = record()
    rp = replay_hand(rec, STANDARD)
    assert rp.findings == [] and rp.complete and sum(rp.taken) == 13
    assert rp.taken == rp.taken_for_score
    assert [t.winner for t in rp.tricks] == [t.winner for t in rec.tricks]
    assert rp.bids == BIDS and rp.reneges == ()
    assert len(rp.tricks) == 13 and rp.tricks[0].spades_broken is False


def test_renege_message_names_the_held_card_and_when_it_was_played():
    rec = record(["5D", "7S", "AD", "2D"], hand=4)
    rec = replace(rec, hand=4)
    later = trick_of(rec, E, "3D")
    assert later is not None and later > 1
    [f] = found(rec)
    assert f.place == (F.RENEGE, 4, 1, E, "7S")
    assert f.message == f"hand 4, trick 1: E reneged, playing 7S on a diamond lead while holding 3D (played in trick {later})"
    assert replay_hand(rec, STANDARD).reneges == (E,)


def test_renege_without_a_deal_is_proven_by_the_later_play():
    rec = record(["5D", "7S", "AD", "2D"], keep_deal=False)
    [f] = found(rec)
    assert f.place == (F.RENEGE, 1, 1, E, "7S")
    assert "while holding 3D (played in trick" in f.message


def test_void_player_trumping_is_legal_and_breaks_spades():
    # trick 1: N 5D, E 3D, S AD, W 2D -> S.  trick 2: S KD, W 6D, N 4D, E void: 7S -> E.  trick 3: E leads 6S.
    rec = record(["5D", "3D", "AD", "2D", "KD", "6D", "4D", "7S", "6S"])
    assert found(rec) == []
    rp = replay_hand(rec, STANDARD)
    assert rp.tricks[2].spades_broken and rp.tricks[2].led_suit == "S" and not rp.tricks[1].spades_broken


def test_spade_led_before_broken():
    rec = record(["5D", "3D", "AD", "2D", "QS"])
    [f] = found(rec)
    assert f.place == (F.SPADE_LED_BEFORE_BROKEN, 1, 2, S, "QS")
    assert f.message.startswith("hand 1, trick 2: S led QS before spades were broken, while holding")


def test_spade_led_first_trick():
    rec = record(["AS"])
    [f] = found(rec)
    assert f.place == (F.SPADE_LED_FIRST_TRICK, 1, 1, N, "AS")
    assert f.message.startswith("hand 1, trick 1: N led AS to the first trick while holding")


def test_an_illegal_spade_lead_breaks_spades():
    # N leads AS illegally on trick 1 and wins; on trick 2 N may lead a spade: only one finding
    rec = record(["AS", "6S", "8S", "2S", "KS"])
    assert [f.code for f in found(rec)] == [F.SPADE_LED_FIRST_TRICK]


def test_a_thirteen_spade_opening_leader_may_lead_a_spade():
    deal = (
        tuple(r + "S" for r in "AKQJT98765432"),
        tuple(r + "H" for r in "AKQJT98765432"),
        tuple(r + "D" for r in "AKQJT98765432"),
        tuple(r + "C" for r in "AKQJT98765432"),
    )
    rec = record(["AS"], deal=deal)
    rp = replay_hand(rec, STANDARD)
    assert rp.findings == [] and rp.taken == (13, 0, 0, 0)


def test_a_leader_holding_only_spades_may_lead_one_before_broken():
    hearts = tuple(r + "H" for r in "KQJT98765432")
    deal = (
        ("AH",) + tuple(r + "S" for r in "AKQJT9876543"),
        ("2S",) + hearts,
        tuple(r + "D" for r in "AKQJT98765432"),
        tuple(r + "C" for r in "AKQJT98765432"),
    )
    # trick 1: N AH, E 2H, S 2D, W 2C: no spade played; trick 2: N holds only spades and leads KS
    rec = record(["AH", "2H", "2D", "2C", "KS"], deal=deal)
    rp = replay_hand(rec, STANDARD)
    assert rp.findings == [] and rp.tricks[1].spades_broken is False and rp.tricks[1].led_suit == "S"
    # the same lead while E still had a heart to follow with is fine; E dropping 2S on hearts is a renege
    bad = record(["AH", "2S", "2D", "2C"], deal=deal)
    [f] = found(bad)
    assert f.place == (F.RENEGE, 1, 1, E, "2S")


def test_nyc_two_of_diamonds_is_a_spade():
    # nyc deal: N holds 2D and 5D
    deal = (
        ("2D", "5D", "AC", "KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C", "5C", "4C"),
        ("AD", "KD", "QD", "JD", "TD", "9D", "8D", "7D", "6D", "4D", "3D", "3C", "AH"),
        ("BJ", "LJ", "2S", "AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S"),
        ("4S", "3S", "KH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H", "3H"),
    )
    assert sorted(c for h in deal for c in h) == sorted(NYC.deck.cards)
    # trick 1 led with 2D while holding clubs: a spade on the first trick
    [f] = found(record(["2D"], deal=deal, rules=NYC, bids=BIDS), NYC)
    assert f.place == (F.SPADE_LED_FIRST_TRICK, 1, 1, N, "2D")
    # N leads 4C; E 3C; S trumps? S is void in clubs: BJ; W void: 4S.  S leads 5S, W 3S, N must follow with 2D
    ok = record(["4C", "3C", "BJ", "4S", "5S", "3S", "2D", "AD"], deal=deal, rules=NYC)
    assert found(ok, NYC) == []
    # ... and following that spade lead with 5D while holding 2D is a renege
    bad = record(["4C", "3C", "BJ", "4S", "5S", "3S", "5D"], deal=deal, rules=NYC)
    [f] = found(bad, NYC)
    assert f.place == (F.RENEGE, 1, 2, N, "5D") and "on a spade lead while holding 2D" in f.message
    # under standard rules 2D is a diamond: the first play is fine
    std = replay_hand(replace(record(["2D"], deal=deal, rules=NYC), rules="standard"), STANDARD)
    assert F.SPADE_LED_FIRST_TRICK not in [x.code for x in std.findings]


def test_card_not_held_dealt_to_another_seat():
    rec = record(["3D"])  # N leads E's 3D
    [f] = found(rec)
    assert f.place == (F.CARD_NOT_HELD, 1, 1, N, "3D")
    assert f.message == "hand 1, trick 1: N played 3D, which N does not hold (it was dealt to E)"


def test_card_played_twice_with_a_deal_and_without():
    script = ["5D", "3D", "AD", "2D", "KD", "6D", "5D"]  # N plays 5D again in trick 2
    for keep in (True, False):
        rec = record(script, keep_deal=keep)
        [f] = found(rec)
        assert f.place == (F.CARD_NOT_HELD, 1, 2, N, "5D")
        assert f.message == "hand 1, trick 2: N played 5D, which N does not hold (it was already played in trick 1)"


def test_lead_out_of_turn():
    rec = record(["5D", "3D", "AD", "2D", (W, "7D")])  # S won trick 1; W leads
    [f] = found(rec)
    assert f.place == (F.LEAD_OUT_OF_TURN, 1, 2, W, "7D")
    assert f.message == "hand 1, trick 2: W led 7D, but S should have led (S won trick 1)"
    # the trick's seats follow the recorded leader and the next leader is its winner
    rp = replay_hand(rec, STANDARD)
    assert rp.tricks[1].leader == W and rp.tricks[1].seats() == (W, N, E, S)


def test_lead_out_of_turn_on_trick_one():
    rec = record([(E, "9C")])
    [f] = found(rec)
    assert f.place == (F.LEAD_OUT_OF_TURN, 1, 1, E, "9C")
    assert f.message == "hand 1, trick 1: E led 9C, but N should have led (N sits left of the dealer W)"


def test_two_of_clubs_lead():
    r = get_ruleset({"first_lead": "two_of_clubs"})
    assert found(record(["2C"], rules=r), r) == []
    [f] = found(record(["3C"], rules=r), r)
    assert f.place == (F.LEAD_NOT_TWO_OF_CLUBS, 1, 1, S, "3C")
    [f] = found(record([(N, "AC")], rules=r), r)
    assert f.place == (F.LEAD_OUT_OF_TURN, 1, 1, N, "AC") and "(S holds the 2C)" in f.message


def test_trick_winner_mismatch():
    rec = record()
    tricks = list(rec.tricks)
    tricks[0] = Trick(tricks[0].leader, tricks[0].cards, E)
    [f] = found(replace(rec, tricks=tuple(tricks)))
    real = rec.tricks[0]
    assert f.place == (F.TRICK_WINNER_MISMATCH, 1, 1, E, None)
    assert (f.field, f.recorded, f.expected) == ("winner", "E", str(real.winner))
    assert f.message.startswith(f"hand 1, trick 1: winner recorded as E, but {real.winner} won it with")


def test_hand_incomplete_and_its_look_alike_with_a_taken_record():
    rec = record()
    short = replace(rec, tricks=rec.tricks[:12])
    [f] = found(short)
    assert f.place == (F.HAND_INCOMPLETE, 1, None, None, None)
    assert f.message == "hand 1: only 12 of 13 tricks, and no tricks-taken record; scored on the tricks played"
    rp = replay_hand(short, STANDARD)
    assert sum(rp.taken_for_score) == 12 and not rp.complete
    full_taken = replay_hand(rec, STANDARD).taken
    with_taken = replace(short, taken=full_taken)
    rp2 = replay_hand(with_taken, STANDARD)
    assert rp2.findings == [] and rp2.taken_for_score == full_taken


def test_a_trick_with_fewer_than_four_cards():
    rec = record()
    tricks = list(rec.tricks)
    tricks[5] = Trick(tricks[5].leader, tricks[5].cards[:3])
    bad = replace(rec, tricks=tuple(tricks), deal=None)
    # a gap before the last recorded trick: one finding naming the trick and the seat (test_record_gaps)
    [f] = found(bad)
    assert f.place == (F.HAND_INCOMPLETE, 1, 6, N, None)
    rp = replay_hand(bad, STANDARD)
    assert rp.tricks[5].winner is None and sum(rp.taken) == 12 and not rp.score_known


def test_a_trick_with_no_cards_keeps_the_numbering():
    rec = record()
    tricks = list(rec.tricks)
    tricks[3] = Trick(tricks[3].leader, ())
    bad = replace(rec, tricks=tuple(tricks), deal=None)
    rp = replay_hand(bad, STANDARD)
    assert [t.number for t in rp.tricks] == list(range(1, 14))
    assert rp.tricks[3].cards == () and rp.tricks[3].winner is None
    leader = rec.tricks[3].leader
    assert [f.place for f in rp.findings] == [(F.HAND_INCOMPLETE, 1, 4, leader, None)]
    assert rp.findings[0].message.startswith(f"hand 1, trick 4: {_names_from(leader)} have no card recorded")
    # with the deal, each seat's one card never played is taken as its play there
    rp = replay_hand(replace(bad, deal=rec.deal), STANDARD)
    assert rp.tricks[3].cards == rec.tricks[3].cards and rp.complete


def _names_from(leader):
    names = [str(s) for s in leader.clockwise()]
    return ", ".join(names[:3]) + " and " + names[3]


def test_no_card_play_and_no_taken_record():
    rec = replace(record(), tricks=None)
    [f] = found(rec)
    assert f.message == "hand 1: no card play, and no tricks-taken record; scored on the tricks played"


def test_tricks_taken_mismatch():
    rec = record()
    taken = replay_hand(rec, STANDARD).taken
    wrong = list(taken)
    wrong[E] += 1
    [f] = found(replace(rec, taken=tuple(wrong)))
    assert f.place == (F.TRICKS_TAKEN_MISMATCH, 1, None, E, None)
    assert f.message == f"hand 1: E recorded as taking {wrong[E]} tricks, but took {taken[E]} in the play"
    assert found(replace(rec, taken=taken)) == []


def test_score_sheet_taken_must_add_up_to_13():
    sheet = replace(record(), tricks=None, deal=None, taken=(4, 3, 3, 2))
    [f] = found(sheet)
    assert f.place == (F.TRICKS_TAKEN_MISMATCH, 1, None, None, None)
    assert f.message == "hand 1: tricks taken recorded as N 4 E 3 S 3 W 2, which add up to 12, not 13"
    ok = replace(sheet, taken=(4, 3, 3, 3))
    rp = replay_hand(ok, STANDARD)
    assert rp.findings == [] and rp.taken_for_score == (4, 3, 3, 3) and rp.tricks == ()


def test_deal_invalid():
    rec = record()
    # a card dealt twice (N gets E's 9C too, so 14 cards); nothing is missing; one finding for the deal
    dup = replace(rec, deal=(DEAL[N] + ("9C",),) + DEAL[1:])
    [f] = found(dup)
    assert f.place == (F.DEAL_INVALID, 1, None, N, "9C")
    assert f.message == "hand 1: the deal is wrong: N was dealt 14 cards, not 13; 9C is dealt to both N and E"
    # the same card twice within one seat, in place of another
    twice = replace(rec, deal=(DEAL[N][:-1] + ("AS",),) + DEAL[1:])
    f = found(twice)[0]
    assert f.place == (F.DEAL_INVALID, 1, None, N, "AS")
    assert f.message == f"hand 1: the deal is wrong: AS is dealt to N twice; not dealt: {DEAL[N][-1]}"
    # a seat short of a card
    short = replace(rec, deal=(DEAL[N][:-1],) + DEAL[1:])
    fs = found(short)
    assert fs[0].place == (F.DEAL_INVALID, 1, None, N, None)
    assert fs[0].message.endswith("N was dealt 12 cards, not 13; not dealt: " + DEAL[N][-1])
    # N short and S long (N's last card moved to S): the finding sits on the first seat with a wrong
    # count, N, which is Seat 0 (a `count or seat` test once skipped it and named S)
    moved = replace(rec, deal=(DEAL[N][:-1], DEAL[E], DEAL[S] + (DEAL[N][-1],), DEAL[W]))
    [f] = [f for f in found(moved) if f.code == F.DEAL_INVALID]
    assert f.place == (F.DEAL_INVALID, 1, None, N, None)
    assert f.message == "hand 1: the deal is wrong: N was dealt 12 cards, not 13; S was dealt 14 cards, not 13"


def test_deal_invalid_card_outside_the_deck():
    # barmore has no 2C: a deal holding it
    deal = (
        ("BJ", "AC", "KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C", "5C", "4C", "3C"),
        ("LJ", "2S", "AH", "KH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H"),
        tuple(r + "S" for r in "AKQJT9876543") + ("3H",),
        tuple(r + "D" for r in "AKQJT98765432"),
    )
    rec = record(["AC"], deal=deal, rules=BARMORE, bids=(Bid(N, 3), Bid(E, 3), Bid(S, 4), Bid(W, 3)))
    assert found(rec, BARMORE) == []
    bad_deal = (deal[0][:-1] + ("2C",),) + deal[1:]
    bad = replace(rec, deal=bad_deal, tricks=tuple(
        Trick(t.leader, tuple("2C" if c == "3C" else c for c in t.cards), t.winner) for t in rec.tricks))
    [f] = found(bad, BARMORE)
    assert f.place == (F.DEAL_INVALID, 1, None, N, "2C")
    assert f.message == "hand 1: the deal is wrong: 2C is not in the barmore deck; not dealt: 3C"
    # without a deal, the play of a card outside the deck
    [g] = found(replace(bad, deal=None), BARMORE)
    n13 = trick_of(bad, N, "2C")
    assert g.place == (F.DEAL_INVALID, 1, n13, N, "2C")
    assert g.message == f"hand 1, trick {n13}: N played 2C, which is not in the barmore deck"


# --- bidding ----------------------------------------------------------------------------------


def bid_findings(bids, rules=STANDARD, dealer=W, score_before=None):
    """The findings of a score-sheet hand (bids and tricks taken, no card play): only the bidding speaks."""
    rec = HandRecord(game_id="g", hand=1, dealer=dealer, players=("a", "b", "c", "d"), bids=tuple(bids),
                     taken=(4, 3, 3, 3))
    return [f for f in replay_hand(rec, rules, score_before=score_before).findings]


def test_bids_in_order_are_clean():
    assert bid_findings(BIDS) == []


def test_two_swapped_bids_give_one_finding_on_the_seat_that_spoke_early():
    [f] = bid_findings([Bid(E, 2), Bid(N, 4), Bid(S, 4), Bid(W, 2)])
    assert f.place == (F.BID_OUT_OF_TURN, 1, None, E, None)
    assert f.message == "hand 1: E bid 2 out of turn: N was to bid first"


def test_a_second_bid_is_out_of_turn_and_ignored():
    fs = bid_findings(list(BIDS) + [Bid(N, 7)])
    [f] = fs
    assert f.place == (F.BID_OUT_OF_TURN, 1, None, N, None)
    assert f.message == "hand 1: N bid a second time (7 after 4); the second bid is ignored"
    rec = replace(record(), bids=BIDS + (Bid(N, 7),))
    assert replay_hand(rec, STANDARD).bids[N] == Bid(N, 4)


def test_bid_missing_does_not_make_the_others_late():
    [f] = bid_findings(BIDS[1:])
    assert f.place == (F.BID_MISSING, 1, None, N, None)
    assert f.message == "hand 1: N has no bid"


@pytest.mark.parametrize(
    "bid, words",
    [
        (Bid(E, 14), "E bid 14, which is not a bid (a whole number 1 to 13, or nil)"),
        (Bid(E, 4.5), "E bid 4.5, which is not a bid"),
        (Bid(E, -1), "E bid -1, which is not a bid"),
        (Bid(E, 14, blind=True), "E bid blind 14, which is not a bid"),  # (it said "bid 14")
    ],
)
def test_bid_invalid_values(bid, words):
    [f] = bid_findings([BIDS[0], bid, BIDS[2], BIDS[3]])
    assert f.place == (F.BID_INVALID, 1, None, E, None)
    assert words in f.message


def test_nil_and_blind_nil_in_barmore_are_invalid():
    [f] = bid_findings([Bid(N, 3), Bid(E, 0, nil=True), Bid(S, 3), Bid(W, 3)], rules=BARMORE)
    assert f.place == (F.BID_INVALID, 1, None, E, None) and "nil, which the barmore rules do not allow" in f.message
    [f] = bid_findings([Bid(N, 3), Bid(E, 0, nil=True, blind=True), Bid(S, 3), Bid(W, 3)], rules=BARMORE)
    assert f.code == F.BID_INVALID and "blind nil, which the barmore rules do not have" in f.message


def test_blind_nil_eligible_and_not():
    bids = [Bid(N, 0, nil=True, blind=True), Bid(E, 2), Bid(S, 4), Bid(W, 2)]
    assert bid_findings(bids, score_before=(100, 200)) == []  # NS behind by exactly 100
    [f] = bid_findings(bids, score_before=(110, 200))
    assert f.place == (F.BLIND_BID_NOT_ALLOWED, 1, None, N, None)
    assert f.message == "hand 1: N bid blind nil, but NS may bid blind nil only when behind by 100 or more (NS 110, EW 200)"
    [f] = bid_findings(bids)  # 0-0
    assert f.code == F.BLIND_BID_NOT_ALLOWED
    assert bid_findings(bids, rules=get_ruleset({"blind_nil": "always"})) == []
    [f] = bid_findings(bids, rules=get_ruleset({"blind_nil": "never"}))
    assert f.code == F.BID_INVALID


def test_barmore_blind_seven_and_its_silent_partner():
    # N bids blind 7 first for NS: S makes no bid of its own and is not missing
    bids = [Bid(N, 7, blind=True), Bid(E, 3), Bid(W, 3)]
    assert bid_findings(bids, rules=BARMORE) == []
    sheet = HandRecord(game_id="g", hand=1, dealer=W, players=("a", "b", "c", "d"), bids=tuple(bids), taken=(4, 3, 3, 3))
    assert replay_hand(sheet, BARMORE).bids == (bids[0], bids[1], None, bids[2])
    # the silent partner bidding anyway
    [f] = bid_findings(bids[:1] + [Bid(E, 3), Bid(S, 2), Bid(W, 3)], rules=BARMORE)
    assert f.place == (F.BID_OUT_OF_TURN, 1, None, S, None)
    assert "its partner's blind 7 is the side's bid" in f.message
    # blind 7 by the second partner to speak
    [f] = bid_findings([Bid(N, 3), Bid(E, 3), Bid(S, 7, blind=True), Bid(W, 3)], rules=BARMORE)
    assert f.place == (F.BLIND_BID_NOT_ALLOWED, 1, None, S, None)
    # a blind bid barmore does not have
    # a blind bid barmore does not have: invalid, and it does not excuse the partner from bidding
    f, g = bid_findings([Bid(N, 6, blind=True), Bid(E, 3), Bid(W, 3)], rules=BARMORE)
    assert f.code == F.BID_INVALID and f.message == "hand 1: N bid blind 6, which the barmore rules do not have (blind bids: 7)"
    assert g.place == (F.BID_MISSING, 1, None, S, None)


def test_side_bid_limits():
    r = get_ruleset({"min_side_bid": 4})
    [f] = bid_findings([Bid(N, 1), Bid(E, 2), Bid(S, 2), Bid(W, 2)], rules=r)
    assert f.place == (F.BID_INVALID, 1, None, None, None) and f.side.name == "NS"
    assert f.message == "hand 1: NS bid 3 together; the minimum side bid is 4"
    assert bid_findings([Bid(N, 0, nil=True), Bid(E, 2), Bid(S, 2), Bid(W, 2)], rules=r) == []  # a nil side is exempt
    # RULES.md section 5: "a side with a nil bidder is exempt", blind nil included, whatever the partner bids
    r_any = get_ruleset({"min_side_bid": 4, "blind_nil": "always"})
    assert bid_findings([Bid(N, 1), Bid(E, 2), Bid(S, 0, nil=True, blind=True), Bid(W, 2)], rules=r_any) == []
    assert bid_findings([Bid(N, 0, nil=True), Bid(E, 0, nil=True), Bid(S, 0, nil=True), Bid(W, 0, nil=True)], rules=r) == []
    os_rules = get_ruleset("openspiel")
    [f] = bid_findings([Bid(N, 7), Bid(E, 2), Bid(S, 7), Bid(W, 2)], rules=os_rules)
    assert f.code == F.BID_INVALID and "partners may bid at most 13" in f.message
    assert bid_findings([Bid(N, 7), Bid(E, 2), Bid(S, 6), Bid(W, 2)], rules=os_rules) == []


def test_bids_follow_the_recorded_dealer():
    bids = [Bid(S, 3), Bid(W, 3), Bid(N, 3), Bid(E, 3)]
    assert bid_findings(bids, dealer=E) == []


# --- error policy ------------------------------------------------------------------------------


def test_raise_policy_stops_at_the_first_finding():
    rec = record(["5D", "7S", "AD", "2D"])
    with pytest.raises(CheckError) as exc:
        replay_hand(rec, STANDARD, policy="raise")
    assert exc.value.finding.code == F.RENEGE
    assert str(exc.value) == exc.value.finding.message
    assert replay_hand(rec, STANDARD, policy="collect").findings[0].code == F.RENEGE
    with pytest.raises(ValueError):
        replay_hand(rec, STANDARD, policy="ignore")


# --- CARD_NOT_HELD is the whole finding for that card (RULES.md section 7; issue 11 item 3) ---------


def test_no_renege_rests_on_a_card_played_twice_without_a_deal():
    # E plays 3D in trick 1 and again in trick 3; without a deal E is taken to hold what it played, so
    # its "3D" in trick 2 (a diamond lead E did not follow) is the not-held card: CARD_NOT_HELD alone
    script = ["5D", "3D", "AD", "2D", "KD", "6D", "4D", "4C", "QD", "7D", "TC", "3D"]
    rec = record(script, keep_deal=False)
    assert [f.place for f in found(rec)] == [(F.CARD_NOT_HELD, 1, 3, E, "3D")]
    assert [f.place for f in found(record(script))] == [(F.CARD_NOT_HELD, 1, 3, E, "3D")]


def test_a_renege_rests_on_a_card_another_seat_played_only_when_its_holder_plays_it():
    # W plays E's 3D in trick 1 (not held); E, whose only diamond that was, does not follow in trick 2
    # and plays its 3D itself in trick 5: E held it (dealt and played), so the renege stands (RULES.md
    # section 7 exempts only W's play of it); tests/test_card_not_held_proofs.py has the holder that
    # never plays it, whose renege would rest on a deal the play contradicts
    rec = record(["5H", "4H", "7H", "3D", "QD", "2D", "4D", "6C"])
    assert [f.place for f in found(rec)] == [(F.CARD_NOT_HELD, 1, 1, W, "3D"), (F.RENEGE, 1, 2, E, "6C")]


def test_no_lead_finding_on_a_card_not_held():
    # W leads N's AS to trick 2, out of turn (S won trick 1) and before spades are broken
    rec = record(["5D", "3D", "AD", "2D", (W, "AS")])
    [f] = found(rec)
    assert f.place == (F.CARD_NOT_HELD, 1, 2, W, "AS")
    # the same lead by the right seat, S, of a spade S does not hold
    rec = record(["5D", "3D", "AD", "2D", "AS"])
    assert [f.place for f in found(rec)] == [(F.CARD_NOT_HELD, 1, 2, S, "AS")]


def test_a_two_of_clubs_holder_leading_a_spade_is_lead_not_two_of_clubs_alone():
    r = get_ruleset({"first_lead": "two_of_clubs"})
    [f] = found(record(["QS"], rules=r), r)
    assert f.place == (F.LEAD_NOT_TWO_OF_CLUBS, 1, 1, S, "QS")
    assert f.message == "hand 1, trick 1: S led QS to the first trick, but the holder of the 2C must lead it"
    # a spade lead to trick 1 by a leader without the 2C is still SPADE_LED_FIRST_TRICK
    [f] = found(record(["4S"]))
    assert f.place == (F.SPADE_LED_FIRST_TRICK, 1, 1, N, "4S")


def test_no_renege_against_the_lead_of_a_card_not_held():
    # W "leads" N's AS to trick 2 (S won trick 1, so W is out of turn too): the log is wrong at that
    # lead, so nobody is flagged for not following spades to it; W's CARD_NOT_HELD is the whole finding
    rec = record(["5D", "3D", "AD", "2D", (W, "AS"), "5H", "4C", "7H"])
    assert [f.place for f in found(rec)] == [(F.CARD_NOT_HELD, 1, 2, W, "AS")]


def test_replay_hand_takes_the_rules_as_check_game_does():
    """``replay_hand(rec, "standard")`` was an AttributeError (found by an API audit)."""
    rec = record(["QS"])
    assert [f.place for f in replay_hand(rec, "standard").findings] == [f.place for f in found(rec)]
