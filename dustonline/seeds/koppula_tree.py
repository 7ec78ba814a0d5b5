"""Koppula et al. 2010, §3.2.2, Algorithm 5 (GeneralizePairwiseRules): context
generalization by a bottom-up decision tree whose classes are the transformations, then
transformation generalization per generalized context. Pure Python, deterministic.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

STAR = "*"  # the wildcard a generalized context may take (Definition 2)
ABSENT = None  # ⊥: the key is not in the URL


@dataclass(frozen=True)
class TreeParams:
    """threshold_|V| (Alg. 5 line 8) and the majority a value needs to be kept (§3.2.2, "we
    assign * to a node if there is no single value v which holds majority"). The paper
    gives no number for threshold_|V|; 2 is ours."""

    threshold_v: int = 2
    majority: float = 0.5
    merge_wildcards: bool = False  # line 14 merges nodes of one value v; is `*` such a value?


def _entropy(counts) -> float:
    n = sum(counts)
    return -sum(c / n * math.log2(c / n) for c in counts if c) if n else 0.0


def info_gain(contexts: list[dict], classes: list, key) -> float:
    """Alg. 5 line 3: Entropy(R) - sum_v P(c(key)=v) Entropy(R | c(key)=v)."""
    base = _entropy(Counter(classes).values())
    by_v: dict = {}
    for c, t in zip(contexts, classes):
        by_v.setdefault(c.get(key, ABSENT), Counter())[t] += 1
    n = len(classes)
    return base - sum(sum(cnt.values()) / n * _entropy(cnt.values()) for cnt in by_v.values())


def _ksort(key) -> str:
    return repr(key)


def generalize(contexts: list[dict], classes: list, P: TreeParams | None = None) -> list[dict]:
    """Alg. 5 lines 1-18: one generalized context per pair-wise rule (the path of its leaf).

    Nodes start as the classes. Keys are taken by descending information gain; at each
    level a node takes the key's majority value when it has one and sees at most
    threshold_|V| values, else `*` (lines 6-13); ⊥ is never a context value (Definition 2:
    C: K -> V ∪ {*}), so a key most rules lack is `*`. Nodes of equal value then merge
    (line 14), so keys that do not tell classes apart are generalized across classes.
    A rule whose own value lost to the majority keeps its node's value: the generalized
    rule stands for the node, as a path of the paper's tree does."""
    P = P or TreeParams()
    n = len(contexts)
    keys = sorted({k for c in contexts for k in c}, key=_ksort)
    gains = {k: info_gain(contexts, classes, k) for k in keys}
    order = sorted(keys, key=lambda k: (-round(gains[k], 12), _ksort(k)))
    gen: list[dict] = [{} for _ in range(n)]
    by_class: dict = {}
    for i, t in enumerate(classes):
        by_class.setdefault(t, []).append(i)
    nodes = [by_class[t] for t in sorted(by_class, key=repr)]
    for key in order:
        merged: dict = {}
        for members in nodes:
            vals = Counter(contexts[i].get(key, ABSENT) for i in members)
            top, cnt = min(vals.items(), key=lambda kv: (-kv[1], repr(kv[0])))
            v = top if len(vals) <= P.threshold_v and cnt > P.majority * len(members) and top is not ABSENT else STAR
            for i in members:
                gen[i][key] = v
            if v == STAR and not P.merge_wildcards:
                merged[("*", members[0])] = members
            else:
                merged.setdefault(("v", repr(v)), []).extend(members)
        nodes = [sorted(merged[v]) for v in sorted(merged, key=repr)]
    return gen


def generalize_transformations(gen: list[dict], classes: list) -> dict[tuple, tuple]:
    """Alg. 5 line 19 (GeneralizeTransformations): every generalized context keeps one
    transformation. Where several remain, they differ in keys the context leaves open
    (the paper replaces such a key's value by a wildcard); a crawler needs one concrete
    key, so we keep the transformation most pair-wise rules share (ties: smallest repr)."""
    by_ctx: dict[tuple, Counter] = {}
    for g, t in zip(gen, classes):
        by_ctx.setdefault(freeze(g), Counter())[t] += 1
    return {ctx: min(cnt.items(), key=lambda kv: (-kv[1], repr(kv[0])))[0] for ctx, cnt in by_ctx.items()}


def freeze(ctx: dict) -> tuple:
    return tuple(sorted(ctx.items(), key=lambda kv: _ksort(kv[0])))
