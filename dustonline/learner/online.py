"""The online learner: ``OnlineLearner(config, store).learn_one(event)``.

A short coordinator over stages that each do one job. Per event, in order (docs/DESIGN.md §3):
1. a URL seen before only refreshes its last-seen time (window.py);
2. a new URL joins a dup-cluster (clusters.py) and, while the cluster has fewer than K
   sampled URLs, its sample; at the next derivation the sample is aligned (DustLin, in
   the order the URLs came) as the host's rules then read it, and the cluster's rule
   contribution is replaced in its shape group (induction.py, generalize.py); a
   redirect's source (same site) joins its target's cluster the same way, when the
   target is known, else from a pending table when it arrives (clusters.py);
3. the group's candidates (freq >= min_freq) are diffed against the stored ones
   (candidates.py): new or changed candidates are (re)validated by back-filling counts
   from the stored URLs of their hosts (counts.py);
4. if the URL's cluster is a validation cluster, every candidate of its host counts it:
   a canonical form going from n to n+1 URLs adds n pairs to Nsupp, and n' to Nci when
   n' of those URLs share its cluster (DustLin-MR's reduce, kept as running sums);
5. rules whose validity changed are activated (unless redundant) or retired
   (lifecycle.py), each change collected once (changes.py);
6. when event time has moved past the next sweep, URLs out of the window or over their
   site's cap are evicted and every count above is decremented: rules that stop holding
   are retired (window.py);
7. with derivation, the active rules of hosts whose active rules changed are re-targeted:
   a rule whose pages older rules key otherwise takes their key, so a page's URLs get
   one key although crawlers apply one rule per URL (retarget.py).

Parameter order and letter case, which alignment cannot express, come in through the
hooks of kvrules.py at steps 2, 3, 4 and 6, as candidates of the same machinery. What a
page never depends on (query parameters, the scheme, a host pair, path edits) is learned
one name at a time beside all this (params.py): evidence at step 2, counter-evidence at
steps 4 and 6, rules crawlers apply first. With ``learning.prepared``, steps 2-4 read
URLs as crawlers hand them to rewrite rules, after those names; when a host's names
change, its URLs move to their new keys in the counts and its clusters are derived again
(``_recount``).

All state is in the store, so a worker that restarts from it continues exactly.
"""

from __future__ import annotations

from ..config import Config
from ..events.event import FetchEvent
from ..rules.ruleset import Rule, RuleSet, rule_order
from ..rules.urls import host_of, site_of_host
from ..state.store import Store, memory_store
from . import holdout as split
from .candidates import CandidateBook
from .changes import RuleChanges
from .clusters import ClusterIndex, PendingRedirects, url_key
from .counts import ValidationCounts
from .hosturls import HostURLs
from .induction import Induction
from .kvrules import KVRules
from .lifecycle import Clock, Lifecycle, RetargetMarks
from .params import ParamRules
from .protocol import LearnerBase
from .records import ClusterRec, LearnerMeta, URLRec
from .retarget import Retargeter
from .shared import BITS, CHECKS, CLASSES, MEMBERS, VALUES, Counts
from .window import Window


class OnlineLearner(LearnerBase):
    def __init__(self, config: Config | None = None, store: Store | None = None):
        self.cfg = config or Config().check()
        self.store = s = (
            store if store is not None else memory_store(self.cfg.storage.cache_entries, self.cfg.storage.cache_mib)
        )
        L, C = self.cfg.learning, self.cfg.clustering
        self.meta = s.table("meta", type=LearnerMeta)
        m = self.meta.get("learner") or LearnerMeta()
        self.clock = Clock(m.clock)
        self.next_sweep: float | None = m.next_sweep
        self.stats = m.stats
        self.window = Window(s, self.cfg.window, m.logs)
        self.host_urls = HostURLs(self.window.urls, s.cache_entries)  # a shard's store has its share
        self.clusters = s.table("cluster", type=ClusterRec, filtered=True)
        self.index = ClusterIndex(
            s,
            C.simhash_distance,
            C.canonical_hints,
            urls=self.window.urls,
            clusters=self.clusters,
            bucket_seconds=self.cfg.window.sweep_every,
            log=m.logs.get("simhash"),
        )
        self.redirects = PendingRedirects(s)
        self.changes = RuleChanges()
        self.book = CandidateBook(s)
        self.counts = ValidationCounts(s, self.book, self.host_urls, L.min_freq, L.min_supp, L.fpr_max)
        self.marks = RetargetMarks(self.book, m.dirty_targets, m.dirty_rules)
        self.lifecycle = Lifecycle(
            self.book, self.counts, self.host_urls, self.marks, self.changes, self.clock, self.stats
        )
        self.retargeter = Retargeter(self.book, self.host_urls, self.marks, self.lifecycle)
        self.params = ParamRules(s, self.host_urls, self.changes, self.clock, L.min_freq, L.card_set, L.confidence)
        self.retargeter.edits_of = self.params.edits_of
        if L.prepared:  # rewrite rules are validated on URLs as RuleSet hands them over
            self.counts.prepare = self.params.prepared
            self.counts.members = lambda host: self.params.members.get(host) or []
            self.counts.rekey_pending = lambda: bool(self.params.renamed)
            self.params.count_seq = lambda: self.counts.seq
        dirty_groups = set(m.dirty_groups)
        self.kv = KVRules(
            s, self.book, self.lifecycle, self.counts, dirty_groups, card_set=L.card_set, min_freq=L.min_freq
        )
        self.induction = Induction(
            s,
            self.clusters,
            self.lifecycle,
            self.kv,
            min_freq=L.min_freq,
            card_set=L.card_set,
            max_noise=L.max_noise,
            generalize=L.generalize,
            dirty_clusters=set(m.dirty_clusters),
            dirty_groups=dirty_groups,
            prepare=self.params.prepared if L.prepared else None,
        )

    # ------------------------------------------------------------------ API
    def learn_one(self, ev: FetchEvent) -> list[Rule]:
        """Learn from one fetch; returns the published rule changes it caused (active or
        retired rules, each with a higher version than before)."""
        st = self.stats
        st.events += 1
        if ev.ts > self.clock.now:
            self.clock.now = ev.ts
        if self.next_sweep is None:
            self.next_sweep = self.clock.now + self.cfg.window.sweep_every
        if ev.teaches:
            self._learn(ev)
        else:
            st.ignored += 1
        if ev.redirect is not None or ev.redirected_from is not None:
            for src, dst in ev.redirect_pairs:
                self._redirect(src, dst, ev.ts)
        if self.clock.now >= self.next_sweep:
            self._sweep()
        self._recount()
        if st.events % self.cfg.learning.refresh_every == 0:
            self._derive()
        return self._take()

    def _recount(self) -> None:
        """Hosts whose names or moves changed during this event: the rewrite rules that
        count their URLs count them again, as RuleSet now hands them over."""
        renamed, before = self.params.renamed, self.params.take_before()
        if not renamed or self.counts.prepare is None:
            renamed.clear()
            return
        moves, members = self.params.moves, self.params.members
        hosts: set[str] = set()
        for h in renamed:
            hosts.add(h)
            if moves.get(h):
                hosts.add(moves[h])
            hosts.update(members.get(h) or ())
        renamed.clear()
        # when nothing was counted since the first change, every count of these hosts'
        # URLs was made under the keys before it, and moves from there
        self.lifecycle.recount(sorted(hosts), before if before is not None and before.seq == self.counts.seq else None)
        # and what their clusters teach is derived again from their URLs as now prepared
        dirty = self.induction.dirty_clusters
        for h in hosts:
            dirty.update(self.host_urls.of(h).values())

    def flush(self) -> list[Rule]:
        """Derive rules from everything learned so far; returns the rule changes.

        Rule derivation is debounced: a changed cluster re-derives its rule, and a changed
        group its candidates, once per ``learning.refresh_every`` events (1 = every event).
        Call this at the end of a stream; the schedule depends only on the event count,
        so replays and recoveries derive at the same points."""
        self._derive()
        return self._take()

    def shared_counts(self) -> Counts:
        """What this learner counted that spans sites (shared.py), for a worker group to
        pool: transfer classes, clusters per rule shape, validation counts per rule, and
        what rendering a rule of many sites reads."""
        out: Counts = {}
        for cls, c in self.params.transfer.own_counts().items():
            out[CLASSES + cls] = c
        members, views = self.induction.shared()
        for key, n in members.items():
            out[MEMBERS + key] = (n,)
        for key, v in views.items():
            out[(BITS if key.partition("\x00")[2][0] == "b" else VALUES) + key] = (v,)
        for rid, checks in self.counts.own().items():
            out[CHECKS + rid] = checks
        return out

    def pool(self, others: Counts, gone: list[str] | None = None) -> list[Rule]:
        """The other partitions' ``shared_counts``, combined (shared.py ``others_of``):
        names they prove are adopted by this learner's sites that were waiting for them;
        candidates count their clusters and validation pairs, and render with their
        values. Returns the rule changes; ``flush`` derives what follows.

        With ``gone``, ``others`` holds what changed since the last adoption and ``gone``
        the names no longer there (shards.py): every class, and every name of a shape
        group with a change, as adopting all would read them; what stood is not read
        again from the store."""
        classes, members, views, checks = {}, {}, {}, {}
        for key, c in others.items():
            kind, name = key[:2], key[2:]
            if len(c) < (4 if kind == CHECKS else 2 if kind == CLASSES else 1):
                continue  # not what shared_counts writes: a marker some other producer made
            if kind == CLASSES:
                classes[name] = (c[0], c[1])
            elif kind == MEMBERS:
                members[name] = c[0]
            elif kind in (BITS, VALUES):
                views[name] = c[0]
            elif kind == CHECKS:
                checks[name] = (c[0], c[1], c[2], c[3])
        self.params.pool(classes)
        if gone is None:
            self.induction.pool(members, views)
            changed = self.counts.pool(checks)
        else:
            sids = set()
            gone_checks = []
            for key in [*others, *gone]:
                kind = key[:2]
                if kind == CHECKS:
                    if key in others:
                        continue
                    gone_checks.append(key[2:])
                elif kind != CLASSES:  # a shape group's member, value or bits
                    sids.add(key[2:].partition("\x00")[0])
            self.induction.pool(members, views, sids)
            changed = self.counts.pool(checks, gone_checks)
        for rid in changed:
            if rid in self.book:
                self.lifecycle.evaluate(rid)
        self._recount()
        return self._take()

    def sweep(self) -> list[Rule]:
        """Evict what left the window now (``learn_one`` does this on schedule)."""
        self._sweep()
        self._recount()
        return self._take()

    def take_site(self, site: str) -> tuple[list[FetchEvent], list[Rule]]:
        """Hand over registered domain ``site``: its URLs as this learner holds them, one
        fetch each in arrival order (last seen, with a digest of its cluster, so that
        they meet again, and the other shard's URLs of the same contents), then let them
        go as the window lets old URLs go, and derive what follows. The site learns on
        another shard from now on (joins.py). Returns (the fetches, the rule changes)."""
        held = self.window.held(site)
        fetches = []
        for _seq, ukey, rec in held:
            cl = self.clusters.get(rec.cluster)
            digest = cl.digests[0] if cl is not None and cl.digests else f"cluster:{rec.cluster}"
            fetches.append(FetchEvent(url=ukey.split("\x00", 1)[1], ts=rec.seen, digest=digest))
        for _seq, ukey, rec in held:  # each URL once: evicting one leaves the others' records as they are
            self._evict(ukey, rec)
        self._recount()
        self._derive()
        return fetches, self._take()

    def _take(self) -> list[Rule]:
        out = self.changes.take()
        self.lifecycle.end_step()
        self.stats.rule_changes += len(out)
        return out

    def _derive(self) -> None:
        self.induction.flush()
        if self.marks:  # targets of the rule set as now derived
            self.retargeter.run()

    @property
    def derivation_pending(self) -> bool:
        """Changes learned whose rules are not derived yet (``flush`` would derive them)."""
        return self.induction.pending or bool(self.marks)

    def rules(self) -> list[Rule]:
        """The active rule set, ordered as crawlers apply it: each rule as last published
        (support, fpr and freq at its last change), so a file written from here and a
        rule set built from the published changes (the rules topic) are the same."""
        return sorted(self.book.rules() + self.params.rules(), key=rule_order)

    def ruleset(self) -> RuleSet:
        return RuleSet(self.rules())

    def candidates(self) -> list[dict]:
        """Every candidate's record, by id (for inspection and tests)."""
        return self.book.records()

    def summary(self) -> dict:
        """Counters and sizes; ``active_rules`` counts the rules as published (a
        re-targeted part, ``<id>~t``, is a rule of its own), as ``rules()`` does."""
        st = self.stats
        return {
            **{f: getattr(st, f) for f in st.__struct_fields__},
            "clusters": st.new_clusters - st.evicted_clusters,
            "urls": st.new_urls - st.evicted_urls,
            "candidates": len(self.book),
            "active_rules": self.book.active_count() + len(self.params.rules()),
        }

    def close(self) -> None:
        """Close the store (a temporary store is removed)."""
        self.store.close()

    def checkpoint(self) -> None:
        """Make all state durable (call before exit; the CLI does)."""
        self.window.save()  # first: saving closes chunks, and the logs' state says which
        self.index.save()
        targets, rules = self.marks.state()
        self.meta["learner"] = LearnerMeta(
            clock=self.clock.now,
            next_sweep=self.next_sweep,
            stats=self.stats,
            dirty_clusters=sorted(self.induction.dirty_clusters),
            dirty_groups=sorted(self.induction.dirty_groups),
            dirty_targets=targets,
            dirty_rules=rules,
            logs={**self.window.logs_state(), "simhash": self.index.log_state()},
        )
        self.store.flush()

    # ------------------------------------------------------------------ learning
    def _learn(self, ev: FetchEvent) -> None:
        host = host_of(ev.url)
        ukey = url_key(host, ev.url)
        st = self.stats
        if self.window.refresh(ukey, ev.ts):
            st.refreshed += 1
            return
        self._add_url(ev.url, host, ukey, self.index.assign(ev), ev.ts, ev.digest)

    def _add_url(self, url: str, host: str, ukey: str, cid: str, ts: float, digest: str | None = None) -> None:
        """A URL new to the window joins cluster ``cid``: a fetch's URL, or a redirect's
        source, which is a duplicate of its target as much as a second fetch of the same
        content would be. Sources that were waiting for this URL join after it (all of a
        chain a -> b -> c), at this event's time."""
        st, holdout = self.stats, self.cfg.learning.holdout
        joining = [(url, host, ukey)]
        while joining:
            url, host, ukey = joining.pop()
            st.new_urls += 1
            validates = split.validates(cid, holdout)
            self.window.add(ukey, site_of_host(host), cid, ts, validates)
            cl, before = self._sample(cid, url, digest, host, validates)
            if validates:
                self.host_urls.add(host, url, cid)
                self._count_url(url, host, cid, +1)
                self.params.observe(url, host, cid, cl.n, cl.noise, before)
            digest = None  # the sources have no content of their own
            if self.redirects.count:
                for src in reversed(self.redirects.take(url, self.clock.now - self.cfg.window.seconds)):
                    shost = host_of(src)
                    skey = url_key(shost, src)
                    # a source may be held already, or wait for two URLs of one chain
                    if skey not in self.window.urls and all(k != skey for _, _, k in joining):
                        joining.append((src, shost, skey))

    def _redirect(self, src: str, dst: str, ts: float) -> None:
        """``src`` redirected to ``dst``: it joins ``dst``'s cluster now if the window holds
        ``dst``, else when ``dst`` joins one. Only within a site: a redirect to another
        (a login page, an ad server) says nothing about this site's URLs. A source the
        window holds already is left as it is: content of its own placed it."""
        shost, dhost = host_of(src), host_of(dst)
        if site_of_host(shost) != site_of_host(dhost):
            return
        skey = url_key(shost, src)
        if skey in self.window.urls:
            return
        rec = self.window.urls.get(url_key(dhost, dst))
        if rec is None:
            self.redirects.add(src, dst, ts)
        else:
            self._add_url(src, shost, skey, rec.cluster, ts)

    def _sample(
        self, cid: str, url: str, digest: str | None, host: str, validates: bool
    ) -> tuple[ClusterRec, str | None]:
        """The URL joins its cluster: counted, and aligned into the cluster's sample while
        the sample is under K (a validation-only cluster needs no consensus). Returns the
        cluster and the one URL it held before, when it held one (params.py reads it)."""
        st, L = self.stats, self.cfg.learning
        cl = self.clusters.get(cid)
        before = None if cl is None else cl.first
        if cl is None:
            # "rows" stays None while the cluster has one URL: most clusters never get a
            # second, and the URL is enough to tokenize it later
            cl = ClusterRec()
            st.new_clusters += 1
        cl.n += 1
        if digest and digest not in cl.digests and len(cl.digests) < 8:
            cl.digests.append(digest)
        changed = False
        if not cl.noise and cl.n > L.max_cluster_urls:
            cl.noise = changed = True
        elif not cl.noise and cl.k < L.k:
            cl.k += 1
            if host not in cl.hosts:
                cl.hosts.append(host)
            if L.holdout <= 0 or not validates:
                if cl.k == 1:
                    cl.first = url
                else:
                    # newest first, as alignment stacks rows; aligned when rules are derived,
                    # as the host's rules then read them (induction.py): by then most
                    # samples read otherwise, or as one URL
                    cl.rows = [url, *(cl.rows or (cl.first,))]
                    cl.first = None
                    st.alignments += 1
                    changed = True
        if changed:
            self.induction.dirty_clusters.add(cid)
        self.clusters[cid] = cl
        return cl, before

    def _count_url(self, url: str, host: str, cid: str, delta: int) -> None:
        self.kv.count_url(host, url, delta)
        target = self.params.moves.get(host) if self.counts.prepare is not None else None
        self.lifecycle.count_url(url, host, cid, delta, target)
        self.params.count_url(url, host, cid, delta)

    # ------------------------------------------------------------------ rolling window
    def _sweep(self) -> None:
        if self.window.sweep(self.clock.now, self._evict):
            self._derive()
        cutoff = self.clock.now - self.cfg.window.seconds
        self.index.expire(cutoff, self.clock.now)
        self.redirects.expire(cutoff)
        self.next_sweep = self.clock.now + self.cfg.window.sweep_every

    def _evict(self, ukey: str, rec: URLRec) -> None:
        host, url = ukey.split("\x00", 1)
        cid = rec.cluster
        self.window.remove(ukey, site_of_host(host))
        self.stats.evicted_urls += 1
        if rec.validates:
            self.host_urls.remove(host, url)
            self._count_url(url, host, cid, -1)
        cl = self.clusters.get(cid)
        if cl is None:
            return
        cl.n -= 1
        if cl.n <= 0:
            self.induction.forget(cl)
            self.params.forget_cluster(cid)
            for d in cl.digests:
                self.index.forget(cid, d)
            self.clusters.pop(cid)
            self.induction.dirty_clusters.discard(cid)
            self.stats.evicted_clusters += 1
            return
        self.induction.dirty_clusters.add(cid)
        self.clusters[cid] = cl
