"""The pattern tree of Lei et al., "A pattern tree-based approach to learning URL
normalization rules" (WWW 2010), as a batch learner: ``fit(events, config) -> [Rule]``.

Per website (registered domain), the paper's three steps (§4, Figure 5):

1. pattern tree construction (§5.1, Alg. 1): URLs as key-value pairs (§2, Figure 2), split
   top-down on the key of minimal entropy (eq. 4); salient values (before the maximal
   decline of the sorted frequency curve, eq. 5) get a child each, trivial ones share '*';
2. candidate rules (§5.2): duplicate nodes by overlap >= o_min (eq. 6, Alg. 2, an inverted
   index from dup-clusters to nodes), key-key mappings by shared values >= sigma_min
   (Alg. 3), keep / replace / ignore per target key (§3, §5.2.2, with the "fake replace"
   test), and removal of candidates whose fpr (eq. 3) on the training set exceeds fpr_max
   (§5.2.3);
3. deployable rules by the graph method S_graph (§5.3, eq. 7): node volumes flow along
   rules (weight 1 - fpr) and descendant->ancestor links (weight 1) to a stable
   distribution; the most popular nodes are destinations, rules leaving them are dropped
   (this breaks every cycle), chains are concatenated into one direct rule (Figure 8 d, e).

Translation into the crawler's context/transformation contract is in patterntree_rules.py.

Where we had to choose (the paper does not say, or our data differs), marked "ours":
- host labels are keyed from the right (auth_0 = top-level label), so ``www.x.com`` and
  ``x.com`` share auth_0/auth_1 and differ only in auth_2 (the paper keys authority
  labels by position without saying from which end);
- a missing key has the value ABSENT, so key presence is split on like any value;
- a value is salient only if it also occurs at least ``min_salient`` times ("values ...
  seldom appear in other URLs" are trivial, §5.1): without it, eq. 5 on a curve of ids
  seen once or twice calls the ids seen twice salient; a key with a single value is
  fixed without creating a single-child node (the tree is the same, without chains);
- sigma (Alg. 3) is the share of values shared by the two keys over the URLs of the two
  nodes' common dup-clusters, relative to the smaller value set; the fake-replace test
  (§5.2.2) calls a mapped key irrelevant when more than ``fake_max`` of the duplicate
  pairs between the two nodes disagree on it;
- the paper's overlap (eq. 6) divides by |s| + |t|; when an alias node is much smaller
  than the node of its canonical URLs (the usual case on our streams, where most URLs are
  canonical), eq. 6 is small however clean the alias is. ``overlap="paper"`` is eq. 6;
  ``overlap="source"`` (our default; both measured, see tests/test_seed_patterntree.py) divides
  by |s| only: the share of the source node's URLs with a duplicate in t;
- S_graph leaves open how many destinations there are: a node is one when no chain of
  rules leads from it to a more popular node; each other source keeps the (shortest)
  chain to the most popular destination it reaches. Case (b) of Figure 7 (a rule on a
  node and one on its ancestor) is settled as the paper's S_naive does: the ancestor's;
- an ignored key is '*' in the target's format (§3), so the target's own URLs must lose
  it too: every rule into a node ignores the same keys, and the node gets a rule onto
  itself (``unify_targets``), validated together with the rules into it;
- a rule's support (§5.3: the URLs it normalizes) counts the URLs it changes, so that a
  target's own rule, which changes few, ranks after the rules into it (first match wins
  by support in the crawler's contract); the fpr (eq. 3) is measured by applying the
  translated rules to the site's training URLs, and a concatenated chain is checked again;
- one pattern tree per registered domain (the paper's "website"): an alias on another
  registered domain cannot be learned;
- not done: the paper's regular expressions beyond '*' (footnote 2), and matrix
  parameters (``;jsessionid=``) are part of their path segment, not keys of their own.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..rules.urls import host_of, light_normalize, split_authority


class _Star:
    """The generalized value '*' of a pattern: an object, so no URL's value equals it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'*'"

    def __str__(self) -> str:
        return "*"


ABSENT = None  # the value of a key a URL does not have
STAR = _Star()  # a trivial value, generalized (Alg. 1 line 9)


@dataclass(frozen=True)
class Params:
    """The paper's parameters with its defaults (section in brackets), and ours."""

    o_min: float = 0.5  # minimum overlap of duplicate nodes [§5.2.1, "empirically 0.5"]
    sigma_min: float = 0.5  # minimum rate of shared values of a key-key mapping [§5.2.2, 0.5]
    fpr_max: float = 0.0005  # unqualified candidates [§5.2.3; Table 3's caption: 0.05%, its text says 0.05]
    min_salient: int = 5  # ours: a salient value occurs at least this often
    fake_max: float = 0.5  # ours: share of duplicate pairs disagreeing on a key that makes a replace an ignore
    overlap: str = "source"  # "paper" (eq. 6) or "source" (ours, see the module docstring)
    walk_iterations: int = 200  # power iterations of the random walk [§5.3, pi = (P^T)^inf pi0]
    max_query_orders: int = 4  # ours: rules per source node, one per parameter order seen (patterntree_rules)


DEFAULT_PARAMS = Params()  # the default of the functions that take params (frozen, so one instance serves all)


# --------------------------------------------------------------------------- §2: key-value pairs


@dataclass(frozen=True)
class KV:
    """One URL as key-value pairs (Figure 2): scheme, auth_i (host labels from the right),
    path_i (segments by position) and query parameters by name ("?name")."""

    url: str
    values: dict
    query_order: tuple  # the query keys in the order the URL lists them
    host: str = ""


def decompose(url: str) -> KV:
    url = light_normalize(url)
    scheme, auth, rest = split_authority(url)
    values: dict = {"scheme": scheme}
    labels = auth.split(".")
    for i, lab in enumerate(reversed(labels)):
        values[f"auth_{i}"] = lab
    path, _, query = rest.partition("?")
    if path:
        for i, seg in enumerate(path[1:].split("/")):
            values[f"path_{i}"] = seg
    order = []
    if query:
        for item in query.split("&"):
            name, _, val = item.partition("=")
            key = "?" + name
            n = 2
            while key in values:  # a repeated name: the second is its own key
                key = f"?{name}#{n}"
                n += 1
            values[key] = val
            order.append(key)
    return KV(url, values, tuple(order), host_of(url))


def key_order(key: str) -> tuple:
    """Keys in URL order: scheme, host labels left to right, path segments, query."""
    if key == "scheme":
        return (0, 0, "")
    if key.startswith("auth_"):
        return (1, -int(key[5:]), "")
    if key.startswith("path_"):
        return (2, int(key[5:]), "")
    return (3, 0, key)


# --------------------------------------------------------------------------- §5.1: the tree


@dataclass(eq=False)
class Node:
    id: int
    members: list  # indices into the site's KV list
    pattern: dict  # key -> literal value, STAR, or ABSENT; keys in key_order
    optional: frozenset  # STAR keys some members lack
    parent: Node | None = None
    children: list = field(default_factory=list)
    split_key: str | None = None

    @property
    def volume(self) -> int:
        return len(self.members)

    def ancestors(self):
        p = self.parent
        while p is not None:
            yield p
            p = p.parent


def entropy(counts: Iterable[int]) -> float:
    """Eq. 4."""
    counts = list(counts)
    n = sum(counts)
    return -sum(c / n * math.log(c / n) for c in counts if c)


def salient_values(counts: Counter, min_salient: int) -> set:
    """Values before the maximal decline of the descending frequency curve (eq. 5). A
    trailing frequency of 1 closes the curve, so values all equally frequent are salient
    unless they are seen once; values seen fewer than ``min_salient`` times are trivial."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    freqs = [f for _, f in ranked] + [1]
    best, pos = 0.0, 0
    for i in range(1, len(freqs)):
        drop = math.log(freqs[i - 1]) - math.log(freqs[i])
        if drop > best:
            best, pos = drop, i
    return {v for v, f in ranked[:pos] if f >= min_salient}


class PatternTree:
    """Alg. 1 over one site's URLs."""

    def __init__(self, kvs: list[KV], params: Params = Params()):
        self.kvs = kvs
        self.params = params
        self.nodes: list[Node] = []
        self.root = self._build(list(range(len(kvs))), {}, None)

    def _build(self, members: list, fixed: dict, parent: Node | None) -> Node:
        P = self.params
        fixed = dict(fixed)
        counts: dict = defaultdict(Counter)
        keys = sorted({k for i in members for k in self.kvs[i].values}, key=key_order)
        for i in members:
            vals = self.kvs[i].values
            for k in keys:
                counts[k][vals.get(k, ABSENT)] += 1
        # a key with one value in a group large enough is fixed at once (no single-child node)
        for k in keys:
            if k not in fixed and len(counts[k]) == 1 and len(members) >= P.min_salient:
                fixed[k] = next(iter(counts[k]))
        node = Node(len(self.nodes), members, {}, frozenset(), parent)
        self.nodes.append(node)
        node.pattern, node.optional = self._pattern(keys, counts, fixed)
        todo = [k for k in keys if k not in fixed]
        if not todo:
            return node
        kstar = min(todo, key=lambda k: (entropy(counts[k].values()), key_order(k)))
        salient = salient_values(counts[kstar], P.min_salient)
        if not salient:
            return node  # every value of k* is trivial: a leaf (Alg. 1 line 14)
        groups: dict = defaultdict(list)
        for i in members:
            v = self.kvs[i].values.get(kstar, ABSENT)
            groups[v if v in salient else STAR].append(i)
        node.split_key = kstar
        for v in sorted(groups, key=lambda v: (v is not STAR, str(v))):
            sub = dict(fixed)
            sub[kstar] = v  # STAR: generalized, its pattern comes from the members
            node.children.append(self._build(groups[v], sub, node))
        return node

    def _pattern(self, keys, counts, fixed) -> tuple[dict, frozenset]:
        """Alg. 1 line 2: the pattern describing the group: fixed salient values as
        literals, every other key '*' (optional when some members lack it)."""
        pattern, optional = {}, set()
        for k in keys:
            v = fixed.get(k, STAR)
            if v is STAR:
                if set(counts[k]) == {ABSENT}:
                    v = ABSENT
                elif ABSENT in counts[k]:
                    optional.add(k)
            pattern[k] = v
        return {k: v for k, v in pattern.items() if v is not ABSENT}, frozenset(optional)

    def leaves(self) -> list[Node]:
        return [n for n in self.nodes if not n.children]


# --------------------------------------------------------------------------- §5.2.1: duplicate nodes


def overlap(s: Node, t: Node, cluster_of: list, mode: str = "paper") -> float:
    """Eq. 6 (``mode="paper"``); for s = t the duplicate rate 1 - C/N of the node.
    ``mode="source"`` (ours): URLs of s in common clusters / |s|."""
    cs = Counter(cluster_of[i] for i in s.members)
    if s is t:
        return 1.0 - len(cs) / len(s.members)
    ct = Counter(cluster_of[i] for i in t.members)
    common = cs.keys() & ct.keys()
    if mode == "source":
        return sum(cs[c] for c in common) / len(s.members)
    return sum(cs[c] + ct[c] for c in common) / (len(s.members) + len(t.members))


def duplicate_nodes(tree: PatternTree, cluster_of: list, params: Params) -> list[tuple[Node, Node]]:
    """Alg. 2: an inverted index from dup-clusters to the nodes holding them, so only node
    pairs sharing a cluster are scored. Ancestor-descendant pairs are skipped (a node's
    pattern already covers its descendants'); a rule s -> t is directed, so both orders
    are checked."""
    index: dict = defaultdict(set)
    for n in tree.nodes:
        for i in n.members:
            index[cluster_of[i]].add(n.id)
    sizes = Counter(cluster_of)
    seen, found = set(), []
    for c in sorted(index, key=str):
        if sizes[c] < 2:
            continue
        ids = sorted(index[c])
        for a in ids:
            for b in ids:
                if (a, b) in seen:
                    continue
                seen.add((a, b))
                s, t = tree.nodes[a], tree.nodes[b]
                if s is not t and (s in t.ancestors() or t in s.ancestors()):
                    continue
                if overlap(s, t, cluster_of, params.overlap) >= params.o_min:
                    found.append((s, t))
    return found


# --------------------------------------------------------------------------- §5.2.2: rewrite operations

KEEP, REPLACE, IGNORE = "keep", "replace", "ignore"


@dataclass
class Candidate:
    """A normalization rule s -> t: one operation per key of t's pattern (§3):
    (KEEP, literal), (REPLACE, source key) or (IGNORE, None)."""

    source: Node
    target: Node
    ops: dict
    fpr: float = 0.0
    support: int = 0  # URLs the rule normalizes (§5.3)


def _dup_pairs(s: Node, t: Node, cluster_of: list) -> list[tuple[int, int]]:
    """Pairs (u in s, v in t, u != v) of the same dup-cluster: one per cluster and source
    URL, so a big cluster does not weigh quadratically."""
    in_t: dict = defaultdict(list)
    for j in t.members:
        in_t[cluster_of[j]].append(j)
    out = []
    for i in s.members:
        for j in in_t.get(cluster_of[i], ()):
            if j != i:
                out.append((i, j))
                break
    return out


def key_mappings(s: Node, t: Node, kvs: list, pairs: list, sigma_min: float) -> dict:
    """Alg. 3: for each key k' of t, the key k of s sharing the highest rate of values
    (over the URLs of their duplicate pairs), when that rate exceeds sigma_min."""
    vs: dict = defaultdict(set)
    vt: dict = defaultdict(set)
    for i, j in pairs:
        for k, v in kvs[i].values.items():
            vs[k].add(v)
        for k, v in kvs[j].values.items():
            vt[k].add(v)
    out = {}
    for k2 in t.pattern:
        best, best_k = 0.0, None
        for k in sorted(s.pattern, key=key_order):
            if not vs[k] or not vt[k2]:
                continue
            sigma = len(vs[k] & vt[k2]) / min(len(vs[k]), len(vt[k2]))
            if sigma > best:
                best, best_k = sigma, k
        if best_k is not None and best > sigma_min:
            out[k2] = best_k
    return out


def rewrite_ops(s: Node, t: Node, kvs: list, cluster_of: list, params: Params) -> dict | None:
    """§5.2.2: keep a concrete value of t; replace a '*' key of t by its mapped key of s,
    unless duplicates disagree on it too often (a fake replace, then ignore); ignore a
    '*' key without a mapping. None when s and t share no duplicate pair."""
    pairs = _dup_pairs(s, t, cluster_of)
    if not pairs:
        return None
    mapping = key_mappings(s, t, kvs, pairs, params.sigma_min)
    ops = {}
    for k2 in sorted(t.pattern, key=key_order):
        v = t.pattern[k2]
        if v is not STAR:
            ops[k2] = (KEEP, v)
            continue
        k = mapping.get(k2)
        if k is None:
            ops[k2] = (IGNORE, None)
            continue
        differ = sum(kvs[i].values.get(k) != kvs[j].values.get(k2) for i, j in pairs)
        ops[k2] = (IGNORE, None) if differ / len(pairs) > params.fake_max else (REPLACE, k)
    return ops


# --------------------------------------------------------------------------- §5.3: S_graph


def stable_energy(nodes: list[Node], rules: list[Candidate], iterations: int) -> dict:
    """pi = (P^T)^inf pi0 with pi0 = volumes, edges = rules (1 - fpr) and descendant ->
    ancestor links (1) among the graph's vertices, rows normalized (eq. 7). A vertex
    without out-edges keeps its energy; the walk is made lazy (half stays) so that a cycle
    converges instead of oscillating, which leaves the stable distribution unchanged."""
    ids = {n.id for n in nodes}
    out: dict = defaultdict(dict)
    for r in rules:
        out[r.source.id][r.target.id] = max(out[r.source.id].get(r.target.id, 0.0), 1.0 - r.fpr)
    for n in nodes:
        for a in n.ancestors():
            if a.id in ids:
                out[n.id][a.id] = max(out[n.id].get(a.id, 0.0), 1.0)
    pi = {n.id: float(n.volume) for n in nodes}
    for _ in range(iterations):
        nxt = dict.fromkeys(pi, 0.0)
        for i, e in pi.items():
            edges = out.get(i)
            tot = sum(edges.values()) if edges else 0.0
            if not edges or not tot:  # (no edges: tot is 0.0)
                nxt[i] += e
                continue
            nxt[i] += e / 2
            for j, w in edges.items():
                nxt[j] += e / 2 * w / tot
        pi = nxt
    return pi


def compose(ab: Candidate, bc: Candidate) -> Candidate:
    """Figure 8 (d, e): the rules A -> B and B -> C as one rule A -> C."""
    ops = {}
    for k, (op, arg) in bc.ops.items():
        if op == REPLACE:
            op, arg = ab.ops.get(arg, (IGNORE, None))
        ops[k] = (op, arg)
    return Candidate(ab.source, bc.target, ops, max(ab.fpr, bc.fpr), ab.support)


def select_graph(rules: list[Candidate], iterations: int = 200) -> list[Candidate]:
    """S_graph (§5.3): a vertex is a destination when no chain of rules leads from it to a
    more popular vertex (stable energy, ties to the earlier node); rules leaving a
    destination are removed, which breaks every cycle (Figure 7 c). Every other source
    keeps one rule, to the most popular destination its rules reach (Figure 7 a), the
    chain to it concatenated into one direct rule (Figure 8 d, e; the shortest chain); a
    source whose ancestor has a rule gives way (Figure 7 b, as S_naive does)."""
    if not rules:
        return []
    nodes = {r.source.id: r.source for r in rules} | {r.target.id: r.target for r in rules}
    verts = [nodes[i] for i in sorted(nodes)]
    pi = stable_energy(verts, rules, iterations)
    rank = {i: (round(pi[i], 6), -i) for i in pi}  # total order: energy, then the earlier node
    edges: dict = defaultdict(dict)
    for r in sorted(rules, key=lambda r: (r.source.id, r.target.id)):
        if r.source is not r.target:  # a self-rule never moves a URL to another node: apart below
            edges[r.source.id][r.target.id] = r
    selected, moving = [], set()
    for i in sorted(edges):
        parent, queue = {i: None}, [i]
        for u in queue:  # breadth first: the shortest chain to each reachable vertex
            for v in sorted(edges.get(u, ())):
                if v not in parent:
                    parent[v] = u
                    queue.append(v)
        best = max(parent, key=lambda v: rank[v])
        if best == i:
            continue  # a destination
        path = [best]
        while parent[path[-1]] != i:
            path.append(parent[path[-1]])
        path.append(i)
        path.reverse()
        r = edges[path[0]][path[1]]
        for u, v in zip(path[1:], path[2:]):
            r = compose(r, edges[u][v])
        selected.append(r)
        moving.add(i)
    # a self-rule (s = t, §5.2.1) normalizes within a destination node
    dest = {r.target.id for r in selected} | {i for i in nodes if i not in moving}
    for r in rules:
        if r.source is r.target and r.source.id in dest:
            selected.append(r)
    src = {r.source.id for r in selected}
    return [r for r in selected if not any(a.id in src for a in r.source.ancestors())]


# --------------------------------------------------------------------------- the learner


def unify_targets(rules: list[Candidate]) -> dict:
    """An ignored key means the target's format has '*' there (§3): t's own URLs vary on
    it too, and a crawler key is one string. So every rule into t ignores the union of
    the keys any of them ignores (one canonical form), and t's own URLs need the same
    normalization (``target_rule``). Returns target id -> that rule, for the targets that
    need one and may have it: not when a rule on t itself was selected (it is unified
    already), nor when t is the ancestor of a rule's source (first match wins by support;
    t's rule would take that source's URLs)."""
    by_target: dict = defaultdict(list)
    for r in rules:
        by_target[r.target.id].append(r)
    covering = {a.id for r in rules for a in r.source.ancestors()}
    own = {r.source.id for r in rules}
    out = {}
    for tid in sorted(by_target):
        group = by_target[tid]
        t = group[0].target
        ign = {k for r in group for k, (op, _) in r.ops.items() if op == IGNORE and t.pattern.get(k) is STAR}
        for r in group:
            for k in ign:
                r.ops[k] = (IGNORE, None)
        tr = target_rule(group[0])
        if tr is not None and tid not in own and tid not in covering:
            out[tid] = tr
    return out


def target_rule(c: Candidate) -> Candidate | None:
    """The rule t -> t giving the target's own URLs c's format: keep its literals, drop
    the '*' keys c ignores, keep every other '*' value. None when c ignores none."""
    t = c.target
    ign = {k for k, (op, _) in c.ops.items() if op == IGNORE and t.pattern.get(k) is STAR}
    if c.source is t or not ign:
        return None
    ops = {
        k: (KEEP, v) if v is not STAR else (IGNORE, None) if k in ign else (REPLACE, k)
        for k, v in sorted(t.pattern.items(), key=lambda kv: key_order(kv[0]))
    }
    return Candidate(t, t, ops)
