"""The game-level checker: rules per game, dealer rotation, recorded scores, winner, hands after the
end, renege penalty, score sheets, and the derived tables written by ``check_db``."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from spadework.analysis.engine import findings as F
from spadework.analysis.engine.checker import AFTER_PENALTY, AS_PLAYED, check_game, check_records, iter_game_checks
from spadework.analysis.engine.findings import CheckError
from spadework.analysis.engine.rules import STANDARD, RulesError, get_ruleset
from spadework.analysis.engine.scoring import score_hand
from spadework.parsers.model import Bid, HandRecord, SideScore
from spadework.parsers.schema import DERIVED_TABLES
from spadework.parsers.seats import SEATS, Seat, Side
from test_properties_checker import Impossible, simulate_game, simulate_hand

N, E, S, W = SEATS


def parse_bids(text: str) -> tuple[Bid, ...]:
    out = []
    for part in text.split(","):
        seat, v = part.split()
        if v == "nil":
            out.append(Bid(Seat.parse(seat), 0, nil=True))
        elif v == "bn":
            out.append(Bid(Seat.parse(seat), 0, nil=True, blind=True))
        else:
            out.append(Bid(Seat.parse(seat), int(v)))
    return tuple(out)


def sheet(hand, dealer, bid_text, taken, score=None, game="g", **kw) -> HandRecord:
    """A score-sheet hand: bids in order from the dealer's left, tricks taken, recorded score
    ``{"NS": (points, total, bags), ...}`` (None for an unrecorded value)."""
    dealer = Seat.parse(dealer)
    bids = parse_bids(bid_text)
    order = dealer.left.clockwise()
    bids = tuple(sorted(bids, key=lambda b: order.index(b.seat)))
    sc = None
    if score is not None:
        sc = tuple(SideScore(*score.get(side, (None, None, None))) for side in ("NS", "EW"))
    return HandRecord(game_id=game, hand=hand, dealer=dealer, players=("a", "b", "c", "d"), bids=bids,
                      taken=tuple(taken), score=sc, **kw)


def places(gc):
    return [f.place for f in gc.findings]


# --- recorded scores (RULES.md section 5, "Checking recorded scores") ----------------------------


def test_missed_bag_penalty_names_side_field_and_both_values():
    # a log starting mid-game at hand 7: NS 249 with 8 bags bid 6 and take 9 -> 63 - 100 = -37 -> 212
    h7 = sheet(7, "N", "E 2, S 3, W 2, N 3", (5, 2, 4, 2), {"NS": (None, 312, 1), "EW": (None, 220, 2)},
               score_before=(249, 180), bags_before=(8, 2))
    gc = check_game([h7])
    [f] = gc.findings
    assert f.message == "hand 7: NS total recorded 312, rules give 212 (bag penalty for reaching 11 bags not applied: NS began the hand at 249 with 8 bags and took 3 more)"
    assert (f.code, f.hand, f.side, f.field, f.recorded, f.expected) == (F.SCORE_MISMATCH, 7, Side.NS, "total", 312, 212)
    assert f.to_row()["recorded"] == "312" and f.to_row()["side"] == "NS"
    ns = gc.hand_scores[0]
    assert (ns["points"], ns["total"], ns["bags"], ns["bag_penalty"]) == (-37, 212, 1, -100)


def test_one_wrong_entry_gives_one_finding():
    # hand 2's NS total is 100 too high and the sheet carries on from it
    hands = [
        sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4), {"NS": (60, 60, 0), "EW": (61, 61, 1)}),
        sheet(2, "E", "S 3, W 3, N 3, E 3", (3, 3, 3, 4), {"NS": (60, 220, 0), "EW": (61, 122, 2)}),
        sheet(3, "S", "W 3, N 3, E 3, S 3", (3, 3, 3, 4), {"NS": (60, 280, 0), "EW": (61, 183, 3)}),
        sheet(4, "W", "N 3, E 3, S 3, W 3", (3, 3, 3, 4), {"NS": (60, 340, 0), "EW": (61, 244, 4)}),
    ]
    gc = check_game(hands)
    [f] = gc.findings
    assert f.message == "hand 2: NS total recorded 220, rules give 120"
    # the recomputed table never takes a recorded value
    assert [r["total"] for r in gc.hand_scores if r["side"] == "NS"] == [60, 120, 180, 240]
    assert gc.totals == (240, 244) and gc.winner is None


def test_a_typo_followed_by_the_right_value_is_one_finding():
    # RULES.md section 5: a total is right from the true state or from the log's own: a typo at hand 2
    # followed by a sheet that goes back to the right value is flagged once (test_score_states)
    hands = [
        sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4), {"NS": (60, 60, 0)}),
        sheet(2, "E", "S 3, W 3, N 3, E 3", (3, 3, 3, 4), {"NS": (60, 220, 0)}),
        sheet(3, "S", "W 3, N 3, E 3, S 3", (3, 3, 3, 4), {"NS": (60, 180, 0)}),
    ]
    assert [(f.hand, f.field, f.recorded, f.expected) for f in check_game(hands).findings] == [
        (2, "total", 220, 120),
    ]


def test_where_no_total_was_recorded_the_recomputed_one_is_used():
    hands = [
        sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4), {"NS": (60, None, None)}),
        sheet(2, "E", "S 3, W 3, N 3, E 3", (3, 3, 3, 4), {"NS": (None, 120, 0)}),
    ]
    assert check_game(hands).findings == []


def test_bags_are_checked_against_the_last_recorded_bag_count():
    hands = [
        sheet(1, "N", "E 3, S 2, W 3, N 2", (5, 3, 4, 1), {"NS": (45, 45, 5)}),
        # NS 5 bags + 5 more: penalty, 0 bags.  Recorded 10 (not reduced)
        sheet(2, "E", "S 2, W 3, N 2, E 3", (5, 3, 4, 1), {"NS": (-55, -10, 10)}),
        # carries on from the recorded 10 bags: 10 + 5 = 15 -> penalty, 5 bags: only hand 2 is flagged
        sheet(3, "S", "W 3, N 2, E 3, S 2", (5, 3, 4, 1), {"NS": (-55, -65, 5)}),
    ]
    gc = check_game(hands)
    [f] = gc.findings
    assert f.message == "hand 2: NS bags recorded 10, rules give 0 (10 bags not removed after the penalty)"
    assert [r["bags"] for r in gc.hand_scores if r["side"] == "NS"] == [5, 0, 5]


def test_penalty_applied_once_when_the_bags_cross_ten_twice():
    h = sheet(1, "N", "E 1, S 1, W 1, N 1", (7, 0, 6, 0), {"NS": (-69, None, None)}, bags_before=(9, 0),
              score_before=(0, 0))
    [f] = check_game([h]).findings
    assert f.message == "hand 1: NS points recorded -69, rules give -169 (bag penalty applied once, but the bags crossed 10 twice (20 bags): NS began the hand at 0 with 9 bags and took 11 more)"


def test_nil_bonus_on_the_wrong_side():
    h = sheet(1, "W", "N nil, E 3, S 4, W 3", (0, 5, 4, 4), {"NS": (40, 40, 0), "EW": (163, 163, 3)})
    msgs = [f.message for f in check_game([h]).findings]
    assert msgs == [
        "hand 1: NS points recorded 40, rules give 140 (nil bonus on the wrong side)",
        "hand 1: NS total recorded 40, rules give 140 (nil bonus on the wrong side)",
        "hand 1: EW points recorded 163, rules give 63 (nil bonus on the wrong side)",
        "hand 1: EW total recorded 163, rules give 63 (nil bonus on the wrong side)",
    ]


def test_score_before_of_a_later_hand():
    hands = [
        sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4), {"NS": (60, 60, 0), "EW": (61, 61, 1)}),
        sheet(2, "E", "S 3, W 3, N 3, E 3", (3, 3, 3, 4), {"NS": (60, 130, 0)}, score_before=(70, 61),
              bags_before=(0, 2)),
    ]
    gc = check_game(hands)
    assert [f.message for f in gc.findings] == [
        "hand 2: NS score before recorded 70, rules give 60",
        "hand 2: EW bags before recorded 2, rules give 1",
    ]
    assert gc.findings[0].field == "score_before"


# --- end of game --------------------------------------------------------------------------------


def _game_to_end():
    # NS 480 after hand 1 (start mid-game), hand 2 takes NS over 500
    return [
        sheet(1, "N", "E 2, S 4, W 2, N 4", (4, 2, 4, 3), {"NS": (80, 480, 0)}, score_before=(400, 300),
              bags_before=(0, 0)),
        sheet(2, "E", "S 2, W 2, N 2, E 2", (2, 4, 2, 5), {"NS": (40, 520, 0)}),
    ]


def test_game_ends_and_the_games_row():
    hands = _game_to_end()
    hands[-1] = replace(hands[-1], winner=Side.NS)
    gc = check_game(hands)
    assert gc.findings == []
    assert gc.game == {"game_id": "g", "rules": "standard", "hands": 2, "total_ns": 520, "total_ew": 386,
                       "winner": "NS", "ended_at_hand": 2}


def test_game_result_mismatch():
    hands = _game_to_end()
    hands[-1] = replace(hands[-1], winner=Side.EW)
    [f] = check_game(hands).findings
    assert f.place == (F.GAME_RESULT_MISMATCH, 2, None, None, None) and f.side == Side.EW
    assert f.message == "hand 2: EW recorded as the winner, but the rules give NS the game (NS 520, EW 386, ended at hand 2)"
    early = [replace(hands[0], winner=Side.NS)]
    [g] = check_game(early).findings
    assert g.message == "hand 1: NS recorded as the winner, but the game is not over (NS 480, EW 341; target 500)"


def test_played_after_game_end():
    hands = _game_to_end() + [sheet(3, "S", "W 2, N 2, E 2, S 2", (2, 4, 2, 5))]
    gc = check_game(hands)
    [f] = gc.findings
    assert f.place == (F.PLAYED_AFTER_GAME_END, 3, None, None, None)
    assert f.message == "hand 3: played after the game ended at hand 2 (NS won, NS 520 EW 386)"
    assert [r["hand"] for r in gc.hand_scores] == [1, 1, 2, 2, 3, 3]  # still scored
    assert gc.hand_scores[-2]["total"] == 560
    assert (gc.game["total_ns"], gc.game["total_ew"], gc.game["ended_at_hand"], gc.game["hands"]) == (520, 386, 2, 3)


def test_mercy_ends_the_game():
    r = {"preset": "standard", "losing_score": -200}
    h = sheet(1, "N", "E 2, S 5, W 2, N 5", (3, 3, 3, 4), rules=r, score_before=(-150, 0), bags_before=(0, 0))
    gc = check_game([h])
    assert gc.winner == Side.EW and gc.game["winner"] == "EW" and gc.totals == (-250, 43)


# --- dealer rotation ----------------------------------------------------------------------------


def test_dealer_out_of_rotation():
    hands = [
        sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4)),
        sheet(2, "S", "W 3, N 3, E 3, S 3", (3, 3, 3, 4)),
        sheet(3, "W", "N 3, E 3, S 3, W 3", (3, 3, 3, 4)),
    ]
    [f] = check_game(hands).findings
    assert f.place == (F.DEALER_OUT_OF_ROTATION, 2, None, S, None)
    assert f.message == "hand 2: dealt by S (c), but E should have dealt (hand 1 was dealt by N)"


@pytest.mark.parametrize(
    "spoken, early",
    [
        ("NESW", ""),
        ("NSEW", "S"),  # two swapped bids next to each other
        ("SENW", "S"),  # two swapped bids apart: E bid second, its own place (found by a rules audit)
        ("NWSE", "W"),
        ("WESN", "W"),
        ("ESNW", "ES"),  # three rotated: each seat that spoke early
        ("WNES", "W"),  # one seat jumping the queue delays the others, who are not out of turn
        ("EWNS", "EW"),
        ("NSW", ""),  # E's bid missing: BID_MISSING only
        ("SNW", "S"),
    ],
)
def test_bids_out_of_turn_are_the_seats_that_spoke_early(spoken, early):
    # dealer W: the bidding goes N E S W (RULES.md section 3: "two swapped bids: one finding, on the
    # seat that spoke early")
    bids = tuple(Bid(Seat.parse(c), 3) for c in spoken)
    rec = HandRecord(game_id="g", hand=1, dealer=W, players=("a", "b", "c", "d"), bids=bids, taken=(3, 3, 3, 4))
    found = check_game([rec]).findings
    assert [str(f.seat) for f in found if f.code == F.BID_OUT_OF_TURN] == list(early)
    assert [str(f.seat) for f in found if f.code == F.BID_MISSING] == [c for c in "NESW" if c not in spoken]


@pytest.mark.parametrize("silent_bids, early", [(False, []), (True, ["N"])])
def test_the_silent_partner_of_a_blind_seven_is_not_a_seat_the_others_wait_for(silent_bids, early):
    # dealer W, barmore: E 3, S blind 7 (N silent), W 3, then N bids anyway: only N's bid is out of turn
    # (E and S were flagged too, "N was to bid first": found by an audit of this stop's bid rule)
    bids = (Bid(E, 3), Bid(S, 7, blind=True), Bid(W, 3)) + ((Bid(N, 4),) if silent_bids else ())
    rec = HandRecord(game_id="g", hand=1, dealer=W, players=("a", "b", "c", "d"), bids=bids, taken=(3, 3, 4, 3),
                     rules="barmore")  # fmt: skip
    found = check_game([rec]).findings
    assert [(f.code, str(f.seat)) for f in found] == [(F.BID_OUT_OF_TURN, s) for s in early]


LONG_GAME = {"preset": "standard", "target": 10000}


def _dealt_by(dealers: str, start: int = 1) -> list[HandRecord]:
    """A game whose hand ``start + k`` is dealt by ``dealers[k]`` (bids from that dealer's left)."""
    out = []
    for k, d in enumerate(dealers):
        order = Seat.parse(d).left.clockwise()
        out.append(sheet(start + k, d, ", ".join(f"{s} 3" for s in order), (3, 3, 3, 4), rules=LONG_GAME))
    return out


@pytest.mark.parametrize(
    "dealers, flagged",
    [
        ("NESWNESW", []),
        # one mistyped dealer (hand 4), then the rotation as it was: one finding
        ("WNENWNES", [4]),
        # one mistyped dealer, and the log goes on from it: one finding
        ("WNENESWN", [4]),
        # a change of rotation, then later a table that really dealt out of turn, on the seat the
        # rotation from hand 1 gives: found (the memory is one hand deep)
        ("WNENESWNWS", [4, 9]),
        # two dealers in a row out of rotation, then back to where the rotation should be
        ("NEWESWNE", [3, 4]),
        # the seat that should have dealt hand 3 deals hand 4 (back on track): one finding
        ("NEWWNES", [3]),
        # across an unrecorded hand the memory moves on by the number of hands
        ("NESNE", [4]),
        # one seat dealing every hand: every hand after the first (the memory is one hand deep; the
        # "should" seat kept following the first rotation round to W again: found by an audit)
        ("WWWWWWWWW", [2, 3, 4, 5, 6, 7, 8, 9]),
        # dealing the wrong way: every other hand reads as one mistyped dealer, the rest as back on track
        ("WSENWSEN", [2, 4, 6, 8]),
    ],
)
def test_a_dealer_out_of_rotation_is_one_finding_whether_or_not_the_log_goes_back(dealers, flagged):
    # RULES.md section 1; the one-hand memory mirrors section 5's "either state" rule for scores
    gc = check_game(_dealt_by(dealers))
    assert [f.hand for f in gc.findings] == flagged
    assert {f.code for f in gc.findings} <= {F.DEALER_OUT_OF_ROTATION}


def test_a_dealer_out_of_rotation_after_another_names_both_seats_in_rotation():
    [f3, f4] = check_game(_dealt_by("NEWES")).findings
    assert f3.message == "hand 3: dealt by W (d), but S should have dealt (hand 2 was dealt by E)"
    assert f4.message == (
        "hand 4: dealt by E (b), but N should have dealt "
        "(hand 3 was dealt by W; or W, had hand 3 been dealt by S as the rotation has it)"
    )


def test_the_dealer_memory_moves_on_across_a_hand_gap():
    # hand 2 mistyped, hand 3 unrecorded, hand 4 where the rotation from hand 2's right dealer puts it
    recs = _dealt_by("NW") + _dealt_by("W", start=4)
    assert [(f.code, f.hand) for f in check_game(_dealt_by("NW") + _dealt_by("N", start=4)).findings] == [
        (F.DEALER_OUT_OF_ROTATION, 2), (F.HAND_MISSING, 4), (F.DEALER_OUT_OF_ROTATION, 4)
    ]
    assert [(f.code, f.hand) for f in check_game(recs).findings] == [
        (F.DEALER_OUT_OF_ROTATION, 2), (F.HAND_MISSING, 4)
    ]


def test_dealer_rotation_across_unrecorded_hands():
    hands = [sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4)), sheet(4, "W", "N 3, E 3, S 3, W 3", (3, 3, 3, 4))]
    assert [f.code for f in check_game(hands).findings] == [F.HAND_MISSING]
    bad = [hands[0], replace(hands[1], dealer=E, bids=parse_bids("S 3, W 3, N 3, E 3"))]
    [m, f] = check_game(bad).findings
    assert m.code == F.HAND_MISSING
    assert f.message == "hand 4: dealt by E (b), but W should have dealt (hand 1 was dealt by N and 2 hand(s) unrecorded in between)"


def test_openspiel_dealer_is_always_west():
    hands = [sheet(h, "W", "N 3, E 3, S 3, W 3", (3, 3, 3, 4), rules="openspiel") for h in (1, 2, 3)]
    assert check_game(hands).findings == []
    hands[1] = sheet(2, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4), rules="openspiel")
    [f] = check_game(hands).findings
    assert f.message == "hand 2: dealt by N (a), but W should have dealt (the openspiel rules have W deal every hand)"


# --- one ruleset per game -------------------------------------------------------------------------


def test_rules_mixed_within_a_game():
    hands = [
        sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4), rules="standard"),
        sheet(2, "E", "S 3, W 3, N 3, E 3", (3, 3, 3, 4), rules="barmore"),
    ]
    gc = check_game(hands)
    [f] = gc.findings
    assert f.place == (F.RULES_MIXED, 2, None, None, None)
    assert f.message == "hand 2: rules barmore differ from the game's rules standard (hand 1); the game is checked under standard"
    assert gc.rules == "standard"
    # the same rules written two ways are the same rules
    same = [hands[0], replace(hands[1], rules={"preset": "standard", "target": 500})]
    assert check_game(same).findings == []


def test_rules_invalid_in_a_log():
    hands = [sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4), rules={"preset": "standard", "bagz": 1})]
    gc = check_game(hands)
    [f] = gc.findings
    assert f.code == F.RULES_INVALID and "unknown rules option 'bagz'" in f.message and gc.rules == "standard"


def test_the_override_wins_over_the_records():
    hands = [
        sheet(1, "N", "E 3, S 3, W 3, N nil", (0, 3, 6, 4), rules="standard"),
        sheet(2, "E", "S 3, W 3, N 3, E 3", (3, 3, 3, 4), rules="barmore"),
    ]
    gc = check_game(hands, "barmore")
    assert gc.rules == "barmore"
    assert [f.code for f in gc.findings] == [F.BID_INVALID]  # barmore has no nil; no RULES_MIXED
    with pytest.raises(RulesError):
        check_game(hands, "pinochle")


# --- what is scored -------------------------------------------------------------------------------


def test_score_sheets_are_scored_from_taken():
    h = sheet(1, "N", "E 3, S nil, W 4, N 5", (6, 3, 0, 4))
    gc = check_game([h])
    assert gc.findings == []
    expected = score_hand(STANDARD, h.bids, (6, 3, 0, 4))
    ns, ew = gc.hand_scores
    assert (ns["points"], ns["nil_points"], ns["contract"], ns["tricks"]) == (expected[0].points, 100, 5, 6)
    assert ns["scoring"] == AS_PLAYED and ew["points"] == expected[1].points == 70
    assert gc.tricks == []


def test_a_hand_cut_short_is_scored_on_the_tricks_played():
    rec, _ = simulate_hand(random.Random(3), STANDARD, dealer=W)
    short = replace(rec, tricks=rec.tricks[:9], taken=None)
    gc = check_game([short])
    assert [f.code for f in gc.findings] == [F.HAND_INCOMPLETE]
    assert sum(r["tricks"] for r in gc.hand_scores) <= 9
    assert len(gc.tricks) == 9


def test_blind_nil_uses_the_recomputed_totals_before_the_hand():
    hands = [
        sheet(1, "N", "E 4, S 3, W 4, N 3", (0, 6, 0, 7)),  # NS set -60, EW +81: NS behind by 141
        sheet(2, "E", "S 3, W 3, N bn, E 3", (0, 3, 5, 5)),
    ]
    assert check_game(hands).findings == []
    hands[0] = sheet(1, "N", "E 1, S 3, W 1, N 3", (3, 2, 3, 5))  # NS +60, EW +23: NS ahead
    [f] = check_game(hands).findings
    assert f.place == (F.BLIND_BID_NOT_ALLOWED, 2, None, N, None)


def test_renege_penalty_keeps_both_scores():
    rules = get_ruleset({"renege_penalty_tricks": 3})
    rng = random.Random(11)
    for _ in range(50):
        try:
            rec, _ = simulate_hand(rng, rules, dealer=W, fault="renege")
            break
        except Impossible:
            continue
    gc = check_game([rec])
    assert [f.code for f in gc.findings] == [F.RENEGE]
    offender = gc.findings[0].seat
    # one row per side (TABLES.md key game_id, hand, side): the official score after the penalty,
    # the as-played values beside it
    assert [(r["scoring"], r["side"]) for r in gc.hand_scores] == [(AFTER_PENALTY, "NS"), (AFTER_PENALTY, "EW")]
    rows = {r["side"]: r for r in gc.hand_scores}
    off, opp = offender.side.name, offender.side.other.name
    moved = rows[off]["as_played_tricks"] - rows[off]["tricks"]
    assert 0 < moved <= 3
    assert rows[opp]["tricks"] >= rows[opp]["as_played_tricks"]
    hc = gc.hands[0]
    assert hc.official is hc.after_penalty
    for k, side in enumerate(("NS", "EW")):
        assert rows[side]["as_played_points"] == hc.as_played[k].points and rows[side]["points"] == hc.after_penalty[k].points
    assert gc.totals == (rows["NS"]["total"], rows["EW"]["total"])


# --- game checks as a whole -------------------------------------------------------------------------


def test_rows_have_the_columns_of_the_derived_tables():
    records, _ = simulate_game(random.Random(5), STANDARD, max_hands=3)
    gc = check_game(records)
    cols = {t: [line.split()[0] for line in ddl.strip().splitlines()] for t, ddl in DERIVED_TABLES.items()}
    assert all(set(r) == set(cols["tricks"]) for r in gc.tricks)
    assert all(set(r) == set(cols["hand_scores"]) for r in gc.hand_scores)
    assert set(gc.game) == set(cols["games"])
    bad = replace(records[0], dealer=S)
    assert all(set(r) == set(cols["violations"]) for r in check_game([bad] + records[1:]).violations)


def test_iter_game_checks_groups_consecutive_records_by_game():
    a, _ = simulate_game(random.Random(1), STANDARD, game_id="a", max_hands=2)
    b, _ = simulate_game(random.Random(2), STANDARD, game_id="b", max_hands=3)
    checks = list(iter_game_checks(a + b))
    assert [(c.game_id, len(c.hands)) for c in checks] == [("a", len(a)), ("b", len(b))]
    summary = check_records(a + b)
    assert summary.games == 2 and summary.hands == len(a) + len(b) and summary.clean


def test_check_game_input_errors_and_raise_policy():
    with pytest.raises(ValueError):
        check_game([])
    a, _ = simulate_game(random.Random(1), STANDARD, game_id="a", max_hands=1)
    b, _ = simulate_game(random.Random(1), STANDARD, game_id="b", max_hands=1)
    with pytest.raises(ValueError, match="several games"):
        check_game(a + b)
    bad = [replace(a[0], dealer=S)] + a[1:]
    with pytest.raises(CheckError) as exc:
        check_game(bad, policy="raise")
    assert exc.value.finding.code in F.ALL_CODES


# --- the database -------------------------------------------------------------------------------


def _db_with(records):
    db = pytest.importorskip("spadework.parsers.db", reason="spadework.parsers.db (the loader) is not available")
    con = db.connect(None)
    db.load_items(con, iter(records), "test.jsonl", "jsonl")
    return con


def test_check_db_replaces_the_derived_tables():
    from spadework.analysis.engine.checker import check_db

    good, _ = simulate_game(random.Random(9), STANDARD, game_id="good", max_hands=4)
    bad, _ = simulate_game(random.Random(10), STANDARD, game_id="bad", max_hands=3)
    bad = [replace(bad[0], dealer=S)] + bad[1:]
    con = _db_with(good + bad)
    seen = []
    summary = check_db(con, progress=lambda g, h: seen.append((g, h)))
    assert summary.games == 2 and summary.hands == len(good) + len(bad)
    assert seen[-1] == (2, summary.hands)
    assert summary.by_code[F.DEALER_OUT_OF_ROTATION] >= 1 and summary.games_with_findings == ["bad"]
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("tricks", "violations", "hand_scores", "games")}
    assert counts == {
        "tricks": 13 * summary.hands,
        "violations": len(summary.findings),
        "hand_scores": 2 * summary.hands,
        "games": 2,
    }
    row = con.execute("SELECT code, message, seat FROM violations WHERE game_id = 'bad' ORDER BY hand LIMIT 1").fetchone()
    assert row[0] == summary.findings[0].code and row[1] == summary.findings[0].message
    # a second run replaces, never appends
    check_db(con)
    again = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in counts}
    assert again == counts
    # an override for every game
    summary2 = check_db(con, rules="openspiel")
    assert con.execute("SELECT DISTINCT rules FROM games").fetchall() == [("openspiel",)]
    assert summary2.by_code[F.DEALER_OUT_OF_ROTATION] > 0  # openspiel's W deals every hand


def test_check_db_raise_policy_leaves_the_tables_as_they_were():
    from spadework.analysis.engine.checker import check_db

    bad, _ = simulate_game(random.Random(10), STANDARD, game_id="bad", max_hands=2)
    con = _db_with([replace(bad[0], dealer=S)] + bad[1:])
    check_db(con)
    before = con.execute("SELECT count(*) FROM violations").fetchone()[0]
    assert before > 0
    with pytest.raises(CheckError):
        check_db(con, policy="raise")
    assert con.execute("SELECT count(*) FROM violations").fetchone()[0] == before
    with pytest.raises(RulesError):
        check_db(con, rules="pinochle")


RLO, LRE, PDF, RLI, PDI = "\u202e", "\u202a", "\u202c", "\u2067", "\u2069"


@pytest.mark.parametrize(
    "name, shown",
    [
        ("ana", "ana"),  # nothing to close
        (f"ana{RLO}", f"ana{RLO}{PDF}"),  # an override left open: closed at the name's end
        (f"{RLO}ana{PDF}", f"{RLO}ana{PDF}"),  # closed by the name itself: unchanged
        (f"{RLI}{RLO}x", f"{RLI}{RLO}x{PDF}{PDI}"),  # closed innermost first
        (f"{RLI}{RLO}x{PDI}", f"{RLI}{RLO}x{PDI}"),  # a PDI closes what was opened inside its isolate
        (f"{LRE}a{PDF}{PDF}{RLO}", f"{LRE}a{PDF}{PDF}{RLO}{PDF}"),  # a stray PDF closes nothing
        (f"{RLO}a\nb", f"{RLO}a\nb"),  # a new paragraph closes everything
        ("דני", "דני"),  # right-to-left letters are not controls
    ],
)
def test_a_name_never_leaves_a_directional_control_open(name, shown):
    assert F.close_bidi(name) == shown


def test_a_finding_names_a_player_whose_name_holds_an_open_override_without_turning_the_message_round():
    """An unclosed U+202E in a name turned round the rest of the finding's message when shown."""
    rec, _ = simulate_hand(random.Random(4), STANDARD, fault="renege")
    renege = next(f for f in check_game([rec]).findings if f.code == "RENEGE")
    players = list(rec.players)  # in seat order N E S W
    players[int(renege.seat)] = f"ed{RLO}"
    rec = replace(rec, players=tuple(players))
    named = [f for f in check_game([rec]).findings if f.code == "RENEGE"]
    assert [f.player for f in named] == [f"ed{RLO}"]
    assert f"{renege.seat} (ed{RLO}{PDF}) reneged" in named[0].message, named[0].message


@pytest.mark.parametrize("bag_limit, hint", [(10, " (bag penalty applied, but the side has only 0 bags)"), (0, "")])
def test_a_penalty_taken_where_there_is_none_is_named_only_under_rules_that_have_one(bag_limit, hint):
    # under bag_limit 0 the hint said "bag penalty applied, but the side has only 31 bags" (a user audit)
    rules = {"preset": "standard", "bag_limit": bag_limit}
    hand = sheet(1, "N", "E 3, S 3, W 3, N 3", (3, 3, 3, 4), {"NS": (-40, None, None)}, rules=rules)
    [f] = check_game([hand]).findings
    assert f.message == f"hand 1: NS points recorded -40, rules give 60{hint}"


def test_a_negative_tricks_taken_record_says_so():
    # a score sheet's typo read "N recorded as taking -1 tricks, but already won 0 in the tricks played"
    # on a sheet with no play at all (a user audit)
    hand = sheet(1, "N", "E 3, S 3, W 3, N 3", (-1, 3, 3, 4))
    f = next(f for f in check_game([hand]).findings if f.code == F.TRICKS_TAKEN_MISMATCH)
    assert f.message == "hand 1: N (a) recorded as taking -1 tricks, but no seat takes fewer than 0"
