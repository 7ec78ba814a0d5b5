"""Rule changes onto the compacted rules topic: the learner's ``learn_one`` output as is."""

from __future__ import annotations

from collections.abc import Iterable

from dustonline.rules.ruleset import Rule

from . import topics


def publish_rules(producer, topic: str, changes: Iterable[Rule]) -> int:
    n = 0
    for rule in changes:
        producer.send(topic, key=topics.rule_key(rule.id), value=topics.rule_value(rule))
        n += 1
    return n


def forget_rule(producer, topic: str, rule_id: str) -> None:
    """A tombstone: subscribers drop the id and compaction removes its records."""
    producer.send(topic, key=topics.rule_key(rule_id), value=None)
