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

Everything random comes from ``random.Random`` instances seeded from ``cfg.seed``:
the same config gives the same stream on every run and platform.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import heapq
import operator
from dataclasses import dataclass, field
from random import Random
from typing import Callable, Iterator

import msgspec

from .events import EMPTY_DIGEST, FetchEvent

__all__ = ["GenConfig", "generate", "generate_labeled", "site_layout", "write_stream", "FAMILIES"]


@dataclass
class GenConfig:
    seed: int = 0
    sites: int = 50
    pages: int = 20000           # distinct page contents over all sites (traps add more)
    dup_rate: float = 0.35       # probability that a page is also fetched under alias URLs
    noise: float = 0.02          # share of trap events (pagination, sort, language, soft-404, logo)
    start_ts: float = 1_700_000_000.0
    duration: float = 14 * 86400.0
    fetch_order: str = "crawl"   # "crawl": sites interleaved; "site": one site after another


# --------------------------------------------------------------------------- vocabulary

TLDS = ("com", "org", "net", "com.br", "co.uk", "de", "gov")
_ONSETS = ("b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr", "gl")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
SECTIONS = ("news", "sports", "politics", "business", "tech", "science", "health", "travel",
            "culture", "opinion", "world", "local")
CATS = ("garden", "kitchen", "toys", "books", "audio", "tools", "shoes", "office", "bikes")
DOC_SECTIONS = ("Getting-Started", "Reference", "Tutorials", "Api", "Howto", "Admin")
WORDS = ("river", "budget", "vote", "storm", "market", "city", "school", "green", "energy",
         "music", "film", "match", "final", "health", "report", "plan", "new", "old", "big",
         "small", "fast", "local", "world", "price", "record", "winter", "summer", "bridge",
         "council", "festival", "season", "review", "guide", "study", "trial", "launch")
UTM_SOURCES = ("google", "facebook", "twitter", "newsletter", "bing", "reddit", "linkedin", "partner")
UTM_MEDIUMS = ("cpc", "email", "social", "referral", "banner", "organic")
SORT_TRAPS = (("sort", "price"), ("sort", "date"), ("sort", "name"), ("filter", "new"), ("filter", "sale"))
LANGS = ("fr", "de", "es", "pt")

ALIAS_CONTINUE = 0.45        # P(one more alias) after each alias: mean ~1.8 aliases per dup page
COMPOSE_RATE = 0.15          # share of alias fetches that combine two families
ERROR_RATE = 0.01            # share of non-2xx events
CANONICAL_RATE = 0.005       # share of 2xx page events carrying rel=canonical
TRAP_KINDS = ("pagination", "sort", "lang", "soft404", "image")
TRAP_WEIGHTS = (0.3, 0.2, 0.2, 0.2, 0.1)
ERROR_KINDS = (404, 500, 301)
DISCOVERY_SHARE = 0.7        # pages are discovered in the first 70% of the time span
MIN_DELAY = 60.0             # an alias is fetched at least a minute after its page


# --------------------------------------------------------------------------- content identity

# Byte -> base32 letter (byte mod 32). A 32-byte hash translated this way is a valid
# base32 text of a 160-bit value, made in C: base64.b32encode is slow pure Python.
_B32_OF_BYTE = bytes(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[i % 32] for i in range(256))


def _digest_of(key: str) -> tuple[str, bytes]:
    """``sha1:``-style digest (32 base32 letters) of a content key, plus the raw hash bytes."""
    d = hashlib.sha256(key.encode()).digest()
    return "sha1:" + d.translate(_B32_OF_BYTE).decode("ascii"), d


def _content(truth: str) -> tuple[str, int, int]:
    """(digest, simhash, length) of a content id: stable across runs and platforms, no hash()."""
    digest, d = _digest_of(truth)
    simhash = int.from_bytes(d[8:16], "big")
    length = 2000 + int.from_bytes(d[-3:], "big") % 60000
    return digest, simhash, length


def _near(truth: str, simhash: int) -> tuple[str, int]:
    """Digest and simhash of the print version: other bytes, 1-2 simhash bits flipped."""
    digest, d = _digest_of(truth + "#print")
    flipped = simhash ^ (1 << (d[0] % 64))
    if d[1] & 1:
        second = d[2] % 64
        if second != d[0] % 64:
            flipped ^= 1 << second
    return digest, flipped


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
    leaf: bool = False       # path without extension or trailing slash
    dir: bool = False        # path ends with '/'
    caps_ok: bool = False    # first path segment may be capitalized (case-insensitive server)


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
    host: str                 # www.<name>.<tld>: the host of main URLs
    bare: str                 # <name>.<tld>
    scheme: str
    style: Style
    caps: bool                # capitalized paths, served case-insensitively
    n_pages: int
    id_base: int
    id_step: int
    session: str              # "sid" | "php" | "jsession"
    tracking: str             # "utm" | "ref"
    index_file: str
    mirror: str
    print_style: str          # "query" | "path"
    families: tuple = ()
    next_n: int = 0
    next_error: int = 0
    shared: dict = field(default_factory=dict)  # content of soft-404 / logo / error bodies

    def shared_content(self, key: str) -> tuple[str, str, int, int]:
        """(truth, digest, simhash, length) of a body the whole site shares."""
        got = self.shared.get(key)
        if got is None:
            truth = f"{key}:{self.host}"
            got = self.shared[key] = (truth, *_content(truth))
        return got


class Page:
    __slots__ = ("site", "id", "section", "slug", "cat", "path", "query", "main", "truth",
                 "digest", "simhash", "length", "_near")

    def __init__(self, site: Site, pid: int, section: str, slug: str, cat: str):
        self.site = site
        self.id = pid
        self.section = section
        self.slug = slug
        self.cat = cat
        self.path, self.query = _main_parts(site, self)
        self.main = _url_text(site.scheme, site.host, self.path, self.query)
        self.truth = f"{site.bare}:{pid}"
        self.digest, self.simhash, self.length = _content(self.truth)
        self._near = None

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
        return _url_text(self.scheme, self.host, self.path + self.matrix, self.query)


def _url_text(scheme: str, host: str, path: str, query) -> str:
    if query:
        return f"{scheme}://{host}{path}?" + "&".join([f"{k}={v}" for k, v in query])
    return f"{scheme}://{host}{path}"


def _main_parts(site: Site, page: Page, slug: str | None = None) -> tuple[str, tuple]:
    """Path and query of a page's main URL in the site's style (``slug`` overrides)."""
    slug = page.slug if slug is None else slug
    sec = page.section
    caps = site.caps
    name = site.style.name
    pid = page.id
    if name == "news":
        return f"/{'News' if caps else 'news'}/{pid}", ()
    if name == "php":
        return "/article.php", (("id", str(pid)),)
    if name == "slug":
        return f"/{sec.capitalize() if caps else sec}/{slug}-{pid}.html", ()
    if name == "products":
        return f"/{'Products' if caps else 'products'}/{page.cat}/{pid}", ()
    if name == "story":
        return "/story", (("id", str(pid)), ("page", "1"))
    if name == "catalog":
        return "/catalog.asp", (("cat", page.cat), ("item", str(pid)))
    if name == "dir":
        return f"/{sec.capitalize() if caps else sec}/{slug}-{pid}/", ()
    if name == "p":
        return f"/p/{pid}/{slug}", ()
    if name == "docs":
        title = "-".join(w.capitalize() for w in slug.split("-"))
        return f"/docs/{sec}/{title}-{pid}", ()
    raise AssertionError(name)


def _slug(rng: Random, words: int = 3) -> str:
    r = rng.random
    n = len(WORDS)
    return "-".join([WORDS[int(r() * n)] for _ in range(words)])


def _new_page(site: Site, rng: Random, n: int | None = None) -> Page:
    if n is None:
        n = site.next_n
        site.next_n += 1
    r = rng.random
    sections = DOC_SECTIONS if site.style.name == "docs" else SECTIONS
    section = sections[int(r() * len(sections))]
    cat = CATS[int(r() * len(CATS))]
    return Page(site, site.id_base + n * site.id_step, section, _slug(rng), cat)


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


@dataclass(frozen=True)
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
)


# --------------------------------------------------------------------------- site layout

def _split_pages(total: int, n_sites: int, rng: Random) -> list[int]:
    """Heavy-tailed (Zipf, exponent 1.1, shuffled ranks) page counts, each >= ~20, summing to total."""
    floor = min(20, total // n_sites)
    ranks = list(range(1, n_sites + 1))
    rng.shuffle(ranks)
    weights = [r ** -1.1 * (0.75 + 0.5 * rng.random()) for r in ranks]
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


def _make_site(seed: int, index: int, n_pages: int, taken: set[str]) -> Site:
    rng = Random(f"dustonline.generate:{seed}:site:{index}")
    name = _site_name(rng, taken)
    tld = rng.choice(TLDS)
    style = rng.choice(STYLES)
    site = Site(
        index=index, name=name, host=f"www.{name}.{tld}", bare=f"{name}.{tld}",
        scheme=rng.choice(("http", "https")), style=style,
        caps=style.name == "docs" or (style.caps_ok and rng.random() < 0.25),
        n_pages=n_pages, id_base=rng.randint(1, 50000), id_step=rng.randint(1, 9),
        session=rng.choice(("sid", "php", "jsession")), tracking=rng.choice(("utm", "ref")),
        index_file=rng.choice(("index.html", "index.php", "default.aspx")),
        mirror="/v1" if style.name == "docs" else rng.choice(("/mirror1", "/mirror2", "/v1", "/old")),
        print_style=rng.choice(("query", "path")),
    )
    applicable = [f for f in FAMILIES if f.applies(site)]
    k = min(rng.choice((1, 2, 2, 3)), len(applicable))
    site.families = tuple(sorted(rng.sample(applicable, k), key=lambda f: f.number))
    return site


def _make_sites(cfg: GenConfig) -> list[Site]:
    if cfg.sites < 1 or cfg.pages < cfg.sites:
        raise ValueError("need sites >= 1 and pages >= sites")
    counts = _split_pages(cfg.pages, cfg.sites, Random(f"dustonline.generate:{cfg.seed}:layout"))
    taken: set[str] = set()
    sites = [_make_site(cfg.seed, i, n, taken) for i, n in enumerate(counts)]
    _cover_all_families(sites, Random(f"dustonline.generate:{cfg.seed}:cover"))
    return sites


def _cover_all_families(sites: list[Site], rng: Random) -> None:
    """Give every family at least one site (when some site's style allows it)."""
    for fam in FAMILIES:
        if any(fam in s.families for s in sites):
            continue
        candidates = [s for s in sites if fam.applies(s)]
        if not candidates:
            continue
        roomy = [s for s in candidates if len(s.families) < 3] or candidates
        site = rng.choice(roomy)
        site.families = tuple(sorted(site.families + (fam,), key=lambda f: f.number))


def site_layout(cfg: GenConfig) -> list[dict]:
    """What each site looks like (host, style, families): for reports and debugging."""
    return [
        {"host": s.host, "pages": s.n_pages, "style": s.style.example, "caps": s.caps,
         "families": [f.name for f in s.families]}
        for s in _make_sites(cfg)
    ]


# --------------------------------------------------------------------------- event builders

def _page_event(t: float, url: str, page: Page, rng: Random, near: bool = False) -> FetchEvent:
    canonical = page.main if rng.random() < CANONICAL_RATE else None
    if near:
        digest, simhash = page.near()
        return FetchEvent(url, t, 200, digest, simhash, canonical, page.length * 3 // 5)
    return FetchEvent(url, t, 200, page.digest, page.simhash, canonical, page.length)


def _alias(t: float, page: Page, rng: Random) -> tuple[FetchEvent, str, str]:
    site = page.site
    fams = site.families
    chosen = [_pick(rng, fams)]
    if len(fams) > 1 and rng.random() < COMPOSE_RATE:
        others = [f for f in fams if f.stage != chosen[0].stage]
        if others:
            chosen.append(_pick(rng, others))
            chosen.sort(key=lambda f: f.stage)
    u = _Url(site.scheme, site.host, page.path, list(page.query))
    for fam in chosen:
        fam.apply(u, site, page, rng)
    near = any(f.near for f in chosen)
    label = "alias:" + "+".join([f.name for f in chosen])
    return _page_event(t, u.text(), page, rng, near), page.truth, label


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
    path = _pick(rng, (f"/{page.section.lower()}/img/logo.png", f"/static/{rng.randint(1, 400)}/logo.png",
                       "/images/logo.png", f"/{_pick(rng, WORDS)}/assets/logo.png"))
    return _Url(site.scheme, site.host, path, []), site.shared_content("logo")[0]


TRAPS = {"pagination": trap_pagination, "sort": trap_sort, "lang": trap_lang,
         "soft404": trap_soft404, "image": trap_image}


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
        gone = _new_page(site, rng, n=site.n_pages + 1 + k)
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


def _crawl(order: list[int], sites: list[Site], cfg: GenConfig, rng: Random,
           t0: float, t1: float) -> Iterator[tuple[FetchEvent, str, str]]:
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
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    r = rng.random
    seq = 0

    def later(t: float) -> float:
        d = MIN_DELAY + rng.expovariate(1 / mean_delay)
        return t + d if t + d <= t1 else t + r() * (t1 - t)

    def emit(entry) -> tuple[FetchEvent, str, str]:
        t, _, kind, page, arg = entry
        t = round(t, 3)
        if kind == _ALIAS:
            return _alias(t, page, rng)
        if kind == _TRAP:
            return _trap(t, page, arg, rng)
        return _error(t, page, arg, rng)

    for i, s in enumerate(order):
        t = t0 + (i + r()) * step
        while heap and heap[0][0] <= t:
            yield emit(pop(heap))
        page = _new_page(sites[s], rng)
        yield _page_event(round(t, 3), page.main, page, rng), page.truth, "main"
        if r() < dup_rate:
            n = 1
            while n < 6 and r() < ALIAS_CONTINUE:
                n += 1
            for _ in range(n):
                seq += 1
                push(heap, (later(t), seq, _ALIAS, page, None))
        for _ in range(trap_whole + (r() < trap_frac)):
            seq += 1
            kind = rng.choices(TRAP_KINDS, TRAP_WEIGHTS)[0]
            push(heap, (later(t), seq, _TRAP, page, kind))
        for _ in range(error_whole + (r() < error_frac)):
            seq += 1
            push(heap, (later(t), seq, _ERROR, page, _pick(rng, ERROR_KINDS)))
    while heap:
        yield emit(pop(heap))


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
        start = t0
        for s in sites:
            end = start + cfg.duration * s.n_pages / cfg.pages
            yield from _crawl([s.index] * s.n_pages, sites, cfg, rng, start, end)
            start = end
    else:
        raise ValueError(f"fetch_order must be 'crawl' or 'site', not {cfg.fetch_order!r}")


def generate(cfg: GenConfig) -> Iterator[tuple[FetchEvent, str]]:
    """Yield ``(event, truth)`` in non-decreasing event time; deterministic for ``cfg``."""
    return map(_EVENT_AND_TRUTH, generate_labeled(cfg))


_EVENT_AND_TRUTH = operator.itemgetter(0, 1)


# --------------------------------------------------------------------------- files

def _open_write(path):
    p = str(path)
    return gzip.open(p, "wb", compresslevel=4) if p.endswith(".gz") else open(p, "wb")


def write_stream(cfg: GenConfig, events_path, truth_path) -> int:
    """Write events (JSON lines) and ground truth (``{"url", "truth"}`` lines) to two files;
    line i of the truth file belongs to line i of the event file. ``.gz`` paths are
    gzip-compressed. Returns the number of events."""
    encode = msgspec.json.Encoder().encode
    n = 0
    with _open_write(events_path) as ev, _open_write(truth_path) as tr:
        ev_buf: list[bytes] = []
        tr_buf: list[bytes] = []
        for event, truth in generate(cfg):
            ev_buf.append(encode(event.to_json()))
            tr_buf.append(encode({"url": event.url, "truth": truth}))
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Write a synthetic DUST fetch stream and its ground truth.")
    ap.add_argument("events")
    ap.add_argument("truth")
    for f, default in GenConfig.__dataclass_fields__.items():
        val = default.default
        ap.add_argument("--" + f.replace("_", "-"), type=type(val), default=val)
    args = ap.parse_args(argv)
    cfg = GenConfig(**{f: getattr(args, f) for f in GenConfig.__dataclass_fields__})
    n = write_stream(cfg, args.events, args.truth)
    print(f"{n} events -> {args.events}; truth -> {args.truth}")


if __name__ == "__main__":
    main()
