"""Cross-site statistics of transfer classes (names.py ``transfer_class``): on how many
sites a class is active and on how many it was vetoed, which decides whether it is
*proven* and a new site adopts it on one cluster of its own evidence (params.py).

A worker group routes each site to one partition, and these counts span sites (one of
the sums shared.py lists): a partition's learner counts its own sites (``own``) and adds
what the other partitions counted (``others``), as of the last time the group pooled
them (``pool``). A single learner has no others, and decides as before.
"""

from __future__ import annotations

from ..state.store import Store

ClassCounts = dict[str, tuple[int, int]]  # class -> (sites active, sites vetoed)


class TransferStats:
    def __init__(self, store: Store, min_freq: int):
        self.own = store.table("pname")  # class -> [active, vetoed] on this learner's sites
        self.others = store.table("ppool")  # class -> [active, vetoed] on other partitions' sites, as pooled
        self.min_freq = min_freq

    def counts(self, cls: str) -> tuple[int, int]:
        a, v = self.own.get(cls) or (0, 0)
        oa, ov = self.others.get(cls) or (0, 0)
        return a + oa, v + ov

    def proven(self, cls: str) -> bool:
        """Active on ``min_freq`` sites or more and vetoed on at most a tenth as many."""
        active, vetoed = self.counts(cls)
        return active >= self.min_freq and vetoed * 10 <= active

    def add(self, cls: str, active: int, vetoed: int) -> bool:
        """Count a site's change of fate; True when that makes the class proven."""
        before = self.proven(cls)
        a, v = self.own.get(cls) or (0, 0)
        a, v = a + active, v + vetoed
        if a or v:
            self.own[cls] = [a, v]
        else:
            self.own.pop(cls)
        return not before and self.proven(cls)

    def own_counts(self) -> ClassCounts:
        """This learner's counts, for the group to pool (classes in key order)."""
        return {cls: (c[0], c[1]) for cls, c in self.own.items()}

    def pool(self, others: ClassCounts) -> list[str]:
        """The other partitions' counts as now pooled (replacing the last); returns the
        classes this makes proven, in key order (their waiting sites adopt them)."""
        changed = sorted(set(others) | {cls for cls, _ in self.others.items()})
        woke = []
        for cls in changed:
            was = self.proven(cls)
            c = others.get(cls)
            if c and (c[0] or c[1]):
                self.others[cls] = [c[0], c[1]]
            else:
                self.others.pop(cls)
            if not was and self.proven(cls):
                woke.append(cls)
        return woke
