"""Fetch events: the one input type every reader produces and the learner consumes.

Validation lives here, not in the readers, so every format (JSON lines, crawl.log,
CDX, a Kafka message) rejects bad input for the same reasons, spelled the same way.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from typing import Any, overload
from urllib.parse import urljoin

import msgspec

#: SHA-1 of the empty payload, base32: such a "duplicate" says nothing about the URLs.
EMPTY_DIGEST = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"

DEFAULT_MAX_URL_LENGTH = 2048


class FetchEvent(msgspec.Struct, frozen=True, omit_defaults=True):
    """One fetched page. ``digest`` is exact content identity, ``simhash`` a 64-bit sketch."""

    url: str
    ts: float
    status: int = 200
    digest: str | None = None
    simhash: int | None = None
    canonical: str | None = None
    length: int | None = None
    #: absolute outlinks of the page, in document order, or None when the crawler sent
    #: none; only the replicated-collections learner (seeds/replicas.py) reads them
    links: tuple[str, ...] | None = None
    #: where a 3xx response points (its Location, resolved against ``url``); kept on 3xx only
    redirect: str | None = None
    #: the URL whose redirect led to this fetch: Heritrix logs the pair on the target's line
    #: (hop path ending in R, via), not on the 3xx's, which has no Location
    redirected_from: str | None = None

    @property
    def teaches(self) -> bool:
        """Only successful fetches with real content may put URLs in one cluster (and
        never a URL that readers reject, should an event be built by hand: NUL, which
        learner state uses as a separator, or a lone surrogate, which has no UTF-8 form
        to store)."""
        return (
            200 <= self.status < 300
            and self.digest != EMPTY_DIGEST
            and (self.digest is not None or self.simhash is not None or self.canonical is not None)
            and _storable(self.url)
            and (self.canonical is None or _storable(self.canonical))
        )

    @property
    def redirect_pairs(self) -> tuple[tuple[str, str], ...]:
        """The (source, target) redirects this event reports: a redirect is a duplicate
        pair that needs no content comparison (http -> https, www, trailing slash)."""
        pairs: tuple[tuple[str, str], ...] = ()
        if self.redirected_from is not None and _storable(self.url + self.redirected_from):
            pairs = ((self.redirected_from, self.url),)
        if self.redirect is not None and 300 <= self.status < 400 and _storable(self.url + self.redirect):
            pairs += ((self.url, self.redirect),)
        return pairs

    def to_json(self) -> dict[str, Any]:
        d = msgspec.to_builtins(self)
        if self.simhash is not None:
            d["simhash"] = f"{self.simhash:016x}"
        return d


class BadEvent(ValueError):
    """An input record that cannot become a FetchEvent. ``reason`` is a short stable code."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def parse_ts(value: Any) -> float:
    """Epoch seconds (int/float/numeric string), ISO-8601, or a 14-digit archive timestamp."""
    if isinstance(value, bool):
        raise BadEvent("bad-timestamp", repr(value))
    if isinstance(value, (int, float)):
        ts = float(value)
    elif isinstance(value, str):
        s = value.strip()
        if len(s) == 14 and s.isdigit():
            try:
                d14 = _dt.datetime.strptime(s, "%Y%m%d%H%M%S")
            except ValueError:
                raise BadEvent("bad-timestamp", s) from None
            ts = d14.replace(tzinfo=_dt.timezone.utc).timestamp()
        else:
            try:
                ts = float(s)
            except ValueError:
                try:
                    d = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
                except ValueError:
                    raise BadEvent("bad-timestamp", s[:80]) from None
                if d.tzinfo is None:
                    d = d.replace(tzinfo=_dt.timezone.utc)
                ts = d.timestamp()
    else:
        raise BadEvent("bad-timestamp", repr(value)[:80])
    if not math.isfinite(ts) or ts < 0 or ts > 1e11:
        raise BadEvent("bad-timestamp", repr(value)[:80])
    return ts


_BAD_CHAR = re.compile("[ \t\r\n\x00]").search  # one scan, not one per character
_SURROGATE = re.compile("[\ud800-\udfff]").search  # a code point with no UTF-8 form (a lone surrogate)


def _storable(url: str) -> bool:
    """Text learner state can hold: no NUL (its separator), no lone surrogate."""
    return "\x00" not in url and (url.isascii() or _SURROGATE(url) is None)


def check_url(url: Any, max_length: int = DEFAULT_MAX_URL_LENGTH) -> str:
    if not isinstance(url, str) or not url:
        raise BadEvent("missing-url")
    if len(url) > max_length:
        raise BadEvent("url-too-long", f"{len(url)} > {max_length}")
    head = url[:8].lower()
    if not head.startswith(("http://", "https://")):
        raise BadEvent("not-http", url[:80])
    rest = url[url.index("://") + 3 :]
    if not rest or rest[0] in "/?#":
        raise BadEvent("bad-url", "no host: " + url[:80])
    if _BAD_CHAR(url):
        raise BadEvent("bad-url", "whitespace or NUL in URL: " + url[:80])
    if url.isascii():
        return url
    if _SURROGATE(url):
        raise BadEvent("bad-url", "a lone surrogate (no UTF-8 form) in URL: " + ascii(url[:80]))
    return _a_label_host(url)


def _a_label_host(url: str) -> str:
    """An internationalized host written as crawlers write it (its A-labels, as light
    normalization and every client do), so the learner learns one spelling of a host
    whichever the crawler logged; the rest of the URL stays as given."""
    from ..rules.params import to_host
    from ..rules.urls import a_label, split_authority

    _, auth, _ = split_authority(url)
    host = auth[auth.rfind("@") + 1 :]
    if not host.startswith("["):
        host = host.partition(":")[0]
    if host.isascii():
        return url
    label = a_label(host.lower().rstrip("."))
    return to_host(url, label) if label.isascii() else url


def normalize_digest(value: Any) -> str | None:
    """Bare base32 SHA-1 (CDX style) and ``sha1:`` forms compare equal."""
    if value is None or value == "" or value == "-":
        return None
    if not isinstance(value, str):
        raise BadEvent("bad-field", f"digest {value!r:.60}")
    v = value.strip()
    if ":" not in v and len(v) == 32 and v.isalnum():
        return "sha1:" + v.upper()
    if v.lower().startswith("sha1:"):
        return "sha1:" + v[5:].upper()
    return v


def parse_simhash(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 64:
        return value
    if isinstance(value, str) and 0 < len(value) <= 16:
        try:
            return int(value, 16)
        except ValueError:
            pass
    raise BadEvent("bad-field", f"simhash must be 16 hex chars, got {value!r:.40}")


@overload
def _opt_int(d: dict, key: str, default: int) -> int: ...
@overload
def _opt_int(d: dict, key: str, default: None) -> int | None: ...
def _opt_int(d: dict, key: str, default: int | None) -> int | None:
    v = d.get(key, default)
    if v is None or v == "" or v == "-":
        return default
    if isinstance(v, bool):
        raise BadEvent("bad-field", f"{key} {v!r}")
    if isinstance(v, float) and not v.is_integer():
        raise BadEvent("bad-field", f"{key} {v!r:.40} is not a whole number")
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
        raise BadEvent("bad-field", f"{key} {v!r:.40}") from None


#: what check_url rejects, as substrings of the links joined by (and framed in) \x01
_BAD_IN_LINKS = (" ", "\t", "\n", "\r", "\x00") + tuple(
    "\x01" + scheme + c for scheme in ("http://", "https://") for c in "/?#\x01"
)


def parse_links(value: Any, max_url_length: int = DEFAULT_MAX_URL_LENGTH) -> tuple[str, ...] | None:
    """``links``: None stays None (not sent); a list of strings keeps the links that
    ``check_url`` accepts (http(s) URLs), as it gives them, deduplicated in first-seen order (a relative or
    ``mailto:`` link is dropped, not the event: the fetch itself is fine); anything else is
    ``bad-field``. Links come by the hundred per page, so the common case (every link good)
    is decided by a few substring scans over all of them at once, not a check per link."""
    if value is None:
        return None
    if type(value) is not list or not set(map(type, value)) <= {str}:
        raise BadEvent("bad-field", f"links must be a list of strings, got {value!r:.60}")
    uniq = tuple(dict.fromkeys(value))
    n = len(uniq)
    j = "\x01" + "\x01".join(uniq) + "\x01"
    if (
        j.count("\x01") == n + 1
        and j.count("\x01http://") + j.count("\x01https://") == n
        and not any(b in j for b in _BAD_IN_LINKS)
        and (n == 0 or max(map(len, uniq)) <= max_url_length)
        and j.isascii()
    ):
        return uniq
    kept: dict[str, None] = {}  # as check_url gives them (an IDN host as its A-labels), deduplicated
    for x in uniq:
        try:
            kept.setdefault(check_url(x, max_url_length), None)
        except BadEvent:
            pass
    return tuple(kept)


def parse_redirect(value: Any, url: str, max_url_length: int = DEFAULT_MAX_URL_LENGTH) -> str | None:
    """``redirect`` or ``redirected_from``: resolved against ``url`` (a Location may be
    relative), fragment cut, checked like a URL. A value that is absent, malformed or
    ``url`` itself is None: dropped, not rejected, because the fetch itself is fine and a
    redirect is only extra evidence."""
    if not isinstance(value, str) or value in ("", "-"):
        return None
    v = value.strip()
    if not v.lower().startswith(("http://", "https://")):
        try:
            v = urljoin(url, v)
        except ValueError:  # e.g. a broken IPv6 literal
            return None
    v = v.partition("#")[0]
    try:
        v = check_url(v, max_url_length)
    except BadEvent:
        return None
    return None if v == url else v


def event_from_dict(d: Any, max_url_length: int = DEFAULT_MAX_URL_LENGTH) -> FetchEvent:
    """Validate one decoded JSON object (docs/DESIGN.md §2) into a FetchEvent."""
    if not isinstance(d, dict):
        raise BadEvent("bad-json", f"expected an object, got {type(d).__name__}")
    url = check_url(d.get("url"), max_url_length)
    if "ts" not in d or d["ts"] is None:
        raise BadEvent("bad-timestamp", "missing ts")
    ts = parse_ts(d["ts"])
    status = _opt_int(d, "status", 200)
    if not -9999 <= status <= 999:  # Heritrix uses negative codes for fetch failures
        raise BadEvent("bad-field", f"status {status} out of range")
    canonical = d.get("canonical") or None
    if canonical is not None:
        try:
            canonical = check_url(canonical, max_url_length)
        except BadEvent:
            canonical = None  # a broken hint is dropped, the fetch itself is fine
    return FetchEvent(
        url=url,
        ts=ts,
        status=status,
        digest=normalize_digest(d.get("digest")),
        simhash=parse_simhash(d.get("simhash")),
        canonical=canonical,
        length=_opt_int(d, "length", None),
        links=parse_links(d.get("links"), max_url_length),
        # "location", the header's name, is accepted for "redirect"
        redirect=parse_redirect(d.get("redirect") or d.get("location"), url, max_url_length)
        if 300 <= (status or 0) < 400
        else None,
        redirected_from=parse_redirect(d.get("redirected_from"), url, max_url_length),
    )
