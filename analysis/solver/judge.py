"""Every card of a played hand judged double-dummy, and the database command behind ``analyse``.

:func:`judge_hand` replays a :class:`~spadework.parsers.model.HandRecord` with the reference
:class:`~spadework.analysis.engine.replay.PlayState` and asks the solver, before each card, what
the side to play takes with best play (``tricks_best``), what it takes after the card played
(``tricks_played``) and which cards keep ``tricks_best`` (``best_cards``); ``cost`` is the
difference (0 for a double-dummy best card).  Counts are tricks for the side of the seat that
played, from that position to the end of the hand, the current trick included.

What is judged (documented in docs/DOUBLE_DUMMY.md):

- a hand needs a deal of 13 cards per seat, every card of the ruleset's deck once: the recorded
  one, or, where none is recorded and the play is complete, what each seat played (FORMATS.md
  section 1); otherwise it is skipped (``no_deal`` / ``bad_deal``);
- its cards are judged in play order until the first card the rules make impossible to judge:
  a card not held, a renege, an illegal lead, a lead out of turn, or a gap (a trick of fewer
  than 4 cards); the cards after it are not judged and the hand counts as ``cut_short``
  (a position after an illegal card is not one best play could reach); so does a hand whose
  recorded play ends before the last trick (a claim, or a score sheet's hand with no play);
- ``dd_par`` (tricks each side takes from trick 1 with best play) is written for every hand
  with a valid deal, whether or not it was played.

:func:`analyse_db` fills ``card_costs`` and ``dd_par`` for a loaded database with worker
processes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from spadework.analysis.engine.replay import PlayState, first_leader
from spadework.analysis.engine.rules import Ruleset, get_ruleset
from spadework.analysis.solver import kernel
from spadework.analysis.solver.position import Position, PositionError, solver_layout
from spadework.analysis.solver.solve import Solver, _group_top
from spadework.parsers.encoding import CARD_ID
from spadework.parsers.model import HandRecord
from spadework.parsers.seats import SEATS, Seat


@dataclass(frozen=True)
class CardCost:
    """One judged card (a ``card_costs`` row).

    ``trick`` 1..13, ``play_order`` 1..4 within the trick (1 = the leader); ``tricks_best`` and
    ``tricks_played``: tricks the side of ``seat`` takes from the position before the card to
    the end of the hand with best play (before; after this card); ``cost`` = their difference
    (0..13); ``best_cards``: the legal cards that keep ``tricks_best``, in the reference
    ``legal_cards`` order.
    """

    trick: int
    play_order: int
    seat: Seat
    card: str
    tricks_best: int
    tricks_played: int
    cost: int
    best_cards: tuple[str, ...]


@dataclass(frozen=True)
class HandJudgement:
    """The result of :func:`judge_hand`: ``par`` (NS, EW tricks from trick 1 with best play, or
    ``None`` when the hand was skipped), ``cards`` judged, ``status`` one of ``"ok"``,
    ``"no_deal"``, ``"bad_deal"``, ``"unsupported"`` (a custom deck with more cards in a suit than
    the solver takes), ``"cut_short"``, and ``reason`` (why it was skipped or cut)."""

    game_id: str
    hand: int
    par: tuple[int, int] | None
    cards: tuple[CardCost, ...] = ()
    status: str = "ok"
    reason: str = ""
    players: tuple[str | None, str | None, str | None, str | None] = (None, None, None, None)


_PLAY_CODES = {"CARD_NOT_HELD", "RENEGE", "SPADE_LED_FIRST_TRICK", "SPADE_LED_BEFORE_BROKEN", "LEAD_OUT_OF_TURN",
               "LEAD_NOT_TWO_OF_CLUBS"}


def _deal_problem(deal, ruleset: Ruleset) -> str | None:
    deck = ruleset.deck
    seen: set[str] = set()
    for seat, cards in zip(SEATS, deal):
        if len(cards) != 13:
            return f"{seat} was dealt {len(cards)} cards"
        for c in cards:
            if c not in deck:
                return f"{c} is not in the {ruleset.preset} deck"
            if c in seen:
                return f"{c} is dealt twice"
            seen.add(c)
    return None


def judge_hand(record: HandRecord, ruleset: Ruleset | None = None, solver: Solver | None = None) -> HandJudgement:
    """Judge every card of ``record`` (see the module text for what is judged and skipped).

    ``ruleset``: the hand's rules (default: what the record names).  ``solver``: a
    :class:`~spadework.analysis.solver.solve.Solver` to reuse (its arrays; its table is emptied
    at the start of the hand, and each card's search reuses the entries of the cards before).
    Never raises for a bad hand: it comes back with a ``status`` and ``reason``.
    """
    rs = ruleset or get_ruleset(record.rules)
    gid, h = record.game_id, record.hand
    deal = record.effective_deal()
    if deal is None:
        return HandJudgement(
            gid, h, None, status="no_deal", reason="no recorded deal and no complete play", players=record.players
        )
    problem = _deal_problem(deal, rs)
    if problem:
        return HandJudgement(gid, h, None, status="bad_deal", reason=problem, players=record.players)
    try:
        lay = solver_layout(rs.deck)
    except PositionError as exc:  # a custom deck with more cards in a suit than the solver's 16
        return HandJudgement(gid, h, None, status="unsupported", reason=str(exc), players=record.players)
    solver = solver or Solver()
    solver.forget()  # another deal's entries only lengthen the scans (see Solver.forget)
    leader = first_leader(record.dealer, rs, deal)
    state = PlayState.start(deal, leader, rs)
    tt_keys, tt_vals, hist, mv, sc, stats = solver._tables
    out_cards = np.zeros(kernel.MAX_MOVES, dtype=np.int64)
    out_best = np.zeros(kernel.MAX_MOVES, dtype=np.int64)
    known = -1
    par: tuple[int, int] | None = None
    judged: list[CardCost] = []
    status, reason = "ok", ""
    tricks = record.tricks or ()
    for n, t in enumerate(tricks, 1):
        if len(t.cards) < 4:
            status, reason = "cut_short", f"trick {n} has {len(t.cards)} cards"
            break
        if t.leader != state.to_play:
            status, reason = "cut_short", f"trick {n} led by {t.leader}, not {state.to_play}"
            break
        bad = False
        for i, card in enumerate(t.cards):
            seat = state.to_play
            lead = state.trick_leader
            pos = Position(state.hands, seat if lead is None else lead, state.current_trick, state.trick_number,
                           _broken_before(state), rs)
            legal = pos.legal_cards()
            if card not in legal:
                status, reason = "cut_short", f"trick {n}: {seat} played {card}, not a legal card there"
                bad = True
                break
            st = solver._state(pos)
            _, hh, ldr, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, flags = st
            played = int(lay.bit[CARD_ID[card]])
            ns, after, m = kernel.judge_position(
                hh, ldr, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, played, known, flags,
                tt_keys, tt_vals, hist, mv, sc, stats, out_cards, out_best,
            )
            ns, after, m = int(ns), int(after), int(m)
            if par is None:
                par = (ns, tl - ns)
            best_tops = {int(out_cards[j]) for j in range(m) if out_best[j]}
            live = int(hh[0] | hh[1] | hh[2] | hh[3] | tmask)
            lmask = 0
            for c in legal:
                lmask |= 1 << int(lay.bit[CARD_ID[c]])
            best = tuple(c for c in legal if _group_top(int(lay.bit[CARD_ID[c]]), live, lmask) in best_tops)
            ew = int(seat) & 1
            tb = tl - ns if ew else ns
            tp = tl - after if ew else after
            judged.append(CardCost(n, i + 1, seat, card, tb, tp, tb - tp, best))
            done = state.play(card)
            # the next position's NS value: the same trick, or the next one less this trick's winner
            if done is None:
                known = after
            else:
                known = after - (1 if (int(done.winner) & 1) == 0 else 0)
        if bad:
            break
    if status == "ok" and len(tricks) < 13:
        # a claimed hand (tricks taken recorded after some tricks), or bids and score alone: the
        # recorded cards are judged, the rest of the play is not known
        status = "cut_short"
        reason = f"the recorded play ends after trick {len(tricks)}" if tricks else "no play recorded (par only)"
    if par is None:
        # a hand with no play: solve the deal from trick 1 anyway
        pos = Position(tuple(tuple(c) for c in deal), leader, (), 1, False, rs)
        sol = solver.solve(pos, cards=False)
        par = (sol.ns, sol.ew)
    return HandJudgement(gid, h, par, tuple(judged), status, reason, record.players)


def _broken_before(state: PlayState) -> bool:
    """Whether spades were broken before the current trick (PlayState's flag counts this trick too)."""
    if not state.current_trick:
        return state.spades_broken
    return any(t.cards and any(state.ruleset.suits[c] == "S" for c in t.cards) for t in state.completed)


# --- the database command ---------------------------------------------------------------------------


@dataclass
class AnalyseSummary:
    """What :func:`analyse_db` did: hands seen, judged in full, cut short, skipped (by reason),
    cards judged, seconds."""

    hands: int = 0
    judged: int = 0
    cut_short: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    cards: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)


_WORKER_SOLVER: Solver | None = None


def _work(rows_batch) -> list[HandJudgement]:
    global _WORKER_SOLVER
    from spadework.parsers.db import records_from_rows

    columns, parts = rows_batch
    if _WORKER_SOLVER is None:
        _WORKER_SOLVER = Solver()
    return [judge_hand(rec, solver=_WORKER_SOLVER) for rec in records_from_rows(columns, iter(parts))]


def analyse_db(con, *, workers: int | None = None, progress: Callable[[int, int], None] | bool | None = None,
               batch: int = 4) -> AnalyseSummary:
    """Judge every loaded hand and (re)fill ``card_costs`` and ``dd_par`` (their DDL:
    :data:`spadework.parsers.schema.ANALYSIS_TABLES`).

    ``con``: a DuckDB connection to a database made by ``spadework load``; ``workers``: worker
    processes (default: the CPU count; 1 = in this process; never more than the batches of ``batch``
    hands, so a database with at most ``batch`` hands is judged in this process); ``progress(done, total)`` is called
    after each batch of hands, ``True`` shows a rich progress bar on standard error.
    Returns an :class:`AnalyseSummary`.
    """
    import time

    from spadework.analysis.engine.storage import in_transaction
    from spadework.parsers.db import record_rows
    from spadework.parsers.schema import ANALYSIS_TABLES, create_tables

    t0 = time.perf_counter()
    create_tables(con, ANALYSIS_TABLES)
    total = con.execute("SELECT count(*) FROM hands").fetchone()[0]
    columns, parts = record_rows(con)
    batches = _batches(columns, parts, batch)
    # never more workers than batches of hands: a database with nothing to judge starts none
    workers = max(1, min(workers or os.cpu_count() or 1, -(-total // max(1, batch))))
    summary = AnalyseSummary()
    done = 0
    bar = None
    if progress is True:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(TextColumn("judging cards"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                       console=Console(stderr=True, emoji=False), transient=True)
        task = bar.add_task("hands", total=total)
        bar.start()
        progress = lambda d, t: bar.update(task, completed=d)  # noqa: E731
    elif progress is False:
        progress = None

    def take(results: Iterable[HandJudgement]) -> None:
        nonlocal done
        cc_rows, par_rows = [], []
        for j in results:
            summary.hands += 1
            done += 1
            if j.status in ("no_deal", "bad_deal", "unsupported"):
                summary.skipped[j.status] = summary.skipped.get(j.status, 0) + 1
                if len(summary.examples) < 5:
                    summary.examples.append(f"{j.game_id} hand {j.hand}: {j.reason}")
                continue
            if j.status == "cut_short":
                summary.cut_short += 1
                if len(summary.examples) < 5:
                    summary.examples.append(f"{j.game_id} hand {j.hand}: {j.reason}")
            else:
                summary.judged += 1
            par_rows.append((j.game_id, j.hand, j.par[0], j.par[1]))  # type: ignore[index]
            for c in j.cards:
                cc_rows.append((j.game_id, j.hand, c.trick, c.play_order, str(c.seat), j.players[c.seat], c.card,
                                c.tricks_best, c.tricks_played, c.cost, " ".join(c.best_cards)))
        summary.cards += len(cc_rows)
        if cc_rows:
            con.executemany("INSERT INTO card_costs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", cc_rows)
        if par_rows:
            con.executemany("INSERT INTO dd_par VALUES (?, ?, ?, ?)", par_rows)
        if progress:
            progress(done, total)

    def run() -> None:
        con.execute("DELETE FROM card_costs")
        con.execute("DELETE FROM dd_par")
        if workers <= 1:
            for b in batches:
                take(_work(b))
            return
        import multiprocessing as mp

        # not "fork": this process has threads (DuckDB's, the progress bar's), and a child forked
        # while one of them holds a lock can wait on it for ever (an audit saw analyse hang once in
        # six runs).  The fork server is a fresh process; its children start from it.
        ctx = mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods() else mp.get_context("spawn")
        with ctx.Pool(workers, initializer=_leave_interrupts_to_the_parent) as pool:
            for res in pool.imap_unordered(_work, batches):
                take(res)

    try:
        # one transaction: an interrupted or failed run (Ctrl-C, SIGTERM, an error) leaves the tables
        # of the run before, not a part of this one that stats and the report would take for the whole
        in_transaction(con, run)
    finally:
        if bar is not None:
            bar.stop()
    summary.seconds = time.perf_counter() - t0
    return summary


def _leave_interrupts_to_the_parent() -> None:
    """A worker ignores Ctrl-C: the terminal sends it to the whole process group, and the command
    (the parent) stops the pool itself.  A worker that took it printed its traceback, and one that
    died of it while the parent ignores it (a script's background job) was replaced, its batch lost,
    and the parent waited for it for ever."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _batches(columns, parts, size: int):
    buf = []
    for p in parts:
        buf.append(p)
        if len(buf) >= size:
            yield (columns, buf)
            buf = []
    if buf:
        yield (columns, buf)


__all__ = ["AnalyseSummary", "CardCost", "HandJudgement", "analyse_db", "judge_hand"]
