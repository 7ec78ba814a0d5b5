"""kafka-python producers and consumers from the one config (``configs/*.yaml``)."""

from __future__ import annotations

from dustonline.config import Config


def producer(cfg: Config, **extra):
    from kafka import KafkaProducer

    K = cfg.kafka
    opts = dict(bootstrap_servers=K.bootstrap_servers.split(","), client_id=K.client_id,
                acks="all", linger_ms=20, batch_size=256 * 1024, compression_type=None, retries=10)
    opts.update(extra)
    return KafkaProducer(**opts)


def ensure_topics(cfg: Config, partitions: int = 4) -> None:
    """Create the service's topics if missing (the rules topic compacted)."""
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError

    K = cfg.kafka
    admin = KafkaAdminClient(bootstrap_servers=K.bootstrap_servers.split(","), client_id=K.client_id)
    try:
        have = set(admin.list_topics())
        new = [NewTopic(t, partitions, 1) for t in (K.pages_topic, K.dlq_topic) if t not in have]
        if K.rules_topic not in have:
            new.append(NewTopic(K.rules_topic, 1, 1, topic_configs={"cleanup.policy": "compact"}))
        if new:
            try:
                admin.create_topics(new)
            except TopicAlreadyExistsError:
                pass
    finally:
        admin.close()
