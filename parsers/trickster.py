"""Importer for Trickster Cards "PTN" hand records (FORMATS.md section 4).

PTN is the PBN-derived text the Trickster Cards site exports.  One hand is a block of tag pairs::

    [Event "Trickster Cards: Play Spades - 2v2 Joker-Joker-Deuce-Deuce to 500, min bid 4, ..."]
    [UTCDate "2024.03.01"] [UTCTime "20:15:00"]
    [GameOptionsJson "{\\"variation\\":3,\\"minBid\\":4,...}"]
    [GameScores "S:-40 91 -40 91"]          running totals after the hand, seats clockwise from S
    [West "Wren (Auto)"] ...                   "(Auto)" marks a site bot; the name is kept as written
    [Dealer "S"]
    [Deal "N:QJ5.KQJT85.Q86.3 AT87642.6.732..BL ..."]   PBN deal; a fifth group holds jokers (H big, L little)
    [Auction "W"]
    2 1 7 3                                    bids, clockwise from the named seat
    [Play "W"]
    CK C3 D2 C4                                one line per trick, in FIXED seat columns W N E S
    ...

The ``[Play]`` columns are seats, not play order (as in PBN): the seat named in the tag leads trick 1,
and every later trick is led by the winner of the one before, so the importer replays the winners
with the game's deck (:class:`~spadework.parsers.cards.Deck`) to put each trick in play order.  Cards in play
lines are written suit first (``CA``, ``H3``) and the jokers ``JH`` (high, the big joker ``BJ``) and
``JL`` (low, ``LJ``); in the classic deck, which has no jokers, ``JH`` is the jack of hearts.

``[GameOptionsJson]`` holds the site's rule options; :func:`map_options` turns them into a ``rules``
object of RULES.md section 5 (``{"preset": "nyc", "min_side_bid": 4, ...}``) and a warning sentence for
each option it cannot express (kept on the record's ``warnings``, never dropped silently).  The
original tags are kept on the record's ``extras`` under ``x_trickster``.

A file may hold several hands: a hand ends at a blank line, or where a tag the hand already has
appears again.  A line starting with ``%`` is a comment (PBN's), wherever it stands.  A hand that cannot be read yields one
:class:`~spadework.parsers.model.LoadError` per faulty line (every reason is reported: a tag missing its
closing ``]``, unescaped quotes in a value, a file cut off inside a tag, a bad card...) and the
next hand is read as usual.

``game_id`` is the file name's stem plus the UTC date and time (``issue335_spades-20250724T053037``);
hands sharing a game id within one file are numbered 1, 2, ... in file order, a hand that cannot
be read keeping its number (so the checker names the gap: ``HAND_MISSING``), and a ``[Hand]`` or
``[Board]`` tag overrides the number.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from spadework.parsers import jsontext
from spadework.parsers.cards import (
    JOKER_DECK,
    JOKERS,
    NYC_DECK,
    STANDARD_CARDS,
    STANDARD_DECK,
    CardError,
    Deck,
    make_deck,
    parse_card,
    parse_pbn_deal,
)
from spadework.parsers.io import TruncatedFile, decode, iter_lines, iter_text_lines, raw_text, strip_gz
from spadework.parsers.model import Bid, HandRecord, LoadError, SideScore, Trick
from spadework.parsers.seats import SEATS, Seat, Side

Item = HandRecord | LoadError

JOKER_ALIASES: dict[str, str] = {"JH": "BJ", "JL": "LJ"}
"""Trickster's joker codes in play lines: ``JH`` = joker high = big joker, ``JL`` = little joker."""

NO_CARD = frozenset({"-", "--", "?", "??"})
"""Play-line tokens meaning "no card in this column" (an unfinished trick)."""

# --- decks of Trickster's variations -----------------------------------------------------------


def deck_rules(deck: Deck) -> dict[str, list[str]]:
    """The deck keys of a ruleset (``removed_cards``, ``extra_cards``, ``trump_order``) describing ``deck``."""
    return {
        "removed_cards": [c for c in STANDARD_CARDS if c not in deck],
        "extra_cards": [c for c in deck.cards if c not in STANDARD_CARDS],
        "trump_order": list(deck.trump_order),
    }


JOKER_JOKER_ACE_DECK = make_deck("trickster-joker-joker-ace", removed=["2C", "2H"], extra=JOKERS)
"""Joker-Joker-Ace: 52 + BJ + LJ minus 2C and 2H; trumps BJ LJ AS KS ... 2S (2D is a plain diamond).

Trickster deals one joker deck for all its joker variations (its bots use the same deck type for
Joker-Joker-Ace, Joker-Joker-Deuce-Ace and Joker-Joker-Deuce-Deuce), so the removed deuces are
the ones the ``nyc`` preset removes.  This reading is ours; no sample shows a 2C or 2H missing from
a Joker-Joker-Ace deal yet."""


@dataclass(frozen=True)
class Variation:
    """One of Trickster's Spades deck variations (the ``variation`` option)."""

    number: int
    name: str
    """The name as Trickster's Event text writes it (``Joker-Joker-Deuce-Deuce``)."""
    deck: Deck
    rules: dict[str, Any]
    """The ruleset fragment: a preset and, where no preset has this deck, the deck keys."""
    confirmed: bool
    """True when a real sample ties the number to the name (issue 335: 3, issue 231: 1)."""


VARIATIONS: dict[int, Variation] = {
    0: Variation(0, "Classic", STANDARD_DECK, {"preset": "standard"}, False),
    1: Variation(1, "Joker-Joker-Ace", JOKER_JOKER_ACE_DECK, {"preset": "standard", **deck_rules(JOKER_JOKER_ACE_DECK)}, True),
    2: Variation(2, "Joker-Joker-Deuce-Ace", JOKER_DECK, {"preset": "standard", **deck_rules(JOKER_DECK)}, False),
    3: Variation(3, "Joker-Joker-Deuce-Deuce", NYC_DECK, {"preset": "nyc"}, True),
}
"""Variation numbers we can read.  1 and 3 are confirmed by samples; 0 and 2 follow the order of
Trickster's variations (classic first, then the three joker decks) and are reported as a guess
unless the Event text names them."""


def _variation_in_event(event: str | None) -> Variation | None:
    if not event:
        return None
    low = event.lower()
    for v in sorted(VARIATIONS.values(), key=lambda v: -len(v.name)):
        if v.number != 0 and v.name.lower() in low:
            return v
    return None


# --- GameOptionsJson -> rules -------------------------------------------------------------------


@dataclass(frozen=True)
class MappedOptions:
    """What :func:`map_options` makes of a game's options.

    ``rules`` is the ``rules`` object of the record (``{"preset": ..., option: value}``, RULES.md
    section 5), ``deck`` the deck the play is replayed with, ``warnings`` one sentence per option
    that could not be expressed (or was read on a guess).
    """

    rules: dict[str, Any]
    deck: Deck
    warnings: tuple[str, ...]


_MINUS = "[-\u2212\u2013]"
_MERCY_RE = re.compile(rf"\bto\s+\d+\s*/\s*{_MINUS}\s*(\d+)", re.IGNORECASE)
_BLIND_RE = re.compile(r"\bblind\s+(\d+)\s*\+?\s*if\s+losing\s+by\s+(\d+)", re.IGNORECASE)


def _flag(value: Any) -> bool | None:
    """A JSON true/false (or 0/1) as a bool; ``None`` for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


_WHOLE_LIMIT = 2**31 - 1
"""An option's number beyond this is no score or count a game uses (and no table could hold it)."""


def _whole(value: Any) -> int | None:
    """An option's whole number, or ``None`` (not a number, a fraction, or beyond :data:`_WHOLE_LIMIT`
    either way: the caller warns and keeps the default)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    n = int(value)
    return n if -_WHOLE_LIMIT <= n <= _WHOLE_LIMIT else None


def map_options(options: Mapping[str, Any] | None, event: str | None = None) -> MappedOptions:
    """Map Trickster's ``[GameOptionsJson]`` options onto our ruleset (RULES.md sections 2 and 5).

    ``event`` is the ``[Event]`` text, which spells some options out ("to 350/−200" gives the
    mercy rule's losing score; "Joker-Joker-Ace" names the deck).  Mapping (Trickster key and value
    -> our key):

    ======================  ==========================================================
    ``variation`` 0/1/2/3   deck: standard / Joker-Joker-Ace / Joker-Joker-Deuce-Ace /
                            ``nyc`` (Joker-Joker-Deuce-Deuce); see :data:`VARIATIONS`
    ``gameOverScore`` N     ``target`` N
    ``failBidScoring`` 1    −10 × bid when set: the standard rule, nothing to add
    ``tenBagsPenalty``      false -> ``bag_limit`` 0; true -> standard
    ``leadSpades`` 2        ``spades_lead_any_time`` true
    ``mercyRule``           true -> ``losing_score`` −N from the Event's "to T/−N"
    ``minBid`` N            ``min_side_bid`` N (a side's contract; sample 335 has a 1 bid)
    ``tenForTwoHundred``    ``ten_for_two_hundred``
    ``nilOrZero`` 0/1       1 -> ``nil`` false ("no Nil": a 0 bid is a plain zero)
    ======================  ==========================================================

    Everything else (``blindNonNilBids``, ``firstHandBidsItself``, ``noWatching``, unknown keys and
    unknown values) gives a warning sentence and changes nothing.  Never raises for odd values.
    """
    options = dict(options or {})
    warnings: list[str] = []
    extra: dict[str, Any] = {}

    # the deck
    named = _variation_in_event(event)
    variation: Variation | None = None
    if "variation" in options:
        raw = options.pop("variation")
        number = _whole(raw)
        variation = VARIATIONS.get(number) if number is not None else None
        if variation is None:
            if named is not None:
                warnings.append(
                    f"Option variation {raw!r} is not known; the deck is taken from the Event text ({named.name})."
                )
                variation = named
            else:
                warnings.append(f"Option variation {raw!r} is not known; the hand is read with the standard 52-card deck.")
                variation = VARIATIONS[0]
        elif named is not None and named is not variation:
            warnings.append(
                f"Option variation {number} ({variation.name}) disagrees with the Event text ({named.name}); "
                f"the option is used."
            )
        elif named is None and not variation.confirmed:
            warnings.append(
                f"Option variation {number} is read as {variation.name} on a guess (Trickster's order of "
                f"variations); no sample confirms it."
            )
    elif named is not None:
        variation = named
    else:
        variation = VARIATIONS[0]
    rules: dict[str, Any] = dict(variation.rules)

    for key, value in options.items():
        if key == "gameOverScore":
            n = _whole(value)
            if n is not None and n > 0:
                extra["target"] = n
            else:
                warnings.append(f"Option gameOverScore {value!r} is not a score; the target stays 500.")
        elif key == "failBidScoring":
            if _whole(value) != 1:
                warnings.append(
                    f"Option failBidScoring {value!r} is not known (only 1, −10 × bid when set, is); "
                    f"a set is scored the standard way."
                )
        elif key == "tenBagsPenalty":
            flag = _flag(value)
            if flag is False:
                extra["bag_limit"] = 0
            elif flag is None:
                warnings.append(f"Option tenBagsPenalty {value!r} is not true or false; the standard bag penalty is kept.")
        elif key == "leadSpades":
            n = _whole(value)
            if n == 2:
                extra["spades_lead_any_time"] = True
            else:
                warnings.append(
                    f"Option leadSpades {value!r} is not known (only 2, lead spades any time, is); "
                    f"spades may be led once broken, as standard."
                )
        elif key == "mercyRule":
            flag = _flag(value)
            if flag is False:
                continue
            m = _MERCY_RE.search(event or "")
            if m:
                extra["losing_score"] = -int(m.group(1))
            else:
                warnings.append(
                    f"Option mercyRule {value!r} is on but the Event text does not give the losing score "
                    f"(as in 'to 350/−200'); no losing score is set."
                )
        elif key == "minBid":
            n = _whole(value)
            if n is not None and 0 <= n <= 13:
                if n > 0:
                    extra["min_side_bid"] = n
            else:
                warnings.append(f"Option minBid {value!r} is not a number of tricks; no minimum bid is set.")
        elif key == "tenForTwoHundred":
            flag = _flag(value)
            if flag is True:
                extra["ten_for_two_hundred"] = True
            elif flag is None:
                warnings.append(f"Option tenForTwoHundred {value!r} is not true or false; 10-for-200 is off.")
        elif key == "nilOrZero":
            n = _whole(value)
            if n == 1:
                extra["nil"] = False
            elif n != 0:
                warnings.append(f"Option nilOrZero {value!r} is not known (0 = nil, 1 = zero); nil stays allowed.")
        elif key == "blindNonNilBids":
            if _flag(value) is False:
                continue
            m = _BLIND_RE.search(event or "")
            if m:
                low, behind = int(m.group(1)), int(m.group(2))
                extra["blind_bids"] = {"values": list(range(low, 14)), "behind_by": behind, "partner_bids": True}
                warnings.append(
                    f"Option blindNonNilBids {value!r} (the Event text says: blind {low}+ if losing by {behind}) is "
                    f"read as blind bids of {low}..13 for a side behind by {behind} or more, its partner bidding "
                    f"as usual; Trickster's points for a blind bid are not in the log, so a blind bid scores "
                    f"double (20 a trick made or set)."
                )
            else:
                warnings.append(
                    f"Option blindNonNilBids {value!r} has no equivalent without the Event text's 'blind N+ if "
                    f"losing by M'; a blind bid in this game will be reported as not allowed."
                )
        elif key == "firstHandBidsItself":
            if _flag(value) is False:
                continue
            said = " (the Event text says: 1st hand bids itself)" if "bids itself" in (event or "").lower() else ""
            warnings.append(
                f"Option firstHandBidsItself {value!r}{said} has no equivalent; the first hand's bids are "
                f"checked like any other."
            )
        elif key == "noWatching":
            if _flag(value) is False:
                continue
            warnings.append(f"Option noWatching {value!r} is a table setting (no spectators), not a rule of play; ignored.")
        else:
            warnings.append(f"Option {key} {value!r} is not known to this importer; ignored.")
    rules.update(extra)
    return MappedOptions(rules, variation.deck, tuple(warnings))


# --- tag scanning --------------------------------------------------------------------------------

_TAG_NAME = re.compile(r"\[\s*([A-Za-z][A-Za-z0-9_]*)")


@dataclass
class _Tag:
    name: str
    value: str
    line: int


@dataclass
class _Problem:
    line: int
    message: str
    raw: str


@dataclass
class _Open:
    """A tag whose value is not closed by the end of its line."""

    name: str
    value: str
    line: int
    raw: str


def _scan_tag_line(text: str, n: int) -> tuple[list[_Tag], list[_Problem], _Open | None]:
    """Read the tag pairs on one line starting with ``[``.

    Returns the good tags, the problems, and an unterminated tag (its value runs to the end of the
    line), which the caller words as "cut off" when the file ends there.
    """
    tags: list[_Tag] = []
    problems: list[_Problem] = []
    pos, end = 0, len(text)
    while pos < end:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            break
        if text[pos] in ";%":  # a trailing comment
            break
        m = _TAG_NAME.match(text, pos)
        if not m:
            problems.append(_Problem(n, f"unexpected text {text[pos:pos + 30]!r} after a tag", text))
            break
        name = m.group(1)
        pos = m.end()
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end or text[pos] != '"':
            problems.append(_Problem(n, f"[{name}] has no quoted value", text))
            break
        pos += 1
        start = pos
        value_chars: list[str] = []
        closed = False
        while pos < end:
            ch = text[pos]
            if ch == "\\" and pos + 1 < end:
                value_chars.append(text[pos + 1])
                pos += 2
                continue
            if ch == '"':
                closed = True
                break
            value_chars.append(ch)
            pos += 1
        if not closed:
            return tags, problems, _Open(name, text[start:], n, text)
        pos += 1  # past the closing quote
        while pos < end and text[pos].isspace():
            pos += 1
        if pos < end and text[pos] == "]":
            tags.append(_Tag(name, "".join(value_chars), n))
            pos += 1
            continue
        rest = text.rstrip()
        if pos >= end:
            problems.append(_Problem(n, f"[{name}] tag is missing its closing ']'", text))
            tags.append(_Tag(name, "".join(value_chars), n))  # kept only to name the hand's parts
            return tags, problems, None
        if rest.endswith('"]') and len(rest) - 2 >= pos:
            whole = rest[start : rest.rfind('"]')]
            problems.append(
                _Problem(
                    n,
                    f"[{name}] value has unescaped '\"' inside it (write \\\" for a quote within a tag value): "
                    f"{_short(whole)}",
                    text,
                )
            )
            return tags, problems, None
        problems.append(_Problem(n, f"[{name}] value is followed by {text[pos:pos + 30]!r} instead of ']'", text))
        return tags, problems, None
    return tags, problems, None


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- blocks (one hand each) -----------------------------------------------------------------------


@dataclass
class _Block:
    lines: list[tuple[int, str]] = field(default_factory=list)
    first: int | None = None
    tags: dict[str, _Tag] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    data: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    current: str | None = None
    problems: list[_Problem] = field(default_factory=list)
    open_tags: list[_Open] = field(default_factory=list)

    @property
    def has_content(self) -> bool:
        return self.first is not None

    def raw(self) -> str:
        return "\n".join(t for _, t in self.lines)


def _strip_comment(text: str) -> str:
    text = re.sub(r"\{[^}]*\}", " ", text)
    i = text.find(";")
    return text[:i] if i >= 0 else text


def _iter_blocks(lines: Iterable[tuple[int, bytes]]) -> Iterator[_Block]:
    block = _Block()
    for n, raw in lines:
        try:
            text = decode(raw)
        except ValueError as exc:
            if block.first is None:
                block.first = n
            block.lines.append((n, raw_text(raw)))
            block.problems.append(_Problem(n, str(exc), raw_text(raw)))
            continue
        stripped = text.strip()
        if not stripped:
            if block.has_content:
                yield block
                block = _Block()
            continue
        if stripped.startswith("%"):  # a comment line: kept in the raw text only
            block.lines.append((n, text))
            continue
        if stripped.startswith("["):
            m = _TAG_NAME.match(stripped)
            if m and m.group(1) in block.names and block.has_content:
                yield block
                block = _Block()
            tags, problems, open_tag = _scan_tag_line(stripped, n)
            if block.first is None:
                block.first = n
            block.lines.append((n, text))
            block.problems.extend(problems)
            for tag in tags:
                block.names.add(tag.name)
                block.tags.setdefault(tag.name, tag)
                block.current = tag.name
            if open_tag is not None:
                block.names.add(open_tag.name)
                block.open_tags.append(open_tag)
                block.current = None
            elif problems and not tags and m:
                block.names.add(m.group(1))
                block.current = None
            continue
        # a data line (bids, plays) belongs to the last tag
        if block.first is None:
            block.first = n
        block.lines.append((n, text))
        body = _strip_comment(stripped).strip()
        if not body:
            continue
        if block.current is None:
            block.problems.append(_Problem(n, f"line {_short(body)!r} is not inside any tag", text))
            continue
        block.data.setdefault(block.current, []).append((n, body))
    if block.has_content:
        yield block


# --- building a record ------------------------------------------------------------------------------

_HAND_TAGS = frozenset(("Deal", "Dealer", "Auction", "Play"))
"""Tags of which a block needs one to be a hand (and count as one for the numbering)."""
_GAME_TAGS = {"Event", "Deal", "Dealer", "Auction", "Play", "GameScores", "North", "East", "South", "West", "Hand", "Board"}
_PLAYER_TAGS = {Seat.N: "North", Seat.E: "East", Seat.S: "South", Seat.W: "West"}
_BLIND_NIL = {"BN", "BNIL", "BLINDNIL", "BLIND-NIL", "BLIND_NIL"}
_NIL = {"NIL", "N", "0"}


def _bid_tokens(line: str) -> list[str]:
    """The bids of an auction line, one token each: the site writes a blind bid in two words
    (``Blind Nil``, ``Blind 6``), read as ``bn`` and ``b6``."""
    words = line.split()
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w.upper() == "BLIND" and (nxt.upper() == "NIL" or (nxt.isascii() and nxt.isdigit())):
            out.append("bn" if nxt.upper() == "NIL" else "b" + nxt)
            i += 2
            continue
        out.append(w)
        i += 1
    return out


def _read_bid(token: str, seat: Seat) -> Bid:
    """A Trickster bid token: a number, ``nil``; ``bn`` blind nil, ``b6`` blind six (our reading;
    the words ``Blind Nil`` and ``Blind 6`` become these in :func:`_bid_tokens`)."""
    t = token.strip().upper()
    if t in _BLIND_NIL:
        return Bid(seat, 0, nil=True, blind=True)
    if t in _NIL:
        return Bid(seat, 0, nil=True)
    blind = False
    if t.startswith("B") and t[1:].isascii() and t[1:].isdigit():
        blind, t = True, t[1:]
    if t.isascii() and t.isdigit():
        value = int(t)
        return Bid(seat, value, nil=value == 0, blind=blind)
    raise ValueError(f"bid {token!r} is not a bid (a number of tricks, nil, bn or b<number>, Blind Nil, Blind <number>)")


def _read_int(text: str) -> int:
    t = text.strip().replace("\u2212", "-")
    return int(t)


class _Reader:
    """Turns blocks of one source into records, keeping the per-file hand counters."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.stem = Path(strip_gz(os.path.basename(source))).stem or "trickster"
        self.hands_seen: dict[str, int] = {}

    # errors -------------------------------------------------------------------------------------
    def _errors(self, problems: list[_Problem]) -> Iterator[LoadError]:
        by_line: dict[int, list[_Problem]] = {}
        for p in problems:
            by_line.setdefault(p.line, []).append(p)
        for line in sorted(by_line):
            ps = by_line[line]
            yield LoadError(self.source, line, "; ".join(p.message for p in ps), ps[0].raw)

    def _game_id(self, block: _Block) -> str:
        _, stamp = _date_and_stamp(_value(block, "UTCDate"), _value(block, "UTCTime"))
        return f"{self.stem}-{stamp}" if stamp else self.stem

    def _number(self, block: _Block) -> int | None:
        """The block's place among the hands of its game in this file (1, 2, ...), counted whether
        or not the hand can be read; ``None`` for a block that is no hand (no deal, bids or play)."""
        if not block.names & _HAND_TAGS:
            return None
        key = self._game_id(block)
        self.hands_seen[key] = self.hands_seen.get(key, 0) + 1
        return self.hands_seen[key]

    def items(self, block: _Block, at_eof: bool) -> Iterator[Item]:
        count = self._number(block)
        problems = list(block.problems)
        last_line = block.lines[-1][0] if block.lines else None
        for o in block.open_tags:
            if at_eof and o.line == last_line:
                problems.append(_Problem(o.line, self._cut_off_message(block, o), o.raw))
            else:
                problems.append(_Problem(o.line, f"[{o.name}] value is missing its closing '\"]'", o.raw))
        if problems:
            yield from self._errors(problems)
            return
        record = self._record(block, problems, count or 1)
        if problems or record is None:
            yield from self._errors(problems)
            return
        yield record

    @staticmethod
    def _cut_off_message(block: _Block, o: _Open) -> str:
        msg = f"the file ends inside the [{o.name}] tag (cut off: no closing '\"]')"
        if o.name == "Deal":
            body = o.value.split(":", 1)[1] if ":" in o.value[:3] else o.value
            msg += f" after {len(body.split())} of 4 hands"
        missing = [t for t in ("Auction", "Play") if t not in block.names]
        if missing:
            msg += "; the hand has no " + " or ".join(f"[{t}]" for t in missing)
        return msg

    # the hand -------------------------------------------------------------------------------------
    def _record(self, block: _Block, problems: list[_Problem], count: int) -> HandRecord | None:
        tags = block.tags
        first = block.first or 1
        raw = block.raw()

        def problem(tag: _Tag | None, message: str, line: int | None = None) -> None:
            n = line if line is not None else (tag.line if tag is not None else first)
            problems.append(_Problem(n, message, raw))

        def val(name: str) -> str | None:
            return _value(block, name)

        code = val("GameCode")
        if code is not None and code.lower() != "spades":
            problem(tags["GameCode"], f"[GameCode] is {code!r}: not a Spades hand")
            return None

        event = val("Event")
        options: dict[str, Any] | None = None
        if "GameOptionsJson" in tags:
            t = tags["GameOptionsJson"]
            try:
                obj = jsontext.loads_strict(t.value)  # whole numbers of any size stay whole
            except orjson.JSONDecodeError as exc:
                problem(t, f"[GameOptionsJson] is not valid JSON ({str(exc).split(':', 1)[0]}): {_short(t.value)}")
                obj = None
            except jsontext.RepeatedKey as exc:
                problem(t, f"[GameOptionsJson]: {exc}")
                obj = None
            if obj is not None and not isinstance(obj, dict):
                problem(t, f"[GameOptionsJson] must hold a JSON object, not {type(obj).__name__}")
            elif obj is not None and (why := jsontext.unwritable(obj)):  # it is kept in x_trickster
                problem(t, f"[GameOptionsJson] cannot be stored ({why})")
            elif obj is not None:
                options = obj
        mapped = map_options(options, event)
        warnings = list(mapped.warnings)

        # deal and dealer
        deal = None
        deal_first: Seat | None = None
        if "Deal" in tags:
            t = tags["Deal"]
            try:
                hands = parse_pbn_deal(t.value)
                deal_first = Seat.parse(t.value.strip()[0])
                if any(h is None for h in hands.values()):
                    unknown = " ".join(str(s) for s in SEATS if hands[s] is None)
                    warnings.append(f"The deal does not show every hand (unknown: {unknown}); no deal is recorded.")
                else:
                    deal = tuple(tuple(hands[s]) for s in SEATS)  # type: ignore[arg-type]
            except ValueError as exc:
                problem(t, f"[Deal]: {exc}")
        dealer: Seat | None = None
        if "Dealer" in tags:
            try:
                dealer = Seat.parse(val("Dealer"))
            except ValueError:
                problem(tags["Dealer"], f"[Dealer] {val('Dealer')!r} is not a seat (expected N, E, S or W)")
        elif deal_first is not None:
            dealer = deal_first
            warnings.append(f"No [Dealer] tag; the dealer is taken to be {deal_first}, the first seat of the [Deal].")
        else:
            problem(None, "no [Dealer] tag and no [Deal] to take the dealer from")

        # bids
        bids: list[Bid] = []
        if "Auction" not in tags:
            problem(None, "no [Auction] tag: the hand's bids are missing")
        else:
            t = tags["Auction"]
            try:
                seat = Seat.parse(t.value)
            except ValueError:
                problem(t, f"[Auction] {t.value!r} is not a seat (expected N, E, S or W)")
            else:
                for n, line in block.data.get("Auction", []):
                    for token in _bid_tokens(line):
                        if token in NO_CARD:  # "-": no bid from this seat
                            seat = seat.left
                            continue
                        try:
                            bids.append(_read_bid(token, seat))
                        except ValueError as exc:
                            problem(None, str(exc), n)
                        seat = seat.left
                if not block.data.get("Auction"):
                    problem(t, "[Auction] is followed by no line of bids")
        if options and _whole(options.get("nilOrZero")) == 1:
            for b in bids:
                if b.nil and not b.blind:
                    warnings.append(
                        f"{b.seat} bid 0, a zero bid under nilOrZero 1 (no nil); it is recorded as a nil, "
                        f"which these rules do not allow."
                    )

        for name, lines in block.data.items():
            if name not in ("Auction", "Play"):
                for n, text in lines:
                    warnings.append(f"Line {n} ({_short(text, 30)!r}) under [{name}] is not read by this importer.")

        # play
        tricks: tuple[Trick, ...] | None = None
        if "Play" in tags:
            t = tags["Play"]
            try:
                leader = Seat.parse(t.value)
            except ValueError:
                problem(t, f"[Play] {t.value!r} is not a seat (expected N, E, S or W)")
            else:
                tricks = _derive_tricks(leader, block.data.get("Play", []), mapped.deck, problem)

        # scores
        score = None
        if "GameScores" in tags:
            t = tags["GameScores"]
            try:
                score, more = _read_scores(t.value)
                warnings.extend(more)
            except ValueError as exc:
                problem(t, f"[GameScores]: {exc}")

        # identity
        hand_no: int | None = None
        for name in ("Hand", "Board"):
            if name in tags:
                try:
                    hand_no = int(val(name) or "")
                    if hand_no < 1:
                        raise ValueError
                except ValueError:
                    problem(tags[name], f"[{name}] {val(name)!r} is not a hand number (1 or more)")
                break

        if problems:
            return None

        date, _ = _date_and_stamp(val("UTCDate"), val("UTCTime"))
        game_id = self._game_id(block)
        if hand_no is None:
            hand_no = count
        if score is not None and hand_no == 1 and "Hand" not in tags and "Board" not in tags:
            warnings.append(
                "[GameScores] holds running totals after this hand, but the file does not say which hand of "
                "the game this is nor the score before it; the totals are recorded as written."
            )

        players = tuple(_player(val(_PLAYER_TAGS[s])) for s in SEATS)
        extras: dict[str, Any] = {}
        kept = {name: tag.value for name, tag in tags.items() if name not in _GAME_TAGS}
        if options is not None:
            kept["GameOptionsJson"] = options
        if kept:
            extras["x_trickster"] = kept

        assert dealer is not None
        return HandRecord(
            game_id=game_id,
            hand=hand_no,
            dealer=dealer,
            players=players,  # type: ignore[arg-type]
            bids=tuple(bids),
            rules=mapped.rules,
            event=event,
            date=date,
            deal=deal,
            tricks=tricks,
            score=score,
            extras=extras,
            warnings=tuple(warnings),
            source_file=self.source,
            source_line=first,
        )


def _value(block: _Block, name: str) -> str | None:
    """A tag's value, stripped (``None`` when the block lacks the tag)."""
    t = block.tags.get(name)
    return t.value.strip() if t is not None else None


def _player(name: str | None) -> str | None:
    if name is None or name in ("", "?", "-"):
        return None
    return name


def _date_and_stamp(utc_date: str | None, utc_time: str | None) -> tuple[str | None, str]:
    """ISO date (``2025-07-24``) and the game-id stamp (``20250724T053037``) from PBN-style tags."""
    date = None
    stamp = ""
    if utc_date:
        m = re.fullmatch(r"(\d{4})[.\-/](\d{2})[.\-/](\d{2})", utc_date)
        if m:
            date = "-".join(m.groups())
            stamp = "".join(m.groups())
        else:
            stamp = re.sub(r"[^0-9A-Za-z]", "", utc_date)
    if utc_time:
        digits = re.sub(r"[^0-9]", "", utc_time)
        if digits:
            stamp = f"{stamp}T{digits}" if stamp else f"T{digits}"
    return date, stamp


def _read_scores(text: str) -> tuple[tuple[SideScore, SideScore], list[str]]:
    """``"S:162 527 162 527"``: running totals per seat clockwise from the named seat (or per side,
    two values, the named seat's side first).  Returns the recorded totals and warnings."""
    t = text.strip()
    if len(t) < 2 or t[1] != ":":
        raise ValueError(f"{text!r} does not start with a seat and ':' (e.g. 'S:162 527 162 527')")
    first = Seat.parse(t[0])
    try:
        values = [_read_int(v) for v in t[2:].split()]
    except ValueError:
        raise ValueError(f"{text!r} holds something that is not a whole number") from None
    totals: dict[Side, int | None] = {}
    warnings: list[str] = []
    if len(values) == 4:
        by_seat = dict(zip(first.clockwise(), values))
        for side in (Side.NS, Side.EW):
            a, b = side.seats
            if by_seat[a] != by_seat[b]:
                warnings.append(
                    f"[GameScores] gives partners {a} and {b} different totals ({by_seat[a]} and {by_seat[b]}); "
                    f"no {side} total is recorded."
                )
                totals[side] = None
            else:
                totals[side] = by_seat[a]
    elif len(values) == 2:
        totals[first.side] = values[0]
        totals[first.side.other] = values[1]
    else:
        raise ValueError(f"{text!r} has {len(values)} totals, expected 4 (one per seat) or 2 (one per side)")
    return (SideScore(total=totals[Side.NS]), SideScore(total=totals[Side.EW])), warnings


def _derive_tricks(first_leader: Seat, lines: list[tuple[int, str]], deck: Deck, problem) -> tuple[Trick, ...]:
    """Turn ``[Play]`` lines (fixed seat columns clockwise from ``first_leader``) into tricks in play order.

    Trick 1 is led by ``first_leader``; each later trick by the winner of the one before under ``deck``.
    Reports through ``problem(None, message, line)``.
    """
    columns = first_leader.clockwise()
    leader = first_leader
    tricks: list[Trick] = []
    # JH / JL are the jokers in a joker deck; in the classic deck, which has none, JH can only be the
    # jack of hearts written rank first (FORMATS.md reads both orders)
    aliases = JOKER_ALIASES if any(j in deck.cards for j in JOKER_ALIASES.values()) else None
    body = [(n, line) for n, line in lines if line.strip() != "*"]
    if len(body) > 13:
        problem(None, f"[Play] has {len(body)} lines; a hand has at most 13 tricks", body[13][0])
        return ()
    for k, (n, line) in enumerate(body, 1):
        tokens = line.split()
        if len(tokens) > 4:
            problem(None, f"trick {k} has {len(tokens)} cards; a trick has at most 4", n)
            return tuple(tricks)
        by_seat: dict[Seat, str] = {}
        bad = False
        for seat, token in zip(columns, tokens):
            if token in NO_CARD:
                continue
            try:
                by_seat[seat] = parse_card(token, aliases=aliases)
            except CardError as exc:
                problem(None, f"trick {k}: {exc}", n)
                bad = True
        if bad:
            return tuple(tricks)
        cards: list[str] = []
        missing: Seat | None = None
        for seat in leader.clockwise():
            if seat in by_seat:
                if missing is not None:
                    problem(None, f"trick {k}: {seat} has a card but {missing}, who plays before {seat}, has none", n)
                    return tuple(tricks)
                cards.append(by_seat[seat])
            elif missing is None:
                missing = seat
        if not cards:
            problem(None, f"trick {k} has no cards", n)
            return tuple(tricks)
        tricks.append(Trick(leader, tuple(cards)))
        if len(cards) == 4:
            leader = leader.after(deck.winner_index(cards))
        elif k < len(body):
            problem(None, f"trick {k} has only {len(cards)} cards but more tricks follow", n)
            return tuple(tricks)
    return tuple(tricks)


# --- public streams ------------------------------------------------------------------------------------


def iter_ptn(lines: Iterable[tuple[int, bytes]], source: str) -> Iterator[Item]:
    """Parse numbered raw lines of PTN text (see the module docstring)."""
    reader = _Reader(source)
    pending: _Block | None = None
    try:
        for block in _iter_blocks(lines):
            if pending is not None:
                yield from reader.items(pending, at_eof=False)
            pending = block
    except TruncatedFile:
        # a cut-off .gz: the hand read whole before the damage still counts (the one the damage cut
        # is left to the error, which names where reading stopped)
        if pending is not None:
            yield from reader.items(pending, at_eof=False)
        raise
    if pending is not None:
        yield from reader.items(pending, at_eof=True)


def load(path: str | os.PathLike[str], source: str | None = None) -> Iterator[Item]:
    """Stream the hands of a Trickster PTN (or PBN-named) file, ``.gz`` read transparently.

    Yields a :class:`HandRecord` per readable hand (``rules`` mapped from ``[GameOptionsJson]``,
    ``warnings`` naming every option that could not be mapped, ``score`` holding the ``[GameScores]``
    running totals as ``total``) and :class:`LoadError` objects (file, line, reason, raw text) for a
    hand that cannot be read, one per faulty line.  Never raises for bad content.
    ``source`` is the name recorded as ``source_file`` (default: the path); its stem starts the game id.
    """
    source = source or os.fspath(path)
    yield from iter_ptn(iter_lines(path), source)


def loads(text: str | bytes, source: str = "<string>") -> Iterator[Item]:
    """Stream the hands of PTN text (see :func:`load`)."""
    yield from iter_ptn(iter_text_lines(text), source)


def looks_like(head: bytes) -> bool:
    """True when the first bytes of a file look like a Trickster PTN export (for format sniffing)."""
    text = head.decode("utf-8", errors="replace")
    if re.search(r"^\s*%\s*PTN", text, re.MULTILINE):
        return True
    return "[GameOptionsJson" in text or ('[GameCode "Spades"]' in text and "[Deal" in text)


__all__ = [
    "JOKER_ALIASES",
    "JOKER_JOKER_ACE_DECK",
    "MappedOptions",
    "VARIATIONS",
    "Variation",
    "deck_rules",
    "iter_ptn",
    "load",
    "loads",
    "looks_like",
    "map_options",
]
