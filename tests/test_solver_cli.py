"""`spadework solve` and `spadework analyse` (issue 14 items 1 and 2): the commands, the
card_costs / dd_par tables and how they agree with the solver."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from conftest import ROOT
from spadework.analysis.cli import app
from spadework.analysis.solver import Solver, make_position
from spadework.analysis.solver.judge import analyse_db, judge_hand
from spadework.parsers.db import iter_records

runner = CliRunner()

GOOD = {"deal": {"N": ["AS", "KH"], "E": ["2S", "QH"], "S": ["3S", "JH"], "W": ["4S", "TH"]},
        "leader": "N", "trick_number": 12, "spades_broken": True}


def run(*args, input=None):
    return runner.invoke(app, [str(a) for a in args], input=input)


def test_solve_jsonl_reports_bad_lines_and_solves_the_others(tmp_path):
    bad_seat = dict(GOOD, leader="X")
    twice = dict(GOOD, deal={"N": ["AS", "KH"], "E": ["2S", "QH"], "S": ["3S", "JH"], "W": ["4S", "AS"]})
    mid_trick = {"deal": {"N": ["AS", "KH"], "E": ["2S", "QH"], "S": ["3S", "JH"], "W": ["4S"]}, "leader": "W",
                 "trick": ["TH"], "trick_number": 12, "nil_seat": "E"}
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join([json.dumps(GOOD), "{oops", json.dumps(bad_seat), json.dumps(twice), json.dumps(mid_trick)]) + "\n")
    r = run("solve", f, "--json")
    assert r.exit_code == 2
    lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert len(lines) == 5
    assert lines[0]["tricks"] == {"NS": 2, "EW": 0} and lines[0]["cards"] == {"AS": 2, "KH": 2}
    assert lines[1]["line"] == 2 and "not JSON" in lines[1]["error"]
    assert lines[2]["line"] == 3 and '"X" is not a seat' in lines[2]["error"]
    assert lines[3]["line"] == 4 and "AS is held twice" in lines[3]["error"]
    # W led the TH; N to play: the KH wins it and the AS the last trick; E's nil is safe (E's QH is below)
    assert lines[4]["tricks"] == {"NS": 2, "EW": 0} and lines[4]["cards"] == {"KH": 2}
    assert lines[4]["nil_safe"] is True and lines[4]["ms"] >= 0
    # the text output names the line each answer is for (here lines 1 and 5 are good)
    r = run("solve", f)
    assert r.exit_code == 2
    heads = [x for x in r.stdout.splitlines() if x.startswith("line ")]
    assert heads == ["line 1: trick 12, N to lead", "line 5: trick 12, W led, played so far: TH; N to play"]


def test_solve_reads_gzip_and_byte_order_marks_and_refuses_options_of_a_deal(tmp_path):
    import gzip

    text = json.dumps(GOOD) + "\n"
    files = {"p.jsonl.gz": gzip.compress(text.encode()), "bom8.jsonl": b"\xef\xbb\xbf" + text.encode(),
             "bom16.jsonl": text.encode("utf-16")}  # fmt: skip
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        r = run("solve", tmp_path / name, "--json")
        assert r.exit_code == 0, (name, r.output)
        assert json.loads(r.stdout)["tricks"] == {"NS": 2, "EW": 0}, name
    r = run("solve", tmp_path / "bom8.jsonl", "--leader", "W")
    assert r.exit_code == 2 and "--leader go with --deal" in r.output


def test_solve_deal_typed_by_hand():
    r = run("solve", "--deal", "N:AKQ2.JT3.984.A52 JT9.AKQ.AKQ.KQJ4 8765.9876.765.76 43.542.JT32.T983",
            "--leader", "W", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["tricks"] == {"NS": 6, "EW": 7}
    assert "4S" not in out["cards"] and out["cards"]["5H"] == 7  # no spade lead to trick 1
    r = run("solve", "--deal", "N:AKQ2.JT3.984.A52 JT9.AKQ.AKQ.KQJ4 8765.9876.765.76 43.542.JT32.T98", "--leader", "W")
    assert r.exit_code == 2 and "W holds 12 cards" in r.output
    assert run("solve").exit_code == 2


def _sample_db(tmp_path: Path, which: list[int], name: str = "few", drop: tuple[str, ...] = ()) -> Path:
    every = (ROOT / "data" / "sample" / "season.jsonl").read_text().splitlines()
    lines = [json.dumps({k: v for k, v in json.loads(every[i]).items() if k not in drop}) for i in which]
    src = tmp_path / f"{name}.jsonl"
    src.write_text("\n".join(lines) + "\n")
    db = tmp_path / f"{name}.duckdb"
    r = run("load", src, "--db", db, "-q")
    assert r.exit_code == 0, r.output
    return db


def test_analyse_fills_card_costs_and_dd_par(tmp_path):
    db = _sample_db(tmp_path, [0, 2, 4])
    con = duckdb.connect(str(db))
    summary = analyse_db(con, workers=1)
    assert summary.hands == 3
    # the sample's first hand has a planted illegal card at trick 8: judged up to it
    assert summary.cut_short == 1 and summary.judged == 2
    assert summary.cards == 29 + 52 + 52  # trick 8: one card before the illegal one
    rows = con.execute(
        "SELECT hand, trick, play_order, seat, card, tricks_best, tricks_played, cost, best_cards FROM card_costs "
        "ORDER BY hand, trick, play_order").fetchall()
    par = dict((h, (a, b)) for h, a, b in con.execute("SELECT hand, ns_tricks, ew_tricks FROM dd_par").fetchall())
    assert set(par) == {1, 3, 5} and all(a + b == 13 for a, b in par.values())
    for hand, trick, order, seat, card, best, played, cost, best_cards in rows:
        assert cost == best - played and cost >= 0
        assert (card in best_cards.split()) == (cost == 0)
    # the first card of each hand: tricks_best is the par of its side
    for hand, trick, order, seat, *_ in rows:
        if trick == 1 and order == 1:
            first = next(r for r in rows if r[0] == hand and r[1] == 1 and r[2] == 1)
            assert first[5] == (par[hand][1] if seat in "EW" else par[hand][0])
    # a position in the middle agrees with solving it directly
    rec = next(r for r in iter_records(con) if r.hand == 3)
    j = judge_hand(rec, solver=Solver(tt_bits=16))
    c = j.cards[20]  # trick 6, 1st card
    assert (c.trick, c.play_order) == (6, 1)
    from spadework.analysis.engine.replay import PlayState, first_leader
    from spadework.analysis.engine.rules import get_ruleset

    rs = get_ruleset(rec.rules)
    st = PlayState.start(rec.deal, first_leader(rec.dealer, rs, rec.deal), rs)
    for t in rec.tricks[:5]:
        for card in t.cards:
            st.play(card)
    pos = make_position(st.hands, st.to_play, (), 6, st.spades_broken, rs)
    sol = Solver(tt_bits=16).solve(pos)
    side = sol.ew if int(st.to_play) & 1 else sol.ns
    assert c.tricks_best == side and c.tricks_played == sol.cards[c.card]
    assert set(c.best_cards) == {k for k, v in sol.cards.items() if v == side}
    con.close()


def test_a_hand_with_no_recorded_deal_is_judged_on_the_cards_each_seat_played(tmp_path):
    """FORMATS.md section 1: with no deal and a complete play, the deal is what each seat played, so
    the cards cost what they cost with the deal recorded; a hand cut short has no deal to judge."""
    query = "SELECT hand, trick, play_order, seat, card, tricks_best, tricks_played, cost, best_cards FROM card_costs ORDER BY ALL"
    got = {}
    for name, drop in (("dealt", ()), ("played", ("deal",))):
        con = duckdb.connect(str(_sample_db(tmp_path, [0, 2, 4], name, drop)))
        summary = analyse_db(con, workers=1)
        assert (summary.judged, summary.cut_short, summary.skipped) == (2, 1, {}), name
        # best_cards lists the cards in the order the seat holds them: compared as sets
        rows = [r[:-1] + (sorted(r[-1].split()),) for r in con.execute(query).fetchall()]
        got[name] = (rows, con.execute("SELECT * FROM dd_par ORDER BY ALL").fetchall())
        con.close()
    assert len(got["played"][0]) == 29 + 52 + 52
    assert got["played"] == got["dealt"]
    every = (ROOT / "data" / "sample" / "season.jsonl").read_text().splitlines()
    cut = json.loads(every[2])
    del cut["deal"]
    cut["tricks"] = cut["tricks"][:12]
    (tmp_path / "cut.jsonl").write_text(json.dumps(cut) + "\n")
    assert run("load", tmp_path / "cut.jsonl", "--db", tmp_path / "cut.duckdb", "-q").exit_code == 0
    r = run("analyse", "--db", tmp_path / "cut.duckdb", "--workers", "1", "-q")
    assert "0 in full, 0 up to an illegal play, a gap or the end of the recorded play, 1 skipped (no_deal 1)" in r.output, r.output
    assert "no recorded deal and no complete play" in r.output


def test_a_hand_whose_recorded_play_ends_early_is_cut_short_not_judged_in_full(tmp_path):
    """A claimed hand (10 tricks, then tricks taken) and a hand with bids and score alone: their
    recorded cards are judged, and neither counts as judged in full."""
    every = (ROOT / "data" / "sample" / "season.jsonl").read_text().splitlines()
    whole = json.loads(every[2])
    claimed = dict(whole, tricks=whole["tricks"][:10], taken={"N": 4, "E": 3, "S": 3, "W": 3})
    bare = dict(json.loads(every[4]))
    del bare["tricks"]
    bare["taken"] = {"N": 4, "E": 3, "S": 3, "W": 3}
    (tmp_path / "short.jsonl").write_text(json.dumps(claimed) + "\n" + json.dumps(bare) + "\n")
    assert run("load", tmp_path / "short.jsonl", "--db", tmp_path / "short.duckdb", "-q").exit_code == 0
    con = duckdb.connect(str(tmp_path / "short.duckdb"))
    recs = {r.hand: r for r in iter_records(con)}
    j = judge_hand(recs[whole["hand"]], solver=Solver(tt_bits=16))
    assert (j.status, j.reason, len(j.cards)) == ("cut_short", "the recorded play ends after trick 10", 40)
    j = judge_hand(recs[bare["hand"]], solver=Solver(tt_bits=16))
    assert (j.status, j.reason, j.cards) == ("cut_short", "no play recorded (par only)", ())
    assert j.par is not None and sum(j.par) == 13
    summary = analyse_db(con, workers=1)
    assert (summary.hands, summary.judged, summary.cut_short, summary.cards) == (2, 0, 2, 40)
    con.close()


def test_analyse_command_counts_skipped_hands(tmp_path):
    db = _sample_db(tmp_path, [0, 2])
    r = run("analyse", "--db", db, "--workers", "2", "-q")
    assert r.exit_code == 0, r.output
    assert "Judged 81 cards in 2 hands" in r.output and "1 up to an illegal play, a gap or the end of the recorded play" in r.output
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM card_costs").fetchone()[0] == 81
    assert con.execute("SELECT count(*) FROM dd_par").fetchone()[0] == 2
    assert run("analyse", "--db", tmp_path / "missing.duckdb").exit_code == 2


def test_analyse_starts_no_more_workers_than_it_has_batches_of_hands(tmp_path, monkeypatch):
    """--workers 500 on a database of two hands (or none) started 500 processes (an audit waited
    100 s on one with nothing to judge); now a batch of hands is the most a worker gets."""
    import multiprocessing

    def no_pool(*a, **kw):
        raise AssertionError("a worker pool was started")

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    db = _sample_db(tmp_path, [0, 2])
    con = duckdb.connect(str(db))
    summary = analyse_db(con, workers=500)
    assert (summary.hands, summary.cards) == (2, 81)
    con.execute("DELETE FROM hand_records")
    assert analyse_db(con, workers=500).hands == 0
    con.close()


def test_analyse_judges_the_bids_of_a_checked_database_and_says_when_it_cannot(tmp_path):
    db = _sample_db(tmp_path, [0, 2, 4])
    r = run("analyse", "--db", db, "--workers", "1", "-q")
    assert r.exit_code == 0, r.output
    assert "Bids not judged: the database is not checked" in r.output
    assert run("check", "--db", db, "-q").exit_code in (0, 1)
    r = run("analyse", "--db", db, "--workers", "1", "-q")
    assert r.exit_code == 0, r.output
    assert "Judged 12 bids" in r.output
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*), count(DISTINCT hand) FROM hand_values").fetchone() == (12, 3)


def test_commands_that_read_hands_refuse_a_database_made_by_something_else(tmp_path):
    db = tmp_path / "other.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE customers (id INTEGER)")
    for command in ("analyse", "judge-bids", "check"):
        r = run(command, "--db", db)
        assert r.exit_code == 2, (command, r.output)
        assert "is not a spadework database" in r.output, (command, r.output)
    with duckdb.connect(str(db), read_only=True) as con:  # nothing was added to it
        assert con.execute("SELECT table_name FROM duckdb_tables()").fetchall() == [("customers",)]


def test_a_score_sheet_has_no_deal_so_no_bid_is_judged(tmp_path):
    sheet = tmp_path / "sheet.csv"
    assert run("simulate", "--players", "4", "--games", "1", "--seed", "3", "--out", sheet, "-q").exit_code == 0
    db = tmp_path / "sheet.duckdb"
    assert run("validate", sheet, "--db", db, "-q").exit_code in (0, 1)
    r = run("judge-bids", "--db", db)
    assert r.exit_code == 0 and "nothing to judge: no hand has a complete deal" in r.output, r.output
    assert "tricks:" not in r.output  # no model printed as if it had been fitted
    r = run("analyse", "--db", db, "--workers", "1", "-q")
    assert r.exit_code == 0 and "Bids not judged: no hand has a complete deal" in r.output, r.output


def test_solve_names_the_file_and_line_of_a_bad_position(tmp_path):
    import subprocess
    import sys

    f = tmp_path / "p.jsonl"
    five = dict(GOOD, trick=["AS", "2S", "3S", "4S", "KH"], leader="N")
    f.write_text("\n".join([json.dumps(GOOD), json.dumps({k: v for k, v in GOOD.items() if k != "leader"}),
                            json.dumps(five)]) + "\n")  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "solve", str(f)], capture_output=True, text=True)
    assert proc.returncode == 2
    errors = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert errors == [
        f"error: {f}:2: no 'leader'",
        f"error: {f}:3: the current trick has 5 cards; at most 3 are played before it is won",
    ]


def test_solve_an_empty_file_or_bad_bytes_is_an_error_that_says_so(tmp_path):
    """Every other command refuses a file with nothing to read (exit 2); solve printed nothing and
    exited 0.  Bytes that are not UTF-8 are named as such, not in orjson's words."""
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n  \n")
    r = run("solve", empty)
    assert r.exit_code == 2 and f"{empty} holds no positions" in r.output
    latin = tmp_path / "l.jsonl"
    latin.write_bytes(json.dumps(GOOD).encode() + b"\n" + b'{"deal": "caf\xe9"}\n')
    r = run("solve", latin, "--json")
    assert r.exit_code == 2
    lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert lines[0]["tricks"] == {"NS": 2, "EW": 0} and "invalid UTF-8 at byte 14" in lines[1]["error"], lines[1]


def test_an_analyse_that_fails_part_way_leaves_the_run_before(tmp_path, monkeypatch):
    """Rows were written batch by batch after the old ones were deleted: a run stopped part way (a
    SIGTERM, an error) left the judgements of a tenth of the hands, which stats took for the whole
    (found by a solver audit).  The run is one transaction: all of it or the run before."""
    from spadework.analysis.solver import judge

    db = _sample_db(tmp_path, [0, 2, 4])
    con = duckdb.connect(str(db))
    analyse_db(con, workers=1, batch=1)
    before = con.execute("SELECT * FROM card_costs ORDER BY ALL").fetchall()
    assert before
    work, calls = judge._work, []

    def failing(rows_batch):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("stopped")
        return work(rows_batch)

    monkeypatch.setattr(judge, "_work", failing)
    with pytest.raises(RuntimeError, match="stopped"):
        analyse_db(con, workers=1, batch=1)
    assert con.execute("SELECT * FROM card_costs ORDER BY ALL").fetchall() == before
    assert con.execute("SELECT count(*) FROM dd_par").fetchone()[0] == 3
    con.close()


def test_a_deck_the_solver_cannot_take_is_skipped_with_its_reason(tmp_path):
    """A custom ruleset with 17 cards playing as spades made analyse stop with a traceback (exit 1)
    after it had emptied the tables (found by a solver audit); such hands are skipped and named."""
    rules = {"preset": "standard", "extra_cards": ["BJ", "LJ"], "removed_cards": ["2C", "3C"],
             "trump_order": ["BJ", "LJ", "2D", "2H", "2S", "AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S"]}  # fmt: skip
    src, db = tmp_path / "custom.jsonl", tmp_path / "custom.duckdb"
    r = run("simulate", "--out", src, "--players", "4", "--games", "1", "--rules", json.dumps(rules), "-q")
    assert r.exit_code == 0, r.output
    assert run("validate", src, "--db", db, "-q").exit_code in (0, 1)
    r = run("analyse", "--db", db, "--workers", "1", "-q")
    assert r.exit_code == 0, r.output
    assert "has 17 cards playing as spades; the solver takes at most 16" in r.output
    con = duckdb.connect(str(db))
    assert con.execute("SELECT count(*) FROM card_costs").fetchone()[0] == 0
    con.close()


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (its children, theirs, ...), from /proc."""
    import os

    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
def test_ctrl_c_stops_analyse_quietly_with_its_workers(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group: each pool worker printed a traceback of
    its own KeyboardInterrupt (and, under a parent that ignores it, died and was replaced while the
    parent waited for its batch for ever).  The workers leave it to the command: exit 130, no traceback."""
    import os
    import signal
    import subprocess
    import sys
    import time

    # compiled first, in a run of its own: an interrupt that lands while numba compiles in a fresh
    # install prints llvmlite's "Exception ignored" traceback, which is not what this test is about
    warm = _sample_db(tmp_path, [0, 2], name="warm")
    assert run("analyse", "--db", warm, "--workers", "1", "-q").exit_code == 0
    db = _sample_db(tmp_path, list(range(0, 400)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "spadework.analysis.cli", "analyse", "--db", str(db), "--workers", "2", "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(_descendants(proc.pid)) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # the fork server and its two workers
        if proc.poll() is not None or len(_descendants(proc.pid)) < 3:
            pytest.skip("analyse ended (or never started its workers) before it could be interrupted")
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert "Traceback" not in err, err[-3000:]
