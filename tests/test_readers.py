"""Readers: every format becomes FetchEvents, every bad record a Rejected with its reason."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
import os
import sys
import zlib
from collections import Counter
from pathlib import Path

import pytest

from dustonline.events.deadletter import DeadLetter
from dustonline.events.event import EMPTY_DIGEST, FetchEvent
from dustonline.events.readers import FORMATS, Rejected, detect_format, read_events

REAL = Path(os.environ.get("DUSTONLINE_REAL_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data" / "real")
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"real data not found at {REAL}")

T0 = dt.datetime(2025, 11, 21, 10, 0, tzinfo=dt.timezone.utc).timestamp()


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def split(items):
    items = list(items)
    ev = [x for x in items if isinstance(x, FetchEvent)]
    rj = [x for x in items if isinstance(x, Rejected)]
    return ev, rj


def by_url(items):
    return {e.url: e for e in items if isinstance(e, FetchEvent)}


# ------------------------------------------------------------------ jsonl


def test_formats_tuple():
    assert FORMATS == ("auto", "jsonl", "crawllog", "cdx", "cdxj", "warc", "accesslog")


def test_jsonl_valid_event_round_trips(tmp_path):
    lines = [
        {
            "url": "http://www.irs.gov/foia/index.html",
            "ts": T0,
            "status": 200,
            "digest": "sha1:FNXOHI5LCGLX5BO2AG2RWEH4RLIO47ML",
            "simhash": "9f3a0c2b11d4e5f6",
            "canonical": "http://www.irs.gov/foia/",
            "length": 5123,
        },
        {"url": "http://a.example/iso", "ts": "2025-11-21T10:00:00Z"},
        {"url": "http://a.example/arc", "ts": "20251121100000", "digest": "fnxohi5lcglx5bo2ag2rweh4rlio47ml"},
    ]
    p = write(tmp_path, "ev.jsonl", "".join(json.dumps(d) + "\n" for d in lines))
    out = list(read_events([p]))
    assert all(isinstance(e, FetchEvent) for e in out) and len(out) == 3
    a, b, c = out
    assert a.url == "http://www.irs.gov/foia/index.html" and a.ts == T0 and a.status == 200
    assert a.digest == "sha1:FNXOHI5LCGLX5BO2AG2RWEH4RLIO47ML"
    assert a.simhash == 0x9F3A0C2B11D4E5F6 and a.canonical == "http://www.irs.gov/foia/" and a.length == 5123
    assert b.ts == T0 and b.status == 200 and b.digest is None  # status defaults to 200
    assert c.ts == T0 and c.digest == "sha1:FNXOHI5LCGLX5BO2AG2RWEH4RLIO47ML"  # bare base32 normalized


def test_jsonl_bad_records_rejected_with_reason_and_order_kept(tmp_path):
    ok = lambda i: json.dumps({"url": f"http://ok.example/{i}", "ts": T0 + i}).encode()  # noqa: E731
    lines = [
        ok(0),
        b'{"url": "http://x.example/", "ts": ',  # bad-json
        ok(1),
        json.dumps({"ts": T0}).encode(),  # missing-url
        b"",  # blank: skipped silently
        json.dumps({"url": "ftp://x.example/f", "ts": T0}).encode(),  # not-http
        json.dumps({"url": "http://x.example/" + "a" * 100, "ts": T0}).encode(),  # url-too-long
        json.dumps({"url": "http://x.example/", "ts": "yesterday"}).encode(),  # bad-timestamp
        b'{"url": "http://x.example/\xff\xfe", "ts": 1}',  # undecodable
        b"[1, 2]",  # not an object
        ok(2),
    ]
    p = write(tmp_path, "mixed.jsonl", b"\n".join(lines) + b"\n")
    out = list(read_events(str(p), fmt="jsonl", max_url_length=64))
    kinds = [(o.url if isinstance(o, FetchEvent) else (o.line, o.reason)) for o in out]
    assert kinds == [
        "http://ok.example/0",
        (2, "bad-json"),
        "http://ok.example/1",
        (4, "missing-url"),
        (6, "not-http"),
        (7, "url-too-long"),
        (8, "bad-timestamp"),
        (9, "undecodable"),
        (10, "bad-json"),
        "http://ok.example/2",
    ]
    rej = [o for o in out if isinstance(o, Rejected)]
    assert all(r.source == str(p) for r in rej)
    assert rej[0].raw == '{"url": "http://x.example/", "ts": '
    assert "\ufffd" in rej[-2].raw  # undecodable raw is kept, with replacement chars


def test_rejected_raw_is_truncated(tmp_path):
    p = write(tmp_path, "long.jsonl", "{" + "x" * 10000 + "\n")
    [r] = list(read_events(p, fmt="jsonl"))
    assert r.reason == "bad-json" and len(r.raw) == 4096


def test_kafka_crawl_log_feed_object(tmp_path):
    msg = {
        "annotations": "ip:173.236.225.186,duplicate:digest",
        "content_digest": "sha1:44KA4PQA5TYRAXDIVJIAFD72RN55OQHJ",
        "content_length": 324,
        "extra_info": {},
        "hop_path": "IE",
        "host": "acid.matkelly.com",
        "mimetype": "text/html",
        "seed": "WTID:12321444",
        "size": 511,
        "start_time_plus_duration": "20160127211938966+230",
        "status_code": 404,
        "thread": 189,
        "timestamp": "2016-01-27T21:19:39.200Z",
        "url": "http://acid.matkelly.com/img.png",
        "via": "http://acid.matkelly.com/",
        "warc_filename": "BL-20160127211918391-00001-35~ce37d8d00c1f~8443.warc.gz",
        "warc_offset": 36748,
    }
    no_start = {k: v for k, v in msg.items() if k != "start_time_plus_duration"} | {"status_code": 200}
    p = write(tmp_path, "kafka.jsonl", json.dumps(msg) + "\n" + json.dumps(no_start) + "\n")
    a, b = list(read_events(p))
    begin = dt.datetime(2016, 1, 27, 21, 19, 38, tzinfo=dt.timezone.utc).timestamp() + 0.966
    assert a == FetchEvent(
        url="http://acid.matkelly.com/img.png",
        ts=pytest.approx(begin),
        status=404,
        digest="sha1:44KA4PQA5TYRAXDIVJIAFD72RN55OQHJ",
        length=511,
    )
    assert a.ts == pytest.approx(begin)  # fetch begin, not the log time
    assert b.status == 200 and b.ts == pytest.approx(begin + 1.234)  # falls back to the log time


def test_stdin_gzip_and_multiple_sources(tmp_path, monkeypatch):
    ev = lambda u: json.dumps({"url": u, "ts": T0}) + "\n"  # noqa: E731
    gz = tmp_path / "a.jsonl.gz"
    with gzip.open(gz, "wt") as f:
        f.write(ev("http://gz.example/"))
    plain = write(tmp_path, "b.jsonl", ev("http://plain.example/"))
    fake = io.TextIOWrapper(io.BytesIO(ev("http://stdin.example/").encode() + b"nonsense\n"))
    monkeypatch.setattr(sys, "stdin", fake)
    out = list(read_events([gz, "-", plain]))
    assert [getattr(o, "url", None) for o in out] == [
        "http://gz.example/",
        "http://stdin.example/",
        None,
        "http://plain.example/",
    ]
    assert out[2].source == "<stdin>" and out[2].line == 2 and out[2].reason == "bad-json"


def test_unknown_format_raises_with_hint(tmp_path):
    p = write(tmp_path, "x.txt", "hello world\nfoo\n")
    with pytest.raises(ValueError, match="--format"):
        list(read_events(p))
    with pytest.raises(ValueError, match="--format"):
        detect_format([b"hello world"])


# ------------------------------------------------------------------ synthetic crawllog / cdx / cdxj


def test_crawllog_fields_and_bad_lines(tmp_path):
    p = write(
        tmp_path,
        "crawl.log",
        (
            "2007-12-27T12:51:29.338Z   200        319 http://h.example/a - - text/html #006 "
            "20071227125129307+17 sha1:KSX4LQZ3ZGIELDEMBONG6GCTP2DG3YRX - content-size:557\n"
            "2012-05-23T15:07:52.209Z -5003          - http://h.example/b LLE http://h.example/ "
            "unknown #020 - - http://h.example/ -\n"
            "2007-12-27T12:51:28.532Z     1         59 dns:h.example P http://h.example/ text/dns #017 "
            "20071227125127759+115 sha1:YSVHFJENFP5MACCNTLG2TZZKOFSLB7LQ - content-size:59\n"
            "2007-12-27T12:51:29.338Z 200 319 http://h.example/c\n"
            "2007-12-27T12:51:29.338Z OK 319 http://h.example/d - - text/html #006 - - - -\n"
        ),
    )
    a, b, dns, short, bad = list(read_events(p))
    assert a.url == "http://h.example/a" and a.status == 200 and a.length == 319
    assert a.ts == pytest.approx(dt.datetime(2007, 12, 27, 12, 51, 29, 307000, dt.timezone.utc).timestamp())
    assert a.digest == "sha1:KSX4LQZ3ZGIELDEMBONG6GCTP2DG3YRX"
    assert b.status == -5003 and b.digest is None and b.length is None and not b.teaches
    assert b.ts == pytest.approx(dt.datetime(2012, 5, 23, 15, 7, 52, 209000, dt.timezone.utc).timestamp())
    assert (dns.reason, short.reason, bad.reason) == ("not-http", "bad-record", "bad-field")


def test_cdx_default_layouts_and_revisit(tmp_path):
    p = write(
        tmp_path,
        "x.cdx",
        (
            "com,ex)/a 20110624225005 http://ex.com/a text/html 200 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 - - 1234 99 "
            "f.warc.gz\n"
            "com,ex)/b 20110624225005 http://ex.com/b warc/revisit - USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 - - 99 "
            "f.warc.gz\n"
            "com,ex)/c 20110624225005 http://ex.com/c text/html - - - 99 f.warc.gz\n"
            "com,ex)/d 20110624225005 http://ex.com/d text/html\n"
        ),
    )
    assert detect_format(p.read_bytes().splitlines()) == "cdx"
    a, b, c, d = list(read_events(p))
    assert a.status == 200 and a.length == 1234 and a.digest == "sha1:USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3"
    assert a.ts == dt.datetime(2011, 6, 24, 22, 50, 5, tzinfo=dt.timezone.utc).timestamp()
    assert b.status == 200 and b.digest == a.digest and b.length is None  # revisit = same content
    assert c.status == 0 and c.digest is None and not c.teaches  # '-' status: unknown
    assert d.reason == "bad-record"


def test_cdx_header_layout_is_honoured(tmp_path):
    p = write(
        tmp_path,
        "h.cdx",
        (
            " CDX a b k s m\n"
            "http://ex.com/x 20110624225005 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 301 text/html\n"
            "http://ex.com/y 20110624225005 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 301\n"
            "http://ex.com/z 20111324225005 - 200 text/html\n"
        ),
    )
    x, y, z = list(read_events(p))
    assert x.url == "http://ex.com/x" and x.status == 301 and x.digest == "sha1:USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3"
    assert (y.line, y.reason) == (3, "bad-record")
    assert (z.line, z.reason) == (4, "bad-timestamp")


def test_cdx_and_crawllog_digests_normalize_alike(tmp_path):
    cdx = write(
        tmp_path,
        "a.cdx",
        "com,ex)/ 20110624225005 http://ex.com/ text/html 200 usfay47tzzm2ciwsafonczcgto6mm7z3 - - 1 f.warc.gz\n",
    )
    log = write(
        tmp_path,
        "b.log",
        "2007-12-27T12:51:29.338Z   200        319 http://ex.com/x - - text/html #006 "
        "20071227125129307+17 sha1:USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 - -\n",
    )
    [c, h] = list(read_events([cdx, log]))
    assert c.digest == h.digest == "sha1:USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3"


def test_cdxj_status_and_bad_lines(tmp_path):
    p = write(
        tmp_path,
        "x.cdxj",
        (
            'com,ex)/ 20140126200624 {"url": "http://ex.com/", "mime": "text/html", "status": "302", "length": "9"}\n'
            'com,ex)/ 20140126200625 {"url": "http://ex.com/", "mime": "warc/revisit", '
            '"digest": "USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3"}\n'
            'com,ex)/ 20140126200626 {"url": "http://ex.com/", \n'
            "com,ex)/ 20140126200627\n"
        ),
    )
    a, b, c, d = list(read_events(p))
    assert (
        a.status == 302
        and a.length == 9
        and a.ts == dt.datetime(2014, 1, 26, 20, 6, 24, tzinfo=dt.timezone.utc).timestamp()
    )
    assert b.status == 200 and b.teaches
    assert (c.reason, d.reason) == ("bad-json", "bad-record")


ARC8 = (
    "http://ex.com/a?id=1 194.255.126.118 20040511211249 image/jpeg 6345 f.arc 6950 56bf412eaebc3a9d639898a71dbe614c\n"
    "http://ex.com/b - 20040511211302 text/html 10 f.arc 150 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3\n"
    "http://ex.com/c 2001:db8::1 20040511211302 text/html 10 f.arc 300 -\n"
)


def test_cdx_8field_headerless_layout_detected_and_read(tmp_path):
    """netarchivesuite's ARC-era CDX: URL IP date mime length file offset digest, no header.
    No status field: status 0 (unknown), as for '-' in the other CDX layouts: never teaches."""
    p = write(tmp_path, "nas.cdx", ARC8)
    assert detect_format(p.read_bytes().splitlines()) == "cdx"
    for fmt in ("auto", "cdx"):
        a, b, c = list(read_events(p, fmt))
        assert a.url == "http://ex.com/a?id=1" and a.length == 6345
        assert a.ts == dt.datetime(2004, 5, 11, 21, 12, 49, tzinfo=dt.timezone.utc).timestamp()
        assert a.digest == "md5:56bf412eaebc3a9d639898a71dbe614c"  # hex MD5, not taken for base32 SHA-1
        assert b.digest == "sha1:USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3" and c.digest is None
        assert all(e.status == 0 and not e.teaches for e in (a, b, c))


def test_cdx_8field_malformed_lines_are_dead_lettered_with_a_reason(tmp_path):
    good = "http://ex.com/a 1.2.3.4 20040511211249 text/html 10 f.arc 150 56bf412eaebc3a9d639898a71dbe614c"
    bad = [
        ("http://ex.com/a b 1.2.3.4 20040511211249 text/html 10 f.arc 150 -", "bad-record", "9 fields"),
        ("http://ex.com/x host 20040511211249 text/html 10 f.arc 150 -", "bad-record", "field 2"),
        ("http://ex.com/x 1.2.3.4 20041311211249 text/html 10 f.arc 150 -", "bad-timestamp", "20041311211249"),
        ("http://ex.com/x 1.2.3.4 2004-05-11T21:12 text/html 10 f.arc 150 -", "bad-timestamp", "field 3"),
        ("http://ex.com/x 1.2.3.4 20040511211249 text/html ten f.arc 150 -", "bad-field", "length"),
        ("http://ex.com/x 1.2.3.4 20040511211249 text/html 10 f.arc x150 -", "bad-record", "offset"),
        ("dns:ex.com 1.2.3.4 20040511211249 text/dns 10 f.arc 150 -", "not-http", "dns:ex.com"),
    ]
    p = write(tmp_path, "nas.cdx", "\n".join([good] * 3 + [line for line, _, _ in bad] + [good]) + "\n")
    items = list(read_events(p))
    ev, rj = split(items)
    assert len(ev) == 4 and [r.line for r in rj] == list(range(4, 4 + len(bad)))
    for r, (line, reason, detail) in zip(rj, bad):
        assert (r.reason, r.raw) == (reason, line) and detail in r.detail, r
    dead = tmp_path / "dead.jsonl"
    with DeadLetter(dead) as dl:
        for r in rj:
            dl.add(r)
    rows = [json.loads(line) for line in dead.read_text().splitlines()]
    assert [(r["line"], r["reason"]) for r in rows] == [(r.line, reason) for r, (_, reason, _) in zip(rj, bad)]
    assert all(r["detail"] and r["source"] == str(p) for r in rows)


def test_cdx_8field_lines_do_not_change_other_layouts(tmp_path):
    # an 8-field line in a headerless 11-field file is still a bad record, as before
    p = write(
        tmp_path,
        "x.cdx",
        "com,ex)/a 20110624225005 http://ex.com/a text/html 200 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 - - 1234 99 "
        "f.warc.gz\n"
        "http://ex.com/b 1.2.3.4 20040511211249 text/html 10 f.arc 150 -\n",
    )
    a, b = list(read_events(p))
    assert a.status == 200 and b.reason == "bad-record" and b.detail.startswith("CDX line with 8 fields, expected 9")
    # 8 fields whose 2nd is not an IP (nor '-'), whose offset is not a number or whose date is
    # not 14 digits: not this layout, and nothing else either
    for line in (
        b"http://ex.com/b somehost 20040511211249 text/html 10 f.arc 150 -",
        b"http://ex.com/b 1.2.3.4 20040511211249 text/html 10 f.arc - -",
        b"http://ex.com/b 1.2.3.4 2004051121124 text/html 10 f.arc 150 -",
    ):
        with pytest.raises(ValueError, match="cannot tell the input format"):
            detect_format([line])
    # a header line still decides the layout
    h = write(tmp_path, "h.cdx", " CDX a e b m n g V k\nhttp://ex.com/b - 20040511211249 text/html 10 f.arc 150 -\n")
    [e] = list(read_events(h))
    assert e.url == "http://ex.com/b" and e.length == 10 and e.status == 0


# ------------------------------------------------------------------ real files


REAL_FORMATS = {
    "heritrix1-crawl-9.log": "crawllog",
    "heritrix1-idna-crawl.log": "crawllog",
    "archiveit-index-2.cdx": "cdx",
    "pywb-iana.cdxj": "cdxj",
    "nas-fyensdk-2004-8field.cdx": "cdx",  # 8 fields, no header line
}


@needs_real
@pytest.mark.parametrize("name,fmt", sorted(REAL_FORMATS.items()))
def test_detect_format_on_real_files(name, fmt):
    with open(REAL / name, "rb") as f:
        head = [f.readline() for _ in range(30)]
    assert detect_format(head) == fmt


@needs_real
@pytest.mark.parametrize(
    "name,events,reasons",
    [
        # 219 lines; 7 dns: lookups
        ("heritrix1-crawl-9.log", 212, {"not-http": 7}),
        # metadata:// header line + 1547 records, 7 of them dns:
        ("heritrix1-idna-crawl.log", 1540, {"not-http": 7, "bad-record": 1}),
        # CDX header + 665 records: 12 dns:, 1 filedesc://, 2 warcinfo with url '-'
        ("archiveit-index-2.cdx", 650, {"not-http": 15}),
        ("pywb-iana.cdxj", 171, {}),
        # 189 lines of netarchivesuite's headerless 8-field CDX
        ("nas-fyensdk-2004-8field.cdx", 189, {}),
    ],
)
def test_real_files_parse(name, events, reasons):
    ev, rj = split(read_events(REAL / name))
    assert len(ev) == events
    assert dict(Counter(r.reason for r in rj)) == reasons
    assert all(r.detail.startswith(("dns:", "filedesc:", "-")) for r in rj if r.reason == "not-http")


@needs_real
def test_real_crawllog_facts():
    evs = [e for e in read_events(REAL / "heritrix1-idna-crawl.log") if isinstance(e, FetchEvent)]
    first = {}
    for e in evs:
        first.setdefault(e.url, e)
    a, b = first["http://oelejr.dk/robots.txt"], first["http://www.oelejr.dk/robots.txt"]
    assert a.digest == b.digest == "sha1:FCACEDMY3COHLOAOFWTMJ6CCSXYP2OD3"
    assert a.teaches and b.status == 200 and b.length == 348
    # -5003 (blocked) records are most of this log: they are events, but never teach
    blocked = [e for e in evs if e.status == -5003]
    assert len(blocked) == 1130 and not any(e.teaches for e in blocked)
    rej = [r for r in read_events(REAL / "heritrix1-idna-crawl.log") if isinstance(r, Rejected)]
    assert (rej[0].line, rej[0].reason) == (1, "bad-record") and rej[0].raw.startswith("metadata://")


@needs_real
def test_real_cdx_facts():
    urls = by_url(read_events(REAL / "archiveit-index-2.cdx"))
    a = urls["http://www.sfha.org/about/commission/012209.htm"]
    b = urls["http://www.sfha.org/about/commission/agenda.htm"]
    assert a.digest == b.digest == "sha1:USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3"
    assert a.ts == dt.datetime(2009, 1, 24, 17, 31, 18, tzinfo=dt.timezone.utc).timestamp()


@needs_real
def test_real_8field_cdx_facts():
    """First line of the file: http://www.fyens.dk/picturecache/article/getpicture.php?pictureid=117715&Width=198
    194.255.126.118 20040511211249 image/jpeg 6345 fyensdk.arc 6950 56bf412eaebc3a9d639898a71dbe614c"""
    items = list(read_events(REAL / "nas-fyensdk-2004-8field.cdx"))
    ev, rj = split(items)
    assert len(items) == len(ev) == 189 and rj == []
    a = ev[0]
    assert a.url == "http://www.fyens.dk/picturecache/article/getpicture.php?pictureid=117715&Width=198"
    assert a.ts == dt.datetime(2004, 5, 11, 21, 12, 49, tzinfo=dt.timezone.utc).timestamp() == 1084309969.0
    assert a.digest == "md5:56bf412eaebc3a9d639898a71dbe614c" and a.length == 6345
    # no status in the layout: unknown, so the events are read but teach nothing
    assert all(e.status == 0 and not e.teaches for e in ev)
    assert len({e.digest for e in ev}) == 189 and all(e.digest.startswith("md5:") for e in ev)
    assert ev[-1].ts == dt.datetime(2004, 5, 11, 21, 12, 58, tzinfo=dt.timezone.utc).timestamp()  # last line


@needs_real
def test_real_cdxj_facts():
    evs = [e for e in read_events(REAL / "pywb-iana.cdxj") if isinstance(e, FetchEvent)]
    js = {e.url for e in evs if e.url.endswith("/_js/2013.1/iana.js")}
    assert js == {"http://www.iana.org/_js/2013.1/iana.js", "https://www.iana.org/_js/2013.1/iana.js"}
    assert all(e.digest == EMPTY_DIGEST and not e.teaches for e in evs if e.url in js)
    # revisit records carry no status in pywb CDXJ: read as 200, same content as the original
    otf = [e for e in evs if e.url == "http://www.iana.org/_css/2013.1/fonts/Inconsolata.otf"]
    assert len(otf) > 1 and all(e.status == 200 and e.digest == otf[0].digest for e in otf)


@needs_real
def test_real_cdxj_and_crawllog_empty_digest_agree():
    """pywb writes the empty-payload SHA-1 bare, Heritrix with 'sha1:': both normalize to EMPTY_DIGEST."""
    log = {e.digest for e in read_events(REAL / "heritrix1-crawl-9.log") if isinstance(e, FetchEvent)}
    cdxj = {e.digest for e in read_events(REAL / "pywb-iana.cdxj") if isinstance(e, FetchEvent)}
    assert "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ" in (REAL / "pywb-iana.cdxj").read_text()
    assert log & cdxj == {EMPTY_DIGEST}


# ------------------------------------------------------------------ dead letter


def test_deadletter_writes_and_counts(tmp_path):
    path = tmp_path / "dead.jsonl"
    rejs = [
        Rejected("a.log", 1, "not-http", "dns:x", "raw1"),
        Rejected("a.log", 5, "bad-json", "eof", "{"),
        Rejected("<stdin>", 7, "not-http", "ftp://y", "raw\u00e9"),
    ]
    with DeadLetter(path) as dl:
        assert not path.exists()  # opened lazily
        for r in rejs:
            dl.add(r)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows == [
        {"source": r.source, "line": r.line, "reason": r.reason, "detail": r.detail, "raw": r.raw} for r in rejs
    ]
    assert dl.counts == {"not-http": 2, "bad-json": 1} and list(dl.counts) == ["not-http", "bad-json"]
    assert dl.total == 3 and dl.summary() == "3 rejected: 2 not-http, 1 bad-json"
    with DeadLetter(path) as dl2:  # append, not truncate
        dl2.add(rejs[0])
    assert len(path.read_text().splitlines()) == 4


def test_deadletter_without_path_only_counts():
    dl = DeadLetter(None)
    dl.add(Rejected("x", 1, "bad-json", "", ""))
    assert dl.total == 1 and dl.counts == {"bad-json": 1}
    dl.close()
    assert DeadLetter(None).summary() == "0 rejected"


# ------------------------------------------------------------------ jsonl fast path
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as hs  # noqa: E402

from dustonline.events.event import BadEvent, event_from_dict  # noqa: E402
from dustonline.events.readers import _fast_jsonl  # noqa: E402

_urls = hs.sampled_from(
    [
        "http://a.example/x?id=7",
        "https://B.example:8443/",
        "ftp://no.example/",
        "http:///nohost",
        "http://sp ace.example/",
        "",
        "http://" + "l" * 70 + ".example/",
    ]
)
_values = hs.one_of(
    hs.none(),
    hs.booleans(),
    hs.integers(-20000, 2**70),
    hs.floats(allow_nan=False),
    hs.text(max_size=20),
    hs.sampled_from(
        [
            "-",
            "sha1:abc",
            "FNXOHI5LCGLX5BO2AG2RWEH4RLIO47ML",
            "9f3a0c2b11d4e5f6",
            "2025-11-21T10:00:00Z",
            "20251121100000",
            "1763719200",
        ]
    ),
)
_locations = _urls | hs.sampled_from(
    ["/rel?x=1#f", "//[v6", "-", "http://a.example/x?id=7", "https://a.example/x?id=7"]
)
_redirects = dict.fromkeys(("redirect", "location", "redirected_from"), _locations | _values)
_events = hs.fixed_dictionaries(
    {"url": _urls},
    optional=dict.fromkeys(("ts", "status", "digest", "simhash", "canonical", "length"), _values) | _redirects,
) | hs.fixed_dictionaries(
    {
        "url": _urls,
        "ts": hs.floats(0, 2e9),
        "status": hs.sampled_from([200, 301, 404, -1]),
        "digest": hs.sampled_from(["sha1:FNXOHI5LCGLX5BO2AG2RWEH4RLIO47ML", "", "-", EMPTY_DIGEST]),
        "simhash": hs.sampled_from(["9f3a0c2b11d4e5f6", "zz", ""]),
        "canonical": _urls,
        "length": hs.integers(0, 10**6),
    },
    optional=_redirects,
)


@settings(max_examples=400, deadline=None)
@given(_events)
def test_jsonl_fast_path_accepts_exactly_what_the_general_path_accepts(d):
    """The typed decoder is a shortcut, never a second opinion: an event it builds is the
    one event_from_dict builds, and whatever the general path rejects it declines."""
    line = json.dumps(d).encode()
    fast = _fast_jsonl(64)(line)
    try:
        slow = event_from_dict(json.loads(line), 64)
    except BadEvent:
        slow = None
    if fast is not None:
        assert fast == slow
    wire_typed = all(type(d[k]) in ok for k, ok in _WIRE_TYPES.items() if k in d) and abs(d.get("length") or 0) < 2**63
    if slow is not None and wire_typed:
        assert fast is not None  # the common case does not fall back


_WIRE_TYPES = {
    "ts": (int, float),
    "status": (int,),
    "simhash": (str, type(None)),
    "length": (int, type(None)),
    "digest": (str, type(None)),
    "canonical": (str, type(None)),
    "redirect": (str, type(None)),
    "location": (str, type(None)),
    "redirected_from": (str, type(None)),
}


def test_jsonl_fast_path_takes_the_common_line():
    line = b'{"url":"http://a.example/x","ts":1700000000,"digest":"sha1:abc","simhash":"9f3a0c2b11d4e5f6","extra":[1]}'
    ev = _fast_jsonl(2048)(line)
    assert ev == FetchEvent(url="http://a.example/x", ts=1700000000.0, digest="sha1:ABC", simhash=0x9F3A0C2B11D4E5F6)
    assert _fast_jsonl(2048)(b'{"url":"http://a.example/x","ts":"2025-11-21T10:00:00Z"}') is None  # general path
    assert _fast_jsonl(2048)(b'{"url":"http://a.example/\xff","ts":1}') is None  # undecodable: general path names it


# ------------------------------------------------------------------ WARC
import random  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402

from warcio.statusandheaders import StatusAndHeaders  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

from dustonline.events.sketch import digest, distance, sketch  # noqa: E402
from dustonline.rules.ruleset import RuleSet, read_rules  # noqa: E402

_RNG = random.Random(11)
_VOCAB = ["".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_RNG.randint(2, 10))) for _ in range(2000)]


def page_body(seed: int, change: int | None = None) -> bytes:
    """A 300-word HTML page; ``change``: that word replaced (a near-duplicate)."""
    rng = random.Random(seed)
    w = [rng.choice(_VOCAB) for _ in range(300)]
    if change is not None:
        w[change] = "changed"
    return (
        f"<html><head><title>p{seed}</title><script>var s = {seed};</script></head>"
        f"<body><p>{' '.join(w)}</p></body></html>"
    ).encode()


def warc_date(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def add_response(
    w: WARCWriter, url: str, body: bytes, ts: float, status: str = "200 OK", ctype: str = "text/html; charset=utf-8"
) -> None:
    http = StatusAndHeaders(status, [("Content-Type", ctype), ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
    w.write_record(
        w.create_warc_record(
            url, "response", payload=io.BytesIO(body), http_headers=http, warc_headers_dict={"WARC-Date": warc_date(ts)}
        )
    )


def add_request(w: WARCWriter, url: str, ts: float) -> None:
    http = StatusAndHeaders("GET / HTTP/1.1", [("Host", url.split("/")[2])], is_http_request=True)
    w.write_record(
        w.create_warc_record(url, "request", http_headers=http, warc_headers_dict={"WARC-Date": warc_date(ts)})
    )


def raw_record(url: str, http: bytes, ts: float, rtype: str = "response") -> bytes:
    """An uncompressed WARC record written by hand: no WARC-Payload-Digest."""
    head = (
        f"WARC/1.0\r\nWARC-Type: {rtype}\r\nWARC-Target-URI: {url}\r\nWARC-Date: {warc_date(ts)}\r\n"
        f"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-{int(ts) % 10**12:012d}>\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n"
    )
    return head.encode() + http + b"\r\n\r\n"


@pytest.fixture
def small_warc(tmp_path):
    same, near, other = page_body(1), page_body(1, change=150), page_body(2)
    p = tmp_path / "crawl.warc.gz"
    with open(p, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        w.write_record(w.create_warcinfo_record(p.name, {"software": "dustonline tests", "format": "WARC 1.0"}))
        add_request(w, "http://a.example/p?id=1", T0)
        add_response(w, "http://a.example/p?id=1", same, T0)
        add_response(w, "http://www.a.example/p?id=1", same, T0 + 1)
        add_response(w, "http://a.example/print/p?id=1", near, T0 + 2)
        add_response(w, "http://a.example/p?id=2", other, T0 + 3)
        add_response(w, "http://a.example/gone", b"<html><body>Not Found</body></html>", T0 + 4, "404 Not Found")
        revisit = w.create_revisit_record(
            "http://a.example/p?id=1&s=9",
            digest(same),
            "http://a.example/p?id=1",
            warc_date(T0),
            warc_headers_dict={"WARC-Date": warc_date(T0 + 5)},
        )
        w.write_record(revisit)
        md = w.create_warc_record(
            "http://a.example/p?id=1",
            "metadata",
            payload=io.BytesIO(b"outlinks: none\n"),
            warc_content_type="text/plain",
            warc_headers_dict={"WARC-Date": warc_date(T0)},
        )
        w.write_record(md)
    return p, same, near, other


def test_warc_records_become_events(small_warc):
    p, same, near, other = small_warc
    ev, rj = split(read_events(p))
    assert rj == []
    assert [e.url for e in ev] == [
        "http://a.example/p?id=1",
        "http://www.a.example/p?id=1",
        "http://a.example/print/p?id=1",
        "http://a.example/p?id=2",
        "http://a.example/gone",
        "http://a.example/p?id=1&s=9",
    ]  # no request/info/metadata
    a, www, pr, two, gone, rev = ev
    assert [e.ts for e in ev] == [T0, T0 + 1, T0 + 2, T0 + 3, T0 + 4, T0 + 5]
    assert [e.status for e in ev] == [200, 200, 200, 200, 404, 200]
    # identical bodies: one digest, the WARC-Payload-Digest warcio wrote, which is sketch's
    assert a.digest == www.digest == digest(same) != pr.digest
    assert a.simhash == www.simhash and f"{a.simhash:016x}" == sketch(same, "text/html")["simhash"]
    assert distance(a.simhash, pr.simhash) <= 6 and distance(a.simhash, two.simhash) > 16  # near vs unrelated
    assert (a.length, pr.length, two.length) == (len(same), len(near), len(other))
    assert not gone.teaches and a.teaches
    # revisit: same content as the capture it refers to, status 200 (no HTTP headers), no sketch of its own
    assert rev.digest == a.digest and rev.teaches and rev.simhash is None and rev.length is None


def test_warc_auto_detected_by_name_and_content(small_warc, tmp_path, monkeypatch):
    p, *_ = small_warc
    want = list(read_events(p))
    assert list(read_events(p, fmt="warc")) == want
    renamed = tmp_path / "crawl-00001.gz"  # not named .warc.gz: sniffed from the gunzipped first bytes
    renamed.write_bytes(p.read_bytes())
    assert list(read_events(renamed)) == want
    plain = tmp_path / "crawl.warc"
    plain.write_bytes(gzip.decompress(p.read_bytes()))
    assert list(read_events(plain)) == want
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(p.read_bytes()))))
    assert [(e.url, e.digest) for e in read_events("-")] == [(e.url, e.digest) for e in want]
    # other formats are still detected as before
    j = write(tmp_path, "ev.jsonl.gz", gzip.compress(b'{"url": "http://a.example/", "ts": 1}\n'))
    assert list(read_events(j)) == [FetchEvent(url="http://a.example/", ts=1.0)]


def test_warc_payload_without_digest_chunked_and_gzipped(tmp_path):
    body = page_body(3)
    gz = gzip.compress(body)
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (gz[:100], gz[100:])) + b"0\r\n\r\n"
    http_gz = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + chunked
    )
    http_plain = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    dns = b"20251121100000\na.example.\t300\tIN\tA\t192.0.2.1\n"
    p = write(
        tmp_path,
        "hand.warc",
        raw_record("dns:a.example", dns, T0)
        + raw_record("http://a.example/z", http_gz, T0 + 1)
        + raw_record("http://a.example/y", http_plain, T0 + 2)
        + raw_record("http://a.example/x", b"HTTP/1.1 abc\r\n\r\nbody", T0 + 3),
    )
    items = list(read_events(p))
    assert [type(x).__name__ for x in items] == ["Rejected", "FetchEvent", "FetchEvent", "Rejected"]
    dns_rej, zipped, plain, bad = items
    assert (dns_rej.reason, dns_rej.line) == ("not-http", 1) and dns_rej.raw.startswith("response dns:a.example")
    # no WARC-Payload-Digest: computed over the payload as stored (what warcio and Heritrix digest)
    assert zipped.digest == digest(chunked) and plain.digest == digest(body)
    # the simhash is of the text a browser sees: de-chunked and gunzipped
    assert zipped.simhash == plain.simhash == int(sketch(body, "text/html")["simhash"], 16)
    assert (bad.reason, bad.line) == ("bad-field", 4) and "status" in bad.detail


def test_warc_corrupt_or_truncated_is_a_dead_letter_not_a_crash(small_warc, tmp_path, monkeypatch):
    p, *_ = small_warc
    # record ids fixed, so the bytes the garbage below replaces are the same on every run
    # (with random uuids, about one run in twelve spliced it where warcio reads to the end)
    ids = iter(range(1, 100))
    monkeypatch.setattr(
        "warcio.recordbuilder.RecordBuilder._make_warc_id",
        classmethod(lambda cls: f"<urn:uuid:00000000-0000-4000-8000-{next(ids):012d}>"),
    )
    data = p.read_bytes()
    cut = write(tmp_path, "cut.warc.gz", data[: len(data) * 2 // 3])
    ev, rj = split(read_events(cut))
    assert 1 <= len(ev) < 6 and len(rj) == 1
    assert rj[0].reason == "truncated" and f"file ends mid-record at byte {len(data) * 2 // 3}" in rj[0].detail
    # a big record cut in the middle of its gzip member: its payload is short
    big = tmp_path / "big.warc.gz"
    with open(big, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for i in range(3):
            add_response(w, f"http://a.example/{i}", page_body(i) * 200, T0 + i, ctype="text/plain")
    data = big.read_bytes()
    ev, rj = split(read_events(write(tmp_path, "big-cut.warc.gz", data[: len(data) // 2])))
    assert [e.url for e in ev] == ["http://a.example/0"]
    assert [(r.reason, r.line) for r in rj] == [("truncated", 2)] and "short of its Content-Length" in rj[0].detail
    garbage = write(tmp_path, "garbage.warc.gz", data[:3000] + b"\x00junk" * 500 + data[6000:])
    ev, rj = split(read_events([garbage, cut]))  # the next source is still read
    assert any(e.url == "http://a.example/p?id=1" for e in ev)
    assert [r.reason for r in rj] == ["bad-warc", "truncated"] and all(r.source.endswith(".warc.gz") for r in rj)
    # gzipped as a whole (not per record): warcio cannot read on; say how to fix it
    whole = write(tmp_path, "whole.warc.gz", gzip.compress(gzip.decompress(p.read_bytes())))
    ev, rj = split(read_events(whole))
    assert len(ev) <= 1 and [r.reason for r in rj] == ["bad-warc"] and "warcio recompress" in rj[0].detail
    # not a WARC at all, read as one
    ev, rj = split(read_events(write(tmp_path, "x.jsonl", '{"url": "http://a.example/", "ts": 1}\n'), fmt="warc"))
    assert ev == [] and [r.reason for r in rj] == ["bad-warc"] and "rest of the file not read" in rj[0].detail


def test_learn_on_a_warc_learns_rules(tmp_path):
    """30 pages, each fetched as /a?id=N and /a?id=N&sessionid=X on www and non-www: a
    crawl's WARC is enough to learn its DUST rules."""
    p = tmp_path / "site.warc.gz"
    ts = T0
    with open(p, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for n in range(30):
            body = page_body(100 + n)
            for host in ("www.shop.example", "shop.example"):
                for url in (f"http://{host}/a?id={n}", f"http://{host}/a?id={n}&sessionid={(n * 7919) % 10007:x}"):
                    add_request(w, url, ts)
                    add_response(w, url, body, ts)
                    ts += 1
    rules, dead = tmp_path / "rules.jsonl", tmp_path / "dead.jsonl"
    config = Path(__file__).resolve().parents[1] / "configs" / "default.yaml"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "dustonline",
            "learn",
            str(p),
            "--rules-out",
            str(rules),
            "--config",
            str(config),
            "--dead-letter",
            str(dead),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert re.search(r"^(events|learned) +120\b", r.stderr, re.M) and not dead.exists()  # 120 events, none rejected
    rs = list(read_rules(rules))
    assert rs and all(set(x.hosts) <= {"shop.example", "www.shop.example"} for x in rs)
    keys = RuleSet(rs).canonicalize
    # the four URLs of a page, unseen or not, are fetched once
    for n in (5, 1234):
        assert (
            len(
                {
                    keys(f"http://{h}/a?id={n}{s}")
                    for h in ("www.shop.example", "shop.example")
                    for s in ("", "&sessionid=abc123")
                }
            )
            == 1
        )
    assert keys("http://shop.example/a?id=5") != keys("http://shop.example/a?id=6")


# ------------------------------------------------------------------ redirects
# A 3xx and its target are a duplicate pair (test_redirects.py: what the learner does with
# them); each format says it its own way.


def test_event_without_redirect_encodes_as_before():
    """The fields are defaulted and omitted: an event that does not use them is the bytes
    it always was, so stored and published events are unchanged."""
    import msgspec

    ev = FetchEvent(url="http://a.example/x", ts=1.5, digest="sha1:ABC")
    assert msgspec.json.encode(ev) == b'{"url":"http://a.example/x","ts":1.5,"digest":"sha1:ABC"}'
    assert "redirect" not in ev.to_json() and "redirected_from" not in ev.to_json()
    assert ev.redirect_pairs == ()
    r = FetchEvent(url="http://a.example/x", ts=1.5, status=301, redirect="https://a.example/x")
    assert msgspec.json.encode(r).endswith(b',"redirect":"https://a.example/x"}')


def test_jsonl_redirect_fields(tmp_path):
    base = {"url": "http://a.example/x", "ts": T0, "status": 301}
    lines = [
        base | {"redirect": "https://a.example/x"},
        base | {"location": "https://a.example/y"},  # the header's name, as an alias
        base | {"status": 302, "redirect": "../z?q=1#frag"},  # relative: resolved, fragment cut
        base | {"redirect": "javascript:void(0)"},  # not http(s): dropped, event kept
        base | {"redirect": "http://sp ace.example/"},  # whitespace: dropped
        base | {"redirect": 7},  # not a string: dropped
        base | {"redirect": "http://a.example/x"},  # to itself: no pair
        base | {"status": 200, "redirect": "https://a.example/x"},  # only a 3xx redirects
        {"url": "https://a.example/x", "ts": T0, "redirected_from": "http://a.example/x", "digest": "sha1:AB"},
        {"url": "https://a.example/x", "ts": T0, "redirected_from": "-"},
    ]
    p = write(tmp_path, "r.jsonl", "".join(json.dumps(d) + "\n" for d in lines))
    ev, rj = split(read_events(p))
    assert rj == []
    assert [e.redirect for e in ev[:8]] == [
        "https://a.example/x",
        "https://a.example/y",
        "http://a.example/z?q=1",
        None,
        None,
        None,
        None,
        None,
    ]
    assert ev[0].redirect_pairs == (("http://a.example/x", "https://a.example/x"),)
    assert ev[8].redirected_from == "http://a.example/x" and ev[8].teaches
    assert ev[8].redirect_pairs == (("http://a.example/x", "https://a.example/x"),)
    assert ev[9].redirected_from is None and ev[9].redirect_pairs == ()


def test_crawllog_redirect_hop_names_the_source(tmp_path):
    """Heritrix logs the pair on the target's line: hop path ending in R, via the 3xx URL."""
    p = write(
        tmp_path,
        "crawl.log",
        (
            "2016-03-31T14:37:08.100Z   301          0 http://www.bbc.co.uk/taster IL http://www.bbc.co.uk/ "
            "text/html #370 20160331143708091+58 sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - -\n"
            "2016-03-31T14:37:09.348Z   200     127929 http://www.bbc.co.uk/taster/ ILR http://www.bbc.co.uk/taster "
            "text/html #370 20160331143708191+558 sha1:JMZZPMFS7BJPGWBWPNPNU6OTE6JDBH3X - -\n"
            "2016-03-31T14:37:09.348Z   200     127929 http://www.bbc.co.uk/a ILRE http://www.bbc.co.uk/taster "
            "text/html #370 20160331143708191+558 sha1:JMZZPMFS7BJPGWBWPNPNU6OTE6JDBH3X - -\n"
            "2016-03-31T14:37:09.348Z   200     127929 http://www.bbc.co.uk/b R - "
            "text/html #370 20160331143708191+558 sha1:JMZZPMFS7BJPGWBWPNPNU6OTE6JDBH3X - -\n"
        ),
    )
    src, dst, embed, novia = list(read_events(p))
    assert src.status == 301 and src.redirect is None and src.redirected_from is None  # crawl.log has no Location
    assert dst.redirected_from == "http://www.bbc.co.uk/taster"
    assert dst.redirect_pairs == (("http://www.bbc.co.uk/taster", "http://www.bbc.co.uk/taster/"),)
    assert embed.redirected_from is None  # the last hop is E: an embed of a redirect's target
    assert novia.redirected_from is None  # via '-'


def test_kafka_feed_redirect_hop_names_the_source(tmp_path):
    msg = {
        "url": "https://www.dublincore.org/x",
        "status_code": 200,
        "hop_path": "IILERR",
        "via": "http://www.dublincore.org/x",
        "content_digest": "sha1:44KA4PQA5TYRAXDIVJIAFD72RN55OQHJ",
        "timestamp": "2019-12-04T13:17:36.067Z",
        "start_time_plus_duration": "20191204131736055+9",
    }
    other = msg | {"hop_path": "IILE"}
    p = write(tmp_path, "kafka.jsonl", json.dumps(msg) + "\n" + json.dumps(other) + "\n")
    a, b = list(read_events(p))
    assert a.redirected_from == "http://www.dublincore.org/x" and a.teaches
    assert b.redirected_from is None


def test_cdx_redirect_field(tmp_path):
    p = write(
        tmp_path,
        "x.cdx",
        (
            "com,ex)/a 20110624225005 http://ex.com/a text/html 301 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 "
            "https://ex.com/a - 12 99 f.warc.gz\n"
            "com,ex)/b 20110624225005 http://ex.com/b text/html 302 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 /c - 12 99 "
            "f.warc.gz\n"
            "com,ex)/d 20110624225005 http://ex.com/d text/html 301 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 - - 12 99 "
            "f.warc.gz\n"
            "com,ex)/e 20110624225005 http://ex.com/e text/html 200 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 "
            "http://ex.com/f - 12 99 f.warc.gz\n"
        ),
    )
    a, b, d, e = list(read_events(p))
    assert (a.redirect, b.redirect, d.redirect, e.redirect) == ("https://ex.com/a", "http://ex.com/c", None, None)
    h = write(tmp_path, "h.cdx", " CDX a b s r\nhttp://ex.com/x 20110624225005 301 http://www.ex.com/x\n")
    [x] = list(read_events(h))
    assert x.redirect == "http://www.ex.com/x"


def test_cdxj_redirect_or_location_key(tmp_path):
    p = write(
        tmp_path,
        "x.cdxj",
        (
            'com,ex)/ 20140126200624 {"url": "http://ex.com/", "status": "301", "redirect": "https://ex.com/"}\n'
            'com,ex)/a 20140126200624 {"url": "http://ex.com/a", "status": "302", "location": "/b"}\n'
            'com,ex)/c 20140126200624 {"url": "http://ex.com/c", "status": "302", "location": "mailto:x@ex.com"}\n'
        ),
    )
    a, b, c = list(read_events(p))
    assert (a.redirect, b.redirect, c.redirect) == ("https://ex.com/", "http://ex.com/b", None)


def add_redirect(w: WARCWriter, url: str, location: str | None, ts: float, status: str = "301 Moved Permanently"):
    headers = [("Content-Type", "text/html"), ("Content-Length", "0")]
    if location is not None:
        headers.append(("Location", location))
    http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
    w.write_record(
        w.create_warc_record(
            url, "response", payload=io.BytesIO(b""), http_headers=http, warc_headers_dict={"WARC-Date": warc_date(ts)}
        )
    )


def test_warc_location_of_3xx_responses(tmp_path):
    p = tmp_path / "r.warc.gz"
    with open(p, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        add_redirect(w, "http://a.example/p", "https://a.example/p", T0)
        add_redirect(w, "http://a.example/dir", "/dir/", T0 + 1, "302 Found")  # relative: resolved
        # malformed: dropped, the record is still an event
        for n, bad in enumerate(["//[broken/x", "/has space", "http:///nohost", "ftp://a.example/", ""]):
            add_redirect(w, f"http://a.example/bad{n}", bad, T0 + 2)
        add_redirect(w, "http://a.example/none", None, T0 + 3)  # no Location at all
        add_redirect(w, "http://a.example/ok", "http://a.example/elsewhere", T0 + 4, "200 OK")
        add_response(w, "https://a.example/p", page_body(3), T0 + 5)
    ev, rj = split(read_events(p))
    assert rj == []
    assert [(e.status, e.redirect) for e in ev] == [(301, "https://a.example/p"), (302, "http://a.example/dir/")] + [
        (301, None)
    ] * 6 + [(200, None), (200, None)]


@needs_real
def test_real_crawllog_redirect_hops():
    """ukwa-bbc-crawl.log: 162 lines whose hop path ends in R, every one with a via."""
    evs = [e for e in read_events(REAL / "ukwa-bbc-crawl.log") if isinstance(e, FetchEvent)]
    hops = [e for e in evs if e.redirected_from]
    assert len(hops) == 162
    taster = [e for e in hops if e.url == "http://www.bbc.co.uk/taster/"]
    assert taster and taster[0].redirected_from == "http://www.bbc.co.uk/taster" and taster[0].teaches
    kafka = [e for e in read_events(REAL / "ukwa-crawled-log-2019.jsonl") if isinstance(e, FetchEvent)]
    assert sum(e.redirected_from is not None for e in kafka) == 18


@pytest.mark.parametrize(
    "extra",
    [
        {"redirect": "https://a.example/x"},
        {"location": "/y#top"},
        {"redirect": "-", "location": "https://a.example/z"},
        {"redirected_from": "http://a.example/w"},
        {"status": 200, "redirect": "https://a.example/x"},
        {"redirect": "ftp://a.example/"},
        {"redirected_from": "http://a.example/x"},
    ],
)
def test_jsonl_fast_path_reads_redirects_as_the_general_path(extra):
    d = {"url": "http://a.example/x", "ts": T0, "status": 301} | extra
    fast = _fast_jsonl(2048)(json.dumps(d).encode())
    assert fast is not None and fast == event_from_dict(d)


def test_null_and_nesting_too_deep_are_rejected_with_a_reason_and_the_rest_is_read(tmp_path):
    """A line that is just ``null`` used to vanish uncounted; JSON nested 1,500 levels
    deep used to end the run with a RecursionError (and the worker with it)."""
    from dustonline.events.readers import parse_message

    deep = "[" * 1500 + "]" * 1500
    lines = [
        '{"url": "http://a.com/1", "ts": 1}',
        "null",
        deep,
        '{"url": "http://a.com/2", "ts": 2, "x": ' + deep + "}",
        '{"url": "http://a.com/3", "ts": 3}',
    ]
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(lines) + "\n")
    got = list(read_events([path]))
    assert [e.url for e in got if isinstance(e, FetchEvent)] == ["http://a.com/1", "http://a.com/3"]
    bad = [(e.line, e.reason) for e in got if isinstance(e, Rejected)]
    assert bad == [(2, "bad-json"), (3, "bad-field"), (4, "bad-field")]
    for raw in (b"null", deep.encode(), lines[3].encode()):
        with pytest.raises(BadEvent):
            parse_message(raw)


def test_a_truncated_gzip_file_keeps_what_came_before_and_says_where_it_broke(tmp_path):
    """A .jsonl.gz cut short used to end `learn` with an EOFError and lose everything."""
    whole = b"".join(b'{"url": "http://a.com/%d", "ts": %d}\n' % (i, i + 1) for i in range(2000))
    packed = gzip.compress(whole)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[: len(packed) // 2])
    got = list(read_events([path]))
    events = [e for e in got if isinstance(e, FetchEvent)]
    assert 0 < len(events) < 2000
    assert [e.url for e in events] == [f"http://a.com/{i}" for i in range(len(events))]
    last = got[-1]
    assert isinstance(last, Rejected) and last.reason == "truncated" and "EOFError" in last.detail
    assert sum(isinstance(e, Rejected) for e in got) == 1


# ------------------------------------------------------------------ cut WARC files


def _four_responses(gz: bool) -> tuple[bytes, list[int]]:
    """A WARC of a warcinfo and four responses, and the byte offset where each record starts."""
    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=gz)
    starts = [0]
    w.write_record(w.create_warcinfo_record("t.warc", {"software": "dustonline tests"}))
    for i in range(4):
        starts.append(buf.tell())
        add_response(w, f"http://a.example/{i}", page_body(i), T0 + i)
    return buf.getvalue(), starts


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_a_cut_warc_keeps_the_records_before_and_ends_with_one_dead_letter_naming_the_offset(tmp_path, gz):
    """A .warc.gz cut at 80% used to end in a 'missing-url' dead letter with no detail, and
    most cuts inside a gzip member in none at all: warcio takes them for the file's end."""
    data, starts = _four_responses(gz)  # records 0 (warcinfo) to 4; record k is response k - 1
    starts.append(len(data))
    in_header = 30 if gz else data[starts[3] :].index(b"WARC-Target-URI") + 20
    cuts = [  # (what, where, responses kept)
        ("mid-header", starts[3] + in_header, 2),
        ("mid-payload", (starts[3] + starts[4]) // 2, 2),
        # .warc.gz: in the gzip trailer, after the content (kept); .warc: the payload's last bytes
        ("end of a record", starts[4] - (3 if gz else 6), 3 if gz else 2),
    ]
    at = len(data) * 8 // 10
    k = max(i for i, s in enumerate(starts) if s < at)
    cuts.append(("80%", at, k - 1))
    name = "cut.warc.gz" if gz else "cut.warc"
    for what, at, n in cuts:
        p = write(tmp_path, name, data[:at])
        items = list(read_events(p))  # nothing raises
        ev, rj = split(items)
        assert [e.url for e in ev] == [f"http://a.example/{i}" for i in range(n)], what
        assert len(rj) == 1 and items[-1] is rj[0], what  # one dead letter, for the cut, last
        r = rj[0]
        assert r.reason == "truncated" and r.source == str(p) and f"at byte {at}" in r.detail, (what, r)
    # cut exactly between records: a shorter, whole WARC, read in full with no dead letter
    ev, rj = split(read_events(write(tmp_path, name, data[: starts[3]])))
    assert [e.url for e in ev] == ["http://a.example/0", "http://a.example/1"] and rj == []


# ------------------------------------------------------------------ every record accounted for


def n_records(data: bytes) -> int:
    """Lines as a binary file iterates them: split on \\n only, a last unterminated line counts."""
    return data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))


def accounted(sources, fmt="auto"):
    """(events, rejections, skipped by reason) of a read."""
    skipped: Counter[str] = Counter()
    ev, rj = split(read_events(sources, fmt, skipped=skipped))
    return ev, rj, skipped


_LOG = "2007-12-27T12:51:29.338Z   200        319 http://h.example/{0} - - text/html #006 20071227125129307+17 sha1:KSX4LQZ3ZGIELDEMBONG6GCTP2DG3YRX - -"  # noqa: E501
_CDX11 = (
    "com,ex)/{0} 20110624225005 http://ex.com/{0} text/html 200 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 - - 1234 99 f.warc.gz"
)
_ACCESS = '1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET http://ex.com/{0} HTTP/1.0" 200 2326'
LINE_INPUTS = {
    "jsonl": (
        '{"url": "http://a.com/1", "ts": 1}\n\n   \nnull\nnot json\n{"url": "ftp://a.com/", "ts": 1}\n'
        '{"url": "http://a.com/k", "timestamp": "2020-01-01T00:00:00Z", "status_code": 200}\n\r\n'
        '{"url": "http://a.com/2", "ts": 2}',  # no final newline
        {"blank": 3},
    ),
    "crawllog": (
        "\n".join([_LOG.format(1), "", "dns:x 1 2", _LOG.format(2).replace("http:", "dns:"), "\t", _LOG.format(3)])
        + "\n",
        {"blank": 2},
    ),
    "cdx": (
        " CDX N b a m s k r M S V g\n" + _CDX11.format(1) + "\n\n" + _CDX11.format(2)[:40] + "\n" + _CDX11.format(3),
        {"cdx-header": 1, "blank": 1},
    ),
    "cdxj": (
        'com,ex)/a 20140126200624 {"url": "http://ex.com/a", "status": "200"}\n\n'
        "com,ex)/b 20140126200624 not-json\n"
        'com,ex)/c 2014 {"url": "http://ex.com/c"}\n',
        {"blank": 1},
    ),
    "accesslog": (
        "\n".join(
            [_ACCESS.format(1), "", _ACCESS.format(2).replace("GET", "POST"), _ACCESS.format(3)[:30], _ACCESS.format(4)]
        )
        + "\n\n",
        {"blank": 2},
    ),
}


@pytest.mark.parametrize("fmt", sorted(LINE_INPUTS))
def test_every_line_is_an_event_a_rejection_or_skipped_with_a_reason(tmp_path, fmt):
    """The learn summary's learned + ignored + rejected = records read needs the readers to
    count what they read and drop (blank lines, CDX headers), which they did silently."""
    text, want_skipped = LINE_INPUTS[fmt]
    data = text.encode()
    for name, blob in ((f"in.{fmt}", data), (f"in.{fmt}.gz", gzip.compress(data))):
        for f in ("auto", fmt):
            ev, rj, skipped = accounted(write(tmp_path, name, blob), f)
            assert ev and rj, (fmt, f)  # the input has both
            assert dict(skipped) == want_skipped, (fmt, f)
            assert len(ev) + len(rj) + sum(skipped.values()) == n_records(data), (fmt, f)
    # without a counter, the same items
    assert list(read_events(write(tmp_path, "again", data), fmt)) == list(
        read_events(write(tmp_path, "again", data), fmt, skipped=Counter())
    )


def test_a_cut_gzip_line_file_counts_the_cut_as_one_record(tmp_path):
    """The records read in whole, plus one for the cut (its 'truncated' dead letter)."""
    whole = b"".join(b'{"url": "http://a.com/%d", "ts": %d}\n\n' % (i, i + 1) for i in range(2000))
    packed = gzip.compress(whole)
    cut = packed[: len(packed) // 2]
    whole_lines = zlib.decompressobj(31).decompress(cut).count(b"\n")  # the lines before the cut
    ev, rj, skipped = accounted(write(tmp_path, "cut.jsonl.gz", cut))
    assert rj[-1].reason == "truncated" and len(rj) == 1 and set(skipped) == {"blank"}
    assert len(ev) + len(rj) + sum(skipped.values()) == whole_lines + 1
    assert rj[-1].line == whole_lines + 1


def test_every_warc_record_is_an_event_a_rejection_or_skipped_with_a_reason(small_warc, tmp_path):
    """A record is a WARC record: request, warcinfo and metadata records are skipped by type."""
    p, *_ = small_warc
    from warcio.archiveiterator import ArchiveIterator

    with open(p, "rb") as f:
        n = sum(1 for _ in ArchiveIterator(f))
    ev, rj, skipped = accounted(p)
    assert dict(skipped) == {"warc-warcinfo": 1, "warc-request": 1, "warc-metadata": 1}
    assert len(ev) + len(rj) + sum(skipped.values()) == n == 9  # info, request, 5 responses, revisit, metadata
    # a record of a type WARC 1.1 does not name is skipped too, as warc-other
    w = write(tmp_path, "odd.warc", raw_record("http://a.example/", b"x", T0, rtype="x-custom"))
    ev, rj, skipped = accounted(w)
    assert (ev, rj, dict(skipped)) == ([], [], {"warc-other": 1})


# ------------------------------------------------------------------ CDX layouts without a header

_CDX_LAYOUTS = {  # the headerless layouts of wayback, pywb and IA: legend letters per field count
    9: "N b a m s k r V g",
    10: "N b a m s k r M V g",
    11: "N b a m s k r M S V g",
}
_CDX_VALUES = {
    "N": "com,ex)/p?id=1",
    "b": "20110624225005",
    "a": "http://ex.com/p?id=1",
    "m": "text/html",
    "s": "301",
    "k": "USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3",
    "r": "http://ex.com/q",
    "M": "-",
    "S": "2345",
    "V": "678",
    "g": "f.warc.gz",
}


@pytest.mark.parametrize("n", sorted(_CDX_LAYOUTS))
def test_cdx_headerless_wayback_layouts_are_detected_and_read_as_with_their_header(tmp_path, n):
    letters = _CDX_LAYOUTS[n].split()
    line = " ".join(_CDX_VALUES[c] for c in letters)
    bare = write(tmp_path, f"bare{n}.cdx", (line + "\n") * 3)
    headed = write(tmp_path, f"headed{n}.cdx", f" CDX {' '.join(letters)}\n" + (line + "\n") * 3)
    assert detect_format(bare.read_bytes().splitlines()) == "cdx"
    ev, rj = split(read_events(bare))
    assert rj == [] and len(ev) == 3
    e = ev[0]
    assert (e.url, e.status, e.digest) == ("http://ex.com/p?id=1", 301, "sha1:USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3")
    assert e.ts == dt.datetime(2011, 6, 24, 22, 50, 5, tzinfo=dt.timezone.utc).timestamp()
    assert e.redirect == "http://ex.com/q"
    assert e.length == (2345 if "S" in letters else None)  # only the 11-field layout has the length
    assert list(read_events(headed)) == list(read_events(bare))  # the header says what the count implied


@needs_real
@pytest.mark.parametrize("n", sorted(_CDX_LAYOUTS))
def test_real_cdx_without_its_header_reads_alike_in_every_headerless_layout(tmp_path, n):
    """archiveit-index-2.cdx is 10 fields (N b a m s k r M V g) with a header line; without
    it, and rewritten to 9 and 11 fields, the same records come out."""
    header, *lines = (REAL / "archiveit-index-2.cdx").read_text().splitlines()
    assert header.split() == ["CDX", *_CDX_LAYOUTS[10].split()]
    rows = [line.split() for line in lines]
    if n == 9:
        rows = [r[:7] + r[8:] for r in rows]  # without M
    elif n == 11:
        rows = [r[:8] + ["42"] + r[8:] for r in rows]  # with S
    p = write(tmp_path, "bare.cdx", "".join(" ".join(r) + "\n" for r in rows))
    with open(p, "rb") as f:
        assert detect_format(f.readlines()[:30]) == "cdx"

    def key(items):
        return [(e.url, e.ts, e.status, e.digest, e.redirect) if isinstance(e, FetchEvent) else e.reason for e in items]

    want = list(read_events(REAL / "archiveit-index-2.cdx"))
    got = list(read_events(p))
    assert key(got) == key(want) and len([e for e in got if isinstance(e, FetchEvent)]) == 650
    assert all(e.length == (42 if n == 11 else None) for e in got if isinstance(e, FetchEvent))


def test_a_cdx_layout_that_cannot_be_told_is_named_in_the_message(tmp_path):
    """12 fields and no header: auto-detection says which layouts it knows and what to add;
    --format cdx dead-letters each line with the same explanation, not a bare field count."""
    line = " ".join(_CDX_VALUES[c] for c in _CDX_LAYOUTS[11].split()) + " extra"
    p = write(tmp_path, "x.cdx", (line + "\n") * 3)
    with pytest.raises(ValueError, match=r"CDX .*12 fields and no ' CDX' header line") as e:
        list(read_events(p))
    for layout in ("8 fields", *(f"{n} ({v})" for n, v in _CDX_LAYOUTS.items())):
        assert layout in str(e.value)
    ev, rj = split(read_events(p, "cdx"))
    assert ev == [] and len(rj) == 3 and all(r.reason == "bad-record" for r in rj)
    assert "12 fields" in rj[0].detail and "N b a m s k r M S V g" in rj[0].detail and "header" in rj[0].detail
    # with a header line, a line of another length names both counts
    h = write(tmp_path, "h.cdx", f" CDX {_CDX_LAYOUTS[11]} X\n{line}\n{line.rsplit(' ', 1)[0]}\n")
    ev, rj = split(read_events(h))
    assert len(ev) == 1 and [r.detail for r in rj] == ["CDX line with 11 fields; the header line names 12"]
