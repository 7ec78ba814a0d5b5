"""Rule induction: what each dup-cluster teaches (its aligned sample -> rule parts ->
a contribution to its shape group, generalize.py), and each changed group's candidates
(freq >= min_freq), handed to the lifecycle. Debounced: clusters and groups marked dirty
are re-derived at ``flush``."""

from __future__ import annotations

import msgspec

from ..hashing import hash64
from ..rules.urls import host_of
from ..state.store import Store
from .align import linear_alignment
from .candidates import KV_GROUP
from .generalize import Group, contribution
from .induce import parts_of
from .kvrules import KVRules
from .lifecycle import Lifecycle
from .paramorder import one_order
from .records import ClusterRec, Contribution, GroupRec

_enc = msgspec.msgpack.Encoder().encode


def pooled_views(members: dict[str, int], views: dict[str, int]) -> dict[str, dict]:
    """``shared`` counts, combined over partitions, per shape group as ``Group.candidates``
    reads them: clusters per member ("m"), character bits ("bits"), and each slot's
    values, sorted ("vals"; what freed too: Group.view)."""
    by_sid: dict[str, dict] = {}

    def of(sid: str) -> dict:
        return by_sid.setdefault(sid, {"m": {}, "bits": {}, "vals": {}})

    for key, n in members.items():
        sid, _, mk = key.partition("\x00")
        of(sid)["m"][mk] = n
    for key, v in views.items():
        sid, _, name = key.partition("\x00")
        if name[0] == "b":
            of(sid)["bits"][name] = v
        else:
            slot, _, value = name.partition("\x00")
            of(sid)["vals"].setdefault(slot, []).append(value)
    for g in by_sid.values():
        for vals in g["vals"].values():
            vals.sort()
    return by_sid


def _same(a: Contribution | None, b: Contribution | None) -> bool:
    if a is b:
        return True
    if a is None or b is None:
        return a is b
    # as stored: a contribution read back has lists where a fresh one has tuples, and
    # to_builtins keeps both, so a cluster the cache had dropped re-applied an unchanged
    # contribution (its group derived again, at another point than a learner that kept it)
    return _enc(a) == _enc(b)


class Induction:
    def __init__(
        self,
        store: Store,
        clusters,
        lifecycle: Lifecycle,
        kv: KVRules,
        *,
        min_freq: int,
        card_set: int,
        max_noise: float,
        generalize: bool,
        dirty_clusters: set[str],
        dirty_groups: set[str],
        prepare=None,
    ):
        self.groups = store.table("group", type=GroupRec)
        # shape id -> what other partitions saw of it: clusters per member ("m"), slot
        # character bits ("bits") and bound values ("vals"), and a revision ("rev")
        self.pooled = store.table("gpool")
        self.clusters = clusters
        self.lifecycle, self.kv = lifecycle, kv
        self.min_freq, self.card_set, self.max_noise, self.generalize = min_freq, card_set, max_noise, generalize
        self.dirty_clusters, self.dirty_groups = dirty_clusters, dirty_groups
        self.prepare = prepare
        self._render_cache: dict = {}
        self._shapes: dict[str, tuple] = {}
        # ``shared`` per group as last read, and the groups changed since: a round of a
        # shard group reads every shard's counts, and most groups did not change
        self._shared: dict[str, tuple[dict[str, int], dict[str, int]]] | None = None
        self._shared_stale: set[str] = set()

    @property
    def pending(self) -> bool:
        return bool(self.dirty_clusters or self.dirty_groups)

    def flush(self) -> None:
        """Re-derive the dirty clusters' contributions, then the dirty groups' candidates."""
        if self.dirty_clusters:
            for cid in sorted(self.dirty_clusters):
                cl = self.clusters.get(cid)
                if cl is not None and self._set_contribution(cl):
                    self.clusters[cid] = cl
            self.dirty_clusters.clear()
        for _ in range(2):  # a kv rule that became valid re-derives its hosts' groups (kvrules.py)
            if self.dirty_groups:
                for sid in sorted(self.dirty_groups):
                    self._refresh_group(sid)
                self._shared_stale |= self.dirty_groups
                self.dirty_groups.clear()
            if not self.kv.recheck():
                break

    def shared(self) -> tuple[dict[str, int], dict[str, int]]:
        """For a worker group to pool: clusters per shape group member (``sid NUL
        member``), and what rendering reads (``sid NUL`` a name of ``Group.view``).
        Shapes abstract hosts away (generalize.py), so one shape's clusters on sites of
        several partitions are evidence for one rule, rendered from all their values."""
        cache = self._shared
        if cache is None:
            cache = self._shared = {}
            for sid, rec in self.groups.items():
                if not sid.startswith(KV_GROUP):
                    cache[sid] = self._shared_of(sid, rec)
        else:
            for sid in self._shared_stale | self.dirty_groups:
                if sid.startswith(KV_GROUP):
                    continue
                rec = self.groups.get(sid)
                if rec is None:
                    cache.pop(sid, None)
                else:
                    cache[sid] = self._shared_of(sid, rec)
        self._shared_stale.clear()
        members: dict[str, int] = {}
        views: dict[str, int] = {}
        for sid in sorted(cache):
            m, v = cache[sid]
            members.update(m)
            views.update(v)
        return members, views

    def _shared_of(self, sid: str, rec: GroupRec) -> tuple[dict[str, int], dict[str, int]]:
        members = {sid + "\x00" + mk: mem["n"] for mk, mem in rec.st["members"].items() if mem["n"] > 0}
        views = {sid + "\x00" + name: v for name, v in Group(self._shape(sid, rec.shape), rec.st).view().items()}
        return members, views

    def pool(self, members: dict[str, int], views: dict[str, int], sids: set[str] | None = None) -> None:
        """Other partitions' ``shared`` counts, combined: groups whose pooled counts
        changed derive their candidates again at the next flush. ``sids``: only these
        groups' counts are given (all of each), the others' stand."""
        by_sid = pooled_views(members, views)
        held = sids if sids is not None else {sid for sid, _ in self.pooled.items()}
        for sid in sorted(set(by_sid) | held):
            new, old = by_sid.get(sid), self.pooled.get(sid)
            before = {k: old[k] for k in ("m", "bits", "vals")} if old else None  # without "rev"
            if before == new:
                continue
            if new:
                new["rev"] = (old or {}).get("rev", 0) + 1
                self.pooled[sid] = new
            else:
                self.pooled.pop(sid)
            if sid in self.groups:
                self.dirty_groups.add(sid)

    def forget(self, cl: ClusterRec) -> None:
        """A cluster left the window: what it taught goes with it."""
        if cl.contrib is not None:
            self.dirty_groups.add(self._group_apply(cl.contrib, -1))
        self.kv.cluster(cl, None)

    def _set_contribution(self, cl: ClusterRec) -> bool:
        """Recompute what the cluster teaches and move it between groups if it changed."""
        new = urls = None
        seen = 0
        if not cl.noise and cl.n >= 2 and cl.k >= 2 and cl.rows:
            urls = [row.replace("\x00", "") for row in cl.rows]  # (older state: aligned, NUL-joined)
            order, hosts = self._prepared(cl, urls)
            if order is not None:
                seen = self._digest(order, hosts)
                if seen == cl.seen:  # the sample reads as when it was last derived
                    new = cl.contrib
                else:
                    cons = linear_alignment(order, k=len(order))
                    assert cons is not None
                    parts = parts_of(cons, self.max_noise)
                    if parts is not None:
                        new = contribution(parts, hosts, self.generalize)
        kv = self.kv.cluster(cl, urls)
        old = cl.contrib
        if seen != cl.seen:
            cl.seen, kv = seen, True  # stored with the cluster
        if _same(old, new):
            return kv
        cl.contrib = new
        if old is not None:
            self.dirty_groups.add(self._group_apply(old, -1))
        if new is not None:
            self.dirty_groups.add(self._group_apply(new, +1))
        return True

    def _prepared(self, cl: ClusterRec, urls: list[str]) -> tuple[list[str] | None, list[str]]:
        """The sample as rewrite rules will see it, in the order to align it, and its
        hosts: each URL with its host's host, scheme, parameter and path-edit rules applied
        (RuleSet applies those first), so a page's alias path teaches the same rule
        whatever tracking, session or ``www`` variants came with it (evidence per alias,
        not per combination). None: those rules explain the whole sample. URLs that list
        parameters in another order are left out (paramorder.one_order)."""
        prepared = urls if self.prepare is None else list(dict.fromkeys(self.prepare(u) for u in urls))
        prepared = one_order(prepared)
        if len(prepared) < 2:
            return None, []
        if prepared == urls:  # the URLs as they came (``urls`` is newest first, as the aligned rows are)
            return urls[::-1], cl.hosts
        return prepared, list(dict.fromkeys(host_of(u) for u in prepared))

    def _digest(self, order: list[str], hosts: list[str]) -> int:
        """What a contribution is derived from, hashed (never 0: no derivation)."""
        text = "\x1e".join(order) + "\x1d" + "\x1e".join(hosts) + f"\x1d{self.max_noise}\x1d{self.generalize}"
        return hash64(text) or 1

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
        g = Group(self._shape(sid, c.shape), stored.st if stored else None)
        if sign > 0:
            g.add(c, self.card_set)
        else:
            g.remove(c)
        cands = stored.cands if stored else []
        if g.n <= 0 and not cands:
            self.groups.pop(sid)
        else:
            self.groups[sid] = GroupRec(shape=c.shape, st=g.to_state(), cands=cands)
        return sid

    def _refresh_group(self, sid: str) -> None:
        if sid.startswith(KV_GROUP):
            return self.kv.refresh(sid)
        stored = self.groups.get(sid)
        if stored is None:
            return
        g = Group(self._shape(sid, stored.shape), stored.st)
        pooled = self.pooled.get(sid)
        now = {}
        if g.n > 0:
            extra = pooled["m"] if pooled else None
            cands = g.candidates(self.min_freq, self.card_set, self._render_cache, extra, pooled)
            now = {c.id: c for c in cands}
        now = self.kv.variants(now)
        life = self.lifecycle
        for rid in stored.cands:
            if rid not in now:
                life.drop(rid)
        for c in now.values():
            life.upsert(c, sid)
        if g.n <= 0:
            self.groups.pop(sid)
        else:
            stored.cands = sorted(now)
            self.groups[sid] = stored
