"""Which partition of the pages topic a site lands on, without a Kafka import.

Kafka's default partitioner (Java, kafka-python, librdkafka's ``murmur2_random``) puts a
keyed record on ``(murmur2(key) & 0x7fffffff) % partitions``. The worker learns each
partition on its own, so ``PartitionedLearner`` routes events the same way: the embedded
learner then reproduces what a group of workers learns from the same stream.
"""

from __future__ import annotations

from .config import Config
from .events import FetchEvent
from .learner import Learner, OnlineLearner
from .rules import Rule
from .urls import host_of, site_of_host

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (seed 0x9747b28c), as a signed 32-bit int like Java's."""
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    n4 = length & ~3
    for i in range(0, n4, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length & 3
    if rest == 3:
        h ^= data[n4 + 2] << 16
    if rest >= 2:
        h ^= data[n4 + 1] << 8
    if rest >= 1:
        h ^= data[n4]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def site_key(url: str) -> bytes:
    """The pages topic's message key: the URL's registered domain (public suffix list)."""
    return site_of_host(host_of(url)).encode()


def partition_for(key: bytes, partitions: int) -> int:
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class PartitionedLearner(Learner):
    """One OnlineLearner per partition, events routed as Kafka routes them, and their
    rule changes merged as the worker group merges them (rulemerge.py): what
    ``dustonline worker`` learns from a topic of ``partitions`` partitions."""

    def __init__(self, config: Config, partitions: int, store_factory=None):
        from .rulemerge import RuleMerger

        self.partitions = partitions
        self.learners = [OnlineLearner(config, store_factory(p) if store_factory else None) for p in range(partitions)]
        self.merger = RuleMerger()

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
        return [m for p, lrn in enumerate(self.learners) for m in self._merged(p, lrn.flush())]

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
