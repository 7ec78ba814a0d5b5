"""stream/merge.py: the merge agent says and counts a partial the consumer never handed
to it (an offset skipped between rebalances), whose rule may then never be published.
The agent's path on a real broker is in test_worker.py; a skip cannot be provoked there."""

from types import SimpleNamespace

import msgspec
from prometheus_client import CollectorRegistry

from dustonline.rules.ruleset import ACTIVE, Rule
from dustonline_stream import topics
from dustonline_stream.merge import MergeAgent
from dustonline_stream.metrics import WorkerMetrics


class Outputs:
    def __init__(self):
        self.sent: list = []

    def send(self, topic, key, value):
        self.sent.append((key, value))

    def deliver(self):
        pass


def partial(offset: int, rid: str, partition: int = 0):
    rule = Rule(
        id=rid,
        hosts=["a.com"],
        context="^a$",
        transformation="x",
        support=3,
        fpr=0.0,
        freq=3,
        version=1,
        status=ACTIVE,
        updated=1.0,
    )
    value = msgspec.json.encode(topics.Partial(0, rule))
    return SimpleNamespace(partition=partition, offset=offset, key=rid.encode(), value=value)


def skipped(metrics) -> float:
    return metrics.partials_skipped._value.get()


def test_an_offset_skipped_is_said_and_counted_and_a_rebalance_starts_afresh(caplog):
    metrics = WorkerMetrics(CollectorRegistry())
    agent = MergeAgent({}, "rules", Outputs(), metrics)
    for off in (0, 1, 2):
        agent._merge_one(partial(off, f"r-{off}"))
    agent._merge_one(partial(0, "r-0", partition=1))  # another partition has offsets of its own
    assert skipped(metrics) == 0 and not caplog.records
    agent._merge_one(partial(5, "r-5"))  # 3 and 4 never came
    assert skipped(metrics) == 2
    assert "offsets 3-4 never reached the merge" in caplog.text
    agent._merge_one(partial(1, "r-1"))  # read again after a seek back: not a skip
    agent.forget()  # a rebalance: another worker may have merged what follows
    agent._merge_one(partial(40, "r-40"))
    assert skipped(metrics) == 2
    # the check only observes: every partial was merged and its rule published
    assert {k for k, _ in agent.outputs.sent} == {b"r-0", b"r-1", b"r-2", b"r-5", b"r-40"}
