"""The package's structure: no import cycles among dustonline's modules, and the core never
imports the Kafka layer (kafka-python, aiokafka, Faust, mode, dustonline_stream).

Both are read from the source with ``ast``, so they hold for every import, including those
inside functions (the ones that run only when a command needs them), not only the imports
one run happens to execute. The graph's edges, from the module an import is written in:

- ``import a.b`` and ``from a.b import name``: to ``a.b`` (absolute or relative, resolved);
  a package is its ``__init__.py``, so importing a package or a name it defines is an edge
  to the package's module;
- ``from a import b`` where ``b`` is a submodule: to ``a.b`` only (``from . import x``,
  ``from ..learner import holdout``);
- ``from a import name`` where ``a`` exports ``name`` lazily (dustonline/_lazy.py): to ``a``
  and to the submodule that defines it, which that import runs;
- ``import_module("a.b")`` with a literal name: to ``a.b``;
- C extensions (dustonline/_kernels.c) are modules that import nothing.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = "dustonline"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# the Kafka layer and its clients: only dustonline_stream (stream/) may import them
FORBIDDEN = {"kafka", "aiokafka", "faust", "mode", "dustonline_stream"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, tuple[Path, ast.Module]]:
    """Every module of the package: dotted name -> (file, syntax tree); a package is
    named by its ``__init__.py``."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        out[_module_name(path)] = (path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return out


SOURCES = _sources()
# modules without Python source: C extensions (setup.py builds dustonline/_kernels.c); they
# import nothing of the package
EXTENSIONS = {
    _module_name(p.with_name(p.name.partition(".")[0] + ".py"))  # _kernels.cpython-311-....so
    for p in [*ROOT.rglob("*.c"), *ROOT.rglob("*.so"), *ROOT.rglob("*.pyd")]
}
MODULES = set(SOURCES) | EXTENSIONS


def _is_package(module: str) -> bool:
    return module in SOURCES and SOURCES[module][0].name == "__init__.py"


def _literal(tree: ast.Module, node: ast.expr):
    """``node`` as a literal, a module-level name bound to one followed."""
    if isinstance(node, ast.Name):
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in stmt.targets):
                return ast.literal_eval(stmt.value)
        raise ValueError(f"no module-level literal {node.id}")
    return ast.literal_eval(node)


def _lazy_exports(package: str) -> dict[str, str]:
    """A package's lazy exports (``__getattr__ = exports(__name__, {name: submodule})``,
    dustonline/_lazy.py): ``from package import name`` runs the submodule, so it is an
    edge to that submodule. Both spellings used: a dict literal, ``dict.fromkeys(NAMES, sub)``."""
    tree = SOURCES[package][1]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "exports"):
            continue
        arg = node.args[1]
        if isinstance(arg, ast.Dict):
            names = _literal(tree, arg)
        elif (
            isinstance(arg, ast.Call)
            and isinstance(arg.func, ast.Attribute)
            and arg.func.attr == "fromkeys"
            and getattr(arg.func.value, "id", None) == "dict"
        ):
            names = dict.fromkeys(_literal(tree, arg.args[0]), _literal(tree, arg.args[1]))
        else:
            raise AssertionError(f"{package}: lazy exports in a form this test cannot read: {ast.unparse(node)}")
        return {name: f"{package}.{sub}" for name, sub in names.items()}
    return {}


LAZY = {m: _lazy_exports(m) for m in MODULES if _is_package(m)}


def _known(name: str, where: str = "") -> str | None:
    """``name`` when it is a module of the package; None for another distribution's, and
    for a name the package has no module of (recorded in UNRESOLVED: an old path
    dustonline/_moved.py redirects, or a module that is gone)."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    if name not in MODULES:
        UNRESOLVED.append(f"{where}: {name}")
        return None
    return name


UNRESOLVED: list[str] = []


def _targets(module: str, node: ast.AST) -> list[str]:
    """The package's modules an import statement in ``module`` is an edge to (the rules
    are in this file's docstring)."""
    where = f"{SOURCES[module][0].relative_to(ROOT.parent)}:{node.lineno}"
    if isinstance(node, ast.Import):
        return [t for t in (_known(a.name, where) for a in node.names) if t]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module if _is_package(module) else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        source = f"{base}.{node.module}" if node.module else base
    else:
        source = node.module or ""
    src = _known(source, where)
    if src is None:
        return []
    out = []
    for alias in node.names:
        sub = f"{src}.{alias.name}"
        if sub in MODULES:  # from pkg import submodule
            out.append(sub)
        elif alias.name in LAZY.get(src, {}):  # a lazy export: the package, and the submodule it runs
            out += [src, LAZY[src][alias.name]]
        else:  # a name the module (a package: its __init__) defines
            out.append(src)
    return out


def _literal_import_module(node: ast.AST) -> str | None:
    """``import_module("name")`` / ``__import__("name")`` with a literal name."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        f = node.func
        fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if fname in ("import_module", "__import__") and isinstance(node.args[0].value, str):
            return node.args[0].value
    return None


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module of the package: line of the first such import}."""
    UNRESOLVED.clear()
    graph: dict[str, dict[str, int]] = {m: {} for m in MODULES}
    for module, (_, tree) in SOURCES.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = _targets(module, node)
            elif (name := _literal_import_module(node)) is not None:
                targets = [
                    t for t in [_known(name, f"{SOURCES[module][0].relative_to(ROOT.parent)}:{node.lineno}")] if t
                ]
            else:
                continue
            for t in targets:
                if t != module:
                    graph[module].setdefault(t, node.lineno)
    return graph


def find_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module, as the path
    m0 -> m1 -> ... -> m0."""
    return [_cycle_in(graph, set(c), c[0]) for c in components(graph)]


def components(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return sorted(found)


def _cycle_in(graph: dict[str, dict[str, int]], comp: set[str], start: str) -> list[str]:
    """The shortest cycle through ``start`` inside one component (breadth-first)."""
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in comp:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start}")


def _describe(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    steps = [
        f"  {a} -> {b}  ({SOURCES[a][0].relative_to(ROOT.parent)}:{graph[a][b]})" for a, b in zip(cycle, cycle[1:])
    ]
    return " -> ".join(cycle) + "\n" + "\n".join(steps)


# ------------------------------------------------------------------ the graph itself
def test_the_graph_reads_every_kind_of_import():
    """Module-level, function-level, relative and absolute imports, submodules named by a
    from-import, lazy exports and imports of a package's __init__ all make edges."""
    graph = import_graph()
    assert "dustonline.cli" in graph and "dustonline.learner" in graph and "dustonline.learner.online" in graph
    cli = graph["dustonline.cli"]
    assert "dustonline.config" in cli  # from .config import ... (module level)
    assert "dustonline.rules.ruleset" in cli  # from .rules.ruleset import ...
    assert "dustonline.evaluation.methods" in cli  # inside _parser()
    assert "dustonline.runner" in cli  # inside cmd_learn()
    assert "dustonline" in cli  # from . import __version__: the package's __init__
    assert "dustonline._moved" in graph["dustonline"]  # from . import _moved: a submodule, not the package
    assert "dustonline._kernels" in graph["dustonline.learner.clusters"]  # from .. import _kernels: the C extension
    assert "dustonline" not in graph["dustonline.learner.clusters"]
    assert LAZY["dustonline.learner"]["OnlineLearner"] == "dustonline.learner.online"
    assert LAZY["dustonline.evaluation"]["run"] == "dustonline.evaluation.prequential"
    assert find_cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1, "d": 1}, "d": {}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b": 1}, "b": {}}) == []


def test_every_import_of_the_package_names_one_of_its_modules():
    """Inside the package, no old module path (dustonline/_moved.py) and no module that is gone."""
    import_graph()
    assert not UNRESOLVED, "imports of modules dustonline does not have:\n" + "\n".join(UNRESOLVED)


def test_no_import_cycles():
    graph = import_graph()
    cycles = find_cycles(graph)
    assert not cycles, "import cycles among dustonline's modules:\n" + "\n".join(_describe(graph, c) for c in cycles)


# ------------------------------------------------------------------ the core and the Kafka layer
def test_the_core_never_imports_the_kafka_layer():
    found = []
    for path, tree in SOURCES.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
            elif (name := _literal_import_module(node)) is not None:
                names = [name]
            else:
                continue
            found += [
                f"{path.relative_to(ROOT.parent)}:{node.lineno}: {n}" for n in names if n.partition(".")[0] in FORBIDDEN
            ]
    assert not found, "the core imports the Kafka layer:\n" + "\n".join(found)


@pytest.mark.timeout(120)
def test_importing_every_core_module_loads_no_kafka_layer():
    """The same at run time: every module of the package imported, none of the Kafka
    layer's is loaded (an indirect import through another distribution would show here)."""
    modules = sorted(m for m in MODULES if not m.rpartition(".")[2].startswith("__"))
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted({{n.partition('.')[0] for n in sys.modules}} & {FORBIDDEN!r}))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]", f"loaded: {p.stdout.strip()}"
