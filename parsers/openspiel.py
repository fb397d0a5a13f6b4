"""Importer for DeepMind OpenSpiel ``spades`` action histories (FORMATS.md section 4).

OpenSpiel plays one hand per episode and records it as ``history()``, a list of integers:

- 52 deal actions: action ``i`` deals card ``a`` to seat ``i % 4`` counted from N; a card is
  ``suit * 13 + rank`` with suits ``C D H S`` (0..3) and ranks ``2 .. A`` (0..12), so 0 = ``2C``,
  12 = ``AC``, 51 = ``AS``;
- 4 bids, N first, each ``52 + n`` for a bid of ``n`` tricks (52 = nil);
- up to 52 card plays (same card numbers); N leads trick 1 and the winner of each trick leads the
  next (found here with :data:`~spadework.parsers.cards.STANDARD_DECK`).

Two file shapes are read, line by line (a line may be either):

- ``episodes.jsonl``: ``{"episode": 7, "start_scores": [NS, EW], "history": [...], "returns": [N, E, S, W]}``;
- ``histories.txt``: the bare integers of one history per line (spaces or commas, optional brackets).

Each line is one hand of a game of its own (``game_id`` = file stem + ``-`` + the episode number, or
the line's 0-based position among the file's hands when no number is given), hand 1, dealer W (N bids
and leads first), rules ``"openspiel"`` (a preset of the checker: OpenSpiel's conventions), players
named by seat (``openspiel-N`` ...: seat labels for the engine's bots, not people).  ``start_scores``
become ``score_before`` and, since every non-bag point is a multiple of 10, ``bags_before`` is the
start score modulo 10 (Python's ``%``: 0..9 even for a negative score, ``-298`` -> 2 bags); OpenSpiel's
``returns`` become the recorded hand ``points`` of each side (N's for NS, E's for EW).  No running
total is recorded: OpenSpiel does not write one.

A history OpenSpiel's ``apply_action`` accepts but the rules forbid (a renege, a spade led early,
partners bidding more than 13 together) loads as written; the checker reports it.  A line that cannot
be a hand (bad JSON, the wrong number of actions, an action out of range, a card dealt twice) is a
:class:`~spadework.parsers.model.LoadError` with its line and the reason.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from dataclasses import replace
from typing import Any

import orjson

from spadework.parsers.cards import STANDARD_CARDS, STANDARD_DECK, rank_of, suit_of
from spadework.parsers.io import decode, iter_lines, iter_text_lines, raw_text, strip_gz
from spadework.parsers import jsontext
from spadework.parsers.model import Bid, HandRecord, LoadError, RecordError, SideScore, Trick
from spadework.parsers.seats import SEATS, Seat, Side

Item = HandRecord | LoadError

RULES = "openspiel"
"""The preset the records name: no blind nil, a failed nil's tricks count for the side, partners'
bids total at most 13, bags read from the running score's last digit (see docs/IMPORTERS.md)."""
DEALER = Seat.W
"""OpenSpiel has N bid and lead first, so the dealer is W."""
NUM_CARDS = 52
BID_BASE = 52
"""Action of a nil bid; ``BID_BASE + n`` bids ``n`` tricks."""
MAX_BID = 13
MIN_ACTIONS = NUM_CARDS + 4
MAX_ACTIONS = NUM_CARDS + 4 + NUM_CARDS
_RANKS = "23456789TJQKA"
_SUITS = "CDHS"


def card_of_action(action: int) -> str:
    """The canonical card code of an OpenSpiel card action (0 -> ``2C``, 12 -> ``AC``, 51 -> ``AS``)."""
    if not 0 <= action < NUM_CARDS:
        raise ValueError(f"{action} is not a card action (0..51)")
    return _RANKS[action % 13] + _SUITS[action // 13]


def action_of_card(card: str) -> int:
    """The OpenSpiel action of a canonical card code (``AS`` -> 51).  Raises ``ValueError``."""
    if card not in STANDARD_CARDS:
        raise ValueError(f"{card!r} is not a card of the standard deck")
    return _SUITS.index(suit_of(card)) * 13 + _RANKS.index(rank_of(card))


def default_players() -> tuple[str, str, str, str]:
    """Seat labels used as player names: ``("openspiel-N", "openspiel-E", "openspiel-S", "openspiel-W")``."""
    return tuple(f"openspiel-{s}" for s in SEATS)  # type: ignore[return-value]


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(f"{what}: {value!r} is not a whole number")
    if isinstance(value, float) and not value.is_integer():
        raise RecordError(f"{what}: {value!r} is not a whole number")
    return int(value)


def record_from_history(
    history: Sequence[Any],
    game_id: str,
    *,
    start_scores: Sequence[Any] | None = None,
    returns: Sequence[Any] | None = None,
    players: Sequence[str | None] | None = None,
    source_file: str | None = None,
    source_line: int | None = None,
) -> HandRecord:
    """Build the hand record of one OpenSpiel history (see the module docstring for the encoding).

    ``start_scores`` ``[NS, EW]`` gives ``score_before`` and ``bags_before`` (score modulo 10);
    ``returns`` ``[N, E, S, W]`` gives each side's recorded ``points`` (a side whose partners' returns
    differ, or are not whole numbers, records none and gets a warning).

    Raises :class:`~spadework.parsers.model.RecordError` naming the action: fewer than 56 or more than 108
    actions, an action out of range for its phase, a card dealt twice.  A play that breaks the rules is
    returned as written.
    """
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise RecordError("history must be a list of whole numbers")
    actions = [_whole(a, f"action {i + 1}") for i, a in enumerate(history)]
    n = len(actions)
    if not MIN_ACTIONS <= n <= MAX_ACTIONS:
        raise RecordError(
            f"history has {n} actions; a hand has 52 deal actions, 4 bids and up to 52 card plays ({MIN_ACTIONS} to {MAX_ACTIONS})"
        )

    dealt_at: dict[int, int] = {}
    hands: list[list[str]] = [[], [], [], []]
    for i, a in enumerate(actions[:NUM_CARDS]):
        if not 0 <= a < NUM_CARDS:
            raise RecordError(f"action {i + 1} (deal): {a} is not a card (0..51)")
        if a in dealt_at:
            raise RecordError(
                f"action {i + 1} (deal): {card_of_action(a)} (action {a}) is dealt twice (first as action {dealt_at[a] + 1})"
            )
        dealt_at[a] = i
        hands[i % 4].append(card_of_action(a))

    bids: list[Bid] = []
    for k, a in enumerate(actions[NUM_CARDS:MIN_ACTIONS]):
        seat = SEATS[k]
        value = a - BID_BASE
        if not 0 <= value <= MAX_BID:
            raise RecordError(
                f"action {NUM_CARDS + k + 1} ({seat}'s bid): {a} is not a bid ({BID_BASE}..{BID_BASE + MAX_BID})"
            )
        bids.append(Bid(seat, value, nil=value == 0))

    plays = actions[MIN_ACTIONS:]
    for k, a in enumerate(plays):
        if not 0 <= a < NUM_CARDS:
            raise RecordError(f"action {MIN_ACTIONS + k + 1} (card play {k + 1}): {a} is not a card (0..51)")
    tricks: list[Trick] = []
    leader = Seat.N
    for start in range(0, len(plays), 4):
        cards = tuple(card_of_action(a) for a in plays[start : start + 4])
        tricks.append(Trick(leader, cards))
        if len(cards) == 4:
            leader = leader.after(STANDARD_DECK.winner_index(cards))

    warnings: list[str] = []
    score_before = bags_before = None
    if start_scores is not None:
        if isinstance(start_scores, (str, bytes)) or not isinstance(start_scores, Sequence) or len(start_scores) != 2:
            raise RecordError(f"start_scores must be [NS, EW], not {start_scores!r}")
        ns, ew = (_whole(v, f"start_scores[{i}]") for i, v in enumerate(start_scores))
        score_before = (ns, ew)
        bags_before = (ns % 10, ew % 10)

    score = None
    if returns is not None:
        if isinstance(returns, (str, bytes)) or not isinstance(returns, Sequence) or len(returns) != 4:
            raise RecordError(f"returns must be [N, E, S, W], not {returns!r}")
        sides: list[SideScore] = []
        for side in (Side.NS, Side.EW):
            a, b = side.seats
            ra, rb = returns[a], returns[b]
            try:
                pa, pb = _whole(ra, f"returns[{a}]"), _whole(rb, f"returns[{b}]")
            except RecordError:
                warnings.append(f"OpenSpiel's returns for {a} and {b} ({ra!r}, {rb!r}) are not whole points; no {side} points are recorded.")
                sides.append(SideScore())
                continue
            if pa != pb:
                warnings.append(f"OpenSpiel's returns for partners {a} and {b} differ ({pa} and {pb}); no {side} points are recorded.")
                sides.append(SideScore())
            else:
                sides.append(SideScore(points=pa))
        score = (sides[0], sides[1])
        if score[0].is_empty() and score[1].is_empty():
            score = None

    names = tuple(players) if players is not None else default_players()
    if len(names) != 4:
        raise RecordError("players must name 4 seats")
    return HandRecord(
        game_id=game_id,
        hand=1,
        dealer=DEALER,
        players=names,  # type: ignore[arg-type]
        bids=tuple(bids),
        rules=RULES,
        deal=tuple(tuple(h) for h in hands),
        tricks=tuple(tricks),
        score=score,
        score_before=score_before,
        bags_before=bags_before,
        warnings=tuple(warnings),
        source_file=source_file,
        source_line=source_line,
    )


_SPLIT = re.compile(r"[\s,]+")


def _parse_ints(text: str) -> list[int]:
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    out = []
    for token in _SPLIT.split(body.strip()):
        if not token:
            continue
        if not re.fullmatch(r"-?\d+", token):
            raise RecordError(f"{_short(token)!r} is not an action (a whole number)")
        out.append(int(token))
    return out


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def iter_histories(lines: Iterable[tuple[int, bytes]], source: str, players: Sequence[str | None] | None = None) -> Iterator[Item]:
    """Parse numbered raw lines, each an episode object or a bare history; blank and ``#`` lines are skipped.

    Raises ``ValueError`` (at the first item) for ``players`` that do not name 4 seats: a mistake of
    the caller, not of a line."""
    if players is not None and len(tuple(players)) != 4:
        raise ValueError(f"players must name the 4 seats N, E, S, W in order, not {list(players)!r}")
    stem = Path(strip_gz(os.path.basename(source))).stem or "openspiel"
    position = 0
    seen: dict[str, int] = {}
    for n, raw in lines:
        try:
            text = decode(raw).strip()
        except ValueError as exc:
            yield LoadError(source, n, str(exc), raw_text(raw))
            position += 1
            continue
        if not text or text.startswith("#"):
            continue
        index = position
        position += 1
        try:
            if text.startswith("{"):
                try:
                    obj = orjson.loads(text)
                except orjson.JSONDecodeError as exc:
                    msg = str(exc)
                    raise RecordError(f"not valid JSON ({msg.split(':', 1)[0] if len(msg) > 200 else msg})") from None
                if not isinstance(obj, Mapping):
                    raise RecordError("an episode must be a JSON object")
                if (key := jsontext.repeated_key(text, obj)) is not None:
                    raise RecordError(jsontext.TWICE.format(key))
                if "history" not in obj:
                    raise RecordError("missing required key 'history'")
                episode = obj.get("episode", index)
                if isinstance(episode, bool) or not isinstance(episode, (int, str)) or episode == "":
                    raise RecordError(f"episode {episode!r} is not an episode number or name")
                game_id = f"{stem}-{episode}"
                if game_id in seen:
                    raise RecordError(f"episode {episode} appears twice in this file (first on line {seen[game_id]})")
                rec = record_from_history(
                    obj["history"],
                    game_id,
                    start_scores=obj.get("start_scores"),
                    returns=obj.get("returns"),
                    players=players,
                    source_file=source,
                    source_line=n,
                )
            else:
                game_id = f"{stem}-{index}"
                rec = record_from_history(_parse_ints(text), game_id, players=players, source_file=source, source_line=n)
            seen[game_id] = n
            yield replace(rec, source_text=raw)
        except ValueError as exc:  # RecordError and friends
            yield LoadError(source, n, str(exc), raw_text(raw))


def load(path: str | os.PathLike[str], source: str | None = None, players: Sequence[str | None] | None = None) -> Iterator[Item]:
    """Stream the hands of an OpenSpiel ``episodes.jsonl`` or ``histories.txt`` file (``.gz`` too).

    Yields one :class:`HandRecord` per readable line (rules ``"openspiel"``, dealer W, hand 1, a game of
    its own) and a :class:`LoadError` (file, line, reason, raw text) per unreadable one; never raises
    for bad content.  ``source`` is the name recorded as ``source_file`` (default: the path; its stem
    starts each game id); ``players`` overrides the seat-label names.
    """
    source = source or os.fspath(path)
    yield from iter_histories(iter_lines(path), source, players)


def loads(text: str | bytes, source: str = "<string>", players: Sequence[str | None] | None = None) -> Iterator[Item]:
    """Stream the hands of OpenSpiel lines held in memory (see :func:`load`)."""
    yield from iter_histories(iter_text_lines(text), source, players)


def looks_like(head: bytes) -> bool:
    """True when the first bytes of a file look like OpenSpiel output: an object with ``"history"``
    (and no ``game_id``), or a first line of at least 56 whole numbers (for format sniffing)."""
    text = head.decode("utf-8", errors="replace")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first.startswith("{"):
        return '"history"' in first and '"game_id"' not in first
    tokens = [t for t in _SPLIT.split(first.strip("[]")) if t]
    return len(tokens) >= MIN_ACTIONS and all(t.isdigit() for t in tokens)


__all__ = [
    "BID_BASE",
    "DEALER",
    "RULES",
    "action_of_card",
    "card_of_action",
    "default_players",
    "iter_histories",
    "load",
    "loads",
    "looks_like",
    "record_from_history",
]
