"""The worker's seek to committed offsets (stream/faust_compat.py), against the real
broker: Faust seeks there after every rebalance and recovery to bring back records it
fetched and dropped, and aiokafka's own seek leaves a partition that was never committed
where its fetches got to. That lost the first rule partial of a partials partition after
a kill -9 (1 run in 7 of the kill -9 test)."""

from __future__ import annotations

import asyncio
import uuid

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from dustonline_stream import faust_compat


async def _fetched_then_sought(broker: str, skip: set[str]) -> dict[str, int]:
    """Three topics of 3 records; all fetched, the second committed at 2; then the seek.
    Returns each topic's position after it."""
    names = {k: f"seek-{k}-{uuid.uuid4().hex[:8]}" for k in ("fresh", "committed", "changelog")}
    producer = AIOKafkaProducer(bootstrap_servers=broker)
    await producer.start()
    try:
        for topic in names.values():
            for i in range(3):
                await producer.send_and_wait(topic, b"%d" % i, partition=0)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=broker,
        group_id=f"g-{uuid.uuid4().hex[:8]}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        tps = {k: TopicPartition(t, 0) for k, t in names.items()}
        consumer.assign(list(tps.values()))
        fetched = 0
        for _ in range(20):
            fetched += sum(len(r) for r in (await consumer.getmany(timeout_ms=500)).values())
            if fetched >= 9:
                break
        assert fetched == 9
        await consumer.commit({tps["committed"]: OffsetAndMetadata(2, "")})
        skip_topics = {names[k] for k in skip}
        await faust_compat.seek_to_committed(consumer, skip_topics)
        return {k: await consumer.position(tp) for k, tp in tps.items()}
    finally:
        await consumer.stop()


def test_a_partition_never_committed_is_read_again_from_its_beginning(kafka_broker):
    pos = asyncio.run(_fetched_then_sought(kafka_broker, {"changelog"}))
    # aiokafka's seek_to_committed leaves "fresh" at 3: its records are never read again
    assert pos == {"fresh": 0, "committed": 2, "changelog": 3}


def test_the_worker_consumer_seeks_with_it():
    consumer = faust_compat._batching_transport_class().Consumer
    assert "seek_to_committed" in vars(consumer)  # Faust's perform_seek calls this method
