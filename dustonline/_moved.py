"""Modules that moved when the package was split into subpackages: an old import path
(``dustonline.readers``) keeps working, with a DeprecationWarning naming the new one."""

from __future__ import annotations

import sys
import warnings
from importlib import import_module
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

MOVED: dict[str, tuple[str, ...]] = {
    "batch": ("seeds.dustlin",),
    "rulebook": ("rules.book",),
    "rulemerge": ("rules.merge",),
    "urls": ("rules.urls",),
    "readers": ("events.readers",),
    "deadletter": ("events.deadletter",),
    "sketch": ("events.sketch",),
    "partitions": ("events.routing", "learner.partitioned"),
    "store": ("state.store",),
    "keyfilter": ("state.keyfilter",),
    "chunklog": ("state.chunklog",),
    "hosturls": ("learner.hosturls",),
    "clusters": ("learner.clusters",),
    "align": ("learner.align",),
    "tokenize": ("learner.tokenize",),
    "rulegen": ("learner.induce",),
    "generalize": ("learner.generalize",),
    "kvrules": ("learner.kvrules",),
    "casefold": ("learner.casefold",),
    "permute": ("learner.paramorder",),
    "validation": ("learner.validation",),
    "targets": ("learner.keycheck",),
    "adopt": ("learner.adopt",),
    "metrics": ("evaluation.metrics",),
    "report": ("evaluation.report",),
    "generate": ("evaluation.generator",),
    "learners": ("evaluation.methods",),
}


class _Moved(ModuleType):
    """Attributes come from the new modules, imported on first use."""

    _targets: tuple[str, ...] = ()

    def __getattr__(self, name: str):
        for target in self._targets:
            mod = import_module(target)
            if hasattr(mod, name):
                return getattr(mod, name)
        raise AttributeError(f"{self.__name__} moved to {', '.join(self._targets)}, which have no {name!r}")


class _Finder(MetaPathFinder, Loader):
    def find_spec(self, fullname, path, target=None):
        pkg, _, old = fullname.partition(".")
        if pkg == "dustonline" and old in MOVED:
            return ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        mod = _Moved(spec.name)
        mod._targets = tuple(f"dustonline.{t}" for t in MOVED[spec.name.partition(".")[2]])
        return mod

    def exec_module(self, module):
        warnings.warn(
            f"{module.__name__} moved: import from {' or '.join(module._targets)}", DeprecationWarning, stacklevel=3
        )


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
