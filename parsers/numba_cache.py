"""numba's on-disk cache, keyed on a module *and* the modules whose values it compiles in.

numba keeps compiled machine code on disk (``cache=True``) and uses it again while the module's
source text is the same.  But a compiled function also carries the global values it reads from
other modules (finding codes, card and seat codes, packing constants) as constants.  Change one
of those modules and not the one with the compiled functions, and numba would load code with the
old values: an editable install, or a ``NUMBA_CACHE_DIR`` outside the package that outlives an
upgrade, would check hands with stale codes.

:func:`depends` declares, for a module of compiled functions, the modules it takes values from.
The cache entries of that module's functions are then keyed on all of their source texts; numba
compiles again when any of them changes.  Call it at the top of the module, before the first
``@njit(cache=True)`` runs (numba picks the cache's place and key when a function is decorated).
Every module of spadework with compiled functions calls it, with no modules where it takes no
values from others.

Where the cache goes.  numba caches beside the source (``__pycache__``) where it can write there,
else in the user's cache folder (``~/.cache/numba``).  For a declared module this adds two things:

- **The shipped cache is used where it cannot be written.**  ``pip install .`` compiles every
  function into the package (``spadework warm``).  A site-packages the user cannot write (a
  system-wide install, a read-only image) made numba ignore those files and compile everything
  again, 10-20 s on first use.  Now the cache files whose key matches the installed source are
  copied from the package into the user's cache folder first (:func:`_seed`), so nothing compiles.
- **A last place.**  With neither place writable (a service account with no home, a read-only
  home), numba refused to import the module at all ("cannot cache function ...: no locator
  available").  Such a process now caches in a folder of its own under the temporary folder
  (``spadework-numba-<uid>``, created private to the user; a folder there that another user owns
  or others can write is not used), seeded the same way.
- **``NUMBA_CACHE_DIR`` is seeded too.**  It still comes first, but a new or empty one (set in a
  container image, a CI job, a notebook server) used to mean compiling everything again on first
  use (about 16 s for the reader and the core); the package's matching entries are now copied
  into it first, as into the user's cache folder.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import shutil
import stat
import tempfile
from types import ModuleType

_DEPENDS: dict[str, tuple[str, ...]] = {}
"""Real path of a module of compiled functions -> real paths of the modules it takes values from."""


def depends(module_file: str, *modules: ModuleType) -> None:
    """Key the numba cache of the functions defined in ``module_file`` on the source of ``modules``
    too (besides their own module's, as numba does).  Raises ``TypeError`` for a module without a
    source file."""
    paths = []
    for m in modules:
        if not getattr(m, "__file__", None):
            raise TypeError(f"module {m.__name__} has no source file to key numba's cache on")
        paths.append(os.path.realpath(m.__file__))
    _DEPENDS[os.path.realpath(module_file)] = tuple(paths)
    _install()


@functools.lru_cache(maxsize=None)
def _source_hash(path: str, mtime: float, size: int) -> bytes:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


def dependency_stamp(module_file: str) -> tuple[bytes, ...]:
    """The hashes of the source of the modules ``module_file`` was declared to depend on (empty when
    none was declared)."""
    out = []
    for path in _DEPENDS.get(os.path.realpath(module_file), ()):
        st = os.stat(path)
        out.append(_source_hash(path, st.st_mtime, st.st_size))
    return tuple(out)


_installed = False


def _numba_name(module: ModuleType, name: str):
    """``name`` in numba's caching module, public since numba 0.60 and private (``_name``) before."""
    return getattr(module, name, None) or getattr(module, "_" + name, None)


def _index_stamp(path: str):
    """The source stamp numba wrote in the cache index at ``path`` (``None`` when the file is
    missing, unreadable or written by another numba)."""
    import numba

    try:
        with open(path, "rb") as f:
            if pickle.load(f) != numba.__version__:
                return None
            stamp, _ = pickle.loads(f.read())
    except Exception:  # noqa: BLE001 - a broken or foreign index is as good as none
        return None
    return stamp


def _seed(source_dir: str, target_dir: str, stem: str, stamp) -> int:
    """Copy into ``target_dir`` the cache entries of module ``stem`` (index ``stem.*.nbi`` and the
    data files it names) found in ``source_dir`` and keyed on ``stamp`` (the module's current
    source stamp), where ``target_dir`` has none for that function or only stale ones.  The data
    files go first and the index last, each by an atomic rename, so a process reading the target
    at the same time sees a whole entry or none.  Returns the number of indexes copied."""
    try:
        names = os.listdir(source_dir)
    except OSError:
        return 0
    copied = 0
    for name in names:
        if not (name.startswith(stem + ".") and name.endswith(".nbi")):
            continue
        source = os.path.join(source_dir, name)
        if _index_stamp(source) != stamp or _index_stamp(os.path.join(target_dir, name)) == stamp:
            continue
        base = name[: -len(".nbi")]
        try:
            for data in (n for n in names if n.startswith(base + ".") and n.endswith(".nbc")):
                _copy(os.path.join(source_dir, data), os.path.join(target_dir, data))
            _copy(source, os.path.join(target_dir, name))
        except OSError:
            continue
        copied += 1
    return copied


def _copy(source: str, target: str) -> None:
    part = f"{target}.seed.{os.getpid()}"
    try:
        shutil.copyfile(source, part)
        os.replace(part, target)
    finally:
        if os.path.exists(part):
            os.unlink(part)


def private_temp_dir() -> str | None:
    """This user's folder for numba's cache under the temporary folder, created if needed (mode
    700).  ``None`` when it cannot be created, or exists but is not a folder owned by this user
    that only its owner can write (cached code is loaded with pickle, so a folder another user
    can write into must not be trusted)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    path = os.path.join(tempfile.gettempdir(), f"spadework-numba-{uid if uid is not None else 'user'}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    if uid is not None and st.st_uid != uid:
        return None
    return path


def _install() -> None:
    """Put locators that add :func:`dependency_stamp` to numba's own in front of numba's (for the
    modules :func:`depends` names only; every other function is cached as numba does): numba's
    ``NUMBA_CACHE_DIR``, in-tree and user-wide places, ``NUMBA_CACHE_DIR`` and the user-wide one
    seeded from the package, then :func:`private_temp_dir`, seeded too.  Where this numba has no such hooks, numba's own
    key and places stay (the module's source alone)."""
    global _installed
    if _installed:
        return
    _installed = True
    from numba.core import caching

    impl = _numba_name(caching, "CacheImpl")
    bases = [_numba_name(caching, n) for n in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")]
    if impl is None or not isinstance(getattr(impl, "_locator_classes", None), list) or None in bases:
        return
    provided, in_tree, user_wide = bases

    class _WithDependencies:
        """Mixin: numba's locator for a declared module, its stamp extended with the dependencies'."""

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.realpath(py_file) not in _DEPENDS:
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return (super().get_source_stamp(), dependency_stamp(self._py_file))

    class _Seeded(_WithDependencies):
        """Mixin: a place outside the package, first given the package's own cache entries that
        match the source (once per module and place in a process)."""

        _seeded: set = set()

        @classmethod
        def from_function(cls, py_func, py_file):
            self = super().from_function(py_func, py_file)
            if self is not None:
                key = (os.path.realpath(py_file), self.get_cache_path())
                if key not in cls._seeded:
                    cls._seeded.add(key)
                    source_dir = os.path.join(os.path.dirname(py_file), "__pycache__")
                    stem = os.path.splitext(os.path.basename(py_file))[0]
                    _seed(source_dir, self.get_cache_path(), stem, self.get_source_stamp())
            return self

    class _PrivateTemp(user_wide):
        """numba's user-wide locator, moved to :func:`private_temp_dir`."""

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            self._cache_path = os.path.join(self._temp_dir, self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            cls._temp_dir = private_temp_dir()
            if cls._temp_dir is None:
                return None
            return super().from_function(py_func, py_file)

    ours = [
        type("DependentUserProvidedCacheLocator", (_Seeded, provided), {}),
        type("DependentInTreeCacheLocator", (_WithDependencies, in_tree), {}),
        type("DependentUserWideCacheLocator", (_Seeded, user_wide), {}),
        type("DependentTempCacheLocator", (_Seeded, _PrivateTemp), {}),
    ]
    impl._locator_classes = [*ours, *impl._locator_classes]


__all__ = ["dependency_stamp", "depends", "private_temp_dir"]
