"""Koppula et al. 2010 rules in our contract (rules.py): a generalized context (key ->
value, `*` or ⊥) becomes a full-match regex, its transformation a `$N` template, with
``${N:lower}``/``${N:upper}`` for the paper's value conversions (Definition 2).

Layout: the components the context or transformation names from the start, then one
captured run of any number of components, kept as it is, then the components named from
the end (the paper's k_(x,-)/k_(-,y) keys, §2 "Alignment"). When the two ends overlap on
sources of one length, that length is fixed and every component is named from both ends.
A component whose value is `*` but whose deep tokens are partly fixed matches those tokens
(the paper's ``friends-*``, §2).
"""

from __future__ import annotations

import re

from ..rules.ruleset import CONVERSIONS as CONVERT
from ..rules.ruleset import parse_transformation
from .koppula_tree import ABSENT, STAR

_ANY = {"scheme": "[A-Za-z][A-Za-z0-9+.\\-]*", "host": "[^/?#]+", "path": "[^/?#]*", "query": "[^&#]*"}


def _wild(values: list[str], where: str) -> str:
    """A class wide enough for every value seen at a generalized deep token."""
    if values and all(v.isascii() and v.isdigit() for v in values):
        return "[0-9]+"
    if values and all(v.isascii() and v.isalpha() for v in values):
        return "[A-Za-z]+"
    if values and all(v.isascii() and v.isalnum() for v in values):
        return "[A-Za-z0-9]+"
    return "[^/?#]+?" if where == "path" else "[^&#]+?"


class _Builder:
    def __init__(self):
        self.rx: list[str] = []
        self.groups = 0
        self.attrs: dict = {}  # key -> ("lit", value) | ("g", group number)

    def open(self) -> int:
        self.groups += 1
        self.rx.append("(")
        return self.groups

    def slot(self, views: list, ctx: dict, deeps: list[tuple[str, ...]], where: str) -> str | None:
        """One component (or query value) named by ``views``: its regex is appended, the
        names it answers to recorded; returns its output expression, None on a conflict."""
        lits = {ctx[v] for v in views if ctx.get(v, STAR) not in (STAR, ABSENT)}
        if len(lits) > 1:
            return None
        if lits:
            val = lits.pop()
            self.rx.append(re.escape(val))
            for v in views:
                self.attrs[v] = ("lit", val)
            for i, d in enumerate(deeps[0] if deeps and len(deeps[0]) > 1 else (), 1):
                for v in views:
                    self.attrs[(v, "i", i)] = self.attrs[(v, "j", len(deeps[0]) - i + 1)] = ("lit", d)
            return val.replace("$", "$$")
        m = len(deeps[0]) if deeps else 0
        deep_fixed = m > 1 and all(len(d) == m for d in deeps)
        dlits: dict[int, str] = {}
        if deep_fixed:
            for i in range(1, m + 1):
                vals = {
                    ctx[k]
                    for v in views
                    for k in ((v, "i", i), (v, "j", m - i + 1))
                    if ctx.get(k, STAR) not in (STAR, ABSENT)
                }
                if len(vals) > 1:
                    return None
                if vals:
                    dlits[i] = vals.pop()
        g = self.open()
        for v in views:
            self.attrs[v] = ("g", g)
        if not dlits:
            self.rx.append(_ANY[where] + ")")
            return f"${g}"
        for i in range(1, m + 1):
            keys = [(v, "i", i) for v in views] + [(v, "j", m - i + 1) for v in views]
            if i in dlits:
                self.rx.append(re.escape(dlits[i]))
                for k in keys:
                    self.attrs[k] = ("lit", dlits[i])
            else:
                dg = self.open()
                self.rx.append(_wild([d[i - 1] for d in deeps], where) + ")")
                for k in keys:
                    self.attrs[k] = ("g", dg)
        self.rx.append(")")
        return f"${g}"

    def expr(self, pieces) -> str | None:
        out = []
        for p in pieces:
            if p[0] == "lit":
                out.append(p[1].replace("$", "$$"))
                continue
            a = self.attrs.get(p[1])
            if a is None:
                return None
            if p[0] == "ref":
                out.append(a[1].replace("$", "$$") if a[0] == "lit" else f"${a[1]}")
            else:
                out.append(CONVERT[p[2]](a[1]).replace("$", "$$") if a[0] == "lit" else f"${{{a[1]}:{p[2]}}}")
        return "".join(out)


def _class_positions(t) -> tuple[int, int]:
    """The furthest component the transformation names from the start and from the end."""
    a = b = 0
    edit, query = t
    refs = []
    if edit is not None:
        side, k, ln = edit[0]
        if side == "s":
            a = k + ln
        else:
            b = k + ln
        refs = [p for comp in edit[1] for p in comp]
    if query not in (None, "copy"):
        refs += [p for _, _, pcs in query for p in pcs]
    for p in refs:
        if p[0] == "lit":
            continue
        key = p[1]
        view = key[0] if isinstance(key[0], tuple) else key
        if view[0] == "s":
            a = max(a, view[1])
        elif view[0] == "e":
            b = max(b, view[1])
    return a, b


def translate(ctx: dict, t, sources: list) -> tuple[str, str] | None:
    """(context regex, transformation) for generalized context ``ctx`` and transformation
    ``t`` over the pair-wise ``sources`` (``Tok``s) it generalizes; None when our contract
    cannot say it (e.g. both ends fixed past the shortest source)."""
    # a node's majority value outvotes some of its sources (koppula_tree.generalize): the
    # rule is the node's path, so those sources are not its examples
    fixed = [(k, v) for k, v in ctx.items() if v not in (STAR, ABSENT)]
    sources = [s for s in sources if all(s.attrs.get(k) == v for k, v in fixed)]
    if not sources:
        return None
    lens = [len(s.parsed.comps) for s in sources]
    b = _Builder()
    slots: list[tuple[str, str]] = []  # ("comp", expr) | ("blob", expr)
    ta, tb = _class_positions(t)
    A = max([2, ta] + [_view(k)[1] for k, v in ctx.items() if _fixed_comp(k, v, "s")])
    B = max([tb] + [_view(k)[1] for k, v in ctx.items() if _fixed_comp(k, v, "e")])
    if min(lens) == max(lens) and A + B > lens[0]:  # both ends fixed: one length
        n = lens[0]
        for x in range(1, n + 1):
            views = [("s", x)] + ([("e", n - x + 1)] if x >= 3 else [])
            if x == 2:
                b.rx.append("://")
            elif x > 2:
                b.rx.append("/")
            e = b.slot(
                views, ctx, [s.deep_of(x) for s in sources], "scheme" if x == 1 else "host" if x == 2 else "path"
            )
            if e is None:
                return None
            slots.append(("comp", e))
        prefix = suffix = n
    else:
        if A + B > min(lens):
            return None
        for x in range(1, A + 1):
            if x == 2:
                b.rx.append("://")
            elif x > 2:
                b.rx.append("/")
            e = b.slot(
                [("s", x)], ctx, [s.deep_of(x) for s in sources], "scheme" if x == 1 else "host" if x == 2 else "path"
            )
            if e is None:
                return None
            slots.append(("comp", e))
        g = b.open()
        b.rx.append("(?:/[^/?#]*)*)")
        slots.append(("blob", f"${g}"))
        for y in range(B, 0, -1):
            b.rx.append("/")
            e = b.slot([("e", y)], ctx, [s.deep_of(len(s.parsed.comps) - y + 1) for s in sources], "path")
            if e is None:
                return None
            slots.append(("comp", e))
        prefix, suffix = A, B
    qshape = sources[0].qshape
    qexprs = []
    if qshape is not None:
        b.rx.append(r"\?")
        for k, (name, has_eq) in enumerate(qshape):
            if k:
                b.rx.append("&")
            b.rx.append(re.escape(name))
            if not has_eq:
                qexprs.append(name)
                continue
            b.rx.append("=")
            e = b.slot([("q", name)], ctx, [s.deep_of(name) for s in sources], "query")
            if e is None:
                return None
            qexprs.append(f"{name}={e}")
    # ---- output
    edit, query = t
    if edit is not None:
        (side, k, ln), mids = edit
        if side == "s":
            lo = k
        elif suffix >= k + ln:
            lo = len(slots) - k - ln
        else:
            return None
        if side == "s" and k + ln > prefix:
            return None
        new = []
        for comp in mids:
            e = b.expr(comp)
            if e is None:
                return None
            new.append(("comp", e))
        slots = slots[:lo] + new + slots[lo + ln :]
    if len(slots) < 2 or slots[0][0] != "comp" or slots[1][0] != "comp":
        return None
    out = slots[0][1] + "://" + slots[1][1]
    for kind, e in slots[2:]:
        out += ("/" + e) if kind == "comp" else e
    if query == "copy":
        if qshape is not None:
            out += "?" + "&".join(qexprs)
    elif query is not None:
        args = []
        for name, has_eq, pieces in query:
            if not has_eq:
                args.append(name)
                continue
            e = b.expr(pieces)
            if e is None:
                return None
            args.append(f"{name}={e}")
        out += "?" + "&".join(args)
    rx = "".join(b.rx)
    try:
        parse_transformation(out, b.groups)
    except ValueError:
        return None
    return rx, out  # the caller checks it maps its pair-wise sources to their targets


def _fixed_comp(key, value, side: str) -> bool:
    """A component (or one of its deep tokens) the context fixes, named from ``side``."""
    if value in (STAR, ABSENT):
        return False
    return _view(key)[0] == side


def _view(key) -> tuple:
    """The component a key names: itself, or the component of a deep token."""
    return key[0] if isinstance(key[0], tuple) else key
