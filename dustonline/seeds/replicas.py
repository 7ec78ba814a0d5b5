"""Cho, Shivakumar & Garcia-Molina, "Finding replicated web collections" (SIGMOD 2000) as a
batch learner: mirrored sites and directories become host-alias and path-prefix rules.

Why a learner of its own: per-site rules (DustLin, the online learner) generalize URL pairs
of one dup-cluster at a time; a mirror of a whole site on another host or domain is one fact
about two *collections*, and the paper finds it from the pages and the links between them.

In the paper's terms:

1. Page similarity (§2.1, Def. 4): ST(p, q) = same digest, or simhashes within
   ``cfg.clustering.simhash_distance`` bits (``batch.cluster_events``). Pages are the distinct
   (lightly normalized) URLs of successful fetches.
2. Trivial clusters (§3, Fig. 6a): the dup-clusters. One larger than
   ``cfg.learning.max_cluster_urls`` (a soft 404, a shared image) is left out, like the
   paper's "noise" (§5.1).
3. Cluster growing (§3.1, Fig. 9): for each pair of trivial clusters joined by a link, the
   LinkSummary ``|R_i|, s_ij, d_ij, |R_j|`` from the events' ``links``; the pair merges when
   ``|R_i| = s_ij = d_ij = |R_j|`` or, with ``extended`` (§4, partial mirrors),
   ``|R_i| = s_ij >= d_ij = |R_j|``; UNION-FIND of the merged pairs gives the similar clusters.
4. Noise (§5.1): similar clusters with fewer than ``min_collection_size`` pages are dropped.
5. Collections at one site (§5.1, "modified to consider only collections at a single web
   site"): within a similar cluster, two copies of a page on hosts A and B at paths
   ``p + s`` and ``q + s`` (s the longest common suffix starting at a ``/``) say that
   collection (A, p) is a replica of (B, q); per pair of hosts the prefix pair most of the
   cluster's pages agree on is the collection pair.
6. Replicas of one collection are grouped (UNION-FIND again, so a collection mirrored at n
   sites is one cluster of cardinality n); the canonical replica is the one with most
   incoming links from other hosts (§3.1's "more natural starting point"), then most pages,
   then the shorter prefix, then the one seen first. Every other replica gets one rule:
   ``^https?://mirror\\.example\\.org/v1(/.*)$ -> https://example.org$1`` (host alias when
   both prefixes are empty). ``hosts`` = the mirror's host.

Without links (``mode="paths"``, and ``"auto"`` when fewer than ``min_link_share`` of the
pages carry links, i.e. most streams today) step 3 cannot run: the path correspondence of
step 5 stands in for the link evidence (a "virtual link": every page of R_i has one
counterpart at the corresponding path), so a collection pair is accepted when at least
``min_collection_size`` trivial clusters place their copies at ``p + s`` / ``q + s``. This
finds mirrors whose URLs keep their paths (host aliases, mirrored directories); it cannot
tell a linked collection from a pile of unrelated identical files, so it leans on the size
threshold and on the break-point check below.

Deviations, and why:
- Break points (§2.2, Fig. 3c): the paper splits a collection at a page that has no similar
  counterpart. A rewrite rule cannot be split, so instead a collection pair is rejected when
  more than ``max_break_share`` of the paths fetched on both sides hold different content
  (the rule would merge distinct pages). Default 0, the paper's "all pages mapped".
- Transitive similarity (Def. 4) is as transitive as ``ClusterIndex`` is: a page joins the
  first cluster it matches, clusters are not unioned afterwards.
- Pages whose copies sit at unrelated paths on the two hosts (a mirror that renamed its
  files) are found as a similar cluster but cannot be written as a prefix rule; they are
  left out.
- Chaining: a rule on the mirror maps to the canonical replica's URL as it is, so other
  DUST on that URL (a session id) is not removed by this rule (rules.py: no chaining).
  Nested prefixes on one host are kept apart by a negative lookahead, so the more specific
  rule decides whatever the rule order.
- Chunk fingerprints with threshold T (§2.1) are replaced by the events' digest/simhash.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ..config import Config
from ..events.event import FetchEvent
from ..hashing import short_id
from ..learner.induce import escape, escape_repl
from ..rules.ruleset import ACTIVE, Rule, rule_order
from ..rules.urls import host_of, light_normalize, split_authority
from .dustlin import cluster_events

Collection = tuple[str, str]  # (host, path prefix): "" is the whole host
Pair = tuple[Collection, Collection]  # ordered: a < b


@dataclass(frozen=True)
class ReplicaParams:
    """Parameters of the cluster growing algorithm; defaults as in the paper."""

    extended: bool = True  # §4: extended clusters (partial mirrors); §5.1 ran the extended algorithm
    min_collection_size: int = 10  # §5.1: "noise clusters ... less than 10 pages in their collections"
    mode: str = "auto"  # "links" (§3), "paths" (no links: path correspondence), "auto"
    min_link_share: float = 0.5  # ours: "auto" uses links when this share of pages carries them
    max_break_share: float = 0.0  # ours (§2.2 break points): share of co-fetched paths with other content


class _UnionFind:
    """Classical UNION-FIND [CLR91] (Fig. 9 step 5); the smaller key is the root, so the
    result does not depend on the order of unions."""

    def __init__(self) -> None:
        self.parent: dict = {}

    def find(self, x):
        p = self.parent.setdefault(x, x)
        while p != x:
            gp = self.parent[p]
            self.parent[x] = gp
            x, p = p, gp
        return x

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            lo, hi = (ra, rb) if ra < rb else (rb, ra)
            self.parent[hi] = lo

    def groups(self) -> dict:
        out: dict = defaultdict(list)
        for x in sorted(self.parent):
            out[self.find(x)].append(x)
        return out


def prefix_pair(a: str, b: str) -> tuple[str, str] | None:
    """(p, q) with a = p + s, b = q + s and s the longest common suffix that starts at a
    ``/`` (a segment boundary); None when there is none or a prefix reaches into the query."""
    n = min(len(a), len(b))
    k = 0
    while k < n and a[-1 - k] == b[-1 - k]:
        k += 1
    if k == 0:
        return None
    j = a.find("/", len(a) - k)
    if j < 0:
        return None
    s = len(a) - j
    p, q = a[: len(a) - s], b[: len(b) - s]
    if "?" in p or "?" in q:
        return None
    return p, q


class _Pages:
    """Pages (distinct normalized URLs), their trivial clusters and where they live."""

    def __init__(self, events: list[FetchEvent], cfg: Config):
        limit = cfg.learning.max_cluster_urls
        self.cid: dict[str, str] = {}  # page -> trivial cluster
        self.members: dict[str, list[str]] = {}  # trivial cluster -> pages
        for c, urls in sorted(cluster_events(events, cfg).items()):
            if len(urls) > limit:
                continue  # noise: a soft 404, a shared image
            pages = []
            for u in urls:
                n = light_normalize(u)
                if n not in self.cid:
                    self.cid[n] = c
                    pages.append(n)
            if pages:
                self.members[c] = pages
        self.first: dict[str, int] = {}  # page -> first fetch (event index)
        self.links: dict[str, set[str]] = {}  # page -> fetched pages it links to
        self.loc: dict[str, tuple[str, str, str]] = {}  # page -> (scheme, host, rest)
        for i, ev in enumerate(events):
            if not ev.teaches:
                continue
            n = light_normalize(ev.url)
            if n not in self.cid:
                continue
            self.first.setdefault(n, i)
            if ev.links is not None:
                out = self.links.setdefault(n, set())
                for link in ev.links:
                    t = light_normalize(link)
                    if t in self.cid and t != n:
                        out.add(t)
        self.by_host: dict[str, dict[str, str]] = defaultdict(dict)  # host -> rest -> cluster
        self.on_host: dict[str, list[str]] = defaultdict(list)  # host -> pages, first seen first
        for n in sorted(self.cid, key=lambda n: (self.first.get(n, len(events)), n)):
            scheme, _, rest = split_authority(n)
            host = host_of(n)
            self.loc[n] = (scheme, host, rest)
            self.by_host[host].setdefault(rest, self.cid[n])
            self.on_host[host].append(n)

    def link_share(self) -> float:
        return len(self.links) / len(self.cid) if self.cid else 0.0


def _pairs_of(pages: list[str], loc) -> set[Pair]:
    """Collection pairs the copies of one trivial cluster testify to (step 5)."""
    out: set[Pair] = set()
    for i in range(len(pages)):
        _, ha, ra = loc[pages[i]]
        for j in range(i + 1, len(pages)):
            _, hb, rb = loc[pages[j]]
            pq = prefix_pair(ra, rb)
            if pq is None:
                continue
            a, b = (ha, pq[0]), (hb, pq[1])
            if a != b:
                out.add((a, b) if a < b else (b, a))
    return out


def grow_clusters(
    members: dict[str, list[str]], cid: dict[str, str], links: dict[str, set[str]], extended: bool = True
) -> dict[str, list[str]]:
    """Fig. 9: LinkSummary of every linked pair of trivial clusters, the merge condition,
    UNION-FIND. Returns similar clusters (root -> its trivial clusters), singletons included."""
    src: dict[tuple[str, str], set[str]] = defaultdict(set)
    dst: dict[tuple[str, str], set[str]] = defaultdict(set)
    for page in sorted(links):
        ci = cid[page]
        for target in links[page]:
            cj = cid[target]
            if cj != ci:
                src[ci, cj].add(page)
                dst[ci, cj].add(target)
    uf = _UnionFind()
    for c in members:
        uf.find(c)
    for ci, cj in sorted(src):
        a, s, d, b = len(members[ci]), len(src[ci, cj]), len(dst[ci, cj]), len(members[cj])
        if a == s == d == b or (extended and a == s >= d == b):  # §3.1; §4 extended
            uf.union(ci, cj)
    return uf.groups()


def _candidate_pairs(pg: _Pages, P: ReplicaParams, links_mode: bool) -> dict[Pair, set[str]]:
    """Collection pair -> the trivial clusters that support it, before the break-point check."""
    out: dict[Pair, set[str]] = {}
    if not links_mode:
        support: dict[Pair, set[str]] = defaultdict(set)
        for c in sorted(pg.members):
            for pair in _pairs_of(pg.members[c], pg.loc):
                support[pair].add(c)
        return {k: v for k, v in support.items() if len(v) >= P.min_collection_size}
    for _, cluster in sorted(grow_clusters(pg.members, pg.cid, pg.links, P.extended).items()):
        if len(cluster) < P.min_collection_size:
            continue
        support = defaultdict(set)
        for c in cluster:
            for pair in _pairs_of(pg.members[c], pg.loc):
                support[pair].add(c)
        best: dict[tuple[str, str], Pair] = {}  # per pair of hosts: the prefix pair most pages agree on
        for pair in sorted(support):
            hosts = (pair[0][0], pair[1][0])
            cur = best.get(hosts)
            if cur is None or _better(pair, support[pair], cur, support[cur]):
                best[hosts] = pair
        for pair in best.values():
            out.setdefault(pair, set()).update(support[pair])
    return out


def _better(x: Pair, xs: set, y: Pair, ys: set) -> bool:
    lx, ly = len(x[0][1]) + len(x[1][1]), len(y[0][1]) + len(y[1][1])
    return (-len(xs), lx, x) < (-len(ys), ly, y)


def _breaks(pg: _Pages, pair: Pair) -> tuple[int, int]:
    """(paths fetched under both prefixes, of those with the same content) for a pair."""
    (ha, p), (hb, q) = pair
    other = pg.by_host.get(hb, {})
    both = agree = 0
    for rest, c in pg.by_host.get(ha, {}).items():
        if p and not rest.startswith(p + "/"):
            continue
        c2 = other.get(q + rest[len(p) :])
        if c2 is None:
            continue
        both += 1
        agree += c2 == c
    return both, agree


def find_replicas(
    events: Iterable[FetchEvent], cfg: Config | None = None, params: ReplicaParams | None = None
) -> list[dict]:
    """Replicated collections: one dict per collection cluster, canonical replica first,
    with the evidence (``pairs``: collection pair -> (supporting trivial clusters, paths
    with the same content on both sides, paths fetched on both sides))."""
    return _replicas(_Pages(list(events), cfg or Config().check()), params or ReplicaParams())


def _replicas(pg: _Pages, P: ReplicaParams) -> list[dict]:
    if P.mode not in ("auto", "links", "paths"):
        raise ValueError(f"mode must be auto, links or paths, got {P.mode!r}")
    links_mode = P.mode == "links" or (P.mode == "auto" and pg.link_share() >= P.min_link_share)
    accepted: dict[Pair, tuple[int, int, int]] = {}
    for pair, support in sorted(_candidate_pairs(pg, P, links_mode).items()):
        both, agree = _breaks(pg, pair)
        if both and (both - agree) <= P.max_break_share * both + 1e-9:
            accepted[pair] = (len(support), agree, both)

    uf = _UnionFind()
    for a, b in accepted:
        uf.union(a, b)
    inlinks = _inlinks(pg) if links_mode else Counter()
    out = []
    for _, group in sorted(uf.groups().items()):
        ranked = sorted(group, key=lambda col: _rank(pg, col, inlinks))
        out.append(
            {
                "collections": ranked,
                "mode": "links" if links_mode else "paths",
                "pairs": {pair: accepted[pair] for pair in sorted(accepted) if pair[0] in group},
            }
        )
    return out


def _under(rest: str, prefix: str) -> bool:
    return not prefix or rest.startswith(prefix + "/")


def _inlinks(pg: _Pages) -> Counter:
    """Links from other hosts into each page (§3.1: the natural entry point)."""
    n: Counter = Counter()
    for page in sorted(pg.links):
        h = pg.loc[page][1]
        for t in pg.links[page]:
            if pg.loc[t][1] != h:
                n[t] += 1
    return n


def _rank(pg: _Pages, col: Collection, inlinks: Counter) -> tuple:
    host, prefix = col
    pages = [n for n in pg.on_host.get(host, ()) if _under(pg.loc[n][2], prefix)]
    rests = {pg.loc[n][2] for n in pages}
    cross = sum(inlinks[n] for n in pages)
    first = pg.first[pages[0]] if pages else len(pg.first)
    return (-cross, -len(rests), len(prefix), first, col)


def _scheme_of(pg: _Pages, col: Collection) -> str:
    host, prefix = col
    n = Counter(pg.loc[p][0] for p in pg.on_host.get(host, ()) if _under(pg.loc[p][2], prefix))
    return min(n.items(), key=lambda kv: (-kv[1], kv[0]))[0] if n else "http"


def rule_id(hosts: list[str], context: str, transformation: str) -> str:
    key = "\x1d".join((context, transformation, ",".join(hosts)))
    return short_id("r", key)


def _not_under(inner: list[str]) -> str:
    """A path (``/...``) under none of the ``inner`` prefixes (each ``/a`` or ``/a/b``):
    those have rules of their own. Spelled as a trie of alternatives, not a lookahead,
    which the portable rule grammar leaves out (docs/formats.md); each branch starts with
    a character the others cannot take, so matching stays linear."""
    trie: dict = {}
    for word in inner:
        node = trie
        for ch in word[1:] + "/":  # the path's own leading "/" is matched before
            node = node.setdefault(ch, {})
        node[None] = True  # a whole prefix and its "/": excluded

    def alt(node: dict) -> str:
        kids = sorted(k for k in node if k is not None)
        branches = [""]  # the path may end here
        branches.append("[^" + "".join(escape(k) for k in kids) + "].*" if kids else ".+")
        branches += [escape(k) + alt(node[k]) for k in kids if None not in node[k]]
        return "(?:" + "|".join(branches) + ")"

    return "/" + alt(trie) if inner else "/.*"


def fit(events: list[FetchEvent], config: Config | None = None, params: ReplicaParams | None = None) -> list[Rule]:
    """The batch-learner contract (learners.py): rules mapping every mirror to its canonical replica."""
    pg = _Pages(list(events), config or Config().check())
    pg_schemes: dict[Collection, str] = {}
    plans: list[tuple[Collection, Collection, int, float, int]] = []
    for cl in _replicas(pg, params or ReplicaParams()):
        canon, *mirrors = cl["collections"]
        for m in mirrors:
            ev = [v for pair, v in cl["pairs"].items() if m in pair]
            support = sum(v[1] for v in ev)
            both = sum(v[2] for v in ev)
            freq = max((v[0] for v in ev), default=0)
            fpr = round((both - support) / both, 6) if both else 0.0
            plans.append((m, canon, support, fpr, freq))
    nested: dict[str, list[str]] = defaultdict(list)  # host -> prefixes that have a rule
    for (host, prefix), *_ in plans:
        nested[host].append(prefix)
    rules = []
    for (host, prefix), (chost, cprefix), support, fpr, freq in plans:
        if (chost, cprefix) not in pg_schemes:
            pg_schemes[chost, cprefix] = _scheme_of(pg, (chost, cprefix))
        inner = sorted({p[len(prefix) :] for p in nested[host] if p != prefix and _under(p, prefix) and p})
        context = "^https?://" + escape(host) + escape(prefix) + "(" + _not_under(inner) + ")$"
        transformation = f"{pg_schemes[chost, cprefix]}://" + escape_repl(chost + cprefix) + "$1"
        rules.append(
            Rule(
                id=rule_id([host], context, transformation),
                hosts=[host],
                context=context,
                transformation=transformation,
                support=support,
                fpr=fpr,
                freq=freq,
                status=ACTIVE,
            )
        )
    return sorted(rules, key=rule_order)
