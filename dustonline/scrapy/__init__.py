"""dustonline in Scrapy: a request fingerprinter and a dupe filter that skip a page's DUST
aliases by the learned rules, and a fetch event log to learn them from.

    # settings.py
    ADDONS = {"dustonline.scrapy.Addon": 500}
    DUSTONLINE_RULES = "rules.jsonl"        # or DUSTONLINE_RULES_TOPIC = True (+ DUSTONLINE_CONFIG)
    DUSTONLINE_EVENTS = "fetches.jsonl"     # optional: what `dustonline learn` learns from
    JOBDIR = "crawls/run-1"                 # optional: the seen-set persists under it

Needs the ``scrapy`` extra (``pip install 'dustonline[scrapy]'``); the rest of dustonline
never imports this package. See docs/scrapy.md.
"""

from .addon import Addon
from .dupefilter import DustDupeFilter
from .events import FetchEventLog
from .fingerprinter import DustFingerprinter
from .rules import RuleSource

__all__ = ["Addon", "DustDupeFilter", "DustFingerprinter", "FetchEventLog", "RuleSource"]
