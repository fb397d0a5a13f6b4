"""Metrics read card play with the game's own deck (issue 13 item 4 seam): a custom ruleset with jokers
plays BJ and LJ as trumps in the metrics as in the checker, not as the preset's deck would."""

from __future__ import annotations

import duckdb
import pytest

from spadework.analysis import metrics
from spadework.analysis.engine.checker import check_db
from spadework.analysis.engine.rules import get_ruleset
from spadework.analysis.sim import simulate_season
from spadework.parsers.db import load_items
from spadework.parsers.schema import create_tables

CUSTOM = {"preset": "standard", "extra_cards": ["BJ", "LJ"], "removed_cards": ["2C", "2H"], "target": 250}


RECORDS, _ = simulate_season(8, 8, seed=12, rules=CUSTOM)


@pytest.fixture(scope="module")
def con():
    recs = RECORDS
    c = duckdb.connect()
    create_tables(c)
    load_items(c, recs, "custom.jsonl")
    check_db(c)
    metrics.prepare(c)
    yield c
    c.close()


def test_a_custom_deck_gets_its_own_key():
    deck = get_ruleset(CUSTOM).deck
    key = metrics.deck_key(deck)
    assert key.startswith("custom:") and metrics.rule_facts(CUSTOM).deck == key
    assert metrics.DECKS[key] is deck
    assert metrics.rule_facts("nyc").deck == "nyc" and metrics.rule_facts({"preset": "barmore", "target": 300}).deck == "barmore"


def test_jokers_are_trumps_in_the_card_play_views(con):
    rows = con.execute("SELECT card, suit, is_trump, count(*) FROM sw_plays WHERE card IN ('BJ', 'LJ') GROUP BY ALL").fetchall()
    assert {r[0] for r in rows} == {"BJ", "LJ"}
    assert all(r[1] == "S" and r[2] for r in rows), rows  # the preset's (standard) deck read them as suit J, no trump
    big, little = (con.execute(f"SELECT max(power) FROM sw_plays WHERE card = '{c}'").fetchone()[0] for c in ("BJ", "LJ"))
    top = con.execute("SELECT max(power) FROM sw_plays WHERE card = 'AS'").fetchone()[0]
    assert big > little > top


def test_spades_broken_counts_a_joker_as_a_spade(con):
    # the trick in which the first spade of the hand was played (metric spades_broken_trick), against
    # the deck of the ruleset: here a joker played first breaks spades
    deck = get_ruleset(CUSTOM).deck
    want = {}
    for rec in RECORDS:
        first = next((n for n, t in enumerate(rec.tricks, 1) if any(deck.is_spade(c) for c in t.cards)), None)
        want[(rec.game_id, rec.hand)] = first
    got = dict(
        ((g, h), t)
        for g, h, t in con.execute("SELECT game_id, hand, any_value(spades_broken_trick) FROM sw_player_hands GROUP BY ALL").fetchall()
    )
    by_joker = [k for k, n in want.items() if n is not None and not any(
        c[1] == "S" for c in next(r for r in RECORDS if (r.game_id, r.hand) == k).tricks[n - 1].cards if c not in ("BJ", "LJ")
    )]
    assert got == want and len(by_joker) >= 1
