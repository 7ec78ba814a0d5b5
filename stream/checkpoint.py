"""The checkpoint protocol: exactly-once learner state on at-least-once delivery.

The learner buffers its state between checkpoints (``state.py``). A checkpoint goes to
the changelog partition as ONE record batch, which the broker appends whole or not at
all, ending with the source offset it covers; its events are acked only after it is
queued, and Faust flushes the producer before it commits offsets. So the changelog only
ever holds whole checkpoints, committed offsets never pass the last one, and a worker
restoring a partition skips the re-delivered events its checkpoint already holds:
nothing is lost or counted twice. (Faust's ``exactly_once`` transactions were tried
first and dropped: at a rebalance they leave aborted writes in the local stores and
stall recovery behind open transactions.)
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from . import faust_compat
from .metrics import WorkerMetrics
from .outputs import Outputs

if TYPE_CHECKING:
    from .learn import Partition

# one checkpoint = one record batch: the changelog must accept batches this large
MAX_CHECKPOINT_BYTES = 48 << 20
CHANGELOG_CONFIGS = {"max.message.bytes": str(64 << 20)}


class Checkpoints:
    """Checkpoints of the partitions in ``parts`` (the learn agent's, by pages partition),
    into ``table``'s changelog."""

    def __init__(self, app, table, parts: dict[int, Partition], outputs: Outputs, metrics: WorkerMetrics):
        self.app = app
        self.table = table
        self.parts = parts
        self.outputs = outputs
        self.metrics = metrics

    async def write(self, ps: Partition) -> None:
        """Learner state -> local table and one changelog batch with the offset it
        covers, then ack its messages to Faust's consumer; no await in between, so a
        commit of Faust's sees all of it queued (and flushes it before committing the
        offsets) or none of it."""
        t0 = time.perf_counter()
        aio = faust_compat.changelog_producer(self.app)
        topic = self.table.changelog_topic.get_topic_name()
        await faust_compat.wait_for_metadata(aio, topic)
        if self.parts.get(ps.p) is not ps:
            return  # revoked meanwhile: the next owner has it from the last checkpoint
        # -- no await from here on
        ps.learner.checkpoint()
        records = ps.backend.commit(ps.last_offset)
        self._queue_changelog(aio, topic, ps.p, records)
        self.outputs.deliver()  # rule partials and dead letters of these events are out
        ps.applied, ps.since_checkpoint = ps.last_offset, 0
        pending, ps.pending = ps.pending, []
        ack = self.app.consumer.ack  # bookkeeping only: Faust commits what is acked
        for msg in pending:
            ack(msg)
        # -- end
        m = self.metrics
        m.checkpoints.inc()
        m.checkpoint_records.inc(len(records))
        m.checkpoint_seconds.observe(time.perf_counter() - t0)
        m.set_learner(ps.p, ps.learner.summary())

    def _queue_changelog(self, aio, topic: str, p: int, records) -> None:
        """The checkpoint into the producer's queue as one record batch (atomic on the
        broker), synchronously: aiokafka's ``send`` may wait, and a commit could run in
        that wait."""
        from faust.types import TP

        batch = faust_compat.new_batch(MAX_CHECKPOINT_BYTES)
        size = 0
        for k, v in records.items():
            size += len(k) + (len(v) if v is not None else 0) + 16
            if batch.append(timestamp=None, key=k, value=v) is None:
                raise RuntimeError(
                    f"checkpoint of partition {p} over {MAX_CHECKPOINT_BYTES >> 20} MiB "
                    f"({len(records)} records): lower kafka.checkpoint_every"
                )
        sent = faust_compat.queue_batch_now(aio, batch, topic, p)
        self.metrics.checkpoint_bytes.observe(size)
        data, ftp, count, parts, ps = self.table.data, TP(topic, p), len(records), self.parts, self.parts.get(p)

        def persisted(fut):  # as Faust's changelog callback: recovery here starts past it
            if parts.get(p) is ps and not fut.cancelled() and fut.exception() is None:
                data.set_persisted_offset(ftp, fut.result().offset + count - 1)

        sent.add_done_callback(persisted)
