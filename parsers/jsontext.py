"""JSON text that keeps whole numbers of any size.

orjson reads a whole number beyond 64 bits as a float (``123456789012345678901234567890`` becomes
``1.2345678901234568e+29``) and refuses to write one.  An extension key's value is "kept, never
interpreted" (FORMATS.md section 1), and a ruleset's numbers are judged by the checker, so the
parsers read and write JSON through these two functions: orjson's speed on every ordinary text, and
Python's own ``json`` where a number is too large for orjson.
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


__all__ = ["dumps", "loads", "unwritable"]
