"""Turn input files (JSON lines, Heritrix crawl.log, CDX, CDXJ, WARC) into FetchEvents.

Every format is mapped onto a docs/DESIGN.md §2 event dict and validated by
``events.event_from_dict``, so a bad record is rejected for the same reason whatever
its format. Bad records never stop a run: they come out as ``Rejected`` items, in input
order, for the dead-letter file.
"""

from __future__ import annotations

import datetime as _dt
import functools
import gzip
import ipaddress
import os
import re
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any, cast

import msgspec

from .event import (
    DEFAULT_MAX_URL_LENGTH,
    BadEvent,
    FetchEvent,
    check_url,
    event_from_dict,
    normalize_digest,
    parse_links,
    parse_redirect,
    parse_simhash,
    parse_ts,
)
from .rejected import RAW_MAX, Rejected
from .warc import looks_warc, read_warc

__all__ = ["FORMATS", "RAW_MAX", "Rejected", "detect_format", "parse_message", "read_events"]

FORMATS = ("auto", "jsonl", "crawllog", "cdx", "cdxj", "warc", "accesslog")

_DETECT_LINES = 20  # non-blank record lines looked at by detect_format
_HEAD_MAX = 1000  # never buffer more raw lines than this while detecting
_NOT_RECORDS = (b"metadata://", b"filedesc://")  # Heritrix/ARC header lines

_json = msgspec.json.Decoder()


# ---------------------------------------------------------------- timestamps


@functools.lru_cache(maxsize=4096)
def _hour_start(prefix: str) -> float:
    return parse_ts(prefix + "0000")


def _ts14(s: str) -> float:
    """parse_ts for ``yyyymmddHHMMSS``, with the strptime cached per hour: it is the hot path."""
    try:
        if len(s) == 14 and s.isascii() and s.isdigit():
            mi, se = int(s[10:12]), int(s[12:14])
            if mi < 60 and se < 60:
                return _hour_start(s[:10]) + mi * 60 + se
        return parse_ts(s)
    except BadEvent:  # name the value itself, not the cached hour it failed in
        raise BadEvent("bad-timestamp", s[:80]) from None
    except ValueError:  # strptime on an impossible date
        raise BadEvent("bad-timestamp", s[:80]) from None


def _fetch_begin(s: Any) -> float | None:
    """Heritrix ``yyyymmddHHMMSSmmm+duration``: the fetch time, which the log time is not."""
    if isinstance(s, str) and len(s) >= 17 and s[:17].isascii() and s[:17].isdigit():
        try:
            return _ts14(s[:14]) + int(s[14:17]) / 1000
        except BadEvent:
            return None
    return None


# ---------------------------------------------------------------- per-format parsers
# Each takes one stripped, decoded line and returns an event dict, or a str: the reason
# the line is read but is no fetch (a CDX header: "cdx-header"), or raises BadEvent.


def _decode_json(text: str) -> Any:
    try:
        return _json.decode(text)
    except msgspec.DecodeError as e:
        raise BadEvent("bad-json", str(e)[:200]) from None


def _redirected_from(hop_path: Any, via: Any) -> Any:
    """Heritrix: a hop path ending in R (a redirect hop) makes ``via`` the redirecting URL."""
    return via if isinstance(hop_path, str) and hop_path.endswith("R") else None


def _from_kafka(d: dict) -> dict:
    """Heritrix KafkaCrawlLogFeed message -> §2 event (fetch begin time preferred, as in crawl.log)."""
    ts = _fetch_begin(d.get("start_time_plus_duration"))
    return {
        "url": d.get("url"),
        "ts": d.get("timestamp") if ts is None else ts,
        "status": d.get("status_code"),
        "digest": d.get("content_digest"),
        "length": d.get("size"),
        "redirected_from": _redirected_from(d.get("hop_path"), d.get("via")),
    }


class _Wire(msgspec.Struct):
    """The §2 event as it usually arrives: decoding straight into this skips the dict and
    most of the checks. Anything it does not fit (a string ``ts``, a Kafka feed message,
    bad JSON) takes the general path, which names the reason."""

    url: str
    ts: float
    status: int = 200
    digest: str | None = None
    simhash: str | None = None
    canonical: str | None = None
    length: int | None = None
    links: list[str] | None = None  # not a list of strings: DecodeError, the general path rejects it
    redirect: str | None = None
    location: str | None = None
    redirected_from: str | None = None


@functools.lru_cache(maxsize=8)
def _fast_jsonl(max_url_length: int) -> Callable[[bytes], FetchEvent | None]:
    """A parser for the common case: a FetchEvent, or None to send the line down the
    general path (``event_from_dict``), which accepts exactly the same events
    (tests/test_readers.py checks that the two agree)."""
    decode = msgspec.json.Decoder(_Wire).decode

    def parse(line: bytes) -> FetchEvent | None:
        try:
            w = decode(line)
            ts, status = w.ts, w.status
            if not (0.0 <= ts <= 1e11 and -9999 <= status <= 999):
                return None
            url = check_url(w.url, max_url_length)
            canonical = w.canonical or None
            if canonical is not None:
                try:
                    canonical = check_url(canonical, max_url_length)
                except BadEvent:
                    canonical = None
            digest, links = w.digest, w.links
            redirect = w.redirect or w.location
            return FetchEvent(
                url=url,
                ts=ts,
                status=status,
                digest=normalize_digest(digest) if digest else None,
                simhash=parse_simhash(w.simhash),
                canonical=canonical,
                length=w.length,
                links=None if links is None else parse_links(links, max_url_length),
                redirect=parse_redirect(redirect, url, max_url_length) if redirect and 300 <= status < 400 else None,
                redirected_from=None
                if w.redirected_from is None
                else parse_redirect(w.redirected_from, url, max_url_length),
            )
        except (msgspec.DecodeError, UnicodeDecodeError, BadEvent, RecursionError):
            return None  # the general path names the reason (nesting too deep: bad-field)

    return parse


def _parse_jsonl(text: str) -> Any:
    d = _decode_json(text)
    if d is None:  # "null": a record that says nothing is still a record, rejected and counted
        raise BadEvent("bad-json", "expected an object, got null")
    if type(d) is dict and "ts" not in d and ("status_code" in d or "content_digest" in d or "timestamp" in d):
        return _from_kafka(d)
    return d  # event_from_dict rejects non-objects


def _parse_crawllog(text: str) -> dict:
    f = text.split()
    if len(f) < 10:
        raise BadEvent("bad-record", f"crawl.log line with {len(f)} fields, expected 11+")
    ts = _fetch_begin(f[8])
    return {
        "url": f[3],
        "ts": parse_ts(f[0]) if ts is None else ts,
        "status": f[1],
        "digest": f[9],
        "length": f[2] if f[2].isdigit() else None,
        "redirected_from": _redirected_from(f[4], f[5]),
    }


# CDX legend letters -> our fields; first letter present wins.
_CDX_KEYS = {"url": "aA", "ts": "b", "mime": "m", "status": "s", "digest": "k", "length": "Sn", "redirect": "r"}
_CDX_DEFAULT = {11: "NbamskrMSVg", 10: "NbamskrMVg", 9: "NbamskrVg"}


def _cdx_layout(letters: Iterable[str]) -> dict[str, int | None]:
    pos = {c: i for i, c in enumerate(letters)}
    return {k: next((pos[c] for c in cs if c in pos), None) for k, cs in _CDX_KEYS.items()}


_CDX_DEFAULT_LAYOUTS = {n: _cdx_layout(v) for n, v in _CDX_DEFAULT.items()}
_CDX_HEADERLESS = (
    "without a ' CDX' header line, CDX lines of 8 fields (a e b m n g V k, netarchivesuite), "
    + ", ".join(f"{n} ({' '.join(_CDX_DEFAULT[n])})" for n in sorted(_CDX_DEFAULT))
    + " are read; put a header line naming the fields first"
)


def _unknown_status(mime: Any) -> int:
    """A revisit means the same content as an earlier 200; otherwise '-' is 'unknown' (never teaches)."""
    return 200 if mime == "warc/revisit" else 0


# The ARC-era 8-field CDX that netarchivesuite writes without a header line:
#   URL IP date(14 digits) mime length ARC-file offset digest
# (legend letters a e b m n g V k). There is no HTTP status field.
_ARC8_FIELDS = "URL IP date mime length file offset digest"
_HEX32 = re.compile(r"[0-9a-fA-F]{32}")


def _is_ip_or_dash(s: str) -> bool:
    if s == "-":
        return True
    try:
        ipaddress.ip_address(s)
    except ValueError:
        return False
    return True


def _arc8_digest(value: str) -> str:
    """netarchivesuite writes the record's MD5 in hex: 32 hex digits, which ``normalize_digest``
    would take for a bare base32 SHA-1 (also 32 characters) and label ``sha1:``. Labelled
    ``md5:`` (lower case) instead; anything else is normalized as in the other CDX layouts."""
    return "md5:" + value.lower() if _HEX32.fullmatch(value) else value


def _check_arc8(f: list[str]) -> None:
    """The shape detection relies on (fields 2, 3 and 7); length (5) is checked as every length is."""
    if not _is_ip_or_dash(f[1]):
        raise BadEvent("bad-record", f"8-field CDX line: field 2 {f[1][:60]!r} is not an IP address or '-'")
    if not (len(f[2]) == 14 and f[2].isascii() and f[2].isdigit()):
        raise BadEvent("bad-timestamp", f"8-field CDX line: field 3 {f[2][:60]!r} is not yyyymmddHHMMSS")
    if not (f[6].isascii() and f[6].isdigit()):
        raise BadEvent("bad-record", f"8-field CDX line: field 7 (offset) {f[6][:60]!r} is not a number")


class _CdxParser:
    """Stateful: a ` CDX ...` header line fixes the field layout for the rest of the file.

    Without a header the layout goes by the number of fields: 9, 10 and 11 are the usual
    Wayback layouts (``_CDX_DEFAULT``), 8 is netarchivesuite's ARC-era layout (URL, IP,
    date, mime, length, ARC file, offset, digest; legend ``a e b m n g V k``). Once a
    file's lines have been read as the 8-field layout, a line with another number of
    fields is a ``bad-record`` (a URL with a space in it, a cut line), not a line of some
    other layout; in a file whose lines are 9 to 11 fields long an 8-field line is a
    ``bad-record`` as before.

    The 8-field layout has no HTTP status. It is read as a missing status is in every CDX
    layout: status 0, "unknown" (``_unknown_status``), so these events are read and
    counted but never teach (``FetchEvent.teaches`` needs a 2xx): an ARC CDX line does not
    say whether the archived response was a 200 or an error page.
    """

    def __init__(self) -> None:
        self.layout: dict[str, int | None] | None = None
        self.nfields = 0
        self.arc8 = False  # headerless lines read as the 8-field layout
        self.wayback = False  # headerless lines read as a 9-11 field layout

    def __call__(self, text: str) -> dict | str:
        if text.startswith("CDX "):
            letters = text.split()[1:]
            self.layout, self.nfields = _cdx_layout(letters), len(letters)
            return "cdx-header"
        f = text.split()
        if self.layout is None and (self.arc8 or len(f) == 8 and not self.wayback):
            if len(f) != 8:
                raise BadEvent("bad-record", f"CDX line with {len(f)} fields, expected 8 ({_ARC8_FIELDS})")
            _check_arc8(f)
            self.arc8 = True
            return {
                "url": f[0],
                "ts": _ts14(f[2]),
                "status": _unknown_status(f[3]),  # no status field: 0, unknown, never teaches
                "digest": _arc8_digest(f[7]),
                "length": f[4],
            }
        if self.layout is None:
            lay = _CDX_DEFAULT_LAYOUTS.get(len(f))
            self.wayback = self.wayback or lay is not None
        else:
            lay = self.layout if len(f) == self.nfields else None
        if lay is None and self.wayback:
            raise BadEvent("bad-record", f"CDX line with {len(f)} fields, expected 9 to 11 as the lines before")
        if lay is None and self.layout is None:
            raise BadEvent("bad-record", f"CDX line with {len(f)} fields: {_CDX_HEADERLESS}")
        if lay is None:
            raise BadEvent("bad-record", f"CDX line with {len(f)} fields; the header line names {self.nfields}")
        if lay["url"] is None or lay["ts"] is None:
            raise BadEvent("bad-record", "the CDX header line names no URL (a or A) or no date (b)")
        get = lambda k: None if lay[k] is None else f[cast(int, lay[k])]  # noqa: E731
        mime, status = get("mime"), get("status")
        return {
            "url": f[lay["url"]],
            "ts": _ts14(f[lay["ts"]]),
            "status": _unknown_status(mime) if status in (None, "-") else status,
            "digest": get("digest"),
            "length": get("length"),
            "redirect": get("redirect"),  # '-': none; kept for 3xx lines only
        }


def _parse_cdxj(text: str) -> dict:
    parts = text.split(" ", 2)
    if len(parts) != 3 or not parts[2].startswith("{"):
        raise BadEvent("bad-record", "CDXJ line is not 'surt timestamp {json}'")
    j = _decode_json(parts[2])
    if type(j) is not dict:
        raise BadEvent("bad-json", "CDXJ block is not an object")
    status = j.get("status")
    return {
        "url": j.get("url"),
        "ts": _ts14(parts[1]),
        "status": _unknown_status(j.get("mime")) if status in (None, "", "-") else status,
        "digest": j.get("digest"),
        "length": j.get("length"),
        "redirect": j.get("redirect") or j.get("location"),
    }


# Web-server access logs (Common/Combined Log Format), the URL lists DustBuster learns from:
#   host ident user [10/Oct/2000:13:55:36 -0700] "GET /a?b=1 HTTP/1.0" 200 2326 ...
# optionally led by Apache's vhost_combined "%v:%p" field. A request line with an absolute
# URL is taken as is; a path needs that vhost field (port 443 -> https), otherwise the
# line is rejected as "no-host": the log alone does not say which site it is from. Only GET
# and HEAD requests name a page ("not-get" otherwise). No content: digest None, size as length.
_ACCESS_REST = re.compile(
    r"\[(\d{2})/([A-Za-z]{3})/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})\]\s+"
    r'"((?:[^"\\]|\\.)*)"\s+(\d{3}|-)\s+(\d+|-)'
)
_ACCESS_HEAD = re.compile(rb'(?:\S+ )?\S+ \S+ \S+ \[\d{2}/[A-Za-z]{3}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\] "')
_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}


def _parse_accesslog(text: str) -> dict:
    b = text.find("[")
    lead = text[:b].split() if b > 0 else []
    m = _ACCESS_REST.match(text, b) if len(lead) in (3, 4) else None
    if m is None:
        raise BadEvent("bad-record", "not a Common/Combined Log Format line")
    dd, mon, yyyy, hh, mi, ss, sign, zh, zm, req, status, size = m.groups()
    month = _MONTHS.get(mon.lower())
    if month is None:
        raise BadEvent("bad-timestamp", m.group(0)[:30])
    try:
        ts = _dt.datetime(int(yyyy), month, int(dd), int(hh), int(mi), int(ss), tzinfo=_dt.timezone.utc).timestamp()
    except ValueError:
        raise BadEvent("bad-timestamp", m.group(0)[:30]) from None
    ts -= (1 if sign == "+" else -1) * (int(zh) * 3600 + int(zm) * 60)
    parts = req.split()
    if len(parts) not in (2, 3):
        raise BadEvent("bad-record", f"request line {req[:80]!r}")
    if parts[0].upper() not in ("GET", "HEAD"):
        raise BadEvent("not-get", parts[0][:20])
    target = parts[1]
    if not target.lower().startswith(("http://", "https://")):
        if len(lead) != 4 or not target.startswith("/"):
            raise BadEvent("no-host", target[:80])
        host, _, port = lead[0].partition(":")
        if not host or host == "-":
            raise BadEvent("no-host", target[:80])
        scheme = "https" if port == "443" else "http"
        netloc = host if port in ("", "80", "443") else f"{host}:{port}"
        target = f"{scheme}://{netloc}{target}"
    return {
        "url": target,
        "ts": ts,
        "status": 0 if status == "-" else int(status),
        "length": None if size == "-" else int(size),
    }


_PARSERS: dict[str, Callable[[], Callable[[str], Any]]] = {
    "jsonl": lambda: _parse_jsonl,
    "crawllog": lambda: _parse_crawllog,
    "cdx": _CdxParser,
    "cdxj": lambda: _parse_cdxj,
    "accesslog": lambda: _parse_accesslog,
}


# ---------------------------------------------------------------- detection


def _is_ts14(b: bytes) -> bool:
    return len(b) == 14 and b.isdigit()


def _is_arc8(s: bytes) -> bool:
    """netarchivesuite's headerless 8-field CDX line: URL, IP or '-', 14-digit date, mime,
    length, ARC file, offset, digest."""
    f = s.split()
    if len(f) != 8 or not _is_ts14(f[2]) or not f[4].isdigit() or not f[6].isdigit():
        return False
    try:
        return _is_ip_or_dash(f[1].decode("ascii"))
    except UnicodeDecodeError:
        return False


def _classify(s: bytes) -> str | None:
    if s.startswith(b"{"):
        return "jsonl"
    if s.startswith(b"CDX "):
        return "cdx"
    f = s.split(None, 3)
    if len(f) >= 3 and _is_ts14(f[1]) and s.split(b" ", 2)[-1].startswith(b"{"):
        return "cdxj"
    if len(f) >= 3 and _is_ts14(f[1]) and len(s.split()) in _CDX_DEFAULT:
        return "cdx"
    if _is_arc8(s):
        return "cdx"
    if (
        len(f) >= 3
        and len(f[0]) >= 19
        and f[0][4:5] == b"-"
        and f[0][10:11] == b"T"
        and f[1].lstrip(b"-").isdigit()
        and (f[2].isdigit() or f[2] == b"-")
    ):
        return "crawllog"
    if _ACCESS_HEAD.match(s):  # "[dd/Mon/yyyy:HH:MM:SS +zone] \"" after 3 or 4 fields: no other format has it
        return "accesslog"
    return None


def detect_format(lines: list[bytes]) -> str:
    """Majority vote of the first non-blank record lines; Heritrix/ARC header lines don't vote."""
    votes: Counter[str] = Counter()
    cdx_like: Counter[int] = Counter()  # field counts of lines like a CDX line of no known layout
    seen = 0
    for line in lines:
        s = line.strip()
        if not s or s.startswith(_NOT_RECORDS):
            continue
        seen += 1
        kind = _classify(s)
        if kind:
            votes[kind] += 1
        else:
            f = s.split()
            if len(f) >= 3 and _is_ts14(f[1]):
                cdx_like[len(f)] += 1
        if seen >= _DETECT_LINES:
            break
    if not votes and cdx_like:
        n = cdx_like.most_common(1)[0][0]
        raise ValueError(
            f"the first lines look like CDX (field 2 is a 14-digit date) with {n} fields and no "
            f"' CDX' header line, a layout that cannot be told: {_CDX_HEADERLESS}"
        )
    if not votes:
        raise ValueError(
            "cannot tell the input format from its first lines; pass --format with one of "
            + ", ".join(f for f in FORMATS if f != "auto")
        )
    return votes.most_common(1)[0][0]


# ---------------------------------------------------------------- reading


def _raw(line: bytes) -> str:
    return line.rstrip(b"\r\n")[:RAW_MAX].decode("utf-8", errors="replace")[:RAW_MAX]


def _read_source(
    src: str | os.PathLike, fmt: str, max_url_length: int, skipped: Counter[str] | None
) -> Iterator[FetchEvent | Rejected]:
    if fmt == "warc" or fmt == "auto" and looks_warc(src):
        yield from read_warc(src, max_url_length, skipped)
        return
    stdin = str(src) == "-"
    name = "<stdin>" if stdin else str(src)
    fh = sys.stdin.buffer if stdin else gzip.open(src, "rb") if str(src).endswith(".gz") else open(src, "rb")
    broken: list[BaseException] = []
    source = _until_broken(fh, broken)
    n = 0
    try:
        lines: Iterable[bytes] = source
        if fmt == "auto":
            head: list[bytes] = []
            records = 0
            for line in source:
                head.append(line)
                s = line.strip()
                records += bool(s) and not s.startswith(_NOT_RECORDS)
                if records >= _DETECT_LINES or len(head) >= _HEAD_MAX:
                    break
            # only Heritrix header lines (or nothing): crawllog rejects them as bad-record
            fmt = detect_format(head) if records else "crawllog"
            lines = chain(head, source)
        parse = _PARSERS[fmt]()
        fast = _fast_jsonl(max_url_length) if fmt == "jsonl" else None
        for n, line in enumerate(lines, 1):
            s = line.strip()
            if not s:
                if skipped is not None:
                    skipped["blank"] += 1
                continue
            if fast is not None:
                ev = fast(s)
                if ev is not None:
                    yield ev
                    continue
            try:
                text = s.decode("utf-8")
            except UnicodeDecodeError as e:
                yield Rejected(name, n, "undecodable", str(e), _raw(line))
                continue
            try:
                item = _validated(parse, text, max_url_length)
            except BadEvent as e:
                yield Rejected(name, n, e.reason, e.detail, _raw(line))
                continue
            if isinstance(item, str):  # read, and no fetch: a CDX header
                if skipped is not None:
                    skipped[item] += 1
                continue
            yield item
        if broken:  # what came before is kept; the rest of the file is gone, and said so
            why = broken[0]
            yield Rejected(name, n + 1, "truncated", f"input ends mid-stream: {type(why).__name__}: {why}"[:200], "")
    finally:
        if not stdin:
            fh.close()


def _validated(parse: Callable[[str], Any], text: str, max_url_length: int) -> FetchEvent | str:
    """One record's text -> FetchEvent (a str: the reason a line is no fetch, such as a
    header), or BadEvent with the reason. What validation lets through unlabelled, or
    JSON nested too deep to decode, is a ``bad-field``: a bad record, not a crash."""
    try:
        d = parse(text)
        return d if type(d) is str else event_from_dict(d, max_url_length)
    except BadEvent:
        raise
    except (ValueError, TypeError, OverflowError, RecursionError) as e:
        raise BadEvent("bad-field", f"{type(e).__name__}: {e}"[:200]) from None


def _until_broken(fh, broken: list[BaseException]) -> Iterator[bytes]:
    """The file's lines until it breaks: a gzip file cut short raises EOFError (or a
    zlib/gzip error) mid-iteration, which is recorded instead of ending the run."""
    try:
        yield from fh
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        broken.append(e)


def read_events(
    sources: str | os.PathLike | Iterable[str | os.PathLike],
    fmt: str = "auto",
    max_url_length: int = DEFAULT_MAX_URL_LENGTH,
    skipped: Counter[str] | None = None,
) -> Iterator[FetchEvent | Rejected]:
    """Events and rejections of all sources, in input order; '-' is stdin, '*.gz' is gunzipped
    (WARC: each gzip member, by warcio).

    The format is detected per source when ``fmt`` is "auto"; an undetectable source
    raises ValueError (a usage error, unlike a bad record).

    ``skipped`` counts, by reason, the records read that are neither an event nor a
    rejection (blank lines, CDX headers, WARC request records...), so that events +
    rejections + skipped = records read (docs/formats.md says what a record is).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    for src in sources:
        yield from _read_source(src, fmt, max_url_length, skipped)


def parse_message(raw: bytes | None, max_url_length: int = DEFAULT_MAX_URL_LENGTH) -> FetchEvent:
    """One message value of the pages topic -> FetchEvent, or BadEvent with the reason
    (the same events and reasons as a JSON-lines file; Heritrix KafkaCrawlLogFeed too)."""
    if not raw:
        raise BadEvent("bad-json", "empty message")
    ev = _fast_jsonl(max_url_length)(raw)
    if ev is not None:
        return ev
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadEvent("undecodable", str(e)[:200]) from None
    # as read_events validates: a bad event for the dead-letter topic, never a worker
    # crash that the re-delivered message would repeat (_parse_jsonl never gives None)
    return cast(FetchEvent, _validated(_parse_jsonl, text, max_url_length))
