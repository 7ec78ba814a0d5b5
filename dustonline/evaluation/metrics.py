"""Rule-set quality against ground truth, in the seeds' metrics (docs/DESIGN.md §5).

Over N distinct URLs with known contents (C distinct), keyed into N' canonical keys:
- compression CR = 1 - N'/N (Lei; Koppula's reduction ratio; DustBuster's discovered redundancy)
- coverage = URLs merged with a true duplicate / (N - C): the share of redundant URLs removed.
  The thesis' Eq. 2.3, 1 - (N' - C')/(N - C), with C' = contents still fetched; it equals ours
  when no merge is wrong, and credits a wrong merge otherwise, which ours does not
- dup_reduction = 1 - (1 - C'/N') / (1 - C/N): Lei's Eq. 2, literally (the thesis calls its
  coverage by this name, but the two differ: N=10, C=5, N'=7 gives 0.43 here, 0.6 there)
- lost = contents a crawler never fetches when it fetches the first-seen URL of each key
- NP = pairs under one key that are true duplicates / all pairs under one key (Koppula)
- AR/R = N * CR / number of rules (Koppula)

``KeyStats`` keeps all of them incrementally, one URL at a time, so a prequential replay
(evaluation.py) reads them at any point of the stream for the cost of one dict update.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import msgspec


class Metrics(msgspec.Struct):
    urls: int
    contents: int
    keys: int
    compression: float
    coverage: float | None  # None: there were no duplicates to find
    lost: int
    lost_rate: float
    np: float
    arr: float | None = None
    wrong_merges: int = 0  # URLs keyed onto a key none of whose URLs had their content
    dup_reduction: float | None = None


class KeyStats:
    """Distinct URLs added in fetch order, each with its key and its content id."""

    __slots__ = ("groups", "contents", "fetched", "n", "correct", "wrong", "pairs_all", "pairs_true")

    def __init__(self) -> None:
        self.groups: dict[str, list] = {}  # key -> [size, {content: count}]
        self.contents: set[str] = set()
        self.fetched: set[str] = set()  # the first content of each key: what a crawler fetches
        self.n = self.correct = self.wrong = self.pairs_all = self.pairs_true = 0

    def add(self, key: str, content: str) -> bool | None:
        """None: a new key (fetched); True: merged with a true duplicate; False: a wrong merge."""
        self.n += 1
        self.contents.add(content)
        g = self.groups.get(key)
        if g is None:
            self.groups[key] = [1, {content: 1}]
            self.fetched.add(content)
            return None
        per = g[1]
        c = per.get(content, 0)
        self.pairs_all += g[0]
        self.pairs_true += c
        g[0] += 1
        per[content] = c + 1
        if c:
            self.correct += 1
            return True
        self.wrong += 1
        return False

    def metrics(self, n_rules: int | None = None) -> Metrics:
        n, c, keys = self.n, len(self.contents), len(self.groups)
        cr = 1.0 - keys / n if n else 0.0
        lost = c - len(self.fetched)
        return Metrics(
            urls=n,
            contents=c,
            keys=keys,
            compression=cr,
            coverage=self.correct / (n - c) if n > c else None,
            lost=lost,
            lost_rate=lost / c if c else 0.0,
            np=self.pairs_true / self.pairs_all if self.pairs_all else 1.0,
            arr=(n * cr / n_rules) if n_rules else None,
            wrong_merges=self.wrong,
            dup_reduction=(1.0 - (1.0 - (c - lost) / keys) / (1.0 - c / n)) if n > c else None,
        )


def evaluate_keys(pairs: Iterable[tuple[str, str]], n_rules: int | None = None) -> Metrics:
    """``pairs`` are (key, content) of distinct URLs in fetch order."""
    ks = KeyStats()
    for key, content in pairs:
        ks.add(key, content)
    return ks.metrics(n_rules)


def evaluate(truth: Mapping[str, str], canonicalize: Callable[[str], str], n_rules: int | None = None) -> Metrics:
    """``truth`` maps each URL to its content id, in fetch order (dicts keep insertion order)."""
    return evaluate_keys(((canonicalize(u), c) for u, c in truth.items()), n_rules)
