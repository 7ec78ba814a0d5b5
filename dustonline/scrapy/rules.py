"""Where the add-on's rules come from: a rules file, or the rules topic.

``DUSTONLINE_RULES`` names a rules file (``dustonline learn --rules-out``). With
``DUSTONLINE_RULES_TOPIC`` the live rule set is followed on the rules topic by
``dustonline_stream``'s ``RuleSubscriber`` (the rules file, if any, is its snapshot: keys
before the topic is read). The subscriber is found through the ``dustonline.rule_sources``
entry point, as the CLI finds the service's commands, so this package never imports the
Kafka layer (tests/test_architecture.py).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from dustonline.config import load_config
from dustonline.rules.ruleset import RuleSet

log = logging.getLogger("dustonline.scrapy")


class RuleSource:
    """The rule set a crawl applies: fixed (a file) or live (a topic subscriber)."""

    def __init__(self, ruleset: RuleSet | None = None, subscriber: Any = None):
        self._ruleset = ruleset if ruleset is not None else RuleSet()
        self.subscriber = subscriber

    @property
    def ruleset(self) -> RuleSet:
        return self.subscriber.rules if self.subscriber is not None else self._ruleset

    def canonicalize(self, url: str) -> str:
        return self.ruleset.canonicalize(url)

    def __len__(self) -> int:
        return len(self.ruleset)

    @property
    def refused(self) -> int:
        if self.subscriber is not None:
            return sum(self.subscriber.refused.values())
        return sum(self._ruleset.refused.values())

    def close(self) -> None:
        if self.subscriber is not None:
            self.subscriber.stop()

    @classmethod
    def from_settings(cls, settings) -> RuleSource:
        """``DUSTONLINE_RULES`` (a rules file), ``DUSTONLINE_RULES_TOPIC`` (True for the
        config's ``kafka.rules_topic``, or a topic name), ``DUSTONLINE_CONFIG`` (the YAML
        config naming the broker), ``DUSTONLINE_RULES_WAIT`` (seconds to wait for the topic
        to be read to its end before the crawl starts; default 30) and
        ``DUSTONLINE_ENGINE`` (``python`` or ``re2``)."""
        path = settings.get("DUSTONLINE_RULES")
        topic = settings.get("DUSTONLINE_RULES_TOPIC")
        engine = settings.get("DUSTONLINE_ENGINE", "python")
        if not topic or topic in ("0", "false", "False"):
            if not path:
                log.warning("dustonline: neither DUSTONLINE_RULES nor DUSTONLINE_RULES_TOPIC is set; no rules apply")
                return cls(RuleSet(engine=engine))
            if not Path(path).exists():
                raise FileNotFoundError(f"DUSTONLINE_RULES: no such rules file: {path}")
            return cls(RuleSet.load(path, engine=engine))
        subscriber_cls = topic_subscriber()
        cfg = load_config(settings.get("DUSTONLINE_CONFIG"))
        name = None if topic in (True, "1", "true", "True") else str(topic)
        sub = subscriber_cls(cfg, snapshot=path, topic=name).start()
        wait = settings.getfloat("DUSTONLINE_RULES_WAIT", 30.0)
        if wait > 0 and not sub.wait_until_current(wait):
            log.warning(
                "dustonline: the rules topic was not read to its end in %.0f s; crawling with what is read", wait
            )
        return cls(subscriber=sub)


def topic_subscriber():
    """``RuleSubscriber`` from the ``dustonline.rule_sources`` entry point named ``topic``
    (registered by this distribution's pyproject.toml for dustonline_stream)."""
    from importlib.metadata import entry_points

    for ep in entry_points(group="dustonline.rule_sources"):
        if ep.name == "topic":
            return ep.load()
    raise RuntimeError(
        "DUSTONLINE_RULES_TOPIC needs the Kafka layer (dustonline_stream); reinstall dustonline with its entry points"
    )
