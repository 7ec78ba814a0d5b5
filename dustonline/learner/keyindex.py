"""Each host's validation-URL keys under its dropped parameter names, in the store: the
counter-evidence index of params.py (two clusters on one key veto a name).

Every validation URL that arrives is checked against it, so it must cost O(1) a URL at
any size. Held in memory beside the host URLs and bounded by their cap, it was dropped
and rebuilt from a host's URLs on nearly every URL once a crawl's window held more URLs
than the cap (85% of a 1M-event run). In a table it is built once when a host's names or
moves change, and then only counted.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..state.store import Store


class KeyIndex:
    __slots__ = ("keys", "gens", "builds", "_prefixes")

    def __init__(self, store: Store):
        # host NUL generation NUL key -> [cluster, URLs]; mostly asked for keys it lacks
        self.keys = store.table("pkey", filtered=True)
        # host -> [generation, built]: a forgotten index moves to the next generation,
        # its keys range-deleted, so no stale key is read before the delete lands
        self.gens = store.table("pkgen")
        self.builds = 0  # indexes built in this process (a diagnostic)
        self._prefixes: dict[str, str | None] = {}  # of(host), asked for every URL: one per host

    def of(self, host: str) -> str | None:
        """The prefix of the host's keys, or None when its index is to be built."""
        prefixes = self._prefixes
        if host in prefixes:
            return prefixes[host]
        g = self.gens.get(host)
        prefix = f"{host}\x00{g[0]}\x00" if g is not None and g[1] else None
        prefixes[host] = prefix
        return prefix

    def build(self, host: str, keyed: Iterable[tuple[str, str]]) -> bool:
        """The host's index from ``(key, cluster)`` of all its URLs; False (and nothing
        kept) when two clusters share a key."""
        idx: dict[str, list] = {}
        for k, cid in keyed:
            e = idx.get(k)
            if e is None:
                idx[k] = [cid, 1]
            elif e[0] != cid:
                return False
            else:
                e[1] += 1
        self.forget(host)
        g = self.gens.get(host)
        gen = g[0] if g is not None else 0
        prefix, keys = f"{host}\x00{gen}\x00", self.keys
        for k, e in idx.items():
            keys[prefix + k] = e
        self.gens[host] = [gen, 1]
        self._prefixes[host] = prefix
        self.builds += 1
        return True

    def forget(self, host: str) -> None:
        """The host's keys read otherwise now: built again when next needed."""
        g = self.gens.get(host)
        if g is not None and g[1]:
            self.keys.retire_prefix(f"{host}\x00{g[0]}\x00")
            self.gens[host] = [g[0] + 1, 0]
        self._prefixes.pop(host, None)

    def count(self, prefix: str, key: str, cid: str, delta: int) -> bool:
        """A URL of cluster ``cid`` with this key came (+1) or went (-1); False when it
        came with a key another cluster has (nothing counted)."""
        fk = prefix + key
        keys = self.keys
        e = keys.get(fk)
        if delta < 0:
            if e is not None:
                if e[1] <= 1:
                    del keys[fk]
                else:
                    e[1] -= 1
                    keys[fk] = e
            return True
        if e is None:
            keys[fk] = [cid, 1]
        elif e[0] == cid:
            e[1] += 1
            keys[fk] = e
        else:
            return False
        return True
