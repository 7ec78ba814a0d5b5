"""What a worker group learns, embedded: one learner per partition of the pages topic.

Each site's evidence is in one partition; what a learner counts across sites (shared.py:
transfer classes, rule-shape clusters, validation counts, rendering values) is pooled
as a worker group pools it at flush markers (stream/pool.py): each learner gets the
other partitions' counts combined. A group pools while it learns, every
``learning.pool_every`` events of its input (one round from the counts as they stand),
and when its input ends (rounds repeat while the counts change, up to ``POOL_ROUNDS``:
an adoption is one more site for its class)."""

from __future__ import annotations

from ..config import Config
from ..events.event import FetchEvent
from ..events.routing import partition_for, site_key
from ..rules.ruleset import Rule
from .online import OnlineLearner
from .protocol import LearnerBase
from .shared import Counts, others_of

POOL_ROUNDS = 8


class PartitionedLearner(LearnerBase):
    """One OnlineLearner per partition, events routed as Kafka routes them, and their
    rule changes merged as the worker group merges them (rulemerge.py): what
    ``dustonline worker`` learns from a topic of ``partitions`` partitions."""

    def __init__(self, config: Config, partitions: int, store_factory=None):
        from ..rules.merge import RuleMerger

        self.partitions = partitions
        self.learners = [OnlineLearner(config, store_factory(p) if store_factory else None) for p in range(partitions)]
        self.merger = RuleMerger()
        self.pool_every = config.learning.pool_every if partitions > 1 else 0
        # the group's input so far, from the learners' own counts: a resumed run pools
        # at the same points as one that never stopped
        self.events = sum(lrn.stats.events for lrn in self.learners)
        self._pooled: list[Counts] | None = None  # the counts as last pooled

    def _merged(self, p: int, changes: list[Rule]) -> list[Rule]:
        out = []
        for r in changes:
            m = self.merger.apply(p, r)
            if m is not None:
                out.append(m)
        return out

    def learn_one(self, ev: FetchEvent) -> list[Rule]:
        p = partition_for(site_key(ev.url), self.partitions)
        changes = self.learners[p].learn_one(ev)
        out = self._merged(p, changes) if changes else changes
        self.events += 1
        if self.pool_every and self.events % self.pool_every == 0:
            out = out + self._derived()
            out += self._round() or []
        return out

    def _derived(self) -> list[Rule]:
        return [m for p, lrn in enumerate(self.learners) for m in self._merged(p, lrn.flush())]

    def _round(self) -> list[Rule] | None:
        """One pooling round: each learner adopts the others' counts as they stand, and
        derives what follows. None when the counts are those pooled last."""
        counts = [lrn.shared_counts() for lrn in self.learners]
        if counts == self._pooled:
            return None
        self._pooled = counts
        out: list[Rule] = []
        for p, (lrn, others) in enumerate(zip(self.learners, others_of(counts))):
            out += self._merged(p, lrn.pool(others))
            out += self._merged(p, lrn.flush())
        return out

    def flush(self) -> list[Rule]:
        out = self._derived()
        for _ in range(POOL_ROUNDS if self.partitions > 1 else 0):
            changes = self._round()
            if changes is None:
                break
            out += changes
        return out

    def checkpoint(self) -> None:
        for lrn in self.learners:
            lrn.checkpoint()

    def close(self) -> None:
        for lrn in self.learners:
            lrn.close()

    def rules(self) -> list[Rule]:
        return self.merger.rules()

    def summary(self) -> dict:
        total: dict = {}
        for lrn in self.learners:
            for k, v in lrn.summary().items():
                if isinstance(v, (int, float)):
                    total[k] = total.get(k, 0) + v
        total["active_rules"] = len(self.rules())
        return total
