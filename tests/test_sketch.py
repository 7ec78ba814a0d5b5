"""dustonline.events.sketch and ``dustonline sketch``: the content fields a crawler puts in an event."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import statistics
import subprocess
import sys

import mmh3

from dustonline.cli import main
from dustonline.events.event import EMPTY_DIGEST, event_from_dict, normalize_digest, parse_simhash
from dustonline.events.readers import parse_message
from dustonline.events.sketch import digest, distance, simhash, sketch, tokens, visible_text

_RNG = random.Random(42)
VOCAB = ["".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_RNG.randint(2, 10))) for _ in range(2000)]


def words(rng: random.Random, n: int = 300) -> list[str]:
    return [rng.choice(VOCAB) for _ in range(n)]


def html_page(text: str) -> bytes:
    return (
        f"<!DOCTYPE html><html><head><title>Page</title><style>p {{color: red}}</style>"
        f"<script>var secret = 'scriptword';</script></head><body><div class='x'><p>{text}</p>"
        f"</div><!-- commentword --></body></html>"
    ).encode()


# ------------------------------------------------------------------ digest


def test_digest_is_sha1_base32_as_warc_and_heritrix_write_it():
    for body in (b"", b"hello", bytes(range(256)) * 100):
        want = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
        assert digest(body) == want
        assert normalize_digest(digest(body)) == digest(body)  # already in the events' form
    assert digest(b"") == EMPTY_DIGEST


# ------------------------------------------------------------------ text


def test_visible_text_drops_scripts_styles_comments_and_tags():
    body = (
        b"<html><head><title>My  Title</title><style>.a{x:1}</style>"
        b"<script type='text/javascript'>if (a < b) { document.write('<p>scriptword</p>'); }</script>"
        b"</head><body><!-- commentword --><h1>Fish &amp; Chips</h1>\n\n<p>caf&eacute; &#8364;5</p>"
        b"<SCRIPT>more()</SCRIPT><p>a < b</p></body></html>"
    )
    text = visible_text(body, "text/html")
    assert text == "My Title Fish & Chips caf\u00e9 \u20ac5 a < b"
    assert "scriptword" not in text and "commentword" not in text and "<" not in text.replace("a < b", "")


def test_visible_text_charset_sniffing_and_types():
    latin = "<html><head><meta charset='iso-8859-1'></head><body>Gr\u00fc\u00dfe</body></html>".encode("latin-1")
    assert visible_text(latin, None) == "Gr\u00fc\u00dfe"  # HTML sniffed, charset from <meta>
    assert visible_text("Gr\u00fc\u00dfe".encode("latin-1"), "text/plain; charset=ISO-8859-1") == "Gr\u00fc\u00dfe"
    assert visible_text(b"plain  <b>text</b>\n", "text/plain") == "plain <b>text</b>"  # not markup
    for bogus in ("base64", "idna", "no-such-charset"):  # not a text codec, no "replace", unknown: UTF-8
        assert visible_text(b"<p>h\xe9llo</p>", f"text/html; charset={bogus}") == "h\ufffdllo"
    assert visible_text(b"\x89PNG\r\n\x1a\n\x00\x00", "image/png") == ""
    assert visible_text(b"\x00\x01binary", None) == ""
    # an unclosed script eats the rest of the page, as in a browser (and stays linear)
    assert visible_text(b"<p>before</p><script>x = 1; " + b"<b>" * 10000, "text/html") == "before"


# ------------------------------------------------------------------ simhash


def test_simhash_is_pinned_and_case_and_space_insensitive():
    """The value is part of the event contract: events written earlier must keep matching."""
    assert simhash("The quick brown fox jumps over the lazy dog") == 0xF8130A3876855016
    assert simhash("the QUICK brown\n fox, jumps over the lazy dog!") == 0xF8130A3876855016
    assert 0 <= simhash(" ".join(VOCAB)) < 1 << 64


def test_simhash_features_are_mmh3_word_trigrams():
    # one shingle: the simhash is its hash (first half of MurmurHash3 x64 128, seed 0, unsigned)
    assert simhash("alpha beta gamma") == mmh3.hash64("alpha beta gamma", 0, x64arch=True, signed=False)[0]
    # fewer than 3 tokens: the tokens themselves
    assert simhash("Hello") == mmh3.hash64("hello", 0, x64arch=True, signed=False)[0]
    assert simhash("") == 0 and tokens("") == []
    assert tokens("Fish & Chips, 2 x") == ["fish", "chips", "2", "x"]


def test_near_duplicates_are_close_and_unrelated_pages_far():
    rng = random.Random(7)
    near, far = [], []
    for _ in range(41):
        a = words(rng)
        b = list(a)
        b[rng.randrange(len(b))] = "changed"  # one word of 300
        near.append(distance(simhash(" ".join(a)), simhash(" ".join(b))))
        far.append(distance(simhash(" ".join(a)), simhash(" ".join(words(rng)))))
    assert statistics.median(near) <= 4 and max(near) <= 10, sorted(near)
    assert min(far) >= 16 and statistics.mean(far) > 26, sorted(far)
    # through HTML: markup, scripts and styles do not move the sketch
    text = " ".join(words(rng))
    assert sketch(html_page(text), "text/html")["simhash"] == f"{simhash(text):016x}"


def test_sketch_fields_are_what_events_accept():
    body = html_page(" ".join(words(random.Random(1))))
    s = sketch(body, "text/html; charset=utf-8")
    assert set(s) == {"digest", "simhash", "length"}
    assert s["digest"] == digest(body) and s["length"] == len(body)
    assert len(s["simhash"]) == 16 and parse_simhash(s["simhash"]) == int(s["simhash"], 16)
    ev = event_from_dict({"url": "http://a.example/", "ts": 1.7e9, **s})
    assert ev.digest == s["digest"] and f"{ev.simhash:016x}" == s["simhash"] and ev.length == len(body)
    # no words: no simhash, so empty and binary pages never look near-duplicate
    assert sketch(b"")["simhash"] is None and sketch(b"\x89PNG\r\n", "image/png")["simhash"] is None
    assert sketch(b"<html><script>x()</script></html>", "text/html")["simhash"] is None


# ------------------------------------------------------------------ the command


def test_cli_sketch_prints_the_content_fields(tmp_path, capsys):
    body = html_page(" ".join(words(random.Random(2))))
    p = tmp_path / "page.html"
    p.write_bytes(body)
    assert main(["sketch", str(p), str(p), "--content-type", "text/html"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and json.loads(lines[0]) == json.loads(lines[1]) == sketch(body, "text/html")


def test_cli_sketch_event_line_round_trips_through_the_readers(tmp_path, capsys):
    body = html_page(" ".join(words(random.Random(3))))
    p = tmp_path / "page.html"
    p.write_bytes(body)
    url = "http://www.example.com/a?id=1&sessionid=x"
    assert main(["sketch", str(p), "--url", url, "--ts", "2025-11-21T10:00:00Z", "--status", "203"]) == 0
    line = capsys.readouterr().out.strip()
    d = json.loads(line)
    assert d["url"] == url and d["ts"] == 1763719200.0 and d["status"] == 203
    ev = parse_message(line.encode())
    assert ev == event_from_dict(d)
    assert (ev.url, ev.ts, ev.status, ev.digest, ev.length) == (url, 1763719200.0, 203, digest(body), len(body))
    assert ev.to_json()["simhash"] == d["simhash"] == sketch(body)["simhash"]


def test_cli_sketch_reads_stdin_and_rejects_what_learn_would(tmp_path):
    cmd = [sys.executable, "-m", "dustonline", "sketch"]
    p = subprocess.run(
        cmd + ["--url", "https://a.example/x"], input=b"hello world again", capture_output=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    ev = parse_message(p.stdout.strip())
    assert ev.url == "https://a.example/x" and ev.digest == digest(b"hello world again") and ev.status == 200
    assert ev.simhash == simhash("hello world again")
    p = subprocess.run(cmd + ["-"], input=b"", capture_output=True, timeout=120)
    assert json.loads(p.stdout) == {"digest": EMPTY_DIGEST, "length": 0}
    p = subprocess.run(cmd + ["--url", "ftp://a.example/x"], input=b"x", capture_output=True, timeout=120)
    assert p.returncode == 2 and b"not-http" in p.stderr
