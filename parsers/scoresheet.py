"""The score-sheet CSV (``.csv``): what a table keeps on paper (FORMATS.md section 3).

One row per hand after a header row.  The header must hold these columns (any order)::

    game_id,hand,dealer,player_N,player_E,player_S,player_W,bid_N,bid_E,bid_S,bid_W,
    taken_N,taken_E,taken_S,taken_W,NS_points,NS_total,NS_bags,EW_points,EW_total,EW_bags

Optional columns: ``rules`` (a preset name such as ``barmore``, or a JSON object
``{"preset": "standard", "target": 300}``; absent = ``standard``; an empty cell takes the
rules another row of the same game gives, an earlier one or else a later one, else ``standard``;
when those rules cannot be read, the row's error says on which line they are) and the
metadata ``event``, ``date``, ``table``, ``round``.  Any other column is kept as an
extension key of the hand, like an unknown key of the JSON form: an ``x_*`` column
silently, any other with a warning; its empty cells are left out.

Cells: numbers are whole (``4.0`` too; a negative one as ``-40``, ``\u221240`` or ``(40)``, as
spreadsheets format them).  Bids are a number, ``nil`` (``0`` means nil too), ``bn`` (blind nil) or ``b7``
(blind seven; ``bN`` is a blind N).  An empty bid, taken or score cell means "not
recorded".  The sheet says nothing of the order of the bids, so a hand's bids are
listed in bidding order, from the dealer's left clockwise (RULES.md section 3); a
seat with an empty bid cell (the silent partner of a blind seven) has no bid.  The
sheet has no play and no winner column: records have ``taken`` and ``score``, no
``tricks``, no ``deal``, and ``winner`` is ``None`` (the checker decides who won).

Reading (decisions FORMATS.md leaves open):

- The delimiter is the one of ``,``, ``;`` and tab whose header cells name the most required
  columns (spreadsheets in some languages export with ``;``; an extra column may hold a comma).
- The required columns and ``rules``, ``event``, ``date``, ``table``, ``round`` are matched
  whatever their case, with spaces or hyphens for ``_`` (``Game ID``, ``Player N``, ``Rules``:
  :func:`header_names`); a cell that only folds onto a name another cell has stays a column of
  its own.  A header that lacks a
  required column (missing, misspelt) gives one :class:`~spadework.parsers.model.LoadError` for
  line 1 naming the missing columns, and nothing else of the file can be read: the
  columns of the other rows are unknown, so no row is read (the raw text kept is the
  header line).
- An empty file, or a file with a header and no rows, yields nothing.  Blank lines and
  rows whose every cell is empty are skipped.
- A row is read on its own line, or on several where a quoted cell holds line breaks (as
  spreadsheets write a name typed on two lines; at most :data:`MAX_ROW_LINES` lines, and only
  when the lines read as one row with the header's cells).  A row may leave out trailing cells
  of optional or extension columns (empty).  A row with no cell for a required column, with
  extra cells that are not empty, a cell that is not a
  number, a bid that is not a bid, an unknown dealer, invalid UTF-8 ... becomes one
  :class:`~spadework.parsers.model.LoadError` with its line number, the reason (``line 7: taken_N
  'five' is not a whole number``) and the raw row; the next row is read as usual.

Writing (:func:`dump`) is lossy by nature: a sheet holds no deal, no play and no
extension keys (the optional ``*_score_before``/``*_bags_before`` and ``winner`` columns
keep a mid-game start and the result), and only one bid
per seat (the first, and not the order the bids were made in); taken is written only
where recorded (it is not worked out from the play).  :func:`dump` writes a line break inside a
name as it is, in a quoted cell (a carriage return as a line break).  Reading trims the spaces around a cell (hand-typed sheets
put them after commas), except in a cell marked with ``'`` (below).

Spreadsheet safety: a cell that a spreadsheet would run as a formula (it starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return and is not a number) is written with a leading
``'``, which spreadsheets show as text.  On reading, that one ``'`` is taken off again, so names
such as ``=HYPERLINK(...)`` or ``-x-`` survive a round trip exactly.  To keep that exact for a
name that really starts with ``'``, the rule counts the quotes: a cell that is quotes followed by
such a character gets one more quote on writing (``'=x`` is written ``''=x``) and loses one on
reading; a cell starting with a quote followed by anything else (``'bob``) is written and read
as it is.  A name with spaces or tabs at either end (`` ana``) is marked the same way, so reading
keeps them.  See :func:`protect_cell` and :func:`unprotect_cell`.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import IO, Any

from spadework.parsers.io import LookAhead, TruncatedFile, decode, iter_lines, iter_text_lines, raw_text, utf16_hint
from spadework.parsers.jsonl import KNOWN_KEYS, record_from_obj
from spadework.parsers.model import HandRecord, LoadError, RecordError
from spadework.parsers.seats import SEATS, SIDES, Seat
from spadework.parsers.spn import format_bid_text, format_rules_text, parse_bid_text, parse_rules_text

Item = HandRecord | LoadError

REQUIRED_COLUMNS: tuple[str, ...] = (
    "game_id",
    "hand",
    "dealer",
    *(f"player_{s}" for s in "NESW"),
    *(f"bid_{s}" for s in "NESW"),
    *(f"taken_{s}" for s in "NESW"),
    *(f"{side}_{field}" for side in ("NS", "EW") for field in ("points", "total", "bags")),
)
"""The header FORMATS.md requires, in its order."""

OPTIONAL_COLUMNS: tuple[str, ...] = (
    "rules", "event", "date", "table", "round",
    "NS_score_before", "EW_score_before", "NS_bags_before", "EW_bags_before", "winner",
)
"""Columns a sheet may have: the ruleset and where the game was played; the running totals and bag
counts before the hand (for a sheet that starts mid-game); the game's winner on its last row."""
"""Columns read when present."""

DEFAULT_COLUMNS: tuple[str, ...] = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
"""What :func:`dump` writes unless told otherwise."""

_FOLDED_COLUMNS = REQUIRED_COLUMNS + ("rules", "event", "date", "table", "round")
"""The columns a header may spell in another case or with spaces (the winner and the scores before
a hand only as written: a ``Winner`` column of team names stays a column of the sheet's own)."""
_BY_FOLDED = {c.lower(): c for c in _FOLDED_COLUMNS}
_REQUIRED = frozenset(REQUIRED_COLUMNS)


def header_name(text: str) -> str:
    """A header cell as the column it names: spreadsheets capitalise and space their headers, so
    ``Game ID``, ``Rules`` and ``ns-points`` are ``game_id``, ``rules`` and ``NS_points`` (case,
    spaces and hyphens do not matter); any other name is kept as written (an extension column)."""
    name = text.strip()
    return _BY_FOLDED.get(re.sub(r"[\s\-]+", "_", name).lower(), name)


def header_names(cells: Sequence[str]) -> list[str]:
    """The columns of a header row: each cell's :func:`header_name`, except that a cell written as
    the column's own name keeps it, and a cell that only folds onto a name another cell has stays
    as written (``rules`` and ``Rules``, ``NS_points`` and ``ns points``: the second is a column of
    the sheet's own, not a repeat that would make the file unreadable)."""
    exact = {c.strip() for c in cells}
    out: list[str] = []
    for c in cells:
        name = c.strip()
        folded = header_name(name)
        out.append(name if folded != name and (folded in exact or folded in out) else folded)
    return out

_SCORE_FIELDS = ("points", "total", "bags")


class _RowError(RecordError):
    pass


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP's CSV injection list)."""

_QUOTED_FORMULA = re.compile("'*[=+\\-@\t\r]")
_QUOTED_SPACE = re.compile("'*\\s|.*\\s\\Z", re.DOTALL)
"""A cell with white space at either end (after any leading quotes): a reader strips cells, so the
writer marks these with ``'`` too, and the name keeps its spaces and tabs."""
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _marked(text: str) -> bool:
    """Whether :func:`protect_cell` puts a ``'`` in front of ``text``."""
    return bool((_QUOTED_FORMULA.match(text) and not _NUMBER.fullmatch(text)) or _QUOTED_SPACE.match(text))


def protect_cell(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet will not run and a reader will not change: ``'`` in front of a
    cell that starts (after any quotes) with ``=``, ``+``, ``-``, ``@``, tab or CR and is not a number
    (``-70`` stays as it is), or that has white space at either end (a reader strips cells).
    :func:`unprotect_cell` undoes it exactly."""
    return "'" + text if _marked(text) else text


class _Exact(str):
    """A cell read back from :func:`protect_cell`'s form: its text exactly, not to be stripped."""


def unprotect_cell(text: str) -> str:
    """A cell as written by :func:`protect_cell` back to its text: one leading ``'`` is dropped when what
    follows would have been marked (``'=SUM(A1)`` -> ``=SUM(A1)``, ``''=x`` -> ``'=x``, ``' ana`` ->
    `` ana``); any other cell is returned as it is (``'bob`` stays ``'bob``)."""
    if text.startswith("'") and _marked(text[1:]):
        return _Exact(text[1:])
    return text


def _text(cell: str) -> str:
    """A text cell's value: stripped (hand-typed sheets put spaces after commas), unless it was
    written marked (:func:`protect_cell`), which keeps it exactly."""
    return str(cell) if isinstance(cell, _Exact) else cell.strip()  # str(): a plain str, not the marker type


def _given(cell: str) -> bool:
    """Whether a text cell holds a value: anything but white space, or white space written marked
    (:func:`protect_cell`: a name of one space read back as one space, not as "not recorded")."""
    return isinstance(cell, _Exact) or bool(cell.strip())


_SIGNED = ("_points", "_total", "_score_before")
"""Columns whose numbers may be negative, and so may be written in parentheses."""


def _whole(text: str, column: str) -> int:
    """A cell's whole number: digits with an optional sign, or (as a spreadsheet may save a number)
    the same followed by a decimal point and zeros (``4.0``), as a bid cell reads them; a negative
    one also as a spreadsheet's number formats write it, with a minus sign (U+2212), or in
    parentheses (``(40)``) in a column of points or totals."""
    t = text.strip().replace("\u2212", "-")
    if len(t) > 2 and t[0] == "(" and t[-1] == ")" and t[1] not in "+-" and column.endswith(_SIGNED):
        t = "-" + t[1:-1].strip()
    sign = t[1:] if t[:1] in "+-" else t
    digits, point, zeros = sign.partition(".")
    if not digits.isdigit() or not sign.isascii() or (point and zeros.strip("0")):
        raise _RowError(f"{column} {text!r} is not a whole number")
    return int(t.partition(".")[0])


def _opt_whole(text: str, column: str) -> int | None:
    return None if not text.strip() else _whole(text, column)


def record_from_row(row: Mapping[str, str], source_file: str | None = None, source_line: int | None = None) -> HandRecord:
    """Build a :class:`HandRecord` from one row, given as ``column -> cell text``.

    Raises :class:`~spadework.parsers.model.RecordError` (a ``ValueError``) naming the column:
    ``dealer 'X' is not a seat (expected N, E, S or W)``, ``taken_N 'five' is not a whole number``,
    ``bid_E 'x' is not a bid (...)``, ``game_id is empty``.
    """
    cell = {k: (v or "") for k, v in row.items()}
    game_id = _text(cell["game_id"])
    if not game_id:
        raise _RowError("game_id is empty")
    if not cell["hand"].strip():
        raise _RowError("hand is empty")
    hand = _whole(cell["hand"], "hand")
    if hand < 1:
        raise _RowError(f"hand {hand} is below 1 (hands are numbered from 1)")
    dealer_text = cell["dealer"].strip()
    if not dealer_text:
        raise _RowError("dealer is empty (the dealer is required)")
    try:
        dealer = Seat.parse(dealer_text)
    except ValueError:
        raise _RowError(f"dealer {dealer_text!r} is not a seat (expected N, E, S or W)") from None

    obj: dict[str, Any] = {"game_id": game_id, "hand": hand, "dealer": str(dealer)}
    for key in ("event", "date", "table", "round"):
        if _given(cell.get(key, "")):
            obj[key] = _text(cell[key])
    if cell.get("rules", "").strip():
        try:
            obj["rules"] = parse_rules_text(cell["rules"].strip())
        except ValueError as exc:
            raise _RowError(f"rules {exc}") from None
    obj["players"] = {s: (_text(cell[f"player_{s}"]) if _given(cell[f"player_{s}"]) else None) for s in "NESW"}

    bids = []
    for seat in dealer.left.clockwise():
        column = f"bid_{seat}"
        text = cell[column].strip()
        if not text:
            continue
        try:
            value, nil, blind = parse_bid_text(text)
        except ValueError as exc:
            raise _RowError(f"{column} {exc}") from None
        b: dict[str, Any] = {"seat": str(seat), "bid": "nil" if nil else value}
        if blind:
            b["blind"] = True
        bids.append(b)
    obj["bids"] = bids

    taken = {s: _opt_whole(cell[f"taken_{s}"], f"taken_{s}") for s in "NESW"}
    if any(v is not None for v in taken.values()):
        obj["taken"] = {s: v for s, v in taken.items() if v is not None}
    score: dict[str, dict[str, int]] = {}
    for side in ("NS", "EW"):
        for field in _SCORE_FIELDS:
            column = f"{side}_{field}"
            v = _opt_whole(cell[column], column)
            if v is not None:
                score.setdefault(side, {})[field] = v
    if score:
        obj["score"] = score
    for key in ("score_before", "bags_before"):
        pair = {side: _opt_whole(cell.get(f"{side}_{key}", ""), f"{side}_{key}") for side in ("NS", "EW")}
        if all(v is not None for v in pair.values()):
            obj[key] = pair
        elif any(v is not None for v in pair.values()):
            raise _RowError(f"NS_{key} and EW_{key} must both be given or both be empty")
    if cell.get("winner", "").strip():
        obj["winner"] = cell["winner"].strip()
    ignored = []
    for column, text in cell.items():
        if column in REQUIRED_COLUMNS or column in OPTIONAL_COLUMNS or not _given(text):
            continue
        if column in KNOWN_KEYS:
            ignored.append(column)
        else:
            obj[column] = _text(text)
    rec = record_from_obj(obj, source_file, source_line)
    notes = tuple(f"unknown column '{k}' kept as an extension" for k in rec.extras if not k.startswith("x_"))
    notes += tuple(f"column '{c}' is not a score-sheet column; its cell was ignored" for c in ignored)
    return replace(rec, warnings=notes) if notes or rec.warnings else rec


def _delimiter(header: str) -> str:
    """The header's separator: of comma, semicolon and tab (as spreadsheets export in different
    locales), the one whose cells name the most required columns (a column named ``Notes, misc``
    in a semicolon file does not make it a comma file); a comma when none does."""
    def named(d: str) -> int:
        try:
            return len({header_name(c) for c in _split(header, d)} & _REQUIRED)
        except ValueError:
            return 0

    return max((",", ";", "\t"), key=lambda d: (named(d), d in header, d == ","))


def _split(text: str, delimiter: str) -> list[str]:
    """The cells of one line.  Raises ``ValueError`` for what the csv module cannot read (a NUL)."""
    try:
        return next(csv.reader([text], delimiter=delimiter), [])
    except csv.Error as exc:
        raise ValueError(f"not a CSV row ({exc})") from None


MAX_ROW_LINES = 20
"""Most lines one row may span (line breaks inside quoted cells)."""


def _quoted_row(raw: bytes, more: LookAhead, cells: int, delimiter: str) -> bytes:
    """A row whose quote is still open at the end of its line goes on to the next lines (a quoted
    cell holding a line break, as a spreadsheet writes a name typed on two lines): the lines up to
    the one that closes it, joined, when they read as one row of ``cells`` cells; otherwise ``raw``
    alone (its error says the quote is not closed) and the lines read ahead are put back."""
    taken: list[tuple[int, bytes]] = []
    parts = [raw]
    open_quote = True
    while open_quote and len(taken) < MAX_ROW_LINES:
        nxt = next(more, None)
        if nxt is None:
            break
        taken.append(nxt)
        parts.append(nxt[1])
        open_quote = sum(p.count(b'"') for p in parts) % 2 == 1
    if not open_quote:
        joined = b"\n".join(parts)
        try:
            if len(_split(decode(joined), delimiter)) == cells:
                return joined
        except ValueError:
            pass
    more.put_back(taken)
    return raw


def iter_scoresheet(lines: Iterable[tuple[int, bytes]], source: str) -> Iterator[Item]:
    """Parse numbered raw lines of a score sheet (see the module doc), one row at a time."""
    columns: list[str] | None = None
    delimiter = ","
    game_rules: dict[str, tuple[str, int]] = {}  # game -> the rules its rows last named, and that line
    # rows with a blank rules cell read before any row of their game named its rules wait until one
    # does (they get its rules), the file ends or too many wait (they keep the blank); what comes
    # after them waits too, so items come out in file order
    order = _InFileOrder(source)
    source_lines = LookAhead(lines)
    try:
        for n, raw in source_lines:
            if not raw.strip():
                continue
            if columns is not None and raw.count(b'"') % 2:
                raw = _quoted_row(raw, source_lines, len(columns), delimiter)
            try:
                text = decode(raw)
            except ValueError as exc:
                exc = f"{exc} (the file is not UTF-8: a spreadsheet exports plain CSV in the code page of the computer; export as CSV UTF-8)"
                if columns is None:
                    yield LoadError(source, n, f"line {n}: header: {exc}; no row of this file can be read", raw_text(raw))
                    return
                yield from order.put(LoadError(source, n, f"line {n}: {exc}", raw_text(raw)))
                continue
            if columns is None:
                delimiter = _delimiter(text)
                try:
                    columns = header_names(_split(text, delimiter))
                except ValueError as exc:
                    yield LoadError(source, n, f"line {n}: header: {exc}; no row of this file can be read", raw_text(raw))
                    return
                missing = [c for c in REQUIRED_COLUMNS if c not in columns]
                dupes = sorted({c for c in columns if c and columns.count(c) > 1})
                if len(missing) == len(REQUIRED_COLUMNS):
                    # no column of a score sheet at all (another format read as one: -f csv on a JSON
                    # line); the line is in the raw text, not spelled out again in the reason
                    yield LoadError(
                        source,
                        n,
                        f"line {n}: this is not a score sheet's header: it names none of the columns "
                        + ",".join(REQUIRED_COLUMNS) + "; no row of this file can be read" + utf16_hint(raw),
                        raw_text(raw),
                    )
                    return
                if missing or dupes:
                    parts = []
                    if missing:
                        parts.append(f"the header lacks the column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
                    if dupes:
                        parts.append(f"the header repeats {', '.join(dupes)}")
                    known = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
                    unknown = [c for c in columns if c not in known and not c.startswith("x_")]
                    if missing and unknown:
                        parts.append(f"unexpected column{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}")
                    yield LoadError(
                        source,
                        n,
                        f"line {n}: " + "; ".join(parts) + " (a score sheet's first row must name its columns: "
                        + ",".join(REQUIRED_COLUMNS) + "); no row of this file can be read",
                        raw_text(raw),
                    )
                    return
                continue
            try:
                cells = _split(text, delimiter)
                if not any(c.strip() for c in cells):
                    continue
                if len(cells) != len(columns) and text.count('"') % 2:
                    # an unpaired quote: a quoted cell that goes on to the next line, or the rest of one
                    raise _RowError(
                        f"a quote is not closed on this line, nor on the next lines as one row (a quoted cell may hold "
                        f"line breaks; the row has {len(cells)} cells, the header {len(columns)})"
                    )
                if len(cells) < len(columns):
                    lacking = [c for c in columns[len(cells):] if c in _REQUIRED]
                    if lacking:
                        raise _RowError(
                            f"the row has {len(cells)} cells; the header has {len(columns)} (no cell for {', '.join(lacking[:4])}"
                            + (", ..." if len(lacking) > 4 else "") + ")"
                        )
                    cells = cells + [""] * (len(columns) - len(cells))  # trailing optional cells left out: empty
                if len(cells) > len(columns) and any(c.strip() for c in cells[len(columns):]):
                    raise _RowError(f"the row has {len(cells)} cells, some beyond the header's {len(columns)} columns")
                row = {c: unprotect_cell(v) for c, v in zip(columns, cells) if c}
                if "rules" in row:  # a blank rules cell is "not recorded": the game's rules hold
                    gid = row["game_id"].strip()
                    if row["rules"].strip():
                        game_rules[gid] = (row["rules"], n)
                        order.settle(gid, game_rules[gid])  # the game's rows before this one that left it blank
                    elif gid in game_rules:
                        yield from order.put(_sheet_row(row, n, raw, game_rules[gid], source))
                        continue
                    else:  # no row of the game has named them yet: wait for the game's next rows
                        yield from order.wait(gid, row, n, raw)
                        continue
                yield from order.put(replace(record_from_row(row, source, n), source_text=raw))
            except ValueError as exc:  # _RowError, RecordError, a cell csv cannot read
                yield from order.put(LoadError(source, n, f"line {n}: {exc}", raw_text(raw)))
    except TruncatedFile:
        # a cut-off .gz: the rows held back are whole rows read before the damage (their game names
        # no rules before it stops: as written)
        yield from order.finish()
        raise
    yield from order.finish()


MAX_WAITING_ROWS = 20_000
"""Most rows that wait, in file order, behind a row with a blank rules cell whose game has not named
its rules yet; past it, such rows are read with the cell blank (``standard``)."""


class _InFileOrder:
    """The items of a score sheet in file order, where a row with a blank rules cell waits for a
    later row of its game to name the rules (:meth:`wait`, :meth:`settle`)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.queue: deque[list] = deque()  # [item] once known, [None, row, n, raw] while waiting
        self.waiting: dict[str, list[list]] = {}

    def put(self, item: Item) -> Iterator[Item]:
        self.queue.append([item])
        return self._ready()

    def wait(self, gid: str, row: dict[str, str], n: int, raw: bytes) -> Iterator[Item]:
        slot = [None, row, n, raw]
        self.queue.append(slot)
        self.waiting.setdefault(gid, []).append(slot)
        if len(self.queue) > MAX_WAITING_ROWS:
            return self.finish()
        return self._ready()

    def settle(self, gid: str, rules: tuple[str, int] | None) -> None:
        """The rows of game ``gid`` that wait get ``rules`` (text, line; ``None``: the blank)."""
        for slot in self.waiting.pop(gid, ()):
            slot[0] = _sheet_row(slot[1], slot[2], slot[3], rules, self.source)
            del slot[1:]

    def finish(self) -> Iterator[Item]:
        """Every row still waiting, with its blank cell, and what came after it."""
        for gid in list(self.waiting):
            self.settle(gid, None)
        return self._ready()

    def _ready(self) -> Iterator[Item]:
        queue = self.queue
        while queue and queue[0][0] is not None:
            yield queue.popleft()[0]


def _sheet_row(row: dict[str, str], n: int, raw: bytes, rules: tuple[str, int] | None, source: str) -> Item:
    """The record (or load error) of row ``n``, whose rules cell is blank; ``rules``: the rules
    another row of its game named (text, line), or ``None``.  When those cannot be read, the error
    says the rules are that row's."""
    try:
        if rules is not None:
            row["rules"] = rules[0]
            try:
                parse_rules_text(rules[0].strip())
            except ValueError as exc:
                raise _RowError(
                    f"its rules cell is blank, and the rules game {row['game_id'].strip()!r} gives on line "
                    f"{rules[1]} cannot be read ({exc})"
                ) from None
        return replace(record_from_row(row, source, n), source_text=raw)
    except ValueError as exc:
        return LoadError(source, n, f"line {n}: {exc}", raw_text(raw))


def load(path: str | os.PathLike[str], source: str | None = None) -> Iterator[Item]:
    """Stream the hands of a score-sheet ``.csv`` file (or gzipped): one :class:`HandRecord` per row,
    one :class:`LoadError` (file, line, reason, raw row) per row that cannot be read.

    Never raises for bad content; reads line by line.  ``source`` is the name recorded
    as ``source_file`` (default: the path).
    """
    yield from iter_scoresheet(iter_lines(path), source or os.fspath(path))


def loads(text: str | bytes, source: str = "<string>") -> Iterator[Item]:
    """Stream the hands of score-sheet text (see :func:`load`)."""
    yield from iter_scoresheet(iter_text_lines(text), source)


# --- writing ----------------------------------------------------------------------------------------


def _cell(text: str | None) -> str:
    """A text cell as the sheet can hold it: a line break stays (the writer quotes the cell), a
    carriage return becomes one (the reader reads the lines of a file without them)."""
    if text is None:
        return ""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def row_from_record(rec: HandRecord) -> dict[str, str]:
    """The score-sheet row of a record, ``column -> cell`` for every column of :data:`DEFAULT_COLUMNS`.

    Lossy (see the module doc): only the first bid of each seat is kept, and nothing of the
    deal, play or extension keys.
    """
    row: dict[str, str] = {c: "" for c in DEFAULT_COLUMNS}
    row["game_id"] = _cell(rec.game_id)
    row["hand"] = str(rec.hand)
    row["dealer"] = str(rec.dealer)
    for s in SEATS:
        row[f"player_{s}"] = _cell(rec.players[s])
        b = rec.bid_of(s)
        if b is not None:
            row[f"bid_{s}"] = format_bid_text(b.value, b.nil, b.blind)
        if rec.taken is not None and rec.taken[s] is not None:
            row[f"taken_{s}"] = str(rec.taken[s])
    if rec.score is not None:
        for side in SIDES:
            for field in _SCORE_FIELDS:
                v = getattr(rec.score[side], field)
                if v is not None:
                    row[f"{side}_{field}"] = str(v)
    for key in ("score_before", "bags_before"):
        pair = getattr(rec, key)
        if pair is not None:
            for side in SIDES:
                row[f"{side}_{key}"] = str(pair[side])
    if rec.winner is not None:
        row["winner"] = str(rec.winner)
    row["rules"] = format_rules_text(rec.rules)
    for key in ("event", "date", "table", "round"):
        row[key] = _cell(getattr(rec, key))
    return row


def dump(records: Iterable[HandRecord], fp: IO[str], columns: Sequence[str] = DEFAULT_COLUMNS) -> int:
    """Write records as a score sheet to a text stream (``\\n`` line ends), streaming; returns how
    many rows were written.  Every cell goes through :func:`protect_cell` (no cell is a live
    spreadsheet formula).  ``columns`` (default :data:`DEFAULT_COLUMNS`) must include every
    required column; raises ``ValueError`` otherwise.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise ValueError(f"a score sheet needs the columns {', '.join(missing)}")
    unknown = [c for c in columns if c not in DEFAULT_COLUMNS]
    if unknown:
        raise ValueError(f"unknown score-sheet columns: {', '.join(unknown)}")
    writer = csv.writer(fp, lineterminator="\n")
    writer.writerow(columns)
    n = 0
    for rec in records:
        row = row_from_record(rec)
        writer.writerow([protect_cell(row[c]) for c in columns])
        n += 1
    return n


def dumps(records: Iterable[HandRecord], columns: Sequence[str] = DEFAULT_COLUMNS) -> str:
    """Records as score-sheet text (see :func:`dump`)."""
    buf = io.StringIO()
    dump(records, buf, columns)
    return buf.getvalue()


def sniff(head: bytes) -> bool:
    """True when the first line of a file looks like a score-sheet header."""
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].decode("utf-8", "replace")
    try:
        cols = {header_name(c) for c in _split(first, _delimiter(first))} if first else set()
    except ValueError:
        return False
    return {"game_id", "hand", "dealer"} <= cols


__all__ = [
    "DEFAULT_COLUMNS",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "dump",
    "dumps",
    "iter_scoresheet",
    "load",
    "loads",
    "protect_cell",
    "record_from_row",
    "row_from_record",
    "sniff",
    "unprotect_cell",
]
