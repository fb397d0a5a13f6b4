"""Rulesets as data: presets, options, names and errors (RULES.md sections 2, 3, 5)."""

from __future__ import annotations

import dataclasses

import pytest

from spadework.analysis.engine.rules import (
    BARMORE,
    NYC,
    OPENSPIEL,
    OPTION_KEYS,
    PRESETS,
    STANDARD,
    Ruleset,
    RulesError,
    get_ruleset,
    ruleset_name,
)
from spadework.parsers.cards import JOKER_DECK, NYC_DECK, STANDARD_DECK
from spadework.parsers.seats import Seat

RULES_MD_KEYS = (
    "target nil nil_points blind_nil_points blind_nil blind_bids min_side_bid failed_nil_tricks bag_limit "
    "bag_penalty bag_points ten_for_two_hundred losing_score first_lead spades_lead_any_time renege_penalty_tricks"
).split()


def test_every_key_of_the_rules_md_options_table_is_an_option():
    assert set(RULES_MD_KEYS) <= set(OPTION_KEYS)
    assert set(OPTION_KEYS) - set(RULES_MD_KEYS) == {"max_side_bid", "removed_cards", "extra_cards", "trump_order", "dealer"}


def test_standard_defaults_are_the_bracketed_values_of_rules_md():
    s = get_ruleset("standard")
    assert (s.target, s.nil, s.nil_points, s.blind_nil_points) == (500, True, 100, 200)
    assert s.blind_nil == {"behind_by": 100}
    assert s.blind_bids is None and s.min_side_bid is None and s.max_side_bid is None
    assert (s.failed_nil_tricks, s.bag_limit, s.bag_penalty, s.bag_points) == ("side", 10, 100, 1)
    assert (s.ten_for_two_hundred, s.losing_score, s.first_lead) == (False, None, "left_of_dealer")
    assert (s.spades_lead_any_time, s.renege_penalty_tricks, s.dealer) == (False, 0, None)
    assert s.deck is STANDARD_DECK and len(s.deck) == 52


def test_barmore_preset():
    b = get_ruleset("barmore")
    assert b.deck is JOKER_DECK
    assert "2C" not in b.deck and "2H" not in b.deck and "BJ" in b.deck and "LJ" in b.deck
    assert b.deck.trump_order[:4] == ("BJ", "LJ", "2S", "AS")
    assert b.nil is False and b.blind_nil == "never"
    assert b.blind_bids == {"values": [7], "points": 140}
    assert b.blind_bid_known(7) and not b.blind_bid_known(6) and b.blind_bid_points(7) == 140
    assert b.blind_partner_bids is False
    assert b.blind_nil_allowed(0, 500) is None  # no blind nil at all: BID_INVALID, not BLIND_BID_NOT_ALLOWED
    assert b.suits["BJ"] == b.suits["LJ"] == b.suits["2S"] == "S"


def test_nyc_preset_differs_from_standard_only_in_its_deck():
    n = get_ruleset("nyc")
    assert n.deck is NYC_DECK
    assert n.deck.trump_order[:4] == ("BJ", "LJ", "2D", "2S")
    assert n.suits["2D"] == "S" and n.suits["3D"] == "D"
    deck_keys = {"removed_cards", "extra_cards", "trump_order"}
    for key in OPTION_KEYS:
        if key not in deck_keys:
            assert getattr(n, key) == getattr(STANDARD, key), key


def test_openspiel_preset():
    o = get_ruleset("openspiel")
    assert o.deck is STANDARD_DECK
    assert o.blind_nil == "never" and o.failed_nil_tricks == "side" and o.max_side_bid == 13
    assert o.fixed_dealer == Seat.W  # N bids and leads first
    assert o.spades_lead_any_time is False and o.first_lead == "left_of_dealer"


def test_presets_list():
    assert PRESETS == ("standard", "barmore", "nyc", "openspiel")
    assert (STANDARD.preset, BARMORE.preset, NYC.preset, OPENSPIEL.preset) == PRESETS


@pytest.mark.parametrize(
    "spec",
    [None, "standard", "STANDARD", " standard ", {"preset": "standard"}, {}, STANDARD],
)
def test_forms_that_name_standard(spec):
    assert get_ruleset(spec) == STANDARD


def test_a_dict_sets_options_on_its_preset_and_overrides_win():
    r = get_ruleset({"preset": "nyc", "target": 300, "blind_nil": "always"})
    assert (r.preset, r.target, r.blind_nil, r.deck) == ("nyc", 300, "always", NYC_DECK)
    r2 = get_ruleset({"preset": "nyc", "target": 300}, overrides={"target": 250, "bag_limit": 0})
    assert (r2.target, r2.bag_limit) == (250, 0)
    r3 = get_ruleset(BARMORE, overrides={"target": 250})
    assert r3.preset == "barmore" and r3.target == 250 and r3.deck is JOKER_DECK


def test_values_are_read_from_cli_text_too():
    r = get_ruleset({"target": "300", "nil": "false", "losing_score": "-200", "removed_cards": "2C 2H",
                     "extra_cards": ["bj", "LJ"]})
    assert (r.target, r.nil, r.losing_score) == (300, False, -200)
    assert r.removed_cards == ("2C", "2H") and r.extra_cards == ("BJ", "LJ")
    assert r.deck.cards == JOKER_DECK.cards and r.deck is not JOKER_DECK  # default trump order: jokers, AS..2S


def test_a_ruleset_may_list_its_own_deck():
    # without trump_order: the extra jokers, then AS down to 2S
    r = get_ruleset({"removed_cards": ["2C", "2D"], "extra_cards": ["BJ", "LJ"]})
    assert r.deck.trump_order[:3] == ("BJ", "LJ", "AS") and r.deck.trump_order[-1] == "2S"
    assert "2D" not in r.deck and r.suits["BJ"] == "S"
    r2 = get_ruleset({"removed_cards": ["2C", "2D"], "extra_cards": ["BJ", "LJ"], "trump_order": ["LJ", "BJ"] + [
        x + "S" for x in "AKQJT98765432"]})
    assert r2.powers["LJ"] > r2.powers["BJ"] > r2.powers["AS"]


def test_unknown_preset_names_the_presets():
    with pytest.raises(RulesError) as exc:
        get_ruleset("pinochle")
    msg = str(exc.value)
    assert "'pinochle'" in msg
    for p in PRESETS:
        assert p in msg
    assert isinstance(exc.value, ValueError)


def test_unknown_option_names_the_options():
    with pytest.raises(RulesError) as exc:
        get_ruleset({"preset": "standard", "bagz": 5})
    msg = str(exc.value)
    assert "'bagz'" in msg
    for key in RULES_MD_KEYS:
        assert key in msg


@pytest.mark.parametrize(
    "options, words",
    [
        ({"target": "abc"}, ["target", "'abc'", "whole number"]),
        ({"target": 0}, ["target", "at least 1"]),
        ({"target": 2.5}, ["target"]),
        ({"target": True}, ["target"]),
        ({"nil": "maybe"}, ["nil", "true or false"]),
        ({"blind_nil": "sometimes"}, ["blind_nil", "never", "always", "behind_by"]),
        ({"blind_nil": {"behind": 100}}, ["blind_nil"]),
        ({"blind_bids": {"values": []}}, ["blind_bids.values"]),
        ({"blind_bids": {"values": [14]}}, ["blind_bids.values"]),
        ({"blind_bids": {"values": [7], "bonus": 1}}, ["blind_bids", "'bonus'", "points"]),
        ({"blind_bids": 7}, ["blind_bids"]),
        ({"failed_nil_tricks": "team"}, ["failed_nil_tricks", "bags_only", "ignored"]),
        ({"bag_limit": -1}, ["bag_limit"]),
        ({"first_lead": "dealer"}, ["first_lead", "two_of_clubs"]),
        ({"renege_penalty_tricks": -3}, ["renege_penalty_tricks"]),
        ({"removed_cards": ["1S"]}, ["removed_cards", "'1S'"]),
        ({"removed_cards": ["2C"]}, ["51 cards"]),
        ({"trump_order": ["2C", "AS"], "removed_cards": ["2C", "2H"], "extra_cards": ["BJ", "LJ"]}, ["trump_order", "2C"]),
        ({"min_side_bid": 8, "max_side_bid": 6}, ["min_side_bid", "max_side_bid"]),
        ({"dealer": "X"}, ["dealer", "seat"]),
        ({"preset": 3}, ["preset"]),
    ],
)
def test_bad_values_are_errors_that_say_what_is_allowed(options, words):
    with pytest.raises(RulesError) as exc:
        get_ruleset({"preset": "standard", **options} if "preset" not in options else options)
    for w in words:
        assert w in str(exc.value)


def test_bad_spec_types():
    with pytest.raises(RulesError):
        get_ruleset(42)
    with pytest.raises(RulesError):
        get_ruleset("standard {not json}")


def test_ruleset_name_is_stable_and_round_trips():
    assert ruleset_name("standard") == "standard"
    assert ruleset_name(None) == "standard"
    assert ruleset_name({"preset": "barmore"}) == "barmore"
    assert ruleset_name({"preset": "standard", "target": 500}) == "standard"  # the preset's own value
    a = ruleset_name({"preset": "standard", "target": 300, "blind_nil": "always"})
    b = ruleset_name({"blind_nil": "always", "target": 300, "preset": "standard"})
    assert a == b == 'standard {"blind_nil":"always","target":300}'
    assert get_ruleset(a) == get_ruleset({"target": 300, "blind_nil": "always"})
    for p in PRESETS:
        assert get_ruleset(ruleset_name(p)) == get_ruleset(p)
    assert ruleset_name(get_ruleset("nyc", {"losing_score": -300})) == 'nyc {"losing_score":-300}'
    assert get_ruleset({"preset": "nyc", "losing_score": -300}).name == 'nyc {"losing_score":-300}'


def test_rulesets_are_values():
    a = get_ruleset({"target": 300})
    b = get_ruleset({"target": "300"})
    assert a == b and hash(a) == hash(b)
    assert a != STANDARD
    assert len({a, b, STANDARD, NYC}) == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.target = 400  # type: ignore[misc]
    assert isinstance(a, Ruleset)
    assert a.options()["preset"] == "standard" and a.options()["target"] == 300


def test_blind_nil_condition():
    assert STANDARD.blind_nil_allowed(0, 100) is True  # behind by exactly 100
    assert STANDARD.blind_nil_allowed(0, 99) is False
    assert STANDARD.blind_nil_allowed(-150, -40) is True
    assert get_ruleset({"blind_nil": "always"}).blind_nil_allowed(300, 0) is True
    assert get_ruleset({"blind_nil": "never"}).blind_nil_allowed(0, 400) is None
    assert get_ruleset({"nil": False}).blind_nil_allowed(0, 400) is None
    assert get_ruleset({"blind_nil": {"behind_by": 250}}).blind_nil_allowed(0, 249) is False


def test_blind_bid_conditions():
    r = get_ruleset({"blind_bids": {"values": [6, 7, 8], "behind_by": 250, "partner_bids": True}})
    assert r.blind_bid_known(6) and not r.blind_bid_known(5)
    assert r.blind_bid_score_allowed(0, 250) and not r.blind_bid_score_allowed(0, 249)
    assert r.blind_partner_bids is True
    assert r.blind_bid_points(8) == 160


@pytest.mark.parametrize("value", [10**20, 2**40, 1e15])
def test_absurdly_large_whole_number_options_are_refused(value):
    # a target beyond 64 bits once crashed the checker (found by fuzzing); scores are 32-bit
    with pytest.raises(RulesError, match="'target'.*between"):
        get_ruleset({"preset": "standard", "target": value})
    assert get_ruleset({"preset": "standard", "target": 999_999_999}).target == 999_999_999


def test_rules_text_that_is_a_json_object_is_read_however_it_is_spaced():
    # '{"preset": "nyc", ...}' has a space and ends with '}': it once went down the "name {json}" branch
    spaced = get_ruleset('{"preset": "nyc", "target": 300}')
    assert spaced == get_ruleset('{"preset":"nyc","target":300}') == get_ruleset({"preset": "nyc", "target": 300})
    assert (spaced.preset, spaced.target) == ("nyc", 300)
    assert get_ruleset('standard {"target": 250}').target == 250  # the form ruleset_name writes


def test_the_two_of_clubs_lead_with_a_deck_without_it_applies_to_nobody():
    """RULES.md makes only an unknown key an error: ``first_lead: two_of_clubs`` under barmore or nyc
    (no 2C) was refused, and the game then checked under standard with every joker DEAL_INVALID
    (found by an independent play-rules oracle).  Now nobody holds the 2C, so the seat left of the
    dealer leads (as when no seat is known to hold it)."""
    rs = get_ruleset({"preset": "nyc", "first_lead": "two_of_clubs"})
    assert rs.first_lead == "two_of_clubs" and "2C" not in rs.deck and "BJ" in rs.deck


@pytest.mark.parametrize(
    "spec, preset",
    [
        ({"preset": "nyc", "targte": 300}, "nyc"),
        ('{"preset": "barmore", "nil": "maybe"}', "barmore"),
        ("barmore {\"targte\": 1}", "barmore"),
        ({"targte": 300}, "standard"),
        ({"preset": "whist"}, "standard"),
        ("bridge", "standard"),
        (42, "standard"),
    ],
)
def test_unreadable_rules_fall_back_to_the_preset_they_name(spec, preset):
    from spadework.analysis.engine.rules import fallback_ruleset, rules_key

    assert rules_key(spec)[1] is None  # unreadable: RULES_INVALID
    assert fallback_ruleset(spec) == get_ruleset(preset)
