"""Property-based tests of the readers: whatever bytes a file or a pages-topic message
holds, no exception escapes (but the documented ValueError of an undetectable file), and
every record read is counted once: events + rejected + skipped = records read."""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from dustonline.events.event import BadEvent, FetchEvent
from dustonline.events.readers import Rejected, parse_message, read_events

# a few seconds in the suite; DUSTONLINE_FUZZ_EXAMPLES=5000 for a deeper search
FUZZ = settings(
    max_examples=int(os.environ.get("DUSTONLINE_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

VALID = {  # one good record per line format
    "jsonl": b'{"url": "http://a.com/p?id=1", "ts": 1700000000, "status": 200, "digest": "sha1:AAAA", "links": []}',
    "crawllog": b"2007-12-27T12:51:29.338Z   200        319 http://h.example/a - - text/html #006 "
    b"20071227125129307+17 sha1:KSX4LQZ3ZGIELDEMBONG6GCTP2DG3YRX - content-size:557",
    "cdx": b"com,ex)/a 20110624225005 http://ex.com/a text/html 301 USFAY47TZZM2CIWSAFONCZCGTO6MM7Z3 "
    b"http://ex.com/b - 1234 99 f.warc.gz",
    "cdxj": b'org,iana)/ 20140126200624 {"url": "http://www.iana.org/", "mime": "text/html", "status": "200", '
    b'"digest": "OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB", "length": "2258"}',
    "accesslog": b'ex.com:443 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a?b=1 HTTP/1.0" 200 2326 "-" "UA"',
}
HEADERS = {"cdx": b" CDX N b a m s k r M S V g"}


def n_records(data: bytes) -> int:
    return data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))


def mutate(line: bytes, how: str, at: int, blob: bytes) -> bytes:
    """One way a record goes wrong: cut, NUL, odd bytes, a huge or deeply nested field."""
    at %= len(line) + 1
    if how == "cut":
        return line[:at]
    if how == "insert":
        return line[:at] + blob + line[at:]
    if how == "replace":
        return line[:at] + blob + line[at + len(blob) :]
    if how == "nul":
        return line[:at] + b"\x00" + line[at:]
    if how == "huge":
        return line[:at] + b"x" * 200_000 + line[at:]
    if how == "deep":
        return line[:at] + b"[" * 5000 + b"]" * 5000 + line[at:]
    if how == "latin1":
        return line.decode("utf-8").replace("a", "\xe9").encode("latin-1", errors="replace")
    if how == "utf16":
        return line.decode("utf-8").encode("utf-16")
    raise AssertionError(how)


_HOW = hs.sampled_from(["cut", "insert", "replace", "nul", "huge", "deep", "latin1", "utf16"])
_BLOB = hs.binary(max_size=40) | hs.sampled_from([b"\n", b"\r\n", b" ", b"\t", b"{", b'"', b"\\", b"\xff\xfe", b"\x85"])


def read_counted(path, fmt):
    skipped: Counter[str] = Counter()
    items = list(read_events(path, fmt, skipped=skipped))
    assert all(isinstance(x, (FetchEvent, Rejected)) for x in items)
    return items, skipped


def check_lines(path, data: bytes, fmt: str) -> None:
    """Every line is an event, a rejection or skipped; with auto, detection may refuse."""
    for f in (fmt, "auto"):
        try:
            items, skipped = read_counted(path, f)
        except ValueError as e:  # the documented one: auto cannot tell the format
            assert f == "auto" and "format" in str(e) or "CDX" in str(e)
            continue
        if f == "auto" and data.lstrip().startswith(b"WARC/"):
            continue  # read as a WARC: records are WARC records
        assert len(items) + sum(skipped.values()) == n_records(data), (f, data[:200])


@pytest.mark.parametrize("fmt", sorted(VALID))
@FUZZ
@given(lines=hs.lists(hs.tuples(_HOW, hs.integers(0, 300), _BLOB), max_size=6), junk=hs.binary(max_size=300))
def test_line_readers_never_raise_and_count_every_line(tmp_path, fmt, lines, junk):
    body = [HEADERS.get(fmt, VALID[fmt]), VALID[fmt]]
    body += [mutate(VALID[fmt], how, at, blob) for how, at, blob in lines]
    data = b"\n".join(body) + b"\n" + junk
    path = tmp_path / f"in.{fmt}"
    path.write_bytes(data)
    check_lines(path, data, fmt)


@FUZZ
@given(data=hs.binary(max_size=2000), fmt=hs.sampled_from(sorted(VALID)))
def test_random_bytes_never_raise_and_every_line_is_counted(tmp_path, data, fmt):
    path = tmp_path / "random.in"
    path.write_bytes(data)
    check_lines(path, data, fmt)


@FUZZ
@given(cut=hs.floats(0, 1), fmt=hs.sampled_from(sorted(VALID)))
def test_a_cut_gzip_file_counts_its_whole_lines_and_the_cut(tmp_path, cut, fmt):
    data = b"".join(VALID[fmt] + b"\n\n" for _ in range(300))
    packed = gzip.compress(data)
    part = packed[: int(len(packed) * cut)]
    path = tmp_path / f"in.{fmt}.gz"
    path.write_bytes(part)
    items, skipped = read_counted(path, fmt)
    lines = zlib.decompressobj(31).decompress(part).count(b"\n")
    cut_short = 0 < len(part) < len(packed)  # an empty file is an empty file
    assert len(items) + sum(skipped.values()) == lines + cut_short
    assert [r.reason for r in items if isinstance(r, Rejected)] == (["truncated"] if cut_short else [])


def small_warc(gz: bool) -> tuple[bytes, list[int]]:
    """A WARC of a warcinfo and three responses, and where each record starts."""
    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=gz)
    w.write_record(w.create_warcinfo_record("f.warc", {"software": "fuzz"}))
    starts = [0]
    for i in range(3):
        starts.append(buf.tell())
        body = b"<html><body>page %d words words words</body></html>" % i
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        w.write_record(
            w.create_warc_record(
                f"http://a.example/{i}",
                "response",
                payload=io.BytesIO(body),
                http_headers=http,
                warc_headers_dict={"WARC-Date": "2025-11-21T10:00:00Z"},
            )
        )
    return buf.getvalue(), starts


_WARCS = {gz: small_warc(gz) for gz in (True, False)}


@FUZZ
@given(
    gz=hs.booleans(),
    edits=hs.lists(hs.tuples(hs.sampled_from(["cut", "insert", "replace", "nul"]), hs.integers(0, 5000), _BLOB)),
)
def test_warc_reader_never_raises_and_ends_with_at_most_one_broken_file_letter(tmp_path, gz, edits):
    data, starts = _WARCS[gz]
    n = len(starts)
    for how, at, blob in edits:
        data = mutate(data, how, at, blob)
    path = tmp_path / ("in.warc.gz" if gz else "in.warc")
    path.write_bytes(data)
    items, skipped = read_counted(path, "warc")
    broken = [i for i, x in enumerate(items) if isinstance(x, Rejected) and x.reason in ("truncated", "bad-warc")]
    assert broken in ([], [len(items) - 1])  # one at most, and it ends the file
    if not edits:
        assert len(items) + sum(skipped.values()) == n and not broken


@FUZZ
@given(gz=hs.booleans(), cut=hs.floats(0, 1, exclude_max=True))
def test_a_warc_cut_anywhere_keeps_the_records_before_and_says_where_it_ends(tmp_path, gz, cut):
    """The property the old reader broke at most cut points of a .warc.gz: silently."""
    data, starts = _WARCS[gz]
    at = int(len(data) * cut)
    # at a record boundary the shorter file is a whole WARC; so is a plain one cut in a record's final CRLFs
    whole = any(s - (0 if gz else 4) <= at <= s for s in [*starts, len(data)])
    path = tmp_path / ("cut.warc.gz" if gz else "cut.warc")
    path.write_bytes(data[:at])
    items, skipped = read_counted(path, "warc")
    rejected = [x for x in items if isinstance(x, Rejected)]
    if whole:
        assert rejected == []
        return
    assert len(rejected) == 1 and items[-1] is rejected[0] and rejected[0].reason == "truncated"
    assert f"at byte {at}" in rejected[0].detail
    began = sum(s < at for s in starts)  # records begun before the cut; the last of them is cut
    assert len(items) + sum(skipped.values()) in (began, began + 1)  # (+1: cut in a gzip trailer)


@FUZZ
@given(data=hs.binary(max_size=600) | hs.builds(mutate, hs.just(VALID["jsonl"]), _HOW, hs.integers(0, 200), _BLOB))
def test_a_pages_topic_message_is_an_event_or_a_bad_event(data):
    """One message, one record: parse_message gives a FetchEvent or raises BadEvent, never anything else."""
    try:
        assert isinstance(parse_message(data), FetchEvent)
    except BadEvent:
        pass


@pytest.mark.parametrize("gz", [False, True])
def test_a_warc_cut_inside_its_version_line_is_truncated_not_corrupt(tmp_path, gz):
    """Found by the property above: cut after b"WARC/1", warcio called the file an unknown
    format, and the reader said bad-warc."""
    data, _ = _WARCS[gz]
    for at in range(1, 40):
        path = tmp_path / ("cut.warc.gz" if gz else "cut.warc")
        path.write_bytes(data[:at])
        items, _ = read_counted(path, "warc")
        assert [x.reason for x in items if isinstance(x, Rejected)] == ["truncated"], at
