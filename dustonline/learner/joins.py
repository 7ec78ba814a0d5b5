"""Co-location of a site's registered domains: the shard each domain learns on.

Shards (shards.py) hold sites by registered domain, so a site served on two domains
(``bbc.co.uk`` and ``bbci.co.uk``) is two sites unless both hash to one shard: no learner
sees the pairs that span them, nor the counter-evidence a host move needs. ``Joins``
watches which domains' URLs share content digests. At a round, a domain whose URLs have
shared ``learning.join_after`` digests with a domain on another shard joins that domain's
shard (with every domain joined to it before): the shard it leaves hands over the URLs
it holds of it, as fetches, and lets them go as the window lets old URLs go
(``OnlineLearner.take_site``); the shard it joins learns them, so that it then holds
what one learner would hold of both. The side with fewer events moves. Decided from the
input and at rounds alone, so every layout of the shards (one process or many,
docs/DESIGN.md §4) joins the same domains at the same points.

Memory: the digests seen, at most ``MAX_DIGESTS`` (the oldest forgotten first), and a
few numbers per domain; the URLs handed over are the learner's state, not a log.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..events.event import FetchEvent
from ..events.routing import partition_for
from ..hashing import hash64
from .records import JoinsSaved, Move, RoundSeen

# digests remembered (about 100 bytes each): a site's domains share recent content
MAX_DIGESTS = 1 << 20
# a content on more domains than this is shared (a library, a pixel, an error page), not
# a site's: it joins no more of them
MAX_SPREAD = 4
# ``save``: journal entries kept before the digests are written whole again, at least
JOURNAL_MIN = 1 << 16
# ``save``: digests per record of the whole (about 12 bytes each: a record far under 1 MB)
BASE_CHUNK = 1 << 15


class RoundInputs:
    """A worker group's partition's part of ``Joins.see``: what its events say, kept
    until the round, where the coordinator's ``Joins`` takes every partition's in
    (``Joins.add``). Small: a round's digests and domains."""

    def __init__(self) -> None:
        self._pairs: set[tuple[int, str]] = set()
        self._events: dict[str, int] = {}

    def see(self, ev: FetchEvent, site: str) -> None:
        self._events[site] = self._events.get(site, 0) + 1
        if ev.digest is not None and ev.teaches:
            self._pairs.add((hash64(ev.digest), site))

    def take(self) -> RoundSeen:
        """The round's, and none kept."""
        out = self._seen()
        self._pairs, self._events = set(), {}
        return out

    def dump(self) -> bytes:
        return msgspec.msgpack.encode(self._seen())

    def _seen(self) -> RoundSeen:
        return RoundSeen(sorted(self._pairs), sorted(self._events.items()))

    def restore(self, raw: bytes) -> None:
        seen = msgspec.msgpack.decode(raw, type=RoundSeen)
        self._pairs = {(h, site) for h, site in seen.pairs}
        self._events = dict(seen.events)


class Joins:
    """What the router of a shard group knows about domains: ``see`` every event, ``decide``
    at rounds, ``shard`` to route."""

    def __init__(self, total: int, join_after: int, max_digests: int = MAX_DIGESTS):
        self.total = total
        self.join_after = join_after
        self.max_digests = max_digests
        self.moved: dict[str, int] = {}  # domain -> the shard it joined (its home shard otherwise)
        self.partner: dict[str, str] = {}  # domain moved -> the domain whose shard it joined, as they joined
        self._ids: dict[str, int] = {}  # domain -> its number here
        self._names: list[str] = []
        self._events: list[int] = []  # per domain: events seen
        self._group: list[int] = []  # per domain: the domain its group is known by
        self._members: dict[int, list[int]] = {}  # group -> its domains (a group of 2 or more)
        self._digests: dict[int, int | list[int]] = {}  # digest hash -> the domains its URLs are on
        self._pairs: dict[tuple[int, int], int] = {}  # (domain, domain) on two shards -> digests shared
        self._round: set[tuple[int, int]] = set()  # (digest hash, domain) seen since the last round
        self._journal: list[list[tuple[int, int]]] = []  # rounds taken in since the last ``save``
        # as saved: generation and records of the whole, the journal's first and next record, its entries
        self._saved = JoinsSaved()
        self.journal_min = JOURNAL_MIN

    def shard(self, site: str) -> int:
        s = self.moved.get(site)
        return s if s is not None else partition_for(site.encode(), self.total)

    def see(self, ev: FetchEvent, site: str) -> None:
        """One event of the input, with its registered domain. What it says is taken in
        at the next round (``decide``), in an order of its own, so that the joins do not
        depend on how the sites' events interleave (a worker group's partitions cannot
        know): only each round's set of (digest, domain) counts."""
        d = self._id(site)
        self._events[d] += 1
        if ev.digest is not None and ev.teaches:
            self._round.add((hash64(ev.digest), d))

    def add(self, seen: RoundSeen) -> None:
        """What a partition of a worker group saw in the round (``RoundInputs.take``):
        taken in as ``see`` takes in the events themselves."""
        for site, n in seen.events:
            self._events[self._id(site)] += n
        for h, site in seen.pairs:
            self._round.add((h, self._id(site)))

    def _id(self, site: str) -> int:
        d = self._ids.get(site)
        if d is None:
            d = self._ids[site] = len(self._names)
            self._names.append(site)
            self._events.append(0)
            self._group.append(d)
        return d

    def _take_round(self) -> None:
        """The round's digests, by hash and then domain name: each new domain of a digest
        counts a pair with each domain on another shard that had it before."""
        names = self._names
        taken = sorted(self._round, key=lambda hd: (hd[0], names[hd[1]]))
        for h, d in taken:
            others = self._note(h, d)
            if others is None:
                continue
            mine = self.shard(names[d])
            for o in others:
                if self.shard(names[o]) != mine:
                    key = (o, d) if o < d else (d, o)
                    self._pairs[key] = self._pairs.get(key, 0) + 1
        if taken:
            self._journal.append(taken)
        self._round = set()

    def _note(self, h: int, d: int) -> list[int] | None:
        """Domain ``d`` has digest ``h``: the domains that had it before, when ``d`` is
        new to it (None otherwise). What ``load`` replays, so it alone changes the digests."""
        seen = self._digests.get(h)
        if seen is None:
            if len(self._digests) >= self.max_digests:
                self._forget_oldest()
            self._digests[h] = d
            return None
        if isinstance(seen, int):
            if seen == d:
                return None
            self._digests[h] = [seen, d]
            return [seen]
        if d in seen or len(seen) >= MAX_SPREAD:
            return None
        others = list(seen)
        seen.append(d)
        return others

    def _forget_oldest(self) -> None:
        drop = [h for h, _ in zip(self._digests, range(max(1, self.max_digests // 4)))]
        for h in drop:
            del self._digests[h]

    def decide(self) -> list[Move]:
        """The round's joins, in the order they apply; moves every domain of the smaller
        side (by events seen) to the other side's shard."""
        self._take_round()
        names = self._names
        ready = sorted(
            ((-n, a, b) for (a, b), n in self._pairs.items() if n >= self.join_after),
            key=lambda t: (t[0], min(names[t[1]], names[t[2]]), max(names[t[1]], names[t[2]])),
        )
        moves: list[Move] = []
        for _, a, b in ready:
            del self._pairs[(a, b)]
            ga, gb = self._group[a], self._group[b]
            sa, sb = self.shard(self._names[a]), self.shard(self._names[b])
            if ga == gb:
                continue
            if sa == sb:  # together already (their domains hash alike): they move together from now on
                self._union(ga, gb)
                continue
            side_a, side_b = self._members.get(ga, [ga]), self._members.get(gb, [gb])  # sorted by name
            weight_a = sum(self._events[m] for m in side_a)
            weight_b = sum(self._events[m] for m in side_b)
            # the side with fewer events moves (less to learn again); on a tie, the side
            # whose name sorts last
            if weight_a > weight_b or (weight_a == weight_b and self._names[ga] < self._names[gb]):
                stay, go, go_side, to, into = ga, gb, side_b, sa, a
            else:
                stay, go, go_side, to, into = gb, ga, side_a, sb, b
            for m in go_side:
                site = self._names[m]
                moves.append(Move(site, self.shard(site), to))
                self.moved[site] = to
                self.partner[site] = self._names[into]
            self._union(stay, go)
        return moves

    def _union(self, stay: int, go: int) -> None:
        side = self._members.pop(go, [go])
        for m in side:
            self._group[m] = stay
        self._members[stay] = sorted([*self._members.get(stay, [stay]), *side], key=self._names.__getitem__)

    @property
    def joined(self) -> int:
        return len(self.moved)

    def dump(self) -> bytes:
        """All of it, digests in the order they are forgotten: what checkpoints held
        before ``save`` wrote a journal (``restore`` reads those), and what the tests
        compare joins by."""
        return msgspec.msgpack.encode(
            [*self._head(), list(self._digests.items()), sorted(self._pairs.items()), sorted(self._round)]
        )

    def _head(self) -> list[Any]:
        """What ``dump`` and ``save`` write first: the domains, their groups and moves."""
        return [
            self.moved,
            list(self.partner.items()),
            self._names,
            self._events,
            self._group,
            sorted(self._members.items()),
        ]

    def restore(self, raw: bytes) -> None:
        moved, partner, names, events, group, members, digests, pairs, now = msgspec.msgpack.decode(raw)
        self._restore_head(moved, partner, names, events, group, members, pairs, now)
        self._digests = {h: (v if isinstance(v, int) else list(v)) for h, v in digests}

    def _restore_head(
        self, moved: Any, partner: Any, names: Any, events: Any, group: Any, members: Any, pairs: Any, now: Any
    ) -> None:
        self.moved = dict(moved)
        self.partner = dict(partner)
        self._names = list(names)
        self._ids = {name: i for i, name in enumerate(self._names)}
        self._events = list(events)
        self._group = list(group)
        self._members = {g: list(ms) for g, ms in members}
        self._pairs = {(a, b): n for (a, b), n in pairs}
        self._round = {(h, d) for h, d in now}

    def save(self, table: Any, key: str) -> None:
        """What a checkpoint needs, into ``table`` (a store's, or the transfer topic through
        the coordinator's, stream/pool.py) under keys starting with ``key``, writing the
        digests of the rounds since the last save rather than all of them: a worker
        checkpoints every few thousand events, and the digests grow to a million. They go
        as a journal of each round's (digest, domain) pairs, which ``load`` takes in again
        in order, and are written whole, in records of ``BASE_CHUNK``, when the journal
        has outgrown twice their number. Written in an order that a reader stopped at any
        record can use: new records, then the head (``table[key]``) naming them, then
        deletes of what the head no longer names."""
        sv = self._saved
        gen, chunks, first, after, entries = sv.gen, sv.chunks, sv.first, sv.after, sv.entries
        stale: list[str] = []
        if entries + sum(len(r) for r in self._journal) > max(self.journal_min, 2 * len(self._digests)):
            items = list(self._digests.items())
            parts = [items[i : i + BASE_CHUNK] for i in range(0, len(items), BASE_CHUNK)]
            for i, part in enumerate(parts):
                table[f"{key}/base/{gen + 1}/{i}"] = msgspec.msgpack.encode(part)
            stale = [f"{key}/base/{gen}/{i}" for i in range(chunks)]
            stale += [f"{key}/journal/{n}" for n in range(first, after)]
            gen, chunks, first, entries = gen + 1, len(parts), after, 0
        else:
            for taken in self._journal:
                table[f"{key}/journal/{after}"] = msgspec.msgpack.encode(taken)
                after += 1
                entries += len(taken)
        self._journal = []
        self._saved = JoinsSaved(gen, chunks, first, after, entries)
        table[key] = msgspec.msgpack.encode(
            [*self._head(), sorted(self._pairs.items()), sorted(self._round), self._saved]
        )
        for k in stale:
            del table[k]

    def saved_keys(self, key: str) -> set[str]:
        """The records the head under ``key`` names, as last saved or loaded: any other
        record under ``key`` is one a save was cut off before deleting."""
        return self._saved.keys(key)

    def load(self, table: Any, key: str) -> bool:
        """What ``save`` wrote under ``key``; False when nothing was."""
        raw = table.get(key)
        if raw is None:
            return False
        moved, partner, names, events, group, members, pairs, now, saved = msgspec.msgpack.decode(raw)
        self._restore_head(moved, partner, names, events, group, members, pairs, now)
        sv = JoinsSaved(*saved)
        self._digests = {}
        for i in range(sv.chunks):
            for h, v in msgspec.msgpack.decode(table[f"{key}/base/{sv.gen}/{i}"]):
                self._digests[h] = v if isinstance(v, int) else list(v)
        for n in range(sv.first, sv.after):
            for h, d in msgspec.msgpack.decode(table[f"{key}/journal/{n}"]):
                self._note(h, d)
        self._journal = []
        self._saved = sv
        return True


class PartitionJoins:
    """A worker group's partition's side of the joins (docs/DESIGN.md §4): what its
    events say, reported at each round (``inputs``); every move of the group, told by
    the coordinator (``moved``), by which its partition skips a joined domain's events;
    and, per domain joined to one of its shards, the offset of the domain's home
    partition from which it reads that domain's events at the next round
    (``incoming``)."""

    def __init__(self, partitions: int):
        self.partitions = partitions
        self.inputs = RoundInputs()
        self.moved: dict[str, int] = {}
        self.incoming: dict[str, int] = {}

    def home(self, site: str) -> int:
        """The pages partition a domain's events arrive on."""
        return partition_for(site.encode(), self.partitions)

    def dump(self) -> bytes:
        return msgspec.msgpack.encode([self.inputs.dump(), sorted(self.moved.items()), sorted(self.incoming.items())])

    def restore(self, raw: bytes) -> None:
        inputs, moved, incoming = msgspec.msgpack.decode(raw)
        self.inputs.restore(inputs)
        self.moved = dict(moved)
        self.incoming = dict(incoming)
