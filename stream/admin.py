"""Topics with the settings the service relies on, created before anything writes to them.

A broker that auto-creates topics would make the rules topic uncompacted and the pages
topic as wide as its default; both are decided here from the config instead. An
existing pages topic whose partition count differs from ``kafka.partitions`` fails fast:
the state changelog must have as many partitions as the topic it follows.
"""

from __future__ import annotations

import time

from dustonline.config import Config, ConfigError

from . import clients


def ensure_topics(
    cfg: Config, timeout_s: float = 30.0, internal: list[str] = (), compacted: list[str] = ()
) -> dict[str, int]:
    """Create the pages, rules (compacted) and dead-letter topics if missing, ``internal``
    ones as wide as the pages topic, and ``compacted`` ones of one partition; returns
    partitions per topic."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError

    K = cfg.kafka
    admin = KafkaAdminClient(
        bootstrap_servers=K.bootstrap_servers.split(","),
        client_id=K.client_id + "-admin",
        request_timeout_ms=int(timeout_s * 1000),
        **clients.security(cfg),
    )
    try:
        compact = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.1", "segment.ms": "3600000"}
        want = {
            K.pages_topic: NewTopic(K.pages_topic, K.partitions, K.replication_factor),
            K.rules_topic: NewTopic(K.rules_topic, 1, K.replication_factor, topic_configs=compact),
            K.dlq_topic: NewTopic(K.dlq_topic, 1, K.replication_factor),
            **{name: NewTopic(name, K.partitions, K.replication_factor) for name in internal},
            **{name: NewTopic(name, 1, K.replication_factor, topic_configs=compact) for name in compacted},
        }
        have = set(admin.list_topics())
        missing = [t for name, t in want.items() if name not in have]
        for t in missing:
            try:
                admin.create_topics([t])
            except TopicAlreadyExistsError:  # another worker or replay got there first
                pass
        # a topic just created can describe with no partitions until its metadata spreads
        deadline = time.monotonic() + timeout_s
        while True:
            meta = {d.get("name", d.get("topic")): len(d["partitions"]) for d in admin.describe_topics(list(want))}
            if all(meta.get(name) for name in want) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    finally:
        admin.close()
    n = meta.get(K.pages_topic)
    if n is not None and n != K.partitions:
        raise ConfigError(
            f"kafka.partitions is {K.partitions} but topic {K.pages_topic} has {n} partitions: "
            f"set kafka.partitions: {n} (the state changelog follows the topic)"
        )
    return meta
