"""Rule-set quality against ground truth, in the seeds' metrics (DESIGN.md §5).

Over N distinct URLs with known contents (C distinct), keyed into N' canonical keys:
- compression CR = 1 - N'/N (Lei; Koppula's reduction ratio; DustBuster's discovered redundancy)
- coverage = URLs merged with a true duplicate / (N - C): the share of redundant URLs removed
  (the thesis' Eq. 2.3, Lei's dup-reduction), counting only correct merges
- lost = contents a crawler never fetches when it fetches the first-seen URL of each key
- NP = pairs under one key that are true duplicates / all pairs under one key (Koppula)
- AR/R = N * CR / number of rules (Koppula)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Callable, Mapping

import msgspec


class Metrics(msgspec.Struct):
    urls: int
    contents: int
    keys: int
    compression: float
    coverage: float
    lost: int
    lost_rate: float
    np: float
    arr: float | None = None


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def evaluate(truth: Mapping[str, str], canonicalize: Callable[[str], str], n_rules: int | None = None) -> Metrics:
    """``truth`` maps each URL to its content id, in fetch order (dicts keep insertion order)."""
    by_key: dict[str, list[str]] = defaultdict(list)
    for url, content in truth.items():
        by_key[canonicalize(url)].append(content)
    n = len(truth)
    c = len(set(truth.values()))
    keys = len(by_key)
    correct_merges = 0
    pairs_all = pairs_true = 0
    fetched = set()
    for contents in by_key.values():
        fetched.add(contents[0])
        per = Counter(contents)
        correct_merges += sum(m - 1 for m in per.values())
        pairs_all += _pairs(len(contents))
        pairs_true += sum(_pairs(m) for m in per.values())
    cr = 1.0 - keys / n if n else 0.0
    lost = c - len(fetched)
    return Metrics(
        urls=n,
        contents=c,
        keys=keys,
        compression=cr,
        coverage=correct_merges / (n - c) if n > c else 1.0,
        lost=lost,
        lost_rate=lost / c if c else 0.0,
        np=pairs_true / pairs_all if pairs_all else 1.0,
        arr=(n * cr / n_rules) if n_rules else None,
    )
