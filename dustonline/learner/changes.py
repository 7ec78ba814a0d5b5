"""The published rule changes of one step, collected in one place: every stage that
publishes adds here, and the coordinator hands the step's changes to its caller.

A step publishes each rule once, in its final state: a rule activated and changed again
within the step goes out once, and a rule activated and retired by the same evidence
(the same step) does not go out at all, so subscribers never see it flap."""

from __future__ import annotations

from ..rules.ruleset import RETIRED, Rule


class RuleChanges:
    __slots__ = ("_out",)

    def __init__(self) -> None:
        self._out: list[tuple[Rule, bool]] = []

    def add(self, rule: Rule, fresh: bool = False) -> None:
        """``fresh``: the rule was not active (as subscribers hold it) before this change."""
        self._out.append((rule, fresh))

    def take(self) -> list[Rule]:
        """The step's changes, one final record per rule, in the order of those records."""
        if not self._out:  # most steps publish nothing
            return []
        last: dict[str, tuple[int, Rule]] = {}
        fresh: set[str] = set()
        for i, (rule, new) in enumerate(self._out):
            if rule.id not in last and new:
                fresh.add(rule.id)
            last[rule.id] = (i, rule)
        self._out = []
        return [r for _, r in sorted(last.values(), key=lambda x: x[0]) if not (r.status == RETIRED and r.id in fresh)]
