"""stream/merge.py: a partial the consumer never handed to the merge (an offset skipped
between rebalances: Faust's recovery clears the agents' queues after seeking back) is
said, counted and read again. The agent's path on a real broker is in test_worker.py,
where a skip shows in a worker's log now and then but cannot be provoked."""

import asyncio
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


class Consumer:
    def __init__(self):
        self.seeks: list = []

    async def seek_wait(self, partitions):
        self.seeks.append({(tp.topic, tp.partition): off for tp, off in partitions.items()})


def partial(offset: int, rid: str, partition: int = 0, version: int = 1):
    rule = Rule(
        id=rid,
        hosts=["a.com"],
        context="^a$",
        transformation="x",
        support=3,
        fpr=0.0,
        freq=3,
        version=version,
        status=ACTIVE,
        updated=1.0,
    )
    value = msgspec.json.encode(topics.Partial(0, rule))
    return SimpleNamespace(topic="partials", partition=partition, offset=offset, key=rid.encode(), value=value)


def skipped(metrics) -> float:
    return metrics.partials_skipped._value.get()


def test_a_skipped_partial_is_said_counted_and_read_again(caplog):
    metrics = WorkerMetrics(CollectorRegistry())
    consumer = Consumer()
    agent = MergeAgent(SimpleNamespace(consumer=consumer), {}, "rules", Outputs(), metrics)
    for off in (0, 1, 2):
        agent._merge_one(partial(off, f"r-{off}"))
    agent._merge_one(partial(0, "r-0", partition=1))  # another partition has offsets of its own
    assert skipped(metrics) == 0 and not caplog.records
    agent._merge_one(partial(5, "r-5", version=2))  # 3 and 4 never came
    agent._merge_one(partial(6, "r-6"))  # the same skip: not counted again
    assert skipped(metrics) == 2
    assert "offsets 3-4 never reached the merge" in caplog.text
    asyncio.run(agent._seek_back())  # after the buffer
    assert consumer.seeks == [{("partials", 0): 3}]
    agent._merge_one(partial(7, "r-7"))  # queued before the seek: it comes again, no new skip
    for off in (3, 4, 5, 6, 7):  # read again from 3
        agent._merge_one(partial(off, f"r-{off}", version=1))
    assert skipped(metrics) == 2 and len(consumer.seeks) == 1
    published = {k for k, _ in agent.outputs.sent}
    assert {b"r-3", b"r-4"} <= published  # the skipped partials' rules are out
    stored = msgspec.json.decode(agent.table[b"r-5"])
    assert stored["0"]["version"] == 2  # the older partial read again after the newer one: ignored
    agent.forget()  # a rebalance: another worker may have merged what follows
    agent._merge_one(partial(40, "r-40"))
    assert skipped(metrics) == 2 and len(consumer.seeks) == 1
