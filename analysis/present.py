"""Turning the checker's tables into what a person reads: sentences per game, or JSON.

Everything here reads the derived tables (``violations``, ``games``,
``hand_scores``) and the loaded ``load_errors``; nothing re-applies a rule.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from spadework.analysis.engine.findings import close_bidi
from spadework.parsers.scoresheet import protect_cell


FINDING_ORDER = (
    "game_id, hand NULLS LAST, coalesce(trick, 99), code, seat NULLS FIRST, card NULLS FIRST, side NULLS FIRST, "
    "field NULLS FIRST, message, recorded NULLS FIRST, expected NULLS FIRST"
)
"""The order findings are printed in: by game, hand, trick (a hand's play before its scores) and code,
then by the other columns, so rows alike in the first keys come out the same way whatever order the
table holds them in (DuckDB's sort is not stable: a check over Dask writes the same rows in another order)."""


def rejected_count(con) -> int:
    """How many records the loads rejected (rows of ``load_errors``)."""
    return con.execute("SELECT count(*) FROM load_errors").fetchall()[0][0]


def games_with_unread_rules(con) -> int:
    """How many checked games have rules that could not be read or that change within the game
    (``RULES_INVALID`` / ``RULES_MIXED`` rows of ``violations``)."""
    sql = "SELECT count(DISTINCT game_id) FROM violations WHERE code IN ('RULES_INVALID', 'RULES_MIXED')"
    return con.execute(sql).fetchall()[0][0]


def findings_by_code(con) -> list[tuple[str, int]]:
    """``[(code, count)]`` over the ``violations`` table, most frequent first."""
    return con.execute("SELECT code, count(*) AS n FROM violations GROUP BY code ORDER BY n DESC, code").fetchall()


REASON_SQL = (
    "regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(message, '^line [0-9]+: ', ''), "
    "'''[^'']*''', '''…''', 'g'), '\"[^\"]*\"', '\"…\"', 'g'), '[^\\s''\"]+:[0-9]+', '…:N', 'g'), "
    "'(^|[^A-Za-z0-9_-])-?[0-9]+', '\\1N', 'g')"
)
"""SQL turning a ``load_errors``/``load_warnings`` message into its reason: the line prefix dropped,
quoted values as ``'…'``, ``file:line`` as ``…:N``, every other number as ``N`` (one inside a word
stays: ``UTF-8``)
(``hand 3 of game 'g1' is already loaded from a.jsonl:7`` -> ``hand N of game '…' is already loaded from …:N``)."""


def grouped_rows(con, table: str, names: list[str] | None = None, examples: int = 2) -> list[dict[str, Any]]:
    """The rows of ``load_errors`` or ``load_warnings`` grouped by reason (:data:`REASON_SQL`), for the files
    ``names`` (all files when ``None``).

    One dict per reason, in the order of their first row (by file, then line): ``reason``, ``count``
    (rows), ``examples``: the first ``examples`` rows as ``(source_file, source_line, message)``.
    """
    if table not in ("load_errors", "load_warnings"):
        raise ValueError(f"not a table of rejected records or warnings: {table!r}")
    where = "WHERE list_contains(?, source_file)" if names is not None else ""
    params: list[Any] = [names] if names is not None else []
    rows = con.execute(
        f"""
        WITH r AS (
            SELECT source_file, source_line, message, {REASON_SQL} AS reason,
                   row_number() OVER (ORDER BY source_file, source_line NULLS FIRST, message) AS pos
            FROM {table} {where}
        ), g AS (
            SELECT reason, count(*) AS n, min(pos) AS first FROM r GROUP BY reason
        ), e AS (
            SELECT reason, source_file, source_line, message, pos,
                   row_number() OVER (PARTITION BY reason ORDER BY pos) AS k
            FROM r QUALIFY k <= ?
        )
        SELECT g.reason, g.n, e.source_file, e.source_line, e.message
        FROM g JOIN e USING (reason) ORDER BY g.first, e.pos
        """,
        params + [examples],
    ).fetchall()
    out: list[dict[str, Any]] = []
    for reason, n, f, line, msg in rows:
        if not out or out[-1]["reason"] != reason:
            out.append({"reason": reason, "count": n, "examples": []})
        out[-1]["examples"].append((f, line, msg))
    return out


def print_grouped_rows(con, console: Console, table: str, title: str, names: list[str], limit: int = 20) -> None:
    """Print ``load_errors`` (or ``load_warnings``) rows of the files ``names`` grouped by reason, so one
    corrupt file is not hidden behind a thousand alike notices: a reason met once is printed as
    ``file:line: message``; a reason met more often as ``N x reason`` with its first two rows and how
    many more there are.  At most ``limit`` reasons are printed; the rest are counted."""
    groups = grouped_rows(con, table, names)
    console.print(title)

    from spadework.parsers.model import located as row

    for g in groups[:limit]:
        if g["count"] == 1:
            console.print("  " + row(*g["examples"][0]), markup=False)
            continue
        console.print(f"  {g['count']:,} x {g['reason']}", markup=False)
        for example in g["examples"]:
            console.print("      " + row(*example), markup=False)
        if g["count"] > len(g["examples"]):
            console.print(f"      ... and {g['count'] - len(g['examples']):,} more like these", markup=False)
    if len(groups) > limit:
        rest = groups[limit:]
        console.print(
            f"  ... and {sum(g['count'] for g in rest):,} more in {len(rest):,} other reason{'s' if len(rest) != 1 else ''}",
            markup=False,
        )


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""Characters a terminal acts on instead of showing: C0 and C1 controls (line breaks, ESC), DEL, and
Unicode's line and paragraph separators."""

NAME_WIDTH = 40
"""Most characters of a name a terminal table shows (the rest is cut with an ellipsis)."""


def printable(text: str, limit: int | None = None) -> str:
    """``text`` as one line a terminal shows as written: each control character as its escape
    (``\\n``, ``\\x1b``), directional controls left open closed
    (:func:`~spadework.analysis.engine.findings.close_bidi`), and, with ``limit``, at most ``limit``
    characters (an ellipsis ends a longer text).  A name from a log holding a line break or an escape
    sequence could otherwise break a finding over lines, forge a line of the summary or recolour
    the terminal; a name of thousands of characters fill the screen."""
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    if _CONTROLS.search(text):
        text = _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    return close_bidi(text)


def _game_line(game_id: str, rules: str | None, hands: int, ns: int | None, ew: int | None, winner: str | None) -> str:
    result = f"NS {ns} - EW {ew}"
    state = f"{winner} won" if winner else "unfinished"
    return f"game {printable(game_id)} ({rules or 'standard'}, {hands} hand{'s' if hands != 1 else ''}): {result}, {state}"


PRINT_BLOCK_LINES = 4096
"""Lines :func:`print_validation` hands to rich at a time."""


def print_validation(con, console: Console, limit: int = 0, in_memory: bool = False) -> None:
    """Print each game that has findings, then its findings one sentence a line, then a summary.

    ``limit`` caps the findings printed per game (0 = all).  Games without
    findings are counted, not listed.
    """
    games = con.execute(
        "SELECT g.game_id, g.rules, g.hands, g.total_ns, g.total_ew, g.winner, count(v.code) AS n "
        "FROM games g LEFT JOIN violations v USING (game_id) "
        "GROUP BY ALL ORDER BY g.game_id"
    ).fetchall()
    findings = con.execute(
        f"SELECT game_id, message, code FROM violations ORDER BY {FINDING_ORDER}"
    ).fetchall()
    by_game: dict[str, list[tuple[str, str]]] = {}
    for game_id, message, code in findings:
        by_game.setdefault(game_id, []).append((message, code))
    clean = 0
    # The lines go out a block at a time, as one rich Text each (game lines in bold): one print per
    # line cost about 50 microseconds, a third of validate's time on a log with a fault in one hand
    # of twenty.  Text is printed as it is written (no markup, no emoji codes).
    block, lines = Text(), 0

    def flush() -> None:
        block.right_crop(1)  # the last newline: print ends the line
        console.print(block)

    for game_id, rules, hands, ns, ew, winner, n in games:
        if not n:
            clean += 1
            continue
        block.append(_game_line(game_id, rules, hands, ns, ew, winner) + "\n", style="bold")
        items = by_game.get(game_id, [])
        shown = items if not limit else items[:limit]
        block.append("".join(f"  {printable(message)}  [{code}]\n" for message, code in shown))
        if len(items) > len(shown):
            where = "--json or --limit 0 shows them" if in_memory else "see the violations table"
            block.append(f"  ... and {len(items) - len(shown)} more ({where})\n")
        lines += 1 + len(shown)
        if lines >= PRINT_BLOCK_LINES:
            flush()
            block, lines = Text(), 0
    if lines:
        flush()
    total = len(findings)
    dirty = len(games) - clean
    console.print(
        f"Checked {len(games):,} game{'s' if len(games) != 1 else ''}: {clean:,} clean, "
        f"{dirty:,} with findings ({total:,} finding{'s' if total != 1 else ''})"
    )
    if total:
        console.print("Findings by code: " + ", ".join(f"{c} {n}" for c, n in findings_by_code(con)))


def _rows(con, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(query, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def validation_json(con, summary) -> dict[str, Any]:
    """Everything ``validate`` prints, as one JSON-ready dict.

    Keys: ``files`` (source_file, format, hands, errors), ``load_errors``
    (source_file, source_line, message), ``load_errors_by_reason`` (:func:`grouped_rows`: reason,
    count, the first examples), ``findings_by_code``, and ``games``: per
    game its totals and winner, ``findings`` (rows of ``violations``) and
    ``hand_scores`` (rows of ``hand_scores``, points and bags as recomputed).
    Holds every game at once: :func:`write_validation_json` writes the same text game by game.
    """
    return _validation_head(con, summary) | {"games": list(iter_game_docs(con))}


def _validation_head(con, summary) -> dict[str, Any]:
    """:func:`validation_json` without its ``games``."""
    names = [f.source_file for f in summary.files]
    return {
        "files": [
            {"source_file": f.source_file, "format": f.format, "hands": f.hands, "errors": f.errors, "warnings": f.warnings}
            for f in summary.files
        ],
        "skipped": summary.skipped,
        "load_errors": _rows(
            con,
            "SELECT source_file, source_line, message FROM load_errors WHERE list_contains(?, source_file) "
            "ORDER BY source_file, source_line, message",
            [names],
        ),
        "load_errors_by_reason": [
            {"reason": g["reason"], "count": g["count"],
             "examples": [{"source_file": f, "source_line": ln, "message": m} for f, ln, m in g["examples"]]}
            for g in grouped_rows(con, "load_errors", names)
        ],
        "findings_by_code": dict(findings_by_code(con)),
    }


def iter_game_docs(con, batch: int = 10_000) -> Iterator[dict[str, Any]]:
    """Per game, in game_id order, its ``games`` row with its ``findings`` (rows of ``violations``,
    :data:`FINDING_ORDER`) and ``hand_scores`` (by hand, side, scoring): the ``games`` of
    :func:`validation_json`.  Reads the three tables as ordered streams, ``batch`` rows at a time,
    so the memory it holds does not grow with the database (rows of a game not in ``games`` are
    left out)."""
    ranked = "(SELECT game_id, row_number() OVER (ORDER BY game_id) AS game_rank FROM games)"

    def stream(query: str) -> Iterator[tuple[int, dict[str, Any]]]:
        cur = con.cursor().execute(query)
        cols = [d[0] for d in cur.description][:-1]  # the last column is game_rank
        while rows := cur.fetchmany(batch):
            for r in rows:
                yield r[-1], dict(zip(cols, r[:-1]))

    games = stream(f"SELECT g.*, r.game_rank FROM games g JOIN {ranked} r USING (game_id) ORDER BY r.game_rank")
    found = stream(f"SELECT v.*, r.game_rank FROM violations v JOIN {ranked} r USING (game_id) ORDER BY r.game_rank, {FINDING_ORDER}")
    scores = stream(
        f"SELECT s.*, r.game_rank FROM hand_scores s JOIN {ranked} r USING (game_id) "
        "ORDER BY r.game_rank, hand, side, scoring"
    )
    nf, ns = next(found, None), next(scores, None)
    for rank, game in games:
        doc: dict[str, Any] = game | {"findings": [], "hand_scores": []}
        while nf is not None and nf[0] == rank:
            doc["findings"].append(nf[1])
            nf = next(found, None)
        while ns is not None and ns[0] == rank:
            doc["hand_scores"].append(ns[1])
            ns = next(scores, None)
        yield doc


def write_validation_json(con, summary, out: IO[str]) -> None:
    """Write :func:`validation_json` to ``out`` as indented JSON (orjson's two-space indent, ending in a
    newline), game by game: the same text as dumping the dict, with memory that does not grow with
    the number of hands (the dict of a million hands held several GB)."""
    import orjson

    opt = orjson.OPT_INDENT_2
    text = orjson.dumps(_validation_head(con, summary) | {"games": []}, option=opt).decode()
    tail = '"games": []\n}'
    assert text.endswith(tail)
    out.write(text[: -len("[]\n}")])
    first = True
    for game in iter_game_docs(con):
        out.write("[\n" if first else ",\n")
        out.write("\n".join("    " + line for line in orjson.dumps(game, option=opt).decode().split("\n")))
        first = False
    out.write("[]\n}\n" if first else "\n  ]\n}\n")


# --------------------------------------------------------------------------------------------
# CSV for spreadsheets (``standings --csv``, ``stats --csv``)

def csv_safe(value: Any) -> Any:
    """A cell a spreadsheet will not run as a formula (issue 11 item 6): text goes through
    :func:`spadework.parsers.scoresheet.protect_cell`, the score sheet's own rule; numbers and
    ``None`` stay as they are."""
    return protect_cell(value) if isinstance(value, str) else value


def write_csv(rows, out, columns: list[str] | None = None) -> None:
    """Write ``rows`` (a polars frame or dicts) as CSV to the text stream ``out``, every cell through
    :func:`csv_safe`; ``columns`` picks and orders them (default: the frame's, or the first row's keys).
    Lists and dicts are written as JSON text; ``None`` as an empty cell."""
    import csv

    import orjson

    if hasattr(rows, "to_dicts"):
        columns = columns or list(rows.columns)
        rows = rows.to_dicts()
    rows = list(rows)
    columns = columns or (list(rows[0]) if rows else [])
    w = csv.writer(out, lineterminator="\n")
    w.writerow([csv_safe(c) for c in columns])
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c)
            if isinstance(v, (list, dict, tuple)):
                v = orjson.dumps(v).decode()
            cells.append("" if v is None else csv_safe(v))
        w.writerow(cells)


# --------------------------------------------------------------------------------------------
# Progress on standard error


class ProgressBar:
    """A rich progress bar on standard error for a long command (``simulate``, ``report``), or nothing.

    ``ProgressBar(enabled)`` as a context manager; ``stage(label, total)`` starts a task (``total``
    ``None`` or 0: an open-ended spinner), ``update(done)`` / ``advance(n)`` move it.  With
    ``enabled`` false every call does nothing, so callers need no test of their own.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._bar = None
        self._task = None

    def __enter__(self) -> "ProgressBar":
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=Console(stderr=True, emoji=False), transient=True)  # fmt: skip
            self._bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def stage(self, label: str, total: int | None = None) -> None:
        """Start a new task called ``label`` of ``total`` steps (none: open-ended), replacing the last."""
        if self._bar is None:
            return
        if self._task is not None:
            self._bar.remove_task(self._task)
        self._task = self._bar.add_task(label, total=total or None)

    def update(self, done: int) -> None:
        """Set the steps done of the current task."""
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done)

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more steps done."""
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task, n)


# --------------------------------------------------------------------------------------------
# Tables for notebooks: rounded, labelled, nothing cut off


def format_cell(kind: str, value: Any) -> str:
    """A value as a table shows it: ``rate`` in per cent with one decimal, ``mean`` with two decimals,
    ``signed`` with a sign, ``int`` with thousands separators, ``pts`` a rate difference in points,
    ``yesno`` as yes/no, ``text`` as it is; ``–`` for none or NaN."""
    import math

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if kind == "rate":
        return f"{100 * value:.1f}%"
    if kind == "pts":
        return f"{100 * value:+.1f} pts"
    if kind == "mean":
        return f"{value:.2f}"
    if kind == "signed":
        return f"{value:+.2f}"
    if kind == "int":
        return f"{int(value):,}"
    if kind == "yesno":
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return " & ".join(str(v) for v in value)
    return str(value)


class Table:
    """A frame shown the way a person reads it: chosen columns with labels, every value rounded
    (:func:`format_cell`), no column or row cut off, log text escaped, and rows of one player
    highlighted.  Notebooks display it (``_repr_html_``); ``str()`` gives plain text.

    ``rows``: a polars frame or dicts; ``columns``: ``(column, label, kind)`` triples;
    ``highlight``: ``(column, value)``: rows whose column equals (or, for a list, holds) the value
    are marked; ``title`` and ``note`` go above and below.
    """

    def __init__(self, rows, columns, title: str | None = None, note: str | None = None,
                 highlight: tuple[str, Any] | None = None) -> None:  # fmt: skip
        self.rows = rows.to_dicts() if hasattr(rows, "to_dicts") else [dict(r) for r in rows]
        self.columns = list(columns)
        self.title = title
        self.note = note
        self.highlight = highlight

    def _marked(self, row: dict[str, Any]) -> bool:
        if self.highlight is None or self.highlight[1] is None:
            return False
        col, value = self.highlight
        cell = row.get(col)
        return value in cell if isinstance(cell, (list, tuple)) else cell == value

    def cells(self) -> list[list[str]]:
        """The formatted cells, row by row."""
        return [[format_cell(kind, r.get(col)) for col, _, kind in self.columns] for r in self.rows]

    def _repr_html_(self) -> str:
        import html

        e = lambda v: html.escape(str(v), quote=True)  # noqa: E731
        out = []
        if self.title:
            out.append(f"<h4>{e(self.title)}</h4>")
        right = {"rate", "pts", "mean", "signed", "int"}
        out.append('<table class="spadework"><thead><tr>'
                   + "".join(f"<th style=\"text-align:{'right' if k in right else 'left'}\">{e(label)}</th>"
                             for _, label, k in self.columns) + "</tr></thead><tbody>")  # fmt: skip
        for r, cells in zip(self.rows, self.cells()):
            style = ' style="background:#ffebee;font-weight:bold"' if self._marked(r) else ""
            tds = "".join(f"<td style=\"text-align:{'right' if k in right else 'left'}"
                          f"{';white-space:nowrap' if k in right or len(c) < 40 else ''}\">{e(c)}</td>"
                          for (_, _, k), c in zip(self.columns, cells))  # fmt: skip
            out.append(f"<tr{style}>{tds}</tr>")
        out.append("</tbody></table>")
        if self.note:
            out.append(f'<p style="color:#666;font-size:0.9em">{e(self.note)}</p>')
        return "\n".join(out)

    def __str__(self) -> str:
        from rich.console import Console
        from rich.table import Table as RichTable
        from rich.text import Text

        t = RichTable(title=None if self.title is None else printable(self.title))
        for _, label, kind in self.columns:
            t.add_column(label, justify="right" if kind in ("rate", "pts", "mean", "signed", "int") else "left")
        for r, cells in zip(self.rows, self.cells()):
            t.add_row(*[Text(printable(c)) for c in cells], style="bold" if self._marked(r) else "")
        # never Jupyter's display: rich would show the text there too, beside _repr_html_'s table
        console = Console(width=200, record=True, file=__import__("io").StringIO(), force_jupyter=False, emoji=False)
        console.print(t)
        if self.note:
            console.print(Text(self.note))
        return console.export_text()

    __repr__ = __str__


class ReaderGone:
    """An output stream (standard output, or the file ``convert`` writes, text or bytes) that, once
    its reader has gone (`spadework validate ... | head -1`), throws the rest away instead of
    failing, so the command finishes and exits with the status it would have given."""

    def __init__(self, stream, label: str | None = None) -> None:
        self._stream = stream
        self.gone = False
        name = getattr(stream, "name", None)
        # how an error writing it names it (a full disk: "standard output: no space left on device")
        self.label = label or ({"<stdout>": "standard output", "<stderr>": "standard error"}.get(name, name) if isinstance(name, str) else None)

    def _named(self, exc: OSError) -> OSError:
        """``exc`` with this stream's name when it carries none."""
        if exc.filename is None and self.label is not None:
            return OSError(exc.errno, exc.strerror or str(exc), self.label)
        return exc

    def _lost(self) -> None:
        if not self.gone:
            self.gone = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._stream.fileno())  # what is still buffered drains into nothing
            finally:
                os.close(devnull)

    def _guarded(self, method, *args, gone=None):
        """``method(*args)``; once the reader has gone, ``gone`` instead (after throwing the rest away);
        any other write error raised with this stream's name."""
        try:
            return method(*args)
        except BrokenPipeError:
            self._lost()
            return gone
        except OSError as exc:
            raise self._named(exc) from exc

    def write(self, text: str) -> int:
        return self._guarded(self._stream.write, text, gone=len(text))

    def flush(self) -> None:
        self._guarded(self._stream.flush)

    def close(self) -> None:
        if self._guarded(self._stream.close, gone=False) is False:  # what was still buffered: its reader has gone
            self._stream.close()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
