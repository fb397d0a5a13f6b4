"""Fast checking in DuckDB SQL: clean games scored in SQL, every other game by the reference checker.

:func:`check_fast` fills the derived tables ``tricks``, ``violations``, ``hand_scores``
and ``games`` (TABLES.md) of a loaded database with exactly the rows
:func:`spadework.analysis.engine.checker.check_db` writes.  It works in three steps:

1. **Per hand, in SQL.**  Each hand's play, deal, recorded leaders and winners and bids
   are folded into a few 64-bit integers (:data:`PACKED_COLUMNS`: read from ``fast_hands``,
   which the fast loader keeps, or computed from the loaded tables with order-independent
   ``bit_or`` aggregates), and scalar SQL arithmetic replays the hand - no lists, no
   lambdas: trick winners (highest spade, else highest card of the suit led), tricks
   taken, and every rule RULES.md sections 1, 3 and 4 state: each card held by the seat
   that plays it (each seat plays exactly its dealt cards), follow suit (a seat that
   shows out of a suit must not play that suit in a later trick), no spade led on trick 1
   or before spades are broken while the leader holds another suit, each trick led by the
   winner of the one before, bids in turn from the dealer's left and valid, recorded
   winners and tricks taken as replayed.  Any doubt marks the hand as *flagged*.
2. **Per game, in SQL.**  One window pass scores the game: points per side and hand
   (contract, overtricks, nil and blind nil, failed-nil option, 10-for-200), bags
   accumulated from the starting state with the penalties ``floor(cumulative bags /
   limit)``, running totals, the hand that ends the game (first hand where a side has
   reached the target with unequal totals, or mercy).  A game is flagged when a hand is
   flagged, the dealer does not rotate, a recorded score, bag count,
   ``score_before``/``bags_before`` or winner differs from the recomputed one, a blind nil
   is not allowed by the recomputed totals, a hand follows the end, the rules differ
   between hands, or its ruleset is one the SQL does not implement (:func:`sql_supports`).
3. **Flagged games, by the reference.**  They are read back with
   :func:`spadework.parsers.db.iter_records` and checked by :func:`spadework.analysis.engine.checker.check_game`
   (in worker processes when there are many), so every finding and message is the
   reference's own.

The filter is conservative: a flagged game may well be clean, but a game that passes it
has no finding under the reference checker, and its derived rows are the ones the
reference computes (``tests/test_fastpath.py`` shows the two agree row for row).
Hands are processed in parts of :data:`HANDS_PER_PART` (whole games) so memory stays flat.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

import orjson
import pyarrow as pa

from spadework.analysis.engine.checker import CheckSummary, DerivedWriter, check_db, check_game, replace_derived_tables
from spadework.analysis.engine.findings import ErrorPolicy
from spadework.analysis.engine.rules import STANDARD, Ruleset, RulesError, get_ruleset, ruleset_name
from spadework.parsers.state import loaded_generation, mark_checked

TIMINGS: dict[str, float] | None = None
"""Set to a dict to collect seconds per step (wall clock)."""

WORKERS_MIN_GAMES = 400
"""Flagged games above which the reference check runs in worker processes."""

WORKER_BATCH_HANDS = 2000
"""Hands (whole games, so a batch may run over) sent to a worker process at a time."""

HANDS_PER_PART = 250_000
"""Hands checked per SQL pass (a pass holds its hands' facts in memory; games never straddle passes)."""

RANKS = "23456789TJQKA"
SUITS = "CDHS"  # suit index 3 = spades
SEATS = "NESW"


def _x(con, label: str, sql: str, params: Any = None):
    if TIMINGS is None:
        return con.execute(sql, params).fetchall() if params is not None else con.execute(sql).fetchall()
    import time

    t = time.perf_counter()
    out = con.execute(sql, params).fetchall() if params is not None else con.execute(sql).fetchall()
    TIMINGS[label] = TIMINGS.get(label, 0.0) + time.perf_counter() - t
    return out


# --- which rulesets the SQL implements ------------------------------------------------------------


def sql_supports(rs: Ruleset) -> bool:
    """True when the SQL path implements ``rs``: the standard 52-card deck with spades as trumps,
    the first trick led left of the dealer, the spades-broken rule, a rotating dealer, no blind
    numeric bids and no renege penalty (every other option - target, mercy, nil values,
    failed-nil tricks, bag limit, penalty and points, 10-for-200, side-bid limits - is a parameter)."""
    return (
        rs.deck.cards == STANDARD.deck.cards
        and rs.deck.trump_order == STANDARD.deck.trump_order
        and rs.first_lead == "left_of_dealer"
        and not rs.spades_lead_any_time
        and rs.renege_penalty_tricks == 0
        and rs.dealer is None
        and rs.blind_bids is None
    )


_FNT = {"side": 0, "bags_only": 1, "ignored": 2}

RULES_COLUMNS = {
    "rules": pa.string(),
    "rules_is_object": pa.bool_(),
    "rkey": pa.string(),
    "supported": pa.bool_(),
    "target": pa.int64(),
    "nil_ok": pa.bool_(),
    "nil_points": pa.int64(),
    "blind_nil_points": pa.int64(),
    "bn_mode": pa.int64(),
    "bn_behind": pa.int64(),
    "fnt": pa.int64(),
    "bag_limit": pa.int64(),
    "bag_penalty": pa.int64(),
    "bag_points": pa.int64(),
    "t4t": pa.bool_(),
    "losing_score": pa.int64(),
    "min_side_bid": pa.int64(),
    "max_side_bid": pa.int64(),
}


def _rules_rows(con, override: Ruleset | None) -> pa.Table:
    """One row per distinct (rules, rules_is_object) of ``hands``: its ruleset key and SQL parameters."""
    rows = _x(con, "rules", "SELECT DISTINCT rules, rules_is_object FROM hands")
    out: dict[str, list] = {k: [] for k in RULES_COLUMNS}
    for text, is_obj in rows:
        rs: Ruleset | None
        if override is not None:
            rs, key = override, ruleset_name(override)
        else:
            try:
                spec = orjson.loads(text) if is_obj else text
                rs = get_ruleset(spec)
                key = ruleset_name(rs)
            except (RulesError, orjson.JSONDecodeError, TypeError):
                rs, key = None, f"unreadable {text!r}"
        ok = rs is not None and sql_supports(rs)
        out["rules"].append(text)
        out["rules_is_object"].append(is_obj)
        out["rkey"].append(key)
        out["supported"].append(ok)
        r = rs if ok else STANDARD
        out["target"].append(r.target)
        out["nil_ok"].append(r.nil)
        out["nil_points"].append(r.nil_points)
        out["blind_nil_points"].append(r.blind_nil_points)
        if not r.nil or r.blind_nil == "never":
            out["bn_mode"].append(0)
            out["bn_behind"].append(None)
        elif r.blind_nil == "always":
            out["bn_mode"].append(1)
            out["bn_behind"].append(None)
        else:
            out["bn_mode"].append(2)
            out["bn_behind"].append(r.blind_nil["behind_by"])  # type: ignore[index]
        out["fnt"].append(_FNT[r.failed_nil_tricks])
        out["bag_limit"].append(r.bag_limit)
        out["bag_penalty"].append(r.bag_penalty)
        out["bag_points"].append(r.bag_points)
        out["t4t"].append(r.ten_for_two_hundred)
        out["losing_score"].append(r.losing_score)
        out["min_side_bid"].append(r.min_side_bid)
        out["max_side_bid"].append(r.max_side_bid)
    return pa.table(out, schema=pa.schema(list(RULES_COLUMNS.items())))


# --- step 1: one row per hand -------------------------------------------------------------------
#
# Every list a hand needs is folded into 64-bit integers by cheap order-independent aggregates
# (bit_or of values shifted into their slot), and the replay is scalar SQL arithmetic on them:
# no lists, no lambdas.  Card id c = suit * 13 + rank (suits C D H S = 0..3, ranks 2..A = 0..12),
# so a spade is c >= 39; seats N E S W = 0..3; position p = (trick - 1) * 4 + play_order - 1.

DECK_STRING = "".join(r + u for u in "CDHS" for r in RANKS)
"""``2C3C...ACAD...AS``: card id c is at characters 2c+1, 2c+2 (so ``strpos`` finds it)."""
_CARD = f"((strpos('{DECK_STRING}', card) - 1) // 2)"  # 0..51; -1 for anything else
_CARD_OK = f"(strlen(card) = 2 AND strpos('{DECK_STRING}', card) % 2 = 1)"
_ONE = "1::BIGINT"
FULL52 = (1 << 52) - 1
TRICK_BITS = sum(1 << t for t in range(1, 14))  # bits 1..13


def _seat_idx(col: str) -> str:
    return f"(instr('{SEATS}', {col}) - 1)"


def _sh(x: str) -> str:
    """A shift amount kept within 0..62, so odd rows (flagged anyway) never make SQL raise."""
    return f"least(greatest({x}, 0), 62)"


PACKED_COLUMNS: dict[str, str] = {
    "game_id": "VARCHAR",
    "hand": "INTEGER",
    **{f"pw{k}": "BIGINT" for k in range(6)},
    "pmask": "BIGINT",
    "spt": "BIGINT",
    "np": "BIGINT",
    "p_ok": "BOOLEAN",
    **{f"dm{i}": "BIGINT" for i in range(4)},
    "nd": "BIGINT",
    "d_ok": "BOOLEAN",
    "lp": "BIGINT",
    "rwp": "BIGINT",
    "tmask": "BIGINT",
    "nt": "BIGINT",
    "t_ok": "BOOLEAN",
    "bp": "BIGINT",
    "nb": "BIGINT",
    "b_ok": "BOOLEAN",
    "any_nil": "BOOLEAN",
    "any_blind": "BOOLEAN",
}
"""The packed form of a hand's plays, deal, recorded tricks and bids (one row per hand).

From ``plays``: ``pw0..pw5`` (card id + 1 in 6-bit slots, ten positions per word),
``pmask`` (positions present), ``spt`` (tricks holding a spade), ``np``, ``p_ok``.  From
``deals``: ``dm0..dm3`` card masks per seat, ``nd``, ``d_ok``.  From ``recorded_tricks``:
``lp`` (leader, 2 bits per trick), ``rwp`` (winner + 1, 3 bits per trick), ``tmask``, ``nt``,
``t_ok``.  From ``bids``: ``bp`` (10 bits per bid, in bid order: seat | blind << 2 | nil << 3 |
value << 4), ``nb``, ``b_ok``, ``any_nil``, ``any_blind``.  Seats of plays are not read from
``plays.seat``: like the reference, the replay derives them from each trick's leader.
The fast loader keeps these rows in table ``fast_hands`` (:func:`packed_from_stage_sql`, from
the lines it parses); the check otherwise computes them from the loaded tables
(:func:`packed_from_tables_sql`).
"""
PACKED_DDL = ", ".join(f"{k} {v}" for k, v in PACKED_COLUMNS.items())
_PACKED_NAMES = [k for k in PACKED_COLUMNS if k not in ("game_id", "hand")]


def packed_from_tables_sql(keys: str | None = None) -> str:
    """The packed rows (:data:`PACKED_COLUMNS`) computed from ``plays``, ``deals``,
    ``recorded_tricks`` and ``bids``, one per hand of ``hands``; ``keys``: a relation of
    (game_id, hand) to restrict them to."""
    only = "" if keys is None else f" WHERE (game_id, hand) IN (SELECT game_id, hand FROM {keys})"
    pw = ", ".join(
        f"bit_or(CASE WHEN pos // 10 = {k} THEN (c + 1)::BIGINT << {_sh('6 * (pos % 10)')} END) AS pw{k}" for k in range(6)
    )
    dm = ", ".join(f"bit_or(CASE WHEN s = {i} THEN {_ONE} << {_sh('c')} END) AS dm{i}" for i in range(4))
    bid_word = (
        f"(greatest(s, 0) + CASE WHEN blind THEN 4 ELSE 0 END + CASE WHEN nil OR bid_value = 0 THEN 8 ELSE 0 END"
        f" + 16 * CASE WHEN nil OR bid_value = 0 THEN 0 ELSE least(greatest(bid, 0), 63) END)::BIGINT"
    )
    return f"""
    WITH pa AS (
        SELECT game_id, hand, {pw},
               bit_or({_ONE} << {_sh('pos')}) AS pmask,
               bit_or(CASE WHEN c >= 39 THEN {_ONE} << {_sh('trick')} END) AS spt,
               count(*) AS np,
               bool_and(ok AND trick BETWEEN 1 AND 13 AND play_order BETWEEN 1 AND 4) AS p_ok
        FROM (SELECT game_id, hand, trick, play_order, (trick - 1) * 4 + play_order - 1 AS pos,
                     {_CARD} AS c, {_CARD_OK} AS ok FROM plays{only})
        GROUP BY game_id, hand
    ), da AS (
        SELECT game_id, hand, {dm}, count(*) AS nd, bool_and(ok AND NOT inferred AND s >= 0) AS d_ok
        FROM (SELECT game_id, hand, inferred, {_CARD} AS c, {_CARD_OK} AS ok, {_seat_idx('seat')} AS s FROM deals{only})
        GROUP BY game_id, hand
    ), ta AS (
        SELECT game_id, hand,
               bit_or(greatest(l, 0)::BIGINT << {_sh('2 * (trick - 1)')}) AS lp,
               bit_or((greatest(coalesce(w, -1), -1) + 1)::BIGINT << {_sh('3 * (trick - 1)')}) AS rwp,
               bit_or({_ONE} << {_sh('trick')}) AS tmask,
               count(*) AS nt,
               bool_and(l >= 0 AND coalesce(w, 0) >= 0 AND trick BETWEEN 1 AND 13) AS t_ok
        FROM (SELECT game_id, hand, trick, {_seat_idx('leader')} AS l, {_seat_idx('winner')} AS w
              FROM recorded_tricks{only})
        GROUP BY game_id, hand
    ), ba AS (
        SELECT game_id, hand,
               bit_or({bid_word} << {_sh('10 * (bid_order - 1)')}) AS bp,
               count(*) AS nb,
               bool_and(s >= 0 AND bid_order BETWEEN 1 AND 4
                        AND (nil OR bid_value = 0 OR (NOT blind AND bid IS NOT NULL AND bid_value = bid
                                                      AND bid BETWEEN 1 AND 13))) AS b_ok,
               bool_or(nil OR bid_value = 0) AS any_nil,
               bool_or(blind) AS any_blind
        FROM (SELECT *, {_seat_idx('seat')} AS s FROM bids{only})
        GROUP BY game_id, hand
    )
    SELECT h.game_id, h.hand,
           pa.* EXCLUDE (game_id, hand), da.* EXCLUDE (game_id, hand), ta.* EXCLUDE (game_id, hand),
           ba.* EXCLUDE (game_id, hand)
    FROM (SELECT game_id, hand FROM hands{only}) h
    LEFT JOIN pa USING (game_id, hand) LEFT JOIN da USING (game_id, hand) LEFT JOIN ta USING (game_id, hand)
    LEFT JOIN ba USING (game_id, hand)
    """


def packed_from_stage_sql(stage: str) -> str:
    """The packed rows of staged JSON lines (``stage``: the fast loader's table of parsed lines
    that passed its check, columns as :data:`spadework.analysis.engine.fast.load.STAGE_COLUMNS`).

    Exactly :func:`packed_from_tables_sql` of the rows the loader writes for a *regular*
    line: a recorded deal of 4 x 13 cards, 13 tricks of 4 cards, 4 bids.  Any other line
    gets ``p_ok = false`` and NULLs (its game goes to the reference checker).  The lines'
    cards are canonical codes (the loader's check), so ``strpos`` in :data:`DECK_STRING` is
    odd for a card of the standard deck and 0 for a joker.
    """
    # a trick of fewer than 4 cards leaves a NULL card, so p_ok is false for it (least() skips
    # NULLs, the sum does not)
    regular = (
        "len(deal.N) = 13 AND len(deal.E) = 13 AND len(deal.S) = 13 AND len(deal.W) = 13 "
        "AND len(tricks) = 13 AND len(bids) = 4"
    )
    sp = lambda x: f"strpos('{DECK_STRING}', {x})"  # noqa: E731
    cols = [f"{sp(f'tricks[{p // 4 + 1}].cards[{p % 4 + 1}]')} AS s{p}" for p in range(52)]
    cols += [f"{sp(f'deal.{st}[{j + 1}]')} AS e{i * 13 + j}" for i, st in enumerate(SEATS) for j in range(13)]
    for k in range(4):
        b = f"bids[{k + 1}]"
        cols.append(f"(instr('{SEATS}', {b}.seat) - 1) AS bs{k}")
        cols.append(f"({b}.bid = 'nil' OR {b}.bid = '0') AS bn{k}")
        cols.append(f"coalesce({b}.blind, false) AS bl{k}")
        cols.append(f"CASE WHEN {b}.bid = 'nil' THEN 0 ELSE TRY_CAST({b}.bid AS INTEGER) END AS bv{k}")
    cols.append("array_to_string(list_transform(tricks, lambda t: t.leader), '') AS ls")
    cols.append("array_to_string(list_transform(tricks, lambda t: coalesce(t.winner, '-')), '') AS ws")
    lvl1 = f"SELECT game_id, CAST(hand AS INTEGER) AS hand, {', '.join(cols)} FROM {stage} WHERE {regular}"
    pw = [
        " | ".join(f"(((s{p} + 1) // 2)::BIGINT << {6 * (p % 10)})" for p in range(10 * k, min(52, 10 * k + 10))) + f" AS pw{k}"
        for k in range(6)
    ]
    spade = 2 * 39 + 1  # strpos of 2S, the lowest spade
    spt = " | ".join(
        f"((greatest(s{4 * t}, s{4 * t + 1}, s{4 * t + 2}, s{4 * t + 3}) >= {spade})::BIGINT << {t + 1})" for t in range(13)
    )
    dm = [" | ".join(f"({_ONE} << ((e{i * 13 + j} - 1) // 2))" for j in range(13)) + f" AS dm{i}" for i in range(4)]
    lp = " | ".join(f"((instr('{SEATS}', ls[{t + 1}]) - 1)::BIGINT << {2 * t})" for t in range(13))
    rwp = " | ".join(f"(instr('{SEATS}', ws[{t + 1}])::BIGINT << {3 * t})" for t in range(13))
    word = lambda k: (  # noqa: E731
        f"((greatest(bs{k}, 0) + CASE WHEN bl{k} THEN 4 ELSE 0 END + CASE WHEN bn{k} THEN 8 ELSE 0 END"
        f" + 16 * CASE WHEN bn{k} THEN 0 ELSE least(greatest(bv{k}, 0), 63) END)::BIGINT << {10 * k})"
    )
    bp = " | ".join(word(k) for k in range(4))
    b_ok = " AND ".join(f"(bn{k} OR (NOT bl{k} AND bv{k} BETWEEN 1 AND 13))" for k in range(4))
    full = (1 << 52) - 1
    all_s = ", ".join(f"s{p}" for p in range(52))
    all_e = ", ".join(f"e{k}" for k in range(52))
    regular_cols = ", ".join(
        [
            "game_id",
            "hand",
            *pw,
            f"{full}::BIGINT AS pmask",
            f"({spt}) AS spt",
            "52::BIGINT AS np",
            f"coalesce(least({all_s}) > 0 AND ({all_s.replace(', ', ' + ')}) IS NOT NULL, false) AS p_ok",
            *dm,
            "52::BIGINT AS nd",
            f"coalesce(least({all_e}) > 0 AND ({all_e.replace(', ', ' + ')}) IS NOT NULL, false) AS d_ok",
            f"({lp}) AS lp",
            f"({rwp}) AS rwp",
            f"{TRICK_BITS}::BIGINT AS tmask",
            "13::BIGINT AS nt",
            "true AS t_ok",
            f"({bp}) AS bp",
            "4::BIGINT AS nb",
            f"({b_ok}) AS b_ok",
            "(bn0 OR bn1 OR bn2 OR bn3) AS any_nil",
            "(bl0 OR bl1 OR bl2 OR bl3) AS any_blind",
        ]
    )
    nulls = ", ".join(f"NULL::{PACKED_COLUMNS[k]} AS {k}" if k != "p_ok" else "false AS p_ok" for k in _PACKED_NAMES)
    return (
        f"SELECT {regular_cols} FROM ({lvl1}) "
        f"UNION ALL SELECT game_id, CAST(hand AS INTEGER), {nulls} FROM {stage} WHERE NOT coalesce({regular}, false)"
    )


def hand_source_sql(packed: str | None = None, keys: str | None = None) -> str:
    """Per hand of ``hands``: the packed rows (:data:`PACKED_COLUMNS`; from table ``packed``, or
    computed from the loaded tables when ``None``), the hand's own columns and its recorded scores.
    ``keys``: a relation of (game_id, hand) to restrict the hands to.
    """
    only = "" if keys is None else f" WHERE (game_id, hand) IN (SELECT game_id, hand FROM {keys})"
    pk = f"({packed_from_tables_sql(keys)})" if packed is None else f"(SELECT * FROM {packed}{only})"
    return f"""
    WITH sa AS (
        SELECT game_id, hand,
               max(points) FILTER (side = 'NS') AS ns_points, max(total) FILTER (side = 'NS') AS ns_total,
               max(bags) FILTER (side = 'NS') AS ns_bags,
               max(points) FILTER (side = 'EW') AS ew_points, max(total) FILTER (side = 'EW') AS ew_total,
               max(bags) FILTER (side = 'EW') AS ew_bags,
               max(score_before) FILTER (side = 'NS') AS ns_sb, max(score_before) FILTER (side = 'EW') AS ew_sb,
               max(bags_before) FILTER (side = 'NS') AS ns_bb, max(bags_before) FILTER (side = 'EW') AS ew_bb
        FROM recorded_scores{only} GROUP BY game_id, hand
    )
    SELECT h.game_id, h.hand, {_seat_idx('h.dealer')} AS dealer, h.rules, h.rules_is_object, h.has_deal, h.has_tricks,
           h.winner, h.taken_n, h.taken_e, h.taken_s, h.taken_w,
           pk.* EXCLUDE (game_id, hand), sa.* EXCLUDE (game_id, hand)
    FROM (SELECT * FROM hands{only}) h
    LEFT JOIN {pk} pk USING (game_id, hand) LEFT JOIN sa USING (game_id, hand)
    """


def _card(p: int) -> str:
    """Card id at position ``p`` (0..51); 0 when missing (such a hand is flagged as incomplete)."""
    return f"greatest(((pw{p // 10} >> {6 * (p % 10)}) & 63) - 1, 0)"


def _argmax4(keys: list[str]) -> str:
    a, b, c, d = keys
    return (
        f"(CASE WHEN {a} >= greatest({b}, {c}, {d}) THEN 0 WHEN {b} >= greatest({c}, {d}) THEN 1 "
        f"WHEN {c} >= {d} THEN 2 ELSE 3 END)"
    )


def _pick(index: str, values: list[str]) -> str:
    """``values[index]`` for a small integer index, as a CASE."""
    return "(CASE " + index + " " + " ".join(f"WHEN {i} THEN {v}" for i, v in enumerate(values)) + " END)"


def hand_facts_sql(source: str, debug: bool = False) -> str:
    """Per hand: the replay as scalar SQL over :func:`hand_source_sql` rows (``source``).

    Output: game_id, hand, dealer, rules, rules_is_object, rkey, supported, hand_ok (false =
    flagged), ``wp``/``ledp``/``lp`` (winner, led suit, leader: 2 bits per trick), ``fs``
    (first trick holding a spade), ``tk0..tk3`` (tricks per seat), ``bv0..bv3`` (bid per seat,
    0 = nil), ``bb0..bb3`` (blind nil), the recorded winner and scores, and the ruleset's
    scoring parameters.  ``debug``: one boolean column per rule check instead (to see why a
    hand is flagged).
    """
    # level 1: cards, leaders, recorded winners, bids per bid order
    cards = ", ".join(f"{_card(p)} AS c{p}" for p in range(52))
    leaders = ", ".join(f"((lp >> {2 * t}) & 3) AS l{t + 1}" for t in range(13))
    rwins = ", ".join(f"((rwp >> {3 * t}) & 7) AS rw{t + 1}" for t in range(13))
    bids = ", ".join(f"((bp >> {10 * k}) & 1023) AS bw{k + 1}" for k in range(4))
    lvl1 = f"SELECT *, {cards}, {leaders}, {rwins}, {bids} FROM ({source})"
    # level 2: led suits, trick winners
    parts = []
    for t in range(1, 14):
        p0 = 4 * (t - 1)
        led = f"(c{p0} // 13)"
        keys = [
            f"(CASE WHEN c{p} >= 39 THEN 20 + c{p} % 13 WHEN c{p} // 13 = {led} THEN 1 + c{p} % 13 ELSE 0 END)"
            for p in range(p0, p0 + 4)
        ]
        parts.append(f"{led} AS u{t}")
        parts.append(f"((l{t} + {_argmax4(keys)}) % 4) AS w{t}")
    lvl2 = f"SELECT *, {', '.join(parts)} FROM ({lvl1})"
    # level 3: each seat's card in each trick (x_t_s), tricks taken, bids per seat, packed results
    picks = ", ".join(
        f"{_pick(f'(({s} - l{t} + 4) % 4)', [f'c{4 * (t - 1) + j}' for j in range(4)])} AS x{t}_{s}"
        for t in range(1, 14)
        for s in range(4)
    )
    tk = ", ".join(f"({' + '.join(f'(w{t} = {s})::INTEGER' for t in range(1, 14))}) AS tk{s}" for s in range(4))
    bidseat = lambda k: f"(bw{k} & 3)"  # noqa: E731
    bv = ", ".join(
        "(CASE " + " ".join(f"WHEN {bidseat(k)} = {s} THEN (bw{k} >> 4) & 63" for k in range(1, 5)) + f" END) AS bv{s}"
        for s in range(4)
    )
    bb = ", ".join(
        "coalesce(CASE " + " ".join(f"WHEN {bidseat(k)} = {s} THEN (bw{k} & 12) = 12" for k in range(1, 5)) + f" END, false) AS bb{s}"
        for s in range(4)
    )
    wp = " | ".join(f"(w{t}::BIGINT << {2 * (t - 1)})" for t in range(1, 14))
    ledp = " | ".join(f"(u{t}::BIGINT << {2 * (t - 1)})" for t in range(1, 14))
    fs = "least(greatest(bit_count((spt & -spt) - 1), 1), 13)"  # lowest set bit of spt: the first trick with a spade
    lvl3 = f"SELECT *, {picks}, {fs} AS fs, {tk}, {bv}, {bb}, ({wp}) AS wp, ({ledp}) AS ledp FROM ({lvl2})"
    # level 4: per seat, the cards it played and 1 << (16 * suit + trick) of each
    pc = ", ".join(f"({' | '.join(f'({_ONE} << x{t}_{s})' for t in range(1, 14))}) AS pc{s}" for s in range(4))
    pl = ", ".join(
        f"({' | '.join(f'({_ONE} << (16 * (x{t}_{s} // 13) + {t}))' for t in range(1, 14))}) AS pl{s}" for s in range(4)
    )
    lvl3 = f"SELECT *, {pc}, {pl} FROM ({lvl3})"

    complete = f"has_tricks AND np = 52 AND p_ok AND nt = 13 AND t_ok AND tmask = {TRICK_BITS} AND pmask = {FULL52}"
    deal_ok = (
        f"has_deal AND nd = 52 AND d_ok AND (dm0 | dm1 | dm2 | dm3) = {FULL52} "
        "AND bit_count(dm0) = 13 AND bit_count(dm1) = 13 AND bit_count(dm2) = 13 AND bit_count(dm3) = 13 "
        "AND dm0 = pc0 AND dm1 = pc1 AND dm2 = pc2 AND dm3 = pc3"
    )
    lead_chain = " AND ".join(["l1 = (dealer + 1) % 4"] + [f"l{t + 1} = w{t}" for t in range(1, 13)])
    rec_winners = " AND ".join(f"(rw{t} = 0 OR rw{t} = w{t} + 1)" for t in range(1, 14))
    reneges = []
    for t in range(1, 14):
        for j in range(1, 4):
            p = 4 * (t - 1) + j
            seat = f"((l{t} + {j}) % 4)"
            pl = _pick(seat, ["pl0", "pl1", "pl2", "pl3"])
            reneges.append(f"(c{p} // 13 <> u{t} AND (({pl} >> (16 * u{t} + {t + 1})) & {(1 << (13 - t)) - 1}) <> 0)")
    renege = " OR ".join(reneges)
    # the first spade led, by a leader holding another suit (a non-spade played in a later trick)
    lfs = "((lp >> (2 * (fs - 1))) & 3)"
    pl_lfs = _pick(lfs, ["pl0", "pl1", "pl2", "pl3"])
    led_fs = "((ledp >> (2 * (fs - 1))) & 3)"
    later = "((1::BIGINT << (13 - fs)) - 1)"
    spade_lead = (
        f"({led_fs} = 3 AND ((({pl_lfs} >> (fs + 1)) & {later}) <> 0 OR (({pl_lfs} >> (16 + fs + 1)) & {later}) <> 0"
        f" OR (({pl_lfs} >> (32 + fs + 1)) & {later}) <> 0))"
    )
    bid_order = " AND ".join(f"{bidseat(k)} = (dealer + {k}) % 4" for k in range(1, 5))
    taken_ok = " AND ".join(f"(taken_{st.lower()} IS NULL OR taken_{st.lower()} = tk{i})" for i, st in enumerate(SEATS))
    side_bid = []
    for a, b in ((0, 2), (1, 3)):
        contract = f"(bv{a} + bv{b})"
        side_bid.append(
            f"(r.min_side_bid IS NULL OR bv{a} = 0 OR bv{b} = 0 OR {contract} >= r.min_side_bid)"
            f" AND (r.max_side_bid IS NULL OR {contract} <= r.max_side_bid)"
        )
    checks = [
        "r.supported",
        "dealer >= 0",
        complete,
        deal_ok,
        lead_chain,
        rec_winners,
        f"NOT ({renege})",
        f"NOT {spade_lead}",
        "nb = 4 AND b_ok",
        bid_order,
        "(r.nil_ok OR NOT any_nil)",
        "(r.bn_mode > 0 OR NOT any_blind)",
        *side_bid,
        taken_ok,
    ]
    join = (
        f"FROM ({lvl3}) f JOIN _fc_rules r ON f.rules IS NOT DISTINCT FROM r.rules "
        "AND f.rules_is_object IS NOT DISTINCT FROM r.rules_is_object"
    )
    if debug:
        return f"SELECT f.game_id, f.hand, {', '.join(f'coalesce(({c}), false) AS c{i}' for i, c in enumerate(checks))} {join}"
    return f"""
        SELECT f.game_id, f.hand, f.dealer, f.rules, f.rules_is_object, r.rkey, r.supported,
               coalesce({' AND '.join(f'({c})' for c in checks)}, false) AS hand_ok,
               f.wp, f.ledp, f.lp, f.fs, f.tk0, f.tk1, f.tk2, f.tk3, f.bv0, f.bv1, f.bv2, f.bv3,
               f.bb0, f.bb1, f.bb2, f.bb3, f.winner,
               f.ns_points, f.ns_total, f.ns_bags, f.ew_points, f.ew_total, f.ew_bags,
               f.ns_sb, f.ew_sb, f.ns_bb, f.ew_bb,
               r.target, r.nil_points, r.blind_nil_points, r.bn_mode, r.bn_behind, r.fnt, r.bag_limit, r.bag_penalty,
               r.bag_points, r.t4t, r.losing_score
        {join}
    """


# --- step 2: scores per side, then the game ------------------------------------------------------


def _side_sql(a: int, b: int) -> dict[str, str]:
    """Hand scores of the side of seats ``a``, ``b`` (0..3) before the bag penalty."""
    nil_a, nil_b = f"(bv{a} = 0)", f"(bv{b} = 0)"
    ta, tb = f"tk{a}", f"tk{b}"
    contract = f"(bv{a} + bv{b})"
    # tricks counting toward the contract: non-nil seats, failed nils under 'side'
    counting = (
        f"(CASE WHEN NOT {nil_a} THEN {ta} WHEN fnt = 0 THEN {ta} ELSE 0 END"
        f" + CASE WHEN NOT {nil_b} THEN {tb} WHEN fnt = 0 THEN {tb} ELSE 0 END)"
    )
    extra = f"(CASE WHEN {nil_a} AND fnt = 1 THEN {ta} ELSE 0 END + CASE WHEN {nil_b} AND fnt = 1 THEN {tb} ELSE 0 END)"
    va = f"(CASE WHEN bb{a} THEN blind_nil_points ELSE nil_points END)"
    vb = f"(CASE WHEN bb{b} THEN blind_nil_points ELSE nil_points END)"
    nil_pts = (
        f"(CASE WHEN {nil_a} THEN CASE WHEN {ta} = 0 THEN {va} ELSE -{va} END ELSE 0 END"
        f" + CASE WHEN {nil_b} THEN CASE WHEN {tb} = 0 THEN {vb} ELSE -{vb} END ELSE 0 END)"
    )
    made = f"({counting} >= {contract})"
    cpoints = (
        f"(CASE WHEN {made} THEN CASE WHEN t4t AND {contract} >= 10 THEN 200 ELSE 10 * {contract} END "
        f"ELSE -10 * {contract} END)"
    )
    bags = f"(CASE WHEN {made} THEN {counting} - {contract} + {extra} ELSE {extra} END)"
    return {
        "contract": contract,
        "tricks": counting,
        "made": made,
        "bags_hand": bags,
        "nil_points": nil_pts,
        "base": f"({cpoints} + bag_points * {bags} + {nil_pts})",
    }


def game_sql() -> str:
    """Per hand over ``_fc_hand``: the side scores, the running score in one window pass, the row checks.

    Bags: ``cbags`` = starting bags + this game's bags so far; the penalties up to a hand are
    ``floor(cbags / limit)`` less those of the start, so a hand's penalty is the change of
    that floor and the running total is start + running sum of the pre-penalty points -
    penalty x (floor(cbags / limit) - floor(start bags / limit)); bags after the hand are
    ``cbags mod limit``.  All of it in one window (PARTITION BY game_id ORDER BY hand).
    """
    ns, ew = _side_sql(0, 2), _side_sql(1, 3)
    per_hand = f"""
        SELECT *,
            {ns['contract']} AS ns_contract, {ns['tricks']} AS ns_tricks, {ns['made']} AS ns_made,
            {ns['bags_hand']} AS ns_bags_hand, {ns['nil_points']} AS ns_nil, {ns['base']} AS ns_base,
            {ew['contract']} AS ew_contract, {ew['tricks']} AS ew_tricks, {ew['made']} AS ew_made,
            {ew['bags_hand']} AS ew_bags_hand, {ew['nil_points']} AS ew_nil, {ew['base']} AS ew_base
        FROM _fc_hand
    """
    win = f"""
        SELECT *,
            first_value(hand) OVER g AS first_hand,
            first_value(rkey) OVER g AS game_rkey,
            coalesce(first_value(ns_sb) OVER g, 0) AS ns_start, coalesce(first_value(ew_sb) OVER g, 0) AS ew_start,
            coalesce(first_value(ns_bb) OVER g, 0) AS ns_start_bags, coalesce(first_value(ew_bb) OVER g, 0) AS ew_start_bags,
            lag(hand) OVER g AS prev_hand, lag(dealer) OVER g AS prev_dealer,
            sum(ns_bags_hand) OVER g AS ns_sum_bags, sum(ew_bags_hand) OVER g AS ew_sum_bags,
            sum(ns_base) OVER g AS ns_sum_base, sum(ew_base) OVER g AS ew_sum_base
        FROM ({per_hand}) WINDOW g AS (PARTITION BY game_id ORDER BY hand ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    """

    def floor_div(x: str) -> str:
        return f"CASE WHEN bag_limit > 0 THEN floor(({x}) / bag_limit)::BIGINT ELSE 0 END"

    def side(sd: str) -> str:
        c = f"({sd}_start_bags + {sd}_sum_bags)"
        before = f"({c} - {sd}_bags_hand)"
        start = f"{sd}_start_bags"
        return (
            f"-bag_penalty * ({floor_div(c)} - {floor_div(before)}) AS {sd}_pen, "
            f"{sd}_start + {sd}_sum_base - bag_penalty * ({floor_div(c)} - {floor_div(start)}) AS {sd}_tot, "
            f"({c} - bag_limit * {floor_div(c)}) AS {sd}_bags_after, "
            f"({before} - bag_limit * {floor_div(before)}) AS {sd}_bags_before_hand"
        )

    scored = f"SELECT *, {side('ns')}, {side('ew')} FROM ({win})"
    totals = f"SELECT *, ns_base + ns_pen AS ns_pts, ew_base + ew_pen AS ew_pts FROM ({scored})"
    ends = (
        "((greatest(ns_tot, ew_tot) >= target AND ns_tot <> ew_tot)"
        " OR (losing_score IS NOT NULL AND (ns_tot <= losing_score OR ew_tot <= losing_score) AND ns_tot <> ew_tot))"
    )
    rec_ok = " AND ".join(
        f"({sd}_{k} IS NULL OR {sd}_{k} = {v})"
        for sd in ("ns", "ew")
        for k, v in (("points", f"{sd}_pts"), ("total", f"{sd}_tot"), ("bags", f"{sd}_bags_after"))
    )
    before_ok = (
        "(hand = first_hand OR ((ns_sb IS NULL OR ns_sb = ns_tot - ns_pts) AND (ew_sb IS NULL OR ew_sb = ew_tot - ew_pts)"
        " AND (ns_bb IS NULL OR ns_bb = ns_bags_before_hand) AND (ew_bb IS NULL OR ew_bb = ew_bags_before_hand)))"
    )
    start_ok = (
        "(hand <> first_hand OR ((ns_sb IS NULL) = (ew_sb IS NULL) AND (ns_bb IS NULL) = (ew_bb IS NULL)"
        " AND (bag_limit = 0 OR (ns_start_bags BETWEEN 0 AND bag_limit - 1 AND ew_start_bags BETWEEN 0 AND bag_limit - 1))))"
    )
    rot_ok = "(prev_hand IS NULL OR dealer = (prev_dealer + (hand - prev_hand)) % 4)"
    gap_ok = "(prev_hand IS NULL OR hand = prev_hand + 1)"  # a missing hand is HAND_MISSING: the reference's
    # blind nil: allowed always, or to a side behind by bn_behind before the hand (recomputed totals)
    blind_ok = (
        "(bn_mode = 1 OR ((NOT (bb0 OR bb2) OR (ew_tot - ew_pts) - (ns_tot - ns_pts) >= bn_behind)"
        " AND (NOT (bb1 OR bb3) OR (ns_tot - ns_pts) - (ew_tot - ew_pts) >= bn_behind)))"
    )
    winner_ok = f"(winner IS NULL OR ({ends} AND winner = CASE WHEN ns_tot > ew_tot THEN 'NS' ELSE 'EW' END))"
    return f"""
        SELECT *, {ends} AS ends,
            coalesce(hand_ok AND rkey IS NOT DISTINCT FROM game_rkey AND {rec_ok} AND {before_ok} AND {start_ok}
                     AND {rot_ok} AND {gap_ok} AND {blind_ok} AND {winner_ok}, false) AS row_ok
        FROM ({totals})
    """


_SCORE_COLUMNS = [f"{sd}_{c}" for sd in ("ns", "ew") for c in ("contract", "tricks", "bags_hand", "pen", "nil", "pts", "tot", "bags_after")]


def _fold_games_sql() -> str:
    """Per game: whether it passes (every hand passes, every number fits the tables' 32-bit
    columns, and no hand follows the end) and its ``games`` row.  A game with a number beyond
    32 bits goes to the reference, which reports it as the reference does."""
    fits = f"coalesce(greatest({', '.join(f'abs({c})' for c in _SCORE_COLUMNS)}) < 2147483648, true)"
    return """
        SELECT game_id, game_ok AND (end_hand IS NULL OR end_hand = last_hand) AS game_ok,
               hands, last_hand, end_hand, total_ns, total_ew, rules
        FROM (SELECT game_id, bool_and(row_ok AND {fits}) AS game_ok, count(*) AS hands, max(hand) AS last_hand,
                     min(hand) FILTER (ends) AS end_hand,
                     arg_max(ns_tot, hand) AS total_ns, arg_max(ew_tot, hand) AS total_ew,
                     any_value(game_rkey) AS rules
              FROM _fc_game_hand GROUP BY game_id)
    """.replace("{fits}", fits)


# --- writing --------------------------------------------------------------------------------------

_TRICKS_INSERT = """
    INSERT INTO tricks (game_id, hand, trick, leader, led_suit, winner, spades_broken)
    SELECT game_id, hand, t + 1, substr('NESW', ((lp >> (2 * t)) & 3)::INTEGER + 1, 1),
           substr('CDHS', ((ledp >> (2 * t)) & 3)::INTEGER + 1, 1),
           substr('NESW', ((wp >> (2 * t)) & 3)::INTEGER + 1, 1), fs < t + 1
    FROM (SELECT h.game_id, h.hand, h.lp, h.ledp, h.wp, h.fs, unnest(range(13)) AS t
          FROM _fc_hand h SEMI JOIN _fc_games g ON h.game_id = g.game_id AND g.game_ok)
"""

_SCORES_INSERT = """
    INSERT INTO hand_scores (game_id, hand, side, contract, tricks, made, bags_this_hand, bag_penalty, nil_points,
                             points, total, bags, scoring)
    SELECT game_id, hand, 'NS', ns_contract, ns_tricks, ns_made, ns_bags_hand, ns_pen, ns_nil, ns_pts, ns_tot,
           ns_bags_after, 'as_played'
    FROM _fc_game_hand h SEMI JOIN _fc_games g ON h.game_id = g.game_id AND g.game_ok
    UNION ALL
    SELECT game_id, hand, 'EW', ew_contract, ew_tricks, ew_made, ew_bags_hand, ew_pen, ew_nil, ew_pts, ew_tot,
           ew_bags_after, 'as_played'
    FROM _fc_game_hand h SEMI JOIN _fc_games g ON h.game_id = g.game_id AND g.game_ok
"""

_GAMES_INSERT = """
    INSERT INTO games (game_id, rules, hands, total_ns, total_ew, winner, ended_at_hand)
    SELECT game_id, rules, hands, total_ns, total_ew,
           CASE WHEN end_hand IS NULL THEN NULL WHEN total_ns > total_ew THEN 'NS' ELSE 'EW' END, end_hand
    FROM _fc_games WHERE game_ok
"""


FLAGGED_WHERE = "h.game_id IN (SELECT unnest(?::VARCHAR[]))"


def _check_flagged(con, ids: list[str], override: Any, summary: CheckSummary, writer: DerivedWriter, workers: int) -> None:
    """Check the flagged games with the reference checker and buffer their rows."""
    from spadework.parsers.db import iter_records

    if not ids:
        return
    if workers > 1 and len(ids) >= WORKERS_MIN_GAMES:
        for gc in _check_in_workers(con, ids, override, workers, writer):
            summary.add(gc)
        return
    import itertools

    for _, group in itertools.groupby(iter_records(con, where=FLAGGED_WHERE, params=[ids]), key=lambda r: r.game_id):
        gc = check_game(list(group), override)
        writer.add(gc)
        summary.add(gc)


def _worker_check(args: tuple[list[str], list[tuple], Any]):
    """In a worker process: build the records of whole games from their rows, check them, and
    return the games (without their rows) and the derived rows as columns (cheap to send back)."""
    columns, parts, override = args
    import itertools

    from spadework.parsers.db import records_from_rows

    cols = DerivedWriter(None)
    out = []
    for _, group in itertools.groupby(records_from_rows(columns, parts), key=lambda r: r.game_id):
        gc = check_game(list(group), override)
        cols.add(gc)
        gc.hands, gc.tricks, gc.hand_scores = [], [], []  # the rows travel as columns
        out.append(gc)
    return out, cols.buffers


def _check_in_workers(con, ids: list[str], override: Any, workers: int, writer: DerivedWriter):
    """Read the flagged games' rows here and build, check and turn them into columns in ``workers``
    processes (ordered by game); the columns go to ``writer``, the games are yielded."""
    import concurrent.futures as cf
    import multiprocessing as mp
    from collections import deque

    from spadework.parsers.db import record_rows

    columns, parts = record_rows(con, where=FLAGGED_WHERE, params=[ids])
    gi = columns.index("game_id")

    def batches():
        batch: list[tuple] = []
        for p in parts:
            if len(batch) >= WORKER_BATCH_HANDS and p[0][gi] != batch[-1][0][gi]:  # whole games only
                yield batch
                batch = []
            batch.append(p)
        if batch:
            yield batch

    # fork: the workers need nothing but the rows and check_game (no DuckDB), and a script that
    # calls check_fast without an ``if __name__ == "__main__"`` guard still works
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending: deque = deque()  # a few batches in flight, in order: memory stays flat

        def settle():
            games, buffers = pending.popleft().result()
            writer.add_buffers(buffers)
            return games

        for b in batches():
            pending.append(pool.submit(_worker_check, (columns, b, override)))
            while len(pending) > 2 * workers:
                yield from settle()
        while pending:
            yield from settle()


def check_fast(
    con,
    rules: Any = None,
    policy: ErrorPolicy | str = "collect",
    progress: Callable[[int, int], None] | bool | None = None,
    workers: int | None = None,
    trust_packed: bool = False,
) -> CheckSummary:
    """Check every hand of a loaded database and REPLACE its derived tables, like
    :func:`spadework.analysis.engine.checker.check_db` (same arguments, same rows, same findings).

    Clean games are replayed and scored in SQL; games that might hold a finding (or use a
    ruleset the SQL does not implement) go through :func:`spadework.analysis.engine.checker.check_game`.
    ``workers``: processes for the reference check of flagged games (default: DuckDB's
    ``threads`` setting; 1 = in this process).  ``policy="raise"`` is handed to
    :func:`check_db` (stopping at the first finding needs the reference order).
    ``progress`` is accepted for the CLI and ignored by the SQL steps.

    The hands are replayed from table ``fast_hands`` (written by
    :func:`spadework.analysis.engine.fast.load.load_fast`) when its recorded checksums still match the loaded
    tables (or ``trust_packed``: the caller has just loaded them), else from the loaded tables.
    Raises :class:`~spadework.analysis.engine.rules.RulesError` for a bad ``rules``.
    """
    pol = ErrorPolicy.parse(policy)
    if pol is ErrorPolicy.RAISE:
        return check_db(con, rules=rules, policy=pol, progress=progress)
    override = get_ruleset(rules) if rules is not None else None
    if workers is None:
        workers = int(_x(con, "misc", "SELECT current_setting('threads')")[0][0])
    summary = CheckSummary()
    generation = loaded_generation(con)  # what the tables hold as the check starts
    w = con.cursor()  # writes and temp tables here; iter_records reads the loaded tables with its own cursors
    _x(w, "misc", "BEGIN TRANSACTION")
    try:
        replace_derived_tables(w)
        w.register("_fc_rules_arrow", _rules_rows(w, override))
        try:
            _x(w, "rules", "CREATE OR REPLACE TEMP TABLE _fc_rules AS SELECT * FROM _fc_rules_arrow")
        finally:
            w.unregister("_fc_rules_arrow")
        from spadework.analysis.engine.fast.load import PACKED_TABLE, packed_state_valid

        packed = trust_packed or packed_state_valid(w)
        total_hands = _x(w, "misc", "SELECT count(*) FROM hands")[0][0]
        parts = max(1, -(-total_hands // HANDS_PER_PART))
        games = hands = 0
        flagged: list[str] = []
        for part in range(parts):
            # games never straddle parts: a part is the games whose id hashes to it
            _x(
                w,
                "misc",
                f"CREATE OR REPLACE TEMP TABLE _fc_keys AS SELECT game_id, hand FROM hands "
                f"WHERE hash(game_id) % {parts} = {part}",
            )
            source = hand_source_sql(PACKED_TABLE if packed else None, "_fc_keys")
            _x(w, "hands", f"CREATE OR REPLACE TEMP TABLE _fc_hand AS {hand_facts_sql(source)}")
            _x(w, "games", f"CREATE OR REPLACE TEMP TABLE _fc_game_hand AS {game_sql()}")
            _x(w, "games", f"CREATE OR REPLACE TEMP TABLE _fc_games AS {_fold_games_sql()}")
            _x(w, "write", _TRICKS_INSERT)
            _x(w, "write", _SCORES_INSERT)
            _x(w, "write", _GAMES_INSERT)
            g, h = _x(w, "misc", "SELECT count(*), coalesce(sum(hands), 0) FROM _fc_games")[0]
            games += g
            hands += int(h)
            flagged += [r[0] for r in _x(w, "misc", "SELECT game_id FROM _fc_games WHERE NOT game_ok")]
        flagged.sort()
        writer = DerivedWriter(w)
        t0 = time.perf_counter()
        _check_flagged(con, flagged, override, summary, writer, workers)
        writer.flush()
        if TIMINGS is not None:
            TIMINGS["reference (flagged games)"] = TIMINGS.get("reference (flagged games)", 0.0) + time.perf_counter() - t0
        # the summary counts every game, as check_db's does
        summary.games = games
        summary.hands = int(hands)
        for t in ("_fc_rules", "_fc_keys", "_fc_hand", "_fc_game_hand", "_fc_games"):
            _x(w, "misc", f"DROP TABLE IF EXISTS {t}")
        mark_checked(w, generation)  # readers now trust the derived tables (spadework.parsers.state)
        _x(w, "misc", "COMMIT")
    except BaseException:
        _x(w, "misc", "ROLLBACK")
        raise
    finally:
        w.close()
    STATS["games"] = games
    STATS["flagged_games"] = len(flagged)
    STATS["packed"] = int(packed)
    return summary


STATS: dict[str, int] = {"games": 0, "flagged_games": 0, "packed": 0}
"""Counters of the last :func:`check_fast` call: games, games sent to the reference checker, and
whether the hands were replayed from ``fast_hands`` (1) or from the loaded tables (0)."""


def validate_fast(
    con,
    paths: Iterable[str | os.PathLike[str]],
    rules: Any = None,
    progress: bool = False,
    fmt: str | None = None,
    workers: int | None = None,
):
    """Load files with :func:`spadework.analysis.engine.fast.load.load_fast` and check the database with :func:`check_fast`.

    Returns ``(LoadSummary, CheckSummary)``, as ``spadework validate`` needs.
    Raises ``FileNotFoundError`` for a missing path, :class:`~spadework.analysis.engine.rules.RulesError` for bad rules.
    """
    from spadework.analysis.engine.fast.load import load_fast

    if rules is not None:
        get_ruleset(rules)  # fail before loading
    fresh = con.execute("SELECT count(*) FROM hands").fetchall()[0][0] == 0
    # When the database held nothing before, the packed rows are this load's own: the check
    # uses them without the checksum pass.  The checksums are recorded for a database file only
    # (later `spadework check` runs); an in-memory database goes away with the connection.
    loaded = load_fast(con, paths, fmt=fmt, progress=progress, pack=True, state=not _in_memory(con), workers=workers)
    checked = check_fast(con, rules=rules, workers=workers, trust_packed=fresh)
    return loaded, checked


def _in_memory(con) -> bool:
    try:
        return con.execute("SELECT path IS NULL OR path = '' FROM duckdb_databases() WHERE database_name = current_database()").fetchall()[0][0]
    except Exception:
        return False


__all__ = ["STATS", "check_fast", "hand_facts_sql", "hand_source_sql", "sql_supports", "validate_fast"]
