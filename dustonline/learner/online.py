"""The online learner: ``OnlineLearner(config, store).learn_one(event)``.

Per event, in order (DESIGN.md §3):
1. a URL seen before only refreshes its last-seen time;
2. a new URL joins a dup-cluster (clusters.py); while the cluster has fewer than K
   sampled URLs it is aligned against the stored consensus (DustLin, incremental), and
   the cluster's rule contribution is replaced in its shape group (generalize.py);
3. the group's candidates (freq >= min_freq) are diffed against the stored ones: new or
   changed candidates are (re)validated by back-filling counts from the stored URLs of
   their hosts;
4. if the URL's cluster is a validation cluster, every candidate of its host counts it:
   a canonical form going from n to n+1 URLs adds n pairs to Nsupp, and n' to Nci when
   n' of those URLs share its cluster (DustLin-MR's reduce, kept as running sums);
5. rules whose validity changed are activated (unless redundant) or retired;
6. when event time has moved past the next sweep, URLs out of the window or over their
   site's cap are evicted and every count above is decremented: rules that stop holding
   are retired;
7. with derivation, the active rules of hosts whose active rules changed are re-targeted:
   a rule whose pages older rules key otherwise takes their key, so a page's URLs get
   one key although crawlers apply one rule per URL (targets.py, adopt.py).

Parameter order and letter case, which alignment cannot express, come in through the
hooks of kvrules.py at steps 2, 3 and 6, as candidates of the same machinery.

All state is in the store, so a worker that restarts from it continues exactly.
"""

from __future__ import annotations

import bisect
import heapq
from typing import Iterable

import msgspec

from .align import Consensus, add_url
from ..state.chunklog import ChunkLog
from .clusters import ClusterIndex, url_key
from .adopt import adopt
from ..config import Config
from . import holdout as split
from .protocol import LearnerBase
from ..events.event import FetchEvent
from .generalize import Contribution, Group, contribution
from .hosturls import HostURLs
from .kvrules import PREFIX as KV_GROUP, KVRules
from .induce import parts_of
from ..rules.ruleset import ACTIVE, RETIRED, CompiledRule, Rule, RuleSet, rule_order
from ..state.store import Store
from .keycheck import incumbent_keys, set_gain
from ..rules.urls import host_of, light_normalize, site_of_host
from .validation import fpr, refines

CANDIDATE, REDUNDANT = "candidate", "redundant"
TARGETED = "~t"  # id suffix of the re-targeted part of a rule (``_targeted_rule``)
_WIDE = 16  # clusters per validation form kept as a flat list before it becomes a dict


class Stats(msgspec.Struct):
    events: int = 0
    ignored: int = 0        # non-2xx, empty payload, no content evidence
    new_urls: int = 0
    new_clusters: int = 0
    refreshed: int = 0
    evicted_urls: int = 0
    evicted_clusters: int = 0
    alignments: int = 0
    rule_changes: int = 0


class ClusterRec(msgspec.Struct, array_like=True, gc=False):
    """A dup-cluster as stored. A struct, not a dict: the read cache holds many of these
    (slots instead of a hash table each), and they hold no cycles, so the collector need
    not track them."""

    n: int = 0                    # URLs in the window
    rows: list[str] | None = None # aligned sample, one packed row per URL (_pack)
    first: str | None = None      # the only URL while k == 1
    k: int = 0                    # URLs sampled (<= K)
    hosts: list[str] = []
    noise: bool = False
    contrib: Contribution | None = None
    digests: list[str] = []
    kv: list | None = None        # its parameter-order and case evidence (kvrules.py)


class _Cand:
    """A candidate rule in memory: its stored record plus the compiled matcher (the rule
    as learned, which its counts describe) and, once needed, its re-targeted form."""

    __slots__ = ("rec", "compiled", "_targeted")

    def __init__(self, rec: dict):
        self.rec = rec
        self.compiled = CompiledRule(_as_rule(rec, learned=True))
        self._targeted = None

    def on(self, host: str) -> CompiledRule:
        """The rule as crawlers apply it on ``host``: as learned, or re-targeted there."""
        t = self.rec.get("target")
        if t is None or host not in t["hosts"]:
            return self.compiled
        if self._targeted is None:
            self._targeted = CompiledRule(Rule(id=self.rec["id"], hosts=t["hosts"], context=t["context"],
                                               transformation=t["transformation"]))
        return self._targeted


def _counts(rec: dict, published: bool) -> tuple:
    pub = rec.get("pub") if published else None
    if pub is not None:
        return tuple(pub)
    return rec["nsupp"], round(fpr(rec["nsupp"], rec["nci"]), 6), rec["freq"]


def _partial(rec: dict) -> bool:
    """Is the rule re-targeted on some of its hosts only?"""
    t = rec.get("target")
    return t is not None and len(t["hosts"]) < len(rec["hosts"])


def _as_rule(rec: dict, published: bool = False, learned: bool = False) -> Rule:
    """The rule of a candidate record: with its live counts, or (``published``) as last
    published, which is what subscribers of the rules topic hold. Unless ``learned``, a
    re-targeted rule (``rec["target"]``, see ``_retarget``) has the re-targeted context and
    transformation when that holds on all its hosts; when it holds on some, those hosts go
    to ``_targeted_rule``. Support and fpr stay those of the learned rule: the re-targeted
    one never keys together URLs the learned one keeps apart (adopt.py)."""
    support, rate, freq = _counts(rec, published)
    hosts, context, transformation = list(rec["hosts"]), rec["context"], rec["transformation"]
    t = None if learned else rec.get("target")
    if t is not None:
        if _partial(rec):
            hosts = [h for h in hosts if h not in t["hosts"]]
        else:
            context, transformation = t["context"], t["transformation"]
    return Rule(
        id=rec["id"],
        hosts=hosts,
        context=context,
        transformation=transformation,
        support=support,
        fpr=rate,
        freq=freq,
        version=rec["version"],
        status=ACTIVE if rec["status"] == ACTIVE else RETIRED,
        updated=rec["updated"],
    )


def _targeted_rule(rec: dict, published: bool = False, status: str = ACTIVE) -> Rule:
    """The re-targeted part of a rule that is re-targeted on some of its hosts only: a rule
    of its own (id + TARGETED, versions in ``tver``), tried where the rule is."""
    t = rec["target"]
    support, rate, freq = _counts(rec, published)
    return Rule(id=rec["id"] + TARGETED, hosts=list(t["hosts"]), context=t["context"],
                transformation=t["transformation"], support=support, fpr=rate, freq=freq,
                version=rec.get("tver", 0), status=status, updated=rec["updated"])


class OnlineLearner(LearnerBase):
    def __init__(self, config: Config | None = None, store: Store | None = None):
        from ..state.store import memory_store

        self.cfg = config or Config().check()
        self.store = store if store is not None else memory_store(self.cfg.storage.cache_entries)
        L = self.cfg.learning
        self.K, self.card_set = L.k, L.card_set
        self.min_freq, self.min_supp, self.fpr_max = L.min_freq, L.min_supp, L.fpr_max
        self.holdout = L.holdout
        s = self.store
        # URL records are written once and scanned, rarely read back by key: not worth
        # caching; the filter answers the usual question, "is this URL new?"
        self.urls = s.table("url", keep=False, filtered=True)
        # the window's indexes (chunklog.py): URL keys by time bucket, (seq, URL key) by site
        self.sites, self.meta = s.table("site"), s.table("meta")
        m = self.meta.get("learner") or {}
        logs = m.get("logs", {})
        # (a full chunk goes to the store soon: pending, it would hold 256 URL keys)
        self.by_time = ChunkLog(s.table("url-by-time", keep=False, flush_at=16), logs.get("time"))
        self.by_arrival = ChunkLog(s.table("url-by-arrival", keep=False, flush_at=16), logs.get("arrival"))
        self.host_urls = HostURLs(self.urls, self.cfg.storage.cache_entries)
        self.clusters = s.table("cluster", type=ClusterRec, filtered=True)
        C = self.cfg.clustering
        self.index = ClusterIndex(s, C.simhash_distance, C.canonical_hints, urls=self.urls, clusters=self.clusters)
        self.groups, self.cands_t = s.table("group"), s.table("cand")
        self.vcount = s.table("vcount", filtered=True)
        # last published version of dropped candidates: a rule learned again continues
        # its versions, so "newer version wins" holds for subscribers and for the
        # worker group's merge of partitions (rulemerge.py)
        self.versions = s.table("ver")
        # and the next count epoch of dropped candidates: a rule learned again must not
        # read the counts its old epoch left in the read cache (Table.drop_prefix)
        self.epochs = s.table("epoch")
        self.clock: float = m.get("clock", 0.0)
        self.next_sweep: float | None = m.get("next_sweep")
        self.stats = msgspec.convert(m.get("stats", {}), Stats)
        self._cands: dict[str, _Cand] = {}
        self._by_host: dict[str, list[str]] = {}
        self._indexed: dict[str, tuple[str, ...]] = {}
        self._render_cache: dict = {}
        self._shapes: dict[str, tuple] = {}
        self._dirty_clusters: set[str] = set(m.get("dirty_clusters", ()))
        self._dirty_groups: set[str] = set(m.get("dirty_groups", ()))
        # hosts whose active rules changed since the last re-targeting, each with the age
        # (``_age``) of the oldest rule the change concerns: older rules take no target from it
        self._dirty_targets: dict[str, tuple] = {h: (since, rid) for h, since, rid in m.get("dirty_targets", ())}
        self._dirty_rules: set[str] = set(m.get("dirty_rules", ()))  # and rules whose own change it is
        self.refresh_every = L.refresh_every
        for rid, rec in self.cands_t.items():
            self._cands[rid] = _Cand(rec)
        self._retargeted: set[str] = {rid for rid, c in self._cands.items() if c.rec.get("target")}
        self._reindex()
        self.kv = KVRules(self)

    # ------------------------------------------------------------------ API
    def learn_one(self, ev: FetchEvent) -> list[Rule]:
        """Learn from one fetch; returns the published rule changes it caused (active or
        retired rules, each with a higher version than before)."""
        st = self.stats
        st.events += 1
        if ev.ts > self.clock:
            self.clock = ev.ts
        if self.next_sweep is None:
            self.next_sweep = self.clock + self.cfg.window.sweep_every
        out: list[Rule] = []
        if ev.teaches:
            self._learn(ev, out)
        else:
            st.ignored += 1
        if self.clock >= self.next_sweep:
            self.sweep(out)
        if st.events % self.refresh_every == 0:
            self._flush_pending(out)
        st.rule_changes += len(out)
        return out

    def flush(self) -> list[Rule]:
        """Derive rules from everything learned so far; returns the rule changes.

        Rule derivation is debounced: a changed cluster re-derives its rule, and a changed
        group its candidates, once per ``learning.refresh_every`` events (1 = every event).
        Call this at the end of a stream; the schedule depends only on the event count,
        so replays and recoveries derive at the same points."""
        out: list[Rule] = []
        self._flush_pending(out)
        self.stats.rule_changes += len(out)
        return out

    def _flush_pending(self, out: list[Rule]) -> None:
        if self._dirty_clusters:
            for cid in sorted(self._dirty_clusters):
                cl = self.clusters.get(cid)
                if cl is not None and self._set_contribution(cid, cl):
                    self.clusters[cid] = cl
            self._dirty_clusters.clear()
        for _ in range(2):  # a kv rule that became valid re-derives its hosts' groups (kvrules.py)
            if self._dirty_groups:
                for sid in sorted(self._dirty_groups):
                    self._refresh_group(sid, out)
                self._dirty_groups.clear()
            if not self.kv.recheck():
                break
        if self._dirty_targets or self._dirty_rules:  # targets of the rule set as now derived
            self._retarget(out)

    @property
    def derivation_pending(self) -> bool:
        """Changes learned whose rules are not derived yet (``flush`` would derive them)."""
        return bool(self._dirty_clusters or self._dirty_groups or self._dirty_targets or self._dirty_rules)

    def rules(self) -> list[Rule]:
        """The active rule set, ordered as crawlers apply it: each rule as last published
        (support, fpr and freq at its last change), so a file written from here and a
        rule set built from the published changes (the rules topic) are the same."""
        out = []
        for c in self._cands.values():
            if c.rec["status"] == ACTIVE:
                out.append(_as_rule(c.rec, published=True))
                if _partial(c.rec):
                    out.append(_targeted_rule(c.rec, published=True))
        return sorted(out, key=rule_order)

    def ruleset(self) -> RuleSet:
        return RuleSet(self.rules())

    def candidates(self) -> list[dict]:
        return [dict(c.rec) for c in sorted(self._cands.values(), key=lambda c: c.rec["id"])]

    def summary(self) -> dict:
        """Counters and sizes; ``active_rules`` counts the rules as published (a
        re-targeted part, ``<id>~t``, is a rule of its own), as ``rules()`` does."""
        active = sum(1 + bool(_partial(c.rec)) for c in self._cands.values() if c.rec["status"] == ACTIVE)
        return {
            **msgspec.to_builtins(self.stats),
            "clusters": self.stats.new_clusters - self.stats.evicted_clusters,
            "urls": self.stats.new_urls - self.stats.evicted_urls,
            "candidates": len(self._cands),
            "active_rules": active,
        }

    def close(self) -> None:
        """Close the store (a temporary store is removed)."""
        self.store.close()

    def checkpoint(self) -> None:
        """Make all state durable (call before exit; the CLI does)."""
        self.meta["learner"] = {
            "clock": self.clock,
            "next_sweep": self.next_sweep,
            "stats": msgspec.to_builtins(self.stats),
            "dirty_clusters": sorted(self._dirty_clusters),
            "dirty_groups": sorted(self._dirty_groups),
            "dirty_targets": sorted([h, *age] for h, age in self._dirty_targets.items()),
            "dirty_rules": sorted(self._dirty_rules),
            "logs": {"time": self.by_time.state(), "arrival": self.by_arrival.state()},
        }
        self.by_time.save()
        self.by_arrival.save()
        self.store.flush()

    # ------------------------------------------------------------------ learning
    def _validates(self, cid: str) -> bool:
        return split.validates(cid, self.holdout)

    def _learn(self, ev: FetchEvent, out: list[Rule]) -> None:
        host = host_of(ev.url)
        ukey = url_key(host, ev.url)
        rec = self.urls.get(ukey)
        if rec is not None:
            if ev.ts > rec[1]:
                if self._bucket(ev.ts) != self._bucket(rec[1]):
                    self.by_time.append(self._time_group(ev.ts), ukey)  # the old entry goes stale
                rec[1] = ev.ts
                self.urls[ukey] = rec
            self.stats.refreshed += 1
            return
        st = self.stats
        st.new_urls += 1
        cid = self.index.assign(ev)
        validates = self._validates(cid)
        site = site_of_host(host)
        count, seq = self.sites.get(site) or (0, 0)
        self.sites[site] = [count + 1, seq + 1]
        self.urls[ukey] = [cid, ev.ts, seq, validates]
        self.by_time.append(self._time_group(ev.ts), ukey)
        self.by_arrival.append(site, [seq, ukey])
        cl = self.clusters.get(cid)
        if cl is None:
            # "rows" stays None while the cluster has one URL: most clusters never get a
            # second, and the URL is enough to tokenize it later
            cl = ClusterRec()
            st.new_clusters += 1
        cl.n += 1
        if ev.digest and ev.digest not in cl.digests and len(cl.digests) < 8:
            cl.digests.append(ev.digest)
        L = self.cfg.learning
        changed = False
        if not cl.noise and cl.n > L.max_cluster_urls:
            cl.noise = changed = True
        elif not cl.noise and cl.k < self.K:
            cl.k += 1
            if host not in cl.hosts:
                cl.hosts.append(host)
            if self.holdout <= 0 or not validates:  # a validation-only cluster needs no consensus
                if cl.k == 1:
                    cl.first = ev.url
                else:
                    rows = cl.rows
                    cons = _unpack(rows) if rows else Consensus.of_url(cl.first)
                    cl.rows = _pack(add_url(cons, ev.url))
                    cl.first = None
                    st.alignments += 1
                    changed = True
        if changed:
            self._dirty_clusters.add(cid)
        self.clusters[cid] = cl
        if validates:
            self.host_urls.add(host, ev.url, cid)
            self._count_url(ev.url, host, cid, +1, out)

    def _set_contribution(self, cid: str, cl: ClusterRec) -> bool:
        """Recompute what the cluster teaches and move it between groups if it changed."""
        new = urls = None
        if not cl.noise and cl.n >= 2 and cl.k >= 2 and cl.rows:
            parts = parts_of(_unpack(cl.rows), self.cfg.learning.max_noise)
            if parts is not None:
                new = contribution(parts, cl.hosts, self.cfg.learning.generalize)
            urls = [row.replace("\x00", "") for row in cl.rows]  # the sample, unaligned
        kv = self.kv.cluster(cl, urls)
        old = cl.contrib
        if _same(old, new):
            return kv
        cl.contrib = new
        if old is not None:
            self._dirty_groups.add(self._group_apply(old, -1))
        if new is not None:
            self._dirty_groups.add(self._group_apply(new, +1))
        return True

    def _shape(self, sid: str, shape) -> tuple:
        """Shapes come back from the store as lists; normalize each once."""
        t = self._shapes.get(sid)
        if t is None:
            if len(self._shapes) > 100_000:
                self._shapes.clear()
            t = self._shapes[sid] = Group(shape).shape
        return t

    def _group_apply(self, c: Contribution, sign: int) -> str:
        sid = c.shape_id
        stored = self.groups.get(sid)
        g = Group(self._shape(sid, c.shape), stored["st"] if stored else None)
        if sign > 0:
            g.add(c, self.card_set)
        else:
            g.remove(c)
        cands = stored["cands"] if stored else []
        if g.n <= 0 and not cands:
            self.groups.pop(sid)
        else:
            self.groups[sid] = {"shape": c.shape, "st": g.to_state(), "cands": cands}
        return sid

    def _refresh_group(self, sid: str, out: list[Rule]) -> None:
        if sid.startswith(KV_GROUP):
            return self.kv.refresh(sid, out)
        stored = self.groups.get(sid)
        if stored is None:
            return
        g = Group(self._shape(sid, stored["shape"]), stored["st"])
        now = {c.id: c for c in g.candidates(self.min_freq, self.card_set, self._render_cache)} if g.n > 0 else {}
        now = self.kv.variants(now)
        for rid in stored["cands"]:
            if rid not in now:
                self._drop_candidate(rid, out)
        for rid, c in now.items():
            self._upsert_candidate(c, sid, out)
        if g.n <= 0:
            self.groups.pop(sid)
        else:
            stored["cands"] = sorted(now)
            self.groups[sid] = stored

    # ------------------------------------------------------------------ candidates
    def _upsert_candidate(self, c, sid: str, out: list[Rule]) -> None:
        cur = self._cands.get(c.id)
        if cur is None:
            rec = {
                "id": c.id, "group": sid, "context": c.context, "transformation": c.transformation,
                "hosts": list(c.hosts), "freq": c.freq, "nsupp": 0, "nci": 0,
                "version": self.versions.get(c.id, 0), "status": CANDIDATE, "updated": self.clock,
                "epoch": self.epochs.get(c.id, 0), "tver": self.versions.get(c.id + TARGETED, 0),
            }
            self._install(rec)
            self._backfill(c.id, rec["hosts"])
            self._evaluate(c.id, out)
            return
        rec = cur.rec
        rec["freq"] = c.freq
        if rec["context"] != c.context or rec["transformation"] != c.transformation:
            # the rule itself changed: its counts no longer describe it
            self._set_target(rec, None, out)
            self._reset_counts(rec)
            rec.update(context=c.context, transformation=c.transformation, hosts=list(c.hosts))
            self._install(rec)
            self._backfill(c.id, rec["hosts"])
            self._evaluate(c.id, out, changed=True)
        elif set(c.hosts) != set(rec["hosts"]):
            added = sorted(set(c.hosts) - set(rec["hosts"]))
            removed = sorted(set(rec["hosts"]) - set(c.hosts))
            t = rec.get("target")
            if t is not None and removed:  # the target holds where it did; new hosts: see _publish
                kept = [h for h in t["hosts"] if h not in removed]
                self._set_target(rec, {**t, "hosts": kept} if kept else None, out, hosts=list(c.hosts))
            self._backfill(c.id, removed, -1)  # while the rule still applies to them
            rec["hosts"] = list(c.hosts)
            self._install(rec)
            self._backfill(c.id, added)
            self._evaluate(c.id, out, changed=True, moved=added)
        else:
            self.cands_t[c.id] = rec

    def _install(self, rec: dict) -> None:
        rid = rec["id"]
        self._unindex(rid)
        self._cands[rid] = _Cand(rec)
        self.cands_t[rid] = rec
        self._indexed[rid] = tuple(rec["hosts"])
        for h in rec["hosts"]:
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

    def _drop_candidate(self, rid: str, out: list[Rule]) -> None:
        cand = self._cands.pop(rid, None)
        if cand is None:
            return
        self._unindex(rid)
        self._reset_counts(cand.rec)
        was_active = cand.rec["status"] == ACTIVE
        if was_active:
            self._publish(cand.rec, RETIRED, out)
        self.cands_t.pop(rid)
        if cand.rec["version"]:
            self.versions[rid] = cand.rec["version"]
        self.epochs[rid] = cand.rec["epoch"]
        if cand.rec.get("tver"):
            self.versions[rid + TARGETED] = cand.rec["tver"]
        if was_active:
            self._recheck_redundant(cand.rec["hosts"], out)

    def _reindex(self) -> None:
        self._by_host, self._indexed = {}, {}
        for rid in sorted(self._cands):
            self._indexed[rid] = tuple(self._cands[rid].rec["hosts"])
            for h in self._indexed[rid]:
                self._by_host.setdefault(h, []).append(rid)

    # ------------------------------------------------------------------ validation counts
    def _count_url(self, url: str, host: str, cid: str, delta: int, out: list[Rule]) -> None:
        self.kv.count_url(host, url, delta)
        for rid in list(self._by_host.get(host, ())):
            if self._count_one(self._cands[rid], url, cid, delta):
                self._evaluate(rid, out)

    def _backfill(self, rid: str, hosts, delta: int = 1) -> None:
        """Count (or, with delta=-1, uncount) the stored URLs of ``hosts`` for one rule:
        a candidate appeared, changed, or gained or lost hosts."""
        cand = self._cands[rid]
        count = self._count_one
        for h in hosts:
            for url, cid in self.host_urls.of(h).items():
                count(cand, url, cid, delta)
        self.cands_t[rid] = cand.rec

    def _count_one(self, cand: _Cand, url: str, cid: str, delta: int) -> bool:
        """One URL in or out of a rule's counts: a form going n -> n+1 adds n pairs."""
        form = cand.compiled.apply(url)
        if form is None:
            return False
        rec = cand.rec
        fkey = self._count_prefix(rec) + form
        # [URLs with this form, cluster, its URLs, cluster, ...]; past _WIDE clusters the
        # pairs move into a dict, [n, {cluster: URLs}], so a rule that lumps many clusters
        # into one form (an invalid one, kept counting) costs O(1) per URL, not O(clusters)
        entry = self.vcount.get(fkey)
        if entry is None:
            entry = [0]
        n = entry[0]
        if len(entry) == 2:  # [n, {cluster: URLs}]
            wide = entry[1]
            k = wide.get(cid, 0)
        else:
            wide = None
            for at in range(1, len(entry), 2):
                if entry[at] == cid:
                    k = entry[at + 1]
                    break
            else:
                at, k = len(entry), 0
                entry += (cid, 0)
        if delta > 0:
            rec["nsupp"] += n
            rec["nci"] += k
            n, k = n + 1, k + 1
        else:
            n, k = n - 1, k - 1
            rec["nsupp"] -= n
            rec["nci"] -= k
        if n <= 0:
            self.vcount.pop(fkey)
            return True
        entry[0] = n
        if wide is not None:
            if k > 0:
                wide[cid] = k
            else:
                del wide[cid]
        elif k > 0:
            entry[at + 1] = k
            if len(entry) > 2 * _WIDE:
                entry[1:] = [dict(zip(entry[1::2], entry[2::2]))]
        else:
            del entry[at : at + 2]
        self.vcount[fkey] = entry
        return True

    @staticmethod
    def _count_prefix(rec: dict) -> str:
        return f"{rec['id']}\x1f{rec['epoch']}\x00"

    def _reset_counts(self, rec: dict) -> None:
        """Forget a rule's counts: a new epoch for its keys, one range delete for the old."""
        prefix = self._count_prefix(rec)
        rec["epoch"] += 1
        rec["nsupp"] = rec["nci"] = 0
        self.vcount.drop_prefix(prefix)

    # ------------------------------------------------------------------ status
    def _valid(self, rec: dict) -> bool:
        nsupp = rec["nsupp"]
        return rec["freq"] >= self.min_freq and nsupp >= self.min_supp and fpr(nsupp, rec["nci"]) <= self.fpr_max + 1e-12

    def _evaluate(self, rid: str, out: list[Rule], changed: bool = False, moved: list[str] | None = None) -> None:
        rec = self._cands[rid].rec
        valid = self._valid(rec)
        status = rec["status"]
        if status == ACTIVE and not valid:
            self._publish(rec, CANDIDATE, out)
            self._recheck_redundant(rec["hosts"], out)
        elif status == CANDIDATE and valid:
            if self._redundant(rid, out):
                rec["status"] = REDUNDANT
            else:
                self._publish(rec, ACTIVE, out)
        elif status == REDUNDANT and not valid:
            rec["status"] = CANDIDATE
        elif status == ACTIVE and changed:
            self._publish(rec, ACTIVE, out, moved=moved)
        self.cands_t[rid] = rec

    def _publish(self, rec: dict, status: str, out: list[Rule], retarget: bool = True,
                 moved: list[str] | None = None) -> None:
        """Publish a change of the rule; unless it is a re-targeting itself, the rule and
        the younger active rules of its hosts, and rules re-targeted to it, are re-targeted
        next flush. When only its hosts changed, only the hosts it ``moved`` to are (where
        it left, only the rules that took its target are)."""
        if status == ACTIVE and rec["status"] != ACTIVE:
            rec["since"] = self.stats.events  # incumbency, for re-targeting
        if retarget:
            rid = rec["id"]
            if moved is None:
                self._dirty_rules.add(rid)
            self._dirty(rec["hosts"] if moved is None else moved, (rec.get("since", 0), rid))
            for other in self._retargeted_to(rid):
                self._dirty(self._cands[other].rec["hosts"], self._age(other))
        if status != ACTIVE:
            self._set_target(rec, None, out)
        rec["status"] = status
        rec["version"] += 1
        rec["updated"] = self.clock
        # a re-targeting keeps the published counts: they order the rules, and a new
        # target is no new evidence
        r = _as_rule(rec, published=not retarget)
        rec["pub"] = [r.support, r.fpr, r.freq]
        self.cands_t[rec["id"]] = rec
        out.append(r)
        if status == ACTIVE and _partial(rec):
            rec["tver"] = rec.get("tver", 0) + 1
            out.append(_targeted_rule(rec, published=True))

    def _set_target(self, rec: dict, target: dict | None, out: list[Rule], hosts: list[str] | None = None) -> None:
        """Set or clear the rule's re-targeted form (for its ``hosts`` to come, if they
        change); a re-targeted part that goes away is published retired (the rule itself
        is published by the caller)."""
        rid = rec["id"]
        hosts = rec["hosts"] if hosts is None else hosts
        if _partial(rec) and (target is None or len(target["hosts"]) == len(hosts)):
            rec["tver"] = rec.get("tver", 0) + 1
            rec["updated"] = self.clock
            out.append(_targeted_rule(rec, status=RETIRED))
        if target is None:
            rec.pop("target", None)
            self._retargeted.discard(rid)
        else:
            rec["target"] = target
            self._retargeted.add(rid)
        cand = self._cands.get(rid)
        if cand is not None:
            cand._targeted = None

    # ------------------------------------------------------------------ redundancy (Alg. 6)
    def _validation_urls(self, hosts) -> Iterable[tuple[str, str]]:
        for h in hosts:
            for url in self.host_urls.of(h):
                yield url, h

    def _refines(self, r1: str, r2: str) -> bool:
        c1 = self._cands[r1]
        return refines(c1.compiled, self._cands[r2].compiled, self._validation_urls(c1.rec["hosts"]))

    def _preferred(self, a: str, b: str) -> bool:
        """Between rules of equal support: the more general (shorter context), then lower id."""
        ra, rb = self._cands[a].rec, self._cands[b].rec
        return (len(ra["context"]), a) < (len(rb["context"]), b)

    def _redundant(self, rid: str, out: list[Rule]) -> bool:
        """Is ``rid`` refined by an active rule? Active rules it makes redundant are retired."""
        hosts = self._cands[rid].rec["hosts"]
        others = sorted({o for h in hosts for o in self._by_host.get(h, ()) if o != rid and self._cands[o].rec["status"] == ACTIVE})
        for o in others:
            sub = self._refines(rid, o)
            sup = self._refines(o, rid)
            if sub and (not sup or not self._preferred(rid, o)):
                return True
        for o in others:
            if self._refines(o, rid):
                self._publish(self._cands[o].rec, REDUNDANT, out)
        return False

    def _recheck_redundant(self, hosts, out: list[Rule]) -> None:
        """A rule left the active set: rules it made redundant may be needed again."""
        for rid in sorted({o for h in hosts for o in self._by_host.get(h, ())}):
            rec = self._cands[rid].rec
            if rec["status"] == REDUNDANT and self._valid(rec) and not self._redundant(rid, out):
                self._publish(rec, ACTIVE, out)

    # ------------------------------------------------------------------ targets
    def _active(self, host: str) -> list[tuple[str, CompiledRule]]:
        """The host's active rules as crawlers apply them there, in the order they try them."""
        cands = [self._cands[rid] for rid in self._by_host.get(host, ()) if self._cands[rid].rec["status"] == ACTIVE]
        cands.sort(key=lambda c: (-c.rec["pub"][0], c.rec["id"]))
        return [(c.rec["id"], c.on(host)) for c in cands]

    def _age(self, rid: str) -> tuple:
        """Incumbency: rules active longer come first (ties by id)."""
        return (self._cands[rid].rec.get("since", 0), rid)

    def _retargeted_to(self, rid: str) -> list[str]:
        """The rules that took ``rid``'s target (a rule being dropped is no longer one)."""
        return [o for o in self._retargeted if o in self._cands and rid in self._cands[o].rec["target"]["by"]]

    def _dirty(self, hosts, age: tuple) -> None:
        """Rules of ``hosts`` as old as ``age`` or younger are to be re-targeted."""
        d = self._dirty_targets
        for h in hosts:
            if h not in d or age < d[h]:
                d[h] = age

    def _retarget(self, out: list[Rule]) -> None:
        """Re-target the rules a change of the active rules concerns, oldest first: each
        takes the keys older rules give its pages (``_adoption``) or keeps its own, and
        is published again when that changes. Older rules never take a younger one's
        target, so keys a crawler already holds stay, and no two rules chase each other."""
        dirty, self._dirty_targets = self._dirty_targets, {}
        ids = {rid for h, age in dirty.items() for rid in self._by_host.get(h, ()) if self._age(rid) >= age}
        ids.update(rid for rid in self._dirty_rules if rid in self._cands)
        self._dirty_rules = set()
        queue = [self._age(rid) for rid in ids]
        heapq.heapify(queue)
        applied: dict[str, list] = {}

        def applied_on(h: str) -> list:
            r = applied.get(h)
            if r is None:
                r = applied[h] = self._active(h)
            return r

        while queue:
            age = heapq.heappop(queue)
            rid = age[1]
            rec = self._cands[rid].rec
            if rec["status"] != ACTIVE or (queue and queue[0] == age):
                continue
            target = self._adoption(self._cands[rid], applied_on)
            if target != rec.get("target"):
                for h in set(rec["hosts"]):
                    applied.pop(h, None)
                self._set_target(rec, target, out)
                self._publish(rec, ACTIVE, out, retarget=False)
                # its keys changed: the younger rules of its hosts, and those that took
                # its target, are re-targeted in this pass (after it: they are younger)
                later = {o for h in rec["hosts"] for o in self._by_host.get(h, ()) if self._age(o) > age}
                later.update(self._retargeted_to(rid))
                for o in later:
                    heapq.heappush(queue, self._age(o))

    def _adoption(self, cand: _Cand, applied_on) -> dict | None:
        """The rule re-targeted to the keys older active rules give the dup-clusters of
        the validation URLs it decides (targets.py): {context, transformation, by: [that
        rule], hosts: where the URLs show it}; None when it keeps its own target."""
        rid, r = cand.rec["id"], cand.compiled
        age = self._age(rid)

        def learned_on(h: str) -> list:
            return [(i, r if i == rid else cr) for i, cr in applied_on(h)]

        # a page's URLs are on hosts of one site, and a rule's hosts are those of the
        # clusters it was learned from (both sides of a www or domain alias): only sites
        # where an older rule is active can give it a target
        sites = {site_of_host(h) for h in cand.rec["hosts"] if any(self._age(i) < age for i, _cr in applied_on(h))}
        universe = sorted(h for h in cand.rec["hosts"] if site_of_host(h) in sites)
        mine, held = incumbent_keys(rid, universe, learned_on, self.host_urls.of, lambda i: self._age(i) < age)
        examples: dict[str, list] = {}
        agree = True
        for url, cid in mine:
            keys = held.get(cid)
            if keys:
                key = min(keys)  # (a cluster older rules split already: one of their keys)
                by, other = keys[key]
                examples.setdefault(by, []).append((url, other))
                if agree:
                    out_ = r.apply(url)
                    agree = out_ == key or light_normalize(out_) == key
        if not examples or agree:
            return None
        by = min(examples, key=lambda b: (-len(examples[b]), b))
        s = self._cands[by]
        made = adopt(r, [(url, s.on(host_of(other)), other) for url, other in examples[by]])
        if made is None:
            return None
        # one rule id has one context: hosts without examples keep the learned rule
        where = sorted({host_of(url) for url, _o in examples[by]})
        target = {"context": made[0], "transformation": made[1], "by": [by], "hosts": where}
        if target == cand.rec.get("target"):
            return target  # validated as a set when adopted; the rule's own counts go on
        adopted = CompiledRule(Rule(id=rid, hosts=where, context=made[0], transformation=made[1]))

        def adopted_on(h: str) -> list:
            return [(i, adopted if i == rid else cr) for i, cr in learned_on(h)] if h in where else learned_on(h)

        check = ((url, cid) for h in universe for url, cid in self.host_urls.of(h).items())
        return target if set_gain(check, learned_on, adopted_on) > 0 else None

    # ------------------------------------------------------------------ rolling window
    def _bucket(self, ts: float) -> int:
        return int(ts // self.cfg.window.sweep_every)

    def _time_group(self, ts: float) -> str:
        return f"{self._bucket(ts):012d}"

    def sweep(self, out: list[Rule] | None = None) -> list[Rule]:
        """Evict URLs last seen before the window, then the earliest-arrived URLs of sites
        over their cap. Indexes by time bucket and by per-site arrival keep this
        proportional to what is evicted, not to what is stored."""
        out = out if out is not None else []
        W = self.cfg.window
        cutoff = self.clock - W.seconds
        due = self._bucket(cutoff)
        expired: dict[str, list[str]] = {}
        for group, _key, ukeys in self.by_time.chunks():
            if int(group) >= due:
                break
            expired.setdefault(group, []).extend(ukeys)
        evicted = 0
        for group, ukeys in expired.items():
            bucket = int(group)
            for ukey in ukeys:
                rec = self.urls.get(ukey)
                if rec is not None and rec[1] < cutoff and self._bucket(rec[1]) == bucket:
                    self._evict(ukey, rec, out)
                    evicted += 1
            self.by_time.drop_group(group)
        for site, (count, _seq) in list(self.sites.items()):
            if count <= W.max_urls_per_site:
                continue
            excess = count - W.max_urls_per_site
            for _site, key, entries in self.by_arrival.chunks(site):
                if excess <= 0:
                    break
                used = 0
                for seq, ukey in entries:
                    if excess <= 0:
                        break
                    used += 1
                    rec = self.urls.get(ukey)
                    if rec is not None and rec[2] == seq:  # else evicted (and maybe back, later)
                        self._evict(ukey, rec, out)
                        evicted += 1
                        excess -= 1
                self.by_arrival.replace(key, entries[used:])
        if evicted:
            self._flush_pending(out)
        self.next_sweep = self.clock + W.sweep_every
        return out

    def _evict(self, ukey: str, rec: list, out: list[Rule]) -> None:
        host, url = ukey.split("\x00", 1)
        cid = rec[0]
        self.urls.pop(ukey)
        self.stats.evicted_urls += 1
        site = site_of_host(host)
        count, seq = self.sites.get(site) or (1, 0)
        if count > 1:
            self.sites[site] = [count - 1, seq]
        else:  # its arrival numbers start again at 0: the old log must go
            self.sites.pop(site)
            self.by_arrival.drop_group(site)
        if rec[3]:
            self.host_urls.remove(host, url)
            self._count_url(url, host, cid, -1, out)
        cl = self.clusters.get(cid)
        if cl is None:
            return
        cl.n -= 1
        if cl.n <= 0:
            if cl.contrib is not None:
                self._dirty_groups.add(self._group_apply(cl.contrib, -1))
            self.kv.cluster(cl, None)
            for d in cl.digests:
                self.index.forget(cid, d)
            self.clusters.pop(cid)
            self._dirty_clusters.discard(cid)
            self.stats.evicted_clusters += 1
            return
        self._dirty_clusters.add(cid)
        self.clusters[cid] = cl


def _pack(cons: Consensus) -> list[str]:
    """A consensus row as one string (NUL never occurs in an accepted URL; a gap is the
    empty token): a cached cluster costs one string per row, not one per token."""
    return ["\x00".join(row) for row in cons.rows]


def _unpack(rows: list[str]) -> Consensus:
    return Consensus([row.split("\x00") for row in rows])


def _same(a: Contribution | None, b: Contribution | None) -> bool:
    if a is None or b is None:
        return a is b
    return msgspec.to_builtins(a) == msgspec.to_builtins(b)


