"""The Scrapy add-on (dustonline/scrapy/) in real Scrapy crawls of a local site with DUST.

A server on 127.0.0.1 serves ``example.com`` and ``www.example.com`` (Scrapy reaches it as
its HTTP proxy, so both host names lead to it without DNS): 25 pages, linked under session
ids (``?sessionid=``), under either host, as ``/`` and ``/index.html``, and through old
URLs that redirect (``/product.php?id=N`` -> ``/product/N``). The workflow a crawler operator
follows is run end to end: a crawl without the add-on writes its fetch events
(``DUSTONLINE_EVENTS``), ``dustonline learn`` learns rules from them, and a crawl with the
add-on and those rules must fetch fewer URLs and still every page. Crawls run in
subprocesses (``scrapy runspider``): Twisted's reactor cannot restart in one process.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("scrapy")

SPIDER = Path(__file__).with_name("scrapy_spider.py")
HOSTS = ("www.example.com", "example.com")
CATS = ("bikes", "books", "tools", "games", "music", "garden", "kitchen", "sports")
PRODUCTS = range(1, 25)
NEWS = range(1, 13)
WORDS = (
    "river stone maple cloud amber signal harbor violet engine garden copper lantern meadow "
    "orbit pepper quartz saddle timber velvet willow anchor bramble cinder delta ember falcon "
    "glacier hollow iris juniper kettle lemon marble nectar oyster pebble quiver raven"
).split()


# ------------------------------------------------------------------ the site
def pages() -> list[str]:
    """Every distinct page, by its path."""
    return ["/", *(f"/cat/{c}/" for c in CATS), *(f"/product/{n}" for n in PRODUCTS), *(f"/news/{n}" for n in NEWS)]


def _h(*parts: object) -> int:
    return int(hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest(), 16)


def _link(page: str, target: str, sid: bool = True) -> str:
    """An absolute link from ``page`` to ``target`` as a DUST site writes it: the host
    with or without www, and a session id that depends on the page it is written on."""
    host = HOSTS[_h(page, target, "host") % 2]
    query = f"?sessionid={_h(page, target, 'sid') % 16**10:010x}" if sid and _h(page, target, "s") % 4 else ""
    return f"http://{host}{target}{query}"


def _links(page: str) -> list[str]:
    out = []
    if page == "/":
        out += [_link(page, f"/cat/{c}/" + ("index.html" if i % 2 else ""), sid=False) for i, c in enumerate(CATS)]
        out += [_link(page, f"/news/{n}") for n in NEWS]
        out += [_link(page, f"/product.php?id={n}", sid=False) for n in (1, 2, 3, 4, 5, 6)]  # old URLs: redirects
        out.append(_link(page, "/index.html", sid=False))
    elif page.startswith("/cat/"):
        i = CATS.index(page.split("/")[2])
        out += [_link(page, f"/product/{n}") for n in PRODUCTS if n % len(CATS) == i]
        out.append(_link(page, "/index.html", sid=False))
    elif page.startswith("/product/"):
        n = int(page.rsplit("/", 1)[1])
        out += [_link(page, f"/product/{m}") for m in (n - 1, n + 1) if m in PRODUCTS]
        out.append(_link(page, f"/cat/{CATS[n % len(CATS)]}/index.html", sid=False))
        out.append(_link(page, f"/news/{n % len(NEWS) + 1}"))
        if n + 2 in PRODUCTS:
            out.append(_link(page, f"/product.php?id={n + 2}", sid=False))
    else:
        n = int(page.rsplit("/", 1)[1])
        out += [_link(page, f"/news/{n % len(NEWS) + 1}"), _link(page, f"/product/{n}"), _link(page, "/", sid=False)]
    return out


def body(page: str) -> bytes:
    """A page's HTML: the same under every alias; its text drawn at random per page, so
    that no two pages are near-duplicates."""
    rnd = random.Random(page)
    text = " ".join(rnd.choice(WORDS) for _ in range(60))
    links = "".join(f'<li><a href="{u}">{urlsplit(u).path}</a></li>' for u in _links(page))
    head = f"<html><head><title>{page}</title></head>"
    return f"{head}<body><h1>{page}</h1><p>{text}</p><ul>{links}</ul></body></html>".encode()


def resolve(path: str, query: str) -> tuple[int, str]:
    """(status, page or Location) for a path of the site: aliases serve their page."""
    if path == "/index.html":
        path = "/"
    elif path.startswith("/cat/") and path.endswith("/index.html"):
        path = path[: -len("index.html")]
    if path == "/product.php":
        n = parse_qs(query).get("id", [""])[0]
        if n.isdigit() and int(n) in PRODUCTS:
            return 301, f"http://www.example.com/product/{n}"
    return (200, path) if path in pages() else (404, "")


class Site:
    """The site on 127.0.0.1, reached as an HTTP proxy: a request line carries the
    absolute URL, so the host name is the URL's. Every request is recorded."""

    def __init__(self):
        site = self
        self.requests: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                url = self.path
                site.requests.append(url)
                parts = urlsplit(url)
                status, target = (404, "") if parts.hostname not in HOSTS else resolve(parts.path, parts.query)
                payload = body(target) if status == 200 else b""
                self.send_response(status)
                if status == 301:
                    self.send_header("Location", target)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.proxy = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Site:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def site():
    with Site() as s:
        yield s


# ------------------------------------------------------------------ crawls
class Crawl:
    def __init__(self, stats: dict, items: list[dict], served: list[str]):
        self.stats = stats
        self.items = items
        self.served = served  # the requests the server answered

    @property
    def fetches(self) -> int:
        return self.stats.get("downloader/request_count", 0)

    @property
    def contents(self) -> set[str]:
        return {i["digest"] for i in self.items}


def crawl(site: Site, out: Path, *settings: str) -> Crawl:
    """One ``scrapy runspider`` of the site, its settings as ``NAME=VALUE``."""
    out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "https_proxy", "all_proxy")}
    env["http_proxy"] = site.proxy
    args = [sys.executable, "-m", "scrapy", "runspider", str(SPIDER), "-o", str(out / "items.jsonl")]
    args += ["-a", f"stats={out / 'stats.json'}", "-s", "LOG_LEVEL=INFO", "-s", "CONCURRENT_REQUESTS=4"]
    for s in settings:
        args += ["-s", s]
    before = len(site.requests)
    p = subprocess.run(args, env=env, cwd=out, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    (out / "log.txt").write_text(p.stderr)
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines() if line]
    return Crawl(json.loads((out / "stats.json").read_text()), items, site.requests[before:])


def learn(events: Path, rules: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "dustonline", "learn", str(events), "--rules-out", str(rules), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=rules.parent,
    )
    assert p.returncode == 0, p.stderr


ADDON = 'ADDONS={"dustonline.scrapy.Addon": 500}'


@pytest.fixture(scope="module")
def learned(site, tmp_path_factory):
    """The baseline crawl (Scrapy's own fingerprints and dupe filter; only the add-on's
    fetch event log, which changes no request) and the rules learned from its events."""
    root = tmp_path_factory.mktemp("scrapy")
    base = crawl(
        site,
        root / "baseline",
        "DUSTONLINE_EVENTS=events.jsonl",
        'DOWNLOADER_MIDDLEWARES={"dustonline.scrapy.FetchEventLog": 650}',
    )
    rules = root / "rules.jsonl"
    learn(root / "baseline" / "events.jsonl", rules)
    return root, base, rules


def expected_contents() -> set[str]:
    return {hashlib.sha1(body(p)).hexdigest() for p in pages()}


def test_the_baseline_crawl_sees_the_sites_dust(learned):
    """Without the add-on Scrapy fetches aliases: more requests than pages, every page
    among them, and its event log has one event per download (3xx with their targets)."""
    root, base, rules = learned
    assert base.contents == expected_contents()
    assert base.fetches == len(base.served) > 2 * len(pages())
    events = [json.loads(line) for line in (root / "baseline" / "events.jsonl").read_text().splitlines()]
    assert len(events) == base.fetches == base.stats["dustonline/events_written"]
    redirects = [e for e in events if e["status"] == 301]
    assert redirects and all(e["redirect"].startswith("http://www.example.com/product/") for e in redirects)
    assert all(e["digest"].startswith("sha1:") and e["simhash"] for e in events if e["status"] == 200)
    assert "dustonline/rules_loaded" not in base.stats  # Scrapy's own fingerprinter did the dedup
    assert len(rules.read_text().splitlines()) >= 2  # the learner found DUST to learn


@pytest.fixture(scope="module")
def with_rules(site, learned) -> Crawl:
    """The same crawl with the add-on and the learned rules file."""
    root, base, rules = learned
    return crawl(site, root / "addon", ADDON, f"DUSTONLINE_RULES={rules}")


def test_the_addon_fetches_fewer_urls_and_misses_no_page(learned, with_rules, capsys):
    """With the rules the baseline taught, the same crawl downloads fewer URLs and still
    every page: the fingerprinter keys aliases alike, the dupe filter drops them."""
    root, base, rules = learned
    dust = with_rules
    assert dust.contents == expected_contents()  # no page missed
    assert dust.fetches == len(dust.served) < base.fetches
    s = dust.stats
    assert s["dustonline/rules_loaded"] == len(rules.read_text().splitlines())
    assert s["dustonline/requests/rewritten"] > 0
    assert s["dustonline/skipped_aliases"] > 0  # duplicates only the rules could tell
    assert s["dustonline/skipped_duplicates"] == s["dupefilter/filtered"] >= s["dustonline/skipped_aliases"]
    # without a JOBDIR the seen-set is in memory: nothing written beside the crawl
    assert not any(p.name == "dustonline-seen" for p in (root / "addon").rglob("*"))
    with capsys.disabled():
        print(
            f"\nscrapy crawl of {len(pages())} pages: {base.fetches} fetches without the add-on, "
            f"{dust.fetches} with it; pages missed: {len(expected_contents() - dust.contents)}"
        )


def test_a_paused_crawl_resumes_without_refetching_what_it_saw(site, learned, capsys):
    """JOBDIR: a crawl stopped after 12 pages and run again goes on from where it
    stopped. The seen-set (RocksDB under JOBDIR) comes back, so the second run fetches no
    page the first fetched (but the start URL, which Scrapy re-sends with dont_filter),
    and together they fetch every page. With the seen-set left behind, the resumed run
    fetches pages again: what the persistence saves."""
    root, base, rules = learned
    job = root / "job"
    first = crawl(
        site, root / "paused", ADDON, f"DUSTONLINE_RULES={rules}", f"JOBDIR={job}", "CLOSESPIDER_PAGECOUNT=12"
    )
    assert first.stats["finish_reason"] == "closespider_pagecount"
    assert (job / "dustonline-seen").is_dir() and not (job / "requests.seen").exists()
    second = crawl(site, root / "resumed", ADDON, f"DUSTONLINE_RULES={rules}", f"JOBDIR={job}")
    assert second.stats["finish_reason"] == "finished"
    home = hashlib.sha1(body("/")).hexdigest()
    assert first.contents | second.contents == expected_contents()
    assert first.contents & second.contents <= {home}
    assert second.stats["dustonline/skipped_duplicates"] > 0
    with capsys.disabled():
        print(f"\npaused after {first.fetches} fetches, resumed for {second.fetches} more")

    # the same pause, resumed on an empty seen-set: pages of the first run come again
    job2 = root / "job2"
    first2 = crawl(
        site, root / "paused2", ADDON, f"DUSTONLINE_RULES={rules}", f"JOBDIR={job2}", "CLOSESPIDER_PAGECOUNT=12"
    )
    forgot = crawl(
        site,
        root / "forgot",
        ADDON,
        f"DUSTONLINE_RULES={rules}",
        f"JOBDIR={job2}",
        f"DUSTONLINE_SEEN_DIR={root / 'empty'}",
    )
    assert len((first2.contents & forgot.contents) - {home}) > 0


def test_the_addon_follows_the_rules_topic(site, learned, with_rules, kafka_broker, tmp_path):
    """``DUSTONLINE_RULES_TOPIC``: the same rules read from the rules topic on the real
    broker (RuleSubscriber, through the entry point) give the crawl the file gave."""
    import uuid

    import yaml
    from kafka import KafkaProducer

    from dustonline.rules.ruleset import read_rules
    from dustonline_stream.publish import publish_rules

    root, base, rules = learned
    topic = f"t{uuid.uuid4().hex[:8]}.rules"
    producer = KafkaProducer(bootstrap_servers=kafka_broker, acks="all")
    publish_rules(producer, topic, read_rules(rules))
    producer.flush()
    producer.close()
    config = tmp_path / "kafka.yaml"
    config.write_text(yaml.safe_dump({"kafka": {"bootstrap_servers": kafka_broker, "rules_topic": topic}}))
    live = crawl(site, tmp_path / "topic", ADDON, "DUSTONLINE_RULES_TOPIC=True", f"DUSTONLINE_CONFIG={config}")
    assert live.stats["dustonline/rules_loaded"] == len(rules.read_text().splitlines())
    assert live.contents == expected_contents()
    # not fetch for fetch: a redirect costs one fetch more when its source comes before a
    # direct link to its target, and that order is the concurrent crawl's
    assert live.fetches < base.fetches and abs(live.fetches - with_rules.fetches) <= len(PRODUCTS)


# ------------------------------------------------------------------ in process (no reactor)
def _crawler(settings: dict):
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    return get_crawler(Spider, settings)


@pytest.fixture
def rules_file(tmp_path):
    """Two rules of the kind the learner writes for this site: www and session ids."""
    from dustonline.rules import Rule, write_rules

    path = tmp_path / "rules.jsonl"
    hosts = ["example.com", "www.example.com"]
    write_rules(
        path,
        [
            Rule(
                id="p-sid",
                hosts=hosts,
                context="",
                transformation="",
                support=3,
                fpr=0.0,
                freq=3,
                version=1,
                status="active",
                updated=0.0,
                drop_param="sessionid",
            ),
            Rule(
                id="r-www",
                hosts=hosts,
                context=r"^(http)\:\/\/(?:www\.)?(example\.com)(\/[^?#]*)$",
                transformation="$1://$2$3",
                support=9,
                fpr=0.0,
                freq=3,
                version=1,
                status="active",
                updated=0.0,
            ),
        ],
    )
    return path


def test_the_fingerprinter_keys_aliases_alike_and_falls_back_where_the_url_is_not_the_request(rules_file):
    """Aliases by the rules share a fingerprint; what Scrapy's fingerprint merges (query
    order) stays merged; a request the URL does not name (POST, a body, dont_filter,
    ``meta["dustonline"] = False``) gets Scrapy's own fingerprint."""
    from scrapy import Request
    from scrapy.utils.request import fingerprint

    crawler = _crawler({"ADDONS": {"dustonline.scrapy.Addon": 500}, "DUSTONLINE_RULES": str(rules_file)})
    fp = crawler.request_fingerprinter.fingerprint
    a, b = "http://www.example.com/p/1?sessionid=9f3a", "http://example.com/p/1"
    assert fp(Request(a)) == fp(Request(b)) != fingerprint(Request(a))
    assert fp(Request(b)) != fp(Request("http://example.com/p/2"))
    assert fp(Request("http://other.org/x?b=2&a=1")) == fp(Request("http://other.org/x?a=1&b=2"))
    for req in (
        Request(a, method="POST"),
        Request(a, body=b"q=1"),
        Request(a, dont_filter=True),
        Request(a, meta={"dustonline": False}),
    ):
        assert fp(req) == fingerprint(req) != fp(Request(b))
    stats = crawler.stats.get_stats()
    assert stats["dustonline/requests/fallback"] == 4 and stats["dustonline/requests/rewritten"] >= 1


def test_a_redirects_target_keyed_as_its_source_is_not_its_duplicate(rules_file):
    """The rules learn from redirects, so a 301's source and target share a key; the
    source's request registered it, and the target still has the page to fetch. A
    target keyed otherwise, and a later link to the page, are keyed as usual."""
    from scrapy import Request

    crawler = _crawler({"ADDONS": {"dustonline.scrapy.Addon": 500}, "DUSTONLINE_RULES": str(rules_file)})
    fp = crawler.request_fingerprinter.fingerprint
    source, target = "http://example.com/p/1?sessionid=9f3a", "http://www.example.com/p/1"
    followed = Request(target, meta={"redirect_urls": [source]})
    assert fp(followed) != fp(Request(source)) == fp(Request(target))
    elsewhere = Request("http://example.com/p/2", meta={"redirect_urls": [source]})
    assert fp(elsewhere) == fp(Request("http://example.com/p/2"))
    assert crawler.stats.get_value("dustonline/requests/followed") == 1


def test_the_addon_keeps_the_projects_own_fingerprinter_and_dupe_filter(rules_file):
    """A fingerprinter set before becomes the fallback (its fingerprints of the keys); a
    dupe filter set in the project's settings outranks the add-on's."""
    crawler = _crawler(
        {
            "ADDONS": {"dustonline.scrapy.Addon": 500},
            "DUSTONLINE_RULES": str(rules_file),
            "REQUEST_FINGERPRINTER_CLASS": UrlOnlyFingerprinter,
            "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter",
        }
    )
    from scrapy import Request

    from dustonline.scrapy import DustFingerprinter

    f = crawler.request_fingerprinter
    assert isinstance(f, DustFingerprinter) and isinstance(f.fallback, UrlOnlyFingerprinter)
    assert f.fingerprint(Request("http://www.example.com/p?sessionid=1")) == b"http://example.com/p"
    assert crawler.settings.get("DUPEFILTER_CLASS") == "scrapy.dupefilters.RFPDupeFilter"


class UrlOnlyFingerprinter:
    def fingerprint(self, request):
        return request.url.encode()


def test_the_seen_set_outlives_the_dupe_filter(rules_file, tmp_path):
    """The RocksDB seen-set: a new dupe filter on the same directory (a resumed crawl)
    knows what the last one saw, and tells an alias (different URL, same key) from a
    repeat of the same request in its stats."""
    from scrapy import Request, Spider

    from dustonline.scrapy import DustDupeFilter

    seen = tmp_path / "seen"
    crawler = _crawler(
        {
            "ADDONS": {"dustonline.scrapy.Addon": 500},
            "DUSTONLINE_RULES": str(rules_file),
            "DUSTONLINE_SEEN_DIR": str(seen),
        }
    )
    df = DustDupeFilter.from_crawler(crawler)
    assert not df.request_seen(Request("http://www.example.com/p/1?sessionid=a"))
    assert not df.request_seen(Request("http://www.example.com/p/2"))
    df.close("shutdown")

    df = DustDupeFilter.from_crawler(crawler)
    spider = Spider("s")
    spider.crawler = crawler
    for url in ("http://www.example.com/p/1?sessionid=a", "http://example.com/p/1?sessionid=b"):
        req = Request(url)
        assert df.request_seen(req)
        df.log(req, spider)
    assert not df.request_seen(Request("http://example.com/p/3"))
    df.close("finished")
    s = crawler.stats.get_stats()
    assert s["dustonline/skipped_duplicates"] == s["dupefilter/filtered"] == 2
    assert s["dustonline/skipped_aliases"] == 1
