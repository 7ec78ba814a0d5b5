"""What a service owner watches, on the worker's Prometheus endpoint (``/metrics``).

These are the learner's (Faust's own sensor, with its message, commit and send
figures, is optional: ``kafka.faust_metrics``):
events and rejected events by reason (rates in PromQL), lag per partition, clusters,
URLs and active rules per partition, rule changes by status, checkpoint time, and the
time spent learning: its rate is the worker's utilization (near 1: it is the
bottleneck, add partitions and workers; well below 1 with lag growing: it waits for
input, look at fetching). The worker reads no rules (its learner publishes only
contexts that rules/pattern.py admits), so rules refused are counted where rules are
read: a crawler's ``RuleSubscriber``, exported by ``SubscriberCollector``.
"""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, Info
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector


class WorkerMetrics:
    def __init__(self, registry: CollectorRegistry = REGISTRY):
        r = registry
        self.events = Counter("dustonline_events", "events read from the pages topic", registry=r)
        self.rejected = Counter(
            "dustonline_rejected_events", "events sent to the dead-letter topic", ["reason"], registry=r
        )
        self.rule_changes = Counter("dustonline_rule_changes", "rule records published", ["status"], registry=r)
        self.checkpoints = Counter("dustonline_checkpoints", "state checkpoints written", registry=r)
        self.checkpoint_records = Counter(
            "dustonline_checkpoint_records", "state records written to the changelog", registry=r
        )
        self.checkpoint_bytes = Histogram(
            "dustonline_checkpoint_bytes",
            "size of a checkpoint's changelog batch",
            buckets=(1e4, 1e5, 1e6, 4e6, 16e6, 64e6),
            registry=r,
        )
        self.busy = Counter(
            "dustonline_learn_busy_seconds",
            "time the learn agent spent learning and checkpointing (not waiting for input)",
            registry=r,
        )
        self.checkpoint_seconds = Histogram("dustonline_checkpoint_seconds", "time to write a checkpoint", registry=r)
        self.delay = Histogram(
            "dustonline_event_delay_seconds",
            "from an event's record timestamp to its learning",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
            registry=r,
        )
        self.batch_messages = Histogram(
            "dustonline_batch_messages",
            "pages messages per fetched batch the learner takes (stream/batches.py)",
            buckets=(1, 10, 100, 1000, 10000),
            registry=r,
        )
        self.fetch_paused = Counter(
            "dustonline_fetch_paused",
            "times a partition was left out of fetches, twice kafka.max_partition_fetch_bytes waiting for the learner",
            registry=r,
        )
        self.lag = Gauge("dustonline_lag_events", "pages events not yet learned", ["partition"], registry=r)
        self.partitions = Gauge("dustonline_partitions", "pages partitions assigned to this worker", registry=r)
        self.clusters = Gauge("dustonline_clusters", "dup-clusters in the window", ["partition"], registry=r)
        self.urls = Gauge("dustonline_urls", "URLs in the window", ["partition"], registry=r)
        self.active_rules = Gauge("dustonline_active_rules", "active rules", ["partition"], registry=r)
        self.candidates = Gauge("dustonline_candidate_rules", "candidate rules", ["partition"], registry=r)
        self.misrouted = Counter(
            "dustonline_misrouted_events",
            "events on a partition other than their site key's (a producer with another partitioner)",
            ["partition"],
            registry=r,
        )
        self.pool_rounds = Counter(
            "dustonline_pool_rounds",
            "rounds of pooled cross-site statistics this worker started (the owner of pages partition 0)",
            registry=r,
        )
        self.pool_skipped = Counter(
            "dustonline_pool_skipped",
            "shared counts or pooling rounds not sent: over the message size limit (logged)",
            registry=r,
        )
        self.partials_skipped = Counter(
            "dustonline_partials_skipped",
            "rule partials Faust dropped before the merge saw them (logged, and read again)",
            registry=r,
        )
        self.round_wait = Histogram(
            "dustonline_round_wait_seconds",
            "time a partition waited at a replay round for the rest of the group (stream/rounds.py)",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
            registry=r,
        )
        self.waiting = Gauge(
            "dustonline_partitions_waiting", "partitions of this worker waiting at a replay round", registry=r
        )
        from dustonline import __version__

        Info("dustonline_build", "the worker's version", registry=r).info({"version": __version__})

    def forget_partition(self, partition: int) -> None:
        """A revoked partition's gauges go: its new owner exports them, and a stale copy
        here would be summed with theirs."""
        p = str(partition)
        for g in (self.lag, self.clusters, self.urls, self.active_rules, self.candidates):
            try:
                g.remove(p)
            except KeyError:
                pass  # never set here

    def set_learner(self, partition: int, summary: dict) -> None:
        p = str(partition)
        self.clusters.labels(partition=p).set(summary.get("clusters", 0))
        self.urls.labels(partition=p).set(summary.get("urls", 0))
        self.active_rules.labels(partition=p).set(summary.get("active_rules", 0))
        self.candidates.labels(partition=p).set(summary.get("candidates", 0))


class SubscriberCollector(Collector):
    """A crawler's ``RuleSubscriber`` on its Prometheus registry: read from the subscriber
    at each scrape (its counts are the truth; nothing is counted twice), so the crawler
    exposes it with its own metrics (``prometheus_client.start_http_server``). Alert on
    ``dustonline_rules_refused_total`` growing (someone publishes rules no crawler may
    apply) and on ``dustonline_rules_subscriber_up == 0``."""

    def __init__(self, subscriber, registry: CollectorRegistry | None = REGISTRY):
        self.sub = subscriber
        if registry is not None:
            registry.register(self)

    def collect(self):
        h = self.sub.health()
        refused = CounterMetricFamily(
            "dustonline_rules_refused", "rules-topic records refused (skipped), by reason", labels=["reason"]
        )
        for reason, n in sorted(h["refused"].items()):
            refused.add_metric([reason], n)
        yield refused
        offset = GaugeMetricFamily(
            "dustonline_rules_last_offset",
            "offset of the last rules-topic record applied (or refused)",
            labels=["partition"],
        )
        for p, off in sorted(h["last_offsets"].items()):
            offset.add_metric([str(p)], off)
        yield offset
        if h["last_record_at"] is not None:
            yield GaugeMetricFamily(
                "dustonline_rules_last_record_timestamp_seconds",
                "when the last rules-topic record was read",
                value=h["last_record_at"],
            )
        yield GaugeMetricFamily("dustonline_rules_active", "active rules the crawler applies", value=h["active_rules"])
        yield GaugeMetricFamily(
            "dustonline_rules_current", "1 once the rules topic was read to its end", value=int(h["current"])
        )
        yield GaugeMetricFamily(
            "dustonline_rules_subscriber_up", "1 while the subscriber's thread runs", value=int(h["alive"])
        )
        yield CounterMetricFamily(
            "dustonline_rules_broker_errors", "broker errors the subscriber survived", value=h["broker_errors"]
        )


def expose(app, faust_sensor: bool = False) -> None:
    """``/metrics`` on the Faust web server. Faust's own Prometheus sensor (per-message
    counters and gauges with labels) is off unless asked for: it took 12% of a worker's
    time in a py-spy profile (bench_stream.py, 150k events)."""
    if faust_sensor:
        from faust.sensors.prometheus import setup_prometheus_sensors

        setup_prometheus_sensors(app, pattern="/metrics", name_prefix="dustonline_faust")
        return
    from aiohttp.web import Response
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    @app.page("/metrics")
    async def metrics(view, request):
        return Response(body=generate_latest(REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST})
