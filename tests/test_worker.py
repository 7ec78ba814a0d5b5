"""The service against a real local broker (scripts/kafka.sh; no mocks): workers learn
from a replayed multi-site stream and a subscriber receives the rules.

Each test compares the service with the embedded learner on the same stream and config:
``dustonline learn`` for one partition, ``dustonline learn --partitions N`` (one learner
per partition, routed and merged as the worker group does) for N. Faults (kill -9, a
worker leaving the group, a broker restart) must end in exactly the uninterrupted
result: the same rules, versions and support, and per partition the same learner
statistics, which any lost or double-counted event would change.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from dustonline import OnlineLearner, RuleSet
from dustonline.config import Config, load_config
from dustonline.evaluation.generator import GenConfig, generate, split_by_page
from dustonline.learner.partitioned import PartitionedLearner
from dustonline.rules.ruleset import encode_rule, read_rules
from dustonline_stream.replay import replay
from dustonline_stream.subscriber import RuleSubscriber
from dustonline_stream.workerproc import WorkerProc, learned_all, partitions_state, service_config, wait_until

pytestmark = pytest.mark.slow
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
_STATS = (
    "events",
    "ignored",
    "new_urls",
    "new_clusters",
    "refreshed",
    "alignments",
    "rule_changes",
    "candidates",
    "active_rules",
)


@pytest.fixture(scope="module")
def stream_data(tmp_path_factory):
    """A generated multi-site stream: the fetches of 70% of the pages to learn from, and
    URLs of the other 30% (pages never seen) to canonicalize."""
    events, rest = split_by_page(list(generate(GenConfig(seed=5, sites=24, pages=3000))), 0.7)
    held_out = sorted({ev.url for ev, _ in rest})
    path = tmp_path_factory.mktemp("stream") / "train.jsonl.gz"
    with gzip.open(path, "wb") as f:
        for ev in events:
            f.write(msgspec.json.encode(ev.to_json()) + b"\n")
    return path, events, held_out


def embedded(cfg_path, events, partitions: int | None):
    """What `dustonline learn [--partitions N]` learns from ``events`` (runner.py)."""
    cfg = load_config(cfg_path)
    sharded = partitions or cfg.learning.shards
    learner = PartitionedLearner(cfg, partitions or 1) if sharded else OnlineLearner(cfg)
    learner.learn_many(events)
    return learner


def signature(rules):
    return sorted((r.id, r.context, r.transformation, tuple(r.hosts), r.version, r.support, r.freq) for r in rules)


def rules_differ(want, have, workers, learners: list[str]) -> str:
    """What a failed comparison needs to be understood afterwards: the rules on one side
    only, whether the learners differ too (``learner_differences``), and each worker's
    partition moves and pooling rounds."""
    lines = [f"only embedded: {r}" for r in want if r not in have]
    lines += [f"only subscribed: {r}" for r in have if r not in want]
    lines += learners or ["the learners' statistics are the embedded ones"]
    marks = ("assigned here", "restored at", "pooled transfer", "pooling round", "ERROR", "CRITICAL")
    for w in workers:
        lines.append(f"--- {w.name}:")
        lines += [ln for ln in w.tail(100_000).splitlines() if any(m in ln for m in marks)]
    return "\n".join(lines)


def subscribed_rules(cfg_path, expected, timeout: float = 120.0, workers=()):
    """The rule set a subscriber holds once it equals ``expected`` (or at the timeout)."""
    cfg = load_config(cfg_path)
    want = signature(expected)
    with RuleSubscriber(cfg) as sub:
        assert sub.wait_until_current(60), "rules topic not readable"
        try:
            wait_until(lambda: signature(sub.rules.rules()) == want, timeout, "the subscribed rules to settle", workers)
        except AssertionError:
            pass  # the assertion below shows the difference
        return sub.rules


# one learner per partition, no joins: the defaults before shards (`learning.shards` 0)
NO_SHARDS = {"min_freq": 3, "min_supp": 3, "shards": 0, "join_after": 0}


def replayed(broker, path, tmp_path, partitions: int, learning: dict | None = None):
    """A config with topics of its own, and the stream replayed onto its pages topic."""
    cfg = service_config(broker, tmp_path, partitions=partitions, learning=learning)
    replay([str(path)], load_config(cfg))
    return cfg


def replayed_through_kill9(cfg, path, n_events: int, partitions: int, workers, rate: float, kill_at: int):
    """The worker runs while the replay writes at ``rate`` events a second; killed -9 once
    it learned ``kill_at`` events, restarted, and left to learn to the end. Returns the
    worker and the replay's summary."""
    import threading

    from dustonline_stream.admin import ensure_topics

    c = load_config(cfg)
    ensure_topics(c)
    w = workers(cfg)
    wait_until(lambda: len((w.state() or {}).get("assigned", ())) == partitions, 120, "the partitions assigned", [w])
    sent: dict = {}
    writer = threading.Thread(target=lambda: sent.update(replay([str(path)], c, rate=rate)), daemon=True)
    writer.start()
    wait_until(learned_at_least([w], kill_at), 180, f"{kill_at} events learned", [w])
    w.kill9()
    w.start()
    writer.join(120)
    wait_until(learned_all([w], partitions, n_events), 240, "the restarted worker to finish", [w])
    return w, sent


def assert_group_equals_embedded(cfg, events, partitions: int, workers):
    """The subscribed rules and each partition's learner statistics equal those of
    `learn --partitions N` on the same events; returns (embedded learner, rule set)."""
    ref = embedded(cfg, events, partitions)
    got = subscribed_rules(cfg, ref.rules(), workers=workers)
    want, have = signature(ref.rules()), signature(got.rules())
    if have != want:
        raise AssertionError(rules_differ(want, have, workers, learner_differences(workers, ref)))
    assert_same_learners(workers, ref)
    return ref, got


def dead_letters(broker: str, topic: str, n: int) -> list[dict]:
    """The first ``n`` records of the DLQ topic (or what arrived within 20 s)."""
    dlq = KafkaConsumer(bootstrap_servers=broker, auto_offset_reset="earliest", enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    dlq.assign([tp])
    dlq.seek_to_beginning(tp)
    got: list[dict] = []
    for _ in range(20):
        for recs in dlq.poll(1000).values():
            got += [json.loads(r.value) for r in recs]
        if len(got) >= n:
            break
    dlq.close()
    return got


def learned_at_least(workers, n: int):
    return lambda: sum(s["events"] for s in partitions_state(workers).values()) >= n


def learner_differences(workers, reference: PartitionedLearner) -> list[str]:
    """Per partition, the learner statistics where the workers' differ from the reference's."""
    got = partitions_state(workers)
    out = []
    for p in range(reference.partitions):
        want, have = reference.partition_summary(p), got.get(p)
        if have is None:
            out.append(f"partition {p}: owned by no worker")
            continue
        diff = {k: (have.get(k), want[k]) for k in _STATS if have.get(k) != want[k]}
        if diff:
            out.append(f"partition {p} (worker, embedded): {diff}")
    return out


def assert_same_learners(workers, reference: PartitionedLearner):
    differences = learner_differences(workers, reference)
    assert not differences, differences


@pytest.fixture
def workers(tmp_path):
    started: list[WorkerProc] = []

    def make(cfg, name="w"):
        w = WorkerProc(cfg, tmp_path, name)
        started.append(w)
        return w.start()

    yield make
    for w in started:
        w.stop()


def test_service_agrees_with_embedded_learn(kafka_broker, stream_data, tmp_path, workers):
    """One partition: the worker's rules equal `dustonline learn`'s, rule for rule, and
    canonicalize held-out URLs to the same keys."""
    path, events, held_out = stream_data
    cfg = replayed(kafka_broker, path, tmp_path, 1)
    w = workers(cfg)
    wait_until(learned_all([w], 1, len(events)), 180, "the worker to learn the stream", [w])
    ref = embedded(cfg, events, None)
    assert len(ref.rules()) >= 10
    got = subscribed_rules(cfg, ref.rules(), workers=[w])
    assert signature(got.rules()) == signature(ref.rules())
    want = RuleSet(ref.rules())
    assert [got.canonicalize(u) for u in held_out] == [want.canonicalize(u) for u in held_out]
    merged = sum(1 for u in held_out if want.canonicalize(u) != u)
    assert merged > 100  # the rules do something on pages never seen
    # the service's own view of its state and its metrics
    state = w.state()
    st = state["partitions"]["0"]
    assert st["events"] == len(events) and st["urls"] == ref.summary()["urls"]
    # the consumer waits as configured, not Faust's 1500 ms (which held events ~1 s)
    assert state["fetch_max_wait_ms"] == load_config(cfg).kafka.fetch_max_wait_ms != 1500
    text = w.get("/metrics")
    for name in (
        "dustonline_events_total",
        "dustonline_lag_events",
        "dustonline_active_rules",
        "dustonline_rule_changes_total",
        "dustonline_clusters",
        "dustonline_checkpoint_seconds",
    ):
        assert name in text, name
    busy = float(
        next(line.split()[1] for line in text.splitlines() if line.startswith("dustonline_learn_busy_seconds_total"))
    )
    assert 0 < busy < 180  # it learned, and the figure is seconds of work (not events, not wall time)


def test_partitioned_service_agrees_with_learn_partitions(kafka_broker, stream_data, tmp_path, workers):
    """Without shards, three partitions are three learners pooling their cross-site counts."""
    path, events, held_out = stream_data
    cfg = replayed(kafka_broker, path, tmp_path, 3, NO_SHARDS)
    w = workers(cfg)
    wait_until(learned_all([w], 3, len(events)), 180, "the worker to learn the stream", [w])
    ref, got = assert_group_equals_embedded(cfg, events, 3, [w])
    want = RuleSet(ref.rules())
    assert [got.canonicalize(u) for u in held_out] == [want.canonicalize(u) for u in held_out]
    # and one learner's keys: partitions learn what one learns (rule supports, which
    # order the rules, may still differ; here no held-out URL's key depends on them)
    one = RuleSet(embedded(cfg, events, None).rules())
    assert [got.canonicalize(u) for u in held_out] == [one.canonicalize(u) for u in held_out]
    # the commands: `learn --partitions 3` writes these rules; `canonicalize --from-topic` gives these keys
    out = tmp_path / "rules.jsonl"
    cli = [sys.executable, "-m", "dustonline"]
    subprocess.run(
        cli
        + [
            "learn",
            str(path),
            "--config",
            str(cfg),
            "--partitions",
            "3",
            "--rules-out",
            str(out),
            "--quiet",
            "--dead-letter",
            str(tmp_path / "dl.jsonl"),
        ],
        check=True,
        capture_output=True,
    )
    assert signature(read_rules(out)) == signature(ref.rules())
    keys = subprocess.run(
        cli + ["canonicalize", "--from-topic", "--config", str(cfg)],
        input="\n".join(held_out),
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert keys == [want.canonicalize(u) for u in held_out]


def test_batched_replay_learns_what_one_event_per_message_learns(kafka_broker, stream_data, tmp_path, workers):
    """`replay --batch 40`: JSON-lines messages of up to 40 events of one partition. The
    group learns exactly what `learn --partitions 2` learns; bad lines inside a batch go
    to the DLQ one by one, with their line number, and the rest of the batch is learned."""
    path, events, _ = stream_data
    cfg = service_config(kafka_broker, tmp_path, partitions=2)
    c = load_config(cfg)
    from dustonline_stream.admin import ensure_topics
    from dustonline_stream.topics import FORMAT_HEADER, JSONL

    ensure_topics(c)
    prod = KafkaProducer(bootstrap_servers=kafka_broker, acks="all")
    bad = [b'{"url": "http://www.x.com/a", "ts": ', b'{"ts": 1700000000}']
    prod.send(c.kafka.pages_topic, key=b"x.com", value=b"\n".join(bad), partition=0, headers=[(FORMAT_HEADER, JSONL)])
    prod.flush()
    r = replay([str(path)], c, producer=prod, batch=40)
    assert r["sent"] == len(events) and r["messages"] < len(events) / 20
    w = workers(cfg)
    wait_until(learned_all([w], 2, len(events)), 180, "the worker to learn the batched stream", [w])
    assert_group_equals_embedded(cfg, events, 2, [w])
    got = dead_letters(kafka_broker, c.kafka.dlq_topic, 2)
    prod.close()
    assert [(r["reason"], r["line"], r["raw"].encode()) for r in got] == [
        ("bad-json", 0, bad[0]),
        ("missing-url", 1, bad[1]),
    ]


def _metric(text: str, name: str) -> float:
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.split(" ")[0].split("{")[0] == name)


def test_pages_read_a_fetch_at_a_time_with_partitions_paused_when_the_learner_is_behind(
    kafka_broker, stream_data, tmp_path, workers
):
    """The worker takes the pages topic a fetch at a time (stream/batches.py), not message
    by message through a Faust agent: with one event per message a batch holds many
    messages. With kafka.max_partition_fetch_bytes at its floor (64 KiB), a partition with
    more than that waiting for the learner is left out of fetches and taken back in over
    and over; the group still learns exactly what `learn --partitions 2` learns."""
    path, events, _ = stream_data
    cfg = service_config(kafka_broker, tmp_path, partitions=2, max_partition_fetch_bytes=1 << 16)
    replay([str(path)], load_config(cfg))
    w = workers(cfg)
    wait_until(learned_all([w], 2, len(events)), 180, "the worker to learn the stream", [w])
    assert_group_equals_embedded(cfg, events, 2, [w])
    text = w.get("/metrics")
    batches, messages = _metric(text, "dustonline_batch_messages_count"), _metric(text, "dustonline_batch_messages_sum")
    assert messages >= len(events) and messages / batches > 10, (batches, messages)
    # whether a partition was paused depends on how far the learner fell behind the fetches,
    # which the machine's load decides: the pausing itself is tested in test_batches.py
    assert w.state()["batched_messages_waiting"] == 0


# These two failed intermittently until the worker re-seeks a partition it restores
# (Faust resumed past the restored checkpoint when a partition came back to a worker
# that had read it before). Since then they have passed every CI run and 6 runs in a
# row on a loaded machine without a rerun, so they run once.
def test_kill9_mid_stream_then_restart_loses_and_recounts_nothing(kafka_broker, stream_data, tmp_path, workers):
    path, events, _ = stream_data
    cfg = replayed(kafka_broker, path, tmp_path, 2)
    w = workers(cfg)
    wait_until(learned_at_least([w], len(events) // 4), 180, "a quarter of the stream learned", [w])
    w.kill9()  # mid-stream: checkpoints written, others not, events taken but not acked
    w.start()
    wait_until(learned_all([w], 2, len(events)), 240, "the restarted worker to finish", [w])
    assert_group_equals_embedded(cfg, events, 2, [w])
    assert "learner restored at offset" in w.tail(10_000)


def test_a_restarted_worker_publishes_what_its_state_holds(kafka_broker, stream_data, tmp_path, workers):
    """The state's changelog, not the rules topic, records what a partition learned: a
    worker restarted onto an empty rules topic (a new one here, as after the topic was
    lost) publishes every rule its partitions hold, with no new event to learn. The same
    re-announcement brings back a partial lost on its way to the rules topic after the
    checkpoint that holds its rule (the kill -9 test's rare failure was one, dropped by
    Faust: the merge now reads such a partial again, test_merge_agent.py)."""
    import yaml

    path, events, _ = stream_data
    cfg = replayed(kafka_broker, path, tmp_path, 2)
    w = workers(cfg)
    wait_until(learned_all([w], 2, len(events)), 180, "the worker to learn the stream", [w])
    w.stop()
    data = yaml.safe_load(cfg.read_text())
    data["kafka"]["rules_topic"] += "-new"
    moved = tmp_path / "moved.yaml"
    moved.write_text(yaml.safe_dump(data))
    w.config = moved  # the same state directory, group and topics but the rules topic
    w.start()
    wait_until(learned_all([w], 2, len(events)), 180, "the restarted worker to restore its partitions", [w])
    assert_group_equals_embedded(moved, events, 2, [w])
    assert "learner restored at offset" in w.tail(10_000)


@pytest.mark.parametrize("partitions", [1, 2])
def test_shards_learn_one_rule_set_on_any_partition_count(kafka_broker, stream_data, tmp_path, workers, partitions):
    """Issue 18: with ``learning.shards`` 4, a topic of 1 or 2 partitions (4 or 2 shard
    learners each, in namespaces of the partition's state) learns the rules `dustonline
    learn` learns, record for record, and so does `learn --partitions 4`. The worker is
    killed -9 mid-stream: the shards come back from the changelog."""
    path, events, held_out = stream_data
    learning = {"min_freq": 3, "min_supp": 3, "shards": 4}
    cfg = service_config(kafka_broker, tmp_path, partitions=partitions, learning=learning)
    replay([str(path)], load_config(cfg))
    w = workers(cfg)
    wait_until(learned_at_least([w], len(events) // 3), 180, "a third of the stream learned", [w])
    w.kill9()
    w.start()
    wait_until(learned_all([w], partitions, len(events)), 240, "the restarted worker to finish", [w])
    ref, got = assert_group_equals_embedded(cfg, events, partitions, [w])
    one, four = embedded(cfg, events, None), embedded(cfg, events, 4)
    assert list(map(encode_rule, one.rules())) == list(map(encode_rule, ref.rules()))
    assert list(map(encode_rule, four.rules())) == list(map(encode_rule, ref.rules()))
    want = RuleSet(one.rules())
    assert [got.canonicalize(u) for u in held_out] == [want.canonicalize(u) for u in held_out]
    assert "learner restored at offset" in w.tail(10_000)


@pytest.fixture(scope="module")
def two_domain_stream(tmp_path_factory):
    """Sites that also answer on another registered domain (and on `www`): what joins
    are for. The fetches of 70% of the pages, and URLs of the other 30%."""
    stream = list(generate(GenConfig(seed=3, sites=8, pages=1500, families=("domain", "www"), dup_rate=0.5)))
    events, rest = split_by_page(stream, 0.7)
    held_out = sorted({ev.url for ev, _ in rest})
    path = tmp_path_factory.mktemp("two-domains") / "train.jsonl.gz"
    with gzip.open(path, "wb") as f:
        for ev in events:
            f.write(msgspec.json.encode(ev.to_json()) + b"\n")
    return path, events, held_out


JOINS = {"min_freq": 3, "min_supp": 3, "shards": 4, "join_after": 3, "pool_every": 300}


def assert_joins_as_learn(cfg, events, held_out, partitions: int, workers) -> None:
    """`learn`'s rules record for record, each partition's learner statistics, URLs
    handed over as `learn` hands them over, and `learn`'s key for every held-out URL."""
    ref, got = assert_group_equals_embedded(cfg, events, partitions, workers)
    one = embedded(cfg, events, None)
    assert list(map(encode_rule, one.rules())) == list(map(encode_rule, ref.rules()))
    assert ref.summary()["joined"] >= 2
    assert sum(s["relearned"] for s in partitions_state(workers).values()) == ref.summary()["relearned"] > 0
    want = RuleSet(ref.rules())
    assert [got.canonicalize(u) for u in held_out] == [want.canonicalize(u) for u in held_out]


def test_one_partition_joins_a_site_on_two_domains_as_learn_does(kafka_broker, two_domain_stream, tmp_path, workers):
    """One partition holds every shard, which pool and join among themselves as `learn`'s
    do, rounds every 500 events: killed -9 mid-stream, the joins and held events come
    back from the changelog, and the rules are `learn`'s record for record."""
    path, events, held_out = two_domain_stream
    cfg = service_config(kafka_broker, tmp_path, partitions=1, learning={**JOINS, "pool_every": 500})
    replay([str(path)], load_config(cfg))
    w = workers(cfg)
    wait_until(learned_at_least([w], len(events) // 2), 180, "half of the stream learned", [w])
    w.kill9()
    w.start()
    wait_until(learned_all([w], 1, len(events)), 240, "the restarted worker to finish", [w])
    ref, got = assert_group_equals_embedded(cfg, events, 1, [w])
    assert partitions_state([w])[0]["joined"] >= 2 and ref.summary()["joined"] >= 2
    four = embedded(cfg, events, 4)
    assert list(map(encode_rule, four.rules())) == list(map(encode_rule, ref.rules()))
    want = RuleSet(ref.rules())
    assert [got.canonicalize(u) for u in held_out] == [want.canonicalize(u) for u in held_out]
    assert "learner restored at offset" in w.tail(10_000)


@pytest.mark.parametrize("partitions", [2, 4])
def test_partitions_join_a_site_on_two_domains_as_learn_does(
    kafka_broker, two_domain_stream, tmp_path, workers, partitions
):
    """Issue 18: shards 4 and `learning.join_after` 3 on 2 and 4 partitions, the replay
    placing a round every 300 events and one at its end. The coordinator decides the
    joins from every partition's report of the round; the partition a domain leaves
    hands its URLs over on the transfer topic; the one it joins reads the domain's later
    events from its home partition at each round. Killed -9 mid-stream, the group ends
    with `learn`'s rules record for record and each partition's learner statistics."""
    path, events, held_out = two_domain_stream
    cfg = service_config(
        kafka_broker, tmp_path, partitions=partitions, learning=JOINS, pool_every_seconds=2.0, idle_flush_seconds=0.2
    )
    w, _ = replayed_through_kill9(cfg, path, len(events), partitions, workers, rate=400, kill_at=len(events) // 2)
    assert_joins_as_learn(cfg, events, held_out, partitions, [w])
    assert "join another's shard" in w.tail(100_000)


def test_joined_domains_through_a_rebalance(kafka_broker, two_domain_stream, tmp_path, workers):
    """Two workers on 4 partitions with joins; one leaves mid-stream and the other takes
    its partitions over from their changelog (handovers waited for, segments read and
    round inputs included): `learn`'s rules and statistics."""
    path, events, held_out = two_domain_stream
    cfg = service_config(kafka_broker, tmp_path, partitions=4, learning=JOINS)
    replay([str(path)], load_config(cfg))
    a, b = workers(cfg, "a"), workers(cfg, "b")

    def both_working():
        sa, sb = a.state(), b.state()
        return bool(
            sa and sb and sa["assigned"] and sb["assigned"] and any(s["events"] for s in sb["partitions"].values())
        )

    wait_until(both_working, 180, "both workers to own partitions and learn", [a, b])
    b.stop()
    wait_until(learned_all([a], 4, len(events)), 240, "the remaining worker to finish", [a, b])
    assert_joins_as_learn(cfg, events, held_out, 4, [a])


def test_joined_domains_through_a_broker_restart(kafka_broker, two_domain_stream, tmp_path, workers):
    path, events, held_out = two_domain_stream
    cfg = service_config(kafka_broker, tmp_path, partitions=2, learning=JOINS)
    replay([str(path)], load_config(cfg))
    w = workers(cfg)
    wait_until(learned_at_least([w], len(events) // 4), 180, "a quarter of the stream learned", [w])
    kafka = ["bash", str(SCRIPTS / "kafka.sh")]
    subprocess.run(kafka + ["stop"], check=True, capture_output=True, timeout=120)
    subprocess.run(kafka + ["start"], check=True, capture_output=True, timeout=300)
    if not w.alive():
        w.start()
    wait_until(learned_all([w], 2, len(events)), 300, "the worker to finish after the broker restart", [w])
    assert_joins_as_learn(cfg, events, held_out, 2, [w])


def test_a_group_fed_by_a_crawler_joins_at_rounds_of_its_own_and_learns_every_event(kafka_broker, tmp_path, workers):
    """No replay places rounds: with `learning.join_after` the coordinator makes its
    periodic pools rounds, so the group still decides joins and reads a joined domain's
    later events from its home partition. Every event is learned once (none skipped
    where it arrives and never read), and URLs are handed over."""
    from dustonline_stream.admin import ensure_topics
    from dustonline_stream.topics import page_key, page_value

    stream = list(generate(GenConfig(seed=3, sites=8, pages=1500, families=("domain", "www"), dup_rate=0.5)))
    learning = {"min_freq": 3, "min_supp": 3, "shards": 4, "join_after": 3, "pool_every": 400}
    cfg = service_config(kafka_broker, tmp_path, partitions=2, learning=learning, pool_every_seconds=1.0)
    c = load_config(cfg)
    ensure_topics(c)
    w = workers(cfg)
    wait_until(lambda: len((w.state() or {}).get("assigned", ())) == 2, 120, "the partitions assigned", [w])
    prod = KafkaProducer(bootstrap_servers=kafka_broker, acks="all")
    for i, (ev, _) in enumerate(stream):
        prod.send(c.kafka.pages_topic, key=page_key(ev.url), value=page_value(ev))
        if i % 200 == 0:
            prod.flush()
            time.sleep(0.1)  # a crawler's pace: the coordinator's rounds fall between fetches
    prod.flush()
    prod.close()
    wait_until(learned_all([w], 2, len(stream)), 240, "every event learned", [w])
    st = partitions_state([w])
    assert sum(s["events"] for s in st.values()) == len(stream)
    assert all(s["joined"] >= 1 for s in st.values()) and sum(s["relearned"] for s in st.values()) > 0
    assert "joins: every pool point is a round" in w.tail(100_000)


def test_a_topic_that_cannot_hold_the_shards_stops_the_worker_saying_why(kafka_broker, stream_data, tmp_path, workers):
    """The config says 2 partitions and 4 shards (the config check lets no count through
    that does not divide the shards); the topic was made with 3. Learning would split
    shards across partitions: the worker exits with the fix instead."""
    import yaml

    path, _, _ = stream_data
    made = replayed(kafka_broker, path, tmp_path, 3, NO_SHARDS)
    data = yaml.safe_load(made.read_text())
    data["learning"]["shards"] = 4
    data["kafka"]["partitions"] = 2
    cfg = tmp_path / "shards.yaml"
    cfg.write_text(yaml.safe_dump(data))
    w = workers(cfg)
    wait_until(lambda: not w.alive(), 120, "the worker to exit", [w])
    assert w.proc.returncode == 2
    assert "kafka.partitions is 2 but topic" in w.tail(500) and "has 3 partitions" in w.tail(500)


def test_a_partition_state_of_one_learner_stops_a_sharded_worker_saying_why(
    kafka_broker, stream_data, tmp_path, workers
):
    """A group that learned with one learner per partition (learning.shards 0, the default
    before shards) restarted with the default config: each of its 2 partitions would hold
    2 shard learners, starting empty beside the learner its state holds. The worker exits
    with the setting that continues that state."""
    import yaml

    path, events, _ = stream_data
    cfg = replayed(kafka_broker, path, tmp_path, 2, NO_SHARDS)
    w = workers(cfg)
    wait_until(learned_all([w], 2, len(events)), 180, "the worker to learn the stream", [w])
    w.stop()
    data = yaml.safe_load(cfg.read_text())
    del data["learning"]["shards"], data["learning"]["join_after"]  # the defaults: 4 shards, joins
    sharded = tmp_path / "sharded.yaml"
    sharded.write_text(yaml.safe_dump(data))
    w.config = sharded
    w.start()
    wait_until(lambda: not w.alive(), 120, "the worker to exit", [w])
    assert w.proc.returncode == 2
    assert "holds one learner's state" in w.tail(10_000) and "set learning.shards: 0" in w.tail(10_000)


def test_two_workers_one_leaves_the_group(kafka_broker, stream_data, tmp_path, workers):
    path, events, _ = stream_data
    cfg = replayed(kafka_broker, path, tmp_path, 4)
    a, b = workers(cfg, "a"), workers(cfg, "b")

    def both_working():
        sa, sb = a.state(), b.state()
        return bool(
            sa and sb and sa["assigned"] and sb["assigned"] and any(s["events"] for s in sb["partitions"].values())
        )

    wait_until(both_working, 180, "both workers to own partitions and learn", [a, b])
    b.stop()  # rebalance: a takes b's partitions over from their changelog
    wait_until(learned_all([a], 4, len(events)), 240, "the remaining worker to finish", [a, b])
    assert_group_equals_embedded(cfg, events, 4, [a])


def test_broker_restart_mid_stream(kafka_broker, stream_data, tmp_path, workers):
    path, events, _ = stream_data
    cfg = replayed(kafka_broker, path, tmp_path, 2)
    w = workers(cfg)
    wait_until(learned_at_least([w], len(events) // 4), 180, "a quarter of the stream learned", [w])
    kafka = ["bash", str(SCRIPTS / "kafka.sh")]
    subprocess.run(kafka + ["stop"], check=True, capture_output=True, timeout=120)
    subprocess.run(kafka + ["start"], check=True, capture_output=True, timeout=300)
    if not w.alive():  # a worker that gave up while the broker was away is restarted, as a supervisor would
        w.start()
    wait_until(learned_all([w], 2, len(events)), 300, "the worker to finish after the broker restart", [w])
    assert_group_equals_embedded(cfg, events, 2, [w])


def test_partitions_pool_their_cross_site_statistics_through_kill9(kafka_broker, tmp_path, workers):
    """A parameter proven by three sites of partition 0 is adopted by a site of partition
    1 on one page of its evidence: the group pools its transfer counts (stream/pool.py)
    as `learn --partitions 2` does. The worker is killed -9 as the pooling round starts;
    restarted, it ends with exactly the embedded rules and statistics."""
    from streams import transfer_across_partitions

    events, provers, newcomer = transfer_across_partitions(2)
    path = tmp_path / "transfer.jsonl"
    path.write_bytes(b"".join(msgspec.json.encode(ev.to_json()) + b"\n" for ev in events))
    cfg = replayed(kafka_broker, path, tmp_path, 2)
    w = workers(cfg)
    wait_until(lambda: "pooled transfer counts" in w.tail(10_000), 180, "a pooling round", [w])
    w.kill9()
    w.start()
    wait_until(learned_all([w], 2, len(events)), 180, "the restarted worker to restore both partitions", [w])
    ref, got = assert_group_equals_embedded(cfg, events, 2, [w])
    dropping = {h for r in got.rules() if r.drop_param == "clkid" for h in r.hosts}
    assert dropping == set(provers) | {newcomer}


@pytest.mark.parametrize(
    "every",
    [
        {"pool_every_seconds": 2.0},  # by time: a slow crawl; with joins (the default) in rounds of its own
        {"learning": {**NO_SHARDS, "pool_every": 20}},  # by records: a replay at full speed
    ],
    ids=["seconds", "records"],
)
def test_a_busy_group_pools_every_pool_every(kafka_broker, tmp_path, workers, every):
    """Partition 0 never goes quiet (a fetch every 0.2 s, idle_flush_seconds 1): no round
    from complete counts can start, yet every kafka.pool_every_seconds, or every
    learning.pool_every records of the pages topic, the newcomer on partition 1 adopts the
    parameter its three sites proved, while the traffic goes on."""
    import threading

    from streams import transfer_across_partitions

    from dustonline import FetchEvent
    from dustonline_stream.admin import ensure_topics
    from dustonline_stream.topics import page_key, page_value

    events, provers, newcomer = transfer_across_partitions(2)
    cfg = service_config(kafka_broker, tmp_path, partitions=2, **every)
    c = load_config(cfg)
    ensure_topics(c)
    prod = KafkaProducer(bootstrap_servers=kafka_broker, acks="all")
    for ev in events:
        prod.send(c.kafka.pages_topic, key=page_key(ev.url), value=page_value(ev))
    prod.flush()
    stop = threading.Event()
    sent = [0]

    def busy():  # new pages of a partition-0 site, one every 0.2 s
        while not stop.is_set():
            sent[0] += 1
            ts = events[-1].ts + sent[0]  # in the window of the others
            ev = FetchEvent(url=f"http://{provers[0]}/more/{sent[0]}", ts=ts, digest=f"sha1:m{sent[0]}")
            prod.send(c.kafka.pages_topic, key=page_key(ev.url), value=page_value(ev))
            prod.flush()
            stop.wait(0.2)

    feeder = threading.Thread(target=busy, daemon=True)
    feeder.start()
    w = workers(cfg)
    try:
        with RuleSubscriber(c) as sub:
            assert sub.wait_until_current(60)

            def adopted():
                return any(r.drop_param == "clkid" and newcomer in r.hosts for r in sub.rules.rules())

            wait_until(adopted, 120, "the newcomer to adopt the pooled parameter", [w])
            assert feeder.is_alive() and sent[0] > 10
    finally:
        stop.set()
        feeder.join()
        prod.close()
    if c.learning.join_after:  # every pool point a round: the coordinator places them (rounds.py)
        assert "pooled replay round coord-" in w.tail(10_000)
    else:
        assert "periodic: some partition is busy" in w.tail(10_000)


BAD = [
    (b'{"url": "http://www.x.com/a", "ts": ', "bad-json"),
    (bytes(range(256)) * 4, "undecodable"),
    (b'{"ts": 1700000000}', "missing-url"),
    (b'{"url": "http://www.x.com/a"}', "bad-timestamp"),
    (b'{"url": "javascript:alert(1)", "ts": 1700000000}', "not-http"),
    (b'{"url": "http://www.x.com/' + b"a" * 5000 + b'", "ts": 1700000000}', "url-too-long"),
    (b"[1, 2, 3]", "bad-json"),
    # poison: a parser that recursed into it raised out of the agent, and the re-delivered
    # message crashed every worker that took the partition over (issue 17)
    (b'{"url": "http://www.x.com/a", "ts": 1700000000, "x": ' + b"[" * 1500 + b"]" * 1500 + b"}", "bad-field"),
]


def test_bad_input_goes_to_the_dead_letter_topic(kafka_broker, stream_data, tmp_path, workers):
    """Malformed JSON, binary garbage, missing fields, absurd URLs: each to the DLQ with
    its reason, counted; the worker goes on and learns the valid events around them."""
    path, events, _ = stream_data
    cfg = service_config(kafka_broker, tmp_path, partitions=1)
    c = load_config(cfg)
    from dustonline_stream.admin import ensure_topics
    from dustonline_stream.topics import page_key, page_value

    ensure_topics(c)
    prod = KafkaProducer(bootstrap_servers=kafka_broker, acks="all")
    step = len(events) // (len(BAD) + 1)
    for i, ev in enumerate(events):
        if i % step == step // 2 and i // step < len(BAD):
            prod.send(c.kafka.pages_topic, key=b"x.com", value=BAD[i // step][0])
        prod.send(c.kafka.pages_topic, key=page_key(ev.url), value=page_value(ev))
    # a flush marker whose value is not the pooled counts the worker writes: dead-lettered,
    # and a plain flush (at the end, where the worker would derive anyway)
    from dustonline_stream.topics import FLUSH_HEADERS

    prod.send(c.kafka.pages_topic, key=b"", value=b'{"others": 3}', partition=0, headers=FLUSH_HEADERS)
    prod.flush()
    w = workers(cfg)
    wait_until(learned_all([w], 1, len(events)), 180, "the worker to learn the valid events", [w])
    assert w.alive()
    got = dead_letters(kafka_broker, c.kafka.dlq_topic, len(BAD) + 1)
    assert [r["reason"] for r in got] == [reason for _, reason in BAD] + ["bad-flush-marker"]
    assert all(r["topic"] == c.kafka.pages_topic and r["offset"] >= 0 and r["raw"] for r in got)
    assert got[1]["encoding"] == "base64"
    metrics = w.get("/metrics")
    assert 'dustonline_rejected_events_total{reason="bad-json"} 2.0' in metrics
    ref = embedded(cfg, events, None)
    rules = subscribed_rules(cfg, ref.rules(), workers=[w])
    assert signature(rules.rules()) == signature(ref.rules())


def _gauge_partitions(text: str, name: str) -> set[str]:
    return {line.split('partition="')[1].split('"')[0] for line in text.splitlines() if line.startswith(name + "{")}


def test_misrouted_events_are_counted_and_a_revoked_partition_leaves_the_gauges(
    kafka_broker, stream_data, tmp_path, workers
):
    """A producer that partitions otherwise than murmur2 of the site key (librdkafka's
    default) splits a site's evidence: the worker counts such events. A worker that
    loses partitions to a new member stops exporting their gauges (sums over the group
    would count them twice)."""
    from dustonline.events.routing import partition_for, site_key
    from dustonline_stream.admin import ensure_topics
    from dustonline_stream.topics import page_key, page_value

    _, events, _ = stream_data
    cfg = service_config(kafka_broker, tmp_path, partitions=4)
    c = load_config(cfg)
    ensure_topics(c)
    prod = KafkaProducer(bootstrap_servers=kafka_broker, acks="all")
    wrong = 0
    sent = events[:4000]
    for i, ev in enumerate(sent):
        p = partition_for(site_key(ev.url), 4)
        if i % 100 == 0:  # as a producer with another partitioner would
            p, wrong = (p + 1) % 4, wrong + 1
        prod.send(c.kafka.pages_topic, key=page_key(ev.url), value=page_value(ev), partition=p)
    prod.flush()
    prod.close()
    a = workers(cfg, "a")
    wait_until(learned_all([a], 4, len(sent)), 180, "the worker to learn the events", [a])
    text = a.get("/metrics")
    got = sum(
        float(line.split()[-1]) for line in text.splitlines() if line.startswith("dustonline_misrouted_events_total{")
    )
    assert got == wrong
    assert 'dustonline_build_info{version="' in text
    assert _gauge_partitions(text, "dustonline_urls") == {"0", "1", "2", "3"}
    b = workers(cfg, "b")

    def split():
        sa, sb = a.state(), b.state()
        return bool(sa and sb and sa["assigned"] and sb["assigned"])

    wait_until(split, 180, "the second worker to take partitions over", [a, b])
    mine = {str(p) for p in a.state()["assigned"]}
    assert len(mine) < 4
    for name in ("dustonline_urls", "dustonline_clusters", "dustonline_lag_events", "dustonline_active_rules"):
        assert _gauge_partitions(a.get("/metrics"), name) <= mine, name


def test_service_with_the_default_config_keys_held_out_urls_as_one_learner(
    kafka_broker, stream_data, tmp_path, workers
):
    """Issue 18: an operator who adds partitions gets the rules one learner gives. Four
    partitions and the default config (4 shards, joins, pooling every 5,000 events and
    every 60 s as well as when quiet): the group learns what `learn --partitions 4`
    learns and what `dustonline learn` learns, record for record, and keys every
    held-out URL as they do."""
    path, events, held_out = stream_data
    cfg = service_config(kafka_broker, tmp_path, partitions=4, learning={"pool_every": 5000}, pool_every_seconds=60.0)
    assert load_config(cfg).learning == Config().learning
    replay([str(path)], load_config(cfg))
    w = workers(cfg)
    wait_until(learned_all([w], 4, len(events)), 180, "the worker to learn the stream", [w])
    ref, got = assert_group_equals_embedded(cfg, events, 4, [w])
    one = embedded(cfg, events, None)
    assert list(map(encode_rule, one.rules())) == list(map(encode_rule, ref.rules()))
    keys = RuleSet(one.rules())
    assert [got.canonicalize(u) for u in held_out] == [keys.canonicalize(u) for u in held_out]
    assert sum(1 for u in held_out if keys.canonicalize(u) != u) > 100


@pytest.mark.parametrize(
    "partitions,shards",
    [(2, 4), (3, 0)],
    ids=["2-partitions-4-shards", "3-partitions-no-shards"],
)
def test_replay_rounds_pool_where_learn_pools(kafka_broker, stream_data, tmp_path, workers, partitions, shards):
    """Issue 18: pooling every `learning.pool_every` events, not only when quiet. The
    replay places a round marker into every partition every 300 events; each partition
    waits there until the round is pooled, so the group pools at the events where
    `dustonline learn` pools, with the same counts. The worker runs while the replay
    writes (its coordinator would place periodic rounds by records and every 2 s, and a
    partition quiet for 0.2 s would derive, were the replay not placing rounds) and is
    killed -9 mid-stream: the rules are those of
    `learn` (with shards) and `learn --partitions N`, record for record."""
    path, events, held_out = stream_data
    learning = {"min_freq": 3, "min_supp": 3, "shards": shards, "pool_every": 300}
    cfg = service_config(
        kafka_broker, tmp_path, partitions=partitions, learning=learning, pool_every_seconds=2.0, idle_flush_seconds=0.2
    )
    w, sent = replayed_through_kill9(cfg, path, len(events), partitions, workers, rate=250, kill_at=len(events) // 3)
    ref, got = assert_group_equals_embedded(cfg, events, partitions, [w])
    if shards:
        one = embedded(cfg, events, None)
        assert list(map(encode_rule, one.rules())) == list(map(encode_rule, ref.rules()))
    assert sent["rounds"] == len(events) // 300 + 1  # with joins (the default), a last one at the end
    text = w.tail(100_000)
    assert "pooled replay round" in text and "periodic: some partition is busy" not in text
    metrics = w.get("/metrics")
    assert _metric(metrics, "dustonline_round_wait_seconds_count") > 0
    assert _metric(metrics, "dustonline_partitions_waiting") == 0
    want = RuleSet(ref.rules())
    assert [got.canonicalize(u) for u in held_out] == [want.canonicalize(u) for u in held_out]


def test_a_round_a_replay_left_unfinished_is_ended_by_the_coordinator(kafka_broker, tmp_path, workers):
    """A replay killed between the markers of a round left one in partition 0 only:
    partition 0 waits at it for partition 1, which will never read one. Once no replay
    holds the placer, the coordinator writes the marker into partition 1 (learned to its
    end), the round is pooled, and partition 0 learns what it held."""
    from dustonline import FetchEvent
    from dustonline_stream.admin import ensure_topics
    from dustonline_stream.topics import ROUND_HEADERS, page_key, page_value

    cfg = service_config(kafka_broker, tmp_path, partitions=2, learning={"min_freq": 3, "min_supp": 3, "pool_every": 5})
    c = load_config(cfg)
    ensure_topics(c)
    prod = KafkaProducer(bootstrap_servers=kafka_broker, acks="all")
    events = [
        FetchEvent(url=f"http://site{i % 6}.example/p/{i}", ts=1_700_000_000 + i, digest=f"d{i}") for i in range(60)
    ]
    for ev in events[:30]:
        prod.send(c.kafka.pages_topic, key=page_key(ev.url), value=page_value(ev))
    prod.send(c.kafka.pages_topic, key=b"", value=b"killed/1", partition=0, headers=ROUND_HEADERS)
    for ev in events[30:]:
        prod.send(c.kafka.pages_topic, key=page_key(ev.url), value=page_value(ev))
    prod.flush()
    prod.close()
    w = workers(cfg)
    wait_until(learned_all([w], 2, len(events)), 120, "both partitions to learn every event", [w])
    assert "replay round killed/1: partition 1 never got its marker; written now" in w.tail(100_000)
    assert "pooled replay round killed/1" in w.tail(100_000)
    assert _metric(w.get("/metrics"), "dustonline_partitions_waiting") == 0
