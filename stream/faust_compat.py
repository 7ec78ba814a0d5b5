"""Every use of a private Faust, aiokafka or mode internal, behind a named function.

The worker needs five things neither library offers publicly:

- a checkpoint queued as ONE record batch without an await (``checkpoint.py``): aiokafka's
  public ``send_batch`` awaits a free slot, and a Faust offset commit could run in that
  wait, so the batch goes straight into the producer's accumulator;
- a fetch wait for Faust's consumer: Faust fixes it at 1500 ms, and the wait is an
  attribute of the aiokafka fetcher under Faust's consumer thread;
- the table's local RocksDB of one partition (``state.py``), which Faust's store keeps
  per partition without a public accessor;
- the pages topic read in batches (``batches.py``): Faust hands a consumer's records to
  its agents one message at a time (a pair of tasks, the conductor, an event, a queue and
  the stream's bookkeeping each), which held one event per message at a quarter of the
  embedded learner's speed; the fetch loop of Faust's consumer is replaced by one that
  hands a topic's records over as one list per partition and fetch;
- a seek to committed offsets that also rewinds partitions never committed
  (``seek_to_committed``), which aiokafka leaves where their dropped fetches got to.

These names are not API and move between releases, so importing this module checks the
installed versions against ``SUPPORTED``, the ranges they were read from (the ``stream``
extra of pyproject.toml pins the same), and refuses others: a moved internal would
otherwise crash the worker at its first checkpoint, or silently drop the fetch wait.
tests/test_faust_compat.py keeps every other module of this package off private names.
"""

from __future__ import annotations

import time

# distribution -> the versions this module was written and tested for (PEP 440; the
# `stream` extra of pyproject.toml must say the same). Widen a range only after
# tests/test_worker.py passes against the new release.
SUPPORTED = {
    "faust-streaming": ">=0.15.3,<0.16",
    "aiokafka": ">=0.14.0,<0.15",
}


class UnsupportedVersion(ImportError):
    """An installed faust-streaming or aiokafka outside ``SUPPORTED`` (an ImportError,
    so ``dustonline worker`` reports it as a missing stream extra, with this message)."""


def check_versions() -> dict[str, str]:
    """The installed versions of ``SUPPORTED``'s distributions; raises UnsupportedVersion,
    naming the installed and the supported versions, unless all are in range."""
    from importlib import metadata

    found, problems = {}, []
    for dist, spec in SUPPORTED.items():
        try:
            found[dist] = installed = metadata.version(dist)
        except metadata.PackageNotFoundError:
            problems.append(f"{dist} is not installed (supported: {dist}{spec})")
            continue
        if not _in_range(installed, spec):
            problems.append(f"{dist} {installed} is installed (supported: {dist}{spec})")
    if problems:
        raise UnsupportedVersion(
            f"{'; '.join(problems)}. dustonline_stream.faust_compat uses private internals of these "
            "versions: install them (pip install 'dustonline[stream]'), or test the worker against the "
            "installed ones and widen SUPPORTED there and the stream extra of pyproject.toml"
        )
    return found


def _in_range(version: str, spec: str) -> bool:
    from packaging.specifiers import SpecifierSet  # a dependency of aiokafka
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(spec).contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


check_versions()


# ---------------------------------------------------------------- producer (checkpoints)
def changelog_producer(app):
    """The aiokafka producer under Faust's: the one that writes the table changelogs, so
    a checkpoint queued on it is flushed by Faust before it commits offsets."""
    return app.producer._producer


async def wait_for_metadata(producer, topic: str) -> None:
    """Until the producer knows ``topic``'s partitions (what ``send`` awaits first)."""
    await producer.client._wait_on_metadata(topic)


def new_batch(max_bytes: int):
    """An empty, uncompressed aiokafka record batch of at most ``max_bytes``; its
    ``append`` returns None once full."""
    from aiokafka.producer.message_accumulator import BatchBuilder

    return BatchBuilder(max_bytes, 0)


def queue_batch_now(producer, batch, topic: str, partition: int):
    """``batch`` into the producer's queue for ``topic``/``partition`` without waiting
    (``send_batch`` may wait for a slot); returns the future of its delivery, whose result
    is the RecordMetadata of its first record."""
    from aiokafka.structs import TopicPartition

    return producer._message_accumulator._append_batch(batch, TopicPartition(topic, partition)).future


# ---------------------------------------------------------------- consumer (fetch wait)
def _fetcher(app):
    """aiokafka's fetcher under Faust's worker consumer, or None before the consumer
    exists. aiokafka leaves a partition that still has buffered records out of the next
    fetch: events arriving on it meanwhile wait for that fetch, which the broker holds up
    to the fetch wait when the other partitions are quiet. The wait is read per fetch
    request, so setting it applies at once."""
    thread = getattr(app.consumer, "_thread", None)
    consumer = getattr(thread, "_consumer", None)
    return getattr(consumer, "_fetcher", None)


def set_fetch_max_wait(app, ms: int) -> bool:
    """Set the fetch wait of Faust's consumer; False when there is no fetcher to set."""
    fetcher = _fetcher(app)
    if fetcher is None:
        return False
    fetcher._fetch_max_wait_ms = ms
    return True


def fetch_max_wait(app) -> int | None:
    """The fetch wait of Faust's consumer in ms (None: no fetcher yet)."""
    return getattr(_fetcher(app), "_fetch_max_wait_ms", None)


# ---------------------------------------------------------------- table
def as_current_event(stream, event) -> None:
    """Make ``event`` the current event of ``stream``, as its iteration does: a table write
    takes its changelog partition from it, and events taken a buffer at a time
    (``Stream.take_events``) are not iterated one by one. The caller holds the event."""
    stream._set_current_event(event)


def partition_db(table, partition: int):
    """The local store of one partition of a RocksDB-backed Faust table: a rocksdict
    ``Rdict`` in raw mode, opened on first use."""
    return table.data._db_for_partition(partition)


def topic_partitions(app, topic: str) -> int | None:
    """The partition count of ``topic`` from the consumer's metadata (None: not known)."""
    try:
        return app.consumer.topic_partitions(topic)
    except Exception:  # noqa: BLE001 -- another Faust, or no metadata yet
        return None


# ---------------------------------------------------------------- consumer (batched topic)
def batch_topic(app, topic: str, sink, on_error) -> None:
    """Records of ``topic`` go to ``sink(tp, messages)``, one call per partition per fetch
    (a Faust ``TP``, and ``ConsumerMessage``s in offset order), instead of through Faust's
    agents; records of every other topic take Faust's own path. Faust still subscribes,
    assigns, rebalances and recovers, and commits what ``app.consumer.ack(message)`` acks.
    An exception in the fetch loop (the sink's too) goes to ``on_error(exc)``: Faust would
    log it and leave the worker up, reading nothing. Call before the app's consumer exists
    (``app.consumer`` is made on first use)."""
    if app._consumer is not None:
        raise RuntimeError("batch_topic: the app's consumer exists already")
    transport = _batching_transport_class()(app.conf.broker_consumer, app)
    transport.batched = {topic: sink}
    transport.on_error = on_error
    app.transport = transport


def _batching_transport_class():
    """Faust's aiokafka transport, whose consumer's fetch loop is ``_drain_batched``."""
    from faust.transport.drivers import aiokafka as driver

    class BatchingConsumer(driver.Consumer):
        async def seek_to_committed(self):
            thread = self._thread
            changelogs = set(self.app.tables.changelog_topics)
            return await thread.call_thread(seek_to_committed, thread._ensure_consumer(), changelogs)

        async def _drain_messages(self, fetcher) -> None:
            try:
                await _drain_batched(self, fetcher)
            except Exception as exc:
                self.transport.on_error(exc)
                raise

    class BatchingTransport(driver.Transport):
        Consumer = BatchingConsumer
        batched: dict = {}
        on_error = None

    return BatchingTransport


async def seek_to_committed(consumer, skip_topics=frozenset()) -> dict:
    """aiokafka's ``seek_to_committed``, except that a partition with no committed offset
    (or 0) goes back to its beginning: aiokafka leaves it where its fetches got to. Faust
    seeks there after every rebalance and recovery to bring back records it fetched and
    dropped (flow stopped, generation changed); without a commit they were gone until the
    next restart. Found as a rule partial skipped by the merge after kill -9: the partials
    partition had never been committed (aiokafka issue #1003, open). ``skip_topics``: the
    table changelogs, whose offsets Faust seeks itself."""
    committed = await consumer.seek_to_committed()
    fresh = [tp for tp, offset in committed.items() if not offset and tp.topic not in skip_topics]
    if fresh:
        await consumer.seek_to_beginning(*fresh)
    return committed


async def _drain_batched(consumer, fetcher) -> None:
    """Faust 0.15.3's ``Consumer._drain_messages`` (and the ``getmany`` it iterates), with
    one change: the records of a batched topic's partition are handed to its sink in one
    call, after the same checks Faust makes per message (flow active, same consumer
    generation, partition fetched, read offset not passed, offset gaps recorded for the
    commit). The rest go message by message to Faust's conductor, as in Faust."""
    import asyncio

    from faust.transport.consumer import CONSUMER_FETCHING
    from faust.types import TP

    app = consumer.app
    sinks = consumer.transport.batched
    callback = consumer.callback
    consumer_should_stop = consumer._stopped.is_set
    fetcher_should_stop = fetcher._stopped.is_set
    get_read_offset = consumer._read_offset.__getitem__
    set_read_offset = consumer._read_offset.__setitem__
    set_flag, unset_flag = consumer.diag.set_flag, consumer.diag.unset_flag
    commit_every = consumer._commit_every
    acks_enabled_for = app.topics.acks_enabled_for
    to_message = consumer._to_message
    monitor = app.monitor
    inbound = monitor.stream_inbound_time  # Faust's livelock check: this partition is read
    yield_every, num_since_yield = 100, 0

    async def offset_ok(tp, offset: int) -> bool:
        """Faust's per-message check: not behind the read offset; a gap is recorded."""
        r_offset = get_read_offset(tp)
        if r_offset is None or offset >= r_offset:
            if offset - (r_offset or 0) > 1 and r_offset and acks_enabled_for(tp.topic):
                await consumer._add_gap(tp, r_offset + 1, offset)
            return True
        consumer.log.dev("DROPPED MESSAGE ROFF %r: %r", offset, tp)
        return False

    async def maybe_commit() -> None:
        if commit_every is not None and consumer._n_acked >= commit_every:
            consumer._n_acked = 0
            await consumer.commit()

    try:
        while not (consumer_should_stop() or fetcher_should_stop()):
            set_flag(CONSUMER_FETCHING)
            records, active_partitions = await consumer._wait_next_records(1.0)
            await consumer.sleep(0)
            if records is None or consumer.should_stop:
                unset_flag(CONSUMER_FETCHING)
                continue
            if not consumer.flow_active:
                try:
                    await consumer.perform_seek()
                except Exception as ex:  # noqa: BLE001 -- as Faust's getmany
                    consumer.log.warning(f"exception performing seek when flow not active {ex}")
                unset_flag(CONSUMER_FETCHING)
                continue
            generation_id = app.consumer_generation_id
            fetched = {
                tp: recs
                for tp, recs in records.items()
                if active_partitions is None or tp in active_partitions or tp in consumer._buffered_partitions
            }
            for tp in [tp for tp in fetched if tp.topic in sinks]:
                recs = fetched.pop(tp)
                if not consumer.flow_active or app.consumer_generation_id != generation_id:
                    break
                monitor.track_tp_end_offset(tp, consumer.highwater(tp))
                batch = []
                for record in recs:
                    if await offset_ok(tp, record.offset):
                        batch.append(to_message(tp, record))
                        set_read_offset(tp, record.offset)
                if batch:
                    inbound[tp] = time.monotonic()
                    sinks[tp.topic](TP(tp.topic, tp.partition), batch)  # Faust's TP, as its pause/resume keep
                await maybe_commit()
            for tp, record in consumer.scheduler.iterate(fetched):
                if not consumer.flow_active or app.consumer_generation_id != generation_id:
                    break
                monitor.track_tp_end_offset(tp, consumer.highwater(tp))
                message = to_message(tp, record)
                num_since_yield += 1
                if num_since_yield > yield_every:
                    await asyncio.sleep(0)
                    num_since_yield = 0
                if await offset_ok(tp, message.offset):
                    await maybe_commit()
                    await consumer.wait_first(callback(message), consumer.suspend_flow.wait())
                    set_read_offset(tp, message.offset)
            unset_flag(CONSUMER_FETCHING)
    except consumer.consumer_stopped_errors:
        if consumer.transport.app.should_stop:
            consumer.log.info("Broker stopped consumer, shutting down...")
            return
        raise
    except asyncio.CancelledError:
        if consumer.transport.app.should_stop:
            consumer.log.info("Consumer shutting down for user cancel.")
            return
        raise
    except Exception as exc:
        consumer.log.exception("Drain messages raised: %r", exc)
        raise
    finally:
        unset_flag(CONSUMER_FETCHING)
