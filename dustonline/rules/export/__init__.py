"""Rules written in other crawlers' own canonicalization formats (issue 19, item 4).

Each format is a module with ``export(rules: Sequence[Rule]) -> Export``: the text the
crawler reads, and the rules it cannot express, each with the reason. A module is named
here, not imported, so one format's absence or its optional dependencies never break the
others (``load`` says which module is missing).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec

from ..ruleset import Rule
from ..urls import a_label


@dataclass(frozen=True)
class Skipped:
    """A rule left out of an export, and why the target format cannot express it."""

    rule_id: str
    reason: str


@dataclass
class Export:
    """An exporter's output: ``text`` for the crawler's config, ``skipped`` rules (keys
    of the URLs they decide differ from ``RuleSet.canonicalize``)."""

    text: str
    skipped: list[Skipped] = field(default_factory=list)


Exporter = Callable[[Sequence[Rule]], Export]

#: format name -> the module whose ``export`` writes it
FORMATS: dict[str, str] = {
    "nutch": "dustonline.rules.export.nutch",
    # StormCrawler's RegexURLNormalizer reads Nutch's regex-normalize.xml as it is
    "stormcrawler": "dustonline.rules.export.nutch",
    "heritrix": "dustonline.rules.export.heritrix",
    "dud": "dustonline.rules.export.dud",
}


class UnknownFormat(ValueError):
    pass


def load(name: str) -> Exporter:
    """The exporter of format ``name``; UnknownFormat naming the formats there are, or
    the module that is missing."""
    module = FORMATS.get(name)
    if module is None:
        raise UnknownFormat(f"unknown export format {name!r}, choose from {', '.join(sorted(FORMATS))}")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:  # the module is there, a dependency of it is not: say that
            raise
        raise UnknownFormat(f"export format {name!r}: its module {module} is not installed") from None
    return mod.export


def export(name: str, rules: Sequence[Rule]) -> Export:
    return load(name)(rules)


__all__ = ["FORMATS", "Export", "Exporter", "Skipped", "UnknownFormat", "export", "load"]


def as_indexed(rules: Sequence[Rule]) -> list[Rule]:
    """The rules with each host as RuleSet indexes it (lower case, an IDN host as its
    A-labels), so an export scopes a rule to the hosts it applies to."""
    out = []
    for r in rules:
        hosts = [a_label(h.lower()) for h in r.hosts]
        out.append(r if hosts == r.hosts else msgspec.structs.replace(r, hosts=hosts))
    return out
