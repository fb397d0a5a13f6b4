"""Our replay and scorer against an independent engine: DeepMind OpenSpiel's ``spades`` game.

Random OpenSpiel hands are played with both engines side by side.  At every step we compare,
where the two rule sets agree (docs/RULES_NOTES.md, "OpenSpiel"):

- the legal bids (partners' bids at most 13 together: our ``openspiel`` preset's ``max_side_bid``);
- the legal cards of the seat to play.  OpenSpiel never marks spades broken, so a leader holding
  spades and another suit may never lead a spade there; under our rules the same leader may once
  spades are broken.  In exactly that position we check OpenSpiel's set is ours minus the spades;
  everywhere else the sets must be equal;
- the winner of every trick (OpenSpiel's next player);
- the hand's points per side.  OpenSpiel reads the bag count from the last digit of the running
  total, which is right only while the total is not negative (C++ ``%`` keeps the sign).  Where the
  total before the hand is >= 0 we check our true bag count equals that digit and our points equal
  OpenSpiel's; where it is negative we check OpenSpiel's points equal our scorer fed with
  OpenSpiel's (wrong) bag reading, and that any disagreement with the rules is exactly a missed or
  extra bag penalty.

The recorded OpenSpiel corpus (``../shared/corpus/openspiel``) is replayed too: no illegal play
under ``openspiel`` or ``standard`` rules, and its returns against our scorer.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from spadework.analysis.engine.replay import PlayState, first_leader, legal_cards, replay_hand
from spadework.analysis.engine.rules import OPENSPIEL, STANDARD
from spadework.analysis.engine.scoring import ScoreChain, score_hand
from spadework.parsers.model import Bid, HandRecord, Trick
from spadework.parsers.seats import SEATS, Seat, Side

pyspiel = pytest.importorskip(
    "pyspiel", reason="open-spiel is not installed (pip install open-spiel; Linux, Python < 3.14): engine comparison skipped"
)

RANKS_LOW_HIGH = "23456789TJQKA"
SUITS_OS = "CDHS"  # OpenSpiel's suit order
BID_BASE = 52


def card_of(action: int) -> str:
    """OpenSpiel card action (suit*13 + rank; suits C D H S, ranks 2..A) -> our code."""
    return RANKS_LOW_HIGH[action % 13] + SUITS_OS[action // 13]


def action_of(card: str) -> int:
    return SUITS_OS.index(card[1]) * 13 + RANKS_LOW_HIGH.index(card[0])


def os_bag_reading(total: int) -> int:
    """The bag count OpenSpiel reads from a running total: C++ ``total % 10`` (sign kept)."""
    return int(math.fmod(total, 10))


def our_legal_bids(partner: int | None) -> set[int]:
    """Bids 0 (nil) .. 13 with partners' numeric bids totalling at most ``max_side_bid``."""
    cap = OPENSPIEL.max_side_bid
    if partner is None or partner == 0:
        return set(range(14))
    return {0} | {v for v in range(1, 14) if v + partner <= cap}


def sensible_bid(rng: random.Random, hand: list[str], legal: list[int]) -> int:
    """Half the time a uniformly random legal bid, else one near the hand's strength."""
    if rng.random() < 0.5:
        return rng.choice(legal)
    n = sum(1 for c in hand if c[0] in "AK") + max(0, sum(1 for c in hand if c[1] == "S") - 3)
    want = BID_BASE + max(0, min(13, n + rng.choice((-1, 0, 1))))
    return want if want in legal else rng.choice(legal)


class Stats:
    def __init__(self) -> None:
        self.hands = 0
        self.legal_checked = 0
        self.legal_differs = 0
        self.tricks = 0
        self.scores_equal = 0
        self.negative_sides = 0
        self.bug_penalties = 0


def play_one(
    rng: random.Random, chain: ScoreChain, stats: Stats
) -> None:
    """Play one hand in both engines from the chain's running totals and compare everything."""
    game = play_one.game
    state = game.new_initial_state()
    totals = (int(chain.totals[0]), int(chain.totals[1]))
    state.set_current_scores(list(totals))
    while state.is_chance_node():
        state.apply_action(rng.choice(state.legal_actions()))
    hist = state.history()
    deal = [[], [], [], []]
    for i, a in enumerate(hist[:52]):
        deal[i % 4].append(card_of(a))
    # bidding: N first (our dealer W)
    bids: list[Bid] = []
    numeric: dict[Seat, int] = {}
    for seat in first_leader(Seat.W, OPENSPIEL).clockwise():
        assert state.current_player() == seat
        legal = state.legal_actions()
        partner = numeric.get(seat.partner)
        assert {a - BID_BASE for a in legal} == our_legal_bids(partner)
        a = sensible_bid(rng, deal[seat], legal)
        state.apply_action(a)
        v = a - BID_BASE
        bids.append(Bid(seat, v, nil=v == 0))
        numeric[seat] = v
    ps = PlayState.start(deal, Seat.N, OPENSPIEL)
    while not ps.is_over:
        seat = ps.to_play
        assert state.current_player() == seat
        os_legal = {card_of(a) for a in state.legal_actions()}
        ours = set(ps.legal_cards())
        held = ps.held(seat)
        leading = not ps.current_trick
        has_spade = any(c[1] == "S" for c in held)
        has_other = any(c[1] != "S" for c in held)
        if leading and ps.spades_broken and ps.trick_number > 1 and has_spade and has_other:
            # OpenSpiel never marks spades broken: the one place the rule sets differ
            assert os_legal == {c for c in ours if c[1] != "S"}
            stats.legal_differs += 1
        else:
            assert os_legal == ours, (ps.trick_number, seat, sorted(os_legal), sorted(ours))
        # the legal set OpenSpiel uses is exactly ours with spades never broken
        assert os_legal == set(
            legal_cards(held, ps.current_trick, spades_broken=False, trick_number=ps.trick_number, ruleset=OPENSPIEL)
        )
        stats.legal_checked += 1
        card = rng.choice(sorted(os_legal))
        state.apply_action(action_of(card))
        done = ps.play(card)
        if done is not None:
            stats.tricks += 1
            if not state.is_terminal():
                assert state.current_player() == done.winner
    assert state.is_terminal() and not ps.findings
    returns = state.returns()
    os_points = (int(returns[0]), int(returns[1]))
    assert returns[0] == returns[2] and returns[1] == returns[3]
    bags_before = chain.bags
    mine = chain.add(bids, ps.taken)
    as_os_reads = score_hand(OPENSPIEL, bids, ps.taken, totals, (os_bag_reading(totals[0]), os_bag_reading(totals[1])))
    for side in (Side.NS, Side.EW):
        # OpenSpiel is always our scorer with its own bag reading
        assert as_os_reads[side].points == os_points[side]
        if totals[side] >= 0:
            assert bags_before[side] == totals[side] % 10  # the last digit is the bag count
            assert mine[side].points == os_points[side]
            stats.scores_equal += 1
        else:
            stats.negative_sides += 1
            diff = os_points[side] - mine[side].points
            assert diff % OPENSPIEL.bag_penalty == 0
            if diff:
                stats.bug_penalties += 1
    stats.hands += 1


def run(n_hands: int, seed: int) -> Stats:
    play_one.game = pyspiel.load_game("spades")
    rng = random.Random(seed)
    stats = Stats()
    chain = ScoreChain(OPENSPIEL)
    while stats.hands < n_hands:
        play_one(rng, chain, stats)
        if chain.over or chain.hands >= 30 or (min(chain.totals) < 0 and rng.random() < 0.7):
            # a new game, often from random non-negative totals (bags = their last digit)
            start = [rng.randrange(0, 480), rng.randrange(0, 480)] if rng.random() < 0.5 else [0, 0]
            chain = ScoreChain(OPENSPIEL, start, [t % 10 for t in start])
    return stats


N_HANDS = 5000  # the issue asks for at least 2,000; this takes about 2 s


def test_openspiel_agrees_on_random_hands():
    stats = run(N_HANDS, seed=1)
    assert stats.hands == N_HANDS
    assert stats.tricks == 13 * N_HANDS
    assert stats.legal_checked == 52 * N_HANDS
    assert stats.scores_equal > N_HANDS  # sides compared with the true bag count
    # the differences we document do occur, so the comparison exercises them
    assert stats.legal_differs > 0
    assert stats.negative_sides > 0 and stats.bug_penalties > 0


def test_openspiel_game_parameters_are_what_the_comparison_assumes():
    game = pyspiel.load_game("spades")
    spec = game.get_type().parameter_specification
    assert spec["win_threshold"] == OPENSPIEL.target == 500
    assert game.num_players() == 4


# --- the recorded corpus -----------------------------------------------------------------------


def _episode_record(ep: dict, n: int) -> tuple[HandRecord, tuple[int, int]]:
    hist = ep["history"]
    deal = [[], [], [], []]
    for i, a in enumerate(hist[:52]):
        deal[i % 4].append(card_of(a))
    bids = tuple(Bid(SEATS[i], a - BID_BASE, nil=a == BID_BASE) for i, a in enumerate(hist[52:56]))
    tricks = []
    leader = Seat.N
    plays = [card_of(a) for a in hist[56:]]
    from spadework.parsers.cards import STANDARD_DECK

    for t in range(13):
        cards = tuple(plays[4 * t : 4 * t + 4])
        winner = leader.after(STANDARD_DECK.winner_index(cards))
        tricks.append(Trick(leader, cards))
        leader = winner
    rec = HandRecord(
        game_id=f"os-{n}",
        hand=1,
        dealer=Seat.W,
        players=("n", "e", "s", "w"),
        bids=bids,
        rules="openspiel",
        deal=tuple(tuple(h) for h in deal),
        tricks=tuple(tricks),
    )
    start = tuple(ep["start_scores"])
    return rec, start  # type: ignore[return-value]


def test_openspiel_corpus_replays_without_findings_and_scores_as_openspiel(corpus):
    path = corpus / "openspiel" / "episodes.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not found")
    episodes = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert len(episodes) >= 200
    agree = 0
    for n, ep in enumerate(episodes):
        rec, start = _episode_record(ep, n)
        for rs in (OPENSPIEL, STANDARD):
            rp = replay_hand(rec, rs)
            assert rp.findings == [], [f.message for f in rp.findings]
        rp = replay_hand(rec, OPENSPIEL)
        ret = (int(ep["returns"][0]), int(ep["returns"][1]))
        reads = (os_bag_reading(start[0]), os_bag_reading(start[1]))
        os_like = score_hand(OPENSPIEL, rp.bids, rp.taken, start, reads)
        assert (os_like[0].points, os_like[1].points) == ret
        if min(start) >= 0:
            agree += 1
    assert agree > 100


def test_openspiel_chained_corpus_episodes_differ_only_by_the_negative_score_bag_bug(corpus):
    """Episodes 0-199 were chained from 0-0: our chain under the rules and OpenSpiel's returns agree
    except on hands started from a negative total, where the difference is a bag penalty."""
    path = corpus / "openspiel" / "episodes.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not found")
    episodes = [json.loads(line) for line in path.read_text().splitlines() if line.strip()][:200]
    chain = ScoreChain(OPENSPIEL)
    differ = games = hands = 0
    for n, ep in enumerate(episodes):
        if tuple(ep["start_scores"]) != tuple(int(t) for t in chain.totals):
            # a new game after one side reached 500: it starts from 0-0
            assert ep["start_scores"] == [0, 0] and max(chain.totals) >= OPENSPIEL.target
            chain = ScoreChain(OPENSPIEL)
            games += 1
        hands += 1
        before = chain.totals
        rec, _ = _episode_record(ep, n)
        rp = replay_hand(rec, OPENSPIEL)
        res = chain.add(rp.bids, rp.taken)
        for side in (0, 1):
            got = int(ep["returns"][side])
            if before[side] >= 0:
                assert res[side].points == got
            elif res[side].points != got:
                assert (got - res[side].points) % 100 == 0
                differ += 1
        # continue from OpenSpiel's own totals, as the corpus did
        chain.totals = (before[0] + int(ep["returns"][0]), before[1] + int(ep["returns"][1]))
    assert hands == 200 and games >= 10
