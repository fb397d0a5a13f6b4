"""The fast loader (spadework.analysis.engine.loader) loads exactly as the Python loader does.

``load_fast`` writes the same rows as ``spadework.parsers.db.load_files`` in ``hand_records`` (so in
every loaded view), ``load_errors`` and ``load_warnings``, with the same summary: on a file exercising
every field and every odd line (extension keys, aliases, wrong types, whitespace, CRLF, BOM,
duplicates, invalid JSON and UTF-8, numbers out of range, values of a wrong type that cancel out in
length...), gzipped, cut into tiny blocks, across files, and on random records (hypothesis over
``tests.strategies``) with textual mutations.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spadework.analysis.engine import loader as fast_load
from spadework.analysis.engine.loader import load_fast
from spadework.analysis.sim.season import iter_season, write_season
from spadework.parsers.db import connect, load_files
from spadework.parsers.jsonl import dumps_record, record_to_obj

STORED = ("hand_records", "load_errors", "load_warnings")
LOADED = ("hands", "deals", "bids", "plays", "recorded_tricks", "recorded_scores", "load_errors", "load_warnings")


def _rows(con, table: str) -> list[tuple]:
    return sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def _summary(s) -> tuple:
    return ([(f.source_file, f.format, f.hands, f.errors, f.warnings) for f in s.files], list(s.skipped))


@pytest.fixture(autouse=True, params=["per file", "small files together"])
def mode(request, monkeypatch) -> str:
    """Every test runs twice: each file on the compiled path of its own (``FAST_MIN_BYTES`` 0; the
    test files are small), and every file as a small one, scanned together with the others and
    handed to the Python loader's batching as ready rows."""
    monkeypatch.setattr(fast_load, "FAST_MIN_BYTES", 0 if request.param == "per file" else 10**12)
    return request.param


def lines_read(stats: dict, mode: str) -> tuple[int, int]:
    """(lines read by compiled code, by the Python parser line by line).  Small files scanned together
    go to the Python loader whole when one of their lines is the Python parser's: then (0, 0)."""
    return stats["fast_lines"], stats["python_lines"]


def assert_same_load(paths, **kw) -> tuple:
    """Load ``paths`` both ways into fresh databases; the stored rows must be the same."""
    ref, fast = connect(None), connect(None)
    s_ref = load_files(ref, paths)
    s_fast = load_fast(fast, paths, **kw)
    for t in STORED:
        assert _rows(ref, t) == _rows(fast, t), t
    assert _summary(s_ref) == _summary(s_fast)
    return ref, fast, dict(fast_load.STATS)


def _season_objs(games: int = 3, seed: int = 7, **kw) -> list[dict]:
    out = []
    for g in iter_season(8, games, seed, **kw):
        out.extend(record_to_obj(r) for r in g.records)
    return out


def edge_lines(objs: list[dict]) -> list[bytes]:
    """Lines of a JSON Lines file: canonical hands with every field, then every kind of odd line."""
    d = orjson.dumps
    o = copy.deepcopy(objs[0])
    o.update(
        {
            "score_before": {"NS": 0, "EW": 0},
            "bags_before": {"NS": 0, "EW": 0},
            "winner": "NS",
            "taken": {"N": 2, "E": 5, "S": 3, "W": 3},
        }
    )
    lines = [d(x) for x in objs] + [d(o)]  # o repeats objs[0]'s hand: a duplicate
    numbers = iter(range(1, 100_000))

    def var(**kw):
        x = copy.deepcopy(objs[1])
        x["game_id"], x["hand"] = "edge", next(numbers)
        for k, v in kw.items():
            if v is KeyError:
                x.pop(k, None)
            else:
                x[k] = v
        return x

    def mut(fn):
        x = var()
        fn(x)
        return x

    cases = [
        var(rules={"preset": "standard", "target": 300}),
        var(rules={"preset": "standard", "blind_nil": {"behind_by": 50}, "nil": True}),
        var(rules="barmore"),
        var(rules=5),
        var(rules=None),
        var(rules={"preset": "standard", "target": 1e3}),
        var(x_note="hi", x_obj={"a": [1, 2.5]}),
        var(foo=3),
        var(hand="3"),
        var(hand=3.5),
        var(hand=0),
        var(hand=True),
        var(game_id=12),
        var(game_id=""),
        var(game_id="   "),  # blank: rejected
        var(game_id=" padded "),  # kept as written
        var(game_id=KeyError),
        var(players={"n": "a", "E": "b", "S": "c", "W": "d"}),
        var(players={"N": "a", "E": "b", "S": "c"}),
        var(players={"N": None, "E": "b", "S": "c", "W": "d"}),
        var(players={"N": "José", "E": 'b"q', "S": "♠", "W": 7}),
        var(players={"N": "a", "E": "b", "S": "c", "W": "d", "X": "e"}),
        var(dealer="n"),
        var(dealer="X"),
        var(dealer=KeyError),
        var(deal={}),
        var(deal=None),
        var(deal=KeyError),  # no deal, complete play: the deal is what each seat played
        var(tricks=[]),
        var(tricks=None),
        var(tricks=KeyError),
        var(score_before={"NS": 10}),
        var(score_before={"NS": 10, "EW": -20}, bags_before={"NS": 3, "EW": 12}),
        var(winner="ns"),
        var(winner="XX"),
        var(schema="spades-hand/1.1"),
        var(schema="spades-hand/2"),
        var(date=20260103, event="night é", table="", round=None),
    ]
    for bid in ["nil", "0", 0, 14, 4.5, "4", "pass", 4.0, -1, 100, True]:
        cases.append(mut(lambda x, b=bid: x["bids"][0].__setitem__("bid", b)))
    for blind in [True, False, "yes", 1]:
        cases.append(mut(lambda x, b=blind: x["bids"][1].__setitem__("blind", b)))
    cases += [
        mut(lambda x: x["bids"][0].__setitem__("seat", "w")),
        mut(lambda x: x["bids"][0].pop("seat")),
        mut(lambda x: x["bids"][0].pop("bid")),
        mut(lambda x: x.__setitem__("bids", [])),
        mut(lambda x: x["bids"].append(dict(x["bids"][0]))),
    ]
    for card in ["10S", "as", "SA", "1S", "A♠", 5, None, "BJ"]:
        cases.append(mut(lambda x, c=card: x["deal"]["N"].__setitem__(0, c)))
    cases += [
        mut(lambda x: x["deal"].pop("W")),
        mut(lambda x: x["deal"]["W"].append("2C")),
        mut(lambda x: x["deal"].__setitem__("W", None)),
        mut(lambda x: (x.pop("deal"), x.__setitem__("tricks", x["tricks"][:12]))),
        mut(lambda x: x["tricks"].append(x["tricks"][0])),
        mut(lambda x: x["tricks"][0]["cards"].append("2C")),
        mut(lambda x: x["tricks"][0].__setitem__("cards", x["tricks"][0]["cards"][:3])),
        mut(lambda x: x["tricks"][0].__setitem__("winner", None)),
        mut(lambda x: x["tricks"][0].pop("winner")),
        mut(lambda x: x["tricks"][0].__setitem__("leader", "x")),
        mut(lambda x: x["tricks"][0].__setitem__("cards", None)),
        mut(lambda x: x["tricks"][2]["cards"].__setitem__(1, "tc")),
    ]
    for taken in [{"N": 2, "E": 5}, {"N": "3", "E": 5, "S": 3, "W": 3}, {"N": 3.0, "E": 5, "S": 3, "W": 2}, {}, {"n": 2}]:
        cases.append(var(taken=taken))
    for score in [
        {"NS": {"points": 41}},
        {"NS": {"points": "41", "total": 41, "bags": 1}},
        {},
        {"NS": None},
        {"NS": {}, "EW": {}},
        {"ns": {"points": 4}},
        {"NS": {"points": 4, "pts": 5}},
    ]:
        cases.append(var(score=score))
    lines += [d(c) for c in cases]
    lines += [
        json.dumps(var()).encode(),  # spaces after separators
        d(var()) + b"   ",  # trailing spaces
        d(var()) + b"\r",  # CRLF line end
        b"\xef\xbb\xbf" + d(var()),  # byte order mark
        b"   ",  # whitespace only
        b"",  # empty
        b"\r",  # a lone CR
        d(var())[:-1] + b',"event":"a\\u00e9b"}',  # an escaped character
        b'{"this is not json',
        b"[1, 2]",
        b"17",
        d(var()).replace(b'"dealer"', b'"dealer":"N","dealer"', 1),  # a duplicate key
        d(var()).replace(b'"edge"', b'"\xff\xfeedge"', 1),  # invalid UTF-8
        d(var())[:-1] + b",}",  # a trailing comma
        d(var()).replace(b'{"schema"', b'{ "schema"', 1),
    ]
    k = var()
    lines += [d(k), d(dict(k, event="second")), d(dict(k, event="third"))]  # one hand three times
    k = var()
    lines += [d(dict(k, x_first="read by Python")), d(k)]  # the first copy read by Python, the second by DuckDB
    big = {"NS": {"points": 3_000_000_000, "total": 41, "bags": 1}}
    k = var()
    lines += [d(k), d(dict(k, score=big))]  # out of range after the first copy: "appears twice"
    k = var()
    lines += [d(dict(k, score=big)), d(k), d(k)]  # out of range first: rejected as such; then a duplicate
    lines += [d(var(hand=99_999_999_999)), d(var(hand=-(2**31) + 5)), d(var(score_before={"NS": -(2**31), "EW": 0}))]
    k = var()
    lines += [d(k).replace(b'"hand":%d' % k["hand"], b'"hand":100000000000000000000', 1)]  # beyond 64 bits
    k = var(taken={"N": 7, "E": 1, "S": 1, "W": 1})
    lines += [d(k).replace(b'"N":7', b'"N":-100000000000000000000', 1)]
    lines += compensating_lines(var)
    lines += [d(var()).replace(b'"rules":"standard"', b'"rules":{"target":300,"target":200}', 1)]  # repeated key
    lines += [d(var()).replace(b'"rules":"standard"', b'"rules":{"x_note":100000000000000000000}', 1)]  # a float to Python
    # a rules object written by json.dumps (spaces after ':' and ','), or with more whitespace:
    # the scanner stores orjson's text, as the Python loader does
    for text in (
        b'{"preset": "nyc", "bags_limit": 10}',
        b'{ "preset" :"standard" ,\t"x_note": "a, b : c" , "nil": true, "x_none": null }',
        b"{ }",
        b'{"target": 300, "target": 200}',  # a repeated key, spaced: Python
        b'{"preset": "standard" "target": 300}',  # no comma: Python (rejected)
    ):
        lines += [d(var()).replace(b'"rules":"standard"', b'"rules": ' + text, 1)]
    return lines


def compensating_lines(var) -> list[bytes]:
    """Lines whose wrong types change their length in opposite directions, so the minified
    length alone would pass them: DuckDB converts "1" to 1, 1 to "1", 0 to false, true to "true"."""
    d = orjson.dumps

    def sub(x: dict, *pairs: tuple[bytes, bytes]) -> bytes:
        line = d(x)
        for a, b in pairs:
            assert a in line, a
            line = line.replace(a, b, 1)
        return line

    def blind(x: dict, value) -> dict:
        x["bids"][0]["blind"] = value
        return x

    h = lambda x: b'"hand":%d' % x["hand"]  # noqa: E731
    out = []
    x = var(table="1")
    out.append(sub(x, (h(x), b'"hand":"%d"' % x["hand"]), (b'"table":"1"', b'"table":1')))  # +2 -2
    x = blind(var(), 0)
    out.append(sub(x, (h(x), h(x).replace(b":", b":    "))))  # -4 +4
    x = blind(var(), 1)
    out.append(sub(x, (h(x), h(x).replace(b":", b":   "))))  # -3 +3
    x = blind(var(), "t")
    out.append(sub(x, (h(x), h(x).replace(b":", b": "))))  # -1 +1
    x = var(event=True)
    out.append(sub(x, (h(x), h(x).replace(b":", b":  "))))  # -2 +2
    x = var()
    x["players"]["E"] = True
    out.append(sub(x, (h(x), h(x).replace(b":", b":  "))))
    x = var(hand=1000)
    out.append(sub(x, (b'"hand":1000', b'"hand":1e3 ')))  # -1 +1
    x = var(hand=4)
    out.append(sub(x, (b'"hand":4', b'"hand" :"4"'), (b'"table":"1"', b'"table":1')))  # space before a colon
    x = var()
    x["taken"] = {"N": "3", "E": 4, "S": 3, "W": 3}
    out.append(sub(x, (b'"table":"1"', b'"table":1')))
    x = var()
    x["score_before"] = {"NS": "10", "EW": 0}
    out.append(sub(x, (b'"table":"1"', b'"table":1')))
    # a key written with an escape hid the values after it from the screen (+5 for the escape,
    # -2 for each of three booleans read as text, +1 space)
    x = var()
    x["players"] = {"S": "a", "E": True, "N": True, "W": True}
    out.append(sub(x, (b'"players":{"S"', b'"players":{"\\u0053"'), (b'"dealer"', b' "dealer"')))
    return out


@pytest.fixture(scope="module")
def edge_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fast") / "edges.jsonl"
    path.write_bytes(b"\n".join(edge_lines(_season_objs())) + b"\n")
    return path


def test_load_every_field_and_every_odd_line_as_the_python_loader(edge_file, mode):
    _, fast, stats = assert_same_load([edge_file])
    # canonical lines are read by compiled code; only the odd ones (and duplicates) by Python
    fast_lines, python_lines = lines_read(stats, mode)
    assert (fast_lines >= 60 and python_lines < 100) if mode == "per file" else (fast_lines, python_lines) == (0, 0)
    assert fast.execute("SELECT count(*) FROM load_errors").fetchone()[0] > 30


def test_values_of_the_wrong_type_never_pass_by_cancelling_out(tmp_path, mode):
    objs = _season_objs(1)
    numbers = iter(range(1, 1000))

    def var(**kw):
        x = copy.deepcopy(objs[1])
        x["game_id"], x["hand"] = "edge", next(numbers)
        x.update(kw)
        return x

    lines = compensating_lines(var)
    path = tmp_path / "types.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    ref, _, stats = assert_same_load([path])
    assert stats["fast_lines"] == 0  # every one of them went to the Python parser
    assert stats["python_lines"] == (len(lines) if mode == "per file" else 0)  # (small: the file whole)


def test_a_rules_object_written_by_json_dumps_is_read_by_compiled_code(tmp_path, mode):
    """json.dumps writes ``{"preset": "nyc", "bags_limit": 10}`` (spaces): every such line is read
    by the scanner, and stored as the Python loader stores it (orjson's text, no spaces)."""
    import json

    objs = _season_objs(2, seed=5)
    rules = (
        {"preset": "standard", "bags_limit": 10},
        {"preset": "nyc", "nil": True, "x_note": "a, b: c"},
        # a custom deck and nested options (RULES.md section 2): arrays and objects in the object
        {"preset": "standard", "removed_cards": ["2H", "2D"], "extra_cards": ["BJ", "LJ"], "first_lead": "two_of_clubs"},
        {"preset": "standard", "blind_bids": {"min": 6, "behind": 100}, "blind_nil": {"behind": 100}, "x": [[], {}]},
    )
    lines = [json.dumps(dict(o, rules=rules[k % len(rules)])).encode() for k, o in enumerate(objs)]
    lines += [orjson.dumps(dict(objs[0], rules=rules[2 + k % 2])) for k in range(2)]  # and without spaces
    # JSON the scanner leaves to orjson (a float; escapes)
    odd = {"preset": "standard", "target": 2.5e2, "x_note": 'caf\u00e9 "q" \\ \t'}
    lines.append(json.dumps(dict(objs[1], game_id="odd", rules=odd)).encode().replace(b"250.0", b"2.50E2"))
    n_fast = len(lines)
    # a repeated key: the Python parser's, which rejects the line (JSON does not say which counts)
    lines.append(orjson.dumps(dict(objs[1], game_id="dup", rules=rules[3])).replace(b'"min":6', b'"min":6,"min":7'))
    grows = json.dumps(dict(objs[1], game_id="grows", rules={"target": 1e9})).encode().replace(b"1000000000.0", b"1e9")
    lines.append(grows)  # orjson writes 1000000000.0, longer than the text read: the Python parser's
    lines.append(orjson.dumps(dict(objs[1], game_id="list", rules=["standard"])))  # an error: the Python parser's
    lines.append(orjson.dumps(dict(objs[1], game_id="bad", rules="?")).replace(b'"?"', b'{"a":1.2.3}'))  # not JSON
    path = tmp_path / "dumps.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    _, fast, stats = assert_same_load([path])
    assert lines_read(stats, mode) == ((n_fast, 4) if mode == "per file" else (0, 0))
    stored = {r[0] for r in fast.execute("SELECT DISTINCT rules FROM hands WHERE game_id NOT IN ('dup', 'odd', 'grows')").fetchall()}
    assert stored == {orjson.dumps(r).decode() for r in rules}
    got = dict(fast.execute("SELECT game_id, rules FROM hands WHERE game_id IN ('dup', 'odd', 'grows')").fetchall())
    assert fast.execute("SELECT message FROM load_errors WHERE source_line = ?", [n_fast + 1]).fetchall() == [
        ("the key 'min' is given twice in one object (JSON does not say which counts)",)
    ]
    assert got == {
        "odd": orjson.dumps(odd).decode(),
        "grows": '{"target":1000000000.0}',
    }


def test_names_written_with_escapes_are_read_by_compiled_code(tmp_path, mode):
    """json.dumps writes "Jos\\u00e9" (ensure_ascii): escapes in the text fields are decoded by the
    scanner to the text the Python parser gives; an escape it does not read goes to Python."""
    import json

    objs = _season_objs(2, seed=6)
    texts = ["José", "Zoë 😀", 'say "hi"', "back\\slash/", "ü"]
    lines = []
    for k, o in enumerate(objs):
        o = copy.deepcopy(o)
        o["players"]["N"] = texts[k % len(texts)]
        o["event"] = "Café " + texts[(k + 1) % len(texts)]
        o["game_id"] = "ñ-" + o["game_id"]
        o["table"] = "T/1"
        lines.append(json.dumps(o).encode())
    odd = copy.deepcopy(objs[0])
    odd["game_id"], odd["players"]["E"] = "odd", "two\nlines"  # \n: the Python parser's
    lines.append(json.dumps(odd).encode())
    lone = json.dumps(dict(objs[1], game_id="lone")).encode().replace(b'"lone"', b'"lone\\ud800"')  # a lone surrogate
    lines.append(lone)
    path = tmp_path / "escaped.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert b"\\u00e9" in path.read_bytes()
    _, fast, stats = assert_same_load([path])
    assert lines_read(stats, mode) == ((len(objs), 2) if mode == "per file" else (0, 0))
    names = {r[0] for r in fast.execute("SELECT DISTINCT player_n FROM hands").fetchall()}
    assert set(texts) <= names


def test_broken_values_in_rules_and_extensions_are_the_python_parsers_errors(tmp_path, mode):
    """A rules object or an extension value that is not JSON, or not storable, is a load error with
    the Python parser's message on the compiled path too (the scanner checks only a value's
    structure; orjson refuses the rest and the line goes to Python untouched)."""
    objs = _season_objs(1, seed=12)
    d = lambda k, **kw: orjson.dumps(dict(objs[k], **kw))  # noqa: E731
    broken = [
        d(0, rules="?").replace(b'"?"', b'{"extra_cards":["BJ","LJ"'),  # the line ends inside it
        d(1, rules="?").replace(b'"?"', b'{"a":"unterminated}'),
        d(2, x_s="?").replace(b'"?"', b'"caf\xe9"'),  # not UTF-8
        d(3, x_d="?").replace(b'"?"', b"[" * 300 + b"]" * 300),  # deeper than orjson writes
        d(4, x_n="?").replace(b'"?"', b"1e999"),
        d(5, x_n="?").replace(b'"?"', b"NaN"),
        d(6, x_s="?").replace(b'"?"', b'"a\\qb"'),  # an escape JSON has not
        d(7, x_o="?").replace(b'"?"', b'{"a":1,}'),
        d(8, x_s="?").replace(b'"?"', b'"tab\there"'),  # a raw control character
        d(9, rules="?").replace(b'"?"', b'{"target":1.5e2,"target":300}'),  # a repeated key: which counts?
        d(10, x_o="?").replace(b'"?"', b'{"a":[{"b":1,"b":2.5}]}'),
    ]
    read = [d(11, rules="?").replace(b'"?"', b'{"target":1.5e2,"x_note":"a\\":b"}')]  # '":' inside a string
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"\n".join(broken + read) + b"\n")
    ref, _, stats = assert_same_load([path])
    assert ref.execute("SELECT count(*) FROM load_errors").fetchone()[0] == len(broken)
    assert lines_read(stats, mode) == ((1, len(broken)) if mode == "per file" else (0, 0))


def _deep(depth: int):
    """Arrays and objects nested ``depth`` deep: ``[{"k": [{"k": 1}]}]`` for 4."""
    v: object = 1
    for d in range(depth):
        v = [v] if d % 2 else {"k": v}
    return v


def test_extension_keys_are_read_by_compiled_code_and_stored_as_the_python_loader_does(tmp_path, mode):
    """``x_*`` keys anywhere in the line, ``extras`` stored as the Python loader stores them (orjson's
    text): plain values (strings, whole numbers, literals, arrays and objects of them, nested) are
    written back by the scanner; floats and escapes within a value by orjson, on the compiled path
    too; nesting deeper than MAX_DEPTH, a repeated key (an extension's, or one within a value), a
    value orjson refuses or an unknown key go to the Python parser."""
    from spadework.parsers.jsonl_scan import MAX_DEPTH

    import json

    objs = _season_objs(2, seed=7)
    read_here = [
        {"x_src": "sim"},
        {"x_a": [1, "b", None, True, False, -3], "x_b": {"k": -5, "z": "q r, s: t"}, "x_c": None},
        {"x_": {}, "x_empty": [], "x_big": 10**15 - 1},
        {"x_n": [[1], [], [[{}]]], "x_o": {"a": {"b": 1, "c": [2, {"a": 3}]}, "b": {"b": {}}}},
        {"x_deep": _deep(MAX_DEPTH)},
        # written back by orjson
        {"x_f": 1.5, "x_e": -2.5e-3, "x_big": 10**17},
        {"x_n": [[1.5]], "x_s": 'caf\u00e9 "q" \\ /\n\t 😀'},
        {"x_o": {"a": {"b": "caf\u00e9"}}, "x_plain": 3},
    ]
    lines = []
    for k, o in enumerate(objs):
        ext = read_here[k % len(read_here)]
        first = {key: v for key, v in ext.items() if k % 2}  # before the known keys, or after them
        line = {**first, **o, **{key: v for key, v in ext.items() if key not in first}}
        lines.append(json.dumps(line, ensure_ascii=k % 3 == 0).encode())
    repeated = {"grows": ({"x_n": "?"}, b'"?"', b"1e9", {"x_n": 1e9})}  # longer as orjson writes it: fits
    for gid, (ext, old, new, _) in repeated.items():
        lines.append(orjson.dumps(dict(objs[1], game_id=gid, **ext)).replace(old, new))
    n_fast = len(lines)
    twice = {  # a key repeated within a value: the Python parser's, which rejects the line
        "py-dupobj": ({"x_o": {"a": 1}}, b'{"a":1}', b'{"a":1,"a":2}'),
        "py-dupdeep": ({"x_o": [{"a": [{"k": 1, "j": {"b": 2}}]}]}, b'{"b":2}', b'{"b":2,"c":[],"b":3}'),
    }  # fmt: skip
    for gid, (ext, old, new) in twice.items():
        lines.append(orjson.dumps(dict(objs[1], game_id=gid, **ext)).replace(old, new))
    python = [
        dict(objs[0], x_deep=_deep(MAX_DEPTH + 1)),
        dict(objs[0], other=1),  # an unknown key: a warning, the Python loader's
    ]
    lines += [json.dumps(dict(x, game_id=f"py-{k}")).encode() for k, x in enumerate(python)]
    lines.append(json.dumps(dict(objs[1], game_id="py-dup", x_a=1)).encode()[:-1] + b', "x_a": 2}')  # repeated
    lines.append(orjson.dumps(dict(objs[1], game_id="py-lone", x_s="?")).replace(b'"?"', b'"\\ud800"'))  # orjson: no
    lines.append(orjson.dumps(dict(objs[1], game_id="py-num", x_n="?")).replace(b'"?"', b"1.2.3"))  # not a number
    path = tmp_path / "ext.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    _, fast, stats = assert_same_load([path])
    assert lines_read(stats, mode) == ((n_fast, len(lines) - n_fast) if mode == "per file" else (0, 0))
    stored = {r[0] for r in fast.execute("SELECT DISTINCT extras FROM hand_records WHERE game_id NOT LIKE 'py-%'").fetchall()}
    assert {orjson.dumps(e).decode() for e in read_here} | {orjson.dumps(r[3]).decode() for r in repeated.values()} == stored


def test_extension_keys_scattered_among_the_known_keys_are_all_found(tmp_path, mode):
    """The scanner walks a line's keys again only from its first extension key to the end of its
    last one: extension keys before, between and after the known keys (spaced or not, strings with
    spaces, commas and braces inside) are stored in the line's order, and a key repeated across
    known keys still sends the line to the Python parser."""
    objs = _season_objs(1, seed=11)
    lines = []
    for k, o in enumerate(objs[:12]):
        keys = list(o)
        mid = len(keys) // 2
        line = {"x_first": f"a {k}, {{b}}: c"} if k % 3 else {}
        line.update({key: o[key] for key in keys[:mid]})
        line["x_mid"] = [k, {"n": "x, y"}] if k % 2 else k
        line.update({key: o[key] for key in keys[mid:]})
        if k % 4:
            line["x_last"] = "  spaced  "
        text = json.dumps(line, separators=(", ", " : ") if k % 2 else (",", ":")).encode()
        lines.append(text)
    lines.append(json.dumps(dict({"x_a": 1}, **dict(objs[12], game_id="py-dup"))).encode()[:-1] + b', "x_a": 2}')
    path = tmp_path / "scattered.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    _, fast, stats = assert_same_load([path])
    assert lines_read(stats, mode) == ((12, 1) if mode == "per file" else (0, 0))
    stored = [r[0] for r in fast.execute("SELECT extras FROM hand_records WHERE game_id NOT LIKE 'py-%' ORDER BY source_line").fetchall()]
    assert stored[1] == orjson.dumps({"x_first": "a 1, {b}: c", "x_mid": [1, {"n": "x, y"}], "x_last": "  spaced  "}).decode()
    assert stored[0] == orjson.dumps({"x_mid": 0}).decode()


def test_objects_with_very_many_keys_are_left_to_orjson_or_the_python_parser(tmp_path, mode):
    """The scanner finds a repeated key by comparing with every key before it: past MAX_KEYS keys
    of a rules or extension object, orjson writes the object back (its time is linear); past
    MAX_KEYS extension keys of the line, the line is the Python parser's (a 40,000-key line took
    17 s in the scanner)."""
    objs = _season_objs(1, seed=10)
    from spadework.parsers.jsonl_scan import MAX_KEYS

    lines = [
        orjson.dumps(dict(objs[0], **{f"x_{i}": i for i in range(MAX_KEYS)})),  # read here
        orjson.dumps(dict(objs[1], rules={"preset": "standard", **{f"x_{i}": i for i in range(MAX_KEYS - 1)}})),
        orjson.dumps(dict(objs[3], rules={"preset": "standard", **{f"x_{i}": i for i in range(40_000)}})),  # orjson
        orjson.dumps(dict(objs[4], x_o={f"k{i}": i for i in range(40_000)})),  # orjson
        orjson.dumps(dict(objs[2], **{f"x_{i}": i for i in range(MAX_KEYS + 1)})),  # Python's
    ]
    path = tmp_path / "keys.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    _, _, stats = assert_same_load([path])
    assert lines_read(stats, mode) == ((4, 1) if mode == "per file" else (0, 0))


def test_every_spelling_of_a_card_is_read_by_compiled_code(tmp_path, mode):
    """FORMATS.md accepts ``10`` for ``T``, lower case, suit symbols and both orders: lines written
    that way are read by the scanner to the cards the Python parser reads (and ``"Nil"`` bids)."""
    import re

    spell = [
        lambda r, s: ("10" if r == "T" else r) + s,
        lambda r, s: r.lower() + s.lower(),
        lambda r, s: s + r.lower(),
        lambda r, s: {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[s] + ("10" if r == "T" else r),
        lambda r, s: ("10" if r == "T" else r) + {"S": "♤", "H": "♡", "D": "♢", "C": "♧"}[s],
        lambda r, s: r + s.lower(),
    ]
    objs = _season_objs(2, seed=8)
    lines = []
    for k, o in enumerate(objs):
        f = spell[k % len(spell)]
        text = orjson.dumps(o).decode()
        lines.append(re.sub(r'"([AKQJT2-9])([SHDC])"', lambda m: '"' + f(m[1], m[2]) + '"', text).encode())
    lines = [x.replace(b'"nil"', [b'"Nil"', b'"NIL"'][k % 2]) for k, x in enumerate(lines)]  # bids too
    assert any(b'"10h"' in x or b'"10H"' in x for x in lines) and any("♠".encode() in x for x in lines)
    assert any(b'"Nil"' in x for x in lines)
    bad = orjson.dumps(dict(objs[0], game_id="bad")).replace(b'"AS"', b'"1S"', 1).replace(b'"KS"', b'"1S"', 1)
    path = tmp_path / "spellings.jsonl"
    path.write_bytes(b"\n".join(lines + [bad]) + b"\n")
    _, fast, stats = assert_same_load([path])
    assert lines_read(stats, mode) == ((len(lines), 1) if mode == "per file" else (0, 0))


def test_load_in_tiny_chunks_and_gzipped(edge_file, tmp_path):
    assert_same_load([edge_file], chunk_bytes=4000)  # duplicates and odd lines across chunk boundaries
    gz = tmp_path / "edges.jsonl.gz"
    gz.write_bytes(gzip.compress(edge_file.read_bytes()))
    assert_same_load([gz])


def test_load_replaces_hands_from_other_files_and_reloads(tmp_path):
    objs = _season_objs(2, seed=3)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(b"\n".join(orjson.dumps(o) for o in objs) + b"\n")
    changed = [dict(o, event="replayed") for o in objs[3:9]]
    changed += [changed[0], dict(objs[10], x_extra=1), objs[10], dict(objs[0], hand=999)]  # clashes, then duplicates
    b.write_bytes(b"\n".join(orjson.dumps(o) for o in changed) + b"\n")
    assert_same_load([a, b])
    assert_same_load([a, b, a])  # a loaded again replaces its own rows and takes its hands back


def test_blocks_of_many_short_lines_lose_none_of_them(tmp_path):
    """More newlines in a block than the loader first makes room for (a line per 64 bytes): blank
    lines before a hand, and a pretty-printed file (``json.dumps(indent=2)``, every line an error).
    Before, the compiled newline finder wrote past its array: lines were lost, then the process
    crashed."""
    import json

    objs = _season_objs(1, seed=9)
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n" * 300 + orjson.dumps(objs[0]) + b"\n" + b"\r\n" * 200 + orjson.dumps(objs[1]) + b"\n")
    _, fast, _ = assert_same_load([blank])
    assert fast.execute("SELECT count(*) FROM hand_records").fetchone()[0] == 2
    pretty = tmp_path / "pretty.jsonl"
    pretty.write_text("\n".join(json.dumps(o, indent=2) for o in objs[:20]) + "\n")
    assert pretty.read_bytes().count(b"\n") > len(pretty.read_bytes()) // 64 + 16
    assert_same_load([pretty])
    assert_same_load([pretty], chunk_bytes=4000)


def test_the_newline_finder_finds_every_newline_of_any_block():
    """``loader._split`` finds newlines a word (8 bytes) at a time: the same line ends as numpy's
    for blocks of every length (a tail of 0-7 bytes after the words), start (an unaligned view is
    read byte by byte), and density (none, a line per few bytes, every byte a newline, a newline
    next to a word's edge, bytes >= 0x80 that hide a newline from a careless word test)."""
    import numpy as np

    from spadework.analysis.engine import loader

    rng = np.random.default_rng(5)
    cases = [np.zeros(0, np.uint8), np.full(37, 10, np.uint8), np.full(64, 0x8A, np.uint8)]
    for n in (1, 7, 8, 9, 63, 64, 65, 1000, 4099):
        for rate in (0.0, 0.002, 0.05, 0.5):
            data = rng.integers(0, 256, n, dtype=np.uint8)
            data[data == 10] = 11
            data[rng.random(n) < rate] = 10
            cases.append(data)
    edge = np.full(40, ord("a"), np.uint8)
    edge[[7, 8, 15, 16, 39]] = 10
    cases.append(edge)
    for data in cases:
        for offset in (0, 3):  # a view that does not start on a word
            buf = np.concatenate([np.zeros(offset, np.uint8), data])[offset:]
            block = loader._split(buf, 1)
            ends = np.flatnonzero(buf == 10)
            if not len(buf) or buf[-1] != 10:
                ends = np.append(ends, len(buf))
            assert block.ends.tolist() == ends.tolist()
            assert block.starts.tolist() == ([0] + (ends[:-1] + 1).tolist() if len(ends) else [])


def test_a_folder_of_small_files_as_the_python_loader(tmp_path, mode, monkeypatch):
    """One file per game, as many tools write them, with what a folder holds besides: a hand twice in
    a file, a hand of another file, an odd line, a byte-order mark, lone CRs, UTF-16, gzip (one cut
    short), CRLF, no final newline, a blank file; groups of files cut at a few KB.
    Loaded twice (the second load replaces the first), then with one file changed."""
    monkeypatch.setattr(fast_load, "SMALL_GROUP_BYTES", 40_000)
    games = [[orjson.dumps(dict(o, game_id=f"game-{s}")) for o in _season_objs(1, seed=s)] for s in range(20, 26)]
    folder = tmp_path / "games"
    folder.mkdir()
    for k, g in enumerate(games):
        (folder / f"g{k:02}.jsonl").write_bytes(b"\n".join(g) + b"\n")
    (folder / "g00.jsonl").write_bytes(b"\n".join(games[0] + games[0][2:3]) + b"\n")  # a hand twice
    (folder / "g01.jsonl").write_bytes(b"\r\n".join(games[1]))  # CRLF, no final newline
    (folder / "g02b.jsonl").write_bytes(games[2][0] + b"\n" + games[3][0] + b"\n")  # hands of two other files
    (folder / "g03.jsonl").write_bytes(b"\n".join(games[3] + [b'{"odd": 1}']) + b"\n")  # one odd line
    (folder / "g04.jsonl").write_bytes(b"\xef\xbb\xbf" + b"\n".join(games[4]) + b"\n")  # BOM
    (folder / "g05.jsonl").write_bytes(b"\r".join(games[5]) + b"\r")  # lone CRs
    (folder / "g06.jsonl").write_bytes(("\n".join(x.decode() for x in games[0][:2]) + "\n").encode("utf-16"))
    (folder / "blank.jsonl").write_bytes(b"\n\n")
    (folder / "g07.jsonl.gz").write_bytes(gzip.compress(b"\n".join(games[1][:3]) + b"\n"))  # hands of g01 again
    (folder / "g08.jsonl.gz").write_bytes(gzip.compress(b"\n".join(games[5]) + b"\n")[:-30])  # cut short
    big = b"\n".join(x.replace(b'"game-', b'"copy-', 1) for g in games[1:5] for x in g) + b"\n"
    assert len(big) > fast_load.SMALL_GROUP_BYTES  # small on disk, more than a group once read
    (folder / "g09.jsonl.gz").write_bytes(gzip.compress(big))
    ref, fast, stats = assert_same_load([folder])
    assert fast.execute("SELECT count(*) FROM load_errors").fetchone()[0] >= 4
    if mode != "per file":
        # g00 (a hand twice), g01, g02, g02b, g04, g05 and g06 (a byte-order mark, lone CRs and UTF-16
        # come out of open_binary as plain lines, as the block reader reads them), g07; not g03, g08
        # and g09, read by the block reader
        assert stats["fast_lines"] == sum(len(g) for g in games[:3]) + 1 + 2 + len(games[4]) + len(games[5]) + 2 + 3 + big.count(b"\n")
    # again: every file replaces its own rows; then one file changed
    for con in (ref, fast):
        (load_files if con is ref else load_fast)(con, [folder])
    (folder / "g02.jsonl").write_bytes(b"\n".join(games[2][:-1]) + b"\n")
    load_files(ref, [folder])
    load_fast(fast, [folder])
    for t in STORED:
        assert _rows(ref, t) == _rows(fast, t), t


def test_already_loaded_names_the_other_file_as_its_rows_stand(tmp_path, monkeypatch):
    """"already loaded from FILE:LINE" names the line the other file's row has now (after that file
    was loaded again with its lines moved), under the name its rows have when this file's turn
    comes, as loading the files one at a time would.  Found by fuzzing: the line of the row the
    reload replaced, and the name the other file was about to be given."""
    from spadework.parsers.jsonl import dumps_record

    recs = [r for g in iter_season(8, 1, 5) for r in g.records][:4]
    monkeypatch.chdir(tmp_path)
    ref, fast = connect(None), connect(None)
    Path("a.jsonl").write_text("".join(dumps_record(r) + "\n" for r in recs))
    Path("b.jsonl").write_text(dumps_record(recs[2]) + "\n")  # b repeats hand 3 of a
    for step in range(2):
        load_files(ref, ["a.jsonl", "b.jsonl"])
        load_fast(fast, ["a.jsonl", "b.jsonl"])
        if step == 0:
            Path("a.jsonl").write_text("".join(dumps_record(r) + "\n" for r in recs[1:]))  # hand 3 now on line 2
    for con in (ref, fast):
        assert [m for (m,) in con.execute("SELECT message FROM load_errors").fetchall()] == [
            f"hand {recs[2].hand} of game {recs[2].game_id!r} is already loaded from a.jsonl:2; not loaded again "
            "(load that file again to replace it, or give this game another id)"
        ]
    (tmp_path / "logs").mkdir()
    Path("logs/c.jsonl").write_text("".join(dumps_record(r) + "\n" for r in recs[:3]))
    monkeypatch.chdir(tmp_path / "logs")
    ref, fast = connect(None), connect(None)
    load_files(ref, ["."])
    load_fast(fast, ["."])  # rows named c.jsonl
    Path("b.jsonl").write_text(dumps_record(recs[1]) + "\n")  # b's turn comes before c's
    monkeypatch.chdir(tmp_path)
    load_files(ref, ["logs"])
    load_fast(fast, ["logs"])
    for t in STORED:
        assert _rows(ref, t) == _rows(fast, t), t
    (msg,) = ref.execute("SELECT message FROM load_errors").fetchone()
    assert "is already loaded from c.jsonl:2;" in msg


ARRAY_SHAPES = {
    # name: (the document from the hands' JSON texts, read by compiled code)
    "indented": (lambda objs, lines: json.dumps(objs, indent=2).encode(), True),
    "one line": (lambda objs, lines: orjson.dumps(objs), True),
    "a hand a line": (lambda objs, lines: b"[\n" + b",\n".join(lines) + b"\n]\n", True),
    "CRLF, tabs": (lambda objs, lines: b"\t[\r\n" + b" ,\r\n".join(lines) + b"\r\n]\r\n\t", True),
    "gzipped": (lambda objs, lines: gzip.compress(json.dumps(objs, indent=1).encode()), True),
    "a hand twice": (lambda objs, lines: b"[\n" + b",\n".join(lines + lines[2:3]) + b"\n]\n", True),
    "trailing comma": (lambda objs, lines: b"[\n" + b",\n".join(lines) + b",\n]\n", False),
    "an odd item": (lambda objs, lines: b"[" + b",".join(lines[:3] + [b'{"game_id": "x", "hand": "3"}']) + b"]", False),
    "a raw tab in a string": (lambda objs, lines: b"[" + lines[0].replace(b'"game_id":"', b'"game_id":"\t', 1) + b"]", False),
    "an escaped newline": (lambda objs, lines: json.dumps(objs, indent=1).replace('"event": "', '"event": "a\\nb', 1).encode(), False),
    "a byte-order mark": (lambda objs, lines: b"\xef\xbb\xbf" + orjson.dumps(objs), True),
    "empty": (lambda objs, lines: b"[ ]", False),
    "text after it": (lambda objs, lines: orjson.dumps(objs) + b" x", False),
    "a number among the items": (lambda objs, lines: b"[" + lines[0] + b", 3]", False),
    "brackets that do not match": (lambda objs, lines: b"[" + lines[0][:-1] + b"]]", False),
    "cut short": (lambda objs, lines: b"[" + b",".join(lines)[:-40], False),
    "lines, not an array": (lambda objs, lines: b"\n".join(lines) + b"\n", False),
}


@pytest.mark.parametrize("shape", list(ARRAY_SHAPES))
def test_a_json_array_of_hands_is_read_by_compiled_code_as_the_python_parser_reads_it(tmp_path, shape):
    """A ``.json`` document holding an array of hands (FORMATS.md section 1) took the Python parser
    whole (20,000 hands: 10.7 s against 2.2 s as JSON Lines).  An array of objects that compiled code
    reads item by item now goes in as ready rows, with the line each item starts on (its number
    when two start on one line); anything the reference refuses as a document, or an item the
    scanner does not read, leaves the whole document to the Python parser: the same rows, errors
    and lines either way."""
    make, compiled = ARRAY_SHAPES[shape]
    objs = _season_objs(2, seed=31)
    data = make(objs, [orjson.dumps(o) for o in objs])
    path = tmp_path / ("hands.json.gz" if shape == "gzipped" else "hands.json")
    path.write_bytes(data)
    ref, fast, stats = assert_same_load([path])
    assert stats["fast_lines"] == (len(objs) + (shape == "a hand twice") if compiled else 0)
    if compiled:
        hands = fast.execute("SELECT count(*) FROM hand_records").fetchone()[0]
        assert hands == len(objs)
        lines = [ln for (ln,) in fast.execute("SELECT source_line FROM hand_records ORDER BY source_line").fetchall()]
        if shape in ("CRLF, tabs", "a hand a line", "a hand twice"):
            assert lines == list(range(2, len(objs) + 2))  # each hand on its own line, after "["
        elif shape == "one line":
            assert lines == list(range(1, len(objs) + 1))  # numbered


def test_load_empty_blank_and_other_formats(tmp_path):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "blank.jsonl").write_bytes(b"\n  \n\r\n")
    recs = [r for g in iter_season(8, 2, 11) for r in g.records]
    write_season(recs, tmp_path / "s.spn")
    write_season(recs, tmp_path / "s.csv")
    write_season(recs[:5], tmp_path / "s.json")  # a .json file: the Python loader's
    (tmp_path / "notes.txt").write_text("not a log")
    assert_same_load([tmp_path])


_MUTATIONS = (
    lambda b: b,
    lambda b: b.replace(b'":', b'": ', 1),
    lambda b: b + b"\r",
    lambda b: b.replace(b'"N"', b'"n"', 1),
    lambda b: b.replace(b'"bid":', b'"bid":"', 1).replace(b',"seat"', b'","seat"', 1),
    lambda b: b[:-1] + b',"x_k":[1,{"a":null}]}',
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_load_random_records_as_the_python_loader(tmp_path, data):
    from strategies import games

    recs = data.draw(games(max_hands=3))
    lines = []
    for r in recs:
        line = dumps_record(r).encode()
        lines.append(data.draw(st.sampled_from(_MUTATIONS))(line))
    path = tmp_path / "random.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert_same_load([path])


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**16), 10**16) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8"), max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("abk\\\"é", max_size=2), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_nested_values_in_rules_and_extensions_as_the_python_loader(tmp_path, data):
    """Any JSON in a ``rules`` object or an ``x_*`` value (nested arrays and objects, floats,
    escapes, big numbers), written compact or spaced: the compiled path stores what the Python
    loader stores, reading the line itself or handing it over."""
    import json

    base = _season_objs(1, seed=11)[:3]
    lines = []
    for o in base:
        opts = data.draw(st.dictionaries(st.sampled_from(["x_a", "target", "extra_cards", "blind_bids"]), _JSON_VALUES, max_size=2))
        ext = data.draw(st.dictionaries(st.sampled_from(["x_a", "x_b", "x_"]), _JSON_VALUES, max_size=2))
        obj = dict(o, rules={"preset": "standard", **opts}, **ext)
        seps = data.draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : \t")]))
        lines.append(json.dumps(obj, separators=seps, ensure_ascii=data.draw(st.booleans())).encode())
    path = tmp_path / "nested.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert_same_load([path])


def test_every_loaded_view_is_the_same(edge_file):
    ref, fast, _ = assert_same_load([edge_file])
    for t in LOADED:
        assert _rows(ref, t) == _rows(fast, t), t


def test_a_canonical_season_is_read_by_compiled_code_only(tmp_path):
    season = tmp_path / "season.jsonl"
    recs = [r for g in iter_season(8, 4, 3, fault_rate=0.2) for r in g.records]
    write_season(recs, season)
    _, _, stats = assert_same_load([season])
    assert stats["python_lines"] == 0 and stats["fast_lines"] == len(recs)
