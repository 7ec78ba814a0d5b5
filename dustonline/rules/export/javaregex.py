"""Java regex and replacement text written from dustonline's parsed contexts and literal
text, for exporters whose crawler applies ``java.util.regex`` (Nutch, StormCrawler)."""

from __future__ import annotations

import functools
import sys

from ..pattern import Alt, Chars, Group, Parsed, Repeat, Seq


def cp(c: str) -> str:
    """One code point as Java regex text: ASCII letters and digits as they are, the rest
    as ``\\x{..}`` (also inside a class)."""
    return c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}"


def lit(text: str) -> str:
    return "".join(cp(c) for c in text)


def _ranges(points: set[int]) -> list[tuple[int, int]]:
    starts = sorted(c for c in points if c - 1 not in points)
    ends = sorted(c for c in points if c + 1 not in points)
    return list(zip(starts, ends, strict=True))


def char_class(points: set[int]) -> str:
    return "[" + "".join(cp(chr(a)) if a == b else f"{cp(chr(a))}-{cp(chr(b))}" for a, b in _ranges(points)) + "]"


@functools.cache
def digits() -> str:
    """What Python's str.isdigit takes for a port (light_normalize): Unicode digits too."""
    return char_class({c for c in range(sys.maxunicode + 1) if chr(c).isdigit()})


def java_context(parsed: Parsed) -> str:
    """A context as Java regex text written from its parsed tree (as ``to_re2`` does for
    RE2): classes as code-point ranges, so flags and ``.`` mean nothing; groups numbered
    as in the context; anchors left out (the caller anchors)."""
    return _java(parsed.root)


def _java(node) -> str:
    if isinstance(node, Chars):
        if len(node.ivs) == 1 and node.ivs[0][0] == node.ivs[0][1]:
            return cp(chr(node.ivs[0][0]))
        return "[" + "".join(cp(chr(lo)) if lo == hi else f"{cp(chr(lo))}-{cp(chr(hi))}" for lo, hi in node.ivs) + "]"
    if isinstance(node, Seq):
        return "".join(_java(i) for i in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(_java(b) for b in node.branches) + ")"
    if isinstance(node, Group):
        return ("(" if node.index is not None else "(?:") + _java(node.node) + ")"
    assert isinstance(node, Repeat)
    q = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((node.lo, node.hi))
    if q is None:
        q = f"{{{node.lo}}}" if node.lo == node.hi else f"{{{node.lo},{node.hi}}}"
    inner = _java(node.node)
    if not isinstance(node.node, (Chars, Group)):
        inner = "(?:" + inner + ")"
    return inner + q + ("?" if node.lazy else "")


def replacement(text: str) -> str:
    """Literal text for Java's replacement string (``\\`` and ``$`` escaped)."""
    return text.replace("\\", "\\\\").replace("$", "\\$")
