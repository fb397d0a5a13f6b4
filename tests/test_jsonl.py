import gzip

import orjson
import pytest

from spadework.parsers import jsonl
from spadework.parsers.model import Bid, HandRecord, LoadError, SideScore, Trick
from spadework.parsers.seats import Seat, Side

GOOD = {
    "schema": "spades-hand/1",
    "game_id": "club-0314-t2",
    "hand": 1,
    "players": {"N": "ana", "E": "bo", "S": "cy", "W": "di"},
    "dealer": "N",
    "bids": [{"seat": "E", "bid": 3}, {"seat": "S", "bid": "nil"}, {"seat": "W", "bid": 4}, {"seat": "N", "bid": 5}],
    "tricks": [{"leader": "E", "cards": ["2C", "5C", "KC", "AC"], "winner": "N"}],
    "score": {"NS": {"points": 151, "total": 151, "bags": 1}, "EW": {"points": -70, "total": -70, "bags": 0}},
    "x_app": {"v": 2},
}


def line(**changes):
    obj = dict(GOOD)
    for k, v in changes.items():
        if v is ...:
            obj.pop(k, None)
        else:
            obj[k] = v
    return orjson.dumps(obj).decode()


def test_reads_every_field():
    (rec,) = list(jsonl.loads(line()))
    assert isinstance(rec, HandRecord)
    assert rec.game_id == "club-0314-t2" and rec.hand == 1 and rec.dealer is Seat.N
    assert rec.players == ("ana", "bo", "cy", "di")
    assert rec.bids[1] == Bid(Seat.S, 0, nil=True, blind=False)
    assert rec.tricks == (Trick(Seat.E, ("2C", "5C", "KC", "AC"), Seat.N),)
    assert rec.tricks[0].seats() == (Seat.E, Seat.S, Seat.W, Seat.N)
    assert rec.score == (SideScore(151, 151, 1), SideScore(-70, -70, 0))
    assert rec.extras == {"x_app": {"v": 2}} and rec.warnings == ()
    assert rec.rules == "standard" and rec.source_line == 1


def test_bid_forms():
    bids = [{"seat": "N", "bid": 0}, {"seat": "E", "bid": "nil", "blind": True}, {"seat": "S", "bid": 14}, {"seat": "W", "bid": 4.5}]
    (rec,) = list(jsonl.loads(line(bids=bids)))
    assert rec.bids == (
        Bid(Seat.N, 0, True, False),
        Bid(Seat.E, 0, True, True),
        Bid(Seat.S, 14, False, False),
        Bid(Seat.W, 4.5, False, False),
    )


def test_dump_is_canonical_and_round_trips():
    (rec,) = list(jsonl.loads(line(tricks=[{"leader": "e", "cards": ["c2", "5c", "K♣", "10c"]}])))
    text = jsonl.dumps([rec])
    obj = orjson.loads(text)
    assert obj["tricks"][0] == {"leader": "E", "cards": ["2C", "5C", "KC", "TC"]}
    assert obj["bids"][1] == {"seat": "S", "bid": "nil"}
    (again,) = list(jsonl.loads(text))
    assert again == rec


@pytest.mark.parametrize(
    "text,reason",
    [
        (line()[:-20], "not valid JSON"),
        (line(tricks=[{"leader": "E", "cards": ["2C", "1S"]}]), "tricks[0].cards[1]: '1S' is not a card"),
        (line(tricks=[{"leader": "E", "cards": ["2C", ["3C"]]}]), "tricks[0].cards[1]: ['3C'] is not a card"),
        (line(deal={"N": ["AS", "kh", 7]}), "deal.N[2]: 7 is not a card"),
        (line(deal={"N": ["AS", True]}), "deal.N[1]: True is not a card"),
        (line(dealer="X"), "dealer 'X' is not a seat"),
        (line(hand="two"), "hand: 'two' is not a whole number"),
        (line(hand=0), "hand: 0 is below 1"),
        (line(players=...), "missing required key 'players'"),
        (line(bids=...), "missing required key 'bids'"),
        (line(game_id=...), "missing required key 'game_id'"),
        (line(schema="spades-hand/2"), "schema 'spades-hand/2' is not supported"),
        (line(bids=[{"seat": "N", "bid": "pass"}]), "'pass' is not a bid"),
        (line(bids=[{"seat": "Q", "bid": 3}]), "bids[0].seat 'Q' is not a seat"),
        (line(tricks=[{"leader": "E", "cards": ["2C", "3C", "4C", "5C", "6C"]}]), "a trick has at most 4"),
        (line(score={"NS": {"points": "lots"}}), "score.NS.points: 'lots' is not a whole number"),
        ("[1, 2]", "a hand must be a JSON object"),
    ],
)
def test_bad_records_name_the_reason(text, reason):
    (item,) = list(jsonl.loads(text, source="f.jsonl"))
    assert isinstance(item, LoadError)
    assert reason in item.message
    assert item.source_file == "f.jsonl" and item.source_line == 1 and item.raw == text


def test_bad_lines_do_not_stop_the_file(tmp_path):
    p = tmp_path / "mixed.jsonl.gz"
    body = "\n".join([line(hand=1), "{nope", "", line(hand=3), b"\xff\xfe".decode("latin-1")]) + "\n"
    raw = body.encode("utf-8").replace("ÿþ".encode(), b"\xff\xfe")
    with gzip.open(p, "wb") as f:
        f.write(raw)
    items = list(jsonl.load(p))
    assert [type(i).__name__ for i in items] == ["HandRecord", "LoadError", "HandRecord", "LoadError"]
    assert items[1].source_line == 2 and items[2].source_line == 4
    assert "invalid UTF-8" in items[3].message and items[3].source_line == 5


def test_json_array_file(tmp_path):
    p = tmp_path / "two.json"
    p.write_text(f"[{line(hand=1)}, {line(hand=2)}, {{\"hand\": 3}}]")
    items = list(jsonl.load(p))
    assert [i.hand for i in items[:2]] == [1, 2]
    assert isinstance(items[2], LoadError) and "missing required key 'game_id'" in items[2].message


def test_json_array_items_are_reported_at_their_lines(tmp_path):
    """A pretty-printed .json array: each item's source_line is where it starts (FORMATS.md section 5:
    file, line and reason), a syntax error is at its line, and a one-line array numbers its items."""
    import orjson

    objs = [orjson.loads(line(hand=1)), {**orjson.loads(line(hand=2)), "hand": 0}, orjson.loads(line(hand=3))]
    pretty = b"[\n" + b",\n".join(orjson.dumps(o, option=orjson.OPT_INDENT_2) for o in objs) + b"\n]\n"
    p = tmp_path / "pretty.json"
    p.write_bytes(pretty)
    text = pretty.decode()
    starts = [text[: text.index(f'"hand": {h}')].rindex("{") for h in (1, 0, 3)]
    want = [text.count("\n", 0, i) + 1 for i in starts]
    items = list(jsonl.load(p))
    assert [i.source_line for i in items] == want and want[0] == 2 and len(set(want)) == 3
    assert isinstance(items[1], LoadError) and items[1].message.startswith("item 2: hand: 0 is below 1")
    p.write_bytes(pretty.replace(b'"hand": 3', b'"hand": ', 1))
    (err,) = list(jsonl.load(p))
    assert err.source_line == text.count("\n", 0, text.index('"hand": 3')) + 1 and "not valid JSON" in err.message
    p.write_bytes(b"[" + b", ".join(orjson.dumps(o) for o in objs) + b"]")
    assert [i.source_line for i in jsonl.load(p)] == [1, 2, 3]


def test_unknown_keys_are_kept_with_a_warning():
    (rec,) = list(jsonl.loads(line(colour="blue")))
    assert rec.extras["colour"] == "blue"
    assert rec.warnings == ("unknown key 'colour' kept as an extension",)


def test_side_pairs_and_winner():
    (rec,) = list(jsonl.loads(line(score_before={"NS": 120, "EW": -40}, bags_before={"NS": 3, "EW": 9}, winner="EW")))
    assert rec.score_before == (120, -40) and rec.bags_before == (3, 9) and rec.winner is Side.EW


def test_misspelt_nested_keys_are_reported_not_silently_dropped():
    bids = [{"seat": "E", "bidd": 3, "bid": 3}]
    (rec,) = list(jsonl.loads(line(bids=bids, score={"NS": {"pts": 5, "total": 5}}, tricks=[{"leader": "E", "cards": [], "winnr": "N"}])))
    assert rec.warnings == (
        "bids[0]: unknown key 'bidd' ignored (value 3)",
        "tricks[0]: unknown key 'winnr' ignored (value \"N\")",
        "score.NS: unknown key 'pts' ignored (value 5)",
    )
