"""The crawler side: ``RuleSubscriber`` keeps a live ``RuleSet`` from the rules topic.

A background thread reads the compacted rules topic from the beginning, applies each
record to a ``RuleBook`` (versions respected, retirements and tombstones applied) and
swaps in a new ``RuleSet`` after each batch: one reference assignment, so a crawler thread
calling ``canonicalize`` sees the old set or the new one, never half of each. A snapshot
file (a rules file) lets a crawler start canonicalizing before it has read the topic; the
topic then brings it current. Broker outages are retried with the last offsets, so the
rule set stays usable (if stale) while the broker is away. A record that is not an
admitted rule is skipped, logged with its offset and counted by reason (``refused``);
``health()`` says how far the topic was applied, and ``dustonline_stream.metrics.
SubscriberCollector`` exports the same on a Prometheus registry.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from dustonline.config import Config
from dustonline.rules.book import RuleBook
from dustonline.rules.ruleset import RuleError, RuleSet, read_rules, write_rules

from . import clients

log = logging.getLogger("dustonline.subscriber")


class RuleSubscriber:
    def __init__(
        self,
        cfg: Config | None = None,
        snapshot: str | Path | None = None,
        topic: str | None = None,
        poll_ms: int = 200,
    ):
        self.cfg = cfg or Config().check()
        self.topic = topic or self.cfg.kafka.rules_topic
        self.poll_ms = poll_ms
        self._book = RuleBook(read_rules(snapshot) if snapshot and Path(snapshot).exists() else ())
        self._rules: RuleSet = self._book.ruleset()
        self._seen: set[str] = set()
        self._offsets: dict[int, int] = {}  # partition -> next offset to read
        self._stop = threading.Event()
        self._current = threading.Event()
        self._thread: threading.Thread | None = None
        self.rejected = 0  # messages that were not rule records
        self.errors = 0  # broker errors survived
        self._failed = 0  # records that raised something other than RuleError
        self._last_record: float | None = None  # time.time() of the last record read

    # ------------------------------------------------------------ crawler API
    @property
    def rules(self) -> RuleSet:
        return self._rules

    def canonicalize(self, url: str) -> str:
        return self._rules.canonicalize(url)

    def seen(self, url: str) -> bool:
        """Frontier de-duplication: True when a URL with the same canonical key was seen
        before (and remembers this one). Keys, not URLs, are kept."""
        key = self._rules.canonicalize(url)
        if key in self._seen:
            return True
        self._seen.add(key)
        return False

    @property
    def refused(self) -> dict[str, int]:
        """Records refused so far, by reason (``RuleError.reason``: unsafe-context,
        foreign-host, not-a-rule, bad-key, ...; ``error`` for any other failure)."""
        out = dict(self._book.refused)
        if self._failed:
            out["error"] = out.get("error", 0) + self._failed
        return out

    @property
    def last_offsets(self) -> dict[int, int]:
        """Per partition, the offset of the last record read and applied (or refused)."""
        return {p: nxt - 1 for p, nxt in self._offsets.items()}

    def health(self) -> dict:
        """What an operator checks: the thread alive, the topic read to its end once,
        the last offset applied per partition and when, records refused by reason,
        broker errors survived, and the active rules served."""
        refused = self.refused
        return {
            "alive": self._thread is not None and self._thread.is_alive(),
            "current": self._current.is_set(),
            "last_offsets": self.last_offsets,
            "last_record_at": self._last_record,
            "refused": refused,
            "refused_total": sum(refused.values()),
            "broker_errors": self.errors,
            "active_rules": len(self._rules),
        }

    def save_snapshot(self, path: str | Path) -> int:
        return write_rules(path, self._book.rules())

    # ------------------------------------------------------------ lifecycle
    def start(self) -> RuleSubscriber:
        self._thread = threading.Thread(target=self._run, name="dustonline-rules", daemon=True)
        self._thread.start()
        return self

    def wait_until_current(self, timeout: float | None = None) -> bool:
        """Block until the topic has been read up to its end as of the last check."""
        return self._current.wait(timeout)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> RuleSubscriber:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------ the thread
    def _run(self) -> None:
        from kafka.errors import KafkaError

        while not self._stop.is_set():
            consumer = None
            try:
                consumer = self._consumer()
                if consumer is None:
                    time.sleep(0.5)  # topic not there yet
                    continue
                self._follow(consumer)
            except KafkaError as e:
                self.errors += 1
                log.warning("rules topic: %s; retrying", e)
                time.sleep(1.0)
            finally:
                if consumer is not None:
                    consumer.close()

    def _consumer(self):
        from kafka import TopicPartition

        c = clients.consumer(
            self.cfg,
            client_id=self.cfg.kafka.client_id + "-subscriber",
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        parts = c.partitions_for_topic(self.topic)
        if not parts:
            c.close()
            return None
        tps = [TopicPartition(self.topic, p) for p in sorted(parts)]
        c.assign(tps)
        for tp in tps:
            if tp.partition in self._offsets:
                c.seek(tp, self._offsets[tp.partition])
            else:
                c.seek_to_beginning(tp)
        return c

    def _follow(self, consumer) -> None:
        tps = list(consumer.assignment())
        ends = consumer.end_offsets(tps)
        last_check = time.monotonic()
        while not self._stop.is_set():
            batch = consumer.poll(timeout_ms=self.poll_ms)
            changed = False
            for tp, records in batch.items():
                for rec in records:
                    try:
                        changed |= self._book.apply(rec.key, rec.value)
                    except RuleError as e:
                        self.rejected += 1
                        log.warning("rules topic offset %s: refused (%s): %s", rec.offset, e.reason, e)
                    except Exception as e:  # noqa: BLE001 -- no record may end the thread (crawlers would keep stale rules)
                        self.rejected += 1
                        self._failed += 1
                        log.warning("rules topic offset %s: refused (%s: %s)", rec.offset, type(e).__name__, e)
                    self._offsets[tp.partition] = rec.offset + 1
                    self._last_record = time.time()
            if changed:
                self._rules = self._book.ruleset()  # the atomic swap
            if not self._current.is_set():
                if all(consumer.position(tp) >= ends[tp] for tp in tps):
                    self._current.set()
                elif time.monotonic() - last_check > 5:
                    ends, last_check = consumer.end_offsets(tps), time.monotonic()
