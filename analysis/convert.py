"""Converting a log from any readable format to one of the project's formats."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from typing import TYPE_CHECKING

from spadework.parsers import formats
from spadework.parsers.db import appears_twice, out_of_range, rejected_record
from spadework.parsers.io import strip_gz
from spadework.parsers.model import HandRecord, LoadError, located

if TYPE_CHECKING:
    from spadework.analysis.engine.rules import Ruleset

_OUT_EXT = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".spn": "spn", ".csv": "csv"}


def output_format(target: str | os.PathLike[str], out_fmt: str | None = None, option: str = "--to") -> str:
    """The format to write: ``out_fmt`` if given, else from the target's extension.

    Raises ``ValueError`` naming the writable formats: for an ``out_fmt`` that is none of them,
    a name whose extension says no format, and an ``out_fmt`` the extension contradicts (SPN
    written into ``x.jsonl`` could not be read back as what its name says).  ``option``: the
    command line's name for ``out_fmt``, for the message.
    """
    name = os.fspath(target)
    by_name = _OUT_EXT.get(Path(strip_gz(name)).suffix.lower())
    known = ", ".join(formats.WRITABLE)
    if out_fmt is not None and out_fmt not in formats.WRITABLE:
        raise ValueError(f"{option} {out_fmt!r} is not a format spadework writes: use one of {known}")
    if out_fmt is not None and by_name is not None and by_name != out_fmt:
        raise ValueError(
            f"{name!r} is named as {by_name} but {option} says {out_fmt}: the file could not be read back "
            f"as its name says; name it .{out_fmt} or leave {option} out"
        )
    fmt = out_fmt or by_name
    if fmt not in formats.WRITABLE:
        raise ValueError(
            f"cannot tell which format to write for {name!r}: use a .jsonl, .spn or .csv name, "
            f"or {option} with one of {known}"
        )
    return fmt


def convert_file(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    in_fmt: str | None = None,
    out_fmt: str | None = None,
    warnings: list[str] | None = None,
    losses: list[str] | None = None,
    reader_gone: list[str] | None = None,
) -> tuple[int, list[LoadError]]:
    """Read ``source`` (any format) and write its readable hands to ``target``.

    ``warnings``: a list to which the readers' notes on the hands (``file:line: message``: a key
    ignored, an option an importer could not map) are appended, as ``spadework load`` keeps
    them in ``load_warnings``.  ``losses``: a list to which what the output format cannot hold of
    a hand is appended (``file:line: message``, see :func:`score_sheet_losses`; JSON Lines and
    SPN lose nothing).  ``reader_gone``: a list to which the output's name is appended when its reader
    went away before the end (``convert LOG - --to spn | head``: the rest was thrown away).
    Streams: records are written as they are read, into a file beside ``target`` that takes its place
    once whole (an interrupted or failed conversion, or one that read no hand and rejected records,
    leaves ``target`` as it was).  A ``.gz`` target is gzipped; ``-`` is standard output (with
    ``out_fmt``).
    Returns ``(hands_written, load_errors)``.  Raises ``ValueError`` for an
    unknown output format or a folder as ``source``, and ``FileNotFoundError`` for a missing source;
    nothing is written then.
    """
    if not os.path.exists(source):
        raise FileNotFoundError(f"{os.fspath(source)}: no such file")
    if os.path.isdir(source):
        raise ValueError(f"{os.fspath(source)} is a folder: convert takes one log file (convert each file of it)")
    to_stdout = os.fspath(target) == "-"
    if not to_stdout and os.path.exists(target) and os.path.samefile(source, target):
        raise ValueError(f"{os.fspath(target)} is the file being read: write the converted log to another file")
    fmt = output_format(target, out_fmt)
    writer = formats.module(fmt)
    if not to_stdout:
        try:  # a new folder is made, as report, simulate and --db do
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        except OSError:  # a file where a folder should be: opening the target names it
            pass
    errors: list[LoadError] = []
    first_line: dict[tuple[str, int], int | None] = {}  # (game_id, hand) -> the line that gave it

    def records():
        for item in formats.load(source, fmt=in_fmt):
            if isinstance(item, LoadError):
                errors.append(item)
                continue
            # what `load` rejects of a readable record is rejected here too, with the same reason
            key = (item.game_id, item.hand)
            problem = out_of_range(item) or (appears_twice(key, first_line[key]) if key in first_line else None)
            if problem is not None:
                errors.append(rejected_record(item, item.source_file or os.fspath(source), problem))
                continue
            first_line[key] = item.source_line
            place = (item.source_file or os.fspath(source), item.source_line or 0)
            if warnings is not None and item.warnings:
                warnings.extend(located(*place, w) for w in item.warnings)
            if losses is not None and fmt == "csv":
                losses.extend(located(*place, w) for w in score_sheet_losses(item))
            yield _for_score_sheet(item) if fmt == "csv" else item

    from spadework.analysis.present import ReaderGone

    part: Path | None = None  # a file is written beside the target and put in its place when whole
    base = None
    if to_stdout:  # standard output (``--to`` says the format); left open for the caller
        raw = open(sys.stdout.fileno(), "wb", closefd=False)
    else:
        target_path = Path(target)
        # a file (through a link: the file it names), or none yet: written beside it and put in its
        # place, keeping its mode; anything else (a device such as /dev/stdout, a pipe) is written as is
        whole = not target_path.exists() or target_path.is_file()  # (both follow links)
        real = Path(os.path.realpath(target_path)) if whole else target_path
        part = real.with_name(f".{real.name}.{os.getpid()}.part") if whole else None
        try:
            raw = base = open(part if part is not None else real, "wb")
        except OSError as exc:  # (named as the target the user gave, not the part file)
            raise OSError(exc.errno, exc.strerror, os.fspath(target)) from None
        if target_path.name.lower().endswith(".gz"):  # (the header names the target, not the part)
            raw = gzip.GzipFile(filename=target_path.name, fileobj=base, mode="wb")
    # a reader that goes away (`convert LOG - --to spn | head`): the rest is thrown away and the
    # conversion runs to its end, so the exit status is what it would have been
    out = ReaderGone(raw, "standard output" if to_stdout else os.fspath(target))
    try:
        with io.TextIOWrapper(out, encoding="utf-8", newline="") as fp:
            written = writer.dump(records(), fp)
        if base is not None:
            base.close()  # (a GzipFile leaves the file it was given open)
            if part is not None and (written or not errors):
                if real.exists():
                    shutil.copymode(real, part)
                os.replace(part, real)
    finally:
        # interrupted, failed, or nothing read: the target is left as it was (no half-written log)
        if base is not None:
            base.close()
        if part is not None and part.exists():
            part.unlink()
    if out.gone and reader_gone is not None:
        reader_gone.append(out.label or os.fspath(target))
    return written, errors


def score_sheet_record(rec: HandRecord, ruleset: Ruleset | None = None) -> HandRecord:
    """The record as a score sheet knows it: the tricks taken as played (what the table
    counted, after the renege penalty where the ruleset has one), even where the log's
    ``taken`` is missing or wrong.  Used for ``csv``.  Raises ``RulesError`` for unreadable rules."""
    from spadework.analysis.engine.replay import replay_hand
    from spadework.analysis.engine.rules import get_ruleset
    from spadework.analysis.engine.scoring import apply_renege_penalty

    if rec.tricks is None:
        return rec
    rs = ruleset or get_ruleset(rec.rules)
    # the replay's count: it fills a gap trick with the seat's one unplayed card (RULES.md, "Gaps in
    # the record"), so a sheet holds what the checker scores the hand on
    rp = replay_hand(replace(rec, taken=None), rs)
    taken = rp.taken
    if rs.renege_penalty_tricks > 0 and rp.reneges:
        # the table moved tricks for each renege before writing them down
        bids = [b for b in rp.bids if b is not None]
        taken = apply_renege_penalty(taken, bids, rp.reneges, rs.renege_penalty_tricks)
    return replace(rec, taken=tuple(taken))


def score_sheet_losses(rec: HandRecord) -> list[str]:
    """What a score sheet cannot hold of ``rec``'s bidding, one sentence each (empty when nothing).

    A sheet has one bid cell per seat and no order of bids (FORMATS.md 3), so a second bid by a
    seat is left out and bids made out of turn are read back in turn order: the
    ``BID_OUT_OF_TURN`` findings (RULES.md 3) they give are lost with them.  The deal, the play and
    extension keys are left out of every sheet and are not named here (``convert --help`` says so).
    """
    notes: list[str] = []
    first: list = []
    for b in rec.bids:
        if b.seat in first:
            notes.append(f"hand {rec.hand} of game {rec.game_id}: {b.seat} bid twice; the score sheet keeps its first bid only")
        else:
            first.append(b.seat)
    in_turn = [s for s in rec.dealer.left.clockwise() if s in first]
    if first != in_turn:
        notes.append(
            f"hand {rec.hand} of game {rec.game_id}: bids made out of turn ({' '.join(map(str, first))}); "
            "the score sheet holds them in turn order, so BID_OUT_OF_TURN cannot be found from it"
        )
    return notes


def _for_score_sheet(rec: HandRecord) -> HandRecord:
    """A record bound for a score sheet: tricks taken counted from the play when the log has play
    of all 13 tricks but no ``taken`` record (a sheet without them could not be scored).  A play
    that stops short leaves the cells empty ("not recorded", FORMATS.md 3), as the log has them:
    a count of the tricks played would read as a recorded count that does not add up to 13."""
    if rec.taken is not None or not rec.tricks:
        return rec
    try:
        sheet = score_sheet_record(rec)
    except ValueError:  # rules the checker cannot read: leave the taken cells empty
        return rec
    return sheet if sheet.taken is not None and sum(sheet.taken) == 13 else rec


def convert_records(records: list[HandRecord], fmt: str) -> str:
    """Records as text of a writable format (``jsonl``, ``spn``, ``csv``)."""
    return formats.module(fmt).dumps(records)
