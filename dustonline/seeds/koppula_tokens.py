"""Koppula et al. 2010, §2 and §3.1: a URL as key-value pairs, with basic tokenization
(§3.1.1, RFC 1738 components) and host-specific deep tokenization (§3.1.2, Alg. 1-2).

Keys (Definition 1) carry a position from the start *and* from the end, so a component
can be named either way: ``("s", x)`` is the x-th component from the start (protocol = 1,
host = 2, path components 3...), ``("e", y)`` the y-th path component from the end;
``("q", name)`` a query argument. A deep token of a component is ``(view, "i", i)`` or
``(view, "j", j)``: its index from the component's start or end, as k_(x,i,y,j) does.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from statistics import pvariance

_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]+)([^?#]*)(?:\?([^#]*))?")

#: Candidate anchors (Definition 3): runs of lower case, upper case or digits, bounded by a
#: non-alphanumeric delimiter or a unit change. One deviation: a capital followed by lower
#: case stays one anchor ("Austria", not "A" + "ustria"), as the paper's own Figure 2 needs.
_UNIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|[^A-Za-z0-9]")


@dataclass(frozen=True)
class ParsedURL:
    """Basic tokenization (§3.1.1): protocol, host, path components, query arguments."""

    comps: tuple[str, ...]  # protocol, host, path components
    query: tuple[tuple[str, str | None], ...] | None  # None: no '?'

    @property
    def qnames(self) -> tuple[str, ...] | None:
        return None if self.query is None else tuple(n for n, _ in self.query)

    def unparse(self) -> str:
        s = self.comps[0] + "://" + self.comps[1] + "".join("/" + c for c in self.comps[2:])
        if self.query is not None:
            s += "?" + "&".join(n if v is None else f"{n}={v}" for n, v in self.query)
        return s


def parse_url(url: str) -> ParsedURL | None:
    """None for URLs this representation cannot rebuild exactly (fragments, repeated or
    empty argument names): a rule learned from them would not reproduce them."""
    m = _URL.fullmatch(url)
    if m is None:
        return None
    scheme, host, path, query = m.groups()
    comps = (scheme, host) + (tuple(path[1:].split("/")) if path else ())
    args = None
    if query is not None:
        args = tuple((a.partition("=")[0], a.partition("=")[2] if "=" in a else None) for a in query.split("&"))
        names = [n for n, _ in args]
        if "" in names or len(set(names)) != len(names):
            return None
    p = ParsedURL(comps, args)
    return p if p.unparse() == url else None


def comp_view(x: int, n: int) -> tuple:
    """The nearer name of component x (1-based) of n: from the start for protocol, host and
    the first half of the path, from the end otherwise (what lets `index.html` as the last
    component be one key across URLs of different depth, §2 "Alignment")."""
    if x <= 2:
        return ("s", x)
    y = n - x + 1
    return ("s", x) if x <= y else ("e", y)


def deep_view(view: tuple, i: int, m: int) -> tuple:
    """The nearer name of deep token i (1-based) of m within the component named ``view``."""
    j = m - i + 1
    return (view, "i", i) if i <= j else (view, "j", j)


# ---------------------------------------------------------------- deep tokenization
@dataclass(frozen=True)
class DeepParams:
    """SelectAnchors (Alg. 2) thresholds. The paper names the features (token coverage,
    unique candidate anchor count, frequency variance) but gives no numbers; these are ours."""

    min_token_coverage: float = 0.9  # share of the node's tokens a selected cluster covers
    min_anchor_tokens: int = 2  # an anchor recurs; a value seen once is data, not an anchor
    max_unique_anchors: int = 4  # "create least number of child patterns"
    max_freq_cv2: float = 1.0  # low frequency variance: variance / mean^2
    max_depth: int = 8  # d_max of Lemma 1


def _candidates(token: str, segs: list[tuple[str, str]]):
    """FindCandidateAnchors: (cluster key, anchor, unit index) of every candidate anchor in
    the star segments; the cluster key is the star's ordinal, start and end delimiter
    ("" for a unit change, ^/$ at the ends) and type (Alg. 2 line 1)."""
    pos, star = 0, 0
    for kind, text in segs:
        if kind == "*":
            units = _UNIT.findall(text)
            p = pos
            for u in units:
                if u[0].isascii() and u[0].isalnum():
                    before = token[p - 1] if p > 0 else "^"
                    after = token[p + len(u)] if p + len(u) < len(token) else "$"
                    before = "" if before.isascii() and before.isalnum() else before
                    after = "" if after.isascii() and after.isalnum() else after
                    yield (star, before, after, "n" if u.isdigit() else "a"), u
                p += len(u)
            star += 1
        pos += len(text)


def _select_anchors(tokens: list[str], segs: dict[str, list], P: DeepParams) -> set[tuple]:
    """SelectAnchors (Alg. 2): cluster candidate anchors, keep the clusters that cover most
    tokens with the fewest distinct anchors of even frequency; of those, the ones with the
    least unique anchors (the paper's first step on Figure 2 takes {Austria} and {html})."""
    clusters: dict[tuple, Counter] = {}
    cover: dict[tuple, set] = {}
    for t in tokens:
        seen = set()
        for key, a in _candidates(t, segs[t]):
            if (key, a) in seen:
                continue
            seen.add((key, a))
            clusters.setdefault(key, Counter())[a] += 1
            cover.setdefault(key, set()).add(t)
    good = []
    for key in sorted(clusters):
        freq = clusters[key]
        counts = list(freq.values())
        mean = sum(counts) / len(counts)
        if (
            len(cover[key]) >= P.min_token_coverage * len(tokens)
            and len(freq) <= P.max_unique_anchors
            and min(counts) >= P.min_anchor_tokens
            and pvariance(counts) <= P.max_freq_cv2 * mean * mean
        ):
            good.append((len(freq), key))
    if not good:
        return set()
    least = min(u for u, _ in good)
    return {(key, a) for u, key in good if u == least for a in clusters[key]}


def _refine(token: str, segs: list[tuple[str, str]], chosen: set[tuple]) -> list[tuple[str, str]]:
    """GenerateChildPatterns for one token: selected anchors and the delimiters next to
    them leave the star segments they were in."""
    cands = list(_candidates(token, segs))
    out: list[tuple[str, str]] = []
    ci = 0
    for kind, text in segs:
        if kind != "*":
            out.append((kind, text))
            continue
        units = _UNIT.findall(text)
        marks = []
        for u in units:
            if u[0].isascii() and u[0].isalnum():
                key, a = cands[ci]
                ci += 1
                marks.append("a" if (key, a) in chosen else "*")
            else:
                marks.append("*")
        for k, u in enumerate(units):  # delimiters bounding an anchor become pattern delimiters
            if marks[k] == "*" and not (u[0].isascii() and u[0].isalnum()):
                if (k > 0 and marks[k - 1] == "a") or (k + 1 < len(units) and marks[k + 1] == "a"):
                    marks[k] = "d"
        region: list[tuple[str, str]] = []
        for u, mk in zip(units, marks):
            if mk == "*" and region and region[-1][0] == "*":
                region[-1] = ("*", region[-1][1] + u)
            else:
                region.append((mk, u))
        out.extend(region)
    return out


def _pattern(segs: list[tuple[str, str]]) -> tuple:
    return tuple("*" if k == "*" else t for k, t in segs)


def deep_tokenize(values, P: DeepParams | None = None) -> dict[str, tuple[str, ...]]:
    """DeepTokenize (Alg. 1) over the distinct values of one key of one host: value -> its
    deep tokens. Starts from the pattern ``*`` and refines it while SelectAnchors finds
    anchors; at a leaf pattern each anchor, delimiter and star match is a deep token
    (FindDeepTokens), star matches split further at non-alphanumeric delimiters only."""
    P = P or DeepParams()
    toks = sorted(set(values))
    segs = {t: [("*", t)] for t in toks}  # the pattern `*`
    out: dict[str, tuple[str, ...]] = {}
    stack = [(toks, 0)]
    while stack:
        group, depth = stack.pop()
        chosen = _select_anchors(group, segs, P) if depth < P.max_depth and len(group) > 1 else set()
        if not chosen:
            for t in group:
                deep: list[str] = []
                for kind, text in segs[t]:
                    deep.extend(re.findall(r"[A-Za-z0-9]+|[^A-Za-z0-9]", text) if kind == "*" else [text])
                out[t] = tuple(d for d in deep if d)
            continue
        children: dict[tuple, list[str]] = {}
        for t in group:
            segs[t] = _refine(t, segs[t], chosen)
            children.setdefault(_pattern(segs[t]), []).append(t)
        for pat in sorted(children, reverse=True):
            stack.append((children[pat], depth + 1))
    return out
