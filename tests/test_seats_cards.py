import pytest

from spadework.parsers.cards import (
    JOKER_DECK,
    NYC_DECK,
    STANDARD_DECK,
    CardError,
    format_pbn_deal,
    format_pbn_hand,
    make_deck,
    parse_card,
    parse_pbn_deal,
    parse_pbn_hand,
    rank_of,
    sort_cards,
    suit_of,
)
from spadework.parsers.seats import SEATS, Seat, Side


def test_seat_geometry():
    assert Seat.N.left is Seat.E and Seat.W.left is Seat.N
    assert Seat.N.right is Seat.W and Seat.E.right is Seat.N
    assert [s.partner for s in SEATS] == [Seat.S, Seat.W, Seat.N, Seat.E]
    assert [s.side for s in SEATS] == [Side.NS, Side.EW, Side.NS, Side.EW]
    assert Seat.S.clockwise() == (Seat.S, Seat.W, Seat.N, Seat.E)
    assert Seat.E.after(3) is Seat.N and Seat.E.after(-1) is Seat.N
    assert Seat.W.steps_to(Seat.E) == 2
    assert Side.EW.seats == (Seat.E, Seat.W) and Side.NS.other is Side.EW
    assert str(Seat.W) == "W" and str(Side.NS) == "NS"


@pytest.mark.parametrize("text,seat", [("N", Seat.N), ("e", Seat.E), (" S ", Seat.S), ("west", Seat.W)])
def test_parse_seat(text, seat):
    assert Seat.parse(text) is seat


@pytest.mark.parametrize("text", ["X", "", "NE", 1, None])
def test_parse_seat_rejects(text):
    with pytest.raises(ValueError, match="is not a seat"):
        Seat.parse(text)


@pytest.mark.parametrize(
    "text,code",
    [("AS", "AS"), ("SA", "AS"), ("10s", "TS"), ("s10", "TS"), ("A♠", "AS"), ("♥q", "QH"), ("td", "TD"),
     ("2c", "2C"), ("bj", "BJ"), ("LJ", "LJ"), (" kd ", "KD")],
)
def test_parse_card_forms(text, code):
    assert parse_card(text) == code


@pytest.mark.parametrize("text", ["1S", "AX", "", "ASS", "11H", "J", 12, None, "JJ"])
def test_parse_card_rejects(text):
    with pytest.raises(CardError, match="is not a card"):
        parse_card(text)


def test_trickster_joker_aliases_win_over_jack_of_hearts():
    assert parse_card("JH", aliases={"JH": "BJ", "JL": "LJ"}) == "BJ"
    assert parse_card("HJ", aliases={"JH": "BJ", "JL": "LJ"}) == "JH"
    assert parse_card("JH") == "JH"


def test_suit_rank_and_sort():
    assert suit_of("TD") == "D" and suit_of("BJ") == "J" and rank_of("TD") == "T"
    assert sort_cards(["2C", "AS", "BJ", "KH", "3S"]) == ["BJ", "AS", "3S", "KH", "2C"]


def test_decks():
    assert len(STANDARD_DECK) == 52 and len(JOKER_DECK) == 52 and len(NYC_DECK) == 52
    assert "2C" not in JOKER_DECK and "2H" not in NYC_DECK and "BJ" in NYC_DECK and "BJ" not in STANDARD_DECK
    assert NYC_DECK.is_spade("2D") and not JOKER_DECK.is_spade("2D") and JOKER_DECK.is_spade("LJ")
    assert NYC_DECK.suit("2D") == "S" and STANDARD_DECK.suit("2D") == "D"


@pytest.mark.parametrize(
    "deck,cards,winner",
    [
        (STANDARD_DECK, ["2C", "5C", "KC", "AC"], 3),
        (STANDARD_DECK, ["KH", "2S", "AH", "3S"], 3),  # highest spade wins
        (STANDARD_DECK, ["KH", "AD", "QH", "AC"], 0),  # off-suit aces never win
        (JOKER_DECK, ["AS", "2S", "KS", "LJ"], 3),  # barmore: LJ > 2S > AS
        (JOKER_DECK, ["AS", "2S", "KS", "3S"], 1),
        (NYC_DECK, ["AS", "2D", "2S", "KS"], 1),  # nyc: 2D > 2S > AS
        (NYC_DECK, ["3D", "2D", "AD", "KD"], 1),  # 2D is a trump on a diamond lead
        (NYC_DECK, ["BJ", "LJ", "2D", "2S"], 0),
    ],
)
def test_trick_winner(deck, cards, winner):
    assert deck.winner_index(cards) == winner


def test_custom_deck():
    deck = make_deck("x", removed=["2c", "2♥"], extra=["BJ", "LJ"])
    assert deck.trump_order[:3] == ("BJ", "LJ", "AS") and len(deck) == 52


def test_pbn_hands_and_deals():
    assert parse_pbn_hand("AKQ2.JT3.984.A52") == ("AS", "KS", "QS", "2S", "JH", "TH", "3H", "9D", "8D", "4D", "AC", "5C", "2C")
    assert parse_pbn_hand(".Q975.AJ8732.5.HL")[-2:] == ("BJ", "LJ")
    assert parse_pbn_hand("A10.-.-.-".replace("-", "")) == ("AS", "TS")
    assert format_pbn_hand(["AS", "TS", "BJ", "2C"]) == "AT...2.B"
    deal = parse_pbn_deal("E:AKQ2.JT3.984.A52 - - -")
    assert deal[Seat.E][0] == "AS" and deal[Seat.N] is None
    assert format_pbn_deal(deal, Seat.E) == "E:AKQ2.JT3.984.A52 - - -"
    with pytest.raises(CardError):
        parse_pbn_hand("AKX.JT3.984.A52")
    with pytest.raises(ValueError, match="4 hands|expected 4"):
        parse_pbn_deal("N:AKQ2.JT3.984.A52")
