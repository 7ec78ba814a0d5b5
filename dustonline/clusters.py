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

import struct

from .events import FetchEvent
from .store import Store, Table
from .urls import host_of

BLOCKS = 4
BLOCK_BITS = 16
MAX_PER_BLOCK = 32  # entries kept per block value; older ones age out


_U64 = struct.Struct("<Q")


def _find8(packed: bytes, item: bytes) -> int:
    """Offset of an 8-byte-aligned ``item`` in ``packed``, or -1."""
    at = packed.find(item)
    while at >= 0 and at % 8:
        at = packed.find(item, at + 1)
    return at


def url_key(host: str, url: str) -> str:
    """URLs are stored under their host so a rule's URLs can be scanned by prefix."""
    return host + "\x00" + url


def block_keys(simhash: int) -> tuple[str, str, str, str]:
    return (
        f"0:{simhash & 0xFFFF:04x}",
        f"1:{(simhash >> 16) & 0xFFFF:04x}",
        f"2:{(simhash >> 32) & 0xFFFF:04x}",
        f"3:{(simhash >> 48) & 0xFFFF:04x}",
    )


class ClusterIndex:
    def __init__(self, store: Store, simhash_distance: int = 3, canonical_hints: bool = True,
                 urls: Table | None = None, clusters: Table | None = None):
        """``urls`` and ``clusters`` are the owner's tables, shared with the index (it only
        reads them), so the owner's cache policy and record type hold for both."""
        self.digests = store.table("digest")
        # Every new page looks up and rewrites its four blocks: all 4 x 65536 block values
        # stay cached, packed 8 bytes per simhash (about 55 MB at a million pages), and
        # are written back at checkpoints, so the index costs no RocksDB call per event.
        # Hints are looked up once per new URL: not cached.
        space = BLOCKS << BLOCK_BITS
        self.simhashes = store.table("simhash", cache_entries=space, exact_cap=True, flush_at=space)
        self.sh_cluster = store.table("simhash-cluster", cache_entries=20_000)
        self.hints = store.table("hint", keep=False)
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
            routed = self.digests.get(ev.digest)
            cid = self._live(routed)
            known_content = cid is not None
        if cid is None and self.use_hints:
            if ev.canonical and ev.canonical != ev.url:
                rec = self.urls.get(url_key(host_of(ev.canonical), ev.canonical))
                if rec is not None:
                    cid = self._live(rec[0])
            if cid is None and self._any_hints:  # most streams carry few or no hints
                cid = self._live(self.hints.get(ev.url))
        keys = None
        if ev.simhash is not None and self.distance > 0 and not known_content:
            keys = block_keys(ev.simhash)
            if cid is None:
                cid = self._near(ev.simhash, keys)
        if cid is None:
            if ev.digest is not None:
                cid = "d:" + ev.digest
            elif ev.simhash is not None:
                cid = f"s:{ev.simhash:016x}"
            else:
                cid = "u:" + ev.url
        if ev.digest is not None and routed != cid:
            self.digests[ev.digest] = cid
        if keys is not None:
            self._index(ev.simhash, keys, cid)  # the same digest has the same simhash: once is enough
        if self.use_hints and ev.canonical and ev.canonical != ev.url:
            self.hints[ev.canonical] = cid
            self._any_hints = True
        return cid

    def _live(self, cid: str | None) -> str | None:
        return cid if cid is not None and cid in self.clusters else None

    def _near(self, sh: int, keys) -> str | None:
        """The cluster of the nearest indexed simhash within the distance (ties: smaller id)."""
        best = None
        get, dist = self.simhashes.get, self.distance
        for key in keys:
            packed = get(key)
            if packed is None:
                continue
            for (other,) in _U64.iter_unpack(packed):
                d = (sh ^ other).bit_count()
                if d <= dist:
                    cid = self._live(self.sh_cluster.get(f"{other:016x}"))
                    if cid is not None and (best is None or (d, cid) < best):
                        best = (d, cid)
        return best[1] if best else None

    def _index(self, sh: int, keys, cid: str) -> None:
        """Block values are packed simhashes, newest last; one more key maps a simhash to
        its cluster (read only when a block holds a near one)."""
        self.sh_cluster[f"{sh:016x}"] = cid
        mine = _U64.pack(sh)
        for key in keys:
            packed = self.simhashes.get(key)
            if packed is None:
                self.simhashes[key] = mine
                continue
            at = _find8(packed, mine)
            if at >= 0:
                packed = packed[:at] + packed[at + 8 :]
            self.simhashes[key] = (packed + mine)[-8 * MAX_PER_BLOCK :]

    def forget(self, cid: str, digest_of_cluster: str | None) -> None:
        """A cluster left the window: its digest no longer routes here."""
        if digest_of_cluster and self.digests.get(digest_of_cluster) == cid:
            del self.digests[digest_of_cluster]
