"""Fetch events from a Scrapy crawl, for the learner: ``DUSTONLINE_EVENTS = "fetches.jsonl"``.

One JSON line per response (docs/formats.md, "Fetch events"), which ``dustonline learn``
reads: URL, time, status, digest, simhash and length of the body as the spider gets it
(decompressed), and for a 3xx its ``redirect`` target. The 3xx responses are taken before
``RedirectMiddleware`` (600) turns them into requests, since a redirect whose target was
seen already never reaches the spider, and is the evidence the learner needs most.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured

from dustonline.events.sketch import sketch

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

#: its place in DOWNLOADER_MIDDLEWARES: after (closer to the network than) RedirectMiddleware
ORDER = 650


class FetchEventLog:
    """A downloader middleware that writes a fetch event per downloaded response."""

    def __init__(self, path: str | Path, stats=None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = self.path.open("a", encoding="utf-8")
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FetchEventLog:
        path = crawler.settings.get("DUSTONLINE_EVENTS")
        if not path:
            raise NotConfigured
        log = cls(path, crawler.stats)
        crawler.signals.connect(log.response_received, signal=signals.response_received)
        crawler.signals.connect(log.close, signal=signals.spider_closed)
        return log

    def _write(self, event: dict) -> None:
        self.file.write(json.dumps(event, separators=(",", ":")) + "\n")
        if self.stats is not None:
            self.stats.inc_value("dustonline/events_written")

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        """A 3xx as downloaded: its ``Location`` is the redirect (resolved against the URL)."""
        location_header = response.headers.get(b"Location")
        if 300 <= response.status < 400 and location_header is not None:
            location = location_header.decode("latin-1")
            self._write(
                {
                    "url": response.url,
                    "ts": time.time(),
                    "status": response.status,
                    "redirect": response.urljoin(location),
                }
            )
        return response

    def response_received(self, response: Response, request: Request, spider: Spider) -> None:
        """Every other response, as the spider gets it (after decompression)."""
        if 300 <= response.status < 400 and b"Location" in response.headers:
            return  # written by process_response (REDIRECT_ENABLED = False brings it here too)
        ctype = response.headers.get(b"Content-Type")
        event = {"url": response.url, "ts": time.time(), "status": response.status}
        event.update(
            (k, v)
            for k, v in sketch(response.body, ctype.decode("latin-1") if ctype else None).items()
            if v is not None
        )
        self._write(event)

    def close(self, spider: Spider | None = None) -> None:
        self.file.close()
