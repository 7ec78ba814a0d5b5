"""``dustonline worker``: the Faust application that learns rules from the pages topic.

Topology (DESIGN.md §4):

    dust.pages ──(key: site)──> learn ──> <group>-rule-partials ──(key: rule id)──> merge ──> dust.rules
        │                         │                                                  │
        └─ dead letters ──> dust.pages.dlq   table learner-state          table rule-merge

- ``learn``: each assigned partition of the pages topic has its own ``OnlineLearner``
  whose state is that partition's slice of the Faust table ``learner-state`` (RocksDB via
  rocksdict, compacted changelog topic). A worker that takes a partition over, after a
  crash or a rebalance, restores the learner from the changelog and goes on.
- ``merge``: DustLin-MR's reduce. Partition learners publish their rule changes keyed
  by rule id; the merge keeps the latest per (id, partition) in the Faust table
  ``rule-merge`` and publishes the merged rule (dustonline/rulemerge.py) to the rules topic.

Exactly-once state on at-least-once delivery. The learner buffers its state between
checkpoints (``stream/state.py``). A checkpoint goes to the changelog partition as ONE
record batch, which the broker appends whole or not at all, ending with the source
offset it covers; its events are acked only after it is queued, and Faust flushes the
producer before it commits offsets. So the changelog only ever holds whole checkpoints,
committed offsets never pass the last one, and a worker restoring a partition skips the
re-delivered events its checkpoint already holds: nothing is lost or counted twice.
(Faust's ``exactly_once`` transactions were tried first and dropped: at a rebalance they
leave aborted writes in the local stores and stall recovery behind open transactions.)

Rule derivation points are part of the input: when a partition has been read to its end
and stays quiet, the worker writes a flush marker (a record with the header
``dustonline-control: flush``) into that partition and derives when it reads it back. A
replay of the topic derives at the same points, so a rule version means the same rule on
every replay, and re-sent rule records are harmless duplicates. Rejected events go to
the dead-letter topic with the reason.
"""

from __future__ import annotations

import base64
import logging
import os
import shutil
import time
from pathlib import Path

import msgspec

from dustonline.config import Config
from dustonline.events.event import BadEvent
from dustonline.learner.online import OnlineLearner
from dustonline.events.readers import parse_message
from dustonline.rules.merge import RuleMerger, decode_partials, encode_partials
from dustonline.rules.ruleset import RETIRED, Rule
from dustonline.state.store import Store

from . import clients, faust_compat, metrics, topics
from .state import FaustTableBackend

log = logging.getLogger("dustonline.worker")

CONTROL_HEADER = "dustonline-control"
FLUSH = b"flush"
STATE_TABLE = "learner-state"
MERGE_TABLE = "rule-merge"
# one checkpoint = one record batch: the changelog must accept batches this large
MAX_CHECKPOINT_BYTES = 48 << 20
CHANGELOG_CONFIGS = {"max.message.bytes": str(64 << 20)}


class Partial(msgspec.Struct):
    """A partition learner's rule change, on the partials topic."""

    partition: int
    rule: Rule


_partial_enc = msgspec.json.Encoder()
_partial_dec = msgspec.json.Decoder(Partial)
_json = msgspec.json.Encoder()


def partials_topic_name(cfg: Config) -> str:
    return f"{cfg.kafka.group_id}-rule-partials"


class _Partition:
    """One assigned partition: its learner, and the events taken but not yet acked."""

    __slots__ = ("p", "backend", "learner", "applied", "last_offset", "pending", "since_checkpoint",
                 "since_flush", "last_seen", "marker_sent", "seeking")

    def __init__(self, p: int, backend: FaustTableBackend, learner: OnlineLearner):
        self.p = p
        self.backend = backend
        self.learner = learner
        self.applied = backend.applied_offset  # events at or below it are in the state already
        self.last_offset = self.applied
        self.pending: list = []                # Faust events to ack at the next checkpoint
        self.since_checkpoint = 0
        self.since_flush = 0                   # learned events whose rules are not derived yet
        self.last_seen = time.monotonic()
        self.marker_sent = False
        self.seeking = True                    # until the event after ``applied`` arrives


class Worker:
    def __init__(self, cfg: Config):
        import faust

        self.cfg = cfg
        K = self.K = cfg.kafka
        self.app = app = faust.App(
            K.group_id,
            broker=[f"kafka://{hp.strip()}" for hp in K.bootstrap_servers.split(",")],
            store="rocksdb://",
            datadir=str(Path(K.data_dir)),
            processing_guarantee="at_least_once",
            topic_partitions=K.partitions,
            topic_replication_factor=K.replication_factor,
            broker_credentials=_credentials(cfg),
            web_enabled=K.web_port > 0,
            web_port=K.web_port or 6066,
            web_bind="0.0.0.0",
            broker_commit_interval=1.0,
            stream_wait_empty=False,
            consumer_auto_offset_reset="earliest",
            table_standby_replicas=0,
            consumer_max_fetch_size=K.max_partition_fetch_bytes,
        )
        # A crash can leave the local store a checkpoint ahead of the changelog (written
        # here, never sent): the changelog is the truth, so a starting worker restores
        # from it. (Keeping a verified local copy would restore faster: not done yet.)
        shutil.rmtree(app.conf.tabledir, ignore_errors=True)
        raw = dict(key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw")
        self.pages = app.topic(K.pages_topic, partitions=K.partitions, **raw)
        self.partials = app.topic(partials_topic_name(cfg), partitions=K.partitions, internal=True, **raw)
        self.state = app.Table(STATE_TABLE, key_type=bytes, value_type=bytes, partitions=K.partitions,
                               extra_topic_configs=CHANGELOG_CONFIGS,
                               help="learner state of each pages partition (stream/state.py)")
        self.merged = app.Table(MERGE_TABLE, key_type=bytes, value_type=bytes, partitions=K.partitions,
                                help="latest rule record per (rule id, pages partition)")
        for t in (self.state, self.merged):
            t.key_serializer = t.value_serializer = "raw"  # msgpack / JSON bytes from the core
        self.parts: dict[int, _Partition] = {}
        self.assigned: set[int] = set()
        self.stream = None
        self.merger = RuleMerger()
        self._producer = None  # kafka-python: rules, partials, dead letters, flush markers
        self._unconfirmed: list = []  # their futures since the last _deliver
        self.metrics = metrics.WorkerMetrics()
        if K.web_port > 0:
            metrics.expose(app, faust_sensor=K.faust_metrics)

            async def state_view(view, request):
                return view.json(self.state_summary())

            app.page("/dustonline/state")(state_view)

        app.agent(self.pages, name="dustonline.learn")(_crash_only(self._learn))
        app.agent(self.partials, name="dustonline.merge")(_crash_only(self._merge))
        app.timer(max(0.1, K.idle_flush_seconds / 4))(self._idle)
        app.timer(5.0)(self._measure_lag)
        app.on_partitions_assigned.connect(self._on_assigned)
        app.on_partitions_revoked.connect(self._on_revoked)

    # ------------------------------------------------------------ lifecycle
    @property
    def producer(self):
        if self._producer is None:
            # one request in flight: rule records of one id stay in order on retries; a
            # broker away for minutes is waited out, not dropped (delivery is checked)
            self._producer = clients.producer(self.cfg, linger_ms=2, max_in_flight_requests_per_connection=1,
                                              retries=2**31 - 1, max_block_ms=10_000, delivery_timeout_ms=600_000)
        return self._producer

    async def _on_assigned(self, app, assigned, **kw) -> None:
        # Faust fixes its consumer's fetch wait at 1500 ms: events arriving on a partition
        # left out of a fetch wait that long when the others are quiet (faust_compat.py)
        if not faust_compat.set_fetch_max_wait(self.app, self.K.fetch_max_wait_ms):
            # another Faust: events may wait up to its own fetch wait
            log.warning("kafka.fetch_max_wait_ms not applied: no aiokafka fetcher under this Faust's consumer")
        self.assigned |= {tp.partition for tp in assigned if tp.topic == self.K.pages_topic}
        self.metrics.partitions.set(len(self.assigned))
        log.info("pages partitions assigned here: %s", sorted(self.assigned))

    async def _on_revoked(self, app, revoked, **kw) -> None:
        """Drop what the revoked partitions did not checkpoint: their unacked events go
        to the next owner, who restores the last checkpoint from the changelog."""
        for tp in revoked:
            if tp.topic == self.K.pages_topic:
                self.assigned.discard(tp.partition)
                ps = self.parts.pop(tp.partition, None)
                if ps is not None:
                    ps.backend.close()
        self.metrics.partitions.set(len(self.assigned))

    def _open(self, p: int) -> _Partition:
        backend = FaustTableBackend(self.state, p)
        learner = OnlineLearner(self.cfg, Store(backend, self.cfg.storage.cache_entries))
        ps = self.parts[p] = _Partition(p, backend, learner)
        ps.since_flush = int(learner.derivation_pending)
        # Faust resumes where this process last read, which can be past a checkpoint the
        # partition was restored from (it was ours before, then another worker's): read
        # again from the event after the checkpoint
        import asyncio

        from faust.types import TP

        asyncio.ensure_future(self.app.consumer.seek(TP(self.K.pages_topic, p), ps.applied + 1))
        log.info("partition %d: learner restored at offset %d (%d events)", p, ps.applied, learner.stats.events)
        return ps

    # ------------------------------------------------------------ learn
    async def _learn(self, stream) -> None:
        self.stream = stream
        every = self.K.checkpoint_every
        busy = self.metrics.busy.inc
        clock = time.perf_counter
        async for event in stream.noack().events():
            t0 = clock()
            p = self._handle(event)
            if p is not None:
                ps = self.parts.get(p)
                if ps is not None and ps.since_checkpoint >= every:
                    await self._checkpoint(ps)
            busy(clock() - t0)

    def _handle(self, event) -> int | None:
        msg = event.message
        p = msg.partition
        if p not in self.assigned:
            return None  # revoked while taken: the next owner reads it again
        ps = self.parts.get(p) or self._open(p)
        off = msg.offset
        if ps.seeking:
            if off > ps.applied + 1:
                return None  # read past the checkpoint; the seek brings it back
            ps.seeking = off <= ps.applied
        if off <= ps.last_offset:  # redelivered (a seek, a restart): the state has it
            if off <= ps.applied:
                ps.pending.append(event)  # acked with the next checkpoint
            return None
        ps.pending.append(event)
        ps.last_offset = off
        ps.since_checkpoint += 1
        ps.last_seen = time.monotonic()
        if _is_flush(msg.headers):
            ps.marker_sent = False
            if ps.since_flush:
                self._publish(p, ps.learner.flush())
                ps.since_flush = 0
            ps.since_checkpoint = self.K.checkpoint_every  # and checkpoint now
            return p
        m = self.metrics
        if msg.timestamp:
            m.delay.observe(max(0.0, time.time() - msg.timestamp))
        if topics.is_batch(msg.headers):  # JSON lines: (value, line number) each
            lines = (line for line in (msg.value or b"").split(b"\n") if line.strip())
            values = [(line, i) for i, line in enumerate(lines)]
        else:
            values = [(msg.value, None)]
        for value, line in values:
            self._learn_value(ps, msg, value, line)
        n = len(values)
        m.events.inc(n)
        ps.since_checkpoint += n - 1  # the message itself counted one above
        ps.since_flush += n
        return p

    def _learn_value(self, ps: _Partition, msg, value, line: int | None) -> None:
        try:
            ev = parse_message(value, self.cfg.input.max_url_length)
        except BadEvent as e:
            self._dead_letter(msg, e.reason, e.detail, value, line)
            return
        changes = ps.learner.learn_one(ev)
        if changes:
            self._publish(ps.p, changes)

    async def _checkpoint(self, ps: _Partition) -> None:
        """Learner state -> local table and one changelog batch with the offset it
        covers, then ack; no await in between, so a commit of Faust's sees all of it
        queued (and flushes it before committing the offsets) or none of it."""
        t0 = time.perf_counter()
        aio = faust_compat.changelog_producer(self.app)
        topic = self.state.changelog_topic.get_topic_name()
        await faust_compat.wait_for_metadata(aio, topic)
        if self.parts.get(ps.p) is not ps:
            return  # revoked meanwhile: the next owner has it from the last checkpoint
        # -- no await from here on
        ps.learner.checkpoint()
        records = ps.backend.commit(ps.last_offset)
        self._queue_changelog(aio, topic, ps.p, records)
        self._deliver()  # rule partials and dead letters of these events are out
        ps.applied, ps.since_checkpoint = ps.last_offset, 0
        pending, ps.pending = ps.pending, []
        ack = self.stream.ack  # a coroutine that never suspends: bookkeeping only
        for ev in pending:
            await ack(ev)
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
        for k, v in records:
            size += len(k) + (len(v) if v is not None else 0) + 16
            if batch.append(timestamp=None, key=k, value=v) is None:
                raise RuntimeError(f"checkpoint of partition {p} over {MAX_CHECKPOINT_BYTES >> 20} MiB "
                                   f"({len(records)} records): lower kafka.checkpoint_every")
        sent = faust_compat.queue_batch_now(aio, batch, topic, p)
        self.metrics.checkpoint_bytes.observe(size)
        data, ftp, count, parts, ps = self.state.data, TP(topic, p), len(records), self.parts, self.parts.get(p)

        def persisted(fut):  # as Faust's changelog callback: recovery here starts past it
            if parts.get(p) is ps and not fut.cancelled() and fut.exception() is None:
                data.set_persisted_offset(ftp, fut.result().offset + count - 1)

        sent.add_done_callback(persisted)

    async def _idle(self, app) -> None:
        """A partition read to its end and quiet: write a flush marker into it (rules are
        then derived at a point of the log, the same on every replay) or, once derived,
        checkpoint what is pending."""
        app = self.app
        if app.rebalancing or app.in_recovery:
            return
        now = time.monotonic()
        for p in sorted(self.assigned - set(self.parts)):
            self._open(p)  # read to its end elsewhere, its rules perhaps not derived yet
        for ps in list(self.parts.values()):
            if ps.p not in self.assigned or now - ps.last_seen < self.K.idle_flush_seconds:
                continue
            if not self._caught_up(ps):
                continue  # quiet only because other partitions kept this worker busy
            if ps.since_flush and not ps.marker_sent:
                self._send(self.K.pages_topic, b"", b"", partition=ps.p, headers=[(CONTROL_HEADER, FLUSH)])
                self._deliver()
                ps.marker_sent = True
            elif ps.pending and not ps.since_flush:
                await self._checkpoint(ps)

    def _highwater(self, p: int) -> int | None:
        """The end offset of pages partition ``p`` as last fetched (None before a fetch)."""
        from faust.types import TP

        try:
            return self.app.consumer.highwater(TP(self.K.pages_topic, p))
        except Exception:  # not fetched yet
            return None

    def _caught_up(self, ps: _Partition) -> bool:
        hw = self._highwater(ps.p)
        return hw is not None and ps.last_offset + 1 >= hw

    async def _measure_lag(self, app) -> None:
        for p in sorted(self.assigned):
            hw = self._highwater(p)
            ps = self.parts.get(p)
            if hw is not None and ps is not None:
                self.metrics.lag.labels(partition=str(p)).set(max(0, hw - ps.last_offset - 1))

    def state_summary(self) -> dict:
        """The learners of this worker's partitions: events learned, offsets, counts."""
        return {
            "assigned": sorted(self.assigned),
            "fetch_max_wait_ms": faust_compat.fetch_max_wait(self.app),
            "partitions": {str(p): {"applied_offset": ps.applied, "last_offset": ps.last_offset,
                                    "pending": len(ps.pending), "since_flush": ps.since_flush,
                                    **ps.learner.summary()}
                           for p, ps in sorted(self.parts.items())},
        }

    # ------------------------------------------------------------ merge (the reduce)
    async def _merge(self, stream) -> None:
        """One partial at a time; acked once the merged record it caused is delivered
        (a restart re-reads unacked partials; the merge ignores what it has seen)."""
        async for event in stream.noack().events():
            msg = event.message
            try:
                partial = _partial_dec.decode(msg.value)
            except msgspec.DecodeError as e:
                log.error("rule partials offset %s: %s", msg.offset, e)
                await stream.ack(event)
                continue
            key = msg.key
            partials = decode_partials(self.merged.get(key))
            merged = self.merger.apply(partial.partition, partial.rule, partials)
            if merged is not None:
                self.merged[key] = encode_partials(partials)
                topic = self.K.rules_topic
                self._send(topic, topics.rule_key(merged.id), topics.rule_value(merged))
                if merged.status == RETIRED:
                    self._send(topic, topics.rule_key(merged.id), None)  # tombstone: compaction drops the id
                self.metrics.rule_changes.labels(status=merged.status).inc()
                self._deliver()
            await stream.ack(event)

    # ------------------------------------------------------------ outputs
    def _send(self, topic: str, key, value, **kw) -> None:
        """Queue a record; a broker that is away is waited for. Delivery is checked in
        ``_deliver`` before the events behind it are acked."""
        from kafka.errors import KafkaTimeoutError

        while True:
            try:
                self._unconfirmed.append(self.producer.send(topic, key=key, value=value, **kw))
                return
            except KafkaTimeoutError as e:  # no metadata: the broker is restarting
                log.warning("waiting for the broker to send to %s: %s", topic, e)

    def _deliver(self) -> None:
        """Block until every queued record is delivered. A record that could not be is
        fatal: the process exits before acking, and a restarted worker re-derives it
        from the last checkpoint (rule records are idempotent by version)."""
        if not self._unconfirmed:
            return
        self.producer.flush()
        futures, self._unconfirmed = self._unconfirmed, []
        failed = [f for f in futures if f.failed()]
        if failed:
            log.critical("%d records were not delivered (%s): exiting to restart from the last checkpoint",
                         len(failed), failed[0].exception)
            logging.shutdown()
            os._exit(75)

    def _publish(self, p: int, changes: list[Rule]) -> None:
        topic = self.partials.get_topic_name()
        for rule in changes:
            self._send(topic, topics.rule_key(rule.id), _partial_enc.encode(Partial(p, rule)))

    def _dead_letter(self, msg, reason: str, detail: str, raw: bytes | None = None, line: int | None = None) -> None:
        raw = (msg.value if raw is None else raw) or b""
        try:
            text, enc = raw.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            text, enc = base64.b64encode(raw).decode(), "base64"
        rec = {"reason": reason, "detail": detail, "topic": msg.topic, "partition": msg.partition,
               "offset": msg.offset, "key": (msg.key or b"").decode("utf-8", "replace"),
               "raw": text[:65536], "encoding": enc}
        if line is not None:
            rec["line"] = line  # of a batch message (header dustonline-format: jsonl), from 0
        self._send(self.K.dlq_topic, msg.key, _json.encode(rec))
        self.metrics.rejected.labels(reason=reason).inc()

    # ------------------------------------------------------------ run
    def run(self) -> None:
        import faust

        from .admin import ensure_topics

        ensure_topics(self.cfg, internal=[partials_topic_name(self.cfg)])
        # faust.Worker, not mode's: it sets the app up as a worker (signals, web, sensors)
        faust.Worker(self.app, loglevel="INFO", quiet=True, redirect_stdouts=False).execute_from_commandline()


def _crash_only(agent):
    """An agent that fails takes the process down instead of being restarted in place
    (Faust's default): its learner may hold half an event, and only a restart from the
    last checkpoint is known to be right. Run the worker under a supervisor."""
    import asyncio
    import functools

    @functools.wraps(agent)
    async def run(stream):
        try:
            await agent(stream)
        except asyncio.CancelledError:
            raise  # a rebalance or a stop
        except Exception:
            log.critical("agent %s failed; exiting to restart from the last checkpoint", agent.__name__, exc_info=True)
            logging.shutdown()
            os._exit(70)

    return run


def _is_flush(headers) -> bool:
    if not headers:
        return False
    items = headers.items() if isinstance(headers, dict) else headers
    return any(k == CONTROL_HEADER and v == FLUSH for k, v in items)


def _credentials(cfg: Config):
    """SASL/SSL for a real cluster from the config (password also from the environment)."""
    K = cfg.kafka
    if K.security_protocol == "PLAINTEXT":
        return None
    import ssl

    import faust

    ctx = None
    if K.security_protocol.endswith("SSL"):
        ctx = ssl.create_default_context(cafile=K.ssl_cafile or None)
        if K.ssl_certfile:
            ctx.load_cert_chain(K.ssl_certfile, K.ssl_keyfile or None)
    if K.security_protocol.startswith("SASL"):
        return faust.SASLCredentials(username=K.sasl_username, password=clients.sasl_password(cfg), ssl_context=ctx,
                                     mechanism=K.sasl_mechanism)
    return faust.SSLCredentials(ctx)
