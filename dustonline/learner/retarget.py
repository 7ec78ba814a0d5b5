"""Re-targeting: one key per page across a host's rules, although crawlers apply one rule
per URL. A rule whose pages older rules key otherwise takes their key (adopt.py), checked
on the rule set (keycheck.py); older rules never take a younger one's target, so keys a
crawler already holds stay, and no two rules chase each other."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection
from typing import cast

from ..rules.pattern import admitted
from ..rules.ruleset import ACTIVE, CompiledRule, Rule
from ..rules.urls import host_of, light_normalize, site_of_host
from .adopt import adopt
from .candidates import Cand, CandidateBook, subsumed_on
from .hosturls import HostURLs
from .keycheck import incumbent_keys, set_gain
from .lifecycle import Lifecycle, RetargetMarks
from .memo import Memos
from .records import Target


class Retargeter:
    def __init__(self, book: CandidateBook, host_urls: HostURLs, marks: RetargetMarks, lifecycle: Lifecycle):
        self.book, self.host_urls, self.marks, self.lifecycle = book, host_urls, marks, lifecycle
        self.counts = lifecycle.counts
        # the path edits of a host as crawlers apply them (online.py: the parameter rules'):
        # a rule subsumed by one of them is not tried there (Rule.subsumed_by)
        self.edits_of: Callable[[str], Collection[str]] = _no_edits

    def _urls(self, host: str) -> list[tuple[str, str]]:
        """The validation URLs a rule of ``host`` reads, as (url, cluster), as they are
        counted (counts.read_urls). Read as fetched, an ``http`` and an ``https`` URL of
        one page got two keys from one older rule, and no target could give both."""
        return list(self.counts.read_urls([host]))

    def _active(self, host: str, memos: Memos) -> list[tuple[str, CompiledRule]]:
        """The host's active rules as crawlers apply them there, in the order they try them."""
        book = self.book
        cands = [book[rid] for rid in book.on(host) if book[rid].rec.status == ACTIVE]
        edits = self.edits_of(host)
        if edits:
            cands = [c for c in cands if subsumed_on(c.rec, host) not in edits]
        cands.sort(key=lambda c: (-c.rec.pub[0], c.rec.id))  # type: ignore[index]
        return [(c.rec.id, memos(c.on(host))) for c in cands]

    def run(self) -> None:
        """Re-target the rules a change of the active rules concerns, oldest first: each
        takes the keys older rules give its pages (``_adoption``) or keeps its own, and
        is published again when that changes."""
        book, marks, age_of = self.book, self.marks, self.marks.age
        dirty, marks.targets = marks.targets, {}
        ids = {rid for h, age in dirty.items() for rid in book.on(h) if age_of(rid) >= age}
        ids.update(rid for rid in marks.rules if rid in book)
        marks.rules = set()
        queue = [age_of(rid) for rid in ids]
        heapq.heapify(queue)
        applied: dict[str, list] = {}
        memos = self.lifecycle.memos.start()

        def applied_on(h: str) -> list:
            r = applied.get(h)
            if r is None:
                r = applied[h] = self._active(h, memos)
            return r

        while queue:
            age = heapq.heappop(queue)
            rid = age[1]
            rec = book[rid].rec
            if rec.status != ACTIVE or (queue and queue[0] == age):
                continue
            target = self._adoption(book[rid], applied_on, memos)
            if target != rec.target:
                for h in set(rec.hosts):
                    applied.pop(h, None)
                self.lifecycle.set_target(rec, target)
                self.lifecycle.publish(rec, ACTIVE, retarget=False)
                # its keys changed: the younger rules of its hosts, and those that took
                # its target, are re-targeted in this pass (after it: they are younger)
                later = {o for h in rec.hosts for o in book.on(h) if age_of(o) > age}
                later.update(marks.retargeted_to(rid))
                for o in later:
                    heapq.heappush(queue, age_of(o))

    def _adoption(self, cand: Cand, applied_on, memos: Memos) -> Target | None:
        """The rule re-targeted to the keys older active rules give the dup-clusters of
        the validation URLs it decides (keycheck.py); None when it keeps its own target."""
        rid, r = cand.rec.id, memos(cand.compiled)
        age_of = self.marks.age
        age = age_of(rid)

        def learned_on(h: str) -> list:
            return [(i, r if i == rid else cr) for i, cr in applied_on(h)]

        # a page's URLs are on hosts of one site, and a rule's hosts are those of the
        # clusters it was learned from (both sides of a www or domain alias): only sites
        # where an older rule is active can give it a target
        sites = {site_of_host(h) for h in cand.rec.hosts if any(age_of(i) < age for i, _cr in applied_on(h))}
        universe = sorted(h for h in cand.rec.hosts if site_of_host(h) in sites)
        mine, held = incumbent_keys(rid, universe, learned_on, self._urls, lambda i: age_of(i) < age)
        examples: dict[str, list] = {}
        agree = True
        for url, cid in mine:
            keys = held.get(cid)
            if keys:
                key = min(keys)  # (a cluster older rules split already: one of their keys)
                by, other = keys[key]
                examples.setdefault(by, []).append((url, other))
                if agree:
                    out_ = cast(str, r.apply(url))  # mine: URLs this rule's context matches
                    agree = out_ == key or light_normalize(out_) == key
        if not examples or agree:
            return None
        # the older rule whose keys it meets most, else the next: a rule of many sites may
        # meet on one of them keys that no transformation of its context gives
        for by in sorted(examples, key=lambda b: (-len(examples[b]), b)):
            target = self._target(cand, r, by, examples[by], universe, learned_on)
            if target is not None:
                return target
        return None

    def _target(
        self, cand: Cand, r: CompiledRule, by: str, examples: list, universe: list, learned_on
    ) -> Target | None:
        """The rule taking ``by``'s keys where they meet it (``examples``: its URL, and the
        URL of the same cluster ``by`` keys), if one transformation of its context gives
        them and the rule set then keys more pairs of one cluster together, splitting none
        and merging no other."""
        rid, s = cand.rec.id, self.book[by]
        made = adopt(r, [(url, s.on(host_of(other)), other) for url, other in examples])
        if made is None or not admitted(made[0]):
            return None
        # one rule id has one context: hosts without examples keep the learned rule
        where = sorted({host_of(url) for url, _o in examples})
        target = Target(context=made[0], transformation=made[1], by=[by], hosts=where)
        if target == cand.rec.target:
            return target  # validated as a set when adopted; the rule's own counts go on
        adopted = CompiledRule(Rule(id=rid, hosts=where, context=made[0], transformation=made[1]))

        def adopted_on(h: str) -> list:
            return [(i, adopted if i == rid else cr) for i, cr in learned_on(h)] if h in where else learned_on(h)

        check = (pair for h in universe for pair in self._urls(h))
        return target if set_gain(check, learned_on, adopted_on) > 0 else None


def _no_edits(host: str) -> Collection[str]:
    return ()
