"""A batch learner (``fit(events, config) -> [Rule]``) behind the ``Learner`` protocol
(learner/protocol.py): ``learn_one`` buffers the event and changes nothing; ``flush``
fits on everything buffered so far and returns the difference from the previous fit as
rule changes, as the online learner publishes them: rules new or changed are published
active, rules gone are published retired, each with a higher version than its id had.

``rules()`` is the current fit's active rule set in the order crawlers apply it, one
record per id (the last active one of the fit, as ``RuleSet`` takes them), so a crawler
that applies the changes by newest version wins (``RuleBook``) holds exactly ``rules()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from msgspec.structs import replace

from ..config import Config
from ..events.event import FetchEvent
from ..learner.protocol import LearnerBase
from ..rules.ruleset import ACTIVE, RETIRED, Rule, rule_order

Fit = Callable[[list[FetchEvent], Config], Iterable[Rule]]


class RefitLearner(LearnerBase):
    """``fit`` refitted on the whole buffer at each ``flush`` (not at all when nothing
    was learned since the last one)."""

    def __init__(self, fit: Fit, config: Config | None = None):
        self.fit = fit
        self.cfg = config or Config().check()
        self._events: list[FetchEvent] = []
        self._fitted_at = 0  # buffer length at the last fit
        self._current: dict[str, Rule] = {}  # id -> rule as published, active ones
        self._versions: dict[str, int] = {}  # id -> last published version, retired ids included
        self._fits = 0

    def learn_one(self, event: FetchEvent) -> list[Rule]:
        self._events.append(event)
        return []

    def learn_many(self, events: Iterable[FetchEvent]) -> list[Rule]:
        self._events.extend(events)
        return self.flush()

    def flush(self) -> list[Rule]:
        if self._fitted_at == len(self._events) and self._fits:
            return []
        fitted: dict[str, Rule] = {}
        for r in self.fit(list(self._events), self.cfg):
            if r.status == ACTIVE:
                fitted[r.id] = r
        self._fitted_at = len(self._events)
        self._fits += 1
        out: list[Rule] = []
        for r in sorted(fitted.values(), key=rule_order):
            rid = r.id
            cur = self._current.get(rid)
            if cur is not None and replace(cur, version=r.version) == r:
                fitted[rid] = cur  # unchanged: keeps the version it was published with
                continue
            published = replace(r, version=max(self._versions.get(rid, 0) + 1, r.version))
            self._versions[rid] = published.version
            fitted[rid] = published
            out.append(published)
        for rid in sorted(self._current.keys() - fitted.keys()):
            gone = replace(self._current[rid], status=RETIRED, version=self._versions[rid] + 1)
            self._versions[rid] = gone.version
            out.append(gone)
        self._current = fitted
        return out

    def rules(self) -> list[Rule]:
        return sorted(self._current.values(), key=rule_order)

    def summary(self) -> dict:
        return {"events": len(self._events), "fits": self._fits, "active_rules": len(self._current)}

    def close(self) -> None:
        self._events = []
