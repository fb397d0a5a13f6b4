"""The packed layout of the compiled core (analysis/engine/packed.py): what each array holds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from spadework.analysis.engine.packed import (
    MAX_DEALT,
    NOT_RECORDED,
    O,
    RULES_FLAG_INVALID,
    RULES_FLAG_MIXED,
    PackedHands,
    game_ruleset,
    pack_records,
    pack_rulesets,
)
from spadework.analysis.engine.rules import BARMORE, NYC, OPENSPIEL, STANDARD, get_ruleset
from spadework.analysis.sim import simulate_season
from spadework.parsers.encoding import CARD_CODES, CARD_ID, JOKER_SUIT_ID, NO_CARD, NO_SEAT
from spadework.parsers.model import Bid, SideScore, Trick
from spadework.parsers.seats import Seat, Side


@pytest.fixture(scope="module")
def season():
    recs, _ = simulate_season(8, 6, seed=3, rules="standard", fault_rate=0.0)
    return recs


def test_pack_records_holds_every_recorded_fact(season):
    pk = pack_records(season)
    p = pk.hands
    p.validate()
    assert p.n_hands == len(season) and p.n_games == 6
    assert list(p.game_ids) == list(dict.fromkeys(r.game_id for r in season))
    for i, rec in enumerate(r for g in pk.records for r in g):
        assert p.hand_no[i] == rec.hand and p.dealer[i] == int(rec.dealer)
        assert p.has_deal[i] == (rec.deal is not None)
        for s in range(4):
            got = [CARD_CODES[c] for c in p.deal[i, s, : p.deal_len[i, s]]]
            assert got == list(rec.deal[s])
            assert (p.deal[i, s, p.deal_len[i, s] :] == NO_CARD).all()
        assert p.n_tricks[i] == len(rec.tricks)
        for t, tr in enumerate(rec.tricks):
            assert p.trick_leader[i, t] == int(tr.leader)
            assert [CARD_CODES[c] for c in p.trick_cards[i, t, : p.trick_len[i, t]]] == list(tr.cards)
        assert [(Seat(p.bid_seat[i, j]), p.bid_value[i, j]) for j in range(p.n_bids[i])] == [
            (b.seat, b.value) for b in rec.bids
        ]
        assert p.score_total[i, 0] == rec.score[0].total and p.score_bags[i, 1] == rec.score[1].bags
    assert p.game_start[0] == 0 and p.game_start[-1] == len(season)


def test_short_tricks_missing_values_and_overflow(season):
    rec = season[0]
    short = replace(
        rec,
        tricks=rec.tricks[:2] + (Trick(rec.tricks[2].leader, rec.tricks[2].cards[:3], Seat.E),),
        taken=(3, None, 2, 1),
        score=(SideScore(points=50), SideScore()),
        score_before=(120, -40),
        winner=Side.EW,
        bids=(Bid(Seat.N, 4.5), Bid(Seat.E, 0, nil=True, blind=True), Bid(Seat.S, 14), Bid(Seat.W, 3)),
    )
    too_many_cards = replace(rec, game_id="x", tricks=(Trick(Seat.N, ("AS", "KS", "QS", "JS", "TS")),))
    huge = replace(rec, game_id="y", score=(SideScore(total=2**40), SideScore()))
    p = pack_records([short, too_many_cards, huge]).hands
    assert p.n_tricks[0] == 3 and list(p.trick_len[0, :4]) == [4, 4, 3, 0]
    assert p.trick_cards[0, 2, 3] == NO_CARD and p.trick_winner[0, 2] == int(Seat.E)
    assert p.trick_winner[0, 0] == int(rec.tricks[0].winner) and p.trick_leader[0, 3] == NO_SEAT and p.trick_winner[0, 3] == NO_SEAT
    assert list(p.taken[0]) == [3, NOT_RECORDED, 2, 1] and p.has_taken[0]
    assert list(p.score_points[0]) == [50, NOT_RECORDED] and p.score_total[0, 0] == NOT_RECORDED
    assert list(p.score_before[0]) == [120, -40] and (p.bags_before[0] == NOT_RECORDED).all()
    assert p.winner[0] == int(Side.EW)
    assert list(p.bid_value[0, :4]) == [4.5, 0.0, 14.0, 3.0]
    assert list(p.bid_whole[0, :4]) == [False, False, False, True]
    assert list(p.bid_nil[0, :4]) == [False, True, False, False] and p.bid_blind[0, 1]
    assert list(p.overflow) == [False, True, True]


def test_a_wrong_deal_of_fourteen_cards_fits(season):
    rec = season[0]
    deal = (rec.deal[0] + (rec.deal[1][0],), rec.deal[1][1:], rec.deal[2], rec.deal[3])
    p = pack_records([replace(rec, deal=deal)]).hands
    assert list(p.deal_len[0]) == [14, 12, 13, 13] and not p.overflow[0]
    assert p.deal[0, 0, 13] == CARD_ID[rec.deal[1][0]] and MAX_DEALT >= 14


def test_ruleset_table_is_data():
    custom = get_ruleset(
        {"preset": "standard", "extra_cards": ["BJ", "LJ"], "removed_cards": ["2C", "2D"], "first_lead": "left_of_dealer",
         "blind_bids": {"values": [5, 7], "points": 99, "behind_by": 50}, "losing_score": -200, "min_side_bid": 4}
    )
    t = pack_rulesets([STANDARD, BARMORE, NYC, OPENSPIEL, custom])
    assert t.opt[0, O["target"]] == 500 and t.opt[0, O["blind_nil_mode"]] == 2 and t.opt[0, O["blind_nil_behind_by"]] == 100
    assert t.opt[1, O["nil"]] == 0 and t.opt[1, O["blind_bid_values"]] == 1 << 7 and t.opt[1, O["blind_bid_points"]] == 140
    assert t.opt[3, O["dealer"]] == int(Seat.W) and t.opt[3, O["max_side_bid"]] == 13 and t.opt[0, O["dealer"]] == NO_SEAT
    assert t.opt[4, O["blind_bid_values"]] == (1 << 5) | (1 << 7) and t.opt[4, O["blind_bid_behind_by"]] == 50
    assert t.opt[4, O["has_losing_score"]] == 1 and t.opt[4, O["losing_score"]] == -200
    bj, d2, s2 = CARD_ID["BJ"], CARD_ID["2D"], CARD_ID["2S"]
    assert t.play_suit[0, bj] == JOKER_SUIT_ID  # a joker outside the standard deck plays as J
    assert t.play_suit[2, d2] == 0 and t.play_power[2, d2] > t.play_power[2, s2]  # nyc's 2D is a trump above 2S
    assert t.play_suit[4, bj] == 0 and t.play_power[4, bj] > t.play_power[4, CARD_ID["AS"]]  # the custom deck's BJ
    assert int(t.deck_mask[1]) >> CARD_ID["2C"] & 1 == 0 and int(t.deck_mask[1]) >> bj & 1 == 1


def test_game_ruleset_flags():
    assert game_ruleset(["standard", "standard"]) == (STANDARD, 0)
    assert game_ruleset(["nope"]) == (STANDARD, RULES_FLAG_INVALID)
    assert game_ruleset(["barmore", "standard"]) == (BARMORE, RULES_FLAG_MIXED)
    assert game_ruleset(["barmore", {"preset": "barmore"}]) == (BARMORE, 0)
    assert game_ruleset(["nope", "barmore"], override=NYC) == (NYC, 0)


def test_validate_names_the_wrong_array(season):
    p = pack_records(season[:3]).hands
    bad = replace(p, taken=p.taken.astype(np.int64))
    with pytest.raises(ValueError, match="taken"):
        bad.validate()
    assert PackedHands.empty(5, 2).deal.shape == (5, 4, MAX_DEALT)
