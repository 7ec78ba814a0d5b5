"""The learn agent: a learner per assigned pages partition, on that partition's slice of
the state table, publishing its rule changes to the partials topic.

It reads the pages topic a fetch at a time (``batches.py``), not through a Faust agent:
Faust's per-message machinery cost more than learning an event. Messages are learned in
offset order, as before, so batching changes no rule.

Rule derivation points are part of the input: when a partition has been read to its end
and stays quiet, the agent writes a flush marker into it (``topics.is_flush``) and derives
when it reads the marker back. A replay of the topic derives at the same points, so a
rule version means the same rule on every replay, and re-sent rule records are harmless
duplicates. Rejected events go to the dead-letter topic with the reason.

A round marker (placed by ``dustonline replay``, rounds.py) is a barrier: the partition
derives there, publishes its counts tagged with the round, and holds what follows (out of
fetches) until the round's pooled counts arrive; it then adopts its shards' share,
derives, checkpoints and learns what it held. Other partitions go on meanwhile.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import time

from dustonline.config import Config
from dustonline.events.event import BadEvent
from dustonline.events.readers import parse_message
from dustonline.events.routing import partition_of_host
from dustonline.learner.shards import ShardGroup, shard_count, shards_of
from dustonline.learner.shared import others_of
from dustonline.rules.urls import host_of, site_of_host
from dustonline.state.store import Store

from . import clients, faust_compat, topics
from .batches import PageBatches
from .checkpoint import Checkpoints
from .metrics import WorkerMetrics
from .outputs import Outputs
from .pool import PoolCoordinator
from .rounds import RoundReader
from .state import FaustTableBackend

log = logging.getLogger("dustonline.worker")


class Partition:
    """One assigned partition: its shards' learners, and the messages taken but not yet acked."""

    __slots__ = (
        "p",
        "backend",
        "learner",
        "applied",
        "last_offset",
        "pending",
        "since_checkpoint",
        "since_flush",
        "last_seen",
        "marker_sent",
        "seeking",
        "waiting",
        "held",
        "adopted",
        "moves_done",
        "held_read",
    )

    def __init__(self, p: int, backend: FaustTableBackend, learner: ShardGroup):
        self.p = p
        self.backend = backend
        self.learner = learner
        self.applied = backend.applied_offset  # events at or below it are in the state already
        self.last_offset = self.applied
        self.pending: list = []  # Faust messages to ack at the next checkpoint
        self.since_checkpoint = 0
        self.since_flush = 0  # learned events whose rules are not derived yet
        self.last_seen = time.monotonic()
        self.marker_sent = False
        self.seeking = True  # until the event after ``applied`` arrives
        self.waiting: tuple[str, int, float] | None = None  # (round id, marker offset, since) it waits at
        self.held: list = []  # messages past that marker, learned once the round is pooled
        self.adopted = False  # the round's pooled counts adopted (its joins may still wait for handovers)
        self.moves_done = 0  # of the round's joins, those carried out here
        self.held_read = ""  # the round whose joined domains' events were read (once: ``_read_held``)


# learning yields to the event loop this often (seconds), so that timers, the merge agent
# and the web endpoint run while a large fetch is learned
YIELD_EVERY = 0.01


class LearnAgent:
    def __init__(
        self,
        cfg: Config,
        app,
        table,
        batches: PageBatches,
        partials_topic: str,
        outputs: Outputs,
        metrics: WorkerMetrics,
        transfer_topic: str,
    ):
        self._seeks: set[asyncio.Future] = set()
        self.cfg = cfg
        self.K = cfg.kafka
        self.app = app
        self.table = table  # the learner-state table
        self.batches = batches
        self.partials_topic = partials_topic
        self.transfer_topic = transfer_topic
        self.pool = PoolCoordinator(cfg, transfer_topic, metrics.pool_rounds, metrics.pool_skipped)
        self.rounds = RoundReader(cfg, transfer_topic, self._pooled_arrived)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.outputs = outputs
        self.metrics = metrics
        self.parts: dict[int, Partition] = {}
        self.assigned: set[int] = set()
        self.checkpoints = Checkpoints(app, table, self.parts, outputs, metrics)
        # pages partitions (the worker checked at its start that the topic has this many;
        # ``assign`` reads the topic's own count), for shards, rounds and the routing check
        self.npart: int = cfg.kafka.partitions
        self.learned = 0  # events read, for dustonline_events_total (counted a batch at a time)
        self._misrouted_seen: set[int] = set()

    # ------------------------------------------------------------ partitions
    def assign(self, assigned) -> None:
        self.assigned |= {tp.partition for tp in assigned if tp.topic == self.K.pages_topic}
        self.metrics.partitions.set(len(self.assigned))
        # the consumer's metadata may not know the topic yet at the first assignment: the
        # worker checked at its start that it has kafka.partitions (admin.py). Left None,
        # the owner of partition 0 never started pooling (found by bench_stream, 2026-11-28)
        self.npart = faust_compat.topic_partitions(self.app, self.K.pages_topic) or self.K.partitions
        if self.npart > 1:
            self.rounds.start()  # replay rounds, and whether a replay is placing them
        log.info("pages partitions assigned here: %s", sorted(self.assigned))

    def revoke(self, revoked) -> None:
        """Drop what the revoked partitions did not checkpoint: their unacked events go
        to the next owner, who restores the last checkpoint from the changelog. Fetched
        batches go too: Faust seeks every partition back to its commit after a rebalance."""
        self.batches.clear()
        for ps in self.parts.values():
            ps.held = []  # fetched again from the commit, which is never past a round marker
        closed = False
        for tp in revoked:
            if tp.topic == self.K.pages_topic:
                self.assigned.discard(tp.partition)
                ps = self.parts.pop(tp.partition, None)
                if ps is not None and ps.waiting is not None:
                    self.metrics.waiting.dec()
                if ps is not None:
                    ps.backend.close()
                    closed = True
                self.metrics.forget_partition(tp.partition)
        self.metrics.partitions.set(len(self.assigned))
        if closed:  # the learners are reference cycles: their RocksDB handles go now (state.py)
            gc.collect()

    def _open(self, p: int) -> Partition:
        backend = FaustTableBackend(self.table, p)
        learner = self._shards(p, Store(backend, self.cfg.storage.cache_entries, cache_mib=self.cfg.storage.cache_mib))
        ps = self.parts[p] = Partition(p, backend, learner)
        ps.since_flush = int(learner.derivation_pending)
        # Faust resumes where this process last read, which can be past a checkpoint the
        # partition was restored from (it was ours before, then another worker's): read
        # again from the event after the checkpoint
        from faust.types import TP

        # (seek_wait: in the consumer's thread; Faust's seek calls into aiokafka from this
        # one, racing its fetcher, which then failed on a partition's records)
        seek = asyncio.ensure_future(self.app.consumer.seek_wait({TP(self.K.pages_topic, p): ps.applied + 1}))
        self._seeks.add(seek)  # the loop keeps only a weak reference to a task
        seek.add_done_callback(self._seek_done)
        log.info("partition %d: learner restored at offset %d (%d events)", p, ps.applied, learner.events)
        if ps.applied >= 0:
            # its rules again (delivered with the next checkpoint): a partial lost between
            # the learner and the rules topic while the checkpoint holding it was written
            # would otherwise never be sent again; the merge publishes an id it has at that
            # version again (RuleMerger.again), and subscribers ignore a version they hold
            self.outputs.partials(self.partials_topic, learner.announce())
        return ps

    def _shards(self, p: int, store: Store) -> ShardGroup:
        """Partition ``p``'s shard learners, each in a namespace of the partition's store
        when it holds several (one: the store itself, as before shards)."""
        # the worker refused a topic of another partition count than kafka.partitions at
        # its start (admin.py), and the config check that it divides learning.shards
        npart = self.npart
        total = shard_count(self.cfg, npart)
        mine = shards_of(p, npart, total)
        if len(mine) == 1:
            return ShardGroup(self.cfg, mine, total, lambda s: store, rounds=False, partitions=npart, state=store)
        if store.table("meta").get("learner") is not None:
            # one learner's state (learning.shards 0, the default before 2026-11-29): the
            # shards' learners, in namespaces beside it, would start empty
            log.critical(
                "partition %d holds one learner's state (learning.shards 0, the default before shards) and "
                "this config learns %d shards in it: set learning.shards: 0 to continue that state, or use a "
                "new kafka.group_id to learn afresh",
                p,
                len(mine),
            )
            logging.shutdown()
            os._exit(2)
        # with one partition no coordinator runs: its shards pool among themselves
        return ShardGroup(
            self.cfg,
            mine,
            total,
            lambda s: store.namespace(f"{s}/", len(mine)),
            rounds=npart == 1,
            root=store,
            partitions=npart,
        )

    def _seek_done(self, seek: asyncio.Future) -> None:
        self._seeks.discard(seek)
        if not seek.cancelled() and seek.exception() is not None:  # revoked meanwhile: the next owner seeks
            log.warning("seeking a pages partition back to its checkpoint: %r", seek.exception())

    # ------------------------------------------------------------ learn
    async def learn(self) -> None:
        """Fetched batches in order, message by message; a partition is checkpointed every
        ``checkpoint_every`` events. A rebalance while a batch is learned (at a checkpoint
        or a yield) ends the batch: Faust reads the rest again from the commit."""
        self._loop = asyncio.get_running_loop()
        while True:
            generation, p, messages = await self.batches.get()
            if p < 0:
                await self._resume()
            else:
                self.metrics.batch_messages.observe(len(messages))
                await self._learn_batch(generation, p, messages)

    async def _learn_batch(self, generation: int, p: int, messages: list) -> None:
        every = self.K.checkpoint_every
        busy = self.metrics.busy.inc
        clock = time.perf_counter
        batches = self.batches
        t0 = clock()
        for msg in messages:
            if self._joined_domains_due(msg):
                await self._read_held(self.parts[p], (msg.value or b"").decode("utf-8", "replace"))
                if not batches.current(generation) or self.parts.get(p) is None:
                    break
            if self._handle(msg) is not None:
                ps = self.parts.get(p)
                if ps is not None and ps.since_checkpoint >= every:
                    await self.checkpoints.write(ps)
                    if not batches.current(generation):
                        break
            if clock() - t0 >= YIELD_EVERY:
                self._count(busy, clock() - t0)
                await asyncio.sleep(0)
                t0 = clock()
                if not batches.current(generation):
                    break
        self._count(busy, clock() - t0)

    def _count(self, busy, seconds: float) -> None:
        busy(seconds)
        self.metrics.events.inc(self.learned)
        self.learned = 0

    def _handle(self, msg) -> int | None:
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
                ps.pending.append(msg)  # acked with the next checkpoint
            return None
        if ps.waiting is not None:  # past a round marker: learned once the round is pooled
            if not ps.held or off > ps.held[-1].offset:
                ps.held.append(msg)
            self.batches.hold(msg.tp)
            return None
        ps.pending.append(msg)
        ps.last_offset = off
        ps.since_checkpoint += 1
        ps.last_seen = time.monotonic()
        if topics.is_round(msg.headers):
            self._round_marker(ps, off, (msg.value or b"").decode("utf-8", "replace"))
            return None
        if topics.is_flush(msg.headers):
            try:
                others = topics.pool_of(msg.value)
            except ValueError as e:  # not a marker this worker wrote: a plain flush, and said so
                self.outputs.dead_letter(msg, "bad-flush-marker", str(e))
                others = None
            self._flush(ps, off, others)
            ps.since_checkpoint = self.K.checkpoint_every  # and checkpoint now
            return p
        m = self.metrics
        if msg.timestamp:
            m.delay.observe(max(0.0, time.time() - msg.timestamp))
        if topics.is_batch(msg.headers):  # JSON lines: (value, line number) each
            values = [(line, i) for i, line in enumerate(_batch_lines(msg.value))]
        else:
            values = [(msg.value, None)]
        for value, line in values:
            self._learn_value(ps, msg, value, line)
        n = len(values)
        self.learned += n
        ps.since_checkpoint += n - 1  # the message itself counted one above
        ps.since_flush += n
        return p

    def _flush(self, ps: Partition, off: int, others) -> None:
        """A flush marker at ``off``: the pooled counts it carries adopted, rules derived,
        and the learner's own counts published as of this offset (pool.py)."""
        ps.marker_sent = False
        lrn = ps.learner
        if others is not None:
            self.outputs.partials(self.partials_topic, lrn.pool(others))
        if ps.since_flush or others is not None:
            self.outputs.partials(self.partials_topic, lrn.flush())
            ps.since_flush = 0
        if self.npart != 1:  # one partition has nothing to pool with
            self._publish(ps, off)

    def _round_marker(self, ps: Partition, off: int, round_id: str) -> None:
        """A replay's round marker: derive, publish the counts for the round, and wait for
        it to be pooled. One partition pools its shards itself at the same events (its
        ShardGroup has ``rounds``): there the marker is nothing."""
        if self.npart == 1 or ps.learner.rounds or not round_id:
            return
        ps.marker_sent = False
        if ps.since_flush:
            self.outputs.partials(self.partials_topic, ps.learner.flush())
            ps.since_flush = 0
        reports = ps.learner.reports
        self._publish(ps, off, round_id, reports.inputs.take() if reports is not None else None)
        ps.waiting = (round_id, off, time.perf_counter())
        ps.adopted, ps.moves_done = False, 0
        self.metrics.waiting.inc()
        self.rounds.start()
        if self.rounds.get(round_id) is not None:  # pooled before a restart: go on at once
            self.batches.kick()

    def _publish(self, ps: Partition, off: int, round_id: str = "", seen=None) -> None:
        """The partition's counts as of the marker at ``off``, for the coordinator, with
        its round's join inputs at a round marker; when they are too large (logged,
        counted), no counts: the group pools without them, and a round the partition
        waits at still ends."""
        if not self.outputs.transfer(self.transfer_topic, ps.p, off, ps.learner.shared_counts(), round_id, seen):
            self.outputs.transfer(self.transfer_topic, ps.p, off, {}, round_id, seen)

    def _carry_out_joins(self, ps: Partition, round_id: str, pooled) -> bool:
        """The round's joins, in order (joins.py): the partition holding a move's source
        shard hands the domain's URLs over on the transfer topic; the one holding its
        destination learns them once they arrive. False while a handover has not: the
        partition stays at the round, and other partitions go on meanwhile (a source
        never waits for a destination, so every handover comes)."""
        lrn = ps.learner
        if lrn.reports is None:
            return True
        while ps.moves_done < len(pooled.moves):
            m = pooled.moves[ps.moves_done]
            arrived = None
            if lrn.holds(m.dst) and not lrn.holds(m.src):
                arrived = self.rounds.handover(round_id, m.site)
                if arrived is None:
                    return False
            handed, changes = lrn.take(m)  # nothing to take unless the source shard is here
            self.outputs.partials(self.partials_topic, changes)
            if lrn.holds(m.src):
                sent = self.outputs.handover(self.transfer_topic, round_id, m.site, handed)
                self.outputs.deliver()
                if lrn.holds(m.dst):  # within the partition: as it would arrive
                    arrived = sent
            self.outputs.partials(self.partials_topic, lrn.give(m, arrived or []))
            lrn.moved_here(m, pooled.offsets)
            ps.moves_done += 1
        return True

    def _joined_domains_due(self, msg) -> bool:
        """A round marker of a partition whose shards learn joined domains: their events
        since the last round are read from their home partitions first."""
        if not topics.is_round(msg.headers) or msg.partition not in self.assigned:
            return False
        ps = self.parts.get(msg.partition) or self._open(msg.partition)
        return (
            ps.waiting is None
            and ps.held_read != (msg.value or b"").decode("utf-8", "replace")
            and msg.offset > ps.last_offset
            and not (ps.seeking and msg.offset > ps.applied + 1)
            and ps.learner.reports is not None
            and bool(ps.learner.reports.incoming)
        )

    async def _read_held(self, ps: Partition, round_id: str) -> None:
        """The events of the domains joined to this partition's shards, from each home
        partition's log between the last round's marker and this one's, held for
        ``flush`` to learn (ShardGroup.hold, learn_held): by home shard, in offset order."""
        r = ps.learner.reports
        assert r is not None
        ps.held_read = round_id
        starts: dict[int, int] = {}
        for site, start in r.incoming.items():
            h = r.home(site)
            starts[h] = min(start, starts.get(h, start))
        segments = await asyncio.to_thread(read_segments, self.cfg, self.K.pages_topic, starts, round_id)
        total = ps.learner.total
        for h, (mark, records) in sorted(segments.items()):
            wanted = {site: start for site, start in r.incoming.items() if r.home(site) == h}
            held = []
            for off, value, headers in records:
                for v in _batch_lines(value) if topics.is_batch(headers) else [value]:
                    try:
                        ev = parse_message(v, self.cfg.input.max_url_length)
                    except BadEvent:
                        continue  # its home partition dead-letters it
                    host = host_of(ev.url)
                    start = wanted.get(site_of_host(host))
                    if start is not None and off >= start:
                        held.append((partition_of_host(host, total), ev))
            ps.learner.hold(held)
            for site in wanted:
                r.incoming[site] = mark + 1
        if segments:
            ps.since_flush += 1  # derived at the marker

    def _pooled_arrived(self) -> None:
        """From the round reader's thread."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.batches.kick)

    async def _resume(self) -> None:
        """Partitions whose round was pooled adopt their share, derive, checkpoint, and
        learn what they held."""
        for ps in list(self.parts.values()):
            if ps.waiting is None or self.parts.get(ps.p) is not ps:
                continue
            round_id, off, since = ps.waiting
            pooled = self.rounds.get(round_id)
            if pooled is None:
                continue
            lrn = ps.learner
            if not ps.adopted:
                ps.adopted = True
                if not pooled.skipped:
                    others = others_of([pooled.counts.get(s, {}) for s in range(lrn.total)])
                    self.outputs.partials(self.partials_topic, lrn.pool({s: others[s] for s in lrn.shards}))
                    self.outputs.partials(self.partials_topic, lrn.flush())
            if not self._carry_out_joins(ps, round_id, pooled):
                continue  # a handover to come: the round reader's kick brings it back here
            self.metrics.round_wait.observe(time.perf_counter() - since)
            self.metrics.waiting.dec()
            ps.waiting = None
            self._publish(ps, off)
            generation = self.app.consumer_generation_id
            await self.checkpoints.write(ps)
            held, ps.held = ps.held, []
            if self.parts.get(ps.p) is not ps or not self.batches.current(generation):
                continue  # revoked or rebalanced meanwhile: what it held comes again
            from faust.types import TP

            self.batches.release(TP(self.K.pages_topic, ps.p))
            if held:
                await self._learn_batch(generation, ps.p, held)

    def _learn_value(self, ps: Partition, msg, value, line: int | None) -> None:
        try:
            ev = parse_message(value, self.cfg.input.max_url_length)
        except BadEvent as e:
            self.outputs.dead_letter(msg, e.reason, e.detail, value, line)
            return
        if self.npart > 1 and _route(ev.url, self.npart) != ps.p:  # (one partition holds every site)
            self._misrouted(ps.p, msg, ev.url)
        changes = ps.learner.learn_one(ev)
        if changes:
            self.outputs.partials(self.partials_topic, changes)

    def _misrouted(self, p: int, msg, url: str) -> None:
        """Learned all the same (it is a fetch), but its site's evidence is split across
        partitions and learns less: counted, and said once per partition."""
        self.metrics.misrouted.labels(partition=str(p)).inc()
        if p not in self._misrouted_seen:
            self._misrouted_seen.add(p)
            log.warning(
                "partition %d: event for %s (message key %r) belongs on partition %d: the producer must key "
                "by registered domain and partition by murmur2 (docs/service.md, producers)",
                p,
                url,
                msg.key,
                _route(url, self.npart),
            )

    # ------------------------------------------------------------ timers
    async def idle(self, app) -> None:
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
            if ps.waiting is not None:  # at a round: nothing to derive, no checkpoint before it is pooled
                if self.rounds.get(ps.waiting[0]) is not None:
                    self.batches.kick()  # pooled, and its kick lost to a rebalance (batches.clear)
                continue
            if not self._caught_up(ps):
                continue  # quiet only because other partitions kept this worker busy
            if ps.since_flush and not ps.marker_sent:
                if self.rounds.replaying():
                    continue  # the replay places the derivation points, its end too
                self.outputs.flush_marker(self.K.pages_topic, ps.p)
                self.outputs.deliver()
                ps.marker_sent = True
            elif ps.pending and not ps.since_flush:
                await self.checkpoints.write(ps)
        if 0 in self.assigned and self.npart > 1:  # the owner of partition 0 pools the group's counts
            self.pool.start(self.npart)
        else:
            self.pool.stop()

    async def measure_lag(self, app) -> None:
        for p in sorted(self.assigned):
            hw = self._highwater(p)
            ps = self.parts.get(p)
            if hw is not None and ps is not None:
                self.metrics.lag.labels(partition=str(p)).set(max(0, hw - ps.last_offset - 1))

    def _highwater(self, p: int) -> int | None:
        """The end offset of pages partition ``p`` as last fetched (None before a fetch)."""
        from faust.types import TP

        try:
            return self.app.consumer.highwater(TP(self.K.pages_topic, p))
        except Exception:  # noqa: BLE001 -- not fetched yet
            return None

    def _caught_up(self, ps: Partition) -> bool:
        hw = self._highwater(ps.p)
        return hw is not None and ps.last_offset + 1 >= hw

    def summary(self) -> dict:
        """The learners of this worker's partitions: events learned, offsets, counts."""
        return {
            str(p): {
                "applied_offset": ps.applied,
                "last_offset": ps.last_offset,
                "pending": len(ps.pending),
                "since_flush": ps.since_flush,
                "waiting_at_round": ps.waiting[0] if ps.waiting else None,
                "held": len(ps.held),
                **ps.learner.summary(),
            }
            for p, ps in sorted(self.parts.items())
        }


def read_segments(cfg: Config, topic: str, starts: dict[int, int], round_id: str) -> dict[int, tuple[int, list]]:
    """Per pages partition in ``starts``: the offset of its round marker ``round_id`` and
    its records (offset, value, headers) from the start offset up to it. Blocking (a
    thread of its own): every partition has the marker, written by the replay or, for a
    replay that stopped, by the coordinator (pool.py)."""
    from kafka import TopicPartition

    out: dict[int, tuple[int, list]] = {}
    if not starts:
        return out
    c = clients.consumer(cfg, enable_auto_commit=False, auto_offset_reset="earliest")
    try:
        tps = {p: TopicPartition(topic, p) for p in starts}
        c.assign(list(tps.values()))
        for p, tp in tps.items():
            c.seek(tp, starts[p])
        got: dict[int, list] = {p: [] for p in starts}
        since = time.monotonic()
        while len(out) < len(starts):
            for tp, recs in c.poll(timeout_ms=500, max_records=5000).items():
                p = tp.partition
                if p in out:
                    continue
                for rec in recs:
                    headers = rec.headers or []
                    if topics.is_round(headers) and (rec.value or b"").decode("utf-8", "replace") == round_id:
                        out[p] = (rec.offset, got.pop(p))
                        c.pause(tp)
                        break
                    if not topics.is_round(headers) and not topics.is_flush(headers):
                        got[p].append((rec.offset, rec.value, headers))
            if time.monotonic() - since > 30:
                log.warning("round %s: still reading joined domains' events from partitions %s", round_id, sorted(got))
                since = time.monotonic()
    finally:
        c.close()
    return out


def _batch_lines(value: bytes | None) -> list[bytes]:
    """The events of a batch message (header dustonline-format: jsonl): its non-blank lines."""
    return [line for line in (value or b"").split(b"\n") if line.strip()]


def _route(url: str, partitions: int) -> int:
    """The partition the event's site key goes to with Kafka's default partitioner."""
    return partition_of_host(host_of(url), partitions)
