"""Rules alignment cannot express, learned from dup-clusters as Koppula et al. would:
parameter order (paramorder.py) and letter case (casefold.py). Rule induction
(induction.py) and the coordinator call the hooks of ``KVRules``; candidates go through
the same lifecycle as aligned ones (lifecycle.py).

Evidence: each training cluster's sample is checked for two URLs that list the same
key=value pairs in another order, or whose paths differ in case only
(``ClusterRec.kv``); per key set, and per site for case, the clusters are summed in the
store table ``kv``. Two kinds of candidates follow, validated like any other (support,
fpr, min_freq, retirement):

1. the *kv rule* of a key set or site (``rule_of``): any seen order -> sorted, or the
   path -> lower case, on the hosts that showed it. It proves the evidence on the
   validation clusters: where order or case does matter (distinct pages), its fpr rises
   and nothing is derived from it.
2. *variants* (``variant``): rules do not chain (first match wins, by support), so a kv
   rule alone is shadowed by the host's aligned rule (which drops the session path or
   www, and keeps order and case). Once a kv rule is valid, every aligned candidate on
   its hosts gets a variant: the same context, with the seen orders tried first and
   written sorted, and the path lowered. An order variant sits beside its rule: it
   matches what the rule matches and merges more, so it outranks it and makes it
   redundant (Alg. 6), with rule order unchanged. A lowering variant replaces its rule
   (``KVRules.variants`` says why).

Which kv rules variants were derived from is stored too (``used``), so a restarted
learner derives the same variants.
"""

from __future__ import annotations

import re

from ..hashing import short_id
from ..rules.ruleset import parse_transformation
from ..rules.urls import site_of_host
from ..state.store import Store
from .candidates import KV_CASE, KV_GROUP, KV_ORDER, CandidateBook
from .casefold import CASE_RULE, case_evidence, has_upper_path, transformation
from .counts import ValidationCounts
from .induce import AmbiguousRule, render
from .lifecycle import Lifecycle
from .paramorder import MAX_ORDERS, branch, order_evidence, order_rule, query_out, split_query
from .records import Candidate, KVRec

ORDER, CASE = KV_ORDER, KV_CASE  # defined beside KV_GROUP: candidates.kv_edit reads them too


def _okey(keys) -> str:
    return ORDER + "\x1e" + "\x1f".join(keys)


def kv_id(key: str) -> str:
    return short_id("r", "kv\x1d" + key)


def variant_id(rid: str) -> str:
    return short_id("r", rid + "\x1dkv")


def evidence(urls: list[str], hosts: list[str]) -> list | None:
    """One cluster's evidence as ``[[key, hosts, orders, bits], ...]``, sorted by key."""
    out = []
    for keys, (orders, bits) in order_evidence(urls).items():
        out.append([_okey(keys), sorted(set(hosts)), orders, bits])
    if case_evidence(urls):
        by_site: dict[str, list[str]] = {}
        for h in sorted(set(hosts)):
            by_site.setdefault(site_of_host(h), []).append(h)
        out.extend([CASE + "\x1e" + site, hs, [], []] for site, hs in by_site.items())
    return sorted(out) or None


def rule_of(key: str, shape: list) -> tuple[str, str]:
    """The kv rule of an evidence key, from its ``shape`` (``KVRules._shape``)."""
    kind, _, rest = key.partition("\x1e")
    if kind == CASE:
        return CASE_RULE
    orders, bits, _hosts = shape
    return order_rule(rest.split("\x1f"), orders, bits)


def _rx(part: tuple, card_set: int) -> str:
    """One rule part as regex text, unanchored (a piece of a context)."""
    return render([part], card_set)[0][1:-1]


def variant(parts: list[tuple], perms: list, lower: bool, card_set: int) -> tuple[str, str] | None:
    """A candidate's rule with valid permutations of its hosts (``perms``: ``[keys,
    orders, bits]``) and lower-case paths (``lower``) folded in: the query becomes
    ``(?:seen orders...|the rule's own query)`` with every branch writing sorted order,
    and path captures are written ``${N:lower}``. None when nothing fits the rule."""
    split = split_query(parts) if perms else None
    fits = []
    if split is not None:
        prefix, pairs, tail = split
        keyres = [re.compile(_rx(k, card_set)) for k, _ in pairs]
        fits = [
            p
            for p in perms
            if len(p[0]) == len(pairs)
            and any(o != p[0] for o in p[1])
            and all(rx.fullmatch(k) for k in p[0] for rx in keyres)
        ]
    if not fits:
        prefix, pairs, tail = parts, [], []
    try:
        ctx, _ = render(prefix, card_set)
        out, lowered = transformation(prefix, card_set, lower)
    except AmbiguousRule:
        return None
    if not fits and not lowered:
        return None
    ctx = ctx[1:-1]
    if fits:
        g = pre_groups = re.compile(ctx).groups
        n = len(pairs)
        branches: list[str] = []
        krefs: list[list[int]] = [[] for _ in range(n)]
        vrefs: list[list[int]] = [[] for _ in range(n)]
        for keys, orders, bits in sorted(fits):
            for order in orders:
                if order == keys:
                    continue
                rx, kr, vr = branch(keys, order, bits, g)
                g += 2 * n
                branches.append(rx)
                for j in range(n):
                    krefs[j].append(kr[j])
                    vrefs[j].append(vr[j])
        own = []
        for j, (k, v) in enumerate(pairs):
            own.append(_rx(k, card_set) + "\\=" + _rx(v, card_set))
            krefs[j].append(g + 1)
            vrefs[j].append(g + 2)
            g += 2
        branches.append("\\&".join(own))
        ctx += "(?:" + "|".join(branches) + ")" + "".join(_rx(p, card_set) for p in tail)
        # "$1" then a literal "0" reads as $10 once there are 10 groups (Java's rule):
        # the prefix's references must read the same with the branches' groups added
        if parse_transformation(out, pre_groups) != parse_transformation(out, g):
            return None
        out += query_out(krefs, vrefs)
    context = "^" + ctx + "$"
    try:
        parse_transformation(out, re.compile(context).groups)
    except (ValueError, re.error):
        return None
    return context, out


class KVRules:
    """The kv state of one learner, in its store. Induction calls ``cluster`` when a
    cluster's sample changes or it is evicted, ``refresh`` for a dirty ``kv:`` group,
    ``variants`` when a group's candidates are derived, ``recheck`` after each derivation;
    the coordinator calls ``count_url`` when a validation URL is counted in or out."""

    def __init__(
        self,
        store: Store,
        book: CandidateBook,
        lifecycle: Lifecycle,
        counts: ValidationCounts,
        dirty_groups: set[str],
        *,
        card_set: int,
        min_freq: int,
    ):
        self.book, self.lifecycle, self.counts = book, lifecycle, counts
        self.dirty_groups = dirty_groups
        self.table = store.table("kv", type=KVRec)
        self.card_set, self.min_freq = card_set, min_freq
        self._live: set[str] = set()  # keys with a candidate or with variants derived
        self._trusted: dict[str, list] = {}  # host -> [permutations, lower-case paths?]
        # validation URLs with capitals in their path, per host (``count_url``)
        self.upper = store.table("kv-upper")
        for key, rec in self.table.items():
            if rec.used is not None or kv_id(key) in book:
                self._live.add(key)
        self._index()

    # evidence ------------------------------------------------------------
    def cluster(self, cl, urls: list[str] | None) -> bool:
        """Replace the cluster's evidence (``urls``: its sample, None once it teaches
        nothing); True when it changed."""
        new = evidence(urls, cl.hosts) if urls else None
        old = cl.kv
        if old == new:
            return False
        for ev, sign in ((old, -1), (new, +1)):
            for key, hosts, orders, bits in ev or ():
                self._apply(key, hosts, orders, bits, sign)
        cl.kv = new
        return True

    def _apply(self, key: str, hosts, orders, bits, sign: int) -> None:
        r = self.table.get(key) or KVRec(bits=[0] * len(bits))
        r.n += sign
        for counts, items in ((r.hosts, hosts), (r.orders, ["\x1f".join(o) for o in orders])):
            for item in items:
                left = counts.get(item, 0) + sign
                if left > 0:
                    counts[item] = left
                else:
                    counts.pop(item, None)
        if sign > 0:  # classes only widen, as generalize.py's slots do
            r.bits = [a | b for a, b in zip(r.bits, bits)]
        self.table[key] = r
        self.dirty_groups.add(KV_GROUP + key)

    @staticmethod
    def _shape(r: KVRec) -> list:
        """[orders, bits, hosts] a kv rule is made of (orders: the most seen)."""
        orders = sorted(r.orders, key=lambda o: (-r.orders[o], o))[:MAX_ORDERS]
        return [[o.split("\x1f") for o in sorted(orders)], list(r.bits), sorted(r.hosts)]

    # candidates ----------------------------------------------------------
    def refresh(self, sid: str) -> None:
        """(Re)derive the kv rule of one evidence key, or drop it."""
        key = sid[len(KV_GROUP) :]
        r = self.table.get(key)
        rid = kv_id(key)
        if r is None or r.n < self.min_freq or (key[0] == ORDER and not r.orders):
            if rid in self.book:
                self.lifecycle.drop(rid)
            if r is not None and r.n <= 0 and r.used is None:
                self.table.pop(key)
                self._live.discard(key)
            return
        shape = self._shape(r)
        context, transformation = rule_of(key, shape)
        self.lifecycle.upsert(Candidate(rid, context, transformation, r.n, tuple(shape[2])), sid)
        self._live.add(key)

    def recheck(self) -> bool:
        """Follow the kv rules' validity: one that became valid (or changed, or stopped
        being valid) re-derives the groups of the candidates on its hosts. True when some
        group was marked dirty."""
        book = self.book
        hosts: set[str] = set()
        for key in sorted(self._live):
            r = self.table.get(key)
            cand = book.get(kv_id(key))
            want = self._shape(r) if r is not None and cand is not None and self.counts.valid(cand.rec) else None
            used = r.used if r is not None else None
            if want != used:
                hosts.update(used[2] if used else ())
                hosts.update(want[2] if want else ())
                r.used = want
                if want is None and r.n <= 0:
                    self.table.pop(key)
                else:
                    self.table[key] = r
            if want is None and cand is None:
                self._live.discard(key)
        if not hosts:
            return False
        self._index()
        marked = False
        for h in sorted(hosts):
            for rid in book.on(h):
                sid = book[rid].rec.group
                if not sid.startswith(KV_GROUP):
                    self.dirty_groups.add(sid)
                    marked = True
        return marked

    def _index(self) -> None:
        trusted: dict[str, list] = {}
        for key in sorted(self._live):
            r = self.table.get(key)
            used = r.used if r is not None else None
            if not used:
                continue
            orders, bits, hosts = used
            for h in hosts:
                t = trusted.setdefault(h, [[], False])
                if key[0] == CASE:
                    t[1] = True
                else:
                    t[0].append([key[2:].split("\x1f"), orders, bits])
        self._trusted = trusted

    def variants(self, now: dict[str, Candidate]) -> dict[str, Candidate]:
        """A group's candidates with kv rules folded in where their hosts have valid ones.

        Permutations are added beside the candidate: the variant writes what it writes
        for every URL but those in another order, and outranks it once it merges more.
        Lower case replaces it: two rules of one host, one lowering and one not, would
        split pages. So lowering goes only where no page can be split: on
        case-insensitive hosts and hosts without capitals; a candidate that also has
        hosts with capitals and no case evidence keeps its rule there, split off."""
        if not self._trusted:
            return now
        out: dict[str, Candidate] = {}
        for c in now.values():
            if not c.parts or not any(h in self._trusted for h in c.hosts):
                out[c.id] = c
                continue
            cased = any(self._trusted.get(h, ((), False))[1] for h in c.hosts)
            keep = tuple(
                h for h in c.hosts if cased and not self._trusted.get(h, ((), False))[1] and self._has_upper(h)
            )
            low = tuple(h for h in c.hosts if h not in keep)
            lowered = self._variant(c, low, True, variant_id(c.id)) if cased else None
            if lowered is None:  # nothing to lower (no letters in the path): orders only
                out[c.id] = c
                self._add(out, self._variant(c, c.hosts, False, variant_id(c.id)))
                continue
            self._add(out, lowered)
            if keep:
                plain = Candidate(variant_id(c.id + "\x1dplain"), c.context, c.transformation, c.freq, keep)
                out[plain.id] = plain
                self._add(out, self._variant(c, keep, False, variant_id(plain.id)))
        return out

    @staticmethod
    def _add(out: dict, c: Candidate | None) -> None:
        if c is not None:
            out[c.id] = c

    def _variant(self, c: Candidate, hosts: tuple, lower: bool, vid: str) -> Candidate | None:
        perms = {}
        for h in hosts:
            for p in self._trusted.get(h, ((), False))[0]:
                perms["\x1f".join(p[0])] = p
        if not perms and not lower:
            return None
        got = variant(list(c.parts), [perms[k] for k in sorted(perms)], lower, self.card_set)
        return None if got is None else Candidate(vid, got[0], got[1], c.freq, hosts)

    def count_url(self, host: str, url: str, delta: int) -> None:
        """A validation URL came or went: count it if its path has capitals."""
        if has_upper_path(url):
            self.upper[host] = self.upper.get(host, 0) + delta

    def _has_upper(self, host: str) -> bool:
        return self.upper.get(host, 0) > 0
