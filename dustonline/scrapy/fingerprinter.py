"""A request fingerprinter (``REQUEST_FINGERPRINTER_CLASS``) that fingerprints a request
by its URL's canonical key under the learned rules.

Every Scrapy component that dedups or caches by fingerprint (the scheduler's dupe
filter, ``HttpCacheMiddleware``, ``scrapy-deltafetch`` ...) then treats a page's DUST
aliases as one request. The key is fingerprinted by the fallback fingerprinter (Scrapy's
own by default, or the one configured before the add-on was enabled), so everything that
fallback merges (query order, fragments) stays merged: the add-on only ever merges more.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.request import RequestFingerprinter

from .rules import RuleSource

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

log = logging.getLogger("dustonline.scrapy")

#: methods whose response is named by the URL alone (without a body)
URL_METHODS = frozenset({"GET", "HEAD"})


class DustFingerprinter:
    """Fingerprints ``GET``/``HEAD`` requests without a body by the rules' key of their
    URL. Other requests, ``dont_filter`` ones and those with ``meta["dustonline"] =
    False`` get the fallback's fingerprint of the request as it is: the URL does not
    name what such a request fetches, or the spider asked for it explicitly.

    Stats: ``dustonline/rules_loaded``, ``dustonline/rules_refused``,
    ``dustonline/requests/canonicalized`` (requests fingerprinted by their key),
    ``dustonline/requests/rewritten`` (of which the key differs from the URL) and
    ``dustonline/requests/fallback``.
    """

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.stats = crawler.stats
        fallback = crawler.settings.get("DUSTONLINE_FALLBACK_REQUEST_FINGERPRINTER_CLASS") or RequestFingerprinter
        self.fallback = build_from_crawler(load_object(fallback), crawler)
        self.rules = RuleSource.from_settings(crawler.settings)
        # a request is fingerprinted by several components (dupe filter, cache): once,
        # also when the live rule set changes between their calls
        self._cache: WeakKeyDictionary[Request, bytes] = WeakKeyDictionary()
        crawler.signals.connect(self._opened, signal=signals.spider_opened)
        crawler.signals.connect(self._closed, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DustFingerprinter:
        return cls(crawler)

    def _opened(self, spider) -> None:
        if self.stats is not None:
            self.stats.set_value("dustonline/rules_loaded", len(self.rules))
            self.stats.set_value("dustonline/rules_refused", self.rules.refused)
        log.info("dustonline: %d rules apply (%d refused)", len(self.rules), self.rules.refused)

    def _closed(self) -> None:
        self.rules.close()

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)

    def canonical_url(self, request: Request) -> str | None:
        """The key the request is fingerprinted by, or None when it is fingerprinted as
        it is (see the class docstring)."""
        if (
            request.method not in URL_METHODS
            or request.body
            or request.dont_filter
            or request.meta.get("dustonline", True) is False
        ):
            return None
        return self.rules.canonicalize(request.url)

    def _followed(self, request: Request, key: str) -> bool:
        """Is this the target of a redirect whose source has the same key? The rules
        learn from redirects, so they key both alike; the source was let through and
        the page is still to be fetched: the key already seen must not drop it."""
        sources = request.meta.get("redirect_urls")
        if not sources:
            return False
        return self.rules.canonicalize(sources[-1]) == key

    def fingerprint(self, request: Request) -> bytes:
        fp = self._cache.get(request)
        if fp is None:
            fp = self._cache[request] = self._fingerprint(request)
        return fp

    def _fingerprint(self, request: Request) -> bytes:
        key = self.canonical_url(request)
        if key is None:
            self._inc("dustonline/requests/fallback")
            return self.fallback.fingerprint(request)
        if self._followed(request, key):
            self._inc("dustonline/requests/followed")
            return hashlib.sha1(b"dustonline:followed\x00" + self.fallback.fingerprint(request)).digest()
        self._inc("dustonline/requests/canonicalized")
        if key == request.url:
            return self.fallback.fingerprint(request)
        self._inc("dustonline/requests/rewritten")
        try:
            keyed = request.replace(url=key)
        except ValueError:  # a key Scrapy cannot take as a URL: never merge on it
            log.warning("dustonline: key %r of %s is not a URL; fingerprinted as it is", key, request.url)
            return self.fallback.fingerprint(request)
        return self.fallback.fingerprint(keyed)
