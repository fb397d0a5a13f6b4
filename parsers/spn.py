"""SPN, Spades Portable Notation (``.spn``): the human-writable text format (FORMATS.md section 2).

A file is a sequence of *blocks* separated by blank lines.  A block holds PBN-style
tag pairs ``[Tag "value"]`` (several may share a line), comments, and, after a
``[Play]`` tag, one line per trick::

    [Event "Club night"]
    [Game "club-0314-t2"]
    [Rules "standard"]
    [North "ana"] [East "bo"] [South "cy"] [West "di"]

    [Hand "1"] [Dealer "N"]
    [Deal "N:AKQ2.JT3.984.A52 <E> <S> <W>"]  ; first seat, then clockwise; suits S.H.D.C[.jokers]
    [Bids "E 3, S nil, W 4, N 5"]
    [Play]
    E: 2C 5C KC AC > N                         ; leader, cards in play order, optional "> winner"
    N: ...
    [Taken "N 5 E 3 S 0 W 5"]
    [Score "NS 151 EW -70"] [Total "NS 151 EW -70"] [Bags "NS 1 EW 0"]

Tags and the ``spades-hand/1`` keys they carry (every key has a tag):

==================  =====================================================================
``Game``            ``game_id``                                                 (game-level)
``Event`` ``Date``  ``event``, ``date``, ``table``, ``round``                    (game-level)
``Table`` ``Round``
``Rules``           ``rules``: a preset name (``standard``), or a JSON object    (game-level)
                    ``{\\"preset\\":\\"barmore\\",...}``; a value starting with ``"`` is a
                    JSON string (so a preset name that starts with ``{`` can be written)
``North`` ``East``  ``players``                                                 (game-level)
``South`` ``West``
``Schema``          ``schema`` (checked as in JSON; not written by :func:`dump`) (game-level)
``Hand``            ``hand`` (required)
``Dealer``          ``dealer`` (required)
``ScoreBefore``     ``score_before``: ``"NS 120 EW 80"`` (both sides)
``BagsBefore``      ``bags_before``: ``"NS 3 EW 0"`` (both sides)
``Deal``            ``deal``: PBN deal ``"N:<hand> <hand> <hand> <hand>"``, a hand being
                    ``S.H.D.C`` ranks plus an optional fifth group of jokers (``B`` big, ``L``
                    little); ``-`` or ``...`` is an empty hand
``DealOrder``       the order of each seat's cards in ``deal`` where it is not PBN's (the
                    ``Deal`` tag groups a seat's cards by suit): ``"N 2C AS KD ..., E ..."``,
                    the seats whose order differs, each with the same cards as in ``Deal``;
                    written by :func:`dump` only when needed, so ``JSONL -> SPN -> JSONL``
                    keeps a deal listed in any order
``Bids``            ``bids`` (required), in the order made: ``"E 3, S nil, W bn, N b7"``;
                    a number, ``nil`` (``0`` means nil too), ``bn`` blind nil, ``bN`` blind N
``Play``            ``tricks``: takes no value; each following line until the next tag is one
                    trick, ``LEADER: CARD CARD CARD CARD`` with an optional ``> WINNER`` (the
                    recorded winner, checked by the checker).  ``[Play]`` with no lines is an
                    empty list of tricks.  Cards in any accepted spelling (``10s``, ``A♠``).
``Taken``           ``taken``: ``"N 5 E 3 S 0 W 5"`` (seats not recorded are left out)
``Score``           ``score.*.points``: ``"NS 151 EW -70"`` (a side may be left out)
``Total``           ``score.*.total``
``Bags``            ``score.*.bags``
``Winner``          ``winner``: ``"NS"`` or ``"EW"``
``x_*``             extension keys; the value is JSON (read as a plain string when it is not
                    valid JSON, so ``[x_note "hello"]`` works; :func:`dump` always writes JSON)
``Extra``           extension keys that cannot be a tag name: a JSON object merged into the
                    extensions (may be repeated)
==================  =====================================================================

Rules of the text (the decisions FORMATS.md leaves open):

- Tag names are case-sensitive.  A tag spelt like a known one in another case
  (``[dealer "N"]``) is an error; any other unknown tag is kept as an extension key
  with a warning, as the JSON reader does with unknown keys.
- A value is in double quotes; ``\\"`` is a quote, ``\\\\`` a backslash, ``\\n``/``\\r``/``\\t``
  a line break, carriage return, tab (any other backslash is kept as written).
  A value may not span lines.  A tag with no value (``[Event]``) means "not
  recorded": for a game-level tag it clears the value set by an earlier block.
- Comments: ``;`` to the end of the line, ``{ ... }`` (may span lines, but a blank
  line always ends the block, even inside a comment), and lines starting with ``%``.
- Game-level tags (``Game Event Date Table Round Rules North East South West Schema``)
  apply to the hand of the block they are in and to every following hand until
  changed.  A block holding only game-level tags (a header) yields no hand.
  ``Rules`` absent means ``standard``.
- Every block with a hand tag must have ``[Hand]``, ``[Dealer]`` and ``[Bids]``,
  and a ``[Game]`` must be in force.  A tag given twice in one block is an error.
- The hand's ``source_line`` is the first line of its block.

Errors: a block that cannot be read becomes one :class:`~spadework.parsers.model.LoadError`
whose message names the line and the tag (``line 14: [Play] trick 3: '1S' is not a
card``), whose ``source_line`` is that line (the block's first line when the fault
is the block as a whole, e.g. a missing ``[Hand]``), and whose ``raw`` is the whole
block's text.  The next block is read as usual.  When a game-level tag cannot be
read, the hands that depend on it cannot be attributed safely: until a later block
sets it again, each following hand is a load error naming the unreadable tag
(for ``Game``, ``Rules`` and the players), or loads with that field empty and a
warning (for ``Event``, ``Date``, ``Table``, ``Round``).

Writing: :func:`dump` writes, per game, a header block of game-level tags, then
one block per hand in a fixed tag order; game-level values that change within a
game are written in the hand's block.  Reading what :func:`dump` wrote gives the
same records (``JSONL -> SPN -> JSONL`` is lossless): ``Deal`` lists each seat's cards
as PBN does (S H D C, ace down, then jokers), and a deal recorded in another order
gets a ``DealOrder`` tag beside it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import IO, Any

import orjson

from spadework.parsers import jsontext
from spadework.parsers.cards import CardError, format_pbn_deal, parse_card, parse_pbn_deal, sort_cards, spellings
from spadework.parsers.io import LookAhead, TruncatedFile, decode, iter_lines, iter_text_lines, raw_text
from spadework.parsers.jsonl import KNOWN_KEYS, record_from_obj, record_to_obj
from spadework.parsers.model import HandRecord, LoadError
from spadework.parsers.seats import SEATS, SIDES, Seat, Side

Item = HandRecord | LoadError

GAME_TAGS: dict[str, str] = {
    "Event": "event",
    "Game": "game_id",
    "Date": "date",
    "Table": "table",
    "Round": "round",
    "Rules": "rules",
    "North": "N",
    "East": "E",
    "South": "S",
    "West": "W",
    "Schema": "schema",
}
"""Game-level tags -> the key they set (a seat letter for the players)."""

HAND_TAGS = (
    "Hand",
    "Dealer",
    "ScoreBefore",
    "BagsBefore",
    "Deal",
    "DealOrder",
    "Bids",
    "Play",
    "Taken",
    "Score",
    "Total",
    "Bags",
    "Winner",
    "Extra",
)
"""Per-hand tags, in the order :func:`dump` writes them (``Extra`` and ``x_*`` last)."""

KNOWN_TAGS = frozenset(GAME_TAGS) | frozenset(HAND_TAGS)
_KNOWN_LOWER = {t.lower(): t for t in KNOWN_TAGS}
_PLAYER_TAGS = ("North", "East", "South", "West")
_STRICT_GAME_TAGS = frozenset(("Game", "Rules", "Schema") + _PLAYER_TAGS)
"""Game-level tags whose loss makes the following hands unattributable (see the module doc)."""

MAX_BLOCK_BYTES = 8 * 1024 * 1024
"""A block longer than this is reported as one load error and skipped to the next blank line."""
_RAW_KEEP = 256 * 1024

_TAG_NAME = re.compile(r"[A-Za-z0-9_]+")
_TAG_NAME_FULL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INT = re.compile(r"[+-]?\d+\Z")
_GAME_TAG_SCAN = re.compile(r"\[\s*(" + "|".join(GAME_TAGS) + r")\b")
_HAND_TAG = re.compile(r"\[\s*Hand\b")
"""A [Hand] tag: a block that holds one is a hand, not game-level tags alone."""
_HAND_LINE = re.compile(rb"\s*\[\s*Hand\s")
"""A line that starts with a [Hand] tag (raw bytes): it starts a hand, even without a blank line before it."""
_GAME_TAGS_LINE = re.compile(
    rb'\s*(?:\[\s*(?:' + b"|".join(k.encode() for k in GAME_TAGS) + rb')\s+"(?:[^"\\]|\\.)*"\s*\]\s*)+(?:;.*)?\Z'
)
"""A line of game-level tags only (they go with the hand that follows them)."""
_UNCLOSED_COMMENT = (
    "comment '{' is not closed before the end of the block (a blank line ends a block, unless a '}' "
    "closes the comment within a few lines and before the next [Hand])"
)
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "r": "\r", "t": "\t"}
_CARD_SPELLINGS = spellings()
_SPECIAL = re.compile(r"[{;\[]")
"""What ends bare text on a line: a comment ('{' or ';') or a tag ('[')."""


# --- values shared with the score sheet -----------------------------------------------------------


def parse_rules_text(text: str) -> str | dict[str, Any]:
    """Read a ruleset written as text: a preset name, or a JSON object (``{...}``), or a JSON string.

    Raises ``ValueError`` (``rules: ... is not valid JSON``, or a key given twice).
    """
    t = text.strip()
    if t.startswith(("{", '"')):
        try:
            value = jsontext.loads_strict(t)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"{text!r} is not valid JSON ({exc})") from None
        except jsontext.RepeatedKey as exc:
            raise ValueError(f"{text!r}: {exc}") from None
        if not isinstance(value, (dict, str)):
            raise ValueError(f"{text!r} is not a preset name or a JSON object")
        return value
    return text


def format_rules_text(rules: str | Mapping[str, Any]) -> str:
    """Write a ruleset as text: a plain preset name when unambiguous (printable, no surrounding
    spaces, not starting with ``{`` or ``"``), JSON otherwise."""
    if isinstance(rules, str) and rules.isprintable() and rules == rules.strip() and not rules.startswith(("{", '"')):
        return rules
    return jsontext.dumps(rules)


def parse_number(text: str) -> int | float:
    """A number as written (``3``, ``-70``, ``4.5``); integral values become ``int``.  Raises ``ValueError``."""
    t = text.strip()
    if _INT.match(t):
        return int(t)
    if _NUMBER.match(t):
        value = float(t)
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{text!r} is not a number")
        return int(value) if value.is_integer() else value
    raise ValueError(f"{text!r} is not a number")


def parse_bid_text(text: str) -> tuple[int | float, bool, bool]:
    """Read one bid as SPN and the score sheet write it: ``3``, ``nil`` (or ``0``), ``bn`` (blind nil),
    ``bN`` (blind N, e.g. ``b7``).

    Returns ``(tricks, nil, blind)``; a value the rules do not allow (14, 4.5) is kept for the
    checker.  Raises ``ValueError`` ``'x' is not a bid (...)``.
    """
    t = text.strip().lower()
    blind = False
    if t.startswith("b") and len(t) > 1:
        blind, t = True, t[1:]
    if t in ("nil", "n") and (blind or t == "nil"):
        return 0, True, blind
    try:
        value = parse_number(t)
    except ValueError:
        raise ValueError(f"{text!r} is not a bid (a number of tricks, nil, bn for blind nil or bN for blind N)") from None
    return value, value == 0, blind


def format_bid_text(value: int | float, nil: bool, blind: bool) -> str:
    """Write a bid: ``3``, ``nil``, ``bn``, ``b7`` (inverse of :func:`parse_bid_text`)."""
    if nil:
        return "bn" if blind else "nil"
    text = str(value) if isinstance(value, int) else repr(float(value))
    return "b" + text if blind else text


# --- reading: lines -> blocks -> tokens -----------------------------------------------------------


class _BlockError(Exception):
    """A fault in a block: the line, the tag (if any) and the reason."""

    def __init__(self, line: int, tag: str | None, reason: str, col: int = 0) -> None:
        super().__init__(reason)
        self.line, self.tag, self.reason, self.col = line, tag, reason, col

    def message(self) -> str:
        where = f"line {self.line}: "
        return where + (f"[{self.tag}] {self.reason}" if self.tag else self.reason)


@dataclass(slots=True)
class _Tag:
    name: str
    value: str | None
    line: int


@dataclass(slots=True)
class _Text:
    text: str
    line: int


def _read_value(text: str, i: int, line: int, name: str) -> tuple[str, int]:
    """Read a quoted value starting after its opening quote; returns (value, index after the closing quote)."""
    end = text.find('"', i)
    if end >= 0 and text.find("\\", i, end) < 0:  # the common case: no escape before the closing quote
        return text[i:end], end + 1
    out: list[str] = []
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\" and i + 1 < n and text[i + 1] in _ESCAPES:
            out.append(_ESCAPES[text[i + 1]])
            i += 2
            continue
        out.append(c)
        i += 1
    raise _BlockError(line, name, "value has no closing '\"' (a value may not span lines)")


def _flush(buf: list[str], tokens: list, line: int) -> None:
    """Bare text gathered on ``line`` becomes a token (unless it is all blank); ``buf`` is emptied."""
    text = "".join(buf).strip()
    if text:
        tokens.append(_Text(text, line))
    buf.clear()


def _tokenize(lines: list[tuple[int, str]]) -> tuple[list[_Tag | _Text], _BlockError | None]:
    """Split a block into tags and bare text, dropping comments.

    Returns the tokens read and the first error (tokens after an error are not read).
    """
    tokens: list[_Tag | _Text] = []
    brace_line: int | None = None
    special = _SPECIAL.search
    for n, text in lines:
        if brace_line is None and text.startswith("%"):
            continue
        i, size = 0, len(text)
        buf: list[str] = []
        while i < size:
            if brace_line is not None:
                end = text.find("}", i)
                if end < 0:
                    i = size
                else:
                    brace_line, i = None, end + 1
                    buf.append(" ")
                continue
            m = special(text, i)  # bare text (a trick line) is taken whole up to the next '{', ';' or '['
            if m is None:
                buf.append(text[i:])
                break
            if m.start() > i:
                buf.append(text[i : m.start()])
                i = m.start()
            c = text[i]
            if c == "{":
                brace_line = n
                i += 1
            elif c == ";":
                break
            elif c == "[":
                if buf:
                    _flush(buf, tokens, n)
                start = i
                i += 1
                while i < size and text[i] in " \t":
                    i += 1
                m = _TAG_NAME.match(text, i)
                if not m:
                    reason = f"'[' is not followed by a tag name: {text[start:start + 30]!r}"
                    return tokens, _BlockError(n, None, reason, start)
                name = m.group()
                i = m.end()
                while i < size and text[i] in " \t":
                    i += 1
                value: str | None = None
                if i < size and text[i] == '"':
                    try:
                        value, i = _read_value(text, i + 1, n, name)
                    except _BlockError as exc:
                        exc.col = start
                        return tokens, exc
                    while i < size and text[i] in " \t":
                        i += 1
                if i < size and text[i] == "]":
                    i += 1
                elif value is None and i < size and text[i] not in "[;{":
                    return tokens, _BlockError(n, name, "value must be in double quotes, e.g. [Dealer \"N\"]", start)
                else:
                    return tokens, _BlockError(n, name, "tag is missing its closing ']'", start)
                tokens.append(_Tag(name, value, n))
        if buf:
            _flush(buf, tokens, n)
    if brace_line is not None:
        return tokens, _BlockError(brace_line, None, _UNCLOSED_COMMENT)
    return tokens, None


# --- reading: tags -> record -----------------------------------------------------------------------


def _pairs(value: str, line: int, tag: str) -> list[tuple[str, str]]:
    parts = value.replace(",", " ").split()
    if len(parts) % 2:
        example = "NS 151 EW -70" if tag in _SIDE_TAGS else "N 5 E 3"
        raise _BlockError(line, tag, f"{value!r} must be pairs like \"{example}\"; '{parts[-1]}' has no value")
    return [(parts[k], parts[k + 1]) for k in range(0, len(parts), 2)]


_SIDE_TAGS = ("Score", "Total", "Bags", "ScoreBefore", "BagsBefore")


def _seat(text: str, line: int, tag: str, what: str = "") -> Seat:
    try:
        return Seat.parse(text)
    except ValueError:
        raise _BlockError(line, tag, f"{what}{text!r} is not a seat (expected N, E, S or W)") from None


def _side(text: str, line: int, tag: str) -> Side:
    try:
        return Side.parse(text)
    except ValueError:
        raise _BlockError(line, tag, f"{text!r} is not a side (expected NS or EW)") from None


def _whole(text: str, line: int, tag: str, what: str = "") -> int:
    if not _INT.match(text.strip()):
        raise _BlockError(line, tag, f"{what}{text!r} is not a whole number")
    return int(text)


def _side_ints(tag: _Tag, both: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    for s, v in _pairs(tag.value or "", tag.line, tag.name):
        side = _side(s, tag.line, tag.name)
        if str(side) in out:
            raise _BlockError(tag.line, tag.name, f"side {side} is given twice")
        out[str(side)] = _whole(v, tag.line, tag.name, f"{side}: ")
    if both and len(out) != 2:
        raise _BlockError(tag.line, tag.name, f"{tag.value!r} must give both sides, e.g. \"NS 0 EW 0\"")
    return out


def _bids(tag: _Tag) -> list[dict[str, Any]]:
    out = []
    for s, v in _pairs(tag.value or "", tag.line, "Bids"):
        seat = _seat(s, tag.line, "Bids")
        try:
            value, nil, blind = parse_bid_text(v)
        except ValueError as exc:
            raise _BlockError(tag.line, "Bids", f"{seat}: {exc}") from None
        b: dict[str, Any] = {"seat": str(seat), "bid": "nil" if nil else value}
        if blind:
            b["blind"] = True
        out.append(b)
    return out


def _deal_order(tag: _Tag) -> dict[str, list[str]]:
    """``[DealOrder "N 2C AS ..., E ..."]``: seat -> its cards in the recorded order."""
    out: dict[str, list[str]] = {}
    for group in tag.value.split(","):  # type: ignore[union-attr]
        words = group.split()
        if not words:
            continue
        seat = str(_seat(words[0], tag.line, "DealOrder"))
        if seat in out:
            raise _BlockError(tag.line, "DealOrder", f"seat {seat} is given twice")
        try:
            out[seat] = [parse_card(w) for w in words[1:]]
        except CardError as exc:
            raise _BlockError(tag.line, "DealOrder", f"{seat}: {exc}") from None
    return out


def _trick(text: str, line: int, number: int) -> dict[str, Any]:
    what = f"trick {number}: "
    head, colon, rest = text.partition(":")
    if not colon:
        raise _BlockError(line, "Play", f"{what}{text!r} must start with the leader's seat and ':' (e.g. 'E: 2C 5C KC AC')")
    leader = _seat(head.strip(), line, "Play", what + "leader ")
    cards_text, arrow, winner_text = rest.partition(">")
    winner = None
    if arrow:
        w = winner_text.replace(",", " ").split()
        if len(w) != 1:
            raise _BlockError(line, "Play", f"{what}'>' must be followed by the winner's seat, e.g. '> N'")
        winner = _seat(w[0], line, "Play", what + "winner ")
    cards = []
    for word in cards_text.replace(",", " ").split():
        code = _CARD_SPELLINGS.get(word)  # the exact spellings; parse_card for the rest (and its error)
        if code is None:
            try:
                code = parse_card(word)
            except CardError as exc:
                raise _BlockError(line, "Play", f"{what}{exc}") from None
        cards.append(code)
    if len(cards) > 4:
        raise _BlockError(line, "Play", f"{what}{len(cards)} cards; a trick has at most 4")
    t: dict[str, Any] = {"leader": str(leader), "cards": cards}
    if winner is not None:
        t["winner"] = str(winner)
    return t


def _json_value(text: str | None) -> Any:
    """An extension value: JSON when it parses, else the text itself (also when it gives a key twice:
    the text keeps both, where the parsed value would keep one)."""
    if text is None:
        return None
    try:
        return jsontext.loads_strict(text)
    except (orjson.JSONDecodeError, jsontext.RepeatedKey):
        return text


class _Reader:
    """Reads blocks one at a time, keeping the game-level tags in force."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.state: dict[str, Any] = {t: None for t in GAME_TAGS}
        self.unreadable: dict[str, int] = {}
        self.open_block: list[tuple[int, bytes]] = []  # the lines of the block being read (iter_spn)

    # game-level tags -----------------------------------------------------------------------------
    def _game_value(self, tag: _Tag) -> Any:
        if tag.value is None:
            return None
        if tag.name == "Rules":
            try:
                return parse_rules_text(tag.value)
            except ValueError as exc:
                raise _BlockError(tag.line, "Rules", str(exc)) from None
        if tag.name == "Game" and tag.value == "":
            raise _BlockError(tag.line, "Game", "the game id is empty")
        return tag.value

    def _apply_game_tags(self, tags: list[_Tag]) -> _BlockError | None:
        first: _BlockError | None = None
        for tag in tags:
            try:
                self.state[tag.name] = self._game_value(tag)
                self.unreadable.pop(tag.name, None)
            except _BlockError as exc:
                self.unreadable[tag.name] = tag.line
                first = first or exc
        return first

    # blocks -------------------------------------------------------------------------------------
    def block(self, lines: list[tuple[int, bytes]]) -> Item | None:
        first_line = lines[0][0]
        raw = "\n".join(raw_text(b) for _, b in lines)
        text_lines, bad = [], []
        for n, b in lines:
            try:
                text_lines.append((n, decode(b)))
            except ValueError as exc:
                bad.append((n, b, _BlockError(n, None, str(exc))))
        if bad:
            # the block is rejected; the game-level tags lost are those of the unreadable lines (at
            # their lines), and a block of game-level tags alone still sets those of its other lines
            for n, b, _ in bad:
                self._mark_unreadable(raw_text(b), n, first_line)
            if not any(_HAND_TAG.search(t) for _, t in text_lines):
                tokens, error = _tokenize(text_lines)
                if error is None:
                    self._apply_game_tags([t for t in tokens if isinstance(t, _Tag) and t.name in GAME_TAGS])
            return LoadError(self.source, bad[0][0], bad[0][2].message(), raw)

        tokens, error = _tokenize(text_lines)
        game_tags = [t for t in tokens if isinstance(t, _Tag) and t.name in GAME_TAGS]
        game_error = self._apply_game_tags(game_tags)
        if error is not None:
            rest = "\n".join(t for n, t in text_lines if n >= error.line)
            self._mark_unreadable(rest[error.col:], error.line, first_line)
            return LoadError(self.source, error.line, error.message(), raw)
        if game_error is not None:
            return LoadError(self.source, game_error.line, game_error.message(), raw)
        try:
            rec = self._hand(tokens, first_line)
        except _BlockError as exc:
            return LoadError(self.source, exc.line, exc.message(), raw)
        return rec if rec is None else replace(rec, source_text=raw)

    def _mark_unreadable(self, text: str, line: int, first_line: int) -> None:
        """Mark the game-level tags named in ``text`` unreadable, at ``line`` (0: ``first_line``)."""
        for m in _GAME_TAG_SCAN.finditer(text):
            self.unreadable[m.group(1)] = line or first_line

    def _hand(self, tokens: list[_Tag | _Text], first_line: int) -> HandRecord | None:
        seen: dict[str, int] = {}
        hand_tags: dict[str, _Tag] = {}
        extras: dict[str, Any] = {}
        extra_lines: dict[str, int] = {}
        tricks: list[dict[str, Any]] | None = None
        in_play = False
        is_hand = False
        for tok in tokens:
            if isinstance(tok, _Text):
                if not in_play:
                    reason = f"text outside a tag: {tok.text[:60]!r} (trick lines belong after [Play])"
                    raise _BlockError(tok.line, None, reason)
                assert tricks is not None
                if len(tricks) >= 13:
                    raise _BlockError(tok.line, "Play", "more than 13 tricks; a hand has at most 13")
                tricks.append(_trick(tok.text, tok.line, len(tricks) + 1))
                continue
            name = tok.name
            in_play = name == "Play"
            if name != "Extra":
                if name in seen:
                    raise _BlockError(tok.line, name, f"is given twice in this block (first at line {seen[name]})")
                seen[name] = tok.line
            if name in GAME_TAGS:
                continue
            if name in KNOWN_TAGS or name == "Extra":
                is_hand = True
            if name == "Play":
                if tok.value:
                    raise _BlockError(tok.line, name, "takes no value: each following line is a trick, 'E: 2C 5C KC AC'")
                tricks = []
            elif name == "Extra":
                obj = _json_value(tok.value)
                if not isinstance(obj, dict):
                    raise _BlockError(tok.line, name, "value must be a JSON object of extension keys")
                for k, v in obj.items():
                    if k in KNOWN_KEYS:
                        raise _BlockError(tok.line, name, f"key {k!r} is a key of the hand, not an extension")
                    if k in extras:
                        raise _BlockError(tok.line, name, f"extension {k!r} is given twice (first at line {extra_lines[k]})")
                    extras[k], extra_lines[k] = v, tok.line
            elif name in KNOWN_TAGS:
                hand_tags[name] = tok
            else:
                known = _KNOWN_LOWER.get(name.lower())
                if known is not None:
                    reason = f"is not a tag (tag names are case-sensitive: did you mean [{known}]?)"
                    raise _BlockError(tok.line, name, reason)
                if name in KNOWN_KEYS:
                    raise _BlockError(tok.line, name, "is not a tag")
                if name in extras:
                    raise _BlockError(tok.line, name, f"extension is given twice (first at line {extra_lines[name]})")
                extras[name], extra_lines[name] = _json_value(tok.value), tok.line
        if not is_hand:
            if extras:  # an unknown tag among game-level ones: they are applied, it has no hand to go to
                name = min(extras, key=extra_lines.__getitem__)
                reason = (
                    "is not a game-level tag, and this block has no hand tags (no [Hand]): its game-level tags "
                    "apply to the hands after it, but this tag, an extension of a hand, is not kept"
                )
                raise _BlockError(extra_lines[name], name, reason)
            return None
        return self._record(hand_tags, tricks, extras, first_line)

    def _record(
        self, tags: dict[str, _Tag], tricks: list[dict[str, Any]] | None, extras: dict[str, Any], first_line: int
    ) -> HandRecord:
        strict = sorted(t for t in self.unreadable if t in _STRICT_GAME_TAGS)
        if strict:
            where = ", ".join(f"[{t}] at line {self.unreadable[t]}" for t in strict)
            reason = f"this hand's game cannot be told: the game-level tag {where} could not be read"
            raise _BlockError(first_line, None, reason)
        st = self.state
        if st["Game"] is None:
            reason = 'no [Game] is in force: set [Game "..."] before this hand (the game id is required)'
            raise _BlockError(first_line, None, reason)
        for required in ("Hand", "Dealer", "Bids"):
            if required not in tags:
                raise _BlockError(first_line, None, f"this hand has no [{required}] tag (required)")
            if tags[required].value is None:
                raise _BlockError(tags[required].line, required, "needs a value")
        obj: dict[str, Any] = {"game_id": st["Game"]}
        if st["Schema"] is not None:
            obj["schema"] = st["Schema"]
        for tag in ("Event", "Date", "Table", "Round"):
            if st[tag] is not None:
                obj[GAME_TAGS[tag]] = st[tag]
        if st["Rules"] is not None:
            obj["rules"] = st["Rules"]
        obj["players"] = {GAME_TAGS[t]: st[t] for t in _PLAYER_TAGS}
        warnings = [
            f"the game-level tag [{t}] at line {line} could not be read; {GAME_TAGS[t]} left empty"
            for t, line in sorted(self.unreadable.items())
        ]

        h = tags["Hand"]
        obj["hand"] = _whole(h.value or "", h.line, "Hand")
        if obj["hand"] < 1:
            raise _BlockError(h.line, "Hand", f"{obj['hand']} is below 1 (hands are numbered from 1)")
        d = tags["Dealer"]
        obj["dealer"] = str(_seat(d.value or "", d.line, "Dealer"))
        obj["bids"] = _bids(tags["Bids"])
        for name, key in (("ScoreBefore", "score_before"), ("BagsBefore", "bags_before")):
            if name in tags and tags[name].value is not None:
                obj[key] = _side_ints(tags[name], both=True)
        deal = tags.get("Deal")
        if deal is not None and deal.value is not None and deal.value.strip():
            try:
                parsed = parse_pbn_deal(deal.value)
            except ValueError as exc:
                raise _BlockError(deal.line, "Deal", str(exc)) from None
            obj["deal"] = {str(s): list(parsed[s] or ()) for s in SEATS}
        order = tags.get("DealOrder")
        if order is not None and order.value is not None and order.value.strip():
            if "deal" not in obj:
                raise _BlockError(order.line, "DealOrder", "orders the cards of a [Deal], and this hand has none")
            for seat, cards in _deal_order(order).items():
                if sorted(cards) != sorted(obj["deal"][seat]):
                    raise _BlockError(
                        order.line, "DealOrder", f"{seat}'s cards are not those [Deal] gives {seat} (it only orders them)"
                    )
                obj["deal"][seat] = cards
        if tricks is not None:
            obj["tricks"] = tricks
        taken = tags.get("Taken")
        if taken is not None and taken.value is not None:
            tk: dict[str, int] = {}
            for s, v in _pairs(taken.value, taken.line, "Taken"):
                seat = _seat(s, taken.line, "Taken")
                if str(seat) in tk:
                    raise _BlockError(taken.line, "Taken", f"seat {seat} is given twice")
                tk[str(seat)] = _whole(v, taken.line, "Taken", f"{seat}: ")
            obj["taken"] = tk
        score: dict[str, dict[str, int]] = {}
        for name, field in (("Score", "points"), ("Total", "total"), ("Bags", "bags")):
            if name in tags and tags[name].value is not None:
                for side, v in _side_ints(tags[name], both=False).items():
                    score.setdefault(side, {})[field] = v
        if score:
            obj["score"] = score
        w = tags.get("Winner")
        if w is not None and w.value is not None:
            obj["winner"] = str(_side(w.value, w.line, "Winner"))
        obj.update(extras)
        try:
            rec = record_from_obj(obj, self.source, first_line)
        except ValueError as exc:
            raise _BlockError(first_line, None, str(exc)) from None
        if warnings:
            rec = _with_warnings(rec, warnings)
        return rec


def _with_warnings(rec: HandRecord, warnings: list[str]) -> HandRecord:
    return replace(rec, warnings=rec.warnings + tuple(warnings))


def iter_spn(lines: Iterable[tuple[int, bytes]], source: str) -> Iterator[Item]:
    """Parse numbered raw lines of SPN (see the module doc); one block in memory at a time."""
    reader = _Reader(source)
    source_lines = LookAhead(lines)
    try:
        yield from _spn_blocks(reader, source_lines, source)
    except TruncatedFile as exc:
        # the block being read when the file broke off: its end is lost, so it is not read (named here,
        # with its text; the error naming where the file stops comes after it)
        block = reader.open_block
        if block:
            first = block[0][0]
            kept = "\n".join(raw_text(b) for _, b in block)[:_RAW_KEEP]
            yield LoadError(source, first, f"line {first}: this block was cut off with the file (reading stopped after "
                                           f"line {exc.line:,}), so it is not read", kept)  # fmt: skip
        raise


def _spn_blocks(reader: "_Reader", source_lines: LookAhead, source: str) -> Iterator[Item]:
    """The items of the blocks of ``source_lines`` (see :func:`iter_spn`); the block being read is kept
    in ``reader.open_block`` for a reader of a cut-off file."""
    block: list[tuple[int, bytes]] = []
    reader.open_block = block
    size = 0
    skipping = False
    has_hand = False
    for n, raw in source_lines:
        if not raw.strip():
            if block and not skipping and _comment_open(block):
                # a blank line inside a { ... } comment (a note of two paragraphs) does not end the
                # block when the comment closes within a few lines and before another hand starts;
                # otherwise the lines read ahead are put back (a stray '{' costs only its block)
                closed, ahead = _comment_closes_ahead(block + [(n, raw)], source_lines, _HAND_LINE.match)
                if closed:
                    block.extend([(n, raw)] + ahead)
                    size += sum(len(b) + 1 for _, b in ahead) + len(raw) + 1
                    continue
                source_lines.put_back(ahead)
            if block:
                item = reader.block(block)
                if item is not None:
                    yield item
            block, size, skipping, has_hand = [], 0, False, False
            reader.open_block = block
            continue
        if skipping:
            continue
        if _HAND_LINE.match(raw) and not (has_hand and _comment_open(block) and _closes_later(block, n, raw, source_lines)):
            # (a [Hand] line inside a { ... } comment that closes before the block ends, e.g. a
            # director's note quoting the first entry, is the comment's text, not a new hand; after
            # a '{' that is never closed it starts the next hand, as it always did)
            if has_hand:
                # a second hand with no blank line before it: a block of its own, with the lines of
                # game-level tags just before it, rather than one block rejected with both hands
                k = len(block)
                while k > 0 and _GAME_TAGS_LINE.match(block[k - 1][1]):
                    k -= 1
                item = reader.block(block[:k])
                if item is not None:
                    yield item
                block = block[k:]
                reader.open_block = block
                size = sum(len(b) + 1 for _, b in block)
            has_hand = True
        block.append((n, raw))
        size += len(raw) + 1
        if size > MAX_BLOCK_BYTES:
            kept = "\n".join(raw_text(b) for _, b in block)[:_RAW_KEEP]
            first = block[0][0]
            reason = f"line {first}: block is longer than {MAX_BLOCK_BYTES // (1024 * 1024)} MB; skipped to the next blank line"
            yield LoadError(source, first, reason, kept)
            reader._mark_unreadable(kept, block[0][0], block[0][0])
            block, size, skipping = [], 0, True
            reader.open_block = block
    if block:
        item = reader.block(block)
        if item is not None:
            yield item


MAX_COMMENT_LINES = 40
"""Most lines a { ... } comment may run on past a blank line inside it (see :func:`iter_spn`)."""


def _comment_closes_ahead(
    lines: list[tuple[int, bytes]], source_lines: LookAhead, stop: Callable[[bytes], Any]
) -> tuple[bool, list[tuple[int, bytes]]]:
    """Whether the { ... } comment open at the end of ``lines`` closes on one of the next lines of
    ``source_lines`` (at most :data:`MAX_COMMENT_LINES`, and before a line ``stop`` is true of), and
    the lines read ahead to tell (the caller keeps them or puts them back)."""
    ahead: list[tuple[int, bytes]] = []
    while len(ahead) < MAX_COMMENT_LINES:
        more = next(source_lines, None)
        if more is None:
            break
        ahead.append(more)
        if stop(more[1]):
            break
        if b"}" in more[1] and not _comment_open(lines + ahead):
            return True, ahead
    return False, ahead


def _closes_later(block: list[tuple[int, bytes]], n: int, raw: bytes, source_lines: LookAhead) -> bool:
    """True when the { ... } comment open in ``block`` closes on line ``raw`` (number ``n``) or on one
    of the lines after it before the next blank line; the lines read ahead are put back."""
    if b"}" in raw and not _comment_open(block + [(n, raw)]):
        return True
    closed, ahead = _comment_closes_ahead(block + [(n, raw)], source_lines, lambda line: not line.strip())
    source_lines.put_back(ahead)
    return closed


def _comment_open(block: list[tuple[int, bytes]]) -> bool:
    """True when a { ... } comment of ``block`` is still open at its end."""
    if not any(b"{" in b for _, b in block):
        return False
    try:
        _, error = _tokenize([(n, decode(b)) for n, b in block])
    except ValueError:  # not UTF-8: the block's own error says so
        return False
    return error is not None and error.reason == _UNCLOSED_COMMENT


def load(path: str | os.PathLike[str], source: str | None = None) -> Iterator[Item]:
    """Stream the hands of a ``.spn`` file (or gzipped): :class:`HandRecord` per hand block,
    :class:`LoadError` (file, line, reason, the block's raw text) per block that cannot be read.

    Never raises for bad content; reads line by line.  ``source`` is the name recorded as
    ``source_file`` (default: the path).
    """
    yield from iter_spn(iter_lines(path), source or os.fspath(path))


def loads(text: str | bytes, source: str = "<string>") -> Iterator[Item]:
    """Stream the hands of SPN text (see :func:`load`)."""
    yield from iter_spn(iter_text_lines(text), source)


def sniff(head: bytes) -> bool:
    """True when the first bytes of a file look like SPN (a tag, ``;``/``%``/``{`` comment first)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text.startswith((b"[", b";", b"%", b"{")) and not text.startswith((b"[{", b"[ {"))


# --- writing ----------------------------------------------------------------------------------------


def quote(value: str) -> str:
    """A tag value in double quotes, with ``\\ " newline CR`` escaped."""
    v = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{v}"'


def _tag(name: str, value: str | None) -> str:
    return f"[{name}]" if value is None else f"[{name} {quote(value)}]"


def _game_values(obj: Mapping[str, Any]) -> dict[str, Any]:
    players = obj["players"]
    return {
        "Event": obj.get("event"),
        "Game": obj["game_id"],
        "Date": obj.get("date"),
        "Table": obj.get("table"),
        "Round": obj.get("round"),
        "Rules": obj.get("rules", "standard"),
        "North": players.get("N"),
        "East": players.get("E"),
        "South": players.get("S"),
        "West": players.get("W"),
    }


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and jsontext.dumps(a) == jsontext.dumps(b)


def _game_tag_text(name: str, value: Any) -> str:
    if name == "Rules" and value is not None:
        return _tag(name, format_rules_text(value))
    return _tag(name, value)


def _side_text(parts: Iterable[tuple[str, int | None]]) -> str:
    return " ".join(f"{s} {v}" for s, v in parts if v is not None)


def _extension_tag_ok(key: str) -> bool:
    return bool(_TAG_NAME_FULL.match(key)) and key.lower() not in _KNOWN_LOWER and key not in KNOWN_KEYS


class _Writer:
    """Turns records into SPN blocks, writing game-level tags only when they change."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {t: None for t in GAME_TAGS if t != "Schema"}
        self.started = False

    def blocks(self, rec: HandRecord) -> list[str]:
        obj = record_to_obj(rec)
        want = _game_values(obj)
        out: list[str] = []
        lines: list[str] = []
        if not self.started or not _same(want["Game"], self.state["Game"]):
            header: list[str] = []
            for name in ("Event", "Game", "Date", "Table", "Round", "Rules"):
                if name in ("Game", "Rules") or want[name] is not None or not _same(want[name], self.state[name]):
                    header.append(_game_tag_text(name, want[name]))
            if any(want[t] is not None or not _same(want[t], self.state[t]) for t in _PLAYER_TAGS):
                header.append(" ".join(_tag(t, want[t]) for t in _PLAYER_TAGS))
            out.append("\n".join(header) + "\n")
        else:
            changed = [t for t in want if not _same(want[t], self.state[t])]
            plain = [_game_tag_text(t, want[t]) for t in changed if t not in _PLAYER_TAGS]
            lines.extend(plain)
            if any(t in _PLAYER_TAGS for t in changed):
                lines.append(" ".join(_tag(t, want[t]) for t in _PLAYER_TAGS))
        self.state.update(want)
        self.started = True

        lines.append(f"{_tag('Hand', str(obj['hand']))} {_tag('Dealer', obj['dealer'])}")
        before = []
        if "score_before" in obj:
            before.append(_tag("ScoreBefore", _side_text(obj["score_before"].items())))
        if "bags_before" in obj:
            before.append(_tag("BagsBefore", _side_text(obj["bags_before"].items())))
        if before:
            lines.append(" ".join(before))
        if rec.deal is not None:
            # each seat's cards as PBN lists them (suits S H D C, ace down, jokers last), so the tag
            # reads as a person expects; DealOrder keeps a recorded order that differs
            text = format_pbn_deal({s: None if rec.deal[s] is None else sort_cards(rec.deal[s]) for s in SEATS}, Seat.N)
            lines.append(_tag("Deal", text))
            pbn = parse_pbn_deal(text)
            moved = [s for s in SEATS if list(rec.deal[s] or ()) != list(pbn[s] or ())]
            if moved:
                lines.append(_tag("DealOrder", ", ".join(f"{s} " + " ".join(rec.deal[s] or ()) for s in moved)))
        lines.append(_tag("Bids", ", ".join(f"{b.seat} {format_bid_text(b.value, b.nil, b.blind)}" for b in rec.bids)))
        if rec.tricks is not None:
            lines.append("[Play]")
            for t in rec.tricks:
                text = f"{t.leader}:" + "".join(" " + c for c in t.cards)
                if t.winner is not None:
                    text += f" > {t.winner}"
                lines.append(text)
        if rec.taken is not None:
            lines.append(_tag("Taken", " ".join(f"{s} {rec.taken[s]}" for s in SEATS if rec.taken[s] is not None)))
        if rec.score is not None:
            sc = []
            for name, field in (("Score", "points"), ("Total", "total"), ("Bags", "bags")):
                parts = [(str(side), getattr(rec.score[side], field)) for side in SIDES]
                if any(v is not None for _, v in parts):
                    sc.append(_tag(name, _side_text(parts)))
            if sc:
                lines.append(" ".join(sc))
        if rec.winner is not None:
            lines.append(_tag("Winner", str(rec.winner)))
        for key, value in rec.extras.items():
            text = jsontext.dumps(value)
            if _extension_tag_ok(key):
                lines.append(_tag(key, text))
            else:
                lines.append(_tag("Extra", jsontext.dumps({key: value})))
        out.append("\n".join(lines) + "\n")
        return out


def iter_dump(records: Iterable[HandRecord]) -> Iterator[str]:
    """The SPN text of records, block by block (each block ends with a newline; blocks are
    separated by one blank line)."""
    for block in _iter_blocks(records):
        if block is not None:
            yield block


def dumps(records: Iterable[HandRecord]) -> str:
    """Records as SPN text (see :func:`dump`)."""
    return "".join(iter_dump(records))


def dump(records: Iterable[HandRecord], fp: IO[str]) -> int:
    """Write records as SPN to a text stream, streaming; returns how many hands were written.

    Per game (a run of records with the same ``game_id``) a header block of game-level
    tags, then one block per hand.  Reading the text back gives equal records
    (``source_file``, ``source_line`` and ``warnings`` aside).
    """
    n = 0
    for block in _iter_blocks(records):
        if block is None:
            n += 1
        else:
            fp.write(block)
    return n


def _iter_blocks(records: Iterable[HandRecord]) -> Iterator[str | None]:
    """Block texts (a blank line before each but the first); ``None`` after each record's blocks."""
    writer = _Writer()
    first = True
    for rec in records:
        for block in writer.blocks(rec):
            yield block if first else "\n" + block
            first = False
        yield None


__all__ = [
    "GAME_TAGS",
    "HAND_TAGS",
    "dump",
    "dumps",
    "format_bid_text",
    "format_rules_text",
    "iter_dump",
    "iter_spn",
    "load",
    "loads",
    "parse_bid_text",
    "parse_number",
    "parse_rules_text",
    "sniff",
]
