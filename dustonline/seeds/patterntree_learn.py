"""Lei et al.'s pattern tree as a learner: per site, the tree, its qualified
candidates, the graph selection and the unified targets (patterntree.py), measured and
written as rules (patterntree_rules.py)."""

from __future__ import annotations

from collections import defaultdict

from ..config import Config
from ..events.event import FetchEvent
from ..rules.ruleset import rule_order
from ..rules.urls import host_of, light_normalize, site_of_host
from .dustlin import cluster_events
from .patterntree import (
    DEFAULT_PARAMS,
    KV,
    Candidate,
    Params,
    PatternTree,
    decompose,
    duplicate_nodes,
    rewrite_ops,
    select_graph,
    unify_targets,
)
from .patterntree_rules import measure, to_rules


def site_candidates(kvs: list[KV], cluster_of: list, params: Params) -> tuple[PatternTree, list[Candidate]]:
    """Steps 1 and 2 for one site: the tree and its qualified candidates."""
    tree = PatternTree(kvs, params)
    qualified = []
    for s, t in duplicate_nodes(tree, cluster_of, params):
        ops = rewrite_ops(s, t, kvs, cluster_of, params)
        if ops is None:
            continue
        c = Candidate(s, t, ops)
        c.support, nsupp, c.fpr = measure(c, kvs, cluster_of, params)
        if nsupp and c.fpr <= params.fpr_max + 1e-12:
            qualified.append(c)
    return tree, qualified


def learn_site(urls: list[str], clusters: list, params: Params = DEFAULT_PARAMS) -> list:
    """Rules (rules.Rule) for one site from its distinct URLs and their cluster ids."""
    kvs = [decompose(u) for u in urls]
    _, cands = site_candidates(kvs, clusters, params)
    selected = select_graph(cands, params.walk_iterations)
    targets = unify_targets(selected)
    out, needed = [], set()
    for c in selected:
        c.support, nsupp, c.fpr = measure(c, kvs, clusters, params)
        if nsupp and c.fpr <= params.fpr_max + 1e-12:  # chains and unified rules are checked again
            out.extend(to_rules(c, kvs, params))
            needed.add(c.target.id)
    for tid in sorted(needed & targets.keys()):
        tr = targets[tid]  # validated with the rules into t (measure); its support: URLs it changes
        tr.support, _, tr.fpr = measure(tr, kvs, clusters, params)
        out.extend(to_rules(tr, kvs, params))
    return out


def fit(events: list[FetchEvent], config: Config, params: Params | None = None) -> list:
    """The batch contract (learners.py): one pattern tree per site over the training
    events' dup-clusters (batch.cluster_events)."""
    params = params or Params()
    by_site: dict = defaultdict(dict)
    for cid, urls in cluster_events(events, config).items():
        # a cluster too big is noise (soft 404, shared image), as for the other learners:
        # its URLs stay in the tree, each a cluster of its own
        noise = len(urls) > config.learning.max_cluster_urls
        for n, u in enumerate(urls):
            by_site[site_of_host(host_of(u))].setdefault(light_normalize(u), f"{cid}#{n}" if noise else cid)
    rules = []
    for site in sorted(by_site):
        m = by_site[site]
        urls = sorted(m)
        rules.extend(learn_site(urls, [m[u] for u in urls], params))
    return sorted(rules, key=rule_order)
