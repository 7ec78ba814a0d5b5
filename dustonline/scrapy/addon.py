"""The Scrapy add-on: ``ADDONS = {"dustonline.scrapy.Addon": 500}``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.utils.misc import load_object

from .dupefilter import DustDupeFilter
from .events import ORDER, FetchEventLog
from .fingerprinter import DustFingerprinter

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


class Addon:
    """Enables the rules' fingerprinter, the RocksDB dupe filter and the fetch event log.

    - ``REQUEST_FINGERPRINTER_CLASS`` becomes ``DustFingerprinter``, at the priority the
      setting had; the fingerprinter configured before (Scrapy's by default) becomes its
      fallback (``DUSTONLINE_FALLBACK_REQUEST_FINGERPRINTER_CLASS``), as Zyte's
      duplicate-url-discarder does.
    - ``DUPEFILTER_CLASS`` becomes ``DustDupeFilter`` at add-on priority: a dupe filter
      set in the project's settings stays, and still dedups by the rules' fingerprints.
    - ``FetchEventLog`` joins ``DOWNLOADER_MIDDLEWARES``; it writes only when
      ``DUSTONLINE_EVENTS`` is set.
    """

    def update_settings(self, settings: BaseSettings) -> None:
        current = settings.get("REQUEST_FINGERPRINTER_CLASS")
        if current is not None and load_object(current) is not DustFingerprinter:
            settings.set("DUSTONLINE_FALLBACK_REQUEST_FINGERPRINTER_CLASS", current, "addon")
        settings.set(
            "REQUEST_FINGERPRINTER_CLASS", DustFingerprinter, settings.getpriority("REQUEST_FINGERPRINTER_CLASS") or 0
        )
        settings.set("DUPEFILTER_CLASS", DustDupeFilter, "addon")
        settings.setdefault_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", FetchEventLog, ORDER)
