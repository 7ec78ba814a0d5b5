"""A dupe filter (``DUPEFILTER_CLASS``) whose seen-set of fingerprints lives in RocksDB.

Scrapy's ``RFPDupeFilter`` keeps every fingerprint in a Python set and, with ``JOBDIR``,
appends it to ``requests.seen``, which a resumed crawl reads back into memory whole:
memory grows with the crawl (about 100 bytes a fingerprint) and start-up time with the
file. Here the set is a RocksDB database: memory stays bounded by its caches, a resumed
crawl opens it without reading it, and a write reaches RocksDB's log at once, so a crawl
killed with ``kill -9`` keeps what it saw (``requests.seen`` loses its unflushed buffer).

Each fingerprint maps to the fallback (Scrapy's) fingerprint of the first request seen
with it, so a duplicate is told apart: the same request again (Scrapy alone would have
dropped it too) or an alias only the rules merged (``dustonline/skipped_aliases``, the
fetches the rules saved).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from scrapy.dupefilters import BaseDupeFilter
from scrapy.utils.job import job_dir
from scrapy.utils.request import RequestFingerprinter, referer_str

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

log = logging.getLogger("dustonline.scrapy")

SEEN_DIR = "dustonline-seen"  # under JOBDIR


class _RocksSet:
    """fingerprint -> first request's fallback fingerprint, in RocksDB."""

    def __init__(self, path: str | Path):
        from rocksdict import BlockBasedOptions, Options, Rdict

        opts = Options(raw_mode=True)
        opts.create_if_missing(True)
        table = BlockBasedOptions()
        table.set_bloom_filter(10, False)  # most lookups are of new fingerprints: answered by the filter
        opts.set_block_based_table_factory(table)
        opts.set_write_buffer_size(16 << 20)
        self.db = Rdict(str(path), opts)

    def get(self, key: bytes) -> bytes | None:
        return self.db.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        self.db[key] = value

    def close(self) -> None:
        self.db.flush()
        self.db.close()


class _MemorySet(dict):
    """The same, in memory (a crawl without ``JOBDIR`` or ``DUSTONLINE_SEEN_DIR``)."""

    def put(self, key: bytes, value: bytes) -> None:
        self[key] = value

    def close(self) -> None:
        pass


class DustDupeFilter(BaseDupeFilter):
    """Drops a request whose fingerprint (``crawler.request_fingerprinter``: with the
    add-on, the rules' key) was seen before, in this crawl or in an earlier run on the
    same seen directory: ``DUSTONLINE_SEEN_DIR``, by default ``JOBDIR/dustonline-seen``;
    in memory when neither is set.

    Stats: ``dupefilter/filtered`` (as Scrapy's), ``dustonline/skipped_duplicates`` (the
    same count) and ``dustonline/skipped_aliases`` (of which a different request was
    seen: what the rules saved), ``dustonline/seen_new`` (fingerprints added this run).
    """

    def __init__(self, path: str | Path | None = None, *, fingerprinter=None, stats=None, debug: bool = False):
        self.fingerprinter = fingerprinter or RequestFingerprinter()
        self.plain = RequestFingerprinter()  # Scrapy's own fingerprint: tells an alias from a repeat
        self.stats = stats
        self.debug = debug
        self.path = Path(path) if path else None
        self.seen: _RocksSet | _MemorySet
        if self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)
            self.seen = _RocksSet(self.path)
        else:
            self.seen = _MemorySet()
        self._alias: WeakKeyDictionary[Request, bool] = WeakKeyDictionary()
        self._logged = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DustDupeFilter:
        s = crawler.settings
        path = s.get("DUSTONLINE_SEEN_DIR")
        if not path and (jd := job_dir(s)):
            path = str(Path(jd) / SEEN_DIR)
        return cls(
            path, fingerprinter=crawler.request_fingerprinter, stats=crawler.stats, debug=s.getbool("DUPEFILTER_DEBUG")
        )

    def request_seen(self, request: Request) -> bool:
        fp = self.fingerprinter.fingerprint(request)
        plain = self.plain.fingerprint(request)
        first = self.seen.get(fp)
        if first is not None:
            self._alias[request] = first != plain
            return True
        self.seen.put(fp, plain)
        if self.stats is not None:
            self.stats.inc_value("dustonline/seen_new")
        return False

    def close(self, reason: str) -> None:
        self.seen.close()

    def log(self, request: Request, spider: Spider) -> None:
        alias = self._alias.pop(request, False)
        if self.stats is not None:
            self.stats.inc_value("dupefilter/filtered")
            self.stats.inc_value("dustonline/skipped_duplicates")
            if alias:
                self.stats.inc_value("dustonline/skipped_aliases")
        if self.debug:
            log.debug(
                "Filtered duplicate request%s: %s (referer: %s)",
                " (an alias by the rules)" if alias else "",
                request,
                referer_str(request),
                extra={"spider": spider},
            )
        elif not self._logged:
            log.debug(
                "Filtered duplicate request: %s - no more duplicates will be shown (see DUPEFILTER_DEBUG to show all)",
                request,
                extra={"spider": spider},
            )
            self._logged = True
