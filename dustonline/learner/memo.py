"""Rule outputs remembered per URL for one pass: a redundancy check (lifecycle.py) or a
re-targeting run (retarget.py) applies the same rules of a host to the same validation
URLs many times over, and a regex match costs about 1 µs where a dict lookup costs 50 ns.
A rule's output depends on the URL alone, so a memo changes no decision; it lives as
long as its pass, so its memory is that pass's."""

from __future__ import annotations

from ..rules.ruleset import CompiledRule

_UNSEEN = object()


class MemoRule(CompiledRule):
    """A compiled rule whose ``apply`` remembers its outputs (``fullmatch``, ``rule`` and
    ``ngroups`` are the rule's own)."""

    __slots__ = ("_of", "_out")

    def __init__(self, cr: CompiledRule):  # no super().__init__: nothing is compiled again
        self._of = cr
        self.rule, self.fullmatch, self.ngroups = cr.rule, cr.fullmatch, cr.ngroups
        self._out: dict[str, str | None] = {}

    def apply(self, url: str) -> str | None:
        out = self._out.get(url, _UNSEEN)
        if out is _UNSEEN:
            out = self._out[url] = self._of.apply(url)
        return out  # type: ignore[return-value]


class Memos:
    """One ``MemoRule`` per rule for a pass: the same object each time, so lists of them
    compare equal exactly when the lists of the rules do (keycheck.set_gain)."""

    __slots__ = ("_by",)

    def __init__(self) -> None:
        self._by: dict[int, MemoRule] = {}  # id() is unique: each MemoRule keeps its rule alive

    def __call__(self, cr: CompiledRule) -> MemoRule:
        m = self._by.get(id(cr))
        if m is None:
            m = self._by[id(cr)] = MemoRule(cr)
        return m
