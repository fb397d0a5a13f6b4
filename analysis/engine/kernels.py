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

Not done here, by design: the message text (the reference writes it for the hands with findings,
:func:`spadework.analysis.engine.compiled.findings`); RULES_INVALID / RULES_MIXED (about the rules
text; such games are checked whole by the reference); and games with a hand the core cannot hold:
``PackedHands.overflow`` (more than 13 tricks, 5 cards in a trick, more than 8 bids, numbers beyond
32 bits...) or a seat dealt the same card twice (bit masks hold a card once); ``CoreOut.g_reference``
marks them and the reference checks them whole.  All are rare, and exact because the reference does them.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from spadework.analysis.engine import findings as _F
from spadework.analysis.engine import packed as _packed
from spadework.analysis.engine import rules as _rules
from spadework.analysis.engine.packed import (
    BLIND_NIL_ALWAYS,
    BLIND_NIL_NEVER,
    FAILED_NIL_BAGS_ONLY,
    FAILED_NIL_SIDE,
    FIRST_LEAD_TWO_OF_CLUBS,
    NOT_RECORDED,
    O,
)
from spadework.parsers import cards as _cards
from spadework.parsers import encoding as _encoding
from spadework.parsers import numba_views as _views
from spadework.parsers import seats as _seats
from spadework.parsers.encoding import CARD_ID, NO_CARD, NO_SEAT
from spadework.parsers.numba_cache import depends
from spadework.parsers.numba_views import unmanaged as _unmanaged

# The kernels compile in values of these modules (finding codes, option and card codes): numba's
# cache of this module is keyed on their source too, so editing one compiles the kernels again.
depends(__file__, _F, _packed, _rules, _encoding, _cards, _seats, _views)

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
HAND_MISSING = CODE_IDS[_F.HAND_MISSING]
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
    "log_total": (("N", 2), np.float64, 0.0),
    "log_bags": (("N", 2), np.int64, 0),
    "dealer_should": (("N",), np.uint8, NO_SEAT),
    # per game
    "g_total": (("G", 2), np.float64, 0.0),
    "g_winner": (("G",), np.uint8, NO_SEAT),
    "g_ended": (("G",), np.int32, NO_HAND),
    "g_ended_row": (("G",), np.int64, -1),
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
``log_total``/``log_bags`` [N,2]: the log's own state before the hand (RULES.md section 5, "Checking
recorded scores"), for re-checking one hand in the reference (``checker.GameRun``).
``dealer_should`` [N]: the seat that should have dealt the hand (its dealer, or the one left of the
previous hand's dealer when its dealer was out of rotation; ``checker.GameRun.should_dealer``).
``g_total`` [G,2]: the game's totals (at its end, or after its last hand); ``g_winner``;
``g_ended``: the hand number that ended it (``NO_HAND``), ``g_ended_row`` its row (-1); ``g_nfind``: findings of the game;
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
    """Empty :class:`CoreOut` arrays.

    The arrays that start at zero come from ``np.zeros``: the system hands out zeroed pages as
    they are first written, i.e. by the threads that check the games, at once, instead of this
    thread writing every byte before they start (the rest are a tenth of the bytes)."""
    arrs = []
    for shape, dtype, fill in OUT_SPEC.values():
        dims = tuple({"N": n_hands, "G": n_games}.get(d, d) for d in shape)  # type: ignore[misc]
        arrs.append(np.zeros(dims, dtype=dtype) if fill == 0 else np.full(dims, fill, dtype=dtype))
    return CoreOut(*arrs)


def alloc_find(n: int) -> FindOut:
    """Empty :class:`FindOut` arrays of ``n`` rows."""
    return FindOut(*(np.zeros(n, dtype=d) for d in FIND_SPEC.values()))


# scratch arrays of one run_games call, allocated in Python and passed in (numba compiles np.zeros /
# np.empty once per shape kind and dtype: about 0.8 CPU-seconds of the first compile), as three flat
# arrays (one per dtype: a tuple of 22 arrays costs about as much again to type and unbox)
WORK_SPEC = {
    "tot": ((2, 2), np.float64),
    "bags": ((2, 2), np.int64),
    "log_t": (2, np.float64),
    "log_b": (2, np.int64),
    "final": (2, np.float64),
    "eff": (4, np.int64),
    "bid": ((4, 4), np.float64),
    "reneges": (64, np.int64),
    "taken": (4, np.int64),
    "taken_s": (4, np.int64),
    "taken_p": (4, np.int64),
    "own_totals": (2, np.int64),
    "before_t": (2, np.float64),
    "before_b": (2, np.int64),
    "pc": ((13, 4), np.int64),
    "pl": (13, np.int64),
    "later": ((14, 4), np.uint64),
    "hold": (4, np.uint64),
    "held0": (4, np.uint64),
    "unknown": (4, np.int64),
    "true_res": ((2, 9), np.float64),
    "lg": (9, np.float64),
}
"""The scratch arrays of :func:`run_games`: name -> (shape, dtype), each dtype's arrays one after another."""
WORK_SIZES = tuple(
    sum(int(np.prod(shape)) for shape, dtype in WORK_SPEC.values() if dtype == t) for t in (np.float64, np.int64, np.uint64)
)
"""Elements of the float64, int64 and uint64 scratch arrays (``run_games`` slices its views from them)."""


def alloc_work() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Zeroed scratch arrays (float64, int64, uint64) for one :func:`run_games` call."""
    return (np.zeros(WORK_SIZES[0], np.float64), np.zeros(WORK_SIZES[1], np.int64), np.zeros(WORK_SIZES[2], np.uint64))


# --- small helpers ---------------------------------------------------------------------------------

_helper = njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy")
"""Called from compiled code only: no Python or C entry point is built for it, and no division
check (every division is by a number known not to be zero), which shortens the first compile."""
#
# Helpers take plain arrays and scalars, never the namedtuples: numba passes (and reference-counts)
# every array of a tuple at each call, which cost both compile time and run time.


@_helper
def _bit(c):
    return np.uint64(1) << np.uint64(c)


@_helper
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


@_helper
def _blind_value_known(opt, v):
    """``Ruleset.blind_bid_known``: ``v`` is one of the blind numeric bid values (``opt``: one ruleset row)."""
    if opt[O_BLIND_BIDS] == 0:
        return False
    if v != np.floor(v) or v < 1.0 or v > 62.0:
        return False
    return (opt[O_BLIND_BID_VALUES] >> np.int64(v)) & 1 == 1


@_helper
def _popcount(m):
    n = 0
    while m != np.uint64(0):
        m &= m - np.uint64(1)
        n += 1
    return n


# --- DEAL_INVALID ---------------------------------------------------------------------------------


@_helper
def _check_deal(deal, deal_len, i, deck, F, pos, write, held0):
    """DEAL_INVALID (one finding naming the first problem: a card outside the deck, else a card
    dealt twice, else a seat without 13 cards).  Returns ``(pos, dup_in_seat)``: ``dup_in_seat``
    when a seat was dealt the same card twice (masks cannot hold that hand: the reference checks it).
    Fills ``held0[seat]`` with the cards dealt to each seat (what :func:`_replay` starts from).

    A good deal (13 different cards per seat, 52 in all, every one in the deck) is proved from the
    four masks alone; only a deal with a problem is searched card by card for the one to name."""
    union = np.uint64(0)
    good = True
    for s in range(4):
        n = np.int64(deal_len[i, s])
        own = np.uint64(0)
        for j in range(n):
            own |= _bit(np.int64(deal[i, s, j]))
        held0[s] = own
        union |= own
        good &= (n == 13) & (_popcount(own) == 13)
    if good and _popcount(union) == 52 and (union & ~deck) == np.uint64(0):
        return pos, False
    seen = np.uint64(0)
    bad = False
    o_seat, o_card = NO_SEAT, NO_CARD
    t_seat, t_card = NO_SEAT, NO_CARD
    c_seat = NO_SEAT
    dup_in_seat = False
    for s in range(4):
        if np.int64(deal_len[i, s]) != 13:
            bad = True
            if c_seat == NO_SEAT:  # the first seat with a wrong count
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


@_helper
def _check_bids(bid_seat, bid_value, bid_nil, bid_blind, bid_whole, nb, dealer, i, opt, own_totals, scores_known,
                eff, F, pos, write):
    """BID_OUT_OF_TURN, BID_INVALID, BLIND_BID_NOT_ALLOWED, BID_MISSING and the side limits, in the
    reference's order.  Fills ``eff[seat]`` with the slot of the bid that counts (-1 = none).
    ``own_totals``: the totals before the hand for the blind-bid conditions, checked only when
    ``scores_known`` (not after a missing hand whose record does not show them)."""
    bidders = 0
    for j in range(nb):
        bidders |= 1 << np.int64(bid_seat[i, j])
    # the silent partners of blind numeric bids are due no bid (replay._check_bids)
    seen = 0
    silent = 0
    for j in range(nb):
        s = np.int64(bid_seat[i, j])
        if (seen >> s) & 1 or (silent >> s) & 1:
            continue
        seen |= 1 << s
        v = bid_value[i, j]
        if (bid_blind[i, j] and not (bid_nil[i, j] or v == 0.0) and bid_whole[i, j] and _blind_value_known(opt, v)
                and opt[O_BLIND_PARTNER_BIDS] == 0 and not (seen >> (s ^ 2)) & 1):  # fmt: skip
            silent |= 1 << (s ^ 2)
    pending = bidders & ~silent  # seats still due to bid (bit = seat), in order from the dealer's left
    valid = 0
    for s in range(4):
        eff[s] = -1
    for j in range(nb):
        s = np.int64(bid_seat[i, j])
        side = s & 1
        if eff[s] >= 0 or (silent >> s) & 1:  # a second bid, or the silent partner's
            pos = _emit(F, pos, write, i, BID_OUT_OF_TURN, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
            continue
        if (pending >> s) & 1:
            # spoke early: more seats due before it still to bid than seats due after it that have
            # bid (replay._check_bids)
            due_before = 0
            spoke_after = 0
            before = True
            for k in range(4):
                q = (dealer + 1 + k) & 3
                if q == s:
                    before = False
                elif before and (pending >> q) & 1:
                    due_before += 1
                elif not before and eff[q] >= 0:
                    spoke_after += 1
            if spoke_after < due_before:
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
            elif mode != BLIND_NIL_ALWAYS and scores_known and not (other - own >= opt[O_BLIND_NIL_BEHIND_BY]):
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
                if not partner_bids and eff[partner] >= 0:
                    pos = _emit(F, pos, write, i, BLIND_BID_NOT_ALLOWED, 0, s, NO_CARD, side, NO_FIELD, NAN, NAN)
                elif scores_known and opt[O_BLIND_BID_HAS_BEHIND_BY] != 0 and not (other - own >= opt[O_BLIND_BID_BEHIND_BY]):
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


# --- the play (RULES.md section 4, section 7 "Gaps in the record") -----------------------------------


@_helper
def _proof(cards, doubtful, unknown_k, later):
    """The cards among ``cards`` (a seat's holding) a finding may rest on (``replay.PlayState._proof``):
    never a card some seat plays without holding it (``doubtful``, less the cards the seat was dealt
    and plays itself: the caller's mask), and none at all when every one may
    be the card the seat played to ``unknown_k`` tricks whose card of its is unknown (none is played
    ``later`` by the seat)."""
    cards &= ~doubtful
    if unknown_k > 0 and cards != np.uint64(0) and (cards & later) == np.uint64(0) and _popcount(cards) <= unknown_k:
        return np.uint64(0)
    return cards


@_helper
def _prepare_proofs(i, nt, trick_leader, pc, pl, held0, later):
    """Fill ``later[t, s]`` (the cards seat ``s`` plays in tricks ``t..``) and return the cards some
    seat plays without holding them (``replay._doubtful_cards``)."""
    for s in range(4):
        later[nt, s] = np.uint64(0)
    for t in range(nt - 1, -1, -1):
        ld = np.int64(trick_leader[i, t])
        for s in range(4):
            later[t, s] = later[t + 1, s]
        for j in range(pl[t]):
            later[t, (ld + j) & 3] |= _bit(pc[t, j])
    h0, h1, h2, h3 = held0[0], held0[1], held0[2], held0[3]
    doubtful = np.uint64(0)
    for t in range(nt):
        ld = np.int64(trick_leader[i, t])
        for j in range(pl[t]):
            s = (ld + j) & 3
            b = _bit(pc[t, j])
            h = h0 if s == 0 else h1 if s == 1 else h2 if s == 2 else h3
            if h & b:
                h &= ~b
                if s == 0:
                    h0 = h
                elif s == 1:
                    h1 = h
                elif s == 2:
                    h2 = h
                else:
                    h3 = h
            else:
                doubtful |= b
    return doubtful


@_helper
def _replay(i, nt, dealer, trick_leader, trick_len, trick_cards, trick_winner, has_deal,
            opt, suit, power, deck, suit_mask, t_leader, t_winner, t_led, t_broken, taken,
            F, pos, write, reneges, pc, pl, later, hold, held0, unknown):
    """Replay the ``nt`` recorded tricks of hand ``i`` (``replay.replay_hand``'s play): each trick
    missing cards before the last recorded one is a HAND_INCOMPLETE gap naming its trick and first
    missing seat (with a deal and exactly one unplayed card per missing seat, those cards are taken
    as the plays there); then LEAD_OUT_OF_TURN, CARD_NOT_HELD (the whole finding for its card),
    LEAD_NOT_TWO_OF_CLUBS (the whole finding for that lead), SPADE_LED_FIRST_TRICK,
    SPADE_LED_BEFORE_BROKEN, RENEGE (never resting on a card played without being held, nor only on
    a card that may have gone to a gap), DEAL_INVALID for a card outside the deck where no deal is
    recorded (each seat then held the cards it played first), TRICK_WINNER_MISMATCH.

    Fills the trick rows and ``taken[4]``; ``pc``/``pl`` [13,4]/[13] get each trick's plays (gaps
    filled), ``later`` [14,4] the cards each seat plays after each trick (``hold``, ``unknown``:
    scratch arrays of 4; ``held0[4]``: what each seat held at the start, the dealt cards as
    :func:`_check_deal` leaves them when ``has_deal``, else filled here).  Returns
    ``(pos, n_reneges, complete, ends_short, short_trick, short_seat)``: 13 tricks of 4 cards were
    played (fills count); how many tricks short of cards are not gaps (the hand's own
    HAND_INCOMPLETE), and when there is one, its number and its first seat with no card (else 0
    and NO_SEAT)."""
    inferred = not has_deal
    for s in range(4):
        if inferred:  # with a deal, _check_deal filled held0 (what each seat held at the start)
            held0[s] = np.uint64(0)
        unknown[s] = 0  # gaps per seat
    played_all = np.uint64(0)
    last = 0  # the last recorded trick with a card (1-based)
    for t in range(nt):
        ld = np.int64(trick_leader[i, t])
        ln = np.int64(trick_len[i, t])
        pl[t] = ln
        if ln > 0:
            last = t + 1
        for j in range(ln):
            c = np.int64(trick_cards[i, t, j])
            pc[t, j] = c
            if inferred and not _has(played_all, c):  # without a deal: the seat that plays a card first held it
                held0[(ld + j) & 3] |= _bit(c)
            played_all |= _bit(c)
    # the gaps: with a deal, a missing seat's one card never played is taken as its play there
    gaps = 0  # bit t: trick t is a gap
    for t in range(max(last - 1, 0)):
        ln = pl[t]
        if ln >= 4:
            continue
        gaps |= 1 << t
        if inferred:
            continue
        ld = np.int64(trick_leader[i, t])
        fill = True
        for j in range(ln, 4):
            if _popcount(held0[(ld + j) & 3] & ~played_all) != 1:
                fill = False
        if fill:
            for j in range(ln, 4):
                never = held0[(ld + j) & 3] & ~played_all
                c = np.int64(0)
                while not _has(never, c):
                    c += 1
                pc[t, j] = c
            pl[t] = 4
    for s in range(4):
        hold[s] = held0[s]
    doubtful = np.uint64(0)
    proofs = False  # `later` and `doubtful` are worked out when a finding first needs them
    # trick 1's leader: left of the dealer, or the 2C holder (without a deal: the seat that played it first)
    two_clubs_rule = opt[O_FIRST_LEAD] == FIRST_LEAD_TWO_OF_CLUBS
    two_clubs = np.int64(TWO_CLUBS)  # (a variable: a literal argument would compile the callees again)
    leader0 = (dealer + 1) & 3
    if two_clubs_rule:
        for s in range(4):
            if _has(held0[s], two_clubs):
                leader0 = s
                break
        # the 2C dealt to two seats (DEAL_INVALID): the one of them the log has leading leads in turn
        if nt > 0:
            led1 = np.int64(trick_leader[i, 0])
            if 0 <= led1 < 4 and _has(held0[led1], two_clubs):
                leader0 = led1
    to_play = leader0  # -1: nobody known (after a short trick)
    broken = False
    maybe_broken = False  # a card missing from a gap may have been a spade
    nren = 0
    any_time = opt[O_SPADES_LEAD_ANY_TIME] != 0
    non_spades = ~suit_mask[SPADE]
    ends_short = 0
    short_trick = 0
    short_seat = NO_SEAT
    for s in range(4):
        taken[s] = 0
    for t in range(nt):
        n = t + 1
        ln = pl[t]
        ld = np.int64(trick_leader[i, t])
        if ln == 4 and ld == to_play and not (gaps >> t) & 1:
            # The common trick, decided with few branches: led in turn, four cards each held by the
            # seat that plays it and in the deck, no card that may be a renege, a lead no rule
            # questions.  Then no finding but TRICK_WINNER_MISMATCH is possible, and the loop below
            # (card by card) would come to the same rows; any other trick goes through that loop.
            s1, s2, s3 = (ld + 1) & 3, (ld + 2) & 3, (ld + 3) & 3
            c0, c1, c2, c3 = pc[t, 0], pc[t, 1], pc[t, 2], pc[t, 3]
            h0, h1, h2, h3 = hold[ld], hold[s1], hold[s2], hold[s3]
            b0, b1, b2, b3 = _bit(c0), _bit(c1), _bit(c2), _bit(c3)
            q0, q1, q2, q3 = np.int64(suit[c0]), np.int64(suit[c1]), np.int64(suit[c2]), np.int64(suit[c3])
            lm = suit_mask[q0]
            zero = np.uint64(0)
            fast = ((h0 & b0) != zero) & ((h1 & b1) != zero) & ((h2 & b2) != zero) & ((h3 & b3) != zero)
            fast &= ((b0 | b1 | b2 | b3) & ~deck) == zero
            fast &= not (((q1 != q0) & ((h1 & lm) != zero)) | ((q2 != q0) & ((h2 & lm) != zero))
                         | ((q3 != q0) & ((h3 & lm) != zero)))
            fast &= not (n == 1 and two_clubs_rule and c0 != two_clubs and _has(h0, two_clubs))
            fast &= not (q0 == SPADE and (n == 1 or not (broken or any_time or maybe_broken))
                         and (h0 & non_spades) != zero)
            if fast:
                t_leader[i, t] = ld
                t_broken[i, t] = broken
                t_led[i, t] = q0
                # a card played is held by nobody: a card dealt to two seats (DEAL_INVALID) goes from both
                m = ~(b0 | b1 | b2 | b3)
                hold[0], hold[1], hold[2], hold[3] = hold[0] & m, hold[1] & m, hold[2] & m, hold[3] & m
                broken |= (q0 == SPADE) | (q1 == SPADE) | (q2 == SPADE) | (q3 == SPADE)
                # Deck.winner_index: the first card of the highest power among trumps and the suit led
                best, best_key = 0, np.int64(power[c0])
                if q1 == SPADE or q1 == q0:
                    k = np.int64(power[c1])
                    best, best_key = (1, k) if k > best_key else (best, best_key)
                if q2 == SPADE or q2 == q0:
                    k = np.int64(power[c2])
                    best, best_key = (2, k) if k > best_key else (best, best_key)
                if q3 == SPADE or q3 == q0:
                    k = np.int64(power[c3])
                    best, best_key = (3, k) if k > best_key else (best, best_key)
                # the end of the trick, as at the end of the loop below (written out twice: as a
                # helper function it made the whole core 7-12% slower, measured)
                w = (ld + best) & 3
                t_winner[i, t] = w
                taken[w] += 1
                to_play = w
                rw = np.int64(trick_winner[i, t])
                if rw != NO_SEAT and rw != w:
                    pos = _emit(F, pos, write, i, TRICK_WINNER_MISMATCH, n, rw, NO_CARD, rw & 1, F_WINNER, rw, w)
                continue
        if (gaps >> t) & 1:
            miss = (ld + np.int64(trick_len[i, t])) & 3
            pos = _emit(F, pos, write, i, HAND_INCOMPLETE, n, miss, NO_CARD, miss & 1, NO_FIELD, NAN, NAN)
        elif ln < 4:
            # a short trick at the end (not a gap): counted, and the last one named with its first
            # seat with no card (the hand's HAND_INCOMPLETE names it when it is the only one)
            ends_short += 1
            short_trick = n
            short_seat = (ld + ln) & 3
        t_leader[i, t] = ld
        t_broken[i, t] = broken
        led = -1
        led_held = True
        best = 0
        best_key = -1
        for j in range(ln):
            s = (ld + j) & 3
            c = pc[t, j]
            cs = np.int64(suit[c])
            held = _has(hold[s], c)
            foreign = not _has(deck, c)  # the log is wrong there (DEAL_INVALID): no renege or lead finding
            if inferred and foreign:
                pos = _emit(F, pos, write, i, DEAL_INVALID, n, s, c, s & 1, NO_FIELD, NAN, NAN)
            if j == 0:
                # a card the seat does not hold gets no lead finding
                if s != to_play and to_play >= 0 and held and not foreign:
                    pos = _emit(F, pos, write, i, LEAD_OUT_OF_TURN, n, s, c, s & 1, NO_FIELD, NAN, NAN)
                led = cs
                led_held = held and not foreign
            if not held:
                # a card taken from the deal for a gap was never recorded: not CARD_NOT_HELD (a seat
                # with two gaps and one card never played has it taken at both)
                if j < np.int64(trick_len[i, t]) or not (gaps >> t) & 1:
                    pos = _emit(F, pos, write, i, CARD_NOT_HELD, n, s, c, s & 1, NO_FIELD, NAN, NAN)
            elif foreign:
                pass
            elif j > 0:
                # RENEGE: not following while holding the suit led (and the lead itself was held)
                if cs != led and led_held and (hold[s] & suit_mask[led]) != np.uint64(0):
                    if not proofs:
                        doubtful = _prepare_proofs(i, nt, trick_leader, pc, pl, held0, later) | ~deck
                        proofs = True
                    if _proof(hold[s] & suit_mask[led], doubtful & ~(held0[s] & later[0, s] & deck), unknown[s], later[t + 1, s]) != np.uint64(0):
                        pos = _emit(F, pos, write, i, RENEGE, n, s, c, s & 1, NO_FIELD, NAN, NAN)
                        reneges[nren] = s
                        nren += 1
            else:
                code = -1
                if not proofs and ((n == 1 and two_clubs_rule and c != two_clubs and _has(hold[s], two_clubs))
                                   or (cs == SPADE and (hold[s] & non_spades) != np.uint64(0))):
                    doubtful = _prepare_proofs(i, nt, trick_leader, pc, pl, held0, later) | ~deck
                    proofs = True
                if n == 1 and two_clubs_rule and c != two_clubs and _has(hold[s], two_clubs):
                    if _proof(_bit(two_clubs), doubtful & ~(held0[s] & later[0, s] & deck), unknown[s], later[t + 1, s]) != np.uint64(0):
                        code = LEAD_NOT_TWO_OF_CLUBS
                if code < 0 and cs == SPADE and (n == 1 or not (broken or any_time or maybe_broken)):
                    if _proof(hold[s] & non_spades, doubtful & ~(held0[s] & later[0, s] & deck), unknown[s], later[t + 1, s]) != np.uint64(0):
                        code = SPADE_LED_FIRST_TRICK if n == 1 else SPADE_LED_BEFORE_BROKEN
                if code >= 0:
                    pos = _emit(F, pos, write, i, code, n, s, c, s & 1, NO_FIELD, NAN, NAN)
            if held:  # a card played is held by nobody: a card dealt to two seats (DEAL_INVALID) goes from both
                m = ~_bit(c)
                hold[0], hold[1], hold[2], hold[3] = hold[0] & m, hold[1] & m, hold[2] & m, hold[3] & m
            if cs == SPADE:  # a card outside the deck breaks spades by its own suit, as any card (RULES.md 4)
                broken = True
            # Deck.winner_index: the first card of the highest power among trumps and the suit led
            if cs == SPADE or cs == led:
                key = np.int64(power[c])
                if key > best_key:
                    best, best_key = j, key
        t_led[i, t] = led
        if ln < 4:
            if (gaps >> t) & 1:  # the seats with no card here may have played any card they never play later
                if not proofs:
                    doubtful = _prepare_proofs(i, nt, trick_leader, pc, pl, held0, later) | ~deck
                    proofs = True
                for j in range(np.int64(trick_len[i, t]), 4):
                    s = (ld + j) & 3
                    unknown[s] += 1
                    if inferred:
                        gone = deck & ~played_all
                    else:
                        gone = hold[s] & ~later[t + 1, s]
                    if (gone & suit_mask[SPADE]) != np.uint64(0):
                        maybe_broken = True
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
    complete = nt == 13
    for t in range(nt):
        if pl[t] != 4:
            complete = False
    if ends_short != 1:
        short_trick, short_seat = 0, NO_SEAT
    return pos, nren, complete, ends_short, short_trick, short_seat


# --- tricks taken and the record's completeness ------------------------------------------------------


@_helper
def _check_taken(i, nt, complete, ends_short, short_trick, short_seat, has_taken, taken_rec, taken, taken_score, F, pos, write):
    """The hand's own HAND_INCOMPLETE (no card play, fewer than 13 tricks, or short tricks at the end,
    with no tricks-taken record) and TRICKS_TAKEN_MISMATCH; fills ``taken_score[4]`` (the tricks the
    hand is scored on: the replay of a complete hand, else the recorded taken, else the tricks
    played)."""
    if not complete and not has_taken and (nt < 13 or ends_short > 0):
        side = NO_SEAT if short_seat == NO_SEAT else short_seat & 1
        pos = _emit(F, pos, write, i, HAND_INCOMPLETE, short_trick, short_seat, NO_CARD, side, NO_FIELD, NAN, NAN)
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
        if not low and total != 13:  # a record leaving a seat out, whether or not the play is complete
            pos = _emit(F, pos, write, i, TRICKS_TAKEN_MISMATCH, 0, NO_SEAT, NO_CARD, NO_SEAT, F_TAKEN, total, 13)
        if not complete:
            for s in range(4):
                v = np.int64(taken_rec[i, s])
                taken_score[s] = 0 if v == NOT_RECORDED else v
    return pos


# --- scoring (RULES.md section 5) ---------------------------------------------------------------------


@_helper
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
            if blind and _blind_value_known(opt, v):
                any_blind = True
                if opt[O_BLIND_BID_HAS_POINTS] != 0:
                    base += opt[O_BLIND_BID_POINTS]
                else:
                    base += 20.0 * v
            else:  # a blind bid the ruleset does not have is scored as the plain bid
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


@_helper
def _penalty_taken(bid, taken_score, reneges, nren, k, out):
    """``scoring.apply_renege_penalty``: ``k`` tricks per renege, only from a seat that did not bid nil
    (the offender, then its partner) to one that did not (the offender's left, else its right), so a
    nil's result never changes; fewer where no such trick or seat is left.  A seat with no bid counts."""
    for s in range(4):
        out[s] = taken_score[s]
    for q in range(nren):
        off = reneges[q]
        taker = -1
        for x in ((off + 1) & 3, (off + 3) & 3):
            if taker < 0 and bid[x, 2] == 0.0:
                taker = x
        if taker < 0:
            continue
        for _ in range(k):
            giver = -1
            for x in (off, off ^ 2):
                if giver < 0 and bid[x, 2] == 0.0 and out[x] > 0:
                    giver = x
            if giver < 0:
                break
            out[giver] -= 1
            out[taker] += 1


@_helper
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


@_helper
def _check_scores(i, first, check_before, check_score, score_points, score_total, score_bags, score_before,
                  bags_before, opt, bid, taken_off, true_t, true_b, true_res, log_t, log_b, lg, F, pos, write):
    """SCORE_MISMATCH (``checker._ScoreChecker``): a recorded value is wrong only when the rules give it
    from neither the true state (``true_t``/``true_b`` before the hand; ``true_res[side]`` the
    official score from it, as :func:`_score_side` gives it) nor the log's own state (``log_t``/
    ``log_b``: its last recorded total and bags, the true values where a hand records none;
    updated here).  ``expected`` is the true-state value.  ``check_before``: check
    score_before/bags_before; ``check_score``: check points, total and bags.  ``taken_off``: the
    official tricks per seat (after the renege penalty); ``lg``: scratch float64[9]."""
    if score_before[i, 0] != NOT_RECORDED:
        for sd in range(2):
            v = np.int64(score_before[i, sd])
            if check_before and not first and v != true_t[sd] and v != log_t[sd]:
                pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_SCORE_BEFORE, v, np.rint(true_t[sd]))
            log_t[sd] = v
    if bags_before[i, 0] != NOT_RECORDED:
        for sd in range(2):
            v = np.int64(bags_before[i, sd])
            if check_before and not first and v != true_b[sd] and v != log_b[sd]:
                pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_BAGS_BEFORE, v, true_b[sd])
            log_b[sd] = v
    if not check_score:
        return pos
    for sd in range(2):
        t_points, t_total, t_bags = true_res[sd, 6], true_res[sd, 7], np.int64(true_res[sd, 8])
        lt, lb = log_t[sd], log_b[sd]
        if lt == true_t[sd] and lb == true_b[sd]:
            for k in range(9):
                lg[k] = true_res[sd, k]
        else:
            res = _score_side(opt, bid, sd, taken_off, lt, lb)
            lg[0], lg[1], lg[2], lg[3], lg[4] = res[0], res[1], res[2], res[3], res[4]
            lg[5], lg[6], lg[7], lg[8] = res[5], res[6], res[7], res[8]
        rp = np.int64(score_points[i, sd])
        rt = np.int64(score_total[i, sd])
        rb = np.int64(score_bags[i, sd])
        if rp != NOT_RECORDED and rp != t_points and rp != lg[6]:
            pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_POINTS, rp, np.rint(t_points))
        if rt != NOT_RECORDED and rt != t_total and rt != lt + t_points and rt != lt + lg[6]:
            pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_TOTAL, rt, np.rint(t_total))
        if rb != NOT_RECORDED and rb != t_bags and rb != lg[8]:
            pos = _emit(F, pos, write, i, SCORE_MISMATCH, 0, NO_SEAT, NO_CARD, sd, F_BAGS, rb, t_bags)
        # the log's own state after the hand: what it recorded, the true value where it recorded none
        log_t[sd] = rt if rt != NOT_RECORDED else t_total
        log_b[sd] = rb if rb != NOT_RECORDED else t_bags
    return pos


# --- the games -----------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", no_cfunc_wrapper=True)
def run_games(
    # HandsIn, then RulesIn, then CoreOut, field by field (checked below)
    p_game_start, p_game_ruleset, p_game_rules_flag, p_hand_no, p_dealer, p_has_deal, p_deal, p_deal_len, p_n_tricks,
    p_trick_leader, p_trick_len, p_trick_cards, p_trick_winner, p_n_bids, p_bid_seat, p_bid_value, p_bid_nil,
    p_bid_blind, p_bid_whole, p_has_taken, p_taken, p_score_points, p_score_total, p_score_bags, p_score_before,
    p_bags_before, p_winner, p_overflow,
    r_opt, r_play_suit, r_play_power, r_deck_mask, r_suit_mask,
    o_t_leader, o_t_winner, o_t_led, o_t_broken, o_taken, o_taken_score, o_hs_contract, o_hs_tricks, o_hs_made,
    o_hs_bags_hand, o_hs_penalty, o_hs_nil, o_hs_points, o_hs_total, o_hs_bags, o_n_find, o_log_total, o_log_bags,
    o_dealer_should, o_g_total, o_g_winner, o_g_ended, o_g_ended_row, o_g_nfind, o_g_reference,
    F, games, offsets, write, wf, wi, wu,
):
    """Check each game of ``games`` (``checker.check_game``): every hand replayed and scored in hand
    order, missing hands, the dealer rotation, the recorded scores against the true state and the
    log's own, the end of the game and the recorded winner.  Fills the per-hand and per-game outputs;
    game ``games[k]`` writes its findings from row ``offsets[k]`` of ``F`` when ``write``, else only
    counts them (``o_g_nfind``).  ``wf``/``wi``/``wu``: scratch arrays (:func:`alloc_work`), one set per call.

    Releases the GIL: :func:`run_core` runs slices of the games on several threads at once (games
    share no state; each writes only its own rows).  The loop body is the whole game check (not a
    function of its own): every level of jitted calls compiles the code below it again.
    """
    # views numba does not reference-count (parsers.numba_views): the helpers get them at every hand,
    # and counted arrays cost an atomic increment and decrement each per call (0.59M -> 0.70M hands/CPU-s)
    p_deal = _unmanaged(p_deal)
    p_deal_len = _unmanaged(p_deal_len)
    p_trick_leader = _unmanaged(p_trick_leader)
    p_trick_len = _unmanaged(p_trick_len)
    p_trick_cards = _unmanaged(p_trick_cards)
    p_trick_winner = _unmanaged(p_trick_winner)
    p_bid_seat = _unmanaged(p_bid_seat)
    p_bid_value = _unmanaged(p_bid_value)
    p_bid_nil = _unmanaged(p_bid_nil)
    p_bid_blind = _unmanaged(p_bid_blind)
    p_bid_whole = _unmanaged(p_bid_whole)
    p_taken = _unmanaged(p_taken)
    p_score_points = _unmanaged(p_score_points)
    p_score_total = _unmanaged(p_score_total)
    p_score_bags = _unmanaged(p_score_bags)
    p_score_before = _unmanaged(p_score_before)
    p_bags_before = _unmanaged(p_bags_before)
    r_opt = _unmanaged(r_opt)
    r_play_suit = _unmanaged(r_play_suit)
    r_play_power = _unmanaged(r_play_power)
    r_deck_mask = _unmanaged(r_deck_mask)
    r_suit_mask = _unmanaged(r_suit_mask)
    o_t_leader = _unmanaged(o_t_leader)
    o_t_winner = _unmanaged(o_t_winner)
    o_t_led = _unmanaged(o_t_led)
    o_t_broken = _unmanaged(o_t_broken)
    F = _unmanaged(F)
    wf = _unmanaged(wf)
    wi = _unmanaged(wi)
    wu = _unmanaged(wu)
    # views of the scratch arrays (float64, int64, uint64), laid out as WORK_SPEC lists them
    tot = wf[0:4].reshape((2, 2))
    log_t = wf[4:6]
    final = wf[6:8]
    bid = wf[8:24].reshape((4, 4))
    before_t = wf[24:26]
    true_res = wf[26:44].reshape((2, 9))
    lg = wf[44:53]
    bags = wi[0:4].reshape((2, 2))
    log_b = wi[4:6]
    eff = wi[6:10]
    reneges = wi[10:74]
    taken = wi[74:78]
    taken_s = wi[78:82]
    taken_p = wi[82:86]
    own_totals = wi[86:88]
    before_b = wi[88:90]
    pc = wi[90:142].reshape((13, 4))
    pl = wi[142:155]
    unknown = wi[155:159]
    later = wu[0:56].reshape((14, 4))
    hold = wu[56:60]
    held0 = wu[60:64]
    for kg in range(games.shape[0]):
        g = np.int64(games[kg])
        pos = np.int64(offsets[kg])
        r = np.int64(p_game_ruleset[g])
        a, b = np.int64(p_game_start[g]), np.int64(p_game_start[g + 1])
        beyond = False  # a hand the core cannot check: the reference checks the game
        for i in range(a, b):
            beyond |= p_overflow[i]
        opt = r_opt[r]
        suit, power, deck, suit_mask = r_play_suit[r], r_play_power[r], r_deck_mask[r], r_suit_mask[r]
        k_pen = opt[O_RENEGE_PENALTY_TRICKS]
        fixed = opt[O_DEALER]
        tot[:] = 0.0
        bags[:] = 0
        if p_score_before[a, 0] != NOT_RECORDED:
            for sd in range(2):
                tot[0, sd] = tot[1, sd] = p_score_before[a, sd]
        if p_bags_before[a, 0] != NOT_RECORDED:
            for sd in range(2):
                bags[0, sd] = bags[1, sd] = p_bags_before[a, sd]
        off = 1 if k_pen > 0 else 0  # the official chain
        for sd in range(2):
            log_t[sd] = tot[off, sd]
            log_b[sd] = bags[off, sd]
        winner = NO_SEAT
        ended = NO_HAND
        ended_row = -1
        for i in range(a, b if not beyond else a):
            start = pos
            h = np.int64(p_hand_no[i])
            d = np.int64(p_dealer[i])
            for sd in range(2):
                o_log_total[i, sd] = log_t[sd]
                o_log_bags[i, sd] = log_b[sd]
            # HAND_MISSING: a gap in the hand numbers; the true state goes on from this hand's
            # recorded score_before where it has one, else its recorded score is not checked
            missing = i > a and h > np.int64(p_hand_no[i - 1]) + 1
            has_before = p_score_before[i, 0] != NOT_RECORDED
            if missing:
                pos = _emit(F, pos, write, i, HAND_MISSING, 0, NO_SEAT, NO_CARD, NO_SEAT, NO_FIELD, NAN, NAN)
                if has_before:
                    for k in range(2):
                        for sd in range(2):
                            tot[k, sd] = p_score_before[i, sd]
                            if p_bags_before[i, 0] != NOT_RECORDED:
                                bags[k, sd] = p_bags_before[i, sd]
                    for sd in range(2):
                        log_t[sd] = tot[off, sd]
                        log_b[sd] = bags[off, sd]
            check_score = not missing or has_before
            # DEALER_OUT_OF_ROTATION (``should``: the seat that should have dealt this hand)
            should = d
            if fixed != NO_SEAT:
                if d != fixed:
                    pos = _emit(F, pos, write, i, DEALER_OUT_OF_ROTATION, 0, d, NO_CARD, d & 1, F_DEALER, d, fixed)
            elif i > a and h > p_hand_no[i - 1]:
                # left of the previous dealer, or of the seat that should have dealt the previous hand
                step = h - np.int64(p_hand_no[i - 1])
                exp = (np.int64(p_dealer[i - 1]) + step) % 4
                back = (np.int64(o_dealer_should[i - 1]) + step) % 4
                if d != exp and d != back:
                    pos = _emit(F, pos, write, i, DEALER_OUT_OF_ROTATION, 0, d, NO_CARD, d & 1, F_DEALER, d, exp)
                    should = exp  # (checker.GameRun: the memory stays one hand deep)
            o_dealer_should[i] = should
            # PLAYED_AFTER_GAME_END
            if winner != NO_SEAT:
                pos = _emit(F, pos, write, i, PLAYED_AFTER_GAME_END, 0, NO_SEAT, NO_CARD, NO_SEAT, NO_FIELD, NAN, NAN)
            for sd in range(2):
                before_t[sd] = tot[off, sd]
                before_b[sd] = bags[off, sd]
            # the totals the blind-bid conditions look at: the true ones, or after a missing hand
            # the ones the record shows (its totals less its points), else none
            scores_known = check_score or not check_score  # a bool, not a literal (see two_clubs)
            if check_score:
                for sd in range(2):
                    own_totals[sd] = np.int64(np.rint(tot[off, sd]))
            else:
                for sd in range(2):
                    if p_score_total[i, sd] == NOT_RECORDED or p_score_points[i, sd] == NOT_RECORDED:
                        scores_known = False
                for sd in range(2):
                    own_totals[sd] = np.int64(p_score_total[i, sd]) - np.int64(p_score_points[i, sd]) if scores_known else 0
            # the hand: deal, bids, play, tricks taken
            if p_has_deal[i]:
                pos, dup = _check_deal(p_deal, p_deal_len, i, deck, F, pos, write, held0)
                if dup:
                    beyond = True
                    break
            pos = _check_bids(p_bid_seat, p_bid_value, p_bid_nil, p_bid_blind, p_bid_whole, np.int64(p_n_bids[i]),
                              d, i, opt, own_totals, scores_known, eff, F, pos, write)
            for s in range(4):
                j = eff[s]
                if j < 0:
                    bid[s, 0] = bid[s, 1] = bid[s, 2] = bid[s, 3] = 0.0
                else:
                    bid[s, 0] = 1.0
                    bid[s, 1] = p_bid_value[i, j]
                    bid[s, 2] = 1.0 if p_bid_nil[i, j] or p_bid_value[i, j] == 0.0 else 0.0
                    bid[s, 3] = 1.0 if p_bid_blind[i, j] else 0.0
            nt = np.int64(p_n_tricks[i])
            pos, nren, complete, ends_short, short_trick, short_seat = _replay(
                i, nt, d, p_trick_leader, p_trick_len, p_trick_cards, p_trick_winner, p_has_deal[i],
                opt, suit, power, deck, suit_mask, o_t_leader, o_t_winner, o_t_led, o_t_broken,
                taken, F, pos, write, reneges, pc, pl, later, hold, held0, unknown,
            )
            has_taken = p_has_taken[i]
            pos = _check_taken(i, nt, complete, ends_short, short_trick, short_seat, has_taken, p_taken, taken, taken_s, F, pos, write)
            for s in range(4):
                o_taken[i, s] = taken[s]
                o_taken_score[i, s] = taken_s[s]
            if not (complete or has_taken) and unknown[0] + unknown[1] + unknown[2] + unknown[3] > 0:
                # a gap left a trick without a winner: the tricks each seat took are unknown (RULES.md
                # section 7); a hand that only stops early is scored on the tricks played (section 5)
                check_score = False
            # the score chains: as played, and after the renege penalty (the official one when there
            # is one); a hand whose score is not checked moves them on to its recorded total and bags
            for k in range(1 + off):
                if k == 1:
                    _penalty_taken(bid, taken_s, reneges, nren, k_pen, taken_p)
                else:
                    for s in range(4):
                        taken_p[s] = taken_s[s]
                for sd in range(2):
                    res = _score_side(opt, bid, sd, taken_p, tot[k, sd], bags[k, sd])
                    if k == off:
                        true_res[sd, 0], true_res[sd, 1], true_res[sd, 2], true_res[sd, 3] = res[0], res[1], res[2], res[3]
                        true_res[sd, 4], true_res[sd, 5], true_res[sd, 6], true_res[sd, 7] = res[4], res[5], res[6], res[7]
                        true_res[sd, 8] = res[8]
                    o_hs_contract[i, k, sd] = res[0]
                    o_hs_tricks[i, k, sd] = res[1]
                    o_hs_made[i, k, sd] = res[2]
                    o_hs_bags_hand[i, k, sd] = res[3]
                    o_hs_nil[i, k, sd] = res[4]
                    o_hs_penalty[i, k, sd] = res[5]
                    o_hs_points[i, k, sd] = res[6]
                    t_after, b_after = res[7], res[8]
                    if not check_score:
                        if p_score_total[i, sd] != NOT_RECORDED:
                            t_after = p_score_total[i, sd]
                        if p_score_bags[i, sd] != NOT_RECORDED:
                            b_after = p_score_bags[i, sd]
                    o_hs_total[i, k, sd] = tot[k, sd] = t_after
                    o_hs_bags[i, k, sd] = bags[k, sd] = b_after
            if winner == NO_SEAT:
                w = _winner_of(opt, tot[off, 0], tot[off, 1])
                if w != NO_SEAT:
                    winner = w
                    ended = h
                    ended_row = i
                    final[0], final[1] = tot[off, 0], tot[off, 1]
            pos = _check_scores(i, i == a, not missing, check_score, p_score_points, p_score_total, p_score_bags,
                                p_score_before, p_bags_before, opt, bid, taken_p, before_t, before_b, true_res,
                                log_t, log_b, lg, F, pos, write)
            if not check_score:  # the log's own state is the true one again
                for sd in range(2):
                    log_t[sd] = tot[off, sd]
                    log_b[sd] = bags[off, sd]
            # GAME_RESULT_MISMATCH
            rw = np.int64(p_winner[i])
            if rw != NO_SEAT:
                if winner == NO_SEAT:
                    pos = _emit(F, pos, write, i, GAME_RESULT_MISMATCH, 0, NO_SEAT, NO_CARD, rw, F_WINNER, rw, NAN)
                elif winner != rw:
                    pos = _emit(F, pos, write, i, GAME_RESULT_MISMATCH, 0, NO_SEAT, NO_CARD, rw, F_WINNER, rw, winner)
            o_n_find[i] = pos - start
        if beyond:
            o_g_reference[g] = True
            o_g_nfind[g] = 0
            continue
        if winner != NO_SEAT:
            o_g_total[g, 0], o_g_total[g, 1] = final[0], final[1]
        else:
            o_g_total[g, 0], o_g_total[g, 1] = tot[off, 0], tot[off, 1]
        o_g_winner[g] = winner
        o_g_ended[g] = ended
        o_g_ended_row[g] = ended_row
        o_g_nfind[g] = pos - offsets[kg]


_RUN_GAMES_ARGS = (
    [f"p_{f}" for f in HandsIn._fields] + [f"r_{f}" for f in RulesIn._fields] + [f"o_{f}" for f in CoreOut._fields]
    + ["F", "games", "offsets", "write", "wf", "wi", "wu"]
)
if list(run_games.py_func.__code__.co_varnames[: run_games.py_func.__code__.co_argcount]) != _RUN_GAMES_ARGS:
    raise RuntimeError("run_games: its parameters must be HandsIn, RulesIn and CoreOut field by field")


def _threads() -> int:
    import numba

    return max(1, int(numba.get_num_threads()))


SLICES_PER_THREAD = 4
"""Slices of each call's games per thread (taken in turn by the threads that are free)."""


def _parallel(P, R, Out, F, games: np.ndarray, offsets: np.ndarray, write: bool, threads: int) -> None:
    """``run_games`` over ``games`` on ``threads`` threads, in slices of about equal hand counts."""
    if threads <= 1 or len(games) < 2 * threads:
        run_games(*P, *R, *Out, F, games, offsets, write, *alloc_work())
        return
    from concurrent.futures import ThreadPoolExecutor

    sizes = (P.game_start[games + 1] - P.game_start[games]).astype(np.int64)
    parts = max(threads * SLICES_PER_THREAD, 1)
    cuts = np.searchsorted(np.cumsum(sizes), np.linspace(0, sizes.sum(), parts + 1)[1:-1])
    bounds = [0, *sorted(set(int(c) for c in cuts)), len(games)]
    with ThreadPoolExecutor(threads) as pool:
        jobs = [
            pool.submit(run_games, *P, *R, *Out, F, games[lo:hi], offsets[lo:hi], write, *alloc_work())
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

