"""Shards: what a worker group places on its partitions, so that its rules do not depend
on how many partitions or workers it has.

Every site belongs to one of ``learning.shards`` shards, by the murmur2 hash of its
registered domain (as Kafka's partitioner hashes the pages topic's keys), and each shard
has a learner of its own (online.py). A topic of N partitions, N dividing the shard
count G, holds the sites of shard s in partition s mod N, since (h mod G) mod N = h mod N.
So whether the shards are learned in one process (``dustonline learn``), as N partitions
(``learn --partitions N``) or by a worker group, each shard learns the same events in the
same order and derives at the same points; what spans shards (shared.py) is pooled at
rounds: every ``learning.pool_every`` events of the group's input, and when it ends. The
rules are the same, as Flink's key groups keep a job's result independent of its
parallelism. ``learning.shards: 0`` is one shard per partition (one learner for
``dustonline learn``): rules then depend on the partition count.

A site on two registered domains is two sites here unless both hash to one shard; with
``learning.join_after`` they are joined at rounds (joins.py): the domain moves, with the
URLs its shard holds, to the other's shard. A group that pools itself (embedded) decides
the joins; a worker group's partition reports its rounds to the coordinator, which
decides them, and reads a domain joined to its shards from the domain's home partition
(``partitions``, docs/DESIGN.md §4)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import msgspec

from ..config import Config
from ..events.event import FetchEvent
from ..events.routing import partition_of_host
from ..rules.ruleset import Rule
from ..rules.urls import host_of, site_of_host
from ..state.store import Store
from .joins import Joins, PartitionJoins
from .online import OnlineLearner
from .records import Move
from .shared import BITS, CHECKS, CLASSES, Counts, others_of

POOL_ROUNDS = 8  # rounds at the end of the input while the counts change (an adoption is one more site)

Partials = list[tuple[int, Rule]]  # (shard, rule change), for the merge (rules/merge.py)


def shard_count(config: Config, partitions: int) -> int:
    """The shards a group of ``partitions`` partitions learns; ValueError, saying what
    to change, when the partitions cannot hold whole shards."""
    shards = config.learning.shards or partitions
    if shards % partitions:
        raise ValueError(
            f"{partitions} partitions cannot hold learning.shards {shards} whole: use a partition count that "
            f"divides it ({', '.join(str(n) for n in range(1, shards + 1) if shards % n == 0)}), or set "
            "learning.shards to a multiple of the partitions (a different shard count learns other rules)"
        )
    return shards


def summed(summaries: Iterable[dict]) -> dict:
    """The learners' counters (``summary()``) summed (sizes too: a site is in one shard)."""
    total: dict = {}
    for summary in summaries:
        for k, v in summary.items():
            if isinstance(v, (int, float)):
                total[k] = total.get(k, 0) + v
    return total


def changes(last: Counts, now: Counts) -> tuple[Counts, list[str]]:
    """What ``OnlineLearner.pool`` reads to go from adopting ``last`` to ``now``
    (``_handover``), and the names gone."""
    changed = {name for name, _ in last.items() ^ now.items()}
    classes: set[str] = set()
    by_sid: dict[str, set[str]] = {}
    for name in now:
        _index(by_sid, classes, name, True)
    return _handover(now, changed, classes, by_sid), sorted(k for k in changed if k not in now)


def _handover(now: Counts, changed: Iterable[str], classes: set[str], by_sid: dict[str, set[str]]) -> Counts:
    """Of ``now``, what a learner that adopted it before ``changed`` changed must read:
    every class (few; a class is judged again whether or not it changed), the changed
    validation counts, and every name of a shape group with a change (a group's counts
    are replaced whole)."""
    head = set(classes)
    groups: set[str] = set()
    for name in changed:
        kind, sid = _kind_sid(name)
        if kind == CHECKS:
            if name in now:
                head.add(name)
        elif kind != CLASSES:
            groups.update(by_sid.get(sid, ()))
    delta = {k: now[k] for k in sorted(head)}
    delta.update((k, now[k]) for k in sorted(groups))
    return delta


def _kind_sid(name: str) -> tuple[str, str]:
    return name[:2], name[2:].partition("\x00")[0]


def _index(by_sid: dict[str, set[str]], classes: set[str], name: str, present: bool) -> None:
    """Keep ``_handover``'s index of a share: its classes, and its names by shape group."""
    kind, sid = _kind_sid(name)
    if kind == CLASSES:
        (classes.add if present else classes.discard)(name)
    elif kind != CHECKS:
        names = by_sid.setdefault(sid, set())
        if present:
            names.add(name)
        else:
            names.discard(name)
            if not names:
                del by_sid[sid]


class Shares:
    """Each shard's share of the others' counts (``others_of``), kept between the rounds
    of one group so that a round costs what changed, not all that was counted: ``update``
    finds the names that changed from the counts, and hands each shard what ``changes``
    would, without reading all of its share."""

    def __init__(self, counts: list[Counts]):
        self.others = others_of(counts)
        self.by_sid: list[dict[str, set[str]]] = []  # per shard: shape id -> its names in others
        self.classes: list[set[str]] = []
        for o in self.others:
            by_sid: dict[str, set[str]] = {}
            classes: set[str] = set()
            for name in o:
                _index(by_sid, classes, name, True)
            self.by_sid.append(by_sid)
            self.classes.append(classes)

    def update(self, last: list[Counts], counts: list[Counts]) -> list[tuple[Counts, list[str]]] | None:
        """Per shard, (what changed in its share, the names gone from it) as ``changes``
        gives them; None when no shard's counts changed."""
        names: set[str] = set()
        for now, was in zip(counts, last):
            for name, _ in now.items() ^ was.items():
                names.add(name)
        if not names:
            return None
        out: list[tuple[Counts, list[str]]] = []
        order = sorted(names)
        for p, share in enumerate(self.others):
            changed: list[str] = []
            gone: list[str] = []
            for name in order:
                v = _share_of(counts, p, name)
                old = share.get(name)
                if v == old:
                    continue
                if v is None:
                    del share[name]
                    gone.append(name)
                    _index(self.by_sid[p], self.classes[p], name, False)
                else:
                    share[name] = v
                    if old is None:
                        _index(self.by_sid[p], self.classes[p], name, True)
                changed.append(name)
            if not changed:
                out.append(({}, []))
                continue
            delta = _handover(share, changed, self.classes[p], self.by_sid[p])
            out.append((delta, gone))
        return out


def _share_of(counts: list[Counts], p: int, name: str) -> tuple[int, ...] | None:
    """``others_of(counts)[p].get(name)``, for one name."""
    if name.startswith(BITS):
        bits = 0
        for q, c in enumerate(counts):
            if q != p:
                v = c.get(name)
                if v is not None:
                    bits |= v[0]
        return (bits,) if bits else None
    total: list[int] | None = None
    for q, c in enumerate(counts):
        if q != p:
            v = c.get(name)
            if v is not None:
                if total is None:
                    total = list(v)
                else:
                    for j, x in enumerate(v):
                        total[j] += x
    return tuple(total) if total is not None and any(total) else None


def shards_of(partition: int, partitions: int, shards: int) -> list[int]:
    """The shards partition ``partition`` of ``partitions`` holds."""
    return list(range(partition, shards, partitions))


class Rounds:
    """The pooling among the shards of one group, round after round: what each shard
    adopts from the others' counts (``Shares``). Apart from the learners, so that shards
    in other processes (parallel.py) pool as the shards of one process do."""

    def __init__(self) -> None:
        self._pooled: list[Counts] | None = None  # the counts as last pooled
        self._shares: Shares | None = None  # each shard's share of the others' counts, as pooled last

    def shares(self, counts: list[Counts]) -> list[tuple[Counts, list[str] | None]] | None:
        """Per shard (in the order of ``counts``), what it adopts: its whole share with
        None the first time, then (what changed, the names gone); None when the counts
        are those pooled last. The next round compares with these dicts: a caller hands
        new ones, never these changed."""
        adopt: list[tuple[Counts, list[str] | None]]
        if self._shares is None or self._pooled is None:
            self._shares = Shares(counts)
            adopt = [(share, None) for share in self._shares.others]  # read, not kept
        else:
            changed = self._shares.update(self._pooled, counts)
            if changed is None:
                return None
            adopt = list(changed)
        self._pooled = list(counts)  # a list the caller may reuse
        return adopt


def adopt_share(lrn: OnlineLearner, share: Counts, gone: list[str] | None) -> list[Rule]:
    """One shard's part of a round (``Rounds.shares``): adopt, then derive what follows."""
    out: list[Rule] = []
    if gone is None:
        out += lrn.pool(share)
    elif share or gone:
        out += lrn.pool(share, gone)
    out += lrn.flush()
    return out


class ShardGroup:
    """The learners of some shards: all of them (embedded), or one partition's (a
    worker), each event routed to its site's shard. With ``rounds`` the shards pool
    among themselves, as no other partition holds shards; in a group of partitions the
    coordinator pools them (stream/pool.py) and hands each partition its shards' share
    (``pool``). Rule changes come back with their shard: the merge keeps one partial per
    rule and shard."""

    def __init__(
        self,
        config: Config,
        shards: Iterable[int],
        total: int,
        store_of: Callable[[int], Store | None],
        rounds: bool,
        root: Store | None = None,
        partitions: int = 0,
        state: Store | None = None,
    ):
        self.total = total
        self.root = root  # the store the shards' namespaces are in, if they are (Store.namespace)
        self.shards = list(shards)
        self.learners = [OnlineLearner(config, store_of(s)) for s in self.shards]
        self.rounds = rounds and len(self.shards) > 1
        self.pool_every = config.learning.pool_every if self.rounds else 0
        # the input so far, from the learners' own counts: a resumed run pools at the
        # same points as one that never stopped
        self.events = sum(lrn.stats.events for lrn in self.learners)
        self._index = {s: i for i, s in enumerate(self.shards)}
        self._rounds = Rounds()
        self._adopted: list[Counts | None] = [None] * len(self.shards)  # what each adopted last
        # a group that pools itself decides joins too; a process of parallel.py is told them
        join_after = config.learning.join_after if self.rounds else 0
        self.joins = Joins(total, join_after) if join_after else None
        # per shard: URLs learned again at joins, and of those ignored: not input
        self.relearned: dict[int, list[int]] = {}
        # per shard joined: the events of domains that moved there since the last round, as
        # (home shard, event), learned at the next round: a worker group's partition reads
        # them then from the partitions they arrive on (docs/DESIGN.md §4)
        self.held: dict[int, list[tuple[int, FetchEvent]]] = {}
        saved = root.table("joins").get("state") if root is not None and self.joins is not None else None
        if saved is not None and self.joins is not None:  # a resumed run (learn --state)
            if saved[0]:  # written whole, before the journal
                self.joins.restore(saved[0])
            else:
                assert root is not None  # (saved was read from it)
                self.joins.load(root.table("joins"), "digests")
            if saved[1] and isinstance(saved[1][0], int):  # a state of the first joins: one count
                self.relearned = {-1: list(saved[1])}
            else:
                self.relearned = {s: [e, i] for s, e, i in saved[1]}
            self.held = held_of(saved[2]) if len(saved) > 2 else {}
            self.events -= sum(e for e, _ in self.relearned.values())
            self.events += sum(len(h) for h in self.held.values())  # input, learned at the next round
        # a partition of a worker group of ``partitions`` partitions reports its rounds to
        # the coordinator, which decides the joins (docs/DESIGN.md §4)
        self.reports: PartitionJoins | None = None
        self._state: Store | None = root if root is not None else state  # where reports are kept (not closed here)
        if partitions > 1 and config.learning.join_after and not self.rounds:
            self.reports = PartitionJoins(partitions)
            saved = self._state.table("joins").get("partition") if self._state is not None else None
            if saved is not None:
                self.reports.restore(saved[0])
                self.relearned = {s: [e, i] for s, e, i in saved[1]}
        elif self.joins is None and self._state is not None:  # a shard process's (parallel.py)
            saved = self._state.table("joins").get("relearned")
            if saved is not None:
                self.relearned = {s: [e, i] for s, e, i in saved}
        # registered domain -> the shard it joined: the joins' own map where this group decides them
        self.moved: dict[str, int] = (
            self.joins.moved if self.joins is not None else self.reports.moved if self.reports is not None else {}
        )

    def shard_of(self, host: str) -> int:
        """The index (in ``shards``) of the learner for ``host``'s site. A site of another
        partition's shard (a producer that partitions otherwise; the worker counts these)
        goes to one of these, the same for all of that site's events."""
        if len(self.shards) == 1:
            return 0
        s = partition_of_host(host, self.total)
        if self.moved:
            s = self.moved.get(site_of_host(host), s)
        i = self._index.get(s)
        return i if i is not None else s % len(self.shards)

    def learn_one(self, ev: FetchEvent) -> Partials:
        host = host_of(ev.url)
        out: Partials = []
        joins = self.joins
        if joins is not None:
            site = site_of_host(host)
            joins.see(ev, site)
            dst = joins.moved.get(site)
            if dst is not None:  # learned by the shard it joined at the next round
                self.held.setdefault(dst, []).append((partition_of_host(host, self.total), ev))
            else:
                out = self._learned(ev, self.shard_of(host))
        elif self.reports is not None:
            site = site_of_host(host)
            self.reports.inputs.see(ev, site)
            if site not in self.moved:  # else the shard it joined reads it from this partition's log
                out = self._learned(ev, self.shard_of(host))
        else:
            out = self._learned(ev, self.shard_of(host))
        self.events += 1
        if self.pool_every and self.events % self.pool_every == 0:
            out += self._at_round()
        return out

    def _learned(self, ev: FetchEvent, i: int) -> Partials:
        changes = self.learners[i].learn_one(ev)
        return [(self.shards[i], r) for r in changes] if changes else []

    def _at_round(self) -> Partials:
        """A round, in the order a worker group's partitions can keep (docs/DESIGN.md §4):
        the held events of joined domains learned, every shard derived, the counts
        pooled, then the round's joins carried out."""
        out = self.learn_held()
        out += self._derived()
        out += self._round() or []
        out += self._joined()
        return out

    def learn_held(self) -> Partials:
        """Each joined shard learns the events its domains had since the last round: by
        home shard (the partition a worker reads them from), in arrival order."""
        if not self.held:
            return []
        held, self.held = self.held, {}
        out: Partials = []
        for dst, ev in held_in_order(held):
            i = self._index.get(dst)
            if i is not None:
                out += self._learned(ev, i)
        return out

    def _joined(self) -> Partials:
        """The joins due at this round (joins.py), carried out."""
        if self.joins is None:
            return []
        out: Partials = []
        for m in self.joins.decide():
            events, changes = self.take(m)
            out += changes
            out += self.give(m, events)
        return out

    def take(self, m: Move) -> tuple[list[FetchEvent], Partials]:
        """``m.site`` learns on shard ``m.dst`` from now on: the shard it leaves, when it is
        one of these, hands its URLs over (``OnlineLearner.take_site``)."""
        self.moved[m.site] = m.dst
        i = self._index.get(m.src)
        if i is None:
            return [], []
        events, changes = self.learners[i].take_site(m.site)
        return events, [(m.src, r) for r in changes]

    def give(self, m: Move, events: list[FetchEvent]) -> Partials:
        """The shard ``m.site`` joins, when it is one of these, learns what ``take`` handed
        over and derives. Either shard may be another process's (parallel.py)."""
        self.moved[m.site] = m.dst
        i = self._index.get(m.dst)
        if i is None:
            return []
        lrn = self.learners[i]
        st = lrn.stats
        before = (st.events, st.ignored)
        out: Partials = []
        for ev in events:
            out += [(m.dst, r) for r in lrn.learn_one(ev)]
        out += [(m.dst, r) for r in lrn.flush()]
        re = self.relearned.setdefault(m.dst, [0, 0])
        re[0] += st.events - before[0]
        re[1] += st.ignored - before[1]
        return out

    def hold(self, events: Iterable[tuple[int, FetchEvent]]) -> None:
        """Events of domains joined to these shards, read from their home partitions'
        logs (a worker group's partition: ``reports``), as (home shard, event): learned
        by ``learn_held``, as the events a group that routes them itself holds."""
        for home, ev in events:
            dst = self.moved.get(site_of_host(host_of(ev.url)))
            if dst is not None and dst in self._index:
                self.held.setdefault(dst, []).append((home, ev))

    def holds(self, shard: int) -> bool:
        return shard in self._index

    def moved_here(self, m: Move, offsets: dict[int, int]) -> None:
        """Keep ``reports.incoming`` after move ``m`` at a round whose markers are at
        ``offsets`` (per partition): a domain joined here is read from its home
        partition past the marker; one that left is read no more."""
        assert self.reports is not None  # (take and give recorded the move itself)
        r = self.reports
        if m.dst in self._index:
            r.incoming[m.site] = offsets[r.home(m.site)] + 1
        else:
            r.incoming.pop(m.site, None)

    def _derived(self) -> Partials:
        return [(s, r) for s, lrn in zip(self.shards, self.learners) for r in lrn.flush()]

    def _round(self) -> Partials | None:
        """Each shard adopts the others' counts as they stand, and derives what follows;
        None when the counts are those pooled last."""
        adopt = self._rounds.shares([lrn.shared_counts() for lrn in self.learners])
        if adopt is None:
            return None
        out: Partials = []
        for i, (share, gone) in enumerate(adopt):
            s = self.shards[i]
            out += [(s, r) for r in adopt_share(self.learners[i], share, gone)]
        return out

    def _adopt(self, i: int, others: Counts) -> list[Rule]:
        """Learner ``i`` adopts ``others``: what changed since it last adopted, when this
        group knows that (adopting the same again changes nothing), else all of it."""
        last = self._adopted[i]
        self._adopted[i] = others
        if last is None:
            return self.learners[i].pool(others)
        if others == last:
            return []
        delta, gone = changes(last, others)
        return self.learners[i].pool(delta, gone)

    def flush(self) -> Partials:
        """Derive every shard's rules; with ``rounds``, then pool until the counts settle
        (at most ``POOL_ROUNDS``)."""
        out = self.learn_held()
        out += self._derived()
        for n in range(POOL_ROUNDS if self.rounds else 0):
            changes = self._round()
            joined = self._joined() if n == 0 else []  # the input's last joins, after its first pooling, as at a round
            if changes is None and not joined:
                break
            out += (changes or []) + joined
        return out

    def shared_counts(self) -> dict[int, Counts]:
        """Each shard's cross-site counts, for the group's coordinator."""
        return {s: lrn.shared_counts() for s, lrn in zip(self.shards, self.learners)}

    def pool(self, others: dict[int, Counts]) -> Partials:
        """Per shard, the other shards' counts combined (the coordinator's round); a shard
        with none adopts none, as in a round among shards. ``flush`` derives what follows."""
        return [(s, r) for i, s in enumerate(self.shards) for r in self._adopt(i, others.get(s, {}))]

    def announce(self) -> Partials:
        """Every shard's active rules as last published: what a restored partition sends
        again, since the changelog, not the partials topic, is the record of what it learned."""
        return [(s, r) for s, lrn in zip(self.shards, self.learners) for r in lrn.rules()]

    @property
    def derivation_pending(self) -> bool:
        return any(lrn.derivation_pending for lrn in self.learners)

    def summary(self, shards: Iterable[int] | None = None) -> dict:
        """The learners' counters summed (of ``shards``, default all of these); URLs handed
        over at a join are not input: they are counted apart (``relearned``), with the
        domains that moved (``joined``)."""
        pick = self.shards if shards is None else list(shards)
        total = summed(self.learners[self._index[s]].summary() for s in pick)
        of = pick if shards is not None else [*pick, -1]  # -1: counted before counts were per shard
        events, ignored = (sum(self.relearned.get(s, (0, 0))[k] for s in of) for k in (0, 1))
        total["events"] -= events
        total["ignored"] -= ignored
        total["relearned"] = events
        total["joined"] = len(self.moved)
        return total

    def checkpoint(self) -> None:
        if self.reports is not None and self._state is not None:  # before the learners sync the store
            relearned = [[s, e, i] for s, (e, i) in sorted(self.relearned.items())]
            self._state.table("joins")["partition"] = [self.reports.dump(), relearned]
        for lrn in self.learners:
            lrn.checkpoint()
        if self.root is not None and self.joins is not None:
            relearned = [[s, e, i] for s, (e, i) in sorted(self.relearned.items())]
            table = self.root.table("joins")
            self.joins.save(table, "digests")  # a round's digests, not all of them (joins.py)
            table["state"] = [b"", relearned, held_bytes(self.held)]
        elif self.reports is None and self.root is not None and self.relearned:  # a shard process's
            self.root.table("joins")["relearned"] = [[s, e, i] for s, (e, i) in sorted(self.relearned.items())]
        if self.root is not None:
            self.root.flush()  # a namespace leaves syncing the backend to its owner

    def close(self) -> None:
        for lrn in self.learners:
            lrn.close()
        if self.root is not None:
            self.root.close()


_HELD = list[tuple[int, list[tuple[int, FetchEvent]]]]


def held_in_order(held: dict[int, list[tuple[int, FetchEvent]]]) -> Iterator[tuple[int, FetchEvent]]:
    """Held events as every layout learns them (``ShardGroup.learn_held``): by the shard
    they joined, then by home shard (the partition a worker reads them from), in arrival
    order within it (a stable sort)."""
    for dst in sorted(held):
        for _, ev in sorted(held[dst], key=lambda he: he[0]):
            yield dst, ev


def held_bytes(held: dict[int, list[tuple[int, FetchEvent]]]) -> bytes:
    """Held events as a checkpoint keeps them (a ``ShardGroup``'s, or parallel.py's parent's)."""
    return msgspec.msgpack.encode(sorted(held.items()))


def held_of(raw: bytes) -> dict[int, list[tuple[int, FetchEvent]]]:
    return {dst: list(evs) for dst, evs in msgspec.msgpack.decode(raw, type=_HELD)}
