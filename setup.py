"""Only for the optional compiled parts; everything else is in pyproject.toml.

- dustonline/_kernels.c: the alignment matrix and the simhash blocks, in C.
- The learner's modules in ``COMPILED``, compiled to C by mypyc (mypy's compiler: the
  same type annotations mypy checks, no second language). The learner spends its time
  spread over these modules, in Python's own dict and call machinery, with no single
  hotspot left to write in C (docs/performance.md); compiled, they learn 1.4-1.5 times
  as fast, with byte-identical rules.

Without a C compiler, or with DUSTONLINE_COMPILE=0, the build goes on without them and
the pure-Python modules are used (same results, slower). dustonline/_compiled.json lists
what was compiled, with a hash of each source, so an edited source is not shadowed by a
stale compiled module (dustonline/_compiled.py).
"""

import hashlib
import json
import os
import sys
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
GROUP = "dustonline._native"  # the shared library: dustonline/_native__mypyc.*.so
LIBRARY = GROUP.split(".")[-1] + "__mypyc"  # its file name, beside the sources

# Modules that hold msgspec structs (learner/records.py, rules/rule.py, events/,
# state/durable.py) or protocols stay Python: mypyc would make their classes native ones;
# so does learner/parallel.py (processes and pipes: nothing there is the learner's work).
# rules/pattern.py does not compile (dataclasses with fields annotated ``object``).
COMPILED = sorted(
    [
        *(
            f"dustonline/learner/{p.name}"
            for p in (ROOT / "dustonline/learner").glob("*.py")
            if p.name not in ("__init__.py", "records.py", "protocol.py", "parallel.py")
        ),
        "dustonline/state/chunklog.py",
        "dustonline/state/keyfilter.py",
        "dustonline/state/overlay.py",
        "dustonline/state/store.py",
        "dustonline/rules/book.py",
        "dustonline/rules/params.py",
        "dustonline/rules/ruleset.py",
        "dustonline/rules/urls.py",
        "dustonline/hashing.py",
    ]
)
MANIFEST = ROOT / "dustonline" / "_compiled.json"


def kernels() -> list[Extension]:
    return [Extension("dustonline._kernels", ["dustonline/_kernels.c"], optional=True)]


def remove_compiled_modules() -> None:
    """An in-place (editable) build leaves each compiled module beside its source, where it
    shadows the source for good: once the module leaves ``COMPILED``, or the install is
    pure Python, a stale one would still be imported. So every extension module beside a
    ``.py`` file goes before each build, with their shared library, and the build adds back
    what it compiles."""
    for path in (ROOT / "dustonline").rglob("*"):
        stem = path.name.split(".")[0]
        if path.suffix in (".so", ".pyd") and (stem == LIBRARY or path.with_name(stem + ".py").is_file()):
            path.unlink()


def compiled() -> list[Extension]:
    MANIFEST.unlink(missing_ok=True)
    remove_compiled_modules()
    if os.environ.get("DUSTONLINE_COMPILE", "1") == "0":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("dustonline: mypy is not installed, building without compiled modules", file=sys.stderr)
        return []
    try:
        exts = mypycify(COMPILED, opt_level="3", debug_level="0", group_name=GROUP)
    except (Exception, SystemExit) as e:  # noqa: BLE001  (any failure: build without; mypyc exits on a type error)
        print(f"dustonline: mypyc failed ({e!r}), building without compiled modules", file=sys.stderr)
        return []
    for ext in exts:
        ext.optional = True  # no compiler: the pure-Python modules run (_compiled.py checks)
    sources = {p[len("dustonline/") :]: hashlib.sha256((ROOT / p).read_bytes()).hexdigest() for p in COMPILED}
    MANIFEST.write_text(json.dumps({"library": LIBRARY, "sources": sources}, indent=1))
    return exts


setup(ext_modules=kernels() + compiled())
