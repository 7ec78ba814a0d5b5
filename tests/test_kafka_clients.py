"""Replay and the crawler-side subscriber against a real local broker (no mocks)."""

import json
import time
import uuid
from importlib import resources

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import KafkaError
from timing import within

from dustonline import OnlineLearner
from dustonline.config import config_from_dict
from dustonline.events.readers import Rejected, read_events
from dustonline.rules.ruleset import ACTIVE, RETIRED, encode_rule
from dustonline_stream.publish import forget_rule, publish_rules
from dustonline_stream.replay import replay
from dustonline_stream.subscriber import RuleSubscriber
from dustonline_stream.topics import is_round


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
    lines.insert(30, "")  # a blank line: read, and skipped as no fetch
    src.write_text("\n".join(lines) + "\n")
    cfg = cfg_for(kafka_broker)
    dead = tmp_path / "dead.jsonl"
    r = replay([str(src)], cfg, dead_letter=str(dead))
    assert r["sent"] == 50 and r["rejected"] == 2 and r["skipped"] == 1
    assert r["read"] == len(lines) == r["sent"] + r["rejected"] + r["skipped"]  # every record accounted for
    reasons = sorted(json.loads(line)["reason"] for line in dead.read_text().splitlines())
    assert reasons == ["bad-json", "not-http"]
    c = KafkaConsumer(
        cfg.kafka.pages_topic,
        bootstrap_servers=kafka_broker,
        auto_offset_reset="earliest",
        group_id=None,
        consumer_timeout_ms=5000,
    )
    msgs = list(c)
    c.close()
    # with the default shards and joins, a last round marker in each partition (rounds.py)
    rounds = [m for m in msgs if is_round(m.headers)]
    assert sorted(m.partition for m in rounds) == list(range(cfg.kafka.partitions))
    got = [(m.key.decode(), json.loads(m.value)["url"]) for m in msgs if not is_round(m.headers)]
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


def _with(rule, **changes):
    return rule.__class__(**{**{f: getattr(rule, f) for f in rule.__struct_fields__}, **changes})


HANGS = "http://a.com/" + "a" * 40 + "!"  # (a+)+ on this: about 5.4 s at 26 a's, x4.5 per two more


def _publish_good_and_bad(prod, cfg, good):
    """``good`` published in order with the issue's bad records between them (the
    catastrophic, unportable and foreign-host rules, records the regex compiler or the key
    decoder gave up on, garbage) on a rules topic made as the worker makes it (compacted,
    one partition): the refusals expected by reason, and the last offset."""
    from dustonline_stream.admin import ensure_topics

    assert ensure_topics(cfg)[cfg.kafka.rules_topic] == 1
    topic = cfg.kafka.rules_topic
    host = good[0].hosts[0]
    bad = [
        _with(good[0], id="r-hang", hosts=["a.com"], context=r"^http://a\.com/(a+)+$", transformation="http://a.com/"),
        _with(
            good[0], id="r-backref", hosts=["a.com"], context=r"^http://a\.com/(a)\1$", transformation="http://a.com/"
        ),
        _with(
            good[0], id="r-ahead", hosts=["a.com"], context=r"^http://a\.com/(?=a)(a+)$", transformation="http://a.com/"
        ),
        _with(good[0], id="r-evil", hosts=[host], context=r"^(.*)$", transformation="http://evil.example/x"),
        _with(good[0], id="r-deep", context="(" * 3000 + "a" + ")" * 3000),
        _with(good[0], id="r-count", context=r"^x{4294967296}$"),
        _with(good[0], version=good[0].version + 1, context=r"^(.*a){20}$"),  # a good id's next version
    ]
    expected = {"unsafe-context": 6, "foreign-host": 1, "bad-key": 1, "not-a-rule": 1}
    records = [(b.id.encode(), encode_rule(b)) for b in bad] + [(b"\xff\xfe", None), (b"r-junk", b"\x00\xffnot json")]
    last = None
    for i, r in enumerate(good):
        last = prod.send(topic, key=r.id.encode(), value=encode_rule(r))
        if i < len(records):
            key, value = records[i]
            last = prod.send(topic, key=key, value=value)
    assert len(good) > len(records)  # good rules after the last bad one too
    prod.flush()
    return expected, last.get(timeout=30).offset


def test_subscriber_refuses_bad_rules_through_the_broker_and_applies_the_later_good_ones(kafka_broker, learned):
    """Issue 17: each bad record is skipped and counted by reason, the thread goes on,
    the rules published after them apply, the topic is read to its end in seconds, and
    health and the Prometheus collector say so."""
    from prometheus_client import CollectorRegistry, generate_latest

    from dustonline_stream.metrics import SubscriberCollector

    _, final, urls = learned
    good = final.rules()
    cfg = cfg_for(kafka_broker)
    prod = _producer(kafka_broker)
    t0 = time.monotonic()
    expected, last = _publish_good_and_bad(prod, cfg, good)
    with RuleSubscriber(cfg) as sub:
        assert sub.wait_until_current(30)
        took = time.monotonic() - t0
        assert sub.refused == expected
        assert sorted((r.id, r.version) for r in sub.rules.rules()) == sorted((r.id, r.version) for r in good)
        assert [u for u in urls[:3000] if sub.canonicalize(u) != final.canonicalize(u)] == []
        with within(0.05):
            assert sub.canonicalize(HANGS) == HANGS
        h = sub.health()
        assert h["alive"] and h["current"] and h["last_offsets"] == {0: last}
        assert h["refused_total"] == sum(expected.values()) and h["active_rules"] == len(good)
        registry = CollectorRegistry()
        SubscriberCollector(sub, registry)
        text = generate_latest(registry).decode()
        for reason, n in expected.items():
            assert f'dustonline_rules_refused_total{{reason="{reason}"}} {float(n)}' in text
        assert f'dustonline_rules_last_offset{{partition="0"}} {float(last)}' in text
        assert "dustonline_rules_subscriber_up 1.0" in text and f"dustonline_rules_active {float(len(good))}" in text
        # and live, after it is current: a bad record, then a good one, within a poll or two
        prod.send(
            cfg.kafka.rules_topic, key=b"r-hang2", value=encode_rule(_with(good[0], id="r-hang2", context=r"^(a|a)*b$"))
        )
        later = _with(good[0], id="r-later", version=1)
        publish_rules(prod, cfg.kafka.rules_topic, [later])
        prod.flush()
        deadline = time.time() + 10
        while "r-later" not in sub.rules and time.time() < deadline:
            time.sleep(0.05)
        assert "r-later" in sub.rules and sub.refused["unsafe-context"] == expected["unsafe-context"] + 1
        assert sub.health()["last_offsets"] == {0: last + 2}
    assert took < 20, f"{took:.1f} s to read {len(good)} rules and {sum(expected.values())} bad records"


@pytest.mark.parametrize("engine", ["python", "re2"])
def test_cli_canonicalize_from_topic_skips_bad_rules_and_does_not_hang(kafka_broker, learned, tmp_path, engine):
    import subprocess
    import sys

    import yaml

    _, final, urls = learned
    cfg = cfg_for(kafka_broker)
    prod = _producer(kafka_broker)
    expected, _ = _publish_good_and_bad(prod, cfg, final.rules())
    conf = tmp_path / "svc.yaml"
    conf.write_text(
        yaml.safe_dump({"kafka": {"bootstrap_servers": kafka_broker, "rules_topic": cfg.kafka.rules_topic}})
    )
    some = list(dict.fromkeys(urls))[:2000] + [HANGS]
    src = tmp_path / "urls.txt"
    src.write_text("\n".join(some) + "\n")
    t = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "dustonline", "canonicalize", "--from-topic", "--config", str(conf)]
        + ["--engine", engine, str(src)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - t
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [final.canonicalize(u) for u in some]
    assert f"{sum(expected.values())} records refused" in r.stderr
    assert took < 30, f"{took:.1f} s"


def test_outputs_deliver_and_a_record_the_broker_refuses_is_fatal(kafka_broker, monkeypatch):
    """The merge's records are acked after ``Outputs.deliver`` (blocking: the changelog
    of its table must not get ahead of the rules). A record the broker refuses is fatal."""
    from dustonline_stream import outputs as outputs_mod
    from dustonline_stream.metrics import WorkerMetrics
    from dustonline_stream.outputs import Outputs

    cfg = cfg_for(kafka_broker)
    out = Outputs(cfg, WorkerMetrics())
    exits = []
    monkeypatch.setattr(outputs_mod.os, "_exit", exits.append)
    monkeypatch.setattr(outputs_mod.logging, "shutdown", lambda: None)
    for i in range(50):
        out.send(cfg.kafka.rules_topic, b"k%d" % i, b"v%d" % i)
    out.deliver()
    assert exits == []
    from kafka.admin import KafkaAdminClient, NewTopic

    small = cfg.kafka.rules_topic + ".small"  # the broker refuses records over 1 KB there
    admin = KafkaAdminClient(bootstrap_servers=kafka_broker)
    admin.create_topics([NewTopic(small, 1, 1, topic_configs={"max.message.bytes": "1024"})])
    admin.close()
    out.send(small, b"big", b"x" * 4096)
    out.deliver()
    assert exits == [75]
    out.producer.close()
