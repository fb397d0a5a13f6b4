"""The command line as a user drives it: exit codes, sentences, JSON, conversion that keeps findings."""

import json

import pytest
from typer.testing import CliRunner

from spadework.analysis.cli import app
from conftest import ROOT

runner = CliRunner()
DATA = ROOT / "data"


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_validate_sample_data_reports_the_two_planted_faults():
    r = run("validate", DATA / "club_night.jsonl", DATA / "club_night.spn", DATA / "scoresheet.csv")
    assert r.exit_code == 1, r.output
    assert "Loaded 29 hands from 3 files; 0 records rejected" in r.output
    assert "hand 2, trick 2: E (ned) reneged, playing 3S on a club lead while holding" in r.output
    assert "hand 2: EW total recorded 133, rules give 123  [SCORE_MISMATCH]" in r.output
    assert "Checked 6 games: 5 clean, 1 with findings (2 findings)" in r.output


def test_validate_prints_every_finding_and_limit_cuts_each_game(monkeypatch):
    """Findings go out a block of lines at a time: any block size prints the same text, and
    ``--limit N`` keeps each game's first N findings and says how many more there are."""
    from spadework.analysis import present

    full = run("validate", DATA / "sample")
    assert full.exit_code == 1
    monkeypatch.setattr(present, "PRINT_BLOCK_LINES", 1)
    assert run("validate", DATA / "sample").output == full.output
    monkeypatch.setattr(present, "PRINT_BLOCK_LINES", 3)
    assert run("validate", DATA / "sample").output == full.output
    games: list[list[str]] = []  # each game with findings: its line, then its findings
    for text in full.output.splitlines():
        if text.startswith("game "):
            games.append([text])
        elif text.startswith("  ") and games:
            games[-1].append(text)
    assert len(games) == 23 and max(len(g) for g in games) > 2
    expected = []
    for head, *found in games:
        expected += [head, *found[:1]]
        if len(found) > 1:
            expected.append(f"  ... and {len(found) - 1} more (--json or --limit 0 shows them)")
    limited = run("validate", DATA / "sample", "--limit", "1")
    assert [t for t in limited.output.splitlines() if t.startswith(("game ", "  "))] == expected


def test_finding_text_is_printed_as_written(tmp_path):
    """A player's name is text, never markup or an emoji code."""
    game = [t for t in (DATA / "sample" / "season.jsonl").read_text().splitlines() if '"club-2026-01-03-t1-r1"' in t]
    p = tmp_path / "game.jsonl"
    p.write_text("\n".join(game).replace('"gus"', '":smile: [bold]x[/]"') + "\n")
    r = run("validate", p)
    assert r.exit_code == 1
    assert "hand 1, trick 8: E (:smile: [bold]x[/]) reneged, playing 4D on a spade lead" in r.output


def test_validate_json(tmp_path):
    r = run("validate", DATA / "club_night.spn", "--json")
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert doc["findings_by_code"] == {"RENEGE": 1, "SCORE_MISMATCH": 1}
    (t4,) = [g for g in doc["games"] if g["game_id"] == "cn-0314-t4"]
    renege = [f for f in t4["findings"] if f["code"] == "RENEGE"][0]
    assert (renege["hand"], renege["trick"], renege["seat"], renege["card"]) == (2, 2, "E", "3S")
    assert {s["side"] for s in t4["hand_scores"]} == {"NS", "EW"}


def test_validate_json_is_written_game_by_game_as_the_whole_document_would_be(tmp_path):
    """--json built the whole document before writing it (several GB for a million hands); it is now
    written game by game, and must read exactly as the one dumped from the dict."""
    import io

    import duckdb
    import orjson

    from spadework.analysis.present import iter_game_docs, validation_json, write_validation_json
    from spadework.parsers.db import LoadSummary

    db = tmp_path / "s.duckdb"
    assert run("validate", DATA / "sample" / "season.jsonl", DATA / "club_night.spn", "--db", db).exit_code == 1
    con = duckdb.connect(str(db))
    # a finding and hand scores of a game the games table does not list are left out, as before
    con.execute("INSERT INTO violations (game_id, hand, code, message) VALUES ('zz-not-a-game', 1, 'RENEGE', 'x')")
    summary = LoadSummary()
    out = io.StringIO()
    write_validation_json(con, summary, out)
    whole = validation_json(con, summary)
    assert out.getvalue() == orjson.dumps(whole, option=orjson.OPT_INDENT_2).decode() + "\n"
    games = whole["games"]
    assert len(games) == 62 and sum(len(g["findings"]) for g in games) == 36 + 2
    assert list(iter_game_docs(con, batch=7)) == games  # batches of any size give the same games
    empty = io.StringIO()
    con.execute("DELETE FROM games")
    write_validation_json(con, summary, empty)
    assert orjson.loads(empty.getvalue())["games"] == [] and empty.getvalue().endswith('"games": []\n}\n')


def test_clean_file_exits_zero(tmp_path):
    r = run("validate", DATA / "club_night.jsonl")
    assert r.exit_code == 0, r.output
    assert "0 with findings" in r.output


def test_unreadable_input_exits_two(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"game_id": "x"\n')
    r = run("validate", bad)
    assert r.exit_code == 2
    assert "bad.jsonl:1: not valid JSON" in r.output
    assert run("validate", tmp_path / "missing.jsonl").exit_code == 2


def test_unknown_rules_name_the_known_ones():
    r = run("validate", DATA / "club_night.jsonl", "--rules", "chess")
    assert r.exit_code == 2
    assert "standard" in r.output and "barmore" in r.output


def test_rules_override_changes_the_verdict():
    # with a target of 100 every game of the sample ends early: hands after the end are flagged
    r = run("validate", DATA / "club_night.jsonl", "--rules", '{"preset": "standard", "target": 100}')
    assert r.exit_code == 1
    assert "PLAYED_AFTER_GAME_END" in r.output


def test_load_then_check(tmp_path):
    db = tmp_path / "club.duckdb"
    assert run("load", DATA / "club_night.jsonl", DATA / "club_night.spn", DATA / "scoresheet.csv", "--db", db).exit_code == 0
    r = run("check", "--db", db)
    assert r.exit_code == 1
    assert "Checked 6 games, 29 hands: 2 findings" in r.output and "rejected when loaded" not in r.output
    assert run("check", "--db", tmp_path / "nope.duckdb").exit_code == 2


def test_check_after_a_load_that_rejected_everything_says_so(tmp_path):
    """'0 findings' alone, after a load whose every record was rejected, reads as all clear."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    db = tmp_path / "e.duckdb"
    assert run("load", empty, "--db", db).exit_code == 2
    r = run("check", "--db", db)
    assert r.exit_code == 0 and "Not checked: 1 record rejected when loaded (the load_errors table)" in r.output


@pytest.mark.parametrize("ext", ["jsonl", "spn", "jsonl.gz"])
def test_convert_keeps_the_findings(tmp_path, ext):
    out = tmp_path / f"t4.{ext}"
    r = run("convert", DATA / "club_night.spn", out)
    assert r.exit_code == 0, r.output
    a = json.loads(run("validate", DATA / "club_night.spn", "--json").output)
    b = json.loads(run("validate", out, "--json").output)
    strip = lambda doc: [[{k: v for k, v in f.items()} for f in g["findings"]] for g in doc["games"]]  # noqa: E731
    assert strip(a) == strip(b)
    assert [g["total_ns"] for g in a["games"]] == [g["total_ns"] for g in b["games"]]


def test_convert_to_csv_and_bad_target(tmp_path):
    r = run("convert", DATA / "club_night.jsonl", tmp_path / "sheet.csv")
    assert r.exit_code == 0
    assert (tmp_path / "sheet.csv").read_text().startswith("game_id,hand,dealer")
    assert run("convert", DATA / "club_night.jsonl", tmp_path / "x.docx").exit_code == 2


def test_convert_to_csv_records_no_tricks_taken_for_a_play_that_stops_short(tmp_path):
    """A hand whose play stops after 9 tricks, with no taken record, got taken cells counted from
    those 9 tricks: the sheet then said TRICKS_TAKEN_MISMATCH ("add up to 9") where the log says
    HAND_INCOMPLETE (found by a format audit).  Cells not recorded stay empty (FORMATS.md 3)."""
    lines = (DATA / "club_night.jsonl").read_text().splitlines()
    short = json.loads(lines[0])
    short["tricks"] = short["tricks"][:9]
    short.pop("taken", None)
    src = tmp_path / "short.jsonl"
    src.write_text(json.dumps(short) + "\n" + lines[1] + "\n")
    assert run("convert", src, tmp_path / "short.csv").exit_code == 0
    rows = (tmp_path / "short.csv").read_text().splitlines()
    header = rows[0].split(",")
    cells = [dict(zip(header, r.split(","))) for r in rows[1:3]]
    assert [c["taken_N"] for c in cells][0] == ""
    assert cells[1]["taken_N"] != ""  # the complete hand keeps its count
    codes = lambda path: {f["code"] for g in json.loads(run("validate", path, "--json").output)["games"] for f in g["findings"]}  # noqa: E731
    assert "HAND_INCOMPLETE" in codes(src) and "TRICKS_TAKEN_MISMATCH" not in codes(tmp_path / "short.csv")


def test_corpus_real_logs(corpus, tmp_path):
    r = run("validate", corpus / "trickster")
    assert r.exit_code == 2  # the truncated export cannot be read
    assert "issue231_spades_TRUNCATED.pbn:5: [LocalDateTime] tag is missing its closing ']'" in r.output
    assert "issue231_spades_TRUNCATED.pbn:14: the file ends inside the [Deal] tag" in r.output
    for code in ("RENEGE", "CARD_NOT_HELD", "SPADE_LED", "LEAD_OUT_OF_TURN", "DEAL_INVALID"):
        assert code not in r.output
    r = run("validate", corpus / "openspiel" / "episodes.jsonl", "--json")
    doc = json.loads(r.output)
    assert doc["findings_by_code"] == {"SCORE_MISMATCH": 39}
    for g in doc["games"]:
        for f in g["findings"]:
            assert "bag penalty" in f["message"] and "negative score" in f["message"]


def test_convert_real_logs_round_trip(corpus, tmp_path):
    for src in (corpus / "trickster" / "issue335_spades.ptn", corpus / "openspiel" / "episodes.jsonl"):
        a = json.loads(run("validate", src, "--json").output)
        for ext in ("jsonl", "spn"):
            out = tmp_path / f"{src.stem}.{ext}"
            assert run("convert", src, out).exit_code == 0
            b = json.loads(run("validate", out, "--json").output)
            assert a["findings_by_code"] == b["findings_by_code"]
            assert [(g["game_id"], g["total_ns"], g["total_ew"], len(g["findings"])) for g in a["games"]] == [
                (g["game_id"], g["total_ns"], g["total_ew"], len(g["findings"])) for g in b["games"]]


def test_help_teaches():
    r = run("--help")
    assert r.exit_code == 0 and "Exit status" in r.output
    r = run("validate", "--help")
    assert "--rules" in r.output and "--json" in r.output


def test_convert_refuses_to_overwrite_its_input(tmp_path):
    src = tmp_path / "a.jsonl"
    src.write_text((DATA / "club_night.jsonl").read_text())
    before = src.read_text()
    r = run("convert", src, src)
    assert r.exit_code == 2 and "is the file being read" in r.output
    assert src.read_text() == before


def test_score_sheet_from_card_play_counts_the_tricks(tmp_path, corpus):
    out = tmp_path / "os.csv"
    src = corpus / "openspiel" / "episodes.jsonl"
    assert run("convert", src, out).exit_code == 0
    a = json.loads(run("validate", src, "--json").output)
    b = json.loads(run("validate", out, "--json").output)
    assert b["findings_by_code"] == a["findings_by_code"] == {"SCORE_MISMATCH": 39}


def test_unreadable_rules_in_a_log_exit_two(tmp_path):
    obj = json.loads((DATA / "club_night.jsonl").read_text().splitlines()[0])
    obj["rules"] = {"preset": "standard", "target": "x"}
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps(obj) + "\n")
    r = run("validate", p)
    assert r.exit_code == 2 and "RULES_INVALID" in r.output and "target" in r.output


def test_a_folder_without_logs_is_an_error(tmp_path):
    (tmp_path / "notes.md").write_text("# nothing here\n")
    r = run("validate", tmp_path)
    assert r.exit_code == 2 and "no log files found" in r.output


@pytest.mark.parametrize("target", ["data/sample", "data/club_night.spn", "data/scoresheet.csv"])
def test_compiled_engine_gives_the_reference_findings(target):
    ref = json.loads(run("validate", ROOT / target, "--json", "--engine", "replay").output)
    fast = json.loads(run("validate", ROOT / target, "--json", "--engine", "fast").output)
    assert fast["findings_by_code"] == ref["findings_by_code"]
    assert fast["games"] == ref["games"]


def test_auto_engine_picks_by_the_size_of_the_logs(monkeypatch, tmp_path):
    from spadework.analysis.engine import engines

    size = (DATA / "sample" / "season.jsonl").stat().st_size
    monkeypatch.setattr(engines, "AUTO_COMPILED_BYTES", size + 1)
    assert engines.engine_for_logs("auto", [DATA / "sample" / "season.jsonl"]).name == "reference"
    monkeypatch.setattr(engines, "AUTO_COMPILED_BYTES", size)
    assert engines.engine_for_logs("auto", [DATA / "sample" / "season.jsonl"]).name == "compiled"
    assert engines.engine_for_logs("auto", [DATA / "sample"]).name == "compiled"  # folders are summed
    assert engines.engine_for_logs("replay", [DATA / "sample"]).name == "reference"
    assert engines.engine_for_logs("auto", [tmp_path / "missing"]).name == "reference"  # the loader reports it
    # the compiled engine under auto prints what the reference prints
    ref = run("validate", DATA / "sample", "--engine", "reference")
    auto = run("validate", DATA / "sample")
    assert (auto.exit_code, ref.exit_code) == (1, 1), (auto.output, ref.output)
    assert auto.output == ref.output


def test_auto_engine_for_check_counts_the_loaded_hands(monkeypatch, tmp_path):
    from spadework.analysis.engine import engines
    from spadework.parsers.db import connect, load_files

    con = connect(None)
    load_files(con, [DATA / "club_night.jsonl"])
    hands = con.execute("SELECT count(*) FROM hands").fetchone()[0]
    monkeypatch.setattr(engines, "AUTO_COMPILED_HANDS", hands)
    assert engines.engine_for_db("auto", con).name == "compiled"
    monkeypatch.setattr(engines, "AUTO_COMPILED_HANDS", hands + 1)
    assert engines.engine_for_db("auto", con).name == "reference"


def test_unknown_engine_is_a_usage_error():
    r = run("validate", DATA / "club_night.jsonl", "--engine", "turbo")
    assert r.exit_code == 2 and "unknown engine 'turbo': choose one of auto, reference, compiled, replay, fast" in r.output


def test_memory_limit_defaults_under_the_compiled_engine_and_spills_to_a_private_folder():
    from spadework.analysis.engine import engines
    from spadework.parsers.db import connect

    con = connect(None)
    default = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    engines.limit_memory(con, None, engines.REFERENCE)
    assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == default
    engines.limit_memory(con, None, engines.COMPILED)
    limit, spill = con.execute("SELECT current_setting('memory_limit'), current_setting('temp_directory')").fetchone()
    assert limit != default and limit.endswith("MiB") and float(limit.split()[0]) < 256
    assert "spadework-spill-" in spill
    engines.limit_memory(con, "2GB", engines.REFERENCE)
    assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0].startswith("1.8")


@pytest.mark.parametrize(
    "limit, says",
    [("lots", "give a size"), ("-5MB", "give a size"), ("1KB", "at least 128MB"), ("0MB", "at least 128MB"), ("100", "at least 128MB")],
)
def test_bad_memory_limit_is_a_usage_error(limit, says):
    r = run("validate", DATA / "club_night.jsonl", "--engine", "fast", "--memory-limit", limit)
    assert r.exit_code == 2 and f"--memory-limit '{limit}'" in r.output and says in r.output


def test_running_out_of_memory_is_a_clear_error(monkeypatch, tmp_path):
    import duckdb

    import spadework.analysis.engine.loader as loader

    def boom(*a, **k):
        raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block of size 256.0 KiB")

    monkeypatch.setattr(loader, "load_fast", boom)
    for args in (["validate"], ["load", "--db", tmp_path / "x.duckdb"]):
        r = run(*args, DATA / "club_night.jsonl", "--engine", "fast")
        assert r.exit_code == 2, args
        assert "error: out of memory: Out of Memory Error" in r.output and "--memory-limit" in r.output


def test_simulate_makes_the_folder_it_writes_into(tmp_path):
    """``simulate --out new/x.jsonl`` failed with "no such file or directory" while ``--db`` and
    ``report`` make their folders (found by an API audit)."""
    out = tmp_path / "new" / "sub" / "x.jsonl"
    r = runner.invoke(app, ["simulate", "--games", "1", "--players", "4", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert out.read_text().count("\n") >= 1


def test_convert_names_what_its_reader_ignored(tmp_path):
    """x_ keys inside a bid, a trick or a score are not kept (only top-level ones are); load said so
    in load_warnings, convert said nothing (found by a format audit)."""
    first = json.loads((DATA / "club_night.jsonl").read_text().splitlines()[0])
    first["bids"][0]["x_think"] = "long"
    first["tricks"][0]["x_ms"] = 1200
    src = tmp_path / "nested.jsonl"
    src.write_text(json.dumps(first) + "\n")
    r = run("convert", src, tmp_path / "out.spn")
    assert r.exit_code == 0
    assert "2 warnings from reading" in r.output
    assert f"{src}:1: bids[0]: unknown key 'x_think' ignored" in r.output
    assert f"{src}:1: tricks[0]: unknown key 'x_ms' ignored" in r.output


def test_convert_to_a_score_sheet_names_the_bids_it_cannot_hold(tmp_path):
    """A sheet has one bid cell per seat and no bid order: a second bid and bids out of turn were
    dropped without a word, and the BID_OUT_OF_TURN findings with them (found by a format audit)."""
    first = json.loads((DATA / "club_night.jsonl").read_text().splitlines()[0])
    turn = [b["seat"] for b in first["bids"]]  # in turn from the dealer's left
    swapped = dict(first, hand=1, bids=[first["bids"][1], first["bids"][0], *first["bids"][2:]])
    twice = dict(first, hand=2, bids=[*first["bids"], {"seat": turn[0], "bid": 2}])
    clean = dict(first, hand=3)
    src = tmp_path / "bids.jsonl"
    src.write_text("".join(json.dumps(h) + "\n" for h in (swapped, twice, clean)))
    r = run("convert", src, tmp_path / "out.csv")
    assert r.exit_code == 0, r.output
    assert "2 notes on what the score sheet cannot hold" in r.output
    assert f"{src}:1: hand 1 of game {first['game_id']}: bids made out of turn ({turn[1]} {turn[0]} {turn[2]} {turn[3]})" in r.output
    assert f"{src}:2: hand 2 of game {first['game_id']}: {turn[0]} bid twice; the score sheet keeps its first bid only" in r.output
    assert f"{src}:3:" not in r.output
    assert "cannot hold" not in run("convert", src, tmp_path / "out.spn").output  # SPN keeps them


@pytest.mark.parametrize("line", [100, 1234])
def test_a_line_number_is_printed_as_a_number_not_an_emoji(tmp_path, line):
    """rich reads ``:100:`` and ``:1234:`` as emoji codes: "bad.jsonl:100: not valid JSON" was printed
    as "bad.jsonl💯 not valid JSON" (found by a Dask audit)."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n" * (line - 1) + "{not json\n")
    r = run("validate", bad)
    assert r.exit_code == 2
    assert f"{bad}:{line}: not valid JSON" in r.output


@pytest.mark.parametrize(
    "text, limit, shown",
    [
        ("ana", None, "ana"),
        ("ned\nChecked 2 games", None, "ned\\nChecked 2 games"),  # a line break cannot forge a line
        ("\x1b[31mRED\x1b[0m", None, "\\x1b[31mRED\\x1b[0m"),  # nor an escape sequence recolour the terminal
        ("a\tb\rc\x7f\x85\u2028", None, "a\\tb\\rc\\x7f\\x85\\u2028"),
        ("x" * 50, 40, "x" * 39 + "…"),
        ("\u202eana", None, "\u202eana\u202c"),  # an override left open is closed
        ("名前😀", 40, "名前😀"),
    ],
)
def test_text_from_a_log_is_printed_as_one_line_as_written(text, limit, shown):
    from spadework.analysis.present import printable

    assert printable(text, limit) == shown


def test_a_name_with_a_line_break_or_an_escape_sequence_cannot_forge_the_output(tmp_path):
    """A player named "ned\\nChecked 2 games: 2 clean, 0 with findings\\n\\x1b[31m..." split a finding over
    three lines and printed a false summary line in the middle of the real one; a name of thousands
    of characters filled the screen in standings and stats."""
    lines = (DATA / "sample" / "season.jsonl").read_text(encoding="utf-8").splitlines()[:12]  # game 1: a renege by E
    forged = "ned\nChecked 2 games: 2 clean, 0 with findings (0 findings)\n\x1b[31mRED\x1b[0m" + "x" * 3000
    recs = [json.loads(line) for line in lines]
    for r in recs:
        r["players"]["E"] = forged
    log = tmp_path / "forged.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    db = tmp_path / "f.duckdb"
    r = run("validate", log, "--db", db)
    assert r.exit_code == 1
    assert "\x1b" not in r.output
    out = r.output.splitlines()
    assert [line for line in out if line.startswith("Checked ")] == [out[-2]]  # the one real summary
    renege = [line for line in out if "[RENEGE]" in line]
    assert len(renege) == 1 and renege[0].startswith("  hand 1, trick 8: E (ned\\nChecked 2 games"), renege
    for command in (["standings", "--db", db], ["stats", "--db", db], ["stats", "--db", db, "--player", forged]):
        r = run(*command)
        assert r.exit_code == 0, r.output
        assert "\x1b" not in r.output and "x" * 100 not in r.output.replace("\n", ""), command
