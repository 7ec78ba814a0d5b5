"""Whether the learner's modules run compiled, and a way back to their sources.

setup.py compiles the learner's hot modules with mypyc when it can and lists them in
``_compiled.json`` with a hash of each source. A compiled module shadows its ``.py``
file, so an edited source would silently not run. ``install`` (run when
``dustonline/__init__.py`` imports this, before any other module of the package) runs
every listed module from source instead when any listed source differs from what was
compiled (with a warning that says how to rebuild), when the compiled library is
missing, or when ``DUSTONLINE_PURE_PYTHON=1`` is set (py-spy and debuggers see Python
frames only). All or none: compiled modules call each other natively, so one stale
module cannot be swapped alone.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent
MANIFEST = ROOT / "_compiled.json"
PURE_ENV = "DUSTONLINE_PURE_PYTHON"

status = "pure Python: nothing compiled in this install"  # set by install(), printed by benchmarks


def why_not(root: Path, manifest: dict, env: str = "") -> tuple[str | None, bool]:
    """Why the compiled modules listed in ``manifest`` cannot run, and whether that is a
    stale build (worth a warning); (None, False) when they can."""
    if env:
        return f"{PURE_ENV}={env}", False
    changed = [
        rel
        for rel, digest in manifest["sources"].items()
        if not (root / rel).is_file() or hashlib.sha256((root / rel).read_bytes()).hexdigest() != digest
    ]
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return (
            f"{', '.join(changed[:3])}{more} changed since they were compiled; "
            "rebuild with `pip install -e .` (or set DUSTONLINE_COMPILE=0 when installing)",
            True,
        )
    # the shared library and each module's own entry point, built for this interpreter:
    # one missing would leave a Python copy of a module beside the compiled one
    built = [manifest["library"], *(rel[:-3] for rel in manifest["sources"])]
    missing = [
        name
        for name in built
        if not any((root / (name + sfx)).is_file() for sfx in importlib.machinery.EXTENSION_SUFFIXES)
    ]
    if missing:
        return f"{missing[0]} did not build for this Python (no C compiler?)", False
    return None, False


class _FromSource(importlib.abc.MetaPathFinder):
    """Finds the listed modules as their ``.py`` files, ahead of the compiled ones."""

    def __init__(self, root: Path, sources: list[str]):
        self.paths = {"dustonline." + rel[:-3].replace("/", "."): root / rel for rel in sources}

    def find_spec(self, fullname, path=None, target=None):
        p = self.paths.get(fullname)
        return None if p is None else importlib.util.spec_from_file_location(fullname, p)


def install() -> None:
    global status
    if not MANIFEST.is_file():
        return
    manifest = json.loads(MANIFEST.read_text())
    reason, stale = why_not(ROOT, manifest, os.environ.get(PURE_ENV, ""))
    if reason is None:
        status = f"compiled by mypyc: {len(manifest['sources'])} modules"
        return
    sys.meta_path.insert(0, _FromSource(ROOT, list(manifest["sources"])))
    status = f"pure Python: {reason}"
    if stale:
        warnings.warn(f"dustonline runs its pure-Python modules: {reason}", RuntimeWarning, stacklevel=2)


install()
