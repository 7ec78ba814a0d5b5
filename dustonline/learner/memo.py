"""Rule outputs remembered per URL for one pass: a redundancy check (lifecycle.py) or a
re-targeting run (retarget.py) applies the same rules of a host to the same validation
URLs many times over, and a regex match costs about 1 µs where a dict lookup costs 50 ns.
The next passes read mostly the same rules and URLs again, so the memos are kept across
passes until they hold ``limit`` outputs, then dropped whole between two passes. A rule's
output depends on the URL alone, so a memo changes no decision."""

from __future__ import annotations

from ..rules.ruleset import CompiledRule

_UNSEEN = object()


class MemoRule(CompiledRule):
    """A compiled rule whose ``apply`` remembers its outputs (``fullmatch``, ``rule`` and
    ``ngroups`` are the rule's own)."""

    def __init__(self, cr: CompiledRule, owner: Memos):  # no super().__init__: nothing to compile
        self._of, self._owner = cr, owner
        self.rule, self.fullmatch, self.ngroups = cr.rule, cr.fullmatch, cr.ngroups
        self._out: dict[str, str | None] = {}

    def apply(self, url: str) -> str | None:
        out = self._out.get(url, _UNSEEN)
        if out is _UNSEEN:
            out = self._out[url] = self._of.apply(url)
            self._owner.size += 1
        return out  # type: ignore[return-value]


class Memos:
    """One ``MemoRule`` per rule: the same object each time, so within a pass lists of them
    compare equal exactly when the lists of the rules do (keycheck.set_gain)."""

    def __init__(self, limit: int = 1 << 62) -> None:
        self._by: dict[int, MemoRule] = {}  # id() is unique: each MemoRule keeps its rule alive
        self.size = 0  # outputs held
        self.limit = limit

    def __call__(self, cr: CompiledRule) -> MemoRule:
        m = self._by.get(id(cr))
        if m is None:
            m = self._by[id(cr)] = MemoRule(cr, self)
        return m

    def start(self) -> Memos:
        """Before a pass: drop everything once past ``limit`` outputs or rules (rules
        replaced since are held here until then)."""
        if self.size > self.limit or len(self._by) > self.limit // 64:
            self._by.clear()
            self.size = 0
        return self
