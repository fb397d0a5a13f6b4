"""Which format a file is in, and the one entry point that reads any of them.

The extension decides (``.jsonl``/``.json``, ``.spn``, ``.csv``, ``.ptn``/``.pbn``,
each optionally ``.gz``); a JSON Lines file whose records are OpenSpiel episodes is
recognised by content; a file whose extension says nothing is sniffed.  Every
format module offers ``load(path, source=None)`` yielding ``HandRecord | LoadError``.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from spadework.parsers import scoresheet
from spadework.parsers.io import head_bytes, no_hands_reason, strip_gz
from spadework.parsers.model import HandRecord, LoadError

FORMATS: dict[str, str] = {
    "jsonl": "spadework.parsers.jsonl",
    "spn": "spadework.parsers.spn",
    "csv": "spadework.parsers.scoresheet",
    "ptn": "spadework.parsers.trickster",
    "openspiel": "spadework.parsers.openspiel",
}
"""Format name -> module.  ``csv`` is the score-sheet format, ``ptn`` Trickster's export."""

WRITABLE = ("jsonl", "spn", "csv")
"""Formats ``dump`` can write."""

_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".spn": "spn",
    ".csv": "csv",
    ".ptn": "ptn",
    ".pbn": "ptn",
}

_INT_LINE = re.compile(rb"^\s*\[?\s*\d+(\s*[,\s]\s*\d+)+\s*,?\s*\]?\s*$")
"""A line of whole numbers: an OpenSpiel ``history()`` as printed (``26 47 0 ...``), with commas
(``26, 47, 0, ...``) or as a Python list (``[26, 47, 0, ...]``)."""


class UnknownFormat(ValueError):
    """Raised when neither the extension nor the content says which format a file is in."""


def module(fmt: str) -> ModuleType:
    """The parser module of a format name (see :data:`FORMATS`). Raises ``ValueError`` for an unknown name."""
    try:
        return importlib.import_module(FORMATS[fmt])
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; known formats: {', '.join(FORMATS)}") from None


def sniff(head: bytes) -> str | None:
    """Guess a format from the first bytes of a file's content, or ``None``.

    Content with a NUL byte is binary (a database, an archive), never a text log: a DuckDB file
    starts with a checksum whose first byte is ``[``, ``{``, ``%`` or ``;`` about one time in 60."""
    if b"\x00" in head:
        return None
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text:
        return None
    lines = [ln.strip() for ln in text.split(b"\n")[:50] if ln.strip()]
    first = lines[0] if lines else b""
    # a JSON object opens with a key, closes at once, or stands alone on its line (pretty-printed);
    # "{ typed by the TD }" is an SPN comment, not an object
    objs = [ln for ln in lines[:20] if _OBJECT_LINE.match(ln)]
    tagged = any(_TAG_LINE.match(ln) for ln in lines[:20])
    array = re.match(rb"\[\s*\{", text) is not None
    if objs and (array or _OBJECT_LINE.match(first) or not tagged):
        # OpenSpiel episodes are JSON objects too: any of the first lines tells (one bad line must not)
        if any(b'"history"' in ln and b'"game_id"' not in ln for ln in objs):
            return "openspiel"
        return "jsonl"
    ints = sum(1 for ln in lines[:20] if _INT_LINE.match(ln))
    if ints and ints * 2 >= min(len(lines), 20):  # most lines are integer histories (a bad one may be among them)
        return "openspiel"
    if array:
        return "jsonl"
    if text.startswith((b"[", b"%", b";", b"{")) and (tagged or not text.startswith(b"{")):
        # tag pairs, or a comment first (";", "%", "{ ... }")
        if b"[Auction" in head or b"[GameCode" in head or b"[GameOptionsJson" in head or b"% PTN" in head:
            return "ptn"
        return "spn"
    if scoresheet.sniff(text):  # its header's columns, with any delimiter, quoted or not
        return "csv"
    return None


_OBJECT_LINE = re.compile(rb'\{\s*("|\'|\}|$)')  # also {'key': ...}, to be rejected line by line
_TAG_LINE = re.compile(rb'\[\s*[A-Za-z][A-Za-z0-9_]*\s+"')


def detect(path: str | os.PathLike[str]) -> str:
    """The format of a file: by extension, then by content.

    Raises :class:`UnknownFormat` naming the file when neither tells.
    """
    name = strip_gz(os.fspath(path))
    ext = Path(name).suffix.lower()
    by_ext = _EXTENSIONS.get(ext)
    if by_ext == "jsonl":
        # OpenSpiel episodes are JSON Lines too: tell them apart by content.
        return "openspiel" if sniff(head_bytes(path, 65536)) == "openspiel" else "jsonl"
    if by_ext is not None:
        return by_ext
    head = head_bytes(path, 65536)
    guess = sniff(head)
    if guess is None and not head.lstrip(b"\xef\xbb\xbf \t\r\n"):
        # nothing to tell the format by (an empty pipe, a blank file): say that, not "not a log format"
        raise UnknownFormat(f"{os.fspath(path)}: {no_hands_reason(path)}")
    if guess is None:
        raise UnknownFormat(f"{os.fspath(path)}: not a log format spadework reads (known: {', '.join(FORMATS)})")
    return guess


def load(path: str | os.PathLike[str], fmt: str | None = None, source: str | None = None) -> Iterator[HandRecord | LoadError]:
    """Stream the records of any supported file (format detected unless ``fmt`` is given).

    Yields :class:`HandRecord` and :class:`LoadError`; an unreadable file (missing,
    unknown format) yields one :class:`LoadError` at line 0 instead of raising.
    """
    src = source or os.fspath(path)
    if os.path.isdir(path):
        try:
            os.listdir(path)
            reason = "a folder, not a log file"
        except OSError as exc:
            reason = f"a folder whose files cannot be listed ({(exc.strerror or str(exc)).lower()}): its logs are not read"
        yield LoadError(src, 0, reason, "")
        return
    if os.path.islink(path) and not os.path.exists(path):
        yield LoadError(src, 0, f"a link to {os.readlink(path)}, which does not exist", "")
        return
    try:
        fmt = fmt or detect(path)
        mod = module(fmt)
    except (ValueError, OSError) as exc:
        reason = str(exc)
        for prefix in (f"{os.fspath(path)}: ", f"{src}: "):  # the error row names the file already
            reason = reason[len(prefix):] if reason.startswith(prefix) else reason
        yield LoadError(src, 0, reason, "")
        return
    try:
        yield from mod.load(path, source=src)
    except (OSError, EOFError) as exc:  # unreadable or truncated (.gz) file: keep what was read
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        # io.TruncatedFile knows the line where reading stopped; other errors are the file's (line 0)
        yield LoadError(src, getattr(exc, "next_line", 0), f"cannot read the rest of the file: {reason}", "")
