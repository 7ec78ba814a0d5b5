"""kafka-python clients from the one config (``configs/*.yaml``): the broker, and SASL/SSL
settings for a real cluster, in one place for producers and consumers."""

from __future__ import annotations

import os

from dustonline.config import Config


def sasl_password(cfg: Config) -> str:
    """From the config, else the environment (keeps it out of config files)."""
    return cfg.kafka.sasl_password or os.environ.get("DUSTONLINE_SASL_PASSWORD", "")


def security(cfg: Config) -> dict:
    K = cfg.kafka
    opts: dict = {"security_protocol": K.security_protocol}
    if K.security_protocol.endswith("SSL"):
        opts.update(
            {
                k: v
                for k, v in (
                    ("ssl_cafile", K.ssl_cafile),
                    ("ssl_certfile", K.ssl_certfile),
                    ("ssl_keyfile", K.ssl_keyfile),
                )
                if v
            }
        )
    if K.security_protocol.startswith("SASL"):
        opts.update(
            sasl_mechanism=K.sasl_mechanism, sasl_plain_username=K.sasl_username, sasl_plain_password=sasl_password(cfg)
        )
    return opts


def producer(cfg: Config, **extra):
    from kafka import KafkaProducer

    K = cfg.kafka
    opts = dict(
        bootstrap_servers=K.bootstrap_servers.split(","),
        client_id=K.client_id,
        acks="all",
        linger_ms=20,
        batch_size=256 * 1024,
        retries=10,
        **security(cfg),
    )
    opts.update(extra)
    return KafkaProducer(**opts)


def consumer(cfg: Config, **extra):
    from kafka import KafkaConsumer

    K = cfg.kafka
    opts = dict(bootstrap_servers=K.bootstrap_servers.split(","), client_id=K.client_id, **security(cfg))
    opts.update(extra)
    return KafkaConsumer(**opts)


def reader_from_start(cfg: Config, topic: str):
    """A consumer of partition 0 of a one-partition topic, from its first record: the
    transfer topic's readers (pool.py, rounds.py) rebuild their view from all of it."""
    from kafka import TopicPartition

    c = consumer(cfg, enable_auto_commit=False, auto_offset_reset="earliest")
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    return c
