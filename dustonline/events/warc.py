"""WARC files -> FetchEvents, read with warcio one record at a time.

A record is one WARC record. ``response`` and ``revisit`` records are fetches; the other
types are counted as skipped (``warc-request``, ...). A file cut short ends with one
dead letter naming the byte offset where it ends: warcio itself takes most cuts (inside
a gzip member, a header or a payload) for the end of the file, so the record framing is
checked here (Content-Length read in full, gzip member closed, no bytes left over).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import os
import re
import sys
import zlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

from .event import BadEvent, FetchEvent, event_from_dict
from .rejected import RAW_MAX, Rejected

_WARC_SKETCH_MAX = 8 << 20  # payload bytes kept for the simhash; the digest sees them all
_WARC_EVENTS = ("response", "revisit")
_WARC_SKIPPED = ("warcinfo", "request", "metadata", "resource", "conversion", "continuation")


def looks_warc(src: str | os.PathLike) -> bool:
    """By name (.warc, .warc.gz), else by content: the first bytes, gunzipped if need be,
    are a WARC version line. Peeking keeps stdin readable from its start."""
    name = str(src)
    if name.lower().endswith((".warc", ".warc.gz")):
        return True
    try:
        if name == "-":
            # not every stdin buffer has peek(): the AttributeError is caught below
            head = sys.stdin.buffer.peek(512)[:512]  # type: ignore[union-attr]
        else:
            with open(src, "rb") as f:
                head = f.read(512)
        if head[:2] == b"\x1f\x8b":
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head)
    except (OSError, zlib.error, AttributeError, ValueError):
        return False  # the line readers report what is wrong with it
    return head.startswith(b"WARC/")


def _http_body(raw: bytes, http) -> bytes:
    """The entity body a browser sees: de-chunked and decompressed as warcio's
    ``content_stream`` does; the raw payload if that fails."""
    from warcio.bufferedreaders import BufferedReader, ChunkedDataReader

    enc = (http.get_header("content-encoding") or "").lower()
    if enc not in BufferedReader.get_supported_decompressors():
        enc = None
    chunked = (http.get_header("transfer-encoding") or "").lower() == "chunked"
    if not (enc or chunked):
        return raw
    try:
        reader = ChunkedDataReader if chunked else BufferedReader
        return reader(io.BytesIO(raw), decomp_type=enc).read()
    except Exception:  # noqa: BLE001 - a broken encoding: sketch the bytes as they are
        return raw


class _Cut(Exception):
    """A record ends before its Content-Length says, or has none: the file was cut or is corrupt."""


def _drain(rec) -> None:
    """Read what is left of a record's block; _Cut if it is shorter than its Content-Length."""
    from warcio.limitreader import LimitReader

    stream = rec.raw_stream
    while stream.read(1 << 16):
        pass
    length = rec.rec_headers.get_header("length" if rec.format == "arc" else "Content-Length")
    # none, or a value warcio takes for 0: most often a header cut short
    if not isinstance(stream, LimitReader) or not (length and length.strip().isdigit()):
        raise _Cut(f"record header with Content-Length {length!r}"[:80])
    if stream.limit > 0:
        raise _Cut(f"record block is {stream.limit} bytes short of its Content-Length")


def _warc_event(rec) -> dict:
    """A response or revisit record -> §2 event dict (the payload is read here)."""
    from .sketch import has_text, simhash_tokens, tokens, visible_text

    h = rec.rec_headers
    http = rec.http_headers
    d: dict[str, Any] = {"url": h.get_header("WARC-Target-URI"), "ts": h.get_header("WARC-Date")}
    if d["url"] is None or not d["url"].lower().startswith(("http://", "https://")):
        _drain(rec)  # a dns: record cut short is a cut, not a bad URL
        return d  # dns:, whois:, a missing URI: event_from_dict names the reason
    status = http.get_statuscode() if http is not None else None
    if http is not None and status and status.startswith("3"):
        d["redirect"] = http.get_header("location")  # relative ones are resolved against the URL
    if rec.rec_type == "revisit":  # same content as an earlier capture: the digest says which
        _drain(rec)
        d["status"] = 200 if status in (None, "", "-") else status  # as a CDX revisit line
        d["digest"] = h.get_header("WARC-Payload-Digest")
        return d
    given = h.get_header("WARC-Payload-Digest")
    sha1 = None if given else hashlib.sha1()
    ctype = http.get_header("content-type") if http is not None else None
    keep = http is not None and has_text(ctype)
    parts, kept, n = [], 0, 0
    stream = rec.raw_stream
    while True:
        b = stream.read(1 << 16)
        if not b:
            break
        n += len(b)
        if sha1 is not None:
            sha1.update(b)
        if keep and kept < _WARC_SKETCH_MAX:
            parts.append(b)
            kept += len(b)
    _drain(rec)  # framing first: a record cut inside its HTTP headers is a cut, not a bad status
    if http is None:
        raise BadEvent("bad-record", "response record without HTTP status line")
    d["status"] = status
    d["digest"] = given if sha1 is None else "sha1:" + base64.b32encode(sha1.digest()).decode("ascii")
    d["length"] = n
    if parts:
        d["simhash"] = simhash_tokens(tokens(visible_text(_http_body(b"".join(parts), http), ctype)))
    return d


@functools.lru_cache(maxsize=1)
def _archive_iterator() -> type:
    from warcio.archiveiterator import ArchiveIterator

    class Archive(ArchiveIterator):
        """warcio's iterator, noting at its end whether the last gzip member was closed:
        a member cut after its record's content (in the CRC) reads as a whole record."""

        member_open = False

        def close(self) -> None:
            dec = self.reader.decompressor if self.reader is not None else None
            self.member_open = dec is not None and not getattr(dec, "eof", True)
            super().close()

    return Archive


def _at_end(records) -> bool:
    """Nothing follows what warcio has read: a broken record there is a cut, not corruption.
    (Reads a byte if something does follow; the caller stops reading then anyway.)"""
    reader = records.reader
    return (reader is None or reader.rem_length() == 0) and not records.fh.read(1)


def _describe(e: Exception) -> str:
    msg = str(e) if isinstance(e, _Cut) else f"{type(e).__name__}: {e}"
    if "non-chunked gzip" in msg:  # warcio's many-line message
        return "gzipped as a whole, not one gzip member per record: run 'warcio recompress IN OUT' first"
    return "".join(c if c.isprintable() else "?" for c in msg.strip()[:120])


def _broken(name: str, n: int, records, start: int, e: Exception) -> Rejected:
    """The one dead letter for where a file stops being readable: ``truncated`` if
    nothing follows (a cut file), else ``bad-warc`` (corrupt; the rest is not read)."""
    what = _describe(e)
    # not a WARC record at all (not even its start): corrupt, or not a WARC file; unless
    # the file ends inside the version line itself ("WARC/1"), cut a few bytes in
    unknown = "Unknown archive format" in what and not _cut_version_line(str(e))
    if "warcio recompress" not in what and not unknown and _at_end(records):
        end = records.fh.tell()
        detail = f"file ends mid-record at byte {end} (record {n} began at byte {start}): {what}"
        return Rejected(name, n, "truncated", detail[:200], f"offset {start}")
    detail = f"unreadable record at byte {start} (corrupt file?): {what}; rest of the file not read"
    return Rejected(name, n, "bad-warc", detail, f"offset {start}")


def _cut_version_line(msg: str) -> bool:
    """warcio's "Unknown archive format, first line: ['WARC/1']": the line is a proper start
    of a WARC version line."""
    m = re.search(r"first line: \[(.*)\]", msg)
    if m is None:
        return False
    line = "".join(part.strip().strip("'\"") for part in m.group(1).split(","))
    return any(v.startswith(line) and line != v for v in ("WARC/1.0", "WARC/1.1"))


def read_warc(
    src: str | os.PathLike, max_url_length: int, skipped: Counter[str] | None = None
) -> Iterator[FetchEvent | Rejected]:
    """Events of a WARC file; ``Rejected.line`` is the record number (1-based), ``raw``
    names its type, target URI and byte offset.

    warcio undoes the gzip one member (= one record) at a time, so everything before a
    corrupt member is read; ``gzip.GzipFile`` would read ahead into it, or take a
    truncated end for the end of the file."""
    stdin = str(src) == "-"
    name = "<stdin>" if stdin else str(src)
    fh = sys.stdin.buffer if stdin else open(src, "rb")
    n = 0
    try:
        records = _archive_iterator()(fh)
        while True:
            try:
                rec = next(records)
            except StopIteration:
                break
            except Exception as e:  # noqa: BLE001 - warcio raises many kinds on corrupt input
                yield _broken(name, n + 1, records, records.offset, e)
                return
            n += 1
            start = records.offset
            rtype = rec.rec_type
            try:
                if rtype not in _WARC_EVENTS:
                    _drain(rec)
                    if skipped is not None:
                        skipped[f"warc-{rtype}" if rtype in _WARC_SKIPPED else "warc-other"] += 1
                    continue
                raw = f"{rtype} {rec.rec_headers.get_header('WARC-Target-URI')} offset {start}"
                try:
                    item: FetchEvent | Rejected = event_from_dict(_warc_event(rec), max_url_length)
                except BadEvent as e:
                    item = Rejected(name, n, e.reason, e.detail, raw[:RAW_MAX])
                except (ValueError, TypeError, OverflowError) as e:
                    item = Rejected(name, n, "bad-field", f"{type(e).__name__}: {e}"[:200], raw[:RAW_MAX])
            except (_Cut, OSError, EOFError, zlib.error) as e:  # the file broke mid-record
                yield _broken(name, n, records, start, e)
                return
            yield item
        end = records.fh.tell()
        if end > 0 and records.member_open or records.offset < end:  # the cut fell where warcio saw an end
            after = f"{end - records.offset} bytes after the last whole record"
            detail = (
                f"file ends mid-record at byte {end} ({'a gzip member cut short' if records.member_open else after})"
            )
            yield Rejected(name, n + 1, "truncated", detail, f"offset {records.offset}")
    finally:
        if not stdin:
            fh.close()
