"""The candidate book: every candidate rule, indexed by host, and how each is published.

A candidate's record (``CandRec``) carries the rule as learned, its counts and its
publication state; ``Cand`` adds the compiled matcher. A re-targeted rule (retarget.py)
is published in its re-targeted form where that holds on all its hosts; where it holds
on some, those hosts get a rule of its own, ``<id>~t`` (``targeted_rule``).
"""

from __future__ import annotations

import bisect

import msgspec

from ..rules.params import LOWERCASE_PATH, SORT_QUERY
from ..rules.ruleset import ACTIVE, RETIRED, CompiledRule, Rule, rule_order
from ..state.store import Store
from .records import CandRec
from .validation import fpr

CANDIDATE, REDUNDANT = "candidate", "redundant"
TARGETED = "~t"  # id suffix of the re-targeted part of a rule (``targeted_rule``)
KV_GROUP = "kv:"  # the group of a key-value rule's candidate: parameter order, path case (kvrules.py)
KV_ORDER, KV_CASE = "o", "c"  # the kinds of kv group, each key's first field (kvrules.py)
# kv groups by kind, and the path edit that does all they do
_SUBSUMING = ((KV_GROUP + KV_ORDER + "\x1e", SORT_QUERY), (KV_GROUP + KV_CASE + "\x1e", LOWERCASE_PATH))


def kv_edit(group: str) -> str | None:
    """The path edit that does all a rule of this group does (``Rule.subsumed_by``): a
    parameter-order rule's is sort-query, a path-case rule's lowercase-path."""
    for prefix, edit in _SUBSUMING:
        if group.startswith(prefix):
            return edit
    return None


def subsumed_on(rec: CandRec, host: str) -> str | None:
    """``kv_edit`` of the rule as crawlers apply it on ``host``: a re-targeted form writes
    other keys and is subsumed by nothing."""
    t = rec.target
    return None if t is not None and host in t.hosts else kv_edit(rec.group)


class Cand:
    """A candidate rule in memory: its stored record plus the compiled matcher (the rule
    as learned, which its counts describe) and, once needed, its re-targeted form."""

    __slots__ = ("rec", "compiled", "_targeted")

    def __init__(self, rec: CandRec):
        self.rec = rec
        self.compiled = CompiledRule(as_rule(rec, learned=True))
        self._targeted: CompiledRule | None = None

    def on(self, host: str) -> CompiledRule:
        """The rule as crawlers apply it on ``host``: as learned, or re-targeted there."""
        t = self.rec.target
        if t is None or host not in t.hosts:
            return self.compiled
        if self._targeted is None:
            self._targeted = CompiledRule(
                Rule(id=self.rec.id, hosts=t.hosts, context=t.context, transformation=t.transformation)
            )
        return self._targeted


def _counts(rec: CandRec, published: bool) -> tuple:
    pub = rec.pub if published else None
    if pub is not None:
        return tuple(pub)
    return rec.nsupp, round(fpr(rec.nsupp, rec.nci), 6), rec.freq


def partial(rec: CandRec) -> bool:
    """Is the rule re-targeted on some of its hosts only?"""
    t = rec.target
    return t is not None and len(t.hosts) < len(rec.hosts)


def as_rule(rec: CandRec, published: bool = False, learned: bool = False) -> Rule:
    """The rule of a candidate record: with its live counts, or (``published``) as last
    published, which is what subscribers of the rules topic hold. Unless ``learned``, a
    re-targeted rule has the re-targeted context and transformation when that holds on
    all its hosts; when it holds on some, those hosts go to ``targeted_rule``. Support and
    fpr stay those of the learned rule: the re-targeted one never keys together URLs the
    learned one keeps apart (adopt.py)."""
    support, rate, freq = _counts(rec, published)
    hosts, context, transformation = list(rec.hosts), rec.context, rec.transformation
    t = None if learned else rec.target
    sub = kv_edit(rec.group)
    if t is not None:
        if partial(rec):
            hosts = [h for h in hosts if h not in t.hosts]
        else:
            context, transformation = t.context, t.transformation
            sub = None
    return Rule(
        id=rec.id,
        hosts=hosts,
        context=context,
        transformation=transformation,
        support=support,
        fpr=rate,
        freq=freq,
        version=rec.version,
        status=ACTIVE if rec.status == ACTIVE else RETIRED,
        updated=rec.updated,
        subsumed_by=sub or msgspec.UNSET,
    )


def targeted_rule(rec: CandRec, published: bool = False, status: str = ACTIVE) -> Rule:
    """The re-targeted part of a rule that is re-targeted on some of its hosts only: a rule
    of its own (id + TARGETED, versions in ``tver``), tried where the rule is."""
    t = rec.target
    assert t is not None
    support, rate, freq = _counts(rec, published)
    return Rule(
        id=rec.id + TARGETED,
        hosts=list(t.hosts),
        context=t.context,
        transformation=t.transformation,
        support=support,
        fpr=rate,
        freq=freq,
        version=rec.tver,
        status=status,
        updated=rec.updated,
    )


class CandidateBook:
    """Candidates by id and by host, kept in the store (``cand``), with the versions and
    count epochs of dropped ones, so a rule learned again continues its versions ("newer
    version wins" for subscribers and for the worker group's merge) and does not read
    counts its old epoch left in the read cache."""

    def __init__(self, store: Store):
        self.table = store.table("cand", type=CandRec)
        self.versions = store.table("ver")
        self.epochs = store.table("epoch")
        self._cands: dict[str, Cand] = {rid: Cand(rec) for rid, rec in self.table.items()}
        self._by_host: dict[str, list[str]] = {}
        self._indexed: dict[str, tuple[str, ...]] = {}
        for rid in sorted(self._cands):
            self._indexed[rid] = tuple(self._cands[rid].rec.hosts)
            for h in self._indexed[rid]:
                self._by_host.setdefault(h, []).append(rid)

    def __contains__(self, rid: str) -> bool:
        return rid in self._cands

    def __getitem__(self, rid: str) -> Cand:
        return self._cands[rid]

    def get(self, rid: str) -> Cand | None:
        return self._cands.get(rid)

    def __len__(self) -> int:
        return len(self._cands)

    def all(self):
        return self._cands.values()

    def on(self, host: str) -> list[str]:
        """Ids of the candidates of ``host``, sorted (do not mutate)."""
        return self._by_host.get(host, [])

    def save(self, rec: CandRec) -> None:
        self.table[rec.id] = rec

    def new(self, rid: str, **fields) -> CandRec:
        """A fresh record, continuing the versions and count epoch of an earlier one."""
        return CandRec(
            id=rid,
            version=self.versions.get(rid, 0),
            epoch=self.epochs.get(rid, 0),
            tver=self.versions.get(rid + TARGETED, 0),
            **fields,
        )

    def install(self, rec: CandRec) -> None:
        """(Re)index a record whose rule or hosts changed, and store it."""
        rid = rec.id
        self._unindex(rid)
        self._cands[rid] = Cand(rec)
        self.table[rid] = rec
        self._indexed[rid] = tuple(rec.hosts)
        for h in rec.hosts:
            bisect.insort(self._by_host.setdefault(h, []), rid)

    def _unindex(self, rid: str) -> None:
        """Remove ``rid`` from the hosts it was indexed under (records mutate in place,
        so the hosts it had are remembered apart)."""
        for h in self._indexed.pop(rid, ()):
            ids = self._by_host.get(h)
            if ids and rid in ids:
                ids.remove(rid)
                if not ids:
                    del self._by_host[h]

    def pop(self, rid: str) -> Cand | None:
        """Take a candidate out of the index (the caller retires it, then ``forget``s it)."""
        cand = self._cands.pop(rid, None)
        if cand is not None:
            self._unindex(rid)
        return cand

    def forget(self, rec: CandRec) -> None:
        """Drop the stored record, remembering its versions and count epoch."""
        rid = rec.id
        self.table.pop(rid)
        if rec.version:
            self.versions[rid] = rec.version
        self.epochs[rid] = rec.epoch
        if rec.tver:
            self.versions[rid + TARGETED] = rec.tver

    def rules(self) -> list[Rule]:
        """The active rules as last published, in the order crawlers apply them."""
        out = []
        for c in self._cands.values():
            if c.rec.status == ACTIVE:
                out.append(as_rule(c.rec, published=True))
                if partial(c.rec):
                    out.append(targeted_rule(c.rec, published=True))
        return sorted(out, key=rule_order)

    def active_count(self) -> int:
        """Active rules as published (a re-targeted part, ``<id>~t``, is a rule of its own)."""
        return sum(1 + bool(partial(c.rec)) for c in self._cands.values() if c.rec.status == ACTIVE)

    def records(self) -> list[dict]:
        return [c.rec.as_dict() for c in sorted(self._cands.values(), key=lambda c: c.rec.id)]
