"""What a worker group learns, embedded: the shards of shards.py, with their rule
changes merged as the worker group merges them (rules/merge.py).

``PartitionedLearner(config, partitions)`` is what ``dustonline worker`` learns from a
pages topic of ``partitions`` partitions: ``learning.shards`` shard learners (one per
partition when it is 0), pooling what they count across sites (shared.py) every
``learning.pool_every`` events of the input and, while the counts change, when it ends.
With ``learning.shards`` set, the partition count only says where the shards would be:
every count that divides it learns the same rules."""

from __future__ import annotations

from ..config import Config
from ..events.event import FetchEvent
from ..rules.merge import RuleMerger
from ..rules.ruleset import Rule
from ..state.store import Store
from .joins import Joins
from .online import OnlineLearner
from .protocol import LearnerBase
from .shards import POOL_ROUNDS, ShardGroup, shard_count, shards_of

__all__ = ["POOL_ROUNDS", "PartitionedLearner"]


class PartitionedLearner(LearnerBase):
    """Shard learners, events routed as Kafka routes them, rule changes merged over the
    shards. ``store_factory(shard)`` gives a shard's store (default: in memory), a
    namespace of ``root`` if given (Store.namespace)."""

    def __init__(self, config: Config, partitions: int, store_factory=None, root: Store | None = None):
        self.partitions = partitions
        self.shards = shard_count(config, partitions)
        self.group = ShardGroup(
            config, range(self.shards), self.shards, store_factory or (lambda s: None), rounds=True, root=root
        )
        self.learners: list[OnlineLearner] = self.group.learners  # by shard
        self.merger = RuleMerger()

    @property
    def joins(self) -> Joins | None:
        """The domains joined so far (joins.py), when ``learning.join_after`` is set."""
        return self.group.joins

    def learn_one(self, ev: FetchEvent) -> list[Rule]:
        partials = self.group.learn_one(ev)
        return self.merger.apply_all(partials) if partials else []

    def flush(self) -> list[Rule]:
        return self.merger.apply_all(self.group.flush())

    def partition_summary(self, p: int) -> dict:
        """The counters of partition ``p``'s shards summed: what its worker reports."""
        return self.group.summary(shards_of(p, self.partitions, self.shards))

    def checkpoint(self) -> None:
        self.group.checkpoint()

    def close(self) -> None:
        self.group.close()

    def rules(self) -> list[Rule]:
        return self.merger.rules()

    def summary(self) -> dict:
        total = self.group.summary()
        total["active_rules"] = len(self.rules())
        return total
