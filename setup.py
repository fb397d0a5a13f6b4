"""Build hook: compile the engine's numba code into the package while it is built.

Everything else about the package is in pyproject.toml.  After setuptools copies the package into
its build folder, ``build_py`` runs ``python -m spadework.analysis.engine.warm`` on that copy, so
numba's on-disk cache (``__pycache__/*.nbi``, ``*.nbc`` beside the compiled modules) goes into
the wheel and the first ``spadework validate`` after ``pip install .`` does not compile (see
``analysis/engine/warm.py``).  The cache is only used where it was made for: numba checks the
source, its own version, Python's and the CPU, and compiles afresh on any difference.

Skipped for editable installs (the cache then forms beside the sources on first use) and when
``SPADEWORK_NO_WARM=1``; a failure is a warning, never a failed install.
"""

import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


def warm_build_copy(build_lib: str) -> bool:
    """Compile the engine of the package copy under ``build_lib`` into its own folders (numba's
    in-tree cache); True when done.  Prints one line, or a warning with the reason."""
    build_lib = os.path.abspath(build_lib)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = build_lib + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # numba's cache files only, no .pyc in the wheel
    print("spadework: compiling the engine ahead of its first use (SPADEWORK_NO_WARM=1 skips this)", flush=True)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "spadework.analysis.engine.warm"],
            env=env, cwd=build_lib, timeout=900, capture_output=True, text=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as e:
        print(f"warning: spadework: engine not compiled ahead of use: {e}", file=sys.stderr)
        return False
    out = (done.stdout + done.stderr).strip().splitlines()
    if done.returncode != 0:
        print("warning: spadework: engine not compiled ahead of use (it will compile on first use):", file=sys.stderr)
        print("\n".join(out[-15:]), file=sys.stderr)
        return False
    if out:
        print(out[-1], flush=True)
    return True


class BuildPyWarm(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("SPADEWORK_NO_WARM", "") not in ("", "0"):
            return
        warm_build_copy(self.build_lib)


if __name__ == "__main__":  # setuptools runs this file as __main__; tests import warm_build_copy
    setup(cmdclass={"build_py": BuildPyWarm})
