"""Table-driven scoring cases: every rule of RULES.md sections 5 (one hand) and 6 (end of game)."""

from __future__ import annotations

import pytest

from spadework.analysis.engine.rules import BARMORE, STANDARD, get_ruleset
from spadework.analysis.engine.scoring import ScoreChain, apply_renege_penalty, game_winner, score_hand, score_side
from spadework.parsers.model import Bid
from spadework.parsers.seats import Seat, Side


def bids(text: str) -> list[Bid]:
    """``"N 3, E nil, S bn, W b7"``: nil, bn = blind nil, bN = blind N; seats left out have no bid."""
    out = []
    for part in text.split(","):
        seat, value = part.split()
        s = Seat.parse(seat)
        if value == "nil":
            out.append(Bid(s, 0, nil=True))
        elif value == "bn":
            out.append(Bid(s, 0, nil=True, blind=True))
        elif value.startswith("b"):
            out.append(Bid(s, int(value[1:]), blind=True))
        else:
            out.append(Bid(s, float(value) if "." in value else int(value)))
    return out


def R(**options):
    return get_ruleset({"preset": "standard", **options})


# (id, ruleset, bids, taken N E S W, totals before (NS, EW), bags before (NS, EW), side, expected fields)
HAND_CASES = [
    ("made exactly", STANDARD, "N 4, E 3, S 3, W 3", (4, 3, 3, 3), (0, 0), (0, 0), Side.NS,
     dict(contract=7, tricks=7, made=True, bags_this_hand=0, bag_penalty=0, nil_points=0, points=70, total=70, bags=0)),
    ("overtricks are bags worth a point", STANDARD, "N 3, E 3, S 2, W 3", (4, 3, 3, 3), (100, 0), (2, 0), Side.NS,
     dict(contract=5, tricks=7, made=True, bags_this_hand=2, points=52, total=152, bags=4)),
    ("a set gives no bags", STANDARD, "N 5, E 2, S 4, W 2", (5, 3, 3, 2), (0, 0), (9, 0), Side.NS,
     dict(contract=9, tricks=8, made=False, bags_this_hand=0, bag_penalty=0, points=-90, total=-90, bags=9)),
    ("8 bags plus 3 overtricks", STANDARD, "N 3, E 2, S 3, W 2", (5, 2, 4, 2), (200, 0), (8, 0), Side.NS,
     dict(contract=6, tricks=9, bags_this_hand=3, bag_penalty=-100, points=-37, total=163, bags=1)),
    ("9 bags plus 11 overtricks crosses ten twice", STANDARD, "N 1, E 1, S 1, W 1", (7, 0, 6, 0), (300, 0), (9, 0),
     Side.NS, dict(contract=2, tricks=13, bags_this_hand=11, bag_penalty=-200, points=-169, total=131, bags=0)),
    ("exactly 10 bags", STANDARD, "N 2, E 3, S 2, W 3", (4, 3, 3, 3), (0, 0), (7, 0), Side.NS,
     dict(contract=4, tricks=7, bags_this_hand=3, bag_penalty=-100, points=-57, bags=0)),
    ("bags beyond ten carry over", STANDARD, "N 1, E 2, S 1, W 1", (5, 2, 5, 1), (0, 0), (5, 0), Side.NS,
     dict(bags_this_hand=8, bag_penalty=-100, points=28 - 100, bags=3)),
    ("the other side scores on its own", STANDARD, "N 3, E 2, S 3, W 2", (5, 2, 4, 2), (200, 50), (8, 3), Side.EW,
     dict(contract=4, tricks=4, made=True, points=40, total=90, bags=3)),
    ("nil made", STANDARD, "N nil, E 4, S 4, W 3", (0, 4, 5, 4), (0, 0), (0, 0), Side.NS,
     dict(contract=4, tricks=5, made=True, nil_points=100, points=141, bags=1)),
    ("nil failed, tricks help the side (default)", STANDARD, "N nil, E 4, S 4, W 3", (2, 4, 3, 4), (0, 0), (0, 0),
     Side.NS, dict(contract=4, tricks=5, made=True, bags_this_hand=1, nil_points=-100, points=-59, bags=1)),
    ("nil failed, bags_only", R(failed_nil_tricks="bags_only"), "N nil, E 4, S 4, W 3", (2, 4, 3, 4), (0, 0),
     (0, 0), Side.NS, dict(contract=4, tricks=3, made=False, bags_this_hand=2, nil_points=-100, points=-138, bags=2)),
    ("nil failed, bags_only, bags reach the limit", R(failed_nil_tricks="bags_only"), "N nil, E 4, S 4, W 3",
     (2, 4, 3, 4), (0, 0), (8, 0), Side.NS, dict(made=False, bags_this_hand=2, bag_penalty=-100, points=-238, bags=0)),
    ("nil failed, ignored", R(failed_nil_tricks="ignored"), "N nil, E 4, S 4, W 3", (2, 4, 3, 4), (0, 0), (0, 0),
     Side.NS, dict(contract=4, tricks=3, made=False, bags_this_hand=0, nil_points=-100, points=-140, bags=0)),
    ("double nil made", STANDARD, "N nil, E 5, S nil, W 5", (0, 7, 0, 6), (0, 0), (0, 0), Side.NS,
     dict(contract=0, tricks=0, made=True, nil_points=200, points=200, bags=0)),
    ("double nil: the opponents' overtricks", STANDARD, "N nil, E 5, S nil, W 5", (0, 7, 0, 6), (0, 0), (0, 0),
     Side.EW, dict(contract=10, tricks=13, bags_this_hand=3, points=103, bags=3)),
    ("double nil, one failed: its tricks are all bags", STANDARD, "N nil, E 5, S nil, W 5", (0, 6, 2, 5), (0, 0),
     (0, 0), Side.NS, dict(contract=0, tricks=2, made=True, bags_this_hand=2, nil_points=0, points=2, bags=2)),
    ("double nil, one failed, bags_only", R(failed_nil_tricks="bags_only"), "N nil, E 5, S nil, W 5", (0, 6, 2, 5),
     (0, 0), (0, 0), Side.NS, dict(contract=0, tricks=0, bags_this_hand=2, points=2, bags=2)),
    ("double nil, one failed, ignored", R(failed_nil_tricks="ignored"), "N nil, E 5, S nil, W 5", (0, 6, 2, 5),
     (0, 0), (0, 0), Side.NS, dict(contract=0, tricks=0, bags_this_hand=0, points=0, bags=0)),
    ("blind nil made", STANDARD, "N bn, E 4, S 5, W 3", (0, 4, 5, 4), (0, 0), (0, 0), Side.NS,
     dict(contract=5, made=True, nil_points=200, points=250)),
    ("blind nil failed", STANDARD, "N bn, E 4, S 5, W 3", (1, 3, 5, 4), (0, 0), (0, 0), Side.NS,
     dict(contract=5, tricks=6, bags_this_hand=1, nil_points=-200, points=-149)),
    ("nil and blind nil values are options", R(nil_points=50, blind_nil_points=150), "N bn, E nil, S 5, W 3",
     (0, 1, 6, 6), (0, 0), (0, 0), Side.EW, dict(contract=3, tricks=7, nil_points=-50, points=34 - 50)),
    ("10-for-200 made", R(ten_for_two_hundred=True), "N 6, E 1, S 4, W 1", (6, 1, 5, 1), (0, 0), (0, 0), Side.NS,
     dict(contract=10, tricks=11, made=True, points=201, bags=1)),
    ("10-for-200 with a bid of 13", R(ten_for_two_hundred=True), "N 7, E 1, S 6, W 1", (7, 0, 6, 0), (0, 0), (0, 0),
     Side.NS, dict(contract=13, points=200)),
    ("10-for-200 set: the usual -10 x contract", R(ten_for_two_hundred=True), "N 6, E 1, S 4, W 1", (5, 2, 4, 2),
     (0, 0), (0, 0), Side.NS, dict(contract=10, made=False, points=-100)),
    ("without 10-for-200 a bid of 10 is 100", STANDARD, "N 6, E 1, S 4, W 1", (6, 1, 5, 1), (0, 0), (0, 0), Side.NS,
     dict(points=101)),
    ("9 is not 10-for-200", R(ten_for_two_hundred=True), "N 5, E 1, S 4, W 1", (6, 1, 5, 1), (0, 0), (0, 0), Side.NS,
     dict(contract=9, points=92)),
    ("bags worth no points", R(bag_points=0), "N 3, E 3, S 2, W 3", (4, 3, 3, 3), (0, 0), (0, 0), Side.NS,
     dict(bags_this_hand=2, points=50, bags=2)),
    ("bag_limit 0: no penalty, bags keep counting", R(bag_limit=0), "N 3, E 2, S 3, W 2", (5, 2, 4, 2), (0, 0), (9, 0),
     Side.NS, dict(bags_this_hand=3, bag_penalty=0, points=63, bags=12)),
    ("bag limit 5, penalty 50", R(bag_limit=5, bag_penalty=50), "N 3, E 3, S 2, W 3", (4, 3, 3, 3), (0, 0), (4, 0),
     Side.NS, dict(bags_this_hand=2, bag_penalty=-50, points=2, bags=1)),
    ("barmore blind seven made", BARMORE, "N b7, E 2, W 2", (5, 2, 4, 2), (0, 0), (0, 0), Side.NS,
     dict(contract=7, tricks=9, made=True, bags_this_hand=2, points=142, bags=2)),
    ("barmore blind seven set", BARMORE, "N b7, E 4, W 3", (3, 4, 3, 3), (0, 0), (0, 0), Side.NS,
     dict(contract=7, tricks=6, made=False, bags_this_hand=0, points=-140)),
    ("a blind bid without listed points scores 20 per trick", R(blind_bids={"values": [6, 7]}), "N b6, E 3, W 3",
     (3, 3, 4, 3), (0, 0), (0, 0), Side.NS, dict(contract=6, points=121)),
    ("a blind bid the ruleset does not have is scored as the plain bid", STANDARD, "N 4, E b3, S 3, W 2",
     (4, 3, 4, 2), (0, 0), (0, 0), Side.EW, dict(contract=5, tricks=5, made=True, points=50)),
    ("... set: -10 x contract", STANDARD, "N 4, E b3, S 3, W 2", (5, 2, 4, 2), (0, 0), (0, 0), Side.EW,
     dict(contract=5, tricks=4, made=False, points=-50)),
    ("barmore blind six (not a barmore bid) is a plain six", BARMORE, "N b6, E 2, W 2", (4, 2, 4, 3), (0, 0), (0, 0),
     Side.NS, dict(contract=6, tricks=8, made=True, bags_this_hand=2, points=62)),
    ("a blind value outside blind_bids.values is a plain bid", R(blind_bids={"values": [7], "points": 140}),
     "N b6, E 3, W 3", (3, 3, 4, 3), (0, 0), (0, 0), Side.NS, dict(contract=6, points=61)),
    ("a blind ten the ruleset does not have gets 10-for-200", R(ten_for_two_hundred=True), "N b6, E 1, S 4, W 1",
     (6, 1, 5, 1), (0, 0), (0, 0), Side.NS, dict(contract=10, made=True, points=201)),
    ("a bid recorded as 4.5 is scored as recorded", STANDARD, "N 4.5, E 3, S 1, W 3", (4, 3, 3, 3), (0, 0), (0, 0),
     Side.NS, dict(contract=5.5, tricks=7, made=True, bags_this_hand=1, points=56)),
]


@pytest.mark.parametrize(
    "rules, bid_text, taken, before, bags_before, side, expected",
    [c[1:] for c in HAND_CASES],
    ids=[c[0] for c in HAND_CASES],
)
def test_score_hand(rules, bid_text, taken, before, bags_before, side, expected):
    assert sum(taken) == 13
    result = score_hand(rules, bids(bid_text), taken, before, bags_before)[side]
    got = {k: getattr(result, k) for k in expected}
    assert got == expected
    # the parts always add up, and the total moves by the points
    assert result.points == result.contract_points + result.bag_points + result.nil_points + result.bag_penalty
    assert result.total == before[side] + result.points


def test_score_side_equals_score_hand_and_row_has_the_table_columns():
    b = bids("N 3, E 2, S 3, W 2")
    per_seat = [b[0], b[1], b[2], b[3]]
    a = score_side(STANDARD, Side.NS, per_seat, (5, 2, 4, 2), 200, 8)
    assert a == score_hand(STANDARD, b, (5, 2, 4, 2), (200, 0), (8, 0))[Side.NS]
    assert set(a.row()) == {
        "side", "contract", "tricks", "made", "bags_this_hand", "bag_penalty", "nil_points", "points", "total", "bags",
    }
    assert a.row()["side"] == "NS"


def test_only_the_first_bid_of_a_seat_counts():
    b = bids("N 3, E 2, S 3, W 2") + [Bid(Seat.N, 9)]
    assert score_hand(STANDARD, b, (5, 2, 4, 2))[Side.NS].contract == 6


def test_a_seat_without_a_bid_still_takes_tricks_for_its_side():
    # barmore's silent partner: S has no bid; its 4 tricks count toward N's blind seven
    res = score_hand(BARMORE, bids("N b7, E 2, W 2"), (3, 2, 4, 4))[Side.NS]
    assert (res.contract, res.tricks, res.made, res.points) == (7, 7, True, 140)


# --- end of game (RULES.md section 6) -------------------------------------------------------------

WINNER_CASES = [
    ("below the target", STANDARD, (499, 300), None),
    ("one side reaches the target", STANDARD, (510, 300), Side.NS),
    ("exactly the target", STANDARD, (320, 500), Side.EW),
    ("both over, the higher wins", STANDARD, (540, 610), Side.EW),
    ("both over with equal totals: play on", STANDARD, (520, 520), None),
    ("the target is an option", R(target=300), (310, 120), Side.NS),
    ("mercy: at the losing score", R(losing_score=-200), (-200, 50), Side.EW),
    ("mercy: below it", R(losing_score=-200), (40, -350), Side.NS),
    ("mercy: just above it", R(losing_score=-200), (-199, 50), None),
    ("mercy: both below, the higher wins", R(losing_score=-200), (-250, -300), Side.NS),
    ("mercy: both below and equal: play on", R(losing_score=-200), (-250, -250), None),
    ("no mercy by default", STANDARD, (-900, 100), None),
]


@pytest.mark.parametrize("rules, totals, winner", [c[1:] for c in WINNER_CASES], ids=[c[0] for c in WINNER_CASES])
def test_game_winner(rules, totals, winner):
    assert game_winner(rules, totals) == winner


def test_equal_totals_over_the_target_play_on_until_one_is_higher():
    chain = ScoreChain(STANDARD, (460, 495), (0, 0))
    # NS bid 6, take 6: +60 -> 520.  EW bid 2, take 7: 20 + 5 -> 520.  Both over, equal: play on.
    ns, ew = chain.add(bids("N 3, E 1, S 3, W 1"), (3, 4, 3, 3))
    assert (ns.total, ew.total) == (520, 520)
    assert chain.winner is None and not chain.over
    # NS bid 2, take 7: 25 -> 545.  EW bid 2, take 6: 24 -> 544.  NS is higher: the game ends.
    chain.add(bids("N 1, E 1, S 1, W 1"), (4, 3, 3, 3))
    assert chain.totals == (545, 544) and chain.winner == Side.NS and chain.ended_after == 2


def test_a_bag_penalty_decides_the_winner():
    # NS at 480 with 9 bags bids 3 and takes 5: 30 + 2 - 100 = -68 -> 412.
    # EW at 440 bids 6 and takes 8: 62 -> 502.  Without the penalty NS (512) would have won.
    chain = ScoreChain(STANDARD, (480, 440), (9, 0))
    ns, ew = chain.add(bids("N 2, E 4, S 1, W 2"), (3, 4, 2, 4))
    assert (ns.bag_penalty, ns.total, ns.bags) == (-100, 412, 1)
    assert ew.total == 502
    assert chain.winner == Side.EW and chain.ended_after == 1
    no_penalty = ScoreChain(R(bag_limit=0), (480, 440), (9, 0))
    no_penalty.add(bids("N 2, E 4, S 1, W 2"), (3, 4, 2, 4))
    assert no_penalty.winner == Side.NS


def test_mercy_ends_the_game():
    rules = R(losing_score=-200)
    chain = ScoreChain(rules, (-150, 100), (0, 0))
    chain.add(bids("N 5, E 2, S 4, W 2"), (3, 3, 3, 4))  # NS set: -90 -> -240
    assert chain.totals[0] == -240 and chain.winner == Side.EW


def test_hands_after_the_end_keep_scoring_but_the_result_stays():
    chain = ScoreChain(STANDARD, (480, 0), (0, 0))
    chain.add(bids("N 2, E 2, S 2, W 2"), (2, 4, 2, 5))  # NS +40 -> 520: over
    assert chain.over and chain.final_totals == (520, 45)
    chain.add(bids("N 2, E 2, S 2, W 2"), (2, 4, 2, 5))
    assert chain.totals == (560, -10)  # EW reach 10 bags on the extra hand
    assert chain.result_totals() == (520, 45) and chain.ended_after == 1 and chain.winner == Side.NS


# --- renege penalty ------------------------------------------------------------------------------

PENALTY_CASES = [
    ("from the offender to its left-hand opponent", "N 4, E 3, S 3, W 3", (4, 3, 3, 3), [Seat.N], 3, (1, 6, 3, 3)),
    ("the partner pays when the offender runs out", "N 4, E 3, S 3, W 3", (1, 3, 6, 3), [Seat.N], 3, (0, 6, 4, 3)),
    ("never from a nil bidder first", "N nil, E 3, S 5, W 3", (1, 3, 6, 3), [Seat.N], 2, (1, 5, 4, 3)),
    ("never to an opponent's nil", "N 4, E nil, S 3, W 3", (4, 0, 6, 3), [Seat.N], 3, (1, 0, 6, 6)),
    ("each renege costs the penalty", "N 4, E 3, S 3, W 3", (4, 3, 3, 3), [Seat.E, Seat.E], 1, (4, 1, 5, 3)),
    ("never more than the side holds", "N 4, E 3, S 3, W 3", (1, 5, 1, 6), [Seat.S], 3, (0, 5, 0, 8)),
    # only from a non-nil bidder to a non-nil bidder; fewer where none is left (RULES.md section 5)
    ("never the offender's failed-nil trick", "N nil, E 3, S 5, W 3", (1, 6, 0, 6), [Seat.N], 2, (1, 6, 0, 6)),
    ("never the partner's failed-nil trick", "N 3, E 3, S nil, W 3", (0, 6, 1, 6), [Seat.N], 1, (0, 6, 1, 6)),
    ("fewer when the non-nil partner runs out", "N nil, E 3, S 5, W 3", (2, 5, 1, 5), [Seat.N], 3, (2, 6, 0, 5)),
    ("none when both opponents bid nil", "N 4, E nil, S 3, W nil", (7, 0, 6, 0), [Seat.N], 2, (7, 0, 6, 0)),
    ("a silent partner of a blind seven is not a nil", "N b7, E 3, W 3", (1, 3, 6, 3), [Seat.N], 2, (0, 5, 5, 3)),
]


@pytest.mark.parametrize(
    "bid_text, taken, reneges, n, expected", [c[1:] for c in PENALTY_CASES], ids=[c[0] for c in PENALTY_CASES]
)
def test_apply_renege_penalty(bid_text, taken, reneges, n, expected):
    got = apply_renege_penalty(taken, bids(bid_text), reneges, n)
    assert got == expected
    assert sum(got) == sum(taken)


def test_a_renege_never_pays_its_side():
    # N (nil, failed with 1 trick) reneges; S is set with 0 tricks.  The move must not make N's nil good
    b = bids("N nil, E 3, S 5, W 3")
    before = score_hand(STANDARD, b, (1, 6, 0, 6))
    after = score_hand(STANDARD, b, apply_renege_penalty((1, 6, 0, 6), b, [Seat.N], 2))
    assert after[0].points <= before[0].points and after[0].nil_points == -100


@pytest.mark.parametrize("fnt, tricks", [("side", 7), ("bags_only", 5), ("ignored", 5)])
def test_hand_scores_tricks_are_those_toward_the_contract(fnt, tricks):
    # N's nil fails with 2 tricks; S bid 4 and took 5 (TABLES.md hand_scores.tricks)
    ns, _ = score_hand(R(failed_nil_tricks=fnt), bids("N nil, E 3, S 4, W 3"), (2, 3, 5, 3))
    assert ns.tricks == tricks and ns.row()["tricks"] == tricks
