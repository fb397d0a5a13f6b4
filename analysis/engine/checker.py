"""The checker: replay every hand of every game, recompute every score, report every finding.

- :func:`check_game`: one game's hand records -> :class:`GameCheck` (findings and the
  rows of the derived tables ``tricks``, ``hand_scores``, ``games``; TABLES.md).
- :func:`iter_game_checks`: records ordered by game and hand -> one ``GameCheck`` per game.
- :func:`check_db`: read a loaded DuckDB database through ``spadework.parsers.db.iter_records``
  and replace the derived tables ``tricks``, ``violations``, ``hand_scores``, ``games``.

Per game it checks what needs more than one hand: the ruleset (one per game), dealer
rotation (DEALER_OUT_OF_ROTATION), recorded scores (SCORE_MISMATCH, checked as
RULES.md section 5 "Checking recorded scores" says), the recorded winner
(GAME_RESULT_MISMATCH) and hands after the end (PLAYED_AFTER_GAME_END); everything
within a hand comes from :func:`spadework.analysis.engine.replay.replay_hand`.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spadework.analysis.engine.findings import (
    DEALER_OUT_OF_ROTATION,
    GAME_RESULT_MISMATCH,
    HAND_MISSING,
    PLAYED_AFTER_GAME_END,
    RULES_INVALID,
    RULES_MIXED,
    SCORE_MISMATCH,
    CheckError,
    ErrorPolicy,
    Finding,
    FindingList,
    where,
)
from spadework.analysis.engine.replay import CleanPlay, HandReplay, replay_hand
from spadework.analysis.engine.rules import Ruleset, RulesError, fallback_ruleset, get_ruleset, rules_key, ruleset_name
from spadework.analysis.engine.scoring import ScoreChain, SideResult, apply_renege_penalty, score_side
from spadework.parsers.model import HandRecord
from spadework.parsers.schema import AS_PLAYED_COLUMNS, DERIVED_TABLES, arrow_schema, column_types
from spadework.parsers.seats import SIDES, Seat, Side
from spadework.parsers.state import loaded_generation, mark_checked

AS_PLAYED = "as_played"
AFTER_PENALTY = "after_penalty"


@dataclass
class HandCheck:
    """One hand as checked: its replay and its recomputed scores (NS, EW).

    ``after_penalty`` is set only when the ruleset has ``renege_penalty_tricks``.
    ``official`` is the score the game goes by (after the penalty when there is one).
    """

    record: HandRecord
    replay: HandReplay
    as_played: tuple[SideResult, SideResult]
    after_penalty: tuple[SideResult, SideResult] | None = None

    @property
    def official(self) -> tuple[SideResult, SideResult]:
        return self.after_penalty if self.after_penalty is not None else self.as_played


@dataclass
class GameCheck:
    """One game as checked.

    ``findings`` in order (game-level first, then hand by hand); ``tricks``,
    ``hand_scores``: lists of row dicts with the columns of the derived tables
    (TABLES.md, parsers/schema.py); ``game``: the ``games`` row.
    ``totals``: (NS, EW) when the game ended, or after its last hand; ``winner``:
    ``None`` while unfinished; ``ended_at_hand``: the hand number that ended it.
    """

    game_id: str
    ruleset: Ruleset
    rules: str
    findings: list[Finding]
    hands: list[HandCheck]
    tricks: list[dict[str, Any]]
    hand_scores: list[dict[str, Any]]
    game: dict[str, Any]
    totals: tuple[int, int]
    winner: Side | None
    ended_at_hand: int | None

    @property
    def violations(self) -> list[dict[str, Any]]:
        """The ``violations`` rows."""
        return [f.to_row() for f in self.findings]


# --- score comparison ---------------------------------------------------------------------------


def _int(x: Any) -> Any:
    if isinstance(x, float):
        return int(round(x))
    return x


def _diagnose_points(
    diff: Any, chk: SideResult, other: SideResult, ruleset: Ruleset, bags_before: int, total_before: Any = None,
    side: Side | None = None,
) -> str | None:
    """A short reason for ``recorded - expected == diff`` in points or total, or ``None``.

    Tried in order; the first explanation that accounts for the whole difference wins.
    """
    if diff == 0:
        return None
    pen = ruleset.bag_penalty
    reached = bags_before + chk.bags_this_hand
    context = ""
    if total_before is not None:
        context = (
            f": {'the side' if side is None else side} began the hand at {_int(total_before)} with {bags_before} bag{'s' if bags_before != 1 else ''}"
            f" and took {chk.bags_this_hand} more"
        )
        if total_before < 0:
            context += f"; the last digit of a negative score ({_int(total_before)}) is not its bag count"
    if chk.bag_penalty < 0 and diff == -chk.bag_penalty:
        return f"bag penalty for reaching {reached} bags not applied{context}"
    if chk.bag_penalty < -pen and diff == -chk.bag_penalty - pen:
        return f"bag penalty applied once, but the bags crossed {ruleset.bag_limit} twice ({reached} bags){context}"
    if (chk.nil_points or other.nil_points) and diff == other.nil_points - chk.nil_points:
        return "nil bonus on the wrong side"
    if chk.nil_points and diff == -2 * chk.nil_points:
        return "made nil scored as failed" if chk.nil_points > 0 else "failed nil scored as made"
    if chk.bag_penalty == 0 and pen and 0 <= reached < ruleset.bag_limit and diff == -pen:
        # (not under bag_limit 0: those rules have no penalty at all, whatever the bags)
        return f"bag penalty applied, but the side has only {reached} bag{'s' if reached != 1 else ''}"
    if not chk.made and chk.contract_points and diff == -2 * chk.contract_points:
        return "set scored as made"
    if chk.made and chk.contract_points and diff == -2 * chk.contract_points - chk.bag_points:
        return "made contract scored as set"
    if chk.bag_points and diff == -chk.bag_points:
        return "overtricks not counted"
    if ruleset.ten_for_two_hundred and chk.made and chk.contract >= 10 and diff == 10 * chk.contract - 200:
        return "10-for-200 not applied"
    return None


def _diagnose_bags(recorded: int, chk: SideResult, ruleset: Ruleset, bags_before: int) -> str | None:
    if chk.bag_penalty < 0 and recorded == bags_before + chk.bags_this_hand:
        return f"{ruleset.bag_limit} bag{'s' if ruleset.bag_limit != 1 else ''} not removed after the penalty"
    if chk.bags_this_hand and recorded == bags_before:
        return "this hand's bags not added"
    return None


def _log_words(total: Any, bags: int | None) -> str:
    """How a message names the log's own state before a hand: its total, bag count or both."""
    if total is not None and bags is not None:
        return f"the log's own total and bag count before the hand ({_int(total)}, {bags} bags)"
    if total is not None:
        return f"the log's own total before the hand ({_int(total)})"
    return f"the log's own bag count before the hand ({bags})"


class _ScoreChecker:
    """Checks recorded scores against two states (RULES.md section 5, "Checking recorded scores").

    The *true state* is the official score chain of :func:`check_game` (passed in per hand);
    *the log's own state* (kept here) is the last total and bag count the log recorded, the true
    value where a hand records none.
    A recorded value is a SCORE_MISMATCH only when the rules give it from neither state:

    - ``points``: the points the rules give from either state (the bag penalty depends on the
      bags before the hand);
    - ``total``: the true total, or the log's own total before the hand plus the points the
      rules give from either state;
    - ``bags``: either state's bags plus this hand's bags, after the penalty;
    - ``score_before``/``bags_before`` of a later hand: either state's total and bags.

    The finding's ``expected`` is the true-state value; its message may add the log-state one.
    An explanation is added only when it accounts for this hand's own error from that state.
    """

    def __init__(
        self, gid: str, ruleset: Ruleset, findings: list[Finding], totals: Sequence[Any], bags: Sequence[int]
    ) -> None:
        self.gid = gid
        self.ruleset = ruleset
        self.findings = findings
        self.totals: list[Any] = list(totals)  # the log's own state
        self.bags: list[int] = list(bags)

    def restart(self, totals: Sequence[Any], bags: Sequence[int]) -> None:
        """The log's own state is the true one again (after a hand whose score is not checked)."""
        self.totals = list(totals)
        self.bags = list(bags)

    def _add(self, h: int, side: Side, fld: str, recorded: Any, expected: Any, text: str) -> None:
        self.findings.append(
            Finding(
                code=SCORE_MISMATCH,
                game_id=self.gid,
                hand=h,
                side=side,
                message=f"{where(h)}: {side} {fld.replace('_', ' ')} recorded {recorded}, rules give {_int(expected)}{text}",
                field=fld,
                recorded=recorded,
                expected=_int(expected),
            )
        )

    def check(
        self,
        rec: HandRecord,
        hc: HandCheck,
        true_totals: tuple[Any, Any],
        true_bags: tuple[int, int],
        *,
        first: bool,
        check_before: bool = True,
        check_score: bool = True,
    ) -> None:
        """Check hand ``rec``'s recorded values; ``true_totals``/``true_bags``: the true state
        before the hand.  ``check_before``: check its ``score_before``/``bags_before`` (not on
        the first hand nor after a missing one: there they are where the true state starts).
        ``check_score``: check its points, total and bags (not when its tricks are unknown or a
        hand before it is missing)."""
        h = rec.hand
        rs = self.ruleset
        if rec.score_before is not None:
            for side in SIDES:
                v = rec.score_before[side]
                if check_before and not first and v != true_totals[side] and v != self.totals[side]:
                    extra = "" if self.totals[side] == true_totals[side] else f"; the log's own last total is {_int(self.totals[side])}"
                    self._add(h, side, "score_before", v, true_totals[side], extra)
                self.totals[side] = v
        if rec.bags_before is not None:
            for side in SIDES:
                v = rec.bags_before[side]
                if check_before and not first and v != true_bags[side] and v != self.bags[side]:
                    extra = "" if self.bags[side] == true_bags[side] else f"; the log's own last bag count is {self.bags[side]}"
                    self._add(h, side, "bags_before", v, true_bags[side], extra)
                self.bags[side] = v
        if not check_score:
            return
        taken = hc.replay.taken_for_score
        if hc.after_penalty is not None:
            taken = apply_renege_penalty(taken, hc.replay.bids, hc.replay.reneges, rs.renege_penalty_tricks)
        bids = hc.replay.bids
        true = [score_side(rs, s, bids, taken, true_totals[s], true_bags[s]) for s in SIDES]
        if all(self.totals[s] == true_totals[s] and self.bags[s] == true_bags[s] for s in SIDES):
            log = true  # the usual case: the log is on the true track
        else:
            log = [score_side(rs, s, bids, taken, self.totals[s], self.bags[s]) for s in SIDES]
        for side in SIDES:
            sc = rec.score[side] if rec.score is not None else None
            lt, lb = self.totals[side], self.bags[side]
            if sc is not None:
                self._check_side(h, side, sc, true, log, true_totals[side], true_bags[side], lt, lb, first and rec.score_before is None)
            # the log's own state after the hand: what it recorded, the true value where it
            # recorded none (RULES.md section 5)
            self.totals[side] = sc.total if sc is not None and sc.total is not None else true[side].total
            self.bags[side] = sc.bags if sc is not None and sc.bags is not None else true[side].bags

    def _check_side(
        self, h: int, side: Side, sc: Any, true: list[SideResult], log: list[SideResult],
        tt: Any, tb: int, lt: Any, lb: int, mid_game_start: bool,
    ) -> None:
        rs = self.ruleset
        t, lg = true[side], log[side]
        t_other, lg_other = true[side.other], log[side.other]
        bags_differ = lb != tb
        if sc.points is not None and sc.points != t.points and sc.points != lg.points:
            why = _diagnose_points(sc.points - t.points, t, t_other, rs, tb, tt, side)
            text = f" ({why})" if why else ""
            if lg.points != t.points:
                why_l = _diagnose_points(sc.points - lg.points, lg, lg_other, rs, lb, lt, side)
                text += f"; from {_log_words(None, lb)} they give {_int(lg.points)}" + (f" ({why_l})" if why_l else "")
            self._add(h, side, "points", sc.points, t.points, text)
        if sc.total is not None and sc.total not in (t.total, lt + t.points, lt + lg.points):
            why = None
            if lt == tt:  # else the difference from the true total holds a value carried over
                why = _diagnose_points(sc.total - t.total, t, t_other, rs, tb, tt, side)
                if why is None and mid_game_start and (sc.points is None or sc.points == t.points):
                    # a log that starts mid-game without saying the score before it (Trickster exports)
                    why = (
                        f"the log records no score before this hand; if the game began earlier, "
                        f"{side} had {_int(sc.total - t.points)} before it"
                    )
            text = f" ({why})" if why else ""
            exp_l = lt + lg.points
            if exp_l != t.total:
                why_l = _diagnose_points(sc.total - exp_l, lg, lg_other, rs, lb, lt, side)
                words = _log_words(lt if lt != tt else None, lb if bags_differ else None)
                text += f"; from {words} they give {_int(exp_l)}" + (f" ({why_l})" if why_l else "")
            self._add(h, side, "total", sc.total, t.total, text)
        if sc.bags is not None and sc.bags != t.bags and sc.bags != lg.bags:
            why = _diagnose_bags(sc.bags, t, rs, tb)
            text = f" ({why})" if why else ""
            if lg.bags != t.bags:
                why_l = _diagnose_bags(sc.bags, lg, rs, lb)
                text += f"; from {_log_words(None, lb)} they give {lg.bags}" + (f" ({why_l})" if why_l else "")
            self._add(h, side, "bags", sc.bags, t.bags, text)


# --- one game -----------------------------------------------------------------------------------


def _rules_text(spec: Any) -> str:
    return spec if isinstance(spec, str) else repr(spec)


def _score_rows(hc: HandCheck, gid: str, h: int) -> list[dict[str, Any]]:
    """The two ``hand_scores`` rows of a hand (TABLES.md key game_id, hand, side): the official score,
    and under a renege penalty the as-played values beside it (``as_played_*``, RULES.md section 5)."""
    rows = []
    scoring = AS_PLAYED if hc.after_penalty is None else AFTER_PENALTY
    for k, r in enumerate(hc.official):
        row = {c: _int(v) for c, v in r.row().items()}
        played = None if hc.after_penalty is None else hc.as_played[k].row()
        extra = {f"as_played_{c}": None if played is None else _int(played[c]) for c in AS_PLAYED_COLUMNS}
        rows.append({"game_id": gid, "hand": h, **row, "scoring": scoring, **extra, "contract_value": float(r.contract)})
    return rows


class GameRun:
    """The check of one game, hand after hand: the state between hands and :meth:`check_hand`.

    :func:`check_game` runs every hand through it.  It is also the per-hand entry point of the
    compiled core (:mod:`spadework.analysis.engine.compiled`), which sets the state before a hand
    with findings (``chain``/``pchain`` totals, bags and end, ``scores`` for the log's own state,
    ``prev``, ``index``, ``ended_at_hand``) from the values it computed, and has only that hand
    re-checked here to write the findings' messages.
    """

    def __init__(self, gid: str, rs: Ruleset, findings: list[Finding], start_totals: Any, start_bags: Any) -> None:
        self.gid = gid
        self.rs = rs
        self.findings = findings
        self.chain = ScoreChain(rs, start_totals, start_bags)
        self.pchain = ScoreChain(rs, start_totals, start_bags) if rs.renege_penalty_tricks > 0 else None
        self.scores = _ScoreChecker(gid, rs, findings, start_totals, start_bags)
        self.ended_at_hand: int | None = None
        self.prev: HandRecord | None = None
        # the seat that should have dealt the previous hand: its recorded dealer, or, when that dealer
        # was out of rotation, the seat left of the recorded dealer before it (the dealer check below)
        self.should_dealer: Seat | None = None
        self.index = 0

    @property
    def official(self) -> ScoreChain:
        """The chain the game goes by (after the renege penalty when the ruleset has one)."""
        return self.pchain if self.pchain is not None else self.chain

    def check_hand(self, rec: HandRecord, clean_play: CleanPlay | None = None) -> HandCheck:
        """Check the next hand ``rec``: its findings go to ``findings``; returns its :class:`HandCheck`.
        ``clean_play``: what a replay of ``rec`` that found nothing in its deal or card play gave (see
        :func:`~spadework.analysis.engine.replay.replay_hand`)."""
        gid, rs, findings = self.gid, self.rs, self.findings
        chain, pchain, official, scores, prev = self.chain, self.pchain, self.official, self.scores, self.prev
        fixed = rs.fixed_dealer
        findings.players = rec.players  # findings name the player at their seat (findings.FindingList)
        h = rec.hand
        # a hand missing before this one (RULES.md section 7, "Gaps in the record")
        missing = range(prev.hand + 1, h) if prev is not None else range(0)  # a range: the gap may be huge
        if missing:
            findings.append(_missing_finding(gid, rec, missing))
            if rec.score_before is not None:
                for c in (chain, pchain):
                    if c is not None:
                        c.restart(rec.score_before, rec.bags_before)
                scores.restart(official.totals, official.bags)
        # its recorded score is checked unless the state before it or its tricks are unknown
        check_score = not missing or rec.score_before is not None
        # dealer
        dealer_should = rec.dealer
        if fixed is not None:
            if rec.dealer != fixed:
                findings.append(_dealer_finding(gid, rec, fixed, f"the {rs.preset} rules have {fixed} deal every hand"))
        elif prev is not None and h > prev.hand:
            # RULES.md section 1: left of the previous hand's dealer.  After a dealer out of rotation,
            # the seat left of the one that should have dealt that hand (left of the dealer before it)
            # is in rotation too (the log went back on track), so one mistyped dealer is one finding,
            # as one wrong score is (section 5); the memory is one hand deep, so a later change of
            # rotation, a seat dealing every hand or a table dealing the wrong way is still found.
            step = h - prev.hand
            expected = prev.dealer.after(step)
            should = self.should_dealer if self.should_dealer is not None else prev.dealer
            back = should.after(step)
            if rec.dealer in (expected, back):
                dealer_should = rec.dealer
            else:
                gap = "" if step == 1 else f" and {step - 1} hand(s) unrecorded in between"
                why = f"hand {prev.hand} was dealt by {prev.dealer}{gap}"
                if back != expected:
                    why += f"; or {back}, had hand {prev.hand} been dealt by {should} as the rotation has it"
                findings.append(_dealer_finding(gid, rec, expected, why))
                dealer_should = expected  # (from the previous recorded dealer: the memory stays one hand deep)
        # after the end
        if official.over:
            assert official.winner is not None and official.final_totals is not None
            ft = official.final_totals
            findings.append(
                Finding(
                    code=PLAYED_AFTER_GAME_END,
                    game_id=gid,
                    hand=h,
                    message=f"{where(h)}: played after the game ended at hand {self.ended_at_hand} "
                    f"({official.winner} won, NS {_int(ft[0])} EW {_int(ft[1])})",
                )
            )
        totals_before = official.totals
        bags_before = official.bags
        bid_totals = totals_before if check_score else _recorded_before(rec)
        try:
            replay = replay_hand(
                rec,
                rs,
                score_before=None if bid_totals is None else (_int(bid_totals[0]), _int(bid_totals[1])),
                scores_known=bid_totals is not None,
                policy=findings.policy,
                clean_play=clean_play,
            )
        except CheckError as exc:  # under "raise": the finding names its player as the collected ones do
            raise CheckError(exc.finding.named(rec.players)) from None
        findings.extend(replay.findings)
        if not replay.score_known:
            check_score = False
        # a hand whose score is not checked: the true state goes on from its recorded total and bags
        go_on: dict[str, Any] = {}
        if not check_score and rec.score is not None:
            go_on = {
                "totals_after": tuple(rec.score[s].total for s in SIDES),
                "bags_after": tuple(rec.score[s].bags for s in SIDES),
            }
        as_played = chain.add(replay.bids, replay.taken_for_score, **go_on)
        after = None
        if pchain is not None:
            taken_p = apply_renege_penalty(replay.taken_for_score, replay.bids, replay.reneges, rs.renege_penalty_tricks)
            after = pchain.add(replay.bids, taken_p, **go_on)
        hc = HandCheck(rec, replay, as_played, after)
        if official.over and self.ended_at_hand is None:
            self.ended_at_hand = h
        scores.check(
            rec, hc, totals_before, bags_before, first=self.index == 0, check_before=not missing, check_score=check_score
        )
        if not check_score:
            scores.restart(official.totals, official.bags)
        # recorded winner
        if rec.winner is not None:
            _check_winner(gid, rec, official, self.ended_at_hand, rs, findings)
        self.prev = rec
        self.should_dealer = dealer_should
        self.index += 1
        return hc


def check_game(
    records: Iterable[HandRecord],
    ruleset_override: Any = None,
    *,
    policy: ErrorPolicy | str = ErrorPolicy.COLLECT,
) -> GameCheck:
    """Check one game: every hand replayed and scored, in hand order.

    ``records``: the game's hands (any order; sorted by hand number).
    ``ruleset_override``: a ruleset (anything :func:`~spadework.analysis.engine.rules.get_ruleset`
    takes) that wins over the records' ``rules`` (the CLI's ``--rules``).
    ``policy``: ``"raise"`` raises :class:`~spadework.analysis.engine.findings.CheckError` at the first finding.

    The game's ruleset is its first hand's ``rules``; a later hand naming other rules
    gets RULES_MIXED (the game stays under the first); unreadable rules get
    RULES_INVALID and the game is checked under the preset they name, where that can be read, else
    ``standard`` (:func:`~spadework.analysis.engine.rules.fallback_ruleset`).
    Raises ``ValueError`` for no records or records of several games, and
    :class:`~spadework.analysis.engine.rules.RulesError` for a bad ``ruleset_override``.
    """
    recs = sorted(records, key=lambda r: r.hand)
    if not recs:
        raise ValueError("check_game needs at least one hand record")
    gid = recs[0].game_id
    if any(r.game_id != gid for r in recs):
        raise ValueError(f"check_game got hands of several games ({gid!r} and others); use iter_game_checks")
    findings = FindingList(policy)

    # --- the ruleset
    if ruleset_override is not None:
        rs = get_ruleset(ruleset_override)
    else:
        key0, rs0 = rules_key(recs[0].rules)
        if rs0 is None:
            rs0 = fallback_ruleset(recs[0].rules)
            findings.append(
                Finding(
                    code=RULES_INVALID,
                    game_id=gid,
                    hand=recs[0].hand,
                    message=f"{where(recs[0].hand)}: rules {_rules_text(recs[0].rules)} cannot be read "
                    f"({_rules_error(recs[0].rules)}); the game is checked under {ruleset_name(rs0)}",
                )
            )
        rs = rs0
        for r in recs[1:]:
            key, _ = rules_key(r.rules)
            if key != key0:
                findings.append(
                    Finding(
                        code=RULES_MIXED,
                        game_id=gid,
                        hand=r.hand,
                        message=f"{where(r.hand)}: rules {_rules_text(r.rules)} differ from the game's rules "
                        f"{_rules_text(recs[0].rules)} (hand {recs[0].hand}); the game is checked under {ruleset_name(rs)}",
                    )
                )
    name = ruleset_name(rs)

    # --- the chains
    first = recs[0]
    run = GameRun(gid, rs, findings, first.score_before or (0, 0), first.bags_before or (0, 0))
    hands: list[HandCheck] = []
    trick_rows: list[dict[str, Any]] = []
    score_rows: list[dict[str, Any]] = []
    for rec in recs:
        hc = run.check_hand(rec)
        hands.append(hc)
        h = rec.hand
        for t in hc.replay.tricks:
            trick_rows.append(
                {
                    "game_id": gid,
                    "hand": h,
                    "trick": t.number,
                    "leader": str(t.leader),
                    "led_suit": t.led_suit,
                    "winner": None if t.winner is None else str(t.winner),
                    "spades_broken": t.spades_broken,
                }
            )
        score_rows.extend(_score_rows(hc, gid, h))
    official, ended_at_hand = run.official, run.ended_at_hand

    totals = official.result_totals()
    totals_i = (_int(totals[0]), _int(totals[1]))
    game_row = {
        "game_id": gid,
        "rules": name,
        "hands": len(recs),
        "total_ns": totals_i[0],
        "total_ew": totals_i[1],
        "winner": None if official.winner is None else str(official.winner),
        "ended_at_hand": ended_at_hand,
    }
    return GameCheck(
        game_id=gid,
        ruleset=rs,
        rules=name,
        findings=list(findings),
        hands=hands,
        tricks=trick_rows,
        hand_scores=score_rows,
        game=game_row,
        totals=totals_i,
        winner=official.winner,
        ended_at_hand=ended_at_hand,
    )


def _recorded_before(rec: HandRecord) -> tuple[Any, Any] | None:
    """The totals (NS, EW) a log shows before a hand: its recorded totals less its recorded
    points, or ``None`` when it does not record both for both sides."""
    if rec.score is None:
        return None
    out = []
    for s in SIDES:
        sc = rec.score[s]
        if sc.total is None or sc.points is None:
            return None
        out.append(sc.total - sc.points)
    return out[0], out[1]


def _missing_finding(gid: str, rec: HandRecord, missing: range) -> Finding:
    """HAND_MISSING on the first hand after a gap in the hand numbers (RULES.md section 7)."""
    h = rec.hand
    if len(missing) == 1:
        what = f"hand {missing[0]} is"
    elif len(missing) == 2:
        what = f"hands {missing[0]} and {missing[1]} are"
    else:
        what = f"hands {missing[0]} to {missing[-1]} are"
    if rec.score_before is not None:
        then = f"the game goes on from hand {h}'s recorded score before it"
    elif rec.score is not None:
        then = f"hand {h}'s recorded score is not checked, and the game goes on from it"
    else:
        then = "the recomputed totals leave " + ("it" if len(missing) == 1 else "them") + " out"
    return Finding(
        code=HAND_MISSING,
        game_id=gid,
        hand=h,
        message=f"{where(h)}: {what} missing (not in the log, or rejected when it was read); {then}",
    )


def _rules_error(spec: Any) -> str:
    try:
        get_ruleset(spec)
    except RulesError as exc:
        return str(exc)
    return "no error"


def _dealer_finding(gid: str, rec: HandRecord, expected: Any, why: str) -> Finding:
    return Finding(
        code=DEALER_OUT_OF_ROTATION,
        game_id=gid,
        hand=rec.hand,
        seat=rec.dealer,
        side=rec.dealer.side,
        message=f"{where(rec.hand)}: dealt by {rec.dealer}, but {expected} should have dealt ({why})",
        field="dealer",
        recorded=str(rec.dealer),
        expected=str(expected),
    )


def _check_winner(
    gid: str, rec: HandRecord, chain: ScoreChain, ended_at_hand: int | None, rs: Ruleset, findings: list[Finding]
) -> None:
    w = rec.winner
    assert w is not None
    if chain.winner is None:
        t = chain.totals
        why = f"the game is not over (NS {_int(t[0])}, EW {_int(t[1])}; target {rs.target})"
        expected = None
    elif chain.winner != w:
        t = chain.final_totals or chain.totals
        why = f"the rules give {chain.winner} the game (NS {_int(t[0])}, EW {_int(t[1])}, ended at hand {ended_at_hand})"
        expected = str(chain.winner)
    else:
        return
    findings.append(
        Finding(
            code=GAME_RESULT_MISMATCH,
            game_id=gid,
            hand=rec.hand,
            side=w,
            message=f"{where(rec.hand)}: {w} recorded as the winner, but {why}",
            field="winner",
            recorded=str(w),
            expected=expected,
        )
    )


# --- many games ---------------------------------------------------------------------------------


def iter_game_checks(
    records: Iterable[HandRecord],
    rules: Any = None,
    policy: ErrorPolicy | str = ErrorPolicy.COLLECT,
) -> Iterator[GameCheck]:
    """Check records ordered by game (consecutive records of one ``game_id`` form a game).

    ``rules``: an override for every game (see :func:`check_game`).  Yields one
    :class:`GameCheck` per game, streaming (one game in memory at a time).
    """
    override = get_ruleset(rules) if rules is not None else None
    for _, group in itertools.groupby(records, key=lambda r: r.game_id):
        yield check_game(list(group), override, policy=policy)


@dataclass
class CheckSummary:
    """What :func:`check_db` did: counts and the findings.

    ``by_code``: findings per code; ``games_with_findings``: game ids with at least one.
    """

    games: int = 0
    hands: int = 0
    findings: list[Finding] = field(default_factory=list)
    by_code: Counter = field(default_factory=Counter)
    games_with_findings: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """True when no finding was made."""
        return not self.findings

    def add(self, gc: GameCheck) -> None:
        self.games += 1
        self.hands += len(gc.hands)
        if gc.findings:
            self.games_with_findings.append(gc.game_id)
            self.findings.extend(gc.findings)
            self.by_code.update(f.code for f in gc.findings)


class DerivedWriter:
    """Buffers rows of the derived tables and inserts them in batches through pyarrow.

    ``con``: the connection (or cursor) to write with, or ``None`` for a writer that only
    collects columns (it never flushes; hand its ``buffers`` to :meth:`add_buffers`);
    ``batch_rows``: rows per table buffered before an insert.
    """

    TABLES = ("tricks", "violations", "hand_scores", "games")

    def __init__(self, con, batch_rows: int = 50_000) -> None:
        import pyarrow as pa

        self._pa = pa
        self.con = con
        self.batch_rows = batch_rows
        self.columns = {t: column_types(DERIVED_TABLES[t]) for t in self.TABLES}
        self.schemas = {t: arrow_schema(DERIVED_TABLES[t]) for t in self.TABLES}
        self.buffers: dict[str, dict[str, list]] = {t: {c: [] for c, _ in cols} for t, cols in self.columns.items()}
        self.counts: dict[str, int] = dict.fromkeys(self.TABLES, 0)

    def add_rows(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        buf = self.buffers[table]
        n = 0
        for row in rows:
            for c, col in buf.items():
                col.append(row.get(c))
            n += 1
        self.counts[table] += n
        if n and self.con is not None and len(next(iter(buf.values()))) >= self.batch_rows:
            self._flush(table)

    def add_buffers(self, buffers: dict[str, dict[str, list]]) -> None:
        """Buffer the columns another writer collected (``other.buffers``; e.g. from a worker
        process that checked games with ``DerivedWriter(None)``)."""
        for table, cols in buffers.items():
            buf = self.buffers[table]
            n = len(next(iter(cols.values()), []))
            for c, col in buf.items():
                col.extend(cols[c])
            self.counts[table] += n
            if n and len(next(iter(buf.values()))) >= self.batch_rows:
                self._flush(table)

    def add(self, gc: GameCheck) -> None:
        """Buffer one game's rows."""
        self.add_rows("tricks", gc.tricks)
        self.add_rows("violations", gc.violations)
        self.add_rows("hand_scores", gc.hand_scores)
        self.add_rows("games", [gc.game])

    def _flush(self, table: str) -> None:
        from spadework.analysis.engine import storage

        buf = self.buffers[table]
        if not next(iter(buf.values())):
            return
        if table == "tricks" and "tricks" not in storage.derived_tables(self.con):  # stored: one row per hand
            storage.insert_arrow(self.con, storage.CHECKED_TRICKS, storage.checked_tricks_table(buf))
        else:
            storage.insert_arrow(self.con, table, self._pa.table(buf, schema=self.schemas[table]))
        for col in buf.values():
            col.clear()

    def flush(self) -> None:
        """Insert everything buffered."""
        for t in self.TABLES:
            self._flush(t)


def replace_derived_tables(con) -> None:
    """Empty the derived tables ``tricks``, ``violations``, ``hand_scores``, ``games``
    (:func:`spadework.analysis.engine.storage.reset_derived`)."""
    from spadework.analysis.engine.storage import reset_derived

    reset_derived(con)


def check_db(
    con,
    rules: Any = None,
    policy: ErrorPolicy | str = "collect",
    progress: Callable[[int, int], None] | bool | None = None,
) -> CheckSummary:
    """Check every hand of a loaded database and REPLACE its derived tables.

    ``con``: a ``duckdb.DuckDBPyConnection`` holding the loaded tables (TABLES.md);
    records are read with ``spadework.parsers.db.iter_records(con)`` (ordered by game_id, hand).
    ``rules``: a ruleset override for every game (preset name, dict or Ruleset).
    ``policy``: ``"collect"`` (all findings) or ``"raise"`` (stop at the first with
    :class:`~spadework.analysis.engine.findings.CheckError`; the derived tables are then left as they were).
    ``progress``: a callable, called as ``progress(games_done, hands_done)`` after each
    game, or ``True`` for a rich progress bar on standard error (hands checked of all).

    Fills ``tricks``, ``violations``, ``hand_scores``, ``games`` in one transaction
    (batched inserts through pyarrow) that also records the load generation it covered
    (:func:`spadework.parsers.state.mark_checked`); a check that fails leaves no mark.
    Raises :class:`~spadework.analysis.engine.rules.RulesError` for a bad ``rules``.
    """
    from spadework.parsers.db import iter_records  # the lead's loader; imported late so this module loads without it

    override = get_ruleset(rules) if rules is not None else None
    pol = ErrorPolicy.parse(policy)
    summary = CheckSummary()
    bar = None
    if progress is True:
        progress, bar = _progress_bar(con)
    elif progress is False:
        progress = None
    generation = loaded_generation(con)  # what the tables hold as the check starts
    w = con.cursor()  # a second connection: writing must not disturb the reader's open result
    w.begin()
    try:
        replace_derived_tables(w)
        writer = DerivedWriter(w)
        for gc in iter_game_checks(iter_records(con), override, pol):
            writer.add(gc)
            summary.add(gc)
            if progress is not None:
                progress(summary.games, summary.hands)
        writer.flush()
        mark_checked(w, generation)  # readers now trust the derived tables (spadework.parsers.state)
        w.commit()
    except BaseException:
        w.rollback()
        raise
    finally:
        w.close()
        if bar is not None:
            bar.stop()
    return summary


def _progress_bar(con) -> tuple[Callable[[int, int], None], Any]:
    from rich.console import Console
    from rich.progress import Progress

    total = con.execute("SELECT count(*) FROM hands").fetchone()[0]
    bar = Progress(console=Console(stderr=True, emoji=False), transient=True)
    task = bar.add_task("checking hands", total=total)
    bar.start()

    def update(games: int, hands: int) -> None:
        bar.update(task, completed=hands)

    return update, bar


def check_records(
    records: Iterable[HandRecord], rules: Any = None, policy: ErrorPolicy | str = "collect"
) -> CheckSummary:
    """Check records without a database (ordered by game, then hand); returns the summary."""
    summary = CheckSummary()
    for gc in iter_game_checks(records, rules, policy):
        summary.add(gc)
    return summary


__all__ = [
    "AFTER_PENALTY",
    "AS_PLAYED",
    "CheckSummary",
    "DerivedWriter",
    "GameCheck",
    "GameRun",
    "HandCheck",
    "check_db",
    "check_game",
    "check_records",
    "iter_game_checks",
    "replace_derived_tables",
]
