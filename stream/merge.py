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
    def __init__(self, table, rules_topic: str, outputs: Outputs, metrics: WorkerMetrics):
        self.table = table  # rule id -> the partials of every pages partition (encode_partials)
        self.rules_topic = rules_topic
        self.outputs = outputs
        self.metrics = metrics
        self.merger = RuleMerger()
        self._read: dict[int, int] = {}  # partials partition -> offset merged last, since the last rebalance

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

    def forget(self) -> None:
        """A rebalance: Faust seeks back to the committed offsets, and a partition this
        worker gets again was read by another meanwhile."""
        self._read.clear()

    def _check_offset(self, msg) -> None:
        """A partial never handed to the merge (offsets here only go up by one between
        rebalances: the topic is not compacted and has no transaction markers) is one
        whose rule may never be published: said and counted. A restored pages partition
        announces its rules again (learn.py), which mends it at the next restart."""
        last = self._read.get(msg.partition)
        if last is not None and msg.offset > last + 1:
            self.metrics.partials_skipped.inc(msg.offset - last - 1)
            log.warning(
                "rule partials partition %d: offsets %d-%d never reached the merge",
                msg.partition,
                last + 1,
                msg.offset - 1,
            )
        self._read[msg.partition] = msg.offset

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
