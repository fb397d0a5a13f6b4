"""SPN, the human-writable text format (FORMATS.md section 2): reading, errors, writing."""

from __future__ import annotations

import gzip
import io
import itertools
from pathlib import Path

import pytest

from spadework.parsers import jsonl, spn
from spadework.parsers.model import Bid, HandRecord, LoadError, SideScore, Trick
from spadework.parsers.seats import Seat, Side
from spades_oracle import group_games, replay, score_game
from strategies import same_record

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden" / "spn"

EXAMPLE = """[Event "Club night"]
[Game "club-0314-t2"]
[Rules "standard"]
[North "ana"] [East "bo"] [South "cy"] [West "di"]

[Hand "1"]
[Dealer "N"]
[Deal "N:AKQ2.JT3.984.A52 J987.A854.K.KJ96 T643.KQ962.72.T3 5.7.AQJT653.Q874"]   ; PBN deal
[Bids "E 3, S nil, W 4, N 5"]            ; in order; "bn" = blind nil, "b7" = blind seven
[Play]
E: 2C 5C KC AC > N                        ; leader, then the cards in play order
N: AS 7S 3S 5S
[Taken "N 5 E 3 S 0 W 5"]
[Score "NS 151 EW -70"] [Total "NS 151 EW -70"] [Bags "NS 1 EW 0"]
"""


def items(text: str | bytes) -> list[HandRecord | LoadError]:
    return list(spn.loads(text, source="t.spn"))


def one(text: str) -> HandRecord:
    got = items(text)
    assert len(got) == 1 and isinstance(got[0], HandRecord), got
    return got[0]


def only_error(text: str | bytes) -> LoadError:
    got = [i for i in items(text) if isinstance(i, LoadError)]
    assert len(got) == 1, got
    return got[0]


HEAD = '[Game "g"]\n\n'


# --- reading ------------------------------------------------------------------------------------


def test_reads_the_formats_example():
    rec = one(EXAMPLE)
    assert rec.game_id == "club-0314-t2" and rec.hand == 1 and rec.event == "Club night"
    assert rec.rules == "standard" and rec.dealer is Seat.N
    assert rec.players == ("ana", "bo", "cy", "di")
    assert rec.deal[Seat.N] == ("AS", "KS", "QS", "2S", "JH", "TH", "3H", "9D", "8D", "4D", "AC", "5C", "2C")
    assert rec.deal[Seat.W] == ("5S", "7H", "AD", "QD", "JD", "TD", "6D", "5D", "3D", "QC", "8C", "7C", "4C")
    assert rec.bids == (Bid(Seat.E, 3), Bid(Seat.S, 0, nil=True), Bid(Seat.W, 4), Bid(Seat.N, 5))
    assert rec.tricks == (Trick(Seat.E, ("2C", "5C", "KC", "AC"), Seat.N), Trick(Seat.N, ("AS", "7S", "3S", "5S")))
    assert rec.taken == (5, 3, 0, 5)
    assert rec.score == (SideScore(151, 151, 1), SideScore(-70, -70, 0))
    assert rec.winner is None and rec.extras == {} and rec.warnings == ()
    assert rec.source_file == "t.spn" and rec.source_line == 6


def test_blind_bids_and_other_bid_spellings():
    rec = one(HEAD + '[Hand "1"] [Dealer "W"] [Bids "N bn, E b7, S 0, W 4.5"]')
    assert rec.bids == (
        Bid(Seat.N, 0, nil=True, blind=True),
        Bid(Seat.E, 7, nil=False, blind=True),
        Bid(Seat.S, 0, nil=True, blind=False),
        Bid(Seat.W, 4.5),
    )
    rec = one(HEAD + '[Hand "1"] [Dealer "W"] [Bids "north NIL east 13 south BNIL west -1"]')
    assert rec.bids == (Bid(Seat.N, 0, True), Bid(Seat.E, 13), Bid(Seat.S, 0, True, True), Bid(Seat.W, -1))


def test_game_level_tags_carry_over_until_changed():
    text = (
        '[Event "E1"] [Game "g1"] [Date "2024-01-02"] [North "a"] [East "b"] [South "c"] [West "d"]\n\n'
        '[Hand "1"] [Dealer "N"] [Bids ""]\n\n'
        '[West "z"] [Event]\n[Hand "2"] [Dealer "E"] [Bids ""]\n\n'
        '[Hand "3"] [Dealer "S"] [Bids ""]\n\n'
        '[Game "g2"] [Rules "{\\"preset\\": \\"barmore\\"}"]\n\n'
        '[Hand "1"] [Dealer "W"] [Bids ""]\n'
    )
    recs = items(text)
    assert [(r.game_id, r.hand, r.event, r.players[Seat.W], r.date) for r in recs] == [
        ("g1", 1, "E1", "d", "2024-01-02"),
        ("g1", 2, None, "z", "2024-01-02"),
        ("g1", 3, None, "z", "2024-01-02"),
        ("g2", 1, None, "z", "2024-01-02"),
    ]
    assert [r.rules for r in recs] == ["standard", "standard", "standard", {"preset": "barmore"}]
    assert [r.dealer for r in recs] == [Seat.N, Seat.E, Seat.S, Seat.W]


def test_comments_and_tags_sharing_lines():
    text = (
        "% an escape line\n"
        '; a comment line\n[Game "g;{x}"] { a comment [Game "not this"]\n'
        'still the comment } [Hand "7"] [Dealer "s"] ; [Dealer "N"]\n'
        '[Bids "E 1, S 2, W 3, N 4"] [Taken "E 13"]\n'
    )
    rec = one(text)
    assert rec.game_id == "g;{x}" and rec.hand == 7 and rec.dealer is Seat.S
    assert rec.taken == (None, 13, None, None)
    assert rec.source_line == 1


def test_play_lines_accept_any_card_spelling_and_end_at_the_next_tag():
    rec = one(HEAD + '[Hand "1"] [Dealer "N"] [Bids ""]\n[Play]\ne: 10c, c9 Q♣ ac>n\nN:\n[Taken "N 1"]')
    assert rec.tricks == (Trick(Seat.E, ("TC", "9C", "QC", "AC"), Seat.N), Trick(Seat.N, ()))
    assert rec.taken == (1, None, None, None)


def test_empty_play_differs_from_absent_play():
    rec = one(HEAD + '[Hand "1"] [Dealer "N"] [Bids ""] [Play] [Taken ""]')
    assert rec.tricks == () and rec.taken is None and rec.deal is None  # an empty [Taken] records nothing
    rec = one(HEAD + '[Hand "1"] [Dealer "N"] [Bids ""]')
    assert rec.tricks is None and rec.taken is None and rec.score is None


def test_jokers_in_a_fifth_group_and_unknown_hands():
    rec = one(HEAD + '[Hand "1"] [Dealer "N"] [Bids ""] [Deal "E:AK.Q.J.T.BL - ... -"]')
    assert rec.deal == ((), ("AS", "KS", "QH", "JD", "TC", "BJ", "LJ"), (), ())


def test_deal_order_gives_the_order_the_deal_tag_cannot():
    """``[Deal]`` groups a seat's cards by suit; ``[DealOrder]`` lists a seat's same cards in the
    recorded order (what :func:`spn.dump` writes for a deal listed in another order)."""
    block = '[Hand "1"] [Dealer "N"] [Bids ""]\n[Deal "N:AK.2..3 - Q... -"]\n[DealOrder "N 3c 2H KS AS"]'
    (rec,) = items(HEAD + block + "\n")
    assert rec.deal == (("3C", "2H", "KS", "AS"), (), ("QS",), ())
    text = spn.dumps([rec])
    assert '[Deal "N:AK.2..3 ... Q... ..."]' in text and "[DealOrder \"N 3C 2H KS AS\"]" in text
    # ranks written out of order in [Deal] are listed ace down when written again (PBN's look)
    (odd,) = items(HEAD + '[Hand "1"] [Dealer "N"] [Bids ""]\n[Deal "N:2A.2..3 - - -"]\n')
    assert odd.deal[0] == ("2S", "AS", "2H", "3C")
    assert '[Deal "N:A2.2..3 ... ... ..."]\n[DealOrder "N 2S AS 2H 3C"]' in spn.dumps([odd])
    plain = items(HEAD + '[Hand "1"] [Dealer "N"] [Bids ""]\n[Deal "N:AK.2..3 - Q... -"]\n')[0]
    assert plain.deal[0] == ("AS", "KS", "2H", "3C") and "DealOrder" not in spn.dumps([plain])


def test_partial_scores_score_before_and_winner():
    rec = one(HEAD + '[Hand "9"] [Dealer "E"] [Bids ""]\n[ScoreBefore "NS 480 EW 300"] [BagsBefore "ew 9 ns 2"]\n'
              '[Score "EW 61"] [Total "NS 480"] [Winner "ns"]')
    assert rec.score_before == (480, 300) and rec.bags_before == (2, 9)
    assert rec.score == (SideScore(None, 480, None), SideScore(61, None, None))
    assert rec.winner is Side.NS


def test_extensions_unknown_tags_and_extra():
    rec = one(HEAD + '[Hand "1"] [Dealer "N"] [Bids ""]\n[x_n "12"] [x_s "hello"] [x_o "{\\"a\\": [1]}"] [x_none]\n'
              '[Mood "calm"] [Extra "{\\"a b\\": true}"]')
    assert rec.extras == {"x_n": 12, "x_s": "hello", "x_o": {"a": [1]}, "x_none": None, "Mood": "calm", "a b": True}
    assert rec.warnings == ("unknown key 'Mood' kept as an extension", "unknown key 'a b' kept as an extension")


def test_quoted_values_with_escapes():
    rec = one('[Game "a \\"b\\" c\\\\d\\ne"] [Event "x]y[z"]\n[Hand "1"] [Dealer "N"] [Bids ""]')
    assert rec.game_id == 'a "b" c\\d\ne' and rec.event == "x]y[z"


def test_a_backslash_that_starts_no_escape_is_kept_and_values_end_at_their_first_bare_quote():
    rec = one('[Game "a\\qb"] [Event "c:\\q\\tx"]\n[Hand "1"] [Dealer "N"] [Bids ""] [Round "x"] ; "y"')
    assert rec.game_id == "a\\qb" and rec.event == "c:\\q\tx" and rec.round == "x"


def test_trick_lines_with_comments_inside_after_and_across_lines():
    """Bare text (a trick line) is read up to each comment or tag: a '{...}' comment inside it
    separates like a space, ';' ends the line, a tag after it ends the text, and a comment that
    runs on over lines hides what it covers."""
    text = (HEAD + '[Hand "1"] [Dealer "N"] [Bids ""] [Play]\n'
            "E: 2C {the lead} 5C KC AC > N ; N wins\n"
            "N:3D 4D{x}5D 6D>N\n"
            "N: 2H 3H 4H 5H > W { a comment\nthat runs on }\n"
            'W: 2S 3S 4S 5S > W [x_note "last"]\n')
    rec = one(text)
    assert [(str(t.leader), t.cards, str(t.winner)) for t in rec.tricks] == [
        ("E", ("2C", "5C", "KC", "AC"), "N"),
        ("N", ("3D", "4D", "5D", "6D"), "N"),
        ("N", ("2H", "3H", "4H", "5H"), "W"),
        ("W", ("2S", "3S", "4S", "5S"), "W"),
    ]
    assert rec.extras == {"x_note": "last"}


# --- errors -------------------------------------------------------------------------------------


def test_a_tag_missing_its_bracket_loses_only_its_block():
    text = (
        '[Game "g"]\n\n'
        '[Hand "1"] [Dealer "N"] [Bids ""]\n\n'
        '[Hand "2"]\n[Dealer "E"\n[Bids "S 3, W 3, N 3, E 3"]\n\n'
        '[Hand "3"] [Dealer "S"] [Bids ""]\n'
    )
    got = items(text)
    assert [type(i).__name__ for i in got] == ["HandRecord", "LoadError", "HandRecord"]
    err = got[1]
    assert err.source_file == "t.spn" and err.source_line == 6
    assert err.message == "line 6: [Dealer] tag is missing its closing ']'"
    assert err.raw == '[Hand "2"]\n[Dealer "E"\n[Bids "S 3, W 3, N 3, E 3"]'
    assert (got[0].hand, got[2].hand) == (1, 3)


@pytest.mark.parametrize(
    "block,line,message",
    [
        ('[Hand "1"] [Dealer "N"] [Bids ""]\n[Play]\nE: 2C 1S', 5, "line 5: [Play] trick 1: '1S' is not a card"),
        ('[Hand "1"] [Dealer "N"] [Bids ""]\n[Deal "N:AK1.-.-.- - - -"]', 4, "line 4: [Deal] 'AK1' is not a list of spade ranks"),
        ('[Hand "1"] [Dealer "N"] [Bids ""]\n[Deal "N:AK.Q.J.T - -"]', 4, "line 4: [Deal] deal 'N:AK.Q.J.T - -' has 3 hands, expected 4"),
        ('[Hand "1"]\n[Dealer "X"] [Bids ""]', 4, "line 4: [Dealer] 'X' is not a seat (expected N, E, S or W)"),
        ('[Hand "1"] [Dealer "N"] [Bids "E 3, Q 4"]', 3, "line 3: [Bids] 'Q' is not a seat"),
        ('[Hand "1"] [Dealer "N"] [Bids "E 3, S"]', 3, "line 3: [Bids] 'E 3, S' must be pairs"),
        ('[Hand "1"] [Dealer "N"] [Bids "E pass"]', 3, "line 3: [Bids] E: 'pass' is not a bid"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Play]\nQ: 2C', 4, "line 4: [Play] trick 1: leader 'Q' is not a seat"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Play]\nE: 2C > X', 4, "line 4: [Play] trick 1: winner 'X' is not a seat"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Play]\n2C 3C', 4, "must start with the leader's seat and ':'"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Play]\nE: 2C 3C 4C 5C 6C', 4, "line 4: [Play] trick 1: 5 cards; a trick has at most 4"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Play]' + "\nE: 2C" * 14, 17, "line 17: [Play] more than 13 tricks"),
        ('[Hand "two"] [Dealer "N"] [Bids ""]', 3, "line 3: [Hand] 'two' is not a whole number"),
        ('[Hand "0"] [Dealer "N"] [Bids ""]', 3, "line 3: [Hand] 0 is below 1"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Taken "N five"]', 3, "line 3: [Taken] N: 'five' is not a whole number"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Score "NS 1.5"]', 3, "line 3: [Score] NS: '1.5' is not a whole number"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Score "XY 1"]', 3, "line 3: [Score] 'XY' is not a side"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [ScoreBefore "NS 1"]', 3, "line 3: [ScoreBefore] 'NS 1' must give both sides"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Winner "N"]', 3, "line 3: [Winner] 'N' is not a side"),
        ('[Hand "1"] [Dealer "N"]\n[Bids ""] [Hand "2"]', 4, "line 4: [Hand] is given twice in this block (first at line 3)"),
        ('[Hand "1"] [dealer "N"] [Bids ""]', 3, "line 3: [dealer] is not a tag (tag names are case-sensitive: did you mean [Dealer]?)"),
        ('[Hand "1"] [Dealer N] [Bids ""]', 3, 'line 3: [Dealer] value must be in double quotes'),
        ('[Hand "1"] [Bids ""] [Dealer "N', 3, "line 3: [Dealer] value has no closing '\"' (a value may not span lines)"),
        ('[Hand "1"] [Dealer "N] [Bids ""]', 3, "line 3: [Dealer] tag is missing its closing ']'"),
        ('[Hand "1"] [ "N"]', 3, "line 3: '[' is not followed by a tag name"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] { open\nstill open', 3, "line 3: comment '{' is not closed before the end of the block"),
        ('[Hand "1"] [Dealer "N"] [Bids ""]\nstray words', 4, "line 4: text outside a tag: 'stray words'"),
        ('[Dealer "N"] [Bids ""]', 3, "line 3: this hand has no [Hand] tag (required)"),
        ('[Hand "1"] [Bids ""]', 3, "line 3: this hand has no [Dealer] tag (required)"),
        ('[Hand "1"] [Dealer "N"]', 3, "line 3: this hand has no [Bids] tag (required)"),
        ('[Hand "1"] [Dealer] [Bids ""]', 3, "line 3: [Dealer] needs a value"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Play "E"]', 3, "line 3: [Play] takes no value"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Extra "[1]"]', 3, "line 3: [Extra] value must be a JSON object"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [Extra "{\\"score\\": 1}"]', 3, "key 'score' is a key of the hand"),
        ('[Hand "1"] [Dealer "N"] [Bids ""] [score "1"]', 3, "did you mean [Score]?"),
        ('[Rules "{oops"] [Hand "1"] [Dealer "N"] [Bids ""]', 3, "line 3: [Rules] '{oops' is not valid JSON"),
        ('[Hand "1"] [Dealer "N"] [Bids ""]\n[DealOrder "N AS"]', 4, "line 4: [DealOrder] orders the cards of a [Deal], and this hand has none"),
        ('[Hand "1"] [Dealer "N"] [Bids ""]\n[Deal "N:AK... - - -"]\n[DealOrder "N KS QS"]', 5,
         "line 5: [DealOrder] N's cards are not those [Deal] gives N (it only orders them)"),
        ('[Hand "1"] [Dealer "N"] [Bids ""]\n[Deal "N:AK... - - -"]\n[DealOrder "N KS AS, N AS KS"]', 5, "[DealOrder] seat N is given twice"),
        ('[Hand "1"] [Dealer "N"] [Bids ""]\n[Deal "N:AK... - - -"]\n[DealOrder "N KS 1S"]', 5, "[DealOrder] N: '1S' is not a card"),
        ('[Hand "1"] [Dealer "N"] [Bids ""]\n[Deal "N:AK... - - -"]\n[DealOrder "Q KS AS"]', 5, "[DealOrder] 'Q' is not a seat"),
    ],
)
def test_unreadable_blocks(block, line, message):
    text = HEAD + block + '\n\n[Hand "99"] [Dealer "N"] [Bids ""]\n'
    got = items(text)
    errors = [i for i in got if isinstance(i, LoadError)]
    err = errors[0]
    assert message in err.message, err.message
    assert err.source_line == line and err.message.startswith(f"line {line}: ")
    assert err.raw == block
    if "[Rules]" not in message:  # the next block still parses
        assert len(errors) == 1 and len(got) == 2 and got[1].hand == 99
    else:  # a bad [Rules] leaves the game's rules unknown, so its next hand cannot be read either
        assert len(got) == 2 and got[1].message == (
            "line 5: this hand's game cannot be told: the game-level tag [Rules] at line 3 could not be read"
        )


def test_invalid_utf8_loses_only_its_block():
    data = b'[Game "g"]\n\n[Hand "1"] [Dealer "N"] [Bids ""]\n[Event "caf\xe9"]\n\n[Hand "2"] [Dealer "E"] [Bids ""]\n'
    got = items(data)
    assert isinstance(got[0], LoadError) and isinstance(got[1], HandRecord) and got[1].hand == 2
    assert got[0].source_line == 4 and got[0].message == "line 4: invalid UTF-8 at byte 12"
    assert got[0].raw == '[Hand "1"] [Dealer "N"] [Bids ""]\n[Event "caf\ufffd"]'
    assert got[1].event is None  # the unreadable [Event] never applied


def test_an_unreadable_line_among_game_tags_loses_only_that_line():
    """A block of game-level tags with one undecodable line: that line is the load error, its tags
    are the ones named as lost (at their line), and the block's other tags still apply."""
    data = (b'[Game "g"]\n[Event "club"]\n[Rules "standard"]\n[North "caf\xe9"] [East "b"] [South "c"] [West "d"]\n\n'
            b'[Hand "1"] [Dealer "N"] [Bids ""]\n\n'
            b'[North "a"] [East "b"] [South "c"] [West "d"]\n\n[Hand "2"] [Dealer "E"] [Bids ""]\n')  # fmt: skip
    got = items(data)
    assert [type(i).__name__ for i in got] == ["LoadError", "LoadError", "HandRecord"]
    assert got[0].source_line == 4 and got[0].message == "line 4: invalid UTF-8 at byte 12"
    assert got[1].message == (
        "line 6: this hand's game cannot be told: the game-level tag [East] at line 4, [North] at line 4, "
        "[South] at line 4, [West] at line 4 could not be read"
    )
    assert (got[2].game_id, got[2].event, got[2].rules, got[2].hand) == ("g", "club", "standard", 2)


def test_hands_before_any_game_are_errors():
    err = only_error('[Hand "1"] [Dealer "N"] [Bids ""]')
    assert err.message == 'line 1: no [Game] is in force: set [Game "..."] before this hand (the game id is required)'


def test_unreadable_game_tag_makes_the_following_hands_errors_until_set_again():
    text = (
        '[Game "g1"]\n\n[Hand "1"] [Dealer "N"] [Bids ""]\n\n'
        '[Game "g2"\n[North "x"]\n\n'
        '[Hand "1"] [Dealer "E"] [Bids ""]\n\n'
        '[Game "g3"]\n\n[Hand "1"] [Dealer "S"] [Bids ""]\n\n'
        '[North "n"]\n\n[Hand "2"] [Dealer "W"] [Bids ""]\n'
    )
    got = items(text)
    assert [type(i).__name__ for i in got] == ["HandRecord", "LoadError", "LoadError", "LoadError", "HandRecord"]
    assert got[1].message == "line 5: [Game] tag is missing its closing ']'"
    assert got[2].message == (
        "line 8: this hand's game cannot be told: the game-level tag [Game] at line 5, [North] at line 5 could not be read"
    )
    assert got[3].message == "line 12: this hand's game cannot be told: the game-level tag [North] at line 5 could not be read"
    assert (got[4].game_id, got[4].hand, got[4].players) == ("g3", 2, ("n", None, None, None))


def test_unreadable_event_leaves_it_empty_with_a_warning():
    text = '[Game "g"] [Event "a"]\n\n[Event "b\n\n[Hand "1"] [Dealer "N"] [Bids ""]\n'
    got = items(text)
    assert isinstance(got[0], LoadError) and got[0].message == "line 3: [Event] value has no closing '\"' (a value may not span lines)"
    rec = got[1]
    assert rec.event == "a" and rec.warnings == ("the game-level tag [Event] at line 3 could not be read; event left empty",)


def test_empty_and_comment_only_files_yield_nothing(tmp_path):
    assert items("") == [] and items("\n\n   \n") == []
    assert items("; nothing here\n{ nor here }\n\n% nor here\n") == []
    assert items('[Event "header only"] [Game "g"]\n') == []
    empty = tmp_path / "empty.spn"
    empty.write_bytes(b"")
    assert list(spn.load(empty)) == []


def test_streams_one_block_at_a_time():
    block = [(0, b'[Hand "1"] [Dealer "N"] [Bids ""]'), (0, b"")]
    lines = itertools.chain([(1, b'[Game "g"]'), (2, b"")], itertools.cycle(block))  # endless
    first = list(itertools.islice(spn.iter_spn(lines, "endless"), 3))
    assert [r.game_id for r in first] == ["g", "g", "g"]


def test_oversized_block_is_one_error(monkeypatch):
    monkeypatch.setattr(spn, "MAX_BLOCK_BYTES", 1000)
    text = '[Game "g"]\n\n' + ("x" * 300 + "\n") * 10 + '\n[Hand "1"] [Dealer "N"] [Bids ""]\n'
    got = items(text)
    assert isinstance(got[0], LoadError) and got[0].source_line == 3 and "block is longer than" in got[0].message
    assert isinstance(got[1], HandRecord)


def test_load_reads_gzip_and_names_the_source(tmp_path):
    path = tmp_path / "night.spn.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(EXAMPLE)
    (rec,) = list(spn.load(path))
    assert rec.source_file == str(path) and rec.taken == (5, 3, 0, 5)
    (rec,) = list(spn.load(path, source="shown.spn"))
    assert rec.source_file == "shown.spn"


# --- writing ------------------------------------------------------------------------------------


def test_dump_writes_the_canonical_form():
    records = list(jsonl.load(GOLDEN / "canonical.expected.jsonl"))
    expected = (GOLDEN / "canonical.spn").read_text(encoding="utf-8")
    assert spn.dumps(records) == expected
    buf = io.StringIO()
    assert spn.dump(records, buf) == 4
    assert buf.getvalue() == expected
    assert "".join(spn.iter_dump(records)) == expected


def test_dump_then_load_gives_the_same_records():
    records = list(jsonl.load(GOLDEN / "human.expected.jsonl"))
    again = items(spn.dumps(records))
    assert len(again) == len(records) and all(same_record(a, b) for a, b in zip(records, again))


def test_dump_writes_game_level_tags_once_per_game():
    rec = one(EXAMPLE)
    text = spn.dumps([rec, HandRecord(**{**_fields(rec), "hand": 2, "dealer": Seat.E})])
    assert text.count('[Game "club-0314-t2"]') == 1 and text.count('[North "ana"]') == 1
    assert text.count("[Hand ") == 2


def _fields(rec: HandRecord) -> dict:
    return {f: getattr(rec, f) for f in rec.__dataclass_fields__}


def test_dump_escapes_values_and_odd_extension_keys():
    rec = HandRecord(game_id='a"b\\c\nd;{', hand=1, dealer=Seat.N, players=("[x]", None, "", "é"), bids=(),
                     rules="{not json", extras={"x_a-b": 1, "total": [2], "x_ok": "s"})
    text = spn.dumps([rec])
    assert '[Game "a\\"b\\\\c\\nd;{"]' in text and '[Rules "\\"{not json\\""]' in text
    assert '[Extra "{\\"x_a-b\\":1}"]' in text and '[Extra "{\\"total\\":[2]}"]' in text and '[x_ok "\\"s\\""]' in text
    assert '[North "[x]"] [East] [South ""] [West "é"]' in text
    (back,) = items(text)
    assert same_record(back, rec)


# --- the shipped sample -------------------------------------------------------------------------


def test_sample_club_night_spn_holds_exactly_the_documented_faults():
    recs = list(spn.load(ROOT / "data" / "club_night.spn"))
    assert all(isinstance(r, HandRecord) for r in recs) and len(recs) == 7
    games = group_games(recs)
    assert sorted(games) == ["cn-0314-t3", "cn-0314-t4"]
    findings = []
    for game_id, hands in games.items():
        results, winner, _ = score_game(hands)
        assert winner is None
        recorded_totals = None
        for rec, res in zip(hands, results):
            rp = replay(rec)
            findings += [(game_id, rec.hand, *f) for f in rp.findings]
            assert list(rec.taken) == rp.taken and sum(rp.taken) == 13
            for side in (Side.NS, Side.EW):
                got, want = rec.score[side], res[side]
                assert (got.points, got.bags) == (want.points, want.bags), (game_id, rec.hand, side)
                prev = recorded_totals[side] if recorded_totals else 0
                if got.total != prev + want.points:
                    findings.append((game_id, rec.hand, "SCORE_MISMATCH", side, got.total, prev + want.points))
            recorded_totals = (rec.score[0].total, rec.score[1].total)
            if any(t.winner is not None for t in rec.tricks):
                assert [t.winner for t in rec.tricks] == rp.winners
    assert findings == [
        ("cn-0314-t4", 2, "RENEGE", 2, Seat.E, "3S"),
        ("cn-0314-t4", 2, "SCORE_MISMATCH", Side.EW, 133, 123),
    ]


def test_a_hand_with_no_blank_line_before_it_is_a_hand_of_its_own():
    """FORMATS.md section 2 separates blocks by a blank line; a hand-typed file that leaves it out
    lost both hands as one error ("[Hand] is given twice").  A line starting with [Hand] now starts
    a block, taking the lines of game-level tags just before it (found by a format audit)."""
    text = (
        '[Game "m"] [North "a"] [East "b"] [South "c"] [West "d"]\n\n'
        '[Hand "1"] [Dealer "N"] [Bids "E 3, S 4, W 3, N 3"]\n'
        '[Taken "N 3 E 3 S 4 W 3"]\n'
        '[Hand "2"] [Dealer "E"] [Bids "S 3, W 4, N 3, E 3"]\n'
        '[Game "n"] [North "e"]  ; a new game, its tags given just before its first hand\n'
        '[Hand "1"] [Dealer "S"] [Bids "W 3, N 4, E 3, S 3"]\n'
    )
    got = items(text)
    assert [type(x) for x in got] == [HandRecord] * 3
    assert [(r.game_id, r.hand, str(r.dealer), r.players[Seat.N]) for r in got] == [
        ("m", 1, "N", "a"), ("m", 2, "E", "a"), ("n", 1, "S", "e")
    ]
    assert [r.source_line for r in got] == [3, 5, 6]  # where each block starts
    assert got[0].taken is not None and got[1].taken is None


def test_a_comment_of_two_paragraphs_keeps_its_hand():
    """A { ... } comment with a blank line inside (FORMATS.md section 2 gives comments no length)
    ended the block at the blank line, and the hand was lost to two errors (found by a format
    audit).  A comment that closes within a few lines, before the next [Hand], now spans it; a
    stray '{' still costs only its own block."""
    header = '[Game "m"] [North "a"] [East "b"] [South "c"] [West "d"]\n\n'
    note = '[Hand "1"] [Dealer "N"] [Bids "E 3, S 4, W 3, N 3"]\n{ TD note: first line\n\n  second paragraph }\n[Taken "N 3 E 3 S 4 W 3"]\n'
    [rec] = items(header + note)
    assert isinstance(rec, HandRecord) and rec.taken is not None and rec.source_line == 3
    stray = '[Hand "1"] [Dealer "N"] [Bids "E 3, S 4, W 3, N 3"] { oops\n\n[Hand "2"] [Dealer "E"] [Bids "S 3, W 4, N 3, E 3"] { a note }\n'
    got = items(header + stray)
    assert [type(x) for x in got] == [LoadError, HandRecord]
    assert "comment '{' is not closed" in got[0].message and got[1].hand == 2


def test_a_hand_tag_quoted_inside_a_comment_is_the_comment_s_text():
    """A director's note quoting the first entry (`{ ... [Hand "1"] [Dealer "E"] ... }`) split the
    block at the quoted [Hand] line and the hand was lost to two errors (found by a format audit)."""
    header = '[Game "m"] [North "a"] [East "b"] [South "c"] [West "d"]\n\n'
    note = ('[Hand "1"] [Dealer "N"] [Bids "E 3, S 4, W 3, N 3"]\n{ corrected; the first entry was:\n'
            '[Hand "1"] [Dealer "E"]\n}\n[Taken "N 3 E 3 S 4 W 3"]\n')  # fmt: skip
    [rec] = items(header + note)
    assert isinstance(rec, HandRecord) and rec.dealer == Seat.parse("N") and rec.taken is not None
    # a [Hand] line after the comment has closed still starts the next hand, blank line or not
    two = note + '[Hand "2"] [Dealer "E"] [Bids "S 3, W 4, N 3, E 3"]\n'
    got = items(header + two)
    assert [(type(x), getattr(x, "hand", None)) for x in got] == [(HandRecord, 1), (HandRecord, 2)]


def test_a_comment_never_closed_still_ends_at_the_next_hand_line():
    """After the change above, an unclosed '{' swallowed the [Hand] line after it and that hand was
    lost with no word (found by an audit of that change): the next hand starts there, as before."""
    header = '[Game "m"] [North "a"] [East "b"] [South "c"] [West "d"]\n\n'
    text = ('[Hand "1"] [Dealer "W"]\n[Bids "N 3, E 3, S 3, W 3"] {typo fixed later\n[Taken "N 3 E 3 S 3 W 4"]\n'
            '[Hand "2"] [Dealer "N"]\n[Bids "E 3, S 3, W 3, N 3"]\n[Taken "N 3 E 3 S 3 W 4"]\n')  # fmt: skip
    got = items(header + text)
    assert [type(x) for x in got] == [LoadError, HandRecord]
    assert "comment '{' is not closed" in got[0].message and got[1].hand == 2
