"""JSON the spec allows that the readers got wrong (found by a FORMATS.md audit): a ``.json`` file of one
object written with ``indent=0``, and whole numbers beyond 64 bits in extension keys ("kept, never
interpreted", FORMATS.md section 1), which were stored as floats."""

from __future__ import annotations

import json

import duckdb
import pytest

from spadework.analysis.engine.engines import get_engine
from spadework.parsers import formats, jsontext
from spadework.parsers.db import connect
from test_jsonl import line

BIG = {"x_big": 123456789012345678901234567890, "x_neg": -9223372036854775809, "x_list": [2**64, 1.5, "2" * 25]}


def loaded(path, engine: str) -> duckdb.DuckDBPyConnection:
    con = connect(None)
    get_engine(engine).load(con, [path])
    return con


def test_jsontext_keeps_whole_numbers_of_any_size():
    text = json.dumps(BIG)
    assert jsontext.loads(text) == BIG and jsontext.loads(text.encode()) == BIG
    assert jsontext.dumps(BIG) == json.dumps(BIG, separators=(",", ":"))
    assert jsontext.loads(b'{"a": 1.5, "b": "1234567890123456789012"}') == {"a": 1.5, "b": "1234567890123456789012"}
    with pytest.raises(ValueError):
        jsontext.loads(b'{"a": NaN}')  # what orjson refuses stays refused


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_extension_numbers_beyond_64_bits_are_kept_exactly(tmp_path, engine):
    obj = {**json.loads(line(game_id="big", hand=1)), **BIG}
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps(obj) + "\n" + line(game_id="big", hand=2) + "\n")
    con = loaded(path, engine)
    assert con.execute("SELECT count(*) FROM load_errors").fetchall() == [(0,)]
    [(extras,)] = con.execute("SELECT extras FROM hands WHERE hand = 1").fetchall()
    kept = json.loads(extras)
    assert {k: kept[k] for k in BIG} == BIG  # (it held 1.2345678901234568e+29)
    # and through the other formats' writers and readers
    [rec] = [r for r in formats.load(path) if r.hand == 1]
    assert {k: rec.extras[k] for k in BIG} == BIG
    for fmt in ("jsonl", "spn"):
        out = tmp_path / f"out.{fmt}"
        with out.open("w") as fp:
            formats.module(fmt).dump([rec], fp)
        [back] = list(formats.load(out))
        assert back.extras == rec.extras, fmt


@pytest.mark.parametrize("indent", [0, 1, 2, None])
@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_json_file_of_one_object_loads_however_it_is_indented(tmp_path, indent, engine):
    # indent=0 starts the objects inside "tricks" at column 0: the file was read as JSON Lines (230 errors)
    obj = json.loads(line(game_id="one", hand=1))
    path = tmp_path / "one.json"
    path.write_text(json.dumps(obj, indent=indent))
    con = loaded(path, engine)
    assert con.execute("SELECT count(*) FROM load_errors").fetchall() == [(0,)]
    assert con.execute("SELECT game_id, hand FROM hands").fetchall() == [("one", 1)]


def test_a_json_file_of_lines_is_still_read_as_lines(tmp_path):
    path = tmp_path / "lines.json"
    path.write_text(line(game_id="l", hand=1) + "\n" + line(game_id="l", hand=2) + "\n{broken\n")
    items = list(formats.load(path))
    assert [type(i).__name__ for i in items] == ["HandRecord", "HandRecord", "LoadError"]
    assert items[2].source_line == 3


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_key_given_twice_in_one_object_rejects_its_line(tmp_path, engine):
    """JSON does not say which of two equal keys counts; orjson kept the last, so `"hand": 2, "hand": 3`
    read as hand 3, and the real hand 3 on the next line was the one rejected (found by a user audit)."""
    good = [line(game_id="dup", hand=h) for h in (1, 2, 3)]
    top = good[1].replace('"hand":2', '"hand":2,"hand":3', 1)
    nested = good[1].replace('"leader":', '"leader":"N","leader":', 1)
    players = good[1].replace('"players":{', '"players":{"N":"zed",', 1)
    colon_in_a_name = json.loads(good[1])
    colon_in_a_name["players"]["N"] = 'a":b'
    spaced = json.dumps(json.loads(good[1]), separators=(" , ", " : "))
    cases = {"top": (top, "hand"), "nested": (nested, "leader"), "players": (players, "N"),
             "colon in a name": (json.dumps(colon_in_a_name), None), "spaced": (spaced, None)}  # fmt: skip
    for name, (text, key) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join([good[0], text, good[2]]) + "\n")
        con = loaded(path, engine)
        errors = con.execute("SELECT source_line, message FROM load_errors").fetchall()
        hands = [h for (h,) in con.execute("SELECT hand FROM hands ORDER BY hand").fetchall()]
        if key is None:
            assert (errors, hands) == ([], [1, 2, 3]), name
        else:
            assert errors == [(2, f"the key {key!r} is given twice in one object (JSON does not say which counts)")], name
            assert hands == [1, 3], name


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_two_keys_naming_one_seat_or_side_reject_their_line(tmp_path, engine):
    """`{"N": "ana", ..., "n": "zed"}` read as N = zed, the last spelling winning, with no word (found by
    a format audit): two spellings of one seat or side are a key given twice."""
    good = [line(game_id="alias", hand=h) for h in (1, 2, 3)]
    cases = {
        "players": ('"players":{', '"players":{"n":"zed",', "players gives N twice (keys 'n' and 'N')"),
        "score": ('"score":{', '"score":{"ns":{"points":-80},', "score gives NS twice (keys 'ns' and 'NS')"),
        "taken": ('"dealer"', '"taken":{"N":4,"E":3,"S":3,"W":3,"north":0},"dealer"',
                  "taken gives N twice (keys 'N' and 'north')"),
        "score_before": ('"dealer"', '"score_before":{"NS":1,"SN":2,"EW":3},"dealer"',
                         "score_before gives NS twice (keys 'NS' and 'SN')"),
    }  # fmt: skip
    for name, (old, new, reason) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join([good[0], good[1].replace(old, new, 1), good[2]]) + "\n")
        con = loaded(path, engine)
        assert con.execute("SELECT source_line, message FROM load_errors").fetchall() == [(2, reason)], name
        assert [h for (h,) in con.execute("SELECT hand FROM hands ORDER BY hand").fetchall()] == [1, 3], name


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_key_given_twice_in_a_json_documents_item_rejects_that_item(tmp_path, engine):
    """The same in a ``.json`` array (an item per line, or indented) and in a one-object document."""
    good = [json.loads(line(game_id="doc", hand=h)) for h in (1, 2, 3)]
    text = json.dumps(good[1])
    colon = dict(good[1], players=dict(good[1]["players"], N='a":b'))  # the cheap count differs: no repeat
    cases = {
        "top": (text.replace('"hand": 2', '"hand": 2, "hand": 3', 1), "hand"),
        "nested": (text.replace('"leader": ', '"leader": "N", "leader": ', 1), "leader"),
        "colon in a name": (json.dumps(colon), None),
    }
    twice = "item 2: the key {!r} is given twice in one object (JSON does not say which counts)"
    for name, (item, key) in cases.items():
        for layout in ("lines", "indented"):
            path = tmp_path / f"{name}-{layout}.json"
            if layout == "lines":
                path.write_text("[\n" + ",\n".join([json.dumps(good[0]), item, json.dumps(good[2])]) + "\n]\n")
            else:
                path.write_text("[\n" + ",\n".join([json.dumps(good[0], indent=1), item, json.dumps(good[2], indent=1)]) + "\n]\n")
            con = loaded(path, engine)
            errors = con.execute("SELECT source_line, message FROM load_errors").fetchall()
            hands = [h for (h,) in con.execute("SELECT hand FROM hands ORDER BY hand").fetchall()]
            if key is None:
                assert (errors, hands) == ([], [1, 2, 3]), (name, layout)
            else:
                at = 3 if layout == "lines" else 2 + json.dumps(good[0], indent=1).count("\n") + 1
                assert errors == [(at, twice.format(key))] and hands == [1, 3], (name, layout, errors)
    one = tmp_path / "one.json"
    one.write_text(json.dumps(good[0]).replace('"hand": 1', '"hand": 1, "hand": 2', 1))
    con = loaded(one, engine)
    assert con.execute("SELECT source_line, message FROM load_errors").fetchall() == [
        (1, "item 1: the key 'hand' is given twice in one object (JSON does not say which counts)")]
    assert con.execute("SELECT count(*) FROM hands").fetchall() == [(0,)]


def test_a_key_given_twice_in_json_another_format_carries_rejects_that_record(tmp_path):
    """The JSON that SPN, the score sheet, Trickster and OpenSpiel carry gets the same rule: the
    record is rejected with the key named, never read as "the last one wins"."""
    from typer.testing import CliRunner

    from conftest import CORPUS
    from spadework.analysis.cli import app
    from spadework.parsers import spn

    twice = "the key 'target' is given twice in one object (JSON does not say which counts)"
    from spadework.parsers import jsonl

    rec = jsonl.record_from_obj(json.loads(line(game_id="t", hand=1)), "t.jsonl", 1)
    text = spn.dumps([rec])
    assert '[Rules "standard"]' in text
    cases = {
        "rules.spn": text.replace('[Rules "standard"]', '[Rules "{\\"preset\\":\\"standard\\",\\"target\\":300,\\"target\\":500}"]'),
    }
    sheet = ("game_id,hand,dealer,rules,player_N,player_E,player_S,player_W,bid_N,bid_E,bid_S,bid_W,taken_N,taken_E,"
             "taken_S,taken_W,NS_points,NS_total,NS_bags,EW_points,EW_total,EW_bags\n"
             'g,1,N,"{""preset"":""standard"",""target"":300,""target"":500}",a,b,c,d,3,3,3,3,4,3,3,3,,,,,,\n')  # fmt: skip
    cases["sheet.csv"] = sheet
    ptn = (CORPUS / "trickster" / "issue335_spades.ptn").read_text(encoding="utf-8")
    cases["options.ptn"] = ptn.replace('[GameOptionsJson "{', '[GameOptionsJson "{\\"gameOverScore\\":1,\\"gameOverScore\\":2,', 1)
    episodes = (CORPUS / "openspiel" / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    cases["episodes.jsonl"] = "\n".join([episodes[0].replace('{"episode": 0,', '{"episode": 0, "episode": 7,', 1), *episodes[1:3]]) + "\n"
    for name, body in cases.items():
        path = tmp_path / name
        path.write_text(body, encoding="utf-8")
        items = list(formats.load(path))
        errors = [i for i in items if not hasattr(i, "game_id")]
        want = {"options.ptn": "gameOverScore", "episodes.jsonl": "episode"}.get(name, "target")
        assert [e for e in errors if twice.replace("'target'", repr(want)) in e.message], (name, errors)
        # the record is not read with either value (SPN: its game-level tag, then the hand, are refused)
        assert len(errors) == (2 if name == "rules.spn" else 1), (name, errors)
        assert len(items) - len(errors) == (2 if name == "episodes.jsonl" else 0), (name, items)
    # and on the command line
    r = CliRunner().invoke(app, ["validate", str(tmp_path / "rules.spn"), "--rules", '{"preset":"standard","target":300,"target":500}'])
    assert r.exit_code == 2 and "--rules: " + twice in r.output, r.output


def test_an_spn_extension_value_that_gives_a_key_twice_is_kept_as_its_text(tmp_path):
    from spadework.parsers import jsonl, spn

    rec = jsonl.record_from_obj(json.loads(line(game_id="t", hand=1)), "t.jsonl", 1)
    text = spn.dumps([rec])
    assert '[x_app "{\\"v\\":2}"]' in text
    path = tmp_path / "x.spn"
    path.write_text(text.replace('[x_app "{\\"v\\":2}"]', '[x_app "{\\"v\\":2,\\"v\\":3}"]'))
    (got,) = list(formats.load(path))
    assert got.extras["x_app"] == '{"v":2,"v":3}'
    path.write_text(text)
    (plain,) = list(formats.load(path))
    assert plain.extras["x_app"] == {"v": 2}
