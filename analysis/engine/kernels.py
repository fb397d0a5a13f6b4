"""The compiled rules core: numba kernels that replay and score every hand of every game.

Input: the arrays of :class:`~spadework.analysis.engine.packed.PackedHands` (as a :class:`HandsIn`)
and the ruleset table :class:`~spadework.analysis.engine.packed.RulesetArrays` (as a
:class:`RulesIn`): rules are data (option numbers, each card's playing suit and power), never a
fork of a kernel.  Output: :class:`CoreOut` (per hand: trick leaders, led suits, winners,
spades-broken flags, tricks taken, the ``hand_scores`` values as played and after the renege
penalty; per game: totals, winner, the hand that ended it) and :class:`FindOut` (one row per
finding: code, hand, trick, seat, card, side, field, recorded and expected values).

Each check is named by its finding code: ``RENEGE``, ``CARD_NOT_HELD``... are the code ids of
:data:`CODE_IDS` (the index of the code in :data:`spadework.analysis.engine.findings.ALL_CODES`).
Holdings are 64-bit masks per seat (bit = card id of :mod:`spadework.parsers.encoding`).

The rules are those of RULES.md sections 1-7 as the reference (:mod:`~spadework.analysis.engine.replay`,
:mod:`~spadework.analysis.engine.checker`) applies them; ``tests/test_core_differential.py``
holds the two to the same rows and findings.  Findings are written in the reference's order.

Driver: :func:`run_core` (games in parallel on several threads, the kernel releasing the GIL;
findings are counted in a first pass and written, for the games that have any, in a second).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from spadework.analysis.engine import findings as _F
from spadework.analysis.engine.packed import (
    BLIND_NIL_ALWAYS,
    BLIND_NIL_NEVER,
    FAILED_NIL_BAGS_ONLY,
    FAILED_NIL_SIDE,
    FIRST_LEAD_TWO_OF_CLUBS,
    NOT_RECORDED,
    O,
)
from spadework.parsers.encoding import CARD_ID, NO_CARD, NO_SEAT

# --- finding codes as ids (named checks) -----------------------------------------------------------

CODE_IDS: dict[str, int] = {c: i for i, c in enumerate(_F.ALL_CODES)}
"""Finding code -> the id the kernels write (index in ``findings.ALL_CODES``)."""
CODE_NAMES: tuple[str, ...] = tuple(_F.ALL_CODES)

DEAL_INVALID = CODE_IDS[_F.DEAL_INVALID]
DEALER_OUT_OF_ROTATION = CODE_IDS[_F.DEALER_OUT_OF_ROTATION]
BID_OUT_OF_TURN = CODE_IDS[_F.BID_OUT_OF_TURN]
BID_MISSING = CODE_IDS[_F.BID_MISSING]
BID_INVALID = CODE_IDS[_F.BID_INVALID]
BLIND_BID_NOT_ALLOWED = CODE_IDS[_F.BLIND_BID_NOT_ALLOWED]
LEAD_OUT_OF_TURN = CODE_IDS[_F.LEAD_OUT_OF_TURN]
CARD_NOT_HELD = CODE_IDS[_F.CARD_NOT_HELD]
SPADE_LED_FIRST_TRICK = CODE_IDS[_F.SPADE_LED_FIRST_TRICK]
SPADE_LED_BEFORE_BROKEN = CODE_IDS[_F.SPADE_LED_BEFORE_BROKEN]
RENEGE = CODE_IDS[_F.RENEGE]
HAND_INCOMPLETE = CODE_IDS[_F.HAND_INCOMPLETE]
TRICK_WINNER_MISMATCH = CODE_IDS[_F.TRICK_WINNER_MISMATCH]
TRICKS_TAKEN_MISMATCH = CODE_IDS[_F.TRICKS_TAKEN_MISMATCH]
SCORE_MISMATCH = CODE_IDS[_F.SCORE_MISMATCH]
GAME_RESULT_MISMATCH = CODE_IDS[_F.GAME_RESULT_MISMATCH]
PLAYED_AFTER_GAME_END = CODE_IDS[_F.PLAYED_AFTER_GAME_END]
LEAD_NOT_TWO_OF_CLUBS = CODE_IDS[_F.LEAD_NOT_TWO_OF_CLUBS]

FIELD_NAMES: tuple[str, ...] = ("points", "total", "bags", "score_before", "bags_before", "winner", "taken", "dealer")
"""``FindOut.field`` ids -> the ``Finding.field`` text (-1 = no field)."""
F_POINTS, F_TOTAL, F_BAGS, F_SCORE_BEFORE, F_BAGS_BEFORE, F_WINNER, F_TAKEN, F_DEALER = range(len(FIELD_NAMES))
NO_FIELD = -1

NO_HAND = NOT_RECORDED
"""``CoreOut.g_ended`` when the game has not ended."""
AS_PLAYED, AFTER_PENALTY = 0, 1
"""Scoring index of the ``hs_*`` arrays (``hand_scores.scoring``)."""

TWO_CLUBS = CARD_ID["2C"]
SPADE = 0  # playing suit id of spades (parsers.encoding.SPADE_ID)
NAN = np.nan

# option columns (rules are data: each a column of RulesIn.opt)
O_TARGET = O["target"]
O_NIL = O["nil"]
O_NIL_POINTS = O["nil_points"]
O_BLIND_NIL_POINTS = O["blind_nil_points"]
O_BLIND_NIL_MODE = O["blind_nil_mode"]
O_BLIND_NIL_BEHIND_BY = O["blind_nil_behind_by"]
O_BLIND_BIDS = O["blind_bids"]
O_BLIND_BID_VALUES = O["blind_bid_values"]
O_BLIND_BID_HAS_POINTS = O["blind_bid_has_points"]
O_BLIND_BID_POINTS = O["blind_bid_points"]
O_BLIND_BID_HAS_BEHIND_BY = O["blind_bid_has_behind_by"]
O_BLIND_BID_BEHIND_BY = O["blind_bid_behind_by"]
O_BLIND_PARTNER_BIDS = O["blind_partner_bids"]
O_HAS_MIN_SIDE_BID = O["has_min_side_bid"]
O_MIN_SIDE_BID = O["min_side_bid"]
O_HAS_MAX_SIDE_BID = O["has_max_side_bid"]
O_MAX_SIDE_BID = O["max_side_bid"]
O_FAILED_NIL_TRICKS = O["failed_nil_tricks"]
O_BAG_LIMIT = O["bag_limit"]
O_BAG_PENALTY = O["bag_penalty"]
O_BAG_POINTS = O["bag_points"]
O_TEN_FOR_TWO_HUNDRED = O["ten_for_two_hundred"]
O_HAS_LOSING_SCORE = O["has_losing_score"]
O_LOSING_SCORE = O["losing_score"]
O_FIRST_LEAD = O["first_lead"]
O_SPADES_LEAD_ANY_TIME = O["spades_lead_any_time"]
O_RENEGE_PENALTY_TRICKS = O["renege_penalty_tricks"]
O_DEALER = O["dealer"]

# --- the kernels' inputs and outputs ---------------------------------------------------------------

HANDS_FIELDS = (
    "game_start game_ruleset game_rules_flag hand_no dealer has_deal deal deal_len n_tricks trick_leader "
    "trick_len trick_cards trick_winner n_bids bid_seat bid_value bid_nil bid_blind bid_whole has_taken taken "
    "score_points score_total score_bags score_before bags_before winner overflow"
).split()
HandsIn = namedtuple("HandsIn", HANDS_FIELDS)
"""The arrays of a ``PackedHands`` (same names), as one argument."""

RulesIn = namedtuple("RulesIn", ["opt", "play_suit", "play_power", "deck_mask", "suit_mask"])
"""A ``RulesetArrays`` table plus ``suit_mask``: uint64[R, 5], the cards of each playing suit."""

OUT_SPEC = {
    # per hand
    "t_leader": (("N", 13), np.uint8, NO_SEAT),
    "t_winner": (("N", 13), np.uint8, NO_SEAT),
    "t_led": (("N", 13), np.int8, -1),
    "t_broken": (("N", 13), np.bool_, False),
    "taken": (("N", 4), np.int32, 0),
    "taken_score": (("N", 4), np.int32, 0),
    "hs_contract": (("N", 2, 2), np.float64, 0.0),
    "hs_tricks": (("N", 2, 2), np.int64, 0),
    "hs_made": (("N", 2, 2), np.bool_, False),
    "hs_bags_hand": (("N", 2, 2), np.int64, 0),
    "hs_penalty": (("N", 2, 2), np.int64, 0),
    "hs_nil": (("N", 2, 2), np.int64, 0),
    "hs_points": (("N", 2, 2), np.float64, 0.0),
    "hs_total": (("N", 2, 2), np.float64, 0.0),
    "hs_bags": (("N", 2, 2), np.int64, 0),
    "n_find": (("N",), np.int32, 0),
    # per game
    "g_total": (("G", 2), np.float64, 0.0),
    "g_winner": (("G",), np.uint8, NO_SEAT),
    "g_ended": (("G",), np.int32, NO_HAND),
    "g_nfind": (("G",), np.int64, 0),
    "g_reference": (("G",), np.bool_, False),
}
CoreOut = namedtuple("CoreOut", list(OUT_SPEC))
"""Per hand (N) and per game (G) results; see :func:`spadework.analysis.engine.compiled.check_packed`.

``t_*`` [N,13]: each recorded trick's leader, winner (``NO_SEAT`` for a short trick), led suit
(playing-suit id, -1 for a trick with no cards) and whether spades were broken when it was led.
``taken`` [N,4]: tricks won in the replay; ``taken_score`` [N,4]: the tricks the hand is scored on.
``hs_*`` [N, scoring, side]: the ``hand_scores`` values (scoring 0 as played, 1 after the renege
penalty, set only when the ruleset has one).  ``n_find`` [N]: findings of the hand.
``g_total`` [G,2]: the game's totals (at its end, or after its last hand); ``g_winner``;
``g_ended``: the hand number that ended it (``NO_HAND``); ``g_nfind``: findings of the game;
``g_reference``: the core cannot check this game (a hand the layout flags ``overflow``, a seat dealt
the same card twice); its rows and findings are the reference's.
"""

FIND_SPEC = {
    "hand": np.int64,
    "code": np.int16,
    "trick": np.int8,
    "seat": np.uint8,
    "card": np.uint8,
    "side": np.uint8,
    "field": np.int8,
    "recorded": np.float64,
    "expected": np.float64,
}
FindOut = namedtuple("FindOut", list(FIND_SPEC))
"""One row per finding, in the reference's order: ``hand`` (row in the packed hands), ``code``
(:data:`CODE_IDS`), ``trick`` (1..13, 0 = none), ``seat``/``side`` (``NO_SEAT`` = none), ``card``
(``NO_CARD``), ``field`` (:data:`FIELD_NAMES`, -1 = none), ``recorded``/``expected`` (NaN = none;
seat or side ids for ``winner``/``dealer``)."""


def alloc_out(n_hands: int, n_games: int) -> CoreOut:
    """Empty :class:`CoreOut` arrays."""
    arrs = []
    for shape, dtype, fill in OUT_SPEC.values():
        dims = tuple({"N": n_hands, "G": n_games}.get(d, d) for d in shape)  # type: ignore[misc]
        arrs.append(np.full(dims, fill, dtype=dtype))
    return CoreOut(*arrs)


def alloc_find(n: int) -> FindOut:
    """Empty :class:`FindOut` arrays of ``n`` rows."""
    return FindOut(*(np.zeros(n, dtype=d) for d in FIND_SPEC.values()))


# --- small helpers ---------------------------------------------------------------------------------
#
# Helpers take plain arrays and scalars, never the namedtuples: numba passes (and reference-counts)
# every array of a tuple at each call, which cost both compile time and run time.


@njit(cache=True, no_cpython_wrapper=True)
def _bit(c):
    return np.uint64(1) << np.uint64(c)


@njit(cache=True, no_cpython_wrapper=True)
def _has(mask, c):
    return (mask >> np.uint64(c)) & np.uint64(1) != np.uint64(0)


@njit("int64(float64[:, ::1], int64, boolean, int64, int64, int64, int64, int64, int64, int64, float64, float64)", cache=True)
def _emit(F, pos, write, hand, code, trick, seat, card, side, field, recorded, expected):
    """Write one finding at row ``pos`` of ``F`` (only when ``write``); the next position.
    ``F``: float64[M, 9], columns as :class:`FindOut` (every value fits a float64 exactly)."""
    if write:
        F[pos, 0] = hand
        F[pos, 1] = code
        F[pos, 2] = trick
        F[pos, 3] = seat
        F[pos, 4] = card
        F[pos, 5] = side
        F[pos, 6] = field
        F[pos, 7] = recorded
        F[pos, 8] = expected
    return pos + 1


@njit(cache=True, no_cpython_wrapper=True)
def _blind_value_known(opt, v):
    """``Ruleset.blind_bid_known``: ``v`` is one of the blind numeric bid values (``opt``: one ruleset row)."""
    if opt[O_BLIND_BIDS] == 0:
        return False
    if v != np.floor(v) or v < 1.0 or v > 62.0:
        return False
    return (opt[O_BLIND_BID_VALUES] >> np.int64(v)) & 1 == 1


# --- DEAL_INVALID ---------------------------------------------------------------------------------


@njit(cache=True, no_cpython_wrapper=True)
def _check_deal(deal, deal_len, i, deck, F, pos, write):
    """DEAL_INVALID (one finding naming the first problem: a card outside the deck, else a card
    dealt twice, else a seat without 13 cards).  Returns ``(pos, dup_in_seat)``: ``dup_in_seat``
    when a seat was dealt the same card twice (masks cannot hold that hand: the reference checks it)."""
    seen = np.uint64(0)
    bad = False
    o_seat, o_card = NO_SEAT, NO_CARD
    t_seat, t_card = NO_SEAT, NO_CARD
    c_seat = NO_SEAT
    dup_in_seat = False
    for s in range(4):
        if np.int64(deal_len[i, s]) != 13:
            bad = True
            # the reference's `count = count or seat` takes N (Seat 0, falsy) only when no other seat
            # has a wrong count: the first such seat other than N, else N
            if c_seat == NO_SEAT or c_seat == 0:
                c_seat = s
    for s in range(4):
        own = np.uint64(0)
        for j in range(np.int64(deal_len[i, s])):
            c = np.int64(deal[i, s, j])
            if _has(own, c):
                dup_in_seat = True
            own |= _bit(c)
            if not _has(deck, c):
                bad = True
                if o_seat == NO_SEAT:
                    o_seat, o_card = s, c
            elif _has(seen, c):
                bad = True
                if t_seat == NO_SEAT:
                    other = s  # the seat it was dealt to first
                    for s2 in range(s):
                        for j2 in range(np.int64(deal_len[i, s2])):
                            if np.int64(deal[i, s2, j2]) == c:
                                other = s2
                                break
                        if other != s:
                            break
                    holder = s
                    if np.int64(deal_len[i, other]) > 13 and np.int64(deal_len[i, s]) <= 13:
                        holder = other
                    t_seat, t_card = holder, c
            else:
                seen |= _bit(c)
    if bad:
        if o_seat != NO_SEAT:
            seat, card = o_seat, o_card
        elif t_seat != NO_SEAT:
            seat, card = t_seat, t_card
        else:
            seat, card = c_seat, NO_CARD
        side = NO_SEAT if seat == NO_SEAT else seat & 1
        pos = _emit(F, pos, write, i, DEAL_INVALID, 0, seat, card, side, NO_FIELD, NAN, NAN)
    return pos, dup_in_seat


# --- bidding (RULES.md section 3) -------------------------------------------------------------------


@njit(cache=True, no_cpython_wrapper=True)
def _check_bids(bid_seat, bid_value, bid_nil, bid_blind, bid_whole, nb, dealer, i, opt, own_totals, eff, F, pos, write):
    """BID_OUT_OF_TURN, BID_INVALID, BLIND_BID_NOT_ALLOWED, BID_MISSING and the side limits, in the
    reference's order.  Fills ``eff[seat]`` with the slot of the bid that counts (-1 = none)."""
    bidders = 0
    for j in range(nb):
        bidders |= 1 << np.int64(bid_seat[i, j])
    pending = bidders  # seats still due to bid (bit = seat), in order from the dealer's left
    silent = 0  # silent partners of a blind numeric bid
    valid = 0
    for s in range(4):
        eff[s] = -1
    for j in range(nb):
        s = np.int64(bid_seat[i, j])
        side = s & 1
        if eff[s] >= 0 or (silent >> s) & 1:  # a second bid, or the silent partner's
            pos = _emit(F, pos, write, i, BID_OUT_OF_TURN, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
            continue
        first = -1
        for k in range(4):
            q = (dealer + 1 + k) & 3
            if (pending >> q) & 1:
                first = q
                break
        if first != s and (pending >> s) & 1:
            pos = _emit(F, pos, write, i, BID_OUT_OF_TURN, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
        pending &= ~(1 << s)
        eff[s] = j
        own = own_totals[side]
        other = own_totals[1 - side]
        v = bid_value[i, j]
        blind = bid_blind[i, j]
        nil = bid_nil[i, j] or v == 0.0
        ok = True
        if nil and blind:
            mode = opt[O_BLIND_NIL_MODE]
            if opt[O_NIL] == 0 or mode == BLIND_NIL_NEVER:
                pos = _emit(F, pos, write, i, BID_INVALID, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
                ok = False
            elif mode != BLIND_NIL_ALWAYS and not (other - own >= opt[O_BLIND_NIL_BEHIND_BY]):
                pos = _emit(F, pos, write, i, BLIND_BID_NOT_ALLOWED, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
        elif nil:
            if opt[O_NIL] == 0:
                pos = _emit(F, pos, write, i, BID_INVALID, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
                ok = False
        elif not bid_whole[i, j]:
            pos = _emit(F, pos, write, i, BID_INVALID, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
            ok = False
        elif blind:
            partner = s ^ 2
            if not _blind_value_known(opt, v):
                pos = _emit(F, pos, write, i, BID_INVALID, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
                ok = False
            else:
                partner_bids = opt[O_BLIND_PARTNER_BIDS] != 0
                if not partner_bids and eff[partner] < 0:
                    silent |= 1 << partner
                    pending &= ~(1 << partner)
                if not partner_bids and eff[partner] >= 0:
                    pos = _emit(F, pos, write, i, BLIND_BID_NOT_ALLOWED, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
                elif opt[O_BLIND_BID_HAS_BEHIND_BY] != 0 and not (other - own >= opt[O_BLIND_BID_BEHIND_BY]):
                    pos = _emit(F, pos, write, i, BLIND_BID_NOT_ALLOWED, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
        if ok:
            valid |= 1 << s
        else:
            valid &= ~(1 << s)
    for k in range(4):
        s = (dealer + 1 + k) & 3
        if not (bidders >> s) & 1 and not (silent >> s) & 1:
            pos = _emit(F, pos, write, i, BID_MISSING, 0, s, NO_CARD, s & 1, NO_FIELD, NAN, NAN)
    for side in range(2):  # the side limits, on sides whose bids are all there and valid
        complete = True
        has_nil = False
        contract = 0.0
        for x in (side, side + 2):
            j = eff[x]
            if not (((valid >> x) & 1 and j >= 0) or (silent >> x) & 1):
                complete = False
            elif j >= 0:
                if bid_nil[i, j] or bid_value[i, j] == 0.0:
                    has_nil = True
                else:
                    contract += bid_value[i, j]
        if not complete:
            continue
        if opt[O_HAS_MIN_SIDE_BID] != 0 and not has_nil and contract < opt[O_MIN_SIDE_BID]:
            pos = _emit(F, pos, write, i, BID_INVALID, 0, NO_SEAT, NO_CARD, side, NO_FIELD, NAN, NAN)
        if opt[O_HAS_MAX_SIDE_BID] != 0 and contract > opt[O_MAX_SIDE_BID]:
            pos = _emit(F, pos, write, i, BID_INVALID, 0, NO_SEAT, NO_CARD, side, NO_FIELD, NAN, NAN)
    return pos


# --- the play (RULES.md section 4) -------------------------------------------------------------------


@njit(cache=True, no_cpython_wrapper=True)
def _replay(i, nt, dealer, trick_leader, trick_len, trick_cards, trick_winner, has_deal, deal, deal_len,
            opt, suit, power, deck, suit_mask, t_leader, t_winner, t_led, t_broken, taken,
            F, pos, write, reneges):
    """Replay the ``nt`` recorded tricks of hand ``i``: LEAD_OUT_OF_TURN, CARD_NOT_HELD (the whole
    finding for its card), LEAD_NOT_TWO_OF_CLUBS (the whole finding for that lead),
    SPADE_LED_FIRST_TRICK, SPADE_LED_BEFORE_BROKEN, RENEGE, DEAL_INVALID for a card outside the deck
    where no deal is recorded (each seat then held what it played), TRICK_WINNER_MISMATCH.
    Fills the trick rows and ``taken[4]``.  Returns ``(pos, n_reneges)``; ``reneges[k]`` = seat."""
    inferred = not has_deal
    hold = np.zeros(4, dtype=np.uint64)  # with a deal: what each seat still holds
    cnt = np.zeros((4, 5), dtype=np.int64)  # without: each seat's plays still to come, per suit
    if inferred:
        for t in range(nt):
            ld = np.int64(trick_leader[i, t])
            for j in range(np.int64(trick_len[i, t])):
                cnt[(ld + j) & 3, np.int64(suit[trick_cards[i, t, j]])] += 1
    else:
        for s in range(4):
            for j in range(np.int64(deal_len[i, s])):
                hold[s] |= _bit(deal[i, s, j])
    two_clubs_rule = opt[O_FIRST_LEAD] == FIRST_LEAD_TWO_OF_CLUBS
    leader0 = (dealer + 1) & 3
    if two_clubs_rule:  # the 2C holder leads trick 1 (without a deal: the seat that played it first)
        found = False
        for t in range(nt if inferred else 0):
            ld = np.int64(trick_leader[i, t])
            for j in range(np.int64(trick_len[i, t])):
                if np.int64(trick_cards[i, t, j]) == TWO_CLUBS:
                    leader0 = (ld + j) & 3
                    found = True
                    break
            if found:
                break
        for s in range(0 if inferred else 4):
            if _has(hold[s], TWO_CLUBS):
                leader0 = s
                break
    to_play = leader0  # -1: nobody known (after a short trick)
    broken = False
    played = np.uint64(0)
    nren = 0
    any_time = opt[O_SPADES_LEAD_ANY_TIME] != 0
    non_spades = ~suit_mask[SPADE]
    for s in range(4):
        taken[s] = 0
    for t in range(nt):
        n = t + 1
        ln = np.int64(trick_len[i, t])
        ld = np.int64(trick_leader[i, t])
        t_leader[i, t] = ld
        t_broken[i, t] = broken
        led = -1
        best = 0
        best_key = -1
        for j in range(ln):
            s = (ld + j) & 3
            c = np.int64(trick_cards[i, t, j])
            cs = np.int64(suit[c])
            if inferred and not _has(deck, c):
                pos = _emit(F, pos, write, i, DEAL_INVALID, n, s, c, s & 1, NO_FIELD, NAN, NAN)
            if j == 0:
                if s != to_play and to_play >= 0:
                    pos = _emit(F, pos, write, i, LEAD_OUT_OF_TURN, n, s, NO_CARD, s & 1, NO_FIELD, NAN, NAN)
                led = cs
            held = not _has(played, c) if inferred else _has(hold[s], c)
            if not held:
                pos = _emit(F, pos, write, i, CARD_NOT_HELD, n, s, c, s & 1, NO_FIELD, NAN, NAN)
            elif j > 0:
                if cs != led:  # RENEGE: not following while holding the suit led
                    if cnt[s, led] > 0 if inferred else (hold[s] & suit_mask[led]) != np.uint64(0):
                        pos = _emit(F, pos, write, i, RENEGE, n, s, c, s & 1, NO_FIELD, NAN, NAN)
                        reneges[nren] = s
                        nren += 1
            else:
                code = -1
                if n == 1 and two_clubs_rule and c != TWO_CLUBS:
                    has2c = False
                    if inferred:  # the seat plays the 2C now or later
                        for t2 in range(t, nt):
                            l2 = np.int64(trick_leader[i, t2])
                            for j2 in range(np.int64(trick_len[i, t2])):
                                if (l2 + j2) & 3 == s and np.int64(trick_cards[i, t2, j2]) == TWO_CLUBS:
                                    has2c = True
                    else:
                        has2c = _has(hold[s], TWO_CLUBS)
                    if has2c:
                        code = LEAD_NOT_TWO_OF_CLUBS
                if code < 0 and cs == SPADE and (n == 1 or not (broken or any_time)):
                    if inferred:
                        other = cnt[s, 1] + cnt[s, 2] + cnt[s, 3] + cnt[s, 4] > 0
                    else:
                        other = (hold[s] & non_spades) != np.uint64(0)
                    if other:
                        code = SPADE_LED_FIRST_TRICK if n == 1 else SPADE_LED_BEFORE_BROKEN
                if code >= 0:
                    pos = _emit(F, pos, write, i, code, n, s, c, s & 1, NO_FIELD, NAN, NAN)
            if inferred:
                cnt[s, cs] -= 1
            else:
                hold[s] &= ~_bit(c)
            played |= _bit(c)
            if cs == SPADE:
                broken = True
            # Deck.winner_index: the first card of the highest power among trumps and the suit led
            if cs == SPADE or cs == led:
                key = np.int64(power[c])
                if key > best_key:
                    best, best_key = j, key
        t_led[i, t] = led
        if ln < 4:
            to_play = -1
            t_winner[i, t] = NO_SEAT
            continue
        w = (ld + best) & 3
        t_winner[i, t] = w
        taken[w] += 1
        to_play = w
        rw = np.int64(trick_winner[i, t])
        if rw != NO_SEAT and rw != w:
            pos = _emit(F, pos, write, i, TRICK_WINNER_MISMATCH, n, rw, NO_CARD, rw & 1, F_WINNER, rw, w)
    return pos, nren


# --- tricks taken and the record's completeness ------------------------------------------------------


@njit(cache=True, no_cpython_wrapper=True)
def _check_taken(i, nt, trick_len, has_taken, taken_rec, taken, taken_score, F, pos, write):
    """HAND_INCOMPLETE and TRICKS_TAKEN_MISMATCH; fills ``taken_score[4]`` (the tricks the hand is
    scored on: the replay of a complete hand, else the recorded taken, else the tricks played)."""
    complete = nt == 13
    for t in range(nt):
        if np.int64(trick_len[i, t]) != 4:
            complete = False
    if not complete and not has_taken:
        pos = _emit(F, pos, write, i, HAND_INCOMPLETE, 0, NO_SEAT, NO_CARD, NO_SEAT, NO_FIELD, NAN, NAN)
    for s in range(4):
        taken_score[s] = taken[s]
    if has_taken:
        low = False
        total = 0
        for s in range(4):
            v = np.int64(taken_rec[i, s])
            if v == NOT_RECORDED:
                continue
            total += v
            if (v == taken[s]) if complete else (v >= taken[s]):
                continue
            low = True
            pos = _emit(F, pos, write, i, TRICKS_TAKEN_MISMATCH, 0, s, NO_CARD, s & 1, F_TAKEN, v, taken[s])
        if not complete and not low and total != 13:
            pos = _emit(F, pos, write, i, TRICKS_TAKEN_MISMATCH, 0, NO_SEAT, NO_CARD, NO_SEAT, F_TAKEN, total, 13)
        if not complete:
            for s in range(4):
                v = np.int64(taken_rec[i, s])
                taken_score[s] = 0 if v == NOT_RECORDED else v
    return pos


# --- scoring (RULES.md section 5) ---------------------------------------------------------------------


@njit(cache=True, no_cpython_wrapper=True)
def _score_side(opt, bid, side, taken, total_before, bags_before):
    """``scoring.score_side`` for ``side``: (contract, tricks, made, bags_this_hand, nil_points,
    bag_penalty, points, total, bags).  ``bid``: float64[4, 4], per seat (has a bid, value, nil,
    blind) of the bid that counts; ``taken``: tricks per seat."""
    fnt = opt[O_FAILED_NIL_TRICKS]
    contract = 0.0
    base = 0.0
    counting = 0
    extra_bags = 0
    nil_points = 0
    any_blind = False
    for seat in (side, side + 2):
        tk = taken[seat]
        if bid[seat, 0] == 0.0:  # no bid (a blind bidder's silent partner): its tricks count
            counting += tk
            continue
        v = bid[seat, 1]
        blind = bid[seat, 3] != 0.0
        if bid[seat, 2] != 0.0:
            value = opt[O_BLIND_NIL_POINTS] if blind else opt[O_NIL_POINTS]
            if tk == 0:
                nil_points += value
            else:
                nil_points -= value
                if fnt == FAILED_NIL_SIDE:
                    counting += tk
                elif fnt == FAILED_NIL_BAGS_ONLY:
                    extra_bags += tk
        else:
            contract += v
            if blind:
                any_blind = True
                if opt[O_BLIND_BID_HAS_POINTS] != 0 and _blind_value_known(opt, v):
                    base += opt[O_BLIND_BID_POINTS]
                else:
                    base += 20.0 * v
            else:
                base += 10.0 * v
            counting += tk
    made = counting >= contract
    if made:
        cp = base
        if opt[O_TEN_FOR_TWO_HUNDRED] != 0 and not any_blind and contract >= 10.0:
            cp = 200.0
        bags_hand = np.int64(counting - contract) + extra_bags
    else:
        cp = -base
        bags_hand = np.int64(extra_bags)
    bags_total = bags_before + bags_hand
    penalty = np.int64(0)
    limit = opt[O_BAG_LIMIT]
    if limit > 0 and bags_total >= limit:
        times = bags_total // limit
        penalty = -opt[O_BAG_PENALTY] * times
        bags_total -= times * limit
    points = cp + opt[O_BAG_POINTS] * bags_hand + nil_points + penalty
    return contract, counting, made, bags_hand, nil_points, penalty, points, total_before + points, bags_total


@njit(cache=True, no_cpython_wrapper=True)
def _penalty_taken(bid, taken_score, reneges, nren, k, out):
    """``scoring.apply_renege_penalty``: ``k`` tricks per renege from the offending side (a non-nil
    partner first, the offender first) to the opponents (a non-nil one, the offender's left first)."""
    for s in range(4):
        out[s] = taken_score[s]
    for q in range(nren):
        off = reneges[q]
        g0, g1 = off, off ^ 2
        if bid[g0, 2] != 0.0 and bid[g1, 2] == 0.0:
            g0, g1 = g1, g0
        t0, t1 = (off + 1) & 3, (off + 3) & 3
        if bid[t0, 2] != 0.0 and bid[t1, 2] == 0.0:
            t0, t1 = t1, t0
        for _ in range(k):
            if out[g0] > 0:
                giver = g0
            elif out[g1] > 0:
                giver = g1
            else:
                break
            out[giver] -= 1
            out[t0] += 1


@njit(cache=True, no_cpython_wrapper=True)
def _winner_of(opt, ns, ew):
    """``scoring.game_winner``: side id or NO_SEAT."""
    if max(ns, ew) >= opt[O_TARGET] and ns != ew:
        return 0 if ns > ew else 1
    if opt[O_HAS_LOSING_SCORE] != 0:
        low = opt[O_LOSING_SCORE]
        if (ns <= low or ew <= low) and ns != ew:
            return 0 if ns > ew else 1
    return NO_SEAT


# --- the recorded scores (RULES.md section 5, "Checking recorded scores") -----------------------------


@njit(cache=True, no_cpython_wrapper=True)
def _check_scores(i, first, prev, score_points, score_total, score_bags, score_before, bags_before,
                  opt, bid, taken_off, chain_tot, chain_bags, F, pos, write):
    """SCORE_MISMATCH: the recorded score_before/bags_before, points, total and bags of hand ``i``
    against the recorded state before it (hand ``prev``'s recorded values where it has them, else the
    recomputed chain).  ``taken_off``: the official tricks (after the renege penalty)."""
    base_t = np.empty(2, dtype=np.float64)
    base_b = np.empty(2, dtype=np.int64)
    for sd in range(2):
        base_t[sd] = chain_tot[sd]
        base_b[sd] = chain_bags[sd]
        if prev >= 0:
            if score_total[prev, sd] != NOT_RECORDED:
                base_t[sd] = score_total[prev, sd]
            if score_bags[prev, sd] != NOT_RECORDED:
                base_b[sd] = score_bags[prev, sd]
    if score_before[i, 0] != NOT_RECORDED:
        for sd in range(2):
            v = np.int64(score_before[i, sd])
            if not first and v != base_t[sd]:
                pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_SCORE_BEFORE, v, np.rint(base_t[sd]))
            base_t[sd] = v
    if bags_before[i, 0] != NOT_RECORDED:
        for sd in range(2):
            v = np.int64(bags_before[i, sd])
            if not first and v != base_b[sd]:
                pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_BAGS_BEFORE, v, base_b[sd])
            base_b[sd] = v
    for sd in range(2):
        rp = np.int64(score_points[i, sd])
        rt = np.int64(score_total[i, sd])
        rb = np.int64(score_bags[i, sd])
        if rp == NOT_RECORDED and rt == NOT_RECORDED and rb == NOT_RECORDED:
            continue
        res = _score_side(opt, bid, sd, taken_off, base_t[sd], base_b[sd])
        points, total, bags = res[6], res[7], res[8]
        if rp != NOT_RECORDED and rp != points:
            pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_POINTS, rp, np.rint(points))
        if rt != NOT_RECORDED and rt != total:
            pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_TOTAL, rt, np.rint(total))
        if rb != NOT_RECORDED and rb != bags:
            pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_BAGS, rb, bags)
    return pos


# --- the games -----------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def run_games(P, R, Out, F, games, offsets, write):
    """Check each game of ``games``: every hand replayed and scored in hand order, the dealer
    rotation, the recorded scores, the end of the game and the recorded winner.  Fills the per-hand
    and per-game outputs; game ``games[k]`` writes its findings from row ``offsets[k]`` of ``F`` when
    ``write``, else only counts them (``Out.g_nfind``).

    Releases the GIL: :func:`run_core` runs slices of the games on several threads at once (games
    share no state; each writes only its own rows).  The loop body is the whole game check (not a
    function of its own): every level of jitted calls compiles the code below it again.
    """
    hand_no, dealer, nfind = P.hand_no, P.dealer, Out.g_nfind
    hs_contract, hs_tricks, hs_made, hs_bags_hand = Out.hs_contract, Out.hs_tricks, Out.hs_made, Out.hs_bags_hand
    hs_nil, hs_penalty, hs_points, hs_total, hs_bags = Out.hs_nil, Out.hs_penalty, Out.hs_points, Out.hs_total, Out.hs_bags
    tot = np.zeros((2, 2), dtype=np.float64)  # [chain, side]: as played, after the penalty
    bags = np.zeros((2, 2), dtype=np.int64)
    final = np.zeros(2, dtype=np.float64)
    eff = np.empty(4, dtype=np.int64)
    bid = np.zeros((4, 4), dtype=np.float64)
    reneges = np.empty(64, dtype=np.int64)
    taken = np.zeros(4, dtype=np.int64)
    taken_s = np.zeros(4, dtype=np.int64)
    taken_p = np.zeros(4, dtype=np.int64)
    own_totals = np.zeros(2, dtype=np.int64)
    before_t = np.zeros(2, dtype=np.float64)
    before_b = np.zeros(2, dtype=np.int64)
    for kg in range(games.shape[0]):
        g = np.int64(games[kg])
        pos = np.int64(offsets[kg])
        r = np.int64(P.game_ruleset[g])
        a, b = np.int64(P.game_start[g]), np.int64(P.game_start[g + 1])
        beyond = False  # a hand the core cannot check: the reference checks the game
        for i in range(a, b):
            beyond |= P.overflow[i]
        opt = R.opt[r]
        suit, power, deck, suit_mask = R.play_suit[r], R.play_power[r], R.deck_mask[r], R.suit_mask[r]
        k_pen = opt[O_RENEGE_PENALTY_TRICKS]
        fixed = opt[O_DEALER]
        tot[:] = 0.0
        bags[:] = 0
        if P.score_before[a, 0] != NOT_RECORDED:
            for sd in range(2):
                tot[0, sd] = tot[1, sd] = P.score_before[a, sd]
        if P.bags_before[a, 0] != NOT_RECORDED:
            for sd in range(2):
                bags[0, sd] = bags[1, sd] = P.bags_before[a, sd]
        off = 1 if k_pen > 0 else 0  # the official chain
        winner = NO_SEAT
        ended = NO_HAND
        for i in range(a, b if not beyond else a):
            start = pos
            h = np.int64(hand_no[i])
            d = np.int64(dealer[i])
            # DEALER_OUT_OF_ROTATION
            if fixed != NO_SEAT:
                if d != fixed:
                    pos = _emit(F, pos, write, i, DEALER_OUT_OF_ROTATION, 0, d, NO_CARD, d & 1, F_DEALER, d, fixed)
            elif i > a and h > hand_no[i - 1]:
                exp = (np.int64(dealer[i - 1]) + (h - np.int64(hand_no[i - 1]))) % 4
                if d != exp:
                    pos = _emit(F, pos, write, i, DEALER_OUT_OF_ROTATION, 0, d, NO_CARD, d & 1, F_DEALER, d, exp)
            # PLAYED_AFTER_GAME_END
            if winner != NO_SEAT:
                pos = _emit(F, pos, write, i, PLAYED_AFTER_GAME_END, 0, NO_SEAT, NO_CARD, NO_SEAT, NO_FIELD, NAN, NAN)
            for sd in range(2):
                before_t[sd] = tot[off, sd]
                before_b[sd] = bags[off, sd]
                own_totals[sd] = np.int64(np.rint(tot[off, sd]))
            # the hand: deal, bids, play, tricks taken
            if P.has_deal[i]:
                pos, dup = _check_deal(P.deal, P.deal_len, i, deck, F, pos, write)
                if dup:
                    beyond = True
                    break
            pos = _check_bids(P.bid_seat, P.bid_value, P.bid_nil, P.bid_blind, P.bid_whole, np.int64(P.n_bids[i]),
                              d, i, opt, own_totals, eff, F, pos, write)
            for s in range(4):
                j = eff[s]
                if j < 0:
                    bid[s, 0] = bid[s, 1] = bid[s, 2] = bid[s, 3] = 0.0
                else:
                    bid[s, 0] = 1.0
                    bid[s, 1] = P.bid_value[i, j]
                    bid[s, 2] = 1.0 if P.bid_nil[i, j] or P.bid_value[i, j] == 0.0 else 0.0
                    bid[s, 3] = 1.0 if P.bid_blind[i, j] else 0.0
            nt = np.int64(P.n_tricks[i])
            pos, nren = _replay(i, nt, d, P.trick_leader, P.trick_len, P.trick_cards, P.trick_winner, P.has_deal[i],
                                P.deal, P.deal_len, opt, suit, power, deck, suit_mask,
                                Out.t_leader, Out.t_winner, Out.t_led, Out.t_broken, taken, F, pos, write, reneges)
            pos = _check_taken(i, nt, P.trick_len, P.has_taken[i], P.taken, taken, taken_s, F, pos, write)
            for s in range(4):
                Out.taken[i, s] = taken[s]
                Out.taken_score[i, s] = taken_s[s]
            # the score chains: as played, and after the renege penalty (the official one when there is one)
            for k in range(1 + off):
                if k == 1:
                    _penalty_taken(bid, taken_s, reneges, nren, k_pen, taken_p)
                else:
                    for s in range(4):
                        taken_p[s] = taken_s[s]
                for sd in range(2):
                    res = _score_side(opt, bid, sd, taken_p, tot[k, sd], bags[k, sd])
                    hs_contract[i, k, sd] = res[0]
                    hs_tricks[i, k, sd] = res[1]
                    hs_made[i, k, sd] = res[2]
                    hs_bags_hand[i, k, sd] = res[3]
                    hs_nil[i, k, sd] = res[4]
                    hs_penalty[i, k, sd] = res[5]
                    hs_points[i, k, sd] = res[6]
                    hs_total[i, k, sd] = tot[k, sd] = res[7]
                    hs_bags[i, k, sd] = bags[k, sd] = res[8]
            if winner == NO_SEAT:
                w = _winner_of(opt, tot[off, 0], tot[off, 1])
                if w != NO_SEAT:
                    winner = w
                    ended = h
                    final[0], final[1] = tot[off, 0], tot[off, 1]
            pos = _check_scores(i, i == a, i - 1 if i > a else -1, P.score_points, P.score_total, P.score_bags,
                                P.score_before, P.bags_before, opt, bid, taken_p, before_t, before_b, F, pos, write)
            # GAME_RESULT_MISMATCH
            rw = np.int64(P.winner[i])
            if rw != NO_SEAT:
                if winner == NO_SEAT:
                    pos = _emit(F, pos, write, i, GAME_RESULT_MISMATCH, 0, NO_SEAT, NO_CARD, rw, F_WINNER, rw, NAN)
                elif winner != rw:
                    pos = _emit(F, pos, write, i, GAME_RESULT_MISMATCH, 0, NO_SEAT, NO_CARD, rw, F_WINNER, rw, winner)
            Out.n_find[i] = pos - start
        if beyond:
            Out.g_reference[g] = True
            nfind[g] = 0
            continue
        if winner != NO_SEAT:
            Out.g_total[g, 0], Out.g_total[g, 1] = final[0], final[1]
        else:
            Out.g_total[g, 0], Out.g_total[g, 1] = tot[off, 0], tot[off, 1]
        Out.g_winner[g] = winner
        Out.g_ended[g] = ended
        nfind[g] = pos - offsets[kg]


def _threads() -> int:
    import numba

    return max(1, int(numba.get_num_threads()))


def _parallel(P, R, Out, F, games: np.ndarray, offsets: np.ndarray, write: bool, threads: int) -> None:
    """``run_games`` over ``games`` on ``threads`` threads, in slices of about equal hand counts."""
    if threads <= 1 or len(games) < 2 * threads:
        run_games(P, R, Out, F, games, offsets, write)
        return
    from concurrent.futures import ThreadPoolExecutor

    sizes = (P.game_start[games + 1] - P.game_start[games]).astype(np.int64)
    parts = max(threads * 4, 1)  # a few slices per thread evens out slow games
    cuts = np.searchsorted(np.cumsum(sizes), np.linspace(0, sizes.sum(), parts + 1)[1:-1])
    bounds = [0, *sorted(set(int(c) for c in cuts)), len(games)]
    with ThreadPoolExecutor(threads) as pool:
        jobs = [
            pool.submit(run_games, P, R, Out, F, games[lo:hi], offsets[lo:hi], write)
            for lo, hi in zip(bounds, bounds[1:])
            if hi > lo
        ]
        for j in jobs:
            j.result()


def run_core(P: HandsIn, R: RulesIn, threads: int | None = None) -> tuple[CoreOut, FindOut]:
    """Check every game of ``P`` under the ruleset table ``R``: :class:`CoreOut` and :class:`FindOut`.

    Two passes: every game is checked and its findings counted; the games with findings are
    checked again, writing them (findings are rare, so the second pass is cheap).  ``threads``:
    how many threads check games at once (default ``numba.get_num_threads()``, i.e. the cores or
    ``NUMBA_NUM_THREADS``).

    Why threads and not ``prange``: the kernel releases the GIL, so Python threads run it in
    parallel just as well, and a ``prange`` driver costs about as much compile time again as the
    whole kernel (measured: +12 s of a 25 s first compile).
    """
    threads = _threads() if threads is None else max(1, int(threads))
    n, g = P.hand_no.shape[0], P.game_ruleset.shape[0]
    Out = alloc_out(n, g)
    F0 = np.zeros((0, len(FIND_SPEC)), dtype=np.float64)
    _parallel(P, R, Out, F0, np.arange(g, dtype=np.int64), np.zeros(g, dtype=np.int64), False, threads)
    games = np.nonzero(Out.g_nfind)[0].astype(np.int64)
    counts = Out.g_nfind[games]
    offsets = np.zeros(len(games), dtype=np.int64)
    if len(games):
        offsets[1:] = np.cumsum(counts)[:-1]
    F = np.zeros((int(counts.sum()), len(FIND_SPEC)), dtype=np.float64)
    if len(games):
        _parallel(P, R, Out, F, games, offsets, True, threads)
    return Out, FindOut(*(F[:, k].astype(d) for k, d in enumerate(FIND_SPEC.values())))


__all__ = [
    "CODE_IDS",
    "CODE_NAMES",
    "CoreOut",
    "FIELD_NAMES",
    "FindOut",
    "HandsIn",
    "NO_HAND",
    "RulesIn",
    "alloc_find",
    "alloc_out",
    "run_core",
    "run_games",
]

