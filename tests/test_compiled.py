"""The compiled learner (setup.py: mypyc) and the guard that keeps a stale build from
shadowing edited sources (dustonline/_compiled.py)."""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dustonline import _compiled

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "dustonline" / "data" / "sample-stream.jsonl.gz"


def _tree(tmp_path: Path, library: bool = True) -> tuple[Path, dict]:
    """A package directory with two sources, their manifest, and the compiled library."""
    root = tmp_path / "pkg"
    (root / "learner").mkdir(parents=True)
    sources = {}
    for rel, text in (("learner/a.py", "X = 1\n"), ("hashing.py", "Y = 2\n")):
        (root / rel).write_text(text)
        sources[rel] = hashlib.sha256(text.encode()).hexdigest()
    if library:
        for name in ("_native__mypyc", "learner/a", "hashing"):
            (root / (name + importlib.machinery.EXTENSION_SUFFIXES[0])).write_bytes(b"")
    return root, {"library": "_native__mypyc", "sources": sources}


def test_an_unchanged_build_runs_compiled(tmp_path):
    root, manifest = _tree(tmp_path)
    assert _compiled.why_not(root, manifest) == (None, False)


def test_an_edited_source_runs_from_source_with_a_warning(tmp_path):
    root, manifest = _tree(tmp_path)
    (root / "learner" / "a.py").write_text("X = 3\n")
    reason, stale = _compiled.why_not(root, manifest)
    assert stale and "learner/a.py changed" in reason and "pip install -e ." in reason
    (root / "learner" / "a.py").unlink()  # a deleted source as well
    assert _compiled.why_not(root, manifest)[1]


def test_pure_python_on_request_and_without_the_library(tmp_path):
    root, manifest = _tree(tmp_path)
    assert _compiled.why_not(root, manifest, env="1") == ("DUSTONLINE_PURE_PYTHON=1", False)
    root, manifest = _tree(tmp_path / "b", library=False)
    reason, stale = _compiled.why_not(root, manifest)
    assert "_native__mypyc did not build" in reason and not stale
    root, manifest = _tree(tmp_path / "c")
    (root / ("hashing" + importlib.machinery.EXTENSION_SUFFIXES[0])).unlink()  # one module's entry point
    assert "hashing did not build" in _compiled.why_not(root, manifest)[0]


def test_the_fallback_finds_every_listed_module_as_its_source(tmp_path):
    root, manifest = _tree(tmp_path)
    finder = _compiled._FromSource(root, list(manifest["sources"]))
    spec = finder.find_spec("dustonline.learner.a")
    assert spec is not None and spec.origin == str(root / "learner" / "a.py")
    assert finder.find_spec("dustonline.hashing").origin == str(root / "hashing.py")
    assert finder.find_spec("dustonline.learner.b") is None


def _compiler() -> bool:
    return bool(shutil.which("cc") or shutil.which("gcc"))


def test_the_install_is_compiled_where_a_compiler_is():
    """CI builds with a C compiler: a build that fell back silently (mypyc failed, the
    library missing, a source edited after the install) would leave the learner at about
    two thirds of its speed. The status says why."""
    if os.environ.get(_compiled.PURE_ENV) or os.environ.get("DUSTONLINE_COMPILE") == "0" or not _compiler():
        pytest.skip("pure Python asked for, or no C compiler on this machine")
    assert _compiled.status.startswith("compiled by mypyc"), _compiled.status
    import dustonline.learner.online as online

    assert not online.__file__.endswith(".py")


def _learn(tmp_path: Path, name: str, pure: bool, inputs: tuple[Path, ...] = (SAMPLE,)) -> bytes:
    env = {k: v for k, v in os.environ.items() if k != _compiled.PURE_ENV}
    if pure:
        env[_compiled.PURE_ENV] = "1"
    out = tmp_path / f"{name}.jsonl"
    code = (
        "import sys, dustonline._compiled as c, dustonline.cli as cli; print(c.status, file=sys.stderr); "
        "sys.exit(cli.main(sys.argv[1:]))"
    )
    args = [sys.executable, "-c", code, "learn", *map(str, inputs), "--rules-out", str(out), "--quiet"]
    r = subprocess.run(
        [*args, "--dead-letter", str(tmp_path / f"{name}-dl.jsonl")], env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0].startswith("pure Python" if pure else "compiled")
    return out.read_bytes()


def test_compiled_and_pure_python_learn_the_same_rules(tmp_path):
    """Byte-identical rules from the two builds of the learner on the bundled sample."""
    if not _compiled.status.startswith("compiled"):
        pytest.skip(f"nothing to compare: {_compiled.status}")
    compiled, pure = _learn(tmp_path, "compiled", False), _learn(tmp_path, "pure", True)
    assert compiled.count(b"\n") > 20
    assert compiled == pure


def test_compiled_modules_lower_text_as_cpython_does():
    """mypyc compiles ``s.lower()`` to its own lowering, which before Python 3.13 lacks the
    final-sigma rule: the host ``vazΣߩ-t..example`` got another key than CPython's and the
    Java client's (tests/test_idn.py). Compiled modules call ``rules.urls.lower``."""
    import ast

    from dustonline.rules.urls import lower

    if not _compiled.MANIFEST.is_file():
        pytest.skip("nothing compiled in this install")
    calls = []
    for rel in json.loads(_compiled.MANIFEST.read_text())["sources"]:
        tree = ast.parse((_compiled.ROOT / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "lower":
                calls.append(f"{rel}:{node.lineno}")
    assert calls == [], "call rules.urls.lower(s) instead of s.lower() in compiled modules"
    assert lower("vazΣߩ") == "vazςߩ" == "vazΣߩ".lower()


def test_the_build_has_what_mypyc_type_checks():
    """mypyc type-checks what the compiled modules import, in pip's isolated build
    environment: a dependency missing from [build-system] requires is a type error there,
    and the install silently falls back to pure Python (a fresh clone did)."""
    import re

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())

    def names(reqs):
        return {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower().replace("_", "-") for r in reqs}

    build, runtime = names(meta["build-system"]["requires"]), names(meta["project"]["dependencies"])
    # not imported by anything the compiled modules import (mypy would fail without them)
    unseen = {"kafka-python", "tqdm", "warcio"}
    assert {"mypy", "types-pyyaml"} <= build
    assert runtime - unseen <= build, runtime - unseen - build


def test_compiled_and_pure_python_learn_the_same_rules_on_real_crawls(tmp_path, real_data):
    """The same on crawls nobody here generated: the Heritrix crawls (bbc.co.uk and UK
    news sites; IDN hosts) and the CDX index, in one run."""
    if not _compiled.status.startswith("compiled"):
        pytest.skip(f"nothing to compare: {_compiled.status}")
    inputs = tuple(
        real_data / f
        for f in ("ukwa-bbc-crawl.log", "heritrix1-idna-crawl.log", "heritrix1-crawl-9.log", "archiveit-index-2.cdx")
    )
    compiled, pure = _learn(tmp_path, "compiled", False, inputs), _learn(tmp_path, "pure", True, inputs)
    assert compiled.count(b"\n") > 10
    assert compiled == pure
