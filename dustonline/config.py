"""The one configuration object, loaded from ``configs/*.yaml``.

Types and unknown keys are checked by msgspec, ranges by ``Config.check``; either way a
bad file fails at start-up with the key path and what to write instead.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec
import yaml


class ConfigError(ValueError):
    pass


class _Section(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


def evidence_for(confidence: float) -> int:
    """Agreeing observations, none against, that a decision needs at ``confidence``: the
    least n with 2**-n <= 1 - confidence, i.e. a hypothesis wrong on half the URLs it
    applies to (a coin flip) would have shown a counter-example with that probability."""
    return max(1, math.ceil(math.log(1.0 - confidence) / math.log(0.5) - 1e-9))


class Learning(_Section):
    k: int = 10  # URLs aligned per cluster (DustLin's K)
    card_set: int = 5  # token sets larger than this become a type class
    # the one knob that trades coverage for safety: every decision (a rule proposed, a rule
    # valid, a name dropped on a site, a shape proven across sites) needs evidence_for(it)
    # agreeing observations and none against; 0.875 -> 3, 0.97 -> 6, 0.999 -> 10
    confidence: float = 0.875
    min_freq: int = 0  # clusters that must yield a rule before it is a candidate (0: from confidence)
    min_supp: int = 0  # URL pairs a rule must merge on validation clusters (0: from confidence)
    fpr_max: float = 0.0  # tolerated share of those pairs that are not duplicates
    holdout: float = 0.0  # share of clusters (by hash) kept for validation only; 0 = validate on all
    max_cluster_urls: int = 1000  # a cluster with more distinct URLs is noise (soft 404, shared image)
    max_noise: float = 0.5  # a consensus with more non-invariant token sets than this share is noise
    generalize: bool = True  # merge same-shape rules across clusters (docs/DESIGN.md §6)
    # learn and validate rewrite rules on URLs as RuleSet hands them over, after the
    # site's host, scheme, parameter and path-edit rules (evidence per alias, and every
    # pair a rule would merge counted); false = raw URLs, as the thesis
    prepared: bool = True
    aligner: str = "dustlin"  # batch learn(): "dustlin" (linear) or "duster" (progressive)
    refresh_every: int = 1000  # events between rule derivations (1 = after every event)
    # events of a worker group's input between poolings of its partitions' cross-site
    # counts (``learn --partitions N``; the worker's coordinator counts pages records);
    # 0 = only when the input ends or the group is quiet
    pool_every: int = 5_000
    # sites are learned in this many shards (learner/shards.py), whatever the partitions:
    # `learn`, `learn --partitions N` and a worker group on N partitions learn the same
    # rules for any N dividing it; 0 = one per partition (N partitions learn almost what one does)
    shards: int = 4
    # a registered domain whose URLs shared this many content digests with a domain on
    # another shard joins that shard at the next round (learner/joins.py: a site on two
    # domains is then learned in one place, in every layout); 0 = never
    join_after: int = 3

    def __post_init__(self) -> None:
        if 0.5 <= self.confidence < 1.0:  # out of range: check() says so
            n = evidence_for(self.confidence)
            self.min_freq = self.min_freq or n
            self.min_supp = self.min_supp or n


class Clustering(_Section):
    simhash_distance: int = 3  # Hamming distance for near-duplicates (0 disables)
    canonical_hints: bool = True  # rel=canonical joins a page to its target's cluster


class Window(_Section):
    seconds: float = 30 * 86400.0  # event-time window; older URLs and clusters are evicted
    max_urls_per_site: int = 200_000
    sweep_every: float = 86400.0  # event-time seconds between eviction sweeps


class Input(_Section):
    max_url_length: int = 2048
    format: str = "auto"


class Storage(_Section):
    cache_entries: int = 200_000  # read cache in front of RocksDB, per table (writes are buffered apart)
    # and no more than this many MiB of entries as stored, per table: entries range from
    # 30 bytes to several KiB, and Python objects take 2-10 times their stored size
    cache_mib: float = 8.0
    # records between durable checkpoints of ``learn --state`` (state/durable.py): a killed
    # run resumes from the last one; each costs a memtable flush and a few hard links
    checkpoint_every: int = 100_000


class Kafka(_Section):
    """Where the service (stream/) and the crawler-side client meet; the core ignores it."""

    bootstrap_servers: str = "127.0.0.1:9092"
    pages_topic: str = "dust.pages"  # input events, keyed by registered domain
    rules_topic: str = "dust.rules"  # compacted: key = rule id, value = rule JSON, null = forget
    dlq_topic: str = "dust.pages.dlq"  # rejected events with the reason
    client_id: str = "dustonline"
    # the worker (dustonline worker, stream/worker.py; checkpoints in stream/checkpoint.py)
    group_id: str = "dustonline"  # consumer group = Faust app id: workers sharing it split the partitions
    partitions: int = 4  # pages topic (and state changelog) partitions when the worker creates them
    replication_factor: int = 1  # for the topics the worker creates (3 on a real cluster)
    processing_guarantee: str = (
        "at_least_once"  # delivery; learner state is exactly-once by atomic checkpoints (stream/checkpoint.py)
    )
    checkpoint_every: int = 5000  # events of a partition between state checkpoints (state + offsets, atomically)
    # bytes a fetch may bring per partition (Kafka's max.partition.fetch.bytes). The
    # consumer fetches again only once a fetch is used up: at Faust's 1 MiB, a worker
    # learning 100-event messages waited for input half the time (bench_stream.py)
    max_partition_fetch_bytes: int = 8 << 20
    # how long the broker may hold a fetch that finds no new records (fetch.max.wait.ms).
    # A partition with records still buffered is left out of the next fetch, so new
    # events on it wait for that fetch to return: at Faust's fixed 1500 ms, events sent
    # one per message waited ~1 s before learning (bench_stream.py)
    fetch_max_wait_ms: int = 50
    idle_flush_seconds: float = 1.0  # a partition idle this long derives its pending rules and checkpoints
    # while some partition never goes quiet, the partitions pool their cross-site
    # statistics this often anyway (stream/pool.py), besides every learning.pool_every
    # records; 0 = not by time
    pool_every_seconds: float = 60.0
    data_dir: str = "dustonline-worker-data"  # local RocksDB of the worker's Faust tables
    web_port: int = 6066  # Prometheus metrics at http://HOST:PORT/metrics (0 = off)
    faust_metrics: bool = False  # also Faust's per-message sensor (measured: 12% of a worker's time)
    # a real cluster: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; SASL mechanism PLAIN or SCRAM-SHA-256/512
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = ""
    sasl_username: str = ""
    sasl_password: str = ""  # or the environment variable DUSTONLINE_SASL_PASSWORD
    ssl_cafile: str = ""
    ssl_certfile: str = ""
    ssl_keyfile: str = ""


class Config(_Section):
    learning: Learning = msgspec.field(default_factory=Learning)
    clustering: Clustering = msgspec.field(default_factory=Clustering)
    window: Window = msgspec.field(default_factory=Window)
    input: Input = msgspec.field(default_factory=Input)
    storage: Storage = msgspec.field(default_factory=Storage)
    kafka: Kafka = msgspec.field(default_factory=Kafka)

    def check(self) -> Config:
        L, C, W, In = self.learning, self.clustering, self.window, self.input
        problems: list[str] = []
        _positive(problems, "learning.k", L.k, low=2)
        _positive(problems, "learning.card_set", L.card_set, low=1)
        if not 0.5 <= L.confidence < 1.0:
            problems.append(f"learning.confidence must be in [0.5, 1) (0.875 = 3 observations), got {L.confidence}")
        else:  # derived from it unless set
            _positive(problems, "learning.min_freq", L.min_freq, low=1)
            _positive(problems, "learning.min_supp", L.min_supp, low=1)
        _positive(problems, "learning.max_cluster_urls", L.max_cluster_urls, low=2)
        _positive(problems, "learning.refresh_every", L.refresh_every, low=1)
        _positive(problems, "learning.pool_every", L.pool_every, low=0)
        if not 0.0 <= L.fpr_max <= 1.0:
            problems.append(f"learning.fpr_max must be in [0, 1], got {L.fpr_max}")
        if not 0.0 <= L.holdout < 1.0:
            problems.append(f"learning.holdout must be in [0, 1) (0 = validate on every cluster), got {L.holdout}")
        if not 0.0 < L.max_noise <= 1.0:
            problems.append(f"learning.max_noise must be in (0, 1], got {L.max_noise}")
        if L.aligner not in ("dustlin", "duster"):
            problems.append(f"learning.aligner must be 'dustlin' or 'duster', got {L.aligner!r}")
        if not 0 <= C.simhash_distance <= 16:
            problems.append(f"clustering.simhash_distance must be in [0, 16], got {C.simhash_distance}")
        if W.seconds <= 0:
            problems.append(f"window.seconds must be > 0, got {W.seconds}")
        if W.sweep_every <= 0:
            problems.append(f"window.sweep_every must be > 0, got {W.sweep_every}")
        _positive(problems, "window.max_urls_per_site", W.max_urls_per_site, low=10)
        _positive(problems, "input.max_url_length", In.max_url_length, low=16)
        _positive(problems, "storage.cache_entries", self.storage.cache_entries, low=1)
        if not self.storage.cache_mib > 0:
            problems.append(f"storage.cache_mib must be > 0, got {self.storage.cache_mib}")
        _positive(problems, "storage.checkpoint_every", self.storage.checkpoint_every, low=1)
        K = self.kafka
        for name in ("pages_topic", "rules_topic", "dlq_topic"):
            topic = getattr(K, name)
            if not topic or len(topic) > 249 or any(not (c.isalnum() or c in "._-") for c in topic):
                problems.append(f"kafka.{name} must be 1-249 characters of [a-zA-Z0-9._-], got {topic!r}")
        if not K.bootstrap_servers.strip():
            problems.append("kafka.bootstrap_servers must name at least one host:port")
        _positive(problems, "kafka.partitions", K.partitions, low=1)
        _positive(problems, "learning.shards", L.shards, low=0)
        _positive(problems, "learning.join_after", L.join_after, low=0)
        if L.shards > 0 and K.partitions > 0 and L.shards % K.partitions:
            problems.append(
                f"kafka.partitions ({K.partitions}) must divide learning.shards ({L.shards}): a partition holds "
                "whole shards (docs/service.md)"
            )
        _positive(problems, "kafka.replication_factor", K.replication_factor, low=1)
        _positive(problems, "kafka.checkpoint_every", K.checkpoint_every, low=1)
        _positive(problems, "kafka.max_partition_fetch_bytes", K.max_partition_fetch_bytes, low=1 << 16)
        if not 1 <= K.fetch_max_wait_ms <= 10_000:
            problems.append(f"kafka.fetch_max_wait_ms must be 1-10000 (milliseconds), got {K.fetch_max_wait_ms}")
        if K.idle_flush_seconds <= 0:
            problems.append(f"kafka.idle_flush_seconds must be > 0, got {K.idle_flush_seconds}")
        if K.pool_every_seconds < 0:
            problems.append(f"kafka.pool_every_seconds must be >= 0 (0 = only when quiet), got {K.pool_every_seconds}")
        if K.processing_guarantee != "at_least_once":
            problems.append(
                f"kafka.processing_guarantee must be 'at_least_once' (learner state is exactly-once through "
                f"atomic checkpoints; Faust's transactions are not used), got {K.processing_guarantee!r}"
            )
        if K.security_protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
            problems.append(
                "kafka.security_protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, "
                f"got {K.security_protocol!r}"
            )
        if K.security_protocol.startswith("SASL") and K.sasl_mechanism not in (
            "PLAIN",
            "SCRAM-SHA-256",
            "SCRAM-SHA-512",
        ):
            problems.append(
                f"kafka.sasl_mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 with {K.security_protocol}, "
                f"got {K.sasl_mechanism!r}"
            )
        if not 0 <= K.web_port <= 65535:
            problems.append(f"kafka.web_port must be in [0, 65535], got {K.web_port}")
        if not K.group_id or any(not (c.isalnum() or c in "._-") for c in K.group_id):
            problems.append(f"kafka.group_id must be characters of [a-zA-Z0-9._-], got {K.group_id!r}")
        from .events.readers import FORMATS

        if In.format not in FORMATS:
            problems.append(f"input.format must be one of {', '.join(FORMATS)}, got {In.format!r}")
        if problems:
            raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
        return self

    def to_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)


def _positive(problems: list[str], key: str, value: int, low: int) -> None:
    if value < low:
        problems.append(f"{key} must be >= {low}, got {value}")


def config_from_dict(data: Any, source: str = "<dict>") -> Config:
    if data is None:
        data = {}
    try:
        cfg = msgspec.convert(data, Config)
    except msgspec.ValidationError as e:
        raise ConfigError(f"{source}: {e} (see configs/default.yaml for every key and its type)") from None
    return cfg.check()


def load_config(path: str | Path | None = None) -> Config:
    """Defaults when ``path`` is None; otherwise the file, every key optional."""
    if path is None:
        return Config().check()
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ConfigError(f"cannot read config {p}: {e.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML: {e}") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping of sections (learning:, clustering:, ...)")
    return config_from_dict(data, str(p))
