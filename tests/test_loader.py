import orjson
import pytest

from spadework.parsers import db, jsonl

from test_jsonl import line

# A complete, legal hand (each seat plays one suit in turn is not legal, so build it by rank).
SUITS = "CDHS"


def full_hand_obj(game="g", hand=1):
    # N holds all clubs, E diamonds, S hearts, W spades; E leads clubs? no: every trick is led by the
    # winner; here we only need 13 tricks of 4 distinct cards for the loader (the checker is tested elsewhere).
    ranks = "AKQJT98765432"
    tricks = [{"leader": "N", "cards": [r + "C", r + "D", r + "H", r + "S"]} for r in ranks]
    return {
        "game_id": game,
        "hand": hand,
        "players": {"N": "a", "E": "b", "S": "c", "W": "d"},
        "dealer": "W",
        "bids": [{"seat": s, "bid": 3} for s in "NESW"],
        "tricks": tricks,
    }


def write(path, *objs_or_lines):
    path.write_text("".join((o if isinstance(o, str) else orjson.dumps(o).decode()) + "\n" for o in objs_or_lines))
    return path


def test_load_and_read_back(tmp_path):
    p = write(tmp_path / "a.jsonl", line(hand=1), line(hand=2, deal={"N": ["AS"], "E": [], "S": [], "W": []}))
    con = db.connect()
    summary = db.load_files(con, [p])
    assert (summary.hands, summary.errors) == (2, 0)
    recs = list(db.iter_records(con))
    originals = [i for i in jsonl.load(p)]
    assert [jsonl.record_to_obj(r) for r in recs] == [jsonl.record_to_obj(o) for o in originals]
    assert con.execute("SELECT seat, bid, nil, blind FROM bids WHERE hand = 1 ORDER BY bid_order").fetchall() == [
        ("E", 3, False, False), ("S", 0, True, False), ("W", 4, False, False), ("N", 5, False, False)]
    assert con.execute("SELECT trick, play_order, seat, card FROM plays WHERE hand = 1").fetchall() == [
        (1, 1, "E", "2C"), (1, 2, "S", "5C"), (1, 3, "W", "KC"), (1, 4, "N", "AC")]
    assert con.execute("SELECT side, points, total, bags FROM recorded_scores WHERE hand = 1 ORDER BY side DESC").fetchall() == [
        ("NS", 151, 151, 1), ("EW", -70, -70, 0)]
    h = con.execute("SELECT dealer, player_n, player_w, rules, source_file, source_line FROM hands WHERE hand = 2").fetchone()
    assert h == ("N", "ana", "di", "standard", str(p), 2)


def test_deal_inferred_from_complete_play(tmp_path):
    p = write(tmp_path / "full.jsonl", full_hand_obj())
    con = db.connect()
    db.load_files(con, [p])
    rows = con.execute("SELECT seat, count(*), bool_and(inferred) FROM deals GROUP BY seat ORDER BY seat").fetchall()
    assert rows == [("E", 13, True), ("N", 13, True), ("S", 13, True), ("W", 13, True)]
    (rec,) = db.iter_records(con)
    assert rec.deal is None  # an inferred deal is not handed back as a recorded one
    assert con.execute("SELECT card FROM deals WHERE seat = 'N' ORDER BY card_order LIMIT 2").fetchall() == [("AC",), ("KC",)]


def test_reload_replaces_never_duplicates(tmp_path):
    p = write(tmp_path / "a.jsonl", line(hand=1), line(hand=2))
    con = db.connect()
    db.load_files(con, [p])
    db.load_files(con, [p])
    assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == 2
    assert con.execute("SELECT count(*) FROM bids").fetchone()[0] == 8
    # the file shrinks: its old hand 2 goes away
    write(p, line(hand=1))
    db.load_files(con, [p])
    assert con.execute("SELECT hand FROM hands").fetchall() == [(1,)]
    assert con.execute("SELECT count(*) FROM plays").fetchone()[0] == 4
    # another file holding the same hand never replaces it silently: it is a load error naming the first
    q = write(tmp_path / "b.jsonl", line(hand=1, dealer="E"))
    s = db.load_files(con, [q])
    assert (s.hands, s.errors) == (0, 1)
    assert con.execute("SELECT dealer, source_file FROM hands").fetchall() == [("N", str(p))]
    msg = con.execute("SELECT message FROM load_errors").fetchall()[0][0]
    assert msg == f"hand 1 of game 'club-0314-t2' is already loaded from {p}:1; not loaded again (load that file again to replace it, or give this game another id)"
    assert con.execute("SELECT count(*) FROM bids").fetchone()[0] == 4


def test_one_file_under_two_spellings_is_one_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "g.jsonl", line(hand=1), "{bad")
    con = db.connect()
    db.load_files(con, ["g.jsonl"])
    db.load_files(con, [tmp_path / "g.jsonl"])
    db.load_files(con, ["./g.jsonl"])
    assert con.execute("SELECT count(*), min(source_file) FROM hands").fetchall() == [(1, "g.jsonl")]
    assert con.execute("SELECT count(*) FROM load_errors").fetchall() == [(1,)]


@pytest.mark.parametrize(
    "field,value",
    [("hand", 99999999999), ("score", {"NS": {"points": 2**40}}), ("taken", {"N": -(2**33)}),
     ("score_before", {"NS": 10**12, "EW": 0}), ("bids", [{"seat": "N", "bid": 1e20}])],
)
def test_numbers_too_big_for_the_tables_are_load_errors_not_crashes(tmp_path, field, value):
    bad = line(**{"hand": 2, **{field: value}})
    p = write(tmp_path / "big.jsonl", line(hand=1), bad, line(hand=3 if field != "hand" else 4))
    con = db.connect()
    s = db.load_files(con, [p])
    assert (s.hands, s.errors) == (2, 1)
    (msg,) = con.execute("SELECT message FROM load_errors").fetchall()[0]
    assert "is out of range" in msg


def test_duplicate_hand_in_one_file_is_rejected(tmp_path):
    p = write(tmp_path / "dup.jsonl", line(hand=1), line(hand=1, dealer="S"))
    con = db.connect()
    s = db.load_files(con, [p])
    assert (s.hands, s.errors) == (1, 1)
    (msg, ln) = con.execute("SELECT message, source_line FROM load_errors").fetchone()
    assert ln == 2 and "appears twice in this file (first at line 1)" in msg


def test_crash_half_way_leaves_no_half_file(tmp_path):
    con = db.connect()
    p = write(tmp_path / "a.jsonl", line(hand=1))
    db.load_files(con, [p])

    def items():
        yield from jsonl.loads(line(hand=5), source=str(p))
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        db.load_items(con, items(), str(p))
    assert con.execute("SELECT hand FROM hands").fetchall() == [(1,)]


def test_folder_load_skips_unknown_files_but_reports_named_ones(tmp_path):
    write(tmp_path / "a.jsonl", line(hand=1))
    (tmp_path / "notes.txt").write_text("just some words\n")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "b.jsonl", line(game_id="other"))
    con = db.connect()
    s = db.load_files(con, [tmp_path])
    assert s.hands == 2 and s.skipped == [str(tmp_path / "notes.txt")]
    s2 = db.load_files(con, [tmp_path / "notes.txt"])
    assert s2.errors == 1
    # the row names the file; the message does not again (it read "notes.txt:0: .../notes.txt: not a ...")
    assert con.execute("SELECT message FROM load_errors").fetchone()[0].startswith("not a log format spadework reads")


@pytest.mark.parametrize("first", [b";", b"[", b"{", b"%"])
@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_database_beside_the_logs_is_never_read_as_a_log(tmp_path, engine, first):
    """A DuckDB file starts with a random checksum; one starting with a byte that begins an SPN or
    JSON Lines file was read as a log and its "records" rejected (exit 2 on ``data/sample`` once in
    about 60 builds of its database).  In a folder, databases and their journals are passed over
    unread, and no binary content is taken for a text log whatever its name."""
    import duckdb

    from spadework.analysis.engine import engines
    from spadework.parsers import formats

    write(tmp_path / "a.jsonl", line(hand=1))
    dbfile = tmp_path / "season.duckdb"
    made = duckdb.connect(str(dbfile))
    made.execute("CREATE TABLE t AS SELECT 1 AS x")
    made.close()
    with open(dbfile, "r+b") as f:
        f.write(first)
    blob = tmp_path / "blob.bin"
    blob.write_bytes(first + b"\x00\x01\x02" * 100 + b"\n[Event x]\n")
    assert formats.sniff(dbfile.read_bytes()[:65536]) is None and formats.sniff(blob.read_bytes()) is None
    con = db.connect()
    s = engines.get_engine(engine).load(con, [tmp_path])
    assert (s.hands, s.errors, [f.source_file for f in s.files]) == (1, 0, [str(tmp_path / "a.jsonl")])
    assert s.skipped == [str(tmp_path / "blob.bin")]  # not a log format: said, not read as one


def test_walk_passes_over_a_folder_gone_while_it_is_listed(tmp_path, monkeypatch):
    """A subfolder that is gone by the time it is listed (a database's temporary folder beside the
    logs) no longer fails the whole walk; the other files still come out, sorted."""
    import os

    from spadework.parsers.io import walk

    for rel in ("a/1.jsonl", "gone/2.jsonl", "b/3.jsonl", "4.jsonl"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        write(tmp_path / rel, line(hand=1))
    real_scandir = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "gone":
            raise FileNotFoundError(2, "No such file or directory", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert list(walk([tmp_path])) == [tmp_path / "4.jsonl", tmp_path / "a" / "1.jsonl", tmp_path / "b" / "3.jsonl"]


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_file_name_that_is_not_utf8_is_recorded_with_its_bytes_escaped(tmp_path, engine, monkeypatch):
    """A log whose file name has bytes that are not UTF-8 loads (the whole load failed with an
    encoding error); its source_file shows those bytes as \\xNN.  Two such files whose names differ
    only there keep names of their own: written as U+FFFD they were one name, and loading the
    second removed the first's hands when a batch (the reference's: 5,000 records) ended between
    them, but not when both were in one batch, so the engines disagreed (found by fuzzing)."""
    import os

    from spadework.analysis.engine import engines
    from spadework.parsers import db as parsers_db

    monkeypatch.setattr(parsers_db, "BATCH_HANDS", 1)  # a batch ends after every file
    write(tmp_path / "a.jsonl", line(hand=1))
    for name, gid in ((b"s\xff\xfe.jsonl", "other"), (b"s\xfe\xfe.jsonl", "third")):
        with open(os.path.join(os.fsencode(tmp_path), name), "wb") as f:
            f.write((line(game_id=gid) + "\n").encode())
    con = db.connect()
    s = engines.get_engine(engine).load(con, [tmp_path])
    assert (s.hands, s.errors) == (3, 0)
    assert sorted(con.execute("SELECT DISTINCT source_file, game_id FROM hands").fetchall()) == [
        (str(tmp_path / "a.jsonl"), "club-0314-t2"),
        (str(tmp_path / "s\\xfe\\xfe.jsonl"), "third"),
        (str(tmp_path / "s\\xff\\xfe.jsonl"), "other"),
    ]


def test_display_name_when_the_working_directory_is_gone(tmp_path, monkeypatch):
    from spadework.parsers.io import display_name

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    assert display_name(tmp_path / "a.jsonl") == str(tmp_path / "a.jsonl")
    assert display_name(gone / "b.jsonl") == "b.jsonl"
    gone.rmdir()
    assert display_name(tmp_path / "a.jsonl") == str(tmp_path / "a.jsonl")
    assert display_name(gone / "b.jsonl") == str(gone / "b.jsonl")


def test_empty_file_and_missing_path(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    con = db.connect()
    s = db.load_files(con, [tmp_path / "empty.jsonl"])
    assert s.errors == 1 and "holds no hands" in con.execute("SELECT message FROM load_errors").fetchone()[0]
    with pytest.raises(FileNotFoundError):
        db.load_files(con, [tmp_path / "nope.jsonl"])


def test_huge_garbage_line_is_one_error(tmp_path):
    p = tmp_path / "big.jsonl"
    p.write_bytes(line(hand=1).encode() + b"\n" + b"x" * (5 * 1024 * 1024) + b"\n" + line(hand=2).encode() + b"\n")
    con = db.connect()
    s = db.load_files(con, [p])
    assert (s.hands, s.errors) == (2, 1)
    msg, raw_len = con.execute("SELECT message, length(raw) FROM load_errors").fetchone()
    assert msg.startswith("not valid JSON") and len(msg) < 300 and raw_len == 5 * 1024 * 1024


def test_where_filter_and_order(tmp_path):
    p = write(tmp_path / "a.jsonl", line(game_id="b", hand=2), line(game_id="b", hand=1), line(game_id="a", hand=7))
    con = db.connect()
    db.load_files(con, [p])
    assert [(r.game_id, r.hand) for r in db.iter_records(con)] == [("a", 7), ("b", 1), ("b", 2)]
    assert [r.hand for r in db.iter_records(con, "h.game_id = ?", ["b"])] == [1, 2]


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_file_loaded_again_from_another_folder_replaces_its_hands(tmp_path, monkeypatch, engine):
    """``source_file`` is the path as given from the working directory, so the same file can be named
    ``logs/g.jsonl`` from one folder and ``g.jsonl`` from another: loading it again under another
    name still replaces its hands (FORMATS.md section 5), its load errors included; another file
    holding the same hands still clashes."""
    from spadework.analysis.engine import engines, loader
    from spadework.parsers.io import display_name

    monkeypatch.setattr(loader, "FAST_MIN_BYTES", 0)  # the compiled loader reads even this small file
    eng = engines.get_engine(engine)
    (tmp_path / "logs").mkdir()
    g = write(tmp_path / "logs" / "g.jsonl", line(hand=1), line(hand=2), "{bad")
    con = db.connect()
    monkeypatch.chdir(tmp_path)
    eng.load(con, ["logs/g.jsonl"])
    write(g, line(hand=1, dealer="E"), line(hand=2))  # the log is mended and loaded again
    for where, name in ((tmp_path / "logs", "g.jsonl"), (tmp_path.parent, str(g)), (tmp_path, "logs/g.jsonl")):
        monkeypatch.chdir(where)
        s = eng.load(con, [name])
        assert (s.hands, s.errors) == (2, 0), where
        assert con.execute("SELECT count(*), min(dealer), max(source_file) FROM hands WHERE hand = 1").fetchall() == [
            (1, "E", display_name(name))
        ]
        assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == 2
        assert con.execute("SELECT count(*) FROM load_errors").fetchone()[0] == 0
    # another file with the same hands is not the same file
    other = write(tmp_path / "other.jsonl", line(hand=1))
    s = eng.load(con, [other])
    assert (s.hands, s.errors) == (0, 1)


def test_records_are_read_with_young_garbage_collections_only(tmp_path, monkeypatch):
    """Full collections walked every parsed record held for the next batch (a quarter of the
    Python parser's time): the loader raises the older generations' thresholds while it reads a
    file and puts back what was in force, also after an error and around nested use."""
    import gc

    from spadework.parsers import formats, io

    before = gc.get_threshold()
    seen = []
    real = formats.load

    def load(path, fmt=None, source=None):  # the reader's records, with the thresholds met on the way
        for item in real(path, fmt, source):
            seen.append(gc.get_threshold())
            yield item

    monkeypatch.setattr(formats, "load", load)
    write(tmp_path / "a.jsonl", full_hand_obj(hand=1), full_hand_obj(hand=2))
    con = db.connect(":memory:")
    assert db.load_files(con, [tmp_path / "a.jsonl"]).hands == 2
    assert len(seen) == 2 and all(t[0] == before[0] and t[1] >= 1_000_000 and t[2] >= 1_000_000 for t in seen)
    assert gc.get_threshold() == before

    with io.young_collections_only():
        with io.young_collections_only():
            pass
        assert gc.get_threshold()[1] >= 1_000_000  # the outer user is still reading
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), io.young_collections_only():
        raise RuntimeError("a failed read")
    assert gc.get_threshold() == before


SNIFFED = {
    # FORMATS.md section 2: "{ ... }" is an SPN comment, also on a line of its own before a hand
    "spn, a brace comment on its own line": (b'[Game "m"] [North "a"]\n\n{ typed by the TD }\n[Hand "1"]\n', "spn"),
    "spn, a brace comment first": (b'{ club night }\n[Event "x"]\n[Hand "1"]\n', "spn"),
    "spn, a comment first": (b'; typed by the TD\n[Hand "1"]\n', "spn"),
    "ptn": (b'[Event "x"]\n[Auction "E"]\n', "ptn"),
    "jsonl": (b'{"game_id": "g", "hand": 1}\n', "jsonl"),
    "jsonl, spaced": (b'{ "game_id": "g", "hand": 1}\n', "jsonl"),
    "jsonl, a bad first line": (b'{bad\n{"game_id": "g", "hand": 1}\n', "jsonl"),
    "jsonl, single quotes (rejected line by line)": (b"{'game_id': 'g'}\n", "jsonl"),
    "json, pretty-printed": (b'{\n  "game_id": "g"\n}\n', "jsonl"),
    "json, an array": (b'[\n  {"game_id": "g"}\n]\n', "jsonl"),
    "json, a byte-order mark": (b'\xef\xbb\xbf[{"game_id": "g"}]', "jsonl"),
    "openspiel": (b'{"history": [1, 2, 3]}\n', "openspiel"),
    "csv": (b"game_id,hand,dealer,bid_N\n", "csv"),
    "csv, quoted header": (b'"game_id","hand","dealer","bid_N"\n', "csv"),
    "csv, semicolons": (b"game_id;hand;dealer;bid_N\n", "csv"),
    "csv, another column order": (b"hand,dealer,game_id\n", "csv"),
    "prose": (b"hello {world}\n", None),
}


@pytest.mark.parametrize("name", list(SNIFFED))
def test_a_file_whose_name_says_nothing_is_told_by_its_content(name):
    """Found by a format audit: an SPN file with a ``{ ... }`` comment line was taken for JSON Lines
    (any line starting with ``{`` was), and a score sheet with a quoted or semicolon header was
    not recognised; each such file lost every hand when given without its extension (or piped)."""
    from spadework.parsers import formats

    head, expected = SNIFFED[name]
    assert formats.sniff(head) == expected


@pytest.mark.parametrize("engine", ["reference", "compiled"])
@pytest.mark.parametrize("shape", ["pretty object", "array, a hand a line", "one-line array", "gzipped"])
def test_a_json_document_saved_with_a_byte_order_mark_is_read(tmp_path, engine, shape):
    """Windows editors save UTF-8 with a byte-order mark.  A ``.json`` document (one object or an
    array, FORMATS.md section 1) with one was read line by line, every line rejected as "not valid
    JSON" (found by a format audit); the mark is now dropped as it is in every other format."""
    import gzip
    import json

    from spadework.analysis.engine import engines

    objs = [json.loads(line(hand=1)), json.loads(line(hand=2))]
    text = {
        "pretty object": json.dumps(objs[0], indent=2),
        "array, a hand a line": "[\n" + ",\n".join(json.dumps(o) for o in objs) + "\n]\n",
        "one-line array": json.dumps(objs),
        "gzipped": json.dumps(objs, indent=1),
    }[shape]
    data = b"\xef\xbb\xbf" + text.encode()
    path = tmp_path / ("hands.json.gz" if shape == "gzipped" else "hands.json")
    path.write_bytes(gzip.compress(data) if shape == "gzipped" else data)
    s = engines.get_engine(engine).load(db.connect(), [path])
    assert (s.hands, s.errors) == (1 if shape == "pretty object" else 2, 0)


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_one_path_given_alone_is_one_path(tmp_path, engine, monkeypatch):
    """``load_files(con, "season.jsonl")``: a string is iterable, and was read as the paths "s", "e",
    "a"..., and a path starting with "/" walked the whole file system (found by an API audit)."""
    from spadework.analysis.engine import engines

    p = write(tmp_path / "a.jsonl", line(hand=1))
    monkeypatch.chdir(tmp_path)
    for given in (str(p), p, "a.jsonl"):
        s = engines.get_engine(engine).load(db.connect(), given)
        assert (s.hands, len(s.files), s.skipped) == (1, 1, [])


def test_a_file_is_listed_once_in_loaded_files_whatever_a_loader_knew(tmp_path):
    """The compiled loader listed a file in loaded_files, failed on it (a gzip cut off) and left it
    to the Python loader, whose picture of the database predated that row: the file was listed
    twice (found by a Dask audit, which lists it once).  A row already there is not added again."""
    from spadework.parsers.db import Known, _forget_files, connect

    log = tmp_path / "a.jsonl"
    log.write_text("")
    con = connect(None)
    known = Known.read(con)  # taken before the other loader's insert
    _forget_files(con, [str(log)])
    _forget_files(con, [str(log)], known=known)
    assert con.execute("SELECT source_file, count(*) FROM loaded_files GROUP BY ALL").fetchall() == [(str(log), 1)]


def test_a_database_loaded_from_a_pipe_has_the_loaded_files_table(tmp_path):
    """Made only where a loaded path was a file: a database loaded from /dev/stdin over Dask had
    none, so SQL on it failed (found by a Dask audit).  It comes with the stored tables now."""
    from spadework.parsers.db import connect
    from spadework.parsers.schema import create_storage

    con = connect(None)
    create_storage(con)
    assert con.execute("SELECT count(*) FROM loaded_files").fetchall() == [(0,)]


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_file_loaded_again_takes_its_hands_double_dummy_judgements_with_them(tmp_path, engine):
    """`analyse` wrote card_costs and dd_par; loading the file again with other deals under the same
    game ids left them, and stats and the report showed the old hands' card judgements as current
    (found by a report audit).  The judgements of the hands removed go; another file's stay."""
    from spadework.analysis.engine.engines import get_engine
    from spadework.parsers.schema import ANALYSIS_TABLES, create_tables
    from conftest import ROOT

    lines = (ROOT / "data" / "club_night.jsonl").read_text().splitlines()
    first, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(lines[0] + "\n")
    other.write_text(lines[-1] + "\n")
    eng = get_engine(engine)
    con = db.connect(tmp_path / "x.duckdb")
    eng.load(con, [first, other])
    create_tables(con, ANALYSIS_TABLES)
    keys = con.execute("SELECT game_id, hand FROM hands ORDER BY source_line, game_id").fetchall()
    assert len(keys) == 2 and keys[0] != keys[1]
    for g, h in keys:
        con.execute("INSERT INTO card_costs VALUES (?, ?, 1, 1, 'N', 'ana', 'AS', 7, 7, 0, 'AS')", [g, h])
        con.execute("INSERT INTO dd_par VALUES (?, ?, 7, 6)", [g, h])
    first.write_text(lines[1] + "\n")  # the file now holds another hand
    eng.load(con, [first])
    b_key = con.execute("SELECT game_id, hand FROM hands WHERE source_file LIKE '%b.jsonl'").fetchall()
    for table in ("card_costs", "dd_par"):
        assert con.execute(f"SELECT game_id, hand FROM {table}").fetchall() == b_key, table


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_subfolder_that_cannot_be_listed_is_a_load_error_not_left_out_unseen(tmp_path, monkeypatch, engine):
    """A folder without read permission was passed over: its logs unread, the run "clean", exit 0
    (found by a user audit).  It is now a load error naming the folder (os.walk reports it as
    permission denied; root ignores permissions, so the test has os.walk say so)."""
    import os

    from spadework.analysis.engine.engines import get_engine

    (tmp_path / "logs" / "locked").mkdir(parents=True)
    (tmp_path / "logs" / "a.jsonl").write_text(line(game_id="a", hand=1) + "\n")
    locked = tmp_path / "logs" / "locked"
    real_walk, real_listdir = os.walk, os.listdir

    def walk(top, onerror=None, **kw):
        for t, dirs, names in real_walk(top, onerror=onerror, **kw):
            if "locked" in dirs:
                dirs.remove("locked")
                onerror(PermissionError(13, "Permission denied", str(locked)))
            yield t, dirs, names

    def listdir(p="."):
        if os.fspath(p) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_listdir(p)

    monkeypatch.setattr(os, "walk", walk)
    monkeypatch.setattr(os, "listdir", listdir)
    con = db.connect(None)
    get_engine(engine).load(con, [tmp_path / "logs"])
    assert con.execute("SELECT count(*) FROM hands").fetchone() == (1,)
    [(source, n, message)] = con.execute("SELECT source_file, source_line, message FROM load_errors").fetchall()
    assert source.endswith("locked") and n == 0
    assert message == "a folder whose files cannot be listed (permission denied): its logs are not read"
