"""kafka-python producers from the one config (``configs/*.yaml``); the subscriber builds its own consumer."""

from __future__ import annotations

from dustonline.config import Config


def producer(cfg: Config, **extra):
    from kafka import KafkaProducer

    K = cfg.kafka
    opts = dict(bootstrap_servers=K.bootstrap_servers.split(","), client_id=K.client_id,
                acks="all", linger_ms=20, batch_size=256 * 1024, retries=10)
    opts.update(extra)
    return KafkaProducer(**opts)

