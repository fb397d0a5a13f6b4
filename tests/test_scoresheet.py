"""The score-sheet CSV (FORMATS.md section 3): reading, errors, writing, and the shipped sample."""

from __future__ import annotations

import gzip
import io
import itertools
from pathlib import Path

import pytest

from spadework.parsers import jsonl, scoresheet
from spadework.parsers.model import Bid, HandRecord, LoadError, SideScore
from spadework.parsers.seats import Seat, Side
from spades_oracle import group_games, score_game
from strategies import same_record

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden" / "csv"
HEADER = ",".join(scoresheet.REQUIRED_COLUMNS)
ROW = "sheet-1,{hand},{dealer},ana,bo,cy,di,4,3,2,3,4,3,3,3,61,{total},1,60,60,0"


def items(text: str | bytes) -> list[HandRecord | LoadError]:
    return list(scoresheet.loads(text, source="s.csv"))


def test_header_is_the_one_formats_md_lists():
    assert HEADER == (
        "game_id,hand,dealer,player_N,player_E,player_S,player_W,bid_N,bid_E,bid_S,bid_W,"
        "taken_N,taken_E,taken_S,taken_W,NS_points,NS_total,NS_bags,EW_points,EW_total,EW_bags"
    )


def test_reads_a_row():
    (rec,) = items(HEADER + "\n" + ROW.format(hand=1, dealer="N", total=61) + "\n")
    assert rec == HandRecord(
        game_id="sheet-1",
        hand=1,
        dealer=Seat.N,
        players=("ana", "bo", "cy", "di"),
        bids=(Bid(Seat.E, 3), Bid(Seat.S, 2), Bid(Seat.W, 3), Bid(Seat.N, 4)),
        taken=(4, 3, 3, 3),
        score=(SideScore(61, 61, 1), SideScore(60, 60, 0)),
        source_file="s.csv",
        source_line=2,
    )
    assert rec.tricks is None and rec.deal is None and rec.winner is None and rec.rules == "standard"


def test_bids_are_listed_from_the_dealers_left_and_blind_forms_are_read():
    row = "g,1,S,a,b,c,d,bn,b7,,nil,0,7,3,3,,,,,,"
    (rec,) = items(HEADER + "\n" + row)
    assert rec.bids == (Bid(Seat.W, 0, True, False), Bid(Seat.N, 0, True, True), Bid(Seat.E, 7, False, True))
    assert rec.score is None


def test_empty_cells_mean_not_recorded():
    (rec,) = items(HEADER + "\ng,2,E,,bo,,,,,,,,5,,,,,,-40,,")
    assert rec.players == (None, "bo", None, None) and rec.bids == ()
    assert rec.taken == (None, 5, None, None)
    assert rec.score == (SideScore(), SideScore(-40, None, None))


def test_optional_and_extra_columns():
    head = HEADER + ",rules,event,date,table,round,x_scorer,notes,winner"
    row = ROW.format(hand=3, dealer="w", total=9) + ',"{""preset"": ""nyc""}",Club,2024-05-01,7,semi,ana,,NS'
    (rec,) = items(head + "\n" + row)
    assert rec.rules == {"preset": "nyc"} and (rec.event, rec.date, rec.table, rec.round) == ("Club", "2024-05-01", "7", "semi")
    assert rec.dealer is Seat.W and rec.winner is Side.NS
    assert rec.extras == {"x_scorer": "ana"}
    assert rec.warnings == ()
    (rec,) = items(head + "\n" + ROW.format(hand=3, dealer="w", total=9) + ",barmore,,,,,,late,")
    assert rec.rules == "barmore" and rec.extras == {"notes": "late"}
    assert rec.warnings == ("unknown column 'notes' kept as an extension",)


def test_columns_in_any_order_semicolons_bom_and_crlf():
    cols = list(scoresheet.REQUIRED_COLUMNS)
    cols.reverse()
    values = ROW.format(hand=5, dealer="S", total=70).split(",")
    values.reverse()
    text = "\ufeff" + ";".join(cols) + "\r\n" + ";".join(values) + "\r\n"
    (rec,) = items(text.encode("utf-8"))
    assert rec.hand == 5 and rec.dealer is Seat.S and rec.score[Side.NS].total == 70 and rec.taken == (4, 3, 3, 3)


def test_blank_and_all_empty_rows_are_skipped():
    text = "\n".join([HEADER, "", ROW.format(hand=1, dealer="N", total=61), ",,,,,,,,,,,,,,,,,,,,", "   ", ROW.format(hand=2, dealer="E", total=1)])
    got = items(text)
    assert [(r.hand, r.source_line) for r in got] == [(1, 3), (2, 6)]


@pytest.mark.parametrize(
    "row,message",
    [
        ("sheet-1,2,E,ana,bo", "line 3: the row has 5 cells; the header has 21"),
        (ROW.format(hand=2, dealer="X", total=1), "line 3: dealer 'X' is not a seat (expected N, E, S or W)"),
        (ROW.format(hand=2, dealer="", total=1), "line 3: dealer is empty (the dealer is required)"),
        (ROW.format(hand="two", dealer="E", total=1), "line 3: hand 'two' is not a whole number"),
        (ROW.format(hand="0", dealer="E", total=1), "line 3: hand 0 is below 1"),
        (ROW.format(hand=2, dealer="E", total="1.5"), "line 3: NS_total '1.5' is not a whole number"),
        (ROW.format(hand=2, dealer="E", total="x"), "line 3: NS_total 'x' is not a whole number"),
        (ROW.format(hand=2, dealer="E", total=1).replace(",4,3,2,3,", ",4,pass,2,3,", 1), "line 3: bid_E 'pass' is not a bid"),
        (ROW.format(hand=2, dealer="E", total=1).replace("sheet-1", " "), "line 3: game_id is empty"),
        (ROW.format(hand=2, dealer="E", total=1) + ",extra", "line 3: the row has 22 cells, some beyond the header's 21 columns"),
    ],
)
def test_bad_rows_lose_only_themselves(row, message):
    text = "\n".join([HEADER, ROW.format(hand=1, dealer="N", total=61), row, ROW.format(hand=3, dealer="S", total=122)]) + "\n"
    got = items(text)
    assert [type(i).__name__ for i in got] == ["HandRecord", "LoadError", "HandRecord"]
    err = got[1]
    assert message in err.message and err.message.startswith("line 3: ")
    assert err.source_file == "s.csv" and err.source_line == 3 and err.raw == row
    assert (got[0].hand, got[2].hand) == (1, 3)


def test_a_quoted_cell_holding_a_line_break_is_read_across_lines():
    """A quoted cell that goes on to the next line (a name typed on two lines in a spreadsheet) is
    one row, at the line it starts on; it was rejected as two broken rows (found by a format
    audit), and the writer turned the line break into a space."""
    split = ROW.format(hand=2, dealer="E", total=1).replace("ana", '"an\n\na"', 1)
    text = "\n".join([HEADER, ROW.format(hand=1, dealer="N", total=61), split, ROW.format(hand=3, dealer="S", total=122)]) + "\n"
    got = items(text)
    assert [(type(i).__name__, i.source_line) for i in got] == [("HandRecord", 2), ("HandRecord", 3), ("HandRecord", 6)]
    assert got[1].players[0] == "an\n\na" and got[1].source_text == split.encode()
    assert scoresheet.dumps([got[1]]).count("\n") == 4  # header, and the row on three lines
    assert list(scoresheet.loads(scoresheet.dumps([got[1]])))[0].players[0] == "an\n\na"


def test_an_unclosed_quote_is_one_bad_row_not_the_rows_after_it():
    """A quote never closed is not allowed to swallow the rows after it: the lines ahead are read
    as one row only when they make one with the header's cells."""
    broken = ROW.format(hand=2, dealer="E", total=1).replace("ana", '"ana', 1)
    odd = ROW.format(hand=4, dealer="W", total=5).replace("bo", 'b"o', 1)  # a stray quote: no row with the one above
    rows = [ROW.format(hand=1, dealer="N", total=61), broken, ROW.format(hand=3, dealer="S", total=122), odd]
    got = items("\n".join([HEADER, *rows]) + "\n")
    assert [(type(i).__name__, i.source_line) for i in got] == [("HandRecord", 2), ("LoadError", 3), ("HandRecord", 4), ("HandRecord", 5)]
    assert got[1].message.startswith("line 3: a quote is not closed on this line, nor on the next lines as one row")
    assert got[3].players[1] == 'b"o'


def test_invalid_utf8_row():
    data = (HEADER + "\n").encode() + ROW.format(hand=1, dealer="N", total=61).replace("ana", "an\xe9").encode("latin-1") + b"\n"
    (err,) = items(data + ROW.format(hand=2, dealer="E", total=1).encode())[:1]
    assert isinstance(err, LoadError) and err.message.startswith("line 2: invalid UTF-8 at byte 15 (the file is not UTF-8: ")
    assert "export as CSV UTF-8" in err.message and "an\ufffd" in err.raw
    assert [i.hand for i in items(data + ROW.format(hand=2, dealer="E", total=1).encode())[1:]] == [2]


@pytest.mark.parametrize(
    "header,missing",
    [
        (HEADER.replace("NS_points", "NS_point"), "the header lacks the column NS_points; unexpected column: NS_point"),
        (HEADER.replace(",EW_bags", "").replace(",dealer", ""), "the header lacks the columns dealer, EW_bags"),
        # a row with no header above it (or another format read as a score sheet): named, not listed
        (ROW.format(hand=1, dealer="N", total=61), "this is not a score sheet's header: it names none of the columns game_id,hand,dealer"),
        (HEADER + ",hand", "the header repeats hand"),
    ],
)
def test_a_bad_header_is_one_error_and_nothing_else_is_read(header, missing):
    text = "\n".join([header, ROW.format(hand=1, dealer="N", total=61), "sheet-1,2,E,ana,bo"]) + "\n"
    (err,) = items(text)
    assert isinstance(err, LoadError) and err.source_line == 1 and err.raw == header
    assert err.message.startswith("line 1: " + missing) and err.message.endswith("; no row of this file can be read")


def test_empty_file_and_header_only_yield_nothing(tmp_path):
    assert items("") == [] and items("\n \n") == [] and items(HEADER + "\n") == []
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    assert list(scoresheet.load(path)) == []


def test_streams_row_by_row():
    rows = ((n, ROW.format(hand=n, dealer="N", total=1).encode()) for n in itertools.count(2))  # endless
    lines = itertools.chain([(1, HEADER.encode())], rows)
    first = list(itertools.islice(scoresheet.iter_scoresheet(lines, "endless"), 3))
    assert [r.hand for r in first] == [2, 3, 4]


def test_load_reads_gzip(tmp_path):
    path = tmp_path / "sheet.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(HEADER + "\n" + ROW.format(hand=1, dealer="N", total=61) + "\n")
    (rec,) = list(scoresheet.load(path, source="sheet.csv.gz"))
    assert rec.source_file == "sheet.csv.gz" and rec.source_line == 2 and rec.score[Side.EW].points == 60


# --- writing ------------------------------------------------------------------------------------


def test_dump_writes_the_canonical_sheet():
    records = list(jsonl.load(GOLDEN / "canonical.expected.jsonl"))
    expected = (GOLDEN / "canonical.csv").read_text(encoding="utf-8")
    assert scoresheet.dumps(records) == expected
    buf = io.StringIO()
    assert scoresheet.dump(records, buf) == 5 and buf.getvalue() == expected


def test_dump_with_the_exact_header_and_read_back():
    rec = next(iter(items(HEADER + "\n" + "g,1,S,a,b,c,d,bn,b7,,nil,0,7,3,3,10,20,1,,-5,")))
    text = scoresheet.dumps([rec], columns=scoresheet.REQUIRED_COLUMNS)
    assert text == HEADER + "\ng,1,S,a,b,c,d,bn,b7,,nil,0,7,3,3,10,20,1,,-5,\n"
    (back,) = items(text)
    assert same_record(back, rec)


def test_dump_is_lossy_where_the_sheet_has_no_column():
    (rec,) = list(jsonl.loads(
        '{"game_id":"g","hand":1,"players":{},"dealer":"N","bids":[{"seat":"E","bid":3},{"seat":"E","bid":4}],'
        '"tricks":[{"leader":"E","cards":["2C","3C","4C","5C"]}],"deal":{"N":["AS"]},"winner":"NS",'
        '"score_before":{"NS":1,"EW":2},"x_a":1}'
    ))
    (back,) = items(scoresheet.dumps([rec]))
    assert back.bids == (Bid(Seat.E, 3),)  # the first bid of a seat only
    assert back.tricks is None and back.deal is None and back.extras == {}
    assert back.winner is Side.NS and back.score_before == (1, 2)  # the optional columns keep these


def test_dump_refuses_a_sheet_without_the_required_columns():
    with pytest.raises(ValueError, match="needs the columns hand"):
        scoresheet.dumps([], columns=[c for c in scoresheet.REQUIRED_COLUMNS if c != "hand"])
    with pytest.raises(ValueError, match="unknown score-sheet columns: colour"):
        scoresheet.dumps([], columns=[*scoresheet.REQUIRED_COLUMNS, "colour"])


def test_sniff():
    assert scoresheet.sniff(HEADER.encode() + b"\n1,2")
    assert scoresheet.sniff(b"\xef\xbb\xbfhand;game_id;dealer\n")
    assert not scoresheet.sniff(b'[Game "g"]\n') and not scoresheet.sniff(b"")


# --- the shipped sample -------------------------------------------------------------------------


def test_sample_scoresheet_scores_follow_the_standard_rules():
    recs = list(scoresheet.load(ROOT / "data" / "scoresheet.csv"))
    assert all(isinstance(r, HandRecord) for r in recs) and len(recs) == 14
    games = group_games(recs)
    penalties = 0
    blind_nils = 0
    for game_id, hands in games.items():
        results, winner, ended = score_game(hands)
        for i, (rec, res) in enumerate(zip(hands, results)):
            assert rec.dealer == (hands[i - 1].dealer.left if i else Seat.N)
            assert sum(rec.taken) == 13
            for side in (Side.NS, Side.EW):
                got = rec.score[side]
                assert (got.points, got.total, got.bags) == (res[side].points, res[side].total, res[side].bags), (game_id, rec.hand)
                if i and got.bags < results[i - 1][side].bags:  # bags only go down by the sandbagging penalty
                    penalties += 1
            for b in rec.bids:
                if b.nil and b.blind:  # blind nil only for a side behind by at least 100 at the start of the hand
                    blind_nils += 1
                    totals = (results[i - 1][0].total, results[i - 1][1].total) if i else (0, 0)
                    assert totals[b.seat.side.other] - totals[b.seat.side] >= 100
        if game_id == "sheet-0321-t1":
            assert (winner, ended, hands[-1].hand) == (Side.NS, 11, 11)
            assert (results[-1][0].total, results[-1][1].total) == (572, 240)
        else:
            assert winner is None
    assert penalties >= 1 and blind_nils == 1


@pytest.mark.parametrize("cell, value", [("61.0", 61), ("61.", 61), ("+61", 61), ("61.00", 61)])
def test_a_whole_number_saved_with_a_decimal_point_reads_as_the_number(cell, value):
    """A spreadsheet may save 61 as 61.0: it was read as a bid but rejected as a tricks-taken count or
    a score ("'61.0' is not a whole number"); 61.5 stays rejected."""
    [rec] = items("\n".join([HEADER, ROW.format(hand=1, dealer="N", total=cell)]) + "\n")
    assert rec.score[0].total == value
    [bad] = items("\n".join([HEADER, ROW.format(hand=1, dealer="N", total="61.5")]) + "\n")
    assert "NS_total '61.5' is not a whole number" in bad.message


# --- sheets as spreadsheets export them (found by a score-sheet audit) ----------------------------


def test_header_names_in_any_case_and_spacing_are_the_columns_they_name():
    """``Game ID``, ``Player N`` and ``Rules`` were not the columns game_id, player_N and rules: the
    file was rejected, or (``Rules``) its rules were kept as an extension and the game checked as
    standard, clean."""
    spaced = ",".join(c.replace("_", " ").title() for c in scoresheet.REQUIRED_COLUMNS) + ",Rules"
    row = ROW.format(hand=1, dealer="N", total=61) + ',"{""preset"": ""standard"", ""target"": 150}"'
    (rec,) = items(spaced + "\n" + row + "\n")
    assert isinstance(rec, HandRecord), rec
    assert rec.rules == {"preset": "standard", "target": 150} and rec.players[0] == "ana" and rec.extras == {}
    assert scoresheet.header_name(" ns-Points ") == "NS_points" and scoresheet.header_name("Notes") == "Notes"


@pytest.mark.parametrize("sep", [";", "\t"])
def test_the_separator_is_the_one_that_names_the_columns(sep):
    """A semicolon or tab file whose extra column holds a comma (``Notes, misc``) was read as a
    comma file, and its header as naming none of the columns."""
    header = sep.join([*scoresheet.REQUIRED_COLUMNS, "Notes, misc"])
    row = sep.join([*ROW.format(hand=1, dealer="N", total=61).split(","), "ok"])
    (rec,) = items(header + "\n" + row + "\n")
    assert isinstance(rec, HandRecord) and rec.extras == {"Notes, misc": "ok"}


def test_a_row_may_leave_out_its_trailing_optional_cells_but_not_required_ones():
    header = HEADER + ",rules,event"
    good, short = items(header + "\n" + ROW.format(hand=1, dealer="N", total=61) + "\n" + "sheet-1,2,E,ana,bo,cy,di,3,4\n")
    assert isinstance(good, HandRecord) and good.rules == "standard" and good.event is None
    assert isinstance(short, LoadError)
    assert short.message == "line 3: the row has 9 cells; the header has 23 (no cell for bid_S, bid_W, taken_N, taken_E, ...)"


@pytest.mark.parametrize("written", ["-60", "\u221260", "(60)", "( 60 )"])
def test_a_negative_score_as_spreadsheets_format_it(written):
    row = ROW.format(hand=1, dealer="N", total=61).replace(",60,60,0", f",{written},{written},0")
    (rec,) = items(HEADER + "\n" + row + "\n")
    assert isinstance(rec, HandRecord), rec
    assert (rec.score[1].points, rec.score[1].total) == (-60, -60)


def test_a_blank_rules_cell_keeps_the_rules_of_its_game():
    """Rules written on a game's first row only gave every later hand of it the standard rules, and
    the check a "rules differ" finding on each."""
    rules = '"{""preset"": ""standard"", ""target"": 150}"'
    lines = [HEADER + ",rules", ROW.format(hand=1, dealer="N", total=61) + "," + rules,
             ROW.format(hand=2, dealer="E", total=122) + ",",
             ROW.format(hand=1, dealer="N", total=61).replace("sheet-1", "other") + ","]  # fmt: skip
    recs = items("\n".join(lines) + "\n")
    assert [r.rules for r in recs] == [{"preset": "standard", "target": 150}] * 2 + ["standard"]


def test_rules_named_on_a_later_row_of_a_game_hold_for_its_earlier_blank_rows():
    """A sheet that writes the rules on a game's second row: its first row was read as standard,
    and the check found the game's rules mixed (found by a score-sheet audit).  A game whose rows never
    name rules is standard; rows come out in file order."""
    rules = '"{""preset"": ""standard"", ""target"": 150}"'
    row = ROW.format(hand=1, dealer="N", total=61)
    lines = [HEADER + ",rules", row + ",",
             ROW.format(hand=2, dealer="E", total=122) + "," + rules,
             ROW.format(hand=3, dealer="S", total=183) + ",",
             row.replace("sheet-1", "other") + ",",  # another game, no rules anywhere
             row.replace("sheet-1", "third").replace(",ana,", ",,") + ",",  # fine: a blank player
             ROW.format(hand="x", dealer="E", total=122).replace("sheet-1", "third") + ",",  # bad hand number
             ROW.format(hand=3, dealer="S", total=183).replace("sheet-1", "third") + ",barmore"]  # fmt: skip
    got = items("\n".join(lines) + "\n")
    recs = [r for r in got if isinstance(r, HandRecord)]
    target = {"preset": "standard", "target": 150}
    assert [(r.game_id, r.hand, r.rules) for r in recs] == [
        ("sheet-1", 1, target), ("sheet-1", 2, target), ("sheet-1", 3, target), ("other", 1, "standard"),
        ("third", 1, "barmore"), ("third", 3, "barmore")]  # fmt: skip
    assert [r.source_line for r in recs] == [2, 3, 4, 5, 6, 8]
    [error] = [e for e in got if isinstance(e, LoadError)]
    assert error.source_line == 7 and "hand" in error.message
    assert [getattr(r, "source_line", None) for r in got] == [2, 3, 4, 5, 6, 7, 8]  # in file order


def test_a_header_cell_that_only_folds_onto_a_name_another_cell_has_stays_as_written():
    """Folding header names made ``ns points`` beside ``NS_points``, or ``rules`` beside ``Rules``, a
    repeated column, and the whole sheet unreadable; a ``Winner`` column of team names lost its rows
    (found by a regression audit)."""
    header = HEADER + ",ns points,rules,Rules,Winner"
    row = ROW.format(hand=1, dealer="N", total=61) + ",x,,y,ana+cy"
    (rec,) = items(header + "\n" + row + "\n")
    assert isinstance(rec, HandRecord), rec
    assert rec.extras == {"ns points": "x", "Rules": "y", "Winner": "ana+cy"} and rec.winner is None
    assert scoresheet.header_names(["Game ID", "game_id"]) == ["Game ID", "game_id"]


@pytest.mark.parametrize("column, cell", [("hand", "(1)"), ("taken_N", "(4)")])
def test_parentheses_are_a_minus_only_where_a_number_may_be_negative(column, cell):
    cells = dict(zip(scoresheet.REQUIRED_COLUMNS, ROW.format(hand=1, dealer="N", total=61).split(",")))
    cells[column] = cell
    (err,) = items(HEADER + "\n" + ",".join(cells[c] for c in scoresheet.REQUIRED_COLUMNS) + "\n")
    assert isinstance(err, LoadError) and f"{column} '{cell}' is not a whole number" in err.message


def test_a_utf16_sheet_without_a_byte_order_mark_gets_the_same_hint_as_json_lines(tmp_path):
    text = (Path(__file__).resolve().parents[1] / "data" / "scoresheet.csv").read_text(encoding="utf-8")
    sheet = tmp_path / "u16.csv"
    sheet.write_bytes(text.encode("utf-16-le"))
    (err,) = [e for e in scoresheet.load(sheet) if isinstance(e, LoadError)]
    assert err.source_line == 1 and "this is not a score sheet's header" in err.message
    assert err.message.endswith("is the file UTF-16 without a byte-order mark? Save it as UTF-8")


def test_a_blank_rules_cell_waits_for_its_own_game_across_other_games_rows():
    """Row A,1 blank, then B,1 barmore, then A,2 nyc: A,1 was read as standard because another game's
    row ended its wait, and the check flagged a RULES_MIXED the sheet does not hold (found by a format
    audit)."""
    lines = [HEADER + ",rules", ROW.format(hand=1, dealer="N", total=61) + ",",
             ROW.format(hand=1, dealer="N", total=61).replace("sheet-1", "B") + ",barmore",
             ROW.format(hand=2, dealer="E", total=122) + ",nyc"]  # fmt: skip
    got = items("\n".join(lines) + "\n")
    assert [(r.game_id, r.hand, r.rules, r.source_line) for r in got] == [
        ("sheet-1", 1, "nyc", 2), ("B", 1, "barmore", 3), ("sheet-1", 2, "nyc", 4)]  # fmt: skip


def test_a_blank_rules_cell_under_unreadable_rules_names_the_row_that_gave_them():
    """A blank cell after a row whose rules are not valid JSON was rejected with that JSON quoted as
    if it were on its own line (found by a format audit): the error now names the line it is on."""
    lines = [HEADER + ",rules", ROW.format(hand=1, dealer="N", total=61) + ',"{""preset"":"',
             ROW.format(hand=2, dealer="E", total=122) + ","]  # fmt: skip
    first, second = items("\n".join(lines) + "\n")
    assert isinstance(first, LoadError) and first.source_line == 2 and "is not valid JSON" in first.message
    assert isinstance(second, LoadError) and second.source_line == 3
    assert second.message.startswith("line 3: its rules cell is blank, and the rules game 'sheet-1' gives on line 2 cannot be read (")


def test_rows_waiting_for_their_game_s_rules_are_bounded(monkeypatch):
    # a game that never names its rules holds up the rows behind it only so far
    monkeypatch.setattr(scoresheet, "MAX_WAITING_ROWS", 3)
    lines = [HEADER + ",rules"] + [ROW.format(hand=h, dealer="NESW"[(h - 1) % 4], total=61 * h) + "," for h in range(1, 6)]
    lines.append(ROW.format(hand=6, dealer="E", total=366) + ",nyc")
    got = list(items("\n".join(lines) + "\n"))
    assert [(r.hand, r.rules) for r in got] == [(1, "standard"), (2, "standard"), (3, "standard"), (4, "standard"),
                                                (5, "nyc"), (6, "nyc")]  # fmt: skip
