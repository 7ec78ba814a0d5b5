"""stream/state.py: the learner's store on a Faust table partition, without a broker.

The table's local RocksDB is a real rocksdict; only the Faust table object around it is
a stand-in (the worker tests run the real one against a broker)."""

import msgspec
import pytest
from rocksdict import Options, Rdict

from dustonline import OnlineLearner
from dustonline.config import ConfigError, config_from_dict
from dustonline.evaluation.generator import GenConfig, generate
from dustonline.events.event import BadEvent
from dustonline.events.readers import parse_message
from dustonline.state.store import Store, rocks_store
from dustonline_stream.state import OFFSET_KEY, FaustTableBackend


class _Data:
    def __init__(self, root):
        self.root, self.dbs = root, {}

    def _db_for_partition(self, p):
        if p not in self.dbs:
            self.dbs[p] = Rdict(str(self.root / f"p{p}"), Options(raw_mode=True))
        return self.dbs[p]


class _Table:
    def __init__(self, root):
        self.data = _Data(root)


def test_overlay_reads_scans_and_range_deletes_before_commit(tmp_path):
    b = FaustTableBackend(_Table(tmp_path), 0)
    b.db.put(b"t\x00a", b"1")
    b.db.put(b"t\x00c", b"3")
    b.db.put(b"t\x00e", b"5")
    b.write(b"t\x00", {"b": 2, "c": 30, "e": None}, None, lambda v: str(v).encode())
    assert b.get(b"t\x00c") == b"30" and b.get(b"t\x00e") is None and b.get(b"t\x00a") == b"1"
    assert list(b.scan(b"t\x00")) == [(b"t\x00a", b"1"), (b"t\x00b", b"2"), (b"t\x00c", b"30")]
    b.delete_range(b"t\x00a", b"t\x00c")
    assert list(b.scan_keys(b"t\x00")) == [b"t\x00c"]
    assert b.db.get(b"t\x00a") == b"1"  # nothing reaches the table before the checkpoint


def test_commit_writes_the_table_and_returns_the_changelog_batch_with_the_offset(tmp_path):
    b = FaustTableBackend(_Table(tmp_path), 3)
    assert b.applied_offset == -1
    b.db.put(b"t\x00old", b"x")
    b.write(b"t\x00", {"k": "v", "old": None}, None, lambda v: v.encode())
    records = list(b.commit(41).items())
    assert records[-1] == (OFFSET_KEY, b"41")  # last in the batch: present only if the whole batch is
    assert (b"t\x00k", b"v") in records and (b"t\x00old", None) in records
    assert b.db.get(b"t\x00k") == b"v" and b.db.get(b"t\x00old") is None and b.applied_offset == 41
    assert list(b.commit(42).items()) == [(OFFSET_KEY, b"42")]


def test_commit_applies_writes_and_range_deletes_in_their_order(tmp_path):
    """The batch is built as writes arrive: a range delete must drop what was written
    before it in the same checkpoint, and keep what was written after."""
    b = FaustTableBackend(_Table(tmp_path), 0)
    b.db.put(b"t\x00a", b"1")
    enc = lambda v: str(v).encode()  # noqa: E731
    b.write(b"t\x00", {"b": 2, "x": 9}, None, enc)
    b.delete_range(b"t\x00a", b"t\x00c")
    b.write(b"t\x00", {"b": 20}, None, enc)
    records = dict(b.commit(7))
    stored = dict(b.db.items())
    assert stored.get(b"t\x00a") is None and stored[b"t\x00b"] == b"20" and stored[b"t\x00x"] == b"9"
    assert records[b"t\x00a"] is None and records[b"t\x00b"] == b"20"  # the changelog says the same


def test_learner_on_the_table_equals_the_learner_on_rocksdb_across_checkpoints(tmp_path):
    cfg = config_from_dict({"learning": {"min_freq": 3, "min_supp": 3}})
    events = [ev for ev, _ in generate(GenConfig(seed=9, sites=6, pages=1200))]
    table = _Table(tmp_path)
    backend = FaustTableBackend(table, 0)
    on_table = OnlineLearner(cfg, Store(backend, 500))
    for i, ev in enumerate(events, 1):
        on_table.learn_one(ev)
        if i % 300 == 0:  # the worker's checkpoints
            on_table.checkpoint()
            backend.commit(i)
        if i == len(events) // 2:  # and a worker taking the partition over from the table
            on_table.checkpoint()
            backend.commit(i)
            backend = FaustTableBackend(table, 0)
            on_table = OnlineLearner(cfg, Store(backend, 500))
            assert backend.applied_offset == i
    on_table.flush()
    reference = OnlineLearner(cfg, rocks_store(tmp_path / "ref", 500))
    reference.learn_many(events)
    sig = lambda lrn: [msgspec.to_builtins(r) for r in lrn.rules()]  # noqa: E731
    assert sig(on_table) == sig(reference) and len(reference.rules()) > 3
    assert on_table.summary() == reference.summary()


@pytest.mark.parametrize(
    "raw,reason",
    [
        (b"", "bad-json"),
        (b"{", "bad-json"),
        (b"\xff\xfe\x00", "undecodable"),
        (b"{}", "missing-url"),
        (b'{"url": "ftp://x.com/a", "ts": 1}', "not-http"),
        (b'{"url": "http://x.com/", "ts": "soon"}', "bad-timestamp"),
    ],
)
def test_topic_values_rejected_with_their_reason(raw, reason):
    with pytest.raises(BadEvent) as e:
        parse_message(raw)
    assert e.value.reason == reason


def test_topic_values_accepted_in_both_event_formats():
    ev = parse_message(b'{"url": "http://www.x.com/a", "ts": 1700000000, "digest": "sha1:AAAA"}')
    assert ev.url == "http://www.x.com/a" and ev.ts == 1700000000.0
    kafka_feed = parse_message(
        b'{"url": "http://www.x.com/b", "timestamp": "2024-01-01T00:00:00Z", '
        b'"status_code": 200, "content_digest": "sha1:BBBB"}'
    )
    assert kafka_feed.url == "http://www.x.com/b" and kafka_feed.status == 200


@pytest.mark.parametrize(
    "kafka,fix",
    [
        ({"processing_guarantee": "exactly_once"}, "kafka.processing_guarantee must be 'at_least_once'"),
        ({"partitions": 0}, "kafka.partitions must be >= 1"),
        ({"security_protocol": "SASL_SSL"}, "kafka.sasl_mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"),
        ({"security_protocol": "TLS"}, "kafka.security_protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"),
        ({"group_id": "my group"}, "kafka.group_id must be characters of"),
        ({"idle_flush_seconds": 0}, "kafka.idle_flush_seconds must be > 0"),
        ({"pool_every_seconds": -1}, "kafka.pool_every_seconds must be >= 0"),
        ({"fetch_max_wait_ms": 0}, "kafka.fetch_max_wait_ms must be 1-10000 (milliseconds)"),
    ],
)
def test_worker_config_errors_say_what_to_fix(kafka, fix):
    with pytest.raises(ConfigError) as e:
        config_from_dict({"kafka": kafka})
    assert fix in str(e.value)


def test_pooled_counts_travel_compressed_and_a_bad_marker_value_is_an_error_not_a_crash():
    """Markers and the transfer topic carry gzip'd JSON (the counts grow with the state);
    a marker value that decodes neither way is a ValueError, which the worker dead-letters
    and then treats as a plain flush (learn.py)."""
    import gzip

    from dustonline_stream import topics

    others = {1: {"c\x00clkid": (3, 0), "m\x00abc\x00": (2,), "v\x00r-1": (4, 4, 0, 2)}, 5: {}}  # by shard
    value = topics.pool_value(others)
    assert value[:2] == b"\x1f\x8b" and topics.pool_of(value) == others
    assert topics.pool_of(b"") is None
    t = topics.transfer_of(topics.transfer_value(1, 41, others))
    assert (t.partition, t.offset, t.counts) == (1, 41, others)
    for bad in (
        b"not json",
        b"\x1f\x8b\x08garbage",
        b"\x1f\x8bXXXXXXXXXXXX",
        gzip.compress(b'{"others": 3}'),
        gzip.compress(b'{"others": {"c\\u0000x": [1, 0]}}'),
    ):
        with pytest.raises(ValueError):
            topics.pool_of(bad)
