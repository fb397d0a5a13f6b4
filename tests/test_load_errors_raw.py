"""``load_errors.raw`` is the text of the record as the file wrote it (TABLES.md: "the text that could
not be read"), also for a record the loader read but will not write: a hand given twice in a file, a
hand already loaded from another file, a number too large for the tables.  Before, such a record's
``raw`` was rebuilt as canonical JSON, so a user looking for the line in the file did not find it.

Each case runs through the Python loader and the compiled one (each file on its compiled path)."""

from __future__ import annotations

import json

import pytest

from spadework.analysis.engine import loader as fast_load
from spadework.analysis.engine.loader import load_fast
from spadework.parsers.db import connect, load_files

PLAYERS = {"N": "ana", "E": "bo", "S": "cy", "W": "di"}
BIDS = [{"seat": s, "bid": 3} for s in "ESWN"]


def obj(hand: int, **kw) -> dict:
    return {"game_id": "g1", "hand": hand, "players": PLAYERS, "dealer": "NESW"[(hand - 1) % 4], "bids": BIDS,
            "taken": {"N": 3, "E": 3, "S": 4, "W": 3}} | kw


def spaced(o: dict) -> str:
    """A line as ``json.dumps`` writes it (spaces after ':' and ','), unlike the canonical form."""
    return json.dumps(o)


def spn_block(hand: int, score: str = "") -> str:
    return f'[Hand "{hand}"]  [Dealer "{"NESW"[(hand - 1) % 4]}"]\n[Bids "E 3,  S 3, W 3, N 3"]  ; bids\n[Taken "N 3 E 3 S 4 W 3"]{score}'


SPN_HEAD = '[Game "g1"]\n[North "ana"] [East "bo"] [South "cy"] [West "di"]\n'
CSV_HEAD = ("game_id,hand,dealer,player_N,player_E,player_S,player_W,bid_N,bid_E,bid_S,bid_W,"
            "taken_N,taken_E,taken_S,taken_W,NS_points,NS_total,NS_bags,EW_points,EW_total,EW_bags")


def csv_row(hand: int, ns_points: str = "") -> str:
    return f'g1, {hand},{"NESW"[(hand - 1) % 4]},ana,bo,cy,di,3,3,3,3,3,3,4,3,{ns_points},,,,,'


# (name, file name, file text, the line of the rejected record, its raw text, a word of the reason)
CASES = [
    ("jsonl twice", "a.jsonl", spaced(obj(1)) + "\n" + spaced(obj(1, event="again")) + "\n", 2,
     spaced(obj(1, event="again")), "appears twice"),
    ("jsonl out of range", "a.jsonl", spaced(obj(1)) + "\n" + spaced(obj(2, score={"NS": {"points": 99999999999}})) + "\n", 2,
     spaced(obj(2, score={"NS": {"points": 99999999999}})), "out of range"),
    ("spn twice", "a.spn", SPN_HEAD + "\n" + spn_block(1) + "\n\n" + spn_block(1) + "\n", 8, spn_block(1), "appears twice"),
    ("spn out of range", "a.spn", SPN_HEAD + "\n" + spn_block(1, '\n[Score "NS 99999999999"]') + "\n", 4,
     spn_block(1, '\n[Score "NS 99999999999"]'), "out of range"),
    ("csv twice", "a.csv", CSV_HEAD + "\n" + csv_row(1) + "\n" + csv_row(1) + "\n", 3, csv_row(1), "appears twice"),
    ("csv out of range", "a.csv", CSV_HEAD + "\n" + csv_row(1, "99999999999") + "\n", 2, csv_row(1, "99999999999"), "out of range"),
]


@pytest.fixture(params=["python", "compiled"])
def load(request, monkeypatch):
    if request.param == "python":
        return load_files
    monkeypatch.setattr(fast_load, "FAST_MIN_BYTES", 0)
    return load_fast


@pytest.mark.parametrize("name, fname, text, line, raw, reason", CASES, ids=[c[0] for c in CASES])
def test_rejected_record_keeps_its_text(tmp_path, load, name, fname, text, line, raw, reason):
    path = tmp_path / fname
    path.write_text(text)
    con = connect(None)
    load(con, [path])
    rows = con.execute("SELECT source_line, message, raw FROM load_errors").fetchall()
    assert len(rows) == 1, rows
    got_line, message, got_raw = rows[0]
    assert (got_line, got_raw) == (line, raw)
    assert reason in message
    # the other record of the file is loaded (a hand twice: its first copy)
    others = 0 if name in ("spn out of range", "csv out of range") else 1
    assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == others


def test_hand_already_loaded_from_another_file_keeps_its_text(tmp_path, load):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(spaced(obj(1)) + "\n")
    again = spaced(obj(1, event="copied"))
    second.write_text(spaced(obj(2)) + "\n" + again + "\n")
    con = connect(None)
    load(con, [first])
    load(con, [second])
    rows = con.execute("SELECT source_file, source_line, message, raw FROM load_errors").fetchall()
    assert len(rows) == 1, rows
    assert rows[0][1:] == (2, rows[0][2], again) and "is already loaded from" in rows[0][2]
    assert rows[0][0].endswith("b.jsonl")


def test_a_link_to_a_missing_file_inside_a_folder_is_a_load_error(tmp_path, load):
    """A folder's broken link was passed over without a word (the walk kept files only); like any
    file that cannot be read, it is a load error naming it, and the folder's other logs load."""
    import os

    (tmp_path / "good.jsonl").write_text(spaced(obj(1)) + "\n")
    os.symlink(tmp_path / "gone" / "x.jsonl", tmp_path / "broken.jsonl")
    os.symlink(tmp_path / "gone" / "y", tmp_path / "broken-no-extension")
    con = connect(None)
    load(con, [tmp_path])
    rows = sorted(con.execute("SELECT source_file, source_line, message FROM load_errors").fetchall())
    assert [(os.path.basename(f), line) for f, line, _ in rows] == [("broken-no-extension", 0), ("broken.jsonl", 0)]
    assert all("which does not exist" in m for _, _, m in rows)
    assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == 1


def test_utf16_without_a_byte_order_mark_gets_a_hint(tmp_path, load):
    """UTF-16 with a byte-order mark is read; without one every line is 'not valid JSON', which says
    nothing of the cause: the message now names the NUL characters and the likely encoding."""
    path = tmp_path / "u16.jsonl"
    path.write_bytes((spaced(obj(1)) + "\n").encode("utf-16-le"))
    con = connect(None)
    load(con, [path])
    (message,) = [m for (m,) in con.execute("SELECT message FROM load_errors WHERE source_line = 1").fetchall()]
    assert message.startswith("not valid JSON") and "UTF-16 without a byte-order mark" in message
