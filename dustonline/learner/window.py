"""The rolling window: which URLs the learner still holds. A URL leaves when it was last
seen before the window (``window.seconds``) or when its site holds more than
``window.max_urls_per_site`` (earliest arrived first). Indexes by time bucket and by
per-site arrival (chunklog.py) keep a sweep proportional to what it evicts."""

from __future__ import annotations

from collections.abc import Callable

from ..config import Window as WindowConfig
from ..state.chunklog import CHUNK, ChunkLog, TimeGroups
from ..state.store import Store
from .records import URLRec

Evict = Callable[[str, URLRec], None]


class Window:
    def __init__(self, store: Store, cfg: WindowConfig, logs: dict):
        self.cfg = cfg
        # URL records are written once and scanned, rarely read back by key: not worth
        # caching; the filter answers the usual question, "is this URL new?"
        self.urls = store.table("url", keep=False, filtered=True, type=URLRec)
        self.sites = store.table("site")  # site -> [URLs held, next arrival number]
        # (a full chunk goes to the store soon: pending, it would hold 256 URL keys)
        self.by_time = ChunkLog(store.table("url-by-time", keep=False, flush_at=16), logs.get("time"))
        self.by_arrival = ChunkLog(store.table("url-by-arrival", keep=False, flush_at=16), logs.get("arrival"))
        self._time_group = TimeGroups(cfg.sweep_every)

    def _bucket(self, ts: float) -> int:
        return int(ts // self.cfg.sweep_every)

    def refresh(self, ukey: str, ts: float) -> bool:
        """A URL fetched again only moves its last-seen time; False if it is new."""
        rec = self.urls.get(ukey)
        if rec is None:
            return False
        if ts > rec.seen:
            if self._bucket(ts) != self._bucket(rec.seen):
                self.by_time.append(self._time_group(ts), ukey)  # the old entry goes stale
            rec.seen = ts
            self.urls[ukey] = rec
        return True

    def add(self, ukey: str, site: str, cid: str, ts: float, validates: bool) -> None:
        count, seq = self.sites.get(site) or (0, 0)
        self.sites[site] = [count + 1, seq + 1]
        self.urls[ukey] = URLRec(cid, ts, seq, validates)
        self.by_time.append(self._time_group(ts), ukey)
        self.by_arrival.append(site, [seq, ukey])

    def remove(self, ukey: str, site: str) -> None:
        self.urls.pop(ukey)
        count, seq = self.sites.get(site) or (1, 0)
        if count > 1:
            self.sites[site] = [count - 1, seq]
        else:  # its arrival numbers start again at 0: the old log must go
            self.sites.pop(site)
            self.by_arrival.drop_group(site)

    def sweep(self, clock: float, evict: Evict) -> int:
        """Evict URLs last seen before the window, then the earliest-arrived URLs of sites
        over their cap; ``evict`` is called for each (and calls ``remove``). Returns how
        many were evicted."""
        W = self.cfg
        cutoff = clock - W.seconds
        due = self._bucket(cutoff)
        expired: dict[str, list[str]] = {}
        for group, _key, ukeys in self.by_time.chunks():
            if int(group) >= due:
                break
            expired.setdefault(group, []).extend(ukeys)
        evicted = 0
        for group, ukeys in expired.items():
            bucket = int(group)
            for ukey in ukeys:
                rec = self.urls.get(ukey)
                if rec is not None and rec.seen < cutoff and self._bucket(rec.seen) == bucket:
                    evict(ukey, rec)
                    evicted += 1
            self.by_time.drop_group(group)
        for site, (count, _seq) in list(self.sites.items()):
            if self.by_arrival.bound(site) > 2 * count + CHUNK:
                self._compact(site)
            if count <= W.max_urls_per_site:
                continue
            excess = count - W.max_urls_per_site
            for _site, key, entries in self.by_arrival.chunks(site):
                if excess <= 0:
                    break
                used = 0
                for seq, ukey in entries:
                    if excess <= 0:
                        break
                    used += 1
                    rec = self.urls.get(ukey)
                    if rec is not None and rec.seq == seq:  # else evicted (and maybe back, later)
                        evict(ukey, rec)
                        evicted += 1
                        excess -= 1
                self.by_arrival.replace(key, entries[used:])
        return evicted

    def held(self, site: str) -> list[tuple[int, str, URLRec]]:
        """The URLs of ``site`` the window holds, in arrival order: (arrival number, key,
        record). Stale entries of its arrival log (URLs evicted, or back since) are skipped."""
        urls = self.urls
        out = []
        for _site, _key, entries in self.by_arrival.chunks(site):
            for seq, ukey in entries:
                rec = urls.get(ukey)
                if rec is not None and rec.seq == seq:
                    out.append((seq, ukey, rec))
        return out

    def _compact(self, site: str) -> None:
        """Rewrite the site's arrival log with only the URLs it still holds, in arrival
        order. URLs evicted by time leave their entries behind, and only the cap consumes
        the log: a site under its cap would keep one entry per URL it ever held. Run when
        stale entries outnumber live ones, so each entry is read back a bounded number of
        times."""
        live = [[seq, ukey] for seq, ukey, _ in self.held(site)]
        self.by_arrival.drop_group(site)
        for entry in live:
            self.by_arrival.append(site, entry)

    def logs_state(self) -> dict:
        return {"time": self.by_time.state(), "arrival": self.by_arrival.state()}

    def save(self) -> None:
        self.by_time.save()
        self.by_arrival.save()
