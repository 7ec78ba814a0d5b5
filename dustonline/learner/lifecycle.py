"""A candidate's life: derived (``upsert``), counted, activated when valid unless an
active rule refines it (Alg. 6), retired when it stops holding, dropped when no cluster
teaches it; each change of what crawlers hold is published once, with a higher version.

Publication also marks what re-targeting (retarget.py) must look at again: the rule, the
younger active rules of its hosts, and the rules that took its target.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..rules.ruleset import ACTIVE, RETIRED
from ..rules.urls import host_of
from .candidates import CANDIDATE, KV_GROUP, REDUNDANT, CandidateBook, as_rule, partial, targeted_rule
from .changes import RuleChanges
from .counts import ValidationCounts, changed_literals
from .hosturls import HostURLs
from .keys import KeysBefore
from .memo import Memos
from .records import Candidate, CandRec, Stats, Target
from .validation import refines


class Clock:
    """Event time as the learner has seen it (the latest event timestamp)."""

    __slots__ = ("now",)

    def __init__(self, now: float = 0.0):
        self.now = now


class RetargetMarks:
    """What re-targeting must look at next: hosts whose active rules changed, each with the
    age (``age``) of the oldest rule the change concerns (older rules take no target from
    it), the rules whose own change it is, and the rules re-targeted now."""

    def __init__(self, book: CandidateBook, dirty_targets: Iterable = (), dirty_rules: Iterable[str] = ()):
        self.book = book
        self.targets: dict[str, tuple] = {h: (since, rid) for h, since, rid in dirty_targets}
        self.rules: set[str] = set(dirty_rules)
        self.retargeted: set[str] = {c.rec.id for c in book.all() if c.rec.target is not None}

    def __bool__(self) -> bool:
        return bool(self.targets or self.rules)

    def age(self, rid: str) -> tuple:
        """Incumbency: rules active longer come first (ties by id)."""
        return (self.book[rid].rec.since or 0, rid)

    def retargeted_to(self, rid: str) -> list[str]:
        """The rules that took ``rid``'s target (a rule being dropped is no longer one)."""
        book = self.book
        return [o for o in self.retargeted if o in book and rid in book[o].rec.target.by]  # type: ignore[union-attr]

    def dirty(self, hosts, age: tuple) -> None:
        """Rules of ``hosts`` as old as ``age`` or younger are to be re-targeted."""
        d = self.targets
        for h in hosts:
            if h not in d or age < d[h]:
                d[h] = age

    def state(self) -> tuple[list, list]:
        return sorted([h, *age] for h, age in self.targets.items()), sorted(self.rules)


class Lifecycle:
    def __init__(
        self,
        book: CandidateBook,
        counts: ValidationCounts,
        host_urls: HostURLs,
        marks: RetargetMarks,
        changes: RuleChanges,
        clock: Clock,
        stats: Stats,
    ):
        self.book, self.counts, self.host_urls = book, counts, host_urls
        self.marks, self.changes, self.clock, self.stats = marks, changes, clock, stats
        # rule outputs for redundancy checks and re-targeting, as many as URLs held (memo.py)
        self.memos = Memos(host_urls.cap)
        # the incumbency of rules that stopped being active during this step (end_step)
        self._left: dict[str, int | None] = {}

    # ------------------------------------------------------------------ derivation
    def upsert(self, c: Candidate, sid: str) -> None:
        book, counts = self.book, self.counts
        cur = book.get(c.id)
        if cur is None:
            rec = book.new(
                c.id,
                group=sid,
                context=c.context,
                transformation=c.transformation,
                hosts=list(c.hosts),
                freq=c.freq,
                updated=self.clock.now,
            )
            book.install(rec)
            counts.backfill(c.id, rec.hosts)
            self.evaluate(c.id)
            return
        rec = cur.rec
        rec.freq = c.freq
        if rec.context != c.context or rec.transformation != c.transformation:
            # the rule itself changed: its counts no longer describe it
            self.set_target(rec, None)
            changed = None
            if rec.transformation == c.transformation and not counts.rekey_pending():
                changed = changed_literals(rec.context, c.context)
            if changed is None:
                counts.reset(rec)
                rec.context, rec.transformation, rec.hosts = c.context, c.transformation, list(c.hosts)
                book.install(rec)
                counts.backfill(c.id, rec.hosts)
            else:  # only values of an alternation came or went: the URLs holding them move
                old = book[c.id]
                rec.context = c.context
                if set(c.hosts) == set(rec.hosts):
                    rec.hosts = list(c.hosts)
                book.install(rec)
                counts.recount_changed(c.id, old, changed)
                if set(c.hosts) != set(rec.hosts):
                    self._rehost(rec, c.hosts)
            self.evaluate(c.id, changed=True)
        elif set(c.hosts) != set(rec.hosts):
            added = sorted(set(c.hosts) - set(rec.hosts))
            removed = sorted(set(rec.hosts) - set(c.hosts))
            t = rec.target
            if t is not None and removed:  # the target holds where it did; new hosts: see publish
                kept = [h for h in t.hosts if h not in removed]
                self.set_target(rec, msgspec.structs.replace(t, hosts=kept) if kept else None, hosts=list(c.hosts))
            self._rehost(rec, c.hosts)
            self.evaluate(c.id, changed=True, moved=added)
        else:
            book.save(rec)

    def _rehost(self, rec: CandRec, hosts) -> None:
        """The rule counts the URLs of ``hosts`` from now on. The URLs it counts are its
        hosts' and those of the hosts moving to them: a moved host joining (or leaving) a
        rule of its target was counted (and stays counted) through the target, and is not
        counted a second time."""
        counts = self.counts
        was, now = counts.hosts_of(rec.hosts), counts.hosts_of(hosts)
        counts.backfill(rec.id, [h for h in was if h not in now], -1, expand=False)  # while it still applies
        rec.hosts = list(hosts)
        self.book.install(rec)
        counts.backfill(rec.id, [h for h in now if h not in was], expand=False)

    def drop(self, rid: str) -> None:
        cand = self.book.pop(rid)
        if cand is None:
            return
        rec = cand.rec
        self.counts.reset(rec)
        was_active = rec.status == ACTIVE
        if was_active:
            self.publish(rec, RETIRED)
        self.book.forget(rec)
        if was_active:
            self.recheck_redundant(rec.hosts)

    def count_url(self, url: str, host: str, cid: str, delta: int, target: str | None = None) -> None:
        """A validation URL came (+1) or went (-1): every candidate of its host counts it,
        and those of the host it moves to (``target``)."""
        book, count = self.book, self.counts.count_one
        rids = book.on(host) if not target else sorted(set(book.on(host)) | set(book.on(target)))
        if not rids:
            return
        prepare = self.counts.prepare
        prepared = prepare(url, host) if prepare else url
        for rid in list(rids):
            if count(book[rid], url, cid, delta, prepared):
                self.evaluate(rid)

    def recount(self, hosts, before: KeysBefore | None = None) -> None:
        """The URLs of ``hosts`` read otherwise now (their names changed, or a move): each
        candidate counting them counts them again. With ``before`` (how they were keyed
        until now, counts.rekey) only those URLs move; without, each candidate is counted
        again from all its stored URLs."""
        book, counts = self.book, self.counts
        changed = set(hosts)
        for rid in sorted({rid for h in hosts for rid in book.on(h)}):
            if before is not None:
                counts.rekey(rid, changed, before)
            else:
                rec = book[rid].rec
                counts.reset(rec)
                counts.backfill(rid, rec.hosts)
            self.evaluate(rid)

    # ------------------------------------------------------------------ status
    def evaluate(self, rid: str, changed: bool = False, moved: list[str] | None = None) -> None:
        rec = self.book[rid].rec
        valid = self.counts.valid(rec)
        status = rec.status
        if status == ACTIVE and not valid:
            self.publish(rec, CANDIDATE)
            self.recheck_redundant(rec.hosts)
        elif status == CANDIDATE and valid:
            if self._redundant(rid):
                rec.status = REDUNDANT
            else:
                self.publish(rec, ACTIVE)
        elif status == REDUNDANT and not valid:
            rec.status = CANDIDATE
        elif status == ACTIVE and changed:
            self.publish(rec, ACTIVE, moved=moved)
        self.book.save(rec)

    def publish(self, rec: CandRec, status: str, retarget: bool = True, moved: list[str] | None = None) -> None:
        """Publish a change of the rule; unless it is a re-targeting itself, the rule and
        the younger active rules of its hosts, and rules re-targeted to it, are re-targeted
        next flush. When only its hosts changed, only the hosts it ``moved`` to are (where
        it left, only the rules that took its target are)."""
        fresh = status == ACTIVE and rec.status != ACTIVE
        if fresh:
            # incumbency, for re-targeting; a rule retired and activated again within one
            # step was active all along for subscribers (changes.py) and keeps it, or a
            # younger rule's keys would replace the keys crawlers hold for its pages
            rec.since = self._left.pop(rec.id, self.stats.events)
        elif rec.status == ACTIVE and status != ACTIVE:
            self._left.setdefault(rec.id, rec.since)
        if retarget:
            rid, marks = rec.id, self.marks
            if moved is None:
                marks.rules.add(rid)
            marks.dirty(rec.hosts if moved is None else moved, (rec.since or 0, rid))
            for other in marks.retargeted_to(rid):
                marks.dirty(self.book[other].rec.hosts, marks.age(other))
        if status != ACTIVE:
            self.set_target(rec, None)
        rec.status = status
        rec.version += 1
        rec.updated = self.clock.now
        # a re-targeting keeps the published counts: they order the rules, and a new
        # target is no new evidence
        r = as_rule(rec, published=not retarget)
        rec.pub = [r.support, r.fpr, r.freq]
        self.book.save(rec)
        self.changes.add(r, fresh)
        if status == ACTIVE and partial(rec):
            rec.tver += 1
            self.changes.add(targeted_rule(rec, published=True), fresh)

    def end_step(self) -> None:
        """The step's changes went out: a rule retired in it was retired for subscribers."""
        self._left.clear()

    def set_target(self, rec: CandRec, target: Target | None, hosts: list[str] | None = None) -> None:
        """Set or clear the rule's re-targeted form (for its ``hosts`` to come, if they
        change); a re-targeted part that goes away is published retired (the rule itself
        is published by the caller)."""
        rid = rec.id
        hosts = rec.hosts if hosts is None else hosts
        if partial(rec) and (target is None or len(target.hosts) == len(hosts)):
            rec.tver += 1
            rec.updated = self.clock.now
            self.changes.add(targeted_rule(rec, status=RETIRED))
        rec.target = target
        if target is None:
            self.marks.retargeted.discard(rid)
        else:
            self.marks.retargeted.add(rid)
        cand = self.book.get(rid)
        if cand is not None:
            cand._targeted = None

    # ------------------------------------------------------------------ redundancy (Alg. 6)
    def _validation_urls(self, hosts, as_fetched: bool = False) -> Iterable[tuple[str, str]]:
        """(url, host) as RuleSet hands them to the hosts' rewrite rules, as they are
        counted: moved to the host they move to, its name rules applied; or as fetched."""
        if as_fetched or self.counts.prepare is None:
            for h in hosts:
                for url in self.host_urls.of(h):
                    yield url, h
            return
        for url, _cid in self.counts.read_urls(hosts):
            yield url, host_of(url)

    def _refines(self, r1: str, r2: str, memos: Memos) -> bool:
        c1, c2 = self.book[r1], self.book[r2]
        # a key-value rule (parameter order, path case) is judged on URLs as fetched: its
        # regex orders the query for crawlers whose export cannot sort it (Heritrix, Nutch,
        # StormCrawler), where RuleSet's sort-query edit leaves it nothing to do
        kv = c1.rec.group.startswith(KV_GROUP) or c2.rec.group.startswith(KV_GROUP)
        urls = self._validation_urls(c1.rec.hosts, as_fetched=kv)
        return refines(memos(c1.compiled), memos(c2.compiled), urls)

    def _preferred(self, a: str, b: str) -> bool:
        """Between rules of equal support: the more general (shorter context), then lower id."""
        ra, rb = self.book[a].rec, self.book[b].rec
        return (len(ra.context), a) < (len(rb.context), b)

    def _redundant(self, rid: str, memos: Memos | None = None) -> bool:
        """Is ``rid`` refined by an active rule? Active rules it makes redundant are retired.
        Each refinement test reads every URL of the rules' hosts: ``memos`` applies each
        rule once per URL for all of them."""
        book = self.book
        memos = self.memos.start() if memos is None else memos
        hosts = book[rid].rec.hosts
        others = sorted({o for h in hosts for o in book.on(h) if o != rid and book[o].rec.status == ACTIVE})
        sup: dict[str, bool] = {}  # refines(o, rid), asked once: it is pure
        for o in others:
            if self._refines(rid, o, memos):
                s = sup[o] = self._refines(o, rid, memos)
                if not s or not self._preferred(rid, o):
                    return True
        for o in others:
            if sup[o] if o in sup else self._refines(o, rid, memos):
                self.publish(book[o].rec, REDUNDANT)
        return False

    def recheck_redundant(self, hosts) -> None:
        """A rule left the active set: rules it made redundant may be needed again."""
        book, memos = self.book, self.memos.start()
        for rid in sorted({o for h in hosts for o in book.on(h)}):
            rec = book[rid].rec
            if rec.status == REDUNDANT and self.counts.valid(rec) and not self._redundant(rid, memos):
                self.publish(rec, ACTIVE)
