"""Opening log files: ``.gz`` transparently, line by line, bytes decoded per record.

Reading is streaming: memory holds one line (or one block) at a time, never the file.
Invalid UTF-8 is reported for the record that holds it, not for the whole file.

Lines may end in LF, CRLF or a lone CR (classic Mac OS; old Excel for Mac's CSV).  Text saved as
UTF-16 or UTF-32 with a byte-order mark (what Windows tools write) is read too:
:func:`open_binary` hands every reader the same text as UTF-8 bytes, line for line, so every
format, the format sniffing and the fast loader read such a file as they read UTF-8.  A gzip
stream that is cut off or corrupt stops the reading with :class:`TruncatedFile`, which names
the last whole line read (the records before it are kept by the loader).
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import gc
import gzip
import hashlib
import io
import os
import threading
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b"

BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
"""Byte-order marks of the wide encodings read (UTF-32 first: its little-endian mark starts like UTF-16's)."""


UTF8_BOM = b"\xef\xbb\xbf"

_GC_LOCK = threading.Lock()
_GC_USERS = 0
_GC_BEFORE: tuple[int, ...] = ()


@contextlib.contextmanager
def young_collections_only() -> Iterator[None]:
    """While reading records in Python, let the garbage collector look at young objects only.

    A loader keeps tens of thousands of parsed records (and numba, DuckDB and pyarrow keep
    their own objects) alive while it reads; every full collection walked them all, about a
    sixth of a load in the Python parser (16,425 SPN hands in one process, three pairs: 4.9-5.1 s,
    4.2-4.3 s with young collections only; 3.8 s with the collector off).  Young collections still run, so garbage
    cycles made and dropped while reading are freed as before; only cycles that outlive a young
    collection wait for the end of the block.  The thresholds in force before are put back when
    the last of nested or concurrent users leaves (they are process-wide)."""
    global _GC_USERS, _GC_BEFORE
    with _GC_LOCK:
        if _GC_USERS == 0:
            _GC_BEFORE = gc.get_threshold()
            young = _GC_BEFORE[0] if _GC_BEFORE else 700
            gc.set_threshold(young, 1_000_000, 1_000_000)
        _GC_USERS += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_USERS -= 1
            if _GC_USERS == 0:
                gc.set_threshold(*_GC_BEFORE)


def _mark_bad_units(exc: UnicodeError) -> tuple[str, int]:
    """Decoding error handler: each byte that is not text becomes a lone surrogate, so the line
    holding it fails :func:`decode` (a record error) instead of stopping the whole file."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "".join(chr(0xDC00 + b) for b in exc.object[exc.start : exc.end]), exc.end


codecs.register_error("spadework-mark", _mark_bad_units)


class _Recoded(io.RawIOBase):
    """A UTF-16/UTF-32 byte stream (its byte-order mark already consumed) read as UTF-8 bytes."""

    def __init__(self, raw: BinaryIO, encoding: str) -> None:
        self._raw = raw
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="spadework-mark")
        self._out = b""
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        while not self._out and not self._eof:
            chunk = self._raw.read(65536)
            if not chunk:
                self._eof = True
            text = self._decoder.decode(chunk, final=not chunk)
            self._out = text.encode("utf-8", "surrogatepass")
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _LoneCR(io.RawIOBase):
    """A byte stream whose lines end in a lone carriage return (classic Mac OS, and the CSV files old
    Excel for Mac writes) read with ``\n`` line ends, so every reader counts its lines."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        data = self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data.replace(b"\r", b"\n")
        return n

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def _lone_cr(head: bytes) -> bool:
    """True when text's lines end in a lone CR: the first bytes hold a CR and no LF."""
    return b"\r" in head and b"\n" not in head


class _Gzip(gzip.GzipFile):
    """A gzip reader whose corrupt data raises ``gzip.BadGzipFile`` (an ``OSError``, as a cut-off or
    unreadable file does) instead of ``zlib.error``, which callers would not expect."""

    def _guard(self, method, *args):
        try:
            return method(*args)
        except zlib.error as exc:
            raise gzip.BadGzipFile(f"corrupt gzip data: {exc}") from exc

    def read(self, size=-1):
        return self._guard(super().read, size)

    def read1(self, size=-1):
        return self._guard(super().read1, size)

    def peek(self, n):
        return self._guard(super().peek, n)

    def readline(self, size=-1):
        return self._guard(super().readline, size)


def _open_text(path: str | os.PathLike[str]) -> tuple[BinaryIO, bool]:
    """:func:`open_binary` before its lone-CR step (un-gzipped, the byte-order mark dropped, UTF-16/32
    recoded), and whether any of those changed the stored bytes."""
    f = open(path, "rb")
    stream: BinaryIO = f
    changed = False
    if f.peek(2)[:2] == GZIP_MAGIC:
        stream = _Gzip(fileobj=f, mode="rb")  # type: ignore[assignment]
        changed = True
    try:
        head = stream.peek(4)[:4]  # type: ignore[attr-defined]
    except (OSError, EOFError, zlib.error):  # a broken gzip: the reader meets the error itself
        return stream, changed
    for bom, encoding in BOMS:
        if head.startswith(bom):
            stream.read(len(bom))
            stream = io.BufferedReader(_Recoded(stream, encoding), 65536)  # type: ignore[assignment]
            return stream, True
    if head.startswith(UTF8_BOM):
        stream.read(len(UTF8_BOM))
        return stream, True
    return stream, changed


LONE_CR_HEAD = 1 << 20
"""How far a file is searched for a line feed before its lines are taken to end in lone CRs (a
first line longer than a peek's 8 KB may hold a CR as JSON white space)."""


def _lone_cr_file(path: str | os.PathLike[str], stream: BinaryIO) -> bool:
    """True when the text of ``path`` (``stream``, opened by :func:`_open_text` and not read yet)
    has its lines ended by lone CRs: a CR, and no LF in its first :data:`LONE_CR_HEAD` bytes."""
    if not _lone_cr(stream.peek(8192)[:8192]):  # type: ignore[attr-defined]
        return False
    again, _ = _open_text(path)  # a CR and no LF in the peek (a few KB): look further
    with again:
        return _lone_cr(again.read(LONE_CR_HEAD))


def open_binary(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a file for reading bytes, un-gzipping it when it is gzip (by content, not name).

    Text with a UTF-16 or UTF-32 byte-order mark (after un-gzipping) comes out as UTF-8 bytes
    without the mark, and UTF-8 text without its mark (so a reader that looks at the first byte,
    such as a ``.json`` document's ``[`` or ``{``, sees the text); lines ended by lone CRs (old Mac
    files) come out ended by LF; anything else comes out as stored (:func:`reads_as_stored`).
    """
    stream, _ = _open_text(path)
    try:
        if _lone_cr_file(path, stream):
            stream = io.BufferedReader(_LoneCR(stream), 65536)  # type: ignore[assignment]
    except (OSError, EOFError, zlib.error):  # a broken gzip: the reader meets the error itself
        pass
    return stream


def reads_as_stored(path: str | os.PathLike[str]) -> bool:
    """True when :func:`open_binary` hands out the file's bytes exactly as stored (not gzip, no
    byte-order mark, lines not ended by lone CRs), so a reader may take byte ranges of the file
    itself and see what every other reader sees.  Raises ``OSError`` for a file it cannot read."""
    stream, changed = _open_text(path)
    with stream:
        return not changed and not _lone_cr_file(path, stream)


class TruncatedFile(EOFError):
    """A compressed file that stops part way (cut off, or corrupt): ``line`` is the last whole line
    read (0: none), ``next_line`` the line where reading stopped."""

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.next_line = line + 1
        self.reason = reason
        where = f"after line {line:,}" if line else "before its first line"
        super().__init__(f"the file is cut off or damaged {where} ({reason}); the records before it are read")


def utf16_hint(text: str | bytes) -> str:
    """``"; ... is the file UTF-16 without a byte-order mark? ..."`` for a line holding NUL characters
    (UTF-16 text read as UTF-8: every other byte is NUL), else ``""``: appended to a reader's reason."""
    nul = "\x00" if isinstance(text, str) else b"\x00"
    if nul in text:
        return "; the line holds NUL characters: is the file UTF-16 without a byte-order mark? Save it as UTF-8"
    return ""


NO_HANDS = "the file holds no hands (it is empty or blank)"
NO_HAND_RECORDS = "the file holds no hands (it has text, but no hand record: a header, tags or comments alone)"


def no_hands_reason(path: str | os.PathLike[str]) -> str:
    """Why a file gave no hand and no rejected record: empty or blank, text with no hand record in it
    (a score sheet's header alone, game-level tags or comments alone), a JSON document with no hand
    in it (``[]``), or (a gzip file cut off within its header, which reads as nothing) cut off
    before its first line."""
    try:
        with open(path, "rb") as f:
            if f.read(2) == GZIP_MAGIC:
                f.seek(0)
                with gzip.GzipFile(fileobj=f, mode="rb") as z:
                    while z.read(1 << 20):
                        pass
        with open_binary(path) as f:
            head = f.read(4096).strip()
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        return str(TruncatedFile(0, str(exc) or type(exc).__name__))
    except OSError:
        return NO_HANDS
    if head.startswith(b"[") and head[1:].strip() == b"]":
        return "the file holds no hands (an empty JSON array)"
    if head:
        return NO_HAND_RECORDS
    return NO_HANDS



def read_lines(path: str | os.PathLike[str], numbers: Iterable[int]) -> dict[int, bytes]:
    """The lines numbered ``numbers`` (from 1) of a file as :func:`open_binary` reads it, without
    their line ends, keyed by number; reading stops after the last one wanted.  A number beyond the
    file's end is left out."""
    wanted = set(numbers)
    raws: dict[int, bytes] = {}
    if not wanted:
        return raws
    with open_binary(path) as f:
        for n, line in enumerate(f, 1):
            if n in wanted:
                raws[n] = line.rstrip(b"\r\n")
                if len(raws) == len(wanted):
                    break
    return raws


def head_bytes(path: str | os.PathLike[str], size: int = 4096) -> bytes:
    """The first ``size`` bytes of a file's content (after un-gzipping); for format sniffing.

    A gzip file cut off (or damaged) within its first ``size`` bytes gives the bytes before the
    damage, so it is still recognised by its content and its reader keeps the records before it;
    a file that cannot be opened gives ``b""``."""
    try:
        return read_whole(path, size)[0]
    except (OSError, EOFError, zlib.error):  # unreadable, or a gzip header cut off
        return b""


def read_whole(path: str | os.PathLike[str], limit: int | None = None) -> tuple[bytes, TruncatedFile | None]:
    """A file's whole content (after un-gzipping, as :func:`open_binary` gives it; at most ``limit``
    bytes) and ``None``; or, for a gzip file cut off or damaged, the bytes before the damage and the
    :class:`TruncatedFile` naming the last whole line among them (for a reader that needs the whole
    document, such as a ``.json`` array, to keep what came before the damage).  Raises ``OSError``
    for a file it cannot open."""
    out = bytearray()
    with open_binary(path) as f:
        read = getattr(f, "read1", f.read)  # one decompressed piece at a time: an error loses none read before
        try:
            while limit is None or len(out) < limit:
                piece = read(1 << 20 if limit is None else min(1 << 20, limit - len(out)))
                if not piece:
                    break
                out += piece
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            return bytes(out), TruncatedFile(out.count(b"\n"), str(exc) or type(exc).__name__)
    return bytes(out), None


def strip_gz(name: str) -> str:
    """``games.jsonl.gz`` -> ``games.jsonl``."""
    return name[:-3] if name.lower().endswith(".gz") else name


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_bytes)`` for each line, numbered from 1, line ending removed.

    Raises :class:`TruncatedFile` (an ``EOFError``) when a gzip stream is cut off or corrupt,
    after yielding every whole line before the damage.
    """
    n = 0
    with open_binary(path) as f:
        lines = iter(f)
        while True:
            try:
                line = next(lines)
            except StopIteration:
                return
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise TruncatedFile(n, str(exc) or type(exc).__name__) from exc
            n += 1
            yield n, line.rstrip(b"\r\n")


def iter_text_lines(source: str | bytes | BinaryIO) -> Iterator[tuple[int, bytes]]:
    """Like :func:`iter_lines` over an in-memory string, bytes or binary stream."""
    if isinstance(source, str):
        source = source.encode("utf-8")
    if isinstance(source, bytes) and _lone_cr(source[:LONE_CR_HEAD]):
        source = source.replace(b"\r", b"\n")
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    for n, line in enumerate(stream, 1):
        yield n, line.rstrip(b"\r\n")


class LookAhead:
    """Numbered lines that a reader may read ahead of and put back: a score-sheet row whose quoted
    cell goes on to the next lines, an SPN comment with a blank line inside.  Iterate it as the
    lines; :meth:`put_back` returns lines read ahead (in their order) to be read again."""

    def __init__(self, lines: Iterable[tuple[int, bytes]]) -> None:
        self._lines = iter(lines)
        self._back: collections.deque[tuple[int, bytes]] = collections.deque()

    def __iter__(self) -> "LookAhead":
        return self

    def __next__(self) -> tuple[int, bytes]:
        return self._back.popleft() if self._back else next(self._lines)

    def put_back(self, lines: list[tuple[int, bytes]]) -> None:
        self._back.extendleft(reversed(lines))


def decode(raw: bytes) -> str:
    """Decode one record's bytes as UTF-8 (a leading BOM is dropped).

    Raises ``ValueError`` with a reason such as ``invalid UTF-8 at byte 12``.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        lead, follow = raw[exc.start : exc.start + 1], raw[exc.start + 1 : exc.start + 2]
        if lead == b"\xed" and follow and 0xA0 <= follow[0] <= 0xBF:
            # a lone surrogate: bytes of a UTF-16/UTF-32 file that are no character (see open_binary)
            raise ValueError("invalid text in this line (a lone surrogate: no character in UTF-8, UTF-16 or UTF-32)") from None
        raise ValueError(f"invalid UTF-8 at byte {exc.start + 1}") from None
    return text[1:] if text.startswith("\ufeff") else text


def raw_text(raw: bytes) -> str:
    """The raw bytes of a bad record as text for ``load_errors.raw``; undecodable bytes become U+FFFD."""
    return raw.decode("utf-8", errors="replace")


def display_name(path: str | os.PathLike[str]) -> str:
    """The name a file is recorded under (``source_file``): its path relative to the working
    directory when it is below it, else its absolute path; so ``g.jsonl``, ``./g.jsonl`` and
    ``/abs/path/g.jsonl`` name the same file and reloading it replaces its hands.

    The name is text a database can store: bytes of a file name that are not UTF-8 (which Python
    keeps as lone surrogates) are written as ``\\xNN``, so two files whose names differ only in such
    bytes keep names of their own (written as U+FFFD, both were one name, and loading the second
    removed the first's hands, or not, depending on where a batch ended).  When the working
    directory is gone, the absolute path."""
    full = os.path.abspath(os.fspath(path))
    try:
        rel = os.path.relpath(full)
    except OSError:  # the working directory was removed
        rel = full
    name = full if rel.startswith("..") else rel
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


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


def _parts(path: Path) -> tuple[str, ...]:
    return path.parts


def _files_under(folder: Path) -> list[Path]:
    """The files under ``folder``, sorted, hidden ones (a part starting with ``.``) left out, links to
    folders not followed.  A subfolder that is gone by the time it is listed (a database's temporary
    folder beside the logs) is passed over; one that cannot be listed (no permission) comes out
    itself, so that its load names it (``formats.load``) instead of its logs being left out unseen."""
    found = []
    unlisted: list[Path] = []

    def not_listed(exc: OSError) -> None:
        if not isinstance(exc, FileNotFoundError) and exc.filename is not None:
            unlisted.append(Path(exc.filename))

    for top, dirs, names in os.walk(folder, onerror=not_listed, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(Path(top) / n for n in names if not n.startswith("."))
    # a link whose target is gone stays in (its load names it), never dropped without a word
    keep = [p for p in found if _kept(p)] + unlisted
    return sorted(keep, key=_parts)  # Path's own order, without a Python __lt__ per comparison


def _kept(path: Path) -> bool:
    """A file, a link whose target is gone, or an entry of a folder that can be listed but not
    entered (its load names it, as a file it cannot read)."""
    try:
        return path.is_file() or (path.is_symlink() and not path.exists())
    except PermissionError:
        return True


_SPOOL: dict[str, Path] = {}
_spool_lock = threading.Lock()


def readable_again(path: str | os.PathLike[str]) -> Path:
    """``path``, or, when it can be read only once (a pipe or FIFO, ``/dev/stdin``, a shell's
    ``<(zcat logs.gz)``), a temporary copy of what it holds: every loader reads a file at least
    twice (its head to tell the format, then all of it), and a pipe gives its head only once (the
    first hands were lost).  The copy keeps the name's extension (for the format) and is removed
    when the process ends; the same path gives the same copy."""
    import atexit
    import shutil
    import stat
    import tempfile

    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError:
        return p
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return p
    with _spool_lock:
        key = os.fspath(p)
        if key not in _SPOOL:
            folder = tempfile.mkdtemp(prefix="spadework-spool-")
            atexit.register(shutil.rmtree, folder, True)
            copy = Path(folder) / ("input" + "".join(p.suffixes[-2:]))
            digest = hashlib.sha256()
            with open(p, "rb") as src, open(copy, "wb") as out:
                while chunk := src.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
            _SPOOL[key] = copy
            _SPOOL_DIGEST[copy] = digest.hexdigest()
        return _SPOOL[key]


_SPOOL_DIGEST: dict[Path, str] = {}


def spooled_source(source: str, path: Path) -> str:
    """The ``source_file`` name of what :func:`readable_again` gave for ``source``: the name itself for
    a file; for a pipe's copy, the name and the start of its content's SHA-256 (``/dev/stdin#3f2a9c1b0d4e``),
    so that two different logs piped in one after the other are two sources (loading the second had
    replaced the first's hands, as a file loaded again does), and the same log piped twice is one."""
    digest = _SPOOL_DIGEST.get(path)
    return source if digest is None else f"{source}#{digest[:12]}"


def path_list(paths: "str | os.PathLike[str] | Iterable[str | os.PathLike[str]]") -> list:
    """``paths`` as a list: one file or folder given alone (a ``str``, ``bytes`` or ``Path``) is a
    list of one, not the characters of its name (``load_files(con, "season.jsonl")`` walked the
    whole file system from ``/``)."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [paths]
    return list(paths)


def walk(paths: list[str | os.PathLike[str]]) -> Iterator[Path]:
    """Every file under the given files and folders, folders recursively, in sorted order, each once.

    A file named twice (twice on the command line, in a folder given and by itself, or under two
    spellings or through a link) comes out once, where it is first met.
    Hidden files and folders (starting with ``.``) inside a folder are skipped.
    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    paths = path_list(paths)
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
            for sub in _files_under(path):
                if first_time(sub):
                    yield sub
        elif path.exists():
            if first_time(path):
                yield path
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
