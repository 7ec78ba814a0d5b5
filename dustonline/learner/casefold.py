"""Letter case: case-insensitive servers (IIS) serve ``/About/Team`` as ``/about/team``.

Alignment already compares tokens case-insensitively, but a rule keeps what it
captures: ``/Health/x-7/`` and ``/health/x-7/`` stay two keys unless the rule writes the
path in one case. Koppula et al. learn that as a value conversion (Definition 2), which
the rule contract has as ``${N:lower}``. Evidence is a dup-cluster with two URLs whose
paths differ in letter case only; it is kept per site (registered domain), since
case-insensitivity is a property of a server, and one case-sensitive site must not keep
others from their rule. The canonical form is lower case. The query is left alone: its
values are the application's, and may be case-sensitive on any server.
"""

from __future__ import annotations

import re

from ..rules.params import lower_ascii
from .induce import render

#: The case rule: scheme and host kept, path lowered, query kept.
CASE_RULE = ("^([^/?#]*//[^/?#]*)(/[^?#]*)((?:\\?[^#]*)?)$", "$1${2:lower}$3")


_PATH = re.compile(r"[^/?#]*//[^/?#]*(/[^?#]*)")
_UPPER_PATH = re.compile(r"[^/?#]*//[^/?#]*/[^?#]*[A-Z]")


def _path(url: str) -> str | None:
    m = _PATH.match(url)
    return m.group(1) if m else None


def has_upper_path(url: str) -> bool:
    """Does ``url`` have an ASCII capital in its path? (Called for every validation URL.)"""
    return _UPPER_PATH.match(url) is not None


def case_evidence(urls: list[str]) -> bool:
    """Do two of ``urls`` have paths that differ in ASCII letter case only?"""
    if not any(map(has_upper_path, urls)):  # most clusters: a regex match per URL
        return False
    seen: dict[str, str] = {}
    for u in urls:
        p = _path(u)
        if p is None:
            continue
        low = lower_ascii(p)
        q = seen.setdefault(low, p)
        if q != p:
            return True
    return False


def path_span(parts: list[tuple]) -> tuple[int, int] | None:
    """Indexes [start, end) of a candidate's path parts: from the first literal with a
    "/" after the "://", up to the literal with the "?" (or the end)."""
    start = None
    for i, p in enumerate(parts):
        if p[0] != "L":
            continue
        if start is None:
            if "://" in p[1]:
                start = -1
        elif start == -1 and "/" in p[1]:
            start = i
        if start is not None and start >= 0 and "?" in p[1]:
            return start, i
    if start is None or start < 0:
        return None
    return start, len(parts)


def transformation(parts: list[tuple], card_set: int, lower: bool) -> tuple[str, bool]:
    """The transformation rulegen.render writes for ``parts``, with (``lower``) every
    capture and literal of the path lowered; and whether lowering changed anything."""
    span = path_span(parts) if lower else None
    a, b = span if span else (0, 0)
    out, n, changed = [], 0, False
    for i, p in enumerate(parts):
        inpath = a <= i < b
        if p[0] in ("C", "T"):
            n += 1
            out.append(f"${{{n}:lower}}" if inpath else f"${n}")
            changed |= inpath
        else:
            piece = render([p], card_set)[1]
            if inpath and lower_ascii(piece) != piece:
                piece, changed = lower_ascii(piece), True
            out.append(piece)
    return "".join(out), changed
