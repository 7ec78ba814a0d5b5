"""The rule record (docs/formats.md), apart from ``ruleset.py``, which applies rules:
that module is compiled (setup.py), and msgspec's struct must stay msgspec's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

ACTIVE, RETIRED = "active", "retired"
EVERY_HOST = "*"  # ``Rule.hosts == ["*"]``: a parameter rule of every host but ``except_hosts``

# What applies a rule, by engine; rules/ruleset.py fills it as it loads, which is before
# any rule can be compiled (the package imports it). Here rather than an import of
# ruleset.py, which imports this module.
APPLIERS: dict[str, Callable[[Rule, bool], Any]] = {}


class Rule(msgspec.Struct, kw_only=True):
    id: str
    hosts: list[str]
    context: str
    transformation: str
    support: int = 0
    fpr: float = 0.0
    freq: int = 0
    version: int = 1
    status: str = ACTIVE
    updated: float = 0.0
    # a parameter rule (rules/params.py): the query parameter of this name is dropped on
    # ``hosts`` before rewrite rules apply; context and transformation are then empty, so
    # a reader that predates the field holds a rule that matches nothing. Left out of the
    # record when unset: rewrite rules encode as they always did.
    drop_param: str | msgspec.UnsetType = msgspec.UNSET
    # a scheme rule: on ``hosts``, http and https serve the same pages, and URLs are read
    # with this scheme (only "https") before rewrite rules apply; left out when unset
    canonical_scheme: str | msgspec.UnsetType = msgspec.UNSET
    # a host rule: the URLs of ``hosts`` are the same pages on this host (``www.x.com`` ->
    # ``x.com``, a numbered CDN host -> its peer), and are read on it before anything else
    # applies, with that host's rules; left out when unset
    canonical_host: str | msgspec.UnsetType = msgspec.UNSET
    # a path-edit rule: on ``hosts``, URLs are read with this edit (``trailing-slash``,
    # ``empty-query``, ``bare-tokens``, ``last-segment:<literal>``, rules/params.py ``apply_edits``) after
    # the parameter rules and before rewrite rules; left out when unset
    normalize: str | msgspec.UnsetType = msgspec.UNSET
    # the version of the record format (docs/rule.schema.json); absent means 1, and the
    # writer leaves it out at 1 so rules files stay as they were. A reader refuses a record
    # of a version it does not know (``check_format``): its fields may mean something else.
    format: int | msgspec.UnsetType = msgspec.UNSET
    # a parameter rule whose ``hosts`` is ``["*"]`` (``EVERY_HOST``) applies on every host
    # but these: a name proven on many sites, vetoed where a site's pages depend on it. A
    # reader that predates the field holds a rule of a host ``*`` that matches no URL.
    except_hosts: list[str] | msgspec.UnsetType = msgspec.UNSET
    # a rewrite rule that only does what this path edit does (``sort-query`` for a
    # parameter-order rule, ``lowercase-path`` for a path-case one): not tried on a host
    # that has the edit, where it would leave every URL as it is and yet, as the first
    # rule to match, decide it. Kept for readers that cannot apply the edit (the regex
    # exports). A reader that predates the field tries it everywhere, as before.
    subsumed_by: str | msgspec.UnsetType = msgspec.UNSET

    def compile(self, check: bool = False, engine: str = "python") -> Any:
        """A ``CompiledRule`` (rules/ruleset.py). ``check``: refuse what docs/formats.md
        does not admit (rules from outside). ``engine``: what applies the context,
        ``python`` (``re``) or ``re2`` (RE2CompiledRule)."""
        applier = APPLIERS.get(engine)
        if applier is None:
            raise ValueError(f"unknown engine {engine!r}, choose from {', '.join(APPLIERS)}")
        return applier(self, check)
