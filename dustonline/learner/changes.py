"""The published rule changes of one step, collected in one place: every stage that
publishes appends here, and the coordinator hands the batch to its caller."""

from __future__ import annotations

from ..rules.ruleset import Rule


class RuleChanges:
    __slots__ = ("_out",)

    def __init__(self) -> None:
        self._out: list[Rule] = []

    def add(self, rule: Rule) -> None:
        self._out.append(rule)

    def take(self) -> list[Rule]:
        """The changes since the last take, in publication order."""
        out, self._out = self._out, []
        return out
