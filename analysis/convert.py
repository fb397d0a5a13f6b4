"""Converting a log from any readable format to one of the project's formats."""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path

from parsers import formats
from parsers.io import strip_gz
from parsers.model import HandRecord, LoadError

_OUT_EXT = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".spn": "spn", ".csv": "csv"}


def output_format(target: str | os.PathLike[str], out_fmt: str | None = None) -> str:
    """The format to write: ``out_fmt`` if given, else from the target's extension.

    Raises ``ValueError`` naming the writable formats.
    """
    fmt = out_fmt or _OUT_EXT.get(Path(strip_gz(os.fspath(target))).suffix.lower())
    if fmt not in formats.WRITABLE:
        raise ValueError(
            f"cannot tell which format to write for {os.fspath(target)!r}: use a .jsonl, .spn or .csv name, "
            f"or --to with one of {', '.join(formats.WRITABLE)}"
        )
    return fmt


def convert_file(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    in_fmt: str | None = None,
    out_fmt: str | None = None,
) -> tuple[int, list[LoadError]]:
    """Read ``source`` (any format) and write its readable hands to ``target``.

    Streams: records are written as they are read.  A ``.gz`` target is gzipped.
    Returns ``(hands_written, load_errors)``.  Raises ``ValueError`` for an
    unknown output format and ``FileNotFoundError`` for a missing source.
    """
    if not os.path.exists(source):
        raise FileNotFoundError(f"{os.fspath(source)}: no such file")
    fmt = output_format(target, out_fmt)
    writer = formats.module(fmt)
    errors: list[LoadError] = []

    def records():
        for item in formats.load(source, fmt=in_fmt):
            if isinstance(item, LoadError):
                errors.append(item)
            else:
                yield item

    raw = gzip.open(target, "wb") if os.fspath(target).lower().endswith(".gz") else open(target, "wb")
    with raw, io.TextIOWrapper(raw, encoding="utf-8", newline="") as fp:
        written = writer.dump(records(), fp)
    return written, errors


def convert_records(records: list[HandRecord], fmt: str) -> str:
    """Records as text of a writable format (``jsonl``, ``spn``, ``csv``)."""
    return formats.module(fmt).dumps(records)
