"""The names learner/params.py learns one at a time, per site: what each stands for,
what a URL shows of it, how it keys URLs, and what it transfers with.

A name is a hypothesis "the page does not depend on this", about one site:
- a query parameter (``sid``, ``utm_source``): dropped (``Rule.drop_param``);
- the scheme (``SCHEME``): http read as https (``Rule.canonical_scheme``);
- a pair of hosts of the site (``PAIR`` + the two hosts): one moves to the other
  (``Rule.canonical_host``);
- a path edit: the trailing slash (``SLASH``), an empty query (``EMPTYQ``), a last
  segment such as ``index.html`` (``LASTP`` + it), the path's letter case (``CASE``),
  the query names' letter case (``QCASE``), the order of the query's parameters
  (``ORDER``) (``Rule.normalize``).

Most are evidence when they vary between URLs of one address (site and path) of a
dup-cluster: present and absent, or two values. Some every URL has, and two values are
the evidence: the scheme, the host, the trailing slash; and two observed under another
address than the URL's own: the last segment under the path before it (``/a/`` and
``/a/index.html``), the path under its lowered form (``/A`` and ``/a``), the query's
names under their lowered form (``?ID=1`` and ``?id=1``), the order of its names under
its parts sorted (``?b=2&a=1`` and ``?a=1&b=2``).

A name transfers across sites by its transfer class: itself (names compared exactly, so
``sid`` says nothing about ``id``), the ``www.`` toggle for every pair (x, www.x), and
for a parameter whose values are random tokens, the shape of those values.
"""

from __future__ import annotations

import functools
import re

from ..rules.params import (
    BARE,
    BARE_TOKENS,
    EMPTY_QUERY,
    LAST_SEGMENT,
    LOWERCASE_NAMES,
    LOWERCASE_PATH,
    SORT_QUERY,
    TRAILING_SLASH,
    apply_edits,
    drop_params,
    is_bare_token,
    query_pairs,
    sorted_query,
    to_https,
)
from ..rules.urls import escapes_normalized, lower, split_authority

SCHEME = "=scheme"  # the scheme as a name: no query parameter's name holds "="
HOST = "=host"  # the host as a name (observed)
PAIR = "=host:"  # + "a US b": the hypothesis "hosts a and b serve one page", a < b
WWW = "=host:www."  # the transfer class of every pair (x, www.x)
NUMBERED = "=host:#"  # the transfer class of pairs that differ in numbers only (img1.x, img3.x)
SLASH = "=slash"  # the path's trailing "/" as a name, values "1" and "0"
EMPTYQ = "=emptyq"  # an empty query as a name (present or absent)
BARET = "=baretok"  # the query's bare tokens as a name, valued by them (present, absent, or two of them)
LAST = "=last"  # the last path segment, observed under the path before it
LASTP = "=last:"  # + a segment: the hypothesis "the last segment <segment> can go"
CASE = "=case"  # the path's letter case, observed under the lowered path
QCASE = "=qcase"  # the query names' letter case, observed under the lowered path and names
ORDER = "=order"  # the order of the query's names, observed under the path and the sorted parts
EDITS = {
    SLASH: TRAILING_SLASH,
    EMPTYQ: EMPTY_QUERY,
    BARET: BARE_TOKENS,
    CASE: LOWERCASE_PATH,
    QCASE: LOWERCASE_NAMES,
    ORDER: SORT_QUERY,
}  # names of path edits -> the edit (and LASTP)


def edit_of(name: str) -> str | None:
    """The path edit (``Rule.normalize``) a name stands for, if it stands for one."""
    if name.startswith(LASTP):
        return LAST_SEGMENT + name[len(LASTP) :]
    return EDITS.get(name)


def observe_url(url: str, host: str, site: str) -> tuple[str, list[tuple[str, str]], str, str, str, str]:
    """What a URL shows, parsed once: its address (``site NUL`` the path without trailing
    slashes: what two URLs must share for a name's variation between them to count), its
    (name, value) pairs (the query's, and the scheme, the host, the trailing slash and an
    empty query as more), and where its last segment is observed (``site NUL`` the path
    before its last ``/``) with that segment: ``/a/`` and ``/a/index.html`` share the
    first, their segments are "" and "index.html"; its query's names, joined by ``&``
    ("" without any); and its query's parts in the order ``sort-query`` writes them, ""
    with fewer than two: two URLs of one address that list those parts in two orders
    are the evidence that their order does not matter."""
    _, _, rest = split_authority(url)
    end = len(rest)
    for ch in "?#":
        j = rest.find(ch)
        if 0 <= j < end:
            end = j
    path = rest[:end]
    cut = path.rfind("/")
    # the segment as path edits compare it (its %-escapes as light normalization writes
    # them), so a learned last-segment literal is one that can match
    where, seg = site + "\x00" + path[: max(cut, 0)], escapes_normalized(path[cut + 1 :])
    address = site + "\x00" + path.rstrip("/")
    query = query_pairs(url)
    names = "&".join(n for n, _ in query)
    order = (sorted_query(url) or "") if len(query) >= 2 else ""
    scheme = scheme_of(url)
    if scheme is None:
        return address, query, where, seg, names, order
    p, q, after = rest.partition("?")
    p = p.partition("#")[0]
    pairs = [(SCHEME, scheme), (HOST, host), (SLASH, "1" if len(p) > 1 and p.endswith("/") else "0")]
    if q and not after.partition("#")[0]:
        pairs.append((EMPTYQ, "1"))
    tokens = [n for n, v in query if v == BARE and is_bare_token(n)]
    if tokens:
        pairs.append((BARET, "&".join(tokens)))
    return address, pairs + query, where, seg, names, order


def pair_name(a: str, b: str) -> str:
    return PAIR + "\x1f".join(sorted((a, b)))


def pair_hosts(name: str) -> tuple[str, str]:
    a, _, b = name[len(PAIR) :].partition("\x1f")
    return a, b


_HEX = frozenset("0123456789abcdefABCDEF")
_TOKEN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


def token_shape(values) -> str:
    """The shape of a parameter's values when they are random tokens (session, click and
    tracking ids: 8+ characters mixing digits and letters), as a transfer class: a name
    whose values look like one another's is the same kind of parameter on every site
    ("=token:hex:32"), whatever the site calls it. Words and numbers have no shape: a
    word may select content (``lang=fr``), and so may a number (``id=123456789``)."""
    kinds, lengths = set(), set()
    for v in values:
        if v == BARE or len(v) < 8 or not (any(c.isdigit() for c in v) and any(c.isalpha() for c in v)):
            return ""
        if all(c in _HEX for c in v):
            kinds.add("hex")
        elif v.isascii() and v.isalnum():
            kinds.add("alnum")
        elif all(c in _TOKEN for c in v):
            kinds.add("b64")
        else:
            return ""
        lengths.add(len(v))
    if not kinds:
        return ""
    kind = "b64" if "b64" in kinds else "alnum" if "alnum" in kinds else "hex"
    return f"=token:{kind}:{lengths.pop() if len(lengths) == 1 else 'var'}"


_NUMBER = re.compile(r"-?[0-9]+")


def transfer_class(name: str) -> str:
    """What other sites' evidence about ``name`` says something about: the name itself;
    for a pair of hosts, the ``www.`` toggle, or hosts that differ in numbers only
    (``img1.x.com`` and ``img3.x.com``, ``ichef.x`` and ``ichef-1.x``: the numbered hosts
    of a CDN); other pairs are one site's own business;
    for the query names' case, the path's (letter case is one thing a server ignores or
    not: IIS with ASP.NET ignores both, and a site's own case twins still veto each)."""
    if name == QCASE:
        return CASE
    if name.startswith(PAIR):
        a, b = pair_hosts(name)
        if b == "www." + a or a == "www." + b:
            return WWW
        if _NUMBER.sub("", a) == _NUMBER.sub("", b):
            return NUMBERED
    return name


def scheme_of(url: str) -> str | None:
    head = lower(url[:8])
    return "https" if head.startswith("https://") else "http" if head.startswith("http://") else None


def key_of(url: str, names: list[str]) -> str:
    """The URL as crawlers read it under these names (``RuleSet``'s order: scheme first,
    parameters, path edits)."""
    https, params, edits = _reading(tuple(names))
    if https:
        url = to_https(url)
    if params:
        url = drop_params(url, params)
    return apply_edits(url, edits) if edits else url


def path_edits(names: list[str]) -> list[str]:
    """The path edits among a host's names, in their order (do not mutate: cached)."""
    return _reading(tuple(names))[2]


@functools.lru_cache(maxsize=4096)
def _reading(names: tuple[str, ...]) -> tuple[bool, frozenset[str], list[str]]:
    """What ``key_of`` does under ``names``, worked out once per list of a host's names
    (a few hundred distinct lists; key_of runs for every URL counted)."""
    edits = [e for e in map(edit_of, names) if e]
    return SCHEME in names, frozenset(n for n in names if not n.startswith("=")), edits
