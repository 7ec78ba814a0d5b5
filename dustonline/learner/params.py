"""Query parameters a site ignores, and the other things its pages do not depend on
(scheme, host alias, path edits), learned one name at a time (names.py, rules/params.py).

Aligned rules learn a page's aliases as one combination: ``?utm_source=a&fbclid=b`` and
``?fbclid=c`` are two URL shapes, each needing its own clusters, and a page reached by a
tracking id *and* a session id teaches neither alone. Here each parameter name is its own
hypothesis per site, "the page does not depend on ``name``":

- **evidence**: a dup-cluster in which ``name`` varies between URLs of one path (present
  in some and not in others, or with two values) counts once for its site, whatever else
  varies with it. A cluster showing more than ``card_set`` paths is one body under
  unrelated addresses (a soft-404 page), not aliases of a page: it counts for nothing.
  A name seen with one value only (``?page=1`` and no ``page``) shows a default value,
  not a name the page ignores: it waits for a second value (``one_value``);
- **counter-evidence**: dropping the site's ignored parameters must never give two URLs
  of different clusters one key. Checked over every validation URL of the host when a
  parameter is about to be dropped, and for every URL that arrives later (an index of
  the host's keys in the store, keyindex.py, built from its URLs when its names change); a
  collision vetoes the parameter on the site for good (a veto is evidence of distinct
  pages; nothing the window forgets undoes it, so nothing flaps);
- **transfer**: a name dropped on ``min_freq`` sites or more and vetoed on at most a
  tenth as many is *proven*: a new site drops it on one cluster of its own evidence
  instead of ``min_freq``, still subject to its own counter-evidence. Names are compared
  exactly, so ``sid`` proven elsewhere says nothing about ``id``.

The scheme, pairs of hosts of a site and path edits are names too, with their own ways
of showing evidence (names.py): http read as https, one host moved to the other (the one
with more URLs in the window when it activates; a host moved to is never moved, so a
URL moves once, and moved URLs are checked for collisions under the other host's
names), the trailing slash, an empty query, a last segment, the path's case. Every name
transfers by its class (names.py ``transfer_class``, and the shape of random-token
values); evidence that came before its class was proven waits and is adopted then.

A rule is published per site and name (``p-`` ids), scoped to the hosts where the
parameter varied, and retired when its last cluster of evidence leaves the window or a
collision vetoes it. Crawlers drop the parameters before any rewrite rule
(``RuleSet.canonicalize``), so these rules compose with the aligned ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import msgspec

from ..hashing import short_id
from ..rules.params import BARE, lower_ascii, query_pairs, to_host
from ..rules.ruleset import ACTIVE, RETIRED, Rule
from ..rules.urls import host_of, site_of_host
from ..state.store import Store
from .changes import RuleChanges
from .hosturls import HostURLs
from .keyindex import KeyIndex
from .keys import KeysBefore, keyed, members_of
from .lifecycle import Clock
from .names import (
    CASE,
    HOST,
    LAST,
    LASTP,
    ORDER,
    PAIR,
    QCASE,
    SCHEME,
    SLASH,
    edit_of,
    key_of,
    observe_url,
    pair_hosts,
    pair_name,
    path_edits,
    token_shape,
    transfer_class,
)
from .records import CANDIDATE, ParamEv, ParamObs
from .scope import EveryHost, is_query_name
from .transfer import ClassCounts, TransferStats

VETOED = "vetoed"
_EVERY_URL = (HOST, SLASH, LAST, SCHEME, CASE, QCASE, ORDER)  # names every URL has: two values are the evidence
MAX_PARAMS = 32  # names looked at per URL: a longer query is data, not aliases
MAX_VALUES = 2  # values kept per name and cluster: two distinct ones are all the evidence needs
_PREPARED_CAP = 1 << 16  # URLs whose keys are remembered (prepared)
MAX_SITE_HOSTS = 64  # hosts of a site a scheme rule may cover beyond those that showed it


class HostKeys:
    """The keys of one host's URLs, keyed to ``target`` under ``names`` (params.prepared):
    one check per host and URL strings only, where a memo per URL held a copy of the
    names with every key (allocations the cyclic collector then traversed)."""

    __slots__ = ("target", "names", "keys")

    def __init__(self, target: str | None, names: list[str]):
        self.target = target
        self.names = names
        self.keys: dict[str, str] = {}


def one_value(name: str, values: list[str]) -> bool:
    """Has a parameter varied with one value only (``?page=1`` and no ``page``)? Then the
    evidence says that value is the default, not that the page ignores the name: dropping
    it would merge ``?page=2`` too, a value never seen as a duplicate. A bare ``?name``
    is a flag whose two states (there or not) were both seen; names of the scheme, hosts
    and path edits have their own values."""
    return not name.startswith("=") and len(values) == 1 and values[0] != BARE


def param_rule_id(site: str, name: str) -> str:
    return short_id("p", "param\x1d" + site + "\x1d" + name)


class ParamRules:
    def __init__(
        self,
        store: Store,
        host_urls: HostURLs,
        changes: RuleChanges,
        clock: Clock,
        min_freq: int,
        card_set: int,
        confidence: float = 0.875,
    ):
        self.obs = store.table("pobs", type=ParamObs, filtered=True)  # most URLs are of clusters never observed
        self.ev = store.table("pev", type=ParamEv)
        self.transfer = TransferStats(store, min_freq)  # transfer class -> sites active, vetoed (pooled)
        self.every = EveryHost(store, changes, clock, confidence)  # names dropped on every host (scope.py)
        # transfer class NUL site NUL name -> 1: candidates with evidence short of min_freq,
        # activated when their class becomes proven on other sites
        self.waiting = store.table("pwait")
        self.drops = store.table("pdrop")  # host -> names dropped there, in activation order
        self.site_hosts = store.table("phosts")  # site -> its hosts seen in dup-clusters (the scheme rule's scope)
        # host -> the host its URLs move to (an active pair), and its inverse; few, and read
        # for every URL, so kept in memory as well
        self._moves_t = store.table("pmove")
        self.moves: dict[str, str] = dict(self._moves_t.items())
        self.members: dict[str, list[str]] = members_of(self.moves)
        # host -> key under its dropped names -> [cluster, URLs] (keyindex.py)
        self.keys = KeyIndex(store)
        self.host_urls = host_urls
        self.changes = changes
        self.clock = clock
        self.min_freq = min_freq
        self.card_set = card_set
        # hosts whose URLs read otherwise since last taken (names or moves changed):
        # the rewrite rules' validation counts them again (online.py)
        self.renamed: set[str] = set()
        # the keys of validation URLs, per host: a validation URL is prepared when it is
        # counted, when its cluster is derived, and at every backfill of its host; keying
        # it once is 8% of a learner run
        self._keys: dict[str, HostKeys] = {}
        self._nkeys = 0  # URLs whose keys are remembered, over every host
        self.keys_cap = _PREPARED_CAP
        # what keys read before this event's first change of names or moves (every move,
        # the old names of the hosts renamed), and the validation counts' sequence then:
        # the rewrite rules' counts move from those keys to the new ones (online.py)
        self._before: KeysBefore | None = None
        self.count_seq: Callable[[], int] = lambda: 0

    # ------------------------------------------------------------------ evidence
    def observe(self, url: str, host: str, cid: str, cluster_n: int, noise: bool, before: str | None) -> None:
        """A URL joined cluster ``cid`` (now ``cluster_n`` URLs; ``before``: the one URL it
        had, when known): the names that vary from now on between the cluster's URLs of
        one address (site and path) are evidence for that site. A cluster may span sites
        (one image served by many): each site's evidence is its own URLs'."""
        o = self.obs.get(cid)
        if o is None:
            if cluster_n < 2 or noise:
                return  # one URL shows no variation; its second brings it along (``before``)
            o = ParamObs(site_of_host(host))
            if before is not None and cluster_n == 2:
                bhost = host_of(before)
                address, pairs, where, seg, qnames, order = observe_url(before, bhost, site_of_host(bhost))
                o.paths[address] = 1
                self._record(o, address, pairs)
                self._record_last(o, address, where, seg, qnames, order)
            else:
                o.blind = cluster_n - 1
        if o.noisy:
            return
        site = site_of_host(host)
        self._site_host(site, host)
        address, pairs, where, seg, qnames, order = observe_url(url, host, site)
        o.paths[address] = o.paths.get(address, 0) + 1
        if noise or len(o.paths) > self.card_set:
            self._withdraw(cid, o)
            return
        names = self._record(o, address, pairs)
        self._record_last(o, address, where, seg, qnames, order)
        fresh = []
        shapes: dict[str, str] = {}
        values: dict[str, list[str]] = {}
        for key, s in o.seen.items():
            a, _, name = key.rpartition("\x00")
            if name in _EVERY_URL:
                if len(s) <= 2:
                    continue
                if name == HOST:
                    name = pair_name(s[1], s[2])
                elif name == LAST:
                    if "" not in (s[1], s[2]):
                        continue  # two other segments: another page, or an alias path
                    name = LASTP + (s[1] or s[2])
                varied = True
            else:
                varied = len(s) > 2 or s[0] < o.paths[a] + o.blind  # two values, or present and absent
            which = a.partition("\x00")[0] + "\x00" + name
            if which not in o.varied and which not in fresh and varied:
                fresh.append(which)
                if not name.startswith("="):
                    shapes[which] = token_shape(s[1:])
                    values[which] = s[1:]
        o.varied.extend(fresh)
        self.obs[cid] = o
        for which in fresh:
            wsite, _, name = which.partition("\x00")
            self._evidence(
                wsite,
                name,
                +1,
                host if wsite == site and not name.startswith(PAIR) else None,
                shapes.get(which, ""),
                values.get(which, ()),
            )
        for name in names:
            if site + "\x00" + name in o.varied and site + "\x00" + name not in fresh:
                self._scope(site, name, host)

    def _site_host(self, site: str, host: str) -> None:
        """A host of the site: the scheme rule, once there, covers it too (if its URLs allow):
        a scheme rule on ``x.com`` but not ``www.x.com`` would split the keys of a rule that
        moves one to the other."""
        hosts = self.site_hosts.get(site) or []
        if host in hosts or len(hosts) >= MAX_SITE_HOSTS:
            return
        self.site_hosts[site] = hosts + [host]
        ev = self.ev.get(site + "\x00" + SCHEME)
        if ev is not None and ev.status == ACTIVE and host not in ev.hosts:
            self._scope(site, SCHEME, host)

    def _record_last(self, o: ParamObs, address: str, where: str, seg: str, qnames: str, order: str) -> None:
        """The last segment under the path before it, the path under its lowered form, the
        query's names under their lowered form, and their order under the query sorted:
        the names whose evidence is two URLs of different addresses."""
        self._record(o, where, [(LAST, seg)])
        lowered = lower_ascii(address)
        self._record(o, lowered, [(CASE, address)])
        if qnames:
            self._record(o, lowered + "\x00?" + lower_ascii(qnames), [(QCASE, qnames)])
        if order:
            self._record(o, address + "\x00&" + order, [(ORDER, qnames)])

    @staticmethod
    def _record(o: ParamObs, address: str, pairs: list[tuple[str, str]]) -> list[str]:
        values: dict[str, str] = {}
        for name, value in pairs[:MAX_PARAMS]:
            values.setdefault(name, value)
        for name, value in values.items():
            key = address + "\x00" + name
            s = o.seen.get(key)
            if s is None:
                o.seen[key] = [1, value]
            else:
                s[0] += 1
                if len(s) <= MAX_VALUES and value not in s:  # s[0], the count, is no str
                    s.append(value)
        return list(values)

    def _withdraw(self, cid: str, o: ParamObs) -> None:
        """The cluster is noise: what it counted is taken back, and it is not observed again."""
        for which in o.varied:
            site, _, name = which.partition("\x00")
            self._evidence(site, name, -1, None)
        self.obs[cid] = ParamObs(o.site, noisy=True)

    def forget_cluster(self, cid: str) -> None:
        """The cluster left the window: its evidence goes with it."""
        o = self.obs.pop(cid)
        if o is not None and not o.noisy:
            for which in o.varied:
                site, _, name = which.partition("\x00")
                self._evidence(site, name, -1, None)

    def _evidence(
        self, site: str, name: str, delta: int, host: str | None, shape: str = "", values: Iterable[str] = ()
    ) -> None:
        key = site + "\x00" + name
        ev = self.ev.get(key) or ParamEv()
        ev.n += delta
        if shape and not ev.shape and ev.status == CANDIDATE:  # fixed while it counts in the class
            ev.shape = shape
        for v in values:
            if len(ev.values) < 2 and v not in ev.values:
                ev.values = ev.values + [v]
        if host is not None and host not in ev.hosts:
            ev.hosts.append(host)
            if ev.status == ACTIVE:
                self.ev[key] = ev
                self._scope(site, name, host, ev)
                return
        if ev.status == CANDIDATE and self._ready(name, ev):
            self._activate(site, name, ev)
        elif ev.status == ACTIVE and ev.n <= 0 and name not in self.every.active:
            self._retire(site, name, ev, CANDIDATE)
        for cls in self._classes(name, ev):
            wkey = cls + "\x00" + key
            if ev.status == CANDIDATE and ev.n > 0:
                self.waiting[wkey] = 1
            elif delta < 0 or ev.status != CANDIDATE:
                self.waiting.pop(wkey)
        if ev.n <= 0 and ev.status == CANDIDATE and not ev.version:
            self.ev.pop(key)
        else:
            self.ev[key] = ev

    def need(self, name: str, shape: str = "") -> int:
        """Clusters of a site's own evidence before it drops ``name``: ``min_freq``, or
        one when other sites have proven the name, or names of values shaped alike
        (transfer)."""
        return 1 if self._transfers(name, shape) else self.min_freq

    def _transfers(self, name: str, shape: str) -> bool:
        return self._proven(transfer_class(name)) or bool(shape and self._proven(shape))

    def _ready(self, name: str, ev: ParamEv) -> bool:
        """Enough evidence to drop ``name`` on the site: ``need`` clusters, and unless other
        sites have proven it, more than one value seen (``one_value``)."""
        if ev.n < self.need(name, ev.shape):
            return False
        return self._transfers(name, ev.shape) or not one_value(name, ev.values)

    @staticmethod
    def _classes(name: str, ev: ParamEv) -> list[str]:
        """The transfer classes whose statistics the name's fate on a site counts in."""
        return [transfer_class(name)] + ([ev.shape] if ev.shape else [])

    def _stats(self, name: str, ev: ParamEv, active: int, vetoed: int) -> None:
        for cls in self._classes(name, ev):
            self._name_stats(cls, active, vetoed)

    # ------------------------------------------------------------------ decisions
    def _activate(self, site: str, name: str, ev: ParamEv) -> None:
        if name.startswith(PAIR):
            return self._activate_pair(site, name, ev)
        if name == SCHEME:
            ev.hosts.extend(h for h in self.site_hosts.get(site) or () if h not in ev.hosts)
        for h in ev.hosts:
            if not self._collision_free(h, self._dropped(h) + [name]):
                self._veto(site, name, ev)
                return
        for h in ev.hosts:
            self._set_drops(h, self._dropped(h) + [name])
        self._publish(site, name, ev, ACTIVE)
        self.ev[site + "\x00" + name] = ev  # stored before the name may wake other sites
        self._stats(name, ev, +1, 0)
        self._carry(site, name, ev.hosts)

    def _carry(self, site: str, name: str, hosts: list[str]) -> None:
        """A name dropped on a host that moves holds on the host it moves to as well:
        RuleSet applies the target's rules to moved URLs, so without this the moved
        host's own would never apply (``/a/index.html`` on ``x.com`` moved to
        ``www.x.com`` keeps its ``index.html``)."""
        for h in list(hosts):
            target = self.moves.get(h)
            if target:
                self._scope(site, name, target)

    def _scope(self, site: str, name: str, host: str, ev: ParamEv | None = None) -> None:
        """``name`` varied on another host of the site: an active rule extends to it if
        the host's URLs allow."""
        key = site + "\x00" + name
        if ev is None:
            ev = self.ev.get(key)
            if ev is None or host in ev.hosts:
                return
            ev.hosts.append(host)
            if ev.status != ACTIVE:
                self.ev[key] = ev
                return
        if self._collision_free(host, self._dropped(host) + [name]):
            self._set_drops(host, self._dropped(host) + [name])
            self._publish(site, name, ev, ACTIVE)
            self.ev[key] = ev
            self._carry(site, name, [host])
            return
        self._veto(site, name, ev)
        self.ev[key] = ev

    def _activate_pair(self, site: str, name: str, ev: ParamEv) -> None:
        """Move one host of the pair to the other, unless a host already moves (it waits:
        a URL is moved once) or the moved URLs would share a key with another cluster's."""
        a, b = pair_hosts(name)
        size = {h: len(self.host_urls.of(h)) for h in (a, b)}
        target, moved = sorted((a, b), key=lambda h: (-size[h], len(h), h))
        if self.moves.get(target) or self.moves.get(moved) or self.members.get(moved):
            return
        members = list(self.members.get(target) or ())
        if not self._collision_free(target, self._dropped(target), members + [moved]):
            self._veto(site, name, ev)
            return
        self._changing()
        self.moves[moved] = self._moves_t[moved] = target
        self.renamed.update((moved, target))
        self.members[target] = sorted(members + [moved])  # the order a restart rebuilds
        self.keys.forget(target)
        ev.hosts, ev.target = [moved], target
        self._publish(site, name, ev, ACTIVE)
        self.ev[site + "\x00" + name] = ev  # stored before the class may wake other sites
        self._stats(name, ev, +1, 0)
        for dropped in self._dropped(moved):
            if self.ev.get(site + "\x00" + dropped) is not None:
                self._carry(site, dropped, [moved])

    def _veto(self, site: str, name: str, ev: ParamEv) -> None:
        self.every.vetoed(name, ev.hosts)
        if ev.status == ACTIVE:
            self._retire(site, name, ev, VETOED)
        else:
            ev.status = VETOED
        self._stats(name, ev, 0, +1)
        self.ev[site + "\x00" + name] = ev

    def _retire(self, site: str, name: str, ev: ParamEv, status: str) -> None:
        self._stats(name, ev, -1, 0)
        if name.startswith(PAIR):
            self._changing()
            self.renamed.update(ev.hosts)
            self.renamed.add(ev.target)
            for h in ev.hosts:
                self.moves.pop(h, None)
                self._moves_t.pop(h)
                left = [m for m in self.members.get(ev.target) or () if m != h]
                if left:
                    self.members[ev.target] = left
                else:
                    self.members.pop(ev.target, None)
            self.keys.forget(ev.target)
            self._publish(site, name, ev, status)
            ev.target = ""
            for h in ev.hosts:  # its own names hold again, on its own URLs
                names = self.drops.get(h)
                if names and not self._build_index(h, names):
                    self._recheck(h, list(names))
            return
        for h in ev.hosts:
            d = self._dropped(h)
            if name in d:
                d.remove(name)
                self._set_drops(h, d)
        self._publish(site, name, ev, status)

    def _publish(self, site: str, name: str, ev: ParamEv, status: str) -> None:
        fresh = status == ACTIVE and ev.status != ACTIVE
        ev.status = status
        ev.version += 1
        ev.updated = self.clock.now
        ev.pub = sorted(ev.hosts)
        ev.support = ev.n
        self.changes.add(self._rule(site, name, ev), fresh)

    def _rule(self, site: str, name: str, ev: ParamEv) -> Rule:
        return Rule(
            id=param_rule_id(site, name),
            hosts=ev.pub,
            context="",
            transformation="",
            drop_param=msgspec.UNSET if name.startswith("=") else name,
            canonical_scheme="https" if name == SCHEME else msgspec.UNSET,
            canonical_host=ev.target if name.startswith(PAIR) else msgspec.UNSET,
            normalize=edit_of(name) or msgspec.UNSET,
            support=ev.support,
            freq=ev.support,
            version=ev.version,
            status=ACTIVE if ev.status == ACTIVE else RETIRED,
            updated=ev.updated,
        )

    def _proven(self, cls: str) -> bool:
        return self.transfer.proven(cls)

    def _name_stats(self, cls: str, active: int, vetoed: int) -> None:
        if self.transfer.add(cls, active, vetoed):
            self._wake(cls)
        self._judge(cls)

    def _judge(self, cls: str) -> None:
        """Is ``cls`` (a query name) still dropped on every host? When it stops being, the
        sites that adopted it on no evidence of their own drop it too."""
        if not is_query_name(cls):  # shapes and the scheme, host and edit names: no counts read
            return
        if self.every.judge(cls, *self.transfer.counts(cls)) is False:
            for key, ev in list(self.ev.items()):
                site, _, name = key.partition("\x00")
                if name == cls and ev.status == ACTIVE and ev.n <= 0:
                    self._retire(site, name, ev, CANDIDATE)
                    self.ev[key] = ev

    def pool(self, others: ClassCounts) -> None:
        """The other partitions' transfer statistics, pooled (transfer.py): classes they
        prove wake this learner's waiting sites."""
        changed = sorted(set(others) | self.every.active)
        for cls in self.transfer.pool(others):
            self._wake(cls)
        for cls in changed:
            self._judge(cls)

    def _wake(self, cls: str) -> None:
        """``cls`` is proven now: sites that saw fewer than ``min_freq`` clusters of it
        adopt it as if it had been proven when their evidence came (the order in which
        sites are crawled says nothing about the name)."""
        for wkey, _ in list(self.waiting.items(cls + "\x00")):
            key = wkey[len(cls) + 1 :]
            site, _, name = key.partition("\x00")
            ev = self.ev.get(key)
            if ev is not None and ev.status == CANDIDATE and self._ready(name, ev):
                self._activate(site, name, ev)
                self.ev[key] = ev
            if ev is None or ev.status != CANDIDATE:
                self.waiting.pop(wkey)

    def edits_of(self, host: str) -> list[str]:
        """The path edits RuleSet applies on ``host`` (the host rewrite rules are tried on)."""
        names = self.drops.get(host)
        return path_edits(names) if names else []

    # ------------------------------------------------------------------ counter-evidence
    def prepared(self, url: str, host: str | None = None) -> str:
        """``url`` (on ``host``, when the caller knows it) as RuleSet hands it to rewrite
        rules: moved to the host its host moves to, then that host's scheme, parameter and
        path-edit rules applied."""
        if host is None:
            host = host_of(url)
        target = self.moves.get(host)
        names = self.drops.get(target or host)
        if not names:
            return keyed(url, target, names)
        hk = self._keys.get(host)
        if hk is None or hk.target != target or hk.names != names:
            hk = self._host_keys(host, target, names)
        key = hk.keys.get(url)
        if key is None:
            key = keyed(url, target, names)
            if self._nkeys >= self.keys_cap:
                self._forget_keys()
                if self._keys.get(host) is not hk:  # this host's went too
                    hk = self._host_keys(host, target, names)
            hk.keys[url] = key
            self._nkeys += 1
        return key

    def _host_keys(self, host: str, target: str | None, names: list[str]) -> HostKeys:
        """A host's memo of keys, empty, for URLs keyed to ``target`` under ``names``."""
        old = self._keys.pop(host, None)
        if old is not None:
            self._nkeys -= len(old.keys)
        hk = self._keys[host] = HostKeys(target, list(names))  # a copy: a stored list may change in place
        return hk

    def _forget_keys(self) -> None:
        """The memo is full: the hosts whose keys were remembered first go, down to half
        (those keyed lately are walked again soonest: a host's back-fills come in runs)."""
        keys = self._keys
        for host in list(keys):
            if self._nkeys <= self.keys_cap // 2:
                break
            self._nkeys -= len(keys.pop(host).keys)

    def _changing(self, host: str | None = None) -> None:
        """Before names (of ``host``) or moves change: what the keys read until now."""
        if self._before is None:
            self._before = KeysBefore(dict(self.moves), self.drops, self.count_seq())
        if host is not None:
            self._before.keep(host)

    def take_before(self) -> KeysBefore | None:
        """How URLs were keyed before this event's first change of names or moves (None:
        nothing changed); forgotten for the next event."""
        before, self._before = self._before, None
        return before

    def _dropped(self, host: str) -> list[str]:
        return list(self.drops.get(host) or ())

    def _group(self, host: str, members: list[str] | None = None) -> list[tuple[str, dict[str, str]]]:
        """The validation URLs keyed under ``host``'s names: its own, and those of the
        hosts that move to it (``members``: instead of the current ones)."""
        if members is None:
            members = list(self.members.get(host) or ())
        return [(h, self.host_urls.of(h)) for h in [host] + members]

    def _keyed(self, host: str, names: list[str], members: list[str] | None = None) -> Iterator[tuple[str, str]]:
        """(key, cluster) of the validation URLs keyed under ``host``'s names (``_group``)."""
        for h, urls in self._group(host, members):
            for url, cid in urls.items():
                yield key_of(url if h == host else to_host(url, host), names), cid

    def _collision_free(self, host: str, names: list[str], members: list[str] | None = None) -> bool:
        if members is None and self.moves.get(host):
            return True  # its URLs are keyed on the host they move to, under that one's names
        keys: dict[str, str] = {}
        for k, cid in self._keyed(host, names, members):
            if keys.setdefault(k, cid) != cid:
                return False
        return True

    def _set_drops(self, host: str, names: list[str]) -> None:
        """The host's dropped names; its key index is rebuilt under them when next needed."""
        self._changing(host)
        self.keys.forget(host)
        self.renamed.add(host)
        if names:
            self.drops[host] = names
        else:
            self.drops.pop(host)

    def _build_index(self, host: str, names: list[str]) -> bool:
        """The keys of the host's validation URLs (and its members') as they are now;
        False on a collision."""
        return self.keys.build(host, self._keyed(host, names))

    def count_url(self, url: str, host: str, cid: str, delta: int) -> None:
        """A validation URL came (+1) or went (-1), already added to or removed from the
        host's URLs: its key under the host's dropped names is counted; a key shared with
        another cluster vetoes what made it. A moved host's URLs count on the host they
        move to."""
        if delta > 0 and self.every.active and "?" in url:
            self._first_sight(url, host)
        raw, raw_host, target = url, host, self.moves.get(host)
        if target:
            url, host = to_host(url, target), target
        names = self.drops.get(host)
        if not names:
            if not self.members.get(host):
                return
            names = []
        prefix = self.keys.of(host)
        if prefix is None:  # built from the URLs as they are now, this one included or gone
            if not self._build_index(host, names):
                self._recheck(host, list(names))
            return
        if not self.keys.count(prefix, self.prepared(raw, raw_host) if names else url, cid, delta):
            self._recheck(host, list(names))

    def _first_sight(self, url: str, host: str) -> None:
        """A URL with names dropped on every host (scope.py): the site adopts those it
        has neither dropped on this host nor vetoed, checked for collisions over the
        host's URLs like any adoption; a vetoed site's host is excepted."""
        every = self.every.active
        target = self.moves.get(host)
        dropped = self.drops.get(target or host) or ()
        names = [n for n, _ in query_pairs(url)[:MAX_PARAMS] if n in every and n not in dropped]
        if not names:
            return
        site = site_of_host(host)
        for name in dict.fromkeys(names):
            key = site + "\x00" + name
            ev = self.ev.get(key)
            if ev is None:
                ev = ParamEv()
            if ev.status == VETOED:
                self.every.vetoed(name, [host])
                continue
            if self.every.excepted(name, host):
                continue
            if ev.status == ACTIVE:
                self._scope(site, name, host)
                continue
            if host not in ev.hosts:
                ev.hosts.append(host)
            self._activate(site, name, ev)
            self.ev[key] = ev

    def _recheck(self, host: str, names: list[str]) -> None:
        """Two clusters share a key: keep the host's names, oldest first, while they stay
        collision-free (the URL that collided is among the host's URLs already); veto the
        rest on their sites. Then the hosts that move to it, in name order, under the names
        kept."""
        site = site_of_host(host)
        kept: list[str] = []
        for name in names:
            if self._collision_free(host, kept + [name], []):
                kept.append(name)
                continue
            key = site + "\x00" + name
            ev = self.ev.get(key)
            if ev is not None:
                self._veto(site, name, ev)  # also removes it from its other hosts
        self._set_drops(host, kept)
        ok: list[str] = []
        for m in list(self.members.get(host) or ()):
            if self._collision_free(host, kept, ok + [m]):
                ok.append(m)
                continue
            name = pair_name(host, m)
            ev = self.ev.get(site + "\x00" + name)
            if ev is not None:
                self._veto(site, name, ev)

    # ------------------------------------------------------------------ reading
    def rules(self) -> list[Rule]:
        """The active parameter rules as last published."""
        out = []
        for key, ev in self.ev.items():
            if ev.status == ACTIVE:
                site, _, name = key.partition("\x00")
                out.append(self._rule(site, name, ev))
        return out + self.every.rules()

    def records(self) -> Iterable[dict]:
        for key, ev in self.ev.items():
            site, _, name = key.partition("\x00")
            yield {"id": param_rule_id(site, name), "site": site, "param": name, **msgspec.structs.asdict(ev)}
