"""Benchmark: how fast the simulator plays hands, on one core, against baselines in the same run.

Run:  python tests/benchmarks/bench_simulate.py [--hands 20000] [--repeat 5] [--profile]

Measured (best and median of ``--repeat`` interleaved repetitions, hands per second):

- ``random-legal``: the baseline.  Deal, then 52 cards each drawn at random from
  ``PlayState.legal_cards()`` and played with ``PlayState.play`` - the replay engine
  alone, no bidding, no judgement, no records.  Every simulated hand pays this floor.
- ``engine-only``: the same loop with the first legal card (no random draws at all).
- ``simulate``: :func:`spadework.analysis.sim.simulate_season` with the default club and no
  faults - whole games: deal, bids, bots' play, scores, hand records.
- ``simulate+faults``: the same with ``fault_rate=0.05``.
- ``simulate+jsonl``: simulate and write JSON Lines (``spadework.parsers.jsonl``) to a temporary file.

Times are the process's CPU time (``time.process_time``): "on one core" even when other
programs share the machine.  Printed as hands/s and as ratios to the ``random-legal``
baseline, so a busy machine moves both sides alike.  The issue's target: ``simulate`` at
least 5,000 hands/s.  A script, not a test: nothing here is asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from spadework.analysis.engine.replay import PlayState, first_leader  # noqa: E402
from spadework.analysis.engine.rules import get_ruleset  # noqa: E402
from spadework.analysis.sim import simulate_season, write_season  # noqa: E402
from spadework.parsers.seats import SEATS  # noqa: E402

TARGET = 5000.0


def random_legal(hands: int, seed: int = 1, rules: str = "standard", first: bool = False) -> float:
    """Seconds to deal and play ``hands`` hands with random (or first) legal cards through PlayState."""
    rs = get_ruleset(rules)
    rng = random.Random(seed)
    cards = list(rs.deck.cards)
    t = time.process_time()
    for i in range(hands):
        rng.shuffle(cards)
        deal = [cards[0:13], cards[13:26], cards[26:39], cards[39:52]]
        dealer = SEATS[i & 3]
        st = PlayState.start(deal, first_leader(dealer, rs, deal), rs)
        legal_cards, play, rnd = st.legal_cards, st.play, rng.random
        if first:
            for _ in range(52):
                play(legal_cards()[0])
        else:
            for _ in range(52):
                legal = legal_cards()
                play(legal[int(rnd() * len(legal))])
    return time.process_time() - t


def simulate(games: int, seed: int, rules: str, fault_rate: float = 0.0, write: bool = False) -> tuple[float, int]:
    """Seconds and hands for a season of ``games`` games (optionally written as JSON Lines)."""
    t = time.process_time()
    records, faults = simulate_season(12, games, seed, rules, fault_rate)
    if write:
        with tempfile.TemporaryDirectory() as d:
            write_season(records, os.path.join(d, "season.jsonl"), faults=faults)
    return time.process_time() - t, len(records)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=20000, help="hands per measurement (about; seasons are whole games)")
    ap.add_argument("--repeat", type=int, default=5, help="interleaved repetitions; best and median are shown")
    ap.add_argument("--rules", default="standard", help="preset for every measurement")
    ap.add_argument("--profile", action="store_true", help="also print a cProfile of one simulate run")
    args = ap.parse_args(argv)

    games = max(1, args.hands // 12)  # a game of the default club lasts about 12 hands
    rates: dict[str, list[float]] = {k: [] for k in ("random-legal", "engine-only", "simulate", "simulate+faults", "simulate+jsonl")}
    simulate(10, 99, args.rules)  # warm up (imports, caches)
    for r in range(args.repeat):
        dt = random_legal(args.hands, seed=r, rules=args.rules)
        rates["random-legal"].append(args.hands / dt)
        dt = random_legal(args.hands, seed=r, rules=args.rules, first=True)
        rates["engine-only"].append(args.hands / dt)
        dt, n = simulate(games, r, args.rules)
        rates["simulate"].append(n / dt)
        dt, n = simulate(games, r, args.rules, fault_rate=0.05)
        rates["simulate+faults"].append(n / dt)
        dt, n = simulate(games, r, args.rules, write=True)
        rates["simulate+jsonl"].append(n / dt)

    base = max(rates["random-legal"])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; one process, one core")
    print(f"rules {args.rules}; about {args.hands} hands per measurement; best / median of {args.repeat}")
    print(f"{'measurement':<18}{'best h/s':>12}{'median h/s':>12}{'best / random-legal':>22}")
    for name, xs in rates.items():
        best = max(xs)
        print(f"{name:<18}{best:>12,.0f}{statistics.median(xs):>12,.0f}{best / base:>22.2f}")
    best_sim = max(rates["simulate"])
    verdict = "meets" if best_sim >= TARGET else "misses"
    print(f"target: simulate >= {TARGET:,.0f} hands/s -> {verdict} ({best_sim:,.0f})")
    engine_share = best_sim / max(rates["engine-only"])
    print(f"the replay engine alone (engine-only) takes {engine_share:.0%} of a simulated hand's time")

    if args.profile:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        pr.enable()
        simulate(games, 7, args.rules)
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
