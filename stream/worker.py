"""``dustonline worker``: the Faust application that learns rules from the pages topic.

Topology (docs/DESIGN.md §4):

    dust.pages ──(key: site)──> learn ──> <group>-rule-partials ──(key: rule id)──> merge ──> dust.rules
        │                         │                                                  │
        └─ dead letters ──> dust.pages.dlq   table learner-state          table rule-merge

- ``learn`` (learn.py): each assigned partition of the pages topic has its own
  ``OnlineLearner`` whose state is that partition's slice of the Faust table
  ``learner-state`` (RocksDB via rocksdict, compacted changelog topic). A worker that
  takes a partition over, after a crash or a rebalance, restores the learner from the
  changelog and goes on. It reads the pages topic a fetch at a time (batches.py), in a
  task of the app rather than a Faust agent.
- ``merge`` (merge.py): DustLin-MR's reduce, from the partials to the rules topic.

The state is exactly-once on at-least-once delivery through atomic checkpoints
(checkpoint.py); rules are derived at flush markers in the pages topic, the same on every
replay (learn.py). This module wires them: the app (app.py), its topics and tables, the
agents, their timers and the rebalance callbacks; outputs.py holds the records written
besides the state, and faust_compat.py every use of a Faust or aiokafka internal.
"""

from __future__ import annotations

import functools
import logging
import os

from dustonline.config import Config

from . import faust_compat, metrics
from .app import faust_app
from .batches import PageBatches
from .checkpoint import CHANGELOG_CONFIGS
from .learn import LearnAgent
from .merge import MergeAgent
from .outputs import Outputs
from .topics import partials_topic_name, transfer_topic_name

__all__ = ["Worker", "partials_topic_name"]

log = logging.getLogger("dustonline.worker")

STATE_TABLE = "learner-state"
MERGE_TABLE = "rule-merge"


class Worker:
    def __init__(self, cfg: Config):
        self.cfg = cfg
        K = self.K = cfg.kafka
        self.app = app = faust_app(cfg)
        self.metrics = metrics.WorkerMetrics()
        # the pages topic a fetch at a time, past Faust's agents (faust_compat.batch_topic)
        self.batches = PageBatches(app, K.max_partition_fetch_bytes, self.metrics.fetch_paused.inc)
        faust_compat.batch_topic(app, K.pages_topic, self.batches.put, _exit_on_fetch_error)
        raw = {"key_type": bytes, "value_type": bytes, "key_serializer": "raw", "value_serializer": "raw"}
        self.pages = app.topic(K.pages_topic, partitions=K.partitions, **raw)
        app.topics.add(self.pages)  # subscribed, assigned and committed by Faust, read by the learn task
        self.partials = app.topic(partials_topic_name(cfg), partitions=K.partitions, internal=True, **raw)
        self.state = app.Table(
            STATE_TABLE,
            key_type=bytes,
            value_type=bytes,
            partitions=K.partitions,
            extra_topic_configs=CHANGELOG_CONFIGS,
            help="learner state of each pages partition (stream/state.py)",
        )
        self.merged = app.Table(
            MERGE_TABLE,
            key_type=bytes,
            value_type=bytes,
            partitions=K.partitions,
            help="latest rule record per (rule id, pages partition)",
        )
        for t in (self.state, self.merged):
            t.key_serializer = t.value_serializer = "raw"  # msgpack / JSON bytes from the core
        # kafka-python: rules, partials, dead letters, flush markers
        self.outputs = Outputs(cfg, self.metrics)
        self.learn = LearnAgent(
            cfg,
            app,
            self.state,
            self.batches,
            self.partials.get_topic_name(),
            self.outputs,
            self.metrics,
            transfer_topic_name(cfg),
        )
        self.merge = MergeAgent(app, self.merged, K.rules_topic, self.outputs, self.metrics)
        if K.web_port > 0:
            metrics.expose(app, faust_sensor=K.faust_metrics)

            async def state_view(view, request):
                return view.json(self.state_summary())

            app.page("/dustonline/state")(state_view)

        app.task(_crash_only(self.learn.learn), traced=False)
        app.agent(self.partials, name="dustonline.merge")(_crash_only(self.merge.merge))
        app.timer(max(0.1, K.idle_flush_seconds / 4))(self.learn.idle)
        app.timer(5.0)(self.learn.measure_lag)
        app.on_partitions_assigned.connect(self._on_assigned)
        app.on_partitions_revoked.connect(self._on_revoked)

    async def _on_assigned(self, app, assigned, **kw) -> None:
        # Faust fixes its consumer's fetch wait at 1500 ms: events arriving on a partition
        # left out of a fetch wait that long when the others are quiet (faust_compat.py)
        if not faust_compat.set_fetch_max_wait(self.app, self.K.fetch_max_wait_ms):
            # another Faust: events may wait up to its own fetch wait
            log.warning("kafka.fetch_max_wait_ms not applied: no aiokafka fetcher under this Faust's consumer")
        self.learn.assign(assigned)

    async def _on_revoked(self, app, revoked, **kw) -> None:
        self.learn.revoke(revoked)
        self.merge.forget()

    def state_summary(self) -> dict:
        """The learners of this worker's partitions: events learned, offsets, counts."""
        return {
            "assigned": sorted(self.learn.assigned),
            "fetch_max_wait_ms": faust_compat.fetch_max_wait(self.app),
            "batched_messages_waiting": len(self.batches),
            "partitions": self.learn.summary(),
        }

    def run(self) -> None:
        import faust

        from .admin import ensure_topics

        ensure_topics(self.cfg, internal=[partials_topic_name(self.cfg)], compacted=[transfer_topic_name(self.cfg)])
        # faust.Worker, not mode's: it sets the app up as a worker (signals, web, sensors)
        faust.Worker(self.app, loglevel="INFO", quiet=True, redirect_stdouts=False).execute_from_commandline()


def _crash_only(agent):
    """An agent (or the learn task) that fails takes the process down instead of being
    restarted in place (Faust's default): its learner may hold half an event, and only a
    restart from the last checkpoint is known to be right. Run the worker under a
    supervisor."""
    import asyncio

    @functools.wraps(agent)
    async def run(*args):
        try:
            await agent(*args)
        except asyncio.CancelledError:
            raise  # a rebalance or a stop
        except Exception:
            log.critical("agent %s failed; exiting to restart from the last checkpoint", agent.__name__, exc_info=True)
            logging.shutdown()
            os._exit(70)

    return run


def _exit_on_fetch_error(exc: BaseException) -> None:
    """The pages fetch loop failed (Faust would leave the worker up, reading nothing):
    exit, as ``_crash_only`` does for an agent."""
    log.critical("the pages fetch loop failed; exiting to restart from the last checkpoint", exc_info=exc)
    logging.shutdown()
    os._exit(70)
