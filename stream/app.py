"""The worker's Faust app: the settings the learn and merge agents rely on, from the config."""

from __future__ import annotations

import shutil
from pathlib import Path

from dustonline.config import Config

from . import clients


def faust_app(cfg: Config):
    """A Faust app with RocksDB tables, at-least-once processing (exactly-once state
    comes from checkpoint.py) and a local store that starts empty."""
    import faust

    K = cfg.kafka
    app = faust.App(
        K.group_id,
        broker=[f"kafka://{hp.strip()}" for hp in K.bootstrap_servers.split(",")],
        store="rocksdb://",
        datadir=str(Path(K.data_dir)),
        processing_guarantee="at_least_once",
        topic_partitions=K.partitions,
        topic_replication_factor=K.replication_factor,
        broker_credentials=credentials(cfg),
        web_enabled=K.web_port > 0,
        web_port=K.web_port or 6066,
        web_bind="0.0.0.0",
        broker_commit_interval=1.0,
        stream_wait_empty=False,
        consumer_auto_offset_reset="earliest",
        table_standby_replicas=0,
        consumer_max_fetch_size=K.max_partition_fetch_bytes,
    )
    # A crash can leave the local store a checkpoint ahead of the changelog (written
    # here, never sent): the changelog is the truth, so a starting worker restores
    # from it. (Keeping a verified local copy would restore faster: not done yet.)
    shutil.rmtree(app.conf.tabledir, ignore_errors=True)
    return app


def credentials(cfg: Config):
    """SASL/SSL for a real cluster from the config (password also from the environment),
    as Faust takes them; the kafka-python clients get the same from ``clients.security``."""
    K = cfg.kafka
    if K.security_protocol == "PLAINTEXT":
        return None
    import ssl

    import faust

    ctx = None
    if K.security_protocol.endswith("SSL"):
        ctx = ssl.create_default_context(cafile=K.ssl_cafile or None)
        if K.ssl_certfile:
            ctx.load_cert_chain(K.ssl_certfile, K.ssl_keyfile or None)
    if K.security_protocol.startswith("SASL"):
        return faust.SASLCredentials(
            username=K.sasl_username, password=clients.sasl_password(cfg), ssl_context=ctx, mechanism=K.sasl_mechanism
        )
    return faust.SSLCredentials(ctx)
