"""What a worker group learns, embedded: one learner per partition of the pages topic.

Each site's evidence is in one partition; what a learner counts across sites (shared.py:
transfer classes, rule-shape clusters, validation counts, rendering values) is pooled
when the group flushes, as a worker group pools it at flush markers (stream/pool.py):
each learner gets the other partitions' counts combined. Rounds repeat while the counts
change (an adoption is one more site for its class), up to ``POOL_ROUNDS``."""

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
        return self._merged(p, changes) if changes else changes

    def flush(self) -> list[Rule]:
        out = [m for p, lrn in enumerate(self.learners) for m in self._merged(p, lrn.flush())]
        for _ in range(POOL_ROUNDS if self.partitions > 1 else 0):
            counts = [lrn.shared_counts() for lrn in self.learners]
            if counts == self._pooled:
                break
            self._pooled = counts
            for p, (lrn, others) in enumerate(zip(self.learners, others_of(counts))):
                out += self._merged(p, lrn.pool(others))
                out += self._merged(p, lrn.flush())
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
