"""Deterministic synthetic fetch stream over many sites, with known duplicate groups.

Each site serves ``n`` pages under one URL style and is given 1-3 DUST alias families
(www alias, session ids, tracking parameters, ...). A page is first fetched under its
main URL; with probability ``dup_rate`` it is fetched again later under 1+ alias URLs
of the same content. Traps (pagination, sort/filter, language paths, soft-404s, a
shared logo) and non-2xx fetches are mixed in, so a learner that over-generalizes is
caught by the ground truth.

``generate(cfg)`` yields ``(FetchEvent, truth)`` in event-time order; ``truth`` is the
content id: two URLs are true duplicates iff their truth ids are equal. Contract:

- exact duplicates share the digest and the simhash; distinct truths never share a
  digest among 2xx events;
- the "print page" family is a near-duplicate: same truth, different digest, simhash
  within 1-2 bits of the page's;
- non-2xx events carry the truth of their URL but an error body digest (shared per
  site) or the empty digest (301), so only 2xx events obey the digest contract;
- the first event of every page truth is its main URL, so pages can be split into
  earlier (training) and later (held-out) ones by order of first appearance.

Concept drift (``drift_sites``): a few sites with the irrelevant-slug family redesign
their URLs at ``drift_at`` of their crawl span. Old articles keep their URLs; articles
published after the drift get ``/p/<section-id>/<slug>`` (style "p") or
``/<section>/<slug>-<year>.html`` (style "slug"): the number no longer names the
article, the slug does, so the "drop the slug" rule learned before the drift merges
distinct pages after it. Slug aliases stop at the drift; the site's other families go
on. ``drift_info(cfg)`` (and ``site_layout``) describe it; the event stream never does.

Everything random comes from ``random.Random`` instances seeded from ``cfg.seed``:
the same config gives the same stream on every run and platform. A config that sets
none of ``families``, ``drift_sites`` gives the same stream as before these existed.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import operator
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from math import inf, log
from random import Random
from typing import Protocol, cast

import mmh3
import msgspec

from ..events.event import EMPTY_DIGEST, FetchEvent

__all__ = [
    "GenConfig",
    "generate",
    "generate_labeled",
    "site_layout",
    "drift_info",
    "write_stream",
    "write_layout",
    "parse_families",
    "FAMILIES",
    "DEFAULT_FAMILIES",
]


@dataclass
class GenConfig:
    seed: int = 0
    sites: int = 50
    pages: int = 20000  # distinct page contents over all sites (traps add more)
    dup_rate: float = 0.35  # probability that a page is also fetched under alias URLs
    noise: float = 0.02  # share of trap events (pagination, sort, language, soft-404, logo)
    start_ts: float = 1_700_000_000.0
    duration: float = 14 * 86400.0
    fetch_order: str = "crawl"  # "crawl": sites interleaved; "site": one site after another
    # alias families sites may draw from (names as in FAMILIES, or "all"); None = DEFAULT_FAMILIES
    families: tuple[str, ...] | None = None
    drift_sites: int = 0  # sites whose URL scheme changes mid-stream (concept drift)
    drift_at: float = 0.5  # when, as a share of the site's crawl span (< DISCOVERY_SHARE)


# --------------------------------------------------------------------------- vocabulary

TLDS = ("com", "org", "net", "com.br", "co.uk", "de", "gov")
_ONSETS = ("b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr", "gl")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
SECTIONS = (
    "news",
    "sports",
    "politics",
    "business",
    "tech",
    "science",
    "health",
    "travel",
    "culture",
    "opinion",
    "world",
    "local",
)
CATS = ("garden", "kitchen", "toys", "books", "audio", "tools", "shoes", "office", "bikes")
DOC_SECTIONS = ("Getting-Started", "Reference", "Tutorials", "Api", "Howto", "Admin")
WORDS = (
    "river",
    "budget",
    "vote",
    "storm",
    "market",
    "city",
    "school",
    "green",
    "energy",
    "music",
    "film",
    "match",
    "final",
    "health",
    "report",
    "plan",
    "new",
    "old",
    "big",
    "small",
    "fast",
    "local",
    "world",
    "price",
    "record",
    "winter",
    "summer",
    "bridge",
    "council",
    "festival",
    "season",
    "review",
    "guide",
    "study",
    "trial",
    "launch",
)
UTM_SOURCES = ("google", "facebook", "twitter", "newsletter", "bing", "reddit", "linkedin", "partner")
UTM_MEDIUMS = ("cpc", "email", "social", "referral", "banner", "organic")
SORT_TRAPS = (("sort", "price"), ("sort", "date"), ("sort", "name"), ("filter", "new"), ("filter", "sale"))
LANGS = ("fr", "de", "es", "pt")

ALIAS_CONTINUE = 0.45  # P(one more alias) after each alias: mean ~1.8 aliases per dup page
COMPOSE_RATE = 0.15  # share of alias fetches that combine two families
ERROR_RATE = 0.01  # share of non-2xx events
CANONICAL_RATE = 0.005  # share of 2xx page events carrying rel=canonical
TRAP_KINDS = ("pagination",) * 3 + ("sort", "lang", "soft404") * 2 + ("image",)  # drawn uniformly
ERROR_KINDS = (404, 500, 301)
DISCOVERY_SHARE = 0.7  # pages are discovered in the first 70% of the time span
MIN_DELAY = 60.0  # an alias is fetched at least a minute after its page


# --------------------------------------------------------------------------- content identity

# Byte -> base32 letter (byte mod 32). 32 hash bytes translated this way are a valid
# base32 text of a 160-bit value, made in C (base64.b32encode is slow pure Python).
_B32_OF_BYTE = bytes(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[i % 32] for i in range(256))


def _digest_of(key: str) -> str:
    """``sha1:``-style digest (32 base32 letters) of a content key: MurmurHash3 (stable
    across runs and platforms, unlike hash()), 256 bits from two seeds; about 4x faster
    than hashlib.sha1 + base64.b32encode, which matters at a million pages."""
    raw = mmh3.hash_bytes(key, 1) + mmh3.hash_bytes(key, 2)
    return "sha1:" + raw.translate(_B32_OF_BYTE).decode("ascii")


def _content(truth: str) -> tuple[str, int, int]:
    """(digest, simhash, length) of a content id."""
    sim, extra = mmh3.hash64(truth, 3, signed=False)
    raw = mmh3.hash_bytes(truth, 1) + mmh3.hash_bytes(truth, 2)  # = _digest_of, inlined
    return "sha1:" + raw.translate(_B32_OF_BYTE).decode("ascii"), sim, 2000 + extra % 60000


def _near(truth: str, simhash: int) -> tuple[str, int]:
    """Digest and simhash of the print version: other bytes, 1-2 simhash bits flipped."""
    key = truth + "#print"
    bits = mmh3.hash(key, 4, signed=False)
    first, second = bits % 64, (bits >> 6) % 64
    flipped = simhash ^ (1 << first)
    if bits & (1 << 12) and second != first:
        flipped ^= 1 << second
    return _digest_of(key), flipped


def _pick(rng: Random, seq):
    """rng.choice without its rejection sampling: five times faster, still deterministic."""
    return seq[int(rng.random() * len(seq))]


# --------------------------------------------------------------------------- sites and pages


@dataclass(frozen=True)
class Style:
    """A site's URL scheme; the flags say which alias families make sense for it."""

    name: str
    example: str
    query_params: int = 0
    leaf: bool = False  # path without extension or trailing slash
    dir: bool = False  # path ends with '/'
    caps_ok: bool = False  # first path segment may be capitalized (case-insensitive server)

    @property
    def uses_slug(self) -> bool:
        return "<slug>" in self.example or "<Title>" in self.example

    @property
    def uses_cat(self) -> bool:
        return "<cat>" in self.example


STYLES = (
    Style("news", "/news/<id>", leaf=True, caps_ok=True),
    Style("php", "/article.php?id=<id>", query_params=1),
    Style("slug", "/<section>/<slug>-<id>.html", caps_ok=True),
    Style("products", "/products/<cat>/<id>", leaf=True, caps_ok=True),
    Style("story", "/story?id=<id>&page=1", query_params=2),
    Style("catalog", "/catalog.asp?cat=<cat>&item=<id>", query_params=2),
    Style("dir", "/<section>/<slug>-<id>/", dir=True, caps_ok=True),
    Style("p", "/p/<id>/<slug>", leaf=True),
    Style("docs", "/docs/<Section>/<Title>-<id>", leaf=True),
)


@dataclass(eq=False)
class Site:
    index: int
    name: str
    host: str  # www.<name>.<tld>: the host of main URLs
    bare: str  # <name>.<tld>
    scheme: str
    style: Style
    caps: bool  # capitalized paths, served case-insensitively
    n_pages: int
    id_base: int
    id_step: int
    session: str  # "sid" | "php" | "jsession"
    tracking: str  # "utm" | "ref"
    index_file: str
    mirror: str
    print_style: str  # "query" | "path"
    families: tuple = ()
    origin: str = ""  # scheme://host of main URLs
    uses_slug: bool = False
    uses_cat: bool = False
    sections: tuple = SECTIONS  # section names as they appear in URLs
    next_n: int = 0
    next_error: int = 0
    shared: dict = field(default_factory=dict)  # content of soft-404 / logo / error bodies
    partners: dict = field(default_factory=dict)  # family -> site families it composes with
    # (site, page, slug) -> (path, query): _PARTS[style.name]; None is a placeholder that
    # _make_site replaces before any Page of the site is built
    parts: Callable = None  # type: ignore[assignment]
    alt_domain: str = ""  # another registered domain serving the same site (family "domain")
    mirror_host: str = ""  # a mirror host of the site (family "mirror_host")
    drift_ts: float = inf  # when the site redesigns its URLs (inf: never); see _plan_drift
    drift_numbers: tuple = ()  # style "p" after the drift: the section ids URLs carry
    drift_slugs: set = field(default_factory=set)  # post-drift slugs, unique per site
    families_after: tuple = ()  # the families that still hold after the drift
    partners_after: dict = field(default_factory=dict)

    def set_families(self, families) -> None:
        self.families = tuple(sorted(families, key=lambda f: f.number))
        self.partners = _partners(self.families)

    def drift(self, ts: float, broken) -> None:
        """From ``ts`` on, the ``broken`` families no longer make aliases."""
        self.drift_ts = ts
        self.families_after = tuple(f for f in self.families if f not in broken)
        self.partners_after = _partners(self.families_after)

    def hosts(self) -> list[str]:
        """Hosts the site's URLs use: the main host and those of its host families."""
        out = [self.host]
        for f in self.families:
            h = {"www": self.bare, "domain": self.alt_domain, "mirror_host": self.mirror_host}.get(f.name)
            if h and h not in out:
                out.append(h)
        return out

    def shared_content(self, key: str) -> tuple[str, str, int, int]:
        """(truth, digest, simhash, length) of a body the whole site shares."""
        got = self.shared.get(key)
        if got is None:
            truth = f"{key}:{self.host}"
            got = self.shared[key] = (truth, *_content(truth))
        return got


def _partners(families: tuple) -> dict:
    """Family -> the families it composes with (those of another stage)."""
    return {f: tuple(g for g in families if g.stage != f.stage) for f in families}


class Page:
    """One content of a site: its main URL and content identity, drawn when discovered."""

    __slots__ = (
        "site",
        "id",
        "section",
        "slug",
        "cat",
        "path",
        "query",
        "main",
        "truth",
        "digest",
        "simhash",
        "length",
        "_near",
    )

    def __init__(self, site: Site, n: int, rng: Random):
        r = rng.random
        sections = site.sections
        self.site = site
        self.id = pid = site.id_base + n * site.id_step
        self.section = sections[int(r() * len(sections))]
        if site.uses_slug:
            words, nw = WORDS, len(WORDS)
            self.slug = f"{words[int(r() * nw)]}-{words[int(r() * nw)]}-{words[int(r() * nw)]}"
        else:
            self.slug = ""
        self.cat = CATS[int(r() * len(CATS))] if site.uses_cat else ""
        self.path, self.query = path, query = site.parts(site, self, self.slug)
        self.main = site.origin + path + ("?" + "&".join(map("=".join, query)) if query else "")
        self.truth = truth = f"{site.bare}:{pid}"
        self.digest, self.simhash, self.length = _content(truth)
        self._near: tuple[str, int] | None = None

    def near(self) -> tuple[str, int]:
        if self._near is None:
            self._near = _near(self.truth, self.simhash)
        return self._near


class _Url:
    """A URL in parts, so alias families compose (www alias + session id on one URL)."""

    __slots__ = ("scheme", "host", "path", "query", "matrix")

    def __init__(self, scheme: str, host: str, path: str, query: list, matrix: str = ""):
        self.scheme = scheme
        self.host = host
        self.path = path
        self.query = query
        self.matrix = matrix

    def text(self) -> str:
        url = f"{self.scheme}://{self.host}{self.path}{self.matrix}"
        return url + "?" + "&".join(map("=".join, self.query)) if self.query else url


def _main_parts(site: Site, page: Page, slug: str | None = None) -> tuple[str, tuple]:
    """Path and query of a page's main URL in the site's style (``slug`` overrides)."""
    return site.parts(site, page, page.slug if slug is None else slug)


# One function per style. ``page.section`` is as it appears in URLs (capitalized on
# case-insensitive sites); query values are strings, in the order the site writes them.
_PARTS = {
    "news": lambda site, page, slug: (f"/{'News' if site.caps else 'news'}/{page.id}", ()),
    "php": lambda site, page, slug: ("/article.php", (("id", str(page.id)),)),
    "slug": lambda site, page, slug: (f"/{page.section}/{slug}-{page.id}.html", ()),
    "products": lambda site, page, slug: (f"/{'Products' if site.caps else 'products'}/{page.cat}/{page.id}", ()),
    "story": lambda site, page, slug: ("/story", (("id", str(page.id)), ("page", "1"))),
    "catalog": lambda site, page, slug: ("/catalog.asp", (("cat", page.cat), ("item", str(page.id)))),
    "dir": lambda site, page, slug: (f"/{page.section}/{slug}-{page.id}/", ()),
    "p": lambda site, page, slug: (f"/p/{page.id}/{slug}", ()),
    "docs": lambda site, page, slug: (f"/docs/{page.section}/{slug.title()}-{page.id}", ()),
}


def _slug(rng: Random, words: int = 3) -> str:
    r = rng.random
    n = len(WORDS)
    return "-".join([WORDS[int(r() * n)] for _ in range(words)])


DRIFT_SLUG_WORDS = 5  # pre-drift slugs have 1-4 words, so no post-drift URL equals an older one


def _redesign(page: Page, t: float, rng: Random) -> None:
    """Give a page published after its site's drift the new URL scheme: the number in the
    URL is shared by many articles (a section id on style "p", the year on style "slug")
    and a long slug, unique on the site, names the article. Its truth stays its own."""
    site = page.site
    while True:
        slug = _slug(rng, DRIFT_SLUG_WORDS)
        if slug not in site.drift_slugs:
            break
    site.drift_slugs.add(slug)
    if site.style.name == "p":
        numbers = site.drift_numbers  # a few big sections take most articles
        number = numbers[int(rng.random() ** 2 * len(numbers))]
    else:
        number = time.gmtime(t).tm_year
    article = page.id
    page.id, page.slug = number, slug
    page.path, page.query = path, query = site.parts(site, page, slug)
    page.id = article
    page.main = site.origin + path + ("?" + "&".join(map("=".join, query)) if query else "")


# --------------------------------------------------------------------------- alias families
# Each family rewrites a _Url in place. Stages order composition: path (0), query
# reordering (1), query additions (2), host and scheme (3); two families composed in
# one alias URL always come from different stages.


def fam_www(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """www alias: servers answer on both ``www.site`` and the bare ``site``."""
    u.host = site.bare


def fam_scheme(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Scheme: the same page served over http and https (mixed links after a migration)."""
    u.scheme = "https" if u.scheme == "http" else "http"


def fam_session(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Session ids in URLs: every visit gets a fresh random id, so one page has endless URLs."""
    if site.session == "sid":
        u.query.append(("sid", f"{rng.getrandbits(64):016x}"))
    elif site.session == "php":
        u.query.append(("PHPSESSID", f"{rng.getrandbits(128):032x}"))
    else:
        u.matrix = f";jsessionid={rng.getrandbits(96):024X}"


def fam_tracking(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Tracking parameters: campaign links add utm_*/ref values that never change the page."""
    if site.tracking == "utm":
        u.query.append(("utm_source", _pick(rng, UTM_SOURCES)))
        u.query.append(("utm_medium", _pick(rng, UTM_MEDIUMS)))
        if rng.random() < 0.3:
            u.query.append(("utm_campaign", f"{_pick(rng, WORDS)}{rng.randint(2019, 2025)}"))
    else:
        u.query.append(("ref", _pick(rng, WORDS)))


def fam_param_order(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Parameter order: links built by different code list the same parameters in another order."""
    u.query.reverse()


def fam_index(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Index pages: ``/dir/`` and ``/dir/index.html`` (or index.php, default.aspx) are one file."""
    u.path = (u.path if u.path.endswith("/") else u.path + "/") + site.index_file


def fam_trailing_slash(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Trailing slash: ``/a/b`` and ``/a/b/`` reach the same handler on most frameworks."""
    u.path = u.path[:-1] if u.path.endswith("/") else u.path + "/"


def fam_alias_path(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Alias paths: a rewrite layer serves ``/story?id=7`` also as ``/story_7.html`` (or ``/a/7``)."""
    name = site.style.name
    if name == "php":
        u.path, u.query = f"/a/{page.id}", []
    elif name == "story":
        u.path, u.query = f"/story_{page.id}.html", []
    else:  # news
        u.path, u.query = "/news.php", [("id", str(page.id))]


def fam_slug(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Irrelevant slug: only the id selects the page; old and new titles in the URL both work."""
    u.path = _main_parts(site, page, slug=_slug(rng, 1 + int(rng.random() * 4)))[0]


def fam_case(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Letter case: case-insensitive servers (IIS) serve ``/About/Team`` as ``/about/team``."""
    u.path = u.path.lower()


def fam_mirror(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Mirror directories: a copy of the site under ``/mirror1/`` or an old ``/v1/`` prefix."""
    u.path = site.mirror + u.path


def fam_print(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Print pages: a near-duplicate (no navigation), caught only by simhash, not by digest."""
    if site.print_style == "query":
        u.query.append(("print", "1"))
    else:
        u.path = "/print" + u.path


def fam_domain(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Other domains: the same site also answers on another registered domain (the brand
    under another TLD, or a legacy domain kept after a rename)."""
    u.host = site.alt_domain


def fam_mirror_host(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Mirror hosts: ``mirror.site`` (or ``www2.site``) serves a copy of the whole site."""
    u.host = site.mirror_host


def fam_session_path(u: _Url, site: Site, page: Page, rng: Random) -> None:
    """Session id as a path segment: ASP.NET cookieless sessions, ``/(S(<id>))/page``."""
    u.path = f"/(S({rng.getrandbits(96):024x}))" + u.path


@dataclass(frozen=True, eq=False)  # identity hash: cheap as a dict key
class Family:
    number: int
    name: str
    stage: int
    apply: Callable[[_Url, Site, Page, Random], None]
    applies: Callable[[Site], bool]
    near: bool = False

    def __repr__(self) -> str:
        return f"Family({self.name})"


def _always(site: Site) -> bool:
    return True


FAMILIES = (
    Family(1, "www", 3, fam_www, _always),
    Family(2, "scheme", 3, fam_scheme, _always),
    Family(3, "session", 2, fam_session, _always),
    Family(4, "tracking", 2, fam_tracking, _always),
    Family(5, "param_order", 1, fam_param_order, lambda s: s.style.query_params >= 2),
    Family(6, "index", 0, fam_index, lambda s: s.style.dir),
    Family(7, "trailing_slash", 0, fam_trailing_slash, lambda s: s.style.leaf or s.style.dir),
    Family(8, "alias_path", 0, fam_alias_path, lambda s: s.style.name in ("php", "story", "news")),
    Family(9, "slug", 0, fam_slug, lambda s: s.style.name in ("p", "slug")),
    Family(10, "case", 0, fam_case, lambda s: s.caps),
    Family(11, "mirror", 0, fam_mirror, _always),
    Family(12, "print", 2, fam_print, _always, near=True),
    Family(13, "domain", 3, fam_domain, _always),
    Family(14, "mirror_host", 3, fam_mirror_host, _always),
    Family(15, "session_path", 0, fam_session_path, _always),
)
# Sites draw from these unless ``GenConfig.families`` says otherwise: the families
# added later are opt-in, so the default stream (and data made from it) stays the same.
DEFAULT_FAMILIES = FAMILIES[:12]
_BY_NAME = {f.name: f for f in FAMILIES}


def parse_families(names) -> tuple[str, ...] | None:
    """Family names from ``"a,b,c"`` or a sequence; ``"all"`` = every family; None stays
    None (the default families). Unknown names raise ValueError listing the valid ones."""
    if names is None:
        return None
    if isinstance(names, str):
        names = names.split(",")
    names = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
    unknown = [n for n in names if n != "all" and n not in _BY_NAME]
    if unknown:
        raise ValueError(
            f"unknown alias famil{'y' if len(unknown) == 1 else 'ies'} "
            f"{', '.join(map(repr, unknown))}; valid names: {', '.join(_BY_NAME)} (or all)"
        )
    if not names:
        raise ValueError(f"no alias family named; valid names: {', '.join(_BY_NAME)} (or all)")
    return tuple(_BY_NAME) if "all" in names else names


def _family_pool(cfg: GenConfig) -> tuple[Family, ...]:
    names = parse_families(cfg.families)
    if names is None:
        return DEFAULT_FAMILIES
    return tuple(f for f in FAMILIES if f.name in names)


# --------------------------------------------------------------------------- site layout


def _split_pages(total: int, n_sites: int, rng: Random) -> list[int]:
    """Heavy-tailed (Zipf, exponent 1.1, shuffled ranks) page counts, each >= ~20, summing to total."""
    floor = min(20, total // n_sites)
    ranks = list(range(1, n_sites + 1))
    rng.shuffle(ranks)
    weights = [r**-1.1 * (0.75 + 0.5 * rng.random()) for r in ranks]
    rest = total - floor * n_sites
    raw = [rest * w / sum(weights) for w in weights]
    counts = [floor + int(x) for x in raw]
    by_remainder = sorted(range(n_sites), key=lambda i: (int(raw[i]) - raw[i], i))
    for i in by_remainder[: total - sum(counts)]:
        counts[i] += 1
    return counts


def _site_name(rng: Random, taken: set[str]) -> str:
    while True:
        name = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 3)))
        if rng.random() < 0.5:
            name += rng.choice("nrsxt")
        if name not in taken:
            taken.add(name)
            return name


def _make_site(seed: int, index: int, n_pages: int, taken: set[str], pool=DEFAULT_FAMILIES) -> Site:
    rng = Random(f"dustonline.generate:{seed}:site:{index}")
    name = _site_name(rng, taken)
    tld = rng.choice(TLDS)
    style = rng.choice(STYLES)
    site = Site(
        index=index,
        name=name,
        host=f"www.{name}.{tld}",
        bare=f"{name}.{tld}",
        scheme=rng.choice(("http", "https")),
        style=style,
        caps=style.name == "docs" or (style.caps_ok and rng.random() < 0.25),
        n_pages=n_pages,
        id_base=rng.randint(1, 50000),
        id_step=rng.randint(1, 9),
        session=rng.choice(("sid", "php", "jsession")),
        tracking=rng.choice(("utm", "ref")),
        index_file=rng.choice(("index.html", "index.php", "default.aspx")),
        mirror="/v1" if style.name == "docs" else rng.choice(("/mirror1", "/mirror2", "/v1", "/old")),
        print_style=rng.choice(("query", "path")),
    )
    site.origin = f"{site.scheme}://{site.host}"
    site.parts = _PARTS[style.name]
    site.uses_slug, site.uses_cat = style.uses_slug, style.uses_cat
    if style.name == "docs":
        site.sections = DOC_SECTIONS
    elif site.caps:
        site.sections = tuple(s.capitalize() for s in SECTIONS)
    applicable = [f for f in pool if f.applies(site)]
    k = min(rng.choice((1, 2, 2, 3)), len(applicable))
    site.set_families(rng.sample(applicable, k))
    # other hosts of the site, from their own generator: the draws above stay as they were
    hosts = Random(f"dustonline.generate:{seed}:site:{index}:hosts")
    other = hosts.choice([x for x in TLDS if x != tld])
    site.alt_domain = hosts.choice((f"www.{name}.{other}", f"{name}.{other}", f"www.{name}-online.{tld}"))
    site.mirror_host = f"{hosts.choice(('mirror', 'mirror2', 'www2'))}.{site.bare}"
    return site


def _make_sites(cfg: GenConfig) -> list[Site]:
    if cfg.sites < 1 or cfg.pages < cfg.sites:
        raise ValueError("need sites >= 1 and pages >= sites")
    if cfg.fetch_order not in ("crawl", "site"):
        raise ValueError(f"fetch_order must be 'crawl' or 'site', not {cfg.fetch_order!r}")
    pool = _family_pool(cfg)
    counts = _split_pages(cfg.pages, cfg.sites, Random(f"dustonline.generate:{cfg.seed}:layout"))
    taken: set[str] = set()
    sites = [_make_site(cfg.seed, i, n, taken, pool) for i, n in enumerate(counts)]
    _cover_all_families(sites, Random(f"dustonline.generate:{cfg.seed}:cover"), pool)
    if cfg.drift_sites:
        _plan_drift(cfg, sites, pool)
    return sites


def _spans(cfg: GenConfig, sites: list[Site]) -> list[tuple[float, float]]:
    """Each site's crawl span: the whole stream in crawl order, its own slice in site order."""
    t0, t1 = cfg.start_ts, cfg.start_ts + cfg.duration
    if cfg.fetch_order == "crawl":
        return [(t0, t1)] * len(sites)
    out = []
    start = t0
    for s in sites:
        end = start + cfg.duration * s.n_pages / cfg.pages
        out.append((start, end))
        start = end
    return out


def _plan_drift(cfg: GenConfig, sites: list[Site], pool: tuple) -> None:
    """Pick ``cfg.drift_sites`` sites with a slug URL style (weighted by size: a redesign
    needs articles after it to show) and set their drift time. A site without the slug
    family gets it (its slug is irrelevant before the drift), and one without another
    family gets www (else another allowed one), so it keeps learnable DUST after."""
    n = cfg.drift_sites
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"drift_sites must be an integer >= 0, not {n!r}")
    if not 0 < cfg.drift_at < DISCOVERY_SHARE:
        raise ValueError(
            f"drift_at must be in (0, {DISCOVERY_SHARE}): pages are published in the first "
            f"{DISCOVERY_SHARE:.0%} of a site's span, and the drift needs pages after it"
        )
    slug = _BY_NAME["slug"]
    if slug not in pool:
        raise ValueError("drift breaks the 'slug' family: include it in families")
    eligible = [s for s in sites if slug.applies(s)]
    if len(eligible) < n:
        raise ValueError(
            f"drift_sites={n}, but only {len(eligible)} site(s) have a slug URL style "
            f"(/p/<id>/<slug> or /<section>/<slug>-<id>.html); use more sites or another seed"
        )
    rng = Random(f"dustonline.generate:{cfg.seed}:drift")
    chosen: list[Site] = []
    while len(chosen) < n:
        x = rng.random() * sum(s.n_pages for s in eligible)
        for i, s in enumerate(eligible):
            x -= s.n_pages
            if x < 0 or i == len(eligible) - 1:
                chosen.append(eligible.pop(i))
                break
    spans = _spans(cfg, sites)
    for site in sorted(chosen, key=lambda s: s.index):
        fams = site.families if slug in site.families else site.families + (slug,)
        if len(fams) == 1:
            others = [f for f in pool if f is not slug and f.applies(site)]
            if not others:
                raise ValueError(
                    "a drifting site needs an alias family besides 'slug' (e.g. www) to keep "
                    "learnable DUST after the drift: include one in families"
                )
            www = _BY_NAME["www"]
            fams += (www if www in others else rng.choice(others),)
        site.set_families(fams)
        if site.style.name == "p":
            site.drift_numbers = tuple(sorted(rng.sample(range(1, 100), rng.randint(4, 8))))
        start, end = spans[site.index]
        site.drift(round(start + cfg.drift_at * (end - start), 3), (slug,))


_DRIFT_AFTER = {"p": "/p/<section-id>/<slug>", "slug": "/<section>/<slug>-<year>.html"}


def _drift_record(site: Site) -> dict:
    return {
        "site": site.bare,
        "hosts": site.hosts(),
        "drift_ts": site.drift_ts,
        "family": "slug",
        "before": site.style.example,
        "after": _DRIFT_AFTER[site.style.name],
        "description": (
            "URL redesign: articles published from drift_ts on carry a number shared by many "
            f"articles ({'a section id' if site.style.name == 'p' else 'the year'}) and a "
            f"{DRIFT_SLUG_WORDS}-word slug that names the article; older articles keep their URLs. "
            "The 'slug' family breaks: URLs that differ only in the slug were one page before and "
            "are distinct pages after, so a rule dropping the slug must be retired."
        ),
        "families_after": [f.name for f in site.families_after],
    }


def drift_info(cfg: GenConfig) -> list[dict]:
    """Ground truth of concept drift: one record per drifting site (empty without drift).
    The event stream never carries it; see ``write_layout``."""
    return [_drift_record(s) for s in _make_sites(cfg) if s.drift_ts != inf]


def _cover_all_families(sites: list[Site], rng: Random, pool=DEFAULT_FAMILIES) -> None:
    """Give every family at least one site (when some site's style allows it)."""
    for fam in pool:
        if any(fam in s.families for s in sites):
            continue
        candidates = [s for s in sites if fam.applies(s)]
        if not candidates:
            continue
        roomy = [s for s in candidates if len(s.families) < 3] or candidates
        site = rng.choice(roomy)
        site.set_families(site.families + (fam,))


def site_layout(cfg: GenConfig) -> list[dict]:
    """What each site looks like: main ``host``, registered domain (``site``), the ``hosts``
    its URLs use, style, families, and ``drift`` (as in ``drift_info``) on drifting sites.
    For reports, debugging and ``dustonline eval --layout``."""
    out = []
    for s in _make_sites(cfg):
        d = {
            "host": s.host,
            "site": s.bare,
            "hosts": s.hosts(),
            "pages": s.n_pages,
            "style": s.style.example,
            "caps": s.caps,
            "families": [f.name for f in s.families],
        }
        if s.drift_ts != inf:
            d["drift"] = _drift_record(s)
        out.append(d)
    return out


# --------------------------------------------------------------------------- event builders


def _page_event(t: float, url: str, page: Page, rng: Random, near: bool = False) -> FetchEvent:
    canonical = page.main if rng.random() < CANONICAL_RATE else None
    if near:
        digest, simhash = page.near()
        return FetchEvent(url, t, 200, digest, simhash, canonical, page.length * 3 // 5)
    return FetchEvent(url, t, 200, page.digest, page.simhash, canonical, page.length)


def _alias(t: float, page: Page, rng: Random) -> tuple[FetchEvent, str, str]:
    """One fetch of ``page`` under an alias URL: one site family, sometimes two composed."""
    site = page.site
    r = rng.random
    if t < site.drift_ts:
        fams, partners = site.families, site.partners
    else:  # the families the redesign broke make no more aliases
        fams, partners = site.families_after, site.partners_after
    combo: tuple[Family, ...] = (fams[int(r() * len(fams))],)
    if r() < COMPOSE_RATE:
        partners = partners[combo[0]]
        if partners:
            combo = _by_stage(combo[0], partners[int(r() * len(partners))])
    u = _Url(site.scheme, site.host, page.path, list(page.query))
    for fam in combo:
        fam.apply(u, site, page, rng)
    label, near = _combo_info(combo)
    return _page_event(t, u.text(), page, rng, near), page.truth, label


def _by_stage(a: Family, b: Family) -> tuple[Family, Family]:
    return (a, b) if a.stage < b.stage else (b, a)


@functools.cache
def _combo_info(combo: tuple[Family, ...]) -> tuple[str, bool]:
    """Label and near-duplicate flag of a family combination."""
    return "alias:" + "+".join(f.name for f in combo), any(f.near for f in combo)


def trap_pagination(page: Page, rng: Random) -> tuple[_Url, str]:
    """Pagination: ``page=2`` is another slice of a list, distinct content; never drop it."""
    n = rng.randint(2, 5)
    query = [(k, v) for k, v in page.query if k != "page"] + [("page", str(n))]
    return _Url(page.site.scheme, page.site.host, page.path, query), f"{page.truth}/page={n}"


def trap_sort(page: Page, rng: Random) -> tuple[_Url, str]:
    """Sort/filter parameters change what the page lists, unlike tracking parameters."""
    k, v = _pick(rng, SORT_TRAPS)
    query = list(page.query) + [(k, v)]
    return _Url(page.site.scheme, page.site.host, page.path, query), f"{page.truth}/{k}={v}"


def trap_lang(page: Page, rng: Random) -> tuple[_Url, str]:
    """Language paths ``/fr/x`` look like mirror prefixes but hold a translation."""
    lang = _pick(rng, LANGS)
    u = _Url(page.site.scheme, page.site.host, f"/{lang}{page.path}", list(page.query))
    return u, f"{page.truth}/lang={lang}"


def trap_soft404(page: Page, rng: Random) -> tuple[_Url, str]:
    """Soft-404: unrelated missing URLs answer 200 with one shared body (one truth per site)."""
    site = page.site
    path = f"/{_pick(rng, WORDS)}/{_pick(rng, WORDS)}_{rng.getrandbits(32):x}.htm"
    return _Url(site.scheme, site.host, path, []), site.shared_content("soft404")[0]


def trap_image(page: Page, rng: Random) -> tuple[_Url, str]:
    """Shared image: one logo under many unrelated paths (one truth per site)."""
    site = page.site
    path = _pick(
        rng,
        (
            f"/{page.section.lower()}/img/logo.png",
            f"/static/{rng.randint(1, 400)}/logo.png",
            "/images/logo.png",
            f"/{_pick(rng, WORDS)}/assets/logo.png",
        ),
    )
    return _Url(site.scheme, site.host, path, []), site.shared_content("logo")[0]


TRAPS = {
    "pagination": trap_pagination,
    "sort": trap_sort,
    "lang": trap_lang,
    "soft404": trap_soft404,
    "image": trap_image,
}


def _trap(t: float, page: Page, kind: str, rng: Random) -> tuple[FetchEvent, str, str]:
    u, truth = TRAPS[kind](page, rng)
    if kind in ("soft404", "image"):
        _, digest, simhash, length = page.site.shared_content("soft404" if kind == "soft404" else "logo")
    else:
        digest, simhash, length = _content(truth)
    return FetchEvent(u.text(), t, 200, digest, simhash, None, length), truth, "trap:" + kind


def _error(t: float, page: Page, status: int, rng: Random) -> tuple[FetchEvent, str, str]:
    """Non-2xx fetches (must never teach): 404 on a missing id, 500 on a page, 301 from http/https."""
    site = page.site
    if status == 404:
        k = site.next_error
        site.next_error += 1
        gone = Page(site, site.n_pages + 1 + k, rng)  # an id the site never had
        url, truth = gone.main, f"{site.bare}:gone:{k}"
        _, digest, simhash, length = site.shared_content("error404")
    elif status == 500:
        url, truth = page.main, page.truth
        _, digest, simhash, length = site.shared_content("error500")
    else:
        u = _Url(site.scheme, site.host, page.path, list(page.query))
        fam_scheme(u, site, page, rng)
        url, truth, digest, simhash, length = u.text(), page.truth, EMPTY_DIGEST, None, 0
    return FetchEvent(url, t, status, digest, simhash, None, length), truth, f"error:{status}"


# --------------------------------------------------------------------------- schedule

_ALIAS, _TRAP, _ERROR = 0, 1, 2


class _Pending:
    """Fetches scheduled for later, in buckets one discovery step wide.

    Adding and taking are O(1) per fetch, where a heap of 50k pending tuples costs
    ~2 us per push and pop: a fifth of the whole generation time at 1M events.
    """

    def __init__(self, t0: float, step: float):
        self.t0 = t0
        self.per_step = 1.0 / step
        self.buckets: dict[int, list] = {}
        self.cursor = 0  # the discovery step being processed; nothing goes before it
        self.seq = 0  # tie-breaker: equal times keep scheduling order

    def add(self, t: float, kind: int, page: Page, arg) -> None:
        self.seq += 1
        key = int((t - self.t0) * self.per_step)
        if key < self.cursor:  # float rounding at a bucket edge
            key = self.cursor
        bucket = self.buckets.get(key)
        if bucket is None:
            self.buckets[key] = [(t, self.seq, kind, page, arg)]
        else:
            bucket.append((t, self.seq, kind, page, arg))

    def due(self, step: int, t: float) -> list | tuple[()]:
        """Entries with time <= t, in time order, before discovery ``step`` at time t."""
        self.cursor = step
        buckets = self.buckets
        out = buckets.pop(step - 1, None)  # all of it is before this step's time
        current = buckets.get(step)
        if current is not None:
            now = [e for e in current if e[0] <= t]
            if now:
                rest = [e for e in current if e[0] > t]
                if rest:
                    buckets[step] = rest
                else:
                    del buckets[step]
                out = now if out is None else out + now
        if out is None:
            return ()
        if len(out) > 1:
            out.sort()
        return out

    def rest(self) -> Iterator[tuple]:
        """Everything still pending, in time order."""
        for key in sorted(self.buckets):
            yield from sorted(self.buckets.pop(key))


def _crawl(
    order: list[int], sites: list[Site], cfg: GenConfig, rng: Random, t0: float, t1: float
) -> Iterator[tuple[FetchEvent, str, str]]:
    """Discover pages in ``order`` over [t0, t0 + 70% of the span]; their aliases, traps and
    errors are fetched at later random times. Only pending fetches are held in memory."""
    span = t1 - t0
    step = span * DISCOVERY_SHARE / max(1, len(order))
    mean_delay = span / 10
    per_page = 1 + cfg.dup_rate / (1 - ALIAS_CONTINUE)
    lam_error = ERROR_RATE * per_page / (1 - ERROR_RATE)
    lam_trap = cfg.noise * (per_page + lam_error) / (1 - cfg.noise) if cfg.noise < 1 else 0.0
    trap_whole, trap_frac = int(lam_trap), lam_trap - int(lam_trap)
    error_whole, error_frac = int(lam_error), lam_error - int(lam_error)
    dup_rate = cfg.dup_rate
    pending = _Pending(t0, step)
    add = pending.add
    r = rng.random
    last = t0  # emitted times never decrease, even by a float rounding

    def later(t: float) -> float:
        """A later fetch time: exponential delay, uniform over what is left if it overshoots."""
        d = MIN_DELAY - log(1.0 - r()) * mean_delay
        return t + d if t + d <= t1 else t + r() * (t1 - t)

    def emit(entry) -> tuple[FetchEvent, str, str]:
        nonlocal last
        t, _, kind, page, arg = entry
        t = round(t, 3)
        if t < last:
            t = last
        last = t
        if kind == _ALIAS:
            return _alias(t, page, rng)
        if kind == _TRAP:
            return _trap(t, page, arg, rng)
        return _error(t, page, arg, rng)

    for i, s in enumerate(order):
        t = t0 + (i + r()) * step
        for entry in pending.due(i, t):
            yield emit(entry)
        site = sites[s]
        page = Page(site, site.next_n, rng)
        site.next_n += 1
        if t >= site.drift_ts:
            _redesign(page, t, rng)
        rounded = round(t, 3)
        if rounded > last:
            last = rounded
        yield _page_event(last, page.main, page, rng), page.truth, "main"
        if r() < dup_rate and site.families:
            n = 1
            while n < 6 and r() < ALIAS_CONTINUE:
                n += 1
            while n:
                n -= 1
                add(later(t), _ALIAS, page, None)
        n = trap_whole + (r() < trap_frac)
        while n:
            n -= 1
            add(later(t), _TRAP, page, _pick(rng, TRAP_KINDS))
        n = error_whole + (r() < error_frac)
        while n:
            n -= 1
            add(later(t), _ERROR, page, _pick(rng, ERROR_KINDS))
    for entry in pending.rest():
        yield emit(entry)


def generate_labeled(cfg: GenConfig) -> Iterator[tuple[FetchEvent, str, str]]:
    """Like ``generate`` with a third item saying how the event was made: ``main``,
    ``alias:<family>[+<family>]``, ``trap:<kind>`` or ``error:<status>``."""
    sites = _make_sites(cfg)
    rng = Random(f"dustonline.generate:{cfg.seed}:stream")
    t0, t1 = cfg.start_ts, cfg.start_ts + cfg.duration
    if cfg.fetch_order == "crawl":
        order = [s.index for s in sites for _ in range(s.n_pages)]
        rng.shuffle(order)
        yield from _crawl(order, sites, cfg, rng, t0, t1)
    elif cfg.fetch_order == "site":
        for s, (start, end) in zip(sites, _spans(cfg, sites)):
            yield from _crawl([s.index] * s.n_pages, sites, cfg, rng, start, end)
    else:
        raise ValueError(f"fetch_order must be 'crawl' or 'site', not {cfg.fetch_order!r}")


def generate(cfg: GenConfig) -> Iterator[tuple[FetchEvent, str]]:
    """Yield ``(event, truth)`` in non-decreasing event time; deterministic for ``cfg``."""
    return map(_EVENT_AND_TRUTH, generate_labeled(cfg))


_EVENT_AND_TRUTH = operator.itemgetter(0, 1)


def split_by_page(pairs: list[tuple[FetchEvent, str]], train_share: float):
    """Split ``(event, truth)`` pairs by page: the events of the first ``train_share`` of
    pages (by first appearance), and the pairs of the others, pages a learner on the
    first part never saw."""
    order = list(dict.fromkeys(truth for _, truth in pairs))
    train = set(order[: int(len(order) * train_share)])
    return [ev for ev, t in pairs if t in train], [(ev, t) for ev, t in pairs if t not in train]


# --------------------------------------------------------------------------- files


def _open_write(path):
    p = str(path)
    return gzip.open(p, "wb", compresslevel=1) if p.endswith(".gz") else open(p, "wb")


class LabeledConfig(Protocol):
    """A workload config that makes its own labeled stream (longtail.LongtailConfig)."""

    def labeled(self) -> Iterator[tuple[FetchEvent, str, str]]: ...


def write_stream(cfg: GenConfig | LabeledConfig, events_path, truth_path) -> int:
    """Write events (JSON lines) and ground truth (``{"url", "truth", "kind"}`` lines, kind as
    in ``generate_labeled``: what made the URL, for per-family figures) to two files;
    line i of the truth file belongs to line i of the event file. ``.gz`` paths are
    gzip-compressed. Returns the number of events. Other workloads' configs (longtail.py's)
    bring their own labeled stream as a ``labeled()`` method, so one writer serves all."""
    encode = msgspec.json.Encoder().encode
    pairs = generate_labeled(cfg) if isinstance(cfg, GenConfig) else cfg.labeled()
    n = 0
    with _open_write(events_path) as ev, _open_write(truth_path) as tr:
        ev_buf: list[bytes] = []
        tr_buf: list[bytes] = []
        for event, truth, kind in pairs:
            ev_buf.append(encode(event.to_json()))
            tr_buf.append(encode({"url": event.url, "truth": truth, "kind": kind}))
            if len(ev_buf) >= 8192:
                ev.write(b"\n".join(ev_buf) + b"\n")
                tr.write(b"\n".join(tr_buf) + b"\n")
                n += len(ev_buf)
                ev_buf.clear()
                tr_buf.clear()
        if ev_buf:
            ev.write(b"\n".join(ev_buf) + b"\n")
            tr.write(b"\n".join(tr_buf) + b"\n")
            n += len(ev_buf)
    return n


def write_layout(cfg: GenConfig, path) -> None:
    """Write the generator's ground truth about sites as one JSON document: the config,
    ``site_layout`` and ``drift_info``. Never part of the event file: a learner must not
    see it."""
    doc = {"config": asdict(cfg), "sites": site_layout(cfg), "drift": drift_info(cfg)}
    with _open_write(path) as fh:
        fh.write(json.dumps(doc, indent=1).encode() + b"\n")


def _families_arg(text: str) -> tuple[str, ...]:
    try:
        return cast("tuple[str, ...]", parse_families(text))  # a string never gives None
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Write a synthetic DUST fetch stream and its ground truth.")
    ap.add_argument("events")
    ap.add_argument("truth")
    for f, default in GenConfig.__dataclass_fields__.items():
        val = default.default
        kind = _families_arg if f == "families" else type(val)
        ap.add_argument("--" + f.replace("_", "-"), type=kind, default=val)
    args = ap.parse_args(argv)
    cfg = GenConfig(**{f: getattr(args, f) for f in GenConfig.__dataclass_fields__})
    n = write_stream(cfg, args.events, args.truth)
    print(f"{n} events -> {args.events}; truth -> {args.truth}")


if __name__ == "__main__":
    main()
