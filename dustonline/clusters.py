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

from .events import FetchEvent
from .store import Store
from .urls import host_of

BLOCKS = 4
BLOCK_BITS = 16
MAX_PER_BLOCK = 32  # entries kept per block value; older ones age out


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
    def __init__(self, store: Store, simhash_distance: int = 3, canonical_hints: bool = True):
        self.digests = store.table("digest")
        self.simhashes = store.table("simhash")
        self.sh_cluster = store.table("simhash-cluster")
        self.hints = store.table("hint")
        self.urls = store.table("url")
        self.clusters = store.table("cluster")
        self.distance = simhash_distance
        self.use_hints = canonical_hints
        self._any_hints = next(iter(self.hints.keys()), None) is not None

    def assign(self, ev: FetchEvent) -> str:
        """The cluster id for a URL not seen before; registers the event's evidence."""
        cid = None
        known_content = False
        if ev.digest is not None:
            cid = self._live(self.digests.get(ev.digest))
            known_content = cid is not None
        if cid is None and self.use_hints:
            if ev.canonical and ev.canonical != ev.url:
                rec = self.urls.get(url_key(host_of(ev.canonical), ev.canonical))
                if rec is not None:
                    cid = self._live(rec[0])
            if cid is None and self._any_hints:  # most streams carry few or no hints
                cid = self._live(self.hints.get(ev.url))
        if cid is None and ev.simhash is not None and self.distance > 0:
            cid = self._near(ev.simhash)
        if cid is None:
            if ev.digest is not None:
                cid = "d:" + ev.digest
            elif ev.simhash is not None:
                cid = f"s:{ev.simhash:016x}"
            else:
                cid = "u:" + ev.url
        if ev.digest is not None and self.digests.get(ev.digest) != cid:
            self.digests[ev.digest] = cid
        if ev.simhash is not None and self.distance > 0 and not known_content:
            self._index(ev.simhash, cid)  # the same digest has the same simhash: once is enough
        if self.use_hints and ev.canonical and ev.canonical != ev.url:
            self.hints[ev.canonical] = cid
            self._any_hints = True
        return cid

    def _live(self, cid: str | None) -> str | None:
        return cid if cid is not None and cid in self.clusters else None

    def _near(self, sh: int) -> str | None:
        """The cluster of the nearest indexed simhash within the distance (ties: smaller id)."""
        best = None
        for key in block_keys(sh):
            for other in self.simhashes.get(key, ()):
                d = (sh ^ other).bit_count()
                if d <= self.distance:
                    cid = self._live(self.sh_cluster.get(f"{other:016x}"))
                    if cid is not None and (best is None or (d, cid) < best):
                        best = (d, cid)
        return best[1] if best else None

    def _index(self, sh: int, cid: str) -> None:
        """Blocks hold bare simhashes (cheap to decode on every lookup); one more key maps a
        simhash to its cluster."""
        self.sh_cluster[f"{sh:016x}"] = cid
        for key in block_keys(sh):
            entries = self.simhashes.get(key)
            if entries is None:
                self.simhashes[key] = [sh]
            elif sh not in entries:
                entries.append(sh)
                self.simhashes[key] = entries[-MAX_PER_BLOCK:]

    def forget(self, cid: str, digest_of_cluster: str | None) -> None:
        """A cluster left the window: its digest no longer routes here."""
        if digest_of_cluster and self.digests.get(digest_of_cluster) == cid:
            del self.digests[digest_of_cluster]
