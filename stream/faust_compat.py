"""Every use of a private Faust, aiokafka or mode internal, behind a named function.

The worker needs three things neither library offers publicly:

- a checkpoint queued as ONE record batch without an await (``checkpoint.py``): aiokafka's
  public ``send_batch`` awaits a free slot, and a Faust offset commit could run in that
  wait, so the batch goes straight into the producer's accumulator;
- a fetch wait for Faust's consumer: Faust fixes it at 1500 ms, and the wait is an
  attribute of the aiokafka fetcher under Faust's consumer thread;
- the table's local RocksDB of one partition (``state.py``), which Faust's store keeps
  per partition without a public accessor.

These names are not API and move between releases, so importing this module checks the
installed versions against ``SUPPORTED``, the ranges they were read from (the ``stream``
extra of pyproject.toml pins the same), and refuses others: a moved internal would
otherwise crash the worker at its first checkpoint, or silently drop the fetch wait.
tests/test_faust_compat.py keeps every other module of this package off private names.
"""

from __future__ import annotations

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
