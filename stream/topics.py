"""Message keys and values, in one place, so producers and consumers cannot drift apart.

Pages topic: key = the URL's registered domain (public suffix list), so every URL of a
site reaches the same partition and worker; value = the event as one JSON object (the
format of docs/formats.md). A message with the header ``dustonline-format: jsonl`` holds
several events of one partition, one JSON object per line, in order (``dustonline replay
--batch``): the worker's cost per message is then shared by the lines. A record with the
header ``dustonline-control: flush`` is a flush marker: the worker derives rules where it
reads one (stream/learn.py); its value is empty, or a ``Pool``: the other partitions'
cross-site statistics, which the partition's learner adopts there (pool.py). Rules topic: key = rule id; value =
the rule record as in a rules file, or null (a tombstone) to forget the id. Both UTF-8.
The worker's internal partials topic: key = rule id; value = a ``Partial`` as JSON. Its
transfer topic: key = pages partition; value = a ``Transfer`` as JSON (compacted).
"""

from __future__ import annotations

import msgspec

from dustonline.config import Config
from dustonline.events.event import FetchEvent
from dustonline.events.routing import site_key
from dustonline.rules.ruleset import Rule, encode_rule

_json = msgspec.json.Encoder()

page_key = site_key  # the URL's registered domain: what Kafka partitions the pages topic by


def page_value(ev: FetchEvent) -> bytes:
    return _json.encode(ev.to_json())


FORMAT_HEADER = "dustonline-format"
JSONL = b"jsonl"


def batch_value(events) -> bytes:
    return b"\n".join(_json.encode(ev.to_json()) for ev in events)


def is_batch(headers) -> bool:
    return _has_header(headers, FORMAT_HEADER, JSONL)


CONTROL_HEADER = "dustonline-control"
FLUSH = b"flush"


def is_flush(headers) -> bool:
    return _has_header(headers, CONTROL_HEADER, FLUSH)


def _has_header(headers, name: str, value: bytes) -> bool:
    if not headers:
        return False
    items = headers.items() if isinstance(headers, dict) else headers
    return any(k == name and v == value for k, v in items)


class Pool(msgspec.Struct):
    """A flush marker's value: the sum of the other partitions' transfer counts."""

    others: dict[str, tuple[int, ...]]


class Transfer(msgspec.Struct):
    """A partition learner's transfer counts as of the flush marker at ``offset``."""

    partition: int
    offset: int
    counts: dict[str, tuple[int, ...]]


def pool_value(others) -> bytes:
    return _json.encode(Pool(dict(others)))


def pool_of(value: bytes | None) -> dict[str, tuple[int, ...]] | None:
    """The pooled counts a flush marker carries; None for a plain one."""
    return msgspec.json.decode(value, type=Pool).others if value else None


def transfer_key(p: int) -> bytes:
    return str(p).encode()


def transfer_value(p: int, offset: int, counts) -> bytes:
    return _json.encode(Transfer(p, offset, dict(counts)))


def transfer_of(value: bytes) -> Transfer:
    return msgspec.json.decode(value, type=Transfer)


def rule_key(rule_id: str) -> bytes:
    return rule_id.encode()


def rule_value(rule: Rule) -> bytes:
    return encode_rule(rule)


class Partial(msgspec.Struct):
    """A partition learner's rule change, on the partials topic."""

    partition: int
    rule: Rule


def partials_topic_name(cfg: Config) -> str:
    return f"{cfg.kafka.group_id}-rule-partials"


def transfer_topic_name(cfg: Config) -> str:
    return f"{cfg.kafka.group_id}-transfer-stats"
