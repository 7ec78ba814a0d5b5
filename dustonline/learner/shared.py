"""What a learner counts across sites, which a worker group pools (DustLin-MR's reduce).

A worker group routes each site to one partition, so everything a learner knows about a
site is in one partition, except what spans sites: transfer classes (transfer.py),
clusters of one rule shape on many sites (generalize.py: shapes abstract hosts away),
the validation counts of a rule with hosts on several partitions, and what rendering
such a rule reads (the values and characters of its slots). ``OnlineLearner.shared_counts``
names each as kind NUL name -> a tuple of ints; a group sums them per name over the other
partitions (``others_of``) and hands each learner its sum (``OnlineLearner.pool``).
"""

from __future__ import annotations

Counts = dict[str, tuple[int, ...]]  # kind NUL name -> counts

CLASSES = "c\x00"  # a transfer class: (sites active, sites vetoed)
MEMBERS = "m\x00"  # shape id NUL member: (clusters,)
CHECKS = "v\x00"  # a candidate rule: (nsupp, nci, malformed, freq)
VALUES = "w\x00"  # shape id NUL a bound slot's value, or what freed (Group.view): (partitions that saw it,)
BITS = "b\x00"  # shape id NUL a slot's name: (character bits,), ORed rather than summed


def others_of(counts: list[Counts]) -> list[Counts]:
    """Per partition, the other partitions' counts combined (names in key order)."""
    names = sorted({name for c in counts for name in c})
    out: list[Counts] = [{} for _ in counts]
    total: dict[str, list[int]] = {}
    for c in counts:
        for name, v in c.items():
            if name.startswith(BITS):
                continue
            t = total.get(name)
            if t is None:
                total[name] = list(v)
            else:
                for i, x in enumerate(v):
                    t[i] += x
    for p, c in enumerate(counts):
        o = out[p]
        for name in names:
            if name.startswith(BITS):
                bits = 0
                for q, other in enumerate(counts):
                    if q != p and name in other:
                        bits |= other[name][0]
                if bits:
                    o[name] = (bits,)
                continue
            mine = c.get(name)
            v = tuple(total[name]) if mine is None else tuple(t - m for t, m in zip(total[name], mine))
            if any(v):
                o[name] = v
    return out
