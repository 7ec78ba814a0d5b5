"""Message keys and values, in one place, so producers and consumers cannot drift apart.

Pages topic: key = the URL's registered domain (public suffix list), so every URL of a
site reaches the same partition and worker; value = the event as one JSON object (the
format of README "Formats"). A message with the header ``dustonline-format: jsonl`` holds
several events of one partition, one JSON object per line, in order (``dustonline replay
--batch``): the worker's cost per message is then shared by the lines. Rules topic: key = rule id; value = the rule record as in a
rules file, or null (a tombstone) to forget the id. Both UTF-8.
"""

from __future__ import annotations

import msgspec

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
    if not headers:
        return False
    items = headers.items() if isinstance(headers, dict) else headers
    return any(k == FORMAT_HEADER and v == JSONL for k, v in items)


def rule_key(rule_id: str) -> bytes:
    return rule_id.encode()


def rule_value(rule: Rule) -> bytes:
    return encode_rule(rule)
