"""The compiled core against the reference checker: the same rows and the same findings, everywhere.

For every game, :func:`spadework.analysis.engine.checker.check_game` (the reference) and the core
(:func:`spadework.analysis.engine.compiled.check_packed` over :func:`~spadework.analysis.engine.packed.pack_records`)
must give identical ``tricks``, ``hand_scores`` and ``games`` rows, and identical findings: code,
hand, trick, seat, card, side, field, recorded and expected value, in the same order (the core
writes no message text; the route that adds it is checked with the messages too).

Inputs: simulated seasons with every planted fault kind for every preset and a set of option mixes,
mid-game starts, hypothesis-drawn corruptions of simulated games (dropped, duplicated and swapped
cards, short and empty tricks, wrong leaders, missing deals, hands and bids, wrong recorded scores,
taken, winners, dealers, cards outside the deck, mixed rules) and fully random records.
"""

from __future__ import annotations

import functools
import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import games as random_games

from spadework.analysis.engine import compiled
from spadework.analysis.engine.checker import check_game, iter_game_checks
from spadework.analysis.engine.packed import pack_records
from spadework.analysis.engine.rules import get_ruleset
from spadework.analysis.sim import simulate_season
from spadework.parsers.cards import JOKERS, STANDARD_CARDS
from spadework.parsers.model import Bid, HandRecord, SideScore, Trick
from spadework.parsers.seats import SEATS, SIDES, Seat

PRESETS = ("standard", "barmore", "nyc", "openspiel")

MIXES: dict[str, dict[str, Any]] = {
    "two_of_clubs": {"first_lead": "two_of_clubs"},
    "renege_penalty": {"renege_penalty_tricks": 2},
    "failed_nil_bags_only": {"failed_nil_tricks": "bags_only"},
    "failed_nil_ignored": {"failed_nil_tricks": "ignored", "nil_points": 50, "blind_nil": "always"},
    "ten_for_two_hundred": {"ten_for_two_hundred": True, "bag_points": 2},
    "blind_bids": {"blind_bids": {"values": [5, 6, 7], "points": 120, "behind_by": 100, "partner_bids": True}},
    "no_bag_penalty": {"bag_limit": 0},
    "losing_score": {"losing_score": -150, "target": 300},
    "spades_lead_any_time": {"spades_lead_any_time": True},
    "side_bid_limits": {"min_side_bid": 4, "max_side_bid": 10},
    "custom_joker_deck": {"extra_cards": ["BJ", "LJ"], "removed_cards": ["2H", "2D"], "first_lead": "two_of_clubs"},
    "fixed_dealer_small_bags": {"dealer": "N", "bag_limit": 5, "bag_penalty": 50},
    "barmore_penalty_mercy": {"preset": "barmore", "renege_penalty_tricks": 1, "losing_score": -200},
    "nyc_penalty_any_time": {"preset": "nyc", "renege_penalty_tricks": 3, "spades_lead_any_time": True},
}
"""Option mixes (RULES.md section 5), each on top of ``standard`` unless it names a preset."""


def _rules(name: str) -> Any:
    return name if name in PRESETS else {"preset": "standard", **MIXES[name]}


def _places(findings) -> list[tuple]:
    # RULES_INVALID / RULES_MIXED are about the rules text: the core flags such games and the
    # reference writes them, so they are not among the core's findings
    return [
        (f.code, f.hand, f.trick, f.seat, f.card, f.side, f.field, f.recorded, f.expected)
        for f in findings
        if not f.code.startswith("RULES_")
    ]


def _no_play(rec: HandRecord) -> HandRecord:
    return replace(rec, deal=None, tricks=None)


def assert_same(records: list[HandRecord], rules: Any = None) -> dict[str, int]:
    """Check ``records`` (ordered by game) both ways and assert identical rows and findings per game.
    Returns counts: games, compared (the core checked them), findings."""
    packed = pack_records(records, rules)
    res = compiled.check_packed(packed.hands, packed.rulesets)
    flat = [r for recs in packed.records for r in recs]
    # the message text, from the reference re-checking only the hands with findings; the records of
    # hands it need not replay come without their deal and tricks, as the stored rows' do
    found = compiled.findings(res, lambda rows, play: [flat[k] if play else _no_play(flat[k]) for k in rows.tolist()])
    counts = {"games": 0, "compared": 0, "findings": 0, "reference": 0}
    for g, recs in enumerate(packed.records):
        counts["games"] += 1
        try:
            ref = check_game(recs, rules)
        except ValueError:
            # records the reference cannot replay (e.g. more than 13 tricks): the core must leave them to it
            assert res.out.g_reference[g] or res.hands.game_rules_flag[g], recs[0].game_id
            continue
        if res.reference_mask[g]:
            counts["reference"] += 1
            assert g not in found
            if res.out.g_reference[g]:
                continue
        where = f"game {ref.game_id!r} ({ref.rules})"
        tricks, scores, game = res.game_rows(g)
        assert game == ref.game, where
        assert tricks == ref.tricks, where
        assert scores == ref.hand_scores, where
        assert res.finding_places(g) == _places(ref.findings), where
        assert (res.out.g_nfind[g] > 0 or packed.hands.game_rules_flag[g] != 0) == bool(ref.findings), where
        if not res.reference_mask[g]:
            assert [f.to_row() for f in found.get(g, [])] == [f.to_row() for f in ref.findings], where
        counts["compared"] += 1
        counts["findings"] += len(ref.findings)
    return counts


# --- simulated seasons: every planted fault kind, every preset and option mix -------------------------


@functools.lru_cache(maxsize=None)
def _season(rules_name: str, games: int, seed: int, fault_rate: float) -> tuple[HandRecord, ...]:
    recs, _ = simulate_season(12, games, seed, _rules(rules_name), fault_rate=fault_rate)
    return tuple(recs)


@pytest.mark.parametrize("preset", PRESETS)
def test_simulated_seasons_with_every_fault_kind(preset):
    counts = assert_same(list(_season(preset, 40, 11, 0.2)))
    assert counts["compared"] >= 38 and counts["findings"] > 100


@pytest.mark.parametrize("mix", sorted(MIXES))
def test_option_mixes(mix):
    counts = assert_same(list(_season(mix, 16, 5, 0.15)))
    assert counts["compared"] >= 15 and counts["findings"] > 10


def test_clean_seasons_have_no_findings_and_the_same_rows():
    for preset in PRESETS:
        counts = assert_same(list(_season(preset, 10, 3, 0.0)))
        assert counts["compared"] == 10


def test_mid_game_starts_with_score_before():
    """A log that starts mid-game: the first hand's score_before/bags_before start the chains (and a
    later hand's own score_before is checked against the state before it)."""
    rng = random.Random(4)
    recs: list[HandRecord] = []
    for preset in PRESETS:
        season = _season(preset, 12, 9, 0.1)
        by_game: dict[str, list[HandRecord]] = {}
        for r in season:
            by_game.setdefault(r.game_id, []).append(r)
        for gid, hands in by_game.items():
            if len(hands) < 4:
                continue
            k = rng.randint(1, len(hands) - 2)
            prev = hands[k - 1].score
            first = hands[k]
            if prev is not None and prev[0].total is not None and prev[1].total is not None:
                first = replace(first, score_before=(prev[0].total, prev[1].total))
                if prev[0].bags is not None and prev[1].bags is not None and rng.random() < 0.7:
                    first = replace(first, bags_before=(prev[0].bags, prev[1].bags))
            rest = list(hands[k + 1:])
            if rest and rng.random() < 0.5:
                j = rng.randrange(len(rest))
                sb = (rng.randint(-100, 400), rng.randint(-100, 400))
                rest[j] = replace(rest[j], score_before=sb, bags_before=(rng.randint(0, 9), rng.randint(0, 9)))
            recs += [replace(first, game_id=gid + "-mid"), *(replace(r, game_id=gid + "-mid") for r in rest)]
    counts = assert_same(recs)
    assert counts["compared"] >= 30


# --- corruption drawn by hypothesis ------------------------------------------------------------------

_ALL_CARDS = STANDARD_CARDS + JOKERS
_MUTATIONS = (
    "drop_card", "drop_tricks", "empty_trick", "replace_card", "swap_cards", "leader", "no_deal", "deal_card",
    "taken", "score", "score_before", "drop_hand", "dealer", "bid_value", "bid_flags", "bid_extra", "bid_drop",
    "bid_order", "winner", "trick_winner", "outside_card", "rules_mixed", "no_play", "dup_in_seat",
    "dup_hand", "renumber",
)


@functools.lru_cache(maxsize=None)
def _pool() -> dict[str, list[list[HandRecord]]]:
    """Simulated games per preset/mix, to corrupt."""
    out: dict[str, list[list[HandRecord]]] = {}
    for name in (*PRESETS, *MIXES):
        by_game: dict[str, list[HandRecord]] = {}
        for r in _season(name, 6, 21, 0.1):
            by_game.setdefault(r.game_id, []).append(r)
        out[name] = list(by_game.values())
    return out


def _mutate(rec: HandRecord, kind: str, rnd: random.Random, game: list[HandRecord]) -> HandRecord | None:
    """``rec`` with one corruption of ``kind`` (``None`` = drop the hand)."""
    tricks = list(rec.tricks or ())
    if kind == "drop_hand":
        return None
    if kind == "renumber":  # a hand number repeated, skipped or out of order
        return replace(rec, hand=max(1, rec.hand + rnd.choice((-1, 0, 1, 2, 5))))
    if kind in ("drop_card", "replace_card", "leader", "trick_winner", "outside_card") and not tricks:
        kind = "score"
    if kind == "drop_card":
        t = rnd.randrange(len(tricks))
        cards = list(tricks[t].cards)
        if cards:
            del cards[rnd.randrange(len(cards))]
        tricks[t] = replace(tricks[t], cards=tuple(cards))
    elif kind == "drop_tricks":
        tricks = tricks[: rnd.randint(0, 12)]
    elif kind == "empty_trick":
        tricks.insert(min(rnd.randint(0, len(tricks)), 12), Trick(rnd.choice(SEATS), ()))
        tricks = tricks[:13]
    elif kind in ("replace_card", "outside_card"):
        t = rnd.randrange(len(tricks))
        cards = list(tricks[t].cards)
        if cards:
            pool = [c for tr in tricks for c in tr.cards] if kind == "replace_card" else ["BJ", "LJ", "2C", "2H"]
            cards[rnd.randrange(len(cards))] = rnd.choice(pool)
        tricks[t] = replace(tricks[t], cards=tuple(cards))
    elif kind == "swap_cards":
        spots = [(t, j) for t, tr in enumerate(tricks) for j in range(len(tr.cards))]
        if len(spots) >= 2:
            (t1, j1), (t2, j2) = rnd.sample(spots, 2)
            c1, c2 = tricks[t1].cards[j1], tricks[t2].cards[j2]
            a = list(tricks[t1].cards)
            a[j1] = c2
            tricks[t1] = replace(tricks[t1], cards=tuple(a))
            b = list(tricks[t2].cards)
            b[j2] = c1
            tricks[t2] = replace(tricks[t2], cards=tuple(b))
    elif kind == "leader":
        t = rnd.randrange(len(tricks))
        tricks[t] = replace(tricks[t], leader=rnd.choice(SEATS))
    elif kind == "trick_winner":
        t = rnd.randrange(len(tricks))
        tricks[t] = replace(tricks[t], winner=rnd.choice((*SEATS, None)))
    elif kind == "no_deal":
        return replace(rec, deal=None)
    elif kind == "no_play":
        return replace(rec, tricks=None if rnd.random() < 0.5 else ())
    elif kind == "deal_card" and rec.deal is not None:
        deal = [list(h) for h in rec.deal]
        s1, s2 = rnd.sample(range(4), 2)
        if deal[s1]:
            card = deal[s1].pop(rnd.randrange(len(deal[s1])))
            if rnd.random() < 0.5:
                deal[s2].append(card)  # moved: 12 and 14 cards
            else:
                deal[s1].append(rnd.choice(_ALL_CARDS))  # replaced: maybe twice, maybe outside the deck
        return replace(rec, deal=tuple(tuple(h) for h in deal))
    elif kind == "dup_in_seat" and rec.deal is not None:
        deal = [list(h) for h in rec.deal]
        s = rnd.randrange(4)
        if deal[s]:
            deal[s][rnd.randrange(len(deal[s]))] = deal[s][0]
        return replace(rec, deal=tuple(tuple(h) for h in deal))
    elif kind == "taken":
        choice = rnd.random()
        if choice < 0.3:
            return replace(rec, taken=None)
        taken = tuple(rnd.choice((None, rnd.randint(-1, 14))) if choice < 0.6 else rnd.randint(0, 6) for _ in SEATS)
        return replace(rec, taken=None if all(v is None for v in taken) else taken)
    elif kind == "score":
        if rec.score is None or rnd.random() < 0.2:
            return replace(rec, score=None)
        sides = list(rec.score)
        sd = rnd.randrange(2)
        field = rnd.choice(("points", "total", "bags"))
        old = getattr(sides[sd], field)
        new = None if rnd.random() < 0.2 or old is None else old + rnd.choice((-100, -10, -1, 1, 9, 10, 100))
        sides[sd] = replace(sides[sd], **{field: new})
        return replace(rec, score=(sides[0], sides[1]))
    elif kind == "score_before":
        sb = (rnd.randint(-200, 500), rnd.randint(-200, 500))
        if rec.score is not None and rnd.random() < 0.5:
            prev = game[max(0, game.index(rec) - 1)].score
            if prev is not None and prev[0].total is not None and prev[1].total is not None:
                sb = (prev[0].total, prev[1].total)
        bb = (rnd.randint(0, 12), rnd.randint(0, 12)) if rnd.random() < 0.5 else None
        return replace(rec, score_before=sb, bags_before=bb)
    elif kind == "dealer":
        return replace(rec, dealer=rnd.choice(SEATS))
    elif kind in ("bid_value", "bid_flags", "bid_extra", "bid_drop", "bid_order"):
        bids = list(rec.bids)
        if kind == "bid_extra" or not bids:
            value = rnd.choice((0, 3, 7, 14, 4.5, -1))
            bids.insert(rnd.randint(0, len(bids)), Bid(rnd.choice(SEATS), value, nil=value == 0, blind=rnd.random() < 0.3))
        elif kind == "bid_value":
            j = rnd.randrange(len(bids))
            value = rnd.choice((0, 1, 5, 7, 10, 13, 14, 4.5, -1, 0.0, 7.0))
            bids[j] = replace(bids[j], value=value, nil=value == 0)
        elif kind == "bid_flags":
            j = rnd.randrange(len(bids))
            bids[j] = replace(bids[j], blind=not bids[j].blind, nil=bids[j].nil if rnd.random() < 0.7 else not bids[j].nil)
        elif kind == "bid_drop":
            del bids[rnd.randrange(len(bids))]
        else:
            rnd.shuffle(bids)
        return replace(rec, bids=tuple(bids))
    elif kind == "winner":
        return replace(rec, winner=rnd.choice((*SIDES, None)))
    elif kind == "rules_mixed":
        return replace(rec, rules=rnd.choice(("nyc", "barmore", "nonsense", {"preset": "standard", "target": 300})))
    return replace(rec, tricks=tuple(tricks))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from((*PRESETS, *MIXES)),
    pick=st.integers(0, 10**6),
    mutations=st.lists(st.tuples(st.sampled_from(_MUTATIONS), st.integers(0, 10**6)), min_size=1, max_size=6),
)
def test_corrupted_games(name, pick, mutations):
    pool = _pool()[name]
    game = list(pool[pick % len(pool)])
    for kind, seed in mutations:
        if not game:
            break
        rnd = random.Random(seed)
        k = rnd.randrange(len(game))
        if kind == "dup_hand":  # the same hand recorded twice
            game.insert(k, game[k])
            continue
        new = _mutate(game[k], kind, rnd, game)
        if new is None:
            del game[k]
        else:
            game[k] = new
    if game:
        assert_same(sorted(game, key=lambda r: r.hand))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(records=random_games(max_hands=5, extras=False, any_card_order=True))
def test_random_records(records):
    assert_same(records)


@pytest.mark.parametrize("with_deal", [True, False], ids=["dealt", "no_deal"])
def test_cards_outside_the_deck_that_the_seat_holds(with_deal):
    """A card outside the deck, played by a seat that holds it (dealt to it, or with no deal
    recorded, played by it first), leading a trick or played later in it.  The core's
    common-trick path must not take such a trick (DEAL_INVALID without a deal, no renege or lead
    finding on that card, spades maybe broken)."""
    recs: list[HandRecord] = []
    for name in (*PRESETS, "custom_joker_deck"):
        deck = set(get_ruleset(_rules(name)).deck.cards)
        outside = [c for c in _ALL_CARDS if c not in deck]
        for g, game in enumerate(_pool()[name][:3]):
            hands = []
            for h, rec in enumerate(game):
                if not rec.tricks or len(rec.tricks) != 13 or rec.deal is None:
                    hands.append(rec)
                    continue
                t, j = (h * 5 + g) % 12, (h + g) % 4  # a trick before the last; lead or follow
                trick = rec.tricks[t]
                seat = trick.seats()[j]
                old, new = trick.cards[j], outside[h % len(outside)]
                tricks = list(rec.tricks)
                tricks[t] = replace(trick, cards=tuple(new if k == j else c for k, c in enumerate(trick.cards)))
                deal = None
                if with_deal:
                    deal = tuple(tuple(new if (s == seat and c == old) else c for c in held)
                                 for s, held in zip(SEATS, rec.deal))
                hands.append(replace(rec, tricks=tuple(tricks), deal=deal))
            recs += [replace(r, game_id=f"{r.game_id}-out") for r in hands]
    counts = assert_same(recs)
    assert counts["compared"] >= 10
    assert counts["findings"] > 0


def test_a_ruleset_override_applies_to_every_game():
    recs = list(_season("standard", 4, 2, 0.2))
    for rules in ("barmore", {"preset": "standard", "renege_penalty_tricks": 1, "target": 250}):
        assert assert_same(recs, get_ruleset(rules))["compared"] == 4


# --- the route with messages, and the columns -----------------------------------------------------


def test_check_records_gives_the_reference_game_checks_with_messages():
    recs = list(_season("standard", 20, 8, 0.02)) + list(_season("barmore", 6, 8, 0.15))
    mine = list(compiled.check_records(recs))
    ref = list(iter_game_checks(recs))
    assert len(mine) == len(ref) == 26
    assert sum(1 for gc in ref if gc.findings) >= 6 and sum(1 for gc in ref if not gc.findings) >= 3
    for a, b in zip(mine, ref):
        assert (a.game_id, a.rules, a.game, a.tricks, a.hand_scores) == (b.game_id, b.rules, b.game, b.tricks, b.hand_scores)
        assert [f.to_row() for f in a.findings] == [f.to_row() for f in b.findings]
        assert (a.totals, a.winner, a.ended_at_hand) == (b.totals, b.winner, b.ended_at_hand)


def test_columns_are_the_game_rows():
    recs = list(_season("standard", 5, 8, 0.2)) + list(_season("renege_penalty", 4, 8, 0.2))
    packed = pack_records(recs)
    res = compiled.check_packed(packed.hands, packed.rulesets)
    cols = res.columns()
    for table, key in (("tricks", 0), ("hand_scores", 1)):
        rows = [r for g in range(packed.hands.n_games) for r in res.game_rows(g)[key]]
        got = [dict(zip(cols[table], vals)) for vals in zip(*cols[table].values())]
        assert [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in r.items()} for r in got] == rows
    games = [res.game_rows(g)[2] for g in range(packed.hands.n_games)]
    got = [dict(zip(cols["games"], vals)) for vals in zip(*cols["games"].values())]
    assert [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in r.items()} for r in got] == games


def test_threads_give_the_same_result():
    recs = list(_season("nyc", 12, 4, 0.2))
    packed = pack_records(recs)
    from spadework.analysis.engine import kernels as K

    one = K.run_core(compiled.hands_in(packed.hands), compiled.rules_in(packed.rulesets), threads=1)
    two = K.run_core(compiled.hands_in(packed.hands), compiled.rules_in(packed.rulesets), threads=2)
    for a, b in zip(one[0] + one[1], two[0] + two[1]):
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


# --- the reference's own rule tests, with every game they check also checked by the core ---------------

_SUITES = ("test_checker", "test_record_gaps", "test_score_states", "test_scoring")


def _suite_cases():
    import importlib
    import inspect

    for name in _SUITES:
        mod = importlib.import_module(name)
        for fname, fn in sorted(vars(mod).items()):
            if not fname.startswith("test_") or not callable(fn):
                continue
            marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
            params = inspect.signature(fn).parameters
            if not params:
                yield pytest.param(name, fname, {}, id=f"{name}.{fname}")
            elif len(marks) == 1 and set(params) == {n.strip() for n in marks[0].args[0].split(",")}:
                keys = [n.strip() for n in marks[0].args[0].split(",")]
                for k, values in enumerate(marks[0].args[1]):
                    values = values if len(keys) > 1 else (values,)
                    yield pytest.param(name, fname, dict(zip(keys, values)), id=f"{name}.{fname}[{k}]")


@pytest.mark.parametrize("suite, fname, kwargs", list(_suite_cases()))
def test_reference_rule_tests_through_the_core(suite, fname, kwargs, monkeypatch):
    """Every game the reference's rule tests check (hand-made cases: gaps, both score states, renege
    penalty, missing hands...) must come out the same from the core."""
    import importlib

    from spadework.analysis.engine import checker

    mod = importlib.import_module(suite)
    real = checker.check_game
    seen = []

    def both(records, ruleset_override=None, **kw):
        records = list(records)
        gc = real(records, ruleset_override, **kw)
        if records and len({r.game_id for r in records}) == 1:
            assert_same(sorted(records, key=lambda r: r.hand), ruleset_override)
            seen.append(1)
        return gc

    if hasattr(mod, "check_game"):
        monkeypatch.setattr(mod, "check_game", both)
    monkeypatch.setattr(checker, "check_game", both)
    getattr(mod, fname)(**kwargs)



def test_the_kernel_releases_the_gil():
    """Games run on several threads at once only if the kernel lets go of the GIL: Python code in
    another thread keeps running while it works."""
    import threading

    from spadework.analysis.engine import kernels as K

    packed = pack_records(list(_season("standard", 40, 11, 0.2)))
    P, R = compiled.hands_in(packed.hands), compiled.rules_in(packed.rulesets)
    K.run_core(P, R, threads=1)
    done, spins = threading.Event(), [0]

    def work():
        for _ in range(20):
            K.run_core(P, R, threads=1)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        spins[0] += 1
    t.join()
    assert spins[0] > 1000
