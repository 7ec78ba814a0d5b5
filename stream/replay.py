"""``dustonline replay``: historical crawls (any format the core reads) onto the pages topic.

Events go out in input order, keyed by registered domain; records the readers reject go
to the dead-letter file with their reason, as in ``dustonline learn``, and are counted.
``rate`` caps events per second (replaying at crawl speed rather than disk speed).

``batch`` > 1 packs up to that many consecutive events of one partition into one message
(JSON lines, header ``dustonline-format: jsonl``), sent to that partition: each partition
still sees its events in input order, so the group learns exactly what it learns from
one event per message, with the worker's per-message cost shared by the batch.

When the group learns several shards on several partitions, the replay also places the
group's pooling rounds: a round marker into every partition every ``learning.pool_every``
events (rounds.py), so the group pools where ``dustonline learn`` pools.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable

from dustonline.config import Config
from dustonline.events.deadletter import DeadLetter
from dustonline.events.readers import Rejected, read_events

from . import clients, topics
from .pages import Packer
from .rounds import RoundPlacer


def replay(
    inputs: Iterable[str],
    cfg: Config,
    topic: str | None = None,
    rate: float | None = None,
    fmt: str | None = None,
    dead_letter: str | None = None,
    progress=None,
    producer=None,
    batch: int = 1,
) -> dict:
    if batch < 1:
        raise ValueError(f"--batch must be >= 1, got {batch}")
    topic = topic or cfg.kafka.pages_topic
    own = producer is None
    if own and topic == cfg.kafka.pages_topic:
        from .admin import ensure_topics

        ensure_topics(cfg)
    prod = producer if producer is not None else clients.producer(cfg)
    packer = Packer(prod, topic, batch) if batch > 1 else None
    rounds = RoundPlacer(cfg, prod, topic, packer.flush if packer is not None else lambda: None)
    dlq = DeadLetter(dead_letter)
    dlq.start()  # the file holds this run's dead letters
    skipped: Counter[str] = Counter()  # records that are no fetch (blank lines, WARC requests)
    sent = 0
    t0 = time.perf_counter()
    try:
        rounds.start()
        for item in read_events(list(inputs), fmt or cfg.input.format, cfg.input.max_url_length, skipped=skipped):
            if isinstance(item, Rejected):
                dlq.add(item)
                continue
            key = topics.page_key(item.url)
            if packer is None:
                prod.send(topic, key=key, value=topics.page_value(item))
            else:
                packer.add(key, item)
            sent += 1
            rounds.after(sent)
            if rate:
                ahead = sent / rate - (time.perf_counter() - t0)
                if ahead > 0:
                    if packer is not None:
                        packer.flush()  # waiting anyway: no event waits in a buffer
                    time.sleep(ahead)
            if progress is not None:
                progress.update(1)
        if packer is not None:
            packer.flush()
        prod.flush()
    finally:
        try:
            rounds.finish()
        finally:
            dlq.close()
            if own:
                prod.close()
    secs = time.perf_counter() - t0
    return {
        "sent": sent,
        "rejected": dlq.total,
        "skipped": sum(skipped.values()),
        "read": sent + dlq.total + sum(skipped.values()),
        "rejected_by_reason": dlq.summary() if dlq.total else "",
        "seconds": secs,
        "topic": topic,
        "messages": packer.messages if packer else sent,
        "rounds": rounds.placed,
    }
