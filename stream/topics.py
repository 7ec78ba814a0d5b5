"""Message keys and values, in one place, so producers and consumers cannot drift apart.

Pages topic: key = the URL's registered domain (public suffix list), so every URL of a
site reaches the same partition and worker; value = the event as one JSON object (the
format of README "Formats"). Rules topic: key = rule id; value = the rule record as in a
rules file, or null (a tombstone) to forget the id. Both UTF-8.
"""

from __future__ import annotations

import msgspec

from dustonline.events import FetchEvent
from dustonline.partitions import site_key
from dustonline.rules import Rule, encode_rule

_json = msgspec.json.Encoder()

page_key = site_key  # the URL's registered domain: what Kafka partitions the pages topic by


def page_value(ev: FetchEvent) -> bytes:
    return _json.encode(ev.to_json())


def rule_key(rule_id: str) -> bytes:
    return rule_id.encode()


def rule_value(rule: Rule) -> bytes:
    return encode_rule(rule)
