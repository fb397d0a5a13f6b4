"""JSON text that keeps whole numbers of any size.

orjson reads a whole number beyond 64 bits as a float (``123456789012345678901234567890`` becomes
``1.2345678901234568e+29``) and refuses to write one.  An extension key's value is "kept, never
interpreted" (FORMATS.md section 1), and a ruleset's numbers are judged by the checker, so the
parsers read and write JSON through these two functions: orjson's speed on every ordinary text, and
Python's own ``json`` where a number is too large for orjson.

JSON does not say which of two equal keys in one object counts (orjson keeps the last), so what a
reader interprets is read with :func:`loads_strict` (or checked with :func:`repeated_key`): a key
given twice rejects the record instead of silently picking one.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_LONG_DIGITS = re.compile(rb"\d{19}")
"""A whole number beyond 64 bits has at least 19 digits: only a text holding 19 in a row is looked at again."""


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


def loads(text: bytes | bytearray | memoryview | str) -> Any:
    """``orjson.loads``, with every whole number exact.  Raises ``orjson.JSONDecodeError`` (a
    ``ValueError``) for what orjson refuses (the same texts as before: NaN, lone surrogates, ...)."""
    obj = orjson.loads(text)
    raw = text.encode() if isinstance(text, str) else bytes(text)
    if _LONG_DIGITS.search(raw) and _has_float(obj):
        obj = json.loads(raw)  # orjson accepted the text, so it is JSON; here whole numbers stay whole
    return obj


def dumps(value: Any) -> str:
    """``orjson.dumps(value).decode()``; a whole number beyond 64 bits is written as its digits.
    Raises ``TypeError`` for what cannot be written (nesting beyond orjson's 254 levels, an object
    JSON has no form for)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError as exc:
        if "64-bit" not in str(exc):
            raise
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def unwritable(value: Any) -> str | None:
    """Why :func:`dumps` cannot write ``value`` (the loader stores its text: orjson writes at most 254
    levels of nesting), or ``None`` when it can.  A parser rejects such a record with this reason
    instead of leaving the loader to fail on it."""
    try:
        dumps(value)
    except TypeError as exc:
        return "nested more than 254 levels deep" if "ecursion" in str(exc) else str(exc)
    return None


def _key_count(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_key_count(v) for v in value.values())
    if isinstance(value, list):
        return sum(_key_count(v) for v in value)
    return 0


def repeated_key(text: str | bytes, obj: Any) -> str | None:
    """A key given twice in one object of the JSON ``text`` (parsed as ``obj``, where the last one
    silently won), or ``None``.  JSON leaves open which of the two counts, so a reader must not
    pick one: a line with ``"hand": 2, "hand": 3`` was read as hand 3, and the next line, the real
    hand 3, was the one rejected.  Cheap for the usual line: its keys are counted in the text (each
    ends in ``":``) and in ``obj``, and only a line where the counts differ (a repeated key, or a
    ``":`` inside a string, or a space before a colon) is read again key by key."""
    if text.count(b'":' if isinstance(text, bytes) else '":') == _key_count(obj):
        return None
    return _repeat_inside(json.loads(text, object_pairs_hook=_pairs))


TWICE = "the key {!r} is given twice in one object (JSON does not say which counts)"
"""The reason a reader gives for a key given twice (``TWICE.format(key)``)."""


class _Pairs(dict):
    """An object read key by key, remembering a key it (or an object inside it) gave twice."""

    repeated: str | None = None


def _repeat_inside(value: Any) -> str | None:
    if isinstance(value, _Pairs):
        return value.repeated
    if isinstance(value, list):
        return next((r for r in map(_repeat_inside, value) if r is not None), None)
    return None


def _pairs(items: list[tuple[str, Any]]) -> _Pairs:
    keys = [k for k, _ in items]
    out = _Pairs(items)
    if len(set(keys)) < len(keys):
        out.repeated = next(k for i, k in enumerate(keys) if k in keys[:i])
    else:
        out.repeated = next((r for r in (_repeat_inside(v) for _, v in items) if r is not None), None)
    return out


def repeated_keys_by_item(data: bytes, items: list[Any]) -> dict[int, str]:
    """For a ``.json`` document holding the array ``items``, or the one object ``items[0]`` (as parsed
    from ``data``): the index of each item that gives a key twice in one of its objects, with that key
    (see :func:`repeated_key`; the same cheap count first, the document read again key by key only
    when it differs)."""
    if data.count(b'":') == _key_count(items):
        return {}
    again = json.loads(data, object_pairs_hook=_pairs)
    again = again if isinstance(again, list) else [again]
    return {i: r for i, r in enumerate(map(_repeat_inside, again)) if r is not None}


class RepeatedKey(ValueError):
    """A JSON text gives a key twice in one object (see :func:`repeated_key`)."""


def loads_strict(text: bytes | str) -> Any:
    """:func:`loads`, refusing a text that gives a key twice in one object: raises
    :class:`RepeatedKey` (a ``ValueError`` whose message is :data:`TWICE`), as well as what
    :func:`loads` raises."""
    obj = loads(text)
    key = repeated_key(text, obj)
    if key is not None:
        raise RepeatedKey(TWICE.format(key))
    return obj


__all__ = ["TWICE", "RepeatedKey", "dumps", "loads", "loads_strict", "repeated_key", "repeated_keys_by_item", "unwritable"]
