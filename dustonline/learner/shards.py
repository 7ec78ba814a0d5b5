"""Shards: what a worker group places on its partitions, so that its rules do not depend
on how many partitions or workers it has.

Every site belongs to one of ``learning.shards`` shards, by the murmur2 hash of its
registered domain (as Kafka's partitioner hashes the pages topic's keys), and each shard
has a learner of its own (online.py). A topic of N partitions, N dividing the shard
count G, holds the sites of shard s in partition s mod N, since (h mod G) mod N = h mod N.
So whether the shards are learned in one process (``dustonline learn``), as N partitions
(``learn --partitions N``) or by a worker group, each shard learns the same events in the
same order and derives at the same points; what spans shards (shared.py) is pooled at
rounds: every ``learning.pool_every`` events of the group's input, and when it ends. The
rules are the same, as Flink's key groups keep a job's result independent of its
parallelism. ``learning.shards: 0`` is one shard per partition (one learner for
``dustonline learn``): rules then depend on the partition count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..config import Config
from ..events.event import FetchEvent
from ..events.routing import partition_of_host
from ..rules.ruleset import Rule
from ..rules.urls import host_of
from ..state.store import Store
from .online import OnlineLearner
from .shared import CHECKS, CLASSES, Counts, others_of

POOL_ROUNDS = 8  # rounds at the end of the input while the counts change (an adoption is one more site)

Partials = list[tuple[int, Rule]]  # (shard, rule change), for the merge (rules/merge.py)


def shard_count(config: Config, partitions: int) -> int:
    """The shards a group of ``partitions`` partitions learns; ValueError, saying what
    to change, when the partitions cannot hold whole shards."""
    shards = config.learning.shards or partitions
    if shards % partitions:
        raise ValueError(
            f"{partitions} partitions cannot hold learning.shards {shards} whole: use a partition count that "
            f"divides it ({', '.join(str(n) for n in range(1, shards + 1) if shards % n == 0)}), or set "
            "learning.shards to a multiple of the partitions (a different shard count learns other rules)"
        )
    return shards


def summed(learners: Iterable[OnlineLearner]) -> dict:
    """The learners' counters summed (sizes too: a site is in one shard)."""
    total: dict = {}
    for lrn in learners:
        for k, v in lrn.summary().items():
            if isinstance(v, (int, float)):
                total[k] = total.get(k, 0) + v
    return total


def changes(last: Counts, now: Counts) -> tuple[Counts, list[str]]:
    """What ``OnlineLearner.pool`` reads to go from adopting ``last`` to ``now``: every
    class (few; a class is judged again whether or not it changed), every name of a
    shape group with a change (a group's counts are replaced whole), changed
    validation counts; and the names gone."""
    gone = [k for k in last if k not in now]
    delta: Counts = {}
    sids: set[str] = set()
    for k, v in now.items():
        kind = k[:2]
        if kind == CLASSES:
            delta[k] = v
        elif last.get(k) != v:
            if kind == CHECKS:
                delta[k] = v
            else:
                sids.add(k[2:].partition("\x00")[0])
    for k in gone:
        if k[:2] != CLASSES and k[:2] != CHECKS:
            sids.add(k[2:].partition("\x00")[0])
    if sids:
        for k, v in now.items():
            kind = k[:2]
            if kind != CLASSES and kind != CHECKS and k[2:].partition("\x00")[0] in sids:
                delta[k] = v
    return delta, gone


def shards_of(partition: int, partitions: int, shards: int) -> list[int]:
    """The shards partition ``partition`` of ``partitions`` holds."""
    return list(range(partition, shards, partitions))


class ShardGroup:
    """The learners of some shards: all of them (embedded), or one partition's (a
    worker), each event routed to its site's shard. With ``rounds`` the shards pool
    among themselves, as no other partition holds shards; in a group of partitions the
    coordinator pools them (stream/pool.py) and hands each partition its shards' share
    (``pool``). Rule changes come back with their shard: the merge keeps one partial per
    rule and shard."""

    def __init__(
        self,
        config: Config,
        shards: Iterable[int],
        total: int,
        store_of: Callable[[int], Store | None],
        rounds: bool,
        root: Store | None = None,
    ):
        self.total = total
        self.root = root  # the store the shards' namespaces are in, if they are (Store.namespace)
        self.shards = list(shards)
        self.learners = [OnlineLearner(config, store_of(s)) for s in self.shards]
        self.rounds = rounds and len(self.shards) > 1
        self.pool_every = config.learning.pool_every if self.rounds else 0
        # the input so far, from the learners' own counts: a resumed run pools at the
        # same points as one that never stopped
        self.events = sum(lrn.stats.events for lrn in self.learners)
        self._index = {s: i for i, s in enumerate(self.shards)}
        self._pooled: list[Counts] | None = None  # the counts as last pooled among these shards
        self._adopted: list[Counts | None] = [None] * len(self.shards)  # what each adopted last

    def shard_of(self, url: str) -> int:
        """The index (in ``shards``) of the learner for ``url``'s site. A site of another
        partition's shard (a producer that partitions otherwise; the worker counts these)
        goes to one of these, the same for all of that site's events."""
        if len(self.shards) == 1:
            return 0
        s = partition_of_host(host_of(url), self.total)
        i = self._index.get(s)
        return i if i is not None else s % len(self.shards)

    def learn_one(self, ev: FetchEvent) -> Partials:
        i = self.shard_of(ev.url)
        changes = self.learners[i].learn_one(ev)
        out = [(self.shards[i], r) for r in changes] if changes else []
        self.events += 1
        if self.pool_every and self.events % self.pool_every == 0:
            out += self._derived()
            out += self._round() or []
        return out

    def _derived(self) -> Partials:
        return [(s, r) for s, lrn in zip(self.shards, self.learners) for r in lrn.flush()]

    def _round(self) -> Partials | None:
        """Each shard adopts the others' counts as they stand, and derives what follows;
        None when the counts are those pooled last."""
        counts = [lrn.shared_counts() for lrn in self.learners]
        if counts == self._pooled:
            return None
        self._pooled = counts
        out: Partials = []
        for i, others in enumerate(others_of(counts)):
            s, lrn = self.shards[i], self.learners[i]
            out += [(s, r) for r in self._adopt(i, others)]
            out += [(s, r) for r in lrn.flush()]
        return out

    def _adopt(self, i: int, others: Counts) -> list[Rule]:
        """Learner ``i`` adopts ``others``: what changed since it last adopted, when this
        group knows that (adopting the same again changes nothing), else all of it."""
        last = self._adopted[i]
        self._adopted[i] = others
        if last is None:
            return self.learners[i].pool(others)
        if others == last:
            return []
        delta, gone = changes(last, others)
        return self.learners[i].pool(delta, gone)

    def flush(self) -> Partials:
        """Derive every shard's rules; with ``rounds``, then pool until the counts settle
        (at most ``POOL_ROUNDS``)."""
        out = self._derived()
        for _ in range(POOL_ROUNDS if self.rounds else 0):
            changes = self._round()
            if changes is None:
                break
            out += changes
        return out

    def shared_counts(self) -> dict[int, Counts]:
        """Each shard's cross-site counts, for the group's coordinator."""
        return {s: lrn.shared_counts() for s, lrn in zip(self.shards, self.learners)}

    def pool(self, others: dict[int, Counts]) -> Partials:
        """Per shard, the other shards' counts combined (the coordinator's round); a shard
        with none adopts none, as in a round among shards. ``flush`` derives what follows."""
        return [(s, r) for i, s in enumerate(self.shards) for r in self._adopt(i, others.get(s, {}))]

    @property
    def derivation_pending(self) -> bool:
        return any(lrn.derivation_pending for lrn in self.learners)

    def summary(self) -> dict:
        return summed(self.learners)

    def checkpoint(self) -> None:
        for lrn in self.learners:
            lrn.checkpoint()
        if self.root is not None:
            self.root.flush()  # a namespace leaves syncing the backend to its owner

    def close(self) -> None:
        for lrn in self.learners:
            lrn.close()
        if self.root is not None:
            self.root.close()
