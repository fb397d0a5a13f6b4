"""The engine compiled ahead of use: what ``pip install .`` does (setup.py) and ``spadework warm``.

The build hook compiles the package copy being built; the wheel then carries numba's cache.  The
test does what a build and an install do, without pip: warm a copy of the package, copy it
elsewhere (new paths, new file times, as an install does), and require that validating there
compiles nothing and loads the core and the reader from that cache.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import json, sys
from spadework.analysis.engine import engines, loader
from spadework.analysis.engine.warm import dispatchers
from spadework.parsers.db import connect
import spadework
assert spadework.__path__[0].startswith(sys.argv[1]), spadework.__path__
loader.FAST_MIN_BYTES = 0
con = connect(None)
loaded, summary = engines.COMPILED.validate(con, [sys.argv[2]])
engines.COMPILED.check(con)
print(json.dumps({
    "hands": loaded.hands,
    "missed": sorted(k for k, d in dispatchers().items() if d.stats.cache_misses),
    "hit": sorted(k for k, d in dispatchers().items() if d.stats.cache_hits),
}))
"""


def _setup_module():
    spec = importlib.util.spec_from_file_location("spadework_setup", ROOT / "setup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def _copy_package(dest: Path, copy_function=shutil.copy2) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("analysis", "parsers"):
        shutil.copytree(ROOT / folder, dest / "spadework" / folder, ignore=ignore, copy_function=copy_function)


def test_a_package_warmed_at_build_time_runs_its_first_validate_without_compiling(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    build = tmp_path / "build"
    _copy_package(build)
    assert _setup_module().warm_build_copy(str(build)) is True
    cache = build / "spadework" / "analysis" / "engine" / "__pycache__"
    assert any(p.name.startswith("kernels.run_games-") and p.suffix == ".nbi" for p in cache.iterdir())
    assert not list(build.rglob("*.pyc"))  # the wheel gets numba's files only
    # the install: every file copied to a new place with a new time (numba keys on the source text)
    site = tmp_path / "site"
    shutil.copytree(build, site, copy_function=shutil.copyfile)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(site)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(site), str(ROOT / "data" / "sample")],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["hands"] > 800
    assert got["missed"] == []
    assert {"kernels.run_games", "jsonl_scan._scan_lines", "jsonl_scan._pack_lists", "storage._FILL"} <= set(got["hit"])


def test_the_build_hook_is_a_warning_not_a_failure_when_the_engine_cannot_compile(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    engine = tmp_path / "spadework" / "analysis" / "engine"
    engine.mkdir(parents=True)  # a "build copy" whose engine fails to compile
    for pkg in (engine.parent, engine):
        (pkg / "__init__.py").write_text("")
    (engine / "warm.py").write_text("raise RuntimeError('the compiler is missing')\n")
    assert _setup_module().warm_build_copy(str(tmp_path)) is False
    err = capsys.readouterr().err
    assert "engine not compiled ahead of use" in err and "the compiler is missing" in err


def test_spadework_warm_reports_what_it_compiled_and_what_it_loaded(monkeypatch):
    """The command's wiring and message (the warm itself is the first test's)."""
    from typer.testing import CliRunner

    from spadework.analysis.cli import app
    from spadework.analysis.engine import warm

    calls = []

    def fake(threads=None):
        calls.append(threads)
        return warm.WarmReport(seconds=1.25, compiled=["kernels.run_games"], loaded=["jsonl_scan._scan_lines", "loader._newlines"])

    monkeypatch.setattr(warm, "warm", fake)
    r = CliRunner().invoke(app, ["warm", "--threads", "1"])
    assert r.exit_code == 0, r.output
    assert calls == [1]
    assert "Compiled engine ready in 1.2 s: 1 functions compiled, 2 loaded from the cache" in r.output
