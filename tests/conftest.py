"""Shared test helpers: where the real corpus lives, and small record builders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The CLI tests compare what commands print.  A CI system's terminal settings (FORCE_COLOR and the
# like, read by rich when the CLI's consoles are made at import) would switch progress bars and
# colour on and make that output differ run to run; the tests run as in a plain pipe.
for _name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CLICOLOR_FORCE", "PY_COLORS"):
    os.environ.pop(_name, None)

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real logs (skips the test when it is not beside the checkout)."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS} (tests read real logs from ../shared/corpus)")
    return CORPUS


def pytest_configure(config):
    """Build the sample season's database (data/sample/season.duckdb) once, before collection,
    so the notebook and personality tests run against it."""
    if "SPADEWORK_SAMPLE_DB" in os.environ:
        return
    from spadework.analysis.sample import build_sample_db

    old = os.getcwd()
    try:
        os.chdir(ROOT)
        build_sample_db()
    except FileNotFoundError:
        pass
    finally:
        os.chdir(old)
