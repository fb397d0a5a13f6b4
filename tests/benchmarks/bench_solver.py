"""Benchmark the double-dummy solver on full 52-card deals, against bridge DDS (endplay) in the same run.

Two kinds of position per random deal (issue 14 item 1):

* ``broken``: the four 13-card hands with spades broken and no first-trick rule (spades may be
  led at once), which is bridge play with spades trumps: the same position goes to DDS
  (``solve_board``, OptimalOne: the tricks only) and to our solver (``cards=False``);
* ``spades``: the real Spades question from trick 1 (no spade lead, spades not broken); ours only.

Each solve starts from an empty table (a cold solve, as DDS's first call on a new deal).
Prints median / p95 / max of wall ms (and our process CPU ms) per kind, the ratio to DDS, and
the load average before and after (the machine may be shared: wall times then inflate, CPU
times much less).  Usage::

    python tests/benchmarks/bench_solver.py --deals 300 [--seed 1] [--no-dds] [--cards]

``--cards`` also values every card (ours ``cards=True`` against DDS's all-cards mode).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))
    return xs[i]


def _row(name: str, xs: list[float]) -> str:
    return f"{name:<34} median {statistics.median(xs):8.1f}  p95 {_pct(xs, 95):8.1f}  max {max(xs):8.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-dds", action="store_true", help="skip DDS (endplay not installed)")
    ap.add_argument("--cards", action="store_true", help="value every card too")
    ap.add_argument("--tt-bits", type=int, default=20)
    args = ap.parse_args(argv)

    from spadework.analysis.engine.rules import get_ruleset
    from spadework.analysis.solver import Solver
    from spadework.analysis.solver.position import Position
    from spadework.parsers.cards import format_pbn_hand, sort_cards
    from spadework.parsers.seats import Seat

    use_dds = not args.no_dds
    if use_dds:
        from endplay.dds import solve_board
        from endplay.dds.solve import SolveMode
        from endplay.types import Deal, Denom, Player

    load0 = os.getloadavg()
    rs = get_ruleset("standard")
    any_time = get_ruleset({"spades_lead_any_time": True})
    solver = Solver(tt_bits=args.tt_bits)
    # warm up: compile / load the kernels outside the timings
    solver.solve(Position((("AS",), ("KS",), ("QS",), ("JS",)), Seat.N, (), 13, True, rs), check=False)

    rng = random.Random(args.seed)
    ours_b, ours_b_cpu, dds_b, ratio = [], [], [], []
    ours_s, ours_s_cpu = [], []
    mismatch = 0
    t_start = time.perf_counter()
    for i in range(args.deals):
        cards = list(rs.deck.cards)
        rng.shuffle(cards)
        hands = tuple(tuple(cards[13 * j: 13 * j + 13]) for j in range(4))
        leader = Seat(rng.randrange(4))
        # broken-spades position: bridge with spades trumps (trick number 2 lifts the first-trick rule)
        pos = Position(hands, leader, (), 2, True, any_time)
        solver.clear()
        c0 = time.process_time()
        sol = solver.solve(pos, cards=args.cards, check=False)
        ours_b_cpu.append((time.process_time() - c0) * 1000)
        ours_b.append(sol.ms)
        if use_dds:
            d = Deal("N:" + " ".join(format_pbn_hand(sort_cards(h)) for h in hands))
            d.trump = Denom.spades
            d.first = Player.find(str(leader))
            t0 = time.perf_counter()
            res = list(solve_board(d, SolveMode.Default if args.cards else SolveMode.OptimalOne))
            ms = (time.perf_counter() - t0) * 1000
            dds_b.append(ms)
            ratio.append(sol.ms / ms if ms > 0 else float("nan"))
            best = max(t for _, t in res)
            mover = sol.ew if int(leader) & 1 else sol.ns
            if best != mover:
                mismatch += 1
        # the Spades question from trick 1
        pos1 = Position(hands, leader, (), 1, False, rs)
        solver.clear()
        c0 = time.process_time()
        sol1 = solver.solve(pos1, cards=args.cards)
        ours_s_cpu.append((time.process_time() - c0) * 1000)
        ours_s.append(sol1.ms)
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} deals, {time.perf_counter() - t_start:.0f} s", file=sys.stderr, flush=True)
    load1 = os.getloadavg()

    print(f"bench_solver: {args.deals} random deals, seed {args.seed}, cards={'all' if args.cards else 'best only'}, "
          f"tt 2**{args.tt_bits}")
    print(f"load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after {load1[0]:.2f} {load1[1]:.2f} "
          f"{load1[2]:.2f} on {os.cpu_count()} CPUs")
    print("times in ms per full deal (cold table):")
    print(_row("ours, broken spades (wall)", ours_b))
    print(_row("ours, broken spades (cpu)", ours_b_cpu))
    if use_dds:
        print(_row("DDS (endplay), same positions", dds_b))
        print(_row("ratio ours/DDS (wall)", ratio))
        print(f"{'tricks equal to DDS':<34} {args.deals - mismatch} of {args.deals}")
    print(_row("ours, Spades rules from trick 1 (wall)", ours_s))
    print(_row("ours, Spades rules from trick 1 (cpu)", ours_s_cpu))
    return 1 if mismatch else 0


if __name__ == "__main__":
    raise SystemExit(main())
