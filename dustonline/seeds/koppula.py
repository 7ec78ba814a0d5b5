"""Koppula, Leela, Agarwal, Chitrapura, Garg, Sasturkar: "Learning URL patterns for
webpage de-duplication", WSDM 2010, as a batch learner: ``fit(events, config) -> [Rule]``.

Pipeline, in the paper's terms:

1. tokenization (§3.1, koppula_tokens): basic RFC 1738 keys named from both ends
   (Definition 1) and host-specific deep tokens (Alg. 1-2);
2. pair-wise rule generation (§3.2.1, Alg. 3-4) within dup clusters (``batch.cluster_events``):
   top-k targets, stratified source sample; context = the source's keys, transformation =
   per target key a key reference, a value conversion (Lowercase/Uppercase) or a literal,
   and deletions;
3. generalization (§3.2.2, Alg. 5, koppula_tree): decision tree over contexts with the
   transformations as classes, then transformation generalization;
4. translation into our contract (koppula_regex), ``${N:lower}``/``${N:upper}`` for conversions;
5. min-coverage and precision filtering (§5: coverage >= 10, precision >= 0.95).

Deviations (each also said where it is made):
- no PageRank, in-links or on-line page importance (§3.2.1): targets are ranked by the
  paper's fallback characteristics (static before dynamic, shorter, fewer hops from the
  root; ties to fewer capitals), sources sampled stratified by number of distinct tokens, as the paper suggests
  "in the absence of ranking information";
- path components are aligned between source and target by common prefix and suffix;
  the transformation of the differing middle is anchored at the nearer end of the URL and
  names keys from the nearer end, so `index.html` deletions of different depths are one
  class (the paper's k_(-,1) generalization, §2);
- pair-wise rules are generalized per host and order of query arguments (a regex needs an
  order; the paper's keys have none); Encode/Decode conversions (Definition 2, "...") are
  not learned, only Lowercase/Uppercase, ASCII-only as the rule contract defines them;
- Alg. 5 is read literally where it is clear (one value or `*` per node, majority rule,
  keys by information gain, one path per node); where it is not: line 14 merges nodes of
  one concrete value, not the `*` nodes (merging every wildcard node pools unrelated
  classes, and then the majority of one class decides another's context: coverage on a
  generated stream fell from 0.70 to 0.46), and ⊥ is never a context value (Definition 2);
  a pair-wise rule outvoted at some key is not an example of its node's rule;
- threshold_|V| and the deep-tokenization selection thresholds have no numbers in the
  paper: ours are in TreeParams/DeepParams; the candidate-anchor unit keeps a capital
  with the lower case after it (koppula_tokens);
- coverage and precision are measured on the validation clusters of our holdout split
  (as DUSTER/DustLin do), on every URL of the rule's host including single-URL clusters
  (the paper's data had none; leaving them out would hide rules that merge distinct pages);
- GeneralizeTransformations keeps, per generalized context, the transformation most of
  its pair-wise rules have (a crawler needs one key; the paper writes a wildcard);
- a rule's hosts are its sources' host (generalization is per host, as §4 keys it); a
  translated rule must map its own pair-wise sources to their targets or it is dropped;
- precision (§5 "Metrics") counts u as a false positive when r(u) is a URL of another
  dup cluster or is also the output for a URL of another cluster;
- no MapReduce (§4): one process.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..config import Config
from ..events.event import FetchEvent
from ..hashing import short_id
from ..learner import holdout as split
from ..rules.ruleset import ACTIVE, Rule, rule_order
from ..rules.urls import host_of, light_normalize
from .common import common_ends
from .koppula_regex import CONVERT, translate
from .koppula_tokens import DeepParams, ParsedURL, comp_view, deep_tokenize, deep_view, parse_url
from .koppula_tree import TreeParams, freeze, generalize, generalize_transformations


@dataclass(frozen=True)
class KoppulaParams:
    top_k: int = 1  # §3.2.1 target selection: top-k (one normalized URL per cluster)
    max_sources: int = 20  # §3.2.1 source sample per cluster (no number in the paper)
    min_coverage: int = 10  # §5.1, Fig. 3: generalized rules with coverage >= 10
    min_precision: float = 0.95  # §5.2: precision 0.95 gives the best reduction per rule
    deep: DeepParams = field(default_factory=DeepParams)
    tree: TreeParams = field(default_factory=TreeParams)


class Tok:
    """A URL as Definition 1's key -> value function, with its deep tokens."""

    __slots__ = ("url", "host", "parsed", "deep", "attrs", "qshape")

    def __init__(self, url: str, parsed: ParsedURL, deep: dict):
        self.url, self.parsed, self.deep = url, parsed, deep
        self.host = host_of(url)
        comps = parsed.comps
        n = len(comps)
        a: dict = {}
        for x, c in enumerate(comps, 1):
            views = [("s", x)] + ([("e", n - x + 1)] if x >= 3 else [])
            for v in views:
                a[v] = c
                _deep_attrs(a, v, deep.get(x, ()))
        for name, val in parsed.query or ():
            a[("q", name)] = val if val is not None else ""
            _deep_attrs(a, ("q", name), deep.get(name, ()))
        self.attrs = a
        self.qshape = None if parsed.query is None else tuple((nm, v is not None) for nm, v in parsed.query)

    def deep_of(self, slot) -> tuple[str, ...]:
        return self.deep.get(slot, ())


def _deep_attrs(a: dict, view: tuple, toks: tuple) -> None:
    m = len(toks)
    if m > 1:
        for i, d in enumerate(toks, 1):
            a[(view, "i", i)] = d
            a[(view, "j", m - i + 1)] = d


class Tokenizer:
    """Basic tokenization plus deep tokenization learned per host and key (§4 Stage I:
    the reduce key is (host, key))."""

    def __init__(self, urls: Iterable[str], P: DeepParams):
        by_slot: dict[tuple, set] = {}
        self.parsed: dict[str, ParsedURL] = {}
        for u in urls:
            p = parse_url(u)
            if p is None:
                continue
            self.parsed[u] = p
            h = host_of(u)
            for x, c in enumerate(p.comps[2:], 3):
                by_slot.setdefault((h, x), set()).add(c)
            for name, val in p.query or ():
                if val is not None:
                    by_slot.setdefault((h, name), set()).add(val)
        self.deep = {slot: deep_tokenize(vals, P) for slot, vals in sorted(by_slot.items(), key=repr)}
        self._cache: dict[str, Tok | None] = {}

    def tok(self, url: str) -> Tok | None:
        if url in self._cache:
            return self._cache[url]
        p = self.parsed.get(url) or parse_url(url)
        t = None
        if p is not None:
            h = host_of(url)
            deep: dict[int | str, tuple[str, ...]] = {}  # component number or query key -> its tokens
            for x, c in enumerate(p.comps[2:], 3):
                deep[x] = self.deep.get((h, x), {}).get(c, (c,))
            for name, val in p.query or ():
                if val is not None:
                    deep[name] = self.deep.get((h, name), {}).get(val, (val,))
            t = Tok(url, p, deep)
        self._cache[url] = t
        return t


# ---------------------------------------------------------------- §3.2.1 pair-wise rules
def target_rank(url: str) -> tuple:
    """The paper's characteristics of a normalized URL without link data: static type,
    shorter length, fewer hops from the domain root (§3.2.1 "Target Selection"); ties go
    to fewer capitals (lower case is the usual normal form), then the URL itself."""
    rest = url.split("://", 1)[-1]
    return ("?" in url, len(url), rest.count("/"), sum(c.isupper() for c in url), url)


def select(urls: list[str], P: KoppulaParams, tok) -> tuple[list[str], list[str]]:
    """Alg. 4 lines 3-5: top-k targets; sources sampled from U - T stratified by number of
    distinct tokens, each stratum in proportion to its size (uniform importance)."""
    ranked = sorted(urls, key=target_rank)
    targets, rest = ranked[: P.top_k], [u for u in urls if u not in set(ranked[: P.top_k])]
    if len(rest) <= P.max_sources:
        return targets, rest
    strata: dict[int, list[str]] = {}
    for u in rest:
        t = tok(u)
        n = len(set(t.attrs.values())) if t else 0
        strata.setdefault(n, []).append(u)
    sources: list[str] = []
    for n in sorted(strata):
        quota = max(1, round(P.max_sources * len(strata[n]) / len(rest)))
        sources.extend(strata[n][:quota])
    return targets, sources[: P.max_sources]


def _value_index(u: Tok, first: range):
    """Source values -> the key holding them, in Alg. 3's search order for k': the changed
    components first, then the others, query values, deep tokens."""
    n = len(u.parsed.comps)
    order = list(first) + [x for x in range(1, n + 1) if x not in first]
    named: list[tuple[str, tuple]] = []
    for x in order:
        named.append((u.parsed.comps[x - 1], comp_view(x, n)))
    for name, val in u.parsed.query or ():
        if val is not None:
            named.append((val, ("q", name)))
    for x in order:
        d = u.deep_of(x) if x >= 3 else ()
        named.extend((t, deep_view(comp_view(x, n), i, len(d))) for i, t in enumerate(d, 1) if len(d) > 1)
    for name, val in u.parsed.query or ():
        d = u.deep_of(name) if val is not None else ()
        named.extend((t, deep_view(("q", name), i, len(d))) for i, t in enumerate(d, 1) if len(d) > 1)
    exact: dict[str, tuple] = {}
    conv: dict[str, tuple] = {}
    for val, key in named:
        if not val:
            continue
        exact.setdefault(val, key)
        for c, f in CONVERT.items():
            cv = f(val)
            if cv != val:
                conv.setdefault(cv, (key, c))
    return exact, conv


def _pieces(w: str, deep: tuple, exact: dict, conv: dict) -> tuple:
    """Alg. 3 lines 4-9 for one target value: key reference, value conversion, else literal;
    tried on the whole value, then on its deep tokens."""

    def one(s):
        if s in exact:
            return ("ref", exact[s])
        if s in conv:
            return ("conv", *conv[s])
        return ("lit", s)

    p = one(w) if w else ("lit", w)
    if p[0] != "lit" or len(deep) < 2:
        return (p,)
    ps = [one(d) for d in deep]
    if all(q[0] == "lit" for q in ps):
        return (p,)
    merged: list = []
    for q in ps:
        if q[0] == "lit" and merged and merged[-1][0] == "lit":
            merged[-1] = ("lit", merged[-1][1] + q[1])
        else:
            merged.append(q)
    return tuple(merged)


def pairwise(u: Tok, v: Tok):
    """Alg. 3 GeneratePairwiseRule: context = u's keys; the transformation as a hashable
    class: (path edit, query spec). Path edit: the source's differing middle (anchored at
    the nearer end) and the target components replacing it; None when paths agree."""
    U, V = u.parsed.comps, v.parsed.comps
    P, Q = common_ends(U, V)
    L = len(U) - P - Q
    mid = V[P : len(V) - Q]
    exact, conv = _value_index(u, range(P + 1, P + L + 1))
    edit = None
    if L or mid:
        anchor = ("e", Q, L) if Q < P else ("s", P, L)
        edit = (anchor, tuple(_pieces(w, v.deep_of(P + 1 + k), exact, conv) for k, w in enumerate(mid)))
    query: str | tuple | None
    if v.parsed.query == u.parsed.query:
        query = "copy"
    elif v.parsed.query is None:
        query = None
    else:
        src = dict(u.parsed.query or ())
        query = tuple(
            (
                name,
                val is not None,
                (("ref", ("q", name)),)
                if name in src and src[name] == val and val is not None
                else _pieces(val or "", v.deep_of(name), exact, conv),
            )
            for name, val in v.parsed.query
        )
    if edit is None and query == "copy":
        return None
    return (edit, query)


# ---------------------------------------------------------------- fit
def learn(
    events: Iterable[FetchEvent], config: Config | None = None, params: KoppulaParams | None = None
) -> tuple[list[Rule], dict]:
    """Rules and counts per stage (Table 2's pair-wise / generalized / filtered)."""
    from .dustlin import cluster_events

    cfg = config or Config().check()
    P = params or KoppulaParams()
    members = cluster_events(events, cfg)
    tk = Tokenizer((u for cid in sorted(members) for u in members[cid]), P.deep)

    # Alg. 4: pair-wise rules, partitioned per (host, query shape) for generalization
    parts: dict[tuple, list[tuple[Tok, Tok, tuple]]] = {}
    n_pairs = 0
    for cid in sorted(members):
        urls = members[cid]
        if len(urls) < 2 or not split.trains(cid, cfg.learning.holdout):
            continue
        targets, sources = select(urls, P, tk.tok)
        for s in sources:
            for t in targets:
                u, v = tk.tok(s), tk.tok(t)
                if u is None or v is None or s == t:
                    continue
                cls = pairwise(u, v)
                if cls is not None:
                    parts.setdefault((u.host, u.qshape), []).append((u, v, cls))
                    n_pairs += 1

    # Alg. 5 + translation
    cands: dict[tuple[str, str, str], list] = {}
    n_gen = 0
    for key in sorted(parts, key=repr):
        rules = parts[key]
        ctxs = [u.attrs for u, _, _ in rules]
        classes = [c for _, _, c in rules]
        gen = generalize(ctxs, classes, P.tree)
        tgen = generalize_transformations(gen, classes)
        n_gen += len(tgen)
        by_ctx: dict[tuple, list[int]] = {}
        for i, g in enumerate(gen):
            by_ctx.setdefault(freeze(g), []).append(i)
        for fctx in sorted(tgen, key=repr):
            tcls = tgen[fctx]
            idx = by_ctx[fctx]
            srcs = [rules[i][0] for i in idx]
            out = translate(dict(fctx), tcls, srcs)
            if out is None:
                continue
            rx, trans = out
            rule = Rule(
                id=rule_id(rx, trans, [key[0]]),
                hosts=[key[0]],
                context=rx,
                transformation=trans,
                freq=len(idx),
                status=ACTIVE,
            )
            try:
                cr = rule.compile()
            except Exception:  # noqa: BLE001 - a generalized context or template that does not compile: not a rule
                continue
            # it must map the pair-wise sources of its own class to their targets
            if not any(cr.apply(rules[i][0].url) == rules[i][1].url for i in idx if rules[i][2] == tcls):
                continue
            c = cands.setdefault((key[0], rx, trans), [rule, cr, 0])
            c[2] += len(idx)

    # §5: min-coverage and precision filtering on the validation clusters
    known = {light_normalize(u): cid for cid in sorted(members) for u in members[cid]}
    by_host: dict[str, list[tuple[str, str]]] = {}
    for cid in sorted(members):
        if split.validates(cid, cfg.learning.holdout):
            for url in members[cid]:
                by_host.setdefault(host_of(url), []).append((url, cid))
    kept: list[Rule] = []
    for host, rx, trans in sorted(cands):
        rule, cr, freq = cands[(host, rx, trans)]
        cov, f = coverage_precision(cr, by_host.get(host, ()), known)
        rule.freq, rule.support = freq, cov - f
        rule.fpr = round(f / cov, 6) if cov else 0.0
        if cov >= P.min_coverage and (cov - f) / cov >= P.min_precision - 1e-12:
            kept.append(rule)
    stats = {"pairwise": n_pairs, "generalized": n_gen, "translated": len(cands), "filtered": len(kept)}
    return sorted(kept, key=rule_order), stats


def coverage_precision(cr, urls, known: dict) -> tuple[int, int]:
    """(r_cov, f) of §5 "Metrics": URLs the rule applies to, and of those the ones whose
    output r(u) = v is a URL of another dup cluster or is shared with one."""
    covered: list[tuple[str, str]] = []
    forms: dict[str, set] = {}
    for u, cid in urls:
        out = cr.apply(u)
        if out is None:
            continue
        form = light_normalize(out)
        covered.append((form, cid))
        forms.setdefault(form, set()).add(cid)
    f = sum(1 for form, cid in covered if len(forms[form]) > 1 or known.get(form, cid) != cid)
    return len(covered), f


def rule_id(context: str, transformation: str, hosts: list[str]) -> str:
    key = context + "\x1d" + transformation + "\x1d" + ",".join(sorted(hosts))
    return short_id("r", key)


def fit(events: list[FetchEvent], config: Config) -> list[Rule]:
    """The batch learner contract (learners.py)."""
    return learn(events, config)[0]
