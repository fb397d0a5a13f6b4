"""The canonical JSON Lines format, ``spades-hand/1`` (FORMATS.md section 1).

One hand per line.  ``load``/``loads`` stream :class:`~spadework.parsers.model.HandRecord`
objects and :class:`~spadework.parsers.model.LoadError` objects for lines that cannot be
read; ``dump``/``dumps`` write records back.  ``.json`` files holding a single
object or an array of objects are read too.

:func:`record_from_obj` and :func:`record_to_obj` convert between the JSON
object of one hand and the record; the other formats reuse them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any

import orjson

from spadework.parsers import jsontext
from spadework.parsers.jsontext import TWICE, repeated_keys_by_item
from spadework.parsers.cards import CardError, parse_card, spellings
from spadework.parsers.io import TruncatedFile, decode, iter_lines, iter_text_lines, raw_text, read_whole, strip_gz, utf16_hint
from spadework.parsers.model import SCHEMA, Bid, HandRecord, LoadError, RecordError, SideScore, Trick
from spadework.parsers.seats import SEATS, SIDES, Seat, Side

Item = HandRecord | LoadError

KNOWN_KEYS = frozenset(
    "schema game_id hand event date table round rules players dealer score_before bags_before deal bids "
    "tricks taken score winner".split()
)


_BID_KEYS = frozenset(("seat", "bid", "blind"))
_TRICK_KEYS = frozenset(("leader", "cards", "winner"))
_SCORE_KEYS = frozenset(("points", "total", "bags"))

# --- reading ------------------------------------------------------------------------------------


def _need(obj: Mapping[str, Any], key: str) -> Any:
    if key not in obj or obj[key] is None:
        raise RecordError(f"missing required key '{key}'")
    return obj[key]


def _int(value: Any, what: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not value.is_integer()):
        raise RecordError(f"{what}: {value!r} is not a whole number")
    if minimum is not None and value < minimum:
        raise RecordError(f"{what}: {value!r} is below {minimum}")
    return int(value)


def _opt_int(value: Any, what: str) -> int | None:
    return None if value is None else _int(value, what)


def _str(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise RecordError(f"{what}: {value!r} is not text")
    return str(value)


def _seat(value: Any, what: str) -> Seat:
    try:
        return Seat.parse(value)
    except ValueError:
        raise RecordError(f"{what} {value!r} is not a seat (expected N, E, S or W)") from None


def _side(value: Any, what: str) -> Side:
    try:
        return Side.parse(value)
    except ValueError:
        raise RecordError(f"{what} {value!r} is not a side (expected NS or EW)") from None


def _card(value: Any, what: str) -> str:
    try:
        return parse_card(value)
    except CardError as exc:
        raise RecordError(f"{what}: {exc}") from None


_SPELLINGS = spellings()
"""Every exact written form of a card -> its code (``parse_card`` of each, from ``cards``)."""


def _cards(values: list, what: str) -> tuple[str, ...]:
    """The card codes of a list of written cards, as :func:`_card` of each: exact spellings are
    looked up at once, anything else (lower case, spaces, not a card) card by card, so an error
    names ``what[j]``."""
    try:
        return tuple(map(_SPELLINGS.__getitem__, values))
    except (KeyError, TypeError):  # TypeError: an unhashable value (a list, an object)
        return tuple(_card(c, f"{what}[{j}]") for j, c in enumerate(values))


def _keyed(value: Mapping, parse: Callable[[Any, str], Any], what: str) -> dict[Any, tuple[Any, Any]]:
    """``{seat or side: (key as written, value)}`` of an object keyed by seat or side.  Two keys that
    name the same one (``"N"`` and ``"n"``, ``"NS"`` and ``"SN"``) are an error, as a key given twice
    is: JSON does not say which counts."""
    got: dict[Any, tuple[Any, Any]] = {}
    for k, v in value.items():
        key = parse(k, f"{what} key")
        if key in got:
            raise RecordError(f"{what} gives {key} twice (keys {got[key][0]!r} and {k!r})")
        got[key] = (k, v)
    return got


def _seat_map(value: Any, what: str) -> dict[Seat, Any]:
    if not isinstance(value, Mapping):
        raise RecordError(f"{what} must be an object keyed by seat, not {type(value).__name__}")
    return {seat: v for seat, (_, v) in _keyed(value, _seat, what).items()}


def _side_pair(value: Any, what: str) -> tuple[int, int]:
    if not isinstance(value, Mapping):
        raise RecordError(f"{what} must be an object like {{\"NS\": 0, \"EW\": 0}}")
    got = {side: _int(v, f"{what}.{k}") for side, (k, v) in _keyed(value, _side, what).items()}
    if len(got) != 2:
        raise RecordError(f"{what} must give both NS and EW")
    return (got[Side.NS], got[Side.EW])


def parse_bid_value(value: Any, what: str = "bid") -> tuple[int | float, bool]:
    """Read a recorded bid: a number (kept as recorded, even 14 or 4.5) or ``"nil"``.

    Returns ``(tricks, is_nil)``; 0 means nil (RULES.md section 3).  Raises
    :class:`RecordError` for anything else (``"pass"``, ``true``, ``[3]``).
    """
    if isinstance(value, str):
        t = value.strip().lower()
        if t == "nil":
            return 0, True
        try:
            value = float(t) if "." in t else int(t)
        except ValueError:
            raise RecordError(f"{what}: {value!r} is not a bid (a number of tricks or 'nil')") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise RecordError(f"{what}: {value!r} is not a bid (a number of tricks or 'nil')")
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    return value, value == 0


def _shown(value: Any) -> str:
    """``value`` as JSON text for a message or ``load_errors.raw``, whatever it holds."""
    try:
        return orjson.dumps(value, default=str).decode()
    except TypeError as exc:
        return f"(not shown: {jsontext.unwritable(value) or exc})"


def record_from_obj(
    obj: Any, source_file: str | None = None, source_line: int | None = None, source_text: bytes | str | None = None
) -> HandRecord:
    """Build a :class:`HandRecord` from one decoded ``spades-hand/1`` JSON object.

    Raises :class:`~spadework.parsers.model.RecordError` with a reason a person reads,
    e.g. ``dealer 'X' is not a seat``, ``tricks[2].cards[1]: '1S' is not a card``,
    ``hand: 'two' is not a whole number``.  A record that is readable but breaks
    the rules (14 cards, a renege) is returned as written.
    """
    if not isinstance(obj, Mapping):
        raise RecordError(f"a hand must be a JSON object, not {type(obj).__name__}")
    schema = obj.get("schema")
    if schema is not None:
        if not isinstance(schema, str) or not schema.startswith("spades-hand/"):
            raise RecordError(f"schema {schema!r} is not spades-hand/1")
        major = schema.split("/", 1)[1].split(".", 1)[0]
        if major != "1":
            raise RecordError(f"schema {schema!r} is not supported (this reader reads spades-hand/1)")
    game_id = _str(_need(obj, "game_id"), "game_id")
    if not game_id or game_id.isspace():
        raise RecordError("game_id is empty" if not game_id else "game_id is blank (only white space)")
    hand = _int(_need(obj, "hand"), "hand", minimum=1)
    players_raw = _seat_map(_need(obj, "players"), "players")
    players = tuple(_str(players_raw.get(s), f"players.{s}") for s in SEATS)
    dealer = _seat(_need(obj, "dealer"), "dealer")

    rules = obj.get("rules", "standard")
    if rules is None:
        rules = "standard"
    if not isinstance(rules, (str, Mapping)):
        raise RecordError(f"rules must be a preset name or an object, not {rules!r}")
    if isinstance(rules, Mapping):
        rules = dict(rules)
        why = jsontext.unwritable(rules)
        if why:
            raise RecordError(f"rules cannot be stored ({why})")

    nested: list[str] = []

    def _unknown(where: str, d: Mapping[str, Any], known: frozenset[str]) -> None:
        for k in d:
            if k not in known:
                nested.append(f"{where}: unknown key {k!r} ignored (value {_shown(d[k])[:200]})")

    bids_raw = _need(obj, "bids")
    if not isinstance(bids_raw, list):
        raise RecordError("bids must be a list")
    bids = []
    for i, b in enumerate(bids_raw):
        if not isinstance(b, Mapping):
            raise RecordError(f"bids[{i}] must be an object like {{\"seat\": \"E\", \"bid\": 3}}")
        seat = _seat(_need(b, "seat") if "seat" in b else None, f"bids[{i}].seat")
        if "bid" not in b:
            raise RecordError(f"bids[{i}]: missing required key 'bid'")
        value, nil = parse_bid_value(b["bid"], f"bids[{i}].bid")
        blind = b.get("blind", False)
        if not isinstance(blind, bool):
            raise RecordError(f"bids[{i}].blind: {blind!r} is not true or false")
        bids.append(Bid(seat, value, nil, blind))
        _unknown(f"bids[{i}]", b, _BID_KEYS)

    deal = None
    if obj.get("deal") is not None:
        deal_raw = _seat_map(obj["deal"], "deal")
        hands = []
        for s in SEATS:
            cards = deal_raw.get(s, [])
            if not isinstance(cards, list):
                raise RecordError(f"deal.{s} must be a list of cards")
            hands.append(_cards(cards, f"deal.{s}"))
        deal = tuple(hands)

    tricks = None
    if obj.get("tricks") is not None:
        tr = obj["tricks"]
        if not isinstance(tr, list):
            raise RecordError("tricks must be a list")
        if len(tr) > 13:
            raise RecordError(f"tricks has {len(tr)} tricks; a hand has at most 13")
        out = []
        for i, t in enumerate(tr, 1):
            where = f"tricks[{i - 1}]"
            if not isinstance(t, Mapping):
                raise RecordError(f"{where} must be an object like {{\"leader\": \"E\", \"cards\": [...]}}")
            leader = _seat(t.get("leader"), f"{where}.leader")
            cards = t.get("cards")
            if not isinstance(cards, list):
                raise RecordError(f"{where}.cards must be a list of cards")
            if len(cards) > 4:
                raise RecordError(f"{where} has {len(cards)} cards; a trick has at most 4")
            winner = None if t.get("winner") is None else _seat(t["winner"], f"{where}.winner")
            out.append(Trick(leader, _cards(cards, f"{where}.cards"), winner))
            _unknown(where, t, _TRICK_KEYS)
        tricks = tuple(out)

    taken = None
    if obj.get("taken") is not None:
        tk = _seat_map(obj["taken"], "taken")
        taken = tuple(_opt_int(tk.get(s), f"taken.{s}") for s in SEATS)
        if all(v is None for v in taken):
            taken = None  # an empty object records nothing

    score = None
    if obj.get("score") is not None:
        sc = obj["score"]
        if not isinstance(sc, Mapping):
            raise RecordError("score must be an object keyed by side")
        parts = {}
        for side, (k, v) in _keyed(sc, _side, "score").items():
            if not isinstance(v, Mapping):
                raise RecordError(f"score.{k} must be an object with points, total, bags")
            _unknown(f"score.{k}", v, _SCORE_KEYS)
            parts[side] = SideScore(
                _opt_int(v.get("points"), f"score.{k}.points"),
                _opt_int(v.get("total"), f"score.{k}.total"),
                _opt_int(v.get("bags"), f"score.{k}.bags"),
            )
        score = (parts.get(Side.NS, SideScore()), parts.get(Side.EW, SideScore()))
        if score[0].is_empty() and score[1].is_empty():
            score = None

    score_before = None if obj.get("score_before") is None else _side_pair(obj["score_before"], "score_before")
    bags_before = None if obj.get("bags_before") is None else _side_pair(obj["bags_before"], "bags_before")
    winner = None if obj.get("winner") is None else _side(obj["winner"], "winner")

    extras = {k: v for k, v in obj.items() if k not in KNOWN_KEYS}
    why = jsontext.unwritable(extras) if extras else None  # the loader stores orjson's text of them
    if why:
        raise RecordError(f"extension fields cannot be stored ({why})")
    warnings = tuple(f"unknown key '{k}' kept as an extension" for k in extras if not k.startswith("x_")) + tuple(nested)

    return HandRecord(
        game_id=game_id,
        hand=hand,
        dealer=dealer,
        players=players,  # type: ignore[arg-type]
        bids=tuple(bids),
        rules=rules,
        event=_str(obj.get("event"), "event"),
        date=_str(obj.get("date"), "date"),
        table=_str(obj.get("table"), "table"),
        round=_str(obj.get("round"), "round"),
        deal=deal,
        tricks=tricks,
        taken=taken,  # type: ignore[arg-type]
        score=score,
        score_before=score_before,
        bags_before=bags_before,
        winner=winner,
        extras=extras,
        warnings=warnings,
        source_file=source_file,
        source_line=source_line,
        source_text=source_text,
    )


def _bid_obj(b: Bid) -> dict[str, Any]:
    d: dict[str, Any] = {"seat": str(b.seat), "bid": "nil" if b.nil else b.value}
    if b.blind:
        d["blind"] = True
    return d


def record_to_obj(rec: HandRecord) -> dict[str, Any]:
    """The canonical ``spades-hand/1`` JSON object of a record (keys in the order of FORMATS.md)."""
    d: dict[str, Any] = {"schema": SCHEMA, "game_id": rec.game_id, "hand": rec.hand}
    for key in ("event", "date", "table", "round"):
        v = getattr(rec, key)
        if v is not None:
            d[key] = v
    d["rules"] = rec.rules
    d["players"] = {str(s): rec.players[s] for s in SEATS}
    d["dealer"] = str(rec.dealer)
    if rec.score_before is not None:
        d["score_before"] = {str(s): rec.score_before[s] for s in SIDES}
    if rec.bags_before is not None:
        d["bags_before"] = {str(s): rec.bags_before[s] for s in SIDES}
    if rec.deal is not None:
        d["deal"] = {str(s): list(rec.deal[s]) for s in SEATS}
    d["bids"] = [_bid_obj(b) for b in rec.bids]
    if rec.tricks is not None:
        tricks = []
        for t in rec.tricks:
            td: dict[str, Any] = {"leader": str(t.leader), "cards": list(t.cards)}
            if t.winner is not None:
                td["winner"] = str(t.winner)
            tricks.append(td)
        d["tricks"] = tricks
    if rec.taken is not None:
        d["taken"] = {str(s): rec.taken[s] for s in SEATS if rec.taken[s] is not None}
    if rec.score is not None:
        d["score"] = {
            str(side): {k: v for k, v in (("points", sc.points), ("total", sc.total), ("bags", sc.bags)) if v is not None}
            for side, sc in zip(SIDES, rec.score)
        }
    if rec.winner is not None:
        d["winner"] = str(rec.winner)
    d.update(rec.extras)
    return d


# --- streams ------------------------------------------------------------------------------------


def _parse_line(raw: bytes, source: str, n: int) -> Item | None:
    try:
        text = decode(raw)
        if not text.strip():
            return None
        try:
            obj = jsontext.loads_strict(text)  # a key given twice: RepeatedKey, a ValueError (below)
        except orjson.JSONDecodeError as exc:
            raise RecordError(f"not valid JSON ({_short_json_error(exc)}){utf16_hint(text)}") from None
        return record_from_obj(obj, source, n, raw)
    except ValueError as exc:  # RecordError, CardError and decoding errors
        return LoadError(source, n, str(exc), raw_text(raw))


def _short_json_error(exc: Exception) -> str:
    msg = str(exc)
    return msg.split(":", 1)[0] if len(msg) > 200 else msg


def iter_jsonl(lines: Iterable[tuple[int, bytes]], source: str) -> Iterator[Item]:
    """Parse numbered lines of JSON Lines; blank lines are skipped."""
    for n, raw in lines:
        item = _parse_line(raw, source, n)
        if item is not None:
            yield item


_ARRAY_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},]')


def _item_lines(data: bytes, count: int) -> list[int] | None:
    """The line (from 1) where each item of the top-level JSON array ``data`` starts, or ``None``
    when two items start on one line (a one-line array: the items are then numbered instead)."""
    starts: list[int] = []
    depth = 0
    want = False  # the next token begins an item
    line, at = 1, 0  # the line of byte ``at`` (counted on as the items are found)
    for m in _ARRAY_TOKENS.finditer(data):
        tok = m.group()
        if want and tok != b"]":  # an item begins at the first token after "[" or ","
            line += data.count(b"\n", at, m.start())
            at = m.start()
            starts.append(line)
            want = False
        if tok in (b"[", b"{"):
            depth += 1
            want = want or (depth == 1)
        elif tok in (b"]", b"}"):
            depth -= 1
        elif tok == b"," and depth == 1:
            want = True
    if len(starts) != count:
        # an item that is a bare number, true, false or null has no token here: number the items
        return None
    return starts if len(set(starts)) == len(starts) else None


def _iter_json_document(data: bytes, source: str) -> Iterator[Item]:
    """The hands of a ``.json`` document (one object or an array).  A document starting with ``{``
    that does not parse as one, and has a line starting with ``{`` after its first (JSON Lines
    named ``.json``), is read as lines; a one-object document may have nested objects at column 0
    too (``indent=0``)."""
    try:
        doc = jsontext.loads(data)
    except orjson.JSONDecodeError as exc:
        stripped = data.strip()
        if stripped.startswith(b"{") and b"\n{" in stripped:
            yield from iter_jsonl(iter_text_lines(data), source)
            return
        line = getattr(exc, "lineno", 1) or 1
        yield LoadError(source, line, f"not valid JSON ({_short_json_error(exc)})", raw_text(data))
        return
    objs = doc if isinstance(doc, list) else [doc]
    lines = _item_lines(data, len(objs)) if isinstance(doc, list) and objs else None
    twice = repeated_keys_by_item(data, objs)
    for i, obj in enumerate(objs, 1):
        n = lines[i - 1] if lines else i
        try:
            if i - 1 in twice:
                raise RecordError(TWICE.format(twice[i - 1]))
            yield record_from_obj(obj, source, n)
        except ValueError as exc:
            yield LoadError(source, n, f"item {i}: {exc}", _shown(obj))


def load(path: str | os.PathLike[str], source: str | None = None) -> Iterator[Item]:
    """Stream the hands of a ``.jsonl`` (or ``.json``, or gzipped) file.

    Yields :class:`HandRecord` for each readable line and :class:`LoadError`
    (file, line, reason, raw text) for each unreadable one; never raises for bad
    content.  ``source`` is the name recorded as ``source_file`` (default: the path).
    A ``.json`` file whose content starts with ``[`` is read as one array: each item's
    ``source_line`` is the line where it starts (a one-line array numbers its items 1, 2, ...
    instead), and a syntax error is reported at its line.
    """
    source = source or os.fspath(path)
    name = strip_gz(os.fspath(path)).lower()
    if name.endswith(".json"):
        data, cut = read_whole(path)
        if cut is not None:
            # a cut-off .gz: the items (or lines) read whole before the damage are kept
            data, cut = _before_damage(data, cut)
        if data.lstrip().startswith((b"[", b"{")):
            yield from _iter_json_document(data, source)
        else:
            yield from iter_jsonl(iter_text_lines(data), source)
        if cut is not None:
            raise cut
        return
    yield from iter_jsonl(iter_lines(path), source)


def _before_damage(data: bytes, cut: TruncatedFile) -> tuple[bytes, TruncatedFile]:
    """The part of a cut-off ``.json`` document that reads whole, and the error naming where it
    ends: an array's items up to the last one closed (the array closed after it); JSON Lines named
    ``.json``, their whole lines; one object cut off, nothing (the error says it all)."""
    head = data.lstrip()
    if not head.startswith(b"["):
        if head.startswith(b"{") and b"\n{" not in head:
            return b"", TruncatedFile(0, cut.reason)
        return data[: data.rfind(b"\n") + 1], cut
    depth, end = 0, 0
    for m in _ARRAY_TOKENS.finditer(data):
        tok = m.group()
        if tok in (b"[", b"{"):
            depth += 1
        elif tok in (b"]", b"}"):
            depth -= 1
            if depth == 1:
                end = m.end()  # an item (object or array) of the top-level array closes here
    if not end:
        return b"", TruncatedFile(0, cut.reason)
    return data[:end] + b"]", TruncatedFile(data.count(b"\n", 0, end), cut.reason)


def loads(text: str | bytes, source: str = "<string>") -> Iterator[Item]:
    """Stream the hands of JSON Lines text (see :func:`load`)."""
    yield from iter_jsonl(iter_text_lines(text), source)


def dumps_record(rec: HandRecord) -> str:
    """One record as one line of canonical JSON (no newline)."""
    return jsontext.dumps(record_to_obj(rec))


def dumps(records: Iterable[HandRecord]) -> str:
    """Records as JSON Lines text, one per line."""
    return "".join(dumps_record(r) + "\n" for r in records)


def dump(records: Iterable[HandRecord], fp: IO[str]) -> int:
    """Write records as JSON Lines to a text stream; returns how many were written."""
    n = 0
    for r in records:
        fp.write(dumps_record(r) + "\n")
        n += 1
    return n
