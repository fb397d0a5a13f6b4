"""Opening log files: ``.gz`` transparently, line by line, bytes decoded per record.

Reading is streaming: memory holds one line (or one block) at a time, never the file.
Invalid UTF-8 is reported for the record that holds it, not for the whole file.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b"


def open_binary(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a file for reading bytes, un-gzipping it when it is gzip (by content, not name)."""
    f = open(path, "rb")
    head = f.peek(2)[:2] if hasattr(f, "peek") else b""
    if head == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=f, mode="rb")  # type: ignore[return-value]
    return f


def head_bytes(path: str | os.PathLike[str], size: int = 4096) -> bytes:
    """The first ``size`` bytes of a file's content (after un-gzipping); for format sniffing."""
    try:
        with open_binary(path) as f:
            return f.read(size)
    except (OSError, EOFError):
        return b""


def strip_gz(name: str) -> str:
    """``games.jsonl.gz`` -> ``games.jsonl``."""
    return name[:-3] if name.lower().endswith(".gz") else name


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_bytes)`` for each line, numbered from 1, line ending removed."""
    with open_binary(path) as f:
        for n, line in enumerate(f, 1):
            yield n, line.rstrip(b"\r\n")


def iter_text_lines(source: str | bytes | BinaryIO) -> Iterator[tuple[int, bytes]]:
    """Like :func:`iter_lines` over an in-memory string, bytes or binary stream."""
    if isinstance(source, str):
        source = source.encode("utf-8")
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    for n, line in enumerate(stream, 1):
        yield n, line.rstrip(b"\r\n")


def decode(raw: bytes) -> str:
    """Decode one record's bytes as UTF-8 (a leading BOM is dropped).

    Raises ``ValueError`` with a reason such as ``invalid UTF-8 at byte 12``.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"invalid UTF-8 at byte {exc.start + 1}") from None
    return text[1:] if text.startswith("\ufeff") else text


def raw_text(raw: bytes) -> str:
    """The raw bytes of a bad record as text for ``load_errors.raw``; undecodable bytes become U+FFFD."""
    return raw.decode("utf-8", errors="replace")


def display_name(path: str | os.PathLike[str]) -> str:
    """The name a file is recorded under (``source_file``): its path relative to the working
    directory when it is below it, else its absolute path; so ``g.jsonl``, ``./g.jsonl`` and
    ``/abs/path/g.jsonl`` name the same file and reloading it replaces its hands."""
    full = os.path.abspath(os.fspath(path))
    rel = os.path.relpath(full)
    return full if rel.startswith("..") else rel


def file_identity(path: str | os.PathLike[str]) -> tuple[int, int] | str:
    """What makes two paths one file: device and inode (so a symbolic link, ``a/../b`` and ``./b``
    are the file they lead to), or the real path where the system gives no inode."""
    try:
        st = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    if st.st_ino:
        return (st.st_dev, st.st_ino)
    return os.path.realpath(path)


def walk(paths: list[str | os.PathLike[str]]) -> Iterator[Path]:
    """Every file under the given files and folders, folders recursively, in sorted order, each once.

    A file named twice (twice on the command line, in a folder given and by itself, or under two
    spellings or through a link) comes out once, where it is first met.
    Hidden files and folders (starting with ``.``) inside a folder are skipped.
    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    seen: set[tuple[int, int] | str] = set()

    def first_time(path: Path) -> bool:
        key = file_identity(path)
        if key in seen:
            return False
        seen.add(key)
        return True

    for p in paths:
        path = Path(p)
        if path.is_dir():
            for sub in sorted(path.rglob("*")):
                rel = sub.relative_to(path)
                if sub.is_file() and not any(part.startswith(".") for part in rel.parts) and first_time(sub):
                    yield sub
        elif path.exists():
            if first_time(path):
                yield path
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
