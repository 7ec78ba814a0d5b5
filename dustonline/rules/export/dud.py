"""Zyte's duplicate-url-discarder (Scrapy): the rules as its JSON rule file.

What duplicate-url-discarder 0.3 does with the file (read in its source):
``UrlCanonicalizer`` sorts the rules by ``order`` and applies every rule whose
``urlPattern`` (url-matcher) matches the request URL, each to the previous one's output;
``Fingerprinter`` then fingerprints the request with that URL by Scrapy's default
fingerprinter (``w3lib.url.canonicalize_url``: sorted query, escapes normalized, no
fragment). Its processors:

- ``queryRemoval``: ``url_query_cleaner(url, args, remove=True, unique=False,
  keep_fragments=True)``, every query part whose name (before its ``=``) is one of the
  args is removed, the others kept in order. A parameter rule (``drop_param``) is exactly
  that on its hosts.
- ``subpathRemoval``: removes the path segments at the given positions, for every URL
  its pattern matches. A rewrite rule fits only when it does just that, at position 0,
  and its context accepts every URL of its hosts under that segment: a url-matcher pattern
  (host and path prefix, case-insensitive) cannot carry the rest of a context, and a
  wider rule would merge pages the rule never merged.
- ``normalizer`` (www. and trailing slashes from every URL) and ``queryRemovalExcept``
  express no dustonline rule.

Host scope: url-matcher's pattern ``host/`` matches the host and ``www.`` + host (any
path), so a rule lists ``host/`` for each of its hosts and excludes ``www.host/`` when
that host is not one of them. Everything else (scheme rules, host rules, other rewrite
rules, path edits) is skipped with the reason.

Parameter rules of every host (``hosts: ["*"]``) are a universal rule (an empty
``include``). ``UrlCanonicalizer`` applies universal rules only to a URL that no rule of
a domain matches, and ignores their ``exclude``; so every host the file names, and every
excepted host, gets a ``queryRemoval`` of its own that holds the every-host names it is
not excepted from (an empty one, for a host excepted from all, only keeps the universal
rule off it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ..params import SORT_QUERY
from ..pattern import Alt, Chars, Group, Repeat, Seq
from ..pattern import check as check_pattern
from ..ruleset import ACTIVE, Rule, RuleSet, excepted_hosts, is_every_host, parse_transformation
from . import Export, Skipped, as_indexed

ORDER = 100  # every exported rule; their processors commute (disjoint hosts or parameters)


def export(rules: Sequence[Rule]) -> Export:
    """A JSON array of duplicate-url-discarder rules (``DUD_LOAD_RULE_PATHS``)."""
    rs = RuleSet(r for r in as_indexed(rules) if r.status == ACTIVE)
    skipped = [Skipped(rid, f"refused by RuleSet: {why}") for rid, why in rs.refused_rules]
    drops: dict[str, list[str]] = {}  # host -> names, in RuleSet order
    every: dict[str, frozenset[str]] = {}  # name -> its excepted hosts (the first rule of a name holds)
    named: set[str] = set()  # hosts a rule of the file names
    out: list[dict] = []
    for r in rs.rules():
        if is_every_host(r):
            every.setdefault(str(r.drop_param), excepted_hosts(r))
        elif r.drop_param:
            for h in r.hosts:
                names = drops.setdefault(h.lower(), [])
                if r.drop_param not in names:
                    names.append(r.drop_param)
        elif r.canonical_scheme:
            skipped.append(
                Skipped(r.id, "scheme rule: duplicate-url-discarder has no processor that changes the scheme")
            )
        elif r.normalize == SORT_QUERY:
            skipped.append(
                Skipped(r.id, "sort-query: the fingerprinter (w3lib canonicalize_url) sorts every URL's query already")
            )
        elif r.normalize:
            skipped.append(
                Skipped(
                    r.id,
                    f"path edit {r.normalize!r}: duplicate-url-discarder removes path segments by position only, "
                    "and its normalizer strips www. and trailing slashes from every URL at once",
                )
            )
        elif r.canonical_host:
            skipped.append(
                Skipped(
                    r.id,
                    "host rule: no duplicate-url-discarder processor moves a URL to another host "
                    "(its normalizer strips www. and trailing slashes from every URL)",
                )
            )
        else:
            try:
                out += _subpath_rules(r)
            except ValueError as e:
                skipped.append(Skipped(r.id, str(e)))
            else:
                named.update(h.lower() for h in r.hosts)
    if every:
        out.append({"args": sorted(every), "order": ORDER, "processor": "queryRemoval", "urlPattern": {"include": []}})
        for h in sorted(named | set(drops) | {h for exc in every.values() for h in exc}):
            names = drops.setdefault(h, [])
            names += [n for n in sorted(every) if h not in every[n] and n not in names]
    by_names: dict[tuple[str, ...], list[str]] = {}
    for host, names in drops.items():
        by_names.setdefault(tuple(names), []).append(host)
    for dropped, hosts in sorted(by_names.items(), key=lambda kv: sorted(kv[1])):
        out.append(
            {"args": list(dropped), "order": ORDER, "processor": "queryRemoval", "urlPattern": _pattern(sorted(hosts))}
        )
    return Export(json.dumps(out, ensure_ascii=False, indent=2, sort_keys=True) + "\n", skipped)


def _pattern(hosts: list[str], path: str = "/") -> dict:
    """url-matcher patterns of exactly ``hosts`` (``h/`` also matches ``www.h``)."""
    include = [h + path for h in hosts]
    exclude = [f"www.{h}{path}" for h in hosts if f"www.{h}" not in hosts]
    return {"include": include, "exclude": exclude} if exclude else {"include": include}


def _subpath_rules(rule: Rule) -> list[dict]:
    """The rule as ``subpathRemoval`` of segment 0, or ValueError saying why it does not
    fit: its context must be ``scheme://host`` (captured or literal, no '/' but the two
    of '://'), then the segment as an optional or required literal (or literals),
    then ``/(.*)``, and the transformation the context with that segment left out."""
    nope = "a rewrite rule: duplicate-url-discarder cannot rewrite URLs, only remove query parameters or path segments"
    items = _items(check_pattern(rule.context).root)
    cut = [i for i, it in enumerate(items) if _segments(it) is not None]
    if len(cut) != 1:
        raise ValueError(nope)
    k = cut[0]
    before, after = items[:k], items[k + 1 :]
    rest = after[1] if len(after) == 2 else None
    inner = _unwrap(rest.node) if isinstance(rest, Group) else None
    if not (
        len(after) == 2
        and _literal(after[0]) == "/"
        and isinstance(rest, Group)
        and rest.index is not None
        and isinstance(inner, Repeat)
        and (inner.lo, inner.hi) == (0, None)
        and isinstance(inner.node, Chars)
        and inner.node.ivs == ((0, 9), (11, 0x10FFFF))
    ):
        raise ValueError(f"{nope}; a path segment removal fits only when the rest of the URL is '/(.*)'")
    want: list[str | int] = []
    slashes = 0
    for it in before + after:
        ch = _literal(it)
        if ch is not None:
            want.append(ch)
            slashes += ch == "/"
        elif isinstance(it, Group) and it.index is not None and not _may_hold(it, "/"):
            want.append(it.index)
        elif it is rest and rest.index is not None:
            want.append(rest.index)
        else:
            raise ValueError(nope)
    if slashes != 3:  # '://' and the '/' after the segment: the segment is the path's first
        raise ValueError(f"{nope}; the removed segment is not the first of the path")
    got = parse_transformation(rule.transformation, check_pattern(rule.context).groups)
    if _joined(want) != _joined(got):
        raise ValueError(f"{nope}; the transformation does more than leave a segment out")
    segments = _segments(items[k])
    assert segments is not None
    for scheme in ("http", "https"):
        for h in rule.hosts:
            for seg in segments:
                if re.fullmatch(rule.context, f"{scheme}://{h.lower()}{seg}/x", re.ASCII) is None:
                    raise ValueError(f"{nope}; its context does not take every {scheme} URL of {h} under {seg}/")
    hosts = sorted({h.lower() for h in rule.hosts})
    out = []
    for seg in segments:
        out.append(
            {"args": [0], "order": ORDER, "processor": "subpathRemoval", "urlPattern": _pattern(hosts, seg + "/*")}
        )
    return out


def _unwrap(node):
    while isinstance(node, Seq) and len(node.items) == 1:
        node = node.items[0]
    return node


def _items(node) -> list:
    if isinstance(node, Seq):
        return node.items
    return [node]


def _literal(node) -> str | None:
    """The one character a node matches, or None."""
    if isinstance(node, Chars) and len(node.ivs) == 1 and node.ivs[0][0] == node.ivs[0][1]:
        return chr(node.ivs[0][0])
    return None


def _may_hold(node, ch: str) -> bool:
    c = ord(ch)
    if isinstance(node, Chars):
        return any(lo <= c <= hi for lo, hi in node.ivs)
    if isinstance(node, Seq):
        return any(_may_hold(i, ch) for i in node.items)
    if isinstance(node, (Group, Repeat)):
        return _may_hold(node.node, ch)
    return any(_may_hold(b, ch) for b in node.branches)


def _segments(node) -> list[str] | None:
    """The literal path segments ('/print') of an uncaptured ``(?:/seg|...)`` or
    ``(?:/seg|...)?``, each letter taken in both cases (url-matcher compares paths
    case-insensitively), or None."""
    node = _unwrap(node)
    if isinstance(node, Repeat) and (node.lo, node.hi) == (0, 1) and not node.lazy:
        node = _unwrap(node.node)
    if not isinstance(node, Group) or node.index is not None:
        return None
    body = _unwrap(node.node)
    branches = body.branches if isinstance(body, Alt) else [body]
    out = []
    for b in branches:
        text = []
        for it in _items(b):
            ch = _literal(it)
            if ch is not None and ch.isalpha():
                return None  # a letter in one case only: url-matcher would take the other too
            ch = ch if ch is not None else _either_case(it)
            if ch is None:
                return None
            text.append(ch)
        seg = "".join(text)
        if not seg.startswith("/") or len(seg) < 2 or "/" in seg[1:] or any(c in seg for c in "?#*|"):
            return None
        out.append(seg)
    return out


def _either_case(node) -> str | None:
    """The ASCII letter of a class ``[Pp]``, or None."""
    if isinstance(node, Chars) and len(node.ivs) == 2 and all(lo == hi for lo, hi in node.ivs):
        up, low = chr(node.ivs[0][0]), chr(node.ivs[1][0])
        if up.isascii() and up.isupper() and low == up.lower():
            return low
    return None


def _joined(parts: Sequence) -> list:
    """Adjacent literal characters joined, so two spellings of one output compare equal."""
    out: list = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        else:
            out.append(p)
    return out
