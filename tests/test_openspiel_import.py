"""OpenSpiel ``spades`` history importer: the shared corpus and our own fixtures."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from spadework.parsers import jsonl, openspiel
from spadework.parsers.cards import STANDARD_CARDS, STANDARD_DECK
from spadework.parsers.model import HandRecord, LoadError, RecordError
from spadework.parsers.seats import Seat, Side
from spades_oracle import illegal_plays as oracle_illegal_plays

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "openspiel"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "openspiel"

needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(),
    reason=f"shared corpus not found at {CORPUS} (tests read the real OpenSpiel episodes from ../shared/corpus)",
)


def split(items) -> tuple[list[HandRecord], list[LoadError]]:
    items = list(items)
    return [i for i in items if isinstance(i, HandRecord)], [i for i in items if isinstance(i, LoadError)]


def taken(rec: HandRecord) -> list[int]:
    out = [0, 0, 0, 0]
    for t in rec.tricks:
        if len(t.cards) == 4:
            out[t.seats()[STANDARD_DECK.winner_index(t.cards)]] += 1
    return out


def illegal_plays(rec: HandRecord) -> list[str]:
    """The independent replay of tests.spades_oracle with the standard deck (spades broken rule included)."""
    return oracle_illegal_plays(rec, STANDARD_DECK)


# --- the shared corpus -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def episodes() -> list[HandRecord]:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    records, errors = split(openspiel.load(CORPUS / "episodes.jsonl"))
    assert errors == []
    return records


@needs_corpus
def test_corpus_loads_500_plus_50_hands_without_errors(episodes):
    histories, errors = split(openspiel.load(CORPUS / "histories.txt"))
    assert errors == []
    assert len(episodes) == 500 and len(histories) == 50
    ids = {r.game_id for r in episodes + histories}
    assert len(ids) == 550
    assert episodes[0].game_id == "episodes-0" and histories[-1].game_id == "histories-49"
    for rec in episodes + histories:
        assert [len(h) for h in rec.deal] == [13, 13, 13, 13]
        assert sorted(c for h in rec.deal for c in h) == sorted(STANDARD_CARDS)
        assert rec.is_complete_play()
        assert [b.seat for b in rec.bids] == [Seat.N, Seat.E, Seat.S, Seat.W]
        assert rec.dealer == Seat.W and rec.hand == 1 and rec.rules == "openspiel"
        assert rec.tricks[0].leader == Seat.N
        assert sum(taken(rec)) == 13


@needs_corpus
def test_corpus_histories_are_the_first_50_episodes(episodes):
    histories, _ = split(openspiel.load(CORPUS / "histories.txt"))
    for h, e in zip(histories, episodes[:50]):
        assert (h.deal, h.bids, h.tricks) == (e.deal, e.bids, e.tricks)
        assert h.score is None and h.score_before is None and h.bags_before is None


@needs_corpus
def test_corpus_scores_before_bags_and_points(episodes):
    by_id = {r.game_id: r for r in episodes}
    first = by_id["episodes-0"]
    assert first.score_before == (0, 0) and first.bags_before == (0, 0)
    assert (first.score[Side.NS].points, first.score[Side.EW].points) == (-80, 54)
    assert first.score[Side.NS].total is None
    # a negative running score: -298 is -300 plus 2 bags (OpenSpiel's C++ % would read -8)
    assert by_id["episodes-202"].score_before == (-298, 76)
    assert by_id["episodes-202"].bags_before == (2, 6)
    raw = {}
    with open(CORPUS / "episodes.jsonl") as f:
        for line in f:
            obj = json.loads(line)
            raw[f"episodes-{obj['episode']}"] = obj
    for rec in episodes:
        obj = raw[rec.game_id]
        assert rec.score_before == tuple(obj["start_scores"])
        assert all(0 <= b <= 9 for b in rec.bags_before)
        assert rec.bags_before == tuple(s % 10 for s in obj["start_scores"])
        assert (rec.score[Side.NS].points, rec.score[Side.EW].points) == (obj["returns"][0], obj["returns"][1])
        assert rec.warnings == ()


@needs_corpus
def test_corpus_nils_and_no_illegal_play(episodes):
    nils = [r for r in episodes if any(b.nil for b in r.bids)]
    assert len(nils) == 123
    assert all(not b.blind for r in episodes for b in r.bids)
    # OpenSpiel's bots play legally under our rules too (corpus README)
    assert [(r.game_id, f) for r in episodes for f in illegal_plays(r)] == []


@needs_corpus
def test_corpus_trick_winners_agree_with_pyspiel(episodes):
    pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is not installed")
    game = pyspiel.load_game("spades")
    with open(CORPUS / "episodes.jsonl") as f:
        raw = [json.loads(line) for line in f][:40]
    for obj, rec in zip(raw, episodes):
        state = game.new_initial_state()
        for a in obj["history"]:
            state.apply_action(a)
        text = str(state)
        row = text.split("Tricks taken:")[1].split("\n")[3]
        assert [int(x) for x in row.split()] == taken(rec), rec.game_id


# --- our fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def edge() -> dict[int, HandRecord]:
    records, errors = split(openspiel.load(FIXTURES / "edge_cases.jsonl"))
    assert errors == []
    return {int(r.game_id.rsplit("-", 1)[1]): r for r in records}


def test_nil_bids(edge):
    rec = edge[0]
    assert [(str(b.seat), b.value, b.nil) for b in rec.bids] == [("N", 3, False), ("E", 4, False), ("S", 0, True), ("W", 3, False)]
    assert rec.score_before == (127, 88) and rec.bags_before == (7, 8)
    assert (rec.score[Side.NS].points, rec.score[Side.EW].points) == (-165, -70)
    assert illegal_plays(rec) == []
    double = edge[3]
    assert [b.nil for b in double.bids] == [True, False, True, False]
    assert (double.score[Side.NS].points, double.score[Side.EW].points) == (-194, -90)


def test_illegal_histories_load_as_written(edge):
    # a renege that OpenSpiel's apply_action accepted: the importer keeps it for the checker
    assert illegal_plays(edge[1]) == ["trick 1: E reneged with 2D"]
    # N leads his top spade to trick 1 while holding other suits (OpenSpiel's legal actions never offer it)
    findings = illegal_plays(edge[2])
    assert findings == ["trick 1: N led spade QS before spades were broken"]
    assert edge[2].score_before == (-298, 76) and edge[2].bags_before == (2, 6)


def test_fixture_histories_are_accepted_by_pyspiel():
    pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is not installed")
    game = pyspiel.load_game("spades")
    with open(FIXTURES / "edge_cases.jsonl") as f:
        for line in f:
            obj = json.loads(line)
            state = game.new_initial_state()
            state.set_current_scores(obj["start_scores"])
            for a in obj["history"]:
                state.apply_action(a)  # raises if OpenSpiel refused the action
            assert state.is_terminal()
            assert state.returns() == obj["returns"]


def test_unreadable_lines_are_reported_and_later_lines_load():
    records, errors = split(openspiel.load(FIXTURES / "bad_lines.jsonl"))
    got = [(e.source_line, e.message) for e in errors]
    assert [n for n, _ in got] == [1, 2, 3, 4, 5, 6, 8]
    messages = dict(got)
    assert messages[1].startswith("not valid JSON")
    assert messages[2] == "history has 55 actions; a hand has 52 deal actions, 4 bids and up to 52 card plays (56 to 108)"
    assert messages[3] == "action 54 (E's bid): 70 is not a bid (52..65)"
    assert messages[4] == "action 81 (card play 25): 52 is not a card (0..51)"
    assert messages[5] == "action 6 (deal): AH (action 38) is dealt twice (first as action 5)"
    assert messages[6] == "missing required key 'history'"
    assert messages[8] == "episode 16 appears twice in this file (first on line 7)"
    assert all(e.raw for e in errors)
    assert [(r.game_id, r.source_line) for r in records] == [("bad_lines-16", 7)]


def test_bare_histories_file():
    records, errors = split(openspiel.load(FIXTURES / "histories.txt"))
    assert [(r.game_id, r.source_line) for r in records] == [("histories-0", 1), ("histories-1", 3)]
    assert [(e.source_line, e.message) for e in errors] == [(4, "'x' is not an action (a whole number)")]
    assert records[1].players == ("openspiel-N", "openspiel-E", "openspiel-S", "openspiel-W")


def test_card_numbering():
    assert [openspiel.card_of_action(a) for a in (0, 8, 12, 13, 26, 39, 51)] == ["2C", "TC", "AC", "2D", "2H", "2S", "AS"]
    assert all(openspiel.action_of_card(openspiel.card_of_action(a)) == a for a in range(52))
    with pytest.raises(ValueError):
        openspiel.card_of_action(52)


def test_record_from_history_details():
    deal = list(range(52))
    bids = [52 + 3, 52 + 13, 52 + 0, 52 + 13]  # E and W bid 26 together: OpenSpiel refuses it, we load it
    plays = [0, 1, 2, 3, 51]  # N E S W play 2C 3C 4C 5C: W wins and leads AS (dealt to W) to an unfinished trick 2
    rec = openspiel.record_from_history(deal + bids + plays, "g", returns=[10, 5.0, 10, 7], start_scores=[-5, 19])
    assert rec.deal[Seat.N][:2] == ("2C", "6C") and rec.deal[Seat.E][0] == "3C"
    assert [b.value for b in rec.bids] == [3, 13, 0, 13] and rec.bids[2].nil
    assert rec.tricks[0].cards == ("2C", "3C", "4C", "5C")
    assert rec.tricks[1].leader == Seat.W and rec.tricks[1].cards == ("AS",)
    assert rec.score[Side.NS].points == 10 and rec.score[Side.EW].points is None
    assert rec.warnings == ("OpenSpiel's returns for partners E and W differ (5 and 7); no EW points are recorded.",)
    assert rec.bags_before == (5, 9)
    with pytest.raises(RecordError, match="not a whole number"):
        openspiel.record_from_history(deal + bids + [1.5], "g")
    with pytest.raises(RecordError, match="start_scores must be"):
        openspiel.record_from_history(deal + bids, "g", start_scores=[1, 2, 3])


def test_survives_jsonl_and_sniffing():
    rec = next(openspiel.load(FIXTURES / "edge_cases.jsonl"))
    back = next(jsonl.loads(jsonl.dumps_record(rec)))
    strip = dict(source_file=None, source_line=None)
    assert dataclasses.replace(back, **strip) == dataclasses.replace(rec, **strip)
    assert openspiel.looks_like((FIXTURES / "edge_cases.jsonl").read_bytes()[:4096])
    assert openspiel.looks_like((FIXTURES / "histories.txt").read_bytes()[:4096])
    assert not openspiel.looks_like(b'{"game_id": "g", "hand": 1, "history": []}')
    assert not openspiel.looks_like(b"1 2 3\n")


@needs_corpus
@pytest.mark.parametrize(
    "spelling",
    [
        lambda nums: " ".join(nums),  # as written by the corpus
        lambda nums: ", ".join(nums),  # commas
        lambda nums: "[" + ", ".join(nums) + "]",  # print(state.history())
        lambda nums: "[ " + " ".join(nums) + " ]",
    ],
)
def test_histories_are_recognised_with_spaces_commas_or_brackets(tmp_path, spelling):
    """Each spelling of a history() line that docs/IMPORTERS.md names is found by content (a .txt
    file), not taken for SPN (a line starting with '[') or left in no format, and loads the same hands."""
    from spadework.parsers import formats

    lines = [ln.split() for ln in (CORPUS / "histories.txt").read_text().splitlines() if ln.strip() and not ln.startswith("#")][:5]
    path = tmp_path / "histories.txt"
    path.write_text("\n".join(spelling(nums) for nums in lines) + "\n")
    assert formats.detect(path) == "openspiel"
    got, errors = split(openspiel.load(path))
    want, _ = split(openspiel.load(CORPUS / "histories.txt"))
    assert not errors and [r.tricks for r in got] == [r.tricks for r in want[:5]]


def test_players_naming_fewer_than_four_seats_is_one_error():
    """``openspiel.load(path, players=["a", "b"])`` made every line a load error (found by an API audit)."""
    from spadework.parsers import openspiel

    with pytest.raises(ValueError, match="players must name the 4 seats"):
        list(openspiel.loads("0 1 2\n", players=["a", "b"]))
