"""The validation URLs of each host, as candidate back-fill and refinement read them.

A new candidate is counted over every stored validation URL of its hosts, and a
refinement test walks them again. Scanning the URL table for that decodes every record
of the host, two thirds of which only train. This keeps ``url -> cluster`` per host in
memory instead: loaded from the URL table on a host's first use, kept current as URLs
arrive and leave, and bounded by dropping the least recently used hosts past ``cap``
URLs (a dropped host is simply loaded again when needed).
"""

from __future__ import annotations

from collections import OrderedDict

from ..state.store import Table


def drop_least_recent(per_host: OrderedDict[str, dict], size: int, cap: int, keep: str) -> int:
    """Drop the least recently used hosts of ``per_host`` but ``keep`` while their entries
    (``size``) are over ``cap``; returns the size left. Shared by every per-host index
    kept beside the tables, so each is bounded as it grows, not only when a host loads."""
    while size > cap and len(per_host) > 1:
        h, old = per_host.popitem(last=False)
        if h == keep:
            per_host[h] = old  # to the end: the next oldest goes
        else:
            size -= len(old)
    return size


class HostURLs:
    __slots__ = ("urls", "cap", "hosts", "size")

    def __init__(self, urls: Table, cap: int):
        self.urls = urls
        self.cap = cap
        self.hosts: OrderedDict[str, dict[str, str]] = OrderedDict()
        self.size = 0

    def of(self, host: str) -> dict[str, str]:
        """``url -> cluster id`` of the host's validation URLs (do not mutate)."""
        d = self.hosts.get(host)
        if d is not None:
            self.hosts.move_to_end(host)
            return d
        cut = len(host) + 1
        # in arrival order (URLRec.seq), the order ``add`` keeps, not the table's key
        # order: what walks a host's URLs sees one order whether the host stayed in
        # memory or was dropped and loaded again, so results cannot depend on the cap
        recs = sorted(
            (rec.seq, ukey[cut:], rec.cluster) for ukey, rec in self.urls.items(host + "\x00") if rec.validates
        )
        d = {url: cid for _, url, cid in recs}
        self.hosts[host] = d
        self.size += len(d)
        self._bound(host)
        return d

    def _bound(self, keep: str) -> None:
        self.size = drop_least_recent(self.hosts, self.size, self.cap, keep)

    def add(self, host: str, url: str, cid: str) -> None:
        d = self.hosts.get(host)
        if d is not None and url not in d:
            d[url] = cid
            self.size += 1
            if self.size > self.cap:
                self._bound(host)

    def remove(self, host: str, url: str) -> None:
        d = self.hosts.get(host)
        if d is not None and d.pop(url, None) is not None:
            self.size -= 1
