"""Which dup-cluster a newly seen URL belongs to.

Precedence: exact digest; the cluster of the page's rel=canonical target; a pending hint
(an earlier page named this URL its canonical); a simhash within ``simhash_distance``;
otherwise a new cluster. Cluster ids are derived from the first evidence (digest, simhash
or URL), never from counters, so a replay assigns the same ids.

Simhash lookup uses the pigeonhole trick: with distance <= 3 over four 16-bit blocks, a
near-duplicate agrees with the page exactly in at least one block, so four exact-key
lookups find every candidate.
"""

from __future__ import annotations

import os
import struct

from ..events.event import FetchEvent
from ..rules.urls import host_of
from ..state.chunklog import ChunkLog, TimeGroups
from ..state.store import Store, Table

BLOCKS = 4
BLOCK_BITS = 16
MAX_PER_BLOCK = 32  # entries kept per block value; older ones age out


_U64 = struct.Struct("<Q")

try:  # optional C twins of near/add (setup.py); DUSTONLINE_PURE_PYTHON=1 turns them off
    from .. import _kernels as _native
except ImportError:  # pragma: no cover - depends on the build
    _native = None
if os.environ.get("DUSTONLINE_PURE_PYTHON"):
    _native = None


def _find8(packed: bytes, item: bytes) -> int:
    """Offset of an 8-byte-aligned ``item`` in ``packed``, or -1."""
    at = packed.find(item)
    while at >= 0 and at % 8:
        at = packed.find(item, at + 1)
    return at


def url_key(host: str, url: str) -> str:
    """URLs are stored under their host so a rule's URLs can be scanned by prefix."""
    return host + "\x00" + url


def _cid(entry) -> str | None:
    """The cluster id of a ``simhash-cluster`` entry: [id, add number], or a bare id as
    written before the block index was rebuilt rather than stored."""
    return entry if entry is None or isinstance(entry, str) else entry[0]


class SimhashBlocks:
    """The four block tables of the pigeonhole index, in memory: one list slot per block
    value (4 x 65536), holding that value's simhashes packed 8 bytes each, newest last.

    Every new page reads and rewrites its four slots; as list items that costs a few
    index operations, where table lookups by formatted string key cost microseconds.
    The slots are bounded (``MAX_PER_BLOCK`` each, about 55 MB at a million pages).

    They are not stored: ``ClusterIndex`` rebuilds them at open by adding the simhashes
    of its ``simhash-cluster`` table in the order of their last add. A slot holds the
    newest ``MAX_PER_BLOCK`` simhashes by last add, so that replay gives the same slots.
    Storing them cost four records a new page at every checkpoint (2.5 of the 5.8
    records an event a worker sent to its changelog)."""

    __slots__ = ("slots",)

    def __init__(self, packed: Table | None = None):
        """``packed``: slots as stored before they were rebuilt instead (a base that is
        read, never written)."""
        self.slots: list[bytes | None] = [None] * (BLOCKS << BLOCK_BITS)
        if packed is not None:
            for key, value in packed.items():
                b, _, v = key.partition(":")
                self.slots[(int(b) << BLOCK_BITS) | int(v, 16)] = value

    @staticmethod
    def slots_of(sh: int) -> tuple[int, int, int, int]:
        return (sh & 0xFFFF, 0x10000 | ((sh >> 16) & 0xFFFF), 0x20000 | ((sh >> 32) & 0xFFFF), 0x30000 | (sh >> 48))

    def near(self, sh: int, slots, dist: int) -> dict[int, int]:
        """Indexed simhashes within ``dist`` of ``sh``, with their distances."""
        if _native is not None:
            return _native.near(self.slots, slots, sh, dist)
        return self.near_py(sh, slots, dist)

    def near_py(self, sh: int, slots, dist: int) -> dict[int, int]:
        out: dict[int, int] = {}
        allslots = self.slots
        for i in slots:
            packed = allslots[i]
            if packed is not None:
                for (other,) in _U64.iter_unpack(packed):
                    d = (sh ^ other).bit_count()
                    if d <= dist:
                        out[other] = d
        return out

    def add(self, sh: int, slots) -> None:
        """``sh`` becomes the newest entry of each slot (moved there if present)."""
        if _native is not None:
            _native.add(self.slots, slots, sh, MAX_PER_BLOCK)
        else:
            self.add_py(sh, slots)

    def pushed_out(self, sh: int, slots) -> list[tuple[int, int]]:
        """(position in ``slots``, simhash) that adding ``sh`` will push out of full slots."""
        out = []
        mine = None
        allslots = self.slots
        for bit, i in enumerate(slots):
            packed = allslots[i]
            if packed is not None and len(packed) >= 8 * MAX_PER_BLOCK:
                mine = mine or _U64.pack(sh)
                if _find8(packed, mine) < 0:
                    out.append((bit, _U64.unpack_from(packed)[0]))
        return out

    def remove(self, sh: int) -> None:
        """``sh`` out of its slots."""
        mine = _U64.pack(sh)
        allslots = self.slots
        for i in self.slots_of(sh):
            packed = allslots[i]
            if packed is not None:
                at = _find8(packed, mine)
                if at >= 0:
                    packed = packed[:at] + packed[at + 8 :]
                    allslots[i] = packed or None

    def add_py(self, sh: int, slots) -> None:
        mine = _U64.pack(sh)
        allslots = self.slots
        for i in slots:
            packed = allslots[i]
            if packed is None:
                allslots[i] = mine
            else:
                at = _find8(packed, mine)
                if at >= 0:
                    packed = packed[:at] + packed[at + 8 :]
                allslots[i] = (packed + mine)[-8 * MAX_PER_BLOCK :]


class ClusterIndex:
    def __init__(
        self,
        store: Store,
        simhash_distance: int = 3,
        canonical_hints: bool = True,
        urls: Table | None = None,
        clusters: Table | None = None,
        bucket_seconds: float | None = None,
        log: dict[str, int] | None = None,
    ):
        """``urls`` and ``clusters`` are the owner's tables, shared with the index (it only
        reads them), so the owner's cache policy and record type hold for both. With
        ``bucket_seconds`` (a rolling window's sweep period), simhashes are logged by
        event time (and canonical hints with them) so ``expire`` can forget those of
        clusters that left the window;
        ``log``: that log's ``log_state()`` at the last checkpoint."""
        self.digests = store.table("digest", filtered=True)
        # simhash -> [cluster id, sequence number of its last add, slots it was pushed
        # out of (a bit per block; absent while none)] (SimhashBlocks says why)
        self.sh_cluster = store.table("simhash-cluster", cache_entries=20_000)
        self._group = TimeGroups(bucket_seconds or 1.0)  # read only with the log below
        self.by_time = (
            ChunkLog(store.table("simhash-by-time", keep=False, flush_at=16), log)
            if bucket_seconds is not None
            else None
        )
        self.blocks = SimhashBlocks(store.table("simhash", keep=False))
        self.adds = self._replay_adds()
        # Hints are looked up once per new URL: not cached.
        self.hints = store.table("hint", keep=False, filtered=True)
        self.urls = urls if urls is not None else store.table("url")
        self.clusters = clusters if clusters is not None else store.table("cluster")
        self.distance = simhash_distance
        self.use_hints = canonical_hints
        self._any_hints = next(iter(self.hints.keys()), None) is not None

    def assign(self, ev: FetchEvent) -> str:
        """The cluster id for a URL not seen before; registers the event's evidence."""
        cid = None
        known_content = False
        routed = None
        if ev.digest is not None:
            # a digest routes to its own cluster "d:<digest>" unless the table says
            # otherwise: only digests that joined another cluster are written
            routed = self.digests.get(ev.digest)
            cid = self._live(routed if routed is not None else "d:" + ev.digest)
            known_content = cid is not None
        if cid is None and self.use_hints:
            if ev.canonical and ev.canonical != ev.url:
                rec = self.urls.get(url_key(host_of(ev.canonical), ev.canonical))
                if rec is not None:
                    cid = self._live(rec.cluster)
            if cid is None and self._any_hints:  # most streams carry few or no hints
                cid = self._live(self.hints.get(ev.url))
        slots = None
        if ev.simhash is not None and self.distance > 0 and not known_content:
            slots = SimhashBlocks.slots_of(ev.simhash)
            if cid is None:
                cid = self._near(ev.simhash, slots)
        if cid is None:
            if ev.digest is not None:
                cid = "d:" + ev.digest
            elif ev.simhash is not None:
                cid = f"s:{ev.simhash:016x}"
            else:
                cid = "u:" + ev.url
        if ev.digest is not None:
            if cid == "d:" + ev.digest:
                if routed is not None:
                    del self.digests[ev.digest]
            elif routed != cid:
                self.digests[ev.digest] = cid
        # slots come from a simhash (the second test only narrows the type); the same digest
        # has the same simhash: once is enough
        if slots is not None and ev.simhash is not None:
            pushed = self.blocks.pushed_out(ev.simhash, slots)
            key = f"{ev.simhash:016x}"
            self.sh_cluster[key] = [cid, self.adds]
            if self.by_time is not None:
                self.by_time.append(self._group(ev.ts), [key, self.adds])
            self.adds += 1
            self.blocks.add(ev.simhash, slots)
            for bit, other in pushed:
                self._pushed(other, bit)
        if self.use_hints and ev.canonical and ev.canonical != ev.url:
            self.hints[ev.canonical] = cid
            self._any_hints = True
            if self.by_time is not None:
                self.by_time.append(self._group(ev.ts), [ev.canonical])
        return cid

    def _live(self, cid: str | None) -> str | None:
        return cid if cid is not None and self.clusters.get(cid) is not None else None

    def _near(self, sh: int, slots) -> str | None:
        """The cluster of the nearest indexed simhash within the distance (ties: smaller id).
        A close simhash shares several blocks with ``sh``: it is looked up once."""
        best = None
        for other, d in self.blocks.near(sh, slots, self.distance).items():
            cid = self._live(_cid(self.sh_cluster.get(f"{other:016x}")))
            if cid is not None and (best is None or (d, cid) < best):
                best = (d, cid)
        return best[1] if best else None

    def _replay_adds(self) -> int:
        """The block index as it was, from the simhashes in order of their last add (on
        a base of stored slots from before, if any); returns the next sequence number."""
        adds = sorted(
            (v[1], int(k, 16), v[2] if len(v) > 2 else 0) for k, v in self.sh_cluster.items() if not isinstance(v, str)
        )
        blocks, slots_of = self.blocks, SimhashBlocks.slots_of
        for _, sh, out in adds:
            slots = slots_of(sh)
            blocks.add(sh, [i for bit, i in enumerate(slots) if not out & (1 << bit)] if out else slots)
        return adds[-1][0] + 1 if adds else 0

    def _pushed(self, sh: int, bit: int) -> None:
        """``sh`` aged out of one of its slots: noted in its entry, so a replay leaves it
        out of that slot although entries that pushed it out may be gone by then (expired
        with their clusters). Out of all four, it can never be found: the entry goes."""
        key = f"{sh:016x}"
        e = self.sh_cluster.get(key)
        if e is None or isinstance(e, str):
            return
        out = (e[2] if len(e) > 2 else 0) | (1 << bit)
        if out == 0b1111:
            del self.sh_cluster[key]
        else:
            self.sh_cluster[key] = [e[0], e[1], out]

    def expire(self, cutoff: float, now: float) -> int:
        """Forget the simhashes and canonical hints logged before ``cutoff`` whose cluster
        is gone (they route nowhere: ``_live`` refuses a dead cluster), simhashes from the
        table and the blocks; those of live clusters are logged again at ``now``, to be
        looked at a window later. Without this both tables keep every simhash and hint
        ever seen. Returns how many went."""
        log = self.by_time
        if log is None:
            return 0
        due = self._group(cutoff)
        expired: list[tuple[str, list]] = []
        for group, _key, entries in log.chunks():
            if group >= due:
                break
            expired.append((group, entries))
        gone = 0
        later = self._group(now)
        for group, entries in expired:
            hints: set[str] = set()
            for entry in entries:
                if len(entry) == 1:  # a hint: the canonical URL some page named
                    hints.add(entry[0])
                    continue
                key, add = entry
                e = self.sh_cluster.get(key)
                if e is None or isinstance(e, str) or e[1] != add:
                    continue  # added again since (and logged then), or gone already
                if self.clusters.get(e[0]) is None:
                    del self.sh_cluster[key]
                    self.blocks.remove(int(key, 16))
                    gone += 1
                else:
                    log.append(later, [key, add])
            for url in sorted(hints):
                cid = self.hints.get(url)
                if cid is None:
                    continue
                if self.clusters.get(cid) is None:
                    del self.hints[url]
                    gone += 1
                else:
                    log.append(later, [url])
            log.drop_group(group)
        return gone

    def log_state(self) -> dict[str, list[int]]:
        return self.by_time.state() if self.by_time is not None else {}

    def save(self) -> None:
        if self.by_time is not None:
            self.by_time.save()

    def forget(self, cid: str, digest_of_cluster: str | None) -> None:
        """A cluster left the window: its digest no longer routes here."""
        if digest_of_cluster and self.digests.get(digest_of_cluster) == cid:
            del self.digests[digest_of_cluster]  # (a cluster's own digest has no entry)


PER_TARGET = 8  # sources that wait for one redirect target (PendingRedirects)


class PendingRedirects:
    """Redirects whose target the learner does not hold yet (table ``redirect``: target URL
    -> [[source URL, event time], ...]). A 3xx usually comes just before its target's
    fetch, so the table stays small; it is bounded all the same (``max_pairs``, the
    oldest half dropped when full, at most ``PER_TARGET`` sources a target), and pairs
    older than the window are dropped. It is in the store like all learner state, so a
    restarted learner resolves the same pairs. Every new URL asks whether it is a
    target: the target URLs are also kept in a set, read back at open, which answers
    that without a store lookup (a key filter would cost 4 MiB, whatever the size)."""

    def __init__(self, store: Store, max_pairs: int = 50_000):
        self.table = store.table("redirect", keep=False)
        self.max_pairs = max(2, max_pairs)
        self.targets: set[str] = set()
        self.count = 0  # pairs
        for dst, pairs in self.table.items():
            self.targets.add(dst)
            self.count += len(pairs)

    def __bool__(self) -> bool:
        return self.count > 0

    def add(self, src: str, dst: str, ts: float) -> None:
        pairs = (self.table.get(dst) or []) if dst in self.targets else []
        if len(pairs) >= PER_TARGET or any(s == src for s, _ in pairs):
            return
        if self.count >= self.max_pairs:
            self._drop_oldest(self.max_pairs // 2)
            pairs = (self.table.get(dst) or []) if dst in self.targets else []
        pairs.append([src, ts])
        self.table[dst] = pairs
        self.targets.add(dst)
        self.count += 1

    def take(self, dst: str, cutoff: float) -> list[str]:
        """The sources waiting for ``dst`` (their pairs leave the table), oldest first;
        pairs from before ``cutoff`` are dropped, as a sweep would have."""
        if dst not in self.targets:
            return []
        self.targets.discard(dst)
        pairs = self.table.pop(dst) or []
        self.count -= len(pairs)
        return [s for s, t in pairs if t >= cutoff]

    def expire(self, cutoff: float) -> None:
        """Drop the pairs from before ``cutoff`` (they left the window)."""
        if self.count:
            self._keep(lambda t: t >= cutoff)

    def _drop_oldest(self, keep: int) -> None:
        times = sorted((t for _, pairs in self.table.items() for _, t in pairs), reverse=True)
        if len(times) > keep:
            floor = times[keep - 1]
            self._keep(lambda t: t > floor)  # pairs as old as the floor go too: fewer than ``keep`` stay

    def _keep(self, ok) -> None:
        for dst, pairs in list(self.table.items()):
            kept = [p for p in pairs if ok(p[1])]
            if len(kept) != len(pairs):
                self.count -= len(pairs) - len(kept)
                if kept:
                    self.table[dst] = kept
                else:
                    del self.table[dst]
                    self.targets.discard(dst)
