"""stream/faust_compat.py: the one module that may touch Faust's, aiokafka's or mode's
private internals, and the version check that guards them (no broker needed)."""

from __future__ import annotations

import ast
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

import dustonline_stream
from dustonline_stream import faust_compat

STREAM = Path(dustonline_stream.__file__).resolve().parent
COMPAT = STREAM / "faust_compat.py"
FOREIGN = {"faust", "aiokafka", "mode"}
# private names of other libraries stream/ may use anywhere: (receiver, name)
NOT_FAUST = {("os", "_exit"), ("argparse", "_SubParsersAction")}
# what faust_compat.py reaches for: the check below must see every one of them there
COMPAT_PRIVATES = {
    "_producer",
    "_wait_on_metadata",
    "_message_accumulator",
    "_append_batch",
    "_thread",
    "_consumer",
    "_fetcher",
    "_fetch_max_wait_ms",
    "_db_for_partition",
    # the pages topic in batches (batch_topic: Faust's fetch loop, batched)
    "_wait_next_records",
    "_read_offset",
    "_add_gap",
    "_buffered_partitions",
    "_to_message",
    "_n_acked",
    "_commit_every",
    # seek_to_committed: the consumer thread's aiokafka consumer
    "_ensure_consumer",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _root(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def private_accesses(source: str) -> list[tuple[int, str]]:
    """(line, what) of every private name the code reaches outside its own objects: an
    attribute ``x._name`` (also through getattr/setattr/hasattr/delattr with a constant
    name) on anything but ``self``/``cls``; ``self._name`` too in a class derived from a
    faust/aiokafka/mode class (the name is then likely the library's); and imports of
    private names or modules of those libraries. Deliberately over-wide: a receiver's type
    is unknown here, so every other library's private use must be listed in NOT_FAUST."""
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []
    foreign: set[str] = set()  # local names bound to faust/aiokafka/mode or their members
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in FOREIGN:
                    foreign.add((a.asname or a.name).split(".")[0])
                    if any(_private(part) for part in a.name.split(".")):
                        found.append((node.lineno, f"import {a.name}"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] in FOREIGN:
            private_module = any(_private(part) for part in node.module.split("."))
            for a in node.names:
                foreign.add(a.asname or a.name)
                if private_module or _private(a.name):
                    found.append((node.lineno, f"from {node.module} import {a.name}"))

    class Visitor(ast.NodeVisitor):
        derived = [False]  # per enclosing class: does it derive from a foreign class?

        def visit_ClassDef(self, node):
            self.derived.append(any(_root(b) in foreign for b in node.bases))
            self.generic_visit(node)
            self.derived.pop()

        def check(self, node, receiver: ast.expr, name: str) -> None:
            if not _private(name):
                return
            who = ast.unparse(receiver)
            if who in ("self", "cls") and not self.derived[-1]:
                return  # the module's own objects
            if (who, name) not in NOT_FAUST:
                found.append((node.lineno, f"{who}.{name}"))

        def visit_Attribute(self, node):
            self.check(node, node.value, node.attr)
            self.generic_visit(node)

        def visit_Call(self, node):
            f = node.func
            if (
                isinstance(f, ast.Name)
                and f.id in ("getattr", "setattr", "hasattr", "delattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                self.check(node, node.args[0], node.args[1].value)
            self.generic_visit(node)

    Visitor().visit(tree)
    return found


def test_only_faust_compat_touches_private_internals():
    modules = sorted(p for p in STREAM.rglob("*.py") if p != COMPAT)
    assert len(modules) > 10, f"stream/ modules not found under {STREAM}"
    bad = [
        f"{p.relative_to(STREAM.parent)}:{line}: {what}"
        for p in modules
        for line, what in private_accesses(p.read_text())
    ]
    assert not bad, (
        "private Faust/aiokafka/mode internals outside stream/faust_compat.py (put each behind a "
        "named function there, or list another library's in NOT_FAUST):\n" + "\n".join(bad)
    )


def test_the_check_sees_every_private_name_faust_compat_uses():
    seen = {what.rsplit(".", 1)[-1] for _, what in private_accesses(COMPAT.read_text())}
    assert COMPAT_PRIVATES <= seen, f"not seen in faust_compat.py: {COMPAT_PRIVATES - seen}"


@pytest.mark.parametrize(
    "code",
    [
        "x = app.producer._producer",
        "app.producer._producer._message_accumulator._append_batch(b, tp)",
        "fetcher = getattr(consumer, '_fetcher', None)",
        "setattr(fetcher, '_fetch_max_wait_ms', 10)",
        "self.app.consumer._thread",
        "db = table.data._db_for_partition(p)",
        "import faust\nclass C(faust.Service):\n    def f(self):\n        return self._thread",
        "from mode import Service\nclass C(Service):\n    def f(self):\n        return self._stopped",
        "from aiokafka.producer.message_accumulator import _Batch",
        "from faust._private import thing",
        "super()._on_start()",
    ],
)
def test_the_check_catches(code):
    assert private_accesses(code), code


@pytest.mark.parametrize(
    "code",
    [
        "self._producer = None\nself._thread.start()",
        "class C:\n    def f(self):\n        return self._consumer()",
        "os._exit(70)",
        "def register(sub: argparse._SubParsersAction): pass",
        "from dustonline.state.store import _Backend",
        "from faust.types import TP\nx = msg.__class__",
        "await app.consumer.seek(tp, 3)",
    ],
)
def test_the_check_lets_through(code):
    assert not private_accesses(code), code


# ------------------------------------------------------------ versions
def test_the_installed_versions_are_supported():
    found = faust_compat.check_versions()
    assert set(found) == {"faust-streaming", "aiokafka"}


def test_the_stream_extra_pins_what_faust_compat_supports():
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    extra = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["stream"]
    pinned = {r.name: r.specifier for r in map(Requirement, extra)}
    for dist, spec in faust_compat.SUPPORTED.items():
        assert pinned.get(dist) == SpecifierSet(spec), f"pyproject.toml stream extra: {dist}{pinned.get(dist)}"


def _fake_versions(monkeypatch, **fake):
    real = importlib.metadata.version

    def version(dist):
        if dist in fake:
            if fake[dist] is None:
                raise importlib.metadata.PackageNotFoundError(dist)
            return fake[dist]
        return real(dist)

    monkeypatch.setattr(importlib.metadata, "version", version)


@pytest.mark.parametrize(
    "dist,installed",
    [
        ("faust-streaming", "0.16.0"),
        ("faust-streaming", "0.15.2"),
        ("faust-streaming", "0.16.0rc1"),
        ("faust-streaming", "1.0"),
        ("aiokafka", "0.15.0"),
        ("aiokafka", "0.13.0"),
        ("aiokafka", "not-a-version"),
    ],
)
def test_an_unsupported_version_fails_naming_both(monkeypatch, dist, installed):
    _fake_versions(monkeypatch, **{dist: installed})
    with pytest.raises(faust_compat.UnsupportedVersion) as e:
        faust_compat.check_versions()
    msg = str(e.value)
    assert f"{dist} {installed} is installed" in msg and f"{dist}{faust_compat.SUPPORTED[dist]}" in msg
    assert isinstance(e.value, ImportError)  # `dustonline worker` reports it as the stream extra missing


@pytest.mark.parametrize("dist,installed", [("faust-streaming", "0.15.9"), ("aiokafka", "0.14.3")])
def test_a_later_patch_release_is_supported(monkeypatch, dist, installed):
    _fake_versions(monkeypatch, **{dist: installed})
    assert faust_compat.check_versions()[dist] == installed


def test_a_missing_distribution_fails_naming_the_supported_version(monkeypatch):
    _fake_versions(monkeypatch, aiokafka=None)
    with pytest.raises(faust_compat.UnsupportedVersion, match=r"aiokafka is not installed \(supported: aiokafka>="):
        faust_compat.check_versions()


def test_the_worker_does_not_import_under_an_unsupported_faust():
    code = (
        "import importlib.metadata as m\n"
        "real = m.version\n"
        "m.version = lambda d: '99.0' if d == 'faust-streaming' else real(d)\n"
        "import dustonline_stream.worker\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    supported = faust_compat.SUPPORTED["faust-streaming"]
    assert (
        f"UnsupportedVersion: faust-streaming 99.0 is installed (supported: faust-streaming{supported})" in r.stderr
    ), r.stderr
