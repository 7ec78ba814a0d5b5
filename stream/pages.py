"""The crawler side of the pages topic: ``PagePublisher`` sends fetch events packed.

A worker pays Faust's cost per message, so one event per message learns at about a
quarter of the embedded learner's speed and 100 per message at two thirds
(docs/performance.md). ``PagePublisher`` packs each partition's events into one JSON-lines
message (header ``dustonline-format: jsonl``, the format ``replay --batch`` sends), sent
when ``batch`` events wait or every ``linger_ms``, whichever comes first: an event waits
at most that long, which the rule latency benchmark counts. Events of a partition keep
the order they were sent in, so the worker group learns what it would learn from one
event per message.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from dustonline.config import Config
from dustonline.events.event import FetchEvent, event_from_dict
from dustonline.events.routing import partition_for
from dustonline.events.sketch import event as sketch_event

from . import clients, topics

log = logging.getLogger("dustonline.pages")


class Packer:
    """Per-partition buffers of consecutive events, sent as one JSON-lines message each."""

    def __init__(self, prod, topic: str, size: int):
        self.prod, self.topic, self.size = prod, topic, size
        parts = prod.partitions_for(topic)
        if not parts:
            raise ValueError(f"topic {topic} has no partitions (does it exist?)")
        self.n = len(parts)
        self.buf: dict[int, list] = {}
        self.keys: dict[int, bytes] = {}
        self.messages = 0

    def add(self, key: bytes, ev):
        """Buffer the event; the send's future when this filled a pack, else None."""
        p = partition_for(key, self.n)  # where the default partitioner would send ``key``
        b = self.buf.setdefault(p, [])
        if not b:
            self.keys[p] = key
        b.append(ev)
        return self._send(p) if len(b) >= self.size else None

    def _send(self, p: int):
        b = self.buf.pop(p)
        self.messages += 1
        return self.prod.send(
            self.topic,
            key=self.keys.pop(p),
            value=topics.batch_value(b),
            partition=p,
            headers=[(topics.FORMAT_HEADER, topics.JSONL)],
        )

    def flush(self) -> list:
        """Send every pack; their futures."""
        return [self._send(p) for p in sorted(self.buf)]


class PagePublisher:
    """``send(event)`` or ``send_page(url, body)`` from any crawler thread.

    Delivery is checked: a record the producer could not deliver makes the next
    ``flush`` (and ``close``) raise, instead of the events being lost unseen."""

    def __init__(
        self,
        cfg: Config | None = None,
        *,
        topic: str | None = None,
        batch: int = 100,
        linger_ms: float = 50,
        producer=None,
    ):
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        if linger_ms <= 0:
            raise ValueError(f"linger_ms must be > 0, got {linger_ms}")
        self.cfg = cfg or Config().check()
        self.topic = topic or self.cfg.kafka.pages_topic
        self._own = producer is None
        if self._own and self.topic == self.cfg.kafka.pages_topic:
            from .admin import ensure_topics

            ensure_topics(self.cfg)  # as the worker would create it: partitions decide the packs
        # packs are the batching here; one event per message leaves it to the producer
        if producer is None:
            producer = clients.producer(self.cfg, **({"linger_ms": 0} if batch > 1 else {}))
        self._prod = producer
        self._packer = Packer(self._prod, self.topic, batch) if batch > 1 else None
        self._lock = threading.Lock()
        self._futures: list = []
        self._error: Exception | None = None  # of the linger thread
        self.events = 0
        self._stop = threading.Event()
        self._linger = linger_ms / 1000
        self._thread = threading.Thread(target=self._run, name="dustonline-pages", daemon=True)
        self._thread.start()

    def send(self, event: FetchEvent) -> None:
        key = topics.page_key(event.url)
        with self._lock:
            if self._packer is None:
                self._futures.append(self._prod.send(self.topic, key=key, value=topics.page_value(event)))
            else:
                fut = self._packer.add(key, event)
                if fut is not None:
                    self._futures.append(fut)
            self.events += 1

    def send_page(
        self,
        url: str,
        body: bytes,
        *,
        ts: Any = None,
        status: int = 200,
        content_type: str | None = None,
        **fields: Any,
    ) -> FetchEvent:
        """Sketch the page body (digest, simhash, length: ``dustonline sketch``) and send
        the event; ``fields`` are further event fields, such as ``canonical``."""
        ev = event_from_dict(
            {**sketch_event(body, url, ts, status, content_type), **fields}, self.cfg.input.max_url_length
        )
        self.send(ev)
        return ev

    def flush(self, timeout: float | None = None) -> None:
        """Send every pack now and wait for the broker to have them."""
        with self._lock:
            if self._packer is not None:
                self._futures += self._packer.flush()
            futures, self._futures = self._futures, []
        from kafka.errors import KafkaError

        error = None
        try:
            self._prod.flush(timeout)
        except KafkaError as e:  # kafka-python gives up on a batch the broker keeps refusing
            error = e
        failed = [f for f in futures if not f.is_done or f.failed()]
        error = error or self._error
        if failed or error is not None:
            why = error if error is not None else failed[0].exception
            raise RuntimeError(
                f"{len(failed)} of {len(futures)} page messages were not delivered to {self.topic}: {why}"
            )

    @property
    def messages(self) -> int:
        return self._packer.messages if self._packer is not None else self.events

    def _run(self) -> None:
        while not self._stop.wait(self._linger):
            with self._lock:
                try:
                    if self._packer is not None:
                        self._futures += self._packer.flush()
                except Exception as e:  # noqa: BLE001 (kept, and raised by the next flush: no metadata for minutes)
                    self._error = e
                    return
                # keep only what is pending or failed: memory stays flat on a long crawl
                self._futures = [f for f in self._futures if not f.is_done or f.failed()]

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        try:
            self.flush()
        finally:
            if self._own:
                from kafka.errors import KafkaError

                try:
                    self._prod.close(timeout=10)
                except KafkaError as e:  # a refused batch kafka-python still holds: flush said so
                    log.warning("closing the pages producer: %s", e)

    def __enter__(self) -> PagePublisher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
