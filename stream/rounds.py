"""Replay rounds: pooling points that a replay places in the log, so that a worker group
pools where ``dustonline learn`` pools.

``learn`` with several shards pools their cross-site counts every ``learning.pool_every``
events of its input (learner/shards.py). A worker group cannot find those points by
itself: its coordinator sees the pages topic grow, not which event is the 5,000th. The
replay knows: after every ``pool_every`` events it writes a round marker into every
partition (``RoundPlacer``). A partition that reads one derives, publishes its counts
tagged with the round and learns nothing past it until the coordinator, once every
partition reached the marker, has put all shards' counts of that round on the transfer
topic (pool.py); each worker reads them there (``RoundReader``), adopts its shards'
share and goes on. Every input of that decision is in the log, so replays and recoveries
pool at the same points with the same counts.

While a replay places rounds, a ``Placer`` record on the transfer topic keeps the
coordinator from placing its own (they would fall elsewhere), and when it ends the
records it covered are not counted towards the coordinator's periodic rounds.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable

from dustonline.config import Config
from dustonline.events.event import FetchEvent
from dustonline.learner.shards import shard_count

from . import clients, topics

log = logging.getLogger("dustonline.rounds")

LEASE_SECONDS = 30.0  # a replay renews its Placer a third of this before it lapses
KEEP = 4  # pooled rounds a reader keeps: a partition waits at the newest or the one before


class RoundPlacer:
    """A replay's round markers: ``after(sent)`` once per event sent."""

    def __init__(self, cfg: Config, prod, topic: str, flush_pack: Callable[[], object] = lambda: None):
        self.cfg, self.prod, self.topic, self.flush_pack = cfg, prod, topic, flush_pack
        parts = prod.partitions_for(topic) or set()
        self.npart = len(parts)
        self.every = cfg.learning.pool_every
        # one partition pools its shards itself, at the same counts (shards.ShardGroup)
        self.active = self.every > 0 and self.npart > 1 and shard_count(cfg, self.npart) > 1
        self.run = uuid.uuid4().hex[:12]  # ids of another replay into the same topic differ
        self.placed = 0
        self.transfer = topics.transfer_topic_name(cfg) if topic == cfg.kafka.pages_topic else None
        self._renewed = 0.0

    def start(self) -> None:
        if self.active and self.transfer is not None:
            from .admin import ensure_topics

            ensure_topics(self.cfg, compacted=[self.transfer])
            self._lease(time.time() + LEASE_SECONDS)

    def after(self, sent: int) -> None:
        """``sent`` events are out: a round marker into every partition when that is a
        multiple of ``pool_every``."""
        if not self.active:
            return
        if self.transfer is not None and time.time() - self._renewed > LEASE_SECONDS / 3:
            self._lease(time.time() + LEASE_SECONDS)  # a slowed replay holds it between rounds too
        if sent % self.every:
            return
        self.flush_pack()  # the events before the marker go before it
        self.placed += 1
        value = f"{self.run}/{self.placed}".encode()
        for p in range(self.npart):
            self.prod.send(self.topic, key=b"", value=value, partition=p, headers=topics.ROUND_HEADERS)

    def finish(self) -> None:
        """The replay is over (or failed): the coordinator may place rounds again, past
        the records this replay covered. With joins, a last round marker first: `learn`
        learns a joined domain's held events and joins at the end of its input, and a
        group can only at a point every partition's log has."""
        if not self.active or self.transfer is None:
            return
        if self.cfg.learning.join_after:
            self.flush_pack()
            self.placed += 1
            value = f"{self.run}/{self.placed}".encode()
            for p in range(self.npart):
                self.prod.send(self.topic, key=b"", value=value, partition=p, headers=topics.ROUND_HEADERS)
        self.prod.flush()
        from kafka import TopicPartition

        c = clients.consumer(self.cfg, enable_auto_commit=False)
        try:
            ends = c.end_offsets([TopicPartition(self.topic, p) for p in range(self.npart)])
        finally:
            c.close()
        self._lease(0.0, {tp.partition: off for tp, off in ends.items()})

    def _lease(self, until: float, ends: dict[int, int] | None = None) -> None:
        assert self.transfer is not None
        value = topics.placer_value(topics.Placer(until, ends or {}))
        self.prod.send(self.transfer, key=topics.PLACER_KEY, value=value).get(timeout=60)
        self._renewed = time.time()


class RoundReader:
    """A worker's view of the pooled rounds on the transfer topic, and of a replay placing
    rounds, read in a thread of its own; ``on_new()`` is called (from that thread) when a
    pooled round arrives."""

    def __init__(self, cfg: Config, transfer_topic: str, on_new: Callable[[], object]):
        self.cfg, self.topic, self.on_new = cfg, transfer_topic, on_new
        self._pools: OrderedDict[str, topics.Pooled] = OrderedDict()
        self._handovers: dict[tuple[str, str], bytes] = {}  # (round id, domain) -> its URLs handed over
        self._thread: threading.Thread | None = None
        self._until = 0.0  # the replay's Placer: it places the derivation points until then

    def replaying(self) -> bool:
        """Whether a replay is placing rounds: a partition quiet meanwhile waits for its
        events rather than deriving early (a slowed replay would otherwise derive where
        ``learn`` does not); the replay's end is a point where it derives."""
        return self._until > time.time()

    def get(self, round_id: str) -> topics.Pooled | None:
        return self._pools.get(round_id)

    def handover(self, round_id: str, site: str) -> list[FetchEvent] | None:
        """The URLs of ``site`` handed over at round ``round_id``; None until they arrive."""
        value = self._handovers.get((round_id, site))
        return topics.handover_of(value) if value is not None else None

    def start(self) -> None:
        """Idempotent; the thread lives as long as the worker (a daemon)."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="dustonline-rounds", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        consumer = None
        while True:
            try:
                if consumer is None:
                    consumer = clients.reader_from_start(self.cfg, self.topic)
                for recs in consumer.poll(timeout_ms=500, max_records=1000).values():
                    for rec in recs:
                        self._take(rec)
            except Exception:
                log.exception("reading pooled rounds failed; trying again")
                if consumer is not None:
                    consumer.close()
                consumer = None
                time.sleep(1.0)

    def _take(self, rec) -> None:
        if rec.key == topics.PLACER_KEY and rec.value:
            try:
                self._until = topics.placer_of(rec.value).until
            except ValueError as e:
                log.error("transfer topic offset %d: not a replay's placer (%s); skipped", rec.offset, e)
            return
        if rec.key is not None and rec.key.startswith(topics.HANDOVER_PREFIX) and rec.value is not None:
            self._handovers[topics.handover_of_key(rec.key)] = rec.value
            self.on_new()
            return
        if rec.key != topics.POOL_KEY or not rec.value:
            return
        try:
            pooled = topics.pooled_of(rec.value)
        except (ValueError, TypeError) as e:
            log.error("transfer topic offset %d: not a pooled round (%s); skipped", rec.offset, e)
            return
        self._pools[pooled.round] = pooled
        self._pools.move_to_end(pooled.round)
        while len(self._pools) > KEEP:
            gone, _ = self._pools.popitem(last=False)
            for key in [k for k in self._handovers if k[0] == gone]:
                del self._handovers[key]
        self.on_new()
