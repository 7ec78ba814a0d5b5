"""Pooling what a worker group's learners count across sites (dustonline/learner/shared.py):
transfer classes, clusters of one rule shape, a rule's validation counts, the values its
context is rendered from. Each site is in one partition; these sums span partitions.

After a partition derives at a flush marker, its shard learners' counts go to the
compacted transfer topic, keyed by the partition, with the marker's offset (learn.py).
The worker that owns pages partition 0 coordinates: when the counts changed since it last
pooled, it writes into every partition a flush marker carrying, for each of its shards,
the other shards' counts combined (learner/shards.py). Each learner adopts them where it
reads the marker, derives, and publishes its counts again. A round starts
- when every pages partition has been learned to its end (each one's counts are as of
  its last record): rounds repeat until the counts settle, from complete counts only, as
  PartitionedLearner.flush does at the end of ``dustonline learn --partitions N``; a
  group that pools only then (``learning.pool_every`` and ``kafka.pool_every_seconds``
  0) learns what that learns with ``pool_every`` 0;
- or, while some partition never goes quiet, from the counts as last published, once
  ``learning.pool_every`` records came into the pages topic since the last round (so a
  replay at full speed pools as often, per event, as ``learn --partitions N``), or
  ``kafka.pool_every_seconds`` passed (so a slow crawl pools too).

- or, when ``dustonline replay`` placed round markers (rounds.py), once every partition
  has reached the marker and published its counts for it: all shards' counts go onto
  the transfer topic (key ``pool``), where each worker reads its share. While a replay
  places rounds (its ``Placer`` record), the coordinator places none, and records the
  replay covered do not count towards a periodic round.

What a learner adopts is in its partition's log (or, for a replay round, fixed by it), so
replays and recoveries pool at the same points with the same counts. The coordinator
runs in a thread of its own, with its own kafka-python clients: its reads and writes
never hold up the event loop that learns.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid

from dustonline.config import Config
from dustonline.learner.joins import Joins
from dustonline.learner.shards import POOL_ROUNDS, shard_count, shards_of
from dustonline.learner.shared import Counts, others_of

from . import clients, topics

log = logging.getLogger("dustonline.worker")

CHECK_EVERY = 1.0  # seconds between the coordinator's looks at the end offsets
OWN_ROUND = "coord-"  # the id of a round the coordinator placed (with joins), not a replay


class PoolCoordinator:
    def __init__(self, cfg: Config, transfer_topic: str, rounds_counter=None, skipped_counter=None):
        self.cfg = cfg
        self.rounds_counter = rounds_counter
        self.skipped_counter = skipped_counter
        self.topic = transfer_topic
        self.npart = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._consumer = None
        self._producer = None
        self.counts: dict[int, topics.Transfer] = {}  # pages partition -> its latest counts
        self.pooled: list[Counts] | None = None  # the counts of the last round started
        self.rounds = 0  # rounds started since the counts last settled or new records came
        self.placer: topics.Placer | None = None  # the last replay's, if one placed rounds
        self.last_replay_round = ""  # the id of the last replay round pooled
        self._completed: set[tuple[str, int]] = set()  # (round, partition) markers this wrote
        self._after = -1  # the pages partitions' end offsets summed, after the last round's markers
        self._last_round = time.monotonic()  # the first periodic round waits a period
        self._joins: Joins | None = None  # with learning.join_after: the group's joins (joins.py)
        self._run_id = uuid.uuid4().hex[:12]  # this coordinator's rounds (with joins) are named apart
        self._placed = 0
        self.joins_saved: topics.JoinsState | None = None  # as last written, for a coordinator taking over
        self._joins_records: dict[str, bytes] = {}  # its digests' records (Joins.save), as last written

    # ------------------------------------------------------------ thread
    def start(self, npart: int) -> None:
        """Coordinate a group of ``npart`` pages partitions (this worker owns partition 0)."""
        self.npart = npart
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._joins = None  # another coordinator may have decided since: restored from the topic
            self._thread = threading.Thread(target=self._run, name="dustonline-pool", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Partition 0 went elsewhere: its new owner coordinates."""
        self._stop.set()

    def _run(self) -> None:
        try:
            wait_ms, drain_ms = 200, 200  # at first, read all there is
            while not self._stop.is_set():
                try:
                    self._read(wait_ms, drain_ms)
                    wait_ms, drain_ms = int(CHECK_EVERY * 1000), 0
                    self.tick(self.npart)
                except Exception:
                    log.exception("pooling round failed; trying again")
                    self._joins = None  # a round half sent: its joins again as last saved
                    self._stop.wait(CHECK_EVERY)
        finally:
            for c in (self._consumer, self._producer):
                if c is not None:
                    c.close()
            self._consumer = self._producer = None

    # ------------------------------------------------------------ rounds
    def _consumer_(self):
        if self._consumer is None:
            self._consumer = clients.reader_from_start(self.cfg, self.topic)
        return self._consumer

    def _read(self, wait_ms: int, drain_ms: int) -> None:
        """The transfer topic's new records: the first poll waits up to ``wait_ms`` for
        one (so a replay round is pooled as soon as its last partition publishes), the
        next ones ``drain_ms``."""
        consumer = self._consumer_()
        timeout = wait_ms
        while True:
            batch = consumer.poll(timeout_ms=timeout, max_records=10_000)
            if not batch:
                return
            for recs in batch.values():
                for rec in recs:
                    self._take(rec)
            timeout = drain_ms

    def _take(self, rec) -> None:
        if rec.key is not None and rec.key.startswith(topics.JOINS_PREFIX):
            if rec.value:  # the coordinator's joins' digests (Joins.save); none: deleted
                self._joins_records[rec.key.decode()] = rec.value
            else:
                self._joins_records.pop(rec.key.decode(), None)
            return
        if not rec.value:
            return
        try:
            if rec.key == topics.POOL_KEY:
                self.last_replay_round = topics.pooled_of(rec.value).round
            elif rec.key == topics.JOINS_KEY:
                self.joins_saved = topics.joins_of(rec.value)
            elif rec.key is not None and rec.key.startswith(topics.HANDOVER_PREFIX):
                pass  # the partitions' (rounds.py)
            elif rec.key == topics.PLACER_KEY:
                self.placer = topics.placer_of(rec.value)
                if self.placer.ends:  # a replay ended: what it covered had its rounds
                    self._after = max(self._after, sum(self.placer.ends.values()))
                    self._last_round = time.monotonic()
            else:
                t = topics.transfer_of(rec.value)
                self.counts[t.partition] = t
        except ValueError as e:  # not ours: skipped, or every round would fail on it
            log.error("transfer topic offset %d: not a record of the pooling (%s); skipped", rec.offset, e)

    def _ends(self, npart: int) -> dict[int, int]:
        from kafka import TopicPartition

        K = self.cfg.kafka
        tps = [TopicPartition(K.pages_topic, p) for p in range(npart)]
        assert self._consumer is not None
        return {tp.partition: off for tp, off in self._consumer.end_offsets(tps).items()}

    def tick(self, npart: int) -> bool:
        """From the records read so far: pool a replay round every partition waits at, or
        start a round if the counts changed and either every partition is learned to
        its end, or ``learning.pool_every`` records came or ``kafka.pool_every_seconds``
        passed since the last round; True when markers were written."""
        if npart < 2:
            return False
        latest = [self.counts.get(p) for p in range(npart)]
        at = {t.round for t in latest if t is not None and t.round}
        if at:  # a replay round: pooled once every partition waits at it, and nothing else meanwhile
            if len(at) == 1 and all(t is not None and t.round for t in latest):
                (round_id,) = at
                if round_id != self.last_replay_round:
                    self._pool_replay_round(round_id, self._by_shard(npart))
                    return True
            elif len(at) == 1 and not self._replaying():
                self._complete_round(next(iter(at)), latest, npart)
            return False
        if self._replaying():
            return False  # a replay is placing rounds: ours would fall elsewhere
        ends = self._ends(npart)
        if sum(ends.values()) > self._after:
            self.rounds = 0  # records came besides the markers: as a new PartitionedLearner.flush
        complete = True
        for p in range(npart):
            t = self.counts.get(p)
            if ends.get(p, 0) > (t.offset + 1 if t is not None else 0):
                complete = False  # records not learned yet, or learned but not published
        if self.cfg.learning.join_after and sum(ends.values()) > max(self._after, 0):
            # joins need every pool point to be a round (a barrier): the moves are decided
            # from every partition's report of it, and a joined domain's events are read at
            # rounds. The first pool after new records is one, as the end of `learn`'s input
            if complete or self._due(sum(ends.values())):
                # a replay writes its placer before its first event: read now, it is seen
                # whenever these end offsets hold the replay's events (else a round would
                # fall where `learn` has none)
                self._read(200, 0)
                if self._replaying() or any(t is not None and t.round for t in self.counts.values()):
                    return False
                self._place_round(npart, ends)
                return True
            return False
        counts = self._by_shard(npart)
        if counts == self.pooled:
            if complete:
                self.rounds = 0
            return False
        if not complete and not self._due(sum(ends.values())):
            return False
        if complete and self.rounds >= POOL_ROUNDS:
            return False  # as PartitionedLearner.flush: counts that keep changing wait for new records
        self._round(npart, counts, ends, complete)
        return True

    def _replaying(self) -> bool:
        return self.placer is not None and self.placer.until > time.time()

    def _by_shard(self, npart: int) -> list[Counts]:
        shards: dict[int, Counts] = {}
        for t in self.counts.values():
            shards.update(t.counts)
        return [dict(shards.get(s, {})) for s in range(shard_count(self.cfg, npart))]

    def _pool_replay_round(self, round_id: str, counts: list[Counts]) -> None:
        """Every shard's counts at a replay round, for the workers (rounds.RoundReader)."""
        if self._producer is None:
            self._producer = clients.producer(self.cfg, linger_ms=0, retries=10)
        moves: list = []
        offsets: dict[int, int] = {}
        if self.cfg.learning.join_after:
            moves = self._joined(round_id, len(counts))
            offsets = {p: t.offset for p, t in self.counts.items()}
        value = topics.pooled_value(topics.Pooled(round_id, dict(enumerate(counts)), moves=moves, offsets=offsets))
        if len(value) > topics.MAX_POOLED_BYTES:
            if self.skipped_counter is not None:
                self.skipped_counter.inc()
            log.error(
                "replay round %s pools nothing: its counts are %d bytes compressed, over %d",
                round_id,
                len(value),
                topics.MAX_POOLED_BYTES,
            )
            value = topics.pooled_value(topics.Pooled(round_id, {}, skipped=True, moves=moves, offsets=offsets))
        self._producer.send(self.topic, key=topics.POOL_KEY, value=value).get(timeout=60)
        self.last_replay_round = round_id
        self.pooled = counts
        self.rounds = 1 if round_id.startswith(OWN_ROUND) else 0  # its own round is the first of the end's
        self._last_round = time.monotonic()
        if self.rounds_counter is not None:
            self.rounds_counter.inc()
        log.info("pooled replay round %s (%d shards)", round_id, len(counts))

    def _joined(self, round_id: str, total: int) -> list:
        """The joins of a replay round, decided from every partition's report of it, as
        one router decides them from the events (joins.py). The coordinator's ``Joins`` is
        written before the round's pooled record: one that takes over after a crash
        between the two uses the moves written, not its own second decision."""
        saved = self.joins_saved
        if self._joins is None:
            self._joins = Joins(total, self.cfg.learning.join_after)
            if saved is not None and saved.state and saved.journal:
                self._joins.load(_JoinsRecords(saved.state, self._joins_records), JOINS_HEAD)
            elif saved is not None and saved.state:
                self._joins.restore(saved.state)
        if saved is not None and saved.round == round_id:
            return list(saved.moves)
        for p in sorted(self.counts):
            seen = self.counts[p].seen
            if seen is not None:
                self._joins.add(seen)
        moves = self._joins.decide()
        # the round's digests, not all of them (each round wrote the whole before: 1.3 MB
        # compressed at 120k digests, past the size limit, and 70 ms of the worker's time)
        out = _JoinsRecords(b"", self._joins_records)
        self._joins.save(out, JOINS_HEAD)
        js = topics.JoinsState(round_id, out.head, moves, journal=True)
        value = topics.joins_value(js)
        if len(value) > topics.MAX_POOLED_BYTES:
            log.error(
                "replay round %s: the group's joins are %d bytes compressed, over %d: kept here only "
                "(a coordinator taking over starts them again)",
                round_id,
                len(value),
                topics.MAX_POOLED_BYTES,
            )
            value = topics.joins_value(topics.JoinsState(round_id, b"", moves))
        assert self._producer is not None
        for key, record in out.written:  # the records before the head that names them
            self._producer.send(self.topic, key=key.encode(), value=record)
        self._producer.flush(timeout=60)
        self._producer.send(self.topic, key=topics.JOINS_KEY, value=value).get(timeout=60)
        self.joins_saved = js
        for key, record in out.written:  # as sent (a round that fails reloads what was)
            self._joins_records[key] = record
        named = self._joins.saved_keys(JOINS_HEAD)
        # what the head no longer names, and what a coordinator cut off before deleting
        # it left (read when this one took over): no head names those either
        stale = set(out.deleted) | {k for k in self._joins_records if k not in named}
        for key in sorted(stale):
            self._producer.send(self.topic, key=key.encode(), value=None)
            self._joins_records.pop(key, None)
        if moves:
            log.info("replay round %s: %d registered domains join another's shard", round_id, len(moves))
        return moves

    def _complete_round(self, round_id: str, latest: list, npart: int) -> None:
        """A replay that stopped between the markers of a round (killed, say) left some
        partitions waiting for partitions that will never read the marker: once no replay
        holds the placer, the marker goes into each partition learned to its end without
        it, and the round ends as any other."""
        if round_id == self.last_replay_round:
            return  # pooled: the partitions still at it are reading it
        ends = self._ends(npart)
        for p, t in enumerate(latest):
            if t is not None and t.round:
                continue
            if ends.get(p, 0) <= (t.offset + 1 if t is not None else 0) and (round_id, p) not in self._completed:
                if self._producer is None:
                    self._producer = clients.producer(self.cfg, linger_ms=0, retries=10)
                self._producer.send(
                    self.cfg.kafka.pages_topic,
                    key=b"",
                    value=round_id.encode(),
                    partition=p,
                    headers=topics.ROUND_HEADERS,
                ).get(timeout=60)
                self._completed.add((round_id, p))
                log.warning("replay round %s: partition %d never got its marker; written now", round_id, p)

    def _place_round(self, npart: int, ends: dict[int, int]) -> None:
        """A round marker into every partition (with joins): pooled as a replay's are."""
        if self._producer is None:
            self._producer = clients.producer(self.cfg, linger_ms=0, retries=10)
        self._placed += 1
        value = f"{OWN_ROUND}{self._run_id}/{self._placed}".encode()
        sent = [
            self._producer.send(
                self.cfg.kafka.pages_topic, key=b"", value=value, partition=p, headers=topics.ROUND_HEADERS
            )
            for p in range(npart)
        ]
        self._producer.flush()
        for f in sent:
            f.get(timeout=0)
        self._after = sum(ends.values()) + npart
        self._last_round = time.monotonic()
        log.info("round %s placed (joins: every pool point is a round)", value.decode())

    def _due(self, records: int) -> bool:
        """A periodic round is due while the group is busy: by records, or by time."""
        every, seconds = self.cfg.learning.pool_every, self.cfg.kafka.pool_every_seconds
        if every > 0 and records - max(self._after, 0) >= every:
            return True
        return seconds > 0 and time.monotonic() - self._last_round >= seconds

    def _round(self, npart: int, counts: list[Counts], ends: dict[int, int], complete: bool) -> None:
        if self._producer is None:
            self._producer = clients.producer(self.cfg, linger_ms=0, retries=10)
        pages = self.cfg.kafka.pages_topic
        others = others_of(counts)  # by shard
        values = [topics.pool_value({s: others[s] for s in shards_of(p, npart, len(counts))}) for p in range(npart)]
        if max(map(len, values)) > topics.MAX_POOLED_BYTES:
            self.pooled = counts  # not again until the counts change
            if self.skipped_counter is not None:
                self.skipped_counter.inc()
            log.error(
                "pooling round not started: a marker would be %d bytes compressed, over %d",
                max(map(len, values)),
                topics.MAX_POOLED_BYTES,
            )
            return
        sent = [
            self._producer.send(pages, key=b"", value=v, partition=p, headers=topics.FLUSH_HEADERS)
            for p, v in enumerate(values)
        ]
        self._producer.flush()
        for f in sent:
            f.get(timeout=0)  # raises if a marker was not delivered: the round is tried again
        self.pooled = counts
        self.rounds += 1
        self._last_round = time.monotonic()
        self._after = sum(ends.values()) + npart
        if self.rounds_counter is not None:
            self.rounds_counter.inc()
        log.info(
            "pooled transfer counts of %d shards on %d partitions (%d names, %s)",
            len(counts),
            npart,
            len({name for c in counts for name in c}),
            "all learned to their end" if complete else "periodic: some partition is busy",
        )


JOINS_HEAD = topics.JOINS_KEY.decode()


class _JoinsRecords:
    """``Joins.save``'s and ``load``'s table on the transfer topic: the head is the round's
    ``JoinsState``; the other records (its digests) are read from those last read or sent,
    and what a save writes and deletes is collected for the coordinator to send in order
    (and keep once sent)."""

    def __init__(self, head: bytes, records: dict[str, bytes]):
        self.head = head
        self.records = records
        self.written: list[tuple[str, bytes]] = []
        self.deleted: list[str] = []

    def get(self, key: str, default=None):
        if key == JOINS_HEAD:
            return self.head or default
        return self.records.get(key, default)

    def __getitem__(self, key: str) -> bytes:
        return self.records[key]

    def __setitem__(self, key: str, value: bytes) -> None:
        if key == JOINS_HEAD:
            self.head = value
        else:
            self.written.append((key, value))

    def __delitem__(self, key: str) -> None:
        self.deleted.append(key)
