"""URL helpers on the hot path: host, site and the light normalization used when no rule applies.

Written with plain string operations rather than urllib.parse: canonicalize runs once per
URL a crawler discovers, and urlsplit alone costs more than our whole rule application.
"""

from __future__ import annotations

import functools
import re
import stringprep
from collections.abc import Callable

# CPython's str.lower, called as a function. In a module compiled by mypyc (setup.py),
# ``s.lower()`` runs mypyc's own lowering, which before Python 3.13 lacks Unicode's
# final-sigma rule ("ΑΣ" is "ας" in CPython, "ασ" compiled): keys would then differ
# between the two builds, and from the Java client's. tests/test_compiled.py keeps
# ``.lower()`` out of the compiled modules.
lower: Callable[[str], str] = str.lower

_DEFAULT_PORTS = {"http": "80", "https": "443"}
_PCT = re.compile(r"%([0-9A-Fa-f]{2})?")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def split_authority(url: str) -> tuple[str, str, str]:
    """(scheme, authority, rest) without validation; rest starts with / ? # or is empty."""
    i = url.find("://")
    if i < 0:
        return "", "", url
    start = i + 3
    end = len(url)
    for ch in "/?#":
        j = url.find(ch, start)
        if 0 <= j < end:
            end = j
    return url[:i], url[start:end], url[end:]


def host_of(url: str) -> str:
    """Lower-case host (an IDN host as A-labels) without userinfo or port: the key rules
    are indexed by, the same host whichever spelling a crawler used."""
    _, auth, _ = split_authority(url)
    at = auth.rfind("@")
    if at >= 0:
        auth = auth[at + 1 :]
    if auth.startswith("["):
        end = auth.find("]")
        return lower(auth[: end + 1]) if end > 0 else lower(auth)
    colon = auth.find(":")
    if colon >= 0:
        auth = auth[:colon]
    host = lower(auth).rstrip(".")
    return host if host.isascii() else _idna(host)  # a_label, without a call per URL


#: what an A-label host may hold: Heritrix's ACCEPTABLE_ASCII_DOMAIN (letters, digits, '-',
#: '_', '.'), so no IDNA output can bring ':', '/', '@' or a space into an authority
_HOST_NAME = re.compile(r"[a-z0-9_.-]+").fullmatch


def a_label(host: str) -> str:
    """An internationalized host name as crawlers write it: its A-labels (punycode,
    ``bücher.example`` -> ``xn--bcher-kva.example``), so that both spellings are one host.
    ASCII hosts are left alone; ``host`` is lower-cased already."""
    return host if host.isascii() else _idna(host)


@functools.lru_cache(maxsize=1 << 12)
def _idna(host: str) -> str:
    """IDNA 2003 ToASCII (RFC 3490; Python's ``idna`` codec, which w3lib and surt use) with
    AllowUnassigned false, which is what java.net.IDN.toASCII(host, 0) computes: the codec
    alone lets through code points Unicode 3.2 did not assign, where Java applies today's
    bidi classes and so refuses hosts Python encodes. A host that does not encode (an
    unassigned code point, a prohibited one, an empty or long label, a non-ASCII label
    starting "xn--"), or whose result is empty or not a plain host name, stays as given:
    light normalization never raises, and never invents a host."""
    if any(map(stringprep.in_table_a1, host)):
        return host
    try:
        out = host.encode("idna").decode("ascii").rstrip(".")
    except UnicodeError:
        return host
    return out if _HOST_NAME(out) else host


@functools.lru_cache(maxsize=1 << 16)
def site_of_host(host: str) -> str:
    """Registered domain (public suffix + 1) from the public suffix list snapshot bundled
    with tldextract, its private section included: ``alice.github.io`` and
    ``bob.github.io``, or two CloudFront distributions, have different owners, and one's
    duplicates say nothing about the other's URLs. Never touches the network. IPs and
    single labels are their own site."""
    ext = _extractor()(host)
    domain = getattr(ext, "top_domain_under_public_suffix", None)
    if domain is None:  # tldextract < 5.3
        domain = ext.registered_domain
    return domain or host


def site_of(url: str) -> str:
    return site_of_host(host_of(url))


@functools.lru_cache(maxsize=1)
def _extractor():
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def _pct_fix(m: re.Match) -> str:
    hx = m.group(1)
    if hx is None:
        return "%25"  # a bare % is encoded, so that decoding never forms a new escape
    ch = chr(int(hx, 16))
    return ch if ch in _UNRESERVED else "%" + hx.upper()


def _hostport(hostport: str, scheme: str) -> str:
    hostport = lower(hostport)
    if hostport.startswith("["):
        end = hostport.find("]")
        host, rest = (hostport[: end + 1], hostport[end + 1 :]) if end > 0 else (hostport, "")
        port = rest[1:] if rest.startswith(":") else None
        if rest and port is None:
            return hostport
    else:
        host, sep, port = hostport.rpartition(":")
        if not sep:
            host, port = hostport, None
        elif ":" in host or not (port == "" or port.isdigit()):
            return hostport  # not host:port; leave it as it is
        stripped = host.rstrip(".")
        host = a_label(stripped or host)
    if port is None or port == "" or port == _DEFAULT_PORTS.get(scheme):
        return host
    return f"{host}:{port}"


def escapes_normalized(text: str) -> str:
    """Percent-escapes as light normalization writes them (hex upper-cased, unreserved
    characters decoded, a bare ``%`` escaped)."""
    return _PCT.sub(_pct_fix, text) if "%" in text else text


def light_normalize(url: str) -> str:
    """RFC 3986 syntax-based normalization (scheme and host case, IDN hosts as A-labels,
    default port, empty path, percent-encoding case and unreserved characters, fragment
    removed; docs/formats.md, Light normalization). Semantics-free: it never merges two URLs
    a server could tell apart, which is the rules' job. Idempotent."""
    scheme, auth, rest = split_authority(url)
    if not scheme:
        return url
    scheme = lower(scheme)
    at = auth.rfind("@")
    userinfo, hostport = (auth[: at + 1], auth[at + 1 :]) if at >= 0 else ("", auth)
    hostport = _hostport(hostport, scheme)
    h = rest.find("#")
    if h >= 0:
        rest = rest[:h]
    if not rest or rest[0] == "?":
        rest = "/" + rest
    if "%" in rest:
        rest = _PCT.sub(_pct_fix, rest)
    return f"{scheme}://{userinfo}{hostport}{rest}"
