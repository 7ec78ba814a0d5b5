"""The merge agent, DustLin-MR's reduce: partition learners publish their rule changes
keyed by rule id; the merge keeps the latest per (id, partition) in the ``rule-merge``
table and publishes the merged rule (dustonline/rules/merge.py) to the rules topic."""

from __future__ import annotations

import logging

import msgspec

from dustonline.rules.merge import RuleMerger, decode_partials, encode_partials
from dustonline.rules.ruleset import RETIRED

from . import topics
from .metrics import WorkerMetrics
from .outputs import Outputs

log = logging.getLogger("dustonline.worker")

_partial_dec = msgspec.json.Decoder(topics.Partial)


class MergeAgent:
    def __init__(self, table, rules_topic: str, outputs: Outputs, metrics: WorkerMetrics):
        self.table = table  # rule id -> the partials of every pages partition (encode_partials)
        self.rules_topic = rules_topic
        self.outputs = outputs
        self.metrics = metrics
        self.merger = RuleMerger()

    async def merge(self, stream) -> None:
        """One partial at a time; acked once the merged record it caused is delivered
        (a restart re-reads unacked partials; the merge ignores what it has seen)."""
        out = self.outputs
        async for event in stream.noack().events():
            msg = event.message
            try:
                partial = _partial_dec.decode(msg.value)
            except msgspec.DecodeError as e:
                log.error("rule partials offset %s: %s", msg.offset, e)
                await stream.ack(event)
                continue
            key = msg.key
            partials = decode_partials(self.table.get(key))
            merged = self.merger.apply(partial.partition, partial.rule, partials)
            if merged is not None:
                self.table[key] = encode_partials(partials)
                topic = self.rules_topic
                out.send(topic, topics.rule_key(merged.id), topics.rule_value(merged))
                if merged.status == RETIRED:
                    out.send(topic, topics.rule_key(merged.id), None)  # tombstone: compaction drops the id
                self.metrics.rule_changes.labels(status=merged.status).inc()
                out.deliver()
            await stream.ack(event)
