"""The merge agent, DustLin-MR's reduce: partition learners publish their rule changes
keyed by rule id; the merge keeps the latest per (id, partition) in the ``rule-merge``
table and publishes the merged rule (dustonline/rules/merge.py) to the rules topic."""

from __future__ import annotations

import logging

import msgspec

from dustonline.rules.merge import RuleMerger, decode_partials, encode_partials
from dustonline.rules.ruleset import RETIRED

from . import faust_compat, topics
from .metrics import WorkerMetrics
from .outputs import Outputs

log = logging.getLogger("dustonline.worker")

_partial_dec = msgspec.json.Decoder(topics.Partial)
MERGE_BATCH = 1000  # partials merged per delivery at most
MERGE_WITHIN = 0.01  # seconds a buffer waits for more partials: added to a rule's latency


class MergeAgent:
    def __init__(self, app, table, rules_topic: str, outputs: Outputs, metrics: WorkerMetrics):
        self.app = app
        self.table = table  # rule id -> the partials of every pages partition (encode_partials)
        self.rules_topic = rules_topic
        self.outputs = outputs
        self.metrics = metrics
        self.merger = RuleMerger()
        # per partials partition, since the last rebalance: the offset up to which every
        # partial reached the merge, and where it was sought back to after a skip
        self._frontier: dict[int, int] = {}
        self._sought: dict[int, int] = {}
        self._rewind: dict[tuple[str, int], int] = {}  # skips found in this buffer: seek there

    async def merge(self, stream) -> None:
        """The partials a buffer at a time (what came within ``MERGE_WITHIN`` seconds, up to
        ``MERGE_BATCH``); Faust acks a buffer's partials once the merged records they
        caused are delivered (a restart re-reads unacked partials; the merge ignores what
        it has seen)."""
        async for events in stream.take_events(MERGE_BATCH, within=MERGE_WITHIN):
            for event in events:
                faust_compat.as_current_event(stream, event)  # the merged table's partition is the partial's
                self._merge_one(event.message)
            # blocking, as before 40c134a: the kill -9 tests lost rules with a wait that
            # let the loop run; the cause they showed is mended by ``again`` (below)
            self.outputs.deliver()
            if self._rewind:
                await self._seek_back()

    def forget(self) -> None:
        """A rebalance: Faust seeks back to the committed offsets, and a partition this
        worker gets again was read by another meanwhile."""
        self._frontier.clear()
        self._sought.clear()
        self._rewind.clear()

    def _check_offset(self, msg) -> None:
        """Offsets of a partials partition reach the merge one by one (the topic is not
        compacted and has no transaction markers). A skip is a partial Faust dropped: its
        recovery clears the agents' queues when it resumes the flow, after seeking back,
        and what the fetcher queued in between is gone, its offset counted as read; the
        commit then passes it. Said, counted, and read again (``_seek_back``): the merge
        takes partials in any order (versions), so the ones after it may go first."""
        p, off = msg.partition, msg.offset
        frontier = self._frontier.get(p)
        if frontier is None or off <= frontier + 1:
            self._frontier[p] = off if frontier is None else max(frontier, off)
            if self._sought.get(p, -1) <= self._frontier[p]:
                self._sought.pop(p, None)
            return
        if self._sought.get(p) == frontier + 1 or (msg.topic, p) in self._rewind:
            return  # sought back there already: what was queued before the seek still comes
        self.metrics.partials_skipped.inc(off - frontier - 1)
        log.warning(
            "rule partials partition %d: offsets %d-%d never reached the merge; reading them again",
            p,
            frontier + 1,
            off - 1,
        )
        self._rewind[(msg.topic, p)] = frontier + 1

    async def _seek_back(self) -> None:
        from faust.types import TP

        rewind, self._rewind = self._rewind, {}
        for (topic, p), off in rewind.items():
            try:  # in the consumer's thread, as learn.py's seeks
                await self.app.consumer.seek_wait({TP(topic, p): off})
            except Exception as e:  # noqa: BLE001 -- revoked meanwhile: its next owner reads from the commit
                log.warning("seeking rule partials partition %d back to %d: %r", p, off, e)
                continue
            self._sought[p] = off

    def _merge_one(self, msg) -> None:
        self._check_offset(msg)
        try:
            partial = _partial_dec.decode(msg.value)
        except msgspec.DecodeError as e:
            log.error("rule partials offset %s: %s", msg.offset, e)
            return
        key = msg.key
        partials = decode_partials(self.table.get(key))
        merged = self.merger.apply(partial.partition, partial.rule, partials)
        if merged is None:
            # the stored partial read again after a restart: Faust writes the table's
            # local store at once, so the rule it caused may never have been delivered
            merged = self.merger.again(partial.partition, partial.rule, partials)
            if merged is None:
                return
        else:
            self.table[key] = encode_partials(partials)
            self.metrics.rule_changes.labels(status=merged.status).inc()
        out, topic = self.outputs, self.rules_topic
        out.send(topic, topics.rule_key(merged.id), topics.rule_value(merged))
        if merged.status == RETIRED:  # tombstone: compaction drops the id
            out.send(topic, topics.rule_key(merged.id), None)
