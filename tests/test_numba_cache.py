"""numba's on-disk cache is keyed on the modules a compiled module takes values from
(:mod:`spadework.parsers.numba_cache`), so editing one of them compiles again instead of loading
code with the old values."""

import subprocess
import sys
import textwrap


def _run(folder) -> str:
    code = "import kern; print(kern.value())"
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(folder), "NUMBA_CACHE_DIR": str(folder / "cache")})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_editing_a_module_whose_value_is_compiled_in_compiles_again(tmp_path):
    (tmp_path / "consts.py").write_text("VALUE = 1\n")
    (tmp_path / "kern.py").write_text(textwrap.dedent("""
        from numba import njit

        import consts
        from spadework.parsers.numba_cache import depends

        depends(__file__, consts)
        V = consts.VALUE


        @njit(cache=True)
        def value():
            return V
    """))
    assert _run(tmp_path) == "1"
    assert _run(tmp_path) == "1"  # loaded from the cache
    assert any((tmp_path / "cache").rglob("*.nbi"))
    (tmp_path / "consts.py").write_text("VALUE = 2\n")  # kern.py itself is unchanged
    assert _run(tmp_path) == "2"


def test_the_engine_modules_declare_what_they_compile_in():
    import os

    from spadework.analysis.engine import kernels
    from spadework.parsers import encoding, jsonl_scan, numba_cache

    for mod in (kernels, jsonl_scan):
        assert os.path.realpath(encoding.__file__) in numba_cache._DEPENDS[os.path.realpath(mod.__file__)]
        assert len(numba_cache.dependency_stamp(mod.__file__)) == len(numba_cache._DEPENDS[os.path.realpath(mod.__file__)])
    assert type(kernels.run_games._cache._impl.locator).__name__.startswith("Dependent")


def test_every_module_with_compiled_code_gets_the_fallback_places():
    """Every module of the package with ``cache=True`` functions declares itself to
    ``numba_cache.depends``, so each gets the seeded and temporary places, not numba's list alone."""
    from pathlib import Path

    from spadework.analysis.engine import distributed, kernels, loader, storage  # noqa: F401 - their declarations run
    from spadework.analysis.solver import kernel  # noqa: F401
    from spadework.parsers import jsonl_scan, numba_cache  # noqa: F401

    from spadework import analysis, parsers

    folders = [Path(analysis.__file__).resolve().parent, Path(parsers.__file__).resolve().parent]
    with_cache = {p.resolve() for f in folders for p in f.rglob("*.py") if "cache=True" in p.read_text()}
    declared = {Path(p) for p in numba_cache._DEPENDS}
    # storage declares itself when it first compiles (numba is not imported for the reference engine);
    # warm and numba_cache only talk about cache=True
    exempt = {Path(m.__file__).resolve() for m in (storage, numba_cache)} | {folders[0] / "engine" / "warm.py"}
    missing = with_cache - declared - exempt
    assert not missing, f"modules with cache=True that do not call numba_cache.depends: {sorted(map(str, missing))}"
    assert "depends(__file__)" in Path(storage.__file__).read_text()


# --- where the cache goes when the package's own folder cannot be written ------------------------

_KERN = """
from numba import njit

from spadework.parsers.numba_cache import depends

depends(__file__)


@njit(cache=True)
def value():
    return {value}
"""

_READ_ONLY_PACKAGE = """
import os
from numba.core import caching

_ensure = caching._CacheLocator.ensure_cache_path


def ensure(self):  # the package's own __pycache__ behaves as if the user could not write it
    if os.path.dirname(self.get_cache_path()) == os.path.dirname(os.path.abspath("kern.py")):
        raise PermissionError("read-only")
    return _ensure(self)


caching._CacheLocator.ensure_cache_path = ensure
"""

_REPORT = """
import kern

print(kern.value(), sum(kern.value.stats.cache_hits.values()), sum(kern.value.stats.cache_misses.values()),
      kern.value._cache._cache_path)
"""


def _run_kern(folder, env: dict, read_only_package: bool = False) -> tuple[int, int, int, str]:
    code = (_READ_ONLY_PACKAGE if read_only_package else "") + _REPORT
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(folder), **env})  # fmt: skip
    assert done.returncode == 0, done.stderr
    value, hits, misses, path = done.stdout.split(maxsplit=3)
    return int(value), int(hits), int(misses), path.strip()


def test_with_no_writable_cache_folder_the_code_is_cached_in_a_private_temporary_one(tmp_path):
    """A service account with no home and a package it cannot write: numba refused to import the
    module ("no locator available"); now the cache goes to the user's own temporary folder."""
    import os

    (tmp_path / "kern.py").write_text(_KERN.format(value=7))
    (tmp_path / "__pycache__").write_text("not a folder")  # the package's own place is unusable
    (tmp_path / "home").write_text("not a folder either")  # so is ~/.cache
    (tmp_path / "tmp").mkdir()
    env = {"HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp")}
    value, hits, misses, path = _run_kern(tmp_path, env)
    assert (value, hits, misses) == (7, 0, 1)
    private = tmp_path / "tmp" / f"spadework-numba-{os.getuid()}"
    assert path.startswith(str(private))
    assert (private.stat().st_mode & 0o777) == 0o700
    assert _run_kern(tmp_path, env)[:3] == (7, 1, 0)  # the next process loads it


def test_a_cache_shipped_in_a_package_the_user_cannot_write_is_used_not_compiled_again(tmp_path):
    """``pip install .`` compiles into the package; a user who cannot write there got every
    function compiled again into ~/.cache/numba.  Entries whose key matches the source are now
    copied there first; entries of another source are not."""
    (tmp_path / "kern.py").write_text(_KERN.format(value=7))
    (tmp_path / "home").mkdir()
    env = {"HOME": str(tmp_path / "home")}
    assert _run_kern(tmp_path, env)[:3] == (7, 0, 1)  # compiled into the package, as the install does
    assert any((tmp_path / "__pycache__").glob("kern.value-*.nbi"))
    value, hits, misses, path = _run_kern(tmp_path, env, read_only_package=True)
    assert (value, hits, misses) == (7, 1, 0)
    assert path.startswith(str(tmp_path / "home" / ".cache"))

    # a newer source than the package's cache: the stale entry is not copied over the user's
    (tmp_path / "kern.py").write_text(_KERN.format(value=8))
    assert _run_kern(tmp_path, env, read_only_package=True)[:3] == (8, 0, 1)
    assert _run_kern(tmp_path, env, read_only_package=True)[:3] == (8, 1, 0)


def test_an_empty_numba_cache_dir_gets_the_package_cache_not_a_new_compile(tmp_path):
    """A container or CI job that sets ``NUMBA_CACHE_DIR`` to a new folder got every function
    compiled again on first use (about 16 s for the reader and the core), the package's own
    compiled entries unused.  Those whose key matches the source are now copied there first."""
    (tmp_path / "kern.py").write_text(_KERN.format(value=7))
    (tmp_path / "home").mkdir()
    assert _run_kern(tmp_path, {"HOME": str(tmp_path / "home")})[:3] == (7, 0, 1)  # as the install does
    env = {"HOME": str(tmp_path / "home"), "NUMBA_CACHE_DIR": str(tmp_path / "job-cache")}
    value, hits, misses, path = _run_kern(tmp_path, env)
    assert (value, hits, misses) == (7, 1, 0)
    assert path.startswith(str(tmp_path / "job-cache"))

    # the package's entry of an older source is not copied: the new source compiles
    (tmp_path / "kern.py").write_text(_KERN.format(value=8))
    assert _run_kern(tmp_path, {**env, "NUMBA_CACHE_DIR": str(tmp_path / "other-cache")})[:3] == (8, 0, 1)


def test_a_temporary_folder_others_can_write_is_not_trusted(tmp_path, monkeypatch):
    """Cached code is loaded with pickle: a folder another user could write into is not used."""
    import os
    import tempfile

    from spadework.parsers import numba_cache

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mine = numba_cache.private_temp_dir()
    assert mine == str(tmp_path / f"spadework-numba-{os.getuid()}")
    assert (os.stat(mine).st_mode & 0o777) == 0o700
    os.chmod(mine, 0o777)
    assert numba_cache.private_temp_dir() is None
    os.rmdir(mine)
    (tmp_path / f"spadework-numba-{os.getuid()}").write_text("a file")
    assert numba_cache.private_temp_dir() is None
