"""Lazy package exports: ``from dustonline.learner import OnlineLearner`` without importing
every stage when only one submodule is wanted (and without package-level import cycles)."""

from __future__ import annotations

from importlib import import_module


def exports(package: str, names: dict[str, str]):
    """A module ``__getattr__`` resolving ``names`` (name -> submodule) on first use."""

    def __getattr__(name: str):
        sub = names.get(name)
        if sub is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{sub}"), name)

    return __getattr__
