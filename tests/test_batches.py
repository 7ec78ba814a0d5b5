"""stream/batches.py: the pages topic's fetches queued for the learner, a partition paused
while more than two fetches' worth of it waits and resumed below one, batches of an
older consumer generation dropped. The learn-loop side on a real broker is in
test_worker.py; this checks the thresholds, which there depend on the machine's load."""

import asyncio
from collections import namedtuple
from types import SimpleNamespace

from dustonline_stream.batches import MESSAGE_OVERHEAD, PageBatches

TP = namedtuple("TP", "topic partition")  # hashable, as aiokafka's TopicPartition


class Consumer:
    """Records what PageBatches asks of Faust's consumer."""

    def __init__(self):
        self.calls: list[tuple[str, object]] = []

    def on_buffer_full(self, tp):
        self.calls.append(("pause", tp))

    def on_buffer_drop(self, tp):
        self.calls.append(("resume", tp))


def setup(max_bytes: int):
    app = SimpleNamespace(consumer=Consumer(), consumer_generation_id=1)
    paused = []
    return app, PageBatches(app, max_bytes, on_pause=lambda: paused.append(1)), paused


def messages(n: int, size: int):
    return [SimpleNamespace(value=b"x" * (size - MESSAGE_OVERHEAD)) for _ in range(n)]


def test_a_partition_pauses_above_two_fetches_waiting_and_resumes_below_one():
    app, q, paused = setup(max_bytes=1000)
    tp = TP("p", 3)
    q.put(tp, messages(5, 300))  # 1,500 bytes: under twice the bound
    assert app.consumer.calls == [] and paused == []
    q.put(tp, messages(3, 300))  # 2,400: over
    assert app.consumer.calls == [("pause", tp)] and paused == [1]
    q.put(tp, messages(1, 300))  # paused once, not again
    assert app.consumer.calls == [("pause", tp)]

    async def drain(n):
        return [await q.get() for _ in range(n)]

    got = asyncio.run(drain(1))  # 1,200 left: still over one bound
    assert got[0][1] == 3 and len(got[0][2]) == 5
    assert app.consumer.calls == [("pause", tp)]
    asyncio.run(drain(1))  # 300 left: resumed
    assert app.consumer.calls == [("pause", tp), ("resume", tp)]
    assert len(q) == 1


def test_batches_of_an_older_generation_are_dropped():
    app, q, _ = setup(max_bytes=10_000)
    a, b = TP("p", 0), TP("p", 1)
    q.put(a, messages(2, 300))
    app.consumer_generation_id = 2  # a rebalance: Faust seeks back, they come again
    q.put(b, messages(1, 300))
    generation, partition, batch = asyncio.run(q.get())
    assert (generation, partition, len(batch)) == (2, 1, 1)
    assert len(q) == 0


def test_a_revoke_clears_what_waits_and_the_pauses():
    app, q, _ = setup(max_bytes=100)
    tp = TP("p", 0)
    q.put(tp, messages(3, 300))
    assert app.consumer.calls == [("pause", tp)]
    q.clear()
    assert len(q) == 0
    q.put(tp, messages(3, 300))  # paused afresh: Faust's assignment reset the consumer's pauses
    assert app.consumer.calls == [("pause", tp), ("pause", tp)]


def test_a_partition_held_at_a_round_stays_out_of_fetches_until_released():
    """A partition waiting at a replay round (stream/rounds.py) is paused however little
    of it waits, stays paused when its buffer drains, and resumes on release; a kick wakes
    the learn loop with partition -1."""
    app, q, _ = setup(max_bytes=1000)
    tp = TP("p", 1)
    q.put(tp, messages(1, 300))
    q.hold(tp)
    q.hold(tp)  # once
    assert app.consumer.calls == [("pause", tp)]

    async def take():
        return await q.get()

    assert asyncio.run(take())[1] == 1  # drained below the bound: still held
    assert app.consumer.calls == [("pause", tp)]
    q.kick()
    assert asyncio.run(take()) == (1, -1, [])
    q.release(tp)
    assert app.consumer.calls == [("pause", tp), ("resume", tp)]
    q.release(tp)  # not paused any more: nothing
    assert app.consumer.calls == [("pause", tp), ("resume", tp)]
