"""What every learner offers, as river's estimators do: ``learn_one``, ``learn_many``,
``rules``; evaluation and the CLI use nothing else (besides the optional hooks below)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from ..events.event import FetchEvent
from ..rules.ruleset import Rule


@runtime_checkable
class Learner(Protocol):
    def learn_one(self, event: FetchEvent) -> list[Rule]:
        """Learn one fetch; returns the rule changes it caused (possibly none)."""
        ...

    def learn_many(self, events: Iterable[FetchEvent]) -> list[Rule]:
        """Learn a batch, then derive rules from all of it; returns the rule changes."""
        ...

    def flush(self) -> list[Rule]:
        """Derive rules from everything learned so far; returns the rule changes."""
        ...

    def rules(self) -> list[Rule]:
        """The active rule set, in the order crawlers apply it."""
        ...

    def summary(self) -> dict:
        """Counters for a run's report ({} when a learner has none)."""
        ...

    def close(self) -> None:
        """Release resources (stores, temporary directories)."""
        ...


class LearnerBase:
    """Defaults for the protocol's batch and housekeeping methods."""

    def learn_one(self, event: FetchEvent) -> list[Rule]:
        raise NotImplementedError

    def flush(self) -> list[Rule]:
        return []

    def learn_many(self, events: Iterable[FetchEvent]) -> list[Rule]:
        out: list[Rule] = []
        for ev in events:
            out.extend(self.learn_one(ev))
        out.extend(self.flush())
        return out

    def summary(self) -> dict:
        return {}

    def close(self) -> None:
        pass
