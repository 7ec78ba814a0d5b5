"""A rule with another rule's target: ``adopt(r, examples)`` (Koppula et al.'s key reference).

Crawlers apply the first rule that matches a URL (rules.py), so two valid rules with
different targets split a page whose URLs fall under both: the learner gives the younger
rule the key the older one gives (learner.py, "targets"). The new transformation is read
off examples, pairs of a URL of r and a URL of the same page that s keys: it is s's
transformation with each s group replaced by the r group that holds the same text in
every example, or by the text itself when no r group does and the text never changes
(``page=1``). An r group the new transformation no longer copies is pinned in the
context to the one value the examples show, so the adopted rule never keys together two
URLs that r keeps apart, and a URL with another value there is left to the rules after
it. Checked on every example: None when no single transformation gives each its key.
"""

from __future__ import annotations

import functools

from ..rules.ruleset import CONVERSIONS, CompiledRule, Rule, RuleError, parse_transformation
from .generalize import escape


@functools.lru_cache(maxsize=4096)
def _template(transformation: str, ngroups: int) -> tuple:
    """Transformation parts as (kind, value, conversion): ("L", text, None) or ("G", n, conv)."""
    out: list[tuple[str, str | int, str | None]] = []
    for p in parse_transformation(transformation, ngroups):
        if isinstance(p, str):
            out.append(("L", p, None))
        elif isinstance(p, int):
            out.append(("G", p, None))
        else:
            out.append(("G", p[0], p[1]))
    return tuple(out)


def _merge_literals(items: list) -> tuple:
    out: list = []
    for it in items:
        if it[0] == "L" and out and out[-1][0] == "L":
            out[-1] = ("L", out[-1][1] + it[1], None)
        elif it[0] != "L" or it[1]:
            out.append(it)
    return tuple(out)


def _transformation(items: tuple, ngroups: int) -> str | None:
    """Items as a transformation string; None when "$1" + a digit would read as "$1N"."""
    out = []
    for k, (kind, value, conv) in enumerate(items):
        if kind == "L":
            out.append(value.replace("$", "$$"))
            continue
        nxt = items[k + 1] if k + 1 < len(items) else None
        if (
            conv is None
            and nxt is not None
            and nxt[0] == "L"
            and nxt[1][:1].isdigit()
            and int(f"{value}{nxt[1][0]}") <= ngroups
        ):
            return None
        out.append(f"${value}" if conv is None else f"${{{value}:{conv}}}")
    return "".join(out)


def group_spans(context: str) -> dict[int, tuple[int, int]]:
    """Capture group number -> (start, end) of its body in the regex text (rulegen's
    dialect: backslash escapes, [...] classes, (?:...) groups)."""
    spans: dict[int, tuple[int, int]] = {}
    stack: list[int] = []
    n = 0
    i, end = 0, len(context)
    while i < end:
        ch = context[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < end and context[j] == "^":
                j += 1
            if j < end and context[j] == "]":
                j += 1
            while j < end and context[j] != "]":
                j += 2 if context[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "(":
            if context.startswith("(?", i):
                stack.append(0)
            else:
                n += 1
                stack.append(n)
                spans[n] = (i + 1, -1)
        elif ch == ")" and stack:
            g = stack.pop()
            if g:
                spans[g] = (spans[g][0], i)
        i += 1
    return spans


def pin_groups(context: str, values: dict[int, str]) -> str:
    """``context`` with each capture group in ``values`` matching only that literal value
    (still a capture group, so the numbering of the others holds)."""
    spans = group_spans(context)
    out, at = [], 0
    for g in sorted(values, key=lambda g: spans[g][0]):
        start, stop = spans[g]
        out.append(context[at:start])
        out.append(escape(values[g]))
        at = stop
    out.append(context[at:])
    return "".join(out)


def adopt(r: CompiledRule, examples) -> tuple[str, str] | None:
    """(context, transformation) of r giving each of its URLs the key another rule s gives
    a duplicate of it, from ``examples``: (URL of r, s, the URL s keys) triples, one s.
    None when no single transformation gives every example its key."""
    rparts = _template(r.rule.transformation, r.ngroups)
    sparts = None
    refs: list = []  # per s group part: the r groups with its text in every example so far
    texts: list = []  # per s group part: its text, while the same in every example (else None)
    seen = []
    for url, s, other in examples:
        m = r.fullmatch(url)
        ms = s.fullmatch(other)
        if m is None or ms is None:
            return None
        groups = m.groups("")
        if sparts is None:
            sparts = _template(s.rule.transformation, s.ngroups)
            refs = [set(range(1, r.ngroups + 1)) for _ in sparts]
            texts = [None if kind == "L" else (ms.group(value) or "") for kind, value, _c in sparts]
        for k, (kind, value, conv) in enumerate(sparts):
            if kind == "L":
                continue
            text = ms.group(value) or ""
            if texts[k] != text:
                texts[k] = None
            f = CONVERSIONS[conv] if conv else str
            refs[k] = {i for i in refs[k] if groups[i - 1] and f(groups[i - 1]) == f(text)}
            if not refs[k] and texts[k] is None:
                return None  # neither a group of r nor a constant
        seen.append((url, groups, s.apply(other)))
    if sparts is None:
        return None
    items = []
    for k, (kind, value, conv) in enumerate(sparts):
        if kind == "L":
            items.append(("L", value, None))
        elif refs[k]:
            items.append(("G", min(refs[k]), conv))
        elif texts[k] is not None:
            items.append(("L", CONVERSIONS[conv](texts[k]) if conv else texts[k], None))
        else:
            return None
    shape = _merge_literals(items)
    copied = {v for kind, v, _ in shape if kind == "G"}
    pinned: dict[int, str] = {}
    for _url, groups, _want in seen:
        for kind, value, _ in rparts:
            if kind == "G" and value not in copied:
                if pinned.setdefault(value, groups[value - 1]) != groups[value - 1]:
                    return None
    transformation = _transformation(shape, r.ngroups)
    if transformation is None:
        return None
    context = pin_groups(r.rule.context, pinned) if pinned else r.rule.context
    try:
        c = CompiledRule(Rule(id=r.rule.id, hosts=r.rule.hosts, context=context, transformation=transformation))
    except RuleError:
        return None
    if any(c.apply(url) != want for url, _g, want in seen):
        return None
    return context, transformation
