"""Pooling the cross-site statistics of a worker group (dustonline/learner/transfer.py):
each partition's learner counts on how many of its sites a transfer class is active or
vetoed; a site adopts a class proven on enough sites of *any* partition.

After a partition derives at a flush marker, its learner's counts go to the compacted
transfer topic, keyed by the partition, with the marker's offset (learn.py). The worker
that owns pages partition 0 coordinates: when every pages partition has been learned to
its end (each one's counts are as of its last record), it sums them and, if they changed
since it last pooled, writes into every partition a flush marker carrying the sum of the
*other* partitions' counts. Each learner adopts them where it reads the marker, derives,
and publishes its counts again; the rounds stop when the counts no longer change.

What a learner adopts is in its partition's log, so replays and recoveries pool at the
same points with the same counts; and a round starts only from counts that are complete
for every partition, so a group whose input has ended learns what ``dustonline learn
--partitions N`` learns (PartitionedLearner.flush does the same rounds). While traffic
never stops on some partition, no round starts: pooling then waits for a quiet moment.
"""

from __future__ import annotations

import logging
import time

from dustonline.config import Config
from dustonline.learner.partitioned import POOL_ROUNDS
from dustonline.learner.shared import Counts, others_of

from . import clients, topics

log = logging.getLogger("dustonline.worker")

CHECK_EVERY = 1.0  # seconds between the coordinator's looks at the end offsets


class PoolCoordinator:
    def __init__(self, cfg: Config, outputs, transfer_topic: str, rounds_counter=None):
        self.cfg = cfg
        self.outputs = outputs
        self.rounds_counter = rounds_counter
        self.topic = transfer_topic
        self._consumer = None
        self.counts: dict[int, topics.Transfer] = {}  # pages partition -> its latest counts
        self.pooled: list[Counts] | None = None  # the counts of the last round started
        self.rounds = 0  # rounds started since the counts last settled or new records came
        self._after = -1  # the pages partitions' end offsets summed, after the last round's markers
        self._checked = 0.0

    def _read(self) -> None:
        from kafka import TopicPartition

        if self._consumer is None:
            self._consumer = clients.consumer(self.cfg, enable_auto_commit=False, auto_offset_reset="earliest")
            tp = TopicPartition(self.topic, 0)
            self._consumer.assign([tp])
            self._consumer.seek_to_beginning(tp)
        for recs in self._consumer.poll(timeout_ms=0, max_records=10_000).values():
            for rec in recs:
                if rec.value:
                    t = topics.transfer_of(rec.value)
                    self.counts[t.partition] = t

    def _ends(self, npart: int) -> dict[int, int]:
        from kafka import TopicPartition

        K = self.cfg.kafka
        tps = [TopicPartition(K.pages_topic, p) for p in range(npart)]
        return {tp.partition: off for tp, off in self._consumer.end_offsets(tps).items()}

    def tick(self, npart: int) -> bool:
        """Start a round if every partition is learned to its end and the counts changed;
        True when markers were written."""
        now = time.monotonic()
        if now - self._checked < CHECK_EVERY:
            return False
        self._checked = now
        self._read()
        ends = self._ends(npart)
        if sum(ends.values()) > self._after:
            self.rounds = 0  # records came besides the markers: as a new PartitionedLearner.flush
        for p in range(npart):
            t = self.counts.get(p)
            if ends.get(p, 0) > (t.offset + 1 if t is not None else 0):
                return False  # records not learned yet, or learned but not published
        counts = [dict(self.counts[p].counts) if p in self.counts else {} for p in range(npart)]
        if counts == self.pooled:
            self.rounds = 0
            return False
        if self.rounds >= POOL_ROUNDS:
            return False  # as PartitionedLearner.flush: counts that keep changing wait for new records
        self.pooled = counts
        self.rounds += 1
        pages = self.cfg.kafka.pages_topic
        for p, others in enumerate(others_of(counts)):
            self.outputs.flush_marker(pages, p, others)
        self.outputs.deliver()
        self._after = sum(ends.values()) + npart
        if self.rounds_counter is not None:
            self.rounds_counter.inc()
        log.info("pooled transfer counts of %d partitions (%d classes)", npart, len({c for x in counts for c in x}))
        return True

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
