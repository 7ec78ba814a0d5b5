"""The spider tests/test_scrapy_addon.py runs with ``scrapy runspider``: it follows every
link on the site and writes, per response, the URL and a digest of the body (-o), and
the crawl's stats at the end (``-a stats=FILE``)."""

import hashlib
import json

import scrapy


class SiteSpider(scrapy.Spider):
    name = "site"
    allowed_domains = ["example.com"]

    def __init__(self, start: str = "http://www.example.com/", stats: str = "", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.stats_path = stats

    def parse(self, response):
        yield {"url": response.url, "digest": hashlib.sha1(response.body).hexdigest()}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse)

    def closed(self, reason):
        if self.stats_path:
            with open(self.stats_path, "w") as f:
                json.dump({**self.crawler.stats.get_stats(), "finish_reason": reason}, f, default=str)
