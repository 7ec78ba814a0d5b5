"""Replay and the crawler-side subscriber against a real local broker (no mocks)."""

import json
import time
import uuid
from importlib import resources

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import KafkaError

from dustonline import OnlineLearner
from dustonline.config import config_from_dict
from dustonline.events.readers import Rejected, read_events
from dustonline.rules.ruleset import ACTIVE, RETIRED, encode_rule
from dustonline_stream.publish import forget_rule, publish_rules
from dustonline_stream.replay import replay
from dustonline_stream.subscriber import RuleSubscriber


def cfg_for(broker, **topics):
    name = uuid.uuid4().hex[:8]
    kafka = {
        "bootstrap_servers": broker,
        "pages_topic": f"t{name}.pages",
        "rules_topic": f"t{name}.rules",
        "dlq_topic": f"t{name}.dlq",
        **topics,
    }
    return config_from_dict({"kafka": kafka})


@pytest.fixture(scope="module")
def learned():
    """The learner's own change stream on the bundled sample: every activation and
    retirement it published, in order, and the rule set it ended with."""
    sample = resources.files("dustonline") / "data" / "sample-stream.jsonl.gz"
    learner = OnlineLearner()
    changes = []
    for ev in read_events([str(sample)]):
        if not isinstance(ev, Rejected):
            changes += learner.learn_one(ev)
    changes += learner.flush()
    urls = [ev.url for ev in read_events([str(sample)]) if not isinstance(ev, Rejected)]
    return changes, learner.ruleset(), urls


def _producer(broker):
    return KafkaProducer(bootstrap_servers=broker, acks="all")


def test_subscriber_follows_the_learners_rule_changes(kafka_broker, learned):
    changes, final, urls = learned
    assert len(changes) > len(final)  # activations and retirements, not just the end state
    cfg = cfg_for(kafka_broker)
    prod = _producer(kafka_broker)
    publish_rules(prod, cfg.kafka.rules_topic, changes)
    prod.flush()
    with RuleSubscriber(cfg) as sub:
        assert sub.wait_until_current(30)
        got = sub.rules
        assert sorted((r.id, r.version, r.context) for r in got.rules()) == sorted(
            (r.id, r.version, r.context) for r in final.rules()
        )
        differ = [u for u in urls if sub.canonicalize(u) != final.canonicalize(u)]
        assert differ == []


def test_versions_retirements_tombstones_and_garbage(kafka_broker, learned):
    changes, final, _ = learned
    rule = final.rules()[0]
    cfg = cfg_for(kafka_broker)
    topic = cfg.kafka.rules_topic
    prod = _producer(kafka_broker)
    publish_rules(prod, topic, [rule])
    prod.send(topic, key=b"r-garbage", value=b"\x00\xffnot json")  # a bad record: counted, skipped
    # records the regex compiler or the key decoder gives up on: counted, skipped, and the
    # thread goes on (they used to end it: RecursionError, OverflowError, UnicodeDecodeError)
    for bad in ("(" * 3000 + "a" + ")" * 3000, r"^x{4294967296}$"):
        bad_rule = rule.__class__(
            **{**{f: getattr(rule, f) for f in rule.__struct_fields__}, "id": "r-bad", "context": bad}
        )
        prod.send(topic, key=b"r-bad", value=encode_rule(bad_rule))
    prod.send(topic, key=b"\xff\xfe", value=None)
    stale = rule.__class__(
        **{**{f: getattr(rule, f) for f in rule.__struct_fields__}, "version": rule.version - 1, "context": "^never$"}
    )
    publish_rules(prod, topic, [stale])  # an older version: ignored
    prod.flush()
    with RuleSubscriber(cfg) as sub:
        assert sub.wait_until_current(30)
        assert rule.id in sub.rules and sub.rejected == 4
        assert sub.rules.rules()[0].context == rule.context
        # retirement with a higher version removes it; the crawler sees it within a poll
        retired = rule.__class__(
            **{**{f: getattr(rule, f) for f in rule.__struct_fields__}, "version": rule.version + 1, "status": RETIRED}
        )
        publish_rules(prod, topic, [retired])
        prod.flush()
        deadline = time.time() + 10
        while rule.id in sub.rules and time.time() < deadline:
            time.sleep(0.05)
        assert rule.id not in sub.rules
        # a tombstone forgets the id: the same rule learned again from version 1 is taken
        forget_rule(prod, topic, rule.id)
        again = rule.__class__(
            **{**{f: getattr(rule, f) for f in rule.__struct_fields__}, "version": 1, "status": ACTIVE}
        )
        publish_rules(prod, topic, [again])
        prod.flush()
        deadline = time.time() + 10
        while rule.id not in sub.rules and time.time() < deadline:
            time.sleep(0.05)
        assert rule.id in sub.rules


def test_snapshot_serves_before_the_topic_and_seen_dedups(kafka_broker, learned, tmp_path):
    _, final, _ = learned
    snap = tmp_path / "rules.jsonl"
    final.save(snap)
    cfg = cfg_for(kafka_broker)  # an empty topic that does not even exist yet
    sub = RuleSubscriber(cfg, snapshot=snap)  # not started: the snapshot alone answers
    r = final.rules()[0]
    url = f"http://{r.hosts[0]}/x"
    assert sub.canonicalize(url) == final.canonicalize(url)
    assert len(sub.rules) == len(final)
    www = "http://www.example.org/a"
    assert sub.seen(www) is False and sub.seen(www) is True


def test_replay_keys_by_site_and_dead_letters_bad_lines(kafka_broker, tmp_path):
    src = tmp_path / "events.jsonl"
    good = [{"url": f"http://www.shop{i % 3}.co.uk/p/{i}", "ts": 1.7e9 + i, "digest": f"sha1:D{i}"} for i in range(50)]
    lines = [json.dumps(e) for e in good]
    lines.insert(10, "{not json")
    lines.insert(20, json.dumps({"url": "ftp://x.org/f", "ts": 1.7e9}))
    src.write_text("\n".join(lines) + "\n")
    cfg = cfg_for(kafka_broker)
    dead = tmp_path / "dead.jsonl"
    r = replay([str(src)], cfg, dead_letter=str(dead))
    assert r["sent"] == 50 and r["rejected"] == 2
    reasons = sorted(json.loads(line)["reason"] for line in dead.read_text().splitlines())
    assert reasons == ["bad-json", "not-http"]
    c = KafkaConsumer(
        cfg.kafka.pages_topic,
        bootstrap_servers=kafka_broker,
        auto_offset_reset="earliest",
        group_id=None,
        consumer_timeout_ms=5000,
    )
    got = [(m.key.decode(), json.loads(m.value)["url"]) for m in c]
    c.close()
    assert len(got) == 50
    assert all(key == url.split("/")[2].removeprefix("www.") for key, url in got)  # registered domain
    assert {json.loads(line)["url"] for line in lines if line.startswith('{"url": "http')} == {u for _, u in got}


def test_cli_subscribe_writes_the_current_rule_set(kafka_broker, learned, tmp_path):
    import subprocess
    import sys

    import yaml

    changes, final, _ = learned
    cfg = cfg_for(kafka_broker)
    prod = _producer(kafka_broker)
    publish_rules(prod, cfg.kafka.rules_topic, changes)
    prod.flush()
    conf = tmp_path / "svc.yaml"
    conf.write_text(
        yaml.safe_dump({"kafka": {"bootstrap_servers": kafka_broker, "rules_topic": cfg.kafka.rules_topic}})
    )
    out = tmp_path / "rules.jsonl"
    r = subprocess.run(
        [sys.executable, "-m", "dustonline", "subscribe", "--config", str(conf), "--rules-out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    from dustonline.rules.ruleset import read_rules

    assert sorted(r.id for r in read_rules(out)) == sorted(r.id for r in final.rules())
    conf.write_text(yaml.safe_dump({"kafka": {"bootstrap_servers": "127.0.0.1:1", "rules_topic": "x"}}))
    down = subprocess.run(
        [sys.executable, "-m", "dustonline", "subscribe", "--config", str(conf), "--timeout", "3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert down.returncode == 1 and "not read within 3 s" in down.stderr  # no broker: a clear error


def test_subscriber_survives_a_broker_restart(kafka_broker, learned):
    """The broker goes away and comes back: the crawler keeps canonicalizing with the rules
    it has meanwhile, and picks up what is published after the restart."""
    import subprocess
    from pathlib import Path

    _, final, _ = learned
    first, later = final.rules()[0], final.rules()[1]
    cfg = cfg_for(kafka_broker)
    prod = _producer(kafka_broker)
    publish_rules(prod, cfg.kafka.rules_topic, [first])
    prod.flush()
    prod.close()
    script = Path(__file__).resolve().parents[1] / "scripts" / "kafka.sh"
    with RuleSubscriber(cfg) as sub:
        assert sub.wait_until_current(30) and first.id in sub.rules
        subprocess.run(["bash", str(script), "stop"], check=True, capture_output=True, timeout=120)
        try:
            time.sleep(3)
            url = f"http://{first.hosts[0]}/x"
            assert sub.canonicalize(url) == final.canonicalize(url)  # still serving, from memory
        finally:
            r = subprocess.run(["bash", str(script), "start"], capture_output=True, text=True, timeout=900)
            assert r.returncode == 0, r.stderr
        prod = _producer(kafka_broker)
        publish_rules(prod, cfg.kafka.rules_topic, [later])
        prod.flush()
        prod.close()
        deadline = time.time() + 60
        while later.id not in sub.rules and time.time() < deadline:
            time.sleep(0.2)
        assert later.id in sub.rules and first.id in sub.rules


def _page_events(cfg, want: int, timeout=30):
    """(partition, packed?, events) of the pages topic's messages, JSON lines unpacked,
    until ``want`` events are read or none came for ``timeout`` seconds."""
    from dustonline.events.readers import parse_message
    from dustonline_stream.topics import is_batch

    c = KafkaConsumer(
        cfg.kafka.pages_topic,
        bootstrap_servers=cfg.kafka.bootstrap_servers,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=timeout * 1000,
    )
    out = []
    for m in c:
        lines = m.value.split(b"\n") if is_batch(m.headers) else [m.value]
        out.append((m.partition, is_batch(m.headers), [parse_message(line) for line in lines]))
        want -= len(lines)
        if want <= 0:
            break
    c.close()
    return out


def test_page_publisher_packs_each_partition_in_order_from_many_threads(kafka_broker):
    """Crawler threads send at once; every event arrives once, in a pack of its own
    partition (where its site's key goes), and each thread's events of a site keep
    their order, which is all the worker group needs to learn what it would learn
    from one event per message."""
    import threading

    from dustonline.events.event import FetchEvent
    from dustonline.events.routing import partition_for
    from dustonline_stream.pages import PagePublisher
    from dustonline_stream.topics import page_key

    cfg = cfg_for(kafka_broker)
    sites = [f"site{i}.example.org" for i in range(12)]
    with PagePublisher(cfg, batch=25, linger_ms=20) as pub:

        def crawl(t: int) -> None:
            for i in range(300):
                pub.send(
                    FetchEvent(url=f"http://www.{sites[i % 12]}/t{t}/p{i}", ts=1.7e9 + i, digest=f"sha1:{t}{i:04d}")
                )

        threads = [threading.Thread(target=crawl, args=(t,)) for t in range(3)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        ev = pub.send_page(
            "http://www.site0.example.org/about",
            b"<html><body>about us and more</body></html>",
            ts=1.8e9,
            content_type="text/html",
        )
        assert ev.digest and ev.digest.startswith("sha1:") and ev.simhash is not None
    assert pub.events == 901 and pub.messages < 901 / 5  # packed, not one per event
    msgs = _page_events(cfg, 901)
    assert all(batch for _p, batch, _e in msgs)
    got = [e for _p, _b, evs in msgs for e in evs]
    assert len(got) == 901 and len({e.url for e in got}) == 901
    n = cfg.kafka.partitions
    assert all(partition_for(page_key(e.url), n) == p for p, _b, evs in msgs for e in evs)
    by_partition: dict = {}
    for p, _b, evs in msgs:
        by_partition.setdefault(p, []).extend(evs)
    for t in range(3):
        for evs in by_partition.values():
            seq = [int(e.url.rsplit("/p", 1)[1]) for e in evs if f"/t{t}/" in e.url]
            assert seq == sorted(seq)


def test_page_publisher_sends_a_partial_pack_after_linger(kafka_broker):
    """A pack far from full still goes out after linger_ms, without a flush call: a
    quiet crawler's events do not wait for the next ones."""
    from dustonline.events.event import FetchEvent
    from dustonline_stream.pages import PagePublisher

    cfg = cfg_for(kafka_broker)
    pub = PagePublisher(cfg, batch=10_000, linger_ms=50)
    try:
        pub.send(FetchEvent(url="http://www.quiet.example.org/a", ts=1.7e9, digest="sha1:AAAA"))
        msgs = _page_events(cfg, 1, timeout=15)  # no flush, no close before it is read
        assert [e.url for _p, _b, evs in msgs for e in evs] == ["http://www.quiet.example.org/a"]
    finally:
        pub.close()
    with pytest.raises(ValueError, match="batch must be >= 1"):
        PagePublisher(cfg, batch=0)


def test_page_publisher_raises_when_the_broker_refuses_the_events(kafka_broker):
    """Events the broker would not take are not lost unseen: here the topic takes no
    message over 256 bytes, so every pack is refused, and flush says so."""
    from kafka.admin import KafkaAdminClient, NewTopic

    from dustonline.events.event import FetchEvent
    from dustonline_stream.pages import PagePublisher

    cfg = cfg_for(kafka_broker)
    admin = KafkaAdminClient(bootstrap_servers=kafka_broker)
    admin.create_topics([NewTopic(cfg.kafka.pages_topic, 2, 1, topic_configs={"max.message.bytes": "256"})])
    admin.close()
    prod = KafkaProducer(bootstrap_servers=kafka_broker, acks="all", retries=0)
    pub = PagePublisher(cfg, batch=10, linger_ms=20, producer=prod)
    for i in range(25):
        pub.send(FetchEvent(url=f"http://www.refused.example.org/{i}", ts=1.7e9, digest="sha1:AAAA"))
    with pytest.raises(RuntimeError, match="page messages were not delivered"):
        pub.close()
    try:
        prod.close(timeout=5)
    except KafkaError:  # kafka-python may still hold a refused batch it split to retry
        pass
