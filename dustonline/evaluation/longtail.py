"""Long-tail synthetic fetch stream: many small sites and a few large ones, each with its
own web software, parameter names and mix of DUST, so that the learner can be judged on a
workload it was not tuned on (generator.py's sites are large and share fixed names).

Each site draws a platform (WordPress, Drupal, plain PHP, Joomla, a forum, osCommerce, Zen
Cart, Java, ASP.NET, ColdFusion, static HTML, a modern framework, or a media site with
case-sensitive ids), a URL style of that platform, the session-id name that software uses,
its own tracking parameters, cache busters, CDN hosts, and a random subset of alias
families with random weights. Sizes follow a log-normal law: most sites have a few dozen
pages, a few have thousands. Alias URLs compose several families at once (http + bare
host + session id + utm parameters), with a per-site law of how many alias URLs a page
gets and how many families one URL carries. Some sites redirect (http -> https, bare ->
www or back, missing trailing slash -> slash): the 3xx of the alias URL (its target in
``FetchEvent.redirect`` where that field exists) comes right before the 2xx fetch of the
target. Traps change content (pagination, sort and filter
parameters, version/print/mirror directories, language paths, case-sensitive ids that
differ only in case), soft-404 bodies and shared assets repeat one body under many URLs,
and non-2xx fetches say nothing.

The ground-truth contract is generator.py's: ``generate(cfg)`` yields ``(FetchEvent,
truth)`` in non-decreasing event time; exact duplicates share digest and simhash; distinct
truths never share a digest among 2xx events; non-2xx events carry the truth of their URL
with an error or empty digest; the first event of every page truth is its main URL (label
``main``, or ``trap:<kind>`` for a trap's own page). ``generate_labeled`` adds the label:
``main``, ``alias:<family>[+<family>...]``, ``trap:<kind>``, ``redirect:<families>`` (the
3xx) or ``error:<status>``; ``write_stream`` (generator.py's, which takes this config too)
writes the files ``dustonline eval --truth`` reads. There are no near-duplicates: every
page body is exact.

Every random draw comes from ``random.Random`` instances seeded from the config's seed and
the site's index, so the same settings give the same stream, and a site does not change
when another is added.
"""

from __future__ import annotations

import argparse
import heapq
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from math import exp, inf, log
from pathlib import Path
from random import Random
from typing import Any

from ..events.event import EMPTY_DIGEST, FetchEvent
from . import generator as _generator
from .generator import _content, _open_write, write_stream

__all__ = [
    "LongtailConfig",
    "generate",
    "generate_labeled",
    "site_layout",
    "write_stream",
    "write_layout",
    "load_settings",
    "write_files",
    "generate_command",
    "LT_FAMILIES",
    "PLATFORMS",
]

#: the ``redirect`` field (Location of a 3xx) exists only in newer FetchEvents
HAS_REDIRECT_FIELD = "redirect" in getattr(FetchEvent, "__struct_fields__", ())

DISCOVERY_SHARE = 0.7  # a site's pages are discovered in the first 70% of its crawl window
MIN_DELAY = 60.0  # a later fetch of a page comes at least a minute after its discovery
MIN_PAGES = 3


@dataclass
class LongtailConfig:
    """Knobs of the long-tail workload; every per-site law is drawn around them."""

    seed: int = 0
    sites: int = 300
    median_pages: float = 60.0  # median pages per site (log-normal); events are ~1.6x pages
    size_sigma: float = 1.3  # spread of log(site size): larger = a longer tail of big sites
    max_pages: int = 20000
    dup_rate: float = 0.35  # mean share of a site's pages also fetched under alias URLs
    compose: float = 0.35  # mean P(one more family on an alias URL), drawn per site
    clean_share: float = 0.15  # sites with no alias family of their own (redirects aside)
    redirect_share: float = 0.3  # sites that redirect http/www/slash aliases to the main URL
    case_sensitive_share: float = 0.1  # media sites with case-sensitive ids (and ids differing by case)
    noise: float = 0.04  # mean share of trap events
    error_rate: float = 0.02  # mean share of non-2xx events (drawn per site: a few are flaky)
    start_ts: float = 1_700_000_000.0
    duration: float = 14 * 86400.0

    def labeled(self) -> Iterator[tuple[FetchEvent, str, str]]:
        """For generator.write_stream, which writes any config with this method."""
        return generate_labeled(self)

    def check(self) -> None:
        if not isinstance(self.sites, int) or self.sites < 1:
            raise ValueError(f"sites must be an integer >= 1, not {self.sites!r}")
        if not self.median_pages >= 1 or self.size_sigma < 0 or self.max_pages < MIN_PAGES:
            raise ValueError(f"need median_pages >= 1, size_sigma >= 0 and max_pages >= {MIN_PAGES}")
        for name in (
            "dup_rate",
            "compose",
            "clean_share",
            "redirect_share",
            "case_sensitive_share",
            "noise",
            "error_rate",
        ):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0 or (name in ("noise", "error_rate") and v >= 0.5):
                raise ValueError(f"{name} must be a share in [0, 1] (noise and error_rate < 0.5), not {v!r}")
        if not self.duration > 0:
            raise ValueError("duration must be > 0")


# --------------------------------------------------------------------------- name pools

TLDS = ("com",) * 6 + (
    "org",
    "net",
    "de",
    "co.uk",
    "com.br",
    "fr",
    "it",
    "nl",
    "pl",
    "ru",
    "jp",
    "com.au",
    "es",
    "ca",
    "info",
    "io",
    "edu",
    "gov",
    "ch",
    "se",
)
_ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "ch",
    "cl",
    "dr",
    "fl",
    "gr",
    "kr",
    "pl",
    "sh",
    "sk",
    "st",
    "th",
    "tr",
)
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou", "y")
_NAME_SUFFIXES = (
    "news",
    "shop",
    "online",
    "24",
    "hub",
    "blog",
    "forum",
    "store",
    "tv",
    "media",
    "-info",
    "-world",
    "net",
    "4u",
    "daily",
    "-club",
    "wiki",
    "zone",
)
SECTIONS = _generator.SECTIONS + (
    "blog",
    "events",
    "reviews",
    "guides",
    "help",
    "about",
    "products",
    "recipes",
    "music",
    "games",
    "jobs",
    "autos",
)
CATS = _generator.CATS + (
    "phones",
    "laptops",
    "cameras",
    "furniture",
    "beauty",
    "sports",
    "pets",
    "baby",
    "music",
)
# the default generator's words, then more: a long tail of sites needs more slugs
WORDS = _generator.WORDS + (
    "best",
    "how",
    "to",
    "why",
    "top",
    "ten",
    "free",
    "open",
    "home",
    "day",
    "night",
    "water",
    "data",
    "cloud",
    "road",
    "train",
    "coffee",
    "garden",
    "python",
    "winner",
    "story",
)
SCRIPTS = (
    "article",
    "view",
    "item",
    "show",
    "detail",
    "details",
    "news",
    "page",
    "product",
    "read",
    "display",
    "content",
    "story",
    "entry",
    "post",
)
ID_PARAMS = (
    "id",
    "pid",
    "item",
    "itemid",
    "aid",
    "nid",
    "article",
    "story",
    "no",
    "idx",
    "p",
    "cid",
    "docid",
    "post_id",
    "entry",
)
CAT_PARAMS = ("cat", "category", "catid", "c", "section", "sec", "group", "dept")
LANGS = ("fr", "de", "es", "pt", "it", "nl", "ja", "pl", "sv", "zh")
ASSET_EXTS = ("jpg", "jpg", "jpg", "png", "png", "gif", "webp")
_B62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_B32LOW = "abcdefghijklmnopqrstuvwxyz012345"  # ASP.NET session ids
_B64URL = _B62 + "-_"

# pagination: (parameter, first value, step): page=1,2,3 or start=0,20,40
PAGINATION = (
    ("page", 1, 1),
    ("page", 1, 1),
    ("p", 1, 1),
    ("pg", 1, 1),
    ("paged", 1, 1),
    ("pagenum", 1, 1),
    ("start", 0, 20),
    ("offset", 0, 25),
    ("from", 0, 10),
    ("pageIndex", 1, 1),
)
# sort, filter and view parameters: they change what a list shows, so never drop them
SORTS = (
    ("sort", ("price", "date", "name", "popularity", "rating")),
    ("order", ("asc", "desc")),
    ("orderby", ("date", "title", "price", "menu_order")),
    ("dir", ("asc", "desc")),
    ("sortBy", ("newest", "relevance", "priceAsc")),
    ("view", ("grid", "list", "compact")),
    ("filter", ("new", "sale", "instock")),
    ("color", ("red", "blue", "black", "white")),
    ("size", ("s", "m", "l", "xl")),
    ("limit", ("50", "100")),
    ("per_page", ("24", "48", "96")),
    ("brand", ("acme", "zenit", "orbit")),
    ("year", ("2019", "2020", "2021", "2022")),
)
# directories that look like copies of the site but hold other content
TRAP_DIRS = ("mirror", "mirror1", "print", "v1", "v2", "2.0", "latest", "old", "archive", "beta", "stable", "dev")
# libraries many sites serve byte for byte: (truth name, path variants)
SHARED_LIBS = (
    ("jquery-3.6.0.min.js", ("/js/jquery-3.6.0.min.js", "/assets/js/jquery.min.js", "/static/vendor/jquery.min.js")),
    ("jquery-1.12.4.min.js", ("/js/jquery-1.12.4.min.js", "/wp-includes/js/jquery/jquery.js", "/js/jquery.js")),
    ("bootstrap-4.6.2.min.css", ("/css/bootstrap.min.css", "/assets/css/bootstrap.min.css")),
    ("bootstrap-5.3.0.min.js", ("/js/bootstrap.bundle.min.js", "/static/js/bootstrap.min.js")),
    ("font-awesome-4.7.0.css", ("/css/font-awesome.min.css", "/fonts/fa/css/font-awesome.css")),
    ("normalize-8.0.1.css", ("/css/normalize.css", "/static/css/normalize.min.css")),
    ("modernizr-2.8.3.js", ("/js/modernizr.js", "/js/vendor/modernizr-2.8.3.min.js")),
)


def _token(rng: Random, alphabet: str, n: int) -> str:
    k = len(alphabet)
    r = rng.random
    return "".join([alphabet[int(r() * k)] for _ in range(n)])


def _hex(rng: Random, n: int, upper: bool = False) -> str:
    s = f"{rng.getrandbits(4 * n):0{n}x}"
    return s.upper() if upper else s


def _digits(rng: Random, n: int) -> str:
    return str(rng.randint(10 ** (n - 1), 10**n - 1))


def _words(rng: Random, lo: int, hi: int) -> str:
    r = rng.random
    return "-".join([WORDS[int(r() * len(WORDS))] for _ in range(lo + int(r() * (hi - lo + 1)))])


# --------------------------------------------------------------------------- session ids
# (family, parameter names, value maker): query sessions add name=value, path sessions
# are written into the path. Names and formats are those of the software that uses them.


def _sess_php(rng):
    return _token(rng, _B36, 26) if rng.random() < 0.5 else _hex(rng, 32)


def _sess_java(rng, node=""):
    return _hex(rng, 32, upper=True) + node


SESSIONS = {
    "PHPSESSID": ("session", lambda rng, site: [("PHPSESSID", _sess_php(rng))]),
    "sid": ("session", lambda rng, site: [("sid", _hex(rng, 32))]),
    "SID": ("session", lambda rng, site: [("SID", _hex(rng, 32))]),
    "s": ("session", lambda rng, site: [("s", _hex(rng, 32))]),  # vBulletin
    "sessionid": ("session", lambda rng, site: [("sessionid", _token(rng, _B36, 32))]),
    "sess_id": ("session", lambda rng, site: [("sess_id", _hex(rng, 24))]),
    "osCsid": ("session", lambda rng, site: [("osCsid", _hex(rng, 32))]),  # osCommerce
    "zenid": ("session", lambda rng, site: [("zenid", _token(rng, _B36, 26))]),  # Zen Cart
    "JSESSIONID": ("session", lambda rng, site: [("JSESSIONID", _sess_java(rng, site.jvm_route))]),
    "ASP.NET_SessionId": ("session", lambda rng, site: [("ASP.NET_SessionId", _token(rng, _B32LOW, 24))]),
    "CFID": (
        "session",
        lambda rng, site: [
            ("CFID", _digits(rng, rng.randint(4, 7))),  # ColdFusion
            ("CFTOKEN", _digits(rng, 8)),
        ],
    ),
    ";jsessionid": ("session_path", None),
    "(S())": ("session_path", None),
}


# --------------------------------------------------------------------------- tracking parameters


def _utm(rng, site):
    out = [
        (
            "utm_source",
            rng.choice(
                (
                    "google",
                    "facebook",
                    "twitter",
                    "newsletter",
                    "bing",
                    "reddit",
                    "linkedin",
                    "partner",
                    "instagram",
                    "t.co",
                )
            ),
        ),
        ("utm_medium", rng.choice(("cpc", "email", "social", "referral", "banner", "organic", "display"))),
    ]
    if rng.random() < 0.5:
        out.append(("utm_campaign", f"{rng.choice(WORDS)}_{rng.randint(2019, 2026)}"))
    if rng.random() < 0.15:
        out.append(("utm_content", rng.choice(("link", "button", "hero", "footer", "sidebar"))))
    if rng.random() < 0.1:
        out.append(("utm_term", rng.choice(WORDS)))
    return out


TRACKERS = {
    "utm": _utm,
    "gclid": lambda rng, site: [("gclid", "Cj0KCQ" + _token(rng, _B64URL, 44))],
    "fbclid": lambda rng, site: [("fbclid", "IwAR" + _token(rng, _B64URL, 54))],
    "msclkid": lambda rng, site: [("msclkid", _hex(rng, 32))],
    "mc": lambda rng, site: [("mc_cid", _hex(rng, 10)), ("mc_eid", _hex(rng, 10))],
    "_ga": lambda rng, site: [
        (
            "_ga",
            f"2.{_digits(rng, 9)}.{_digits(rng, 10)}.{rng.randint(1690000000, 1710000000)}"
            f"-{_digits(rng, 9)}.{rng.randint(1690000000, 1710000000)}",
        )
    ],
    "yclid": lambda rng, site: [("yclid", _digits(rng, 19))],
    "igshid": lambda rng, site: [("igshid", _token(rng, _B62, 16))],
    "ref": lambda rng, site: [("ref", rng.choice(WORDS))],
    "src": lambda rng, site: [("src", rng.choice(("home", "rss", "nav", "search", "widget", "email")))],
    "source": lambda rng, site: [("source", rng.choice(("rss", "feed", "homepage", "app")))],
    "campaign": lambda rng, site: [
        (site.campaign_param, f"{rng.choice(('hp', 'nl', 'nav', 'promo'))}_{rng.choice(WORDS)}_{rng.randint(1, 40)}")
    ],
    "hubspot": lambda rng, site: [("_hsenc", "p2ANqtz-" + _token(rng, _B64URL, 40)), ("_hsmi", _digits(rng, 9))],
    "share": lambda rng, site: [("share", rng.choice(("twitter", "facebook", "email", "whatsapp", "copy")))],
    "si": lambda rng, site: [("si", _token(rng, _B64URL, 16))],
    "feature": lambda rng, site: [("feature", rng.choice(("share", "youtu.be", "emb_title", "related")))],
}
# campaign parameters named by in-house analytics: INTCMP and its relatives
CAMPAIGN_PARAMS = ("INTCMP", "intcmp", "icid", "cmpid", "CMP", "ito", "WT.mc_id", "s_cid", "trk", "spm", "cid")
TRACKER_WEIGHTS = {
    "utm": 8,
    "gclid": 3,
    "fbclid": 4,
    "msclkid": 1,
    "mc": 1.5,
    "_ga": 1,
    "yclid": 0.5,
    "igshid": 0.5,
    "ref": 3,
    "src": 1.5,
    "source": 1,
    "campaign": 2,
    "hubspot": 0.7,
    "share": 1.2,
}


# --------------------------------------------------------------------------- cache busters (assets)


def _version(rng: Random) -> str:
    return str(rng.randint(1, 40)) if rng.random() < 0.6 else f"{rng.randint(1, 9)}.{rng.randint(0, 20)}"


CACHE_BUSTERS = {
    "v": lambda rng: [("v", _version(rng))],
    "ver": lambda rng: [("ver", f"{rng.randint(3, 6)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}")],
    "_": lambda rng: [("_", str(rng.randint(1_690_000_000_000, 1_710_000_000_000)))],
    "t": lambda rng: [("t", str(rng.randint(1_690_000_000, 1_710_000_000)))],
    "rev": lambda rng: [("rev", _hex(rng, 8))],
    "token": lambda rng: [(_hex(rng, rng.choice((6, 8, 10))), None)],  # ?3f2a9c1b: a bare key
}


# --------------------------------------------------------------------------- platforms


@dataclass(frozen=True)
class Platform:
    """Web software: the URL styles it writes, its session ids, index file and habits."""

    name: str
    weight: float
    styles: tuple[str, ...]  # templates; <x> are site-wide names, {x} per page
    sessions: tuple[str, ...]  # keys of SESSIONS
    index_files: tuple[str, ...]
    case: str = "plain"  # "plain", "insensitive" (IIS: any case is the same page), "sensitive"
    insensitive_share: float = 0.0  # for "plain" platforms that sometimes run on Windows
    assets: tuple[str, ...] = (
        "/images/{section}/{n}.{ext}",
        "/uploads/{year}/{month}/{slug}-{n}.{ext}",
        "/img/{n}_large.{ext}",
        "/media/{cat}/{n}.{ext}",
    )
    alias: Callable | None = None  # (page fields) -> (path, query) of the platform's other URL


PLATFORMS = (
    Platform(
        "wordpress",
        18,
        ("/{year}/{month}/{uslug}/", "/<section>/{uslug}/", "/{uslug}/"),
        ("PHPSESSID",),
        ("index.php",),
        assets=("/wp-content/uploads/{year}/{month}/{slug}-{n}.{ext}",),
        alias=lambda f: ("/", [("p", str(f["id"]))]),
    ),
    Platform(
        "drupal",
        7,
        ("/{section}/{uslug}", "/<section>/{year}/{uslug}", "/node/{id}"),
        ("sid", "PHPSESSID"),
        ("index.php",),
        assets=("/sites/default/files/{year}-{month}/{slug}-{n}.{ext}",),
        alias=lambda f: (f"/node/{f['id']}", []),
    ),
    Platform(
        "php",
        15,
        (
            "/<script>.php?<idp>={id}",
            "/<script>.php?<catp>={cat}&<idp>={id}",
            "/{section}/<script>.php?<idp>={id}",
            "/<script>.php?<idp>={id}&<catp>={cat}&lang=en",
        ),
        ("PHPSESSID", "sid", "SID", "sess_id", "s"),
        ("index.php",),
        alias=lambda f: (f"/<script>/{f['id']}", []) if f["id"] % 2 else (f"/<script>_{f['id']}.html", []),
    ),
    Platform(
        "joomla",
        6,
        (
            "/index.php?option=com_content&view=article&id={id}&catid={catid}&Itemid={itemid}",
            "/{section}/{id}-{slug}",
            "/index.php/{section}/{id}-{slug}",
        ),
        ("sid",),
        ("index.php",),
        assets=("/images/stories/{slug}-{n}.{ext}", "/images/{section}/{n}.{ext}"),
    ),
    Platform(
        "forum",
        8,
        ("/showthread.php?t={id}", "/viewtopic.php?f={f}&t={id}", "/forum/topic/{id}-{slug}/", "/threads/{slug}.{id}/"),
        ("s", "sid"),
        ("index.php",),
        assets=("/attachments/{n}.{ext}", "/images/avatars/{n}.{ext}"),
        alias=lambda f: (f"/threads/{f['id']}/", []),
    ),
    Platform(
        "oscommerce",
        4,
        (
            "/product_info.php?products_id={id}",
            "/product_info.php?cPath={catid}&products_id={id}",
            "/{cat}-p-{id}.html",
        ),
        ("osCsid",),
        ("index.php",),
        assets=("/images/{cat}/{n}.{ext}",),
    ),
    Platform(
        "zencart",
        3,
        (
            "/index.php?main_page=product_info&cPath={catid}&products_id={id}",
            "/index.php?main_page=product_info&products_id={id}",
        ),
        ("zenid",),
        ("index.php",),
        assets=("/images/{cat}/{n}.{ext}",),
    ),
    Platform(
        "java",
        9,
        (
            "/<script>.do?<idp>={id}",
            "/{section}/detail.jsp?itemId={id}",
            "/{section}/{id}.html",
            "/app/{section}/{id}",
            "/{section}/{id}/",
            "/portal/{section}/<script>?<idp>={id}&<catp>={cat}",
        ),
        (";jsessionid", ";jsessionid", "JSESSIONID"),
        ("index.jsp", "index.html"),
    ),
    Platform(
        "aspnet",
        10,
        (
            "/<Section>/Details.aspx?ID={id}",
            "/Products/{Cat}/{id}.aspx",
            "/{Section}/{Slug}-{id}.aspx",
            "/Item.aspx?ItemID={id}&CatID={catid}",
            "/<Section>/{Section}/Default.aspx?ArticleId={id}",
            "/{Section}/{Slug}-{id}/",
        ),
        ("(S())", "(S())", "ASP.NET_SessionId"),
        ("Default.aspx", "default.aspx", "Default.htm"),
        case="insensitive",
        assets=("/Images/Products/{n}.{ext}", "/Content/Images/{Section}/{n}.{ext}"),
    ),
    Platform(
        "coldfusion",
        3,
        (
            "/index.cfm?fuseaction={section}.detail&id={id}",
            "/{section}/page.cfm?id={id}",
            "/index.cfm/{section}/{id}",
            "/{section}/{id}/",
        ),
        ("CFID",),
        ("index.cfm",),
        insensitive_share=0.5,
    ),
    Platform(
        "static",
        9,
        (
            "/{section}/{slug}-{id}.html",
            "/{section}/{id}.htm",
            "/{section}/{uslug}/",
            "/archive/{year}/{id}.shtml",
            "/<section>/{uslug}.html",
        ),
        ("sid",),
        ("index.html", "index.htm", "index.shtml", "default.htm"),
        insensitive_share=0.15,
    ),
    Platform(
        "modern",
        8,
        (
            "/{section}/{id}-{slug}",
            "/products/{id}",
            "/{section}/{uslug}/",
            "/p/{id}/{slug}",
            "/{section}/{slug}-{id}",
            "/<section>/{uslug}",
        ),
        ("sessionid", "sid"),
        ("index.html",),
        assets=("/static/img/{n}.{ext}", "/media/uploads/{slug}-{n}.{ext}", "/assets/{n}-{tok}.{ext}"),
    ),
    Platform(
        "media",
        0,
        ("/v/{tok}", "/watch?v={tok}", "/{tok}", "/p/{tok}/", "/s/{tok}", "/<section>/{tok}"),
        (),
        ("index.html",),
        case="sensitive",
        assets=("/vi/{tok}/hqdefault.jpg", "/i/{tok}.{ext}"),
    ),
)
_PLATFORM_WEIGHTS = [p.weight for p in PLATFORMS]
MEDIA = PLATFORMS[-1]


def _fields_of(template: str) -> frozenset[str]:
    return frozenset(re.findall(r"\{(\w+)\}", template))


class Style:
    """A URL template made concrete for one site: page fields fill the ``{...}`` slots."""

    __slots__ = ("template", "path", "query", "dir", "leaf", "slug_ok", "unique_slug", "needs")

    def __init__(self, template: str):
        self.template = template
        path, _, q = template.partition("?")
        self.path = path
        self.query = tuple(tuple(kv.split("=", 1)) for kv in q.split("&")) if q else ()
        self.dir = path.endswith("/") and path != "/"
        last = path.rstrip("/").rsplit("/", 1)[-1]
        self.leaf = not self.dir and "." not in last
        # the slug is irrelevant (the id names the page): another slug is the same page
        self.slug_ok = ("{slug}" in template or "{Slug}" in template) and ("{id}" in template or "{tok}" in template)
        self.unique_slug = "{uslug}" in template  # the slug alone names the page
        self.needs = _fields_of(template)  # the page fields it needs: draw no others


def _writes_capitals(template: str) -> bool:
    """Whether the paths of a template have capital letters (literal or a capitalized field)."""
    path = template.partition("?")[0]
    literal = re.sub(r"\{[^}]*\}", "", path)
    return any(c.isupper() for c in literal) or any(x in path for x in ("{Section}", "{Cat}", "{Slug}"))


def _site_template(template: str, site: Site) -> str:
    """Fill the ``<...>`` names a site keeps for all its pages (script, id parameter, section)."""
    for k, v in (
        ("<script>", site.script),
        ("<idp>", site.idp),
        ("<catp>", site.catp),
        ("<section>", site.home_section),
        ("<Section>", site.home_section.capitalize()),
    ):
        template = template.replace(k, v)
    return template


# --------------------------------------------------------------------------- sites and pages


class Site:
    """One site: its names, URL style, families, habits and the counters of its crawl.
    ``_make_site`` sets every attribute below; the class lists them for readers and mypy."""

    # names and URLs
    name: str
    bare: str  # <name>.<tld>, the registered domain
    www_host: str
    host: str  # the host of main URLs: www_host or bare
    scheme: str
    origin: str
    platform: Platform
    case: str  # "plain", "insensitive" or "sensitive"
    style: Style
    script: str
    idp: str
    catp: str
    home_section: str
    sections: tuple[str, ...]
    cat_ids: tuple[int, ...]
    id_base: int
    id_step: int
    tok_len: int
    index_file: str
    n_pages: int
    # session, tracking, assets
    session: str
    session_first: bool
    jvm_route: str
    campaign_param: str
    trackers: list[str]
    cache_buster: str
    asset_share: float
    asset_template: str
    asset_needs: frozenset[str]
    asset_host: str
    cdn_aliases: tuple[str, ...]
    # traps
    page_param: str
    page_first: int
    page_step: int
    path_pagination: bool
    default_param: tuple[str, str] | None
    sorts: list[tuple[str, tuple[str, ...]]]
    trap_dirs: list[str]
    lang_path: bool
    langs: list[str]
    soft404: bool
    libs: list[tuple[str, tuple[str, ...]]]
    canonical: str
    trap_kinds: list[str]
    trap_w: list[float]
    # families and the per-site laws
    families: tuple[LtFamily, ...]
    redirects: frozenset[str]
    weights: dict[LtFamily, float]
    page_fams: list[LtFamily]
    page_w: list[float]
    asset_fams: list[LtFamily]
    asset_w: list[float]
    dup: float
    more: float
    compose: float
    noise: float
    errors: float
    twins: float
    redirect_status: int
    redirect_empty: bool
    window: tuple[float, float]

    def __init__(self, index: int):
        self.index = index
        self.next_n = 0
        self.next_gone = 0
        self.next_asset = 0
        self.shared: dict[str, tuple] = {}
        self.uslugs: set[str] = set()
        self.toks: set[str] = set()
        self.lower_toks: set[str] = set()

    def shared_content(self, key: str) -> tuple[str, str, int, int]:
        """(truth, digest, simhash, length) of a body many URLs of the site share."""
        got = self.shared.get(key)
        if got is None:
            truth = f"{self.bare}:{key}"
            got = self.shared[key] = (truth, *_content(truth))
        return got

    def error_body(self, key: str) -> tuple[str, int | None, int]:
        """(digest, simhash, length) of an error or redirect body: never a page's digest."""
        got = self.shared.get("!" + key)
        if got is None:
            digest, sim, length = _content(f"!{key}:{self.bare}")
            got = self.shared["!" + key] = (digest, sim, length // 20)
        return got


class Page:
    """One content of a site: its main URL, fields (for families that rebuild the URL) and identity."""

    __slots__ = ("site", "n", "asset", "fields", "path", "query", "main", "truth", "digest", "simhash", "length")

    def __init__(self, site: Site, rng: Random, asset: bool = False, tok: str | None = None, gone: bool = False):
        self.site = site
        self.asset = asset
        r = rng.random
        if gone:
            n = 10**7 + site.next_gone
            site.next_gone += 1
        elif asset:
            n = site.next_asset
            site.next_asset += 1
        else:
            n = site.next_n
            site.next_n += 1
        self.n = n
        style = site.style
        needs = site.asset_needs if asset else style.needs
        f: dict[str, Any] = {"id": site.id_base + n * site.id_step, "n": n}
        if "section" in needs or "Section" in needs:
            f["section"] = sec = site.sections[int(r() * len(site.sections))]
            f["Section"] = sec.capitalize()
        if "cat" in needs or "Cat" in needs:
            f["cat"] = cat = CATS[int(r() * len(CATS))]
            f["Cat"] = cat.capitalize()
        if "year" in needs or "month" in needs:
            f["year"] = 2008 + int(r() * 18)
            f["month"] = f"{1 + int(r() * 12):02d}"
        if "catid" in needs:
            f["catid"] = str(site.cat_ids[int(r() * len(site.cat_ids))])
        if "itemid" in needs:
            f["itemid"] = str(100 + int(r() * 40))
        if "f" in needs:
            f["f"] = str(1 + int(r() * 30))
        if "slug" in needs or "Slug" in needs or "uslug" in needs:
            f["slug"] = slug = _words(rng, 2, 5)
            if "Slug" in needs:
                f["Slug"] = "-".join([w.capitalize() for w in slug.split("-")])
            if "uslug" in needs:
                f["uslug"] = self._unique_slug(slug, gone, rng)
        if "tok" in needs:
            f["tok"] = tok if tok is not None else self._new_token(rng, gone)
        if asset:
            f["ext"] = ASSET_EXTS[int(r() * len(ASSET_EXTS))]
            path, query = site.asset_template.format_map(f), _NO_QUERY
            self.truth = f"{site.bare}:asset:{n}"
        else:
            path = style.path.format_map(f)
            query = tuple((k, v.format_map(f)) for k, v in style.query)
            self.truth = f"{site.bare}:gone:{n}" if gone else f"{site.bare}:{n}"
        self.fields = f
        self.path, self.query = path, query
        host = site.asset_host if asset else site.host
        self.main = f"{site.scheme}://{host}{path}" + ("?" + _qtext(query) if query else "")
        self.digest, self.simhash, self.length = _content(self.truth)
        if asset:
            self.length //= 3

    def _unique_slug(self, slug: str, gone: bool, rng: Random) -> str:
        site = self.site
        if gone:  # never a real page's slug: those have only words and -<digits>
            return f"{slug}-x{_hex(rng, 8)}"
        out, k = slug, 2
        while out in site.uslugs:
            out, k = f"{slug}-{k}", k + 1
        site.uslugs.add(out)
        return out

    def _new_token(self, rng: Random, gone: bool) -> str:
        """A case-sensitive id with letters, unique on the site even ignoring case."""
        site = self.site
        while True:
            tok = _token(rng, _B62, site.tok_len)
            low = tok.lower()
            if low != tok.upper() and low not in site.lower_toks:
                site.lower_toks.add(low)
                if not gone:
                    site.toks.add(tok)
                return tok

    def rebuild(self, **changes) -> tuple[str, tuple]:
        """Path and query of this page's URL with some fields changed (another slug)."""
        f = {**self.fields, **changes}
        style = self.site.style
        return style.path.format_map(f), tuple((k, v.format_map(f)) for k, v in style.query)


def _case_twin(tok: str, site: Site, rng: Random) -> str | None:
    """Another id equal to ``tok`` but for the case of one or two letters, unused on the site."""
    letters = [i for i, c in enumerate(tok) if c.isalpha()]
    for _ in range(8):
        chars = list(tok)
        for i in rng.sample(letters, min(len(letters), 1 + (rng.random() < 0.3))):
            chars[i] = chars[i].swapcase()
        twin = "".join(chars)
        if twin not in site.toks:
            site.toks.add(twin)
            return twin
    return None


_NO_QUERY: tuple[tuple[str, str], ...] = ()


def _qtext(query) -> str:
    return "&".join([k if v is None else f"{k}={v}" for k, v in query])


class _Url:
    """A URL in parts, so several families can rewrite one alias URL."""

    __slots__ = ("scheme", "host", "path", "query", "matrix", "empty_q")

    def __init__(self, scheme: str, host: str, path: str, query: list):
        self.scheme, self.host, self.path, self.query = scheme, host, path, query
        self.matrix = ""
        self.empty_q = False

    def copy(self) -> _Url:
        u = _Url(self.scheme, self.host, self.path, list(self.query))
        u.matrix, u.empty_q = self.matrix, self.empty_q
        return u

    def text(self) -> str:
        url = f"{self.scheme}://{self.host}{self.path}{self.matrix}"
        if self.query:
            return url + "?" + _qtext(self.query)
        return url + "?" if self.empty_q else url


# --------------------------------------------------------------------------- alias families
# Each rewrites a _Url in place and always changes it. Stages order composition; two
# families on one URL never conflict (see ``conflicts``).


def fam_scheme(u, page, rng):
    """http and https serve the same page (links written before and after a migration)."""
    u.scheme = "https" if u.scheme == "http" else "http"


def fam_www(u, page, rng):
    """www and the bare domain serve the same site."""
    site = page.site
    u.host = site.bare if u.host == site.www_host else site.www_host


def fam_cdn_host(u, page, rng):
    """Numbered CDN hosts (img1., img2., cdn-1., cdn.) serve the same file."""
    site = page.site
    others = site.cdn_aliases
    u.host = others[int(rng.random() * len(others))]


def fam_session(u, page, rng):
    """Session ids in the query: each visit gets a fresh id, so one page has endless URLs."""
    site = page.site
    maker = SESSIONS[site.session][1]
    assert maker is not None, "a query session has a value maker"
    params = maker(rng, site)
    if site.session_first:
        u.query[:0] = params
    else:
        u.query.extend(params)


def fam_session_path(u, page, rng):
    """Session ids in the path: Java's ``;jsessionid=`` path parameter, ASP.NET's cookieless
    ``/(S(<id>))/`` segment."""
    site = page.site
    if site.session == ";jsessionid":
        u.matrix = ";jsessionid=" + _sess_java(rng, site.jvm_route)
    else:
        u.path = f"/(S({_token(rng, _B32LOW, 24)}))" + u.path


def fam_tracking(u, page, rng):
    """Tracking and click ids (utm_*, gclid, fbclid, mc_cid, INTCMP...): links from
    campaigns, ads and shares; the page is the same."""
    site = page.site
    trackers = site.trackers
    names = rng.sample(trackers, 2) if len(trackers) > 1 and rng.random() < 0.2 else [rng.choice(trackers)]
    for name in names:
        u.query.extend(TRACKERS[name](rng, site))


def fam_cache_buster(u, page, rng):
    """Cache busters on static files (?v=3, ?ver=5.2.1, ?_=<ms>, ?<token>): same bytes."""
    u.query.extend(CACHE_BUSTERS[page.site.cache_buster](rng))


def fam_index(u, page, rng):
    """Directory index: ``/dir/`` and ``/dir/index.html`` (index.php, default.aspx...) are one file."""
    u.path += page.site.index_file


def fam_trailing_slash(u, page, rng):
    """Trailing slash: ``/a/b`` and ``/a/b/`` reach the same handler."""
    u.path = u.path[:-1] if u.path.endswith("/") else u.path + "/"


def fam_empty_query(u, page, rng):
    """An empty query: ``/a?`` is ``/a`` (a form or a link builder left the ``?``)."""
    u.empty_q = True


def fam_case(u, page, rng):
    """Letter case on case-insensitive servers (IIS): ``/Products/Item.aspx`` = ``/products/item.aspx``."""
    p = u.path
    low = p.lower()
    if low != p and rng.random() < 0.75:
        u.path = low
    elif rng.random() < 0.5 and p.upper() != p:
        u.path = p.upper()
    else:
        u.path = low if low != p else p.upper()
    if u.query and rng.random() < 0.3:  # ASP.NET reads parameter names in any case too
        u.query = [(k.lower() if k != k.lower() else k.upper(), v) for k, v in u.query]


def fam_param_order(u, page, rng):
    """Parameter order: links built by other code list the same parameters in another order."""
    q = u.query
    n = len(q)
    if rng.random() < 0.5:
        q.reverse()
    else:
        k = 1 + int(rng.random() * (n - 1))
        q[:] = q[k:] + q[:k]


def fam_slug(u, page, rng):
    """Irrelevant slug: the id names the page; an old title (or a cut one) in the URL still works."""
    old = page.fields["slug"]
    while True:
        slug = _words(rng, 1, 4)
        if slug != old:
            break
    u.path = page.rebuild(slug=slug, Slug="-".join(w.capitalize() for w in slug.split("-")))[0]


def fam_default_param(u, page, rng):
    """A parameter at its default value (``page=1``, ``start=0``, ``lang=en``): the same page."""
    u.query.append(page.site.default_param)


def fam_alias_path(u, page, rng):
    """The software's other URL of the page: WordPress ``/?p=<id>``, Drupal ``/node/<id>``,
    a rewrite layer's ``/article/<id>`` for ``/article.php?id=<id>``."""
    site = page.site
    path, query = site.platform.alias(page.fields)
    u.path, u.query = _site_template(path, site), list(query)


@dataclass(frozen=True, eq=False)
class LtFamily:
    name: str
    stage: int
    apply: Callable
    popularity: float
    on_pages: bool = True
    on_assets: bool = False
    conflicts: frozenset = frozenset()
    redirects: bool = False  # a server may answer it with a redirect to the main URL


_ADDS_QUERY = frozenset({"session", "tracking", "default_param", "cache_buster"})
LT_FAMILIES = (
    LtFamily(
        "alias_path",
        0,
        fam_alias_path,
        1.0,
        conflicts=frozenset({"slug", "index", "trailing_slash", "param_order", "empty_query"}),
    ),
    LtFamily("slug", 0, fam_slug, 1.5, conflicts=frozenset({"alias_path"})),
    LtFamily("index", 1, fam_index, 1.0, conflicts=frozenset({"trailing_slash", "alias_path"})),
    LtFamily(
        "trailing_slash", 1, fam_trailing_slash, 1.5, conflicts=frozenset({"index", "alias_path"}), redirects=True
    ),
    LtFamily("case", 2, fam_case, 2.0, on_assets=True),
    LtFamily("session_path", 3, fam_session_path, 1.2),
    LtFamily("param_order", 4, fam_param_order, 1.0, conflicts=frozenset({"alias_path", "empty_query"})),
    LtFamily("session", 5, fam_session, 1.5, conflicts=frozenset({"empty_query"})),
    LtFamily("tracking", 5, fam_tracking, 3.0, conflicts=frozenset({"empty_query"})),
    LtFamily("default_param", 5, fam_default_param, 0.7, conflicts=frozenset({"empty_query"})),
    LtFamily(
        "cache_buster", 5, fam_cache_buster, 2.0, on_pages=False, on_assets=True, conflicts=frozenset({"empty_query"})
    ),
    LtFamily(
        "empty_query",
        6,
        fam_empty_query,
        0.5,
        on_assets=True,
        conflicts=frozenset(_ADDS_QUERY | {"alias_path", "param_order"}),
    ),
    LtFamily("www", 7, fam_www, 2.5, on_assets=True, redirects=True),
    LtFamily("cdn_host", 7, fam_cdn_host, 1.5, on_pages=False, on_assets=True),
    LtFamily("scheme", 8, fam_scheme, 2.5, on_assets=True, redirects=True),
)
_LT_BY_NAME = {f.name: f for f in LT_FAMILIES}
_ORDER = {f: i for i, f in enumerate(LT_FAMILIES)}
_STAGE = _ORDER.__getitem__  # stage order, one fixed order within a stage: one label per combination


def _applies(f: LtFamily, site: Site) -> bool:
    """Whether family ``f`` makes sense for the site's software and URL style."""
    style = site.style
    name = f.name
    if name == "alias_path":
        return site.platform.alias is not None and not style.template.startswith(("/node/", "/threads/"))
    if name == "slug":
        return style.slug_ok
    if name == "index":
        return style.dir
    if name == "trailing_slash":
        return style.dir or style.leaf
    if name == "case":
        return site.case == "insensitive"
    if name == "session_path":
        return SESSIONS.get(site.session, ("",))[0] == "session_path"
    if name == "session":
        return SESSIONS.get(site.session, ("",))[0] == "session"
    if name == "param_order":
        return len(style.query) >= 2
    if name == "default_param":
        return site.default_param is not None
    if name == "cache_buster":
        return site.asset_share > 0
    if name == "empty_query":
        return not style.query
    if name == "cdn_host":
        return site.asset_share > 0 and bool(site.cdn_aliases)
    return True


def _weighted(rng: Random, items: list, weights: list):
    x = rng.random() * sum(weights)
    for item, w in zip(items, weights):
        x -= w
        if x < 0:
            return item
    return items[-1]


# --------------------------------------------------------------------------- site layout


def _site_sizes(cfg: LongtailConfig) -> list[int]:
    """Log-normal page counts, one draw per site from its own generator."""
    out = []
    for i in range(cfg.sites):
        g = Random(f"dustonline.longtail:{cfg.seed}:size:{i}").gauss(0.0, 1.0)
        out.append(max(MIN_PAGES, min(cfg.max_pages, int(round(cfg.median_pages * exp(cfg.size_sigma * g))))))
    return out


def _site_name(rng: Random, taken: set[str]) -> str:
    while True:
        name = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 3)))
        if rng.random() < 0.3:
            name += rng.choice(_NAME_SUFFIXES)
        if name not in taken:
            taken.add(name)
            return name


def _make_site(cfg: LongtailConfig, index: int, n_pages: int, taken: set[str]) -> Site:
    rng = Random(f"dustonline.longtail:{cfg.seed}:site:{index}")
    site = Site(index)
    site.n_pages = n_pages
    sensitive = rng.random() < cfg.case_sensitive_share
    site.platform = p = MEDIA if sensitive else _weighted(rng, list(PLATFORMS[:-1]), _PLATFORM_WEIGHTS[:-1])
    site.case = p.case if p.case != "plain" else ("insensitive" if rng.random() < p.insensitive_share else "plain")
    site.name = name = _site_name(rng, taken)
    site.bare = f"{name}.{rng.choice(TLDS)}"
    site.www_host = "www." + site.bare
    site.scheme = "https" if rng.random() < 0.65 else "http"
    site.host = site.www_host if rng.random() < 0.6 else site.bare
    site.script, site.idp, site.catp = rng.choice(SCRIPTS), rng.choice(ID_PARAMS), rng.choice(CAT_PARAMS)
    site.home_section = rng.choice(SECTIONS)
    template = _site_template(rng.choice(p.styles), site)
    if site.case == "insensitive":
        # IIS sites write capitals (/News/Article.cfm), so that lower case is another URL
        for low, cap in (("{section}", "{Section}"), ("{cat}", "{Cat}"), ("{slug}", "{Slug}")):
            template = template.replace(low, cap)
        if not _writes_capitals(template):
            template = (
                "/" + template[1].upper() + template[2:]
                if template[1:2].isalpha()
                else (_site_template("/<Section>", site) + template)
            )
    site.style = Style(template)
    secs = tuple(rng.sample(SECTIONS, rng.randint(1, 8)))
    site.sections = tuple(s.capitalize() for s in secs) if site.case == "insensitive" else secs
    qnames = {k for k, _ in site.style.query}  # names the site's added parameters must not reuse
    if p.alias is not None:  # WordPress's /?p=<id>: a pagination p=1 would name another page
        qnames |= {k for k, _ in p.alias({"id": 1})[1]}
    site.cat_ids = tuple(rng.sample(range(1, 200), rng.randint(2, 12)))
    site.id_base = rng.randint(1, 90000)
    site.id_step = rng.choice((1, 1, 1, 2, 3, 7, 10))
    site.tok_len = rng.randint(6, 11)
    site.index_file = rng.choice(p.index_files)
    # sessions, trackers, cache busters, CDN hosts: the site's own names
    site.session = rng.choice(p.sessions) if p.sessions else rng.choice(("sid", "sessionid"))
    site.session_first = rng.random() < 0.3
    site.jvm_route = rng.choice(("", "", ".node1", ".worker1", ".jvm01"))
    site.campaign_param = rng.choice([x for x in CAMPAIGN_PARAMS if x not in qnames])
    names = list(TRACKER_WEIGHTS)
    weights = [TRACKER_WEIGHTS[n] for n in names]
    k = rng.choice((1, 1, 2, 2, 3, 4))
    site.trackers = []
    while len(site.trackers) < k:
        t = _weighted(rng, names, weights)
        if t not in site.trackers:
            site.trackers.append(t)
    if p is MEDIA:
        site.trackers.append(rng.choice(("si", "feature", "igshid")))
    site.cache_buster = rng.choice(tuple(CACHE_BUSTERS))
    site.asset_share = 0.0 if rng.random() < 0.45 else 0.03 + 0.25 * rng.random()
    site.asset_template = rng.choice(p.assets)
    site.asset_needs = _fields_of(site.asset_template)
    cdn = rng.choice(
        (None, None, ("img", "", 1), ("cdn-", "cdn", 1), ("static", "static", 1), ("i", "i", 1), ("img", "img", 1))
    )
    if cdn is None or site.asset_share == 0:
        site.asset_host, site.cdn_aliases = site.host, ()
    else:
        stem, unnumbered, first = cdn
        n_hosts = rng.randint(2, 4)
        hosts = [f"{stem}{i}.{site.bare}" for i in range(first, first + n_hosts)]
        if unnumbered:
            hosts.append(f"{unnumbered}.{site.bare}")
        site.asset_host, site.cdn_aliases = hosts[0], tuple(hosts[1:])
    site.page_param, site.page_first, site.page_step = rng.choice([x for x in PAGINATION if x[0] not in qnames])
    site.path_pagination = site.style.dir and rng.random() < 0.5
    default = rng.random()
    if default < 0.5:
        site.default_param = (site.page_param, str(site.page_first))
    elif default < 0.7 and "lang" not in qnames:
        site.default_param = ("lang", "en")
    else:
        site.default_param = None
    site.sorts = rng.sample([x for x in SORTS if x[0] not in qnames], rng.randint(1, 3))
    site.trap_dirs = rng.sample(TRAP_DIRS, rng.randint(1, 2))
    site.lang_path = rng.random() < 0.6 or "lang" in qnames
    site.langs = rng.sample(LANGS, rng.randint(1, 4))
    site.soft404 = rng.random() < 0.2
    site.libs = rng.sample(SHARED_LIBS, rng.choice((0, 0, 1, 1, 2, 3)))
    site.canonical = _weighted(rng, ["none", "correct", "self", "root"], [0.62, 0.28, 0.06, 0.04])
    # families: a random subset with random weights; clean sites have none (redirects aside)
    applicable = [f for f in LT_FAMILIES if _applies(f, site)]
    chosen: list[LtFamily] = []
    if rng.random() >= cfg.clean_share:
        k = 1
        while k < 7 and rng.random() < 0.5:
            k += 1
        pool, w = list(applicable), [f.popularity for f in applicable]
        while pool and len(chosen) < k:
            f = _weighted(rng, pool, w)
            i = pool.index(f)
            del pool[i], w[i]
            chosen.append(f)
    site.redirects = frozenset()
    if rng.random() < cfg.redirect_share:
        # http -> https (never back), either host to the other, a missing slash -> the slash
        options = [
            f
            for f in LT_FAMILIES
            if f.redirects
            and (f.name != "scheme" or site.scheme == "https")
            and (f.name != "trailing_slash" or site.style.dir)
        ]
        red = rng.sample(options, rng.randint(1, len(options)))
        site.redirects = frozenset(f.name for f in red)
        chosen += [f for f in red if f not in chosen]
    site.families = tuple(sorted(chosen, key=lambda f: (f.stage, f.name)))
    site.weights = {f: f.popularity * (0.2 + rng.expovariate(1.0)) for f in site.families}
    site.page_fams = [f for f in site.families if f.on_pages]
    site.asset_fams = [f for f in site.families if f.on_assets and (f.name != "www" or site.asset_host == site.host)]
    site.page_w = [site.weights[f] for f in site.page_fams]
    site.asset_w = [site.weights[f] for f in site.asset_fams]
    # how often and how much: per-site laws around the config's means
    m = cfg.dup_rate
    site.dup = rng.betavariate(1.5, 1.5 * (1 - m) / m) if 0 < m < 1 else m
    site.more = 0.1 + 0.6 * rng.random()  # P(one more alias URL of a duplicated page)
    site.compose = min(0.9, cfg.compose * 2 * rng.random())
    site.noise = min(0.4, cfg.noise * rng.expovariate(1.0))
    site.errors = min(0.3, cfg.error_rate * rng.expovariate(1.0))
    site.twins = 0.1 + 0.25 * rng.random() if p is MEDIA else 0.0
    site.redirect_status = _weighted(rng, [301, 302, 308, 307], [0.65, 0.25, 0.07, 0.03])
    site.redirect_empty = rng.random() < 0.6
    trap_kinds = ["pagination", "sort", "dir", "lang", "logo"] + (["soft404"] if site.soft404 else [])
    site.trap_kinds = trap_kinds
    site.trap_w = [rng.random() + 0.05 for _ in trap_kinds]
    # when the crawler visits: a window inside the stream's span
    span = cfg.duration
    start = cfg.start_ts + rng.random() * 0.6 * span
    end = min(cfg.start_ts + span, start + span * (0.15 + 0.85 * rng.random()))
    site.window = (start, end)
    site.origin = f"{site.scheme}://{site.host}"
    return site


def _make_sites(cfg: LongtailConfig) -> list[Site]:
    cfg.check()
    taken: set[str] = set()
    return [_make_site(cfg, i, n, taken) for i, n in enumerate(_site_sizes(cfg))]


def site_layout(cfg: LongtailConfig) -> list[dict]:
    """What each site is: hosts, platform, style, size, families, names and habits (for
    reports and ``dustonline eval --layout``; never part of the event stream)."""
    out = []
    for s in _make_sites(cfg):
        hosts = [s.host] + [h for h in (s.www_host, s.bare) if h != s.host]
        if s.asset_share:
            hosts += [h for h in (s.asset_host, *s.cdn_aliases) if h not in hosts]
        out.append(
            {
                "host": s.host,
                "site": s.bare,
                "hosts": hosts,
                "pages": s.n_pages,
                "platform": s.platform.name,
                "style": s.style.template,
                "case": s.case,
                "families": [f.name for f in s.families],
                "redirects": sorted(s.redirects),
                "session": s.session,
                "index_file": s.index_file,
                "trackers": list(s.trackers),
                "cache_buster": s.cache_buster if s.asset_share else None,
                "canonical": s.canonical,
                "dup_rate": round(s.dup, 3),
                "soft404": s.soft404,
                "window": list(s.window),
            }
        )
    return out


def write_layout(cfg: LongtailConfig, path) -> None:
    """The config and ``site_layout`` as one JSON document (ground truth about sites)."""
    doc = {"config": asdict(cfg), "profile": "longtail", "sites": site_layout(cfg), "drift": []}
    with _open_write(path) as fh:
        fh.write(json.dumps(doc, indent=1).encode() + b"\n")


# --------------------------------------------------------------------------- events


def _page_event(t: float, url: str, page: Page, rng: Random) -> FetchEvent:
    site = page.site
    mode = site.canonical
    canonical = None
    if mode != "none" and not page.asset:
        if mode == "correct":
            canonical = page.main if rng.random() < 0.9 else None
        elif mode == "self":
            canonical = url
        else:  # a misconfigured CMS names the home page the canonical of every page
            canonical = site.origin + "/"
    return FetchEvent(url, t, 200, page.digest, page.simhash, canonical, page.length)


def _combo(page: Page, rng: Random) -> list[LtFamily]:
    """The families of one alias URL: a first by the site's weights, then more while the
    site's compose law says so, skipping conflicts; in stage order."""
    site = page.site
    fams, weights = (site.asset_fams, site.asset_w) if page.asset else (site.page_fams, site.page_w)
    if not fams:
        return []
    k = 1
    r = rng.random
    while k < 4 and r() < site.compose:
        k += 1
    pool, w = list(fams), list(weights)
    chosen: list[LtFamily] = []
    while pool and len(chosen) < k:
        f = _weighted(rng, pool, w)
        i = pool.index(f)
        del pool[i], w[i]
        if not any(f.name in c.conflicts or c.name in f.conflicts for c in chosen):
            chosen.append(f)
    chosen.sort(key=_STAGE)
    return chosen


def _base_url(page: Page) -> _Url:
    site = page.site
    return _Url(site.scheme, site.asset_host if page.asset else site.host, page.path, list(page.query))


def _alias_events(t: float, page: Page, rng: Random) -> list[tuple[FetchEvent, str, str]]:
    """One alias fetch of ``page``: its 2xx event, or on a redirecting site, the 3xx of the
    alias URL followed by the 2xx fetch of the target (the URL without the redirected parts)."""
    combo = _combo(page, rng)
    if not combo:
        return []
    site = page.site
    u = _base_url(page)
    red = [f for f in combo if f.name in site.redirects]
    for f in combo:
        if f not in red:
            f.apply(u, page, rng)
    names = "+".join(f.name for f in combo)
    if not red:
        return [(_page_event(t, u.text(), page, rng), page.truth, "alias:" + names)]
    target = u.text()
    for f in red:  # host, scheme and trailing slash commute with the other families
        f.apply(u, page, rng)
    source = u.text()
    kept = [f.name for f in combo if f not in red]
    label = "alias:" + "+".join(kept) if kept else "main"
    digest, sim, length = (EMPTY_DIGEST, None, 0) if site.redirect_empty else site.error_body("redirect")
    extra: dict[str, Any] = {"redirect": target} if HAS_REDIRECT_FIELD else {}
    hop = FetchEvent(source, t, site.redirect_status, digest, sim, None, length, **extra)
    return [(hop, page.truth, "redirect:" + names), (_page_event(t, target, page, rng), page.truth, label)]


def _trap_event(t: float, page: Page, kind: str, rng: Random) -> tuple[FetchEvent, str, str]:
    """A URL next to ``page`` with other content (or a body many URLs share)."""
    site = page.site
    u = _base_url(page)
    r = rng.random
    if kind == "pagination":
        n = 2 + int(r() * 10)
        if site.path_pagination and u.path.endswith("/"):
            u.path += f"page/{n}/"
            truth = f"{page.truth}/page/{n}"
        else:
            v = str(site.page_first + (n - 1) * site.page_step)
            u.query.append((site.page_param, v))
            truth = f"{page.truth}/{site.page_param}={v}"
    elif kind == "sort":
        name, values = site.sorts[int(r() * len(site.sorts))]
        v = values[int(r() * len(values))]
        u.query.append((name, v))
        truth = f"{page.truth}/{name}={v}"
    elif kind == "dir":
        d = site.trap_dirs[int(r() * len(site.trap_dirs))]
        u.path = f"/{d}{u.path}"
        truth = f"{page.truth}/dir={d}"
    elif kind == "lang":
        lang = site.langs[int(r() * len(site.langs))]
        if site.lang_path:
            u.path = f"/{lang}{u.path}"
        else:
            u.query.append(("lang", lang))
        truth = f"{page.truth}/lang={lang}"
    else:  # soft404 and logo: one body under many URLs of the site
        if kind == "soft404":
            u = _Url(site.scheme, site.host, f"/{_words(rng, 1, 2)}/{_words(rng, 1, 3)}-{_hex(rng, 12)}", [])
        else:
            path = rng.choice(
                (
                    "/images/logo.png",
                    f"/{rng.choice(site.sections).lower()}/img/logo.png",
                    f"/static/{_hex(rng, 8)}/logo.png",
                    f"/themes/{rng.choice(WORDS)}/logo.png",
                )
            )
            u = _Url(site.scheme, site.host, path, [])
        truth, digest, sim, length = site.shared_content(kind)
        label = "trap:soft404" if kind == "soft404" else "trap:shared_asset"
        return FetchEvent(u.text(), t, 200, digest, sim, None, length), truth, label
    digest, sim, length = _content(truth)
    canonical = u.text() if site.canonical == "correct" else None
    return FetchEvent(u.text(), t, 200, digest, sim, canonical, length), truth, "trap:" + kind


_ERRORS = ([404, 500, 503, 502, 403, 410, 429], [0.45, 0.12, 0.1, 0.05, 0.1, 0.08, 0.05])


def _error_event(t: float, page: Page, rng: Random) -> tuple[FetchEvent, str, str]:
    """A non-2xx fetch: 404 on a URL the site never had, others on a page's main URL."""
    site = page.site
    status = _weighted(rng, *_ERRORS)
    if status == 404:
        gone = Page(site, rng, gone=True)
        url, truth = gone.main, gone.truth
    else:
        url, truth = page.main, page.truth
    if status in (429, 502) or (status >= 500 and site.redirect_empty):
        digest, sim, length = EMPTY_DIGEST, None, 0
    else:
        digest, sim, length = site.error_body(f"error{status}")
    return FetchEvent(url, t, status, digest, sim, None, length), truth, f"error:{status}"


_ALIAS, _TRAP, _ERROR, _TWIN, _LIB = range(5)


def _site_stream(site: Site, cfg: LongtailConfig) -> Iterator[tuple]:
    """The events of one site as ``(ts, site index, seq, event, truth, label)`` in time order.
    Pages are discovered in the first 70% of the site's window; their other fetches come
    after exponential delays, held in a heap until due."""
    rng = Random(f"dustonline.longtail:{cfg.seed}:events:{site.index}")
    r = rng.random
    a, b = site.window
    disc = (b - a) * DISCOVERY_SHARE
    times = sorted(a + r() * disc for _ in range(site.n_pages))
    mean_delay = (b - a) / 8
    heap: list = []
    seq = 0
    last = a
    index = site.index

    def later(t: float) -> float:
        d = MIN_DELAY - log(1.0 - r()) * mean_delay
        return t + d if t + d <= b else t + r() * (b - t)

    def push(t: float, kind: int, page, arg=None) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (t, seq, kind, page, arg))

    def stamp(t: float) -> float:
        nonlocal last
        t = round(t, 3)
        if t < last:
            t = last
        last = t
        return t

    def due(entry) -> list:
        t, _, kind, page, arg = entry
        t = stamp(t)
        if kind == _ALIAS:
            return _alias_events(t, page, rng)
        if kind == _TRAP:
            return [_trap_event(t, page, arg, rng)]
        if kind == _ERROR:
            return [_error_event(t, page, rng)]
        if kind == _TWIN:
            twin = Page(site, rng, tok=arg)
            return [(_page_event(t, twin.main, twin, rng), twin.truth, "trap:case_twin")]
        name, path = arg  # _LIB
        truth = "lib:" + name
        digest, sim, length = _content(truth)
        lib = FetchEvent(f"{site.scheme}://{site.host}{path}", t, 200, digest, sim, None, length // 4)
        return [(lib, truth, "trap:shared_asset")]

    for name, paths in site.libs:
        push(later(a), _LIB, None, (name, rng.choice(paths)))
    trap_per_page = site.noise / (1 - site.noise) * 2.0
    error_per_page = site.errors / (1 - site.errors) * 2.0
    out_seq = 0
    for t in times:
        while heap and heap[0][0] <= t:
            for ev in due(heapq.heappop(heap)):
                out_seq += 1
                yield (ev[0].ts, index, out_seq, *ev)
        page = Page(site, rng, asset=site.asset_share > 0 and r() < site.asset_share)
        out_seq += 1
        ts = stamp(t)
        yield (ts, index, out_seq, _page_event(ts, page.main, page, rng), page.truth, "main")
        if r() < site.dup:
            n = 1
            while n < 8 and r() < site.more:
                n += 1
            for _ in range(n):
                push(later(t), _ALIAS, page)
        if page.asset:
            continue
        n = int(trap_per_page) + (r() < trap_per_page % 1)
        for _ in range(n):
            push(later(t), _TRAP, page, _weighted(rng, site.trap_kinds, site.trap_w))
        n = int(error_per_page) + (r() < error_per_page % 1)
        for _ in range(n):
            push(later(t), _ERROR, page)
        if site.twins and r() < site.twins:
            twin = _case_twin(page.fields["tok"], site, rng)
            if twin is not None:
                push(later(t), _TWIN, page, twin)
    while heap:
        for ev in due(heapq.heappop(heap)):
            out_seq += 1
            yield (ev[0].ts, index, out_seq, *ev)


BATCH_EVENTS = 50_000  # about how many events one time slice holds in memory


def generate_labeled(cfg: LongtailConfig) -> Iterator[tuple[FetchEvent, str, str]]:
    """``(event, truth, label)`` in non-decreasing event time: the sites' own streams merged.

    The span is cut in time slices of about BATCH_EVENTS events; each site's stream runs
    through a whole slice at once and the slice is sorted by (time, site, sequence). The
    order is a heap merge's, but a site's state stays in the CPU caches while it runs:
    a heap merge resuming one of a thousand sites per event is 2-3 times slower."""
    sites = _make_sites(cfg)
    expected = 2 * sum(s.n_pages for s in sites)
    slices = max(1, -(-expected // BATCH_EVENTS))
    streams = [(s.window[0], _site_stream(s, cfg)) for s in sites]
    heads: list[tuple | None] = [None] * len(streams)
    done = [False] * len(streams)
    for k in range(1, slices + 1):
        bound = cfg.start_ts + cfg.duration * k / slices if k < slices else inf
        batch: list[tuple] = []
        for i, (start, stream) in enumerate(streams):
            if done[i] or start >= bound:  # no event of a site comes before its window
                continue
            item = heads[i] or next(stream, None)
            while item is not None and item[0] < bound:
                batch.append(item)
                item = next(stream, None)
            heads[i] = item
            done[i] = item is None
        batch.sort()
        for item in batch:
            yield item[3], item[4], item[5]


def generate(cfg: LongtailConfig) -> Iterator[tuple[FetchEvent, str]]:
    """``(event, truth)`` in non-decreasing event time; deterministic for ``cfg``."""
    for item in generate_labeled(cfg):
        yield item[0], item[1]


# --------------------------------------------------------------------------- settings files and the command


def load_settings(path) -> dict[str, LongtailConfig]:
    """Named settings from a YAML file (configs/eval/*.yaml): ``settings: {name: {knob: value}}``."""
    import yaml

    doc = yaml.safe_load(Path(path).read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("settings"), dict):
        raise ValueError(f"{path}: want a mapping with 'settings: {{name: {{knob: value}}}}'")
    if doc.get("generator", "longtail") != "longtail":
        raise ValueError(f"{path}: generator is {doc['generator']!r}, not 'longtail'")
    known = {f.name for f in fields(LongtailConfig)}
    out = {}
    for name, knobs in doc["settings"].items():
        unknown = set(knobs or {}) - known
        if unknown:
            raise ValueError(
                f"{path}: setting {name!r}: unknown knob(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(known))}"
            )
        cfg = LongtailConfig(**(knobs or {}))
        cfg.check()
        out[str(name)] = cfg
    return out


def write_files(cfg: LongtailConfig, events_path, truth_path, layout_path=None) -> int:
    """Write events, truth (and the layout when asked); the number of events."""
    if layout_path:  # first: a bad config fails before any file is written
        write_layout(cfg, layout_path)
    return write_stream(cfg, events_path, truth_path)


_CLI_KNOBS = (
    "seed",
    "sites",
    "median_pages",
    "size_sigma",
    "max_pages",
    "dup_rate",
    "compose",
    "clean_share",
    "redirect_share",
    "case_sensitive_share",
    "noise",
    "error_rate",
)


#: options only ``--profile longtail`` reads: the default generator must refuse them
LONGTAIL_ONLY = ("setting", *(k for k in _CLI_KNOBS if k not in ("seed", "sites", "dup_rate", "noise")))
#: the default generator's options that mean nothing here (``pages`` has a default: not checked)
DEFAULT_ONLY = ("families", "drift_sites", "drift_at")


def config_from_args(args, ignore: tuple[str, ...] = ("seed", "sites")) -> LongtailConfig:
    """The config ``--profile longtail`` asks for. With ``args.setting`` (``FILE:NAME``), that
    named setting exactly: it is a fixed workload (a held-out one must stay what it was), so
    another knob given with it is an error; ``ignore`` lists knobs whose parser gives them a
    default (cli.py's --seed and --sites), which cannot be told from given values. Without
    it, the defaults and every knob given (attributes that are not None)."""
    setting = getattr(args, "setting", None)
    given = {k: getattr(args, k) for k in _CLI_KNOBS if getattr(args, k, None) is not None}
    if not setting:
        cfg = LongtailConfig(**given)
    else:
        file, sep, name = setting.rpartition(":")
        if not sep or not file:
            raise ValueError(f"--setting wants FILE:NAME, got {setting!r}")
        settings = load_settings(file)
        if name not in settings:
            raise ValueError(f"--setting: no setting {name!r} in {file} (have: {', '.join(settings)})")
        extra = sorted(k for k in given if k not in ignore)
        if extra:
            raise ValueError(
                f"--setting {setting} is a fixed workload; drop " + ", ".join("--" + k.replace("_", "-") for k in extra)
            )
        cfg = settings[name]
    cfg.check()
    return cfg


def generate_command(args, events_path, truth_path) -> int:
    """What ``dustonline generate --profile longtail`` runs, given its parsed arguments and
    the two output paths: writes the files (and ``args.layout`` when set), reports, returns 0.
    Reads ``args.setting`` and the knobs of ``_CLI_KNOBS`` that exist on ``args``; the default
    generator's own options (families, drift) are refused rather than silently ignored."""
    foreign = [k for k in DEFAULT_ONLY if getattr(args, k, None) is not None]
    if foreign:
        raise ValueError(
            "generate --profile longtail: "
            + ", ".join("--" + k.replace("_", "-") for k in foreign)
            + " belong to the default generator"
        )
    cfg = config_from_args(args)
    layout = getattr(args, "layout", None)
    n = write_files(cfg, events_path, truth_path, layout)
    print(
        f"wrote {n} events ({cfg.sites} long-tail sites) to {events_path} and {truth_path}"
        + (f", layout to {layout}" if layout else ""),
        file=sys.stderr,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m dustonline.evaluation.longtail EVENTS TRUTH [--setting FILE:NAME] [--knob V...]``."""
    ap = argparse.ArgumentParser(description="Write a long-tail synthetic DUST fetch stream and its ground truth.")
    ap.add_argument("events")
    ap.add_argument("truth")
    ap.add_argument("--setting", metavar="FILE:NAME", help="a named setting of configs/eval/*.yaml")
    ap.add_argument("--layout", metavar="FILE", help="also write the sites' ground truth here (JSON)")
    defaults = LongtailConfig()
    for knob in _CLI_KNOBS:
        ap.add_argument("--" + knob.replace("_", "-"), type=type(getattr(defaults, knob)), default=None)
    args = ap.parse_args(argv)
    cfg = config_from_args(args, ignore=())
    n = write_files(cfg, args.events, args.truth, args.layout)
    print(f"wrote {n} events ({cfg.sites} long-tail sites) to {args.events} and {args.truth}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
