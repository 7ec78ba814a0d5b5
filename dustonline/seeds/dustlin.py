"""Batch learners over a finished data set: DUSTER (progressive alignment, thesis ch. 4)
and DustLin (linear alignment, ch. 5), phases as in the thesis:

1. candidates: one rule per training cluster from its first K URLs, grouped (Alg. 2/5,
   with the cross-cluster generalization of generalize.py when enabled);
2. validation on the holdout clusters (Alg. 3/8): Nsupp >= min_supp, fpr <= fpr_max;
3. redundancy elimination (Alg. 6).

It shares every building block with the online learner, so on the same stream and
config with no eviction, DustLin here and ``OnlineLearner`` agree on the candidates.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from ..config import Config
from ..events.event import FetchEvent
from ..learner import holdout as split
from ..learner.align import Consensus, linear_alignment, progressive_alignment
from ..learner.clusters import ClusterIndex, url_key
from ..learner.generalize import Group, contribution
from ..learner.induce import parts_of
from ..learner.records import URLRec
from ..learner.validation import fpr, refines, support_counts
from ..rules.ruleset import ACTIVE, Rule, rule_order
from ..rules.urls import host_of
from ..state.store import memory_store


def cluster_events(events: Iterable[FetchEvent], cfg: Config) -> dict[str, list[str]]:
    """Cluster id -> its distinct URLs in order of first appearance (teaching events only)."""
    store = memory_store(cfg.storage.cache_entries, cfg.storage.cache_mib)
    index = ClusterIndex(store, cfg.clustering.simhash_distance, cfg.clustering.canonical_hints)
    urls, clusters = store.table("url"), store.table("cluster")
    members: dict[str, list[str]] = {}
    for ev in events:
        if not ev.teaches:
            continue
        key = url_key(host_of(ev.url), ev.url)
        if key in urls:
            continue
        cid = index.assign(ev)
        urls[key] = URLRec(cid, ev.ts, 0, False)
        clusters[cid] = 1
        members.setdefault(cid, []).append(ev.url)
    return members


def learn(events: Iterable[FetchEvent], config: Config | None = None, aligner: str | None = None) -> list[Rule]:
    """Learn a validated, non-redundant rule set from all ``events`` at once."""

    cfg = config or Config().check()
    L = cfg.learning
    aligner = aligner or L.aligner
    members = cluster_events(events, cfg)

    groups: dict[str, Group] = {}
    for cid in sorted(members):
        urls = members[cid]
        if len(urls) < 2 or len(urls) > L.max_cluster_urls or not split.trains(cid, L.holdout):
            continue
        sample = urls[: L.k]
        # two URLs or more: an alignment, never None
        cons = cast(Consensus, linear_alignment(sample, L.k) if aligner == "dustlin" else progressive_alignment(sample))
        parts = parts_of(cons, L.max_noise)
        if parts is None:
            continue
        c = contribution(parts, {host_of(u) for u in sample}, L.generalize)
        g = groups.get(c.shape_id)
        if g is None:
            g = groups[c.shape_id] = Group(c.shape)
        g.add(c, L.card_set)

    by_host: dict[str, list[tuple[str, str]]] = {}
    for cid in sorted(members):
        if split.validates(cid, L.holdout):
            for u in members[cid]:
                by_host.setdefault(host_of(u), []).append((u, cid))

    valid: list[tuple[Rule, object]] = []
    for sid in sorted(groups):
        for cand in groups[sid].candidates(L.min_freq, L.card_set):
            rule = Rule(
                id=cand.id,
                hosts=list(cand.hosts),
                context=cand.context,
                transformation=cand.transformation,
                freq=cand.freq,
                status=ACTIVE,
            )
            compiled = rule.compile()
            forms = (
                (f, cid) for h in cand.hosts for u, cid in by_host.get(h, ()) if (f := compiled.apply(u)) is not None
            )
            nsupp, nci = support_counts(forms)
            rule.support, rule.fpr = nsupp, round(fpr(nsupp, nci), 6)
            if nsupp >= L.min_supp and rule.fpr <= L.fpr_max + 1e-12:
                valid.append((rule, compiled))
    return eliminate_redundant(valid, by_host)


def eliminate_redundant(valid, by_host) -> list[Rule]:
    """Alg. 6: drop r1 when support(r1) ⊆ support(r2); of two equal supports keep the more
    general rule (shorter context), then the lower id."""

    def urls_of(rule):
        return ((u, h) for h in rule.hosts for u, _ in by_host.get(h, ()))

    dropped = set()
    for i, (r1, c1) in enumerate(valid):
        for j, (r2, c2) in enumerate(valid):
            if i == j or j in dropped or not set(r1.hosts) & set(r2.hosts):
                continue
            if refines(c1, c2, urls_of(r1)):
                equal = refines(c2, c1, urls_of(r2))
                if not equal or (len(r2.context), r2.id) < (len(r1.context), r1.id):
                    dropped.add(i)
                    break
    return sorted((r for i, (r, _) in enumerate(valid) if i not in dropped), key=rule_order)
