"""Rule validation shared by the online and batch learners (thesis Alg. 3, 6 and 8).

Nsupp counts URL pairs a rule maps to one canonical form; Nci those pairs whose URLs
share a dup-cluster; fpr = 1 - Nci/Nsupp (DustLin-MR's reduce). Refinement (Alg. 6) is
tested on partitions instead of materialized pair sets: support(r1) ⊆ support(r2) iff
every r1 block of two or more URLs lies inside one r2 block, which is linear in URLs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..rules.ruleset import CompiledRule


def pairs(n: int) -> int:
    return n * (n - 1) // 2


def support_counts(forms: Iterable[tuple[str, str]]) -> tuple[int, int]:
    """(Nsupp, Nci) from (canonical form, cluster id) of each validation URL a rule matches."""
    by_form: Counter = Counter()
    by_pair: Counter = Counter()
    for form, cid in forms:
        by_form[form] += 1
        by_pair[(form, cid)] += 1
    return sum(pairs(n) for n in by_form.values()), sum(pairs(n) for n in by_pair.values())


def fpr(nsupp: int, nci: int) -> float:
    return 1.0 - nci / nsupp if nsupp else 0.0


def refines(r1: CompiledRule, r2: CompiledRule, urls: Iterable[tuple[str, str]]) -> bool:
    """support(r1) ⊆ support(r2), over ``urls`` = (url, host) of r1's validation URLs."""
    hosts2 = set(r2.rule.hosts)
    blocks: dict[str, list] = {}  # r1 form -> [URL count, the r2 forms seen]
    for url, host in urls:
        f1 = r1.apply(url)
        if f1 is None:
            continue
        f2 = r2.apply(url) if host in hosts2 else None
        b = blocks.get(f1)
        if b is None:
            blocks[f1] = [1, {f2}]
        else:
            b[0] += 1
            b[1].add(f2)
            if len(b[1]) > 1 or f2 is None:
                return False
    return True
