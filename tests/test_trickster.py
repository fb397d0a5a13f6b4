"""Trickster PTN importer: the real samples of ../shared/corpus/trickster and our own fixtures."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from spadework.parsers import jsonl, trickster
from spadework.parsers.cards import JOKER_DECK, NYC_DECK, STANDARD_DECK, Deck
from spadework.parsers.model import HandRecord, LoadError
from spadework.parsers.seats import Seat, Side
from spades_oracle import illegal_plays

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "trickster"
ISSUE335 = CORPUS / "trickster" / "issue335_spades.ptn"
ISSUE231 = CORPUS / "trickster" / "issue231_spades_TRUNCATED.pbn"

needs_corpus = pytest.mark.skipif(
    not (CORPUS / "trickster").is_dir(),
    reason=f"shared corpus not found at {CORPUS} (tests read the real Trickster logs from ../shared/corpus)",
)


def split(items) -> tuple[list[HandRecord], list[LoadError]]:
    items = list(items)
    return [i for i in items if isinstance(i, HandRecord)], [i for i in items if isinstance(i, LoadError)]


def winners(rec: HandRecord, deck: Deck) -> list[Seat]:
    return [t.seats()[deck.winner_index(t.cards)] for t in rec.tricks if len(t.cards) == 4]


def taken_by_side(rec: HandRecord, deck: Deck) -> dict[Side, int]:
    out = {Side.NS: 0, Side.EW: 0}
    for w in winners(rec, deck):
        out[w.side] += 1
    return out




# --- the real sample of issue 335 ----------------------------------------------------------------


@pytest.fixture(scope="module")
def issue335() -> HandRecord:
    if not ISSUE335.exists():
        pytest.skip(f"shared corpus file {ISSUE335} not found")
    records, errors = split(trickster.load(ISSUE335))
    assert errors == []
    assert len(records) == 1
    return records[0]


@needs_corpus
def test_issue335_bids_from_east_clockwise(issue335):
    assert [(str(b.seat), b.value, b.nil, b.blind) for b in issue335.bids] == [
        ("E", 1, False, False),
        ("S", 2, False, False),
        ("W", 4, False, False),
        ("N", 6, False, False),
    ]
    contract = {side: sum(issue335.bid_of(s).tricks for s in side.seats) for side in Side}
    assert contract == {Side.NS: 8, Side.EW: 5}


@needs_corpus
def test_issue335_play_order_and_tricks_taken(issue335):
    assert issue335.is_complete_play()
    assert "".join(str(t.leader) for t in issue335.tricks) == "EENWWNNESNWNW"
    # trick 3: W, void in clubs, trumps the club lead with the deuce of diamonds (a spade in nyc)
    assert issue335.tricks[2].cards == ("KC", "4C", "JC", "2D")
    assert winners(issue335, NYC_DECK)[2] == Seat.W
    # NS bid 8 and took 7 (set); EW bid 5 and took 6
    assert taken_by_side(issue335, NYC_DECK) == {Side.NS: 7, Side.EW: 6}


@needs_corpus
def test_issue335_has_no_illegal_play(issue335):
    assert illegal_plays(issue335, NYC_DECK) == []


@needs_corpus
def test_issue335_deal_with_jokers(issue335):
    assert [len(h) for h in issue335.deal] == [13, 13, 13, 13]
    assert {"BJ", "LJ"} <= set(issue335.deal[Seat.W])
    dealt = [c for h in issue335.deal for c in h]
    assert sorted(dealt) == sorted(NYC_DECK.cards)


@needs_corpus
def test_issue335_rules_mapping_and_warnings(issue335):
    assert issue335.rules == {
        "preset": "nyc", "min_side_bid": 4, "ten_for_two_hundred": True, "nil": False,
        "blind_bids": {"values": [6, 7, 8, 9, 10, 11, 12, 13], "behind_by": 250, "partner_bids": True},
    }
    text = " ".join(issue335.warnings)
    for option in ("blindNonNilBids", "noWatching", "firstHandBidsItself"):
        assert option in text
    assert "blind 6+ if losing by 250" in text
    # options that were mapped are not reported
    for option in ("variation", "failBidScoring", "minBid", "tenForTwoHundred", "nilOrZero"):
        assert f"Option {option}" not in text
    assert issue335.extras["x_trickster"]["GameOptionsJson"]["blindNonNilBids"] == 4


@needs_corpus
def test_issue335_totals_players_and_identity(issue335):
    assert issue335.score[Side.NS].total == 162
    assert issue335.score[Side.EW].total == 527
    assert issue335.score[Side.NS].points is None
    assert issue335.players == ("Adele (Auto)", "Petra (Auto)", "Sam (1000001)", "Waymon (Auto)")
    assert issue335.dealer == Seat.N
    assert issue335.game_id == "issue335_spades-20250724T053037"
    assert issue335.hand == 1
    assert issue335.date == "2025-07-24"
    assert issue335.source_line == 2


@needs_corpus
def test_issue335_survives_jsonl():
    rec = next(trickster.load(ISSUE335))
    back = next(jsonl.loads(jsonl.dumps_record(rec)))
    strip = dict(source_file=None, source_line=None, warnings=())
    assert dataclasses.replace(back, **strip) == dataclasses.replace(rec, **strip)


# --- the truncated sample of issue 231 ------------------------------------------------------------


@needs_corpus
def test_issue231_truncated_gives_every_reason():
    records, errors = split(trickster.load(ISSUE231))
    assert records == []
    by_line = {e.source_line: e.message for e in errors}
    assert sorted(by_line) == [5, 7, 14]
    assert "[LocalDateTime] tag is missing its closing ']'" in by_line[5]
    assert "[GameOptionsJson]" in by_line[7] and "unescaped" in by_line[7]
    assert "ends inside the [Deal] tag" in by_line[14]
    assert "3 of 4 hands" in by_line[14] and "no [Auction] or [Play]" in by_line[14]
    assert all(e.source_file == str(ISSUE231) and e.raw for e in errors)


@needs_corpus
def test_truncated_file_does_not_stop_a_good_one():
    items = [i for path in (ISSUE231, ISSUE335) for i in trickster.load(path)]
    records, errors = split(items)
    assert len(errors) == 3 and len(records) == 1
    assert records[0].game_id.startswith("issue335_spades")


def test_issue231_options_mapping():
    """The options of issue 231, written out here: Joker-Joker-Ace to 350/−200, no bags, spades any time."""
    options = {
        "gameOverScore": 350, "variation": 1, "failBidScoring": 1, "tenBagsPenalty": False, "leadSpades": 2,
        "mercyRule": 1, "minBid": 4, "tenForTwoHundred": True, "nilOrZero": 1,
    }
    event = "Trickster Cards: Join Spades - Team 2v2 Joker-Joker-Ace to 350/\u2212200, no Nil, no bags"
    mapped = trickster.map_options(options, event)
    assert mapped.warnings == ()
    assert mapped.deck.trump_order[:4] == ("BJ", "LJ", "AS", "KS")
    assert mapped.deck.trump_order[-1] == "2S"
    assert not mapped.deck.is_spade("2D")
    assert "2C" not in mapped.deck and "2H" not in mapped.deck and len(mapped.deck) == 52
    assert mapped.rules == {
        "preset": "standard",
        "removed_cards": ["2H", "2C"],
        "extra_cards": ["BJ", "LJ"],
        "trump_order": list(mapped.deck.trump_order),
        "target": 350,
        "bag_limit": 0,
        "spades_lead_any_time": True,
        "losing_score": -200,
        "min_side_bid": 4,
        "ten_for_two_hundred": True,
        "nil": False,
    }


def test_option_mapping_edge_cases():
    # a variation no sample confirms is read on a guess, and said so
    m = trickster.map_options({"variation": 2})
    assert m.deck is JOKER_DECK and m.rules["trump_order"][:3] == ["BJ", "LJ", "2S"]
    assert len(m.warnings) == 1 and "guess" in m.warnings[0]
    # ... unless the Event text names it
    assert trickster.map_options({"variation": 2}, "2v2 Joker-Joker-Deuce-Ace to 500").warnings == ()
    # an unknown variation falls back to the Event text, then to the standard deck
    m = trickster.map_options({"variation": 9}, "Joker-Joker-Deuce-Deuce")
    assert m.deck is NYC_DECK and "variation 9" in m.warnings[0]
    m = trickster.map_options({"variation": 9})
    assert m.deck is STANDARD_DECK and m.rules == {"preset": "standard"} and "not known" in m.warnings[0]
    # a variation disagreeing with the Event text is reported
    assert "disagrees" in trickster.map_options({"variation": 3}, "Joker-Joker-Ace to 300").warnings[0]
    # mercy rule without a losing score in the Event text; values we do not know
    m = trickster.map_options({"mercyRule": True, "leadSpades": 1, "failBidScoring": 2, "someOption": "x"})
    assert m.rules == {"preset": "standard"}
    assert [w.split()[1] for w in m.warnings] == ["mercyRule", "leadSpades", "failBidScoring", "someOption"]
    # options switched off map to nothing and warn nothing
    m = trickster.map_options({"mercyRule": 0, "noWatching": False, "tenBagsPenalty": True, "minBid": 0, "nilOrZero": 0})
    assert m.rules == {"preset": "standard"} and m.warnings == ()
    assert trickster.map_options(None).rules == {"preset": "standard"}


# --- our own fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_games() -> list[HandRecord]:
    records, errors = split(trickster.load(FIXTURES / "two_games.ptn"))
    assert errors == []
    return records


def test_several_hands_in_one_file(two_games):
    assert [(r.game_id, r.hand, str(r.dealer)) for r in two_games] == [
        ("two_games-20240301T201500", 1, "S"),
        ("two_games-20240302T180005", 1, "W"),
        ("two_games-20240302T180005", 2, "N"),
    ]
    assert [r.source_line for r in two_games] == [4, 35, 61]
    assert two_games[1].players == ("Nadia", "Eli (Auto)", "Sol (1234)", "Wren (Auto)")


def test_void_seat_trumps_with_2d_then_jokers_lead(two_games):
    rec = two_games[0]
    assert rec.rules == {"preset": "nyc", "min_side_bid": 4, "ten_for_two_hundred": True}
    assert rec.tricks[0].leader == Seat.W and rec.tricks[0].cards == ("KC", "3C", "2D", "4C")
    assert winners(rec, NYC_DECK)[:3] == [Seat.E, Seat.E, Seat.E]
    assert rec.tricks[1].leader == Seat.E and rec.tricks[1].cards[0] == "BJ"
    assert rec.tricks[2].leader == Seat.E and rec.tricks[2].cards[0] == "LJ"
    assert "".join(str(t.leader) for t in rec.tricks) == "WEEENSNWEEEEE"
    assert taken_by_side(rec, NYC_DECK) == {Side.NS: 3, Side.EW: 10}
    assert illegal_plays(rec, NYC_DECK) == []
    assert any("customThing" in w for w in rec.warnings)
    assert (rec.score[Side.NS].total, rec.score[Side.EW].total) == (-40, 91)


def test_joker_joker_ace_deck_decides_the_play_order(two_games):
    first, second = two_games[1], two_games[2]
    deck = trickster.map_options({"variation": 1}).deck
    # 2D is a plain diamond here: S's KD wins trick 1 (under nyc E's 2D would, and E would lead trick 2)
    assert first.tricks[0].cards == ("5D", "2D", "KD", "3D")
    assert first.tricks[1].leader == Seat.S
    # trick 2: W, void in hearts, trumps S's AH with the lowest spade
    assert first.tricks[1].cards[:2] == ("AH", "2S") and winners(first, deck)[1] == Seat.W
    assert "".join(str(t.leader) for t in first.tricks) == "NSWWEWNWESNSS"
    assert "".join(str(t.leader) for t in second.tricks) == "EEWWSNSESNESS"
    for rec in (first, second):
        assert illegal_plays(rec, deck) == []
        assert rec.rules["losing_score"] == -200 and rec.rules["target"] == 350 and rec.rules["bag_limit"] == 0
    assert taken_by_side(second, deck) == {Side.NS: 8, Side.EW: 5}


def test_bad_hands_are_reported_and_the_next_one_loads():
    records, errors = split(trickster.load(FIXTURES / "bad_then_good.ptn"))
    assert [(e.source_line, e.message) for e in errors] == [
        (7, "bid 'x' is not a bid (a number of tricks, nil, bn or b<number>, Blind Nil, Blind <number>)"),
        (10, "trick 2: 'CX' is not a card"),
        (12, "[Event] tag is missing its closing ']'"),
    ]
    assert len(records) == 1
    rec = records[0]
    assert rec.rules == {"preset": "standard"} and rec.score is None and rec.warnings == ()
    assert "".join(str(t.leader) for t in rec.tricks) == "SEESSEESSEENS"
    assert illegal_plays(rec, STANDARD_DECK) == []
    assert "x_trickster" in rec.extras and "GameOptionsJson" not in rec.extras["x_trickster"]


def test_a_hand_that_cannot_be_read_keeps_its_number_so_the_gap_is_named():
    """One bad card in hand 1 of the second game renumbered its hand 2 as hand 1: in a longer game the
    checker then found a dealer out of rotation and wrong totals on good hands, and no gap (found by
    an importer audit).  The bad hand keeps its place, so the next is hand 2 (and a gap inside a game
    is the checker's HAND_MISSING, tests/test_record_gaps.py)."""
    text = (FIXTURES / "two_games.ptn").read_text(encoding="utf-8")
    bad = text.replace("HK H7 HA S2", "HK H7 HA X2", 1)
    assert bad != text
    records, errors = split(trickster.loads(bad, "two_games.ptn"))
    assert [(e.source_line, e.message) for e in errors] == [(48, "trick 2: 'X2' is not a card")]
    assert [(r.game_id, r.hand) for r in records] == [
        ("two_games-20240301T201500", 1),
        ("two_games-20240302T180005", 2),
    ]


@needs_corpus
def test_a_comment_line_inside_a_hand_is_only_a_comment():
    """A ``%`` line between a hand's tags split the hand in two: a header that could not be read and
    a hand without its rules or players (PBN's ``%`` lines are comments wherever they stand)."""
    text = ISSUE335.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    at = next(i for i, t in enumerate(lines) if t.startswith("[Dealer"))
    commented = "".join(lines[:at] + ["% exported hand 12 of the game\n"] + lines[at:])
    (want,), _ = split(trickster.loads(text, "issue335_spades.ptn"))
    (got,), errors = split(trickster.loads(commented, "issue335_spades.ptn"))
    assert errors == []
    assert (got.rules, got.players, got.bids, got.tricks, got.score) == (want.rules, want.players, want.bids, want.tricks, want.score)


@pytest.mark.parametrize(
    "auction, bids",
    [
        ("3 Blind Nil 4 2", [(3, False, False), (0, True, True), (4, False, False), (2, False, False)]),
        ("Blind 6 2 blind nil 2", [(6, False, True), (2, False, False), (0, True, True), (2, False, False)]),
    ],
)
def test_blind_bids_in_the_sites_own_words(auction, bids):
    """The site writes a blind bid as two words (``Blind Nil``, ``Blind 6``); the whole hand was
    rejected ("bid 'Blind' is not a bid")."""
    text = HEAD + '[Dealer "N"]\n[Auction "E"]\n' + auction + "\n"
    (rec,), errors = split(trickster.loads(text))
    assert errors == []
    assert [(b.value, b.nil, b.blind) for b in rec.bids] == bids
    assert [str(b.seat) for b in rec.bids] == ["E", "S", "W", "N"]


# --- small in-memory cases ------------------------------------------------------------------------------

HEAD = '[Event "t"]\n[UTCDate "2024.01.02"]\n[UTCTime "03:04:05"]\n'


def test_missing_dealer_taken_from_the_deal_and_partial_last_trick():
    text = HEAD + '[Auction "E"]\n1 2 3 4\n[Play "E"]\nCA C3 C5 C7\nC4 -\n'
    records, errors = split(trickster.loads(text))
    assert records == [] and [e.message for e in errors] == ["no [Dealer] tag and no [Deal] to take the dealer from"]
    deal = "N:QJ5.KQJT85.Q86.3 AT87642.6.732..BL K3.943.J5.AJT964 9.A7.AKT94.KQ875"
    records, errors = split(trickster.loads(text.replace("[Auction", f'[Deal "{deal}"]\n[Auction')))
    assert errors == []
    rec = records[0]
    assert rec.dealer == Seat.N and "first seat of the [Deal]" in rec.warnings[0]
    # columns E S W N; trick 1 won by E's ace; trick 2 unfinished: only its leader E has played
    assert rec.tricks[1].leader == Seat.E and rec.tricks[1].cards == ("4C",)
    assert rec.game_id == "<string>-20240102T030405"


def test_in_memory_errors():
    def errors_of(text: str) -> list[str]:
        records, errors = split(trickster.loads(text, source="x.ptn"))
        assert records == []
        return [f"{e.source_line}: {e.message}" for e in errors]

    base = HEAD + '[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n[Play "E"]\n'
    assert errors_of(base + "CA C3 C5 C7 C9\n") == ["8: trick 1 has 5 cards; a trick has at most 4"]
    assert errors_of(base + "CA C3 -\nC4 C6 C8 CT\n") == ["8: trick 1 has only 2 cards but more tricks follow"]
    assert errors_of(base + "CA - C5 C7\n") == ["8: trick 1: W has a card but S, who plays before W, has none"]
    assert errors_of(HEAD + '[GameCode "Euchre"]\n[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n') == [
        "4: [GameCode] is 'Euchre': not a Spades hand"
    ]
    assert errors_of(HEAD + '[Dealer "N"]\n[Play "E"]\nCA C3 C5 C7\n') == ["1: no [Auction] tag: the hand's bids are missing"]
    assert errors_of(HEAD + '[Dealer "X"]\n[Auction "E"]\n1 2 3 4\n') == [
        "4: [Dealer] 'X' is not a seat (expected N, E, S or W)"
    ]
    assert errors_of(HEAD + '[GameOptionsJson "{nope}"]\n[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n')[0].startswith(
        "4: [GameOptionsJson] is not valid JSON"
    )
    # a value missing its closing quote: "cut off" only where the file ends
    assert errors_of('[Event "t]\n[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n') == [
        "1: [Event] value is missing its closing '\"]'"
    ]
    assert errors_of('[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n[Play "E') == [
        "4: the file ends inside the [Play] tag (cut off: no closing '\"]')"
    ]
    assert errors_of('1 2 3 4\n[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n') == ["1: line '1 2 3 4' is not inside any tag"]
    records, errors = split(trickster.loads(b'[Event "caf\xe9"]\n[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n'))
    assert records == [] and errors[0].source_line == 1 and "invalid UTF-8" in errors[0].message


def test_game_options_nested_too_deep_are_one_load_error_and_big_numbers_stay_whole():
    """The options are kept in x_trickster: 300 levels of nesting crashed the loader (and with it the
    whole run) instead of rejecting the hand; a number beyond 64 bits became a float."""
    deep = '{\\"foo\\":' + "[" * 300 + "]" * 300 + "}"
    records, errors = split(trickster.loads(HEAD + f'[GameOptionsJson "{deep}"]\n[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n'))
    assert records == []
    assert [(e.source_line, e.message) for e in errors] == [
        (4, "[GameOptionsJson] cannot be stored (nested more than 254 levels deep)")
    ]
    big = 123456789012345678901234567890
    text = HEAD + f'[GameOptionsJson "{{\\"foo\\":{big}}}"]\n[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n'
    (rec,) = split(trickster.loads(text))[0]
    assert rec.extras["x_trickster"]["GameOptionsJson"] == {"foo": big}


def test_bid_tokens_and_zero_bid_warning():
    text = HEAD + '[GameOptionsJson "{\\"nilOrZero\\":1}"]\n[Dealer "N"]\n[Auction "E"]\n0 b6\n- nil\n'
    rec = next(trickster.loads(text))
    assert [(str(b.seat), b.value, b.nil, b.blind) for b in rec.bids] == [
        ("E", 0, True, False),
        ("S", 6, False, True),
        ("N", 0, True, False),
    ]
    assert rec.rules == {"preset": "standard", "nil": False}
    assert sum("zero bid under nilOrZero 1" in w for w in rec.warnings) == 2
    rec = next(trickster.loads(HEAD + '[Dealer "N"]\n[Auction "E"]\nbn 3 4 5\n[Hand "4"]\n[Note "x"]\nsome text\n'))
    assert rec.bids[0].nil and rec.bids[0].blind and rec.hand == 4
    assert rec.warnings == ("Line 9 ('some text') under [Note] is not read by this importer.",)


def test_game_scores_forms():
    base = HEAD + '[Dealer "N"]\n[Auction "E"]\n1 2 3 4\n'
    rec = next(trickster.loads(base + '[GameScores "N:60 \u221240"]\n'))
    assert (rec.score[Side.NS].total, rec.score[Side.EW].total) == (60, -40)
    rec = next(trickster.loads(base + '[GameScores "S:10 20 30 20"]\n'))
    assert rec.score[Side.NS].total is None and rec.score[Side.EW].total == 20
    assert any("partners N and S different totals" in w for w in rec.warnings)
    err = next(trickster.loads(base + '[GameScores "S:1 2 3"]\n'))
    assert isinstance(err, LoadError) and "has 3 totals" in err.message


def test_looks_like():
    assert trickster.looks_like(b"% PTN ----\n[Event \"x\"]")
    assert trickster.looks_like(b'[Event "x"]\n[GameOptionsJson "{}"]\n')
    assert not trickster.looks_like(b'{"game_id": "g", "hand": 1}\n')
    assert not trickster.looks_like(b"[Event \"club\"]\n[Game \"g\"]\n[Deal \"N:...\"]\n")


@pytest.mark.parametrize("variation, card", [(0, "JH"), (1, "BJ"), (3, "BJ")])
def test_jh_is_the_big_joker_only_in_a_deck_that_has_jokers(variation, card):
    """In a Classic game (no jokers) `JH` was read as the big joker and flagged CARD_NOT_HELD; there it
    can only be the jack of hearts written rank first (found by a format audit)."""
    deal = "N:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432"
    opts = '{\\"variation\\":' + str(variation) + "}"
    text = (HEAD + f'[GameOptionsJson "{opts}"]\n[Dealer "W"]\n[Deal "{deal}"]\n[Auction "N"]\n13 1 1 1\n'
            '[Play "N"]\nSA JH D2 C2\n')  # fmt: skip
    records, errors = split(trickster.loads(text))
    assert errors == [] and records[0].tricks[0].cards == ("AS", card, "2D", "2C")
