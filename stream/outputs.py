"""What the worker writes besides its state: rule partials, merged rules, dead letters and
flush markers, through one kafka-python producer whose delivery is checked before the
events behind them are acked (a record lost after its ack would be lost for good)."""

from __future__ import annotations

import base64
import logging
import os

import msgspec

from dustonline.config import Config
from dustonline.rules.ruleset import Rule

from . import clients, topics
from .metrics import WorkerMetrics

log = logging.getLogger("dustonline.worker")

_partial_enc = msgspec.json.Encoder()
_json = msgspec.json.Encoder()


class Outputs:
    def __init__(self, cfg: Config, metrics: WorkerMetrics):
        self.cfg = cfg
        self.metrics = metrics
        self._kafka = None  # the producer, made on first use
        self._unconfirmed: list = []  # futures of the records sent since the last ``deliver``

    @property
    def producer(self):
        if self._kafka is None:
            # one request in flight: rule records of one id stay in order on retries; a
            # broker away for minutes is waited out, not dropped (delivery is checked)
            self._kafka = clients.producer(
                self.cfg,
                linger_ms=2,
                max_in_flight_requests_per_connection=1,
                retries=2**31 - 1,
                max_block_ms=10_000,
                delivery_timeout_ms=600_000,
            )
        return self._kafka

    def send(self, topic: str, key, value, **kw) -> None:
        """Queue a record; a broker that is away is waited for. Delivery is checked in
        ``deliver`` before the events behind it are acked."""
        from kafka.errors import KafkaTimeoutError

        while True:
            try:
                self._unconfirmed.append(self.producer.send(topic, key=key, value=value, **kw))
                return
            except KafkaTimeoutError as e:  # no metadata: the broker is restarting
                log.warning("waiting for the broker to send to %s: %s", topic, e)

    def deliver(self) -> None:
        """Block until every queued record is delivered. A record that could not be is
        fatal: the process exits before acking, and a restarted worker re-derives it
        from the last checkpoint (rule records are idempotent by version)."""
        if not self._unconfirmed:
            return
        self.producer.flush()
        futures, self._unconfirmed = self._unconfirmed, []
        self._check(futures)

    def _check(self, futures: list) -> None:
        failed = [f for f in futures if f.failed()]
        if failed:
            log.critical(
                "%d records were not delivered (%s): exiting to restart from the last checkpoint",
                len(failed),
                failed[0].exception,
            )
            logging.shutdown()
            os._exit(75)

    def partials(self, topic: str, changes: list[tuple[int, Rule]]) -> None:
        """Rule changes of shard learners (learner/shards.py), for the merge."""
        for shard, rule in changes:
            self.send(topic, topics.rule_key(rule.id), _partial_enc.encode(topics.Partial(shard, rule)))

    def transfer(self, topic: str, p: int, offset: int, counts, round_id: str = "", seen=None) -> bool:
        """Pages partition ``p``'s shared counts (by shard) as of its flush or round marker
        at ``offset``, with its round's join inputs (``seen``); False (logged and counted,
        nothing sent) when they are too large."""
        value = topics.transfer_value(p, offset, counts, round_id, seen)
        if len(value) > topics.MAX_POOLED_BYTES:
            self.metrics.pool_skipped.inc()
            log.error(
                "partition %d: shared counts are %d bytes compressed, over %d: not pooled "
                "(the group pools without them; fewer partitions would keep them smaller)",
                p,
                len(value),
                topics.MAX_POOLED_BYTES,
            )
            return False
        self.send(topic, topics.transfer_key(p), value)
        return True

    def handover(self, topic: str, round_id: str, site: str, events: list) -> list:
        """A joined domain's URLs, handed over by the partition it leaves (joins.py); returns
        those sent. Past the size limit none go (logged and counted): the shard it joins
        learns its events from then on, not what came before."""
        value = topics.handover_value(events)
        if len(value) > topics.MAX_POOLED_BYTES:
            self.metrics.pool_skipped.inc()
            log.error(
                "round %s: the %d URLs of %s handed over are %d bytes compressed, over %d: none handed over",
                round_id,
                len(events),
                site,
                len(value),
                topics.MAX_POOLED_BYTES,
            )
            events = []
            value = topics.handover_value(events)
        self.send(topic, topics.handover_key(round_id, site), value)
        return events

    def flush_marker(self, topic: str, p: int) -> None:
        """Into the partition itself, so rules are derived at a point of the log."""
        self.send(topic, b"", b"", partition=p, headers=topics.FLUSH_HEADERS)

    def dead_letter(self, msg, reason: str, detail: str, raw: bytes | None = None, line: int | None = None) -> None:
        """A rejected event with its reason and origin; bytes that are not UTF-8 go as base64."""
        raw = (msg.value if raw is None else raw) or b""
        try:
            text, enc = raw.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            text, enc = base64.b64encode(raw).decode(), "base64"
        rec = {
            "reason": reason,
            "detail": detail,
            "topic": msg.topic,
            "partition": msg.partition,
            "offset": msg.offset,
            "key": (msg.key or b"").decode("utf-8", "replace"),
            "raw": text[:65536],
            "encoding": enc,
        }
        if line is not None:
            rec["line"] = line  # of a batch message (header dustonline-format: jsonl), from 0
        self.send(self.cfg.kafka.dlq_topic, msg.key, _json.encode(rec))
        self.metrics.rejected.labels(reason=reason).inc()
