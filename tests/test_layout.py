"""The installed layout: the checkout's analysis/ and parsers/ install as spadework.analysis and
spadework.parsers, nothing claims a generic top-level name, and imports flow one way."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import spadework.analysis
import spadework.parsers

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"spadework.analysis": ROOT / "analysis", "spadework.parsers": ROOT / "parsers"}


def _package_folders() -> set[str]:
    names = set()
    for top, folder in FOLDERS.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder)
            names.add(".".join([top, *rel.parts]) if rel.parts else top)
    return names


def test_every_package_folder_is_installed():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert conf["package-dir"] == {"spadework.analysis": "analysis", "spadework.parsers": "parsers"}
    assert set(conf["packages"]) == _package_folders()


def _sources(folder: Path) -> dict[str, bytes]:
    return {str(f.relative_to(folder)): f.read_bytes() for f in folder.rglob("*.py")}


def test_the_installed_names_are_the_checkout_folders():
    # An editable install points at the checkout, a plain `pip install .` copies it (as CI does): either
    # way the installed modules must be the checkout's files, every one and byte for byte, or the tests
    # would be checking some older install.
    for module in (spadework.analysis, spadework.parsers):
        installed = Path(module.__file__).resolve().parent
        assert _sources(installed) == _sources(FOLDERS[module.__name__]), module.__name__


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    mods = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods.append(node.module)
    return mods


def test_no_code_imports_the_bare_folder_names():
    files = [*ROOT.joinpath("analysis").rglob("*.py"), *ROOT.joinpath("parsers").rglob("*.py"), *ROOT.joinpath("tests").rglob("*.py")]
    bad = [(str(f.relative_to(ROOT)), m) for f in files for m in _imports(f) if m.split(".")[0] in ("analysis", "parsers")]
    assert bad == []


def test_parsers_never_import_analysis():
    bad = [
        (str(f.relative_to(ROOT)), m)
        for f in ROOT.joinpath("parsers").rglob("*.py")
        for m in _imports(f)
        if m.startswith("spadework.analysis")
    ]
    assert bad == []
