"""The columnar fast path: DuckDB loads canonical JSON Lines and checks clean games in SQL.

It stands beside the reference (``spadework.parsers.db.load_files``, ``spadework.analysis.engine.checker.check_db``)
and never replaces it: every line DuckDB cannot prove it reads as the Python parser
does is read by the Python parser, and every game that might hold a finding is
checked by :func:`spadework.analysis.engine.checker.check_game`.  docs/PERFORMANCE.md has the design
and the measurements.

- :func:`load_fast` (``spadework.analysis.engine.fast.load``): like ``spadework.parsers.db.load_files``.
- :func:`check_fast` (``spadework.analysis.engine.fast.check``): like ``spadework.analysis.engine.checker.check_db``.
- :func:`validate_fast`: both, returning ``(LoadSummary, CheckSummary)``.

Like the reference, they keep :mod:`spadework.parsers.state` (``mark_loaded`` in each loading
transaction, ``loaded_generation``/``mark_checked`` around the check), so ``report``, ``stats`` and
the metrics know whether the derived tables answer for what is loaded.
"""

from spadework.analysis.engine.fast.check import check_fast, sql_supports, validate_fast
from spadework.analysis.engine.fast.load import load_fast

__all__ = ["check_fast", "load_fast", "sql_supports", "validate_fast"]
