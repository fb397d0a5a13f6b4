"""Seasons: whole games played by bots, recorded as a club's logs, with planted faults (issue 5).

:func:`simulate_season` plays ``games`` games among a pool of players (club nights,
rounds, tables; partnerships drawn afresh every round), each game to the ruleset's
target: the dealer rotates clockwise from a random first dealer (RULES.md section 1),
bids go round from the dealer's left (section 3), the play goes through
:class:`spadework.analysis.engine.replay.PlayState` (section 4) and every score comes from
:mod:`spadework.analysis.engine.scoring` (sections 5 and 6).  Each hand becomes a
:class:`~spadework.parsers.model.HandRecord` with the deal, the bids in the order made, the
tricks with their winners, the tricks taken, the recorded score per side (points,
total, bags) and, on the hand that ends the game, the winner.

With ``fault_rate`` > 0, each hand gets a fault with that probability, plus a renege with
probability ``fault_rate`` x 4 x the table's summed ``careless_rate`` (careless players slip; the
illegal card goes to a seat in proportion to its carelessness) (see
:mod:`spadework.analysis.sim.faults` for the kinds); the list of :class:`InjectedFault` rows is
exactly what :func:`spadework.analysis.engine.checker.check_game` must report, and nothing else.
How faults are planted so that they give exactly their findings:

- illegal cards are played during the simulation (a renege, a card not held, a spade
  led too early, a lead out of turn); the hand then goes on under the replay's rules
  and every recorded value (winners, tricks taken, scores) is what the replay and the
  scorer give for the cards as played;
- bidding faults change what is recorded (two bids swapped, a bid said twice, a bid
  of 14, a bid left out) or make a seat bid blind when it may not; the hand is scored
  on the bids as recorded, as the checker scores it;
- record faults change one written value of a correctly played hand (a trick's
  winner, a seat's tricks taken, a fourteenth card in a deal, the last tricks missing);
- score faults change the recorded score of one hand the way a scoring app gets it
  wrong; later hands continue from the wrong recorded values, as the app would, which
  is what RULES.md "Checking recorded scores" checks them against.

Deterministic: everything is drawn from ``random.Random(seed)`` (and generators seeded
from it), never from the clock or the global generator, so a seed gives the same records
and, written out, the same bytes.
"""

from __future__ import annotations

import datetime as _dt
import gc
import os
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from spadework.analysis.engine.findings import (
    BID_INVALID,
    BID_MISSING,
    BID_OUT_OF_TURN,
    BLIND_BID_NOT_ALLOWED,
    CARD_NOT_HELD,
    DEAL_INVALID,
    DEALER_OUT_OF_ROTATION,
    GAME_RESULT_MISMATCH,
    HAND_INCOMPLETE,
    HAND_MISSING,
    LEAD_NOT_TWO_OF_CLUBS,
    LEAD_OUT_OF_TURN,
    PLAYED_AFTER_GAME_END,
    RENEGE,
    SCORE_MISMATCH,
    SPADE_LED_BEFORE_BROKEN,
    SPADE_LED_FIRST_TRICK,
    TRICK_WINNER_MISMATCH,
    TRICKS_TAKEN_MISMATCH,
)
from spadework.analysis.engine.replay import CompletedTrick, PlayState, first_leader, legal_cards
from spadework.analysis.engine.rules import Ruleset, changed_options, get_ruleset
from spadework.analysis.engine.scoring import ScoreChain, SideResult, apply_renege_penalty, score_hand
from spadework.analysis.sim.bots import HandPlay, choose_bids, deck_info
from spadework.analysis.sim.faults import (
    ALL_FORMATS,
    CSV_ONLY,
    END_KINDS,
    GAP_KINDS,
    KINDS,
    PLAY_FORMATS,
    PLAY_KINDS,
    SCORE_KINDS,
    InjectedFault,
    dump_faults,
    for_format,
    sidecar_path,
)
from spadework.analysis.convert import score_sheet_record  # noqa: F401  (re-exported: the score sheet's view of a hand)
from spadework.analysis.sim.personality import Player, make_pool
from spadework.parsers.cards import describe_suit
from spadework.parsers.model import Bid, HandRecord, SideScore, Trick
from spadework.parsers.seats import SEATS, SIDES, Seat, Side

MAX_HANDS = 60
"""A game still unfinished after this many hands is recorded as it stands (no winner)."""

SEASON_START = _dt.date(2026, 1, 3)
"""The first club night (a Saturday); one night a week after it."""

ROUNDS_PER_NIGHT = 3
"""Rounds played on a club night; every table plays one game per round."""

_OUTSIDE_CARDS = ("BJ", "LJ", "2C", "2H", "2D", "2S")


# --- the schedule ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameSpec:
    """Who plays one game, where and when.

    ``players``: N E S W; ``game_id`` like ``club-2026-03-14-t2-r1`` (date, table, round);
    ``seed``: the game's own random seed (drawn from the season's generator).
    """

    index: int
    game_id: str
    event: str
    date: str
    table: str
    round: str
    players: tuple[Player, Player, Player, Player]
    seed: int


def schedule(pool: Sequence[Player], games: int, rng: random.Random, prefix: str = "club") -> Iterator[GameSpec]:
    """The games of a season: club nights a week apart, :data:`ROUNDS_PER_NIGHT` rounds a night,
    ``len(pool) // 4`` tables a round; each round the players are drawn to tables and seats
    afresh (those left over sit out), so partnerships vary.  Stops after ``games`` games."""
    tables = len(pool) // 4
    index = 0
    night = 0
    while index < games:
        date = (SEASON_START + _dt.timedelta(days=7 * night)).isoformat()
        night += 1
        for rnd in range(1, ROUNDS_PER_NIGHT + 1):
            drawn = list(pool)
            rng.shuffle(drawn)
            for t in range(1, tables + 1):
                if index >= games:
                    return
                four = tuple(drawn[4 * (t - 1) : 4 * t])
                yield GameSpec(
                    index=index,
                    game_id=f"{prefix}-{date}-t{t}-r{rnd}",
                    event=f"{prefix} night {night}",
                    date=date,
                    table=str(t),
                    round=str(rnd),
                    players=four,  # type: ignore[arg-type]
                    seed=rng.getrandbits(64),
                )
                index += 1


# --- one game ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SimulatedGame:
    """One simulated game: its hand records (in hand order), the faults planted in it
    (sidecar rows, ``fault`` numbered within the game), the winner (``None`` when the
    game hit :data:`MAX_HANDS`) and the final totals (NS, EW) by the rules."""

    spec: GameSpec
    records: tuple[HandRecord, ...]
    faults: tuple[InjectedFault, ...]
    winner: Side | None
    totals: tuple[int, int]


def available_kinds(ruleset: Ruleset, gaps: bool = False) -> tuple[str, ...]:
    """The kinds of fault that can be planted under ``ruleset`` (in a fixed order); the gaps in
    the record (:data:`~spadework.analysis.sim.faults.GAP_KINDS`) only with ``gaps``."""
    out = []
    for k in KINDS:
        if k in GAP_KINDS and not gaps:
            continue
        if k == "lead_not_two_of_clubs" and ruleset.first_lead != "two_of_clubs":
            continue
        if k == "spade_led_first_trick" and ruleset.first_lead == "two_of_clubs":
            continue  # the 2C holder leads trick 1: another card there is LEAD_NOT_TWO_OF_CLUBS
        if k == "spade_led_before_broken" and ruleset.spades_lead_any_time:
            continue
        if k == "blind_bid_not_allowed" and not _blind_can_be_wrong(ruleset):
            continue
        if k in ("bag_penalty_missed", "penalty_once_crossed_twice") and ruleset.bag_limit <= 0:
            continue
        if k == "nil_bonus_wrong_side" and not ruleset.nil:
            continue
        out.append(k)
    return tuple(out)


def _blind_can_be_wrong(rs: Ruleset) -> bool:
    if rs.nil and isinstance(rs.blind_nil, dict):
        return True
    return rs.blind_bids is not None and (not rs.blind_partner_bids or "behind_by" in rs.blind_bids)


def _int(x: Any) -> int:
    return int(round(x)) if isinstance(x, float) else x


class _Game:
    """Plays one game (see :func:`simulate_game`)."""

    def __init__(
        self,
        spec: GameSpec,
        ruleset: Ruleset,
        rules_value: str | dict[str, Any],
        fault_rate: float,
        kinds: Sequence[str] | None,
    ) -> None:
        self.spec = spec
        self.rs = ruleset
        self.rules_value = rules_value
        self.info = deck_info(ruleset)
        self.deck_sorted = self.info.hand_order
        self.rng = random.Random(spec.seed)
        self.frng = random.Random(spec.seed ^ 0x5EED_FA17) if fault_rate > 0 else None
        self.fault_rate = fault_rate
        self.kinds = tuple(kinds) if kinds is not None else available_kinds(ruleset)
        self.pers = tuple(p.personality for p in spec.players)
        self._weights = fault_weights(tuple(p.careless_rate for p in self.pers))  # type: ignore[arg-type]
        # extra reneges per hand, as a multiple of the fault rate: 4 x the table's summed carelessness
        # (an average table, 4 x 0.02 each, adds a third; a table with a 0.25 player more than doubles it)
        self._slip = 4 * sum(p.careless_rate for p in self.pers)
        self.names = tuple(p.name for p in spec.players)
        self.faults: list[InjectedFault] = []
        self.nfault = 0

    # --- fault rows ---

    def _row(self, kind: str, code: str, hand: int, detail: str, formats=ALL_FORMATS, **place: Any) -> InjectedFault:
        seat = place.get("seat")
        side = place.pop("side", None)
        if side is None and seat is not None:
            side = seat.side
        return InjectedFault(
            code=code,
            game_id=self.spec.game_id,
            hand=hand,
            side=side,
            kind=kind,
            detail=detail,
            fault=self.nfault + 1,
            formats=formats,
            **place,
        )

    def _add(self, rows: Iterable[InjectedFault]) -> None:
        self.faults.extend(rows)

    # --- the game ---

    def run(self) -> SimulatedGame:
        # The play makes no reference cycles: the cyclic collector is paused for one game.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run()
        finally:
            if was_enabled:
                gc.enable()

    def _run(self) -> SimulatedGame:
        rs = self.rs
        truth = ScoreChain(rs)
        app_tot = [0, 0]
        app_bags = [0, 0]
        fixed = rs.fixed_dealer
        dealer = fixed if fixed is not None else SEATS[self.rng.randrange(4)]
        pending: list[str] = []
        records: list[HandRecord] = []
        hand = 0
        frng = self.frng
        dropped: int | None = None  # hand_missing: the hand left out of the log, found on the next one
        back: Seat | None = None  # left of the seat that should have dealt the hand before
        while hand < MAX_HANDS:
            hand += 1
            if frng is not None and frng.random() < self.fault_rate:
                pending.append(self.kinds[frng.randrange(len(self.kinds))])
            elif frng is not None and "renege" in self.kinds and frng.random() < self.fault_rate * self._slip:
                pending.append("renege")  # a careless player's slip: tables with careless players err more
            same = list(app_tot) == list(truth.totals) and list(app_bags) == list(truth.bags)
            kind = None
            for k in pending if dropped is None else ():  # the hand after a dropped one stays clean
                if k in SCORE_KINDS or k in END_KINDS:
                    continue
                if k == "dealer_out_of_rotation" and fixed is None and hand == 1:
                    continue
                if k == "hand_missing" and (hand == 1 or not same):
                    continue  # a gap inside the game, while the log's score is the true one
                if k == "hand_incomplete" and not same:
                    continue  # its score is not checked and the game goes on from it: keep that the true one
                kind = k
                pending.remove(k)
                break
            if kind == "hand_missing":
                # the hand is played and scored, then left out of the log
                rec, _, used_dealer = self._hand(hand, dealer, None, truth, app_tot, app_bags, [])
                records.append(rec)
                dealer = fixed if fixed is not None else used_dealer.left
                if truth.over:
                    break  # no hand follows it: nothing to find the gap on
                dropped = hand
                continue
            rec, planted, used_dealer = self._hand(
                hand, dealer, kind, truth, app_tot, app_bags, pending if dropped is None else [], back
            )
            if kind is not None and not planted:
                pending.append(kind)
            records.append(rec)
            if dropped is not None:
                del records[-2]
                self._add(
                    [
                        self._row(
                            "hand_missing", HAND_MISSING, hand, f"hand {dropped} is not in the log"
                        )
                    ]
                )
                self.nfault += 1
                dropped = None
            # as the checker sees it (RULES_NOTES.md): the seat that should have dealt this hand is its
            # dealer, or after a dealer out of rotation the one the rotation called for; the next hand
            # may be dealt left of either
            should = dealer  # its dealer when in rotation; else where the rotation put it (left of the last)
            back = None if fixed is not None else should.left
            dealer = fixed if fixed is not None else used_dealer.left
            if truth.over:
                break
        winner = truth.winner
        if winner is not None:
            last = records[-1]
            rec_winner = winner
            if "game_result_mismatch" in pending:
                rec_winner = winner.other
                self._add(
                    [
                        self._row(
                            "game_result_mismatch",
                            GAME_RESULT_MISMATCH,
                            last.hand,
                            f"{winner.other} recorded as the winner; {winner} won "
                            f"(NS {_int(truth.totals[0])}, EW {_int(truth.totals[1])})",
                            formats=ALL_FORMATS,  # the score sheet has a winner column too
                            side=winner.other,
                            field="winner",
                        )
                    ]
                )
                self.nfault += 1
            records[-1] = replace(last, winner=rec_winner)
            if "played_after_game_end" in pending:
                hand += 1
                rec, _, _ = self._hand(hand, dealer, None, truth, app_tot, app_bags, [])
                records.append(rec)
                self._add(
                    [
                        self._row(
                            "played_after_game_end",
                            PLAYED_AFTER_GAME_END,
                            hand,
                            f"hand {hand} recorded after {winner} won at hand {hand - 1}",
                        )
                    ]
                )
                self.nfault += 1
        totals = truth.result_totals()
        return SimulatedGame(
            self.spec, tuple(records), tuple(self.faults), winner, (_int(totals[0]), _int(totals[1]))
        )

    # --- one hand ---

    def _deal(self) -> list[list[str]]:
        rnd = self.rng.random
        keys = [rnd() for _ in range(52)]
        order = sorted(range(52), key=keys.__getitem__)
        d = self.deck_sorted
        return [[d[i] for i in sorted(order[13 * j : 13 * j + 13])] for j in range(4)]

    def _hand(
        self,
        hand: int,
        dealer: Seat,
        kind: str | None,
        truth: ScoreChain,
        app_tot: list,
        app_bags: list,
        pending: list[str],
        back: Seat | None = None,
    ) -> tuple[HandRecord, bool, Seat]:
        """Play and record one hand; returns the record, whether ``kind`` was planted, and the dealer.
        ``back``: a seat the checker also takes as in rotation (left of the seat that should have dealt
        the hand before, when that hand's dealer was out of rotation); a wrong dealer is never it."""
        rs = self.rs
        rng = self.rng
        frng = self.frng
        rows: list[InjectedFault] = []
        planted = False

        # --- the dealer
        if kind == "dealer_out_of_rotation":
            wrong_ones = [s for s in (dealer.after(1), dealer.after(2), dealer.after(3)) if s != back]
            wrong = wrong_ones[frng.randrange(len(wrong_ones))]  # type: ignore[union-attr]
            why = f"{dealer} should have dealt" if rs.fixed_dealer is None else f"the rules have {dealer} deal"
            rows.append(
                self._row(kind, DEALER_OUT_OF_ROTATION, hand, f"{wrong} dealt; {why}", seat=wrong, field="dealer")
            )
            dealer = wrong
            planted = True

        # --- the deal and the bidding
        deal = self._deal()
        totals_i = (_int(truth.totals[0]), _int(truth.totals[1]))
        force = kind == "blind_bid_not_allowed"
        bids = choose_bids(deal, dealer, self.pers, rs, rng, totals_i, force_blind=force)
        heard: list[Bid | None] = [None, None, None, None]
        for b in bids:
            if heard[b.seat] is None:
                heard[b.seat] = b
        recorded_bids = list(bids)
        if force:
            seat = _forced_seat(bids, rs, totals_i, dealer)
            if seat is not None:
                b = heard[seat]
                what = "blind nil" if b.nil else f"blind {b.value}"  # type: ignore[union-attr]
                rows.append(
                    self._row(kind, BLIND_BID_NOT_ALLOWED, hand, f"{seat} bid {what} where the rules do not allow it", seat=seat)
                )
                planted = True
        elif kind in ("bid_out_of_turn", "bid_twice", "bid_invalid", "bid_missing"):
            planted = self._bid_fault(kind, hand, recorded_bids, rows)

        # --- the play
        leader = first_leader(dealer, rs, deal)
        st = PlayState.start(deal, leader, rs)
        plant = None
        expected_play: list[tuple] = []
        if kind in PLAY_KINDS:
            plant = _Planter(kind, rs, frng, expected_play, self._weights)  # type: ignore[arg-type]
        HandPlay(st, rs, heard, self.pers, rng, plant).run()
        if plant is not None and plant.done:
            planted = True
            code, trick, seat, card, detail = expected_play[0]
            rows.append(self._row(kind, code, hand, detail, formats=PLAY_FORMATS, trick=trick, seat=seat, card=card))  # type: ignore[arg-type]
        if st.findings or expected_play:
            got = [(f.code, f.trick, f.seat, f.card) for f in st.findings]
            want = [(c, t, s, cd) for c, t, s, cd, _ in expected_play]
            if got != want:  # the bots play legal cards: anything else is a bug here
                raise RuntimeError(f"{self.spec.game_id} hand {hand}: play findings {got}, planted {want}")

        completed = st.completed
        tricks = [Trick(t.leader, t.cards, t.winner) for t in completed]
        taken = st.taken
        rec_deal = [tuple(h) for h in deal]
        rec_taken: tuple[int, ...] | None = taken
        score_taken = taken

        # --- faults of the record
        if kind == "trick_winner_mismatch":
            n = frng.randrange(13)  # type: ignore[union-attr]
            t = tricks[n]
            wrong = t.winner.after(1 + frng.randrange(3))  # type: ignore[union-attr]
            tricks[n] = Trick(t.leader, t.cards, wrong)
            rows.append(
                self._row(
                    kind, TRICK_WINNER_MISMATCH, hand, f"trick {n + 1} recorded as won by {wrong}; {t.winner} won it",
                    formats=PLAY_FORMATS, trick=n + 1, seat=wrong, field="winner",
                )
            )
            planted = True
        elif kind == "tricks_taken_mismatch":
            seat = SEATS[frng.randrange(4)]  # type: ignore[union-attr]
            v = taken[seat]
            wrong_v = v + 1 if v == 0 or frng.random() < 0.5 else v - 1  # type: ignore[union-attr]
            rec_taken = tuple(wrong_v if s == seat else taken[s] for s in SEATS)
            rows.append(
                self._row(
                    kind, TRICKS_TAKEN_MISMATCH, hand, f"{seat} recorded as taking {wrong_v} tricks; took {v}",
                    formats=PLAY_FORMATS, seat=seat, field="taken",
                )
            )
            planted = True
        elif kind == "deal_invalid":
            got_seat = self._deal_fault(deal, completed, rec_deal)
            if got_seat is not None:
                seat, card = got_seat
                rows.append(
                    self._row(
                        kind, DEAL_INVALID, hand, f"{seat}'s deal lists a 14th card, {card}, not in the deck",
                        formats=PLAY_FORMATS, seat=seat, card=card,
                    )
                )
                planted = True
        elif kind == "trick_card_missing":
            n = frng.randrange(12)  # type: ignore[union-attr]  # tricks 1..12: a later trick is recorded
            t = tricks[n]
            seat, card = t.seats()[3], t.cards[3]
            tricks[n] = Trick(t.leader, t.cards[:3], t.winner)
            rows.append(
                self._row(
                    kind, HAND_INCOMPLETE, hand, f"{seat}'s {card} left out of trick {n + 1}",
                    formats=PLAY_FORMATS, trick=n + 1, seat=seat,
                )
            )
            planted = True
        elif kind == "hand_incomplete":
            m = 7 + frng.randrange(6)  # type: ignore[union-attr]
            tricks = tricks[:m]
            part = [0, 0, 0, 0]
            for t in completed[:m]:
                part[t.winner] += 1  # type: ignore[index]
            score_taken = tuple(part)
            rec_taken = None
            rows.append(
                self._row(kind, HAND_INCOMPLETE, hand, f"only {m} of 13 tricks recorded, no tricks taken", formats=PLAY_FORMATS)
            )
            rows.append(
                self._row(
                    kind, TRICKS_TAKEN_MISMATCH, hand, f"score sheet: tricks taken add up to {m}, not 13",
                    formats=CSV_ONLY, field="taken",
                )
            )
            planted = True

        if planted:
            self.nfault += 1

        # --- scores
        if rs.renege_penalty_tricks > 0:
            reneges = [f.seat for f in st.findings if f.code == RENEGE]
            if reneges:
                score_taken = apply_renege_penalty(score_taken, recorded_bids, reneges, rs.renege_penalty_tricks)
        same = app_tot[0] == truth.totals[0] and app_tot[1] == truth.totals[1] and app_bags[0] == truth.bags[0] and app_bags[1] == truth.bags[1]
        res = truth.add(recorded_bids, score_taken)
        app = res if same else score_hand(rs, recorded_bids, score_taken, tuple(app_tot), tuple(app_bags))
        vals = [[app[s].points, app[s].total, app[s].bags] for s in SIDES]
        if not planted and pending:
            for k in pending:
                if k in SCORE_KINDS:
                    new = self._score_fault(k, app, app_tot, app_bags)
                    if new is None:
                        continue
                    new_vals, detail = new
                    # a value is wrong only when the rules give it from neither the true score nor
                    # the app's own (RULES.md section 5, "Checking recorded scores")
                    found = []
                    for s in SIDES:
                        t, a = res[s], app[s]
                        right = (
                            (t.points, a.points),
                            (t.total, app_tot[s] + t.points, app_tot[s] + a.points),
                            (t.bags, a.bags),
                        )
                        for i, fld in enumerate(("points", "total", "bags")):
                            v = new_vals[s][i]
                            if v not in right[i]:
                                found.append(
                                    self._row(
                                        k, SCORE_MISMATCH, hand, f"{s} {fld} recorded {_int(v)}, rules give "
                                        f"{_int((t.points, t.total, t.bags)[i])}: {detail}",
                                        side=s, field=fld,
                                    )
                                )
                    if not found:
                        continue  # the slip happens to be a right value here: not a fault
                    pending.remove(k)
                    vals = new_vals
                    rows.extend(found)
                    self.nfault += 1
                    break
        (p0, t0, b0), (p1, t1, b1) = vals
        app_tot[0], app_tot[1] = t0, t1
        app_bags[0], app_bags[1] = b0, b1
        if type(p0) is int and type(p1) is int and type(t0) is int and type(t1) is int:
            score = (SideScore(p0, t0, b0), SideScore(p1, t1, b1))
        else:  # a bid such as 4.5 scores in fractions: the record keeps whole points
            score = (SideScore(_int(p0), _int(t0), b0), SideScore(_int(p1), _int(t1), b1))
        self._add(rows)
        sp = self.spec
        rec = HandRecord(
            game_id=sp.game_id,
            hand=hand,
            dealer=dealer,
            players=self.names,  # type: ignore[arg-type]
            bids=tuple(recorded_bids),
            rules=self.rules_value,
            event=sp.event,
            date=sp.date,
            table=sp.table,
            round=sp.round,
            deal=tuple(rec_deal),
            tricks=tuple(tricks),
            taken=rec_taken,  # type: ignore[arg-type]
            score=score,
        )
        return rec, planted, dealer

    # --- fault helpers ---

    def _bid_fault(self, kind: str, hand: int, bids: list[Bid], rows: list[InjectedFault]) -> bool:
        """Change the recorded bids in place; False when this hand offers no place for ``kind``."""
        frng = self.frng
        assert frng is not None
        if any(b.blind and not b.nil for b in bids):
            return False  # a blind numeric bid's silent partner makes the order ambiguous: skip
        if kind == "bid_out_of_turn":
            i = frng.randrange(len(bids) - 1)
            a, b = bids[i], bids[i + 1]
            bids[i], bids[i + 1] = b, a
            rows.append(
                self._row(kind, BID_OUT_OF_TURN, hand, f"{b.seat} bid before {a.seat}", formats=PLAY_FORMATS, seat=b.seat)
            )
            return True
        if kind == "bid_twice":
            b = bids[frng.randrange(len(bids))]
            again = Bid(b.seat, 1) if b.nil else Bid(b.seat, min(13, int(b.value) + 1))
            bids.append(again)
            rows.append(
                self._row(kind, BID_OUT_OF_TURN, hand, f"{b.seat} bid a second time ({again.value})", formats=PLAY_FORMATS, seat=b.seat)
            )
            return True
        if kind == "bid_invalid":
            options = [i for i, b in enumerate(bids) if not b.nil and not b.blind]
            if not options:
                return False
            i = options[frng.randrange(len(options))]
            b = bids[i]
            wrong = int(b.value) + 10 if b.value >= 4 else 14
            bids[i] = Bid(b.seat, wrong)
            rows.append(self._row(kind, BID_INVALID, hand, f"{b.seat}'s bid {b.value} recorded as {wrong}", seat=b.seat))
            return True
        if kind == "bid_missing":
            # the last bid (the dealer's): a gap in the middle would also put the later bids out of turn
            b = bids.pop()
            rows.append(self._row(kind, BID_MISSING, hand, f"{b.seat}'s bid (the dealer's) is not recorded", seat=b.seat))
            return True
        return False

    def _deal_fault(self, deal, completed: Sequence[CompletedTrick], rec_deal: list) -> tuple[Seat, str] | None:
        """Add a card from outside the deck to one seat's recorded deal, choosing a seat whose
        plays all stay legal with that card in hand (checked with the replay's ``legal_cards``)."""
        rs = self.rs
        frng = self.frng
        assert frng is not None
        extra = next((c for c in _OUTSIDE_CARDS if c not in rs.deck), None)
        if extra is None:
            return None
        start = frng.randrange(4)
        for k in range(4):
            seat = SEATS[(start + k) & 3]
            held = list(deal[seat]) + [extra]
            ok = True
            for t in completed:
                i = t.leader.steps_to(seat)
                card = t.cards[i]
                allowed = legal_cards(
                    held, t.cards[:i], spades_broken=t.spades_broken, trick_number=t.number, ruleset=rs
                )
                if card not in allowed:
                    ok = False
                    break
                held.remove(card)
            if ok:
                rec_deal[seat] = tuple(deal[seat]) + (extra,)
                return seat, extra
        return None

    def _score_fault(self, kind: str, app: tuple[SideResult, SideResult], app_tot: list, app_bags: list):
        """The recorded values [[points, total, bags] per side] with ``kind``'s error, or ``None``
        when this hand does not have the situation for it."""
        rs = self.rs
        vals = [[app[s].points, app[s].total, app[s].bags] for s in SIDES]
        order = list(SIDES)
        if self.frng.random() < 0.5:  # type: ignore[union-attr]
            order.reverse()
        if kind == "bag_penalty_missed":
            for s in order:
                r = app[s]
                if r.bag_penalty < 0:
                    pts = r.points - r.bag_penalty
                    vals[s] = [pts, app_tot[s] + pts, app_bags[s] + r.bags_this_hand]
                    return vals, f"bag penalty for reaching {app_bags[s] + r.bags_this_hand} bags not applied"
            return None
        if kind == "penalty_once_crossed_twice":
            for s in order:
                r = app[s]
                if r.bag_penalty <= -2 * rs.bag_penalty and rs.bag_penalty > 0:
                    times = -r.bag_penalty // rs.bag_penalty
                    pts = r.points - r.bag_penalty - rs.bag_penalty
                    vals[s] = [pts, app_tot[s] + pts, r.bags + (times - 1) * rs.bag_limit]
                    return vals, f"bag penalty applied once, but the bags crossed {rs.bag_limit} {times} times"
            return None
        if kind == "bags_last_digit_negative":
            for s in order:
                r = app[s]
                if r.total < 0 and abs(_int(r.total)) % 10 != r.bags:
                    vals[s] = [r.points, r.total, abs(_int(r.total)) % 10]
                    return vals, f"bags read as the last digit of the negative total {_int(r.total)}"
            return None
        if kind == "nil_bonus_wrong_side":
            a, b = app[0].nil_points, app[1].nil_points
            if a == b:
                return None
            pn = app[0].points - a + b
            pe = app[1].points - b + a
            vals[0] = [pn, app_tot[0] + pn, app[0].bags]
            vals[1] = [pe, app_tot[1] + pe, app[1].bags]
            return vals, "nil bonus credited to the wrong side"
        return None


def _forced_seat(bids: Sequence[Bid], rs: Ruleset, totals: tuple[int, int], dealer: Seat) -> Seat | None:
    """The seat that made a blind bid its ruleset does not allow (the bidding's planted fault)."""
    by_seat: dict[Seat, Bid] = {}
    for b in bids:
        side = b.seat.side
        own, other = totals[side], totals[side.other]
        if b.blind and b.nil:
            if rs.blind_nil_allowed(own, other) is False:
                return b.seat
        elif b.blind:
            partner = by_seat.get(b.seat.partner)
            if (partner is not None and not rs.blind_partner_bids) or not rs.blind_bid_score_allowed(own, other):
                return b.seat
        by_seat.setdefault(b.seat, b)
    return None


def fault_weights(careless: tuple[float, float, float, float]) -> tuple[float, ...]:
    """Per seat, the chance a planted illegal play is taken at an opportunity: careless players err more.

    The most careless player at the table always errs when the chance comes; the others in proportion
    to their ``careless_rate``, never below 0.05, so every seat can still be the one at fault.
    """
    top = max(careless) or 1.0
    return tuple(0.05 + 0.95 * (c / top) for c in careless)


class _Planter:
    """The play hook that plants one illegal card (see :data:`spadework.analysis.sim.bots.PlantHook`).

    From a trick drawn at random, at the first position where ``kind`` can be planted,
    returns the illegal card; appends ``(code, trick, seat, card, detail)`` to ``out``.
    """

    __slots__ = ("kind", "rs", "rng", "out", "done", "from_trick", "weights")

    def __init__(self, kind: str, rs: Ruleset, rng: random.Random, out: list, weights=(1.0, 1.0, 1.0, 1.0)) -> None:
        self.kind = kind
        self.weights = weights  # chance, per seat, that an opportunity to plant is taken (careless players err more)
        self.rs = rs
        self.rng = rng
        self.out = out
        self.done = False
        if kind in ("spade_led_first_trick", "lead_not_two_of_clubs"):
            self.from_trick = 1
        elif kind in ("card_not_held", "spade_led_before_broken"):
            self.from_trick = 2 + rng.randrange(10)
        else:
            self.from_trick = 1 + rng.randrange(12)

    def __call__(self, st: PlayState, legal: list[str]):
        if self.done:
            return None
        n = st.trick_number
        if n < self.from_trick:
            return None
        kind = self.kind
        seat = st.to_play
        if n < 13 and self.rng.random() >= self.weights[seat]:  # type: ignore[index]
            return None  # this player keeps their head; trick 13 takes whoever is left
        trick = st.current_trick
        suits = self.rs.suits
        held = st.held(seat)  # type: ignore[arg-type]
        got = None
        if kind == "renege":
            if trick and len(legal) < len(held):
                led = suits[trick[0]]
                others = [c for c in held if suits[c] != led]
                card = others[self.rng.randrange(len(others))]
                got = (RENEGE, card, None, f"{seat} played {card} on a {describe_suit(led)} lead while holding {legal[-1]}")
        elif kind == "card_not_held":
            if trick:
                seen = [c for t in st.completed for c in t.cards if c not in held]
                led = suits[trick[0]]
                same = [c for c in seen if suits[c] == led]
                pick = same or seen
                card = pick[self.rng.randrange(len(pick))]
                got = (CARD_NOT_HELD, card, None, f"{seat} played {card}, already played earlier in the hand")
        elif kind in ("spade_led_first_trick", "spade_led_before_broken"):
            two_clubs = n == 1 and self.rs.first_lead == "two_of_clubs" and "2C" in held
            if not trick and (n == 1 or not st.spades_broken) and not two_clubs:
                spades = [c for c in held if suits[c] == "S"]
                if spades and len(spades) < len(held):
                    card = spades[-1]
                    code = SPADE_LED_FIRST_TRICK if n == 1 else SPADE_LED_BEFORE_BROKEN
                    why = "to the first trick" if n == 1 else "before spades were broken"
                    got = (code, card, None, f"{seat} led {card} {why} while holding another suit")
            if kind == "spade_led_first_trick" and not got:
                self.from_trick = 99  # only trick 1 will do
        elif kind == "lead_not_two_of_clubs":
            if not trick and n == 1 and "2C" in held:
                others = [c for c in held if c != "2C" and suits[c] != "S"]
                if others:
                    card = others[-1]
                    got = (LEAD_NOT_TWO_OF_CLUBS, card, None, f"{seat} led {card} to the first trick holding the 2C")
            if not got:
                self.from_trick = 99
        elif kind == "lead_out_of_turn":
            if not trick:
                who = seat.after(1 + self.rng.randrange(3))  # type: ignore[union-attr]
                options = legal_cards(
                    st.held(who), (), spades_broken=st.spades_broken, trick_number=n, ruleset=self.rs
                )
                card = options[-1]
                self.done = True
                self.out.append((LEAD_OUT_OF_TURN, n, who, card, f"{who} led {card} to trick {n}; {seat} was to lead"))
                return card, who
        if got is None:
            return None
        code, card, _, detail = got
        self.done = True
        self.out.append((code, n, seat, card, detail))
        return card, None


def _check_kinds(kinds: Sequence[str] | None) -> None:
    """Raise ``ValueError`` naming the known kinds when ``kinds`` holds an unknown fault kind."""
    bad = [k for k in kinds or () if k not in KINDS]
    if bad:
        raise ValueError(f"unknown fault kind {bad[0]!r} (known: {', '.join(KINDS)})")


def simulate_game(
    spec: GameSpec,
    rules: str | dict[str, Any] = "standard",
    fault_rate: float = 0.0,
    kinds: Sequence[str] | None = None,
) -> SimulatedGame:
    """Play one game to the target (or :data:`MAX_HANDS`).

    ``rules``: a preset name or ``{"preset": ..., options}`` (written into every record);
    ``fault_rate``: chance per hand of a planted fault; ``kinds``: the kinds to draw from
    (default: every kind :func:`available_kinds` allows).  Raises
    :class:`~spadework.analysis.engine.rules.RulesError` for unknown rules, ``ValueError`` for an unknown kind.
    """
    rs = get_ruleset(rules)
    _check_kinds(kinds)
    return _Game(spec, rs, _rules_value(rules), fault_rate, kinds).run()


def _rules_value(rules: Any) -> str | dict[str, Any]:
    """What the records' ``rules`` key holds: the name or options as given (a
    :class:`~spadework.analysis.engine.rules.Ruleset` becomes its preset and changed options)."""
    if isinstance(rules, str):
        return rules.strip()
    if isinstance(rules, Ruleset):
        changed = changed_options(rules)
        return {"preset": rules.preset, **changed} if changed else rules.preset
    return dict(rules)


# --- seasons -------------------------------------------------------------------------------------


def iter_season(
    players: int,
    games: int,
    seed: int,
    rules: str | dict[str, Any] = "standard",
    fault_rate: float = 0.0,
    personalities: Any = None,
    kinds: Sequence[str] | None = None,
    prefix: str = "club",
) -> Iterator[SimulatedGame]:
    """The games of a season one at a time (streaming; see :func:`simulate_season`).

    Fault rows are numbered across the season (``fault`` 1, 2, ...) in game order.
    """
    if games < 0:
        raise ValueError(f"games must be 0 or more, not {games}")
    if not 0.0 <= fault_rate <= 1.0:
        raise ValueError(f"fault_rate must be between 0 and 1, not {fault_rate}")
    rs = get_ruleset(rules)
    _check_kinds(kinds)
    rules_value = _rules_value(rules)
    rng = random.Random(seed)
    pool = make_pool(players, rng, personalities)
    offset = 0
    for spec in schedule(pool, games, rng, prefix):
        g = _Game(spec, rs, rules_value, fault_rate, kinds).run()
        if g.faults:
            n = max(f.fault for f in g.faults)
            g = replace(g, faults=tuple(replace(f, fault=f.fault + offset) for f in g.faults))
            offset += n
        yield g


def simulate_season(
    players: int,
    games: int,
    seed: int,
    rules: str | dict[str, Any] = "standard",
    fault_rate: float = 0.0,
    personalities: Any = None,
    kinds: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    prefix: str = "club",
) -> tuple[list[HandRecord], list[InjectedFault]]:
    """Simulate a club season: ``games`` whole games among ``players`` players.

    ``players``: size of the pool (at least 4); ``games``: games to play; ``seed``: the
    only source of randomness (same seed, same records, same bytes written);
    ``rules``: a preset (``standard``, ``barmore``, ``nyc``, ``openspiel``) or
    ``{"preset": ..., options}`` (RULES.md section 5); ``fault_rate``: chance per hand of
    a planted fault (0..1); ``personalities``: ``None`` for :func:`default_club` (extended
    with generated players beyond 12), a mapping ``name -> Personality`` or a sequence of
    :class:`Player`; ``kinds``: the fault kinds to draw from (default: all the ruleset allows);
    ``progress``: called as ``progress(games_done, hands_done)`` after each game; ``prefix``: the club's
    name, which starts every game id and event (``club-2026-01-03-t1-r1``): the ids come from the
    schedule, not the seed, so seasons meant for one database need different prefixes.

    Returns ``(records, faults)``: the hand records ordered by game then hand, and the
    sidecar rows (one per finding the checker must report; see :mod:`spadework.analysis.sim.faults`).
    Raises ``ValueError`` for fewer than 4 players, a negative ``games``, a rate outside
    0..1 or an unknown kind, :class:`~spadework.analysis.engine.rules.RulesError` for unknown rules.
    """
    records: list[HandRecord] = []
    faults: list[InjectedFault] = []
    # Records hold no reference cycles: the cyclic collector would only walk the growing
    # season again and again (about 7% of the time); it is paused and restored.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for g in iter_season(players, games, seed, rules, fault_rate, personalities, kinds, prefix):
            records.extend(g.records)
            faults.extend(g.faults)
            if progress is not None:
                progress(g.spec.index + 1, len(records))
    finally:
        if was_enabled:
            gc.enable()
    return records, faults


# --- writing ------------------------------------------------------------------------------------

_EXT = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".spn": "spn", ".csv": "csv"}


def format_of(path: str | os.PathLike[str]) -> str:
    """``jsonl``, ``spn`` or ``csv`` from a file name (``.gz`` allowed).  Raises ``ValueError``."""
    p = os.fspath(path)
    if p.endswith(".gz"):
        p = p[:-3]
    fmt = _EXT.get(os.path.splitext(p)[1].lower())
    if fmt is None:
        raise ValueError(f"cannot tell the format of {os.fspath(path)!r}: use .jsonl, .spn or .csv, or pass fmt")
    return fmt


def _gaps_filled(rec: HandRecord, rs: Ruleset) -> HandRecord:
    """``rec`` with a card left out of a trick (fault ``trick_card_missing``) put back as the replay
    takes it from the deal: the table counted that trick, so the score sheet's tricks taken do."""
    tricks = rec.tricks or ()
    if all(len(t.cards) == 4 for t in tricks[:-1]):
        return rec
    from spadework.analysis.engine.replay import replay_hand

    played = replay_hand(rec, rs).tricks
    return replace(rec, tricks=tuple(Trick(t.leader, t.cards, t.winner) for t in played))


def write_season(
    records: Iterable[HandRecord],
    path: str | os.PathLike[str],
    fmt: str | None = None,
    faults: Iterable[InjectedFault] | None = None,
    faults_path: str | os.PathLike[str] | None = None,
) -> tuple[int, int]:
    """Write a season as ``fmt`` (``jsonl``, ``spn`` or ``csv``; default from the extension;
    a ``.gz`` name is gzipped) through the format modules (``spadework.parsers.jsonl``,
    ``spadework.parsers.spn``, ``spadework.parsers.scoresheet``), and, when ``faults`` is given, the sidecar
    (default :func:`~spadework.analysis.sim.faults.sidecar_path`: ``x.csv`` -> ``x.csv.faults.jsonl``)
    with the rows expected in that format.

    The score sheet holds no deal and no play: its ``taken`` cells are the tricks as
    played (:func:`score_sheet_record`), and play faults are left out of its sidecar.
    Output is deterministic (``\\n`` line ends, no timestamps; gzip with mtime 0).
    Returns ``(hands written, sidecar rows written)``.  Raises ``ValueError`` for an
    unknown format, ``OSError`` for a file that cannot be written.
    """
    import gzip
    import importlib

    fmt = fmt or format_of(path)
    modules = {"jsonl": "spadework.parsers.jsonl", "spn": "spadework.parsers.spn", "csv": "spadework.parsers.scoresheet"}
    if fmt not in modules:
        raise ValueError(f"unknown format {fmt!r}; the simulator writes {', '.join(modules)}")
    mod = importlib.import_module(modules[fmt])
    if fmt == "csv":
        cache: dict[str, Ruleset] = {}

        def sheet(recs: Iterable[HandRecord]) -> Iterator[HandRecord]:
            for r in recs:
                key = r.rules if isinstance(r.rules, str) else repr(sorted(r.rules.items()))
                rs = cache.get(key)
                if rs is None:
                    rs = cache[key] = get_ruleset(r.rules)
                yield score_sheet_record(_gaps_filled(r, rs), rs)

        records = sheet(records)
    p = os.fspath(path)
    if p.endswith(".gz"):
        with open(p, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
            import io

            with io.TextIOWrapper(gz, encoding="utf-8", newline="\n") as fp:
                n = mod.dump(records, fp)
    else:
        with open(p, "w", encoding="utf-8", newline="\n") as fp:
            n = mod.dump(records, fp)
    rows = 0
    if faults is not None:
        with open(faults_path or sidecar_path(p), "w", encoding="utf-8", newline="\n") as fp:
            rows = dump_faults(for_format(faults, fmt), fp)
    elif faults_path is None and os.path.isfile(sidecar_path(p)):
        os.remove(sidecar_path(p))  # an earlier season's planted faults: they do not describe this one
    return n, rows


__all__ = [
    "GameSpec",
    "MAX_HANDS",
    "SimulatedGame",
    "available_kinds",
    "format_of",
    "iter_season",
    "schedule",
    "score_sheet_record",
    "simulate_game",
    "simulate_season",
    "write_season",
]
