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
