"""Gaps in the record (RULES.md section 7, "Gaps in the record"; issue 11 item 2): a trick missing a card
before the hand's last recorded trick, a hand missing inside a game, a trick recorded with 5 cards.  Each
gives one finding that names the gap, never findings that only follow from it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spadework.analysis.engine import findings as F
from spadework.analysis.engine.checker import check_game, check_records
from spadework.analysis.engine.replay import replay_hand
from spadework.analysis.engine.rules import STANDARD
from spadework.parsers import jsonl
from spadework.parsers.model import HandRecord, LoadError, Trick
from spadework.parsers.seats import SEATS, Side
from test_checker import sheet
from test_replay import record

N, E, S, W = SEATS

# record() plays DEAL (test_replay) with the lowest legal card: N E S W take 4 1 8 0 tricks.
#  trick 5: S leads KD, W 6D, N 5D, E ruffs with 6S (E wins)
#  trick 6: E leads 7S, S 8S, W 2S, N 4S (S wins)
#  trick 12: S leads QS, W TD, N KC, E 8C
FULL = record()
TAKEN = replay_hand(FULL, STANDARD).taken


def drop_last_card(rec: HandRecord, n: int, keep: int = 3) -> HandRecord:
    """``rec`` with trick ``n`` (1..13) cut to its first ``keep`` cards."""
    tricks = list(rec.tricks)
    t = tricks[n - 1]
    tricks[n - 1] = Trick(t.leader, t.cards[:keep])
    return replace(rec, tricks=tuple(tricks))


def places(fs):
    return [f.place for f in fs]


# --- a card missing from a trick before the last recorded one ---------------------------------------


def test_a_missing_card_is_taken_from_the_deal_and_the_trick_replayed():
    # N's 4S is missing from trick 6; without it N would still "hold" it in trick 12 (a false renege)
    for taken in (TAKEN, None):
        bad = replace(drop_last_card(FULL, 6), taken=taken)
        rp = replay_hand(bad, STANDARD)
        [f] = rp.findings
        assert f.place == (F.HAND_INCOMPLETE, 1, 6, N, None)
        assert f.message == (
            "hand 1, trick 6: N has no card recorded in this trick, though the hand goes on to trick 13; "
            "N's one card never played in the hand, 4S, is taken as its play there"
        )
        assert rp.tricks[5].cards == ("7S", "8S", "2S", "4S") and rp.tricks[5].winner == S
        assert rp.taken == TAKEN and rp.taken_for_score == TAKEN


def test_two_missing_cards_of_one_trick_are_both_taken_from_the_deal():
    bad = drop_last_card(FULL, 6, keep=2)
    [f] = replay_hand(bad, STANDARD).findings
    assert f.place == (F.HAND_INCOMPLETE, 1, 6, W, None)
    assert f.message == (
        "hand 1, trick 6: W and N have no card recorded in this trick, though the hand goes on to trick 13; "
        "the one card each never played in the hand (W 2S, N 4S) is taken as its play there"
    )


def test_a_missing_card_without_a_deal_leaves_the_trick_without_a_winner():
    for taken in (TAKEN, None):
        bad = replace(drop_last_card(FULL, 6), deal=None, taken=taken)
        rp = replay_hand(bad, STANDARD)
        [f] = rp.findings
        assert f.place == (F.HAND_INCOMPLETE, 1, 6, N, None)
        assert f.message.startswith(
            "hand 1, trick 6: N has no card recorded in this trick, though the hand goes on to trick 13; "
            "the trick has no winner"
        )
        assert rp.tricks[5].winner is None
        assert rp.taken_for_score == (TAKEN if taken is not None else rp.taken)
        assert rp.score_known is (taken is not None)


def test_no_renege_or_lead_finding_rests_only_on_the_unknown_card():
    # the hand stops after trick 12, so N (4S and AC never played) and E (6S and JD) have no single
    # card to take: the missing card stays unknown.
    short = replace(FULL, tricks=FULL.tricks[:12], taken=TAKEN)
    # N: a renege in trick 12 (KC on QS) would rest only on the 4S missing from trick 6
    [f] = replay_hand(drop_last_card(short, 6), STANDARD).findings
    assert f.place == (F.HAND_INCOMPLETE, 1, 6, N, None)
    assert "the trick has no winner and the next trick's leader is not checked" in f.message
    # E: the 6S missing from trick 5 may have broken spades (no SPADE_LED_BEFORE_BROKEN on E's 7S lead in
    # trick 6), and E's reneges in tricks 7, 8 and 12 would rest only on it
    [f] = replay_hand(drop_last_card(short, 5), STANDARD).findings
    assert f.place == (F.HAND_INCOMPLETE, 1, 5, E, None)


def test_a_renege_proven_by_another_card_is_still_found_after_a_gap():
    # E does not follow to N's 4D lead in trick 4 while holding 3D, which E plays later
    rec = record(["5H", "4H", "7H", "2H", "TH", "3H", "9H", "8H", "JH", "6H", "AH", "QH", "4D", "4C"])
    assert [f.place for f in replay_hand(rec, STANDARD).findings] == [(F.RENEGE, 1, 4, E, "4C")]
    # trick 2 loses E's 3H: E still has 3D, played later, so the renege in trick 4 is proven
    gap = drop_last_card(replace(rec, tricks=rec.tricks[:12]), 2)
    got = places(replay_hand(gap, STANDARD).findings)
    assert (F.RENEGE, 1, 4, E, "4C") in got


def test_the_last_recorded_trick_short_is_not_a_gap():
    bad = drop_last_card(FULL, 13)
    [f] = replay_hand(bad, STANDARD).findings
    # the finding names the short trick and the first seat with no card there (S led, W and N followed)
    assert f.place == (F.HAND_INCOMPLETE, 1, 13, E, None) and f.side == E.side
    assert f.message == "hand 1: trick 13 has fewer than 4 cards, and no tricks-taken record; scored on the tricks played"
    assert replay_hand(replace(bad, taken=TAKEN), STANDARD).findings == []


@pytest.mark.parametrize("empty", [2, 3])
@pytest.mark.parametrize("with_taken", [True, False])
def test_tricks_recorded_without_any_card_are_the_end_of_the_record_not_a_gap(empty, with_taken):
    """A hand whose recorded tricks hold no card at all has no "last recorded trick" for a gap to
    come before.  The reference sliced the tricks before it as ``tricks[:last - 1]`` with last = 0,
    that is every trick but the last, and flagged trick 1 "though the hand goes on to trick 0"
    (found by the differential test: the core said nothing)."""
    from test_core_differential import assert_same

    rec = replace(FULL, tricks=tuple(Trick(N, ()) for _ in range(empty)), taken=TAKEN if with_taken else None)
    found = replay_hand(rec, STANDARD).findings
    if with_taken:
        assert found == []
    else:
        assert places(found) == [(F.HAND_INCOMPLETE, 1, None, None, None)]
        assert "no tricks-taken record" in found[0].message
    assert assert_same([rec])["compared"] == 1  # the compiled core gives the same


def _scored(rec, h, totals, dealer=None):
    """``rec`` as hand ``h`` of a game, recording the given score (NS, EW) as (points, total, bags)."""
    from spadework.parsers.model import SideScore

    return replace(rec, hand=h, dealer=dealer or rec.dealer,
                   score=tuple(SideScore(*v) for v in totals))


def test_a_gap_with_no_taken_leaves_the_hands_score_unchecked():
    # hand 1 misses E's 6S in trick 5 and stops after trick 12 (no single card to take, no taken);
    # its recorded score (whatever the log says: here the full hand's) is not checked and the game goes
    # on from it; hand 2 is a score sheet that follows on.
    h1 = drop_last_card(replace(FULL, tricks=FULL.tricks[:12]), 5)
    # N 4 + S 4: NS contract 8, took 12 -> 84, 4 bags; EW 4 bid (E 2, W 2) took 1: -40
    h1 = _scored(h1, 1, [(84, 84, 4), (-40, -40, 0)])
    h2 = sheet(2, "N", "E 2, S 3, W 3, N 3", (4, 2, 4, 3), {"NS": (62, 146, 6), "EW": (50, 10, 0)})
    gc = check_game([h1, h2])
    assert [(f.code, f.hand, f.trick) for f in gc.findings] == [
        (F.HAND_INCOMPLETE, 1, 5),
        (F.HAND_INCOMPLETE, 1, None),
    ]
    assert "the hand's recorded score is not checked" in gc.findings[0].message
    ns1 = [r for r in gc.hand_scores if r["hand"] == 1 and r["side"] == "NS"][0]
    assert (ns1["total"], ns1["bags"]) == (84, 4)  # the true state goes on from the recorded score
    assert gc.totals == (146, 10)


CUT_SHORT = {
    "no card play": replace(FULL, tricks=()),
    "12 tricks": replace(FULL, tricks=FULL.tricks[:12]),
    "trick 13 short": drop_last_card(FULL, 13),
}


@pytest.mark.parametrize("cut", sorted(CUT_SHORT))
def test_a_hand_that_stops_early_is_scored_on_the_tricks_played_and_its_score_checked(cut):
    """RULES.md section 5 item 6: a hand with fewer than 13 tricks and no tricks-taken record is scored
    on the tricks played, and that score is the true state (the recomputed scores never take a
    recorded value but at a gap whose trick has no winner, or a missing hand: section 7).  So the
    hand's recorded score is checked against it (the checker took the recorded total as the true
    state here, and the hand's row read points -80 with a total of 84)."""
    from test_core_differential import assert_same

    # hand 1 records the full hand's score (NS 8 bid, 12 taken: 84, 4 bags; EW 4 bid, 1 taken: -40);
    # hand 2 (NS bid 6, take 8: 62, 2 bags; EW bid 5, take 5: 50) carries the log's totals on
    h1 = _scored(CUT_SHORT[cut], 1, [(84, 84, 4), (-40, -40, 0)])
    h2 = sheet(2, "N", "E 2, S 3, W 3, N 3", (4, 2, 4, 3), {"NS": (62, 146, 6), "EW": (50, 10, 0)})
    gc = check_game([h1, h2])
    # tricks played: none (NS set, -80) or 12, of which NS took 11 (83, 3 bags)
    points, bags = (-80, 0) if cut == "no card play" else (83, 3)
    assert [(f.code, f.hand, f.field, f.expected) for f in gc.findings] == [
        (F.HAND_INCOMPLETE, 1, None, None),
        (F.SCORE_MISMATCH, 1, "points", points),
        (F.SCORE_MISMATCH, 1, "total", points),
        (F.SCORE_MISMATCH, 1, "bags", bags),
    ]
    assert gc.findings[0].message.endswith("and no tricks-taken record; scored on the tricks played")
    rows = {(r["hand"], r["side"]): (r["points"], r["total"], r["bags"]) for r in gc.hand_scores}
    assert rows[1, "NS"] == (points, points, bags)
    assert rows[2, "NS"] == (62, points + 62, bags + 2)  # hand 2 agrees with the log's own state: no finding
    assert gc.totals == (points + 62, 10)
    assert assert_same([h1, h2])["compared"] == 1  # the compiled core gives the same

    # the score the tricks played give, recorded: nothing but the HAND_INCOMPLETE
    ok = _scored(CUT_SHORT[cut], 1, [(points, points, bags), (-40, -40, 0)])
    assert [f.code for f in check_game([ok]).findings] == [F.HAND_INCOMPLETE]
    assert assert_same([ok])["compared"] == 1


def test_a_recorded_total_past_the_target_on_a_hand_that_stops_early_does_not_end_the_game():
    from test_core_differential import assert_same

    # hand 1 has bids only and records NS 520; the true state is NS -80 (set), so hand 2 is no
    # PLAYED_AFTER_GAME_END and the game is unfinished
    h1 = _scored(CUT_SHORT["no card play"], 1, [(520, 520, 0), (-40, -40, 0)])
    h2 = sheet(2, "N", "E 2, S 3, W 3, N 3", (4, 2, 4, 3), {"NS": (62, 582, 2), "EW": (50, 10, 0)})
    gc = check_game([h1, h2])
    assert F.PLAYED_AFTER_GAME_END not in [f.code for f in gc.findings]
    assert (gc.game["winner"], gc.game["ended_at_hand"], gc.totals) == (None, None, (-18, 10))
    assert assert_same([h1, h2])["compared"] == 1


# --- a hand missing inside a game ---------------------------------------------------------------------


def _four_hands():
    # every hand: NS bid 6, take 8 (62, 2 bags); EW bid 5, take 5 (50)
    return [
        sheet(1, "N", "E 2, S 3, W 3, N 3", (4, 2, 4, 3), {"NS": (62, 62, 2), "EW": (50, 50, 0)}),
        sheet(2, "E", "S 3, W 3, N 3, E 2", (4, 2, 4, 3), {"NS": (62, 124, 4), "EW": (50, 100, 0)}),
        sheet(3, "S", "W 3, N 3, E 2, S 3", (4, 2, 4, 3), {"NS": (62, 186, 6), "EW": (50, 150, 0)}),
        sheet(4, "W", "N 3, E 2, S 3, W 3", (4, 2, 4, 3), {"NS": (62, 248, 8), "EW": (50, 200, 0)}),
        sheet(5, "N", "E 2, S 3, W 3, N 3", (4, 2, 4, 3), {"NS": (-38, 210, 0), "EW": (50, 250, 0)}),
    ]


def test_a_missing_hand_is_one_finding_on_the_next_hand():
    hands = _four_hands()
    assert check_game(hands).findings == []
    del hands[2]
    gc = check_game(hands)
    [f] = gc.findings
    assert f.place == (F.HAND_MISSING, 4, None, None, None)
    assert f.message == (
        "hand 4: hand 3 is missing (not in the log, or rejected when it was read); "
        "hand 4's recorded score is not checked, and the game goes on from it"
    )
    assert gc.totals == (210, 250)
    ns4 = [r for r in gc.hand_scores if r["hand"] == 4 and r["side"] == "NS"][0]
    assert (ns4["total"], ns4["bags"]) == (248, 8)


def test_the_result_after_a_missing_hand_comes_from_the_recorded_totals():
    # from 350-350: hand 1 NS 412, EW 400; hand 2 (missing) takes EW to 480; hand 3: EW 530 and win.
    # Without hand 2 the recomputed totals would be 474-450 (no winner yet)
    hands = [
        sheet(1, "N", "E 2, S 3, W 3, N 3", (4, 2, 4, 3), {"NS": (62, 412, 2), "EW": (50, 400, 0)},
              score_before=(350, 350), bags_before=(0, 0)),
        sheet(3, "S", "W 3, N 3, E 2, S 3", (4, 2, 4, 3), {"NS": (62, 484, 5), "EW": (50, 530, 0)}, winner=Side.EW),
    ]
    gc = check_game(hands)
    assert [(f.code, f.hand) for f in gc.findings] == [(F.HAND_MISSING, 3)]
    assert gc.winner == Side.EW and gc.totals == (484, 530) and gc.ended_at_hand == 3


def test_a_missing_hand_with_a_score_before_is_checked_from_it():
    hands = _four_hands()
    del hands[2]
    hands[2] = replace(hands[2], score_before=(186, 150), bags_before=(6, 0))
    gc = check_game(hands)
    [f] = gc.findings
    assert f.message == "hand 4: hand 3 is missing (not in the log, or rejected when it was read); the game goes on from hand 4's recorded score before it"
    # a wrong value of that hand is still found
    sc = list(hands[2].score)
    sc[1] = replace(sc[1], points=60)
    hands[2] = replace(hands[2], score=tuple(sc))
    got = [(f.code, f.hand, f.field) for f in check_game(hands).findings]
    assert got == [(F.HAND_MISSING, 4, None), (F.SCORE_MISMATCH, 4, "points")]


def test_several_missing_hands_are_named_together():
    hands = _four_hands()
    del hands[1:3]
    [f] = check_game(hands).findings
    assert f.place == (F.HAND_MISSING, 4, None, None, None)
    assert f.message.startswith("hand 4: hands 2 and 3 are missing")
    hands = [hands[0], sheet(7, "S", "W 3, N 3, E 2, S 3", (4, 2, 4, 3), {"NS": (62, 400, 2)})]
    [f] = check_game(hands).findings
    assert f.message.startswith("hand 7: hands 2 to 6 are missing")


def test_a_blind_nil_after_a_missing_hand_uses_the_score_the_log_shows():
    # hand 2 is missing; at hand 3 NS bid blind nil.  The recorded totals say NS are 141 behind, which
    # the recomputed chain (without hand 2) cannot know: no BLIND_BID_NOT_ALLOWED
    hands = [
        sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4), {"NS": (60, 60, 0), "EW": (61, 61, 1)}),
        # the log: NS -10, EW 200 before hand 3 (its recorded totals less its recorded points)
        sheet(3, "S", "W 4, N bn, E 4, S 3", (0, 5, 4, 4), {"NS": (231, 221, 1), "EW": (81, 281, 2)}),
    ]
    got = [f.code for f in check_game(hands).findings]
    assert got == [F.HAND_MISSING]


def test_a_trick_of_five_cards_does_not_cost_the_rest_of_the_game_its_checks():
    hands = _four_hands()
    objs = [jsonl.record_to_obj(h) for h in hands]
    import orjson

    # a played hand 2 with a fifth card in trick 5: the record is rejected when it is read
    played = jsonl.record_to_obj(replace(FULL, hand=2, dealer=E, game_id="g"))
    played["tricks"][4]["cards"].append("9C")
    objs[1] = {**played, "score": objs[1]["score"], "taken": objs[1]["taken"]}
    text = "\n".join(orjson.dumps(o).decode() for o in objs)
    items = list(jsonl.loads(text))
    assert [type(i) for i in items] == [HandRecord, LoadError, HandRecord, HandRecord, HandRecord]
    summary = check_records([i for i in items if isinstance(i, HandRecord)])
    assert [(f.code, f.hand) for f in summary.findings] == [(F.HAND_MISSING, 3)]


def test_the_fast_path_sends_a_game_with_a_missing_hand_to_the_reference():
    # a game recording no score: only the gap in its hand numbers tells (HAND_MISSING)
    from spadework.analysis.engine.checker import check_db
    from spadework.analysis.engine.engines import check_compiled as check_fast
    from spadework.analysis.sim.season import iter_season
    from spadework.parsers.db import connect, load_items

    [game] = list(iter_season(4, 1, 3))
    recs = [replace(r, score=None, winner=None) for r in game.records[:6]]
    del recs[3]
    dbs = []
    for check in (check_db, check_fast):
        con = connect(None)
        load_items(con, iter(recs), "mem")
        summary = check(con)
        dbs.append(([f.to_row() for f in summary.findings], con.execute("SELECT * FROM games").fetchall()))
    assert dbs[0] == dbs[1]
    assert [(r["code"], r["hand"]) for r in dbs[0][0]] == [(F.HAND_MISSING, 5)]


def test_a_score_sheet_made_from_a_log_with_a_gap_counts_the_card_taken_from_the_deal():
    # the converter takes tricks taken from the replay, which fills the gap (it used to count only
    # complete tricks, so the sheet said S took 7 and checking it gave a false TRICKS_TAKEN_MISMATCH)
    from spadework.analysis.convert import score_sheet_record

    bad = replace(drop_last_card(FULL, 6), taken=None)
    sheet_rec = score_sheet_record(bad)
    assert sheet_rec.taken == TAKEN
    assert check_records([replace(sheet_rec, tricks=None)]).findings == []


@pytest.mark.parametrize(
    "tricks, place",
    [
        # trick 13 led by S: S, W and N played; E is the first seat with no card
        (lambda: drop_last_card(FULL, 13).tricks, (13, E)),
        # 12 tricks, the 12th cut to its leader's card: the seat after the leader has none
        (lambda: drop_last_card(replace(FULL, tricks=FULL.tricks[:12]), 12, keep=1).tricks, (12, "next")),
        # tricks short at the end, but no one trick to name
        (lambda: FULL.tricks[:11] + (Trick(N, ()), Trick(N, ())), (None, None)),
        (lambda: FULL.tricks[:12], (None, None)),
        (lambda: (), (None, None)),
    ],
    ids=["trick 13 short", "trick 12 short of 12", "two empty tricks", "12 tricks", "no card play"],
)
def test_the_hands_own_incomplete_names_its_one_short_trick(tricks, place):
    """RULES.md section 7: a finding gives the trick number and the seat where they apply.  The
    HAND_INCOMPLETE of a hand with no tricks-taken record names the short trick at the end when there
    is exactly one (and the first seat with no card in it); a hand that only has fewer tricks, or
    several short ones, is named as a whole.  The compiled core gives the same place."""
    from test_core_differential import assert_same

    rec = replace(FULL, tricks=tricks(), taken=None)
    trick, seat = place
    if seat == "next":
        seat = rec.tricks[11].leader.left
    [f] = replay_hand(rec, STANDARD).findings
    assert (f.code, f.trick, f.seat, f.side) == (F.HAND_INCOMPLETE, trick, seat, seat.side if seat else None)
    assert assert_same([rec])["compared"] == 1


@pytest.mark.parametrize("rules, bid, points", [("standard", 3, 50), ("barmore", 6, 80)])
def test_a_blind_bid_the_ruleset_does_not_have_is_scored_as_the_plain_bid(rules, bid, points):
    """RULES.md section 3: such a bid is BID_INVALID and "the hand is still scored with the bid as
    recorded", by section 5 item 3's +10 x contract (it was scored at 20 a trick, as a blind bid the
    ruleset has with no points of its own is).  A log recording that score gets no SCORE_MISMATCH."""
    from test_core_differential import assert_same

    line = jsonl.jsontext.dumps({
        "game_id": "g", "hand": 1, "rules": rules, "players": {"N": "a", "E": "b", "S": "c", "W": "d"}, "dealer": "N",
        "bids": [{"seat": "E", "bid": bid, "blind": True}, {"seat": "S", "bid": 3}, {"seat": "W", "bid": 2}, {"seat": "N", "bid": 3}],
        "taken": {"N": 3, "E": bid, "S": 13 - 5 - bid, "W": 2},  # EW make their contract exactly
        "score": {"EW": {"points": points, "total": points}},
    })
    (rec,) = jsonl.loads(line)
    gc = check_game([rec])
    assert [f.code for f in gc.findings] == [F.BID_INVALID]
    ew = next(r for r in gc.hand_scores if r["side"] == "EW")
    assert (ew["contract"], ew["made"], ew["points"]) == (bid + 2, True, points)
    assert assert_same([rec])["compared"] == 1  # the compiled core gives the same


@pytest.mark.parametrize("tricks", [13, 12, 0])
def test_a_tricks_taken_record_leaving_a_seat_out_does_not_add_up_to_13(tricks):
    """RULES.md section 7: TRICKS_TAKEN_MISMATCH when the recorded tricks taken "do not add up to
    13".  A record that leaves N out was flagged with 12 tricks played or none, and passed with all
    13 (found by an independent checker); now the same finding however much was played."""
    from test_core_differential import assert_same

    full = record()
    won = replay_hand(full, STANDARD).taken  # what each seat took in the whole hand
    rec = replace(full, tricks=full.tricks[:tricks] if tricks else None)
    partial = replace(rec, taken=(None, won[1], won[2], won[3]))
    gc = check_game([partial])
    got = [(f.code, f.seat, f.recorded, f.expected) for f in gc.findings if f.code == F.TRICKS_TAKEN_MISMATCH]
    assert got == [(F.TRICKS_TAKEN_MISMATCH, None, 13 - won[0], 13)]
    assert "which add up to" in next(f.message for f in gc.findings if f.code == F.TRICKS_TAKEN_MISMATCH)
    assert assert_same([partial])["compared"] == 1
    whole = replace(rec, taken=tuple(won))  # the full record of the same hand: no finding about taken
    assert not [f for f in check_game([whole]).findings if f.code == F.TRICKS_TAKEN_MISMATCH]


def test_a_card_outside_the_deck_does_not_break_spades():
    """RULES.md section 4: spades are broken once a spade has been played.  A card outside the deck
    (2H in barmore) is DEAL_INVALID, and a later spade lead by a seat holding hearts is still
    SPADE_LED_BEFORE_BROKEN; the checker used to take the bad card for a possible spade and say
    nothing (found by an independent checker; a card not held was already judged this way)."""
    from test_core_differential import assert_same

    line = jsonl.jsontext.dumps({
        "game_id": "nondeck", "hand": 1, "rules": "barmore", "players": {"N": "a", "E": "b", "S": "c", "W": "d"},
        "dealer": "W", "bids": [{"seat": s, "bid": 3} for s in "NESW"],
        "tricks": [{"leader": "N", "cards": ["AH", "2H", "KH", "QH"]}, {"leader": "N", "cards": ["AS", "3S", "4S", "5S"]},
                   {"leader": "N", "cards": ["JH", "TH", "9H", "8H"]}],
        "taken": {"N": 3, "E": 3, "S": 3, "W": 4},
    })
    (rec,) = jsonl.loads(line)
    got = [(f.code, f.trick, f.seat, f.card) for f in check_game([rec]).findings]
    assert got == [
        (F.DEAL_INVALID, 1, SEATS[1], "2H"),
        (F.SPADE_LED_BEFORE_BROKEN, 2, SEATS[0], "AS"),
    ], got
    assert assert_same([rec])["compared"] == 1
