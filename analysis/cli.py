"""The ``spadework`` command line.

Every command is a thin shell over library functions: loading is
:mod:`spadework.parsers.db`, checking :mod:`spadework.analysis.engine.checker`, and so on.  Exit codes are
documented in ``spadework --help`` and are the same for every command:

* 0 — done, nothing to report;
* 1 — done, and the check found illegal plays or wrong scores (``validate``, ``check``);
* 2 — some input could not be read (records rejected to ``load_errors``, a missing
  file, an unknown ruleset) or the command line was wrong.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2

HELP = """\
spadework: read Spades game logs, check every trick and score, chart how players bid and play.

Typical use: `spadework validate LOGS...` reads the logs (JSON Lines, SPN, score-sheet CSV,
Trickster PTN, OpenSpiel histories; .gz too), replays every trick under the rules and prints each
illegal play and each wrong recorded score in one sentence.  `spadework load` + `spadework check`
do the same in two steps into a DuckDB file you can query with SQL or the notebooks.

Exit status (the same meaning for every command): 0 = done, and clean; 1 = findings (illegal
plays or wrong scores: given by the commands that check or answer for a check, validate, check and
report); 2 = unreadable input (records rejected to load_errors, missing file, unknown rules) or
bad usage.  Commands that present a checked database (standings, stats, judge-bids) or write logs
(load, convert, simulate) exit 0 when they did their work, whatever the findings.
"""

app = typer.Typer(help=HELP, no_args_is_help=True, add_completion=False, rich_markup_mode=None)
def _page_width() -> int | None:
    """Standard output's width for tables: the terminal's (rich's own choice, or ``COLUMNS``), and
    for a file or a pipe, wide enough that a table keeps its natural width (rich would lay it out at
    80 columns, wrapping names a few letters a line, in standings saved to a file)."""
    if os.environ.get("COLUMNS") or sys.stdout.isatty():
        return None
    return 200


out = Console(highlight=False, soft_wrap=True, width=_page_width(), emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def _show_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"spadework {version('spadework')}")
        except PackageNotFoundError:  # run from a checkout that was never installed
            print("spadework (not installed: run from its source folder)")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _options(
    show_version: Annotated[
        bool, typer.Option("--version", help="Print spadework's version and exit.", callback=_show_version, is_eager=True)
    ] = False,
) -> None:
    """Options that come before the command."""

PathsArg = Annotated[list[Path], typer.Argument(help="Log files or folders (read recursively).", show_default=False, metavar="LOGS")]
DbOpt = Annotated[Optional[Path], typer.Option("--db", help="DuckDB database file (created if missing).")]
RulesOpt = Annotated[
    Optional[str],
    typer.Option(
        "--rules",
        help="Ruleset for every game, overriding the logs: a preset (standard, barmore, nyc, openspiel) "
        'or JSON like \'{"preset": "standard", "target": 300}\'.',
    ),
]
def _known_format(name: str | None) -> str | None:
    """``--format``: a format spadework reads, or a usage error (exit 2) before any file is read."""
    from spadework.parsers.formats import FORMATS

    if name is not None and name not in FORMATS:
        raise typer.BadParameter(f"{name!r} is not a format spadework reads: use one of {', '.join(FORMATS)}")
    return name


FormatOpt = Annotated[
    Optional[str],
    typer.Option(
        "--format",
        "-f",
        help="Read every file as this format (jsonl, spn, csv, ptn, openspiel) instead of detecting it.",
        callback=_known_format,
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
EngineOpt = Annotated[
    str,
    typer.Option(
        "--engine",
        help="auto (default): compiled for all but small inputs (2 MB of logs or more; `check`: 3,000 hands or "
        "more), reference otherwise. reference (also: replay): the readable implementation, the Python parser "
        "and the replay hand by hand. compiled (also: fast): canonical JSON Lines read by compiled code (any "
        "line it cannot prove it reads as the Python parser does goes to that parser) and every hand checked "
        "by the compiled rules core; same tables, same findings, many times faster on large logs "
        "(docs/PERFORMANCE.md).",
    ),
]
MemoryOpt = Annotated[
    Optional[str],
    typer.Option(
        "--memory-limit",
        help="DuckDB memory limit such as 448MB or 4GB; beyond it DuckDB spills to a temporary folder. "
        "Default: 128MB with the compiled engine (peak memory then stays under 1 GiB however large the logs), "
        "DuckDB's own default (80% of RAM) with the reference.",
        show_default=False,
    ),
]


def _engine(name: str, *, paths: list[Path] | None = None, con=None):
    """The engine ``--engine`` names (``auto`` decides by the logs' size or the database's hands);
    exits 2 for an unknown name."""
    from spadework.analysis.engine import engines

    try:
        if con is not None:
            return engines.engine_for_db(name, con)
        return engines.engine_for_logs(name, paths or [])
    except ValueError as exc:
        err.print(f"error: --engine: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None


def _limit_memory(con, limit: str | None, engine) -> None:
    """Apply ``--memory-limit`` (default: the engine's own); exits 2 for a size DuckDB cannot take."""
    from spadework.analysis.engine.engines import MemoryLimitError, limit_memory

    try:
        limit_memory(con, limit, engine)
    except MemoryLimitError as exc:
        err.print(f"error: --memory-limit {exc.limit!r}: {exc.reason}")
        raise typer.Exit(EXIT_BAD_INPUT) from None


def _n(count: int, noun: str) -> str:
    """``3 hands``, ``1 hand``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _exit_for_findings(con) -> int:
    """1 when the check found anything; 2 when a log's rules could not be read (RULES_INVALID)."""
    from spadework.analysis.present import findings_by_code

    codes = dict(findings_by_code(con))
    if codes.get("RULES_INVALID"):
        return EXIT_BAD_INPUT
    return EXIT_FINDINGS if codes else EXIT_OK


def _parse_rules_option(rules: str | None):
    """The --rules value as the checker takes it (a preset name or a dict); exits 2 on bad JSON."""
    if rules is None:
        return None
    text = rules.strip()
    if text.startswith("{"):
        import orjson

        from spadework.parsers import jsontext

        try:
            return jsontext.loads_strict(text)
        except orjson.JSONDecodeError as exc:
            err.print(f"error: --rules is not valid JSON: {exc}")
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except jsontext.RepeatedKey as exc:
            err.print(f"error: --rules: {exc}", markup=False)
            raise typer.Exit(EXIT_BAD_INPUT) from None
    return text


def _validate_rules(rules):
    """Fail early, with the list of known presets/options, on a ruleset the checker would refuse."""
    if rules is None:
        return None
    from spadework.analysis.engine.rules import RulesError, get_ruleset

    try:
        get_ruleset(rules)
    except RulesError as exc:
        err.print(f"error: --rules: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    return rules


FOLDER_AS_DB = "it is a folder; give --db a file name (e.g. season.duckdb)"


def _open_failure(exc: Exception) -> str:
    """Why a database would not open, in a sentence: DuckDB's lock conflict names the other process
    (another spadework command writing it, or a notebook holding it open)."""
    text = str(exc)
    if "Could not set lock" in text:
        pid = re.search(r"\(PID (\d+)\)", text)
        who = f"process {pid.group(1)}" if pid else "another process"
        return (f"{who} has it open (another spadework command, or a notebook); wait for it to finish "
                "or close it, then run this again")
    if "Is a directory" in text:
        return FOLDER_AS_DB
    if isinstance(exc, OSError) and exc.filename is not None:
        return _os_error_text(exc)
    return text


def _open_db(db: Path | None, read_only: bool = False, existing: bool = False):
    """Open ``db`` (exit 2 with a sentence when it cannot be).  ``existing``: it must already be a
    spadework database, as the commands that read loaded hands need; a DuckDB file made by
    something else is refused before any table is added to it."""
    from spadework.parsers.db import connect

    if (read_only or existing) and db is not None and not db.exists():
        err.print(f"error: {db}: no such database (create it with `spadework load ... --db {db}`)")
        raise typer.Exit(EXIT_BAD_INPUT)
    if existing and db is not None:
        from spadework.parsers.state import holds_spadework_tables

        try:
            with connect(db, read_only=True) as probe:
                ours = holds_spadework_tables(probe)
        except Exception as exc:  # not a DuckDB file, or locked
            err.print(f"error: cannot open database {db}: {_open_failure(exc)}")
            raise typer.Exit(EXIT_BAD_INPUT) from None
        if not ours:
            err.print(
                f"error: {db} is not a spadework database (it holds no loaded hands); "
                f"load logs into it first: `spadework load LOGS --db {db}`"
            )
            raise typer.Exit(EXIT_BAD_INPUT)
    try:
        con = connect(db, read_only=read_only)
    except Exception as exc:  # duckdb raises its own IOException family
        err.print(f"error: cannot open database {db}: {_open_failure(exc)}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if read_only:  # a reader of a checked database (report, standings): DuckDB's memory capped
        from spadework.analysis.engine.engines import limit_reader_memory

        limit_reader_memory(con)
    try:  # typer carries its own click
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - an older typer on click
        from click import get_current_context

    ctx = get_current_context(silent=True)
    if ctx is not None:  # closed when the command ends, so the next command (in this process too) can open it
        ctx.call_on_close(con.close)
    return con


def _load(con, paths: list[Path], fmt: str | None, quiet: bool, engine):
    with _input_errors(FileNotFoundError, ValueError):  # ValueError: an unknown --format
        summary = engine.load(con, paths, fmt=fmt, progress=not quiet and err.is_terminal)
    _require_logs(summary, paths)
    return summary


STDIN = Path("/dev/stdin")


def _require_paths(paths: list[Path]) -> list[Path]:
    """The paths to read, ``-`` standing for standard input (a file named ``-`` is still that file).
    Exit 2 naming the first path that does not exist, before any database is made for it."""
    paths = [STDIN if str(p) == "-" and not Path(p).exists() else Path(p) for p in paths]
    for p in paths:
        if not p.exists():
            err.print(f"error: {p}: no such file or folder")
            raise typer.Exit(EXIT_BAD_INPUT)
    return paths


def _require_logs(summary, paths: list[Path]) -> None:
    """Exit 2 when the paths held no log file at all."""
    if not summary.files:
        skipped = f" ({len(summary.skipped)} file(s) in no known format)" if summary.skipped else ""
        err.print(f"error: no log files found in {', '.join(str(p) for p in paths)}{skipped}")
        raise typer.Exit(EXIT_BAD_INPUT)


def _load_and_check(con, paths: list[Path], fmt: str | None, rules, quiet: bool, engine):
    """``validate``'s two steps, as the engine does them."""
    with _input_errors(FileNotFoundError, ValueError):  # an unknown --format, rules a log names
        summary, _ = engine.validate(con, paths, rules=rules, fmt=fmt, progress=not quiet and err.is_terminal)
    _require_logs(summary, paths)
    return summary


def _print_load_summary(con, summary, console: Console, show_errors: int = 20) -> None:
    files = len(summary.files)
    console.print(
        f"Loaded {summary.hands:,} hand{'s' if summary.hands != 1 else ''} from {files:,} file{'s' if files != 1 else ''}; "
        f"{summary.errors:,} record{'s' if summary.errors != 1 else ''} rejected"
        + (f"; {len(summary.skipped)} file(s) in no known format skipped" if summary.skipped else "")
        + (f"; {summary.warnings} import warning(s)" if summary.warnings else "")
    )
    from spadework.analysis.present import print_grouped_rows

    names = [f.source_file for f in summary.files]
    if summary.errors:
        print_grouped_rows(con, console, "load_errors", "Rejected records (the full list is in the load_errors table):", names, show_errors)
    if summary.warnings:
        print_grouped_rows(con, console, "load_warnings", "Import warnings (load_warnings table):", names, show_errors)
    for name in summary.skipped[:show_errors]:
        console.print(f"  skipped {name}: not a log format spadework reads", markup=False)


@app.command()
def load(
    paths: PathsArg,
    db: Annotated[Path, typer.Option("--db", help="DuckDB database file to write (created if missing).")],
    fmt: FormatOpt = None,
    quiet: QuietOpt = False,
    engine: EngineOpt = "auto",
    memory_limit: MemoryOpt = None,
) -> None:
    """Read log files and folders into a DuckDB database (tables hands, deals, bids, plays, recorded_scores,
    load_errors).

    Loading a file again replaces what it loaded before.  A record that cannot be read is listed with file,
    line and reason, and kept in load_errors; the other records still load.  Exit 0 when every record
    loaded, 2 when any was rejected.
    """
    paths = _require_paths(paths)
    chosen = _engine(engine, paths=paths)
    con = _open_db(db)
    _limit_memory(con, memory_limit, chosen)
    summary = _load(con, paths, fmt, quiet, chosen)
    _print_load_summary(con, summary, out)
    raise typer.Exit(EXIT_BAD_INPUT if summary.errors else EXIT_OK)


def _run_check(con, rules, quiet: bool, engine):
    with _input_errors(ValueError):  # RulesError and friends: a log names rules we do not know
        return engine.check(con, rules=rules, progress=not quiet and err.is_terminal)


@contextmanager
def _input_errors(*plain: type[Exception]):
    """Exit 2 with ``error: <message>`` on the ``plain`` exceptions, and with advice when DuckDB
    (or Python) runs out of memory (the file being loaded is left out whole; the check is one
    transaction)."""
    import duckdb

    try:
        yield
    except plain as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except (MemoryError, duckdb.OutOfMemoryException) as exc:  # DuckDB's is no MemoryError
        err.print(f"error: out of memory: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        err.print("  give DuckDB more room with --memory-limit (e.g. --memory-limit 2GB)")
        raise typer.Exit(EXIT_BAD_INPUT) from None


@app.command()
def check(
    db: Annotated[Path, typer.Option("--db", help="A database made by `spadework load`.")],
    rules: RulesOpt = None,
    quiet: QuietOpt = False,
    engine: EngineOpt = "auto",
    memory_limit: MemoryOpt = None,
) -> None:
    """Replay every loaded hand and fill the derived tables (tricks, violations, hand_scores, games).

    Prints how many findings each code raised.  Exit 0 when clean, 1 when anything was found.
    """
    con = _open_db(db, existing=True)
    rules_spec = _validate_rules(_parse_rules_option(rules))
    chosen = _engine(engine, con=con)
    _limit_memory(con, memory_limit, chosen)
    summary = _run_check(con, rules_spec, quiet, chosen)
    from spadework.analysis.present import findings_by_code, rejected_count

    games, hands = summary.games, summary.hands
    counts = findings_by_code(con)
    total = sum(n for _, n in counts)
    out.print(f"Checked {_n(games, 'game')}, {_n(hands, 'hand')}: {_n(total, 'finding')}")
    for code, n in counts:
        out.print(f"  {code:<24} {n:,}")
    rejected = rejected_count(con)
    if rejected:  # not the check's to judge (load said so), but "0 findings" alone reads as all clear
        out.print(f"Not checked: {_n(rejected, 'record')} rejected when loaded (the load_errors table)")
    raise typer.Exit(_exit_for_findings(con))


@app.command()
def validate(
    paths: PathsArg,
    db: DbOpt = None,
    rules: RulesOpt = None,
    fmt: FormatOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print findings and scores as JSON instead of sentences.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=0, help="Most findings printed per game (0 = all).")] = 0,
    quiet: QuietOpt = False,
    engine: EngineOpt = "auto",
    memory_limit: MemoryOpt = None,
    dask: Annotated[
        Optional[str],
        typer.Option(
            "--dask",
            help="Spread the work over a Dask cluster: local (a worker process per core), local:N, or a "
            "scheduler address such as tcp://host:8786 (every worker needs spadework installed and the logs "
            "under the same path). Same tables, findings and exit status (docs/PERFORMANCE.md, Dask).",
            show_default=False,
        ),
    ] = None,
    dask_output: Annotated[
        Optional[Path],
        typer.Option("--dask-output", help="Folder the Dask workers write their Parquet parts into (removed after); "
                     "on a cluster of several machines, one every worker sees. Default: a temporary folder.", show_default=False),
    ] = None,  # fmt: skip
) -> None:
    """Load and check logs in one step, and print per game the findings a tournament director acts on.

    Uses an in-memory database unless --db is given.  Exit 0 when every record loaded and nothing was found,
    1 when the check found illegal plays or wrong scores, 2 when some input could not be read.
    """
    rules_spec = _validate_rules(_parse_rules_option(rules))
    paths = _require_paths(paths)
    chosen = _dask_engine(dask, dask_output, engine) if dask is not None else _engine(engine, paths=paths)
    con = _open_db(db)
    _limit_memory(con, memory_limit, chosen)
    with _dask_errors():
        summary = _load_and_check(con, paths, fmt, rules_spec, quiet or as_json, chosen)
    from spadework.analysis.present import print_validation, write_validation_json

    if as_json:
        write_validation_json(con, summary, sys.stdout)
    else:
        _print_load_summary(con, summary, out)
        print_validation(con, out, limit=limit, in_memory=db is None)
    if summary.errors:
        raise typer.Exit(EXIT_BAD_INPUT)
    raise typer.Exit(_exit_for_findings(con))


def _dask_engine(address: str, output: Path | None, engine: str):
    """The engine of ``--dask`` (the compiled core on a Dask cluster); exits 2 without Dask or with
    ``--engine reference``."""
    from spadework.analysis.engine.distributed import DaskError, dask_engine

    if engine not in ("auto", "compiled", "fast"):
        err.print(f"error: --dask runs the compiled engine; leave out --engine {engine}")
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        return dask_engine(address, output)
    except DaskError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None


@contextmanager
def _dask_errors():
    """Exit 2 with the sentence of a Dask failure (scheduler unreachable, a worker's exception)."""
    from spadework.analysis.engine.distributed import DaskError

    try:
        yield
    except DaskError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None


@app.command()
def convert(
    source: Annotated[Path, typer.Argument(help="A log in any readable format.", show_default=False, metavar="IN")],
    target: Annotated[Path, typer.Argument(help="The file to write; its extension (.jsonl, .spn, .csv, optionally .gz) picks the format; '-' writes to standard output (give --to).", show_default=False, metavar="OUT")],
    fmt: FormatOpt = None,
    to: Annotated[Optional[str], typer.Option("--to", help="Output format (jsonl, spn, csv) when the extension does not say.")] = None,
) -> None:
    """Convert a log to the project's formats (JSON Lines, SPN, or the score-sheet CSV).

    Unreadable records are listed on standard error and left out of the output (exit 2); so are
    the readers' warnings (a key a reader ignores, an importer option it cannot map), as `load`
    lists them.  JSON Lines and SPN keep everything they read; the score sheet keeps bids, tricks
    taken and scores only (a second bid by a seat, or the order of bids made out of turn, is
    named on standard error as it is left out).
    """
    from spadework.analysis.convert import convert_file

    warnings: list[str] = []
    losses: list[str] = []
    gone: list[str] = []
    try:
        written, errors = convert_file(
            source, target, in_fmt=fmt, out_fmt=to, warnings=warnings, losses=losses, reader_gone=gone
        )
    except ValueError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except OSError as exc:  # the log gone, the output's folder a file or not there
        err.print(f"error: {_os_error_text(exc)}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if not written and not errors:  # as `load` and `validate` say of it
        from spadework.parsers.io import no_hands_reason

        errors = [f"{source}: {no_hands_reason(source)}"]
    _print_some(errors, 50)
    if warnings:
        err.print(f"{_n(len(warnings), 'warning')} from reading {source} (`load` keeps them in load_warnings):", markup=False)
        _print_some(warnings, 20)
    if losses:
        err.print(f"{_n(len(losses), 'note')} on what the score sheet cannot hold (left out of it):", markup=False)
        _print_some(losses, 20)
    # to standard output, the summary goes to standard error, after the log
    where = "standard output" if str(target) == "-" else target
    if gone:
        wrote = f"Read {_n(written, 'hand')}; {where} stopped taking them part way (its reader went away), so the rest were not written"
    elif not written and errors and str(target) != "-":
        wrote = f"No hand could be read, so {where} was not written (a file already there is left as it was)"
    else:
        wrote = f"Wrote {_n(written, 'hand')} to {where}"
    (err if str(target) == "-" else out).print(f"{wrote}; {_n(len(errors), 'record')} could not be read")
    raise typer.Exit(EXIT_BAD_INPUT if errors else EXIT_OK)


def _print_some(lines: Sequence[Any], limit: int) -> None:
    """The first ``limit`` of ``lines`` on standard error, indented, and how many more there are."""
    for line in lines[:limit]:
        err.print(f"  {line}", markup=False)
    if len(lines) > limit:
        err.print(f"  ... and {len(lines) - limit} more")


@app.command()
def simulate(
    out_path: Annotated[Path, typer.Option("--out", help="File to write (.jsonl, .spn or .csv; .gz to compress).")],
    players: Annotated[int, typer.Option("--players", min=4, help="Players in the club (at least 4).")] = 12,
    games: Annotated[int, typer.Option("--games", min=0, help="Games to play, each to the target score (or stopped unfinished after 60 hands, as a game between sandbaggers can be).")] = 60,
    seed: Annotated[int, typer.Option("--seed", help="Random seed: the same seed writes the same bytes.")] = 1,
    out_fmt: Annotated[Optional[str], typer.Option("--format", help="jsonl, spn or csv (default: from --out).")] = None,
    rules: Annotated[
        Optional[str],
        typer.Option(
            "--rules",
            help="Ruleset every game is played under: a preset (standard, barmore, nyc, openspiel) "
            'or JSON like \'{"preset": "standard", "target": 300}\' [default: standard].',
        ),
    ] = None,
    faults: Annotated[float, typer.Option("--faults", min=0.0, max=1.0, help="Chance per hand of a planted fault (0..1).")] = 0.0,
    club: Annotated[
        str,
        typer.Option(
            "--club",
            help="Name that starts every game id and event (club-2026-01-03-t1-r1). The ids follow the schedule, "
            "not the seed: give seasons that will share a database different names.",
        ),
    ] = "club",
    quiet: QuietOpt = False,
) -> None:
    """Play a synthetic season with bots whose personalities are known, optionally planting faults.

    With --faults, a sidecar file (OUT with .faults.jsonl) lists every planted fault with the finding the
    checker must report (code, game, hand, trick, seat, card), so `spadework validate OUT` can be compared.
    """
    from spadework.analysis.engine.rules import RulesError
    from spadework.analysis.sim import simulate_season, write_season

    from spadework.analysis.convert import output_format

    rules_spec = _parse_rules_option(rules) or "standard"
    if not club.strip() or not club.isprintable():
        err.print(f"error: --club {club!r}: give a name of printable characters, not empty", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT)
    if str(out_path) == "-":
        err.print("error: --out -: simulate writes a file (and, with --faults, its sidecar); give a file name "
                  "(`spadework convert FILE - --to spn` then prints it)", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        out_fmt = output_format(out_path, out_fmt, option="--format")
    except ValueError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    from spadework.analysis.present import ProgressBar

    try:
        with ProgressBar(not quiet and err.is_terminal) as bar:
            bar.stage("playing games", games)
            records, planted = simulate_season(players, games, seed, rules=rules_spec, fault_rate=faults,
                                               progress=lambda done, hands: bar.update(done), prefix=club)  # fmt: skip
            bar.stage(f"writing {len(records):,} hands")
            out_path.parent.mkdir(parents=True, exist_ok=True)  # a new folder, as --db and report make one
            hands, rows = write_season(records, out_path, fmt=out_fmt, faults=planted if faults > 0 else None)
    except (RulesError, ValueError, OSError) as exc:
        if isinstance(exc, OSError) and exc.filename is None:  # a write error (a full disk) names no file
            exc = OSError(exc.errno, exc.strerror or str(exc), str(out_path))
        err.print(f"error: {_os_error_text(exc) if isinstance(exc, OSError) else exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    out.print(
        f"Wrote {_n(games, 'game')} ({_n(hands, 'hand')}) to {out_path}"
        + (f"; {_n(rows, 'planted fault')} listed in the sidecar" if faults > 0 else "")
    )


@app.command()
def report(
    db: Annotated[Path, typer.Option("--db", help="A database filled by `spadework load` and `spadework check`.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder to write index.html into (created if missing).")] = Path("report"),
    static: Annotated[bool, typer.Option("--static", help="Charts as inline SVG without any script.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Write a static HTML report: a summary page with the findings and charts, a results and standings page,
    a page per player (tendencies against the field, leaks, calibration, findings with their replays) and a
    page per game (every hand, each hand with a finding replayed trick by trick).  The pages need no network;
    all text from the logs is escaped.

    The report reads what `spadework check` wrote, and opens the database read-only: when the database was
    loaded after its last check (or never checked, or the check did not finish) it writes nothing and
    exits 2, saying to run `spadework check --db FILE` first.  Otherwise the exit status is check's:
    0 when the report holds no finding, 1 when it holds findings (2 when a log's rules could not be read).
    """
    from spadework.analysis.report import build_report

    if str(out_dir) == "-":
        err.print("error: --out -: a report is a folder of pages; give a folder name", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT)
    con = _open_db(db, read_only=True)
    try:
        _require_checked(con, db)
        path = build_report(con, out_dir, interactive=not static, progress=not quiet and err.is_terminal)
        from spadework.analysis.present import findings_by_code

        total = sum(n for _, n in findings_by_code(con))
        status = _exit_for_findings(con)
    finally:
        con.close()  # read-only: let a `check` in the same process open it again
    out.print(f"Report written to {path} with standings.html, players/ and games/ ({_n(total, 'finding')})")
    raise typer.Exit(status)


def _require_checked(con, db: Path) -> None:
    """Exit 2 with the library's sentence (naming `spadework check`) when the derived tables are
    missing or older than the loaded ones (:func:`spadework.parsers.state.require_checked`)."""
    from spadework.parsers.state import NotChecked, require_checked

    try:
        require_checked(con, str(db))
    except NotChecked as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None


@app.command()
def standings(
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Log files or folders (loaded and checked in memory); or --db.", show_default=False, metavar="LOGS")] = None,
    db: Annotated[Optional[Path], typer.Option("--db", help="A database filled by `spadework load` and `spadework check`.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print games, players and partnerships as JSON.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print one table (--table) as CSV (spreadsheet-safe).")] = False,
    table: Annotated[str, typer.Option("--table", help="With --csv: players, partnerships or games.")] = "players",
    tiebreak: Annotated[Optional[str], typer.Option("--tiebreak", help="Order, comma-separated, from: wins, win_rate, head_to_head, point_diff, avg_margin, points_for, points_against, sets, bags, games.", show_default="wins,head_to_head,point_diff")] = None,
    event: Annotated[Optional[str], typer.Option("--event", help="Only this event.")] = None,
    overall: Annotated[bool, typer.Option("--overall", help="One ranking over every game instead of one per event (with --event, the same as --event alone).")] = False,
    rules: RulesOpt = None,
    fmt: FormatOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Every game's result and the players' and partnerships' standings, per event where the logs name
    events: games, wins, win rate, points for and against, average margin, sets and bags, ordered by a
    tie-break chain.  Scores and winners are the recomputed ones; a game whose log records another result
    is marked.  Exit 0, or 2 when some input could not be read."""
    from spadework.analysis import standings as st_mod

    if (paths and db is not None) or (not paths and db is None):
        err.print("error: give either log files or --db FILE")
        raise typer.Exit(EXIT_BAD_INPUT)
    if as_json and as_csv:
        err.print("error: choose one of --json and --csv")
        raise typer.Exit(EXIT_BAD_INPUT)
    if db is not None and (rules is not None or fmt is not None):
        # the database was checked under the rules it was checked with; they were silently ignored
        err.print("error: --rules and --format go with log files; standings --db reads what `check` wrote "
                  "(run `spadework check --db FILE --rules R` to check it under other rules)")
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        chain = st_mod.parse_tiebreak(tiebreak)
    except ValueError as exc:
        err.print(f"error: --tiebreak: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if table not in ("players", "partnerships", "games"):
        err.print(f"error: --table must be players, partnerships or games, not {table!r}")
        raise typer.Exit(EXIT_BAD_INPUT)
    if table != "players" and not as_csv:
        err.print("error: --table goes with --csv (the text and --json show every table)")
        raise typer.Exit(EXIT_BAD_INPUT)
    rejected = 0
    if db is not None:
        con = _open_db(db, read_only=True)
        _require_checked(con, db)
    else:
        rules_spec = _validate_rules(_parse_rules_option(rules))
        chosen = _engine("auto", paths=paths)
        con = _open_db(None)
        _limit_memory(con, None, chosen)
        summary = _load_and_check(con, paths, fmt, rules_spec, quiet or as_json or as_csv, chosen)
        rejected = summary.errors
        names = [f.source_file for f in summary.files]
    try:
        result = st_mod.standings(con, chain, by_event=not overall, event=event)
    except ValueError as exc:  # an event no hand names
        err.print(f"error: --event: {exc}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if as_json:
        import orjson

        sys.stdout.write(orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2).decode() + "\n")
    elif as_csv:
        from spadework.analysis.present import write_csv

        rows, columns = st_mod.csv_rows(result, table)
        write_csv(rows, sys.stdout, columns)
    else:
        if result.games.is_empty():
            out.print("No checked games" + (f" in event {event!r}" if event else "") + ".", markup=False)
        for item in st_mod.rich_tables(result):
            out.print(item)
    if db is None:
        # what the standings stand on: records left out, games whose rules could not be read
        from spadework.analysis.present import games_with_unread_rules, print_grouped_rows

        unread = games_with_unread_rules(con)
        if unread:
            err.print(f"{_n(unread, 'game')} with rules that could not be read or that change within the game: scored "
                      "under the preset the rules name, else standard (validate lists them)", markup=False)
        if rejected:
            print_grouped_rows(con, err, "load_errors", f"{_n(rejected, 'record')} could not be read, and the standings "
                               "leave them out:", names, 5)  # fmt: skip
    if rejected:
        raise typer.Exit(EXIT_BAD_INPUT)


@app.command()
def stats(
    db: Annotated[Optional[Path], typer.Option("--db", help="A checked database (default: the sample season, found from inside a checkout of spadework).", show_default=False)] = None,
    player: Annotated[Optional[str], typer.Option("--player", help="One player's tendencies against the field; without it, every player.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full tables (every n, interval and z) as JSON.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the full table as CSV (spreadsheet-safe).")] = False,
) -> None:
    """Print a player's tendencies against the field (everything the player took no part in): each metric
    with its 95% interval and n, the field's value and the gap, leaks and strengths flagged.  Without
    --player, one line per player.  The overview reads at 80 columns, a player's page at about 90;
    --json and --csv carry every column.

    Reads what `spadework check` wrote (the sample season's database is built on first use): a database
    loaded after its last check, or never checked, is an error (exit 2) saying to run
    `spadework check --db FILE` first.
    """
    from spadework.analysis import coach
    from spadework.parsers.state import NotChecked

    if as_json and as_csv:
        err.print("error: choose one of --json and --csv")
        raise typer.Exit(EXIT_BAD_INPUT)
    from spadework.analysis.present import ProgressBar

    if db is not None and db.is_dir():  # as the other commands say it
        err.print(f"error: cannot open database {db}: {FOLDER_AS_DB}")
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        with ProgressBar(err.is_terminal) as bar:
            bar.stage("reading the season")
            # a --db given is opened as named; only the default sample is looked for above this folder
            con = coach.open_database(db, search_parents=False) if db is not None else coach.open_database()
    except NotChecked as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except FileNotFoundError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except Exception as exc:  # duckdb: locked by another process, not a database...
        err.print(f"error: cannot open database {db or 'data/sample/season.duckdb'}: {_open_failure(exc)}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    try:
        if as_json:
            import orjson

            sys.stdout.write(orjson.dumps(coach.stats_json(con, player), option=orjson.OPT_INDENT_2).decode() + "\n")
        elif as_csv:
            from spadework.analysis.present import write_csv

            write_csv(coach.stats_frame(con, player), sys.stdout)
        elif player is None:
            overview = coach.overview(con)
            if overview.is_empty():
                out.print("No player has a checked hand yet: load and check logs first (spadework validate LOGS --db FILE).", markup=False)
            else:
                out.print(coach.rich_overview(overview))
        else:
            from spadework.analysis.present import NAME_WIDTH, printable

            table = coach.player_table(con, player)
            out.print(coach.stats_heading(con, player, shown=printable(player, NAME_WIDTH)), markup=False)
            # soft_wrap off: a table's notes wrap at the table's width (they were one line of 200+)
            out.print(coach.rich_table(table, player), soft_wrap=False)
            from spadework.analysis import decisions

            for section in decisions.rich_sections(con, player):
                out.print(section, soft_wrap=False)
    except ValueError as exc:  # unknown player: the message lists the known ones
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    finally:
        con.close()


@app.command("judge-bids")
def judge_bids(
    db: Annotated[Path, typer.Option("--db", help="A checked database (hands with their deals).")],
) -> None:
    """Judge every bid: value each seat's hand in tricks (a count of honours, spade length and short suits,
    calibrated on the database's hands) and the chance a nil on it succeeds; fills hand_values and
    hand_value_fit (rerun after loading more hands) and prints both fits.  Needs a checked database
    (exit 2 otherwise, saying to run `spadework check`)."""
    from spadework.analysis.handvalue import judge_bids as judge
    from spadework.parsers.state import NotChecked

    if not db.exists():
        err.print(f"error: {db}: no such database (create it with `spadework validate LOGS --db {db}`)")
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        result = judge(_open_db(db, existing=True))
    except NotChecked as exc:  # tricks taken come from the check
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    out.print(f"Valued {_n(result.values.height, 'seat')} in {_n(result.hands - result.skipped_hands, 'hand')}")
    for note in result.notes:
        out.print(f"  {note}")
    if result.values.height == 0:  # no fit was made: do not print the models' starting values as one
        out.print("  nothing to judge: no hand has a complete deal (a score sheet records none)")
        return
    out.print(f"  tricks: {result.tricks.describe()}")
    out.print(f"  nil:    {result.nil.describe()}")
    out.print(
        "Per seat in the hand_values table: expected_tricks = what an average player of this database takes "
        "with such a hand (0..13); bid_error = bid - expected_tricks (above 0: an overbid); nil_chance = the "
        "chance a nil on it is made (a nil bid under 0.5 is unsound). stats --player and the report use them; "
        "docs/COACHING.md explains the models.",
        markup=False,
    )


# --- double-dummy solver (issue 14; spadework.analysis.solver) ---------------------------------------


@app.command()
def solve(
    positions: Annotated[Optional[Path], typer.Argument(help="JSON Lines file, one position per line ('-' = standard input).", show_default=False, metavar="POSITIONS")] = None,
    deal: Annotated[Optional[str], typer.Option("--deal", help='One position typed by hand: a PBN deal "N:AKQ.JT3.984.A52 ..." (suits S.H.D.C; with --rules barmore or nyc a fifth group holds the jokers, B big and L little, e.g. "N:AK.Q.J.T.B ...").')] = None,
    leader: Annotated[Optional[str], typer.Option("--leader", help="With --deal: who led (or leads) the current trick.")] = None,
    trick: Annotated[Optional[str], typer.Option("--trick", help='With --deal: cards already played to this trick, e.g. "KH 2H".')] = None,
    trick_number: Annotated[Optional[int], typer.Option("--trick-number", help="With --deal: 1..13 (default: from the hand lengths).")] = None,
    spades_broken: Annotated[bool, typer.Option("--spades-broken", help="With --deal: a spade was played to an earlier trick.")] = False,
    rules: Annotated[Optional[str], typer.Option("--rules", help="With --deal: standard, barmore, nyc or a JSON rules object.")] = None,
    nil_seat: Annotated[Optional[str], typer.Option("--nil-seat", help="With --deal: also say whether this seat's nil can be kept.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per position.")] = False,
) -> None:
    """Double-dummy solve positions: tricks each side takes with best play, every legal card's value, nil safety.

    Each line of POSITIONS: {"deal": {"N": [...], ...}, "leader": "W", "trick": [...], "trick_number": 1..13,
    "spades_broken": false, "rules": "standard", "nil_seat": "N"}.  A bad line is reported (naming the line) and
    the others are still solved; exit 2 when any line was bad.
    """
    from spadework.analysis.solver import batch

    if (positions is None) == (deal is None):
        err.print("error: give either a POSITIONS file or --deal (with --leader)")
        raise typer.Exit(EXIT_BAD_INPUT)
    if deal is not None:
        if leader is None:
            err.print("error: --deal needs --leader")
            raise typer.Exit(EXIT_BAD_INPUT)
        items = [batch.solve_deal(deal, leader, trick, trick_number, spades_broken, rules, nil_seat)]
    else:
        given = [name for name, v in (("--leader", leader), ("--trick", trick), ("--trick-number", trick_number),
                                      ("--spades-broken", spades_broken or None), ("--rules", rules),
                                      ("--nil-seat", nil_seat)) if v is not None]  # fmt: skip
        if given:
            err.print(f"error: {', '.join(given)} go with --deal; a POSITIONS file gives them on each line")
            raise typer.Exit(EXIT_BAD_INPUT)
        try:
            from spadework.parsers.io import open_binary  # gzip, and UTF-16/32 with a byte-order mark

            stream = sys.stdin.buffer if str(positions) == "-" else open_binary(positions)
        except OSError as exc:
            err.print(f"error: {_os_error_text(exc)}")
            raise typer.Exit(EXIT_BAD_INPUT) from None
        items = batch.solve_lines(stream, source="<stdin>" if str(positions) == "-" else str(positions))
    bad = 0
    items = iter(items)
    while True:
        try:
            item = next(items)
        except StopIteration:
            break
        except (EOFError, OSError) as exc:  # a gzip cut off part way, a file gone
            err.print(f"error: {positions}: cannot read the rest of the file ({exc})", markup=False)
            raise typer.Exit(EXIT_BAD_INPUT) from None
        # an error writing the answers (a full disk) names standard output, not the positions (main)
        bad += _print_solved(item, as_json, numbered=positions is not None)
    raise typer.Exit(EXIT_BAD_INPUT if bad else EXIT_OK)


def _print_solved(item, as_json: bool, numbered: bool = False) -> int:
    """Print one solved position (or its error, on standard error); 1 when it was a bad line."""
    from spadework.analysis.solver import batch

    if item.error is not None:
        err.print(f"error: {item.error}", markup=False)
    if as_json:
        sys.stdout.write(batch.dumps(item.to_json()) + "\n")
        sys.stdout.flush()
    elif item.error is None:
        out.print(batch.format_text(item, numbered=numbered), markup=False)
    return int(item.error is not None)


@app.command()
def analyse(
    db: Annotated[Path, typer.Option("--db", help="A database made by `spadework load`.")],
    workers: Annotated[Optional[int], typer.Option("--workers", min=1, help="Worker processes (default: one per CPU).")] = None,
    quiet: QuietOpt = False,
) -> None:
    """Judge every card double-dummy and every bid: fills card_costs (each card's cost in tricks), dd_par
    (tricks from trick 1) and, on a checked database, hand_values and hand_value_fit (as `judge-bids`).

    Hands without a full deal are skipped (a hand recording no deal but all 13 tricks is judged on the cards
    each seat played), and hands with an illegal play are judged up to it; both are counted.
    """
    from spadework.analysis.handvalue import judge_bids as judge
    from spadework.analysis.solver.judge import analyse_db
    from spadework.parsers.state import NotChecked

    con = _open_db(db, existing=True)
    summary = analyse_db(con, workers=workers, progress=not quiet and err.is_terminal)
    skipped = sum(summary.skipped.values())
    out.print(
        f"Judged {_n(summary.cards, 'card')} in {_n(summary.hands, 'hand')} ({summary.seconds:.1f} s): "
        f"{summary.judged} in full, {summary.cut_short} up to an illegal play, a gap or the end of the recorded play, {skipped} skipped"
        + (f" ({', '.join(f'{k} {v}' for k, v in sorted(summary.skipped.items()))})" if skipped else "")
    )
    for line in summary.examples:
        out.print(f"  {line}")
    more = skipped + summary.cut_short - len(summary.examples)
    if more > 0:
        out.print(f"  ... and {_n(more, 'more hand')} skipped or cut short")
    try:
        bids = judge(con)
    except NotChecked:  # the hand values are calibrated on the checked tricks taken
        out.print("Bids not judged: the database is not checked (run `spadework check`, then `spadework judge-bids`)")
    else:
        if bids.values.height:
            out.print(f"Judged {_n(bids.values.height, 'bid')}: {bids.tricks.describe()}")
        else:
            out.print("Bids not judged: no hand has a complete deal (a score sheet records none)")


@app.command()
def warm(
    threads: Annotated[Optional[int], typer.Option(help="Threads while warming (default: numba's, the cores).")] = None,
) -> None:
    """Compile the compiled engine now, so the next validate starts at once.

    `pip install .` already does this for the installed package (a NUMBA_CACHE_DIR pointing at a
    new folder gets the installed package's compiled files on first use). Run it after an editable
    install (`pip install -e .`), or when building an image from one.
    The compiled code is kept on disk by numba and reused by every later process; numba compiles
    again by itself when the code, numba, Python or the CPU changes.
    """
    from spadework.analysis.engine.warm import warm as run_warm

    r = run_warm(threads)
    out.print(f"Compiled engine ready in {r.seconds:.1f} s: {len(r.compiled)} functions compiled, {len(r.loaded)} loaded from the cache")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def bench(ctx: typer.Context) -> None:
    """Run the validation benchmark (tests/benchmarks/bench_validate.py; run from a checkout).

    Options are the script's: --hands N, --reps R, --threads 1,2 ... (`spadework bench --help-script`).
    Results are printed; --record also appends them to tests/benchmarks/results.md (a tracked file:
    record only runs made on a quiet machine).  The seasons it generates (about 1.5 GB for a million
    hands, with their databases) are kept for the next run in $SPADEWORK_BENCH_CACHE, else
    ~/.cache/spadework-bench: delete that folder to get the space back.
    """
    import importlib.util

    from spadework.analysis.sample import find

    script = find("tests/benchmarks/bench_validate.py")
    if script is None:
        err.print("error: tests/benchmarks/bench_validate.py not found: run `spadework bench` inside a spadework checkout")
        raise typer.Exit(EXIT_BAD_INPUT)
    spec = importlib.util.spec_from_file_location("bench_validate", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    args = ["--help" if a == "--help-script" else a for a in ctx.args]
    raise typer.Exit(mod.main(args))


def main() -> None:
    """Entry point of the ``spadework`` console command.

    A closed pipe on standard output (``| head``) does not change the exit status: the command runs
    to its end with its output thrown away, and exits as it would have.  A file a command cannot
    write or read where it does not say so itself (a report folder that is a file, a full disk, a
    locked folder) is one ``error:`` line naming the file and the reason, and exit status 2, never
    a traceback.
    """
    from spadework.analysis.present import ReaderGone

    if sys.stdout is not None and not isinstance(sys.stdout, ReaderGone):
        sys.stdout = ReaderGone(sys.stdout)  # type: ignore[assignment]
    if sys.stderr is not None and not isinstance(sys.stderr, ReaderGone):
        sys.stderr = ReaderGone(sys.stderr)  # type: ignore[assignment]  (`... 2>&1 | head`)
    _exit_on_terminate()
    empty = [i for i, a in enumerate(sys.argv[1:], 1) if a == ""]
    if empty:
        # typer reads "" as a path to the current folder: `validate "$LOGDIR"` with the variable unset
        # would read every file there, `report --out ""` write into it
        err.print(f"error: argument {empty[0]} is empty (an unset shell variable?); give a file, folder or value",
                  markup=False)
        sys.exit(EXIT_BAD_INPUT)
    try:
        app()
    except OSError as exc:
        err.print(f"error: {_os_error_text(exc)}")
        sys.exit(EXIT_BAD_INPUT)
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:  # Ctrl-C (typer's exit status for it): say so, as a shell does
            err.print("interrupted", markup=False)
        raise


EXIT_INTERRUPTED = 130
"""Ctrl-C: 128 + SIGINT, as typer and a shell give it."""


def _exit_on_terminate() -> None:
    """SIGTERM (``kill``, a cancelled CI job, ``timeout``) ends the command as an interrupt does:
    its clean-up runs (a Dask cluster closed, temporary and spill folders removed, which the
    default action left behind) and the exit status is 128 + 15."""
    import signal

    def terminated(signum, frame):
        raise SystemExit(128 + signum)

    with contextlib.suppress(ValueError):  # not the main thread (an embedding program): left as it is
        signal.signal(signal.SIGTERM, terminated)


def _os_error_text(exc: OSError) -> str:
    """``notadir/players: not a directory`` (the file first, then the reason, as a sentence)."""
    reason = exc.strerror or str(exc)
    reason = reason[:1].lower() + reason[1:]
    if isinstance(exc, BrokenPipeError):
        reason = "the reader of the output went away (a closed pipe) before the command finished"
    name = exc.filename if exc.filename is not None else None
    if isinstance(exc, (FileExistsError, NotADirectoryError)) and name is not None:
        # making a folder (or a file inside one) where a file of that name already is
        blocker = next((p for p in (Path(name), *Path(name).parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            name, reason = str(blocker), "is a file, where a folder is needed"
    if name is not None and exc.filename2 is not None:
        return f"{name} -> {exc.filename2}: {reason}"
    return f"{name}: {reason}" if name is not None else reason


if __name__ == "__main__":
    main()
