"""Round trips and golden files across the project's three formats.

- hypothesis: random hand records survive JSONL -> SPN -> JSONL unchanged (and the sheet's
  projection of a record survives CSV -> records);
- golden files: every input under ``tests/golden/<format>/`` parses to exactly the hands in its
  ``<name>.expected.jsonl`` and the load errors in its ``<name>.errors.jsonl``;
- a folder of files (the shipped ``data/`` and the golden inputs): load -> JSONL -> load and
  load -> SPN -> load give the same hands.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spadework.parsers import jsonl, scoresheet, spn
from spadework.parsers.model import HandRecord, LoadError
from spades_oracle import group_games, replay, score_game
from strategies import games, hand_records, same_record, strip_source

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden"
DATA = ROOT / "data"
LOADERS = {".spn": spn.load, ".csv": scoresheet.load, ".jsonl": jsonl.load}
FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _inputs(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*")
        if p.suffix in LOADERS and not p.name.endswith((".expected.jsonl", ".errors.jsonl"))
    )


# --- hypothesis ---------------------------------------------------------------------------------


@FAST
@given(hand_records())
def test_strategy_draws_canonical_records(rec):
    again = jsonl.record_from_obj(orjson.loads(jsonl.dumps_record(rec)))
    assert again == rec  # warnings included: the strategy sets them as the JSON reader does


@FAST
@given(games(any_card_order=True))
def test_jsonl_to_spn_to_jsonl_is_lossless(records):
    """Deals listed in any order included (a ``DealOrder`` tag keeps what ``Deal`` cannot)."""
    text = jsonl.dumps(records)
    first = list(jsonl.loads(text))
    spn_text = spn.dumps(first)
    second = list(spn.loads(spn_text))
    assert not [i for i in second if isinstance(i, LoadError)], spn_text
    assert len(second) == len(first)
    for a, b in zip(first, second):
        assert same_record(a, b), spn_text
        assert a.warnings == b.warnings
    assert jsonl.dumps(second) == text
    assert spn.dumps(second) == spn_text


def _sheet_projection(rec: HandRecord) -> HandRecord:
    """What a score sheet keeps of a record: bids in order from the dealer's left (one per seat),
    taken, score, score and bags before, winner, rules and metadata."""
    order = {s: i for i, s in enumerate(rec.dealer.left.clockwise())}
    firsts = {}
    for b in rec.bids:
        firsts.setdefault(b.seat, b)
    bids = tuple(sorted(firsts.values(), key=lambda b: order[b.seat]))
    taken = rec.taken if rec.taken is not None and any(t is not None for t in rec.taken) else None
    return replace(rec, bids=bids, taken=taken, deal=None, tricks=None, extras={}, warnings=())


_TRIMMED = st.text(st.characters(exclude_categories=("Cs", "Zs", "Cc", "Zl", "Zp")), min_size=1, max_size=8)


def _sheet_text(text: str | None) -> str | None:
    """A text cell after a trip through the sheet: a carriage return written as a line break; kept
    exactly (line breaks inside, spaces at either end too, white space alone: the writer marks it),
    or none when empty."""
    if text is None:
        return None
    cell = text.replace("\r\n", "\n").replace("\r", "\n")
    return cell if cell else None


@FAST
@given(hand_records(extras=False, game_ids=_TRIMMED))
def test_score_sheet_keeps_its_projection_of_a_record(rec):
    want = _sheet_projection(rec)
    want = replace(
        want,
        players=tuple(_sheet_text(p) for p in rec.players),
        event=_sheet_text(rec.event), date=_sheet_text(rec.date), table=_sheet_text(rec.table), round=_sheet_text(rec.round),
        rules="standard" if rec.rules == "" else rec.rules,  # an empty cell is the default ruleset
    )
    (back,) = list(scoresheet.loads(scoresheet.dumps([rec])))
    assert isinstance(back, HandRecord), back
    assert strip_source(back) == strip_source(want)


# --- golden files -------------------------------------------------------------------------------


GOLDEN_INPUTS = _inputs(GOLDEN)


def test_there_are_golden_files_for_every_format():
    assert {p.suffix for p in GOLDEN_INPUTS} == {".spn", ".csv", ".jsonl"}
    assert len(GOLDEN_INPUTS) >= 8


@pytest.mark.parametrize("path", GOLDEN_INPUTS, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_golden_file(path):
    items = list(LOADERS[path.suffix](path, source=path.name))
    stem = path.name[: -len(path.suffix)]
    hands = [i for i in items if isinstance(i, HandRecord)]
    errors = [i for i in items if isinstance(i, LoadError)]
    expected = (path.parent / f"{stem}.expected.jsonl").read_text(encoding="utf-8")
    assert jsonl.dumps(hands) == expected
    errors_file = path.parent / f"{stem}.errors.jsonl"
    want_errors = [orjson.loads(line) for line in errors_file.read_text().splitlines()] if errors_file.exists() else []
    assert [{"line": e.source_line, "message": e.message} for e in errors] == want_errors
    assert all(e.source_file == path.name and e.raw for e in errors)


# --- a folder of files --------------------------------------------------------------------------


FOLDER = _inputs(DATA) + GOLDEN_INPUTS


@pytest.mark.parametrize("path", FOLDER, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_survives_jsonl_and_spn(path):
    hands = [i for i in LOADERS[path.suffix](path) if isinstance(i, HandRecord)]
    via_jsonl = list(jsonl.loads(jsonl.dumps(hands)))
    via_spn = list(spn.loads(spn.dumps(hands)))
    assert len(via_jsonl) == len(via_spn) == len(hands)
    for a, b, c in zip(hands, via_jsonl, via_spn):
        assert same_record(a, b) and same_record(a, c)


def test_the_sample_folder_loads_without_errors_and_has_three_formats():
    files = [p for p in _inputs(DATA) if p.parent == DATA]  # the hand-written games (data/sample is simulated)
    assert [p.name for p in files] == ["club_night.jsonl", "club_night.spn", "scoresheet.csv"]
    counts = {}
    for p in files:
        got = list(LOADERS[p.suffix](p))
        assert not [i for i in got if isinstance(i, LoadError)]
        counts[p.name] = len(got)
    assert counts == {"club_night.jsonl": 8, "club_night.spn": 7, "scoresheet.csv": 14}


def test_sample_club_night_jsonl_is_legal_and_correctly_scored():
    recs = list(jsonl.load(DATA / "club_night.jsonl"))
    games_ = group_games(recs)
    assert sorted(games_) == ["cn-0314-t1", "cn-0314-t2"]
    for game_id, hands in games_.items():
        results, winner, _ = score_game(hands)
        assert winner is None
        for i, (rec, res) in enumerate(zip(hands, results)):
            rp = replay(rec)
            assert rp.findings == [], (game_id, rec.hand)
            assert rec.is_complete_play() and list(rec.taken) == rp.taken
            assert rec.dealer == (hands[i - 1].dealer.left if i else rec.dealer)
            for side, got in enumerate(rec.score):
                assert (got.points, got.total, got.bags) == (res[side].points, res[side].total, res[side].bags)
            if game_id == "cn-0314-t1":
                assert [t.winner for t in rec.tricks] == rp.winners
    penalty_hand = games_["cn-0314-t2"][2]
    assert penalty_hand.score[1].points == -28 and penalty_hand.score[1].bags == 0


def regenerate_golden() -> None:
    """Rewrite every ``*.expected.jsonl`` / ``*.errors.jsonl`` (and the two ``canonical`` dumps) from what
    the parsers give today.  Run ``python -m tests.test_roundtrip --regenerate`` only after a deliberate
    change of format, then read the diff: a golden file is only as good as its review."""
    hands = [r for r in spn.load(GOLDEN / "spn" / "human.spn") if isinstance(r, HandRecord)]
    (GOLDEN / "spn" / "canonical.spn").write_text(spn.dumps(hands), encoding="utf-8")
    hands = [r for r in scoresheet.load(GOLDEN / "csv" / "basic.csv") if isinstance(r, HandRecord)]
    (GOLDEN / "csv" / "canonical.csv").write_text(scoresheet.dumps(hands), encoding="utf-8")
    for path in _inputs(GOLDEN):
        items = list(LOADERS[path.suffix](path, source=path.name))
        stem = path.name[: -len(path.suffix)]
        hands = [i for i in items if isinstance(i, HandRecord)]
        errors = [i for i in items if isinstance(i, LoadError)]
        (path.parent / f"{stem}.expected.jsonl").write_text(jsonl.dumps(hands), encoding="utf-8")
        errors_file = path.parent / f"{stem}.errors.jsonl"
        if errors:
            lines = (orjson.dumps({"line": e.source_line, "message": e.message}).decode() + "\n" for e in errors)
            errors_file.write_text("".join(lines), encoding="utf-8")
        elif errors_file.exists():
            errors_file.unlink()
        print(f"{path.relative_to(GOLDEN)}: {len(hands)} hands, {len(errors)} errors")


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--regenerate"]:
        regenerate_golden()
    else:
        print("usage: python -m tests.test_roundtrip --regenerate   (rewrites tests/golden/*.expected.jsonl)")
