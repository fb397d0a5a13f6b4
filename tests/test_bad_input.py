"""Issue 2's "done when": a folder mixing good files and every kind of bad input loads every good hand and
lists every bad record in load_errors, with file, line and a reason a person understands."""

import gzip
import subprocess
import sys

import pytest

from spadework.parsers import db
from test_jsonl import line

CSV_HEADER = (
    "game_id,hand,dealer,player_N,player_E,player_S,player_W,bid_N,bid_E,bid_S,bid_W,"
    "taken_N,taken_E,taken_S,taken_W,NS_points,NS_total,NS_bags,EW_points,EW_total,EW_bags"
)
CSV_ROW = "sheet-1,{hand},N,ana,bo,cy,di,4,3,2,3,4,3,3,3,61,{total},1,60,60,0"

SPN_GOOD = """[Event "Club night"]
[Game "spn-1"]
[Rules "standard"]
[North "ana"] [East "bo"] [South "cy"] [West "di"]

[Hand "1"]
[Dealer "N"]
[Bids "E 3, S nil, W 4, N 5"]
[Taken "N 5 E 3 S 1 W 4"]

[Hand "2"]
[Dealer "E"
[Bids "S 3, W 3, N 3, E 3"]

[Hand "3"]
[Dealer "S"]
[Bids "W 3, N 3, E 3, S 3"]
"""


def make_folder(root):
    good = root / "good"
    bad = root / "bad"
    good.mkdir()
    bad.mkdir()
    (good / "a.jsonl").write_text(line(hand=1) + "\n" + line(hand=2) + "\n")
    with gzip.open(good / "b.jsonl.gz", "wt") as f:
        f.write(line(game_id="gz", hand=1) + "\n")
    (bad / "truncated.jsonl").write_text(line(game_id="trunc", hand=1) + "\n" + line(game_id="trunc", hand=2)[:-15] + "\n")
    (bad / "badcard.jsonl").write_text(line(tricks=[{"leader": "E", "cards": ["1S"]}]) + "\n")
    (bad / "badseat.jsonl").write_text(line(dealer="X") + "\n")
    (bad / "wrongtype.jsonl").write_text(line(hand="two") + "\n")
    (bad / "missing.jsonl").write_text(line(players=...) + "\n")
    (bad / "utf8.jsonl").write_bytes(b'{"game_id": "caf\xe9", "hand": 1}\n')
    (bad / "empty.jsonl").write_text("")
    (bad / "garbage.jsonl").write_bytes(b"\x00garbage" * (5 * 1024 * 1024 // 8) + b"\n")
    (bad / "schema.jsonl").write_text(line(schema="spades-hand/2") + "\n")
    # an extension nested deeper than the JSON writer stores: once crashed the whole file's load
    deep = line(game_id="deep", hand=2)[:-1] + ',"x_deep":' + "[" * 300 + "]" * 300 + "}"
    (bad / "deep.jsonl").write_text(line(game_id="deep", hand=1) + "\n" + deep + "\n")
    # the same in a .json array, a rules object nested as deep, an unknown key as deep inside a trick
    # (a warning): each ended the load with orjson's TypeError
    (bad / "deep.json").write_text("[" + line(game_id="deeparr", hand=1)[:-1] + ',"x_deep":' + "[" * 300 + "]" * 300 + "}]")
    nest = "[" * 300 + "]" * 300
    (bad / "deeprules.jsonl").write_text(line(game_id="deeprules", rules={"preset": "standard"}).replace('"standard"}', '"standard","x":' + nest + "}", 1) + "\n")
    trick = line(game_id="deeptrick", tricks=[{"leader": "E", "cards": ["2C"], "note": 1}]).replace('"note":1', '"note":' + nest, 1)
    (bad / "deeptrick.jsonl").write_text(trick + "\n")
    (bad / "tag.spn").write_text(SPN_GOOD)
    rows = [CSV_HEADER, CSV_ROW.format(hand=1, total=61), "sheet-1,2,E,ana,bo", CSV_ROW.format(hand=3, total=122)]
    (bad / "short.csv").write_text("\n".join(rows) + "\n")
    return root


# (file, line) of every bad record above, with a word of the reason each must give
EXPECTED_ERRORS = {
    ("truncated.jsonl", 2): "not valid JSON",
    ("badcard.jsonl", 1): "'1S' is not a card",
    ("badseat.jsonl", 1): "'X' is not a seat",
    ("wrongtype.jsonl", 1): "'two' is not a whole number",
    ("missing.jsonl", 1): "missing required key 'players'",
    ("utf8.jsonl", 1): "invalid UTF-8",
    ("empty.jsonl", 0): "no hands",
    ("garbage.jsonl", 1): "not valid JSON",
    ("schema.jsonl", 1): "spades-hand/2",
    ("deep.jsonl", 2): "cannot be stored",
    ("deep.json", 1): "extension fields cannot be stored (nested more than 254 levels deep)",
    ("deeprules.jsonl", 1): "rules cannot be stored (nested more than 254 levels deep)",
    ("tag.spn", 12): "]",
    ("short.csv", 3): "cells",
}


def test_mixed_folder_loads_every_good_hand_and_lists_every_bad_record(tmp_path):
    root = make_folder(tmp_path)
    con = db.connect()
    summary = db.load_files(con, [root])
    # good hands: a.jsonl 2, b.jsonl.gz 1, truncated.jsonl 1, deep.jsonl 1, deeptrick.jsonl 1, tag.spn 2
    # (hands 1 and 3), short.csv 2
    assert summary.hands == 10
    (warning,) = con.execute("SELECT message FROM load_warnings WHERE source_file LIKE '%deeptrick.jsonl'").fetchone()
    assert warning.startswith("tricks[0]: unknown key 'note' ignored (value (not shown: nested more than 254 levels deep)")
    rows = con.execute("SELECT source_file, source_line, message, raw FROM load_errors").fetchall()
    got = {(f.rsplit("/", 1)[-1], ln): (msg, raw) for f, ln, msg, raw in rows}
    assert set(got) == set(EXPECTED_ERRORS)
    for key, word in EXPECTED_ERRORS.items():
        assert word in got[key][0], (key, got[key][0])
    assert "sheet-1,2,E,ana,bo" in got[("short.csv", 3)][1]
    assert len(got[("garbage.jsonl", 1)][1]) >= 5 * 1024 * 1024 - 16


def test_cli_load_exit_status_and_summary(tmp_path):
    root = make_folder(tmp_path)
    dbfile = tmp_path / "out.duckdb"
    good = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "load", str(root / "good"), "--db", str(dbfile)],
                          capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    assert "Loaded 3 hands from 2 files; 0 records rejected" in good.stdout
    bad = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "load", str(root / "bad"), "--db", str(dbfile)],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert "14 records rejected" in bad.stdout
    assert "badseat.jsonl:1: dealer 'X' is not a seat" in bad.stdout


@pytest.mark.parametrize(
    "name, content, reason",
    [
        ("blank.jsonl", b"\n  \n", "it is empty or blank"),
        ("header.csv", b"game_id,hand,dealer,player_N\n", "it has text, but no hand record"),
        ("tags.spn", b'[Event "x"]\n; nothing else\n', "it has text, but no hand record"),
        ("empty.json", b"[ ]", "an empty JSON array"),
    ],
)
def test_a_file_with_no_hands_says_why(tmp_path, name, content, reason):
    """A score sheet holding only its header was reported as "empty or blank" (found by a format
    audit): the reason now says what the file holds."""
    from spadework.parsers.io import no_hands_reason

    path = tmp_path / name
    path.write_bytes(content)
    assert reason in no_hands_reason(path)


def test_a_hand_number_out_of_range_names_the_range_of_hand_numbers(tmp_path):
    """A hand number beyond the tables' integers named the range from -2147483648, though a hand
    number starts at 1 (found by a format audit)."""
    import json

    p = tmp_path / "big.jsonl"
    p.write_text(json.dumps(dict(json.loads(line(hand=1)), hand=18446744073709551617)) + "\n")
    con = db.connect()
    db.load_files(con, [p])
    [(msg,)] = con.execute("SELECT message FROM load_errors").fetchall()
    assert "the hand number: 18446744073709551617 is out of range (a whole number between 1 and 2147483647)" in msg


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_blank_game_id_is_rejected_by_either_loader_and_a_padded_one_kept(tmp_path, engine):
    """A game_id of white space (spaces, no-break spaces, raw or as ``\\u`` escapes) named no game,
    yet it loaded; the required game_id must say which game the hand belongs to (FORMATS.md 1)."""
    import json

    from spadework.analysis.engine import engines

    def with_id(text: str, ensure_ascii: bool) -> str:
        return json.dumps(dict(json.loads(line(hand=1)), game_id=text), ensure_ascii=ensure_ascii)

    lines = [
        with_id(" t1 ", False),
        with_id("   ", False),
        with_id("\u00a0\u3000", False),  # raw UTF-8
        with_id("\u00a0 ", True),  # escaped
        with_id("  ", True).replace('"  "', '"\\u0020\\u0020"'),
        with_id("\u00f1-2", True),  # starts with an escape, not blank
    ]
    p = tmp_path / "ids.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    con = db.connect()
    engines.get_engine(engine).load(con, [p])
    assert con.execute("SELECT game_id FROM hands ORDER BY game_id").fetchall() == [(" t1 ",), ("\u00f1-2",)]
    errors = con.execute("SELECT source_line, message FROM load_errors ORDER BY source_line").fetchall()
    assert errors == [(n, "game_id is blank (only white space)") for n in (2, 3, 4, 5)]
