"""The current rule set, rebuilt from a stream of rule updates (the rules topic).

The learner publishes every rule change as the rule record itself, keyed by rule id: an
``active`` record adds or replaces, a ``retired`` one removes, and a null value (a
tombstone, sent after a retirement so that compaction can drop the id) forgets it.
Versions of an id only grow, also across a retirement and a later return. Records with a
version at or below the one held are ignored, which makes replays and duplicate
deliveries harmless. No Kafka here: the
subscriber (stream/subscriber.py) feeds it keys and values, a Java crawler can do the
same with the same three cases.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from .ruleset import ACTIVE, CompiledRule, Rule, RuleError, RuleSet, check_format

_decode = msgspec.json.Decoder(Rule).decode


class RuleBook:
    __slots__ = ("_rules", "_compiled", "updates", "refused")

    def __init__(self, rules: Iterable[Rule] = ()):
        """``rules`` (a snapshot) that are refused are skipped and counted."""
        self._rules: dict[str, Rule] = {}  # newest record per id, retired ones included
        self._compiled: dict[str, CompiledRule] = {}
        self.updates = 0
        self.refused: dict[str, int] = {}  # records refused, by reason (RuleError.reason)
        for r in rules:
            try:
                self.update(r)
            except RuleError as e:
                self._count(e.reason)  # the snapshot's other rules still load

    def update(self, rule: Rule) -> bool:
        """Apply one record; True when it changed the active set or a version. A record
        outside the admitted grammar raises RuleError and changes nothing: the id keeps
        the version held before; so does a record of an unknown format version, retired
        ones included (``check_format``)."""
        check_format(rule)
        cur = self._rules.get(rule.id)
        if cur is not None and cur.version >= rule.version:
            return False
        compiled = rule.compile(check=True) if rule.status == ACTIVE else None
        self._rules[rule.id] = rule
        if compiled is not None:
            self._compiled[rule.id] = compiled
        else:
            self._compiled.pop(rule.id, None)
        self.updates += 1
        return True

    def _count(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1

    def apply(self, key: bytes | str | None, value: bytes | None) -> bool:
        """One topic message. Raises RuleError (counted in ``refused``) for a message
        that is not an admitted rule record."""
        try:
            return self._apply(key, value)
        except RuleError as e:
            self._count(e.reason)
            raise

    def _apply(self, key: bytes | str | None, value: bytes | None) -> bool:
        if value is None:
            try:
                rid = key.decode() if isinstance(key, bytes) else key
            except UnicodeDecodeError:
                raise RuleError(f"tombstone key {key!r} is not UTF-8", "bad-key") from None
            if rid is None:
                raise RuleError("tombstone without a key", "bad-key")
            gone = self._rules.pop(rid, None) is not None
            self._compiled.pop(rid, None)
            self.updates += gone
            return gone
        try:
            rule = _decode(value)
        except msgspec.DecodeError as e:
            raise RuleError(f"not a rule record: {e}", "not-a-rule") from None
        if key is not None and (key.decode(errors="replace") if isinstance(key, bytes) else key) != rule.id:
            raise RuleError(f"message key {key!r} is not the rule's id {rule.id!r}", "bad-key", rule.id)
        return self.update(rule)

    def ruleset(self) -> RuleSet:
        """A new RuleSet of the active rules (rules already compiled are reused)."""
        return RuleSet.from_compiled(self._compiled.values())

    def rules(self, retired: bool = False) -> list[Rule]:
        return sorted((r for r in self._rules.values() if retired or r.status == ACTIVE), key=lambda r: r.id)

    def __len__(self) -> int:
        return len(self._compiled)
