"""Where a command cannot do what it was asked (a file it cannot write, a --db that is no spadework
database, options that contradict each other, a pipe that closes early), it says so in one line
naming the file and exits 2 (or, for a closed pipe, as it would have): never a traceback, never a
silent success that kept nothing.  Each case is one a tester found by hand."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from spadework.parsers import trickster

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample" / "season.jsonl"


def spadework(*args, cwd=None) -> subprocess.CompletedProcess:
    """The console command as a user runs it (``main``: its handling of OS errors is part of what is tested)."""
    return subprocess.run([sys.executable, "-m", "spadework.analysis.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)  # fmt: skip


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


@pytest.fixture(scope="module")
def small_log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("log") / "small.jsonl"
    path.write_text("".join(SAMPLE.read_text().splitlines(keepends=True)[:12]))
    return path


def test_a_report_folder_that_is_a_file_is_one_error_line(tmp_path, small_log):
    db = tmp_path / "s.duckdb"
    assert spadework("validate", small_log, "--db", db, "-q").returncode in (0, 1)
    blocker = tmp_path / "notadir"
    blocker.write_text("a file, not a folder")
    line = one_error_line(spadework("report", "--db", db, "--out", blocker))
    assert line == f"error: {blocker}: is a file, where a folder is needed"


def test_a_conversion_it_cannot_write_is_one_error_line(tmp_path, small_log):
    (tmp_path / "notadir").write_text("x")
    line = one_error_line(spadework("convert", small_log, tmp_path / "notadir" / "x.jsonl"))
    assert line == f"error: {tmp_path / 'notadir'}: is a file, where a folder is needed"


def test_a_conversion_into_a_pipe_that_closes_early_exits_as_it_would_have(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "spadework.analysis.cli", "convert", str(SAMPLE), "/dev/stdout", "--to", "spn"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    first = proc.stdout.read(20)
    proc.stdout.close()  # the reader goes away (as `| head -1` does)
    _, stderr = proc.communicate()
    assert first.startswith(b"[")
    assert proc.returncode == 0, stderr  # the sample converts cleanly: 0, not click's 1 for a closed pipe
    assert b"Traceback" not in stderr


@pytest.mark.parametrize("kind", ["log", "csv"])
def test_a_db_that_is_a_log_is_refused_and_left_as_it_was(tmp_path, small_log, kind):
    # DuckDB opened such a file as an empty database in memory: `load` said it loaded the hands, kept none
    target = tmp_path / ("target.jsonl" if kind == "log" else "target.csv")
    target.write_bytes(small_log.read_bytes() if kind == "log" else b"game_id,hand\ng,1\n")
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    for args in (("load", small_log, "--db", target), ("check", "--db", target), ("validate", small_log, "--db", target)):
        line = one_error_line(spadework(*args))
        assert f"{target} is not a DuckDB database" in line
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before


def test_a_duckdb_file_made_by_something_else_is_named_as_such(tmp_path, small_log):
    foreign = tmp_path / "foreign.duckdb"
    with duckdb.connect(str(foreign)) as con:
        con.execute("CREATE TABLE hands (x INTEGER)")
    for args in (("load", small_log, "--db", foreign), ("check", "--db", foreign)):
        line = one_error_line(spadework(*args))
        assert "is not a spadework database: its table hands has no column game_id" in line
    with duckdb.connect(str(foreign), read_only=True) as con:  # nothing was added to it
        assert con.execute("SELECT table_name FROM duckdb_tables()").fetchall() == [("hands",)]


@pytest.mark.parametrize(
    "args, says",
    [
        (("simulate", "--out", "{tmp}/sim.jsonl", "--format", "spn", "--games", "1"), "named as jsonl but --format says spn"),
        (("convert", "{log}", "{tmp}/out.spn", "--to", "csv"), "named as spn but --to says csv"),
        (("convert", "{log}", "{tmp}/out.txt", "--to", "bogus"), "--to 'bogus' is not a format spadework writes"),
    ],
)
def test_a_format_option_the_file_name_contradicts_is_refused(tmp_path, small_log, args, says):
    args = [a.format(tmp=tmp_path, log=small_log) for a in args]
    assert says in one_error_line(spadework(*args))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(("sim", "out"))]  # nothing written


@pytest.mark.parametrize("key", ["minBid", "gameOverScore"])
@pytest.mark.parametrize("value", [99999999999999999999, 2**31])
def test_a_trickster_option_beyond_any_game_keeps_the_default_with_a_warning(key, value):
    # a 21-digit minBid reached the rules text, which orjson cannot write: the whole run stopped
    mapped = trickster.map_options({key: value})
    assert "min_side_bid" not in mapped.rules and "target" not in mapped.rules
    assert [w for w in mapped.warnings if w.startswith(f"Option {key} {value!r}")]


def test_a_minimum_bid_above_13_tricks_is_not_a_rule():
    mapped = trickster.map_options({"minBid": 99})
    assert "min_side_bid" not in mapped.rules
    assert mapped.warnings == ("Option minBid 99 is not a number of tricks; no minimum bid is set.",)
    assert trickster.map_options({"minBid": 13}).rules["min_side_bid"] == 13


def test_rules_with_a_number_beyond_64_bits_are_stored_as_json():
    from spadework.parsers.db import _rules_text

    assert _rules_text({"preset": "standard", "target": 2**70}) == '{"preset":"standard","target":1180591620717411303424}'


def test_numbers_inside_words_stay_when_rejected_records_are_grouped():
    from spadework.analysis.present import REASON_SQL

    with duckdb.connect() as con:
        got = [con.execute(f"SELECT {REASON_SQL} FROM (SELECT ? AS message)", [m]).fetchall()[0][0] for m in (
            "line 4: invalid UTF-8 at byte 17",
            "points -40 in bids[3]",
            "hand 3 of game 'g1' is already loaded from a.jsonl:7",
        )]  # fmt: skip
    assert got == ["invalid UTF-8 at byte N", "points N in bids[N]", "hand N of game '…' is already loaded from …:N"]


def test_an_unknown_input_format_is_a_usage_error_before_any_file_is_read(small_log):
    for args in (("validate", small_log, "-f", "bogus"), ("convert", small_log, "x.jsonl", "-f", "bogus")):
        proc = spadework(*args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "'bogus' is not a format spadework reads: use one of jsonl, spn, csv, ptn, openspiel" in proc.stderr


def test_a_folder_to_convert_is_refused_and_nothing_written(tmp_path):
    (tmp_path / "logs").mkdir()
    line = one_error_line(spadework("convert", tmp_path / "logs", tmp_path / "out.jsonl"))
    assert "logs is a folder: convert takes one log file" in line
    assert not (tmp_path / "out.jsonl").exists()


def test_convert_puts_its_output_in_place_only_when_whole(tmp_path, monkeypatch):
    """convert wrote into the target as it went: an interrupted conversion left a shorter log that
    validates as a season, and converting a file with no readable hand emptied a good earlier output
    (found by a user audit)."""
    from spadework.analysis import convert
    from spadework.parsers import spn

    out = tmp_path / "out.spn.gz"
    proc = spadework("convert", ROOT / "data" / "club_night.jsonl", out)
    assert proc.returncode == 0 and "Wrote 8 hands" in proc.stdout
    good = out.read_bytes()
    assert gzip.decompress(good).startswith(b"[Event") and not list(tmp_path.glob(".*part"))
    (tmp_path / "bin.jsonl").write_bytes(b"\x00\x01bin")
    proc = spadework("convert", tmp_path / "bin.jsonl", out)
    assert proc.returncode == 2
    assert "No hand could be read, so" in proc.stdout and "was not written" in proc.stdout
    assert out.read_bytes() == good
    # interrupted part way (in-process, as Ctrl-C would): the old output stays, no part file is left
    real = spn.dump

    def dump_then_stop(records, fp):
        it = iter(records)
        real([next(it)], fp)
        raise KeyboardInterrupt

    monkeypatch.setattr(spn, "dump", dump_then_stop)
    with pytest.raises(KeyboardInterrupt):
        convert.convert_file(SAMPLE, out)
    assert out.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin.jsonl", "out.spn.gz"]


def test_convert_through_a_link_replaces_the_file_it_names_only_when_whole_and_keeps_its_mode(tmp_path):
    # a link was written in place: a conversion with no readable hand emptied the file behind it,
    # an interrupted one left it cut short; a private file came out world-readable (an audit)
    (tmp_path / "real.spn").write_text("OLD")
    (tmp_path / "real.spn").chmod(0o600)
    (tmp_path / "link.spn").symlink_to("real.spn")
    (tmp_path / "bad.jsonl").write_text('{"bad json\n')
    assert spadework("convert", tmp_path / "bad.jsonl", tmp_path / "link.spn").returncode == 2
    assert (tmp_path / "real.spn").read_text() == "OLD" and (tmp_path / "link.spn").is_symlink()
    assert spadework("convert", ROOT / "data" / "club_night.jsonl", tmp_path / "link.spn").returncode == 0
    assert (tmp_path / "link.spn").is_symlink() and (tmp_path / "real.spn").read_text().startswith("[Event")
    assert (tmp_path / "real.spn").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "link.spn", "real.spn"]


def test_an_unknown_tag_among_game_level_tags_is_named_and_the_hands_after_it_load(tmp_path):
    # the header block was rejected as "this hand has no [Hand] tag", and printed "f.spn:2: line 2: ..."
    spn = tmp_path / "f.spn"
    spn.write_text(
        '[Game "g1"]\n[Bogus "x"]\n[North "a"] [East "b"] [South "c"] [West "d"]\n\n'
        '[Hand "1"]\n[Dealer "N"]\n[Bids "E 3, S 3, W 3, N 3"]\n[Taken "N 3 E 3 S 3 W 4"]\n'
    )
    proc = spadework("validate", spn, "-q")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr + proc.stdout
    assert "Loaded 1 hand from 1 file; 1 record rejected" in proc.stdout
    assert f"{spn}:2: [Bogus] is not a game-level tag, and this block has no hand tags (no [Hand])" in proc.stdout
    assert "line 2: line 2" not in proc.stdout and ":2: line 2:" not in proc.stdout


def test_a_number_too_large_for_the_tables_is_named_in_the_games_words(tmp_path):
    # it was named by the JSON key (bids[3].bid, score.NS.points), which a score sheet's user never sees
    sheet = tmp_path / "s.csv"
    header = ("game_id,hand,dealer,player_N,player_E,player_S,player_W,bid_N,bid_E,bid_S,bid_W,"
              "taken_N,taken_E,taken_S,taken_W,NS_points,NS_total,NS_bags,EW_points,EW_total,EW_bags")  # fmt: skip
    sheet.write_text(header + "\ng,1,W,a,b,c,d,99999999999,3,3,3,4,3,3,3,,,,,,\n"
                     "g,2,N,a,b,c,d,3,3,3,3,4,3,3,3,9999999999,,,,,\n")  # fmt: skip
    proc = spadework("load", sheet, "--db", tmp_path / "x.duckdb", "-q")
    assert proc.returncode == 2
    assert f"{sheet}:2: N's bid: 99999999999 is out of range" in proc.stdout
    assert f"{sheet}:3: NS's recorded points: 9999999999 is out of range" in proc.stdout


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_gzip_file_cut_off_in_its_header_is_named_cut_off_not_empty(tmp_path, engine):
    (tmp_path / "cut.jsonl.gz").write_bytes(b"\x1f\x8b")  # gzip's magic, then nothing
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "none.json").write_bytes(b" [ ]\n")
    proc = spadework("validate", tmp_path, "--engine", engine, "-q")
    assert proc.returncode == 2
    assert "cut.jsonl.gz:0: the file is cut off or damaged before its first line" in proc.stdout
    assert "empty.jsonl:0: the file holds no hands (it is empty or blank)" in proc.stdout
    assert "none.json:0: the file holds no hands (an empty JSON array)" in proc.stdout


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_log_read_from_a_pipe_loses_no_hand(engine):
    # the head read to tell the format was gone when the parser read the pipe: 44 hands and a
    # record lost from the sample, silently but for one 'not valid JSON'
    text = SAMPLE.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "validate", "/dev/stdin", "--engine", engine, "-q"],
                          input=text, capture_output=True)  # fmt: skip
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr
    assert "Loaded 889 hands from 1 file; 0 records rejected" in out
    assert "Checked 60 games: 37 clean, 23 with findings (36 findings)" in out


def test_logs_piped_in_one_after_another_are_kept_apart_and_the_same_log_piped_again_replaces_itself(tmp_path):
    # every `load -` was the source /dev/stdin, so each one removed the hands the one before had loaded
    data = ROOT / "data"
    db = tmp_path / "x.duckdb"
    for name in ("club_night.spn", "club_night.jsonl", "club_night.jsonl"):
        proc = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "load", "-", "--db", str(db), "-q"],
                              input=(data / name).read_bytes(), capture_output=True)  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT source_file, count(*) FROM hands GROUP BY 1 ORDER BY 2").fetchall()
    assert [n for _, n in rows] == [7, 8]
    assert all(re.fullmatch(r"/dev/stdin#[0-9a-f]{12}", name) for name, _ in rows)


def test_convert_to_a_pipe_that_closes_early_does_not_say_it_wrote_every_hand(tmp_path):
    # `convert LOG - | head -1` said "Wrote 889 hands to standard output"
    proc = subprocess.run(
        f"{sys.executable} -m spadework.analysis.cli convert {SAMPLE} - --to spn | head -1",
        shell=True, capture_output=True, cwd=tmp_path, executable="/bin/bash",
    )  # fmt: skip
    assert proc.stdout.count(b"\n") == 1
    assert b"Wrote 889" not in proc.stderr
    assert b"Read 889 hands; standard output stopped taking them part way" in proc.stderr


@pytest.mark.parametrize("given", ["-", "blank"])
def test_an_empty_pipe_or_blank_file_without_an_extension_holds_no_hands(tmp_path, given):
    # both said "not a log format spadework reads", where an empty .jsonl says it holds no hands
    (tmp_path / "blank").write_bytes(b" \n\n")
    proc = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "validate", given, "-q"],
                          input=b"", capture_output=True, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2
    assert ":0: the file holds no hands (it is empty or blank)" in proc.stdout.decode()
    assert "not a log format" not in proc.stdout.decode()


def test_convert_to_standard_output_writes_the_log_there_and_the_summary_on_standard_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "convert", str(SAMPLE), "-", "--to", "jsonl"],
                          capture_output=True, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0
    assert proc.stdout.count(b"\n") == 889 and proc.stdout.startswith(b'{"schema":"spades-hand/1"')
    assert b"Wrote 889 hands to standard output; 0 records could not be read" in proc.stderr
    assert not (tmp_path / "-").exists()


def test_stats_outside_a_checkout_says_to_give_a_database(tmp_path):
    # the default database is the sample season's, which only a checkout of spadework has
    line = one_error_line(spadework("stats", cwd=tmp_path))
    assert "no database given, and the sample season (data/sample/season.jsonl" in line and "give --db FILE" in line


def test_a_database_path_that_cannot_be_one_is_a_sentence(tmp_path, small_log):
    """--db on an empty file (a touched name, or an emptied log), on another tool's DuckDB file read by
    stats, and writing a full standard output: one sentence naming the file, never DuckDB's or
    Python's raw text ("Cannot launch in-memory database in read-only mode", "[Errno 28]")."""
    import duckdb

    empty = tmp_path / "empty.duckdb"
    empty.write_bytes(b"")
    for args in (["check", "--db", empty], ["load", small_log, "--db", empty], ["stats", "--db", empty]):
        line = one_error_line(spadework(*args))
        assert f"{empty.name} is an empty file, not a DuckDB database" in line, line
    other = tmp_path / "other.duckdb"
    c = duckdb.connect(str(other))
    c.execute("CREATE TABLE hands (x INTEGER)")
    c.close()
    line = one_error_line(spadework("stats", "--db", other))
    assert "is not a spadework database" in line, line
    # a new database in a folder that does not exist yet: the folder is made
    proc = spadework("validate", small_log, "--db", tmp_path / "new" / "x.duckdb")
    assert proc.returncode in (0, 1) and (tmp_path / "new" / "x.duckdb").is_file(), proc.stderr
    line = one_error_line(spadework("solve", tmp_path / "none.jsonl"))
    assert "[Errno" not in line and "no such file or directory" in line, line
    # (simulate makes the folder of its --out, as --db does: tests/test_cli.py)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_standard_output_is_named(small_log, tmp_path):
    """solve blamed its positions file ("cannot read the rest of the file") for a full standard output."""
    pos = tmp_path / "pos.jsonl"
    pos.write_text('{"deal": {"N": ["AS"], "E": ["KS"], "S": ["QS"], "W": ["JS"]}, "leader": "N"}\n')
    for args in (["validate", small_log], ["convert", small_log, "-", "--to", "jsonl"], ["solve", pos, "--json"]):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", *map(str, args)],
                                  stdout=full, stderr=subprocess.PIPE, text=True)
        assert proc.returncode == 2 and "error: standard output: no space left on device" in proc.stderr, proc.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_under_a_simulated_season_names_the_file():
    assert one_error_line(spadework("simulate", "--out", "/dev/full", "--format", "jsonl", "--games", "1", "-q")) == (
        "error: /dev/full: no space left on device"
    )


@pytest.mark.parametrize("command", ["load", "validate"])
def test_a_missing_log_makes_no_database(tmp_path, small_log, command):
    """``load /missing --db new.duckdb`` said the file was missing but left an empty new.duckdb
    behind, which later commands then took for a database of no hands."""
    db = tmp_path / "new.duckdb"
    line = one_error_line(spadework(command, small_log, tmp_path / "missing.jsonl", "--db", db))
    assert line == f"error: {tmp_path / 'missing.jsonl'}: no such file or folder"
    assert not db.exists() and not (tmp_path / "new.duckdb.wal").exists()


def test_a_duckdb_file_with_no_spadework_tables_gets_one_piece_of_advice(tmp_path):
    """stats, standings and report on a DuckDB file with none of our tables said to run `spadework
    check`, and check then said to run `spadework load` first (found by an analysis audit)."""
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    for args in (("stats", "--db", other), ("standings", "--db", other), ("report", "--db", other, "--out", tmp_path / "r"),
                 ("check", "--db", other)):  # fmt: skip
        line = one_error_line(spadework(*args))
        assert "load logs into it first: `spadework load LOGS --db" in line, (args, line)


def test_a_conversion_into_a_new_folder_makes_it(tmp_path, small_log):
    out = tmp_path / "new" / "deeper" / "x.spn"
    proc = spadework("convert", small_log, out)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8").startswith("[")


def test_a_database_another_process_holds_is_named_as_such(tmp_path):
    """DuckDB's own text ("IO Error: Could not set lock on file ... Conflicting lock is held in
    .../python3.11 (PID n)") was printed as it was (found by a new-user pass)."""
    path = tmp_path / "busy.duckdb"
    holder = duckdb.connect(str(path))
    try:
        holder.execute("CREATE TABLE t (x INTEGER)")
        line = one_error_line(spadework("check", "--db", path))
    finally:
        holder.close()
    assert f"cannot open database {path}: process {os.getpid()} has it open (another spadework command, or a notebook)" in line
    folder = tmp_path / "afolder"
    folder.mkdir()
    assert "it is a folder; give --db a file name" in one_error_line(spadework("load", SAMPLE, "--db", folder))


def test_a_terminated_command_removes_its_temporary_folders_and_exits_143(tmp_path):
    """SIGTERM (a cancelled CI job, ``timeout``) killed the process where it stood: its temporary
    folders (a spooled pipe, DuckDB's spill folder, a Dask run's Parquet parts) stayed behind (found
    by a Dask audit).  It now ends as an interrupt does, its clean-up run."""
    import signal
    import time

    temp = tmp_path / "tmp"
    temp.mkdir()
    pipe = tmp_path / "pipe.jsonl"
    os.mkfifo(pipe)  # a log nobody writes: the command waits on it
    proc = subprocess.Popen([sys.executable, "-m", "spadework.analysis.cli", "validate", str(pipe), "--db", str(tmp_path / "x.duckdb")],
                            env={**os.environ, "TMPDIR": str(temp)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not any(temp.glob("spadework-*")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert any(temp.glob("spadework-*")), "the command made no temporary folder"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    finally:
        proc.kill()
    assert list(temp.iterdir()) == []


def test_an_empty_argument_is_refused_not_read_as_the_current_folder(tmp_path, small_log):
    """typer reads "" as "."; `spadework validate "$LOGDIR"` with the variable unset read every file of
    the folder it ran in, and `report --out ""` wrote its pages there."""
    (tmp_path / "stray.jsonl").write_text(small_log.read_text())
    assert one_error_line(spadework("validate", "", cwd=tmp_path)) == (
        "error: argument 2 is empty (an unset shell variable?); give a file, folder or value"
    )
    assert "argument 5 is empty" in one_error_line(spadework("report", "--db", "x.duckdb", "--out", "", cwd=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stray.jsonl"]  # nothing written


def test_a_dash_reads_standard_input_and_an_output_that_cannot_be_standard_output_says_so(tmp_path, small_log):
    proc = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "validate", "-"],
                          input=small_log.read_text(), capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # the sample's first game has a renege
    assert proc.stdout.startswith("Loaded 12 hands from 1 file; 0 records rejected")
    (tmp_path / "-").write_text(small_log.read_text())  # a file named "-" is that file
    assert spadework("validate", "-", cwd=tmp_path).stdout.startswith("Loaded 12 hands from 1 file")
    line = one_error_line(spadework("simulate", "--out", "-", "--format", "spn", "--games", "1", cwd=tmp_path))
    assert line.startswith("error: --out -: simulate writes a file")
    line = one_error_line(spadework("report", "--db", "x.duckdb", "--out", "-", cwd=tmp_path))
    assert line == "error: --out -: a report is a folder of pages; give a folder name"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["-"]


def test_converting_a_file_with_no_hands_is_an_error_as_loading_it_is(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n")
    proc = spadework("convert", tmp_path / "empty.jsonl", tmp_path / "out.spn")
    assert proc.returncode == 2, proc.stderr
    assert "empty.jsonl: the file holds no hands (it is empty or blank)" in proc.stderr


def test_a_file_in_the_way_of_an_output_folder_is_named_in_one_sentence(tmp_path, small_log):
    """`load --db afile/x.duckdb` printed "[Errno 17] File exists: ...", simulate "afile: file exists",
    convert a raw errno, report "afile/players: not a directory"."""
    (tmp_path / "afile").write_text("")
    want = "error: afile: is a file, where a folder is needed"
    for args in (["simulate", "--out", "afile/x.jsonl", "--games", "1", "-q"], ["convert", small_log, "afile/x.spn"],
                 ["report", "--db", tmp_path / "s.duckdb", "--out", "afile"]):  # fmt: skip
        if args[0] == "report":
            assert spadework("validate", small_log, "--db", tmp_path / "s.duckdb").returncode == 1
        assert one_error_line(spadework(*args, cwd=tmp_path)) == want, args
    line = one_error_line(spadework("load", small_log, "--db", "afile/x.duckdb", cwd=tmp_path))
    assert line == f"error: cannot open database afile/x.duckdb: {tmp_path / 'afile'}: is a file, where a folder is needed"


def test_convert_rejects_what_load_rejects_with_the_same_reasons(tmp_path, small_log):
    """convert wrote a hand given twice and a hand numbered 10**30 and said 0 records could not be
    read, where load and validate reject both."""
    import json

    lines = small_log.read_text().splitlines()
    huge = json.loads(lines[1])
    huge["hand"] = 10**30
    log = tmp_path / "twice.jsonl"
    log.write_text("\n".join([lines[0], json.dumps(huge), lines[2], lines[0]]) + "\n")
    proc = spadework("convert", log, tmp_path / "out.spn")
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(spadework("validate", log, "--json").stdout)
    reasons = [f"{e['source_file']}:{e['source_line']}: {e['message']}" for e in doc["load_errors"]]
    assert len(reasons) == 2 and "appears twice in this file (first at line 1)" in reasons[1]
    for reason in reasons:
        assert f"  {reason}" in proc.stderr, (reason, proc.stderr)
    assert "Wrote 2 hands to" in proc.stdout and "2 records could not be read" in proc.stdout


def test_a_log_named_like_a_sidecar_is_read_and_a_stale_sidecar_is_removed(tmp_path):
    # found by a user audit: a log called club.faults.jsonl was passed over in a folder ("no log files
    # found"), and a season written again without --faults kept the old season's planted faults beside it
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "club.faults.jsonl").write_bytes((ROOT / "data" / "club_night.jsonl").read_bytes())
    proc = spadework("validate", logs, "-q")
    assert proc.returncode == 0 and "Loaded 8 hands from 1 file" in proc.stdout
    season = tmp_path / "s.jsonl"
    assert spadework("simulate", "--players", "4", "--games", "2", "--seed", "1", "--faults", "0.3", "--out", season).returncode == 0
    assert (tmp_path / "s.jsonl.faults.jsonl").exists()
    assert spadework("simulate", "--players", "4", "--games", "2", "--seed", "1", "--out", season).returncode == 0
    assert not (tmp_path / "s.jsonl.faults.jsonl").exists()


def test_standings_from_a_database_refuses_options_that_only_logs_take(tmp_path):
    db = tmp_path / "x.duckdb"
    assert spadework("validate", ROOT / "data" / "club_night.jsonl", "--db", db, "-q").returncode == 0
    line = one_error_line(spadework("standings", "--db", db, "--rules", "barmore"))
    assert "--rules and --format go with log files" in line


def test_version():
    from importlib.metadata import version

    proc = spadework("--version")
    assert proc.returncode == 0 and proc.stdout == f"spadework {version('spadework')}\n"


def test_stats_says_what_the_other_commands_say_of_a_folder_or_a_locked_database(tmp_path):
    # stats printed "no database at x" for a folder, and DuckDB's own text for a lock (a user audit)
    assert "it is a folder; give --db a file name" in one_error_line(spadework("stats", "--db", tmp_path))
    db = tmp_path / "x.duckdb"
    assert spadework("validate", ROOT / "data" / "club_night.jsonl", "--db", db, "-q").returncode == 0
    holder = duckdb.connect(str(db))
    try:
        line = one_error_line(spadework("stats", "--db", db))
    finally:
        holder.close()
    assert "has it open (another spadework command, or a notebook)" in line


@pytest.mark.skipif(shutil.which("setpriv") is None or os.geteuid() != 0, reason="needs root and setpriv to drop its file rights")
def test_a_folder_that_can_be_listed_but_not_entered_is_a_load_error_not_the_end_of_the_run(tmp_path):
    # mode 444: its names can be listed, its files not reached; the run stopped at "permission denied"
    # and loaded nothing (found by an audit); root is made to obey permissions with setpriv
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.jsonl").write_bytes((ROOT / "data" / "club_night.jsonl").read_bytes())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.csv").write_bytes((ROOT / "data" / "scoresheet.csv").read_bytes())
    (tmp_path / "sub").chmod(0o444)
    try:
        proc = subprocess.run(["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--",
                               sys.executable, "-m", "spadework.analysis.cli", "validate", str(tmp_path), "-q"],
                              capture_output=True, text=True)  # fmt: skip
    finally:
        (tmp_path / "sub").chmod(0o755)
    assert proc.returncode == 2, proc.stderr
    assert "Loaded 8 hands from 2 files; 1 record rejected" in proc.stdout
    assert "b.csv:0: cannot read the rest of the file: Permission denied" in proc.stdout
