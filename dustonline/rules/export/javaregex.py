"""Java regex and replacement text written from dustonline's parsed contexts and literal
text, for exporters whose crawler applies ``java.util.regex`` (Nutch, StormCrawler)."""

from __future__ import annotations

import functools
import sys

from ..pattern import Alt, Chars, Group, Parsed, Repeat, Seq
from ..urls import _UNRESERVED as UNRESERVED
from ..urls import escapes_normalized


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


def _hex(h: str) -> str:
    """One hex digit in either case (escapes are compared with their hex upper-cased)."""
    return f"[{h.upper()}{h.lower()}]" if h.isalpha() else h


def escaped_segment(literal: str) -> str | None:
    """A Java regex for exactly the texts whose %-escapes, written as light normalization
    writes them (``escapes_normalized``), give ``literal``: what a ``last-segment:``
    edit compares (params.apply_edits). Each escape of the literal in either hex case
    (``%25`` also a bare ``%``), each unreserved character as itself or as its escape,
    anything else as itself. None when no text gives it (a literal light normalization
    would rewrite: lower-case hex, an escaped unreserved character, a bare ``%``)."""
    if escapes_normalized(literal) != literal:
        return None
    out = []
    i = 0
    while i < len(literal):
        ch = literal[i]
        if ch == "%":  # a valid upper-case escape of a reserved or non-ASCII byte
            esc = "%" + "".join(_hex(h) for h in literal[i + 1 : i + 3])
            out.append(f"(?:{esc}|%(?![0-9A-Fa-f]{{2}}))" if literal[i + 1 : i + 3] == "25" else esc)
            i += 3
            continue
        if ch in UNRESERVED:
            out.append(f"(?:{cp(ch)}|%{''.join(_hex(h) for h in f'{ord(ch):02X}')})")
        else:
            out.append(cp(ch))
        i += 1
    return "".join(out)
