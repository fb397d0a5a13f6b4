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
"""

from __future__ import annotations

import functools
import hashlib
import os
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


def _install() -> None:
    """Put locators that add :func:`dependency_stamp` to numba's own in front of numba's (for the
    modules :func:`depends` names only; every other function is cached as numba does).  Where this
    numba has no such hooks, numba's own key stays (the module's source alone)."""
    global _installed
    if _installed:
        return
    _installed = True
    from numba.core import caching

    impl = _numba_name(caching, "CacheImpl")
    bases = [_numba_name(caching, n) for n in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")]
    if impl is None or not isinstance(getattr(impl, "_locator_classes", None), list) or None in bases:
        return

    class _WithDependencies:
        """Mixin: numba's locator for a declared module, its stamp extended with the dependencies'."""

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.realpath(py_file) not in _DEPENDS:
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return (super().get_source_stamp(), dependency_stamp(self._py_file))

    ours = [type(f"Dependent{b.__name__.lstrip('_')}", (_WithDependencies, b), {}) for b in bases]
    impl._locator_classes = [*ours, *impl._locator_classes]


__all__ = ["dependency_stamp", "depends"]
