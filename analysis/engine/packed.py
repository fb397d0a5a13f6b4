"""The packed layout: N hands of G games as fixed-width numpy arrays, the input of the compiled core.

:class:`PackedHands` holds every recorded fact of a hand that the rules look at (RULES.md
sections 1-7), one row per hand in game order, hands of a game consecutive and sorted by hand
number (stable, as :func:`~spadework.analysis.engine.checker.check_game` sorts them).  The
compiled kernels (:mod:`spadework.analysis.engine.kernels`) read only these arrays and the
:class:`RulesetArrays` table; the storage layer fills the same arrays from DuckDB through Arrow,
and :func:`pack_records` fills them from :class:`~spadework.parsers.model.HandRecord` objects
(the reference route, used by the tests).

Encoding: card ids, seat ids and side ids are those of :mod:`spadework.parsers.encoding`
(``NO_CARD`` = 255 pads card arrays, ``NO_SEAT`` = 255 marks "no seat/side").  Recorded whole
numbers (tricks taken, points, totals, bags, score_before, bags_before) are ``int32`` with
``NOT_RECORDED`` (-2**31) for "not recorded"; a recorded value outside ``int32`` (beyond
+/-2**31-1) makes the hand ``overflow``.

Shapes (N hands, G games, T = ``MAX_TRICKS`` = 13, B = ``MAX_BIDS`` = 8):

Per game
    ``game_start``  int64[G+1]  hands of game g are rows ``game_start[g]:game_start[g+1]``.
    ``game_ruleset`` int32[G]   row of the game's ruleset in the :class:`RulesetArrays` table.
    ``game_rules_flag`` uint8[G] ``RULES_FLAG_INVALID`` (1) when the first hand's ``rules`` cannot
                                be read (the game is checked under ``standard``), ``RULES_FLAG_MIXED``
                                (2) when a later hand names other rules (RULES_INVALID / RULES_MIXED
                                findings; the reference writes those games).
    ``game_ids``    object[G]   the game ids (str).
Per hand
    ``hand_no``     int32[N]    hand number as recorded.
    ``dealer``      uint8[N]    seat id.
    ``has_deal``    bool[N]     a deal is recorded.
    ``deal``        uint8[N,4,16] each seat's dealt cards (seat order N E S W), ``NO_CARD`` padded
                                (16 = ``MAX_DEALT``: room for a wrong deal of 14 or 15 cards a seat).
    ``deal_len``    uint8[N,4]  cards dealt to each seat (0..16; more than 16 is ``overflow``).
    ``n_tricks``    uint8[N]    tricks recorded (0..13), a trick with no cards included.
    ``trick_leader`` uint8[N,13] the leader as recorded (``NO_SEAT`` past ``n_tricks``).
    ``trick_len``   uint8[N,13] cards recorded in each trick (0..4): short tricks are representable.
    ``trick_cards`` uint8[N,13,4] cards in play order from the leader, ``NO_CARD`` padded.
    ``trick_winner`` uint8[N,13] the winner the log recorded, ``NO_SEAT`` when none.
    ``n_bids``      uint8[N]    bids recorded (0..8), in the order made.
    ``bid_seat``    uint8[N,8]  seat of each bid.
    ``bid_value``   float64[N,8] the value as recorded (0 for nil; 4.5 or 14 kept as recorded).
    ``bid_nil``     bool[N,8]   marked nil (a value of 0 also counts as nil, RULES.md section 3).
    ``bid_blind``   bool[N,8]   marked blind.
    ``bid_whole``   bool[N,8]   the value is a whole number 1..13 (not a bool): the bids RULES.md
                                section 3 has (``replay._valid_number``).
    ``has_taken``   bool[N]     a tricks-taken record exists (at least one seat recorded).
    ``taken``       int32[N,4]  recorded tricks taken per seat, ``NOT_RECORDED`` when not recorded.
    ``score_points``, ``score_total``, ``score_bags`` int32[N,2]  recorded points this hand, running
                                total and bag count after it per side (NS, EW), ``NOT_RECORDED``.
    ``score_before``, ``bags_before`` int32[N,2]  recorded state before the hand (both sides, or
                                ``NOT_RECORDED`` in both).
    ``winner``      uint8[N]    recorded winner side id, ``NO_SEAT`` when none.
    ``overflow``    bool[N]     the fixed shape cannot hold this hand (more than 13 tricks or 16 cards
                                dealt to a seat, a trick of more than 4 cards, more than 8 bids, a card code
                                that is not one of the 54, a recorded number outside int32, a bid
                                value that is not finite or beyond +/-1e6, a tricks-taken record
                                with every seat empty).  The core does not check such a hand: the
                                pipeline sends its game to the reference checker.  Parsers refuse
                                most of these, so it is rare; the rows it gives are exact because
                                the reference writes them.

Public API (stable; the storage branch builds on it): :class:`PackedHands`, :func:`pack_records`,
:class:`RulesetArrays`, :func:`pack_rulesets`, :func:`game_ruleset`, the constants in
``__all__``.  Changes are noted here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from spadework.analysis.engine.rules import Ruleset, fallback_ruleset, get_ruleset, rules_key, ruleset_name
from spadework.parsers.encoding import CARD_ID, NO_CARD, NO_SEAT, deck_arrays
from spadework.parsers.model import HandRecord

MAX_TRICKS = 13
"""Tricks per hand the layout holds."""
MAX_BIDS = 8
"""Bids per hand the layout holds (four seats, a second bid or two)."""
MAX_DEALT = 16
"""Cards per seat the deal array holds (a wrong deal of up to 16 cards a seat is representable)."""
NOT_RECORDED = -(2**31)
"""``int32`` sentinel for a whole number the log did not record."""
INT32_LIMIT = 2**31 - 1
BID_LIMIT = 1e6
"""Bid values beyond this in size make the hand ``overflow`` (their scores would leave 32 bits)."""

RULES_FLAG_INVALID = 1
RULES_FLAG_MIXED = 2

# --- the ruleset table -----------------------------------------------------------------------------

OPTION_COLUMNS: tuple[str, ...] = (
    "target",
    "nil",
    "nil_points",
    "blind_nil_points",
    "blind_nil_mode",
    "blind_nil_behind_by",
    "blind_bids",
    "blind_bid_values",
    "blind_bid_has_points",
    "blind_bid_points",
    "blind_bid_has_behind_by",
    "blind_bid_behind_by",
    "blind_partner_bids",
    "has_min_side_bid",
    "min_side_bid",
    "has_max_side_bid",
    "max_side_bid",
    "failed_nil_tricks",
    "bag_limit",
    "bag_penalty",
    "bag_points",
    "ten_for_two_hundred",
    "has_losing_score",
    "losing_score",
    "first_lead",
    "spades_lead_any_time",
    "renege_penalty_tricks",
    "dealer",
)
"""Columns of :attr:`RulesetArrays.opt`, in order.  Every option of RULES.md section 5 and the extra
keys of :mod:`~spadework.analysis.engine.rules` (``max_side_bid``, ``dealer``, the keys of
``blind_bids``) as whole numbers:

- booleans are 0/1; ``has_X`` says whether an optional value is set (``X`` is 0 when not);
- ``blind_nil_mode``: :data:`BLIND_NIL_NEVER` 0, :data:`BLIND_NIL_ALWAYS` 1,
  :data:`BLIND_NIL_BEHIND` 2 (``blind_nil_behind_by`` points);
- ``blind_bid_values``: bit ``v`` set for each blind numeric bid value ``v`` (1..13);
- ``failed_nil_tricks``: ``side`` 0, ``bags_only`` 1, ``ignored`` 2 (``FAILED_NIL_*``);
- ``first_lead``: ``left_of_dealer`` 0, ``two_of_clubs`` 1;
- ``dealer``: the seat id that deals every hand, ``NO_SEAT`` when the deal rotates.
"""
O = {name: i for i, name in enumerate(OPTION_COLUMNS)}
"""Option name -> column of ``RulesetArrays.opt``."""

BLIND_NIL_NEVER, BLIND_NIL_ALWAYS, BLIND_NIL_BEHIND = 0, 1, 2
FAILED_NIL_SIDE, FAILED_NIL_BAGS_ONLY, FAILED_NIL_IGNORED = 0, 1, 2
FIRST_LEAD_LEFT, FIRST_LEAD_TWO_OF_CLUBS = 0, 1


@dataclass(frozen=True)
class RulesetArrays:
    """R rulesets as data for the kernels (rules are data, never forks of a kernel).

    ``rulesets``: the :class:`~spadework.analysis.engine.rules.Ruleset` of each row;
    ``names``: :func:`~spadework.analysis.engine.rules.ruleset_name` of each (the ``games.rules`` text);
    ``opt``: int64[R, len(OPTION_COLUMNS)] (see :data:`OPTION_COLUMNS`);
    ``play_suit``: int8[R, 54] the suit every card id plays as (0..3 S H D C, 4 = a joker outside
    the trump order; see ``parsers.encoding.DeckArrays``); ``play_power``: int16[R, 54] (trumps
    above 1000); ``deck_mask``: uint64[R] the deck's cards as bits; ``two_clubs``: the card id of 2C.
    """

    rulesets: tuple[Ruleset, ...]
    names: tuple[str, ...]
    opt: np.ndarray
    play_suit: np.ndarray
    play_power: np.ndarray
    deck_mask: np.ndarray

    def __len__(self) -> int:
        return len(self.rulesets)

    def index(self, rs: Ruleset) -> int:
        """Row of ``rs``.  Raises ``ValueError`` when it is not in the table."""
        return self.rulesets.index(rs)


def _option_row(rs: Ruleset) -> list[int]:
    bb = rs.blind_bids
    if rs.blind_nil == "never":
        mode, behind = BLIND_NIL_NEVER, 0
    elif rs.blind_nil == "always":
        mode, behind = BLIND_NIL_ALWAYS, 0
    else:
        mode, behind = BLIND_NIL_BEHIND, int(rs.blind_nil["behind_by"])  # type: ignore[index]
    values = 0
    for v in (bb or {}).get("values", ()):
        values |= 1 << int(v)
    row = {
        "target": rs.target,
        "nil": int(rs.nil),
        "nil_points": rs.nil_points,
        "blind_nil_points": rs.blind_nil_points,
        "blind_nil_mode": mode,
        "blind_nil_behind_by": behind,
        "blind_bids": int(bb is not None),
        "blind_bid_values": values,
        "blind_bid_has_points": int(bb is not None and "points" in bb),
        "blind_bid_points": int(bb.get("points", 0)) if bb else 0,
        "blind_bid_has_behind_by": int(bb is not None and bb.get("behind_by") is not None),
        "blind_bid_behind_by": int(bb.get("behind_by") or 0) if bb else 0,
        "blind_partner_bids": int(rs.blind_partner_bids),
        "has_min_side_bid": int(rs.min_side_bid is not None),
        "min_side_bid": rs.min_side_bid or 0,
        "has_max_side_bid": int(rs.max_side_bid is not None),
        "max_side_bid": rs.max_side_bid or 0,
        "failed_nil_tricks": ("side", "bags_only", "ignored").index(rs.failed_nil_tricks),
        "bag_limit": rs.bag_limit,
        "bag_penalty": rs.bag_penalty,
        "bag_points": rs.bag_points,
        "ten_for_two_hundred": int(rs.ten_for_two_hundred),
        "has_losing_score": int(rs.losing_score is not None),
        "losing_score": rs.losing_score or 0,
        "first_lead": ("left_of_dealer", "two_of_clubs").index(rs.first_lead),
        "spades_lead_any_time": int(rs.spades_lead_any_time),
        "renege_penalty_tricks": rs.renege_penalty_tricks,
        "dealer": NO_SEAT if rs.fixed_dealer is None else int(rs.fixed_dealer),
    }
    assert set(row) == set(OPTION_COLUMNS)
    return [int(row[c]) for c in OPTION_COLUMNS]


def pack_rulesets(rulesets: Sequence[Ruleset]) -> RulesetArrays:
    """The kernels' table of ``rulesets`` (in the order given; repeats are kept)."""
    rs = tuple(rulesets)
    r = len(rs)
    opt = np.zeros((r, len(OPTION_COLUMNS)), dtype=np.int64)
    suit = np.zeros((r, len(CARD_ID)), dtype=np.int8)
    power = np.zeros((r, len(CARD_ID)), dtype=np.int16)
    mask = np.zeros(r, dtype=np.uint64)
    for i, x in enumerate(rs):
        opt[i] = _option_row(x)
        d = deck_arrays(x.deck)
        suit[i] = d.play_suit
        power[i] = d.play_power
        mask[i] = np.uint64(d.mask)
    return RulesetArrays(rs, tuple(ruleset_name(x) for x in rs), opt, suit, power, mask)


def game_ruleset(rules_values: Sequence[Any], override: Ruleset | None = None) -> tuple[Ruleset, int]:
    """The ruleset a game is checked under and its ``game_rules_flag`` (as ``check_game`` decides).

    ``rules_values``: each hand's ``rules`` value in hand order (a preset name, the text
    :func:`~spadework.analysis.engine.rules.ruleset_name` writes, or a dict); ``override``: the
    CLI's ``--rules`` (wins, and no flag is raised).  The game's ruleset is its first hand's;
    unreadable rules give ``standard`` and ``RULES_FLAG_INVALID``; a later hand naming other rules
    sets ``RULES_FLAG_MIXED``.
    """
    if override is not None:
        return override, 0
    key0, rs0 = rules_key(rules_values[0])
    flag = 0
    if rs0 is None:
        flag |= RULES_FLAG_INVALID
        rs0 = fallback_ruleset(rules_values[0])
    for v in rules_values[1:]:
        if v is rules_values[0] or v == rules_values[0]:
            continue
        if rules_key(v)[0] != key0:
            flag |= RULES_FLAG_MIXED
            break
    return rs0, flag


# --- the hands -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackedHands:
    """N hands of G games in game order, as fixed-width arrays (see the module docstring for every
    array's shape, dtype and meaning).  Build with :func:`pack_records` or :meth:`empty` + fill."""

    game_start: np.ndarray
    game_ruleset: np.ndarray
    game_rules_flag: np.ndarray
    game_ids: np.ndarray
    hand_no: np.ndarray
    dealer: np.ndarray
    has_deal: np.ndarray
    deal: np.ndarray
    deal_len: np.ndarray
    n_tricks: np.ndarray
    trick_leader: np.ndarray
    trick_len: np.ndarray
    trick_cards: np.ndarray
    trick_winner: np.ndarray
    n_bids: np.ndarray
    bid_seat: np.ndarray
    bid_value: np.ndarray
    bid_nil: np.ndarray
    bid_blind: np.ndarray
    bid_whole: np.ndarray
    has_taken: np.ndarray
    taken: np.ndarray
    score_points: np.ndarray
    score_total: np.ndarray
    score_bags: np.ndarray
    score_before: np.ndarray
    bags_before: np.ndarray
    winner: np.ndarray
    overflow: np.ndarray

    @property
    def n_hands(self) -> int:
        return int(self.hand_no.shape[0])

    @property
    def n_games(self) -> int:
        return int(self.game_ruleset.shape[0])

    @classmethod
    def empty(cls, n_hands: int, n_games: int) -> "PackedHands":
        """Arrays of the right shapes and dtypes, filled with "nothing recorded"
        (``NO_CARD``, ``NO_SEAT``, ``NOT_RECORDED``, zeros, ``False``); ``game_ids`` empty strings."""
        n, g = n_hands, n_games
        kw: dict[str, np.ndarray] = {}
        for name, (shape, dtype, fill) in _SPEC.items():
            dims = tuple({"N": n, "G": g, "G1": g + 1}.get(d, d) for d in shape)  # type: ignore[misc]
            kw[name] = np.full(dims, fill, dtype=dtype)
        kw["game_ids"] = np.array([""] * g, dtype=object)
        return cls(**kw)

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first array whose shape or dtype is not the layout's."""
        n, g = self.n_hands, self.n_games
        for name, (shape, dtype, _) in _SPEC.items():
            a = getattr(self, name)
            dims = tuple({"N": n, "G": g, "G1": g + 1}.get(d, d) for d in shape)  # type: ignore[misc]
            if not isinstance(a, np.ndarray) or a.shape != dims or a.dtype != np.dtype(dtype):
                got = (getattr(a, "shape", None), getattr(a, "dtype", None))
                raise ValueError(f"PackedHands.{name}: expected shape {dims} dtype {np.dtype(dtype)}, got {got}")
        if len(self.game_ids) != g:
            raise ValueError(f"PackedHands.game_ids: expected {g} ids, got {len(self.game_ids)}")
        if self.game_start[0] != 0 or self.game_start[-1] != n or np.any(np.diff(self.game_start) < 1):
            raise ValueError("PackedHands.game_start: must rise from 0 to n_hands, each game at least one hand")

    def game_of_hand(self) -> np.ndarray:
        """int64[N]: the game index of each hand."""
        return np.repeat(np.arange(self.n_games, dtype=np.int64), np.diff(self.game_start))


_SPEC: dict[str, tuple[tuple, Any, Any]] = {
    "game_start": (("G1",), np.int64, 0),
    "game_ruleset": (("G",), np.int32, 0),
    "game_rules_flag": (("G",), np.uint8, 0),
    "hand_no": (("N",), np.int32, 0),
    "dealer": (("N",), np.uint8, 0),
    "has_deal": (("N",), np.bool_, False),
    "deal": (("N", 4, MAX_DEALT), np.uint8, NO_CARD),
    "deal_len": (("N", 4), np.uint8, 0),
    "n_tricks": (("N",), np.uint8, 0),
    "trick_leader": (("N", MAX_TRICKS), np.uint8, NO_SEAT),
    "trick_len": (("N", MAX_TRICKS), np.uint8, 0),
    "trick_cards": (("N", MAX_TRICKS, 4), np.uint8, NO_CARD),
    "trick_winner": (("N", MAX_TRICKS), np.uint8, NO_SEAT),
    "n_bids": (("N",), np.uint8, 0),
    "bid_seat": (("N", MAX_BIDS), np.uint8, NO_SEAT),
    "bid_value": (("N", MAX_BIDS), np.float64, 0.0),
    "bid_nil": (("N", MAX_BIDS), np.bool_, False),
    "bid_blind": (("N", MAX_BIDS), np.bool_, False),
    "bid_whole": (("N", MAX_BIDS), np.bool_, False),
    "has_taken": (("N",), np.bool_, False),
    "taken": (("N", 4), np.int32, NOT_RECORDED),
    "score_points": (("N", 2), np.int32, NOT_RECORDED),
    "score_total": (("N", 2), np.int32, NOT_RECORDED),
    "score_bags": (("N", 2), np.int32, NOT_RECORDED),
    "score_before": (("N", 2), np.int32, NOT_RECORDED),
    "bags_before": (("N", 2), np.int32, NOT_RECORDED),
    "winner": (("N",), np.uint8, NO_SEAT),
    "overflow": (("N",), np.bool_, False),
}
assert set(_SPEC) | {"game_ids"} == {f.name for f in fields(PackedHands)}


def _whole_bid(value: Any) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and float(value).is_integer()
        and 1 <= value <= 13
    )


def _rec_int(x: Any) -> tuple[int, bool]:
    """(stored value, fits) for a recorded whole number or ``None``."""
    if x is None:
        return NOT_RECORDED, True
    if isinstance(x, bool) or not isinstance(x, int) or not -INT32_LIMIT <= x <= INT32_LIMIT:
        return NOT_RECORDED, False
    return x, True


def _fill_hand(p: PackedHands, i: int, rec: HandRecord) -> bool:
    """Write ``rec`` into row ``i``; False when the layout cannot hold it (``overflow``)."""
    ok = True
    h = rec.hand
    if isinstance(h, int) and -INT32_LIMIT <= h <= INT32_LIMIT:
        p.hand_no[i] = h
    else:
        ok = False
    p.dealer[i] = int(rec.dealer)
    if rec.deal is not None:
        p.has_deal[i] = True
        if len(rec.deal) != 4:
            return False
        for s, cards in enumerate(rec.deal):
            if len(cards) > MAX_DEALT:
                ok = False
                cards = cards[:MAX_DEALT]
            p.deal_len[i, s] = len(cards)
            for j, c in enumerate(cards):
                cid = CARD_ID.get(c)
                if cid is None:
                    return False
                p.deal[i, s, j] = cid
    tricks = rec.tricks or ()
    if len(tricks) > MAX_TRICKS:
        ok = False
        tricks = tricks[:MAX_TRICKS]
    p.n_tricks[i] = len(tricks)
    for t, tr in enumerate(tricks):
        p.trick_leader[i, t] = int(tr.leader)
        cards = tr.cards
        if len(cards) > 4:
            ok = False
            cards = cards[:4]
        p.trick_len[i, t] = len(cards)
        for j, c in enumerate(cards):
            cid = CARD_ID.get(c)
            if cid is None:
                return False
            p.trick_cards[i, t, j] = cid
        if tr.winner is not None:
            p.trick_winner[i, t] = int(tr.winner)
    bids = rec.bids
    if len(bids) > MAX_BIDS:
        ok = False
        bids = bids[:MAX_BIDS]
    p.n_bids[i] = len(bids)
    for j, b in enumerate(bids):
        p.bid_seat[i, j] = int(b.seat)
        v = b.value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or abs(v) > BID_LIMIT:
            ok = False
            v = 0
        p.bid_value[i, j] = float(v)
        if float(v) != v:  # an int float64 cannot hold exactly (cannot happen below BID_LIMIT)
            ok = False
        p.bid_nil[i, j] = bool(b.nil)
        p.bid_blind[i, j] = bool(b.blind)
        p.bid_whole[i, j] = _whole_bid(b.value)
    if rec.taken is not None:
        if len(rec.taken) != 4 or all(v is None for v in rec.taken):
            ok = False  # "recorded, but nothing in it": the reference treats it apart; rare
        else:
            p.has_taken[i] = True
            for s, v in enumerate(rec.taken):
                p.taken[i, s], fits = _rec_int(v)
                ok &= fits
    if rec.score is not None:
        for side, sc in enumerate(rec.score):
            for arr, v in ((p.score_points, sc.points), (p.score_total, sc.total), (p.score_bags, sc.bags)):
                arr[i, side], fits = _rec_int(v)
                ok &= fits
    for arr, pair in ((p.score_before, rec.score_before), (p.bags_before, rec.bags_before)):
        if pair is not None:
            for side in (0, 1):
                arr[i, side], fits = _rec_int(pair[side])
                ok &= fits and pair[side] is not None
    if rec.winner is not None:
        p.winner[i] = int(rec.winner)
    return ok


def _games(records: Iterable[HandRecord]) -> list[list[HandRecord]]:
    """Consecutive records of one game_id form a game (as ``iter_game_checks``), sorted by hand."""
    games: list[list[HandRecord]] = []
    last = object()
    for r in records:
        if not games or r.game_id != last:
            games.append([])
            last = r.game_id
        games[-1].append(r)
    return [sorted(g, key=lambda r: r.hand) for g in games]


@dataclass(frozen=True)
class Packed:
    """What :func:`pack_records` gives: the hands, the ruleset table their ``game_ruleset``
    indexes, and the records per game in packed order (for the reference's messages)."""

    hands: PackedHands
    rulesets: RulesetArrays
    records: list[list[HandRecord]]


def ranges(start: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The concatenated ``arange(start[k], start[k] + lens[k])`` (int64): e.g. the rows of the
    hands of some games, from their first rows and hand counts."""
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offs = np.repeat(np.cumsum(lens) - lens, lens)
    return np.repeat(start, lens) + np.arange(total, dtype=np.int64) - offs


def pack_records(records: Iterable[HandRecord], rules: Any = None) -> Packed:
    """Pack hand records (ordered by game: consecutive records of one ``game_id`` are a game) into
    :class:`PackedHands` and the :class:`RulesetArrays` of their rulesets.

    ``rules``: an override for every game (anything :func:`~spadework.analysis.engine.rules.get_ruleset`
    takes; the CLI's ``--rules``).  Each game's hands are sorted by hand number.  Raises
    :class:`~spadework.analysis.engine.rules.RulesError` for a bad ``rules``.
    """
    override = get_ruleset(rules) if rules is not None else None
    games = _games(records)
    n = sum(len(g) for g in games)
    p = PackedHands.empty(n, len(games))
    table: list[Ruleset] = []
    index: dict[Ruleset, int] = {}
    i = 0
    for g, recs in enumerate(games):
        p.game_start[g] = i
        p.game_ids[g] = recs[0].game_id
        rs, flag = game_ruleset([r.rules for r in recs], override)
        k = index.get(rs)
        if k is None:
            k = index[rs] = len(table)
            table.append(rs)
        p.game_ruleset[g] = k
        p.game_rules_flag[g] = flag
        for rec in recs:
            if not _fill_hand(p, i, rec):
                p.overflow[i] = True
            i += 1
    p.game_start[len(games)] = i
    return Packed(p, pack_rulesets(table), games)


__all__ = [
    "BLIND_NIL_ALWAYS",
    "BLIND_NIL_BEHIND",
    "BLIND_NIL_NEVER",
    "FAILED_NIL_BAGS_ONLY",
    "FAILED_NIL_IGNORED",
    "FAILED_NIL_SIDE",
    "FIRST_LEAD_LEFT",
    "FIRST_LEAD_TWO_OF_CLUBS",
    "MAX_BIDS",
    "MAX_DEALT",
    "MAX_TRICKS",
    "NOT_RECORDED",
    "O",
    "OPTION_COLUMNS",
    "Packed",
    "PackedHands",
    "RULES_FLAG_INVALID",
    "RULES_FLAG_MIXED",
    "RulesetArrays",
    "game_ruleset",
    "pack_records",
    "pack_rulesets",
    "ranges",
]
