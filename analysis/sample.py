"""The shipped sample season (``data/sample/``) and its DuckDB database.

The season's log (``data/sample/season.jsonl``) is in git; its database
(``data/sample/season.duckdb``, what the notebooks, ``spadework stats`` and the
tests read) is built from it on first use, so it never goes stale or into git.
"""

from __future__ import annotations

import os
from pathlib import Path

SAMPLE_DIR = Path("data") / "sample"
SAMPLE_LOG = SAMPLE_DIR / "season.jsonl"
SAMPLE_DB = SAMPLE_DIR / "season.duckdb"


def find(relative: str | os.PathLike[str], start: Path | None = None) -> Path | None:
    """``relative`` looked up from ``start`` (default: the working directory) and each parent, or ``None``."""
    p = Path(relative)
    if p.is_absolute():
        return p if p.exists() else None
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / p).exists():
            return d / p
    return None


def is_sample_db(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` names the sample season's database (relative or absolute)."""
    return Path(path).as_posix().endswith(SAMPLE_DB.as_posix())


def _fresh(db: Path) -> bool:
    """True when the database at ``db`` is checked, up to date and keeps the stored layout (a database
    an older spadework wrote is built again)."""
    import duckdb

    from spadework.parsers.schema import storage_layout
    from spadework.parsers.state import FRESH, derived_state

    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:  # not a database, or locked: build it again
        return False
    try:
        return storage_layout(con) == "stored" and derived_state(con) == FRESH
    finally:
        con.close()


def build_sample_db(db_path: str | os.PathLike[str] | None = None, force: bool = False) -> Path:
    """Build the sample database from ``data/sample`` (load + check) unless it is there, newer than the
    log and fresh (:func:`spadework.parsers.state.derived_state`: an interrupted build or one by an
    older spadework is built again).

    ``db_path`` defaults to ``data/sample/season.duckdb`` beside the log.  Returns its path.
    Raises ``FileNotFoundError`` when the sample log cannot be found (e.g. an installed
    package run outside a checkout).
    """
    log = find(SAMPLE_LOG)
    if log is None:
        raise FileNotFoundError(f"no sample season found ({SAMPLE_LOG} in this folder or a parent)")
    db = Path(db_path) if db_path is not None else log.parent / SAMPLE_DB.name
    if db.exists() and not force and db.stat().st_mtime >= log.stat().st_mtime and _fresh(db):
        return db
    from spadework.analysis.engine.checker import check_db
    from spadework.parsers.db import connect, load_files

    tmp = db.with_suffix(".building.duckdb")
    tmp.unlink(missing_ok=True)
    con = connect(tmp)
    try:
        load_files(con, [log.parent])
        check_db(con)
    finally:
        con.close()
    os.replace(tmp, db)
    return db
